/*
 * psc_recv.h: the handler of reply active messages (see psc_recv.c).
 */
#ifndef PSC_RECV_H
#define PSC_RECV_H

#include <ucp/api/ucp.h>

/* UCP AM handler for PS_AM_ID_REPLY; arg is the pstripe_fs_t. */
ucs_status_t psc_am_reply_cb(void *arg, const void *header, size_t header_length, void *data,
                             size_t length, const ucp_am_recv_param_t *param);

#endif

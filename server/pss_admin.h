/*
 * pss_admin.h: the requests about the server itself rather than files:
 * HELLO (identity, workers and their ports), STATFS and STATS.
 */
#ifndef PSS_ADMIN_H
#define PSS_ADMIN_H

#include "pss.h"

/* Answer a HELLO, STATFS or STATS request (any worker serves them). */
void pss_admin_handle(pss_worker_t *w, pss_req_t *req);

#endif

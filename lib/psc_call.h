/*
 * psc_call.h: where an API thread waits for the ops it posted (psc_call_t),
 * and how it hands work to the progress thread (psc_post).
 */
#ifndef PSC_CALL_H
#define PSC_CALL_H

#include "psc_internal.h"

void psc_call_init(psc_call_t *call);
/* Drop the caller's hold, wait until every op of the call is done, set the
 * thread's last error on failure and return the call's status. */
ps_status_t psc_call_wait(pstripe_fs_t *fs, psc_call_t *call);
/* Progress thread: one op (or io request) of the call is done with this
 * status; the first error wins. */
void psc_call_complete(pstripe_fs_t *fs, psc_call_t *call, ps_status_t status, const char *msg);
/* Queue a command for the progress thread and wake it. With call non-NULL
 * (an op posted into it), count one more op on the call as well. */
void psc_post(pstripe_fs_t *fs, psc_cmd_t *cmd, psc_call_t *call);

#endif

/*
 * psc_wait.h: where an API thread waits for the ops it posted, driving the
 * UCX worker itself when nobody else does (see psc_wait.c).
 */
#ifndef PSC_WAIT_H
#define PSC_WAIT_H

#include "psc_internal.h"

/* Drop the caller's hold, wait until every op of the call is done, set the
 * thread's last error on failure and return the call's status. */
ps_status_t psc_call_wait(pstripe_fs_t *fs, psc_call_t *call);
/* Wait until call->done (the caller's hold already dropped). */
void psc_call_wait_done(pstripe_fs_t *fs, psc_call_t *call);

#endif

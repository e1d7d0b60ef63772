/*
 * psc_progress.h: starting and stopping a connection's progress thread
 * (see psc_progress.c).
 */
#ifndef PSC_PROGRESS_H
#define PSC_PROGRESS_H

#include "psc_internal.h"

/* Start the thread (UCX context and worker); sets the thread's message on
 * failure. */
ps_status_t psc_progress_start(pstripe_fs_t *fs);
/* Close every connection (bounded wait) and stop the thread. */
void psc_progress_stop(pstripe_fs_t *fs);

#endif

/*
 * pss_reaper.h: the last close of removed object files, on a thread of its
 * own (see pss_reaper.c).
 */
#ifndef PSS_REAPER_H
#define PSS_REAPER_H

#include "ps_status.h"

typedef struct pss_reaper pss_reaper_t;

/* Start the thread; *out is NULL on failure (removals then close at once). */
ps_status_t pss_reaper_start(pss_reaper_t **out);

/* Close fd (an unlinked file's descriptor) on the reaper's thread, then
 * call done(arg) there (done may be NULL); both at once, on the caller's
 * thread, when r is NULL or the queue cannot grow. Any thread. */
void pss_reaper_give(pss_reaper_t *r, int fd, void (*done)(void *), void *arg);

/* Wait until everything given so far is closed and its done called
 * (NULL: nothing): a worker that leaves with answers still pending calls
 * it before it closes the descriptor those answers wake it by. */
void pss_reaper_drain(pss_reaper_t *r);

/* Close what is queued, stop the thread and free r (NULL: nothing). */
void pss_reaper_stop(pss_reaper_t *r);

#endif

/*
 * pss_reaper.h: file calls that may block for long, on a thread of its own
 * (see pss_reaper.c): the last close of removed object files, and the
 * background flushes of pss_flushbehind.c.
 */
#ifndef PSS_REAPER_H
#define PSS_REAPER_H

#include "ps_status.h"

typedef struct pss_reaper pss_reaper_t;

/* Start the thread; *out is NULL on failure (removals then close at once). */
ps_status_t pss_reaper_start(pss_reaper_t **out);

/* Close fd (an unlinked file's descriptor) on the reaper's thread, then
 * call done(arg, 0) there (done may be NULL); both at once, on the caller's
 * thread, when r is NULL or the queue cannot grow. Any thread. */
void pss_reaper_give(pss_reaper_t *r, int fd, void (*done)(void *, int), void *arg);

/* fdatasync fd on the reaper's thread, close it, then call done(arg, err)
 * there, err the fdatasync's errno (0: it succeeded). -1 when r is NULL or
 * the queue cannot grow: nothing is done, the caller keeps fd. */
int pss_reaper_sync(pss_reaper_t *r, int fd, void (*done)(void *, int), void *arg);

/* Wait until everything given so far is done and its done called
 * (NULL: nothing): a worker that leaves with answers still pending calls
 * it before it closes the descriptor those answers wake it by. */
void pss_reaper_drain(pss_reaper_t *r);

/* Close what is queued, stop the thread and free r (NULL: nothing). */
void pss_reaper_stop(pss_reaper_t *r);

#endif

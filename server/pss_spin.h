/*
 * pss_spin.h: whether a worker's loop goes on a little instead of sleeping
 * (pss_worker.c's top says why and when).
 */
#ifndef PSS_SPIN_H
#define PSS_SPIN_H

#include "pss.h"

/* After a turn of the loop that handled events (UCX's) at now (ns,
 * CLOCK_MONOTONIC): 1 to go on (the caller yields the CPU first), 0 to
 * sleep. *spin_end is the worker's window, kept by this function. */
int pss_spin_more(pss_worker_t *w, unsigned events, uint64_t now, uint64_t *spin_end);

#endif

/*
 * spin_box: a worker's spin window (server/pss_spin.c) behind a plain C
 * interface for the unit tests, which are C++ and cannot include the
 * server's headers (C11 atomics).
 */
#ifndef SPIN_BOX_H
#define SPIN_BOX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct spin_box spin_box;

/* A worker of a server whose `spin` is spin_s seconds, idle. */
spin_box *spin_box_new(double spin_s);
void spin_box_free(spin_box *b);
/* The worker's counters: requests, disk I/Os and reply sends in flight;
 * replies sent and disk I/Os completed, ever. */
void spin_box_set(spin_box *b, uint64_t inflight, int aio_inflight, uint64_t sends_inflight,
                  uint64_t answered);
/* pss_spin_more after a turn that handled events, at now (ns) */
int spin_box_more(spin_box *b, unsigned events, uint64_t now);

#ifdef __cplusplus
}
#endif

#endif

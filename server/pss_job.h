/*
 * pss_job.h: I/O jobs of one object (planned batches), run by the
 * worker's libaio queue (pss_aio.h).
 *
 * Ordering and read-modify-write safety come from per-object range
 * serialization: a job starts only when none of its spans intersects a
 * span of a job already running on the object (reads may overlap reads,
 * except a read-ahead into the cache, whose bytes they wait for:
 * pss_job_conflicts); otherwise the object's queue waits (pss_store.c).
 * A job also reads ahead of forward streams (pss_readahead.h) when a read
 * finishes.
 */
#ifndef PSS_JOB_H
#define PSS_JOB_H

#include "pss_object.h"

/* Does job intersect a running job of its object (and must wait)? */
int pss_job_conflicts(const pss_job_t *job);

/*
 * Write obj's staged blocks first staged at or before born_by (ns;
 * UINT64_MAX: all) in one job. A finite born_by is a flush by age or for
 * room: blocks of short spans among them were never joined, and count
 * against staging short spans (obj->spec_missed). 1: started; 0: none; -1:
 * not now (it would overlap a running job, or no memory): try again when
 * the object's jobs finish.
 */
int pss_job_flush(pss_worker_t *w, pss_object_t *obj, uint64_t born_by);

/* Run a planned job; its batches are answered when it finishes. */
void pss_job_start(pss_worker_t *w, pss_job_t *job);

/* Finish a span whose disk I/O returned res (bytes or -errno); its job
 * finishes with its last span. The worker's aio queue calls it back
 * (pss_aio_init). */
void pss_job_span_done(pss_worker_t *w, struct pss_span_io *sp, long res);

#endif

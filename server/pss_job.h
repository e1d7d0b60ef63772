/*
 * pss_job.h: I/O jobs of one object (planned batches) and the worker's
 * libaio queue that runs them.
 *
 * Ordering and read-modify-write safety come from per-object range
 * serialization: a job starts only when none of its spans intersects a
 * span of a job already running on the object (reads may overlap reads,
 * pss_job_conflicts); otherwise the object's queue waits (pss_store.c).
 */
#ifndef PSS_JOB_H
#define PSS_JOB_H

#include "pss_object.h"

#include <string.h>

/* Entry i of a checked OBJ_READ/OBJ_WRITE request's list (at the start of its
 * data) as a run: a plain region is the run {off, len, len, 1}. */
static inline ps_extent_run_t pss_io_run(const pss_req_t *req, uint32_t i)
{
    ps_extent_run_t r;

    if (req->body.io.flags & PS_IO_RUNS) {
        ps_run_t w;
        memcpy(&w, (const ps_run_t *)req->data + i, sizeof(w));
        r.off = w.off;
        r.len = w.len;
        r.stride = w.stride;
        r.count = w.count;
    } else {
        ps_region_t w;
        memcpy(&w, (const ps_region_t *)req->data + i, sizeof(w));
        r.off = w.off;
        r.len = w.len;
        r.stride = w.len;
        r.count = 1;
    }
    return r;
}

/* The worker's aio context and eventfd. */
ps_status_t pss_aio_init(pss_worker_t *w);
void pss_aio_cleanup(pss_worker_t *w);

/* Reap completed disk I/Os (finishing the jobs they complete). */
void pss_aio_reap(pss_worker_t *w);

/* Submit waiting spans while the queue has room. */
void pss_aio_submit_waiting(pss_worker_t *w);

/* Disk I/Os in flight or waiting? */
int pss_aio_busy(pss_worker_t *w);

/*
 * Plan a job for the nbatches requests in batches (a malloc'd array the job
 * takes on success; on failure, NULL, and it stays the caller's). Writes
 * read their payload, reads fill each request's reply_buf.
 */
pss_job_t *pss_job_plan(pss_worker_t *w, pss_object_t *obj, pss_req_t **batches, uint32_t nbatches,
                        int is_write);

/* Does job intersect a running job of its object (and must wait)? */
int pss_job_conflicts(const pss_job_t *job);

/* Does a planned write job read any span first (read-modify-write)? */
int pss_job_needs_rmw(const pss_job_t *job);

/* The object bytes [*lo, *hi) from the job's first span to its last. */
void pss_job_hull(const pss_job_t *job, uint64_t *lo, uint64_t *hi);

/* Write jobs of clients other than conn running on obj: -1 if one of them
 * touches [lo, hi), else 1 if there is one, else 0. */
int pss_job_other_writer(const pss_object_t *obj, const void *conn, uint64_t lo, uint64_t hi);

/* Free a job that was not started (the requests stay queued). */
void pss_job_free(pss_job_t *job);

/* Run a planned job; its batches are answered when it finishes. */
void pss_job_start(pss_worker_t *w, pss_job_t *job);

#endif

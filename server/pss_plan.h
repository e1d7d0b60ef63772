/*
 * pss_plan.h: planning I/O jobs (pss_plan.c): a group of batches of one
 * object mapped onto aligned disk I/Os, and which of its spans go to the
 * write-back stage. pss_job.h runs what is planned here.
 */
#ifndef PSS_PLAN_H
#define PSS_PLAN_H

#include "pss_object.h"

#include <string.h>

/* Entry i of a checked OBJ_READ/OBJ_WRITE request's list (at the start of its
 * data, or after its body) as a run: a plain region is the run {off, len, len, 1}. */
static inline ps_extent_run_t pss_io_run(const pss_req_t *req, uint32_t i)
{
    ps_extent_run_t r;

    if (req->body.io.flags & PS_IO_RUNS) {
        ps_run_t w;
        memcpy(&w, (const ps_run_t *)req->list + i, sizeof(w));
        r.off = w.off;
        r.len = w.len;
        r.stride = w.stride;
        r.count = w.count;
    } else {
        ps_region_t w;
        memcpy(&w, (const ps_region_t *)req->list + i, sizeof(w));
        r.off = w.off;
        r.len = w.len;
        r.stride = w.len;
        r.count = 1;
    }
    return r;
}

/*
 * Plan a job for the nbatches requests in batches (a malloc'd array the job
 * takes on success; on failure, NULL, and it stays the caller's). Writes
 * read their payload, reads fill each request's reply_buf.
 */
pss_job_t *pss_job_plan(pss_worker_t *w, pss_object_t *obj, pss_req_t **batches, uint32_t nbatches,
                        int is_write);

/*
 * Mark the spans of a planned write job that go to the write-back stage
 * (w->stage): those that leave a block partly written, those touching a
 * staged block, and, while several clients write the object
 * (pss_share.h), those shorter than pss_join_run among others (a strided
 * write whose gaps the other writers' blocks fill), and the short spans
 * of a job whose batches are all write-behind flushes (PS_IO_BEHIND:
 * their writers wait for the copy only), the last two (partial blocks
 * or not: short_staged, to wait for their neighbours) while the object's
 * short spans are mostly joined and within their share of the stage.
 * Returns the
 * blocks staging them adds to the stage; sets *touches if some span
 * touches a staged block. Without a stage, 0.
 */
uint64_t pss_job_stage_plan(pss_worker_t *w, pss_job_t *job, int *touches);

/*
 * The run of whole staged blocks that a span staged for being short waits
 * for, in bytes: max_io (at least PSS_WHOLE_RUN blocks). Spans of 16
 * blocks to max_io interleaved by two writers (the matrix's 256 KiB list
 * writes) went to disk one by one, at 0.8 of the large write's speed.
 */
uint64_t pss_join_run(const pss_server_t *s);

/* Unmark them: the job writes every span to disk itself. */
void pss_job_unstage(pss_job_t *job);

/* A run of a finished read job's disk reads, for the read-ahead: [lo, hi)
 * and how it was served (PSS_RA_* of pss_readahead.h). */
typedef struct pss_read_run {
    uint64_t lo, hi;
    unsigned how;
} pss_read_run_t;

/*
 * Where a finished read job's disk reads were: its spans in runs at most a
 * run's length apart (one client's strided read, or several clients' reads
 * of the same blocks, is one read; two clients' streams far apart are two:
 * a job noted over its hull moved the first stream's front to the
 * second's). A run all of whose requests have pieces in more than
 * PSS_RA_SCATTER runs is marked PSS_RA_SCATTERED: a list read of
 * scattered pieces, which must not take a stream's place among the
 * object's last reads. Returns their number, in *runs (malloc'd; 0 and
 * NULL without memory).
 */
size_t pss_job_read_runs(const pss_job_t *job, pss_read_run_t **runs);

/* Free a job that was not started (the requests stay queued). */
void pss_job_free(pss_worker_t *w, pss_job_t *job);

#endif

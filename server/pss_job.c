/*
 * pss_job.c: I/O jobs: a group of read or write batches of one object,
 * planned together into aligned disk I/Os (spans) and run with libaio.
 *
 * Client regions are arbitrary byte ranges, so they are mapped onto aligned
 * spans with ps_extent_plan(): regions closer than coalesce_gap (or touching
 * the same block) share a span, spans are cut at max_io, and a span some
 * byte of which no region covers ("holes": unaligned ends, gaps) is
 * written by read-modify-write: read the whole span, copy the regions over
 * it, write it back. Beyond the object's end the read returns nothing and
 * the span buffer stays zero-filled. Each region is cut into pieces, one per
 * span it touches, grouped by span in request order, so that for writes a
 * later region overwrites an earlier one exactly as if they had been
 * applied in turn.
 *
 * A span is one iocb; at most aio_depth of a worker's spans are in flight,
 * the others wait in order. When the last span of a job completes, the
 * size attribute is updated (writes) or the spans are gathered into the
 * reply buffers (reads), and every batch of the job is answered.
 */
#include "pss_job.h"

#include "pss_req.h"

#include "ps_extent.h"
#include "ps_log.h"
#include "ps_time.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

/* A part of one region, or count whole regions of one run, inside one span:
 * region c at span_off + c * stride in the span, at mem + c * len in memory. */
typedef struct pss_piece {
    uint64_t span_off; /* bytes from the span's start, of the first region */
    uint64_t len;      /* bytes of each region */
    uint64_t stride;   /* bytes between region starts */
    uint64_t count;    /* regions */
    uint64_t obj_off;  /* object offset of the first region */
    uint8_t *mem;      /* write: source in the payload; read: destination in the reply */
} pss_piece_t;

/* One aligned disk I/O of a job (a span of the plan). */
typedef struct pss_span_io {
    struct iocb iocb;
    struct pss_span_io *next_wait;
    pss_job_t *job;
    uint64_t off, len;
    uint8_t *buf;
    int own_buf; /* buf allocated here (else it points into a payload) */
    int holes;   /* write: read the span first */
    int writing; /* current phase is the write */
    int shared;  /* read: copied from a span kept for sharing, not read from disk */
    uint32_t first_piece, npieces;
} pss_span_io_t;

struct pss_job {
    pss_job_t *next; /* the object's running jobs */
    pss_object_t *obj;
    int is_write;
    pss_req_t **batches;
    uint32_t nbatches;
    pss_span_io_t *spans;
    size_t nspans, spans_left;
    pss_piece_t *pieces;
    size_t npieces;
    uint64_t max_end; /* end of the furthest region */
    uint32_t align;   /* the server's disk alignment, bytes */
    ps_status_t status;
};

#define PSS_GAPS_MAX 32 /* covered ranges of a span looked at to fill its holes blind */

/* ---- aio ------------------------------------------------------------------------ */

ps_status_t pss_aio_init(pss_worker_t *w)
{
    int aio_status;

    w->aio_depth = (int)w->server->cfg.aio_depth;
    w->aio_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->aio_efd < 0) {
        ps_error("worker %u: eventfd for aio: %m", w->index);
        return PS_ERR_IO;
    }
    memset(&w->aio_ctx, 0, sizeof(w->aio_ctx));
    aio_status = io_setup(w->aio_depth, &w->aio_ctx);
    if (aio_status < 0) {
        errno = -aio_status;
        ps_error("worker %u: io_setup(%d): %m (see /proc/sys/fs/aio-max-nr)", w->index,
                 w->aio_depth);
        return ps_status_from_errno(-aio_status);
    }
    w->aio_wait_head = NULL;
    w->aio_wait_tail = &w->aio_wait_head;
    return PS_OK;
}

void pss_aio_cleanup(pss_worker_t *w)
{
    if (w->aio_ctx != NULL) {
        io_destroy(w->aio_ctx);
        w->aio_ctx = NULL;
    }
    if (w->aio_efd >= 0) {
        close(w->aio_efd);
        w->aio_efd = -1;
    }
}

int pss_aio_busy(pss_worker_t *w)
{
    return w->aio_inflight > 0 || w->aio_wait_head != NULL;
}

static void pss_span_done(pss_worker_t *w, pss_span_io_t *sp, long res);

/*
 * Hand the prepared I/Os to the kernel, as many per io_submit as there are
 * (one system call for a job's spans, and the block layer sees them
 * together and merges neighbours). An I/O the kernel refuses completes with
 * the error.
 */
static void pss_aio_flush(pss_worker_t *w)
{
    while (w->aio_nbatch > 0) {
        int n = io_submit(w->aio_ctx, w->aio_nbatch, w->aio_batch);
        if (n > 0) {
            w->aio_nbatch -= n;
            memmove(w->aio_batch, w->aio_batch + n,
                    (size_t)w->aio_nbatch * sizeof(w->aio_batch[0]));
            w->aio_inflight += n;
            PSS_STAT_SET(w, queue_depth, w->aio_inflight);
            if ((uint64_t)w->aio_inflight > PSS_STAT_GET(w, queue_depth_max)) {
                PSS_STAT_SET(w, queue_depth_max, w->aio_inflight);
            }
            continue;
        }
        pss_span_io_t *sp = w->aio_batch[0]->data;
        w->aio_nbatch--;
        memmove(w->aio_batch, w->aio_batch + 1, (size_t)w->aio_nbatch * sizeof(w->aio_batch[0]));
        errno = n < 0 ? -n : EAGAIN;
        ps_error("worker %u: io_submit %s of %" PRIu64 " bytes at %" PRIu64 " of object %016" PRIx64
                 ": %m",
                 w->index, sp->writing ? "write" : "read", sp->len, sp->off, sp->job->obj->file_id);
        pss_span_done(w, sp, n < 0 ? n : -EAGAIN);
    }
}

/* Prepare sp's disk I/O; pss_aio_flush submits it (or it waits for a slot). */
static void pss_aio_submit(pss_worker_t *w, pss_span_io_t *sp)
{
    pss_object_t *obj = sp->job->obj;
    struct iocb *iocbp = &sp->iocb;

    if (w->aio_inflight + w->aio_nbatch >= w->aio_depth) {
        sp->next_wait = NULL;
        *w->aio_wait_tail = sp;
        w->aio_wait_tail = &sp->next_wait;
        return;
    }
    if (sp->writing) {
        io_prep_pwrite(iocbp, obj->fd, sp->buf, sp->len, (long long)sp->off);
        PSS_STAT_ADD(w, disk_writes, 1);
        PSS_STAT_ADD(w, disk_bytes_written, sp->len);
    } else {
        io_prep_pread(iocbp, obj->fd, sp->buf, sp->len, (long long)sp->off);
        PSS_STAT_ADD(w, disk_reads, 1);
        PSS_STAT_ADD(w, disk_bytes_read, sp->len);
        if (sp->job->is_write) {
            PSS_STAT_ADD(w, rmw_reads, 1);
        }
    }
    io_set_eventfd(iocbp, w->aio_efd);
    iocbp->data = sp;
    w->aio_batch[w->aio_nbatch++] = iocbp;
    if (w->aio_nbatch == PSS_AIO_BATCH) {
        pss_aio_flush(w);
    }
}

void pss_aio_reap(pss_worker_t *w)
{
    struct io_event evs[64];
    struct timespec zero = {0, 0};
    int n;

    while (w->aio_inflight > 0) {
        n = io_getevents(w->aio_ctx, 0, 64, evs, &zero);
        if (n < 0) {
            if (n == -EINTR) {
                continue;
            }
            errno = -n;
            ps_error("worker %u: io_getevents: %m", w->index);
            return;
        }
        if (n == 0) {
            return;
        }
        w->aio_inflight -= n;
        PSS_STAT_SET(w, queue_depth, w->aio_inflight);
        for (int i = 0; i < n; i++) {
            pss_span_done(w, evs[i].data, (long)evs[i].res);
        }
        pss_aio_flush(w); /* the writes of read-modify-writes just read */
    }
}

void pss_aio_submit_waiting(pss_worker_t *w)
{
    while (w->aio_wait_head != NULL && w->aio_inflight + w->aio_nbatch < w->aio_depth) {
        pss_span_io_t *sp = w->aio_wait_head;
        w->aio_wait_head = sp->next_wait;
        if (w->aio_wait_head == NULL) {
            w->aio_wait_tail = &w->aio_wait_head;
        }
        pss_aio_submit(w, sp);
    }
    pss_aio_flush(w);
}

/* ---- jobs ------------------------------------------------------------------------ */

void pss_job_free(pss_job_t *job)
{
    if (job->spans != NULL) {
        for (size_t i = 0; i < job->nspans; i++) {
            if (job->spans[i].own_buf) {
                free(job->spans[i].buf);
            }
        }
    }
    free(job->spans);
    free(job->pieces);
    free(job->batches);
    free(job);
}

/* Index of the first span whose end is beyond off (spans sorted, disjoint). */
static size_t pss_span_search(const pss_span_io_t *spans, size_t n, uint64_t off)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (spans[mid].off + spans[mid].len <= off) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static int pss_run_cmp(const void *a, const void *b)
{
    const ps_extent_run_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * Plan the runs (sorted here) into spans: without expanding them when their
 * hulls are disjoint (one client's strided pattern), else by expanding them
 * into nreg regions for ps_extent_plan (interleaved runs of several
 * batches). *plan is malloc'd.
 */
static ps_status_t pss_job_plan_runs(pss_server_t *s, ps_extent_run_t *runs, size_t nruns,
                                     uint64_t nreg, ps_io_span_t **plan, size_t *nspans)
{
    size_t i = 1, r = 0, bound;
    ps_extent_t *ext;
    uint64_t gap = s->cfg.coalesce_gap;

    while (i < nruns && runs[i - 1].off <= runs[i].off) {
        i++;
    }
    if (i < nruns) {
        qsort(runs, nruns, sizeof(*runs), pss_run_cmp);
    }
    if (ps_extent_runs_disjoint(runs, nruns)) {
        bound = ps_extent_plan_runs_bound(runs, nruns, s->align, s->cfg.max_io);
        *plan = malloc((bound ? bound : 1) * sizeof(**plan));
        if (*plan == NULL) {
            return PS_ERR_NO_MEMORY;
        }
        *nspans = ps_extent_plan_runs(runs, nruns, s->align, gap, s->cfg.max_io, *plan);
        return PS_OK;
    }
    ext = malloc(nreg * sizeof(*ext));
    if (ext == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    for (i = 0; i < nruns; i++) {
        for (uint64_t k = 0; k < runs[i].count; k++, r++) {
            ext[r].off = runs[i].off + k * runs[i].stride;
            ext[r].len = runs[i].len;
        }
    }
    ps_extent_sort(ext, nreg);
    bound = ps_extent_plan_bound(ext, nreg, s->align, s->cfg.max_io);
    *plan = malloc((bound ? bound : 1) * sizeof(**plan));
    if (*plan == NULL) {
        free(ext);
        return PS_ERR_NO_MEMORY;
    }
    *nspans = ps_extent_plan(ext, nreg, s->align, gap, s->cfg.max_io, *plan);
    free(ext);
    return PS_OK;
}

/*
 * The job's spans: all regions of the batches, sorted and coalesced into
 * aligned spans (see pss_job.h); also the job's max_end.
 */
static ps_status_t pss_job_spans(pss_server_t *s, pss_job_t *job, pss_req_t **batches,
                                 uint32_t nbatches, size_t nruns)
{
    size_t r = 0, nspans = 0;
    uint64_t nreg = 0;
    ps_extent_run_t *runs;
    ps_io_span_t *plan = NULL;
    ps_status_t status;

    runs = malloc(nruns * sizeof(*runs));
    if (runs == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    for (uint32_t b = 0; b < nbatches; b++) {
        for (uint32_t i = 0; i < batches[b]->body.io.nregions; i++, r++) {
            runs[r] = pss_io_run(batches[b], i);
            nreg += runs[r].count;
            if (ps_extent_run_end(&runs[r]) > job->max_end) {
                job->max_end = ps_extent_run_end(&runs[r]);
            }
        }
    }
    status = pss_job_plan_runs(s, runs, nruns, nreg, &plan, &nspans);
    free(runs);
    if (status != PS_OK) {
        return status;
    }

    job->spans = calloc(nspans ? nspans : 1, sizeof(*job->spans));
    if (job->spans == NULL) {
        free(plan);
        return PS_ERR_NO_MEMORY;
    }
    job->nspans = nspans;
    for (size_t i = 0; i < nspans; i++) {
        job->spans[i].job = job;
        job->spans[i].off = plan[i].off;
        job->spans[i].len = plan[i].len;
        job->spans[i].holes = plan[i].holes;
    }
    free(plan);
    return PS_OK;
}

static void pss_piece_set(pss_piece_t *p, uint64_t span_off, uint64_t len, uint64_t stride,
                          uint64_t count, uint64_t obj_off, uint8_t *mem)
{
    p->span_off = span_off;
    p->len = len;
    p->stride = stride;
    p->count = count;
    p->obj_off = obj_off;
    p->mem = mem;
}

/*
 * The pieces of run r (its data at mem) inside span sp: a cut region at
 * either end, and the whole regions between as one piece. Writes them to
 * out unless out is NULL; returns how many.
 */
static size_t pss_run_pieces(const ps_extent_run_t *r, uint8_t *mem, const pss_span_io_t *sp,
                             pss_piece_t *out)
{
    uint64_t a = sp->off, b = sp->off + sp->len, st = r->stride;
    uint64_t i = a < r->off + r->len ? 0 : (a - r->off - r->len) / st + 1;     /* ends after a */
    uint64_t lim = b <= r->off ? 0 : (b - r->off - 1) / st + 1;                /* start before b */
    uint64_t whole = b < r->off + r->len ? 0 : (b - r->off - r->len) / st + 1; /* end by b */
    size_t n = 0;

    lim = lim < r->count ? lim : r->count;
    whole = whole < lim ? whole : lim;
    while (i < lim) {
        uint64_t ro = r->off + i * st, re = ro + r->len;
        if (ro >= a && re <= b) {
            if (out != NULL) {
                pss_piece_set(&out[n], ro - a, r->len, st, whole - i, ro, mem + i * r->len);
            }
            i = whole;
        } else {
            uint64_t x = ro > a ? ro : a, z = re < b ? re : b;
            if (out != NULL) {
                pss_piece_set(&out[n], x - a, z - x, z - x, 1, x, mem + i * r->len + (x - ro));
            }
            i++;
        }
        n++;
    }
    return n;
}

/*
 * Cut every run into pieces per span it touches, grouped by span in
 * request order: first count them per span (place == 0), then place them.
 */
static void pss_job_walk_pieces(pss_job_t *job, pss_req_t **batches, uint32_t nbatches, int place)
{
    size_t nspans = job->nspans;

    for (uint32_t b = 0; b < nbatches; b++) {
        pss_req_t *req = batches[b];
        uint8_t *mem = job->is_write ? (uint8_t *)req->payload : req->reply_buf;
        for (uint32_t i = 0; i < req->body.io.nregions; i++) {
            ps_extent_run_t r = pss_io_run(req, i);
            uint64_t end = ps_extent_run_end(&r);
            for (size_t k = pss_span_search(job->spans, nspans, r.off);
                 k < nspans && job->spans[k].off < end; k++) {
                pss_span_io_t *sp = &job->spans[k];
                pss_piece_t *out = place ? &job->pieces[sp->first_piece + sp->npieces] : NULL;
                sp->npieces += (uint32_t)pss_run_pieces(&r, mem, sp, out);
            }
            mem += r.len * r.count;
        }
    }
}

static ps_status_t pss_job_pieces(pss_job_t *job, pss_req_t **batches, uint32_t nbatches)
{
    size_t npieces = 0;
    uint32_t acc = 0;

    pss_job_walk_pieces(job, batches, nbatches, 0);
    for (size_t k = 0; k < job->nspans; k++) {
        npieces += job->spans[k].npieces;
    }
    job->pieces = malloc((npieces ? npieces : 1) * sizeof(*job->pieces));
    if (job->pieces == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    job->npieces = npieces;
    for (size_t k = 0; k < job->nspans; k++) {
        job->spans[k].first_piece = acc;
        acc += job->spans[k].npieces;
        job->spans[k].npieces = 0; /* refilled below */
    }
    pss_job_walk_pieces(job, batches, nbatches, 1);
    return PS_OK;
}

pss_job_t *pss_job_plan(pss_worker_t *w, pss_object_t *obj, pss_req_t **batches, uint32_t nbatches,
                        int is_write)
{
    size_t nreg = 0;
    pss_job_t *job;

    for (uint32_t b = 0; b < nbatches; b++) {
        nreg += batches[b]->body.io.nregions;
    }
    job = calloc(1, sizeof(*job));
    if (job == NULL) {
        goto err_log;
    }
    job->obj = obj;
    job->is_write = is_write;
    job->align = w->server->align;
    if (pss_job_spans(w->server, job, batches, nbatches, nreg) != PS_OK ||
        pss_job_pieces(job, batches, nbatches) != PS_OK) {
        goto err_free_job;
    }
    job->batches = batches;
    job->nbatches = nbatches;
    return job;

err_free_job:
    pss_job_free(job);
err_log:
    ps_error("worker %u: no memory to plan %zu region list entries", w->index, nreg);
    return NULL;
}

/* Do two jobs' span lists intersect? Both are sorted and disjoint. */
static int pss_jobs_overlap(const pss_job_t *a, const pss_job_t *b)
{
    size_t i = 0, j = 0;
    while (i < a->nspans && j < b->nspans) {
        const pss_span_io_t *x = &a->spans[i], *y = &b->spans[j];
        if (x->off + x->len <= y->off) {
            i++;
        } else if (y->off + y->len <= x->off) {
            j++;
        } else {
            return 1;
        }
    }
    return 0;
}

int pss_job_conflicts(const pss_job_t *job)
{
    /* reads shared by several clients wait for a running read of the same
     * blocks and then copy what it kept (pss_share.c) */
    int shared = !job->is_write && pss_share_active(&job->obj->share);

    for (const pss_job_t *a = job->obj->active; a != NULL; a = a->next) {
        if ((job->is_write || a->is_write || shared) && pss_jobs_overlap(job, a)) {
            return 1;
        }
    }
    return 0;
}

static int pss_range_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * The bytes of span sp that no piece covers, as sorted [lo, hi) offsets in
 * the span, in gaps[]: their number, or -1 when the pieces are too many
 * ranges to look at.
 */
static int pss_span_gaps(const pss_span_io_t *sp, uint64_t (*gaps)[2])
{
    const pss_piece_t *p = &sp->job->pieces[sp->first_piece];
    uint64_t cov[PSS_GAPS_MAX][2], at = 0;
    int n = 0, ngaps = 0;

    for (uint32_t i = 0; i < sp->npieces; i++) {
        for (uint64_t c = 0; c < p[i].count; c++) {
            if (n == PSS_GAPS_MAX) {
                return -1;
            }
            cov[n][0] = p[i].span_off + c * p[i].stride;
            cov[n][1] = cov[n][0] + p[i].len;
            n++;
        }
    }
    qsort(cov, (size_t)n, sizeof(cov[0]), pss_range_cmp);
    for (int i = 0; i <= n; i++) {
        uint64_t next = i < n ? cov[i][0] : sp->len;
        if (next > at) {
            if (ngaps == PSS_GAPS_MAX) {
                return -1;
            }
            gaps[ngaps][0] = at;
            gaps[ngaps][1] = next;
            ngaps++;
        }
        if (i < n && cov[i][1] > at) {
            at = cov[i][1];
        }
    }
    return ngaps;
}

/*
 * Can the holes of write span sp be filled without reading the span? Bytes
 * at or past phys (the file's length before this job) are zeros; the others
 * must lie in edge blocks kept from earlier writes (pss_edge.c). With fill,
 * also put those bytes into sp->buf.
 */
static int pss_span_prefill(pss_span_io_t *sp, uint64_t phys, int fill)
{
    const pss_object_t *obj = sp->job->obj;
    uint32_t align = sp->job->align;
    uint64_t gaps[PSS_GAPS_MAX][2];
    int n = pss_span_gaps(sp, gaps);

    for (int i = 0; i < n; i++) {
        uint64_t lo = sp->off + gaps[i][0], hi = sp->off + gaps[i][1];
        uint64_t old_end = hi < phys ? hi : phys;
        if (lo < old_end && !pss_edge_copy(&obj->edges, align, lo, old_end - lo,
                                           fill ? sp->buf + (lo - sp->off) : NULL)) {
            return 0;
        }
        if (fill && hi > phys) {
            uint64_t z = lo > phys ? lo : phys;
            memset(sp->buf + (z - sp->off), 0, hi - z);
        }
    }
    return n >= 0;
}

int pss_job_needs_rmw(const pss_job_t *job)
{
    for (size_t i = 0; i < job->nspans; i++) {
        if (job->spans[i].holes && !pss_span_prefill(&job->spans[i], job->obj->phys_size, 0)) {
            return 1;
        }
    }
    return 0;
}

void pss_job_hull(const pss_job_t *job, uint64_t *lo, uint64_t *hi)
{
    *lo = job->nspans ? job->spans[0].off : 0;
    *hi = job->nspans ? job->spans[job->nspans - 1].off + job->spans[job->nspans - 1].len : 0;
}

int pss_job_other_writer(const pss_object_t *obj, const void *conn, uint64_t lo, uint64_t hi)
{
    int found = 0;

    for (const pss_job_t *a = obj->active; a != NULL; a = a->next) {
        uint64_t alo, ahi;
        int other = 0;
        for (uint32_t b = 0; b < a->nbatches && a->is_write; b++) {
            other |= a->batches[b]->conn != conn;
        }
        if (!other) {
            continue;
        }
        pss_job_hull(a, &alo, &ahi);
        if (alo < hi && lo < ahi) {
            return -1;
        }
        found = 1;
    }
    return found;
}

/* Do the job's batches come from more than one client connection? */
static int pss_job_multi_client(const pss_job_t *job)
{
    for (uint32_t b = 1; b < job->nbatches; b++) {
        if (job->batches[b]->conn != job->batches[0]->conn) {
            return 1;
        }
    }
    return 0;
}

/* Copy a write job's pieces of one span into its buffer (request order). */
static void pss_span_fill(pss_span_io_t *sp)
{
    const pss_piece_t *p = &sp->job->pieces[sp->first_piece];
    for (uint32_t i = 0; i < sp->npieces; i++) {
        for (uint64_t c = 0; c < p[i].count; c++) {
            memcpy(sp->buf + p[i].span_off + c * p[i].stride, p[i].mem + c * p[i].len, p[i].len);
        }
    }
}

/* Copy a read job's piece out of its span's buffer (unless the span read
 * straight into the reply) and zero what lies past the logical size. */
static void pss_piece_gather(const pss_span_io_t *sp, const pss_piece_t *p, uint64_t size)
{
    for (uint64_t c = 0; c < p->count; c++) {
        uint8_t *mem = p->mem + c * p->len;
        uint64_t obj_off = p->obj_off + c * p->stride;
        if (sp->own_buf) {
            memcpy(mem, sp->buf + p->span_off + c * p->stride, p->len);
        }
        if (obj_off + p->len > size) {
            uint64_t keep = obj_off >= size ? 0 : size - obj_off;
            memset(mem + keep, 0, p->len - keep);
        }
    }
}

/* A span whose only piece covers it exactly at an aligned address can use
 * the payload (write) or reply (read) memory directly. */
static int pss_span_direct(pss_server_t *s, const pss_span_io_t *sp, const pss_piece_t *pieces)
{
    if (sp->npieces != 1) {
        return 0;
    }
    const pss_piece_t *p = &pieces[sp->first_piece];
    return p->count == 1 && p->span_off == 0 && p->len == sp->len &&
           ((uintptr_t)p->mem % s->mem_align) == 0;
}

static void pss_job_finish(pss_worker_t *w, pss_job_t *job);

/*
 * ext4 (and others) run an O_DIRECT write that extends the file
 * synchronously inside io_submit, which would stall this worker for the
 * whole disk write. So the file is first extended (sparsely) to the end of
 * the job's last span, rounded up to a whole block (see pss_object.c); the
 * writes then land inside i_size and stay asynchronous.
 */
static void pss_job_extend(pss_worker_t *w, pss_job_t *job)
{
    pss_object_t *obj = job->obj;

    if (!job->is_write || job->nspans == 0) {
        return;
    }
    uint64_t span_end = pss_round_up(
        job->spans[job->nspans - 1].off + job->spans[job->nspans - 1].len, w->server->align);
    if (span_end > obj->phys_size) {
        if (ftruncate(obj->fd, (off_t)span_end) == 0) {
            obj->phys_size = span_end;
        } else {
            ps_warn("worker %u: ftruncate object %016" PRIx64 " up to %" PRIu64
                    ": %m (writes past the end will be synchronous)",
                    w->index, obj->file_id, span_end);
        }
    }
}

void pss_job_start(pss_worker_t *w, pss_job_t *job)
{
    pss_server_t *s = w->server;
    pss_object_t *obj = job->obj;
    uint64_t phys = obj->phys_size; /* before pss_job_extend */

    if (!job->is_write && obj->fd < 0) {
        /* nothing on disk: every byte reads as zero (size 0 clamps all) */
        job->spans_left = 0;
        job->next = obj->active;
        obj->active = job;
        pss_job_finish(w, job);
        return;
    }

    if (job->is_write && obj->share.spans != NULL && job->nspans > 0) {
        uint64_t lo, hi;
        pss_job_hull(job, &lo, &hi);
        pss_share_drop(w, &obj->share, lo, hi);
    }
    pss_job_extend(w, job);
    job->next = obj->active;
    obj->active = job;
    if (job->nbatches > 1) {
        PSS_STAT_ADD(w, merged_batches, job->nbatches);
    }
    if (job->is_write && pss_job_multi_client(job)) {
        PSS_STAT_ADD(w, merged_writers, 1);
    }
    /* One extra count held by this loop, so that spans failing at once
     * cannot finish the job before every span has been looked at. */
    job->spans_left = job->nspans + 1;
    for (size_t i = 0; i < job->nspans; i++) {
        pss_span_io_t *sp = &job->spans[i];
        if (pss_span_direct(s, sp, job->pieces)) {
            sp->buf = job->pieces[sp->first_piece].mem;
            sp->own_buf = 0;
        } else {
            if (posix_memalign((void **)&sp->buf, s->mem_align, sp->len) != 0) {
                ps_error("worker %u: no memory for a %" PRIu64 "-byte I/O buffer", w->index,
                         sp->len);
                job->status = PS_ERR_NO_MEMORY;
                job->spans_left--;
                sp->buf = NULL;
                continue;
            }
            sp->own_buf = 1;
        }
        if (job->is_write && sp->holes && pss_span_prefill(sp, phys, 1)) {
            sp->holes = 0; /* its old bytes are in the buffer: no read */
        }
        if (job->is_write && !sp->holes) {
            if (sp->own_buf) {
                pss_span_fill(sp);
            }
            sp->writing = 1;
        } else {
            sp->writing = 0; /* read, or the read of a read-modify-write */
        }
        if (!job->is_write && obj->share.spans != NULL &&
            pss_share_copy(w, &obj->share, sp->off, sp->len, sp->buf)) {
            sp->shared = 1;
            pss_span_done(w, sp, (long)sp->len);
            continue;
        }
        pss_aio_submit(w, sp);
    }
    pss_aio_flush(w);
    if (--job->spans_left == 0) {
        pss_job_finish(w, job);
    }
}

static void pss_span_done(pss_worker_t *w, pss_span_io_t *sp, long res)
{
    pss_job_t *job = sp->job;

    if (res < 0) {
        pss_edge_drop(&job->obj->edges); /* what the write left on disk is unknown */
        if (job->status == PS_OK) {
            errno = (int)-res;
            ps_error("worker %u: %s of %" PRIu64 " bytes at %" PRIu64 " of object %016" PRIx64
                     ": %m",
                     w->index, sp->writing ? "write" : "read", sp->len, sp->off, job->obj->file_id);
            job->status = ps_status_from_errno((int)-res);
        }
    } else if (sp->writing && (uint64_t)res == sp->len) {
        pss_edge_note(&job->obj->edges, job->align, sp->off, sp->len, sp->buf);
    } else if (sp->writing) {
        pss_edge_drop(&job->obj->edges);
        if (job->status == PS_OK) {
            ps_error("worker %u: short write of %ld of %" PRIu64 " bytes at %" PRIu64
                     " of object %016" PRIx64,
                     w->index, res, sp->len, sp->off, job->obj->file_id);
            job->status = PS_ERR_IO;
        }
    } else if (!sp->writing && (uint64_t)res < sp->len) {
        /* end of file: the rest of the span reads as zeros */
        memset(sp->buf + res, 0, sp->len - (uint64_t)res);
    }

    if (!sp->writing && job->is_write && job->status == PS_OK) {
        /* read-modify-write: the span is read, lay the regions over it */
        pss_span_fill(sp);
        sp->writing = 1;
        pss_aio_submit(w, sp);
        return;
    }
    if (--job->spans_left == 0) {
        pss_job_finish(w, job);
    }
}

static void pss_job_finish(pss_worker_t *w, pss_job_t *job)
{
    pss_object_t *obj = job->obj;
    pss_job_t **pp;
    ps_status_t status = job->status;

    for (pp = &obj->active; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == job) {
            *pp = job->next;
            break;
        }
    }
    if (job->is_write) {
        if (status == PS_OK) {
            uint64_t span_end =
                job->nspans ? job->spans[job->nspans - 1].off + job->spans[job->nspans - 1].len : 0;
            if (span_end > obj->phys_size) { /* the extension before it failed */
                obj->phys_size = span_end;
            }
            if (job->max_end > obj->size) {
                obj->size = job->max_end;
                status = pss_obj_save_size(w, obj); /* before the write is acknowledged */
            }
        } else {
            /* a failed write may have extended the file: keep it consistent */
            struct stat file_st;
            if (fstat(obj->fd, &file_st) == 0 && (uint64_t)file_st.st_size > obj->phys_size) {
                obj->phys_size = (uint64_t)file_st.st_size;
            }
        }
        obj->dirty = 1;
        uint32_t k = obj->recent_next++ % PSS_OBJ_RECENT;
        obj->recent[k].ns = ps_time_ns();
        obj->recent[k].conn = job->batches[0]->conn;
        obj->recent[k].multi = pss_job_multi_client(job);
        pss_job_hull(job, &obj->recent[k].lo, &obj->recent[k].hi);
    } else if (status == PS_OK) {
        /* gather the spans into the replies; zeros past the logical end */
        int keep = pss_share_active(&obj->share);
        for (size_t k = 0; k < job->nspans; k++) {
            pss_span_io_t *sp = &job->spans[k];
            if (keep && !sp->shared) {
                pss_share_keep(w, &obj->share, sp->off, sp->len, sp->buf);
            }
            const pss_piece_t *p = &job->pieces[sp->first_piece];
            for (uint32_t i = 0; i < sp->npieces; i++) {
                pss_piece_gather(sp, &p[i], obj->size);
            }
        }
    }

    for (uint32_t b = 0; b < job->nbatches; b++) {
        pss_req_t *req = job->batches[b];
        ps_io_rep_t rep = {req->body.io.payload_len, obj->size};
        if (status != PS_OK) {
            pss_reply(req, status, NULL, 0, NULL, 0, NULL);
        } else if (job->is_write) {
            pss_reply(req, PS_OK, &rep, sizeof(rep), NULL, 0, NULL);
        } else {
            uint8_t *buf = req->reply_buf;
            req->reply_buf = NULL;
            pss_reply(req, PS_OK, &rep, sizeof(rep), buf, req->body.io.payload_len, free);
        }
    }
    pss_job_free(job);
    obj->blocked = 0;
    pss_obj_schedule(w, obj);
}

/*
 * pss_plan.c: planning a job (pss_job.h): a group of batches' regions or
 * runs mapped onto aligned spans (ps_extent_plan*, coalescing regions
 * closer than coalesce_gap, cut at max_io), each region cut into pieces,
 * one per span it touches, grouped by span in request order (so that a
 * later region overwrites an earlier one, as if applied in turn); which
 * holes of a span can be filled without reading it; and the jobs that
 * write blocks of the write-back stage (pss_stage.h).
 */
#include "pss_plan.h"

#include "pss_cache.h"
#include "pss_jobdef.h"
#include "pss_readahead.h"
#include "pss_req.h"
#include "pss_share.h"

#include "ps_extent.h"
#include "ps_log.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PSS_GAPS_MAX 32 /* covered ranges of a span looked at to fill its holes blind */

void pss_job_free(pss_worker_t *w, pss_job_t *job)
{
    if (job->spans != NULL) {
        for (size_t i = 0; i < job->nspans; i++) {
            pss_span_io_t *sp = &job->spans[i];
            if (sp->own_buf) {
                pss_buf_put(w, sp->buf, sp->buf_cap);
            }
            if (sp->gran != NULL) { /* a read-ahead that failed or was dropped */
                pss_cache_filled(w, sp->gran, sp->off, sp->len, 0);
            }
        }
    }
    for (size_t i = 0; i < job->nsblocks; i++) {
        pss_stage_free_block(job->stage, job->sblocks[i]);
    }
    free(job->sblocks);
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
 * hulls are disjoint (one client's strided pattern), else by merging them
 * into their nreg regions for ps_extent_plan (interleaved runs of several
 * batches; the runs are used up then). *plan is malloc'd.
 */
static ps_status_t pss_job_plan_runs(pss_server_t *s, ps_extent_run_t *runs, size_t nruns,
                                     uint64_t nreg, ps_io_span_t **plan, size_t *nspans)
{
    size_t i = 1, bound;
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
    nreg = ps_extent_runs_merge(runs, nruns, ext);
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
                size_t n = pss_run_pieces(&r, mem, sp, out);
                for (size_t j = 0; out != NULL && j < n; j++) {
                    out[j].batch = b;
                }
                sp->npieces += (uint32_t)n;
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
    job->behind = is_write && nbatches > 0;
    for (uint32_t b = 0; b < nbatches; b++) {
        job->behind &= (batches[b]->body.io.flags & PS_IO_BEHIND) != 0;
    }
    return job;

err_free_job:
    pss_job_free(w, job);
err_log:
    ps_error("worker %u: no memory to plan %zu region list entries", w->index, nreg);
    return NULL;
}

/* The span past the run of a read job's spans that starts at span k:
 * spans at most the run's length apart. */
static size_t pss_read_run_end(const pss_job_t *job, size_t k)
{
    uint64_t lo = job->spans[k].off, hi;

    do {
        hi = job->spans[k].off + job->spans[k].len;
        k++;
    } while (k < job->nspans && job->spans[k].off <= hi + (hi - lo));
    return k;
}

/* Count the run of spans [k, e) once for each request with pieces in it
 * (seen[b]: the mark of the last run counted for request b). */
static void pss_read_run_count(const pss_job_t *job, size_t k, size_t e, uint32_t mark,
                               uint32_t *seen, uint32_t *nruns)
{
    for (; k < e; k++) {
        const pss_span_io_t *sp = &job->spans[k];
        for (uint32_t i = 0; i < sp->npieces; i++) {
            uint32_t b = job->pieces[sp->first_piece + i].batch;
            nruns[b] += seen[b] != mark;
            seen[b] = mark;
        }
    }
}

/* Whether every request with pieces in spans [k, e) has pieces in more
 * than PSS_RA_SCATTER runs of the job. */
static int pss_read_run_scattered(const pss_job_t *job, size_t k, size_t e, const uint32_t *nruns)
{
    for (; k < e; k++) {
        const pss_span_io_t *sp = &job->spans[k];
        for (uint32_t i = 0; i < sp->npieces; i++) {
            if (nruns[job->pieces[sp->first_piece + i].batch] <= PSS_RA_SCATTER) {
                return 0;
            }
        }
    }
    return 1;
}

/* Mark the runs whose requests all have pieces in more than
 * PSS_RA_SCATTER of them (a job of several requests); 0 without memory. */
static int pss_read_runs_scatter(const pss_job_t *job, pss_read_run_t *runs)
{
    uint32_t *seen = calloc(2 * (size_t)job->nbatches, sizeof(*seen)),
             *nruns = seen + job->nbatches;
    size_t n = 0;

    if (seen == NULL) {
        return 0;
    }
    for (size_t k = 0; k < job->nspans; n++) {
        size_t e = pss_read_run_end(job, k);
        pss_read_run_count(job, k, e, (uint32_t)n + 1, seen, nruns);
        k = e;
    }
    n = 0;
    for (size_t k = 0; k < job->nspans; n++) {
        size_t e = pss_read_run_end(job, k);
        runs[n].how |= pss_read_run_scattered(job, k, e, nruns) ? PSS_RA_SCATTERED : 0u;
        k = e;
    }
    free(seen);
    return 1;
}

size_t pss_job_read_runs(const pss_job_t *job, pss_read_run_t **out)
{
    pss_read_run_t *runs = malloc((job->nspans ? job->nspans : 1) * sizeof(*runs));
    size_t n = 0;

    *out = runs;
    for (size_t k = 0; runs != NULL && k < job->nspans; n++) {
        size_t e = pss_read_run_end(job, k);
        runs[n].lo = job->spans[k].off;
        runs[n].hi = job->spans[e - 1].off + job->spans[e - 1].len;
        runs[n].how = 0;
        for (; k < e; k++) {
            const pss_span_io_t *sp = &job->spans[k];
            runs[n].how |=
                (sp->kept ? PSS_RA_KEPT : 0u) | (sp->hit || sp->lent ? PSS_RA_CACHED : 0u);
        }
    }
    /* (no request has more runs than the job; one request has them all) */
    if (n > PSS_RA_SCATTER && job->nbatches > 1 && !pss_read_runs_scatter(job, runs)) {
        free(runs);
        *out = NULL;
        return 0;
    }
    for (size_t k = 0; n > PSS_RA_SCATTER && job->nbatches <= 1 && k < n; k++) {
        runs[k].how |= PSS_RA_SCATTERED;
    }
    return n;
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

int pss_span_prefill(pss_span_io_t *sp, uint64_t phys, int fill)
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

/* ---- write-back stage -------------------------------------------------------------- */

uint64_t pss_join_run(const pss_server_t *s)
{
    uint64_t run = s->cfg.max_io / s->align * s->align;
    return run > (uint64_t)PSS_WHOLE_RUN * s->align ? run : (uint64_t)PSS_WHOLE_RUN * s->align;
}

uint64_t pss_job_stage_plan(pss_worker_t *w, pss_job_t *job, int *touches)
{
    pss_stage_t *st = w->stage;
    pss_object_t *obj = job->obj;
    uint64_t need = 0, join = pss_join_run(w->server);
    /* Short spans are staged on the guess that their neighbours come
     * soon: while several clients write the object (a strided batch whose
     * gaps the others fill), or when the job is all write-behind flushes
     * (PS_IO_BEHIND: nobody waits for the disk). Spans with partial
     * blocks, staged for them anyway, wait so too: their whole blocks go
     * to disk in runs as long as the others' (HDF5's chunks of two
     * processes, 256 KiB each at unaligned offsets, went out a chunk's
     * middle at a time). A span that touches staged blocks completes
     * them: its run goes once whole. The guess holds while
     * the object's short spans have mostly been joined and take less than
     * their share of the stage: where nobody fills the gaps (strided
     * writers that leave them, scattered small writes), short spans go
     * out by age or for room, unjoined, and then are written at once. */
    int guess = obj->spec_missed <= obj->spec_joined / 4 + PSS_SPEC_TRIAL / job->align &&
                (st == NULL || obj->spec_waiting < st->max_blocks / PSS_SPEC_SHARE);
    int several = pss_share_active(&obj->writers);

    *touches = 0;
    if (st == NULL || !job->is_write) {
        return 0;
    }
    for (size_t i = 0; i < job->nspans; i++) {
        pss_span_io_t *sp = &job->spans[i];
        int t = pss_stage_touches(st, obj, sp->off, sp->len);
        sp->short_staged =
            !t && sp->len < join && guess && (job->behind || (job->nspans > 1 && several));
        sp->staged = t || sp->holes || sp->short_staged;
        if (sp->staged) {
            need += pss_stage_new_blocks(st, obj, sp->off, sp->len);
        }
        *touches |= t;
    }
    return need;
}

void pss_job_unstage(pss_job_t *job)
{
    for (size_t i = 0; i < job->nspans; i++) {
        job->spans[i].staged = 0;
    }
}

static int pss_sblock_cmp(const void *a, const void *b)
{
    const pss_sblock_t *x = *(pss_sblock_t *const *)a, *y = *(pss_sblock_t *const *)b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Lay out the flush job's spans and pieces (see pss_flush_plan). */
static void pss_flush_layout(pss_job_t *job, uint64_t max_io, uint32_t (*ranges)[2], int place)
{
    pss_stage_t *st = job->stage;
    uint32_t a = job->align;
    size_t nspans = 0, npieces = 0;
    uint64_t run_end = UINT64_MAX, run_len = 0; /* the last span's end and length */
    int run_whole = 0;                          /* its blocks are whole */
    pss_span_io_t *sp = NULL;

    for (size_t i = 0; i < job->nsblocks; i++) {
        pss_sblock_t *b = job->sblocks[i];
        int whole = b->covered == a;
        size_t nr = pss_stage_ranges(st, b, place ? ranges : NULL);

        /* a span stays inside one granule of the cache, so that it is laid
         * out there and kept without a second copy (pss_span_in_cache) */
        if (!(whole == run_whole && run_end == b->off && run_len + a <= max_io &&
              b->off % PSS_CACHE_GRANULE != 0)) {
            sp = place ? &job->spans[nspans] : NULL;
            nspans++;
            run_len = 0;
            if (sp != NULL) {
                sp->job = job;
                sp->off = b->off;
                sp->len = 0;
                sp->holes = !whole;
                sp->first_piece = (uint32_t)npieces;
            }
        }
        run_len += a;
        run_end = b->off + a;
        run_whole = whole;
        for (size_t r = 0; sp != NULL && r < nr; r++) {
            pss_piece_t *p = &job->pieces[npieces + r];
            uint64_t len = ranges[r][1] - ranges[r][0];
            p->span_off = b->off - sp->off + ranges[r][0];
            p->len = p->stride = len;
            p->count = 1;
            p->obj_off = b->off + ranges[r][0];
            p->mem = b->buf + ranges[r][0];
            p->batch = 0;
        }
        if (sp != NULL) {
            sp->len += a;
            sp->npieces += (uint32_t)nr;
        }
        npieces += nr;
    }
    job->nspans = nspans;
    job->npieces = npieces;
}

pss_job_t *pss_flush_plan(pss_worker_t *w, pss_object_t *obj, pss_sblock_t **blocks, size_t n)
{
    pss_job_t *job = calloc(1, sizeof(*job));
    uint32_t(*ranges)[2] = NULL;

    if (job == NULL) {
        return NULL;
    }
    job->obj = obj;
    job->is_write = 1;
    job->align = w->server->align;
    job->stage = w->stage;
    qsort(blocks, n, sizeof(*blocks), pss_sblock_cmp);
    /* the caller keeps the blocks until the job is planned */
    job->sblocks = blocks;
    job->nsblocks = n;
    pss_flush_layout(job, w->server->cfg.max_io, NULL, 0);
    job->spans = calloc(job->nspans ? job->nspans : 1, sizeof(*job->spans));
    job->pieces = malloc((job->npieces ? job->npieces : 1) * sizeof(*job->pieces));
    ranges = malloc(((size_t)job->align / 2 + 1) * sizeof(*ranges));
    if (job->spans == NULL || job->pieces == NULL || ranges == NULL) {
        free(ranges);
        job->sblocks = NULL;
        job->nsblocks = 0;
        pss_job_free(w, job);
        return NULL;
    }
    pss_flush_layout(job, w->server->cfg.max_io, ranges, 1);
    free(ranges);
    return job;
}

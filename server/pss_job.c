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

#include "pss_cache.h"
#include "pss_flushbehind.h"
#include "pss_jobdef.h"
#include "pss_plan.h"
#include "pss_req.h"

#include "ps_extent.h"
#include "ps_log.h"
#include "ps_time.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Does job overlap a running job of its object other than self? */
static int pss_job_conflicts_but(const pss_job_t *job, const pss_job_t *self)
{
    /* reads shared by several clients wait for a running read of the same
     * blocks and then copy what it kept (pss_share.c) */
    int shared = !job->is_write && pss_share_active(&job->obj->share);

    for (const pss_job_t *a = job->obj->active; a != NULL; a = a->next) {
        /* a read also waits for a read-ahead of its blocks, then copies */
        if (a != self && (job->is_write || a->is_write || shared || a->read_ahead) &&
            pss_jobs_overlap(job, a)) {
            return 1;
        }
    }
    return 0;
}

int pss_job_conflicts(const pss_job_t *job)
{
    return pss_job_conflicts_but(job, NULL);
}

/* The end of the job's last span written to disk (not staged), 0 if none. */
static uint64_t pss_job_disk_end(const pss_job_t *job)
{
    for (size_t i = job->nspans; i > 0; i--) {
        if (!job->spans[i - 1].staged) {
            return job->spans[i - 1].off + job->spans[i - 1].len;
        }
    }
    return 0;
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
 * A read span whose one piece is the whole reply of its batch, kept in one
 * granule of the cache, is sent from the cache's memory: reply_buf goes
 * back and the reply carries the granule's bytes, pinned until the send
 * completes (pss_cache_lend), instead of a copy of them (the piece need not
 * be aligned: the span's padding is never read). 1: lent, the span is read.
 */
static int pss_span_lend(pss_worker_t *w, pss_job_t *job, pss_span_io_t *sp)
{
    pss_piece_t *p = &job->pieces[sp->first_piece];
    pss_req_t *req = NULL;
    pss_cgran_t *g;
    const uint8_t *mem;

    if (sp->npieces != 1 || p->count != 1 || p->obj_off + p->len > job->obj->size) {
        return 0; /* gathered from pieces, or zeros past the end */
    }
    for (uint32_t b = 0; b < job->nbatches && req == NULL; b++) {
        pss_req_t *r = job->batches[b];
        if (r->reply_buf == p->mem && r->body.io.payload_len == p->len && r->lent == NULL) {
            req = r;
        }
    }
    if (req == NULL ||
        (mem = pss_cache_lend(w, &job->obj->cache, p->obj_off, p->len, &g)) == NULL) {
        return 0;
    }
    pss_buf_put(w, req->reply_buf, req->reply_cap);
    req->reply_buf = p->mem = sp->buf = (uint8_t *)mem;
    req->reply_cap = 0;
    req->lent = g;
    sp->own_buf = 0;
    sp->shared = 1; /* not put back into the cache */
    sp->lent = 1;
    return 1;
}

/*
 * A read span whose pieces the cache keeps is read by copying each piece
 * from the cache's memory into its reply (pss_cache_gather), instead of a
 * copy of the whole span into a buffer and a gather from there: with two
 * processes' regions interleaved, that first copy moved twice the bytes
 * asked for, and the two took 40% of a server's CPU for 64-byte vector
 * reads. 1: the span is read (pss_job_finish zeroes what lies past the
 * logical size).
 */
static int pss_span_hit(pss_worker_t *w, pss_job_t *job, pss_span_io_t *sp)
{
    const pss_piece_t *p = &job->pieces[sp->first_piece];
    pss_cobj_t *co = &job->obj->cache;

    /* every piece kept: the whole span is, mostly (one check), or each is */
    for (int copy = pss_cache_get(w, co, sp->off, sp->len, NULL); copy < 2; copy++) {
        for (uint32_t i = 0; i < sp->npieces; i++) {
            if (!pss_cache_gather(w, co, p[i].obj_off, p[i].len, p[i].stride, p[i].count,
                                  copy ? p[i].mem : NULL)) {
                return 0;
            }
        }
    }
    sp->hit = 1;
    sp->shared = 1; /* not put back into the cache */
    return 1;
}

/*
 * ext4 (and others) run an O_DIRECT write that extends the file
 * synchronously inside io_submit, which would stall this worker for the
 * whole disk write. So the file is first extended (sparsely) past the end
 * of the job's last span; the writes then land inside i_size and stay
 * asynchronous. It is extended PSS_EXTEND_STEP at a time (an ftruncate is a
 * synchronous metadata update: one per 4 KiB append cost about 40 us), to
 * file_len; phys_size, the end of the bytes that may hold data, still moves
 * to the span's end only. A file longer than its size needs the size
 * attribute (pss_object.c), so a file without one gets it first. And a
 * write past the stored size leaves the file longer than the block it ends
 * in, so that an open after a crash that lost the growth finds it
 * (pss_obj_cut_to_size).
 */
#define PSS_EXTEND_STEP (1ull << 20)

static void pss_job_extend(pss_worker_t *w, pss_job_t *job)
{
    pss_object_t *obj = job->obj;

    if (!job->is_write || pss_job_disk_end(job) == 0) {
        return;
    }
    uint64_t span_end = pss_round_up(pss_job_disk_end(job), w->server->align);
    /* bytes past the stored size on disk: the job's own growth, or one not
     * stored yet that a flush of the stage writes (not an overwrite of the
     * last block within the size) */
    uint64_t data_end = job->max_end > obj->size ? job->max_end : obj->size;
    int past_saved = pss_job_disk_end(job) > obj->saved_size && data_end > obj->saved_size &&
                     span_end == obj->file_len;
    /* (a span past the largest file fails with EFBIG by itself) */
    if ((span_end > obj->file_len || past_saved) && span_end <= w->server->max_file) {
        uint64_t len = pss_round_up(span_end + 1, PSS_EXTEND_STEP);
        if (len > w->server->max_file) {
            len = w->server->max_file; /* the step would pass what the file system holds */
        }
        if (!obj->size_attr && pss_obj_save_size(w, obj) != PS_OK) {
            len = span_end; /* no attribute: the file stays as long as its data */
        }
        if (ftruncate(obj->fd, (off_t)len) == 0) {
            obj->file_len = len;
        } else {
            ps_warn("worker %u: ftruncate object %016" PRIx64 " up to %" PRIu64
                    ": %m (writes past the end will be synchronous)",
                    w->index, obj->file_id, len);
        }
    }
    if (span_end > obj->phys_size && span_end <= obj->file_len) {
        obj->phys_size = span_end;
    }
}

/* ---- the write-back stage ------------------------------------------------------- */

/* Copy a write span's pieces into the stage (request order: later bytes
 * win), block by block: the regions of a run that lie in one block in one
 * call, a region across blocks a part at a time. The room was checked by
 * the caller; a failed allocation fails the job. Without copy, only the
 * blocks are staged (pss_job_answer_early): 0 if one could not be. */
static int pss_span_stage(pss_worker_t *w, pss_span_io_t *sp, uint64_t now, int copy)
{
    pss_job_t *job = sp->job;
    const pss_piece_t *p = &job->pieces[sp->first_piece];
    uint64_t a = job->align, total = 0;
    pss_sblock_t *b = NULL; /* small regions come many to a block */

    for (uint32_t i = 0; i < sp->npieces; i++) {
        for (uint64_t c = 0; c < p[i].count;) {
            uint64_t o = p[i].obj_off + c * p[i].stride, left = p[i].len, n = 1;
            const uint8_t *src = p[i].mem + c * p[i].len;
            if (o % a + left <= a && c + 1 < p[i].count) { /* the regions in o's block */
                n = (o / a * a + a - left - o) / p[i].stride + 1;
                n = n < p[i].count - c ? n : p[i].count - c;
            }
            while (left > 0) {
                uint64_t boff = o / a * a, part = boff + a - o;
                part = part < left ? part : left;
                if ((b == NULL || b->off != boff) &&
                    (b = pss_stage_get(w->stage, job->obj, boff, now)) == NULL) {
                    if (!copy) {
                        return 0; /* the copy fails here too, and says so */
                    }
                    ps_error("worker %u: no room or memory to stage a block of object %016" PRIx64,
                             w->index, job->obj->file_id);
                    job->status = PS_ERR_NO_MEMORY;
                    return 0;
                }
                if (copy) {
                    pss_stage_put_in(b, o, src, part, p[i].stride, n);
                }
                if (copy && sp->short_staged) {
                    pss_stage_mark_spec(b);
                }
                o += part;
                src += part;
                left -= part;
                total += part * n;
            }
            c += n;
        }
    }
    if (copy) {
        PSS_STAT_ADD(w, staged_bytes, total);
    }
    return 1;
}

/* A write's reply: its bytes, the object's size once it is done and the
 * object's failed writes when the job started (the writer's mark: its own
 * staged bytes may fail before its answer, in a flush the job started). */
static ps_io_rep_t pss_write_rep(const pss_job_t *job, const pss_req_t *req)
{
    uint64_t size = job->max_end > job->obj->size ? job->max_end : job->obj->size;
    ps_io_rep_t rep = {req->body.io.payload_len, size, {job->failed_base}};

    return rep;
}

/*
 * A write job whose spans are all staged cannot fail once their blocks
 * are in the stage: stage them, answer its batches, and leave the copy of
 * the bytes to the caller, which makes them readable before the worker
 * takes the object's next request (the callers wake while the worker
 * copies: two processes' 1 MiB list writes of 8-byte regions, a job of
 * 131,072 regions to copy, 867-938 -> 1,191-1,343 MiB/s; of 64-byte
 * regions 1,280-1,401 -> 1,485-1,696). 1: answered (the job
 * then frees its batches without replies); 0: not (a block could not be
 * staged: the copy fails the job as before).
 */
static int pss_job_answer_early(pss_worker_t *w, pss_job_t *job, uint64_t now)
{
    if (!job->is_write || job->nspans == 0 || job->status != PS_OK) {
        return 0;
    }
    for (size_t i = 0; i < job->nspans; i++) {
        if (!job->spans[i].staged) {
            return 0;
        }
    }
    for (size_t i = 0; i < job->nspans; i++) {
        if (!pss_span_stage(w, &job->spans[i], now, 0)) {
            return 0;
        }
    }
    for (uint32_t b = 0; b < job->nbatches; b++) {
        ps_io_rep_t rep = pss_write_rep(job, job->batches[b]);
        pss_reply_keep(job->batches[b], &rep, sizeof(rep));
    }
    job->answered = 1;
    return 1;
}

/* Detach blocks (they are the job's now), count them and start the job. */
static void pss_flush_start(pss_worker_t *w, pss_job_t *job)
{
    for (size_t i = 0; i < job->nsblocks; i++) {
        pss_sblock_t *b = job->sblocks[i];
        pss_stage_detach(w->stage, b);
        if (b->covered == job->align) {
            PSS_STAT_ADD(w, stage_whole, 1);
        } else {
            PSS_STAT_ADD(w, stage_partial, 1);
        }
    }
    pss_job_start(w, job);
}

/* Append b to *blocks (grown as needed); 0 if out of memory. */
static int pss_block_push(pss_sblock_t ***blocks, size_t *n, size_t *cap, pss_sblock_t *b)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        pss_sblock_t **nb = realloc(*blocks, ncap * sizeof(*nb));
        if (nb == NULL) {
            return 0;
        }
        *blocks = nb;
        *cap = ncap;
    }
    (*blocks)[(*n)++] = b;
    return 1;
}

/* The run of whole staged blocks of obj around off (whole itself), as
 * [*lo, *hi), not reaching below floor. */
static void pss_whole_run(const pss_stage_t *st, const pss_object_t *obj, uint64_t off,
                          uint64_t floor, uint64_t *lo, uint64_t *hi)
{
    uint64_t a = st->align;

    for (*lo = off; *lo >= floor + a && pss_stage_whole(st, obj, *lo - a);) {
        *lo -= a;
    }
    for (*hi = off + a; pss_stage_whole(st, obj, *hi);) {
        *hi += a;
    }
}

/*
 * The job (or NULL) writing at once the runs of whole staged blocks through
 * job's staged spans that are PSS_WHOLE_RUN blocks long (pss_join_run
 * through a span staged for being short), or cover a span staged for its
 * holes (one I/O each, one io_submit). A run reaches past
 * the span into blocks staged before: a process writing every other block
 * (or every other 32 KiB) of a vector pattern stages short runs that the
 * other process's blocks join into one long one. Shorter runs wait for
 * their neighbours or their age. Within job's spans the flush overlaps
 * nothing running (job's staged spans do no I/O); beyond them it might (a
 * read of staged blocks overlays them at its end): then the blocks stay.
 */
static pss_job_t *pss_job_flush_whole(pss_worker_t *w, pss_job_t *job)
{
    size_t n = 0, cap = 0;
    pss_sblock_t **blocks = NULL;
    uint64_t a = job->align, taken = 0; /* blocks below taken are in blocks[] */
    uint64_t join = pss_join_run(w->server);
    pss_job_t *flush;

    for (size_t i = 0; i < job->nspans; i++) {
        const pss_span_io_t *sp = &job->spans[i];
        uint64_t sp_end = sp->off + sp->len, lo, hi;
        for (uint64_t o = sp->off > taken ? sp->off : taken; sp->staged && o < sp_end;) {
            if (!pss_stage_whole(w->stage, job->obj, o)) {
                o += a;
                continue;
            }
            pss_whole_run(w->stage, job->obj, o, taken, &lo, &hi);
            if (((hi - lo) / a >= PSS_WHOLE_RUN && (!sp->short_staged || hi - lo >= join)) ||
                (!sp->short_staged && lo <= sp->off && hi >= sp_end)) {
                for (uint64_t x = lo; x < hi; x += a) {
                    pss_sblock_t *b = pss_stage_find(w->stage, job->obj, x);
                    if (!pss_block_push(&blocks, &n, &cap, b)) {
                        goto plan; /* the rest stays staged and goes later */
                    }
                    job->obj->spec_joined += b->spec;
                }
                taken = hi;
            }
            o = hi;
        }
    }
plan:
    flush = n ? pss_flush_plan(w, job->obj, blocks, n) : NULL;
    if (flush == NULL) {
        free(blocks); /* the blocks stay staged: aged out later */
        return NULL;
    }
    if (pss_job_conflicts_but(flush, job)) {
        flush->sblocks = NULL; /* still staged */
        flush->nsblocks = 0;
        pss_job_free(w, flush);
        free(blocks);
        return NULL;
    }
    return flush;
}

int pss_job_flush(pss_worker_t *w, pss_object_t *obj, uint64_t born_by)
{
    size_t n = 0;
    pss_sblock_t **blocks;
    pss_job_t *job;

    if (w->stage == NULL || obj->nstaged == 0) {
        return 0;
    }
    blocks = malloc(obj->nstaged * sizeof(*blocks));
    if (blocks == NULL) {
        return -1;
    }
    uint64_t missed = 0;
    for (pss_sblock_t *b = obj->staged; b != NULL; b = b->onext) {
        if (b->ns <= born_by) {
            blocks[n++] = b;
            missed += b->spec;
        }
    }
    job = n ? pss_flush_plan(w, obj, blocks, n) : NULL;
    if (job == NULL) {
        free(blocks);
        return n ? -1 : 0;
    }
    if (pss_job_conflicts(job)) {
        job->sblocks = NULL; /* still staged */
        job->nsblocks = 0;
        pss_job_free(w, job);
        free(blocks);
        return -1;
    }
    if (born_by != UINT64_MAX) {
        obj->spec_missed += missed;
    }
    pss_flush_start(w, job);
    return 1;
}

/*
 * Whether the cache keeps a span just written or read: one made of several
 * regions or smaller than a granule (small and noncontiguous I/O, which
 * reads back in pieces), or any span of an object several clients read.
 * Not the whole granules of a contiguous stream: their copy cost a fifth
 * of a large write's speed, and of a large read's (run-matrix large,
 * 2 servers, 2 processes).
 */
static int pss_span_keep(const pss_span_io_t *sp, int shared)
{
    return shared || sp->npieces > 1 || sp->len < PSS_CACHE_GRANULE;
}

/*
 * A write span the cache keeps, whose regions are copied into a buffer
 * anyway, is laid out in the cache's granule itself and written from
 * there (pinned until the job ends: pss_job_finish marks it valid), so
 * that keeping it costs no second copy. 1: sp->buf is the granule's.
 */
static int pss_span_in_cache(pss_worker_t *w, pss_job_t *job, pss_span_io_t *sp)
{
    if (!job->is_write || !pss_span_keep(sp, 0) || sp->off % w->server->mem_align != 0) {
        return 0;
    }
    sp->buf = pss_cache_fill(w, &job->obj->cache, sp->off, sp->len, &sp->gran);
    return sp->buf != NULL;
}

void pss_job_start(pss_worker_t *w, pss_job_t *job)
{
    pss_server_t *s = w->server;
    pss_object_t *obj = job->obj;
    uint64_t phys = obj->phys_size; /* before pss_job_extend */
    uint64_t now = ps_time_ns();
    int staged = 0;

    if (!job->is_write && obj->fd < 0) {
        /* nothing on disk: every byte reads as zero (size 0 clamps all) */
        job->spans_left = 0;
        job->next = obj->active;
        obj->active = job;
        pss_job_finish(w, job);
        return;
    }

    if (job->is_write && obj->cache.n > 0) {
        /* the spans' blocks, not the hull: interleaved writers' batches
         * span each other's blocks, which stay kept (kept again when
         * written) */
        for (size_t i = 0; i < job->nspans;) {
            uint64_t lo = job->spans[i].off, hi = lo + job->spans[i].len;
            for (i++; i < job->nspans && job->spans[i].off == hi; i++) {
                hi += job->spans[i].len;
            }
            pss_cache_drop(w, &obj->cache, lo, hi);
        }
    }
    pss_job_extend(w, job);
    job->failed_base = obj->failed_writes;
    job->next = obj->active;
    obj->active = job;
    if (job->nbatches > 1) {
        PSS_STAT_ADD(w, merged_batches, job->nbatches);
    }
    if (job->is_write && pss_job_multi_client(job)) {
        PSS_STAT_ADD(w, merged_writers, 1);
    }
    pss_job_answer_early(w, job, now);
    /* One extra count held by this loop, so that spans failing at once
     * cannot finish the job before every span has been looked at. */
    job->spans_left = job->nspans + 1;
    for (size_t i = 0; i < job->nspans; i++) {
        pss_span_io_t *sp = &job->spans[i];
        if (sp->staged) {
            pss_span_stage(w, sp, now, 1);
            staged = 1;
            job->spans_left--;
            continue;
        }
        if (!job->is_write && (pss_span_lend(w, job, sp) || pss_span_hit(w, job, sp))) {
            pss_job_span_done(w, sp, (long)sp->len);
            continue;
        }
        if (pss_span_direct(s, sp, job->pieces)) {
            sp->buf = job->pieces[sp->first_piece].mem;
            sp->own_buf = 0;
        } else if (pss_span_in_cache(w, job, sp)) {
            sp->own_buf = 0;
        } else {
            sp->buf = pss_buf_get(w, sp->len, s->mem_align, &sp->buf_cap);
            if (sp->buf == NULL) {
                ps_error("worker %u: no memory for a %" PRIu64 "-byte I/O buffer", w->index,
                         sp->len);
                job->status = PS_ERR_NO_MEMORY;
                job->spans_left--;
                continue;
            }
            sp->own_buf = 1;
        }
        if (job->is_write && sp->holes && pss_span_prefill(sp, phys, 1)) {
            sp->holes = 0; /* its old bytes are in the buffer: no read */
        }
        if (job->is_write && !sp->holes) {
            if (sp->own_buf || sp->gran != NULL) {
                pss_span_fill(sp);
            }
            sp->writing = 1;
        } else {
            sp->writing = 0; /* read, or the read of a read-modify-write */
        }
        pss_aio_submit(w, sp);
    }
    /* answered before the flush it completes copies the blocks out; the
     * object's queue moves on after the flush starts (pss_obj_schedule) */
    pss_job_t *flush = staged ? pss_job_flush_whole(w, job) : NULL;
    if (--job->spans_left == 0) {
        pss_job_finish(w, job);
    }
    if (flush != NULL) {
        pss_flush_start(w, flush);
    }
    pss_aio_flush(w);
}

/* A job reading obj's bytes [lo, hi) (aligned, at most max_io) into the
 * cache, which overlapping reads wait for (pss_job_conflicts). 1: started;
 * 0: not (no memory, or a write of those bytes runs). */
static int pss_ra_job(pss_worker_t *w, pss_object_t *obj, uint64_t lo, uint64_t hi)
{
    pss_job_t *job = calloc(1, sizeof(*job));
    pss_span_io_t *sp;

    if (job == NULL || (sp = job->spans = calloc(1, sizeof(*sp))) == NULL) {
        free(job);
        return 0;
    }
    job->obj = obj;
    job->read_ahead = 1;
    job->align = w->server->align;
    job->nspans = 1;
    sp->job = job;
    sp->off = lo;
    sp->len = hi - lo;
    if (pss_job_conflicts(job)) {
        pss_job_free(w, job);
        return 0;
    }
    if (lo % w->server->mem_align == 0) { /* (granules are aligned to 1 MiB) */
        sp->buf = pss_cache_fill(w, &obj->cache, lo, hi - lo, &sp->gran);
    }
    if (sp->buf == NULL) { /* across granules, or one is lent: read, then copy */
        sp->buf = pss_buf_get(w, sp->len, w->server->mem_align, &sp->buf_cap);
        sp->own_buf = sp->buf != NULL;
    }
    if (sp->buf == NULL) {
        pss_job_free(w, job);
        return 0;
    }
    job->next = obj->active;
    obj->active = job;
    job->spans_left = 1;
    pss_aio_submit(w, sp);
    pss_aio_flush(w); /* a refused I/O finishes the job here */
    return 1;
}

/* After a read job over [lo, hi): read ahead of the object's stream if
 * pss_ra_note says so, one job per max_io bytes, skipping what the cache
 * holds: each step from its first 64 KiB the cache does not hold (a
 * stream started afresh, its slot taken by another, asks for a window
 * most of which was read ahead already). */
static void pss_read_ahead(pss_worker_t *w, pss_object_t *obj, uint64_t lo, uint64_t hi,
                           unsigned how)
{
    pss_server_t *s = w->server;
    uint64_t step = s->cfg.max_io / s->align * s->align, from, to;
    uint64_t probe = (65536 + s->align - 1) / s->align * s->align;
    unsigned stream;

    if (w->cache == NULL || obj->fd < 0 || step == 0 ||
        !pss_ra_note(&obj->ra, s->cfg.read_ahead, s->align, obj->size, lo, hi, how, &from, &to)) {
        return;
    }
    stream = obj->ra.last; /* (a job finished below may note another read) */
    for (uint64_t o = from; o < to; o += step) {
        uint64_t end = to - o < step ? to : o + step, at = o;
        while (at < end &&
               pss_cache_get(w, &obj->cache, at, end - at < probe ? end - at : probe, NULL)) {
            at += end - at < probe ? end - at : probe;
        }
        if (at == end) {
            continue;
        }
        if (!pss_ra_job(w, obj, at, end)) {
            pss_ra_stopped(&obj->ra, stream, at); /* no memory, or a write runs there */
            return;
        }
        PSS_STAT_ADD(w, read_ahead_bytes, end - at);
    }
}

/* Note a finished read job's reads for the read-ahead (pss_job_read_runs). */
static void pss_job_note_reads(pss_worker_t *w, const pss_job_t *job)
{
    pss_read_run_t *runs;
    size_t n = pss_job_read_runs(job, &runs);

    for (size_t k = 0; k < n; k++) {
        pss_read_ahead(w, job->obj, runs[k].lo, runs[k].hi, runs[k].how);
    }
    free(runs);
}

void pss_job_span_done(pss_worker_t *w, pss_span_io_t *sp, long res)
{
    pss_job_t *job = sp->job;

    if (res < 0) {
        pss_edge_drop(&job->obj->edges); /* what the write left on disk is unknown */
        if (job->status == PS_OK) {
            uint64_t dropped;
            if (ps_log_limit_pass(&w->io_error_log, ps_time_ns(), PSS_LOG_EVERY_NS, &dropped)) {
                errno = (int)-res;
                ps_error("worker %u: %s of %" PRIu64 " bytes at %" PRIu64 " of object %016" PRIx64
                         ": %m (%" PRIu64 " more failed I/Os not logged since the last line)",
                         w->index, sp->writing ? "write" : "read", sp->len, sp->off,
                         job->obj->file_id, dropped);
            }
            job->status = ps_status_from_errno((int)-res);
        }
    } else if (sp->writing && (uint64_t)res == sp->len) {
        pss_edge_note(&job->obj->edges, job->align, sp->off, sp->len, sp->buf);
        if (job->stage != NULL || job->behind) { /* small writes nobody waits for */
            pss_fb_wrote(w, job->obj, sp->len);
        }
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
    if (job->nbatches > 0) { /* a client's job, not a flush or read-ahead */
        pss_share_note_end(job->is_write ? &obj->writers : &obj->share);
    }
    if (job->is_write) {
        if (status == PS_OK) {
            uint64_t span_end = pss_job_disk_end(job);
            if (span_end > obj->phys_size) { /* the extension before it failed */
                obj->phys_size = span_end;
            }
            if (span_end > obj->file_len) {
                obj->file_len = span_end;
            }
            if (job->max_end > obj->size) {
                obj->size = job->max_end;
                pss_obj_size_grew(w, obj, ps_time_ns());
            }
            for (size_t k = 0; k < job->nspans; k++) { /* write-through */
                pss_span_io_t *sp = &job->spans[k];
                if (sp->gran != NULL) { /* written from the cache's memory */
                    pss_cache_filled(w, sp->gran, sp->off, sp->len, 1);
                    sp->gran = NULL;
                } else if (!sp->staged && sp->buf != NULL && pss_span_keep(sp, 0)) {
                    pss_cache_put(w, &obj->cache, sp->off, sp->len, sp->buf);
                }
            }
        } else {
            /* a failed write may have extended the file: keep it consistent */
            struct stat file_st;
            uint64_t end = pss_round_up(pss_job_disk_end(job), job->align);
            if (fstat(obj->fd, &file_st) == 0 && (uint64_t)file_st.st_size > obj->file_len) {
                obj->file_len = (uint64_t)file_st.st_size;
            }
            if (end > obj->phys_size) { /* it may have written some of its bytes */
                obj->phys_size = end < obj->file_len ? end : obj->file_len;
            }
        }
        obj->dirty = 1;
        if ((job->stage != NULL || job->answered) && status != PS_OK) {
            /* nobody waits for this write: OBJ_SYNC and OBJ_FLUSH report it */
            pss_obj_write_failed(w, obj, status);
        }
    } else if (status == PS_OK) {
        /* gather the spans into the replies, with the staged bytes over
         * what the disk holds; zeros past the logical end */
        int shared = pss_share_active(&obj->share);
        for (size_t k = 0; k < job->nspans; k++) {
            pss_span_io_t *sp = &job->spans[k];
            if (!sp->lent && !sp->hit) { /* (the cache's bytes have the stage's) */
                pss_stage_overlay(w->stage, obj, sp->off, sp->len, sp->buf);
            }
            if (sp->gran != NULL) { /* read ahead into the cache itself */
                pss_cache_filled(w, sp->gran, sp->off, sp->len, 1);
                sp->gran = NULL;
            } else if ((sp->buf != NULL || sp->hit) &&
                       (job->read_ahead || sp->lent || pss_span_keep(sp, shared))) {
                sp->kept = 1; /* the stream's read-ahead follows it (pss_read_ahead) */
                if (!sp->shared) {
                    pss_cache_put(w, &obj->cache, sp->off, sp->len, sp->buf);
                }
            }
            for (uint32_t i = 0; i < sp->npieces; i++) { /* none in a read-ahead */
                pss_piece_gather(sp, &job->pieces[sp->first_piece + i], obj->size);
            }
        }
    }

    for (uint32_t b = 0; b < job->nbatches; b++) {
        pss_req_t *req = job->batches[b];
        ps_io_rep_t rep = {req->body.io.payload_len, obj->size, {job->disk_bytes}};
        if (job->answered) {
            pss_req_done(req);
        } else if (status != PS_OK) {
            pss_reply(req, status, NULL, 0, NULL, 0, 0);
        } else if (job->is_write) {
            ps_io_rep_t wrep = pss_write_rep(job, req); /* as an early answer's */
            pss_reply(req, PS_OK, &wrep, sizeof(wrep), NULL, 0, 0);
        } else {
            uint8_t *buf = req->reply_buf;
            req->reply_buf = NULL;
            pss_reply(req, PS_OK, &rep, sizeof(rep), buf, req->body.io.payload_len, req->reply_cap);
        }
    }
    if (!job->is_write && !job->read_ahead && status == PS_OK) {
        pss_job_note_reads(w, job); /* (unlinked from obj->active above) */
    }
    pss_job_free(w, job);
    obj->blocked = 0;
    pss_obj_schedule(w, obj);
}

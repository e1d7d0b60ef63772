/*
 * psc_io.c: list I/O (write_list/read_list and their nonblocking forms).
 *
 * Splitting. The caller's thread cuts every file region at stripe
 * boundaries (ps_layout_map) into pieces {object offset, length, offset in
 * the caller's memory stream}, appended to one list per stripe target in the
 * caller's order. Keeping that order per target is what makes "a later
 * region wins" hold for overlapping writes: overlapping bytes always map to
 * the same target, and a target's batches carry its pieces in order.
 *
 * Batching and pipelining. The progress thread packs each target's pieces
 * into batches (one OBJ_WRITE/OBJ_READ each) of at most buffer_size payload
 * bytes and max_regions regions, merging pieces that are adjacent in the
 * object into one region, and keeps up to buffer_count batches per target in
 * flight: when a batch's reply arrives, the next one of that target is built
 * and sent from the progress thread, so a nonblocking request moves while
 * the caller computes. If a target's pieces overlap each other, its batches
 * of a write go one at a time, because the server only orders regions within
 * a batch (and batches that arrive together), not across batches in flight.
 *
 * Copies. UCX 1.13 accepts IOV datatypes on ucp_am_send_nbx and
 * ucp_am_recv_data_nbx (test_ucp_am_nbx_dts covers contig/IOV/generic), but
 * with its default protocols (UCX_PROTO_ENABLE=n) a rendezvous with an IOV
 * on either side always moves the data as 8 KiB bcopy active messages
 * (ucp_rndv_progress_am_bcopy): one copy through UCX buffers and many small
 * messages, while a contiguous buffer gets 64 KiB zero-copy fragments (TCP)
 * or RMA. Measured on TCP loopback, staging in one buffer made large writes
 * about 2x and scattered reads 3.5x faster. So: a write batch is described
 * by an IOV (its region array, then the caller's memory, adjacent pieces
 * merged) and sent as is when small, but packed into one reused staging
 * buffer when its payload reaches bounce_threshold; a read reply lands
 * directly in the caller's memory when the batch maps to one piece of it
 * (contig, no copy), is copied from the UCX buffer when it came eagerly,
 * and is staged and scattered when it comes by rendezvous into several
 * pieces. bounce_threshold=0 keeps every transfer on the IOV path (for UCX
 * versions whose IOV rendezvous is zero-copy).
 *
 * Reads and the file size. Bytes past an object's end read as zeros, and
 * each reply says its object's size. If every piece lay below its object's
 * size, every requested byte is below the file size and *nread is the
 * request's length; otherwise we OBJ_STAT every target once at the end and
 * count the requested bytes below the file size.
 */
#include <stdlib.h>
#include <string.h>

#include "ps_log.h"
#include "ps_status.h"
#include "psc_internal.h"

typedef struct psc_piece {
    uint64_t obj_off;    /* bytes, in the target's object */
    uint64_t len;        /* bytes */
    uint64_t stream_off; /* bytes, in the caller's memory stream */
} psc_piece_t;

typedef struct psc_target {
    uint32_t k;      /* stripe target */
    uint32_t server; /* cluster index */
    psc_piece_t *pieces;
    size_t npieces, cap;
    size_t cur;       /* next piece to batch */
    uint64_t cur_off; /* bytes of pieces[cur] already batched */
    unsigned inflight;
    unsigned max_inflight;
} psc_target_t;

struct pstripe_request {
    psc_cmd_t start;
    psc_call_t call;
    pstripe_fs_t *fs;
    int is_write;
    uint64_t file_id;
    ps_layout_t layout;
    /* caller's memory, as one stream */
    struct iovec *mem;
    size_t nmem;
    uint64_t *mem_off; /* nmem + 1 prefix sums */
    /* regions (kept for reads, to count bytes below the file size) */
    pstripe_region_t *regions;
    size_t nregions;
    uint64_t total;
    /* per stripe target */
    psc_target_t *targets;
    uint32_t ntargets;
    /* tunables, copied at start */
    uint64_t buffer_size;
    uint32_t buffer_count;
    uint32_t max_regions;
    uint64_t bounce_threshold;
    /* progress-thread state */
    unsigned inflight;
    int status;
    char msg[PSC_MSG_MAX];
    int need_stat;
    int stat_started;
    unsigned stat_pending;
    psc_op_t *stat_ops;
    ps_obj_rep_t *stat_reps;
    uint64_t bytes; /* result */
};

typedef struct psc_batch {
    psc_op_t op;
    pstripe_request_t *io;
    psc_target_t *t;
    ps_io_req_t req;
    ps_io_rep_t rep;
    ps_region_t *regions;
    uint32_t nregions;
    ucp_dt_iov_t *iov; /* write: [0] = regions; read: memory only */
    size_t niov, iov_cap;
    uint64_t payload;
    uint64_t max_end; /* largest region end in the object */
    void *bounce;     /* write: regions + payload staged contiguously */
    size_t bounce_cap;
} psc_batch_t;

/* --- setup (caller thread) ------------------------------------------------------ */

/*
 * Piece arrays are kept by the file system object and reused: a call with
 * 131,072 regions fills 3 MiB of pieces, and a fresh array each time meant
 * a page fault per 4 KiB and a realloc copy at every doubling (perf: 17% of
 * a 2-process 8-byte-region write in psc_io_create, nearly all of it the
 * first stores into new pages, and as much again in the kernel).
 */
static void psc_pieces_take(pstripe_fs_t *fs, psc_target_t *t)
{
    unsigned best = PSC_PIECE_CACHE;

    for (unsigned i = 0; i < fs->npiece_cache; i++) {
        if (best == PSC_PIECE_CACHE || fs->piece_cache[i].cap > fs->piece_cache[best].cap) {
            best = i;
        }
    }
    if (best < PSC_PIECE_CACHE) {
        t->pieces = fs->piece_cache[best].p;
        t->cap = fs->piece_cache[best].cap;
        fs->piece_cache_bytes -= t->cap * sizeof(psc_piece_t);
        fs->piece_cache[best] = fs->piece_cache[--fs->npiece_cache];
    }
}

static void psc_pieces_give(pstripe_fs_t *fs, psc_target_t *t)
{
    if (t->pieces == NULL) {
        return;
    }
    size_t bytes = t->cap * sizeof(psc_piece_t);
    if (fs->npiece_cache < PSC_PIECE_CACHE &&
        fs->piece_cache_bytes + bytes <= PSC_PIECE_CACHE_BYTES) {
        fs->piece_cache[fs->npiece_cache].p = t->pieces;
        fs->piece_cache[fs->npiece_cache].cap = t->cap;
        fs->npiece_cache++;
        fs->piece_cache_bytes += bytes;
    } else {
        free(t->pieces);
    }
    t->pieces = NULL;
}

static void psc_io_free(pstripe_request_t *io)
{
    if (io->targets != NULL) {
        pthread_mutex_lock(&io->fs->lock);
        for (uint32_t k = 0; k < io->ntargets; k++) {
            psc_pieces_give(io->fs, &io->targets[k]);
        }
        pthread_mutex_unlock(&io->fs->lock);
    }
    free(io->targets);
    free(io->mem);
    free(io->mem_off);
    free(io->regions);
    free(io->stat_ops);
    free(io->stat_reps);
    free(io);
}

static int psc_target_add(psc_target_t *t, uint64_t obj_off, uint64_t len, uint64_t stream_off)
{
    psc_piece_t *last = t->npieces ? &t->pieces[t->npieces - 1] : NULL;

    if (last != NULL && last->obj_off + last->len == obj_off &&
        last->stream_off + last->len == stream_off) {
        last->len += len;
        return PS_OK;
    }
    if (t->npieces == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        psc_piece_t *p = realloc(t->pieces, cap * sizeof(*p));

        if (p == NULL) {
            return PS_ERR_NO_MEMORY;
        }
        t->pieces = p;
        t->cap = cap;
    }
    t->pieces[t->npieces].obj_off = obj_off;
    t->pieces[t->npieces].len = len;
    t->pieces[t->npieces].stream_off = stream_off;
    t->npieces++;
    return PS_OK;
}

static int psc_piece_cmp(const void *a, const void *b)
{
    const psc_piece_t *x = a, *y = b;

    return x->obj_off < y->obj_off ? -1 : x->obj_off > y->obj_off;
}

/* 1 if some pieces of the target overlap in the object. */
static int psc_target_overlaps(const psc_target_t *t)
{
    psc_piece_t *sorted;
    int overlap = 0;
    size_t i;

    for (i = 1; i < t->npieces; i++) {
        if (t->pieces[i].obj_off < t->pieces[i - 1].obj_off + t->pieces[i - 1].len) {
            break;
        }
    }
    if (i >= t->npieces) {
        return 0; /* ascending and disjoint: the common case, no sort */
    }
    sorted = malloc(t->npieces * sizeof(*sorted));
    if (sorted == NULL) {
        return 1; /* serializing is always correct */
    }
    memcpy(sorted, t->pieces, t->npieces * sizeof(*sorted));
    qsort(sorted, t->npieces, sizeof(*sorted), psc_piece_cmp);
    for (i = 1; i < t->npieces && !overlap; i++) {
        overlap = sorted[i].obj_off < sorted[i - 1].obj_off + sorted[i - 1].len;
    }
    free(sorted);
    return overlap;
}

static int psc_io_create(pstripe_file_t *file, int is_write, const pstripe_region_t *regions,
                         size_t nregions, const struct iovec *mem, size_t nmem,
                         pstripe_request_t **io_p)
{
    pstripe_fs_t *fs;
    pstripe_request_t *io;
    uint64_t total = 0, mem_total = 0, stream = 0;
    int status;

    if (file == NULL) {
        return psc_error(PS_ERR_INVALID, "file is NULL");
    }
    fs = file->fs;
    if (is_write && !(file->flags & PSTRIPE_WRONLY)) {
        return psc_error(PS_ERR_ACCESS, "cannot write %s: opened read-only", file->path);
    }
    if (!is_write && !(file->flags & PSTRIPE_RDONLY)) {
        return psc_error(PS_ERR_ACCESS, "cannot read %s: opened write-only", file->path);
    }
    if ((nregions > 0 && regions == NULL) || (nmem > 0 && mem == NULL)) {
        return psc_error(PS_ERR_INVALID, "region or memory array is NULL");
    }
    for (size_t i = 0; i < nregions; i++) {
        if (regions[i].offset + regions[i].length < regions[i].offset ||
            total + regions[i].length < total) {
            return psc_error(PS_ERR_INVALID, "region %zu (offset %llu, length %llu) overflows", i,
                             (unsigned long long)regions[i].offset,
                             (unsigned long long)regions[i].length);
        }
        total += regions[i].length;
    }
    for (size_t i = 0; i < nmem; i++) {
        if (mem[i].iov_len > 0 && mem[i].iov_base == NULL) {
            return psc_error(PS_ERR_INVALID, "memory piece %zu is NULL", i);
        }
        mem_total += mem[i].iov_len;
    }
    if (mem_total != total) {
        return psc_error(PS_ERR_INVALID, "memory holds %llu bytes but the regions %llu",
                         (unsigned long long)mem_total, (unsigned long long)total);
    }

    io = calloc(1, sizeof(*io));
    if (io == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    psc_call_init(&io->call);
    io->fs = fs;
    io->is_write = is_write;
    io->file_id = file->info.file_id;
    io->layout = file->layout;
    io->total = total;
    pthread_mutex_lock(&fs->lock);
    io->buffer_size = fs->cfg.buffer_size;
    io->buffer_count = (uint32_t)fs->cfg.buffer_count;
    io->max_regions = (uint32_t)fs->cfg.max_regions;
    io->bounce_threshold = fs->cfg.bounce_threshold;
    pthread_mutex_unlock(&fs->lock);
    if (total == 0) {
        *io_p = io;
        return PS_OK;
    }

    io->mem = malloc(nmem * sizeof(*io->mem));
    io->mem_off = malloc((nmem + 1) * sizeof(*io->mem_off));
    io->ntargets = io->layout.stripe_count;
    io->targets = calloc(io->ntargets, sizeof(*io->targets));
    if (io->mem == NULL || io->mem_off == NULL || io->targets == NULL) {
        status = psc_error(PS_ERR_NO_MEMORY, "no memory");
        goto err_free;
    }
    memcpy(io->mem, mem, nmem * sizeof(*io->mem));
    io->nmem = nmem;
    io->mem_off[0] = 0;
    for (size_t i = 0; i < nmem; i++) {
        io->mem_off[i + 1] = io->mem_off[i] + mem[i].iov_len;
    }
    if (!is_write) {
        io->regions = malloc(nregions * sizeof(*io->regions));
        if (io->regions == NULL) {
            status = psc_error(PS_ERR_NO_MEMORY, "no memory");
            goto err_free;
        }
        memcpy(io->regions, regions, nregions * sizeof(*io->regions));
        io->nregions = nregions;
    }
    pthread_mutex_lock(&fs->lock);
    for (uint32_t k = 0; k < io->ntargets; k++) {
        io->targets[k].k = k;
        io->targets[k].server = ps_layout_server(&io->layout, k, fs->nservers);
        psc_pieces_take(fs, &io->targets[k]);
    }
    pthread_mutex_unlock(&fs->lock);

    /* The stripe of the last piece [s_lo, s_hi) on target s_k, whose first
     * byte is at s_obj in the object: the next regions usually fall in it,
     * and then need no division. */
    uint64_t s_lo = 0, s_hi = 0, s_obj = 0;
    uint32_t s_k = 0;
    for (size_t i = 0; i < nregions; i++) {
        uint64_t off = regions[i].offset, left = regions[i].length;

        while (left > 0) {
            uint32_t k;
            uint64_t obj_off, n;

            if (off >= s_lo && off < s_hi) {
                k = s_k;
                obj_off = s_obj + (off - s_lo);
                n = s_hi - off;
            } else {
                n = ps_layout_map(&io->layout, off, &k, &obj_off);
                s_hi = off + n;
                s_lo = s_hi - io->layout.stripe_size;
                s_obj = obj_off - (off - s_lo);
                s_k = k;
            }
            if (n > left) {
                n = left;
            }
            if (psc_target_add(&io->targets[k], obj_off, n, stream) != PS_OK) {
                status = psc_error(PS_ERR_NO_MEMORY, "no memory");
                goto err_free;
            }
            off += n;
            stream += n;
            left -= n;
        }
    }
    for (uint32_t k = 0; k < io->ntargets; k++) {
        psc_target_t *t = &io->targets[k];

        t->max_inflight = io->buffer_count;
        if (is_write && t->npieces > 1 && psc_target_overlaps(t)) {
            t->max_inflight = 1;
        }
    }
    *io_p = io;
    return PS_OK;

err_free:
    psc_io_free(io);
    return status;
}

/* --- batches (progress thread) ---------------------------------------------------- */

static int psc_batch_add_iov(psc_batch_t *b, void *addr, size_t len)
{
    if (b->niov > 0) {
        ucp_dt_iov_t *last = &b->iov[b->niov - 1];

        if ((char *)last->buffer + last->length == (char *)addr &&
            b->niov > (b->io->is_write ? 1u : 0u)) {
            last->length += len;
            return PS_OK;
        }
    }
    if (b->niov == b->iov_cap) {
        size_t cap = b->iov_cap ? b->iov_cap * 2 : 16;
        ucp_dt_iov_t *iov = realloc(b->iov, cap * sizeof(*iov));

        if (iov == NULL) {
            return PS_ERR_NO_MEMORY;
        }
        b->iov = iov;
        b->iov_cap = cap;
    }
    b->iov[b->niov].buffer = addr;
    b->iov[b->niov].length = len;
    b->niov++;
    return PS_OK;
}

/* Append the caller's memory for stream bytes [s, s + len) to the batch. */
static int psc_batch_add_mem(psc_batch_t *b, uint64_t s, uint64_t len)
{
    pstripe_request_t *io = b->io;
    size_t lo = 0, hi = io->nmem;

    /* the memory piece i with mem_off[i] <= s < mem_off[i + 1] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (io->mem_off[mid + 1] <= s) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    for (size_t i = lo; len > 0 && i < io->nmem; i++) {
        uint64_t in = s - io->mem_off[i];
        uint64_t n = io->mem[i].iov_len - in;

        if (io->mem[i].iov_len == 0) {
            continue;
        }
        if (n > len) {
            n = len;
        }
        if (psc_batch_add_iov(b, (char *)io->mem[i].iov_base + in, n) != PS_OK) {
            return PS_ERR_NO_MEMORY;
        }
        s += n;
        len -= n;
    }
    return PS_OK;
}

static void psc_batch_free(pstripe_fs_t *fs, psc_batch_t *b)
{
    psc_bounce_put(fs, b->bounce, b->bounce_cap);
    free(b->regions);
    free(b->iov);
    free(b);
}

static void psc_io_batch_done(pstripe_fs_t *fs, psc_op_t *op);

/* Release of a batch whose op completed before UCX let go of it. */
static void psc_batch_released(pstripe_fs_t *fs, psc_op_t *op)
{
    psc_batch_free(fs, op->arg);
}

/* Build the next batch of target t, or NULL (no memory: io->status set). */
static psc_batch_t *psc_batch_build(pstripe_fs_t *fs, pstripe_request_t *io, psc_target_t *t)
{
    psc_batch_t *b;
    size_t reg_cap = 0;

    b = calloc(1, sizeof(*b));
    if (b == NULL) {
        goto err_nomem;
    }
    b->io = io;
    b->t = t;
    if (io->is_write && psc_batch_add_iov(b, NULL, 0) != PS_OK) { /* [0]: regions, set below */
        goto err_free;
    }
    while (t->cur < t->npieces && b->payload < io->buffer_size) {
        psc_piece_t *p = &t->pieces[t->cur];
        uint64_t take = p->len - t->cur_off;
        uint64_t obj = p->obj_off + t->cur_off;
        ps_region_t *last = b->nregions ? &b->regions[b->nregions - 1] : NULL;

        if (take > io->buffer_size - b->payload) {
            take = io->buffer_size - b->payload;
        }
        if (last != NULL && last->off + last->len == obj) {
            last->len += take;
        } else {
            if (b->nregions == io->max_regions) {
                break;
            }
            if (b->nregions == reg_cap) {
                size_t cap = reg_cap ? reg_cap * 2 : 16;
                ps_region_t *r;

                if (cap > io->max_regions) {
                    cap = io->max_regions;
                }
                r = realloc(b->regions, cap * sizeof(*r));
                if (r == NULL) {
                    goto err_free;
                }
                b->regions = r;
                reg_cap = cap;
            }
            b->regions[b->nregions].off = obj;
            b->regions[b->nregions].len = take;
            b->nregions++;
        }
        if (psc_batch_add_mem(b, p->stream_off + t->cur_off, take) != PS_OK) {
            goto err_free;
        }
        if (obj + take > b->max_end) {
            b->max_end = obj + take;
        }
        b->payload += take;
        t->cur_off += take;
        if (t->cur_off == p->len) {
            t->cur++;
            t->cur_off = 0;
        }
    }

    b->req.file_id = io->file_id;
    b->req.payload_len = b->payload;
    b->req.nregions = b->nregions;
    b->req.flags = 0;
    psc_op_init(&b->op, t->server, io->is_write ? PS_MSG_OBJ_WRITE : PS_MSG_OBJ_READ, &b->req,
                sizeof(b->req));
    b->op.route = PSC_ROUTE_OBJECT;
    b->op.route_file_id = io->file_id;
    b->op.done_cb = psc_io_batch_done;
    b->op.release_cb = psc_batch_released;
    b->op.arg = b;
    b->op.rep_body = &b->rep;
    b->op.rep_body_len = sizeof(b->rep);
    if (io->is_write) {
        b->iov[0].buffer = b->regions;
        b->iov[0].length = b->nregions * sizeof(ps_region_t);
        b->op.send_buf = b->iov;
        b->op.send_count = b->niov;
        b->op.send_iov = 1;
        b->op.send_user_mem = 1;
        if (io->bounce_threshold != 0 && b->payload >= io->bounce_threshold) {
            /* UCX 1.13 sends IOV rendezvous data through 8 KiB copies; one
             * contiguous buffer goes in 64 KiB zero-copy fragments or RMA */
            size_t len = b->iov[0].length + b->payload;
            char *p = psc_bounce_get(fs, len, &b->bounce_cap);

            if (p == NULL) {
                goto err_free;
            }
            b->bounce = p;
            for (size_t i = 0; i < b->niov; i++) {
                memcpy(p, b->iov[i].buffer, b->iov[i].length);
                p += b->iov[i].length;
            }
            b->op.send_buf = b->bounce;
            b->op.send_count = len;
            b->op.send_iov = 0;
            b->op.send_user_mem = 0;
        }
    } else {
        b->op.send_buf = b->regions;
        b->op.send_count = b->nregions * sizeof(ps_region_t);
        b->op.recv_mode = PSC_RECV_BUF;
        b->op.recv_len = b->payload;
        b->op.stage_min = io->bounce_threshold;
        if (b->niov == 1) {
            b->op.recv_buf = b->iov[0].buffer;
            b->op.recv_count = b->iov[0].length;
            b->op.recv_iov = 0;
        } else {
            b->op.recv_buf = b->iov;
            b->op.recv_count = b->niov;
            b->op.recv_iov = 1;
        }
    }
    return b;

err_free:
    psc_batch_free(fs, b);
err_nomem:
    if (io->status == PS_OK) {
        io->status = PS_ERR_NO_MEMORY;
        snprintf(io->msg, sizeof(io->msg), "no memory for a batch");
    }
    return NULL;
}

/* --- state machine (progress thread) ------------------------------------------------ */

static void psc_io_fail(pstripe_request_t *io, int status, const char *msg)
{
    if (io->status == PS_OK) {
        io->status = status;
        snprintf(io->msg, sizeof(io->msg), "%s", msg);
    }
}

static void psc_io_complete(pstripe_fs_t *fs, pstripe_request_t *io)
{
    io->bytes = io->status == PS_OK ? io->bytes : 0;
    psc_call_complete(fs, &io->call, io->status, io->msg);
}

static void psc_io_stat_done(pstripe_fs_t *fs, psc_op_t *op)
{
    pstripe_request_t *io = op->arg;
    uint64_t size = 0, nread = 0;

    if (op->status != PS_OK) {
        psc_io_fail(io, op->status, op->msg);
    }
    if (--io->stat_pending > 0) {
        return;
    }
    if (io->status == PS_OK) {
        for (uint32_t k = 0; k < io->ntargets; k++) {
            uint64_t fsize = ps_layout_file_size(&io->layout, k, io->stat_reps[k].size);

            if (fsize > size) {
                size = fsize;
            }
        }
        for (size_t i = 0; i < io->nregions; i++) {
            const pstripe_region_t *r = &io->regions[i];

            if (r->offset < size) {
                uint64_t end = r->offset + r->length;

                nread += (end < size ? end : size) - r->offset;
            }
        }
        io->bytes = nread;
    }
    psc_io_complete(fs, io);
}

/* Stat every target to learn the file size (reads that reached an object's end). */
static void psc_io_start_stat(pstripe_fs_t *fs, pstripe_request_t *io)
{
    io->stat_started = 1;
    io->stat_ops = calloc(io->ntargets, sizeof(*io->stat_ops));
    io->stat_reps = calloc(io->ntargets, sizeof(*io->stat_reps));
    if (io->stat_ops == NULL || io->stat_reps == NULL) {
        psc_io_fail(io, PS_ERR_NO_MEMORY, "no memory");
        psc_io_complete(fs, io);
        return;
    }
    io->stat_pending = io->ntargets;
    for (uint32_t k = 0; k < io->ntargets; k++) {
        ps_obj_req_t req = {.file_id = io->file_id, .size = 0};
        psc_op_t *op = &io->stat_ops[k];

        psc_op_init(op, io->targets[k].server, PS_MSG_OBJ_STAT, &req, sizeof(req));
        op->route = PSC_ROUTE_OBJECT;
        op->route_file_id = io->file_id;
        op->rep_body = &io->stat_reps[k];
        op->rep_body_len = sizeof(io->stat_reps[k]);
        op->done_cb = psc_io_stat_done;
        op->arg = io;
        psc_op_submit(fs, op);
    }
}

/* Send what the pipeline allows; finish when nothing is left in flight. */
static void psc_io_pump(pstripe_fs_t *fs, pstripe_request_t *io)
{
    int left = 0;

    for (uint32_t k = 0; k < io->ntargets && io->status == PS_OK; k++) {
        psc_target_t *t = &io->targets[k];

        while (io->status == PS_OK && t->inflight < t->max_inflight && t->cur < t->npieces) {
            psc_batch_t *b = psc_batch_build(fs, io, t);

            if (b == NULL) {
                break;
            }
            t->inflight++;
            io->inflight++;
            psc_op_submit(fs, &b->op);
        }
        if (t->cur < t->npieces) {
            left = 1;
        }
    }
    if (io->inflight > 0 || (left && io->status == PS_OK)) {
        return;
    }
    if (io->status == PS_OK && !io->is_write && io->need_stat) {
        psc_io_start_stat(fs, io);
        return;
    }
    if (io->status == PS_OK) {
        io->bytes = io->total;
    }
    psc_io_complete(fs, io);
}

static void psc_io_batch_done(pstripe_fs_t *fs, psc_op_t *op)
{
    psc_batch_t *b = op->arg;
    pstripe_request_t *io = b->io;
    char msg[PSC_MSG_MAX];

    b->t->inflight--;
    io->inflight--;
    if (op->status != PS_OK) {
        psc_io_fail(io, op->status, op->msg);
    } else if (b->rep.bytes != b->payload) {
        snprintf(msg, sizeof(msg), "server %s %s %llu of %llu bytes",
                 fs->servers[b->t->server].addr, io->is_write ? "wrote" : "read",
                 (unsigned long long)b->rep.bytes, (unsigned long long)b->payload);
        psc_io_fail(io, io->is_write ? PS_ERR_IO : PS_ERR_PROTO, msg);
    } else if (!io->is_write && b->max_end > b->rep.obj_size) {
        io->need_stat = 1;
    }
    if (op->send_req == NULL && op->recv_req == NULL) {
        psc_batch_free(fs, b);
    } /* else detached: psc_batch_released() frees it when UCX lets go */
    psc_io_pump(fs, io);
}

static void psc_io_start_cmd(pstripe_fs_t *fs, psc_cmd_t *cmd)
{
    psc_io_pump(fs, ucs_container_of(cmd, pstripe_request_t, start));
}

/* --- API ------------------------------------------------------------------------ */

static int psc_io_start(pstripe_file_t *file, int is_write, const pstripe_region_t *regions,
                        size_t nregions, const struct iovec *mem, size_t nmem,
                        pstripe_request_t **req_p)
{
    pstripe_request_t *io;
    int status;

    if (req_p == NULL) {
        return psc_error(PS_ERR_INVALID, "req_p is NULL");
    }
    status = psc_io_create(file, is_write, regions, nregions, mem, nmem, &io);
    if (status != PS_OK) {
        return status;
    }
    if (io->total == 0) {
        io->call.pending = 0;
        io->call.done = 1;
    } else {
        io->start.fn = psc_io_start_cmd;
        psc_post(io->fs, &io->start);
    }
    *req_p = io;
    return PS_OK;
}

int pstripe_iwrite_list(pstripe_file_t *file, const pstripe_region_t *regions, size_t nregions,
                        const struct iovec *mem, size_t nmem, pstripe_request_t **req_p)
{
    return psc_io_start(file, 1, regions, nregions, mem, nmem, req_p);
}

int pstripe_iread_list(pstripe_file_t *file, const pstripe_region_t *regions, size_t nregions,
                       const struct iovec *mem, size_t nmem, pstripe_request_t **req_p)
{
    return psc_io_start(file, 0, regions, nregions, mem, nmem, req_p);
}

int pstripe_request_test(pstripe_request_t *req, int *done)
{
    if (req == NULL || done == NULL) {
        return psc_error(PS_ERR_INVALID, "req or done is NULL");
    }
    pthread_mutex_lock(&req->fs->lock);
    *done = req->call.done;
    pthread_mutex_unlock(&req->fs->lock);
    return PS_OK;
}

int pstripe_request_wait(pstripe_request_t *req, uint64_t *bytes)
{
    pstripe_fs_t *fs;
    int status;

    if (req == NULL) {
        return psc_error(PS_ERR_INVALID, "req is NULL");
    }
    fs = req->fs;
    pthread_mutex_lock(&fs->lock);
    while (!req->call.done) {
        pthread_cond_wait(&fs->cond, &fs->lock);
    }
    pthread_mutex_unlock(&fs->lock);
    status = req->call.status;
    if (status != PS_OK) {
        psc_set_error("%s", req->call.msg[0] ? req->call.msg : ps_status_string(status));
    } else if (bytes != NULL) {
        *bytes = req->bytes;
    }
    psc_io_free(req);
    return status;
}

int pstripe_write_list(pstripe_file_t *file, const pstripe_region_t *regions, size_t nregions,
                       const struct iovec *mem, size_t nmem)
{
    pstripe_request_t *req;
    int status;

    status = psc_io_start(file, 1, regions, nregions, mem, nmem, &req);
    if (status != PS_OK) {
        return status;
    }
    return pstripe_request_wait(req, NULL);
}

int pstripe_read_list(pstripe_file_t *file, const pstripe_region_t *regions, size_t nregions,
                      const struct iovec *mem, size_t nmem, uint64_t *nread)
{
    pstripe_request_t *req;
    int status;

    status = psc_io_start(file, 0, regions, nregions, mem, nmem, &req);
    if (status != PS_OK) {
        return status;
    }
    return pstripe_request_wait(req, nread);
}

int pstripe_pwrite(pstripe_file_t *file, const void *buf, uint64_t len, uint64_t offset)
{
    pstripe_region_t region = {.offset = offset, .length = len};
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

    return pstripe_write_list(file, &region, 1, &iov, 1);
}

int pstripe_pread(pstripe_file_t *file, void *buf, uint64_t len, uint64_t offset, uint64_t *nread)
{
    pstripe_region_t region = {.offset = offset, .length = len};
    struct iovec iov = {.iov_base = buf, .iov_len = len};

    return pstripe_read_list(file, &region, 1, &iov, 1, nread);
}

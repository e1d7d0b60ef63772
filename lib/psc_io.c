/*
 * psc_io.c: list I/O (write_list/read_list and their nonblocking forms),
 * the caller's side: checking the arguments, cutting the regions into
 * pieces per stripe target, and waiting. psc_batch.c moves the pieces.
 *
 * Splitting. The caller's thread cuts every file region at stripe
 * boundaries (ps_layout_map) into pieces, appended to one list per stripe
 * target in the caller's order. A piece is a strided run {object offset,
 * length, stride, count, offset in the caller's memory stream}: the regions
 * of a vector view that fall in one stripe are one piece, which the
 * progress thread batches as one run (psc_batch.c) instead of region by
 * region. Keeping the caller's order per target is what makes "a later
 * region wins" hold for overlapping writes: overlapping bytes always map to
 * the same target, and a target's batches carry its pieces in order.
 */
#include <stdlib.h>
#include <string.h>

#include "ps_status.h"
#include "psc_call.h"
#include "psc_batch.h"
#include "psc_request.h"
#include "psc_meta.h"
#include "psc_wait.h"

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
    free(io->args_copy);
    free(io->stat_ops);
    free(io->stat_reps);
    if (io->seen != NULL) {
        psc_file_seen_drop(io->seen);
    }
    free(io);
}

/* Append a region to the target's pieces: it continues the last piece's
 * last region (object and stream), or is its next region at the same
 * stride (or, after a single region, at any distance past its end), or
 * starts a piece. */
static ps_status_t psc_target_add(psc_target_t *t, uint64_t obj_off, uint64_t len,
                                  uint64_t stream_off)
{
    psc_piece_t *last = t->npieces ? &t->pieces[t->npieces - 1] : NULL;

    if (last != NULL && last->stream_off + last->count * last->len == stream_off) {
        uint64_t last_off = last->obj_off + (last->count - 1) * last->stride;

        if (last->count == 1 && last_off + last->len == obj_off) {
            last->len += len;
            last->stride = last->len;
            return PS_OK;
        }
        if (last->len == len && obj_off > last_off + len &&
            (last->count == 1 || obj_off == last_off + last->stride)) {
            last->stride = obj_off - last_off;
            last->count++;
            return PS_OK;
        }
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
    t->pieces[t->npieces].stride = len;
    t->pieces[t->npieces].count = 1;
    t->pieces[t->npieces].stream_off = stream_off;
    t->npieces++;
    return PS_OK;
}

/* Append count regions of len bytes at obj_off, stride bytes apart (and
 * count * len bytes of the stream at stream_off): the last piece's next
 * regions at its stride, else psc_target_add's region by region merge for
 * the first, and the rest as a piece of their own or with it. */
static ps_status_t psc_target_add_run(psc_target_t *t, uint64_t obj_off, uint64_t len,
                                      uint64_t stride, uint64_t count, uint64_t stream_off)
{
    psc_piece_t *last;

    if (count == 1 || stride == len) {
        return psc_target_add(t, obj_off, len * count, stream_off);
    }
    if (psc_target_add(t, obj_off, len, stream_off) != PS_OK) {
        return PS_ERR_NO_MEMORY;
    }
    last = &t->pieces[t->npieces - 1];
    if (last->len == len && last->obj_off + last->count * stride == obj_off + stride &&
        (last->count == 1 || last->stride == stride)) {
        last->stride = stride; /* region 0 of the run ended it: the rest follow */
        last->count += count - 1;
        return PS_OK;
    }
    return psc_target_add_run(t, obj_off + stride, len, stride, count - 1, stream_off + len);
}

/* The end of the piece's last region in the object. */
static uint64_t psc_piece_end(const psc_piece_t *p)
{
    return p->obj_off + (p->count - 1) * p->stride + p->len;
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
        if (t->pieces[i].obj_off < psc_piece_end(&t->pieces[i - 1])) {
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
        /* runs whose spans interleave count as overlapping: serializing
         * is always correct */
        overlap = sorted[i].obj_off < psc_piece_end(&sorted[i - 1]);
    }
    free(sorted);
    return overlap;
}

/* Check the arguments of a list I/O; *total = bytes of the regions. */
ps_status_t psc_io_check(pstripe_file_t *file, int is_write, const psc_args_t *args,
                         const struct iovec *mem, size_t nmem, uint64_t *total_p)
{
    uint64_t total = 0, mem_total = 0;

    if (file == NULL) {
        return psc_error(PS_ERR_INVALID, "file is NULL");
    }
    if (is_write && !(file->flags & PSTRIPE_WRONLY)) {
        return psc_error(PS_ERR_ACCESS, "cannot write %s: opened read-only", file->path);
    }
    if (!is_write && !(file->flags & PSTRIPE_RDONLY)) {
        return psc_error(PS_ERR_ACCESS, "cannot read %s: opened write-only", file->path);
    }
    if ((args->flags & ~PSTRIPE_WRITE_BEHIND) != 0) {
        return psc_error(PS_ERR_INVALID, "flags 0x%x: unknown (PSTRIPE_WRITE_BEHIND is 0x%x)",
                         args->flags, PSTRIPE_WRITE_BEHIND);
    }
    if ((args->n > 0 && args->regions == NULL && args->runs == NULL) || (nmem > 0 && mem == NULL)) {
        return psc_error(PS_ERR_INVALID, "region or memory array is NULL");
    }
    for (size_t i = 0; i < args->n; i++) {
        pstripe_run_t r = psc_args_run(args, i);
        uint64_t bytes, last;

        if (r.count == 0 || r.length == 0) {
            continue;
        }
        if (r.offset > INT64_MAX) { /* a negative MPI_Offset */
            return psc_error(PS_ERR_INVALID, "region %zu: negative offset %lld", i,
                             (long long)r.offset);
        }
        if (r.count > 1 && r.stride < r.length) {
            return psc_error(PS_ERR_INVALID, "run %zu: stride %llu under its length %llu", i,
                             (unsigned long long)r.stride, (unsigned long long)r.length);
        }
        if (__builtin_mul_overflow(r.count, r.length, &bytes) ||
            __builtin_mul_overflow(r.count - 1, r.stride, &last) ||
            __builtin_add_overflow(r.offset, last, &last) ||
            __builtin_add_overflow(last, r.length, &last) ||
            __builtin_add_overflow(total, bytes, &total)) {
            return psc_error(PS_ERR_INVALID,
                             "region %zu (offset %llu, length %llu, %llu of them) overflows", i,
                             (unsigned long long)r.offset, (unsigned long long)r.length,
                             (unsigned long long)r.count);
        }
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
    *total_p = total;
    return PS_OK;
}

/* Copy the caller's memory list (with its prefix sums) and, for a read, its
 * regions; give every stripe target a piece array from the cache. */
static ps_status_t psc_io_copy_args(pstripe_request_t *io, const psc_args_t *args,
                                    const struct iovec *mem, size_t nmem)
{
    pstripe_fs_t *fs = io->fs;

    io->mem = malloc(nmem * sizeof(*io->mem));
    io->mem_off = malloc((nmem + 1) * sizeof(*io->mem_off));
    io->ntargets = io->layout.stripe_count;
    io->targets = calloc(io->ntargets, sizeof(*io->targets));
    if (io->mem == NULL || io->mem_off == NULL || io->targets == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    memcpy(io->mem, mem, nmem * sizeof(*io->mem));
    io->nmem = nmem;
    io->mem_off[0] = 0;
    for (size_t i = 0; i < nmem; i++) {
        io->mem_off[i + 1] = io->mem_off[i] + mem[i].iov_len;
    }
    if (!io->is_write) {
        size_t size = args->runs != NULL ? sizeof(*args->runs) : sizeof(*args->regions);
        io->args_copy = malloc(args->n * size);
        if (io->args_copy == NULL) {
            return psc_error(PS_ERR_NO_MEMORY, "no memory");
        }
        memcpy(io->args_copy, args->runs != NULL ? (const void *)args->runs : args->regions,
               args->n * size);
        io->args.n = args->n;
        if (args->runs != NULL) {
            io->args.runs = io->args_copy;
        } else {
            io->args.regions = io->args_copy;
        }
    }
    pthread_mutex_lock(&fs->lock);
    for (uint32_t k = 0; k < io->ntargets; k++) {
        io->targets[k].k = k;
        io->targets[k].server = ps_layout_server(&io->layout, k, fs->nservers);
        psc_pieces_take(fs, &io->targets[k]);
    }
    pthread_mutex_unlock(&fs->lock);
    return PS_OK;
}

/* Where the split is: the stripe of the last piece [lo, hi) on target k,
 * whose first byte is at obj in the object (the next regions usually fall
 * in it, and then need no division), and the bytes of the stream so far. */
typedef struct psc_split {
    uint64_t lo, hi, obj, stream;
    uint32_t k;
} psc_split_t;

/* Move sp to the stripe holding file offset off. */
static void psc_split_seek(const pstripe_request_t *io, psc_split_t *sp, uint64_t off)
{
    if (off < sp->lo || off >= sp->hi) {
        uint64_t obj_off, n = ps_layout_map(&io->layout, off, &sp->k, &obj_off);
        sp->hi = off + n;
        sp->lo = sp->hi - io->layout.stripe_size;
        sp->obj = obj_off - (off - sp->lo);
    }
}

static ps_status_t psc_split_too_large(const pstripe_request_t *io, uint64_t off)
{
    return psc_error(PS_ERR_FILE_TOO_LARGE,
                     "cannot %s at offset %llu: file too large (its stripe object "
                     "would pass %llu bytes, the most a server holds)",
                     io->is_write ? "write" : "read", (unsigned long long)off,
                     (unsigned long long)PS_MAX_OBJ_SIZE);
}

/* Zero the caller's memory for stream bytes [s, s + len). */
static void psc_io_zero(pstripe_request_t *io, uint64_t s, uint64_t len)
{
    for (size_t i = 0; len > 0 && i < io->nmem; i++) {
        if (io->mem_off[i + 1] <= s) {
            continue;
        }
        uint64_t n = io->mem_off[i + 1] - s < len ? io->mem_off[i + 1] - s : len;
        memset((char *)io->mem[i].iov_base + (s - io->mem_off[i]), 0, n);
        s += n;
        len -= n;
    }
}

/* Cut one region into pieces at stripe boundaries. A write past the
 * servers' object limit is refused; a read's bytes there are in no object
 * (holes: zeros, and past the end of file unless another object's bytes
 * lie further on), so they are not asked for, and the file size decides
 * the count (need_stat), as for a read past the end. */
static ps_status_t psc_split_region(pstripe_request_t *io, psc_split_t *sp, uint64_t off,
                                    uint64_t left)
{
    while (left > 0) {
        psc_split_seek(io, sp, off);
        uint64_t obj_off = sp->obj + (off - sp->lo), n = sp->hi - off, keep;
        if (n > left) {
            n = left;
        }
        if (obj_off + n > PS_MAX_OBJ_SIZE && io->is_write) {
            return psc_split_too_large(io, off);
        }
        keep = n;
        if (obj_off + n > PS_MAX_OBJ_SIZE) { /* a read: its part below the limit is read */
            keep = obj_off < PS_MAX_OBJ_SIZE ? PS_MAX_OBJ_SIZE - obj_off : 0;
            psc_io_zero(io, sp->stream + keep, n - keep);
            io->need_stat = 1;
        }
        if (keep > 0 && psc_target_add(&io->targets[sp->k], obj_off, keep, sp->stream) != PS_OK) {
            return psc_error(PS_ERR_NO_MEMORY, "no memory");
        }
        off += n;
        sp->stream += n;
        left -= n;
    }
    return PS_OK;
}

/* Cut one run into pieces: the regions that lie whole in one stripe are one
 * piece (no walk over them), a region across a boundary is cut. */
static ps_status_t psc_split_run(pstripe_request_t *io, psc_split_t *sp, pstripe_run_t r)
{
    for (uint64_t c = 0; c < r.count && r.length > 0;) {
        uint64_t off = r.offset + c * r.stride, n = 1;

        psc_split_seek(io, sp, off);
        if (off + r.length > sp->hi) { /* across the stripe's end */
            ps_status_t status = psc_split_region(io, sp, off, r.length);
            if (status != PS_OK) {
                return status;
            }
            c++;
            continue;
        }
        if (r.count - c > 1) { /* the regions from c that end in this stripe */
            n = (sp->hi - off - r.length) / r.stride + 1;
            n = n < r.count - c ? n : r.count - c;
        }
        uint64_t obj_off = sp->obj + (off - sp->lo);
        if (obj_off + (n - 1) * r.stride + r.length > PS_MAX_OBJ_SIZE && io->is_write) {
            return psc_split_too_large(io, off);
        }
        if (obj_off + (n - 1) * r.stride + r.length > PS_MAX_OBJ_SIZE) {
            /* a read reaching past the limit: region by region */
            for (; c < r.count; c++) {
                ps_status_t status = psc_split_region(io, sp, r.offset + c * r.stride, r.length);
                if (status != PS_OK) {
                    return status;
                }
            }
            return PS_OK;
        }
        if (psc_target_add_run(&io->targets[sp->k], obj_off, r.length, r.stride, n, sp->stream) !=
            PS_OK) {
            return psc_error(PS_ERR_NO_MEMORY, "no memory");
        }
        sp->stream += n * r.length;
        c += n;
    }
    return PS_OK;
}

/*
 * The payload of one batch of target t. A read of one range (one region,
 * or a run of one) whose part on a target fits in one batch of buffer_size
 * bytes but is at least 2 x PSC_READ_HALF_MIN goes as two batches of half
 * of it, in flight together, when the target's previous read batch in
 * this file came from the server's disk (its reply says so): the server
 * reads the second half from disk while the first is on the wire, where
 * one batch is the disk and then the network, one after the other. What
 * the server has in memory goes whole: there two batches are only twice
 * the overhead. Lists of regions (the read cache's block fetches) and
 * writes stay whole (1 MiB vector writes in halves: 1,004-1,139 against
 * 1,175-1,727 MiB/s). Measured side by side, 2 processes, 3 rounds: 1 MiB
 * vector reads (one region per call) 960-1,470 MiB/s whole, 1,248-1,494
 * halved after disk reads, 1,608-1,674 always halved; HDF5's collective
 * reads of 512 KiB just written (servers' memory) 631-697, 692-819 and
 * 616-653 (the last 535-631 against 754-948 in another set).
 */
#define PSC_READ_HALF_MIN (256u << 10)

static uint64_t psc_target_batch_max(const pstripe_request_t *io, const psc_target_t *t)
{
    uint64_t bytes =
        io->args.n == 1 && t->npieces == 1 && t->pieces[0].count == 1 ? t->pieces[0].len : 0;

    if (io->is_write || io->buffer_count < 2 || bytes > io->buffer_size ||
        bytes < 2 * (uint64_t)PSC_READ_HALF_MIN ||
        !__atomic_load_n(&io->seen->read_disk[t->k], __ATOMIC_RELAXED)) {
        return io->buffer_size;
    }
    return (bytes / 2 + 4095) & ~(uint64_t)4095;
}

/* Cut the regions at stripe boundaries into the targets' pieces, and set
 * how many batches of each target may be in flight, of what size. */
static ps_status_t psc_io_split(pstripe_request_t *io, const psc_args_t *args)
{
    psc_split_t sp = {0, 0, 0, 0, 0};

    for (size_t i = 0; i < args->n; i++) {
        ps_status_t status = args->runs != NULL ? psc_split_run(io, &sp, args->runs[i])
                                                : psc_split_region(io, &sp, args->regions[i].offset,
                                                                   args->regions[i].length);
        if (status != PS_OK) {
            return status;
        }
    }
    for (uint32_t k = 0; k < io->ntargets; k++) {
        psc_target_t *t = &io->targets[k];

        t->max_inflight = io->buffer_count;
        if (io->is_write && t->npieces > 1 && psc_target_overlaps(t)) {
            t->max_inflight = 1;
        }
        t->batch_max = psc_target_batch_max(io, t);
    }
    return PS_OK;
}

static ps_status_t psc_io_create(pstripe_file_t *file, int is_write, const psc_args_t *args,
                                 const struct iovec *mem, size_t nmem, pstripe_request_t **io_p)
{
    pstripe_request_t *io;
    uint64_t total = 0;
    ps_status_t status;

    status = psc_io_check(file, is_write, args, mem, nmem, &total);
    if (status != PS_OK) {
        return status;
    }
    io = calloc(1, sizeof(*io));
    if (io == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    psc_call_init(&io->call);
    io->fs = file->fs;
    io->is_write = is_write;
    io->io_flags = (args->flags & PSTRIPE_WRITE_BEHIND) ? PS_IO_BEHIND : 0;
    io->file_id = file->info.file_id;
    psc_file_cap(file, &io->cap);
    io->layout = file->layout;
    io->total = total;
    io->buffer_size = file->opts.buffer_size;
    io->buffer_count = (uint32_t)file->opts.buffer_count;
    io->max_regions = (uint32_t)file->opts.max_regions;
    io->bounce_threshold = file->opts.bounce_threshold;
    io->seen = psc_file_seen_hold(file->seen);
    if (total > 0) {
        status = psc_io_copy_args(io, args, mem, nmem);
        if (status == PS_OK) {
            status = psc_io_split(io, args);
        }
        if (status != PS_OK) {
            goto err_free_io;
        }
    }
    *io_p = io;
    return PS_OK;

err_free_io:
    psc_io_free(io);
    return status;
}

/* --- API ------------------------------------------------------------------------ */

/* then_wait: the caller waits for the request next (it sends it). */
static ps_status_t psc_io_start(pstripe_file_t *file, int is_write, const psc_args_t *args,
                                const struct iovec *mem, size_t nmem, int then_wait,
                                pstripe_request_t **req_p)
{
    pstripe_request_t *io = NULL;
    ps_status_t status;

    if (req_p == NULL) {
        return psc_error(PS_ERR_INVALID, "req_p is NULL");
    }
    status = psc_io_create(file, is_write, args, mem, nmem, &io);
    if (status != PS_OK) {
        return status;
    }
    if (io->total == 0) {
        io->call.pending = 0;
        io->call.done = 1;
    } else {
        io->start.fn = psc_io_start_cmd;
        if (then_wait) {
            psc_post_then_wait(io->fs, &io->start, NULL);
        } else {
            psc_post(io->fs, &io->start, NULL);
        }
    }
    *req_p = io;
    return PS_OK;
}

ps_status_t pstripe_iwrite_list(pstripe_file_t *file, const pstripe_region_t *regions,
                                size_t nregions, const struct iovec *mem, size_t nmem,
                                pstripe_request_t **req_p)
{
    return pstripe_iwrite_list_flags(file, regions, nregions, mem, nmem, 0, req_p);
}

ps_status_t pstripe_iwrite_list_flags(pstripe_file_t *file, const pstripe_region_t *regions,
                                      size_t nregions, const struct iovec *mem, size_t nmem,
                                      unsigned flags, pstripe_request_t **req_p)
{
    psc_args_t args = {regions, NULL, nregions, flags};
    return psc_io_start(file, 1, &args, mem, nmem, 0, req_p);
}

ps_status_t pstripe_iread_list(pstripe_file_t *file, const pstripe_region_t *regions,
                               size_t nregions, const struct iovec *mem, size_t nmem,
                               pstripe_request_t **req_p)
{
    psc_args_t args = {regions, NULL, nregions, 0};
    return psc_io_start(file, 0, &args, mem, nmem, 0, req_p);
}

ps_status_t pstripe_iwrite_runs(pstripe_file_t *file, const pstripe_run_t *runs, size_t nruns,
                                const struct iovec *mem, size_t nmem, pstripe_request_t **req_p)
{
    psc_args_t args = {NULL, runs, nruns, 0};
    return psc_io_start(file, 1, &args, mem, nmem, 0, req_p);
}

ps_status_t pstripe_iread_runs(pstripe_file_t *file, const pstripe_run_t *runs, size_t nruns,
                               const struct iovec *mem, size_t nmem, pstripe_request_t **req_p)
{
    psc_args_t args = {NULL, runs, nruns, 0};
    return psc_io_start(file, 0, &args, mem, nmem, 0, req_p);
}

ps_status_t pstripe_request_test(pstripe_request_t *req, int *done)
{
    if (req == NULL || done == NULL) {
        return psc_error(PS_ERR_INVALID, "req or done is NULL");
    }
    pthread_mutex_lock(&req->fs->lock);
    *done = req->call.done;
    pthread_mutex_unlock(&req->fs->lock);
    return PS_OK;
}

ps_status_t pstripe_request_wait(pstripe_request_t *req, uint64_t *bytes)
{
    pstripe_fs_t *fs;
    ps_status_t status;

    if (req == NULL) {
        return psc_error(PS_ERR_INVALID, "req is NULL");
    }
    fs = req->fs;
    psc_call_wait_done(fs, &req->call);
    status = req->call.status;
    if (status != PS_OK) {
        psc_set_error("%s", req->call.msg[0] ? req->call.msg : ps_status_string(status));
    } else if (bytes != NULL) {
        *bytes = req->bytes;
    }
    psc_io_free(req);
    return status;
}

/* Start a request and wait for it. */
static ps_status_t psc_io_run(pstripe_file_t *file, int is_write, const psc_args_t *args,
                              const struct iovec *mem, size_t nmem, uint64_t *bytes)
{
    pstripe_request_t *req;
    ps_status_t status;

    status = psc_io_start(file, is_write, args, mem, nmem, 1, &req);
    if (status != PS_OK) {
        return status;
    }
    return pstripe_request_wait(req, bytes);
}

ps_status_t pstripe_write_list(pstripe_file_t *file, const pstripe_region_t *regions,
                               size_t nregions, const struct iovec *mem, size_t nmem)
{
    return pstripe_write_list_flags(file, regions, nregions, mem, nmem, 0);
}

ps_status_t pstripe_write_list_flags(pstripe_file_t *file, const pstripe_region_t *regions,
                                     size_t nregions, const struct iovec *mem, size_t nmem,
                                     unsigned flags)
{
    psc_args_t args = {regions, NULL, nregions, flags};
    return psc_io_run(file, 1, &args, mem, nmem, NULL);
}

ps_status_t pstripe_read_list(pstripe_file_t *file, const pstripe_region_t *regions,
                              size_t nregions, const struct iovec *mem, size_t nmem,
                              uint64_t *nread)
{
    psc_args_t args = {regions, NULL, nregions, 0};
    return psc_io_run(file, 0, &args, mem, nmem, nread);
}

ps_status_t pstripe_write_runs(pstripe_file_t *file, const pstripe_run_t *runs, size_t nruns,
                               const struct iovec *mem, size_t nmem)
{
    return pstripe_write_runs_flags(file, runs, nruns, mem, nmem, 0);
}

ps_status_t pstripe_write_runs_flags(pstripe_file_t *file, const pstripe_run_t *runs, size_t nruns,
                                     const struct iovec *mem, size_t nmem, unsigned flags)
{
    psc_args_t args = {NULL, runs, nruns, flags};
    return psc_io_run(file, 1, &args, mem, nmem, NULL);
}

ps_status_t pstripe_read_runs(pstripe_file_t *file, const pstripe_run_t *runs, size_t nruns,
                              const struct iovec *mem, size_t nmem, uint64_t *nread)
{
    psc_args_t args = {NULL, runs, nruns, 0};
    return psc_io_run(file, 0, &args, mem, nmem, nread);
}

ps_status_t pstripe_pwrite(pstripe_file_t *file, const void *buf, uint64_t len, uint64_t offset)
{
    pstripe_region_t region = {.offset = offset, .length = len};
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

    return pstripe_write_list(file, &region, 1, &iov, 1);
}

ps_status_t pstripe_pread(pstripe_file_t *file, void *buf, uint64_t len, uint64_t offset,
                          uint64_t *nread)
{
    pstripe_region_t region = {.offset = offset, .length = len};
    struct iovec iov = {.iov_base = buf, .iov_len = len};

    return pstripe_read_list(file, &region, 1, &iov, 1, nread);
}

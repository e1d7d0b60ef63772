/*
 * psc_batch.c: list I/O on the progress thread: batches and their
 * pipeline (see psc_io.c for how a request is cut into pieces).
 *
 * Batching and pipelining. The progress thread packs each target's pieces
 * into batches (one OBJ_WRITE/OBJ_READ each) of at most buffer_size payload
 * bytes (a read of one range: halves, see psc_target_batch_max) and
 * max_regions regions, merging pieces that are adjacent in the
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
 * about 2x and scattered reads 3.5x faster. So: a write batch whose data is
 * one piece of the caller's memory and whose list is short sends the list
 * in the message header and that memory as is (PS_IO_LIST_INLINE); any
 * other is described by an IOV (its region array, then the caller's
 * memory, adjacent pieces merged) and sent as is when small (or when it
 * goes eagerly, psc_op_send_protocol: UCX packs the IOV itself), but packed into
 * one reused staging buffer when it goes by rendezvous and its payload
 * reaches bounce_threshold; a read reply lands
 * directly in the caller's memory when the batch maps to one piece of it
 * (contig, no copy), is copied from the UCX buffer when it came eagerly
 * (the servers send replies of up to eager_reply bytes so), and is staged
 * and scattered when it comes by rendezvous into several pieces.
 * bounce_threshold=0 keeps every transfer on the IOV path (for UCX
 * versions whose IOV rendezvous is zero-copy).
 *
 * Reads and the file size. Bytes past an object's end read as zeros, and
 * each reply says its object's size. If every piece lay below its object's
 * size, every requested byte is below the file size and *nread is the
 * request's length; otherwise we OBJ_STAT every target once at the end and
 * count the requested bytes below the file size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps_status.h"
#include "psc_call.h"
#include "psc_conn.h"
#include "psc_batch.h"
#include "psc_op.h"
#include "psc_stage.h"

typedef struct psc_batch {
    psc_op_t op;
    pstripe_request_t *io;
    psc_target_t *t;
    ps_io_req_t req;
    ps_io_rep_t rep;
    ps_run_t *runs; /* the batch's regions as strided runs, built as pieces come */
    uint32_t nruns;
    size_t runs_cap;
    uint64_t nregions;    /* regions the runs hold */
    ps_region_t *regions; /* the regions one by one, when that is the smaller list */
    void *list;           /* what is sent: runs or regions */
    size_t list_len;      /* bytes */
    ucp_dt_iov_t *iov; /* write: [0] = regions; read: memory only */
    size_t niov, iov_cap;
    uint64_t payload;
    uint64_t max_end; /* largest region end in the object */
    void *bounce;     /* write: regions + payload staged contiguously */
    size_t bounce_cap;
} psc_batch_t;

/* --- batches (progress thread) ---------------------------------------------------- */

static ps_status_t psc_batch_add_iov(psc_batch_t *b, void *addr, size_t len)
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
static ps_status_t psc_batch_add_mem(psc_batch_t *b, uint64_t s, uint64_t len)
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
    free(b->runs);
    free(b->regions);
    free(b->iov);
    free(b);
}

static void psc_io_batch_done(pstripe_fs_t *fs, psc_op_t *op);

/* Release of a batch whose op completed before UCX let go of it. */
static void psc_batch_released(pstripe_fs_t *fs, psc_op_t *op)
{
    ucs_list_del(&op->detached_link);
    psc_batch_free(fs, op->arg);
}

/* Append a run to the batch's list (a run holds at least one region, so
 * there are never more than max_regions). */
static ps_status_t psc_batch_run_append(psc_batch_t *b, uint64_t off, uint64_t len, uint64_t stride,
                                        uint64_t count)
{
    if (b->nruns == b->runs_cap) {
        size_t cap = b->runs_cap ? b->runs_cap * 2 : 16;
        ps_run_t *r;

        if (cap > b->io->max_regions) {
            cap = b->io->max_regions;
        }
        r = realloc(b->runs, cap * sizeof(*r));
        if (r == NULL) {
            return PS_ERR_NO_MEMORY;
        }
        b->runs = r;
        b->runs_cap = cap;
    }
    b->runs[b->nruns].off = off;
    b->runs[b->nruns].len = len;
    b->runs[b->nruns].stride = stride;
    b->runs[b->nruns].count = count;
    b->nruns++;
    return PS_OK;
}

/*
 * Append a region to the batch's runs. A region that continues the last
 * region in the object extends it (splitting it off its run if needed); one
 * of the same length at the next stride (or, after a single region, at any
 * distance past its end) extends the last run; anything else starts a run.
 * Runs only grow forward, so the regions keep their order and a run's
 * regions never overlap. PS_ERR_BUSY when the batch has max_regions regions:
 * runs shorten the list on the wire, not the server's work per batch.
 */
static ps_status_t psc_batch_add_region(psc_batch_t *b, uint64_t off, uint64_t len)
{
    uint32_t max = b->io->max_regions;
    ps_run_t *last = b->nruns ? &b->runs[b->nruns - 1] : NULL;
    uint64_t last_off = last ? last->off + last->stride * (last->count - 1) : 0;

    if (last != NULL && last->count == 1 && last->off + last->len == off) {
        last->len += len;
        last->stride = last->len;
        return PS_OK;
    }
    if (b->nregions == max && !(last != NULL && last_off + last->len == off)) {
        return PS_ERR_BUSY; /* max_regions regions (a continued region adds none) */
    }
    if (last != NULL && last->len == len && off >= last_off + len &&
        (last->count == 1 || off == last_off + last->stride)) {
        last->stride = last->count == 1 ? off - last->off : last->stride;
        last->count++;
        b->nregions++;
        return PS_OK;
    }
    if (last != NULL && last->count > 1 && last_off + last->len == off) {
        last->count--; /* its last region continues below as a region of its own */
        off = last_off;
        len += last->len;
    } else {
        b->nregions++;
    }
    return psc_batch_run_append(b, off, len, len, 1);
}

/*
 * The list the batch sends: its runs (PS_IO_RUNS, 32 bytes each) when they
 * take fewer bytes than the regions one by one (16 bytes each); else the
 * regions. Sets the request's nregions and flags (with the I/O's
 * PS_IO_BEHIND); *list and *list_len describe the bytes to send.
 */
static ps_status_t psc_batch_set_list(psc_batch_t *b)
{
    void **list = &b->list;
    size_t *list_len = &b->list_len;
    uint64_t k = 0;

    if (2 * (uint64_t)b->nruns < b->nregions) {
        b->req.nregions = b->nruns;
        b->req.flags = PS_IO_RUNS | b->io->io_flags;
        *list = b->runs;
        *list_len = b->nruns * sizeof(ps_run_t);
        return PS_OK;
    }
    b->regions = malloc(b->nregions * sizeof(*b->regions));
    if (b->regions == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    for (uint32_t i = 0; i < b->nruns; i++) {
        for (uint64_t c = 0; c < b->runs[i].count; c++, k++) {
            b->regions[k].off = b->runs[i].off + c * b->runs[i].stride;
            b->regions[k].len = b->runs[i].len;
        }
    }
    b->req.nregions = (uint32_t)b->nregions;
    b->req.flags = b->io->io_flags;
    *list = b->regions;
    *list_len = b->nregions * sizeof(ps_region_t);
    return PS_OK;
}

/*
 * Append n whole regions of len bytes at stride (n > 1: stride > len) to
 * the batch's runs: they extend the last run if it has their length and
 * stride and they come next; else they are a run of their own (a single
 * region goes through psc_batch_add_region). The caller keeps b->nregions +
 * n within max_regions.
 */
static ps_status_t psc_batch_add_run(psc_batch_t *b, uint64_t off, uint64_t len, uint64_t stride,
                                     uint64_t n)
{
    ps_run_t *last = b->nruns ? &b->runs[b->nruns - 1] : NULL;

    if (n == 1) {
        return psc_batch_add_region(b, off, len);
    }
    if (last != NULL && last->len == len && last->count > 1 && last->stride == stride &&
        last->off + last->count * stride == off) {
        last->count += n;
        b->nregions += n;
        return PS_OK;
    }
    b->nregions += n;
    return psc_batch_run_append(b, off, len, stride, n);
}

/*
 * Take the next regions of piece p (from region t->cur_reg, byte
 * t->cur_off) into the batch, up to room bytes: whole regions as one run
 * (their memory is one stretch of the stream), else a part of one region.
 * Returns the bytes taken; 0 with *status PS_ERR_BUSY when the batch holds
 * max_regions regions.
 */
static uint64_t psc_batch_take(psc_batch_t *b, psc_target_t *t, const psc_piece_t *p,
                               uint64_t room, ps_status_t *status)
{
    uint64_t obj = p->obj_off + t->cur_reg * p->stride + t->cur_off;
    uint64_t stream = p->stream_off + t->cur_reg * p->len + t->cur_off;
    uint64_t n = p->count - t->cur_reg, max = b->io->max_regions, take;

    if (t->cur_off == 0 && n > 1 && room >= 2 * p->len && max - b->nregions >= 2) {
        n = n < room / p->len ? n : room / p->len;
        n = n < max - b->nregions ? n : max - b->nregions;
        take = n * p->len;
        *status = psc_batch_add_run(b, obj, p->len, p->stride, n);
    } else {
        take = p->len - t->cur_off < room ? p->len - t->cur_off : room;
        *status = psc_batch_add_region(b, obj, take);
        n = 0;
    }
    if (*status != PS_OK) {
        return 0;
    }
    if (psc_batch_add_mem(b, stream, take) != PS_OK) {
        *status = PS_ERR_NO_MEMORY;
        return 0;
    }
    obj = n ? obj + (n - 1) * p->stride + p->len : obj + take;
    if (obj > b->max_end) {
        b->max_end = obj;
    }
    t->cur_reg += n;
    t->cur_off += n ? 0 : take;
    if (t->cur_off == p->len) {
        t->cur_reg++;
        t->cur_off = 0;
    }
    if (t->cur_reg == p->count) {
        t->cur++;
        t->cur_reg = 0;
    }
    return take;
}

/* Take target t's next pieces into the batch, up to t->batch_max bytes and
 * max_regions regions. */
static ps_status_t psc_batch_fill(psc_batch_t *b, psc_target_t *t)
{
    uint64_t max = t->batch_max;
    ps_status_t status = PS_OK;

    while (t->cur < t->npieces && b->payload < max) {
        uint64_t take = psc_batch_take(b, t, &t->pieces[t->cur], max - b->payload, &status);

        if (status == PS_ERR_BUSY) {
            break; /* full: the rest goes in the next batch */
        }
        if (status != PS_OK) {
            return PS_ERR_NO_MEMORY;
        }
        b->payload += take;
    }
    return PS_OK;
}

/* A write batch whose data is one piece of the caller's memory and whose
 * list is short sends the list in the AM header (PS_IO_LIST_INLINE) and the
 * payload straight from that memory. Returns 1 if it does. */
static int psc_batch_send_inline(psc_batch_t *b)
{
    uint8_t *body = b->op.h.bytes + sizeof(ps_msg_hdr_t);
    ps_io_req_t io;

    if (b->niov != 2 || b->list_len > PS_IO_INLINE_MAX) {
        return 0;
    }
    memcpy(&io, body, sizeof(io));
    io.flags |= PS_IO_LIST_INLINE;
    memcpy(body, &io, sizeof(io));
    memcpy(body + sizeof(io), b->list, b->list_len);
    b->op.h.hdr.body_len = (uint32_t)(sizeof(io) + b->list_len);
    b->op.hdr_len = (uint32_t)(sizeof(ps_msg_hdr_t) + sizeof(io) + b->list_len);
    b->op.send_buf = b->iov[1].buffer;
    b->op.send_count = b->iov[1].length;
    b->op.send_iov = 0;
    b->op.send_user_mem = 1;
    return 1;
}

/* A write batch sends its list in the header and its data from the caller's
 * memory (psc_batch_send_inline); else its regions then the caller's memory
 * as one IOV, or, when it goes by rendezvous with bounce_threshold bytes or
 * more, both staged in one contiguous buffer: UCX 1.13 sends IOV rendezvous
 * data through 8 KiB copies, one contiguous buffer in 64 KiB zero-copy
 * fragments or RMA. To a server that may use shared memory, always staged:
 * a forced close of its endpoints (they detect no failure) does not end
 * UCX's sends from them, and a call whose server stopped answering must
 * return and give its memory back (tools/hung-server.sh hung in cp). */
static ps_status_t psc_batch_set_send(pstripe_fs_t *fs, psc_batch_t *b)
{
    const psc_conn_t *conn;
    int shm = b->op.server < fs->nservers && fs->servers[b->op.server].shm_maybe;
    size_t len;
    char *p;

    if (!shm && psc_batch_send_inline(b)) {
        return PS_OK;
    }
    b->iov[0].buffer = b->list;
    b->iov[0].length = b->list_len;
    b->op.send_buf = b->iov;
    b->op.send_count = b->niov;
    b->op.send_iov = 1;
    b->op.send_user_mem = 1;
    conn = b->op.server < fs->nservers ? fs->servers[b->op.server].conn : NULL;
    if (!shm && (b->io->bounce_threshold == 0 || b->payload < b->io->bounce_threshold ||
                 psc_op_send_protocol(conn, &b->op) == UCP_AM_SEND_FLAG_EAGER)) {
        return PS_OK; /* small, or eager: UCX packs the IOV as it sends */
    }
    len = b->iov[0].length + b->payload;
    p = psc_bounce_get(fs, len, &b->bounce_cap);
    if (p == NULL) {
        return PS_ERR_NO_MEMORY;
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
    return PS_OK;
}

/* A read batch sends its regions; the reply's data lands in the caller's
 * memory (contiguous when it is one piece), rendezvous data of
 * bounce_threshold bytes and more staged first (psc_recv.c). */
static void psc_batch_set_recv(psc_batch_t *b)
{
    b->op.send_buf = b->list;
    b->op.send_count = b->list_len;
    b->op.recv_mode = PSC_RECV_BUF;
    b->op.recv_len = b->payload;
    b->op.stage_min = b->io->bounce_threshold;
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

/* Build the next batch of target t, or NULL (no memory: io->status set). */
static psc_batch_t *psc_batch_build(pstripe_fs_t *fs, pstripe_request_t *io, psc_target_t *t)
{
    psc_batch_t *b;

    b = calloc(1, sizeof(*b));
    if (b == NULL) {
        goto err_nomem;
    }
    b->io = io;
    b->t = t;
    if (io->is_write && psc_batch_add_iov(b, NULL, 0) != PS_OK) { /* [0]: regions, set later */
        goto err_free_batch;
    }
    if (psc_batch_fill(b, t) != PS_OK || psc_batch_set_list(b) != PS_OK) {
        goto err_free_batch;
    }
    b->req.file_id = io->file_id;
    b->req.cap = io->cap;
    b->req.payload_len = b->payload;
    psc_op_init(&b->op, t->server, io->is_write ? PS_MSG_OBJ_WRITE : PS_MSG_OBJ_READ, &b->req,
                sizeof(b->req));
    b->op.route = PSC_ROUTE_OBJECT;
    b->op.route_file_id = io->file_id;
    b->op.done_cb = psc_io_batch_done;
    b->op.release_cb = psc_batch_released;
    b->op.arg = b;
    b->op.rep_body = &b->rep;
    b->op.rep_body_len = sizeof(b->rep);
    if (!io->is_write) {
        psc_batch_set_recv(b);
    } else if (psc_batch_set_send(fs, b) != PS_OK) {
        goto err_free_batch;
    }
    return b;

err_free_batch:
    psc_batch_free(fs, b);
err_nomem:
    if (io->status == PS_OK) {
        io->status = PS_ERR_NO_MEMORY;
        snprintf(io->msg, sizeof(io->msg), "no memory for a batch");
    }
    return NULL;
}

/* --- state machine (progress thread) ------------------------------------------------ */

static void psc_io_fail(pstripe_request_t *io, ps_status_t status, const char *msg)
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

/* The bytes of run r below size, in closed form (a run's count may be
 * anything up to 2^64 - 1, and a run of length 0 any count: a walk of its
 * regions would not end). Its regions do not overlap (stride >= length,
 * psc_io_check), so at most one straddles size. */
static uint64_t psc_run_bytes_below(const pstripe_run_t *r, uint64_t size)
{
    uint64_t start, full, all;

    if (r->length == 0 || r->count == 0 || r->offset >= size) {
        return 0;
    }
    if (r->count > 1 && r->stride > 0) {
        start = (size - r->offset - 1) / r->stride + 1; /* regions starting below size */
        all = start < r->count ? start : r->count;
    } else {
        all = 1;
    }
    full = size - r->offset < r->length    ? 0
           : r->count > 1 && r->stride > 0 ? (size - r->offset - r->length) / r->stride + 1
                                           : 1;
    full = full < all ? full : all;
    return full * r->length + (all > full ? size - (r->offset + full * r->stride) : 0);
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
        for (size_t i = 0; i < io->args.n; i++) {
            pstripe_run_t r = psc_args_run(&io->args, i);

            nread += psc_run_bytes_below(&r, size);
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
        psc_op_t *op = &io->stat_ops[k];

        psc_op_init_obj(op, io->targets[k].server, PS_MSG_OBJ_STAT, io->file_id, 0, NULL);
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
    } else if (!io->is_write) {
        /* the next read of this target is halved or not by it (psc_io.c) */
        __atomic_store_n(&io->seen->read_disk[b->t->k], b->rep.disk_bytes > 0, __ATOMIC_RELAXED);
        io->need_stat |= b->max_end > b->rep.obj_size;
    } else {
        /* an fsync or close checks that the server did not restart since
         * its first answer, and asks for the writes that failed after their
         * answer since the lowest mark (psc_sync.c) */
        psc_file_seen_wrote(io->seen, b->t->server, op->instance, b->rep.failed_writes);
    }
    if (op->send_req == NULL && op->recv_req == NULL) {
        psc_batch_free(fs, b);
    } else { /* detached: psc_batch_released() frees it when UCX lets go */
        ucs_list_add_tail(&fs->detached_ops, &op->detached_link);
    }
    psc_io_pump(fs, io);
}

void psc_io_start_cmd(pstripe_fs_t *fs, psc_cmd_t *cmd)
{
    psc_io_pump(fs, ucs_container_of(cmd, pstripe_request_t, start));
}

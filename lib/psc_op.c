/*
 * psc_op.c: ops (one request message and its reply).
 *
 * Requests are matched to replies by req_id = (generation << 32) | slot,
 * where slot indexes fs->slots; a reply whose id is not in the table (late,
 * duplicated, forged) is dropped. A finished op completes through its
 * done_cb (on the progress thread) or its call (waking the API thread).
 * How an op's data travels (eagerly or by rendezvous) is chosen here too.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps_log.h"
#include "psc_call.h"
#include "psc_op.h"
#include "psc_stage.h"

/* --- op --------------------------------------------------------------------------- */

void psc_op_init(psc_op_t *op, uint32_t server, uint16_t type, const void *body, uint32_t body_len)
{
    *op = (psc_op_t){
        .server = server,
        .route = PSC_ROUTE_ANY,
        .type = type,
        .hdr_len = (uint32_t)sizeof(ps_msg_hdr_t) + body_len,
        .recv_mode = PSC_RECV_NONE,
        .status = PS_OK,
        .state = PSC_OP_IDLE,
    };
    ps_msg_hdr_init(&op->h.hdr, (ps_msg_type_t)type, 0, 0, body_len);
    if (body_len > 0) {
        memcpy(op->h.bytes + sizeof(ps_msg_hdr_t), body, body_len);
    }
}

void psc_op_init_obj(psc_op_t *op, uint32_t server, uint16_t type, uint64_t file_id, uint64_t size,
                     const ps_cap_t *cap)
{
    ps_obj_req_t req = {.file_id = file_id, .size = size};

    if (cap != NULL) {
        req.cap = *cap;
    }
    psc_op_init(op, server, type, &req, sizeof(req));
    op->route = PSC_ROUTE_OBJECT;
    op->route_file_id = file_id;
}

void psc_op_error(psc_op_t *op, ps_status_t status, const char *fmt, ...)
{
    va_list ap;

    if (op->status != PS_OK) {
        return;
    }
    op->status = status;
    va_start(ap, fmt);
    vsnprintf(op->msg, sizeof(op->msg), fmt, ap);
    va_end(ap);
}

/* --- req_id slot table ----------------------------------------------------------- */

ps_status_t psc_slot_insert(pstripe_fs_t *fs, psc_op_t *op)
{
    uint32_t idx;

    if (fs->nfree == 0) {
        uint32_t n = fs->nslots ? fs->nslots * 2 : 256;
        psc_op_t **slots = realloc(fs->slots, n * sizeof(*slots));
        uint32_t *free_slots;

        if (slots == NULL) {
            return PS_ERR_NO_MEMORY;
        }
        fs->slots = slots;
        free_slots = realloc(fs->free_slots, n * sizeof(*free_slots));
        if (free_slots == NULL) {
            return PS_ERR_NO_MEMORY;
        }
        fs->free_slots = free_slots;
        for (uint32_t i = n; i > fs->nslots; i--) {
            fs->slots[i - 1] = NULL;
            fs->free_slots[fs->nfree++] = i - 1;
        }
        fs->nslots = n;
    }
    idx = fs->free_slots[--fs->nfree];
    if (++fs->slot_gen == 0) {
        fs->slot_gen = 1;
    }
    op->req_id = ((uint64_t)fs->slot_gen << 32) | idx;
    fs->slots[idx] = op;
    return PS_OK;
}

psc_op_t *psc_slot_find(pstripe_fs_t *fs, uint64_t req_id)
{
    uint32_t idx = (uint32_t)req_id;

    if (req_id == 0 || idx >= fs->nslots || fs->slots[idx] == NULL ||
        fs->slots[idx]->req_id != req_id) {
        return NULL;
    }
    return fs->slots[idx];
}

void psc_slot_remove(pstripe_fs_t *fs, psc_op_t *op)
{
    uint32_t idx = (uint32_t)op->req_id;

    if (op->req_id == 0) {
        return;
    }
    fs->slots[idx] = NULL;
    fs->free_slots[fs->nfree++] = idx;
    op->req_id = 0;
}

/* --- completion ------------------------------------------------------------------ */

/* The op leaves its connection (answered, failed, timed out): its eager
 * write data no longer counts against the connection's credit (psc_conn.c). */
static void psc_op_eager_return(psc_op_t *op)
{
    if (op->eager_charge > 0) {
        op->conn->eager_out -= op->eager_charge;
        op->eager_charge = 0;
    }
}

void psc_op_make_ready(pstripe_fs_t *fs, psc_op_t *op)
{
    if (op->state == PSC_OP_INFLIGHT || op->state == PSC_OP_WAITING) {
        ucs_list_del(&op->cmd.list);
    }
    psc_op_eager_return(op);
    op->state = PSC_OP_READY;
    ucs_list_add_tail(&fs->readyq, &op->cmd.list);
}

void psc_op_check_ready(pstripe_fs_t *fs, psc_op_t *op)
{
    if (op->state == PSC_OP_INFLIGHT && op->send_done && op->reply_done && op->recv_req == NULL) {
        psc_op_make_ready(fs, op);
    }
}

void psc_op_fail_now(pstripe_fs_t *fs, psc_op_t *op, ps_status_t status, const char *msg)
{
    psc_op_error(op, status, "%s", msg);
    psc_op_make_ready(fs, op);
}

void psc_op_finish(pstripe_fs_t *fs, psc_op_t *op)
{
    psc_slot_remove(fs, op);
    op->state = PSC_OP_DONE;
    if (op->staged != NULL && op->recv_req == NULL) {
        psc_bounce_put(fs, op->staged, op->staged_cap);
        op->staged = NULL;
    }
    if (op->status != PS_OK) {
        ps_debug("%s to server %s failed: %s", ps_msg_type_name(op->type),
                 fs->servers[op->server].addr, op->msg);
        if (op->recv_alloc != NULL) {
            free(op->recv_alloc);
            op->recv_alloc = NULL;
            op->recv_alloc_len = 0;
        }
    }
    if (op->done_cb != NULL) {
        op->done_cb(fs, op);
    } else {
        psc_call_complete(fs, op->call, op->status, op->msg);
    }
}

int psc_op_detached(psc_op_t *op)
{
    if (op->state != PSC_OP_READY && op->state != PSC_OP_DONE) {
        return 0;
    }
    if (op->state == PSC_OP_DONE && op->send_req == NULL && op->recv_req == NULL) {
        if (op->staged != NULL) {
            psc_bounce_put(op->fs, op->staged, op->staged_cap);
            op->staged = NULL;
        }
        op->release_cb(op->fs, op); /* its connection may be gone: op->fs only */
    }
    return 1;
}

void psc_update_deadline(pstripe_fs_t *fs, uint64_t deadline)
{
    if (fs->next_deadline_ns == 0 || deadline < fs->next_deadline_ns) {
        fs->next_deadline_ns = deadline;
    }
}

uint32_t psc_route_worker(const psc_op_t *op, uint32_t nworkers)
{
    switch (op->route) {
    case PSC_ROUTE_PATH:
        return ps_path_worker(op->route_path, op->route_path_len, nworkers);
    case PSC_ROUTE_OBJECT:
        return ps_object_worker(op->route_file_id, nworkers);
    default:
        return 0;
    }
}

/* --- how an op's data travels ------------------------------------------------------ */

/*
 * How a request's data travels. UCX 1.13 over TCP picks rendezvous from a
 * few KiB up, and its extra round trip (the server's ready-to-receive,
 * then the data) tripled a blocking 16 or 32 KiB write's time (2
 * processes, write-behind off: median 0.46-0.61 ms by rendezvous,
 * 0.14-0.20 eagerly). So requests with less than PSC_EAGER_SMALL bytes of
 * data go eagerly, and write batches with less than PSC_EAGER_MAX bytes
 * eagerly too while the connection's eager write data in flight
 * (conn->eager_out, charged at the send and returned when the op leaves
 * the connection) stays within PSC_EAGER_CREDIT: eager bytes land in the
 * server on arrival, outside its max_inflight budget, and the credit
 * bounds what one client puts there. Larger batches, and those beyond
 * the credit, go by rendezvous: their data stays here until the server
 * admits the request into that budget. Blocking writes of 128 KiB and
 * 256 KiB (2 processes, write-behind off) ran at 268-312 and 333-337
 * MiB/s with the credit against 140-176 and 263-291 with rendezvous from
 * 64 KiB up, HDF5's collective row writes (one 256 KiB list write per
 * process at each H5Dwrite's set_view) at 217-292 against 188-228 MiB/s.
 * Other requests between the two sizes (a read's long region list): UCX
 * chooses.
 */
#define PSC_EAGER_SMALL  (64u << 10)  /* bytes of data */
#define PSC_EAGER_MAX    (512u << 10) /* bytes of write data */
#define PSC_EAGER_CREDIT (1u << 20)   /* eager write bytes in flight per server */

/* The op's data bytes, counted up to PSC_EAGER_SMALL. */
static uint64_t psc_op_data_bytes(const psc_op_t *op)
{
    const ucp_dt_iov_t *iov = op->send_buf;
    uint64_t n = 0;

    if (!op->send_iov) {
        return op->send_count;
    }
    for (size_t i = 0; i < op->send_count && n < PSC_EAGER_SMALL; i++) {
        n += iov[i].length;
    }
    return n; /* at least PSC_EAGER_SMALL when it stopped early */
}

/* The write data of an OBJ_WRITE op that the credit counts, else 0. */
static uint64_t psc_op_write_payload(const psc_op_t *op)
{
    ps_io_req_t io;

    if (op->type != PS_MSG_OBJ_WRITE || op->hdr_len < sizeof(ps_msg_hdr_t) + sizeof(io)) {
        return 0;
    }
    memcpy(&io, op->h.bytes + sizeof(ps_msg_hdr_t), sizeof(io));
    return io.payload_len;
}

uint32_t psc_op_send_protocol(const psc_conn_t *conn, const psc_op_t *op)
{
    uint64_t payload = psc_op_write_payload(op), n;

    if (payload >= PSC_EAGER_SMALL) {
        if (payload < PSC_EAGER_MAX &&
            (conn == NULL || conn->eager_out + payload <= PSC_EAGER_CREDIT)) {
            return UCP_AM_SEND_FLAG_EAGER;
        }
        return UCP_AM_SEND_FLAG_RNDV;
    }
    n = psc_op_data_bytes(op);
    return n > 0 && n < PSC_EAGER_SMALL ? UCP_AM_SEND_FLAG_EAGER : 0;
}

uint32_t psc_op_send_charged(psc_conn_t *conn, psc_op_t *op)
{
    uint32_t flags = psc_op_send_protocol(conn, op);
    uint64_t payload = psc_op_write_payload(op);

    if ((flags & UCP_AM_SEND_FLAG_EAGER) && payload >= PSC_EAGER_SMALL) {
        op->eager_charge = payload; /* returned by psc_op_make_ready */
        conn->eager_out += payload;
    }
    return flags;
}

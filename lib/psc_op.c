/*
 * psc_op.c: ops (one request message and its reply).
 *
 * Requests are matched to replies by req_id = (generation << 32) | slot,
 * where slot indexes fs->slots; a reply whose id is not in the table (late,
 * duplicated, forged) is dropped. A finished op completes through its
 * done_cb (on the progress thread) or its call (waking the API thread).
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

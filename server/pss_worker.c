/*
 * pss_worker.c: a worker thread: set-up, the event loop, request decoding,
 * admission to memory and routing to the handlers (pss_admin.c, pss_meta.c,
 * pss_store.c), which answer through pss_req.c. Connections are kept by
 * pss_conn.c.
 *
 * The event loop never polls while idle. It progresses the UCX worker until
 * there is nothing left to do, handles what the callbacks queued, reaps disk
 * completions, and then arms the UCX worker (ucp_worker_arm) and sleeps in
 * epoll_wait on three descriptors: the UCX worker's event fd, the eventfd
 * libaio signals on every completion (io_set_eventfd) and a wake eventfd the
 * main thread writes on SIGTERM. ucp_worker_arm returning UCS_ERR_BUSY means
 * events arrived between the last progress and the arm, so we go around again
 * instead of sleeping: no wake-up can be lost. After activity (UCX events,
 * a request taken in or answered, a disk I/O completed) the loop goes on
 * for `spin` (50 us; pss_spin.c), yielding the CPU each turn, before it
 * arms and sleeps:
 * a client sends its next request within tens of microseconds, and a
 * wake-up from sleep costs about 20 us on a VM. It does not spin while a
 * disk I/O is in flight: the kernel completes the I/O on a CPU of this
 * machine (here the one taking the disk's interrupts), and a thread
 * spinning there delays it (a 4 KiB direct write at queue depth 1, 2
 * vCPUs: 73 us sleeping in epoll on its eventfd, 123 us spinning 50 us
 * first, 136-146 us beside a spinner on the interrupts' CPU; session 49).
 * An idle worker sleeps.
 *
 * AM callbacks do as little as possible: they check the header with
 * ps_proto_decode and the data length against what the body implies, keep
 * (or copy) the data, and queue the request. Everything else (routing,
 * rendezvous receives, disk I/O, replies) happens in the loop, outside UCX
 * callbacks, so handlers may send and receive freely.
 */
#include "pss_worker.h"

#include "pss_admin.h"
#include "pss_auth.h"
#include "pss_conn.h"
#include "pss_gc.h"
#include "pss_listen.h"
#include "pss_meta.h"
#include "pss_move.h"
#include "pss_reaper.h"
#include "pss_req.h"
#include "pss_sharedfp.h"
#include "pss_spin.h"
#include "pss_store.h"

#include "ps_layout.h"
#include "ps_log.h"
#include "ps_time.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void pss_queue(pss_worker_t *w, pss_req_t *req)
{
    req->next = NULL;
    *w->incoming_tail = req;
    w->incoming_tail = &req->next;
}

/*
 * Active message callback: keep a checked copy of the header and hold the
 * data (eager data held with UCS_INPROGRESS, rendezvous descriptors held
 * until the loop posts the receive). Never replies from here.
 */
static ucs_status_t pss_am_cb(void *arg, const void *header, size_t header_length, void *data,
                              size_t length, const ucp_am_recv_param_t *param)
{
    pss_worker_t *w = arg;
    ps_msg_view_t view;
    pss_req_t *req;
    int rndv = !!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV);
    int persistent = !!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA);
    ucs_status_t status = UCS_OK;

    req = calloc(1, sizeof(*req));
    if (req == NULL) {
        ps_error("worker %u: no memory for a request of %zu bytes", w->index, length);
        return UCS_OK; /* dropped; the client times out */
    }
    req->worker = w;
    req->recv_ns = ps_time_ns();
    req->late = w->stop_seen;
    w->inflight++;
    PSS_STAT_ADD(w, requests, 1);

    if (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) {
        pss_conn_t *conn = pss_conn_find(w, param->reply_ep);
        if (conn == NULL) {
            conn = pss_conn_add(w, param->reply_ep, 0);
        }
        if (conn != NULL) {
            conn->refs++;
            req->conn = conn;
        }
    }

    if (header_length >= sizeof(ps_msg_hdr_t)) {
        memcpy(&req->hdr, header, sizeof(req->hdr));
    }
    req->status = ps_proto_decode(header, header_length, 0, &view);
    if (req->status != PS_OK) {
        req->bad_reason =
            header_length < sizeof(ps_msg_hdr_t) ? "truncated header" : "malformed header or body";
        req->hdr.body_len = 0;
        if (header_length < sizeof(ps_msg_hdr_t)) {
            memset(&req->hdr, 0, sizeof(req->hdr));
        }
        goto out_queue;
    }
    memcpy(req->body.raw, view.body, req->hdr.body_len);
    if (view.data_len != length) {
        req->status = PS_ERR_PROTO;
        req->bad_reason = "AM data length differs from what the body announces";
        goto out_queue;
    }
    if ((req->hdr.type == PS_MSG_OBJ_WRITE || req->hdr.type == PS_MSG_OBJ_READ) &&
        req->body.io.payload_len > w->server->cfg.max_batch) {
        req->status = PS_ERR_TOO_BIG;
        req->bad_reason = "batch payload above max_batch";
        goto out_queue;
    }
    req->data_len = length;
    if (length == 0) {
        goto out_queue;
    }
    if (rndv) {
        PSS_STAT_ADD(w, rndv_requests, 1);
        req->ucx_data = data; /* descriptor; the loop posts ucp_am_recv_data_nbx */
        req->ucx_rndv = 1;
        status = UCS_INPROGRESS;
    } else if (persistent && ((uintptr_t)data % 8) == 0) {
        req->ucx_data = data;
        req->data = data;
        status = UCS_INPROGRESS;
    } else {
        req->own_buf = malloc(length);
        if (req->own_buf == NULL) {
            req->status = PS_ERR_NO_MEMORY;
            req->bad_reason = "no memory for the request data";
            goto out_queue;
        }
        memcpy(req->own_buf, data, length);
        req->data = req->own_buf;
    }

out_queue:
    pss_queue(w, req);
    return status;
}

/* The worker's list of rendezvous receives in progress, oldest first
 * (pss_rndv_expire). */
static void pss_rndv_link(pss_worker_t *w, pss_req_t *req)
{
    req->rndv_ns = ps_time_ns();
    req->rndv_next = NULL;
    req->rndv_pprev = w->rndv_tail;
    *w->rndv_tail = req;
    w->rndv_tail = &req->rndv_next;
}

static void pss_rndv_unlink(pss_worker_t *w, pss_req_t *req)
{
    *req->rndv_pprev = req->rndv_next;
    if (req->rndv_next != NULL) {
        req->rndv_next->rndv_pprev = req->rndv_pprev;
    } else {
        w->rndv_tail = req->rndv_pprev;
    }
    req->rndv_ns = 0;
}

/*
 * Rendezvous data that has not come data_wait after the receive started:
 * its client stopped sending (stopped by a debugger, hung) and would hold
 * the request's share of max_inflight for as long, every other large
 * request waiting behind it. Its connection is closed (forced) and the
 * request leaves the list; its memory stops counting against max_inflight
 * at once, as UCX 1.13 can neither cancel an active message's receive nor
 * always ends it when its endpoint is closed (the buffer stays UCX's until
 * the client's side of the connection goes too; the request is then freed
 * as any failed one). Sets *gave_up if it gave any up; returns the epoll
 * timeout for the next receive due: ms, or -1 if none.
 */
static int pss_rndv_expire(pss_worker_t *w, int *gave_up)
{
    uint64_t now, wait_ns = (uint64_t)(w->server->cfg.data_wait * 1e9);
    pss_req_t *req;

    if (w->rndv_head == NULL) {
        return -1; /* (the loop's usual case: no clock read) */
    }
    now = ps_time_ns();
    while ((req = w->rndv_head) != NULL) {
        if (now - req->rndv_ns < wait_ns) {
            return (int)((req->rndv_ns + wait_ns - now) / 1000000 + 1);
        }
        uint64_t waited_ns = now - req->rndv_ns;
        pss_rndv_unlink(w, req);
        w->mem_inflight -= req->mem_charged;
        req->mem_charged = 0;
        w->rndv_given_up++;
        *gave_up = 1;
        if (req->conn != NULL) {
            pss_conn_kill(req->conn); /* (once: a dead one stays so) */
        }
        if (ps_log_limit_pass(&w->data_wait_log, now, PSS_LOG_EVERY_NS, NULL)) {
            ps_warn("worker %u: the %" PRIu64 " bytes of a %s did not arrive within data_wait "
                    "(%.1f s): closing its client's connection (%" PRIu64 " given up so far)",
                    w->index, req->data_len, ps_msg_type_name(req->hdr.type),
                    (double)waited_ns / 1e9, w->rndv_given_up);
        }
    }
    return -1;
}

static void pss_rndv_recv_cb(void *request, ucs_status_t status, size_t length, void *user_data)
{
    pss_req_t *req = user_data;

    if (req->rndv_ns != 0) {
        pss_rndv_unlink(req->worker, req);
    }
    if (status != UCS_OK) {
        req->status = PS_ERR_CONN;
        req->bad_reason = "rendezvous receive of the request data failed";
    }
    pss_queue(req->worker, req);
    ucp_request_free(request);
}

/*
 * Post the rendezvous receive of a request's data. The buffer is laid out
 * so that the payload of an OBJ_WRITE (after the region array) starts on a
 * disk-alignment boundary, which lets the store write aligned spans straight
 * from it. Returns 1 if the receive is still in progress.
 */
static int pss_rndv_start(pss_worker_t *w, pss_req_t *req)
{
    size_t align = w->server->mem_align < 64 ? 64 : w->server->mem_align;
    size_t pad = 0;
    void *buf;

    if (req->hdr.type == PS_MSG_OBJ_WRITE && !(req->body.io.flags & PS_IO_LIST_INLINE)) {
        size_t rbytes = (size_t)ps_io_list_bytes(&req->body.io);
        pad = (align - rbytes % align) % align;
    }
    buf = pss_buf_get(w, pad + req->data_len, align, &req->own_cap);
    if (buf == NULL) {
        req->status = PS_ERR_NO_MEMORY;
        req->bad_reason = "no memory for the rendezvous buffer";
        return 0;
    }
    req->own_buf = buf;
    req->data = (uint8_t *)buf + pad;

    void *desc = req->ucx_data;
    req->ucx_data = NULL; /* UCX owns the descriptor from here on */
    req->ucx_rndv = 0;

    ucp_request_param_t param;
    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.recv_am = pss_rndv_recv_cb;
    param.user_data = req;
    pss_rndv_link(w, req); /* before: the callback unlinks it */
    ucs_status_ptr_t r =
        ucp_am_recv_data_nbx(w->ucp_worker, desc, req->data, req->data_len, &param);
    if (r != NULL && !UCS_PTR_IS_ERR(r)) {
        return 1;
    }
    pss_rndv_unlink(w, req); /* done at once (no callback), or failed */
    if (UCS_PTR_IS_ERR(r)) {
        req->status = PS_ERR_CONN;
        req->bad_reason = "rendezvous receive could not start";
    }
    return 0;
}

/* Route a checked request to its handler (or answer WRONG_WORKER). */
static void pss_dispatch(pss_worker_t *w, pss_req_t *req)
{
    pss_server_t *s = w->server;
    uint32_t owner;

    if (req->status != PS_OK) {
        pss_reject(req, req->status, req->bad_reason ? req->bad_reason : "bad request");
        return;
    }
    if (req->late) {
        /* arrived after this worker began to stop: refused; requests that
         * arrived before are finished and answered normally */
        pss_reply(req, PS_ERR_SHUTDOWN, NULL, 0, NULL, 0, 0);
        return;
    }
    if (ps_log_enabled(PS_LOG_TRACE)) {
        char dump[256];
        ps_proto_dump(&req->hdr, sizeof(req->hdr) + req->hdr.body_len, dump, sizeof(dump));
        ps_trace("worker %u: %s", w->index, dump);
    }
    switch (req->hdr.type) {
    case PS_MSG_HELLO:
    case PS_MSG_STATFS:
    case PS_MSG_STATS:
        pss_admin_handle(w, req);
        return;
    case PS_MSG_AUTH:
        pss_auth_handle(w, req);
        return;
    case PS_MSG_OBJ_LIST:
    case PS_MSG_META_LIVE:
        pss_gc_handle(w, req);
        return;
    case PS_MSG_LIST:
    case PS_MSG_META_SYNC:
    case PS_MSG_LOOKUP_ID: /* (any worker: it reads) */
        pss_meta_handle(w, req);
        return;
    case PS_MSG_CREATE:
    case PS_MSG_LOOKUP:
    case PS_MSG_REMOVE:
    case PS_MSG_SETATTR: {
        uint32_t len = req->hdr.type == PS_MSG_CREATE    ? req->body.create.path_len
                       : req->hdr.type == PS_MSG_SETATTR ? req->body.setattr.path_len
                                                         : req->body.path.path_len;
        owner = ps_path_worker(req->data, len, s->nworkers);
        if (owner != w->index) {
            pss_reject(req, PS_ERR_WRONG_WORKER, "path owned by another worker");
            return;
        }
        pss_meta_handle(w, req);
        return;
    }
    case PS_MSG_RENAME: /* routed by the new name */
        owner = ps_path_worker((const char *)req->data + req->body.rename.src_len,
                               req->body.rename.dst_len, s->nworkers);
        if (owner != w->index) {
            pss_reject(req, PS_ERR_WRONG_WORKER, "path owned by another worker");
            return;
        }
        pss_meta_handle(w, req);
        return;
    case PS_MSG_MOVE: { /* routed by the name of the server that acts */
        const ps_move_req_t *m = &req->body.move;
        int at_src = m->op == PS_MOVE_LEAVE || m->op == PS_MOVE_DONE || m->op == PS_MOVE_QUERY;
        uint32_t len = at_src ? m->src_len : m->dst_len;

        owner =
            ps_path_worker((const char *)req->data + (at_src ? 0 : m->src_len), len, s->nworkers);
        if (len > 0 && owner != w->index) {
            pss_reject(req, PS_ERR_WRONG_WORKER, "path owned by another worker");
            return;
        }
        pss_move_handle(w, req);
        return;
    }
    case PS_MSG_OBJ_WRITE:
    case PS_MSG_OBJ_READ:
    case PS_MSG_OBJ_STAT:
    case PS_MSG_OBJ_TRUNCATE:
    case PS_MSG_OBJ_ALLOCATE:
    case PS_MSG_OBJ_REMOVE:
    case PS_MSG_OBJ_SYNC:
    case PS_MSG_OBJ_FLUSH: {
        uint64_t file_id = (req->hdr.type == PS_MSG_OBJ_WRITE || req->hdr.type == PS_MSG_OBJ_READ)
                               ? req->body.io.file_id
                               : req->body.obj.file_id;
        owner = ps_object_worker(file_id, s->nworkers);
        if (owner != w->index) {
            pss_reject(req, PS_ERR_WRONG_WORKER, "object owned by another worker");
            return;
        }
        pss_store_handle(w, req);
        return;
    }
    case PS_MSG_SHARED_FP:
        if (ps_object_worker(req->body.sfp.file_id, s->nworkers) != w->index) {
            pss_reject(req, PS_ERR_WRONG_WORKER, "shared file pointer owned by another worker");
            return;
        }
        pss_sfp_handle(w, req);
        return;
    default:
        pss_reject(req, PS_ERR_PROTO, "unknown message type");
        return;
    }
}

/*
 * Memory a request will need before it can be served: its rendezvous
 * receive buffer and, for reads, the reply buffer, as pss_buf_get takes
 * them (a 300 KiB batch takes a 2 MiB huge page). Eager data is already in
 * memory (held by UCX) and is not counted.
 */
static uint64_t pss_req_mem(const pss_req_t *req)
{
    uint64_t need = req->ucx_rndv ? pss_buf_cap(req->data_len + req->worker->server->mem_align) : 0;
    if (req->hdr.type == PS_MSG_OBJ_READ) {
        need += pss_buf_cap(req->body.io.payload_len);
    }
    return need;
}

/*
 * Admit requests to memory: while the buffers of admitted requests exceed
 * max_inflight, new large requests wait in arrival order (their rendezvous
 * data stays with the sender, which is back-pressure, not an error). One
 * request is always admitted when nothing else holds memory, so a single
 * batch of up to max_batch bytes always progresses.
 */
static int pss_admit(pss_worker_t *w, pss_req_t *req)
{
    uint64_t need = pss_req_mem(req);

    if (req->conn != NULL && req->conn->closed && req->status == PS_OK) {
        req->status = PS_ERR_CONN; /* (given up, or its peer failed): no memory, no data */
        req->bad_reason = "its connection was closed";
    }
    if (need == 0 || req->status != PS_OK || req->late) {
        return 1;
    }
    if (w->mem_inflight > 0 && w->mem_inflight + need > w->server->cfg.max_inflight) {
        return 0;
    }
    w->mem_inflight += need;
    req->mem_charged = need;
    return 1;
}

/* Could the first request waiting for memory be admitted now? */
static int pss_admit_ready(pss_worker_t *w)
{
    pss_req_t *req = w->mem_wait_head;
    return req != NULL && (w->mem_inflight == 0 ||
                           w->mem_inflight + pss_req_mem(req) <= w->server->cfg.max_inflight);
}

/*
 * May the request's client make it (authenticated, with a valid
 * capability for a data request: pss_auth_check)? Asked before the request
 * is given memory or its data is received, so that a peer that may not
 * cannot hold max_batch bytes of the server per request (nor make it read
 * a shared-memory peer's buffers). 0 if it was refused and answered.
 */
static int pss_checked(pss_worker_t *w, pss_req_t *req)
{
    if (req->checked || req->status != PS_OK || req->late) {
        return 1;
    }
    req->checked = 1;
    return pss_auth_check(w, req);
}

static void pss_process_incoming(pss_worker_t *w)
{
    /* Requests waiting for memory go first, in order, as far as it allows. */
    while (w->mem_wait_head != NULL && pss_admit(w, w->mem_wait_head)) {
        pss_req_t *req = w->mem_wait_head;
        w->mem_wait_head = req->next;
        if (w->mem_wait_head == NULL) {
            w->mem_wait_tail = &w->mem_wait_head;
        }
        req->next = NULL;
        if (req->ucx_rndv && req->status == PS_OK && pss_rndv_start(w, req)) {
            continue;
        }
        pss_dispatch(w, req);
    }
    while (w->incoming_head != NULL) {
        pss_req_t *req = w->incoming_head;
        w->incoming_head = req->next;
        if (w->incoming_head == NULL) {
            w->incoming_tail = &w->incoming_head;
        }
        req->next = NULL;
        if (!pss_checked(w, req)) {
            continue;
        }
        if (req->mem_charged == 0 && (w->mem_wait_head != NULL || !pss_admit(w, req))) {
            if (pss_req_mem(req) > 0 && req->status == PS_OK && !req->late) {
                *w->mem_wait_tail = req; /* waits for memory */
                w->mem_wait_tail = &req->next;
                continue;
            }
        }
        if (req->ucx_rndv && req->status == PS_OK) {
            if (pss_rndv_start(w, req)) {
                continue; /* pss_rndv_recv_cb queues it again */
            }
        }
        pss_dispatch(w, req);
    }
}

/* ---- set-up and the loop --------------------------------------------------------- */

static ps_status_t pss_epoll_add(pss_worker_t *w, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        ps_error("worker %u: epoll_ctl: %m", w->index);
        return PS_ERR_IO;
    }
    return PS_OK;
}

/* Read an eventfd's or a timerfd's count (nothing if it is 0: they are
 * non-blocking). */
static void pss_drain_counter(int fd)
{
    uint64_t v;
    ssize_t r = read(fd, &v, sizeof(v));
    (void)r;
}

static ps_status_t pss_worker_setup(pss_worker_t *w)
{
    pss_server_t *s = w->server;
    ucp_worker_params_t wparams;
    ucp_am_handler_param_t am;
    ucs_status_t ucs_status;
    ps_status_t status;

    if (s->topology != NULL && w->cpuset != NULL) {
        if (hwloc_set_cpubind(s->topology, w->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
            ps_warn("worker %u: hwloc_set_cpubind: %m (not pinned)", w->index);
            w->cpu = -1;
        }
    }

    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    ucs_status = ucp_worker_create(s->ucp_context, &wparams, &w->ucp_worker);
    if (ucs_status != UCS_OK) {
        ps_error("worker %u: ucp_worker_create: %s", w->index, ucs_status_string(ucs_status));
        return PS_ERR_CONN;
    }
    ucs_status = ucp_worker_get_efd(w->ucp_worker, &w->ucp_efd);
    if (ucs_status != UCS_OK) {
        ps_error("worker %u: ucp_worker_get_efd: %s", w->index, ucs_status_string(ucs_status));
        return PS_ERR_CONN;
    }
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (w->epfd < 0) {
        ps_error("worker %u: epoll_create1: %m", w->index);
        return PS_ERR_IO;
    }
    w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->wake_fd < 0) {
        ps_error("worker %u: eventfd: %m", w->index);
        return PS_ERR_IO;
    }
    status = pss_store_worker_init(w);
    if (status != PS_OK) {
        return status;
    }
    if (pss_epoll_add(w, w->ucp_efd) != PS_OK || pss_epoll_add(w, w->wake_fd) != PS_OK ||
        pss_epoll_add(w, w->aio_efd) != PS_OK) {
        return PS_ERR_IO;
    }

    memset(&am, 0, sizeof(am));
    am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    am.id = PS_AM_ID_REQUEST;
    am.cb = pss_am_cb;
    am.arg = w;
    am.flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA;
    ucs_status = ucp_worker_set_am_recv_handler(w->ucp_worker, &am);
    if (ucs_status != UCS_OK) {
        ps_error("worker %u: ucp_worker_set_am_recv_handler: %s", w->index,
                 ucs_status_string(ucs_status));
        return PS_ERR_CONN;
    }
    return pss_listen(w);
}

/* Stop accepting connections. */
static void pss_worker_unlisten(pss_worker_t *w)
{
    if (w->listener != NULL) {
        ucp_listener_destroy(w->listener);
        w->listener = NULL;
    }
    if (w->shm_listener != NULL) {
        ucp_listener_destroy(w->shm_listener);
        w->shm_listener = NULL;
    }
}

static void pss_worker_teardown(pss_worker_t *w)
{
    pss_worker_unlisten(w);
    if (w->ucp_worker != NULL) {
        pss_conn_close_all(w, pss_reply_abandon);
    }
    pss_store_worker_cleanup(w);
    pss_sfp_cleanup(w);
    if (w->ucp_worker != NULL) {
        ucp_worker_destroy(w->ucp_worker);
        w->ucp_worker = NULL;
    }
    pss_reply_free_abandoned(w); /* no send callback can come any more */
    pss_buf_release_all(w); /* after the replies' buffers came back */
    free(w->conns);
    w->conns = NULL;
    if (w->epfd >= 0) {
        close(w->epfd);
    }
    /* answers the reaper still has (a drain that timed out) would wake us
     * by the wake eventfd: let them come first, never into a reused number
     * (the main thread closes it after the join: pss_worker_join_all) */
    if (w->wake_fd >= 0 &&
        (atomic_load(&w->late) != NULL || w->inflight > 0 || w->fb_inflight > 0)) {
        pss_reaper_drain(w->server->reaper);
    }
}

static void pss_worker_loop(pss_worker_t *w)
{
    pss_server_t *s = w->server;
    uint64_t deadline = 0, spin_end = 0;
    struct epoll_event evs[4];

    for (;;) {
        unsigned events = 0, p;
        int timeout_ms, gave_up = 0;

        while ((p = ucp_worker_progress(w->ucp_worker)) != 0) {
            events += p;
        }
        (void)pss_rndv_expire(w, &gave_up);
        pss_conn_close_dead(w, pss_reply_abandon);
        pss_process_incoming(w);
        pss_store_progress(w);
        if (w->incoming_head != NULL || pss_admit_ready(w)) {
            continue;
        }

        if (atomic_load(&s->stopping)) {
            if (!w->stop_seen) {
                w->stop_seen = 1;
                deadline = ps_time_ns() + (uint64_t)(s->cfg.drain_timeout * 1e9);
                pss_worker_unlisten(w);
                ps_info("worker %u: stopping, %llu requests in flight", w->index,
                        (unsigned long long)w->inflight);
            }
            if (w->inflight == 0 && w->sends_inflight == 0 && !pss_store_busy(w)) {
                break;
            }
            if (ps_time_ns() > deadline) {
                ps_warn("worker %u: drain timeout with %llu requests and %llu replies in "
                        "flight",
                        w->index, (unsigned long long)w->inflight,
                        (unsigned long long)w->sends_inflight);
                break;
            }
        }

        if (pss_spin_more(w, events, ps_time_ns(), &spin_end)) {
            sched_yield();
            continue;
        }
        /* (again: receives may have started since the top of the loop) */
        timeout_ms = pss_rndv_expire(w, &gave_up);
        if (gave_up) {
            continue;
        }
        ucs_status_t status = ucp_worker_arm(w->ucp_worker);
        if (status == UCS_ERR_BUSY) {
            continue;
        }
        if (status != UCS_OK) {
            ps_error("worker %u: ucp_worker_arm: %s", w->index, ucs_status_string(status));
        }
        int n = epoll_wait(w->epfd, evs, 4,
                           w->stop_seen && (timeout_ms < 0 || timeout_ms > 100) ? 100 : timeout_ms);
        if (n < 0 && errno != EINTR) {
            ps_error("worker %u: epoll_wait: %m", w->index);
        }
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == w->wake_fd || fd == w->aio_efd || fd == w->stage_tfd) {
                /* Counters, read here whatever woke us: one left unread keeps
                 * epoll_wait returning at once. aio completions are reaped
                 * and due staged blocks written by pss_store_progress. */
                pss_drain_counter(fd);
            }
        }
    }
    pss_store_sync_all(w);
}

static void *pss_worker_main(void *arg)
{
    pss_worker_t *w = arg;
    pss_server_t *s = w->server;
    char name[16];

    snprintf(name, sizeof(name), "pss-w%u", w->index);
    pthread_setname_np(pthread_self(), name);
    w->start_status = pss_worker_setup(w);

    /* Report to the main thread, then wait for its go: the ports array is
     * complete (and read-only) once every worker has reported. */
    pthread_mutex_lock(&s->start_lock);
    s->nready++;
    pthread_cond_broadcast(&s->start_cond);
    while (!s->go) {
        pthread_cond_wait(&s->start_cond, &s->start_lock);
    }
    pthread_mutex_unlock(&s->start_lock);

    if (w->start_status == PS_OK && !atomic_load(&s->stopping)) {
        pss_worker_loop(w);
    }
    pss_worker_teardown(w);
    return NULL;
}

ps_status_t pss_worker_start_all(pss_server_t *s)
{
    ps_status_t status = PS_OK;
    uint32_t started = 0;

    for (uint32_t i = 0; i < s->nworkers; i++) {
        pss_worker_t *w = s->workers[i];
        int pthread_errno = pthread_create(&w->thread, NULL, pss_worker_main, w);
        if (pthread_errno != 0) {
            errno = pthread_errno;
            ps_error("pthread_create for worker %u: %m", i);
            status = PS_ERR_NO_MEMORY;
            break;
        }
        w->started = 1;
        started++;
    }
    pthread_mutex_lock(&s->start_lock);
    while (s->nready < started) {
        pthread_cond_wait(&s->start_cond, &s->start_lock);
    }
    for (uint32_t i = 0; i < started; i++) {
        if (s->workers[i]->start_status != PS_OK) {
            status = s->workers[i]->start_status;
        }
    }
    if (status != PS_OK) {
        atomic_store(&s->stopping, 1);
    }
    s->go = 1;
    pthread_cond_broadcast(&s->start_cond);
    pthread_mutex_unlock(&s->start_lock);
    return status;
}

/* Wake every worker and wait for it to end; then close its wake eventfd,
 * which the wake may reach after a worker that saw the stop by itself has
 * ended (closed by the worker, that write could land in a descriptor
 * another thread opened meanwhile under the same number: an object file or
 * a connection; found by ThreadSanitizer, session 82). */
void pss_worker_join_all(pss_server_t *s)
{
    for (uint32_t i = 0; i < s->nworkers; i++) {
        pss_worker_wake(s->workers[i]);
    }
    for (uint32_t i = 0; i < s->nworkers; i++) {
        pss_worker_t *w = s->workers[i];
        if (w->started) {
            pthread_join(w->thread, NULL);
            w->started = 0;
        }
        if (w->wake_fd >= 0) {
            close(w->wake_fd);
            w->wake_fd = -1;
        }
    }
}

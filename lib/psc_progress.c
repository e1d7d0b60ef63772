/*
 * psc_progress.c: the progress thread, connections, and request/reply
 * matching.
 *
 * Every pstripe_fs_t has one progress thread that owns its UCX context and
 * worker. It sleeps in epoll_wait() on two fds, the worker's event fd (armed
 * with ucp_worker_arm() only once progress found nothing to do) and an
 * eventfd that API threads write when they queue work, with a timeout equal
 * to the nearest request deadline. It spins briefly (PSC_SPIN_NS) before
 * sleeping, because a reply often follows a request within microseconds, but
 * never polls while idle: the machines we run on are shared with MPI ranks
 * and daemons.
 *
 * Requests are matched to replies by req_id = (generation << 32) | slot,
 * where slot indexes fs->slots; a reply whose id is not in the table (late,
 * duplicated, forged) is dropped. Each op sent gets a deadline (timeout, or
 * connect_timeout for HELLO); when one passes, the whole connection to that
 * server is declared dead (a HELLO's deadline is the smaller of the two, so
 * that a request that must reconnect first still fails within timeout): its
 * endpoints are closed with
 * UCP_EP_CLOSE_FLAG_FORCE, which completes every UCX request still using the
 * caller's memory, and all its ops fail with PS_ERR_TIMEOUT. UCX reports a
 * peer that vanished (UCP_ERR_HANDLING_MODE_PEER) through psc_ep_err_cb, which
 * does the same with PS_ERR_CONN. A failed server is reconnected (HELLO
 * again) the next time an op needs it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ps_log.h"
#include "ps_status.h"
#include "ps_time.h"
#include "psc_internal.h"

#define PSC_SPIN_NS        20000ull      /* busy progress before sleeping, ns */
#define PSC_STOP_FLUSH_NS  2000000000ull /* longest graceful close at disconnect */
#define PSC_HELLO_DATA_MAX (PS_MAX_WORKERS * sizeof(uint32_t))

static void psc_server_connect(pstripe_fs_t *fs, psc_server_t *srv);

/* --- calls ------------------------------------------------------------------ */

void psc_call_init(psc_call_t *call)
{
    call->pending = 1;
    call->done = 0;
    call->status = PS_OK;
    call->msg[0] = '\0';
}

static void psc_call_release_locked(pstripe_fs_t *fs, psc_call_t *call, int status, const char *msg)
{
    if (status != PS_OK && call->status == PS_OK) {
        call->status = status;
        snprintf(call->msg, sizeof(call->msg), "%s", msg);
    }
    if (--call->pending == 0) {
        call->done = 1;
        pthread_cond_broadcast(&fs->cond);
    }
}

int psc_call_wait(pstripe_fs_t *fs, psc_call_t *call)
{
    pthread_mutex_lock(&fs->lock);
    psc_call_release_locked(fs, call, PS_OK, "");
    while (!call->done) {
        pthread_cond_wait(&fs->cond, &fs->lock);
    }
    pthread_mutex_unlock(&fs->lock);
    if (call->status != PS_OK) {
        psc_set_error("%s", call->msg[0] ? call->msg : ps_status_string(call->status));
    }
    return call->status;
}

void psc_call_complete(pstripe_fs_t *fs, psc_call_t *call, int status, const char *msg)
{
    pthread_mutex_lock(&fs->lock);
    psc_call_release_locked(fs, call, status, msg);
    pthread_mutex_unlock(&fs->lock);
}

/* --- posting ------------------------------------------------------------------ */

static void psc_wake(pstripe_fs_t *fs)
{
    uint64_t one = 1;
    ssize_t ret;

    do {
        ret = write(fs->wake_fd, &one, sizeof(one));
    } while (ret < 0 && errno == EINTR);
    /* EAGAIN means the counter is already huge: the thread is awake anyway. */
}

void psc_post(pstripe_fs_t *fs, psc_cmd_t *cmd)
{
    int was_empty;

    pthread_mutex_lock(&fs->lock);
    was_empty = ucs_list_is_empty(&fs->postq);
    ucs_list_add_tail(&fs->postq, &cmd->list);
    pthread_mutex_unlock(&fs->lock);
    if (was_empty) {
        psc_wake(fs);
    }
}

static void psc_op_submit_cmd(pstripe_fs_t *fs, psc_cmd_t *cmd)
{
    psc_op_submit(fs, ucs_container_of(cmd, psc_op_t, cmd));
}

void psc_op_init(psc_op_t *op, uint32_t server, uint16_t type, const void *body, uint32_t body_len)
{
    memset(op, 0, offsetof(psc_op_t, h));
    op->server = server;
    op->route = PSC_ROUTE_ANY;
    op->type = type;
    op->hdr_len = (uint32_t)sizeof(ps_msg_hdr_t) + body_len;
    ps_msg_hdr_init(&op->h.hdr, (ps_msg_type_t)type, 0, 0, body_len);
    if (body_len > 0) {
        memcpy(op->h.bytes + sizeof(ps_msg_hdr_t), body, body_len);
    }
    op->send_buf = NULL;
    op->send_count = 0;
    op->send_iov = 0;
    op->rep_body = NULL;
    op->rep_body_len = 0;
    op->recv_mode = PSC_RECV_NONE;
    op->recv_buf = NULL;
    op->recv_count = 0;
    op->recv_iov = 0;
    op->recv_len = 0;
    op->recv_max = 0;
    op->recv_alloc = NULL;
    op->recv_alloc_len = 0;
    op->stage_min = 0;
    op->staged = NULL;
    op->staged_cap = 0;
    op->status = PS_OK;
    op->msg[0] = '\0';
    op->fs = NULL;
    op->state = PSC_OP_IDLE;
    op->req_id = 0;
    op->conn = NULL;
    op->worker = 0;
    op->send_req = NULL;
    op->recv_req = NULL;
    op->send_done = 0;
    op->reply_done = 0;
    op->deadline_ns = 0;
    op->timeout_s = 0;
}

void psc_op_post(pstripe_fs_t *fs, psc_op_t *op, psc_call_t *call)
{
    int was_empty;

    op->call = call;
    op->cmd.fn = psc_op_submit_cmd;
    op->state = PSC_OP_POSTED;
    pthread_mutex_lock(&fs->lock);
    call->pending++;
    was_empty = ucs_list_is_empty(&fs->postq);
    ucs_list_add_tail(&fs->postq, &op->cmd.list);
    pthread_mutex_unlock(&fs->lock);
    if (was_empty) {
        psc_wake(fs);
    }
}

void psc_op_error(psc_op_t *op, int status, const char *fmt, ...)
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

/* --- staging buffers ------------------------------------------------------------- */

/*
 * Staging buffers are reused because fresh memory is expensive to touch: on
 * the VMs we run on a first-touch page fault costs 30-45 us per 4 KiB page
 * (64 MiB: 0.5-0.8 s, i.e. slower than the disk), a second pass over the
 * same memory 10 ms. Buffers of 2 MiB and more come from mmap with
 * MADV_HUGEPAGE (first touch 3-6x cheaper where THP is in madvise mode).
 * Idle buffers are kept up to fs->bounce_limit bytes (enough for a full
 * pipeline to every server) and released after PSC_BOUNCE_IDLE_NS unused.
 */
#define PSC_BOUNCE_HUGE    (2ull << 20)
#define PSC_BOUNCE_IDLE_NS 5000000000ull

static void *psc_bounce_alloc(size_t size)
{
    void *buf;

    if (size < PSC_BOUNCE_HUGE) {
        return malloc(size ? size : 1);
    }
    buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        return NULL;
    }
    madvise(buf, size, MADV_HUGEPAGE); /* a hint: failure is harmless */
    return buf;
}

static void psc_bounce_release(void *buf, size_t size)
{
    if (size < PSC_BOUNCE_HUGE) {
        free(buf);
    } else {
        munmap(buf, size);
    }
}

void *psc_bounce_get(pstripe_fs_t *fs, size_t size, size_t *cap)
{
    unsigned best = fs->nbounce;
    void *buf;

    for (unsigned i = 0; i < fs->nbounce; i++) {
        if (fs->bounce[i].size >= size && fs->bounce[i].size <= 2 * size + 65536 &&
            (best == fs->nbounce || fs->bounce[i].size < fs->bounce[best].size)) {
            best = i;
        }
    }
    if (best < fs->nbounce) {
        buf = fs->bounce[best].buf;
        *cap = fs->bounce[best].size;
        fs->bounce[best] = fs->bounce[--fs->nbounce];
        return buf;
    }
    /* round large buffers up so that they fit later batches of similar size */
    *cap = size < PSC_BOUNCE_HUGE ? size : (size + PSC_BOUNCE_HUGE - 1) & ~(PSC_BOUNCE_HUGE - 1);
    return psc_bounce_alloc(*cap);
}

void psc_bounce_put(pstripe_fs_t *fs, void *buf, size_t cap)
{
    uint64_t limit = __atomic_load_n(&fs->bounce_limit, __ATOMIC_RELAXED);
    uint64_t total = cap;

    if (buf == NULL) {
        return;
    }
    for (unsigned i = 0; i < fs->nbounce; i++) {
        total += fs->bounce[i].size;
    }
    if (fs->nbounce == PSC_BOUNCE_CACHE || total > limit) {
        psc_bounce_release(buf, cap);
        return;
    }
    fs->bounce[fs->nbounce].buf = buf;
    fs->bounce[fs->nbounce].size = cap;
    fs->bounce[fs->nbounce].idle_since_ns = ps_time_ns();
    fs->nbounce++;
}

/* Release buffers idle for PSC_BOUNCE_IDLE_NS; returns ns until the next
 * one would be released (0: the cache is empty). */
static uint64_t psc_bounce_trim(pstripe_fs_t *fs, uint64_t now)
{
    uint64_t next = 0;

    for (unsigned i = 0; i < fs->nbounce;) {
        uint64_t age = now - fs->bounce[i].idle_since_ns;

        if (age >= PSC_BOUNCE_IDLE_NS) {
            psc_bounce_release(fs->bounce[i].buf, fs->bounce[i].size);
            fs->bounce[i] = fs->bounce[--fs->nbounce];
            continue;
        }
        if (next == 0 || PSC_BOUNCE_IDLE_NS - age < next) {
            next = PSC_BOUNCE_IDLE_NS - age;
        }
        i++;
    }
    return next;
}

static void psc_bounce_free_all(pstripe_fs_t *fs)
{
    while (fs->nbounce > 0) {
        fs->nbounce--;
        psc_bounce_release(fs->bounce[fs->nbounce].buf, fs->bounce[fs->nbounce].size);
    }
}

/* --- req_id slot table ----------------------------------------------------------- */

static int psc_slot_insert(pstripe_fs_t *fs, psc_op_t *op)
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

static psc_op_t *psc_slot_find(pstripe_fs_t *fs, uint64_t req_id)
{
    uint32_t idx = (uint32_t)req_id;

    if (req_id == 0 || idx >= fs->nslots || fs->slots[idx] == NULL ||
        fs->slots[idx]->req_id != req_id) {
        return NULL;
    }
    return fs->slots[idx];
}

static void psc_slot_remove(pstripe_fs_t *fs, psc_op_t *op)
{
    uint32_t idx = (uint32_t)op->req_id;

    if (op->req_id == 0) {
        return;
    }
    fs->slots[idx] = NULL;
    fs->free_slots[fs->nfree++] = idx;
    op->req_id = 0;
}

/* --- op state ------------------------------------------------------------------ */

static void psc_op_make_ready(pstripe_fs_t *fs, psc_op_t *op)
{
    if (op->state == PSC_OP_INFLIGHT || op->state == PSC_OP_WAITING) {
        ucs_list_del(&op->cmd.list);
    }
    op->state = PSC_OP_READY;
    ucs_list_add_tail(&fs->readyq, &op->cmd.list);
}

static void psc_op_check_ready(pstripe_fs_t *fs, psc_op_t *op)
{
    if (op->state == PSC_OP_INFLIGHT && op->send_done && op->reply_done && op->recv_req == NULL) {
        psc_op_make_ready(fs, op);
    }
}

/* An op that never reached the wire. */
static void psc_op_fail_now(pstripe_fs_t *fs, psc_op_t *op, int status, const char *msg)
{
    psc_op_error(op, status, "%s", msg);
    psc_op_make_ready(fs, op);
}

static void psc_op_finish(pstripe_fs_t *fs, psc_op_t *op)
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

/* --- connection failure ----------------------------------------------------------- */

/* From UCX callbacks: record the failure, handled by the main loop. */
static void psc_conn_fail_later(pstripe_fs_t *fs, psc_conn_t *conn, int status, const char *fmt,
                                ...) __attribute__((format(printf, 4, 5)));
static void psc_conn_fail_later(pstripe_fs_t *fs, psc_conn_t *conn, int status, const char *fmt,
                                ...)
{
    va_list ap;

    if (conn->failed || conn->fail_pending) {
        return;
    }
    conn->fail_pending = 1;
    conn->fail_status = status;
    va_start(ap, fmt);
    vsnprintf(conn->fail_msg, sizeof(conn->fail_msg), fmt, ap);
    va_end(ap);
    ucs_list_add_tail(&fs->failq, &conn->fail_link);
}

/* The connection's failure message for a UCX error status. */
static void psc_conn_lost(pstripe_fs_t *fs, psc_conn_t *conn, ucs_status_t status)
{
    if (conn->nworkers == 0) {
        psc_conn_fail_later(fs, conn, PS_ERR_CONN, "cannot connect to server %s: %s",
                            conn->server->addr, ucs_status_string(status));
    } else {
        psc_conn_fail_later(fs, conn, PS_ERR_CONN, "connection to server %s lost: %s",
                            conn->server->addr, ucs_status_string(status));
    }
}

static void psc_ep_close_cb(void *request, ucs_status_t status, void *user_data)
{
    psc_conn_t *conn = user_data;

    conn->nclosing--;
    ucp_request_free(request);
}

static void psc_conn_close_eps(pstripe_fs_t *fs, psc_conn_t *conn, int force)
{
    ucp_request_param_t param;
    void *req;

    for (uint32_t i = 0; i < PS_MAX_WORKERS; i++) {
        if (conn->eps[i].ep == NULL) {
            continue;
        }
        param.op_attr_mask =
            UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
        param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
        param.cb.send = psc_ep_close_cb;
        param.user_data = conn;
        req = ucp_ep_close_nbx(conn->eps[i].ep, &param);
        conn->eps[i].ep = NULL;
        if (UCS_PTR_IS_PTR(req)) {
            conn->nclosing++;
        } else if (UCS_PTR_IS_ERR(req)) {
            ps_debug("close endpoint to %s worker %u: %s", conn->server->addr, i,
                     ucs_status_string(UCS_PTR_STATUS(req)));
        }
    }
}

static void psc_server_fail_waiters(pstripe_fs_t *fs, psc_server_t *srv, int status,
                                    const char *msg)
{
    psc_op_t *op, *tmp;

    ucs_list_for_each_safe(op, tmp, &srv->waitq, cmd.list)
    {
        psc_op_fail_now(fs, op, status, msg);
    }
}

/*
 * Declare a connection dead: every op on it fails with status/msg (those
 * whose UCX send or receive is still outstanding finish when UCX completes
 * it, which the forced close makes happen promptly), its endpoints are
 * closed, and the server goes to FAILED so that the next op reconnects.
 */
static void psc_conn_fail(pstripe_fs_t *fs, psc_conn_t *conn, int status, const char *msg)
{
    psc_server_t *srv = conn->server;
    psc_op_t *op, *tmp;

    if (conn->failed) {
        return;
    }
    conn->failed = 1;
    if (conn->fail_pending) {
        /* keep the first cause recorded by a callback */
        ucs_list_del(&conn->fail_link);
        conn->fail_pending = 0;
    } else {
        conn->fail_status = status;
        if (msg != conn->fail_msg) {
            snprintf(conn->fail_msg, sizeof(conn->fail_msg), "%s", msg);
        }
    }
    if (conn->fail_status == PS_ERR_CANCELED) {
        ps_debug("%s", conn->fail_msg);
    } else {
        ps_warn("%s", conn->fail_msg);
    }
    ucs_list_add_tail(&fs->dead_conns, &conn->list);

    ucs_list_for_each_safe(op, tmp, &conn->inflight, cmd.list)
    {
        psc_slot_remove(fs, op);
        if (!op->reply_done || op->recv_req != NULL) {
            op->reply_done = 1;
            psc_op_error(op, conn->fail_status, "%s", conn->fail_msg);
        }
        if ((op->send_req != NULL || op->recv_req != NULL) && op->release_cb != NULL &&
            !(op->send_req != NULL && op->send_user_mem) &&
            !(op->recv_req != NULL && op->staged == NULL)) {
            /* UCX only uses library memory: complete now, free later
             * (UCX may take seconds to release requests of a closed ep) */
            psc_op_make_ready(fs, op);
        } else {
            psc_op_check_ready(fs, op);
        }
    }
    psc_conn_close_eps(fs, conn, 1);
    if (srv->conn == conn) {
        /* Ops waiting for this connection fail with it (it failed while
         * connecting); the next op will try a new connection. */
        srv->conn = NULL;
        srv->state = PSC_SRV_FAILED;
        psc_server_fail_waiters(fs, srv, conn->fail_status, conn->fail_msg);
    }
}

static void psc_conn_free_dead(pstripe_fs_t *fs)
{
    psc_conn_t *conn, *tmp;

    ucs_list_for_each_safe(conn, tmp, &fs->dead_conns, list)
    {
        if (conn->nclosing == 0 && ucs_list_is_empty(&conn->inflight) &&
            conn->hello.state != PSC_OP_READY) {
            ucs_list_del(&conn->list);
            free(conn);
        }
    }
}

/* --- UCX callbacks ------------------------------------------------------------ */

static void psc_ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    psc_ep_t *pep = arg;
    psc_conn_t *conn = pep->conn;
    pstripe_fs_t *fs = conn->server->fs;

    (void)ep;
    (void)pep;
    psc_conn_lost(fs, conn, status);
}

/* A UCX request of an op that was completed early (detached) is released:
 * free the op when it was the last one. Its connection may be gone. */
static void psc_op_detached_release(psc_op_t *op)
{
    if (op->send_req == NULL && op->recv_req == NULL) {
        if (op->staged != NULL) {
            psc_bounce_put(op->fs, op->staged, op->staged_cap);
            op->staged = NULL;
        }
        op->release_cb(op->fs, op);
    }
}

static void psc_send_cb(void *request, ucs_status_t status, void *user_data)
{
    psc_op_t *op = user_data;
    psc_conn_t *conn = op->conn;
    pstripe_fs_t *fs;

    ucp_request_free(request);
    op->send_req = NULL;
    op->send_done = 1;
    if (op->state == PSC_OP_READY || op->state == PSC_OP_DONE) {
        if (op->state == PSC_OP_DONE) {
            psc_op_detached_release(op);
        }
        return;
    }
    fs = conn->server->fs;
    if (status != UCS_OK) {
        if (!op->reply_done) {
            op->reply_done = 1;
            psc_slot_remove(fs, op);
        }
        psc_conn_lost(fs, conn, status);
        psc_op_error(op, conn->fail_status, "%s", conn->fail_msg);
    }
    psc_op_check_ready(fs, op);
}

/* Copy eager data into the op's destination. */
static void psc_scatter(psc_op_t *op, const void *data, size_t length)
{
    const ucp_dt_iov_t *iov;
    const char *p = data;

    if (!op->recv_iov) {
        memcpy(op->recv_buf, data, length);
        return;
    }
    iov = op->recv_buf;
    for (size_t i = 0; i < op->recv_count && length > 0; i++) {
        size_t n = iov[i].length < length ? iov[i].length : length;
        memcpy(iov[i].buffer, p, n);
        p += n;
        length -= n;
    }
}

static void psc_recv_cb(void *request, ucs_status_t status, size_t length, void *user_data)
{
    psc_op_t *op = user_data;
    psc_conn_t *conn = op->conn;
    pstripe_fs_t *fs;

    ucp_request_free(request);
    op->recv_req = NULL;
    if (op->state == PSC_OP_READY || op->state == PSC_OP_DONE) {
        if (op->state == PSC_OP_DONE) {
            psc_op_detached_release(op);
        }
        return;
    }
    fs = conn->server->fs;
    if (status != UCS_OK) {
        psc_conn_lost(fs, conn, status);
        psc_op_error(op, conn->fail_status, "%s", conn->fail_msg);
    } else if (op->staged != NULL) {
        psc_scatter(op, op->staged, op->recv_len);
    }
    psc_op_check_ready(fs, op);
}

/* Receive a reply's data into dst (count bytes or IOV entries). */
static void psc_recv_data(pstripe_fs_t *fs, psc_op_t *op, void *data, size_t length,
                          const ucp_am_recv_param_t *param, void *dst, size_t count, int iov)
{
    ucp_request_param_t rparam;
    void *req;

    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        if (iov || dst != data) {
            psc_scatter(op, data, length);
        }
        return;
    }
    if (iov && op->stage_min != 0 && length >= op->stage_min) {
        /* UCX 1.13 receives rendezvous data into an IOV through 8 KiB
         * active messages; into one contiguous buffer it can use 64 KiB
         * zero-copy fragments or RMA. Stage it and scatter on completion. */
        op->staged = psc_bounce_get(fs, length, &op->staged_cap);
        if (op->staged != NULL) {
            dst = op->staged;
            count = length;
            iov = 0;
        }
    }
    rparam.op_attr_mask =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
    rparam.cb.recv_am = psc_recv_cb;
    rparam.user_data = op;
    rparam.datatype = iov ? ucp_dt_make_iov() : ucp_dt_make_contig(1);
    req = ucp_am_recv_data_nbx(fs->ucp_worker, data, dst, count, &rparam);
    if (req == NULL && op->staged != NULL) {
        psc_scatter(op, op->staged, length);
    }
    if (UCS_PTR_IS_ERR(req)) {
        psc_op_error(op, PS_ERR_CONN, "receiving %s reply data from server %s failed: %s",
                     ps_msg_type_name(op->type), op->conn->server->addr,
                     ucs_status_string(UCS_PTR_STATUS(req)));
    } else if (req != NULL) {
        op->recv_req = req;
    }
}

static ucs_status_t psc_am_reply_cb(void *arg, const void *header, size_t header_length, void *data,
                                    size_t length, const ucp_am_recv_param_t *param)
{
    pstripe_fs_t *fs = arg;
    ps_msg_hdr_t hdr;
    ps_msg_view_t view;
    const char *addr;
    psc_op_t *op;
    int status;

    if (header_length < sizeof(hdr)) {
        ps_warn("dropping a reply with a %zu-byte header", header_length);
        return UCS_OK;
    }
    memcpy(&hdr, header, sizeof(hdr));
    op = psc_slot_find(fs, hdr.req_id);
    if (op == NULL) {
        ps_debug("dropping a late or unknown reply (req_id %#llx)", (unsigned long long)hdr.req_id);
        return UCS_OK;
    }
    addr = op->conn->server->addr;
    psc_slot_remove(fs, op);
    op->reply_done = 1;

    if (ps_proto_decode(header, header_length, 1, &view) != PS_OK || hdr.type != op->type) {
        psc_op_error(op, PS_ERR_PROTO, "server %s sent a malformed reply to %s", addr,
                     ps_msg_type_name(op->type));
        goto out;
    }
    if (hdr.status != PS_OK) {
        status = hdr.status;
        if (status > 0 || status <= PS_ERR_LAST) {
            psc_op_error(op, PS_ERR_PROTO, "server %s answered %s with unknown status %d", addr,
                         ps_msg_type_name(op->type), status);
        } else {
            psc_op_error(op, status, "server %s: %s: %s", addr, ps_msg_type_name(op->type),
                         ps_status_string(status));
        }
        goto out;
    }
    if (length != view.data_len) {
        psc_op_error(op, PS_ERR_PROTO, "server %s sent %zu bytes of %s reply data, expected %llu",
                     addr, length, ps_msg_type_name(op->type), (unsigned long long)view.data_len);
        goto out;
    }
    if (op->rep_body != NULL) {
        size_t n = hdr.body_len < op->rep_body_len ? hdr.body_len : op->rep_body_len;

        memset(op->rep_body, 0, op->rep_body_len);
        memcpy(op->rep_body, view.body, n);
    }
    if (length == 0) {
        goto out;
    }
    switch (op->recv_mode) {
    case PSC_RECV_BUF:
        if (length != op->recv_len) {
            psc_op_error(op, PS_ERR_PROTO, "server %s sent %zu bytes for %s, expected %llu", addr,
                         length, ps_msg_type_name(op->type), (unsigned long long)op->recv_len);
            goto out;
        }
        psc_recv_data(fs, op, data, length, param, op->recv_buf, op->recv_count, op->recv_iov);
        break;
    case PSC_RECV_ALLOC:
        if (length > op->recv_max) {
            psc_op_error(op, PS_ERR_PROTO, "server %s sent %zu bytes for %s, at most %llu allowed",
                         addr, length, ps_msg_type_name(op->type),
                         (unsigned long long)op->recv_max);
            goto out;
        }
        op->recv_alloc = malloc(length);
        if (op->recv_alloc == NULL) {
            psc_op_error(op, PS_ERR_NO_MEMORY, "no memory for a %zu-byte %s reply", length,
                         ps_msg_type_name(op->type));
            goto out;
        }
        op->recv_alloc_len = length;
        op->recv_buf = op->recv_alloc;
        op->recv_iov = 0;
        psc_recv_data(fs, op, data, length, param, op->recv_alloc, length, 0);
        break;
    default:
        psc_op_error(op, PS_ERR_PROTO, "server %s sent unexpected data with %s", addr,
                     ps_msg_type_name(op->type));
        break;
    }

out:
    psc_op_check_ready(fs, op);
    return UCS_OK;
}

/* --- sending ---------------------------------------------------------------------- */

static uint32_t psc_route_worker(const psc_op_t *op, uint32_t nworkers)
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

static void psc_update_deadline(pstripe_fs_t *fs, uint64_t deadline)
{
    if (fs->next_deadline_ns == 0 || deadline < fs->next_deadline_ns) {
        fs->next_deadline_ns = deadline;
    }
}

static void psc_op_send(pstripe_fs_t *fs, psc_conn_t *conn, uint32_t worker, psc_op_t *op)
{
    ucp_request_param_t param;
    uint64_t timeout_ns;
    void *req;

    op->fs = fs;
    op->conn = conn;
    op->worker = worker;
    op->send_done = 0;
    op->reply_done = 0;
    if (psc_slot_insert(fs, op) != PS_OK) {
        psc_op_fail_now(fs, op, PS_ERR_NO_MEMORY, "no memory for a request slot");
        return;
    }
    op->h.hdr.req_id = op->req_id;
    op->state = PSC_OP_INFLIGHT;
    ucs_list_add_tail(&conn->inflight, &op->cmd.list);
    /* A HELLO waits connect_timeout, but never longer than timeout: after a
     * failure the next request reconnects first, and a request must fail
     * within timeout whatever it waits for. */
    timeout_ns = __atomic_load_n(&fs->timeout_ns, __ATOMIC_RELAXED);
    if (op->type == PS_MSG_HELLO) {
        uint64_t c = __atomic_load_n(&fs->connect_timeout_ns, __ATOMIC_RELAXED);
        timeout_ns = c < timeout_ns ? c : timeout_ns;
    }
    op->timeout_s = (double)timeout_ns / 1e9;
    op->deadline_ns = ps_time_ns() + timeout_ns;
    psc_update_deadline(fs, op->deadline_ns);

    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                         UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_DATATYPE;
    param.cb.send = psc_send_cb;
    param.user_data = op;
    param.flags = UCP_AM_SEND_FLAG_REPLY;
    param.datatype = op->send_iov ? ucp_dt_make_iov() : ucp_dt_make_contig(1);
    ps_trace("send %s req_id %#llx to %s worker %u, %zu data %s", ps_msg_type_name(op->type),
             (unsigned long long)op->req_id, conn->server->addr, worker, op->send_count,
             op->send_iov ? "iov entries" : "bytes");
    req = ucp_am_send_nbx(conn->eps[worker].ep, PS_AM_ID_REQUEST, op->h.bytes, op->hdr_len,
                          op->send_buf, op->send_count, &param);
    if (req == NULL) {
        op->send_done = 1;
    } else if (UCS_PTR_IS_ERR(req)) {
        op->send_done = 1;
        if (!op->reply_done) {
            op->reply_done = 1;
            psc_slot_remove(fs, op);
        }
        psc_conn_lost(fs, conn, UCS_PTR_STATUS(req));
        psc_op_error(op, conn->fail_status, "%s", conn->fail_msg);
        psc_op_check_ready(fs, op);
    } else {
        op->send_req = req;
    }
}

static void psc_op_dispatch(pstripe_fs_t *fs, psc_server_t *srv, psc_op_t *op)
{
    psc_conn_t *conn = srv->conn;

    if (op->connect_only) {
        psc_op_make_ready(fs, op);
        return;
    }
    psc_op_send(fs, conn, psc_route_worker(op, conn->nworkers), op);
}

void psc_op_submit(pstripe_fs_t *fs, psc_op_t *op)
{
    psc_server_t *srv;

    if (op->server >= fs->nservers) {
        op->state = PSC_OP_IDLE;
        psc_op_fail_now(fs, op, PS_ERR_INVALID, "no such server");
        return;
    }
    srv = &fs->servers[op->server];
    op->state = PSC_OP_IDLE;
    switch (srv->state) {
    case PSC_SRV_CONNECTED:
        psc_op_dispatch(fs, srv, op);
        break;
    case PSC_SRV_CONNECTING:
        op->state = PSC_OP_WAITING;
        ucs_list_add_tail(&srv->waitq, &op->cmd.list);
        break;
    default:
        op->state = PSC_OP_WAITING;
        ucs_list_add_tail(&srv->waitq, &op->cmd.list);
        psc_server_connect(fs, srv);
        break;
    }
}

/* --- connecting ----------------------------------------------------------------- */

static int psc_ep_create(pstripe_fs_t *fs, psc_conn_t *conn, uint32_t worker, uint16_t port)
{
    psc_server_t *srv = conn->server;
    struct sockaddr_storage sa = srv->sa;
    ucp_ep_params_t params;
    ucs_status_t status;

    if (sa.ss_family == AF_INET) {
        ((struct sockaddr_in *)&sa)->sin_port = htons(port);
    } else {
        ((struct sockaddr_in6 *)&sa)->sin6_port = htons(port);
    }
    conn->eps[worker].conn = conn;
    conn->eps[worker].worker = worker;
    params.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    params.sockaddr.addr = (const struct sockaddr *)&sa;
    params.sockaddr.addrlen = srv->salen;
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = psc_ep_err_cb;
    params.err_handler.arg = &conn->eps[worker];
    status = ucp_ep_create(fs->ucp_worker, &params, &conn->eps[worker].ep);
    if (status != UCS_OK) {
        conn->eps[worker].ep = NULL;
        psc_conn_fail_later(fs, conn, PS_ERR_CONN,
                            "cannot create an endpoint to server %s worker %u (port %u): %s",
                            srv->addr, worker, port, ucs_status_string(status));
        return PS_ERR_CONN;
    }
    return PS_OK;
}

static void psc_hello_done(pstripe_fs_t *fs, psc_op_t *op)
{
    psc_conn_t *conn = op->arg;
    psc_server_t *srv = conn->server;
    const uint32_t *ports = op->recv_alloc;
    uint32_t n = conn->hello_rep.nworkers;
    char msg[PSC_MSG_MAX];

    if (op->status != PS_OK) {
        snprintf(msg, sizeof(msg), "%s", op->msg);
        goto err;
    }
    if (n == 0 || n > PS_MAX_WORKERS || op->recv_alloc_len != n * sizeof(uint32_t)) {
        snprintf(msg, sizeof(msg), "server %s sent a malformed HELLO reply (%u workers)", srv->addr,
                 n);
        goto err;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (ports[i] == 0 || ports[i] > 65535) {
            snprintf(msg, sizeof(msg), "server %s sent port %u for worker %u", srv->addr, ports[i],
                     i);
            goto err;
        }
    }
    if (conn->failed || conn->fail_pending) {
        snprintf(msg, sizeof(msg), "%s", conn->fail_msg);
        goto err;
    }
    for (uint32_t i = 1; i < n; i++) {
        if (psc_ep_create(fs, conn, i, (uint16_t)ports[i]) != PS_OK) {
            snprintf(msg, sizeof(msg), "%s", conn->fail_msg);
            goto err;
        }
    }
    conn->nworkers = n;
    srv->server_id = conn->hello_rep.server_id;
    srv->block_size = conn->hello_rep.block_size;
    srv->state = PSC_SRV_CONNECTED;
    free(op->recv_alloc);
    op->recv_alloc = NULL;
    ps_debug("connected to server %s: id %#llx, %u workers, block size %u", srv->addr,
             (unsigned long long)srv->server_id, n, srv->block_size);
    {
        psc_op_t *wop, *tmp;

        ucs_list_for_each_safe(wop, tmp, &srv->waitq, cmd.list)
        {
            ucs_list_del(&wop->cmd.list);
            wop->state = PSC_OP_IDLE;
            psc_op_dispatch(fs, srv, wop);
        }
    }
    return;

err:
    free(op->recv_alloc);
    op->recv_alloc = NULL;
    /* If the connection already failed, its waiters failed with it. */
    psc_conn_fail(fs, conn, op->status != PS_OK ? op->status : PS_ERR_PROTO, msg);
}

static void psc_server_connect(pstripe_fs_t *fs, psc_server_t *srv)
{
    psc_conn_t *conn;
    psc_op_t *op;
    uint16_t port;

    conn = calloc(1, sizeof(*conn));
    if (conn == NULL) {
        psc_server_fail_waiters(fs, srv, PS_ERR_NO_MEMORY, "no memory for a connection");
        return;
    }
    conn->server = srv;
    ucs_list_head_init(&conn->inflight);
    srv->conn = conn;
    srv->state = PSC_SRV_CONNECTING;
    port = ntohs(srv->sa.ss_family == AF_INET ? ((struct sockaddr_in *)&srv->sa)->sin_port
                                              : ((struct sockaddr_in6 *)&srv->sa)->sin6_port);
    ps_debug("connecting to server %s", srv->addr);
    if (psc_ep_create(fs, conn, 0, port) != PS_OK) {
        psc_conn_fail(fs, conn, conn->fail_status, conn->fail_msg);
        return;
    }

    op = &conn->hello;
    conn->hello_req.client_version = PS_PROTO_VERSION;
    conn->hello_req.reserved = 0;
    psc_op_init(op, srv->index, PS_MSG_HELLO, &conn->hello_req, sizeof(conn->hello_req));
    op->done_cb = psc_hello_done;
    op->arg = conn;
    op->rep_body = &conn->hello_rep;
    op->rep_body_len = sizeof(conn->hello_rep);
    op->recv_mode = PSC_RECV_ALLOC;
    op->recv_max = PSC_HELLO_DATA_MAX;
    psc_op_send(fs, conn, 0, op);
}

/* --- main loop ------------------------------------------------------------------ */

static int psc_drain_postq(pstripe_fs_t *fs)
{
    ucs_list_link_t q;
    psc_cmd_t *cmd, *tmp;
    int n = 0;

    pthread_mutex_lock(&fs->lock);
    if (ucs_list_is_empty(&fs->postq)) {
        pthread_mutex_unlock(&fs->lock);
        return 0;
    }
    ucs_list_head_init(&q);
    ucs_list_splice_tail(&q, &fs->postq);
    ucs_list_head_init(&fs->postq);
    pthread_mutex_unlock(&fs->lock);

    ucs_list_for_each_safe(cmd, tmp, &q, list)
    {
        ucs_list_del(&cmd->list);
        cmd->fn(fs, cmd);
        n++;
    }
    return n;
}

static int psc_drain_failq(pstripe_fs_t *fs)
{
    int n = 0;

    while (!ucs_list_is_empty(&fs->failq)) {
        psc_conn_t *conn = ucs_list_head(&fs->failq, psc_conn_t, fail_link);

        /* removes it from failq, keeping the recorded cause */
        psc_conn_fail(fs, conn, conn->fail_status, conn->fail_msg);
        n++;
    }
    return n;
}

static int psc_drain_readyq(pstripe_fs_t *fs)
{
    int n = 0;

    while (!ucs_list_is_empty(&fs->readyq)) {
        psc_op_t *op = ucs_list_extract_head(&fs->readyq, psc_op_t, cmd.list);

        psc_op_finish(fs, op);
        n++;
    }
    return n;
}

static void psc_check_conn_deadlines(pstripe_fs_t *fs, psc_conn_t *conn, uint64_t now)
{
    psc_op_t *op;
    char msg[PSC_MSG_MAX];

    if (conn == NULL || conn->failed) {
        return;
    }
    ucs_list_for_each(op, &conn->inflight, cmd.list)
    {
        /* a reply whose rendezvous data is still coming counts as unanswered */
        if (op->reply_done && op->recv_req == NULL) {
            continue;
        }
        if (now >= op->deadline_ns) {
            if (op->type == PS_MSG_HELLO) {
                snprintf(
                    msg, sizeof(msg),
                    "server %s did not answer HELLO within %gs (connect_timeout, at most timeout)",
                    conn->server->addr, op->timeout_s);
            } else {
                snprintf(msg, sizeof(msg), "server %s did not answer %s within %gs",
                         conn->server->addr, ps_msg_type_name(op->type), op->timeout_s);
            }
            psc_conn_fail(fs, conn, PS_ERR_TIMEOUT, msg);
            return;
        }
        psc_update_deadline(fs, op->deadline_ns);
    }
}

static void psc_check_deadlines(pstripe_fs_t *fs)
{
    uint64_t now = ps_time_ns();

    if (fs->next_deadline_ns == 0 || now < fs->next_deadline_ns) {
        return;
    }
    fs->next_deadline_ns = 0;
    for (uint32_t i = 0; i < fs->nservers; i++) {
        psc_check_conn_deadlines(fs, fs->servers[i].conn, now);
    }
}

static int psc_progress_once(pstripe_fs_t *fs)
{
    int n = 0;
    unsigned p;

    n += psc_drain_postq(fs);
    do {
        p = ucp_worker_progress(fs->ucp_worker);
        n += (int)p;
    } while (p > 0);
    n += psc_drain_failq(fs);
    /* Deadlines before the ready queue: ops failed by a timeout complete in
     * this iteration, before the next ucp_worker_progress(), which can block
     * for seconds while UCX tears down the closed endpoints (UCX 1.13 removes
     * the sockcm handler synchronously). */
    psc_check_deadlines(fs);
    n += psc_drain_readyq(fs);
    psc_conn_free_dead(fs);
    return n;
}

static int psc_is_idle_for_stop(pstripe_fs_t *fs)
{
    if (fs->nclosing > 0 || !ucs_list_is_empty(&fs->readyq) || !ucs_list_is_empty(&fs->failq)) {
        return 0;
    }
    for (uint32_t i = 0; i < fs->nservers; i++) {
        psc_server_t *srv = &fs->servers[i];

        if (srv->conn != NULL || !ucs_list_is_empty(&srv->waitq)) {
            return 0;
        }
    }
    return ucs_list_is_empty(&fs->dead_conns);
}

static void psc_stop_close_cb(void *request, ucs_status_t status, void *user_data)
{
    pstripe_fs_t *fs = user_data;

    fs->nclosing--;
    ucp_request_free(request);
}

/* Disconnect: close every live connection with a flush (the servers see an
 * orderly disconnect), bounded by PSC_STOP_FLUSH_NS. */
static void psc_stop_cmd(pstripe_fs_t *fs, psc_cmd_t *cmd)
{
    fs->stopping = 1;
    fs->stop_deadline_ns = ps_time_ns() + PSC_STOP_FLUSH_NS;
    for (uint32_t i = 0; i < fs->nservers; i++) {
        psc_server_t *srv = &fs->servers[i];
        psc_conn_t *conn = srv->conn;

        if (conn == NULL || srv->state != PSC_SRV_CONNECTED ||
            !ucs_list_is_empty(&conn->inflight)) {
            if (conn != NULL) {
                psc_conn_fail(fs, conn, PS_ERR_CANCELED, "disconnecting");
            }
            continue;
        }
        for (uint32_t w = 0; w < PS_MAX_WORKERS; w++) {
            ucp_request_param_t param;
            void *req;

            if (conn->eps[w].ep == NULL) {
                continue;
            }
            param.op_attr_mask =
                UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
            param.flags = 0;
            param.cb.send = psc_stop_close_cb;
            param.user_data = fs;
            req = ucp_ep_close_nbx(conn->eps[w].ep, &param);
            conn->eps[w].ep = NULL;
            if (UCS_PTR_IS_PTR(req)) {
                fs->nclosing++;
            }
        }
        srv->conn = NULL;
        srv->state = PSC_SRV_DISCONNECTED;
        conn->failed = 1;
        ucs_list_add_tail(&fs->dead_conns, &conn->list);
    }
}

static int psc_ucx_init(pstripe_fs_t *fs)
{
    ucp_params_t params;
    ucp_worker_params_t wparams;
    ucp_am_handler_param_t aparams;
    ucp_config_t *config;
    struct epoll_event ev;
    ucs_status_t status;

    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "ucp_config_read: %s",
                 ucs_status_string(status));
        return PS_ERR_CONN;
    }
    params.field_mask =
        UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED | UCP_PARAM_FIELD_NAME;
    params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 0;
    params.name = "pstripe-client";
    status = ucp_init(&params, config, &fs->ucp_context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "ucp_init: %s", ucs_status_string(status));
        return PS_ERR_CONN;
    }
    wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(fs->ucp_context, &wparams, &fs->ucp_worker);
    if (status != UCS_OK) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "ucp_worker_create: %s",
                 ucs_status_string(status));
        goto err_cleanup;
    }
    aparams.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                         UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    aparams.id = PS_AM_ID_REPLY;
    aparams.cb = psc_am_reply_cb;
    aparams.arg = fs;
    aparams.flags = UCP_AM_FLAG_WHOLE_MSG;
    status = ucp_worker_set_am_recv_handler(fs->ucp_worker, &aparams);
    if (status != UCS_OK) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "ucp_worker_set_am_recv_handler: %s",
                 ucs_status_string(status));
        goto err_destroy_worker;
    }
    status = ucp_worker_get_efd(fs->ucp_worker, &fs->ucp_fd);
    if (status != UCS_OK) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "ucp_worker_get_efd: %s",
                 ucs_status_string(status));
        goto err_destroy_worker;
    }
    fs->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (fs->epoll_fd < 0) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "epoll_create1: %s", strerror(errno));
        goto err_destroy_worker;
    }
    ev.events = EPOLLIN;
    ev.data.fd = fs->ucp_fd;
    if (epoll_ctl(fs->epoll_fd, EPOLL_CTL_ADD, fs->ucp_fd, &ev) < 0) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "epoll_ctl: %s", strerror(errno));
        goto err_close_epoll;
    }
    ev.events = EPOLLIN;
    ev.data.fd = fs->wake_fd;
    if (epoll_ctl(fs->epoll_fd, EPOLL_CTL_ADD, fs->wake_fd, &ev) < 0) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "epoll_ctl: %s", strerror(errno));
        goto err_close_epoll;
    }
    return PS_OK;

err_close_epoll:
    close(fs->epoll_fd);
    fs->epoll_fd = -1;
err_destroy_worker:
    ucp_worker_destroy(fs->ucp_worker);
    fs->ucp_worker = NULL;
err_cleanup:
    ucp_cleanup(fs->ucp_context);
    fs->ucp_context = NULL;
    return PS_ERR_CONN;
}

static void psc_ucx_fini(pstripe_fs_t *fs)
{
    close(fs->epoll_fd);
    fs->epoll_fd = -1;
    ucp_worker_destroy(fs->ucp_worker);
    fs->ucp_worker = NULL;
    ucp_cleanup(fs->ucp_context);
    fs->ucp_context = NULL;
}

/*
 * Closing endpoints (after a failure, or at disconnect) is finished by UCX
 * progress callbacks that raise no fd event, so while any close or failed
 * connection is being cleaned up we sleep with a short timeout that backs
 * off from 1 ms to PSC_CLEANUP_POLL_MS_MAX; otherwise we sleep until an
 * event or the nearest deadline.
 */
#define PSC_CLEANUP_POLL_MS_MAX 64

static void psc_sleep(pstripe_fs_t *fs)
{
    struct epoll_event ev[2];
    uint64_t now, value;
    int timeout_ms = -1;
    int n;

    if (ucp_worker_arm(fs->ucp_worker) == UCS_ERR_BUSY) {
        return;
    }
    now = ps_time_ns();
    if (fs->next_deadline_ns != 0) {
        timeout_ms =
            fs->next_deadline_ns > now ? (int)((fs->next_deadline_ns - now + 999999) / 1000000) : 0;
    }
    if (fs->stopping) {
        uint64_t left = fs->stop_deadline_ns > now ? fs->stop_deadline_ns - now : 0;
        int stop_ms = (int)((left + 999999) / 1000000);

        if (timeout_ms < 0 || stop_ms < timeout_ms) {
            timeout_ms = stop_ms;
        }
    }
    if (fs->nbounce > 0) {
        uint64_t trim_ns = psc_bounce_trim(fs, now);
        int trim_ms = (int)((trim_ns + 999999) / 1000000);

        if (trim_ns != 0 && (timeout_ms < 0 || trim_ms < timeout_ms)) {
            timeout_ms = trim_ms;
        }
    }
    if (fs->nclosing > 0 || !ucs_list_is_empty(&fs->dead_conns)) {
        fs->cleanup_poll_ms = fs->cleanup_poll_ms == 0 ? 1 : fs->cleanup_poll_ms * 2;
        if (fs->cleanup_poll_ms > PSC_CLEANUP_POLL_MS_MAX) {
            fs->cleanup_poll_ms = PSC_CLEANUP_POLL_MS_MAX;
        }
        if (timeout_ms < 0 || fs->cleanup_poll_ms < timeout_ms) {
            timeout_ms = fs->cleanup_poll_ms;
        }
    } else {
        fs->cleanup_poll_ms = 0;
    }
    n = epoll_wait(fs->epoll_fd, ev, 2, timeout_ms);
    for (int i = 0; i < n; i++) {
        if (ev[i].data.fd == fs->wake_fd) {
            if (read(fs->wake_fd, &value, sizeof(value)) < 0) {
                /* EAGAIN: someone else drained it */
            }
        }
    }
}

static void *psc_progress_main(void *arg)
{
    pstripe_fs_t *fs = arg;
    int status;

    status = psc_ucx_init(fs);
    pthread_mutex_lock(&fs->lock);
    fs->init_status = status;
    fs->init_done = 1;
    pthread_cond_broadcast(&fs->cond);
    pthread_mutex_unlock(&fs->lock);
    if (status != PS_OK) {
        return NULL;
    }

    for (;;) {
        uint64_t spin_end;
        int n = psc_progress_once(fs);

        if (fs->stopping && (psc_is_idle_for_stop(fs) || ps_time_ns() >= fs->stop_deadline_ns)) {
            break;
        }
        if (n > 0) {
            continue;
        }
        /* Nothing happened: spin a little while requests are out, then sleep. */
        spin_end = fs->next_deadline_ns != 0 ? ps_time_ns() + PSC_SPIN_NS : 0;
        while (ps_time_ns() < spin_end && n == 0) {
            n = (int)ucp_worker_progress(fs->ucp_worker);
        }
        if (n == 0) {
            psc_sleep(fs);
        }
    }
    psc_ucx_fini(fs);
    psc_bounce_free_all(fs);
    return NULL;
}

int psc_progress_start(pstripe_fs_t *fs)
{
    int ret;

    fs->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fs->wake_fd < 0) {
        return psc_error(PS_ERR_NO_MEMORY, "eventfd: %s", strerror(errno));
    }
    ucs_list_head_init(&fs->readyq);
    ucs_list_head_init(&fs->failq);
    ucs_list_head_init(&fs->dead_conns);
    ret = pthread_create(&fs->thread, NULL, psc_progress_main, fs);
    if (ret != 0) {
        close(fs->wake_fd);
        fs->wake_fd = -1;
        return psc_error(PS_ERR_NO_MEMORY, "pthread_create: %s", strerror(ret));
    }
    pthread_mutex_lock(&fs->lock);
    while (!fs->init_done) {
        pthread_cond_wait(&fs->cond, &fs->lock);
    }
    pthread_mutex_unlock(&fs->lock);
    if (fs->init_status != PS_OK) {
        pthread_join(fs->thread, NULL);
        close(fs->wake_fd);
        fs->wake_fd = -1;
        return psc_error(fs->init_status, "UCX initialization failed: %s", fs->init_msg);
    }
    fs->thread_started = 1;
    return PS_OK;
}

void psc_progress_stop(pstripe_fs_t *fs)
{
    psc_conn_t *conn, *tmp;

    if (!fs->thread_started) {
        return;
    }
    fs->stop_cmd.fn = psc_stop_cmd;
    psc_post(fs, &fs->stop_cmd);
    pthread_join(fs->thread, NULL);
    fs->thread_started = 0;
    /* Connections still closing when the flush deadline passed. */
    ucs_list_for_each_safe(conn, tmp, &fs->dead_conns, list)
    {
        ucs_list_del(&conn->list);
        free(conn);
    }
    close(fs->wake_fd);
    fs->wake_fd = -1;
    free(fs->slots);
    free(fs->free_slots);
    fs->slots = NULL;
    fs->free_slots = NULL;
}

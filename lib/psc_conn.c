/*
 * psc_conn.c: connections to servers and the ops sent on them.
 *
 * An op enters here (psc_op_post from an API thread, psc_op_submit on the
 * progress thread). If its server is not connected, the op waits in the
 * server's waitq while we connect: one endpoint to worker 0, HELLO (which
 * tells every worker's port) and AUTH there. Then the op is sent to the
 * worker its route names; the endpoint to any other worker is made when
 * the first op for it comes (with auth, that op waits in the endpoint's
 * waitq until the worker accepts the connection's ticket): a client that
 * opens one file talks to at most three workers of a server, not to all
 * of them (two servers of 16 workers each: a process's first open took
 * 105-175 ms with every endpoint made at connect, 38-60 ms so; with 2
 * workers each 30-49 and 17-34 ms), unless it asks for them ahead
 * (pstripe_connect_workers, PSC_CONNECT_WORKERS). Every send has a deadline
 * (timeout, or connect_timeout for HELLO); when one passes (psc_progress.c), the whole
 * connection to that server is declared dead (a HELLO's deadline is the
 * smaller of the two, so that a request that must reconnect first still
 * fails within timeout): its endpoints are closed with
 * UCP_EP_CLOSE_FLAG_FORCE, which completes every UCX request still using
 * the caller's memory, and all its ops fail with PS_ERR_TIMEOUT. UCX reports
 * a peer that vanished (UCP_ERR_HANDLING_MODE_PEER) through psc_ep_err_cb,
 * which does the same with PS_ERR_CONN. A failed server is reconnected
 * (HELLO again) the next time an op needs it.
 *
 * Shared memory: UCX 1.13 uses none on an endpoint with peer error
 * handling. A server of this host (same boot id and network namespace, as
 * its HELLO reply tells) that offers it (its shm setting) gets every op on
 * endpoints without error handling to its shm ports (with auth, each
 * presents the ticket first, as to any worker); the HELLO endpoint stays
 * open as conn->watch, whose error callback declares the connection dead
 * when the server goes away.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps_log.h"
#include "ps_net.h"
#include "ps_time.h"
#include "psc_auth.h"
#include "psc_call.h"
#include "psc_conn.h"
#include "psc_op.h"

#define PSC_HELLO_DATA_MAX (2 * PS_MAX_WORKERS * sizeof(uint32_t) + sizeof(ps_shm_id_t))

/* --- connection failure ---------------------------------------------------------- */

/* From UCX callbacks: record the failure, handled by the main loop. */
static void psc_conn_fail_later(pstripe_fs_t *fs, psc_conn_t *conn, ps_status_t status,
                                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void psc_conn_fail_later(pstripe_fs_t *fs, psc_conn_t *conn, ps_status_t status,
                                const char *fmt, ...)
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
void psc_conn_lost(pstripe_fs_t *fs, psc_conn_t *conn, ucs_status_t status)
{
    if (status == UCS_ERR_REJECTED) {
        psc_conn_fail_later(fs, conn, PS_ERR_CONN,
                            "server %s refused the connection: it has as many as it accepts "
                            "(its max_connections); try again when other clients are gone",
                            conn->server->addr);
    } else if (conn->nworkers == 0) {
        psc_conn_fail_later(fs, conn, PS_ERR_CONN, "cannot connect to server %s: %s",
                            conn->server->addr, ucs_status_string(status));
    } else {
        psc_conn_fail_later(fs, conn, PS_ERR_CONN, "connection to server %s lost: %s",
                            conn->server->addr, ucs_status_string(status));
    }
}

/* UCX's error callback (arg: the server). UCX 1.13 may call it for an
 * endpoint of a connection already failed and freed (one to a
 * shared-memory port, force-closed: it detects no failure and its close
 * completes nothing): only an endpoint of the server's current connection
 * counts. */
static void psc_ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    psc_server_t *srv = arg;
    psc_conn_t *conn = srv->conn;

    if (conn == NULL || ep == NULL) {
        return;
    }
    for (uint32_t i = 0; i < PS_MAX_WORKERS; i++) {
        if (conn->eps[i].ep == ep) {
            psc_conn_lost(srv->fs, conn, status);
            return;
        }
    }
    if (conn->watch == ep) {
        psc_conn_lost(srv->fs, conn, status);
    }
}

static void psc_ep_close_cb(void *request, ucs_status_t status, void *user_data)
{
    psc_conn_t *conn = user_data;

    (void)status;
    conn->nclosing--;
    for (uint32_t i = 0; i < PS_MAX_WORKERS + 1; i++) {
        if (conn->closing[i] == request) {
            conn->closing[i] = NULL;
            ucp_request_free(request);
            return;
        }
    }
    /* released by psc_conn_release_closing: UCX frees it */
}

/* Close *ep (if any) and set it to NULL; see psc_conn_close_eps. */
static void psc_ep_close(psc_conn_t *conn, ucp_ep_h *ep, int force)
{
    ucp_request_param_t param;
    void *req;

    if (*ep == NULL) {
        return;
    }
    param.op_attr_mask =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    param.cb.send = psc_ep_close_cb;
    param.user_data = conn;
    req = ucp_ep_close_nbx(*ep, &param);
    *ep = NULL;
    if (UCS_PTR_IS_PTR(req)) {
        uint32_t i = 0;

        while (conn->closing[i] != NULL) {
            i++; /* one slot per endpoint: there is room */
        }
        conn->closing[i] = req;
        conn->nclosing++;
    } else if (UCS_PTR_IS_ERR(req)) {
        ps_debug("close endpoint to %s: %s", conn->server->addr,
                 ucs_status_string(UCS_PTR_STATUS(req)));
    }
}

/* Close every endpoint; force: at once, completing every UCX request on
 * them, else after a flush. The connection is freed once nclosing is 0. */
static void psc_conn_close_eps(pstripe_fs_t *fs, psc_conn_t *conn, int force)
{
    (void)fs;
    for (uint32_t i = 0; i < PS_MAX_WORKERS; i++) {
        psc_ep_close(conn, &conn->eps[i].ep, force);
    }
    psc_ep_close(conn, &conn->watch, force);
}

static void psc_server_fail_waiters(pstripe_fs_t *fs, psc_server_t *srv, ps_status_t status,
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
void psc_conn_fail(pstripe_fs_t *fs, psc_conn_t *conn, ps_status_t status, const char *msg)
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
    for (uint32_t i = 0; i < conn->nworkers; i++) {
        ucs_list_for_each_safe(op, tmp, &conn->eps[i].waitq, cmd.list)
        {
            psc_op_fail_now(fs, op, conn->fail_status, conn->fail_msg);
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

/* 1 if an op is out on the connection or waits for one of its workers. */
static int psc_conn_busy(psc_conn_t *conn)
{
    for (uint32_t i = 0; i < conn->nworkers; i++) {
        if (!ucs_list_is_empty(&conn->eps[i].waitq)) {
            return 1;
        }
    }
    return !ucs_list_is_empty(&conn->inflight);
}

/* Disconnect from a server: an idle connection is closed with a flush (the
 * server sees an orderly disconnect), any other fails with PS_ERR_CANCELED. */
void psc_server_disconnect(pstripe_fs_t *fs, psc_server_t *srv)
{
    psc_conn_t *conn = srv->conn;

    if (conn == NULL) {
        return;
    }
    if (srv->state != PSC_SRV_CONNECTED || psc_conn_busy(conn)) {
        psc_conn_fail(fs, conn, PS_ERR_CANCELED, "disconnecting");
        return;
    }
    psc_conn_close_eps(fs, conn, 0);
    srv->conn = NULL;
    srv->state = PSC_SRV_DISCONNECTED;
    conn->failed = 1;
    ucs_list_add_tail(&fs->dead_conns, &conn->list);
}

static void psc_conn_free(psc_conn_t *conn)
{
    ucs_list_del(&conn->list);
    free(conn->auth_cred);
    free(conn->tickets);
    free(conn);
}

void psc_conn_free_dead(pstripe_fs_t *fs)
{
    psc_conn_t *conn, *tmp;

    ucs_list_for_each_safe(conn, tmp, &fs->dead_conns, list)
    {
        if (conn->nclosing == 0 && ucs_list_is_empty(&conn->inflight) &&
            conn->hello.state != PSC_OP_READY && !psc_tickets_pending(conn)) {
            psc_conn_free(conn);
        }
    }
}

void psc_conn_release_closing(pstripe_fs_t *fs)
{
    psc_conn_t *conn;

    ucs_list_for_each(conn, &fs->dead_conns, list)
    {
        if (conn->nclosing > 0) {
            ps_debug("%u endpoint(s) to %s still closing at the stop's deadline", conn->nclosing,
                     conn->server->addr);
        }
        for (uint32_t i = 0; i < PS_MAX_WORKERS + 1; i++) {
            if (conn->closing[i] != NULL) {
                ucp_request_free(conn->closing[i]);
                conn->closing[i] = NULL;
            }
        }
    }
}

void psc_conn_free_all_dead(pstripe_fs_t *fs)
{
    psc_conn_t *conn, *tmp;

    ucs_list_for_each_safe(conn, tmp, &fs->dead_conns, list)
    {
        psc_conn_free(conn);
    }
}

/* --- sending --------------------------------------------------------------------- */

/* The send of an op failed: no reply will come, and the connection is lost
 * (the op fails with the connection's cause). */
static void psc_op_send_failed(pstripe_fs_t *fs, psc_conn_t *conn, psc_op_t *op,
                               ucs_status_t status)
{
    if (!op->reply_done) {
        op->reply_done = 1;
        psc_slot_remove(fs, op);
    }
    psc_conn_lost(fs, conn, status);
    psc_op_error(op, conn->fail_status, "%s", conn->fail_msg);
}

static void psc_send_cb(void *request, ucs_status_t status, void *user_data)
{
    psc_op_t *op = user_data;
    psc_conn_t *conn = op->conn;
    pstripe_fs_t *fs;

    ucp_request_free(request);
    op->send_req = NULL;
    op->send_done = 1;
    if (psc_op_detached(op)) {
        return;
    }
    fs = conn->server->fs;
    if (status != UCS_OK) {
        psc_op_send_failed(fs, conn, op, status);
    }
    psc_op_check_ready(fs, op);
}

/* Send op to worker on endpoint ep (conn->eps[worker]'s, or the watch). */
static void psc_op_send_on(pstripe_fs_t *fs, psc_conn_t *conn, ucp_ep_h ep, uint32_t worker,
                           psc_op_t *op)
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
    param.flags = UCP_AM_SEND_FLAG_REPLY | psc_op_send_charged(conn, op);
    param.datatype = op->send_iov ? ucp_dt_make_iov() : ucp_dt_make_contig(1);
    ps_trace("send %s req_id %#llx to %s worker %u, %zu data %s", ps_msg_type_name(op->type),
             (unsigned long long)op->req_id, conn->server->addr, worker, op->send_count,
             op->send_iov ? "iov entries" : "bytes");
    req = ucp_am_send_nbx(ep, PS_AM_ID_REQUEST, op->h.bytes, op->hdr_len, op->send_buf,
                          op->send_count, &param);
    if (req == NULL) {
        op->send_done = 1;
    } else if (UCS_PTR_IS_ERR(req)) {
        op->send_done = 1;
        psc_op_send_failed(fs, conn, op, UCS_PTR_STATUS(req));
        psc_op_check_ready(fs, op);
    } else {
        op->send_req = req;
    }
}

static void psc_op_send(pstripe_fs_t *fs, psc_conn_t *conn, uint32_t worker, psc_op_t *op)
{
    psc_op_send_on(fs, conn, conn->eps[worker].ep, worker, op);
}

/* --- connecting ------------------------------------------------------------------ */

/* The endpoint to worker's port; shm: without peer-failure detection, so
 * that UCX may use shared memory on it. */
static ps_status_t psc_ep_create(pstripe_fs_t *fs, psc_conn_t *conn, uint32_t worker, uint16_t port,
                                 int shm)
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
    params.err_mode = shm ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = psc_ep_err_cb;
    params.err_handler.arg = srv;
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

static void psc_op_dispatch(pstripe_fs_t *fs, psc_server_t *srv, psc_op_t *op);

/* Worker w's endpoint is open (and accepted the ticket): send the ops that
 * waited for it (a connect-only op goes on to the next worker it waits for). */
static void psc_ep_ready(pstripe_fs_t *fs, psc_conn_t *conn, uint32_t w)
{
    psc_op_t *wop, *tmp;

    conn->eps[w].ready = 1;
    ucs_list_for_each_safe(wop, tmp, &conn->eps[w].waitq, cmd.list)
    {
        ucs_list_del(&wop->cmd.list);
        wop->state = PSC_OP_IDLE;
        if (wop->connect_only) {
            psc_op_dispatch(fs, conn->server, wop);
        } else {
            psc_op_send(fs, conn, w, wop);
        }
    }
}

static void psc_ticket_done(pstripe_fs_t *fs, psc_op_t *op);

/* Present the connection's ticket to worker w (in slot t; psc_ticket_done),
 * or with w PSC_RENEW_WATCH to worker 0 on the watch. */
static void psc_ticket_send(pstripe_fs_t *fs, psc_conn_t *conn, uint32_t w, psc_ticket_t *t)
{
    psc_ticket_prepare(conn, t, psc_ticket_done);
    if (w == PSC_RENEW_WATCH) {
        psc_op_send_on(fs, conn, conn->watch, 0, &t->op);
    } else {
        psc_op_send(fs, conn, w, &t->op);
    }
}

/* Open the endpoint to worker w (not the HELLO's: with shared memory, to
 * its shm port) and, with auth, present the ticket there: it is ready when
 * the worker accepts it (psc_ticket_done). A failure to make it fails the
 * whole connection (from the main loop). */
static void psc_worker_open(pstripe_fs_t *fs, psc_conn_t *conn, uint32_t w)
{
    uint32_t port = conn->shm ? conn->shm_ports[w] : conn->ports[w];

    if (conn->fail_pending || psc_ep_create(fs, conn, w, (uint16_t)port, conn->shm) != PS_OK) {
        return;
    }
    if (conn->hello_rep.auth_mode == PS_AUTH_NONE) {
        psc_ep_ready(fs, conn, w);
        return;
    }
    psc_ticket_send(fs, conn, w, &conn->tickets[w]);
}

/* A connect-only op on a connected server: ready now, or with
 * PSC_CONNECT_WORKERS (and at most connect_max workers) once every worker's
 * endpoint is (all opened at once; it waits on the first not ready, and
 * comes back from psc_ep_ready). */
static void psc_connect_op(pstripe_fs_t *fs, psc_conn_t *conn, psc_op_t *op)
{
    uint32_t first = conn->nworkers;
    int all = op->connect_only == PSC_CONNECT_WORKERS && conn->nworkers <= op->connect_max;

    for (uint32_t w = 0; all && w < conn->nworkers; w++) {
        if (conn->eps[w].ep == NULL && !conn->eps[w].ready) {
            psc_worker_open(fs, conn, w);
        }
        if (!conn->eps[w].ready && first == conn->nworkers) {
            first = w;
        }
    }
    if (first == conn->nworkers) {
        psc_op_make_ready(fs, op);
        return;
    }
    op->state = PSC_OP_WAITING;
    ucs_list_add_tail(&conn->eps[first].waitq, &op->cmd.list);
}

/* Send op to the worker its route names, or queue it there until that
 * worker's endpoint is ready (made now for the first op that needs it). */
static void psc_op_dispatch(pstripe_fs_t *fs, psc_server_t *srv, psc_op_t *op)
{
    psc_conn_t *conn = srv->conn;
    uint32_t w;

    if (op->connect_only) {
        psc_connect_op(fs, conn, op);
        return;
    }
    w = psc_route_worker(op, conn->nworkers);
    if (conn->eps[w].ready) {
        psc_op_send(fs, conn, w, op);
        return;
    }
    op->state = PSC_OP_WAITING;
    ucs_list_add_tail(&conn->eps[w].waitq, &op->cmd.list);
    if (conn->eps[w].ep == NULL) {
        psc_worker_open(fs, conn, w);
    }
}

/* Worker 0 answered HELLO and accepted AUTH: the server is connected; send
 * the ops that waited. */
static void psc_conn_ready(pstripe_fs_t *fs, psc_conn_t *conn)
{
    psc_server_t *srv = conn->server;
    psc_op_t *wop, *tmp;

    conn->eps[0].ready = !conn->shm;
    srv->state = PSC_SRV_CONNECTED;
    ps_debug("connected to server %s: id %#llx, %u workers, block size %u, auth %s%s", srv->addr,
             (unsigned long long)srv->server_id, conn->nworkers, srv->block_size,
             ps_auth_mode_name(conn->hello_rep.auth_mode), conn->shm ? ", shared memory" : "");
    ucs_list_for_each_safe(wop, tmp, &srv->waitq, cmd.list)
    {
        ucs_list_del(&wop->cmd.list);
        wop->state = PSC_OP_IDLE;
        psc_op_dispatch(fs, srv, wop);
    }
}

/*
 * A ticket's answer: worker w's (its endpoint is now ready) or the
 * renewal's (every worker whose ticket waited for it gets the new one, a
 * second and last time). A refusal fails the connection, unless a renewal
 * may cure it (psc_ticket_retry: an expired ticket).
 */
static void psc_ticket_done(pstripe_fs_t *fs, psc_op_t *op)
{
    psc_conn_t *conn = op->arg;
    psc_ticket_t *renewal = &conn->tickets[conn->nworkers];
    int renewed = op == &renewal->op;
    uint32_t w = op->worker, r;
    char msg[PSC_MSG_MAX];

    conn->renewing &= !renewed;
    if (conn->failed) {
        return;
    }
    if (op->status == PS_OK && !renewed) {
        conn->tickets[w].retry = 0;
        psc_ticket_take(conn, &conn->tickets[w]);
        psc_ep_ready(fs, conn, w);
    } else if (op->status == PS_OK) {
        psc_ticket_take(conn, renewal);
        for (w = 0; w < conn->nworkers; w++) {
            if (conn->tickets[w].retry == 1) {
                conn->tickets[w].retry = 2;
                psc_ticket_send(fs, conn, w, &conn->tickets[w]);
            }
        }
    } else if (!renewed && op->status == PS_ERR_ACCESS && psc_ticket_retry(conn, w, &r)) {
        if (r != PSC_RENEW_WAIT) {
            psc_ticket_send(fs, conn, r, renewal);
        }
    } else {
        psc_auth_refused(conn->server, conn->hello_rep.auth_mode, op, msg, sizeof(msg));
        psc_conn_fail(fs, conn, op->status, msg);
    }
}

/* HELLO (and AUTH) answered on worker 0: the connection is up. With shared
 * memory, every worker gets a new endpoint (psc_worker_open) and the
 * HELLO's stays as the watch. */
static void psc_conn_open(pstripe_fs_t *fs, psc_conn_t *conn)
{
    if (conn->shm) {
        conn->watch = conn->eps[0].ep;
        conn->eps[0].ep = NULL;
    }
    if (conn->hello_rep.auth_mode != PS_AUTH_NONE && (conn->shm || conn->nworkers > 1)) {
        conn->tickets = calloc(conn->nworkers + 1, sizeof(psc_ticket_t));
        if (conn->tickets == NULL) {
            psc_conn_fail(fs, conn, PS_ERR_NO_MEMORY, "no memory for authentication");
            return;
        }
    }
    psc_conn_ready(fs, conn);
}

static void psc_auth_done(pstripe_fs_t *fs, psc_op_t *op)
{
    psc_conn_t *conn = op->arg;
    char msg[PSC_MSG_MAX];

    free(conn->auth_cred);
    conn->auth_cred = NULL;
    if (conn->failed) {
        return;
    }
    if (op->status != PS_OK) {
        psc_auth_refused(conn->server, conn->hello_rep.auth_mode, op, msg, sizeof(msg));
        psc_conn_fail(fs, conn, op->status, msg);
        return;
    }
    ps_debug("server %s: authenticated as uid %u gid %u (%s)", conn->server->addr,
             conn->auth_rep.uid, conn->auth_rep.gid, ps_auth_mode_name(conn->hello_rep.auth_mode));
    psc_conn_open(fs, conn);
}

/* HELLO answered on worker 0: prove who we are there (AUTH, reusing the
 * HELLO's op) or, with auth = none at the server, be connected. */
static void psc_conn_authenticate(pstripe_fs_t *fs, psc_conn_t *conn)
{
    psc_op_t *op = &conn->hello;
    size_t cred_len = 0;
    char msg[PSC_MSG_MAX];
    ps_status_t status;

    if (conn->hello_rep.auth_mode == PS_AUTH_NONE) {
        psc_conn_open(fs, conn);
        return;
    }
    status = psc_auth_make(fs, conn->server, &conn->hello_rep, &conn->auth_req, &conn->auth_cred,
                           &cred_len, msg, sizeof(msg));
    if (status != PS_OK) {
        psc_conn_fail(fs, conn, status, msg);
        return;
    }
    psc_op_init(op, conn->server->index, PS_MSG_AUTH, &conn->auth_req, sizeof(conn->auth_req));
    op->done_cb = psc_auth_done;
    op->arg = conn;
    op->send_buf = conn->auth_cred;
    op->send_count = cred_len;
    op->rep_body = &conn->auth_rep;
    op->rep_body_len = sizeof(conn->auth_rep);
    psc_op_send(fs, conn, 0, op);
}

/* Whether the HELLO reply's shared-memory ports may be used: the server's
 * id (after the ports) is this process's. */
static int psc_hello_shm_here(const psc_conn_t *conn, const uint32_t *ports, uint32_t n)
{
    ps_shm_id_t theirs, ours;

    if (!(conn->hello_rep.flags & PS_HELLO_SHM) || ps_shm_id(&ours) != 0) {
        return 0;
    }
    memcpy(&theirs, ports + 2 * n, sizeof(theirs));
    return memcmp(&theirs, &ours, sizeof(ours)) == 0;
}

static void psc_hello_done(pstripe_fs_t *fs, psc_op_t *op)
{
    psc_conn_t *conn = op->arg;
    psc_server_t *srv = conn->server;
    const uint32_t *ports = op->recv_alloc;
    uint32_t n = conn->hello_rep.nworkers, nports;
    char msg[PSC_MSG_MAX];

    if (op->status != PS_OK) {
        snprintf(msg, sizeof(msg), "%s", op->msg);
        goto err;
    }
    nports = (conn->hello_rep.flags & PS_HELLO_SHM) ? 2 * n : n;
    if (n == 0 || n > PS_MAX_WORKERS ||
        op->recv_alloc_len != nports * sizeof(uint32_t) + (nports > n ? sizeof(ps_shm_id_t) : 0)) {
        snprintf(msg, sizeof(msg), "server %s sent a malformed HELLO reply (%u workers)", srv->addr,
                 n);
        goto err;
    }
    for (uint32_t i = 0; i < nports; i++) {
        if (ports[i] == 0 || ports[i] > 65535) {
            snprintf(msg, sizeof(msg), "server %s sent port %u for worker %u", srv->addr, ports[i],
                     i % n);
            goto err;
        }
    }
    if (psc_hello_misplaced(fs, srv, &conn->hello_rep, msg, sizeof(msg))) {
        goto err;
    }
    memcpy(conn->ports, ports, n * sizeof(uint32_t));
    conn->shm = psc_hello_shm_here(conn, ports, n);
    if (conn->shm) {
        memcpy(conn->shm_ports, ports + n, n * sizeof(uint32_t));
    }
    if (conn->failed || conn->fail_pending) {
        snprintf(msg, sizeof(msg), "%s", conn->fail_msg);
        goto err;
    }
    conn->nworkers = n;
    srv->server_id = conn->hello_rep.server_id;
    srv->place = conn->hello_rep.place;
    srv->cluster_size = conn->hello_rep.cluster_size;
    srv->block_size = conn->hello_rep.block_size;
    srv->instance = conn->hello_rep.instance;
    free(op->recv_alloc);
    op->recv_alloc = NULL;
    psc_conn_authenticate(fs, conn);
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
    for (uint32_t i = 0; i < PS_MAX_WORKERS; i++) {
        ucs_list_head_init(&conn->eps[i].waitq);
    }
    srv->conn = conn;
    srv->state = PSC_SRV_CONNECTING;
    port = ntohs(srv->sa.ss_family == AF_INET ? ((struct sockaddr_in *)&srv->sa)->sin_port
                                              : ((struct sockaddr_in6 *)&srv->sa)->sin6_port);
    ps_debug("connecting to server %s", srv->addr);
    if (psc_ep_create(fs, conn, 0, port, 0) != PS_OK) {
        psc_conn_fail(fs, conn, conn->fail_status, conn->fail_msg);
        return;
    }

    op = &conn->hello;
    conn->hello_req.client_version = PS_PROTO_VERSION;
    /* only where the UCX context has cma and writes are staged (shm_maybe) */
    conn->hello_req.flags = srv->shm_maybe ? PS_HELLO_SHM : 0;
    psc_op_init(op, srv->index, PS_MSG_HELLO, &conn->hello_req, sizeof(conn->hello_req));
    op->done_cb = psc_hello_done;
    op->arg = conn;
    op->rep_body = &conn->hello_rep;
    op->rep_body_len = sizeof(conn->hello_rep);
    op->recv_mode = PSC_RECV_ALLOC;
    op->recv_max = PSC_HELLO_DATA_MAX;
    psc_op_send(fs, conn, 0, op);
}

/* --- submitting ------------------------------------------------------------------ */

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
        if (op->connect_only == PSC_CONNECT_WORKERS) {
            psc_op_make_ready(fs, op); /* only the servers connected now */
            break;
        }
        op->state = PSC_OP_WAITING;
        ucs_list_add_tail(&srv->waitq, &op->cmd.list);
        psc_server_connect(fs, srv);
        break;
    }
}

static void psc_op_submit_cmd(pstripe_fs_t *fs, psc_cmd_t *cmd)
{
    psc_op_submit(fs, ucs_container_of(cmd, psc_op_t, cmd));
}

void psc_op_post(pstripe_fs_t *fs, psc_op_t *op, psc_call_t *call)
{
    op->call = call;
    op->cmd.fn = psc_op_submit_cmd;
    op->state = PSC_OP_POSTED;
    psc_post_then_wait(fs, &op->cmd, call);
}

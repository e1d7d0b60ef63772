/*
 * pss_conn.c: a worker's connections (see pss_conn.h): the table of
 * endpoints, their references, and closing them. A peer's failure is seen
 * in the UCX error callback, where the endpoint must not be closed; the
 * connection is only marked there and closed by the loop.
 */
#include "pss_conn.h"

#include "ps_log.h"
#include "ps_time.h"

#include <stdlib.h>
#include <string.h>

/* Connections of this thread whose peer failed; their endpoints are closed
 * by the loop, outside the UCX error callback. */
static __thread pss_conn_t *pss_tls_dead;

void pss_conn_unref(pss_conn_t *conn)
{
    if (conn != NULL && --conn->refs == 0) {
        free(conn->groups);
        free(conn);
    }
}

static void pss_conn_remove(pss_worker_t *w, pss_conn_t *conn)
{
    for (size_t i = 0; i < w->nconns; i++) {
        if (w->conns[i] == conn) {
            w->conns[i] = w->conns[--w->nconns];
            break;
        }
    }
    if (w->conn_last == conn) {
        w->conn_last = NULL;
    }
}

pss_conn_t *pss_conn_add(pss_worker_t *w, ucp_ep_h ep, int owned)
{
    pss_conn_t *conn = calloc(1, sizeof(*conn));
    if (conn == NULL) {
        return NULL;
    }
    if (w->nconns == w->conns_cap) {
        size_t cap = w->conns_cap ? w->conns_cap * 2 : 16;
        pss_conn_t **conns = realloc(w->conns, cap * sizeof(*conns));
        if (conns == NULL) {
            free(conn);
            return NULL;
        }
        w->conns = conns;
        w->conns_cap = cap;
    }
    conn->ep = ep;
    conn->worker = w;
    conn->refs = 1;
    conn->owned = owned;
    w->conns[w->nconns++] = conn;
    return conn;
}

pss_conn_t *pss_conn_find(pss_worker_t *w, ucp_ep_h ep)
{
    if (w->conn_last != NULL && w->conn_last->ep == ep) {
        return w->conn_last;
    }
    for (size_t i = 0; i < w->nconns; i++) {
        if (w->conns[i]->ep == ep) {
            w->conn_last = w->conns[i];
            return w->conns[i];
        }
    }
    return NULL;
}

/* UCX's error callback (arg: the worker). Looked up by ep: UCX 1.13 may call
 * it for an endpoint already closed, whose connection is gone. */
static void pss_ep_error_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    pss_conn_t *conn = pss_conn_find(arg, ep);

    if (conn == NULL) {
        return;
    }
    ps_debug("worker %u: connection closed by peer (%s)", conn->worker->index,
             ucs_status_string(status));
    pss_conn_kill(conn);
}

void pss_conn_kill(pss_conn_t *conn)
{
    if (!conn->closed) {
        conn->closed = 1;
        conn->next_dead = pss_tls_dead;
        pss_tls_dead = conn;
    }
}

/*
 * Progress until the n close requests complete (and, with wait_sends, the
 * worker's reply sends too) or timeout_ns passes; cancel what is left and
 * free the requests.
 */
static void pss_ep_close_wait(pss_worker_t *w, ucs_status_ptr_t *closing, size_t n,
                              uint64_t timeout_ns, int wait_sends)
{
    uint64_t deadline = ps_time_ns() + timeout_ns;

    for (;;) {
        size_t left = 0;
        for (size_t i = 0; i < n; i++) {
            left += ucp_request_check_status(closing[i]) == UCS_INPROGRESS;
        }
        if ((left == 0 && (!wait_sends || w->sends_inflight == 0)) || ps_time_ns() > deadline) {
            break;
        }
        ucp_worker_progress(w->ucp_worker);
    }
    for (size_t i = 0; i < n; i++) {
        if (ucp_request_check_status(closing[i]) == UCS_INPROGRESS) {
            ucp_request_cancel(w->ucp_worker, closing[i]);
        }
        ucp_request_free(closing[i]);
    }
}

static void pss_ep_close(pss_worker_t *w, ucp_ep_h ep, int force)
{
    ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                 .flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0};
    ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_PTR(req)) {
        pss_ep_close_wait(w, &req, 1, 2000000000ull, 0);
    }
}

void pss_conn_close_dead(pss_worker_t *w, void (*abandon)(pss_conn_t *conn))
{
    while (pss_tls_dead != NULL) {
        pss_conn_t *conn = pss_tls_dead;
        pss_tls_dead = conn->next_dead;
        abandon(conn);
        pss_conn_remove(w, conn);
        if (conn->owned) {
            pss_ep_close(w, conn->ep, 1);
        }
        conn->ep = NULL;
        pss_conn_unref(conn); /* the table's reference */
    }
}

/*
 * A full worker's room for one more: the oldest connection that has not
 * authenticated within auth_wait of its accept (a client authenticates at
 * once, so that one is a peer without credentials, or a dead one) is
 * marked closed, for the loop to close as it does a failed peer's. 1 if
 * there was one.
 */
static int pss_conn_make_room(pss_worker_t *w)
{
    pss_server_t *s = w->server;
    uint64_t now = ps_time_ns(), wait_ns = (uint64_t)(s->cfg.auth_wait * 1e9);
    pss_conn_t *victim = NULL;

    if (s->auth_mode == PS_AUTH_NONE) {
        return 0;
    }
    for (size_t i = 0; i < w->nconns; i++) {
        pss_conn_t *c = w->conns[i];
        if (c->owned && !c->authed && !c->closed && now - c->accepted_ns >= wait_ns &&
            (victim == NULL || c->accepted_ns < victim->accepted_ns)) {
            victim = c;
        }
    }
    if (victim == NULL) {
        return 0;
    }
    pss_conn_kill(victim);
    w->conns_evicted++;
    if (ps_log_limit_pass(&w->refused_log, now, PSS_LOG_EVERY_NS, NULL)) {
        ps_warn("worker %u: %zu connections open, the most it accepts (max_connections): "
                "closing one that has not authenticated for %.1f s to make room (%llu so far)",
                w->index, w->nconns, (double)(now - victim->accepted_ns) / 1e9,
                (unsigned long long)w->conns_evicted);
    }
    return 1;
}

static void pss_conn_accept(ucp_conn_request_h conn_request, pss_worker_t *w, int shm)
{
    ucp_listener_h listener = shm ? w->shm_listener : w->listener;
    ucp_ep_params_t params;
    pss_conn_t *conn;
    ucp_ep_h ep;
    ucs_status_t status;

    if (atomic_load(&w->server->stopping)) {
        ucp_listener_reject(listener, conn_request);
        return;
    }
    if (w->nconns >= w->server->max_conns_per_worker && !pss_conn_make_room(w)) {
        /* The client sees the connection rejected. Logged at most once a
         * second: a flood must not flood the log too. */
        w->conns_refused++;
        if (ps_log_limit_pass(&w->refused_log, ps_time_ns(), PSS_LOG_EVERY_NS, NULL)) {
            ps_warn("worker %u: %zu connections open, the most it accepts (max_connections): "
                    "refusing new ones (%llu so far)",
                    w->index, w->nconns, (unsigned long long)w->conns_refused);
        }
        ucp_listener_reject(listener, conn_request);
        return;
    }
    conn = pss_conn_add(w, NULL, 1);
    if (conn == NULL) {
        ps_error("worker %u: no memory for a new connection", w->index);
        ucp_listener_reject(listener, conn_request);
        return;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                        UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.conn_request = conn_request;
    /* UCX 1.13 puts no shared-memory lane on an endpoint that detects a
     * vanished peer */
    params.err_mode = shm ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = pss_ep_error_cb;
    params.err_handler.arg = w;
    status = ucp_ep_create(w->ucp_worker, &params, &ep);
    if (status != UCS_OK) {
        ps_error("worker %u: ucp_ep_create for an incoming connection: %s", w->index,
                 ucs_status_string(status));
        pss_conn_remove(w, conn);
        pss_conn_unref(conn);
        return;
    }
    conn->ep = ep;
    conn->shm = shm;
    conn->accepted_ns = ps_time_ns();
    ps_debug("worker %u: new %sconnection (%zu open)", w->index, shm ? "shared-memory " : "",
             w->nconns);
}

void pss_conn_accept_cb(ucp_conn_request_h conn_request, void *arg)
{
    pss_conn_accept(conn_request, arg, 0);
}

void pss_conn_accept_shm_cb(ucp_conn_request_h conn_request, void *arg)
{
    pss_conn_accept(conn_request, arg, 1);
}

void pss_conn_close_all(pss_worker_t *w, void (*abandon)(pss_conn_t *conn))
{
    ucs_status_ptr_t *closing = calloc(w->nconns ? w->nconns : 1, sizeof(*closing));
    size_t nclosing = 0;

    pss_conn_close_dead(w, abandon);
    for (size_t i = 0; i < w->nconns; i++) {
        pss_conn_t *conn = w->conns[i];
        if (conn->owned && conn->ep != NULL && !conn->closed) {
            ucp_request_param_t param = {.op_attr_mask = 0};
            ucs_status_ptr_t r = ucp_ep_close_nbx(conn->ep, &param);
            if (UCS_PTR_IS_PTR(r) && closing != NULL) {
                closing[nclosing++] = r;
            } else if (UCS_PTR_IS_PTR(r)) {
                ucp_request_free(r);
            }
        }
        conn->closed = 1;
        conn->ep = NULL;
        pss_conn_unref(conn);
    }
    w->nconns = 0;
    pss_ep_close_wait(w, closing, nclosing, 1000000000ull, 1);
    free(closing);
}

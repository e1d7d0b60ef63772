/*
 * pss_req.c: a request's life after decoding (see pss_req.h): the worker's
 * reusable receive buffers, the reply (header and body copied into a send
 * that lives until UCX completes it, data freed by its owner's function),
 * the latency histogram, and the release of everything a request holds.
 * It knows nothing of what the requests mean: handlers call into it, never
 * the other way.
 */
#include "pss_req.h"

#include "pss_cache.h"
#include "pss_conn.h"

#include "ps_log.h"
#include "ps_mem.h"
#include "ps_time.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A reply being sent: header and body must live until the send completes. */
typedef struct pss_send {
    pss_worker_t *worker;
    void *data;
    size_t data_cap;   /* for pss_buf_put */
    pss_cgran_t *lent; /* or data lies in this cache granule (pss_cache_lend) */
    pss_conn_t *conn;  /* shm: on conn->sends (holding a reference) until done */
    struct pss_send *prev, *next;
    int abandoned; /* pss_reply_abandon: data given back, no longer counted */
    uint64_t mem_charged; /* the request's, in worker->mem_inflight until the data is sent */
    size_t hdr_len;
    uint8_t hdr[]; /* ps_msg_hdr_t + body */
} pss_send_t;

/*
 * Large buffers (rendezvous receive buffers of write batches, the I/O
 * buffers of spans, read-ahead) are kept by the worker and reused.
 * Allocated afresh each time, they were new pages to the kernel: with
 * glibc's per-thread heaps a 512 MiB copy in took about 55,000 page faults
 * on the daemon, each one inside the TCP receive, and 1.0 s of its CPU. A
 * buffer is reused for any request of at least half its capacity, and
 * capacities are rounded up, to 64 KiB and from PSS_BUF_HUGE_MIN up to
 * whole huge pages (ps_mem_map_huge: with them, contiguous 1 GiB writes
 * and reads cost the servers a quarter less CPU on the VM we measure on),
 * so a stream of batches of one size keeps hitting the same few buffers.
 * The worker keeps up to PSS_BUF_KEEP of them (PSS_BUF_KEEP_BYTES at
 * most): two processes' HDF5 writes through write-behind held 17-26 at
 * once on one worker (rendezvous buffers and span buffers of 2 MiB), and
 * with 16 kept every burst mapped fresh ones (a 2 MiB page zeroed by the
 * kernel in the fault: 18 ms of one worker's CPU in one burst, while both
 * clients waited for their flush).
 */
size_t pss_buf_cap(size_t len)
{
    size_t cap = (len + PSS_BUF_POOL_MIN - 1) / PSS_BUF_POOL_MIN * PSS_BUF_POOL_MIN;
    /* (every capacity from PSS_BUF_HUGE_MIN up is whole huge pages) */
    return cap < PSS_BUF_HUGE_MIN ? cap : ps_mem_huge_round(len);
}

/* Free a buffer of capacity cap (not kept). */
static void pss_buf_free(void *p, size_t cap)
{
    if (cap >= PSS_BUF_HUGE_MIN) {
        ps_mem_unmap_huge(p, cap, 0);
    } else {
        free(p);
    }
}

void *pss_buf_get(pss_worker_t *w, size_t len, size_t align, size_t *cap)
{
    size_t want = pss_buf_cap(len);
    void *p;

    if (len < PSS_BUF_POOL_MIN) {
        *cap = 0; /* the heap keeps small blocks warm itself */
        return posix_memalign(&p, align, len) == 0 ? p : NULL;
    }
    for (unsigned i = 0; i < w->nbufs; i++) {
        if (w->bufs[i].cap >= want && w->bufs[i].cap / 2 <= want) {
            p = w->bufs[i].p;
            *cap = w->bufs[i].cap;
            w->bufs_bytes -= *cap;
            w->bufs[i] = w->bufs[--w->nbufs];
            return p;
        }
    }
    *cap = want;
    if (want >= PSS_BUF_HUGE_MIN) {
        return ps_mem_map_huge(want, 0); /* aligned to 2 MiB */
    }
    return posix_memalign(&p, align, want) == 0 ? p : NULL;
}

void pss_buf_put(pss_worker_t *w, void *p, size_t cap)
{
    if (p == NULL || cap == 0) {
        free(p);
        return;
    }
    if (w->nbufs == PSS_BUF_KEEP || w->bufs_bytes + cap > PSS_BUF_KEEP_BYTES) {
        pss_buf_free(p, cap);
        return;
    }
    w->bufs[w->nbufs].p = p;
    w->bufs[w->nbufs].cap = cap;
    w->nbufs++;
    w->bufs_bytes += cap;
}

void pss_buf_release_all(pss_worker_t *w)
{
    while (w->nbufs > 0) {
        w->nbufs--;
        pss_buf_free(w->bufs[w->nbufs].p, w->bufs[w->nbufs].cap);
    }
    w->bufs_bytes = 0;
}

/* Give back a reply's data: a buffer of the worker's, or cache memory lent
 * to the reply. */
static void pss_data_put(pss_worker_t *w, void *data, size_t cap, pss_cgran_t *lent)
{
    if (lent != NULL) {
        pss_cache_unpin(w, lent);
    } else {
        pss_buf_put(w, data, cap);
    }
}

/* Free req and what it holds (the buffer back to the worker, the connection
 * reference, the memory charge). */
static void pss_req_free(pss_req_t *req)
{
    pss_worker_t *w = req->worker;

    if (req->ucx_data != NULL) {
        ucp_am_data_release(w->ucp_worker, req->ucx_data);
    }
    pss_buf_put(w, req->own_buf, req->own_cap);
    pss_data_put(w, req->reply_buf, req->reply_cap, req->lent);
    pss_conn_unref(req->conn);
    w->mem_inflight -= req->mem_charged;
    w->inflight--;
    free(req);
}

/* Give back the send's data and its memory charge. */
static void pss_send_put_data(pss_send_t *send)
{
    pss_data_put(send->worker, send->data, send->data_cap, send->lent);
    send->worker->mem_inflight -= send->mem_charged;
    send->mem_charged = 0;
    send->data = NULL;
    send->lent = NULL;
}

static void pss_send_done(pss_send_t *send)
{
    pss_send_put_data(send);
    free(send);
}

/* Take an in-flight send off its connection's list. */
/* The two lists a send can be on: its shm connection's sends in flight,
 * and its worker's abandoned ones (pss_reply_abandon). */
static void pss_send_list_add(pss_send_t **head, pss_send_t *send)
{
    send->prev = NULL;
    send->next = *head;
    if (*head != NULL) {
        (*head)->prev = send;
    }
    *head = send;
}

static void pss_send_list_del(pss_send_t **head, pss_send_t *send)
{
    if (send->prev != NULL) {
        send->prev->next = send->next;
    } else {
        *head = send->next;
    }
    if (send->next != NULL) {
        send->next->prev = send->prev;
    }
    send->prev = send->next = NULL;
}

static void pss_send_unlink(pss_send_t *send)
{
    pss_conn_t *conn = send->conn;

    if (conn == NULL) {
        return;
    }
    pss_send_list_del(&conn->sends, send);
    send->conn = NULL;
    pss_conn_unref(conn);
}

static void pss_send_cb(void *request, ucs_status_t status, void *user_data)
{
    pss_send_t *send = user_data;

    if (send->abandoned) {
        pss_send_list_del(&send->worker->abandoned_sends, send);
        free(send);
        ucp_request_free(request);
        return;
    }
    if (status != UCS_OK) {
        ps_debug("worker %u: reply not delivered: %s", send->worker->index,
                 ucs_status_string(status));
    }
    send->worker->sends_inflight--;
    pss_send_unlink(send);
    pss_send_done(send);
    ucp_request_free(request);
}

void pss_reply_abandon(pss_conn_t *conn)
{
    unsigned n = 0;

    while (conn->sends != NULL) {
        pss_send_t *send = conn->sends;

        pss_send_put_data(send);
        send->abandoned = 1;
        send->worker->sends_inflight--;
        pss_send_unlink(send);
        /* UCX may never complete the send of a force-closed endpoint:
         * keep it on the worker until it does or the worker is destroyed */
        pss_send_list_add(&send->worker->abandoned_sends, send);
        n++;
    }
    if (n > 0) {
        ps_debug("worker %u: %u replies to a closed shared-memory connection given up",
                 conn->worker->index, n);
    }
}

void pss_reply_free_abandoned(pss_worker_t *w)
{
    pss_send_t *send = w->abandoned_sends;

    while (send != NULL) {
        pss_send_t *next = send->next;
        free(send);
        send = next;
    }
    w->abandoned_sends = NULL;
}

static unsigned pss_latency_bucket(uint64_t ns)
{
    uint64_t us = ns / 1000;
    unsigned b = us == 0 ? 0 : 64 - (unsigned)__builtin_clzll(us);
    return b < PS_STATS_HIST_BUCKETS ? b : PS_STATS_HIST_BUCKETS - 1;
}

/* Send req's reply (pss_reply), leaving req to the caller. */
static void pss_reply_send(pss_req_t *req, ps_status_t status, const void *body, uint32_t body_len,
                           void *data, uint64_t data_len, size_t data_cap)
{
    pss_worker_t *w = req->worker;
    pss_conn_t *conn = req->conn;
    pss_cgran_t *lent = data != NULL ? req->lent : NULL; /* data is the lent reply_buf */
    ps_msg_hdr_t hdr;
    pss_send_t *send;
    uint64_t waited_ns;

    if (lent != NULL) {
        req->lent = NULL;
    }
    w->answered++;
    if (status != PS_OK) {
        body_len = 0;
        PSS_STAT_ADD(w, errors, 1);
    }
    if (status != PS_OK || data == NULL) {
        pss_data_put(w, data, data_cap, lent);
        lent = NULL;
        data = NULL;
        data_len = 0;
        data_cap = 0;
    }
    waited_ns = ps_time_ns() - req->recv_ns;
    PSS_STAT_ADD(w, latency_hist[pss_latency_bucket(waited_ns)], 1);
    if (w->server->cfg.slow_reply > 0 && (double)waited_ns >= w->server->cfg.slow_reply * 1e9) {
        ps_warn("worker %u: answered %s req %#llx %.3f s after it arrived (status %d)", w->index,
                ps_msg_type_name(req->hdr.type), (unsigned long long)req->hdr.req_id,
                (double)waited_ns / 1e9, (int)status);
    }

    if (conn == NULL || conn->closed || conn->ep == NULL) {
        ps_debug("worker %u: no endpoint to reply to %s req %llu", w->index,
                 ps_msg_type_name(req->hdr.type), (unsigned long long)req->hdr.req_id);
        goto out_free_data;
    }

    send = malloc(sizeof(*send) + sizeof(hdr) + body_len);
    if (send == NULL) {
        ps_error("worker %u: no memory for a reply", w->index);
        goto out_free_data;
    }
    ps_msg_hdr_init(&hdr, (ps_msg_type_t)req->hdr.type, req->hdr.req_id, status, body_len);
    memcpy(send->hdr, &hdr, sizeof(hdr));
    if (body_len > 0) {
        memcpy(send->hdr + sizeof(hdr), body, body_len);
    }
    send->hdr_len = sizeof(hdr) + body_len;
    send->worker = w;
    send->data = data;
    send->data_cap = data_cap;
    send->lent = lent;
    send->conn = NULL;
    send->prev = send->next = NULL;
    send->abandoned = 0;
    /* a read's reply buffer stays until the client has taken it: so does
     * the request's charge, or replies nobody collects would pile up past
     * max_inflight (before session 75: 435 MB held against 32 MiB) */
    send->mem_charged = data != NULL ? req->mem_charged : 0;
    req->mem_charged -= send->mem_charged;

    ucp_request_param_t param;
    memset(&param, 0, sizeof(param));
    param.op_attr_mask =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    param.cb.send = pss_send_cb;
    param.user_data = send;
    /* see eager_reply in pss_config.c: UCX 1.13 picks rendezvous above a
     * few KiB on TCP, the slower way for replies the client waits for */
    uint64_t eager = conn->shm ? w->server->cfg.eager_reply_shm : w->server->cfg.eager_reply;
    param.flags = data_len > 0 && data_len <= eager ? UCP_AM_SEND_FLAG_EAGER : 0;
    PSS_STAT_ADD(w, eager_replies, param.flags != 0);
    ucs_status_ptr_t sreq =
        ucp_am_send_nbx(conn->ep, PS_AM_ID_REPLY, send->hdr, send->hdr_len, data, data_len, &param);
    ps_trace("worker %u: reply to %s req %#llx, status %d, %llu data bytes, %s", w->index,
             ps_msg_type_name(req->hdr.type), (unsigned long long)req->hdr.req_id, (int)status,
             (unsigned long long)data_len,
             sreq == NULL           ? "sent"
             : UCS_PTR_IS_ERR(sreq) ? "failed"
                                    : "in flight");
    if (sreq == NULL) {
        pss_send_done(send);
    } else if (UCS_PTR_IS_ERR(sreq)) {
        ps_warn("worker %u: sending the reply to %s req %llu: %s", w->index,
                ps_msg_type_name(req->hdr.type), (unsigned long long)req->hdr.req_id,
                ucs_status_string(UCS_PTR_STATUS(sreq)));
        pss_send_done(send);
    } else {
        w->sends_inflight++;
        if (conn->shm) {
            send->conn = conn;
            conn->refs++;
            pss_send_list_add(&conn->sends, send);
        }
    }
    return;

out_free_data:
    pss_data_put(w, data, data_cap, lent);
}

void pss_reply(pss_req_t *req, ps_status_t status, const void *body, uint32_t body_len, void *data,
               uint64_t data_len, size_t data_cap)
{
    pss_reply_send(req, status, body, body_len, data, data_len, data_cap);
    pss_req_free(req);
}

void pss_reply_keep(pss_req_t *req, const void *body, uint32_t body_len)
{
    pss_reply_send(req, PS_OK, body, body_len, NULL, 0, 0);
}

void pss_req_done(pss_req_t *req)
{
    pss_req_free(req);
}

void pss_reject(pss_req_t *req, ps_status_t status, const char *what)
{
    pss_worker_t *w = req->worker;
    uint64_t dropped;

    /* (one line a second at most: a peer may send nothing else) */
    if (ps_log_limit_pass(&w->reject_log, ps_time_ns(), PSS_LOG_EVERY_NS, &dropped)) {
        char dump[256];
        ps_proto_dump(&req->hdr, sizeof(req->hdr) + req->hdr.body_len, dump, sizeof(dump));
        ps_warn("worker %u: rejecting request (%s): %s: %s (%" PRIu64
                " more rejected requests not logged since the last line)",
                w->index, dump, what, ps_status_string(status), dropped);
    }
    pss_reply(req, status, NULL, 0, NULL, 0, 0);
}

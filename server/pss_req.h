/*
 * pss_req.h: a request's life after the worker decoded it: the buffers it
 * holds, its reply and its release. Handlers (pss_admin.c, pss_meta.c,
 * pss_store.c) answer every request they are given exactly once, through
 * pss_reply, which also frees it.
 */
#ifndef PSS_REQ_H
#define PSS_REQ_H

#include "pss.h"

/*
 * Send the reply of req and free req. With status PS_OK the reply carries
 * body (copied) and data; with an error status it carries neither. data
 * (NULL: none) is the reply's: a buffer of pss_buf_get with its capacity,
 * or a malloc'd one (data_cap 0), given back with pss_buf_put once sent, or
 * at once with an error status; or, when req->lent is set, the cache
 * memory lent to req (its reply_buf), unpinned instead.
 */
void pss_reply(pss_req_t *req, ps_status_t status, const void *body, uint32_t body_len, void *data,
               uint64_t data_len, size_t data_cap);

/* pss_reply with PS_OK and body alone, but req is kept: its payload stays
 * readable (and charged to the worker) until pss_req_done frees it. */
void pss_reply_keep(pss_req_t *req, const void *body, uint32_t body_len);

/* Free a request answered by pss_reply_keep. */
void pss_req_done(pss_req_t *req);

/* Log why req is refused (what, with a dump of its header) and reply status. */
void pss_reject(pss_req_t *req, ps_status_t status, const char *what);

/* Give up the replies still in flight on a connection whose peer is gone:
 * UCX 1.13 never ended a rendezvous send to a client killed meanwhile on a
 * shared-memory endpoint (one without failure detection), so its data went
 * back to the worker only at exit, and SIGTERM waited drain_timeout for it.
 * The data is given back now and the worker counts the sends no longer;
 * UCX's request is freed if it ever completes. */
void pss_reply_abandon(pss_conn_t *conn);
/* Free the abandoned sends UCX never completed (after ucp_worker_destroy). */
void pss_reply_free_abandoned(pss_worker_t *w);

/* A buffer of at least len bytes aligned to align, reused from the worker's
 * free buffers when one fits; its capacity in *cap (0: under
 * PSS_BUF_POOL_MIN, a plain allocation). NULL if out of memory. It goes
 * back with pss_buf_put, or with the request (req->own_buf, own_cap). */
void *pss_buf_get(pss_worker_t *w, size_t len, size_t align, size_t *cap);

/* The memory pss_buf_get takes for len bytes (len itself under
 * PSS_BUF_POOL_MIN). */
size_t pss_buf_cap(size_t len);

/* Give back a buffer of pss_buf_get (kept for reuse, or freed), or free a
 * malloc'd one (cap 0). NULL is fine. */
void pss_buf_put(pss_worker_t *w, void *p, size_t cap);

/* Free the worker's kept buffers (worker exit). */
void pss_buf_release_all(pss_worker_t *w);

#endif

/*
 * pss_conn.h: a worker's connections. A connection wraps one UCX endpoint
 * and is shared by the worker's table and every request that will reply on
 * it (refcounted), so a peer that goes away while its requests are served
 * leaves them a closed connection to skip, not a dangling endpoint.
 */
#ifndef PSS_CONN_H
#define PSS_CONN_H

#include "pss.h"

struct pss_conn {
    ucp_ep_h ep;
    pss_worker_t *worker;
    int refs;   /* the table's reference + one per request holding it */
    int closed; /* error seen or worker closing: never send on ep again */
    int owned;  /* created by our listener: we close it */
    int authed; /* an AUTH succeeded (pss_auth.c): uid and gid are the caller's */
    uint32_t uid, gid;
    int groups_known; /* groups looked up (pss_perm.c, when a mode first needs them) */
    uint32_t ngroups;
    gid_t *groups; /* the uid's groups in the server's user database */
    int nonce_set; /* nonce was sent in a HELLO reply and not yet answered */
    uint8_t nonce[PS_AUTH_NONCE_LEN];
    int cap_ok;        /* cap_last passed its MAC check (pss_perm.c) */
    ps_cap_t cap_last; /* the last capability verified on this connection */
    int shm;           /* accepted by the shm listener: serves the servers' user alone
                          (pss_auth.c) */
    struct pss_send *sends; /* shm: its replies in flight (pss_req.c) */
    uint64_t accepted_ns;   /* ps_time_ns() when our listener accepted it */
    struct pss_conn *next_dead;
};

/* Add a connection for ep (NULL: set later) to w's table, holding the
 * table's reference; NULL if out of memory. */
pss_conn_t *pss_conn_add(pss_worker_t *w, ucp_ep_h ep, int owned);

/* The connection of ep in w's table, or NULL. */
pss_conn_t *pss_conn_find(pss_worker_t *w, ucp_ep_h ep);

/* Drop one reference (NULL is ignored); the last one frees the connection. */
void pss_conn_unref(pss_conn_t *conn);

/* UCX listener callbacks (arg = the worker): accept a connection request,
 * with peer-failure detection (the TCP listener) or without it, so that
 * UCX may use shared memory (the shm listener, pss_listen.c). UCX 1.13
 * still calls the error callback of the latter when the client's
 * connection-manager socket closes (its process exited or closed the
 * endpoint): the connection is then closed as any failed one. */
void pss_conn_accept_cb(ucp_conn_request_h conn_request, void *arg);
void pss_conn_accept_shm_cb(ucp_conn_request_h conn_request, void *arg);

/* Mark a connection of the calling worker dead: pss_conn_close_dead closes
 * its endpoint (forced, which ends its transfers in flight with an error). */
void pss_conn_kill(pss_conn_t *conn);

/* Close the endpoints of connections whose peer failed (deferred out of the
 * UCX error callback), after abandon(conn) gave up the replies still in
 * flight on each (pss_reply_abandon). Called by the loop of the worker
 * thread. */
void pss_conn_close_dead(pss_worker_t *w, void (*abandon)(pss_conn_t *conn));

/* On worker exit: close the dead connections as above and every other
 * endpoint, flushing what was sent, and give them and the replies still
 * being sent at most a second together. */
void pss_conn_close_all(pss_worker_t *w, void (*abandon)(pss_conn_t *conn));

#endif

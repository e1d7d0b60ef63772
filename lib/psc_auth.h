/*
 * psc_auth.h: the client's side of AUTH (see psc_auth.c).
 */
#ifndef PSC_AUTH_H
#define PSC_AUTH_H

#include <stddef.h>

#include "psc_internal.h"

/*
 * Progress thread: build the AUTH request answering the HELLO reply rep of
 * server srv: its body into *req and its credential into a malloc'd *cred
 * of *cred_len bytes (the caller frees it). On error (no key, munged
 * unreachable, this client set to another mode than the server's) a
 * message naming the reason goes to msg. Returns a ps_status_t.
 */
ps_status_t psc_auth_make(pstripe_fs_t *fs, const psc_server_t *srv, const ps_hello_rep_t *rep,
                          ps_auth_req_t *req, void **cred, size_t *cred_len, char *msg,
                          size_t msglen);

/*
 * Tickets (psc_ticket_t, one slot per worker of a connection and one for
 * the renewal): psc_conn.c sends them, these keep their state.
 * psc_ticket_prepare: slot t's AUTH presenting conn's ticket (a copy of
 * it), its reply into the slot, cb its done_cb.
 * psc_ticket_take: after a worker accepted a ticket, keep the fresher of
 * conn's and the one its answer carries.
 * psc_ticket_retry: worker w refused the ticket; 1 if it is to be presented
 * again after a renewal (then *renew_on is the worker to send the renewal
 * to, PSC_RENEW_WATCH for the shared-memory connection's watch, or
 * PSC_RENEW_WAIT when one is in flight already), 0 if the refusal stands.
 * psc_tickets_pending: does a ticket's answer still wait for its done_cb?
 */
#define PSC_RENEW_WAIT  UINT32_MAX       /* a renewal is in flight: wait for it */
#define PSC_RENEW_WATCH (UINT32_MAX - 1) /* renew on conn->watch, worker 0's HELLO endpoint */
void psc_ticket_prepare(psc_conn_t *conn, psc_ticket_t *t, void (*cb)(pstripe_fs_t *, psc_op_t *));
void psc_ticket_take(psc_conn_t *conn, const psc_ticket_t *t);
int psc_ticket_retry(psc_conn_t *conn, uint32_t w, uint32_t *renew_on);
int psc_tickets_pending(const psc_conn_t *conn);

/* Is the server srv answered HELLO for (rep) in another place of its
 * cluster's list than srv has in the client's (a configuration that lists
 * the servers twice, in another order, or another cluster's)? 1 with the
 * reason in msg; 0 when they agree or the server does not know its place. */
int psc_hello_misplaced(const pstripe_fs_t *fs, const psc_server_t *srv, const ps_hello_rep_t *rep,
                        char *msg, size_t len);

/* The message of an AUTH (or ticket) op to srv that failed, in auth mode. */
void psc_auth_refused(const psc_server_t *srv, uint32_t mode, const psc_op_t *op, char *msg,
                      size_t len);

#endif

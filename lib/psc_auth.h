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

/* The message of an AUTH (or ticket) op to srv that failed, in auth mode. */
void psc_auth_refused(const psc_server_t *srv, uint32_t mode, const psc_op_t *op, char *msg,
                      size_t len);

#endif

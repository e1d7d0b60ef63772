/*
 * pss_auth.h: who is calling (see pss_auth.c): the auth mode of the
 * server, the nonce of HELLO, AUTH (MUNGE credential, cluster-key HMAC or
 * ticket) and the gate that refuses requests of connections that have not
 * authenticated.
 */
#ifndef PSS_AUTH_H
#define PSS_AUTH_H

#include "pss.h"

/* At start-up, after the configuration: the mode (auth), its key
 * (auth_key_file) or MUNGE socket (munge_socket), the ticket secret. */
ps_status_t pss_auth_init(pss_server_t *s);

/* HELLO: put the auth mode and a new nonce for req's connection in rep. */
ps_status_t pss_auth_hello(pss_worker_t *w, pss_req_t *req, ps_hello_rep_t *rep);

/* Serve an AUTH request. */
void pss_auth_handle(pss_worker_t *w, pss_req_t *req);

/* 1 if req may be served; 0 if it was refused (answered with
 * PS_ERR_ACCESS and counted) because its connection has not authenticated
 * or, for a data request, its capability does not allow it (pss_perm.c). */
int pss_auth_check(pss_worker_t *w, pss_req_t *req);

#endif

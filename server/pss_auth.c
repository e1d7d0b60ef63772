/*
 * pss_auth.c: authentication of connections (see pss_auth.h and the AUTH
 * section of ps_proto.h).
 *
 * A client sends HELLO to one worker; the reply carries the server's mode
 * and a random nonce kept on that connection. The client's AUTH answers it:
 *   munge  a MUNGE credential whose payload is the nonce: munged on this
 *          node decodes it (same key as the client's node, within its TTL,
 *          never seen before) and tells the caller's uid and gid;
 *   key    HMAC-SHA256 under the cluster key over a label, the nonce, the
 *          server id and the uid/gid the client claims: proves the caller
 *          can read the key file; its uid/gid are its own statement.
 * The reply holds a ticket (uid, gid, expiry, MAC under a secret drawn at
 * start-up and shared by this server's workers) that the client presents
 * on its connections to the other workers, which have no nonce of theirs.
 * Until one of these succeeds, a connection may send HELLO and AUTH only;
 * after, its data requests must also carry a capability (pss_perm.c),
 * checked here, before they are routed and queued.
 */
#include "pss_auth.h"

#include "pss_conn.h"
#include "pss_perm.h"
#include "pss_req.h"

#include "ps_cap.h"

#include "ps_hmac.h"
#include "ps_log.h"
#include "ps_time.h"

#include <inttypes.h>
#include <munge.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static uint64_t pss_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

ps_status_t pss_auth_init(pss_server_t *s)
{
    const char *mode = s->cfg.auth;
    char err[512];
    ps_status_t status;

    if (getrandom(s->ticket_secret, sizeof(s->ticket_secret), 0) !=
        (ssize_t)sizeof(s->ticket_secret)) {
        ps_error("getrandom for the ticket secret: %m");
        return PS_ERR_IO;
    }
    if (strcmp(mode, "munge") == 0 || strcmp(mode, "key") == 0) {
        s->auth_mode = strcmp(mode, "munge") == 0 ? PS_AUTH_MUNGE : PS_AUTH_KEY;
        if (s->cfg.auth_key_file[0] == '\0') {
            ps_error("auth = %s needs auth_key_file (a file readable only by its owner, the "
                     "same on every server%s)",
                     mode, s->auth_mode == PS_AUTH_KEY ? " and client" : ": capabilities");
            return PS_ERR_INVALID;
        }
        status =
            ps_key_file_load(s->cfg.auth_key_file, s->auth_key, &s->auth_key_len, err, sizeof(err));
        if (status != PS_OK) {
            ps_error("auth = %s: %s", mode, err);
            return status;
        }
        ps_cap_key_derive(s->auth_key, s->auth_key_len, s->cap_key);
        s->caps = 1;
        if (s->auth_mode == PS_AUTH_MUNGE) {
            ps_info("auth: munge (socket %s): clients prove their uid/gid with MUNGE "
                    "credentials; capabilities under the key of %s",
                    s->cfg.munge_socket[0] ? s->cfg.munge_socket : "munged's default",
                    s->cfg.auth_key_file);
        } else {
            ps_info("auth: key (%s): clients prove they hold the cluster key; capabilities "
                    "under a key derived from it",
                    s->cfg.auth_key_file);
        }
    } else if (strcmp(mode, "none") == 0) {
        s->auth_mode = PS_AUTH_NONE;
        ps_warn("auth = none: every client that reaches this server's ports is served, as any "
                "user, without proving who it is; no permission checks, no capabilities");
    } else {
        ps_error("auth = %s: must be munge, key or none", mode);
        return PS_ERR_INVALID;
    }
    return PS_OK;
}

ps_status_t pss_auth_hello(pss_worker_t *w, pss_req_t *req, ps_hello_rep_t *rep)
{
    pss_conn_t *conn = req->conn;

    rep->auth_mode = w->server->auth_mode;
    if (getrandom(rep->nonce, sizeof(rep->nonce), 0) != (ssize_t)sizeof(rep->nonce)) {
        ps_error("getrandom for a HELLO nonce: %m");
        return PS_ERR_IO;
    }
    if (conn != NULL) {
        memcpy(conn->nonce, rep->nonce, sizeof(conn->nonce));
        conn->nonce_set = 1;
    }
    return PS_OK;
}

static void pss_ticket_mac(const pss_server_t *s, const ps_auth_ticket_t *t, uint8_t *mac)
{
    const void *parts[1] = {t};
    size_t lens[1] = {offsetof(ps_auth_ticket_t, mac)};
    ps_hmac_sha256(s->ticket_secret, sizeof(s->ticket_secret), 1, parts, lens, mac);
}

static void pss_key_mac(const pss_server_t *s, const uint8_t *nonce, uint32_t uid, uint32_t gid,
                        uint8_t *mac)
{
    const void *parts[5] = {PS_AUTH_KEY_LABEL, nonce, &s->server_id, &uid, &gid};
    size_t lens[5] = {sizeof(PS_AUTH_KEY_LABEL) - 1, PS_AUTH_NONCE_LEN, 8, 4, 4};
    ps_hmac_sha256(s->auth_key, s->auth_key_len, 5, parts, lens, mac);
}

/* MUNGE: decode the credential (a NUL-free string) with munged; its payload
 * must be this connection's nonce. */
static const char *pss_auth_munge(pss_server_t *s, pss_req_t *req, uint32_t *uid, uint32_t *gid)
{
    char cred[PS_AUTH_CRED_MAX + 1];
    munge_ctx_t ctx = munge_ctx_create();
    void *payload = NULL;
    int payload_len = 0;
    uid_t u;
    gid_t g;
    munge_err_t err;
    const char *why = NULL;

    if (ctx == NULL) {
        return "no memory for a MUNGE context";
    }
    if (s->cfg.munge_socket[0] != '\0' &&
        munge_ctx_set(ctx, MUNGE_OPT_SOCKET, s->cfg.munge_socket) != EMUNGE_SUCCESS) {
        munge_ctx_destroy(ctx);
        return "cannot set the MUNGE socket";
    }
    memcpy(cred, req->data, req->data_len);
    cred[req->data_len] = '\0';
    err = munge_decode(cred, ctx, &payload, &payload_len, &u, &g);
    if (err != EMUNGE_SUCCESS) {
        ps_warn("worker %u: MUNGE credential refused: %s", req->worker->index,
                munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(err));
        why = "MUNGE credential refused (invalid, expired, replayed or from a host with "
              "another MUNGE key)";
    } else if (payload_len != (int)PS_AUTH_NONCE_LEN || req->conn == NULL ||
               !req->conn->nonce_set ||
               !ps_mem_equal_ct(payload, req->conn->nonce, PS_AUTH_NONCE_LEN)) {
        why = "MUNGE credential does not answer this connection's HELLO nonce";
    } else {
        *uid = (uint32_t)u;
        *gid = (uint32_t)g;
    }
    free(payload);
    munge_ctx_destroy(ctx);
    return why;
}

/* The reason a credential is refused, or NULL with *uid, *gid set. */
static const char *pss_auth_verify(pss_server_t *s, pss_req_t *req, uint32_t *uid, uint32_t *gid)
{
    const ps_auth_req_t *a = &req->body.auth;
    uint8_t mac[PS_AUTH_MAC_LEN];

    if (a->method == PS_AUTH_TICKET) {
        ps_auth_ticket_t t;
        if (a->cred_len != sizeof(t)) {
            return "malformed ticket";
        }
        memcpy(&t, req->data, sizeof(t));
        pss_ticket_mac(s, &t, mac);
        if (!ps_mem_equal_ct(mac, t.mac, sizeof(mac)) || t.server_id != s->server_id) {
            return "forged ticket, or one of another server or of an earlier run of this one";
        }
        /* an expired ticket is renewed on a connection its holder has
         * authenticated already (a client idle longer than its life) */
        if (pss_realtime_ns() > t.expiry_ns &&
            (req->conn == NULL || !req->conn->authed || req->conn->uid != t.uid ||
             req->conn->gid != t.gid)) {
            return "expired ticket";
        }
        *uid = t.uid;
        *gid = t.gid;
        return NULL;
    }
    if (a->method != s->auth_mode) {
        return s->auth_mode == PS_AUTH_MUNGE
                   ? "this server requires a MUNGE credential (auth = munge)"
                   : "this server requires the cluster key (auth = key)";
    }
    if (req->conn == NULL || !req->conn->nonce_set) {
        return "AUTH before HELLO on this connection";
    }
    if (a->method == PS_AUTH_MUNGE) {
        return pss_auth_munge(s, req, uid, gid);
    }
    if (a->cred_len != PS_AUTH_MAC_LEN) {
        return "malformed key proof";
    }
    pss_key_mac(s, req->conn->nonce, a->uid, a->gid, mac);
    if (!ps_mem_equal_ct(mac, req->data, sizeof(mac))) {
        return "wrong cluster key";
    }
    *uid = a->uid;
    *gid = a->gid;
    return NULL;
}

void pss_auth_handle(pss_worker_t *w, pss_req_t *req)
{
    pss_server_t *s = w->server;
    ps_auth_rep_t rep;
    const char *why;
    uint32_t uid = 0, gid = 0;

    if (s->auth_mode == PS_AUTH_NONE) {
        pss_reply(req, PS_ERR_UNSUPPORTED, NULL, 0, NULL, 0, 0);
        return;
    }
    why = pss_auth_verify(s, req, &uid, &gid);
    if (req->conn != NULL) {
        req->conn->nonce_set = 0; /* a nonce answers one AUTH */
    }
    if (why != NULL) {
        uint64_t dropped;
        PSS_STAT_ADD(w, auth_refused, 1);
        if (ps_log_limit_pass(&w->auth_refused_log, ps_time_ns(), PSS_LOG_EVERY_NS, &dropped)) {
            ps_warn("worker %u: authentication refused (%s): %s (%" PRIu64
                    " more refusals not logged since the last line)",
                    w->index, ps_auth_mode_name(req->body.auth.method), why, dropped);
        }
        pss_reply(req, PS_ERR_ACCESS, NULL, 0, NULL, 0, 0);
        return;
    }
    if (req->conn != NULL) {
        req->conn->authed = 1;
        req->conn->uid = uid;
        req->conn->gid = gid;
    }
    PSS_STAT_ADD(w, auth_ok, 1);
    ps_debug("worker %u: authenticated uid %u gid %u (%s)", w->index, uid, gid,
             ps_auth_mode_name(req->body.auth.method));
    memset(&rep, 0, sizeof(rep));
    rep.uid = uid;
    rep.gid = gid;
    rep.ticket.server_id = s->server_id;
    rep.ticket.expiry_ns = pss_realtime_ns() + (uint64_t)(s->cfg.ticket_life * 1e9);
    rep.ticket.uid = uid;
    rep.ticket.gid = gid;
    pss_ticket_mac(s, &rep.ticket, rep.ticket.mac);
    pss_reply(req, PS_OK, &rep, sizeof(rep), NULL, 0, 0);
}

int pss_auth_check(pss_worker_t *w, pss_req_t *req)
{
    const char *who = "a connection that has not authenticated";

    if (w->server->auth_mode == PS_AUTH_NONE || req->hdr.type == PS_MSG_HELLO ||
        req->hdr.type == PS_MSG_AUTH) {
        return 1;
    }
    if (req->conn != NULL && req->conn->authed) {
        /* shared memory (cma) only between processes of the servers' user:
         * a peer could otherwise name another process's memory */
        if (!req->conn->shm || req->conn->uid == w->server->shm_id.uid) {
            return pss_perm_check_data(w, req);
        }
        who = "a shared-memory connection of another user than the servers'";
    }
    PSS_STAT_ADD(w, auth_refused, 1);
    if (ps_log_limit_pass(&w->auth_refused_log, ps_time_ns(), PSS_LOG_EVERY_NS, NULL)) {
        ps_warn("worker %u: refusing %s from %s (auth = %s)", w->index,
                ps_msg_type_name(req->hdr.type), who, ps_auth_mode_name(w->server->auth_mode));
    }
    pss_reply(req, PS_ERR_ACCESS, NULL, 0, NULL, 0, 0);
    return 0;
}

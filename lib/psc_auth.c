/*
 * psc_auth.c: the credential a client sends in AUTH (ps_proto.h).
 *
 * munge: a MUNGE credential whose payload is the server's HELLO nonce,
 *        encoded by the local munged (libmunge is loaded with dlopen when
 *        first needed, so that programs linking the client, MPI ones
 *        included, need it only where MUNGE is used);
 * key:   HMAC-SHA256 under the cluster key over PS_AUTH_KEY_LABEL, the
 *        nonce, the server id and this process's uid and gid.
 * The key never leaves the process; a credential answers one nonce only.
 */
#include <dlfcn.h>
#include <munge.h> /* constants only: the library is dlopen()ed */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ps_hmac.h"
#include "psc_auth.h"
#include "psc_op.h"

/* The libmunge functions used (munge.h's signatures, with opaque types). */
typedef struct psc_munge_api {
    void *(*ctx_create)(void);
    void (*ctx_destroy)(void *ctx);
    int (*ctx_set)(void *ctx, int opt, ...);
    int (*encode)(char **cred, void *ctx, const void *buf, int len);
    const char *(*strerror)(int err);
    const char *(*ctx_strerror)(void *ctx);
} psc_munge_api_t;

#define PSC_MUNGE_OPT_SOCKET MUNGE_OPT_SOCKET

static psc_munge_api_t psc_munge;
static const char *psc_munge_error;
static pthread_once_t psc_munge_once = PTHREAD_ONCE_INIT;

static void psc_munge_load(void)
{
    void *h = dlopen("libmunge.so.2", RTLD_NOW | RTLD_LOCAL);

    if (h == NULL) {
        psc_munge_error = "libmunge.so.2 cannot be loaded (install the munge package)";
        return;
    }
    *(void **)&psc_munge.ctx_create = dlsym(h, "munge_ctx_create");
    *(void **)&psc_munge.ctx_destroy = dlsym(h, "munge_ctx_destroy");
    *(void **)&psc_munge.ctx_set = dlsym(h, "munge_ctx_set");
    *(void **)&psc_munge.encode = dlsym(h, "munge_encode");
    *(void **)&psc_munge.strerror = dlsym(h, "munge_strerror");
    *(void **)&psc_munge.ctx_strerror = dlsym(h, "munge_ctx_strerror");
    if (psc_munge.ctx_create == NULL || psc_munge.ctx_destroy == NULL ||
        psc_munge.ctx_set == NULL || psc_munge.encode == NULL || psc_munge.strerror == NULL ||
        psc_munge.ctx_strerror == NULL) {
        psc_munge_error = "libmunge.so.2 lacks munge_encode or its context functions";
    }
}

static ps_status_t psc_auth_munge(const char *socket, const ps_hello_rep_t *rep, void **cred,
                                  size_t *cred_len, char *msg, size_t msglen)
{
    char *text = NULL;
    void *ctx;
    int err;

    pthread_once(&psc_munge_once, psc_munge_load);
    if (psc_munge_error != NULL) {
        snprintf(msg, msglen, "auth = munge: %s", psc_munge_error);
        return PS_ERR_UNSUPPORTED;
    }
    ctx = psc_munge.ctx_create();
    if (ctx == NULL) {
        snprintf(msg, msglen, "no memory for a MUNGE context");
        return PS_ERR_NO_MEMORY;
    }
    err = socket[0] ? psc_munge.ctx_set(ctx, PSC_MUNGE_OPT_SOCKET, socket) : 0;
    if (err == 0) {
        err = psc_munge.encode(&text, ctx, rep->nonce, (int)sizeof(rep->nonce));
    }
    if (err != 0) {
        const char *why = psc_munge.ctx_strerror(ctx);
        snprintf(msg, msglen, "cannot get a MUNGE credential from munged (socket %s): %s",
                 socket[0] ? socket : "default", why ? why : psc_munge.strerror(err));
        psc_munge.ctx_destroy(ctx);
        free(text);
        return PS_ERR_ACCESS;
    }
    psc_munge.ctx_destroy(ctx);
    *cred_len = strlen(text);
    if (*cred_len == 0 || *cred_len > PS_AUTH_CRED_MAX) {
        snprintf(msg, msglen, "munged gave a credential of %zu bytes", *cred_len);
        free(text);
        return PS_ERR_PROTO;
    }
    *cred = text;
    return PS_OK;
}

static ps_status_t psc_auth_key(const char *path, const ps_hello_rep_t *rep, ps_auth_req_t *req,
                                void **cred, size_t *cred_len, char *msg, size_t msglen)
{
    uint8_t key[PS_KEY_MAX];
    size_t key_len;
    uint8_t *mac;
    ps_status_t status;

    if (path[0] == '\0') {
        snprintf(msg, msglen,
                 "the server requires the cluster key (auth = key) and this "
                 "client has no auth_key_file");
        return PS_ERR_ACCESS;
    }
    status = ps_key_file_load(path, key, &key_len, msg, msglen);
    if (status != PS_OK) {
        return status;
    }
    mac = malloc(PS_AUTH_MAC_LEN);
    if (mac == NULL) {
        snprintf(msg, msglen, "out of memory");
        return PS_ERR_NO_MEMORY;
    }
    req->uid = (uint32_t)getuid();
    req->gid = (uint32_t)getgid();
    const void *parts[5] = {PS_AUTH_KEY_LABEL, rep->nonce, &rep->server_id, &req->uid, &req->gid};
    size_t lens[5] = {sizeof(PS_AUTH_KEY_LABEL) - 1, PS_AUTH_NONCE_LEN, 8, 4, 4};
    ps_hmac_sha256(key, key_len, 5, parts, lens, mac);
    memset(key, 0, sizeof(key));
    *cred = mac;
    *cred_len = PS_AUTH_MAC_LEN;
    return PS_OK;
}

ps_status_t psc_auth_make(pstripe_fs_t *fs, const psc_server_t *srv, const ps_hello_rep_t *rep,
                          ps_auth_req_t *req, void **cred, size_t *cred_len, char *msg,
                          size_t msglen)
{
    char mode[16], key_file[4096], socket[4096];
    ps_status_t status;

    pthread_mutex_lock(&fs->lock);
    snprintf(mode, sizeof(mode), "%s", fs->cfg.auth ? fs->cfg.auth : "");
    snprintf(key_file, sizeof(key_file), "%s", fs->cfg.auth_key_file ? fs->cfg.auth_key_file : "");
    snprintf(socket, sizeof(socket), "%s", fs->cfg.munge_socket ? fs->cfg.munge_socket : "");
    pthread_mutex_unlock(&fs->lock);

    if (mode[0] != '\0' && strcmp(mode, ps_auth_mode_name(rep->auth_mode)) != 0) {
        snprintf(msg, msglen,
                 "server %s requires auth = %s and this client is set to auth = %s: "
                 "authentication refused",
                 srv->addr, ps_auth_mode_name(rep->auth_mode), mode);
        return PS_ERR_ACCESS;
    }
    memset(req, 0, sizeof(*req));
    req->method = rep->auth_mode;
    if (rep->auth_mode == PS_AUTH_MUNGE) {
        status = psc_auth_munge(socket, rep, cred, cred_len, msg, msglen);
    } else if (rep->auth_mode == PS_AUTH_KEY) {
        status = psc_auth_key(key_file, rep, req, cred, cred_len, msg, msglen);
    } else {
        snprintf(msg, msglen, "server %s asks for auth mode %u, which this client does not know",
                 srv->addr, rep->auth_mode);
        return PS_ERR_PROTO;
    }
    if (status == PS_OK) {
        req->cred_len = (uint32_t)*cred_len;
    }
    return status;
}

void psc_auth_refused(const psc_server_t *srv, uint32_t mode, const psc_op_t *op, char *msg,
                      size_t len)
{
    if (op->status == PS_ERR_ACCESS) {
        snprintf(msg, len,
                 "server %s refused this client's authentication (auth = %s): %s; the "
                 "server's log says why",
                 srv->addr, ps_auth_mode_name(mode),
                 mode == PS_AUTH_KEY
                     ? "wrong cluster key?"
                     : "MUNGE credential not accepted (another MUNGE key, clock skew or replay?)");
    } else {
        snprintf(msg, len, "authenticating to server %s: %.400s", srv->addr, op->msg);
    }
}

/* --- tickets ---------------------------------------------------------------------- */

void psc_ticket_prepare(psc_conn_t *conn, psc_ticket_t *t, void (*cb)(pstripe_fs_t *, psc_op_t *))
{
    ps_auth_req_t req = {.method = PS_AUTH_TICKET, .cred_len = sizeof(ps_auth_ticket_t)};

    psc_op_init(&t->op, conn->server->index, PS_MSG_AUTH, &req, sizeof(req));
    t->sent = conn->auth_rep.ticket; /* conn's may be renewed while this one is sent */
    t->op.done_cb = cb;
    t->op.arg = conn;
    t->op.send_buf = &t->sent;
    t->op.send_count = sizeof(t->sent);
    t->op.rep_body = &t->rep;
    t->op.rep_body_len = sizeof(t->rep);
}

/* Every answer carries a new ticket, so a busy client's stays young. */
void psc_ticket_take(psc_conn_t *conn, const psc_ticket_t *t)
{
    if (t->rep.ticket.expiry_ns > conn->auth_rep.ticket.expiry_ns) {
        conn->auth_rep.ticket = t->rep.ticket;
    }
}

/*
 * A refused ticket has most likely expired (the server's ticket_life, 5
 * minutes by default, after the client's last one: a process that went that
 * long without opening an endpoint, then needed another worker). A worker
 * whose endpoint is open renews it (the servers renew an expired ticket on
 * a connection its holder authenticated), and w gets it again, once. With
 * shared memory, where no worker's endpoint may be open yet, the HELLO
 * endpoint kept as the watch (authenticated at connect) renews it.
 */
int psc_ticket_retry(psc_conn_t *conn, uint32_t w, uint32_t *renew_on)
{
    uint32_t r = 0;

    while (r < conn->nworkers && !conn->eps[r].ready) {
        r++;
    }
    if (r == conn->nworkers && conn->watch != NULL) {
        r = PSC_RENEW_WATCH;
    }
    if (r == conn->nworkers || conn->tickets[w].retry != 0) {
        return 0;
    }
    conn->tickets[w].retry = 1;
    *renew_on = conn->renewing ? PSC_RENEW_WAIT : r;
    conn->renewing = 1;
    return 1;
}

int psc_tickets_pending(const psc_conn_t *conn)
{
    for (uint32_t i = 0; conn->tickets != NULL && i <= conn->nworkers; i++) {
        if (conn->tickets[i].op.state == PSC_OP_READY) {
            return 1;
        }
    }
    return 0;
}

/* --- the server's place ------------------------------------------------------------ */

/* Each server owns the metadata of the paths that hash to its index and a
 * stripe of each file in list order, so a client with another list reads
 * and writes the wrong servers' bytes (a list naming one server twice read
 * a 100,000-byte file as 1,148,576 bytes, stripe 0 twice). */
int psc_hello_misplaced(const pstripe_fs_t *fs, const psc_server_t *srv, const ps_hello_rep_t *rep,
                        char *msg, size_t len)
{
    if (rep->place == 0 || (rep->place == srv->index + 1 && rep->cluster_size == fs->nservers)) {
        return 0;
    }
    snprintf(msg, len,
             "server %s is server %u of a cluster of %u, but this client's list (servers = ...) "
             "has it as server %u of %u: every client must list the cluster's servers once each, "
             "in the order `pstripe local start` (or the cluster's configuration) gives them",
             srv->addr, rep->place - 1u, rep->cluster_size, srv->index, fs->nservers);
    return 1;
}

/*
 * pss_perm.c: who may do what to a file, and the capabilities that carry
 * the answer from the metadata owner to the data servers.
 *
 * pstripe has no directories: a path is a key in the owner's LMDB. The
 * rules follow what a user of a shared POSIX directory expects (ps_proto.h,
 * above ps_path_req_t): read and write by the mode bits of owner, group
 * (the caller's primary gid: MUNGE and the cluster key tell only that one)
 * or others; anyone authenticated may create; removing or renaming a file
 * takes its ownership or write permission on it; chmod and chgrp (to the
 * caller's own group) are the owner's; chown is root's. Root (uid 0) may
 * do everything. With auth = none there is no identity to check and
 * everything is allowed, as before protocol 4.
 *
 * A capability is checked by the data server before its request is
 * queued: one HMAC-SHA256 of 77 bytes per request, about a microsecond
 * (measured in doc/status.md). The last capability a connection presented
 * and passed is remembered, so a stream of requests of one open file costs
 * a 56-byte comparison after the first.
 */
#include "pss_perm.h"

#include "pss_conn.h"
#include "pss_req.h"

#include "ps_cap.h"
#include "ps_hmac.h"
#include "ps_log.h"
#include "ps_time.h"

#include <string.h>

void pss_perm_caller(const pss_req_t *req, uint32_t *uid, uint32_t *gid)
{
    int known = req->conn != NULL && req->conn->authed;

    *uid = known ? req->conn->uid : 0;
    *gid = known ? req->conn->gid : 0;
}

static int pss_perm_root(const pss_req_t *req)
{
    return req->conn != NULL && req->conn->authed && req->conn->uid == 0;
}

int pss_perm_may(const pss_server_t *s, const pss_req_t *req, const ps_file_info_t *info,
                 uint32_t access)
{
    const pss_conn_t *conn = req->conn;
    uint32_t bits, need = 0;

    if (s->auth_mode == PS_AUTH_NONE || pss_perm_root(req)) {
        return 1;
    }
    if (conn == NULL || !conn->authed) {
        return 0;
    }
    if (conn->uid == info->uid) {
        bits = (info->mode >> 6) & 7;
        if (access & PS_CAP_REMOVE) {
            access &= ~PS_CAP_REMOVE; /* the owner may always remove */
        }
    } else if (conn->gid == info->gid) {
        bits = (info->mode >> 3) & 7;
    } else {
        bits = info->mode & 7;
    }
    if (access & PS_CAP_READ) {
        need |= 4;
    }
    if (access & (PS_CAP_WRITE | PS_CAP_REMOVE)) {
        need |= 2;
    }
    return (bits & need) == need;
}

void pss_perm_grant(const pss_server_t *s, const pss_req_t *req, uint64_t file_id, uint32_t rights,
                    ps_cap_t *cap, uint32_t *life_s)
{
    memset(cap, 0, sizeof(*cap));
    *life_s = 0;
    if (!s->caps) {
        return;
    }
    cap->file_id = file_id;
    cap->expiry_ns = ps_cap_now_ns() + (uint64_t)(s->cfg.cap_life * 1e9);
    cap->uid = req->conn != NULL ? req->conn->uid : 0;
    cap->rights = rights;
    ps_cap_sign(s->cap_key, cap);
    *life_s = (uint32_t)s->cfg.cap_life;
}

ps_status_t pss_perm_setattr(const pss_server_t *s, const pss_req_t *req, ps_file_info_t *info)
{
    const ps_setattr_req_t *a = &req->body.setattr;
    int root = s->auth_mode == PS_AUTH_NONE || pss_perm_root(req);
    int owner = root || (req->conn != NULL && req->conn->authed && req->conn->uid == info->uid);
    const char *why = NULL;

    if ((a->valid & PS_SETATTR_MODE) && !owner) {
        why = "only the owner or root may change the mode";
    } else if ((a->valid & PS_SETATTR_UID) && !root && a->uid != info->uid) {
        why = "only root may change the owner";
    } else if ((a->valid & PS_SETATTR_GID) && !root &&
               (!owner || req->conn == NULL || a->gid != req->conn->gid)) {
        why = "only the owner may change the group, and only to its own group";
    }
    if (why != NULL) {
        ps_info("worker %u: SETATTR by uid %u refused: %s", req->worker->index,
                req->conn != NULL ? req->conn->uid : 0, why);
        return PS_ERR_ACCESS;
    }
    if (a->valid & PS_SETATTR_MODE) {
        info->mode = a->mode & 0777;
    }
    if (a->valid & PS_SETATTR_UID) {
        info->uid = a->uid;
    }
    if (a->valid & PS_SETATTR_GID) {
        info->gid = a->gid;
    }
    info->flags |= PS_FILE_OWNED;
    info->mtime_ns = ps_wall_ns();
    return PS_OK;
}

/* The capability and the right a data request needs; NULL if it needs none. */
static const ps_cap_t *pss_perm_need(const pss_req_t *req, uint64_t *file_id, uint32_t *need)
{
    *need = 0;
    switch (req->hdr.type) {
    case PS_MSG_OBJ_READ:
    case PS_MSG_OBJ_WRITE:
        *need = req->hdr.type == PS_MSG_OBJ_READ ? PS_CAP_READ : PS_CAP_WRITE;
        *file_id = req->body.io.file_id;
        return &req->body.io.cap;
    case PS_MSG_OBJ_TRUNCATE:
    case PS_MSG_OBJ_ALLOCATE:
    case PS_MSG_OBJ_REMOVE:
    case PS_MSG_OBJ_SYNC:
    case PS_MSG_OBJ_FLUSH:
        *need = req->hdr.type == PS_MSG_OBJ_TRUNCATE || req->hdr.type == PS_MSG_OBJ_ALLOCATE
                    ? PS_CAP_WRITE
                : req->hdr.type == PS_MSG_OBJ_REMOVE ? PS_CAP_REMOVE
                                                     : 0;
        *file_id = req->body.obj.file_id;
        return &req->body.obj.cap;
    case PS_MSG_SHARED_FP:
        *file_id = req->body.sfp.file_id;
        return &req->body.sfp.cap;
    default:
        return NULL; /* OBJ_STAT and the rest */
    }
}

int pss_perm_check_data(pss_worker_t *w, pss_req_t *req)
{
    pss_server_t *s = w->server;
    pss_conn_t *conn = req->conn;
    const ps_cap_t *cap;
    const char *why;
    uint64_t file_id, now;
    uint32_t need;

    if (!s->caps || (cap = pss_perm_need(req, &file_id, &need)) == NULL) {
        return 1;
    }
    now = ps_cap_now_ns();
    if (conn != NULL && conn->cap_ok && memcmp(&conn->cap_last, cap, sizeof(*cap)) == 0) {
        /* the same bytes passed the MAC check before: only the fields remain */
        why = cap->file_id != file_id        ? "for another file"
              : now > cap->expiry_ns         ? "expired"
              : (cap->rights & need) != need ? "without the right"
                                             : NULL;
    } else {
        why = ps_cap_check(s->cap_key, cap, file_id, need, now);
        if (why == NULL && conn != NULL) {
            conn->cap_last = *cap;
            conn->cap_ok = 1;
        }
    }
    if (why == NULL) {
        return 1;
    }
    PSS_STAT_ADD(w, auth_refused, 1); /* `pstripe stats`: refused */
    if (ps_log_limit_pass(&w->cap_refused_log, now, PSS_LOG_EVERY_NS, NULL)) {
        ps_warn("worker %u: refusing %s of %016llx by uid %u: capability %s", w->index,
                ps_msg_type_name(req->hdr.type), (unsigned long long)file_id,
                conn != NULL ? conn->uid : 0, why);
    }
    pss_reply(req, PS_ERR_ACCESS, NULL, 0, NULL, 0, 0);
    return 0;
}

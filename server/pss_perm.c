/*
 * pss_perm.c: who may do what to a file, and the capabilities that carry
 * the answer from the metadata owner to the data servers.
 *
 * pstripe has no directories: a path is a key in the owner's LMDB. The
 * rules follow what a user of a shared POSIX directory expects (ps_proto.h,
 * above ps_path_req_t): read and write by the mode bits of owner, group or
 * others; anyone authenticated may create; removing or renaming a file
 * takes its ownership or write permission on it; chmod and chgrp (to a
 * group of the caller's) are the owner's; chown is root's. Root (uid 0) may
 * do everything, and remove an object without a capability (`pstripe gc`
 * removes the objects no path leads to, whose files give none). With auth
 * = none there is no identity to check and everything is allowed, as
 * before protocol 4.
 *
 * Groups. MUNGE and the cluster key tell one gid, the caller's primary
 * one; a user's other groups (the project groups files are shared by) come
 * from the server's user database (NSS: /etc/group, LDAP through sssd),
 * as NFS servers with --manage-gids and Lustre's identity upcall get them:
 * the credential's gid, the uid's group in passwd and the groups listing
 * its name. They are looked up once per connection, when a file's mode
 * first makes the answer matter (its group bits differ from its others'
 * bits, or a chgrp), so a connection whose files' modes never ask costs
 * no lookup; a membership changed later reaches connections made after.
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

#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PSS_PERM_MAX_GROUPS 65536 /* NGROUPS_MAX of Linux */

/* Fill conn->groups from the server's user database (see the top). A uid
 * the database does not know has the credential's gid alone. */
static void pss_perm_lookup_groups(pss_conn_t *conn)
{
    struct passwd pw, *found = NULL;
    char buf[16384];
    int n = 32;
    gid_t *groups = NULL;

    conn->groups_known = 1;
    if (getpwuid_r((uid_t)conn->uid, &pw, buf, sizeof(buf), &found) != 0 || found == NULL) {
        ps_debug("uid %u: not in the user database: its gid %u alone", conn->uid, conn->gid);
        return;
    }
    for (;;) {
        gid_t *more = realloc(groups, (size_t)n * sizeof(*groups));
        if (more == NULL) {
            ps_warn("uid %u: no memory for its groups: its gid %u alone", conn->uid, conn->gid);
            free(groups);
            return;
        }
        groups = more;
        int have = n;
        if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &n) >= 0) {
            break;
        }
        if (n <= have) { /* no larger count asked for: grow anyway, within reason */
            n = have * 2;
        }
        if (n > PSS_PERM_MAX_GROUPS) {
            ps_warn("uid %u: more than %d groups: its gid %u alone", conn->uid, PSS_PERM_MAX_GROUPS,
                    conn->gid);
            free(groups);
            return;
        }
    }
    conn->groups = groups;
    conn->ngroups = (uint32_t)n;
}

/* Whether the caller of conn is in group gid (see the top). */
static int pss_perm_in_group(pss_conn_t *conn, uint32_t gid)
{
    if (conn->gid == gid) {
        return 1;
    }
    if (!conn->groups_known) {
        pss_perm_lookup_groups(conn);
    }
    for (uint32_t i = 0; i < conn->ngroups; i++) {
        if ((uint32_t)conn->groups[i] == gid) {
            return 1;
        }
    }
    return 0;
}

void pss_perm_caller(const pss_req_t *req, uint32_t *uid, uint32_t *gid)
{
    int known = req->conn != NULL && req->conn->authed;

    *uid = known ? req->conn->uid : 0;
    *gid = known ? req->conn->gid : 0;
}

int pss_perm_is_root(const pss_server_t *s, const pss_req_t *req)
{
    return s->auth_mode == PS_AUTH_NONE ||
           (req->conn != NULL && req->conn->authed && req->conn->uid == 0);
}

int pss_perm_may(const pss_server_t *s, const pss_req_t *req, const ps_file_info_t *info,
                 uint32_t access)
{
    pss_conn_t *conn = req->conn;
    uint32_t bits, need = 0;
    uint32_t group_bits = (info->mode >> 3) & 7, other_bits = info->mode & 7;

    if (pss_perm_is_root(s, req)) {
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
    } else if (group_bits != other_bits && pss_perm_in_group(conn, info->gid)) {
        bits = group_bits; /* (equal bits: the class does not matter, nothing to look up) */
    } else {
        bits = other_bits;
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
    int root = pss_perm_is_root(s, req);
    int owner = root || (req->conn != NULL && req->conn->authed && req->conn->uid == info->uid);
    const char *why = NULL;

    if ((a->valid & PS_SETATTR_MODE) && !owner) {
        why = "only the owner or root may change the mode";
    } else if ((a->valid & PS_SETATTR_UID) && !root && (!owner || a->uid != info->uid)) {
        /* (as chown(2): the owner may "change" it to itself, no one else) */
        why = "only root may change the owner";
    } else if ((a->valid & PS_SETATTR_GID) && !root &&
               (!owner || req->conn == NULL || !pss_perm_in_group(req->conn, a->gid))) {
        why = "only the owner may change the group, and only to a group of its own";
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
    if (need == PS_CAP_REMOVE && pss_perm_is_root(s, req)) {
        return 1; /* root removes objects no path leads to (`pstripe gc`) */
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
    PSS_STAT_ADD(w, cap_refused, 1); /* `pstripe stats`: capabilities refused */
    if (ps_log_limit_pass(&w->cap_refused_log, now, PSS_LOG_EVERY_NS, NULL)) {
        ps_warn("worker %u: refusing %s of %016llx by uid %u: capability %s", w->index,
                ps_msg_type_name(req->hdr.type), (unsigned long long)file_id,
                conn != NULL ? conn->uid : 0, why);
    }
    pss_reply(req, PS_ERR_ACCESS, NULL, 0, NULL, 0, 0);
    return 0;
}

/*
 * pss_meta.c: the namespace's requests: CREATE, LOOKUP, REMOVE, RENAME,
 * SETATTR, LIST and META_SYNC, each one LMDB transaction on the store of
 * pss_metadb.c. A name marked as leaving for another server (pss_move.c)
 * is neither removed, renamed nor changed until its move is settled: such
 * requests answer PS_ERR_BUSY, and the client settles the move and asks
 * again.
 */
#include "pss_meta.h"

#include "pss_list.h"
#include "pss_metadb.h"
#include "pss_perm.h"
#include "pss_req.h"

#include "ps_layout.h"
#include "ps_log.h"
#include "ps_time.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* ---- handlers -------------------------------------------------------------- */

/* Reply with info and a capability of rights on it. */
static void pss_reply_file(pss_req_t *req, const ps_file_info_t *info, int created,
                           uint32_t rights)
{
    ps_file_rep_t rep;
    memset(&rep, 0, sizeof(rep));
    rep.info = *info;
    rep.created = (uint32_t)created;
    pss_perm_grant(req->worker->server, req, info->file_id, rights, &rep.cap, &rep.cap_life_s);
    pss_reply(req, PS_OK, &rep, sizeof(rep), NULL, 0, 0);
}

/* Refuse (PS_ERR_ACCESS, logged at info) unless the caller may access. */
ps_status_t pss_meta_allow(pss_req_t *req, const ps_file_info_t *info, uint32_t access,
                           const char *path, size_t len)
{
    uint32_t uid, gid;

    if (pss_perm_may(req->worker->server, req, info, access)) {
        return PS_OK;
    }
    pss_perm_caller(req, &uid, &gid);
    ps_info("worker %u: %s of %.*s (uid %u gid %u mode 0%o) by uid %u gid %u: access 0x%x "
            "refused",
            req->worker->index, ps_msg_type_name(req->hdr.type), (int)len, path, info->uid,
            info->gid, info->mode, uid, gid, access);
    return PS_ERR_ACCESS;
}

ps_status_t pss_check_path(pss_req_t *req, const char *path, size_t len)
{
    ps_status_t status = ps_proto_check_path(path, len);
    if (status != PS_OK) {
        ps_warn("worker %u: %s req %llu: invalid path (%zu bytes): %s", req->worker->index,
                ps_msg_type_name(req->hdr.type), (unsigned long long)req->hdr.req_id, len,
                ps_status_string(status));
    }
    return status;
}

/* 1 if this server may own path: it does not know its place in the
 * cluster, or the path's server (ps_path_server) is this one. A CREATE
 * elsewhere would make an entry no client finds at its owner (and `ls`,
 * which asks every server, would list the name twice). */
int pss_meta_owns(pss_server_t *s, const char *path, size_t len)
{
    if (s->cfg.cluster_size <= 0 || s->cfg.server_index < 0) {
        return 1;
    }
    return ps_path_server(path, len, (uint32_t)s->cfg.cluster_size) ==
           (uint32_t)s->cfg.server_index;
}

/* End a write transaction: on status != PS_OK abort it and reply status;
 * else commit it (a failed commit is logged as "commit of WHAT NAME" and
 * replied). 1 if committed, 0 if the request has been answered. */
static int pss_meta_commit(pss_req_t *req, MDB_txn *txn, ps_status_t status, const char *what,
                           const char *name, size_t len)
{
    int mdb_status;

    if (status != PS_OK) {
        mdb_txn_abort(txn);
        pss_reply(req, status, NULL, 0, NULL, 0, 0);
        return 0;
    }
    mdb_status = pss_txn_commit(req->worker->server, txn);
    if (mdb_status != 0) {
        ps_error("metadata store: commit of %s %.*s: %s", what, (int)len, name,
                 mdb_strerror(mdb_status));
        pss_reply(req, pss_mdb_status(mdb_status), NULL, 0, NULL, 0, 0);
        return 0;
    }
    return 1;
}

static void pss_meta_create(pss_worker_t *w, pss_req_t *req)
{
    pss_server_t *s = w->server;
    const ps_create_req_t *c = &req->body.create;
    const char *path = req->data;
    size_t len = c->path_len;
    ps_layout_t layout = {c->stripe_size, c->stripe_count, c->first_server};
    ps_file_info_t info;
    pss_key_t key;
    MDB_txn *txn;
    ps_status_t status;

    /* (a layout that does not fit the cluster would be an entry that every
     * client's `ls` refuses) */
    uint32_t nservers = s->cfg.cluster_size > 0 ? (uint32_t)s->cfg.cluster_size : 0;
    if (ps_layout_check(&layout, nservers) != PS_OK ||
        (c->flags & ~(PS_CREATE_EXCL | PS_CREATE_TRUNC)) != 0) {
        ps_warn("worker %u: CREATE req %llu: invalid layout (stripe_size %llu, count %u, "
                "first %u) or flags 0x%x",
                w->index, (unsigned long long)req->hdr.req_id,
                (unsigned long long)c->stripe_size, c->stripe_count, c->first_server, c->flags);
        pss_reply(req, PS_ERR_INVALID, NULL, 0, NULL, 0, 0);
        return;
    }
    if (!pss_meta_owns(s, path, len)) {
        ps_warn("worker %u: CREATE req %llu of a path that server %u of %lld owns, not this "
                "server (%lld): refused (a client with another server list?)",
                w->index, (unsigned long long)req->hdr.req_id,
                ps_path_server(path, len, (uint32_t)s->cfg.cluster_size),
                (long long)s->cfg.cluster_size, (long long)s->cfg.server_index);
        pss_reply(req, PS_ERR_INVALID, NULL, 0, NULL, 0, 0);
        return;
    }

    status = pss_txn_begin(s, 0, &txn);
    if (status != PS_OK) {
        pss_reply(req, status, NULL, 0, NULL, 0, 0);
        return;
    }
    status = pss_meta_get(s, txn, path, len, &key, &info);
    if (status == PS_OK) {
        mdb_txn_abort(txn);
        if (c->flags & PS_CREATE_EXCL) {
            pss_reply(req, PS_ERR_EXISTS, NULL, 0, NULL, 0, 0);
        } else if (pss_meta_allow(req, &info, c->access, path, len) != PS_OK) {
            pss_reply(req, PS_ERR_ACCESS, NULL, 0, NULL, 0, 0);
        } else {
            pss_reply_file(req, &info, 0, c->access);
        }
        return;
    }
    if (status != PS_ERR_NO_ENTRY) {
        mdb_txn_abort(txn);
        pss_reply(req, status, NULL, 0, NULL, 0, 0);
        return;
    }

    memset(&info, 0, sizeof(info));
    while (info.file_id == 0) {
        if (getrandom(&info.file_id, sizeof(info.file_id), 0) != (ssize_t)sizeof(info.file_id)) {
            ps_error("getrandom for a file id: %m");
            mdb_txn_abort(txn);
            pss_reply(req, PS_ERR_IO, NULL, 0, NULL, 0, 0);
            return;
        }
    }
    info.stripe_size = c->stripe_size;
    info.stripe_count = c->stripe_count;
    info.first_server = c->first_server;
    info.mode = c->mode & 0777;
    info.flags = PS_FILE_OWNED;
    pss_perm_caller(req, &info.uid, &info.gid);
    info.ctime_ns = info.mtime_ns = ps_wall_ns();
    status = pss_meta_put(s, txn, &key, path, len, &info);
    if (!pss_meta_commit(req, txn, status, "CREATE", path, len)) {
        return;
    }
    ps_debug("worker %u: created %.*s as %016llx", w->index, (int)len, path,
             (unsigned long long)info.file_id);
    pss_reply_file(req, &info, 1, c->access);
}

static void pss_meta_lookup(pss_worker_t *w, pss_req_t *req, int remove)
{
    pss_server_t *s = w->server;
    const char *path = req->data;
    size_t len = req->body.path.path_len;
    ps_file_info_t info;
    pss_key_t key;
    MDB_txn *txn;
    ps_status_t status;
    int mdb_status;

    status = pss_txn_begin(s, remove ? 0 : MDB_RDONLY, &txn);
    if (status != PS_OK) {
        pss_reply(req, status, NULL, 0, NULL, 0, 0);
        return;
    }
    status = pss_meta_get(s, txn, path, len, &key, &info);
    if (status == PS_OK) {
        status = pss_meta_allow(req, &info, remove ? PS_CAP_REMOVE : req->body.path.access,
                                path, len);
    }
    if (status == PS_OK && remove) {
        status = pss_meta_unmarked(s, txn, &key);
    }
    if (status != PS_OK) {
        mdb_txn_abort(txn);
        pss_reply(req, status, NULL, 0, NULL, 0, 0);
        return;
    }
    if (!remove) {
        mdb_txn_abort(txn);
        pss_reply_file(req, &info, 0, req->body.path.access);
        return;
    }
    status = pss_meta_del(s, txn, &key, info.file_id);
    if (status != PS_OK) {
        mdb_txn_abort(txn);
        pss_reply(req, status, NULL, 0, NULL, 0, 0);
        return;
    }
    mdb_status = pss_txn_commit(s, txn);
    if (mdb_status != 0) {
        ps_error("metadata store: REMOVE %.*s: %s", (int)len, path, mdb_strerror(mdb_status));
        pss_reply(req, pss_mdb_status(mdb_status), NULL, 0, NULL, 0, 0);
        return;
    }
    /* The client removes the objects next: the removal must not be undone
     * first. Committed with MDB_NOMETASYNC, a system crash could undo it
     * after the objects are gone, bringing back a name without its data;
     * if the sync fails the request fails, and the client leaves the
     * objects (space leaked, no name without its data). */
    status = pss_meta_sync(s);
    if (status != PS_OK) {
        pss_reply(req, status, NULL, 0, NULL, 0, 0);
        return;
    }
    pss_reply_file(req, &info, 0, PS_CAP_REMOVE);
}

/* LOOKUP_ID: the file of the request's id by the index of this server's
 * names, with a capability as LOOKUP's. */
static void pss_meta_lookup_id(pss_worker_t *w, pss_req_t *req)
{
    pss_server_t *s = w->server;
    const ps_id_req_t *r = &req->body.id;
    ps_file_info_t info;
    const char *path;
    size_t len;
    MDB_txn *txn;
    ps_status_t status = pss_txn_begin(s, MDB_RDONLY, &txn);

    if (status == PS_OK) {
        status = pss_meta_get_id(s, txn, r->file_id, &info, &path, &len);
        if (status == PS_OK) {
            status = pss_meta_allow(req, &info, r->access, path, len);
        }
        mdb_txn_abort(txn);
    }
    if (status != PS_OK) {
        pss_reply(req, status, NULL, 0, NULL, 0, 0);
        return;
    }
    pss_reply_file(req, &info, 0, r->access);
}

/* In txn: move src to dst (replacing dst unless NOREPLACE), if the caller
 * may remove both; fills rep. */
static ps_status_t pss_meta_rename_txn(pss_req_t *req, MDB_txn *txn, const char *src,
                                       const char *dst, ps_rename_rep_t *rep)
{
    pss_server_t *s = req->worker->server;
    const ps_rename_req_t *r = &req->body.rename;
    uint32_t life_s;
    pss_key_t src_key, dst_key;
    ps_status_t status;

    status = pss_meta_get(s, txn, src, r->src_len, &src_key, &rep->info);
    if (status != PS_OK) {
        return status;
    }
    if (r->file_id != 0 && rep->info.file_id != r->file_id) {
        return PS_ERR_NO_ENTRY; /* the old name now names another file */
    }
    status = pss_meta_allow(req, &rep->info, PS_CAP_REMOVE, src, r->src_len);
    if (status == PS_OK) {
        status = pss_meta_unmarked(s, txn, &src_key);
    }
    if (status != PS_OK) {
        return status;
    }
    status = pss_meta_get(s, txn, dst, r->dst_len, &dst_key, &rep->replaced);
    if (status == PS_OK) {
        if (r->flags & PS_RENAME_NOREPLACE) {
            return PS_ERR_EXISTS;
        }
        status = pss_meta_allow(req, &rep->replaced, PS_CAP_REMOVE, dst, r->dst_len);
        if (status == PS_OK) {
            status = pss_meta_unmarked(s, txn, &dst_key);
        }
        if (status != PS_OK) {
            return status;
        }
        pss_perm_grant(s, req, rep->replaced.file_id, PS_CAP_REMOVE, &rep->replaced_cap, &life_s);
        rep->has_replaced = 1;
        status = pss_meta_del(s, txn, &dst_key, rep->replaced.file_id);
        if (status != PS_OK) {
            return status;
        }
    } else if (status != PS_ERR_NO_ENTRY) {
        return status;
    } else {
        memset(&rep->replaced, 0, sizeof(rep->replaced));
    }
    status = pss_meta_del(s, txn, &src_key, rep->info.file_id);
    if (status != PS_OK) {
        return status;
    }
    rep->info.mtime_ns = ps_wall_ns();
    return pss_meta_put(s, txn, &dst_key, dst, r->dst_len, &rep->info);
}

/*
 * RENAME: one write transaction, so a crash leaves either the old names or
 * the new one, never both and never neither. The client sends it only when
 * both names belong to this server (doc/design.md, "Renaming").
 */
static void pss_meta_rename(pss_worker_t *w, pss_req_t *req)
{
    pss_server_t *s = w->server;
    const ps_rename_req_t *r = &req->body.rename;
    const char *src = req->data, *dst = (const char *)req->data + r->src_len;
    ps_rename_rep_t rep;
    MDB_txn *txn;
    ps_status_t status;

    memset(&rep, 0, sizeof(rep));
    status = pss_check_path(req, src, r->src_len);
    if (status == PS_OK) {
        status = pss_check_path(req, dst, r->dst_len);
    }
    if (status == PS_OK && r->src_len == r->dst_len && memcmp(src, dst, r->src_len) == 0) {
        status = PS_ERR_INVALID; /* renaming a name onto itself */
    }
    if (status == PS_OK &&
        (!pss_meta_owns(s, src, r->src_len) || !pss_meta_owns(s, dst, r->dst_len))) {
        ps_warn("worker %u: RENAME req %llu of a name another server owns: refused", w->index,
                (unsigned long long)req->hdr.req_id);
        status = PS_ERR_INVALID; /* its entry would be where no client looks */
    }
    if (status == PS_OK) {
        status = pss_txn_begin(s, 0, &txn);
    }
    if (status != PS_OK) {
        pss_reply(req, status, NULL, 0, NULL, 0, 0);
        return;
    }
    status = pss_meta_rename_txn(req, txn, src, dst, &rep);
    if (!pss_meta_commit(req, txn, status, "RENAME", src, r->src_len)) {
        return;
    }
    /* the replaced file's objects are removed next (as after a REMOVE) */
    status = rep.has_replaced ? pss_meta_sync(s) : PS_OK;
    if (status != PS_OK) {
        pss_reply(req, status, NULL, 0, NULL, 0, 0);
        return;
    }
    ps_debug("worker %u: renamed %.*s to %.*s (%016llx)", w->index, (int)r->src_len, src,
             (int)r->dst_len, dst, (unsigned long long)rep.info.file_id);
    pss_reply(req, PS_OK, &rep, sizeof(rep), NULL, 0, 0);
}

/* SETATTR: change mode, owner or group (pss_perm_setattr's rules) in one
 * write transaction; the reply has the new info (its capability has no rights). */
static void pss_meta_setattr(pss_worker_t *w, pss_req_t *req)
{
    pss_server_t *s = w->server;
    const char *path = req->data;
    size_t len = req->body.setattr.path_len;
    ps_file_info_t info;
    pss_key_t key;
    MDB_txn *txn;
    ps_status_t status;

    status = pss_txn_begin(s, 0, &txn);
    if (status != PS_OK) {
        pss_reply(req, status, NULL, 0, NULL, 0, 0);
        return;
    }
    status = pss_meta_get(s, txn, path, len, &key, &info);
    if (status == PS_OK) {
        status = pss_perm_setattr(s, req, &info);
    }
    if (status == PS_OK) {
        status = pss_meta_unmarked(s, txn, &key); /* its move carries the old info */
    }
    if (status == PS_OK) {
        status = pss_meta_del(s, txn, &key, info.file_id);
        if (status == PS_OK) {
            status = pss_meta_put(s, txn, &key, path, len, &info);
        }
    }
    if (!pss_meta_commit(req, txn, status, "SETATTR", path, len)) {
        return;
    }
    pss_reply_file(req, &info, 0, 0);
}

void pss_meta_handle(pss_worker_t *w, pss_req_t *req)
{
    uint16_t type = req->hdr.type;

    if (type == PS_MSG_CREATE || type == PS_MSG_LOOKUP || type == PS_MSG_REMOVE ||
        type == PS_MSG_SETATTR) {
        size_t len = type == PS_MSG_CREATE    ? req->body.create.path_len
                     : type == PS_MSG_SETATTR ? req->body.setattr.path_len
                                              : req->body.path.path_len;
        ps_status_t status = pss_check_path(req, req->data, len);
        if (status != PS_OK) {
            pss_reply(req, status, NULL, 0, NULL, 0, 0);
            return;
        }
    }
    switch (type) {
    case PS_MSG_CREATE:
        pss_meta_create(w, req);
        break;
    case PS_MSG_LOOKUP:
        pss_meta_lookup(w, req, 0);
        break;
    case PS_MSG_LOOKUP_ID:
        pss_meta_lookup_id(w, req);
        break;
    case PS_MSG_REMOVE:
        pss_meta_lookup(w, req, 1);
        break;
    case PS_MSG_RENAME:
        pss_meta_rename(w, req);
        break;
    case PS_MSG_SETATTR:
        pss_meta_setattr(w, req);
        break;
    case PS_MSG_LIST:
        pss_list_handle(w, req);
        break;
    case PS_MSG_META_SYNC:
        pss_reply(req, pss_meta_sync(w->server), NULL, 0, NULL, 0, 0);
        break;
    default:
        pss_reply(req, PS_ERR_PROTO, NULL, 0, NULL, 0, 0);
        break;
    }
}

/*
 * psc_meta.c: namespace operations (open/create, stat, truncate, unlink,
 * rename, statfs, server stats; listing is psc_list.c, fsync and close
 * psc_sync.c).
 *
 * A path's metadata lives on its owner server ps_path_server(); the data of
 * a file lives in one object per stripe target. So stat is LOOKUP at the
 * owner, then OBJ_STAT on every target in parallel (size = the largest file
 * size any object implies); unlink is REMOVE at the owner, then OBJ_REMOVE on
 * every target; truncate sets every target's object to the size it has in a
 * file of the new length. The caller's thread runs these steps one after the
 * other, with the ops of one step in flight together.
 */
#include <stdlib.h>
#include <string.h>

#include "ps_log.h"
#include "ps_status.h"
#include "psc_call.h"
#include "psc_conn.h"
#include "psc_fs.h"
#include "psc_meta.h"
#include "psc_move.h"
#include "psc_op.h"
#include "psc_wait.h"
#include "ps_time.h"

static void psc_info_to_layout(const ps_file_info_t *info, ps_layout_t *layout)
{
    layout->stripe_size = info->stripe_size;
    layout->stripe_count = info->stripe_count;
    layout->first_server = info->first_server;
}

/* Check a file's layout as received from a server against this cluster. */
ps_status_t psc_check_info(pstripe_fs_t *fs, const ps_file_info_t *info, uint32_t server)
{
    ps_layout_t layout;

    psc_info_to_layout(info, &layout);
    if (ps_layout_check(&layout, fs->nservers) != PS_OK) {
        return psc_error(PS_ERR_PROTO,
                         "server %s returned a layout (stripe size %llu, count %u, first %u) "
                         "that does not fit this cluster of %u servers",
                         fs->servers[server].addr, (unsigned long long)info->stripe_size,
                         info->stripe_count, info->first_server, fs->nservers);
    }
    return PS_OK;
}

/* One path request (CREATE/LOOKUP/REMOVE/SETATTR) to the owner, reply into
 * rep; body NULL: a ps_path_req_t asking for access (PS_CAP_*). */
static ps_status_t psc_path_op_once(pstripe_fs_t *fs, uint16_t type, const char *path, size_t len,
                                    const void *body, uint32_t body_len, uint32_t access,
                                    ps_file_rep_t *rep)
{
    psc_call_t call;
    psc_op_t op;
    ps_path_req_t preq;
    ps_status_t status;

    if (body == NULL) {
        preq.path_len = (uint32_t)len;
        preq.access = access;
        body = &preq;
        body_len = sizeof(preq);
    }
    psc_call_init(&call);
    psc_op_init(&op, ps_path_server(path, len, fs->nservers), type, body, body_len);
    op.route = PSC_ROUTE_PATH;
    op.route_path = path;
    op.route_path_len = (uint32_t)len;
    op.send_buf = path;
    op.send_count = len;
    op.rep_body = rep;
    op.rep_body_len = sizeof(*rep);
    psc_op_post(fs, &op, &call);
    status = psc_call_wait(fs, &call);
    if (status != PS_OK) {
        return status;
    }
    return psc_check_info(fs, &rep->info, op.server);
}

/* One path request to the path's owner; a REMOVE or SETATTR of a name
 * leaving for another server settles that move first and asks once more. */
static ps_status_t psc_path_op(pstripe_fs_t *fs, uint16_t type, const char *path, size_t len,
                               const void *body, uint32_t body_len, uint32_t access,
                               ps_file_rep_t *rep)
{
    ps_status_t status = psc_path_op_once(fs, type, path, len, body, body_len, access, rep);

    if (status == PS_ERR_BUSY && (type == PS_MSG_REMOVE || type == PS_MSG_SETATTR)) {
        status = psc_move_settle(fs, path, len);
        if (status == PS_OK) {
            status = psc_path_op_once(fs, type, path, len, body, body_len, access, rep);
        }
    }
    return status;
}

/* The same object request to every target of a file, in parallel. reps may
 * be NULL; for OBJ_TRUNCATE and OBJ_ALLOCATE, each object gets the size it
 * has in a file of file_size bytes, and seen (a handle's record, or NULL)
 * takes each answer as a write's: a restart may undo the size before the
 * handle's fsync, which must then say so (psc_sync.c). */
static ps_status_t psc_obj_ops(pstripe_fs_t *fs, const ps_file_info_t *info, const ps_cap_t *cap,
                               uint16_t type, uint64_t file_size, ps_obj_rep_t *reps,
                               psc_file_seen_t *seen)
{
    ps_layout_t layout;
    psc_call_t call;
    psc_op_t *ops;
    ps_status_t status;

    psc_info_to_layout(info, &layout);
    ops = calloc(layout.stripe_count, sizeof(*ops));
    if (ops == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    psc_call_init(&call);
    for (uint32_t k = 0; k < layout.stripe_count; k++) {
        uint64_t size = type == PS_MSG_OBJ_TRUNCATE || type == PS_MSG_OBJ_ALLOCATE
                            ? ps_layout_obj_size(&layout, file_size, k)
                            : 0;

        psc_op_init_obj(&ops[k], ps_layout_server(&layout, k, fs->nservers), type, info->file_id,
                        size, cap);
        if (reps != NULL) {
            ops[k].rep_body = &reps[k];
            ops[k].rep_body_len = sizeof(reps[k]);
        }
        psc_op_post(fs, &ops[k], &call);
    }
    status = psc_call_wait(fs, &call);
    for (uint32_t k = 0; seen != NULL && k < layout.stripe_count; k++) {
        if (ops[k].status == PS_OK) {
            psc_file_seen_wrote(seen, ops[k].server, ops[k].instance, UINT64_MAX);
        }
    }
    free(ops);
    return status;
}

/* A server that could not be reached (pstripe_list goes on without it). */
int psc_unreachable(ps_status_t status)
{
    return status == PS_ERR_CONN || status == PS_ERR_TIMEOUT || status == PS_ERR_SHUTDOWN;
}

/* Note the servers that failed ops with an unreachable status in down[];
 * any other error is returned. */
static ps_status_t psc_note_down(const psc_op_t *ops, size_t nops, uint8_t *down)
{
    for (size_t i = 0; i < nops; i++) {
        if (ops[i].status != PS_OK && !psc_unreachable(ops[i].status)) {
            return psc_error(ops[i].status, "%s", ops[i].msg);
        }
        if (ops[i].status != PS_OK) {
            down[ops[i].server] = 1;
        }
    }
    return PS_OK;
}

/* Stats of n files from their objects. down == NULL: any failure fails;
 * else objects on unreachable servers are counted in st->unreachable and
 * their servers set in down[]. */
ps_status_t psc_stat_objects(pstripe_fs_t *fs, const ps_file_info_t *info, size_t n,
                             pstripe_stat_t *st, uint8_t *down)
{
    psc_call_t call;
    psc_op_t *ops;
    ps_obj_rep_t *reps;
    size_t nops = 0, i;
    ps_status_t status;

    for (i = 0; i < n; i++) {
        nops += info[i].stripe_count;
    }
    ops = calloc(nops ? nops : 1, sizeof(*ops));
    reps = calloc(nops ? nops : 1, sizeof(*reps));
    if (ops == NULL || reps == NULL) {
        free(ops);
        free(reps);
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    psc_call_init(&call);
    nops = 0;
    for (i = 0; i < n; i++) {
        ps_layout_t layout;

        psc_info_to_layout(&info[i], &layout);
        for (uint32_t k = 0; k < layout.stripe_count; k++, nops++) {
            psc_op_init_obj(&ops[nops], ps_layout_server(&layout, k, fs->nservers), PS_MSG_OBJ_STAT,
                            info[i].file_id, 0, NULL);
            ops[nops].rep_body = &reps[nops];
            ops[nops].rep_body_len = sizeof(reps[nops]);
            psc_op_post(fs, &ops[nops], &call);
        }
    }
    status = psc_call_wait(fs, &call);
    if (status != PS_OK && down != NULL) {
        status = psc_note_down(ops, nops, down);
    }
    if (status == PS_OK) {
        nops = 0;
        for (i = 0; i < n; i++) {
            ps_layout_t layout;
            pstripe_stat_t s;

            psc_info_to_layout(&info[i], &layout);
            memset(&s, 0, sizeof(s));
            s.file_id = info[i].file_id;
            s.layout.stripe_size = layout.stripe_size;
            s.layout.stripe_count = layout.stripe_count;
            s.layout.first_server = (int32_t)layout.first_server;
            s.mode = info[i].mode;
            s.uid = info[i].uid;
            s.gid = info[i].gid;
            s.ctime_ns = info[i].ctime_ns;
            s.mtime_ns = info[i].mtime_ns;
            for (uint32_t k = 0; k < layout.stripe_count; k++, nops++) {
                uint64_t fsize = ps_layout_file_size(&layout, k, reps[nops].size);

                if (ops[nops].status != PS_OK) {
                    s.unreachable++;
                    continue;
                }
                if (fsize > s.size) {
                    s.size = fsize;
                }
                s.blocks += reps[nops].blocks;
                if (reps[nops].exists && reps[nops].mtime_ns > s.mtime_ns) {
                    s.mtime_ns = reps[nops].mtime_ns;
                }
            }
            st[i] = s;
        }
    }
    free(ops);
    free(reps);
    return status;
}

/* OBJ_TRUNCATE or OBJ_ALLOCATE (type) of a file's objects to a file size;
 * seen: the handle's record of its answers (NULL: by path). */
static ps_status_t psc_size_objects(pstripe_fs_t *fs, const ps_file_info_t *info,
                                    const ps_cap_t *cap, uint16_t type, uint64_t size,
                                    psc_file_seen_t *seen)
{
    ps_layout_t layout;

    psc_info_to_layout(info, &layout);
    for (uint32_t k = 0; k < layout.stripe_count; k++) {
        if (ps_layout_obj_size(&layout, size, k) > PS_MAX_OBJ_SIZE) {
            return psc_error(PS_ERR_FILE_TOO_LARGE,
                             "file too large: a size of %llu bytes needs stripe objects over "
                             "%llu bytes, the most a server holds",
                             (unsigned long long)size, (unsigned long long)PS_MAX_OBJ_SIZE);
        }
    }
    return psc_obj_ops(fs, info, cap, type, size, NULL, seen);
}

/* --- open / close -------------------------------------------------------------- */

/*
 * The common start of the path calls: check fs, normalize path, send the
 * path request `type` asking for access to its owner; "cannot VERB PATH: no
 * such file" when it does not exist, "permission denied" when refused.
 */
static ps_status_t psc_path_call(pstripe_fs_t *fs, const char *path, uint16_t type,
                                 uint32_t access, const char *verb, ps_file_rep_t *rep)
{
    char npath[PS_PATH_MAX + 1];
    size_t len;
    ps_status_t status;

    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    status = psc_normalize(path, npath, &len);
    if (status != PS_OK) {
        return status;
    }
    status = psc_path_op(fs, type, npath, len, NULL, 0, access, rep);
    if (status == PS_ERR_NO_ENTRY) {
        psc_set_error("cannot %s %s: no such file", verb, npath);
    } else if (status == PS_ERR_ACCESS) {
        psc_set_error("cannot %s %s: permission denied", verb, npath);
    }
    return status;
}

/* The layout of a new file: the caller's, its zero fields from the
 * connection's defaults, checked against the cluster. */
static ps_status_t psc_create_layout(pstripe_fs_t *fs, const char *path, size_t len,
                                     const pstripe_layout_t *layout, ps_layout_t *l)
{
    int64_t count;

    pthread_mutex_lock(&fs->lock);
    l->stripe_size = fs->cfg.stripe_size;
    count = fs->cfg.stripe_count;
    pthread_mutex_unlock(&fs->lock);
    if (layout != NULL && layout->stripe_size != 0) {
        l->stripe_size = layout->stripe_size;
    }
    if (layout != NULL && layout->stripe_count != 0) {
        count = layout->stripe_count;
    }
    l->stripe_count = count == 0 ? fs->nservers : (uint32_t)count;
    if (layout == NULL || layout->first_server == -1) {
        l->first_server = ps_path_server(path, len, fs->nservers);
    } else if (layout->first_server < 0) {
        return psc_error(PS_ERR_INVALID, "first_server %d is not a server index",
                         layout->first_server);
    } else {
        l->first_server = (uint32_t)layout->first_server;
    }
    if (ps_layout_check(l, fs->nservers) != PS_OK) {
        return psc_error(PS_ERR_INVALID,
                         "layout stripe_size %llu, stripe_count %u, first_server %u does not "
                         "fit %u servers (stripe size %llu..%llu)",
                         (unsigned long long)l->stripe_size, l->stripe_count, l->first_server,
                         fs->nservers, PS_STRIPE_SIZE_MIN, PS_STRIPE_SIZE_MAX);
    }
    return PS_OK;
}

/* CREATE (with PSTRIPE_CREAT) or LOOKUP the normalized path at its owner. */
static ps_status_t psc_open_path(pstripe_fs_t *fs, const char *path, size_t len, int flags,
                                 uint32_t mode, const pstripe_layout_t *layout, ps_file_rep_t *rep)
{
    ps_create_req_t req;
    ps_layout_t l;
    uint32_t access = ((flags & PSTRIPE_RDONLY) ? PS_CAP_READ : 0) |
                      ((flags & PSTRIPE_WRONLY) ? PS_CAP_WRITE : 0);
    ps_status_t status;

    if (!(flags & PSTRIPE_CREAT)) {
        status = psc_path_op(fs, PS_MSG_LOOKUP, path, len, NULL, 0, access, rep);
        if (status == PS_ERR_NO_ENTRY) {
            psc_set_error("cannot open %s: no such file", path);
        } else if (status == PS_ERR_ACCESS) {
            psc_set_error("cannot open %s: permission denied", path);
        }
        return status;
    }
    status = psc_create_layout(fs, path, len, layout, &l);
    if (status != PS_OK) {
        return status;
    }
    memset(&req, 0, sizeof(req));
    req.stripe_size = l.stripe_size;
    req.stripe_count = l.stripe_count;
    req.first_server = l.first_server;
    req.mode = mode & 0777;
    req.flags = (flags & PSTRIPE_EXCL) ? PS_CREATE_EXCL : 0;
    req.path_len = (uint32_t)len;
    req.access = access;
    status = psc_path_op(fs, PS_MSG_CREATE, path, len, &req, sizeof(req), 0, rep);
    if (status == PS_ERR_EXISTS) {
        psc_set_error("cannot create %s: file exists", path);
    } else if (status == PS_ERR_ACCESS) {
        psc_set_error("cannot open %s: permission denied", path);
    }
    return status;
}

/* The file handle of an opened path, with the connection's tunables. */
static ps_status_t psc_file_new(pstripe_fs_t *fs, const char *path, size_t len, int flags,
                                const ps_file_rep_t *rep, pstripe_file_t **file_p)
{
    const ps_file_info_t *info = &rep->info;
    pstripe_file_t *file = calloc(1, sizeof(*file));

    if (file == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    file->path = strdup(path);
    if (file->path == NULL) {
        free(file);
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    file->seen = psc_file_seen_new(fs->nservers, info->stripe_count);
    if (file->seen == NULL) {
        free(file->path);
        free(file);
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    file->fs = fs;
    file->path_len = len;
    file->flags = flags;
    file->info = *info;
    file->cap = rep->cap;
    file->cap_renew_ns = rep->cap_life_s == 0 ? 0 : ps_time_ns() + rep->cap_life_s * 500000000ull;
    psc_info_to_layout(info, &file->layout);
    psc_fs_file_opts(fs, &file->opts);
    *file_p = file;
    return PS_OK;
}

void psc_file_free(pstripe_file_t *file)
{
    free(file->path);
    psc_file_seen_drop(file->seen);
    free(file);
}

ps_status_t pstripe_open(pstripe_fs_t *fs, const char *path, int flags, uint32_t mode,
                         const pstripe_layout_t *layout, pstripe_file_t **file_p)
{
    char npath[PS_PATH_MAX + 1];
    ps_file_rep_t rep;
    size_t len;
    int acc = flags & PSTRIPE_RDWR;
    ps_status_t status;

    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    if (file_p == NULL) {
        return psc_error(PS_ERR_INVALID, "file_p is NULL");
    }
    if (acc == 0 || (flags & ~(PSTRIPE_RDWR | PSTRIPE_CREAT | PSTRIPE_EXCL | PSTRIPE_TRUNC))) {
        return psc_error(PS_ERR_INVALID, "open flags %#x: need exactly one of RDONLY, WRONLY, RDWR",
                         flags);
    }
    if ((flags & PSTRIPE_TRUNC) && !(acc & PSTRIPE_WRONLY)) {
        return psc_error(PS_ERR_ACCESS, "open with PSTRIPE_TRUNC needs write access");
    }
    status = psc_normalize(path, npath, &len);
    if (status != PS_OK) {
        return status;
    }
    status = psc_open_path(fs, npath, len, flags, mode, layout, &rep);
    if (status != PS_OK) {
        return status;
    }
    status = psc_file_new(fs, npath, len, flags, &rep, file_p);
    if (status == PS_OK && (flags & PSTRIPE_TRUNC) && !rep.created) {
        status = psc_size_objects(fs, &rep.info, &rep.cap, PS_MSG_OBJ_TRUNCATE, 0, (*file_p)->seen);
        if (status != PS_OK) {
            psc_file_free(*file_p);
            *file_p = NULL;
        }
    }
    return status;
}

/* One round of LOOKUP_ID of file_id at every server at once: PS_OK with
 * the file in *rep, PS_ERR_NO_ENTRY if every server answered that no name
 * of its names the file, else the first other failure (a server down does
 * not stop the others from finding it). */
static ps_status_t psc_lookup_id_round(pstripe_fs_t *fs, const ps_id_req_t *req, psc_op_t *ops,
                                       ps_file_rep_t *reps, ps_file_rep_t *rep)
{
    ps_status_t failed = PS_ERR_NO_ENTRY;
    uint32_t at = 0; /* the first server that failed */
    psc_call_t call;

    psc_call_init(&call);
    for (uint32_t s = 0; s < fs->nservers; s++) {
        psc_op_init(&ops[s], s, PS_MSG_LOOKUP_ID, req, sizeof(*req));
        ops[s].rep_body = &reps[s];
        ops[s].rep_body_len = sizeof(reps[s]);
        psc_op_post(fs, &ops[s], &call);
    }
    (void)psc_call_wait(fs, &call);
    for (uint32_t s = 0; s < fs->nservers; s++) {
        ps_status_t status = ops[s].status;

        if (status == PS_OK && reps[s].info.file_id != req->file_id) {
            psc_op_error(&ops[s], PS_ERR_PROTO, "answered a LOOKUP_ID with another file");
            status = ops[s].status;
        }
        if (status == PS_OK && psc_check_info(fs, &reps[s].info, s) == PS_OK) {
            *rep = reps[s];
            return PS_OK;
        }
        if (status != PS_ERR_NO_ENTRY && failed == PS_ERR_NO_ENTRY) {
            failed = status != PS_OK ? status : PS_ERR_PROTO;
            at = s;
        }
    }
    if (failed == PS_ERR_NO_ENTRY) {
        return failed;
    }
    return psc_error(failed, "server %s: %s", fs->servers[at].addr,
                     ops[at].msg[0] != '\0' ? ops[at].msg : ps_status_string(failed));
}

/* The file file_id by its id (LOOKUP_ID) at every server: after a rename,
 * the open's name no longer leads to it. PS_ERR_NO_ENTRY only if no server
 * names it twice in a row (a move between servers could answer "none" at
 * both ends of one round). */
static ps_status_t psc_lookup_id(pstripe_fs_t *fs, uint64_t file_id, uint32_t access,
                                 ps_file_rep_t *rep)
{
    ps_id_req_t req = {file_id, access, 0};
    psc_op_t *ops = calloc(fs->nservers, sizeof(*ops));
    ps_file_rep_t *reps = calloc(fs->nservers, sizeof(*reps));
    ps_status_t status = ops != NULL && reps != NULL ? PS_ERR_NO_ENTRY : PS_ERR_NO_MEMORY;

    for (int round = 0; round < 2 && status == PS_ERR_NO_ENTRY; round++) {
        status = psc_lookup_id_round(fs, &req, ops, reps, rep);
    }
    free(ops);
    free(reps);
    if (status == PS_ERR_NO_ENTRY) {
        return psc_error(PS_ERR_NO_ENTRY, "no name leads to the file any more (removed)");
    }
    return status == PS_ERR_NO_MEMORY ? psc_error(status, "no memory") : status;
}

/*
 * The file's capability for a data request. Past half its life (the
 * server's cap_life; ps_time_ns is monotonic, so clock steps do not
 * matter here) it is renewed by a LOOKUP of the open's name asking for the
 * open's access, or, if that name no longer leads to the file (renamed),
 * by its id, so a file kept open for hours keeps working. A renewal that
 * fails (server down, mode changed, file removed) keeps the old
 * capability: requests go on until it expires, then fail with
 * PS_ERR_ACCESS.
 */
void psc_file_cap(pstripe_file_t *file, ps_cap_t *cap)
{
    pstripe_fs_t *fs = file->fs;
    uint32_t access = ((file->flags & PSTRIPE_RDONLY) ? PS_CAP_READ : 0) |
                      ((file->flags & PSTRIPE_WRONLY) ? PS_CAP_WRITE : 0);
    ps_file_rep_t rep;
    uint64_t renew;

    pthread_mutex_lock(&fs->lock);
    renew = file->cap_renew_ns;
    *cap = file->cap;
    pthread_mutex_unlock(&fs->lock);
    if (renew == 0 || ps_time_ns() < renew) {
        return;
    }
    ps_status_t status =
        psc_path_op(fs, PS_MSG_LOOKUP, file->path, file->path_len, NULL, 0, access, &rep);
    if (status != PS_OK || rep.info.file_id != file->info.file_id) {
        /* renamed? (a failure that is not, such as a chmod, fails by id too) */
        status = psc_lookup_id(fs, file->info.file_id, access, &rep);
    }
    if (status != PS_OK || rep.cap_life_s == 0) {
        int gone = status == PS_ERR_NO_ENTRY;
        ps_warn("%s: renewing the capability failed: %s; the current one expires in %lld s",
                file->path, pstripe_last_error(),
                (long long)(((int64_t)cap->expiry_ns - (int64_t)ps_wall_ns()) / 1000000000));
        pthread_mutex_lock(&fs->lock);
        file->cap_renew_ns = ps_time_ns() + 1000000000ull; /* try again in a second */
        file->gone |= gone;
        pthread_mutex_unlock(&fs->lock);
        return;
    }
    pthread_mutex_lock(&fs->lock);
    file->cap = rep.cap;
    file->cap_renew_ns = ps_time_ns() + rep.cap_life_s * 500000000ull;
    file->gone = 0;
    pthread_mutex_unlock(&fs->lock);
    *cap = rep.cap;
}

/* --- stat / truncate / unlink / fsync --------------------------------------------- */

ps_status_t pstripe_stat(pstripe_fs_t *fs, const char *path, pstripe_stat_t *st)
{
    ps_file_rep_t rep;
    ps_status_t status;

    if (st == NULL) {
        return psc_error(PS_ERR_INVALID, "st is NULL");
    }
    status = psc_path_call(fs, path, PS_MSG_LOOKUP, 0, "stat", &rep);
    return status != PS_OK ? status : psc_stat_objects(fs, &rep.info, 1, st, NULL);
}

ps_status_t pstripe_fstat(pstripe_file_t *file, pstripe_stat_t *st)
{
    if (file == NULL || st == NULL) {
        return psc_error(PS_ERR_INVALID, "file or st is NULL");
    }
    return psc_stat_objects(file->fs, &file->info, 1, st, NULL);
}

ps_status_t pstripe_truncate(pstripe_fs_t *fs, const char *path, uint64_t size)
{
    ps_file_rep_t rep;
    ps_status_t status = psc_path_call(fs, path, PS_MSG_LOOKUP, PS_CAP_WRITE, "truncate", &rep);

    return status != PS_OK
               ? status
               : psc_size_objects(fs, &rep.info, &rep.cap, PS_MSG_OBJ_TRUNCATE, size, NULL);
}

/* pstripe_ftruncate and pstripe_preallocate (type, verb for the error). */
static ps_status_t psc_file_size_objects(pstripe_file_t *file, uint16_t type, const char *verb,
                                         uint64_t size)
{
    if (file == NULL) {
        return psc_error(PS_ERR_INVALID, "file is NULL");
    }
    if (!(file->flags & PSTRIPE_WRONLY)) {
        return psc_error(PS_ERR_ACCESS, "cannot %s %s: opened read-only", verb, file->path);
    }
    ps_cap_t cap;

    psc_file_cap(file, &cap);
    return psc_size_objects(file->fs, &file->info, &cap, type, size, file->seen);
}

ps_status_t pstripe_ftruncate(pstripe_file_t *file, uint64_t size)
{
    return psc_file_size_objects(file, PS_MSG_OBJ_TRUNCATE, "truncate", size);
}

ps_status_t pstripe_preallocate(pstripe_file_t *file, uint64_t size)
{
    return psc_file_size_objects(file, PS_MSG_OBJ_ALLOCATE, "preallocate", size);
}

/* Remove the objects of a file on every server (a missing one is fine). */
static ps_status_t psc_remove_objects(pstripe_fs_t *fs, const ps_file_info_t *info,
                                      const ps_cap_t *cap)
{
    ps_status_t status = psc_obj_ops(fs, info, cap, PS_MSG_OBJ_REMOVE, 0, NULL, NULL);

    return status == PS_ERR_NO_ENTRY ? PS_OK : status;
}

/* REMOVE of path, its file in *rep. */
static ps_status_t psc_remove_call(pstripe_fs_t *fs, const char *path, ps_file_rep_t *rep)
{
    ps_status_t status = psc_path_call(fs, path, PS_MSG_REMOVE, 0, "unlink", rep);

    if (status == PS_ERR_CONN || status == PS_ERR_TIMEOUT) {
        /* the owner may have removed the name and died (or stalled) before
         * it answered: then nobody will remove the objects */
        char why[PSC_MSG_MAX];
        snprintf(why, sizeof(why), "%s", pstripe_last_error());
        psc_set_error("%s; the removal may have happened without its answer: if %s is gone, "
                      "the space of its data stays used until `pstripe gc` (root) collects it",
                      why, path);
    }
    return status;
}

ps_status_t pstripe_unlink(pstripe_fs_t *fs, const char *path)
{
    ps_file_rep_t rep;
    ps_status_t status = psc_remove_call(fs, path, &rep);

    if (status == PS_ERR_NO_SPACE) {
        /* The owner's metadata store needs room to record the removal and
         * its disk is full: free the file's data first, then ask again. Until
         * the second REMOVE the file reads as holes; if that one fails too,
         * the name stays (with no data) and the error says so. */
        status = psc_path_call(fs, path, PS_MSG_LOOKUP, PS_CAP_REMOVE, "unlink", &rep);
        if (status == PS_OK) {
            status = psc_remove_objects(fs, &rep.info, &rep.cap);
        }
        if (status == PS_OK) { /* (its data freed: an unanswered one leaves none) */
            status = psc_path_call(fs, path, PS_MSG_REMOVE, 0, "unlink", &rep);
        }
        return status;
    }
    if (status != PS_OK) {
        return status;
    }
    /* The path is gone; now its objects. Those left keep their space until
     * pstripe_gc finds them (psc_gc.c): the error says so, and which file. */
    status = psc_remove_objects(fs, &rep.info, &rep.cap);
    if (status != PS_OK) {
        char why[PSC_MSG_MAX];
        snprintf(why, sizeof(why), "%s", pstripe_last_error());
        psc_set_error("removed %s, but not all of its data (file id %016llx), whose space "
                      "stays used until `pstripe gc` (root) collects it: %s",
                      path, (unsigned long long)rep.info.file_id, why);
    }
    return status;
}

ps_status_t pstripe_path_server(pstripe_fs_t *fs, const char *path, uint32_t *server)
{
    char npath[PS_PATH_MAX + 1];
    size_t len;
    ps_status_t status;

    if (psc_check_fs(fs) != PS_OK || server == NULL) {
        return psc_error(PS_ERR_INVALID, "no file system or no output (NULL)");
    }
    status = psc_normalize(path, npath, &len);
    if (status == PS_OK) {
        *server = ps_path_server(npath, len, fs->nservers);
    }
    return status;
}

/* After a rename of names (FROM, then TO) replaced a file: remove its
 * objects; a failure is a warning (`pstripe gc` collects them). */
static void psc_remove_replaced(pstripe_fs_t *fs, const char *names, size_t flen, size_t tlen,
                                const ps_file_info_t *replaced, const ps_cap_t *cap)
{
    if (psc_check_info(fs, replaced, ps_path_server(names + flen, tlen, fs->nservers)) == PS_OK &&
        psc_remove_objects(fs, replaced, cap) != PS_OK) {
        ps_warn("renamed %.*s to %.*s, but the objects of the file it replaced (%016llx) could "
                "not all be removed (`pstripe gc` collects them): %s",
                (int)flen, names, (int)tlen, names + flen, (unsigned long long)replaced->file_id,
                pstripe_last_error());
    }
}

/* RENAME at the owner of both names: one transaction there. */
static ps_status_t psc_rename_call(pstripe_fs_t *fs, const char *names, size_t flen, size_t tlen,
                                   ps_rename_rep_t *rep)
{
    uint32_t server = ps_path_server(names + flen, tlen, fs->nservers);
    ps_rename_req_t req;
    psc_call_t call;
    psc_op_t op;

    memset(&req, 0, sizeof(req));
    req.src_len = (uint32_t)flen;
    req.dst_len = (uint32_t)tlen;
    psc_call_init(&call);
    psc_op_init(&op, server, PS_MSG_RENAME, &req, sizeof(req));
    op.route = PSC_ROUTE_PATH;
    op.route_path = names + flen;
    op.route_path_len = (uint32_t)tlen;
    op.send_buf = names;
    op.send_count = flen + tlen;
    op.rep_body = rep;
    op.rep_body_len = sizeof(*rep);
    psc_op_post(fs, &op, &call);
    return psc_call_wait(fs, &call);
}

/* A rename within one server; a name of it leaving for another server is
 * settled first (psc_move.c). */
static ps_status_t psc_rename_within(pstripe_fs_t *fs, const char *names, size_t flen, size_t tlen,
                                     ps_rename_rep_t *rep)
{
    ps_status_t status = psc_rename_call(fs, names, flen, tlen, rep);

    if (status == PS_ERR_BUSY) {
        status = psc_move_settle(fs, names, flen);
        if (status == PS_OK) {
            status = psc_move_settle(fs, names + flen, tlen);
        }
        if (status == PS_OK) {
            status = psc_rename_call(fs, names, flen, tlen, rep);
        }
    }
    if (status == PS_ERR_NO_ENTRY) {
        psc_set_error("cannot rename %.*s: no such file", (int)flen, names);
    } else if (status == PS_ERR_ACCESS) {
        psc_set_error("cannot rename %.*s to %.*s: permission denied", (int)flen, names,
                      (int)tlen, names + flen);
    }
    return status;
}

/* A rename: RENAME within one server, MOVE between two (psc_move.c); then
 * the replaced file's objects go. */
ps_status_t pstripe_rename(pstripe_fs_t *fs, const char *from, const char *to)
{
    char names[2 * PS_PATH_MAX + 2];
    size_t flen, tlen;
    ps_rename_rep_t rep;
    ps_status_t status;

    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    status = psc_normalize(from, names, &flen);
    if (status == PS_OK) {
        status = psc_normalize(to, names + flen, &tlen);
    }
    if (status != PS_OK) {
        return status;
    }
    if (flen == tlen && memcmp(names, names + flen, flen) == 0) {
        ps_file_rep_t look; /* a name onto itself: nothing to do if it exists (rename(2)) */
        status = psc_path_op(fs, PS_MSG_LOOKUP, names, flen, NULL, 0, 0, &look);
        return status == PS_ERR_NO_ENTRY
                   ? psc_error(status, "cannot rename %.*s: no such file", (int)flen, names)
                   : status;
    }
    if (ps_path_server(names, flen, fs->nservers) ==
        ps_path_server(names + flen, tlen, fs->nservers)) {
        status = psc_rename_within(fs, names, flen, tlen, &rep);
    } else {
        status = psc_move(fs, names, flen, tlen, &rep);
    }
    if (status == PS_OK && rep.has_replaced) {
        /* the new name is in place; the file it named before is now nameless */
        psc_remove_replaced(fs, names, flen, tlen, &rep.replaced, &rep.replaced_cap);
    }
    return status;
}

/* --- chmod, chown ------------------------------------------------------------------ */

static ps_status_t psc_setattr(pstripe_fs_t *fs, const char *path, const ps_setattr_req_t *a,
                               const char *verb)
{
    char npath[PS_PATH_MAX + 1];
    ps_setattr_req_t req = *a;
    ps_file_rep_t rep;
    size_t len;
    ps_status_t status;

    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    status = psc_normalize(path, npath, &len);
    if (status != PS_OK) {
        return status;
    }
    req.path_len = (uint32_t)len;
    status = psc_path_op(fs, PS_MSG_SETATTR, npath, len, &req, sizeof(req), 0, &rep);
    if (status == PS_ERR_NO_ENTRY) {
        psc_set_error("cannot %s %s: no such file", verb, npath);
    } else if (status == PS_ERR_ACCESS) {
        int uid = (a->valid & PS_SETATTR_UID) != 0, gid = (a->valid & PS_SETATTR_GID) != 0;
        psc_set_error("cannot %s %s: permission denied (%s%s%s)", verb, npath,
                      uid ? "only root may change the owner" : "", uid && gid ? "; " : "",
                      gid   ? "only the owner may change the group, to one of its groups"
                      : uid ? ""
                            : "only the owner or root may change the mode");
    }
    return status;
}

ps_status_t pstripe_chmod(pstripe_fs_t *fs, const char *path, uint32_t mode)
{
    ps_setattr_req_t req = {.valid = PS_SETATTR_MODE, .mode = mode};

    if (mode > 0777) {
        return psc_error(PS_ERR_INVALID, "mode 0%o: only permission bits (0..0777)", mode);
    }
    return psc_setattr(fs, path, &req, "chmod");
}

ps_status_t pstripe_chown(pstripe_fs_t *fs, const char *path, int64_t uid, int64_t gid)
{
    ps_setattr_req_t req = {0};

    if (uid < -1 || uid > UINT32_MAX || gid < -1 || gid > UINT32_MAX || (uid == -1 && gid == -1)) {
        return psc_error(PS_ERR_INVALID, "chown: uid %lld, gid %lld: need a uid or a gid",
                         (long long)uid, (long long)gid);
    }
    if (uid >= 0) {
        req.valid |= PS_SETATTR_UID;
        req.uid = (uint32_t)uid;
    }
    if (gid >= 0) {
        req.valid |= PS_SETATTR_GID;
        req.gid = (uint32_t)gid;
    }
    return psc_setattr(fs, path, &req, "chown");
}

/* --- layout ----------------------------------------------------------------------- */

ps_status_t pstripe_file_layout(pstripe_file_t *file, pstripe_layout_t *layout)
{
    if (file == NULL || layout == NULL) {
        return psc_error(PS_ERR_INVALID, "file or layout is NULL");
    }
    layout->stripe_size = file->layout.stripe_size;
    layout->stripe_count = file->layout.stripe_count;
    layout->first_server = (int32_t)file->layout.first_server;
    return PS_OK;
}

ps_status_t pstripe_file_server(pstripe_file_t *file, uint32_t k, uint32_t *server)
{
    if (file == NULL || server == NULL) {
        return psc_error(PS_ERR_INVALID, "file or server is NULL");
    }
    if (k >= file->layout.stripe_count) {
        return psc_error(PS_ERR_INVALID, "no stripe target %u", k);
    }
    *server = ps_layout_server(&file->layout, k, file->fs->nservers);
    return PS_OK;
}

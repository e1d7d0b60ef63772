/*
 * psc_meta.c: namespace operations (open/create, stat, truncate, unlink,
 * fsync, list, statfs, server stats).
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
#include "psc_op.h"
#include "psc_wait.h"

#define PSC_LIST_PAGE 512u /* entries per LIST request */

static void psc_info_to_layout(const ps_file_info_t *info, ps_layout_t *layout)
{
    layout->stripe_size = info->stripe_size;
    layout->stripe_count = info->stripe_count;
    layout->first_server = info->first_server;
}

/* Check a file's layout as received from a server against this cluster. */
static ps_status_t psc_check_info(pstripe_fs_t *fs, const ps_file_info_t *info, uint32_t server)
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

/* One path request (CREATE/LOOKUP/REMOVE) to the owner, reply into rep. */
static ps_status_t psc_path_op(pstripe_fs_t *fs, uint16_t type, const char *path, size_t len,
                               const void *body, uint32_t body_len, ps_file_rep_t *rep)
{
    psc_call_t call;
    psc_op_t op;
    ps_path_req_t preq;
    ps_status_t status;

    if (body == NULL) {
        preq.path_len = (uint32_t)len;
        preq.reserved = 0;
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

/* The same object request to every target of a file, in parallel. reps may
 * be NULL; for OBJ_TRUNCATE, each object gets the size it has in a file of
 * file_size bytes. */
static ps_status_t psc_obj_ops(pstripe_fs_t *fs, const ps_file_info_t *info, uint16_t type,
                               uint64_t file_size, ps_obj_rep_t *reps)
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
        uint64_t size = type == PS_MSG_OBJ_TRUNCATE ? ps_layout_obj_size(&layout, file_size, k) : 0;

        psc_op_init_obj(&ops[k], ps_layout_server(&layout, k, fs->nservers), type, info->file_id,
                        size);
        if (reps != NULL) {
            ops[k].rep_body = &reps[k];
            ops[k].rep_body_len = sizeof(reps[k]);
        }
        psc_op_post(fs, &ops[k], &call);
    }
    status = psc_call_wait(fs, &call);
    free(ops);
    return status;
}

static ps_status_t psc_stat_objects(pstripe_fs_t *fs, const ps_file_info_t *info, size_t n,
                                    pstripe_stat_t *st)
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
                            info[i].file_id, 0);
            ops[nops].rep_body = &reps[nops];
            ops[nops].rep_body_len = sizeof(reps[nops]);
            psc_op_post(fs, &ops[nops], &call);
        }
    }
    status = psc_call_wait(fs, &call);
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
            s.ctime_ns = info[i].ctime_ns;
            s.mtime_ns = info[i].mtime_ns;
            for (uint32_t k = 0; k < layout.stripe_count; k++, nops++) {
                uint64_t fsize = ps_layout_file_size(&layout, k, reps[nops].size);

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

static ps_status_t psc_truncate_objects(pstripe_fs_t *fs, const ps_file_info_t *info, uint64_t size)
{
    return psc_obj_ops(fs, info, PS_MSG_OBJ_TRUNCATE, size, NULL);
}

/* --- open / close -------------------------------------------------------------- */

/*
 * The common start of the path calls: check fs, normalize path, send the
 * path request `type` to its owner; "cannot VERB PATH: no such file" when
 * it does not exist.
 */
static ps_status_t psc_path_call(pstripe_fs_t *fs, const char *path, uint16_t type,
                                 const char *verb, ps_file_rep_t *rep)
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
    status = psc_path_op(fs, type, npath, len, NULL, 0, rep);
    if (status == PS_ERR_NO_ENTRY) {
        psc_set_error("cannot %s %s: no such file", verb, npath);
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
    ps_status_t status;

    if (!(flags & PSTRIPE_CREAT)) {
        status = psc_path_op(fs, PS_MSG_LOOKUP, path, len, NULL, 0, rep);
        if (status == PS_ERR_NO_ENTRY) {
            psc_set_error("cannot open %s: no such file", path);
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
    status = psc_path_op(fs, PS_MSG_CREATE, path, len, &req, sizeof(req), rep);
    if (status == PS_ERR_EXISTS) {
        psc_set_error("cannot create %s: file exists", path);
    }
    return status;
}

/* The file handle of an opened path, with the connection's tunables. */
static ps_status_t psc_file_new(pstripe_fs_t *fs, const char *path, size_t len, int flags,
                                const ps_file_info_t *info, pstripe_file_t **file_p)
{
    pstripe_file_t *file = calloc(1, sizeof(*file));

    if (file == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    file->path = strdup(path);
    if (file->path == NULL) {
        free(file);
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    file->fs = fs;
    file->path_len = len;
    file->flags = flags;
    file->info = *info;
    psc_info_to_layout(info, &file->layout);
    psc_fs_file_opts(fs, &file->opts);
    *file_p = file;
    return PS_OK;
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
    if ((flags & PSTRIPE_TRUNC) && !rep.created) {
        status = psc_truncate_objects(fs, &rep.info, 0);
        if (status != PS_OK) {
            return status;
        }
    }
    return psc_file_new(fs, npath, len, flags, &rep.info, file_p);
}

ps_status_t pstripe_close(pstripe_file_t *file)
{
    if (file == NULL) {
        return psc_error(PS_ERR_INVALID, "file is NULL");
    }
    free(file->path);
    free(file);
    return PS_OK;
}

/* --- stat / truncate / unlink / fsync --------------------------------------------- */

ps_status_t pstripe_stat(pstripe_fs_t *fs, const char *path, pstripe_stat_t *st)
{
    ps_file_rep_t rep;
    ps_status_t status;

    if (st == NULL) {
        return psc_error(PS_ERR_INVALID, "st is NULL");
    }
    status = psc_path_call(fs, path, PS_MSG_LOOKUP, "stat", &rep);
    return status != PS_OK ? status : psc_stat_objects(fs, &rep.info, 1, st);
}

ps_status_t pstripe_fstat(pstripe_file_t *file, pstripe_stat_t *st)
{
    if (file == NULL || st == NULL) {
        return psc_error(PS_ERR_INVALID, "file or st is NULL");
    }
    return psc_stat_objects(file->fs, &file->info, 1, st);
}

ps_status_t pstripe_truncate(pstripe_fs_t *fs, const char *path, uint64_t size)
{
    ps_file_rep_t rep;
    ps_status_t status = psc_path_call(fs, path, PS_MSG_LOOKUP, "truncate", &rep);

    return status != PS_OK ? status : psc_truncate_objects(fs, &rep.info, size);
}

ps_status_t pstripe_ftruncate(pstripe_file_t *file, uint64_t size)
{
    if (file == NULL) {
        return psc_error(PS_ERR_INVALID, "file is NULL");
    }
    if (!(file->flags & PSTRIPE_WRONLY)) {
        return psc_error(PS_ERR_ACCESS, "cannot truncate %s: opened read-only", file->path);
    }
    return psc_truncate_objects(file->fs, &file->info, size);
}

/* Remove the objects of a file on every server (a missing one is fine). */
static ps_status_t psc_remove_objects(pstripe_fs_t *fs, const ps_file_info_t *info)
{
    ps_status_t status = psc_obj_ops(fs, info, PS_MSG_OBJ_REMOVE, 0, NULL);

    return status == PS_ERR_NO_ENTRY ? PS_OK : status;
}

ps_status_t pstripe_unlink(pstripe_fs_t *fs, const char *path)
{
    ps_file_rep_t rep;
    ps_status_t status = psc_path_call(fs, path, PS_MSG_REMOVE, "unlink", &rep);

    if (status == PS_ERR_NO_SPACE) {
        /* The owner's metadata store needs room to record the removal and
         * its disk is full: free the file's data first, then ask again. Until
         * the second REMOVE the file reads as holes; if that one fails too,
         * the name stays (with no data) and the error says so. */
        status = psc_path_call(fs, path, PS_MSG_LOOKUP, "unlink", &rep);
        if (status == PS_OK) {
            status = psc_remove_objects(fs, &rep.info);
        }
        if (status == PS_OK) {
            status = psc_path_call(fs, path, PS_MSG_REMOVE, "unlink", &rep);
        }
        return status;
    }
    if (status != PS_OK) {
        return status;
    }
    /* The path is gone; now its objects. */
    return psc_remove_objects(fs, &rep.info);
}

ps_status_t pstripe_fsync(pstripe_file_t *file)
{
    pstripe_fs_t *fs;
    psc_call_t call;
    psc_op_t *ops;
    uint32_t n;
    ps_status_t status;

    if (file == NULL) {
        return psc_error(PS_ERR_INVALID, "file is NULL");
    }
    fs = file->fs;
    n = file->layout.stripe_count;
    ops = calloc(n + 1, sizeof(*ops));
    if (ops == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    psc_call_init(&call);
    for (uint32_t k = 0; k < n; k++) {
        psc_op_init_obj(&ops[k], ps_layout_server(&file->layout, k, fs->nservers), PS_MSG_OBJ_SYNC,
                        file->info.file_id, 0);
        psc_op_post(fs, &ops[k], &call);
    }
    psc_op_init(&ops[n], ps_path_server(file->path, file->path_len, fs->nservers), PS_MSG_META_SYNC,
                NULL, 0);
    psc_op_post(fs, &ops[n], &call);
    status = psc_call_wait(fs, &call);
    free(ops);
    return status;
}

/* --- list ------------------------------------------------------------------------- */

typedef struct psc_list_entry {
    ps_file_info_t info;
    const char *path; /* into the page's data, not NUL-terminated */
    uint32_t path_len;
} psc_list_entry_t;

typedef struct psc_list_cursor {
    void *data; /* the page as received */
    psc_list_entry_t *entries;
    pstripe_stat_t *stats;
    uint32_t n, next;
    int more;    /* the server has more after this page */
    char *after; /* resume key: last path of the previous page */
    uint32_t after_len;
} psc_list_cursor_t;

/* Send one LIST request (prefix, resume after cur->after) to a server; the
 * page lands in cur->data, its header in *rep and its length in *data_len. */
static ps_status_t psc_list_request(pstripe_fs_t *fs, uint32_t server, const char *prefix,
                                    size_t plen, psc_list_cursor_t *cur, ps_list_rep_t *rep,
                                    uint64_t *data_len)
{
    ps_list_req_t req = {.prefix_len = (uint32_t)plen,
                         .after_len = cur->after_len,
                         .max_entries = PSC_LIST_PAGE,
                         .reserved = 0};
    psc_call_t call;
    psc_op_t op;
    char *send;
    ps_status_t status;

    send = malloc(plen + cur->after_len + 1);
    if (send == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    memcpy(send, prefix, plen);
    if (cur->after_len > 0) {
        memcpy(send + plen, cur->after, cur->after_len);
    }
    psc_call_init(&call);
    psc_op_init(&op, server, PS_MSG_LIST, &req, sizeof(req));
    op.send_buf = send;
    op.send_count = plen + cur->after_len;
    op.rep_body = rep;
    op.rep_body_len = sizeof(*rep);
    op.recv_mode = PSC_RECV_ALLOC;
    op.recv_max = (uint64_t)PSC_LIST_PAGE * (sizeof(ps_list_entry_t) + PS_PATH_MAX + 8);
    psc_op_post(fs, &op, &call);
    status = psc_call_wait(fs, &call);
    free(send);
    if (status != PS_OK) {
        return status;
    }
    cur->data = op.recv_alloc;
    *data_len = op.recv_alloc_len;
    return PS_OK;
}

/* Parse a page of n entries (data_len bytes in cur->data) into
 * cur->entries and infos[]; every entry must start with the prefix. */
static ps_status_t psc_list_parse(pstripe_fs_t *fs, uint32_t server, const char *prefix,
                                  size_t plen, psc_list_cursor_t *cur, uint32_t n,
                                  uint64_t data_len, ps_file_info_t *infos)
{
    const char *p = cur->data, *end = p + data_len;

    for (uint32_t i = 0; i < n; i++) {
        ps_list_entry_t e;
        size_t padded;

        if ((size_t)(end - p) < sizeof(e)) {
            goto err_proto;
        }
        memcpy(&e, p, sizeof(e));
        p += sizeof(e);
        padded = ((size_t)e.path_len + 7) & ~(size_t)7;
        if (e.path_len == 0 || e.path_len > PS_PATH_MAX || (size_t)(end - p) < padded ||
            (plen > 0 && (e.path_len < plen || memcmp(p, prefix, plen) != 0)) ||
            psc_check_info(fs, &e.info, server) != PS_OK) {
            goto err_proto;
        }
        cur->entries[i].info = e.info;
        cur->entries[i].path = p;
        cur->entries[i].path_len = e.path_len;
        infos[i] = e.info;
        p += padded;
    }
    if (p != end) {
        goto err_proto;
    }
    return PS_OK;

err_proto:
    return psc_error(PS_ERR_PROTO, "server %s sent a malformed LIST entry",
                     fs->servers[server].addr);
}

/* Keep the cursor's last path: the next page starts after it. */
static ps_status_t psc_list_set_after(psc_list_cursor_t *cur)
{
    psc_list_entry_t *last = &cur->entries[cur->n - 1];
    char *after = realloc(cur->after, last->path_len);

    if (after == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    memcpy(after, last->path, last->path_len);
    cur->after = after;
    cur->after_len = last->path_len;
    return PS_OK;
}

/* Replace the cursor's page with the server's next one, with the entries'
 * stats (one parallel round of OBJ_STAT per page: sizes come from the
 * objects). */
static ps_status_t psc_list_fetch(pstripe_fs_t *fs, uint32_t server, const char *prefix,
                                  size_t plen, psc_list_cursor_t *cur)
{
    ps_list_rep_t rep;
    ps_file_info_t *infos;
    uint64_t data_len = 0;
    ps_status_t status;

    free(cur->data);
    free(cur->entries);
    free(cur->stats);
    cur->data = NULL;
    cur->entries = NULL;
    cur->stats = NULL;
    cur->n = cur->next = 0;

    status = psc_list_request(fs, server, prefix, plen, cur, &rep, &data_len);
    if (status != PS_OK) {
        return status;
    }
    cur->more = rep.more != 0;
    if (rep.nentries > PSC_LIST_PAGE || rep.data_len != data_len) {
        return psc_error(PS_ERR_PROTO, "server %s sent a malformed LIST reply",
                         fs->servers[server].addr);
    }
    if (rep.nentries == 0) {
        cur->more = 0;
        return PS_OK;
    }
    cur->entries = calloc(rep.nentries, sizeof(*cur->entries));
    cur->stats = calloc(rep.nentries, sizeof(*cur->stats));
    infos = calloc(rep.nentries, sizeof(*infos));
    if (cur->entries == NULL || cur->stats == NULL || infos == NULL) {
        status = psc_error(PS_ERR_NO_MEMORY, "no memory");
        goto out_free_infos;
    }
    status = psc_list_parse(fs, server, prefix, plen, cur, rep.nentries, data_len, infos);
    if (status != PS_OK) {
        goto out_free_infos;
    }
    cur->n = rep.nentries;
    status = psc_stat_objects(fs, infos, cur->n, cur->stats);
    if (status == PS_OK) {
        status = psc_list_set_after(cur);
    }
    if (status != PS_OK) {
        cur->n = 0;
    }
out_free_infos:
    free(infos);
    return status;
}

static int psc_path_cmp(const psc_list_entry_t *a, const psc_list_entry_t *b)
{
    uint32_t n = a->path_len < b->path_len ? a->path_len : b->path_len;
    int c = memcmp(a->path, b->path, n);

    if (c != 0) {
        return c;
    }
    return a->path_len < b->path_len ? -1 : a->path_len > b->path_len;
}

ps_status_t pstripe_list(pstripe_fs_t *fs, const char *prefix, pstripe_list_fn fn, void *arg)
{
    psc_list_cursor_t *cur;
    char path[PS_PATH_MAX + 1];
    size_t plen;
    ps_status_t status = PS_OK;

    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    if (fn == NULL) {
        return psc_error(PS_ERR_INVALID, "list callback is NULL");
    }
    if (prefix == NULL) {
        prefix = "";
    }
    plen = strlen(prefix);
    if (plen > PS_PATH_MAX) {
        return psc_error(PS_ERR_NAME_TOO_LONG, "list prefix longer than %u bytes", PS_PATH_MAX);
    }
    cur = calloc(fs->nservers, sizeof(*cur));
    if (cur == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    for (uint32_t s = 0; s < fs->nservers; s++) {
        cur[s].more = 1;
    }
    /* Merge the servers' sorted streams, fetching a page when one runs dry. */
    for (;;) {
        int best = -1;

        for (uint32_t s = 0; s < fs->nservers; s++) {
            if (cur[s].next == cur[s].n && cur[s].more) {
                status = psc_list_fetch(fs, s, prefix, plen, &cur[s]);
                if (status != PS_OK) {
                    goto out;
                }
            }
            if (cur[s].next < cur[s].n &&
                (best < 0 || psc_path_cmp(&cur[s].entries[cur[s].next],
                                          &cur[best].entries[cur[best].next]) < 0)) {
                best = (int)s;
            }
        }
        if (best < 0) {
            break;
        }
        {
            psc_list_cursor_t *c = &cur[best];
            psc_list_entry_t *e = &c->entries[c->next];

            memcpy(path, e->path, e->path_len);
            path[e->path_len] = '\0';
            status = fn(path, &c->stats[c->next], arg);
            c->next++;
            if (status != 0) {
                goto out;
            }
        }
    }
out:
    for (uint32_t s = 0; s < fs->nservers; s++) {
        free(cur[s].data);
        free(cur[s].entries);
        free(cur[s].stats);
        free(cur[s].after);
    }
    free(cur);
    return status;
}

/* --- statfs, stats, layout --------------------------------------------------------- */

ps_status_t pstripe_statfs(pstripe_fs_t *fs, pstripe_statfs_t *st)
{
    ps_statfs_rep_t *reps;
    psc_call_t call;
    psc_op_t *ops;
    pstripe_statfs_t s;
    ps_status_t status;

    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    if (st == NULL) {
        return psc_error(PS_ERR_INVALID, "st is NULL");
    }
    ops = calloc(fs->nservers, sizeof(*ops));
    reps = calloc(fs->nservers, sizeof(*reps));
    if (ops == NULL || reps == NULL) {
        free(ops);
        free(reps);
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    psc_call_init(&call);
    for (uint32_t i = 0; i < fs->nservers; i++) {
        psc_op_init(&ops[i], i, PS_MSG_STATFS, NULL, 0);
        ops[i].rep_body = &reps[i];
        ops[i].rep_body_len = sizeof(reps[i]);
        psc_op_post(fs, &ops[i], &call);
    }
    status = psc_call_wait(fs, &call);
    if (status == PS_OK) {
        memset(&s, 0, sizeof(s));
        for (uint32_t i = 0; i < fs->nservers; i++) {
            uint32_t j = 0;
            while (j < i && reps[j].fs_id != reps[i].fs_id) {
                j++;
            }
            if (j == i) { /* space of a file system no earlier server shares */
                s.total_bytes += reps[i].bsize * reps[i].blocks;
                s.free_bytes += reps[i].bsize * reps[i].bfree;
                s.avail_bytes += reps[i].bsize * reps[i].bavail;
                s.nfilesystems++;
            }
            s.files += reps[i].files;
        }
        s.nservers = fs->nservers;
        *st = s;
    }
    free(ops);
    free(reps);
    return status;
}

ps_status_t pstripe_server_stats(pstripe_fs_t *fs, int server, pstripe_server_stats_t *st)
{
    ps_stats_rep_t rep;
    psc_call_t call;
    psc_op_t op;
    ps_status_t status;

    _Static_assert(sizeof(pstripe_server_stats_t) == sizeof(ps_stats_rep_t),
                   "pstripe_server_stats_t mirrors ps_stats_rep_t");
    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    if (st == NULL || server < 0 || (uint32_t)server >= fs->nservers) {
        return psc_error(PS_ERR_INVALID, "no server %d (or st is NULL)", server);
    }
    psc_call_init(&call);
    psc_op_init(&op, (uint32_t)server, PS_MSG_STATS, NULL, 0);
    op.rep_body = &rep;
    op.rep_body_len = sizeof(rep);
    psc_op_post(fs, &op, &call);
    status = psc_call_wait(fs, &call);
    if (status == PS_OK) {
        memcpy(st, &rep, sizeof(*st));
    }
    return status;
}

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

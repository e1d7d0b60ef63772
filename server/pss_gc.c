/*
 * pss_gc.c: OBJ_LIST and META_LIVE (ps_proto.h), what `pstripe gc` asks of
 * every server to find the objects that no path leads to: those an `rm`
 * left when a data server was down or the client died between removing the
 * name and removing the objects.
 *
 * OBJ_LIST reads the object store's directories (DIR/obj/xx, xx the id's
 * top byte) from the one holding ids just above `after` on; META_LIVE
 * walks every path of the namespace, and the files that left it by a move
 * since the client began (pss_move.h), in one read transaction. Both are
 * root's, rare and synchronous: a worker answering one serves nothing else
 * meanwhile (a few milliseconds per 10,000 entries, README "Failures").
 * The client's order (every server's objects listed before any namespace
 * is asked) is what makes the answer safe: see lib/psc_gc.c.
 */
#include "pss_gc.h"

#include "pss_move.h"
#include "pss_perm.h"
#include "pss_req.h"

#include "ps_log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct pss_ids {
    uint64_t *v;
    size_t n, cap;
} pss_ids_t;

static int pss_ids_push(pss_ids_t *ids, uint64_t id)
{
    if (ids->n == ids->cap) {
        size_t cap = ids->cap ? 2 * ids->cap : 1024;
        uint64_t *v = realloc(ids->v, cap * sizeof(*v));

        if (v == NULL) {
            return -1;
        }
        ids->v = v;
        ids->cap = cap;
    }
    ids->v[ids->n++] = id;
    return 0;
}

static int pss_id_cmp(const void *a, const void *b)
{
    uint64_t x, y;

    memcpy(&x, a, sizeof(x));
    memcpy(&y, b, sizeof(y));
    return x < y ? -1 : x > y;
}

/* The object id a name of directory top names (pss_obj_path: 16 lowercase
 * hex digits, the first two top's), or 0 for any other name. */
static uint64_t pss_gc_parse(const char *name, unsigned top)
{
    uint64_t id = 0;
    size_t i;

    for (i = 0; name[i] != '\0'; i++) {
        char c = name[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                                            : 16;
        if (d == 16 || i == 16) {
            return 0;
        }
        id = id << 4 | d;
    }
    return i == 16 && (id >> 56) == top ? id : 0;
}

/* Append the ids greater than after of directory top's objects, sorted. */
static ps_status_t pss_gc_read_dir(pss_server_t *s, unsigned top, uint64_t after, pss_ids_t *ids)
{
    char sub[8];
    size_t first = ids->n;
    struct dirent *e;
    DIR *dir;
    int fd, err;

    snprintf(sub, sizeof(sub), "%02x", top);
    fd = openat(s->obj_dir_fd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (dir == NULL) {
        err = errno;
        if (fd >= 0) {
            close(fd);
        }
        if (err == ENOENT) {
            return PS_OK;
        }
        ps_error("OBJ_LIST: open %s/obj/%s: %s", s->data_dir, sub, strerror(err));
        return ps_status_from_errno(err);
    }
    for (;;) {
        uint64_t id;

        errno = 0;
        if ((e = readdir(dir)) == NULL) {
            break;
        }
        id = pss_gc_parse(e->d_name, top);
        if (id > after && pss_ids_push(ids, id) != 0) {
            closedir(dir);
            return PS_ERR_NO_MEMORY;
        }
    }
    err = errno;
    closedir(dir);
    if (err != 0) {
        ps_error("OBJ_LIST: read %s/obj/%s: %s", s->data_dir, sub, strerror(err));
        return ps_status_from_errno(err);
    }
    qsort(ids->v + first, ids->n - first, sizeof(*ids->v), pss_id_cmp);
    return PS_OK;
}

/* OBJ_LIST: whole directories from after's on, until count ids are found. */
static void pss_gc_obj_list(pss_worker_t *w, pss_req_t *req)
{
    ps_ids_req_t r = req->body.ids;
    ps_ids_rep_t rep = {0, 0};
    pss_ids_t ids = {NULL, 0, 0};
    ps_status_t status = PS_OK;
    unsigned top;

    for (top = (unsigned)(r.after >> 56); top < 256 && ids.n < r.count; top++) {
        status = pss_gc_read_dir(w->server, top, r.after, &ids);
        if (status != PS_OK) {
            free(ids.v);
            pss_reply(req, status, NULL, 0, NULL, 0, 0);
            return;
        }
    }
    rep.count = ids.n < r.count ? (uint32_t)ids.n : r.count;
    rep.more = ids.n > r.count || top < 256;
    if (rep.count == 0) {
        free(ids.v);
        ids.v = NULL;
    }
    pss_reply(req, PS_OK, &rep, sizeof(rep), ids.v, rep.count * sizeof(uint64_t), 0);
}

/* The ids a scan asks about and which of them live. */
typedef struct pss_gc_ask {
    const uint64_t *ids;
    uint32_t n;
    uint8_t *live;
} pss_gc_ask_t;

/* Mark id in ask's live[] if it is one of its ids. */
static void pss_gc_hit(uint64_t id, void *arg)
{
    pss_gc_ask_t *ask = arg;
    const uint64_t *hit = bsearch(&id, ask->ids, ask->n, sizeof(*ask->ids), pss_id_cmp);

    if (hit != NULL) {
        ask->live[hit - ask->ids] = 1;
    }
}

/* In txn, rep's counts of moves between servers and, unless the departures
 * after number after are no longer all kept (rep->more), mark in ask the
 * ids that departed after it: a file may have left this namespace for
 * another's after the client asked that one (lib/psc_gc.c). */
static ps_status_t pss_gc_departed(pss_server_t *s, MDB_txn *txn, uint64_t after, pss_gc_ask_t *ask,
                                   ps_ids_rep_t *rep)
{
    pss_move_counts_t c;
    ps_status_t status = pss_move_counts(s, txn, &c);

    rep->marks = c.marks;
    rep->arrivals = c.arrivals;
    rep->departed = c.departed;
    rep->more = ask->n > 0 && after < c.forgotten;
    if (status != PS_OK || ask->n == 0 || rep->more) {
        return status;
    }
    return pss_move_departures(s, txn, after, pss_gc_hit, ask);
}

/* Mark in live[] the ids[] (n, ascending) that a path of the namespace
 * names or that departed after number after, reading both in one
 * transaction; fill rep's counts of moves between servers. */
static ps_status_t pss_gc_scan(pss_server_t *s, uint64_t after, const uint64_t *ids, uint32_t n,
                               uint8_t *live, ps_ids_rep_t *rep)
{
    pss_gc_ask_t ask = {ids, n, live};
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;

    rc = mdb_txn_begin(s->mdb_env, NULL, MDB_RDONLY, &txn);
    if (rc != 0) {
        ps_error("META_LIVE: mdb_txn_begin: %s", mdb_strerror(rc));
        return PS_ERR_IO;
    }
    if (pss_gc_departed(s, txn, after, &ask, rep) != PS_OK) {
        mdb_txn_abort(txn);
        return PS_ERR_IO;
    }
    rc = mdb_cursor_open(txn, s->mdb_paths, &cur);
    if (rc != 0) {
        ps_error("META_LIVE: mdb_cursor_open: %s", mdb_strerror(rc));
        mdb_txn_abort(txn);
        return PS_ERR_IO;
    }
    for (int op = MDB_FIRST;; op = MDB_NEXT) {
        uint64_t id;

        rc = mdb_cursor_get(cur, &k, &v, op);
        if (rc != 0) {
            break;
        }
        if (v.mv_size < offsetof(ps_file_info_t, uid)) { /* shorter than any version's */
            ps_error("META_LIVE: metadata entry of %zu bytes is too short", v.mv_size);
            rc = EIO;
            break;
        }
        memcpy(&id, (const char *)v.mv_data + offsetof(ps_file_info_t, file_id), sizeof(id));
        pss_gc_hit(id, &ask);
    }
    if (rc != MDB_NOTFOUND && rc != EIO) {
        ps_error("META_LIVE: reading the metadata store: %s", mdb_strerror(rc));
    }
    mdb_cursor_close(cur); /* a read-only transaction's cursor is not closed with it */
    mdb_txn_abort(txn);
    if (rc != MDB_NOTFOUND) {
        return PS_ERR_IO;
    }
    /* A REMOVE (or replacing RENAME) is seen once committed, before its
     * flush (pss_meta.c): flush it now, or a crash could bring back a name
     * whose objects gc goes on to remove. */
    rc = mdb_env_sync(s->mdb_env, 1);
    if (rc != 0) {
        ps_error("META_LIVE: mdb_env_sync: %s", mdb_strerror(rc));
        return PS_ERR_IO;
    }
    return PS_OK;
}

/* META_LIVE: the asked ids that a path names. */
static void pss_gc_meta_live(pss_worker_t *w, pss_req_t *req)
{
    uint32_t n = req->body.ids.count, nlive = 0;
    uint64_t *ids = malloc(((size_t)n + 1) * sizeof(*ids));
    uint8_t *live = calloc((size_t)n + 1, 1);
    ps_ids_rep_t rep;
    ps_status_t status = PS_OK;

    memset(&rep, 0, sizeof(rep));
    if (ids == NULL || live == NULL) {
        status = PS_ERR_NO_MEMORY;
        goto out;
    }
    memcpy(ids, req->data, (size_t)n * sizeof(*ids));
    for (uint32_t i = 1; i < n; i++) {
        if (ids[i] <= ids[i - 1]) {
            free(ids);
            free(live);
            pss_reject(req, PS_ERR_INVALID, "META_LIVE ids not strictly ascending");
            return;
        }
    }
    status = pss_gc_scan(w->server, req->body.ids.after, ids, n, live, &rep);
    for (uint32_t i = 0; i < n && status == PS_OK; i++) {
        if (live[i]) {
            ids[nlive++] = ids[i];
        }
    }
out:
    free(live);
    if (status != PS_OK || nlive == 0) {
        free(ids);
        ids = NULL;
    }
    rep.count = nlive;
    pss_reply(req, status, &rep, sizeof(rep), ids, (uint64_t)nlive * sizeof(uint64_t), 0);
}

void pss_gc_handle(pss_worker_t *w, pss_req_t *req)
{
    if (!pss_perm_is_root(w->server, req)) {
        pss_reject(req, PS_ERR_ACCESS, "only root may list objects or ask which files live");
        return;
    }
    if (req->hdr.type == PS_MSG_OBJ_LIST) {
        pss_gc_obj_list(w, req);
    } else if (w->server->mdb_env == NULL) {
        pss_reply(req, PS_ERR_IO, NULL, 0, NULL, 0, 0);
    } else {
        pss_gc_meta_live(w, req);
    }
}

/*
 * pss_list.c: LIST, a page of the paths that start with a prefix, in path
 * order, after a resume path, read in one LMDB read transaction.
 *
 * LMDB's key order is path order except among the keys longer than
 * G = max key - 9 bytes that share their first G bytes (pss_metadb.c: a
 * path over the key limit is stored under its first G bytes, a NUL and a
 * hash, so such keys sort by hash, and a NUL sorts before any byte of a
 * shorter path). Such keys are contiguous (every key starting with the same
 * G bytes and longer than them), so LIST takes each such group whole and
 * sorts it by path; and a resume path in such a group resumes at the
 * group's start, skipping what is not after it. Paging thus follows path
 * order everywhere, which the client's merge of the servers' pages needs.
 */
#include "pss_list.h"

#include "pss_metadb.h"
#include "pss_req.h"

#include "ps_log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The reply's entries, growing as they are added, and what LIST asked. */
typedef struct pss_list {
    uint8_t *p;
    size_t cap, used;
    uint32_t n, max, more;
    const char *prefix, *after;
    size_t prefix_len, after_len;
} pss_list_t;

/* One entry of a group (pointers into the transaction's pages). */
typedef struct pss_list_item {
    const char *path;
    size_t plen;
    MDB_val v;
} pss_list_item_t;

static int pss_path_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);

    return c != 0 ? c : (alen > blen) - (alen < blen);
}

static int pss_list_item_cmp(const void *x, const void *y)
{
    const pss_list_item_t *a = x, *b = y;

    return pss_path_cmp(a->path, a->plen, b->path, b->plen);
}

/*
 * Add one entry (info, then the path padded to 8 bytes) if it starts with
 * the prefix and sorts after the resume path. 0 to go on, 1 when the page
 * is full (another entry matched: more), or ENOMEM.
 */
static int pss_list_add(pss_list_t *l, const MDB_val *v, const char *path, size_t plen)
{
    size_t need = sizeof(ps_list_entry_t) + ((plen + 7) & ~(size_t)7);
    ps_list_entry_t e;

    if (plen < l->prefix_len || memcmp(path, l->prefix, l->prefix_len) != 0 ||
        (l->after_len > 0 && pss_path_cmp(path, plen, l->after, l->after_len) <= 0)) {
        return 0;
    }
    if (l->n == l->max) {
        l->more = 1;
        return 1;
    }
    if (l->used + need > l->cap) {
        size_t ncap = l->cap * 2 + need;
        uint8_t *nout = realloc(l->p, ncap);
        if (nout == NULL) {
            return ENOMEM;
        }
        l->p = nout;
        l->cap = ncap;
    }
    memset(&e, 0, sizeof(e));
    pss_entry_info(v, &e.info);
    e.path_len = (uint32_t)plen;
    memcpy(l->p + l->used, &e, sizeof(e));
    memcpy(l->p + l->used + sizeof(e), path, plen);
    memset(l->p + l->used + sizeof(e) + plen, 0, need - sizeof(e) - plen);
    l->used += need;
    l->n++;
    return 0;
}

/*
 * The group of keys longer than g bytes that share their first g bytes
 * with *k (the cursor's key): gather it, leave the cursor on the key after
 * it (*k, *v; MDB_NOTFOUND at the end) and add its entries in path order.
 * Returns 0, 1 (page full), ENOMEM or an LMDB code.
 */
static int pss_list_group(pss_list_t *l, MDB_cursor *cur, size_t g, MDB_val *k, MDB_val *v)
{
    const void *head = k->mv_data; /* (the transaction's pages stay put) */
    pss_list_item_t *items = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    while (rc == 0 && k->mv_size > g && memcmp(k->mv_data, head, g) == 0) {
        if (n == cap) {
            pss_list_item_t *grown = realloc(items, (cap = cap ? 2 * cap : 64) * sizeof(*items));
            if (grown == NULL) {
                free(items);
                return ENOMEM;
            }
            items = grown;
        }
        if (pss_entry_path(k, v, &items[n].path, &items[n].plen) == PS_OK) {
            items[n++].v = *v;
        }
        rc = mdb_cursor_get(cur, k, v, MDB_NEXT);
    }
    qsort(items, n, sizeof(*items), pss_list_item_cmp);
    for (size_t i = 0; i < n && (rc == 0 || rc == MDB_NOTFOUND); i++) {
        int added = pss_list_add(l, &items[i].v, items[i].path, items[i].plen);
        rc = added != 0 ? added : rc;
    }
    free(items);
    return rc;
}

/*
 * Put the cursor on the first key to list: at the resume path's key (its
 * group's start if it has one) when that sorts after the prefix, else at
 * the first key starting with the prefix's kp_len key-space bytes. Entries
 * not after the resume path are skipped when added. Returns an LMDB code.
 */
static int pss_list_seek(pss_server_t *s, MDB_cursor *cur, const pss_list_t *l, size_t kp_len,
                         size_t g, MDB_val *k, MDB_val *v)
{
    pss_key_t after_key;
    int use_after = 0;

    if (l->after_len > 0) {
        pss_key_make(s, l->after, l->after_len, &after_key);
        size_t m = after_key.val.mv_size < kp_len ? after_key.val.mv_size : kp_len;
        int cmp = memcmp(after_key.val.mv_data, l->prefix, m);
        use_after = cmp > 0 || (cmp == 0 && after_key.val.mv_size >= kp_len);
    }
    if (use_after) {
        *k = after_key.val;
        k->mv_size = k->mv_size > g ? g : k->mv_size;
        return mdb_cursor_get(cur, k, v, MDB_SET_RANGE);
    }
    if (kp_len == 0) {
        return mdb_cursor_get(cur, k, v, MDB_FIRST);
    }
    k->mv_data = (void *)l->prefix;
    k->mv_size = kp_len;
    return mdb_cursor_get(cur, k, v, MDB_SET_RANGE);
}

/* Fill l from the store in txn; 0, MDB_NOTFOUND (the end) or an error. */
static int pss_list_read(pss_server_t *s, MDB_txn *txn, pss_list_t *l)
{
    size_t g = s->mdb_max_key - 9; /* key-space bytes of a long path's key */
    size_t kp_len = l->prefix_len < g ? l->prefix_len : g;
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int rc = mdb_cursor_open(txn, s->mdb_paths, &cur);

    if (rc == 0) {
        rc = pss_list_seek(s, cur, l, kp_len, g, &k, &v);
    }
    while (rc == 0) {
        if (k.mv_size < kp_len || memcmp(k.mv_data, l->prefix, kp_len) != 0) {
            break; /* keys with the prefix are contiguous: past the last one */
        }
        if (k.mv_size > g) {
            rc = pss_list_group(l, cur, g, &k, &v);
            continue;
        }
        const char *path;
        size_t plen;
        if (pss_entry_path(&k, &v, &path, &plen) == PS_OK) {
            rc = pss_list_add(l, &v, path, plen);
        }
        if (rc == 0) {
            rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
        }
    }
    if (cur != NULL) {
        mdb_cursor_close(cur); /* (a read-only transaction's is not closed with it) */
    }
    return rc == 1 ? 0 : rc;
}

void pss_list_handle(pss_worker_t *w, pss_req_t *req)
{
    const ps_list_req_t *r = &req->body.list;
    pss_list_t l;
    ps_list_rep_t rep;
    MDB_txn *txn;
    int rc;

    memset(&l, 0, sizeof(l));
    l.prefix = req->data ? (const char *)req->data : ""; /* no data: empty */
    l.prefix_len = r->prefix_len;
    l.after = l.prefix + r->prefix_len;
    l.after_len = r->after_len;
    l.max = r->max_entries;
    l.cap = 64 * 1024;
    l.p = malloc(l.cap);
    if (l.p == NULL) {
        pss_reply(req, PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, 0);
        return;
    }
    rc = mdb_txn_begin(w->server->mdb_env, NULL, MDB_RDONLY, &txn);
    if (rc == 0) {
        rc = pss_list_read(w->server, txn, &l);
        mdb_txn_abort(txn);
    }
    if (rc != 0 && rc != MDB_NOTFOUND) {
        ps_error("metadata store: LIST: %s", mdb_strerror(rc));
        free(l.p);
        pss_reply(req, pss_mdb_status(rc), NULL, 0, NULL, 0, 0);
        return;
    }
    memset(&rep, 0, sizeof(rep));
    rep.nentries = l.n;
    rep.more = l.more;
    rep.data_len = l.used;
    if (l.used == 0) {
        free(l.p);
        l.p = NULL;
    }
    pss_reply(req, PS_OK, &rep, sizeof(rep), l.p, l.used, 0);
}

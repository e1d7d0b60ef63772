/*
 * pss_metadb.c: the metadata store, DIR/meta: one LMDB environment with the
 * namespace (database "paths": key = path bytes, value = ps_file_info_t),
 * the server id ("server": "id" -> id), the records of renames between
 * servers (pss_move.c): "marks" (a name leaving this server), "arrived"
 * and "settled" (moves to a name of this server), "departed" (names moves
 * took away), and the index "ids" (file id, 8 bytes -> the key of its
 * name), which renews an open file's capability after a rename
 * (LOOKUP_ID). Every name put or deleted updates the index in the same
 * transaction (pss_meta_put, pss_meta_del); a store whose index does not
 * hold exactly every name (one from before protocol 20, or changed since by
 * an older server) is indexed again at open.
 *
 * LMDB is crash-safe by construction (copy-on-write B-tree, two meta
 * pages); we open it with MDB_NOMETASYNC, so a commit flushes the data
 * pages but not the meta page: a system crash may undo the last
 * transactions, never corrupt the store; META_SYNC, shutdown, a REMOVE, a
 * RENAME that replaced a file (whose objects the client removes next) and
 * every step of a MOVE force a full mdb_env_sync. Every worker opens its
 * own transactions; LMDB's writer lock serializes write transactions,
 * which only metadata requests take, never the I/O path.
 *
 * LMDB keys are at most mdb_env_get_maxkeysize() bytes (511 in Debian's
 * build) while paths may be PS_PATH_MAX long. A longer path is stored under
 * its first (max - 9) bytes, a NUL (which no path contains) and a 64-bit hash
 * of the whole path, and its value carries the full path after the
 * ps_file_info_t, which lookups compare. Such keys still sort right after
 * their truncated prefix, so LIST by prefix finds them (it filters on the full
 * path); among themselves they sort by hash, which LIST puts back in path
 * order (pss_list.c).
 *
 * Values written before protocol 4 hold a 48-byte ps_file_info_t without
 * uid and gid (flags 0); newer ones have PS_FILE_OWNED in flags and the
 * full struct. Old entries load as root's (uid 0, gid 0) with their mode,
 * so what anyone could write before stays readable by all (mode 0644) but
 * only root may change it until root chowns it (README, Security).
 */
#include "pss_metadb.h"

#include "pss_check.h"

#include "ps_layout.h"
#include "ps_log.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

/* bytes of address space (the file grows as needed; a larger size already
 * in the file wins): 64 GiB, about 100 million short names and their
 * index (which adds 30-45%: 2,000,000 short names took 350 MB, 478 MB
 * indexed) */
#define PSS_META_MAPSIZE (64ull << 30)

ps_status_t pss_mdb_status(int mdb_status)
{
    switch (mdb_status) {
    case 0:
        return PS_OK;
    case MDB_NOTFOUND:
        return PS_ERR_NO_ENTRY;
    case MDB_KEYEXIST:
        return PS_ERR_EXISTS;
    case MDB_MAP_FULL:
        return PS_ERR_NO_SPACE;
    case ENOMEM:
        return PS_ERR_NO_MEMORY;
    default:
        return mdb_status > 0 ? ps_status_from_errno(mdb_status) : PS_ERR_IO;
    }
}

/* In txn, point the index at key for the file id of the stored value v
 * (flags: MDB_NOOVERWRITE to keep an entry the file has). */
static int pss_index_put(pss_server_t *s, MDB_txn *txn, const MDB_val *key, const MDB_val *v,
                         unsigned flags)
{
    ps_file_info_t info;
    MDB_val id = {sizeof(info.file_id), &info.file_id};
    int mdb_status;

    pss_entry_info(v, &info);
    mdb_status = mdb_put(txn, s->mdb_ids, &id, (MDB_val *)key, flags);
    return mdb_status == MDB_KEYEXIST ? 0 : mdb_status;
}

/* Whether the index of txn holds exactly every name: as many entries, and
 * each name's file indexed at that name. (A server of an older protocol
 * changes names without it, so counting alone would miss a name removed
 * and another added.) Returns an LMDB code; *ok 1 or 0. */
static int pss_index_ok(pss_server_t *s, MDB_txn *txn, int *ok)
{
    MDB_stat paths, ids;
    MDB_cursor *cur = NULL;
    MDB_val k, v, at;
    int mdb_status = mdb_stat(txn, s->mdb_paths, &paths);

    if (mdb_status == 0) {
        mdb_status = mdb_stat(txn, s->mdb_ids, &ids);
    }
    *ok = mdb_status == 0 && paths.ms_entries == ids.ms_entries;
    if (*ok) {
        mdb_status = mdb_cursor_open(txn, s->mdb_paths, &cur);
    }
    for (MDB_cursor_op op = MDB_FIRST; *ok && mdb_status == 0; op = MDB_NEXT) {
        ps_file_info_t info;
        MDB_val id = {sizeof(info.file_id), &info.file_id};

        mdb_status = mdb_cursor_get(cur, &k, &v, op);
        if (mdb_status != 0 || pss_entry_info_len(&v) == 0) {
            break;
        }
        pss_entry_info(&v, &info);
        mdb_status = mdb_get(txn, s->mdb_ids, &id, &at);
        *ok = mdb_status == 0 && pss_val_eq(&at, &k);
        mdb_status = mdb_status == MDB_NOTFOUND ? 0 : mdb_status;
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    return mdb_status == MDB_NOTFOUND ? 0 : mdb_status;
}

/* In txn, index every name again unless the index holds exactly every name
 * (a store from before protocol 20 has none). Returns an LMDB code. */
static int pss_meta_index(pss_server_t *s, MDB_txn *txn)
{
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    size_t n = 0;
    int ok, mdb_status = pss_index_ok(s, txn, &ok);

    if (mdb_status != 0 || ok) {
        return mdb_status;
    }
    mdb_status = mdb_drop(txn, s->mdb_ids, 0);
    if (mdb_status == 0) {
        mdb_status = mdb_cursor_open(txn, s->mdb_paths, &cur);
    }
    for (MDB_cursor_op op = MDB_FIRST; mdb_status == 0; op = MDB_NEXT, n++) {
        mdb_status = mdb_cursor_get(cur, &k, &v, op);
        if (mdb_status == 0 && pss_entry_info_len(&v) == 0) {
            mdb_status = MDB_CORRUPTED;
        }
        if (mdb_status == 0) { /* (a name leaving while the file arrives here too: the new one) */
            MDB_val mark;
            int leaving = mdb_get(txn, s->mdb_marks, &k, &mark) == 0;
            mdb_status = pss_index_put(s, txn, &k, &v, leaving ? MDB_NOOVERWRITE : 0);
        }
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    if (mdb_status == MDB_NOTFOUND) {
        ps_info("metadata store: %zu names indexed by file id", n - 1);
        mdb_status = 0;
    }
    return mdb_status;
}

/*
 * In txn, open the databases and read the server id, or make a random one
 * on a new store. Returns an LMDB code (or an errno value).
 */
static int pss_meta_open_dbs(pss_server_t *s, MDB_txn *txn)
{
    MDB_dbi server_dbi;
    int mdb_status;

    mdb_status = mdb_dbi_open(txn, "paths", MDB_CREATE, &s->mdb_paths);
    if (mdb_status == 0) {
        mdb_status = mdb_dbi_open(txn, "marks", MDB_CREATE, &s->mdb_marks);
    }
    if (mdb_status == 0) {
        mdb_status = mdb_dbi_open(txn, "arrived", MDB_CREATE, &s->mdb_arrived);
    }
    if (mdb_status == 0) {
        mdb_status = mdb_dbi_open(txn, "settled", MDB_CREATE, &s->mdb_settled);
    }
    if (mdb_status == 0) {
        mdb_status = mdb_dbi_open(txn, "departed", MDB_CREATE, &s->mdb_departed);
    }
    if (mdb_status == 0) {
        mdb_status = mdb_dbi_open(txn, "ids", MDB_CREATE, &s->mdb_ids);
    }
    if (mdb_status == 0) {
        mdb_status = pss_meta_index(s, txn);
    }
    if (mdb_status == 0) {
        mdb_status = mdb_dbi_open(txn, "server", MDB_CREATE, &server_dbi);
    }
    if (mdb_status == 0) {
        MDB_val key = {2, (void *)"id"}, val;
        mdb_status = mdb_get(txn, server_dbi, &key, &val);
        if (mdb_status == 0 && val.mv_size == sizeof(uint64_t)) {
            memcpy(&s->server_id, val.mv_data, sizeof(uint64_t));
        } else if (mdb_status == MDB_NOTFOUND) {
            uint64_t id = 0;
            while (id == 0) {
                if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
                    ps_error("getrandom: %m");
                    mdb_status = EIO;
                    break;
                }
            }
            if (id != 0) {
                val.mv_size = sizeof(id);
                val.mv_data = &id;
                mdb_status = mdb_put(txn, server_dbi, &key, &val, 0);
                s->server_id = id;
            }
        } else if (mdb_status == 0) {
            mdb_status = MDB_CORRUPTED;
        }
    }
    return mdb_status;
}

/* A store that is damaged, or missing beside objects, is not opened: LMDB
 * would fault on it or silently start an empty namespace (pss_check.c). */
static ps_status_t pss_meta_refuse_damaged(pss_server_t *s)
{
    pss_meta_report_t rep;
    ps_status_t status = pss_meta_check(s->data_dir, &rep);

    if (status != PS_OK) {
        ps_error("%s/meta: cannot check the metadata store: %s", s->data_dir,
                 ps_status_string(status));
        return status;
    }
    if (rep.problem[0] == '\0') {
        return PS_OK;
    }
    ps_error("%s: %s. The server does not start on it: restore %s/meta from a backup, or, to "
             "start an empty server here, move %s/meta and %s/obj aside. `pstripe-server --data "
             "%s --check` reports what the directory holds.",
             s->data_dir, rep.problem, s->data_dir, s->data_dir, s->data_dir, s->data_dir);
    return PS_ERR_IO;
}

ps_status_t pss_meta_open(pss_server_t *s)
{
    char path[4096];
    MDB_txn *txn;
    ps_status_t status;
    int mdb_status;

    snprintf(path, sizeof(path), "%s/meta", s->data_dir);
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        ps_error("mkdir %s: %m", path);
        return ps_status_from_errno(errno);
    }
    status = pss_meta_refuse_damaged(s);
    if (status != PS_OK) {
        return status;
    }
    mdb_status = mdb_env_create(&s->mdb_env);
    if (mdb_status != 0) {
        ps_error("mdb_env_create: %s", mdb_strerror(mdb_status));
        return pss_mdb_status(mdb_status);
    }
    mdb_env_set_maxdbs(s->mdb_env, 8);
    mdb_env_set_mapsize(s->mdb_env, PSS_META_MAPSIZE);
    mdb_env_set_maxreaders(s->mdb_env, 2 * PS_MAX_WORKERS + 16);
    mdb_status = mdb_env_open(s->mdb_env, path, MDB_NOMETASYNC, 0600);
    if (mdb_status != 0) {
        ps_error("open the metadata store %s: %s", path, mdb_strerror(mdb_status));
        goto err_close_env;
    }
    s->mdb_max_key = (size_t)mdb_env_get_maxkeysize(s->mdb_env);

    mdb_status = mdb_txn_begin(s->mdb_env, NULL, 0, &txn);
    if (mdb_status != 0) {
        ps_error("metadata store %s: mdb_txn_begin: %s", path, mdb_strerror(mdb_status));
        goto err_close_env;
    }
    mdb_status = pss_meta_open_dbs(s, txn);
    if (mdb_status != 0) {
        ps_error("metadata store %s: %s", path, mdb_strerror(mdb_status));
        mdb_txn_abort(txn);
        goto err_close_env;
    }
    mdb_status = mdb_txn_commit(txn);
    if (mdb_status != 0) {
        ps_error("metadata store %s: commit: %s", path, mdb_strerror(mdb_status));
        goto err_close_env;
    }
    mdb_status = mdb_env_sync(s->mdb_env, 1);
    if (mdb_status != 0) {
        ps_error("metadata store %s: sync: %s", path, mdb_strerror(mdb_status));
        goto err_close_env;
    }
    ps_info("metadata store %s: %llu paths, server id %016llx", path,
            (unsigned long long)pss_meta_count(s), (unsigned long long)s->server_id);
    return PS_OK;

err_close_env:
    mdb_env_close(s->mdb_env);
    s->mdb_env = NULL;
    return pss_mdb_status(mdb_status);
}

/* Every fsync of a file asks its metadata server (META_SYNC), mostly with
 * nothing committed since: then there is nothing to flush (IOR's fsync
 * after each write paid an fdatasync of the store each, 284 us on this
 * host). A commit is visible to every worker before mdb_txn_commit
 * returns, so a sync is skipped only if no commit has begun since the
 * commits that had ended before the last sync; the count of those is read
 * before this sync, so a commit it missed is synced next. */
ps_status_t pss_meta_sync(pss_server_t *s)
{
    uint64_t commits = atomic_load(&s->meta_commits);
    int mdb_status;

    if (atomic_load(&s->meta_begun) == atomic_load(&s->meta_synced)) {
        return PS_OK;
    }
    mdb_status = mdb_env_sync(s->mdb_env, 1);
    if (mdb_status != 0) {
        ps_error("metadata store: mdb_env_sync: %s", mdb_strerror(mdb_status));
        return pss_mdb_status(mdb_status);
    }
    atomic_store(&s->meta_synced,
                 commits); /* (an older count than another sync's: one more flush) */
    return PS_OK;
}

int pss_txn_commit(pss_server_t *s, MDB_txn *txn)
{
    int mdb_status;

    atomic_fetch_add(&s->meta_begun, 1);
    mdb_status = mdb_txn_commit(txn);
    atomic_fetch_add(&s->meta_commits, 1); /* (a failed one too: a sync costs nothing wrong) */
    return mdb_status;
}

void pss_meta_close(pss_server_t *s)
{
    if (s->mdb_env != NULL) {
        pss_meta_sync(s);
        mdb_env_close(s->mdb_env);
        s->mdb_env = NULL;
    }
}

uint64_t pss_meta_count(pss_server_t *s)
{
    MDB_txn *txn;
    MDB_stat db_stat;
    uint64_t n = 0;

    if (mdb_txn_begin(s->mdb_env, NULL, MDB_RDONLY, &txn) == 0) {
        if (mdb_stat(txn, s->mdb_paths, &db_stat) == 0) {
            n = db_stat.ms_entries;
        }
        mdb_txn_abort(txn);
    }
    return n;
}

/* ---- keys ------------------------------------------------------------------ */

void pss_key_make(pss_server_t *s, const char *path, size_t len, pss_key_t *key)
{
    if (len <= s->mdb_max_key) {
        key->is_long = 0;
        key->val.mv_data = (void *)path;
        key->val.mv_size = len;
        return;
    }
    size_t keep = s->mdb_max_key - 9;
    uint64_t h = ps_hash_bytes(path, len);
    memcpy(key->buf, path, keep);
    key->buf[keep] = 0;
    memcpy(key->buf + keep + 1, &h, sizeof(h));
    key->is_long = 1;
    key->val.mv_data = key->buf;
    key->val.mv_size = keep + 9;
}

#define PSS_INFO_V3_LEN offsetof(ps_file_info_t, uid) /* bytes of a value's info before 4 */

/* Bytes of the info at the start of a stored value (see the top), 0 if it
 * is too short. */
size_t pss_entry_info_len(const MDB_val *v)
{
    uint32_t flags;
    size_t n;

    if (v->mv_size < PSS_INFO_V3_LEN) {
        return 0;
    }
    memcpy(&flags, (const char *)v->mv_data + offsetof(ps_file_info_t, flags), sizeof(flags));
    n = (flags & PS_FILE_OWNED) ? sizeof(ps_file_info_t) : PSS_INFO_V3_LEN;
    return v->mv_size < n ? 0 : n;
}

/* The info of a stored value (old ones: uid 0, gid 0). */
void pss_entry_info(const MDB_val *v, ps_file_info_t *info)
{
    memset(info, 0, sizeof(*info));
    memcpy(info, v->mv_data, pss_entry_info_len(v));
}

/* Full path of a stored entry (key, or the path after the info for long keys). */
ps_status_t pss_entry_path(const MDB_val *k, const MDB_val *v, const char **path, size_t *len)
{
    size_t n = pss_entry_info_len(v);

    if (n == 0) {
        return PS_ERR_IO;
    }
    if (v->mv_size > n) {
        *path = (const char *)v->mv_data + n;
        *len = v->mv_size - n;
    } else {
        *path = k->mv_data;
        *len = k->mv_size;
    }
    return PS_OK;
}

/* Get a path's info in txn: PS_OK, PS_ERR_NO_ENTRY or an error. */
ps_status_t pss_meta_get(pss_server_t *s, MDB_txn *txn, const char *path, size_t len,
                         pss_key_t *key, ps_file_info_t *info)
{
    MDB_val val;
    const char *stored;
    size_t stored_len;
    int mdb_status;

    pss_key_make(s, path, len, key);
    mdb_status = mdb_get(txn, s->mdb_paths, &key->val, &val);
    if (mdb_status != 0) {
        if (mdb_status != MDB_NOTFOUND) {
            ps_error("metadata lookup: %s", mdb_strerror(mdb_status));
        }
        return pss_mdb_status(mdb_status);
    }
    if (pss_entry_path(&key->val, &val, &stored, &stored_len) != PS_OK) {
        ps_error("metadata store: entry of %zu bytes is too short", val.mv_size);
        return PS_ERR_IO;
    }
    if (stored_len != len || memcmp(stored, path, len) != 0) {
        ps_error("metadata store: hash collision between long paths");
        return PS_ERR_EXISTS;
    }
    pss_entry_info(&val, info);
    return PS_OK;
}

ps_status_t pss_meta_put(pss_server_t *s, MDB_txn *txn, pss_key_t *key, const char *path,
                         size_t len, const ps_file_info_t *info)
{
    uint8_t buf[sizeof(ps_file_info_t) + PS_PATH_MAX];
    MDB_val val = {sizeof(*info), buf};
    uint32_t flags = info->flags | PS_FILE_OWNED; /* the new layout (see the top) */
    int mdb_status;

    memcpy(buf, info, sizeof(*info));
    memcpy(buf + offsetof(ps_file_info_t, flags), &flags, sizeof(flags));
    if (key->is_long) {
        memcpy(buf + sizeof(*info), path, len);
        val.mv_size += len;
    }
    mdb_status = mdb_put(txn, s->mdb_paths, &key->val, &val, MDB_NOOVERWRITE);
    if (mdb_status == 0) {
        mdb_status = pss_index_put(s, txn, &key->val, &val, 0);
    }
    if (mdb_status != 0) {
        ps_error("metadata store: put: %s", mdb_strerror(mdb_status));
    }
    return pss_mdb_status(mdb_status);
}

ps_status_t pss_meta_del(pss_server_t *s, MDB_txn *txn, const pss_key_t *key, uint64_t file_id)
{
    MDB_val id = {sizeof(file_id), &file_id}, at;
    int mdb_status = mdb_del(txn, s->mdb_paths, (MDB_val *)&key->val, NULL);

    if (mdb_status == MDB_NOTFOUND) {
        return PS_ERR_NO_ENTRY;
    }
    if (mdb_status == 0) {
        mdb_status = mdb_get(txn, s->mdb_ids, &id, &at);
        if (mdb_status == 0 && pss_val_eq(&at, &key->val)) {
            mdb_status = mdb_del(txn, s->mdb_ids, &id, NULL);
        } else if (mdb_status == MDB_NOTFOUND) {
            mdb_status = 0; /* (not indexed) */
        }                   /* (else indexed under its other name: a move within this server) */
    }
    if (mdb_status != 0) {
        ps_error("metadata store: delete: %s", mdb_strerror(mdb_status));
    }
    return pss_mdb_status(mdb_status);
}

ps_status_t pss_meta_get_id(pss_server_t *s, MDB_txn *txn, uint64_t file_id, ps_file_info_t *info,
                            const char **path, size_t *len)
{
    MDB_val id = {sizeof(file_id), &file_id}, key, val;
    int mdb_status = mdb_get(txn, s->mdb_ids, &id, &key);

    if (mdb_status == 0) {
        mdb_status = mdb_get(txn, s->mdb_paths, &key, &val);
    }
    if (mdb_status != 0) {
        if (mdb_status != MDB_NOTFOUND) {
            ps_error("metadata lookup by id: %s", mdb_strerror(mdb_status));
        }
        return pss_mdb_status(mdb_status);
    }
    if (pss_entry_path(&key, &val, path, len) != PS_OK) {
        ps_error("metadata store: entry of %zu bytes is too short", val.mv_size);
        return PS_ERR_IO;
    }
    pss_entry_info(&val, info);
    if (info->file_id != file_id) {
        ps_warn("metadata store: the index of file %016llx names another file's entry: taken "
                "as no name (it is made again at the next start)",
                (unsigned long long)file_id);
        return PS_ERR_NO_ENTRY;
    }
    return PS_OK;
}

/* Begin a transaction (flags 0 or MDB_RDONLY); a failure is logged here. */
ps_status_t pss_txn_begin(pss_server_t *s, unsigned flags, MDB_txn **txn)
{
    int mdb_status = mdb_txn_begin(s->mdb_env, NULL, flags, txn);
    if (mdb_status != 0) {
        ps_error("metadata store: mdb_txn_begin: %s", mdb_strerror(mdb_status));
    }
    return pss_mdb_status(mdb_status);
}

ps_status_t pss_meta_unmarked(pss_server_t *s, MDB_txn *txn, const pss_key_t *key)
{
    MDB_val val;
    int mdb_status = mdb_get(txn, s->mdb_marks, (MDB_val *)&key->val, &val);

    if (mdb_status == MDB_NOTFOUND) {
        return PS_OK;
    }
    return mdb_status == 0 ? PS_ERR_BUSY : pss_mdb_status(mdb_status);
}

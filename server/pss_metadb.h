/*
 * pss_metadb.h: the metadata store (DIR/meta, LMDB) under the handlers of
 * pss_meta.c and pss_move.c: opening it, keys for paths of any length, and
 * getting and putting one path's entry in a transaction.
 */
#ifndef PSS_METADB_H
#define PSS_METADB_H

#include "pss.h"

#include <string.h>

/* A path's LMDB key (the path itself, or a prefix and a hash for long ones). */
typedef struct pss_key {
    MDB_val val;
    int is_long;
    uint8_t buf[PS_PATH_MAX + 16];
} pss_key_t;

/* Open (or create) DIR/meta and read (or make) the server id. */
ps_status_t pss_meta_open(pss_server_t *server);

/* Sync and close the store (no-op if not open). */
void pss_meta_close(pss_server_t *server);

/* Number of paths in the namespace (0 if the store cannot be read). */
uint64_t pss_meta_count(pss_server_t *server);

/* The status of an LMDB result code (or errno value). */
ps_status_t pss_mdb_status(int mdb_status);

/* Make every committed transaction durable: a full sync of the store,
 * unless no commit began since the ones the last sync covered. */
ps_status_t pss_meta_sync(pss_server_t *s);

void pss_key_make(pss_server_t *s, const char *path, size_t len, pss_key_t *key);

/* Whether two LMDB keys or values hold the same bytes. */
static inline int pss_val_eq(const MDB_val *a, const MDB_val *b)
{
    return a->mv_size == b->mv_size && memcmp(a->mv_data, b->mv_data, a->mv_size) == 0;
}

/* Bytes of the info at the start of a stored value, 0 if it is too short. */
size_t pss_entry_info_len(const MDB_val *v);

/* The info of a stored value (old ones: uid 0, gid 0). */
void pss_entry_info(const MDB_val *v, ps_file_info_t *info);

/* Full path of a stored entry (key, or the path after the info for long keys). */
ps_status_t pss_entry_path(const MDB_val *k, const MDB_val *v, const char **path, size_t *len);

/* Get a path's info in txn (key made here): PS_OK, PS_ERR_NO_ENTRY or an error. */
ps_status_t pss_meta_get(pss_server_t *s, MDB_txn *txn, const char *path, size_t len,
                         pss_key_t *key, ps_file_info_t *info);

/* Put a path's info in txn under key (which must not exist), and index it. */
ps_status_t pss_meta_put(pss_server_t *s, MDB_txn *txn, pss_key_t *key, const char *path,
                         size_t len, const ps_file_info_t *info);

/* Delete the name of key in txn, and its index entry if it points there
 * (file_id: the file it names): PS_OK, PS_ERR_NO_ENTRY or an error. */
ps_status_t pss_meta_del(pss_server_t *s, MDB_txn *txn, const pss_key_t *key, uint64_t file_id);

/* The info and full path of the name of file_id in txn, by the index:
 * PS_OK, PS_ERR_NO_ENTRY or an error. */
ps_status_t pss_meta_get_id(pss_server_t *s, MDB_txn *txn, uint64_t file_id, ps_file_info_t *info,
                            const char **path, size_t *len);

/* PS_OK if the name of key is not leaving for another server (pss_move.c),
 * PS_ERR_BUSY if it is (the caller refuses to remove, rename or change it),
 * or an error. */
ps_status_t pss_meta_unmarked(pss_server_t *s, MDB_txn *txn, const pss_key_t *key);

/* Begin a transaction (flags 0 or MDB_RDONLY); a failure is logged here. */
ps_status_t pss_txn_begin(pss_server_t *s, unsigned flags, MDB_txn **txn);

/* Commit a write transaction (mdb_txn_commit's result), counted for
 * pss_meta_sync. */
int pss_txn_commit(pss_server_t *s, MDB_txn *txn);

#endif

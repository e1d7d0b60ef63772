/*
 * pss_meta.h: the namespace (full path -> ps_file_info_t) in LMDB, and the
 * server id kept beside it.
 */
#ifndef PSS_META_H
#define PSS_META_H

#include "pss.h"

/* Open (or create) DIR/meta and read (or make) the server id. */
ps_status_t pss_meta_open(pss_server_t *server);

/* Sync and close the store (no-op if not open). */
void pss_meta_close(pss_server_t *server);

/* Answer CREATE, LOOKUP, REMOVE, LIST or META_SYNC. */
void pss_meta_handle(pss_worker_t *w, pss_req_t *req);

/* Number of paths in the namespace (0 if the store cannot be read). */
uint64_t pss_meta_count(pss_server_t *server);

#endif

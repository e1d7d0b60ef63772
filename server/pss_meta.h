/*
 * pss_meta.h: the namespace's requests (full path -> ps_file_info_t) on the
 * store of pss_metadb.h.
 */
#ifndef PSS_META_H
#define PSS_META_H

#include "pss.h"

/* Answer CREATE, LOOKUP, REMOVE, RENAME, SETATTR, LIST or META_SYNC. */
void pss_meta_handle(pss_worker_t *w, pss_req_t *req);

/* PS_OK if path is a valid name (else logged as req's). */
ps_status_t pss_check_path(pss_req_t *req, const char *path, size_t len);

/* 1 if this server may own path (it does not know its place in the
 * cluster, or ps_path_server names it). */
int pss_meta_owns(pss_server_t *s, const char *path, size_t len);

/* PS_OK if req's caller may access (PS_CAP_* bits) the file of info, else
 * PS_ERR_ACCESS (logged). */
ps_status_t pss_meta_allow(pss_req_t *req, const ps_file_info_t *info, uint32_t access,
                           const char *path, size_t len);

#endif

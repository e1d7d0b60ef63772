/*
 * pss_perm.h: permissions and capabilities (see pss_perm.c and the rules
 * above ps_path_req_t in ps_proto.h).
 */
#ifndef PSS_PERM_H
#define PSS_PERM_H

#include "pss.h"

/* The uid and gid of req's caller (0, 0 if its connection has none). */
void pss_perm_caller(const pss_req_t *req, uint32_t *uid, uint32_t *gid);

/* 1 if the caller of req is root (always with auth = none). */
int pss_perm_is_root(const pss_server_t *s, const pss_req_t *req);

/* 1 if the caller of req may have every PS_CAP_* right in access on the file
 * of info (REMOVE: owner or write permission); always 1 with auth = none. */
int pss_perm_may(const pss_server_t *s, const pss_req_t *req, const ps_file_info_t *info,
                 uint32_t access);

/* Fill rep->cap (rights on info's file, signed) and rep->cap_life_s for the
 * caller of req; with auth = none, zeros (no capability). */
void pss_perm_grant(const pss_server_t *s, const pss_req_t *req, uint64_t file_id, uint32_t rights,
                    ps_cap_t *cap, uint32_t *life_s);

/* Apply a SETATTR to info if the caller may: PS_OK, or PS_ERR_ACCESS with
 * the reason logged. */
ps_status_t pss_perm_setattr(const pss_server_t *s, const pss_req_t *req, ps_file_info_t *info);

/* A data request (OBJ_*, SHARED_FP): 1 if its capability allows it (or
 * none is needed); else it is answered with PS_ERR_ACCESS, counted and
 * logged (at most once a second), and 0 is returned. */
int pss_perm_check_data(pss_worker_t *w, pss_req_t *req);

#endif

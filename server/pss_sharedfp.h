/*
 * pss_sharedfp.h: shared file pointers (SHARED_FP): 64-bit counters named
 * by (file id, open instance), kept in memory by the worker that owns the
 * file id on the file's metadata owner.
 */
#ifndef PSS_SHAREDFP_H
#define PSS_SHAREDFP_H

#include "pss.h"

/* Counters a worker keeps at most (a full table refuses new counters), and
 * of them one user other than root. */
#define PSS_SFP_MAX      4096
#define PSS_SFP_USER_MAX 1024
/* A counter unused this long may be dropped to make room for a new one
 * (its opener is presumed gone without closing). */
#define PSS_SFP_IDLE_NS (3600ull * 1000000000ull)

/* Answer a SHARED_FP request (routed to ps_object_worker(file_id)). */
void pss_sfp_handle(pss_worker_t *w, pss_req_t *req);

/* Free the worker's counters (at worker teardown). */
void pss_sfp_cleanup(pss_worker_t *w);

#endif

/*
 * pss_store.h: objects on the local disk: the OBJ_* requests, served with
 * coalesced direct I/O by the worker that owns each object.
 */
#ifndef PSS_STORE_H
#define PSS_STORE_H

#include "pss.h"

/* Create DIR/obj and its subdirectories, find the O_DIRECT alignment. */
ps_status_t pss_store_init(pss_server_t *server);

/* Per worker: aio context and eventfd, object table. */
ps_status_t pss_store_worker_init(pss_worker_t *w);
void pss_store_worker_cleanup(pss_worker_t *w);

/* Queue an OBJ_* request on its object (it is answered later). */
void pss_store_handle(pss_worker_t *w, pss_req_t *req);

/* Reap disk completions and start whatever queued work can start. */
void pss_store_progress(pss_worker_t *w);

/* Is work queued or in flight? */
int pss_store_busy(pss_worker_t *w);

/* fsync and close every object (worker exit). */
void pss_store_sync_all(pss_worker_t *w);

#endif

/*
 * pss_worker.h: the worker threads, started and joined by the main thread.
 */
#ifndef PSS_WORKER_H
#define PSS_WORKER_H

#include "pss.h"

/*
 * Start every worker of server and wait until each one listens (or failed).
 * On failure `stopping` is set, and the workers that started must still be
 * joined with pss_worker_join_all.
 */
ps_status_t pss_worker_start_all(pss_server_t *server);

/* Wake every worker (to see `stopping`) and join them. */
void pss_worker_join_all(pss_server_t *server);

#endif

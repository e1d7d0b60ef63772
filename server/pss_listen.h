/*
 * pss_listen.h: a worker's UCX listeners.
 */
#ifndef PSS_LISTEN_H
#define PSS_LISTEN_H

#include "pss.h"

/*
 * Create w's listener: worker 0 on the configured host and port, the others
 * on the same host and a port the kernel chooses. Sets s->ports[w->index].
 * A configured port of 0 means any free port outside the kernel's ephemeral
 * range (see pss_listen.c). PS_ERR_BUSY if the port is taken. With the
 * shm setting, also a listener on the loopback address for connections that
 * may use shared memory (s->shm_ports[w->index]).
 */
ps_status_t pss_listen(pss_worker_t *w);

#endif

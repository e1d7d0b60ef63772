/*
 * psc_config.h: the client's tunables ([client] section, PSTRIPE_<NAME>,
 * pstripe_set_option) and the per-file subset (pstripe_file_set_option).
 */
#ifndef PSC_CONFIG_H
#define PSC_CONFIG_H

#include <stdint.h>

#include "ps_config.h"
#include "ps_status.h"

/* Tunables of one request's batching, held by each file (a file starts with
 * the connection's). */
typedef struct psc_io_opts {
    uint64_t buffer_size;
    int64_t buffer_count;
    int64_t max_regions;
    uint64_t bounce_threshold;
} psc_io_opts_t;

/* Tunables of the [client] section. io must stay the first member: the
 * table's per-file fields are then at the same offsets in a psc_config_t and
 * in a psc_io_opts_t, so one table parses both. */
typedef struct psc_config {
    psc_io_opts_t io; /* defaults for files opened later */
    char *servers;
    uint64_t stripe_size;
    int64_t stripe_count;
    double timeout;
    double connect_timeout;
    int log_level;
    char *auth;          /* "" (the server's mode), "munge", "key" or "none" (psc_auth.c) */
    char *auth_key_file; /* the cluster key (auth = key) */
    char *munge_socket;  /* munged's socket ("": its default) */
    double spin;         /* seconds a waiter progresses before it sleeps (0: never) */
    int shm;             /* use a server's shared-memory ports when it offers them here */
} psc_config_t;

/* Every field, for a psc_config_t. */
extern const ps_config_field_t psc_config_table[];
/* The per-file fields: the tail of psc_config_table, for a psc_io_opts_t. */
extern const ps_config_field_t *const psc_io_config_table;

/* Fill cfg: defaults, then file (if path non-NULL; missing file is an error
 * only if required), then environment. Sets the thread's message on error. */
ps_status_t psc_config_load(psc_config_t *cfg, const char *path, int required, int *file_found);

/* Read the UCX configuration of the client's own UCP context: PSTRIPE_UCX_*
 * variables, over UCX_* ones (which UCX applies underneath any prefix), but the
 * transport and device lists, which only PSTRIPE_UCX_* set (UCX_TLS etc. are
 * for MPI's context in the same process). shm: servers of this host may
 * offer shared memory; net_devices: the network devices that reach the
 * servers (NULL: all). On error, msg says why. */
struct ucp_config;
ps_status_t psc_ucx_config_read(struct ucp_config **config_p, int shm, const char *net_devices,
                                char *msg, size_t msglen);

#endif

/*
 * pss_config.h: the daemon's tunables, one field of pss_config_t per line of
 * the table in pss_config.c (config file section [server], environment
 * PSTRIPE_<NAME>, `--set name=value`, --print-config).
 */
#ifndef PSS_CONFIG_H
#define PSS_CONFIG_H

#include <stdint.h>

#include "ps_config.h"

typedef struct pss_config {
    char *listen;          /* "ADDR:PORT" of worker 0 */
    char *data_dir;        /* data directory */
    int64_t workers;       /* 0: one per core of the cpuset */
    uint64_t max_batch;    /* bytes: largest payload of one OBJ_READ/OBJ_WRITE */
    uint64_t coalesce_gap; /* bytes: regions closer than this share a disk I/O */
    uint64_t max_io;       /* bytes: largest single disk I/O */
    int64_t aio_depth;     /* disk I/Os in flight per worker */
    char *direct_io;       /* "auto", "yes" or "no" */
    char *pin;             /* "core" or "none": workers pinned one per core (pss_main.c) */
    int log_level;         /* ps_log_level_t */
    char *log_file;        /* "" = stderr */
    uint64_t max_merge;    /* bytes: payload of batches planned together */
    int64_t max_open;      /* object files kept open by the whole server */
    int64_t max_connections; /* connections per worker */
    uint64_t max_inflight; /* bytes: request buffers a worker holds before queueing more */
    double drain_timeout;  /* seconds to finish in-flight work on SIGTERM */
    double slow_reply;     /* seconds: a later reply is logged (pss_req.c), 0: never */
    uint64_t flush_behind; /* bytes of an object written before a background flush, 0: none */
    uint64_t write_back;   /* bytes per worker: write-back stage of partial blocks, 0: off */
    double write_back_age; /* seconds a partial block stays staged at most */
    double write_back_wait; /* seconds a write waits for room before halves go partial */
    uint64_t cache;        /* bytes per worker: cache of bytes written and read (pss_cache.c) */
    uint64_t read_ahead;   /* bytes read ahead of a forward stream (pss_readahead.c) */
    char *auth;            /* "munge", "key" or "none" (pss_auth.c) */
    char *auth_key_file;   /* the cluster key (auth = key) */
    char *munge_socket;    /* munged's socket ("": its default) */
    double cap_life;       /* seconds a capability is valid */
    double ticket_life;    /* seconds a ticket is valid (pss_auth.c) */
    double data_wait;      /* seconds a rendezvous receive may take (pss_worker.c) */
    double move_life;      /* seconds a MOVE may take to arrive (pss_move.c) */
    double auth_wait;      /* seconds an unauthenticated connection keeps its slot (pss_conn.c) */
    int64_t server_index;  /* this server's index in the cluster's list, -1: not known */
    int64_t cluster_size;  /* servers in the cluster, 0: not known (pss_meta.c) */
    double spin;           /* seconds a worker progresses after activity before it sleeps */
    uint64_t eager_reply;  /* bytes: replies with at most this much data go eagerly (pss_req.c) */
    uint64_t eager_reply_shm; /* the same on shared-memory connections */
    int shm;               /* same-host clients may use shared memory (pss_listen.c) */
} pss_config_t;

/* The [server] tunables: names, defaults, docs and where each lands in pss_config_t. */
extern const ps_config_field_t pss_config_table[];

#endif

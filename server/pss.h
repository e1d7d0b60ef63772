/*
 * pss.h: the types every part of the storage daemon pstripe-server shares:
 * the process (pss_server_t), its workers (pss_worker_t), a received request
 * (pss_req_t) and the per-worker counters. Functions are declared in the
 * header of the file that defines them; this one declares none, so that
 * including it never ties one file to another.
 *
 * One process = one server = W workers. Each worker is a thread pinned to a
 * core with its own UCX worker, its own listener port, its own objects,
 * its own libaio context and its own counters; the only state shared
 * between workers is read-only after start-up (configuration, ports,
 * alignment) plus the LMDB environment, which serializes its writers itself.
 * Nothing on the I/O path takes a lock.
 *
 * The files, each calling only those below it:
 *   pss_main.c    command line, start-up, data dir, signals, shutdown
 *   pss_worker.c  event loop, request decoding, admission, routing
 *   pss_listen.c  a worker's UCX listener; worker 0's port outside the ephemeral range
 *   pss_admin.c   HELLO, STATFS and STATS
 *   pss_auth.c    auth mode, AUTH, refusing unauthenticated connections
 *   pss_perm.c    permission checks, capabilities given at open and checked on data
 *   pss_meta.c    the namespace in LMDB (CREATE, LOOKUP, REMOVE, LIST, META_SYNC, SETATTR)
 *   pss_store.c   OBJ_* requests: checks, each object's queue, control requests
 *   pss_job.c     running I/O jobs: libaio, read-modify-write, staging, flushes
 *   pss_plan.c    planning I/O jobs: coalescing into spans, pieces, flush jobs
 *   pss_object.c  the object table and object files (open, size, sync, close)
 *   pss_edge.c    edge blocks of recent writes (writes without read-modify-write)
 *   pss_share.c   read spans kept for other clients reading the same blocks
 *   pss_stage.c   the write-back stage of partial blocks (its table)
 *   pss_probe.c   start-up probe of O_DIRECT alignment and block size
 *   pss_req.c     a request's life: buffers, reply, release
 *   pss_conn.c    a worker's connections (endpoints, refcounts, closing)
 *   pss_config.c  the [server] tunables table
 */
#ifndef PSS_H
#define PSS_H

#include <hwloc.h>
#include <libaio.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>
#include <ucp/api/ucp.h>

#include "ps_log.h"
#include "ps_proto.h"
#include "ps_status.h"

/* The servers' UCX transports unless UCX_TLS is set (pss_main.c). */
#define PSS_UCX_TLS "^mm"
#include "pss_config.h"

/* ---- counters ---------------------------------------------------------------- */

/*
 * Per-worker counters. Written only by their worker (relaxed load + store,
 * which compiles to plain moves), read by any worker for STATS; no locks, no
 * read-modify-write atomics on the I/O path.
 */
typedef struct pss_stats {
    _Atomic uint64_t requests, errors;
    _Atomic uint64_t bytes_written, bytes_read;
    _Atomic uint64_t write_batches, read_batches;
    _Atomic uint64_t regions_written, regions_read;
    _Atomic uint64_t disk_writes, disk_reads;
    _Atomic uint64_t disk_bytes_written, disk_bytes_read;
    _Atomic uint64_t rmw_reads;
    _Atomic uint64_t queue_depth, queue_depth_max;
    _Atomic uint64_t merged_batches;
    _Atomic uint64_t merged_writers;
    _Atomic uint64_t staged_bytes, stage_whole, stage_partial, stage_rmw, stage_full_waits,
        stage_errors, stage_blocks;
    _Atomic uint64_t read_ahead_bytes;
    _Atomic uint64_t eager_replies, rndv_requests;
    _Atomic uint64_t flushes_behind;
    _Atomic uint64_t auth_ok, auth_refused, cap_refused;
    _Atomic uint64_t latency_hist[PS_STATS_HIST_BUCKETS];
} pss_stats_t;

#define PSS_STAT_ADD(_w, _field, _n)                                                               \
    atomic_store_explicit(&(_w)->stats._field,                                                     \
                          atomic_load_explicit(&(_w)->stats._field, memory_order_relaxed) +        \
                              (uint64_t)(_n),                                                      \
                          memory_order_relaxed)
#define PSS_STAT_SET(_w, _field, _v)                                                               \
    atomic_store_explicit(&(_w)->stats._field, (uint64_t)(_v), memory_order_relaxed)
#define PSS_STAT_GET(_w, _field) atomic_load_explicit(&(_w)->stats._field, memory_order_relaxed)

/* ---- the process -------------------------------------------------------------- */

#define PSS_SIZE_XATTR "user.pstripe.size" /* an object's logical size, 8 bytes LE */
/* its writes answered before the disk that failed there (pss_object.c):
 * the count (8 bytes LE) and the last one's ps_status_t (4 bytes LE) */
#define PSS_FAILED_XATTR "user.pstripe.failed"

typedef struct pss_worker pss_worker_t;
struct pss_span_io; /* one disk I/O of a job (pss_jobdef.h) */

typedef struct pss_server {
    pss_config_t cfg;
    uint64_t server_id;
    uint64_t start_ns;
    uint32_t nworkers;
    pss_worker_t **workers;
    uint32_t *ports;     /* TCP port of each worker */
    uint32_t *shm_ports; /* loopback port of each worker's shared-memory listener, or 0s */
    ps_shm_id_t shm_id;  /* with shm: told to clients in HELLO (pss_admin.c) */
    char listen_host[256];
    uint16_t listen_port;

    /* storage */
    int obj_dir_fd;             /* DIR/obj */
    int removed_dir_fd;         /* DIR/removed (pss_removed.c) */
    int direct_io;              /* objects opened with O_DIRECT */
    uint32_t align;             /* disk I/O offsets and lengths, and object file lengths,
                                   are multiples of this: the file system block (at least
                                   the O_DIRECT alignment; see pss_probe.c) */
    uint32_t mem_align;         /* buffer alignment for disk I/O, bytes */
    uint64_t max_file;          /* the largest file the object directory's file system
                                   holds, a multiple of align (pss_probe.c): ext4 with 4 KiB
                                   blocks, 16 TiB - 4 KiB */
    char *data_dir;             /* absolute */
    size_t max_open_per_worker; /* object files a worker keeps open */
    size_t max_conns_per_worker; /* connections a worker accepts (pss_conn.c) */
    uint64_t instance;          /* random, new at every start: clients see a restart */

    /* authentication (pss_auth.c), read-only once started */
    uint32_t auth_mode;     /* ps_auth_mode_t */
    uint8_t auth_key[4096]; /* the cluster key (auth = key), PS_KEY_MAX bytes */
    size_t auth_key_len;
    uint8_t ticket_secret[32]; /* MAC key of the tickets this run issues */
    int caps;                  /* capabilities issued and checked (auth != none) */
    uint8_t cap_key[32];       /* capability key (ps_cap.h), from auth_key_file */

    /* metadata */
    MDB_env *mdb_env;
    MDB_dbi mdb_paths;
    MDB_dbi mdb_marks;   /* names leaving for another server (pss_move.c) */
    MDB_dbi mdb_arrived; /* moves that arrived here, the old name not yet gone */
    MDB_dbi mdb_settled; /* moves given up, or arrived and departed (purged later) */
    MDB_dbi mdb_departed; /* file ids whose name here a move took away, numbered */
    MDB_dbi mdb_ids;      /* file id -> the key of its name (LOOKUP_ID) */
    _Atomic uint64_t meta_begun;   /* write transactions whose commit began (pss_txn_commit) */
    _Atomic uint64_t meta_commits; /* ... and ended */
    _Atomic uint64_t meta_synced;  /* the ended ones a full sync covered (pss_meta_sync) */
    size_t mdb_max_key;

    ucp_context_h ucp_context;
    hwloc_topology_t topology;  /* NULL if hwloc failed: workers are not pinned */
    hwloc_cpuset_t allowed;     /* our cpuset */
    uint32_t ncores_allowed;    /* cores in it */
    pthread_mutex_t start_lock; /* start-up handshake with the workers */
    pthread_cond_t start_cond;
    uint32_t nready;
    int go;
    atomic_int stopping; /* set by the signal thread */
    struct pss_cache_mem *cache_mem; /* the workers' cache memory (pss_cache.c), or NULL */
    struct pss_reaper *reaper;       /* closes removed object files (pss_reaper.c), or NULL */
} pss_server_t;

/* ---- requests ---------------------------------------------------------------- */

typedef struct pss_conn pss_conn_t;
typedef struct pss_object pss_object_t;
typedef struct pss_cgran pss_cgran_t;

#define PSS_AIO_BATCH 64 /* disk I/Os handed to the kernel in one io_submit */

/* A received request, from its arrival until its reply is sent. */
typedef struct pss_req {
    struct pss_req *next; /* incoming list / object queue */
    pss_worker_t *worker;
    pss_conn_t *conn; /* reply endpoint (refcounted) */
    uint64_t recv_ns;
    ps_msg_hdr_t hdr; /* copy of the header */
    union {
        uint8_t raw[PS_BODY_MAX]; /* with PS_IO_LIST_INLINE, the list after io */
        ps_hello_req_t hello;
        ps_create_req_t create;
        ps_path_req_t path;
        ps_rename_req_t rename;
        ps_list_req_t list;
        ps_io_req_t io;
        ps_obj_req_t obj;
        ps_sfp_req_t sfp;
        ps_auth_req_t auth;
        ps_setattr_req_t setattr;
        ps_ids_req_t ids;
        ps_move_req_t move;
        ps_id_req_t id;
    } body;
    ps_status_t status;     /* decode status; PS_OK when valid */
    int late;               /* arrived after the worker began to stop */
    int checked;            /* pss_auth_check passed, before memory and data */
    uint64_t mem_charged;   /* bytes counted in worker->mem_inflight */
    const char *bad_reason; /* for the log when status != PS_OK */

    /* AM data */
    void *data; /* the data bytes (held UCX data, own copy or rndv buffer) */
    const void *list; /* OBJ_READ/OBJ_WRITE: the region list (in data or body) */
    uint64_t lo, hi;  /* OBJ_READ/OBJ_WRITE: its regions' hull once asked (hi 0: not yet) */
    uint64_t data_len;
    void *ucx_data; /* held UCX eager data to release, or rndv descriptor */
    int ucx_rndv;   /* ucx_data is a rendezvous descriptor */
    uint64_t rndv_ns; /* its rendezvous receive started (0: none in progress) */
    struct pss_req *rndv_next, **rndv_pprev; /* the worker's receives in progress */
    void *own_buf;  /* malloc'd buffer to free (copy or rndv target) */
    size_t own_cap; /* its capacity for pss_buf_put (0: malloc'd) */

    /* OBJ_READ / OBJ_WRITE after checks */
    const uint8_t *payload;     /* write payload inside data */
    uint8_t *reply_buf;         /* read reply payload (aligned, pss_buf_get) */
    size_t reply_cap;           /* its capacity for pss_buf_put */
    pss_cgran_t *lent;          /* or reply_buf is cache memory lent to it (pss_cache_lend) */
} pss_req_t;

/* ---- worker ---------------------------------------------------------------- */

#define PSS_BUF_KEEP       64           /* buffers each worker keeps for reuse */
#define PSS_BUF_KEEP_BYTES (128u << 20) /* and their bytes at most */
#define PSS_BUF_POOL_MIN   (64u << 10)  /* smaller ones come from the heap */
#define PSS_BUF_HUGE_MIN   (256u << 10) /* larger ones are whole huge pages */
#define PSS_LOG_EVERY_NS   1000000000ull /* a repeating line: one a second at most */

struct pss_worker {
    pss_server_t *server;
    uint32_t index;
    pthread_t thread;
    int started;              /* thread created */
    ps_status_t start_status; /* PS_OK or error, reported through the barrier */
    int cpu;                  /* core index pinned to, -1 if not pinned */
    hwloc_cpuset_t cpuset;    /* where to pin, NULL: not pinned */

    ucp_worker_h ucp_worker;
    ucp_listener_h listener;
    ucp_listener_h shm_listener; /* with shm (pss_listen.c) */
    int epfd; /* epoll: ucp efd, aio eventfd, wake eventfd */
    int ucp_efd;
    int wake_fd;                     /* eventfd written by the main thread and the reaper */
    _Atomic(struct pss_late *) late; /* answers ready after the reaper's close (pss_store.c) */
    _Atomic(struct pss_fb *) fb_done; /* flushes the reaper finished (pss_flushbehind.c) */
    uint32_t fb_inflight;             /* flushes given to the reaper, not yet taken back */
    int stop_seen;

    /* connections accepted by this worker's listener */
    pss_conn_t **conns;
    size_t conns_cap, nconns;
    uint64_t conns_refused; /* connections refused at max_conns_per_worker */
    uint64_t conns_evicted; /* unauthenticated ones closed for room (pss_conn.c) */
    pss_conn_t *conn_last;  /* last looked-up connection */

    /* lines that repeat with every request, at most one a PSS_LOG_EVERY_NS */
    ps_log_limit_t refused_log;      /* connections refused */
    ps_log_limit_t auth_refused_log; /* unauthenticated requests, AUTHs refused */
    ps_log_limit_t reject_log;       /* malformed requests (pss_reject) */
    ps_log_limit_t cap_refused_log;  /* capabilities refused (realtime) */
    ps_log_limit_t io_error_log;     /* failed disk I/O (pss_job.c) */
    ps_log_limit_t data_wait_log;    /* rendezvous data given up (pss_worker.c) */

    /* requests decoded by the AM callback, processed after progress */
    pss_req_t *incoming_head, **incoming_tail;
    uint64_t inflight;                         /* requests received and not yet replied */
    uint64_t mem_inflight;                     /* bytes of buffers held by admitted requests */
    pss_req_t *mem_wait_head, **mem_wait_tail; /* requests waiting for memory */
    pss_req_t *rndv_head, **rndv_tail;         /* rendezvous receives in progress, oldest first */
    uint64_t rndv_given_up;                    /* connections closed for data past data_wait */
    uint64_t sends_inflight;                   /* reply sends not yet completed */
    struct pss_send *abandoned_sends;          /* pss_reply_abandon: sends UCX may still complete */
    uint64_t answered;      /* replies sent and disk I/Os completed, ever (pss_spin.c) */
    uint64_t spin_activity; /* pss_spin_more's view of the counters above */

    /* rendezvous receive buffers kept for reuse (pss_buf_get/put in pss_req.c) */
    struct {
        void *p;
        size_t cap;
    } bufs[PSS_BUF_KEEP];
    unsigned nbufs;
    size_t bufs_bytes;

    /* storage (pss_store.c, pss_aio.c, pss_job.c, pss_object.c) */
    io_context_t aio_ctx;
    void (*aio_done)(struct pss_worker *w, struct pss_span_io *sp, long res); /* pss_aio_init */
    int aio_efd;
    int aio_depth;
    int aio_inflight;
    struct pss_span_io *aio_wait_head, **aio_wait_tail; /* I/Os waiting for a slot */
    struct iocb *aio_batch[PSS_AIO_BATCH];              /* prepared, not yet submitted */
    int aio_nbatch;
    pss_object_t **objs;                                /* hash table by file_id, chained */
    size_t objs_cap, nobjs;
    pss_object_t *ready_head; /* objects with queued work to (re)consider */
    size_t nopen, max_open;   /* object files open, and the budget */
    struct pss_stage *stage;    /* write-back stage of partial blocks (pss_stage.c), or NULL */
    pss_object_t *swait_head;   /* objects whose writes wait for room in it (pss_store.c) */
    pss_object_t *grown_head;   /* objects whose size attribute is behind (pss_object.c) */
    int stage_tfd;              /* timerfd: the oldest staged block is due */
    int stage_timer;            /* stage_tfd was created */
    uint64_t stage_armed;       /* deadline stage_tfd is set to (ns, CLOCK_MONOTONIC), 0: none */
    struct pss_cache *cache;    /* bytes just written or read (pss_cache.c), or NULL */

    struct pss_sfp_table *sfp; /* shared file pointers (pss_sharedfp.c), NULL until used */

    pss_stats_t stats;
};

/* Wake w's loop from another thread (its wake eventfd). */
static inline void pss_worker_wake(pss_worker_t *w)
{
    uint64_t one = 1;

    if (w->wake_fd >= 0 && write(w->wake_fd, &one, sizeof(one)) < 0) {
        /* EAGAIN: the counter is huge, the worker is awake anyway */
    }
}

#endif

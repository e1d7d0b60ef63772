/*
 * psc_internal.h: the data structures of the client library (not
 * installed); each .c file declares its functions in its own header.
 *
 * Threads. A pstripe_fs_t owns one progress thread and one UCX worker
 * (UCS_THREAD_MODE_SERIALIZED). Whoever drives the worker owns it
 * (fs->owner, psc_owner_t): the progress thread while it runs its loop, or a
 * caller blocked in psc_call_wait (psc_wait.c), which then posts its own ops,
 * runs UCX progress and sleeps on the worker's event fd itself, so that a
 * blocking call costs one hop (caller -> server -> caller) instead of three
 * (caller -> progress thread -> server -> progress thread -> caller). The
 * progress thread sleeps in epoll on the worker's event fd and a wake eventfd
 * when it has nothing to do, giving the worker up (PSC_OWNER_NONE), so an
 * idle client costs no CPU; it is there for nonblocking requests, connection
 * errors and keepalive while no caller waits. API calls fill psc_op_t
 * messages (or other psc_cmd_t commands) and append them to fs->postq under
 * fs->lock; the owner drains the queue.
 *
 * Inside the progress thread, UCX callbacks (send/receive completions, AM
 * replies, endpoint errors) only record what happened and move finished ops
 * to fs->readyq or failed connections to fs->failq; the main loop then runs
 * completion handlers, which may send new messages (pipelining). Nothing is
 * ever sent or closed from inside a UCX callback.
 *
 * Life of an op: POSTED (fs->postq) -> WAITING (server->waitq, while the
 * server is being connected) -> INFLIGHT (conn->inflight, registered in the
 * req_id slot table, with a deadline) -> READY (fs->readyq, once the send
 * completed, the reply was processed and any rendezvous receive finished) ->
 * DONE (its done_cb ran, or its psc_call_t was updated). "Progress thread"
 * below and in the other files means whoever owns the worker.
 */
#ifndef PSC_INTERNAL_H
#define PSC_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include <ucp/api/ucp.h>
#include <ucs/datastruct/list.h>

#include "ps_layout.h"
#include "ps_proto.h"
#include "ps_status.h"
#include "psc_config.h"
#include "psc_error.h"
#include "pstripe.h"

#define PSC_BOUNCE_CACHE      64          /* idle staging buffers kept per connection, at most */
#define PSC_PIECE_CACHE       8           /* piece arrays kept for the next requests (psc_io.c) */
#define PSC_PIECE_CACHE_BYTES (32u << 20) /* and their bytes at most */

/* Who drives the UCX worker (fs->owner). */
typedef enum psc_owner {
    PSC_OWNER_NONE,   /* nobody: the progress thread sleeps in epoll */
    PSC_OWNER_THREAD, /* the progress thread runs its loop */
    PSC_OWNER_CALLER  /* a caller blocked in psc_call_wait drives it */
} psc_owner_t;

/* Where a caller waits for a group of ops. pending starts at 1 (the caller's
 * own hold, dropped by psc_call_wait) so that it cannot reach 0 while ops are
 * still being posted. Guarded by fs->lock. */
typedef struct psc_call {
    unsigned pending;
    int done;
    ps_status_t status;
    char msg[PSC_MSG_MAX];
} psc_call_t;

typedef struct psc_cmd psc_cmd_t;
typedef void (*psc_cmd_fn_t)(pstripe_fs_t *fs, psc_cmd_t *cmd);

/* Something to run on the progress thread. */
struct psc_cmd {
    ucs_list_link_t list;
    psc_cmd_fn_t fn;
};

typedef enum psc_route {
    PSC_ROUTE_ANY,   /* worker 0 */
    PSC_ROUTE_PATH,  /* ps_path_worker(route_path) */
    PSC_ROUTE_OBJECT /* ps_object_worker(route_file_id) */
} psc_route_t;

/* What a connect-only op (psc_op_t.connect_only) waits for. */
enum {
    PSC_CONNECT_SERVER = 1, /* the server's connection (HELLO, AUTH on worker 0) */
    PSC_CONNECT_WORKERS     /* and every worker's endpoint, ready for ops */
};

typedef enum psc_recv_mode {
    PSC_RECV_NONE, /* the reply carries no data */
    PSC_RECV_BUF,  /* exactly recv_len bytes into recv_buf (contig or IOV) */
    PSC_RECV_ALLOC /* any length up to recv_max, malloc'd into recv_alloc */
} psc_recv_mode_t;

typedef enum psc_op_state {
    PSC_OP_IDLE,
    PSC_OP_POSTED,
    PSC_OP_WAITING,
    PSC_OP_INFLIGHT,
    PSC_OP_READY,
    PSC_OP_DONE
} psc_op_state_t;

typedef struct psc_op psc_op_t;
typedef struct psc_conn psc_conn_t;
typedef void (*psc_op_cb_t)(pstripe_fs_t *fs, psc_op_t *op);

/* One request message and its reply. Filled by psc_op_init() and the caller,
 * then owned by the progress thread until done. */
struct psc_op {
    psc_cmd_t cmd;       /* must be first; cmd.list links every queue */
    psc_call_t *call;    /* updated when done (if done_cb is NULL) */
    psc_op_cb_t done_cb; /* else called on the progress thread */
    void *arg;           /* for done_cb */
    /* Library-owned ops only (batches): frees the op once it is done and UCX
     * holds no request of it. With it, an op whose connection failed may
     * complete before UCX has released its requests, provided these only
     * use library memory (send_user_mem == 0, a receive only into staged). */
    psc_op_cb_t release_cb;
    ucs_list_link_t detached_link; /* fs->detached_ops while UCX holds it after done */
    int send_user_mem; /* the send datatype points into caller memory */
    uint64_t eager_charge; /* write data sent eagerly, counted in conn->eager_out */
    int connect_only;      /* pseudo-op, PSC_CONNECT_*: completes once connected */
    uint32_t connect_max;  /* PSC_CONNECT_WORKERS: of servers with at most this many */

    /* destination */
    uint32_t server;
    psc_route_t route;
    const char *route_path;
    uint32_t route_path_len;
    uint64_t route_file_id;

    /* request: AM header (ps_msg_hdr_t + body) and AM data */
    uint16_t type;
    uint32_t hdr_len;
    union {
        ps_msg_hdr_t hdr;
        uint8_t bytes[sizeof(ps_msg_hdr_t) + PS_BODY_MAX];
    } h;
    const void *send_buf; /* contig bytes, or ucp_dt_iov_t array */
    size_t send_count;    /* bytes, or IOV entries */
    int send_iov;

    /* reply */
    void *rep_body; /* the fixed body is copied here */
    uint32_t rep_body_len;
    psc_recv_mode_t recv_mode;
    void *recv_buf;    /* PSC_RECV_BUF: bytes or ucp_dt_iov_t array */
    size_t recv_count; /* bytes, or IOV entries */
    int recv_iov;
    uint64_t recv_len; /* PSC_RECV_BUF: exact data length expected */
    uint64_t recv_max; /* PSC_RECV_ALLOC: longest accepted */
    void *recv_alloc;  /* PSC_RECV_ALLOC: result (caller frees) */
    uint64_t recv_alloc_len;
    uint64_t stage_min; /* PSC_RECV_BUF IOV: stage rendezvous data this big (0: never) */
    void *staged;       /* contiguous buffer a rendezvous reply is staged in */
    size_t staged_cap;  /* its allocated size */

    /* result */
    ps_status_t status;
    char msg[PSC_MSG_MAX];
    uint64_t instance; /* of the server that answered (its HELLO's), 0: no answer */

    /* progress-thread state */
    pstripe_fs_t *fs;
    psc_op_state_t state;
    uint64_t req_id; /* 0 when not in the slot table */
    psc_conn_t *conn;
    uint32_t worker;
    void *send_req;
    void *recv_req;
    int send_done;
    int reply_done;
    uint64_t deadline_ns;
    double timeout_s;
};

/* The AUTH that presents a connection's ticket to one worker (or renews it):
 * the op, the ticket it sends (a copy: the connection's may be renewed
 * meanwhile), the reply (a fresh ticket) and, for a worker, whether its
 * refused ticket waits for a renewal (1) or was presented again after one
 * (2). */
typedef struct psc_ticket {
    psc_op_t op;
    ps_auth_ticket_t sent;
    ps_auth_rep_t rep;
    int retry;
} psc_ticket_t;

/* One UCX endpoint to one worker of a server: made when an op is first
 * routed to that worker (worker 0's at connect); until the worker accepts
 * the connection's ticket such ops wait in waitq. */
typedef struct psc_ep {
    psc_conn_t *conn;
    uint32_t worker;
    ucp_ep_h ep;           /* NULL: not made yet */
    int ready;             /* ops may be sent on it */
    ucs_list_link_t waitq; /* ops waiting for ready */
} psc_ep_t;

/* One connection (set of endpoints) to a server. A new one is made when a
 * failed server is used again. Freed once failed, drained and closed. */
struct psc_conn {
    ucs_list_link_t list; /* fs->dead_conns once failed */
    struct psc_server *server;
    uint32_t nworkers;        /* 0 until HELLO answered */
    ucs_list_link_t inflight; /* ops sent on this connection */
    uint64_t eager_out;       /* their write data sent eagerly (psc_conn.c's credit) */
    int failed;
    int fail_pending; /* in fs->failq */
    ucs_list_link_t fail_link;
    ps_status_t fail_status;
    char fail_msg[PSC_MSG_MAX];
    /* ep close requests outstanding (UCX's, kept so that a stop whose
     * deadline passes can release them before destroying the worker) */
    void *closing[PS_MAX_WORKERS + 1];
    unsigned nclosing;
    psc_op_t hello;
    ps_hello_req_t hello_req;
    ps_hello_rep_t hello_rep;
    psc_ep_t eps[PS_MAX_WORKERS];
    /* shared memory: the server is on this host and offers it (psc_conn.c) */
    int shm;
    uint32_t shm_ports[PS_MAX_WORKERS]; /* each worker's shared-memory port, from HELLO */
    ucp_ep_h watch; /* with shm: the HELLO endpoint, kept for its peer-failure detection */
    /* authentication (psc_conn.c, psc_auth.c) */
    uint32_t ports[PS_MAX_WORKERS]; /* each worker's TCP port, from HELLO */
    ps_auth_req_t auth_req;
    ps_auth_rep_t auth_rep;
    void *auth_cred;      /* AUTH data on worker 0 (malloc'd) */
    psc_ticket_t *tickets; /* the ticket's AUTH to each worker but the HELLO's, and
                              [nworkers] its renewal (calloc'd; psc_conn.c) */
    int renewing;          /* the renewal is in flight */
};

typedef enum psc_server_state {
    PSC_SRV_DISCONNECTED,
    PSC_SRV_CONNECTING,
    PSC_SRV_CONNECTED,
    PSC_SRV_FAILED
} psc_server_state_t;

typedef struct psc_server {
    struct pstripe_fs *fs;
    uint32_t index;
    char *addr;                 /* "host:port" as configured (immutable) */
    struct sockaddr_storage sa; /* resolved address of worker 0 */
    socklen_t salen;
    int shm_maybe; /* cfg.shm and sa is this host's: its connection may use shared
                      memory, whose writes are staged (psc_batch.c) */
    /* progress thread only */
    psc_server_state_t state;
    psc_conn_t *conn;      /* CONNECTING or CONNECTED */
    ucs_list_link_t waitq; /* ops waiting for the connection */
    uint64_t server_id;
    uint32_t place, cluster_size; /* from the HELLO: index + 1 and the cluster's size (0 0:
                                     the server does not know; pstripe_gc needs them) */
    uint32_t block_size;
    uint64_t instance; /* the server's start, from the last HELLO (psc_conn.c) */
} psc_server_t;

struct pstripe_fs {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    psc_config_t cfg; /* guarded by lock */
    uint32_t nservers;
    psc_server_t *servers;

    /* posting (guarded by lock) */
    ucs_list_link_t postq;
    int wake_fd;       /* eventfd the progress thread sleeps on */
    int owner_wake_fd; /* eventfd a caller that owns the worker sleeps on */

    /* who drives the UCX worker (guarded by lock, see the top of this file) */
    psc_owner_t owner;
    unsigned nwaiters;  /* callers blocked in psc_call_wait */
    uint64_t spin_ns;   /* cfg.spin: progress this long before sleeping (set at start) */
    int ucp_fd_watched; /* ucp_fd is in the progress thread's epoll set */
    int ucp_fd_refused; /* the last try to put it back there failed (warned once) */
    int stop_requested; /* psc_progress_stop: callers may not take the worker */

    /* timeouts, read by the progress thread (atomic) */
    uint64_t timeout_ns;
    uint64_t connect_timeout_ns;

    /* progress thread */
    pthread_t thread;
    int thread_started;
    int thread_owns; /* the thread has the worker (thread only) */
    int epoll_fd;
    int ucp_fd;
    ucp_context_h ucp_context;
    ucp_worker_h ucp_worker;
    ucs_list_link_t readyq;
    ucs_list_link_t failq;
    ucs_list_link_t dead_conns;
    ucs_list_link_t detached_ops; /* done ops (with release_cb) UCX still holds */
    psc_op_t **slots; /* req_id low 32 bits -> op */
    uint32_t nslots;
    uint32_t *free_slots;
    uint32_t nfree;
    uint32_t slot_gen;
    uint64_t next_deadline_ns;
    int stopping;
    uint64_t stop_deadline_ns;
    int cleanup_poll_ms; /* sleep bound while endpoints are being closed */
    struct {
        void *buf;
        size_t size;
        uint64_t idle_since_ns;
    } bounce[PSC_BOUNCE_CACHE]; /* idle staging buffers (progress thread) */
    unsigned nbounce;
    /* when the sleeping thread's epoll_wait times out (UINT64_MAX: never;
     * 0: it is not asleep); guarded by lock (psc_wait_give moves it earlier
     * for staging buffers due) */
    uint64_t thread_wake_ns;

    /* piece arrays of finished requests, reused by the next ones (guarded by lock) */
    struct {
        void *p;
        size_t cap; /* pieces */
    } piece_cache[PSC_PIECE_CACHE];
    unsigned npiece_cache;
    size_t piece_cache_bytes; /* at most PSC_PIECE_CACHE_BYTES */
    uint64_t bounce_limit;    /* bytes of idle staging buffers kept (atomic) */
    psc_cmd_t stop_cmd;
    ps_status_t init_status; /* set by the thread at start, under lock */
    int init_done;
    char init_msg[PSC_MSG_MAX];
};

/*
 * What the servers' answers to a file's requests tell its later calls, set
 * on the progress thread as batches complete. Shared by the file and its
 * requests, which may outlive it (the driver settles a read-ahead after
 * pstripe_close): each holds a reference, the last one frees it.
 */
typedef struct psc_file_seen {
    unsigned refs;
    pthread_mutex_t lock;     /* over the three per-server records below (psc_seen.c) */
    uint64_t *wrote_instance; /* per server: the instance that first acknowledged this
                                 file's writes (truncates, preallocates) since the last
                                 fsync or close, 0: none */
    uint64_t *failed_mark;    /* per server: the lowest count of failed writes in its
                                 acknowledgements since (ps_io_rep_t.failed_writes) */
    uint64_t *answers;        /* per server: write acknowledgements ever (a check forgets
                                 its record only if none came while it asked) */
    uint8_t *read_disk;       /* per stripe target: did its last read batch come from
                                 the server's disk? (a hint: relaxed atomics) */
} psc_file_seen_t;

/* A file's, with one reference (NULL: no memory); take one more; drop one
 * (psc_seen.c, as the three below). */
psc_file_seen_t *psc_file_seen_new(uint32_t nservers, uint32_t ntargets);
psc_file_seen_t *psc_file_seen_hold(psc_file_seen_t *seen);
void psc_file_seen_drop(psc_file_seen_t *seen);
/* A write acknowledged by server s, then of instance `instance`, with the
 * object's count of failed writes `failed` (UINT64_MAX: a truncate or
 * preallocate, which a restart may undo but which fails no write). */
void psc_file_seen_wrote(psc_file_seen_t *seen, uint32_t s, uint64_t instance, uint64_t failed);
/* What an fsync or close asks server s about: the handle's record of it. */
typedef struct psc_asked {
    uint64_t instance; /* that first acknowledged a write since (0: none, nothing to ask) */
    uint64_t mark;     /* the lowest failed-write count of those acknowledgements */
    uint64_t answers;  /* seen->answers[s] then */
} psc_asked_t;
psc_asked_t psc_file_seen_ask(psc_file_seen_t *seen, uint32_t s);
/* The check answered for all that *asked covered: forget server s's
 * record, unless a write was acknowledged while the check asked. */
void psc_file_seen_checked(psc_file_seen_t *seen, uint32_t s, const psc_asked_t *asked);

struct pstripe_file {
    pstripe_fs_t *fs;
    char *path;
    size_t path_len;
    int flags;
    ps_file_info_t info;
    ps_cap_t cap;          /* from the open; renewed (psc_file_cap) under fs->lock */
    uint64_t cap_renew_ns; /* ps_time_ns() after which cap is renewed (0: never) */
    ps_layout_t layout;
    psc_io_opts_t opts; /* this file's batching (pstripe_file_set_option) */
    psc_file_seen_t *seen; /* what the servers' answers told */
    int gone;              /* a renewal of cap found the path removed or another file's
                              (under fs->lock): its refusals at close are moot */
};

#endif

/*
 * pss_main.c: pstripe-server, the storage daemon: command line, start-up,
 * signals and orderly shutdown.
 *
 * Start-up order: configuration (defaults < config file < PSTRIPE_* env <
 * command line, in that order), log, data directory and its lock, metadata
 * store, object store (alignment probe), UCX context, hwloc topology, then the
 * workers. Only when every worker listens is the address written to
 * --ready-fd, so a test or `pstripe local start` that read it can connect at
 * once. SIGTERM/SIGINT are taken synchronously by the main thread
 * (sigwaitinfo, the workers block them): it sets `stopping`, wakes every
 * worker, and joins them; each worker stops accepting, finishes its in-flight
 * requests and replies, fsyncs its objects and leaves. Then the metadata
 * store is synced and closed and the process exits 0.
 */
#include "config.h"
#include "pss.h"
#include "pss_auth.h"
#include "pss_cache.h"
#include "pss_check.h"
#include "pss_metadb.h"
#include "pss_reaper.h"
#include "pss_removed.h"
#include "pss_store.h"
#include "pss_worker.h"

#include "ps_log.h"
#include "ps_net.h"
#include "ps_time.h"

#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static void pss_usage(FILE *out)
{
    fprintf(out,
            "Usage: pstripe-server --data DIR [--listen ADDR:PORT] [--workers N]\n"
            "                      [--ready-fd N] [--config FILE] [--set name=value]...\n"
            "                      [--log-file FILE] [--log-level LEVEL] [--print-config]\n"
            "                      [--check] [--help]\n"
            "\n"
            "pstripe storage daemon. Serves the pstripe protocol over UCX on ADDR:PORT\n"
            "(worker 0; port 0 picks a free port) and one more port per extra worker.\n"
            "\n"
            "  --data DIR          data directory (meta/, obj/, lock); created if missing\n"
            "  --listen ADDR:PORT  address of worker 0 (default from the config: listen)\n"
            "  --workers N         worker threads (0: one per core of the cpuset)\n"
            "  --ready-fd N        write \"ADDR:PORT\\n\" to fd N once every worker listens\n"
            "  --config FILE       read the [server] section of FILE\n"
            "  --set name=value    set a tunable (see --print-config)\n"
            "  --log-file FILE     append the log to FILE (default: stderr)\n"
            "  --log-level LEVEL   error, warn, info, debug, trace\n"
            "  --print-config      print the effective configuration and exit\n"
            "  --check             check the data directory's metadata store (readable,\n"
            "                      not damaged, not missing beside objects) and exit:\n"
            "                      0 usable, 1 not (the server would refuse to start)\n"
            "  --help              this text\n");
}

/* Options that are settings; all others are handled in main(). */
static const struct {
    const char *opt;
    const char *key;
} pss_opt_keys[] = {{"--data", "data_dir"},         {"--listen", "listen"},
                    {"--workers", "workers"},       {"--log-file", "log_file"},
                    {"--log-level", "log_level"}};

typedef struct pss_args {
    const char *config_file;
    int ready_fd;
    int print_config;
    int check;
    /* settings in command-line order: "key=value" strings */
    char **sets;
    int nsets;
} pss_args_t;

static int pss_split_opt(int argc, char **argv, int *i, const char *name, const char **value)
{
    size_t n = strlen(name);
    const char *arg = argv[*i];

    if (strncmp(arg, name, n) != 0) {
        return 0;
    }
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0') {
        return 0;
    }
    if (*i + 1 >= argc) {
        fprintf(stderr, "pstripe-server: %s needs a value\n", name);
        exit(2);
    }
    *value = argv[++*i];
    return 1;
}

static void pss_parse_args(int argc, char **argv, pss_args_t *args)
{
    memset(args, 0, sizeof(*args));
    args->ready_fd = -1;
    args->sets = calloc((size_t)argc + 1, sizeof(char *));
    if (args->sets == NULL) {
        fprintf(stderr, "pstripe-server: out of memory\n");
        exit(1);
    }
    for (int i = 1; i < argc; i++) {
        const char *v;
        int matched = 0;

        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            pss_usage(stdout);
            exit(0);
        }
        if (strcmp(argv[i], "--print-config") == 0) {
            args->print_config = 1;
            continue;
        }
        if (strcmp(argv[i], "--check") == 0) {
            args->check = 1;
            continue;
        }
        if (pss_split_opt(argc, argv, &i, "--config", &v)) {
            args->config_file = v;
            continue;
        }
        if (pss_split_opt(argc, argv, &i, "--ready-fd", &v)) {
            char *end;
            long fd = strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || fd < 0 || fd > INT_MAX) {
                fprintf(stderr, "pstripe-server: --ready-fd: '%s' is not a file descriptor\n",
                        v);
                exit(2);
            }
            args->ready_fd = (int)fd;
            continue;
        }
        if (pss_split_opt(argc, argv, &i, "--set", &v)) {
            if (strchr(v, '=') == NULL) {
                fprintf(stderr, "pstripe-server: --set %s: expected name=value\n", v);
                exit(2);
            }
            args->sets[args->nsets++] = strdup(v);
            continue;
        }
        for (size_t k = 0; k < sizeof(pss_opt_keys) / sizeof(pss_opt_keys[0]); k++) {
            if (pss_split_opt(argc, argv, &i, pss_opt_keys[k].opt, &v)) {
                size_t len = strlen(pss_opt_keys[k].key) + strlen(v) + 2;
                char *kv = malloc(len);
                if (kv == NULL) {
                    exit(1);
                }
                snprintf(kv, len, "%s=%s", pss_opt_keys[k].key, v);
                args->sets[args->nsets++] = kv;
                matched = 1;
                break;
            }
        }
        if (!matched) {
            fprintf(stderr, "pstripe-server: unknown argument '%s' (see --help)\n", argv[i]);
            exit(2);
        }
    }
}

static ps_status_t pss_load_config(pss_server_t *s, const pss_args_t *args)
{
    char err[512];
    ps_status_t status;

    status = ps_config_set_defaults(pss_config_table, &s->cfg);
    if (status != PS_OK) {
        fprintf(stderr, "pstripe-server: bad built-in defaults\n");
        return status;
    }
    if (args->config_file != NULL) {
        err[0] = '\0';
        status = ps_config_load_file(pss_config_table, &s->cfg, args->config_file, "server", err,
                                     sizeof(err));
        if (status != PS_OK) {
            fprintf(stderr, "pstripe-server: config file %s: %s\n", args->config_file,
                    err[0] ? err : ps_status_string(status));
            return status;
        }
    }
    err[0] = '\0';
    status = ps_config_load_env(pss_config_table, &s->cfg, err, sizeof(err));
    if (status != PS_OK) {
        fprintf(stderr, "pstripe-server: environment: %s\n",
                err[0] ? err : ps_status_string(status));
        return status;
    }
    for (int i = 0; i < args->nsets; i++) {
        char *kv = args->sets[i];
        char *eq = strchr(kv, '=');
        *eq = '\0';
        err[0] = '\0';
        status = ps_config_set(pss_config_table, &s->cfg, kv, eq + 1, err, sizeof(err));
        *eq = '=';
        if (status != PS_OK) {
            fprintf(stderr, "pstripe-server: %s\n", err[0] ? err : ps_status_string(status));
            return status;
        }
    }
    return PS_OK;
}

/* "host:port", "[v6]:port" or ":port" -> host (may be empty) and port. */
static ps_status_t pss_parse_listen(pss_server_t *s, const char *listen)
{
    const char *colon;
    size_t hlen;
    char *end;
    long port;

    if (listen[0] == '[') {
        const char *close_b = strchr(listen, ']');
        if (close_b == NULL || close_b[1] != ':') {
            return PS_ERR_INVALID;
        }
        hlen = (size_t)(close_b - listen - 1);
        if (hlen >= sizeof(s->listen_host)) {
            return PS_ERR_INVALID;
        }
        memcpy(s->listen_host, listen + 1, hlen);
        s->listen_host[hlen] = '\0';
        colon = close_b + 1;
    } else {
        colon = strrchr(listen, ':');
        if (colon == NULL) {
            return PS_ERR_INVALID;
        }
        hlen = (size_t)(colon - listen);
        if (hlen >= sizeof(s->listen_host)) {
            return PS_ERR_INVALID;
        }
        memcpy(s->listen_host, listen, hlen);
        s->listen_host[hlen] = '\0';
    }
    port = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || port < 0 || port > 65535) {
        return PS_ERR_INVALID;
    }
    s->listen_port = (uint16_t)port;
    return PS_OK;
}

static ps_status_t pss_lock_data_dir(pss_server_t *s, int *lock_fd)
{
    char path[PATH_MAX];
    int fd;

    snprintf(path, sizeof(path), "%s/lock", s->data_dir);
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        ps_error("open %s: %m", path);
        return ps_status_from_errno(errno);
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) {
            ps_error("data directory %s is in use by another pstripe-server (%s is locked)",
                     s->data_dir, path);
        } else {
            ps_error("flock %s: %m", path);
        }
        close(fd);
        return PS_ERR_BUSY;
    }
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        ps_warn("write pid to %s: %m", path);
    }
    *lock_fd = fd;
    return PS_OK;
}

/* Count the cores of our cpuset and give each worker one (round robin). */
static uint32_t pss_topology_init(pss_server_t *s)
{
    hwloc_topology_t topo;
    hwloc_cpuset_t allowed;
    int ncores = 0;

    if (hwloc_topology_init(&topo) != 0) {
        ps_warn("hwloc_topology_init failed: workers are not pinned");
        return 1;
    }
    if (hwloc_topology_load(topo) != 0) {
        ps_warn("hwloc_topology_load: %m; workers are not pinned");
        hwloc_topology_destroy(topo);
        return 1;
    }
    allowed = hwloc_bitmap_alloc();
    if (allowed == NULL || hwloc_get_cpubind(topo, allowed, HWLOC_CPUBIND_PROCESS) != 0) {
        hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(topo));
    }
    int depth = hwloc_get_type_or_below_depth(topo, HWLOC_OBJ_CORE);
    int nobjs = hwloc_get_nbobjs_by_depth(topo, (unsigned)depth);
    for (int i = 0; i < nobjs; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_depth(topo, (unsigned)depth, (unsigned)i);
        if (hwloc_bitmap_intersects(core->cpuset, allowed)) {
            ncores++;
        }
    }
    s->topology = topo;
    s->ncores_allowed = ncores > 0 ? (uint32_t)ncores : 1;
    s->allowed = allowed;
    return s->ncores_allowed;
}

/*
 * Worker i takes core (i + server_index) mod cores. A file's object has
 * the same worker index on every server (ps_object_worker), so servers
 * sharing a machine (pstripe local, run-matrix) would otherwise all serve
 * one file from the same core while the others idle: both servers' busy
 * workers at half a core each on core 1 during a 2-process large read
 * (per-thread CPU from /proc), core 0 idle.
 */
static void pss_topology_assign(pss_server_t *s, pss_worker_t *w)
{
    hwloc_topology_t topo = s->topology;
    uint32_t first = s->cfg.server_index > 0 ? (uint32_t)s->cfg.server_index : 0;
    int depth, nobjs, k = 0;

    w->cpu = -1;
    w->cpuset = NULL;
    if (topo == NULL) {
        return;
    }
    depth = hwloc_get_type_or_below_depth(topo, HWLOC_OBJ_CORE);
    nobjs = hwloc_get_nbobjs_by_depth(topo, (unsigned)depth);
    for (int i = 0; i < nobjs; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_depth(topo, (unsigned)depth, (unsigned)i);
        if (!hwloc_bitmap_intersects(core->cpuset, s->allowed)) {
            continue;
        }
        if ((uint32_t)k == (w->index + first) % s->ncores_allowed) {
            w->cpuset = hwloc_bitmap_alloc();
            if (w->cpuset != NULL) {
                hwloc_bitmap_and(w->cpuset, core->cpuset, s->allowed);
                w->cpu = (int)core->logical_index;
            }
            return;
        }
        k++;
    }
}

static ps_status_t pss_make_data_dir(pss_server_t *s)
{
    char abs[PATH_MAX];

    if (s->cfg.data_dir == NULL || s->cfg.data_dir[0] == '\0') {
        fprintf(stderr, "pstripe-server: no data directory (--data DIR)\n");
        ps_error("no data directory (--data DIR)");
        return PS_ERR_INVALID;
    }
    if (mkdir(s->cfg.data_dir, 0700) != 0 && errno != EEXIST) {
        ps_error("mkdir %s: %m", s->cfg.data_dir);
        return ps_status_from_errno(errno);
    }
    if (realpath(s->cfg.data_dir, abs) == NULL) {
        ps_error("realpath %s: %m", s->cfg.data_dir);
        return ps_status_from_errno(errno);
    }
    struct stat st;
    if (stat(abs, &st) != 0 || !S_ISDIR(st.st_mode)) {
        ps_error("data directory %s is not a directory", abs);
        return PS_ERR_INVALID;
    }
    /* The objects hold every user's bytes, whatever their modes say: no
     * one but the server may look (a directory made by an older server, or
     * by hand, may let others in). */
    if ((st.st_mode & 077) != 0) {
        if (chmod(abs, 0700) != 0) {
            ps_error("chmod 0700 %s (mode 0%o lets other users read the files' data): %m", abs,
                     st.st_mode & 0777);
            return ps_status_from_errno(errno);
        }
        ps_info("data directory %s was mode 0%o, now 0700: only the server reads its files", abs,
                st.st_mode & 0777);
    }
    s->data_dir = strdup(abs);
    return s->data_dir ? PS_OK : PS_ERR_NO_MEMORY;
}

static ps_status_t pss_ucx_init(pss_server_t *s)
{
    ucp_params_t params;
    ucp_config_t *config;
    ucs_status_t status;

    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        ps_error("ucp_config_read: %s", ucs_status_string(status));
        return PS_ERR_CONN;
    }
    /* A restarted server listens on its old port (clients have it in their
     * configuration) while connections of the killed one may still sit in
     * TIME_WAIT: listen with SO_REUSEADDR, as TCP servers do. A port that a
     * live listener holds is still refused. */
    if (getenv("UCX_CM_REUSEADDR") == NULL && getenv("UCX_TCP_CM_REUSEADDR") == NULL) {
        status = ucp_config_modify(config, "CM_REUSEADDR", "y");
        if (status != UCS_OK) {
            ps_warn("UCX: cannot set CM_REUSEADDR (%s); a restart on the same port may have to "
                    "wait for old connections to time out",
                    ucs_status_string(status));
        }
    }
    /* No shared-memory FIFOs (UCX's mm: posix, sysv, xpmem): a FIFO is
     * shared by all of a worker's peers, and a client killed while
     * it wrote an entry stopped the worker's receipt from every other
     * client (test_client_fault's ShmClientKilledMidWrite after the other
     * tests of its set, 3 runs of 3). Clients of this host (shm) move their
     * messages by TCP and large data by cma, one process_vm_readv of the
     * peer's memory per rendezvous, which leaves nothing shared behind. */
    if (getenv("UCX_TLS") == NULL && ucp_config_modify(config, "TLS", PSS_UCX_TLS) != UCS_OK) {
        ps_warn("UCX: cannot set TLS=%s", PSS_UCX_TLS);
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                        UCP_PARAM_FIELD_NAME;
    params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 1;
    params.name = "pstripe-server";
    status = ucp_init(&params, config, &s->ucp_context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        ps_error("ucp_init: %s", ucs_status_string(status));
        return PS_ERR_CONN;
    }
    return PS_OK;
}

/*
 * Raise the soft descriptor limit to the hard one and split the object
 * budget (max_open, lowered to what the limit allows after sockets, aio and
 * epoll descriptors) between the workers.
 */
#define PSS_FDS_PER_CONN 4   /* descriptors a UCX TCP connection may hold */
#define PSS_FDS_RESERVED 128 /* listeners, epoll, eventfds, aio, LMDB, logs */

static void pss_fd_budget(pss_server_t *s)
{
    struct rlimit rl;
    uint64_t avail = 1024;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
                ps_warn("setrlimit RLIMIT_NOFILE to %llu: %m", (unsigned long long)rl.rlim_max);
                getrlimit(RLIMIT_NOFILE, &rl);
            }
        }
        avail = rl.rlim_cur == RLIM_INFINITY ? (1u << 24) : (uint64_t)rl.rlim_cur;
    }
    /* half for objects, half for connections (a UCX TCP connection holds up
     * to PSS_FDS_PER_CONN descriptors) and everything else (PSS_FDS_RESERVED):
     * a worker that ran out of descriptors could not accept connections again
     * even after a flood of them ended, so it refuses beyond its share. */
    uint64_t budget = avail / 2;
    if ((uint64_t)s->cfg.max_open < budget) {
        budget = (uint64_t)s->cfg.max_open;
    }
    s->max_open_per_worker = (size_t)(budget / s->nworkers);
    if (s->max_open_per_worker < 4) {
        s->max_open_per_worker = 4;
    }
    uint64_t conn_fds = avail - avail / 2;
    conn_fds = conn_fds > PSS_FDS_RESERVED ? conn_fds - PSS_FDS_RESERVED : 0;
    uint64_t conns = conn_fds / PSS_FDS_PER_CONN / s->nworkers;
    if (conns < 4) {
        conns = 4;
    }
    if ((uint64_t)s->cfg.max_connections < conns) {
        conns = (uint64_t)s->cfg.max_connections;
    }
    s->max_conns_per_worker = (size_t)conns;
    ps_info("descriptor limit %llu: up to %zu open objects and %zu connections per worker",
            (unsigned long long)avail, s->max_open_per_worker, s->max_conns_per_worker);
}

static void pss_write_ready(pss_server_t *s, int fd)
{
    char line[300];
    const char *host = s->listen_host[0] ? s->listen_host : "0.0.0.0";
    int n;

    if (strchr(host, ':') != NULL) {
        n = snprintf(line, sizeof(line), "[%s]:%u\n", host, s->ports[0]);
    } else {
        n = snprintf(line, sizeof(line), "%s:%u\n", host, s->ports[0]);
    }
    if (fd >= 0) {
        if (write(fd, line, (size_t)n) != n) {
            ps_error("write the address to --ready-fd %d: %m", fd);
        }
        close(fd);
    }
    ps_info("pstripe-server %s ready on %.*s with %u workers, data %s (pid %d)", PACKAGE_VERSION,
            n - 1, line, s->nworkers, s->data_dir, (int)getpid());
}

static void pss_free_args(pss_args_t *args)
{
    for (int i = 0; i < args->nsets; i++) {
        free(args->sets[i]);
    }
    free(args->sets);
    args->sets = NULL;
    args->nsets = 0;
}

static void pss_server_init(pss_server_t *s)
{
    memset(s, 0, sizeof(*s));
    s->obj_dir_fd = -1;
    s->removed_dir_fd = -1;
    s->start_ns = ps_time_ns();
    if (getrandom(&s->instance, sizeof(s->instance), 0) != (ssize_t)sizeof(s->instance)) {
        s->instance = s->start_ns ^ ((uint64_t)getpid() << 40); /* still new at each start */
    }
    pthread_mutex_init(&s->start_lock, NULL);
    pthread_cond_init(&s->start_cond, NULL);
}

/* Log level and file from the configuration, and the listen address. */
static ps_status_t pss_start_log(pss_server_t *s)
{
    ps_log_set_level((ps_log_level_t)s->cfg.log_level);
    if (s->cfg.log_file != NULL && s->cfg.log_file[0] != '\0') {
        if (ps_log_open(s->cfg.log_file) != PS_OK) {
            fprintf(stderr, "pstripe-server: open log file %s: %s\n", s->cfg.log_file,
                    strerror(errno));
            return PS_ERR_INVALID;
        }
    }
    if (pss_parse_listen(s, s->cfg.listen) != PS_OK) {
        ps_error("listen: '%s' is not ADDR:PORT", s->cfg.listen);
        fprintf(stderr, "pstripe-server: listen: '%s' is not ADDR:PORT\n", s->cfg.listen);
        return PS_ERR_INVALID;
    }
    return PS_OK;
}

/* Signals: blocked in every thread, taken by pss_wait_for_signal(). */
static void pss_block_signals(sigset_t *sigs)
{
    sigemptyset(sigs);
    sigaddset(sigs, SIGTERM);
    sigaddset(sigs, SIGINT);
    sigaddset(sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static void pss_wait_for_signal(pss_server_t *s, const sigset_t *sigs)
{
    uint64_t interval = pss_removed_prune_interval(s) * 1000000000ull;
    uint64_t prune_at = ps_time_ns() + interval;

    for (;;) {
        siginfo_t si;
        uint64_t now = ps_time_ns(), left = prune_at > now ? prune_at - now : 0;
        struct timespec ts = {.tv_sec = (time_t)(left / 1000000000ull),
                              .tv_nsec = (long)(left % 1000000000ull)};
        int sig = sigtimedwait(sigs, &si, &ts);
        if (sig < 0) {
            if (ps_time_ns() >= prune_at) {
                pss_removed_prune(s); /* the main thread's only periodic work */
                prune_at = ps_time_ns() + interval;
            }
            continue; /* EAGAIN (time) or EINTR */
        }
        if (sig == SIGTERM || sig == SIGINT) {
            ps_info("signal %d (%s) from pid %d: shutting down", sig, strsignal(sig),
                    (int)si.si_pid);
            return;
        }
        if (sig == SIGHUP) {
            ps_info("SIGHUP ignored");
        }
    }
}

/* --check: what the data directory holds, and whether the server would
 * start on it. Exit status 0 or 1. */
static int pss_check_main(pss_server_t *s)
{
    pss_meta_report_t rep;
    ps_status_t status;
    struct stat st;

    if (s->cfg.data_dir == NULL || stat(s->cfg.data_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "pstripe-server --check: no data directory %s\n",
                s->cfg.data_dir ? s->cfg.data_dir : "(--data DIR)");
        return 1;
    }
    status = pss_meta_check(s->cfg.data_dir, &rep);
    if (status != PS_OK) {
        fprintf(stderr, "pstripe-server --check: %s\n", ps_status_string(status));
        return 1;
    }
    printf("data directory   %s\n", s->cfg.data_dir);
    printf("metadata store   meta/data.mdb %s\n", rep.store_found ? "found" : "missing or empty");
    printf("namespace        %llu paths, %llu damaged entries, server id %s\n",
           (unsigned long long)rep.paths, (unsigned long long)rep.bad_entries,
           rep.has_server_id ? "present" : "absent");
    printf("objects          %llu in obj/\n", (unsigned long long)rep.objects);
    if (rep.problem[0] != '\0') {
        printf("NOT USABLE       %s\n", rep.problem);
        return 1;
    }
    printf("usable\n");
    return 0;
}

/* The data directory, its lock, the metadata store and the object store. */
static ps_status_t pss_open_storage(pss_server_t *s, int *lock_fd)
{
    ps_status_t status;

    status = pss_make_data_dir(s);
    if (status != PS_OK) {
        return status;
    }
    status = pss_lock_data_dir(s, lock_fd);
    if (status != PS_OK) {
        return status;
    }
    status = pss_meta_open(s);
    if (status != PS_OK) {
        goto err_unlock;
    }
    status = pss_store_init(s);
    if (status == PS_OK) {
        status = pss_removed_init(s);
    }
    if (status != PS_OK) {
        goto err_close_meta;
    }
    return PS_OK;

err_close_meta:
    pss_removed_close(s);
    pss_meta_close(s);
err_unlock:
    close(*lock_fd);
    *lock_fd = -1;
    return status;
}

static void pss_close_storage(pss_server_t *s, int lock_fd)
{
    if (s->obj_dir_fd >= 0) {
        close(s->obj_dir_fd);
    }
    pss_removed_close(s);
    pss_meta_close(s);
    close(lock_fd);
}

/* Decide the number of workers and allocate them, each given its core
 * (pin = core) or none (pin = none). */
static ps_status_t pss_workers_create(pss_server_t *s)
{
    uint32_t ncores = pss_topology_init(s);
    int pin = strcmp(s->cfg.pin, "core") == 0;

    if (!pin && strcmp(s->cfg.pin, "none") != 0) {
        ps_error("pin: '%s' is not core or none", s->cfg.pin);
        return PS_ERR_INVALID;
    }
    if (!pin) {
        ps_info("workers are not pinned (pin = none)");
    }

    s->nworkers = s->cfg.workers > 0 ? (uint32_t)s->cfg.workers : ncores;
    if (s->nworkers > PS_MAX_WORKERS) {
        s->nworkers = PS_MAX_WORKERS;
    }
    pss_fd_budget(s);
    if (s->cfg.shm && s->auth_mode == PS_AUTH_NONE) {
        ps_warn("shm: shared-memory connections serve only the servers' own user, which auth = "
                "none cannot tell: no shared memory");
        s->cfg.shm = 0;
    }
    if (s->cfg.shm && ps_shm_id(&s->shm_id) != 0) {
        ps_warn("shm: cannot read this host's boot id or network namespace: no shared memory");
        s->cfg.shm = 0;
    }
    s->ports = calloc(s->nworkers, sizeof(*s->ports));
    s->shm_ports = calloc(s->nworkers, sizeof(*s->shm_ports));
    s->workers = calloc(s->nworkers, sizeof(*s->workers));
    if (s->ports == NULL || s->shm_ports == NULL || s->workers == NULL) {
        ps_error("out of memory for %u workers", s->nworkers);
        return PS_ERR_NO_MEMORY;
    }
    if (pss_cache_mem_init(&s->cache_mem, s->cfg.cache, s->nworkers) != PS_OK) {
        ps_error("no address space for a cache of %llu bytes", (unsigned long long)s->cfg.cache);
        return PS_ERR_NO_MEMORY;
    }
    for (uint32_t i = 0; i < s->nworkers; i++) {
        pss_worker_t *w = calloc(1, sizeof(*w));
        if (w == NULL) {
            ps_error("out of memory for worker %u", i);
            return PS_ERR_NO_MEMORY;
        }
        w->server = s;
        w->index = i;
        w->epfd = w->wake_fd = w->aio_efd = w->ucp_efd = -1;
        w->incoming_tail = &w->incoming_head;
        w->mem_wait_tail = &w->mem_wait_head;
        w->rndv_tail = &w->rndv_head;
        w->cpu = -1;
        if (pin) {
            pss_topology_assign(s, w);
        }
        s->workers[i] = w;
    }
    return PS_OK;
}

/* Free what pss_workers_create allocated (any part of it) and the topology. */
static void pss_workers_free(pss_server_t *s)
{
    for (uint32_t i = 0; i < s->nworkers && s->workers != NULL; i++) {
        if (s->workers[i] != NULL) {
            if (s->workers[i]->cpuset != NULL) {
                hwloc_bitmap_free(s->workers[i]->cpuset);
            }
            free(s->workers[i]);
        }
    }
    free(s->workers);
    free(s->ports);
    free(s->shm_ports);
    pss_cache_mem_free(s->cache_mem);
    s->cache_mem = NULL;
    if (s->topology != NULL) {
        hwloc_bitmap_free(s->allowed);
        hwloc_topology_destroy(s->topology);
    }
}

/* Start the workers, tell --ready-fd, serve until SIGTERM/SIGINT, stop. */
static ps_status_t pss_serve(pss_server_t *s, const sigset_t *sigs, int ready_fd)
{
    ps_status_t status;

    pss_reaper_start(&s->reaper); /* without it, removals close on the worker */
    status = pss_worker_start_all(s);
    if (status != PS_OK) {
        ps_error("start-up failed: %s", ps_status_string(status));
        pss_worker_join_all(s);
        pss_reaper_stop(s->reaper);
        return status;
    }
    pss_cache_warm_start(s->cache_mem);
    pss_write_ready(s, ready_fd);
    pss_wait_for_signal(s, sigs);
    atomic_store(&s->stopping, 1);
    pss_cache_warm_stop(s->cache_mem);
    pss_worker_join_all(s);
    pss_reaper_stop(s->reaper); /* the space of the last removals comes back */
    s->reaper = NULL;
    return PS_OK;
}

static void pss_report_exit(pss_server_t *s, int exit_code, int ready_fd)
{
    if (exit_code == 0) {
        ps_info("stopped cleanly");
        return;
    }
    if (s->cfg.log_file != NULL && s->cfg.log_file[0] != '\0') {
        fprintf(stderr, "pstripe-server: start-up failed; the cause is in %s\n", s->cfg.log_file);
    }
    if (ready_fd >= 0) {
        close(ready_fd); /* the waiting parent sees EOF at once */
    }
}

int main(int argc, char **argv)
{
    pss_server_t server, *s = &server;
    pss_args_t args;
    sigset_t sigs;
    ps_status_t status;
    int lock_fd = -1;
    int exit_code = 1;

    /*
     * Request and reply buffers are up to max_batch bytes, allocated and
     * freed per request. Above glibc's default mmap threshold each one was a
     * fresh mmap: every page faulted in (and zeroed by the kernel) on first
     * touch, then unmapped again, which cost more CPU than moving the data.
     * Keep them in the (per-thread) heaps instead, and the heaps untrimmed,
     * so freed buffers are reused.
     */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);

    pss_server_init(s);
    ps_log_set_component("server");
    pss_parse_args(argc, argv, &args);
    status = pss_load_config(s, &args);
    if (status != PS_OK || args.print_config) {
        if (status == PS_OK) {
            ps_config_print(pss_config_table, &s->cfg, "server", stdout);
        }
        ps_config_release(pss_config_table, &s->cfg);
        pss_free_args(&args);
        return status == PS_OK ? 0 : 2;
    }
    if (args.check) {
        exit_code = pss_check_main(s);
        ps_config_release(pss_config_table, &s->cfg);
        pss_free_args(&args);
        return exit_code;
    }
    if (pss_start_log(s) != PS_OK) {
        goto out;
    }
    pss_block_signals(&sigs); /* before any thread starts (UCX has its own) */
    if (pss_open_storage(s, &lock_fd) != PS_OK) {
        goto out;
    }
    if (pss_auth_init(s) != PS_OK || pss_ucx_init(s) != PS_OK) {
        goto err_close_storage;
    }
    if (pss_workers_create(s) == PS_OK && pss_serve(s, &sigs, args.ready_fd) == PS_OK) {
        exit_code = 0;
    }
    pss_workers_free(s);
    ucp_cleanup(s->ucp_context);
err_close_storage:
    pss_close_storage(s, lock_fd);
out:
    pss_report_exit(s, exit_code, args.ready_fd);
    free(s->data_dir);
    ps_config_release(pss_config_table, &s->cfg);
    pss_free_args(&args);
    return exit_code;
}

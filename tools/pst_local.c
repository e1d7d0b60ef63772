/*
 * pst_local.c: `pstripe local start|stop|status --dir DIR`, a cluster of
 * pstripe-server daemons on 127.0.0.1 whose whole state lives in DIR:
 *
 *   DIR/server<i>/     data directory of server i (meta/, obj/, lock)
 *   DIR/server<i>.log  its stdout, stderr and log lines (appended)
 *   DIR/server<i>.pid  its pid
 *   DIR/client.conf    [client] servers = the addresses, in index order
 *
 * This file holds the commands: options, the cluster directory, pid files
 * and client.conf. Starting, watching and stopping the daemon processes is in
 * pst_local_proc.c (ready pipes, pidfds, the checks against stale pids).
 *
 * A cluster's identity is its order: layouts name servers by index, so server
 * i always gets DIR/server<i>/ and the i-th place in client.conf. A start on
 * the same DIR keeps the number of servers and their data directories; after
 * a stop the ports change (client.conf is rewritten), servers that died come
 * back on their addresses.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pst_local.h"

#define PST_LOCAL_NSERVERS_DFL      4
#define PST_LOCAL_START_TIMEOUT_DFL 60.0 /* seconds */

enum {
    PST_LOCAL_OPT_DIR = PST_OPT_FIRST_LOCAL,
    PST_LOCAL_OPT_WORKERS,
    PST_LOCAL_OPT_SET,
    PST_LOCAL_OPT_TIMEOUT,
    PST_LOCAL_OPT_AUTH
};

static const pst_cmd_t pst_local_cmds[] = {
    {"start", NULL,
     "--dir DIR [-n N] [--workers W] [--auth MODE] [--set NAME=VALUE]... [--timeout SECS]",
     "start daemons",
     "Start N pstripe-server daemons on 127.0.0.1 (free ports outside the ephemeral range),\n"
     "with data in DIR/server<i>/, logs in DIR/server<i>.log and pids in\n"
     "DIR/server<i>.pid, and write DIR/client.conf listing them in index order.\n"
     "Starting again on the same DIR reuses the same data directories in the same\n"
     "order. The server binary is $PSTRIPE_SERVER, else the build tree's\n"
     "server/pstripe-server next to this tool, else the installed one.\n"
     "\n"
     "      --dir DIR          cluster directory (created if missing)\n"
     "  -n, --servers-count N  number of daemons (default 4, or as many as DIR has)\n"
     "      --workers W        workers per daemon (default: one per core)\n"
     "      --auth MODE        how clients prove who they are: key (default: a cluster\n"
     "                         key DIR/auth.key, mode 0600, made once), munge (a private\n"
     "                         munged on DIR/munge/sock, started here; needs root) or\n"
     "                         none (no authentication); client.conf says which\n"
     "      --set NAME=VALUE   server tunable, passed to every daemon (repeatable)\n"
     "      --timeout SECS     how long to wait for the daemons to listen (default 60)\n"
     "  -h, --help             show this help\n"},
    {"stop", NULL, "--dir DIR [--timeout SECS]", "stop daemons",
     "Send SIGTERM to the daemons of DIR and wait for them to exit (they finish\n"
     "in-flight I/O and sync); after the timeout send SIGKILL with a warning.\n"
     "A munged started by `local start --auth munge` is stopped too.\n"
     "\n"
     "      --dir DIR          cluster directory\n"
     "      --timeout SECS     how long to wait after SIGTERM (default 30)\n"
     "  -h, --help             show this help\n"},
    {"status", NULL, "--dir DIR", "show daemons",
     "Show each daemon of DIR: index, pid, whether it is running, address and data\n"
     "directory. Exit status 0 if every daemon runs, 1 otherwise.\n"
     "\n"
     "      --dir DIR          cluster directory\n"
     "  -h, --help             show this help\n"},
};

/* mkdir -p DIR; reports a failure. */
static ps_status_t pst_mkdir_p(pst_ctx_t *ctx, const char *dir)
{
    char path[PATH_MAX];

    if (pst_snprintf(path, sizeof(path), "%s", dir) != PS_OK) {
        pst_msg(ctx, "cannot create %s: %s", dir, strerror(ENAMETOOLONG));
        return PS_ERR_NAME_TOO_LONG;
    }
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') {
            continue;
        }
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            ps_status_t status = ps_status_from_errno(errno);
            pst_msg(ctx, "cannot create %s: %s", dir, strerror(errno));
            return status;
        }
        *p = c;
        if (c == '\0') {
            return PS_OK;
        }
    }
}

/* A number from 1 to max, or -1. */
static long pst_local_parse_count(const char *arg, long max)
{
    char *end;
    long v = strtol(arg, &end, 10);

    return (*arg == '\0' || *end != '\0' || v < 1 || v > max) ? -1 : v;
}

/* One option of a `local` subcommand: PST_CONTINUE, or the exit status. */
static int pst_local_opt(pst_ctx_t *ctx, int c, const char *arg, pst_local_opts_t *o)
{
    const int is_start = (strcmp(ctx->cmd->name, "start") == 0);
    char *end;

    if (!is_start && (c == 'n' || c == PST_LOCAL_OPT_WORKERS || c == PST_LOCAL_OPT_SET ||
                      c == PST_LOCAL_OPT_AUTH)) {
        return pst_usage_error(ctx, "-n, --workers, --auth and --set are options of `local start`");
    }
    if (c == PST_LOCAL_OPT_TIMEOUT && strcmp(ctx->cmd->name, "status") == 0) {
        return pst_usage_error(ctx, "--timeout is an option of `local start` and `stop`");
    }
    switch (c) {
    case PST_LOCAL_OPT_DIR:
        o->dir_arg = arg;
        return PST_CONTINUE;
    case 'n':
        o->nservers = (int)pst_local_parse_count(arg, PST_LOCAL_NSERVERS_MAX);
        if (o->nservers < 0) {
            pst_msg(ctx, "-n: '%s' is not a number of servers from 1 to %d", arg,
                    PST_LOCAL_NSERVERS_MAX);
            return PST_EXIT_ERROR;
        }
        return PST_CONTINUE;
    case PST_LOCAL_OPT_WORKERS:
        if (pst_local_parse_count(arg, LONG_MAX) < 0) {
            pst_msg(ctx, "--workers: '%s' is not a positive number", arg);
            return PST_EXIT_ERROR;
        }
        o->workers = arg;
        return PST_CONTINUE;
    case PST_LOCAL_OPT_SET:
        return pst_add_setting(ctx, arg, &o->settings, &o->nsettings);
    case PST_LOCAL_OPT_AUTH:
        o->auth = arg;
        return PST_CONTINUE;
    case PST_LOCAL_OPT_TIMEOUT:
        o->timeout = strtod(arg, &end);
        if (*arg == '\0' || *end != '\0' || !(o->timeout > 0)) {
            pst_msg(ctx, "--timeout: '%s' is not a positive number of seconds", arg);
            return PST_EXIT_ERROR;
        }
        return PST_CONTINUE;
    case 'h':
        printf("Usage: %s %s\n\n%s", ctx->name, ctx->cmd->synopsis, ctx->cmd->help);
        return PST_EXIT_OK;
    default:
        fprintf(stderr, "Try '%s --help'.\n", ctx->name);
        return PST_EXIT_USAGE;
    }
}

/* PST_CONTINUE with o filled in (o->dir absolute), or the exit status. */
static int pst_parse_local_opts(pst_ctx_t *ctx, int argc, char **argv, pst_local_opts_t *o)
{
    static const struct option opts[] = {
        {"dir", required_argument, NULL, PST_LOCAL_OPT_DIR},
        {"servers-count", required_argument, NULL, 'n'},
        {"workers", required_argument, NULL, PST_LOCAL_OPT_WORKERS},
        {"set", required_argument, NULL, PST_LOCAL_OPT_SET},
        {"timeout", required_argument, NULL, PST_LOCAL_OPT_TIMEOUT},
        {"auth", required_argument, NULL, PST_LOCAL_OPT_AUTH},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const int is_start = (strcmp(ctx->cmd->name, "start") == 0);
    int c, ret;

    o->timeout = is_start ? PST_LOCAL_START_TIMEOUT_DFL : PST_LOCAL_STOP_TIMEOUT_DFL;
    while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
        if ((ret = pst_local_opt(ctx, c, optarg, o)) != PST_CONTINUE) {
            return ret;
        }
    }
    if (optind < argc) {
        return pst_usage_error(ctx, "unexpected argument '%s'", argv[optind]);
    }
    if (o->dir_arg == NULL) {
        return pst_usage_error(ctx, "--dir DIR is required");
    }
    if (is_start && pst_mkdir_p(ctx, o->dir_arg) != PS_OK) {
        return PST_EXIT_ERROR;
    }
    if (realpath(o->dir_arg, o->dir) == NULL) {
        pst_msg(ctx, "%s: %s", o->dir_arg, strerror(errno));
        return PST_EXIT_ERROR;
    }
    if (strlen(o->dir) > PATH_MAX - 64) {
        pst_msg(ctx, "%s: path too long", o->dir);
        return PST_EXIT_ERROR;
    }
    return PST_CONTINUE;
}

/* Number of consecutive data directories DIR/server0, server1, ... */
static int pst_local_count_dirs(const char *dir)
{
    char path[PATH_MAX];
    struct stat sb;
    int n = 0;

    for (;;) {
        pst_local_path(path, sizeof(path), dir, n, "");
        if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            return n;
        }
        n++;
    }
}

/* Number of servers of an existing cluster: data dirs or pid files. */
static int pst_local_count(const char *dir)
{
    char path[PATH_MAX];
    int n = pst_local_count_dirs(dir);

    for (;; n++) {
        pst_local_path(path, sizeof(path), dir, n, ".pid");
        if (access(path, F_OK) != 0) {
            return n;
        }
    }
}

/* Write text to path through path.tmp and a rename; reports a failure. */
static ps_status_t pst_local_write_file(pst_ctx_t *ctx, const char *path, const char *text)
{
    char tmp[PATH_MAX];
    ps_status_t status;
    FILE *f;

    pst_snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (f == NULL) {
        status = ps_status_from_errno(errno);
        pst_msg(ctx, "cannot write %s: %s", tmp, strerror(errno));
        return status;
    }
    fputs(text, f);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        status = ps_status_from_errno(errno);
        pst_msg(ctx, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return status;
    }
    return PS_OK;
}

/* --- start ------------------------------------------------------------------------ */

/*
 * How many servers to start in o->dir: as many as it holds data directories
 * for (-n must agree), else -n, else the default. Fails if all of them
 * still run.
 */
static ps_status_t pst_local_start_count(pst_ctx_t *ctx, const pst_local_opts_t *o, int *n_p)
{
    int existing = pst_local_count_dirs(o->dir);
    int n;

    if (existing > 0 && o->nservers > 0 && o->nservers != existing) {
        pst_msg(ctx,
                "%s holds the data of %d servers; start it with -n %d (the number of "
                "servers of a cluster cannot change: file layouts name servers by index), "
                "or use another --dir",
                o->dir, existing, existing);
        return PS_ERR_INVALID;
    }
    n = existing ? existing : (o->nservers ? o->nservers : PST_LOCAL_NSERVERS_DFL);
    int nrunning = 0;
    for (int i = 0; i < n; i++) {
        nrunning += (pst_local_running(o->dir, i) > 0);
    }
    if (nrunning == n) {
        pst_msg(ctx,
                "all %d servers of %s are already running; run `pstripe local stop --dir %s` "
                "first to start them again",
                n, o->dir, o->dir);
        return PS_ERR_BUSY;
    }
    *n_p = n;
    return PS_OK;
}

/* Addresses from DIR/client.conf ("servers = a,b,c"); *naddrs may be 0. */
static char **pst_local_read_addrs(const char *dir, int *naddrs)
{
    char path[PATH_MAX], *line = NULL, **addrs = NULL;
    size_t cap = 0;
    FILE *f;
    int n = 0;

    *naddrs = 0;
    pst_snprintf(path, sizeof(path), "%s/client.conf", dir);
    f = fopen(path, "r");
    if (f == NULL) {
        return NULL;
    }
    while (getline(&line, &cap, f) > 0) {
        char *p = line + strspn(line, " \t");
        if (strncmp(p, "servers", 7) != 0) {
            continue;
        }
        p += 7;
        p += strspn(p, " \t");
        if (*p != '=') {
            continue;
        }
        p++;
        for (char *tok = strtok(p, ", \t\r\n"); tok != NULL; tok = strtok(NULL, ", \t\r\n")) {
            char **a = realloc(addrs, (size_t)(n + 1) * sizeof(*a));
            if (a == NULL) {
                break;
            }
            addrs = a;
            addrs[n++] = strdup(tok);
        }
    }
    free(line);
    fclose(f);
    *naddrs = n;
    return addrs;
}

static void pst_local_free_addrs(char **addrs, int naddrs)
{
    for (int i = 0; i < naddrs; i++) {
        free(addrs[i]);
    }
    free(addrs);
}

/* 0 if another process listens on addr ("HOST:PORT", IPv4) now; 1 if it
 * is free, or if that cannot be told (the server's bind then says).
 * Leftovers of closed connections do not count, as for the server. */
static int pst_local_addr_free(const char *addr)
{
    const char *colon = strrchr(addr, ':');
    struct sockaddr_in sa = {.sin_family = AF_INET};
    char host[64];
    int fd, one = 1, ok;

    if (colon == NULL || (size_t)(colon - addr) >= sizeof(host)) {
        return 1;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        return 1;
    }
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return 1;
    }
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno != EADDRINUSE;
    close(fd);
    return ok;
}

/*
 * Check that the addresses of the servers to restart are free (n of them,
 * nrunning running): 1 if so; 0 if not and all died (new ports then, said
 * on stdout); -1 if not while others run (an error: they keep theirs).
 */
static int pst_local_addrs_free(pst_ctx_t *ctx, const pst_local_opts_t *o, const pst_server_t *srv,
                                int n, int nrunning, char **addrs)
{
    for (int i = 0; i < n; i++) {
        if (srv[i].running || pst_local_addr_free(addrs[i])) {
            continue;
        }
        if (nrunning == 0) {
            printf("server%d's address %s is taken by another process: the servers of %s start "
                   "on new ports (client.conf is rewritten; running programs must start again)\n",
                   i, addrs[i], o->dir);
            return 0;
        }
        pst_msg(ctx,
                "server%d's address %s is taken by another process: cannot restart it there "
                "while the others run; `pstripe local stop --dir %s`, then start, moves all "
                "to new ports",
                i, addrs[i], o->dir);
        return -1;
    }
    return 1;
}

/*
 * On a cluster where some or all daemons died (their pid files are left),
 * only those are started, each on the address client.conf already lists
 * for it: clients keep their configuration, and those connected reconnect
 * to the restarted servers. A new or stopped cluster starts on new ports.
 * Marks the running ones in srv (with their pid and address) and sets the
 * listen address of the others; *addrs_p (to free) holds the addresses,
 * none when the ports are new.
 */
static ps_status_t pst_local_plan_restart(pst_ctx_t *ctx, const pst_local_opts_t *o,
                                          pst_server_t *srv, int n, char ***addrs_p, int *naddrs_p)
{
    int nrunning = 0, ndied = 0, naddrs;
    char **addrs;

    *addrs_p = NULL;
    *naddrs_p = 0;
    for (int i = 0; i < n; i++) {
        srv[i].pid = pst_local_running(o->dir, i);
        srv[i].running = (srv[i].pid > 0);
        nrunning += srv[i].running;
        if (!srv[i].running) {
            ndied += pst_local_read_pid(o->dir, i) > 0; /* (a stop removes its pid file) */
            pst_local_wait_exiting(o->dir, i);
        }
    }
    if (nrunning == 0 && ndied == 0) {
        return PS_OK; /* a new or stopped cluster: every server on a new port */
    }
    addrs = pst_local_read_addrs(o->dir, &naddrs);
    *addrs_p = addrs;
    *naddrs_p = naddrs;
    if (naddrs != n && nrunning > 0) {
        pst_msg(ctx,
                "%d of the %d servers of %s still run, but %s/client.conf lists %d "
                "addresses: cannot restart the others on their addresses; run `pstripe local "
                "stop --dir %s` first",
                nrunning, n, o->dir, o->dir, naddrs, o->dir);
        return PS_ERR_INVALID;
    }
    int free_addrs = naddrs == n ? pst_local_addrs_free(ctx, o, srv, n, nrunning, addrs) : 0;
    if (free_addrs < 0) {
        return PS_ERR_INVALID;
    }
    if (free_addrs == 0) { /* all died, and an address is lost or taken: new ports */
        pst_local_free_addrs(addrs, naddrs);
        *addrs_p = NULL;
        *naddrs_p = 0;
        return PS_OK;
    }
    for (int i = 0; i < n; i++) {
        if (srv[i].running) {
            srv[i].ready = 1;
            srv[i].ready_fd = -1;
            srv[i].addr_len = (size_t)snprintf(srv[i].addr, sizeof(srv[i].addr), "%s", addrs[i]);
        } else {
            srv[i].listen = addrs[i];
        }
    }
    return PS_OK;
}

/* Pid files, then DIR/client.conf (its path in conf_path) with the
 * addresses in index order. */
static ps_status_t pst_local_write_state(pst_ctx_t *ctx, const pst_local_opts_t *o,
                                         const pst_server_t *srv, int n, const char *auth_conf,
                                         char *conf_path, size_t conf_path_len)
{
    size_t conf_len =
        512 + (size_t)n * (PST_LOCAL_ADDR_MAX + 1) + strlen(o->dir) + strlen(auth_conf);
    char *conf = malloc(conf_len);
    ps_status_t status = PS_OK;
    char path[PATH_MAX];
    size_t off;

    if (conf == NULL) {
        pst_msg(ctx, "out of memory");
        return PS_ERR_NO_MEMORY;
    }
    off = (size_t)snprintf(conf, conf_len,
                           "# pstripe client config of the local cluster in %s,\n"
                           "# written by `pstripe local start`. Server i is the daemon "
                           "of %s/server<i>/.\n"
                           "[client]\nservers = ",
                           o->dir, o->dir);
    for (int i = 0; i < n; i++) {
        char pidtext[32];
        snprintf(pidtext, sizeof(pidtext), "%d\n", (int)srv[i].pid);
        pst_local_path(path, sizeof(path), o->dir, i, ".pid");
        ps_status_t pid_status = pst_local_write_file(ctx, path, pidtext);
        status = (status == PS_OK) ? pid_status : status;
        off += (size_t)snprintf(conf + off, conf_len - off, "%s%s", i ? "," : "", srv[i].addr);
    }
    snprintf(conf + off, conf_len - off, "\n%s", auth_conf);
    pst_snprintf(conf_path, conf_path_len, "%s/client.conf", o->dir);
    if (status == PS_OK) {
        status = pst_local_write_file(ctx, conf_path, conf);
    }
    free(conf);
    return status;
}

static void pst_local_print_started(const pst_local_opts_t *o, const pst_server_t *srv, int n,
                                    int same_addrs, const char *conf_path)
{
    int nrunning = 0;

    for (int i = 0; i < n; i++) {
        nrunning += srv[i].running;
    }
    if (!same_addrs) {
        printf("Started %d pstripe servers in %s:\n", n, o->dir);
    } else if (nrunning == 0) {
        printf("Restarted the %d pstripe servers in %s on their addresses (all had died):\n", n,
               o->dir);
    } else {
        printf("Restarted %d of the %d pstripe servers in %s on their addresses (the others "
               "were running):\n",
               n - nrunning, n, o->dir);
    }
    for (int i = 0; i < n; i++) {
        printf("  server%-3d pid %-8d %-22s data %s/server%d/  log %s/server%d.log%s\n", i,
               (int)srv[i].pid, srv[i].addr, o->dir, i, o->dir, i,
               srv[i].running ? "  (was running)" : "");
    }
    printf("\nTo use them:\n"
           "  export PSTRIPE_CONFIG=%s\n"
           "  pstripe cp FILE pstripe:/FILE     # copy a file in (and back out)\n"
           "  pstripe ls -l\n"
           "  pstripe stat /FILE\n"
           "  pstripe run -- mpiexec -n 2 ./prog pstripe:/out\n"
           "Stop them with: pstripe local stop --dir %s\n",
           conf_path, o->dir);
}

/* Set up the cluster's authentication and put its server settings before
 * the user's (a later --set wins). */
static ps_status_t pst_local_auth_settings(pst_ctx_t *ctx, pst_local_opts_t *o,
                                           pst_local_auth_t *auth)
{
    const char **settings;
    int n = 0;

    if (pst_local_auth_start(ctx, o, auth) != PS_OK) {
        return PS_ERR_INVALID;
    }
    settings = calloc((size_t)o->nsettings + 4, sizeof(*settings));
    if (settings == NULL) {
        pst_msg(ctx, "out of memory");
        return PS_ERR_NO_MEMORY;
    }
    settings[n++] = auth->set_mode;
    if (auth->set_path[0] != '\0') {
        settings[n++] = auth->set_path;
    }
    if (auth->set_key[0] != '\0') {
        settings[n++] = auth->set_key;
    }
    for (int i = 0; i < o->nsettings; i++) {
        settings[n++] = o->settings[i];
    }
    free(o->settings);
    o->settings = settings;
    o->nsettings = n;
    return PS_OK;
}

static int pst_local_start(pst_ctx_t *ctx, pst_local_opts_t *o)
{
    char binbuf[PATH_MAX], conf_path[PATH_MAX];
    static pst_local_auth_t auth; /* its strings are the daemons' settings */
    ps_status_t status, ready_status;
    const char *binary;
    pst_server_t *srv;
    char **addrs = NULL;
    int n, naddrs = 0;

    if (pst_local_start_count(ctx, o, &n) != PS_OK) {
        return PST_EXIT_ERROR;
    }
    binary = pst_local_server_binary(binbuf, sizeof(binbuf));
    if (access(binary, X_OK) != 0) {
        pst_msg(ctx,
                "cannot execute the server %s: %s (set PSTRIPE_SERVER to the "
                "pstripe-server binary)",
                binary, strerror(errno));
        return PST_EXIT_ERROR;
    }
    srv = calloc((size_t)n, sizeof(*srv));
    if (srv == NULL) {
        pst_msg(ctx, "out of memory");
        return PST_EXIT_ERROR;
    }

    o->cluster_size = n;
    if (pst_local_plan_restart(ctx, o, srv, n, &addrs, &naddrs) != PS_OK ||
        pst_local_auth_settings(ctx, o, &auth) != PS_OK) {
        goto err_free;
    }
    status = pst_local_spawn(ctx, o, binary, srv, n);
    pst_local_wait_ready(srv, n, o->timeout);
    ready_status = pst_local_report_unready(ctx, o, srv, n);
    if (status != PS_OK || ready_status != PS_OK) {
        pst_local_abort(ctx, srv, n);
        pst_msg(ctx, "no server left running");
        goto err_free;
    }
    if (pst_local_write_state(ctx, o, srv, n, auth.conf, conf_path, sizeof(conf_path)) != PS_OK) {
        pst_local_abort(ctx, srv, n);
        goto err_free;
    }
    pst_local_print_started(o, srv, n, naddrs > 0, conf_path);
    pst_local_free_addrs(addrs, naddrs);
    free(srv);
    return PST_EXIT_OK;

err_free:
    pst_local_free_addrs(addrs, naddrs);
    free(srv);
    return PST_EXIT_ERROR;
}

/* --- stop ------------------------------------------------------------------------- */

/* SIGTERM to each running daemon of o->dir; pids[i] is its pid, or 0. */
static int pst_local_signal_all(pst_ctx_t *ctx, const pst_local_opts_t *o, pid_t *pids, int n,
                                int *nrunning)
{
    int ret = PST_EXIT_OK;

    *nrunning = 0;
    for (int i = 0; i < n; i++) {
        pids[i] = pst_local_running(o->dir, i);
        if (pids[i] > 0) {
            if (kill(pids[i], SIGTERM) != 0 && errno != ESRCH) {
                pst_msg(ctx, "kill server%d (pid %d): %s", i, (int)pids[i], strerror(errno));
                ret = PST_EXIT_ERROR;
            }
            (*nrunning)++;
        }
    }
    return ret;
}

/* After the timeout: SIGKILL to the daemons in pids[] that still run. */
static int pst_local_kill_left(pst_ctx_t *ctx, const pst_local_opts_t *o, pid_t *pids, int n)
{
    int ret = PST_EXIT_OK;

    for (int i = 0; i < n; i++) {
        if (pids[i] > 0) {
            pst_msg(ctx,
                    "warning: server%d (pid %d) did not exit within %gs of SIGTERM; "
                    "sending SIGKILL (see %s/server%d.log)",
                    i, (int)pids[i], o->timeout, o->dir, i);
            kill(pids[i], SIGKILL);
        }
    }
    if (pst_wait_exit(pids, n, 10.0, pst_daemon_alive, (void *)o->dir) > 0) {
        for (int i = 0; i < n; i++) {
            if (pids[i] > 0) {
                pst_msg(ctx, "server%d (pid %d) survived SIGKILL", i, (int)pids[i]);
                ret = PST_EXIT_ERROR;
            }
        }
    }
    return ret;
}

static int pst_local_stop(pst_ctx_t *ctx, pst_local_opts_t *o)
{
    char path[PATH_MAX];
    int n = pst_local_count(o->dir);
    int nrunning, ret;
    pid_t *pids, *orig;

    if (n <= 0) {
        pst_msg(ctx, "%s: no pstripe local cluster here (no server<i>/ or server<i>.pid)", o->dir);
        return PST_EXIT_ERROR;
    }
    pids = calloc((size_t)n, sizeof(*pids));
    orig = calloc((size_t)n, sizeof(*orig));
    if (pids == NULL || orig == NULL) {
        pst_msg(ctx, "out of memory");
        free(pids);
        free(orig);
        return PST_EXIT_ERROR;
    }
    ret = pst_local_signal_all(ctx, o, pids, n, &nrunning);
    memcpy(orig, pids, (size_t)n * sizeof(*pids));
    if (pst_wait_exit(pids, n, o->timeout, pst_daemon_alive, (void *)o->dir) > 0 &&
        pst_local_kill_left(ctx, o, pids, n) != PST_EXIT_OK) {
        ret = PST_EXIT_ERROR;
    }

    for (int i = 0; i < n; i++) {
        if (pids[i] > 0) {
            continue; /* still running: keep its pid file */
        }
        pst_local_path(path, sizeof(path), o->dir, i, ".pid");
        unlink(path);
        if (orig[i] > 0) {
            printf("stopped server%d (pid %d)\n", i, (int)orig[i]);
        }
    }
    if (nrunning == 0) {
        printf("no server of %s was running\n", o->dir);
    }
    if (ret == PST_EXIT_OK) {
        pst_local_auth_stop(o->dir);
    }
    free(pids);
    free(orig);
    return ret;
}

/* --- status ------------------------------------------------------------------------- */

static int pst_local_status(pst_ctx_t *ctx, pst_local_opts_t *o)
{
    char datadir[PATH_MAX];
    int naddrs, nrunning = 0;
    char **addrs = pst_local_read_addrs(o->dir, &naddrs);
    int n = pst_local_count(o->dir);

    if (n == 0) {
        pst_msg(ctx, "%s: no pstripe local cluster here (no server<i>/ or server<i>.pid)", o->dir);
        free(addrs);
        return PST_EXIT_ERROR;
    }
    printf("%-8s %-8s %-8s %-22s %s\n", "server", "pid", "state", "address", "data");
    for (int i = 0; i < n; i++) {
        pid_t pid = pst_local_read_pid(o->dir, i);
        int alive = (pid > 0) && pst_local_running(o->dir, i) == pid;
        char pidtext[16];

        snprintf(pidtext, sizeof(pidtext), "%d", (int)pid);
        pst_local_path(datadir, sizeof(datadir), o->dir, i, "");
        printf("%-8d %-8s %-8s %-22s %s\n", i, pid > 0 ? pidtext : "-",
               alive ? "running" : (pid > 0 ? "dead" : "stopped"), (i < naddrs) ? addrs[i] : "-",
               datadir);
        nrunning += alive;
    }
    printf("%d of %d servers running; client config %s/client.conf\n", nrunning, n, o->dir);
    for (int i = 0; i < naddrs; i++) {
        free(addrs[i]);
    }
    free(addrs);
    return (nrunning == n) ? PST_EXIT_OK : PST_EXIT_ERROR;
}

int pst_cmd_local(pst_ctx_t *ctx, int argc, char **argv)
{
    pst_local_opts_t o = {0};
    const pst_cmd_t *sub = NULL;
    int ret;

    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
                      strcmp(argv[1], "help") == 0)) {
        printf("Usage: pstripe local start|stop|status --dir DIR [OPTIONS]\n\n%s\n",
               ctx->cmd->help);
        for (size_t i = 0; i < sizeof(pst_local_cmds) / sizeof(pst_local_cmds[0]); i++) {
            printf("  pstripe local %s %s\n", pst_local_cmds[i].name, pst_local_cmds[i].synopsis);
        }
        return PST_EXIT_OK;
    }
    for (size_t i = 0; argc >= 2 && i < sizeof(pst_local_cmds) / sizeof(pst_local_cmds[0]); i++) {
        if (strcmp(argv[1], pst_local_cmds[i].name) == 0) {
            sub = &pst_local_cmds[i];
        }
    }
    if (sub == NULL) {
        return pst_usage_error(ctx, argc < 2 ? "missing start, stop or status"
                                             : "unknown subcommand (start, stop or status)");
    }
    if (ctx->config != NULL || ctx->servers != NULL || ctx->nsettings > 0) {
        return pst_usage_error(ctx, "-c, --servers and --set before `local` are client options; "
                                    "server tunables go after it: local start --set NAME=VALUE");
    }
    ctx->cmd = sub;
    snprintf(ctx->name, sizeof(ctx->name), "pstripe local %s", sub->name);
    argv[1] = ctx->name;
    optind = 0;
    ret = pst_parse_local_opts(ctx, argc - 1, argv + 1, &o);
    if (ret == PST_CONTINUE) {
        if (strcmp(sub->name, "start") == 0) {
            ret = pst_local_start(ctx, &o);
        } else if (strcmp(sub->name, "stop") == 0) {
            ret = pst_local_stop(ctx, &o);
        } else {
            ret = pst_local_status(ctx, &o);
        }
    }
    free(o.settings);
    return ret;
}

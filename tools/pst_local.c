/*
 * pst_local.c: `pstripe local start|stop|status --dir DIR`, a cluster of
 * pstripe-server daemons on 127.0.0.1 whose whole state lives in DIR:
 *
 *   DIR/server<i>/     data directory of server i (meta/, obj/, lock)
 *   DIR/server<i>.log  its stdout, stderr and log lines (appended)
 *   DIR/server<i>.pid  its pid
 *   DIR/client.conf    [client] servers = the addresses, in index order
 *
 * Start-up without sleeps, the way libuv's tests start helpers: each daemon
 * is forked with `--listen 127.0.0.1:0 --ready-fd N`, N being the write end
 * of a pipe. Once all its workers listen it writes its real address there and
 * closes it; if it fails it exits and the pipe reads EOF. The tool polls all
 * the pipes with one deadline, so N daemons start in parallel, and a daemon
 * that dies or hangs is reported with the end of its log. The children are
 * detached (setsid, stdio to the log) and outlive the tool.
 *
 * A cluster's identity is its order: layouts name servers by index, so server
 * i always gets DIR/server<i>/ and the i-th place in client.conf. A restart on
 * the same DIR keeps the number of servers and their data directories; only
 * the ports change (client.conf is rewritten).
 *
 * Stopping waits on pidfds (poll(2) reports the exit of a process that is not
 * our child), SIGTERM first, SIGKILL with a warning after the timeout. Before
 * signalling, a pid is checked to still be the daemon of that data directory
 * (/proc/<pid>/cmdline has "--data DIR/server<i>"), so a stale pid file never
 * kills an unrelated process that reused the pid.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ps_time.h"
#include "pst_tool.h"

#ifndef PST_SBINDIR
#define PST_SBINDIR "/usr/local/sbin"
#endif
#ifndef PST_BINDIR
#define PST_BINDIR "/usr/local/bin"
#endif

#define PST_LOCAL_NSERVERS_DFL 4
#define PST_LOCAL_NSERVERS_MAX 256
#define PST_LOCAL_START_TIMEOUT_DFL 60.0 /* seconds */
#define PST_LOCAL_STOP_TIMEOUT_DFL  30.0 /* seconds */
#define PST_LOCAL_ADDR_MAX 128

enum {
    PST_LOCAL_OPT_DIR = PST_OPT_FIRST_LOCAL,
    PST_LOCAL_OPT_WORKERS,
    PST_LOCAL_OPT_SET,
    PST_LOCAL_OPT_TIMEOUT
};

static const pst_cmd_t pst_local_cmds[] = {
    {"start", NULL, "--dir DIR [-n N] [--workers W] [--set NAME=VALUE]... [--timeout SECS]",
     "start daemons",
     "Start N pstripe-server daemons on 127.0.0.1 (ports chosen by the kernel),\n"
     "with data in DIR/server<i>/, logs in DIR/server<i>.log and pids in\n"
     "DIR/server<i>.pid, and write DIR/client.conf listing them in index order.\n"
     "Starting again on the same DIR reuses the same data directories in the same\n"
     "order. The server binary is $PSTRIPE_SERVER, else the build tree's\n"
     "server/pstripe-server next to this tool, else the installed one.\n"
     "\n"
     "      --dir DIR          cluster directory (created if missing)\n"
     "  -n, --servers-count N  number of daemons (default 4, or as many as DIR has)\n"
     "      --workers W        workers per daemon (default: one per core)\n"
     "      --set NAME=VALUE   server tunable, passed to every daemon (repeatable)\n"
     "      --timeout SECS     how long to wait for the daemons to listen (default 60)\n"
     "  -h, --help             show this help\n"},
    {"stop", NULL, "--dir DIR [--timeout SECS]", "stop daemons",
     "Send SIGTERM to the daemons of DIR and wait for them to exit (they finish\n"
     "in-flight I/O and sync); after the timeout send SIGKILL with a warning.\n"
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

/* Options of one `local` subcommand. */
typedef struct pst_local_opts {
    const char *dir_arg;
    char dir[PATH_MAX];      /* absolute */
    int nservers;            /* 0: not given */
    const char *workers;
    const char **settings;   /* server --set values */
    int nsettings;
    double timeout;          /* seconds */
} pst_local_opts_t;

/* One daemon of the cluster. */
typedef struct pst_server {
    pid_t pid;
    int ready_fd;            /* read end of the --ready-fd pipe, -1 when done */
    size_t addr_len;
    char addr[PST_LOCAL_ADDR_MAX];
    int ready;               /* address received */
    const char *failure;     /* why it did not start */
} pst_server_t;

/* DIR/server<i><suffix>. DIR's length is checked once (pst_parse_local_opts)
 * so that these always fit. */
static void pst_local_path(char *buf, size_t len, const char *dir, int i, const char *suffix)
{
    pst_snprintf(buf, len, "%s/server%d%s", dir, i, suffix);
}

/* mkdir -p; 0 or -1 with errno. */
static int pst_mkdir_p(const char *dir)
{
    char path[PATH_MAX];

    if (pst_snprintf(path, sizeof(path), "%s", dir) != 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = path + 1; *p != '\0'; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0755) != 0 && errno != EEXIST) {
                return -1;
            }
            *p = '/';
        }
    }
    return (mkdir(path, 0755) != 0 && errno != EEXIST) ? -1 : 0;
}

static int pst_parse_local_opts(pst_ctx_t *ctx, int argc, char **argv, pst_local_opts_t *o)
{
    static const struct option opts[] = {
        {"dir", required_argument, NULL, PST_LOCAL_OPT_DIR},
        {"servers-count", required_argument, NULL, 'n'},
        {"workers", required_argument, NULL, PST_LOCAL_OPT_WORKERS},
        {"set", required_argument, NULL, PST_LOCAL_OPT_SET},
        {"timeout", required_argument, NULL, PST_LOCAL_OPT_TIMEOUT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const int is_start = (strcmp(ctx->cmd->name, "start") == 0);
    char *end;
    long v;
    int c;

    o->timeout = is_start ? PST_LOCAL_START_TIMEOUT_DFL : PST_LOCAL_STOP_TIMEOUT_DFL;
    while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
        /* Options of `start` only. */
        if (!is_start && (c == 'n' || c == PST_LOCAL_OPT_WORKERS || c == PST_LOCAL_OPT_SET)) {
            return pst_usage_error(ctx, "-n, --workers and --set are options of `local start`");
        }
        if (c == PST_LOCAL_OPT_TIMEOUT && strcmp(ctx->cmd->name, "status") == 0) {
            return pst_usage_error(ctx, "--timeout is an option of `local start` and `stop`");
        }
        switch (c) {
        case PST_LOCAL_OPT_DIR:
            o->dir_arg = optarg;
            break;
        case 'n':
            v = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || v < 1 || v > PST_LOCAL_NSERVERS_MAX) {
                pst_msg(ctx, "-n: '%s' is not a number of servers from 1 to %d", optarg,
                        PST_LOCAL_NSERVERS_MAX);
                return PST_EXIT_ERROR;
            }
            o->nservers = (int)v;
            break;
        case PST_LOCAL_OPT_WORKERS:
            v = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || v < 1) {
                pst_msg(ctx, "--workers: '%s' is not a positive number", optarg);
                return PST_EXIT_ERROR;
            }
            o->workers = optarg;
            break;
        case PST_LOCAL_OPT_SET: {
            if (strchr(optarg, '=') == NULL || optarg[0] == '=') {
                return pst_usage_error(ctx, "--set needs NAME=VALUE, not '%s'", optarg);
            }
            const char **s = realloc(o->settings, (o->nsettings + 1) * sizeof(*s));
            if (s == NULL) {
                pst_msg(ctx, "out of memory");
                return PST_EXIT_ERROR;
            }
            s[o->nsettings++] = optarg;
            o->settings       = s;
            break;
        }
        case PST_LOCAL_OPT_TIMEOUT:
            o->timeout = strtod(optarg, &end);
            if (*optarg == '\0' || *end != '\0' || !(o->timeout > 0)) {
                pst_msg(ctx, "--timeout: '%s' is not a positive number of seconds", optarg);
                return PST_EXIT_ERROR;
            }
            break;
        case 'h':
            printf("Usage: %s %s\n\n%s", ctx->name, ctx->cmd->synopsis, ctx->cmd->help);
            return PST_EXIT_OK;
        default:
            fprintf(stderr, "Try '%s --help'.\n", ctx->name);
            return PST_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        return pst_usage_error(ctx, "unexpected argument '%s'", argv[optind]);
    }
    if (o->dir_arg == NULL) {
        return pst_usage_error(ctx, "--dir DIR is required");
    }
    if (is_start && pst_mkdir_p(o->dir_arg) != 0) {
        pst_msg(ctx, "cannot create %s: %s", o->dir_arg, strerror(errno));
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

/* Pid of server i from its pid file; 0 if there is none or it is unreadable. */
static pid_t pst_local_read_pid(const char *dir, int i)
{
    char path[PATH_MAX];
    long pid = 0;
    FILE *f;

    pst_local_path(path, sizeof(path), dir, i, ".pid");
    f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    if (fscanf(f, "%ld", &pid) != 1 || pid <= 0) {
        pid = 0;
    }
    fclose(f);
    return (pid_t)pid;
}

/*
 * 1 if pid is alive (not a zombie) and is the daemon of data directory
 * datadir: its command line has "--data" followed by datadir.
 */
static int pst_local_is_daemon(pid_t pid, const char *datadir)
{
    char path[64], buf[8192], state = '?';
    size_t n;
    FILE *f;
    char *p;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p      = strrchr(buf, ')'); /* the command name may contain spaces */
    if (p != NULL && p[1] == ' ') {
        state = p[2];
    }
    if (state == 'Z' || state == 'X' || state == '?') {
        return 0;
    }

    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    for (p = buf; p < buf + n; p += strlen(p) + 1) {
        if (strcmp(p, "--data") == 0 && p + strlen(p) + 1 < buf + n &&
            strcmp(p + strlen(p) + 1, datadir) == 0) {
            return 1;
        }
        if (strncmp(p, "--data=", 7) == 0 && strcmp(p + 7, datadir) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Pid of the running daemon of server i, 0 if it does not run. */
static pid_t pst_local_running(const char *dir, int i)
{
    char datadir[PATH_MAX];
    pid_t pid = pst_local_read_pid(dir, i);

    pst_local_path(datadir, sizeof(datadir), dir, i, "");
    return (pid > 0 && pst_local_is_daemon(pid, datadir)) ? pid : 0;
}

static int pst_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/*
 * Wait until none of pids[0..n) runs any more, at most timeout seconds.
 * alive(pid, i) says whether pids[i] still runs (it is checked again after
 * each wake-up, so a pid that cannot be watched through a pidfd is polled
 * every 10 ms instead). Entries that stopped are set to 0. Returns how many
 * still run.
 */
static int pst_wait_exit(pid_t *pids, int n, double timeout, int (*alive)(pid_t, int, void *),
                         void *arg)
{
    struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
    uint64_t deadline  = ps_time_ns() + (uint64_t)(timeout * 1e9);
    int left;

    for (int i = 0; i < n; i++) {
        pfd[i].fd     = (pids[i] > 0 && pfd != NULL) ? pst_pidfd_open(pids[i]) : -1;
        pfd[i].events = POLLIN;
    }
    for (;;) {
        int unwatched = 0;
        left          = 0;
        for (int i = 0; i < n; i++) {
            if (pids[i] > 0 && !alive(pids[i], i, arg)) {
                pids[i] = 0;
            }
            if (pids[i] > 0) {
                left++;
                unwatched += (pfd == NULL || pfd[i].fd < 0);
            } else if (pfd != NULL && pfd[i].fd >= 0) {
                close(pfd[i].fd);
                pfd[i].fd = -1; /* poll() ignores negative fds */
            }
        }
        uint64_t now = ps_time_ns();
        if (left == 0 || now >= deadline) {
            break;
        }
        int ms = (int)((deadline - now + 999999) / 1000000);
        if (unwatched || pfd == NULL) {
            ms = (ms < 10) ? ms : 10;
        }
        if (pfd != NULL) {
            poll(pfd, (nfds_t)n, ms);
        } else {
            struct timespec ts = {0, (long)ms * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    for (int i = 0; pfd != NULL && i < n; i++) {
        if (pfd[i].fd >= 0) {
            close(pfd[i].fd);
        }
    }
    free(pfd);
    return left;
}

/* --- start ------------------------------------------------------------------------ */

/* The pstripe-server binary: $PSTRIPE_SERVER, else next to this tool in the
 * build tree, else the installed one (sbindir per the design; bindir is
 * where server/Makefile.mk installs it today). */
static const char *pst_local_server_binary(char *buf, size_t len)
{
    const char *env = getenv("PSTRIPE_SERVER");
    char dir[PATH_MAX];

    if (env != NULL && env[0] != '\0') {
        return env;
    }
    pst_exe_dir(dir, sizeof(dir));
    if (dir[0] != '\0') {
        if (pst_snprintf(buf, len, "%s/../server/pstripe-server", dir) == 0 &&
            access(buf, X_OK) == 0) {
            return buf;
        }
    }
    if (access(PST_SBINDIR "/pstripe-server", X_OK) != 0 &&
        access(PST_BINDIR "/pstripe-server", X_OK) == 0) {
        return PST_BINDIR "/pstripe-server";
    }
    return PST_SBINDIR "/pstripe-server";
}

/* In the child: detach, redirect stdio to the log, exec the daemon. Never
 * returns; failures are written to the log and end the child with 127. */
static void pst_local_exec(const pst_local_opts_t *o, int i, const char *binary, int ready_fd)
{
    char datadir[PATH_MAX], logpath[PATH_MAX], fdstr[16];
    const char *argv[16 + 2 * PST_LOCAL_NSERVERS_MAX];
    sigset_t none;
    int argc = 0, fd;

    pst_local_path(datadir, sizeof(datadir), o->dir, i, "");
    pst_local_path(logpath, sizeof(logpath), o->dir, i, ".log");

    setsid();
    /* Signals ignored or blocked by our caller (a non-interactive shell
     * ignores SIGINT for background jobs) must not stay so in the daemon. */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);

    fd = open("/dev/null", O_RDONLY);
    if (fd >= 0 && fd != STDIN_FILENO) {
        dup2(fd, STDIN_FILENO);
        close(fd);
    }
    fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) {
        _exit(127);
    }
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    if (fd > STDERR_FILENO) {
        close(fd);
    }
    if (chdir(o->dir) != 0) {
        /* harmless: every path we pass is absolute */
    }
    /* The pipe was created close-on-exec; only this fd crosses the exec. */
    fcntl(ready_fd, F_SETFD, 0);
    snprintf(fdstr, sizeof(fdstr), "%d", ready_fd);

    argv[argc++] = binary;
    argv[argc++] = "--data";
    argv[argc++] = datadir;
    argv[argc++] = "--listen";
    argv[argc++] = "127.0.0.1:0";
    argv[argc++] = "--ready-fd";
    argv[argc++] = fdstr;
    if (o->workers != NULL) {
        argv[argc++] = "--workers";
        argv[argc++] = o->workers;
    }
    for (int k = 0; k < o->nsettings && argc + 3 < (int)(sizeof(argv) / sizeof(argv[0])); k++) {
        argv[argc++] = "--set";
        argv[argc++] = o->settings[k];
    }
    argv[argc] = NULL;

    {
        time_t now = time(NULL);
        char when[64];
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", localtime(&now));
        fprintf(stderr, "==== pstripe local start, %s:", when);
        for (int k = 0; k < argc; k++) {
            fprintf(stderr, " %s", argv[k]);
        }
        fprintf(stderr, "\n");
        fflush(stderr);
    }
    execv(binary, (char *const *)argv);
    fprintf(stderr, "pstripe local start: cannot execute %s: %s\n", binary, strerror(errno));
    _exit(127);
}

/* Print the last lines of server i's log, indented, to stderr. */
static void pst_local_log_tail(const char *dir, int i, int nlines)
{
    char path[PATH_MAX], buf[4096];
    size_t n, start;
    off_t size;
    int fd, seen = 0;

    pst_local_path(path, sizeof(path), dir, i, ".log");
    fd = open(path, O_RDONLY);
    if (fd < 0) {
        return;
    }
    size = lseek(fd, 0, SEEK_END);
    if (size > (off_t)sizeof(buf) - 1) {
        lseek(fd, size - (off_t)sizeof(buf) + 1, SEEK_SET);
    } else {
        lseek(fd, 0, SEEK_SET);
    }
    n = (size_t)read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if ((ssize_t)n <= 0) {
        return;
    }
    buf[n] = '\0';
    start  = n;
    if (start > 0 && buf[start - 1] == '\n') {
        start--;
    }
    while (start > 0 && seen < nlines) {
        start--;
        if (buf[start] == '\n') {
            seen++;
        }
    }
    if (buf[start] == '\n') {
        start++;
    }
    fprintf(stderr, "---- last lines of %s ----\n", path);
    for (char *line = strtok(buf + start, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        fprintf(stderr, "  %s\n", line);
    }
}

/* 1 while our child pid runs; does not reap it (WNOWAIT), so that its exit
 * status can still be read. */
static int pst_child_alive(pid_t pid, int i, void *arg)
{
    siginfo_t si;

    (void)i;
    (void)arg;
    si.si_pid = 0;
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0) {
        return 0; /* not our child (any more) */
    }
    return si.si_pid == 0;
}

/* Reap child pid if it exited; describe how ("exited with status 1"). */
static const char *pst_local_exit_reason(pid_t pid, char *buf, size_t len)
{
    int wstatus;

    if (waitpid(pid, &wstatus, WNOHANG) != pid) {
        snprintf(buf, len, "closed its ready fd without writing an address");
    } else if (WIFEXITED(wstatus)) {
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(wstatus));
    } else if (WIFSIGNALED(wstatus)) {
        snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)));
    } else {
        snprintf(buf, len, "stopped");
    }
    return buf;
}

/* Stop the daemons this start launched (after a failure): SIGTERM, wait,
 * SIGKILL. They are our children, so they are reaped too. */
static void pst_local_abort(pst_ctx_t *ctx, pst_server_t *srv, int n)
{
    pid_t *pids = calloc((size_t)n, sizeof(*pids));

    if (pids == NULL) {
        return;
    }
    for (int i = 0; i < n; i++) {
        if (srv[i].pid > 0 && waitpid(srv[i].pid, NULL, WNOHANG) == 0) {
            pids[i] = srv[i].pid;
            kill(pids[i], SIGTERM);
        }
    }
    if (pst_wait_exit(pids, n, PST_LOCAL_STOP_TIMEOUT_DFL, pst_child_alive, NULL) > 0) {
        for (int i = 0; i < n; i++) {
            if (pids[i] > 0) {
                pst_msg(ctx, "warning: server%d (pid %d) ignored SIGTERM; sending SIGKILL", i,
                        (int)pids[i]);
                kill(pids[i], SIGKILL);
            }
        }
    }
    for (int i = 0; i < n; i++) {
        if (srv[i].pid > 0) {
            waitpid(srv[i].pid, NULL, 0); /* reap: exited, or SIGKILLed just now */
        }
    }
    free(pids);
}

/* Wait for every daemon's address on its ready pipe, until the deadline. */
static void pst_local_wait_ready(pst_server_t *srv, int n, double timeout)
{
    struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
    uint64_t deadline  = ps_time_ns() + (uint64_t)(timeout * 1e9);

    if (pfd == NULL) {
        return;
    }
    for (;;) {
        int waiting = 0;
        for (int i = 0; i < n; i++) {
            pfd[i].fd     = srv[i].ready_fd; /* -1: ignored by poll() */
            pfd[i].events = POLLIN;
            waiting += (srv[i].ready_fd >= 0);
        }
        uint64_t now = ps_time_ns();
        if (waiting == 0 || now >= deadline) {
            break;
        }
        int rc = poll(pfd, (nfds_t)n, (int)((deadline - now + 999999) / 1000000));
        if (rc < 0 && errno != EINTR) {
            break;
        }
        for (int i = 0; i < n && rc > 0; i++) {
            pst_server_t *s = &srv[i];
            if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
            ssize_t got = read(s->ready_fd, s->addr + s->addr_len,
                               sizeof(s->addr) - 1 - s->addr_len);
            if (got < 0 && errno == EINTR) {
                continue;
            }
            if (got > 0) {
                s->addr_len += (size_t)got;
                s->addr[s->addr_len] = '\0';
                char *nl             = strchr(s->addr, '\n');
                if (nl == NULL && s->addr_len < sizeof(s->addr) - 1) {
                    continue; /* the rest of the line is coming */
                }
                if (nl != NULL) {
                    *nl = '\0';
                }
                s->ready = (strchr(s->addr, ':') != NULL);
                if (!s->ready) {
                    s->failure = "wrote a malformed address to its ready fd";
                }
            }
            /* A line, EOF or an error: this pipe is done. */
            close(s->ready_fd);
            s->ready_fd = -1;
        }
    }
    free(pfd);
}

static int pst_local_write_file(pst_ctx_t *ctx, const char *path, const char *text)
{
    char tmp[PATH_MAX];
    FILE *f;

    pst_snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (f == NULL) {
        pst_msg(ctx, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    fputs(text, f);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        pst_msg(ctx, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int pst_local_start(pst_ctx_t *ctx, pst_local_opts_t *o)
{
    char binbuf[PATH_MAX], path[PATH_MAX], reason[128];
    const char *binary;
    pst_server_t *srv;
    int existing = pst_local_count_dirs(o->dir);
    int n, failed = 0;
    char *conf;
    size_t conf_len;

    if (existing > 0 && o->nservers > 0 && o->nservers != existing) {
        pst_msg(ctx, "%s holds the data of %d servers; start it with -n %d (the number of "
                     "servers of a cluster cannot change: file layouts name servers by index), "
                     "or use another --dir",
                o->dir, existing, existing);
        return PST_EXIT_ERROR;
    }
    n = existing ? existing : (o->nservers ? o->nservers : PST_LOCAL_NSERVERS_DFL);
    for (int i = 0; i < n; i++) {
        pid_t pid = pst_local_running(o->dir, i);
        if (pid > 0) {
            pst_msg(ctx, "server%d of %s is already running (pid %d); run `pstripe local stop "
                         "--dir %s` first",
                    i, o->dir, (int)pid, o->dir);
            return PST_EXIT_ERROR;
        }
    }
    binary = pst_local_server_binary(binbuf, sizeof(binbuf));
    if (access(binary, X_OK) != 0) {
        pst_msg(ctx, "cannot execute the server %s: %s (set PSTRIPE_SERVER to the "
                     "pstripe-server binary)",
                binary, strerror(errno));
        return PST_EXIT_ERROR;
    }

    srv = calloc((size_t)n, sizeof(*srv));
    if (srv == NULL) {
        pst_msg(ctx, "out of memory");
        return PST_EXIT_ERROR;
    }
    fflush(NULL); /* nothing buffered may be written twice by the children */
    for (int i = 0; i < n; i++) {
        int pipefd[2];

        srv[i].ready_fd = -1;
        pst_local_path(path, sizeof(path), o->dir, i, "");
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            pst_msg(ctx, "cannot create %s: %s", path, strerror(errno));
            failed = 1;
            break;
        }
        if (pipe2(pipefd, O_CLOEXEC) != 0) {
            pst_msg(ctx, "pipe: %s", strerror(errno));
            failed = 1;
            break;
        }
        srv[i].pid = fork();
        if (srv[i].pid == 0) {
            close(pipefd[0]);
            pst_local_exec(o, i, binary, pipefd[1]);
        }
        close(pipefd[1]);
        if (srv[i].pid < 0) {
            pst_msg(ctx, "fork: %s", strerror(errno));
            close(pipefd[0]);
            srv[i].pid = 0;
            failed     = 1;
            break;
        }
        srv[i].ready_fd = pipefd[0];
    }

    pst_local_wait_ready(srv, n, o->timeout);

    for (int i = 0; i < n; i++) {
        if (srv[i].pid <= 0 || srv[i].ready) {
            continue;
        }
        if (srv[i].ready_fd >= 0) {
            snprintf(reason, sizeof(reason), "did not report its address within %gs",
                     o->timeout);
            close(srv[i].ready_fd);
            srv[i].ready_fd = -1;
        } else if (srv[i].failure != NULL) {
            snprintf(reason, sizeof(reason), "%s", srv[i].failure);
        } else {
            /* EOF: the daemon is exiting; give it a moment to become waitable. */
            pid_t p = srv[i].pid;
            pst_wait_exit(&p, 1, 5.0, pst_child_alive, NULL);
            pst_local_exit_reason(srv[i].pid, reason, sizeof(reason));
        }
        pst_msg(ctx, "server%d (pid %d, data %s/server%d) %s", i, (int)srv[i].pid, o->dir, i,
                reason);
        pst_local_log_tail(o->dir, i, 15);
        failed = 1;
    }
    if (failed) {
        pst_local_abort(ctx, srv, n);
        free(srv);
        pst_msg(ctx, "no server left running");
        return PST_EXIT_ERROR;
    }

    /* Pid files, then client.conf with the addresses in index order. */
    conf_len = 512 + (size_t)n * (PST_LOCAL_ADDR_MAX + 1) + strlen(o->dir);
    conf     = malloc(conf_len);
    if (conf == NULL) {
        pst_msg(ctx, "out of memory");
        pst_local_abort(ctx, srv, n);
        free(srv);
        return PST_EXIT_ERROR;
    }
    size_t off = (size_t)snprintf(conf, conf_len,
                                  "# pstripe client config of the local cluster in %s,\n"
                                  "# written by `pstripe local start`. Server i is the daemon "
                                  "of %s/server<i>/.\n"
                                  "[client]\nservers = ",
                                  o->dir, o->dir);
    for (int i = 0; i < n; i++) {
        char pidtext[32];
        snprintf(pidtext, sizeof(pidtext), "%d\n", (int)srv[i].pid);
        pst_local_path(path, sizeof(path), o->dir, i, ".pid");
        if (pst_local_write_file(ctx, path, pidtext) != 0) {
            failed = 1;
        }
        off += (size_t)snprintf(conf + off, conf_len - off, "%s%s", i ? "," : "", srv[i].addr);
    }
    snprintf(conf + off, conf_len - off, "\n");
    pst_snprintf(path, sizeof(path), "%s/client.conf", o->dir);
    if (failed || pst_local_write_file(ctx, path, conf) != 0) {
        pst_local_abort(ctx, srv, n);
        free(conf);
        free(srv);
        return PST_EXIT_ERROR;
    }

    printf("Started %d pstripe servers in %s:\n", n, o->dir);
    for (int i = 0; i < n; i++) {
        printf("  server%-3d pid %-8d %-22s data %s/server%d/  log %s/server%d.log\n", i,
               (int)srv[i].pid, srv[i].addr, o->dir, i, o->dir, i);
    }
    printf("\nTo use them:\n"
           "  export PSTRIPE_CONFIG=%s\n"
           "  pstripe cp FILE pstripe:/FILE     # copy a file in (and back out)\n"
           "  pstripe ls -l\n"
           "  pstripe stat /FILE\n"
           "  pstripe run -- mpiexec -n 2 ./prog pstripe:/out\n"
           "Stop them with: pstripe local stop --dir %s\n",
           path, o->dir);
    free(conf);
    free(srv);
    return PST_EXIT_OK;
}

/* --- stop ------------------------------------------------------------------------- */

typedef struct pst_local_dirs {
    const char *dir;
} pst_local_dirs_t;

static int pst_daemon_alive(pid_t pid, int i, void *arg)
{
    const pst_local_dirs_t *d = arg;
    char datadir[PATH_MAX];

    pst_local_path(datadir, sizeof(datadir), d->dir, i, "");
    return pst_local_is_daemon(pid, datadir);
}

static int pst_local_stop(pst_ctx_t *ctx, pst_local_opts_t *o)
{
    pst_local_dirs_t dirs = {o->dir};
    char path[PATH_MAX];
    int n = pst_local_count(o->dir);
    int nrunning = 0, ret = PST_EXIT_OK;
    pid_t *pids, *orig;

    if (n == 0) {
        pst_msg(ctx, "%s: no pstripe local cluster here (no server<i>/ or server<i>.pid)",
                o->dir);
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
    for (int i = 0; i < n; i++) {
        pids[i] = orig[i] = pst_local_running(o->dir, i);
        if (pids[i] > 0) {
            if (kill(pids[i], SIGTERM) != 0 && errno != ESRCH) {
                pst_msg(ctx, "kill server%d (pid %d): %s", i, (int)pids[i], strerror(errno));
                ret = PST_EXIT_ERROR;
            }
            nrunning++;
        }
    }

    if (pst_wait_exit(pids, n, o->timeout, pst_daemon_alive, &dirs) > 0) {
        for (int i = 0; i < n; i++) {
            if (pids[i] > 0) {
                pst_msg(ctx, "warning: server%d (pid %d) did not exit within %gs of SIGTERM; "
                             "sending SIGKILL (see %s/server%d.log)",
                        i, (int)pids[i], o->timeout, o->dir, i);
                kill(pids[i], SIGKILL);
            }
        }
        if (pst_wait_exit(pids, n, 10.0, pst_daemon_alive, &dirs) > 0) {
            for (int i = 0; i < n; i++) {
                if (pids[i] > 0) {
                    pst_msg(ctx, "server%d (pid %d) survived SIGKILL", i, (int)pids[i]);
                    ret = PST_EXIT_ERROR;
                }
            }
        }
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
    free(pids);
    free(orig);
    return ret;
}

/* --- status ------------------------------------------------------------------------- */

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
            addrs      = a;
            addrs[n++] = strdup(tok);
        }
    }
    free(line);
    fclose(f);
    *naddrs = n;
    return addrs;
}

static int pst_local_status(pst_ctx_t *ctx, pst_local_opts_t *o)
{
    char datadir[PATH_MAX];
    int naddrs, nrunning = 0;
    char **addrs = pst_local_read_addrs(o->dir, &naddrs);
    int n        = pst_local_count(o->dir);

    if (n == 0) {
        pst_msg(ctx, "%s: no pstripe local cluster here (no server<i>/ or server<i>.pid)",
                o->dir);
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
               alive ? "running" : (pid > 0 ? "dead" : "stopped"),
               (i < naddrs) ? addrs[i] : "-", datadir);
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
    optind  = 0;
    ret     = pst_parse_local_opts(ctx, argc - 1, argv + 1, &o);
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

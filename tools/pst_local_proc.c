/*
 * pst_local_proc.c: the daemon processes of `pstripe local` (see pst_local.c
 * for the commands and the cluster directory).
 *
 * Start-up without sleeps, the way libuv's tests start helpers: each daemon
 * is forked with `--listen 127.0.0.1:0 --ready-fd N`, N being the write end
 * of a pipe. Once all its workers listen it writes its real address there and
 * closes it; if it fails it exits and the pipe reads EOF. The tool polls all
 * the pipes with one deadline, so N daemons start in parallel, and a daemon
 * that dies or hangs is reported with the end of its log. The children are
 * detached (setsid, stdio to the log) and outlive the tool.
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
#include "pst_local.h"

#ifndef PST_SBINDIR
#define PST_SBINDIR "/usr/local/sbin"
#endif
#ifndef PST_BINDIR
#define PST_BINDIR "/usr/local/bin"
#endif

void pst_local_path(char *buf, size_t len, const char *dir, int i, const char *suffix)
{
    pst_snprintf(buf, len, "%s/server%d%s", dir, i, suffix);
}

pid_t pst_local_read_pid(const char *dir, int i)
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

/* Read /proc/<pid>/<name> into buf (NUL-terminated); its length, or -1 if
 * it cannot be opened (the process is gone). */
static ssize_t pst_read_proc(pid_t pid, const char *name, char *buf, size_t size)
{
    char path[64];
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
    f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return (ssize_t)n;
}

/* Is /proc/<pid>/<stat_name> a task that has not exited (not gone, not a
 * zombie)? */
static int pst_task_live(pid_t pid, const char *stat_name)
{
    char buf[512], state = '?';
    char *p;

    if (pst_read_proc(pid, stat_name, buf, sizeof(buf)) < 0) {
        return 0;
    }
    p = strrchr(buf, ')'); /* the command name may contain spaces */
    if (p != NULL && p[1] == ' ') {
        state = p[2];
    }
    return state != 'Z' && state != 'X' && state != '?';
}

static int pst_proc_live(pid_t pid)
{
    return pst_task_live(pid, "stat");
}

/* Does any thread of pid still run? A killed process's leader can be a
 * zombie while its other threads finish their disk I/O, and they hold its
 * files (and locks) until the last one has exited. */
static int pst_threads_live(pid_t pid)
{
    char path[64], name[300];
    struct dirent *e;
    int live = 0;
    DIR *d;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    d = opendir(path);
    if (d == NULL) {
        return 0;
    }
    while (!live && (e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.') {
            snprintf(name, sizeof(name), "task/%s/stat", e->d_name);
            live = pst_task_live(pid, name);
        }
    }
    closedir(d);
    return live;
}

/*
 * 1 if pid is alive (not a zombie) and is the daemon of data directory
 * datadir: its command line has "--data" followed by datadir.
 */
static int pst_local_is_daemon(pid_t pid, const char *datadir)
{
    char buf[8192];
    ssize_t n;
    char *p;

    if (!pst_proc_live(pid)) {
        return 0;
    }
    n = pst_read_proc(pid, "cmdline", buf, sizeof(buf));
    for (p = buf; n > 0 && p < buf + n; p += strlen(p) + 1) {
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

pid_t pst_local_running(const char *dir, int i)
{
    char datadir[PATH_MAX];
    pid_t pid = pst_local_read_pid(dir, i);

    pst_local_path(datadir, sizeof(datadir), dir, i, "");
    return (pid > 0 && pst_local_is_daemon(pid, datadir)) ? pid : 0;
}

/* pst_alive_fn_t: pid is exiting: some thread still runs, but the leader
 * is a zombie or its memory (so its command line) is gone. A daemon killed
 * a moment ago is in that state while its last disk I/O ends, and holds
 * its data directory's lock until its last thread has exited. */
static int pst_exiting(pid_t pid, int i, void *arg)
{
    char buf[16];

    (void)i;
    (void)arg;
    return pst_threads_live(pid) &&
        (!pst_proc_live(pid) || pst_read_proc(pid, "cmdline", buf, sizeof(buf)) == 0);
}

void pst_local_wait_exiting(const char *dir, int i)
{
    pid_t pid = pst_local_read_pid(dir, i);

    if (pid > 0 && pst_exiting(pid, i, NULL)) {
        pst_wait_exit(&pid, 1, 10.0, pst_exiting, NULL);
    }
}

int pst_daemon_alive(pid_t pid, int i, void *arg)
{
    char datadir[PATH_MAX];

    pst_local_path(datadir, sizeof(datadir), (const char *)arg, i, "");
    return pst_local_is_daemon(pid, datadir);
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
int pst_wait_exit(pid_t *pids, int n, double timeout, pst_alive_fn_t alive, void *arg)
{
    struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
    uint64_t deadline = ps_time_ns() + (uint64_t)(timeout * 1e9);
    int left;

    for (int i = 0; i < n; i++) {
        pfd[i].fd = (pids[i] > 0 && pfd != NULL) ? pst_pidfd_open(pids[i]) : -1;
        pfd[i].events = POLLIN;
    }
    for (;;) {
        int unwatched = 0;
        left = 0;
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
const char *pst_local_server_binary(char *buf, size_t len)
{
    const char *found = pst_find_program("PSTRIPE_SERVER", "server/pstripe-server", buf, len);

    if (found != NULL) {
        return found;
    }
    if (access(PST_SBINDIR "/pstripe-server", X_OK) != 0 &&
        access(PST_BINDIR "/pstripe-server", X_OK) == 0) {
        return PST_BINDIR "/pstripe-server";
    }
    return PST_SBINDIR "/pstripe-server";
}

/* In the child: detach, redirect stdio to the log, exec the daemon. Never
 * returns; failures are written to the log and end the child with 127. */
static void pst_local_exec(const pst_local_opts_t *o, int i, const char *binary, const char *listen,
                           int ready_fd)
{
    char datadir[PATH_MAX], logpath[PATH_MAX], fdstr[16], index[48], size[48];
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
    argv[argc++] = listen != NULL ? listen : "127.0.0.1:0";
    argv[argc++] = "--ready-fd";
    argv[argc++] = fdstr;
    if (o->workers != NULL) {
        argv[argc++] = "--workers";
        argv[argc++] = o->workers;
    }
    /* its place in the cluster, so that it refuses CREATEs of other servers' paths */
    snprintf(index, sizeof(index), "server_index=%d", i);
    snprintf(size, sizeof(size), "cluster_size=%d", o->cluster_size);
    argv[argc++] = "--set";
    argv[argc++] = index;
    argv[argc++] = "--set";
    argv[argc++] = size;
    /* the servers run as the user of the clients: shared memory is safe */
    argv[argc++] = "--set";
    argv[argc++] = "shm=yes";
    /* beside the MPI processes they serve, which MPI binds to cores: a
     * worker pinned to a core where a rank busy-polls waited seconds */
    argv[argc++] = "--set";
    argv[argc++] = "pin=none";
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
    start = n;
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
void pst_local_abort(pst_ctx_t *ctx, pst_server_t *srv, int n)
{
    pid_t *pids = calloc((size_t)n, sizeof(*pids));

    if (pids == NULL) {
        return;
    }
    for (int i = 0; i < n; i++) {
        if (srv[i].running) {
            continue; /* not ours to stop */
        }
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
        if (srv[i].pid > 0 && !srv[i].running) {
            waitpid(srv[i].pid, NULL, 0); /* reap: exited, or SIGKILLed just now */
        }
    }
    free(pids);
}

/* Wait for every daemon's address on its ready pipe, until the deadline. */
void pst_local_wait_ready(pst_server_t *srv, int n, double timeout)
{
    struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
    uint64_t deadline = ps_time_ns() + (uint64_t)(timeout * 1e9);

    if (pfd == NULL) {
        return;
    }
    for (;;) {
        int waiting = 0;
        for (int i = 0; i < n; i++) {
            pfd[i].fd = srv[i].ready_fd; /* -1: ignored by poll() */
            pfd[i].events = POLLIN;
            waiting += (srv[i].ready_fd >= 0);
        }
        uint64_t now = ps_time_ns();
        if (waiting == 0 || now >= deadline) {
            break;
        }
        int nready = poll(pfd, (nfds_t)n, (int)((deadline - now + 999999) / 1000000));
        if (nready < 0 && errno != EINTR) {
            break;
        }
        for (int i = 0; i < n && nready > 0; i++) {
            pst_server_t *s = &srv[i];
            if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
            ssize_t got =
                read(s->ready_fd, s->addr + s->addr_len, sizeof(s->addr) - 1 - s->addr_len);
            if (got < 0 && errno == EINTR) {
                continue;
            }
            if (got > 0) {
                s->addr_len += (size_t)got;
                s->addr[s->addr_len] = '\0';
                char *nl = strchr(s->addr, '\n');
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

/* Fork server i with the write end of a new pipe as its ready fd. */
static ps_status_t pst_local_spawn_one(pst_ctx_t *ctx, const pst_local_opts_t *o, int i,
                                       const char *binary, pst_server_t *s)
{
    char path[PATH_MAX];
    ps_status_t status;
    int pipefd[2];

    s->ready_fd = -1;
    pst_local_path(path, sizeof(path), o->dir, i, "");
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        status = ps_status_from_errno(errno);
        pst_msg(ctx, "cannot create %s: %s", path, strerror(errno));
        return status;
    }
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        status = ps_status_from_errno(errno);
        pst_msg(ctx, "pipe: %s", strerror(errno));
        return status;
    }
    s->pid = fork();
    if (s->pid == 0) {
        close(pipefd[0]);
        pst_local_exec(o, i, binary, s->listen, pipefd[1]);
    }
    close(pipefd[1]);
    if (s->pid < 0) {
        status = ps_status_from_errno(errno);
        pst_msg(ctx, "fork: %s", strerror(errno));
        close(pipefd[0]);
        s->pid = 0;
        return status;
    }
    s->ready_fd = pipefd[0];
    return PS_OK;
}

ps_status_t pst_local_spawn(pst_ctx_t *ctx, const pst_local_opts_t *o, const char *binary,
                            pst_server_t *srv, int n)
{
    ps_status_t status = PS_OK;

    fflush(NULL); /* nothing buffered may be written twice by the children */
    for (int i = 0; i < n && status == PS_OK; i++) {
        if (!srv[i].running) {
            status = pst_local_spawn_one(ctx, o, i, binary, &srv[i]);
        }
    }
    return status;
}

ps_status_t pst_local_report_unready(pst_ctx_t *ctx, const pst_local_opts_t *o, pst_server_t *srv,
                                     int n)
{
    ps_status_t status = PS_OK;
    char reason[128];

    for (int i = 0; i < n; i++) {
        if (srv[i].pid <= 0 || srv[i].ready) {
            continue;
        }
        if (srv[i].ready_fd >= 0) {
            snprintf(reason, sizeof(reason), "did not report its address within %gs", o->timeout);
            close(srv[i].ready_fd);
            srv[i].ready_fd = -1;
            status = PS_ERR_TIMEOUT;
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
        status = (status == PS_OK) ? PS_ERR_IO : status; /* it exited, or said why */
    }
    return status;
}

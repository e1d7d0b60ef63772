/*
 * pst_local_auth.c: how a local cluster authenticates its clients
 * (`pstripe local start --auth MODE`), kept in its directory:
 *
 *   key    DIR/auth.key: 32 random bytes (hex) created once, mode 0600;
 *          servers and client.conf name it (auth = key, auth_key_file).
 *   munge  a private munged: DIR/munge/{munge.key,sock,munged.pid,munged.log,
 *          seed}, started if it does not run, stopped by `local stop`;
 *          servers and client.conf name its socket (auth = munge,
 *          munge_socket). Needs root (munged --force) or the munge user.
 *          DIR/auth.key is made too: the servers' capability key
 *          (auth_key_file), never read by clients.
 *   none   nothing (servers warn that they serve anyone).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pst_local.h"

#define PST_MUNGED_WAIT_NS (10ull * 1000000000ull)

/* DIR/auth.key, created with a new random key if missing. */
static ps_status_t pst_local_key_create(pst_ctx_t *ctx, const char *path)
{
    uint8_t key[32];
    char hex[2 * sizeof(key) + 2];
    int fd;

    if (access(path, F_OK) == 0) {
        return PS_OK;
    }
    if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
        pst_msg(ctx, "getrandom for the cluster key: %s", strerror(errno));
        return PS_ERR_IO;
    }
    for (size_t i = 0; i < sizeof(key); i++) {
        snprintf(hex + 2 * i, 3, "%02x", key[i]);
    }
    hex[2 * sizeof(key)] = '\n';
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, hex, 2 * sizeof(key) + 1) != (ssize_t)(2 * sizeof(key) + 1)) {
        pst_msg(ctx, "cannot write the cluster key %s: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        return PS_ERR_IO;
    }
    close(fd);
    return PS_OK;
}

/* Run argv to completion; 0 if it exited with status 0. */
static int pst_run(const char *const *argv)
{
    int st;
    pid_t pid = fork();

    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
        }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid) {
        return -1;
    }
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Pid of DIR/munge's munged if it runs, else 0. */
static pid_t pst_munged_running(const char *dir)
{
    char path[PATH_MAX], exe[PATH_MAX], link[64];
    long pid = 0;
    FILE *f;

    snprintf(path, sizeof(path), "%s/munge/munged.pid", dir);
    f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    if (fscanf(f, "%ld", &pid) != 1 || pid <= 0) {
        pid = 0;
    }
    fclose(f);
    snprintf(link, sizeof(link), "/proc/%ld/exe", pid);
    ssize_t n = pid > 0 ? readlink(link, exe, sizeof(exe) - 1) : -1;
    if (n <= 0) {
        return 0;
    }
    exe[n] = '\0';
    return strstr(exe, "munged") != NULL ? (pid_t)pid : 0;
}

static ps_status_t pst_munged_start(pst_ctx_t *ctx, const char *dir)
{
    char mdir[PATH_MAX], key[PATH_MAX + 16], sock[PATH_MAX + 16], pid[PATH_MAX + 16],
        log[PATH_MAX + 16], seed[PATH_MAX + 16], a_key[PATH_MAX + 32], a_sock[PATH_MAX + 32],
        a_pid[PATH_MAX + 32], a_log[PATH_MAX + 32], a_seed[PATH_MAX + 32];

    if (pst_munged_running(dir) != 0) {
        return PS_OK;
    }
    snprintf(mdir, sizeof(mdir), "%s/munge", dir);
    if (mkdir(mdir, 0755) != 0 && errno != EEXIST) {
        pst_msg(ctx, "cannot create %s: %s", mdir, strerror(errno));
        return PS_ERR_IO;
    }
    snprintf(key, sizeof(key), "%s/munge.key", mdir);
    snprintf(sock, sizeof(sock), "%s/sock", mdir);
    snprintf(pid, sizeof(pid), "%s/munged.pid", mdir);
    snprintf(log, sizeof(log), "%s/munged.log", mdir);
    snprintf(seed, sizeof(seed), "%s/seed", mdir);
    snprintf(a_key, sizeof(a_key), "--keyfile=%s", key);
    if (access(key, F_OK) != 0) {
        const char *argv[] = {"mungekey", "--create", a_key, NULL};
        if (pst_run(argv) != 0) {
            pst_msg(ctx, "mungekey --create %s failed (is the munge package installed?)", a_key);
            return PS_ERR_IO;
        }
    }
    snprintf(a_key, sizeof(a_key), "--key-file=%s", key);
    snprintf(a_sock, sizeof(a_sock), "--socket=%s", sock);
    snprintf(a_pid, sizeof(a_pid), "--pid-file=%s", pid);
    snprintf(a_log, sizeof(a_log), "--log-file=%s", log);
    snprintf(a_seed, sizeof(a_seed), "--seed-file=%s", seed);
    /* munged returns once it is ready to serve (its parent waits for the
     * daemon's initialization), so the socket exists after this. */
    const char *argv[] = {"munged", "--force", a_sock, a_key, a_pid, a_log, a_seed, NULL};
    if (pst_run(argv) != 0 || pst_munged_running(dir) == 0) {
        pst_msg(ctx, "munged did not start (see %s; it needs root or the munge user)", log);
        return PS_ERR_IO;
    }
    return PS_OK;
}

ps_status_t pst_local_auth_start(pst_ctx_t *ctx, const pst_local_opts_t *o, pst_local_auth_t *a)
{
    const char *mode = o->auth != NULL ? o->auth : "key";
    ps_status_t status;

    memset(a, 0, sizeof(*a));
    if (strcmp(mode, "key") == 0) {
        snprintf(a->path, sizeof(a->path), "%s/auth.key", o->dir);
        status = pst_local_key_create(ctx, a->path);
        snprintf(a->set_mode, sizeof(a->set_mode), "auth=key");
        snprintf(a->set_path, sizeof(a->set_path), "auth_key_file=%s", a->path);
        snprintf(a->conf, sizeof(a->conf), "auth = key\nauth_key_file = %s\n", a->path);
    } else if (strcmp(mode, "munge") == 0) {
        snprintf(a->path, sizeof(a->path), "%s/munge/sock", o->dir);
        status = pst_munged_start(ctx, o->dir);
        snprintf(a->set_mode, sizeof(a->set_mode), "auth=munge");
        snprintf(a->set_path, sizeof(a->set_path), "munge_socket=%s", a->path);
        snprintf(a->conf, sizeof(a->conf), "auth = munge\nmunge_socket = %s\n", a->path);
        if (status == PS_OK) {
            char key[PATH_MAX + 16];
            snprintf(key, sizeof(key), "%s/auth.key", o->dir);
            status = pst_local_key_create(ctx, key);
            snprintf(a->set_key, sizeof(a->set_key), "auth_key_file=%s", key);
        }
    } else if (strcmp(mode, "none") == 0) {
        status = PS_OK;
        snprintf(a->set_mode, sizeof(a->set_mode), "auth=none");
        snprintf(a->conf, sizeof(a->conf), "auth = none\n");
    } else {
        pst_msg(ctx, "--auth: '%s' is not munge, key or none", mode);
        return PS_ERR_INVALID;
    }
    return status;
}

void pst_local_auth_stop(const char *dir)
{
    pid_t pid = pst_munged_running(dir);

    if (pid != 0) {
        /* wait for its exit (at most 10 s) on a pidfd, so that a start
         * right after finds no stale munged */
        int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
        kill(pid, SIGTERM);
        if (pfd >= 0) {
            struct pollfd p = {.fd = pfd, .events = POLLIN};
            poll(&p, 1, (int)(PST_MUNGED_WAIT_NS / 1000000));
            close(pfd);
        }
    }
}

/*
 * pss_check.c: check a data directory's metadata store before using it.
 *
 * LMDB keeps no checksums and maps its file into memory: a truncated file
 * makes a reader fault (SIGBUS) and overwritten pages can send it anywhere.
 * An empty or missing file is silently a new, empty store, with a new
 * server id, which would orphan every object of the directory. So the
 * store is read first by a child process that walks the whole namespace
 * and reports what it found through a pipe; a child that dies of a signal
 * or reports an LMDB error means a damaged file, and the server refuses to
 * start with a message that says what to do, instead of crashing or
 * serving an empty namespace. The walk costs one read of the store.
 */
#include "pss_check.h"

#include "ps_proto.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the child sends back. */
typedef struct pss_walk_result {
    int mdb_status; /* 0, or the LMDB/errno code that stopped the walk */
    uint64_t paths;
    uint64_t bad_entries;
    int has_server_id;
} pss_walk_result_t;

/* Object files under DIR/obj/XX/ (names not starting with '.'). */
static uint64_t pss_count_objects(const char *data_dir)
{
    char path[4096];
    uint64_t n = 0;
    struct dirent *d, *e;
    DIR *top, *sub;

    snprintf(path, sizeof(path), "%s/obj", data_dir);
    top = opendir(path);
    if (top == NULL) {
        return 0;
    }
    while ((d = readdir(top)) != NULL) {
        if (d->d_name[0] == '.') {
            continue;
        }
        snprintf(path, sizeof(path), "%s/obj/%s", data_dir, d->d_name);
        sub = opendir(path);
        if (sub == NULL) {
            continue;
        }
        while ((e = readdir(sub)) != NULL) {
            n += (e->d_name[0] != '.');
        }
        closedir(sub);
    }
    closedir(top);
    return n;
}

/* In the child: visit every entry of "paths" and the server id. */
static int pss_walk_txn(MDB_txn *txn, pss_walk_result_t *res)
{
    MDB_dbi paths, server;
    MDB_cursor *cur;
    MDB_val k, v;
    int mdb_status = mdb_dbi_open(txn, "paths", 0, &paths);

    if (mdb_status == MDB_NOTFOUND) {
        return 0; /* a store without a namespace yet */
    }
    if (mdb_status == 0) {
        mdb_status = mdb_cursor_open(txn, paths, &cur);
    }
    if (mdb_status != 0) {
        return mdb_status;
    }
    while ((mdb_status = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
        res->paths++;
        res->bad_entries += (v.mv_size < offsetof(ps_file_info_t, uid) || k.mv_size == 0);
    }
    mdb_cursor_close(cur);
    if (mdb_status != MDB_NOTFOUND) {
        return mdb_status;
    }
    if (mdb_dbi_open(txn, "server", 0, &server) == 0) {
        MDB_val key = {2, (void *)"id"};
        res->has_server_id = mdb_get(txn, server, &key, &v) == 0 && v.mv_size == 8;
    }
    return 0;
}

static void pss_walk_child(const char *meta_dir, int fd)
{
    pss_walk_result_t res = {0};
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;

    /* Die quietly of a fault (the parent reports it): no handler that UCX
     * installed at load time may print a backtrace into the server's log. */
    signal(SIGBUS, SIG_DFL);
    signal(SIGSEGV, SIG_DFL);
    signal(SIGFPE, SIG_DFL);
    signal(SIGILL, SIG_DFL);

    res.mdb_status = mdb_env_create(&env);
    if (res.mdb_status == 0) {
        mdb_env_set_maxdbs(env, 4);
        res.mdb_status = mdb_env_open(env, meta_dir, MDB_RDONLY, 0600);
    }
    if (res.mdb_status == 0) {
        res.mdb_status = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    }
    if (res.mdb_status == 0) {
        res.mdb_status = pss_walk_txn(txn, &res);
    }
    if (write(fd, &res, sizeof(res)) != (ssize_t)sizeof(res)) {
        _exit(3);
    }
    _exit(0); /* no cleanup: the mapping may be what is damaged */
}

/* Walk the store in a child; a problem (or "") in rep. */
static ps_status_t pss_walk(const char *meta_dir, pss_meta_report_t *rep)
{
    pss_walk_result_t res;
    int pipefd[2], wstatus;
    ssize_t got;
    pid_t pid;

    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        return ps_status_from_errno(errno);
    }
    pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        pss_walk_child(meta_dir, pipefd[1]);
    }
    close(pipefd[1]);
    if (pid < 0) {
        close(pipefd[0]);
        return ps_status_from_errno(errno);
    }
    do {
        got = read(pipefd[0], &res, sizeof(res));
    } while (got < 0 && errno == EINTR);
    close(pipefd[0]);
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(wstatus)) {
        snprintf(rep->problem, sizeof(rep->problem),
                 "reading meta/data.mdb killed the reader (SIG%s): the file is damaged "
                 "(truncated or overwritten)",
                 sigabbrev_np(WTERMSIG(wstatus)) ? sigabbrev_np(WTERMSIG(wstatus)) : "?");
    } else if (got != (ssize_t)sizeof(res)) {
        snprintf(rep->problem, sizeof(rep->problem), "the check of meta/data.mdb failed");
    } else if (res.mdb_status != 0) {
        snprintf(rep->problem, sizeof(rep->problem), "meta/data.mdb cannot be read: %s",
                 mdb_strerror(res.mdb_status));
    } else {
        rep->paths = res.paths;
        rep->bad_entries = res.bad_entries;
        rep->has_server_id = res.has_server_id;
    }
    return PS_OK;
}

ps_status_t pss_meta_check(const char *data_dir, pss_meta_report_t *rep)
{
    char meta_dir[4096], file[4200];
    struct stat st;
    ps_status_t status;

    memset(rep, 0, sizeof(*rep));
    snprintf(meta_dir, sizeof(meta_dir), "%s/meta", data_dir);
    snprintf(file, sizeof(file), "%s/data.mdb", meta_dir);
    rep->objects = pss_count_objects(data_dir);
    rep->store_found = stat(file, &st) == 0 && st.st_size > 0;
    if (rep->store_found) {
        status = pss_walk(meta_dir, rep);
        if (status != PS_OK) {
            return status;
        }
        if (rep->problem[0] == '\0' && rep->bad_entries > 0) {
            snprintf(rep->problem, sizeof(rep->problem),
                     "meta/data.mdb holds %llu entries that are not file records: it is damaged",
                     (unsigned long long)rep->bad_entries);
        }
    }
    if (rep->problem[0] == '\0' && rep->objects > 0 && !rep->has_server_id) {
        snprintf(rep->problem, sizeof(rep->problem),
                 "meta/data.mdb %s, but obj/ holds %llu objects: their names would be lost",
                 rep->store_found ? "holds no namespace and no server id (damaged, or emptied)"
                                  : "is missing or empty",
                 (unsigned long long)rep->objects);
    }
    return PS_OK;
}

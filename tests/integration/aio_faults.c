/*
 * aio_faults.c: preloaded into a pstripe-server by test_server
 * (LD_PRELOAD), a disk that misbehaves on cue through libaio's io_submit:
 *
 * - while the file named by $PSTEST_AIO_REFUSE exists, io_submit refuses
 *   every I/O (EAGAIN, as when the kernel has no room for more). The
 *   server's I/O that the kernel refuses at submission completes inside
 *   its start, the one path where a job finishes before the code that
 *   started it returns;
 * - with $PSTEST_AIO_WRITE_DELAY_MS set, every write is accepted at once
 *   and submitted that many milliseconds later by a thread of its own: a
 *   slow disk, whose writes stay in flight while the server goes on (its
 *   completion comes through the server's event fd as usual);
 * - with $PSTEST_SYNC_THREAD set, an fdatasync or fsync called by a thread
 *   of that name waits $PSTEST_SYNC_DELAY_MS (0 if unset) and then, with
 *   $PSTEST_SYNC_FAIL set, fails with EIO (a disk whose flush fails, for
 *   that thread of the server alone; if $PSTEST_SYNC_FAIL is a path, only
 *   while that file exists), else flushes: a slow flush. With
 *   $PSTEST_SYNC_COUNT naming a file, each such call first appends a byte
 *   to it: a count of that thread's flushes;
 * - while the file named by $PSTEST_XATTR_FAIL exists, fsetxattr of an
 *   object's size attribute fails with ENOSPC (a full disk, whose next
 *   block an attribute that does not fit in the inode needs);
 * - while the file named by $PSTEST_PWRITE_FAIL exists, pwrite fails with
 *   EIO (the server's one synchronous data write, the zeroing of a block's
 *   tail past a new size; a disk that fails it);
 * - with $PSTEST_META_DELAY_THREAD set, LMDB's mdb_txn_commit called by a
 *   thread of that name returns $PSTEST_META_DELAY_MS milliseconds after
 *   the commit (visible to every reader by then): a worker preempted
 *   between its commit and the code after it;
 * - while the file named by $PSTEST_KILL_AT exists, the call it names
 *   ("fsetxattr": of an object's size attribute, or "ftruncate") kills the
 *   server (SIGKILL) as it is called: a crash at that step.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

typedef int (*submit_fn)(io_context_t, long, struct iocb *[]);

struct late_write {
    submit_fn real;
    io_context_t ctx;
    struct iocb *iocb;
    long delay_ms;
};

static void *submit_late(void *arg)
{
    struct late_write *lw = arg;
    struct timespec ts = {lw->delay_ms / 1000, (lw->delay_ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
    int r = lw->real(lw->ctx, 1, &lw->iocb);
    if (r != 1) {
        /* a test fixture: a lost write must not pass unseen (the log says why) */
        fprintf(stderr, "aio_faults: late io_submit of a write failed: %s\n", strerror(-r));
        abort();
    }
    free(lw);
    return NULL;
}

/* Hand iocb to a thread that submits it delay_ms from now; 0 if none could start. */
static int delay_write(submit_fn real, io_context_t ctx, struct iocb *iocb, long delay_ms)
{
    struct late_write *lw = malloc(sizeof(*lw));
    pthread_t t;

    if (lw == NULL) {
        return 0;
    }
    *lw = (struct late_write){real, ctx, iocb, delay_ms};
    if (pthread_create(&t, NULL, submit_late, lw) != 0) {
        free(lw);
        return 0;
    }
    pthread_detach(t);
    return 1;
}

/* fdatasync or fsync (real) as $PSTEST_SYNC_THREAD and the rest say. */
static int faulty_sync(int (*real)(int), int fd)
{
    const char *who = getenv("PSTEST_SYNC_THREAD"), *fail = getenv("PSTEST_SYNC_FAIL");
    char name[16] = "";

    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    if (who == NULL || pthread_getname_np(pthread_self(), name, sizeof(name)) != 0 ||
        strcmp(name, who) != 0) {
        return real(fd);
    }
    const char *count = getenv("PSTEST_SYNC_COUNT");
    if (count != NULL) {
        int cfd = open(count, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (cfd >= 0) {
            (void)!write(cfd, "s", 1);
            close(cfd);
        }
    }
    const char *delay = getenv("PSTEST_SYNC_DELAY_MS");
    long ms = delay != NULL ? atol(delay) : 0;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    if (fail == NULL || (fail[0] == '/' && access(fail, F_OK) != 0)) {
        return real(fd);
    }
    errno = EIO;
    return -1;
}

int fdatasync(int fd)
{
    static int (*real)(int);

    if (real == NULL) {
        real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    }
    return faulty_sync(real, fd);
}

int fsync(int fd)
{
    static int (*real)(int);

    if (real == NULL) {
        real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    }
    return faulty_sync(real, fd);
}

int io_submit(io_context_t ctx, long nr, struct iocb *iocbs[])
{
    static submit_fn real;
    const char *trigger = getenv("PSTEST_AIO_REFUSE");
    const char *delay = getenv("PSTEST_AIO_WRITE_DELAY_MS");
    long i;

    if (trigger != NULL && access(trigger, F_OK) == 0) {
        return -EAGAIN;
    }
    if (real == NULL) {
        real = (submit_fn)dlsym(RTLD_NEXT, "io_submit");
        if (real == NULL) {
            return -ENOSYS;
        }
    }
    if (delay == NULL) {
        return real(ctx, nr, iocbs);
    }
    for (i = 0; i < nr; i++) {
        int late = iocbs[i]->aio_lio_opcode == IO_CMD_PWRITE &&
                   delay_write(real, ctx, iocbs[i], atol(delay));
        int r = late ? 1 : real(ctx, 1, &iocbs[i]);
        if (r != 1) {
            return i > 0 ? i : r; /* as io_submit: the count taken, else its error */
        }
    }
    return nr;
}

/* SIGKILL this process if $PSTEST_KILL_AT's file exists and names call. */
static void kill_at(const char *call)
{
    const char *trigger = getenv("PSTEST_KILL_AT");
    char named[32] = "";
    FILE *f = trigger != NULL ? fopen(trigger, "r") : NULL;

    if (f == NULL) {
        return;
    }
    if (fgets(named, sizeof(named), f) != NULL && strncmp(named, call, strlen(call)) == 0) {
        raise(SIGKILL);
    }
    fclose(f);
}

int ftruncate(int fd, off_t length)
{
    static int (*real)(int, off_t);

    if (real == NULL) {
        real = (int (*)(int, off_t))dlsym(RTLD_NEXT, "ftruncate");
    }
    kill_at("ftruncate");
    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return real(fd, length);
}

int fsetxattr(int fd, const char *name, const void *value, size_t size, int flags)
{
    static int (*real)(int, const char *, const void *, size_t, int);
    const char *fail = getenv("PSTEST_XATTR_FAIL");

    if (real == NULL) {
        real = (int (*)(int, const char *, const void *, size_t, int))dlsym(RTLD_NEXT, "fsetxattr");
    }
    if (strcmp(name, "user.pstripe.size") == 0) {
        kill_at("fsetxattr");
    }
    if (fail != NULL && strcmp(name, "user.pstripe.size") == 0 && access(fail, F_OK) == 0) {
        errno = ENOSPC;
        return -1;
    }
    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return real(fd, name, value, size, flags);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset)
{
    static ssize_t (*real)(int, const void *, size_t, off_t);
    const char *fail = getenv("PSTEST_PWRITE_FAIL");

    if (real == NULL) {
        real = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    }
    if (fail != NULL && access(fail, F_OK) == 0) {
        errno = EIO;
        return -1;
    }
    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return real(fd, buf, count, offset);
}

struct MDB_txn;

int mdb_txn_commit(struct MDB_txn *txn)
{
    static int (*real)(struct MDB_txn *);
    const char *who = getenv("PSTEST_META_DELAY_THREAD");
    char name[16] = "";

    if (real == NULL) {
        real = (int (*)(struct MDB_txn *))dlsym(RTLD_NEXT, "mdb_txn_commit");
    }
    if (real == NULL) {
        return ENOSYS;
    }
    int rc = real(txn);
    if (who != NULL && pthread_getname_np(pthread_self(), name, sizeof(name)) == 0 &&
        strcmp(name, who) == 0) {
        const char *delay = getenv("PSTEST_META_DELAY_MS");
        long ms = delay != NULL ? atol(delay) : 0;
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return rc;
}

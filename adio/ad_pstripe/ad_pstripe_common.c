/*
 * ad_pstripe_common.c: the process's connection, the error border between
 * pstripe status codes and MPI error classes, the driver's collective
 * waits, and small helpers.
 */

#include "ad_pstripe.h"
#include "ps_log.h"

#include <sched.h>
#include <time.h>

pstripe_fs_t *ADIOI_PSTRIPE_fs_handle = NULL;
static int ADIOI_PSTRIPE_Keyval = MPI_KEYVAL_INVALID;
static int ADIOI_PSTRIPE_nfiles = 0;    /* files open on the connection */
static int ADIOI_PSTRIPE_server_here = 0;       /* a server runs on this host */

/* Names, in the client library, of the tunables a file may set by hints
 * (ADIOI_PSTRIPE_OPT_...). They belong to the library's file handle: each
 * file's requests use its own values, whatever other files set. */
static const char *const opt_names[ADIOI_PSTRIPE_NOPTS] = {
    "buffer_size", "buffer_count", "max_regions"
};

static int ADIOI_PSTRIPE_End(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state)
{
    if (ADIOI_PSTRIPE_fs_handle != NULL) {
        if (ADIOI_PSTRIPE_nfiles == 0) {
            pstripe_disconnect(ADIOI_PSTRIPE_fs_handle);
        } else {
            /* the library needs its files closed before a disconnect; a
             * program that did not close its files leaves the connection
             * to be torn down by exit, after their buffered writes are
             * sent (on a POSIX file system they would be there) */
            int nfailed = pstripe_wbuf_sync_all();

            if (nfailed == 0)
                FPRINTF(stderr, "pstripe: %d file(s) still open at MPI_Finalize (close them "
                        "first); their buffered writes were sent\n", ADIOI_PSTRIPE_nfiles);
            else
                FPRINTF(stderr, "pstripe: %d file(s) still open at MPI_Finalize (close them "
                        "first); the buffered writes of %d of them failed (data lost)\n",
                        ADIOI_PSTRIPE_nfiles, nfailed);
        }
        ADIOI_PSTRIPE_fs_handle = NULL;
    }
    ADIOI_PSTRIPE_View_runs_end();
    MPI_Comm_free_keyval(&keyval);
    ADIOI_PSTRIPE_Keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* Whether any of the connection's servers runs on this host. */
static int server_on_this_host(pstripe_fs_t * fs)
{
    int i;

    for (i = 0; i < pstripe_num_servers(fs); i++)
        if (pstripe_server_is_local(fs, i))
            return 1;
    return 0;
}

/*
 * The connection starts when the MPI library is loaded, in a thread of its
 * own beside MPI_Init, and the process's first pstripe call takes it
 * (pstripe_preconnect_take, lib/psc_preconnect.c): connecting costs 15-30
 * ms of CPU on this 2-vCPU host (UCX's context, 5 ms, and worker, 2 ms;
 * then each server's endpoint, HELLO and AUTH), which was all the first
 * open's before. The servers of
 * at most PRECONNECT_MAX_WORKERS workers get an endpoint to each worker
 * too (2-4 ms of CPU each; a file uses a few of a server's workers, so
 * beyond that the first operations make their own). A process's first
 * MPI_File_open with 2 processes, 2 local servers of 2 workers: 20-38 ms
 * without, 8-10 ms with the connection alone, 2.1-2.6 ms with the workers'
 * endpoints too; MPI_Init 73-77 ms -> 88-93 beside it on 2 vCPUs. A failure
 * is kept with its message for that first call, which reports it as its
 * own; the next call connects again. PSTRIPE_PRECONNECT=0 connects at the
 * first call instead. Without a client config pstripe_connect fails at
 * once, before UCX.
 */
#define PRECONNECT_MAX_WORKERS 4

__attribute__((constructor))
static void Preconnect_start(void)
{
    pstripe_preconnect_start(PRECONNECT_MAX_WORKERS);
}

/* Connect once per process (pstripe_connect(NULL): $PSTRIPE_CONFIG, then
 * the default paths; or the connection started at load) and arrange the
 * disconnect at MPI_Finalize. */
void ADIOI_PSTRIPE_Init(int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_INIT";
    pstripe_fs_t *fs = NULL;
    ps_status_t rc;

    *error_code = MPI_SUCCESS;
    if (ADIOI_PSTRIPE_fs_handle != NULL)
        return;

    if (!pstripe_preconnect_take(&fs, &rc))
        rc = pstripe_connect(NULL, &fs);
    if (rc != PS_OK) {
        *error_code = ADIOI_PSTRIPE_err(myname, "connect to the servers", NULL, __LINE__, rc,
                                        NULL);
        return;
    }
    ADIOI_PSTRIPE_fs_handle = fs;
    ADIOI_PSTRIPE_server_here = server_on_this_host(fs);

    if (ADIOI_PSTRIPE_Keyval == MPI_KEYVAL_INVALID) {
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, ADIOI_PSTRIPE_End,
                               &ADIOI_PSTRIPE_Keyval, NULL);
        MPI_Comm_set_attr(MPI_COMM_SELF, ADIOI_PSTRIPE_Keyval, NULL);
    }
}

/* The one border between pstripe status codes and MPI error classes (as
 * ADIOI_DAOS_err is for DAOS). The message names the operation, the file
 * and the reason: detail if given (a message another process sent), else
 * the library's detailed message for the calling thread's last failure. */
int ADIOI_PSTRIPE_err(const char *myname, const char *what, const char *filename,
                      int line, int status, const char *detail)
{
    char msg[1024];
    const char *generic;
    int error_class;

    if (status == PS_OK)
        return MPI_SUCCESS;

    if (detail == NULL)
        detail = pstripe_last_error();
    if (detail == NULL || detail[0] == '\0')
        detail = pstripe_strerror(status);
    if (filename != NULL && strstr(detail, filename) != NULL)
        snprintf(msg, sizeof(msg), "pstripe: %s", detail); /* "cannot open /f: ..." */
    else
        snprintf(msg, sizeof(msg), "pstripe: %s%s%s: %s", what,
                 filename ? " " : "", filename ? filename : "", detail);

    switch (status) {
        case PS_ERR_NO_ENTRY:
        case PS_ERR_STALE:     /* removed while open */
            error_class = MPI_ERR_NO_SUCH_FILE;
            generic = "**filenoexist";
            break;
        case PS_ERR_EXISTS:
            error_class = MPI_ERR_FILE_EXISTS;
            generic = "**fileexist";
            break;
        case PS_ERR_ACCESS:
            error_class = MPI_ERR_ACCESS;
            generic = "**fileaccess";
            break;
        case PS_ERR_NO_SPACE:
            error_class = MPI_ERR_NO_SPACE;
            generic = "**filenospace";
            break;
        case PS_ERR_NO_MEMORY:
            error_class = MPI_ERR_NO_MEM;
            generic = "**allocmem";
            break;
        case PS_ERR_UNSUPPORTED:
            error_class = MPI_ERR_UNSUPPORTED_OPERATION;
            generic = "**fileopunsupported";
            break;
        case PS_ERR_BUSY:      /* a name being renamed between servers */
            error_class = MPI_ERR_FILE_IN_USE;
            generic = "**fileinuse";
            break;
        case PS_ERR_NAME_TOO_LONG:
            error_class = MPI_ERR_BAD_FILE;
            generic = "**filenamelong";
            break;
        case PS_ERR_BAD_NAME:
            error_class = MPI_ERR_BAD_FILE;
            generic = "**filename";
            break;
        case PS_ERR_INVALID:
            error_class = MPI_ERR_ARG;
            generic = "**arg";
            break;
        default:
            /* disk errors, timeouts, lost connections, protocol errors,
             * a server shutting down, no configuration */
            error_class = MPI_ERR_IO;
            generic = "**io";
            break;
    }
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, line,
                                error_class, generic, "%s", msg);
}

/* The pstripe path of a file name whose "pstripe:" prefix ROMIO may have
 * removed. Names are absolute in the pstripe namespace: a relative one is
 * left for the library to refuse ("pstripe paths start with '/'"), as the
 * tool and the Open MPI components refuse it. */
char *ADIOI_PSTRIPE_Path(const char *filename)
{
    if (strncmp(filename, "pstripe:", 8) == 0)
        filename += 8;
    return ADIOI_Strdup(filename);
}

ADIOI_PSTRIPE_fs *ADIOI_PSTRIPE_fs_alloc(void)
{
    ADIOI_PSTRIPE_fs *ps = ADIOI_Calloc(1, sizeof(*ps));

    ps->create_layout.first_server = -1;
    ps->listio_read = ADIOI_HINT_ENABLE;
    ps->listio_write = ADIOI_HINT_ENABLE;
    ps->lock_win = MPI_WIN_NULL;
    ps->write_behind = ADIOI_HINT_ENABLE;
    ps->wb_size = ADIOI_PSTRIPE_WB_SIZE_DEFAULT;
    ps->read_cache = ADIOI_HINT_ENABLE;
    ps->rc_size = ADIOI_PSTRIPE_RC_SIZE_DEFAULT;
    ps->rc_block = ADIOI_PSTRIPE_RC_BLOCK_DEFAULT;
    return ps;
}

void ADIOI_PSTRIPE_fs_free(ADIOI_PSTRIPE_fs * ps)
{
    int i;

    if (ps == NULL)
        return;
    ADIOI_PSTRIPE_Cache_release(ps);
    if (ps->path)
        ADIOI_Free(ps->path);
    for (i = 0; i < 3; i++)
        pstripe_buffer_free(ps->coll_buf[i]);
    if (ps->spare_regions)
        ADIOI_Free(ps->spare_regions);
    ADIOI_Free(ps);
}

/* A large buffer of the driver's (two-phase I/O's collective rounds):
 * whole huge pages where the system allows
 * (pstripe_buffer_alloc), so that a file's first use of it does not pay a
 * page fault per 4 KiB. Out of memory aborts, as ADIOI_Malloc does. Free
 * with pstripe_buffer_free. */
void *ADIOI_PSTRIPE_Buf_alloc(size_t size)
{
    void *buf = pstripe_buffer_alloc(size, NULL);

    if (buf == NULL) {
        FPRINTF(stderr, "pstripe: out of memory for a buffer of %zu bytes\n", size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return buf;
}

/*
 * Wait for a started collective (the driver's barriers and broadcasts of
 * one process's result; the program's blocking collectives where
 * ADIOI_PSTRIPE_Wait_politely says so) without spinning all the while:
 * the process that does the work (the root's fsync, a slower process's
 * last writes before a barrier) needs the servers, and they may share the
 * cores (a test machine, a client node that also runs a daemon); MPICH's
 * blocking collectives poll without pause. A spin first, so that a short
 * wait costs no wake-up, then sleeps growing to WAIT_PAUSE_MAX_NS (the
 * most a long wait is lengthened by). A failed test ends the wait with its
 * error (a blocking collective would have returned it; testing on would
 * never end). On 2 vCPUs a process that finished its writes of
 * pstripe-bench -p vector -w -e first spent 57% of its samples in MPICH's
 * polling inside MPI_File_sync's broadcast (perf record --call-graph
 * dwarf).
 *
 * The spin adapts to the waits the process sees (wait_adapt). A sleep
 * here lasts far longer than asked (Linux's timer slack of 50 us, a VM's
 * wake-up), and processes in a loop of short collectives fell into a
 * convoy with a fixed 50 us spin: one slept, the other's spin ran out
 * waiting for it and it slept too, and so on; 2 processes in a loop of
 * barriers with 0-20 us of work between them spent 25-133 us in each
 * (MPICH's own wait: 1-2 us). So a wait that slept and still ended within
 * 4 times the spin doubles the spin (up to WAIT_SPIN_MAX_NS), and a wait
 * of more than 8 times the spin halves it (down to WAIT_SPIN_MIN_NS):
 * waits shorter than a few wake-ups are spun, long ones slept. The same
 * loop now: 1-2 us a barrier with no work between, 3-9 us over the work
 * up to 300 us (spun), and with 1 ms of work 8-11 us over it on an eighth
 * of the CPU (slept).
 *
 * Where a sleep overshoots by more than 4 spins (100-300 us on this VM
 * under load) that rule never fires, and the convoy stayed: IOR's
 * collective 4 KiB calls (-a MPIIO -c -t 4k -b 4m, 2 processes) took
 * 0.19 ms each, every range gather a sleep waiting for the other
 * process's sleep (ROMIO on a local file: 7 us). So a wait also spins
 * for twice the recent overshoot of its sleeps (wait_woke, measured per
 * sleep), the cost of a sleep to the waiter and to the process that
 * then waits for it: a process whose peer slept sees it wake and the
 * pair leaves the convoy. Not inside the window after a flush (below),
 * where the others are at the servers too and the servers need the CPU:
 * spinning there cost HDF5's collective writes a tenth. Side by side
 * (3 runs each, IOR -w -r -C -e, MiB/s): -c -t 4k -b 4m writes 38-64 ->
 * 187-413, reads 39-570 -> 508-712; -c -t 4k -b 256k -s 16 with
 * --mpiio.useStridedDatatype writes 35-39 -> 186-259; -c -t 64k -b 4m -s
 * 8 writes 499-926 -> 919-1,216; HDF5's collective rows (5 alternations,
 * medians) chunked writes 657 -> 702, reads 1,105 -> 1,281, contiguous
 * writes 648 -> 658, reads 1,280 -> 1,284.
 *
 * A wait that starts right after this process flushed its buffered writes
 * (ADIOI_PSTRIPE_Wait_after_flush) yields instead of sleeping for as long
 * as that flush took, counted from its end: the other processes flush
 * too at such a point (a set_view, a sync, a message), and a flush is a
 * wait on the servers, not work for the CPU, so a process that yields
 * leaves them the CPU as a sleeping one does but sees their arrival at
 * once. A sleep there woke 100-300 us late on this VM, and the other
 * process then waited as long at the next collective: HDF5's collective
 * writes, one flush per H5Dwrite at its set_view, 0.62-0.71 -> 0.47-0.54
 * ms a call (issue 8's "Session 39"). Outside that window the waits are
 * as above: yielding through every wait cost the 64-byte collective
 * vector reads half their speed (the other process computes there).
 */
#define WAIT_SPIN_MIN_NS  50000
#define WAIT_SPIN_MAX_NS  1000000
#define WAIT_PAUSE_MIN_NS 10000
#define WAIT_PAUSE_MAX_NS 250000

static uint64_t wait_spin_ns = WAIT_SPIN_MIN_NS;
static uint64_t wait_wake_ns = WAIT_SPIN_MIN_NS;        /* a sleep's cost beyond its pause */
static uint64_t wait_yield_until_ns;    /* Wait_after_flush's window */

static uint64_t wait_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

void ADIOI_PSTRIPE_Wait_after_flush(uint64_t took_ns)
{
    __atomic_store_n(&wait_yield_until_ns, wait_now_ns() + took_ns, __ATOMIC_RELAXED);
}

static void wait_adapt(uint64_t spin, uint64_t waited, int slept)
{
    if (slept && waited < 4 * spin && spin < WAIT_SPIN_MAX_NS)
        __atomic_store_n(&wait_spin_ns, 2 * spin, __ATOMIC_RELAXED);
    else if (waited > 8 * spin && spin > WAIT_SPIN_MIN_NS)
        __atomic_store_n(&wait_spin_ns, spin / 2, __ATOMIC_RELAXED);
}

/* A sleep of pause ns took slept ns: the wake-up's cost beyond the pause,
 * averaged over the last few sleeps (of any wait), which a wait spins
 * twice over before it sleeps (at most WAIT_SPIN_MAX_NS in all: where
 * sleeps overshoot by more, the cores are oversubscribed and spinning
 * takes them from the others). Returns the new average. */
static uint64_t wait_woke(uint64_t wake, uint64_t slept, long pause)
{
    uint64_t over = slept > (uint64_t) pause ? slept - (uint64_t) pause : 0;

    wake = (3 * wake + (over < WAIT_SPIN_MAX_NS / 2 ? over : WAIT_SPIN_MAX_NS / 2)) / 4;
    __atomic_store_n(&wait_wake_ns, wake, __ATOMIC_RELAXED);
    return wake;
}

int ADIOI_PSTRIPE_Wait_collective(MPI_Request * req)
{
    uint64_t start = wait_now_ns(), now = start;
    uint64_t spin = __atomic_load_n(&wait_spin_ns, __ATOMIC_RELAXED);
    uint64_t wake = __atomic_load_n(&wait_wake_ns, __ATOMIC_RELAXED);
    long pause = WAIT_PAUSE_MIN_NS;
    int done = 0, slept = 0, rc;

    for (;;) {
        rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done)
            break;
        now = wait_now_ns();
        if (now - start < spin)
            continue;
        if (now < __atomic_load_n(&wait_yield_until_ns, __ATOMIC_RELAXED)) {
            sched_yield();
            continue;
        }
        if (now - start < 2 * wake)
            continue;
        struct timespec ts = { 0, pause };
        nanosleep(&ts, NULL);
        slept = 1;
        wake = wait_woke(wake, wait_now_ns() - now, pause);
        pause = pause * 2 < WAIT_PAUSE_MAX_NS ? pause * 2 : WAIT_PAUSE_MAX_NS;
    }
    if (rc == MPI_SUCCESS)
        wait_adapt(spin, wait_now_ns() - start, slept);
    return rc;
}

/* Wait for a collective started as its nonblocking form: politely where
 * ADIOI_PSTRIPE_Wait_politely says, else as MPI waits. (The form itself
 * never depends on the process: MPI does not match blocking and
 * nonblocking collectives.) */
int ADIOI_PSTRIPE_Wait_started(MPI_Request * req)
{
    if (!ADIOI_PSTRIPE_Wait_politely())
        return PMPI_Wait(req, MPI_STATUS_IGNORE);
    return ADIOI_PSTRIPE_Wait_collective(req);
}

/* Finish a collective started as its nonblocking form (rc: the start's). */
static int wait_started(int rc, MPI_Request * req)
{
    return rc != MPI_SUCCESS ? rc : ADIOI_PSTRIPE_Wait_started(req);
}

/* (Always waited for politely: a file's sync, set_size and close, whose
 * root may be at work on the servers meanwhile.) */
int ADIOI_PSTRIPE_Barrier(MPI_Comm comm)
{
    MPI_Request req;
    int rc = PMPI_Ibarrier(comm, &req);

    return rc != MPI_SUCCESS ? rc : ADIOI_PSTRIPE_Wait_collective(&req);
}

/* The driver's collectives that wait for the other processes' I/O (the
 * ranges of a collective access, the end of two-phase I/O) and ROMIO's
 * collective check of an info argument (MPIO_CHECK_INFO_ALL, made to call
 * ADIOI_PSTRIPE_Allreduce by patch-romio.sh, for files of every file
 * system) wait as the program's blocking collectives do: politely where
 * that helps (ADIOI_PSTRIPE_Wait_politely), else MPICH's own wait. */
int ADIOI_PSTRIPE_Allreduce(const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_Request req;

    return wait_started(PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, &req),
                        &req);
}

int ADIOI_PSTRIPE_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request req;

    return wait_started(PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, comm, &req), &req);
}

/*
 * Two-phase I/O's waits for its exchanges: MPICH moves a message only inside
 * MPI calls (no progress thread), and a round's data goes in pieces that both
 * processes must move on, so these waits keep testing and never sleep (sleeping
 * ones halved the collective reads: doc/journal/issue-8.md, "polite waits
 * inside two-phase I/O"). But MPICH's own wait polls without ever giving up the
 * CPU (it yields only under MPI_THREAD_MULTIPLE), and a server worker pinned to
 * that core, or the other process woken onto it, then waits for the poller's
 * whole time slice: HDF5's contiguous collective reads stalled 4 ms at a time
 * (perf sched events: the worker runnable on the polling process's core for 3.8
 * ms while the other core was idle, then the aggregator woken behind the same
 * poller). So where ADIOI_PSTRIPE_Wait_politely says, they test and
 * sched_yield() in turn: alone on its core the loop is MPICH's polling, with a
 * woken thread there it steps aside at once. 12 alternations of HDF5's
 * contiguous collective rows (pstripe-h5bench -L contig -c -w -r -e, 2
 * processes): reads 608-1,343 (median 1,044) -> 1,101-1,421 (1,344) MiB/s, runs
 * with a read call over 6 ms 8 -> 0 of 12.
 */
int ADIOI_PSTRIPE_Waitall_yielding(int n, MPI_Request * reqs, MPI_Status * statuses)
{
    int done = 0, rc;

    if (!ADIOI_PSTRIPE_Wait_politely())
        return PMPI_Waitall(n, reqs, statuses);
    for (;;) {
        rc = PMPI_Testall(n, reqs, &done, statuses);
        if (rc != MPI_SUCCESS || done)
            return rc;
        sched_yield();
    }
}

int ADIOI_PSTRIPE_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request req;
    int rc;

    rc = PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &req);
    return rc != MPI_SUCCESS ? rc : ADIOI_PSTRIPE_Waitall_yielding(1, &req, MPI_STATUSES_IGNORE);
}

int ADIOI_PSTRIPE_Alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls,
                            MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                            const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request req;
    int rc;

    rc = PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                         recvtype, comm, &req);
    return rc != MPI_SUCCESS ? rc : ADIOI_PSTRIPE_Waitall_yielding(1, &req, MPI_STATUSES_IGNORE);
}

/* The collectives' spin, which keeps a CPU busy, only costs where it
 * competes with our servers; elsewhere MPI's own wait stays, at its
 * latency. */
int ADIOI_PSTRIPE_Wait_politely(void)
{
    return ADIOI_PSTRIPE_server_here &&
        __atomic_load_n(&ADIOI_PSTRIPE_nfiles, __ATOMIC_RELAXED) > 0;
}

void ADIOI_PSTRIPE_file_opened(int delta)
{
    __atomic_add_fetch(&ADIOI_PSTRIPE_nfiles, delta, __ATOMIC_RELAXED);
}

/* The value of a tunable in effect for this file: the file's own once it
 * is open, else the connection's (what the file will start with); 0 if
 * there is no connection. */
long long ADIOI_PSTRIPE_Option_value(ADIO_File fd, int opt)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    char value[64];
    uint64_t v;
    int rc;

    if (ps != NULL && ps->file != NULL)
        rc = pstripe_file_get_option(ps->file, opt_names[opt], value, sizeof(value));
    else if (ADIOI_PSTRIPE_fs_handle != NULL)
        rc = pstripe_get_option(ADIOI_PSTRIPE_fs_handle, opt_names[opt], value, sizeof(value));
    else
        return 0;
    if (rc != PS_OK || pstripe_parse_size(value, &v) != PS_OK || v > LLONG_MAX)
        return 0;
    return (long long) v;
}

/* Give the open file the tunables its hints set (after open, and when
 * SetInfo changes them). A value the client library refuses (out of its
 * range: romio_pstripe_buffer_count=100000) is ignored with a warning, as a
 * malformed one is, and the file keeps its own (it failed the open with
 * MPI_ERR_ARG, and a set_info kept showing it). */
void ADIOI_PSTRIPE_Apply_options(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    char value[32];
    int i;

    for (i = 0; i < ADIOI_PSTRIPE_NOPTS && ps->file != NULL; i++) {
        if (ps->opt[i] == 0)
            continue;
        snprintf(value, sizeof(value), "%lld", ps->opt[i]);
        if (pstripe_file_set_option(ps->file, opt_names[i], value) != PS_OK) {
            char key[64];

            ps_warn("MPI-IO hint romio_pstripe_%s=%s ignored: %s", opt_names[i], value,
                    pstripe_last_error());
            ps->opt[i] = 0;
            snprintf(key, sizeof(key), "romio_pstripe_%s", opt_names[i]);
            snprintf(value, sizeof(value), "%lld", ADIOI_PSTRIPE_Option_value(fd, i));
            ADIOI_Info_set(fd->info, key, value);       /* the value in effect */
        }
    }
}

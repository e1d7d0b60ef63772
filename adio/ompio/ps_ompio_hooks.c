/*
 * ps_ompio_hooks.c: libpstripe-ompi-hooks.so, the library `pstripe run`
 * preloads into Open MPI programs so that the components may cache small
 * I/O (write-behind and read cache, pstripe_wbuf_* and pstripe_rcache_* of
 * the client library).
 *
 * The MPICH driver flushes its buffers before every MPI call that may tell
 * another process about a write (ad_pstripe_sync.c: programs order their
 * accesses by any message, not only by MPI's sync-barrier-sync). Under Open
 * MPI the components are loaded after the program has bound its MPI calls,
 * so the same definitions come from a preloaded library: this one compiles
 * ad_pstripe_sync.c (its MPI 3.1 calls, blocking collectives in their own
 * form; each defined as the PMPI_ function, which Open MPI's Fortran
 * bindings call, with the MPI_ name an alias: PS_DEFINE in
 * ad_pstripe_sync.h) with the two actions defined here: before a message
 * every buffer of the process is sent (pstripe_wbuf_flush_all; a failure
 * is kept by its buffer for the file's next sync or close), and after one
 * every read cache of the process is dropped (pstripe_rcache_drop_all).
 *
 * It also defines the MPI-IO calls whose bytes other processes move or
 * whose order other processes see: collective reads and writes (an
 * aggregator of another process may read or write this process's bytes),
 * shared-pointer accesses (written through, as the MPICH driver does),
 * set_view, set_info, set_atomicity, seek_shared, sync and close; after
 * set_view and set_info the fs component takes the pstripe hints of their
 * info (pstripe_ompio_set_info: Open MPI's own calls keep none of them).
 * Each flushes every
 * buffer first and drops every cache after (as a collective call or a
 * message would); the reads and writes also mark the calling thread as
 * inside one (pstripe_ompio_bypass), so that the fbtl neither buffers nor
 * caches an aggregator's pieces.
 *
 * Open MPI drops some failures of the components: a blocking read or
 * write's (OMPIO counts the bytes moved and returns MPI_SUCCESS, even from
 * a collective call whose aggregator failed) and a close's. The
 * components hand such a failure to this library (pstripe_ompio_dropped,
 * which they look up at open), and the hooked call that made it returns
 * it, through the file's error handler as Open MPI's own errors go; the
 * independent reads and writes are defined here for that alone. A
 * collective call that OMPIO aggregated returns a failure on every
 * process (pstripe_ompio_coll_result), as ROMIO's collective calls do.
 *
 * The blocking collective reads and writes first ask the fs component
 * whether every process should make the independent call instead
 * (pstripe_ompio_independent: yes unless the file's romio_cb_read /
 * romio_cb_write is enable), and then do so, through the caches.
 *
 * The fs component enables the caches for a file only where
 * pstripe_ompio_hooked says this library loaded the client library:
 * without it nothing is cached.
 *
 * And it connects to the servers while the program starts, as the MPICH
 * driver does when MPICH is loaded (pstripe_preconnect_start; the fs
 * component's first open takes the connection). Only in MPI programs:
 * mpirun, orted and whatever else `pstripe run` starts load this library
 * too, and have no PMPI_Init. The client library (and UCX with it) is
 * loaded there, by dlopen, and not linked: elsewhere the calls below find
 * no library and do nothing. A program that loads MPI itself later
 * (Python's mpi4py dlopens libmpi) loads the client library at its first
 * pstripe open (pstripe_ompio_hooked), and is cached from there.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <mpi.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pstripe.h>
#include <stddef.h>

#include "ad_pstripe_sync.h"

static __thread int bypass_depth;

/* The first failure that a component handed over (pstripe_ompio_dropped)
 * since this thread's hooked call began (dropped_begin), and the file's
 * note of it for its next sync, or NULL; in_call: inside such a call. */
static __thread int dropped_code = MPI_SUCCESS;
static __thread int *dropped_note;
static __thread int in_call;

/* Servers of at most this many workers get an endpoint to each ahead (as
 * the MPICH driver's PRECONNECT_MAX_WORKERS). */
#define PRECONNECT_MAX_WORKERS 4

/* The client library's calls, once load_client found them; NULL before,
 * in a process that is not an MPI program, and where the library is
 * missing or another's. */
static ps_status_t (*flush_all)(void);
static void (*drop_all)(void);
static void (*preconnect_start)(int);
static pthread_once_t client_once = PTHREAD_ONCE_INIT;

static void load_client(void)
{
    ps_status_t (*flush)(void);
    void (*drop)(void);
    void *lib = dlopen("libpstripe.so.0", RTLD_NOW | RTLD_GLOBAL);

    if (lib == NULL) {
        fprintf(stderr, "pstripe: libpstripe-ompi-hooks.so: %s: pstripe files are not cached\n",
                dlerror());
        return;
    }
    flush = (ps_status_t(*)(void))dlsym(lib, "pstripe_wbuf_flush_all");
    drop = (void (*)(void))dlsym(lib, "pstripe_rcache_drop_all");
    preconnect_start = (void (*)(int))dlsym(lib, "pstripe_preconnect_start");
    if (flush == NULL || drop == NULL || preconnect_start == NULL) {
        preconnect_start = NULL; /* another library's: no caching */
        return;
    }
    __atomic_store_n(&drop_all, drop, __ATOMIC_RELEASE);
    __atomic_store_n(&flush_all, flush, __ATOMIC_RELEASE);
}

/* In a program linked with MPI (PMPI_Init is there at load), the client
 * library and the connection to the servers while the program starts. A
 * program that loads MPI later (Python's mpi4py, which dlopens libmpi)
 * gets the client library at its first pstripe open
 * (pstripe_ompio_hooked), and the connection there. */
__attribute__((constructor)) static void hooks_load(void)
{
    if (dlsym(RTLD_DEFAULT, "PMPI_Init") == NULL) {
        return;
    }
    pthread_once(&client_once, load_client);
    if (preconnect_start != NULL) {
        preconnect_start(PRECONNECT_MAX_WORKERS);
    }
}

/* Every write-behind buffer of the process sent (a failure is kept by its
 * buffer, for the file's next sync or close); every read cache dropped. */
static void flush_every_buffer(void)
{
    ps_status_t (*flush)(void) = __atomic_load_n(&flush_all, __ATOMIC_ACQUIRE);

    if (flush != NULL) {
        (void)flush();
    }
}

static void drop_every_cache(void)
{
    void (*drop)(void) = __atomic_load_n(&drop_all, __ATOMIC_ACQUIRE);

    if (drop != NULL) {
        drop();
    }
}

/* A failure that Open MPI drops, met by a component in this thread (code:
 * its MPI error code; MPI_SUCCESS: none, only asking): the hooked call
 * returns it. note: the file's record of it for its next sync or close
 * (ps_ompio_note_failure), forgotten when the call returns it; NULL if the
 * record is another failure's or none. Only the first of a call is kept;
 * returns it (MPI_SUCCESS: none yet, or not inside a hooked call, where
 * nothing is kept: the note goes to the next sync). (Exported: the
 * components look it up at open.) */
__attribute__((visibility("default"))) int pstripe_ompio_dropped(int code, int *note)
{
    if (!in_call) {
        return MPI_SUCCESS;
    }
    if (dropped_code == MPI_SUCCESS && code != MPI_SUCCESS) {
        dropped_code = code;
        dropped_note = note;
    }
    return dropped_code;
}

/* Before a call that may drop a failure: none met yet. */
static void dropped_begin(void)
{
    dropped_code = MPI_SUCCESS;
    dropped_note = NULL;
    in_call = 1;
}

/* rc, the answer of the call made since dropped_begin, or else the failure
 * a component met in it (its note then forgotten: reported now). */
static int dropped(int rc)
{
    int code = dropped_code;

    if (code != MPI_SUCCESS && dropped_note != NULL) {
        *dropped_note = MPI_SUCCESS;
    }
    dropped_code = MPI_SUCCESS;
    dropped_note = NULL;
    in_call = 0;
    return rc != MPI_SUCCESS ? rc : code;
}

/* rc, the answer of the call on fh, given to fh's error handler if Open
 * MPI answered ompi_rc (which went there already if a failure). */
static int reported(MPI_File fh, int ompi_rc, int rc)
{
    if (ompi_rc == MPI_SUCCESS && rc != MPI_SUCCESS) {
        (void)PS_NEXT(File_call_errhandler)(fh, rc);
    }
    return rc;
}

/* > 0 while the calling thread is inside a collective or shared-pointer
 * MPI-IO call (exported: the fs and fbtl components look it up). */
__attribute__((visibility("default"))) int pstripe_ompio_bypass(void)
{
    return bypass_depth;
}

/* Is this library's caching on: the client library loaded, at start or
 * now (the fs component asks at each open, and caches only then). */
__attribute__((visibility("default"))) int pstripe_ompio_hooked(void)
{
    pthread_once(&client_once, load_client);
    return __atomic_load_n(&flush_all, __ATOMIC_ACQUIRE) != NULL;
}

void *ADIOI_PSTRIPE_Sync_next(const char *name, void **next)
{
    void *fn = dlsym(RTLD_NEXT, name);

    if (fn == NULL) {
        fprintf(stderr,
                "pstripe: libpstripe-ompi-hooks.so: no %s after it (%s): not an MPI program?\n",
                name, dlerror());
        abort();
    }
    __atomic_store_n(next, fn, __ATOMIC_RELEASE);
    return fn;
}

void ADIOI_PSTRIPE_Sync_before(void)
{
    flush_every_buffer();
}

void ADIOI_PSTRIPE_Sync_after(void)
{
    drop_every_cache();
}

#define PS_FILE_FLUSH(name, params, args)                                                          \
    PS_DEFINE(File_##name, params)                                                                 \
    {                                                                                              \
        int rc_;                                                                                   \
        flush_every_buffer();                                                                      \
        rc_ = PS_NEXT(File_##name) args;                                                           \
        drop_every_cache();                                                                        \
        return rc_;                                                                                \
    }                                                                                              \
    PS_ALIAS(File_##name, params)

/* The call itself, after a flush, with the caches bypassed inside, and a
 * drop after (the body of PS_FILE_BYPASS and PS_FILE_INDEP): ompi_rc_ is
 * Open MPI's answer, rc_ that or the failure it dropped. */
#define PS_BYPASSED(name, args)                                                                    \
    do {                                                                                           \
        flush_every_buffer();                                                                      \
        dropped_begin();                                                                           \
        bypass_depth++;                                                                            \
        ompi_rc_ = PS_NEXT(File_##name) args;                                                      \
        bypass_depth--;                                                                            \
        drop_every_cache();                                                                        \
        rc_ = dropped(ompi_rc_);                                                                   \
    } while (0)

#define PS_FILE_BYPASS(name, params, args)                                                         \
    PS_DEFINE(File_##name, params)                                                                 \
    {                                                                                              \
        int ompi_rc_, rc_;                                                                         \
        PS_BYPASSED(name, args);                                                                   \
        return reported(fh, ompi_rc_, rc_);                                                        \
    }                                                                                              \
    PS_ALIAS(File_##name, params)

/* An independent blocking read or write: its failure, which OMPIO drops. */
#define PS_FILE_ACCESS(name, params, args)                                                         \
    PS_DEFINE(File_##name, params)                                                                 \
    {                                                                                              \
        int ompi_rc_;                                                                              \
        dropped_begin();                                                                           \
        ompi_rc_ = PS_NEXT(File_##name) args;                                                      \
        return reported(fh, ompi_rc_, dropped(ompi_rc_));                                          \
    }                                                                                              \
    PS_ALIAS(File_##name, params)

/* A function of the fs component (ps_ompio_coll.c) by name, found once
 * (*cache); NULL while the component is not loaded (no file opened through
 * OMPIO yet). */
static void *fs_function(void **cache, const char *name)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

    if (f == NULL && (f = dlsym(RTLD_DEFAULT, name)) != NULL) {
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f;
}

/* pstripe_ompio_independent: should this collective call be made as the
 * independent one, on every process? (0 without the component) *err: a
 * failure of its barrier (then 0). */
static int independent(MPI_File fh, int is_write, int *err)
{
    static void *cache;
    int (*f)(MPI_File, int, int *) =
        (int (*)(MPI_File, int, int *))fs_function(&cache, "pstripe_ompio_independent");

    *err = MPI_SUCCESS;
    return f != NULL && f(fh, is_write, err);
}

/* pstripe_ompio_coll_result, after a collective call that OMPIO aggregated
 * (rc its outcome here): a failure on any process, and no process goes on
 * before every aggregator is done. */
static int coll_result(MPI_File fh, int rc)
{
    static void *cache;
    int (*f)(MPI_File, int) =
        (int (*)(MPI_File, int))fs_function(&cache, "pstripe_ompio_coll_result");

    return f != NULL ? f(fh, rc) : rc;
}

/* A blocking collective read or write (PS_FILE_BYPASS) that every process
 * makes as the independent call indep, through its caches, where the fs
 * component says so (independent: unless the file's romio_cb_read /
 * romio_cb_write asks for OMPIO's aggregation): then without a flush or a
 * drop, as an independent call; one that OMPIO aggregates ends when every
 * aggregator is done, failing on every process if on one (coll_result). */
#define PS_FILE_INDEP(name, indep, is_write, params, args)                                         \
    PS_DEFINE(File_##name, params)                                                                 \
    {                                                                                              \
        int ompi_rc_, rc_;                                                                         \
        dropped_begin();                                                                           \
        if (independent(fh, is_write, &rc_)) {                                                     \
            ompi_rc_ = PS_NEXT(File_##indep) args;                                                 \
            return reported(fh, ompi_rc_, dropped(ompi_rc_));                                      \
        }                                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            return reported(fh, MPI_SUCCESS, dropped(rc_));                                        \
        }                                                                                          \
        PS_BYPASSED(name, args);                                                                   \
        return reported(fh, ompi_rc_, coll_result(fh, rc_));                                       \
    }                                                                                              \
    PS_ALIAS(File_##name, params)

/* The end of a split collective read or write (PS_FILE_BYPASS), which
 * ends when every process is done, failing on every process if on one
 * (coll_result). */
#define PS_FILE_COLL_END(name, params, args)                                                       \
    PS_DEFINE(File_##name, params)                                                                 \
    {                                                                                              \
        int ompi_rc_, rc_;                                                                         \
        PS_BYPASSED(name, args);                                                                   \
        return reported(fh, ompi_rc_, coll_result(fh, rc_));                                       \
    }                                                                                              \
    PS_ALIAS(File_##name, params)

#define PS_RW_PARAMS(cbuf) (MPI_File fh, cbuf void *buf, int count, MPI_Datatype dt, MPI_Status *st)
#define PS_RW_ARGS         (fh, buf, count, dt, st)
#define PS_RW_AT_PARAMS(cbuf)                                                                      \
    (MPI_File fh, MPI_Offset offset, cbuf void *buf, int count, MPI_Datatype dt, MPI_Status *st)
#define PS_RW_AT_ARGS (fh, offset, buf, count, dt, st)
#define PS_IRW_PARAMS(cbuf)                                                                        \
    (MPI_File fh, cbuf void *buf, int count, MPI_Datatype dt, MPI_Request *req)
#define PS_IRW_ARGS (fh, buf, count, dt, req)
#define PS_IRW_AT_PARAMS(cbuf)                                                                     \
    (MPI_File fh, MPI_Offset offset, cbuf void *buf, int count, MPI_Datatype dt, MPI_Request *req)
#define PS_IRW_AT_ARGS        (fh, offset, buf, count, dt, req)
#define PS_BEGIN_PARAMS(cbuf) (MPI_File fh, cbuf void *buf, int count, MPI_Datatype dt)
#define PS_BEGIN_ARGS         (fh, buf, count, dt)
#define PS_BEGIN_AT_PARAMS(cbuf)                                                                   \
    (MPI_File fh, MPI_Offset offset, cbuf void *buf, int count, MPI_Datatype dt)
#define PS_BEGIN_AT_ARGS    (fh, offset, buf, count, dt)
#define PS_END_PARAMS(cbuf) (MPI_File fh, cbuf void *buf, MPI_Status *st)
#define PS_END_ARGS         (fh, buf, st)

PS_FILE_ACCESS(write, PS_RW_PARAMS(const), PS_RW_ARGS)
PS_FILE_ACCESS(read, PS_RW_PARAMS(), PS_RW_ARGS)
PS_FILE_ACCESS(write_at, PS_RW_AT_PARAMS(const), PS_RW_AT_ARGS)
PS_FILE_ACCESS(read_at, PS_RW_AT_PARAMS(), PS_RW_AT_ARGS)
PS_FILE_INDEP(write_all, write, 1, PS_RW_PARAMS(const), PS_RW_ARGS)
PS_FILE_INDEP(read_all, read, 0, PS_RW_PARAMS(), PS_RW_ARGS)
PS_FILE_INDEP(write_at_all, write_at, 1, PS_RW_AT_PARAMS(const), PS_RW_AT_ARGS)
PS_FILE_INDEP(read_at_all, read_at, 0, PS_RW_AT_PARAMS(), PS_RW_AT_ARGS)
PS_FILE_BYPASS(iwrite_all, PS_IRW_PARAMS(const), PS_IRW_ARGS)
PS_FILE_BYPASS(iread_all, PS_IRW_PARAMS(), PS_IRW_ARGS)
PS_FILE_BYPASS(iwrite_at_all, PS_IRW_AT_PARAMS(const), PS_IRW_AT_ARGS)
PS_FILE_BYPASS(iread_at_all, PS_IRW_AT_PARAMS(), PS_IRW_AT_ARGS)
PS_FILE_BYPASS(write_all_begin, PS_BEGIN_PARAMS(const), PS_BEGIN_ARGS)
PS_FILE_BYPASS(read_all_begin, PS_BEGIN_PARAMS(), PS_BEGIN_ARGS)
PS_FILE_BYPASS(write_at_all_begin, PS_BEGIN_AT_PARAMS(const), PS_BEGIN_AT_ARGS)
PS_FILE_BYPASS(read_at_all_begin, PS_BEGIN_AT_PARAMS(), PS_BEGIN_AT_ARGS)
PS_FILE_COLL_END(write_all_end, PS_END_PARAMS(const), PS_END_ARGS)
PS_FILE_COLL_END(read_all_end, PS_END_PARAMS(), PS_END_ARGS)
PS_FILE_COLL_END(write_at_all_end, PS_END_PARAMS(const), PS_END_ARGS)
PS_FILE_COLL_END(read_at_all_end, PS_END_PARAMS(), PS_END_ARGS)
PS_FILE_BYPASS(write_shared, PS_RW_PARAMS(const), PS_RW_ARGS)
PS_FILE_BYPASS(read_shared, PS_RW_PARAMS(), PS_RW_ARGS)
PS_FILE_BYPASS(iwrite_shared, PS_IRW_PARAMS(const), PS_IRW_ARGS)
PS_FILE_BYPASS(iread_shared, PS_IRW_PARAMS(), PS_IRW_ARGS)
PS_FILE_BYPASS(write_ordered, PS_RW_PARAMS(const), PS_RW_ARGS)
PS_FILE_BYPASS(read_ordered, PS_RW_PARAMS(), PS_RW_ARGS)
PS_FILE_BYPASS(write_ordered_begin, PS_BEGIN_PARAMS(const), PS_BEGIN_ARGS)
PS_FILE_BYPASS(read_ordered_begin, PS_BEGIN_PARAMS(), PS_BEGIN_ARGS)
PS_FILE_BYPASS(write_ordered_end, PS_END_PARAMS(const), PS_END_ARGS)
PS_FILE_BYPASS(read_ordered_end, PS_END_PARAMS(), PS_END_ARGS)
/* pstripe_ompio_set_info: the pstripe hints of info taken by the file
 * (collective; MPI_SUCCESS without the component; of_set_info: after
 * set_info, which dropped the keys it named from the file's info). An
 * error goes to the file's error handler (if report), as Open MPI's own
 * errors do. */
static int take_hints(MPI_File fh, MPI_Info info, int of_set_info, int report)
{
    static void *cache;
    int (*f)(MPI_File, MPI_Info, int) =
        (int (*)(MPI_File, MPI_Info, int))fs_function(&cache, "pstripe_ompio_set_info");
    int rc = f != NULL ? f(fh, info, of_set_info) : MPI_SUCCESS;

    if (rc != MPI_SUCCESS && report) {
        (void)PS_NEXT(File_call_errhandler)(fh, rc);
    }
    return rc;
}

/* MPI_INFO_NULL, by name (as in any_process: mpirun has no such symbol). */
static MPI_Info info_null(void)
{
    return (MPI_Info)dlsym(RTLD_DEFAULT, "ompi_mpi_info_null");
}

/* set_info and set_view (PS_FILE_FLUSH), then the hints of their info
 * (Open MPI's own keep none of ours: ps_ompio_hints.c). The agreement is
 * collective, so every process takes part, also one whose call failed
 * alone (Open MPI 4.1.4 refuses MPI_INFO_NULL in set_info on that process
 * only): with no hints, and keeping its own error. */
#define PS_FILE_HINTS(name, of_set_info, params, args)                                             \
    PS_DEFINE(File_##name, params)                                                                 \
    {                                                                                              \
        int rc_, hints_;                                                                           \
        flush_every_buffer();                                                                      \
        rc_ = PS_NEXT(File_##name) args;                                                           \
        hints_ = take_hints(fh, rc_ == MPI_SUCCESS ? info : info_null(), of_set_info,              \
                            rc_ == MPI_SUCCESS);                                                   \
        if (rc_ == MPI_SUCCESS) {                                                                  \
            rc_ = hints_;                                                                          \
        }                                                                                          \
        drop_every_cache();                                                                        \
        return rc_;                                                                                \
    }                                                                                              \
    PS_ALIAS(File_##name, params)

/* Open MPI 4.1.4 joins a name that does not start with '/' (as
 * "pstripe:/..." does not) to the working directory; when the two pass its
 * OPAL_PATH_MAX (4,097 bytes with two separators and the NUL), its open
 * fails and then crashes on the half-made file (SIGSEGV in
 * ompi_datatype_destroy). Such a pstripe name is refused here, saying why
 * on stderr, by every process of the open if by any (the directory may
 * differ between them): MPI_ERR_BAD_FILE is returned as by MPI_FILE_NULL's
 * default handler, MPI_ERRORS_RETURN (Open MPI's MPI_File_call_errhandler
 * refuses MPI_FILE_NULL, and its own way to call that handler is
 * internal). */
#define PS_OMPI_PATH_MAX 4097

/* The length of the working directory as Open MPI's opal_getcwd sees it:
 * $PWD if it names the same directory as getcwd(), else getcwd()'s. */
static size_t ompi_cwd_len(void)
{
    char cwd[PS_OMPI_PATH_MAX];
    const char *pwd = getenv("PWD");
    struct stat a, b;

    if (getcwd(cwd, sizeof(cwd)) == NULL) {
        return 0; /* (Open MPI's open fails on it too, without crashing) */
    }
    if (pwd == NULL || strcmp(pwd, cwd) == 0 || stat(cwd, &a) != 0 || stat(pwd, &b) != 0 ||
        a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
        return strlen(cwd);
    }
    return strlen(pwd);
}

/* Is over set on any process of comm? (MPI's predefined handles by name:
 * this library is preloaded into mpirun too, which has no such symbols.) */
static int any_process(MPI_Comm comm, int over)
{
    MPI_Comm null = (MPI_Comm)dlsym(RTLD_DEFAULT, "ompi_mpi_comm_null");
    MPI_Datatype type = (MPI_Datatype)dlsym(RTLD_DEFAULT, "ompi_mpi_int");
    MPI_Op op = (MPI_Op)dlsym(RTLD_DEFAULT, "ompi_mpi_op_max");
    int any;

    if (null == NULL || type == NULL || op == NULL || comm == null ||
        PS_NEXT(Allreduce)(&over, &any, 1, type, op, comm) != MPI_SUCCESS) {
        return over; /* (Open MPI's open reports a bad communicator) */
    }
    return any;
}

PS_DEFINE(File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh))
{
    size_t joined = 0;
    int over = 0, any = 0;

    if (filename != NULL && strncmp(filename, "pstripe:", 8) == 0) {
        joined = ompi_cwd_len() + strlen(filename) + 4;
        over = joined > PS_OMPI_PATH_MAX;
        any = any_process(comm, over);
    }
    if (any) {
        fprintf(stderr,
                "pstripe: MPI_File_open of a %zu-byte name: Open MPI joins it to the working "
                "directory, and the two must not pass %d bytes (%s %zu): refused "
                "(MPI_ERR_BAD_FILE)\n",
                strlen(filename), PS_OMPI_PATH_MAX, over ? "here" : "another process's; here",
                joined);
        return MPI_ERR_BAD_FILE;
    }
    return PS_NEXT(File_open)(comm, filename, amode, info, fh);
}
PS_ALIAS(File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh))

PS_FILE_HINTS(set_view, 0,
              (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
               const char *datarep, MPI_Info info),
              (fh, disp, etype, filetype, datarep, info))
PS_FILE_HINTS(set_info, 1, (MPI_File fh, MPI_Info info), (fh, info))
PS_FILE_FLUSH(set_atomicity, (MPI_File fh, int flag), (fh, flag))
/* OMPIO's sync and close start with a barrier of the file's processes
 * before the fs component's part: the bytes must be out before it (a
 * process that opens the file alone right after the close sees them). */
PS_FILE_FLUSH(sync, (MPI_File fh), (fh))

static int finalizing; /* MPI_Finalize has started */

PS_DEFINE(Finalize, (void))
{
    __atomic_store_n(&finalizing, 1, __ATOMIC_RELEASE);
    return PS_NEXT(Finalize)();
}
PS_ALIAS(Finalize, (void))

/* close, as PS_FILE_FLUSH, returning the fs component's answer, which
 * Open MPI drops (pstripe_ompio_dropped): a lost write that only the close
 * learns of (a failed disk write after its answer, a server restarted
 * since) fails it, as under MPICH. Inside MPI_Finalize (another library's
 * callback: HDF5 closes its files there) the close succeeds, as the MPICH
 * driver's does: the component printed the failure, and HDF5 1.10.8
 * crashed when that close failed. (No error handler: the file is gone.) */
PS_DEFINE(File_close, (MPI_File * fh))
{
    int ompi_rc, rc;

    flush_every_buffer();
    dropped_begin();
    ompi_rc = PS_NEXT(File_close)(fh);
    drop_every_cache();
    rc = dropped(ompi_rc);
    return __atomic_load_n(&finalizing, __ATOMIC_ACQUIRE) ? ompi_rc : rc;
}
PS_ALIAS(File_close, (MPI_File * fh))
PS_FILE_FLUSH(seek_shared, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence))

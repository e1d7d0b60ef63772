/*
 * ad_pstripe_aio.c: nonblocking I/O with MPI generalized requests.
 *
 * IreadContig, IwriteContig, IreadStrided and IwriteStrided build the same
 * region and iovec lists as the blocking calls and hand them to
 * pstripe_iread_list/iwrite_list, which copies the lists and returns at
 * once; the library's progress thread moves the data while the program
 * computes. The MPI request is a generalized request of an extended class
 * (MPIX_Grequest_class_create, as ad_pvfs2 and ad_daos do): MPI_Test calls
 * poll_fn, which checks without blocking; MPI_Wait calls poll_fn in a loop
 * until the request completes, so poll_fn called again for an unfinished
 * request within ADIOI_PSTRIPE_POLL_GAP of its last call (MPI_Wait's loop,
 * or a loop of MPI_Test, never a program computing between tests) blocks
 * in the library instead of letting MPI spin; MPI_Waitall calls wait_fn,
 * which blocks in the library.
 *
 * An error found when the operation completes is returned by poll_fn,
 * which MPI_Wait and MPI_Test pass on with its class (MPI_ERR_IO for a dead
 * server); through MPI_Waitall it comes from query_fn, which MPICH reports
 * as MPI_ERR_OTHER naming our code.
 *
 * In atomic mode the access is done at once under the lock and a completed
 * request is returned (as ROMIO does for contiguous accesses). Nonblocking
 * collectives are at the end of this file.
 */

#include "ad_pstripe.h"
#include "mpiu_greq.h"

/* Seconds between two polls of an unfinished request below which the
 * caller is taken to be waiting (MPI_Wait polls back to back, within a
 * few microseconds). */
#define ADIOI_PSTRIPE_POLL_GAP 20e-6

/* Extended generalized requests are MPICH's (MPIX_Grequest_class_create).
 * ROMIO's configure computes HAVE_MPI_GREQUEST_EXTENSIONS but, in MPICH
 * 4.0.2, writes it nowhere, so MPICH's own mpi.h is asked as well. */
#if defined(HAVE_MPI_GREQUEST_EXTENSIONS) || defined(MPICH_NUMVERSION)
#define ADIOI_PSTRIPE_GREQ_CLASSES 1
#endif

typedef struct ADIOI_PSTRIPE_aio_s {
    MPI_Request req;
    pstripe_request_t *preq;
    MPI_Offset total;           /* bytes asked for */
    MPI_Offset nbytes;          /* bytes transferred */
    int error_code;
    int done;
    int is_write;
    double last_poll;           /* MPI_Wtime of the last unfinished poll; 0: none */
    char *path;
} ADIOI_PSTRIPE_aio;

#ifdef ADIOI_PSTRIPE_GREQ_CLASSES

static MPIX_Grequest_class ADIOI_PSTRIPE_greq_class = 0;

static void aio_finish(ADIOI_PSTRIPE_aio * aio)
{
    static char myname[] = "ADIOI_PSTRIPE_AIO";
    uint64_t bytes = 0;
    int rc;

    rc = pstripe_request_wait(aio->preq, &bytes);
    aio->preq = NULL;
    aio->done = 1;
    if (rc != PS_OK) {
        aio->error_code = ADIOI_PSTRIPE_err(myname, aio->is_write ? "write" : "read",
                                            aio->path, __LINE__, rc, NULL);
        aio->nbytes = 0;
    } else {
        aio->nbytes = aio->is_write ? aio->total : (MPI_Offset) bytes;
    }
    if (aio->is_write)
        ADIOI_PSTRIPE_Sync_after();     /* cached blocks may hold what it replaced */
    MPI_Grequest_complete(aio->req);
}

static int aio_query_fn(void *extra_state, MPI_Status * status)
{
    ADIOI_PSTRIPE_aio *aio = extra_state;

    MPI_Status_set_elements_x(status, MPI_BYTE, aio->nbytes);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return aio->error_code;
}

static int aio_free_fn(void *extra_state)
{
    ADIOI_PSTRIPE_aio *aio = extra_state;

    if (aio->preq != NULL)
        pstripe_request_wait(aio->preq, NULL);
    ADIOI_Free(aio->path);
    ADIOI_Free(aio);
    return MPI_SUCCESS;
}

static int aio_poll_fn(void *extra_state, MPI_Status * status)
{
    ADIOI_PSTRIPE_aio *aio = extra_state;
    int done = 0;
    double now;

    if (aio->done)
        return aio->error_code;
    if (pstripe_request_test(aio->preq, &done) != PS_OK)
        done = 1;       /* the error comes from pstripe_request_wait */
    if (!done) {
        now = MPI_Wtime();
        if (aio->last_poll == 0 || now - aio->last_poll >= ADIOI_PSTRIPE_POLL_GAP) {
            aio->last_poll = now;
            return MPI_SUCCESS;
        }
        /* polled again at once: the caller waits; block in the library
         * (aio_finish) and leave the core to its progress thread */
    }
    aio_finish(aio);
    return aio->error_code;
}

static int aio_wait_fn(int count, void **array_of_states, double timeout, MPI_Status * status)
{
    int i;

    for (i = 0; i < count; i++) {
        ADIOI_PSTRIPE_aio *aio = array_of_states[i];
        if (!aio->done)
            aio_finish(aio);
    }
    return MPI_SUCCESS;
}

/* The access of a contiguous call (offset in bytes, as for ReadContig). */
static void contig_access(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, ADIOI_PSTRIPE_access * acc)
{
    MPI_Count datatype_size;

    MPI_Type_size_x(datatype, &datatype_size);
    memset(acc, 0, sizeof(*acc));
    acc->total = (ADIO_Offset) datatype_size * count;
    acc->start = (file_ptr_type == ADIO_INDIVIDUAL) ? fd->fp_ind : offset;
    acc->end = acc->hi = acc->start + acc->total;
    acc->one_region.offset = (uint64_t) acc->start;
    acc->one_region.length = (uint64_t) acc->total;
    acc->one_iov.iov_base = buf;
    acc->one_iov.iov_len = (size_t) acc->total;
    acc->regions = &acc->one_region;
    acc->iov = &acc->one_iov;
    acc->nregions = acc->niov = acc->total > 0 ? 1 : 0;
}

/* The MPI request of a library request preq moving acc. */
static void greq_start(ADIO_File fd, pstripe_request_t * preq, const ADIOI_PSTRIPE_access * acc,
                       int is_write, MPI_Request * request)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    ADIOI_PSTRIPE_aio *aio;

    if (ADIOI_PSTRIPE_greq_class == 0)
        MPIX_Grequest_class_create(aio_query_fn, aio_free_fn, MPIU_Greq_cancel_fn,
                                   aio_poll_fn, aio_wait_fn, &ADIOI_PSTRIPE_greq_class);
    aio = ADIOI_Calloc(1, sizeof(*aio));
    aio->preq = preq;
    aio->total = acc->total;
    aio->is_write = is_write;
    aio->error_code = MPI_SUCCESS;
    aio->path = ADIOI_Strdup(ps->path);
    MPIX_Grequest_class_allocate(ADIOI_PSTRIPE_greq_class, aio, request);
    memcpy(&aio->req, request, sizeof(MPI_Request));
}

/* Start the access as nonblocking list I/O in the library. */
static void listio_start(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                         int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                         int contig, int is_write, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_AIO";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    ADIOI_PSTRIPE_access acc;
    pstripe_request_t *preq;
    int status;

    *error_code = MPI_SUCCESS;
    if (contig)
        contig_access(fd, buf, count, datatype, file_ptr_type, offset, &acc);
    else
        ADIOI_PSTRIPE_Access_build(fd, buf, count, datatype, file_ptr_type, offset, &acc,
                                   error_code);
    if (*error_code != MPI_SUCCESS)
        return;
    ADIOI_PSTRIPE_Access_regions(fd, &acc);     /* the nonblocking calls take regions */
    if (acc.total == 0) {
        ADIOI_PSTRIPE_Access_free(fd, &acc);
        MPIO_Completed_request_create(&fd, 0, error_code, request);
        return;
    }

    if (is_write)
        status = pstripe_iwrite_list(ps->file, acc.regions, acc.nregions, acc.iov, acc.niov,
                                     &preq);
    else
        status = pstripe_iread_list(ps->file, acc.regions, acc.nregions, acc.iov, acc.niov,
                                    &preq);
    /* the library copied the lists */
    ADIOI_PSTRIPE_Access_free(fd, &acc);
    if (status != PS_OK) {
        *error_code = ADIOI_PSTRIPE_err(myname, is_write ? "write" : "read", ps->path,
                                        __LINE__, status, NULL);
        return;
    }
    greq_start(fd, preq, &acc, is_write, request);

    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind = acc.end;
    fd->fp_sys_posn = -1;
    if (is_write)
        fd->dirty_write = 1;
}

#endif /* ADIOI_PSTRIPE_GREQ_CLASSES */

/* The request of a nonblocking call done at once (status: its outcome),
 * complete; none if the call failed: ROMIO's MPI_File_iwrite and
 * iwrite_all give the error to the file's handler, and a completed request
 * carrying it (MPIO_Completed_request_create) called the handler there
 * too: twice for one failure. */
static void completed(ADIO_File fd, ADIO_Status * status, int *error_code,
                      MPI_Request * request)
{
    MPI_Count nbytes = 0;

    if (*error_code != MPI_SUCCESS) {
        *request = MPI_REQUEST_NULL;
        return;
    }
    MPI_Get_elements_x(status, MPI_BYTE, &nbytes);
    MPIO_Completed_request_create(&fd, nbytes, error_code, request);
}

/* The access done at once (under the lock in atomic mode), then a
 * completed request. */
static void io_now(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                   int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                   int contig, int is_write, int *error_code)
{
    ADIO_Status status;
    int lock_err = MPI_SUCCESS;

    MPI_Status_set_elements_x(&status, MPI_BYTE, 0);
    if (contig) {
        if (fd->atomicity)
            lock_err = ADIOI_PSTRIPE_Lock(fd, is_write);
        if (lock_err != MPI_SUCCESS) {
            *error_code = lock_err;
            return;
        }
        if (is_write)
            ADIOI_PSTRIPE_WriteContig(fd, buf, count, datatype, file_ptr_type, offset,
                                      &status, error_code);
        else
            ADIOI_PSTRIPE_ReadContig(fd, buf, count, datatype, file_ptr_type, offset,
                                     &status, error_code);
        if (fd->atomicity)
            ADIOI_PSTRIPE_Unlock(fd);
    } else {
        ADIOI_PSTRIPE_Strided(fd, buf, count, datatype, file_ptr_type, offset, &status, is_write,
                              error_code);
    }
    completed(fd, &status, error_code, request);
}

static void nonblocking_io(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                           int contig, int is_write, int *error_code)
{
    /* the access iwrite_shared / iread_shared make after their pointer failed */
    *error_code = file_ptr_type == ADIO_EXPLICIT_OFFSET
        ? ADIOI_PSTRIPE_Sfp_failed_access(fd, offset, !contig) : MPI_SUCCESS;
    if (*error_code != MPI_SUCCESS) {
        *request = MPI_REQUEST_NULL;
        return;
    }
    /* the write-behind buffer goes first (a write also drops the read
     * cache): nonblocking accesses go straight to the servers */
    *error_code = ADIOI_PSTRIPE_Cache_flush(fd, is_write);
    if (*error_code != MPI_SUCCESS)
        return;
#ifdef ADIOI_PSTRIPE_GREQ_CLASSES
    if (!fd->atomicity && (contig || ADIOI_PSTRIPE_Listio(fd, is_write))) {
        listio_start(fd, buf, count, datatype, file_ptr_type, offset, request, contig, is_write,
                     error_code);
        return;
    }
#endif
    /* atomic mode, ROMIO's generic noncontiguous path (the listio hint
     * disables ours; as ADIOI_GEN_IreadStrided does), or no extended
     * generalized requests */
    io_now(fd, buf, count, datatype, file_ptr_type, offset, request, contig, is_write,
           error_code);
}

void ADIOI_PSTRIPE_IreadContig(ADIO_File fd, void *buf, int count,
                               MPI_Datatype datatype, int file_ptr_type,
                               ADIO_Offset offset, ADIO_Request * request, int *error_code)
{
    nonblocking_io(fd, buf, count, datatype, file_ptr_type, offset, request, 1, 0, error_code);
}

void ADIOI_PSTRIPE_IwriteContig(ADIO_File fd, const void *buf, int count,
                                MPI_Datatype datatype, int file_ptr_type,
                                ADIO_Offset offset, ADIO_Request * request, int *error_code)
{
    nonblocking_io(fd, (void *) buf, count, datatype, file_ptr_type, offset, request, 1, 1,
                   error_code);
}

void ADIOI_PSTRIPE_IreadStrided(ADIO_File fd, void *buf, int count,
                                MPI_Datatype datatype, int file_ptr_type,
                                ADIO_Offset offset, ADIO_Request * request, int *error_code)
{
    nonblocking_io(fd, buf, count, datatype, file_ptr_type, offset, request, 0, 0, error_code);
}

void ADIOI_PSTRIPE_IwriteStrided(ADIO_File fd, const void *buf, int count,
                                 MPI_Datatype datatype, int file_ptr_type,
                                 ADIO_Offset offset, ADIO_Request * request, int *error_code)
{
    nonblocking_io(fd, (void *) buf, count, datatype, file_ptr_type, offset, request, 0, 1,
                   error_code);
}

/* ---- nonblocking collectives ------------------------------------------ */

/* Nonblocking collectives (MPI_File_iwrite_all ...). When the blocking
 * call would not aggregate (the processes' file ranges do not interleave,
 * as when each has its own part of the file, or a write's regions are
 * small: ADIOI_PSTRIPE_Coll_aggregates), each process's access is started
 * as nonblocking list I/O of its own regions (nonblocking_io above): the
 * call returns after one allgather of the ranges, the client library's
 * progress thread moves the data while the program computes, and MPI_Test
 * and MPI_Wait complete it through the generalized request; each request
 * reports its own regions' errors. The write-behind buffer is flushed
 * first (and a write drops the read cache), as for every nonblocking call.
 * Done at once by the blocking collective, then a completed request:
 * aggregated accesses, atomic mode (under the lock), ROMIO's generic paths
 * (listio hint disabled), and external32, whose converted buffer ROMIO
 * frees as soon as the call returns. No two-phase exchange runs in the
 * background: it would need every process to come back into MPI between
 * rounds. */
static void nonblocking_coll(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int is_write, int *error_code)
{
    ADIO_Status status;

    if (!fd->atomicity && !fd->is_external32 && ADIOI_PSTRIPE_Listio(fd, is_write) &&
        !ADIOI_PSTRIPE_Coll_aggregates(fd, buf, count, datatype, file_ptr_type, offset,
                                       is_write)) {
        if (is_write)
            ADIOI_PSTRIPE_IwriteStrided(fd, buf, count, datatype, file_ptr_type, offset, request,
                                        error_code);
        else
            ADIOI_PSTRIPE_IreadStrided(fd, buf, count, datatype, file_ptr_type, offset, request,
                                       error_code);
        return;
    }
    MPI_Status_set_elements_x(&status, MPI_BYTE, 0);
    if (is_write)
        ADIOI_PSTRIPE_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                                       error_code);
    else
        ADIOI_PSTRIPE_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                                      error_code);
    completed(fd, &status, error_code, request);
}

void ADIOI_PSTRIPE_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                     MPI_Datatype datatype, int file_ptr_type,
                                     ADIO_Offset offset, ADIO_Request * request,
                                     int *error_code)
{
    nonblocking_coll(fd, (void *) buf, count, datatype, file_ptr_type, offset, request, 1,
                     error_code);
}

void ADIOI_PSTRIPE_IreadStridedColl(ADIO_File fd, void *buf, int count,
                                    MPI_Datatype datatype, int file_ptr_type,
                                    ADIO_Offset offset, ADIO_Request * request,
                                    int *error_code)
{
    nonblocking_coll(fd, buf, count, datatype, file_ptr_type, offset, request, 0, error_code);
}

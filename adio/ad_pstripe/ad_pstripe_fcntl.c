/*
 * ad_pstripe_fcntl.c: Fcntl (size, preallocation, atomicity), Resize,
 * Flush and Feature.
 */

#include "ad_pstripe.h"

#define ADIOI_PSTRIPE_MSG_MAX  256

/* Share the outcome of an operation one process did for all: every
 * process returns the same MPI error class, with the doer's reason. */
int ADIOI_PSTRIPE_Bcast_status(ADIO_File fd, int root, int status, const char *myname,
                               const char *what, int line, const char *root_detail)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    char detail[ADIOI_PSTRIPE_MSG_MAX];
    int rank, rc;
    MPI_Request req;

    MPI_Comm_rank(fd->comm, &rank);
    rc = MPI_Ibcast(&status, 1, MPI_INT, root, fd->comm, &req);
    if (rc == MPI_SUCCESS)
        rc = ADIOI_PSTRIPE_Wait_collective(&req);
    if (rc != MPI_SUCCESS)
        return rc;      /* the others' outcome never came */
    if (status == PS_OK)
        return MPI_SUCCESS;
    if (rank == root)
        MPL_snprintf(detail, sizeof(detail), "%s",
                     root_detail ? root_detail : pstripe_last_error());
    MPI_Bcast(detail, sizeof(detail), MPI_CHAR, root, fd->comm);
    return ADIOI_PSTRIPE_err(myname, what, ps->path, line, status, detail);
}

void ADIOI_PSTRIPE_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_FCNTL";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    pstripe_stat_t st;
    int rc;

    *error_code = MPI_SUCCESS;
    switch (flag) {
        case ADIO_FCNTL_GET_FSIZE:
            /* our buffered writes count */
            *error_code = ADIOI_PSTRIPE_Cache_flush(fd, 0);
            if (*error_code != MPI_SUCCESS)
                return;
            rc = pstripe_fstat(ps->file, &st);
            if (rc != PS_OK) {
                *error_code = ADIOI_PSTRIPE_err(myname, "stat", ps->path, __LINE__, rc, NULL);
                return;
            }
            fcntl_struct->fsize = (ADIO_Offset) st.size;
            return;

        case ADIO_FCNTL_SET_DISKSPACE:
            /* MPI_File_preallocate, on one process (ROMIO's barrier
             * follows): the servers reserve the space without touching
             * data (fallocate), so the others' writes still in flight, or
             * in their write-behind buffers, keep their bytes */
            *error_code = ADIOI_PSTRIPE_Cache_flush(fd, 1);
            if (*error_code != MPI_SUCCESS)
                return;
            rc = pstripe_preallocate(ps->file, (uint64_t) fcntl_struct->diskspace);
            if (rc != PS_OK)
                *error_code = ADIOI_PSTRIPE_err(myname, "preallocate", ps->path, __LINE__, rc,
                                                NULL);
            return;

        case ADIO_FCNTL_SET_ATOMICITY:
            /* collective (MPI_File_set_atomicity); atomic mode does no
             * caching, and what was cached before is flushed and dropped */
            *error_code = ADIOI_PSTRIPE_Cache_flush(fd, 1);
            fd->atomicity = fcntl_struct->atomicity ? 1 : 0;
            if (fd->atomicity) {
                int lock_err;
                ADIOI_PSTRIPE_Lock_setup(fd, &lock_err);
                if (*error_code == MPI_SUCCESS)
                    *error_code = lock_err;
            }
            return;

        default:
            *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname,
                                               __LINE__, MPI_ERR_ARG, "**flag", "**flag %d",
                                               flag);
            return;
    }
}

/* MPI_File_set_size is collective: every process flushes its buffered
 * writes, then one process truncates (the servers resize every object of
 * the file), the others learn the result. */
void ADIOI_PSTRIPE_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_RESIZE";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int rank, root = fd->hints->ranklist[0], rc = PS_OK;
    int flush_err = ADIOI_PSTRIPE_Cache_flush(fd, 1);

    /* no truncate before every buffered write is on the servers */
    ADIOI_PSTRIPE_Barrier(fd->comm);
    MPI_Comm_rank(fd->comm, &rank);
    if (rank == root)
        rc = pstripe_ftruncate(ps->file, (uint64_t) size);
    *error_code = ADIOI_PSTRIPE_Bcast_status(fd, root, rc, myname, "set size of", __LINE__,
                                             NULL);
    if (flush_err != MPI_SUCCESS)
        *error_code = flush_err;
}

/* MPI_File_sync is collective. Once every process has flushed its
 * write-behind buffer and is past the barrier all their writes are
 * acknowledged by the servers, so one pstripe_fsync (which
 * makes the file durable on every server it is striped over) covers them
 * all. Then each other process asks the servers it wrote whether its
 * writes answered before the disk failed there, or were lost with a
 * restart (pstripe_check_writes): the fsync asked for the root's alone. */
void ADIOI_PSTRIPE_Flush(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_FLUSH";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int rank, root = fd->hints->ranklist[0], rc = PS_OK;
    /* this process's buffered writes (or the error of an earlier flush of
     * them, reported once more) */
    int wb_err = ADIOI_PSTRIPE_Cache_sync(fd);

    ADIOI_PSTRIPE_Barrier(fd->comm);
    MPI_Comm_rank(fd->comm, &rank);
    if (rank == root)
        rc = pstripe_fsync(ps->file);
    *error_code = ADIOI_PSTRIPE_Bcast_status(fd, root, rc, myname, "sync", __LINE__, NULL);
    if (rank != root && (rc = pstripe_check_writes(ps->file)) != PS_OK)
        *error_code = ADIOI_PSTRIPE_err(myname, "sync", ps->path, __LINE__, rc, NULL);
    if (wb_err != MPI_SUCCESS)
        *error_code = wb_err;
}

int ADIOI_PSTRIPE_Feature(ADIO_File fd, int flag)
{
    switch (flag) {
        case ADIO_LOCKS:       /* ad_pstripe_lock.c */
        case ADIO_ATOMIC_MODE:
        case ADIO_DATA_SIEVING_WRITES:
        case ADIO_SCALABLE_RESIZE:
        case ADIO_UNLINK_AFTER_CLOSE:
        case ADIO_IMMEDIATELY_VISIBLE:
        case ADIO_SHARED_FP:   /* ad_pstripe_sharedfp.c */
            return 1;
        case ADIO_SEQUENTIAL:
        case ADIO_TWO_PHASE:   /* our collective I/O is not ROMIO's generic one */
        case ADIO_SCALABLE_OPEN:
        default:
            return 0;
    }
}

/*
 * ad_pstripe_lock.c: a whole-file lock for atomic mode and for ROMIO's
 * data-sieving path.
 *
 * pstripe servers serialize overlapping writes per object, but one access
 * that spans stripes lands on several servers, so two concurrent overlapping
 * accesses can interleave stripe by stripe; and ROMIO's data-sieving write
 * (the comparison path used when romio_pstripe_listio_write is disabled)
 * reads, modifies and writes back whole buffers, which loses concurrent
 * updates without a lock. There is no lock in the servers, so the processes
 * that opened the file together lock among themselves with MPI one-sided
 * communication: a passive-target lock on a one-byte window at rank 0 of the
 * file's communicator, held while the access runs. MPI may grant a lock
 * lazily, so an empty lock epoch proves nothing; a one-byte MPI_Get
 * completed with MPI_Win_flush inside the epoch can only complete once the
 * lock is granted, which makes the epoch a real mutex. Writers take it
 * exclusive, readers shared; it covers the whole file, so it is coarse but
 * correct. Processes that opened the file separately are not covered (as
 * with any lock that lives in MPI).
 *
 * The window is created collectively, only when it is needed: at open or
 * in SetInfo when romio_pstripe_listio_write is disabled, and when atomic
 * mode is switched on (MPI_File_set_atomicity is collective).
 */

#include "ad_pstripe.h"

int ADIOI_PSTRIPE_Lock_needed(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    return fd->atomicity || ps->listio_write == ADIOI_HINT_DISABLE;
}

void ADIOI_PSTRIPE_Lock_setup(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_LOCK_SETUP";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int rank, rc;

    *error_code = MPI_SUCCESS;
    if (ps->lock_win != MPI_WIN_NULL)
        return;
    MPI_Comm_rank(fd->comm, &rank);
    rc = PMPI_Win_allocate(rank == 0 ? sizeof(int) : 0, 1, MPI_INFO_NULL, fd->comm,
                          &ps->lock_base, &ps->lock_win);
    if (rc != MPI_SUCCESS) {
        ps->lock_win = MPI_WIN_NULL;
        *error_code = MPIO_Err_create_code(rc, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_IO, "**io", "**io %s",
                                           "pstripe: cannot create the lock window");
    }
}

void ADIOI_PSTRIPE_Lock_free(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    if (ps == NULL || ps->lock_win == MPI_WIN_NULL)
        return;
    if (ps->lock_depth > 0) {
        MPI_Win_unlock(0, ps->lock_win);
        ps->lock_depth = 0;
    }
    MPI_Win_free(&ps->lock_win);
    ps->lock_win = MPI_WIN_NULL;
}

int ADIOI_PSTRIPE_Lock(ADIO_File fd, int exclusive)
{
    static char myname[] = "ADIOI_PSTRIPE_LOCK";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    char byte;
    int rc;

    if (ps->lock_win == MPI_WIN_NULL)
        return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                    MPI_ERR_INTERN, "**io", "**io %s",
                                    "pstripe: lock requested but no lock window exists");
    if (ps->lock_depth++ > 0)
        return MPI_SUCCESS;
    rc = MPI_Win_lock(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0, ps->lock_win);
    if (rc != MPI_SUCCESS) {
        ps->lock_depth = 0;
        return rc;
    }
    rc = MPI_Get(&byte, 1, MPI_BYTE, 0, 0, 1, MPI_BYTE, ps->lock_win);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_flush(0, ps->lock_win);
    return rc;
}

int ADIOI_PSTRIPE_Unlock(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    if (ps->lock_win == MPI_WIN_NULL || ps->lock_depth == 0)
        return MPI_SUCCESS;
    if (--ps->lock_depth > 0)
        return MPI_SUCCESS;
    return MPI_Win_unlock(0, ps->lock_win);
}

/* ROMIO's lock entry (ADIOI_WRITE_LOCK, ADIOI_READ_LOCK, ADIOI_UNLOCK):
 * byte ranges are widened to the whole file. */
int ADIOI_PSTRIPE_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                          ADIO_Offset len)
{
    if (len == 0)
        return MPI_SUCCESS;
    if (type == F_UNLCK)
        return ADIOI_PSTRIPE_Unlock(fd);
    return ADIOI_PSTRIPE_Lock(fd, type == F_WRLCK);
}

/*
 * ad_pstripe_open.c: Open, OpenColl, Close and Delete.
 *
 * A collective open is done the generic way (ADIOI_GEN_OpenColl), without
 * its close-and-reopen: the first aggregator creates the file, with the
 * layout taken from the hints, and keeps it open; after it broadcasts the
 * result the other processes open the existing file. Every process then
 * learns the real layout from its own handle, so the info object shows the
 * layout the file has, not the one that was asked for (layout hints the
 * cluster cannot honour are fitted to it before the create: Fit_layout).
 */

#include "ad_pstripe.h"

/* Permission bits of a file the open creates: the mode given, else the
 * umask applied to 0666. */
static int create_mode(ADIO_File fd)
{
    mode_t old_mask;

    if (fd->perm != ADIO_PERM_NULL)
        return fd->perm;
    old_mask = umask(022);
    umask(old_mask);
    return 0666 & ~old_mask;
}

/* Open on this process with fd->access_mode. */
void ADIOI_PSTRIPE_Open(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_OPEN";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    pstripe_stat_t st;
    int flags, rc;

    *error_code = MPI_SUCCESS;

    if (fd->access_mode & ADIO_RDONLY)
        flags = PSTRIPE_RDONLY;
    else if (fd->access_mode & ADIO_WRONLY)
        flags = PSTRIPE_WRONLY;
    else
        flags = PSTRIPE_RDWR;
    if (fd->access_mode & ADIO_CREATE)
        flags |= PSTRIPE_CREAT;
    if (fd->access_mode & ADIO_EXCL)
        flags |= PSTRIPE_EXCL;

    if (flags & PSTRIPE_CREAT)
        ADIOI_PSTRIPE_Fit_layout(ps);
    rc = pstripe_open(ADIOI_PSTRIPE_fs_handle, ps->path, flags, create_mode(fd),
                      (flags & PSTRIPE_CREAT) ? &ps->create_layout : NULL, &ps->file);
    ps->last_status = rc;
    if (rc != PS_OK) {
        *error_code = ADIOI_PSTRIPE_err(myname, (flags & PSTRIPE_CREAT) ? "create" : "open",
                                        ps->path, __LINE__, rc, NULL);
        return;
    }
    ADIOI_PSTRIPE_file_opened(1);

    ADIOI_PSTRIPE_Apply_options(fd);
    rc = pstripe_file_layout(ps->file, &ps->layout);
    if (rc == PS_OK && (fd->access_mode & ADIO_APPEND)) {
        rc = pstripe_fstat(ps->file, &st);
        if (rc == PS_OK)
            fd->fp_ind = fd->fp_sys_posn = (ADIO_Offset) st.size;
    }
    ps->last_status = rc;
    if (rc != PS_OK) {
        *error_code = ADIOI_PSTRIPE_err(myname, "stat", ps->path, __LINE__, rc, NULL);
        pstripe_close(ps->file);
        ps->file = NULL;
        ADIOI_PSTRIPE_file_opened(-1);
    }
}

/* Open as ROMIO's generic open does for data sieving: a write-only file is
 * opened read-write (ROMIO's data-sieving write path reads before it
 * writes), falling back to the user's mode if that is refused. */
static void open_promoted(ADIO_File fd, int access_mode, int *error_code)
{
    int err_class;

    fd->access_mode = access_mode;
    if (access_mode & ADIO_WRONLY)
        fd->access_mode = (access_mode & ~ADIO_WRONLY) | ADIO_RDWR;
    ADIOI_PSTRIPE_Open(fd, error_code);
    if (*error_code != MPI_SUCCESS && fd->access_mode != access_mode) {
        MPI_Error_class(*error_code, &err_class);
        if (err_class == MPI_ERR_ACCESS) {
            fd->access_mode = access_mode;
            ADIOI_PSTRIPE_Open(fd, error_code);
        }
    }
    fd->access_mode = access_mode;
}

void ADIOI_PSTRIPE_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_OPENCOLL";
    ADIOI_PSTRIPE_fs *ps;
    int creator = fd->hints->ranklist[0];
    int local_fail, any_fail, status, ok, all_ok, err;

    *error_code = MPI_SUCCESS;
    if (fd->fs_ptr == NULL)
        fd->fs_ptr = ADIOI_PSTRIPE_fs_alloc();
    ps = fd->fs_ptr;
    ps->path = ADIOI_PSTRIPE_Path(fd->filename);

    ADIOI_PSTRIPE_Init(error_code);
    if (*error_code == MPI_SUCCESS && ps->pending_error != MPI_SUCCESS)
        *error_code = ps->pending_error;
    /* ROMIO names a shared file pointer file after the file (unused here,
     * but made for any driver with shared file pointers): the name with a
     * '.' added, in PATH_MAX bytes; a longer name failed on the first
     * process alone, after this open, and the others waited for its
     * broadcast for ever (names of 4,095 and 4,096 bytes, which pstripe
     * allows). Every process refuses them here. */
    if (*error_code == MPI_SUCCESS && strlen(fd->filename) + 1 >= PATH_MAX)
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_BAD_FILE, "**io", "**io %s",
                                           "pstripe: a name of 4095 bytes or more (ROMIO's "
                                           "shared file pointer needs one shorter)");

    /* nobody creates anything unless every process can go on */
    local_fail = (*error_code != MPI_SUCCESS);
    MPI_Allreduce(&local_fail, &any_fail, 1, MPI_INT, MPI_MAX, fd->comm);
    if (any_fail) {
        if (*error_code == MPI_SUCCESS)
            *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname,
                                               __LINE__, MPI_ERR_IO, "**io", "**io %s",
                                               "pstripe: open failed on another process");
        goto err_free;
    }

    if (access_mode & ADIO_CREATE) {
        /* one process creates (exclusive create falls out of this); the
         * others wait for the result and open what it created */
        status = PS_OK;
        if (rank == creator) {
            open_promoted(fd, access_mode & ~ADIO_DELETE_ON_CLOSE, error_code);
            if (*error_code != MPI_SUCCESS)
                status = ps->last_status;
        }
        err = ADIOI_PSTRIPE_Bcast_status(fd, creator, status, myname, "create", __LINE__, NULL);
        if (err != MPI_SUCCESS) {
            if (rank != creator)
                *error_code = err;
            goto err_free;
        }
        if (rank != creator)
            open_promoted(fd, access_mode & ~(ADIO_CREATE | ADIO_EXCL), error_code);
    } else {
        open_promoted(fd, access_mode, error_code);
    }
    fd->access_mode = access_mode;

    /* the lock window, if the hints already need it, is made only once
     * every process has the file open: ADIO_Open closes the successful
     * opens of a failed collective open, and that close must not wait in
     * a collective the failed processes never enter */
    ok = (*error_code == MPI_SUCCESS);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, fd->comm);
    if (!ok)
        goto err_free;

    ADIOI_PSTRIPE_Set_layout_hints(fd);
    ADIOI_PSTRIPE_Cache_setup(fd);      /* (in the user's access mode) */
    ps->all_open = all_ok;
    fd->is_open = 1;
    fd->dirty_write = 0;
    if (all_ok)
        ADIOI_PSTRIPE_Sharedfp_open(fd);        /* a new pointer, at 0 */
    if (all_ok && ADIOI_PSTRIPE_Lock_needed(fd))
        ADIOI_PSTRIPE_Lock_setup(fd, error_code);
    return;

  err_free:
    if (ps->file != NULL) {
        pstripe_close(ps->file);
        ADIOI_PSTRIPE_file_opened(-1);
    }
    ADIOI_PSTRIPE_fs_free(ps);
    fd->fs_ptr = NULL;
}

void ADIOI_PSTRIPE_Close(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_CLOSE";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int rc = PS_OK, sfp_rc, wb_err;

    *error_code = MPI_SUCCESS;
    if (ps == NULL)
        return;
    /* buffered writes, or the error of an earlier failed flush of them */
    wb_err = ADIOI_PSTRIPE_Cache_sync(fd);
    ADIOI_PSTRIPE_Cache_release(ps);    /* (their read-ahead reads the file) */

    /* Wait here until every process has closed: its buffered writes are
     * then at the servers. A program may open the file again on one
     * process right after the collective close and read what the others
     * wrote (ROMIO's test hindexed does, rank 0 alone); ROMIO's own
     * barrier in MPI_File_close comes before this flush, so without this
     * one that read missed the bytes of processes still flushing (24 of
     * 96 in hindexed with romio_cb_write disabled). And ROMIO deletes a
     * delete-on-close file (on one process) right after this close: a
     * pstripe file is gone for every process the moment it is unlinked.
     * Not in the cleanup of a failed open, where not all processes come. */
    if (ps->all_open && (!(fd->access_mode & ADIO_RDONLY) ||
                         (fd->access_mode & ADIO_DELETE_ON_CLOSE)))
        ADIOI_PSTRIPE_Barrier(fd->comm);

    ADIOI_PSTRIPE_Lock_free(fd);
    sfp_rc = ADIOI_PSTRIPE_Sharedfp_close(fd);
    if (ps->file != NULL) {
        rc = pstripe_close(ps->file);
        ADIOI_PSTRIPE_file_opened(-1);
        ps->file = NULL;
    }
    if (rc == PS_OK && sfp_rc != PS_OK)
        *error_code = ADIOI_PSTRIPE_err(myname, "release the shared file pointer of", ps->path,
                                        __LINE__, sfp_rc, NULL);
    if (rc != PS_OK)
        *error_code = ADIOI_PSTRIPE_err(myname, "close", ps->path, __LINE__, rc, NULL);
    if (wb_err != MPI_SUCCESS)
        *error_code = wb_err;
    ADIOI_PSTRIPE_fs_free(ps);
    fd->fs_ptr = NULL;
}

void ADIOI_PSTRIPE_Delete(const char *filename, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_DELETE";
    char *path;
    int rc;

    ADIOI_PSTRIPE_Init(error_code);
    if (*error_code != MPI_SUCCESS)
        return;

    path = ADIOI_PSTRIPE_Path(filename);
    rc = pstripe_unlink(ADIOI_PSTRIPE_fs_handle, path);
    if (rc != PS_OK)
        *error_code = ADIOI_PSTRIPE_err(myname, "delete", path, __LINE__, rc, NULL);
    ADIOI_Free(path);
}

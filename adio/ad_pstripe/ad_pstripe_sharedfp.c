/*
 * ad_pstripe_sharedfp.c: shared file pointers.
 *
 * ROMIO keeps a shared file pointer in a hidden file that it locks and
 * rewrites for every access; pstripe keeps it as a counter at the file's
 * metadata owner (pstripe_sfp_*, server/pss_sharedfp.c), named by the file
 * and an instance id that the first aggregator draws at the collective open
 * and broadcasts: the pointer belongs to this open of the file, and a new
 * open starts at 0. adio/patch-romio.sh sends ROMIO's ADIO_Get_shared_fp
 * and ADIO_Set_shared_fp here for pstripe files, makes MPI_File_set_view
 * reset the counter (by counting views: no message, unless a process found
 * the pointer lost), and has the ordered calls use
 * ADIOI_PSTRIPE_Get_ordered_fp instead of passing a token from rank to rank.
 *
 * Units are ROMIO's: etypes of the current view.
 *
 * A write at the shared pointer (write_shared, the ordered writes: ROMIO
 * calls the write right after taking the offset here) is written through,
 * not kept by write-behind (ps->at_shared_fp, ad_pstripe_cache.c): records
 * appended through a shared pointer are read by the other processes, and
 * programs (ROMIO's own test shared_fp, with 4 processes) read them after
 * a barrier alone, which MPI's nonatomic mode does not promise.
 */

#include "ad_pstripe.h"
#include "ps_log.h"

#include <fcntl.h>
#include <sys/random.h>
#include <time.h>

/* A random nonzero 64-bit id. */
static uint64_t random_instance(void)
{
    uint64_t id = 0;
    struct timespec ts;

    if (getrandom(&id, sizeof(id), 0) != (ssize_t) sizeof(id)) {
        clock_gettime(CLOCK_REALTIME, &ts);
        id = ((uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec) ^
            ((uint64_t) getpid() << 32);
        id *= 0x9e3779b97f4a7c15ull;
    }
    return id != 0 ? id : 1;
}

/* Collective over fd->comm, once every process has the file open: the
 * first aggregator draws the instance, makes the counter at 0 on the server
 * (only a set makes one: a later fetch-and-add of a counter the server lost
 * in a restart fails instead of starting again at 0) and broadcasts it. If
 * the server cannot make it, the open still succeeds and every use of the
 * shared file pointer fails (instance 0). */
void ADIOI_PSTRIPE_Sharedfp_open(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int rank;
    unsigned long long id = 0;

    MPI_Comm_rank(fd->comm, &rank);
    if (rank == fd->hints->ranklist[0]) {
        id = random_instance();
        if (pstripe_sfp_set(ps->file, id, 0, 0) != PS_OK) {
            ps_warn("%s: no shared file pointer (its shared accesses will fail): %s", ps->path,
                    pstripe_last_error());
            id = 0;
        }
    }
    MPI_Bcast(&id, 1, MPI_UNSIGNED_LONG_LONG, fd->hints->ranklist[0], fd->comm);
    ps->sfp_instance = id;
}

/* At close (after ROMIO's barrier in MPI_File_close): one process forgets
 * the counter on the server. Returns a pstripe status. */
int ADIOI_PSTRIPE_Sharedfp_close(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int rank;

    if (ps->sfp_instance == 0 || ps->file == NULL || !ps->all_open)
        return PS_OK;
    MPI_Comm_rank(fd->comm, &rank);
    if (rank != fd->hints->ranklist[0])
        return PS_OK;
    return pstripe_sfp_release(ps->file, ps->sfp_instance);
}

/* The file's handle and instance, or an MPI error code. */
static int sfp_check(ADIO_File fd, const char *myname, int line)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    if (ps == NULL || ps->file == NULL || ps->sfp_instance == 0)
        return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, line,
                                    MPI_ERR_IO, "**io", "**io %s",
                                    "pstripe: the file has no shared file pointer "
                                    "(not open on every process, or the server could not "
                                    "make one at the open)");
    return MPI_SUCCESS;
}

/* A lost pointer (PS_ERR_NO_ENTRY from the library: the server restarted
 * since the open) is an I/O error, not a missing file. */
static int sfp_err(ADIO_File fd, const char *myname, const char *what, int line, int rc,
                   const char *detail)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    return ADIOI_PSTRIPE_err(myname, what, ps != NULL ? ps->path : fd->filename, line,
                             rc == PS_ERR_NO_ENTRY ? PS_ERR_IO : rc, detail);
}

/*
 * A failed Get_shared_fp returns a pointer past any file: ROMIO's
 * MPI_File_iwrite_shared and iread_shared (mpi-io/iwrite_sh.c, iread_sh.c)
 * go on to the access after the error (the others return), which at 0
 * overwrote or read the file's first bytes (session 80's review). The
 * access at that pointer fails with the pointer's error instead
 * (ADIOI_PSTRIPE_Sfp_failed_access, asked by every access of the driver);
 * no other access reaches offsets that large.
 */
#define SFP_FAILED_BYTES ((ADIO_Offset) 1 << 62)

static void sfp_failed(ADIO_File fd, ADIO_Offset * shared_fp, int error_code)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    *shared_fp = SFP_FAILED_BYTES / (fd->etype_size > 0 ? fd->etype_size : 1);
    if (ps != NULL)
        ps->sfp_error = error_code;
}

int ADIOI_PSTRIPE_Sfp_failed_access(ADIO_File fd, ADIO_Offset offset, int in_etypes)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    ADIO_Offset unit = in_etypes && fd->etype_size > 0 ? fd->etype_size : 1;
    int err;

    if (ps == NULL || ps->sfp_error == MPI_SUCCESS || offset < SFP_FAILED_BYTES / 2 / unit)
        return MPI_SUCCESS;
    err = ps->sfp_error;
    ps->sfp_error = MPI_SUCCESS;
    return err;
}

/* *shared_fp = the pointer; the pointer += incr, atomically. */
void ADIOI_PSTRIPE_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,
                                 int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_GET_SHARED_FP";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    uint64_t old = 0;
    int rc;

    *error_code = sfp_check(fd, myname, __LINE__);
    if (*error_code == MPI_SUCCESS && incr < 0)
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_ARG, "**io", "**io %s",
                                           "pstripe: negative shared file pointer increment");
    if (*error_code == MPI_SUCCESS) {
        rc = pstripe_sfp_fetch_add(ps->file, ps->sfp_instance, ps->sfp_view, (uint64_t) incr,
                                   &old);
        ps->sfp_lost |= rc == PS_ERR_NO_ENTRY;
        if (rc != PS_OK)
            *error_code = sfp_err(fd, myname, "shared file pointer", __LINE__, rc, NULL);
    }
    if (*error_code != MPI_SUCCESS) {
        sfp_failed(fd, shared_fp, *error_code);
        return;
    }
    *shared_fp = (ADIO_Offset) old;
    ps->at_shared_fp = 1;
}

/* The pointer = offset (etypes). */
void ADIOI_PSTRIPE_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_SET_SHARED_FP";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int rc;

    *error_code = sfp_check(fd, myname, __LINE__);
    if (*error_code != MPI_SUCCESS)
        return;
    if (offset < 0) {
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_ARG, "**iobadoffset", 0);
        return;
    }
    rc = pstripe_sfp_set(ps->file, ps->sfp_instance, ps->sfp_view, (uint64_t) offset);
    if (rc != PS_OK)
        *error_code = ADIOI_PSTRIPE_err(myname, "shared file pointer", ps->path, __LINE__, rc,
                                        NULL);
    else
        ps->sfp_lost = 0;
}

/* MPI_File_set_view's reset of the pointer to 0, collective over fd->comm
 * (ROMIO resets only a pointer file it has opened): every process counts
 * one more view, and the counter starts again at 0 when the first access of
 * the new view reaches it (pstripe_sfp_fetch_add). Nothing is sent: HDF5
 * sets a view around every collective access. The allreduce that starts
 * set_view (ROMIO's check of the info argument) orders each process's
 * accesses of the old view before anyone's of the new: a shared access
 * takes its offset before its call returns, and no process leaves that
 * allreduce before every process has entered set_view (ROMIO's barrier
 * after this, which pstripe files skip, ordered them too). A file without
 * a pointer says so at its first shared access.
 *
 * But a counter the server lost (it restarted) comes back only by a set:
 * set_view's hint agreement just before (ADIO_Set_view's SetInfo, one
 * allreduce) says whether a process found it lost (sfp_lost_any), and
 * then the first aggregator sets it to 0 in the new view, and a broadcast
 * of the outcome keeps every process from the new view until it is set.
 * (A loss no process has met yet is met at the next shared access, which
 * says so; the set_view or seek_shared after it sets the pointer again.)
 *
 * It is also set_view's only call into the driver after ADIO_Set_view,
 * which drops what SetInfo returned: the error of set_view's flush
 * (Set_view_begin) or of its SetInfo (bad hints) is returned here, so that
 * MPI_File_set_view reports it. */
void ADIOI_PSTRIPE_Reset_shared_fp(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_RESET_SHARED_FP";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int rank, root = fd->hints->ranklist[0], rc = PS_OK;

    *error_code = MPI_SUCCESS;
    if (ps == NULL)
        return;
    ps->sfp_view++;
    if (ps->sfp_lost_any) {
        ps->sfp_lost_any = 0;
        MPI_Comm_rank(fd->comm, &rank);
        if (rank == root)
            rc = sfp_check(fd, myname, __LINE__) != MPI_SUCCESS ? PS_ERR_INVALID
                : pstripe_sfp_set(ps->file, ps->sfp_instance, ps->sfp_view, 0);
        MPI_Bcast(&rc, 1, MPI_INT, root, fd->comm);
        if (rc == PS_OK)
            ps->sfp_lost = 0;
        else
            *error_code = sfp_err(fd, myname, "shared file pointer (set again by set_view)",
                                  __LINE__, rc, rank == root ? NULL :
                                  "failed on the first aggregator");
    }
    if (ps->view_flush_error != MPI_SUCCESS || ps->setinfo_error != MPI_SUCCESS)
        *error_code = ps->view_flush_error != MPI_SUCCESS ? ps->view_flush_error
            : ps->setinfo_error;
    ps->view_flush_error = ps->setinfo_error = MPI_SUCCESS;
}

/*
 * Ordered access, collective over fd->comm: an exclusive scan of the
 * increments gives each process its place in rank order; the last rank,
 * which knows the total, takes it from the pointer with one fetch-and-add
 * and broadcasts the old value (and the status, so every process returns
 * the same error). *shared_fp = old value + the increments of lower ranks.
 */
void ADIOI_PSTRIPE_Get_ordered_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,
                                  int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_GET_ORDERED_FP";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    long long mine = incr, before = 0, msg[2] = { 0, PS_OK };
    const char *detail = NULL;
    int rank, nprocs, last, err;
    uint64_t old = 0;

    *shared_fp = 0;
    MPI_Comm_rank(fd->comm, &rank);
    MPI_Comm_size(fd->comm, &nprocs);
    last = nprocs - 1;
    PMPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, fd->comm);
    if (rank == 0)
        before = 0;     /* MPI_Exscan leaves rank 0's result undefined */
    if (rank == last) {
        err = sfp_check(fd, myname, __LINE__);
        if (err != MPI_SUCCESS || before + mine < 0) {
            msg[1] = PS_ERR_INVALID;
            detail = err != MPI_SUCCESS ? "no shared file pointer" : "negative total increment";
        } else {
            msg[1] = pstripe_sfp_fetch_add(ps->file, ps->sfp_instance, ps->sfp_view,
                                           (uint64_t) (before + mine), &old);
            ps->sfp_lost |= msg[1] == PS_ERR_NO_ENTRY;
        }
        msg[0] = (long long) old;
    }
    MPI_Bcast(msg, 2, MPI_LONG_LONG, last, fd->comm);
    if (msg[1] != PS_OK) {
        *error_code = sfp_err(fd, myname, "ordered shared file pointer", __LINE__,
                              (int) msg[1], rank == last ? detail : "failed on the last process");
        return;
    }
    *shared_fp = (ADIO_Offset) (msg[0] + before);
    *error_code = MPI_SUCCESS;
    ps->at_shared_fp = 1;
}

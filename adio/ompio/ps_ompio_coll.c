/*
 * ps_ompio_coll.c: whether a blocking collective read or write of a
 * pstripe file is aggregated by OMPIO, or made by every process as the
 * independent call of the same kind (part of the fs component;
 * libpstripe-ompi-hooks.so's collective calls ask it,
 * pstripe_ompio_independent).
 *
 * OMPIO's collective calls exchange every call's data between the
 * processes (its fcoll components) and an aggregator writes or reads the
 * others' bytes, where each process could write or read its own as list
 * I/O, which the servers merge (pss_plan.c) and serve from their cache.
 * Measured here (pstripe-bench-openmpi -p vector -c, 1 MiB calls for reads
 * and 4 MiB for writes, romio_cb_read / romio_cb_write automatic with the
 * MPICH driver's rule against disable, 2 rounds each): 2 processes, reads
 * of 128 B - 2 KiB regions 71-197 MiB/s aggregated against 1,269-3,035
 * independent, writes of 64 KiB - 4 MiB regions 60-956 against 448-1,185;
 * 4 processes on 2 cores, reads of 128 B - 2 KiB 36-225 against
 * 1,670-3,992, writes of 64 KiB - 1 MiB 198-264 against 696-1,219
 * (session 64: 4 KiB calls of each process's own block 3-24 against
 * 360-573, where the MPICH driver's rule aggregates none). The MPICH
 * driver aggregates interleaved regions of 4 MiB and more
 * (ad_pstripe_aggregate.h; its two-phase too lost below that); OMPIO's
 * lost at every size, so here every blocking collective call is independent
 * unless romio_cb_read / romio_cb_write is enable (for the file, at open:
 * agreed by every process), which asks for OMPIO's aggregation.
 * Nonblocking and split collective calls stay OMPIO's.
 *
 * A process leaves OMPIO's collective write once its bytes reached their
 * aggregator, maybe before they are written: a read of them right after
 * (independent, from the servers) could find the old bytes (HDF5's own
 * Fortran test and tests/mpi/ps_fortran did, 2 processes). And OMPIO
 * returns MPI_SUCCESS from a collective call whose aggregator failed to
 * write or read another process's bytes. ROMIO ends its collective calls
 * with an allreduce of the processes' outcomes; so does
 * pstripe_ompio_coll_result, after each blocking collective read or write
 * OMPIO aggregated (and the end of each split collective write).
 */
#include "ps_ompio.h"

#include "ompi/communicator/communicator.h"
#include "ompi/file/file.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/request/request.h"

#include <string.h>

/* (ps_ompio.h) */
ompio_file_t *ps_ompio_fs_file(MPI_File file)
{
    ompio_file_t *fh;

    if (file == NULL || file == MPI_FILE_NULL || file->f_io_version != MCA_IO_BASE_V_2_0_0 ||
        file->f_io_selected_data == NULL ||
        strcmp(file->f_io_selected_component.v2_0_0.io_version.mca_component_name, "ompio") != 0) {
        return NULL;
    }
    fh = &((mca_common_ompio_data_t *)file->f_io_selected_data)->ompio_fh;
    return fh->f_fstype == PS_OMPIO_FSTYPE && fh->f_fs_ptr != NULL ? fh : NULL;
}

/* A barrier of fh's processes, Open MPI's own (an MPI call would be
 * hooked): MPI_SUCCESS, or an error code that says what failed (what: the
 * call). */
static int file_barrier(ompio_file_t *fh, const char *what)
{
    int err;

    if (fh->f_comm == NULL || fh->f_comm == MPI_COMM_NULL) {
        return MPI_SUCCESS;
    }
    err = fh->f_comm->c_coll->coll_barrier(fh->f_comm, fh->f_comm->c_coll->coll_barrier_module);
    if (err == OMPI_SUCCESS) {
        return MPI_SUCCESS;
    }
    return ps_ompio_code(MPI_ERR_OTHER, "pstripe: %s %s: its barrier failed (Open MPI error %d)",
                         what, fh->f_filename, err);
}

/* Collective: should a blocking collective read or write (is_write) of
 * file be made as the independent call of the same kind? The same answer
 * on every process of the file (its hints were agreed at open); always 0
 * for a file that is not pstripe's. A write made independent, and a read
 * where some process of the file has no read cache (rc_all, agreed at
 * open: whether to wait must be the same everywhere), first wait for
 * every process to enter (file_barrier), as the MPICH driver's gather
 * does: a process's bytes written before the call are there for the
 * others' parts of it (tests/mpi/ps_contig; with the read cache on, a
 * read starts at once, as the MPICH driver's second apart read in a row
 * does). A write then drops the file's read cache, as the MPICH driver's
 * collective writes do. *err: the barrier's failure (then 0). For
 * libpstripe-ompi-hooks.so, which looks it up. */
__attribute__((visibility("default"))) int pstripe_ompio_independent(MPI_File file, int is_write,
                                                                     int *err)
{
    ompio_file_t *fh = ps_ompio_fs_file(file);
    const ps_ompio_file_t *pf;

    *err = MPI_SUCCESS;
    if (fh == NULL) {
        return 0;
    }
    pf = fh->f_fs_ptr;
    if ((is_write ? pf->cb_write : pf->cb_read) == PS_OMPIO_ENABLE) {
        return 0;
    }
    if (is_write || !pf->rc_all) {
        *err = file_barrier(fh, is_write ? "collective write to" : "collective read from");
    }
    if (is_write) {
        pstripe_rcache_drop(pf->rc);
    }
    return *err == MPI_SUCCESS;
}

/* OMPIO 4.1's end of a split collective call waits for the request its
 * begin made and leaves it if it failed (ompi_request_wait frees only a
 * request that succeeded; MPI_Wait's error path frees the others), in the
 * list of pending requests: every later MPI_File_sync of the process then
 * failed at once with MPI_ERR_OTHER while the others waited in its
 * barrier. Free such a leftover once the split call has ended. */
static void free_split_leftover(ompio_file_t *fh)
{
    if (!fh->f_split_coll_in_use && fh->f_split_coll_req != NULL &&
        fh->f_split_coll_req != MPI_REQUEST_NULL && REQUEST_COMPLETE(fh->f_split_coll_req)) {
        (void)ompi_request_free(&fh->f_split_coll_req);
    }
}

/* Collective, after a collective read or write of file that OMPIO
 * aggregated, and after the end of a split one (rc: its outcome on this
 * process, with the failure that OMPIO dropped): returns when every
 * process is done, with rc, else a failure of another process's, of its
 * class ("its part failed on another process"), or the allreduce's. Open
 * MPI's own allreduce on the file's communicator (an MPI call would be
 * hooked). For libpstripe-ompi-hooks.so. */
__attribute__((visibility("default"))) int pstripe_ompio_coll_result(MPI_File file, int rc)
{
    ompio_file_t *fh = ps_ompio_fs_file(file);
    struct ompi_communicator_t *comm = fh != NULL ? fh->f_comm : NULL;
    int cls = MPI_SUCCESS, any, err;

    if (comm == NULL || comm == MPI_COMM_NULL) {
        return rc;
    }
    free_split_leftover(fh);
    if (rc != MPI_SUCCESS && MPI_Error_class(rc, &cls) != MPI_SUCCESS) {
        cls = MPI_ERR_OTHER;
    }
    any = cls;
    err = comm->c_coll->coll_allreduce(&cls, &any, 1, MPI_INT, MPI_MAX, comm,
                                       comm->c_coll->coll_allreduce_module);
    if (err != OMPI_SUCCESS) {
        return rc != MPI_SUCCESS ? rc
                                 : ps_ompio_code(MPI_ERR_OTHER,
                                                 "pstripe: collective call on %s: its allreduce "
                                                 "failed (Open MPI error %d)",
                                                 fh->f_filename, err);
    }
    if (rc == MPI_SUCCESS && any != MPI_SUCCESS) {
        return ps_ompio_code(any,
                             "pstripe: collective call on %s: its part failed on another "
                             "process (that process's error says why)",
                             fh->f_filename);
    }
    return rc;
}

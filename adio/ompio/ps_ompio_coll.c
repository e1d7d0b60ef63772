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
 * I/O: 2 processes, each 4 KiB of its own block a call, ran at 3-24 MiB/s
 * on pstripe and 23-38 on Open MPI's ufs; 1 MiB calls through vector
 * views of 64-byte regions at 62 (write) and 65 (read) MiB/s, where the
 * same calls made independent ran at 455 and 2,182. The MPICH driver
 * decides by one allgather of the processes' accesses per call
 * (ad_pstripe_coll.c); here the same rule, the driver's own
 * (ADIOI_PSTRIPE_Ranges_aggregate in ad_pstripe_aggregate.c, compiled in):
 * aggregated only when the processes' ranges interleave and their regions
 * average ADIOI_PSTRIPE_COLL_SMALL_REGION bytes or more (writes) or
 * ADIOI_PSTRIPE_COLL_SMALL_READ_REGION (reads). The accesses are gathered
 * with Open MPI's own allgather on the file's communicator, as OMPIO's
 * collectives gather (no MPI call, so no hook flushes the buffers there).
 * Where a process's access is not known (a wrong argument: the collective
 * call then reports it), or in atomic mode, every process aggregates as
 * before. (OMPIO's aggregation lost to independent list I/O at every
 * region size measured here, 2 processes: vector views of 4 KiB to 1 MiB
 * regions, writes 75-237 against 491-1,133 MiB/s, reads 38-199 against
 * 855-2,955; the driver's read limit of 128 bytes, measured against
 * ROMIO's cheaper two-phase, still aggregates those reads here.)
 *
 * An access's range is the bytes it may touch: for a noncontiguous view,
 * from the start of the first filetype instance it reaches to the end of
 * the last (their true extent); its regions, the flattened filetype's
 * pieces in the instances it reaches (OMPIO's decoded view), one for a
 * contiguous view.
 */
#include "ps_ompio.h"

#include "ad_pstripe_aggregate.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/file/file.h"
#include "ompi/mca/coll/coll.h"

#include <stdlib.h>
#include <string.h>

/* processes whose accesses fit on the stack */
#define COLL_STACK 64

/* The access of count dt at offset (etypes, from the start of the view)
 * of fh, into *r (start -1: not known, or wrong arguments). From OMPIO's
 * copy of the view and Open MPI's own datatype calls: MPI's would call the
 * error handler of MPI_COMM_WORLD on a bad datatype, and abort where the
 * file's error handler returns the error. */
static void access_of(ompio_file_t *fh, MPI_Offset offset, int count, MPI_Datatype dt,
                      ADIOI_PSTRIPE_range *r)
{
    ptrdiff_t lb, extent, tlb, textent;
    size_t dsize, fsize;
    long long first, last, k0, k1;

    r->start = -1;
    r->end = -1;
    r->bytes = r->nregions = 0;
    if (dt == NULL || dt == MPI_DATATYPE_NULL || !ompi_datatype_is_committed(dt) || count < 0 ||
        offset < 0 || fh->f_orig_filetype == NULL || fh->f_etype_size == 0 ||
        fh->f_datarep == NULL || strcmp(fh->f_datarep, "native") != 0) {
        return;
    }
    ompi_datatype_type_size(dt, &dsize);
    ompi_datatype_type_size(fh->f_orig_filetype, &fsize);
    ompi_datatype_get_extent(fh->f_orig_filetype, &lb, &extent);
    ompi_datatype_get_true_extent(fh->f_orig_filetype, &tlb, &textent);
    if (fsize == 0) {
        return;
    }
    r->bytes = (long long)count * (long long)dsize;
    if (r->bytes == 0) {
        r->start = r->end = 0;
        return;
    }
    first = (long long)offset * (long long)fh->f_etype_size;
    last = first + r->bytes - 1;
    k0 = first / (long long)fsize;
    k1 = last / (long long)fsize;
    r->start = fh->f_disp + k0 * (long long)extent + tlb;
    r->end = fh->f_disp + k1 * (long long)extent + tlb + textent;
    r->nregions = (fh->f_flags & OMPIO_CONTIGUOUS_FVIEW) || fh->f_iov_count == 0
                      ? 1
                      : (k1 - k0 + 1) * (long long)fh->f_iov_count;
}

/* The pstripe file that the program's file is, or NULL. */
static ompio_file_t *pstripe_file(MPI_File file)
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

/* Collective: should this collective read or write (is_write) of count dt
 * at offset (etypes from the view's start; the individual file pointer's
 * where explicit_offset is 0) of file be made as the independent call of
 * the same kind? 1 on every process of the file, or 0 on every one (and
 * always 0 for a file that is not pstripe's). *err: the MPI error of the
 * gather (then 0). For libpstripe-ompi-hooks.so, which looks it up. */
__attribute__((visibility("default"))) int pstripe_ompio_independent(MPI_File file, int is_write,
                                                                     int explicit_offset,
                                                                     MPI_Offset offset, int count,
                                                                     MPI_Datatype dt, int *err)
{
    ompio_file_t *fh = pstripe_file(file);
    ADIOI_PSTRIPE_range mine, stack[2 * COLL_STACK], *all;
    int i, n, known, indep;

    *err = MPI_SUCCESS;
    if (fh == NULL) {
        return 0;
    }
    if (!explicit_offset && PMPI_File_get_position(file, &offset) != MPI_SUCCESS) {
        mine.start = -1;
    } else {
        access_of(fh, offset, count, dt, &mine);
    }
    if (fh->f_atomicity) {
        mine.start = -1;
    }
    n = fh->f_size;
    if (n == 1) {
        return mine.start >= 0;
    }
    all = n <= COLL_STACK ? stack : malloc(2 * (size_t)n * sizeof(*all));
    if (all == NULL) {
        /* (the others wait in the allgather: no way on without it) */
        opal_output(0, "pstripe: collective call on %s: out of memory", fh->f_filename);
        abort();
    }
    *err =
        fh->f_comm->c_coll->coll_allgather(&mine, 4, MPI_LONG_LONG, all, 4, MPI_LONG_LONG,
                                           fh->f_comm, fh->f_comm->c_coll->coll_allgather_module);
    for (i = 0, known = 1; i < n; i++) {
        known &= all[i].start >= 0;
    }
    if (*err != OMPI_SUCCESS) {
        /* (Open MPI's own code, not an MPI one: the caller returns this) */
        *err = ps_ompio_code(MPI_ERR_OTHER,
                             "pstripe: collective call on %s: cannot gather the processes' "
                             "accesses (Open MPI error %d)",
                             fh->f_filename, *err);
    }
    /* (the second half of all: the rule's scratch) */
    indep =
        *err == MPI_SUCCESS && known && !ADIOI_PSTRIPE_Ranges_aggregate(all, n, is_write, all + n);
    if (all != stack) {
        free(all);
    }
    return indep;
}

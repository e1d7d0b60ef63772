/*
 * ps_ompio_apart.c: collective reads and writes of a pstripe file whose
 * processes' ranges do not interleave, done as independent ones (part of
 * the fs component; libpstripe-ompi-hooks.so's collective calls ask it,
 * pstripe_ompio_apart).
 *
 * OMPIO's collective calls exchange every call's data between the
 * processes (its fcoll components) and an aggregator writes or reads the
 * others' bytes, where each process could write or read its own: 2
 * processes, each 4 KiB of its own block a call (pstripe-bench -c), ran at
 * 9 MiB/s on pstripe and 14 on Open MPI's ufs, about 0.4 ms a call of
 * exchange. The MPICH driver's automatic aggregation (ad_pstripe_coll.c)
 * gathers the processes' ranges once a call and, where they do not
 * interleave, makes the call independent; here the same: one allgather of
 * each process's range (Open MPI's own allgather on the file's
 * communicator, as OMPIO's collectives gather: no MPI call, so no hook
 * flushes the buffers there), and if every process's range is
 * known, every process may use its caches (write-behind buffer for a
 * write, read cache for a read; not in atomic mode) and no two ranges
 * overlap, every process makes the independent call of the same kind,
 * through its caches, as the MPICH driver's are. Else the collective call
 * goes on as before.
 *
 * A range is the bytes the access may touch: for a noncontiguous view,
 * from the start of the first filetype instance it reaches to the end of
 * the last (their true extent), so that processes whose views interleave
 * (a vector view, HDF5's column blocks) always aggregate, and only
 * accesses that are truly apart go independent. Views of another data
 * representation than native aggregate too.
 */
#include "ps_ompio.h"

#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/file/file.h"
#include "ompi/mca/coll/coll.h"

#include <stdlib.h>
#include <string.h>

/* processes whose ranges fit on the stack */
#define APART_STACK 64

/* one process's range in the allgather */
typedef struct {
    long long start, end; /* [start, end); start == end: no bytes */
    long long ok;         /* its range is known and its caches may take it */
} apart_range;

/* The bytes an access of count dt at offset (etypes, from the start of
 * the view) of fh may touch, into *r; r->ok 0 if it cannot tell, or if
 * the arguments are wrong (the collective call then reports them). From
 * OMPIO's copy of the view and Open MPI's own datatype calls: MPI's would
 * call the error handler of MPI_COMM_WORLD on a bad datatype, and abort
 * where the file's error handler returns the error. */
static void access_range(ompio_file_t *fh, MPI_Offset offset, int count, MPI_Datatype dt,
                         apart_range *r)
{
    ptrdiff_t lb, extent, tlb, textent;
    size_t dsize, fsize;
    long long first, last;

    r->ok = 0;
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
    r->ok = 1;
    r->start = r->end = 0;
    if ((long long)count * (long long)dsize > 0) {
        first = (long long)offset * (long long)fh->f_etype_size;
        last = first + (long long)count * (long long)dsize - 1;
        r->start = fh->f_disp + (first / (long long)fsize) * (long long)extent + tlb;
        r->end = fh->f_disp + (last / (long long)fsize) * (long long)extent + tlb + textent;
    }
}

static int by_start(const void *a, const void *b)
{
    const apart_range *x = a, *y = b;

    return (x->start > y->start) - (x->start < y->start);
}

/* Every range known and cached, and no two (with bytes) overlapping.
 * Sorts all. */
static int all_apart(apart_range *all, int n)
{
    long long end = -1;
    int i;

    qsort(all, (size_t)n, sizeof(*all), by_start);
    for (i = 0; i < n; i++) {
        if (!all[i].ok) {
            return 0;
        }
        if (all[i].start == all[i].end) {
            continue;
        }
        if (end > all[i].start) {
            return 0;
        }
        end = all[i].end;
    }
    return 1;
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
 * the same kind? 1 on every process of the file, or 0 on every one: a
 * pstripe file whose processes' ranges are known, cached and apart (one
 * process: its own). *err: the MPI error of the gather (then 0). For
 * libpstripe-ompi-hooks.so, which looks it up. */
__attribute__((visibility("default"))) int pstripe_ompio_apart(MPI_File file, int is_write,
                                                               int explicit_offset,
                                                               MPI_Offset offset, int count,
                                                               MPI_Datatype dt, int *err)
{
    ompio_file_t *fh = pstripe_file(file);
    ps_ompio_file_t *pf;
    apart_range mine, stack[APART_STACK], *all;
    int apart;

    *err = MPI_SUCCESS;
    if (fh == NULL) {
        return 0;
    }
    pf = fh->f_fs_ptr;
    if (!explicit_offset && PMPI_File_get_position(file, &offset) != MPI_SUCCESS) {
        mine.ok = 0;
    } else {
        access_range(fh, offset, count, dt, &mine);
    }
    mine.ok = mine.ok && !fh->f_atomicity && (is_write ? pf->wb != NULL : pf->rc != NULL);
    if (fh->f_size == 1) {
        return (int)mine.ok;
    }
    all = fh->f_size <= APART_STACK ? stack : malloc((size_t)fh->f_size * sizeof(*all));
    if (all == NULL) {
        /* (the others wait in the allgather: no way on without it) */
        opal_output(0, "pstripe: collective call on %s: out of memory", fh->f_filename);
        abort();
    }
    *err = fh->f_comm->c_coll->coll_allgather(&mine, 3, MPI_LONG_LONG, all, 3, MPI_LONG_LONG,
                                              fh->f_comm,
                                              fh->f_comm->c_coll->coll_allgather_module);
    apart = *err == MPI_SUCCESS && all_apart(all, fh->f_size);
    if (all != stack) {
        free(all);
    }
    return apart;
}

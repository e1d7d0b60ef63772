/*
 * ad_pstripe_coll.c: collective calls (Read/WriteStridedColl), and whether
 * they aggregate.
 *
 * romio_cb_write / romio_cb_read behave as in ROMIO: disable means
 * independent list I/O, enable means two-phase (ad_pstripe_twophase.c),
 * automatic means two-phase only when the processes' access ranges
 * interleave and their regions average ADIOI_PSTRIPE_COLL_SMALL_REGION
 * bytes or more for writes, ADIOI_PSTRIPE_COLL_SMALL_READ_REGION for reads
 * (ad_pstripe_aggregate.h):
 * one allgather of the processes' ranges decides, alike everywhere (a read
 * after two whose ranges were apart is done meanwhile, read_meanwhile).
 * Atomic mode uses
 * independent I/O under the file lock, since an aggregator's write mixes
 * several processes' data.
 */

#include "ad_pstripe.h"

static void independent(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                        int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                        int is_write, int *error_code)
{
    int buftype_is_contig, filetype_is_contig, lock_err = MPI_SUCCESS;
    ADIO_Offset off;

    ADIOI_Datatype_iscontig(datatype, &buftype_is_contig);
    ADIOI_Datatype_iscontig(fd->filetype, &filetype_is_contig);
    if (buftype_is_contig && filetype_is_contig) {
        off = (file_ptr_type == ADIO_EXPLICIT_OFFSET) ?
            fd->disp + (ADIO_Offset) fd->etype_size * offset : 0;
        if (fd->atomicity)
            lock_err = ADIOI_PSTRIPE_Lock(fd, is_write);
        if (lock_err != MPI_SUCCESS) {
            *error_code = lock_err;
            return;
        }
        if (is_write)
            ADIO_WriteContig(fd, buf, count, datatype, file_ptr_type, off, status, error_code);
        else
            ADIO_ReadContig(fd, buf, count, datatype, file_ptr_type, off, status, error_code);
        if (fd->atomicity)
            ADIOI_PSTRIPE_Unlock(fd);
    } else if (is_write) {
        ADIO_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    } else {
        ADIO_ReadStrided(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    }
}

/* This process's range of its access; one whose access could not be
 * built (ok 0) sends start -1, an empty range. */
static ADIOI_PSTRIPE_range my_range(const ADIOI_PSTRIPE_access * acc, int ok)
{
    ADIOI_PSTRIPE_range mine;

    mine.start = ok ? acc->start : -1;
    mine.end = ok && acc->total > 0 ? acc->hi : mine.start;
    mine.bytes = ok ? acc->total : 0;
    mine.nregions = ok ? (ADIO_Offset) acc->nregions : 0;
    return mine;
}

/* Every process's file range of its access (ranges: room for nprocs),
 * in one allgather. Returns its MPI error code. */
static int gather_ranges(ADIO_File fd, const ADIOI_PSTRIPE_access * acc, int ok,
                         ADIOI_PSTRIPE_range * ranges)
{
    ADIOI_PSTRIPE_range mine = my_range(acc, ok);

    return ADIOI_PSTRIPE_Allgather(&mine, 4, MPI_LONG_LONG, ranges, 4, MPI_LONG_LONG, fd->comm);
}

/* Automatic aggregation: is two-phase worth it for these accesses?
 * (ADIOI_PSTRIPE_Ranges_aggregate) *apart (may be NULL): do the ranges
 * not interleave? */
static int coll_aggregates(const ADIOI_PSTRIPE_range * ranges, int nprocs, int is_write,
                           int *apart)
{
    ADIOI_PSTRIPE_range *scratch = ADIOI_Malloc(nprocs * sizeof(*scratch));
    int agg = ADIOI_PSTRIPE_Ranges_aggregate(ranges, nprocs, is_write, scratch);

    if (apart != NULL)
        *apart = !ADIOI_PSTRIPE_Ranges_interleave(ranges, nprocs, scratch);
    ADIOI_Free(scratch);
    return agg;
}

/* Aggregation (ROMIO's two-phase when generic, else ours) after the
 * write-behind buffer is flushed: an aggregator writes this process's bytes,
 * which must land after the buffered ones, and reads must see them. The
 * caches are bypassed. A failed flush is this call's error, after the
 * access. */
static void aggregated(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                       int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                       ADIOI_PSTRIPE_access * acc, const ADIOI_PSTRIPE_range * ranges, int is_write,
                       int *error_code)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int flush_err = ADIOI_PSTRIPE_Cache_flush(fd, 0);

    ps->bypass++;
    if (acc == NULL && is_write)
        ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code);
    else if (acc == NULL)
        ADIOI_GEN_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                  error_code);
    else
        ADIOI_PSTRIPE_Two_phase(fd, acc, ranges, is_write, error_code);
    ps->bypass--;
    if (flush_err != MPI_SUCCESS)
        *error_code = flush_err;
}

/* Collective reads whose ranges were apart, in a row, after which the next
 * one is read while the ranges are gathered (read_meanwhile): a pattern
 * that changes every call is then never read twice. Like the read cache
 * (and off with it), this reads before the call orders the read after
 * the other processes' writes: MPI asks for sync-barrier-sync there. */
#define READS_APART 2

/*
 * A collective read whose processes' ranges were apart the last
 * READS_APART times: this process reads its own bytes while their ranges
 * are gathered (into ranges), so that the processes do not wait for each
 * other's reads, only for each other's start (2 processes, 256 KiB blocks
 * of each in turn, side by side, 3 rounds: pstripe-bench -p contig -c -b
 * 256k -t 256k -s 1024 reads 962-1,966 -> 2,631-3,302 MiB/s, IOR -a MPIIO
 * -c the same 1,143-2,002 -> 3,053-3,136). The allgather is the one
 * ADIOI_PSTRIPE_Allgather starts, in two halves around the read.
 * *read_err: the read's MPI error code. If the
 * ranges now ask for aggregation, two-phase reads the bytes again (the
 * read moved only the file pointer, which two-phase sets, and cached
 * blocks); if they interleave with small regions, the next calls wait
 * for the ranges first again (processes reading the same
 * blocks at once share the servers' disk reads: 64-byte regions read
 * apart ran at 1,262-1,311 MiB/s against 1,762-1,802 together). Returns
 * the gather's MPI error code.
 */
static int read_meanwhile(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                          const ADIOI_PSTRIPE_access * acc, ADIOI_PSTRIPE_range * ranges,
                          int *read_err)
{
    ADIOI_PSTRIPE_range mine = my_range(acc, 1);
    MPI_Request req;
    int rc;

    rc = PMPI_Iallgather(&mine, 4, MPI_LONG_LONG, ranges, 4, MPI_LONG_LONG, fd->comm, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    independent(fd, buf, count, datatype, file_ptr_type, offset, status, 0, read_err);
    return ADIOI_PSTRIPE_Wait_started(&req);
}

/* Count the collective reads whose ranges were apart, in a row. */
static void note_reads_apart(ADIOI_PSTRIPE_fs * ps, int apart)
{
    if (!apart)
        ps->coll_reads_apart = 0;
    else if (ps->coll_reads_apart < READS_APART)
        ps->coll_reads_apart++;
}

/* A collective read that failed after this process read its bytes
 * meanwhile: its file pointer and count are as if it had not. */
static void undo_read(ADIO_File fd, MPI_Datatype datatype, ADIO_Status * status,
                      ADIO_Offset fp_before)
{
    fd->fp_ind = fp_before;
#ifdef HAVE_STATUS_SET_BYTES
    if (status)
        MPIR_Status_set_bytes(status, datatype, 0);
#endif
}

static void strided_coll_body(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                              int is_write, int *error_code)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    ADIOI_PSTRIPE_access acc;
    ADIOI_PSTRIPE_range *ranges;
    int cb = is_write ? fd->hints->cb_write : fd->hints->cb_read;
    int i, nprocs, build_err, gather_err, all_ok, ok, apart, ahead, read_err = MPI_SUCCESS;
    ADIO_Offset fp_before;

    *error_code = MPI_SUCCESS;
    if (!ADIOI_PSTRIPE_Listio(fd, is_write)) {
        /* ROMIO's generic two-phase over our contiguous I/O, for comparison;
         * its file domains are aligned to striping_unit (our stripe size) */
        aggregated(fd, buf, count, datatype, file_ptr_type, offset, status, NULL, NULL, is_write,
                   error_code);
        return;
    }
    if (fd->atomicity || cb == ADIOI_HINT_DISABLE) {
        independent(fd, buf, count, datatype, file_ptr_type, offset, status, is_write,
                    error_code);
        return;
    }

    MPI_Comm_size(fd->comm, &nprocs);
    ADIOI_PSTRIPE_Access_build(fd, buf, count, datatype, file_ptr_type, offset, &acc,
                               &build_err);
    ok = (build_err == MPI_SUCCESS);
    ranges = ADIOI_Malloc(nprocs * sizeof(*ranges));
    ahead = !is_write && cb == ADIOI_HINT_AUTO && ps->coll_reads_apart >= READS_APART && ok &&
        ps->read_cache != ADIOI_HINT_DISABLE;
    fp_before = fd->fp_ind;
    if (ahead)
        gather_err = read_meanwhile(fd, buf, count, datatype, file_ptr_type, offset, status,
                                    &acc, ranges, &read_err);
    else
        gather_err = gather_ranges(fd, &acc, ok, ranges);
    for (i = 0, all_ok = 1; i < nprocs && gather_err == MPI_SUCCESS; i++)
        all_ok &= ranges[i].start >= 0;
    apart = 0;

    if (gather_err != MPI_SUCCESS) {
        *error_code = gather_err;
    } else if (!all_ok) {
        *error_code = ok ? MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
                                                "ADIOI_PSTRIPE_COLL", __LINE__, MPI_ERR_IO,
                                                "**io", "**io %s",
                                                "pstripe: collective I/O failed on another process")
            : build_err;
    } else if (cb == ADIOI_HINT_AUTO && !coll_aggregates(ranges, nprocs, is_write, &apart)) {
        /* nothing to gain from aggregation: independent list I/O */
        ADIOI_PSTRIPE_Access_free(fd, &acc);
        ADIOI_Free(ranges);
        if (!is_write)
            note_reads_apart(ps, apart);
        if (ahead)
            *error_code = read_err;     /* read while the ranges were gathered */
        else
            independent(fd, buf, count, datatype, file_ptr_type, offset, status, is_write,
                        error_code);
        return;
    } else {
        ADIOI_PSTRIPE_Access_regions(fd, &acc); /* the plans walk regions */
        aggregated(fd, buf, count, datatype, file_ptr_type, offset, status, &acc, ranges,
                   is_write, error_code);
        if (*error_code == MPI_SUCCESS) {
            if (file_ptr_type == ADIO_INDIVIDUAL)
                fd->fp_ind = acc.end;
            fd->fp_sys_posn = -1;
#ifdef HAVE_STATUS_SET_BYTES
            if (status)
                MPIR_Status_set_bytes(status, datatype, (MPI_Count) acc.total);
#endif
        }
    }
    if (!is_write)
        note_reads_apart(ps, apart);
    if (ahead && *error_code != MPI_SUCCESS)
        undo_read(fd, datatype, status, fp_before);
    if (ok)
        ADIOI_PSTRIPE_Access_free(fd, &acc);
    ADIOI_Free(ranges);
}

/*
 * A collective access. Aggregated I/O flushes the write-behind buffer first
 * and is not cached (aggregated). A collective write whose processes' file
 * ranges do not interleave, or whose regions are small (coll_aggregates),
 * is independent I/O and buffered like an independent write (this process
 * alone writes its bytes, in the order of its own buffer): IOR's
 * collective 64 KiB writes of one block per process
 * waited a round trip each (-a MPIIO -c -b 4m -t 64k -s 8, 2 processes,
 * old and new driver side by side: 135-178 -> 508-638 MiB/s). A collective
 * write drops the read cache. Likewise a collective read whose processes'
 * ranges do not interleave goes through the read cache as an independent
 * read does (IOR -a MPIIO -c -b 4m -t 4k -s 16, 2 processes, side by side:
 * 133-140 -> 481-552 MiB/s; HDF5's chunked collective reads 330-352 ->
 * 380-447), and when the last two's ranges were apart too, it is read
 * while the ranges are gathered (read_meanwhile).
 */
static void strided_coll(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                         int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                         int is_write, int *error_code)
{
    if (is_write)
        ADIOI_PSTRIPE_Cache_drop(fd->fs_ptr);
    strided_coll_body(fd, buf, count, datatype, file_ptr_type, offset, status, is_write,
                      error_code);
}

void ADIOI_PSTRIPE_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                    MPI_Datatype datatype, int file_ptr_type,
                                    ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    strided_coll(fd, (void *) buf, count, datatype, file_ptr_type, offset, status, 1,
                 error_code);
}

void ADIOI_PSTRIPE_ReadStridedColl(ADIO_File fd, void *buf, int count,
                                   MPI_Datatype datatype, int file_ptr_type,
                                   ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    strided_coll(fd, buf, count, datatype, file_ptr_type, offset, status, 0, error_code);
}

/* Is a collective access of these arguments aggregated (two-phase), as
 * the blocking call would do it? Collective: with automatic aggregation,
 * one allgather; every process gets the same answer. */
int ADIOI_PSTRIPE_Coll_aggregates(ADIO_File fd, const void *buf, int count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  int is_write)
{
    ADIOI_PSTRIPE_access acc;
    ADIOI_PSTRIPE_range *ranges;
    int cb = is_write ? fd->hints->cb_write : fd->hints->cb_read;
    int nprocs, err, agg, apart = 0;

    if (cb != ADIOI_HINT_AUTO)
        return cb == ADIOI_HINT_ENABLE;
    MPI_Comm_size(fd->comm, &nprocs);
    ADIOI_PSTRIPE_Access_build(fd, (void *) buf, count, datatype, file_ptr_type, offset, &acc,
                               &err);
    ranges = ADIOI_Malloc(nprocs * sizeof(*ranges));
    /* (a failed gather: MPI's error handler has had it, fatal by default;
     * the access then goes as the blocking call's independent one) */
    agg = gather_ranges(fd, &acc, err == MPI_SUCCESS, ranges) == MPI_SUCCESS &&
        coll_aggregates(ranges, nprocs, is_write, &apart);
    if (!is_write)
        note_reads_apart(fd->fs_ptr, agg ? 0 : apart);
    if (err == MPI_SUCCESS)
        ADIOI_PSTRIPE_Access_free(fd, &acc);
    ADIOI_Free(ranges);
    return agg;
}

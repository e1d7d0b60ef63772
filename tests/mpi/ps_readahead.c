/*
 * ps_readahead: a stream of medium reads with small reads between them.
 *
 * Each process writes its part of the file, then reads it back in file
 * order, 64 KiB a call, and after every 4th call reads 2 KiB at the start
 * of the file (as a program reads its metadata between its data). Every
 * byte is checked. Then each process reads small pieces far apart (2,616
 * bytes every 160 KiB of its part, as HDF5 reads its chunk index's nodes):
 * a stream the read-ahead follows, but a guess. Last, each process reads
 * its part again collectively, 1 KiB a call (MPI_File_read_at_all, the
 * processes' ranges apart: as HDF5's collective reads of one chunk per
 * process), which the read cache serves as it does independent reads.
 * Then each process reads its part once more, 64 KiB a call, and sets the
 * view before each (as HDF5 does around each collective access), and
 * likewise reads 1 KiB of every 2 KiB at its part's start: the view drops
 * the cache, so a read-ahead started by one read, or a block fetched
 * whole, would be wasted.
 * Rank 0 prints the number of medium reads ("medium reads: N"), of sparse
 * ones ("sparse reads: N"), of collective ones ("collective reads: N"),
 * of those after a view ("viewed reads: N") and the bytes all calls read
 * ("bytes read: N"): mpi-tests checks that
 * the servers received far fewer read requests than medium reads, i.e.
 * that the small reads (the read cache's) did not end the medium stream's
 * read-ahead and that the collective ones were cached (twice as many as
 * the medium reads), few regions per read (the read-ahead of a stream
 * grows with what it has served: it predicted 754 reads at once, 11 GB of
 * a 512 MiB HDF5 file), and that the servers read at most about twice the
 * bytes the calls read (a stream kept across the views read 16 times the
 * bytes of the reads between them).
 */
#include "pstest.h"

#define PIECE 65536
#define NPIECES 64              /* per process */
#define SMALL 2048
#define SPARSE 2616
#define SPARSE_STEP (160 * 1024)
#define NSPARSE 24              /* per process, inside its part */
#define COLL 1024
#define NCOLL 128               /* per process: collective reads */
#define NVIEWED NPIECES         /* per process: medium reads, each after a set_view */
#define VSMALL 1024
#define NVSMALL 256             /* per process: small reads, each after a set_view */

/* Read len bytes at off (collectively if coll) and check them. */
static void read_check(MPI_File fh, MPI_Offset off, int len, int coll, const char *what)
{
    static unsigned char buf[PIECE], want[PIECE];
    MPI_Status st;

    if (coll)
        PS_MPI(MPI_File_read_at_all(fh, off, buf, len, MPI_BYTE, &st));
    else
        PS_MPI(MPI_File_read_at(fh, off, buf, len, MPI_BYTE, &st));
    ps_fill(want, len, (uint64_t) off, 3);
    ps_compare(buf, want, len, what);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    static unsigned char buf[PIECE];
    MPI_Offset base;
    MPI_Status st;
    MPI_File fh;
    int i, total, nsparse = 0, ncoll = 0, nviewed = 0, n = 0;
    long long bytes = 0, total_bytes;

    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    base = (MPI_Offset) ps_rank * NPIECES * PIECE;
    for (i = 0; i < NPIECES; i++) {
        ps_fill(buf, PIECE, (uint64_t) (base + (MPI_Offset) i * PIECE), 3);
        PS_MPI(MPI_File_write_at(fh, base + (MPI_Offset) i * PIECE, buf, PIECE, MPI_BYTE, &st));
    }
    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));

    for (i = 0; i < NPIECES; i++) {
        read_check(fh, base + (MPI_Offset) i * PIECE, PIECE, 0, "medium read");
        n++;
        bytes += PIECE;
        if (i % 4 == 3) {
            read_check(fh, 0, SMALL, 0, "small read between them");
            bytes += SMALL;
        }
    }
    for (i = 0; i < NSPARSE; i++) {
        read_check(fh, base + (MPI_Offset) i * SPARSE_STEP + 100, SPARSE, 0, "sparse small read");
        nsparse++;
        bytes += SPARSE;
    }
    for (i = 0; i < NCOLL; i++) {
        read_check(fh, base + (MPI_Offset) i * COLL, COLL, 1, "collective read");
        ncoll++;
        bytes += COLL;
    }
    for (i = 0; i < NVIEWED; i++) {
        PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        read_check(fh, base + (MPI_Offset) i * PIECE, PIECE, 0, "medium read after a set_view");
        nviewed++;
        bytes += PIECE;
    }
    for (i = 0; i < NVSMALL; i++) {
        PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        read_check(fh, base + (MPI_Offset) i * 2 * VSMALL, VSMALL, 0,
                   "small read after a set_view");
        nviewed++;
        bytes += VSMALL;
    }
    PS_MPI(MPI_File_close(&fh));

    MPI_Reduce(&n, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    n = total;
    MPI_Reduce(&nsparse, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    nsparse = total;
    MPI_Reduce(&ncoll, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    ncoll = total;
    MPI_Reduce(&nviewed, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bytes, &total_bytes, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (ps_rank == 0)
        printf("ps_readahead: %d processes: medium reads: %d, sparse reads: %d, "
               "collective reads: %d, viewed reads: %d, bytes read: %lld: PASS\n", ps_nprocs, n,
               nsparse, ncoll, total, total_bytes);
    MPI_Finalize();
    return 0;
}

/*
 * ps_noclose: a program that does not close its file before MPI_Finalize.
 *
 * MPI requires every file closed before MPI_Finalize; programs forget it,
 * and on a POSIX file system their writes are there all the same. Each
 * process writes 200 small pieces of its own area, reads them back, writes
 * 200 more over their halves and the gaps (left in the driver's
 * write-behind buffer), and finalizes with the file open. mpi-tests compares the file on pstripe with the same program's on
 * ufs: the buffered writes must have reached the servers.
 */
#include "pstest.h"

#define PIECE 24
#define STEP 40
#define NPIECES 200

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    unsigned char buf[PIECE], want[PIECE];
    MPI_Offset off;
    MPI_Status st;
    MPI_File fh;
    int i;

    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    for (i = 0; i < NPIECES; i++) {
        off = ((MPI_Offset) ps_rank * NPIECES + i) * STEP;
        ps_fill(buf, PIECE, (uint64_t) off, 5);
        PS_MPI(MPI_File_write_at(fh, off, buf, PIECE, MPI_BYTE, &st));
    }
    for (i = 0; i < NPIECES; i++) {
        off = ((MPI_Offset) ps_rank * NPIECES + i) * STEP;
        PS_MPI(MPI_File_read_at(fh, off, buf, PIECE, MPI_BYTE, &st));
        ps_fill(want, PIECE, (uint64_t) off, 5);
        ps_compare(buf, want, PIECE, "own write, read back");
    }
    /* a second round, left in the buffer (a read would flush it) */
    for (i = 0; i < NPIECES; i++) {
        off = ((MPI_Offset) ps_rank * NPIECES + i) * STEP + PIECE / 2;
        ps_fill(buf, PIECE, (uint64_t) off, 6);
        PS_MPI(MPI_File_write_at(fh, off, buf, PIECE, MPI_BYTE, &st));
    }
    if (ps_rank == 0)
        printf("ps_noclose: %d processes, %d writes each, file left open: PASS\n", ps_nprocs,
               NPIECES);
    MPI_Finalize();     /* no MPI_File_close: the point of the test */
    return 0;
}

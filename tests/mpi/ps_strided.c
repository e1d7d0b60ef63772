/*
 * ps_strided: reads through an interleaved vector view, as IOR's strided
 * datatype runs and pstripe-bench -p vector make them.
 *
 * Each process writes its part of the file (contiguous), then every
 * process sets a view of 64-byte regions interleaved between the processes,
 * with one empty slot per row so that one process has gaps too (region i
 * of process r at (i * (P + 1) + r) * 64), and reads its share of the whole
 * file: first LARGE bytes a call (each call spans many read cache blocks),
 * then, after a set_view, SMALL bytes a call (a few blocks each). Every
 * byte is checked.
 * Rank 0 prints the bytes the large calls read ("large bytes: N") and the
 * file bytes the small calls span ("small span: N"): mpi-tests checks that
 * the servers read at most about those, i.e. that a large call fetched its
 * own regions only (through the read cache it would fetch whole blocks,
 * the other slots too: P + 1 times its bytes) while small calls
 * may fetch their blocks whole.
 */
#include "pstest.h"

#define Z 64                    /* region size */
#define PART (8 << 20)          /* bytes per process in the view */
#define LARGE (256 << 10)       /* bytes a call, first pass */
#define SMALL (8 << 10)         /* bytes a call, second pass */
#define NSMALL 64               /* calls of the second pass per process */

/* Set the interleaved view: region i of this process at (i * (P + 1) + rank) * Z. */
static void set_strided_view(MPI_File fh, MPI_Datatype ftype)
{
    PS_MPI(MPI_File_set_view(fh, (MPI_Offset) ps_rank * Z, MPI_BYTE, ftype, "native",
                             MPI_INFO_NULL));
}

/* Read n view bytes at view offset voff, len a call, and check them. */
static void read_pass(MPI_File fh, MPI_Offset voff, int len, int calls, const char *what)
{
    unsigned char *buf = malloc(len), want[Z];
    MPI_Status st;
    int c, i, count;

    PS_CHECK(buf != NULL, "no memory");
    for (c = 0; c < calls; c++) {
        MPI_Offset v = voff + (MPI_Offset) c * len;
        PS_MPI(MPI_File_read_at(fh, v, buf, len, MPI_BYTE, &st));
        PS_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
        PS_CHECK(count == len, "%s %d: %d bytes read of %d", what, c, count, len);
        for (i = 0; i < len / Z; i++) {
            MPI_Offset region = v / Z + i;
            uint64_t off = (uint64_t) ((region * (ps_nprocs + 1) + ps_rank) * Z);
            ps_fill(want, Z, off, 5);
            ps_compare(buf + (size_t) i * Z, want, Z, what);
        }
    }
    free(buf);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    MPI_Datatype ftype, region;
    MPI_Offset wpart = (MPI_Offset) PART / ps_nprocs * (ps_nprocs + 1);
    unsigned char *part = malloc(wpart);
    long long large = 0, span, total;
    MPI_Status st;
    MPI_File fh;

    PS_CHECK(part != NULL, "no memory");
    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    ps_fill(part, wpart, (uint64_t) (ps_rank * wpart), 5);
    PS_MPI(MPI_File_write_at(fh, ps_rank * wpart, part, (int) wpart, MPI_BYTE, &st));
    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));

    MPI_Type_contiguous(Z, MPI_BYTE, &region);
    MPI_Type_create_resized(region, 0, (MPI_Aint) Z * (ps_nprocs + 1), &ftype);
    MPI_Type_commit(&ftype);
    set_strided_view(fh, ftype);
    read_pass(fh, 0, LARGE, PART / LARGE, "large strided read");
    large = PART;
    set_strided_view(fh, ftype);
    read_pass(fh, 0, SMALL, NSMALL, "small strided read");
    span = (long long) NSMALL * SMALL * (ps_nprocs + 1);
    PS_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ftype);
    MPI_Type_free(&region);
    free(part);

    MPI_Reduce(&large, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    large = total;
    MPI_Reduce(&span, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (ps_rank == 0)
        printf("ps_strided: %d processes: large bytes: %lld, small span: %lld: PASS\n",
               ps_nprocs, large, total);
    MPI_Finalize();
    return 0;
}

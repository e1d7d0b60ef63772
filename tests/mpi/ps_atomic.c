/*
 * ps_atomic: MPI atomic mode with several processes.
 *
 * In atomic mode a read that overlaps a concurrent write sees all of it or
 * none of it, and of concurrent overlapping writes one wins entirely. The
 * region (1.2 MB, many stripes on several servers) is accessed both from
 * contiguous memory (ROMIO locks around the contiguous call) and from
 * strided memory (the driver's list I/O, which locks itself):
 *   A. rank 0 rewrites the region with a new value each iteration while the
 *      other ranks read it at the same time: every read is uniform;
 *   B. all ranks write their own value over the whole region at once: the
 *      region is uniform afterwards;
 *   C. nonblocking and collective accesses in atomic mode read back right,
 *      and nonblocking ones count every byte (all processes at once).
 * Last, atomic mode is switched off and rank 0 writes deterministic data,
 * so the file can be compared across file systems.
 *
 * Usage: ps_atomic FILENAME
 */
#include "pstest.h"

#define NINT 300000
#define ITER 12
#define BLK 1000                /* ints per block of the strided view */

static MPI_Datatype mtype;

/* write or read the region, from contiguous memory (ROMIO locks around the
 * contiguous call) or from strided memory (noncontiguous: the driver's
 * list I/O, which locks itself) */
static void region_io(MPI_File fh, int *buf, int strided, int is_write)
{
    MPI_Status st;

    if (is_write)
        PS_MPI(MPI_File_write_at(fh, 0, buf, strided ? 1 : NINT, strided ? mtype : MPI_INT,
                                 &st));
    else
        PS_MPI(MPI_File_read_at(fh, 0, buf, strided ? 1 : NINT, strided ? mtype : MPI_INT,
                                &st));
}

static int *elem(int *buf, int i, int strided)
{
    return strided ? &buf[(i / BLK) * 2 * BLK + i % BLK] : &buf[i];
}

static void set_all(int *buf, int v, int strided)
{
    int i;
    for (i = 0; i < NINT; i++)
        *elem(buf, i, strided) = v;
}

static void check_uniform(int *buf, int strided, const char *what, int iter)
{
    int i, v = *elem(buf, 0, strided);
    for (i = 1; i < NINT; i++)
        PS_CHECK(*elem(buf, i, strided) == v,
                 "%s (%s, iteration %d): int %d is %d but int 0 is %d: not atomic", what,
                 strided ? "strided" : "contiguous", iter, i, *elem(buf, i, strided), v);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;
    MPI_Request req;
    int *buf = malloc(2 * NINT * sizeof(int)), *rbuf = malloc(2 * NINT * sizeof(int));
    int flag, it, strided, i, count;
    unsigned char *final, *back;

    MPI_Type_vector(NINT / BLK, BLK, 2 * BLK, MPI_INT, &mtype);  /* every other block */
    MPI_Type_commit(&mtype);

    info = ps_test_info();
    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    PS_MPI(MPI_File_set_atomicity(fh, 1));
    PS_MPI(MPI_File_get_atomicity(fh, &flag));
    PS_CHECK(flag == 1, "get_atomicity is %d after set_atomicity(1)", flag);

    if (ps_rank == 0) {
        set_all(buf, -1, 0);
        region_io(fh, buf, 0, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* A: one writer, concurrent readers */
    for (it = 0; it < ITER; it++) {
        strided = it % 2;
        MPI_Barrier(MPI_COMM_WORLD);
        if (ps_rank == 0) {
            set_all(buf, it, strided);
            region_io(fh, buf, strided, 1);
        } else {
            for (i = 0; i < 3; i++) {
                region_io(fh, rbuf, strided, 0);
                check_uniform(rbuf, strided, "read during a write", it);
            }
        }
    }

    /* B: concurrent overlapping writers */
    for (it = 0; it < ITER; it++) {
        strided = it % 2;
        set_all(buf, 1000 * it + ps_rank, strided);
        MPI_Barrier(MPI_COMM_WORLD);
        region_io(fh, buf, strided, 1);
        MPI_Barrier(MPI_COMM_WORLD);
        region_io(fh, rbuf, 1 - strided, 0);
        check_uniform(rbuf, 1 - strided, "after concurrent writes", it);
        PS_CHECK(*elem(rbuf, 0, 1 - strided) / 1000 == it, "iteration %d: value %d", it,
                 *elem(rbuf, 0, 1 - strided));
    }

    /* C: nonblocking and collective accesses in atomic mode */
    MPI_Barrier(MPI_COMM_WORLD);
    for (i = 0; i < 1000; i++)
        buf[i] = ps_rank * 1000 + i;
    PS_MPI(MPI_File_iwrite_at(fh, (MPI_Offset) ps_rank * 4000, buf, 1000, MPI_INT, &req));
    PS_MPI(MPI_Wait(&req, &st));
    PS_MPI(MPI_File_read_at_all(fh, (MPI_Offset) ps_rank * 4000, rbuf, 1000, MPI_INT, &st));
    for (i = 0; i < 1000; i++)
        PS_CHECK(rbuf[i] == buf[i], "atomic iwrite/read_at_all: int %d is %d", i, rbuf[i]);
    PS_MPI(MPI_File_write_at_all(fh, (MPI_Offset) (ps_nprocs + ps_rank) * 4000, buf, 1000,
                                 MPI_INT, &st));
    PS_MPI(MPI_File_iread_at(fh, (MPI_Offset) (ps_nprocs + ps_rank) * 4000, rbuf, 1000,
                             MPI_INT, &req));
    PS_MPI(MPI_Wait(&req, &st));
    for (i = 0; i < 1000; i++)
        PS_CHECK(rbuf[i] == buf[i], "atomic write_at_all/iread: int %d is %d", i, rbuf[i]);
    /* their counts, every process at once (the lock contended: Open MPI's
     * progress, run while a start waited for the lock, completed the
     * request with nothing counted) */
    for (it = 0; it < 20; it++) {
        PS_MPI(MPI_File_iwrite_at(fh, (MPI_Offset) ps_rank * 4000, buf, 1000, MPI_INT, &req));
        PS_MPI(MPI_Wait(&req, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        PS_CHECK(count == 1000, "atomic iwrite_at %d: %d ints counted", it, count);
        PS_MPI(MPI_File_iread_at(fh, (MPI_Offset) ps_rank * 4000, rbuf, 1000, MPI_INT, &req));
        PS_MPI(MPI_Wait(&req, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        PS_CHECK(count == 1000, "atomic iread_at %d: %d ints counted", it, count);
    }

    /* deterministic final content */
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_set_atomicity(fh, 0));
    PS_MPI(MPI_File_get_atomicity(fh, &flag));
    PS_CHECK(flag == 0, "get_atomicity is %d after set_atomicity(0)", flag);
    final = malloc(NINT * sizeof(int));
    back = malloc(NINT * sizeof(int));
    ps_fill(final, NINT * sizeof(int), 0, 5);
    if (ps_rank == 0)
        PS_MPI(MPI_File_write_at(fh, 0, final, NINT * sizeof(int), MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_read_at_all(fh, 0, back, NINT * sizeof(int), MPI_BYTE, &st));
    ps_compare(back, final, NINT * sizeof(int), "final content");

    PS_MPI(MPI_File_close(&fh));
    MPI_Type_free(&mtype);
    MPI_Info_free(&info);
    free(buf);
    free(rbuf);
    free(final);
    free(back);
    if (ps_rank == 0)
        printf("ps_atomic: %d processes: PASS\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

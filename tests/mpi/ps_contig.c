/*
 * ps_contig: contiguous accesses, every way MPI-IO offers them.
 *
 * The file is cut into sections of nprocs blocks of BS bytes (an odd size,
 * so blocks straddle stripes); in each section rank r owns block r and
 * writes it one way: explicit offsets or the individual file pointer,
 * independent or collective, blocking or nonblocking (MPI_Wait, MPI_Test,
 * MPI_Waitall). Each block is read back another way and compared, then the
 * whole file is read by one process and compared with the model. Then
 * collective reads through a second handle with automatic aggregation,
 * whose processes' ranges are apart, overlap, and are apart again (the
 * driver reads apart ones while it gathers the ranges, and reads again
 * by two-phase when they turn out to overlap): bytes, counts and the
 * individual file pointer; and, with the read cache disabled, that such
 * a read waits for the others to enter the call (it sees a write made
 * just before). Then size operations: get_size, reads across
 * the end of file (counts), sync, set_size (shrink and extend),
 * preallocate (the bytes it adds read as zeros).
 *
 * Usage: ps_contig FILENAME
 */
#include <unistd.h>

#include "pstest.h"

#define BS 300001
#define NSECT 7

enum { S_AT, S_INDIV, S_AT_ALL, S_ALL, S_IAT, S_I, S_IAT_ALL };

static MPI_Offset block_off(int sect, int rank)
{
    return ((MPI_Offset) sect * ps_nprocs + rank) * BS;
}

static void wait_by_test(MPI_Request * req, MPI_Status * st)
{
    int done = 0;
    while (!done) {
        PS_MPI(MPI_Test(req, &done, st));
        ps_compute(1000);
    }
}

/* One collective read of len bytes at off (explicit offset, or the
 * individual file pointer moved there first), compared with the model;
 * expect bytes of them below the end of file. */
static void coll_read(MPI_File fh, MPI_Offset off, int len, int at, int expect,
                      const char *what)
{
    unsigned char *got = malloc(len), *want = malloc(len);
    MPI_Offset pos;
    MPI_Status st;
    int count;

    memset(got, 0xA5, len);
    if (at) {
        PS_MPI(MPI_File_read_at_all(fh, off, got, len, MPI_BYTE, &st));
    } else {
        PS_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET));
        PS_MPI(MPI_File_read_all(fh, got, len, MPI_BYTE, &st));
        PS_MPI(MPI_File_get_position(fh, &pos));
        PS_CHECK(pos == off + expect, "%s: file pointer %lld after reading %d bytes at %lld",
                 what, (long long) pos, expect, (long long) off);
    }
    PS_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
#ifdef OPEN_MPI
    /* OMPIO's aggregating fcoll components (vulcan, dynamic, two_phase)
     * count a collective read across the end of file whole, on a local
     * file too (mpirun --mca fcoll vulcan); only "individual" counts it
     * short */
    if (count == len)
        count = expect;
#endif
    PS_CHECK(count == expect, "%s: read %d bytes, expected %d", what, count, expect);
    ps_fill(want, expect, (uint64_t) off, 1);
    ps_compare(got, want, expect, what);
    free(got);
    free(want);
}

/* Collective reads whose ranges are apart (each rank its block), overlap
 * (every rank the same bytes) and are apart again, through a handle with
 * the default (automatic) aggregation. */
static void coll_read_patterns(const char *fname, MPI_Offset size)
{
    MPI_File fh;
    int s;

    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (s = 0; s < 3; s++)
        coll_read(fh, block_off(s, ps_rank), BS, s != 1, BS, "apart");
    /* (the first is read meanwhile, then again by two-phase) */
    coll_read(fh, block_off(3, 0), BS, 0, BS, "overlapping");
    coll_read(fh, block_off(4, 0) + 1000, BS, 1, BS, "overlapping");
    for (s = 5; s < NSECT; s++)
        coll_read(fh, block_off(s, ps_rank), BS, s != 6, BS, "apart again");
    /* apart, the last rank's across the end of file */
    coll_read(fh, block_off(NSECT - 1, ps_rank) + 100, BS, 1,
              ps_rank == ps_nprocs - 1 ? BS - 100 : BS, "apart, across the end");
    PS_CHECK(block_off(NSECT, 0) == size, "model size");
    PS_MPI(MPI_File_close(&fh));
}

/* With the read cache disabled, a collective read is never read before
 * the others enter the call: rank 1 writes (directly: larger than the
 * write-behind buffer) the bytes rank 0 then reads collectively, but
 * only after rank 0 has been waiting in the call for a while; two apart
 * collective reads come first (with the read cache on, the third would
 * be read meanwhile, before rank 1's write). */
static void coll_read_orders(const char *fname)
{
    const int len = 4 << 20;
    unsigned char *buf = malloc(len), *want = malloc(len);
    char name[4096];
    MPI_Info info;
    MPI_Status st;
    MPI_File fh;
    int s;

    if (ps_nprocs < 2 || !ps_is_pstripe(fname))
        return;
    snprintf(name, sizeof(name), "%s.order", fname);
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_pstripe_read_cache", "disable");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    ps_fill(buf, len, (uint64_t) ps_rank * len, 3);
    PS_MPI(MPI_File_write_at(fh, (MPI_Offset) ps_rank * len, buf, len, MPI_BYTE, &st));
    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));
    for (s = 0; s < 2; s++)     /* apart: each its own part */
        PS_MPI(MPI_File_read_at_all(fh, (MPI_Offset) ps_rank * len, buf, 4096, MPI_BYTE, &st));
    if (ps_rank == 1) {
        usleep(300000);
        ps_fill(buf, len, len, 4);
        PS_MPI(MPI_File_write_at(fh, len, buf, len, MPI_BYTE, &st));
    }
    /* rank 0 reads rank 1's part, rank 1 its own first block: apart */
    PS_MPI(MPI_File_read_at_all(fh, ps_rank == 0 ? len : 4096, buf, 4096, MPI_BYTE, &st));
    if (ps_rank == 0) {
        ps_fill(want, 4096, len, 4);
        ps_compare(buf, want, 4096, "a collective read after another process's write, "
                   "read cache disabled");
    }
    PS_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0)
        PS_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    free(buf);
    free(want);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    MPI_File fh;
    MPI_Info info;
    MPI_Status st, sts[4];
    MPI_Request reqs[4];
    MPI_Offset size, want_size, off;
    unsigned char *buf[NSECT], *rbuf[NSECT], *whole, *want;
    int s, count, i;

    info = ps_test_info();
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");

    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));

    for (s = 0; s < NSECT; s++) {
        buf[s] = malloc(BS);
        rbuf[s] = malloc(BS);
        ps_fill(buf[s], BS, block_off(s, ps_rank), 1);
        memset(rbuf[s], 0xA5, BS);
    }

    /* ---- writes ---- */
    PS_MPI(MPI_File_write_at(fh, block_off(S_AT, ps_rank), buf[S_AT], BS, MPI_BYTE, &st));
    PS_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    PS_CHECK(count == BS, "write_at count %d", count);

    PS_MPI(MPI_File_seek(fh, block_off(S_INDIV, ps_rank), MPI_SEEK_SET));
    PS_MPI(MPI_File_write(fh, buf[S_INDIV], BS / 3, MPI_BYTE, &st));
    PS_MPI(MPI_File_write(fh, buf[S_INDIV] + BS / 3, BS - BS / 3, MPI_BYTE, &st));
    PS_MPI(MPI_File_get_position(fh, &off));
    PS_CHECK(off == block_off(S_INDIV, ps_rank) + BS, "position %lld after write",
             (long long) off);

    PS_MPI(MPI_File_write_at_all(fh, block_off(S_AT_ALL, ps_rank), buf[S_AT_ALL], BS, MPI_BYTE,
                                 &st));

    PS_MPI(MPI_File_seek(fh, block_off(S_ALL, ps_rank), MPI_SEEK_SET));
    PS_MPI(MPI_File_write_all(fh, buf[S_ALL], BS, MPI_BYTE, &st));

    PS_MPI(MPI_File_iwrite_at(fh, block_off(S_IAT, ps_rank), buf[S_IAT], BS, MPI_BYTE,
                              &reqs[0]));
    ps_compute(200000);
    PS_MPI(MPI_Wait(&reqs[0], &st));
    PS_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    PS_CHECK(count == BS, "iwrite_at count %d", count);

    PS_MPI(MPI_File_seek(fh, block_off(S_I, ps_rank), MPI_SEEK_SET));
    PS_MPI(MPI_File_iwrite(fh, buf[S_I], BS, MPI_BYTE, &reqs[0]));
    wait_by_test(&reqs[0], &st);

    PS_MPI(MPI_File_iwrite_at_all(fh, block_off(S_IAT_ALL, ps_rank), buf[S_IAT_ALL], BS,
                                  MPI_BYTE, &reqs[0]));
    PS_MPI(MPI_Wait(&reqs[0], &st));

    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));

    /* ---- read back, each block another way ---- */
    PS_MPI(MPI_File_read_at_all(fh, block_off(S_AT, ps_rank), rbuf[S_AT], BS, MPI_BYTE, &st));
    PS_MPI(MPI_File_iread_at(fh, block_off(S_INDIV, ps_rank), rbuf[S_INDIV], BS, MPI_BYTE,
                             &reqs[0]));
    PS_MPI(MPI_File_iread_at(fh, block_off(S_AT_ALL, ps_rank), rbuf[S_AT_ALL], BS, MPI_BYTE,
                             &reqs[1]));
    ps_compute(100000);
    PS_MPI(MPI_Waitall(2, reqs, sts));
    PS_MPI(MPI_File_seek(fh, block_off(S_ALL, ps_rank), MPI_SEEK_SET));
    PS_MPI(MPI_File_read(fh, rbuf[S_ALL], BS, MPI_BYTE, &st));
    PS_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    PS_CHECK(count == BS, "read count %d", count);
    PS_MPI(MPI_File_seek(fh, block_off(S_IAT, ps_rank), MPI_SEEK_SET));
    PS_MPI(MPI_File_iread(fh, rbuf[S_IAT], BS, MPI_BYTE, &reqs[0]));
    wait_by_test(&reqs[0], &st);
    PS_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    PS_CHECK(count == BS, "iread count %d", count);
    PS_MPI(MPI_File_seek(fh, block_off(S_I, ps_rank), MPI_SEEK_SET));
    PS_MPI(MPI_File_read_all(fh, rbuf[S_I], BS, MPI_BYTE, &st));
    PS_MPI(MPI_File_iread_at_all(fh, block_off(S_IAT_ALL, ps_rank), rbuf[S_IAT_ALL], BS,
                                 MPI_BYTE, &reqs[0]));
    PS_MPI(MPI_Wait(&reqs[0], &st));
    for (s = 0; s < NSECT; s++) {
        char what[64];
        snprintf(what, sizeof(what), "section %d read back", s);
        ps_compare(rbuf[s], buf[s], BS, what);
    }

    /* ---- the whole file, by one process ---- */
    want_size = (MPI_Offset) NSECT * ps_nprocs * BS;
    PS_MPI(MPI_File_get_size(fh, &size));
    PS_CHECK(size == want_size, "size %lld, expected %lld", (long long) size,
             (long long) want_size);
    if (ps_rank == 0) {
        whole = malloc(want_size);
        want = malloc(want_size);
        ps_fill(want, want_size, 0, 1);
        PS_MPI(MPI_File_read_at(fh, 0, whole, (int) want_size, MPI_BYTE, &st));
        ps_compare(whole, want, want_size, "whole file");

        /* a read across the end of file stops there */
        PS_MPI(MPI_File_read_at(fh, want_size - 100, whole, 1000, MPI_BYTE, &st));
        PS_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
        PS_CHECK(count == 100, "read across EOF returned %d bytes, expected 100", count);
        ps_compare(whole, want + want_size - 100, 100, "read across EOF");
        free(whole);
        free(want);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    coll_read_patterns(fname, want_size);
    coll_read_orders(fname);

    /* ---- sizes ---- */
    PS_MPI(MPI_File_set_size(fh, want_size - 12345));
    PS_MPI(MPI_File_get_size(fh, &size));
    PS_CHECK(size == want_size - 12345, "size %lld after shrinking", (long long) size);
    PS_MPI(MPI_File_set_size(fh, want_size + 5000));
    PS_MPI(MPI_File_get_size(fh, &size));
    PS_CHECK(size == want_size + 5000, "size %lld after extending", (long long) size);
    if (ps_rank == ps_nprocs - 1) {
        unsigned char tail[20000];
        want = malloc(sizeof(tail));
        ps_fill(want, 7655, want_size - 20000, 1);
        memset(want + 7655, 0, sizeof(tail) - 7655);
        PS_MPI(MPI_File_read_at(fh, want_size - 20000, tail, sizeof(tail), MPI_BYTE, &st));
        ps_compare(tail, want, 7655, "data before the truncation point");
        for (i = 7655; i < (int) sizeof(tail); i++)
            PS_CHECK(tail[i] == 0, "byte %lld is 0x%02x after truncate + extend, expected 0",
                     (long long) (want_size - 20000 + i), tail[i]);
        free(want);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET)); /* (Open MPI's own preallocate copied from there) */
    PS_MPI(MPI_File_preallocate(fh, want_size + 100000));
    PS_MPI(MPI_File_get_size(fh, &size));
    PS_CHECK(size == want_size + 100000, "size %lld after preallocate", (long long) size);
    if (ps_rank == 0) {
        /* the bytes it added read as zeros (Open MPI's own preallocate
         * wrote a copy of earlier bytes there) */
        unsigned char *added = malloc(95000);
        PS_MPI(MPI_File_read_at(fh, want_size + 5000, added, 95000, MPI_BYTE, &st));
        for (i = 0; i < 95000; i++)
            PS_CHECK(added[i] == 0, "byte %lld is 0x%02x after preallocate, expected 0",
                     (long long) (want_size + 5000 + i), added[i]);
        free(added);
    }
    PS_MPI(MPI_File_preallocate(fh, 1000));     /* smaller: no change */
    PS_MPI(MPI_File_get_size(fh, &size));
    PS_CHECK(size == want_size + 100000, "size %lld after a smaller preallocate",
             (long long) size);
    PS_MPI(MPI_File_sync(fh));

    PS_MPI(MPI_File_close(&fh));
    for (s = 0; s < NSECT; s++) {
        free(buf[s]);
        free(rbuf[s]);
    }
    MPI_Info_free(&info);
    if (ps_rank == 0)
        printf("ps_contig: %d processes: PASS\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

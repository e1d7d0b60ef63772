/*
 * ps_collapart: collective reads and writes whose processes' ranges are
 * apart are made as independent ones (through the write-behind buffer and
 * the read cache), as are those whose regions interleave but are small,
 * and the others are aggregated; all checked against a byte model of the
 * file.
 *
 * Each process owns an area of AREA bytes, written whole first. In each
 * round every process writes a record of REC bytes at the next place of
 * its area with
 * MPI_File_write_at_all (every fifth round rank 0 writes nothing: count
 * 0), or, every other round, with MPI_File_write_all at the individual
 * file pointer; every 16 rounds it reads its last 16 records back at once
 * with MPI_File_read_at_all. Then each process writes through a strided
 * view inside its own area (apart still: whole filetype instances) and
 * reads it back.
 * Then the processes write through vector views whose records interleave,
 * past the areas (MPI_File_write_all; records of 32 bytes and of 64 KiB,
 * which both MPIs make independent), and read
 * them back (read_all); and twice more, 32-byte records, through the file
 * opened again with romio_cb_read and romio_cb_write set to enable, which
 * both MPIs aggregate (and MPI_File_get_info reports), written with
 * write_all and with write_all_begin/_end and each read back at once by
 * independent reads of each process's own records. After
 * sync-barrier-sync every process reads every area, collectively, each
 * through its own offset (apart again: served by the read cache), and
 * then the whole file alone; and after close and open.
 *
 * A collective write with MPI_DATATYPE_NULL on every process fails with
 * MPI_ERR_TYPE.
 *
 * Rank 0 prints "small writes: N" (the collective calls with ranges
 * apart, of all processes): mpi-tests checks that the servers got far
 * fewer write requests, which holds only if they were buffered.
 */
#include "pstest.h"

#define AREA 65536     /* bytes per process */
#define REC 48         /* bytes per record */
#define ROUNDS 256     /* records per process (ROUNDS * REC <= AREA) */
#define VREC   32      /* bytes per small record of the interleaved views */
#define VBIG   65536   /* ... and per large one */
#define VCOUNT 8       /* records per process through a view */

static unsigned char *model;
static MPI_Offset fsize;

static MPI_Offset rec_off(int rank, int r)
{
    return (MPI_Offset) rank * AREA + (MPI_Offset) r * REC;
}

/* Does rank write in round r? */
static int writes_in(int rank, int r)
{
    return !(rank == 0 && r % 5 == 4);
}

static void model_write(MPI_Offset off, size_t len, unsigned seed)
{
    ps_fill(model + off, len, (uint64_t) off, seed);
    fsize = PS_MAX(fsize, off + (MPI_Offset) len);
}

static void check(const unsigned char *got, MPI_Offset off, size_t len, const char *what)
{
    ps_compare(got, model + off, len, what);
}

/* Every area written whole first (independently): ROMIO's ufs fills the
 * gaps of a strided write past the end of file with what its buffer
 * held, not zeros. */
static void prefill(MPI_File fh)
{
    unsigned char *buf = malloc(AREA);
    int p;

    PS_CHECK(buf != NULL, "out of memory");
    ps_fill(buf, AREA, (uint64_t)rec_off(ps_rank, 0), 5);
    PS_MPI(MPI_File_write_at(fh, rec_off(ps_rank, 0), buf, AREA, MPI_BYTE, MPI_STATUS_IGNORE));
    for (p = 0; p < ps_nprocs; p++)
        model_write(rec_off(p, 0), AREA, 5);
    free(buf);
}

/* Records apart: write_at_all or write_all, then read_at_all at once. */
static void apart_rounds(MPI_File fh, int *nsmall)
{
    unsigned char buf[REC], got[16 * REC];
    MPI_Offset off;
    int r, p, n;

    for (r = 0; r < ROUNDS; r++) {
        off = rec_off(ps_rank, r);
        n = writes_in(ps_rank, r) ? REC : 0;
        ps_fill(buf, REC, (uint64_t) off, 10);
        if (r % 2 == 1) {
            PS_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET));
            PS_MPI(MPI_File_write_all(fh, buf, n, MPI_BYTE, MPI_STATUS_IGNORE));
        } else {
            PS_MPI(MPI_File_write_at_all(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE));
        }
        for (p = 0; p < ps_nprocs; p++)
            if (writes_in(p, r)) {
                model_write(rec_off(p, r), REC, 10);
                *nsmall += 1;
            }
        if (r % 16 == 15) {     /* (a read of buffered bytes sends them first) */
            off = rec_off(ps_rank, r - 15);
            memset(got, 0, sizeof(got));
            PS_MPI(MPI_File_read_at_all(fh, off, got, 16 * REC, MPI_BYTE, MPI_STATUS_IGNORE));
            check(got, off, 16 * REC, "a process's own collective writes, read back at once");
        }
    }
}

/* A strided view inside each process's area (past its records): the
 * ranges (whole filetype instances) are still apart, so the calls go
 * independent; each writes one instance (SPIECES pieces), then all are
 * read back through the view at once. */
#define SPIECE  16
#define SPIECES 8
#define SSTRIDE 64
#define SCALLS  16
static void strided_apart(MPI_File fh, int *nsmall)
{
    unsigned char buf[SPIECE * SPIECES], got[SPIECE * SPIECES * SCALLS];
    MPI_Aint extent = (SPIECES - 1) * SSTRIDE + SPIECE;
    MPI_Offset disp = rec_off(ps_rank, 0) + AREA / 2, off;
    MPI_Datatype vec;
    int c, k, p;

    PS_MPI(MPI_Type_vector(SPIECES, SPIECE, SSTRIDE, MPI_BYTE, &vec));
    PS_MPI(MPI_Type_commit(&vec));
    PS_MPI(MPI_File_set_view(fh, disp, MPI_BYTE, vec, "native", MPI_INFO_NULL));
    for (c = 0; c < SCALLS; c++) {
        for (k = 0; k < SPIECES; k++) {
            off = disp + c * extent + k * SSTRIDE;
            ps_fill(buf + k * SPIECE, SPIECE, (uint64_t)off, 30);
        }
        PS_MPI(MPI_File_write_at_all(fh, (MPI_Offset)c * (MPI_Offset)sizeof(buf), buf, sizeof(buf),
                                     MPI_BYTE, MPI_STATUS_IGNORE));
        for (p = 0; p < ps_nprocs; p++) {
            for (k = 0; k < SPIECES; k++)
                model_write(rec_off(p, 0) + AREA / 2 + c * extent + k * SSTRIDE, SPIECE, 30);
            *nsmall += 1;
        }
    }
    PS_MPI(MPI_File_read_at_all(fh, 0, got, sizeof(got), MPI_BYTE, MPI_STATUS_IGNORE));
    for (c = 0; c < SCALLS; c++)
        for (k = 0; k < SPIECES; k++)
            check(got + (c * SPIECES + k) * SPIECE, disp + c * extent + k * SSTRIDE, SPIECE,
                  "a strided view's collective writes, read back at once");
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    PS_MPI(MPI_Type_free(&vec));
}

/* Vector views whose records (vrec bytes, VCOUNT per process) interleave,
 * from base: independent under automatic aggregation (the MPICH driver's
 * rule aggregates regions of 4 MiB or more, ad_pstripe_aggregate.h; Open
 * MPI's components none, adio/ompio/ps_ompio_coll.c), aggregated where the
 * file was opened with romio_cb_* enable (aggregated). */
#define SPLIT 1 /* write with MPI_File_write_all_begin/_end */
#define OWN   2 /* read back independently (a process's own bytes, at once) */
static void interleaved(MPI_File fh, MPI_Offset base, int vrec, unsigned seed, int how)
{
    unsigned char *buf = malloc((size_t)vrec * VCOUNT), *got = malloc((size_t)vrec * VCOUNT);
    MPI_Offset off;
    MPI_Datatype vec;
    int p, k;

    PS_CHECK(buf != NULL && got != NULL, "out of memory");
    PS_MPI(MPI_Type_vector(VCOUNT, vrec, vrec * ps_nprocs, MPI_BYTE, &vec));
    PS_MPI(MPI_Type_commit(&vec));
    PS_MPI(MPI_File_set_view(fh, base + (MPI_Offset)ps_rank * vrec, MPI_BYTE, vec, "native",
                             MPI_INFO_NULL));
    for (k = 0; k < VCOUNT; k++) {
        off = base + ((MPI_Offset)k * ps_nprocs + ps_rank) * vrec;
        ps_fill(buf + (size_t)k * vrec, (size_t)vrec, (uint64_t)off, seed);
    }
    if (how & SPLIT) {
        PS_MPI(MPI_File_write_all_begin(fh, buf, vrec * VCOUNT, MPI_BYTE));
        PS_MPI(MPI_File_write_all_end(fh, buf, MPI_STATUS_IGNORE));
    } else {
        PS_MPI(MPI_File_write_all(fh, buf, vrec * VCOUNT, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    for (p = 0; p < ps_nprocs; p++)
        for (k = 0; k < VCOUNT; k++)
            model_write(base + ((MPI_Offset)k * ps_nprocs + p) * vrec, (size_t)vrec, seed);
    PS_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    if (how & OWN)
        PS_MPI(MPI_File_read(fh, got, vrec * VCOUNT, MPI_BYTE, MPI_STATUS_IGNORE));
    else
        PS_MPI(MPI_File_read_all(fh, got, vrec * VCOUNT, MPI_BYTE, MPI_STATUS_IGNORE));
    for (k = 0; k < VCOUNT; k++) {
        off = base + ((MPI_Offset)k * ps_nprocs + ps_rank) * vrec;
        check(got + (size_t)k * vrec, off, (size_t)vrec,
              "an interleaved collective write, read back");
    }
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    PS_MPI(MPI_Type_free(&vec));
    free(buf);
    free(got);
}

/* The interleaved small records from base through the file opened with
 * romio_cb_read and romio_cb_write enable: aggregated under both MPIs. */
static void aggregated(const char *fname, MPI_Offset base)
{
    static const char *const keys[] = {"romio_cb_read", "romio_cb_write"};
    char value[MPI_MAX_INFO_VAL + 1];
    MPI_Info info, got;
    MPI_File fh;
    int k, flag;

    PS_MPI(MPI_Info_create(&info));
    for (k = 0; k < 2; k++)
        PS_MPI(MPI_Info_set(info, keys[k], "enable"));
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, info, &fh));
    PS_MPI(MPI_File_get_info(fh, &got));
    for (k = 0; k < 2; k++) {
        PS_MPI(MPI_Info_get(got, keys[k], MPI_MAX_INFO_VAL, value, &flag));
        PS_CHECK(flag && strcmp(value, "enable") == 0, "%s is \"%s\" after open, not enable",
                 keys[k], flag ? value : "(not set)");
    }
    /* (read back independently: an aggregated write ends only when every
     * process's bytes are written) */
    interleaved(fh, base, VREC, 22, OWN);
    interleaved(fh, base + (MPI_Offset)ps_nprocs * VREC * VCOUNT, VREC, 23, SPLIT | OWN);
    PS_MPI(MPI_File_close(&fh));
    PS_MPI(MPI_Info_free(&got));
    PS_MPI(MPI_Info_free(&info));
}

/* Every area, collectively (each process reads another's: apart), then
 * the whole file alone. */
static void read_everything(MPI_File fh, const char *what)
{
    unsigned char *got = malloc((size_t) fsize);
    MPI_Status st;
    int p, q, n;

    PS_CHECK(got != NULL, "out of memory");
    for (p = 0; p < ps_nprocs; p++) {
        q = (ps_rank + p) % ps_nprocs;
        PS_MPI(MPI_File_read_at_all(fh, rec_off(q, 0), got, ROUNDS * REC, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &n);
        PS_CHECK(n == ROUNDS * REC, "%s: read %d bytes of area %d, not %d", what, n, q,
                 ROUNDS * REC);
        check(got, rec_off(q, 0), ROUNDS * REC, what);
    }
    PS_MPI(MPI_File_read_at(fh, 0, got, (int) fsize, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    PS_CHECK(n == (int) fsize, "%s: read %d bytes of %lld", what, n, (long long) fsize);
    check(got, 0, (size_t) fsize, what);
    free(got);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    MPI_File fh;
    int nsmall = 0;

    model = calloc((size_t)ps_nprocs, AREA + (3 * VREC + VBIG) * VCOUNT);
    PS_CHECK(model != NULL, "out of memory");
    MPI_File_delete(fname, MPI_INFO_NULL);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    /* a wrong argument is the call's error, not an abort */
    PS_MPI_EXPECT(MPI_File_write_at_all(fh, 0, model, 1, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE),
                  MPI_ERR_TYPE);
    prefill(fh);
    apart_rounds(fh, &nsmall);
    strided_apart(fh, &nsmall);
    interleaved(fh, (MPI_Offset)ps_nprocs * AREA, VREC, 20, 0);
    interleaved(fh, (MPI_Offset)ps_nprocs * (AREA + VREC * VCOUNT), VBIG, 21, 0);
    PS_MPI(MPI_File_close(&fh));
    aggregated(fname, (MPI_Offset)ps_nprocs * (AREA + (VREC + VBIG) * VCOUNT));
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));
    read_everything(fh, "every area after sync-barrier-sync");
    PS_MPI(MPI_File_close(&fh));
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    read_everything(fh, "every area after close and open");
    PS_MPI(MPI_File_close(&fh));
    if (ps_rank == 0)
        printf("small writes: %d\nps_collapart: PASS, %d processes\n", nsmall, ps_nprocs);
    free(model);
    MPI_Finalize();
    return 0;
}

/*
 * ps_icoll: nonblocking collective I/O (MPI_File_iwrite_all, iread_all,
 * iwrite_at_all, iread_at_all), and how much computation it hides.
 *
 * Every byte written is a function of its file offset and a seed
 * (ps_byte), so each access is checked against what the file must hold:
 * - iwrite_all / iread_all through an interleaved view (rank r has blocks
 *   r, r + P, ...), from and into strided memory, with the individual file
 *   pointer advanced as for the blocking calls (interleaved ranges: on
 *   pstripe the driver runs the blocking two-phase inside the call; the
 *   other accesses here, one part of the file per process, overlap);
 * - two iwrite_at_all outstanding at once on one file, waited for in
 *   reverse order, then two iread_at_all at once (MPI_Waitall);
 * - one iwrite_at_all on each of two files at once, the second file
 *   opened on its own (deleted on close), read back the same way;
 * - a small independent write (held by write-behind on pstripe) followed
 *   by an iread_at_all of it: the writer reads its own bytes;
 * - the overlap: iwrite_at_all of OVL bytes per process, then compute for
 *   about as long as that write takes alone, then MPI_Wait. The program
 *   prints the time (median of NREP) of the computation alone, of the I/O
 *   alone and of both overlapped, and the fraction of the shorter one
 *   hidden, (compute + io - both) / min(compute, io). It is a
 *   measurement, not a check: nothing is asserted about it. The same
 *   with iread_at_all of those bytes (which are then compared).
 * At the end rank 0 reads the whole file and compares it; the runner
 * compares the pstripe file with the ufs one.
 *
 * Usage: ps_icoll FILENAME
 */
#include "pstest.h"

#define B 4099                  /* bytes per block of the interleaved view */
#define NB 64                   /* blocks per process */
#define CH 300007               /* bytes per process of the *_at_all regions */
#define SMALL 100               /* bytes of the small independent write */
#define OVL (8 << 20)           /* bytes per process of the overlap measurement */

static MPI_Offset region_a, region_b1, region_b2, region_c, region_d, region_end;

static void fill_chunk(unsigned char *buf, MPI_Offset base, size_t len, unsigned seed)
{
    ps_fill(buf, len, (uint64_t) (base + (MPI_Offset) ps_rank * len), seed);
}

/* iwrite_all then iread_all through an interleaved view. */
static void interleaved(MPI_File fh)
{
    MPI_Datatype ftype, mtype, t;
    MPI_Request req;
    MPI_Status st;
    MPI_Offset pos;
    unsigned char *mem = malloc(2 * NB * B), *back = malloc(2 * NB * B), *p1, *p2;
    int k, count;

    MPI_Type_vector(NB, B, B * ps_nprocs, MPI_BYTE, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint) NB * B * ps_nprocs, &ftype);
    MPI_Type_free(&t);
    MPI_Type_commit(&ftype);
    MPI_Type_vector(NB, B, 2 * B, MPI_BYTE, &mtype);    /* every other block */
    MPI_Type_commit(&mtype);
    memset(mem, 0xee, 2 * NB * B);
    for (k = 0; k < NB; k++)
        ps_fill(mem + (size_t) 2 * k * B, B,
                (uint64_t) (region_a + ((MPI_Offset) k * ps_nprocs + ps_rank) * B), 1);

    PS_MPI(MPI_File_set_view(fh, region_a + (MPI_Offset) ps_rank * B, MPI_BYTE, ftype, "native",
                             MPI_INFO_NULL));
    PS_MPI(MPI_File_iwrite_all(fh, mem, 1, mtype, &req));
    PS_MPI(MPI_Wait(&req, &st));
    PS_MPI(MPI_Get_count(&st, mtype, &count));
    PS_CHECK(count == 1, "iwrite_all: status count %d", count);
    PS_MPI(MPI_File_get_position(fh, &pos));
    PS_CHECK(pos == (MPI_Offset) NB * B, "position after iwrite_all: %lld", (long long) pos);

    MPI_Barrier(MPI_COMM_WORLD);
    memset(back, 0, 2 * NB * B);
    PS_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    PS_MPI(MPI_File_iread_all(fh, back, 1, mtype, &req));
    PS_MPI(MPI_Wait(&req, &st));
    PS_MPI(MPI_File_get_position(fh, &pos));
    PS_CHECK(pos == (MPI_Offset) NB * B, "position after iread_all: %lld", (long long) pos);
    p1 = ps_pack(mem, 1, mtype);
    p2 = ps_pack(back, 1, mtype);
    ps_compare(p2, p1, (size_t) NB * B, "iread_all of an interleaved view");
    free(p1);
    free(p2);
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
    free(mem);
    free(back);
}

/* Two nonblocking collectives outstanding at once: on fh at b1 and on fh2
 * (or fh again) at b2. Writes are waited for in reverse order, reads with
 * MPI_Waitall. */
static void two_at_once(MPI_File fh, MPI_Offset b1, MPI_File fh2, MPI_Offset b2, unsigned seed,
                        const char *what)
{
    unsigned char *w1 = malloc(CH), *w2 = malloc(CH), *r1 = malloc(CH), *r2 = malloc(CH);
    MPI_Request req[2];
    MPI_Status st[2];
    int count;

    fill_chunk(w1, b1, CH, seed);
    fill_chunk(w2, b2, CH, seed + 1);
    PS_MPI(MPI_File_iwrite_at_all(fh, b1 + (MPI_Offset) ps_rank * CH, w1, CH, MPI_BYTE, &req[0]));
    PS_MPI(MPI_File_iwrite_at_all(fh2, b2 + (MPI_Offset) ps_rank * CH, w2, CH, MPI_BYTE,
                                  &req[1]));
    ps_compute(1000000);
    PS_MPI(MPI_Wait(&req[1], &st[1]));
    PS_MPI(MPI_Wait(&req[0], &st[0]));
    PS_MPI(MPI_Get_count(&st[0], MPI_BYTE, &count));
    PS_CHECK(count == CH, "%s: iwrite_at_all wrote %d bytes", what, count);
    MPI_Barrier(MPI_COMM_WORLD);

    memset(r1, 0, CH);
    memset(r2, 0, CH);
    PS_MPI(MPI_File_iread_at_all(fh2, b2 + (MPI_Offset) ps_rank * CH, r2, CH, MPI_BYTE, &req[1]));
    PS_MPI(MPI_File_iread_at_all(fh, b1 + (MPI_Offset) ps_rank * CH, r1, CH, MPI_BYTE, &req[0]));
    PS_MPI(MPI_Waitall(2, req, st));
    PS_MPI(MPI_Get_count(&st[0], MPI_BYTE, &count));
    PS_CHECK(count == CH, "%s: iread_at_all read %d bytes", what, count);
    ps_compare(r1, w1, CH, what);
    ps_compare(r2, w2, CH, what);
    free(w1);
    free(w2);
    free(r1);
    free(r2);
}

/* A small independent write, then a nonblocking collective read of it. */
static void small_then_iread(MPI_File fh)
{
    unsigned char w[SMALL], r[SMALL];
    MPI_Request req;
    MPI_Status st;

    fill_chunk(w, region_c, SMALL, 5);
    PS_MPI(MPI_File_write_at(fh, region_c + (MPI_Offset) ps_rank * SMALL, w, SMALL, MPI_BYTE,
                             &st));
    memset(r, 0, SMALL);
    PS_MPI(MPI_File_iread_at_all(fh, region_c + (MPI_Offset) ps_rank * SMALL, r, SMALL, MPI_BYTE,
                                 &req));
    PS_MPI(MPI_Wait(&req, &st));
    ps_compare(r, w, SMALL, "iread_at_all after a small independent write");
}

static double max_time(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* One timed step, the slowest process's time: what = 0 the I/O alone,
 * 1 the computation alone, 2 both (the write runs while the program
 * computes, no MPI call between). */
static double timed(MPI_File fh, MPI_Offset at, unsigned char *buf, int n, int what, int rd)
{
    MPI_Request req;
    double t0;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (what != 1 && rd)
        PS_MPI(MPI_File_iread_at_all(fh, at, buf, OVL, MPI_BYTE, &req));
    else if (what != 1)
        PS_MPI(MPI_File_iwrite_at_all(fh, at, buf, OVL, MPI_BYTE, &req));
    if (what != 0)
        ps_compute(n);
    if (what != 1)
        PS_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    return max_time(MPI_Wtime() - t0);
}

/* The overlap measurement (see the header): medians of NREP runs of each
 * step, taken in turn so that the machine's load falls on all three; rd:
 * iread_at_all of what the writes left (checked afterwards). */
#define NREP 5
static void overlap(MPI_File fh, int rd)
{
    unsigned char *buf = malloc(OVL), *want = malloc(OVL);
    MPI_Offset at = region_d + (MPI_Offset) ps_rank * OVL;
    double t[3][NREP], t0, med[3], rate, hidden;
    int n, r, w;

    fill_chunk(buf, region_d, OVL, 6);
    memcpy(want, buf, OVL);
    timed(fh, at, buf, 0, 0, rd);       /* warm up */
    /* a computation about as long as the I/O */
    t0 = MPI_Wtime();
    ps_compute(2000000);
    rate = 2000000 / PS_MAX(MPI_Wtime() - t0, 1e-6);
    MPI_Allreduce(MPI_IN_PLACE, &rate, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    for (r = 0; r < NREP; r++)
        t[0][r] = timed(fh, at, buf, 0, 0, rd);
    qsort(t[0], NREP, sizeof(double), cmp_double);
    n = (int) PS_MIN(rate * t[0][NREP / 2], 2e9);

    for (r = 0; r < NREP; r++)
        for (w = 0; w < 3; w++)
            t[w][r] = timed(fh, at, buf, n, w, rd);
    for (w = 0; w < 3; w++) {
        qsort(t[w], NREP, sizeof(double), cmp_double);
        med[w] = t[w][NREP / 2];
    }
    hidden = (med[0] + med[1] - med[2]) / PS_MIN(med[0], med[1]);
    hidden = PS_MAX(0.0, PS_MIN(1.0, hidden));
    if (ps_rank == 0)
        printf("  overlap: %d x %d MiB %s, medians of %d: compute alone %.3f s, "
               "I/O alone %.3f s, both %.3f s: %.0f%% of the shorter hidden\n", ps_nprocs,
               OVL >> 20, rd ? "iread_at_all" : "iwrite_at_all", NREP, med[1], med[0], med[2],
               100.0 * hidden);
    if (rd)
        ps_compare(buf, want, OVL, "iread_at_all of the overlap region");
    free(buf);
    free(want);
}

/* Rank 0 reads the whole file and checks every region. */
static void check_file(MPI_File fh)
{
    unsigned char *got, *want;
    MPI_Status st;
    MPI_Offset size;

    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_get_size(fh, &size));
    PS_CHECK(size == region_end, "file size %lld, expected %lld", (long long) size,
             (long long) region_end);
    if (ps_rank == 0) {
        struct {
            MPI_Offset lo, hi;
            unsigned seed;
        } r[] = {
            {region_a, region_b1, 1}, {region_b1, region_b2, 2}, {region_b2, region_c, 4},
            {region_c, region_c + (MPI_Offset) SMALL * ps_nprocs, 5}, {region_d, region_end, 6}
        };
        size_t k;
        for (k = 0; k < sizeof(r) / sizeof(r[0]); k++) {
            size_t len = (size_t) (r[k].hi - r[k].lo);
            got = malloc(len);
            want = malloc(len);
            ps_fill(want, len, (uint64_t) r[k].lo, r[k].seed);
            PS_MPI(MPI_File_read_at(fh, r[k].lo, got, (int) len, MPI_BYTE, &st));
            ps_compare(got, want, len, "the whole file");
            free(got);
            free(want);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    char other[1024];
    MPI_File fh, fh2;
    MPI_Info info;

    region_a = 0;
    region_b1 = region_a + (MPI_Offset) NB * B * ps_nprocs;
    region_b2 = region_b1 + (MPI_Offset) CH * ps_nprocs;
    region_c = region_b2 + (MPI_Offset) CH * ps_nprocs;
    region_d = region_c + 1048576;
    region_end = region_d + (MPI_Offset) OVL * ps_nprocs;

    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    info = ps_test_info();
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));

    interleaved(fh);
    /* two at once on one file: seeds 2 and 3, the second overwritten below */
    two_at_once(fh, region_b1, fh, region_b2, 2, "two nonblocking collectives on one file");
    /* one on each of two files: region_b2 of the first gets seed 4 */
    ps_fname(other, sizeof(other), fname, ".two");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR |
                         MPI_MODE_DELETE_ON_CLOSE, info, &fh2));
    two_at_once(fh2, 0, fh, region_b2, 3, "nonblocking collectives on two files");
    PS_MPI(MPI_File_close(&fh2));
    MPI_Info_free(&info);
    small_then_iread(fh);
    /* the gap after region_c stays a hole (zeros on both file systems) */
    overlap(fh, 0);
    overlap(fh, 1);
    check_file(fh);
    PS_MPI(MPI_File_close(&fh));

    if (ps_rank == 0)
        printf("ps_icoll: %d processes: PASS\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

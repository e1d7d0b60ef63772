/*
 * ps_wbsend: write-behind around set_view and collective calls, checked
 * against a byte model of the file.
 *
 * HDF5 sets a view, with its info object, around every access of a
 * derived type; the driver flushes its write-behind buffer there and at
 * every collective call, and keeps its buffers when no hint of its own
 * changes. Each process owns one area of the file (the processes' ranges
 * do not interleave). In each round a process sets a vector view (with an
 * empty info object or MPI_INFO_NULL, in turn), writes 8 pieces through
 * it (collectively every third round), sets the byte view back and
 * writes a few bytes right after the last piece. Every fifth round
 * rewrites the same bytes with new data: the later data must win. A
 * small buffer (4 KiB) fills every 20 rounds or so.
 *
 * The areas are written whole first. Checked: the writer reads its own
 * area at once, every 10 rounds; every process reads every area after
 * sync-barrier-sync, and after close and open.
 */
#include "pstest.h"

#define AREA 4096     /* bytes per process */
#define NPIECE 8      /* pieces per write */
#define PIECE 24      /* bytes per piece */
#define STRIDE 200    /* between pieces */
#define SHIFT 40      /* between the views of successive rounds */
#define NSHIFT 5      /* round r and r + NSHIFT write the same bytes */
#define TAIL 16       /* bytes written after the last piece */
#define ROUNDS 120

static unsigned char model[AREA * 4];   /* up to 4 processes */
static MPI_Offset fsize;

static MPI_Offset round_disp(int rank, int r)
{
    return (MPI_Offset) rank * AREA + (MPI_Offset) (r % NSHIFT) * SHIFT;
}

/* Where the tail write of round r goes: right after its last piece. */
static MPI_Offset round_tail(int rank, int r)
{
    return round_disp(rank, r) + (MPI_Offset) (NPIECE - 1) * STRIDE + PIECE;
}

/* Every process's writes of round r, in the model. */
static void model_round(int r)
{
    MPI_Offset off;
    int p, k;

    for (p = 0; p < ps_nprocs; p++)
        for (k = 0; k < NPIECE; k++) {
            off = round_disp(p, r) + (MPI_Offset) k * STRIDE;
            ps_fill(model + off, PIECE, (uint64_t) off, 100 + r);
            fsize = PS_MAX(fsize, off + PIECE);
        }
    for (p = 0; p < ps_nprocs; p++)
        ps_fill(model + round_tail(p, r), TAIL, (uint64_t) round_tail(p, r), 200 + r);
}

/* Read [off, off + len) in 512-byte pieces and compare with the model. */
static void check_range(MPI_File fh, MPI_Offset off, MPI_Offset len, const char *what, int r)
{
    unsigned char buf[512];
    MPI_Status st;
    MPI_Offset o;
    int n, got, i;

    for (o = off; o < off + len; o += n) {
        n = (int) PS_MIN((MPI_Offset) sizeof(buf), off + len - o);
        PS_MPI(MPI_File_read_at(fh, o, buf, n, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (got == 0) {
            PS_CHECK(o >= fsize, "%s (round %d): no bytes at %lld, below the size %lld", what,
                     r, (long long) o, (long long) fsize);
            break;
        }
        for (i = 0; i < got; i++)
            if (buf[i] != model[o + i])
                PS_FAIL("%s (round %d): byte at %lld is 0x%02x, expected 0x%02x", what, r,
                        (long long) (o + i), buf[i], model[o + i]);
        n = got;
    }
}

/* Each process writes its area whole (seed 99); sync-barrier-sync. */
static void fill_areas(MPI_File fh)
{
    static unsigned char buf[AREA];
    MPI_Offset off = (MPI_Offset) ps_rank * AREA;
    MPI_Status st;
    int p;

    ps_fill(buf, AREA, (uint64_t) off, 99);
    PS_MPI(MPI_File_write_at(fh, off, buf, AREA, MPI_BYTE, &st));
    for (p = 0; p < ps_nprocs; p++)
        ps_fill(model + (MPI_Offset) p * AREA, AREA, (uint64_t) p * AREA, 99);
    fsize = (MPI_Offset) ps_nprocs * AREA;
    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));
}

/* One round: a vector view, 8 pieces written through it, the byte view. */
static void write_round(MPI_File fh, MPI_Datatype vec, MPI_Info empty, int r)
{
    unsigned char buf[NPIECE * PIECE];
    MPI_Info info = r % 2 ? empty : MPI_INFO_NULL;
    MPI_Offset disp = round_disp(ps_rank, r);
    MPI_Status st;
    int k;

    for (k = 0; k < NPIECE; k++)
        ps_fill(buf + k * PIECE, PIECE, (uint64_t) (disp + (MPI_Offset) k * STRIDE), 100 + r);
    PS_MPI(MPI_File_set_view(fh, disp, MPI_BYTE, vec, "native", info));
    if (r % 3 == 0)
        PS_MPI(MPI_File_write_at_all(fh, 0, buf, (int) sizeof(buf), MPI_BYTE, &st));
    else
        PS_MPI(MPI_File_write_at(fh, 0, buf, (int) sizeof(buf), MPI_BYTE, &st));
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    /* right after the last piece: adjacent to a region already flushed */
    ps_fill(buf, TAIL, (uint64_t) round_tail(ps_rank, r), 200 + r);
    PS_MPI(MPI_File_write_at(fh, round_tail(ps_rank, r), buf, TAIL, MPI_BYTE, &st));
    model_round(r);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    MPI_Datatype vec;
    MPI_Info info = ps_test_info(), empty;
    MPI_File fh;
    int r;

    PS_CHECK(ps_nprocs <= 4, "at most 4 processes");
    MPI_Info_set(info, "romio_pstripe_wb_buffer_size", "4k");
    MPI_Info_create(&empty);
    MPI_Type_vector(NPIECE, PIECE, STRIDE, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));

    /* the areas are written whole first: ROMIO's data sieving on ufs
     * writes back what it did not read past the end of file as garbage */
    fill_areas(fh);
    for (r = 0; r < ROUNDS; r++) {
        write_round(fh, vec, empty, r);
        if (r % 10 == 9)
            check_range(fh, (MPI_Offset) ps_rank * AREA, AREA, "own writes at once", r);
    }
    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));
    check_range(fh, 0, (MPI_Offset) ps_nprocs * AREA, "every area after sync-barrier-sync", r);
    PS_MPI(MPI_File_close(&fh));

    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    check_range(fh, 0, (MPI_Offset) ps_nprocs * AREA, "every area after close and open", r);
    PS_MPI(MPI_File_close(&fh));

    MPI_Type_free(&vec);
    MPI_Info_free(&empty);
    MPI_Info_free(&info);
    if (ps_rank == 0)
        printf("ps_wbsend: %d processes, %d rounds: PASS\n", ps_nprocs, ROUNDS);
    MPI_Finalize();
    return 0;
}

/*
 * ps_manyfiles: many files open at once, and the messages that order them.
 *
 * A message between processes first sends the buffered writes of every
 * open file, and makes the next read of each drop its cached blocks
 * (ad_pstripe_sync.c); a file with nothing buffered is skipped without its
 * lock. NFILES files are open (the test's file and NFILES - 1 others,
 * deleted at close). First rank 0 writes every file's area and all sync,
 * barrier, sync. Then in each round the other processes read (and cache:
 * the second read after a drop fills blocks) the pieces of a quarter of
 * the files and tell the writer (a send, which does not drop their
 * caches); the writer writes those pieces (left in its write-behind
 * buffer), a broadcast from the writer follows, and every process must
 * read the new bytes of each file at once.
 *
 * Last, the latency of a message with the files open and clean against
 * none open, measured side by side and printed, not checked (the best of
 * three ping-pongs of 8 bytes between ranks 0 and 1, PS_PINGPONG_ITERS
 * round trips each, default 2000): with a lock taken per open file it grew
 * with their number.
 */
#include "pstest.h"

#define NFILES 64
#define NROUNDS 8
#define SLOT 64
#define PIECE 40

static double pingpong(int iters)
{
    char b[8] = { 0 };
    double t;
    int i;

    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (i = 0; i < iters && ps_rank <= 1; i++) {
        if (ps_rank == 0) {
            MPI_Send(b, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(b, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(b, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(b, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t) / iters / 2 * 1e6;
}

/* One-way latency in us, the best of three ping-pongs after a warm-up
 * (rank 0's figure). */
static double one_way_us(int iters)
{
    double best = 1e30, t;
    int i;

    pingpong(iters / 10 + 1);
    for (i = 0; i < 3; i++) {
        t = pingpong(iters);
        best = t < best ? t : best;
    }
    return best;
}

static void check_piece(MPI_File fh, MPI_Offset off, unsigned seed, int file, const char *what)
{
    unsigned char got[PIECE], want[PIECE];
    char msg[128];
    MPI_Status st;

    PS_MPI(MPI_File_read_at(fh, off, got, PIECE, MPI_BYTE, &st));
    ps_fill(want, PIECE, (uint64_t) off, seed);
    snprintf(msg, sizeof(msg), "file %d: %s", file, what);
    ps_compare(got, want, PIECE, msg);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    static MPI_File fh[NFILES];
    static unsigned char area[NROUNDS * SLOT], piece[PIECE];
    MPI_Info info = ps_test_info();
    MPI_Status st;
    MPI_Offset off;
    char name[1024], suffix[16];
    const char *env = getenv("PS_PINGPONG_ITERS");
    int iters = env != NULL && atoi(env) > 0 ? atoi(env) : 2000;
    double none, open_clean;
    int k, r, writer, token;

    /* small caches: NFILES of them per process */
    MPI_Info_set(info, "romio_pstripe_wb_buffer_size", "16k");
    MPI_Info_set(info, "romio_pstripe_rc_size", "64k");
    MPI_Info_set(info, "romio_pstripe_rc_block_size", "4k");
    none = ps_nprocs > 1 ? one_way_us(iters) : 0;
    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    for (k = 0; k < NFILES; k++) {
        snprintf(suffix, sizeof(suffix), ".%d", k);
        ps_fname(name, sizeof(name), fname, suffix);
        PS_MPI(MPI_File_open(MPI_COMM_WORLD, k == 0 ? fname : name,
                             MPI_MODE_CREATE | MPI_MODE_RDWR |
                             (k == 0 ? 0 : MPI_MODE_DELETE_ON_CLOSE), info, &fh[k]));
        if (ps_rank == 0) {
            ps_fill(area, sizeof(area), 0, 1);
            PS_MPI(MPI_File_write_at(fh[k], 0, area, sizeof(area), MPI_BYTE, &st));
        }
        PS_MPI(MPI_File_sync(fh[k]));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (k = 0; k < NFILES; k++)
        PS_MPI(MPI_File_sync(fh[k]));

    for (r = 0; r < NROUNDS; r++) {
        writer = r % ps_nprocs;
        off = (MPI_Offset) r * SLOT + 8;
        if (ps_rank != writer) {
            for (k = r % 4; k < NFILES; k += 4) {
                check_piece(fh[k], off, 1, k, "before another process's write");
                check_piece(fh[k], off, 1, k, "before another process's write, cached");
            }
            MPI_Send(&r, 1, MPI_INT, writer, 1, MPI_COMM_WORLD);
        } else {
            for (k = 0; k < ps_nprocs - 1; k++)
                MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            ps_fill(piece, PIECE, (uint64_t) off, 10 + r);
            for (k = r % 4; k < NFILES; k += 4)
                PS_MPI(MPI_File_write_at(fh[k], off, piece, PIECE, MPI_BYTE, &st));
        }
        MPI_Bcast(&writer, 1, MPI_INT, writer, MPI_COMM_WORLD);
        for (k = r % 4; k < NFILES; k += 4)
            check_piece(fh[k], off, 10 + r, k, "another process's write after a broadcast");
        for (k = 0; k < NFILES; k++)
            if (k % 4 != r % 4)
                check_piece(fh[k], off, 1, k, "a file nobody wrote this round");
    }

    open_clean = ps_nprocs > 1 ? one_way_us(iters) : 0;
    for (k = 0; k < NFILES; k++)
        PS_MPI(MPI_File_close(&fh[k]));
    MPI_Info_free(&info);
    if (ps_rank == 0) {
        if (ps_nprocs > 1)
            printf("ps_manyfiles: one-way message latency %.2f us with no file open, "
                   "%.2f us with %d open (x %.2f)\n", none, open_clean, NFILES,
                   open_clean / none);
        printf("ps_manyfiles: %d processes, %d files, %d rounds: PASS\n", ps_nprocs, NFILES,
               NROUNDS);
    }
    MPI_Finalize();
    return 0;
}

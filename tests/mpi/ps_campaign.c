/*
 * ps_campaign.c: the MPI side of the fault campaign (tests/mpi/mpi-campaign).
 *
 *   ps_campaign write FILE EPOCHS BLOCK LIMIT   (any number of processes)
 *   ps_campaign verify FILE SYNCED BLOCK         (one process)
 *
 * write: in epoch e every process writes one BLOCK-byte block at offset
 * (e * nprocs + rank) * BLOCK, filled with a pattern of (offset, e), then
 * all call MPI_File_sync. After each sync rank 0 prints "synced E" (flushed):
 * the runner kills or stops a server meanwhile, and every epoch printed is
 * one whose bytes MPI has acknowledged. A failed call ends the program
 * (exit 1, "error at epoch E"); a call that took longer than LIMIT seconds
 * is a hang (exit 3): the client's timeout must bound every call.
 *
 * verify: reads epochs 0..SYNCED-1 (of a run with NPROCS processes, from
 * PSM_NPROCS) and checks every byte against the pattern; prints "checked N
 * bytes".
 */
#include "pstest.h"

#include <unistd.h>

static unsigned char pattern(uint64_t off, int epoch)
{
    return (unsigned char)(((off * 2654435761u) >> 13) ^ (uint64_t)(epoch * 131 + 7));
}

static void fill(unsigned char *buf, int block, uint64_t off, int epoch)
{
    for (int i = 0; i < block; i++)
        buf[i] = pattern(off + (uint64_t)i, epoch);
}

/* Run one MPI call, time it, and end the program on an error or a hang. */
#define TIMED(call, epoch, what)                                                        \
    do {                                                                                \
        double t0_ = MPI_Wtime();                                                       \
        int rc_ = (call);                                                               \
        double dt_ = MPI_Wtime() - t0_;                                                 \
        if (dt_ > limit) {                                                              \
            printf("HANG: %s at epoch %d took %.1f s (limit %.0f s)\n", what, epoch,    \
                   dt_, limit);                                                         \
            fflush(stdout);                                                             \
            _exit(3);                                                                   \
        }                                                                               \
        if (rc_ != MPI_SUCCESS) {                                                       \
            char msg_[MPI_MAX_ERROR_STRING];                                            \
            int len_ = 0;                                                               \
            MPI_Error_string(rc_, msg_, &len_);                                         \
            printf("error at epoch %d after %.2f s: %s: %s\n", epoch, dt_, what, msg_); \
            fflush(stdout);                                                             \
            _exit(1);                                                                   \
        }                                                                               \
    } while (0)

static int do_write(const char *file, int epochs, int block, double limit)
{
    unsigned char *buf = malloc((size_t)block);
    MPI_File fh;
    MPI_Status st;

    PS_CHECK(buf != NULL, "no memory");
    TIMED(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                        MPI_INFO_NULL, &fh), -1, "open");
    for (int e = 0; e < epochs; e++) {
        uint64_t off = ((uint64_t)e * (uint64_t)ps_nprocs + (uint64_t)ps_rank) * (uint64_t)block;
        fill(buf, block, off, e);
        TIMED(MPI_File_write_at(fh, (MPI_Offset)off, buf, block, MPI_BYTE, &st), e, "write");
        TIMED(MPI_File_sync(fh), e, "sync");
        if (ps_rank == 0) {
            printf("synced %d\n", e + 1);
            fflush(stdout);
        }
    }
    TIMED(MPI_File_close(&fh), epochs, "close");
    free(buf);
    return 0;
}

static int do_verify(const char *file, int synced, int block, int nprocs)
{
    unsigned char *buf = malloc((size_t)block), *want = malloc((size_t)block);
    unsigned long long checked = 0;
    MPI_File fh;
    MPI_Status st;

    PS_CHECK(buf != NULL && want != NULL, "no memory");
    PS_MPI(MPI_File_open(MPI_COMM_SELF, file, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (int e = 0; e < synced; e++) {
        for (int r = 0; r < nprocs; r++) {
            uint64_t off = ((uint64_t)e * (uint64_t)nprocs + (uint64_t)r) * (uint64_t)block;
            int got = 0;
            fill(want, block, off, e);
            PS_MPI(MPI_File_read_at(fh, (MPI_Offset)off, buf, block, MPI_BYTE, &st));
            MPI_Get_count(&st, MPI_BYTE, &got);
            PS_CHECK(got == block, "epoch %d rank %d: read %d of %d bytes", e, r, got, block);
            for (int i = 0; i < block; i++)
                PS_CHECK(buf[i] == want[i], "epoch %d (synced) rank %d: byte %d at offset %llu "
                         "is %u, not %u: acknowledged data lost", e, r, i,
                         (unsigned long long)(off + (uint64_t)i), buf[i], want[i]);
            checked += (unsigned long long)block;
        }
    }
    PS_MPI(MPI_File_close(&fh));
    printf("checked %llu bytes\n", checked);
    free(buf);
    free(want);
    return 0;
}

int main(int argc, char **argv)
{
    int rc;

    MPI_Init(&argc, &argv);
    ps_prog = "ps_campaign";
    MPI_Comm_rank(MPI_COMM_WORLD, &ps_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ps_nprocs);
    if (argc == 6 && strcmp(argv[1], "write") == 0) {
        rc = do_write(argv[2], atoi(argv[3]), atoi(argv[4]), atof(argv[5]));
    } else if (argc == 5 && strcmp(argv[1], "verify") == 0) {
        const char *np = getenv("PSM_NPROCS");
        rc = do_verify(argv[2], atoi(argv[3]), atoi(argv[4]), np ? atoi(np) : 2);
    } else {
        if (ps_rank == 0)
            fprintf(stderr, "usage: ps_campaign write FILE EPOCHS BLOCK LIMIT | "
                    "verify FILE SYNCED BLOCK\n");
        rc = 2;
    }
    MPI_Finalize();
    return rc;
}

/*
 * ps_sfp_lost: a shared file pointer lost by a server restart is an error,
 * never a silent restart at 0 (which would overwrite the records before).
 *
 * Each process appends one 8-byte record with MPI_File_write_shared; rank 0
 * then creates SIGNAL.ready and every process waits (at most 120 s, asleep:
 * not in an MPI call, where MPICH would spin) for SIGNAL.go, which the
 * runner (tests/mpi/mpi-sfp-lost) creates after restarting every server.
 * Then write_shared, read_shared, iwrite_shared, iread_shared and
 * seek_shared(SEEK_CUR) must fail with MPI_ERR_IO on every process, the message naming the lost pointer
 * (seek_shared: rank 0 reads the pointer, every process returns its error,
 * none hangs); write_ordered fails with MPI_ERR_IO on every process (the
 * last one, which does the fetch-and-add, names the lost pointer); a
 * negative seek_shared(SEEK_SET) is MPI_ERR_ARG on every process. Then
 * set_view sets it again, at 0 (every process found it lost), and
 * seek_shared to the end (SEEK_SET) moves it there, the appends go on after
 * the old records, and the file holds every record once, none overwritten.
 *
 * Then a second round: rank 0 creates SIGNAL.ready2, every process waits
 * for SIGNAL.go2 (the runner restarts every server again), and the first
 * call after is seek_shared(0, SEEK_SET), which must set the pointer again
 * though no process has found it lost (under Open MPI it only counted a
 * new view, as set_view does, and the next access failed).
 *
 * Built with MPICH (tests/mpi/mpi-sfp-lost) and with Open MPI
 * (tests/mpi/mpi-sfp-lost-openmpi).
 *
 * Usage: ps_sfp_lost pstripe:/FILE SIGNAL
 */
#include "pstest.h"

#include <unistd.h>

/* rc must be of class want; if named, its message must name the lost pointer. */
static void expect_error(int rc, int want, int named, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int cls = MPI_SUCCESS, len = 0;

    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
    }
    PS_CHECK(cls == want && (!named || strstr(msg, "lost") != NULL),
             "%s after the restart: expected class %d%s, got class %d: %s", what, want,
             named ? " naming the lost pointer" : "", cls, msg);
    if (ps_rank == ps_nprocs - 1)
        printf("ps_sfp_lost: rank %d: %s: %s\n", ps_rank, what, msg);
}

static void expect_lost(int rc, const char *what)
{
    expect_error(rc, MPI_ERR_IO, 1, what);
}

/* iwrite_shared (or iread_shared) of one record, then its wait: the first
 * error. */
static int nonblocking(MPI_File fh, int is_write, int64_t *rec)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = is_write ? MPI_File_iwrite_shared(fh, rec, 1, MPI_INT64_T, &req)
                      : MPI_File_iread_shared(fh, rec, 1, MPI_INT64_T, &req);

    return rc == MPI_SUCCESS ? MPI_Wait(&req, MPI_STATUS_IGNORE) : rc;
}

/* Rank 0 creates SIGNAL.readyROUND; every process waits for SIGNAL.goROUND
 * (ROUND "" for the first round, "2" for the second). */
static void handshake(const char *signal, const char *round)
{
    char ready[4096], go[4096];
    FILE *f;
    int i;

    snprintf(ready, sizeof(ready), "%s.ready%s", signal, round);
    snprintf(go, sizeof(go), "%s.go%s", signal, round);
    if (ps_rank == 0) {
        f = fopen(ready, "w");
        PS_CHECK(f != NULL, "cannot create %s", ready);
        fclose(f);
    }
    for (i = 0; i < 2400 && access(go, F_OK) != 0; i++)
        usleep(50000);
    PS_CHECK(access(go, F_OK) == 0, "no %s within 120 s", go);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    MPI_File fh;
    MPI_Offset pos, size;
    MPI_Status st;
    int64_t rec[2], *all;
    int i, found;

    PS_CHECK(argc >= 3, "usage: ps_sfp_lost FILE SIGNAL");
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    PS_MPI(MPI_File_set_size(fh, 0));
    rec[0] = 1000 + ps_rank;
    PS_MPI(MPI_File_write_shared(fh, rec, 1, MPI_INT64_T, &st));
    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    handshake(argv[2], "");
    MPI_Barrier(MPI_COMM_WORLD);

    rec[1] = 2000 + ps_rank;
    expect_lost(MPI_File_write_shared(fh, &rec[1], 1, MPI_INT64_T, &st), "write_shared");
    expect_lost(MPI_File_read_shared(fh, rec, 1, MPI_INT64_T, &st), "read_shared");
    /* (ROMIO's nonblocking forms go on to the access after the pointer's
     * error, which wrote and read at 0 before session 80) */
    expect_lost(nonblocking(fh, 1, &rec[1]), "iwrite_shared");
    expect_lost(nonblocking(fh, 0, rec), "iread_shared");
    /* in atomic mode ROMIO makes the access a blocking one, also of 0 bytes */
    PS_MPI(MPI_File_set_atomicity(fh, 1));
    expect_lost(nonblocking(fh, 1, &rec[1]), "atomic iwrite_shared");
    {
        MPI_Request req = MPI_REQUEST_NULL;
        int rc = MPI_File_iwrite_shared(fh, &rec[1], 0, MPI_INT64_T, &req);
        expect_lost(rc == MPI_SUCCESS ? MPI_Wait(&req, MPI_STATUS_IGNORE) : rc,
                    "atomic iwrite_shared of 0 bytes");
    }
    PS_MPI(MPI_File_set_atomicity(fh, 0));
    expect_lost(MPI_File_seek_shared(fh, 0, MPI_SEEK_CUR), "seek_shared(SEEK_CUR)");
    expect_error(MPI_File_write_ordered(fh, &rec[1], 1, MPI_INT64_T, &st), MPI_ERR_IO,
                 ps_rank == ps_nprocs - 1, "write_ordered");
    expect_error(MPI_File_seek_shared(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG, 0,
                 "seek_shared(-1, SEEK_SET)");

    /* set_view sets it again (at 0) */
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    PS_MPI(MPI_File_get_position_shared(fh, &pos));
    PS_CHECK(pos == 0, "shared pointer at %lld after set_view, expected 0", (long long) pos);
    MPI_Barrier(MPI_COMM_WORLD);

    /* moved after the records written before the restart (a view of
     * bytes: the pointer counts bytes) */
    PS_MPI(MPI_File_get_size(fh, &size));
    PS_CHECK(size == ps_nprocs * 8, "size %lld after the restart, expected %d", (long long) size,
             ps_nprocs * 8);
    PS_MPI(MPI_File_seek_shared(fh, size, MPI_SEEK_SET));
    PS_MPI(MPI_File_write_shared(fh, &rec[1], 1, MPI_INT64_T, &st));
    PS_MPI(MPI_File_sync(fh)); /* sync, barrier, sync: the others' records */
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));
    PS_MPI(MPI_File_get_position_shared(fh, &pos));
    PS_CHECK(pos == 2 * ps_nprocs * 8, "shared pointer at %lld, expected %d", (long long) pos,
             2 * ps_nprocs * 8);

    /* every record once: 1000 + r before, 2000 + r after */
    all = malloc(sizeof(int64_t) * 2 * ps_nprocs);
    PS_MPI(MPI_File_read_at(fh, 0, all, 2 * ps_nprocs, MPI_INT64_T, &st));
    for (i = 0; i < 2 * ps_nprocs; i++) {
        int64_t want = (i < ps_nprocs ? 1000 : 2000) + i % ps_nprocs;
        int j;
        for (found = 0, j = 0; j < 2 * ps_nprocs; j++)
            found += all[j] == want;
        PS_CHECK(found == 1 && all[i] / 1000 == (i < ps_nprocs ? 1 : 2),
                 "record %lld found %d times, record %d is %lld", (long long) want, found, i,
                 (long long) all[i]);
    }
    free(all);

    /* round 2: a loss no process has met; seek_shared to 0 sets it again */
    MPI_Barrier(MPI_COMM_WORLD);
    handshake(argv[2], "2");
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    PS_MPI(MPI_File_get_position_shared(fh, &pos));
    PS_CHECK(pos == 0, "shared pointer at %lld after seek_shared(0) (second restart), "
             "expected 0", (long long) pos);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_close(&fh));
    if (ps_rank == 0)
        printf("ps_sfp_lost: %d processes: PASS\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

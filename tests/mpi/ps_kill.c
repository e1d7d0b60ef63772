/*
 * ps_kill: a server dies (or stops answering) while the program writes; the
 * program must get MPI errors, promptly, on every kind of call, and never
 * hang.
 *
 * Every rank writes 1 MiB blocks (each touching every server) in a loop.
 * After two rounds rank 0 creates the file MARKER: the test runner then
 * kills or stops one server. Each rank goes on until a write fails, then
 * checks that a nonblocking write (whose start must not block), a
 * collective write (two-phase, forced) and a nonblocking collective write
 * fail too, and that small writes
 * (buffered by the driver's write-behind, and, under MPICH, flushed by
 * set_view) make MPI_File_sync fail, that a set_info whose flush fails
 * on one process only does not leave the others waiting in it, and that
 * MPI_File_close fails after it all. Each failing call must
 * return within LIMIT seconds (the client's timeout plus slack) and with
 * class MPI_ERR_IO.
 *
 * Built with Open MPI (OMPIO and the components of adio/ompio): OMPIO 4.1
 * drops the error of a failed blocking write (independent, and collective
 * through its fcoll) and of a close; the hooks `pstripe run` preloads
 * return them, so the checks are the same, and after each kind of write a
 * collective MPI_File_sync must fail with MPI_ERR_IO within the limit
 * too.
 *
 * Usage: ps_kill FILENAME MARKER LIMIT_SECONDS
 * Exit status 0 when every check held.
 */
#include "pstest.h"
#include <unistd.h>

#ifdef OPEN_MPI
#define PS_OMPIO 1
#else
#define PS_OMPIO 0
#endif

#define BS (1 << 20)

static double limit;

/* A call that must fail with MPI_ERR_IO within the limit. */
static void expect_io_error(int rc, double t0, const char *what)
{
    double dt = MPI_Wtime() - t0;
    char msg[MPI_MAX_ERROR_STRING];
    int len, cls;

    PS_CHECK(rc != MPI_SUCCESS, "%s succeeded after the server failure", what);
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    printf("rank %d: %s failed after %.1f s (class %d): %s\n", ps_rank, what, dt, cls, msg);
    fflush(stdout);
    PS_CHECK(cls == MPI_ERR_IO, "%s: error class %d, expected MPI_ERR_IO (%d)", what, cls,
             MPI_ERR_IO);
    PS_CHECK(strstr(msg, "pstripe") != NULL, "%s: error string does not name pstripe", what);
    PS_CHECK(dt <= limit, "%s took %.1f s to fail, more than %.0f s", what, dt, limit);
}

/* A write that must fail: MPI_ERR_IO within the limit; then (OMPIO) a
 * collective sync must fail with MPI_ERR_IO. */
static void expect_failed_write(MPI_File fh, int rc, double t0, const char *what)
{
    char sync_what[128];

    expect_io_error(rc, t0, what);
    if (PS_OMPIO) {
        snprintf(sync_what, sizeof(sync_what), "sync after the %s", what);
        t0 = MPI_Wtime();
        expect_io_error(MPI_File_sync(fh), t0, sync_what);
    }
}

/* Small writes, then a set_view (HDF5's pattern): the ROMIO driver
 * flushes them there; the set_view must fail (ROMIO's ADIO_Set_view drops
 * the error, the driver returns it from set_view's next step), and the
 * sync after it again. (Not under OMPIO: its set_view does not reach the
 * components, and the flush before it, by libpstripe-ompi-hooks.so, cannot
 * fail it; the sync of buffered small writes below fails there.) */
static void sends_by_set_view(MPI_File fh, const unsigned char *buf)
{
    MPI_Status st;
    double t0;
    int rc = MPI_SUCCESS, i;

    for (i = 0; i < 16 && rc == MPI_SUCCESS; i++)
        rc = MPI_File_write_at(fh, (MPI_Offset) i * 65536 + ps_rank * 64, buf, 64, MPI_BYTE, &st);
    PS_CHECK(rc == MPI_SUCCESS, "a small write failed at once: not buffered");
    t0 = MPI_Wtime();
    rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    expect_io_error(rc, t0, "set_view whose flush of small writes fails");
    t0 = MPI_Wtime();
    expect_io_error(MPI_File_sync(fh), t0, "the sync after a set_view whose flush failed");
}

/* A flush that fails on one process only, in a collective set_info that
 * makes the lock window (romio_pstripe_listio_write disabled on an open
 * file): the process whose flush fails must still take part in the
 * collective steps of set_info, or the others wait for it for ever. */
static void one_flush_fails(MPI_File fh, const unsigned char *buf)
{
    MPI_Info ds_write;
    MPI_Status st;
    double t0;
    int rc = MPI_SUCCESS, i;

    for (i = 0; i < 16 && ps_rank == 0 && rc == MPI_SUCCESS; i++)
        rc = MPI_File_write_at(fh, (MPI_Offset) i * 65536, buf, 64, MPI_BYTE, &st);
    PS_CHECK(rc == MPI_SUCCESS, "a small write failed at once: not buffered");
    MPI_Info_create(&ds_write);
    MPI_Info_set(ds_write, "romio_pstripe_listio_write", "disable");
    t0 = MPI_Wtime();
    rc = MPI_File_set_info(fh, ds_write);
    MPI_Info_free(&ds_write);
    if (ps_rank == 0)
        expect_io_error(rc, t0, "set_info whose flush fails on this process only");
    else
        printf("rank %d: set_info beside a failed flush returned %d after %.1f s\n", ps_rank,
               rc, MPI_Wtime() - t0);
    /* both are still in step: a collective call that must complete */
    t0 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    PS_CHECK(MPI_Wtime() - t0 <= limit, "the processes left set_info %.1f s apart",
             MPI_Wtime() - t0);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    const char *marker = argc > 2 ? argv[2] : NULL;
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;
    MPI_Request req;
    unsigned char *buf = malloc(BS);
    double t0, start;
    int rc = MPI_SUCCESS, iter;

    PS_CHECK(marker != NULL && argc > 3, "usage: ps_kill FILENAME MARKER LIMIT_SECONDS");
    limit = atof(argv[3]);
    /* MPI_Wait reports an I/O request's error through the communicator's
     * error handler (MPI cannot tell it from other requests) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ps_fill(buf, BS, (uint64_t) ps_rank * BS, 3);

    info = ps_test_info();
    MPI_Info_set(info, "romio_cb_write", "enable");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);

    start = MPI_Wtime();
    for (iter = 0;; iter++) {
        MPI_Offset off = ((MPI_Offset) (iter % 8) * ps_nprocs + ps_rank) * BS;
        if (iter == 2) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (ps_rank == 0) {
                FILE *f = fopen(marker, "w");
                PS_CHECK(f != NULL, "cannot create %s", marker);
                fclose(f);
            }
        }
        t0 = MPI_Wtime();
        rc = MPI_File_write_at(fh, off, buf, BS, MPI_BYTE, &st);
        if (rc != MPI_SUCCESS) {
            PS_CHECK(iter >= 2, "write failed before the server was touched");
            break;
        }
        PS_CHECK(MPI_Wtime() - start < 300, "no error 300 s after the marker");
        usleep(20000);
    }
    expect_failed_write(fh, rc, t0, "independent write");

    /* nonblocking: the call itself must not wait for the dead server (a
     * blocking implementation would sit in it for the timeout); the error
     * comes from MPI_Wait, or at once if the library already knows */
    t0 = MPI_Wtime();
    rc = MPI_File_iwrite_at(fh, (MPI_Offset) ps_rank * BS, buf, BS, MPI_BYTE, &req);
    if (rc == MPI_SUCCESS) {
        double t_call = MPI_Wtime() - t0;
        printf("rank %d: MPI_File_iwrite_at returned after %.2f s\n", ps_rank, t_call);
        PS_CHECK(t_call < 2.0, "MPI_File_iwrite_at took %.1f s: it is not nonblocking", t_call);
        rc = MPI_Wait(&req, &st);
    }
    expect_io_error(rc, t0, "nonblocking write");

    /* the same through MPI_Waitall, which takes another path in MPICH
     * (the request class's wait function, then the query function) */
    t0 = MPI_Wtime();
    rc = MPI_File_iwrite_at(fh, (MPI_Offset) ps_rank * BS, buf, BS, MPI_BYTE, &req);
    if (rc == MPI_SUCCESS) {
        MPI_Status sts[1];
        int cls;
        rc = MPI_Waitall(1, &req, sts);
        MPI_Error_class(rc, &cls);
        if (cls == MPI_ERR_IN_STATUS)
            rc = sts[0].MPI_ERROR;
        MPI_Error_class(rc, &cls);
        printf("rank %d: MPI_Waitall on a failed write: class %d after %.1f s\n", ps_rank, cls,
               MPI_Wtime() - t0);
        PS_CHECK(rc != MPI_SUCCESS, "MPI_Waitall: the failed write reports success");
        PS_CHECK(MPI_Wtime() - t0 <= limit, "MPI_Waitall took more than %.0f s", limit);
    } else {
        expect_io_error(rc, t0, "nonblocking write (Waitall)");
    }

    t0 = MPI_Wtime();
    rc = MPI_File_write_at_all(fh, (MPI_Offset) ps_rank * BS, buf, BS, MPI_BYTE, &st);
    expect_failed_write(fh, rc, t0, "collective write");

    /* a nonblocking collective write: returns at once, fails in MPI_Wait */
    t0 = MPI_Wtime();
    rc = MPI_File_iwrite_at_all(fh, (MPI_Offset) ps_rank * BS, buf, BS, MPI_BYTE, &req);
    if (rc == MPI_SUCCESS) {
        double t_call = MPI_Wtime() - t0;
        printf("rank %d: MPI_File_iwrite_at_all returned after %.2f s\n", ps_rank, t_call);
        PS_CHECK(t_call < 2.0, "MPI_File_iwrite_at_all took %.1f s: it is not nonblocking",
                 t_call);
        rc = MPI_Wait(&req, &st);
    }
    expect_io_error(rc, t0, "nonblocking collective write");

    if (!PS_OMPIO)
        sends_by_set_view(fh, buf);

    /* small writes are kept by the driver's write-behind (they succeed);
     * the sync that flushes them must fail, and the close again */
    for (iter = 0; iter < 16; iter++) {
        rc = MPI_File_write_at(fh, (MPI_Offset) iter * 65536 + ps_rank * 64, buf, 64, MPI_BYTE,
                               &st);
        if (rc != MPI_SUCCESS)
            break;
    }
    t0 = MPI_Wtime();
    if (rc == MPI_SUCCESS)
        rc = MPI_File_sync(fh);
    expect_io_error(rc, t0, "sync of buffered small writes");
    /* so are small collective writes of ranges that do not interleave
     * (independent I/O, each process its own piece, with romio_cb_write
     * automatic): they succeed, and the sync that flushes them fails */
    if (!PS_OMPIO) {
        MPI_Info auto_cb;

        MPI_Info_create(&auto_cb);
        MPI_Info_set(auto_cb, "romio_cb_write", "automatic");
        PS_MPI(MPI_File_set_info(fh, auto_cb));
        MPI_Info_free(&auto_cb);
        for (iter = 0; iter < 4; iter++) {
            rc = MPI_File_write_at_all(fh, (MPI_Offset) iter * 65536 + ps_rank * 64, buf, 64,
                                       MPI_BYTE, &st);
            PS_CHECK(rc == MPI_SUCCESS, "a small collective write of its own range failed at "
                     "once: not buffered");
        }
        t0 = MPI_Wtime();
        expect_io_error(MPI_File_sync(fh), t0, "sync of buffered small collective writes");
    }
    if (!PS_OMPIO)
        one_flush_fails(fh, buf);
    t0 = MPI_Wtime();
    rc = MPI_File_close(&fh);
    expect_io_error(rc, t0, PS_OMPIO ? "close after failed writes" : "close after a failed flush");
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0)
        printf("ps_kill: %d processes: PASS\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

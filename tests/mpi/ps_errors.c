/*
 * ps_errors: the errors a program sees, and that they are MPI errors with
 * the right class (never a crash or a hang).
 *
 * On every file system: opening a missing file, exclusive create of an
 * existing one, writing a read-only file, reading a write-only one,
 * deleting a missing file, delete-on-close, a bad access mode.
 * MPI_MODE_SEQUENTIAL refuses explicit offsets (ps_shared tests its use).
 * On pstripe only: a bad hint value is ignored (ps_hints checks what it
 * gives); a hint that differs between processes is
 * MPI_ERR_NOT_SAME, naming the hint; the error strings name pstripe and
 * the reason; a file
 * removed while open fails the handle's next accesses with
 * MPI_ERR_NO_SUCH_FILE.
 *
 * Failed reads and writes (past 16 TiB, of a removed file) fail their MPI
 * call under both MPIs, through the file's error handler once, a
 * collective one on every process with the failure's class; a nonblocking
 * one at its start or in MPI_Wait, a split one at its end; the sync after
 * them succeeds. Under Open MPI the preloaded hooks library (which `pstripe
 * run` and mpi-tests load) returns the failures OMPIO drops.
 *
 * Built with Open MPI (OMPIO and the components of adio/ompio), the checks
 * where OMPIO differs from ROMIO by design check what OMPIO does instead:
 * a collective write to a read-only file fails only on the processes that
 * write (OMPIO checks the mode itself), and the file is unchanged; explicit
 * offsets in sequential mode are not refused (the read returns the file's
 * bytes). Differing hints in MPI_File_set_info are refused under both
 * (under Open MPI by the hooks library).
 *
 * With PSTRIPE_TEST_BUSY=1 (tests/tools/mv.sh), FILENAME is instead a
 * pstripe name left "being renamed" by a rename between servers: only
 * checks that MPI_File_delete fails with MPI_ERR_FILE_IN_USE saying so,
 * and that the file still opens.
 *
 * Usage: ps_errors FILENAME
 */
#include "pstest.h"
#include <unistd.h>

#ifdef OPEN_MPI
#define PS_OMPIO 1
#else
#define PS_OMPIO 0
#endif

#define N 100000

static void expect_string(int code, const char *needle)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(code, msg, &len);
    PS_CHECK(strstr(msg, needle) != NULL, "error string \"%s\" does not mention \"%s\"", msg,
             needle);
}

/* The file's romio_pstripe_buffer_count is a number, not bad. */
static void expect_count_not(MPI_File fh, const char *bad)
{
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;

    PS_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, "romio_pstripe_buffer_count", MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    PS_CHECK(flag && atoi(value) > 0 && strcmp(value, bad) != 0,
             "buffer_count shows \"%s\" after the out-of-range hint %s", flag ? value : "", bad);
}

/* The error string names needle exactly once (a path, not "open /f:
 * cannot open /f"). */
static void expect_once(int code, const char *needle)
{
    char msg[MPI_MAX_ERROR_STRING];
    const char *p;
    int len, n = 0;

    MPI_Error_string(code, msg, &len);
    for (p = strstr(msg, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    PS_CHECK(n == 1, "error string \"%s\" names \"%s\" %d times, not once", msg, needle, n);
}

/* Calls of the file error handler set by count_errors. */
static int handler_calls;

static void count_error(MPI_File *fh, int *code, ...)
{
    (void)fh;
    (void)code;
    handler_calls++;
}

/* fh's errors go to count_error (which returns, as MPI_ERRORS_RETURN). */
static void count_errors(MPI_File fh)
{
    MPI_Errhandler eh;

    PS_MPI(MPI_File_create_errhandler(count_error, &eh));
    PS_MPI(MPI_File_set_errhandler(fh, eh));
    MPI_Errhandler_free(&eh);
    handler_calls = 0;
}

/* PSTRIPE_TEST_BUSY: fname is being renamed between servers. */
static int busy_name(const char *fname)
{
    MPI_File fh;
    int rc;

    if (ps_rank == 0) {
        rc = MPI_File_delete(fname, MPI_INFO_NULL);
        PS_MPI_EXPECT(rc, MPI_ERR_FILE_IN_USE);
        expect_string(rc, "is being renamed");
    }
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    PS_MPI(MPI_File_close(&fh));
    if (ps_rank == 0)
        printf("ps_errors: %d processes, a name being renamed: PASS\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    int pstripe = ps_is_pstripe(fname);
    char other[1024];
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;
    unsigned char *buf = malloc(N), *want = malloc(N);
    int rc, cls;

    if (getenv("PSTRIPE_TEST_BUSY") != NULL)
        return busy_name(fname);
    ps_fill(want, N, (uint64_t) ps_rank * N, 7);

    /* a missing file */
    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI_EXPECT(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                  MPI_ERR_NO_SUCH_FILE);
    rc = MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    PS_MPI_EXPECT(rc, MPI_ERR_NO_SUCH_FILE);
    if (pstripe) {
        /* on every process: the reason, not only which process failed */
        expect_once(rc, strchr(fname, ':') + 1);
        expect_string(rc, "no such file");
    }

    /* exclusive create: first works, second fails on every process */
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    PS_MPI(MPI_File_write_at_all(fh, (MPI_Offset) ps_rank * N, want, N, MPI_BYTE, &st));
    {
        /* a read far past the end of file, past any server's objects too:
         * nothing read, no error (it was "file too large") */
        int n = -1;
        PS_MPI(MPI_File_read_at(fh, (MPI_Offset)1 << 50, buf, 100, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &n);
        PS_CHECK(n == 0, "a read at 2^50 of a %d-byte file read %d bytes", ps_nprocs * N, n);
    }
    if (pstripe && PS_OMPIO && ps_nprocs > 1) {
        /* the components' preallocate: sizes that differ are refused on
         * every process, and nothing changes */
        MPI_Offset size;

        rc = MPI_File_preallocate(fh, (MPI_Offset) ps_nprocs * N + 1000 * ps_rank);
        PS_MPI_EXPECT(rc, MPI_ERR_NOT_SAME);
        expect_string(rc, "not the same on every process");
        PS_MPI(MPI_File_get_size(fh, &size));
        PS_CHECK(size == (MPI_Offset) ps_nprocs * N, "size %lld after a refused preallocate",
                 (long long) size);
    }
    if (pstripe && PS_OMPIO) {
        /* a negative size names itself, not an earlier call's failure */
        PS_MPI_EXPECT(MPI_File_preallocate(fh, (MPI_Offset)1 << 50), MPI_ERR_IO);
        rc = MPI_File_preallocate(fh, -7);
        PS_MPI_EXPECT(rc, MPI_ERR_ARG);
        expect_string(rc, "the size -7 is negative");
        rc = MPI_File_set_size(fh, -1);
        PS_MPI_EXPECT(rc, MPI_ERR_ARG);
        expect_string(rc, "the size -1 is negative");
    }
    PS_MPI(MPI_File_close(&fh));
    rc = MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                       MPI_INFO_NULL, &fh);
    PS_MPI_EXPECT(rc, MPI_ERR_FILE_EXISTS);
    if (pstripe) {
        expect_once(rc, strchr(fname, ':') + 1);
        expect_string(rc, "exists");
    }

    /* read-only: reads work, writes fail */
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    PS_MPI(MPI_File_read_at(fh, (MPI_Offset) ps_rank * N, buf, N, MPI_BYTE, &st));
    ps_compare(buf, want, N, "read of a read-only file");
    PS_MPI_EXPECT(MPI_File_write_at(fh, 0, want, 10, MPI_BYTE, &st), MPI_ERR_READ_ONLY);
    rc = MPI_File_write_at_all(fh, 0, want, 10, MPI_BYTE, &st);
    if (!PS_OMPIO) {
        PS_MPI_EXPECT(rc, MPI_ERR_READ_ONLY);
    } else {
        /* OMPIO: refused (MPI_ERR_READ_ONLY) on the processes that write,
         * or, with its vulcan fcoll (chosen for 4 processes here), the
         * aggregators' refusal is printed and dropped: MPI_SUCCESS
         * everywhere. Either way no byte changes (checked below). */
        int failed = (rc != MPI_SUCCESS), nfailed = 0;

        if (failed) {
            MPI_Error_class(rc, &cls);
            PS_CHECK(cls == MPI_ERR_READ_ONLY, "OMPIO: collective write to a read-only file: "
                     "class %d, not MPI_ERR_READ_ONLY", cls);
        }
        MPI_Allreduce(&failed, &nfailed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (ps_rank == 0)
            printf("ps_errors: OMPIO: collective write to a read-only file refused on %d of %d "
                   "processes\n", nfailed, ps_nprocs);
    }
    PS_MPI(MPI_File_read_at_all(fh, (MPI_Offset) ps_rank * N, buf, N, MPI_BYTE, &st));
    ps_compare(buf, want, N, "read-only file after the refused writes");
    PS_MPI(MPI_File_close(&fh));

    /* write-only: writes work, reads fail */
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    ps_fill(want, N, (uint64_t) ps_rank * N, 8);
    PS_MPI(MPI_File_write_at(fh, (MPI_Offset) ps_rank * N, want, N, MPI_BYTE, &st));
    PS_MPI_EXPECT(MPI_File_read_at(fh, 0, buf, 10, MPI_BYTE, &st), MPI_ERR_ACCESS);
    PS_MPI(MPI_File_close(&fh));
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    PS_MPI(MPI_File_read_at(fh, (MPI_Offset) ps_rank * N, buf, N, MPI_BYTE, &st));
    ps_compare(buf, want, N, "read back of a write-only open's data");
    PS_MPI(MPI_File_close(&fh));

    /* bad access mode */
    PS_MPI_EXPECT(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY | MPI_MODE_RDWR,
                                MPI_INFO_NULL, &fh), MPI_ERR_AMODE);

    /* names that are no file: MPI_ERR_BAD_FILE ("invalid file name", as
     * ufs's open of "/" is), under both MPIs (MPICH took a relative name
     * from the root; both said MPI_ERR_ARG before session 74) */
    if (pstripe) {
        static const char *const bad[][2] = {
            {"pstripe:ps_errors_relative", "pstripe paths start with '/'"},
            {"pstripe:/", "it names the root, no file"},
            {"pstripe:/..", "it names the root, no file"},
            {"pstripe:/a/b/../../", "it names the root, no file"},
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            rc = MPI_File_open(MPI_COMM_WORLD, bad[i][0], MPI_MODE_CREATE | MPI_MODE_RDWR,
                               MPI_INFO_NULL, &fh);
            PS_MPI_EXPECT(rc, MPI_ERR_BAD_FILE);
            if (ps_rank == 0)
                expect_string(rc, bad[i][1]);
            PS_MPI_EXPECT(MPI_File_delete(bad[i][0], MPI_INFO_NULL), MPI_ERR_BAD_FILE);
        }
    }

    /* a long name (3,000 bytes): its bytes and shared file pointer work
     * (under Open MPI 4.1.4, its lockedfile component's query aborted the
     * program on names of 245 bytes and more; not asked about pstripe
     * files since session 73) */
    if (pstripe) {
        static char longname[3100];
        MPI_Offset pos;

        memset(longname, 'n', 3000);
        ps_fname(longname + 3000, sizeof(longname) - 3000, "", ".long");
        memcpy(longname, fname, strlen(fname));
        longname[strlen(fname)] = '.';
        if (ps_rank == 0)
            MPI_File_delete(longname, MPI_INFO_NULL);
        MPI_Barrier(MPI_COMM_WORLD);
        PS_MPI(MPI_File_open(MPI_COMM_WORLD, longname, MPI_MODE_CREATE | MPI_MODE_RDWR,
                             MPI_INFO_NULL, &fh));
        PS_MPI(MPI_File_write_at(fh, (MPI_Offset) ps_rank * N, want, N, MPI_BYTE, &st));
        PS_MPI(MPI_File_seek_shared(fh, (MPI_Offset) ps_nprocs * N, MPI_SEEK_SET));
        PS_MPI(MPI_File_write_shared(fh, want, 10, MPI_BYTE, &st));
        MPI_Barrier(MPI_COMM_WORLD);
        PS_MPI(MPI_File_get_position_shared(fh, &pos));
        PS_CHECK(pos == (MPI_Offset) ps_nprocs * (N + 10), "shared pointer at %lld after "
                 "%d writes of 10 bytes at %d", (long long) pos, ps_nprocs, ps_nprocs * N);
        PS_MPI(MPI_File_close(&fh));
        PS_MPI(MPI_File_open(MPI_COMM_WORLD, longname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        PS_MPI(MPI_File_read_at(fh, (MPI_Offset) ps_rank * N, buf, N, MPI_BYTE, &st));
        ps_compare(buf, want, N, "a file with a 3,000-byte name");
        PS_MPI(MPI_File_close(&fh));
        MPI_Barrier(MPI_COMM_WORLD);
        if (ps_rank == 0)
            PS_MPI(MPI_File_delete(longname, MPI_INFO_NULL));
    }

    /* under Open MPI, a name that its open would join to the working
     * directory past 4,097 bytes: refused, not a SIGSEGV in its open */
    if (pstripe && PS_OMPIO) {
        static char toolong[4200], cwd[4097];
        size_t n;

        PS_CHECK(getcwd(cwd, sizeof(cwd)) != NULL, "getcwd failed");
        n = 4097 - strlen(cwd) - 3; /* one byte past the limit */
        memset(toolong, 'n', n);
        memcpy(toolong, "pstripe:/", 9);
        toolong[n] = '\0';
        rc = MPI_File_open(MPI_COMM_WORLD, toolong, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh);
        PS_MPI_EXPECT(rc, MPI_ERR_BAD_FILE);
    }

    /* names of 4,095 and 4,096 bytes (pstripe's longest): refused under
     * both MPIs, by MPICH's driver since ROMIO's shared file pointer name
     * needs one shorter (before: the first process failed after the open
     * and the others waited for it for ever) */
    for (int len = 4095; pstripe && len <= 4096; len++) {
        static char longest[4200];

        memset(longest, 'n', 8 + len);
        memcpy(longest, "pstripe:/", 9);
        longest[8 + len] = '\0';
        rc = MPI_File_open(MPI_COMM_WORLD, longest, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh);
        PS_MPI_EXPECT(rc, MPI_ERR_BAD_FILE);
    }

    /* deleting a missing file; delete-on-close */
    ps_fname(other, sizeof(other), fname, ".gone");
    if (ps_rank == 0) {
        MPI_File_delete(other, MPI_INFO_NULL);
        PS_MPI_EXPECT(MPI_File_delete(other, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, other,
                         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    PS_MPI(MPI_File_write_at(fh, (MPI_Offset) ps_rank * N, want, N, MPI_BYTE, &st));
    PS_MPI(MPI_File_read_at(fh, (MPI_Offset) ps_rank * N, buf, N, MPI_BYTE, &st));
    ps_compare(buf, want, N, "delete-on-close file before the close");
    PS_MPI(MPI_File_close(&fh));
    PS_MPI_EXPECT(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                  MPI_ERR_NO_SUCH_FILE);

    /* explicit delete */
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    PS_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0)
        PS_MPI(MPI_File_delete(other, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI_EXPECT(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                  MPI_ERR_NO_SUCH_FILE);

    /* sequential mode: no explicit offsets (the file stays as it is) */
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL,
                         MPI_INFO_NULL, &fh));
    rc = MPI_File_read_at(fh, 0, buf, 10, MPI_BYTE, &st);
    if (!PS_OMPIO) {
        PS_MPI_EXPECT(rc, MPI_ERR_UNSUPPORTED_OPERATION);
    } else {
        unsigned char first[10];

        /* OMPIO does not refuse them: the read gives the file's bytes */
        PS_MPI(rc);
        ps_fill(first, sizeof(first), 0, 8);
        ps_compare(buf, first, sizeof(first), "OMPIO: explicit-offset read in sequential mode");
    }
    PS_MPI(MPI_File_close(&fh));

    if (pstripe) {
        /* a write past the most a server holds (16 TiB per stripe object)
         * fails, independent or collective, with nothing written; OMPIO
         * drops the error (a short count; its collective write even a
         * full count), and the preloaded hooks return it. Reported by the
         * call only: the next MPI_File_sync succeeds. A collective call
         * whose part failed on one process fails on every process, also
         * one that OMPIO aggregated (romio_cb_write enable: an aggregator
         * writes the others' bytes, ROMIO's two-phase alike). */
        MPI_Offset big = ((MPI_Offset) 17 << 40) + (MPI_Offset) ps_rank * 10;
        int got = -1, agg, atomic;

        ps_fname(other, sizeof(other), fname, ".big");
        for (agg = 0; agg < 2; agg++) {
            MPI_Info_create(&info);
            MPI_Info_set(info, "striping_factor", "1");
            MPI_Info_set(info, "romio_pstripe_write_behind", "disable");
            MPI_Info_set(info, "romio_cb_write", agg ? "enable" : "disable");
            PS_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR |
                                 MPI_MODE_DELETE_ON_CLOSE, info, &fh));
            MPI_Info_free(&info);
            count_errors(fh);
            rc = MPI_File_write_at(fh, big, want, 10, MPI_BYTE, &st);
            PS_MPI_EXPECT(rc, MPI_ERR_IO);
            expect_string(rc, "too large");
            PS_CHECK(handler_calls == 1, "the failed write called the file's error handler "
                     "%d times", handler_calls);
            if (PS_OMPIO) {
                MPI_Get_count(&st, MPI_BYTE, &got);
                PS_CHECK(got == 0, "OMPIO: write past 16 TiB reports %d bytes", got);
            }
            PS_MPI(MPI_File_sync(fh));
            rc = MPI_File_write_at_all(fh, big, want, 10, MPI_BYTE, &st);
            PS_MPI_EXPECT(rc, MPI_ERR_IO);
            expect_string(rc, "pstripe");
            PS_CHECK(handler_calls == 2, "the failed collective write called the file's error "
                     "handler %d times", handler_calls - 1);
            PS_MPI(MPI_File_sync(fh));
            /* a nonblocking write, collective or not, also in atomic
             * mode (both drivers write there at its start), fails once:
             * at its start or in MPI_Wait (the MPICH driver's failed start
             * made a request carrying the failure too: ROMIO called the
             * handler twice); a split collective write at its begin or
             * its end, on every process; the sync after each succeeds
             * (OMPIO 4.1 left a failed split call's request pending, and
             * the next sync failed at once with MPI_ERR_OTHER on that
             * process while the others waited in it) */
            for (atomic = 0; atomic < 4; atomic++) {
                static const char *what[] = {"nonblocking collective write",
                                             "nonblocking collective write (atomic mode)",
                                             "nonblocking write (atomic mode)",
                                             "split collective write"};
                MPI_Request req;

                PS_MPI(MPI_File_set_atomicity(fh, atomic == 1 || atomic == 2));
                handler_calls = 0;
                if (atomic < 3) {
                    rc = atomic < 2 ? MPI_File_iwrite_at_all(fh, big, want, 10, MPI_BYTE, &req)
                        : MPI_File_iwrite_at(fh, big, want, 10, MPI_BYTE, &req);
                    if (rc == MPI_SUCCESS)
                        rc = MPI_Wait(&req, &st);
                } else {
                    rc = MPI_File_write_at_all_begin(fh, big, want, 10, MPI_BYTE);
                    if (rc == MPI_SUCCESS)
                        rc = MPI_File_write_at_all_end(fh, want, &st);
                }
                PS_MPI_EXPECT(rc, MPI_ERR_IO);
                /* (ROMIO itself does an atomic-mode MPI_File_iwrite_at of
                 * contiguous bytes, mpi-io/iwrite.c: its completed request
                 * carrying the failure calls the handler, and so does the
                 * failure it then returns) */
                PS_CHECK(handler_calls == 1 || (!PS_OMPIO && atomic == 2 && handler_calls == 2),
                         "%s past 16 TiB: the error handler called %d times", what[atomic],
                         handler_calls);
                PS_MPI(MPI_File_sync(fh));
            }
            PS_MPI(MPI_File_close(&fh));
        }

        /* writes the servers answered before their disk refused them:
         * small regions of the last block below 16 TiB (ext4 holds none
         * of it), buffered by the driver (ROMIO) and staged by the server
         * (40 regions a batch), fail at the close, which has the staged
         * blocks written; or, where the file system holds that block, the
         * bytes are there: never a close that succeeds without them.
         * (OMPIO sends them one by one, refused at once, each failure kept
         * for the close, whose answer Open MPI drops and the preloaded
         * hooks return.) */
        {
            const MPI_Offset last = ((MPI_Offset) 1 << 44) - 4096;
            unsigned char back[10];
            int i, failed, nfailed = 0, lost = 0;

            MPI_Info_create(&info);
            MPI_Info_set(info, "striping_factor", "1");
            PS_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR, info,
                                 &fh));
            MPI_Info_free(&info);
            for (i = 0; i < 40; i++)
                PS_MPI(MPI_File_write_at(fh, last + (MPI_Offset) (i * ps_nprocs + ps_rank) * 20,
                                         want + i, 10, MPI_BYTE, &st));
            rc = MPI_File_close(&fh);
            failed = (rc != MPI_SUCCESS);
            if (failed) {
                MPI_Error_class(rc, &cls);
                PS_CHECK(cls == MPI_ERR_IO, "close after a failed write: class %d", cls);
                expect_string(rc, "too large");
            }
            MPI_Allreduce(&failed, &nfailed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            if (nfailed < ps_nprocs) {  /* then the file system took the block */
                /* (the sync has the servers write what they still stage) */
                PS_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
                MPI_File_sync(fh);
                for (i = 0; i < 40; i++) {
                    PS_MPI(MPI_File_read_at(fh, last + (MPI_Offset) (i * ps_nprocs + ps_rank) *
                                            20, back, 10, MPI_BYTE, &st));
                    lost += memcmp(back, want + i, 10) != 0;
                }
                PS_MPI(MPI_File_close(&fh));
                PS_CHECK(!failed || lost > 0, "close failed, yet the bytes are there");
                PS_CHECK(failed || lost == 0, "close succeeded, %d of 40 writes lost", lost);
            }
            if (ps_rank == 0)
                printf("ps_errors: writes that failed on disk after their answer: close failed "
                       "on %d of %d processes\n", nfailed, ps_nprocs);
            MPI_Barrier(MPI_COMM_WORLD);
            if (ps_rank == 0)
                MPI_File_delete(other, MPI_INFO_NULL);
            MPI_Barrier(MPI_COMM_WORLD);
        }

        /* the same through MPI_File_sync, whose one fsync (ROMIO: by rank
         * 0) knows of rank 0's writes alone: rank 1's small writes of the
         * last block below 16 TiB of the second stripe target's object
         * (4 KiB stripes: file offsets 32 TiB - 4 KiB and up), where rank
         * 0 wrote nothing, fail rank 1's sync, never silently */
        if (ps_nprocs > 1 && !PS_OMPIO) {
            const MPI_Offset base = ((MPI_Offset) 1 << 45) - 4096;
            int i;

            MPI_Info_create(&info);
            MPI_Info_set(info, "striping_factor", "2");
            MPI_Info_set(info, "striping_unit", "4096");
            PS_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR |
                                 MPI_MODE_DELETE_ON_CLOSE, info, &fh));
            MPI_Info_free(&info);
            if (ps_rank == 0)
                PS_MPI(MPI_File_write_at(fh, 0, want, 10, MPI_BYTE, &st));
            for (i = 0; ps_rank == 1 && i < 40; i++)
                PS_MPI(MPI_File_write_at(fh, base + (MPI_Offset) i * 20, want + i, 10, MPI_BYTE,
                                         &st));
            rc = MPI_File_sync(fh);
            if (ps_rank == 1) {
                PS_MPI_EXPECT(rc, MPI_ERR_IO);
                expect_string(rc, "too large");
            } else {
                PS_MPI(rc);
            }
            PS_MPI(MPI_File_close(&fh));        /* reported once: by the sync */
        }

        /* a bad hint value is ignored (with a warning in the log), one
         * that parses but is out of the client's range too (it failed the
         * open under MPICH, and a set_info kept showing it); the same
         * bad value on one process only makes the hints differ */
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_pstripe_buffer_size", "lots");
        MPI_Info_set(info, "romio_pstripe_buffer_count", "100000");
        MPI_Info_set(info, "striping_unit", "0");
        PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, info, &fh));
        expect_count_not(fh, "100000");
        PS_MPI(MPI_File_set_info(fh, info));
        expect_count_not(fh, "100000");
        PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
        PS_MPI(MPI_File_write_at(fh, (MPI_Offset)ps_rank * N, want, N, MPI_BYTE, &st));
        PS_MPI(MPI_File_close(&fh));
        MPI_Info_free(&info);
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_pstripe_listio_write", ps_rank == ps_nprocs - 1 ? "maybe" :
                     "enable");
        rc = MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, info, &fh);
        if (ps_nprocs > 1) {
            PS_MPI_EXPECT(rc, MPI_ERR_NOT_SAME);
        } else {
            PS_MPI(rc);
            PS_MPI(MPI_File_close(&fh));
        }
        MPI_Info_free(&info);

        if (ps_nprocs > 1) {
            char v[32];
            /* different values, and a key only some processes give */
            MPI_Info_create(&info);
            snprintf(v, sizeof(v), "%d", 1 + ps_rank);
            MPI_Info_set(info, "striping_factor", v);
            rc = MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, info, &fh);
            PS_MPI_EXPECT(rc, MPI_ERR_NOT_SAME);
            if (!PS_OMPIO)
                expect_string(rc, "hint striping_factor not the same");
            MPI_Info_free(&info);
            MPI_Info_create(&info);
            snprintf(v, sizeof(v), "%d", 100 + ps_rank);
            MPI_Info_set(info, "romio_pstripe_max_regions", v);
            PS_MPI_EXPECT(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, info, &fh),
                          MPI_ERR_NOT_SAME);
            MPI_Info_free(&info);
            MPI_Info_create(&info);
            if (ps_rank == 0)
                MPI_Info_set(info, "romio_pstripe_buffer_count", "2");
            PS_MPI_EXPECT(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, info, &fh),
                          MPI_ERR_NOT_SAME);
            MPI_Info_free(&info);

            /* the same through MPI_File_set_info on an open file */
            PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
            MPI_Info_create(&info);
            snprintf(v, sizeof(v), "%d", 1 + ps_rank);
            MPI_Info_set(info, "romio_pstripe_buffer_count", v);
            rc = MPI_File_set_info(fh, info);
            MPI_Error_class(rc, &cls);
            PS_CHECK(cls == MPI_ERR_NOT_SAME, "set_info with differing hints: class %d", cls);
            if (PS_OMPIO)
                expect_string(rc, "hint romio_pstripe_buffer_count differs");
            /* the file goes on with the hints it had */
            PS_MPI(MPI_File_write_at(fh, (MPI_Offset) ps_rank * N, want, N, MPI_BYTE, &st));
            MPI_Info_free(&info);
            PS_MPI(MPI_File_close(&fh));
        }
    }

    if (pstripe) {
        /* a file removed while open (here by MPI_File_delete, as another
         * program's `pstripe rm` would): the handle's next writes and reads
         * fail with MPI_ERR_NO_SUCH_FILE (a buffered write at the flush,
         * MPI_File_sync), never recreate the file's data on the servers
         * nor read zeros; the close returns (its error, if any, the same) */
        ps_fname(other, sizeof(other), fname, ".gone");
        PS_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR,
                             MPI_INFO_NULL, &fh));
        PS_MPI(MPI_File_write_at(fh, (MPI_Offset) ps_rank * N, want, N, MPI_BYTE, &st));
        PS_MPI(MPI_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        if (ps_rank == 0)
            PS_MPI(MPI_File_delete(other, MPI_INFO_NULL));
        MPI_Barrier(MPI_COMM_WORLD);
        rc = MPI_File_write_at(fh, (MPI_Offset) ps_rank * N, want, 4096, MPI_BYTE, &st);
        if (rc == MPI_SUCCESS)
            rc = MPI_File_sync(fh);
        PS_MPI_EXPECT(rc, MPI_ERR_NO_SUCH_FILE);
        expect_string(rc, "removed while open");
        /* (OMPIO drops a blocking access's error: the hooks return it) */
        rc = MPI_File_read_at(fh, (MPI_Offset) ps_rank * N, buf, N, MPI_BYTE, &st);
        PS_MPI_EXPECT(rc, MPI_ERR_NO_SUCH_FILE);
        if (PS_OMPIO) {
            int got = -1;

            MPI_Get_count(&st, MPI_BYTE, &got);
            PS_CHECK(got == 0, "OMPIO: read of a removed file reports %d bytes", got);
        }
        /* a collective read fails on every process, with the class of
         * the failure, also where OMPIO's aggregator reads the others'
         * bytes (romio_cb_read enable) */
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_cb_read", "enable");
        rc = MPI_File_set_info(fh, info);
        MPI_Info_free(&info);
        if (rc == MPI_SUCCESS) {
            rc = MPI_File_read_at_all(fh, (MPI_Offset) ps_rank * 100, buf, 100, MPI_BYTE, &st);
            PS_MPI_EXPECT(rc, MPI_ERR_NO_SUCH_FILE);
        }
        rc = MPI_File_close(&fh);
        if (rc != MPI_SUCCESS)
            PS_MPI_EXPECT(rc, MPI_ERR_NO_SUCH_FILE);
        MPI_Barrier(MPI_COMM_WORLD);
        PS_MPI_EXPECT(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                      MPI_ERR_NO_SUCH_FILE);
    }

    /* the file is intact after all this */
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    PS_MPI(MPI_File_read_at_all(fh, (MPI_Offset) ps_rank * N, buf, N, MPI_BYTE, &st));
    ps_compare(buf, want, N, "final read");
    PS_MPI(MPI_File_close(&fh));

    free(buf);
    free(want);
    if (ps_rank == 0)
        printf("ps_errors: %d processes: PASS\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

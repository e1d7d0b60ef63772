/*
 * ps_perm: what an MPI program of another user sees on a file it may not
 * use (issue 13): MPI_ERR_ACCESS, never a crash, a hang or data.
 *
 *   ps_perm FILENAME denied    FILENAME may be neither read nor written:
 *                              every open mode and MPI_File_delete fail with
 *                              MPI_ERR_ACCESS; the program may still create,
 *                              write, read and delete a file of its own
 *                              (FILENAME.mine).
 *   ps_perm FILENAME readonly  FILENAME may be read, not written: RDONLY
 *                              opens and reads its whole size, RDWR and
 *                              WRONLY fail with MPI_ERR_ACCESS.
 *
 * Run by tests/tools/perm.sh as uid 65534 on a file of root's.
 */
#include "pstest.h"

#define N 65536

static void expect_refused(const char *fname, int amode, const char *what)
{
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, fname, amode, MPI_INFO_NULL, &fh), cls = MPI_SUCCESS;

    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    else
        MPI_File_close(&fh);
    PS_CHECK(cls == MPI_ERR_ACCESS, "open %s: expected MPI_ERR_ACCESS, got class %d", what, cls);
}

static void own_file(const char *fname)
{
    char mine[1024];
    unsigned char *buf = malloc(N), *want = malloc(N);
    MPI_File fh;
    MPI_Status st;

    ps_fname(mine, sizeof(mine), fname, ".mine");
    ps_fill(want, N, (uint64_t) ps_rank * N, 3);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, mine, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    PS_MPI(MPI_File_write_at_all(fh, (MPI_Offset) ps_rank * N, want, N, MPI_BYTE, &st));
    PS_MPI(MPI_File_read_at_all(fh, (MPI_Offset) ps_rank * N, buf, N, MPI_BYTE, &st));
    ps_compare(buf, want, N, "own file");
    PS_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0)
        PS_MPI(MPI_File_delete(mine, MPI_INFO_NULL));
    free(buf);
    free(want);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    const char *mode = argc > 2 ? argv[argc - 1] : "";
    MPI_File fh;
    MPI_Offset size;
    MPI_Status st;
    int cls = MPI_SUCCESS, rc;

    if (strcmp(mode, "denied") == 0) {
        expect_refused(fname, MPI_MODE_RDONLY, "read-only");
        expect_refused(fname, MPI_MODE_RDWR, "read-write");
        expect_refused(fname, MPI_MODE_WRONLY, "write-only");
        MPI_Barrier(MPI_COMM_WORLD);
        if (ps_rank == 0) {
            rc = MPI_File_delete(fname, MPI_INFO_NULL);
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            PS_CHECK(cls == MPI_ERR_ACCESS, "delete: expected MPI_ERR_ACCESS, got class %d", cls);
        }
        own_file(fname);
    } else if (strcmp(mode, "readonly") == 0) {
        PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        PS_MPI(MPI_File_get_size(fh, &size));
        PS_CHECK(size > 0, "size %lld", (long long) size);
        unsigned char *buf = malloc((size_t) size);
        PS_MPI(MPI_File_read_at_all(fh, 0, buf, (int) size, MPI_BYTE, &st));
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        PS_CHECK(count == (int) size, "read %d of %lld bytes", count, (long long) size);
        free(buf);
        PS_MPI(MPI_File_close(&fh));
        expect_refused(fname, MPI_MODE_RDWR, "read-write");
        expect_refused(fname, MPI_MODE_WRONLY, "write-only");
    } else {
        if (ps_rank == 0)
            fprintf(stderr, "usage: ps_perm FILENAME denied|readonly\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (ps_rank == 0)
        printf("ps_perm: %d processes, %s: PASS\n", ps_nprocs, mode);
    MPI_Finalize();
    return 0;
}

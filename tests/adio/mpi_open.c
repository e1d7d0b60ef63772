/*
 * mpi_open FILE: open FILE collectively (create, read-write), write one
 * 4 KiB block per rank at offset rank * 4096, read it back, close.
 *
 * Prints on rank 0 "open ok size=BYTES" when all went well; else each rank
 * that failed prints "open failed: CALL: CLASS: MESSAGE" (the error class
 * name and MPI_Error_string of its first failing call), and all exit 1. With "pstripe:" names this tells
 * whether ROMIO handed the file to the pstripe driver: only the driver's
 * errors begin with "pstripe: "; an MPICH without it says the file system is
 * not supported.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define BLOCK 4096

static const char *class_name(int cls)
{
    switch (cls) {
        case MPI_ERR_IO: return "MPI_ERR_IO";
        case MPI_ERR_NO_SUCH_FILE: return "MPI_ERR_NO_SUCH_FILE";
        case MPI_ERR_FILE_EXISTS: return "MPI_ERR_FILE_EXISTS";
        case MPI_ERR_ACCESS: return "MPI_ERR_ACCESS";
        case MPI_ERR_NO_SPACE: return "MPI_ERR_NO_SPACE";
        case MPI_ERR_BAD_FILE: return "MPI_ERR_BAD_FILE";
        case MPI_ERR_ARG: return "MPI_ERR_ARG";
        case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION";
        default: return "other";
    }
}

static int report(const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING];
    int cls, len;

    MPI_Error_class(err, &cls);
    MPI_Error_string(err, msg, &len);
    printf("open failed: %s: %s: %s\n", what, class_name(cls), msg);
    return 1;
}

/* Whether any rank failed (the calls are collective: all go on or none). */
static int any(int bad)
{
    int all;

    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv)
{
    char out[BLOCK], in[BLOCK];
    MPI_File fh;
    MPI_Offset size = 0;
    int rank, err, bad = 0, allbad;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_open FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    err = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &fh);
    if (err != MPI_SUCCESS) {
        report("MPI_File_open", err);
        MPI_Finalize();
        return 1;
    }
    memset(out, 'a' + rank % 26, sizeof(out));
    err = MPI_File_write_at_all(fh, (MPI_Offset) rank * BLOCK, out, BLOCK, MPI_BYTE,
                                MPI_STATUS_IGNORE);
    if (err != MPI_SUCCESS)
        bad = report("MPI_File_write_at_all", err);
    if (!any(bad)) {
        err = MPI_File_read_at_all(fh, (MPI_Offset) rank * BLOCK, in, BLOCK, MPI_BYTE,
                                   MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS) {
            bad = report("MPI_File_read_at_all", err);
        } else if (memcmp(in, out, BLOCK) != 0) {
            printf("open failed: rank %d: data read back differs from data written\n", rank);
            bad = 1;
        }
    }
    if (!bad && (err = MPI_File_get_size(fh, &size)) != MPI_SUCCESS)
        bad = report("MPI_File_get_size", err);
    err = MPI_File_close(&fh);
    if (err != MPI_SUCCESS)
        bad = report("MPI_File_close", err);
    allbad = any(bad);
    if (rank == 0 && !allbad)
        printf("open ok size=%lld\n", (long long) size);
    MPI_Finalize();
    return allbad ? 1 : 0;
}

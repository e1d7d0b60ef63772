/*
 * ps_noclose: a program that does not close its file before MPI_Finalize.
 *
 * MPI requires every file closed before MPI_Finalize; programs forget it,
 * and on a POSIX file system their writes are there all the same. Each
 * process writes 200 small pieces of its own area, reads them back, writes
 * 200 more over their halves and the gaps (left in the driver's
 * write-behind buffer), and finalizes with the file open. mpi-tests compares the file on pstripe with the same program's on
 * ufs: the buffered writes must have reached the servers.
 *
 * A second file is removed while open, then written to (buffered) and
 * given a view, whose flush fails on pstripe (the file is gone), and is
 * left open too: MPI_Finalize reports its lost writes, and a callback of
 * MPI_COMM_SELF set before any open then closes it, as HDF5 closes its
 * files, and that close must succeed (HDF5 1.10.8 crashed in its
 * termination when it failed).
 *
 * Built with Open MPI: MPI_Finalize closes the files left open itself
 * (OMPIO); the removed one's flush fails and is printed, and the close in
 * the callback succeeds (the preloaded hooks' close, inside MPI_Finalize).
 */
#include "pstest.h"

#define PIECE 24
#define STEP 40
#define NPIECES 200

/* The removed file, and how its close at MPI_Finalize went. */
static MPI_File gone = MPI_FILE_NULL;
static int gone_close_rc = MPI_SUCCESS;
static char gone_close_msg[MPI_MAX_ERROR_STRING];

/* MPI_COMM_SELF's delete callback at MPI_Finalize. */
static int close_gone(MPI_Comm comm, int keyval, void *val, void *extra)
{
    int len = 0;

    (void) comm;
    (void) keyval;
    (void) val;
    (void) extra;
    if (gone != MPI_FILE_NULL)
        gone_close_rc = MPI_File_close(&gone);
    if (gone_close_rc != MPI_SUCCESS)
        MPI_Error_string(gone_close_rc, gone_close_msg, &len);
    return MPI_SUCCESS;
}

/* Open fname's ".gone" file, remove it, write to it and set a view: the
 * flush there fails on pstripe, and its error stays for the close (by
 * close_gone, set on MPI_COMM_SELF before the driver's own callback, so
 * run after it: callbacks go in the reverse order). */
static void write_removed_file(const char *fname)
{
    unsigned char buf[PIECE];
    char name[4096];
    MPI_Status st;
    int i, rc;

    ps_fname(name, sizeof(name), fname, ".gone");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &gone));
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0)
        PS_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    for (i = 0; i < 16; i++) {
        ps_fill(buf, PIECE, (uint64_t) i, 7);
        PS_MPI(MPI_File_write_at(gone, ((MPI_Offset) ps_rank * 16 + i) * STEP, buf, PIECE,
                                 MPI_BYTE, &st));
    }
    rc = MPI_File_set_view(gone, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
#ifdef OPEN_MPI
    /* (Open MPI's hooks flush before set_view and keep a failure for the
     * file's sync or close) */
    (void) rc;
#else
    if (ps_is_pstripe(fname))
        PS_CHECK(rc != MPI_SUCCESS, "set_view of a removed file flushed its writes without error");
#endif
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    int keyval;
    unsigned char buf[PIECE], want[PIECE];
    MPI_Offset off;
    MPI_Status st;
    MPI_File fh;
    int i;

    PS_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, close_gone, &keyval, NULL));
    PS_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL));
    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    write_removed_file(fname);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    for (i = 0; i < NPIECES; i++) {
        off = ((MPI_Offset) ps_rank * NPIECES + i) * STEP;
        ps_fill(buf, PIECE, (uint64_t) off, 5);
        PS_MPI(MPI_File_write_at(fh, off, buf, PIECE, MPI_BYTE, &st));
    }
    for (i = 0; i < NPIECES; i++) {
        off = ((MPI_Offset) ps_rank * NPIECES + i) * STEP;
        PS_MPI(MPI_File_read_at(fh, off, buf, PIECE, MPI_BYTE, &st));
        ps_fill(want, PIECE, (uint64_t) off, 5);
        ps_compare(buf, want, PIECE, "own write, read back");
    }
    /* a second round, left in the buffer (a read would flush it) */
    for (i = 0; i < NPIECES; i++) {
        off = ((MPI_Offset) ps_rank * NPIECES + i) * STEP + PIECE / 2;
        ps_fill(buf, PIECE, (uint64_t) off, 6);
        PS_MPI(MPI_File_write_at(fh, off, buf, PIECE, MPI_BYTE, &st));
    }
    MPI_Finalize();     /* no MPI_File_close: the point of the test */
    if (gone_close_rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: the close of the removed file from MPI_COMM_SELF's callback "
                "at MPI_Finalize failed: %s\n", ps_rank, gone_close_msg);
        return 1;
    }
    if (ps_rank == 0)
        printf("ps_noclose: %d processes, %d writes each, files left open: PASS\n", ps_nprocs,
               NPIECES);
    return 0;
}

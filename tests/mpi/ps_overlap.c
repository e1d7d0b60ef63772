/*
 * ps_overlap: collective reads through a view whose filetype's blocks
 * overlap (MPI allows it for a file opened read-only), starting inside the
 * first block, so that the access's regions go back in the file. MPICH
 * only: Open MPI refuses such a filetype in MPI_File_set_view.
 *
 * Each process's filetype is two blocks of BLK bytes, the second SHIFT
 * bytes after the first, in a tile of BLK + SHIFT bytes; its view starts
 * at its own place in the file, or (every other case) at the same place
 * for all processes, so that their accesses interleave. Every case is read
 * with MPI_File_read_at_all from an offset inside the first block and
 * with MPI_File_read_all after MPI_File_seek to it, with romio_cb_read
 * enable (aggregated), automatic and disable, on pstripe; on ufs with
 * disable only and romio_ds_read disable (on such a view ROMIO's own
 * two-phase aborts, "Error in ADIOI_Calc_aggregator", and its data sieving
 * reads wrong bytes: MPICH 4.0.2). The blocks are larger than a round of two-phase
 * I/O and than a stripe (ps_test_info), so a later region of an access
 * falls in an earlier round and below the first region's stripe. Every
 * byte is compared with the file's, and the file pointer with where the
 * access ends.
 *
 * Usage: ps_overlap FILENAME
 */
#include "pstest.h"

#define BLK (1024 * 1024 + 512)
#define SHIFT 4096
#define TILES 3
#define TILE ((MPI_Offset) BLK + SHIFT)
#define INSIDE (BLK - 3000)     /* where the reads start in the view */

static const char *const cb_values[] = { "enable", "automatic", "disable" };

/* Write the whole file, one pattern, from rank 0. */
static MPI_Offset write_file(const char *fname)
{
    MPI_Offset size = (TILES + 1) * TILE * ps_nprocs;
    unsigned char *buf = malloc((size_t) size);
    MPI_Info info = ps_test_info();
    MPI_File fh;

    PS_CHECK(buf != NULL, "out of memory");
    ps_fill(buf, (size_t) size, 0, 41);
    MPI_File_delete(fname, MPI_INFO_NULL);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
    if (ps_rank == 0)
        PS_MPI(MPI_File_write_at(fh, 0, buf, (int) size, MPI_BYTE, MPI_STATUS_IGNORE));
    PS_MPI(MPI_File_close(&fh));
    PS_MPI(MPI_Info_free(&info));
    free(buf);
    return size;
}

static MPI_Datatype overlap_type(void)
{
    int lens[2] = { BLK, BLK };
    MPI_Aint disps[2] = { 0, SHIFT };
    MPI_Datatype t, ft;

    PS_MPI(MPI_Type_create_hindexed(2, lens, disps, MPI_BYTE, &t));
    PS_MPI(MPI_Type_create_resized(t, 0, (MPI_Aint) TILE, &ft));
    PS_MPI(MPI_Type_commit(&ft));
    PS_MPI(MPI_Type_free(&t));
    return ft;
}

/* Compare n bytes read from view offset INSIDE with the file's bytes. */
static void check_read(const unsigned char *got, long n, MPI_Offset disp, const char *what)
{
    long k = 0, pos = 0, j;
    int t, b;

    for (t = 0; t <= TILES && k < n; t++)
        for (b = 0; b < 2 && k < n; b++)
            for (j = 0; j < BLK && k < n; j++, pos++) {
                MPI_Offset off = disp + t * TILE + b * SHIFT + j;
                if (pos < INSIDE)
                    continue;
                if (got[k] != ps_byte((uint64_t) off, 41))
                    PS_FAIL("%s: byte %ld (file offset %lld) is 0x%02x, expected 0x%02x", what,
                            k, (long long) off, got[k], ps_byte((uint64_t) off, 41));
                k++;
            }
}

static void read_case(const char *fname, const char *cb, int same)
{
    long n = (long) TILES * 2 * BLK - INSIDE;
    MPI_Offset disp = same ? 0 : ps_rank * TILES * TILE, pos;
    unsigned char *got = malloc((size_t) n);
    MPI_Datatype ft = overlap_type();
    MPI_Info info = ps_test_info();
    MPI_Status st;
    MPI_File fh;
    char what[160];
    int count;

    PS_CHECK(got != NULL, "out of memory");
    PS_MPI(MPI_Info_set(info, "romio_cb_read", cb));
    if (!ps_is_pstripe(fname))
        PS_MPI(MPI_Info_set(info, "romio_ds_read", "disable"));
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, info, &fh));
    PS_MPI(MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", info));

    snprintf(what, sizeof(what), "read_at_all, romio_cb_read %s, %s views", cb,
             same ? "the same" : "separate");
    memset(got, 0, (size_t) n);
    PS_MPI(MPI_File_read_at_all(fh, INSIDE, got, (int) n, MPI_BYTE, &st));
    PS_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    PS_CHECK(count == n, "%s: read %d bytes, not %ld", what, count, n);
    check_read(got, n, disp, what);

    snprintf(what, sizeof(what), "read_all, romio_cb_read %s, %s views", cb,
             same ? "the same" : "separate");
    memset(got, 0, (size_t) n);
    PS_MPI(MPI_File_seek(fh, INSIDE, MPI_SEEK_SET));
    PS_MPI(MPI_File_read_all(fh, got, (int) n, MPI_BYTE, &st));
    check_read(got, n, disp, what);
    PS_MPI(MPI_File_get_position(fh, &pos));
    PS_CHECK(pos == INSIDE + n, "%s: file pointer at %lld, not %lld", what, (long long) pos,
             (long long) (INSIDE + n));

    PS_MPI(MPI_File_close(&fh));
    PS_MPI(MPI_Info_free(&info));
    PS_MPI(MPI_Type_free(&ft));
    free(got);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    int c, same, ncb = ps_is_pstripe(fname) ? 3 : 1;

    write_file(fname);
    for (c = 3 - ncb; c < 3; c++)
        for (same = 0; same < 2; same++)
            read_case(fname, cb_values[c], same);
    if (ps_rank == 0)
        printf("ps_overlap: PASS, %d processes\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

/*
 * ps_hints: hints given at open and with MPI_File_set_info, what
 * MPI_File_get_info shows, and the data paths they select.
 *
 * The file is created with a layout (striping_factor 2, striping_unit
 * 128 KiB, start_iodevice 1), the client tunables of the pstripe hints, and
 * list I/O switched off, so that noncontiguous accesses take ROMIO's
 * data-sieving path (read-modify-write of whole buffers, made safe by the
 * driver's file lock: all processes write interleaved blocks at once).
 * Then list I/O is switched on with MPI_File_set_info and the same is done
 * in another region. On pstripe, get_info must show the effective values:
 * the layout the file really has (also when it is reopened with other
 * layout hints, which apply only at creation), the tunables, the switches.
 *
 * Usage: ps_hints FILENAME
 */
#include "pstest.h"

#define B 4099                  /* bytes per block: not a divisor of anything */
#define NB 64                   /* blocks per process and region */

static void expect_info(MPI_File fh, const char *key, const char *want)
{
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;

    PS_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    PS_CHECK(flag, "get_info has no %s", key);
    PS_CHECK(strcmp(value, want) == 0, "get_info: %s is \"%s\", expected \"%s\"", key, value,
             want);
    MPI_Info_free(&info);
}

/* Rank r writes blocks r, r + P, r + 2P, ... of the region at base, with a
 * vector view, from strided memory; all processes at once; then reads them
 * back and rank 0 checks the whole region. */
static void interleaved(MPI_File fh, MPI_Offset base, unsigned seed, const char *what)
{
    MPI_Datatype ftype, mtype, t;
    MPI_Status st;
    unsigned char *src = malloc(2 * NB * B), *back = malloc(2 * NB * B), *p1, *p2;
    MPI_Offset total = (MPI_Offset) NB * B * ps_nprocs;

    MPI_Type_vector(NB, B, B * ps_nprocs, MPI_BYTE, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint) NB * B * ps_nprocs, &ftype);
    MPI_Type_free(&t);
    MPI_Type_commit(&ftype);
    MPI_Type_vector(NB, B, 2 * B, MPI_BYTE, &mtype);    /* every other block */
    MPI_Type_commit(&mtype);

    ps_fill(src, 2 * NB * B, (uint64_t) ps_rank << 32, seed);
    memset(back, 0, 2 * NB * B);
    PS_MPI(MPI_File_set_view(fh, base + (MPI_Offset) ps_rank * B, MPI_BYTE, ftype, "native",
                             MPI_INFO_NULL));
    PS_MPI(MPI_File_write_at(fh, 0, src, 1, mtype, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_read_at(fh, 0, back, 1, mtype, &st));
    p1 = ps_pack(src, 1, mtype);
    p2 = ps_pack(back, 1, mtype);
    ps_compare(p2, p1, (size_t) NB * B, what);
    free(p1);
    free(p2);

    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0) {
        unsigned char *whole = malloc(total), *want = malloc(total), *s = malloc(2 * NB * B);
        int q, k;
        for (q = 0; q < ps_nprocs; q++) {
            ps_fill(s, 2 * NB * B, (uint64_t) q << 32, seed);
            for (k = 0; k < NB; k++)
                memcpy(want + ((MPI_Offset) k * ps_nprocs + q) * B, s + (size_t) 2 * k * B, B);
        }
        PS_MPI(MPI_File_read_at(fh, base, whole, (int) total, MPI_BYTE, &st));
        ps_compare(whole, want, total, what);
        free(whole);
        free(want);
        free(s);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
    free(src);
    free(back);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    int pstripe = ps_is_pstripe(fname);
    MPI_Offset region = (MPI_Offset) NB * B * ps_nprocs;
    MPI_File fh;
    MPI_Info info;
    char other[1024], value[MPI_MAX_INFO_VAL + 1];
    int flag;

    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_factor", "2");
    MPI_Info_set(info, "striping_unit", "131072");
    MPI_Info_set(info, "start_iodevice", "1");
    MPI_Info_set(info, "romio_pstripe_buffer_size", "2m");
    MPI_Info_set(info, "romio_pstripe_buffer_count", "3");
    MPI_Info_set(info, "romio_pstripe_max_regions", "1000");
    MPI_Info_set(info, "romio_pstripe_listio_read", "disable");
    MPI_Info_set(info, "romio_pstripe_listio_write", "disable");
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "ind_wr_buffer_size", "65536");
    MPI_Info_set(info, "ind_rd_buffer_size", "65536");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);

    expect_info(fh, "cb_buffer_size", "1048576");
    if (pstripe) {
        expect_info(fh, "striping_factor", "2");
        expect_info(fh, "striping_unit", "131072");
        expect_info(fh, "start_iodevice", "1");
        expect_info(fh, "romio_pstripe_buffer_size", "2097152");
        expect_info(fh, "romio_pstripe_buffer_count", "3");
        expect_info(fh, "romio_pstripe_max_regions", "1000");
        expect_info(fh, "romio_pstripe_listio_read", "disable");
        expect_info(fh, "romio_pstripe_listio_write", "disable");
        PS_MPI(MPI_File_get_info(fh, &info));
        MPI_Info_get(info, "romio_filesystem_type", MPI_MAX_INFO_VAL, value, &flag);
        PS_CHECK(flag && strstr(value, "PSTRIPE"), "romio_filesystem_type is \"%s\"",
                 flag ? value : "(none)");
        MPI_Info_free(&info);
    }

    /* data sieving (generic path), every process at once */
    interleaved(fh, 0, 1, "data-sieving writes of interleaved blocks");

    /* list I/O on again */
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_pstripe_listio_read", "enable");
    MPI_Info_set(info, "romio_pstripe_listio_write", "enable");
    MPI_Info_set(info, "romio_pstripe_buffer_size", "65536");
    PS_MPI(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    if (pstripe) {
        expect_info(fh, "romio_pstripe_listio_read", "enable");
        expect_info(fh, "romio_pstripe_listio_write", "enable");
        expect_info(fh, "romio_pstripe_buffer_size", "65536");
        expect_info(fh, "striping_unit", "131072");
    }
    interleaved(fh, region, 2, "list I/O writes of interleaved blocks");
    PS_MPI(MPI_File_close(&fh));

    /* layout hints apply at creation only: a reopen shows the real layout */
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_factor", "1");
    MPI_Info_set(info, "striping_unit", "1048576");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    if (pstripe) {
        expect_info(fh, "striping_factor", "2");
        expect_info(fh, "striping_unit", "131072");
        expect_info(fh, "start_iodevice", "1");
        expect_info(fh, "romio_pstripe_listio_write", "enable");
    }
    interleaved(fh, 2 * region, 3, "list I/O writes after a reopen");
    PS_MPI(MPI_File_close(&fh));

    /* a file with the default layout: the info shows a real layout */
    ps_fname(other, sizeof(other), fname, ".default");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR |
                         MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    if (pstripe) {
        PS_MPI(MPI_File_get_info(fh, &info));
        MPI_Info_get(info, "striping_unit", MPI_MAX_INFO_VAL, value, &flag);
        PS_CHECK(flag && atoi(value) > 0, "default striping_unit \"%s\"", flag ? value : "");
        MPI_Info_get(info, "striping_factor", MPI_MAX_INFO_VAL, value, &flag);
        PS_CHECK(flag && atoi(value) > 0, "default striping_factor \"%s\"", flag ? value : "");
        MPI_Info_get(info, "romio_pstripe_buffer_size", MPI_MAX_INFO_VAL, value, &flag);
        PS_CHECK(flag && atoi(value) > 0, "default buffer_size \"%s\"", flag ? value : "");
        MPI_Info_free(&info);
    }
    PS_MPI(MPI_File_close(&fh));

    if (ps_rank == 0)
        printf("ps_hints: %d processes: PASS\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

/*
 * ps_coll3d: a 3-D array of doubles, block-distributed over a 3-D process
 * grid, written collectively through a subarray file view from local
 * arrays that carry ghost cells (a subarray memory type), and read back.
 *
 * Pass 1 forces two-phase collective buffering (romio_cb_write/read
 * enable; on pstripe its read has one aggregator per stripe, at most one
 * per process); pass 2 rewrites the array with other values and collective
 * buffering disabled (independent list I/O), then reads it collectively
 * with the aggregators the hints name (cb_nodes, given by rank 0 alone:
 * ROMIO's list, on every process).
 * Each pass checks: the interior read back collectively and independently,
 * ghost cells untouched, and the whole file (read in contiguous slabs)
 * equal to the global array in C order, which does not depend on the
 * number of processes.
 *
 * Usage: ps_coll3d FILENAME
 */
#include "pstest.h"

#define NX 96
#define NY 80
#define NZ 72
#define GHOST 1
#define SENTINEL -7.25

static double value(int pass, int i, int j, int k)
{
    return (double) (((long) i * NY + j) * NZ + k) + 0.25 + pass * 1.0e7;
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    int gsizes[3] = { NX, NY, NZ }, dims[3] = { 0, 0, 0 }, periods[3] = { 0, 0, 0 };
    int coords[3], lsizes[3], starts[3], psizes[3], pstarts[3], d, i, j, k, pass;
    MPI_Comm cart;
    MPI_Datatype filetype, memtype;
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;
    double *local, *back, t0, t1, tmax;
    size_t padded;
    long n;

    MPI_Dims_create(ps_nprocs, 3, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, ps_rank, 3, coords);
    for (d = 0; d < 3; d++) {
        int q = gsizes[d] / dims[d], rem = gsizes[d] % dims[d];
        lsizes[d] = q + (coords[d] < rem);
        starts[d] = coords[d] * q + (coords[d] < rem ? coords[d] : rem);
        psizes[d] = lsizes[d] + 2 * GHOST;
        pstarts[d] = GHOST;
    }
    MPI_Type_create_subarray(3, gsizes, lsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &filetype);
    MPI_Type_commit(&filetype);
    MPI_Type_create_subarray(3, psizes, lsizes, pstarts, MPI_ORDER_C, MPI_DOUBLE, &memtype);
    MPI_Type_commit(&memtype);
    padded = (size_t) psizes[0] * psizes[1] * psizes[2];
    local = malloc(padded * sizeof(double));
    back = malloc(padded * sizeof(double));

#define AT(a, i, j, k) (a)[((size_t) (i) * psizes[1] + (j)) * psizes[2] + (k)]
#define INTERIOR(i, j, k) ((i) >= GHOST && (i) < GHOST + lsizes[0] && (j) >= GHOST && \
                           (j) < GHOST + lsizes[1] && (k) >= GHOST && (k) < GHOST + lsizes[2])

    info = ps_test_info();
    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));

    for (pass = 0; pass < 2; pass++) {
        MPI_Info_set(info, "romio_cb_write", pass == 0 ? "enable" : "disable");
        MPI_Info_set(info, "romio_cb_read", "enable");
        if (pass == 1 && ps_rank == 0)
            MPI_Info_set(info, "cb_nodes", "1");   /* one process names it: all agree */
        PS_MPI(MPI_File_set_view(fh, 0, MPI_DOUBLE, filetype, "native", info));

        for (i = 0; i < psizes[0]; i++)
            for (j = 0; j < psizes[1]; j++)
                for (k = 0; k < psizes[2]; k++)
                    AT(local, i, j, k) = INTERIOR(i, j, k) ?
                        value(pass, starts[0] + i - GHOST, starts[1] + j - GHOST,
                              starts[2] + k - GHOST) : SENTINEL;

        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        PS_MPI(MPI_File_write_all(fh, local, 1, memtype, &st));
        t1 = MPI_Wtime() - t0;
        MPI_Reduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (ps_rank == 0)
            printf("ps_coll3d: pass %d: %d processes wrote %.1f MiB (%s) in %.3f s\n", pass,
                   ps_nprocs, (double) NX * NY * NZ * 8 / 1048576,
                   pass == 0 ? "collective buffering" : "no collective buffering", tmax);

        /* collective read back */
        for (n = 0; n < (long) padded; n++)
            back[n] = SENTINEL;
        PS_MPI(MPI_File_read_at_all(fh, 0, back, 1, memtype, &st));
        for (i = 0; i < psizes[0]; i++)
            for (j = 0; j < psizes[1]; j++)
                for (k = 0; k < psizes[2]; k++)
                    PS_CHECK(AT(back, i, j, k) == AT(local, i, j, k),
                             "pass %d: collective read: local (%d,%d,%d) is %g, expected %g",
                             pass, i, j, k, AT(back, i, j, k), AT(local, i, j, k));
        /* independent read back */
        for (n = 0; n < (long) padded; n++)
            back[n] = SENTINEL;
        PS_MPI(MPI_File_read_at(fh, 0, back, 1, memtype, &st));
        for (i = 0; i < psizes[0]; i++)
            for (j = 0; j < psizes[1]; j++)
                for (k = 0; k < psizes[2]; k++)
                    PS_CHECK(AT(back, i, j, k) == AT(local, i, j, k),
                             "pass %d: independent read: local (%d,%d,%d) is %g, expected %g",
                             pass, i, j, k, AT(back, i, j, k), AT(local, i, j, k));

        /* the whole file, in contiguous slabs of i-planes */
        PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
        MPI_Barrier(MPI_COMM_WORLD);
        {
            int i0 = (int) ((long) NX * ps_rank / ps_nprocs);
            int i1 = (int) ((long) NX * (ps_rank + 1) / ps_nprocs);
            long plane = (long) NY * NZ, cnt = (i1 - i0) * plane;
            double *slab = malloc((cnt + 1) * sizeof(double));
            PS_MPI(MPI_File_read_at(fh, (MPI_Offset) i0 * plane * 8, slab, (int) cnt,
                                    MPI_DOUBLE, &st));
            for (n = 0; n < cnt; n++) {
                int gi = i0 + (int) (n / plane), gj = (int) (n % plane / NZ),
                    gk = (int) (n % NZ);
                PS_CHECK(slab[n] == value(pass, gi, gj, gk),
                         "pass %d: file element (%d,%d,%d) is %g, expected %g", pass, gi, gj,
                         gk, slab[n], value(pass, gi, gj, gk));
            }
            free(slab);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    PS_MPI(MPI_File_close(&fh));
    MPI_Type_free(&filetype);
    MPI_Type_free(&memtype);
    MPI_Info_free(&info);
    MPI_Comm_free(&cart);
    free(local);
    free(back);
    if (ps_rank == 0)
        printf("ps_coll3d: %d processes: PASS\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

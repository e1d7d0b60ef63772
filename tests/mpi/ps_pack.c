/*
 * ps_pack: MPI_Pack output of a set of derived datatypes, written to a file,
 * so that two MPI libraries can be compared byte for byte.
 *
 * tests/mpi/mpi-pack runs this one binary (built with the system mpicc) on
 * the system MPICH and through `pstripe run` on the pstripe MPICH: a program
 * must see the same datatype engine under both (the same bytes from MPI_Pack,
 * the same sizes and extents). The types: darrays
 * (CYCLIC(2) x BLOCK, BLOCK x CYCLIC, C and Fortran order, every rank of a
 * 2 x 2 grid), a 3-D subarray, vector, hvector, indexed, hindexed,
 * indexed_block, a struct with gaps, resized types, and types built from
 * those.
 *
 * For each type the output file holds one text line (name, size, extent,
 * lb, true lb, true extent, pack size, packed length) and then the packed
 * bytes in hex. (Not MPI_Pack_external: the system MPICH 4.0.2 dies of
 * SIGILL in MPI_Pack_external_size on these types, checked 2026-11-23.)
 * The lines "library: ..." (MPI_Get_library_version's device and custom
 * information) go to stdout, not to the file: the runner checks it names the expected library.
 *
 * Usage: ps_pack OUTFILE     (one process)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTYPES_MAX 32

static MPI_Datatype types[NTYPES_MAX];
static const char *names[NTYPES_MAX];
static int ntypes;

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "ps_pack: %s failed: %s\n", what, msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void add(const char *name, MPI_Datatype t)
{
    if (ntypes == NTYPES_MAX) {
        fprintf(stderr, "ps_pack: too many types\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    check(MPI_Type_commit(&t), name);
    names[ntypes] = name;
    types[ntypes++] = t;
}

static void build_types(void)
{
    static char dnames[8][64];
    int gsizes[2] = {10, 13}, psizes[2] = {2, 2};
    int distribs[2][2] = {{MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
                          {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}};
    int dargs[2][2] = {{2, MPI_DISTRIBUTE_DFLT_DARG}, {MPI_DISTRIBUTE_DFLT_DARG, 3}};
    MPI_Datatype t, u, v;
    int k = 0;

    for (int d = 0; d < 2; d++) {
        for (int r = 0; r < 4; r++, k++) {
            int order = (r % 2) ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
            snprintf(dnames[k], sizeof(dnames[k]), "darray %s rank %d %s",
                     d == 0 ? "CYCLIC(2)xBLOCK" : "BLOCKxCYCLIC(3)", r,
                     order == MPI_ORDER_C ? "C" : "Fortran");
            check(MPI_Type_create_darray(4, r, 2, gsizes, distribs[d], dargs[d], psizes, order,
                                         MPI_INT, &t), dnames[k]);
            add(dnames[k], t);
        }
    }
    {
        int sizes[3] = {6, 7, 8}, sub[3] = {3, 4, 5}, starts[3] = {1, 2, 3};
        check(MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &t),
              "subarray");
        add("subarray 3-D C double", t);
        check(MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_SHORT, &t),
              "subarray");
        add("subarray 3-D Fortran short", t);
    }
    check(MPI_Type_vector(5, 3, 7, MPI_INT, &t), "vector");
    add("vector 5x3 stride 7 int", t);
    check(MPI_Type_create_hvector(4, 2, 37, MPI_DOUBLE, &t), "hvector");
    add("hvector 4x2 stride 37 B double", t);
    {
        int bl[4] = {3, 1, 4, 2}, disp[4] = {0, 5, 9, 20};
        MPI_Aint hdisp[4] = {3, 40, 17, 100};
        check(MPI_Type_indexed(4, bl, disp, MPI_INT, &t), "indexed");
        add("indexed int", t);
        check(MPI_Type_create_hindexed(4, bl, hdisp, MPI_CHAR, &t), "hindexed");
        add("hindexed char (unordered)", t);
        check(MPI_Type_create_indexed_block(4, 2, disp, MPI_FLOAT, &t), "indexed_block");
        add("indexed_block float", t);
    }
    {
        int bl[3] = {1, 2, 3};
        MPI_Aint disp[3] = {0, 8, 28};
        MPI_Datatype tt[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
        check(MPI_Type_create_struct(3, bl, disp, tt, &u), "struct");
        add("struct int,2 double,3 char", u);
        check(MPI_Type_create_resized(u, -4, 48, &t), "resized");
        add("resized struct lb -4 extent 48", t);
        check(MPI_Type_contiguous(3, t, &v), "contiguous");
        add("contiguous 3 of resized struct", v);
    }
    check(MPI_Type_vector(3, 1, 4, MPI_LONG_LONG, &u), "vector");
    check(MPI_Type_create_resized(u, 0, 8, &t), "resized");
    MPI_Type_free(&u);
    add("resized vector extent 8 (interleave)", t);
    {
        int bl[2] = {2, 1};
        MPI_Aint disp[2] = {16, 0};
        MPI_Datatype tt[2] = {types[0], MPI_BYTE};
        check(MPI_Type_create_struct(2, bl, disp, tt, &t), "struct of darray");
        add("struct of 2 darray + byte", t);
    }
}

static void put_hex(FILE *f, const unsigned char *p, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(f, "%02x%s", p[i], (i % 32 == 31 || i == n - 1) ? "\n" : "");
}

static void dump(FILE *f, int i)
{
    MPI_Aint lb, extent, tlb, textent, inbytes, base_off;
    int size, psize, pos = 0, count = 2;
    unsigned char *in, *out;

    check(MPI_Type_size(types[i], &size), "MPI_Type_size");
    check(MPI_Type_get_extent(types[i], &lb, &extent), "MPI_Type_get_extent");
    check(MPI_Type_get_true_extent(types[i], &tlb, &textent), "MPI_Type_get_true_extent");
    check(MPI_Pack_size(count, types[i], MPI_COMM_WORLD, &psize), "MPI_Pack_size");
    /* The input buffer covers the bytes of count elements (all the extents
     * here are positive), with 64 bytes of margin on both sides. */
    base_off = 64 + (tlb < 0 ? -tlb : 0);
    inbytes = base_off + (tlb > 0 ? tlb : 0) + textent + (count - 1) * extent + 64;
    in = malloc(inbytes);
    out = calloc(1, psize + 1);
    for (MPI_Aint b = 0; b < inbytes; b++)
        in[b] = (unsigned char)(b * 131 + 7);
    {
        unsigned char *base = in + base_off;
        check(MPI_Pack(base, count, types[i], out, psize, &pos, MPI_COMM_WORLD), names[i]);
    }
    fprintf(f, "%s: size %d extent %ld lb %ld true_lb %ld true_extent %ld pack_size %d packed %d\n",
            names[i], size, (long)extent, (long)lb, (long)tlb, (long)textent, psize, pos);
    put_hex(f, out, pos);
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, nprocs;
    FILE *f;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 2 || nprocs != 1) {
        fprintf(stderr, "usage: ps_pack OUTFILE (one process)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Get_library_version(version, &len);
    for (char *line = strtok(version, "\n"); line != NULL; line = strtok(NULL, "\n"))
        if (strstr(line, "Device") != NULL || strstr(line, "Custom") != NULL)
            printf("library: %s\n", line);
    build_types();
    f = fopen(argv[1], "w");
    if (f == NULL) {
        perror(argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < ntypes; i++)
        dump(f, i);
    if (fclose(f) != 0) {
        perror(argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("ps_pack: %d types written to %s\n", ntypes, argv[1]);
    for (int i = 0; i < ntypes; i++)
        MPI_Type_free(&types[i]);
    MPI_Finalize();
    return 0;
}

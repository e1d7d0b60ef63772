/*
 * ps_views: noncontiguous file views with noncontiguous memory types.
 *
 * Six kinds of file view, each rank getting its own interleaved share:
 * vector, indexed (irregular blocks), 2-D subarray, 2-D block-cyclic
 * darray, a struct of int/double/char records, and a vector of bytes whose
 * tiles end in a gap; each paired with a
 * noncontiguous memory type (strided elements, or records with holes).
 * Every view is written in five ways, in its own region of the file:
 * independent with explicit offsets, collective with the individual file
 * pointer, nonblocking independent (MPI_Wait / MPI_Test), collective with
 * explicit offsets, and nonblocking collective. Each access is split in two
 * calls at a point that is not a tile boundary, so accesses start inside
 * blocks. The regions are first filled with a background pattern, which
 * the views' holes must keep.
 *
 * Checks: the file pointer position after the writes; every rank reads its
 * data back in another mode, into the memory type and into contiguous
 * memory; and rank 0 reads the whole file and compares it with a model
 * built from the datatypes themselves (the byte displacements of a type are
 * found with MPI_Pack, independently of MPI-IO).
 *
 * Usage: ps_views FILENAME
 */
#include "pstest.h"

enum { V_VECTOR, V_INDEXED, V_SUBARRAY, V_DARRAY, V_STRUCT, V_GAPPED, NVIEWS };
enum { M_AT, M_ALL, M_INB, M_AT_ALL, M_I_ALL, NMODES };

static const char *view_name[NVIEWS] = {
    "vector", "indexed", "subarray", "darray", "struct", "gapped"
};
static const char *mode_name[NMODES] = {
    "write_at", "write_all", "iwrite", "write_at_all", "iwrite_at_all"
};

typedef struct {
    MPI_Datatype etype, filetype, memtype;
    MPI_Offset disp;            /* relative to the region */
    int ntiles;                 /* data fills this many filetype tiles */
    int count;                  /* memtype elements */
    MPI_Aint mem_span;          /* bytes of memory the elements cover */
} view_t;

/* The view of rank r for kind v. */
static void make_view(int v, int r, view_t * vw)
{
    int P = ps_nprocs, i;
    MPI_Datatype t;
    MPI_Count fsize, msize, esize;
    MPI_Aint lb, ext;

    memset(vw, 0, sizeof(*vw));
    switch (v) {
        case V_VECTOR:{
                const int B = 1531, NB = 8;
                vw->etype = MPI_INT;
                MPI_Type_vector(NB, B, B * P, MPI_INT, &t);
                MPI_Type_create_resized(t, 0, (MPI_Aint) NB * B * P * 4, &vw->filetype);
                MPI_Type_free(&t);
                vw->disp = (MPI_Offset) r * B * 4;
                vw->ntiles = 2;
                MPI_Type_create_resized(MPI_INT, 0, 8, &vw->memtype);
                break;
            }
        case V_INDEXED:{
                const int NBLK = 200;
                int lens[200];
                MPI_Aint displs[200];
                for (i = 0; i < NBLK; i++) {
                    lens[i] = 1 + (i * 37 + r * 11) % 500;
                    displs[i] = (MPI_Aint) i * 512 * P + r * 512 + (i % 7);
                }
                vw->etype = MPI_BYTE;
                MPI_Type_create_hindexed(NBLK, lens, displs, MPI_BYTE, &t);
                MPI_Type_create_resized(t, 0, (MPI_Aint) NBLK * 512 * P, &vw->filetype);
                MPI_Type_free(&t);
                vw->ntiles = 2;
                MPI_Type_create_resized(MPI_BYTE, 0, 3, &vw->memtype);
                break;
            }
        case V_SUBARRAY:{
                int gsizes[2] = { 256, 200 }, dims[2] = { 0, 0 }, lsizes[2], starts[2], c[2];
                MPI_Dims_create(P, 2, dims);
                c[0] = r / dims[1];
                c[1] = r % dims[1];
                for (i = 0; i < 2; i++) {
                    int q = gsizes[i] / dims[i], rem = gsizes[i] % dims[i];
                    lsizes[i] = q + (c[i] < rem);
                    starts[i] = c[i] * q + (c[i] < rem ? c[i] : rem);
                }
                vw->etype = MPI_DOUBLE;
                MPI_Type_create_subarray(2, gsizes, lsizes, starts, MPI_ORDER_C, MPI_DOUBLE,
                                         &vw->filetype);
                vw->ntiles = 1;
                MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &vw->memtype);
                break;
            }
        case V_DARRAY:{
                int gsizes[2] = { 240, 180 }, dims[2] = { 0, 0 };
                int distribs[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK };
                int dargs[2] = { 7, MPI_DISTRIBUTE_DFLT_DARG };
                MPI_Dims_create(P, 2, dims);
                vw->etype = MPI_DOUBLE;
                MPI_Type_create_darray(P, r, 2, gsizes, distribs, dargs, dims, MPI_ORDER_C,
                                       MPI_DOUBLE, &vw->filetype);
                vw->ntiles = 1;
                MPI_Type_create_resized(MPI_DOUBLE, 0, 24, &vw->memtype);
                break;
            }
        case V_STRUCT:{
                /* file record: 3 ints @0, 2 doubles @16, 5 chars @40, extent 48;
                 * memory record: 3 ints @8, 2 doubles @24, 5 chars @48, extent 64 */
                int bl[3] = { 3, 2, 5 };
                MPI_Aint fd_[3] = { 0, 16, 40 }, md[3] = { 8, 24, 48 };
                MPI_Datatype ty[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, rec;
                const int NR = 1500;
                vw->etype = MPI_BYTE;
                MPI_Type_create_struct(3, bl, fd_, ty, &t);
                MPI_Type_create_resized(t, 0, 48, &rec);
                MPI_Type_free(&t);
                MPI_Type_vector(NR, 1, P, rec, &t);
                MPI_Type_create_resized(t, 0, (MPI_Aint) NR * 48 * P, &vw->filetype);
                MPI_Type_free(&t);
                MPI_Type_free(&rec);
                vw->disp = (MPI_Offset) r * 48;
                vw->ntiles = 2;
                MPI_Type_create_struct(3, bl, md, ty, &t);
                MPI_Type_create_resized(t, 0, 64, &vw->memtype);
                MPI_Type_free(&t);
                break;
            }
        case V_GAPPED:{
                /* a vector of bytes whose tiles end in a gap: the driver's
                 * strided runs (one per view, ad_pstripe_io_list.c) do not
                 * continue from one tile into the next */
                const int B = 13, NB = 40;
                vw->etype = MPI_BYTE;
                MPI_Type_vector(NB, B, B * P, MPI_BYTE, &t);
                MPI_Type_create_resized(t, 0, (MPI_Aint) NB * B * P + 100, &vw->filetype);
                MPI_Type_free(&t);
                vw->disp = (MPI_Offset) r * B;
                vw->ntiles = 3;
                MPI_Type_create_resized(MPI_BYTE, 0, 2, &vw->memtype);
                break;
            }
    }
    MPI_Type_commit(&vw->filetype);
    MPI_Type_commit(&vw->memtype);
    MPI_Type_size_x(vw->filetype, &fsize);
    MPI_Type_size_x(vw->memtype, &msize);
    MPI_Type_size_x(vw->etype, &esize);
    PS_CHECK((fsize * vw->ntiles) % msize == 0, "view %s: sizes do not divide", view_name[v]);
    vw->count = (int) (fsize * vw->ntiles / msize);
    MPI_Type_get_extent(vw->memtype, &lb, &ext);
    vw->mem_span = ext * vw->count + 64;
}

/* Byte displacements of the darray view of rank q, from the definition of
 * MPI_Type_create_darray (C order: element (i,j) belongs to process
 * ((i / 7) % P0, j / ceil(180 / P1)); the type lists a process's elements
 * in increasing global order). The model uses this rather than MPI_Pack,
 * which some MPICH builds get wrong for cyclic darrays (see main). */
static int64_t *darray_offsets(int q, MPI_Count * nbytes)
{
    int dims[2] = { 0, 0 }, i, j, b, bs1;
    int64_t *offs = malloc(240 * 180 * 8 * sizeof(int64_t)), n = 0;

    MPI_Dims_create(ps_nprocs, 2, dims);
    bs1 = (180 + dims[1] - 1) / dims[1];
    for (i = 0; i < 240; i++)
        for (j = 0; j < 180; j++)
            if (((i / 7) % dims[0]) * dims[1] + j / bs1 == q)
                for (b = 0; b < 8; b++)
                    offs[n++] = ((int64_t) i * 180 + j) * 8 + b;
    *nbytes = n;
    return offs;
}

static void free_view(view_t * vw)
{
    MPI_Type_free(&vw->filetype);
    MPI_Type_free(&vw->memtype);
}

/* Region of the file for (view, mode): all regions have the same size,
 * enough for the largest view. */
static MPI_Offset region_size;

static MPI_Offset region_base(int v, int m)
{
    return (MPI_Offset) (v * NMODES + m) * region_size;
}

static void wait_by_test(MPI_Request * req)
{
    int done = 0;
    MPI_Status st;
    while (!done) {
        PS_MPI(MPI_Test(req, &done, &st));
        ps_compute(1000);
    }
}

/* The access of count memtype elements, in two calls split after n1
 * elements (not a tile boundary), in mode m. */
static void access2(MPI_File fh, int m, int is_write, unsigned char *buf, const view_t * vw,
                    MPI_Count esize)
{
    MPI_Count msize;
    MPI_Aint lb, ext;
    MPI_Offset off2;
    MPI_Status st;
    MPI_Request req[2];
    int n1, n2;
    unsigned char *b2;

    MPI_Type_size_x(vw->memtype, &msize);
    MPI_Type_get_extent(vw->memtype, &lb, &ext);
    n1 = vw->count / 3;
    n2 = vw->count - n1;
    b2 = buf + (MPI_Aint) n1 * ext;
    off2 = (MPI_Offset) (n1 * msize / esize);
    PS_CHECK((n1 * msize) % esize == 0, "split is not a whole number of etypes");

#define RW(wfn, rfn, ...) (is_write ? wfn(__VA_ARGS__) : rfn(__VA_ARGS__))
    switch (m) {
        case M_AT:
            PS_MPI(RW(MPI_File_write_at, MPI_File_read_at, fh, 0, buf, n1, vw->memtype, &st));
            PS_MPI(RW(MPI_File_write_at, MPI_File_read_at, fh, off2, b2, n2, vw->memtype, &st));
            break;
        case M_ALL:
            PS_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
            PS_MPI(RW(MPI_File_write_all, MPI_File_read_all, fh, buf, n1, vw->memtype, &st));
            PS_MPI(RW(MPI_File_write_all, MPI_File_read_all, fh, b2, n2, vw->memtype, &st));
            break;
        case M_INB:
            PS_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
            PS_MPI(RW(MPI_File_iwrite, MPI_File_iread, fh, buf, n1, vw->memtype, &req[0]));
            ps_compute(50000);
            PS_MPI(MPI_Wait(&req[0], &st));
            PS_MPI(RW(MPI_File_iwrite, MPI_File_iread, fh, b2, n2, vw->memtype, &req[0]));
            wait_by_test(&req[0]);
            break;
        case M_AT_ALL:
            PS_MPI(RW(MPI_File_write_at_all, MPI_File_read_at_all, fh, 0, buf, n1, vw->memtype,
                      &st));
            PS_MPI(RW(MPI_File_write_at_all, MPI_File_read_at_all, fh, off2, b2, n2,
                      vw->memtype, &st));
            break;
        case M_I_ALL:
            PS_MPI(RW(MPI_File_iwrite_at_all, MPI_File_iread_at_all, fh, 0, buf, n1,
                      vw->memtype, &req[0]));
            PS_MPI(RW(MPI_File_iwrite_at_all, MPI_File_iread_at_all, fh, off2, b2, n2,
                      vw->memtype, &req[1]));
            {
                MPI_Status sts[2];
                PS_MPI(MPI_Waitall(2, req, sts));
            }
            break;
    }
#undef RW
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;
    view_t vw;
    int v, m, q;
    MPI_Count fsize, esize, nb;
    MPI_Aint lb, ext;
    MPI_Offset total, pos, chunk, lo, hi;
    unsigned char *model = NULL, *whole;

    /* region size: the largest span of any view (all ranks' views tile the
     * same extent) */
    region_size = 0;
    for (v = 0; v < NVIEWS; v++) {
        make_view(v, 0, &vw);
        MPI_Type_get_extent(vw.filetype, &lb, &ext);
        region_size = PS_MAX(region_size, (MPI_Offset) ext * vw.ntiles + 48 * ps_nprocs);
        free_view(&vw);
    }
    region_size = (region_size + 4095) / 4096 * 4096;
    total = region_base(NVIEWS, 0);

    info = ps_test_info();
    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));

    /* background pattern, written collectively in contiguous chunks */
    chunk = (total + ps_nprocs - 1) / ps_nprocs;
    lo = PS_MIN(total, chunk * ps_rank);
    hi = PS_MIN(total, lo + chunk);
    whole = malloc(chunk + 1);
    ps_fill(whole, hi - lo, lo, 99);
    PS_MPI(MPI_File_write_at_all(fh, lo, whole, (int) (hi - lo), MPI_BYTE, &st));
    free(whole);

    for (v = 0; v < NVIEWS; v++) {
        for (m = 0; m < NMODES; m++) {
            unsigned char *src, *rbuf, *p1, *p2, *contig;
            char what[128];
            make_view(v, ps_rank, &vw);
            MPI_Type_size_x(vw.etype, &esize);
            MPI_Type_size_x(vw.filetype, &fsize);
            snprintf(what, sizeof(what), "%s view, %s", view_name[v], mode_name[m]);

            src = malloc(vw.mem_span);
            rbuf = malloc(vw.mem_span);
            ps_fill(src, vw.mem_span, (uint64_t) ps_rank * 1000003, v * 16 + m);
            memset(rbuf, 0x5A, vw.mem_span);

            PS_MPI(MPI_File_set_view(fh, region_base(v, m) + vw.disp, vw.etype, vw.filetype,
                                     "native", info));
            access2(fh, m, 1, src, &vw, esize);
            if (m == M_ALL || m == M_INB) {
                PS_MPI(MPI_File_get_position(fh, &pos));
                PS_CHECK(pos == fsize * vw.ntiles / esize,
                         "%s: position %lld after the writes, expected %lld", what,
                         (long long) pos, (long long) (fsize * vw.ntiles / esize));
                /* collective calls of no data (as a process with nothing to
                 * give makes them), of every process and of rank 0 alone,
                 * with the pointer inside a tile: rank 0's stays */
                PS_MPI(MPI_File_seek(fh, pos - 1, MPI_SEEK_SET));
                PS_MPI(MPI_File_write_all(fh, src, 0, vw.etype, &st));
                PS_MPI(MPI_File_read_all(fh, rbuf, ps_rank == 0 ? 0 : 1, vw.etype, &st));
                if (ps_rank == 0) {
                    PS_MPI(MPI_File_get_position(fh, &pos));
                    PS_CHECK(pos == fsize * vw.ntiles / esize - 1,
                             "%s: position %lld after collective calls of no data, expected "
                             "%lld", what, (long long) pos,
                             (long long) (fsize * vw.ntiles / esize - 1));
                }
            }
            MPI_Barrier(MPI_COMM_WORLD);

            /* read back in the next mode, into the memory type */
            access2(fh, (m + 1) % NMODES, 0, rbuf, &vw, esize);
            p1 = ps_pack(src, vw.count, vw.memtype);
            p2 = ps_pack(rbuf, vw.count, vw.memtype);
            ps_compare(p2, p1, fsize * vw.ntiles, what);
            /* and into contiguous memory, collectively */
            contig = malloc(fsize * vw.ntiles + 1);
            PS_MPI(MPI_File_read_at_all(fh, 0, contig, (int) (fsize * vw.ntiles / esize),
                                        vw.etype, &st));
            ps_compare(contig, p1, fsize * vw.ntiles, what);
            free(contig);
            free(p1);
            free(p2);
            free(src);
            free(rbuf);
            free_view(&vw);
        }
    }

    /* Does this MPI library pack the darray type as the standard says? (The
     * pstripe MPICH built with yaksa did not, November 2026: MPI_Pack of a
     * CYCLIC x BLOCK darray; ROMIO flattens types itself and is not
     * affected.) Reported, not failed: it is not an MPI-IO matter. */
    if (ps_rank == 0) {
        int64_t *a, *b2;
        MPI_Count na, nb2, k;
        make_view(V_DARRAY, 0, &vw);
        a = ps_type_offsets(vw.filetype, 1, &na);
        b2 = darray_offsets(0, &nb2);
        for (k = 0; k < na && k < nb2 && a[k] == b2[k]; k++);
        if (na != nb2 || k < na)
            printf("ps_views: WARNING: this MPI library's MPI_Pack of a cyclic darray type "
                   "differs from the MPI standard's layout at packed byte %lld\n",
                   (long long) k);
        free(a);
        free(b2);
        free_view(&vw);
    }

    /* the whole file against the model */
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0) {
        model = malloc(total);
        ps_fill(model, total, 0, 99);
        for (v = 0; v < NVIEWS; v++)
            for (m = 0; m < NMODES; m++)
                for (q = 0; q < ps_nprocs; q++) {
                    int64_t *offs;
                    unsigned char *src, *data;
                    MPI_Count i;
                    make_view(v, q, &vw);
                    if (v == V_DARRAY)
                        offs = darray_offsets(q, &nb);
                    else
                        offs = ps_type_offsets(vw.filetype, vw.ntiles, &nb);
                    src = malloc(vw.mem_span);
                    ps_fill(src, vw.mem_span, (uint64_t) q * 1000003, v * 16 + m);
                    data = ps_pack(src, vw.count, vw.memtype);
                    for (i = 0; i < nb; i++)
                        model[region_base(v, m) + vw.disp + offs[i]] = data[i];
                    free(offs);
                    free(src);
                    free(data);
                    free_view(&vw);
                }
        whole = malloc(total);
        PS_MPI(MPI_File_read_at(fh, 0, whole, (int) total, MPI_BYTE, &st));
        for (v = 0; v < NVIEWS; v++)
            for (m = 0; m < NMODES; m++) {
                char what[128];
                snprintf(what, sizeof(what), "file region of %s view, %s", view_name[v],
                         mode_name[m]);
                ps_compare(whole + region_base(v, m), model + region_base(v, m), region_size,
                           what);
            }
        free(whole);
        free(model);
    }
    PS_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
    if (ps_rank == 0)
        printf("ps_views: %d processes: PASS\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

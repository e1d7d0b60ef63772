/*
 * pstripe-h5bench: parallel HDF5 on an MPI-IO file system, timed like
 * pstripe-bench.
 *
 * The pattern is the one of a 2-D domain decomposition writing its field
 * (stencil, climate and CFD codes checkpointing through HDF5): one dataset
 * of doubles, ROWS x COLS, each process owning a block of columns (-d cols,
 * the default) or a block of rows (-d rows). A process writes its part in
 * bands of -k rows, one H5Dwrite per band (a hyperslab of k rows by its
 * columns), the way such codes write one slab of a field at a time. With
 * the contiguous layout (-L contig, HDF5's default) a column block is k
 * small pieces of COLS/P doubles per call, interleaved with the other
 * processes' pieces in the file: noncontiguous I/O through MPI-IO. With
 * -L chunked the chunks are one band of one process (k x COLS/P), so every
 * call is one contiguous chunk, what applications get when they choose
 * chunks that match their decomposition.
 *
 * Independent (default) or collective (-c) transfers through
 * H5Pset_dxpl_mpio. A phase (write, then read) creates or opens the file,
 * issues every band and closes the file; the time from a barrier before
 * the open to the slowest process's close is the phase's time (HDF5 writes
 * its metadata at close; -e adds H5Fflush, MPI_File_sync, before it), and
 * the open alone is reported too. Each H5Dwrite
 * or H5Dread is timed for the latency figures. -V fills every element with a
 * value derived from its (row, column) and checks every element read.
 *
 * Built with the system mpicc and HDF5's flags (pkg-config hdf5-mpich), so
 * it runs on the pstripe-enabled MPICH through `pstripe run` like
 * pstripe-bench.
 */
#define _GNU_SOURCE
#include <hdf5.h>
#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define H5B_MAX_HINTS 32

typedef struct {
    const char *path;     /* with its ROMIO prefix */
    long long rows, cols; /* dataset dimensions, elements */
    long long band;       /* rows per H5Dwrite/H5Dread */
    bool by_rows;         /* -d rows: each process a block of rows */
    bool chunked;         /* -L chunked */
    bool collective;      /* -c */
    bool sync;            /* -e: H5Fflush (MPI_File_sync) before the close */
    bool do_write, do_read, verify, keep, quiet, drop_cache;
    int seed;         /* --seed: added to every value */
    long long align;  /* -A: H5Pset_alignment of objects >= this size */
    const char *json; /* --json FILE */
    const char *label;
    int nhints;
    char *hint_key[H5B_MAX_HINTS], *hint_val[H5B_MAX_HINTS];
} h5b_opts_t;

typedef struct {
    const char *phase;
    double seconds, open_seconds;
    double lat_min, lat_median, lat_p99, lat_max;
    long long bytes, calls, errors;
} h5b_result_t;

typedef struct {
    int rank, nprocs;
    hsize_t start[2], count[2]; /* this process's block */
    double *buf;                /* one band */
    double *lat;                /* latency of each call, this process */
    long long ncalls;
} h5b_ctx_t;

static void h5b_usage(void)
{
    printf("usage: pstripe-h5bench [options] -o FILE\n"
           "  -o FILE      file with its ROMIO prefix (pstripe:/f, ufs:/path/f)\n"
           "  -R ROWS      dataset rows (default 4096)\n"
           "  -C COLS      dataset columns, doubles (default 1024)\n"
           "  -k ROWS      rows per H5Dwrite/H5Dread call (default 64)\n"
           "  -d cols|rows each process a block of columns (default) or rows\n"
           "  -L contig|chunked   dataset layout (default contig)\n"
           "  -A BYTES     align objects of BYTES or more to BYTES (H5Pset_alignment;\n"
           "               default none: the data start after HDF5's header)\n"
           "  -c           collective transfers (H5FD_MPIO_COLLECTIVE)\n"
           "  -w -r        write phase, read phase (default both)\n"
           "  -e           H5Fflush (MPI_File_sync) at the end of the write phase\n"
           "  -V           verify every element read\n"
           "  -K           keep the file\n"
           "  -H key=value MPI-IO hint (repeatable)\n"
           "  --drop-cache after writing a local (ufs:) file, drop its pages\n"
           "  --seed N     added to every value (-V with another seed fails)\n"
           "  --json FILE  results as JSON; --label TEXT; -q quiet\n");
}

static bool h5b_parse_hint(h5b_opts_t *o, const char *kv)
{
    const char *eq = strchr(kv, '=');

    if (eq == NULL || eq == kv || o->nhints == H5B_MAX_HINTS) {
        return false;
    }
    o->hint_key[o->nhints] = strndup(kv, (size_t)(eq - kv));
    o->hint_val[o->nhints] = strdup(eq + 1);
    o->nhints++;
    return true;
}

static bool h5b_parse_layout(h5b_opts_t *o, int c, const char *arg)
{
    if (c == 'd') {
        o->by_rows = strcmp(arg, "rows") == 0;
        return o->by_rows || strcmp(arg, "cols") == 0;
    }
    o->chunked = strcmp(arg, "chunked") == 0;
    return o->chunked || strcmp(arg, "contig") == 0;
}

/* Returns 0 to run, 1 after -h, -1 on a bad option. */
static int h5b_parse_args(h5b_opts_t *o, int argc, char **argv)
{
    static const struct option longs[] = {
        {"json", required_argument, NULL, 'J'}, {"label", required_argument, NULL, 'B'},
        {"drop-cache", no_argument, NULL, 'X'}, {"seed", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0}};
    int c;

    *o = (h5b_opts_t){.rows = 4096, .cols = 1024, .band = 64, .label = ""};
    while ((c = getopt_long(argc, argv, "o:R:C:k:d:L:A:cewrVKH:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->path = optarg;
            break;
        case 'R':
            o->rows = atoll(optarg);
            break;
        case 'C':
            o->cols = atoll(optarg);
            break;
        case 'k':
            o->band = atoll(optarg);
            break;
        case 'A':
            o->align = atoll(optarg);
            break;
        case 'd':
        case 'L':
            if (!h5b_parse_layout(o, c, optarg)) {
                return -1;
            }
            break;
        case 'c':
            o->collective = true;
            break;
        case 'e':
            o->sync = true;
            break;
        case 'w':
            o->do_write = true;
            break;
        case 'r':
            o->do_read = true;
            break;
        case 'V':
            o->verify = true;
            break;
        case 'K':
            o->keep = true;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'X':
            o->drop_cache = true;
            break;
        case 'S':
            o->seed = atoi(optarg);
            break;
        case 'J':
            o->json = optarg;
            break;
        case 'B':
            o->label = optarg;
            break;
        case 'H':
            if (!h5b_parse_hint(o, optarg)) {
                return -1;
            }
            break;
        case 'h':
            h5b_usage();
            return 1;
        default:
            return -1;
        }
    }
    if (!o->do_write && !o->do_read) {
        o->do_write = o->do_read = true;
    }
    return (o->path == NULL || o->rows <= 0 || o->cols <= 0 || o->band <= 0) ? -1 : 0;
}

/* This process's block, and the checks that the decomposition divides. */
static bool h5b_decompose(const h5b_opts_t *o, h5b_ctx_t *x)
{
    long long split = o->by_rows ? o->rows : o->cols;
    long long mine = split / x->nprocs;

    if (mine == 0 || split % x->nprocs != 0) {
        return false;
    }
    if (o->by_rows) {
        x->start[0] = (hsize_t)(x->rank * mine);
        x->start[1] = 0;
        x->count[0] = (hsize_t)mine;
        x->count[1] = (hsize_t)o->cols;
    } else {
        x->start[0] = 0;
        x->start[1] = (hsize_t)(x->rank * mine);
        x->count[0] = (hsize_t)o->rows;
        x->count[1] = (hsize_t)mine;
    }
    return x->count[0] % (hsize_t)o->band == 0;
}

static double h5b_value(hsize_t row, hsize_t col, hsize_t cols, int seed)
{
    return (double)(row * cols + col) + 0.5 + seed;
}

/* Fill (or check) the band of rows starting at the block's row r0. */
static long long h5b_band_data(const h5b_opts_t *o, h5b_ctx_t *x, hsize_t r0, bool check)
{
    long long bad = 0;
    hsize_t i, j;

    for (i = 0; i < (hsize_t)o->band; i++) {
        for (j = 0; j < x->count[1]; j++) {
            double v = h5b_value(x->start[0] + r0 + i, x->start[1] + j, (hsize_t)o->cols, o->seed);
            double *p = &x->buf[i * x->count[1] + j];
            if (!check) {
                *p = v;
            } else if (*p != v) {
                bad++;
            }
        }
    }
    return bad;
}

static hid_t h5b_fapl(const h5b_opts_t *o)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    MPI_Info info;
    int i;

    MPI_Info_create(&info);
    for (i = 0; i < o->nhints; i++) {
        MPI_Info_set(info, o->hint_key[i], o->hint_val[i]);
    }
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info);
    if (o->align > 0) {
        H5Pset_alignment(fapl, (hsize_t)o->align, (hsize_t)o->align);
    }
    MPI_Info_free(&info);
    return fapl;
}

/* The dataset's creation properties: contiguous, or chunks of one band of
 * one process; never written fill values (as parallel applications set). */
static hid_t h5b_dcpl(const h5b_opts_t *o, const h5b_ctx_t *x)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t chunk[2];

    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    if (o->chunked) {
        chunk[0] = (hsize_t)o->band;
        chunk[1] = x->count[1];
        H5Pset_chunk(dcpl, 2, chunk);
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
    }
    return dcpl;
}

/* Create or open the file and its dataset; false on an HDF5 error. */
static bool h5b_open(const h5b_opts_t *o, const h5b_ctx_t *x, bool create, hid_t *file, hid_t *dset)
{
    hid_t fapl = h5b_fapl(o), space, dcpl;
    hsize_t dims[2] = {(hsize_t)o->rows, (hsize_t)o->cols};
    const char *path = o->path;

    *file = create ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)
                   : H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (*file < 0) {
        return false;
    }
    if (!create) {
        *dset = H5Dopen2(*file, "field", H5P_DEFAULT);
    } else {
        space = H5Screate_simple(2, dims, NULL);
        dcpl = h5b_dcpl(o, x);
        *dset =
            H5Dcreate2(*file, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        H5Pclose(dcpl);
        H5Sclose(space);
    }
    if (*dset < 0) {
        H5Fclose(*file);
        return false;
    }
    return true;
}

/* One H5Dwrite or H5Dread of the band starting at block row r0. */
static bool h5b_band_io(const h5b_opts_t *o, h5b_ctx_t *x, hid_t dset, hid_t dxpl, hsize_t r0,
                        bool write)
{
    hsize_t start[2] = {x->start[0] + r0, x->start[1]};
    hsize_t count[2] = {(hsize_t)o->band, x->count[1]};
    hid_t fspace = H5Dget_space(dset);
    hid_t mspace = H5Screate_simple(2, count, NULL);
    herr_t rc;
    double t0;

    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    t0 = MPI_Wtime();
    rc = write ? H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, x->buf)
               : H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, x->buf);
    x->lat[x->ncalls++] = MPI_Wtime() - t0;
    H5Sclose(mspace);
    H5Sclose(fspace);
    return rc >= 0;
}

static int h5b_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Latency figures over every process's calls, on rank 0. */
static void h5b_latency(const h5b_ctx_t *x, h5b_result_t *res)
{
    long long n = x->ncalls * x->nprocs;
    double *all = x->rank == 0 ? malloc(sizeof(double) * (size_t)n) : NULL;

    MPI_Gather(x->lat, (int)x->ncalls, MPI_DOUBLE, all, (int)x->ncalls, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    if (x->rank == 0 && n > 0) {
        qsort(all, (size_t)n, sizeof(double), h5b_cmp_double);
        res->lat_min = all[0];
        res->lat_median = all[n / 2];
        res->lat_p99 = all[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
        res->lat_max = all[n - 1];
    }
    free(all);
}

/* Local file behind a ufs: name: fdatasync and drop its cached pages. */
static void h5b_drop_cache(const h5b_opts_t *o, const h5b_ctx_t *x)
{
    const char *local = strncmp(o->path, "ufs:", 4) == 0 ? o->path + 4 : NULL;
    int fd;

    if (x->rank == 0 && local != NULL) {
        fd = open(local, O_RDONLY);
        if (fd >= 0) {
            if (fdatasync(fd) != 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
                fprintf(stderr, "pstripe-h5bench: drop cache %s: %s\n", local, strerror(errno));
            }
            close(fd);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* One phase; false when HDF5 failed on some process. */
static bool h5b_phase(const h5b_opts_t *o, h5b_ctx_t *x, bool write, h5b_result_t *res)
{
    hid_t file, dset, dxpl = H5Pcreate(H5P_DATASET_XFER);
    long long bad = 0, tot_bad = 0;
    double t0, t_open, t_end;
    bool ok;
    int lok, all_ok;
    hsize_t r0;

    H5Pset_dxpl_mpio(dxpl, o->collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
    x->ncalls = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    ok = h5b_open(o, x, write, &file, &dset);
    t_open = MPI_Wtime() - t0;
    for (r0 = 0; ok && r0 < x->count[0]; r0 += (hsize_t)o->band) {
        if (write && (o->verify || r0 == 0)) {
            h5b_band_data(o, x, r0, false);
        }
        ok = h5b_band_io(o, x, dset, dxpl, r0, write);
        if (ok && !write && o->verify) {
            bad += h5b_band_data(o, x, r0, true);
        }
    }
    if (ok && write && o->sync) {
        ok = H5Fflush(file, H5F_SCOPE_GLOBAL) >= 0;
    }
    if (ok) {
        ok = H5Dclose(dset) >= 0;
        ok = (H5Fclose(file) >= 0) && ok;
    }
    t_end = MPI_Wtime() - t0;
    H5Pclose(dxpl);
    lok = ok;
    MPI_Allreduce(&lok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Reduce(&t_end, &res->seconds, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t_open, &res->open_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &tot_bad, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    res->phase = write ? "write" : "read";
    res->bytes = o->rows * o->cols * (long long)sizeof(double);
    res->calls = x->ncalls * x->nprocs;
    res->errors = tot_bad;
    if (all_ok) {
        h5b_latency(x, res);
    }
    return all_ok;
}

static double h5b_mib_s(const h5b_result_t *r)
{
    return r->seconds > 0 ? (double)r->bytes / (1 << 20) / r->seconds : 0;
}

static void h5b_print(const h5b_opts_t *o, const h5b_result_t *r, int n)
{
    int i;

    if (o->quiet) {
        return;
    }
    printf("%-6s %10s %12s %10s %10s %10s %10s %8s\n", "phase", "MiB/s", "seconds", "open_s",
           "calls", "lat_med_ms", "lat_max_ms", "errors");
    for (i = 0; i < n; i++) {
        printf("%-6s %10.1f %12.4f %10.4f %10lld %10.3f %10.3f %8lld\n", r[i].phase,
               h5b_mib_s(&r[i]), r[i].seconds, r[i].open_seconds, r[i].calls, r[i].lat_median * 1e3,
               r[i].lat_max * 1e3, r[i].errors);
    }
}

static void h5b_json(const h5b_opts_t *o, const h5b_ctx_t *x, const h5b_result_t *r, int n)
{
    FILE *f = fopen(o->json, "w");
    long long xfer = o->band * (long long)x->count[1] * 8;
    /* contiguous piece of the file per call: a row of the column block in
     * the contiguous layout, else the whole band */
    long long region = (o->by_rows || o->chunked) ? xfer : (long long)x->count[1] * 8;
    int i;

    if (f == NULL) {
        fprintf(stderr, "pstripe-h5bench: %s: %s\n", o->json, strerror(errno));
        return;
    }
    fprintf(f,
            "{\n  \"program\": \"pstripe-h5bench\",\n  \"label\": \"%s\",\n"
            "  \"nprocs\": %d,\n  \"path\": \"%s\",\n  \"hdf5\": \"%d.%d.%d\",\n"
            "  \"rows\": %lld, \"cols\": %lld, \"band_rows\": %lld,\n"
            "  \"decomposition\": \"%s\", \"layout\": \"%s\",\n"
            "  \"results\": [",
            o->label, x->nprocs, o->path, H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE, o->rows,
            o->cols, o->band, o->by_rows ? "rows" : "cols", o->chunked ? "chunked" : "contig");
    for (i = 0; i < n; i++) {
        fprintf(f,
                "%s\n    {\"phase\": \"%s\", \"pattern\": \"hdf5-%s-%s\", "
                "\"collective\": %s, \"region\": %lld, \"xfer\": %lld, "
                "\"bytes\": %lld, \"calls\": %lld, \"seconds\": %.6f, "
                "\"open_seconds\": %.6f, \"mib_s\": %.3f, "
                "\"lat_min_s\": %.9f, \"lat_median_s\": %.9f, "
                "\"lat_p99_s\": %.9f, \"lat_max_s\": %.9f, \"errors\": %lld}",
                i ? "," : "", r[i].phase, o->by_rows ? "rows" : "cols",
                o->chunked ? "chunked" : "contig", o->collective ? "true" : "false", region, xfer,
                r[i].bytes, r[i].calls, r[i].seconds, r[i].open_seconds, h5b_mib_s(&r[i]),
                r[i].lat_min, r[i].lat_median, r[i].lat_p99, r[i].lat_max, r[i].errors);
    }
    fprintf(f, "\n  ]\n}\n");
    fclose(f);
}

/* Runs the phases; returns the exit status. */
static int h5b_run(const h5b_opts_t *o, h5b_ctx_t *x)
{
    h5b_result_t res[2];
    long long bad = 0;
    int n = 0;

    memset(res, 0, sizeof(res));
    if (o->do_write) {
        if (!h5b_phase(o, x, true, &res[n++])) {
            return 1;
        }
        if (o->drop_cache) {
            h5b_drop_cache(o, x);
        }
    }
    if (o->do_read) {
        if (!h5b_phase(o, x, false, &res[n])) {
            return 1;
        }
        bad = res[n++].errors;
    }
    if (x->rank == 0) {
        h5b_print(o, res, n);
        if (o->json != NULL) {
            h5b_json(o, x, res, n);
        }
        if (bad != 0) {
            fprintf(stderr, "pstripe-h5bench: %lld elements read wrong\n", bad);
        }
        if (!o->keep && o->do_write) {
            MPI_File_delete(o->path, MPI_INFO_NULL);
        }
    }
    MPI_Bcast(&bad, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    return bad != 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
    h5b_opts_t o;
    h5b_ctx_t x = {0};
    int rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &x.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &x.nprocs);
    rc = h5b_parse_args(&o, argc, argv);
    if (rc == 0 && !h5b_decompose(&o, &x)) {
        if (x.rank == 0) {
            fprintf(stderr,
                    "pstripe-h5bench: the %s (%lld) must divide among "
                    "%d processes and each block into bands of %lld "
                    "rows\n",
                    o.by_rows ? "rows" : "columns", o.by_rows ? o.rows : o.cols, x.nprocs, o.band);
        }
        rc = -1;
    }
    if (rc != 0) {
        if (rc < 0 && x.rank == 0) {
            h5b_usage();
        }
        MPI_Finalize();
        return rc < 0 ? 2 : 0;
    }
    x.buf = malloc(sizeof(double) * (size_t)o.band * x.count[1]);
    x.lat = malloc(sizeof(double) * (size_t)(x.count[0] / (hsize_t)o.band + 1));
    rc = h5b_run(&o, &x);
    if (rc != 0 && x.rank == 0) {
        fprintf(stderr, "pstripe-h5bench: %s failed\n", o.path);
    }
    free(x.buf);
    free(x.lat);
    MPI_Finalize();
    return rc;
}

/*
 * pstripe-bench: an IOR-style MPI-IO benchmark for contiguous, strided and
 * many-small-region access patterns.
 *
 * A run is a list of region sizes (-z) times iterations (-i); each runs the
 * phases asked for: write, read, reread. A phase opens the file (not timed),
 * then, between a barrier and the last process's end, issues every transfer,
 * syncs if asked (-e) and closes the file: the close is timed because a
 * driver that buffers writes flushes them there. Each MPI I/O call is timed
 * on its own for the latency figures.
 *
 * Verification (-V) writes data that depend on the file offset and checks
 * every byte read back; the time spent filling and checking is left out of
 * the bandwidth. Without -V the write buffer is filled once.
 *
 * A deadline (-D, IOR's stonewalling) ends a phase early: independent runs
 * stop on each process's clock and then let the slower ones catch up to the
 * same number of transfers (IOR's wear-out), collective runs agree on every
 * transfer. Read phases then read what was written.
 */
#include "psb.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PSB_MAX_RESULTS      4096

typedef struct {
    int rank, nprocs;
    MPI_Comm node_comm;
    psb_result_t results[PSB_MAX_RESULTS];
    int nresults;
    char *hints_effective; /* JSON object text, rank 0 */
    int64_t written;       /* transfers written by the last write phase */
    int errors;
} psb_state_t;

static psb_state_t psb_state;

static void psb_check_mpi(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (rc == MPI_SUCCESS) {
        return;
    }
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "pstripe-bench: rank %d: %s: %s\n", psb_state.rank, what,
            msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Local file behind a ROMIO name, or NULL when it is not a local file. */
static const char *psb_local_path(const char *path)
{
    const char *colon = strchr(path, ':');
    const char *slash = strchr(path, '/');

    if (colon == NULL || (slash != NULL && slash < colon)) {
        return path;
    }
    if (strncmp(path, "ufs:", 4) == 0 || strncmp(path, "nfs:", 4) == 0) {
        return colon + 1;
    }
    return NULL;
}

/* After a write phase: make a following read come from the disk. */
static void psb_drop_cache(const psb_opts_t *o)
{
    int node_rank;
    const char *local = psb_local_path(o->path);

    MPI_Comm_rank(psb_state.node_comm, &node_rank);
    if (local != NULL && node_rank == 0) {
        int fd = open(local, O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "pstripe-bench: --drop-cache: open %s: %s\n", local,
                    strerror(errno));
        } else {
            if (fdatasync(fd) != 0 ||
                posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
                fprintf(stderr, "pstripe-bench: --drop-cache on %s: %s\n", local,
                        strerror(errno));
            }
            close(fd);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void psb_record_hints(MPI_File fh)
{
    MPI_Info info;
    int nkeys, flag;
    char key[MPI_MAX_INFO_KEY + 1], val[1024];
    size_t cap = 4096, len = 0;
    char *s;

    if (psb_state.rank != 0 || psb_state.hints_effective != NULL) {
        return;
    }
    if (MPI_File_get_info(fh, &info) != MPI_SUCCESS) {
        return;
    }
    s = malloc(cap);
    len += (size_t)snprintf(s, cap, "{");
    MPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        MPI_Info_get_nthkey(info, i, key);
        MPI_Info_get(info, key, (int)sizeof(val) - 1, val, &flag);
        if (!flag) {
            continue;
        }
        while (len + strlen(key) + 2 * strlen(val) + 16 > cap) {
            cap *= 2;
            s = realloc(s, cap);
        }
        len += (size_t)snprintf(s + len, cap - len, "%s\"%s\": \"", i ? ", " : "",
                                key);
        for (const char *p = val; *p; p++) {
            if (*p == '"' || *p == '\\') {
                s[len++] = '\\';
            }
            s[len++] = *p;
        }
        s[len++] = '"';
        s[len] = '\0';
    }
    snprintf(s + len, cap - len, "}");
    psb_state.hints_effective = s;
    MPI_Info_free(&info);
}

typedef enum { PSB_WRITE, PSB_READ, PSB_REREAD } psb_phase_t;

static const char *psb_phase_names[] = {"write", "read", "reread"};

typedef struct {
    psb_lat_t lat;
    psb_lat_t starts; /* --trace: call start, seconds since t0 (rank 0) */
    bool trace;
    double t0;
    int64_t calls, regions, bad, first_bad;
    double excluded; /* seconds spent filling and checking */
} psb_counters_t;

static void psb_count_call(psb_counters_t *c, double start, double seconds)
{
    psb_lat_add(&c->lat, seconds);
    if (c->trace) {
        psb_lat_add(&c->starts, start - c->t0);
    }
    c->calls++;
}

/* One MPI I/O call, counted in c. */
static void psb_io(psb_counters_t *c, MPI_File fh, bool write, bool coll,
                   MPI_Offset off, void *buf, int count)
{
    MPI_Status st;
    int rc;
    double start = MPI_Wtime(), t;

    if (write) {
        rc = coll ? MPI_File_write_at_all(fh, off, buf, count, MPI_BYTE, &st)
                  : MPI_File_write_at(fh, off, buf, count, MPI_BYTE, &st);
    } else {
        rc = coll ? MPI_File_read_at_all(fh, off, buf, count, MPI_BYTE, &st)
                  : MPI_File_read_at(fh, off, buf, count, MPI_BYTE, &st);
    }
    t = MPI_Wtime() - start;
    psb_check_mpi(rc, write ? "write" : "read");
    psb_count_call(c, start, t);
}

/* Transfer number n of this process: fill, I/O call(s), check. */
static void psb_transfer(const psb_opts_t *o, const psb_layout_t *l, MPI_File fh,
                         bool write, int64_t n, unsigned char *buf,
                         psb_counters_t *c)
{
    int64_t q = n * l->xfer;
    double t;

    if (write && o->verify) {
        t = MPI_Wtime();
        psb_fill(l, o->seed, q, buf, l->xfer);
        c->excluded += MPI_Wtime() - t;
    }
    if (l->pattern == PSB_PATTERN_PER_REGION) {
        for (int64_t done = 0; done < l->xfer;) {
            int64_t run = psb_run_length(l, q + done, l->xfer - done);
            psb_io(c, fh, write, o->collective, psb_file_offset(l, q + done),
                   buf + done, (int)run);
            c->regions++;
            done += run;
        }
    } else {
        MPI_Offset off = l->pattern == PSB_PATTERN_CONTIG ? psb_file_offset(l, q)
                                                          : (MPI_Offset)q;
        psb_io(c, fh, write, o->collective, off, buf, (int)l->xfer);
        c->regions += psb_regions_in(l, q, l->xfer);
    }
    if (!write && o->verify) {
        int64_t fb = -1;
        t = MPI_Wtime();
        int64_t b = psb_check(l, o->seed, q, buf, l->xfer, &fb);
        if (b > 0 && c->bad == 0) {
            c->first_bad = fb;
        }
        c->bad += b;
        c->excluded += MPI_Wtime() - t;
    }
}

/*
 * A barrier that sleeps while it waits. A process that finished its
 * transfers first would otherwise spin in MPI_File_sync's or
 * MPI_File_close's collective (MPICH polls), taking a core from the
 * processes still writing and from the file system's own threads: on a
 * 2-core machine, a quarter of all CPU time went there in a 2-process
 * large write.
 */
static void psb_quiet_barrier(MPI_Comm comm)
{
    MPI_Request req;
    int done = 0;
    const struct timespec nap = {0, 50 * 1000};

    MPI_Ibarrier(comm, &req);
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done) {
            break;
        }
        nanosleep(&nap, NULL);
    }
}

static void psb_progress(const psb_opts_t *o, psb_phase_t phase,
                         const psb_layout_t *l, int64_t done, int64_t total,
                         double elapsed)
{
    char zb[32];
    double mib = (double)(done * l->xfer) / (1 << 20);

    fprintf(stderr,
            "[pstripe-bench] %s %s region %s: %" PRId64 "/%" PRId64
            " transfers (%.0f%%), %.1f MiB in %.1f s, %.1f MiB/s (rank 0)\n",
            psb_phase_names[phase], psb_pattern_name(o->pattern),
            psb_format_size(l->region, zb, sizeof(zb)), done, total,
            100.0 * (double)done / (double)total, mib, elapsed,
            elapsed > 0 ? mib / elapsed : 0.0);
}

static void psb_write_trace(const psb_opts_t *o, const psb_layout_t *l,
                            psb_phase_t phase, int iteration,
                            const psb_counters_t *c)
{
    char zb[32];
    FILE *f = fopen(o->trace_path, "a");

    if (f == NULL) {
        fprintf(stderr, "pstripe-bench: cannot append to %s: %s\n", o->trace_path,
                strerror(errno));
        return;
    }
    fprintf(f, "# label=%s phase=%s pattern=%s region=%s iteration=%d rank=0\n",
            o->label ? o->label : "", psb_phase_names[phase],
            psb_pattern_name(o->pattern),
            psb_format_size(l->region, zb, sizeof(zb)), iteration);
    for (size_t i = 0; i < c->lat.n; i++) {
        fprintf(f, "%.6f %.9f\n", c->starts.v[i], c->lat.v[i]);
    }
    fclose(f);
}

/*
 * The timed transfers of a phase, from c->t0: up to limit, or until the
 * deadline (-D) and then IOR's wear-out, everyone doing as many transfers
 * as the fastest. Returns how many this process did.
 */
static int64_t psb_transfers(const psb_opts_t *o, const psb_layout_t *l,
                             MPI_File fh, psb_phase_t phase, int64_t limit,
                             unsigned char *buf, psb_counters_t *c,
                             bool *stonewalled)
{
    bool write = phase == PSB_WRITE;
    double next_progress = o->progress > 0 ? c->t0 + o->progress : 1e300;
    MPI_Comm comm = MPI_COMM_WORLD;
    int64_t n;

    for (n = 0; n < limit; n++) {
        if (o->deadline > 0) {
            int expired = MPI_Wtime() - c->t0 > o->deadline;
            if (o->collective) {
                MPI_Allreduce(MPI_IN_PLACE, &expired, 1, MPI_INT, MPI_LOR, comm);
            }
            if (expired) {
                break;
            }
        }
        psb_transfer(o, l, fh, write, n, buf, c);
        if (psb_state.rank == 0 && MPI_Wtime() >= next_progress) {
            psb_progress(o, phase, l, n + 1, limit, MPI_Wtime() - c->t0);
            next_progress = MPI_Wtime() + o->progress;
        }
    }
    *stonewalled = false;
    if (o->deadline > 0) {
        /* Wear-out: everyone does as many transfers as the fastest. */
        int64_t most = n;
        MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT64_T, MPI_MAX, comm);
        *stonewalled = most < limit;
        for (; n < most; n++) {
            psb_transfer(o, l, fh, write, n, buf, c);
        }
    }
    return n;
}

/* Jiffies of all CPUs since boot: *busy (not idle, not iowait) and *total,
 * from the first line of /proc/stat; 0 if it cannot be read. */
static int psb_cpu_jiffies(uint64_t *busy, uint64_t *total)
{
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                       &v[3], &v[4], &v[5], &v[6], &v[7])
              : 0;

    if (f != NULL) {
        fclose(f);
    }
    if (n < 5) {
        return 0;
    }
    *total = 0;
    for (int i = 0; i < 8; i++) {
        *total += v[i];
    }
    *busy = *total - v[3] - v[4]; /* idle, iowait */
    return 1;
}

/* Rank 0: one result row from the reduced figures of a phase. */
/* A phase's times in seconds, each the slowest process's. */
typedef struct {
    double elapsed; /* the timed part: transfers, sync and close */
    double open;    /* open and set_view, before it */
    double sync;    /* the sync (-e) and close at its end */
} psb_times_t;

static void psb_record_result(const psb_opts_t *o, const psb_layout_t *l,
                              psb_phase_t phase, int iteration,
                              const int64_t sums[3], int64_t bad,
                              const psb_times_t *t, const psb_lat_stats_t *st,
                              bool stonewalled, double cpu_busy)
{
    if (psb_state.nresults == PSB_MAX_RESULTS) {
        fprintf(stderr, "pstripe-bench: too many results, not recording more\n");
        return;
    }
    psb_result_t *r = &psb_state.results[psb_state.nresults++];
    memset(r, 0, sizeof(*r));
    r->label = o->label;
    r->phase = psb_phase_names[phase];
    r->pattern = psb_pattern_name(o->pattern);
    r->mode = o->collective ? "collective" : "independent";
    r->iteration = iteration;
    r->nprocs = l->nprocs;
    r->gap = l->gap;
    r->block = l->block;
    r->xfer = l->xfer;
    r->region = psb_pattern_strided(l->pattern) ? l->region : l->xfer;
    r->segments = l->segments;
    r->bytes = sums[0];
    r->calls = sums[1];
    r->regions = sums[2];
    r->seconds = t->elapsed;
    r->open_seconds = t->open;
    r->sync_seconds = t->sync;
    if (t->elapsed > 0) {
        r->mib_s = (double)r->bytes / (1 << 20) / t->elapsed;
        r->ops_s = (double)r->calls / t->elapsed;
        r->regions_s = (double)r->regions / t->elapsed;
    }
    r->cpu_busy = cpu_busy;
    r->lat = *st;
    r->errors = o->verify && phase != PSB_WRITE ? bad : -1;
    r->stonewalled = stonewalled;
    if (!o->quiet) {
        psb_table_row(stdout, r);
    }
}

/*
 * --prefill: write the layout's whole extent once, untimed, each process an
 * equal contiguous share in calls of up to 4 MiB, so that the timed write
 * phase overwrites allocated blocks (fio's write jobs run on a file it has
 * laid out, so this is what their latency is comparable with).
 */
static void psb_prefill(const psb_opts_t *o, const psb_layout_t *l)
{
    const int64_t chunk = 4 << 20;
    int64_t extent = l->segments * (l->nprocs + l->gap) * l->block;
    int64_t share = (extent + l->nprocs - 1) / l->nprocs;
    int64_t lo = share * l->rank, hi = lo + share < extent ? lo + share : extent;
    unsigned char *buf = malloc((size_t)chunk);
    MPI_File fh;

    if (buf == NULL) {
        fprintf(stderr, "pstripe-bench: cannot allocate the prefill buffer\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Not zeros: a virtual disk may store zero blocks as holes. */
    memset(buf, 0xa5, (size_t)chunk);
    psb_check_mpi(MPI_File_open(MPI_COMM_WORLD, o->path,
                                MPI_MODE_CREATE | MPI_MODE_WRONLY, o->info, &fh),
                  "open (prefill)");
    for (int64_t off = lo; off < hi; off += chunk) {
        int n = (int)(hi - off < chunk ? hi - off : chunk);
        psb_check_mpi(MPI_File_write_at(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE),
                      "write (prefill)");
    }
    psb_check_mpi(MPI_File_sync(fh), "sync (prefill)");
    psb_check_mpi(MPI_File_close(&fh), "close (prefill)");
    free(buf);
}

static void psb_run_phase(const psb_opts_t *o, const psb_layout_t *l,
                          psb_phase_t phase, int iteration)
{
    bool write = phase == PSB_WRITE;
    int amode = write ? (MPI_MODE_CREATE | MPI_MODE_WRONLY) : MPI_MODE_RDONLY;
    int64_t ntrans = l->segments * (l->block / l->xfer);
    int64_t limit = ntrans, n;
    psb_times_t t;
    unsigned char *buf = NULL;
    psb_counters_t c = {.first_bad = -1};
    MPI_File fh;
    bool stonewalled;
    MPI_Comm comm = MPI_COMM_WORLD;

    if (!write && psb_state.written >= 0) {
        limit = psb_state.written; /* read what the write phase wrote */
    }
    if (posix_memalign((void **)&buf, 4096, (size_t)l->xfer) != 0) {
        fprintf(stderr, "pstripe-bench: cannot allocate %" PRId64 " bytes\n",
                l->xfer);
        MPI_Abort(comm, 1);
    }
    memset(buf, 0xa5, (size_t)l->xfer);
    if (write && !o->verify) {
        psb_fill(l, o->seed, 0, buf, l->xfer);
    }

    t.open = MPI_Wtime();
    psb_check_mpi(MPI_File_open(comm, o->path, amode, o->info, &fh), "open");
    psb_check_mpi(psb_set_view(fh, l, o->info), "set_view");
    t.open = MPI_Wtime() - t.open;
    psb_record_hints(fh);

    c.trace = o->trace_path != NULL && psb_state.rank == 0;
    MPI_Barrier(comm);
    uint64_t busy0 = 0, total0 = 0, busy1 = 0, total1 = 0;
    int cpu_ok = psb_state.rank == 0 && psb_cpu_jiffies(&busy0, &total0);
    c.t0 = MPI_Wtime();
    n = psb_transfers(o, l, fh, phase, limit, buf, &c, &stonewalled);
    psb_quiet_barrier(comm);
    t.sync = MPI_Wtime();
    if (write && o->fsync) {
        psb_check_mpi(MPI_File_sync(fh), "sync");
    }
    psb_check_mpi(MPI_File_close(&fh), "close");
    t.sync = MPI_Wtime() - t.sync;
    t.elapsed = MPI_Wtime() - c.t0 - c.excluded;
    cpu_ok = cpu_ok && psb_cpu_jiffies(&busy1, &total1) && total1 > total0;
    double cpu_busy = cpu_ok ? (double)(busy1 - busy0) / (double)(total1 - total0) : -1.0;
    free(buf);

    if (write) {
        psb_state.written = n;
    }
    int64_t bad = c.bad;
    if (bad > 0) {
        fprintf(stderr,
                "pstripe-bench: rank %d: %s: %" PRId64
                " wrong bytes, first at file offset %" PRId64 "\n",
                psb_state.rank, psb_phase_names[phase], bad, c.first_bad);
    }

    /* Reduce to rank 0. */
    int64_t sums[3] = {n * l->xfer, c.calls, c.regions};
    MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_INT64_T, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT64_T, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, &t.elapsed, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, &t.open, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, &t.sync, 1, MPI_DOUBLE, MPI_MAX, comm);
    psb_lat_stats_t st;
    psb_lat_reduce(&c.lat, comm, &st);
    if (c.trace) {
        psb_write_trace(o, l, phase, iteration, &c);
    }
    psb_lat_free(&c.lat);
    psb_lat_free(&c.starts);

    if (bad > 0) {
        psb_state.errors = 1;
    }
    if (psb_state.rank == 0) {
        psb_record_result(o, l, phase, iteration, sums, bad, &t, &st, stonewalled,
                          cpu_busy);
    }
}

static void psb_write_json(const psb_opts_t *o, const char *command,
                           const char *library)
{
    FILE *f = fopen(o->json_path, "w");
    int nkeys;
    char key[MPI_MAX_INFO_KEY + 1], val[1024];
    int flag;

    if (f == NULL) {
        fprintf(stderr, "pstripe-bench: cannot write %s: %s\n", o->json_path,
                strerror(errno));
        psb_state.errors = 1;
        return;
    }
    fprintf(f, "{\n  \"program\": \"pstripe-bench\",\n  \"command\": ");
    psb_json_string(f, command);
    fprintf(f, ",\n  \"mpi_library\": ");
    psb_json_string(f, library);
    fprintf(f, ",\n  \"path\": ");
    psb_json_string(f, o->path);
    fprintf(f, ",\n  \"nprocs\": %d,\n  \"hints\": {", psb_state.nprocs);
    MPI_Info_get_nkeys(o->info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        MPI_Info_get_nthkey(o->info, i, key);
        MPI_Info_get(o->info, key, (int)sizeof(val) - 1, val, &flag);
        fprintf(f, "%s", i ? ", " : "");
        psb_json_string(f, key);
        fprintf(f, ": ");
        psb_json_string(f, flag ? val : "");
    }
    fprintf(f, "},\n  \"hints_effective\": %s,\n  \"results\": [\n",
            psb_state.hints_effective ? psb_state.hints_effective : "{}");
    for (int i = 0; i < psb_state.nresults; i++) {
        psb_json_row(f, &psb_state.results[i]);
        fprintf(f, "%s\n", i + 1 < psb_state.nresults ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    if (fclose(f) != 0) {
        psb_state.errors = 1;
    }
}

static void psb_write_csv(const psb_opts_t *o)
{
    FILE *f = fopen(o->csv_path, "w");

    if (f == NULL) {
        fprintf(stderr, "pstripe-bench: cannot write %s: %s\n", o->csv_path,
                strerror(errno));
        psb_state.errors = 1;
        return;
    }
    psb_csv_header(f);
    for (int i = 0; i < psb_state.nresults; i++) {
        psb_csv_row(f, &psb_state.results[i]);
    }
    if (fclose(f) != 0) {
        psb_state.errors = 1;
    }
}

static char *psb_join_args(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++) {
        len += strlen(argv[i]) + 1;
    }
    char *cmd = calloc(1, len);
    for (int i = 0; cmd != NULL && i < argc; i++) {
        strcat(cmd, argv[i]);
        if (i + 1 < argc) {
            strcat(cmd, " ");
        }
    }
    return cmd;
}

int main(int argc, char **argv)
{
    psb_opts_t o;
    char library[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &psb_state.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &psb_state.nprocs);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                        &psb_state.node_comm);
    char *command = psb_join_args(argc, argv); /* before getopt permutes argv */
    psb_parse_args(&o, argc, argv);
    MPI_Get_library_version(library, &len);
    char *nl = strchr(library, '\n');
    if (nl != NULL) {
        *nl = '\0';
    }

    if (psb_state.rank == 0 && !o.quiet) {
        char bb[32], tb[32];
        int64_t total = o.block * o.segments * psb_state.nprocs;
        printf("pstripe-bench: %s, %d processes, %s access, pattern %s\n", o.path,
               psb_state.nprocs, o.collective ? "collective" : "independent",
               psb_pattern_name(o.pattern));
        printf("  block %s x %" PRId64 " segments per process, transfer %s, "
               "%.1f MiB in all, gap %d%s%s\n",
               psb_format_size(o.block, bb, sizeof(bb)), o.segments,
               psb_format_size(o.xfer, tb, sizeof(tb)),
               (double)total / (1 << 20), o.gap, o.verify ? ", verify" : "",
               o.fsync ? ", fsync" : "");
        printf("  MPI: %s\n", library);
        psb_table_header(stdout);
        fflush(stdout);
    }

    for (int zi = 0; zi < o.nregions; zi++) {
        psb_layout_t l = {
            .rank = psb_state.rank,
            .nprocs = psb_state.nprocs,
            .gap = o.gap,
            .block = o.block,
            .xfer = o.xfer,
            .region = o.regions[zi],
            .segments = o.segments,
            .pattern = o.pattern,
        };
        for (int it = 0; it < o.iterations; it++) {
            psb_state.written = -1;
            if (o.do_write) {
                if (o.prefill) {
                    psb_prefill(&o, &l);
                }
                psb_run_phase(&o, &l, PSB_WRITE, it);
                if (o.drop_cache) {
                    psb_drop_cache(&o);
                }
            }
            if (o.do_read) {
                psb_run_phase(&o, &l, PSB_READ, it);
            }
            if (o.do_reread) {
                psb_run_phase(&o, &l, PSB_REREAD, it);
            }
            if (!o.keep && o.do_write) {
                MPI_Barrier(MPI_COMM_WORLD);
                if (psb_state.rank == 0) {
                    MPI_File_delete(o.path, MPI_INFO_NULL);
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
    }

    if (o.verbose && psb_state.rank == 0 && psb_state.hints_effective) {
        printf("effective hints: %s\n", psb_state.hints_effective);
    }
    if (psb_state.rank == 0) {
        if (o.json_path != NULL) {
            psb_write_json(&o, command, library);
        }
        if (o.csv_path != NULL) {
            psb_write_csv(&o);
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &psb_state.errors, 1, MPI_INT, MPI_MAX,
                  MPI_COMM_WORLD);
    int status = psb_state.errors ? 1 : 0;
    free(psb_state.hints_effective);
    free(command);
    MPI_Info_free(&o.info);
    MPI_Comm_free(&psb_state.node_comm);
    MPI_Finalize();
    return status;
}

/*
 * psb_report.c: latency statistics and the table, CSV and JSON outputs.
 */
#include "psb.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void psb_lat_add(psb_lat_t *lat, double seconds)
{
    if (lat->n == lat->cap) {
        size_t cap = lat->cap ? lat->cap * 2 : 4096;
        float *v = realloc(lat->v, cap * sizeof(*v));
        if (v == NULL) {
            fprintf(stderr, "pstripe-bench: out of memory for %zu latency samples\n",
                    cap);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        lat->v = v;
        lat->cap = cap;
    }
    lat->v[lat->n++] = (float)seconds;
}

void psb_lat_free(psb_lat_t *lat)
{
    free(lat->v);
    lat->v = NULL;
    lat->n = lat->cap = 0;
}

static int psb_float_cmp(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted samples. */
static double psb_percentile(const float *v, size_t n, double p)
{
    if (n == 0) {
        return 0.0;
    }
    size_t idx = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (idx < 1) {
        idx = 1;
    }
    if (idx > n) {
        idx = n;
    }
    return v[idx - 1];
}

void psb_lat_reduce(const psb_lat_t *lat, MPI_Comm comm, psb_lat_stats_t *st)
{
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);

    int n = (int)lat->n;
    int *counts = NULL, *displs = NULL;
    float *all = NULL;
    size_t total = 0;

    if (rank == 0) {
        counts = calloc((size_t)nprocs, sizeof(*counts));
        displs = calloc((size_t)nprocs, sizeof(*displs));
    }
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
    if (rank == 0) {
        for (int i = 0; i < nprocs; i++) {
            displs[i] = (int)total;
            total += (size_t)counts[i];
        }
        all = malloc((total ? total : 1) * sizeof(*all));
        if (all == NULL) {
            fprintf(stderr, "pstripe-bench: out of memory gathering latencies\n");
            MPI_Abort(comm, 1);
        }
    }
    MPI_Gatherv(lat->v, n, MPI_FLOAT, all, counts, displs, MPI_FLOAT, 0, comm);
    if (rank == 0) {
        memset(st, 0, sizeof(*st));
        if (total > 0) {
            double sum = 0;
            qsort(all, total, sizeof(*all), psb_float_cmp);
            for (size_t i = 0; i < total; i++) {
                sum += all[i];
            }
            st->min = all[0];
            st->max = all[total - 1];
            st->median = psb_percentile(all, total, 50.0);
            st->p99 = psb_percentile(all, total, 99.0);
            st->mean = sum / (double)total;
        }
        free(all);
        free(counts);
        free(displs);
    }
}

int psb_parse_size(const char *s, int64_t *out)
{
    char *end;
    double v = strtod(s, &end);
    int64_t mult = 1;

    if (end == s || v < 0) {
        return -1;
    }
    switch (tolower((unsigned char)*end)) {
    case 'k': mult = 1LL << 10; end++; break;
    case 'm': mult = 1LL << 20; end++; break;
    case 'g': mult = 1LL << 30; end++; break;
    case 't': mult = 1LL << 40; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I') {
        end++;
    }
    if (*end == 'b' || *end == 'B') {
        end++;
    }
    if (*end != '\0') {
        return -1;
    }
    *out = (int64_t)(v * (double)mult + 0.5);
    return 0;
}

const char *psb_format_size(int64_t v, char *buf, size_t len)
{
    static const char units[] = "kmgt";
    int u = -1;

    while (v >= 1024 && v % 1024 == 0 && u < 3) {
        v /= 1024;
        u++;
    }
    if (u < 0) {
        snprintf(buf, len, "%" PRId64, v);
    } else {
        snprintf(buf, len, "%" PRId64 "%c", v, units[u]);
    }
    return buf;
}

void psb_table_header(FILE *f)
{
    fprintf(f, "%-8s %-10s %-4s %7s %7s %6s %10s %10s %12s %9s %9s %9s %9s %s\n",
            "phase", "pattern", "mode", "region", "xfer", "procs", "MiB/s",
            "ops/s", "regions/s", "lat_min", "lat_med", "lat_p99", "lat_max",
            "check");
    fprintf(f, "%-8s %-10s %-4s %7s %7s %6s %10s %10s %12s %9s %9s %9s %9s\n",
            "", "", "", "", "", "", "", "", "", "(ms)", "(ms)", "(ms)", "(ms)");
}

void psb_table_row(FILE *f, const psb_result_t *r)
{
    char zb[32], tb[32], check[48];

    if (r->errors < 0) {
        snprintf(check, sizeof(check), "-");
    } else if (r->errors == 0) {
        snprintf(check, sizeof(check), "ok");
    } else {
        snprintf(check, sizeof(check), "BAD(%" PRId64 ")", r->errors);
    }
    fprintf(f,
            "%-8s %-10s %-4s %7s %7s %6d %10.1f %10.0f %12.0f %9.3f %9.3f %9.3f "
            "%9.3f %s%s\n",
            r->phase, r->pattern, strcmp(r->mode, "collective") == 0 ? "coll" : "ind",
            strcmp(r->pattern, "contig") != 0
                ? psb_format_size(r->region, zb, sizeof(zb))
                : "-",
            psb_format_size(r->xfer, tb, sizeof(tb)), r->nprocs, r->mib_s,
            r->ops_s, r->regions_s, r->lat.min * 1e3, r->lat.median * 1e3,
            r->lat.p99 * 1e3, r->lat.max * 1e3, check,
            r->stonewalled ? " (deadline)" : "");
    fflush(f);
}

void psb_csv_header(FILE *f)
{
    fprintf(f, "label,iteration,phase,pattern,mode,nprocs,gap,block,xfer,region,"
               "segments,bytes,calls,regions,seconds,open_seconds,mib_s,ops_s,regions_s,"
               "lat_min_s,lat_median_s,lat_p99_s,lat_max_s,lat_mean_s,errors,"
               "stonewalled,sync_seconds\n");
}

void psb_csv_row(FILE *f, const psb_result_t *r)
{
    fprintf(f,
            "%s,%d,%s,%s,%s,%d,%d,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
            ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%.6f,%.6f,%.3f,%.1f,%.1f,%.9f,%.9f,"
            "%.9f,%.9f,%.9f,%" PRId64 ",%d,%.6f\n",
            r->label ? r->label : "", r->iteration, r->phase, r->pattern, r->mode,
            r->nprocs, r->gap, r->block, r->xfer, r->region, r->segments,
            r->bytes, r->calls, r->regions, r->seconds, r->open_seconds, r->mib_s, r->ops_s,
            r->regions_s, r->lat.min, r->lat.median, r->lat.p99, r->lat.max,
            r->lat.mean, r->errors, r->stonewalled, r->sync_seconds);
}

void psb_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}

void psb_json_row(FILE *f, const psb_result_t *r)
{
    fprintf(f, "    {\"label\": ");
    psb_json_string(f, r->label ? r->label : "");
    fprintf(f, ", \"iteration\": %d, \"phase\": \"%s\", \"pattern\": \"%s\", "
               "\"mode\": \"%s\",\n",
            r->iteration, r->phase, r->pattern, r->mode);
    fprintf(f,
            "     \"nprocs\": %d, \"gap\": %d, \"block\": %" PRId64
            ", \"xfer\": %" PRId64 ", \"region\": %" PRId64
            ", \"segments\": %" PRId64 ",\n",
            r->nprocs, r->gap, r->block, r->xfer, r->region, r->segments);
    fprintf(f,
            "     \"bytes\": %" PRId64 ", \"calls\": %" PRId64
            ", \"regions\": %" PRId64 ", \"seconds\": %.6f, \"open_seconds\": %.6f,"
            " \"sync_seconds\": %.6f,\n",
            r->bytes, r->calls, r->regions, r->seconds, r->open_seconds, r->sync_seconds);
    fprintf(f,
            "     \"mib_s\": %.3f, \"ops_s\": %.1f, \"regions_s\": %.1f, \"cpu_busy\": %.3f,\n",
            r->mib_s, r->ops_s, r->regions_s, r->cpu_busy);
    fprintf(f,
            "     \"lat_min_s\": %.9f, \"lat_median_s\": %.9f, \"lat_p99_s\": "
            "%.9f, \"lat_max_s\": %.9f, \"lat_mean_s\": %.9f,\n",
            r->lat.min, r->lat.median, r->lat.p99, r->lat.max, r->lat.mean);
    fprintf(f, "     \"errors\": %" PRId64 ", \"stonewalled\": %s}", r->errors,
            r->stonewalled ? "true" : "false");
}

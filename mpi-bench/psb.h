/*
 * psb.h: pieces of pstripe-bench, the IOR-style MPI-IO benchmark.
 *
 * The benchmark is a plain MPI program (system mpicc); it knows nothing of
 * pstripe beyond the file name prefix it is given, so the same binary runs on
 * "pstripe:", "ufs:" or any other ROMIO file system.
 */
#ifndef PSB_H
#define PSB_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How a process's data is laid out in the file and how it is accessed. */
typedef enum {
    PSB_PATTERN_CONTIG,     /* IOR segmented blocks, contiguous transfers */
    PSB_PATTERN_VECTOR,     /* strided regions through an MPI_Type_vector view */
    PSB_PATTERN_SUBARRAY,   /* the same regions through a 2-D subarray view */
    PSB_PATTERN_INDEXED,    /* the same regions through an indexed-block view */
    PSB_PATTERN_PER_REGION, /* the same regions, one MPI_File_*_at per region */
    PSB_PATTERN_LAST
} psb_pattern_t;

/*
 * The file layout, IOR's segmented layout refined into regions.
 *
 * Each process owns `block` bytes of every segment; a segment holds
 * (nprocs + gap) slots of `block` bytes. A process moves its block in
 * transfers of `xfer` bytes (one MPI call each, except per-region).
 *
 * Contiguous: process r's block of segment k is at (k*(P+G) + r) * block.
 * Strided: the block is cut into regions of `region` bytes, interleaved with
 * the other processes' regions (and G empty slots) at region granularity:
 * region i of process r in segment k is at
 *     k*(P+G)*block + (i*(P+G) + r) * region.
 * With G = 0 the processes' regions tile the file without holes (good for
 * collective buffering); G > 0 leaves holes, so that even one process has a
 * noncontiguous pattern.
 */
typedef struct {
    int rank;
    int nprocs;
    int gap;          /* empty slots per row (G) */
    int64_t block;    /* bytes per process per segment */
    int64_t xfer;     /* bytes per transfer */
    int64_t region;   /* region size of strided patterns */
    int64_t segments;
    psb_pattern_t pattern;
} psb_layout_t;

const char *psb_pattern_name(psb_pattern_t pattern);
int psb_pattern_parse(const char *name, psb_pattern_t *pattern);
int psb_pattern_strided(psb_pattern_t pattern);

/* File offset of byte q of this process's data (q < segments * block). */
int64_t psb_file_offset(const psb_layout_t *l, int64_t q);

/* Bytes from data offset q that are contiguous in the file (<= max). */
int64_t psb_run_length(const psb_layout_t *l, int64_t q, int64_t max);

/* Regions (contiguous file pieces) in the transfer starting at data offset q. */
int64_t psb_regions_in(const psb_layout_t *l, int64_t q, int64_t len);

/*
 * Set the file view of a strided view pattern (vector, subarray, indexed):
 * afterwards byte q of the process's data is at view offset q. Contiguous and
 * per-region patterns keep the default byte view and use file offsets.
 * Returns an MPI error code.
 */
int psb_set_view(MPI_File fh, const psb_layout_t *l, MPI_Info info);

/* Fill buf with the data that belongs at data offsets [q, q + len). */
void psb_fill(const psb_layout_t *l, uint64_t seed, int64_t q,
              unsigned char *buf, int64_t len);

/*
 * Compare buf with the data expected at [q, q + len). Returns the number of
 * wrong bytes; *first_bad gets the file offset of the first one.
 */
int64_t psb_check(const psb_layout_t *l, uint64_t seed, int64_t q,
                  const unsigned char *buf, int64_t len, int64_t *first_bad);

/* --- latency samples and results --------------------------------------- */

typedef struct {
    float *v; /* seconds per MPI I/O call */
    size_t n;
    size_t cap;
} psb_lat_t;

void psb_lat_add(psb_lat_t *lat, double seconds);
void psb_lat_free(psb_lat_t *lat);

typedef struct {
    double min, median, p99, max, mean; /* seconds */
} psb_lat_stats_t;

/*
 * Gather every process's samples on rank 0 and compute the statistics there
 * (collective; the result is valid on rank 0 only).
 */
void psb_lat_reduce(const psb_lat_t *lat, MPI_Comm comm, psb_lat_stats_t *st);

/* One row of results: a phase (write, read, reread) of one run. */
typedef struct {
    const char *label;
    const char *phase;
    const char *pattern;
    const char *mode; /* "independent" or "collective" */
    int iteration;
    int nprocs;
    int gap;
    int64_t block, xfer, region, segments;
    int64_t bytes;   /* all processes */
    int64_t calls;   /* MPI I/O calls, all processes */
    int64_t regions; /* contiguous file regions, all processes */
    double seconds;  /* first start to last end, sync and close included */
    double sync_seconds; /* of seconds: the sync (-e) and close after the transfers,
                            slowest process */
    double open_seconds; /* open + set_view, slowest process (not in seconds) */
    double mib_s, ops_s, regions_s;
    double cpu_busy; /* the machine's CPUs busy (not idle or iowait) over the timed
                        part, verification included, 0..1 (/proc/stat; -1: not read) */
    psb_lat_stats_t lat;
    int64_t errors; /* verification: wrong bytes (-1: not verified) */
    int stonewalled;
} psb_result_t;

void psb_table_header(FILE *f);
void psb_table_row(FILE *f, const psb_result_t *r);
void psb_csv_header(FILE *f);
void psb_csv_row(FILE *f, const psb_result_t *r);
void psb_json_row(FILE *f, const psb_result_t *r);
void psb_json_string(FILE *f, const char *s);

/* Parse "4k", "1m", "2g", "512" (binary units). Returns 0 on success. */
int psb_parse_size(const char *s, int64_t *out);
/* Format bytes as "4k", "1m" when exact, else decimal. */
const char *psb_format_size(int64_t v, char *buf, size_t len);

/* --- the command line (psb_args.c) --- */

#define PSB_MAX_REGION_SIZES 64

/* The options of a run. */
typedef struct {
    const char *path;
    int64_t block;
    int64_t xfer;
    int64_t segments;
    int64_t regions[PSB_MAX_REGION_SIZES];
    int nregions;
    psb_pattern_t pattern;
    int gap;
    bool collective;
    bool do_write, do_read, do_reread;
    bool verify, fsync, keep, drop_cache, prefill, quiet, verbose;
    int iterations;
    double deadline;
    double progress;
    uint64_t seed;
    const char *json_path;
    const char *csv_path;
    const char *label;
    const char *trace_path;
    MPI_Info info;
} psb_opts_t;

/* Parse the command line into o (o->info created here). Ends the program
 * (exit status 0 for -h, 2 for a usage error, said by rank 0) when it is
 * not a run. */
void psb_parse_args(psb_opts_t *o, int argc, char **argv);

#endif

/*
 * psb_args.c: the command line of pstripe-bench: options, hints (-H, -U),
 * region size lists (-z) and the checks between options. Apart from the run
 * itself (psb_main.c) because it is the part a new option touches.
 */
#include "psb.h"

#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int psb_rank(void)
{
    int rank = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static void psb_usage(FILE *f)
{
    fprintf(f,
"Usage: pstripe-bench [options] -o FILE\n"
"IOR-style MPI-IO benchmark. FILE carries its ROMIO prefix: pstripe:/f, ufs:/path.\n"
"\n"
"Sizes accept k, m, g suffixes (binary).\n"
"  -o FILE      test file (required)\n"
"  -b SIZE      block: bytes per process per segment (default 16m)\n"
"  -t SIZE      transfer: bytes per MPI I/O call (default 1m)\n"
"  -s N         segments (default 1)\n"
"  -p PATTERN   contig | vector | subarray | indexed | per-region (default contig)\n"
"               strided patterns put region i of process r of segment k at\n"
"               k*(P+G)*block + (i*(P+G)+r)*region; per-region issues one\n"
"               MPI_File_*_at per region of that same layout\n"
"  -z LIST      region sizes for strided patterns: 8,64,4k or A:B[:F] (A, A*F,\n"
"               ... up to B; F defaults to 2); each is a separate run (default 4k)\n"
"  -G N         empty region slots per row, so that even 1 process has holes (default 0)\n"
"  -c           collective I/O (MPI_File_*_at_all); default independent\n"
"  -w -r -R     phases: write, read, reread (default -w -r)\n"
"  -V           verify: write offset-dependent data and check every byte read\n"
"  -e           MPI_File_sync at the end of the write phase (timed)\n"
"  -i N         iterations (default 1)\n"
"  -D SEC       deadline per phase (stonewalling), 0 = none\n"
"  -k           keep the file (default: delete at the end)\n"
"  -H KEY=VAL   MPI_Info hint (repeatable)\n"
"  -U FILE      hints file: KEY=VALUE or KEY VALUE lines, # comments\n"
"  --prefill    write the whole file once before the first write phase, untimed,\n"
"               so that timed writes overwrite allocated blocks (as fio's do)\n"
"  --drop-cache after the write phase, flush and drop the file's page cache\n"
"               (local files only: ufs:, nfs: or no prefix) so read is cold\n"
"  --json FILE  write results as JSON; --csv FILE as CSV\n"
"  --label STR  label stored with every result row\n"
"  --trace FILE append rank 0's per-call start time and latency (seconds) to FILE\n"
"  --progress SEC  progress line on stderr every SEC seconds (default 5, 0 = off)\n"
"  --seed N     data seed for verification (default 1)\n"
"  -q           no table; -v: print effective hints\n"
"  -h           this help\n");
}

/* Report a bad command line (rank 0) and end the program with status 2. */
static void psb_die(const char *fmt, const char *arg)
{
    if (psb_rank() == 0) {
        fprintf(stderr, "pstripe-bench: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\n");
    }
    MPI_Finalize();
    exit(2);
}

static void psb_add_hint(psb_opts_t *o, char *kv, const char *origin)
{
    char *eq = strchr(kv, '=');
    char *key = kv, *val;

    if (eq == NULL) {
        /* "key value" (ROMIO hints-file style) */
        eq = strpbrk(kv, " \t");
    }
    if (eq == NULL) {
        psb_die("hint without a value: %s (want KEY=VALUE)", origin);
    }
    *eq = '\0';
    val = eq + 1;
    while (*val == ' ' || *val == '\t') {
        val++;
    }
    size_t n = strlen(key);
    while (n > 0 && (key[n - 1] == ' ' || key[n - 1] == '\t')) {
        key[--n] = '\0';
    }
    n = strlen(val);
    while (n > 0 && (val[n - 1] == ' ' || val[n - 1] == '\t' ||
                     val[n - 1] == '\n' || val[n - 1] == '\r')) {
        val[--n] = '\0';
    }
    if (*key == '\0' || *val == '\0') {
        psb_die("bad hint: %s", origin);
    }
    MPI_Info_set(o->info, key, val);
}

static void psb_read_hints_file(psb_opts_t *o, const char *path)
{
    char line[1024];
    FILE *f = fopen(path, "r");

    if (f == NULL) {
        psb_die("cannot open hints file %s", path);
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *p = line;
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0') {
            continue;
        }
        psb_add_hint(o, p, line);
    }
    fclose(f);
}

static void psb_parse_regions(psb_opts_t *o, const char *arg)
{
    char *copy = strdup(arg), *save = NULL;

    o->nregions = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        char *c1 = strchr(tok, ':');
        int64_t a, b, f = 2;
        if (c1 == NULL) {
            if (psb_parse_size(tok, &a) != 0 || a <= 0) {
                psb_die("bad region size: %s", tok);
            }
            b = a;
        } else {
            *c1 = '\0';
            char *c2 = strchr(c1 + 1, ':');
            if (c2 != NULL) {
                *c2 = '\0';
                if (psb_parse_size(c2 + 1, &f) != 0 || f < 2) {
                    psb_die("bad region factor: %s", c2 + 1);
                }
            }
            if (psb_parse_size(tok, &a) != 0 || a <= 0 ||
                psb_parse_size(c1 + 1, &b) != 0 || b < a) {
                psb_die("bad region range: %s", arg);
            }
        }
        for (int64_t v = a; v <= b; v *= f) {
            if (o->nregions == PSB_MAX_REGION_SIZES) {
                psb_die("too many region sizes: %s", arg);
            }
            o->regions[o->nregions++] = v;
        }
    }
    free(copy);
    if (o->nregions == 0) {
        psb_die("no region sizes in %s", arg);
    }
}

static int64_t psb_size_arg(const char *s, const char *what)
{
    int64_t v;
    if (psb_parse_size(s, &v) != 0 || v <= 0) {
        psb_die(what, s);
    }
    return v;
}

enum { OPT_JSON = 256, OPT_CSV, OPT_LABEL, OPT_PROGRESS, OPT_SEED, OPT_DROP,
       OPT_TRACE, OPT_PREFILL };

/* One option (getopt_long's c and optarg); -h and unknown options end the
 * program with the usage. */
static void psb_set_opt(psb_opts_t *o, int c, char *arg)
{
    switch (c) {
    case 'o': o->path = arg; break;
    case 'b': o->block = psb_size_arg(arg, "bad block size: %s"); break;
    case 't': o->xfer = psb_size_arg(arg, "bad transfer size: %s"); break;
    case 's': o->segments = psb_size_arg(arg, "bad segment count: %s"); break;
    case 'p':
        if (psb_pattern_parse(arg, &o->pattern) != 0) {
            psb_die("unknown pattern: %s", arg);
        }
        break;
    case 'z': psb_parse_regions(o, arg); break;
    case 'G': o->gap = atoi(arg); break;
    case 'c': o->collective = true; break;
    case 'w': o->do_write = true; break;
    case 'r': o->do_read = true; break;
    case 'R': o->do_reread = true; break;
    case 'V': o->verify = true; break;
    case 'e': o->fsync = true; break;
    case 'i': o->iterations = atoi(arg); break;
    case 'D': o->deadline = atof(arg); break;
    case 'k': o->keep = true; break;
    case 'H': psb_add_hint(o, arg, arg); break;
    case 'U': psb_read_hints_file(o, arg); break;
    case 'q': o->quiet = true; break;
    case 'v': o->verbose = true; break;
    case OPT_JSON: o->json_path = arg; break;
    case OPT_CSV: o->csv_path = arg; break;
    case OPT_LABEL: o->label = arg; break;
    case OPT_PROGRESS: o->progress = atof(arg); break;
    case OPT_SEED: o->seed = strtoull(arg, NULL, 0); break;
    case OPT_DROP: o->drop_cache = true; break;
    case OPT_TRACE: o->trace_path = arg; break;
    case OPT_PREFILL: o->prefill = true; break;
    default:
        if (psb_rank() == 0) {
            psb_usage(c == 'h' ? stdout : stderr);
        }
        MPI_Finalize();
        exit(c == 'h' ? 0 : 2);
    }
}

/* The options must agree with each other; dies saying why if not. */
static void psb_check_opts(psb_opts_t *o)
{
    int nprocs;

    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (o->path == NULL) {
        psb_die("%s", "no test file (-o FILE)");
    }
    if (!o->do_write && !o->do_read && !o->do_reread) {
        o->do_write = o->do_read = true;
    }
    if (o->iterations < 1 || o->gap < 0) {
        psb_die("%s", "bad -i or -G");
    }
    if (o->xfer > INT_MAX) {
        psb_die("%s", "transfer size must be below 2 GiB");
    }
    if (o->block % o->xfer != 0) {
        psb_die("%s", "block size must be a multiple of the transfer size");
    }
    if (!psb_pattern_strided(o->pattern)) {
        o->nregions = 1;
        o->regions[0] = o->xfer;
    }
    for (int i = 0; i < o->nregions; i++) {
        int64_t z = o->regions[i];
        char zb[32];
        if (o->block % z != 0 || (o->xfer % z != 0 && z % o->xfer != 0)) {
            psb_die("region size %s must divide the block, and divide or be a "
                    "multiple of the transfer size",
                    psb_format_size(z, zb, sizeof(zb)));
        }
        if ((o->xfer > z ? o->xfer : z) * (int64_t)(nprocs + o->gap) >
            INT_MAX) {
            psb_die("region or transfer too large for %s processes",
                    "this many");
        }
    }
}

void psb_parse_args(psb_opts_t *o, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", required_argument, NULL, OPT_JSON},
        {"csv", required_argument, NULL, OPT_CSV},
        {"label", required_argument, NULL, OPT_LABEL},
        {"progress", required_argument, NULL, OPT_PROGRESS},
        {"seed", required_argument, NULL, OPT_SEED},
        {"drop-cache", no_argument, NULL, OPT_DROP},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"prefill", no_argument, NULL, OPT_PREFILL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    memset(o, 0, sizeof(*o));
    o->block = 16 << 20;
    o->xfer = 1 << 20;
    o->segments = 1;
    o->regions[0] = 4096;
    o->nregions = 1;
    o->pattern = PSB_PATTERN_CONTIG;
    o->iterations = 1;
    o->progress = 5.0;
    o->seed = 1;
    MPI_Info_create(&o->info);

    while ((c = getopt_long(argc, argv, "o:b:t:s:p:z:G:cwrRVei:D:kH:U:qvh",
                            longopts, NULL)) != -1) {
        psb_set_opt(o, c, optarg);
    }
    if (optind < argc) {
        psb_die("unexpected argument: %s", argv[optind]);
    }
    psb_check_opts(o);
}

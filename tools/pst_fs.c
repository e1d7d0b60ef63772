/*
 * pst_fs.c: the subcommands that talk to a cluster and are one library call
 * or a loop of them: ls, stat, rm, truncate, df, stats, config.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ps_config.h"
#include "ps_layout.h"
#include "pst_tool.h"

/* Parse only global options and --help; for commands without options. */
int pst_parse_no_opts(pst_ctx_t *ctx, int argc, char **argv)
{
    static const struct option opts[] = {PST_GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};
    int c, ret;

    while ((c = getopt_long(argc, argv, PST_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
        if ((ret = pst_global_opt(ctx, c, optarg)) != PST_CONTINUE) {
            return ret;
        }
    }
    return PST_CONTINUE;
}

int pst_for_each_path(pst_ctx_t *ctx, int argc, char **argv, pst_path_fn_t fn, void *arg)
{
    pstripe_fs_t *fs;
    int ret = PST_EXIT_OK;

    if (optind >= argc) {
        return pst_usage_error(ctx, "missing PATH");
    }
    if (pst_connect(ctx, &fs) != PS_OK) {
        return PST_EXIT_ERROR;
    }
    for (int i = optind; i < argc; i++) {
        if (fn(ctx, fs, pst_fs_path(argv[i]), arg) != PS_OK) {
            ret = PST_EXIT_ERROR;
        }
    }
    pstripe_disconnect(fs);
    return ret;
}

/* "alice    users   ": the names of uid and gid (their numbers if unknown here). */
static void pst_format_owner(uint32_t uid, uint32_t gid, char *buf, size_t len)
{
    struct passwd *pw = getpwuid((uid_t)uid);
    struct group *gr = getgrgid((gid_t)gid);
    char u[32], g[32];

    snprintf(u, sizeof(u), "%" PRIu32, uid);
    snprintf(g, sizeof(g), "%" PRIu32, gid);
    snprintf(buf, len, "%-8s %-8s", pw != NULL ? pw->pw_name : u, gr != NULL ? gr->gr_name : g);
}

static void pst_format_mode(uint32_t mode, char *buf)
{
    static const char rwx[] = "rwxrwxrwx";
    buf[0] = '-';
    for (int i = 0; i < 9; i++) {
        buf[i + 1] = (mode & (0400u >> i)) ? rwx[i] : '-';
    }
    buf[10] = '\0';
}

/* "2026-11-22 07:33:23.123456789 +0000" (full) or "2026-11-22 07:33" (short). */
static void pst_format_time(uint64_t ns, int full, char *buf, size_t len)
{
    time_t sec = (time_t)(ns / 1000000000ull);
    struct tm tm;
    char date[32], zone[8];

    if (localtime_r(&sec, &tm) == NULL) {
        snprintf(buf, len, "%" PRIu64 " ns", ns);
        return;
    }
    if (!full) {
        strftime(buf, len, "%Y-%m-%d %H:%M", &tm);
        return;
    }
    strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm);
    strftime(zone, sizeof(zone), "%z", &tm);
    snprintf(buf, len, "%s.%09" PRIu64 " %s", date, (uint64_t)(ns % 1000000000ull), zone);
}

/* --- ls ------------------------------------------------------------------------ */

typedef struct pst_ls_arg {
    pstripe_fs_t *fs;
    int long_format;
    uint64_t count;
} pst_ls_arg_t;

/*
 * Print a path so that it is one line on the terminal whatever it holds:
 * control characters (C0, DEL, and C1 as UTF-8 encodes them) and backslash
 * are written as C escapes (\n, \t, \\, \033), as `ls -b` does, so that a
 * name with a newline or an escape sequence can neither forge a second
 * entry nor drive the terminal. Other UTF-8 is printed as it is.
 */
static void pst_put_path(const char *path)
{
    static const char named[] = "\a\b\t\n\v\f\r";
    static const char letter[] = "abtnvfr";

    for (const unsigned char *p = (const unsigned char *)path; *p != '\0'; p++) {
        const char *hit = strchr(named, *p);
        if (*p == '\\') {
            fputs("\\\\", stdout);
        } else if (hit != NULL) {
            printf("\\%c", letter[hit - named]);
        } else if (*p < 0x20 || *p == 0x7f) {
            printf("\\%03o", *p);
        } else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            printf("\\%03o\\%03o", p[0], p[1]);
            p++;
        } else {
            putchar(*p);
        }
    }
}

static int pst_ls_print(const char *path, const pstripe_stat_t *st, void *arg)
{
    pst_ls_arg_t *ls = arg;
    char mode[11], stripe[32], mtime[32], owner[160];

    const char *note = pst_is_partial(path) ? "  (partial copy: incomplete)" : "";

    ls->count++;
    if (!ls->long_format) {
        pst_put_path(path);
        printf("%s\n", note);
        return 0;
    }
    pst_format_mode(st->mode, mode);
    ps_format_size(st->layout.stripe_size, stripe, sizeof(stripe));
    pst_format_time(st->mtime_ns ? st->mtime_ns : st->ctime_ns, 0, mtime, sizeof(mtime));
    pst_format_owner(st->uid, st->gid, owner, sizeof(owner));
    printf("%s %s %4" PRIu32 " x %-6s ", mode, owner, st->layout.stripe_count, stripe);
    if (st->unreachable > 0) {
        printf("%14s  %s  ", "?", mtime); /* objects on a server that did not answer */
    } else {
        printf("%14" PRIu64 "  %s  ", st->size, mtime);
    }
    pst_put_path(path);
    printf("%s\n", note);
    return 0;
}

int pst_cmd_ls(pst_ctx_t *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"long", no_argument, NULL, 'l'}, PST_GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};
    pst_ls_arg_t ls = {0};
    const char *prefix;
    pstripe_fs_t *fs;
    ps_status_t status;
    int c, ret;

    while ((c = getopt_long(argc, argv, "l" PST_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
        if (c == 'l') {
            ls.long_format = 1;
        } else if ((ret = pst_global_opt(ctx, c, optarg)) != PST_CONTINUE) {
            return ret;
        }
    }
    if (argc - optind > 1) {
        return pst_usage_error(ctx, "too many arguments");
    }
    prefix = (optind < argc) ? pst_fs_path(argv[optind]) : "/";
    if (prefix[0] != '/') { /* it would match no name, silently */
        pst_msg(ctx, "invalid prefix '%s': pstripe paths start with '/'", prefix);
        return PST_EXIT_ERROR;
    }

    if (pst_connect(ctx, &fs) != PS_OK) {
        return PST_EXIT_ERROR;
    }
    ret = PST_EXIT_OK;
    ls.fs = fs;
    status = pstripe_list(fs, prefix, pst_ls_print, &ls);
    if (status != PS_OK) {
        pst_lib_error(ctx, status, "list %s", prefix);
        ret = PST_EXIT_ERROR;
    }
    pstripe_disconnect(fs);
    return ret;
}

/* --- stat ------------------------------------------------------------------------ */

static void pst_print_stat(pstripe_fs_t *fs, const char *path, const pstripe_stat_t *st)
{
    int nservers = pstripe_num_servers(fs);
    char human[32], stripe[32], mode[11], ctime_s[64], mtime_s[64];
    ps_layout_t layout;
    uint32_t owner;

    pst_human_size(st->size, human, sizeof(human));
    fputs("  File: ", stdout);
    pst_put_path(path);
    putchar('\n');
    printf("  Size: %" PRIu64 " (%s)\n", st->size, human);
    pst_human_size(st->blocks, human, sizeof(human));
    printf("  Allocated: %" PRIu64 " (%s, all servers)\n", st->blocks, human);
    printf("  File id: %016" PRIx64 "\n", st->file_id);
    pst_format_mode(st->mode, mode);
    printf("  Mode: %04o (%s)\n", st->mode & 07777, mode);
    printf("  Owner: uid %" PRIu32 ", gid %" PRIu32 "\n", st->uid, st->gid);
    ps_format_size(st->layout.stripe_size, stripe, sizeof(stripe));
    printf("  Layout: stripe size %s (%" PRIu64 " bytes), stripe count %" PRIu32
           ", first server %" PRId32 "\n",
           stripe, st->layout.stripe_size, st->layout.stripe_count, st->layout.first_server);

    /* Stripe target k lives on server (first_server + k) % nservers:
     * the same mapping the library and the servers use (ps_layout.h). */
    layout.stripe_size = st->layout.stripe_size;
    layout.stripe_count = st->layout.stripe_count;
    layout.first_server = (uint32_t)st->layout.first_server;
    printf("  Servers (stripe order):\n");
    for (uint32_t k = 0; k < st->layout.stripe_count && nservers > 0; k++) {
        uint32_t s = ps_layout_server(&layout, k, (uint32_t)nservers);
        printf("    stripe %" PRIu32 ": server %" PRIu32 " %s\n", k, s,
               pstripe_server_address(fs, (int)s));
    }
    if (pstripe_path_server(fs, path, &owner) == PS_OK) {
        printf("  Metadata: server %" PRIu32 " %s\n", owner,
               pstripe_server_address(fs, (int)owner));
    }
    pst_format_time(st->ctime_ns, 1, ctime_s, sizeof(ctime_s));
    pst_format_time(st->mtime_ns, 1, mtime_s, sizeof(mtime_s));
    printf("  Created: %s\n", ctime_s);
    printf("  Modified: %s\n", mtime_s);
}

static ps_status_t pst_stat_one(pst_ctx_t *ctx, pstripe_fs_t *fs, const char *path, void *arg)
{
    pstripe_stat_t st;
    ps_status_t status = pstripe_stat(fs, path, &st);

    (void)arg;
    if (status != PS_OK) {
        pst_lib_error(ctx, status, "%s", path);
        return status;
    }
    pst_print_stat(fs, path, &st);
    return PS_OK;
}

int pst_cmd_stat(pst_ctx_t *ctx, int argc, char **argv)
{
    int ret;

    if ((ret = pst_parse_no_opts(ctx, argc, argv)) != PST_CONTINUE) {
        return ret;
    }
    return pst_for_each_path(ctx, argc, argv, pst_stat_one, NULL);
}

/* --- rm ---------------------------------------------------------------------------- */

static ps_status_t pst_rm_one(pst_ctx_t *ctx, pstripe_fs_t *fs, const char *path, void *arg)
{
    const int force = *(const int *)arg;
    int npartial = 0;
    /* the partial copies first: the unlink's message is the one to print */
    int cleaned = !pst_is_partial(path) && pst_partial_clean(ctx, fs, path, &npartial) == PS_OK;
    ps_status_t status = pstripe_unlink(fs, path);

    if (cleaned && npartial > 0 && status == PS_ERR_NO_ENTRY) {
        return PS_OK; /* only partial copies of it were left */
    }
    if (status == PS_ERR_NO_ENTRY && force) {
        return PS_OK;
    }
    if (status != PS_OK) {
        pst_lib_error(ctx, status, "cannot remove %s", path);
    }
    return status;
}

int pst_cmd_rm(pst_ctx_t *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"force", no_argument, NULL, 'f'}, PST_GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};
    int c, ret, force = 0;

    while ((c = getopt_long(argc, argv, "f" PST_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
        if (c == 'f') {
            force = 1;
        } else if ((ret = pst_global_opt(ctx, c, optarg)) != PST_CONTINUE) {
            return ret;
        }
    }
    return pst_for_each_path(ctx, argc, argv, pst_rm_one, &force);
}

/* --- mv ---------------------------------------------------------------------------- */

int pst_cmd_mv(pst_ctx_t *ctx, int argc, char **argv)
{
    pstripe_fs_t *fs;
    const char *src, *dst;
    ps_status_t status;
    int ret;

    if ((ret = pst_parse_no_opts(ctx, argc, argv)) != PST_CONTINUE) {
        return ret;
    }
    if (argc - optind != 2) {
        return pst_usage_error(ctx, "expected SRC and DST");
    }
    src = pst_fs_path(argv[optind]);
    dst = pst_fs_path(argv[optind + 1]);
    if (pst_connect(ctx, &fs) != PS_OK) {
        return PST_EXIT_ERROR;
    }
    ret = PST_EXIT_OK;
    status = pstripe_rename(fs, src, dst);
    if (status != PS_OK && strncmp(pstripe_last_error(), "cannot ", 7) == 0) {
        pst_msg(ctx, "%s", pstripe_last_error()); /* (it names both already) */
        ret = PST_EXIT_ERROR;
    } else if (status != PS_OK) {
        pst_lib_error(ctx, status, "cannot rename %s to %s", src, dst);
        ret = PST_EXIT_ERROR;
    }
    pstripe_disconnect(fs);
    return ret;
}

/* --- truncate -------------------------------------------------------------------- */

int pst_cmd_truncate(pst_ctx_t *ctx, int argc, char **argv)
{
    pstripe_fs_t *fs;
    const char *path;
    uint64_t size;
    ps_status_t status;
    int ret;

    if ((ret = pst_parse_no_opts(ctx, argc, argv)) != PST_CONTINUE) {
        return ret;
    }
    if (argc - optind != 2) {
        return pst_usage_error(ctx, "expected PATH and SIZE");
    }
    path = pst_fs_path(argv[optind]);
    if (pst_parse_size_arg(ctx, "SIZE", argv[optind + 1], &size) != PS_OK) {
        return PST_EXIT_ERROR;
    }
    if (pst_connect(ctx, &fs) != PS_OK) {
        return PST_EXIT_ERROR;
    }
    ret = PST_EXIT_OK;
    status = pstripe_truncate(fs, path, size);
    if (status != PS_OK) {
        pst_lib_error(ctx, status, "cannot truncate %s to %" PRIu64 " bytes", path, size);
        ret = PST_EXIT_ERROR;
    }
    pstripe_disconnect(fs);
    return ret;
}

/* --- df ---------------------------------------------------------------------------- */

int pst_cmd_df(pst_ctx_t *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"bytes", no_argument, NULL, 'b'}, PST_GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};
    char total[32], used[32], avail[32];
    pstripe_statfs_t st;
    pstripe_fs_t *fs;
    ps_status_t status;
    int c, ret, bytes = 0;
    uint64_t used_bytes;

    while ((c = getopt_long(argc, argv, "b" PST_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
        if (c == 'b') {
            bytes = 1;
        } else if ((ret = pst_global_opt(ctx, c, optarg)) != PST_CONTINUE) {
            return ret;
        }
    }
    if (optind < argc) {
        return pst_usage_error(ctx, "too many arguments");
    }
    if (pst_connect(ctx, &fs) != PS_OK) {
        return PST_EXIT_ERROR;
    }
    ret = PST_EXIT_OK;
    status = pstripe_statfs(fs, &st);
    if (status != PS_OK) {
        pst_lib_error(ctx, status, "statfs");
        pstripe_disconnect(fs);
        return PST_EXIT_ERROR;
    }
    used_bytes = st.total_bytes - st.free_bytes;
    if (bytes) {
        snprintf(total, sizeof(total), "%" PRIu64, st.total_bytes);
        snprintf(used, sizeof(used), "%" PRIu64, used_bytes);
        snprintf(avail, sizeof(avail), "%" PRIu64, st.avail_bytes);
    } else {
        pst_human_size(st.total_bytes, total, sizeof(total));
        pst_human_size(used_bytes, used, sizeof(used));
        pst_human_size(st.avail_bytes, avail, sizeof(avail));
    }
    /* Use% as df(1) computes it: used / (used + available), rounded up. */
    uint64_t denom = used_bytes + st.avail_bytes;
    unsigned pct = denom ? (unsigned)((used_bytes * 100 + denom - 1) / denom) : 0;
    printf("%-8s %14s %14s %14s %5s %10s\n", "Servers", "Size", "Used", "Avail", "Use%", "Files");
    printf("%-8" PRIu32 " %14s %14s %14s %4u%% %10" PRIu64 "\n", st.nservers, total, used, avail,
           pct, st.files);
    pstripe_disconnect(fs);
    return PST_EXIT_OK;
}

/* --- gc ------------------------------------------------------------------------------ */

typedef struct pst_gc_tally {
    pstripe_fs_t *fs;
    int dry_run;
    uint64_t orphans, bytes;
} pst_gc_tally_t;

static int pst_gc_one(const pstripe_orphan_t *o, void *arg)
{
    pst_gc_tally_t *t = arg;
    char held[32];

    pst_human_size(o->blocks, held, sizeof(held));
    printf("%s object of file %016" PRIx64 " on server %" PRIu32 " (%s): %" PRIu64
           " bytes, %s on disk\n",
           t->dry_run ? "orphaned" : "removed", o->file_id, o->server,
           pstripe_server_address(t->fs, (int)o->server), o->size, held);
    t->orphans++;
    t->bytes += o->blocks;
    return 0;
}

int pst_cmd_gc(pst_ctx_t *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"dry-run", no_argument, NULL, 'n'}, PST_GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};
    pst_gc_tally_t t = {NULL, 0, 0, 0};
    char held[32];
    ps_status_t status;
    int c, ret;

    while ((c = getopt_long(argc, argv, "n" PST_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
        if (c == 'n') {
            t.dry_run = 1;
        } else if ((ret = pst_global_opt(ctx, c, optarg)) != PST_CONTINUE) {
            return ret;
        }
    }
    if (optind < argc) {
        return pst_usage_error(ctx, "too many arguments");
    }
    if (pst_connect(ctx, &t.fs) != PS_OK) {
        return PST_EXIT_ERROR;
    }
    status = pstripe_gc(t.fs, t.dry_run, pst_gc_one, &t);
    pstripe_disconnect(t.fs);
    pst_human_size(t.bytes, held, sizeof(held));
    if (status != PS_OK) {
        pst_lib_error(ctx, status, "cannot collect orphaned objects (%" PRIu64 " %s)", t.orphans,
                      t.dry_run ? "found" : "removed before the error");
        return PST_EXIT_ERROR;
    }
    printf("%" PRIu64 " orphaned objects, %s on disk: %s\n", t.orphans, held,
           t.orphans == 0 ? "nothing to do"
           : t.dry_run    ? "not removed (--dry-run)"
                          : "removed");
    return PST_EXIT_OK;
}

/* --- stats ------------------------------------------------------------------------ */

static double pst_ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

/* Upper bound in microseconds of the histogram bucket where the q-quantile
 * of the requests falls (bucket i: < 2^i us; the last one is open). */
static int pst_hist_quantile(const uint64_t *hist, int n, double q)
{
    uint64_t total = 0, sum = 0;
    for (int i = 0; i < n; i++) {
        total += hist[i];
    }
    if (total == 0) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        sum += hist[i];
        if ((double)sum >= q * (double)total) {
            return i;
        }
    }
    return n - 1;
}

static void pst_format_us(uint64_t us, char *buf, size_t len)
{
    if (us >= 1000000) {
        snprintf(buf, len, "%gs", (double)us / 1e6);
    } else if (us >= 1000) {
        snprintf(buf, len, "%gms", (double)us / 1e3);
    } else {
        snprintf(buf, len, "%" PRIu64 "us", us);
    }
}

static void pst_print_server_stats(int idx, const char *addr, const pstripe_server_stats_t *s)
{
    const int nb = (int)(sizeof(s->latency_hist) / sizeof(s->latency_hist[0]));
    char a[32], b[32], lo[16], hi[16];
    uint64_t max = 0;
    int first = -1, last = -1;

    printf("server %d  %s  up %.1fs  workers %" PRIu64 "  direct I/O %s\n", idx, addr,
           (double)s->uptime_ns / 1e9, s->nworkers,
           s->direct_io ? "yes (O_DIRECT)" : "NO (buffered)");
    printf("  requests        %" PRIu64 " (%" PRIu64 " errors)\n", s->requests, s->errors);
    pst_human_size(s->bytes_written, a, sizeof(a));
    printf("  written         %s (%" PRIu64 " bytes) in %" PRIu64 " batches, %" PRIu64 " regions\n",
           a, s->bytes_written, s->write_batches, s->regions_written);
    pst_human_size(s->bytes_read, a, sizeof(a));
    printf("  read            %s (%" PRIu64 " bytes) in %" PRIu64 " batches, %" PRIu64 " regions\n",
           a, s->bytes_read, s->read_batches, s->regions_read);
    pst_human_size(s->disk_bytes_written, a, sizeof(a));
    pst_human_size(s->disk_bytes_read, b, sizeof(b));
    printf("  disk writes     %" PRIu64 " (%s)\n", s->disk_writes, a);
    printf("  disk reads      %" PRIu64 " (%s), %" PRIu64 " of them read-modify-write\n",
           s->disk_reads, b, s->rmw_reads);
    /* Above 1: regions were coalesced into fewer disk I/Os; below 1: large
     * regions were split into several (read-modify-write reads excluded). */
    printf("  regions/disk IO write %.2f, read %.2f\n",
           pst_ratio(s->regions_written, s->disk_writes),
           pst_ratio(s->regions_read,
                     s->disk_reads > s->rmw_reads ? s->disk_reads - s->rmw_reads : 0));
    printf("  queue depth     %" PRIu64 " now, %" PRIu64 " max; %" PRIu64 " merged batches\n",
           s->queue_depth, s->queue_depth_max, s->merged_batches);
    printf("  merged writers  %" PRIu64 " write jobs of several clients\n", s->merged_writers);
    printf("  write-back      %" PRIu64 " bytes staged; blocks written whole %" PRIu64
           ", partial %" PRIu64 " (%" PRIu64 " read first); %" PRIu64 " waits for room, %" PRIu64
           " failed writes, %" PRIu64 " blocks staged now\n",
           s->staged_bytes, s->stage_whole, s->stage_partial, s->stage_rmw, s->stage_full_waits,
           s->stage_errors, s->stage_blocks);
    printf("  flush-behind    %" PRIu64 " flushes of files behind their writes\n",
           s->flushes_behind);
    printf("  read-ahead      %" PRIu64 " bytes read ahead of forward reads into the cache\n",
           s->read_ahead_bytes);
    printf("  transfers       %" PRIu64 " replies sent eagerly, %" PRIu64
           " requests received by rendezvous\n",
           s->eager_replies, s->rndv_requests);
    printf("  auth            %s: %" PRIu64 " accepted, %" PRIu64 " refused\n",
           s->auth_mode == 1   ? "munge"
           : s->auth_mode == 2 ? "key (cluster key)"
           : s->auth_mode == 0 ? "NONE (no authentication)"
                               : "unknown",
           s->auth_ok, s->auth_refused);
    printf("  capabilities    %" PRIu64 " data requests refused (missing, forged, expired or "
           "without the right)\n",
           s->cap_refused);

    for (int i = 0; i < nb; i++) {
        if (s->latency_hist[i] != 0) {
            first = (first < 0) ? i : first;
            last = i;
            max = (s->latency_hist[i] > max) ? s->latency_hist[i] : max;
        }
    }
    if (first < 0) {
        printf("  latency         no requests timed\n");
        return;
    }
    int p50 = pst_hist_quantile(s->latency_hist, nb, 0.50);
    int p99 = pst_hist_quantile(s->latency_hist, nb, 0.99);
    pst_format_us(1ull << p50, a, sizeof(a));
    pst_format_us(1ull << p99, b, sizeof(b));
    printf("  latency         p50 < %s, p99 < %s%s\n", a, b,
           (p99 == nb - 1) ? " (open last bucket)" : "");
    for (int i = first; i <= last; i++) {
        int width = (int)((s->latency_hist[i] * 40 + max - 1) / max);
        char range[40];
        pst_format_us(i ? (1ull << (i - 1)) : 0, lo, sizeof(lo));
        pst_format_us(1ull << i, hi, sizeof(hi));
        snprintf(range, sizeof(range), "%s - %s", lo, (i == nb - 1) ? "inf" : hi);
        printf("    %-21s %10" PRIu64 " %.*s\n", range, s->latency_hist[i], width,
               "########################################");
    }
}

int pst_cmd_stats(pst_ctx_t *ctx, int argc, char **argv)
{
    pstripe_server_stats_t st;
    pstripe_fs_t *fs;
    ps_status_t status;
    int ret, n, first = 0, last;

    if ((ret = pst_parse_no_opts(ctx, argc, argv)) != PST_CONTINUE) {
        return ret;
    }
    if (argc - optind > 1) {
        return pst_usage_error(ctx, "too many arguments");
    }
    if (pst_connect(ctx, &fs) != PS_OK) {
        return PST_EXIT_ERROR;
    }
    ret = PST_EXIT_OK;
    n = pstripe_num_servers(fs);
    last = n - 1;
    if (optind < argc) {
        const char *want = argv[optind];
        char *end;
        long idx = strtol(want, &end, 10);

        first = -1;
        if (*want != '\0' && *end == '\0') {
            first = (idx >= 0 && idx < n) ? (int)idx : -1;
        } else {
            for (int i = 0; i < n; i++) {
                if (strcmp(pstripe_server_address(fs, i), want) == 0) {
                    first = i;
                }
            }
        }
        if (first < 0) {
            pst_msg(ctx,
                    "no server '%s' (give an index 0..%d or one of the addresses of "
                    "`pstripe stat`/the config)",
                    want, n - 1);
            pstripe_disconnect(fs);
            return PST_EXIT_ERROR;
        }
        last = first;
    }
    for (int i = first; i <= last; i++) {
        status = pstripe_server_stats(fs, i, &st);
        if (status != PS_OK) {
            pst_lib_error(ctx, status, "server %d (%s)", i, pstripe_server_address(fs, i));
            ret = PST_EXIT_ERROR;
            continue;
        }
        pst_print_server_stats(i, pstripe_server_address(fs, i), &st);
    }
    pstripe_disconnect(fs);
    return ret;
}

/* --- config ------------------------------------------------------------------------ */

int pst_cmd_config(pst_ctx_t *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"defaults", no_argument, NULL, 'd'}, PST_GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};
    pstripe_fs_t *fs;
    int c, ret, defaults = 0;

    while ((c = getopt_long(argc, argv, PST_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
        if (c == 'd') {
            defaults = 1;
        } else if ((ret = pst_global_opt(ctx, c, optarg)) != PST_CONTINUE) {
            return ret;
        }
    }
    if (optind < argc) {
        return pst_usage_error(ctx, "too many arguments");
    }
    if (defaults) {
        pstripe_print_config(NULL, stdout);
        return PST_EXIT_OK;
    }
    /* The effective values are those of a connection: file, environment
     * and --set, as checked by the library. */
    if (pst_connect(ctx, &fs) != PS_OK) {
        fprintf(stderr, "(`pstripe config --defaults` prints the defaults without servers)\n");
        return PST_EXIT_ERROR;
    }
    pstripe_print_config(fs, stdout);
    pstripe_disconnect(fs);
    return PST_EXIT_OK;
}

/*
 * pst_cp.c: `pstripe cp SRC DST`, local <-> pstripe (and pstripe -> pstripe).
 *
 * The copy is a pipeline over a ring of `depth` chunk buffers. Each chunk goes
 * through two stages, fill (read from the source) and drain (write to the
 * destination); a pstripe stage is a nonblocking request (pstripe_iread_list /
 * pstripe_iwrite_list) that the library's progress thread moves while this
 * thread does something else, a local stage is a plain read(2)/write(2) done
 * right here. So when copying in, this thread reads chunk k+depth-1 from the
 * local file while chunks k..k+depth-2 are on their way to the servers; when
 * copying out it writes chunk k to the local file while the next depth-1
 * chunks are being read from the servers. Chunks complete in order (the ring
 * is drained from its oldest slot), which keeps the local side sequential and
 * means a failure stops the copy at a known offset. Every request is waited
 * for before its buffer is freed, also on errors.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps_time.h"
#include "pst_tool.h"

#define PST_CP_CHUNK_DFL    (8ull << 20)  /* bytes per request */
#define PST_CP_DEPTH_DFL    4             /* requests in flight */
#define PST_CP_DEPTH_MAX    64
#define PST_CP_PROGRESS_MIN (64ull << 20) /* auto progress from this size on */
#define PST_CP_ALIGN        4096          /* buffer alignment (page) */

enum {
    PST_CP_OPT_STRIPE_SIZE = PST_OPT_FIRST_LOCAL,
    PST_CP_OPT_STRIPE_COUNT,
    PST_CP_OPT_CHUNK,
    PST_CP_OPT_DEPTH,
    PST_CP_OPT_PROGRESS,
    PST_CP_OPT_NO_PROGRESS
};

/* One end of the copy: a local fd or a pstripe file. */
typedef struct pst_cp_end {
    const char *name;        /* as given (for messages) */
    const char *path;        /* local path, or pstripe path without the prefix */
    int is_pstripe;
    int fd;                  /* local */
    pstripe_file_t *file;    /* pstripe */
} pst_cp_end_t;

typedef enum { PST_SLOT_FREE, PST_SLOT_FILLING, PST_SLOT_DRAINING } pst_slot_state_t;

typedef struct pst_cp_slot {
    void *buf;
    uint64_t off;            /* file offset of the chunk */
    uint64_t len;            /* bytes in the chunk */
    pst_slot_state_t state;
    pstripe_request_t *req;  /* in-flight pstripe request of the current stage */
} pst_cp_slot_t;

typedef struct pst_cp {
    pst_ctx_t *ctx;
    pst_cp_end_t src, dst;
    uint64_t size;           /* source size; UINT64_MAX if unknown (pipe) */
    uint64_t chunk;
    int depth;
    int progress;            /* -1 auto, 0 off, 1 on */
    int tty;                 /* progress on a terminal: redraw one line */
    uint64_t start_ns, last_report_ns;
    uint64_t done;           /* bytes fully copied (drained) */
} pst_cp_t;

static void pst_cp_progress(pst_cp_t *cp, int final)
{
    uint64_t now = ps_time_ns();
    double secs  = (double)(now - cp->start_ns) / 1e9;
    double rate  = secs > 0 ? (double)cp->done / 1048576.0 / secs : 0.0;
    char done[32], total[32];

    if (!final && now - cp->last_report_ns < (cp->tty ? 250000000ull : 1000000000ull)) {
        return;
    }
    cp->last_report_ns = now;
    pst_human_size(cp->done, done, sizeof(done));
    if (final) {
        fprintf(stderr, "%scopied %s (%" PRIu64 " bytes) in %.2f s, %.1f MiB/s\n",
                cp->tty ? "\r\033[K" : "", done, cp->done, secs, rate);
        return;
    }
    if (cp->size != UINT64_MAX) {
        pst_human_size(cp->size, total, sizeof(total));
        fprintf(stderr, "%s%s / %s (%.0f%%) %.1f MiB/s%s", cp->tty ? "\r\033[K" : "", done,
                total, cp->size ? 100.0 * (double)cp->done / (double)cp->size : 100.0, rate,
                cp->tty ? "" : "\n");
    } else {
        fprintf(stderr, "%s%s %.1f MiB/s%s", cp->tty ? "\r\033[K" : "", done, rate,
                cp->tty ? "" : "\n");
    }
}

/* read(2)/write(2) the whole length unless EOF (reads); -1 with errno. */
static ssize_t pst_read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0) {
            return -1;
        } else if (n == 0) {
            break;
        }
        got += (size_t)n;
    }
    return (ssize_t)got;
}

static int pst_write_full(int fd, const void *buf, size_t len)
{
    size_t put = 0;
    while (put < len) {
        ssize_t n = write(fd, (const char *)buf + put, len - put);
        if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0) {
            return -1;
        }
        put += (size_t)n;
    }
    return 0;
}

/* Start filling slot s at the current source offset. Local reads finish here
 * (a short read means EOF: *eof is set, and a 0-byte chunk frees the slot). */
static int pst_cp_fill(pst_cp_t *cp, pst_cp_slot_t *s, uint64_t off, int *eof)
{
    uint64_t len = cp->chunk;

    if (cp->size != UINT64_MAX && cp->size - off <= len) {
        len  = cp->size - off;
        *eof = 1;
    }
    s->off = off;
    if (cp->src.is_pstripe) {
        pstripe_region_t region = {off, len};
        struct iovec iov        = {s->buf, len};
        int status = pstripe_iread_list(cp->src.file, &region, 1, &iov, 1, &s->req);
        if (status != PS_OK) {
            pst_lib_error(cp->ctx, status, "read %s at offset %" PRIu64, cp->src.name, off);
            return -1;
        }
        s->len   = len;
        s->state = PST_SLOT_FILLING;
        return 0;
    }

    ssize_t n = pst_read_full(cp->src.fd, s->buf, len);
    if (n < 0) {
        pst_msg(cp->ctx, "read %s at offset %" PRIu64 ": %s", cp->src.name, off, strerror(errno));
        return -1;
    }
    if ((uint64_t)n < len) {
        *eof = 1; /* the file shrank, or the end of a pipe */
    }
    s->len   = (uint64_t)n;
    s->req   = NULL;
    s->state = (n > 0) ? PST_SLOT_FILLING : PST_SLOT_FREE;
    return 0;
}

/* Slot s's fill is complete (waited if needed): start draining it. Local
 * writes finish here and free the slot. */
static int pst_cp_drain(pst_cp_t *cp, pst_cp_slot_t *s)
{
    if (cp->dst.is_pstripe) {
        pstripe_region_t region = {s->off, s->len};
        struct iovec iov        = {s->buf, s->len};
        int status = pstripe_iwrite_list(cp->dst.file, &region, 1, &iov, 1, &s->req);
        if (status != PS_OK) {
            pst_lib_error(cp->ctx, status, "write %s at offset %" PRIu64, cp->dst.name, s->off);
            s->state = PST_SLOT_FREE;
            return -1;
        }
        s->state = PST_SLOT_DRAINING;
        return 0;
    }
    if (pst_write_full(cp->dst.fd, s->buf, s->len) != 0) {
        pst_msg(cp->ctx, "write %s at offset %" PRIu64 ": %s", cp->dst.name, s->off,
                strerror(errno));
        s->state = PST_SLOT_FREE;
        return -1;
    }
    cp->done += s->len;
    s->state = PST_SLOT_FREE;
    return 0;
}

/* Wait for slot s's current stage. Returns 0, or -1 after reporting the error
 * (the slot is then free). *short_read is set when a pstripe read hit the
 * end of the file before the chunk's end (the file shrank meanwhile). */
static int pst_cp_wait(pst_cp_t *cp, pst_cp_slot_t *s, int *short_read)
{
    uint64_t bytes = 0;
    int status;

    if (s->req == NULL) {
        return 0; /* a local fill, already complete */
    }
    status = pstripe_request_wait(s->req, &bytes);
    s->req = NULL;
    if (status != PS_OK) {
        pst_lib_error(cp->ctx, status, "%s %s at offset %" PRIu64,
                      (s->state == PST_SLOT_FILLING) ? "read" : "write",
                      (s->state == PST_SLOT_FILLING) ? cp->src.name : cp->dst.name, s->off);
        s->state = PST_SLOT_FREE;
        return -1;
    }
    if (s->state == PST_SLOT_FILLING && bytes < s->len) {
        s->len      = bytes;
        *short_read = 1;
    } else if (s->state == PST_SLOT_DRAINING) {
        cp->done += s->len;
        s->state = PST_SLOT_FREE;
    }
    return 0;
}

/* The pipeline (see the comment at the top of the file). */
static int pst_cp_run(pst_cp_t *cp)
{
    pst_cp_slot_t slots[PST_CP_DEPTH_MAX];
    uint64_t off = 0;
    int head = 0, eof = 0, failed = 0, ret = PST_EXIT_OK;

    memset(slots, 0, sizeof(slots));
    for (int i = 0; i < cp->depth; i++) {
        if (posix_memalign(&slots[i].buf, PST_CP_ALIGN, cp->chunk) != 0) {
            pst_msg(cp->ctx, "cannot allocate %d buffers of %" PRIu64 " bytes", cp->depth,
                    cp->chunk);
            ret = PST_EXIT_ERROR;
            goto out_free;
        }
    }
    if (cp->size == 0) {
        eof = 1;
    }

    for (;;) {
        /* Fill every free slot, oldest first, after the busy ones. */
        for (int i = 0; i < cp->depth && !eof && !failed; i++) {
            pst_cp_slot_t *s = &slots[(head + i) % cp->depth];
            if (s->state != PST_SLOT_FREE) {
                continue;
            }
            if (pst_cp_fill(cp, s, off, &eof) != 0) {
                failed = 1;
                break;
            }
            off += s->len;
            /* A local fill is complete now: start its drain at once (a
             * local source means a pstripe destination, so the drain is a
             * nonblocking write and this loop goes on filling). */
            if (s->state == PST_SLOT_FILLING && s->req == NULL && pst_cp_drain(cp, s) != 0) {
                failed = 1;
            }
        }

        /* Move the oldest busy slot one stage on. */
        pst_cp_slot_t *s = NULL;
        for (int i = 0; i < cp->depth; i++) {
            if (slots[(head + i) % cp->depth].state != PST_SLOT_FREE) {
                head = (head + i) % cp->depth;
                s    = &slots[head];
                break;
            }
        }
        if (s == NULL) {
            break; /* nothing in flight: done (or failed) */
        }
        int short_read = 0;
        if (pst_cp_wait(cp, s, &short_read) != 0) {
            failed = 1;
        } else if (s->state == PST_SLOT_FILLING) {
            if (short_read) {
                eof = 1;
            }
            if (failed || s->len == 0) {
                s->state = PST_SLOT_FREE;
            } else if (pst_cp_drain(cp, s) != 0) {
                failed = 1;
            }
        }
        if (s->state == PST_SLOT_FREE) {
            head = (head + 1) % cp->depth;
        }
        if (cp->progress > 0) {
            pst_cp_progress(cp, 0);
        }
    }
    if (failed) {
        ret = PST_EXIT_ERROR;
    }

out_free:
    for (int i = 0; i < cp->depth; i++) {
        free(slots[i].buf);
    }
    return ret;
}

static int pst_cp_open_src(pst_cp_t *cp, pstripe_fs_t *fs)
{
    pst_cp_end_t *e = &cp->src;
    struct stat sb;

    if (e->is_pstripe) {
        pstripe_stat_t st;
        int status = pstripe_open(fs, e->path, PSTRIPE_RDONLY, 0, NULL, &e->file);
        if (status != PS_OK) {
            pst_lib_error(cp->ctx, status, "cannot open %s", e->name);
            return -1;
        }
        status = pstripe_fstat(e->file, &st);
        if (status != PS_OK) {
            pst_lib_error(cp->ctx, status, "cannot stat %s", e->name);
            return -1;
        }
        cp->size = st.size;
        return 0;
    }

    e->fd = (strcmp(e->path, "-") == 0) ? STDIN_FILENO : open(e->path, O_RDONLY | O_CLOEXEC);
    if (e->fd < 0) {
        pst_msg(cp->ctx, "cannot open %s: %s", e->name, strerror(errno));
        return -1;
    }
    if (fstat(e->fd, &sb) != 0) {
        pst_msg(cp->ctx, "cannot stat %s: %s", e->name, strerror(errno));
        return -1;
    }
    if (S_ISDIR(sb.st_mode)) {
        pst_msg(cp->ctx, "%s is a directory", e->name);
        return -1;
    }
    cp->size = S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : UINT64_MAX;
    posix_fadvise(e->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return 0;
}

static int pst_cp_open_dst(pst_cp_t *cp, pstripe_fs_t *fs, const pstripe_layout_t *layout)
{
    pst_cp_end_t *e = &cp->dst;

    if (e->is_pstripe) {
        int status = pstripe_open(fs, e->path, PSTRIPE_WRONLY | PSTRIPE_CREAT | PSTRIPE_TRUNC,
                                  0644, layout, &e->file);
        if (status != PS_OK) {
            pst_lib_error(cp->ctx, status, "cannot create %s", e->name);
            return -1;
        }
        return 0;
    }
    e->fd = (strcmp(e->path, "-") == 0)
                ? STDOUT_FILENO
                : open(e->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (e->fd < 0) {
        pst_msg(cp->ctx, "cannot create %s: %s", e->name, strerror(errno));
        return -1;
    }
    return 0;
}

static void pst_cp_close(pst_cp_t *cp, pst_cp_end_t *e, int *ret)
{
    if (e->file != NULL) {
        int status = pstripe_close(e->file);
        if (status != PS_OK && *ret == PST_EXIT_OK) {
            pst_lib_error(cp->ctx, status, "close %s", e->name);
            *ret = PST_EXIT_ERROR;
        }
        e->file = NULL;
    }
    if (e->fd > STDERR_FILENO) {
        if (close(e->fd) != 0 && *ret == PST_EXIT_OK) {
            pst_msg(cp->ctx, "close %s: %s", e->name, strerror(errno));
            *ret = PST_EXIT_ERROR;
        }
    }
    e->fd = -1;
}

/* Base name of a source path, for a destination that names a directory. */
static const char *pst_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int pst_cmd_cp(pst_ctx_t *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"stripe-size", required_argument, NULL, PST_CP_OPT_STRIPE_SIZE},
        {"stripe-count", required_argument, NULL, PST_CP_OPT_STRIPE_COUNT},
        {"chunk-size", required_argument, NULL, PST_CP_OPT_CHUNK},
        {"depth", required_argument, NULL, PST_CP_OPT_DEPTH},
        {"progress", no_argument, NULL, PST_CP_OPT_PROGRESS},
        {"no-progress", no_argument, NULL, PST_CP_OPT_NO_PROGRESS},
        PST_GLOBAL_LONGOPTS,
        {NULL, 0, NULL, 0}};
    pstripe_layout_t layout = {0, 0, -1};
    pst_cp_t cp             = {0};
    char dst_buf[8192];
    pstripe_fs_t *fs = NULL;
    uint64_t v;
    char *end;
    int c, ret;

    cp.ctx      = ctx;
    cp.chunk    = PST_CP_CHUNK_DFL;
    cp.depth    = PST_CP_DEPTH_DFL;
    cp.progress = -1;
    cp.src.fd = cp.dst.fd = -1;

    while ((c = getopt_long(argc, argv, PST_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
        switch (c) {
        case PST_CP_OPT_STRIPE_SIZE:
            if (pst_parse_size_arg(ctx, "--stripe-size", optarg, &layout.stripe_size) != 0) {
                return PST_EXIT_ERROR;
            }
            break;
        case PST_CP_OPT_STRIPE_COUNT:
            v = strtoull(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || v == 0 || v > UINT32_MAX) {
                pst_msg(ctx, "--stripe-count: '%s' is not a positive number", optarg);
                return PST_EXIT_ERROR;
            }
            layout.stripe_count = (uint32_t)v;
            break;
        case PST_CP_OPT_CHUNK:
            if (pst_parse_size_arg(ctx, "--chunk-size", optarg, &cp.chunk) != 0) {
                return PST_EXIT_ERROR;
            }
            if (cp.chunk == 0 || cp.chunk > (1ull << 30)) {
                pst_msg(ctx, "--chunk-size: must be between 1 byte and 1g");
                return PST_EXIT_ERROR;
            }
            break;
        case PST_CP_OPT_DEPTH:
            v = strtoull(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || v == 0 || v > PST_CP_DEPTH_MAX) {
                pst_msg(ctx, "--depth: '%s' is not a number from 1 to %d", optarg,
                        PST_CP_DEPTH_MAX);
                return PST_EXIT_ERROR;
            }
            cp.depth = (int)v;
            break;
        case PST_CP_OPT_PROGRESS:
            cp.progress = 1;
            break;
        case PST_CP_OPT_NO_PROGRESS:
            cp.progress = 0;
            break;
        default:
            if ((ret = pst_global_opt(ctx, c, optarg)) != PST_CONTINUE) {
                return ret;
            }
        }
    }
    if (argc - optind != 2) {
        return pst_usage_error(ctx, "expected SRC and DST");
    }

    cp.src.name       = argv[optind];
    cp.dst.name       = argv[optind + 1];
    cp.src.is_pstripe = (strncmp(cp.src.name, PST_PATH_PREFIX, strlen(PST_PATH_PREFIX)) == 0);
    cp.dst.is_pstripe = (strncmp(cp.dst.name, PST_PATH_PREFIX, strlen(PST_PATH_PREFIX)) == 0);
    cp.src.path       = pst_fs_path(cp.src.name);
    cp.dst.path       = pst_fs_path(cp.dst.name);
    if (!cp.src.is_pstripe && !cp.dst.is_pstripe) {
        return pst_usage_error(ctx, "neither %s nor %s is a pstripe path (write pstripe:/path)",
                               cp.src.name, cp.dst.name);
    }
    if ((layout.stripe_size || layout.stripe_count) && !cp.dst.is_pstripe) {
        return pst_usage_error(ctx, "--stripe-size/--stripe-count need a pstripe destination");
    }

    /* A destination that names a directory gets the source's base name. */
    if (cp.dst.path[0] != '\0' && strcmp(cp.dst.path, "-") != 0) {
        struct stat sb;
        size_t n      = strlen(cp.dst.path);
        int is_dir    = (cp.dst.path[n - 1] == '/');
        if (!cp.dst.is_pstripe && stat(cp.dst.path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            is_dir = 1;
        }
        if (is_dir) {
            const char *base = pst_base_name(cp.src.path);
            if (base[0] == '\0' || strcmp(base, "-") == 0) {
                return pst_usage_error(ctx, "%s is a directory; name the destination file",
                                       cp.dst.name);
            }
            if (pst_snprintf(dst_buf, sizeof(dst_buf), "%s%s%s", cp.dst.path,
                             (cp.dst.path[n - 1] == '/') ? "" : "/", base) != 0) {
                pst_msg(ctx, "%s/%s: path too long", cp.dst.path, base);
                return PST_EXIT_ERROR;
            }
            cp.dst.path = dst_buf;
        }
    }

    if ((ret = pst_connect(ctx, &fs)) != PST_EXIT_OK) {
        return ret;
    }
    ret = PST_EXIT_ERROR;
    if (pst_cp_open_src(&cp, fs) != 0 || pst_cp_open_dst(&cp, fs, &layout) != 0) {
        goto out_close;
    }

    cp.tty = isatty(STDERR_FILENO);
    if (cp.progress < 0) {
        cp.progress = cp.tty && (cp.size >= PST_CP_PROGRESS_MIN);
    }
    cp.start_ns = cp.last_report_ns = ps_time_ns();
    ret = pst_cp_run(&cp);
    if (ret == PST_EXIT_OK && cp.size != UINT64_MAX && cp.done != cp.size) {
        pst_msg(ctx, "%s changed size during the copy: copied %" PRIu64 " of %" PRIu64
                     " bytes",
                cp.src.name, cp.done, cp.size);
        ret = PST_EXIT_ERROR;
    }

out_close:
    pst_cp_close(&cp, &cp.src, &ret);
    pst_cp_close(&cp, &cp.dst, &ret);
    if (cp.progress > 0 && ret == PST_EXIT_OK) {
        pst_cp_progress(&cp, 1);
    } else if (cp.progress > 0 && cp.tty) {
        fprintf(stderr, "\n");
    }
    pstripe_disconnect(fs);
    return ret;
}

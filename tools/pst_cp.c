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
 *
 * The destination is written under a temporary name (pst_partial.c), synced
 * and renamed onto DST at the end, so a failed or killed copy never looks
 * like a good one; a failed copy removes its temporary file.
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

#define PST_CP_CHUNK_DFL    (8ull << 20) /* bytes per request */
#define PST_CP_DEPTH_DFL    4            /* requests in flight */
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
    const char *name; /* as given (for messages) */
    const char *path; /* local path, or pstripe path without the prefix */
    int is_pstripe;
    int fd;               /* local */
    pstripe_file_t *file; /* pstripe */
} pst_cp_end_t;

typedef enum { PST_SLOT_FREE, PST_SLOT_FILLING, PST_SLOT_DRAINING } pst_slot_state_t;

typedef struct pst_cp_slot {
    void *buf;
    uint64_t off; /* file offset of the chunk */
    uint64_t len; /* bytes in the chunk */
    pst_slot_state_t state;
    pstripe_request_t *req; /* in-flight pstripe request of the current stage */
} pst_cp_slot_t;

typedef struct pst_cp {
    pst_ctx_t *ctx;
    pst_cp_end_t src, dst;
    uint64_t size; /* source size; UINT64_MAX if unknown (pipe) */
    uint32_t mode; /* permission bits of a new destination: the source's, less the umask */
    uint64_t chunk;
    int depth;
    int progress; /* -1 auto, 0 off, 1 on */
    int tty;      /* progress on a terminal: redraw one line */
    uint64_t start_ns, last_report_ns;
    uint64_t done;      /* bytes fully copied (drained) */
    char dst_buf[8192]; /* DST/<base name of SRC> when DST is a directory */
    char tmp[8256];     /* the partial copy written and renamed onto DST; "" if none */
} pst_cp_t;

static void pst_cp_progress(pst_cp_t *cp, int final)
{
    uint64_t now = ps_time_ns();
    double secs = (double)(now - cp->start_ns) / 1e9;
    double rate = secs > 0 ? (double)cp->done / 1048576.0 / secs : 0.0;
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
        fprintf(stderr, "%s%s / %s (%.0f%%) %.1f MiB/s%s", cp->tty ? "\r\033[K" : "", done, total,
                cp->size ? 100.0 * (double)cp->done / (double)cp->size : 100.0, rate,
                cp->tty ? "" : "\n");
    } else {
        fprintf(stderr, "%s%s %.1f MiB/s%s", cp->tty ? "\r\033[K" : "", done, rate,
                cp->tty ? "" : "\n");
    }
}

/* read(2) len bytes unless EOF comes first; *got_p is how many. On a
 * failure errno stays that of read(2), for the caller's message. */
static ps_status_t pst_read_full(int fd, void *buf, size_t len, size_t *got_p)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0) {
            return ps_status_from_errno(errno);
        } else if (n == 0) {
            break;
        }
        got += (size_t)n;
    }
    *got_p = got;
    return PS_OK;
}

/* write(2) all len bytes; on a failure errno stays that of write(2). */
static ps_status_t pst_write_full(int fd, const void *buf, size_t len)
{
    size_t put = 0;
    while (put < len) {
        ssize_t n = write(fd, (const char *)buf + put, len - put);
        if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0) {
            return ps_status_from_errno(errno);
        }
        put += (size_t)n;
    }
    return PS_OK;
}

/* Start filling slot s at the current source offset. Local reads finish here
 * (a short read means EOF: *eof is set, and a 0-byte chunk frees the slot). */
static ps_status_t pst_cp_fill(pst_cp_t *cp, pst_cp_slot_t *s, uint64_t off, int *eof)
{
    uint64_t len = cp->chunk;
    ps_status_t status;

    if (cp->size != UINT64_MAX && cp->size - off <= len) {
        len = cp->size - off;
        *eof = 1;
    }
    s->off = off;
    if (cp->src.is_pstripe) {
        pstripe_region_t region = {off, len};
        struct iovec iov = {s->buf, len};
        status = pstripe_iread_list(cp->src.file, &region, 1, &iov, 1, &s->req);
        if (status != PS_OK) {
            pst_lib_error(cp->ctx, status, "read %s at offset %" PRIu64, cp->src.name, off);
            return status;
        }
        s->len = len;
        s->state = PST_SLOT_FILLING;
        return PS_OK;
    }

    size_t n = 0;
    status = pst_read_full(cp->src.fd, s->buf, len, &n);
    if (status != PS_OK) {
        pst_msg(cp->ctx, "read %s at offset %" PRIu64 ": %s", cp->src.name, off, strerror(errno));
        return status;
    }
    if ((uint64_t)n < len) {
        *eof = 1; /* the file shrank, or the end of a pipe */
    }
    s->len = (uint64_t)n;
    s->req = NULL;
    s->state = (n > 0) ? PST_SLOT_FILLING : PST_SLOT_FREE;
    return PS_OK;
}

/* Slot s's fill is complete (waited if needed): start draining it. Local
 * writes finish here and free the slot. */
static ps_status_t pst_cp_drain(pst_cp_t *cp, pst_cp_slot_t *s)
{
    ps_status_t status;

    if (cp->dst.is_pstripe) {
        pstripe_region_t region = {s->off, s->len};
        struct iovec iov = {s->buf, s->len};
        status = pstripe_iwrite_list(cp->dst.file, &region, 1, &iov, 1, &s->req);
        if (status != PS_OK) {
            pst_lib_error(cp->ctx, status, "write %s at offset %" PRIu64, cp->dst.name, s->off);
            s->state = PST_SLOT_FREE;
            return status;
        }
        s->state = PST_SLOT_DRAINING;
        return PS_OK;
    }
    status = pst_write_full(cp->dst.fd, s->buf, s->len);
    if (status != PS_OK) {
        pst_msg(cp->ctx, "write %s at offset %" PRIu64 ": %s", cp->dst.name, s->off,
                strerror(errno));
        s->state = PST_SLOT_FREE;
        return status;
    }
    cp->done += s->len;
    s->state = PST_SLOT_FREE;
    return PS_OK;
}

/* Wait for slot s's current stage. On an error, reported, the slot is free.
 * *short_read is set when a pstripe read hit the end of the file before the
 * chunk's end (the file shrank meanwhile). */
static ps_status_t pst_cp_wait(pst_cp_t *cp, pst_cp_slot_t *s, int *short_read)
{
    uint64_t bytes = 0;
    ps_status_t status;

    if (s->req == NULL) {
        return PS_OK; /* a local fill, already complete */
    }
    status = pstripe_request_wait(s->req, &bytes);
    s->req = NULL;
    if (status != PS_OK) {
        pst_lib_error(cp->ctx, status, "%s %s at offset %" PRIu64,
                      (s->state == PST_SLOT_FILLING) ? "read" : "write",
                      (s->state == PST_SLOT_FILLING) ? cp->src.name : cp->dst.name, s->off);
        if (status == PS_ERR_STALE && s->state == PST_SLOT_DRAINING && cp->tmp[0] != '\0') {
            pst_msg(cp->ctx,
                    "the partial copy %s was removed meanwhile: by another `pstripe cp` to %s "
                    "(which removes partial copies it finds) or `pstripe rm`?",
                    cp->tmp, cp->dst.name);
        }
        s->state = PST_SLOT_FREE;
        return status;
    }
    if (s->state == PST_SLOT_FILLING && bytes < s->len) {
        s->len = bytes;
        *short_read = 1;
    } else if (s->state == PST_SLOT_DRAINING) {
        cp->done += s->len;
        s->state = PST_SLOT_FREE;
    }
    return PS_OK;
}

/* Fill every free slot, oldest first, after the busy ones. */
static ps_status_t pst_cp_fill_free(pst_cp_t *cp, pst_cp_slot_t *slots, int head, uint64_t *off,
                                    int *eof)
{
    ps_status_t status;

    for (int i = 0; i < cp->depth && !*eof; i++) {
        pst_cp_slot_t *s = &slots[(head + i) % cp->depth];
        if (s->state != PST_SLOT_FREE) {
            continue;
        }
        status = pst_cp_fill(cp, s, *off, eof);
        if (status != PS_OK) {
            return status;
        }
        *off += s->len;
        /* A local fill is complete now: start its drain at once (a local
         * source means a pstripe destination, so the drain is a nonblocking
         * write and this loop goes on filling). */
        if (s->state == PST_SLOT_FILLING && s->req == NULL) {
            status = pst_cp_drain(cp, s);
            if (status != PS_OK) {
                return status;
            }
        }
    }
    return PS_OK;
}

/*
 * Move the oldest busy slot one stage on (*head follows it); once the copy
 * failed, a completed fill is dropped instead of drained. Sets *idle when
 * nothing is in flight any more.
 */
static ps_status_t pst_cp_advance(pst_cp_t *cp, pst_cp_slot_t *slots, int *head, int failed,
                                  int *eof, int *idle)
{
    pst_cp_slot_t *s = NULL;
    ps_status_t status;
    int short_read = 0;

    for (int i = 0; i < cp->depth && s == NULL; i++) {
        if (slots[(*head + i) % cp->depth].state != PST_SLOT_FREE) {
            *head = (*head + i) % cp->depth;
            s = &slots[*head];
        }
    }
    if (s == NULL) {
        *idle = 1;
        return PS_OK;
    }
    status = pst_cp_wait(cp, s, &short_read);
    if (status == PS_OK && s->state == PST_SLOT_FILLING) {
        if (short_read) {
            *eof = 1;
        }
        if (failed || s->len == 0) {
            s->state = PST_SLOT_FREE;
        } else {
            status = pst_cp_drain(cp, s);
        }
    }
    if (s->state == PST_SLOT_FREE) {
        *head = (*head + 1) % cp->depth;
    }
    return status;
}

/* The pipeline (see the comment at the top of the file); reports the first
 * failure and waits for every request before it returns. */
static ps_status_t pst_cp_run(pst_cp_t *cp)
{
    pst_cp_slot_t slots[PST_CP_DEPTH_MAX];
    ps_status_t status = PS_OK, step_status;
    uint64_t off = 0;
    int head = 0, eof = (cp->size == 0), idle = 0;

    memset(slots, 0, sizeof(slots));
    for (int i = 0; i < cp->depth; i++) {
        if (posix_memalign(&slots[i].buf, PST_CP_ALIGN, cp->chunk) != 0) {
            pst_msg(cp->ctx, "cannot allocate %d buffers of %" PRIu64 " bytes", cp->depth,
                    cp->chunk);
            status = PS_ERR_NO_MEMORY;
            goto out_free;
        }
    }
    while (!idle) {
        if (status == PS_OK) {
            status = pst_cp_fill_free(cp, slots, head, &off, &eof);
        }
        step_status = pst_cp_advance(cp, slots, &head, status != PS_OK, &eof, &idle);
        status = (status == PS_OK) ? step_status : status;
        if (!idle && cp->progress > 0) {
            pst_cp_progress(cp, 0);
        }
    }

out_free:
    for (int i = 0; i < cp->depth; i++) {
        free(slots[i].buf);
    }
    return status;
}

static ps_status_t pst_cp_open_src(pst_cp_t *cp, pstripe_fs_t *fs)
{
    pst_cp_end_t *e = &cp->src;
    ps_status_t status;
    struct stat sb;

    if (e->is_pstripe) {
        pstripe_stat_t st;
        status = pstripe_open(fs, e->path, PSTRIPE_RDONLY, 0, NULL, &e->file);
        if (status != PS_OK) {
            pst_lib_error(cp->ctx, status, "cannot open %s", e->name);
            return status;
        }
        status = pstripe_fstat(e->file, &st);
        if (status != PS_OK) {
            pst_lib_error(cp->ctx, status, "cannot stat %s", e->name);
            return status;
        }
        cp->size = st.size;
        cp->mode = st.mode & 0777;
        return PS_OK;
    }

    e->fd = (strcmp(e->path, "-") == 0) ? STDIN_FILENO : open(e->path, O_RDONLY | O_CLOEXEC);
    if (e->fd < 0 || fstat(e->fd, &sb) != 0) {
        status = ps_status_from_errno(errno);
        pst_msg(cp->ctx, "cannot %s %s: %s", (e->fd < 0) ? "open" : "stat", e->name,
                strerror(errno));
        return status;
    }
    if (S_ISDIR(sb.st_mode)) {
        pst_msg(cp->ctx, "%s is a directory", e->name);
        return PS_ERR_INVALID;
    }
    cp->size = S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : UINT64_MAX;
    cp->mode =
        S_ISREG(sb.st_mode) ? (uint32_t)(sb.st_mode & 0777) : 0666; /* a pipe: as new files */
    posix_fadvise(e->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return PS_OK;
}

/* 1 if a local destination is (or will be) a regular file: it is then
 * written under a temporary name; devices, FIFOs and the like are not. */
static int pst_cp_local_is_file(const char *path)
{
    struct stat sb;

    return stat(path, &sb) != 0 ? errno == ENOENT : S_ISREG(sb.st_mode);
}

/* May the rename at the end replace the existing pstripe file at path
 * (the servers' rule: by its owner, root, or who may write it)? Asked
 * before any byte is copied (a refused rename used to come after the whole
 * copy); the rename is still the check that counts. The uid is the one the
 * client authenticates with (psc_auth.c: getuid). */
static ps_status_t pst_cp_may_replace(pstripe_fs_t *fs, const char *path, const pstripe_stat_t *old)
{
    pstripe_file_t *f;
    ps_status_t status;

    if (getuid() == 0 || old->uid == (uint32_t)getuid()) {
        return PS_OK;
    }
    status = pstripe_open(fs, path, PSTRIPE_WRONLY, 0, NULL, &f);
    if (status == PS_OK) {
        status = pstripe_close(f);
    }
    return status;
}

static ps_status_t pst_cp_open_dst(pst_cp_t *cp, pstripe_fs_t *fs, const pstripe_layout_t *layout)
{
    pst_cp_end_t *e = &cp->dst;
    ps_status_t status;

    /* Like cp(1): a new destination gets the source's mode less the umask
     * (the kernel applies it to a local one); an existing one keeps its own. */
    mode_t mask = umask(0);
    umask(mask);
    if (e->is_pstripe) {
        int nold;
        uint32_t mode = cp->mode & ~(uint32_t)mask;
        pstripe_stat_t old;

        if (pstripe_stat(fs, e->path, &old) == PS_OK) {
            mode = old.mode; /* the replaced file's */
            status = pst_cp_may_replace(fs, e->path, &old);
            if (status == PS_ERR_ACCESS) {
                pst_msg(cp->ctx,
                        "cannot replace %s: permission denied (only its owner, root or a user "
                        "who may write it may)",
                        e->name);
            } else if (status != PS_OK) {
                pst_lib_error(cp->ctx, status, "cannot replace %s", e->name);
            }
            if (status != PS_OK) {
                cp->tmp[0] = '\0';
                return status;
            }
        }
        status = pst_partial_name(fs, e->path, cp->tmp, sizeof(cp->tmp));
        if (status != PS_OK) {
            pst_lib_error(cp->ctx, status, "cannot create %s", e->name);
            cp->tmp[0] = '\0';
            return status;
        }
        pst_partial_clean(cp->ctx, fs, e->path, &nold); /* failures are reported, not fatal */
        status = pstripe_open(fs, cp->tmp, PSTRIPE_WRONLY | PSTRIPE_CREAT | PSTRIPE_EXCL, mode,
                              layout, &e->file);
        if (status != PS_OK) {
            pst_lib_error(cp->ctx, status, "cannot create %s (as %s)", e->name, cp->tmp);
            cp->tmp[0] = '\0';
        }
        return status;
    }
    if (strcmp(e->path, "-") == 0) {
        e->fd = STDOUT_FILENO;
    } else if (pst_cp_local_is_file(e->path)) {
        e->fd = pst_local_partial_open(e->path, (mode_t)cp->mode, cp->tmp, sizeof(cp->tmp));
        if (e->fd < 0) {
            cp->tmp[0] = '\0';
        }
    } else {
        e->fd = open(e->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)cp->mode);
    }
    if (e->fd < 0) {
        status = ps_status_from_errno(errno);
        pst_msg(cp->ctx, "cannot create %s: %s", e->name, strerror(errno));
        return status;
    }
    return PS_OK;
}

/* Close one end; a failure is reported only if the copy had none before. */
static ps_status_t pst_cp_close(pst_cp_t *cp, pst_cp_end_t *e, ps_status_t copy_status)
{
    ps_status_t status = PS_OK;

    if (e->file != NULL) {
        status = pstripe_close(e->file);
        if (status != PS_OK && copy_status == PS_OK) {
            pst_lib_error(cp->ctx, status, "close %s", e->name);
        }
        e->file = NULL;
    }
    if (e->fd > STDERR_FILENO && close(e->fd) != 0 && status == PS_OK) {
        status = ps_status_from_errno(errno);
        if (copy_status == PS_OK) {
            pst_msg(cp->ctx, "close %s: %s", e->name, strerror(errno));
        }
    }
    e->fd = -1;
    return status;
}

/* Make the partial copy durable before it gets DST's name. */
static ps_status_t pst_cp_sync(pst_cp_t *cp)
{
    pst_cp_end_t *e = &cp->dst;
    ps_status_t status;

    if (cp->tmp[0] == '\0') {
        return PS_OK;
    }
    if (e->is_pstripe) {
        status = pstripe_fsync(e->file);
        if (status != PS_OK) {
            pst_lib_error(cp->ctx, status, "sync %s", cp->tmp);
        }
        return status;
    }
    if (fsync(e->fd) != 0) {
        status = ps_status_from_errno(errno);
        pst_msg(cp->ctx, "sync %s: %s", cp->tmp, strerror(errno));
        return status;
    }
    return PS_OK;
}

/* After both ends are closed: rename the partial copy onto DST if the copy
 * succeeded, else remove it (reported if that fails too). */
static ps_status_t pst_cp_commit(pst_cp_t *cp, pstripe_fs_t *fs, ps_status_t status)
{
    const char *tmp = cp->tmp;

    if (tmp[0] == '\0') {
        return status;
    }
    if (status == PS_OK) {
        if (cp->dst.is_pstripe) {
            status = pstripe_rename(fs, tmp, cp->dst.path);
            if (status != PS_OK) {
                pst_lib_error(cp->ctx, status, "cannot rename %s to %s", tmp, cp->dst.name);
            }
        } else if (rename(tmp, cp->dst.path) != 0) {
            status = ps_status_from_errno(errno);
            pst_msg(cp->ctx, "cannot rename %s to %s: %s", tmp, cp->dst.name, strerror(errno));
        }
        if (status == PS_OK) {
            return PS_OK;
        }
    }
    if (cp->dst.is_pstripe) {
        ps_status_t rm_status = pstripe_unlink(fs, tmp);

        if (rm_status != PS_OK && rm_status != PS_ERR_NO_ENTRY) {
            pst_lib_error(cp->ctx, rm_status, "%s left behind (the next cp or rm of %s removes it)",
                          tmp, cp->dst.name);
        }
    } else if (unlink(tmp) != 0 && errno != ENOENT) {
        pst_msg(cp->ctx, "%s left behind: %s", tmp, strerror(errno));
    }
    return status;
}

/* --- the command ------------------------------------------------------------------- */

/* A positive number up to max, or 0. */
static uint64_t pst_cp_parse_count(const char *arg, uint64_t max)
{
    char *end;
    uint64_t v = strtoull(arg, &end, 10);

    return (*arg == '\0' || *end != '\0' || v > max) ? 0 : v;
}

/* One option of `cp`: PST_CONTINUE, or the exit status. */
static int pst_cp_opt(pst_ctx_t *ctx, int c, const char *arg, pst_cp_t *cp,
                      pstripe_layout_t *layout)
{
    switch (c) {
    case PST_CP_OPT_STRIPE_SIZE:
        if (pst_parse_size_arg(ctx, "--stripe-size", arg, &layout->stripe_size) != PS_OK) {
            return PST_EXIT_ERROR;
        }
        return PST_CONTINUE;
    case PST_CP_OPT_STRIPE_COUNT:
        layout->stripe_count = (uint32_t)pst_cp_parse_count(arg, UINT32_MAX);
        if (layout->stripe_count == 0) {
            pst_msg(ctx, "--stripe-count: '%s' is not a positive number", arg);
            return PST_EXIT_ERROR;
        }
        return PST_CONTINUE;
    case PST_CP_OPT_CHUNK:
        if (pst_parse_size_arg(ctx, "--chunk-size", arg, &cp->chunk) != PS_OK) {
            return PST_EXIT_ERROR;
        }
        if (cp->chunk == 0 || cp->chunk > (1ull << 30)) {
            pst_msg(ctx, "--chunk-size: must be between 1 byte and 1g");
            return PST_EXIT_ERROR;
        }
        return PST_CONTINUE;
    case PST_CP_OPT_DEPTH:
        cp->depth = (int)pst_cp_parse_count(arg, PST_CP_DEPTH_MAX);
        if (cp->depth == 0) {
            pst_msg(ctx, "--depth: '%s' is not a number from 1 to %d", arg, PST_CP_DEPTH_MAX);
            return PST_EXIT_ERROR;
        }
        return PST_CONTINUE;
    case PST_CP_OPT_PROGRESS:
    case PST_CP_OPT_NO_PROGRESS:
        cp->progress = (c == PST_CP_OPT_PROGRESS);
        return PST_CONTINUE;
    default:
        return pst_global_opt(ctx, c, arg);
    }
}

/* A destination that names a directory gets the source's base name:
 * PST_CONTINUE, or the exit status. */
static int pst_cp_resolve_dst(pst_ctx_t *ctx, pst_cp_t *cp)
{
    const char *dst = cp->dst.path, *slash = strrchr(cp->src.path, '/');
    const char *base = slash ? slash + 1 : cp->src.path;
    size_t n = strlen(dst);
    struct stat sb;

    if (n == 0 || strcmp(dst, "-") == 0) {
        return PST_CONTINUE;
    }
    if (dst[n - 1] != '/' && (cp->dst.is_pstripe || stat(dst, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        return PST_CONTINUE; /* names a file */
    }
    if (base[0] == '\0' || strcmp(base, "-") == 0) {
        return pst_usage_error(ctx, "%s is a directory; name the destination file", cp->dst.name);
    }
    if (pst_snprintf(cp->dst_buf, sizeof(cp->dst_buf), "%s%s%s", dst,
                     (dst[n - 1] == '/') ? "" : "/", base) != PS_OK) {
        pst_msg(ctx, "%s/%s: path too long", dst, base);
        return PST_EXIT_ERROR;
    }
    cp->dst.path = cp->dst_buf;
    return PST_CONTINUE;
}

/* SRC and DST from the command line: PST_CONTINUE, or the exit status. */
static int pst_cp_set_ends(pst_ctx_t *ctx, pst_cp_t *cp, const pstripe_layout_t *layout,
                           const char *src, const char *dst)
{
    size_t n = strlen(PST_PATH_PREFIX);

    cp->src.name = src;
    cp->dst.name = dst;
    cp->src.is_pstripe = (strncmp(src, PST_PATH_PREFIX, n) == 0);
    cp->dst.is_pstripe = (strncmp(dst, PST_PATH_PREFIX, n) == 0);
    cp->src.path = pst_fs_path(src);
    cp->dst.path = pst_fs_path(dst);
    if (!cp->src.is_pstripe && !cp->dst.is_pstripe) {
        return pst_usage_error(ctx, "neither %s nor %s is a pstripe path (write pstripe:/path)",
                               src, dst);
    }
    if ((layout->stripe_size || layout->stripe_count) && !cp->dst.is_pstripe) {
        return pst_usage_error(ctx, "--stripe-size/--stripe-count need a pstripe destination");
    }
    return pst_cp_resolve_dst(ctx, cp);
}

/* Open both ends, copy, close; reports every failure. */
static ps_status_t pst_cp_copy(pst_cp_t *cp, pstripe_fs_t *fs, const pstripe_layout_t *layout)
{
    ps_status_t status, close_status;

    status = pst_cp_open_src(cp, fs);
    if (status == PS_OK) {
        status = pst_cp_open_dst(cp, fs, layout);
    }
    if (status == PS_OK) {
        cp->tty = isatty(STDERR_FILENO);
        if (cp->progress < 0) {
            cp->progress = cp->tty && (cp->size >= PST_CP_PROGRESS_MIN);
        }
        cp->start_ns = cp->last_report_ns = ps_time_ns();
        status = pst_cp_run(cp);
    }
    if (status == PS_OK && cp->size != UINT64_MAX && cp->done != cp->size) {
        pst_msg(cp->ctx, "%s changed size during the copy: copied %" PRIu64 " of %" PRIu64 " bytes",
                cp->src.name, cp->done, cp->size);
        status = PS_ERR_IO;
    }
    if (status == PS_OK) {
        status = pst_cp_sync(cp);
    }
    close_status = pst_cp_close(cp, &cp->src, status);
    status = (status == PS_OK) ? close_status : status;
    close_status = pst_cp_close(cp, &cp->dst, status);
    status = (status == PS_OK) ? close_status : status;
    status = pst_cp_commit(cp, fs, status);
    if (cp->progress > 0 && status == PS_OK) {
        pst_cp_progress(cp, 1);
    } else if (cp->progress > 0 && cp->tty) {
        fprintf(stderr, "\n");
    }
    return status;
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
    pst_cp_t cp = {0};
    ps_status_t status;
    pstripe_fs_t *fs;
    int c, ret;

    cp.ctx = ctx;
    cp.chunk = PST_CP_CHUNK_DFL;
    cp.depth = PST_CP_DEPTH_DFL;
    cp.progress = -1;
    cp.src.fd = cp.dst.fd = -1;
    while ((c = getopt_long(argc, argv, PST_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
        if ((ret = pst_cp_opt(ctx, c, optarg, &cp, &layout)) != PST_CONTINUE) {
            return ret;
        }
    }
    if (argc - optind != 2) {
        return pst_usage_error(ctx, "expected SRC and DST");
    }
    ret = pst_cp_set_ends(ctx, &cp, &layout, argv[optind], argv[optind + 1]);
    if (ret != PST_CONTINUE) {
        return ret;
    }
    if (pst_connect(ctx, &fs) != PS_OK) {
        return PST_EXIT_ERROR;
    }
    status = pst_cp_copy(&cp, fs, &layout);
    pstripe_disconnect(fs);
    return (status == PS_OK) ? PST_EXIT_OK : PST_EXIT_ERROR;
}

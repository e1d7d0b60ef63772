/*
 * pss_store.c: objects on the local disk, coalescing and direct I/O.
 *
 * Each file's part on this server is one object, DIR/obj/XX/<file_id in hex>,
 * owned by the worker ps_object_worker(file_id): only that thread opens it,
 * queues its requests, plans and issues its I/O, so no lock is needed.
 *
 * The data path is O_DIRECT + libaio. O_DIRECT needs every disk I/O's file
 * offset, length and buffer aligned to what the file system asks for; we do
 * not guess it but ask at start-up (statx STATX_DIOALIGN, else the device's
 * logical block size with BLKSSZGET, else by trying reads of growing
 * alignment). Disk I/O is then planned in whole file-system blocks when
 * those are larger (4 KiB on ext4 against a 512-byte O_DIRECT minimum): ext4
 * serializes a direct write that is not block-aligned against every other
 * direct I/O of the file and runs it inside io_submit. Two processes
 * interleaving 512-byte regions wrote 73-222 MiB/s with 512-byte planning
 * and 251-339 MiB/s with 4 KiB planning (median call 5.9-24 ms against
 * 3.2-4.2 ms). Client regions are arbitrary byte ranges, so they are mapped
 * onto aligned spans with ps_extent_plan(): regions closer than coalesce_gap
 * (or touching the same block) share a span, spans are cut at max_io, and a
 * span that some byte of which no region covers ("holes": unaligned ends,
 * gaps) is written by read-modify-write: read the whole span, copy the
 * regions over it, write it back. Beyond the object's end the read returns
 * nothing and the span buffer stays zero-filled.
 *
 * Batches of one object queued at the same time (for example from several
 * clients, or arriving while earlier I/O runs) are planned together, so
 * 100,000 small regions spread over many requests still become a few large
 * I/Os. Ordering and read-modify-write safety come from per-object range
 * serialization: a job (one planned group of batches) starts only when none
 * of its spans intersects a span of a job already running on the object
 * (reads may overlap reads); otherwise the object's queue waits, in order,
 * until a job finishes. Two RMW cycles on the same block can therefore never
 * interleave and lose each other's bytes. Truncate, remove and sync wait
 * for the object to be idle.
 *
 * Sizes: an object's file length is always a multiple of align (whole
 * file-system blocks) and its logical size is kept in an extended
 * attribute, user.pstripe.size. Setting a length that is not a multiple of
 * the block size makes the file system zero the rest of the last block
 * through the page cache; that page colliding with direct I/O in flight to
 * the same block made the kernel log "Page cache invalidation failure on
 * direct I/O" and fail the next fdatasync with EIO (and could let a stale
 * page overwrite direct writes). So writes past the end first extend the
 * file, sparsely and by whole blocks, and the logical size (max end of the
 * completed writes) is stored in the attribute before the write is
 * acknowledged. Bytes between the logical size and the file's length are
 * zeros on disk (a truncate into a block zeroes its tail, directly), and
 * reads return zeros past the logical size.
 */
#include "pss_store.h"

#include "pss_req.h"

#include "ps_extent.h"

#include "ps_log.h"
#include "ps_time.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define PSS_MAX_OBJ_SIZE (1ull << 44)        /* bytes: regions must end below this (16 TiB) */
#define PSS_SIZE_XATTR   "user.pstripe.size" /* an object's logical size, 8 bytes LE */

typedef struct pss_job pss_job_t;

/* A part of one region inside one span. */
typedef struct pss_piece {
    uint64_t span_off; /* bytes from the span's start */
    uint64_t len;
    uint64_t obj_off; /* object offset of the piece */
    uint8_t *mem;     /* write: source in the payload; read: destination in the reply */
} pss_piece_t;

/* One aligned disk I/O of a job (a span of the plan). */
typedef struct pss_span_io {
    struct iocb iocb;
    struct pss_span_io *next_wait;
    pss_job_t *job;
    uint64_t off, len;
    uint8_t *buf;
    int own_buf; /* buf allocated here (else it points into a payload) */
    int holes;   /* write: read the span first */
    int writing; /* current phase is the write */
    uint32_t first_piece, npieces;
} pss_span_io_t;

struct pss_job {
    pss_job_t *next; /* the object's running jobs */
    pss_object_t *obj;
    int is_write;
    pss_req_t **batches;
    uint32_t nbatches;
    pss_span_io_t *spans;
    size_t nspans, spans_left;
    pss_piece_t *pieces;
    size_t npieces;
    uint64_t max_end; /* end of the furthest region */
    int status;
};

struct pss_object {
    pss_object_t *hnext; /* hash chain */
    uint64_t file_id;
    int fd;
    int exists;
    uint64_t size;      /* logical size, bytes */
    uint64_t phys_size; /* length of the file on disk: >= size, a multiple of align */
    pss_req_t *wait_head, **wait_tail;
    pss_job_t *active;
    int dirty;      /* written since the last fdatasync */
    int size_dirty; /* size attribute set since the last fsync */
    int blocked;    /* head of the queue waits for a running job */
    int scheduled;
    pss_object_t *next_ready;
};

/* ---- start-up: data dir and alignment ------------------------------------------ */

static int pss_probe_read_align(int fd, uint32_t *off_align, uint32_t *mem_align)
{
    uint8_t *buf;
    uint32_t a, m;

    if (posix_memalign((void **)&buf, 8192, 16384) != 0) {
        return PS_ERR_NO_MEMORY;
    }
    *off_align = 0;
    for (a = 512; a <= 4096 && *off_align == 0; a *= 2) {
        if (pread(fd, buf, a, a) >= 0) {
            *off_align = a;
        }
    }
    *mem_align = 0;
    for (m = 8; m <= 4096 && *mem_align == 0 && *off_align != 0; m *= 2) {
        if (pread(fd, buf + m, *off_align, 0) >= 0) {
            *mem_align = m;
        }
    }
    free(buf);
    return (*off_align != 0 && *mem_align != 0) ? PS_OK : PS_ERR_UNSUPPORTED;
}

/*
 * Find the O_DIRECT alignment of the data directory's file system, using a
 * probe file: statx(STATX_DIOALIGN) when the kernel reports it, else the
 * device's logical block size (BLKSSZGET), else trial reads. Sets
 * s->direct_io, s->align and s->mem_align.
 */
static int pss_probe_direct(pss_server_t *s, int want)
{
    const char *probe = ".probe";
    struct statx stx;
    struct stat st;
    uint32_t off_align = 0, mem_align = 0;
    const char *how = NULL;
    int fd;

    s->direct_io = 0;
    s->align = 1;
    s->mem_align = 64;
    if (want == 0) {
        ps_info("direct_io = no: objects use buffered I/O");
        return PS_OK;
    }

    fd = openat(s->obj_dir_fd, probe, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        ps_error("create %s/obj/%s: %m", s->data_dir, probe);
        return ps_status_from_errno(errno);
    }
    /* Two pages of data so that trial reads have something to read. */
    static const uint8_t zeros[8192];
    if (pwrite(fd, zeros, sizeof(zeros), 0) != (ssize_t)sizeof(zeros)) {
        ps_error("write %s/obj/%s: %m", s->data_dir, probe);
        close(fd);
        unlinkat(s->obj_dir_fd, probe, 0);
        return PS_ERR_IO;
    }
    close(fd);

    fd = openat(s->obj_dir_fd, probe, O_RDWR | O_DIRECT | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        unlinkat(s->obj_dir_fd, probe, 0);
        if (want == 1) {
            ps_error("open %s/obj/%s with O_DIRECT: %m (direct_io = yes)", s->data_dir, probe);
            return ps_status_from_errno(err);
        }
        errno = err;
        ps_warn("open %s/obj/%s with O_DIRECT: %m; the file system refuses direct I/O, "
                "falling back to buffered I/O",
                s->data_dir, probe);
        return PS_OK;
    }

    memset(&stx, 0, sizeof(stx));
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
        (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align != 0) {
        off_align = stx.stx_dio_offset_align;
        mem_align = stx.stx_dio_mem_align;
        how = "statx STATX_DIOALIGN";
    }
    if (off_align == 0 && fstat(fd, &st) == 0) {
        char dev[64];
        snprintf(dev, sizeof(dev), "/dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
        int bfd = open(dev, O_RDONLY | O_CLOEXEC);
        int ssz = 0;
        if (bfd >= 0) {
            if (ioctl(bfd, BLKSSZGET, &ssz) == 0 && ssz > 0) {
                off_align = (uint32_t)ssz;
                mem_align = (uint32_t)ssz;
                how = "BLKSSZGET";
            }
            close(bfd);
        }
    }
    if (off_align == 0) {
        if (pss_probe_read_align(fd, &off_align, &mem_align) == PS_OK) {
            how = "trial reads";
        }
    }
    close(fd);
    unlinkat(s->obj_dir_fd, probe, 0);

    if (off_align == 0 || (off_align & (off_align - 1)) != 0 || off_align > 65536) {
        if (want == 1) {
            ps_error("%s/obj: could not find a usable O_DIRECT alignment (direct_io = yes)",
                     s->data_dir);
            return PS_ERR_UNSUPPORTED;
        }
        ps_warn("%s/obj: could not find a usable O_DIRECT alignment; falling back to "
                "buffered I/O",
                s->data_dir);
        return PS_OK;
    }
    if (mem_align == 0 || (mem_align & (mem_align - 1)) != 0) {
        mem_align = off_align;
    }
    s->direct_io = 1;
    s->align = off_align;
    /*
     * Buffers are page-aligned even when the file system accepts less: on the
     * virtio disks we run on, O_DIRECT from 512-byte-aligned (not page-aligned)
     * memory is accepted but served about 30x slower, with io_submit blocking
     * for the whole I/O. Spans whose payload memory is not page-aligned are
     * bounced through an aligned buffer instead (a memcpy is far cheaper).
     */
    long page = sysconf(_SC_PAGESIZE);
    s->mem_align = mem_align;
    if (page > 0 && (uint32_t)page > s->mem_align) {
        s->mem_align = (uint32_t)page;
    }
    ps_info("%s/obj: O_DIRECT with offset alignment %u, memory alignment %u (file system "
            "minimum %u, from %s)",
            s->data_dir, s->align, s->mem_align, mem_align, how);
    return PS_OK;
}

/*
 * Disk I/O and objects' lengths are in whole file-system blocks and sizes
 * live in an attribute (see the top of this file): raise align to the block
 * size and check that the file system keeps user attributes.
 */
static int pss_probe_sizes(pss_server_t *s)
{
    const char *probe = ".probe-xattr";
    struct statvfs vfs;
    uint64_t le = 0;
    uint32_t bs = 4096;

    if (fstatvfs(s->obj_dir_fd, &vfs) == 0 && vfs.f_bsize >= 512 && vfs.f_bsize <= (1u << 20) &&
        (vfs.f_bsize & (vfs.f_bsize - 1)) == 0) {
        bs = (uint32_t)vfs.f_bsize;
    }
    if (bs > s->align) {
        s->align = bs;
    }

    int fd = openat(s->obj_dir_fd, probe, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        ps_error("create %s/obj/%s: %m", s->data_dir, probe);
        return ps_status_from_errno(errno);
    }
    int ok = fsetxattr(fd, PSS_SIZE_XATTR, &le, sizeof(le), 0) == 0;
    int err = errno;
    close(fd);
    unlinkat(s->obj_dir_fd, probe, 0);
    if (!ok) {
        errno = err;
        ps_error("%s/obj: the file system does not keep user extended attributes (%m); "
                 "pstripe-server stores each object's size in one (%s): use ext4, XFS, btrfs "
                 "or tmpfs",
                 s->data_dir, PSS_SIZE_XATTR);
        return PS_ERR_UNSUPPORTED;
    }
    ps_info("%s/obj: disk I/O and object files in blocks of %u bytes, sizes in %s", s->data_dir,
            s->align, PSS_SIZE_XATTR);
    return PS_OK;
}

int pss_store_init(pss_server_t *s)
{
    char path[4096];
    int want;

    snprintf(path, sizeof(path), "%s/obj", s->data_dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        ps_error("mkdir %s: %m", path);
        return ps_status_from_errno(errno);
    }
    s->obj_dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->obj_dir_fd < 0) {
        ps_error("open %s: %m", path);
        return ps_status_from_errno(errno);
    }
    for (int i = 0; i < 256; i++) {
        char sub[4];
        snprintf(sub, sizeof(sub), "%02x", i);
        if (mkdirat(s->obj_dir_fd, sub, 0755) != 0 && errno != EEXIST) {
            ps_error("mkdir %s/%s: %m", path, sub);
            return ps_status_from_errno(errno);
        }
    }

    const char *d = s->cfg.direct_io;
    int b;
    if (strcasecmp(d, "auto") == 0) {
        want = -1;
    } else if (ps_parse_bool(d, &b) == PS_OK) {
        want = b;
    } else {
        ps_error("direct_io: '%s' is not auto, yes or no", d);
        return PS_ERR_INVALID;
    }
    int st = pss_probe_direct(s, want);
    return st == PS_OK ? pss_probe_sizes(s) : st;
}

/* ---- per-worker state -------------------------------------------------------------- */

int pss_store_worker_init(pss_worker_t *w)
{
    int ret;

    w->aio_depth = (int)w->server->cfg.aio_depth;
    w->max_open = w->server->max_open_per_worker;
    w->aio_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->aio_efd < 0) {
        ps_error("worker %u: eventfd for aio: %m", w->index);
        return PS_ERR_IO;
    }
    memset(&w->aio_ctx, 0, sizeof(w->aio_ctx));
    ret = io_setup(w->aio_depth, &w->aio_ctx);
    if (ret < 0) {
        errno = -ret;
        ps_error("worker %u: io_setup(%d): %m (see /proc/sys/fs/aio-max-nr)", w->index,
                 w->aio_depth);
        return ps_status_from_errno(-ret);
    }
    w->aio_wait_head = NULL;
    w->aio_wait_tail = &w->aio_wait_head;
    w->objs_cap = PSS_OBJ_TABLE_MIN;
    w->objs = calloc(w->objs_cap, sizeof(*w->objs));
    if (w->objs == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    return PS_OK;
}

void pss_store_worker_cleanup(pss_worker_t *w)
{
    if (w->aio_ctx != NULL) {
        io_destroy(w->aio_ctx);
        w->aio_ctx = NULL;
    }
    if (w->aio_efd >= 0) {
        close(w->aio_efd);
        w->aio_efd = -1;
    }
    free(w->objs);
    w->objs = NULL;
}

/* ---- object table --------------------------------------------------------------- */

static size_t pss_obj_bucket(pss_worker_t *w, uint64_t file_id)
{
    uint64_t h = file_id * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (w->objs_cap - 1);
}

static pss_object_t *pss_obj_find(pss_worker_t *w, uint64_t file_id)
{
    for (pss_object_t *o = w->objs[pss_obj_bucket(w, file_id)]; o != NULL; o = o->hnext) {
        if (o->file_id == file_id) {
            return o;
        }
    }
    return NULL;
}

static void pss_obj_grow(pss_worker_t *w)
{
    size_t old_cap = w->objs_cap;
    pss_object_t **old = w->objs;
    pss_object_t **tab = calloc(old_cap * 2, sizeof(*tab));

    if (tab == NULL) {
        return; /* keep the longer chains */
    }
    w->objs = tab;
    w->objs_cap = old_cap * 2;
    for (size_t i = 0; i < old_cap; i++) {
        pss_object_t *o = old[i], *next;
        for (; o != NULL; o = next) {
            next = o->hnext;
            size_t b = pss_obj_bucket(w, o->file_id);
            o->hnext = w->objs[b];
            w->objs[b] = o;
        }
    }
    free(old);
}

static void pss_obj_path(uint64_t file_id, char *buf, size_t len)
{
    snprintf(buf, len, "%02x/%016" PRIx64, (unsigned)(file_id >> 56), file_id);
}

/*
 * Open the object's file (create it if `create`). A missing file without
 * `create` is PS_OK with obj->exists == 0.
 */
static int pss_obj_open(pss_worker_t *w, pss_object_t *obj, int create)
{
    pss_server_t *s = w->server;
    char rel[64];
    struct stat st;
    int flags = O_RDWR | O_CLOEXEC | (s->direct_io ? O_DIRECT : 0) | (create ? O_CREAT : 0);

    if (obj->fd >= 0) {
        return PS_OK;
    }
    pss_obj_path(obj->file_id, rel, sizeof(rel));
    obj->fd = openat(s->obj_dir_fd, rel, flags, 0644);
    if (obj->fd < 0) {
        if (errno == ENOENT && !create) {
            obj->exists = 0;
            return PS_OK;
        }
        ps_error("worker %u: open %s/obj/%s%s: %m", w->index, s->data_dir, rel,
                 s->direct_io ? " with O_DIRECT" : "");
        return ps_status_from_errno(errno);
    }
    if (fstat(obj->fd, &st) != 0) {
        ps_error("worker %u: fstat %s/obj/%s: %m", w->index, s->data_dir, rel);
        close(obj->fd);
        obj->fd = -1;
        return PS_ERR_IO;
    }
    obj->exists = 1;
    obj->size = obj->phys_size = (uint64_t)st.st_size;
    uint64_t le;
    ssize_t n = fgetxattr(obj->fd, PSS_SIZE_XATTR, &le, sizeof(le));
    if (n == (ssize_t)sizeof(le)) {
        uint64_t size = le64toh(le);
        if (size < obj->size) {
            obj->size = size;
        }
    } else if (n >= 0 || errno != ENODATA) { /* ENODATA: a new file, its length is its size */
        if (n >= 0) {
            ps_error("worker %u: %s/obj/%s: attribute %s holds %zd bytes, not 8", w->index,
                     s->data_dir, rel, PSS_SIZE_XATTR, n);
        } else {
            ps_error("worker %u: %s/obj/%s: read attribute %s: %m", w->index, s->data_dir, rel,
                     PSS_SIZE_XATTR);
        }
        close(obj->fd);
        obj->fd = -1;
        return PS_ERR_IO;
    }
    w->nopen++;
    return PS_OK;
}

/* Store the logical size in the object's attribute (made durable by fsync). */
static int pss_obj_save_size(pss_worker_t *w, pss_object_t *obj)
{
    uint64_t le = htole64(obj->size);

    if (fsetxattr(obj->fd, PSS_SIZE_XATTR, &le, sizeof(le), 0) != 0) {
        ps_error("worker %u: set %s of object %016" PRIx64 ": %m", w->index, PSS_SIZE_XATTR,
                 obj->file_id);
        return ps_status_from_errno(errno);
    }
    obj->size_dirty = 1;
    return PS_OK;
}

/*
 * Make what was written to the object durable: fdatasync for data, fsync
 * when the size attribute changed since the last time.
 */
static int pss_obj_sync(pss_worker_t *w, pss_object_t *obj)
{
    if (obj->fd < 0 || (!obj->dirty && !obj->size_dirty)) {
        return PS_OK;
    }
    if ((obj->size_dirty ? fsync(obj->fd) : fdatasync(obj->fd)) != 0) {
        ps_error("worker %u: %s object %016" PRIx64 ": %m", w->index,
                 obj->size_dirty ? "fsync" : "fdatasync", obj->file_id);
        return ps_status_from_errno(errno);
    }
    obj->dirty = obj->size_dirty = 0;
    return PS_OK;
}

/* Make an object's data durable (if written since the last time) and close it. */
static void pss_obj_close(pss_worker_t *w, pss_object_t *obj)
{
    if (obj->fd < 0) {
        return;
    }
    pss_obj_sync(w, obj);
    obj->dirty = obj->size_dirty = 0;
    close(obj->fd);
    obj->fd = -1;
    w->nopen--;
}

static int pss_obj_idle(const pss_object_t *obj)
{
    return obj->wait_head == NULL && obj->active == NULL && !obj->scheduled;
}

static void pss_obj_unlink_free(pss_worker_t *w, pss_object_t *obj)
{
    pss_object_t **pp = &w->objs[pss_obj_bucket(w, obj->file_id)];
    for (; *pp != NULL; pp = &(*pp)->hnext) {
        if (*pp == obj) {
            *pp = obj->hnext;
            w->nobjs--;
            free(obj);
            return;
        }
    }
}

/*
 * Keep the number of open objects of this worker under max_open: close
 * (after fdatasync of written ones) and forget idle objects until a quarter
 * of the budget is free again. They are reopened on their next request.
 */
static void pss_obj_trim(pss_worker_t *w)
{
    size_t target = w->max_open - w->max_open / 4;

    if (w->nopen <= w->max_open) {
        return;
    }
    for (size_t b = 0; b < w->objs_cap && w->nopen > target; b++) {
        pss_object_t *obj = w->objs[b], *next;
        for (; obj != NULL && w->nopen > target; obj = next) {
            next = obj->hnext;
            if (obj->fd >= 0 && pss_obj_idle(obj)) {
                pss_obj_close(w, obj);
                pss_obj_unlink_free(w, obj);
            }
        }
    }
    ps_debug("worker %u: closed idle objects, %zu still open", w->index, w->nopen);
}

static pss_object_t *pss_obj_get(pss_worker_t *w, uint64_t file_id)
{
    pss_object_t *obj = pss_obj_find(w, file_id);

    if (obj != NULL) {
        return obj;
    }
    obj = calloc(1, sizeof(*obj));
    if (obj == NULL) {
        return NULL;
    }
    obj->file_id = file_id;
    obj->fd = -1;
    obj->wait_tail = &obj->wait_head;
    if (pss_obj_open(w, obj, 0) != PS_OK) {
        /* unreadable: treated as missing; writes will report the error */
        obj->exists = 0;
    }
    if (w->nobjs + 1 > w->objs_cap) {
        pss_obj_grow(w);
    }
    size_t b = pss_obj_bucket(w, file_id);
    obj->hnext = w->objs[b];
    w->objs[b] = obj;
    w->nobjs++;
    return obj;
}

/* Forget an idle object that has no open file (keeps the table small). */
static void pss_obj_forget_if_idle(pss_worker_t *w, pss_object_t *obj)
{
    if (obj->fd < 0 && pss_obj_idle(obj)) {
        pss_obj_unlink_free(w, obj);
    }
}

static void pss_obj_schedule(pss_worker_t *w, pss_object_t *obj)
{
    if (!obj->scheduled) {
        obj->scheduled = 1;
        obj->next_ready = w->ready_head;
        w->ready_head = obj;
    }
}

static uint64_t pss_round_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

/*
 * Set the object's logical size (truncate or extend; the object is idle).
 * The file keeps a whole number of blocks: blocks past the new size are
 * dropped, and when the size falls inside a block, the tail of that block
 * is zeroed on disk (read, clear, write back, as the data path does), so
 * that a later extension reads zeros there.
 */
static int pss_obj_resize(pss_worker_t *w, pss_object_t *obj, uint64_t size)
{
    pss_server_t *s = w->server;
    uint64_t a = s->align;
    uint64_t keep = size < obj->size ? size : obj->size;
    int st = PS_OK;

    if (keep % a != 0 && keep < obj->size) {
        uint64_t boff = keep - keep % a;
        uint8_t *buf;
        if (posix_memalign((void **)&buf, s->mem_align, a) != 0) {
            return PS_ERR_NO_MEMORY;
        }
        ssize_t n = pread(obj->fd, buf, a, (off_t)boff);
        if (n >= 0) {
            memset(buf + (keep - boff), 0, a - (keep - boff));
            if (n < (ssize_t)a) {
                memset(buf + n, 0, a - (size_t)n);
            }
            n = pwrite(obj->fd, buf, a, (off_t)boff);
        }
        if (n < 0) {
            ps_error("worker %u: zeroing the tail of object %016" PRIx64 " at %" PRIu64 ": %m",
                     w->index, obj->file_id, keep);
            st = ps_status_from_errno(errno);
        }
        free(buf);
        if (st != PS_OK) {
            return st;
        }
    }
    /* Past the old size nothing is kept, even what a failed write left. */
    uint64_t phys = pss_round_up(size, a);
    if (ftruncate(obj->fd, (off_t)pss_round_up(keep, a)) != 0 ||
        ftruncate(obj->fd, (off_t)phys) != 0) {
        ps_error("worker %u: ftruncate object %016" PRIx64 " to %" PRIu64 ": %m", w->index,
                 obj->file_id, phys);
        return ps_status_from_errno(errno);
    }
    obj->phys_size = phys;
    obj->size = size;
    obj->dirty = 1;
    return pss_obj_save_size(w, obj);
}

static void pss_obj_fill_rep(pss_object_t *obj, ps_obj_rep_t *rep)
{
    struct stat st;

    memset(rep, 0, sizeof(*rep));
    if (!obj->exists) {
        return;
    }
    rep->exists = 1;
    rep->size = obj->size;
    if (obj->fd >= 0 && fstat(obj->fd, &st) == 0) {
        rep->blocks = (uint64_t)st.st_blocks * 512;
        rep->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    }
}

/* ---- aio ------------------------------------------------------------------------ */

static void pss_span_done(pss_worker_t *w, pss_span_io_t *sp, long res);

static void pss_aio_submit(pss_worker_t *w, pss_span_io_t *sp)
{
    pss_object_t *obj = sp->job->obj;
    struct iocb *iocbp = &sp->iocb;
    int ret;

    if (w->aio_inflight >= w->aio_depth) {
        sp->next_wait = NULL;
        *w->aio_wait_tail = sp;
        w->aio_wait_tail = &sp->next_wait;
        return;
    }
    if (sp->writing) {
        io_prep_pwrite(iocbp, obj->fd, sp->buf, sp->len, (long long)sp->off);
        PSS_STAT_ADD(w, disk_writes, 1);
        PSS_STAT_ADD(w, disk_bytes_written, sp->len);
    } else {
        io_prep_pread(iocbp, obj->fd, sp->buf, sp->len, (long long)sp->off);
        PSS_STAT_ADD(w, disk_reads, 1);
        PSS_STAT_ADD(w, disk_bytes_read, sp->len);
        if (sp->job->is_write) {
            PSS_STAT_ADD(w, rmw_reads, 1);
        }
    }
    io_set_eventfd(iocbp, w->aio_efd);
    iocbp->data = sp;
    ret = io_submit(w->aio_ctx, 1, &iocbp);
    if (ret != 1) {
        errno = ret < 0 ? -ret : EAGAIN;
        ps_error("worker %u: io_submit %s of %" PRIu64 " bytes at %" PRIu64 " of object %016" PRIx64
                 ": %m",
                 w->index, sp->writing ? "write" : "read", sp->len, sp->off, obj->file_id);
        pss_span_done(w, sp, ret < 0 ? ret : -EAGAIN);
        return;
    }
    w->aio_inflight++;
    PSS_STAT_SET(w, queue_depth, w->aio_inflight);
    if ((uint64_t)w->aio_inflight > PSS_STAT_GET(w, queue_depth_max)) {
        PSS_STAT_SET(w, queue_depth_max, w->aio_inflight);
    }
}

static void pss_aio_reap(pss_worker_t *w)
{
    struct io_event evs[64];
    struct timespec zero = {0, 0};
    int n;

    while (w->aio_inflight > 0) {
        n = io_getevents(w->aio_ctx, 0, 64, evs, &zero);
        if (n < 0) {
            if (n == -EINTR) {
                continue;
            }
            errno = -n;
            ps_error("worker %u: io_getevents: %m", w->index);
            return;
        }
        if (n == 0) {
            return;
        }
        w->aio_inflight -= n;
        PSS_STAT_SET(w, queue_depth, w->aio_inflight);
        for (int i = 0; i < n; i++) {
            pss_span_done(w, evs[i].data, (long)evs[i].res);
        }
    }
}

static void pss_aio_submit_waiting(pss_worker_t *w)
{
    while (w->aio_wait_head != NULL && w->aio_inflight < w->aio_depth) {
        pss_span_io_t *sp = w->aio_wait_head;
        w->aio_wait_head = sp->next_wait;
        if (w->aio_wait_head == NULL) {
            w->aio_wait_tail = &w->aio_wait_head;
        }
        pss_aio_submit(w, sp);
    }
}

/* ---- jobs ------------------------------------------------------------------------ */

static void pss_job_free(pss_job_t *job)
{
    if (job->spans != NULL) {
        for (size_t i = 0; i < job->nspans; i++) {
            if (job->spans[i].own_buf) {
                free(job->spans[i].buf);
            }
        }
    }
    free(job->spans);
    free(job->pieces);
    free(job->batches);
    free(job);
}

static const ps_region_t *pss_req_regions(pss_req_t *req)
{
    return (const ps_region_t *)req->data;
}

/* Index of the first span whose end is beyond off (spans sorted, disjoint). */
static size_t pss_span_search(const pss_span_io_t *spans, size_t n, uint64_t off)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (spans[mid].off + spans[mid].len <= off) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/*
 * Plan a job for batches[0..nbatches): sort all regions, coalesce them into
 * aligned spans, and cut every region into pieces (one per span it touches)
 * grouped by span in request order, so that for writes a later region
 * overwrites an earlier one exactly as if they had been applied in turn.
 */
static pss_job_t *pss_job_plan(pss_worker_t *w, pss_object_t *obj, pss_req_t **batches,
                               uint32_t nbatches, int is_write)
{
    pss_server_t *s = w->server;
    size_t nreg = 0, r = 0, nspans, bound;
    ps_extent_t *ext;
    ps_io_span_t *plan;
    pss_job_t *job;

    for (uint32_t b = 0; b < nbatches; b++) {
        nreg += batches[b]->body.io.nregions;
    }
    job = calloc(1, sizeof(*job));
    ext = malloc(nreg * sizeof(*ext));
    if (job == NULL || ext == NULL) {
        goto err_free;
    }
    job->obj = obj;
    job->is_write = is_write;
    for (uint32_t b = 0; b < nbatches; b++) {
        const ps_region_t *reg = pss_req_regions(batches[b]);
        for (uint32_t i = 0; i < batches[b]->body.io.nregions; i++, r++) {
            ext[r].off = reg[i].off;
            ext[r].len = reg[i].len;
            if (reg[i].off + reg[i].len > job->max_end) {
                job->max_end = reg[i].off + reg[i].len;
            }
        }
    }
    ps_extent_sort(ext, nreg);
    bound = ps_extent_plan_bound(ext, nreg, s->align, s->cfg.max_io);
    plan = malloc(bound * sizeof(*plan));
    if (plan == NULL) {
        goto err_free;
    }
    nspans = ps_extent_plan(ext, nreg, s->align, s->cfg.coalesce_gap, s->cfg.max_io, plan);
    free(ext);
    ext = NULL;

    job->spans = calloc(nspans, sizeof(*job->spans));
    if (job->spans == NULL) {
        free(plan);
        goto err_free;
    }
    job->nspans = nspans;
    for (size_t i = 0; i < nspans; i++) {
        job->spans[i].job = job;
        job->spans[i].off = plan[i].off;
        job->spans[i].len = plan[i].len;
        job->spans[i].holes = plan[i].holes;
    }
    free(plan);

    /* Pieces: first count per span, then place them grouped by span. */
    size_t npieces = 0;
    for (uint32_t b = 0; b < nbatches; b++) {
        const ps_region_t *reg = pss_req_regions(batches[b]);
        for (uint32_t i = 0; i < batches[b]->body.io.nregions; i++) {
            uint64_t end = reg[i].off + reg[i].len;
            for (size_t k = pss_span_search(job->spans, nspans, reg[i].off);
                 k < nspans && job->spans[k].off < end; k++) {
                job->spans[k].npieces++;
                npieces++;
            }
        }
    }
    job->pieces = malloc((npieces ? npieces : 1) * sizeof(*job->pieces));
    if (job->pieces == NULL) {
        goto err_free;
    }
    job->npieces = npieces;
    uint32_t acc = 0;
    for (size_t k = 0; k < nspans; k++) {
        job->spans[k].first_piece = acc;
        acc += job->spans[k].npieces;
        job->spans[k].npieces = 0; /* refilled below */
    }
    for (uint32_t b = 0; b < nbatches; b++) {
        pss_req_t *req = batches[b];
        const ps_region_t *reg = pss_req_regions(req);
        uint8_t *mem = is_write ? (uint8_t *)req->payload : req->reply_buf;
        for (uint32_t i = 0; i < req->body.io.nregions; i++) {
            uint64_t end = reg[i].off + reg[i].len;
            for (size_t k = pss_span_search(job->spans, nspans, reg[i].off);
                 k < nspans && job->spans[k].off < end; k++) {
                pss_span_io_t *sp = &job->spans[k];
                uint64_t a = reg[i].off > sp->off ? reg[i].off : sp->off;
                uint64_t z = end < sp->off + sp->len ? end : sp->off + sp->len;
                pss_piece_t *p = &job->pieces[sp->first_piece + sp->npieces++];
                p->span_off = a - sp->off;
                p->len = z - a;
                p->obj_off = a;
                p->mem = mem + (a - reg[i].off);
            }
            mem += reg[i].len;
        }
    }
    return job;

err_free:
    free(ext);
    if (job != NULL) {
        pss_job_free(job);
    }
    ps_error("worker %u: no memory to plan %zu regions", w->index, nreg);
    return NULL;
}

/* Do two jobs' span lists intersect? Both are sorted and disjoint. */
static int pss_jobs_overlap(const pss_job_t *a, const pss_job_t *b)
{
    size_t i = 0, j = 0;
    while (i < a->nspans && j < b->nspans) {
        const pss_span_io_t *x = &a->spans[i], *y = &b->spans[j];
        if (x->off + x->len <= y->off) {
            i++;
        } else if (y->off + y->len <= x->off) {
            j++;
        } else {
            return 1;
        }
    }
    return 0;
}

static int pss_job_conflicts(const pss_job_t *job)
{
    for (const pss_job_t *a = job->obj->active; a != NULL; a = a->next) {
        if ((job->is_write || a->is_write) && pss_jobs_overlap(job, a)) {
            return 1;
        }
    }
    return 0;
}

/* Copy a write job's pieces of one span into its buffer (request order). */
static void pss_span_fill(pss_span_io_t *sp)
{
    const pss_piece_t *p = &sp->job->pieces[sp->first_piece];
    for (uint32_t i = 0; i < sp->npieces; i++) {
        memcpy(sp->buf + p[i].span_off, p[i].mem, p[i].len);
    }
}

/* A span whose only piece covers it exactly at an aligned address can use
 * the payload (write) or reply (read) memory directly. */
static int pss_span_direct(pss_server_t *s, const pss_span_io_t *sp, const pss_piece_t *pieces)
{
    if (sp->npieces != 1) {
        return 0;
    }
    const pss_piece_t *p = &pieces[sp->first_piece];
    return p->span_off == 0 && p->len == sp->len && ((uintptr_t)p->mem % s->mem_align) == 0;
}

static void pss_job_finish(pss_worker_t *w, pss_job_t *job);

static void pss_job_start(pss_worker_t *w, pss_job_t *job)
{
    pss_server_t *s = w->server;
    pss_object_t *obj = job->obj;

    /*
     * ext4 (and others) run an O_DIRECT write that extends the file
     * synchronously inside io_submit, which would stall this worker for the
     * whole disk write. So the file is first extended (sparsely) to the end
     * of the job's last span, rounded up to a whole block (see the top of
     * this file); the writes then land inside i_size and stay asynchronous.
     */
    if (job->is_write && job->nspans > 0) {
        uint64_t span_end = pss_round_up(
            job->spans[job->nspans - 1].off + job->spans[job->nspans - 1].len, s->align);
        if (span_end > obj->phys_size) {
            if (ftruncate(obj->fd, (off_t)span_end) == 0) {
                obj->phys_size = span_end;
            } else {
                ps_warn("worker %u: ftruncate object %016" PRIx64 " up to %" PRIu64
                        ": %m (writes past the end will be synchronous)",
                        w->index, obj->file_id, span_end);
            }
        }
    }
    job->next = obj->active;
    obj->active = job;
    if (job->nbatches > 1) {
        PSS_STAT_ADD(w, merged_batches, job->nbatches);
    }
    /* One extra count held by this loop, so that spans failing at once
     * cannot finish the job before every span has been looked at. */
    job->spans_left = job->nspans + 1;
    for (size_t i = 0; i < job->nspans; i++) {
        pss_span_io_t *sp = &job->spans[i];
        if (pss_span_direct(s, sp, job->pieces)) {
            sp->buf = job->pieces[sp->first_piece].mem;
            sp->own_buf = 0;
        } else {
            if (posix_memalign((void **)&sp->buf, s->mem_align, sp->len) != 0) {
                ps_error("worker %u: no memory for a %" PRIu64 "-byte I/O buffer", w->index,
                         sp->len);
                job->status = PS_ERR_NO_MEMORY;
                job->spans_left--;
                sp->buf = NULL;
                continue;
            }
            sp->own_buf = 1;
        }
        if (job->is_write && !sp->holes) {
            if (sp->own_buf) {
                pss_span_fill(sp);
            }
            sp->writing = 1;
        } else {
            sp->writing = 0; /* read, or the read of a read-modify-write */
        }
        pss_aio_submit(w, sp);
    }
    if (--job->spans_left == 0) {
        pss_job_finish(w, job);
    }
}

static void pss_span_done(pss_worker_t *w, pss_span_io_t *sp, long res)
{
    pss_job_t *job = sp->job;

    if (res < 0) {
        if (job->status == PS_OK) {
            errno = (int)-res;
            ps_error("worker %u: %s of %" PRIu64 " bytes at %" PRIu64 " of object %016" PRIx64
                     ": %m",
                     w->index, sp->writing ? "write" : "read", sp->len, sp->off, job->obj->file_id);
            job->status = ps_status_from_errno((int)-res);
        }
    } else if (sp->writing && (uint64_t)res != sp->len) {
        if (job->status == PS_OK) {
            ps_error("worker %u: short write of %ld of %" PRIu64 " bytes at %" PRIu64
                     " of object %016" PRIx64,
                     w->index, res, sp->len, sp->off, job->obj->file_id);
            job->status = PS_ERR_IO;
        }
    } else if (!sp->writing && (uint64_t)res < sp->len) {
        /* end of file: the rest of the span reads as zeros */
        memset(sp->buf + res, 0, sp->len - (uint64_t)res);
    }

    if (!sp->writing && job->is_write && job->status == PS_OK) {
        /* read-modify-write: the span is read, lay the regions over it */
        pss_span_fill(sp);
        sp->writing = 1;
        pss_aio_submit(w, sp);
        return;
    }
    if (--job->spans_left == 0) {
        pss_job_finish(w, job);
    }
}

static void pss_job_finish(pss_worker_t *w, pss_job_t *job)
{
    pss_object_t *obj = job->obj;
    pss_job_t **pp;
    int st = job->status;

    for (pp = &obj->active; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == job) {
            *pp = job->next;
            break;
        }
    }
    if (job->is_write) {
        if (st == PS_OK) {
            uint64_t span_end =
                job->nspans ? job->spans[job->nspans - 1].off + job->spans[job->nspans - 1].len : 0;
            if (span_end > obj->phys_size) { /* the extension before it failed */
                obj->phys_size = span_end;
            }
            if (job->max_end > obj->size) {
                obj->size = job->max_end;
                st = pss_obj_save_size(w, obj); /* before the write is acknowledged */
            }
        } else {
            /* a failed write may have extended the file: keep it consistent */
            struct stat st_;
            if (fstat(obj->fd, &st_) == 0 && (uint64_t)st_.st_size > obj->phys_size) {
                obj->phys_size = (uint64_t)st_.st_size;
            }
        }
        obj->dirty = 1;
    } else if (st == PS_OK) {
        /* gather the spans into the replies; zeros past the logical end */
        for (size_t k = 0; k < job->nspans; k++) {
            pss_span_io_t *sp = &job->spans[k];
            const pss_piece_t *p = &job->pieces[sp->first_piece];
            for (uint32_t i = 0; i < sp->npieces; i++) {
                if (sp->own_buf) {
                    memcpy(p[i].mem, sp->buf + p[i].span_off, p[i].len);
                }
                if (p[i].obj_off + p[i].len > obj->size) {
                    uint64_t keep = p[i].obj_off >= obj->size ? 0 : obj->size - p[i].obj_off;
                    memset(p[i].mem + keep, 0, p[i].len - keep);
                }
            }
        }
    }

    for (uint32_t b = 0; b < job->nbatches; b++) {
        pss_req_t *req = job->batches[b];
        ps_io_rep_t rep = {req->body.io.payload_len, obj->size};
        if (st != PS_OK) {
            pss_reply(req, st, NULL, 0, NULL, 0, NULL);
        } else if (job->is_write) {
            pss_reply(req, PS_OK, &rep, sizeof(rep), NULL, 0, NULL);
        } else {
            uint8_t *buf = req->reply_buf;
            req->reply_buf = NULL;
            pss_reply(req, PS_OK, &rep, sizeof(rep), buf, req->body.io.payload_len, free);
        }
    }
    pss_job_free(job);
    obj->blocked = 0;
    pss_obj_schedule(w, obj);
}

/* ---- the object's queue ------------------------------------------------------------ */

static pss_req_t *pss_obj_pop(pss_object_t *obj)
{
    pss_req_t *req = obj->wait_head;
    obj->wait_head = req->next;
    if (obj->wait_head == NULL) {
        obj->wait_tail = &obj->wait_head;
    }
    req->next = NULL;
    return req;
}

static void pss_obj_control(pss_worker_t *w, pss_object_t *obj, pss_req_t *req)
{
    ps_obj_rep_t rep;
    int st = PS_OK;
    char rel[64];

    switch (req->hdr.type) {
    case PS_MSG_OBJ_STAT:
        break;
    case PS_MSG_OBJ_TRUNCATE:
        st = pss_obj_open(w, obj, 1);
        if (st == PS_OK) {
            st = pss_obj_resize(w, obj, req->body.obj.size);
        }
        break;
    case PS_MSG_OBJ_SYNC:
        st = pss_obj_sync(w, obj);
        break;
    case PS_MSG_OBJ_REMOVE:
        pss_obj_fill_rep(obj, &rep);
        if (obj->fd >= 0) {
            obj->dirty = obj->size_dirty = 0; /* its data goes away: no need to sync it */
            pss_obj_close(w, obj);
        }
        pss_obj_path(obj->file_id, rel, sizeof(rel));
        if (unlinkat(w->server->obj_dir_fd, rel, 0) != 0 && errno != ENOENT) {
            ps_error("worker %u: unlink %s/obj/%s: %m", w->index, w->server->data_dir, rel);
            st = ps_status_from_errno(errno);
        }
        obj->exists = 0;
        obj->size = obj->phys_size = 0;
        pss_reply(req, st, &rep, sizeof(rep), NULL, 0, NULL);
        return;
    }
    pss_obj_fill_rep(obj, &rep);
    pss_reply(req, st, &rep, sizeof(rep), NULL, 0, NULL);
}

/*
 * Start whatever the head of the object's queue allows: control requests
 * when the object is idle (STAT at once), and I/O jobs made of the longest
 * run of same-kind batches at the head (up to max_merge bytes) when they do
 * not intersect a running job.
 */
static void pss_obj_run(pss_worker_t *w, pss_object_t *obj)
{
    pss_server_t *s = w->server;

    while (obj->wait_head != NULL && !obj->blocked) {
        pss_req_t *head = obj->wait_head;
        uint16_t type = head->hdr.type;

        if (type != PS_MSG_OBJ_WRITE && type != PS_MSG_OBJ_READ) {
            if (type != PS_MSG_OBJ_STAT && obj->active != NULL) {
                obj->blocked = 1;
                break;
            }
            pss_obj_control(w, obj, pss_obj_pop(obj));
            continue;
        }

        uint32_t n = 0;
        uint64_t bytes = 0;
        for (pss_req_t *r = head; r != NULL && r->hdr.type == type; r = r->next) {
            if (n > 0 && bytes + r->body.io.payload_len > s->cfg.max_merge) {
                break;
            }
            bytes += r->body.io.payload_len;
            n++;
        }
        pss_req_t **batches = malloc(n * sizeof(*batches));
        if (batches == NULL) {
            pss_reply(pss_obj_pop(obj), PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, NULL);
            continue;
        }
        pss_req_t *r = head;
        for (uint32_t i = 0; i < n; i++, r = r->next) {
            batches[i] = r;
        }
        if (type == PS_MSG_OBJ_WRITE && obj->fd < 0) {
            int st = pss_obj_open(w, obj, 1);
            if (st != PS_OK) {
                free(batches);
                pss_reply(pss_obj_pop(obj), st, NULL, 0, NULL, 0, NULL);
                continue;
            }
        }
        pss_job_t *job = pss_job_plan(w, obj, batches, n, type == PS_MSG_OBJ_WRITE);
        if (job == NULL) {
            free(batches);
            pss_reply(pss_obj_pop(obj), PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, NULL);
            continue;
        }
        job->batches = batches;
        job->nbatches = n;
        if (pss_job_conflicts(job)) {
            job->batches = NULL; /* still queued */
            free(batches);
            pss_job_free(job);
            obj->blocked = 1; /* re-planned when a running job finishes */
            break;
        }
        for (uint32_t i = 0; i < n; i++) {
            pss_obj_pop(obj);
        }
        if (type == PS_MSG_OBJ_READ && obj->fd < 0) {
            /* nothing on disk: every byte reads as zero (size 0 clamps all) */
            job->spans_left = 0;
            job->next = obj->active;
            obj->active = job;
            pss_job_finish(w, job);
            continue;
        }
        pss_job_start(w, job);
    }
}

/* ---- entry points ------------------------------------------------------------------- */

void pss_store_handle(pss_worker_t *w, pss_req_t *req)
{
    pss_server_t *s = w->server;
    uint16_t type = req->hdr.type;
    uint64_t file_id;
    pss_object_t *obj;

    if (type == PS_MSG_OBJ_WRITE || type == PS_MSG_OBJ_READ) {
        const ps_io_req_t *io = &req->body.io;
        uint64_t rbytes = (uint64_t)io->nregions * sizeof(ps_region_t);
        int st;

        file_id = io->file_id;
        if (((uintptr_t)req->data % 8) != 0) {
            /* held UCX data is 8-byte aligned (checked in the AM callback) */
            pss_reply(req, PS_ERR_PROTO, NULL, 0, NULL, 0, NULL);
            return;
        }
        st = ps_proto_check_regions(pss_req_regions(req), io->nregions, io->payload_len,
                                    PSS_MAX_OBJ_SIZE);
        if (st != PS_OK) {
            ps_warn("worker %u: %s req %llu for object %016" PRIx64 ": bad region list (%u "
                    "regions, payload %" PRIu64 " bytes; lengths must be > 0, sum to the "
                    "payload and end below %llu)",
                    w->index, ps_msg_type_name(type), (unsigned long long)req->hdr.req_id, file_id,
                    io->nregions, io->payload_len, (unsigned long long)PSS_MAX_OBJ_SIZE);
            pss_reply(req, st, NULL, 0, NULL, 0, NULL);
            return;
        }
        if (type == PS_MSG_OBJ_WRITE) {
            req->payload = (const uint8_t *)req->data + rbytes;
            PSS_STAT_ADD(w, write_batches, 1);
            PSS_STAT_ADD(w, regions_written, io->nregions);
            PSS_STAT_ADD(w, bytes_written, io->payload_len);
        } else {
            if (posix_memalign((void **)&req->reply_buf, s->mem_align,
                               io->payload_len ? io->payload_len : 1) != 0) {
                ps_error("worker %u: no memory for a %" PRIu64 "-byte read reply", w->index,
                         io->payload_len);
                pss_reply(req, PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, NULL);
                return;
            }
            PSS_STAT_ADD(w, read_batches, 1);
            PSS_STAT_ADD(w, regions_read, io->nregions);
            PSS_STAT_ADD(w, bytes_read, io->payload_len);
        }
    } else {
        file_id = req->body.obj.file_id;
        if (type == PS_MSG_OBJ_TRUNCATE && req->body.obj.size > PSS_MAX_OBJ_SIZE) {
            ps_warn("worker %u: OBJ_TRUNCATE of %016" PRIx64 " to %" PRIu64
                    " bytes: above the object size limit",
                    w->index, file_id, req->body.obj.size);
            pss_reply(req, PS_ERR_TOO_BIG, NULL, 0, NULL, 0, NULL);
            return;
        }
    }

    obj = pss_obj_get(w, file_id);
    if (obj == NULL) {
        pss_reply(req, PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, NULL);
        return;
    }
    req->next = NULL;
    *obj->wait_tail = req;
    obj->wait_tail = &req->next;
    if (!obj->blocked) {
        pss_obj_schedule(w, obj);
    }
}

void pss_store_progress(pss_worker_t *w)
{
    pss_aio_reap(w);
    pss_aio_submit_waiting(w);
    while (w->ready_head != NULL) {
        pss_object_t *obj = w->ready_head;
        w->ready_head = obj->next_ready;
        obj->scheduled = 0;
        pss_obj_run(w, obj);
        pss_obj_forget_if_idle(w, obj);
    }
    pss_obj_trim(w);
    pss_aio_submit_waiting(w);
}

int pss_store_busy(pss_worker_t *w)
{
    return w->aio_inflight > 0 || w->aio_wait_head != NULL || w->ready_head != NULL;
}

void pss_store_sync_all(pss_worker_t *w)
{
    for (size_t b = 0; w->objs != NULL && b < w->objs_cap; b++) {
        pss_object_t *obj = w->objs[b], *next;
        for (; obj != NULL; obj = next) {
            next = obj->hnext;
            pss_obj_close(w, obj);
            /* requests still queued here were answered or dropped by the drain */
            free(obj);
        }
        w->objs[b] = NULL;
    }
    w->nobjs = 0;
}

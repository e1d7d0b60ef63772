/*
 * pss_object.c: a worker's objects (see pss_object.h): the table that finds
 * them by file id (a hash table with chaining, doubled as it fills), their
 * files (open, size attribute, sync, resize, close) and the budget of open
 * files.
 *
 * Sizes: an object's file length is always a multiple of align (whole
 * file-system blocks) and its logical size is kept in an extended
 * attribute, user.pstripe.size. Setting a length that is not a multiple of
 * the block size makes the file system zero the rest of the last block
 * through the page cache; that page colliding with direct I/O in flight to
 * the same block made the kernel log "Page cache invalidation failure on
 * direct I/O" and fail the next fdatasync with EIO (and could let a stale
 * page overwrite direct writes). So writes past the end first extend the
 * file, sparsely and by whole blocks (pss_job.c), and the logical size (max
 * end of the completed writes) is stored in the attribute before the write
 * is acknowledged. Bytes between the logical size and the file's length are
 * zeros on disk (a truncate into a block zeroes its tail, directly), and
 * reads return zeros past the logical size.
 *
 * A server killed before it stored a grown size leaves acknowledged bytes
 * past the stored one: lost, as MPI allows for bytes never synced, but they
 * would show again once a write grows the object over them. So a write past
 * the stored size leaves the file longer than that size's last block
 * (pss_job_extend), a close cuts the file back to that block once the size
 * is stored, and an open that finds the file longer than its stored size's
 * last block zeroes that block past the size and cuts the file there
 * (pss_obj_cut_to_size).
 */
#include "pss_object.h"

#include "pss_removed.h"

#include "ps_log.h"
#include "ps_time.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define PSS_OBJ_TABLE_MIN 64 /* buckets of a new table (a power of 2) */

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
 * An object's failed writes live with its file once it is closed (and the
 * object forgotten: a full disk and many files must not fill the table):
 * the count a closed file keeps is what its writers' marks are compared
 * with when it is opened again. (A restart is detected by the clients
 * themselves; the count only grows, whatever the file says.)
 */
static ps_status_t pss_obj_load_failed(pss_worker_t *w, pss_object_t *obj, const char *rel)
{
    uint8_t v[12];
    ssize_t n = fgetxattr(obj->fd, PSS_FAILED_XATTR, v, sizeof(v));

    if (n < 0 && errno == ENODATA) {
        obj->failed_saved = 0;
        return PS_OK;
    }
    if (n != (ssize_t)sizeof(v)) {
        ps_error("worker %u: %s/obj/%s: attribute %s: %s", w->index, w->server->data_dir, rel,
                 PSS_FAILED_XATTR, n < 0 ? strerror(errno) : "not 12 bytes");
        return PS_ERR_IO;
    }
    uint64_t count;
    uint32_t status;
    memcpy(&count, v, 8);
    memcpy(&status, v + 8, 4);
    count = le64toh(count);
    status = le32toh(status);
    if (count > obj->failed_writes) {
        obj->failed_writes = count;
        obj->failed_status = (ps_status_t)status;
    }
    obj->failed_saved = count;
    return PS_OK;
}

/* Before the file is closed; 0 if it could not keep the count. */
static int pss_obj_save_failed(pss_worker_t *w, pss_object_t *obj)
{
    uint64_t count = htole64(obj->failed_writes);
    uint32_t status = htole32((uint32_t)obj->failed_status);
    uint8_t v[12];

    if (obj->failed_writes == obj->failed_saved) {
        return 1;
    }
    memcpy(v, &count, 8);
    memcpy(v + 8, &status, 4);
    if (fsetxattr(obj->fd, PSS_FAILED_XATTR, v, sizeof(v), 0) != 0) {
        ps_error("worker %u: set %s of object %016" PRIx64 ": %m (its failures stay in memory)",
                 w->index, PSS_FAILED_XATTR, obj->file_id);
        return 0;
    }
    obj->failed_saved = obj->failed_writes;
    return 1;
}

/* Zero the bytes of keep's block past keep (none if keep ends a block),
 * directly; nothing is written if they are zeros already. */
static ps_status_t pss_obj_zero_tail(pss_worker_t *w, pss_object_t *obj, uint64_t keep)
{
    pss_server_t *s = w->server;
    uint64_t a = s->align, boff = keep - keep % a;
    ps_status_t status = PS_OK;
    uint8_t *buf;
    size_t i;

    if (keep % a == 0) {
        return PS_OK;
    }
    if (posix_memalign((void **)&buf, s->mem_align, a) != 0) {
        return PS_ERR_NO_MEMORY;
    }
    ssize_t n = pread(obj->fd, buf, a, (off_t)boff);
    for (i = keep - boff; n > 0 && i < (size_t)n && buf[i] == 0; i++) {
    }
    if (n > 0 && i < (size_t)n) {
        memset(buf + (keep - boff), 0, a - (keep - boff));
        if (n < (ssize_t)a) {
            memset(buf + n, 0, a - (size_t)n);
        }
        n = pwrite(obj->fd, buf, a, (off_t)boff);
    }
    if (n < 0) {
        ps_error("worker %u: zeroing the tail of object %016" PRIx64 " at %" PRIu64 ": %m",
                 w->index, obj->file_id, keep);
        status = ps_status_from_errno(errno);
    }
    free(buf);
    return status;
}

/* Cut the file at its size's last block, whose tail is zeros already. */
static ps_status_t pss_obj_cut(pss_worker_t *w, pss_object_t *obj)
{
    uint64_t end = pss_round_up(obj->size, w->server->align);
    ps_status_t status = PS_OK;

    if (ftruncate(obj->fd, (off_t)end) != 0) {
        ps_error("worker %u: ftruncate object %016" PRIx64 " to its stored size's block, %" PRIu64
                 ": %m",
                 w->index, obj->file_id, end);
        status = ps_status_from_errno(errno);
    }
    if (status == PS_OK) {
        ps_debug("worker %u: object %016" PRIx64 " cut to its stored size, %" PRIu64, w->index,
                 obj->file_id, obj->size);
        obj->phys_size = obj->file_len = end;
    }
    return status;
}

/* The file is longer than its stored size's last block: a server stopped
 * before it stored a grown size, or before it cut the file at a close (see
 * the top). Zero that block past the size and cut the file there. No byte
 * of the object changes, so neither does its modification time (a file's
 * is its objects' newest: every file written since a server started took
 * the time of its stop). */
static ps_status_t pss_obj_cut_to_size(pss_worker_t *w, pss_object_t *obj)
{
    struct stat st;
    int have_times = fstat(obj->fd, &st) == 0;
    ps_status_t status = pss_obj_zero_tail(w, obj, obj->size);

    if (status == PS_OK) {
        status = pss_obj_cut(w, obj);
    }
    if (have_times) {
        struct timespec times[2] = {{0, UTIME_OMIT}, st.st_mtim};
        if (futimens(obj->fd, times) != 0) {
            ps_warn("worker %u: object %016" PRIx64 ": cannot restore its modification time: %m",
                    w->index, obj->file_id);
        }
    }
    return status;
}

ps_status_t pss_obj_open(pss_worker_t *w, pss_object_t *obj, int create)
{
    pss_server_t *s = w->server;
    char rel[64];
    struct stat st;
    int fix_attr = 0;
    int flags = O_RDWR | O_CLOEXEC | (s->direct_io ? O_DIRECT : 0) | (create ? O_CREAT : 0);

    if (obj->fd >= 0) {
        return PS_OK;
    }
    pss_obj_path(obj->file_id, rel, sizeof(rel));
    obj->fd = openat(s->obj_dir_fd, rel, flags & ~O_CREAT, 0600);
    if (obj->fd < 0 && errno == ENOENT) {
        /* a missing object is a hole, or a new one, unless its file was
         * removed while a client still had it open */
        ps_status_t status = pss_removed_check(s, obj->file_id);
        if (status != PS_OK) {
            return status;
        }
        if (!create) {
            obj->exists = 0; /* reads are zeros: nothing of a stale size */
            obj->size = obj->phys_size = obj->file_len = 0;
            return PS_OK;
        }
        obj->fd = openat(s->obj_dir_fd, rel, flags, 0600);
    }
    if (obj->fd < 0) {
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
    obj->size = obj->phys_size = obj->file_len = (uint64_t)st.st_size;
    uint64_t le;
    ssize_t n = fgetxattr(obj->fd, PSS_SIZE_XATTR, &le, sizeof(le));
    obj->size_attr = n == (ssize_t)sizeof(le);
    obj->saved_size = obj->size;
    if (n == (ssize_t)sizeof(le)) {
        uint64_t size = le64toh(le);
        if (size < obj->size) {
            obj->size = obj->saved_size = size;
        } else if (size > obj->size) { /* an older server's truncate, cut before it stored */
            obj->saved_size = size;
            fix_attr = 1;
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
    if (pss_obj_load_failed(w, obj, rel) != PS_OK ||
        (fix_attr && pss_obj_save_size(w, obj) != PS_OK) ||
        (obj->size_attr && obj->file_len > pss_round_up(obj->size, s->align) &&
         pss_obj_cut_to_size(w, obj) != PS_OK)) {
        close(obj->fd);
        obj->fd = -1;
        return PS_ERR_IO;
    }
    w->nopen++;
    return PS_OK;
}

static void pss_obj_ungrow(pss_worker_t *w, pss_object_t *obj)
{
    if (obj->size_grew_ns == 0) {
        return;
    }
    for (pss_object_t **pp = &w->grown_head; *pp != NULL; pp = &(*pp)->next_grown) {
        if (*pp == obj) {
            *pp = obj->next_grown;
            break;
        }
    }
    obj->next_grown = NULL;
    obj->size_grew_ns = 0;
}

#define PSS_SIZE_RETRY_NS 1000000000ull /* a size that could not be stored: retried after */

ps_status_t pss_obj_save_size(pss_worker_t *w, pss_object_t *obj)
{
    uint64_t le = htole64(obj->size);

    pss_obj_ungrow(w, obj);
    if (fsetxattr(obj->fd, PSS_SIZE_XATTR, &le, sizeof(le), 0) != 0) {
        int err = errno;
        uint64_t now = ps_time_ns(), dropped;

        if (ps_log_limit_pass(&w->io_error_log, now, PSS_LOG_EVERY_NS, &dropped)) {
            ps_error("worker %u: set %s of object %016" PRIx64 ": %s (tried again later; %" PRIu64
                     " more failed I/Os not logged since the last line)",
                     w->index, PSS_SIZE_XATTR, obj->file_id, strerror(err), dropped);
        }
        /* the size stays to store: by age (PSS_SIZE_RETRY_NS later at the
         * earliest, whatever write_back_age) and at the next sync (a full
         * disk may have room then), else the object reads shorter once
         * closed */
        pss_obj_size_grew(w, obj, now + PSS_SIZE_RETRY_NS);
        return ps_status_from_errno(err);
    }
    obj->size_fail_counted = 0;
    obj->size_attr = 1;
    obj->saved_size = obj->size;
    obj->size_dirty = 1;
    return PS_OK;
}

void pss_obj_size_grew(pss_worker_t *w, pss_object_t *obj, uint64_t now)
{
    if (obj->size_grew_ns != 0) {
        return;
    }
    obj->size_grew_ns = now != 0 ? now : 1;
    obj->next_grown = w->grown_head;
    w->grown_head = obj;
}

uint64_t pss_obj_save_grown(pss_worker_t *w, uint64_t born_by)
{
    pss_object_t *obj = w->grown_head, *next;
    uint64_t oldest = 0;

    for (; obj != NULL; obj = next) {
        next = obj->next_grown;
        if (obj->size_grew_ns > born_by) {
            oldest = oldest == 0 || obj->size_grew_ns < oldest ? obj->size_grew_ns : oldest;
            continue;
        }
        ps_status_t status = pss_obj_save_size(w, obj);
        if (status != PS_OK) {
            if (!obj->size_fail_counted) {
                pss_obj_write_failed(w, obj, status); /* once for the size, not each retry */
                obj->size_fail_counted = 1;
            }
            oldest = oldest == 0 || obj->size_grew_ns < oldest ? obj->size_grew_ns : oldest;
        }
    }
    return oldest;
}

void pss_obj_write_failed(pss_worker_t *w, pss_object_t *obj, ps_status_t status)
{
    obj->failed_writes++;
    obj->failed_status = status;
    PSS_STAT_ADD(w, stage_errors, 1);
}

ps_status_t pss_obj_sync(pss_worker_t *w, pss_object_t *obj)
{
    ps_status_t status = PS_OK;

    if (obj->fd >= 0 && obj->size_grew_ns != 0) {
        status = pss_obj_save_size(w, obj);
    }
    if (status == PS_OK && obj->fd >= 0 && (obj->dirty || obj->size_dirty)) {
        if ((obj->size_dirty ? fsync(obj->fd) : fdatasync(obj->fd)) != 0) {
            ps_error("worker %u: %s object %016" PRIx64 ": %m", w->index,
                     obj->size_dirty ? "fsync" : "fdatasync", obj->file_id);
            status = ps_status_from_errno(errno);
        } else {
            obj->dirty = obj->size_dirty = 0;
            obj->unflushed = 0;
        }
    }
    if (status != PS_OK) {
        /* every writer answered before must hear it, not only the one
         * whose sync found it: Linux reports a writeback error to a
         * descriptor once, so the next fdatasync succeeds */
        pss_obj_write_failed(w, obj, status);
        obj->size_fail_counted = obj->size_grew_ns != 0; /* (the size's, if still to store) */
    }
    return status;
}

/* Forget the object's open file (its bytes kept in memory too) and return
 * its descriptor, which the caller closes. */
static int pss_obj_let_go(pss_worker_t *w, pss_object_t *obj)
{
    int fd = obj->fd;

    pss_obj_ungrow(w, obj); /* a size still to store is lost with the descriptor */
    obj->size_fail_counted = 0; /* (its failure counted already) */
    obj->dirty = obj->size_dirty = 0;
    pss_edge_drop(&obj->edges);
    pss_cache_drop(w, &obj->cache, 0, UINT64_MAX);
    pss_ra_reset(&obj->ra);
    obj->fd = -1;
    w->nopen--;
    return fd;
}

/* Make an object's data durable (if written since the last time) and close
 * it; a failure counts as a failed write (its writers' next OBJ_SYNC or
 * OBJ_FLUSH says so: the descriptor that would have told is gone). */
static void pss_obj_close(pss_worker_t *w, pss_object_t *obj)
{
    if (obj->fd < 0) {
        return;
    }
    (void)pss_obj_sync(w, obj);        /* a failure counts as a failed write */
    (void)pss_obj_save_failed(w, obj); /* if not: forget_if_idle keeps it */
    if (obj->size_attr && obj->saved_size == obj->size &&
        obj->file_len > pss_round_up(obj->size, w->server->align)) {
        (void)pss_obj_cut_to_size(w, obj); /* (else the next open cuts it) */
    }
    close(pss_obj_let_go(w, obj));
}

static int pss_obj_idle(const pss_object_t *obj)
{
    return obj->wait_head == NULL && obj->active == NULL && !obj->scheduled && obj->nstaged == 0 &&
           !obj->flushing && !obj->swait;
}

static void pss_obj_unlink_free(pss_worker_t *w, pss_object_t *obj)
{
    pss_object_t **pp = &w->objs[pss_obj_bucket(w, obj->file_id)];
    for (; *pp != NULL; pp = &(*pp)->hnext) {
        if (*pp == obj) {
            *pp = obj->hnext;
            w->nobjs--;
            pss_obj_ungrow(w, obj);
            pss_cache_drop(w, &obj->cache, 0, UINT64_MAX);
            pss_edge_free(&obj->edges);
            free(obj);
            return;
        }
    }
}

void pss_obj_trim(pss_worker_t *w)
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
                pss_obj_forget_if_idle(w, obj);
            }
        }
    }
    ps_debug("worker %u: closed idle objects, %zu still open", w->index, w->nopen);
}

pss_object_t *pss_obj_get(pss_worker_t *w, uint64_t file_id)
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
    /* An object that cannot be opened now is opened again by the request
     * that needs it, which then fails with the error (pss_obj_start_io). */
    pss_obj_open(w, obj, 0);
    if (w->nobjs + 1 > w->objs_cap) {
        pss_obj_grow(w);
    }
    size_t b = pss_obj_bucket(w, file_id);
    obj->hnext = w->objs[b];
    w->objs[b] = obj;
    w->nobjs++;
    return obj;
}

void pss_obj_forget_if_idle(pss_worker_t *w, pss_object_t *obj)
{
    if (obj->fd < 0 && pss_obj_idle(obj) && obj->failed_writes == obj->failed_saved) {
        pss_obj_unlink_free(w, obj);
    }
}

void pss_obj_schedule(pss_worker_t *w, pss_object_t *obj)
{
    if (!obj->scheduled) {
        obj->scheduled = 1;
        obj->next_ready = w->ready_head;
        w->ready_head = obj;
    }
}

/*
 * A resize that keeps none of the object's bytes (a truncate to 0: HDF5's
 * H5F_ACC_TRUNC, MPI_File_set_size(fh, 0)) gives it a new, empty file: the
 * old one's name is unlinked and its last close, where the file system
 * frees the blocks, is left to the caller (to the reaper: pss_store.c,
 * pss_reaper.c). An ftruncate here held the worker 0.22-0.24 s for a 1
 * GiB file on 2 servers (`pstripe truncate F 0`, 3 times). A crash between
 * the unlink and the create leaves no file: an object of size 0, as asked.
 */
static ps_status_t pss_obj_renew(pss_worker_t *w, pss_object_t *obj, int *old_fd)
{
    char rel[64];

    pss_obj_path(obj->file_id, rel, sizeof(rel));
    if (unlinkat(w->server->obj_dir_fd, rel, 0) != 0) {
        ps_error("worker %u: unlink %s/obj/%s to truncate it: %m", w->index, w->server->data_dir,
                 rel);
        return ps_status_from_errno(errno);
    }
    pss_obj_ungrow(w, obj);
    *old_fd = pss_obj_let_go(w, obj);
    obj->failed_saved = 0; /* the new file keeps none yet */
    return pss_obj_open(w, obj, 1);
}

/* Before the file grows past the stored size's last block: a file without
 * the size attribute gets it, else an open after a crash would take the
 * longer file's length for its size. */
static ps_status_t pss_obj_attr_first(pss_worker_t *w, pss_object_t *obj)
{
    return obj->size_attr ? PS_OK : pss_obj_save_size(w, obj);
}

/* Shrink the object to size: the file is made longer than size's last
 * block, the size stored, then the block zeroed past it and the file cut
 * there, so that a crash at any step leaves the old size and bytes or a
 * file the next open cuts to the new size (see the top). A zeroing that
 * fails changed no byte: the old size is taken back (else a write that grew
 * the object would show the old bytes past the new size). */
static ps_status_t pss_obj_shrink(pss_worker_t *w, pss_object_t *obj, uint64_t size)
{
    uint64_t a = w->server->align, end = pss_round_up(size, a), old = obj->size;
    ps_status_t status = pss_obj_attr_first(w, obj);

    if (status == PS_OK && obj->file_len <= end) {
        if (ftruncate(obj->fd, (off_t)(end + a)) != 0) {
            ps_error("worker %u: ftruncate object %016" PRIx64 " to %" PRIu64 ": %m", w->index,
                     obj->file_id, end + a);
            status = ps_status_from_errno(errno);
        } else {
            obj->file_len = end + a;
        }
    }
    if (status != PS_OK) {
        return status;
    }
    obj->size = size;
    status = pss_obj_save_size(w, obj);
    if (status == PS_OK) {
        status = pss_obj_zero_tail(w, obj, size);
        if (status != PS_OK) {
            obj->size = old;
            (void)pss_obj_save_size(w, obj); /* (else stored later, as a growth) */
            return status;
        }
        return pss_obj_cut(w, obj);
    }
    obj->size = old; /* nothing changed (its retry stores the old size) */
    return status;
}

/* Grow the object to size (or keep it): past the old size nothing is
 * kept, even what a failed write left (the tail block is read only when it
 * becomes the file's: HDF5 sets the same size at every close); the new
 * size is stored once the file is long enough, a crash before leaving the
 * old one. */
static ps_status_t pss_obj_grow_to(pss_worker_t *w, pss_object_t *obj, uint64_t size)
{
    uint64_t a = w->server->align, phys = pss_round_up(size, a);
    ps_status_t status = pss_obj_attr_first(w, obj);

    /* a growth not stored yet first: the cut below would take away the
     * length that tells an open after a crash that bytes past the stored
     * size may be on disk (session 80's review of this code) */
    if (status == PS_OK && obj->saved_size != obj->size) {
        status = pss_obj_save_size(w, obj);
    }
    if (status == PS_OK && size > obj->size) {
        status = pss_obj_zero_tail(w, obj, obj->size);
    }
    if (status != PS_OK) {
        return status;
    }
    if (ftruncate(obj->fd, (off_t)pss_round_up(obj->size, a)) != 0 ||
        ftruncate(obj->fd, (off_t)phys) != 0) {
        ps_error("worker %u: ftruncate object %016" PRIx64 " to %" PRIu64 ": %m", w->index,
                 obj->file_id, phys);
        return ps_status_from_errno(errno);
    }
    obj->phys_size = obj->file_len = phys;
    obj->size = size;
    return obj->saved_size == size ? PS_OK : pss_obj_save_size(w, obj);
}

ps_status_t pss_obj_resize(pss_worker_t *w, pss_object_t *obj, uint64_t size, int *old_fd)
{
    uint64_t a = w->server->align;
    uint64_t keep = size < obj->size ? size : obj->size;

    pss_edge_drop(&obj->edges); /* the tail block changes here, or may have, on failure */
    /* bytes below the kept size's block stay as they are (HDF5 sets the
     * size at every close: its file stays cached) */
    pss_cache_drop(w, &obj->cache, keep - keep % a, UINT64_MAX);
    pss_ra_reset(&obj->ra);
    *old_fd = -1;
    ps_status_t status = keep == 0 && obj->phys_size > 0 ? pss_obj_renew(w, obj, old_fd) : PS_OK;

    if (status != PS_OK) {
        return status;
    }
    obj->dirty = 1;
    return size < obj->size ? pss_obj_shrink(w, obj, size) : pss_obj_grow_to(w, obj, size);
}

ps_status_t pss_obj_allocate(pss_worker_t *w, pss_object_t *obj, uint64_t size)
{
    uint64_t len = pss_round_up(size, w->server->align);
    ps_status_t status = size > 0 ? pss_obj_attr_first(w, obj) : PS_OK;

    if (size == 0 || status != PS_OK) {
        return status;
    }
    pss_edge_drop(&obj->edges); /* the tail block's bytes past the size become the file's */
    if (fallocate(obj->fd, 0, 0, (off_t)len) != 0) {
        if (errno != EOPNOTSUPP || (len > obj->file_len && ftruncate(obj->fd, (off_t)len) != 0)) {
            ps_error("worker %u: allocating %" PRIu64 " bytes of object %016" PRIx64 ": %m",
                     w->index, len, obj->file_id);
            return ps_status_from_errno(errno);
        }
    }
    if (len > obj->file_len) {
        obj->file_len = len; /* zeros past phys_size, as the invariant wants */
    }
    if (size <= obj->size) {
        /* a growth not stored yet covers it: the answer promises the size */
        return obj->saved_size < size ? pss_obj_save_size(w, obj) : PS_OK;
    }
    obj->size = size;
    obj->dirty = 1;
    return pss_obj_save_size(w, obj);
}

void pss_obj_fill_rep(pss_object_t *obj, ps_obj_rep_t *rep)
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

/*
 * Remove the object's file. The name goes here; the blocks are freed by the
 * last close, which the caller leaves to the reaper (pss_store.c,
 * pss_reaper.c): the worker holds a descriptor across the unlink (opened
 * for it if the object was not open) so that the file system frees nothing
 * on this thread.
 */
ps_status_t pss_obj_remove(pss_worker_t *w, pss_object_t *obj, int *old_fd)
{
    ps_status_t status;
    char rel[64];
    int fd = -1;

    pss_obj_path(obj->file_id, rel, sizeof(rel));
    if (obj->fd >= 0) {
        pss_obj_ungrow(w, obj);
        fd = pss_obj_let_go(w, obj); /* its data goes away: no need to sync it */
    } else {
        fd = openat(w->server->obj_dir_fd, rel, O_RDONLY | O_CLOEXEC); /* -1: none, or gone */
    }
    /* the record first: no object goes unrecorded; but a full disk must
     * still free the object's space (its handles then go unguarded) */
    status = pss_removed_mark(w->server, obj->file_id);
    if (status == PS_ERR_NO_SPACE) {
        ps_warn("worker %u: no room to record the removal of object %016" PRIx64
                "; removing it anyway (a handle still open could write it again)",
                w->index, obj->file_id);
        status = PS_OK;
    }
    if (status == PS_OK && unlinkat(w->server->obj_dir_fd, rel, 0) != 0 && errno != ENOENT) {
        ps_error("worker %u: unlink %s/obj/%s: %m", w->index, w->server->data_dir, rel);
        status = ps_status_from_errno(errno);
    }
    *old_fd = fd;
    obj->exists = 0;
    obj->size = obj->phys_size = obj->file_len = 0;
    obj->failed_writes = obj->failed_saved = 0; /* its writers hear PS_ERR_STALE (pss_removed.c) */
    pss_edge_drop(&obj->edges);
    pss_cache_drop(w, &obj->cache, 0, UINT64_MAX);
    pss_ra_reset(&obj->ra);
    return status;
}

ps_status_t pss_obj_table_init(pss_worker_t *w)
{
    w->max_open = w->server->max_open_per_worker;
    w->objs_cap = PSS_OBJ_TABLE_MIN;
    w->objs = calloc(w->objs_cap, sizeof(*w->objs));
    if (w->objs == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    return PS_OK;
}

void pss_obj_close_all(pss_worker_t *w)
{
    for (size_t b = 0; w->objs != NULL && b < w->objs_cap; b++) {
        pss_object_t *obj = w->objs[b], *next;
        for (; obj != NULL; obj = next) {
            next = obj->hnext;
            pss_obj_close(w, obj);
            /* requests still queued here were answered or dropped by the drain */
            pss_cache_drop(w, &obj->cache, 0, UINT64_MAX);
            pss_edge_free(&obj->edges);
            free(obj);
        }
        w->objs[b] = NULL;
    }
    w->nobjs = 0;
}

void pss_obj_table_cleanup(pss_worker_t *w)
{
    free(w->objs);
    w->objs = NULL;
}

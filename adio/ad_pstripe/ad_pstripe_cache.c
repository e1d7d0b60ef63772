/*
 * ad_pstripe_cache.c: write-behind and read cache of a file handle.
 *
 * MPI's consistency rules (nonatomic mode) let a process keep its writes
 * to itself until MPI_File_sync, close or a collective call, as long as it
 * reads them back at once itself. Both caches live in the per-file state
 * and follow exactly those rules:
 *
 * - Write-behind: an independent write of at most a quarter of
 *   romio_pstripe_wb_buffer_size is copied into the handle's buffer, as
 *   its regions (in order) and their bytes. The buffer goes to the servers
 *   as ONE list write (later regions win, as in the program's order):
 *   when it is full, without waiting (pstripe_iwrite_list; a second
 *   buffer fills meanwhile, and a send waits for the previous one, so
 *   writes stay in order), and, waited for, before anything that must see
 *   it: sync, close, set_view/set_info, set_size, preallocate, get_size,
 *   set_atomicity, every MPI call that sends a message (of any file:
 *   ad_pstripe_sync.c), every aggregated (two-phase) collective call,
 *   nonblocking I/O, a direct (larger) write, and a read (any read waits
 *   for a send in flight; one that overlaps the buffered bytes' extent
 *   flushes them; one that comes back short, below buffered bytes that
 *   may extend the file over it, flushes them and is read again, as is
 *   one during which another thread's message sent them).
 *   A flush is sent as PSTRIPE_WRITE_BEHIND: the servers answer it once
 *   they hold its short runs in their write-back stage (readers see them
 *   there), not after the disk, which only MPI_File_sync waits for (a
 *   program that sets a view before each 4 KiB collective write waited
 *   for the disk at each).
 *   A failed flush is reported by the call that flushed (or waited for
 *   the send) and again, once,
 *   by the next MPI_File_sync or close (ps->wb_error is sticky; a sync or
 *   close whose own flush fails leaves it for the next one).
 * - Read cache: a small independent read (regions of at most a quarter
 *   block on average, spanning at most RC_SPAN_MAX blocks) is served from
 *   blocks of romio_pstripe_rc_block_size bytes, direct-mapped into
 *   romio_pstripe_rc_size bytes (ad_pstripe_rcache.c). The missing
 *   blocks of a read are fetched in one list read; when the reads walk
 *   forward, the blocks after them are read ahead in the background (one
 *   list read in flight, a window that doubles up to half the cache; the
 *   next starts when a read reaches into the last; a read of its blocks
 *   waits for it, and so does a fetch, whose slots it may share). A block
 *   keeps the number of its bytes that were below the file's size when it
 *   was read (the library's *nread): a read is a hit only if it lies within
 *   those bytes, so bytes past the end of file are never data, and a read
 *   across EOF counts what the servers count. The handle's own writes drop
 *   the blocks they touch; sync, set_view, set_info, set_size,
 *   set_atomicity, close, collective writes, the completion of a
 *   nonblocking write and every MPI call that receives a message (of any
 *   file: a read of the handle then sees sync_epoch moved) drop the whole
 *   cache, and the first small read after that reads its own bytes only
 *   (no blocks to be dropped again unread).
 *   Either makes a read-ahead in flight over those bytes stale: its
 *   blocks stay untagged when it is waited for (at the latest when the
 *   buffers are released). Reads that walk the file (medium ones, and
 *   small ones with gaps between them) are read ahead in
 *   ad_pstripe_readahead.c, under the same rules.
 *
 * Both are bypassed in atomic mode and under the whole-file lock (ROMIO's
 * data sieving), and inside aggregated collective calls (ps->bypass;
 * collective calls whose processes' ranges do not interleave are cached
 * as independent ones, ad_pstripe_coll.c); a write at the
 * shared file pointer is written through (ps->at_shared_fp, set by
 * ad_pstripe_sharedfp.c for the access that follows).
 */

#include "ad_pstripe.h"

/* A read spanning more blocks goes to the servers as a list read of its own
 * regions: its inner blocks serve no other read, and whole they carry the
 * other processes' regions of an interleaved view (2 processes, 256 KiB to
 * 1 MiB a call: 573-924 MiB/s cached, 899-1,218 not; 2 blocks: cached wins). */
#define RC_SPAN_MAX 4

/* Moved by ADIOI_PSTRIPE_Sync_after; a handle's reads drop its cache when
 * it moved since their last look (ps->epoch_seen). */
static unsigned long sync_epoch;

/* Is caching allowed for this call at all? */
static int cache_usable(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    return ps != NULL && ps->file != NULL && !fd->atomicity && ps->lock_depth == 0 &&
        ps->bypass == 0;
}

/* ADIOI_PSTRIPE_Mem_copy across memory pieces (ad_pstripe.h). */
void ADIOI_PSTRIPE_Mem_copy_span(ADIOI_PSTRIPE_mem_cursor * c, char *buf, size_t len, int to_mem)
{
    size_t take;
    char *mem;

    while (len > 0 && c->i < c->n) {
        take = MPL_MIN(len, c->iov[c->i].iov_len - c->off);
        mem = (char *) c->iov[c->i].iov_base + c->off;
        if (!to_mem)
            memcpy(buf, mem, take);
        else if (buf != NULL)
            memcpy(mem, buf, take);
        else
            memset(mem, 0, take);
        if (buf != NULL)
            buf += take;
        len -= take;
        c->off += take;
        if (c->off == c->iov[c->i].iov_len) {
            c->i++;
            c->off = 0;
        }
    }
}

/* Does the write-behind buffer hold bytes in [lo, hi)? (Reads there must
 * not be served by the servers before it is flushed.) */
int ADIOI_PSTRIPE_Wb_overlaps(const ADIOI_PSTRIPE_fs * ps, ADIO_Offset lo, ADIO_Offset hi)
{
    return ps->wb_used > 0 && lo < ps->wb_hi && ps->wb_lo < hi;
}

/* ---- write-behind ------------------------------------------------------- */

/* An MPI error code for a failed write-behind send, kept as the handle's
 * sticky error too. */
static int wb_failed(ADIOI_PSTRIPE_fs * ps, int status, int line)
{
    static char myname[] = "ADIOI_PSTRIPE_WB_FLUSH";
    int err = ADIOI_PSTRIPE_err(myname, "write (write-behind)", ps->path, line, status, NULL);

    if (ps->wb_error == MPI_SUCCESS)
        ps->wb_error = err;
    return err;
}

/* Wait for the buffer being sent, if any. Returns an MPI error code. */
static int wb_wait(ADIOI_PSTRIPE_fs * ps)
{
    int status;

    if (ps->wb_req == NULL)
        return MPI_SUCCESS;
    status = pstripe_request_wait(ps->wb_req, NULL);
    ps->wb_req = NULL;
    return status == PS_OK ? MPI_SUCCESS : wb_failed(ps, status, __LINE__);
}

/* The buffer is full: send it without waiting (the previous one must be
 * done first, so that writes stay in order) and fill the other buffer
 * meanwhile. Returns an MPI error code (of the previous send, or of this
 * start). */
static int wb_start(ADIOI_PSTRIPE_fs * ps)
{
    struct iovec iov;
    char *data;
    pstripe_region_t *regions;
    size_t cap;
    int status, err = wb_wait(ps);

    if (ps->rc_nslots > 0)
        ADIOI_PSTRIPE_Rc_invalidate(ps, ps->wb_regions, ps->wb_nregions);
    iov.iov_base = ps->wb_data;
    iov.iov_len = ps->wb_used;
    ps->wb_sends++;
    status = pstripe_iwrite_list_flags(ps->file, ps->wb_regions, ps->wb_nregions, &iov, 1,
                                       PSTRIPE_WRITE_BEHIND, &ps->wb_req);
    if (status != PS_OK) {
        ps->wb_req = NULL;
        if (err == MPI_SUCCESS)
            err = wb_failed(ps, status, __LINE__);
    }
    /* swap: the sent buffer stays untouched until wb_wait */
    data = ps->wb_data, regions = ps->wb_regions, cap = ps->wb_cap;
    ps->wb_data = ps->wb_data_out, ps->wb_regions = ps->wb_regions_out;
    ps->wb_cap = ps->wb_cap_out;
    ps->wb_data_out = data, ps->wb_regions_out = regions, ps->wb_cap_out = cap;
    ps->wb_nregions = 0;
    ps->wb_used = 0;
    return err;
}

/* Send the buffered regions as one list write (after the one in flight).
 * Returns an MPI error code (kept as the handle's sticky error too). The
 * collective waits that follow a flush yield for as long as it took
 * (ADIOI_PSTRIPE_Wait_after_flush). */
static int cache_flush(ADIOI_PSTRIPE_fs * ps, int drop)
{
    struct iovec iov;
    int status, err;
    int waited = ps->wb_req != NULL || ps->wb_nregions > 0;
    double start = waited ? MPI_Wtime() : 0.0; /* most calls find nothing */

    err = wb_wait(ps);
    if (ps->wb_nregions > 0 && ps->file != NULL) {
        /* blocks read (ahead) while these bytes were buffered are stale */
        if (ps->rc_nslots > 0)
            ADIOI_PSTRIPE_Rc_invalidate(ps, ps->wb_regions, ps->wb_nregions);
        iov.iov_base = ps->wb_data;
        iov.iov_len = ps->wb_used;
        ps->wb_sends++;
        status = pstripe_write_list_flags(ps->file, ps->wb_regions, ps->wb_nregions, &iov, 1,
                                          PSTRIPE_WRITE_BEHIND);
        if (status != PS_OK && err == MPI_SUCCESS)
            err = wb_failed(ps, status, __LINE__);
    }
    ps->wb_nregions = 0;
    ps->wb_used = 0;
    if (drop && ps->rc_nslots > 0)
        ADIOI_PSTRIPE_Rc_drop(ps);
    if (waited)
        ADIOI_PSTRIPE_Wait_after_flush((uint64_t) ((MPI_Wtime() - start) * 1e9));
    return err;
}

/* Flush and drop (MPI_File_sync, close). Returns the error of this flush
 * (which stays sticky, for the next sync or close), else the sticky error
 * of an earlier failed flush, which is then cleared. */
static int cache_sync(ADIOI_PSTRIPE_fs * ps)
{
    int err = cache_flush(ps, 1);

    if (err != MPI_SUCCESS)
        return err;
    err = ps->wb_error;
    ps->wb_error = MPI_SUCCESS;
    return err;
}

/* Append an access to the buffer (it fits). Like wb_start, only under an
 * entry point, which leaves through cache_unlock: a message's flush finds
 * buffered writes by wb_dirty alone. */
static void wb_append(ADIOI_PSTRIPE_fs * ps, const ADIOI_PSTRIPE_access * acc)
{
    ADIOI_PSTRIPE_mem_cursor c = { acc->iov, acc->niov, 0, 0 };
    pstripe_region_t *last;
    size_t i;

    if (ps->wb_nregions + acc->nregions > ps->wb_cap) {
        ps->wb_cap = MPL_MAX(2 * ps->wb_cap, ps->wb_nregions + acc->nregions);
        ps->wb_regions = ADIOI_Realloc(ps->wb_regions, ps->wb_cap * sizeof(*ps->wb_regions));
    }
    for (i = 0; i < acc->nregions; i++) {
        last = ps->wb_nregions ? &ps->wb_regions[ps->wb_nregions - 1] : NULL;
        if (last != NULL && last->offset + last->length == acc->regions[i].offset) {
            last->length += acc->regions[i].length;     /* bytes are adjacent too */
        } else {
            ps->wb_regions[ps->wb_nregions++] = acc->regions[i];
        }
    }
    ADIOI_PSTRIPE_Mem_copy(&c, ps->wb_data + ps->wb_used, (size_t) acc->total, 0);
    if (ps->wb_used == 0) {
        ps->wb_lo = acc->start;
        ps->wb_hi = acc->end;
    }
    ps->wb_lo = MPL_MIN(ps->wb_lo, acc->start);
    ps->wb_hi = MPL_MAX(ps->wb_hi, acc->end);
    ps->wb_used += (size_t) acc->total;
}

/* A write of this access: buffered (returns 1), or, after the buffer is
 * flushed so that the order of writes holds, left to the caller (returns
 * 0). Either way the cached blocks it touches are dropped (also when the
 * caches are bypassed, e.g. under ROMIO's data-sieving lock). *error_code
 * is set when a flush failed (then 1 is returned and nothing was written). */
static int cache_write(ADIO_File fd, ADIOI_PSTRIPE_access * acc, int *error_code)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    size_t max_regions;
    int small;

    *error_code = MPI_SUCCESS;
    if (ps->file == NULL)
        return 0;
    if (ps->rc_nslots > 0)
        ADIOI_PSTRIPE_Rc_invalidate_access(ps, acc);
    ADIOI_PSTRIPE_Ra_invalidate(ps, acc->start, acc->end);
    small = !ps->at_shared_fp && cache_usable(fd) && ps->write_behind != ADIOI_HINT_DISABLE &&
        !(fd->access_mode & ADIO_RDONLY) && ps->wb_size > 0 && acc->total <= ps->wb_size / 4;
    ps->at_shared_fp = 0;
    max_regions = (size_t) MPL_MAX(ps->wb_size / 16, 64);
    if (!small) {
        /* a direct write comes after every buffered one */
        *error_code = cache_flush(ps, 0);
        return *error_code != MPI_SUCCESS;
    }
    if (ps->wb_used > 0 && (ps->wb_used + (uint64_t) acc->total > (uint64_t) ps->wb_size ||
                            ps->wb_nregions + acc->nregions > max_regions)) {
        *error_code = wb_start(ps);
        if (*error_code != MPI_SUCCESS)
            return 1;
    }
    if (ps->wb_data == NULL)
        ps->wb_data = ADIOI_PSTRIPE_Buf_alloc((size_t) ps->wb_size);
    ADIOI_PSTRIPE_Access_regions(fd, acc);
    wb_append(ps, acc);
    fd->dirty_write = 1;
    return 1;
}

/* A read of this access came back short (nread bytes: it reached past the
 * end of file the servers know) while the write-behind buffer holds bytes
 * past its start, which may extend the file over it: flush them and
 * return 1 (the caller reads again and counts the hole). Also 1 when
 * buffered bytes went out since the read was sent (another thread's
 * message flushed them: they may extend the file over it too, and the
 * read may have reached the servers first). 0 otherwise, or when the
 * flush fails (*error_code set). */
static int cache_reread(ADIOI_PSTRIPE_fs * ps, const ADIOI_PSTRIPE_access * acc, uint64_t nread,
                        int *error_code)
{
    *error_code = MPI_SUCCESS;
    if (nread >= (uint64_t) acc->total)
        return 0;
    if (ps->wb_sends != acc->wb_sends_seen)
        return 1;
    if (ps->wb_used == 0 || ps->wb_hi <= acc->start)
        return 0;
    *error_code = cache_flush(ps, 0);
    return *error_code == MPI_SUCCESS;
}

/* A read of this access: flush the buffer first if the read may overlap
 * it; then serve it from the cache (returns 1, *nread = bytes below the
 * file's size) or leave it to the caller (returns 0). On an error 1 is
 * returned with *error_code set. */
static int cache_read(ADIO_File fd, ADIOI_PSTRIPE_access * acc, uint64_t * nread, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_RC_READ";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    uint64_t bs, b0, b1, lo, hi, span, *missing, epoch;
    size_t n, nahead;
    int status;

    *error_code = MPI_SUCCESS;
    if (ps->file == NULL || acc->nregions == 0)
        return 0;
    ps->at_shared_fp = 0;
    /* a full buffer being sent: the servers must have it before we read
     * (blocks read now would miss it) */
    *error_code = wb_wait(ps);
    if (*error_code != MPI_SUCCESS)
        return 1;
    /* a nonblocking write has completed, or a message has come (another
     * process may have written): blocks and windows read before may hold
     * replaced bytes */
    epoch = __atomic_load_n(&sync_epoch, __ATOMIC_ACQUIRE);
    if (ps->epoch_seen != epoch) {
        ps->epoch_seen = epoch;
        ADIOI_PSTRIPE_Rc_drop(ps);
    }
    if (ADIOI_PSTRIPE_Wb_overlaps(ps, acc->start, acc->end)) {
        *error_code = cache_flush(ps, 0);
        if (*error_code != MPI_SUCCESS)
            return 1;
    }
    if (!cache_usable(fd) || ps->read_cache == ADIOI_HINT_DISABLE ||
        (fd->access_mode & ADIO_WRONLY) || !ADIOI_PSTRIPE_Rc_setup(ps))
        return 0;
    bs = (uint64_t) ps->rc_block;
    if (acc->nregions == 1)
        ADIOI_PSTRIPE_Access_regions(fd, acc);  /* (read-ahead takes one region) */
    if (ADIOI_PSTRIPE_Ra_read(ps, acc, nread))
        return 1;
    if ((uint64_t) acc->total / acc->nregions > bs / 4)
        return 0;
    lo = (uint64_t) acc->start; /* a view's regions ascend */
    hi = (uint64_t) acc->hi;
    b0 = lo / bs;
    b1 = (hi - 1) / bs;
    span = b1 - b0 + 1;
    if (span > RC_SPAN_MAX || span > ps->rc_nslots / 2)
        return 0;
    /* the first small read after a drop reads its own bytes only: a
     * program that drops the cache between any two reads (HDF5 sets a view
     * around each collective access) would fetch blocks that the next drop
     * wastes (16 KiB chunks of two processes: 5 times their bytes) */
    if (ps->rc_dropped) {
        ps->rc_dropped = 0;
        return 0;
    }
    if (acc->nregions == 1 && (acc->regions[0].offset % bs) + acc->regions[0].length <= bs &&
        ADIOI_PSTRIPE_Rc_hit(ps, acc->regions[0].offset / bs,
                             (acc->regions[0].offset % bs) + acc->regions[0].length)) {
        *nread = ADIOI_PSTRIPE_Rc_serve(ps, acc);     /* the common hit: one region in one block */
        return 1;
    }

    /* the access needs blocks being read ahead: wait for them */
    if (ps->rc_nahead > 0 && b0 <= ps->rc_ahead[ps->rc_nahead - 1] && ps->rc_ahead[0] <= b1)
        ADIOI_PSTRIPE_Rc_ahead_settle(ps);
    missing = ADIOI_Malloc(ps->rc_nslots * sizeof(*missing));
    n = ADIOI_PSTRIPE_Rc_plan(ps, acc, b0, span, missing, &nahead);
    status = PS_OK;
    if (n > 0) {
        ADIOI_PSTRIPE_Rc_ahead_settle(ps);    /* its slots may be the misses' */
        status = ADIOI_PSTRIPE_Rc_fetch(ps, missing, n, NULL);
    }
    if (status == PS_OK && nahead > 0 && ps->rc_ahead_req == NULL)
        ADIOI_PSTRIPE_Rc_ahead_start(ps, missing + n, nahead);
    ADIOI_Free(missing);
    if (status != PS_OK) {
        *error_code = ADIOI_PSTRIPE_err(myname, "read", ps->path, __LINE__, status, NULL);
        return 1;
    }
    *nread = ADIOI_PSTRIPE_Rc_serve(ps, acc);
    return 1;
}

/* Forget the buffers (after a flush): new sizes from hints take effect at
 * the next use. */
static void cache_release(ADIOI_PSTRIPE_fs * ps)
{
    if (ps->wb_req != NULL)     /* not after a flush: a failed open's cleanup */
        wb_wait(ps);
    ADIOI_PSTRIPE_Rc_release(ps);
    ADIOI_PSTRIPE_Ra_release(ps);
    pstripe_buffer_free(ps->wb_data_out);
    if (ps->wb_regions_out)
        ADIOI_Free(ps->wb_regions_out);
    ps->wb_data_out = NULL;
    ps->wb_regions_out = NULL;
    ps->wb_cap_out = 0;
    pstripe_buffer_free(ps->wb_data);
    if (ps->wb_regions)
        ADIOI_Free(ps->wb_regions);
    ps->wb_data = NULL;
    ps->wb_regions = NULL;
    ps->wb_cap = ps->wb_nregions = ps->wb_used = 0;
}

/* ---- entry points: one thread at a time per handle ---------------------- */

/* Handles with wb_dirty set: a message's flush does nothing while there
 * are none (a program with 64 files open paid about 15 ns per file for
 * each message call, one lock and unlock each: 0.66-0.68 -> 1.58-1.61 us
 * one way in a ping-pong, tests/mpi/ps_manyfiles). */
static int ndirty;

/* Leave a handle's caches: wb_dirty (and the count) follow the buffer, so
 * that a message's flush can skip a clean handle without its lock (and
 * so never waits for another thread's read of it). */
static void cache_unlock(ADIOI_PSTRIPE_fs * ps)
{
    int dirty = ps->wb_nregions > 0 || ps->wb_req != NULL;

    if (dirty != ps->wb_dirty) {
        __atomic_store_n(&ps->wb_dirty, dirty, __ATOMIC_RELEASE);
        __atomic_add_fetch(&ndirty, dirty ? 1 : -1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&ps->cache_mutex);
}

/*
 * The file's own calls run under ROMIO's lock; the flush of a message
 * (ADIOI_PSTRIPE_Sync_before) does not take it: under MPI_THREAD_MULTIPLE
 * a thread sending a message would wait for another thread's collective
 * file call, which may itself wait for that message on another process.
 * Each handle's caches have a lock of their own instead (recursive: an
 * entry point may reach another), held while a call is in them.
 */

int ADIOI_PSTRIPE_Cache_write(ADIO_File fd, ADIOI_PSTRIPE_access * acc, int *error_code)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int r;

    *error_code = MPI_SUCCESS;
    if (ps == NULL)
        return 0;
    pthread_mutex_lock(&ps->cache_mutex);
    r = cache_write(fd, acc, error_code);
    cache_unlock(ps);
    return r;
}

int ADIOI_PSTRIPE_Cache_read(ADIO_File fd, ADIOI_PSTRIPE_access * acc, uint64_t * nread,
                             int *error_code)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int r;

    *error_code = MPI_SUCCESS;
    if (ps == NULL)
        return 0;
    pthread_mutex_lock(&ps->cache_mutex);
    r = cache_read(fd, acc, nread, error_code);
    acc->wb_sends_seen = ps->wb_sends; /* (the read goes out after this) */
    cache_unlock(ps);
    return r;
}

int ADIOI_PSTRIPE_Cache_reread(ADIO_File fd, const ADIOI_PSTRIPE_access * acc, uint64_t nread,
                               int *error_code)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int r;

    *error_code = MPI_SUCCESS;
    if (ps == NULL)
        return 0;
    pthread_mutex_lock(&ps->cache_mutex);
    r = cache_reread(ps, acc, nread, error_code);
    cache_unlock(ps);
    return r;
}

int ADIOI_PSTRIPE_Cache_flush(ADIO_File fd, int drop)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int err;

    if (ps == NULL)
        return MPI_SUCCESS;
    pthread_mutex_lock(&ps->cache_mutex);
    err = cache_flush(ps, drop);
    cache_unlock(ps);
    return err;
}

int ADIOI_PSTRIPE_Cache_sync(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int err;

    if (ps == NULL)
        return MPI_SUCCESS;
    pthread_mutex_lock(&ps->cache_mutex);
    err = cache_sync(ps);
    cache_unlock(ps);
    return err;
}

void ADIOI_PSTRIPE_Cache_drop(ADIOI_PSTRIPE_fs * ps)
{
    if (ps == NULL)
        return;
    pthread_mutex_lock(&ps->cache_mutex);
    ADIOI_PSTRIPE_Rc_drop(ps);
    cache_unlock(ps);
}

void ADIOI_PSTRIPE_Cache_release(ADIOI_PSTRIPE_fs * ps)
{
    pthread_mutex_lock(&ps->cache_mutex);
    cache_release(ps);
    cache_unlock(ps);
}

/* ---- messages between processes (ad_pstripe_sync.c) --------------------- */

/* Every handle of this process, for the flush of a message. */
static ADIOI_PSTRIPE_fs *open_files;
static pthread_mutex_t open_files_mutex = PTHREAD_MUTEX_INITIALIZER;

void ADIOI_PSTRIPE_Cache_register(ADIOI_PSTRIPE_fs * ps)
{
    pthread_mutexattr_t attr;

    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&ps->cache_mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    ps->epoch_seen = __atomic_load_n(&sync_epoch, __ATOMIC_ACQUIRE);
    pthread_mutex_lock(&open_files_mutex);
    ps->wb_prev = NULL;
    ps->wb_next = open_files;
    if (open_files != NULL)
        open_files->wb_prev = ps;
    __atomic_store_n(&open_files, ps, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&open_files_mutex);
}

void ADIOI_PSTRIPE_Cache_unregister(ADIOI_PSTRIPE_fs * ps)
{
    pthread_mutex_lock(&open_files_mutex);
    if (ps->wb_prev != NULL)
        ps->wb_prev->wb_next = ps->wb_next;
    else if (open_files == ps)
        __atomic_store_n(&open_files, ps->wb_next, __ATOMIC_RELEASE);
    if (ps->wb_next != NULL)
        ps->wb_next->wb_prev = ps->wb_prev;
    ps->wb_prev = ps->wb_next = NULL;
    pthread_mutex_unlock(&open_files_mutex);
    pthread_mutex_destroy(&ps->cache_mutex);
}

/* Every open handle's buffered writes go to the servers (all: every
 * handle is looked at, else the dirty ones). A flush that fails stays the
 * handle's sticky error, for its next sync or close. Returns the number of
 * handles looked at whose writes failed, in this flush or in an earlier
 * one not yet reported.
 *
 * all is MPI_Finalize's look at files left open, whose failures it
 * reports on stderr: the program sees no MPI return code from then on,
 * and their sticky errors are cleared, so that a close from another
 * library's finalize callback succeeds. HDF5 closes its files there, and
 * 1.10.8 crashed in H5F__close_cb (a NULL dereference) when that close
 * returned the error of a set_view's failed flush on a full disk. */
int ADIOI_PSTRIPE_Cache_flush_open(int all)
{
    ADIOI_PSTRIPE_fs *ps;
    int nfailed = 0;

    if (!all && __atomic_load_n(&ndirty, __ATOMIC_ACQUIRE) == 0)
        return 0;
    if (__atomic_load_n(&open_files, __ATOMIC_ACQUIRE) == NULL)
        return 0;
    pthread_mutex_lock(&open_files_mutex);
    for (ps = open_files; ps != NULL; ps = ps->wb_next) {
        if (!all && !__atomic_load_n(&ps->wb_dirty, __ATOMIC_ACQUIRE))
            continue;
        pthread_mutex_lock(&ps->cache_mutex);
        if (ps->file != NULL && (ps->wb_nregions > 0 || ps->wb_req != NULL))
            cache_flush(ps, 0);
        if (ps->wb_error != MPI_SUCCESS)
            nfailed++;
        if (all)
            ps->wb_error = MPI_SUCCESS;
        cache_unlock(ps);
    }
    pthread_mutex_unlock(&open_files_mutex);
    return nfailed;
}

/* Before a message leaves. */
void ADIOI_PSTRIPE_Sync_before(void)
{
    ADIOI_PSTRIPE_Cache_flush_open(0);
}

/* After a message came (or a nonblocking write completed): the next read
 * of each handle drops its cached blocks first. */
void ADIOI_PSTRIPE_Sync_after(void)
{
    __atomic_add_fetch(&sync_epoch, 1, __ATOMIC_RELEASE);
}

/*
 * ad_pstripe_cache.c: write-behind and read cache of a file handle.
 *
 * MPI's consistency rules (nonatomic mode) let a process keep its writes
 * to itself until MPI_File_sync, close or a message to another process, as
 * long as it reads them back at once itself. The buffers are the client
 * library's (pstripe_wbuf_*, pstripe_rcache_*: the ones Open MPI's
 * components use too); this file says when the driver uses them:
 *
 * - Write-behind: an independent write of at most a quarter of
 *   romio_pstripe_wb_buffer_size goes into the handle's buffer (sent as one
 *   list write flagged PSTRIPE_WRITE_BEHIND when full, without waiting),
 *   which is flushed, waited for, before anything that must see it: sync,
 *   close, set_view/set_info, set_size, preallocate, get_size,
 *   set_atomicity, every MPI call that sends a message (of any file:
 *   ad_pstripe_sync.c, pstripe_wbuf_flush_all), every aggregated
 *   (two-phase) collective call, nonblocking I/O, a direct (larger) write,
 *   and a read that may see buffered bytes (those from the first block the
 *   read may fetch on: they may be read, or extend the file over it). The
 *   servers answer a flush once they hold its short runs in their
 *   write-back stage (readers see them there), not after the disk, which
 *   only MPI_File_sync waits for. A failed flush is reported by the call
 *   that flushed (or waited for the send) and once more by the next
 *   MPI_File_sync or close (the library keeps it).
 * - Read cache: a small independent read (regions of at most a quarter
 *   block on average, spanning at most 4 blocks) is served from blocks of
 *   romio_pstripe_rc_block_size bytes, direct-mapped into
 *   romio_pstripe_rc_size bytes, fetched whole and read ahead when the
 *   reads walk forward; bytes past the end of file are never served. The
 *   handle's own writes invalidate the blocks they touch; sync, set_view,
 *   set_info, set_size, set_atomicity, close, collective writes, the
 *   completion of a nonblocking write and every MPI call that receives a
 *   message (of any file: a read of the handle then sees sync_epoch moved)
 *   drop the whole cache, and the first small read after that reads its
 *   own bytes only. Streams of one-region reads (medium ones, and small
 *   ones with gaps between them) are read ahead in windows of their own,
 *   under the same rules (the library's psc_readahead.c).
 *
 * Both are bypassed in atomic mode and under the whole-file lock (ROMIO's
 * data sieving), and inside aggregated collective calls (ps->bypass;
 * collective calls whose processes' ranges do not interleave are cached
 * as independent ones, ad_pstripe_coll.c); a write at the shared file
 * pointer is written through (ps->at_shared_fp, set by
 * ad_pstripe_sharedfp.c for the access that follows).
 *
 * The file's own calls run under ROMIO's lock; a message's flush does not
 * take it (under MPI_THREAD_MULTIPLE a thread sending a message would wait
 * for another thread's collective file call, which may itself wait for
 * that message on another process) and touches only the library's
 * buffers, which have locks of their own.
 */

#include "ad_pstripe.h"

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

/* An MPI error code for a failed pstripe call of the caches. */
static int cache_err(ADIOI_PSTRIPE_fs * ps, const char *what, int line, int status)
{
    static char myname[] = "ADIOI_PSTRIPE_CACHE";

    return status == PS_OK ? MPI_SUCCESS
        : ADIOI_PSTRIPE_err(myname, what, ps->path, line, status, NULL);
}

/* Flush the write-behind buffer (for a read from offset on, or all of it:
 * offset 0), waited for. The collective waits that follow a flush yield for
 * as long as it took (ADIOI_PSTRIPE_Wait_after_flush). Returns an MPI
 * error code. */
static int wb_flush(ADIOI_PSTRIPE_fs * ps, uint64_t offset)
{
    double start;
    int status;

    if (ps->wb == NULL || !pstripe_wbuf_pending(ps->wb))        /* most calls find nothing */
        return MPI_SUCCESS;
    start = MPI_Wtime();
    status = pstripe_wbuf_flush_for_read(ps->wb, offset);
    ADIOI_PSTRIPE_Wait_after_flush((uint64_t) ((MPI_Wtime() - start) * 1e9));
    return cache_err(ps, "write (write-behind)", __LINE__, status);
}

static void cache_drop(ADIOI_PSTRIPE_fs * ps)
{
    pstripe_rcache_drop(ps->rc);
}

/* The handle writes this access: the cached blocks and read-ahead windows
 * it touches go (of runs: every block from a run's first byte to its
 * last). */
static void cache_invalidate(ADIOI_PSTRIPE_fs * ps, const ADIOI_PSTRIPE_access * acc)
{
    if (acc->regions != NULL)
        pstripe_rcache_invalidate(ps->rc, acc->regions, acc->nregions);
    else
        pstripe_rcache_invalidate_runs(ps->rc, acc->runs, acc->nruns);
}

int ADIOI_PSTRIPE_Cache_write(ADIO_File fd, ADIOI_PSTRIPE_access * acc, int *error_code)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int small, taken = 0, status;

    *error_code = MPI_SUCCESS;
    if (ps == NULL || ps->file == NULL)
        return 0;
    cache_invalidate(ps, acc);
    small = !ps->at_shared_fp && cache_usable(fd) && ps->write_behind != ADIOI_HINT_DISABLE &&
        ps->wb != NULL && acc->total <= ps->wb_size / 4;
    ps->at_shared_fp = 0;
    if (!small) {
        /* a direct write comes after every buffered one */
        *error_code = wb_flush(ps, 0);
        return *error_code != MPI_SUCCESS;
    }
    ADIOI_PSTRIPE_Access_regions(fd, acc);
    status = pstripe_wbuf_write(ps->wb, acc->regions, acc->nregions, acc->iov, acc->niov, &taken);
    *error_code = cache_err(ps, "write (write-behind)", __LINE__, status);
    if (taken)
        fd->dirty_write = 1;
    return taken || *error_code != MPI_SUCCESS;
}

/* A read the cache may serve: a small one, or one region (of a stream, to
 * be read ahead). Served (returns 1), or left to the caller (0). */
static int rc_read(ADIO_File fd, ADIOI_PSTRIPE_access * acc, uint64_t * nread, int *error_code)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int served = 0, status;

    /* (a view's runs are not expanded for nothing) */
    if (acc->nregions > 1 &&
        !pstripe_rcache_takes(ps->rc, (uint64_t) acc->start, (uint64_t) acc->hi,
                              (uint64_t) acc->total, acc->nregions))
        return 0;
    ADIOI_PSTRIPE_Access_regions(fd, acc);
    status = pstripe_rcache_read(ps->rc, acc->regions, acc->nregions, acc->iov, acc->niov,
                                 nread, &served);
    *error_code = cache_err(ps, "read", __LINE__, status);
    return served || *error_code != MPI_SUCCESS;
}

int ADIOI_PSTRIPE_Cache_read(ADIO_File fd, ADIOI_PSTRIPE_access * acc, uint64_t * nread,
                             int *error_code)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    unsigned long epoch;

    *error_code = MPI_SUCCESS;
    if (ps == NULL || ps->file == NULL || acc->nregions == 0)
        return 0;
    ps->at_shared_fp = 0;
    *error_code = wb_flush(ps, pstripe_rcache_reach(ps->rc, (uint64_t) acc->start));
    if (*error_code != MPI_SUCCESS)
        return 1;
    /* a nonblocking write has completed, or a message has come (another
     * process may have written): blocks and windows read before may hold
     * replaced bytes */
    epoch = __atomic_load_n(&sync_epoch, __ATOMIC_ACQUIRE);
    if (ps->epoch_seen != epoch) {
        ps->epoch_seen = epoch;
        cache_drop(ps);
    }
    if (!cache_usable(fd) || ps->read_cache == ADIOI_HINT_DISABLE || ps->rc == NULL)
        return 0;
    return rc_read(fd, acc, nread, error_code);
}

int ADIOI_PSTRIPE_Cache_flush(ADIO_File fd, int drop)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int err;

    if (ps == NULL)
        return MPI_SUCCESS;
    err = wb_flush(ps, 0);
    if (drop)
        cache_drop(ps);
    return err;
}

/* Flush and drop (MPI_File_sync, close); the error of this flush, else that
 * of an earlier failed one not yet reported by a sync (then forgotten). */
int ADIOI_PSTRIPE_Cache_sync(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int err;

    if (ps == NULL)
        return MPI_SUCCESS;
    err = ADIOI_PSTRIPE_Cache_flush(fd, 1);
    if (err == MPI_SUCCESS)
        err = cache_err(ps, "write (write-behind)", __LINE__, pstripe_wbuf_sync(ps->wb));
    return err;
}

void ADIOI_PSTRIPE_Cache_drop(ADIOI_PSTRIPE_fs * ps)
{
    if (ps != NULL)
        cache_drop(ps);
}

/* Make the caches as the hints say, for an open file (at the open, and
 * when set_info or set_view changes the hints, after a flush): the
 * write-behind buffer takes the new size (it keeps the error of a failed
 * send for the next sync), the read cache is made again (sizes the
 * library refuses, fewer than 2 blocks, leave the handle without one). */
void ADIOI_PSTRIPE_Cache_setup(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    if (ps == NULL || ps->file == NULL)
        return;
    pstripe_rcache_free(ps->rc);
    ps->rc = NULL;
    if (!(fd->access_mode & ADIO_WRONLY) &&
        pstripe_rcache_create(ps->file, (size_t) ps->rc_size, (size_t) ps->rc_block,
                              &ps->rc) != PS_OK)
        ps->rc = NULL;
    if (ps->wb != NULL)
        (void) pstripe_wbuf_resize(ps->wb, (size_t) ps->wb_size);
    else if (!(fd->access_mode & ADIO_RDONLY) &&
             pstripe_wbuf_create(ps->file, (size_t) ps->wb_size, &ps->wb) != PS_OK)
        ps->wb = NULL;
}

/* Free the caches, before the file is closed (after Cache_sync: a failure
 * of this last flush would be reported by nobody). */
void ADIOI_PSTRIPE_Cache_release(ADIOI_PSTRIPE_fs * ps)
{
    pstripe_rcache_free(ps->rc);
    ps->rc = NULL;
    (void) pstripe_wbuf_free(ps->wb);
    ps->wb = NULL;
}

/* ---- messages between processes (ad_pstripe_sync.c) --------------------- */

/* Before a message leaves: every buffered write of the process goes to the
 * servers (a failure stays its buffer's, for the next sync or close). */
void ADIOI_PSTRIPE_Sync_before(void)
{
    double start;

    if (!pstripe_wbuf_pending(NULL))
        return;
    start = MPI_Wtime();
    (void) pstripe_wbuf_flush_all();
    ADIOI_PSTRIPE_Wait_after_flush((uint64_t) ((MPI_Wtime() - start) * 1e9));
}

/* After a message came (or a nonblocking write completed): the next read
 * of each handle drops its cached blocks first. */
void ADIOI_PSTRIPE_Sync_after(void)
{
    __atomic_add_fetch(&sync_epoch, 1, __ATOMIC_RELEASE);
}

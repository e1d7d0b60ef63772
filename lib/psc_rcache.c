/*
 * psc_rcache.c: read caches (pstripe_rcache_*, pstripe.h).
 *
 * A cache holds blocks of one open file, block_size bytes each, direct
 * mapped into size / block_size slots (block b in slot b mod nslots). A
 * small read (its regions at most a quarter block on average, spanning at
 * most SPAN_MAX blocks) fetches its missing blocks whole, in one list read,
 * and is served from them; a block keeps how many of its bytes lay below
 * the file's size when it was read, and a read that reaches past those is
 * left to the caller (the file may have grown since), so bytes past the end
 * of file are never served as data and the caller's read counts what the
 * servers count.
 *
 * Reads that walk forward (each starting in or just after the block the
 * last one ended in, or further on in a block fetched already: runs of
 * reads with skips between them, as NAS BT-IO's read-back of half of each
 * row of half of each plane) are read ahead: once a read comes within
 * half a window of the blocks fetched so far, the next window of blocks is read
 * in the background (pstripe_iread_list; 2 blocks, doubling up to half the
 * slots), into slots left untagged until a read needs one of them or
 * their slots and waits for it. A drop or a write over its blocks while it
 * is in flight leaves them untagged (stale).
 *
 * Streams of larger reads (and of small ones with gaps between them) are
 * read ahead in windows of their own (psc_readahead.c). The first small
 * read after a drop is left to the caller, who reads its bytes alone.
 *
 * The caller keeps it coherent with MPI's rules: its own writes invalidate
 * the blocks they touch (pstripe_rcache_invalidate), a sync or a view
 * drops it (pstripe_rcache_drop), and a message from another process drops
 * every cache of the process (pstripe_rcache_drop_all: one atomic
 * increment; each cache drops its blocks at its next read).
 */
#include "psc_error.h"
#include "psc_readahead.h"
#include "psc_request.h"
#include "pstripe.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A read spanning more blocks goes to the servers as it is (as the MPICH
 * driver's RC_SPAN_MAX): whole, its inner blocks serve no other read. */
#define SPAN_MAX 4

struct pstripe_rcache {
    pstripe_file_t *file;
    pthread_mutex_t lock;
    uint64_t block; /* bytes of a block */
    size_t nslots;
    char *data;          /* nslots blocks; allocated at the first fetch */
    int64_t *tag;        /* block held by a slot, -1: none */
    uint64_t *valid;     /* bytes of it below the end of file when read */
    unsigned long epoch; /* drop_epoch at the last read */
    /* read-ahead */
    pstripe_request_t *ahead; /* in flight, or NULL */
    uint64_t ahead_first;     /* its blocks: ahead_first .. + ahead_n - 1 */
    size_t ahead_n;
    int ahead_stale;                 /* dropped or written over since it started */
    pstripe_region_t *ahead_regions; /* nslots / 2 of each */
    struct iovec *ahead_iov;
    uint64_t reached; /* one past the highest block fetched or read ahead */
    uint64_t last;    /* one past the last read's highest block; 0: none */
    size_t window;    /* blocks of the next read-ahead */
    int dropped;      /* dropped since the last small read: it reads its own bytes */
    psc_ra_t *streams; /* read-ahead of streams of larger reads (psc_readahead.c) */
};

static unsigned long drop_epoch; /* moved by pstripe_rcache_drop_all */

ps_status_t pstripe_rcache_create(pstripe_file_t *file, size_t size, size_t block,
                                  pstripe_rcache_t **rcache)
{
    struct pstripe_rcache *rc;
    size_t i;

    if (file == NULL || rcache == NULL || block == 0 || size / block < 2) {
        return psc_error(PS_ERR_INVALID,
                         "read cache: %zu bytes of blocks of %zu (at least 2 blocks of at "
                         "least 1 byte)",
                         size, block);
    }
    rc = calloc(1, sizeof(*rc));
    if (rc == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "read cache: out of memory");
    }
    rc->file = file;
    rc->block = block;
    rc->nslots = size / block;
    rc->tag = malloc(rc->nslots * sizeof(*rc->tag));
    rc->valid = calloc(rc->nslots, sizeof(*rc->valid));
    rc->ahead_regions = malloc(rc->nslots / 2 * sizeof(*rc->ahead_regions));
    rc->ahead_iov = malloc(rc->nslots / 2 * sizeof(*rc->ahead_iov));
    rc->streams = psc_ra_create(file, size, block);
    if (rc->tag == NULL || rc->valid == NULL || rc->ahead_regions == NULL ||
        rc->ahead_iov == NULL || rc->streams == NULL) {
        psc_ra_free(rc->streams);
        free(rc->tag);
        free(rc->valid);
        free(rc->ahead_regions);
        free(rc->ahead_iov);
        free(rc);
        return psc_error(PS_ERR_NO_MEMORY, "read cache: out of memory");
    }
    for (i = 0; i < rc->nslots; i++) {
        rc->tag[i] = -1;
    }
    pthread_mutex_init(&rc->lock, NULL);
    rc->epoch = __atomic_load_n(&drop_epoch, __ATOMIC_ACQUIRE);
    *rcache = rc;
    return PS_OK;
}

/* Block b fetched into its slot: the bytes of it below the end of file
 * taken from *left, the read's count of them (a prefix of its ascending
 * blocks). */
static void rc_tag(struct pstripe_rcache *rc, uint64_t b, uint64_t *left)
{
    size_t s = (size_t)(b % rc->nslots);

    rc->valid[s] = *left < rc->block ? *left : rc->block;
    *left -= rc->valid[s];
    rc->tag[s] = (int64_t)b;
}

static void rc_drop_locked(struct pstripe_rcache *rc)
{
    size_t i;

    for (i = 0; i < rc->nslots; i++) {
        rc->tag[i] = -1;
    }
    rc->ahead_stale = 1;
    rc->reached = rc->last = 0;
    rc->window = 0;
    rc->dropped = 1;
    psc_ra_drop(rc->streams);
}

/* Wait for the read-ahead in flight; its blocks tagged unless stale (or
 * failed: the reads then fetch them themselves). */
static void ahead_settle(struct pstripe_rcache *rc)
{
    uint64_t nread = 0;
    ps_status_t status;
    size_t i;

    if (rc->ahead == NULL) {
        return;
    }
    status = pstripe_request_wait(rc->ahead, &nread);
    rc->ahead = NULL;
    if (status != PS_OK || rc->ahead_stale) {
        if (rc->reached == rc->ahead_first + rc->ahead_n) {
            rc->reached = rc->ahead_first; /* read them ahead again */
        }
        return;
    }
    for (i = 0; i < rc->ahead_n; i++) {
        rc_tag(rc, rc->ahead_first + i, &nread);
    }
}

/* Must a read of blocks [b0, b1] wait for the read-ahead in flight: does
 * it need one of its blocks, or a slot it fills? */
static int ahead_in_the_way(const struct pstripe_rcache *rc, uint64_t b0, uint64_t b1)
{
    uint64_t b;
    size_t s;

    if (rc->ahead == NULL) {
        return 0;
    }
    for (b = b0; b <= b1; b++) {
        s = (size_t)(b % rc->nslots);
        if ((s + rc->nslots - rc->ahead_first % rc->nslots) % rc->nslots < rc->ahead_n) {
            return 1;
        }
    }
    return 0;
}

/* After a read of blocks [b0, b1]: if the reads walk forward and this one
 * came within half a window of the blocks fetched so far, read the next
 * window ahead (not past the end of file: a block fetched short ends it). */
static void ahead_start(struct pstripe_rcache *rc, uint64_t b0, uint64_t b1)
{
    uint64_t fetched = rc->reached > rc->last ? rc->reached : rc->last;
    int forward = rc->last != 0 && b0 + 1 >= rc->last && b0 <= fetched;
    uint64_t first;
    size_t i, s, n;

    rc->last = b1 + 1;
    if (!forward) {
        rc->window = 0;
        return;
    }
    if (rc->ahead != NULL || b1 + 1 + rc->window / 2 < rc->reached ||
        rc->valid[b1 % rc->nslots] < rc->block) {
        return;
    }
    rc->window = rc->window == 0 ? 2 : rc->window * 2;
    rc->window = rc->window > rc->nslots / 2 ? rc->nslots / 2 : rc->window;
    first = b1 + 1 > rc->reached ? b1 + 1 : rc->reached;
    n = rc->window;
    for (i = 0; i < n; i++) {
        s = (size_t)((first + i) % rc->nslots);
        rc->tag[s] = -1;
        rc->ahead_regions[i].offset = (first + i) * rc->block;
        rc->ahead_regions[i].length = rc->block;
        rc->ahead_iov[i].iov_base = rc->data + s * rc->block;
        rc->ahead_iov[i].iov_len = rc->block;
    }
    if (pstripe_iread_list(rc->file, rc->ahead_regions, n, rc->ahead_iov, n, &rc->ahead) != PS_OK) {
        rc->ahead = NULL;
        return;
    }
    rc->ahead_first = first;
    rc->ahead_n = n;
    rc->ahead_stale = 0;
    rc->reached = first + n;
}

int pstripe_rcache_takes(const pstripe_rcache_t *rc, uint64_t lo, uint64_t hi, uint64_t total,
                         size_t nregions)
{
    uint64_t span;

    if (rc == NULL || total == 0 || nregions == 0 || hi <= lo || total / nregions > rc->block / 4) {
        return 0;
    }
    span = (hi - 1) / rc->block - lo / rc->block + 1;
    return span <= SPAN_MAX && span <= rc->nslots / 2;
}

/* The blocks a read spans, [*b0, *b1], if it is small enough to cache. */
static int rc_small(const struct pstripe_rcache *rc, const pstripe_region_t *regions, size_t n,
                    uint64_t *b0, uint64_t *b1)
{
    uint64_t lo = UINT64_MAX, hi = 0, total = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        if (regions[i].length == 0) {
            continue;
        }
        total += regions[i].length;
        lo = regions[i].offset < lo ? regions[i].offset : lo;
        if (regions[i].offset + regions[i].length > hi) {
            hi = regions[i].offset + regions[i].length;
        }
    }
    if (!pstripe_rcache_takes(rc, lo, hi, total, n)) {
        return 0;
    }
    *b0 = lo / rc->block;
    *b1 = (hi - 1) / rc->block;
    return 1;
}

/* Fetch the blocks of [b0, b1] the cache lacks, in one list read. */
static ps_status_t rc_fetch(struct pstripe_rcache *rc, uint64_t b0, uint64_t b1)
{
    pstripe_region_t regions[SPAN_MAX];
    struct iovec iov[SPAN_MAX];
    size_t n = 0, i;
    uint64_t b, nread;
    ps_status_t status;

    if (rc->data == NULL &&
        (rc->data = pstripe_buffer_alloc(rc->nslots * rc->block, NULL)) == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "read cache: out of memory");
    }
    for (b = b0; b <= b1; b++) {
        size_t s = (size_t)(b % rc->nslots);

        if (rc->tag[s] == (int64_t)b) {
            continue;
        }
        rc->tag[s] = -1;
        regions[n].offset = b * rc->block;
        regions[n].length = rc->block;
        iov[n].iov_base = rc->data + s * rc->block;
        iov[n++].iov_len = rc->block;
    }
    if (n == 0) {
        return PS_OK;
    }
    status = pstripe_read_list(rc->file, regions, n, iov, n, &nread);
    if (status != PS_OK) {
        return status;
    }
    for (i = 0; i < n; i++) {
        rc_tag(rc, regions[i].offset / rc->block, &nread);
    }
    rc->reached = b1 + 1 > rc->reached ? b1 + 1 : rc->reached;
    return PS_OK;
}

/* Every region lies within its blocks' bytes below the end of file. */
static int rc_within(const struct pstripe_rcache *rc, const pstripe_region_t *regions, size_t n)
{
    uint64_t end, b, stop;
    size_t i;

    for (i = 0; i < n; i++) {
        end = regions[i].offset + regions[i].length;
        for (b = regions[i].offset / rc->block; b * rc->block < end; b++) {
            stop = end < (b + 1) * rc->block ? end : (b + 1) * rc->block;
            if (stop - b * rc->block > rc->valid[b % rc->nslots]) {
                return 0;
            }
        }
    }
    return 1;
}

/* Copy the regions out of their blocks into mem. */
static void rc_copy(const struct pstripe_rcache *rc, const pstripe_region_t *regions, size_t n,
                    const struct iovec *mem, size_t nmem)
{
    size_t i, m = 0, moff = 0;
    uint64_t off, end, b, take;

    for (i = 0; i < n; i++) {
        for (off = regions[i].offset, end = off + regions[i].length; off < end;) {
            while (m < nmem && moff == mem[m].iov_len) {
                m++, moff = 0;
            }
            b = off / rc->block;
            take = (b + 1) * rc->block - off;
            take = take < end - off ? take : end - off;
            take = take < mem[m].iov_len - moff ? take : mem[m].iov_len - moff;
            memcpy((char *)mem[m].iov_base + moff,
                   rc->data + (b % rc->nslots) * rc->block + (off - b * rc->block), take);
            off += take;
            moff += take;
        }
    }
}

ps_status_t pstripe_rcache_read(pstripe_rcache_t *rc, const pstripe_region_t *regions, size_t n,
                                const struct iovec *mem, size_t nmem, uint64_t *nread, int *served)
{
    psc_args_t args = {regions, NULL, n, 0};
    uint64_t b0 = 0, b1 = 0, total;
    unsigned long epoch;
    ps_status_t status;
    int small;

    *served = 0;
    if (rc == NULL || n == 0) {
        return PS_OK;
    }
    status = psc_io_check(rc->file, 0, &args, mem, nmem, &total);
    small = status == PS_OK && rc_small(rc, regions, n, &b0, &b1);
    if (status != PS_OK || (!small && n > 1)) {
        return status;
    }
    pthread_mutex_lock(&rc->lock);
    epoch = __atomic_load_n(&drop_epoch, __ATOMIC_ACQUIRE);
    if (epoch != rc->epoch) {
        rc->epoch = epoch;
        rc_drop_locked(rc);
    }
    /* a read of a stream (psc_readahead.c), else a small one: the blocks */
    if (n == 1 && psc_ra_read(rc->streams, regions, mem, nmem, nread)) {
        *served = 1;
    } else if (small && rc->dropped) {
        /* the first small read after a drop reads its own bytes only: a
         * program that drops between any two reads (HDF5 sets a view
         * around each collective access) would fetch blocks that the next
         * drop wastes (16 KiB chunks of two processes: 5 times their
         * bytes) */
        rc->dropped = 0;
    } else if (small) {
        if (ahead_in_the_way(rc, b0, b1)) {
            ahead_settle(rc);
        }
        status = rc_fetch(rc, b0, b1);
        if (status == PS_OK && rc_within(rc, regions, n)) {
            rc_copy(rc, regions, n, mem, nmem);
            *nread = total;
            *served = 1;
        }
        if (status == PS_OK) {
            ahead_start(rc, b0, b1);
        }
    }
    pthread_mutex_unlock(&rc->lock);
    return status;
}

uint64_t pstripe_rcache_reach(const pstripe_rcache_t *rc, uint64_t offset)
{
    return rc == NULL ? offset : offset - offset % rc->block;
}

/* Forget [lo, hi) (lo < hi), the lock held; 1 when that dropped every
 * block (a span as long as the slots), so that nothing is left to forget. */
static int rc_invalidate_locked(pstripe_rcache_t *rc, uint64_t lo, uint64_t hi)
{
    uint64_t b, b0 = lo / rc->block, b1 = (hi - 1) / rc->block;
    size_t s;

    psc_ra_invalidate(rc->streams, lo, hi);
    if (rc->ahead != NULL && b0 < rc->ahead_first + rc->ahead_n && rc->ahead_first <= b1) {
        rc->ahead_stale = 1;
    }
    if (b1 - b0 >= rc->nslots) { /* every slot may hold one of them */
        rc_drop_locked(rc);
        return 1;
    }
    for (b = b0; b <= b1; b++) {
        s = (size_t)(b % rc->nslots);
        if (rc->tag[s] == (int64_t)b) {
            rc->tag[s] = -1;
        }
    }
    return 0;
}

void pstripe_rcache_invalidate(pstripe_rcache_t *rc, const pstripe_region_t *regions, size_t n)
{
    if (rc == NULL) {
        return;
    }
    pthread_mutex_lock(&rc->lock);
    for (size_t i = 0; i < n; i++) {
        if (regions[i].length > 0 &&
            rc_invalidate_locked(rc, regions[i].offset, regions[i].offset + regions[i].length)) {
            break;
        }
    }
    pthread_mutex_unlock(&rc->lock);
}

/* A run's span, first byte to last: one lock for the whole list. */
void pstripe_rcache_invalidate_runs(pstripe_rcache_t *rc, const pstripe_run_t *runs, size_t n)
{
    if (rc == NULL) {
        return;
    }
    pthread_mutex_lock(&rc->lock);
    for (size_t i = 0; i < n; i++) {
        if (runs[i].count > 0 && runs[i].length > 0 &&
            rc_invalidate_locked(rc, runs[i].offset,
                                 runs[i].offset + (runs[i].count - 1) * runs[i].stride +
                                     runs[i].length)) {
            break;
        }
    }
    pthread_mutex_unlock(&rc->lock);
}

void pstripe_rcache_drop(pstripe_rcache_t *rc)
{
    if (rc == NULL) {
        return;
    }
    pthread_mutex_lock(&rc->lock);
    rc_drop_locked(rc);
    pthread_mutex_unlock(&rc->lock);
}

void pstripe_rcache_drop_all(void)
{
    __atomic_add_fetch(&drop_epoch, 1, __ATOMIC_RELEASE);
}

void pstripe_rcache_free(pstripe_rcache_t *rc)
{
    if (rc == NULL) {
        return;
    }
    ahead_settle(rc); /* it reads into data */
    psc_ra_free(rc->streams);
    pstripe_buffer_free(rc->data);
    free(rc->ahead_regions);
    free(rc->ahead_iov);
    free(rc->tag);
    free(rc->valid);
    pthread_mutex_destroy(&rc->lock);
    free(rc);
}

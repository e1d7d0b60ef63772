/*
 * ad_pstripe_readahead.c: read-ahead of reads that walk the file with a
 * constant step.
 *
 * The read cache (ad_pstripe_cache.c) takes small reads. A program that
 * reads larger pieces one call at a time (HDF5 reading its chunks, a loop
 * of MPI_File_read_at over records) waits a round trip to the servers per
 * call, and one call carries too little to keep the servers and the
 * network busy. A program that reads small records with gaps between
 * them (every other 4 KiB record: two processes reading interleaved
 * records) would have the read cache fetch the gaps too.
 *
 * When an independent one-region read of more than a quarter of a read
 * cache block and at most a quarter of romio_pstripe_rc_size bytes (and,
 * if the stream leaves gaps between its reads, at most a block), or of
 * RA_SMALL_MIN bytes up to a quarter of a block if the gaps are at least
 * as large as the reads, is the third of a stream (the same length,
 * and the same forward step from the previous read as that one had; one
 * read off the step, as HDF5's metadata between two chunks makes, does
 * not end the stream if the next is on it again), the
 * stream's next reads are predicted and fetched in the background as one
 * list read (pstripe_iread_list) of as many as fill a window of half of
 * romio_pstripe_rc_size bytes (but at most twice as many as the windows
 * have served since the stream started, and at least RA_MIN_READS: a
 * stream seen three times is a guess, and HDF5's chunk index, 2.6 KiB
 * nodes 15 MB apart, made windows of 754 predicted reads spanning 11 GB,
 * most of them never read), each with some slack into the gap after it
 * (a read shifted by that much is still served, and the stream goes on
 * from where it is). There are two windows: while the program's
 * reads are served from one (a copy), the next is in flight; at most one
 * window is started per call. A read that is not a predicted one drops
 * both windows (one in flight is waited for before its memory is reused)
 * and goes to the servers; but medium and small reads are followed as
 * two streams, and a small read that is not part of a small stream is the
 * read cache's and leaves the windows alone (a program reading its
 * metadata between its data).
 *
 * Coherence is the read cache's: windows are used only where the read
 * cache is (nonatomic mode, outside collective calls and the whole-file
 * lock); the handle's own writes drop the windows they overlap
 * (ADIOI_PSTRIPE_Ra_invalidate); a window starts in a read, which sent
 * the write-behind buffer's bytes from its own on first; everything that drops the read cache (sync,
 * set_view, close, collective writes ...) drops the windows and forgets
 * the streams. A window whose read fails is dropped: the program's read
 * then goes to the servers and reports their error itself. So is one
 * whose predicted read reached past the end of file (the file may have
 * grown since, by the handle's own writes beyond it).
 */

#include "ad_pstripe.h"

#define RA_WINDOWS 2
#define RA_MAX_READS 1024       /* predicted reads in a window */
#define RA_MIN_READS 8          /* ... and in the first window of a stream */
#define RA_SMALL_MIN 1024       /* smaller reads stay with the read cache's blocks */

typedef struct {
    char *data;                 /* the regions' bytes, packed in order */
    pstripe_region_t *regs;     /* the predicted reads, ascending */
    uint64_t *valid;            /* bytes of each below EOF (once done) */
    size_t n;                   /* regions; 0: free */
    size_t next;                /* first region the program has not read */
    pstripe_request_t *req;     /* the list read in flight, or NULL */
    int usable;                 /* 0: dropped (still waited for if in flight) */
} ra_window;

/* The reads of one kind (medium, or small), as a stream. */
typedef struct {
    uint64_t last_off, last_len;        /* the previous read */
    int64_t step;               /* the stream's step between offsets */
    int64_t cand;               /* a step seen once, off the stream's */
    int steps;                  /* reads in a row with that step and length */
} ra_stream;

struct ADIOI_PSTRIPE_ra_s {
    ra_window w[RA_WINDOWS];
    size_t cap;                 /* bytes of a window */
    ra_stream s[2];             /* [0]: medium reads, [1]: small ones */
    int owner;                  /* which of them the windows predict */
    size_t served;              /* reads served from its windows since it started */
};

/* Bytes fetched past each predicted read (within the gap to the next):
 * a read shifted by up to that much is still served (HDF5 shifts its
 * chunks where it puts metadata between them); a read shifted further
 * restarts the stream where it is. */
static uint64_t ra_slack(const ra_stream * st, uint64_t len)
{
    return MPL_MIN(len / 16, (uint64_t) st->step - len);
}

/* Wait for a window's read; a failed or dropped one becomes free. */
static void ra_settle(ra_window * w)
{
    uint64_t bytes = 0, left;
    size_t j;
    int status;

    if (w->req == NULL)
        return;
    status = pstripe_request_wait(w->req, &bytes);
    w->req = NULL;
    if (status != PS_OK)
        w->usable = 0;
    /* the regions ascend: those below the file's size come first */
    for (j = 0, left = bytes; j < w->n; j++) {
        w->valid[j] = MPL_MIN(w->regs[j].length, left);
        left -= w->valid[j];
    }
    if (!w->usable)
        w->n = 0;
}

static struct ADIOI_PSTRIPE_ra_s *ra_get(ADIOI_PSTRIPE_fs * ps)
{
    struct ADIOI_PSTRIPE_ra_s *ra = ps->ra;
    size_t cap = (size_t) (ps->rc_size / 2);
    int k;

    if (ra != NULL)
        return ra;
    ra = ADIOI_Calloc(1, sizeof(*ra));
    ra->cap = cap;
    for (k = 0; k < RA_WINDOWS; k++) {   /* the bytes when a stream starts (ra_start) */
        ra->w[k].regs = ADIOI_Malloc(RA_MAX_READS * sizeof(*ra->w[k].regs));
        ra->w[k].valid = ADIOI_Malloc(RA_MAX_READS * sizeof(*ra->w[k].valid));
    }
    ps->ra = ra;
    return ra;
}

/* Start window w on stream st's reads from offset off on (a window in
 * flight that was dropped is waited for first). */
static void ra_start(ADIOI_PSTRIPE_fs * ps, ra_window * w, const ra_stream * st, uint64_t off)
{
    struct ADIOI_PSTRIPE_ra_s *ra = ps->ra;
    uint64_t len = st->last_len + ra_slack(st, st->last_len);
    size_t j, n = MPL_MIN(MPL_MIN(ra->cap / len, RA_MAX_READS),
                          MPL_MAX(RA_MIN_READS, 2 * ra->served));
    struct iovec iov;

    ra_settle(w);
    w->n = 0;
    if (n == 0)
        return;
    if (w->data == NULL)
        w->data = ADIOI_PSTRIPE_Buf_alloc(ra->cap);
    for (j = 0; j < n; j++) {
        w->regs[j].offset = off + (uint64_t) j * (uint64_t) st->step;
        w->regs[j].length = len;
    }
    iov.iov_base = w->data;
    iov.iov_len = n * len;
    if (pstripe_iread_list(ps->file, w->regs, n, &iov, 1, &w->req) != PS_OK) {
        w->req = NULL;
        return;
    }
    w->n = n;
    w->next = 0;
    w->usable = 1;
}

/* The window and region that predicted a read of len bytes at off. */
static ra_window *ra_find(struct ADIOI_PSTRIPE_ra_s *ra, uint64_t off, uint64_t len,
                          size_t * at)
{
    ra_window *w;
    size_t j;
    int k;

    for (k = 0; k < RA_WINDOWS; k++) {
        w = &ra->w[k];
        if (!w->usable || w->n == 0 || off < w->regs[w->next].offset ||
            off > w->regs[w->n - 1].offset + w->regs[w->n - 1].length)
            continue;
        for (j = w->next; j < w->n && w->regs[j].offset <= off; j++) {
            if (off + len <= w->regs[j].offset + w->regs[j].length) {
                *at = j;
                return w;
            }
        }
    }
    return NULL;
}

/* Copy region j of a done window (valid over the access) to the access's
 * memory; returns the bytes copied. */
static uint64_t ra_serve(ra_window * w, size_t j, const ADIOI_PSTRIPE_access * acc)
{
    ADIOI_PSTRIPE_mem_cursor c = { acc->iov, acc->niov, 0, 0 };
    uint64_t len = acc->regions[0].length, in = acc->regions[0].offset - w->regs[j].offset;
    char *src = w->data + j * w->regs[0].length + in;  /* a window's regions are alike */

    ADIOI_PSTRIPE_Mem_copy(&c, src, (size_t) len, 1);
    w->next = j + 1;
    if (w->next == w->n)
        w->n = 0;               /* all read: free */
    return len;
}

/* Drop the windows (one in flight is waited for before its memory is
 * reused). */
static void ra_drop_windows(struct ADIOI_PSTRIPE_ra_s *ra)
{
    int k;

    for (k = 0; k < RA_WINDOWS; k++)
        ra->w[k].usable = 0;
}

/* Note the read in the stream; is it the third (or later) of one? */
static int ra_follow(ra_stream * st, uint64_t off, uint64_t len)
{
    int64_t step = (int64_t) (off - st->last_off);

    if (len != st->last_len) {
        st->steps = 0;
    } else if (step == st->step) {
        st->steps++;
    } else if (step == st->cand) {      /* a new step, twice */
        st->step = step;
        st->steps = 2;
    } else {                    /* one step off (metadata between chunks, say) */
        st->cand = step;
        st->steps = 1;
    }
    st->last_off = off;
    st->last_len = len;
    return st->steps >= 2 && st->step >= (int64_t) len;
}

/* Start the free window on the reads after those predicted (at most one
 * per call). They are counted from the read at off, not from the last
 * prediction: a stream that shifted within the slack goes on from where
 * it is now. */
static void ra_refill(ADIOI_PSTRIPE_fs * ps, const ra_stream * st, uint64_t off)
{
    struct ADIOI_PSTRIPE_ra_s *ra = ps->ra;
    uint64_t ahead = 0, from;
    ra_window *w;
    int k;

    for (k = 0; k < RA_WINDOWS; k++) {
        w = &ra->w[k];
        if (w->usable && w->n > 0)
            ahead += w->n - w->next;
    }
    from = off + (ahead + 1) * (uint64_t) st->step;
    for (k = 0; k < RA_WINDOWS; k++) {
        w = &ra->w[k];
        if (!w->usable || w->n == 0) {
            ra_start(ps, w, st, from);
            return;
        }
    }
}

/* A read the read cache does not take: served from a window (returns 1,
 * *nread = bytes below the file's size) or left to the caller (0). */
int ADIOI_PSTRIPE_Ra_read(ADIOI_PSTRIPE_fs * ps, const ADIOI_PSTRIPE_access * acc,
                          uint64_t * nread)
{
    struct ADIOI_PSTRIPE_ra_s *ra;
    ra_window *w = NULL;
    ra_stream *st;
    uint64_t off, len;
    size_t j = 0;
    int stream, small;

    if (acc->nregions != 1 || acc->total < RA_SMALL_MIN || acc->total > ps->rc_size / 4)
        return 0;
    off = acc->regions[0].offset;
    len = acc->regions[0].length;
    small = len <= (uint64_t) ps->rc_block / 4;
    ra = ra_get(ps);
    st = &ra->s[small];
    /* with gaps between the reads, only up to a block each: larger ones
     * gain little from fewer round trips, and lose the copy out of the
     * window (HDF5's 256 KiB chunks of two processes: 657-737 against
     * 808-872 MiB/s read ahead); reads of a quarter block or less only
     * with gaps at least as large as they are (the read cache's blocks
     * would carry the gaps too) */
    stream = ra_follow(st, off, len) &&
        (small ? st->step >= 2 * (int64_t) len :
         st->step == (int64_t) len || len <= (uint64_t) ps->rc_block);
    /* a small read off a stream of small reads is the read cache's: it
     * leaves a medium stream and its windows alone (a file's metadata
     * read between its data) */
    if (small && !stream && ra->owner != small)
        return 0;
    if (ra->owner == small)
        w = ra_find(ra, off, len, &j);
    if (w != NULL) {
        ra_settle(w);
        /* a read that was past the end of file when the window was read
         * may not be now (an own write beyond it extended the file): the
         * servers answer it, as they answer any read across EOF */
        if (!w->usable || w->valid[j] < off + len - w->regs[j].offset)
            w = NULL;
    }
    if (w == NULL) {
        ra_drop_windows(ra);
        if (stream) {
            ra->owner = small;
            ra->served = 0;
            ra_start(ps, &ra->w[0], st, off + (uint64_t) st->step);
            ra_refill(ps, st, off);
        }
        return 0;
    }
    *nread = ra_serve(w, j, acc);
    ra->served++;
    if (stream)
        ra_refill(ps, st, off);
    return 1;
}

/* The handle writes [lo, hi): drop the windows that overlap it. */
void ADIOI_PSTRIPE_Ra_invalidate(ADIOI_PSTRIPE_fs * ps, ADIO_Offset lo, ADIO_Offset hi)
{
    ra_window *w;
    int k;

    for (k = 0; ps->ra != NULL && k < RA_WINDOWS; k++) {
        w = &ps->ra->w[k];
        if (w->n > 0 && lo < (ADIO_Offset) (w->regs[w->n - 1].offset + w->regs[w->n - 1].length)
            && (ADIO_Offset) w->regs[0].offset < hi)
            w->usable = 0;
    }
}

/* The cache is dropped (sync, set_view ...): the windows go, and so do the
 * streams, which must be seen three times again before a window starts. A
 * program that drops the cache between any two reads (HDF5 sets a view
 * around each collective access) would otherwise start windows that the
 * next drop wastes: 8 predicted reads per call, 1,096 MiB read from the
 * servers for 128 MiB of chunks read. */
void ADIOI_PSTRIPE_Ra_drop(ADIOI_PSTRIPE_fs * ps)
{
    if (ps->ra == NULL)
        return;
    ra_drop_windows(ps->ra);
    memset(ps->ra->s, 0, sizeof(ps->ra->s));
}

void ADIOI_PSTRIPE_Ra_release(ADIOI_PSTRIPE_fs * ps)
{
    ra_window *w;
    int k;

    if (ps->ra == NULL)
        return;
    for (k = 0; k < RA_WINDOWS; k++) {
        w = &ps->ra->w[k];
        ra_settle(w);
        pstripe_buffer_free(w->data);
        ADIOI_Free(w->regs);
        ADIOI_Free(w->valid);
    }
    ADIOI_Free(ps->ra);
    ps->ra = NULL;
}

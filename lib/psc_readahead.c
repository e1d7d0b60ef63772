/*
 * psc_readahead.c: read-ahead of reads that walk a file with a constant step
 * (or in runs of such reads a constant jump apart), for the read caches
 * (psc_rcache.c, under a cache's lock).
 *
 * A read cache's blocks take small reads. A program that reads larger pieces
 * one call at a time (HDF5 reading its chunks, a loop of MPI_File_read_at
 * over records) waits a round trip to the servers per call, and one call
 * carries too little to keep the servers and the network busy. A program
 * that reads small records with gaps between them (two processes reading
 * interleaved records) would have the blocks carry the gaps too.
 *
 * When a one-region read of more than a quarter of a block and at most a
 * quarter of the cache (and, if the stream leaves gaps between its reads,
 * at most a block), or of SMALL_MIN bytes up to a quarter of a block if the
 * gaps are larger than the reads or the stream is nested (below), is the
 * third of a stream (the
 * same length, and the same forward step from the previous read as that
 * one had; one read off the step, as HDF5's metadata between two chunks
 * makes, does not end the stream if the next is on it again), the stream's
 * next reads are predicted and fetched in the background as one list read
 * (pstripe_iread_list) of as many as fill a window of half the cache (but
 * at most twice as many as the windows have served since the stream
 * started, and at least MIN_READS: a stream seen three times is a guess,
 * and HDF5's chunk index, 2.6 KiB nodes 15 MB apart, made windows of 754
 * predicted reads spanning 11 GB, most of them never read; and at most
 * MAX_READS: what the windows hold past a stream's end was fetched for
 * nothing, and NAS BT-IO's read-back, a stream of 1,024 reads per cell of
 * its array, fetched 927 MiB for its 400 MiB with windows of up to 1,024
 * reads, 608 with 256, 512 with 64, taking 0.70-0.77, 0.59-0.69 and
 * 0.73 s), each with some
 * slack into the gap after it (a read shifted by that much is still
 * served, and the stream goes on from where it is). There are two windows:
 * while the program's reads are served from one (a copy), the next is in
 * flight; at most one window is started per call. A read that is not a
 * predicted one drops both windows (one in flight is waited for before its
 * memory is reused) and goes to the servers; but medium and small reads are
 * followed as two streams, and a small read that is not part of a small
 * stream is the blocks' and leaves the windows alone (a program reading
 * its metadata between its data).
 *
 * A forward jump off the step ends a run of the stream, which goes on
 * after it; two runs alike in a row (as many reads, ended by the same
 * jump) make the stream nested, and its reads are predicted run by run.
 * Until then a jump is no stream read (random forward reads must not
 * restart the windows at each read), and a new step is taken only from
 * two reads in a row.
 * A program that reads a block of a 3-D array one row at a time reads
 * such runs (NAS BT-IO's read-back: 1,280 bytes of each 2,560-byte row of
 * half of each 160 KiB plane, a run per plane, the other half of the rows
 * and the other processes' halves skipped): the blocks would carry every
 * skipped byte too (five times the file fetched with 4 processes). A run
 * as long as the stream's ended by another jump keeps the runs (the next
 * cell of the array, elsewhere in the file).
 *
 * Coherence is the cache's: the owner's writes drop the windows they
 * overlap (psc_ra_invalidate); a drop drops the windows and forgets the
 * streams (a program that drops between any two reads, as HDF5 sets a view
 * around each collective access, would otherwise start windows that the
 * next drop wastes: 8 predicted reads per call, 1,096 MiB read from the
 * servers for 128 MiB of chunks read). A window whose read fails is
 * dropped: the program's read then goes to the servers and reports their
 * error itself. So is one whose predicted read reached past the end of
 * file (the file may have grown since).
 */
#include "psc_readahead.h"

#include <stdlib.h>
#include <string.h>

#define WINDOWS 2
#define MAX_READS 256 /* predicted reads in a window (see the top) */
#define MIN_READS 8    /* ... and in the first window of a stream */
#define SMALL_MIN 1024 /* smaller reads stay with the blocks */

typedef struct {
    char *data;              /* the regions' bytes, packed in order */
    pstripe_region_t *regs;  /* the predicted reads, ascending */
    uint64_t *valid;         /* bytes of each below EOF (once done) */
    size_t n;                /* regions; 0: free */
    size_t next;             /* first region the program has not read */
    pstripe_request_t *req;  /* the list read in flight, or NULL */
    int usable;              /* 0: dropped (still waited for if in flight) */
} ra_window;

/* The reads of one kind (medium, or small), as a stream: reads of one
 * length a step apart, or runs of run such reads, each run jump past the
 * last read of the one before (a nested stream). */
typedef struct {
    uint64_t last_off, last_len; /* the previous read */
    int64_t step;                /* the stream's step between offsets */
    int64_t cand;                /* a step seen once, off the stream's */
    int cand_fresh;              /* ... by the previous read */
    int steps;                   /* reads in a row with that step and length */
    uint64_t pos;                /* the previous read's place in its run */
    uint64_t run;                /* reads of a run; 0: not nested */
    int64_t jump;                /* from a run's last read to the next run */
    uint64_t cand_run;           /* a run seen once (and cand_jump after it) */
    int64_t cand_jump;
} ra_stream;

struct psc_ra {
    pstripe_file_t *file;
    uint64_t block;  /* the cache's block */
    size_t cap;      /* bytes of a window */
    ra_window w[WINDOWS];
    ra_stream s[2];  /* [0]: medium reads, [1]: small ones */
    int owner;       /* which of them the windows predict */
    size_t served;   /* reads served from its windows since it started */
};

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

psc_ra_t *psc_ra_create(pstripe_file_t *file, size_t cache_size, uint64_t block)
{
    psc_ra_t *ra = calloc(1, sizeof(*ra));

    if (ra == NULL) {
        return NULL;
    }
    ra->file = file;
    ra->block = block;
    ra->cap = cache_size / 2;
    return ra; /* a window's memory comes with its first stream (ra_start) */
}

/* Bytes fetched past each predicted read (within the gap to the next): a
 * read shifted by up to that much is still served (HDF5 shifts its chunks
 * where it puts metadata between them); a read shifted further restarts
 * the stream where it is. */
static uint64_t ra_slack(const ra_stream *st, uint64_t len)
{
    return MIN(len / 16, (uint64_t)st->step - len);
}

/* Wait for a window's read; a failed or dropped one becomes free. */
static void ra_settle(ra_window *w)
{
    uint64_t bytes = 0, left;
    size_t j;

    if (w->req == NULL) {
        return;
    }
    if (pstripe_request_wait(w->req, &bytes) != PS_OK) {
        w->usable = 0;
    }
    w->req = NULL;
    /* the regions ascend: those below the file's size come first */
    for (j = 0, left = bytes; j < w->n; j++) {
        w->valid[j] = MIN(w->regs[j].length, left);
        left -= w->valid[j];
    }
    if (!w->usable) {
        w->n = 0;
    }
}

/* The offset of the stream's next read after one at *off, the pos-th of
 * its run (both moved on to it). */
static void ra_next(const ra_stream *st, uint64_t *off, uint64_t *pos)
{
    if (st->run > 0 && *pos + 1 >= st->run) {
        *off += (uint64_t)st->jump;
        *pos = 0;
    } else {
        *off += (uint64_t)st->step;
        (*pos)++;
    }
}

/* Start window w on stream st's reads after the skip first ones that
 * follow its last read, at from (a window in flight that was dropped is
 * waited for first). */
static void ra_start(psc_ra_t *ra, ra_window *w, const ra_stream *st, uint64_t from, uint64_t skip)
{
    uint64_t len = st->last_len + ra_slack(st, st->last_len);
    size_t j, n = MIN(MIN(ra->cap / len, MAX_READS), MAX(MIN_READS, 2 * ra->served));
    uint64_t off = from, pos = st->pos;
    struct iovec iov;

    ra_settle(w);
    w->n = 0;
    if (n == 0) {
        return;
    }
    if (w->data == NULL) {
        w->data = pstripe_buffer_alloc(ra->cap, NULL);
    }
    if (w->regs == NULL) {
        w->regs = malloc(MAX_READS * sizeof(*w->regs));
    }
    if (w->valid == NULL) {
        w->valid = malloc(MAX_READS * sizeof(*w->valid));
    }
    if (w->data == NULL || w->regs == NULL || w->valid == NULL) {
        return; /* out of memory: no read-ahead (tried again next time) */
    }
    for (j = 0; j < skip; j++) {
        ra_next(st, &off, &pos);
    }
    for (j = 0; j < n; j++) {
        ra_next(st, &off, &pos);
        w->regs[j].offset = off;
        w->regs[j].length = len;
    }
    iov.iov_base = w->data;
    iov.iov_len = n * len;
    if (pstripe_iread_list(ra->file, w->regs, n, &iov, 1, &w->req) != PS_OK) {
        w->req = NULL;
        return;
    }
    w->n = n;
    w->next = 0;
    w->usable = 1;
}

/* The window and region that predicted a read of len bytes at off. */
static ra_window *ra_find(psc_ra_t *ra, uint64_t off, uint64_t len, size_t *at)
{
    ra_window *w;
    size_t j;
    int k;

    for (k = 0; k < WINDOWS; k++) {
        w = &ra->w[k];
        if (!w->usable || w->n == 0 || off < w->regs[w->next].offset ||
            off > w->regs[w->n - 1].offset + w->regs[w->n - 1].length) {
            continue;
        }
        for (j = w->next; j < w->n && w->regs[j].offset <= off; j++) {
            if (off + len <= w->regs[j].offset + w->regs[j].length) {
                *at = j;
                return w;
            }
        }
    }
    return NULL;
}

/* Copy the read (off, len) out of region j of a done window into mem. */
static void ra_serve(ra_window *w, size_t j, uint64_t off, uint64_t len, const struct iovec *mem,
                     size_t nmem)
{
    const char *src = w->data + j * w->regs[0].length + (off - w->regs[j].offset);
    size_t i, take;

    for (i = 0; i < nmem && len > 0; i++) { /* (a window's regions are alike) */
        take = MIN(mem[i].iov_len, len);
        memcpy(mem[i].iov_base, src, take);
        src += take;
        len -= take;
    }
    w->next = j + 1;
    if (w->next == w->n) {
        w->n = 0; /* all read: free */
    }
}

static void ra_drop_windows(psc_ra_t *ra)
{
    int k;

    for (k = 0; k < WINDOWS; k++) {
        ra->w[k].usable = 0;
    }
}

/* A run of a stream ended with a forward jump (pos: the run's last read).
 * Two runs alike in a row make the stream nested; a run as long as its
 * runs, ended by another jump, starts the same runs there (the next cell
 * of an array). Is the read on the stream: either of those? A jump that
 * is neither is not (random forward reads must not restart the windows
 * at every read), nor is the stream's step adopted from it. */
static int ra_run_ends(ra_stream *st, int64_t jump)
{
    int on = 1;

    if (st->run > 0 && st->pos + 1 == st->run) {
        /* the same runs there */
    } else if (st->cand_run == st->pos + 1 && st->cand_jump == jump) {
        st->run = st->pos + 1;
        st->jump = jump;
    } else {
        st->run = 0;
        st->cand_run = st->pos + 1;
        st->cand_jump = jump;
        on = 0;
    }
    st->pos = 0;
    return on;
}

/* Note the read in the stream; is it the third (or later) of one? A new
 * step is taken when two reads in a row have it (the previous one left
 * it as cand); one read off the step (metadata between chunks, say), or
 * a run's end, leaves the stream's step as it was. */
static int ra_follow(ra_stream *st, uint64_t off, uint64_t len)
{
    int64_t step = (int64_t)(off - st->last_off);
    int fresh = st->cand_fresh, on = 1;

    st->cand_fresh = 0;
    if (len != st->last_len) {
        st->steps = 0;
        st->run = st->cand_run = st->pos = 0;
    } else if (st->run > 0 && st->pos + 1 == st->run && step == st->jump) {
        st->steps++; /* the next run, as predicted */
        st->pos = 0;
    } else if (step == st->step) {
        if (st->run > 0 && st->pos + 1 == st->run) {
            st->run = 0; /* a longer run: not nested after all */
        }
        st->steps++;
        st->pos++;
    } else if (fresh && step == st->cand) { /* a new step, twice */
        st->step = step;
        st->steps = 2;
        st->run = st->cand_run = 0;
        st->pos = 2;
    } else if (st->steps >= 2 && step > st->step) {
        on = ra_run_ends(st, step); /* the stream goes on */
        st->cand = step;
        st->cand_fresh = 1;
    } else { /* one step off */
        st->cand = step;
        st->cand_fresh = 1;
        st->steps = 1;
        st->run = st->cand_run = 0;
        st->pos = 1;
    }
    st->last_off = off;
    st->last_len = len;
    return on && st->steps >= 2 && st->step >= (int64_t)len;
}

/* Start the free window on the reads after those predicted (at most one
 * per call). They are counted from the read at off, not from the last
 * prediction: a stream that shifted within the slack goes on from where
 * it is now. */
static void ra_refill(psc_ra_t *ra, const ra_stream *st, uint64_t off)
{
    uint64_t ahead = 0;
    int k;

    for (k = 0; k < WINDOWS; k++) {
        if (ra->w[k].usable && ra->w[k].n > 0) {
            ahead += ra->w[k].n - ra->w[k].next;
        }
    }
    for (k = 0; k < WINDOWS; k++) {
        if (!ra->w[k].usable || ra->w[k].n == 0) {
            ra_start(ra, &ra->w[k], st, off, ahead);
            return;
        }
    }
}

int psc_ra_read(psc_ra_t *ra, const pstripe_region_t *reg, const struct iovec *mem, size_t nmem,
                uint64_t *nread)
{
    uint64_t off = reg->offset, len = reg->length;
    ra_window *w = NULL;
    ra_stream *st;
    size_t j = 0;
    int stream, small;

    if (ra == NULL || len < SMALL_MIN || len > ra->cap / 2) {
        return 0;
    }
    small = len <= ra->block / 4;
    st = &ra->s[small];
    /* with gaps between the reads, only up to a block each: larger ones
     * gain little from fewer round trips, and lose the copy out of the
     * window (HDF5's 256 KiB chunks of two processes: 657-737 against
     * 808-872 MiB/s read ahead); reads of a quarter block or less only
     * with gaps larger than they are (the blocks would carry the gaps
     * too; but gaps as large as the reads, two processes' records
     * interleaved, went faster as blocks: the servers serve twice the
     * bytes as whole ranges faster than half of them as small pieces) */
    stream = ra_follow(st, off, len) && (small ? st->step > 2 * (int64_t)len || st->run > 0
                                               : st->step == (int64_t)len || len <= ra->block);
    /* a small read off a stream of small reads is the blocks': it leaves a
     * medium stream and its windows alone (a file's metadata read between
     * its data) */
    if (small && !stream && ra->owner != small) {
        return 0;
    }
    if (ra->owner == small) {
        w = ra_find(ra, off, len, &j);
    }
    if (w != NULL) {
        ra_settle(w);
        /* a read that was past the end of file when the window was read
         * may not be now: the servers answer it, as they answer any read
         * across EOF */
        if (!w->usable || w->valid[j] < off + len - w->regs[j].offset) {
            w = NULL;
        }
    }
    if (w == NULL) {
        ra_drop_windows(ra);
        if (stream) {
            ra->owner = small;
            ra->served = 0;
            ra_start(ra, &ra->w[0], st, off, 0);
            ra_refill(ra, st, off);
        }
        return 0;
    }
    ra_serve(w, j, off, len, mem, nmem);
    *nread = len;
    ra->served++;
    if (stream) {
        ra_refill(ra, st, off);
    }
    return 1;
}

void psc_ra_invalidate(psc_ra_t *ra, uint64_t lo, uint64_t hi)
{
    ra_window *w;
    int k;

    for (k = 0; ra != NULL && k < WINDOWS; k++) {
        w = &ra->w[k];
        if (w->n > 0 && lo < w->regs[w->n - 1].offset + w->regs[w->n - 1].length &&
            w->regs[0].offset < hi) {
            w->usable = 0;
        }
    }
}

void psc_ra_drop(psc_ra_t *ra)
{
    if (ra == NULL) {
        return;
    }
    ra_drop_windows(ra);
    memset(ra->s, 0, sizeof(ra->s));
}

void psc_ra_free(psc_ra_t *ra)
{
    int k;

    if (ra == NULL) {
        return;
    }
    for (k = 0; k < WINDOWS; k++) {
        ra_settle(&ra->w[k]); /* it reads into data */
        pstripe_buffer_free(ra->w[k].data);
        free(ra->w[k].regs);
        free(ra->w[k].valid);
    }
    free(ra);
}

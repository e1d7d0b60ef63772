/*
 * pss_readahead.c: the streams of forward reads of an object and when to
 * read ahead of them (see pss_readahead.h). The policy only: pss_job.c
 * reads.
 */
#include "pss_readahead.h"

#include <string.h>

void pss_ra_reset(pss_ra_t *ra)
{
    memset(ra, 0, sizeof(*ra));
}

/* The stream a read starting at lo continues (its front within a window),
 * or the one unused longest, started afresh at [lo, hi). */
static pss_ra_stream_t *pss_ra_stream(pss_ra_t *ra, uint64_t win, uint64_t lo, uint64_t hi)
{
    pss_ra_stream_t *old = &ra->s[0];

    for (unsigned i = 0; i < PSS_RA_STREAMS; i++) {
        pss_ra_stream_t *st = &ra->s[i];
        if (st->used != 0 && lo + win >= st->end && lo <= st->end + win) {
            return st;
        }
        if (st->used < old->used) {
            old = st;
        }
    }
    memset(old, 0, sizeof(*old));
    old->end = old->ahead = old->mark = hi;
    return old;
}

/* If [lo, hi) follows on from one of the object's last reads (starts
 * after it, ends past it, and begins at most its own length past its end),
 * the bytes from that read's start to hi; else 0. Then remember it. */
static uint64_t pss_ra_follows(pss_ra_t *ra, uint64_t align, uint64_t lo, uint64_t hi)
{
    uint64_t gap = hi - lo > align ? hi - lo : align, run = 0;

    for (unsigned i = 0; i < PSS_RA_RECENT && run == 0; i++) {
        uint64_t rlo = ra->recent_lo[i], rhi = ra->recent_hi[i];
        if (rlo < rhi && rlo < lo && rhi < hi && lo <= rhi + gap) {
            run = hi - rlo;
        }
    }
    ra->recent_lo[ra->recent_next] = lo;
    ra->recent_hi[ra->recent_next] = hi;
    ra->recent_next = (ra->recent_next + 1) % PSS_RA_RECENT;
    return run;
}

/* A stream's first window: two to four times the bytes that showed it. */
static uint64_t pss_ra_first(uint64_t run, uint64_t win)
{
    uint64_t w = run <= win / 32 ? 4 * run : run <= win / 4 ? 2 * run : win;
    return w < win ? w : win;
}

/* Its next, once a read used what it read ahead. */
static uint64_t pss_ra_grow(uint64_t window, uint64_t win)
{
    uint64_t w = window < win / 16 ? 4 * window : 2 * window;
    return w < win ? w : win;
}

int pss_ra_note(pss_ra_t *ra, uint64_t win, uint64_t align, uint64_t size, uint64_t lo, uint64_t hi,
                unsigned how, uint64_t *from, uint64_t *to)
{
    uint64_t f, t, run, limit = (size + align - 1) / align * align;
    pss_ra_stream_t *st;
    int hit;

    if (win == 0 || hi <= lo) {
        return 0;
    }
    run = pss_ra_follows(ra, align, lo, hi);
    if ((how & (PSS_RA_KEPT | PSS_RA_CACHED)) == 0) {
        return 0; /* a large read of one client goes straight to it: no stream */
    }
    st = pss_ra_stream(ra, win, lo, hi);
    st->used = ++ra->clock;
    ra->last = (unsigned)(st - ra->s);
    hit = (how & PSS_RA_CACHED) && st->window != 0 && hi > st->mark && lo < st->ahead;
    st->end = hi > st->end ? hi : st->end;
    if (hit) { /* what it read ahead is used: read further */
        st->window = pss_ra_grow(st->window, win);
        st->mark = st->ahead;
    } else if (run == 0) {
        return 0; /* not a stream (yet), or one that skips what was read ahead */
    } else if (st->window < pss_ra_first(run, win)) {
        st->window = pss_ra_first(run, win); /* (reads grown past the window read their own) */
    }
    f = (st->ahead > st->end ? st->ahead : st->end) / align * align;
    if (f - st->end >= st->window / 2) {
        return 0; /* enough ahead */
    }
    t = (st->end + st->window + align - 1) / align * align;
    if (t > limit) {
        t = limit;
    }
    if (t <= f) {
        return 0;
    }
    if (st->mark >= st->ahead) { /* all it read ahead was used: the next hit is past f */
        st->mark = f;
    }
    st->ahead = t;
    *from = f;
    *to = t;
    return 1;
}

void pss_ra_stopped(pss_ra_t *ra, uint64_t at)
{
    pss_ra_stream_t *st = &ra->s[ra->last];

    if (st->ahead > at) {
        st->ahead = at;
    }
    if (st->mark > at) {
        st->mark = at;
    }
}

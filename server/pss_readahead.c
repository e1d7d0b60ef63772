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

/* Whether a read from disk of [lo, hi) is st's: past its end by at most a
 * window beyond what it read ahead, or behind its end by at most half a
 * window (a process of several reading alternate chunks, a little behind
 * the others); while st has no window, by at most the read's length.
 * Processes reading their own parts a few MiB apart are as many streams,
 * and small reads 3 MiB behind a stream of large ones are a stream of
 * their own (before, any read within read_ahead of a stream's front
 * joined it, and their reads all came from disk). */
static int pss_ra_reaches(const pss_ra_stream_t *st, uint64_t lo, uint64_t hi)
{
    uint64_t len = hi - lo, front = st->ahead > st->end ? st->ahead : st->end;
    uint64_t past = st->window > len ? st->window : len;
    uint64_t behind = st->window / 2 > len ? st->window / 2 : len;

    return st->used != 0 && (lo >= st->end ? lo <= front + past : st->end - lo <= behind);
}

/* The stream a read from disk of [lo, hi) continues: of those it reaches,
 * the one whose end is nearest (processes reading overlapping spans each
 * keep their own); NULL if none. */
static pss_ra_stream_t *pss_ra_stream(pss_ra_t *ra, uint64_t lo, uint64_t hi)
{
    pss_ra_stream_t *near = NULL;
    uint64_t best = 0;

    for (unsigned i = 0; i < PSS_RA_STREAMS; i++) {
        pss_ra_stream_t *st = &ra->s[i];
        uint64_t d = lo > st->end ? lo - st->end : st->end - lo;
        if (pss_ra_reaches(st, lo, hi) && (near == NULL || d < best)) {
            near = st;
            best = d;
        }
    }
    return near;
}

/* A stream started at a read ending at hi, in place of the one unused
 * longest. */
static pss_ra_stream_t *pss_ra_start(pss_ra_t *ra, uint64_t hi)
{
    pss_ra_stream_t *old = &ra->s[0];

    for (unsigned i = 1; i < PSS_RA_STREAMS; i++) {
        if (ra->s[i].used < old->used) {
            old = &ra->s[i];
        }
    }
    memset(old, 0, sizeof(*old));
    old->end = old->ahead = old->mark = hi;
    return old;
}

/* Whether [lo, hi) is one of the object's last reads. */
static int pss_ra_recent(const pss_ra_t *ra, uint64_t lo, uint64_t hi)
{
    for (unsigned i = 0; i < PSS_RA_RECENT; i++) {
        if (ra->recent_lo[i] == lo && ra->recent_hi[i] == hi) {
            return 1;
        }
    }
    return 0;
}

/* If [lo, hi) follows on from one of the object's last reads (starts
 * after it, ends past it, and begins at most its own length past its end),
 * the bytes from that read's start to hi. Unless scattered, a small read
 * further on, at most 7 times its length and PSS_RA_GAP, follows on too
 * when it keeps a stride: the last read is as long as it, and lies as far
 * past another of the last reads, as long too (one small chunk in up to
 * 8; a random read, or a small one after a large one, seldom does); then
 * the two reads' bytes. Else 0. */
static uint64_t pss_ra_follows(const pss_ra_t *ra, uint64_t align, uint64_t lo, uint64_t hi,
                               int scattered)
{
    uint64_t len = hi - lo, own = len > align ? len : align, gap = 0;

    for (unsigned i = 0; i < PSS_RA_RECENT; i++) {
        uint64_t rlo = ra->recent_lo[i], rhi = ra->recent_hi[i];
        if (rlo < rhi && rlo < lo && rhi < hi && lo <= rhi + own) {
            return hi - rlo;
        }
    }
    if (!scattered && own < PSS_RA_GAP) {
        gap = 7 * own < PSS_RA_GAP ? 7 * own : PSS_RA_GAP;
    }
    for (unsigned i = 0; gap != 0 && i < PSS_RA_RECENT; i++) {
        uint64_t rlo = ra->recent_lo[i], rhi = ra->recent_hi[i], step = lo - rlo;
        if (rlo < lo && rhi - rlo == len && rhi < lo && lo <= rhi + gap && rlo >= step &&
            pss_ra_recent(ra, rlo - step, rhi - step)) {
            return 2 * len;
        }
    }
    return 0;
}

/* Remember [lo, hi) as the object's last read. */
static void pss_ra_remember(pss_ra_t *ra, uint64_t lo, uint64_t hi)
{
    ra->recent_lo[ra->recent_next] = lo;
    ra->recent_hi[ra->recent_next] = hi;
    ra->recent_next = (ra->recent_next + 1) % PSS_RA_RECENT;
}

/* f, or past what the object's other streams read ahead from there (two
 * streams of processes that drifted a window apart meet again). */
static uint64_t pss_ra_past_others(const pss_ra_t *ra, const pss_ra_stream_t *st, uint64_t f)
{
    for (int moved = 1; moved;) {
        moved = 0;
        for (unsigned i = 0; i < PSS_RA_STREAMS; i++) {
            const pss_ra_stream_t *o = &ra->s[i];
            if (o != st && o->used != 0 && o->end <= f && f < o->ahead) {
                f = o->ahead;
                moved = 1;
            }
        }
    }
    return f;
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

/* The stream reading ahead whose last window behind its front, or what it
 * read ahead, [lo, hi) meets, or NULL. */
static pss_ra_stream_t *pss_ra_cached_stream(pss_ra_t *ra, uint64_t lo, uint64_t hi)
{
    for (unsigned i = 0; i < PSS_RA_STREAMS; i++) {
        pss_ra_stream_t *st = &ra->s[i];
        uint64_t back = st->end > st->window ? st->end - st->window : 0;
        uint64_t front = st->ahead > st->end ? st->ahead : st->end;
        if (st->used != 0 && st->window != 0 && hi > back && lo < front) {
            return st;
        }
    }
    return NULL;
}

/* Ask for [f, t) (t below limit, f past the other streams' read-ahead) as
 * st's next read-ahead. */
static int pss_ra_ask(pss_ra_t *ra, pss_ra_stream_t *st, uint64_t f, uint64_t t, uint64_t limit,
                      uint64_t *from, uint64_t *to)
{
    t = t < limit ? t : limit;
    f = pss_ra_past_others(ra, st, f);
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

/* When less than half its window is ahead of st's front, ask for the rest
 * of the window past it. */
static int pss_ra_keep_ahead(pss_ra_t *ra, pss_ra_stream_t *st, uint64_t align, uint64_t limit,
                             uint64_t *from, uint64_t *to)
{
    uint64_t f = (st->ahead > st->end ? st->ahead : st->end) / align * align;

    if (f - st->end >= st->window / 2) {
        return 0; /* enough ahead */
    }
    return pss_ra_ask(ra, st, f, (st->end + st->window + align - 1) / align * align, limit, from,
                      to);
}

/* A read served from the cache: only one of a stream that reads ahead
 * counts (HDF5's chunk index, read again for every call, must take neither
 * the streams' places nor the last reads'); one of its last read-ahead
 * grows its window. */
static int pss_ra_cached(pss_ra_t *ra, uint64_t win, uint64_t align, uint64_t limit, uint64_t lo,
                         uint64_t hi, uint64_t *from, uint64_t *to)
{
    pss_ra_stream_t *st = pss_ra_cached_stream(ra, lo, hi);

    if (st == NULL) {
        return 0;
    }
    st->used = ++ra->clock;
    ra->last = (unsigned)(st - ra->s);
    if (hi > st->mark && lo < st->ahead) { /* what it read ahead is used: read further */
        st->window = pss_ra_grow(st->window, win);
        st->mark = st->ahead;
    }
    st->end = hi > st->end ? hi : st->end;
    return pss_ra_keep_ahead(ra, st, align, limit, from, to);
}

int pss_ra_note(pss_ra_t *ra, uint64_t win, uint64_t align, uint64_t size, uint64_t lo, uint64_t hi,
                unsigned how, uint64_t *from, uint64_t *to)
{
    uint64_t run, front, limit = (size + align - 1) / align * align;
    pss_ra_stream_t *st;

    if (win == 0 || hi <= lo) {
        return 0;
    }
    if (how & PSS_RA_CACHED) {
        return pss_ra_cached(ra, win, align, limit, lo, hi, from, to);
    }
    run = pss_ra_follows(ra, align, lo, hi, (how & PSS_RA_SCATTERED) != 0);
    st = pss_ra_stream(ra, lo, hi);
    if ((how & PSS_RA_SCATTERED) && run == 0 && st == NULL) {
        return 0; /* a scattered piece: forgotten */
    }
    pss_ra_remember(ra, lo, hi);
    if (!(how & PSS_RA_KEPT)) {
        return 0; /* a large read of one client goes straight to it: no stream */
    }
    st = st != NULL ? st : pss_ra_start(ra, hi);
    st->used = ++ra->clock;
    ra->last = (unsigned)(st - ra->s);
    front = st->ahead > st->end ? st->ahead : st->end;
    if (run == 0 && st->window != 0 && hi > st->end && lo < front + st->window) {
        run = hi - lo; /* a shown stream's front moves on (the lead process of several) */
    }
    st->end = hi > st->end ? hi : st->end;
    if (run == 0) {
        return 0; /* not a stream (yet) */
    }
    if (st->window < pss_ra_first(run, win)) {
        st->window = pss_ra_first(run, win); /* (reads grown past the window read their own) */
    }
    return pss_ra_keep_ahead(ra, st, align, limit, from, to);
}

void pss_ra_stopped(pss_ra_t *ra, unsigned stream, uint64_t at)
{
    pss_ra_stream_t *st = &ra->s[stream % PSS_RA_STREAMS];

    if (st->ahead > at) {
        st->ahead = at;
    }
    if (st->mark > at) {
        st->mark = at;
    }
}

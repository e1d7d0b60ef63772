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
    old->end = old->ahead = hi;
    old->streak = 0;
    return old;
}

int pss_ra_note(pss_ra_t *ra, uint64_t win, uint64_t align, uint64_t size, uint64_t lo,
                uint64_t hi, int kept, uint64_t *from, uint64_t *to)
{
    uint64_t f, t, limit = (size + align - 1) / align * align;
    pss_ra_stream_t *st;

    if (win == 0 || hi <= lo || !kept) {
        return 0; /* a large read of one client goes straight to it: no stream */
    }
    st = pss_ra_stream(ra, win, lo, hi);
    st->used = ++ra->clock;
    ra->last = (unsigned)(st - ra->s);
    if (hi <= st->end && st->streak > 0) {
        return 0; /* behind the front (another process's chunk): no progress */
    }
    st->end = hi > st->end ? hi : st->end;
    st->streak++;
    f = (st->ahead > st->end ? st->ahead : st->end) / align * align;
    if (st->streak < 2 || f - st->end >= win / 2) {
        return 0; /* not a stream yet, or enough ahead */
    }
    t = (st->end + win + align - 1) / align * align;
    if (t > limit) {
        t = limit;
    }
    if (t <= f) {
        return 0;
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
}

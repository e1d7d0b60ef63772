/*
 * pss_readahead.c: the stream of forward reads of an object and when to
 * read ahead of it (see pss_readahead.h). The policy only: pss_job.c reads.
 */
#include "pss_readahead.h"

#include <string.h>

void pss_ra_reset(pss_ra_t *ra)
{
    memset(ra, 0, sizeof(*ra));
}

int pss_ra_note(pss_ra_t *ra, uint64_t win, uint64_t align, uint64_t size, uint64_t lo,
                uint64_t hi, int kept, uint64_t *from, uint64_t *to)
{
    uint64_t f, t, limit = (size + align - 1) / align * align;

    if (win == 0 || hi <= lo) {
        return 0;
    }
    if (!kept || lo + win < ra->end || lo > ra->end + win) {
        /* a large read (not cached), or a jump: a new stream begins here */
        ra->end = ra->ahead = hi;
        ra->streak = kept;
        return 0;
    }
    if (hi <= ra->end) {
        return 0; /* behind the front (another process's chunk): no progress */
    }
    ra->end = hi;
    ra->streak++;
    f = (ra->ahead > ra->end ? ra->ahead : ra->end) / align * align;
    if (ra->streak < 2 || f - ra->end >= win / 2) {
        return 0; /* not a stream yet, or enough ahead */
    }
    t = (ra->end + win + align - 1) / align * align;
    if (t > limit) {
        t = limit;
    }
    if (t <= f) {
        return 0;
    }
    ra->ahead = t;
    *from = f;
    *to = t;
    return 1;
}

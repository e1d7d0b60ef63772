/*
 * ad_pstripe_aggregate.c: whether a collective access is aggregated, and
 * the file domains of collective I/O (the math only; ad_pstripe_coll.c
 * gathers the ranges, ad_pstripe_twophase.c moves the data).
 *
 * File domains are whole stripes. Stripe i lives on stripe target
 * k = i % stripe_count, and targets are dealt to the cb_nodes aggregators
 * (ROMIO's ranklist) round robin, so an aggregator serves the stripes of
 * about stripe_count / cb_nodes targets, that is, talks to as few servers
 * as possible. With more aggregators than targets, the rows of a target's
 * stripes (row = i / stripe_count) are dealt to the aggregators that share
 * it; aggregators beyond a multiple of stripe_count then get nothing.
 *
 * The stripes an aggregator owns, taken in file order and put end to end,
 * form its domain; a position in the domain is the number of the
 * aggregator's bytes below an offset. A round is round_size bytes of a
 * domain, counted from the first stripe of the collective access (base),
 * so that the first round of every aggregator is full.
 *
 * This file includes nothing of MPI or ROMIO: tests/unit/test_coll_domain.cc
 * compiles it into the unit tests.
 */

#include "ad_pstripe_aggregate.h"

/* ROMIO's test compares neighbours in rank order; this one sorts. */
int ADIOI_PSTRIPE_Ranges_interleave(const ADIOI_PSTRIPE_range * ranges, int n,
                                    ADIOI_PSTRIPE_range * st)
{
    int i, j, m = 0;
    long long max_end;

    for (i = 0; i < n; i++) {
        if (ranges[i].end <= ranges[i].start)
            continue;
        /* insertion sort by start: n (processes) is small next to the I/O */
        for (j = m; j > 0 && st[j - 1].start > ranges[i].start; j--)
            st[j] = st[j - 1];
        st[j] = ranges[i];
        m++;
    }
    for (i = 1, max_end = m ? st[0].end : 0; i < m; i++) {
        if (st[i].start < max_end)
            return 1;
        if (st[i].end > max_end)
            max_end = st[i].end;
    }
    return 0;
}

int ADIOI_PSTRIPE_Ranges_aggregate(const ADIOI_PSTRIPE_range * ranges, int n, int is_write,
                                   ADIOI_PSTRIPE_range * scratch)
{
    long long bytes = 0, nregions = 0, small = is_write ? ADIOI_PSTRIPE_COLL_SMALL_REGION :
        ADIOI_PSTRIPE_COLL_SMALL_READ_REGION;
    int i;

    if (!ADIOI_PSTRIPE_Ranges_interleave(ranges, n, scratch))
        return 0;
    for (i = 0; i < n; i++) {
        bytes += ranges[i].bytes;
        nregions += ranges[i].nregions;
    }
    return bytes >= small * nregions;
}

void ADIOI_PSTRIPE_Domains_init(ADIOI_PSTRIPE_domains * d, int naggs, int64_t stripe_size,
                                int64_t stripe_count, int64_t cb_buffer_size)
{
    d->naggs = naggs;
    d->stripe_size = stripe_size > 0 ? stripe_size : cb_buffer_size;
    d->stripe_count = stripe_count > 0 ? stripe_count : 1;
    d->round_size = cb_buffer_size > 0 ? cb_buffer_size : d->stripe_size;
}

int ADIOI_PSTRIPE_Stripe_agg(const ADIOI_PSTRIPE_domains * d, int64_t i)
{
    int64_t k = i % d->stripe_count, row = i / d->stripe_count, g;

    if (d->naggs <= d->stripe_count)
        return (int) (k % d->naggs);
    g = d->naggs / d->stripe_count;
    return (int) (k + d->stripe_count * (row % g));
}

int64_t ADIOI_PSTRIPE_Stripes_below(const ADIOI_PSTRIPE_domains * d, int agg, int64_t i)
{
    int64_t sc = d->stripe_count, naggs = d->naggs, a = agg;

    if (naggs <= sc) {
        /* a owns targets a, a + naggs, ...: whole rows of them, then the
         * ones below target k in the row of stripe i */
        int64_t targets = (sc - a + naggs - 1) / naggs;
        int64_t row = i / sc, k = i % sc;
        return row * targets + (k > a ? (k - a + naggs - 1) / naggs : 0);
    } else {
        /* a owns one row in g of target ka, starting at row ra */
        int64_t g = naggs / sc, ka = a % sc, ra = a / sc, rows;
        if (a >= g * sc)
            return 0;
        rows = i > ka ? (i - ka + sc - 1) / sc : 0;     /* stripes of ka below i */
        return rows > ra ? (rows - ra + g - 1) / g : 0;
    }
}

int64_t ADIOI_PSTRIPE_Domain_pos(const ADIOI_PSTRIPE_domains * d, int64_t off)
{
    int64_t i = off / d->stripe_size;
    int a = ADIOI_PSTRIPE_Stripe_agg(d, i);

    return ADIOI_PSTRIPE_Stripes_below(d, a, i) * d->stripe_size + off % d->stripe_size;
}

void ADIOI_PSTRIPE_Domain_bases(const ADIOI_PSTRIPE_domains * d, int64_t start, int64_t * base)
{
    int a;

    for (a = 0; a < d->naggs; a++)
        base[a] = ADIOI_PSTRIPE_Stripes_below(d, a, start / d->stripe_size) * d->stripe_size;
}

void ADIOI_PSTRIPE_Domain_cut(const ADIOI_PSTRIPE_domains * d, const int64_t * base,
                              int64_t off, int64_t len, ADIOI_PSTRIPE_cut * cut)
{
    int64_t i = off / d->stripe_size, pos, stripe_left, round_left;

    cut->agg = ADIOI_PSTRIPE_Stripe_agg(d, i);
    pos = ADIOI_PSTRIPE_Domain_pos(d, off) - base[cut->agg];
    cut->round = pos / d->round_size;
    stripe_left = (i + 1) * d->stripe_size - off;
    round_left = (cut->round + 1) * d->round_size - pos;
    cut->len = len;
    if (cut->len > stripe_left)
        cut->len = stripe_left;
    if (cut->len > round_left)
        cut->len = round_left;
}

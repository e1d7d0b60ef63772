/*
 * The file domains of the driver's collective I/O
 * (adio/ad_pstripe/ad_pstripe_aggregate.c) against a brute-force model:
 * walk the file stripe by stripe and byte by byte, hand each stripe to the
 * aggregator the owner function names, and count each aggregator's bytes.
 * What the driver computes with divisions (stripes below a stripe,
 * positions in a domain, bases, the cutting of an access into pieces of
 * one stripe and one round) must agree with that walk, for many random
 * small geometries; the owner function itself is checked against the
 * dealing the design promises (targets round robin to aggregators, or rows
 * of a target round robin to the aggregators sharing it), and large
 * offsets through the relations the functions must satisfy. And whether a
 * collective access is aggregated at all (coll_choice): ranges apart never,
 * interleaved reads always, interleaved writes only when their regions
 * average 64 KiB or more.
 */
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ad_pstripe_aggregate.h"

namespace {

ADIOI_PSTRIPE_domains random_domains(std::mt19937_64 &rng)
{
    ADIOI_PSTRIPE_domains d;
    ADIOI_PSTRIPE_Domains_init(&d, 1 + (int)(rng() % 12), 1 + (int64_t)(rng() % 64),
                               1 + (int64_t)(rng() % 8), 1 + (int64_t)(rng() % 200));
    return d;
}

/* The model: for each byte of [0, file_len), its aggregator and its
 * position in that aggregator's domain, by counting. */
struct model {
    std::vector<int> agg;     /* per byte */
    std::vector<int64_t> pos; /* per byte */

    model(const ADIOI_PSTRIPE_domains &d, int64_t file_len) : agg(file_len), pos(file_len)
    {
        std::vector<int64_t> bytes(d.naggs, 0);
        for (int64_t b = 0; b < file_len; b++) {
            int a = ADIOI_PSTRIPE_Stripe_agg(&d, b / d.stripe_size);
            agg[b] = a;
            pos[b] = bytes[a]++;
        }
    }
};

std::string describe(const ADIOI_PSTRIPE_domains &d)
{
    return "naggs " + std::to_string(d.naggs) + ", stripe_size " + std::to_string(d.stripe_size) +
           ", stripe_count " + std::to_string(d.stripe_count) + ", round_size " +
           std::to_string(d.round_size);
}

} // namespace

TEST(coll_domain, init_fallbacks)
{
    ADIOI_PSTRIPE_domains d;

    ADIOI_PSTRIPE_Domains_init(&d, 4, 65536, 3, 262144);
    EXPECT_EQ(4, d.naggs);
    EXPECT_EQ(65536, d.stripe_size);
    EXPECT_EQ(3, d.stripe_count);
    EXPECT_EQ(262144, d.round_size);
    /* a layout without stripes: one stripe of cb_buffer_size on one target */
    ADIOI_PSTRIPE_Domains_init(&d, 2, 0, 0, 4096);
    EXPECT_EQ(4096, d.stripe_size);
    EXPECT_EQ(1, d.stripe_count);
    EXPECT_EQ(4096, d.round_size);
    /* no cb_buffer_size: a round is a stripe */
    ADIOI_PSTRIPE_Domains_init(&d, 2, 1000, 2, 0);
    EXPECT_EQ(1000, d.round_size);
}

/* Fewer aggregators than targets: every stripe of a target goes to one
 * aggregator, targets are dealt round robin, so each aggregator serves
 * ceil or floor of stripe_count / naggs targets. More aggregators: each
 * serves at most one target, whose rows go round robin to the g =
 * naggs / stripe_count aggregators that share it; the others get nothing. */
TEST(coll_domain, owner_deals_targets)
{
    std::mt19937_64 rng(7);

    for (int iter = 0; iter < 2000; iter++) {
        ADIOI_PSTRIPE_domains d = random_domains(rng);
        int64_t sc = d.stripe_count, rows = 1 + (int64_t)(rng() % 20);
        std::vector<std::set<int64_t>> targets(d.naggs);
        std::map<std::pair<int64_t, int>, int> owner_of_row; /* (target, row % g) */
        SCOPED_TRACE(describe(d));

        for (int64_t i = 0; i < rows * sc; i++) {
            int a = ADIOI_PSTRIPE_Stripe_agg(&d, i);
            ASSERT_GE(a, 0);
            ASSERT_LT(a, d.naggs);
            targets[a].insert(i % sc);
            if (d.naggs > sc) {
                int64_t g = d.naggs / sc;
                auto key = std::make_pair(i % sc, (int)((i / sc) % g));
                auto it = owner_of_row.emplace(key, a).first;
                ASSERT_EQ(it->second, a) << "stripe " << i;
            }
        }
        if (d.naggs <= sc) {
            for (int a = 0; a < d.naggs; a++) {
                int64_t n = (int64_t)targets[a].size();
                EXPECT_TRUE(n == sc / d.naggs || n == (sc + d.naggs - 1) / d.naggs)
                    << "aggregator " << a << " serves " << n << " targets";
            }
            /* every target belongs to exactly one aggregator */
            size_t total = 0;
            for (auto &t : targets)
                total += t.size();
            EXPECT_EQ((size_t)sc, total);
        } else {
            int64_t g = d.naggs / sc;
            std::set<int> used;
            for (auto &kv : owner_of_row)
                used.insert(kv.second);
            if (rows >= g) {
                EXPECT_EQ((size_t)(g * sc), used.size());
            }
            for (int a = 0; a < d.naggs; a++) {
                EXPECT_LE(targets[a].size(), 1u) << "aggregator " << a;
                if (a >= g * sc) {
                    EXPECT_TRUE(targets[a].empty()) << "aggregator " << a;
                }
            }
        }
    }
}

/* Stripes_below and Domain_pos against counting; domains are made of whole
 * stripes (every stripe starts at a multiple of stripe_size in its domain),
 * and each aggregator's positions run 0, 1, 2, ... in file order, so no two
 * bytes share a place. */
TEST(coll_domain, positions_against_brute_force)
{
    std::mt19937_64 rng(11);

    for (int iter = 0; iter < 500; iter++) {
        ADIOI_PSTRIPE_domains d = random_domains(rng);
        int64_t nstripes = 1 + (int64_t)(rng() % 40), len = nstripes * d.stripe_size;
        model m(d, len);
        std::vector<int64_t> below(d.naggs, 0);
        SCOPED_TRACE(describe(d));

        for (int64_t i = 0; i < nstripes; i++) {
            for (int a = 0; a < d.naggs; a++)
                ASSERT_EQ(below[a], ADIOI_PSTRIPE_Stripes_below(&d, a, i))
                    << "aggregator " << a << ", stripe " << i;
            int64_t first = i * d.stripe_size;
            ASSERT_EQ(0, m.pos[first] % d.stripe_size) << "stripe " << i;
            below[m.agg[first]]++;
        }
        for (int64_t b = 0; b < len; b++)
            ASSERT_EQ(m.pos[b], ADIOI_PSTRIPE_Domain_pos(&d, b)) << "offset " << b;
    }
}

/* Large stripe numbers: every stripe below i belongs to one aggregator,
 * and stripe i adds one to its owner's count only. */
TEST(coll_domain, stripes_below_relations_large)
{
    std::mt19937_64 rng(13);

    for (int iter = 0; iter < 20000; iter++) {
        ADIOI_PSTRIPE_domains d = random_domains(rng);
        int64_t i = (int64_t)(rng() % (1ull << 50));
        int owner = ADIOI_PSTRIPE_Stripe_agg(&d, i);
        int64_t sum = 0;
        SCOPED_TRACE(describe(d) + ", stripe " + std::to_string(i));

        for (int a = 0; a < d.naggs; a++) {
            int64_t lo = ADIOI_PSTRIPE_Stripes_below(&d, a, i);
            int64_t hi = ADIOI_PSTRIPE_Stripes_below(&d, a, i + 1);
            ASSERT_EQ(a == owner ? 1 : 0, hi - lo) << "aggregator " << a;
            sum += lo;
        }
        ASSERT_EQ(i, sum);
    }
}

/* Cutting random accesses: the pieces cover the access exactly once, in
 * order; each lies in one stripe, belongs to the stripe's aggregator and to
 * one round of it (its bytes' domain positions, less the base, fall in
 * [round * round_size, (round + 1) * round_size)); each is as long as it
 * can be; no aggregator gets more than round_size bytes in one round; and
 * the bases are whole stripes. */
TEST(coll_domain, cut_against_brute_force)
{
    std::mt19937_64 rng(17);

    for (int iter = 0; iter < 3000; iter++) {
        ADIOI_PSTRIPE_domains d = random_domains(rng);
        int64_t start = (int64_t)(rng() % 500);
        int64_t nranges = 1 + (int64_t)(rng() % 4), end = start, ss = d.stripe_size;
        std::vector<std::pair<int64_t, int64_t>> ranges;
        for (int64_t r = 0; r < nranges; r++) {
            int64_t off = end + (r == 0 ? 0 : (int64_t)(rng() % 300));
            int64_t len = 1 + (int64_t)(rng() % 1500);
            ranges.push_back(std::make_pair(off, len));
            end = off + len;
        }
        model m(d, end + 1);
        std::vector<int64_t> base(d.naggs);
        std::map<std::pair<int, int64_t>, int64_t> round_bytes;
        SCOPED_TRACE(describe(d) + ", start " + std::to_string(start));

        ADIOI_PSTRIPE_Domain_bases(&d, start, base.data());
        for (int a = 0; a < d.naggs; a++) {
            ASSERT_EQ(0, base[a] % ss) << "aggregator " << a;
            ASSERT_EQ(ADIOI_PSTRIPE_Stripes_below(&d, a, start / ss) * ss, base[a]);
        }
        for (auto &r : ranges) {
            int64_t off = r.first, left = r.second;
            while (left > 0) {
                ADIOI_PSTRIPE_cut cut;
                ADIOI_PSTRIPE_Domain_cut(&d, base.data(), off, left, &cut);
                ASSERT_GT(cut.len, 0);
                ASSERT_LE(cut.len, left);
                ASSERT_EQ(off / ss, (off + cut.len - 1) / ss) << "piece at " << off;
                for (int64_t b = off; b < off + cut.len; b++) {
                    ASSERT_EQ(m.agg[b], cut.agg) << "byte " << b;
                    int64_t pos = m.pos[b] - base[cut.agg];
                    ASSERT_GE(pos, 0) << "byte " << b;
                    ASSERT_EQ(cut.round, pos / d.round_size) << "byte " << b;
                }
                int64_t next = off + cut.len;
                bool at_end = cut.len == left, stripe_end = next % ss == 0;
                bool round_end = (m.pos[next - 1] - base[cut.agg] + 1) % d.round_size == 0;
                ASSERT_TRUE(at_end || stripe_end || round_end)
                    << "piece at " << off << " stops early";
                round_bytes[std::make_pair(cut.agg, cut.round)] += cut.len;
                off = next;
                left -= cut.len;
            }
        }
        for (auto &kv : round_bytes)
            ASSERT_LE(kv.second, d.round_size)
                << "aggregator " << kv.first.first << ", round " << kv.first.second;
    }
}

// Whether a collective access is aggregated (automatic): only ranges that
// interleave, with regions of 4 MiB or more on average (reads and writes:
// ADIOI_PSTRIPE_COLL_SMALL_REGION, ADIOI_PSTRIPE_COLL_SMALL_READ_REGION).
static int aggregates(std::vector<ADIOI_PSTRIPE_range> r, int is_write)
{
    std::vector<ADIOI_PSTRIPE_range> scratch(r.size());
    return ADIOI_PSTRIPE_Ranges_aggregate(r.data(), (int)r.size(), is_write, scratch.data());
}

TEST(coll_choice, ranges_apart_are_never_aggregated)
{
    // each process its own part, in any rank order; empty and failed
    // accesses (start = end, start = -1) do not count
    std::vector<ADIOI_PSTRIPE_range> r = {{64 << 20, 128 << 20, 64 << 20, 1},
                                          {0, 64 << 20, 64 << 20, 1},
                                          {5, 5, 0, 0},
                                          {-1, -1, 0, 0}};
    EXPECT_EQ(aggregates(r, 1), 0);
    EXPECT_EQ(aggregates(r, 0), 0);
}

TEST(coll_choice, interleaved_large_regions_are_aggregated)
{
    // two processes, 4 MiB regions every 8 MiB over the same 64 MiB
    std::vector<ADIOI_PSTRIPE_range> r = {{0, (64 << 20) - (4 << 20), 32 << 20, 8},
                                          {4 << 20, 64 << 20, 32 << 20, 8}};
    EXPECT_EQ(aggregates(r, 0), 1);
    EXPECT_EQ(aggregates(r, 1), 1);
}

TEST(coll_choice, interleaved_smaller_regions_are_list_io)
{
    // two processes, 64-byte or 4 KiB or 1 MiB regions, every other one
    for (long long region : {64LL, 4096LL, 1LL << 20}) {
        long long n = (64LL << 20) / region / 2;
        std::vector<ADIOI_PSTRIPE_range> r = {{0, (64LL << 20) - region, 32LL << 20, n},
                                              {region, 64LL << 20, 32LL << 20, n}};
        EXPECT_EQ(aggregates(r, 0), 0) << region;
        EXPECT_EQ(aggregates(r, 1), 0) << region;
    }
    // 4 MiB on average: 60 MiB in 15 regions and 4 MiB in 1: aggregated;
    // one region more: not
    for (int is_write : {0, 1}) {
        std::vector<ADIOI_PSTRIPE_range> r = {{0, 64 << 20, 60 << 20, 15},
                                              {32 << 20, 36 << 20, 4 << 20, 1}};
        EXPECT_EQ(aggregates(r, is_write), 1);
        r[1].nregions++;
        EXPECT_EQ(aggregates(r, is_write), 0);
    }
}

// Whether ranges interleave (the driver reads collective accesses whose
// ranges are apart while it gathers the next call's ranges).
static int interleave(std::vector<ADIOI_PSTRIPE_range> r)
{
    std::vector<ADIOI_PSTRIPE_range> scratch(r.size());
    return ADIOI_PSTRIPE_Ranges_interleave(r.data(), (int)r.size(), scratch.data());
}

TEST(coll_choice, ranges_interleave_only_where_they_overlap)
{
    // adjacent, in any rank order, with empty and failed accesses between
    std::vector<ADIOI_PSTRIPE_range> r = {
        {300, 400, 100, 1}, {5, 5, 0, 0}, {0, 100, 100, 1}, {-1, -1, 0, 0}, {100, 300, 200, 2}};
    EXPECT_EQ(interleave(r), 0);
    r[4].end = 301; // one byte into the next
    EXPECT_EQ(interleave(r), 1);
    // a range inside a longer one that ends after the next starts
    r = {{0, 1000, 2, 2}, {400, 500, 100, 1}, {1000, 1100, 100, 1}};
    EXPECT_EQ(interleave(r), 1);
    // the same bytes
    r = {{64, 128, 64, 1}, {64, 128, 64, 1}};
    EXPECT_EQ(interleave(r), 1);
    // one process, or none with bytes
    EXPECT_EQ(interleave({{0, 1 << 20, 1 << 20, 1}}), 0);
    EXPECT_EQ(interleave({{7, 7, 0, 0}, {-1, -1, 0, 0}}), 0);
}

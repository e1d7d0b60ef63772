/*
 * Region lists: sorting, coalescing and I/O planning, checked against a
 * reference model that marks every covered byte in a bitmap. For planning,
 * the model checks the contract of ps_extent_plan() byte by byte: spans are
 * aligned, sorted, disjoint, at most max_io long, cover every region byte,
 * start and end in blocks that hold region bytes, carry the right holes flag
 * and region count, merge only what the gap/shared-block rule allows, and
 * split only where that rule or max_io demands.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <random>
#include <vector>

#include "ps_extent.h"

namespace {

typedef std::vector<ps_extent_t> extents_t;

/* Milliseconds since t0. Timings of the large cases are recorded
 * (RecordProperty, in the XML report), never asserted: a sanitizer build or a
 * loaded machine is many times slower, and a test must not flake on that. */
int elapsed_ms(std::chrono::steady_clock::time_point t0)
{
    return (int)std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now() - t0)
        .count();
}

/*
 * The contract of ps_extent_plan() checked in one pass, for lists too large
 * for the bitmap model: spans sorted, disjoint, aligned, at most max_io long,
 * and every byte of every region (sorted by offset) inside a span.
 */
void expect_plan_covers(const extents_t &sorted, const std::vector<ps_io_span_t> &spans,
                        size_t count, uint64_t align, uint64_t max_io)
{
    for (size_t i = 0; i < count; i++) {
        ASSERT_EQ(0u, spans[i].off % align) << "span " << i;
        ASSERT_EQ(0u, spans[i].len % align) << "span " << i;
        ASSERT_GT(spans[i].len, 0u) << "span " << i;
        ASSERT_LE(spans[i].len, std::max(max_io / align * align, align)) << "span " << i;
        if (i > 0) {
            ASSERT_LE(spans[i - 1].off + spans[i - 1].len, spans[i].off) << "span " << i;
        }
    }
    size_t first = 0; /* first span that ends after the current region's start */
    for (size_t r = 0; r < sorted.size(); r++) {
        uint64_t pos = sorted[r].off, end = sorted[r].off + sorted[r].len;
        while (first < count && spans[first].off + spans[first].len <= pos) {
            first++;
        }
        for (size_t k = first; pos < end; k++) {
            ASSERT_LT(k, count) << "region " << r << " runs past the last span";
            ASSERT_LE(spans[k].off, pos)
                << "byte " << pos << " of region " << r << " is in no span";
            pos = spans[k].off + spans[k].len;
        }
    }
}

uint64_t align_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

uint64_t eff_max_io(uint64_t align, uint64_t max_io)
{
    uint64_t m = max_io / align * align;
    return m < align ? align : m;
}

std::vector<uint8_t> bitmap_of(const extents_t &ext, uint64_t size)
{
    std::vector<uint8_t> bits(size, 0);
    for (const ps_extent_t &e : ext) {
        for (uint64_t b = e.off; b < e.off + e.len; b++) {
            bits[b] = 1;
        }
    }
    return bits;
}

uint64_t top_of(const extents_t &ext)
{
    uint64_t top = 0;
    for (const ps_extent_t &e : ext) {
        top = std::max(top, e.off + e.len);
    }
    return top;
}

/* Random regions in [0, size): a mix of tiny, small, large, duplicated,
 * overlapping and zero-length ones. */
extents_t random_regions(std::mt19937_64 &rng, uint64_t size, size_t n)
{
    extents_t ext;
    for (size_t i = 0; i < n; i++) {
        ps_extent_t e;
        e.off = rng() % size;
        uint64_t room = size - e.off;
        switch (rng() % 6) {
        case 0:
            e.len = 0;
            break;
        case 1:
            e.len = 1 + rng() % std::min<uint64_t>(room, 8);
            break;
        case 2:
            e.len = 1 + rng() % std::min<uint64_t>(room, 300);
            break;
        case 3:
            e.len = 1 + rng() % room;
            break;
        case 4:
            if (!ext.empty()) { /* duplicate or overlap an earlier region */
                e = ext[rng() % ext.size()];
                if (rng() % 2 && e.len > 1) {
                    e.len -= 1 + rng() % (e.len - 1) / 2;
                }
                break;
            }
            /* fall through */
        default:
            e.len = 1 + rng() % std::min<uint64_t>(room, 5000);
            break;
        }
        ext.push_back(e);
    }
    return ext;
}

/* Check a plan against the byte bitmap; *nspans gets the number of spans. */
void check_plan(const extents_t &sorted, uint64_t align, uint64_t max_gap, uint64_t max_io,
                size_t *nspans)
{
    const uint64_t mio = eff_max_io(align, max_io);
    const uint64_t top = top_of(sorted);
    const uint64_t size = align_up(top, align);
    const size_t bound = ps_extent_plan_bound(sorted.data(), sorted.size(), align, max_io);
    std::vector<ps_io_span_t> spans(bound + 1);
    /* sentinel after the bound, to catch a plan writing past it */
    spans[bound].off = 0xdeadbeef;

    size_t n = ps_extent_plan(sorted.data(), sorted.size(), align, max_gap, max_io, spans.data());
    *nspans = n;
    ASSERT_LE(n, bound);
    ASSERT_EQ(0xdeadbeefu, spans[bound].off) << "wrote past the bound";
    spans.resize(n);

    std::vector<uint8_t> covered = bitmap_of(sorted, size);
    std::vector<uint8_t> in_span(size, 0);

    for (size_t i = 0; i < n; i++) {
        const ps_io_span_t &s = spans[i];
        /* built only when an assertion fails */
        auto where = [&]() {
            std::ostringstream o;
            o << " (span " << i << " [" << s.off << ", +" << s.len << ") align " << align << " gap "
              << max_gap << " max_io " << max_io << ")";
            return o.str();
        };
        ASSERT_GT(s.len, 0u) << where();
        ASSERT_EQ(0u, s.off % align) << where();
        ASSERT_EQ(0u, s.len % align) << where();
        ASSERT_LE(s.len, mio) << where();
        ASSERT_LE(s.off + s.len, size) << where();
        if (i > 0) {
            ASSERT_LE(spans[i - 1].off + spans[i - 1].len, s.off)
                << "overlap or unsorted" << where();
        }

        bool holes = false;
        uint64_t last = UINT64_MAX; /* last covered byte seen in this span */
        for (uint64_t b = s.off; b < s.off + s.len; b++) {
            in_span[b] = 1;
            if (!covered[b]) {
                holes = true;
                continue;
            }
            /* no unjustified merge: covered runs in one span are within
             * max_gap of each other or share a block */
            if (last != UINT64_MAX && b > last + 1) {
                ASSERT_TRUE(b - last - 1 <= max_gap || b / align == last / align)
                    << "bytes " << last << " and " << b << " merged across a gap" << where();
            }
            last = b;
        }
        ASSERT_EQ(holes, s.holes != 0) << where();

        /* trimmed: the first and the last block hold region bytes */
        bool first_block = false, last_block = false;
        for (uint64_t b = s.off; b < s.off + align; b++) {
            first_block |= covered[b] != 0;
        }
        for (uint64_t b = s.off + s.len - align; b < s.off + s.len; b++) {
            last_block |= covered[b] != 0;
        }
        ASSERT_TRUE(first_block && last_block) << "span not trimmed to its regions" << where();

        uint32_t count = 0;
        for (const ps_extent_t &e : sorted) {
            if (e.len > 0 && e.off < s.off + s.len && s.off < e.off + e.len) {
                count++;
            }
        }
        ASSERT_EQ(count, s.nregions) << where();

        /* no unjustified split: the first covered byte of the next span is
         * too far (gap rule) or past this span's max_io limit */
        if (i + 1 < n) {
            uint64_t a = s.off + s.len - 1, b = spans[i + 1].off;
            while (!covered[a]) {
                a--;
            }
            while (!covered[b]) {
                b++;
            }
            bool may_join = b - a - 1 <= max_gap || a / align == b / align;
            ASSERT_TRUE(!may_join || b >= s.off + mio)
                << "split between bytes " << a << " and " << b << " without cause" << where();
        }
    }
    for (uint64_t b = 0; b < size; b++) {
        if (covered[b]) {
            EXPECT_TRUE(in_span[b]) << "byte " << b << " not covered by a span";
            if (!in_span[b]) {
                break;
            }
        }
    }
}

} // namespace

TEST(extent, sort)
{
    std::mt19937_64 rng(7);
    for (int iter = 0; iter < 200; iter++) {
        extents_t ext = random_regions(rng, 1 + rng() % 1000, rng() % 300);
        extents_t sorted = ext;
        ps_extent_sort(sorted.data(), sorted.size());
        for (size_t i = 1; i < sorted.size(); i++) {
            ASSERT_TRUE(sorted[i - 1].off < sorted[i].off ||
                        (sorted[i - 1].off == sorted[i].off && sorted[i - 1].len <= sorted[i].len));
        }
        auto key = [](const ps_extent_t &a, const ps_extent_t &b) {
            return a.off != b.off ? a.off < b.off : a.len < b.len;
        };
        std::sort(ext.begin(), ext.end(), key);
        for (size_t i = 0; i < ext.size(); i++) { /* same multiset */
            ASSERT_EQ(ext[i].off, sorted[i].off);
            ASSERT_EQ(ext[i].len, sorted[i].len);
        }
    }
    ps_extent_sort(NULL, 0);
}

TEST(extent, coalesce_against_bitmap)
{
    std::mt19937_64 rng(8);
    for (int iter = 0; iter < 2000; iter++) {
        uint64_t size = 1 + rng() % 2000;
        extents_t ext = random_regions(rng, size, rng() % 100);
        ps_extent_sort(ext.data(), ext.size());
        std::vector<uint8_t> want = bitmap_of(ext, size);

        extents_t out = ext;
        size_t n = ps_extent_coalesce(out.data(), out.size());
        ASSERT_LE(n, ext.size());
        out.resize(n);
        for (size_t i = 0; i < n; i++) {
            ASSERT_GT(out[i].len, 0u);
            if (i > 0) { /* sorted, and neither overlapping nor touching */
                ASSERT_LT(out[i - 1].off + out[i - 1].len, out[i].off);
            }
        }
        ASSERT_EQ(want, bitmap_of(out, size));
    }
    EXPECT_EQ(0u, ps_extent_coalesce(NULL, 0));
}

TEST(extent, plan_examples)
{
    std::vector<ps_io_span_t> s(16);
    auto plan = [&](extents_t e, uint64_t align, uint64_t gap, uint64_t max_io) {
        return ps_extent_plan(e.data(), e.size(), align, gap, max_io, s.data());
    };

    /* one unaligned region: one block, read-modify-write */
    ASSERT_EQ(1u, plan({{100, 100}}, 512, 0, 1 << 20));
    EXPECT_EQ(0u, s[0].off);
    EXPECT_EQ(512u, s[0].len);
    EXPECT_EQ(1u, s[0].holes);
    EXPECT_EQ(1u, s[0].nregions);

    /* two aligned touching regions: one span, written blind */
    ASSERT_EQ(1u, plan({{0, 512}, {512, 512}}, 512, 0, 1 << 20));
    EXPECT_EQ(1024u, s[0].len);
    EXPECT_EQ(0u, s[0].holes);
    EXPECT_EQ(2u, s[0].nregions);

    /* far apart: two spans */
    ASSERT_EQ(2u, plan({{0, 512}, {8192, 512}}, 512, 4096, 1 << 20));
    EXPECT_EQ(8192u, s[1].off);

    /* a gap within max_gap: merged, with holes */
    ASSERT_EQ(1u, plan({{0, 512}, {4096, 512}}, 512, 4096, 1 << 20));
    EXPECT_EQ(4608u, s[0].len);
    EXPECT_EQ(1u, s[0].holes);

    /* a gap of max_gap + 1 in different blocks: split */
    ASSERT_EQ(2u, plan({{0, 512}, {4097, 511}}, 512, 3584, 1 << 20));

    /* same block, gap larger than max_gap: must share the span anyway */
    ASSERT_EQ(1u, plan({{0, 100}, {4000, 100}}, 4096, 0, 1 << 20));
    EXPECT_EQ(0u, s[0].off);
    EXPECT_EQ(8192u, s[0].len);
    EXPECT_EQ(2u, s[0].nregions);

    /* a big region is cut at max_io */
    ASSERT_EQ(3u, plan({{0, 10 << 20}}, 4096, 0, 4 << 20));
    EXPECT_EQ(4u << 20, s[0].len);
    EXPECT_EQ(4u << 20, s[1].off);
    EXPECT_EQ(2u << 20, s[2].len);
    for (int i = 0; i < 3; i++) {
        EXPECT_EQ(1u, s[i].nregions);
        EXPECT_EQ(0u, s[i].holes);
    }

    /* max_io is rounded down to the alignment, and is at least one block */
    ASSERT_EQ(2u, plan({{0, 8192}}, 4096, 0, 5000));
    ASSERT_EQ(2u, plan({{0, 8192}}, 4096, 0, 0));

    /* overlapping duplicates count twice; zero lengths not at all */
    ASSERT_EQ(1u, plan({{0, 4096}, {0, 4096}, {10, 0}}, 4096, 0, 1 << 20));
    EXPECT_EQ(2u, s[0].nregions);
    EXPECT_EQ(0u, s[0].holes);

    /* a region crossing a cut counts in both spans */
    ASSERT_EQ(2u, plan({{4000, 200}}, 4096, 0, 4096));
    EXPECT_EQ(1u, s[0].nregions);
    EXPECT_EQ(1u, s[1].nregions);

    /* a gap larger than max_io inside max_gap: no span of only gap bytes */
    ASSERT_EQ(2u, plan({{0, 4096}, {1 << 20, 4096}}, 4096, 1 << 30, 8192));
    EXPECT_EQ(1u << 20, s[1].off);

    EXPECT_EQ(0u, plan({}, 4096, 0, 4096));
    EXPECT_EQ(0u, plan({{5, 0}}, 4096, 0, 4096));
}

TEST(extent, plan_against_bitmap)
{
    static const uint64_t aligns[] = {1, 2, 8, 64, 512, 4096};
    std::mt19937_64 rng(9);
    size_t total_spans = 0;

    for (int iter = 0; iter < 3000; iter++) {
        uint64_t size = 1 + rng() % (rng() % 2 ? 2048 : 20000);
        extents_t ext = random_regions(rng, size, rng() % 150);
        ps_extent_sort(ext.data(), ext.size());

        uint64_t align = aligns[rng() % 6];
        uint64_t max_gap, max_io;
        switch (rng() % 5) {
        case 0:
            max_gap = 0;
            break;
        case 1:
            max_gap = 1 + rng() % 16;
            break;
        case 2:
            max_gap = rng() % 5000;
            break;
        case 3:
            max_gap = UINT64_MAX;
            break;
        default:
            max_gap = rng() % 25000;
            break;
        }
        switch (rng() % 6) {
        case 0:
            max_io = 0;
            break;
        case 1:
            max_io = align;
            break;
        case 2:
            max_io = align * (1 + rng() % 8);
            break;
        case 3:
            max_io = align * (1 + rng() % 8) + rng() % align;
            break;
        case 4:
            max_io = UINT64_MAX;
            break;
        default:
            max_io = 1 + rng() % 25000;
            break;
        }
        SCOPED_TRACE(::testing::Message() << "iteration " << iter);
        size_t nspans = 0;
        check_plan(ext, align, max_gap, max_io, &nspans);
        total_spans += nspans;
        if (HasFailure()) {
            break;
        }
    }
    EXPECT_GT(total_spans, 3000u);
}

/* The server's typical strided case: 100,000 64-byte records every 128 bytes
 * must become a few large I/Os, quickly. */
TEST(extent, plan_100k_strided_regions)
{
    const size_t n = 100000;
    extents_t ext(n);
    for (size_t i = 0; i < n; i++) {
        ext[i].off = i * 128;
        ext[i].len = 64;
    }
    std::shuffle(ext.begin(), ext.end(), std::mt19937_64(10));

    auto t0 = std::chrono::steady_clock::now();
    ps_extent_sort(ext.data(), n);
    size_t bound = ps_extent_plan_bound(ext.data(), n, 4096, 1 << 20);
    std::vector<ps_io_span_t> spans(bound);
    size_t count = ps_extent_plan(ext.data(), n, 4096, 64, 1 << 20, spans.data());
    RecordProperty("sort_and_plan_ms", elapsed_ms(t0));

    /* 12.8 MB of extent in 1 MB spans */
    EXPECT_EQ(13u, count);
    uint64_t regions = 0, bytes = 0;
    for (size_t i = 0; i < count; i++) {
        EXPECT_EQ(1u, spans[i].holes);
        regions += spans[i].nregions;
        bytes += spans[i].len;
    }
    EXPECT_EQ(n, regions); /* no record crosses a 1 MB boundary */
    EXPECT_EQ(align_up(n * 128, 4096), bytes);
    expect_plan_covers(ext, spans, count, 4096, 1 << 20);

    /* with no gap allowed, only records in the same 4 KB block merge */
    count = ps_extent_plan(ext.data(), n, 4096, 0, 1 << 20, spans.data());
    EXPECT_EQ(n * 128 / 4096, count);
    EXPECT_EQ(4096u, spans[0].len);
    EXPECT_EQ(32u, spans[0].nregions);
    /* unaligned (align 1) and no gap: one span per record */
    bound = ps_extent_plan_bound(ext.data(), n, 1, 1 << 20);
    spans.resize(bound);
    count = ps_extent_plan(ext.data(), n, 1, 0, 1 << 20, spans.data());
    EXPECT_EQ(n, count);
    EXPECT_EQ(0u, spans[n - 1].holes);
}

/* Long regions that all overlap each other: counting must not be quadratic
 * in spans x regions, and must still be exact. */
TEST(extent, plan_many_long_overlapping_regions)
{
    const size_t n = 20000;
    extents_t ext(n);
    for (size_t i = 0; i < n; i++) {
        ext[i].off = i * 4096;
        ext[i].len = 64ull << 20;
    }
    size_t bound = ps_extent_plan_bound(ext.data(), n, 4096, 1 << 20);
    std::vector<ps_io_span_t> spans(bound);

    auto t0 = std::chrono::steady_clock::now();
    size_t count = ps_extent_plan(ext.data(), n, 4096, 0, 1 << 20, spans.data());
    RecordProperty("plan_ms", elapsed_ms(t0));

    uint64_t end = (n - 1) * 4096 + (64ull << 20);
    ASSERT_EQ((end + (1 << 20) - 1) >> 20, count);
    for (size_t i = 0; i < count; i++) {
        /* regions intersecting [i MB, (i+1) MB): started before its end,
         * and ending after its start */
        uint64_t lo = (uint64_t)i << 20, hi = lo + (1 << 20);
        uint64_t started = std::min<uint64_t>(n, (hi + 4095) / 4096);
        uint64_t ended = lo >= (64ull << 20) ? (lo - (64ull << 20)) / 4096 + 1 : 0;
        ASSERT_EQ(started - std::min(started, ended), spans[i].nregions) << "span " << i;
        ASSERT_EQ(0u, spans[i].holes);
    }
    expect_plan_covers(ext, spans, count, 4096, 1 << 20);
}

TEST(extent, plan_max_regions_shuffled)
{
    const size_t n = 1 << 20;
    std::mt19937_64 rng(11);
    extents_t ext(n);
    for (size_t i = 0; i < n; i++) {
        ext[i].off = (rng() % (1ull << 34)) & ~7ull;
        ext[i].len = 8 + rng() % 4096;
    }
    auto t0 = std::chrono::steady_clock::now();
    ps_extent_sort(ext.data(), n);
    size_t bound = ps_extent_plan_bound(ext.data(), n, 4096, 1 << 20);
    std::vector<ps_io_span_t> spans(bound);
    size_t count = ps_extent_plan(ext.data(), n, 4096, 65536, 1 << 20, spans.data());
    RecordProperty("sort_and_plan_ms", elapsed_ms(t0));
    EXPECT_LE(count, bound);
    EXPECT_GT(count, 0u);
    expect_plan_covers(ext, spans, count, 4096, 1 << 20);
    uint64_t regions = 0;
    for (size_t i = 0; i < count; i++) {
        regions += spans[i].nregions;
    }
    EXPECT_GE(regions, n); /* every region in at least one span */
}

TEST(extent, plan_bound)
{
    extents_t e = {{0, 0}, {100, 1}, {4095, 2}, {0, 10 << 20}};
    /* 0 + 1 + 2 (crosses a block edge with max_io = align) + 2560 */
    EXPECT_EQ(1u + 2u + 2560u, ps_extent_plan_bound(e.data(), e.size(), 4096, 4096));
    EXPECT_EQ(1u + 1u + 10u, ps_extent_plan_bound(e.data(), e.size(), 4096, 1 << 20));
    EXPECT_EQ(0u, ps_extent_plan_bound(NULL, 0, 4096, 4096));
}

namespace {

typedef std::vector<ps_extent_run_t> runs_t;

/* Random runs with sorted, disjoint hulls below about `size` bytes: gaps of
 * every kind (none, within a block, past max_gap), counts 1..40. */
runs_t random_runs(std::mt19937_64 &rng, uint64_t size, size_t n)
{
    runs_t runs;
    uint64_t at = rng() % 64;

    for (size_t i = 0; i < n && at < size; i++) {
        ps_extent_run_t r;
        r.off = at;
        r.len = 1 + rng() % (rng() % 4 == 0 ? 300 : 20);
        r.stride = r.len + (rng() % 3 == 0 ? 0 : rng() % (rng() % 2 ? 16 : 700));
        r.count = 1 + rng() % 40;
        runs.push_back(r);
        at = ps_extent_run_end(&r) + rng() % (rng() % 3 == 0 ? 2 : 900);
    }
    return runs;
}

extents_t expand_runs(const runs_t &runs)
{
    extents_t ext;
    for (const ps_extent_run_t &r : runs) {
        for (uint64_t k = 0; k < r.count; k++) {
            ext.push_back({r.off + k * r.stride, r.len});
        }
    }
    return ext;
}

} // namespace

/* The run planner gives exactly the spans of the region planner on the
 * expanded regions, which check_plan verifies against the bitmap model. */
TEST(extent, plan_runs_against_expanded)
{
    static const uint64_t aligns[] = {1, 2, 8, 64, 512, 4096};
    static const uint64_t gaps[] = {0, 3, 100, 5000, UINT64_MAX};
    std::mt19937_64 rng(21);
    size_t total_spans = 0;

    for (int iter = 0; iter < 3000 && !HasFailure(); iter++) {
        runs_t runs = random_runs(rng, 1 + rng() % 40000, rng() % 12);
        extents_t ext = expand_runs(runs);
        uint64_t align = aligns[rng() % 6];
        uint64_t max_gap = gaps[rng() % 5];
        uint64_t max_io = rng() % 3 == 0 ? UINT64_MAX : align * (1 + rng() % 8) + rng() % 300;
        SCOPED_TRACE(::testing::Message() << "iteration " << iter);

        ASSERT_TRUE(ps_extent_runs_disjoint(runs.data(), runs.size()));
        size_t nspans = 0;
        check_plan(ext, align, max_gap, max_io, &nspans);

        std::vector<ps_io_span_t> want(ps_extent_plan_bound(ext.data(), ext.size(), align, max_io));
        want.resize(ps_extent_plan(ext.data(), ext.size(), align, max_gap, max_io, want.data()));
        size_t bound = ps_extent_plan_runs_bound(runs.data(), runs.size(), align, max_io);
        std::vector<ps_io_span_t> got(bound + 1);
        got[bound].off = 0xdeadbeef;
        size_t n = ps_extent_plan_runs(runs.data(), runs.size(), align, max_gap, max_io, got.data());
        ASSERT_LE(n, bound);
        ASSERT_EQ(0xdeadbeefu, got[bound].off) << "wrote past the bound";
        ASSERT_EQ(want.size(), n);
        for (size_t i = 0; i < n; i++) {
            ASSERT_EQ(want[i].off, got[i].off) << "span " << i;
            ASSERT_EQ(want[i].len, got[i].len) << "span " << i;
            ASSERT_EQ(want[i].holes, got[i].holes) << "span " << i;
            ASSERT_EQ(want[i].nregions, got[i].nregions) << "span " << i;
        }
        total_spans += n;
    }
    EXPECT_GT(total_spans, 3000u);
}

/* Merging interleaved runs (several batches' strided patterns over the same
 * blocks, ties and zero counts among them) lists their regions exactly as
 * expanding and sorting them does. */
TEST(extent, runs_merge_against_sort)
{
    std::mt19937_64 rng(45);
    size_t total = 0;

    for (int iter = 0; iter < 2000 && !HasFailure(); iter++) {
        runs_t runs;
        size_t nbatches = 1 + rng() % 4;
        for (size_t b = 0; b < nbatches; b++) {
            runs_t more = random_runs(rng, 1 + rng() % 20000, rng() % 8);
            if (rng() % 4 == 0 && !more.empty()) {
                more[rng() % more.size()].count = 0;
            }
            runs.insert(runs.end(), more.begin(), more.end());
        }
        if (rng() % 5 == 0 && !runs.empty()) {
            runs.push_back(runs[rng() % runs.size()]); /* the same run twice */
        }
        std::stable_sort(
            runs.begin(), runs.end(),
            [](const ps_extent_run_t &x, const ps_extent_run_t &y) { return x.off < y.off; });
        extents_t want = expand_runs(runs);
        ps_extent_sort(want.data(), want.size());
        extents_t got(want.size() + 1, ps_extent_t{0xdeadbeef, 0});
        SCOPED_TRACE(::testing::Message() << "iteration " << iter);

        ASSERT_EQ(want.size(), ps_extent_runs_merge(runs.data(), runs.size(), got.data()));
        ASSERT_EQ(0xdeadbeefu, got[want.size()].off) << "wrote past the regions";
        for (size_t i = 0; i < want.size(); i++) {
            ASSERT_EQ(want[i].off, got[i].off) << "region " << i;
            ASSERT_EQ(want[i].len, got[i].len) << "region " << i;
        }
        total += want.size();
    }
    EXPECT_GT(total, 100000u);
    ps_extent_run_t none;
    EXPECT_EQ(0u, ps_extent_runs_merge(&none, 0, NULL));
}

TEST(extent, runs_disjoint)
{
    runs_t ok = {{0, 8, 16, 4}, {56, 8, 8, 1}, {64, 1, 1, 1}};
    EXPECT_TRUE(ps_extent_runs_disjoint(ok.data(), ok.size()));
    runs_t interleaved = {{0, 8, 16, 4}, {8, 8, 16, 4}};
    EXPECT_FALSE(ps_extent_runs_disjoint(interleaved.data(), interleaved.size()));
    runs_t unsorted = {{100, 8, 16, 1}, {0, 8, 16, 1}};
    EXPECT_FALSE(ps_extent_runs_disjoint(unsorted.data(), unsorted.size()));
}

/* A run of a million 8-byte regions (8 MiB of data in 16 MiB) plans into
 * 16 one-MiB spans with holes and counts every region, from one entry. */
TEST(extent, plan_run_of_a_million_regions)
{
    ps_extent_run_t run = {0, 8, 16, 1u << 20};
    auto t0 = std::chrono::steady_clock::now();
    size_t bound = ps_extent_plan_runs_bound(&run, 1, 4096, 1 << 20);
    std::vector<ps_io_span_t> spans(bound);
    size_t n = ps_extent_plan_runs(&run, 1, 4096, 4096, 1 << 20, spans.data());
    RecordProperty("plan_ms", elapsed_ms(t0));
    ASSERT_EQ(16u, n);
    EXPECT_LE(bound, 4096u);
    uint64_t regions = 0;
    for (size_t i = 0; i < n; i++) {
        EXPECT_EQ(i << 20, spans[i].off);
        EXPECT_EQ(1u << 20, spans[i].len);
        EXPECT_EQ(1u, spans[i].holes);
        regions += spans[i].nregions;
    }
    EXPECT_EQ(1u << 20, regions);
}

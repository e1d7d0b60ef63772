/*
 * Region lists as strided runs (lib/psc_runs.c): pstripe_runs_append
 * builds runs one region at a time, pstripe_runs_regions expands them.
 * Checked against the model that matters to the I/O calls: the file bytes
 * the list names, in order, are the same before and after.
 */
#include <gtest/gtest.h>

#include <random>
#include <vector>

extern "C" {
#include "pstripe.h"
}

namespace {

typedef std::vector<pstripe_region_t> Regions;

std::vector<uint64_t> bytes_of(const Regions &regions)
{
    std::vector<uint64_t> out;

    for (const pstripe_region_t &r : regions) {
        for (uint64_t b = 0; b < r.length; b++) {
            out.push_back(r.offset + b);
        }
    }
    return out;
}

std::vector<pstripe_run_t> runs_of(const Regions &regions)
{
    std::vector<pstripe_run_t> runs(regions.size() + 1);
    size_t n = 0;

    for (const pstripe_region_t &r : regions) {
        pstripe_runs_append(runs.data(), &n, r.offset, r.length);
    }
    runs.resize(n);
    return runs;
}

Regions expand(const std::vector<pstripe_run_t> &runs)
{
    uint64_t total = 0;

    for (const pstripe_run_t &r : runs) {
        total += r.count;
    }
    Regions out(total);
    pstripe_runs_regions(runs.data(), runs.size(), out.data());
    return out;
}

TEST(Runs, VectorIsOneRun)
{
    Regions regions;

    for (uint64_t i = 0; i < 1000; i++) {
        regions.push_back({100 + i * 16, 8});
    }
    std::vector<pstripe_run_t> runs = runs_of(regions);
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].offset, 100u);
    EXPECT_EQ(runs[0].length, 8u);
    EXPECT_EQ(runs[0].stride, 16u);
    EXPECT_EQ(runs[0].count, 1000u);
    EXPECT_EQ(expand(runs).size(), 1000u);
    EXPECT_EQ(bytes_of(expand(runs)), bytes_of(regions));
}

TEST(Runs, ContiguousPiecesJoin)
{
    Regions regions = {{0, 8}, {8, 8}, {16, 100}, {116, 4}};
    std::vector<pstripe_run_t> runs = runs_of(regions);

    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].offset, 0u);
    EXPECT_EQ(runs[0].length, 120u);
    EXPECT_EQ(runs[0].count, 1u);
}

TEST(Runs, EmptyAndBackwardRegions)
{
    Regions regions = {{50, 0}, {64, 8}, {32, 8}, {16, 8}, {64, 8}, {80, 0}, {72, 8}};
    std::vector<pstripe_run_t> runs = runs_of(regions);
    Regions nonzero;

    for (const pstripe_region_t &r : regions) {
        if (r.length > 0) {
            nonzero.push_back(r);
        }
    }
    EXPECT_EQ(bytes_of(expand(runs)), bytes_of(nonzero));
    EXPECT_EQ(runs_of({}).size(), 0u);
    EXPECT_EQ(runs_of({{7, 0}}).size(), 0u);
}

/* Random lists: regular stretches, irregular gaps and lengths, overlaps,
 * backward steps. */
TEST(Runs, RandomListsKeepTheirBytes)
{
    std::mt19937_64 rng(8);

    for (int trial = 0; trial < 2000; trial++) {
        Regions regions;
        uint64_t off = rng() % 64;
        size_t n = 1 + rng() % 40;

        for (size_t i = 0; i < n; i++) {
            uint64_t len = rng() % 5 == 0 ? 0 : 1 + rng() % 3 * 4;
            regions.push_back({off, len});
            switch (rng() % 4) {
            case 0:
                off += len; /* contiguous */
                break;
            case 1:
                off += 16; /* a stride */
                break;
            case 2:
                off += rng() % 40; /* a gap, or an overlap */
                break;
            default:
                off = off > 20 ? off - 20 : off + 3; /* backward */
            }
        }
        std::vector<pstripe_run_t> runs = runs_of(regions);
        size_t nonzero = 0;
        for (const pstripe_region_t &r : regions) {
            nonzero += r.length > 0;
        }
        ASSERT_LE(runs.size(), nonzero);
        for (const pstripe_run_t &r : runs) {
            ASSERT_GT(r.length, 0u);
            ASSERT_GE(r.count, 1u);
            ASSERT_TRUE(r.count == 1 || r.stride > r.length) << "trial " << trial;
        }
        ASSERT_EQ(bytes_of(expand(runs)), bytes_of(regions)) << "trial " << trial;
    }
}

} // namespace

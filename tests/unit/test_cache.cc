/*
 * The server's cache (server/pss_cache.c) lending its memory to replies and
 * reading ahead into it: bytes lent to a reply never change until it gives
 * them back (not through a drop and a put, nor an eviction, nor a put over
 * them), and a read into the cache keeps its bytes only if nothing dropped
 * them while it ran. The server's use of it is tested with daemons
 * (ServerCache in tests/integration).
 */
#include <gtest/gtest.h>

#include <vector>

#include "cache_box.h"
#include "huge_pages.h"

namespace {

const uint64_t K = 1024, M = 1024 * K;

std::vector<uint8_t> bytes(uint64_t len, uint8_t seed)
{
    std::vector<uint8_t> v(len);
    for (uint64_t i = 0; i < len; i++) {
        v[i] = (uint8_t)(seed + i * 7 + i / 4096);
    }
    return v;
}

struct Cache : ::testing::Test {
    cache_box *box = nullptr;
    void start(uint64_t budget)
    {
        box = cache_box_new(budget);
        ASSERT_NE(box, nullptr);
    }
    void TearDown() override
    {
        if (box != nullptr) {
            cache_box_free(box);
        }
    }
    bool holds(int obj, uint64_t off, const std::vector<uint8_t> &want)
    {
        std::vector<uint8_t> got(want.size());
        return cache_box_get(box, obj, off, want.size(), got.data()) && got == want;
    }
};

// The cache's memory is on 2 MiB pages where the system has transparent
// huge pages: with 4 KiB pages the servers spent a quarter more CPU on the
// same writes and reads (doc/journal/issue-8.md, session 31).
TEST_F(Cache, MemoryIsOnHugePagesWhereTheSystemHasThem)
{
    if (!thp_enabled()) {
        GTEST_SKIP() << "transparent huge pages are off here";
    }
    start(8 * M);
    std::vector<uint8_t> a = bytes(4 * M, 5);
    cache_box_put(box, 0, 0, a.size(), a.data());
    void *pin = nullptr;
    const uint8_t *lent = cache_box_lend(box, 0, 0, 64 * K, &pin);
    ASSERT_NE(lent, nullptr);
    EXPECT_GE(huge_kb(lent), 2048);
    cache_box_unpin(box, pin);
}

// The warm thread faults the memory in (and has the kernel read a byte of
// each page) while workers use it: that changes no byte, over the whole
// memory or a piece that starts inside a granule and runs past its end.
TEST_F(Cache, FaultingInChangesNoByte)
{
    start(8 * M);
    std::vector<uint8_t> a = bytes(3 * M + 512, 3), b = bytes(2 * M, 9);
    cache_box_put(box, 0, 0, a.size(), a.data());
    cache_box_put(box, 1, 4 * M, b.size(), b.data());
    void *pin = nullptr;
    const uint8_t *lent = cache_box_lend(box, 1, 4 * M, 64 * K, &pin);
    ASSERT_NE(lent, nullptr);
    std::vector<uint8_t> before(lent, lent + 64 * K);

    EXPECT_TRUE(cache_box_prefault(box, 0, 8 * M));
    EXPECT_TRUE(cache_box_prefault(box, 1 * M + 4 * K, 100 * M));
    EXPECT_TRUE(cache_box_prefault(box, 100 * M, 4 * K)); // past the end: nothing
    EXPECT_TRUE(holds(0, 0, a));
    EXPECT_TRUE(holds(1, 4 * M, b));
    EXPECT_EQ(std::vector<uint8_t>(lent, lent + 64 * K), before);
    cache_box_unpin(box, pin);
}

TEST_F(Cache, LentBytesOutliveADropAndAPut)
{
    start(4 * M);
    std::vector<uint8_t> a = bytes(M, 1), b = bytes(4 * K, 2);
    cache_box_put(box, 0, 0, M, a.data());
    void *pin = nullptr;
    const uint8_t *lent = cache_box_lend(box, 0, 0, M, &pin);
    ASSERT_NE(lent, nullptr);
    cache_box_drop(box, 0, 0, 4 * K); /* a write of the first block */
    cache_box_put(box, 0, 0, 4 * K, b.data());
    EXPECT_EQ(memcmp(lent, a.data(), M), 0);
    EXPECT_TRUE(holds(0, 0, b));
    EXPECT_FALSE(cache_box_get(box, 0, 4 * K, 4 * K, nullptr)); /* the rest went with it */
    cache_box_unpin(box, pin);
}

TEST_F(Cache, OnlyKeptBytesInOneGranuleAreLent)
{
    start(4 * M);
    std::vector<uint8_t> a = bytes(2 * M, 3);
    cache_box_put(box, 0, 0, 2 * M - 4 * K, a.data());
    void *pin = nullptr;
    EXPECT_EQ(cache_box_lend(box, 0, M - 4 * K, 8 * K, &pin), nullptr); /* two granules */
    EXPECT_EQ(cache_box_lend(box, 0, M, M, &pin), nullptr);             /* not all kept */
    const uint8_t *lent = cache_box_lend(box, 0, M + 512, 1000, &pin);
    ASSERT_NE(lent, nullptr);
    EXPECT_EQ(memcmp(lent, a.data() + M + 512, 1000), 0);
    cache_box_unpin(box, pin);
}

TEST_F(Cache, LentGranulesAreNotEvicted)
{
    start(4 * M);
    std::vector<uint8_t> a = bytes(M, 4), c = bytes(M, 5);
    cache_box_put(box, 0, 0, M, a.data());
    void *pin = nullptr;
    const uint8_t *lent = cache_box_lend(box, 0, 0, M, &pin);
    ASSERT_NE(lent, nullptr);
    for (uint64_t off = 0; off < 16 * M; off += M) { /* four times the budget */
        cache_box_put(box, 1, off, M, c.data());
    }
    EXPECT_EQ(memcmp(lent, a.data(), M), 0);
    EXPECT_TRUE(holds(0, 0, a));
    EXPECT_TRUE(holds(1, 15 * M, c));
    cache_box_unpin(box, pin);
    for (uint64_t off = 0; off < 16 * M; off += M) { /* now it may go */
        cache_box_put(box, 1, off, M, c.data());
    }
    EXPECT_FALSE(cache_box_get(box, 0, 0, M, nullptr));
}

TEST_F(Cache, APutLeavesLentBytesAlone)
{
    start(4 * M);
    std::vector<uint8_t> a = bytes(64 * K, 6), c = bytes(128 * K, 7);
    cache_box_put(box, 0, 0, 64 * K, a.data());
    void *pin = nullptr;
    const uint8_t *lent = cache_box_lend(box, 0, 0, 64 * K, &pin);
    ASSERT_NE(lent, nullptr);
    cache_box_put(box, 0, 0, 128 * K, c.data());
    EXPECT_EQ(memcmp(lent, a.data(), 64 * K), 0);
    EXPECT_TRUE(holds(0, 64 * K, std::vector<uint8_t>(c.begin() + 64 * K, c.end())));
    cache_box_unpin(box, pin);
}

TEST_F(Cache, AFillIsKeptUnlessDroppedMeanwhile)
{
    start(4 * M);
    void *pin = nullptr;
    uint8_t *dst = cache_box_fill(box, 0, M, 64 * K, &pin);
    ASSERT_NE(dst, nullptr);
    std::vector<uint8_t> x = bytes(64 * K, 8);
    memcpy(dst, x.data(), x.size()); /* the disk read */
    /* not kept before it is done */
    EXPECT_FALSE(cache_box_get(box, 0, M, 64 * K, nullptr));
    cache_box_filled(box, pin, M, 64 * K, 1);
    EXPECT_TRUE(holds(0, M, x));

    dst = cache_box_fill(box, 0, 2 * M, 64 * K, &pin);
    ASSERT_NE(dst, nullptr);
    memcpy(dst, x.data(), x.size());
    cache_box_drop(box, 0, 2 * M, 2 * M + 4 * K); /* a write came in between */
    cache_box_filled(box, pin, 2 * M, 64 * K, 1);
    EXPECT_FALSE(cache_box_get(box, 0, 2 * M, 64 * K, nullptr));

    dst = cache_box_fill(box, 0, 3 * M, 64 * K, &pin); /* a failed read */
    ASSERT_NE(dst, nullptr);
    cache_box_filled(box, pin, 3 * M, 64 * K, 0);
    EXPECT_FALSE(cache_box_get(box, 0, 3 * M, 64 * K, nullptr));
}

/* A write laid out in the granule (pss_span_in_cache): while the disk
 * write runs, neither the old kept bytes nor the new are served; after it
 * the new are kept if it succeeded, and none if it failed. */
TEST_F(Cache, AWriteFromTheGranuleKeepsItsBytesOnlyOnceWritten)
{
    start(4 * M);
    std::vector<uint8_t> old_bytes = bytes(64 * K, 3), new_bytes = bytes(64 * K, 4);
    for (int ok = 0; ok <= 1; ok++) {
        uint64_t off = (uint64_t)ok * M + 8 * K;
        cache_box_put(box, 0, off, 64 * K, old_bytes.data());
        ASSERT_TRUE(holds(0, off, old_bytes));
        void *pin = nullptr;
        uint8_t *dst = cache_box_fill(box, 0, off, 64 * K, &pin);
        ASSERT_NE(dst, nullptr);
        memcpy(dst, new_bytes.data(), new_bytes.size()); /* the regions */
        EXPECT_FALSE(cache_box_get(box, 0, off, 64 * K, nullptr)) << "ok " << ok;
        cache_box_filled(box, pin, off, 64 * K, ok); /* the disk write's result */
        if (ok) {
            EXPECT_TRUE(holds(0, off, new_bytes));
        } else {
            EXPECT_FALSE(cache_box_get(box, 0, off, 4 * K, nullptr));
        }
    }
}

TEST_F(Cache, NoFillIntoALentGranule)
{
    start(4 * M);
    std::vector<uint8_t> a = bytes(64 * K, 9);
    cache_box_put(box, 0, 0, 64 * K, a.data());
    void *lend_pin = nullptr, *fill_pin = nullptr;
    ASSERT_NE(cache_box_lend(box, 0, 0, 64 * K, &lend_pin), nullptr);
    EXPECT_EQ(cache_box_fill(box, 0, 64 * K, 64 * K, &fill_pin), nullptr);
    EXPECT_EQ(cache_box_fill(box, 0, M - 4 * K, 8 * K, &fill_pin), nullptr); /* two granules */
    cache_box_unpin(box, lend_pin);
    uint8_t *dst = cache_box_fill(box, 0, 64 * K, 64 * K, &fill_pin);
    ASSERT_NE(dst, nullptr);
    cache_box_filled(box, fill_pin, 64 * K, 64 * K, 0);
}

TEST_F(Cache, ADroppedLentGranuleIsReusedOnceGivenBack)
{
    start(M); /* one granule */
    std::vector<uint8_t> a = bytes(M, 10), c = bytes(M, 11);
    cache_box_put(box, 0, 0, M, a.data());
    void *pin = nullptr;
    const uint8_t *lent = cache_box_lend(box, 0, 0, M, &pin);
    ASSERT_NE(lent, nullptr);
    cache_box_drop(box, 0, 0, UINT64_MAX); /* the object closed */
    cache_box_put(box, 1, 0, M, c.data()); /* no granule to spare */
    EXPECT_FALSE(cache_box_get(box, 1, 0, M, nullptr));
    EXPECT_EQ(memcmp(lent, a.data(), M), 0);
    cache_box_unpin(box, pin);
    cache_box_put(box, 1, 0, M, c.data());
    EXPECT_TRUE(holds(1, 0, c));
}

TEST_F(Cache, CleanupWithRepliesStillOut)
{
    start(2 * M);
    std::vector<uint8_t> a = bytes(M, 12);
    cache_box_put(box, 0, 0, M, a.data());
    void *pin = nullptr;
    ASSERT_NE(cache_box_lend(box, 0, 0, M, &pin), nullptr);
    cache_box_drop(box, 0, 0, UINT64_MAX); /* on the orphans' list */
    cache_box_put(box, 0, 0, M, a.data());
    ASSERT_NE(cache_box_lend(box, 0, 0, M, &pin), nullptr); /* still in the table */
    /* TearDown frees both (the server stops with sends out) */
}

} // namespace

/*
 * Memory for I/O buffers (lib/psc_mem.c, pstripe_buffer_alloc): small sizes
 * from malloc, from 1 MiB up whole 2 MiB pieces on a 2 MiB boundary,
 * backed by huge pages where transparent huge pages are enabled, and
 * unmapped whole by pstripe_buffer_free.
 */
#include <gtest/gtest.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

extern "C" {
#include "pstripe.h"
}

#include "huge_pages.h"

namespace {

const size_t K = 1024, M = 1024 * K, HUGE = 2 * M;

bool mapped(const void *p)
{
    unsigned char vec;
    uintptr_t page = reinterpret_cast<uintptr_t>(p) & ~(uintptr_t)4095;

    return mincore(reinterpret_cast<void *>(page), 4096, &vec) == 0;
}

} // namespace

TEST(BufferAlloc, SmallSizesComeWholeFromTheHeap)
{
    for (size_t size : {(size_t)0, (size_t)1, 100 * K, M - 1}) {
        size_t cap = 12345;
        char *p = static_cast<char *>(pstripe_buffer_alloc(size, &cap));
        ASSERT_NE(p, nullptr) << size;
        EXPECT_EQ(cap, size);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
        memset(p, 0x5a, size);
        pstripe_buffer_free(p);
    }
    pstripe_buffer_free(nullptr);
}

TEST(BufferAlloc, LargeSizesAreWholeHugePiecesOnTheirBoundary)
{
    for (size_t size : {M, M + 1, HUGE, 3 * M, 8 * M + 4 * K}) {
        size_t cap = 0;
        char *p = static_cast<char *>(pstripe_buffer_alloc(size, &cap));
        ASSERT_NE(p, nullptr) << size;
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % HUGE, 0u) << size;
        EXPECT_EQ(cap % HUGE, 0u) << size;
        EXPECT_GE(cap, size);
        EXPECT_LT(cap - size, HUGE) << size;
        memset(p, 0xa5, cap); /* all of it is usable */
        EXPECT_EQ(p[cap - 1], (char)0xa5);
        pstripe_buffer_free(p);
        /* the buffer and its header page are gone, not leaked */
        EXPECT_FALSE(mapped(p)) << size;
        EXPECT_FALSE(mapped(p + cap - 1)) << size;
        EXPECT_FALSE(mapped(p - 1)) << size;
    }
}

TEST(BufferAlloc, LargeBuffersGetHugePagesWhereTheSystemHasThem)
{
    if (!thp_enabled()) {
        GTEST_SKIP() << "transparent huge pages are off here";
    }
    size_t cap = 0;
    char *p = static_cast<char *>(pstripe_buffer_alloc(4 * M, &cap));
    ASSERT_NE(p, nullptr);
    for (size_t i = 0; i < cap; i += 4096) {
        p[i] = 1;
    }
    /* the mapping may have neighbours merged into it: at least one piece */
    EXPECT_GE(huge_kb(p), 2048);
    pstripe_buffer_free(p);
}

TEST(BufferAllocDeathTest, ForeignPointerIsNamedNotFreed)
{
    /* a pointer into memory of the caller's own, with 64 bytes in front */
    char *mine = static_cast<char *>(calloc(1, 4096));
    ASSERT_NE(mine, nullptr);
    EXPECT_DEATH(pstripe_buffer_free(mine + 64), "not made by pstripe_buffer_alloc");
    free(mine);
}

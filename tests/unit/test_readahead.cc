/*
 * The server's read-ahead policy (server/pss_readahead.c): when a stream of
 * forward reads asks for a window, when it has enough ahead, reads that are
 * not streams, and a read-ahead that could not start, which the stream's
 * next read must ask for again. The policy only: the server's reads are
 * tested with daemons (ServerReadAhead in tests/integration).
 */
#include <gtest/gtest.h>

extern "C" {
#include "pss_readahead.h"
}

namespace {

const uint64_t K = 1024, M = 1024 * K, WIN = 4 * M, ALIGN = 4 * K, SIZE = 64 * M;

struct ReadAheadPolicy : ::testing::Test {
    pss_ra_t ra;
    uint64_t from = 0, to = 0;
    void SetUp() override
    {
        pss_ra_reset(&ra);
    }
    int note(uint64_t lo, uint64_t hi, int kept = 1)
    {
        return pss_ra_note(&ra, WIN, ALIGN, SIZE, lo, hi, kept, &from, &to);
    }
};

} // namespace

TEST_F(ReadAheadPolicy, SecondForwardReadAsksForAWindowOnce)
{
    EXPECT_EQ(note(0, 128 * K), 0); /* one read is not a stream */
    ASSERT_EQ(note(128 * K, 256 * K), 1);
    EXPECT_EQ(from, 256 * K);
    EXPECT_EQ(to, 256 * K + WIN);
    EXPECT_EQ(note(256 * K, 384 * K), 0); /* the window is ahead of it */
}

TEST_F(ReadAheadPolicy, ReadsThatAreNotStreamsAskForNothing)
{
    EXPECT_EQ(note(0, 128 * K, 0), 0); /* not kept: a client's large stream */
    EXPECT_EQ(note(128 * K, 256 * K, 0), 0);
    EXPECT_EQ(pss_ra_note(&ra, 0, ALIGN, SIZE, 256 * K, 384 * K, 1, &from, &to), 0); /* off */
    ASSERT_EQ(note(SIZE - 256 * K, SIZE - 128 * K), 0);
    ASSERT_EQ(note(SIZE - 128 * K, SIZE), 0); /* nothing below the size to read */
}

TEST_F(ReadAheadPolicy, WindowStopsAtTheObjectsSize)
{
    note(SIZE - 1024 * K, SIZE - 896 * K);
    ASSERT_EQ(note(SIZE - 896 * K, SIZE - 768 * K), 1);
    EXPECT_EQ(to, SIZE);
}

TEST_F(ReadAheadPolicy, ARefusedReadAheadIsAskedForAgain)
{
    note(0, 128 * K);
    ASSERT_EQ(note(128 * K, 256 * K), 1);
    pss_ra_stopped(&ra, from); /* no job started */
    ASSERT_EQ(note(256 * K, 384 * K), 1);
    EXPECT_EQ(from, 384 * K);
    EXPECT_EQ(to, 384 * K + WIN);
}

TEST_F(ReadAheadPolicy, TwoProcessesAlternatingChunksMakeOneStream)
{
    /* process 0 reads chunks 0, 2, 4, process 1 chunks 1, 3, 5, process 0
     * a chunk ahead: the reads behind the front neither ask nor restart */
    const uint64_t order[] = {0, 2, 1, 4, 3, 5};
    int asked = 0;
    for (uint64_t k : order) {
        asked += note(k * 256 * K, (k + 1) * 256 * K);
    }
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(from, 768 * K);
    EXPECT_EQ(to, 768 * K + WIN);
}

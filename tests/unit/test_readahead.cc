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

/* What a policy that skips random reads must still read ahead for (a
 * helper's review of such a change, reverted in session 83): HDF5-style
 * alternate chunks of 8 processes, the last one a round ahead, whose
 * reads alone end past the front (an eighth of the bytes, though every
 * byte is read). */
TEST_F(ReadAheadPolicy, EightProcessesAlternatingChunksOneAheadMakeAStream)
{
    const uint64_t c = 64 * K, P = 8;
    int asked = 0;
    for (uint64_t r = 0; r < 64; r++) {
        asked += note((r * P + P - 1) * c, (r * P + P) * c);
        for (uint64_t p = 0; p + 1 < P; p++) {
            asked += note((r * P + p) * c, (r * P + p + 1) * c);
        }
    }
    EXPECT_GE(asked, 1) << "32 MiB read by 8 processes together, nothing read ahead";
}

/* ... and records of a 4 KiB header and a 1 MiB body read in turn: the
 * bodies (one client's large reads, which the cache does not keep) are not
 * noted, and the headers' stream reads ahead, which serves the bodies. */
TEST_F(ReadAheadPolicy, HeadersBetweenLargeBodiesMakeAStream)
{
    const uint64_t rec = M + 4 * K;
    int asked = 0;
    for (uint64_t k = 0; k < 16; k++) {
        asked += note(k * rec / ALIGN * ALIGN, (k * rec + 4 * K + ALIGN - 1) / ALIGN * ALIGN);
        asked += note(k * rec + 4 * K, k * rec + rec, 0); /* the body: not kept */
    }
    EXPECT_GE(asked, 1);
}

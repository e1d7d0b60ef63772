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
        return pss_ra_note(&ra, WIN, ALIGN, SIZE, lo, hi, hi - lo, kept, &from, &to);
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
    EXPECT_EQ(pss_ra_note(&ra, 0, ALIGN, SIZE, 256 * K, 384 * K, 128 * K, 1, &from, &to),
              0); /* off */
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

TEST_F(ReadAheadPolicy, RandomReadsWithinAWindowOfEachOtherAskForNothing)
{
    /* IOR's random 47008-byte reads (-z): each lands within a window of a
     * stream's front now and then, which read 4 MiB ahead for it (the
     * servers read about 6 times the bytes asked for) */
    const uint64_t z = 47008, at[] = {10 * M, 13 * M, 14 * M + 300 * K, 17 * M, 20 * M + 5 * K};
    int asked = 0;
    auto read = [&](uint64_t lo) {
        return note(lo / ALIGN * ALIGN, (lo + z + ALIGN - 1) / ALIGN * ALIGN);
    };
    for (uint64_t lo : at) {
        asked += read(lo);
    }
    /* and many behind a front, then one past it: still scattered */
    for (uint64_t k = 0; k < 100; k++) {
        asked += read(17 * M + k * 29 * K);
    }
    asked += read(21 * M);
    EXPECT_EQ(asked, 0);
}

TEST_F(ReadAheadPolicy, StridedReadsOfAQuarterAreAStreamAndOfAnEighthNot)
{
    const uint64_t c = 64 * K;
    int asked = 0;
    for (uint64_t k = 0; k < 8; k++) { /* every 4th chunk: a quarter of the span */
        asked += note(k * 4 * c, k * 4 * c + c);
    }
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(from, 4 * c + c);
    pss_ra_reset(&ra);
    asked = 0;
    for (uint64_t k = 0; k < 8; k++) { /* every 8th: read ahead, 7 of 8 bytes unused */
        asked += note(k * 8 * c, k * 8 * c + c);
    }
    EXPECT_EQ(asked, 0);
}

TEST_F(ReadAheadPolicy, AJobOfReadsFarApartReadsNothingAhead)
{
    /* a server merges the batches of an object that arrive together into
     * one job, noted over its hull: two clients' random reads 40 MiB apart */
    const uint64_t z = 48 * K;
    EXPECT_EQ(note(10 * M, 10 * M + z), 0);
    EXPECT_EQ(pss_ra_note(&ra, WIN, ALIGN, SIZE, 12 * M, 52 * M, 2 * z, 1, &from, &to), 0);
    EXPECT_EQ(pss_ra_note(&ra, WIN, ALIGN, SIZE, 53 * M, 60 * M, 2 * z, 1, &from, &to), 0);
}

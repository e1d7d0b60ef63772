/*
 * The server's read-ahead policy (server/pss_readahead.c): when a stream
 * starts reading ahead and how its window grows, reads that are not
 * streams (random, sparse strides, one client's large reads), and a
 * read-ahead that could not start, which the stream's next read must ask
 * for again. The fixture plays the cache: a read is served from it when
 * what was asked for covers it. The policy only: the server's reads are
 * tested with daemons (ServerReadAhead in tests/integration).
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

extern "C" {
#include "pss_readahead.h"
}

namespace {

const uint64_t K = 1024, M = 1024 * K, WIN = 4 * M, ALIGN = 4 * K, SIZE = 64 * M;

struct ReadAheadPolicy : ::testing::Test {
    pss_ra_t ra;
    uint64_t from = 0, to = 0, size = SIZE;
    std::vector<std::pair<uint64_t, uint64_t>> asked; /* what was read ahead */
    uint64_t asked_bytes = 0, disk_reads = 0;
    void SetUp() override
    {
        pss_ra_reset(&ra);
    }
    bool cached(uint64_t lo, uint64_t hi) const
    {
        for (const auto &a : asked) {
            if (a.first <= lo && lo < a.second) {
                lo = a.second; /* (asked in order: the rest may be in a later one) */
            }
        }
        return lo >= hi;
    }
    /* A read of [lo, hi) (aligned out), kept by the cache or not, served
     * from what was read ahead if that covers it; 1 if it asked. */
    int note(uint64_t lo, uint64_t hi, bool kept = true, bool in_cache = false,
             bool scattered = false)
    {
        lo = lo / ALIGN * ALIGN;
        hi = (hi + ALIGN - 1) / ALIGN * ALIGN;
        bool hit = in_cache || cached(lo, hi);
        disk_reads += !hit;
        unsigned how = (kept ? PSS_RA_KEPT : 0) | (hit ? PSS_RA_CACHED : 0) |
                       (scattered ? PSS_RA_SCATTERED : 0);
        if (!pss_ra_note(&ra, WIN, ALIGN, size, lo, hi, how, &from, &to)) {
            return 0;
        }
        EXPECT_LT(from, to);
        EXPECT_TRUE(asked.empty() || from >= asked.back().second || from < asked.back().first)
            << "asked again for [" << from << ", " << to << ")";
        asked.emplace_back(from, to);
        asked_bytes += to - from;
        return 1;
    }
};

} // namespace

TEST_F(ReadAheadPolicy, SecondReadThatFollowsOnAsksAndTheWindowGrows)
{
    const uint64_t step = 128 * K;
    EXPECT_EQ(note(0, step), 0); /* one read is not a stream */
    ASSERT_EQ(note(step, 2 * step), 1);
    EXPECT_EQ(from, 2 * step);
    EXPECT_EQ(to, 2 * step + 2 * 2 * step); /* twice the two reads */
    uint64_t widest = 0;
    for (uint64_t off = 2 * step; off < 32 * M; off += step) {
        if (note(off, off + step)) {
            widest = std::max(widest, to - from);
        }
    }
    EXPECT_EQ(disk_reads, 2u) << "the stream's reads after the second came from the disk";
    EXPECT_GE(widest, WIN / 2) << "its window did not grow";
    EXPECT_LE(to, 32 * M + WIN) << "it read more than a window ahead";
}

TEST_F(ReadAheadPolicy, ReadsThatAreNotStreamsAskForNothing)
{
    EXPECT_EQ(note(0, 128 * K, false), 0); /* not kept: a client's large stream */
    EXPECT_EQ(note(128 * K, 256 * K, false), 0);
    EXPECT_EQ(note(256 * K, 384 * K, false), 0);
    EXPECT_EQ(pss_ra_note(&ra, 0, ALIGN, SIZE, 384 * K, 512 * K, PSS_RA_KEPT, &from, &to),
              0); /* off */
    ASSERT_EQ(note(SIZE - 256 * K, SIZE - 128 * K), 0);
    ASSERT_EQ(note(SIZE - 128 * K, SIZE), 0); /* nothing below the size to read */
}

TEST_F(ReadAheadPolicy, WindowStopsAtTheObjectsSize)
{
    note(SIZE - 384 * K, SIZE - 256 * K);
    ASSERT_EQ(note(SIZE - 256 * K, SIZE - 128 * K), 1);
    EXPECT_EQ(to, SIZE);
}

TEST_F(ReadAheadPolicy, ARefusedReadAheadIsAskedForAgain)
{
    note(0, 128 * K);
    ASSERT_EQ(note(128 * K, 256 * K), 1);
    pss_ra_stopped(&ra, ra.last, from); /* no job started */
    asked.clear();
    ASSERT_EQ(note(256 * K, 384 * K), 1);
    EXPECT_EQ(from, 384 * K);
    EXPECT_GE(to, 384 * K + 512 * K);
}

/* A read-ahead of max_io steps whose later step cannot start, after a job
 * finished by an earlier step's submission noted another stream's read:
 * the stream that asked is the one told (it was the stream noted last). */
TEST_F(ReadAheadPolicy, ARefusedReadAheadTellsTheStreamThatAsked)
{
    note(0, 128 * K);
    ASSERT_EQ(note(128 * K, 256 * K), 1);
    unsigned first = ra.last;
    uint64_t first_from = from;
    note(32 * M, 32 * M + 128 * K);
    ASSERT_EQ(note(32 * M + 128 * K, 32 * M + 256 * K), 1);
    ASSERT_NE(ra.last, first);
    uint64_t other_ahead = ra.s[ra.last].ahead;
    pss_ra_stopped(&ra, first, first_from);
    EXPECT_EQ(ra.s[first].ahead, first_from);
    EXPECT_EQ(ra.s[ra.last].ahead, other_ahead) << "another stream was told";
}

TEST_F(ReadAheadPolicy, TwoProcessesAlternatingChunksMakeOneStream)
{
    /* process 0 reads chunks 0, 2, 4, process 1 chunks 1, 3, 5, process 0
     * a chunk ahead: chunk 2 follows on from chunk 0 (one chunk past it),
     * and what is read ahead serves both */
    const uint64_t c = 256 * K;
    EXPECT_EQ(note(0, c), 0);
    ASSERT_EQ(note(2 * c, 3 * c), 1);
    EXPECT_EQ(from, 3 * c);
    EXPECT_EQ(note(c, 2 * c), 0);
    for (uint64_t k = 3; k + 1 < 128; k += 2) {
        note((k + 1) * c, (k + 2) * c);
        note(k * c, (k + 1) * c);
    }
    EXPECT_EQ(disk_reads, 3u) << "of 128 chunks";
}

/* HDF5-style alternate chunks of 8 processes, the last one a round ahead,
 * whose reads alone end past the front: the chunks behind the front are
 * what the read-ahead serves (a helper's review of a policy reverted in
 * session 83, which read nothing ahead here). */
TEST_F(ReadAheadPolicy, EightProcessesAlternatingChunksOneAheadMakeAStream)
{
    const uint64_t c = 64 * K, P = 8;
    for (uint64_t r = 0; r < 64; r++) {
        note((r * P + P - 1) * c, (r * P + P) * c);
        for (uint64_t p = 0; p + 1 < P; p++) {
            note((r * P + p) * c, (r * P + p + 1) * c);
        }
    }
    EXPECT_GE(asked_bytes, 28 * M) << "32 MiB read by 8 processes together";
    EXPECT_LE(disk_reads, 24u) << "of 512 reads";
}

/* Records of a 4 KiB header and a 1 MiB body read in turn: the bodies (one
 * client's large reads, which the cache does not keep) count when they
 * follow on, or were read ahead, and the read-ahead serves them. */
TEST_F(ReadAheadPolicy, HeadersBetweenLargeBodiesMakeAStream)
{
    const uint64_t rec = M + 4 * K;
    uint64_t bodies_cached = 0;
    for (uint64_t k = 0; k < 16; k++) {
        note(k * rec, k * rec + 4 * K);
        bodies_cached += cached(k * rec + 4 * K, k * rec + rec);
        note(k * rec + 4 * K, k * rec + rec, false); /* the body: not kept */
    }
    EXPECT_GE(asked.size(), 1u);
    EXPECT_GE(bodies_cached, 12u) << "of 16 bodies";
}

/* IOR's random 47008-byte reads (-z): before, a read within a window of a
 * stream's front started a 4 MiB window now and then, and the servers read
 * 6 times the bytes asked for. */
TEST_F(ReadAheadPolicy, RandomReadsReadLittleAhead)
{
    const uint64_t z = 47008, n = 4000;
    unsigned seed = 8;
    size = 256 * M;
    for (uint64_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        uint64_t lo = (uint64_t)(seed >> 4) % (size / z) * z;
        note(lo, lo + z);
    }
    printf("%llu random reads of %llu bytes: %zu read-aheads, %llu bytes\n", (unsigned long long)n,
           (unsigned long long)z, asked.size(), (unsigned long long)asked_bytes);
    EXPECT_LE(asked_bytes, n * z / 10);
}

/* Random small reads: a read a few of its lengths after one of the last 8
 * reads lands there by chance, more often the smaller the object; it
 * keeps no stride, so it starts no stream (a fixed 64 KiB gap asked 34%
 * of 4 KiB reads' bytes over 64 MiB, and 17% of 32 KiB reads'). */
TEST_F(ReadAheadPolicy, RandomSmallReadsReadLittleAhead)
{
    for (uint64_t z : {4 * K, 16 * K, 32 * K}) {
        for (uint64_t obj : {64 * M, 256 * M}) {
            const uint64_t n = 20000;
            unsigned seed = 11;
            SetUp();
            asked.clear();
            asked_bytes = 0;
            size = obj;
            for (uint64_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                uint64_t lo = (uint64_t)(seed >> 4) % (size / z) * z;
                note(lo, lo + z);
            }
            printf("%llu random %llu KiB reads of %llu MiB: %zu read-aheads, %llu KiB\n",
                   (unsigned long long)n, (unsigned long long)(z / K),
                   (unsigned long long)(obj / M), asked.size(),
                   (unsigned long long)(asked_bytes / K));
            EXPECT_LE(asked_bytes, n * z / 10) << z / K << " KiB reads of " << obj / M << " MiB";
        }
    }
}

/* Records of a 1 MiB body (one client's large read, which the cache does
 * not keep) and a 4 KiB trailer 16 KiB after it, read in random order:
 * the trailer keeps no stride of the body (a first window from the two
 * reads' bytes read 4 MiB ahead of every trailer). */
TEST_F(ReadAheadPolicy, ASmallReadShortlyAfterALargeOneAsksForNothing)
{
    const uint64_t rec = M + 64 * K, n = 48;
    unsigned seed = 5;
    for (uint64_t i = 0; i < 4 * n; i++) {
        seed = seed * 1103515245u + 12345u;
        uint64_t r = (uint64_t)(seed >> 4) % n * rec;
        note(r, r + M, false);
        note(r + M + 16 * K, r + M + 20 * K);
    }
    EXPECT_EQ(asked_bytes, 0u);
}

TEST_F(ReadAheadPolicy, StridedReadsOfAnEighthAskForNothing)
{
    const uint64_t c = 64 * K;
    for (uint64_t k = 0; k < 64; k++) { /* 7 of 8 bytes read ahead would be unused */
        note(k * 8 * c, k * 8 * c + c);
    }
    EXPECT_EQ(asked_bytes, 0u);
}

TEST_F(ReadAheadPolicy, StridedReadsOfAHalfAreAStream)
{
    const uint64_t c = 64 * K;
    for (uint64_t k = 0; k < 64; k++) {
        note(k * 2 * c, k * 2 * c + c);
    }
    EXPECT_LE(disk_reads, 4u) << "of 64";
}

/* One reader taking one small chunk of every 3, 4 or 8: reading the gaps
 * through costs less than a disk read per chunk (fio on this host, direct,
 * queue depth 1: 4 KiB 33-40 us, 64 KiB 52-54, 128 KiB 74), so a read that
 * keeps a stride, at most 7 times its length and PSS_RA_GAP past a last
 * read, follows on from it (before, each of these reads went to disk). */
TEST_F(ReadAheadPolicy, SmallChunksOfAThirdOrAQuarterAreAStream)
{
    const uint64_t cases[][2] = {{4 * K, 3}, {4 * K, 4}, {16 * K, 3}, {16 * K, 4}, {8 * K, 8}};
    for (const auto &cs : cases) {
        const uint64_t c = cs[0], k = cs[1];
        SetUp();
        asked.clear();
        asked_bytes = disk_reads = 0;
        for (uint64_t i = 0; i < 256; i++) {
            note(i * k * c, i * k * c + c);
        }
        printf("chunks of %llu KiB, one in %llu: %llu of 256 from disk, %llu KiB asked\n",
               (unsigned long long)(c / K), (unsigned long long)k, (unsigned long long)disk_reads,
               (unsigned long long)(asked_bytes / K));
        EXPECT_LE(disk_reads, 8u) << "of 256, chunks of " << c << " one in " << k;
        EXPECT_LE(asked_bytes, 256 * k * c + WIN) << "chunks of " << c << " one in " << k;
    }
}

/* Chunks whose gaps cost more to read than a disk read of each, or more
 * than 7 times their bytes (one small chunk in 17 would read 17 times the
 * bytes it uses, which loses once the disk's bandwidth is the limit):
 * each is read alone, and nothing is read ahead. */
TEST_F(ReadAheadPolicy, ChunksFarApartAskForNothing)
{
    const uint64_t cases[][2] = {{32 * K, 4}, {64 * K, 3}, {M, 3}, {4 * K, 17}, {4 * K, 9}};
    for (const auto &cs : cases) {
        const uint64_t c = cs[0], k = cs[1];
        SetUp();
        asked.clear();
        asked_bytes = 0;
        for (uint64_t i = 0; i < 32; i++) {
            note(i * k * c, i * k * c + c);
        }
        EXPECT_EQ(asked_bytes, 0u) << "chunks of " << c << " one in " << k;
    }
}

/* A client's read cache walks a file in small reads and then in reads of
 * 1-2 MiB (IOR's 47008-byte sequential reads under MPICH): the window
 * never stays smaller than the reads that follow on, or none of them
 * would find its bytes read ahead. */
TEST_F(ReadAheadPolicy, ReadsThatOutgrowTheWindowAreReadAhead)
{
    uint64_t off = 0, late_disk = 0;
    size = 256 * M;
    for (uint64_t len : {48 * K, 48 * K}) {
        note(off, off + len);
        off += len;
    }
    for (uint64_t k = 0; k < 64; k++) {
        uint64_t len = k % 3 == 0 ? 2 * M : M;
        uint64_t before = disk_reads;
        note(off, off + len);
        late_disk += k >= 4 && disk_reads > before;
        off += len;
    }
    EXPECT_EQ(late_disk, 0u) << "of the last 60 reads";
}

/* A review's case (session 84): four processes reading alternate 64 KiB
 * chunks, each at its own pace (the arrivals a random interleaving of
 * their sequences, as independent MPI processes' reads are): a process
 * that runs ahead of the others reads past the stream's read-ahead, and
 * none of the last reads is its previous chunk's neighbour, so it follows
 * on from nothing; a stream with a window moves on for it. */
TEST_F(ReadAheadPolicy, FourProcessesAlternatingChunksAtTheirOwnPaceStayAhead)
{
    const uint64_t c = 64 * K, P = 4, R = 64 * M / (P * c);
    uint64_t pos[P] = {0, 0, 0, 0}, left = R * P;
    unsigned seed = 11;
    while (left > 0) {
        seed = seed * 1103515245u + 12345u;
        uint64_t p = (seed >> 8) % P;
        if (pos[p] >= R) {
            continue;
        }
        uint64_t k = pos[p]++ * P + p;
        left--;
        note(k * c, (k + 1) * c);
    }
    EXPECT_LE(disk_reads, 16u) << "of " << R * P << " reads";
}

/* Eight processes reading alternate chunks, each a round behind the one
 * before it (process 0 seven rounds ahead of process 7): the reads at the
 * front are process 0's alone, 8 chunks apart. */
TEST_F(ReadAheadPolicy, EightProcessesEachARoundBehindTheNextStayAhead)
{
    const uint64_t c = 64 * K, P = 8, R = 64 * M / (P * c);
    for (uint64_t t = 0; t < R + P; t++) {
        for (uint64_t p = 0; p < P; p++) {
            if (t >= p && t - p < R) {
                uint64_t k = (t - p) * P + p;
                note(k * c, (k + 1) * c);
            }
        }
    }
    EXPECT_LE(disk_reads, 32u) << "of " << R * P << " reads";
}

/* Five processes each reading its own part of a file (32 MiB apart) in
 * 48 KiB reads, in turn: more streams than PSS_RA_STREAMS, each read
 * starts its stream afresh and asks again for the window past its end,
 * most of which was read ahead already (a window not wholly in the cache
 * is read again). */
TEST_F(ReadAheadPolicy, FiveProcessesOwnPartsDoNotReadAheadAgain)
{
    const uint64_t c = 48 * K, P = 5, n = 8 * M / c;
    size = 256 * M;
    for (uint64_t k = 0; k < n; k++) {
        for (uint64_t p = 0; p < P; p++) {
            note(p * 32 * M + k * c, p * 32 * M + (k + 1) * c);
        }
    }
    printf("%llu reads of %llu bytes: %llu disk reads, %llu bytes read ahead\n",
           (unsigned long long)(n * P), (unsigned long long)c, (unsigned long long)disk_reads,
           (unsigned long long)asked_bytes);
    EXPECT_LE(asked_bytes, 2 * n * P * c) << "read ahead more than twice what was read";
}

/* HDF5's chunked reads: every H5Dread reads the chunk index again, nine
 * nodes some MiB apart, from the servers' cache, between the chunks of
 * four processes. Those reads took every stream's place and pushed the
 * chunks out of the last reads, and most chunks came from disk (found in
 * session 84, 4 processes' pstripe-h5bench -L chunked reads). */
TEST_F(ReadAheadPolicy, AnIndexReadFromTheCacheLeavesTheStreamAlone)
{
    const uint64_t c = 128 * K, P = 4, R = 96;
    size = 256 * M;
    for (uint64_t r = 0; r < R; r++) {
        for (uint64_t n = 0; n < 9; n++) {
            note(64 * M + n * 7 * M + r % 3 * ALIGN, 64 * M + n * 7 * M + r % 3 * ALIGN + ALIGN,
                 true, true);
        }
        for (uint64_t p = 0; p < P; p++) {
            note((r * P + p) * c, (r * P + p + 1) * c);
        }
    }
    EXPECT_LE(disk_reads, 16u) << "of " << R * P << " chunks";
}

/* Processes each reading its own part, 1-3 MiB apart (within a window of
 * one another), in turn or the last first: each read joins the stream
 * whose front it reaches, and each stream reads ahead after its second
 * read. A read within a window of any stream joined it before: the
 * processes' first reads all joined one stream, and of two processes 2 MiB
 * apart, the one whose read came second read everything from disk. */
TEST_F(ReadAheadPolicy, OwnPartsAFewMiBApartEachReadAhead)
{
    const uint64_t c = 48 * K;
    for (uint64_t P : {2, 4, 8}) {
        for (uint64_t part : {M, 2 * M, 3 * M}) {
            const uint64_t n = part / c;
            for (bool last_first : {false, true}) {
                pss_ra_reset(&ra);
                asked.clear();
                disk_reads = 0;
                for (uint64_t k = 0; k < n; k++) {
                    for (uint64_t i = 0; i < P; i++) {
                        uint64_t p = last_first ? P - 1 - i : i;
                        note(p * part + k * c, p * part + (k + 1) * c);
                    }
                }
                EXPECT_LE(disk_reads, 2 * P + 2)
                    << P << " processes " << part / K << " KiB apart"
                    << (last_first ? ", the last first" : "") << ": of " << n * P << " reads";
            }
        }
    }
}

TEST_F(ReadAheadPolicy, SmallReadsJustBehindAnotherStreamReadAhead)
{
    const uint64_t big = 52 * K, small = 4 * K, n = 64;
    uint64_t a = M;
    for (; a < M + 40 * big; a += big)
        note(a, a + big);
    uint64_t small_disk = 0;
    for (uint64_t k = 0; k < n; k++) {
        note(a, a + big);
        a += big;
        uint64_t before = disk_reads;
        note(k * small, (k + 1) * small);
        small_disk += disk_reads > before;
        printf("k=%llu %s last=%u:", (unsigned long long)k, disk_reads > before ? "DISK" : "hit",
               ra.last);
        for (int i = 0; i < 3; i++)
            printf(" [s%d end %llu ahead %llu mark %llu win %llu]", i,
                   (unsigned long long)ra.s[i].end / K, (unsigned long long)ra.s[i].ahead / K,
                   (unsigned long long)ra.s[i].mark / K, (unsigned long long)ra.s[i].window / K);
        printf("\n");
    }
    EXPECT_LE(small_disk, 4u) << "of " << n << " small reads";
}

/* Processes in turn each reading 2 MiB from a point 512 KiB past the one
 * before it (its part and its neighbours', as halos): a read reaches the
 * streams of the processes before it too, and joins the one whose front is
 * nearest. Joined to the first stream it reached, 4 processes' reads took
 * 25 disk reads, 8 processes' 58. */
TEST_F(ReadAheadPolicy, OverlappingSpansInTurnEachJoinTheirOwnStream)
{
    const uint64_t c = 48 * K, n = 2 * M / c;
    for (uint64_t P : {4, 8}) {
        pss_ra_reset(&ra);
        asked.clear();
        disk_reads = 0;
        for (uint64_t k = 0; k < n; k++) {
            for (uint64_t p = 0; p < P; p++) {
                note(p * 512 * K + k * c, p * 512 * K + (k + 1) * c);
            }
        }
        EXPECT_LE(disk_reads, 2 * P + 2) << P << " processes: of " << n * P << " reads";
    }
}

/* Processes reading alternate chunks, one of them 1-4 rounds ahead of the
 * others (a review's leftover, session 84): its reads run ahead of the
 * stream and the others' come behind it. With the old reach (any read
 * within read_ahead of a stream's front joined it), 8 processes with one 4
 * rounds ahead took 33 disk reads of 1,024. */
TEST_F(ReadAheadPolicy, OneProcessRoundsAheadOfTheOthers)
{
    const uint64_t c = 64 * K;
    for (uint64_t P : {4, 8}) {
        const uint64_t R = 64 * M / (P * c);
        for (uint64_t lead = 1; lead <= 4; lead++) {
            pss_ra_reset(&ra);
            asked.clear();
            disk_reads = 0;
            for (uint64_t t = 0; t < R + lead; t++) {
                if (t < R) {
                    note(t * P * c, (t * P + 1) * c);
                }
                for (uint64_t p = 1; t >= lead && p < P; p++) {
                    uint64_t k = (t - lead) * P + p;
                    note(k * c, (k + 1) * c);
                }
            }
            EXPECT_LE(disk_reads, 16u)
                << P << " processes, one " << lead << " rounds ahead: of " << R * P << " reads";
        }
    }
}

/* A stream of 48 KiB reads with a list read of 4-32 scattered 4 KiB pieces
 * elsewhere in the object between each two of its reads: the pieces
 * (PSS_RA_SCATTERED) neither start streams nor take the last reads. Noted
 * as plain reads, 8 or more of them pushed the stream's reads out of the
 * last PSS_RA_RECENT and all 64 came from disk; 4-7, 2. */
TEST_F(ReadAheadPolicy, ScatteredPiecesLeaveAStreamItsLastReads)
{
    size = 256 * M;
    for (uint64_t pieces : {4, 8, 32}) {
        pss_ra_reset(&ra);
        asked.clear();
        disk_reads = 0;
        unsigned seed = 3;
        uint64_t stream_disk = 0, pieces_asked = 0;
        for (uint64_t k = 0; k < 64; k++) {
            uint64_t before = disk_reads;
            note(k * 48 * K, (k + 1) * 48 * K);
            stream_disk += disk_reads > before;
            for (uint64_t r = 0; r < pieces; r++) {
                seed = seed * 1103515245u + 12345u;
                uint64_t lo = 64 * M + (uint64_t)(seed >> 8) % (128 * M / (4 * K)) * 4 * K;
                pieces_asked += note(lo, lo + 4 * K, true, false, true);
            }
        }
        EXPECT_LE(stream_disk, 3u) << pieces << " pieces between the stream's reads: of 64";
        EXPECT_EQ(pieces_asked, 0u) << "scattered pieces read ahead";
    }
}

/* Two small reads 16 KiB apart before each list read of scattered pieces
 * that keep their stride (4 KiB, 16 KiB apart): scattered pieces follow
 * on only within their own length, so they neither fill the last reads
 * nor start a stream. */
TEST_F(ReadAheadPolicy, ScatteredPiecesAfterSmallReadsAskForNothing)
{
    for (uint64_t r = 0; r < 64; r++) {
        uint64_t base = r * M;
        note(base, base + 4 * K);
        note(base + 16 * K, base + 20 * K);
        for (uint64_t p = 0; p < 16; p++) {
            uint64_t lo = base + 32 * K + p * 16 * K;
            note(lo, lo + 4 * K, true, false, true);
        }
    }
    EXPECT_EQ(asked_bytes, 0u);
}

/* A scattered piece that continues a stream moves it on (a stream's next
 * chunk read in a list read of far-apart pieces): the stream keeps reading
 * ahead. A piece that continues nothing is forgotten, so pieces of
 * successive scattered requests that follow on from each other start no
 * stream (a tile-by-tile walk along rows reads each row's piece from
 * disk: before, 8 of its rows could start streams, in place of others). */
TEST_F(ReadAheadPolicy, ScatteredPiecesThatContinueAStreamMoveItOn)
{
    const uint64_t c = 64 * K;
    note(0, c);
    note(c, 2 * c);
    for (uint64_t k = 2; k < 64; k++) {
        note(k * c, (k + 1) * c, true, false, true);
    }
    EXPECT_LE(disk_reads, 2u) << "of 64";
    pss_ra_reset(&ra);
    asked.clear();
    disk_reads = 0;
    for (uint64_t k = 0; k < 64; k++) {
        note(k * c, (k + 1) * c, true, false, true);
    }
    EXPECT_EQ(asked.size(), 0u) << "pieces that continue nothing started a stream";
}

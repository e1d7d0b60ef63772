/*
 * test_server_readahead.cc: the servers' read-ahead (server/pss_readahead.c,
 * pss_read_ahead in pss_job.c) through raw requests: forward reads against
 * a byte model with writes landing ahead, streams served from the cache,
 * streams merged into one job, processes at their own pace, and a stream
 * walking into bytes the cache holds, one reader of one small chunk in
 * three. Counters, no timings. The policy alone: tests/unit/test_readahead.cc.
 */
#include <gtest/gtest.h>

#include <algorithm>

#include "ps_cluster.h"
#include "test_server_raw.h"

using namespace ps_test;

namespace {

/* Start one server with args, connect c to it, and write object fid with
 * size bytes of payload_for(all, seed) (*model) in whole 1 MiB granules
 * (which the cache does not keep), one request each. */
::testing::AssertionResult written_object(ps_cluster &cluster, raw_client &c,
                                          const std::vector<std::string> &args, uint64_t fid,
                                          uint64_t size, uint8_t seed, std::vector<uint8_t> *model)
{
    const uint64_t mib = 1 << 20;
    if (!cluster.start(1, 1, args) || !c.connect(cluster.host(0), cluster.port(0))) {
        return ::testing::AssertionFailure() << "no server";
    }
    *model = payload_for({{0, size}}, seed);
    for (uint64_t off = 0; off < size; off += mib) {
        std::vector<ps_region_t> w = {{off, mib}};
        if (c.write(fid, w, std::vector<uint8_t>(&(*model)[off], &(*model)[off] + mib)).status() !=
            PS_OK) {
            return ::testing::AssertionFailure() << "write of 1 MiB at " << off;
        }
    }
    return ::testing::AssertionSuccess();
}

} // namespace

/*
 * A client walks an object forward in 128 KiB reads (a stream: the server
 * reads ahead into its cache) while writes, aligned and not (some staged),
 * land in the window being read ahead and behind it; every read is checked
 * against a byte model. Then the same walk without writes: most reads come
 * from what was read ahead (fewer disk reads than reads), and with
 * read_ahead=0 every read is a disk read. Counters, no timings.
 */
TEST(ServerReadAhead, ForwardReadsMatchTheModelWithWritesAhead)
{
    const uint64_t fid = 0x7779, mib = 1 << 20, size = 16 * mib, step = 128 * 1024;
    auto walk = [&](const char *ra, bool writes, ps_stats_rep_t *st) {
        ps_cluster cluster;
        raw_client c;
        std::vector<uint8_t> model;
        /* read-ahead in 4 MiB disk reads, which small writes overtake; the
         * cache holds a window, a step in flight and the reads' own
         * granules (12 MiB sometimes evicted read-ahead before its use: 26
         * or 34 disk reads in 1 run of 4-12, against 10) */
        ASSERT_TRUE(written_object(cluster, c,
                                   {"--set", "cache=16m", "--set", "max_io=4m", "--set", ra}, fid,
                                   size, 1, &model));
        ps_stats_rep_t before{};
        c.stats(&before);
        unsigned seed = 777;
        auto rnd = [&seed](uint64_t n) { return (seed = seed * 1103515245u + 12345u) / 7 % n; };
        uint64_t reads = 0;
        for (uint64_t pos = 0; pos + step <= size; pos += step, reads++) {
            if (writes) {
                /* ahead of the reader, where the read-ahead runs or will (it
                 * reads what was staged there), or behind the reader */
                uint64_t where = rnd(4);
                uint64_t off = (where == 0   ? rnd(pos + 1)
                                : where == 1 ? pos + 8 * mib + rnd(4 * mib)
                                             : pos + step + rnd(8 * mib)) %
                               size;
                uint64_t len = 1 + rnd(rnd(2) ? 600 : 96 * 1024);
                if (rnd(2)) {
                    off &= ~4095ull; /* aligned: written at once; unaligned: may be staged */
                    len = (len + 4095) & ~4095ull;
                }
                len = std::min(len, size - off);
                std::vector<ps_region_t> w = {{off, len}};
                std::vector<uint8_t> d = payload_for(w, (uint8_t)(reads + 2));
                ASSERT_EQ(c.write(fid, w, d).status(), PS_OK) << "write at " << off;
                memcpy(&model[off], d.data(), len);
            }
            raw_reply r = c.read(fid, {{pos, step}});
            ASSERT_EQ(r.status(), PS_OK) << "read at " << pos;
            ASSERT_TRUE(std::equal(r.data.begin(), r.data.end(), model.begin() + (long)pos))
                << "read " << step << " at " << pos << " (" << ra << ")";
        }
        c.stats(st);
        st->disk_reads -= before.disk_reads;
        st->read_ahead_bytes -= before.read_ahead_bytes;
        EXPECT_EQ(reads, size / step);
    };
    ps_stats_rep_t mixed{}, ahead{}, none{};
    walk("read_ahead=8m", true, &mixed);
    walk("read_ahead=8m", false, &ahead);
    walk("read_ahead=0", false, &none);
    printf("128 forward reads of 128 KiB: read ahead %llu bytes, %llu disk reads; "
           "without read-ahead %llu disk reads; with writes: %llu bytes staged, %llu read "
           "ahead\n",
           (unsigned long long)ahead.read_ahead_bytes, (unsigned long long)ahead.disk_reads,
           (unsigned long long)none.disk_reads, (unsigned long long)mixed.staged_bytes,
           (unsigned long long)mixed.read_ahead_bytes);
    EXPECT_GT(mixed.read_ahead_bytes, 0u);
    EXPECT_GE(ahead.read_ahead_bytes, 12 * mib);
    EXPECT_LT(ahead.disk_reads * 4, none.disk_reads);
    EXPECT_EQ(none.read_ahead_bytes, 0u);
}

/*
 * A stream of whole-granule reads (the driver's 1 MiB reads, halved while
 * the server reads them from disk, then whole: session 19's rule) keeps its
 * read-ahead going when its reads are served from what was read ahead: two
 * 512 KiB reads start the stream, and 14 reads of 1 MiB after them find
 * their bytes read ahead (their replies announce no disk bytes). Before,
 * a read the cache served whole did not count as the stream's, which then
 * stopped after one window. Counters, no timings.
 */
TEST(ServerReadAhead, WholeGranuleReadsServedFromTheCacheStayAhead)
{
    const uint64_t fid = 0x777a, mib = 1 << 20, size = 16 * mib;
    ps_cluster cluster;
    raw_client c;
    std::vector<uint8_t> model;
    ASSERT_TRUE(written_object(cluster, c, {"--set", "cache=24m", "--set", "read_ahead=4m"}, fid, size, 3, &model));
    uint64_t disk = 0;
    auto read = [&](uint64_t off, uint64_t len, bool count) {
        raw_reply r = c.read(fid, {{off, len}});
        ASSERT_TRUE(r.received);
        ASSERT_EQ(r.status(), PS_OK) << "read at " << off;
        ASSERT_TRUE(std::equal(r.data.begin(), r.data.end(), model.begin() + (long)off))
            << "read " << len << " at " << off;
        disk += count ? r.body<ps_io_rep_t>().disk_bytes : 0;
    };
    ps_stats_rep_t before{}, after{};
    c.stats(&before);
    read(0, mib / 2, false);
    read(mib / 2, mib / 2, false);
    for (uint64_t off = mib; off + mib <= size; off += mib) {
        read(off, mib, true);
    }
    c.stats(&after);
    printf("two 512 KiB reads, then 14 of 1 MiB: %llu bytes read ahead, %llu of the 1 MiB "
           "reads' bytes from disk\n",
           (unsigned long long)(after.read_ahead_bytes - before.read_ahead_bytes),
           (unsigned long long)disk);
    EXPECT_EQ(disk, 0u) << "a 1 MiB read went to disk: the stream stopped reading ahead";
    EXPECT_EQ(after.read_ahead_bytes - before.read_ahead_bytes, size - mib);
}

/*
 * Two streams 32 MiB apart whose batches the server merges into one job
 * (a 1 MiB read elsewhere, sent first, holds the object while both
 * arrive): each stream's reads come from what was read ahead. A job was
 * noted over its hull before, which moved one stream's front to the
 * other's. The disk's bytes are counted (the streams': all read from
 * disk but the holding reads and the read-ahead), no timings.
 */
TEST(ServerReadAhead, TwoStreamsInOneJobEachStayAhead)
{
    const uint64_t fid = 0x777b, mib = 1 << 20, size = 64 * mib, step = 128 * 1024, n = 96;
    ps_cluster cluster;
    raw_client c;
    std::vector<uint8_t> model;
    ASSERT_TRUE(written_object(cluster, c, {"--set", "cache=32m", "--set", "read_ahead=4m"}, fid, size, 5, &model));
    ps_stats_rep_t before{}, after{};
    c.stats(&before);
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t offs[] = {56 * mib + i % 8 * mib, i * step, 32 * mib + i * step};
        uint64_t ids[3];
        for (int k = 0; k < 3; k++) {
            uint64_t len = k == 0 ? mib : step; /* the holding read: not kept */
            ps_io_req_t req{fid, len, 1, 0};
            ps_region_t r{offs[k], len};
            ids[k] = c.send(PS_MSG_OBJ_READ, &req, sizeof(req), &r, sizeof(r));
        }
        for (int k = 0; k < 3; k++) {
            raw_reply r = c.wait(ids[k]);
            ASSERT_TRUE(r.received);
            ASSERT_EQ(r.status(), PS_OK);
            ASSERT_TRUE(std::equal(r.data.begin(), r.data.end(), model.begin() + (long)offs[k]))
                << "read at " << offs[k];
        }
    }
    c.stats(&after);
    uint64_t merged = after.merged_batches - before.merged_batches;
    uint64_t ahead = after.read_ahead_bytes - before.read_ahead_bytes;
    uint64_t streams = after.disk_bytes_read - before.disk_bytes_read - ahead - n * mib;
    printf("%llu reads of two streams of 128 KiB: %llu merged batches, %llu bytes read "
           "ahead, %llu read for the streams' own reads\n",
           (unsigned long long)(2 * n), (unsigned long long)merged, (unsigned long long)ahead,
           (unsigned long long)streams);
    ASSERT_GE(merged, n) << "the streams' batches seldom merged: this shows nothing";
    EXPECT_LE(streams, 8 * step) << "the streams' reads went to disk";
    EXPECT_LE(ahead, 2 * (n * step + 4 * mib)) << "read ahead more than the streams walk";
}

/*
 * A review's case (session 84): four processes reading alternate 64 KiB
 * chunks, each at its own pace (the reads sent one at a time in a random
 * interleaving of the four sequences, as independent MPI processes' reads
 * arrive): a process ahead of the others reads past what was read ahead,
 * 4 chunks from its previous read, and must move the stream on. The
 * reads' own bytes from disk are counted (all read from disk but the
 * read-ahead), no timings.
 */
TEST(ServerReadAhead, AlternateChunksAtTheProcessesOwnPaceStayAhead)
{
    const uint64_t fid = 0x777c, mib = 1 << 20, size = 64 * mib, c = 64 * 1024, P = 4;
    const uint64_t R = size / (P * c);
    ps_cluster cluster;
    raw_client w;
    std::vector<uint8_t> model;
    ASSERT_TRUE(written_object(cluster, w, {"--set", "cache=32m", "--set", "read_ahead=4m"}, fid, size, 6, &model));
    ASSERT_TRUE(cluster.restart(0)); /* a cold cache: the written blocks are not in it */
    raw_client cl;
    ASSERT_TRUE(cl.connect(cluster.host(0), cluster.port(0)));
    ps_stats_rep_t before{}, after{};
    cl.stats(&before);
    uint64_t pos[P] = {0, 0, 0, 0}, left = R * P;
    unsigned seed = 11;
    while (left > 0) {
        seed = seed * 1103515245u + 12345u;
        uint64_t p = (seed >> 8) % P;
        if (pos[p] >= R) {
            continue;
        }
        uint64_t off = (pos[p]++ * P + p) * c;
        left--;
        ps_io_req_t req{fid, c, 1, 0};
        ps_region_t r{off, c};
        raw_reply rep = cl.wait(cl.send(PS_MSG_OBJ_READ, &req, sizeof(req), &r, sizeof(r)));
        ASSERT_TRUE(rep.received);
        ASSERT_EQ(rep.status(), PS_OK);
        ASSERT_TRUE(std::equal(rep.data.begin(), rep.data.end(), model.begin() + (long)off))
            << "read at " << off;
    }
    cl.stats(&after);
    uint64_t ahead = after.read_ahead_bytes - before.read_ahead_bytes;
    uint64_t own = after.disk_bytes_read - before.disk_bytes_read - ahead;
    printf("%llu reads of 64 KiB by 4 processes: %llu disk reads, %llu bytes read ahead, %llu "
           "read for the reads themselves\n",
           (unsigned long long)(R * P), (unsigned long long)(after.disk_reads - before.disk_reads),
           (unsigned long long)ahead, (unsigned long long)own);
    EXPECT_LE(own, 16 * c) << "the reads went to disk";
}

/*
 * A stream walks into bytes the cache holds (an earlier walk's, and what
 * was read ahead of it): its read-ahead reads none of them again
 * (pss_read_ahead skips what the cache holds, 64 KiB at a time). Walk A
 * reads [8, 12) MiB, then walk B [0, 8) MiB: B's read-ahead past 8 MiB
 * finds A's bytes in the cache (without the skip, B took 11.9 MiB from
 * disk). Counters, no timings.
 */
TEST(ServerReadAhead, AStreamReadsNothingAgainThatTheCacheHolds)
{
    const uint64_t fid = 0x777d, mib = 1 << 20, size = 32 * mib, step = 128 * 1024;
    ps_cluster cluster;
    raw_client w;
    std::vector<uint8_t> model;
    ASSERT_TRUE(written_object(cluster, w, {"--set", "cache=48m", "--set", "read_ahead=4m"}, fid, size, 7, &model));
    ASSERT_TRUE(cluster.restart(0)); /* a cold cache */
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    auto walk = [&](uint64_t from, uint64_t to) {
        for (uint64_t off = from; off < to; off += step) {
            raw_reply r = c.read(fid, {{off, step}});
            ASSERT_EQ(r.status(), PS_OK) << "read at " << off;
            ASSERT_TRUE(std::equal(r.data.begin(), r.data.end(), model.begin() + (long)off))
                << "read at " << off;
        }
    };
    ps_stats_rep_t before{}, mid{}, after{};
    c.stats(&before);
    walk(8 * mib, 12 * mib);
    c.stats(&mid);
    walk(0, 8 * mib);
    c.stats(&after);
    uint64_t a = mid.disk_bytes_read - before.disk_bytes_read;
    uint64_t b = after.disk_bytes_read - mid.disk_bytes_read;
    printf("A's walk of 4 MiB read %llu bytes from disk, then B's of 8 MiB %llu (%llu read "
           "ahead)\n",
           (unsigned long long)a, (unsigned long long)b,
           (unsigned long long)(after.read_ahead_bytes - mid.read_ahead_bytes));
    EXPECT_LE(b, 9 * mib) << "B's read-ahead read A's bytes from disk again";
}

/*
 * A stream of 128 KiB reads with a list read of 8 scattered 4 KiB pieces
 * elsewhere in the object between each two of them (pss_job_read_runs
 * marks the pieces scattered: their request has 8 runs). Sent one at a
 * time, the stream's reads come from what was read ahead; before, the
 * pieces took the last reads, the stream never started, and all its
 * reads went to disk (5 MiB, nothing read ahead). Then sent together
 * behind a holding read, so that the server merges them into one job
 * (pss_job_read_runs finds the pieces' request among the job's): the
 * stream is read ahead. Counters and the stream's replies' disk bytes,
 * no timings.
 */
TEST(ServerReadAhead, ScatteredListReadsLeaveAStreamReadingAhead)
{
    const uint64_t fid = 0x777e, mib = 1 << 20, size = 64 * mib, step = 128 * 1024, n = 40;
    ps_cluster cluster;
    raw_client c;
    std::vector<uint8_t> model;
    ASSERT_TRUE(written_object(cluster, c, {"--set", "cache=32m", "--set", "read_ahead=4m"}, fid,
                               size, 8, &model));
    ASSERT_TRUE(cluster.restart(0)); /* a cold cache */
    raw_client r;
    ASSERT_TRUE(r.connect(cluster.host(0), cluster.port(0)));
    auto check = [&](const raw_reply &rep, const std::vector<ps_region_t> &regions) {
        ASSERT_TRUE(rep.received);
        ASSERT_EQ(rep.status(), PS_OK);
        uint64_t at = 0;
        for (const ps_region_t &g : regions) {
            ASSERT_TRUE(std::equal(rep.data.begin() + (long)at,
                                   rep.data.begin() + (long)(at + g.len),
                                   model.begin() + (long)g.off))
                << "read at " << g.off;
            at += g.len;
        }
    };
    auto send = [&](const std::vector<ps_region_t> &regions) {
        uint64_t len = 0;
        for (const ps_region_t &g : regions) {
            len += g.len;
        }
        ps_io_req_t req{fid, len, (uint32_t)regions.size(), 0};
        return r.send(PS_MSG_OBJ_READ, &req, sizeof(req), regions.data(),
                      regions.size() * sizeof(ps_region_t));
    };
    for (int merged = 0; merged < 2; merged++) {
        uint64_t base = merged ? 8 * mib : 0, stream = 0;
        ps_stats_rep_t before{}, after{};
        r.stats(&before);
        for (uint64_t k = 0; k < n; k++) {
            std::vector<ps_region_t> hold = {{14 * mib + k % 2 * mib, mib}}; /* not kept */
            std::vector<ps_region_t> s = {{base + k * step, step}}, pieces;
            for (uint64_t p = 0; p < 8; p++) { /* 4 KiB, 3 MiB apart, none read twice */
                uint64_t slot = 16 * mib + (uint64_t)merged * 24 * mib + p * 3 * mib;
                pieces.push_back({slot + (k * 37 + p) % 96 * 16384, 4096});
            }
            if (merged) { /* the holding read keeps the object busy while both arrive */
                uint64_t h = send(hold), a = send(s), b = send(pieces);
                check(r.wait(h), hold);
                check(r.wait(a), s);
                check(r.wait(b), pieces);
            } else { /* a job each: the reply's disk bytes are the stream's own */
                raw_reply rep = r.wait(send(s));
                check(rep, s);
                stream += k >= 2 ? rep.body<ps_io_rep_t>().disk_bytes : 0;
                check(r.wait(send(pieces)), pieces);
            }
        }
        r.stats(&after);
        uint64_t ahead = after.read_ahead_bytes - before.read_ahead_bytes;
        uint64_t joined = after.merged_batches - before.merged_batches;
        printf("%llu stream reads of 128 KiB between list reads of 8 scattered pieces, %s: %llu "
               "bytes read ahead, %llu of the stream's bytes from disk after its first two, "
               "%llu merged batches\n",
               (unsigned long long)n, merged ? "sent together" : "one at a time",
               (unsigned long long)ahead, (unsigned long long)stream, (unsigned long long)joined);
        if (merged) {
            EXPECT_GE(joined, n) << "the batches seldom merged: this shows nothing";
        }
        EXPECT_GE(ahead, n * step) << "the stream was not read ahead";
        EXPECT_LE(stream, 2 * step) << "the stream's reads went to disk";
    }
}

/*
 * One client reads 4 KiB of every 12 KiB of a cold object, one request
 * each (a strided view read region by region with the driver's caches
 * off). Reading the gaps through is cheaper than a disk read per chunk
 * (PSS_RA_GAP), so the reads are a stream and come from what was read
 * ahead: 15 disk reads; before, each of the 683 reads went to disk and
 * nothing was read ahead. Every read is checked against the byte model.
 * Counters, no timings.
 */
TEST(ServerReadAhead, OneSmallChunkInThreeIsReadAhead)
{
    const uint64_t fid = 0x777e, mib = 1 << 20, size = 8 * mib, c4k = 4096, stride = 3 * c4k;
    ps_cluster cluster;
    raw_client c;
    std::vector<uint8_t> model;
    ASSERT_TRUE(written_object(cluster, c, {"--set", "cache=16m"}, fid, size, 3, &model));
    ps_stats_rep_t before{}, after{};
    c.stats(&before);
    uint64_t reads = 0;
    for (uint64_t pos = 0; pos + c4k <= size; pos += stride, reads++) {
        raw_reply r = c.read(fid, {{pos, c4k}});
        ASSERT_EQ(r.status(), PS_OK) << "read at " << pos;
        ASSERT_TRUE(std::equal(r.data.begin(), r.data.end(), model.begin() + (long)pos))
            << "read at " << pos;
    }
    c.stats(&after);
    uint64_t disk = after.disk_reads - before.disk_reads;
    printf("%llu reads of 4 KiB, one in 3: %llu disk reads, %llu bytes read ahead\n",
           (unsigned long long)reads, (unsigned long long)disk,
           (unsigned long long)(after.read_ahead_bytes - before.read_ahead_bytes));
    EXPECT_LE(disk * 8, reads);
}

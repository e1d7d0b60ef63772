/*
 * test_server_io.cc: object I/O through raw requests: unaligned round trips,
 * read-modify-write under concurrency, rendezvous payloads, O_DIRECT on the
 * object's descriptor, coalescing counters, truncate/stat/remove/sync.
 */
#include <gtest/gtest.h>

#include <dirent.h>
#include <endian.h>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ps_cluster.h"
#include "ps_layout.h"
#include "ps_time.h"
#include "test_server_raw.h"

using namespace ps_test;

class ServerIo : public ::testing::Test {
  protected:
    void start(std::vector<std::string> extra = {})
    {
        ASSERT_TRUE(cluster.start(1, 1, extra));
        ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
        raw_reply h = c.hello();
        ASSERT_TRUE(h.received);
        ASSERT_EQ(h.status(), PS_OK);
        block = h.body<ps_hello_rep_t>().block_size;
    }
    void SetUp() override
    {
        start();
    }

    ps_stats_rep_t stats()
    {
        ps_stats_rep_t st{};
        raw_reply r = c.stats(&st);
        EXPECT_TRUE(r.received);
        EXPECT_EQ(r.status(), PS_OK);
        return st;
    }

    std::string object_path(uint64_t fid)
    {
        char rel[64];
        snprintf(rel, sizeof(rel), "/obj/%02x/%016llx", (unsigned)(fid >> 56),
                 (unsigned long long)fid);
        return cluster.data_dir(0) + rel;
    }

    ps_obj_rep_t obj_stat(uint64_t fid)
    {
        raw_reply r = c.obj(PS_MSG_OBJ_STAT, fid);
        EXPECT_TRUE(r.received);
        EXPECT_EQ(r.status(), PS_OK);
        return r.body<ps_obj_rep_t>();
    }

    ps_cluster cluster;
    raw_client c;
    uint32_t block = 0;
};

TEST_F(ServerIo, UnalignedRoundTrip)
{
    uint64_t fid = 0x1111;
    std::vector<ps_region_t> regs = {{3, 10}, {1000, 700}, {5000, 1}, {511, 2}, {4095, 3}};
    raw_reply w = c.write(fid, regs, payload_for(regs));
    ASSERT_TRUE(w.received);
    ASSERT_EQ(w.status(), PS_OK);
    EXPECT_EQ(w.body<ps_io_rep_t>().bytes, 716u);
    EXPECT_EQ(w.body<ps_io_rep_t>().obj_size, 5001u);

    /* the same regions in another order, one by one, and holes */
    std::vector<ps_region_t> back = {{5000, 1}, {1000, 700}, {3, 10}, {4095, 3}, {511, 2}};
    raw_reply r = c.read(fid, back);
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.data, payload_for(back));
    EXPECT_EQ(r.body<ps_io_rep_t>().obj_size, 5001u);

    r = c.read(fid, {{13, 498}, {5001, 3000}});
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.data, std::vector<uint8_t>(3498, 0)) << "holes and the tail read as zeros";

    ps_obj_rep_t st = obj_stat(fid);
    EXPECT_EQ(st.exists, 1u);
    EXPECT_EQ(st.size, 5001u) << "logical size is exact, not rounded to a block";
    EXPECT_GT(st.mtime_ns, 0u);

    /* the file on disk (after a sync: partial blocks wait in the server's
     * write-back stage until then) is whole blocks; the exact size is in
     * its attribute */
    ASSERT_EQ(c.obj(PS_MSG_OBJ_SYNC, fid).status(), PS_OK);
    std::string path = object_path(fid);
    struct stat sb;
    ASSERT_EQ(::stat(path.c_str(), &sb), 0) << path;
    EXPECT_EQ(sb.st_size % 4096, 0) << "a length inside a block would mix page cache and O_DIRECT";
    EXPECT_GE(sb.st_size, 5001);
    uint64_t le = 0;
    ASSERT_EQ(getxattr(path.c_str(), "user.pstripe.size", &le, sizeof(le)), (ssize_t)sizeof(le));
    EXPECT_EQ(le64toh(le), 5001u);
}

/*
 * Unaligned records written one after the other (two clients taking turns,
 * as HDF5's chunks or a log) start in the block the previous record ended
 * in: the server keeps that block (pss_edge.c) and writes without reading.
 * Then the kept blocks must follow every change: a whole-block overwrite,
 * a truncate, a write past a truncated end. The byte model says what the
 * object holds after each step.
 */
TEST_F(ServerIo, UnalignedAppendsNeedNoReadsAndStayExact)
{
    uint64_t fid = 0x1212;
    const uint64_t rec = 3001;
    const int n = 200;
    raw_client c2;
    ASSERT_TRUE(c2.connect(cluster.host(0), cluster.port(0)));
    std::vector<uint8_t> model(rec * n + 8192, 0);
    uint64_t end = rec * n;
    auto apply = [&](const ps_region_t &g, const std::vector<uint8_t> &d) {
        memcpy(&model[g.off], d.data(), g.len);
    };

    ps_stats_rep_t before = stats();
    for (int i = 0; i < n; i++) {
        std::vector<ps_region_t> reg = {{i * rec, rec}};
        std::vector<uint8_t> d = payload_for(reg, (uint8_t)(i % 2));
        raw_reply w = (i % 2 ? c2 : c).write(fid, reg, d);
        ASSERT_TRUE(w.received);
        ASSERT_EQ(w.status(), PS_OK);
        apply(reg[0], d);
    }
    ps_stats_rep_t after = stats();
    printf("%d unaligned %llu-byte appends: %llu disk writes, %llu read-modify-write reads\n", n,
           (unsigned long long)rec, (unsigned long long)(after.disk_writes - before.disk_writes),
           (unsigned long long)(after.rmw_reads - before.rmw_reads));
    EXPECT_EQ(after.rmw_reads, before.rmw_reads) << "an append read the block it started in";

    /* a whole-block overwrite of a kept block, then a write inside it */
    std::vector<ps_region_t> blk = {{2 * 4096, 4096}};
    std::vector<uint8_t> d = payload_for(blk, 7);
    ASSERT_EQ(c.write(fid, blk, d).status(), PS_OK);
    apply(blk[0], d);
    std::vector<ps_region_t> in = {{2 * 4096 + 100, 5}};
    d = payload_for(in, 9);
    ASSERT_EQ(c2.write(fid, in, d).status(), PS_OK);
    apply(in[0], d);

    /* cut inside the last block, then grow past it with a write */
    uint64_t cut = end - 1500;
    ASSERT_EQ(c.obj(PS_MSG_OBJ_TRUNCATE, fid, cut).status(), PS_OK);
    std::fill(model.begin() + (long)cut, model.end(), 0);
    std::vector<ps_region_t> past = {{end + 10, 20}};
    d = payload_for(past, 3);
    ASSERT_EQ(c2.write(fid, past, d).status(), PS_OK);
    apply(past[0], d);
    model.resize(end + 30);

    raw_reply r = c.read(fid, {{0, model.size()}});
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_TRUE(r.data == model) << "the object differs from the byte model";
}

TEST_F(ServerIo, CorruptSizeAttributeIsAnError)
{
    uint64_t fid = 0x1f1f;
    std::string path = object_path(fid);
    int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(fsetxattr(fd, "user.pstripe.size", "abc", 3, 0), 0);
    ::close(fd);
    raw_reply w = c.write(fid, {{0, 10}}, std::vector<uint8_t>(10, 1));
    ASSERT_TRUE(w.received);
    EXPECT_EQ(w.status(), PS_ERR_IO) << "an object whose size is unknown was written";
    std::ifstream log(cluster.log_path(0));
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("attribute user.pstripe.size holds 3 bytes, not 8"), std::string::npos)
        << "no clear log line";
}

/*
 * A read of an object that exists but cannot be opened (here its size
 * attribute is damaged) is an error to the client, never a success with
 * bytes that were not read from disk (issue 11: another file's bytes came
 * back from uninitialised reply buffers). Reads of an object that does not
 * exist are zeros.
 */
TEST_F(ServerIo, UnreadableObjectIsAnErrorNotData)
{
    uint64_t fid = 0x1f2f;
    std::vector<uint8_t> data(20000, 0xab);
    raw_reply w = c.write(fid, {{0, data.size()}}, data);
    ASSERT_TRUE(w.received);
    ASSERT_EQ(w.status(), PS_OK);
    /* fill the worker's reusable buffers with recognisable bytes */
    raw_reply r = c.read(fid, {{0, data.size()}});
    ASSERT_EQ(r.status(), PS_OK);
    ASSERT_EQ(r.data, data);

    /* damage the attribute and make the server open the object again */
    ASSERT_TRUE(cluster.restart(0, true));
    raw_client c2;
    ASSERT_TRUE(c2.connect(cluster.host(0), cluster.port(0)));
    std::string path = object_path(fid);
    ASSERT_EQ(setxattr(path.c_str(), "user.pstripe.size", "abc", 3, 0), 0);
    r = c2.read(fid, {{0, 4096}, {8192, 100}});
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_IO) << "bytes of an unreadable object were returned";
    EXPECT_TRUE(r.data.empty());
    std::ifstream log(cluster.log_path(0));
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("attribute user.pstripe.size holds 3 bytes, not 8"), std::string::npos)
        << "no log line naming the object";

    /* an object that does not exist reads as zeros */
    r = c2.read(0x7a7a, {{0, 300}});
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.data, std::vector<uint8_t>(300, 0));
}

TEST_F(ServerIo, OverlappingRegionsLaterWins)
{
    uint64_t fid = 0x2222;
    std::vector<uint8_t> p(200);
    memset(p.data(), 'A', 100);
    memset(p.data() + 100, 'B', 100);
    raw_reply w = c.write(fid, {{10, 100}, {60, 100}}, p);
    ASSERT_TRUE(w.received);
    ASSERT_EQ(w.status(), PS_OK);
    raw_reply r = c.read(fid, {{10, 150}});
    ASSERT_TRUE(r.received);
    std::vector<uint8_t> want(150, 'B');
    memset(want.data(), 'A', 50);
    EXPECT_EQ(r.data, want);
}

TEST_F(ServerIo, ReadOfMissingObjectIsZeros)
{
    raw_reply r = c.read(0x3333, {{0, 100}, {1 << 20, 10}});
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.data, std::vector<uint8_t>(110, 0));
    ps_obj_rep_t st = obj_stat(0x3333);
    EXPECT_EQ(st.exists, 0u);
    EXPECT_EQ(st.size, 0u);
}

/*
 * Read replies of 64 KiB and more reuse the worker's buffers (pss_buf_get),
 * which still hold the last reply's bytes: a read of a missing object, and
 * one past a file's end, must come back as zeros all the same, never as
 * another file's bytes.
 */
TEST_F(ServerIo, ReusedReplyBuffersCarryNoOldBytes)
{
    const uint64_t mib = 1 << 20;
    std::vector<ps_region_t> regs = {{0, mib}};
    std::vector<uint8_t> p = payload_for(regs, 9);
    ASSERT_EQ(c.write(0x5151, regs, p).status(), PS_OK);
    for (int i = 0; i < 3; i++) { /* fill the worker's buffers with the file's bytes */
        raw_reply r = c.read(0x5151, regs);
        ASSERT_EQ(r.status(), PS_OK);
        ASSERT_TRUE(r.data == p);
    }
    raw_reply missing = c.read(0x5252, regs);
    ASSERT_EQ(missing.status(), PS_OK);
    EXPECT_TRUE(missing.data == std::vector<uint8_t>(mib, 0)) << "a missing object's read";
    raw_reply past = c.read(0x5151, {{mib / 2, mib}});
    ASSERT_EQ(past.status(), PS_OK);
    std::vector<uint8_t> want(p.begin() + mib / 2, p.end());
    want.resize(mib, 0);
    EXPECT_TRUE(past.data == want) << "a read past the end";
}

TEST_F(ServerIo, LargeRendezvousPayloads)
{
    uint64_t fid = 0x4444;
    std::vector<ps_region_t> regs = {{777, (8u << 20) + 3}};
    std::vector<uint8_t> p = payload_for(regs, 3);
    raw_reply w = c.write(fid, regs, p);
    ASSERT_TRUE(w.received);
    ASSERT_EQ(w.status(), PS_OK);
    EXPECT_EQ(w.body<ps_io_rep_t>().obj_size, 777u + (8u << 20) + 3);
    raw_reply r = c.read(fid, regs);
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    ASSERT_EQ(r.data.size(), p.size());
    EXPECT_TRUE(r.data == p);

    /* aligned large write: served straight from the receive buffer */
    std::vector<ps_region_t> al = {{16u << 20, 4u << 20}};
    std::vector<uint8_t> pa = payload_for(al, 5);
    w = c.write(fid, al, pa);
    ASSERT_TRUE(w.received);
    ASSERT_EQ(w.status(), PS_OK);
    r = c.read(fid, al);
    ASSERT_TRUE(r.received);
    EXPECT_TRUE(r.data == pa);
}

/* O_DIRECT (040000 on x86-64) in the flags of the object's open descriptor. */
TEST_F(ServerIo, ObjectsUseODirect)
{
    uint64_t fid = 0x5555;
    raw_reply w = c.write(fid, {{0, 100}}, std::vector<uint8_t>(100, 7));
    ASSERT_TRUE(w.received);
    ASSERT_EQ(w.status(), PS_OK);
    EXPECT_EQ(stats().direct_io, 1u);

    char name[64];
    snprintf(name, sizeof(name), "%016llx", (unsigned long long)fid);
    std::string fddir = "/proc/" + std::to_string(cluster.pid(0)) + "/fd";
    DIR *d = opendir(fddir.c_str());
    ASSERT_NE(d, nullptr);
    int found = -1;
    struct dirent *de;
    while ((de = readdir(d)) != nullptr) {
        char target[4096];
        std::string link = fddir + "/" + de->d_name;
        ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
        if (n > 0) {
            target[n] = 0;
            std::string t(target);
            if (t.size() >= strlen(name) &&
                t.compare(t.size() - strlen(name), strlen(name), name) == 0) {
                found = atoi(de->d_name);
            }
        }
    }
    closedir(d);
    ASSERT_GE(found, 0) << "object file not open in the daemon";
    std::string info =
        read_file("/proc/" + std::to_string(cluster.pid(0)) + "/fdinfo/" + std::to_string(found));
    size_t pos = info.find("flags:");
    ASSERT_NE(pos, std::string::npos) << info;
    unsigned long flags = strtoul(info.c_str() + pos + 6, nullptr, 8);
    EXPECT_TRUE(flags & 040000) << "flags " << std::oct << flags << " lack O_DIRECT";
    printf("object fd %d flags 0%lo (O_DIRECT 040000 set: %s)\n", found, flags,
           (flags & 040000) ? "yes" : "no");
}

/*
 * Many unaligned writes into the same disk blocks in flight at once, from two
 * connections: every one needs a read-modify-write of a shared block, and
 * none may lose another's bytes.
 */
TEST_F(ServerIo, ConcurrentReadModifyWriteOfOneBlock)
{
    uint64_t fid = 0x6666;
    raw_client c2;
    ASSERT_TRUE(c2.connect(cluster.host(0), cluster.port(0)));
    std::vector<uint64_t> ids1, ids2;
    const int n = 3000; /* 9000 bytes: several 512-byte sectors and 4 KiB blocks */
    for (int i = 0; i < n; i++) {
        std::vector<ps_region_t> reg = {{(uint64_t)i * 3, 3}};
        ps_io_req_t io{fid, 3, 1, 0};
        std::vector<uint8_t> d = raw_client::io_data(reg, payload_for(reg));
        raw_client &cl = (i % 2) ? c2 : c;
        uint64_t id = cl.send(PS_MSG_OBJ_WRITE, &io, sizeof(io), d.data(), d.size());
        ((i % 2) ? ids2 : ids1).push_back(id);
    }
    for (uint64_t id : ids1) {
        raw_reply r = c.wait(id);
        ASSERT_TRUE(r.received);
        ASSERT_EQ(r.status(), PS_OK);
    }
    for (uint64_t id : ids2) {
        raw_reply r = c2.wait(id);
        ASSERT_TRUE(r.received);
        ASSERT_EQ(r.status(), PS_OK);
    }
    std::vector<ps_region_t> all = {{0, 3 * n}};
    raw_reply r = c.read(fid, all);
    ASSERT_TRUE(r.received);
    EXPECT_TRUE(r.data == payload_for(all)) << "a concurrent read-modify-write lost bytes";
    EXPECT_EQ(obj_stat(fid).size, 3u * n);
    /* Growing the file by sectors while other sectors of its last block were
     * being written once mixed the page cache with direct I/O: the kernel
     * failed the sync with EIO. */
    raw_reply sy = c.obj(PS_MSG_OBJ_SYNC, fid);
    ASSERT_TRUE(sy.received);
    EXPECT_EQ(sy.status(), PS_OK);
    ps_stats_rep_t st = stats();
    printf("%d one-block writes: %llu disk writes, %llu rmw reads, %llu merged batches, "
           "max queue depth %llu\n",
           n, (unsigned long long)st.disk_writes, (unsigned long long)st.rmw_reads,
           (unsigned long long)st.merged_batches, (unsigned long long)st.queue_depth_max);
    EXPECT_GT(st.merged_batches, 0u) << "batches waiting together were not planned together";
    EXPECT_LT(st.disk_writes, (uint64_t)n);
}

/*
 * Two clients write one object in 512-byte requests, each its own half,
 * several requests in flight (what one MPI request per region does). The
 * upper half grows the file a sector at a time while the lower half's
 * direct writes run. When the file's length could end inside a block, ext4
 * zeroed that block's tail through the page cache on each extension; the
 * kernel then logged "Page cache invalidation failure on direct I/O" and
 * the next sync failed with EIO.
 */
TEST_F(ServerIo, ConcurrentGrowingWritesThenSync)
{
    raw_client c2;
    ASSERT_TRUE(c2.connect(cluster.host(0), cluster.port(0)));
    const uint64_t fid = 0x6700, half = 256 * 1024, len = 512;
    const size_t window = 8;
    raw_client *cl[2] = {&c, &c2};
    std::vector<uint64_t> inflight[2];
    for (uint64_t off = 0; off < half; off += len) {
        for (int k = 0; k < 2; k++) {
            std::vector<ps_region_t> reg = {{k * half + off, len}};
            ps_io_req_t io{fid, len, 1, 0};
            std::vector<uint8_t> d = raw_client::io_data(reg, payload_for(reg));
            inflight[k].push_back(
                cl[k]->send(PS_MSG_OBJ_WRITE, &io, sizeof(io), d.data(), d.size()));
            if (inflight[k].size() == window) {
                ASSERT_EQ(cl[k]->wait(inflight[k].front()).status(), PS_OK);
                inflight[k].erase(inflight[k].begin());
            }
        }
    }
    for (int k = 0; k < 2; k++) {
        for (uint64_t id : inflight[k]) {
            ASSERT_EQ(cl[k]->wait(id).status(), PS_OK);
        }
    }
    raw_reply sy = c.obj(PS_MSG_OBJ_SYNC, fid);
    ASSERT_TRUE(sy.received);
    EXPECT_EQ(sy.status(), PS_OK) << "sync after concurrent growing writes failed";
    std::vector<ps_region_t> all = {{0, 2 * half}};
    raw_reply r = c.read(fid, all);
    ASSERT_TRUE(r.received);
    EXPECT_TRUE(r.data == payload_for(all));
}

static void coalesce_case(ServerIo *t, raw_client &c, uint64_t fid, uint64_t stride,
                          uint64_t max_ios)
{
    const uint32_t n = 100000;
    std::vector<ps_region_t> regs(n);
    for (uint32_t i = 0; i < n; i++) {
        regs[i] = {i * stride, 64};
    }
    std::vector<uint8_t> p = payload_for(regs);
    ps_stats_rep_t before{}, after{};
    ASSERT_TRUE(c.stats(&before).received);
    raw_reply w = c.write(fid, regs, p);
    ASSERT_TRUE(w.received);
    ASSERT_EQ(w.status(), PS_OK);
    ASSERT_TRUE(c.stats(&after).received);
    uint64_t writes = after.disk_writes - before.disk_writes;
    uint64_t reads = after.disk_reads - before.disk_reads;
    printf("write of %u x 64 B regions, stride %llu: %llu regions received, %llu disk writes, "
           "%llu disk reads (rmw %llu), %llu bytes written to disk\n",
           n, (unsigned long long)stride,
           (unsigned long long)(after.regions_written - before.regions_written),
           (unsigned long long)writes, (unsigned long long)reads,
           (unsigned long long)(after.rmw_reads - before.rmw_reads),
           (unsigned long long)(after.disk_bytes_written - before.disk_bytes_written));
    EXPECT_EQ(after.regions_written - before.regions_written, n);
    EXPECT_LE(writes, max_ios);
    EXPECT_LE(reads, max_ios);

    ASSERT_TRUE(c.stats(&before).received);
    raw_reply r = c.read(fid, regs);
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    ASSERT_TRUE(c.stats(&after).received);
    EXPECT_TRUE(r.data == p);
    printf("read of the same regions: %llu regions received, %llu disk reads\n",
           (unsigned long long)(after.regions_read - before.regions_read),
           (unsigned long long)(after.disk_reads - before.disk_reads));
    EXPECT_EQ(after.regions_read - before.regions_read, n);
    EXPECT_LE(after.disk_reads - before.disk_reads, max_ios);
    (void)t;
}

TEST_F(ServerIo, CoalesceContiguousSmallRegions)
{
    /* 6.4 MB in 64-byte pieces: with max_io = 1m about 7 disk writes, no RMW */
    coalesce_case(this, c, 0x7777, 64, 16);
}

TEST_F(ServerIo, CoalesceSmallRegionsWithGaps)
{
    /* 64-byte pieces with 64-byte gaps: spans over 12.8 MB, read-modify-written */
    coalesce_case(this, c, 0x8888, 128, 32);
    /* the gaps stay zero */
    raw_reply r = c.read(0x8888, {{64, 64}, {128 * 5000 + 64, 64}});
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.data, std::vector<uint8_t>(128, 0));
}

TEST_F(ServerIo, TruncateStatRemoveSync)
{
    uint64_t fid = 0x9999;
    std::vector<ps_region_t> regs = {{0, 1000}};
    ASSERT_EQ(c.write(fid, regs, payload_for(regs)).status(), PS_OK);

    raw_reply t = c.obj(PS_MSG_OBJ_TRUNCATE, fid, 300);
    ASSERT_TRUE(t.received);
    ASSERT_EQ(t.status(), PS_OK);
    EXPECT_EQ(t.body<ps_obj_rep_t>().size, 300u);
    raw_reply r = c.read(fid, {{0, 1000}});
    std::vector<uint8_t> want = payload_for({{0, 300}});
    want.resize(1000, 0);
    EXPECT_EQ(r.data, want);

    t = c.obj(PS_MSG_OBJ_TRUNCATE, fid, 10000);
    ASSERT_EQ(t.status(), PS_OK);
    EXPECT_EQ(obj_stat(fid).size, 10000u);
    r = c.read(fid, {{0, 10000}});
    want.resize(10000, 0);
    EXPECT_TRUE(r.data == want) << "bytes cut by a truncate came back when the file grew";

    /* the same when a write past the end grows it */
    ASSERT_EQ(c.obj(PS_MSG_OBJ_TRUNCATE, fid, 5001).status(), PS_OK);
    ASSERT_EQ(c.write(fid, {{9000, 10}}, std::vector<uint8_t>(10, 7)).status(), PS_OK);
    r = c.read(fid, {{0, 10000}});
    std::fill(want.begin() + 9000, want.begin() + 9010, 7);
    EXPECT_TRUE(r.data == want) << "bytes past a truncated end reappeared";
    EXPECT_EQ(obj_stat(fid).size, 9010u);

    raw_reply s = c.obj(PS_MSG_OBJ_SYNC, fid);
    ASSERT_TRUE(s.received);
    EXPECT_EQ(s.status(), PS_OK);
    EXPECT_EQ(s.body<ps_obj_rep_t>().size, 9010u);

    /* truncate creates a missing object */
    t = c.obj(PS_MSG_OBJ_TRUNCATE, 0xaaaa, 12345);
    ASSERT_EQ(t.status(), PS_OK);
    EXPECT_EQ(obj_stat(0xaaaa).size, 12345u);
    EXPECT_EQ(obj_stat(0xaaaa).exists, 1u);

    raw_reply rm = c.obj(PS_MSG_OBJ_REMOVE, fid);
    ASSERT_TRUE(rm.received);
    EXPECT_EQ(rm.status(), PS_OK);
    EXPECT_EQ(obj_stat(fid).exists, 0u);
    /* a removed file's object is stale for cap_life (a client may still
     * have the file open): reads, writes, truncates and syncs are refused,
     * never zeros or a new object with no name (pss_removed.c) */
    r = c.read(fid, {{0, 100}});
    EXPECT_EQ(r.status(), PS_ERR_STALE);
    EXPECT_TRUE(r.data.empty());
    /* removing again is fine */
    EXPECT_EQ(c.obj(PS_MSG_OBJ_REMOVE, fid).status(), PS_OK);
    EXPECT_EQ(c.write(fid, {{5, 5}}, std::vector<uint8_t>(5, 9)).status(), PS_ERR_STALE);
    EXPECT_EQ(c.obj(PS_MSG_OBJ_TRUNCATE, fid, 100).status(), PS_ERR_STALE);
    EXPECT_EQ(c.obj(PS_MSG_OBJ_SYNC, fid).status(), PS_ERR_STALE);
    EXPECT_EQ(obj_stat(fid).exists, 0u);
    char rel[64];
    snprintf(rel, sizeof(rel), "/obj/%02x/%016llx", (unsigned)(fid >> 56), (unsigned long long)fid);
    EXPECT_NE(access((cluster.data_dir(0) + rel).c_str(), F_OK), 0)
        << "the removed object came back";
}

TEST_F(ServerIo, AllocateReservesSpaceAndKeepsData)
{
    const uint64_t fid = 0x9a9a, mib = 1 << 20;
    /* bytes with a hole below them */
    ASSERT_EQ(c.write(fid, {{200000, 1000}}, std::vector<uint8_t>(1000, 5)).status(), PS_OK);
    ps_obj_rep_t st = obj_stat(fid);
    ASSERT_EQ(st.size, 201000u);

    /* the size grows, the space (the hole's too) is reserved, the bytes stay */
    raw_reply a = c.obj(PS_MSG_OBJ_ALLOCATE, fid, mib);
    ASSERT_TRUE(a.received);
    ASSERT_EQ(a.status(), PS_OK);
    EXPECT_EQ(a.body<ps_obj_rep_t>().size, mib);
    EXPECT_GE(a.body<ps_obj_rep_t>().blocks, mib) << "no disk space reserved";
    EXPECT_GT(a.body<ps_obj_rep_t>().blocks, st.blocks);
    raw_reply r = c.read(fid, {{199000, 4000}, {mib - 100, 100}});
    std::vector<uint8_t> want(4100, 0);
    std::fill(want.begin() + 1000, want.begin() + 2000, 5);
    EXPECT_EQ(r.data, want);

    /* smaller: the size stays (it never shrinks) */
    ASSERT_EQ(c.obj(PS_MSG_OBJ_ALLOCATE, fid, 1000).status(), PS_OK);
    EXPECT_EQ(obj_stat(fid).size, mib);
    /* an unaligned size, then a write across it */
    ASSERT_EQ(c.obj(PS_MSG_OBJ_ALLOCATE, fid, mib + 7).status(), PS_OK);
    EXPECT_EQ(obj_stat(fid).size, mib + 7);
    ASSERT_EQ(c.write(fid, {{mib + 3, 10}}, std::vector<uint8_t>(10, 6)).status(), PS_OK);
    EXPECT_EQ(obj_stat(fid).size, mib + 13);
    r = c.read(fid, {{mib, 13}});
    want.assign(13, 6);
    std::fill(want.begin(), want.begin() + 3, 0);
    EXPECT_EQ(r.data, want);

    /* a missing object is made; a size past the object limit is refused */
    ASSERT_EQ(c.obj(PS_MSG_OBJ_ALLOCATE, 0xabab, 5000).status(), PS_OK);
    EXPECT_EQ(obj_stat(0xabab).size, 5000u);
    EXPECT_EQ(c.obj(PS_MSG_OBJ_ALLOCATE, fid, UINT64_MAX).status(), PS_ERR_FILE_TOO_LARGE);
    EXPECT_EQ(obj_stat(fid).size, mib + 13);
}

TEST_F(ServerIo, StatsCountRequests)
{
    ps_stats_rep_t a = stats();
    std::vector<ps_region_t> regs = {{0, 10}, {100, 10}};
    ASSERT_EQ(c.write(0xbbbb, regs, payload_for(regs)).status(), PS_OK);
    ASSERT_EQ(c.read(0xbbbb, regs).status(), PS_OK);
    ps_stats_rep_t b = stats();
    EXPECT_EQ(b.nworkers, 1u);
    EXPECT_GE(b.requests - a.requests, 3u);
    EXPECT_EQ(b.write_batches - a.write_batches, 1u);
    EXPECT_EQ(b.read_batches - a.read_batches, 1u);
    EXPECT_EQ(b.bytes_written - a.bytes_written, 20u);
    EXPECT_EQ(b.bytes_read - a.bytes_read, 20u);
    EXPECT_EQ(b.regions_written - a.regions_written, 2u);
    EXPECT_GT(b.uptime_ns, 0u);
    uint64_t hist = 0;
    for (uint64_t v : b.latency_hist) {
        hist += v;
    }
    EXPECT_GT(hist, 0u);
}

TEST(ServerIoBuffered, DirectIoNoFallsBackToBuffered)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1, {"--set", "direct_io=no"}));
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    std::vector<ps_region_t> regs = {{3, 1000}};
    ASSERT_EQ(c.write(1, regs, payload_for(regs)).status(), PS_OK);
    raw_reply r = c.read(1, regs);
    EXPECT_EQ(r.data, payload_for(regs));
    ps_stats_rep_t st{};
    ASSERT_TRUE(c.stats(&st).received);
    EXPECT_EQ(st.direct_io, 0u);
}

/* count descriptors of a process that point into a data dir's obj/ */
static int open_objects(pid_t pid, const std::string &data_dir)
{
    std::string fddir = "/proc/" + std::to_string(pid) + "/fd";
    DIR *d = opendir(fddir.c_str());
    int n = 0;
    struct dirent *de;
    while (d != nullptr && (de = readdir(d)) != nullptr) {
        char target[4096];
        ssize_t len = readlink((fddir + "/" + de->d_name).c_str(), target, sizeof(target) - 1);
        if (len > 0) {
            target[len] = 0;
            if (std::string(target).rfind(data_dir + "/obj/", 0) == 0) {
                n++;
            }
        }
    }
    if (d != nullptr) {
        closedir(d);
    }
    return n;
}

TEST(ServerIoLimits, IdleObjectsAreClosedBeyondMaxOpen)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1, {"--set", "max_open=16"}));
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    const int nobj = 100;
    int most = 0;
    for (int i = 0; i < nobj; i++) {
        std::vector<ps_region_t> regs = {{(uint64_t)i, 1000}};
        ASSERT_EQ(c.write(1000 + i, regs, payload_for(regs, (uint8_t)i)).status(), PS_OK);
        most = std::max(most, open_objects(cluster.pid(0), cluster.data_dir(0)));
    }
    printf("%d objects written with max_open=16: at most %d open at once\n", nobj, most);
    EXPECT_LE(most, 17);
    for (int i = 0; i < nobj; i++) {
        std::vector<ps_region_t> regs = {{(uint64_t)i, 1000}};
        raw_reply r = c.read(1000 + i, regs);
        ASSERT_EQ(r.status(), PS_OK);
        EXPECT_EQ(r.data, payload_for(regs, (uint8_t)i)) << "object " << i;
        raw_reply st = c.obj(PS_MSG_OBJ_STAT, 1000 + i);
        EXPECT_EQ(st.body<ps_obj_rep_t>().size, (uint64_t)i + 1000);
    }
}

/* The file of object fid on server 0 */
static std::string object_file(const ps_cluster &cluster, uint64_t fid)
{
    char rel[64];
    snprintf(rel, sizeof(rel), "/obj/%02x/%016llx", (unsigned)(fid >> 56), (unsigned long long)fid);
    return cluster.data_dir(0) + rel;
}

/*
 * A removal takes the object's name and leaves the last close of its
 * file, where the file system frees the blocks (a 512 MiB object's took
 * 0.2 s), to the server's reaper thread (pss_reaper.c), whether the worker
 * had the object open or opens it for the purpose, and is answered after
 * that close: then no descriptor of the process points at a removed
 * object. The server stops cleanly.
 */
TEST(ServerIoLimits, RemovedObjectsAreClosedOffTheWorker)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1, {"--set", "max_open=16"}));
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    const int nobj = 40; /* most of them closed again (max_open) */
    std::vector<ps_region_t> regs = {{0, 1 << 20}};
    for (int i = 0; i < nobj; i++) {
        ASSERT_EQ(c.write(2000 + i, regs, payload_for(regs, (uint8_t)i)).status(), PS_OK);
    }
    ASSERT_GT(open_objects(cluster.pid(0), cluster.data_dir(0)), 0);
    for (int i = 0; i < nobj; i++) {
        raw_reply rm = c.obj(PS_MSG_OBJ_REMOVE, 2000 + i);
        ASSERT_TRUE(rm.received);
        ASSERT_EQ(rm.status(), PS_OK);
        EXPECT_NE(access(object_file(cluster, 2000 + i).c_str(), F_OK), 0) << "object " << i;
    }
    /* (each answer comes after the reaper's close: the space is free) */
    EXPECT_EQ(open_objects(cluster.pid(0), cluster.data_dir(0)), 0)
        << "descriptors of removed objects still open";
    EXPECT_EQ(c.read(2000, regs).status(), PS_ERR_STALE);
    int status = cluster.stop(0);
    ASSERT_TRUE(WIFEXITED(status)) << cluster.log(0);
    EXPECT_EQ(WEXITSTATUS(status), 0) << cluster.log(0);
}

/*
 * A truncate to 0 gives the object a new file and leaves the old one's
 * last close, where its blocks are freed, to the reaper, and is answered
 * after it: a new inode under the name, no descriptor of the old file;
 * the object reads as empty and takes new writes.
 */
TEST(ServerIoLimits, TruncateToZeroTakesANewFile)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1));
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    const uint64_t fid = 0x7e7e, mib = 1 << 20;
    std::vector<ps_region_t> regs = {{0, 4 * mib}};
    ASSERT_EQ(c.write(fid, regs, payload_for(regs, 5)).status(), PS_OK);
    std::string path = object_file(cluster, fid);
    struct stat before, after;
    ASSERT_EQ(stat(path.c_str(), &before), 0);

    raw_reply t = c.obj(PS_MSG_OBJ_TRUNCATE, fid, 0);
    ASSERT_TRUE(t.received);
    ASSERT_EQ(t.status(), PS_OK);
    EXPECT_EQ(t.body<ps_obj_rep_t>().size, 0u);
    EXPECT_EQ(t.body<ps_obj_rep_t>().blocks, 0u) << "the old file's blocks are still the object's";
    ASSERT_EQ(stat(path.c_str(), &after), 0);
    EXPECT_NE(before.st_ino, after.st_ino) << "the object kept its old file";
    raw_reply r = c.read(fid, {{0, mib}});
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_TRUE(r.data == std::vector<uint8_t>(mib, 0)) << "old bytes after a truncate to 0";

    std::vector<ps_region_t> again = {{mib, 1000}};
    ASSERT_EQ(c.write(fid, again, payload_for(again, 6)).status(), PS_OK);
    r = c.read(fid, {{mib - 10, 1010}});
    ASSERT_EQ(r.status(), PS_OK);
    std::vector<uint8_t> want(10, 0), p = payload_for(again, 6);
    want.insert(want.end(), p.begin(), p.end());
    EXPECT_TRUE(r.data == want);
    raw_reply st = c.obj(PS_MSG_OBJ_STAT, fid);
    EXPECT_EQ(st.body<ps_obj_rep_t>().size, mib + 1000);

    /* the worker holds the new file only */
    EXPECT_EQ(open_objects(cluster.pid(0), cluster.data_dir(0)), 1) << "the old file is still open";

    /* the new file's size and bytes survive a restart */
    ASSERT_TRUE(cluster.restart(0, true));
    raw_client c2;
    ASSERT_TRUE(c2.connect(cluster.host(0), cluster.port(0)));
    st = c2.obj(PS_MSG_OBJ_STAT, fid);
    ASSERT_EQ(st.status(), PS_OK);
    EXPECT_EQ(st.body<ps_obj_rep_t>().size, mib + 1000);
    r = c2.read(fid, {{mib - 10, 1010}});
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_TRUE(r.data == want);
}

/* A field of /proc/PID/status ("VmRSS:", "VmHWM:"), in KiB (-1: not found). */
static long status_kib(pid_t pid, const std::string &key)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(f, line)) {
        if (line.compare(0, key.size(), key) == 0) {
            return atol(line.c_str() + key.size());
        }
    }
    return -1;
}

static long rss_kib(pid_t pid)
{
    return status_kib(pid, "VmRSS:");
}

/*
 * max_inflight counts the memory a request's buffers take, not its bytes:
 * a write batch of 300 KiB is received into a whole 2 MiB huge page
 * (pss_buf_get), so 32 of them sent at once through an 8 MiB budget are
 * received 4 at a time (counted by their bytes, 27 at a time: 54 MiB).
 */
TEST(ServerIoLimits, BudgetCountsTheMemoryOfBuffers)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1, {"--set", "max_inflight=8m", "--set", "cache=0"}));
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    const int n = 32;
    const uint64_t len = 300 << 10;
    std::vector<uint64_t> ids;
    std::vector<std::vector<uint8_t>> data;
    for (int i = 0; i < n; i++) {
        std::vector<ps_region_t> reg = {{(uint64_t)i * len, len}};
        data.push_back(raw_client::io_data(reg, payload_for(reg, (uint8_t)i)));
    }
    long rss0 = rss_kib(cluster.pid(0));
    for (int i = 0; i < n; i++) {
        ps_io_req_t io{0xbbbb, len, 1, 0};
        ids.push_back(c.send(PS_MSG_OBJ_WRITE, &io, sizeof(io), data[i].data(), data[i].size()));
    }
    for (uint64_t id : ids) {
        raw_reply r = c.wait(id, 120);
        ASSERT_TRUE(r.received);
        EXPECT_EQ(r.status(), PS_OK);
    }
    long hwm = status_kib(cluster.pid(0), "VmHWM:");
    ps_region_t all{0, n * len};
    raw_reply back = c.read(0xbbbb, {all});
    ASSERT_EQ(back.status(), PS_OK);
    for (int i = 0; i < n; i++) {
        ASSERT_TRUE(std::equal(back.data.begin() + (long)(i * len),
                               back.data.begin() + (long)((i + 1) * len),
                               payload_for({{(uint64_t)i * len, len}}, (uint8_t)i).begin()))
            << "batch " << i;
    }
    printf("server VmRSS %ld KiB before %d writes of %llu KiB, peak %ld KiB (max_inflight 8 MiB)\n",
           rss0, n, (unsigned long long)(len >> 10), hwm);
    ASSERT_GT(rss0, 0);
    EXPECT_LT(hwm - rss0, 20 * 1024) << "the server held more than max_inflight by far";
}

/* Large writes beyond max_inflight wait for memory (rendezvous back-pressure)
 * instead of failing or exhausting it. */
TEST(ServerIoLimits, LargeRequestsWaitForMemory)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1, {"--set", "max_inflight=1m"}));
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    const int n = 6;
    const uint64_t len = 2 << 20;
    std::vector<uint64_t> ids;
    for (int i = 0; i < n; i++) {
        std::vector<ps_region_t> reg = {{(uint64_t)i * len + 11, len}};
        ps_io_req_t io{0xcccc, len, 1, 0};
        std::vector<uint8_t> d = raw_client::io_data(reg, payload_for(reg, (uint8_t)i));
        ids.push_back(c.send(PS_MSG_OBJ_WRITE, &io, sizeof(io), d.data(), d.size()));
    }
    for (uint64_t id : ids) {
        raw_reply r = c.wait(id, 120);
        ASSERT_TRUE(r.received);
        EXPECT_EQ(r.status(), PS_OK);
    }
    /* reads too: 6 x 2 MiB in flight through a 1 MiB budget */
    ids.clear();
    for (int i = 0; i < n; i++) {
        ps_region_t reg{(uint64_t)i * len + 11, len};
        ps_io_req_t io{0xcccc, len, 1, 0};
        ids.push_back(c.send(PS_MSG_OBJ_READ, &io, sizeof(io), &reg, sizeof(reg)));
    }
    for (int i = 0; i < n; i++) {
        raw_reply r = c.wait(ids[i], 120);
        ASSERT_TRUE(r.received);
        ASSERT_EQ(r.status(), PS_OK);
        EXPECT_TRUE(r.data == payload_for({{(uint64_t)i * len + 11, len}}, (uint8_t)i))
            << "batch " << i;
    }
}

/*
 * A read's reply buffer counts against max_inflight until the client has
 * taken the data, not only until the reply is posted: a client that sends
 * 8 reads of 16 MiB and never collects the (rendezvous) replies holds at
 * most the budget (before session 75 the server held all 8, 128 MiB, and
 * as many more as the client asked for). Once it collects them, the rest
 * are served.
 */
TEST(ServerIoLimits, RepliesNotCollectedStayWithinTheBudget)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(
        1, 1, {"--set", "max_inflight=32m", "--set", "max_batch=16m", "--set", "cache=0"}));
    raw_client w, r;
    ASSERT_TRUE(w.connect(cluster.host(0), cluster.port(0)));
    ASSERT_TRUE(r.connect(cluster.host(0), cluster.port(0)));
    const uint64_t len = 16 << 20;
    std::vector<ps_region_t> reg = {{0, len}};
    std::vector<uint8_t> data = payload_for(reg, 9);
    ASSERT_EQ(w.write(0xdddd, reg, data).status(), PS_OK);
    ASSERT_EQ(r.hello().status(), PS_OK); /* authenticated before it stops collecting */
    long hwm0 = status_kib(cluster.pid(0), "VmHWM:");
    std::vector<uint64_t> ids;
    for (int i = 0; i < 8; i++) {
        ps_io_req_t io{0xdddd, len, 1, 0};
        ids.push_back(r.send(PS_MSG_OBJ_READ, &io, sizeof(io), &reg[0], sizeof(reg[0])));
    }
    /* (the server serves what it may meanwhile; r does not progress) */
    ASSERT_EQ(w.obj(PS_MSG_OBJ_SYNC, 0xdddd).status(), PS_OK);
    usleep(1500 * 1000);
    long grew = status_kib(cluster.pid(0), "VmHWM:") - hwm0;
    printf("server VmHWM grew %ld KiB with 8 x 16 MiB replies not collected (max_inflight "
           "32 MiB)\n",
           grew);
    EXPECT_LT(grew, 64 * 1024) << "replies nobody collects held more than max_inflight";
    for (uint64_t id : ids) {
        raw_reply rep = r.wait(id, 120);
        ASSERT_TRUE(rep.received);
        ASSERT_EQ(rep.status(), PS_OK);
        EXPECT_TRUE(rep.data == data);
    }
}

/* ---- strided runs (PS_IO_RUNS) ---------------------------------------------- */

static std::vector<ps_region_t> expand(const std::vector<ps_run_t> &runs)
{
    std::vector<ps_region_t> regs;
    for (const ps_run_t &r : runs) {
        for (uint64_t k = 0; k < r.count; k++) {
            regs.push_back({r.off + k * r.stride, r.len});
        }
    }
    return regs;
}

static raw_reply call_runs(raw_client &c, uint16_t type, uint64_t fid,
                           const std::vector<ps_run_t> &runs, const std::vector<uint8_t> &payload,
                           uint64_t payload_len)
{
    ps_io_req_t io{fid, payload_len, (uint32_t)runs.size(), PS_IO_RUNS};
    std::vector<uint8_t> d(runs.size() * sizeof(ps_run_t));
    memcpy(d.data(), runs.data(), d.size());
    d.insert(d.end(), payload.begin(), payload.end());
    return c.call(type, &io, sizeof(io), d.data(), d.size());
}

/*
 * Writes and reads as runs, checked against a byte model: runs with gaps
 * inside a block and across blocks, a run that overlaps an earlier run of
 * the same batch (a later region wins), runs of two batches interleaved in
 * the same blocks, and reads as runs and as plain regions. A malformed run
 * list is refused and the server keeps serving.
 */
TEST_F(ServerIo, StridedRunsRoundTrip)
{
    const uint64_t fid = 0x7777;
    std::vector<uint8_t> model(1 << 20, 0);
    std::vector<std::vector<ps_run_t>> batches = {
        {{100, 8, 16, 5000}, {90000, 64, 4096, 20}, {200000, 3, 3, 1}},
        {{104, 4, 16, 10}, {300001, 512, 520, 300}}, /* overlaps the first run */
        {{108, 8, 16, 3000}},                        /* interleaves with the first */
    };
    uint8_t seed = 0;
    for (const auto &runs : batches) {
        std::vector<ps_region_t> regs = expand(runs);
        std::vector<uint8_t> p = payload_for(regs, ++seed);
        raw_reply w = call_runs(c, PS_MSG_OBJ_WRITE, fid, runs, p, p.size());
        ASSERT_TRUE(w.received);
        ASSERT_EQ(w.status(), PS_OK);
        EXPECT_EQ(w.body<ps_io_rep_t>().bytes, p.size());
        size_t at = 0;
        for (const ps_region_t &r : regs) {
            memcpy(&model[r.off], &p[at], r.len);
            at += r.len;
        }
    }
    uint64_t size = obj_stat(fid).size;
    ASSERT_EQ(300001u + 299 * 520 + 512, size);

    std::vector<ps_region_t> all = {{0, size + 100}};
    raw_reply r = c.read(fid, all);
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    std::vector<uint8_t> want(model.begin(), model.begin() + size);
    want.resize(size + 100, 0);
    EXPECT_TRUE(r.data == want) << "runs written differ from the byte model";

    std::vector<ps_run_t> rr = {{96, 16, 32, 700}, {size - 10, 5, 7, 3}}; /* last ends past size */
    std::vector<uint8_t> rwant;
    for (const ps_region_t &g : expand(rr)) {
        for (uint64_t i = 0; i < g.len; i++) {
            rwant.push_back(g.off + i < size ? model[g.off + i] : 0);
        }
    }
    r = call_runs(c, PS_MSG_OBJ_READ, fid, rr, {}, rwant.size());
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_TRUE(r.data == rwant) << "runs read differ from the byte model";

    ps_stats_rep_t st = stats();
    EXPECT_EQ(5000u + 20 + 1 + 10 + 300 + 3000, st.regions_written) << "regions, not runs";

    /* zero count, stride below the length: refused, nothing written */
    std::vector<ps_run_t> bad = {{0, 8, 16, 0}};
    r = call_runs(c, PS_MSG_OBJ_WRITE, fid, bad, {}, 0);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_PROTO);
    bad = {{0, 8, 4, 2}};
    std::vector<uint8_t> sixteen(16, 1);
    r = call_runs(c, PS_MSG_OBJ_WRITE, fid, bad, sixteen, 16);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_PROTO);
    r = c.read(fid, all);
    ASSERT_TRUE(r.received);
    EXPECT_TRUE(r.data == want) << "a refused run list changed the object";
}

/* ---- reads shared by several clients ------------------------------------------ */

namespace {

/*
 * Two clients read the same 1 MiB blocks one after the other (what two
 * processes' read caches do on an interleaved pattern), with a write and a
 * truncate between, each read checked against the byte model. Returns the
 * server's counters, and in *reply_disk the disk bytes its read replies
 * announced (each checked against the disk reads counted meanwhile).
 */
ps_stats_rep_t two_readers(const char *cache, uint64_t *reply_disk)
{
    const uint64_t fid = 0x7777, mib = 1 << 20, nblocks = 6;
    ps_stats_rep_t st{};
    ps_cluster cluster;
    raw_client a, b;
    /* no read-ahead: it would read blocks past the last one read (counted
     * here as disk reads); ServerReadAhead checks it */
    bool started =
        cluster.start(1, 1, {"--set", std::string("cache=") + cache, "--set", "read_ahead=0"});
    EXPECT_TRUE(started);
    if (!started || !a.connect(cluster.host(0), cluster.port(0)) ||
        !b.connect(cluster.host(0), cluster.port(0))) {
        ADD_FAILURE() << "no cluster";
        return st;
    }
    std::vector<ps_region_t> all = {{0, nblocks * mib}};
    std::vector<uint8_t> model = payload_for(all);
    EXPECT_EQ(a.write(fid, all, model).status(), PS_OK);
    *reply_disk = 0;
    auto check = [&](raw_client &cl, uint64_t k, const char *what) {
        ps_stats_rep_t s0{}, s1{};
        a.stats(&s0);
        raw_reply r = cl.read(fid, {{k * mib, mib}});
        ASSERT_TRUE(r.received);
        ASSERT_EQ(r.status(), PS_OK);
        a.stats(&s1);
        EXPECT_EQ(r.body<ps_io_rep_t>().disk_bytes, s1.disk_bytes_read - s0.disk_bytes_read)
            << what << ", block " << k << ": the reply's disk bytes";
        *reply_disk += r.body<ps_io_rep_t>().disk_bytes;
        std::vector<uint8_t> want(model.begin() + (long)(k * mib),
                                  model.begin() + (long)((k + 1) * mib));
        EXPECT_TRUE(r.data == want) << what << ", block " << k;
    };
    raw_client *cl[2] = {&a, &b};
    for (uint64_t k = 0; k < 4; k++) {
        check(a, k, "first reader");
        check(b, k, "second reader");
    }
    /* a write inside a block both read: the next reads see it */
    std::vector<ps_region_t> w = {{2 * mib + 100, 50}};
    std::vector<uint8_t> d = payload_for(w, 5);
    EXPECT_EQ(b.write(fid, w, d).status(), PS_OK);
    memcpy(&model[w[0].off], d.data(), d.size());
    for (raw_client *c : cl) {
        check(*c, 2, "after a write");
    }
    /* a truncate inside a block both read: zeros after it */
    EXPECT_EQ(a.obj(PS_MSG_OBJ_TRUNCATE, fid, 3 * mib + 10).status(), PS_OK);
    std::fill(model.begin() + (long)(3 * mib + 10), model.end(), 0);
    for (raw_client *c : cl) {
        check(*c, 3, "after a truncate");
    }
    a.stats(&st);
    return st;
}

} // namespace

/*
 * With the cache, the blocks just written and the second reader of each
 * block come from memory: fewer disk reads than reads, and the same bytes;
 * without it (0) every read goes to disk. Counters of both runs side by
 * side; no timings.
 */
TEST(ServerShare, SecondReaderOfABlockNeedsNoDiskRead)
{
    uint64_t with_disk, without_disk;
    ps_stats_rep_t with = two_readers("16m", &with_disk);
    ps_stats_rep_t without = two_readers("0", &without_disk);
    printf("two clients reading 12 1-MiB blocks in turn: with the cache %llu disk reads, "
           "without %llu\n",
           (unsigned long long)with.disk_reads, (unsigned long long)without.disk_reads);
    EXPECT_LT(with.disk_reads + 3, without.disk_reads);
    EXPECT_EQ(without_disk, 12u << 20) << "every read from disk, and its reply says so";
    EXPECT_LT(with_disk, without_disk);
}

/* ---- the cache (pss_cache.c) ----------------------------------------------------- */

/*
 * Random writes (aligned and not, some staged), reads (of one region or of
 * many short ones) and truncates of one object through a cache smaller than
 * the object (granules are evicted and reused), every read checked against
 * a byte model; then the counters show
 * that reading back what was just written needed no disk read.
 */
TEST(ServerCache, EveryReadMatchesTheModelThroughEvictions)
{
    const uint64_t fid = 0x7778, mib = 1 << 20, span = 6 * mib;
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1, {"--set", "cache=3m"}));
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    std::vector<uint8_t> model;
    /* a kept read, then a streaming write over it (not kept itself): the
     * next read sees the write */
    for (uint8_t round = 1; round <= 2; round++) {
        std::vector<ps_region_t> all = {{0, 2 * mib}};
        model = payload_for(all, round);
        ASSERT_EQ(c.write(fid, all, model).status(), PS_OK);
        raw_reply r = c.read(fid, {{4096, 64 * 1024}});
        ASSERT_EQ(r.status(), PS_OK);
        EXPECT_TRUE(std::equal(r.data.begin(), r.data.end(), model.begin() + 4096))
            << "round " << (int)round;
    }
    unsigned seed = 12345;
    auto rnd = [&seed](uint64_t n) { return (seed = seed * 1103515245u + 12345u) / 7 % n; };
    for (int op = 0; op < 300; op++) {
        uint64_t kind = rnd(10), off = rnd(span), len = 1 + rnd(kind < 2 ? 4096 : 2 * mib);
        if (kind < 5) {
            if (kind >= 2) {
                off &= ~4095ull; /* aligned: written whole, kept */
                len = (len + 4095) & ~4095ull;
            }
            std::vector<ps_region_t> w = {{off, len}};
            std::vector<uint8_t> d = payload_for(w, (uint8_t)op);
            ASSERT_EQ(c.write(fid, w, d).status(), PS_OK) << "op " << op;
            if (model.size() < off + len) {
                model.resize(off + len, 0);
            }
            memcpy(&model[off], d.data(), len);
        } else if (kind < 9) {
            /* one region, or (kind 7-8) regions of 1-600 bytes every
             * stride: a span of several pieces, gathered from the cache's
             * memory when it holds them all (pss_span_hit) */
            std::vector<ps_region_t> rr = {{off, len}};
            if (kind >= 7) {
                uint64_t piece = 1 + rnd(600), stride = piece + rnd(3 * piece);
                rr.clear();
                for (uint64_t o = off; o + piece <= off + len && rr.size() < 256; o += stride) {
                    rr.push_back({o, piece});
                }
            }
            raw_reply r = c.read(fid, rr);
            ASSERT_EQ(r.status(), PS_OK) << "op " << op;
            std::vector<uint8_t> want;
            for (const ps_region_t &g : rr) {
                for (uint64_t b = g.off; b < g.off + g.len; b++) {
                    want.push_back(b < model.size() ? model[b] : 0);
                }
            }
            ASSERT_TRUE(r.data == want)
                << "read " << rr.size() << " regions at " << off << ", op " << op;
        } else {
            uint64_t size = rnd(span);
            ASSERT_EQ(c.obj(PS_MSG_OBJ_TRUNCATE, fid, size).status(), PS_OK) << "op " << op;
            model.resize(size, 0);
        }
    }
    /* what was just written, read back: no disk read (spans under a granule
     * and spans of several regions are kept; not whole granules of a stream),
     * also after the size is set beyond them (HDF5 does it at every close) */
    std::vector<ps_region_t> w = {{0, 256 * 1024}, {320 * 1024, 512 * 1024}};
    std::vector<uint8_t> d = payload_for(w, 7);
    ASSERT_EQ(c.write(fid, w, d).status(), PS_OK);
    ASSERT_EQ(c.obj(PS_MSG_OBJ_TRUNCATE, fid, span + mib).status(), PS_OK);
    /* and after a write of the gaps between them, whose batch spans them
     * (interleaved writers) */
    std::vector<ps_region_t> gap = {{256 * 1024, 64 * 1024}, {832 * 1024, 64 * 1024}};
    ASSERT_EQ(c.write(fid, gap, payload_for(gap, 8)).status(), PS_OK);
    ps_stats_rep_t before{}, after{};
    c.stats(&before);
    raw_reply r = c.read(fid, w);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_TRUE(r.data == d);
    c.stats(&after);
    printf("a read of two regions just written: %llu disk reads\n",
           (unsigned long long)(after.disk_reads - before.disk_reads));
    EXPECT_EQ(after.disk_reads, before.disk_reads);
}

/*
 * A read reply sent from the cache's memory (pss_cache_lend) keeps its
 * bytes while writes into the same granule run behind it: the client sends
 * a read of a kept megabyte (all of it, or an unaligned part), then small
 * writes into it, and only then takes the reply (so its data is still to
 * be sent when the writes are done); it must hold the bytes from
 * before the writes, and the next read those after them.
 */
TEST(ServerCache, RepliesFromTheCacheKeepTheirBytesUnderWrites)
{
    const uint64_t fid = 0x777a, mib = 1 << 20, quarter = mib / 4, small = 4096;
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1, {"--set", "cache=8m"}));
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    std::vector<uint8_t> model(mib);
    /* in quarters: spans under a granule are kept */
    auto write_kept = [&](uint8_t seed) {
        for (uint64_t off = 0; off < mib; off += quarter) {
            std::vector<ps_region_t> w = {{off, quarter}};
            std::vector<uint8_t> d = payload_for(w, seed);
            ASSERT_EQ(c.write(fid, w, d).status(), PS_OK);
            memcpy(&model[off], d.data(), quarter);
        }
    };
    ps_region_t all = {0, mib};
    for (int round = 0; round < 20; round++) {
        write_kept((uint8_t)(2 * round + 1));
        std::vector<uint8_t> before = model;
        /* all of it, or (odd rounds) an unaligned part: one read at a time,
         * since reads of one span merged into a job are copied, not lent */
        ps_region_t part = round % 2 ? ps_region_t{1000 + 7 * (uint64_t)round, 600000} : all;
        ps_io_req_t rq{fid, part.len, 1, 0};
        uint64_t rid = c.send(PS_MSG_OBJ_READ, &rq, sizeof(rq), &part, sizeof(part));
        std::vector<uint64_t> wids;
        for (uint64_t off = 0; off < mib; off += 16 * small) {
            std::vector<ps_region_t> w = {{off, small}};
            std::vector<uint8_t> d = payload_for(w, (uint8_t)(2 * round + 2));
            std::vector<uint8_t> data = raw_client::io_data(w, d);
            ps_io_req_t wq{fid, small, 1, 0};
            wids.push_back(c.send(PS_MSG_OBJ_WRITE, &wq, sizeof(wq), data.data(), data.size()));
            memcpy(&model[off], d.data(), small);
        }
        raw_reply r = c.wait(rid);
        ASSERT_EQ(r.status(), PS_OK);
        ASSERT_EQ(r.data.size(), part.len);
        ASSERT_TRUE(std::equal(r.data.begin(), r.data.end(), before.begin() + (long)part.off))
            << "round " << round << ": the reply changed under writes";
        for (uint64_t id : wids) {
            ASSERT_EQ(c.wait(id).status(), PS_OK);
        }
        raw_reply after = c.read(fid, {all});
        ASSERT_EQ(after.status(), PS_OK);
        ASSERT_TRUE(after.data == model) << "round " << round;
    }
}

/*
 * The cache's memory is faulted in after start, by a thread at idle
 * priority (the first fill of a fresh page costs a fault and a zeroing on
 * the I/O path otherwise): the server's resident memory reaches the
 * budget with no request sent.
 */
TEST(ServerCache, MemoryIsFaultedInAfterStart)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 2, {"--set", "cache=256m"}));
    long rss = rss_kib(cluster.pid(0));
    /* idle priority: seconds on an idle machine, longer beside busy tests */
    for (int i = 0; i < 1200 && rss < 256 * 1024; i++) {
        usleep(50 * 1000);
        rss = rss_kib(cluster.pid(0));
    }
    EXPECT_GE(rss, 256 * 1024) << "the server's VmRSS stayed below its 256 MiB cache";
}

/*
 * The whole budget is faulted in, so a budget above half of the machine's
 * memory (a typo: 1t) is cut to half, with a warning, rather than have
 * the server killed for memory; the server serves. (Stopped at once: the
 * thread faulting the memory in stops with it.)
 */
TEST(ServerCache, BudgetAboveHalfTheMemoryIsCut)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1, {"--set", "cache=1t"}));
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    std::vector<ps_region_t> w = {{0, 4096}};
    ASSERT_EQ(c.write(0x777b, w, payload_for(w, 3)).status(), PS_OK);
    cluster.stop(0);
    std::string log = read_file(cluster.log_path(0));
    EXPECT_NE(log.find("cache=1048576 MiB is more than half of this machine's"), std::string::npos)
        << log;
}

/*
 * The budget is the server's, not each worker's: a worker owns
 * budget / (2 x workers) and takes the other half as needed, so the one
 * worker serving the one busy object keeps 6 of 8 granules here (2 of its
 * own, 4 shared): five granules of kept spans read back need no disk read.
 * Once that object is truncated to nothing, the shared buffers go back, and
 * the other worker's busy object keeps five granules in turn.
 */
TEST(ServerCache, BusyObjectsShareTheBudget)
{
    const uint64_t mib = 1 << 20, piece = 256 * 1024;
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 2, {"--set", "cache=8m", "--set", "read_ahead=0"}));
    raw_client c[2];
    ASSERT_TRUE(c[0].connect(cluster.host(0), cluster.port(0)));
    raw_reply h = c[0].hello();
    ASSERT_EQ(h.status(), PS_OK);
    ASSERT_EQ(h.body<ps_hello_rep_t>().nworkers, 2u);
    uint32_t ports[2];
    memcpy(ports, h.data.data(), sizeof(ports));
    ASSERT_TRUE(c[1].connect(cluster.host(0), (uint16_t)ports[1]));

    std::vector<ps_region_t> w;
    for (uint64_t g = 0; g < 5; g++) { /* spans under a granule: kept */
        w.push_back({g * mib, piece});
        w.push_back({g * mib + 2 * piece, piece});
    }
    for (uint32_t k = 0; k < 2; k++) {
        const uint64_t fid = file_id_for_worker(k, 2, 0x777a);
        std::vector<uint8_t> d = payload_for(w, (uint8_t)(9 + k));
        ASSERT_EQ(c[k].write(fid, w, d).status(), PS_OK);
        ps_stats_rep_t before{}, after{};
        c[k].stats(&before);
        raw_reply r = c[k].read(fid, w);
        ASSERT_EQ(r.status(), PS_OK);
        EXPECT_TRUE(r.data == d);
        c[k].stats(&after);
        EXPECT_EQ(after.disk_reads, before.disk_reads)
            << "worker " << k << ": 5 granules of one object's kept spans did not stay in a "
            << "cache of 8 with 2 workers";
        ASSERT_EQ(c[k].obj(PS_MSG_OBJ_TRUNCATE, fid, 0).status(), PS_OK);
    }
}

/*
 * test_server_perf.cc: throughput of one daemon through raw requests.
 *
 * What it asserts is what the server's counters must say about the work:
 * every byte of aligned sequential batches reaches the disk once and needs
 * no read-modify-write, reads of a missing object touch no disk, and
 * 100,000 small regions per batch coalesce into a few read-modify-written
 * disk I/Os. The rates are recorded (gtest RecordProperty: printed, and in
 * the XML report with --gtest_output=xml), never asserted: the machines are
 * shared and drift by 2-3x. To measure, run bigger passes, next to fio on
 * the same disk in the same run (only the ratio means something):
 *   PS_PERF_MB=512 tests/integration/test_server --gtest_filter='ServerPerf.*'
 * PS_PERF_MB is MiB per sequential pass (default 16; fio runs only when it
 * is set).
 */
#include <gtest/gtest.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps_cluster.h"
#include "ps_time.h"
#include "test_server_raw.h"

using namespace ps_test;

/* Run fio and return its bandwidth in MiB/s (from the terse output), or -1. */
static double fio_mib_s(const std::string &file, const char *rw, const char *bs, uint64_t mib)
{
    std::string cmd = "fio --name=psperf --filename=" + file + " --size=" + std::to_string(mib) +
                      "m --ioengine=libaio --direct=1 --rw=" + rw + " --bs=" + bs +
                      " --iodepth=16 --minimal 2>/dev/null";
    FILE *p = popen(cmd.c_str(), "r");
    if (p == nullptr) {
        return -1;
    }
    char line[8192] = {0};
    size_t n = fread(line, 1, sizeof(line) - 1, p);
    pclose(p);
    line[n] = 0;
    /* terse v3: field 7 = read bw KiB/s, field 48 = write bw KiB/s (1-based) */
    std::vector<std::string> f;
    std::string cur;
    for (char *c = line; *c && *c != '\n'; c++) {
        if (*c == ';') {
            f.push_back(cur);
            cur.clear();
        } else {
            cur += *c;
        }
    }
    f.push_back(cur);
    if (f.size() < 48) {
        return -1;
    }
    double kib = atof(f[strcmp(rw, "write") == 0 ? 47 : 6].c_str());
    return kib / 1024.0;
}

/* Record a rate (MiB/s or M regions/s, rounded to an integer) as a test property. */
static void record_rate(const char *name, double value)
{
    ::testing::Test::RecordProperty(name, (int)(value + 0.5));
    printf("%s = %.1f\n", name, value);
}

/* Stream `total` bytes in `batch`-byte aligned batches with `window` in
 * flight; returns MiB/s. */
static double stream(raw_client &c, uint64_t fid, bool write, uint64_t total, uint64_t batch,
                     int window)
{
    std::vector<uint8_t> payload(batch, 0x3c);
    std::vector<uint64_t> inflight;
    uint64_t off = 0;
    uint64_t t0 = ps_time_ns();
    while (off < total || !inflight.empty()) {
        while (off < total && (int)inflight.size() < window) {
            ps_region_t reg{off, batch};
            ps_io_req_t io{fid, batch, 1, 0};
            if (write) {
                std::vector<uint8_t> d = raw_client::io_data({reg}, payload);
                inflight.push_back(c.send(PS_MSG_OBJ_WRITE, &io, sizeof(io), d.data(), d.size()));
            } else {
                inflight.push_back(c.send(PS_MSG_OBJ_READ, &io, sizeof(io), &reg, sizeof(reg)));
            }
            off += batch;
        }
        raw_reply r = c.wait(inflight.front(), 120);
        EXPECT_TRUE(r.received);
        EXPECT_EQ(r.status(), PS_OK);
        inflight.erase(inflight.begin());
    }
    if (write) {
        EXPECT_EQ(c.obj(PS_MSG_OBJ_SYNC, fid).status(), PS_OK);
    }
    return (double)total / (1 << 20) / ((double)(ps_time_ns() - t0) * 1e-9);
}

static ps_stats_rep_t stats_now(raw_client &c)
{
    ps_stats_rep_t s{};
    EXPECT_TRUE(c.stats(&s).received);
    return s;
}

class ServerPerf : public ::testing::Test {
  protected:
    void SetUp() override
    {
        const char *env = getenv("PS_PERF_MB");
        measuring_ = env != nullptr;
        mib_ = measuring_ ? strtoull(env, nullptr, 10) : 16;
        ASSERT_GT(mib_, 0u);
        /* the disk's path: reads of bytes just written would come from the cache */
        ASSERT_TRUE(cluster_.start(1, 1, {"--set", "cache=0"}));
        ASSERT_TRUE(c_.connect(cluster_.host(0), cluster_.port(0)));
        ASSERT_TRUE(c_.hello().received);
    }

    ps_cluster cluster_;
    raw_client c_;
    bool measuring_ = false;
    uint64_t mib_ = 0;
};

TEST_F(ServerPerf, SequentialBatchesGoToDiskOnce)
{
    const uint64_t total = mib_ << 20, batch = total < (4u << 20) ? total : 4u << 20;
    const uint64_t nbatches = (total + batch - 1) / batch;

    ps_stats_rep_t a = stats_now(c_);
    double sw = stream(c_, 1, true, total, batch, 8);
    double sw2 = stream(c_, 1, true, total, batch, 8); /* overwrite: blocks allocated */
    ps_stats_rep_t b = stats_now(c_);
    EXPECT_EQ(b.write_batches - a.write_batches, 2 * nbatches);
    EXPECT_EQ(b.bytes_written - a.bytes_written, 2 * nbatches * batch);
    EXPECT_EQ(b.disk_bytes_written - a.disk_bytes_written, 2 * nbatches * batch);
    EXPECT_EQ(b.rmw_reads - a.rmw_reads, 0u);

    double sr = stream(c_, 1, false, total, batch, 8);
    ps_stats_rep_t c = stats_now(c_);
    EXPECT_EQ(c.bytes_read - b.bytes_read, nbatches * batch);
    EXPECT_EQ(c.disk_bytes_read - b.disk_bytes_read, nbatches * batch);

    double sn = stream(c_, 999, false, total, batch, 8); /* no object: network only */
    ps_stats_rep_t d = stats_now(c_);
    EXPECT_EQ(d.bytes_read - c.bytes_read, nbatches * batch);
    EXPECT_EQ(d.disk_reads - c.disk_reads, 0u);

    record_rate("write_mib_s", sw);
    record_rate("overwrite_mib_s", sw2);
    record_rate("read_mib_s", sr);
    record_rate("read_missing_object_mib_s", sn);
    if (measuring_) {
        double fw = fio_mib_s(cluster_.dir() + "/fio.dat", "write", "1m", mib_);
        double fr = fio_mib_s(cluster_.dir() + "/fio.dat", "read", "1m", mib_);
        record_rate("fio_write_mib_s", fw);
        record_rate("fio_read_mib_s", fr);
    }
}

TEST_F(ServerPerf, SmallRegionsCoalesceIntoFewDiskWrites)
{
    /* 64-byte regions with 64-byte gaps, 100,000 per batch, 4 batches in flight */
    const uint32_t n = 100000;
    const int nbatches = measuring_ ? 16 : 4;
    std::vector<ps_region_t> regs(n);
    for (uint32_t i = 0; i < n; i++) {
        regs[i] = {i * 128ull, 64};
    }
    std::vector<uint8_t> payload(n * 64, 0x7e);
    std::vector<uint8_t> d = raw_client::io_data(regs, payload);

    ps_stats_rep_t a = stats_now(c_);
    uint64_t t0 = ps_time_ns();
    std::vector<uint64_t> ids;
    for (int k = 0; k < nbatches; k++) {
        ps_io_req_t io{(uint64_t)(100 + k), payload.size(), n, 0};
        ids.push_back(c_.send(PS_MSG_OBJ_WRITE, &io, sizeof(io), d.data(), d.size()));
        if (ids.size() >= 4) {
            ASSERT_EQ(c_.wait(ids.front(), 120).status(), PS_OK);
            ids.erase(ids.begin());
        }
    }
    for (uint64_t id : ids) {
        ASSERT_EQ(c_.wait(id, 120).status(), PS_OK);
    }
    for (int k = 0; k < nbatches; k++) { /* partial blocks wait in the write-back stage */
        ASSERT_EQ(c_.obj(PS_MSG_OBJ_SYNC, (uint64_t)(100 + k)).status(), PS_OK);
    }
    double dt = (double)(ps_time_ns() - t0) * 1e-9;
    ps_stats_rep_t b = stats_now(c_);

    uint64_t regions = b.regions_written - a.regions_written;
    uint64_t disk_writes = b.disk_writes - a.disk_writes;
    EXPECT_EQ(regions, (uint64_t)n * nbatches);
    EXPECT_EQ(b.bytes_written - a.bytes_written, (uint64_t)payload.size() * nbatches);
    EXPECT_GT(disk_writes, 0u);
    EXPECT_LE(disk_writes * 1000, regions); /* coalesced: >= 1000 regions per disk write */
    /* every span has gaps, so every one is read first */
    EXPECT_EQ(b.rmw_reads - a.rmw_reads, disk_writes);

    record_rate("small_regions_payload_mib_s", (double)payload.size() * nbatches / (1 << 20) / dt);
    record_rate("small_regions_mregions_s", (double)regions / dt / 1e6);
}

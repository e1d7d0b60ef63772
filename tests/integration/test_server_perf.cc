/*
 * test_server_perf.cc: throughput of one daemon through raw requests,
 * measured next to fio on the same disk in the same run (the machines are
 * shared and drift by 2-3x, so only the ratio means something). Disabled by
 * default; run with
 *   tests/integration/test_server --gtest_also_run_disabled_tests \
 *       --gtest_filter='ServerPerf.*'
 * Sizes: PS_PERF_MB (default 512) MiB per pass.
 */
#include <gtest/gtest.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ps_cluster.h"
#include "test_server_raw.h"

using namespace ps_test;

static double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

/* Stream `total` bytes in `batch`-byte aligned batches with `window` in flight. */
static double stream(raw_client &c, uint64_t fid, bool write, uint64_t total, uint64_t batch,
                     int window)
{
    std::vector<uint8_t> payload(batch, 0x3c);
    std::vector<uint64_t> inflight;
    uint64_t off = 0;
    double t0 = now_s();
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
    return (double)total / (1 << 20) / (now_s() - t0);
}

TEST(ServerPerf, DISABLED_SequentialAndSmallRegions)
{
    const char *env = getenv("PS_PERF_MB");
    uint64_t mib = env ? strtoull(env, nullptr, 10) : 512;
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1));
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    ASSERT_TRUE(c.hello().received);

    double fw = fio_mib_s(cluster.dir() + "/fio.dat", "write", "1m", mib);
    double sw = stream(c, 1, true, mib << 20, 4 << 20, 8);
    double sw2 = stream(c, 1, true, mib << 20, 4 << 20, 8); /* overwrite: blocks allocated */
    double fr = fio_mib_s(cluster.dir() + "/fio.dat", "read", "1m", mib);
    double sr = stream(c, 1, false, mib << 20, 4 << 20, 8);
    double sn = stream(c, 999, false, mib << 20, 4 << 20, 8); /* no object: network only */
    printf("reads of a missing object (no disk I/O, network only): %.0f MiB/s\n", sn);
    printf("sequential %llu MiB in 4 MiB batches, 8 in flight: server write %.0f MiB/s "
           "(overwrite %.0f) vs fio %.0f (ratio %.2f); server read %.0f MiB/s vs fio %.0f "
           "(ratio %.2f)\n",
           (unsigned long long)mib, sw, sw2, fw, fw > 0 ? sw2 / fw : 0, sr, fr,
           fr > 0 ? sr / fr : 0);

    /* 64-byte regions with 64-byte gaps, 100,000 per batch, 4 batches in flight */
    const uint32_t n = 100000;
    std::vector<ps_region_t> regs(n);
    for (uint32_t i = 0; i < n; i++) {
        regs[i] = {i * 128ull, 64};
    }
    std::vector<uint8_t> payload(n * 64, 0x7e);
    std::vector<uint8_t> d = raw_client::io_data(regs, payload);
    ps_stats_rep_t a{}, b{};
    ASSERT_TRUE(c.stats(&a).received);
    double t0 = now_s();
    const int nbatches = 16;
    std::vector<uint64_t> ids;
    for (int k = 0; k < nbatches; k++) {
        ps_io_req_t io{(uint64_t)(100 + k), payload.size(), n, 0};
        ids.push_back(c.send(PS_MSG_OBJ_WRITE, &io, sizeof(io), d.data(), d.size()));
        if (ids.size() >= 4) {
            ASSERT_EQ(c.wait(ids.front(), 120).status(), PS_OK);
            ids.erase(ids.begin());
        }
    }
    for (uint64_t id : ids) {
        ASSERT_EQ(c.wait(id, 120).status(), PS_OK);
    }
    double dt = now_s() - t0;
    ASSERT_TRUE(c.stats(&b).received);
    printf("small regions: %u x 64 B (64 B gaps) x %d batches: %.0f MiB/s payload, %.2f M "
           "regions/s, %llu disk writes + %llu rmw reads\n",
           n, nbatches, (double)payload.size() * nbatches / (1 << 20) / dt,
           (double)n * nbatches / dt / 1e6, (unsigned long long)(b.disk_writes - a.disk_writes),
           (unsigned long long)(b.rmw_reads - a.rmw_reads));
}

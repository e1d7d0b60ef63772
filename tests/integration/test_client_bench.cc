/*
 * test_client_bench.cc: the measurements behind the client's batching
 * defaults (buffer_size, buffer_count, max_regions). `make check` runs the
 * sweeps small (1/64 of the sizes, one round: a check of the sweep and of
 * the batching model, about 15 s); the measurement is
 *
 *   PSC_BENCH_SCALE=1 PSC_BENCH_REPS=3 tests/integration/test_client_bench
 *
 * Every run checks what it measures: the data read back is the data
 * written, and the servers received as many batches and regions as the
 * case's settings imply (a model of the client's batching). Timings are
 * printed and recorded as test properties (--gtest_output=xml:FILE), never
 * asserted.
 *
 * PSC_BENCH_REPS (default 1) rounds; PSC_BENCH_SCALE (default 64) divides
 * the sizes.
 *
 * Two local servers (1 worker each) on this machine's disk. Every case runs
 * once per round, rounds (PSC_BENCH_REPS) visit the cases in a
 * new random order, and medians are printed with a disk baseline measured
 * every round (O_DIRECT, 4 MiB, queue depth 1, in the servers' data
 * directory): shared machines drift by 2-3x within minutes, and this way the
 * drift hits every case alike.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "ps_config.h"
#include "test_client_util.h"

using namespace psc_test;

namespace {

int reps()
{
    const char *e = getenv("PSC_BENCH_REPS");
    return e != nullptr && atoi(e) > 0 ? atoi(e) : 1;
}

/* PSC_BENCH_SCALE=N divides the bytes moved per case by N (at least one
 * call); 64 unless set, so that `make check` runs the sweep quickly. */
uint64_t scaled(uint64_t bytes)
{
    const char *e = getenv("PSC_BENCH_SCALE");
    return bytes / (e != nullptr && atoi(e) > 0 ? (uint64_t)atoi(e) : 64);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* O_DIRECT sequential write then read of `bytes` in 4 MiB blocks, MiB/s. */
void disk_baseline(const std::string &dir, uint64_t bytes, double *w, double *r)
{
    std::string path = dir + "/disk-baseline";
    const size_t bs = 4 << 20;
    void *buf = nullptr;
    *w = *r = 0;
    if (posix_memalign(&buf, 4096, bs) != 0) {
        return;
    }
    memset(buf, 0x42, bs);
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);
    if (fd >= 0) {
        double t0 = now_s();
        for (uint64_t off = 0; off < bytes; off += bs) {
            if (pwrite(fd, buf, bs, (off_t)off) != (ssize_t)bs) {
                break;
            }
        }
        fdatasync(fd);
        *w = bytes / (now_s() - t0) / 1048576;
        t0 = now_s();
        for (uint64_t off = 0; off < bytes; off += bs) {
            if (pread(fd, buf, bs, (off_t)off) != (ssize_t)bs) {
                break;
            }
        }
        *r = bytes / (now_s() - t0) / 1048576;
        close(fd);
        unlink(path.c_str());
    }
    free(buf);
}

class ClientBench : public ::testing::Test {
  public:
    void SetUp() override
    {
        ASSERT_TRUE(cluster_.start(2, 1));
        PSC_ASSERT_OK(connect(cluster_, {}, &fs_));
    }
    void TearDown() override
    {
        if (fs_ != nullptr) {
            pstripe_disconnect(fs_);
        }
    }

  public:
    /* Write then read `total` bytes as calls of `regs` regions each (the
     * region list is shifted by `call_span` per call) with the file options
     * `settings`, MiB/s of payload; checks the data and the batch counts. */
    void run_once(const std::vector<std::pair<std::string, std::string>> &settings,
                  const std::vector<pstripe_region_t> &regs, uint64_t call_span, uint64_t total,
                  double *w, double *r)
    {
        pstripe_layout_t layout = {1 << 20, 2, 0};
        pstripe_file_t *f;
        uint64_t per_call = total_length(regs);
        uint64_t calls = std::max<uint64_t>(1, total / per_call);
        std::vector<uint8_t> mem(per_call), back(per_call);
        struct iovec iov = {mem.data(), mem.size()}, biov = {back.data(), back.size()};
        std::vector<pstripe_region_t> shifted(regs);
        pstripe_server_stats_t before, after;

        for (size_t i = 0; i < mem.size(); i++) {
            mem[i] = (uint8_t)(i * 7 + 1);
        }
        pstripe_unlink(fs_, "/bench");
        PSC_ASSERT_OK(pstripe_open(fs_, "/bench", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, &layout, &f));
        for (auto &kv : settings) {
            PSC_ASSERT_OK(pstripe_file_set_option(f, kv.first.c_str(), kv.second.c_str()));
        }
        batch_model model = expected_batches(f, regs, layout);
        PSC_ASSERT_OK(sum_stats(fs_, &before));
        double t0 = now_s();
        for (uint64_t c = 0; c < calls; c++) {
            for (size_t i = 0; i < regs.size(); i++) {
                shifted[i].offset = regs[i].offset + c * call_span;
            }
            PSC_ASSERT_OK(pstripe_write_list(f, shifted.data(), shifted.size(), &iov, 1));
        }
        *w = calls * per_call / (now_s() - t0) / 1048576;
        t0 = now_s();
        for (uint64_t c = 0; c < calls; c++) {
            uint64_t nread;
            for (size_t i = 0; i < regs.size(); i++) {
                shifted[i].offset = regs[i].offset + c * call_span;
            }
            std::fill(back.begin(), back.end(), 0);
            PSC_ASSERT_OK(pstripe_read_list(f, shifted.data(), shifted.size(), &biov, 1, &nread));
            ASSERT_EQ(nread, per_call);
            ASSERT_TRUE(back == mem) << "call " << c << " read back other data";
        }
        *r = calls * per_call / (now_s() - t0) / 1048576;
        PSC_ASSERT_OK(sum_stats(fs_, &after));
        EXPECT_EQ(after.write_batches - before.write_batches, calls * model.batches);
        EXPECT_EQ(after.read_batches - before.read_batches, calls * model.batches);
        EXPECT_EQ(after.regions_written - before.regions_written, calls * model.regions);
        EXPECT_EQ(after.bytes_written - before.bytes_written, calls * per_call);
        PSC_ASSERT_OK(pstripe_close(f));
        PSC_ASSERT_OK(pstripe_unlink(fs_, "/bench"));
    }

    struct batch_model {
        uint64_t batches = 0, regions = 0;
    };

    /* Batches and regions of one call, as the client cuts it: regions split
     * at stripes into pieces per target (adjacent ones merged), packed into
     * batches of at most buffer_size bytes and max_regions regions. */
    batch_model expected_batches(pstripe_file_t *f, const std::vector<pstripe_region_t> &regs,
                                 const pstripe_layout_t &layout)
    {
        char buf[64];
        uint64_t buffer_size = 0, max_regions = 0;
        batch_model m;

        EXPECT_EQ(pstripe_file_get_option(f, "buffer_size", buf, sizeof(buf)), PS_OK);
        EXPECT_EQ(ps_parse_size(buf, &buffer_size), PS_OK);
        EXPECT_EQ(pstripe_file_get_option(f, "max_regions", buf, sizeof(buf)), PS_OK);
        max_regions = strtoull(buf, nullptr, 10);
        std::vector<std::vector<std::pair<uint64_t, uint64_t>>> pieces(layout.stripe_count);
        for (const auto &r : regs) {
            for (uint64_t off = r.offset; off < r.offset + r.length;) {
                uint64_t stripe = off / layout.stripe_size;
                uint64_t end = std::min(r.offset + r.length, (stripe + 1) * layout.stripe_size);
                uint64_t obj =
                    stripe / layout.stripe_count * layout.stripe_size + off % layout.stripe_size;
                auto &t = pieces[stripe % layout.stripe_count];
                if (!t.empty() && t.back().first + t.back().second == obj) {
                    t.back().second += end - off;
                } else {
                    t.push_back({obj, end - off});
                }
                off = end;
            }
        }
        for (const auto &t : pieces) {
            uint64_t bytes = 0, nreg = 0;
            bool open = false;
            for (const auto &p : t) {
                for (uint64_t left = p.second; left > 0;) {
                    if (!open || bytes == buffer_size || nreg == max_regions) {
                        m.batches++;
                        bytes = nreg = 0;
                        open = true;
                    }
                    uint64_t take = std::min(left, buffer_size - bytes);
                    nreg++;
                    m.regions++;
                    bytes += take;
                    left -= take;
                }
            }
        }
        return m;
    }

    ps_test::ps_cluster cluster_;
    pstripe_fs_t *fs_ = nullptr;
};

/* One configuration of the sweep: settings and a workload. */
struct bench_case {
    std::vector<std::pair<std::string, std::string>> settings;
    std::string label;
    std::vector<pstripe_region_t> regs;
    uint64_t call_span, total;
    std::vector<double> w, r;
};

/*
 * Run every case once per round, in a shuffled order, for PSC_BENCH_REPS
 * rounds, with a disk baseline per round: the machine's drift then hits
 * every case alike. Prints medians.
 */
void sweep(ClientBench *t, const std::string &dir, std::vector<bench_case> &cases,
           const char *header)
{
    std::mt19937_64 rng(1);
    std::vector<double> dws, drs;
    std::vector<size_t> order(cases.size());
    for (size_t i = 0; i < order.size(); i++) {
        order[i] = i;
    }
    for (int rep = 0; rep < reps(); rep++) {
        double dw, dr;
        disk_baseline(dir, std::max<uint64_t>(scaled(256ull << 20), 4 << 20), &dw, &dr);
        dws.push_back(dw);
        drs.push_back(dr);
        std::shuffle(order.begin(), order.end(), rng);
        for (size_t i : order) {
            bench_case &c = cases[i];
            double w, r;
            t->run_once(c.settings, c.regs, c.call_span, scaled(c.total), &w, &r);
            if (::testing::Test::HasFatalFailure()) {
                return;
            }
            c.w.push_back(w);
            c.r.push_back(r);
        }
        printf("round %d done (disk %.0f / %.0f MiB/s, load %s)\n", rep, dw, dr,
               ps_test::read_file("/proc/loadavg").substr(0, 14).c_str());
        fflush(stdout);
    }
    printf("disk baseline, O_DIRECT 4 MiB depth 1, median of rounds: write %.0f MiB/s, "
           "read %.0f MiB/s\n",
           median(dws), median(drs));
    printf("%s %12s %12s   (min-max)\n", header, "write MiB/s", "read MiB/s");
    ::testing::Test::RecordProperty("disk_write_mib_s", std::to_string(median(dws)));
    ::testing::Test::RecordProperty("disk_read_mib_s", std::to_string(median(drs)));
    for (auto &c : cases) {
        std::string key;
        for (char ch : c.label) {
            if (isalnum((unsigned char)ch)) {
                key += ch;
            } else if (!key.empty() && key.back() != '_') {
                key += '_';
            }
        }
        ::testing::Test::RecordProperty(key + "_write_mib_s", std::to_string(median(c.w)));
        ::testing::Test::RecordProperty(key + "_read_mib_s", std::to_string(median(c.r)));
        printf("%s %12.0f %12.0f   (w %.0f-%.0f, r %.0f-%.0f)\n", c.label.c_str(), median(c.w),
               median(c.r), *std::min_element(c.w.begin(), c.w.end()),
               *std::max_element(c.w.begin(), c.w.end()), *std::min_element(c.r.begin(), c.r.end()),
               *std::max_element(c.r.begin(), c.r.end()));
    }
}

/* Contiguous 64 MiB calls (32 MiB per server): how deep and how large the
 * pipeline of batches must be. */
TEST_F(ClientBench, BufferSizeAndCount)
{
    const uint64_t call = 64ull << 20;
    std::vector<bench_case> cases;
    char label[64];

    for (const char *bs : {"256k", "1m", "4m", "16m"}) {
        for (const char *bc : {"1", "2", "4", "8"}) {
            snprintf(label, sizeof(label), "%-12s %-12s", bs, bc);
            cases.push_back({{{"buffer_size", bs}, {"buffer_count", bc}},
                             label,
                             {{0, call}},
                             call,
                             256ull << 20,
                             {},
                             {}});
        }
    }
    sweep(this, cluster_.data_dir(0), cases, "buffer_size  buffer_count");
}

/* Small noncontiguous regions: 64 B with 64 B gaps (100,000 per call) and
 * 4 KiB with 4 KiB gaps (16,384 per call): how many regions a batch should
 * carry. */
TEST_F(ClientBench, MaxRegions)
{
    struct workload {
        const char *name;
        uint64_t len, gap, n;
    };
    std::vector<bench_case> cases;
    char label[96];

    for (const workload &wl :
         {workload{"64B/64B", 64, 64, 100000}, workload{"4KiB/4KiB", 4096, 4096, 16384}}) {
        std::vector<pstripe_region_t> regs(wl.n);
        for (uint64_t i = 0; i < wl.n; i++) {
            regs[i] = {i * (wl.len + wl.gap), wl.len};
        }
        for (const char *mr : {"1024", "4096", "16384", "65536", "262144"}) {
            for (const char *bs : {"1m", "4m"}) {
                snprintf(label, sizeof(label), "%-10s %-12s %-12s", wl.name, mr, bs);
                cases.push_back({{{"max_regions", mr}, {"buffer_size", bs}, {"buffer_count", "4"}},
                                 label,
                                 regs,
                                 wl.n * (wl.len + wl.gap),
                                 4 * wl.n * wl.len,
                                 {},
                                 {}});
            }
        }
    }
    sweep(this, cluster_.data_dir(0), cases, "workload   max_regions  buffer_size ");
}

} // namespace

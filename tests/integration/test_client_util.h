/*
 * test_client_util.h: helpers for the client library's integration tests
 * (test_client_*.cc): connecting to a ps_cluster, an in-memory model of a
 * file, random region lists and scattered memory, server counters, and
 * waiting for a condition with a deadline.
 */
#ifndef TEST_CLIENT_UTIL_H
#define TEST_CLIENT_UTIL_H

#include <gtest/gtest.h>

#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "ps_cluster.h"
#include "ps_time.h"
#include "pstripe.h"

#define PSC_ASSERT_OK(_expr)                                                                       \
    do {                                                                                           \
        ps_status_t _s = (_expr);                                                                  \
        ASSERT_EQ(_s, PS_OK) << #_expr << ": " << pstripe_strerror(_s) << ": "                     \
                             << pstripe_last_error();                                              \
    } while (0)

#define PSC_EXPECT_OK(_expr)                                                                       \
    do {                                                                                           \
        ps_status_t _s = (_expr);                                                                  \
        EXPECT_EQ(_s, PS_OK) << #_expr << ": " << pstripe_strerror(_s) << ": "                     \
                             << pstripe_last_error();                                              \
    } while (0)

namespace psc_test {

/* Monotonic time in seconds. */
inline double now_s()
{
    return (double)ps_time_ns() / 1e9;
}

/*
 * Poll cond() until it is true or `limit` seconds have passed; returns its
 * last value. The only place a test may sleep: briefly, between polls.
 */
template <typename Cond> bool wait_until(Cond cond, double limit, double poll_s = 0.005)
{
    double end = now_s() + limit;
    for (;;) {
        if (cond()) {
            return true;
        }
        if (now_s() >= end) {
            return cond();
        }
        usleep((useconds_t)(poll_s * 1e6));
    }
}

/* Connect to the cluster's servers with extra "name=value" settings. */
inline ps_status_t connect(const ps_test::ps_cluster &cluster,
                           const std::vector<std::string> &settings, pstripe_fs_t **fs)
{
    std::vector<const char *> argv;
    for (const auto &s : settings) {
        argv.push_back(s.c_str());
    }
    argv.push_back(nullptr);
    std::string csv = cluster.servers_csv();
    return pstripe_connect_servers(csv.c_str(), argv.data(), fs);
}

/* The expected content of a file: bytes written so far, zeros elsewhere. */
struct file_model {
    std::vector<uint8_t> data;
    uint64_t size = 0;

    void write(uint64_t off, const uint8_t *src, uint64_t len)
    {
        if (off + len > data.size()) {
            data.resize(off + len, 0);
        }
        memcpy(&data[off], src, len);
        size = std::max(size, off + len);
    }
    void truncate(uint64_t len)
    {
        if (len < data.size()) {
            std::fill(data.begin() + (long)len, data.end(), 0);
        }
        size = len;
    }
    uint8_t at(uint64_t off) const
    {
        return off < size && off < data.size() ? data[off] : 0;
    }
    /* Requested bytes below the file size. */
    uint64_t below_size(const std::vector<pstripe_region_t> &regions) const
    {
        uint64_t n = 0;
        for (const auto &r : regions) {
            if (r.offset < size) {
                n += std::min(r.offset + r.length, size) - r.offset;
            }
        }
        return n;
    }
};

/*
 * Memory for `total` bytes scattered over pieces of random lengths with
 * random gaps between them (noncontiguous memory), as an iovec list.
 */
struct scattered {
    std::vector<uint8_t> backing;
    std::vector<struct iovec> iov;
    uint64_t total = 0;

    scattered(uint64_t n, std::mt19937_64 &rng, uint64_t max_piece = 8192)
    {
        std::vector<std::pair<uint64_t, uint64_t>> pieces; /* (offset in backing, len) */
        uint64_t pos = 0, left = n;
        total = n;
        while (left > 0) {
            uint64_t len = std::min<uint64_t>(left, 1 + rng() % max_piece);
            pos += rng() % 64; /* gap */
            pieces.emplace_back(pos, len);
            pos += len;
            left -= len;
        }
        backing.assign(pos + 1, 0xEE);
        for (auto &p : pieces) {
            iov.push_back({&backing[p.first], (size_t)p.second});
        }
    }
    /* Fill the stream with bytes from rng. */
    void fill(std::mt19937_64 &rng)
    {
        for (auto &v : iov) {
            uint8_t *p = (uint8_t *)v.iov_base;
            size_t i = 0;
            for (; i + 8 <= v.iov_len; i += 8) {
                uint64_t r = rng();
                memcpy(p + i, &r, 8);
            }
            for (; i < v.iov_len; i++) {
                p[i] = (uint8_t)rng();
            }
        }
    }
    void clear()
    {
        std::fill(backing.begin(), backing.end(), 0xEE);
    }
    /* Stream byte i. */
    std::vector<uint8_t> stream() const
    {
        std::vector<uint8_t> out;
        out.reserve(total);
        for (auto &v : iov) {
            out.insert(out.end(), (uint8_t *)v.iov_base, (uint8_t *)v.iov_base + v.iov_len);
        }
        return out;
    }
    /* Bytes of the backing store outside the pieces were not touched. */
    bool gaps_intact() const
    {
        uint64_t pos = 0;
        for (auto &v : iov) {
            uint64_t start = (uint64_t)((uint8_t *)v.iov_base - backing.data());
            for (; pos < start; pos++) {
                if (backing[pos] != 0xEE) {
                    return false;
                }
            }
            pos = start + v.iov_len;
        }
        for (; pos < backing.size(); pos++) {
            if (backing[pos] != 0xEE) {
                return false;
            }
        }
        return true;
    }
};

/*
 * Random regions within [0, span): a mix of tiny regions (below a 512-byte
 * block), regions that straddle a stripe boundary, multi-stripe regions,
 * regions overlapping earlier ones and strided runs (equal regions at a
 * constant stride, some crossing stripes: what a vector view makes), in
 * random order.
 */
inline std::vector<pstripe_region_t> random_regions(std::mt19937_64 &rng, size_t n, uint64_t span,
                                                    uint64_t stripe_size)
{
    std::vector<pstripe_region_t> out;
    uint64_t nstripes = std::max<uint64_t>(span / stripe_size, 2);
    while (out.size() < n) {
        uint64_t off = 0, len = 1;
        switch (rng() % 5) {
        case 4: { /* a strided run */
            uint64_t rlen = 1 + rng() % std::min<uint64_t>(stripe_size + stripe_size / 2, 3000);
            uint64_t stride = rlen + 1 + rng() % (2 * rlen);
            uint64_t start = rng() % span;
            for (uint64_t c = 2 + rng() % 60; c > 0 && start + rlen <= span && out.size() < n;
                 c--, start += stride) {
                out.push_back({start, rlen});
            }
            continue;
        }
        case 0: /* tiny */
            len = 1 + rng() % 511;
            off = rng() % span;
            break;
        case 1: { /* across a stripe boundary */
            uint64_t b = stripe_size * (1 + rng() % (nstripes - 1));
            uint64_t before = 1 + rng() % std::min<uint64_t>(stripe_size, 700);
            uint64_t after = 1 + rng() % std::min<uint64_t>(stripe_size, 700);
            off = b - before;
            len = before + after;
            break;
        }
        case 2: /* up to three stripes */
            len = 1 + rng() % (3 * stripe_size);
            off = rng() % span;
            break;
        default: /* overlapping an earlier region */
            if (!out.empty()) {
                const pstripe_region_t &r = out[rng() % out.size()];
                off = r.offset + rng() % r.length;
                len = 1 + rng() % (2 * r.length);
            } else {
                off = rng() % span;
                len = 1 + rng() % 4096;
            }
            break;
        }
        if (off >= span) {
            off = span - 1;
        }
        len = std::min(len, span - off);
        len = std::min<uint64_t>(len, 1536 << 10); /* keep big-stripe runs short */
        out.push_back({off, len});
    }
    return out;
}

inline uint64_t total_length(const std::vector<pstripe_region_t> &regions)
{
    uint64_t n = 0;
    for (auto &r : regions) {
        n += r.length;
    }
    return n;
}

/* Sum of every server's counters. */
inline ps_status_t sum_stats(pstripe_fs_t *fs, pstripe_server_stats_t *sum)
{
    memset(sum, 0, sizeof(*sum));
    for (int i = 0; i < pstripe_num_servers(fs); i++) {
        pstripe_server_stats_t st;
        ps_status_t status = pstripe_server_stats(fs, i, &st);
        if (status != PS_OK) {
            return status;
        }
        sum->write_batches += st.write_batches;
        sum->read_batches += st.read_batches;
        sum->regions_written += st.regions_written;
        sum->regions_read += st.regions_read;
        sum->disk_writes += st.disk_writes;
        sum->disk_reads += st.disk_reads;
        sum->bytes_written += st.bytes_written;
        sum->bytes_read += st.bytes_read;
        sum->rmw_reads += st.rmw_reads;
        sum->requests += st.requests;
        sum->eager_replies += st.eager_replies;
        sum->rndv_requests += st.rndv_requests;
        sum->auth_ok += st.auth_ok;
    }
    return PS_OK;
}

} // namespace psc_test

#endif

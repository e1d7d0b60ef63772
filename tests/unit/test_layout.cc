/*
 * Stripe math against a brute-force model: walk a file byte by byte, deal
 * each stripe to its target in turn, and append each byte to that target's
 * object. Whatever ps_layout.c computes with divisions must agree with that
 * walk for every byte, for many random (small) layouts; large layouts are
 * checked through the inverse relations the functions must satisfy.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "ps_layout.h"
#include "ps_status.h"

namespace {

struct byte_place {
    uint32_t k;        /* stripe target */
    uint64_t obj_off;  /* offset in that target's object */
    uint64_t left;     /* bytes left in the stripe from this byte */
};

/* The model: no division, just counting. */
std::vector<byte_place> brute_force(const ps_layout_t &l, uint64_t file_len)
{
    std::vector<byte_place> out(file_len);
    std::vector<uint64_t> obj_len(l.stripe_count, 0);
    uint32_t k = 0;
    uint64_t in_stripe = 0;

    for (uint64_t b = 0; b < file_len; b++) {
        out[b].k = k;
        out[b].obj_off = obj_len[k]++;
        out[b].left = l.stripe_size - in_stripe;
        if (++in_stripe == l.stripe_size) {
            in_stripe = 0;
            k = (k + 1) % l.stripe_count;
        }
    }
    return out;
}

ps_layout_t random_layout(std::mt19937_64 &rng, uint64_t max_ss, uint32_t max_sc, uint32_t nservers)
{
    ps_layout_t l;
    l.stripe_size = 1 + rng() % max_ss;
    l.stripe_count = 1 + (uint32_t)(rng() % max_sc);
    l.first_server = (uint32_t)(rng() % nservers);
    return l;
}

} // namespace

TEST(layout, map_against_brute_force)
{
    std::mt19937_64 rng(1);

    for (int iter = 0; iter < 300; iter++) {
        ps_layout_t l = random_layout(rng, 40, 8, 16);
        uint64_t len = l.stripe_size * l.stripe_count * 4 + rng() % 100;
        std::vector<byte_place> model = brute_force(l, len);

        for (uint64_t b = 0; b < len; b++) {
            uint32_t k = ~0u;
            uint64_t obj_off = ~0ull;
            uint64_t left = ps_layout_map(&l, b, &k, &obj_off);
            ASSERT_EQ(model[b].k, k) << "ss=" << l.stripe_size << " sc=" << l.stripe_count
                                     << " off=" << b;
            ASSERT_EQ(model[b].obj_off, obj_off) << "off=" << b;
            ASSERT_EQ(model[b].left, left) << "off=" << b;
        }
    }
}

TEST(layout, obj_size_and_file_size_against_brute_force)
{
    std::mt19937_64 rng(2);

    for (int iter = 0; iter < 300; iter++) {
        ps_layout_t l = random_layout(rng, 24, 6, 8);
        uint64_t max_len = l.stripe_size * l.stripe_count * 3 + 7;
        std::vector<byte_place> model = brute_force(l, max_len);

        for (uint64_t len = 0; len <= max_len; len++) {
            /* obj_size: bytes of [0, len) that land on target k */
            std::vector<uint64_t> want(l.stripe_count, 0);
            for (uint64_t b = 0; b < len; b++) {
                want[model[b].k]++;
            }
            uint64_t max_fs = 0;
            for (uint32_t k = 0; k < l.stripe_count; k++) {
                uint64_t os = ps_layout_obj_size(&l, len, k);
                ASSERT_EQ(want[k], os) << "ss=" << l.stripe_size << " sc=" << l.stripe_count
                                       << " len=" << len << " k=" << k;
                uint64_t fs = ps_layout_file_size(&l, k, os);
                ASSERT_LE(fs, len);
                max_fs = std::max(max_fs, fs);
            }
            /* the file size is recovered from the objects' sizes */
            ASSERT_EQ(len, max_fs) << "ss=" << l.stripe_size << " sc=" << l.stripe_count;
        }

        /* file_size(k, s): one past the file offset of object byte s-1 */
        for (uint32_t k = 0; k < l.stripe_count; k++) {
            EXPECT_EQ(0u, ps_layout_file_size(&l, k, 0));
        }
        for (uint64_t b = 0; b < max_len; b++) {
            ASSERT_EQ(b + 1, ps_layout_file_size(&l, model[b].k, model[b].obj_off + 1))
                << "off=" << b;
        }
    }
}

TEST(layout, large_layouts_are_consistent)
{
    std::mt19937_64 rng(3);

    for (int iter = 0; iter < 100000; iter++) {
        ps_layout_t l;
        l.stripe_size = PS_STRIPE_SIZE_MIN << (rng() % 24); /* 512 .. 4g */
        if (l.stripe_size > PS_STRIPE_SIZE_MAX) {
            l.stripe_size = PS_STRIPE_SIZE_MAX;
        }
        if (rng() % 4 == 0) {
            l.stripe_size += rng() % 1000; /* not a power of two */
        }
        l.stripe_count = 1 + (uint32_t)(rng() % PS_STRIPE_COUNT_MAX);
        l.first_server = 0;
        uint64_t off = rng() >> (14 + rng() % 40); /* up to 2^50 */

        uint32_t k;
        uint64_t obj_off;
        uint64_t left = ps_layout_map(&l, off, &k, &obj_off);
        ASSERT_LT(k, l.stripe_count);
        ASSERT_GE(left, 1u);
        ASSERT_LE(left, l.stripe_size);
        ASSERT_EQ(0u, (off + left) % l.stripe_size);
        ASSERT_EQ(off + 1, ps_layout_file_size(&l, k, obj_off + 1));
        ASSERT_EQ(obj_off + 1, ps_layout_obj_size(&l, off + 1, k));
        uint64_t max_fs = 0;
        for (uint32_t j = 0; j < l.stripe_count && j < 64; j++) {
            max_fs = std::max(max_fs, ps_layout_file_size(&l, j, ps_layout_obj_size(&l, off + 1, j)));
        }
        if (l.stripe_count <= 64) {
            ASSERT_EQ(off + 1, max_fs);
        } else {
            ASSERT_LE(max_fs, off + 1);
        }
    }
}

TEST(layout, server)
{
    std::mt19937_64 rng(4);

    for (int iter = 0; iter < 1000; iter++) {
        uint32_t nservers = 1 + (uint32_t)(rng() % 64);
        ps_layout_t l = random_layout(rng, 1 << 20, nservers, nservers);
        l.stripe_size += PS_STRIPE_SIZE_MIN;
        ASSERT_EQ(PS_OK, ps_layout_check(&l, nservers));

        /* count round the ring from first_server */
        uint32_t s = l.first_server;
        std::vector<int> used(nservers, 0);
        for (uint32_t k = 0; k < l.stripe_count; k++) {
            ASSERT_EQ(s, ps_layout_server(&l, k, nservers));
            ASSERT_EQ(0, used[s]++) << "two targets on one server";
            s = (s + 1) % nservers;
        }
    }
}

TEST(layout, check)
{
    ps_layout_t l = {1 << 20, 4, 0};

    EXPECT_EQ(PS_OK, ps_layout_check(&l, 4));
    EXPECT_EQ(PS_OK, ps_layout_check(&l, 0)); /* cluster size unknown */
    EXPECT_EQ(PS_ERR_INVALID, ps_layout_check(&l, 3)) << "more targets than servers";
    l.first_server = 4;
    EXPECT_EQ(PS_ERR_INVALID, ps_layout_check(&l, 4)) << "first_server out of the list";
    l = {PS_STRIPE_SIZE_MIN - 1, 1, 0};
    EXPECT_EQ(PS_ERR_INVALID, ps_layout_check(&l, 1));
    l = {PS_STRIPE_SIZE_MAX + 1, 1, 0};
    EXPECT_EQ(PS_ERR_INVALID, ps_layout_check(&l, 1));
    l = {PS_STRIPE_SIZE_MAX, 0, 0};
    EXPECT_EQ(PS_ERR_INVALID, ps_layout_check(&l, 1));
    l = {PS_STRIPE_SIZE_MIN, PS_STRIPE_COUNT_MAX + 1, 0};
    EXPECT_EQ(PS_ERR_INVALID, ps_layout_check(&l, 0));
    l = {PS_STRIPE_SIZE_MIN, PS_STRIPE_COUNT_MAX, 0};
    EXPECT_EQ(PS_OK, ps_layout_check(&l, 0));
}

TEST(layout, placement_hashes)
{
    const uint32_t n = 7, w = 5;
    std::vector<int> per_server(n), per_worker(w), per_obj_worker(w);

    for (int i = 0; i < 70000; i++) {
        std::string path = "/dir/file." + std::to_string(i);
        uint32_t s = ps_path_server(path.data(), path.size(), n);
        uint32_t k = ps_path_worker(path.data(), path.size(), w);
        ASSERT_LT(s, n);
        ASSERT_LT(k, w);
        /* deterministic: both sides compute the same owner */
        ASSERT_EQ(s, ps_path_server(path.c_str(), path.size(), n));
        per_server[s]++;
        per_worker[k]++;
        uint32_t ow = ps_object_worker((uint64_t)i * 0x100000001ull, w);
        ASSERT_LT(ow, w);
        per_obj_worker[ow]++;
    }
    /* roughly uniform (expected 10000 / 14000 each; 20% slack is > 20 sigma) */
    for (uint32_t s = 0; s < n; s++) {
        EXPECT_NEAR(10000, per_server[s], 2000) << "server " << s;
    }
    for (uint32_t k = 0; k < w; k++) {
        EXPECT_NEAR(14000, per_worker[k], 2800) << "worker " << k;
        EXPECT_NEAR(14000, per_obj_worker[k], 2800) << "object worker " << k;
    }
    EXPECT_EQ(ps_hash_bytes("abc", 3), ps_hash_bytes("abc", 3));
    EXPECT_NE(ps_hash_bytes("abc", 3), ps_hash_bytes("abd", 3));
    EXPECT_NE(ps_hash_u64(1), ps_hash_u64(2));
    EXPECT_EQ(0u, ps_path_server("/x", 2, 1));
}

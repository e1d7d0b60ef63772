/*
 * The server's write-back stage (server/pss_stage.c) putting regions into a
 * staged block: for every region length up to past the short-copy sizes and
 * strides from contiguous to sparse, the block's bytes, its count of
 * written bytes and its written ranges agree with a byte model. The stage's
 * use by the server is tested with daemons (ServerWback in
 * tests/integration).
 */
#include <gtest/gtest.h>

#include <vector>

#include "stage_box.h"

namespace {

const uint32_t BLOCK = 4096;

/* The model's written ranges of the block. */
std::vector<std::pair<uint32_t, uint32_t>> model_ranges(const std::vector<bool> &written)
{
    std::vector<std::pair<uint32_t, uint32_t>> r;
    for (uint32_t i = 0; i < BLOCK;) {
        if (!written[i]) {
            i++;
            continue;
        }
        uint32_t lo = i;
        while (i < BLOCK && written[i]) {
            i++;
        }
        r.push_back({lo, i});
    }
    return r;
}

/* Put count regions of len bytes every stride from off, twice (the second
 * time shifted by shift, with other bytes: later bytes win), and compare
 * the block with the model. */
void check_put(uint64_t len, uint64_t stride, uint64_t off, uint64_t shift)
{
    stage_box *b = stage_box_new(BLOCK);
    ASSERT_NE(b, nullptr);
    std::vector<uint8_t> model(BLOCK, 0);
    std::vector<bool> written(BLOCK, false);
    for (int pass = 0; pass < 2; pass++) {
        uint64_t from = off + (pass ? shift : 0);
        uint64_t count = from + len <= BLOCK ? (BLOCK - from - len) / stride + 1 : 0;
        std::vector<uint8_t> src(count * len);
        for (size_t i = 0; i < src.size(); i++) {
            src[i] = (uint8_t)(i * 7 + len + pass * 101 + 1);
        }
        stage_box_put(b, from, src.data(), len, stride, count);
        for (uint64_t c = 0; c < count; c++) {
            for (uint64_t k = 0; k < len; k++) {
                model[from + c * stride + k] = src[c * len + k];
                written[from + c * stride + k] = true;
            }
        }
    }
    const uint8_t *got = stage_box_bytes(b);
    size_t bad = 0;
    while (bad < BLOCK && got[bad] == model[bad]) {
        bad++;
    }
    EXPECT_EQ(bad, BLOCK) << "len " << len << " stride " << stride << " off " << off << " shift "
                          << shift << ": first wrong byte";
    uint32_t covered = 0;
    for (bool w : written) {
        covered += w;
    }
    EXPECT_EQ(stage_box_covered(b), covered) << "len " << len << " stride " << stride;
    std::vector<std::pair<uint32_t, uint32_t>> want = model_ranges(written);
    std::vector<uint32_t[2]> ranges(BLOCK);
    size_t n = stage_box_ranges(b, ranges.data(), ranges.size());
    ASSERT_EQ(n, want.size()) << "len " << len << " stride " << stride;
    for (size_t i = 0; i < n; i++) {
        EXPECT_EQ(ranges[i][0], want[i].first);
        EXPECT_EQ(ranges[i][1], want[i].second);
    }
    stage_box_free(b);
}

} // namespace

TEST(Stage, RegionsOfEveryShortLengthLandAsTheModelSays)
{
    for (uint64_t len = 1; len <= 80; len++) {
        for (uint64_t stride : {len, len + 1, 2 * len, len + 61, 256ul}) {
            if (stride < len) {
                continue;
            }
            ASSERT_NO_FATAL_FAILURE(check_put(len, stride, len % 13, 0));
            ASSERT_NO_FATAL_FAILURE(check_put(len, stride, 3, len / 2 + 1));
        }
    }
}

TEST(Stage, LongRegionsAndWholeBlock)
{
    for (uint64_t len : {100ul, 511ul, 512ul, 1000ul, 2048ul, 4096ul}) {
        ASSERT_NO_FATAL_FAILURE(check_put(len, len, 0, 0));
        ASSERT_NO_FATAL_FAILURE(check_put(len, len + 37, 5, 9));
    }
}

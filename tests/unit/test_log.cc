// ps_log_limit_pass: a repeating log line goes out at most once an interval,
// and the next one that goes out learns how many were left out.
#include <gtest/gtest.h>

#include "ps_log.h"

TEST(LogLimit, OneLineAnIntervalAndTheCountOfTheOthers)
{
    ps_log_limit_t lim = {};
    uint64_t dropped = 99;

    ASSERT_EQ(ps_log_limit_pass(&lim, 1000, 100, &dropped), 1); // the first goes out
    EXPECT_EQ(dropped, 0u);
    EXPECT_EQ(ps_log_limit_pass(&lim, 1001, 100, &dropped), 0);
    EXPECT_EQ(ps_log_limit_pass(&lim, 1099, 100, &dropped), 0);
    ASSERT_EQ(ps_log_limit_pass(&lim, 1100, 100, &dropped), 1); // the interval has passed
    EXPECT_EQ(dropped, 2u);
    ASSERT_EQ(ps_log_limit_pass(&lim, 5000, 100, &dropped), 1); // long after: nothing left out
    EXPECT_EQ(dropped, 0u);
    for (int i = 0; i < 1000; i++) {
        EXPECT_EQ(ps_log_limit_pass(&lim, 5001 + (uint64_t)i % 99, 100, &dropped), 0);
    }
    ASSERT_EQ(ps_log_limit_pass(&lim, 5100, 100, &dropped), 1);
    EXPECT_EQ(dropped, 1000u);
    // a caller that does not say how many were left out passes NULL
    EXPECT_EQ(ps_log_limit_pass(&lim, 5101, 100, nullptr), 0);
    EXPECT_EQ(ps_log_limit_pass(&lim, 5200, 100, nullptr), 1);
    ASSERT_EQ(ps_log_limit_pass(&lim, 5300, 100, &dropped), 1);
    EXPECT_EQ(dropped, 0u); // the one left out before 5200 was forgotten there
}

TEST(LogLimit, TheFirstLineGoesOutWhateverTheClock)
{
    ps_log_limit_t lim = {};
    uint64_t dropped = 7;

    // a clock that starts at 0 (CLOCK_MONOTONIC right after boot) or a
    // realtime one: a zeroed limit lets the first line through either way
    EXPECT_EQ(ps_log_limit_pass(&lim, 0, 1000000000ull, &dropped), 1);
    EXPECT_EQ(dropped, 0u);
}

/*
 * A server worker's spin window (server/pss_spin.c): after something
 * happened it goes on for `spin` before sleeping, never while a disk I/O
 * is in flight, and a blocking write's reply opens the window even though
 * the counters in flight end where they were before the request came.
 * What the window is worth is measured by the matrix's blocking-call
 * rows, not here.
 */
#include <gtest/gtest.h>

#include "spin_box.h"

namespace {

const uint64_t US = 1000;

struct SpinBox {
    spin_box *b;
    explicit SpinBox(double spin_s) : b(spin_box_new(spin_s)) {}
    ~SpinBox() { spin_box_free(b); }
};

TEST(Spin, GoesOnForTheWindowAfterEventsThenSleeps)
{
    SpinBox s(50e-6);
    ASSERT_NE(nullptr, s.b);
    EXPECT_EQ(1, spin_box_more(s.b, 1, 1000 * US));
    EXPECT_EQ(1, spin_box_more(s.b, 0, 1049 * US));
    EXPECT_EQ(0, spin_box_more(s.b, 0, 1050 * US));
    /* nothing new: it stays asleep */
    EXPECT_EQ(0, spin_box_more(s.b, 0, 1100 * US));
}

TEST(Spin, NeverWhileTheDiskWorksNorWithSpinZero)
{
    SpinBox s(50e-6), off(0);
    ASSERT_NE(nullptr, s.b);
    ASSERT_NE(nullptr, off.b);
    spin_box_set(s.b, 1, 1, 0, 0);
    EXPECT_EQ(0, spin_box_more(s.b, 1, 1000 * US));
    spin_box_set(off.b, 1, 0, 0, 0);
    EXPECT_EQ(0, spin_box_more(off.b, 1, 1000 * US));
}

TEST(Spin, ABlockingWritesReplyOpensTheWindow)
{
    SpinBox s(50e-6);
    ASSERT_NE(nullptr, s.b);
    /* idle, asleep */
    EXPECT_EQ(0, spin_box_more(s.b, 0, 0));
    for (uint64_t i = 0, t = 1000 * US; i < 3; i++, t += 1000 * US) {
        /* a request arrives and goes to the disk in the same turn */
        spin_box_set(s.b, 1, 1, 0, 2 * i);
        EXPECT_EQ(0, spin_box_more(s.b, 1, t));
        /* the I/O completes and the reply goes out eagerly: nothing in
         * flight, as before the request came */
        spin_box_set(s.b, 0, 0, 0, 2 * i + 2);
        EXPECT_EQ(1, spin_box_more(s.b, 0, t + 80 * US)) << "write " << i;
        EXPECT_EQ(1, spin_box_more(s.b, 0, t + 129 * US)) << "write " << i;
        EXPECT_EQ(0, spin_box_more(s.b, 0, t + 130 * US)) << "write " << i;
    }
}

} // namespace

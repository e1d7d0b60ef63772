/*
 * test_client_sharedfp.cc: shared file pointers (pstripe_sfp_*) against real
 * daemons: concurrent fetch-and-adds from several clients hand out disjoint
 * ranges that sum exactly; instances are independent; only a set makes a
 * counter and release forgets it; bad arguments and overflow are refused; a
 * full table of counters is an error, not reuse; a counter lost in a restart
 * of its server is an error, never a pointer back at 0.
 */
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "test_client_util.h"

using namespace psc_test;

namespace {

class ClientSharedFp : public ::testing::Test {
  protected:
    void start(int nservers)
    {
        /* RestartLosesThePointer restarts on the same port, which the old
         * connections keep in TIME_WAIT (see test_client_fault.cc) */
        setenv("UCX_CM_REUSEADDR", "y", 1);
        ::testing::AssertionResult started = cluster_.start(nservers, 2);
        unsetenv("UCX_CM_REUSEADDR");
        ASSERT_TRUE(started);
        PSC_ASSERT_OK(connect(cluster_, {}, &fs_));
        pstripe_layout_t layout = {65536, (uint32_t)nservers, 0};
        PSC_ASSERT_OK(
            pstripe_open(fs_, "/sfp/f", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, &layout, &file_));
    }
    void TearDown() override
    {
        if (file_ != nullptr) {
            pstripe_close(file_);
        }
        if (fs_ != nullptr) {
            pstripe_disconnect(fs_);
        }
    }
    uint64_t peek(pstripe_file_t *f, uint64_t instance)
    {
        uint64_t v = ~0ull;
        ps_status_t s = pstripe_sfp_fetch_add(f, instance, 0, 0, &v);
        EXPECT_EQ(s, PS_OK) << pstripe_last_error();
        return v;
    }

    ps_test::ps_cluster cluster_;
    pstripe_fs_t *fs_ = nullptr;
    pstripe_file_t *file_ = nullptr;
};

/* Four clients (own connections, own opens of the file) add at once; the
 * ranges [old, old + incr) they get must tile [0, total) exactly. */
TEST_F(ClientSharedFp, ConcurrentFetchAddsSumExactly)
{
    start(3);
    const int nclients = 4, nops = 300;
    const uint64_t instance = 0x1234567890abcdefull;
    std::vector<std::vector<std::pair<uint64_t, uint64_t>>> got(nclients);
    std::vector<ps_status_t> result(nclients, PS_OK);

    PSC_ASSERT_OK(pstripe_sfp_set(file_, instance, 0, 0)); /* as the collective open does */

    auto client = [&](int c) {
        pstripe_fs_t *fs = nullptr;
        pstripe_file_t *f = nullptr;
        ps_status_t s = connect(cluster_, {}, &fs);
        if (s == PS_OK) {
            s = pstripe_open(fs, "/sfp/f", PSTRIPE_RDWR, 0, nullptr, &f);
        }
        for (int i = 0; s == PS_OK && i < nops; i++) {
            uint64_t incr = 1 + (uint64_t)((c * 7 + i) % 13), old = 0;
            s = pstripe_sfp_fetch_add(f, instance, 0, incr, &old);
            got[c].emplace_back(old, incr);
        }
        result[c] = s;
        if (f != nullptr) {
            pstripe_close(f);
        }
        if (fs != nullptr) {
            pstripe_disconnect(fs);
        }
    };
    std::vector<std::thread> threads;
    for (int c = 0; c < nclients; c++) {
        threads.emplace_back(client, c);
    }
    for (auto &t : threads) {
        t.join();
    }

    std::vector<std::pair<uint64_t, uint64_t>> all;
    uint64_t total = 0;
    for (int c = 0; c < nclients; c++) {
        EXPECT_EQ(result[c], PS_OK) << "client " << c;
        ASSERT_EQ(got[c].size(), (size_t)nops);
        for (size_t i = 1; i < got[c].size(); i++) {
            EXPECT_GT(got[c][i].first, got[c][i - 1].first) << "a client's values only grow";
        }
        for (auto &p : got[c]) {
            all.push_back(p);
            total += p.second;
        }
    }
    std::sort(all.begin(), all.end());
    uint64_t next = 0;
    for (auto &p : all) {
        ASSERT_EQ(p.first, next) << "gap or overlap in the ranges handed out";
        next += p.second;
    }
    EXPECT_EQ(next, total);
    EXPECT_EQ(peek(file_, instance), total);
}

TEST_F(ClientSharedFp, InstancesSetReleaseAndErrors)
{
    start(2);
    const uint64_t a = 11, b = 22;
    uint64_t old = 99;

    EXPECT_EQ(pstripe_sfp_fetch_add(file_, a, 0, 1, &old), PS_ERR_NO_ENTRY)
        << "only a set makes a counter";
    EXPECT_EQ(old, 99u) << "output set on failure";
    PSC_ASSERT_OK(pstripe_sfp_set(file_, a, 0, 0));
    PSC_ASSERT_OK(pstripe_sfp_fetch_add(file_, a, 0, 100, &old));
    EXPECT_EQ(old, 0u);
    PSC_ASSERT_OK(pstripe_sfp_fetch_add(file_, a, 0, 5, &old));
    EXPECT_EQ(old, 100u);
    PSC_ASSERT_OK(pstripe_sfp_set(file_, b, 0, 7));
    EXPECT_EQ(peek(file_, b), 7u);
    EXPECT_EQ(peek(file_, a), 105u);

    /* another file: its own counters even with the same instance */
    pstripe_file_t *g = nullptr;
    PSC_ASSERT_OK(pstripe_open(fs_, "/sfp/g", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, nullptr, &g));
    EXPECT_EQ(pstripe_sfp_fetch_add(g, a, 0, 0, &old), PS_ERR_NO_ENTRY) << "a's counter is file_'s";
    PSC_ASSERT_OK(pstripe_sfp_set(g, a, 0, 0));
    EXPECT_EQ(peek(g, a), 0u);
    PSC_EXPECT_OK(pstripe_sfp_release(g, a));
    PSC_EXPECT_OK(pstripe_close(g));

    /* release forgets (a later add fails, a set makes it again at any value);
     * releasing twice is fine */
    PSC_ASSERT_OK(pstripe_sfp_release(file_, a));
    PSC_ASSERT_OK(pstripe_sfp_release(file_, a));
    EXPECT_EQ(pstripe_sfp_fetch_add(file_, a, 0, 0, &old), PS_ERR_NO_ENTRY);
    PSC_ASSERT_OK(pstripe_sfp_set(file_, a, 0, 3));
    EXPECT_EQ(peek(file_, a), 3u);
    EXPECT_EQ(peek(file_, b), 7u) << "releasing a left b alone";

    /* bad arguments */
    EXPECT_EQ(pstripe_sfp_fetch_add(file_, 0, 0, 1, &old), PS_ERR_INVALID);
    EXPECT_EQ(pstripe_sfp_fetch_add(nullptr, a, 0, 1, &old), PS_ERR_INVALID);
    EXPECT_EQ(pstripe_sfp_fetch_add(file_, a, 0, 1, nullptr), PS_ERR_INVALID);
    EXPECT_EQ(pstripe_sfp_set(file_, a, 0, (uint64_t)INT64_MAX + 1), PS_ERR_TOO_BIG);

    /* an add past INT64_MAX fails and changes nothing */
    PSC_ASSERT_OK(pstripe_sfp_set(file_, a, 0, (uint64_t)INT64_MAX - 10));
    EXPECT_EQ(pstripe_sfp_fetch_add(file_, a, 0, 11, &old), PS_ERR_TOO_BIG);
    EXPECT_EQ(peek(file_, a), (uint64_t)INT64_MAX - 10);
    PSC_EXPECT_OK(pstripe_sfp_fetch_add(file_, a, 0, 10, &old));
    EXPECT_EQ(peek(file_, a), (uint64_t)INT64_MAX);
}

/* set_view's reset sends nothing: each process counts views, and the
 * first access of a newer view finds the counter at 0. A process behind
 * the others (an older view) is refused, and the counter is unchanged. */
TEST_F(ClientSharedFp, NewerViewStartsAtZero)
{
    start(1);
    const uint64_t a = 33;
    uint64_t old = 99;

    PSC_ASSERT_OK(pstripe_sfp_set(file_, a, 0, 0));
    PSC_ASSERT_OK(pstripe_sfp_fetch_add(file_, a, 0, 40, &old));
    PSC_ASSERT_OK(pstripe_sfp_fetch_add(file_, a, 1, 5, &old));
    EXPECT_EQ(old, 0u) << "view 1 starts at 0";
    PSC_ASSERT_OK(pstripe_sfp_fetch_add(file_, a, 1, 5, &old));
    EXPECT_EQ(old, 5u) << "view 1 again: no second reset";
    EXPECT_EQ(pstripe_sfp_fetch_add(file_, a, 0, 1, &old), PS_ERR_INVALID) << "older view";
    EXPECT_NE(std::string(pstripe_last_error()).find("older"), std::string::npos)
        << pstripe_last_error();
    EXPECT_EQ(pstripe_sfp_set(file_, a, 0, 7), PS_ERR_INVALID) << "a set of an older view too";
    PSC_ASSERT_OK(pstripe_sfp_fetch_add(file_, a, 1, 0, &old));
    EXPECT_EQ(old, 10u) << "the refusals changed nothing";

    /* a set (seek_shared) in a new view holds its value; views skip and wrap */
    PSC_ASSERT_OK(pstripe_sfp_set(file_, a, 4, 8));
    PSC_ASSERT_OK(pstripe_sfp_fetch_add(file_, a, 4, 0, &old));
    EXPECT_EQ(old, 8u);
    PSC_ASSERT_OK(pstripe_sfp_set(file_, a, 0x80000000u, 1));
    PSC_ASSERT_OK(pstripe_sfp_set(file_, a, UINT32_MAX, 3));
    PSC_ASSERT_OK(pstripe_sfp_fetch_add(file_, a, 0, 2, &old));
    EXPECT_EQ(old, 0u) << "view 0 follows UINT32_MAX";
    EXPECT_EQ(pstripe_sfp_fetch_add(file_, a, UINT32_MAX, 0, &old), PS_ERR_INVALID);
}

/* All counters of one file live on one worker, whose table holds 4096
 * (PSS_SFP_MAX): the next one is refused while those are in use, and
 * accepted once one is released. The refusal leaves the others intact. */
TEST_F(ClientSharedFp, FullTableIsAnError)
{
    start(1);
    const uint64_t max = 4096;
    uint64_t old;

    for (uint64_t i = 1; i <= max; i++) {
        ps_status_t s = pstripe_sfp_set(file_, i, 0, i);
        ASSERT_EQ(s, PS_OK) << "counter " << i << ": " << pstripe_last_error();
    }
    EXPECT_EQ(pstripe_sfp_set(file_, max + 2, 0, 1), PS_ERR_TOO_BIG);
    EXPECT_EQ(pstripe_sfp_fetch_add(file_, max + 1, 0, 1, &old), PS_ERR_NO_ENTRY)
        << "a full table does not make an add's counter either";
    EXPECT_EQ(peek(file_, 1), 1u);
    EXPECT_EQ(peek(file_, max), max);
    PSC_ASSERT_OK(pstripe_sfp_release(file_, 17));
    PSC_ASSERT_OK(pstripe_sfp_set(file_, max + 1, 0, 0));
    PSC_EXPECT_OK(pstripe_sfp_fetch_add(file_, max + 1, 0, 3, &old));
    EXPECT_EQ(old, 0u);
    EXPECT_EQ(peek(file_, max + 1), 3u);
    EXPECT_EQ(pstripe_sfp_set(file_, 17, 0, 1), PS_ERR_TOO_BIG) << "full again";
}

/* The servers keep counters in memory: after a restart of the file's
 * metadata owner, a fetch-and-add of a counter made before fails with a
 * clear error instead of handing out 0 again (a program appending with
 * write_shared would overwrite its first records). A set (seek_shared, a
 * new open) makes the counter again. Both servers restart, so
 * the test does not depend on which one owns the file. */
TEST_F(ClientSharedFp, RestartLosesThePointer)
{
    start(2);
    const uint64_t instance = 0x5eed;
    uint64_t old = 0;

    PSC_ASSERT_OK(pstripe_sfp_set(file_, instance, 0, 0));
    PSC_ASSERT_OK(pstripe_sfp_fetch_add(file_, instance, 0, 100, &old));
    PSC_ASSERT_OK(pstripe_sfp_fetch_add(file_, instance, 0, 100, &old));
    EXPECT_EQ(old, 100u);

    setenv("UCX_CM_REUSEADDR", "y", 1);
    for (int i = 0; i < cluster_.size(); i++) {
        ASSERT_EQ(cluster_.kill(i, SIGKILL), 0);
        cluster_.wait(i, 30);
        ASSERT_TRUE(cluster_.restart(i, true));
    }
    unsetenv("UCX_CM_REUSEADDR");

    /* the first request may only find the old connection gone (at most
     * once per server); then the restarted server answers */
    ps_status_t s = PS_ERR_CONN;
    for (int tries = 0; tries < 3 && (s == PS_ERR_CONN || s == PS_ERR_TIMEOUT); tries++) {
        old = 77;
        s = pstripe_sfp_fetch_add(file_, instance, 0, 100, &old);
    }
    ASSERT_EQ(s, PS_ERR_NO_ENTRY) << pstripe_strerror(s) << ": " << pstripe_last_error();
    EXPECT_EQ(old, 77u) << "output set on failure";
    std::string msg = pstripe_last_error();
    EXPECT_NE(msg.find("lost"), std::string::npos) << msg;
    EXPECT_NE(msg.find("restarted"), std::string::npos) << msg;
    EXPECT_NE(msg.find("/sfp/f"), std::string::npos) << msg;
    EXPECT_EQ(pstripe_sfp_fetch_add(file_, instance, 0, 0, &old), PS_ERR_NO_ENTRY)
        << "the failed add did not make the counter";

    /* a set makes it again, at the value given */
    PSC_ASSERT_OK(pstripe_sfp_set(file_, instance, 0, 200));
    PSC_ASSERT_OK(pstripe_sfp_fetch_add(file_, instance, 0, 10, &old));
    EXPECT_EQ(old, 200u);
    EXPECT_EQ(peek(file_, instance), 210u);
}

} // namespace

/*
 * test_client_wback.cc: what the client library does about the servers'
 * write-back stage (server/pss_stage.h). A server acknowledges a write of
 * partial blocks once the bytes are in its memory, so a server killed
 * before they reach the disk loses them, as a local file system's dirty
 * pages go with a crash. MPI promises durability only after
 * MPI_File_sync: pstripe_fsync must then fail, never succeed, when a server
 * restarted since it acknowledged the file's writes (the HELLO reply's
 * instance tells), and succeed again once that is reported.
 */
#include "test_client_util.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <list>
#include <string>
#include <thread>
#include <vector>

using namespace psc_test;

namespace {

class ClientWback : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ASSERT_NO_FATAL_FAILURE(start(1, {}));
    }
    /* Start n servers (write_back_age=60s, then sets) and connect fs_. */
    void start(int n, const std::vector<std::string> &sets)
    {
        std::vector<std::string> args = {"--set", "write_back_age=60s"};
        for (const std::string &s : sets) {
            args.push_back("--set");
            args.push_back(s);
        }
        /* the restarts reuse the port (see ClientFault.ServerKilledMidWrite) */
        setenv("UCX_CM_REUSEADDR", "y", 1);
        ASSERT_TRUE(cluster_.start(n, 1, args));
        unsetenv("UCX_CM_REUSEADDR");
        PSC_ASSERT_OK(connect(cluster_, {"timeout=20s", "connect_timeout=10s"}, &fs_));
    }
    void TearDown() override
    {
        if (fs_ != nullptr) {
            pstripe_disconnect(fs_);
        }
    }
    void kill_and_restart(int i = 0)
    {
        ASSERT_EQ(cluster_.kill(i, SIGKILL), 0);
        cluster_.wait(i, 30);
        setenv("UCX_CM_REUSEADDR", "y", 1);
        ASSERT_TRUE(cluster_.restart(i, true));
        unsetenv("UCX_CM_REUSEADDR");
    }
    uint64_t staged_blocks(int i = 0)
    {
        pstripe_server_stats_t st;
        EXPECT_EQ(pstripe_server_stats(fs_, i, &st), PS_OK) << pstripe_last_error();
        return st.stage_blocks;
    }
    uint64_t requests(int i)
    {
        pstripe_server_stats_t st;
        EXPECT_EQ(pstripe_server_stats(fs_, i, &st), PS_OK) << pstripe_last_error();
        return st.requests;
    }
    uint64_t stage_errors(int i = 0)
    {
        pstripe_server_stats_t st;
        EXPECT_EQ(pstripe_server_stats(fs_, i, &st), PS_OK) << pstripe_last_error();
        return st.stage_errors;
    }
    /* Write 50 bytes of value v at off (inside a block whose other bytes are
     * on disk: the server stages it) into f and the model. */
    void small_write(pstripe_file_t *f, uint64_t off, uint8_t v)
    {
        std::vector<uint8_t> b(50, v);
        PSC_ASSERT_OK(pstripe_pwrite(f, b.data(), b.size(), off));
        std::fill(model_.begin() + (long)off, model_.begin() + (long)off + 50, v);
    }

    /* Open path, write and sync the model, then write 50 bytes that the
     * server stages and kill and restart it: they are lost. *synced: the
     * file's bytes now. */
    void write_and_lose(const char *path, pstripe_file_t **f, std::vector<uint8_t> *synced)
    {
        pstripe_layout_t layout = {65536, 1, 0};

        PSC_ASSERT_OK(pstripe_open(fs_, path, PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, &layout, f));
        PSC_ASSERT_OK(pstripe_pwrite(*f, model_.data(), model_.size(), 0));
        PSC_ASSERT_OK(pstripe_fsync(*f));
        *synced = model_;
        ASSERT_NO_FATAL_FAILURE(small_write(*f, 5000, 7));
        EXPECT_EQ(staged_blocks(), 1u) << "the write was not staged: this test shows nothing";
        ASSERT_NO_FATAL_FAILURE(kill_and_restart());
    }

    ps_test::ps_cluster cluster_;
    pstripe_fs_t *fs_ = nullptr;
    std::vector<uint8_t> model_ = std::vector<uint8_t>(256 << 10, 1);
};

/* ext4's largest file ends one 4 KiB block below the servers' 16 TiB: a
 * partial block there is staged, and its write fails later (see
 * ServerWbackFailed in test_server_wback.cc). */
const uint64_t doomed_block = (1ull << 44) - 4096;

/* The file offset of byte obj_off of target k of layout l. */
uint64_t file_offset(const pstripe_layout_t &l, uint32_t k, uint64_t obj_off)
{
    return ((obj_off / l.stripe_size) * l.stripe_count + k) * l.stripe_size +
           obj_off % l.stripe_size;
}

/* ServerWbackFailed's 40 regions of 10 bytes in target k's doomed block,
 * appended to *r. */
void doomed_regions(const pstripe_layout_t &l, uint32_t k, std::vector<pstripe_region_t> *r)
{
    for (uint64_t i = 0; i < 40; i++) {
        r->push_back({file_offset(l, k, doomed_block + i * 100), 10});
    }
}

/* The bytes of regions. */
uint64_t regions_bytes(const std::vector<pstripe_region_t> &regions)
{
    uint64_t n = 0;
    for (const pstripe_region_t &r : regions) {
        n += r.length;
    }
    return n;
}

/* Write regions (bytes of value v) into f. */
ps_status_t write_regions(pstripe_file_t *f, const std::vector<pstripe_region_t> &regions,
                          uint8_t v)
{
    std::vector<uint8_t> b(regions_bytes(regions), v);
    struct iovec iov = {b.data(), b.size()};
    return pstripe_write_list(f, regions.data(), regions.size(), &iov, 1);
}

/* Two servers: a check asks server 0 first (layout {.., 2, 0}). */
class ClientWbackPair : public ClientWback {
  protected:
    void SetUp() override
    {
        ASSERT_NO_FATAL_FAILURE(start(2, {}));
    }
    /* Open path on both servers, stage a write that will fail on server
     * 1 - r and one that is lost with server r's restart, and meet r's
     * new instance with a read. */
    void stage_and_restart(const char *path, uint32_t r, pstripe_file_t **f)
    {
        std::vector<pstripe_region_t> doomed;
        std::vector<uint8_t> out(4096);
        uint64_t nread;

        PSC_ASSERT_OK(pstripe_open(fs_, path, PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, &layout_, f));
        PSC_ASSERT_OK(pstripe_pwrite(*f, model_.data(), model_.size(), 0));
        PSC_ASSERT_OK(pstripe_fsync(*f));
        ASSERT_NO_FATAL_FAILURE(small_write(*f, r * 65536 + 5000, 7));
        doomed_regions(layout_, 1 - r, &doomed);
        PSC_ASSERT_OK(write_regions(*f, doomed, 9));
        EXPECT_EQ(staged_blocks(0) + staged_blocks(1), 2u) << "not staged: this test shows nothing";
        ASSERT_NO_FATAL_FAILURE(kill_and_restart((int)r));
        /* its first try may meet the dead connection */
        if (pstripe_pread(*f, out.data(), out.size(), r * 65536, &nread) != PS_OK) {
            PSC_ASSERT_OK(pstripe_pread(*f, out.data(), out.size(), r * 65536, &nread));
        }
    }

    pstripe_layout_t layout_ = {65536, 2, 0};
};

/*
 * One disk I/O at a time, in order (aio_depth=1), every batch a job of its
 * own (max_merge=0), no cache to serve reads: the order in which the
 * server starts jobs and answers them follows from the order of the
 * requests, not from the disk's speed.
 */
class ClientWbackSerial : public ClientWback {
  protected:
    void SetUp() override
    {
        ASSERT_NO_FATAL_FAILURE(start(1, {"aio_depth=1", "max_merge=0", "cache=0"}));
    }
    /* Start a write of regions (bytes of value v) or a read of them. */
    ps_status_t iwrite(pstripe_file_t *f, const std::vector<pstripe_region_t> &regions, uint8_t v,
                       pstripe_request_t **req)
    {
        struct iovec iov = buffer(regions, v);
        return pstripe_iwrite_list(f, regions.data(), regions.size(), &iov, 1, req);
    }
    ps_status_t iread(pstripe_file_t *f, const std::vector<pstripe_region_t> &regions,
                      pstripe_request_t **req)
    {
        struct iovec iov = buffer(regions, 0);
        return pstripe_iread_list(f, regions.data(), regions.size(), &iov, 1, req);
    }
    /* A buffer of the regions' bytes that lives as long as the test. */
    struct iovec buffer(const std::vector<pstripe_region_t> &regions, uint8_t v)
    {
        uint64_t n = regions_bytes(regions);
        bufs_.emplace_back(n, v);
        return {bufs_.back().data(), n};
    }

    std::list<std::vector<uint8_t>> bufs_;
};

} // namespace

TEST_F(ClientWback, SyncAfterAServerRestartFails)
{
    pstripe_file_t *f;
    std::vector<uint8_t> synced;
    uint64_t nread;

    /* acknowledged, staged, then the server dies: the sync says so */
    ASSERT_NO_FATAL_FAILURE(write_and_lose("/wb", &f, &synced));
    ps_status_t s = pstripe_fsync(f);
    std::string msg = pstripe_last_error();
    EXPECT_EQ(s, PS_ERR_IO) << pstripe_strerror(s);
    EXPECT_NE(msg.find("restarted"), std::string::npos) << msg;
    printf("fsync after a restart: %s: %s\n", pstripe_strerror(s), msg.c_str());
    /* reported once; the file holds what was synced */
    PSC_EXPECT_OK(pstripe_fsync(f));
    std::vector<uint8_t> out(model_.size());
    PSC_ASSERT_OK(pstripe_pread(f, out.data(), out.size(), 0, &nread));
    EXPECT_TRUE(out == synced) << "the lost write came back, or more was lost";

    /* synced before the kill: kept, and no error for a restart after it */
    model_ = synced;
    ASSERT_NO_FATAL_FAILURE(small_write(f, 9000, 8));
    PSC_ASSERT_OK(pstripe_fsync(f));
    ASSERT_NO_FATAL_FAILURE(kill_and_restart());
    PSC_EXPECT_OK(pstripe_fsync(f));
    PSC_ASSERT_OK(pstripe_pread(f, out.data(), out.size(), 0, &nread));
    EXPECT_TRUE(out == model_) << "a synced write was lost";
    PSC_ASSERT_OK(pstripe_close(f));
}

/* A close reports a restart as a sync does, also when the new instance
 * has acknowledged writes since (the restart is judged by the instance
 * that first acknowledged a write after the last check). */
TEST_F(ClientWback, CloseAfterAServerRestartFails)
{
    pstripe_file_t *f;
    std::vector<uint8_t> synced;
    uint64_t nread;

    ASSERT_NO_FATAL_FAILURE(write_and_lose("/wbc", &f, &synced));
    /* the next write reaches the new instance (its first try may meet the
     * dead connection) */
    std::vector<uint8_t> b(50, 8);
    if (pstripe_pwrite(f, b.data(), b.size(), 9000) != PS_OK) {
        PSC_ASSERT_OK(pstripe_pwrite(f, b.data(), b.size(), 9000));
    }
    std::fill(synced.begin() + 9000, synced.begin() + 9050, 8);
    ps_status_t s = pstripe_close(f);
    std::string msg = pstripe_last_error();
    EXPECT_EQ(s, PS_ERR_IO) << pstripe_strerror(s);
    EXPECT_NE(msg.find("restarted"), std::string::npos) << msg;
    printf("close after a restart and a write since: %s: %s\n", pstripe_strerror(s), msg.c_str());
    /* what the new instance acknowledged is there; the lost write is not */
    PSC_ASSERT_OK(pstripe_open(fs_, "/wbc", PSTRIPE_RDONLY, 0, nullptr, &f));
    std::vector<uint8_t> out(model_.size());
    PSC_ASSERT_OK(pstripe_pread(f, out.data(), out.size(), 0, &nread));
    EXPECT_TRUE(out == synced) << "the lost write came back, or more was lost";
    PSC_ASSERT_OK(pstripe_close(f)); /* a reader's close asks nothing */
}

/*
 * A truncate, a preallocate and an open that truncates set the size, which
 * a restart may undo before the fsync (a machine crash loses a size not yet
 * flushed): the handle's fsync reports the restart as it does after a
 * write, once. The handle wrote and synced before, so only the size call
 * is left to report.
 */
TEST_F(ClientWback, SyncAfterARestartReportsASizeSetSince)
{
    const pstripe_layout_t layout = {65536, 1, 0};
    const char *calls[] = {"truncate", "preallocate", "open with PSTRIPE_TRUNC"};

    for (int c = 0; c < 3; c++) {
        SCOPED_TRACE(calls[c]);
        std::string path = "/size" + std::to_string(c);
        pstripe_file_t *f;

        PSC_ASSERT_OK(
            pstripe_open(fs_, path.c_str(), PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, &layout, &f));
        PSC_ASSERT_OK(pstripe_pwrite(f, model_.data(), model_.size(), 0));
        PSC_ASSERT_OK(pstripe_fsync(f));
        if (c == 0) {
            PSC_ASSERT_OK(pstripe_ftruncate(f, 1 << 20));
        } else if (c == 1) {
            PSC_ASSERT_OK(pstripe_preallocate(f, 1 << 20));
        } else {
            PSC_ASSERT_OK(pstripe_close(f));
            PSC_ASSERT_OK(
                pstripe_open(fs_, path.c_str(), PSTRIPE_RDWR | PSTRIPE_TRUNC, 0, nullptr, &f));
        }
        ASSERT_NO_FATAL_FAILURE(kill_and_restart());
        ps_status_t s = pstripe_fsync(f);
        std::string msg = pstripe_last_error();
        EXPECT_EQ(s, PS_ERR_IO) << pstripe_strerror(s);
        EXPECT_NE(msg.find("restarted"), std::string::npos) << msg;
        PSC_EXPECT_OK(pstripe_fsync(f)); /* reported once */
        PSC_EXPECT_OK(pstripe_close(f));
    }
}

/*
 * A check that fails for one server's failed write keeps what it found
 * about another server's restart for the next check (one call reports one
 * failure): the restart is neither lost nor cleared unreported. Server 0,
 * asked first, fails the staged write of the doomed block; server 1 lost
 * a staged write with its restart.
 */
TEST_F(ClientWbackPair, RestartFoundWhileAFailureIsReportedIsReportedNext)
{
    pstripe_file_t *f;

    ASSERT_NO_FATAL_FAILURE(stage_and_restart("/wbp", 1, &f));
    ps_status_t s = pstripe_fsync(f);
    std::string msg = pstripe_last_error();
    if (stage_errors(0) == 0) {
        pstripe_close(f);
        GTEST_SKIP() << "this file system takes a block below 16 TiB";
    }
    EXPECT_NE(s, PS_OK);
    EXPECT_EQ(msg.find("restarted"), std::string::npos) << "the restart came first: " << msg;
    printf("fsync after a failed write and a restart: %s: %s\n", pstripe_strerror(s), msg.c_str());
    s = pstripe_fsync(f);
    msg = pstripe_last_error();
    EXPECT_EQ(s, PS_ERR_IO) << "the restart went unreported: " << pstripe_strerror(s);
    EXPECT_NE(msg.find("restarted"), std::string::npos) << msg;
    PSC_EXPECT_OK(pstripe_fsync(f)); /* each reported once */
    PSC_EXPECT_OK(pstripe_close(f));
}

/* The other way round: server 0's restart is reported first, and server
 * 1's failed write is left for the next check, not cleared unreported. */
TEST_F(ClientWbackPair, FailureFoundWhileARestartIsReportedIsReportedNext)
{
    pstripe_file_t *f;

    ASSERT_NO_FATAL_FAILURE(stage_and_restart("/wbq", 0, &f));
    ps_status_t s = pstripe_fsync(f);
    std::string msg = pstripe_last_error();
    if (stage_errors(1) == 0) {
        pstripe_close(f);
        GTEST_SKIP() << "this file system takes a block below 16 TiB";
    }
    EXPECT_EQ(s, PS_ERR_IO) << pstripe_strerror(s);
    EXPECT_NE(msg.find("restarted"), std::string::npos) << "the restart was not first: " << msg;
    s = pstripe_fsync(f);
    msg = pstripe_last_error();
    EXPECT_NE(s, PS_OK) << "the failed write went unreported";
    EXPECT_EQ(msg.find("restarted"), std::string::npos) << msg;
    printf("fsync after a restart was reported: %s: %s\n", pstripe_strerror(s), msg.c_str());
    PSC_EXPECT_OK(pstripe_fsync(f)); /* each reported once */
    PSC_EXPECT_OK(pstripe_close(f));
}

/*
 * A write acknowledged while a check waits for its answers may have been
 * staged after the server answered the check: the check must not forget
 * it. After a write to server 0, server 1 is frozen so that the fsync
 * waits; once server 0 has had the fsync's question, it acknowledges a
 * staged write, then loses it with a restart: the next fsync reports the
 * restart. (The check used to forget the server's record, and the next
 * fsync and close succeeded.)
 */
TEST_F(ClientWbackPair, WriteAcknowledgedDuringACheckIsCheckedNext)
{
    pstripe_file_t *f;
    std::vector<uint8_t> out(4096);
    uint64_t nread;

    PSC_ASSERT_OK(pstripe_open(fs_, "/wbd", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, &layout_, &f));
    PSC_ASSERT_OK(pstripe_pwrite(f, model_.data(), model_.size(), 0));
    PSC_ASSERT_OK(pstripe_fsync(f));
    /* a write since the last check: the handle has a record of server 0 */
    PSC_ASSERT_OK(pstripe_pwrite(f, model_.data() + 8192, 4096, 8192));
    ASSERT_EQ(cluster_.kill(1, SIGSTOP), 0);
    /* server 0's request count, which each look at it moves by `self` */
    uint64_t seen = requests(0), self = requests(0) - seen;
    seen += self;
    ps_status_t checked = PS_ERR_IO;
    std::thread check([&] { checked = pstripe_fsync(f); });
    bool asked = wait_until(
        [&] {
            uint64_t now = requests(0);
            bool more = now > seen + self;
            seen = now;
            return more;
        },
        20);
    EXPECT_TRUE(asked) << "the fsync's question did not reach server 0";
    std::vector<uint8_t> b(50, 7); /* target 0: server 0, staged */
    EXPECT_EQ(pstripe_pwrite(f, b.data(), b.size(), 5000), PS_OK) << pstripe_last_error();
    EXPECT_EQ(staged_blocks(0), 1u) << "the write was not staged: this test shows nothing";
    EXPECT_EQ(cluster_.kill(1, SIGCONT), 0);
    check.join(); /* (before any assertion returns) */
    ASSERT_TRUE(asked);
    PSC_ASSERT_OK(checked);
    ASSERT_NO_FATAL_FAILURE(kill_and_restart(0));
    /* its first try may meet the dead connection */
    if (pstripe_pread(f, out.data(), out.size(), 0, &nread) != PS_OK) {
        PSC_ASSERT_OK(pstripe_pread(f, out.data(), out.size(), 0, &nread));
    }
    ps_status_t s = pstripe_fsync(f);
    std::string msg = pstripe_last_error();
    EXPECT_EQ(s, PS_ERR_IO) << "the lost write went unreported: " << pstripe_strerror(s);
    EXPECT_NE(msg.find("restarted"), std::string::npos) << msg;
    PSC_EXPECT_OK(pstripe_fsync(f)); /* reported once */
    PSC_EXPECT_OK(pstripe_close(f));
}

/*
 * The mark a close sends is the lowest count of the replies since the
 * last check, not the first reply's: h's write x starts before a flush
 * fails and is answered after h's write y, which starts after the failure
 * (its reply counts it). h wrote across the failure: its close must fail.
 * The order comes from the queue: reads hold the object's queue (the
 * read of the doomed block is the last of 1,025 I/Os, one at a time);
 * behind them g's write completes the doomed block, which starts the
 * flush of the run of two staged blocks (the second one past the largest
 * file: a short write); x starts then, its I/O after the flush's; y,
 * in a block of the flush, waits for it, then is staged and answered at
 * once, before x's I/O is reaped.
 */
TEST_F(ClientWbackSerial, CloseHearsAFailureBetweenTheStartsOfItsWrites)
{
    const uint64_t prev = doomed_block - 4096;
    pstripe_layout_t layout = {65536, 1, 0};
    std::vector<pstripe_region_t> staged = {{prev, 4096}}, spread;
    std::vector<uint8_t> base(16 << 20, 1);
    pstripe_request_t *reqs[5];
    pstripe_file_t *g, *h;
    int ended = 0; /* had the read holding the queue ended once the writes were sent? */

    PSC_ASSERT_OK(pstripe_open(fs_, "/wbm", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, &layout, &g));
    PSC_ASSERT_OK(pstripe_pwrite(g, base.data(), base.size(), 0));
    doomed_regions(layout, 0, &staged);
    PSC_ASSERT_OK(write_regions(g, staged, 2)); /* block prev whole, the doomed one in part */
    EXPECT_EQ(staged_blocks(), 2u) << "not staged: this test shows nothing";
    PSC_ASSERT_OK(pstripe_open(fs_, "/wbm", PSTRIPE_RDWR, 0, nullptr, &h));
    for (uint64_t i = 0; i < 1024; i++) {
        spread.push_back({i * 16384, 4096}); /* an I/O each (farther apart than coalesce_gap) */
    }
    PSC_ASSERT_OK(iread(g, spread, &reqs[0]));
    PSC_ASSERT_OK(iread(g, {{doomed_block, 4096}}, &reqs[1]));
    PSC_ASSERT_OK(iwrite(g, {{doomed_block, 4096}}, 3, &reqs[2]));
    PSC_ASSERT_OK(iwrite(h, {{8192, 4096}}, 4, &reqs[3]));     /* x */
    PSC_ASSERT_OK(iwrite(h, {{prev + 100, 50}}, 5, &reqs[4])); /* y */
    PSC_EXPECT_OK(pstripe_request_test(reqs[1], &ended));
    for (pstripe_request_t *r : reqs) {
        PSC_EXPECT_OK(pstripe_request_wait(r, nullptr));
    }
    if (ended || stage_errors() == 0) {
        pstripe_close(h);
        pstripe_close(g);
        GTEST_SKIP() << (ended ? "the reads ended before the writes were sent"
                               : "this file system takes a block below 16 TiB");
    }
    ps_status_t s = pstripe_close(h);
    EXPECT_NE(s, PS_OK) << "h's close did not hear of a failure between its writes";
    printf("close of writes across a failure: %s: %s\n", pstripe_strerror(s), pstripe_last_error());
    EXPECT_NE(pstripe_close(g), PS_OK) << "g's close did not hear that its write failed";
}

/* PSTRIPE_WRITE_BEHIND (the driver's write-behind flushes): a short run is
 * answered once staged, where another reader sees it, and is lost with a
 * killed server as a partial block is, which the next sync reports; the
 * same write without the flag goes to disk before its answer. */
TEST_F(ClientWback, WriteBehindIsStagedAndReportedBySync)
{
    pstripe_layout_t layout = {1 << 20, 1, 0};
    pstripe_file_t *f;
    pstripe_request_t *req;
    uint64_t nread;
    std::vector<uint8_t> b(65536, 9), out(65536);
    struct iovec iov = {b.data(), b.size()};
    pstripe_region_t behind = {131072, 65536}, through = {262144, 65536};

    PSC_ASSERT_OK(pstripe_open(fs_, "/wbf", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, &layout, &f));
    EXPECT_EQ(pstripe_write_list_flags(f, &behind, 1, &iov, 1, 0x2), PS_ERR_INVALID);
    EXPECT_EQ(pstripe_iwrite_list_flags(f, &behind, 1, &iov, 1, 0x80000000u, &req), PS_ERR_INVALID);
    PSC_ASSERT_OK(pstripe_write_list(f, &through, 1, &iov, 1));
    EXPECT_EQ(staged_blocks(), 0u) << "a write without the flag was staged";
    PSC_ASSERT_OK(pstripe_fsync(f));
    PSC_ASSERT_OK(pstripe_write_list_flags(f, &behind, 1, &iov, 1, PSTRIPE_WRITE_BEHIND));
    uint64_t staged = staged_blocks();
    EXPECT_GT(staged, 0u) << "the write-behind flush was not staged";
    pstripe_region_t more = {393216, 65536};
    PSC_ASSERT_OK(pstripe_iwrite_list_flags(f, &more, 1, &iov, 1, PSTRIPE_WRITE_BEHIND, &req));
    PSC_ASSERT_OK(pstripe_request_wait(req, nullptr));
    EXPECT_EQ(staged_blocks(), 2 * staged) << "a nonblocking write-behind flush was not staged";
    PSC_ASSERT_OK(pstripe_pread(f, out.data(), out.size(), behind.offset, &nread));
    EXPECT_TRUE(out == b) << "the staged bytes do not read back";

    ASSERT_NO_FATAL_FAILURE(kill_and_restart());
    ps_status_t s = pstripe_fsync(f);
    EXPECT_EQ(s, PS_ERR_IO) << "a lost write-behind flush went unreported: " << pstripe_strerror(s);
    PSC_ASSERT_OK(pstripe_pread(f, out.data(), out.size(), through.offset, &nread));
    EXPECT_TRUE(out == b) << "the synced write was lost";
    PSC_ASSERT_OK(pstripe_close(f));
}

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

#include <string>
#include <vector>

using namespace psc_test;

namespace {

class ClientWback : public ::testing::Test {
  protected:
    void SetUp() override
    {
        /* the restarts reuse the port (see ClientFault.ServerKilledMidWrite) */
        setenv("UCX_CM_REUSEADDR", "y", 1);
        ASSERT_TRUE(cluster_.start(1, 1, {"--set", "write_back_age=60s"}));
        unsetenv("UCX_CM_REUSEADDR");
        PSC_ASSERT_OK(connect(cluster_, {"timeout=5s", "connect_timeout=3s"}, &fs_));
    }
    void TearDown() override
    {
        if (fs_ != nullptr) {
            pstripe_disconnect(fs_);
        }
    }
    void kill_and_restart()
    {
        ASSERT_EQ(cluster_.kill(0, SIGKILL), 0);
        cluster_.wait(0, 30);
        setenv("UCX_CM_REUSEADDR", "y", 1);
        ASSERT_TRUE(cluster_.restart(0, true));
        unsetenv("UCX_CM_REUSEADDR");
    }
    uint64_t staged_blocks()
    {
        pstripe_server_stats_t st;
        EXPECT_EQ(pstripe_server_stats(fs_, 0, &st), PS_OK) << pstripe_last_error();
        return st.stage_blocks;
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

/*
 * test_client_wbuf.cc: write-behind buffers (pstripe_wbuf_*). Random small
 * writes through a buffer against a byte model, what another handle sees
 * before and after a flush, flush_all, and a failed send returned by the
 * call that sent it and once more by the next sync.
 */
#include "test_client_util.h"

#include <signal.h>

#include <random>
#include <vector>

using namespace psc_test;

namespace {

class ClientWbuf : public ::testing::Test {
  protected:
    void start(int n)
    {
        ASSERT_TRUE(cluster_.start(n, 1));
        PSC_ASSERT_OK(connect(cluster_, {"timeout=5s", "connect_timeout=3s"}, &fs_));
    }
    void TearDown() override
    {
        if (fs_ != nullptr) {
            pstripe_disconnect(fs_);
        }
    }
    /* Bytes [off, off + len) as another handle of the file reads them. */
    std::vector<uint8_t> read_back(const char *path, uint64_t off, uint64_t len, uint64_t *nread)
    {
        std::vector<uint8_t> out(len);
        pstripe_file_t *g;

        EXPECT_EQ(pstripe_open(fs_, path, PSTRIPE_RDONLY, 0, nullptr, &g), PS_OK);
        EXPECT_EQ(pstripe_pread(g, out.data(), len, off, nread), PS_OK);
        EXPECT_EQ(pstripe_close(g), PS_OK);
        return out;
    }

    ps_test::ps_cluster cluster_;
    pstripe_fs_t *fs_ = nullptr;
};

TEST_F(ClientWbuf, RandomWritesAgainstModel)
{
    start(2);
    pstripe_layout_t layout = {4096, 2, 0};
    pstripe_file_t *f;
    pstripe_wbuf_t *wb;
    file_model model;
    std::mt19937 rng(11);
    int taken_count = 0, direct = 0;

    PSC_ASSERT_OK(pstripe_open(fs_, "/wbrand", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, &layout, &f));
    PSC_ASSERT_OK(pstripe_wbuf_create(f, 64 << 10, &wb));
    for (int i = 0; i < 4000; i++) {
        /* 1-3 regions of 1 B - 2 KiB (now and then 20 KiB: not taken)
         * anywhere in 1 MiB, overlapping earlier ones */
        int nreg = 1 + (int)(rng() % 3);
        std::vector<pstripe_region_t> regs;
        std::vector<uint8_t> bytes;
        for (int r = 0; r < nreg; r++) {
            uint64_t len = i % 97 == 0 ? 20000 : 1 + rng() % 2048;
            uint64_t off = rng() % (1 << 20);
            regs.push_back({off, len});
            for (uint64_t b = 0; b < len; b++) {
                bytes.push_back((uint8_t)rng());
            }
        }
        struct iovec iov = {bytes.data(), bytes.size()};
        int taken;
        PSC_ASSERT_OK(pstripe_wbuf_write(wb, regs.data(), regs.size(), &iov, 1, &taken));
        if (!taken) {
            PSC_ASSERT_OK(pstripe_write_list(f, regs.data(), regs.size(), &iov, 1));
            direct++;
        }
        taken_count += taken;
        uint64_t at = 0;
        for (const pstripe_region_t &r : regs) {
            model.write(r.offset, &bytes[at], r.length);
            at += r.length;
        }
        if (i % 500 == 499) {
            /* a read of this handle after flush_for_read sees every write */
            uint64_t off = rng() % (1 << 20), len = 8192, nread;
            std::vector<uint8_t> out(len);
            PSC_ASSERT_OK(pstripe_wbuf_flush_for_read(wb, off));
            PSC_ASSERT_OK(pstripe_pread(f, out.data(), len, off, &nread));
            for (uint64_t b = 0; b < len; b++) {
                ASSERT_EQ(out[b], model.at(off + b)) << "write " << i << " byte " << off + b;
            }
        }
    }
    PSC_ASSERT_OK(pstripe_wbuf_sync(wb));
    EXPECT_GT(taken_count, 3000);
    EXPECT_GT(direct, 10);
    uint64_t nread;
    std::vector<uint8_t> out = read_back("/wbrand", 0, model.size, &nread);
    EXPECT_EQ(nread, model.size);
    for (uint64_t b = 0; b < model.size; b++) {
        ASSERT_EQ(out[b], model.at(b)) << "byte " << b;
    }
    PSC_ASSERT_OK(pstripe_wbuf_free(wb));
    PSC_ASSERT_OK(pstripe_close(f));
}

TEST_F(ClientWbuf, BytesStayInTheBufferUntilAReadNeedsThem)
{
    start(1);
    pstripe_file_t *f;
    pstripe_wbuf_t *wb;
    std::vector<uint8_t> b(100, 7);
    pstripe_region_t reg = {1000, 100};
    struct iovec iov = {b.data(), b.size()};
    uint64_t nread;
    int taken;

    PSC_ASSERT_OK(pstripe_open(fs_, "/wbvis", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, nullptr, &f));
    PSC_ASSERT_OK(pstripe_wbuf_create(f, 4096, &wb));
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &reg, 1, &iov, 1, &taken));
    EXPECT_EQ(taken, 1);
    read_back("/wbvis", 0, 2000, &nread);
    EXPECT_EQ(nread, 0u) << "buffered bytes reached the servers before a flush";
    /* a read from 1100 on neither reads them nor lies past them */
    PSC_ASSERT_OK(pstripe_wbuf_flush_for_read(wb, 1100));
    read_back("/wbvis", 0, 2000, &nread);
    EXPECT_EQ(nread, 0u);
    /* a read from 1099 does */
    PSC_ASSERT_OK(pstripe_wbuf_flush_for_read(wb, 1099));
    std::vector<uint8_t> out = read_back("/wbvis", 0, 2000, &nread);
    EXPECT_EQ(nread, 1100u);
    EXPECT_TRUE(std::equal(b.begin(), b.end(), out.begin() + 1000));
    EXPECT_EQ(out[999], 0);

    /* a write of more than a quarter of the buffer is not taken, and what
     * is buffered goes first */
    std::vector<uint8_t> big(2000, 9);
    pstripe_region_t big_reg = {5000, 2000}, small_reg = {5500, 100};
    struct iovec big_iov = {big.data(), big.size()};
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &small_reg, 1, &iov, 1, &taken));
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &big_reg, 1, &big_iov, 1, &taken));
    EXPECT_EQ(taken, 0);
    out = read_back("/wbvis", 5500, 100, &nread);
    EXPECT_TRUE(std::equal(b.begin(), b.end(), out.begin()));
    PSC_ASSERT_OK(pstripe_wbuf_free(wb));
    PSC_ASSERT_OK(pstripe_close(f));
}

TEST_F(ClientWbuf, FlushAllSendsEveryBuffer)
{
    start(1);
    pstripe_file_t *f[2];
    pstripe_wbuf_t *wb[2];
    const char *paths[2] = {"/wball0", "/wball1"};
    std::vector<uint8_t> b(64, 3);
    pstripe_region_t reg = {0, 64};
    struct iovec iov = {b.data(), b.size()};
    uint64_t nread;
    int taken;

    for (int i = 0; i < 2; i++) {
        PSC_ASSERT_OK(
            pstripe_open(fs_, paths[i], PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, nullptr, &f[i]));
        PSC_ASSERT_OK(pstripe_wbuf_create(f[i], 4096, &wb[i]));
        PSC_ASSERT_OK(pstripe_wbuf_write(wb[i], &reg, 1, &iov, 1, &taken));
    }
    PSC_ASSERT_OK(pstripe_wbuf_flush_all());
    for (int i = 0; i < 2; i++) {
        read_back(paths[i], 0, 64, &nread);
        EXPECT_EQ(nread, 64u) << paths[i];
        PSC_ASSERT_OK(pstripe_wbuf_free(wb[i]));
        PSC_ASSERT_OK(pstripe_close(f[i]));
    }
}

TEST_F(ClientWbuf, BadArgumentsAreRefused)
{
    start(1);
    pstripe_file_t *f;
    pstripe_wbuf_t *wb;
    std::vector<uint8_t> b(10);
    pstripe_region_t reg = {0, 11};
    struct iovec iov = {b.data(), b.size()};
    int taken = 1;

    PSC_ASSERT_OK(pstripe_open(fs_, "/wbbad", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, nullptr, &f));
    EXPECT_EQ(pstripe_wbuf_create(f, 10, &wb), PS_ERR_INVALID);
    EXPECT_EQ(pstripe_wbuf_create(nullptr, 4096, &wb), PS_ERR_INVALID);
    PSC_ASSERT_OK(pstripe_wbuf_create(f, 4096, &wb));
    EXPECT_EQ(pstripe_wbuf_write(wb, &reg, 1, &iov, 1, &taken), PS_ERR_INVALID);
    EXPECT_EQ(taken, 0);
    EXPECT_EQ(pstripe_wbuf_free(nullptr), PS_OK);
    PSC_ASSERT_OK(pstripe_wbuf_free(wb));
    PSC_ASSERT_OK(pstripe_close(f));
}

/* The server goes before the buffer is sent: the flush fails, and the next
 * sync fails too (the program's MPI_File_sync or close learns of it), once. */
TEST_F(ClientWbuf, AFailedSendIsReturnedAndKeptForTheNextSync)
{
    start(1);
    pstripe_file_t *f;
    pstripe_wbuf_t *wb;
    std::vector<uint8_t> b(100, 5);
    pstripe_region_t reg = {0, 100};
    struct iovec iov = {b.data(), b.size()};
    int taken;

    PSC_ASSERT_OK(pstripe_open(fs_, "/wbfail", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, nullptr, &f));
    PSC_ASSERT_OK(pstripe_wbuf_create(f, 4096, &wb));
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &reg, 1, &iov, 1, &taken));
    ASSERT_EQ(cluster_.kill(0, SIGKILL), 0);
    cluster_.wait(0, 30);
    ps_status_t s = pstripe_wbuf_flush(wb);
    EXPECT_TRUE(s == PS_ERR_CONN || s == PS_ERR_TIMEOUT) << pstripe_strerror(s);
    EXPECT_NE(std::string(pstripe_last_error()).find("write-behind"), std::string::npos)
        << pstripe_last_error();
    s = pstripe_wbuf_sync(wb);
    EXPECT_TRUE(s == PS_ERR_CONN || s == PS_ERR_TIMEOUT) << pstripe_strerror(s);
    EXPECT_EQ(pstripe_wbuf_sync(wb), PS_OK) << "the failure is returned once by a sync";
    /* a buffer freed with a failed send in it says so */
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &reg, 1, &iov, 1, &taken));
    s = pstripe_wbuf_free(wb);
    EXPECT_TRUE(s == PS_ERR_CONN || s == PS_ERR_TIMEOUT) << pstripe_strerror(s);
    (void)pstripe_close(f);
}

} // namespace

/*
 * test_client_wbuf.cc: write-behind buffers (pstripe_wbuf_*) and read
 * caches (pstripe_rcache_*). Random small writes through a buffer against a
 * byte model, what another handle sees before and after a flush, flush_all,
 * and a failed send returned by the call that sent it and once more by the
 * next sync; random small reads through a cache against the model, with
 * the reader's own writes invalidating blocks, what a cache serves until it
 * is dropped, reads past the end of file left to the caller, and streams of
 * reads read ahead (psc_readahead.c).
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

    /* Create path (stripes of 64 KiB on 2 servers) holding size random
     * bytes, noted in model; open it as *f, and as *g too unless g is
     * NULL. */
    void create_filled(const char *path, uint64_t size, unsigned seed, file_model *model,
                       pstripe_file_t **f, pstripe_file_t **g)
    {
        pstripe_layout_t layout = {65536, 2, 0};
        std::mt19937 rng(seed);
        std::vector<uint8_t> init(size);

        for (uint8_t &b : init) {
            b = (uint8_t)rng();
        }
        ASSERT_EQ(pstripe_open(fs_, path, PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, &layout, f), PS_OK);
        if (g != nullptr) {
            ASSERT_EQ(pstripe_open(fs_, path, PSTRIPE_RDWR, 0, nullptr, g), PS_OK);
        }
        ASSERT_EQ(pstripe_pwrite(*f, init.data(), size, 0), PS_OK);
        model->write(0, init.data(), size);
    }
    /* len bytes of value v written at off through f, whose cache rc is
     * told (the owner's write), or through another handle followed by a
     * message (rc NULL: drop_all). */
    void write_beside(pstripe_file_t *f, pstripe_rcache_t *rc, file_model *model, uint64_t off,
                      uint64_t len, uint8_t v)
    {
        std::vector<uint8_t> w(len, v);
        pstripe_region_t r = {off, len};

        ASSERT_EQ(pstripe_pwrite(f, w.data(), len, off), PS_OK);
        model->write(off, w.data(), len);
        if (rc != nullptr) {
            pstripe_rcache_invalidate(rc, &r, 1);
        } else {
            pstripe_rcache_drop_all();
        }
    }
    /* Bytes [off, off + len) of f read through rc as a driver reads them
     * (itself when the cache does not serve them); counts a served read. */
    std::vector<uint8_t> cached_read(pstripe_rcache_t *rc, pstripe_file_t *f, uint64_t off,
                                     uint64_t len, uint64_t *served_count)
    {
        std::vector<uint8_t> out(len);
        pstripe_region_t reg = {off, len};
        struct iovec iov = {out.data(), out.size()};
        uint64_t nread = 0;
        int served = 0;
        EXPECT_EQ(pstripe_rcache_read(rc, &reg, 1, &iov, 1, &nread, &served), PS_OK);
        if (!served) {
            EXPECT_EQ(pstripe_pread(f, out.data(), len, off, &nread), PS_OK);
        }
        EXPECT_EQ(nread, len) << "at " << off;
        *served_count += served;
        return out;
    }
    /* A counter of the servers' (read requests by default), summed over
     * the first two. */
    uint64_t
    read_batches(uint64_t pstripe_server_stats_t::*counter = &pstripe_server_stats_t::read_batches)
    {
        uint64_t n = 0;
        for (int i = 0; i < 2; i++) {
            pstripe_server_stats_t st;
            EXPECT_EQ(pstripe_server_stats(fs_, i, &st), PS_OK);
            n += st.*counter;
        }
        return n;
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
        EXPECT_EQ(pstripe_wbuf_pending(wb[i]), 1);
    }
    EXPECT_EQ(pstripe_wbuf_pending(nullptr), 1);
    PSC_ASSERT_OK(pstripe_wbuf_flush_all());
    EXPECT_EQ(pstripe_wbuf_pending(nullptr), 0);
    for (int i = 0; i < 2; i++) {
        EXPECT_EQ(pstripe_wbuf_pending(wb[i]), 0);
        read_back(paths[i], 0, 64, &nread);
        EXPECT_EQ(nread, 64u) << paths[i];
        PSC_ASSERT_OK(pstripe_wbuf_free(wb[i]));
        PSC_ASSERT_OK(pstripe_close(f[i]));
    }
}

/* A new size flushes what is buffered and takes writes of a quarter of it
 * from then on. */
TEST_F(ClientWbuf, AResizeFlushesAndTakesTheNewSize)
{
    start(1);
    pstripe_file_t *f;
    pstripe_wbuf_t *wb;
    std::vector<uint8_t> b(1000, 4);
    pstripe_region_t big = {0, 1000}, small = {2000, 16};
    struct iovec iov = {b.data(), 1000}, iov16 = {b.data(), 16};
    uint64_t nread;
    int taken;

    PSC_ASSERT_OK(pstripe_open(fs_, "/wbresize", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, nullptr, &f));
    PSC_ASSERT_OK(pstripe_wbuf_create(f, 4096, &wb));
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &big, 1, &iov, 1, &taken));
    EXPECT_EQ(taken, 1);
    read_back("/wbresize", 0, 1000, &nread);
    EXPECT_EQ(nread, 0u) << "a buffered write reached the servers";
    PSC_ASSERT_OK(pstripe_wbuf_resize(wb, 64));
    EXPECT_EQ(pstripe_wbuf_pending(wb), 0);
    EXPECT_EQ(read_back("/wbresize", 0, 1000, &nread), b);
    EXPECT_EQ(nread, 1000u);
    /* 1000 bytes are more than a quarter of 64 now; 16 are not */
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &big, 1, &iov, 1, &taken));
    EXPECT_EQ(taken, 0);
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &small, 1, &iov16, 1, &taken));
    EXPECT_EQ(taken, 1);
    EXPECT_EQ(pstripe_wbuf_resize(wb, 0), PS_ERR_INVALID);
    EXPECT_EQ(pstripe_wbuf_pending(wb), 1) << "a refused size dropped the buffered write";
    PSC_ASSERT_OK(pstripe_wbuf_free(wb));
    read_back("/wbresize", 0, 2016, &nread);
    EXPECT_EQ(nread, 2016u);
    PSC_ASSERT_OK(pstripe_close(f));
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
    EXPECT_EQ(pstripe_wbuf_create(f, 0, &wb), PS_ERR_INVALID);
    EXPECT_EQ(pstripe_wbuf_create(nullptr, 4096, &wb), PS_ERR_INVALID);
    PSC_ASSERT_OK(pstripe_wbuf_create(f, 4096, &wb));
    EXPECT_EQ(pstripe_wbuf_write(wb, &reg, 1, &iov, 1, &taken), PS_ERR_INVALID);
    EXPECT_EQ(taken, 0);
    /* checked as pstripe_write_list checks: a region that overflows, and
     * (below) a file opened read-only, are refused at once, not at the flush */
    pstripe_region_t huge = {UINT64_MAX - 4, 10};
    struct iovec ten = {b.data(), 10};
    EXPECT_EQ(pstripe_wbuf_write(wb, &huge, 1, &ten, 1, &taken), PS_ERR_INVALID);
    EXPECT_EQ(taken, 0);
    EXPECT_NE(std::string(pstripe_last_error()).find("negative offset -5"), std::string::npos)
        << "an offset past 2^63 is a negative MPI_Offset: " << pstripe_last_error();
    pstripe_file_t *ro;
    pstripe_wbuf_t *rowb;
    pstripe_region_t ten_at_0 = {0, 10};
    PSC_ASSERT_OK(pstripe_open(fs_, "/wbbad", PSTRIPE_RDONLY, 0, nullptr, &ro));
    PSC_ASSERT_OK(pstripe_wbuf_create(ro, 4096, &rowb));
    EXPECT_EQ(pstripe_wbuf_write(rowb, &ten_at_0, 1, &ten, 1, &taken), PS_ERR_ACCESS);
    EXPECT_EQ(taken, 0);
    EXPECT_NE(std::string(pstripe_last_error()).find("read-only"), std::string::npos)
        << pstripe_last_error();
    PSC_ASSERT_OK(pstripe_wbuf_free(rowb));
    PSC_ASSERT_OK(pstripe_close(ro));
    /* and a read cache's reads as pstripe_read_list's */
    pstripe_rcache_t *rc;
    uint64_t nread;
    int served = 1;
    PSC_ASSERT_OK(pstripe_rcache_create(f, 64 << 10, 4096, &rc));
    EXPECT_EQ(pstripe_rcache_read(rc, &reg, 1, &iov, 1, &nread, &served), PS_ERR_INVALID);
    EXPECT_EQ(served, 0);
    pstripe_rcache_free(rc);
    EXPECT_EQ(pstripe_wbuf_free(nullptr), PS_OK);
    PSC_ASSERT_OK(pstripe_wbuf_free(wb));
    PSC_ASSERT_OK(pstripe_close(f));
}

/* A write reaching past the servers' object limit is not buffered: its
 * own write fails at once, and the good writes buffered before it reach
 * the servers (before: the buffer took it, and the flush failed the whole
 * batch, losing every good write in it, found by a helper under both MPIs:
 * 4 KiB at 0, 8 bytes at 2^50, 4 KiB at 8192, then a failed sync and
 * zeros where the 4 KiB were). */
TEST_F(ClientWbuf, WritePastTheObjectLimitIsNotBuffered)
{
    start(2);
    pstripe_file_t *f;
    pstripe_wbuf_t *wb;
    std::vector<uint8_t> b(4096, 0x5a);
    struct iovec iov = {b.data(), b.size()}, iov8 = {b.data(), 8};
    pstripe_region_t good = {0, 4096}, far = {1ull << 50, 8}, near = {0, 8};
    int taken = 0;
    uint64_t nread;

    pstripe_layout_t layout = {1 << 20, 2, -1};

    PSC_ASSERT_OK(pstripe_open(fs_, "/wblimit", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, &layout, &f));
    PSC_ASSERT_OK(pstripe_wbuf_create(f, 1 << 20, &wb));
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &good, 1, &iov, 1, &taken));
    EXPECT_EQ(taken, 1);
    /* far out but below the limit (2 targets: 32 TiB of file; this is 8
     * TiB into an object): buffered */
    near.offset = 1ull << 44;
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &near, 1, &iov8, 1, &taken));
    EXPECT_EQ(taken, 1) << "a write below the limit";
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &far, 1, &iov8, 1, &taken));
    EXPECT_EQ(taken, 0) << "a write past the limit was buffered";
    EXPECT_EQ(pstripe_wbuf_pending(wb), 0) << "the buffered writes were not sent before it";
    EXPECT_EQ(pstripe_write_list(f, &far, 1, &iov8, 1), PS_ERR_FILE_TOO_LARGE);
    PSC_ASSERT_OK(pstripe_wbuf_flush(wb));
    PSC_ASSERT_OK(pstripe_wbuf_free(wb));
    PSC_ASSERT_OK(pstripe_close(f));
    std::vector<uint8_t> out = read_back("/wblimit", 0, 4096, &nread);
    EXPECT_EQ(nread, 4096u);
    EXPECT_EQ(out, b) << "the good write buffered before it was lost";
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
    /* what a program leaves open at its end: synced, failures counted and
     * forgotten (a close after it returns nothing more) */
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &reg, 1, &iov, 1, &taken));
    EXPECT_EQ(pstripe_wbuf_sync_all(), 1);
    EXPECT_EQ(pstripe_wbuf_sync(wb), PS_OK) << "sync_all left a failure behind";
    /* a buffer freed with a failed send in it says so */
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &reg, 1, &iov, 1, &taken));
    s = pstripe_wbuf_free(wb);
    EXPECT_TRUE(s == PS_ERR_CONN || s == PS_ERR_TIMEOUT) << pstripe_strerror(s);
    (void)pstripe_close(f);
}

class ClientRcache : public ClientWbuf {};

TEST_F(ClientRcache, SmallReadsAgainstModel)
{
    start(2);
    pstripe_layout_t layout = {8192, 2, 0};
    pstripe_file_t *f;
    pstripe_rcache_t *rc;
    file_model model;
    std::mt19937 rng(5);
    int served_count = 0;

    PSC_ASSERT_OK(pstripe_open(fs_, "/rcrand", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, &layout, &f));
    std::vector<uint8_t> init(300000);
    for (uint8_t &b : init) {
        b = (uint8_t)rng();
    }
    PSC_ASSERT_OK(pstripe_pwrite(f, init.data(), init.size(), 0));
    model.write(0, init.data(), init.size());
    PSC_ASSERT_OK(pstripe_rcache_create(f, 64 << 10, 4096, &rc));
    for (int i = 0; i < 5000; i++) {
        if (i % 20 == 9) {
            /* an own write (now and then past the end of file), its blocks invalidated */
            uint64_t off = rng() % 320000, len = 1 + rng() % 3000;
            std::vector<uint8_t> w(len);
            for (uint8_t &b : w) {
                b = (uint8_t)rng();
            }
            PSC_ASSERT_OK(pstripe_pwrite(f, w.data(), len, off));
            pstripe_region_t r = {off, len};
            pstripe_rcache_invalidate(rc, &r, 1);
            model.write(off, w.data(), len);
            continue;
        }
        if (i % 20 == 19) {
            /* an own write of 1-3 strided runs, invalidated as runs */
            std::vector<pstripe_run_t> runs;
            uint64_t off = rng() % 300000, total = 0;
            for (int k = 1 + (int)(rng() % 3); k > 0; k--) {
                pstripe_run_t run = {off, 1 + rng() % 300, 0, 1 + rng() % 8};
                run.stride = run.length + rng() % 5000;
                runs.push_back(run);
                total += run.length * run.count;
                off += run.stride * run.count + rng() % 1000;
            }
            std::vector<uint8_t> w(total);
            for (uint8_t &b : w) {
                b = (uint8_t)rng();
            }
            struct iovec wiov = {w.data(), w.size()};
            PSC_ASSERT_OK(pstripe_write_runs(f, runs.data(), runs.size(), &wiov, 1));
            pstripe_rcache_invalidate_runs(rc, runs.data(), runs.size());
            uint64_t at = 0;
            for (const pstripe_run_t &run : runs) {
                for (uint64_t c = 0; c < run.count; c++, at += run.length) {
                    model.write(run.offset + c * run.stride, w.data() + at, run.length);
                }
            }
            continue;
        }
        /* 1-4 regions of 1-600 bytes near one another, ascending */
        std::vector<pstripe_region_t> regs;
        uint64_t off = rng() % 330000, total = 0;
        int nreg = 1 + (int)(rng() % 4);
        for (int r = 0; r < nreg; r++) {
            uint64_t len = 1 + rng() % 600;
            regs.push_back({off, len});
            total += len;
            off += len + rng() % 200;
        }
        std::vector<uint8_t> out(total, 0xee);
        struct iovec iov = {out.data(), out.size()};
        uint64_t nread = 0;
        int served;
        PSC_ASSERT_OK(pstripe_rcache_read(rc, regs.data(), regs.size(), &iov, 1, &nread, &served));
        if (!served) {
            PSC_ASSERT_OK(pstripe_read_list(f, regs.data(), regs.size(), &iov, 1, &nread));
        }
        served_count += served;
        ASSERT_EQ(nread, model.below_size(regs)) << "read " << i << " served " << served;
        uint64_t at = 0;
        for (const pstripe_region_t &r : regs) {
            for (uint64_t b = 0; b < r.length; b++, at++) {
                ASSERT_EQ(out[at], model.at(r.offset + b))
                    << "read " << i << " byte " << r.offset + b << " served " << served;
            }
        }
    }
    EXPECT_GT(served_count, 3500);
    pstripe_rcache_free(rc);
    PSC_ASSERT_OK(pstripe_close(f));
}

TEST_F(ClientRcache, ServesItsBlocksUntilDropped)
{
    start(1);
    pstripe_file_t *f, *g;
    pstripe_rcache_t *rc;
    std::vector<uint8_t> a(8192, 1), b(100, 2), out(100);
    pstripe_region_t reg = {1000, 100};
    struct iovec iov = {out.data(), out.size()};
    uint64_t nread;
    int served;

    PSC_ASSERT_OK(pstripe_open(fs_, "/rcdrop", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, nullptr, &f));
    PSC_ASSERT_OK(pstripe_open(fs_, "/rcdrop", PSTRIPE_RDWR, 0, nullptr, &g));
    PSC_ASSERT_OK(pstripe_pwrite(f, a.data(), a.size(), 0));
    PSC_ASSERT_OK(pstripe_rcache_create(f, 64 << 10, 4096, &rc));
    PSC_ASSERT_OK(pstripe_rcache_read(rc, &reg, 1, &iov, 1, &nread, &served));
    ASSERT_EQ(served, 1);
    EXPECT_EQ(out[0], 1);
    /* another process's write: the cache still serves its block */
    PSC_ASSERT_OK(pstripe_pwrite(g, b.data(), b.size(), 1000));
    PSC_ASSERT_OK(pstripe_rcache_read(rc, &reg, 1, &iov, 1, &nread, &served));
    EXPECT_EQ(out[0], 1) << "the read went to the servers: nothing cached";
    /* after a message (drop_all), the new bytes: the first read after the
     * drop is left to the caller (it reads its own bytes, not whole
     * blocks), the next fetches its block again */
    pstripe_rcache_drop_all();
    PSC_ASSERT_OK(pstripe_rcache_read(rc, &reg, 1, &iov, 1, &nread, &served));
    EXPECT_EQ(served, 0);
    PSC_ASSERT_OK(pstripe_rcache_read(rc, &reg, 1, &iov, 1, &nread, &served));
    EXPECT_EQ(served, 1);
    EXPECT_EQ(out[0], 2);
    PSC_ASSERT_OK(pstripe_pwrite(g, a.data(), b.size(), 1000));
    pstripe_rcache_drop(rc);
    PSC_ASSERT_OK(pstripe_rcache_read(rc, &reg, 1, &iov, 1, &nread, &served));
    EXPECT_EQ(served, 0);
    PSC_ASSERT_OK(pstripe_rcache_read(rc, &reg, 1, &iov, 1, &nread, &served));
    EXPECT_EQ(served, 1);
    EXPECT_EQ(out[0], 1);
    pstripe_rcache_free(rc);
    PSC_ASSERT_OK(pstripe_close(g));
    PSC_ASSERT_OK(pstripe_close(f));
}

TEST_F(ClientRcache, ReadsPastTheEndOfFileAreLeftToTheCaller)
{
    start(1);
    pstripe_file_t *f, *g;
    pstripe_rcache_t *rc;
    std::vector<uint8_t> a(1000, 3), out(200);
    struct iovec iov = {out.data(), out.size()};
    pstripe_region_t across = {900, 200}, below = {100, 200}, after = {1000, 200};
    uint64_t nread = 0;
    int served;

    PSC_ASSERT_OK(pstripe_open(fs_, "/rceof", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, nullptr, &f));
    PSC_ASSERT_OK(pstripe_open(fs_, "/rceof", PSTRIPE_RDWR, 0, nullptr, &g));
    PSC_ASSERT_OK(pstripe_pwrite(f, a.data(), a.size(), 0));
    PSC_ASSERT_OK(pstripe_rcache_create(f, 64 << 10, 4096, &rc));
    PSC_ASSERT_OK(pstripe_rcache_read(rc, &across, 1, &iov, 1, &nread, &served));
    EXPECT_EQ(served, 0);
    PSC_ASSERT_OK(pstripe_rcache_read(rc, &below, 1, &iov, 1, &nread, &served));
    EXPECT_EQ(served, 1);
    EXPECT_EQ(nread, 200u);
    /* the file grows: the block's bytes past the old end are not served */
    PSC_ASSERT_OK(pstripe_pwrite(g, a.data(), a.size(), 1000));
    PSC_ASSERT_OK(pstripe_rcache_read(rc, &after, 1, &iov, 1, &nread, &served));
    EXPECT_EQ(served, 0);
    EXPECT_EQ(pstripe_rcache_create(f, 64 << 10, 0, &rc), PS_ERR_INVALID);
    EXPECT_EQ(pstripe_rcache_create(f, 4096, 4096, &rc), PS_ERR_INVALID);
    pstripe_rcache_free(rc);
    PSC_ASSERT_OK(pstripe_close(g));
    PSC_ASSERT_OK(pstripe_close(f));
}

/* A write still buffered below a read, in the block the read fetches: the
 * read flushes from the block's start (pstripe_rcache_reach), so the block
 * holds the write (ps_random under Open MPI read zeros of such a block). */
TEST_F(ClientRcache, ABlockFetchedBesideABufferedWriteHoldsIt)
{
    start(1);
    pstripe_file_t *f;
    pstripe_wbuf_t *wb;
    pstripe_rcache_t *rc;
    std::vector<uint8_t> zero(8192, 0), w(100, 9), out(100);
    pstripe_region_t wreg = {100, 100}, rreg = {1000, 100};
    struct iovec wiov = {w.data(), w.size()}, riov = {out.data(), out.size()};
    uint64_t nread;
    int taken, served;

    PSC_ASSERT_OK(pstripe_open(fs_, "/rcwb", PSTRIPE_RDWR | PSTRIPE_CREAT, 0644, nullptr, &f));
    PSC_ASSERT_OK(pstripe_pwrite(f, zero.data(), zero.size(), 0));
    PSC_ASSERT_OK(pstripe_wbuf_create(f, 4096, &wb));
    PSC_ASSERT_OK(pstripe_rcache_create(f, 64 << 10, 4096, &rc));
    PSC_ASSERT_OK(pstripe_wbuf_write(wb, &wreg, 1, &wiov, 1, &taken));
    pstripe_rcache_invalidate(rc, &wreg, 1);
    EXPECT_EQ(pstripe_rcache_reach(rc, 1000), 0u);
    PSC_ASSERT_OK(pstripe_wbuf_flush_for_read(wb, pstripe_rcache_reach(rc, 1000)));
    PSC_ASSERT_OK(pstripe_rcache_read(rc, &rreg, 1, &riov, 1, &nread, &served));
    EXPECT_EQ(served, 1);
    PSC_ASSERT_OK(pstripe_wbuf_flush_for_read(wb, pstripe_rcache_reach(rc, 100)));
    PSC_ASSERT_OK(pstripe_rcache_read(rc, &wreg, 1, &riov, 1, &nread, &served));
    EXPECT_EQ(served, 1);
    EXPECT_EQ(out, w) << "the cache served the block as it was before the buffered write";
    pstripe_rcache_free(rc);
    PSC_ASSERT_OK(pstripe_wbuf_free(wb));
    PSC_ASSERT_OK(pstripe_close(f));
}

/* A forward stream of small reads is read ahead (a few list reads for the
 * whole file, not one per block), and keeps seeing the reader's own writes
 * ahead of it and, after drop_all, another handle's. */
TEST_F(ClientRcache, ForwardReadsAreReadAhead)
{
    start(2);
    pstripe_file_t *f, *g;
    pstripe_rcache_t *rc;
    file_model model;
    const uint64_t size = 2 << 20, piece = 1000, block = 16384;

    ASSERT_NO_FATAL_FAILURE(create_filled("/rcfwd", size, 3, &model, &f, &g));
    PSC_ASSERT_OK(pstripe_rcache_create(f, 1 << 20, block, &rc));
    uint64_t before = read_batches(), served_count = 0, reads = 0;
    for (uint64_t off = 0; off + piece <= size; off += piece, reads++) {
        if (reads % 200 == 100) { /* an own write a little ahead of the stream */
            ASSERT_NO_FATAL_FAILURE(write_beside(f, rc, &model, off + 20000, 300, (uint8_t)reads));
        }
        if (reads % 500 == 250) { /* another handle's write ahead, then a message */
            ASSERT_NO_FATAL_FAILURE(
                write_beside(g, nullptr, &model, off + 9000, 500, (uint8_t)(reads + 7)));
        }
        std::vector<uint8_t> out = cached_read(rc, f, off, piece, &served_count);
        for (uint64_t b = 0; b < piece; b++) {
            ASSERT_EQ(out[b], model.at(off + b)) << "byte " << off + b;
        }
    }
    uint64_t batches = read_batches() - before;
    printf("[   INFO   ] %llu forward reads of %llu bytes: %llu served, %llu read requests "
           "(%llu blocks)\n",
           (unsigned long long)reads, (unsigned long long)piece, (unsigned long long)served_count,
           (unsigned long long)batches, (unsigned long long)(size / block));
    /* all but the first read after each of the 4 drops (those are the
     * caller's) */
    EXPECT_EQ(served_count, reads - (reads + 250) / 500);
    /* (without read-ahead: a request per block, 128, and more after the drops) */
    EXPECT_LT(batches, size / block * 3 / 4) << "not read ahead";
    pstripe_rcache_free(rc);
    PSC_ASSERT_OK(pstripe_close(g));
    PSC_ASSERT_OK(pstripe_close(f));
}

/* Streams of larger reads (a quarter block up to a quarter of the cache),
 * and of small ones with gaps larger than they are, are read ahead in
 * windows of their own (psc_readahead.c): served, a few list reads for the
 * whole stream (a region per read), and still the reader's own writes ahead
 * of it and, after drop_all, another handle's. Small reads with gaps as
 * large as they are (two processes' records interleaved) are the blocks':
 * served as well, from whole ranges (a region per request), which the
 * servers serve faster than the reads' pieces (session 63). */
TEST_F(ClientRcache, StreamsOfReadsAreReadAhead)
{
    start(2);
    pstripe_file_t *f, *g;
    pstripe_rcache_t *rc;
    file_model model;
    const uint64_t size = 4 << 20;
    struct {
        uint64_t len, step;
        bool blocks; /* served by the blocks, not a stream's windows */
    } streams[3] = {{40000, 40000, false}, {2000, 5000, false}, {2000, 4000, true}};

    ASSERT_NO_FATAL_FAILURE(create_filled("/rcstream", size, 5, &model, &f, &g));
    PSC_ASSERT_OK(pstripe_rcache_create(f, 1 << 20, 16384, &rc));
    for (const auto &sm : streams) {
        uint64_t before = read_batches(), served_count = 0, reads = 0;
        uint64_t regions_before = read_batches(&pstripe_server_stats_t::regions_read);
        for (uint64_t off = 0; off + sm.len <= size; off += sm.step, reads++) {
            if (reads % 40 == 20) { /* an own write a little ahead of the stream */
                ASSERT_NO_FATAL_FAILURE(
                    write_beside(f, rc, &model, off + 3 * sm.step, 300, (uint8_t)reads));
            }
            if (reads % 100 == 50) { /* another handle's write ahead, then a message */
                ASSERT_NO_FATAL_FAILURE(
                    write_beside(g, nullptr, &model, off + 2 * sm.step, 500, (uint8_t)(reads + 7)));
            }
            std::vector<uint8_t> out = cached_read(rc, f, off, sm.len, &served_count);
            for (uint64_t b = 0; b < sm.len; b++) {
                ASSERT_EQ(out[b], model.at(off + b)) << "byte " << off + b;
            }
        }
        uint64_t batches = read_batches() - before;
        uint64_t regions = read_batches(&pstripe_server_stats_t::regions_read) - regions_before;
        printf("[   INFO   ] %llu reads of %llu bytes every %llu: %llu served, %llu read "
               "requests of %llu regions\n",
               (unsigned long long)reads, (unsigned long long)sm.len, (unsigned long long)sm.step,
               (unsigned long long)served_count, (unsigned long long)batches,
               (unsigned long long)regions);
        /* each drop and own write costs the stream a few reads */
        EXPECT_GT(served_count, reads * 3 / 4);
        EXPECT_LT(batches, reads / 2) << "not read ahead";
        if (sm.blocks) {
            EXPECT_LT(regions, 2 * batches) << "read as the stream's pieces, not blocks";
        } else if (sm.step > sm.len) { /* (contiguous reads join into one region) */
            EXPECT_GT(regions, reads / 2) << "read as blocks, not the stream's pieces";
        }
    }
    pstripe_rcache_free(rc);
    PSC_ASSERT_OK(pstripe_close(g));
    PSC_ASSERT_OK(pstripe_close(f));
}

/* Reads that walk forward in runs with blocks skipped between them (half
 * of each row of about half the rows of a plane, then the next plane) are
 * read ahead across the skips as long as they land in blocks already read
 * ahead: the window keeps growing, a few list reads for the whole file
 * (each run restarted its read-ahead with a window of 2 blocks before: a
 * request every other block). */
TEST_F(ClientRcache, ForwardReadsSkippingBlocksAreReadAhead)
{
    start(2);
    pstripe_file_t *f;
    pstripe_rcache_t *rc;
    file_model model;
    const uint64_t size = 4 << 20, block = 16384, len = 1280, row = 2560, rows = 32,
                   plane = 64 * row; /* a run is half a plane: 80 KiB, 80 KiB skipped */

    ASSERT_NO_FATAL_FAILURE(create_filled("/rcskip", size, 9, &model, &f, nullptr));
    PSC_ASSERT_OK(pstripe_rcache_create(f, 1 << 20, block, &rc));
    uint64_t before = read_batches(), served_count = 0, reads = 0;
    for (uint64_t base = 0; base + plane <= size; base += plane) {
        /* (runs of differing lengths: not a nested stream, psc_readahead.c) */
        for (uint64_t r = 0; r < rows - base / plane % 3; r++, reads++) {
            uint64_t off = base + r * row;
            std::vector<uint8_t> out = cached_read(rc, f, off, len, &served_count);
            for (uint64_t b = 0; b < len; b++) {
                ASSERT_EQ(out[b], model.at(off + b)) << "byte " << off + b;
            }
        }
    }
    uint64_t batches = read_batches() - before;
    printf("[   INFO   ] %llu reads in runs of up to %llu, a run every %llu bytes: %llu served, "
           "%llu read requests (%llu blocks)\n",
           (unsigned long long)reads, (unsigned long long)rows, (unsigned long long)plane,
           (unsigned long long)served_count, (unsigned long long)batches,
           (unsigned long long)(size / block));
    EXPECT_EQ(served_count, reads);
    /* (24 server requests; 120 when each run started its read-ahead over) */
    EXPECT_LT(batches, size / block / 4) << "the read-ahead started over at each run";
    pstripe_rcache_free(rc);
    PSC_ASSERT_OK(pstripe_close(f));
}

/* Runs of small reads a constant jump apart (NAS BT-IO's read-back: half
 * of each 2,560-byte row of half of each 160 KiB plane, one run per plane;
 * then the same in another cell of the array, elsewhere in the file) are a
 * nested stream once two runs were alike: read ahead run by run, their
 * bytes fetched rather than the blocks that hold them, and
 * still the reader's own writes ahead of it and, after drop_all, another
 * handle's. */
TEST_F(ClientRcache, RunsOfReadsAreReadAheadAsANestedStream)
{
    start(2);
    pstripe_file_t *f, *g;
    pstripe_rcache_t *rc;
    file_model model;
    const uint64_t size = 16 << 20, len = 1280, row = 2560, rows = 32, plane = 64 * row,
                   planes = 32, cells[3] = {0, 11 << 19, 11 << 20};

    ASSERT_NO_FATAL_FAILURE(create_filled("/rcnest", size, 11, &model, &f, &g));
    PSC_ASSERT_OK(pstripe_rcache_create(f, 1 << 20, 16384, &rc));
    uint64_t before = read_batches(&pstripe_server_stats_t::bytes_read), served_count = 0,
             reads = 0;
    for (uint64_t cell : cells) {
        for (uint64_t p = 0; p < planes; p++) {
            for (uint64_t r = 0; r < rows; r++, reads++) {
                uint64_t off = cell + p * plane + r * row;
                if (reads % 300 == 150) { /* an own write a few runs ahead */
                    ASSERT_NO_FATAL_FAILURE(
                        write_beside(f, rc, &model, off + 2 * plane, 300, (uint8_t)reads));
                }
                if (reads % 500 == 250) { /* another handle's write ahead, then a message */
                    ASSERT_NO_FATAL_FAILURE(write_beside(g, nullptr, &model, off + plane + 100, 500,
                                                         (uint8_t)(reads + 7)));
                }
                std::vector<uint8_t> out = cached_read(rc, f, off, len, &served_count);
                for (uint64_t b = 0; b < len; b++) {
                    ASSERT_EQ(out[b], model.at(off + b)) << "byte " << off + b;
                }
            }
        }
    }
    uint64_t bytes = read_batches(&pstripe_server_stats_t::bytes_read) - before;
    printf("[   INFO   ] %llu reads of %llu bytes in runs of %llu: %llu served, %llu bytes "
           "read from the servers (%.2f times the reads')\n",
           (unsigned long long)reads, (unsigned long long)len, (unsigned long long)rows,
           (unsigned long long)served_count, (unsigned long long)bytes,
           (double)bytes / (double)(reads * len));
    EXPECT_GT(served_count, reads * 3 / 4);
    /* (3.0 times; 5.2 as blocks, 1.7 without the drops and writes) */
    EXPECT_LT(bytes, reads * len * 4) << "the blocks carried the skipped bytes";
    pstripe_rcache_free(rc);
    PSC_ASSERT_OK(pstripe_close(g));
    PSC_ASSERT_OK(pstripe_close(f));
}

/* Reads that jump forward by random amounts after a few in a row (a
 * program reading scattered records) are no stream, nested or not: they
 * fetch what they read and little more (a review found each jump taken
 * as a run's end restarting both windows: 16 times the bytes read). */
TEST_F(ClientRcache, RandomForwardReadsAreNotReadAhead)
{
    start(2);
    pstripe_file_t *f;
    pstripe_rcache_t *rc;
    file_model model;
    std::mt19937 rng(13);
    const uint64_t size = 32 << 20, len = 32768;
    uint64_t served_count = 0, reads = 0, off = 0;

    ASSERT_NO_FATAL_FAILURE(create_filled("/rcrandom", size, 13, &model, &f, nullptr));
    PSC_ASSERT_OK(pstripe_rcache_create(f, 4 << 20, 65536, &rc));
    uint64_t before = read_batches(&pstripe_server_stats_t::bytes_read);
    for (; off + len <= size; reads++) {
        std::vector<uint8_t> out = cached_read(rc, f, off, len, &served_count);
        for (uint64_t b = 0; b < len; b += 997) {
            ASSERT_EQ(out[b], model.at(off + b)) << "byte " << off + b;
        }
        off += reads < 3 ? len : len + 65536 + rng() % (3 * 65536);
    }
    uint64_t bytes = read_batches(&pstripe_server_stats_t::bytes_read) - before;
    printf("[   INFO   ] %llu reads of %llu bytes, random forward gaps: %llu bytes read from the "
           "servers (%.2f times the reads')\n",
           (unsigned long long)reads, (unsigned long long)len, (unsigned long long)bytes,
           (double)bytes / (double)(reads * len));
    EXPECT_LT(bytes, reads * len * 3 / 2) << "windows read ahead for nothing";
    pstripe_rcache_free(rc);
    PSC_ASSERT_OK(pstripe_close(f));
}

} // namespace

/*
 * test_server_meta.cc: the namespace: CREATE (exclusive or not), LOOKUP,
 * REMOVE, RENAME, LIST by prefix in pages, META_SYNC, STATFS.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <string>
#include <thread>

#include "ps_cluster.h"
#include "ps_layout.h"
#include "test_server_raw.h"

using namespace ps_test;

/* One worker, so that every path is owned by the worker we talk to. */
class ServerMeta : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_TRUE(cluster.start(1, 1));
        ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    }

    /* One LIST page: paths, and whether more follow. */
    std::vector<std::string> list(const std::string &prefix, const std::string &after,
                                  uint32_t max, bool *more)
    {
        ps_list_req_t req{(uint32_t)prefix.size(), (uint32_t)after.size(), max, 0};
        std::string data = prefix + after;
        raw_reply r = c.call(PS_MSG_LIST, &req, sizeof(req), data.data(), data.size());
        std::vector<std::string> out;
        EXPECT_TRUE(r.received);
        EXPECT_EQ(r.status(), PS_OK);
        ps_list_rep_t rep = r.body<ps_list_rep_t>();
        EXPECT_EQ(rep.data_len, r.data.size());
        size_t pos = 0;
        for (uint32_t i = 0; i < rep.nentries && pos + sizeof(ps_list_entry_t) <= r.data.size();
             i++) {
            ps_list_entry_t e;
            memcpy(&e, r.data.data() + pos, sizeof(e));
            pos += sizeof(e);
            out.emplace_back((const char *)r.data.data() + pos, e.path_len);
            EXPECT_NE(e.info.file_id, 0u);
            pos += (e.path_len + 7) & ~7u;
        }
        *more = rep.more != 0;
        return out;
    }

    ps_cluster cluster;
    raw_client c;
};

TEST_F(ServerMeta, CreateLookupRemove)
{
    raw_reply r = c.create("/dir/a", 0, 1 << 20, 1, 0);
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    ps_file_rep_t a = r.body<ps_file_rep_t>();
    EXPECT_EQ(a.created, 1u);
    EXPECT_NE(a.info.file_id, 0u);
    EXPECT_EQ(a.info.stripe_size, 1u << 20);
    EXPECT_EQ(a.info.mode, 0644u);
    EXPECT_GT(a.info.ctime_ns, 0u);

    /* non-exclusive create of an existing path returns it */
    r = c.create("/dir/a");
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.body<ps_file_rep_t>().created, 0u);
    EXPECT_EQ(r.body<ps_file_rep_t>().info.file_id, a.info.file_id);
    EXPECT_EQ(r.body<ps_file_rep_t>().info.stripe_size, 1u << 20) << "layout kept";

    /* exclusive create fails */
    r = c.create("/dir/a", PS_CREATE_EXCL);
    EXPECT_EQ(r.status(), PS_ERR_EXISTS);

    r = c.path_op(PS_MSG_LOOKUP, "/dir/a");
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.body<ps_file_rep_t>().info.file_id, a.info.file_id);

    r = c.path_op(PS_MSG_LOOKUP, "/dir/b");
    EXPECT_EQ(r.status(), PS_ERR_NO_ENTRY);

    r = c.path_op(PS_MSG_REMOVE, "/dir/a");
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.body<ps_file_rep_t>().info.file_id, a.info.file_id);
    EXPECT_EQ(c.path_op(PS_MSG_LOOKUP, "/dir/a").status(), PS_ERR_NO_ENTRY);
    EXPECT_EQ(c.path_op(PS_MSG_REMOVE, "/dir/a").status(), PS_ERR_NO_ENTRY);

    /* a new file at the same path gets a new id */
    r = c.create("/dir/a", PS_CREATE_EXCL);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_NE(r.body<ps_file_rep_t>().info.file_id, a.info.file_id);
}

TEST_F(ServerMeta, RenameReplacesInOneStep)
{
    raw_reply r = c.create("/a");
    ASSERT_EQ(r.status(), PS_OK);
    ps_file_info_t a = r.body<ps_file_rep_t>().info;
    r = c.create("/b");
    ASSERT_EQ(r.status(), PS_OK);
    ps_file_info_t b = r.body<ps_file_rep_t>().info;

    /* to a new name */
    r = c.rename("/a", "/c");
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.body<ps_rename_rep_t>().info.file_id, a.file_id);
    EXPECT_EQ(r.body<ps_rename_rep_t>().has_replaced, 0u);
    EXPECT_EQ(c.path_op(PS_MSG_LOOKUP, "/a").status(), PS_ERR_NO_ENTRY);
    r = c.path_op(PS_MSG_LOOKUP, "/c");
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.body<ps_file_rep_t>().info.file_id, a.file_id);
    EXPECT_EQ(r.body<ps_file_rep_t>().info.ctime_ns, a.ctime_ns) << "the same file";

    /* onto an existing name: it is replaced, and its info returned */
    r = c.rename("/c", "/b");
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.body<ps_rename_rep_t>().has_replaced, 1u);
    EXPECT_EQ(r.body<ps_rename_rep_t>().replaced.file_id, b.file_id);
    EXPECT_EQ(c.path_op(PS_MSG_LOOKUP, "/c").status(), PS_ERR_NO_ENTRY);
    EXPECT_EQ(c.path_op(PS_MSG_LOOKUP, "/b").body<ps_file_rep_t>().info.file_id, a.file_id);

    /* NOREPLACE, a file id that does not match, a missing source, itself */
    ASSERT_EQ(c.create("/d").status(), PS_OK);
    EXPECT_EQ(c.rename("/d", "/b", PS_RENAME_NOREPLACE).status(), PS_ERR_EXISTS);
    EXPECT_EQ(c.rename("/d", "/e", 0, a.file_id).status(), PS_ERR_NO_ENTRY);
    EXPECT_EQ(c.rename("/nothing", "/e").status(), PS_ERR_NO_ENTRY);
    EXPECT_EQ(c.rename("/d", "/d").status(), PS_ERR_INVALID);
    EXPECT_EQ(c.path_op(PS_MSG_LOOKUP, "/b").body<ps_file_rep_t>().info.file_id, a.file_id)
        << "a refused rename changed nothing";
    EXPECT_EQ(c.path_op(PS_MSG_LOOKUP, "/d").status(), PS_OK);

    /* long names (stored under hashed keys) both ways */
    std::string long1 = "/" + std::string(1500, 'x'), long2 = "/" + std::string(1600, 'y');
    ASSERT_EQ(c.rename("/d", long1).status(), PS_OK);
    ASSERT_EQ(c.rename(long1, long2).status(), PS_OK);
    EXPECT_EQ(c.path_op(PS_MSG_LOOKUP, long1).status(), PS_ERR_NO_ENTRY);
    EXPECT_EQ(c.path_op(PS_MSG_LOOKUP, long2).status(), PS_OK);
}

TEST_F(ServerMeta, MalformedRenameIsRefused)
{
    ASSERT_EQ(c.create("/a").status(), PS_OK);
    /* invalid names */
    EXPECT_EQ(c.rename("a", "/b").status(), PS_ERR_INVALID);
    EXPECT_EQ(c.rename("/a", "/b/").status(), PS_ERR_INVALID);
    EXPECT_EQ(c.rename("/a", "/x/../b").status(), PS_ERR_INVALID);
    EXPECT_EQ(c.rename("/a", std::string("/b\0c", 4)).status(), PS_ERR_INVALID);
    /* lengths that do not match the data, out of range, unknown flags */
    ps_rename_req_t req{2, 2, 0, 0, 0};
    EXPECT_EQ(c.call(PS_MSG_RENAME, &req, sizeof(req), "/a/b/c", 6).status(), PS_ERR_PROTO);
    EXPECT_EQ(c.call(PS_MSG_RENAME, &req, sizeof(req), "/a", 2).status(), PS_ERR_PROTO);
    req = {0, 2, 0, 0, 0};
    EXPECT_EQ(c.call(PS_MSG_RENAME, &req, sizeof(req), "/b", 2).status(), PS_ERR_PROTO);
    req = {2, PS_PATH_MAX + 1, 0, 0, 0};
    std::string big(2 + PS_PATH_MAX + 1, 'z');
    EXPECT_EQ(c.call(PS_MSG_RENAME, &req, sizeof(req), big.data(), big.size()).status(),
              PS_ERR_PROTO);
    req = {2, 2, 0x80, 0, 0};
    EXPECT_EQ(c.call(PS_MSG_RENAME, &req, sizeof(req), "/a/b", 4).status(), PS_ERR_PROTO);
    EXPECT_EQ(c.call(PS_MSG_RENAME, &req, 8, "/a/b", 4).status(), PS_ERR_PROTO) << "short body";
    /* nothing changed, and the server still serves */
    EXPECT_EQ(c.path_op(PS_MSG_LOOKUP, "/a").status(), PS_OK);
    EXPECT_EQ(c.path_op(PS_MSG_LOOKUP, "/b").status(), PS_ERR_NO_ENTRY);
    EXPECT_EQ(c.rename("/a", "/b").status(), PS_OK);
}

TEST_F(ServerMeta, CreateRejectsBadLayout)
{
    EXPECT_EQ(c.create("/x", 0, 100, 1, 0).status(), PS_ERR_INVALID);   /* stripe too small */
    EXPECT_EQ(c.create("/x", 0, 65536, 0, 0).status(), PS_ERR_INVALID); /* no targets */
    EXPECT_EQ(c.create("/x", 0x80, 65536, 1, 0).status(), PS_ERR_INVALID);
    EXPECT_EQ(c.path_op(PS_MSG_LOOKUP, "/x").status(), PS_ERR_NO_ENTRY);
}

TEST_F(ServerMeta, ListByPrefixInPages)
{
    std::set<std::string> want;
    for (int i = 0; i < 23; i++) {
        std::string p = "/data/f" + std::to_string(i);
        ASSERT_EQ(c.create(p).status(), PS_OK);
        want.insert(p);
    }
    ASSERT_EQ(c.create("/dat").status(), PS_OK);
    ASSERT_EQ(c.create("/other/x").status(), PS_OK);
    std::string longp = "/data/" + std::string(1500, 'z'); /* longer than an LMDB key */
    ASSERT_EQ(c.create(longp).status(), PS_OK);
    want.insert(longp);

    std::set<std::string> got;
    std::string after;
    bool more = true;
    int pages = 0;
    while (more && pages < 100) {
        std::vector<std::string> page = list("/data/", after, 5, &more);
        EXPECT_LE(page.size(), 5u);
        for (const std::string &p : page) {
            EXPECT_TRUE(got.insert(p).second) << "listed twice: " << p.substr(0, 40);
        }
        if (!page.empty()) {
            after = page.back();
        }
        pages++;
    }
    EXPECT_EQ(got, want);
    EXPECT_EQ(pages, 5); /* 24 entries by 5 */

    /* everything */
    std::vector<std::string> all = list("", "", PS_LIST_MAX, &more);
    EXPECT_EQ(all.size(), 26u);
    EXPECT_FALSE(more);
    /* no match */
    EXPECT_TRUE(list("/nothing", "", 10, &more).empty());
}

/* Paths past LMDB's key limit are stored under hashed keys (pss_metadb.c),
 * which sort by hash among those sharing their first bytes (and before a
 * shorter path with the same first bytes): LIST still pages in path order,
 * whatever the page size, with the prefix matching inside such a group. */
TEST_F(ServerMeta, LongPathsListInPathOrder)
{
    const std::string base = "/L/" + std::string(505, 'x'); /* past max key - 9 (502) */
    std::vector<std::string> want = {"/L/a", "/L/y"};
    for (const char *tail : {"", "a", "b", "ab", "z", "/q", "/r"}) { /* short keys: <= 511 */
        want.push_back(base + tail);
    }
    for (int i = 0; i < 12; i++) { /* long keys: a hash after the first 502 bytes */
        want.push_back(base + "/" + std::string(20 + i % 3, 'a' + (i * 7) % 5) + std::to_string(i));
        want.push_back(base + std::string(30, 'b') + std::to_string(i));
    }
    for (const std::string &p : want) {
        ASSERT_EQ(c.create(p).status(), PS_OK) << p.size();
    }
    std::sort(want.begin(), want.end());

    for (uint32_t page_size : {1u, 2u, 3u, 7u, 100u}) {
        std::vector<std::string> got;
        std::string after;
        bool more = true;
        for (int pages = 0; more && pages < 100; pages++) {
            std::vector<std::string> page = list("/L/", after, page_size, &more);
            EXPECT_LE(page.size(), page_size);
            got.insert(got.end(), page.begin(), page.end());
            after = page.empty() ? after : page.back();
        }
        EXPECT_EQ(got, want) << "pages of " << page_size;
    }
    /* a prefix that ends inside the group: only its matches, in order */
    std::vector<std::string> sub;
    for (const std::string &p : want) {
        if (p.compare(0, base.size() + 1, base + "/") == 0) {
            sub.push_back(p);
        }
    }
    bool more;
    EXPECT_EQ(list(base + "/", "", 100, &more), sub);
    EXPECT_FALSE(more);
    EXPECT_EQ(list(base + "/", sub[2], 100, &more),
              std::vector<std::string>(sub.begin() + 3, sub.end()));
}

TEST_F(ServerMeta, StatfsAndMetaSync)
{
    ASSERT_EQ(c.create("/s1").status(), PS_OK);
    ASSERT_EQ(c.create("/s2").status(), PS_OK);
    raw_reply r = c.call(PS_MSG_STATFS, nullptr, 0);
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    ps_statfs_rep_t st = r.body<ps_statfs_rep_t>();
    EXPECT_GT(st.bsize, 0u);
    EXPECT_GT(st.blocks, 0u);
    EXPECT_LE(st.bavail, st.blocks);
    EXPECT_EQ(st.files, 2u);
    r = c.call(PS_MSG_META_SYNC, nullptr, 0);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_OK);
}

/* Bytes of a file (0 if there is none). */
/* c0 connected to worker 0 of a 2-worker server, c1 to worker 1. */
static void connect_both_workers(ps_cluster &cluster, raw_client &c0, raw_client &c1)
{
    ASSERT_TRUE(c0.connect(cluster.host(0), cluster.port(0)));
    raw_reply h = c0.hello();
    ASSERT_TRUE(h.received);
    uint32_t ports[2];
    memcpy(ports, h.data.data(), sizeof(ports));
    ASSERT_TRUE(c1.connect(cluster.host(0), (uint16_t)ports[1]));
}

/* One server whose worker 0 appends a byte to the file count at each of
 * its fdatasyncs and fsyncs (aio_faults.c); c connected to it. */
static void start_counting_syncs(ps_cluster &cluster, const std::string &count, raw_client &c)
{
    unlink(count.c_str());
    setenv("PSTEST_SYNC_COUNT", count.c_str(), 1);
    ASSERT_TRUE(start_with_faults(cluster, {}, "PSTEST_SYNC_THREAD", "pss-w0"));
    unsetenv("PSTEST_SYNC_COUNT");
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
}

static long file_bytes(const std::string &path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? (long)st.st_size : 0;
}

/*
 * A REMOVE, and a RENAME that replaced a file, are made durable (the
 * store's meta page flushed) before their answer: the client removes the
 * objects next, and a system crash must not bring back a name whose data
 * is gone. The worker's flushes are counted (aio_faults.c): a commit
 * flushes once (its data pages; the meta page is not, MDB_NOMETASYNC),
 * these requests twice; a RENAME that replaced nothing once.
 */
TEST(ServerMetaDurable, RemovalsAreSyncedBeforeTheirAnswer)
{
    const std::string count = "/tmp/pstest-meta-syncs." + std::to_string(getpid());
    ps_cluster cluster;
    raw_client c;

    ASSERT_NO_FATAL_FAILURE(start_counting_syncs(cluster, count, c));
    for (const char *p : {"/d1", "/d2", "/d3", "/d4"}) {
        ASSERT_EQ(c.create(p).status(), PS_OK) << p;
    }
    long n = file_bytes(count);
    EXPECT_EQ(c.path_op(PS_MSG_REMOVE, "/d1").status(), PS_OK);
    EXPECT_EQ(file_bytes(count) - n, 2) << "REMOVE: flushes before its answer";
    n = file_bytes(count);
    EXPECT_EQ(c.rename("/d2", "/d3").status(), PS_OK);
    EXPECT_EQ(file_bytes(count) - n, 2) << "RENAME replacing a file";
    n = file_bytes(count);
    EXPECT_EQ(c.rename("/d4", "/d5").status(), PS_OK);
    EXPECT_EQ(file_bytes(count) - n, 1) << "RENAME replacing nothing";
    unlink(count.c_str());
}

/*
 * META_SYNC (every fsync of a file asks its metadata server) flushes the
 * store only if something was committed since its last flush: IOR's fsync
 * after each write paid an fdatasync of the store for each.
 */
TEST(ServerMetaDurable, AMetaSyncWithNothingNewFlushesNothing)
{
    const std::string count = "/tmp/pstest-meta-syncs." + std::to_string(getpid());
    ps_cluster cluster;
    raw_client c;

    ASSERT_NO_FATAL_FAILURE(start_counting_syncs(cluster, count, c));
    ASSERT_EQ(c.create("/s1").status(), PS_OK);
    long n = file_bytes(count);
    ASSERT_EQ(c.call(PS_MSG_META_SYNC, nullptr, 0).status(), PS_OK);
    EXPECT_EQ(file_bytes(count) - n, 1) << "after a create";
    n = file_bytes(count);
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(c.call(PS_MSG_META_SYNC, nullptr, 0).status(), PS_OK);
    }
    EXPECT_EQ(file_bytes(count) - n, 0) << "with nothing committed since";
    ASSERT_EQ(c.create("/s2").status(), PS_OK);
    n = file_bytes(count);
    ASSERT_EQ(c.call(PS_MSG_META_SYNC, nullptr, 0).status(), PS_OK);
    EXPECT_EQ(file_bytes(count) - n, 1) << "after another create";
    unlink(count.c_str());
}

/*
 * A commit is visible to every worker before mdb_txn_commit returns: a
 * META_SYNC served by another worker meanwhile must flush it, though its
 * own worker has not counted it yet (a helper's review found the first
 * version of the skip above answering with no flush). Worker 0's commit
 * is held there (aio_faults.c: mdb_txn_commit returns 2 s after it
 * committed); worker 1 lists the new name, then serves a META_SYNC, both
 * before that commit returns.
 */
TEST(ServerMetaDurable, AMetaSyncDuringACommitFlushesIt)
{
    const std::string count = "/tmp/pstest-meta-during." + std::to_string(getpid());
    ps_cluster cluster;
    raw_client c0, c1;

    unlink(count.c_str());
    setenv("PSTEST_SYNC_COUNT", count.c_str(), 1);
    setenv("PSTEST_SYNC_THREAD", "pss-w1", 1);
    setenv("PSTEST_META_DELAY_MS", "2000", 1);
    ASSERT_TRUE(start_with_faults(cluster, {}, "PSTEST_META_DELAY_THREAD", "pss-w0", 2));
    unsetenv("PSTEST_SYNC_COUNT");
    unsetenv("PSTEST_SYNC_THREAD");
    unsetenv("PSTEST_META_DELAY_MS");
    ASSERT_NO_FATAL_FAILURE(connect_both_workers(cluster, c0, c1));
    std::string p = path_for_worker(0, 2, "/during/");
    long n = file_bytes(count);
    std::atomic<bool> created{false};
    std::thread creator([&]() {
        EXPECT_EQ(c0.create(p).status(), PS_OK);
        created = true;
    });
    uint32_t seen = 0; /* until the commit is visible (committed, not returned) */
    for (int i = 0; i < 100 && seen == 0 && !created; i++) {
        usleep(10000);
        ps_list_req_t req{8, 0, 100, 0};
        raw_reply r = c1.call(PS_MSG_LIST, &req, sizeof(req), "/during/", 8);
        seen = r.status() == PS_OK ? r.body<ps_list_rep_t>().nentries : 0;
    }
    int synced_status = c1.call(PS_MSG_META_SYNC, nullptr, 0).status();
    bool returned = created;
    long synced = file_bytes(count) - n;
    creator.join();
    ASSERT_EQ(seen, 1u) << "the commit never became visible";
    ASSERT_FALSE(returned) << "the commit returned before the META_SYNC: the test shows nothing";
    ASSERT_EQ(synced_status, PS_OK);
    EXPECT_EQ(synced, 1) << "META_SYNC answered without flushing a commit another client saw";
    unlink(count.c_str());
}

TEST(ServerMetaMulti, PathsSpreadOverWorkers)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 2));
    raw_client c0, c1;
    ASSERT_NO_FATAL_FAILURE(connect_both_workers(cluster, c0, c1));
    for (int i = 0; i < 20; i++) {
        std::string p = "/m/" + std::to_string(i);
        raw_client &c = ps_path_worker(p.data(), p.size(), 2) == 0 ? c0 : c1;
        ASSERT_EQ(c.create(p, PS_CREATE_EXCL).status(), PS_OK) << p;
    }
    /* LIST goes to any worker and sees every path */
    ps_list_req_t req{3, 0, 100, 0};
    raw_reply r = c1.call(PS_MSG_LIST, &req, sizeof(req), "/m/", 3);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.body<ps_list_rep_t>().nentries, 20u);
}

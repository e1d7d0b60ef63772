/*
 * test_server_gc.cc: OBJ_LIST and META_LIVE, what `pstripe gc` asks of a
 * server (server/pss_gc.c): object ids in pages across the store's
 * directories, which file ids a path names, what is malformed, and that
 * they and a capability-less OBJ_REMOVE are root's alone.
 */
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "ps_cluster.h"
#include "test_server_raw.h"

using namespace ps_test;

namespace {

/* One server with one worker: every object and path is its. */
class ServerGc : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ASSERT_TRUE(cluster.start(1, 1));
        ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    }

    raw_reply ids_call(uint16_t type, uint64_t after, uint32_t count,
                       const std::vector<uint64_t> &send = {})
    {
        ps_ids_req_t req{after, count, 0};
        return c.call(type, &req, sizeof(req), send.data(), send.size() * sizeof(uint64_t));
    }

    static std::vector<uint64_t> ids_of(const raw_reply &r)
    {
        std::vector<uint64_t> v(r.data.size() / sizeof(uint64_t));
        memcpy(v.data(), r.data.data(), v.size() * sizeof(uint64_t));
        EXPECT_EQ(r.body<ps_ids_rep_t>().count, v.size());
        return v;
    }

    void write_object(uint64_t id)
    {
        std::vector<uint8_t> payload(100, 0x5a);
        ASSERT_EQ(c.write(id, {{0, 100}}, payload).status(), PS_OK);
        ASSERT_EQ(c.obj(PS_MSG_OBJ_SYNC, id).status(), PS_OK); /* on disk, listed */
    }

    ps_cluster cluster;
    raw_client c;
};

TEST_F(ServerGc, ListsObjectsInPagesAcrossDirectories)
{
    const std::vector<uint64_t> ids = {0x0100000000000001ull, 0x0100000000000002ull,
                                       0x02000000000000a5ull, 0xab00000000000007ull,
                                       0xff000000000000f9ull};
    for (uint64_t id : ids) {
        write_object(id);
    }
    /* names that are not objects are not listed */
    std::ofstream(cluster.data_dir(0) + "/obj/01/0100000000000003.tmp") << "x";
    std::ofstream(cluster.data_dir(0) + "/obj/02/0100000000000004") << "x"; /* wrong directory */
    std::ofstream(cluster.data_dir(0) + "/obj/ab/AB00000000000008") << "x"; /* not ours */

    raw_reply r = ids_call(PS_MSG_OBJ_LIST, 0, PS_IDS_MAX);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(ids_of(r), ids);
    EXPECT_EQ(r.body<ps_ids_rep_t>().more, 0u);

    /* pages of two, each after the last id of the one before */
    std::vector<uint64_t> paged;
    uint64_t after = 0;
    int pages = 0;
    for (bool more = true; more && pages < 10; pages++) {
        r = ids_call(PS_MSG_OBJ_LIST, after, 2);
        ASSERT_EQ(r.status(), PS_OK);
        std::vector<uint64_t> page = ids_of(r);
        ASSERT_LE(page.size(), 2u);
        paged.insert(paged.end(), page.begin(), page.end());
        after = page.empty() ? after : page.back();
        more = r.body<ps_ids_rep_t>().more != 0;
    }
    EXPECT_EQ(paged, ids);
    EXPECT_LE(pages, 4);

    /* from the middle of a directory */
    r = ids_call(PS_MSG_OBJ_LIST, 0x0100000000000001ull, 1);
    EXPECT_EQ(ids_of(r), std::vector<uint64_t>{0x0100000000000002ull});
    r = ids_call(PS_MSG_OBJ_LIST, 0xff000000000000f9ull, 5);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_TRUE(ids_of(r).empty());
    EXPECT_EQ(r.body<ps_ids_rep_t>().more, 0u);

    /* a removed object is no longer listed */
    ASSERT_EQ(c.obj(PS_MSG_OBJ_REMOVE, 0x02000000000000a5ull).status(), PS_OK);
    r = ids_call(PS_MSG_OBJ_LIST, 0x0100000000000002ull, 1);
    EXPECT_EQ(ids_of(r), std::vector<uint64_t>{0xab00000000000007ull});
}

TEST_F(ServerGc, MetaLiveNamesTheFilesThatHaveAPath)
{
    raw_reply a = c.create("/gc/a"), b = c.create("/gc/b");
    ASSERT_EQ(a.status(), PS_OK);
    ASSERT_EQ(b.status(), PS_OK);
    uint64_t ida = a.body<ps_file_rep_t>().info.file_id;
    uint64_t idb = b.body<ps_file_rep_t>().info.file_id;
    std::vector<uint64_t> ask = {ida, idb, 1, UINT64_MAX};
    std::sort(ask.begin(), ask.end());

    raw_reply r = ids_call(PS_MSG_META_LIVE, 0, (uint32_t)ask.size(), ask);
    ASSERT_EQ(r.status(), PS_OK);
    std::vector<uint64_t> want = {ida, idb};
    std::sort(want.begin(), want.end());
    EXPECT_EQ(ids_of(r), want);

    /* many ids at once (more than an OBJ_LIST page) */
    std::vector<uint64_t> many;
    for (uint64_t k = 0; k < 100000; k++) {
        many.push_back(k * 0x9e3779b97f4a7c15ull);
    }
    many.push_back(ida);
    many.push_back(idb);
    std::sort(many.begin(), many.end());
    many.erase(std::unique(many.begin(), many.end()), many.end());
    r = ids_call(PS_MSG_META_LIVE, 0, (uint32_t)many.size(), many);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(ids_of(r), want);

    /* a rename keeps the file named; a removal does not */
    ASSERT_EQ(c.rename("/gc/a", "/gc/c").status(), PS_OK);
    ASSERT_EQ(c.path_op(PS_MSG_REMOVE, "/gc/b").status(), PS_OK);
    r = ids_call(PS_MSG_META_LIVE, 0, (uint32_t)ask.size(), ask);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(ids_of(r), std::vector<uint64_t>{ida});
}

TEST_F(ServerGc, MalformedIdRequestsAreRefused)
{
    EXPECT_EQ(ids_call(PS_MSG_OBJ_LIST, 0, 0).status(), PS_ERR_PROTO);
    EXPECT_EQ(ids_call(PS_MSG_OBJ_LIST, 0, PS_IDS_MAX + 1).status(), PS_ERR_PROTO);
    EXPECT_EQ(ids_call(PS_MSG_META_LIVE, 0, PS_LIVE_MAX + 1).status(), PS_ERR_PROTO);
    ps_ids_req_t reserved{0, 1, 7};
    EXPECT_EQ(c.call(PS_MSG_OBJ_LIST, &reserved, sizeof(reserved)).status(), PS_ERR_PROTO);
    /* META_LIVE: the data exactly count ids, ascending */
    EXPECT_EQ(ids_call(PS_MSG_META_LIVE, 0, 2, {9}).status(), PS_ERR_PROTO);
    EXPECT_EQ(ids_call(PS_MSG_META_LIVE, 0, 1, {9, 10}).status(), PS_ERR_PROTO);
    EXPECT_EQ(ids_call(PS_MSG_META_LIVE, 0, 2, {10, 9}).status(), PS_ERR_INVALID);
    EXPECT_EQ(ids_call(PS_MSG_META_LIVE, 0, 2, {9, 9}).status(), PS_ERR_INVALID);
    /* and the server still answers */
    EXPECT_EQ(ids_call(PS_MSG_META_LIVE, 0, 2, {9, 10}).status(), PS_OK);
    EXPECT_EQ(c.hello().status(), PS_OK);
}

TEST_F(ServerGc, OnlyRootListsAndRemovesWithoutACapability)
{
    const uint64_t id = 0x4200000000000001ull;
    write_object(id);

    raw_client user;
    ASSERT_TRUE(user.connect(cluster.host(0), cluster.port(0)));
    user.set_auto_caps(false);
    ASSERT_EQ(user.authenticate(cluster_key_path(), 1000, 1000).status(), PS_OK);
    ps_ids_req_t list{0, 10, 0}, live{0, 1, 0};
    EXPECT_EQ(user.call(PS_MSG_OBJ_LIST, &list, sizeof(list)).status(), PS_ERR_ACCESS);
    EXPECT_EQ(user.call(PS_MSG_META_LIVE, &live, sizeof(live), &id, sizeof(id)).status(),
              PS_ERR_ACCESS);
    EXPECT_EQ(user.obj(PS_MSG_OBJ_REMOVE, id).status(), PS_ERR_ACCESS);
    EXPECT_EQ(c.obj(PS_MSG_OBJ_STAT, id).body<ps_obj_rep_t>().exists, 1u);

    raw_client root;
    ASSERT_TRUE(root.connect(cluster.host(0), cluster.port(0)));
    root.set_auto_caps(false);
    ASSERT_EQ(root.authenticate(cluster_key_path(), 0, 0).status(), PS_OK);
    EXPECT_EQ(root.call(PS_MSG_OBJ_LIST, &list, sizeof(list)).status(), PS_OK);
    EXPECT_EQ(root.obj(PS_MSG_OBJ_REMOVE, id).status(), PS_OK);
    EXPECT_EQ(c.obj(PS_MSG_OBJ_STAT, id).body<ps_obj_rep_t>().exists, 0u);
}

} // namespace

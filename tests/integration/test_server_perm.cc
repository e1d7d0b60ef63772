/*
 * test_server_perm.cc: permissions and capabilities (issue 13 items 2-3),
 * through raw clients that authenticate with the cluster key as the uid
 * and gid they claim. The metadata owner checks owner, group and mode at
 * CREATE, LOOKUP, REMOVE, RENAME and SETATTR and answers with a capability;
 * the data servers refuse data requests whose capability is missing,
 * forged, widened, expired, of another file or without the right.
 */
#include <gtest/gtest.h>

#include <lmdb.h>
#include <string.h>
#include <time.h>

#include <string>
#include <vector>

#include "ps_cap.h"
#include "ps_cluster.h"
#include "ps_layout.h"
#include "ps_time.h"
#include "test_server_raw.h"

using namespace ps_test;

namespace {

const uint64_t hour_ns = 3600ull * 1000000000ull;

/* A raw client authenticated as uid/gid, sending bodies as given. */
struct user {
    raw_client c;
    user(ps_cluster &cluster, uint32_t uid, uint32_t gid)
    {
        EXPECT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
        c.set_auto_caps(false);
        EXPECT_EQ(c.authenticate(cluster_key_path(), uid, gid).status(), PS_OK);
    }
    raw_reply create(const std::string &path, uint32_t mode, uint32_t access, uint32_t flags = 0)
    {
        ps_create_req_t req{65536, 1, 0, mode, flags, (uint32_t)path.size(), access};
        return c.call(PS_MSG_CREATE, &req, sizeof(req), path.data(), path.size());
    }
    raw_reply lookup(const std::string &path, uint32_t access)
    {
        ps_path_req_t req{(uint32_t)path.size(), access};
        return c.call(PS_MSG_LOOKUP, &req, sizeof(req), path.data(), path.size());
    }
    raw_reply remove(const std::string &path)
    {
        ps_path_req_t req{(uint32_t)path.size(), 0};
        return c.call(PS_MSG_REMOVE, &req, sizeof(req), path.data(), path.size());
    }
    raw_reply rename(const std::string &from, const std::string &to)
    {
        ps_rename_req_t req{(uint32_t)from.size(), (uint32_t)to.size(), 0, 0, 0};
        std::string names = from + to;
        return c.call(PS_MSG_RENAME, &req, sizeof(req), names.data(), names.size());
    }
    raw_reply setattr(const std::string &path, uint32_t valid, uint32_t mode, uint32_t uid,
                      uint32_t gid)
    {
        ps_setattr_req_t req{(uint32_t)path.size(), valid, mode, uid, gid, 0};
        return c.call(PS_MSG_SETATTR, &req, sizeof(req), path.data(), path.size());
    }
    int write(uint64_t file_id, const ps_cap_t &cap)
    {
        std::vector<ps_region_t> regions{{0, 4}};
        std::vector<uint8_t> data = raw_client::io_data(regions, {1, 2, 3, 4});
        ps_io_req_t req{file_id, 4, 1, 0, cap};
        return c.call(PS_MSG_OBJ_WRITE, &req, sizeof(req), data.data(), data.size()).status();
    }
    int read(uint64_t file_id, const ps_cap_t &cap)
    {
        ps_region_t region{0, 4};
        ps_io_req_t req{file_id, 4, 1, 0, cap};
        return c.call(PS_MSG_OBJ_READ, &req, sizeof(req), &region, sizeof(region)).status();
    }
    int obj(uint16_t type, uint64_t file_id, const ps_cap_t &cap, uint64_t size = 0)
    {
        ps_obj_req_t req{file_id, size, cap};
        return c.call(type, &req, sizeof(req)).status();
    }
    raw_reply by_id(uint64_t file_id, uint32_t access)
    {
        ps_id_req_t req{file_id, access, 0};
        return c.call(PS_MSG_LOOKUP_ID, &req, sizeof(req));
    }
    int sfp(uint64_t file_id, const ps_cap_t &cap)
    {
        ps_sfp_req_t req{file_id, 7, 1, PS_SFP_SET, 0, cap}; /* SET: an add needs a counter made first */
        return c.call(PS_MSG_SHARED_FP, &req, sizeof(req)).status();
    }
};

ps_file_rep_t file_of(const raw_reply &r)
{
    EXPECT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_OK);
    return r.body<ps_file_rep_t>();
}

} // namespace

TEST(ServerPerm, OwnerGroupAndModeChecked)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1));
    user root(cluster, 0, 0), alice(cluster, 1000, 100), bob(cluster, 1001, 100);

    /* a new file is its creator's */
    ps_file_rep_t f = file_of(root.create("/secret", 0600, PS_CAP_READ | PS_CAP_WRITE));
    EXPECT_EQ(f.info.uid, 0u);
    EXPECT_EQ(f.info.gid, 0u);
    EXPECT_EQ(f.info.mode, 0600u);
    EXPECT_EQ(f.created, 1u);
    EXPECT_EQ(f.cap.rights, PS_CAP_READ | PS_CAP_WRITE);
    EXPECT_EQ(f.cap.file_id, f.info.file_id);
    EXPECT_GT(f.cap_life_s, 0u);

    /* others: no read, write, remove, rename, chmod, chown; a stat is fine */
    EXPECT_EQ(alice.lookup("/secret", PS_CAP_READ).status(), PS_ERR_ACCESS);
    EXPECT_EQ(alice.lookup("/secret", PS_CAP_WRITE).status(), PS_ERR_ACCESS);
    EXPECT_EQ(alice.lookup("/secret", PS_CAP_REMOVE).status(), PS_ERR_ACCESS);
    EXPECT_EQ(alice.create("/secret", 0644, PS_CAP_WRITE).status(), PS_ERR_ACCESS);
    EXPECT_EQ(alice.remove("/secret").status(), PS_ERR_ACCESS);
    EXPECT_EQ(alice.rename("/secret", "/mine").status(), PS_ERR_ACCESS);
    EXPECT_EQ(alice.setattr("/secret", PS_SETATTR_MODE, 0666, 0, 0).status(), PS_ERR_ACCESS);
    EXPECT_EQ(alice.setattr("/secret", PS_SETATTR_UID, 0, 1000, 0).status(), PS_ERR_ACCESS);
    ps_file_rep_t st = file_of(alice.lookup("/secret", 0));
    EXPECT_EQ(st.cap.rights, 0u);

    /* group bits apply to the group, other bits to the rest */
    EXPECT_EQ(root.setattr("/secret", PS_SETATTR_MODE | PS_SETATTR_GID, 0640, 0, 100).status(),
              PS_OK);
    EXPECT_EQ(file_of(alice.lookup("/secret", PS_CAP_READ)).cap.rights, PS_CAP_READ);
    EXPECT_EQ(alice.lookup("/secret", PS_CAP_WRITE).status(), PS_ERR_ACCESS);
    user carol(cluster, 1002, 200);
    EXPECT_EQ(carol.lookup("/secret", PS_CAP_READ).status(), PS_ERR_ACCESS);

    /* write permission lets others remove and rename, as in a shared directory */
    EXPECT_EQ(root.setattr("/secret", PS_SETATTR_MODE, 0660, 0, 0).status(), PS_OK);
    EXPECT_EQ(carol.rename("/secret", "/moved").status(), PS_ERR_ACCESS);
    ps_rename_rep_t rn = alice.rename("/secret", "/moved").body<ps_rename_rep_t>();
    EXPECT_EQ(rn.info.file_id, f.info.file_id);
    EXPECT_EQ(file_of(bob.remove("/moved")).cap.rights, PS_CAP_REMOVE);

    /* alice's own file: chmod by her, chgrp to her own group only, chown by root */
    ps_file_rep_t a = file_of(alice.create("/a", 0644, PS_CAP_WRITE));
    EXPECT_EQ(a.info.uid, 1000u);
    EXPECT_EQ(a.info.gid, 100u);
    EXPECT_EQ(alice.setattr("/a", PS_SETATTR_MODE, 0600, 0, 0).status(), PS_OK);
    EXPECT_EQ(alice.setattr("/a", PS_SETATTR_GID, 0, 0, 5).status(), PS_ERR_ACCESS);
    EXPECT_EQ(alice.setattr("/a", PS_SETATTR_GID, 0, 0, 100).status(), PS_OK);
    EXPECT_EQ(alice.setattr("/a", PS_SETATTR_UID, 0, 1001, 0).status(), PS_ERR_ACCESS);
    EXPECT_EQ(bob.setattr("/a", PS_SETATTR_MODE, 0666, 0, 0).status(), PS_ERR_ACCESS);
    ps_file_rep_t given = file_of(root.setattr("/a", PS_SETATTR_UID, 0, 1001, 0));
    EXPECT_EQ(given.info.uid, 1001u);
    EXPECT_EQ(given.info.mode, 0600u);
    EXPECT_EQ(file_of(bob.lookup("/a", PS_CAP_READ | PS_CAP_WRITE)).cap.rights,
              PS_CAP_READ | PS_CAP_WRITE);
    EXPECT_EQ(alice.lookup("/a", PS_CAP_READ).status(), PS_ERR_ACCESS);
    /* a rename onto root's file needs the right to remove that one too */
    file_of(root.create("/r", 0644, 0));
    EXPECT_EQ(bob.rename("/a", "/r").status(), PS_ERR_ACCESS);
    EXPECT_NE(cluster.log(0).find("refused"), std::string::npos);
}

TEST(ServerPerm, DataRequestsNeedAValidCapability)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1));
    user u(cluster, 1000, 100);
    ps_file_rep_t f = file_of(u.create("/f", 0644, PS_CAP_READ | PS_CAP_WRITE));
    ps_file_rep_t g = file_of(u.create("/g", 0644, PS_CAP_READ | PS_CAP_WRITE));
    const ps_cap_t &cap = f.cap;
    uint64_t id = f.info.file_id;
    ps_stats_rep_t st0{}, st1{};
    ASSERT_EQ(u.c.stats(&st0).status(), PS_OK);

    /* the capability of the open serves every data request it allows */
    EXPECT_EQ(u.write(id, cap), PS_OK);
    EXPECT_EQ(u.read(id, cap), PS_OK);
    EXPECT_EQ(u.obj(PS_MSG_OBJ_SYNC, id, cap), PS_OK);
    EXPECT_EQ(u.obj(PS_MSG_OBJ_FLUSH, id, cap), PS_OK);
    EXPECT_EQ(u.obj(PS_MSG_OBJ_TRUNCATE, id, cap, 2), PS_OK);
    EXPECT_EQ(u.obj(PS_MSG_OBJ_ALLOCATE, id, cap, 2), PS_OK);
    EXPECT_EQ(u.sfp(id, cap), PS_OK);

    /* missing */
    ps_cap_t none{};
    EXPECT_EQ(u.write(id, none), PS_ERR_ACCESS);
    EXPECT_EQ(u.read(id, none), PS_ERR_ACCESS);
    EXPECT_EQ(u.obj(PS_MSG_OBJ_TRUNCATE, id, none), PS_ERR_ACCESS);
    EXPECT_EQ(u.obj(PS_MSG_OBJ_ALLOCATE, id, none, 100), PS_ERR_ACCESS);
    EXPECT_EQ(u.obj(PS_MSG_OBJ_REMOVE, id, none), PS_ERR_ACCESS);
    EXPECT_EQ(u.obj(PS_MSG_OBJ_SYNC, id, none), PS_ERR_ACCESS);
    EXPECT_EQ(u.obj(PS_MSG_OBJ_FLUSH, id, none), PS_ERR_ACCESS);
    EXPECT_EQ(u.sfp(id, none), PS_ERR_ACCESS);
    /* OBJ_STAT needs none (size and times are visible like LIST's names) */
    EXPECT_EQ(u.obj(PS_MSG_OBJ_STAT, id, none), PS_OK);

    /* forged: a flipped MAC bit, widened rights, a longer life, a key not the cluster's */
    ps_cap_t bad = cap;
    bad.mac[5] ^= 1;
    EXPECT_EQ(u.read(id, bad), PS_ERR_ACCESS);
    ps_cap_t ro = file_of(u.lookup("/f", PS_CAP_READ)).cap;
    EXPECT_EQ(u.read(id, ro), PS_OK);
    EXPECT_EQ(u.write(id, ro), PS_ERR_ACCESS); /* without the right */
    ps_cap_t widened = ro;
    widened.rights |= PS_CAP_WRITE;
    EXPECT_EQ(u.write(id, widened), PS_ERR_ACCESS);
    ps_cap_t longer = cap;
    longer.expiry_ns += hour_ns;
    EXPECT_EQ(u.write(id, longer), PS_ERR_ACCESS);
    ps_cap_t self_made = cap;
    uint8_t wrong_key[PS_CAP_KEY_LEN];
    memset(wrong_key, 0x5a, sizeof(wrong_key));
    ps_cap_sign(wrong_key, &self_made);
    EXPECT_EQ(u.write(id, self_made), PS_ERR_ACCESS);

    /* another file's capability */
    EXPECT_EQ(u.write(g.info.file_id, cap), PS_ERR_ACCESS);
    EXPECT_EQ(u.write(g.info.file_id, g.cap), PS_OK);

    /* expired (genuine, signed with the cluster's key, past its expiry) */
    ps_cap_t old = raw_client::make_cap(id, PS_CAP_ALL, ps_cap_now_ns() - 1);
    EXPECT_EQ(u.write(id, old), PS_ERR_ACCESS);
    ps_cap_t fresh = raw_client::make_cap(id, PS_CAP_ALL, ps_cap_now_ns() + hour_ns);
    EXPECT_EQ(u.write(id, fresh), PS_OK);

    /* removing the objects takes the REMOVE right the REMOVE reply grants */
    EXPECT_EQ(u.obj(PS_MSG_OBJ_REMOVE, id, cap), PS_ERR_ACCESS);
    ps_file_rep_t rm = file_of(u.remove("/f"));
    EXPECT_EQ(u.obj(PS_MSG_OBJ_REMOVE, id, rm.cap), PS_OK);

    ASSERT_EQ(u.c.stats(&st1).status(), PS_OK);
    /* each refusal counted, as a capability's (not an authentication's);
     * logged at most once a second (the first here) */
    EXPECT_EQ(st1.cap_refused - st0.cap_refused, 16u);
    EXPECT_EQ(st1.auth_refused, st0.auth_refused);
    EXPECT_NE(cluster.log(0).find("refusing OBJ_WRITE of"), std::string::npos);
    EXPECT_NE(cluster.log(0).find("by uid 1000: capability missing"), std::string::npos);
}

/* A capability of cap_life 2 s stops working when it expires: the servers
 * check the expiry, not only the MAC (the test sleeps until then, 2 s). */
TEST(ServerPerm, CapabilityExpires)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1, {"--set", "cap_life=2s"}));
    user u(cluster, 1000, 100);
    ps_file_rep_t f = file_of(u.create("/f", 0644, PS_CAP_READ | PS_CAP_WRITE));
    EXPECT_EQ(f.cap_life_s, 2u);
    EXPECT_EQ(u.write(f.info.file_id, f.cap), PS_OK);
    /* the condition is the clock itself: sleep until just past the expiry */
    uint64_t until = f.cap.expiry_ns + 1000000;
    struct timespec ts = {(time_t)(until / 1000000000ull), (long)(until % 1000000000ull)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) != 0) {
    }
    EXPECT_EQ(u.read(f.info.file_id, f.cap), PS_ERR_ACCESS);
    /* a new LOOKUP renews it */
    ps_file_rep_t again = file_of(u.lookup("/f", PS_CAP_READ));
    EXPECT_EQ(u.read(f.info.file_id, again.cap), PS_OK);
}

namespace {

/* Put a value as a server before protocol 4 wrote it (48-byte info, no
 * owner; a long path's key is its first max-9 bytes, a NUL and a hash, and
 * the full path follows the info). */
void put_v3_record(MDB_env *env, MDB_dbi dbi, const std::string &path, uint64_t file_id,
                   uint32_t mode)
{
    size_t max = (size_t)mdb_env_get_maxkeysize(env);
    std::vector<uint8_t> key(path.begin(), path.end()), val(48, 0);
    ps_file_info_t info{};
    info.file_id = file_id;
    info.stripe_size = 65536;
    info.stripe_count = 1;
    info.mode = mode;
    memcpy(val.data(), &info, 48);
    if (path.size() > max) {
        uint64_t h = ps_hash_bytes(path.data(), path.size());
        key.resize(max - 9);
        key.push_back(0);
        key.insert(key.end(), (uint8_t *)&h, (uint8_t *)&h + 8);
        val.insert(val.end(), path.begin(), path.end());
    }
    MDB_txn *txn;
    ASSERT_EQ(0, mdb_txn_begin(env, nullptr, 0, &txn));
    MDB_val k = {key.size(), key.data()}, v = {val.size(), val.data()};
    ASSERT_EQ(0, mdb_put(txn, dbi, &k, &v, 0));
    ASSERT_EQ(0, mdb_txn_commit(txn));
}

/* The store of the cluster's stopped server 0, and its "paths" database. */
void open_paths(ps_cluster &cluster, MDB_env **env, MDB_dbi *dbi)
{
    MDB_txn *txn;
    ASSERT_EQ(0, mdb_env_create(env));
    mdb_env_set_maxdbs(*env, 8);
    mdb_env_set_mapsize(*env, 8ull << 30);
    ASSERT_EQ(0, mdb_env_open(*env, (cluster.data_dir(0) + "/meta").c_str(), 0, 0644));
    ASSERT_EQ(0, mdb_txn_begin(*env, nullptr, 0, &txn));
    ASSERT_EQ(0, mdb_dbi_open(txn, "paths", 0, dbi));
    ASSERT_EQ(0, mdb_txn_commit(txn));
}

} // namespace

/* A store whose names an older server changed (one removed, one added:
 * the index counts as many entries, one stale) is indexed again at open:
 * the added file is found by id, the removed one is not. */
TEST(ServerPerm, AnIndexAnOlderServerLeftStaleIsMadeAgain)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1));
    uint64_t a;
    {
        user u(cluster, 1000, 100);
        a = file_of(u.create("/s/a", 0644, 0)).info.file_id;
    }
    ASSERT_EQ(cluster.stop(0), 0);
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    open_paths(cluster, &env, &dbi);
    ASSERT_EQ(0, mdb_txn_begin(env, nullptr, 0, &txn));
    MDB_val k = {4, (void *)"/s/a"};
    ASSERT_EQ(0, mdb_del(txn, dbi, &k, nullptr));
    ASSERT_EQ(0, mdb_txn_commit(txn));
    put_v3_record(env, dbi, "/s/b", 0x3333, 0644);
    mdb_env_close(env);
    ASSERT_TRUE(cluster.restart(0));

    user root(cluster, 0, 0);
    EXPECT_EQ(file_of(root.by_id(0x3333, PS_CAP_READ)).info.file_id, 0x3333u);
    EXPECT_EQ(root.by_id(a, PS_CAP_READ).status(), PS_ERR_NO_ENTRY);
}

/* LOOKUP_ID finds a file by its id wherever a rename put its name on this
 * server (an open file's capability is renewed by it once the open's name
 * no longer leads to the file), with LOOKUP's access check; a file
 * replaced or removed is not found. */
TEST(ServerPerm, LookupByIdFollowsRenamesAndChecksAccess)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1));
    user alice(cluster, 1000, 100), bob(cluster, 1001, 100), eve(cluster, 1002, 200);
    uint64_t a = file_of(alice.create("/l/a", 0640, 0)).info.file_id;
    const uint32_t rw = PS_CAP_READ | PS_CAP_WRITE;

    ps_file_rep_t r = file_of(alice.by_id(a, rw));
    EXPECT_EQ(r.info.file_id, a);
    EXPECT_EQ(r.cap.file_id, a);
    EXPECT_EQ(r.cap.rights, rw);
    EXPECT_GT(r.cap_life_s, 0u);
    EXPECT_EQ(file_of(bob.by_id(a, PS_CAP_READ)).cap.rights, PS_CAP_READ); /* group */
    EXPECT_EQ(bob.by_id(a, PS_CAP_WRITE).status(), PS_ERR_ACCESS);
    EXPECT_EQ(eve.by_id(a, PS_CAP_READ).status(), PS_ERR_ACCESS);
    EXPECT_EQ(file_of(eve.by_id(a, 0)).cap.rights, 0u); /* (a stat's) */

    ASSERT_EQ(alice.rename("/l/a", "/l/b").status(), PS_OK);
    EXPECT_EQ(file_of(alice.by_id(a, rw)).info.file_id, a);
    file_of(alice.setattr("/l/b", PS_SETATTR_MODE, 0600, 0, 0));
    EXPECT_EQ(bob.by_id(a, PS_CAP_READ).status(), PS_ERR_ACCESS);
    EXPECT_EQ(file_of(alice.by_id(a, rw)).info.mode, 0600u);

    /* renamed onto another file: that one is gone, a is found */
    uint64_t c = file_of(alice.create("/l/c", 0644, 0)).info.file_id;
    EXPECT_EQ(file_of(alice.by_id(c, PS_CAP_READ)).info.file_id, c);
    ASSERT_EQ(alice.rename("/l/b", "/l/c").status(), PS_OK);
    EXPECT_EQ(alice.by_id(c, PS_CAP_READ).status(), PS_ERR_NO_ENTRY);
    EXPECT_EQ(file_of(alice.by_id(a, PS_CAP_READ)).info.file_id, a);
    ASSERT_TRUE(cluster.restart(0));
    user alice2(cluster, 1000, 100);
    EXPECT_EQ(file_of(alice2.by_id(a, PS_CAP_READ)).info.file_id, a);

    ASSERT_EQ(alice2.remove("/l/c").status(), PS_OK);
    EXPECT_EQ(alice2.by_id(a, PS_CAP_READ).status(), PS_ERR_NO_ENTRY);
    EXPECT_EQ(alice2.by_id(0x77, PS_CAP_READ).status(), PS_ERR_NO_ENTRY);
    EXPECT_EQ(alice2.by_id(0, PS_CAP_READ).status(), PS_ERR_PROTO);
    EXPECT_EQ(alice2.by_id(a, PS_CAP_REMOVE).status(), PS_ERR_PROTO);
}

/* A metadata store written before owners existed still loads: its files
 * are root's with their mode (one with a long path too), and a SETATTR
 * rewrites an entry in the new layout. */
TEST(ServerPerm, EntriesWithoutOwnerLoadAsRoots)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1));
    std::string long_path = "/" + std::string(600, 'l');
    {
        user u(cluster, 1000, 100);
        file_of(u.create("/new", 0640, 0));
    }
    ASSERT_EQ(cluster.stop(0), 0);
    MDB_env *env;
    MDB_dbi dbi;
    open_paths(cluster, &env, &dbi);
    put_v3_record(env, dbi, "/old", 0x1111, 0644);
    put_v3_record(env, dbi, long_path, 0x2222, 0600);
    mdb_env_close(env);
    ASSERT_TRUE(cluster.restart(0));

    user root(cluster, 0, 0), u(cluster, 1000, 100);
    ps_file_rep_t old = file_of(u.lookup("/old", PS_CAP_READ));
    EXPECT_EQ(old.info.file_id, 0x1111u);
    EXPECT_EQ(old.info.uid, 0u);
    EXPECT_EQ(old.info.gid, 0u);
    EXPECT_EQ(old.info.mode, 0644u);
    EXPECT_EQ(old.info.flags, 0u);
    EXPECT_EQ(u.lookup("/old", PS_CAP_WRITE).status(), PS_ERR_ACCESS);
    EXPECT_EQ(u.lookup(long_path, PS_CAP_READ).status(), PS_ERR_ACCESS);
    ps_file_rep_t lp = file_of(root.lookup(long_path, PS_CAP_READ));
    EXPECT_EQ(lp.info.file_id, 0x2222u);
    EXPECT_EQ(lp.info.mode, 0600u);
    ps_file_rep_t mine = file_of(u.lookup("/new", PS_CAP_READ | PS_CAP_WRITE));
    EXPECT_EQ(mine.info.uid, 1000u);
    EXPECT_EQ(mine.info.flags, PS_FILE_OWNED);

    /* entries put without the index (as before protocol 20) are indexed at start */
    EXPECT_EQ(file_of(root.by_id(0x1111, PS_CAP_READ)).info.mode, 0644u);
    EXPECT_EQ(file_of(root.by_id(0x2222, PS_CAP_READ)).info.mode, 0600u);
    EXPECT_EQ(file_of(u.by_id(mine.info.file_id, PS_CAP_WRITE)).info.uid, 1000u);

    /* root gives the old files away: they are rewritten with an owner */
    file_of(root.setattr("/old", PS_SETATTR_UID | PS_SETATTR_GID, 0, 1000, 100));
    ps_file_rep_t lp2 = file_of(root.setattr(long_path, PS_SETATTR_UID, 0, 1000, 0));
    EXPECT_EQ(lp2.info.flags, PS_FILE_OWNED);
    EXPECT_EQ(file_of(u.lookup("/old", PS_CAP_WRITE)).info.uid, 1000u);
    EXPECT_EQ(file_of(u.lookup(long_path, PS_CAP_READ | PS_CAP_WRITE)).info.file_id, 0x2222u);

    /* LIST shows owners of both layouts */
    ps_list_req_t lr{0, 0, 100, 0};
    raw_reply l = root.c.call(PS_MSG_LIST, &lr, sizeof(lr));
    ASSERT_EQ(l.status(), PS_OK);
    ps_list_rep_t rep = l.body<ps_list_rep_t>();
    EXPECT_EQ(rep.nentries, 3u);
    size_t off = 0;
    for (uint32_t i = 0; i < rep.nentries && off + sizeof(ps_list_entry_t) <= l.data.size(); i++) {
        ps_list_entry_t e;
        memcpy(&e, l.data.data() + off, sizeof(e));
        EXPECT_EQ(e.info.uid, 1000u) << i;
        off += sizeof(e) + ((e.path_len + 7) & ~7u);
    }
}

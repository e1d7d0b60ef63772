/*
 * test_server_proto.cc: malformed, truncated, oversized, out-of-range and
 * misrouted requests sent straight at a daemon. Each must get an error reply
 * and a log line, and the daemon must go on serving (and its data must be
 * untouched).
 */
#include <gtest/gtest.h>

#include <stdint.h>

#include "ps_cluster.h"
#include "ps_layout.h"
#include "ps_time.h"
#include "test_server_raw.h"

using namespace ps_test;

class ServerProto : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_TRUE(cluster.start(1, 2, {"--set", "max_batch=1m"}));
        ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
        raw_reply r = c.hello();
        ASSERT_TRUE(r.received);
        ASSERT_EQ(r.status(), PS_OK);
        nworkers = r.body<ps_hello_rep_t>().nworkers;
        ASSERT_EQ(nworkers, 2u);
        uint32_t ports[2];
        memcpy(ports, r.data.data(), sizeof(ports));
        ASSERT_TRUE(c1.connect(cluster.host(0), (uint16_t)ports[1]));
        fid = file_id_for_worker(0, nworkers, 7);
        /* some data that no bad request may disturb */
        std::vector<uint8_t> payload(4096, 0x5a);
        raw_reply w = c.write(fid, {{0, 4096}}, payload);
        ASSERT_TRUE(w.received);
        ASSERT_EQ(w.status(), PS_OK);
    }

    /* The daemon still answers and the object still holds its data. */
    void expect_alive()
    {
        raw_reply h = c.hello();
        ASSERT_TRUE(h.received) << "daemon stopped answering";
        EXPECT_EQ(h.status(), PS_OK);
        raw_reply r = c.read(fid, {{0, 4096}});
        ASSERT_TRUE(r.received);
        ASSERT_EQ(r.status(), PS_OK);
        ASSERT_EQ(r.data.size(), 4096u);
        EXPECT_EQ(std::vector<uint8_t>(r.data), std::vector<uint8_t>(4096, 0x5a));
        EXPECT_TRUE(cluster.running(0));
    }

    /* Send raw header bytes, expect an error reply with this status. */
    void expect_error(const std::vector<uint8_t> &hdr, const std::vector<uint8_t> &data,
                      uint64_t req_id, int status)
    {
        c.send_raw(hdr.data(), hdr.size(), data.data(), data.size());
        raw_reply r = c.wait(req_id, 20);
        ASSERT_TRUE(r.received) << "no reply";
        EXPECT_EQ(r.status(), status) << ps_status_string(r.status());
        EXPECT_EQ(r.hdr.body_len, 0u) << "an error reply carries no body";
        EXPECT_TRUE(r.data.empty());
        expect_alive();
    }

    static std::vector<uint8_t> header(uint16_t type, uint64_t req_id, const void *body,
                                       uint32_t body_len, uint32_t announced_body_len)
    {
        ps_msg_hdr_t h;
        ps_msg_hdr_init(&h, (ps_msg_type_t)type, req_id, 0, announced_body_len);
        std::vector<uint8_t> v(sizeof(h) + body_len);
        memcpy(v.data(), &h, sizeof(h));
        if (body_len) {
            memcpy(v.data() + sizeof(h), body, body_len);
        }
        return v;
    }

    size_t warnings() const
    {
        std::string log = cluster.log(0);
        size_t n = 0;
        for (size_t pos = 0; (pos = log.find("rejecting request", pos)) != std::string::npos;
             pos++) {
            n++;
        }
        return n;
    }

    ps_cluster cluster;
    raw_client c, c1;
    uint32_t nworkers = 0;
    uint64_t fid = 0;
};

TEST_F(ServerProto, BadMagic)
{
    ps_hello_req_t body{PS_PROTO_VERSION, 0};
    std::vector<uint8_t> h = header(PS_MSG_HELLO, 1001, &body, sizeof(body), sizeof(body));
    uint32_t bad = 0xdeadbeef;
    memcpy(h.data(), &bad, sizeof(bad));
    expect_error(h, {}, 1001, PS_ERR_PROTO);
    EXPECT_GE(warnings(), 1u);
}

/* A peer that sends nothing but malformed requests (or AUTHs with a wrong
 * key) cannot flood the log: a line a second at most, saying how many
 * were left out. */
TEST_F(ServerProto, RejectionsAreLoggedAtMostOnceASecond)
{
    ps_hello_req_t body{PS_PROTO_VERSION, 0};
    double t0 = ps_time_ns() / 1e9;
    for (uint64_t id = 2000; id < 2200; id++) {
        std::vector<uint8_t> h = header(PS_MSG_HELLO, id, &body, sizeof(body), sizeof(body));
        ((ps_msg_hdr_t *)h.data())->version = 99;
        expect_error(h, {}, id, PS_ERR_PROTO);
    }
    double secs = ps_time_ns() / 1e9 - t0;
    EXPECT_GE(warnings(), 1u);
    EXPECT_LE(warnings(), 2 + (size_t)secs) << "200 rejections in " << secs << " s";
}

TEST_F(ServerProto, BadVersion)
{
    ps_hello_req_t body{PS_PROTO_VERSION, 0};
    std::vector<uint8_t> h = header(PS_MSG_HELLO, 1002, &body, sizeof(body), sizeof(body));
    ((ps_msg_hdr_t *)h.data())->version = 99;
    expect_error(h, {}, 1002, PS_ERR_PROTO);
}

TEST_F(ServerProto, TruncatedHeader)
{
    /* 10 bytes: not even a header, so the reply carries req_id 0 */
    std::vector<uint8_t> h = header(PS_MSG_HELLO, 1003, nullptr, 0, 0);
    h.resize(10);
    expect_error(h, {}, 0, PS_ERR_PROTO);
}

TEST_F(ServerProto, EmptyHeader)
{
    c.send_raw(nullptr, 0, nullptr, 0);
    raw_reply r = c.wait(0, 20);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_PROTO);
    expect_alive();
}

TEST_F(ServerProto, WrongBodyLen)
{
    ps_path_req_t body{5, 0};
    /* announces 16 bytes of body but carries 8 */
    expect_error(header(PS_MSG_LOOKUP, 1004, &body, sizeof(body), 16),
                 std::vector<uint8_t>{'/', 'a', 'b', 'c', 'd'}, 1004, PS_ERR_PROTO);
    /* body_len right for another type */
    ps_io_req_t io{fid, 4, 1, 0};
    expect_error(header(PS_MSG_LOOKUP, 1005, &io, sizeof(io), sizeof(io)),
                 std::vector<uint8_t>{'/', 'a', 'b', 'c', 'd'}, 1005, PS_ERR_PROTO);
}

TEST_F(ServerProto, UnknownType)
{
    expect_error(header(99, 1006, nullptr, 0, 0), {}, 1006, PS_ERR_PROTO);
}

TEST_F(ServerProto, DataLengthMismatch)
{
    ps_path_req_t body{5, 0};
    expect_error(header(PS_MSG_LOOKUP, 1007, &body, sizeof(body), sizeof(body)),
                 std::vector<uint8_t>{'/', 'a', 'b'}, 1007, PS_ERR_PROTO);
    /* a write whose data is shorter than regions + payload */
    ps_io_req_t io{fid, 100, 1, 0};
    std::vector<uint8_t> d = raw_client::io_data({{0, 100}}, std::vector<uint8_t>(50, 1));
    expect_error(header(PS_MSG_OBJ_WRITE, 1008, &io, sizeof(io), sizeof(io)), d, 1008,
                 PS_ERR_PROTO);
}

TEST_F(ServerProto, RegionOverflowAndRange)
{
    std::vector<uint8_t> payload(100, 0xee);
    /* regions past the object size limit (16 TiB) are "file too large",
     * as EFBIG from the disk would be, not malformed requests: off + len
     * wraps around 2^64, far beyond, one byte past */
    raw_reply r = c.write(fid, {{UINT64_MAX - 10, 100}}, payload);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_FILE_TOO_LARGE);
    r = c.write(fid, {{1ull << 62, 100}}, payload);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_FILE_TOO_LARGE);
    r = c.write(fid, {{(1ull << 44) - 99, 100}}, payload);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_FILE_TOO_LARGE);
    /* zero-length region */
    r = c.write(fid, {{0, 0}, {0, 100}}, payload);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_PROTO);
    /* lengths do not sum to the payload */
    ps_io_req_t io{fid, 100, 2, 0};
    std::vector<uint8_t> d = raw_client::io_data({{0, 60}, {200, 60}}, payload);
    r = c.call(PS_MSG_OBJ_WRITE, &io, sizeof(io), d.data(), d.size());
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_PROTO);
    /* reads, truncates too */
    r = c.read(fid, {{UINT64_MAX - 10, 100}});
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_FILE_TOO_LARGE);
    r = c.obj(PS_MSG_OBJ_TRUNCATE, fid, UINT64_MAX);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_FILE_TOO_LARGE);
    expect_alive();
    /* nregions = 0 is rejected by the decoder */
    ps_io_req_t zero{fid, 0, 0, 0};
    expect_error(header(PS_MSG_OBJ_READ, 1010, &zero, sizeof(zero), sizeof(zero)), {}, 1010,
                 PS_ERR_PROTO);
}

TEST_F(ServerProto, OversizedBatch)
{
    /* max_batch=1m: a 2 MiB write (sent by rendezvous) and read are refused */
    std::vector<uint8_t> big(2 << 20, 0x11);
    raw_reply r = c.write(fid, {{0, big.size()}}, big);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_TOO_BIG);
    r = c.read(fid, {{0, 2 << 20}});
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_TOO_BIG);
    /* above the protocol limit: a protocol error */
    ps_io_req_t io{fid, PS_MAX_PAYLOAD + 1, 1, 0};
    ps_region_t reg{0, PS_MAX_PAYLOAD + 1};
    r = c.call(PS_MSG_OBJ_READ, &io, sizeof(io), &reg, sizeof(reg));
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_PROTO);
    /* too many regions */
    ps_io_req_t many{fid, PS_MAX_REGIONS + 1, PS_MAX_REGIONS + 1, 0};
    expect_error(header(PS_MSG_OBJ_READ, 1011, &many, sizeof(many), sizeof(many)), {}, 1011,
                 PS_ERR_PROTO);
    expect_alive();
}

TEST_F(ServerProto, BadPaths)
{
    struct {
        std::string path;
        int status;
    } cases[] = {
        {"relative", PS_ERR_INVALID},       {"/a/../../etc/passwd", PS_ERR_INVALID},
        {"/a//b", PS_ERR_INVALID},          {"/a/./b", PS_ERR_INVALID},
        {"/a/", PS_ERR_INVALID},            {"/", PS_ERR_INVALID},
        {std::string("/a\0b", 4), PS_ERR_INVALID},
    };
    for (auto &k : cases) {
        /* send each to the worker that owns it */
        uint32_t owner = ps_path_worker(k.path.data(), k.path.size(), nworkers);
        raw_client &cl = owner == 0 ? c : c1;
        raw_reply r = cl.create(k.path);
        ASSERT_TRUE(r.received) << k.path;
        EXPECT_EQ(r.status(), k.status) << "CREATE '" << k.path << "'";
        r = cl.path_op(PS_MSG_LOOKUP, k.path);
        ASSERT_TRUE(r.received);
        EXPECT_EQ(r.status(), k.status) << "LOOKUP '" << k.path << "'";
    }
    /* path_len 0 and above PS_PATH_MAX: protocol errors */
    ps_path_req_t empty{0, 0};
    expect_error(header(PS_MSG_LOOKUP, 1012, &empty, sizeof(empty), sizeof(empty)), {}, 1012,
                 PS_ERR_PROTO);
    std::string huge(PS_PATH_MAX + 1, 'x');
    huge[0] = '/';
    ps_path_req_t hreq{(uint32_t)huge.size(), 0};
    std::vector<uint8_t> hd(huge.begin(), huge.end());
    expect_error(header(PS_MSG_LOOKUP, 1013, &hreq, sizeof(hreq), sizeof(hreq)), hd, 1013,
                 PS_ERR_PROTO);
    /* a long (but legal) path works end to end */
    std::string longp = "/" + std::string(3000, 'l');
    uint32_t owner = ps_path_worker(longp.data(), longp.size(), nworkers);
    raw_client &cl = owner == 0 ? c : c1;
    raw_reply r = cl.create(longp);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_OK);
    r = cl.path_op(PS_MSG_LOOKUP, longp);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_OK);
    EXPECT_GE(warnings(), 1u);
}

TEST_F(ServerProto, WrongWorker)
{
    /* an object owned by worker 1, asked of worker 0 */
    uint64_t other = file_id_for_worker(1, nworkers, 3);
    raw_reply r = c.write(other, {{0, 10}}, std::vector<uint8_t>(10, 1));
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_WRONG_WORKER);
    r = c.obj(PS_MSG_OBJ_STAT, other);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_WRONG_WORKER);
    /* and the right worker serves it */
    r = c1.write(other, {{0, 10}}, std::vector<uint8_t>(10, 1));
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_OK);

    /* a path owned by worker 1, asked of worker 0 */
    std::string p = path_for_worker(1, nworkers, "/ww");
    r = c.create(p);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_WRONG_WORKER);
    r = c1.create(p);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_OK);
    expect_alive();
}

TEST_F(ServerProto, SharedFilePointer)
{
    /* malformed: unknown op, a value past INT64_MAX, a release with a value
     * (every view is well formed: NewerViewStartsAtZero in
     * test_client_sharedfp.cc checks what the server does with it) */
    ps_sfp_req_t bad[] = {
        {fid, 1, 1, 0, 0},
        {fid, 1, 1, 4, 0},
        {fid, 1, (uint64_t)INT64_MAX + 1, PS_SFP_SET, 0},
        {fid, 1, 5, PS_SFP_RELEASE, 0},
    };
    uint64_t id = 1100;
    for (auto &b : bad) {
        expect_error(header(PS_MSG_SHARED_FP, id, &b, sizeof(b), sizeof(b)), {}, id, PS_ERR_PROTO);
        id++;
    }
    /* the counter of a file id owned by worker 1 is refused by worker 0 and
     * kept by worker 1 */
    uint64_t other = file_id_for_worker(1, nworkers, 3);
    ps_sfp_req_t add{other, 9, 40, PS_SFP_FETCH_ADD, 0};
    /* raw sends carry no capability of their own: sign one */
    add.cap = raw_client::make_cap(other, PS_CAP_ALL, ps_cap_now_ns() + 3600ull * 1000000000ull);
    const char *key = getenv("PSTRIPE_AUTH_KEY_FILE"); /* raw sends do not authenticate */
    ASSERT_EQ(c1.authenticate(key != nullptr ? key : "").status(), PS_OK);
    std::vector<uint8_t> h = header(PS_MSG_SHARED_FP, id, &add, sizeof(add), sizeof(add));
    c.send_raw(h.data(), h.size(), nullptr, 0);
    raw_reply r = c.wait(id++, 20);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_WRONG_WORKER);
    /* only a SET makes a counter: an add of an unknown one is refused */
    h = header(PS_MSG_SHARED_FP, id, &add, sizeof(add), sizeof(add));
    c1.send_raw(h.data(), h.size(), nullptr, 0);
    r = c1.wait(id++, 20);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.status(), PS_ERR_NO_ENTRY);
    ps_sfp_req_t set{other, 9, 0, PS_SFP_SET, 0};
    set.cap = add.cap;
    h = header(PS_MSG_SHARED_FP, id, &set, sizeof(set), sizeof(set));
    c1.send_raw(h.data(), h.size(), nullptr, 0);
    r = c1.wait(id++, 20);
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    for (uint64_t want : {0u, 40u, 80u}) {
        h = header(PS_MSG_SHARED_FP, id, &add, sizeof(add), sizeof(add));
        c1.send_raw(h.data(), h.size(), nullptr, 0);
        r = c1.wait(id++, 20);
        ASSERT_TRUE(r.received);
        ASSERT_EQ(r.status(), PS_OK);
        EXPECT_EQ(r.body<ps_sfp_rep_t>().value, want);
    }
    expect_alive();
}

/* One user other than root makes at most PSS_SFP_USER_MAX (1024) of a
 * worker's 4096 shared file pointers: one that makes them in a loop cannot
 * keep others' MPI opens from making theirs (before session 75, uid 65534
 * took all 4096 and uid 1000's SET was refused). Root is not counted. */
TEST(ServerSharedFp, OneUserCannotFillTheTable)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1));
    raw_client hog, other;
    ASSERT_TRUE(hog.connect(cluster.host(0), cluster.port(0)));
    ASSERT_TRUE(other.connect(cluster.host(0), cluster.port(0)));
    ASSERT_EQ(hog.authenticate(cluster_key_path(), 65534, 65534).status(), PS_OK);
    ASSERT_EQ(other.authenticate(cluster_key_path(), 1000, 1000).status(), PS_OK);
    auto set = [](raw_client &c, uint64_t instance) {
        ps_sfp_req_t rq{0x5f9, instance, 0, PS_SFP_SET, 0};
        return c.call(PS_MSG_SHARED_FP, &rq, sizeof(rq)).status();
    };
    uint64_t made = 0;
    while (made < 4096 && set(hog, made + 1) == PS_OK) {
        made++;
    }
    EXPECT_EQ(made, 1024u) << "counters one user made";
    EXPECT_EQ(set(hog, 99999), PS_ERR_TOO_BIG);
    EXPECT_EQ(set(other, 1), PS_OK) << "another user's";
}

TEST_F(ServerProto, ManyBadRequestsInARow)
{
    /* a burst of garbage of every size, then normal service */
    for (int i = 0; i < 200; i++) {
        std::vector<uint8_t> junk((size_t)(i % 80));
        for (size_t k = 0; k < junk.size(); k++) {
            junk[k] = (uint8_t)(k * 31 + (size_t)i * 7);
        }
        c.send_raw(junk.data(), junk.size(), junk.data(), junk.size() / 2);
    }
    expect_alive();
    ps_stats_rep_t st;
    ASSERT_TRUE(c.stats(&st).received);
    EXPECT_GE(st.errors, 200u);
}

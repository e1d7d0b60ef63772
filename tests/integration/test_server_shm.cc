/*
 * test_server_shm.cc: the shared-memory connections of servers with the
 * shm setting (pss_listen.c). HELLO tells their ports and the host id only
 * to a client that asks and only when the server offers them (never with
 * auth = none); such a connection is authenticated like any other and
 * serves the servers' own user alone; and a client process that
 * exits without closing loses its connection (UCX reports it although the
 * connection detects no failures otherwise: with max_connections = 2, five
 * clients in a row would be refused from the third).
 */
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "ps_cluster.h"
#include "ps_net.h"
#include "test_server_raw.h"

using namespace ps_test;

namespace {

const std::vector<std::string> kShm = {"--set", "shm=yes", "--set", "log_level=debug"};

raw_reply hello(raw_client &c, uint32_t flags)
{
    ps_hello_req_t req{PS_PROTO_VERSION, flags};
    return c.call(PS_MSG_HELLO, &req, sizeof(req));
}

/* The shm port of each worker, from a HELLO that asks for them. */
std::vector<uint16_t> shm_ports(const ps_cluster &cluster)
{
    raw_client c;
    std::vector<uint16_t> ports;
    if (!c.connect(cluster.host(0), cluster.port(0))) {
        return ports;
    }
    raw_reply r = hello(c, PS_HELLO_SHM);
    uint32_t n = r.body<ps_hello_rep_t>().nworkers;
    if (r.status() != PS_OK || r.data.size() != 2 * n * 4 + sizeof(ps_shm_id_t)) {
        return ports;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p;
        memcpy(&p, r.data.data() + (n + i) * 4, 4);
        ports.push_back((uint16_t)p);
    }
    return ports;
}

size_t count(const std::string &text, const std::string &what)
{
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        n++;
    }
    return n;
}

} // namespace

TEST(ServerShm, HelloTellsShmPortsOnlyWhenAskedAndOffered)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 2, kShm));
    ASSERT_TRUE(cluster.start(1, 2));
    ps_shm_id_t here;
    ASSERT_EQ(0, ps_shm_id(&here));

    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    raw_reply plain = hello(c, 0);
    ASSERT_EQ(plain.status(), PS_OK);
    EXPECT_EQ(plain.body<ps_hello_rep_t>().flags, 0u);
    EXPECT_EQ(plain.data.size(), 2 * 4u);

    raw_reply r = hello(c, PS_HELLO_SHM);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.body<ps_hello_rep_t>().flags, PS_HELLO_SHM);
    ASSERT_EQ(r.data.size(), 4 * 4u + sizeof(ps_shm_id_t));
    uint32_t ports[4];
    memcpy(ports, r.data.data(), sizeof(ports));
    for (int i = 2; i < 4; i++) {
        EXPECT_NE(ports[i], 0u);
        EXPECT_NE(ports[i], ports[0]);
        EXPECT_NE(ports[i], ports[1]);
    }
    EXPECT_EQ(0, memcmp(r.data.data() + 16, &here, sizeof(here)));

    /* a server without shm ignores the request */
    raw_client d;
    ASSERT_TRUE(d.connect(cluster.host(1), cluster.port(1)));
    raw_reply n = hello(d, PS_HELLO_SHM);
    ASSERT_EQ(n.status(), PS_OK);
    EXPECT_EQ(n.body<ps_hello_rep_t>().flags, 0u);
    EXPECT_EQ(n.data.size(), 2 * 4u);

    /* unknown flag bits are a malformed request */
    EXPECT_EQ(hello(d, 0x2).status(), PS_ERR_PROTO);
}

TEST(ServerShm, ConnectionServesTheServersUserAlone)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1, kShm));
    std::vector<uint16_t> ports = shm_ports(cluster);
    ASSERT_EQ(ports.size(), 1u);
    uint32_t me = (uint32_t)geteuid(), other = me + 1000;

    /* authenticated like any connection */
    raw_client c;
    ASSERT_TRUE(c.connect("127.0.0.1", ports[0], 10.0, true));
    c.set_auto_auth(false);
    EXPECT_EQ(c.create("/f", 0).status(), PS_ERR_ACCESS);
    EXPECT_EQ(c.authenticate(cluster_key_path(), me, me).status(), PS_OK);
    EXPECT_EQ(c.create("/f", 0).status(), PS_OK);

    /* as another user (a key holder may claim any uid): refused there,
     * served over TCP */
    raw_client o;
    ASSERT_TRUE(o.connect("127.0.0.1", ports[0], 10.0, true));
    o.set_auto_auth(false);
    EXPECT_EQ(o.authenticate(cluster_key_path(), other, other).status(), PS_OK);
    EXPECT_EQ(o.create("/g", 0).status(), PS_ERR_ACCESS);
    raw_client t;
    ASSERT_TRUE(t.connect(cluster.host(0), cluster.port(0)));
    t.set_auto_auth(false);
    EXPECT_EQ(t.authenticate(cluster_key_path(), other, other).status(), PS_OK);
    EXPECT_EQ(t.create("/g", 0).status(), PS_OK);
}

TEST(ServerShm, NotOfferedWithoutAuth)
{
    ps_cluster cluster;
    std::vector<std::string> args = kShm;
    args.insert(args.end(), {"--set", "auth=none"});
    ASSERT_TRUE(cluster.start(1, 1, args));
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    raw_reply r = hello(c, PS_HELLO_SHM);
    ASSERT_EQ(r.status(), PS_OK);
    EXPECT_EQ(r.body<ps_hello_rep_t>().flags, 0u);
    EXPECT_NE(cluster.log(0).find("auth = none cannot tell: no shared memory"), std::string::npos)
        << cluster.log(0);
}

TEST(ServerShm, ExitedClientLosesItsConnection)
{
    ps_cluster cluster;
    std::vector<std::string> args = kShm;
    args.insert(args.end(), {"--set", "max_connections=2"});
    ASSERT_TRUE(cluster.start(1, 1, args));
    std::vector<uint16_t> ports = shm_ports(cluster);
    ASSERT_EQ(ports.size(), 1u);
    const std::string gone = "connection closed by peer";
    ASSERT_TRUE(cluster.wait_log(0, gone, 10.0)); /* shm_ports' */

    for (int i = 0; i < 5; i++) {
        pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            /* connect, be served, exit without closing */
            raw_client c;
            c.set_auto_auth(false);
            bool ok = c.connect("127.0.0.1", ports[0], 10.0, true) &&
                      c.authenticate(cluster_key_path()).status() == PS_OK &&
                      c.create("/f" + std::to_string(i), 0).status() == PS_OK;
            _exit(ok ? 0 : 1);
        }
        int status = 0;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << "client " << i << " was not served: " << cluster.log(0);
        for (int t = 0; t < 100 && count(cluster.log(0), gone) < (size_t)i + 2; t++) {
            poll(nullptr, 0, 100);
        }
        EXPECT_EQ(count(cluster.log(0), gone), (size_t)i + 2) << cluster.log(0);
    }
}

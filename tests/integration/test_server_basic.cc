/*
 * test_server_basic.cc: start-up, --ready-fd with port 0 (outside the
 * ephemeral range), HELLO, the data dir lock, start-up failures,
 * --print-config, SIGTERM.
 */
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ps_cluster.h"
#include "ps_time.h"
#include "test_server_raw.h"

using namespace ps_test;

TEST(ServerStart, ReadyFdGivesRealPort)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(2, 1));
    EXPECT_NE(cluster.port(0), 0);
    EXPECT_NE(cluster.port(1), 0);
    EXPECT_NE(cluster.port(0), cluster.port(1));
    EXPECT_EQ(cluster.host(0), "127.0.0.1");
    EXPECT_EQ(cluster.servers_csv(), cluster.address(0) + "," + cluster.address(1));
    EXPECT_NE(cluster.log(0).find("ready on " + cluster.address(0)), std::string::npos)
        << cluster.log(0);
}

/* Port 0 gives worker 0 a port that connect() never takes as its local
 * port, so that a restart on it cannot find it taken by some client. */
TEST(ServerStart, PortZeroIsOutsideTheEphemeralRange)
{
    unsigned lo = 0, hi = 0;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(fscanf(f, "%u %u", &lo, &hi), 2);
    fclose(f);
    if (lo <= 1024 && hi >= 65535) {
        GTEST_SKIP() << "every port is ephemeral here";
    }
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(3, 2));
    for (int i = 0; i < 3; i++) {
        EXPECT_TRUE(cluster.port(i) < lo || cluster.port(i) > hi)
            << cluster.port(i) << " in " << lo << "-" << hi;
        EXPECT_GE(cluster.port(i), 1024);
    }
    EXPECT_NE(cluster.port(0), cluster.port(1));
    EXPECT_NE(cluster.port(1), cluster.port(2));
}

TEST(ServerStart, HelloListsEveryWorker)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 3));

    raw_client c0;
    ASSERT_TRUE(c0.connect(cluster.host(0), cluster.port(0)));
    raw_reply r = c0.hello();
    ASSERT_TRUE(r.received);
    ASSERT_EQ(r.status(), PS_OK);
    ps_hello_rep_t rep = r.body<ps_hello_rep_t>();
    EXPECT_EQ(rep.nworkers, 3u);
    EXPECT_EQ(rep.worker, 0u);
    EXPECT_NE(rep.server_id, 0u);
    EXPECT_GE(rep.block_size, 512u) << "O_DIRECT alignment of the build tree's disk";
    EXPECT_EQ(rep.block_size & (rep.block_size - 1), 0u);
    ASSERT_EQ(r.data.size(), 3 * sizeof(uint32_t));
    uint32_t ports[3];
    memcpy(ports, r.data.data(), sizeof(ports));
    EXPECT_EQ(ports[0], cluster.port(0));

    /* Every worker answers on its own port, with its own index. */
    for (uint32_t i = 1; i < 3; i++) {
        raw_client c;
        ASSERT_TRUE(c.connect(cluster.host(0), (uint16_t)ports[i]));
        raw_reply ri = c.hello();
        ASSERT_TRUE(ri.received) << "worker " << i;
        EXPECT_EQ(ri.body<ps_hello_rep_t>().worker, i);
        EXPECT_EQ(ri.body<ps_hello_rep_t>().server_id, rep.server_id);
    }
}

TEST(ServerStart, DefaultWorkersOnePerCore)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 0, {"--set", "pin=core"}));
    raw_client c;
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    raw_reply r = c.hello();
    ASSERT_TRUE(r.received);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    EXPECT_GE(r.body<ps_hello_rep_t>().nworkers, 1u);
    EXPECT_LE((long)r.body<ps_hello_rep_t>().nworkers, ncpu);
    EXPECT_NE(cluster.log(0).find("(core "), std::string::npos);
}

/* The core worker 0 of a server's log names ("worker 0: listening on ...
 * (core N)"); -1 if none. */
static int worker0_core(const std::string &log)
{
    size_t at = log.find("worker 0: listening on ");
    at = at == std::string::npos ? at : log.find("(core ", at);
    return at == std::string::npos ? -1 : atoi(log.c_str() + at + 6);
}

/*
 * A file's object has the same worker index on every server, so servers
 * sharing a machine start their workers on different cores (worker i of
 * server k on core (i + k) mod cores): otherwise both servers of a local
 * cluster served one file from one core while the other idled.
 */
TEST(ServerStart, ServersOfOneMachineStartOnDifferentCores)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        GTEST_SKIP() << "one core";
    }
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(
        1, 1, {"--set", "server_index=0", "--set", "cluster_size=2", "--set", "pin=core"}));
    ASSERT_TRUE(cluster.start(
        1, 1, {"--set", "server_index=1", "--set", "cluster_size=2", "--set", "pin=core"}));
    int core0 = worker0_core(cluster.log(0)), core1 = worker0_core(cluster.log(1));
    if (core0 < 0 || core1 < 0) {
        GTEST_SKIP() << "workers not pinned here:\n" << cluster.log(0);
    }
    EXPECT_NE(core0, core1) << cluster.log(0) << cluster.log(1);
}

/* Cpus_allowed_list of each of pid's threads named pss-w*, and of pid itself
 * (key ""). */
static std::map<std::string, std::string> worker_cpus(pid_t pid)
{
    std::map<std::string, std::string> out;
    std::string task = "/proc/" + std::to_string(pid) + "/task";
    DIR *d = opendir(task.c_str());
    for (struct dirent *e = d != nullptr ? readdir(d) : nullptr; e != nullptr; e = readdir(d)) {
        std::string dir = task + "/" + e->d_name, comm, line;
        std::ifstream c(dir + "/comm"), st(dir + "/status");
        std::getline(c, comm);
        while (std::getline(st, line)) {
            if (line.rfind("Cpus_allowed_list:", 0) == 0) {
                std::string cpus = line.substr(line.find_first_not_of(" \t", 18));
                if (comm.rfind("pss-w", 0) == 0) {
                    out[comm] = cpus;
                } else if (std::to_string(pid) == e->d_name) {
                    out[""] = cpus;
                }
            }
        }
    }
    if (d != nullptr) {
        closedir(d);
    }
    return out;
}

/* pin = none leaves each worker where the kernel puts it (a worker pinned to
 * a core where an MPI process busy-polled waited seconds for the CPU); core
 * (the daemon's default; ps_cluster passes none) pins each to one core;
 * anything else is refused. */
TEST(ServerStart, PinNoneLeavesWorkersToTheScheduler)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        GTEST_SKIP() << "one core";
    }
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 2, {"--set", "pin=none"}));
    ASSERT_TRUE(cluster.start(1, 2, {"--set", "pin=core"}));
    std::map<std::string, std::string> none = worker_cpus(cluster.pid(0));
    std::map<std::string, std::string> core = worker_cpus(cluster.pid(1));
    ASSERT_EQ(none.size(), 3u) << cluster.log(0);
    ASSERT_EQ(core.size(), 3u) << cluster.log(1);
    for (const char *w : {"pss-w0", "pss-w1"}) {
        EXPECT_EQ(none[w], none[""]) << w;
        if (worker0_core(cluster.log(1)) >= 0) {
            EXPECT_NE(core[w], core[""]) << w << " of the default server is not pinned";
            EXPECT_EQ(core[w].find_first_of(",-"), std::string::npos) << core[w];
        }
    }
    EXPECT_NE(cluster.log(0).find("workers are not pinned (pin = none)"), std::string::npos)
        << cluster.log(0);
    EXPECT_EQ(worker0_core(cluster.log(0)), -1);

    ::testing::AssertionResult res = cluster.start(1, 1, {"--set", "pin=socket"});
    EXPECT_FALSE(res);
    EXPECT_NE(cluster.log(2).find("pin: 'socket' is not core or none"), std::string::npos)
        << cluster.log(2);
}

TEST(ServerStart, SigtermExitsZero)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 2));
    {
        raw_client c;
        ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
        ASSERT_TRUE(c.hello().received);
        int status = cluster.stop(0);
        ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
        EXPECT_EQ(WEXITSTATUS(status), 0);
    }
    EXPECT_NE(cluster.log(0).find("stopped cleanly"), std::string::npos);
}

TEST(ServerStart, PortInUseFails)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1));
    ::testing::AssertionResult res = cluster.start(1, 1, {"--listen", cluster.address(0)});
    EXPECT_FALSE(res) << "second server on the same port started";
    EXPECT_FALSE(cluster.running(1));
    EXPECT_NE(cluster.log(1).find("listen on"), std::string::npos) << cluster.log(1);
}

TEST(ServerStart, DataDirLockedFails)
{
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1));
    ::testing::AssertionResult res = cluster.start(1, 1, {"--data", cluster.data_dir(0)});
    EXPECT_FALSE(res) << "two servers share a data dir";
    EXPECT_NE(cluster.log(1).find("in use by another pstripe-server"), std::string::npos)
        << cluster.log(1);
}

TEST(ServerStart, BadDataDirFails)
{
    ps_cluster cluster;
    ::testing::AssertionResult res = cluster.start(1, 1, {"--data", "/proc/no/such/dir"});
    EXPECT_FALSE(res);
    EXPECT_NE(cluster.log(0).find("mkdir /proc/no/such/dir"), std::string::npos)
        << cluster.log(0);
}

/* Mode bits of a path (-1 if it cannot be stat'ed). */
static int mode_of(const std::string &path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

/*
 * The data directory holds every user's bytes whatever their files' modes
 * say: only the server's user may enter it, and its files are the
 * server's alone. A directory that lets others in (made by hand, or by a
 * server before session 75) is closed at start.
 */
TEST(ServerStart, DataIsTheServersAlone)
{
    ps_cluster cluster;
    raw_client c;
    const uint64_t fid = 0x7a11;
    ASSERT_TRUE(cluster.start(1));
    ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
    ASSERT_EQ(c.create("/private").status(), PS_OK);
    ASSERT_EQ(c.write(fid, {{0, 4096}}, std::vector<uint8_t>(4096, 1)).status(), PS_OK);
    ASSERT_EQ(c.obj(PS_MSG_OBJ_SYNC, fid).status(), PS_OK);
    char obj[64];
    snprintf(obj, sizeof(obj), "/obj/%02x/%016llx", (unsigned)(fid >> 56), (unsigned long long)fid);
    const std::string dir = cluster.data_dir(0);
    EXPECT_EQ(mode_of(dir), 0700);
    EXPECT_EQ(mode_of(dir + "/obj"), 0700);
    EXPECT_EQ(mode_of(dir + obj), 0600) << obj;
    EXPECT_EQ(mode_of(dir + "/meta"), 0700);
    EXPECT_EQ(mode_of(dir + "/meta/data.mdb"), 0600);
    EXPECT_EQ(mode_of(dir + "/lock"), 0600);

    ASSERT_EQ(chmod(dir.c_str(), 0755), 0);
    ASSERT_TRUE(cluster.restart(0));
    EXPECT_EQ(mode_of(dir), 0700);
    EXPECT_NE(cluster.log(0).find("was mode 0755, now 0700"), std::string::npos) << cluster.log(0);
}

TEST(ServerStart, PrintConfigListsTunables)
{
    std::string cmd = std::string(PS_SERVER_PATH) +
                      " --print-config --set coalesce_gap=8k --workers 3 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
        out.append(buf, n);
    }
    int status = pclose(p);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
    EXPECT_NE(out.find("[server]"), std::string::npos) << out;
    for (const char *key : {"listen", "data_dir", "workers", "max_batch", "coalesce_gap",
                            "max_io", "aio_depth", "direct_io", "log_level"}) {
        EXPECT_NE(out.find(std::string("\n") + key + " = "), std::string::npos) << key;
    }
    EXPECT_NE(out.find("coalesce_gap = 8k"), std::string::npos) << out;
    EXPECT_NE(out.find("workers = 3"), std::string::npos) << out;
}

TEST(ServerStart, BadSettingFails)
{
    std::string cmd = std::string(PS_SERVER_PATH) + " --print-config --set max_io=lots 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf) - 1, p);
    buf[n] = 0;
    int status = pclose(p);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    EXPECT_NE(std::string(buf).find("max_io"), std::string::npos) << buf;
}

/*
 * A flood of connections beyond max_connections: the worker refuses the
 * surplus (the clients see their connection fail, not a hang), keeps serving
 * the ones it accepted, accepts again once the flood is gone, and stops
 * cleanly on SIGTERM. Without the limit a flood that exhausted the server's
 * descriptors left the worker refusing everything for good.
 */
TEST(ServerConn, FloodIsRefusedAndRecovers)
{
    const int limit = 6, flood = 20;
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 1, {"--set", "max_connections=" + std::to_string(limit)}));

    std::vector<std::unique_ptr<raw_client>> clients;
    int answered = 0, refused = 0;
    for (int i = 0; i < flood; i++) {
        clients.emplace_back(new raw_client());
        ASSERT_TRUE(clients.back()->connect(cluster.host(0), cluster.port(0)));
        /* (authenticated: a slow run must not make room for more,
         * UnauthenticatedConnectionsMakeRoom) */
        raw_reply r = clients.back()->authenticate(cluster_key_path());
        if (r.received && r.status() == PS_OK) {
            answered++;
        } else {
            EXPECT_FALSE(clients.back()->connected()) << "an unanswered client must see an error";
            refused++;
        }
    }
    RecordProperty("answered", answered);
    RecordProperty("refused", refused);
    EXPECT_EQ(answered, limit);
    EXPECT_EQ(refused, flood - limit);
    EXPECT_NE(cluster.log(0).find("refusing new ones"), std::string::npos) << cluster.log(0);

    /* The accepted ones keep working while the refused ones go away. */
    for (int i = 0; i < flood; i++) {
        if (clients[i]->connected()) {
            EXPECT_TRUE(clients[i]->hello().received) << "client " << i;
        }
    }
    clients.clear();

    /* Once the flood is gone (the server sees the clients close), new
     * clients are accepted again: wait for it with a deadline. */
    bool recovered = false;
    uint64_t deadline = ps_time_ns() + 20000000000ull;
    while (!recovered && ps_time_ns() < deadline) {
        std::vector<std::unique_ptr<raw_client>> again;
        int ok = 0;
        for (int i = 0; i < limit; i++) {
            again.emplace_back(new raw_client());
            ok += again.back()->connect(cluster.host(0), cluster.port(0)) &&
                  again.back()->hello().received;
        }
        recovered = ok == limit;
    }
    EXPECT_TRUE(recovered) << cluster.log(0);

    int status = cluster.stop(0);
    ASSERT_TRUE(WIFEXITED(status)) << cluster.log(0);
    EXPECT_EQ(WEXITSTATUS(status), 0) << cluster.log(0);
    EXPECT_EQ(cluster.log(0).find("Assertion"), std::string::npos) << cluster.log(0);
}

/*
 * A worker at max_connections makes room for a new connection by closing
 * the oldest one that has not authenticated within auth_wait: peers
 * without credentials cannot hold every slot (before session 75 eight
 * HELLO-only connections kept a client with the key out for good).
 * Authenticated connections are never closed for room.
 */
TEST(ServerConn, UnauthenticatedConnectionsMakeRoom)
{
    const int limit = 4;
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(
        1, 1, {"--set", "max_connections=" + std::to_string(limit), "--set", "auth_wait=300ms"}));
    std::vector<std::unique_ptr<raw_client>> idle;
    for (int i = 0; i < limit; i++) {
        idle.emplace_back(new raw_client());
        ASSERT_TRUE(idle.back()->connect(cluster.host(0), cluster.port(0)));
        idle.back()->set_auto_auth(false);
        ASSERT_EQ(idle.back()->hello().status(), PS_OK) << "connection " << i;
    }
    usleep(400 * 1000); /* past auth_wait */
    raw_client late;
    ASSERT_TRUE(late.connect(cluster.host(0), cluster.port(0)));
    raw_reply a = late.authenticate(cluster_key_path());
    ASSERT_TRUE(a.received) << cluster.log(0);
    EXPECT_EQ(a.status(), PS_OK);
    EXPECT_TRUE(cluster.wait_log(0, "closing one that has not authenticated", 10))
        << cluster.log(0);
    int alive = 0;
    for (auto &c : idle) {
        alive += c->hello().received;
    }
    EXPECT_EQ(alive, limit - 1) << "one idle connection closed for the new one";

    /* every slot authenticated (late's and three more, each taking an idle
     * one's): the next connection is refused, none closed */
    std::vector<std::unique_ptr<raw_client>> authed;
    idle.clear();
    for (int i = 1; i < limit; i++) {
        authed.emplace_back(new raw_client());
        ASSERT_TRUE(authed.back()->connect(cluster.host(0), cluster.port(0)));
        raw_reply r = authed.back()->authenticate(cluster_key_path());
        ASSERT_TRUE(r.received) << "connection " << i << " (an idle one's room)";
        ASSERT_EQ(r.status(), PS_OK);
    }
    usleep(400 * 1000);
    raw_client refused;
    ASSERT_TRUE(refused.connect(cluster.host(0), cluster.port(0)));
    EXPECT_FALSE(refused.hello().received);
    EXPECT_TRUE(late.hello().received) << "an authenticated connection was closed";
    for (auto &c : authed) {
        EXPECT_TRUE(c->hello().received) << "an authenticated connection was closed";
    }
}

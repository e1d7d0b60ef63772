/*
 * test_client_ucx.cc: the client's UCX settings are its own (PSTRIPE_UCX_*).
 *
 * In an MPI program MPICH (ch4:ucx) holds a UCX context beside the client's,
 * and UCX_* settings are meant for it; UCX itself applies UCX_* under any
 * prefix, so psc_ucx_config_read puts the transport and device lists back
 * to "all" unless PSTRIPE_UCX_<NAME> sets them; the network devices are
 * the loopback ones when every server is at a loopback address
 * (psc_net_devices). No daemons needed.
 */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <string>
#include <vector>

#include <ucp/api/ucp.h>

extern "C" {
#include "ps_net.h"
#include "psc_config.h"
#include "psc_progress.h"
}

namespace {

/* The value UCX's printout gives NAME ("...NAME=value" line) in the config
 * the client would use. */
std::string client_ucx_value(const char *name, const char *net_devices = nullptr)
{
    ucp_config_t *config = nullptr;
    char msg[256] = "";
    EXPECT_EQ(PS_OK, psc_ucx_config_read(&config, 0, net_devices, msg, sizeof(msg))) << msg;
    if (config == nullptr) {
        return "";
    }
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ucp_config_print(config, f, nullptr, UCS_CONFIG_PRINT_CONFIG);
    fclose(f);
    ucp_config_release(config);
    std::string text(buf, len), key = std::string("_") + name + "=", value = "(absent)";
    free(buf);
    size_t pos = 0;
    while ((pos = text.find(key, pos)) != std::string::npos) {
        size_t start = text.rfind('\n', pos);
        start = start == std::string::npos ? 0 : start + 1;
        /* "UCX_TLS=", not "UCX_SOCKADDR_TLS_PRIORITY=" */
        if (text.compare(start, pos - start, "UCX") == 0) {
            size_t end = text.find('\n', pos);
            value = text.substr(pos + key.size(), end - pos - key.size());
            break;
        }
        pos += key.size();
    }
    return value;
}

class ClientUcx : public ::testing::Test {
protected:
    void TearDown() override
    {
        for (const char *v :
             {"UCX_TLS", "PSTRIPE_UCX_TLS", "UCX_NET_DEVICES", "PSTRIPE_UCX_NET_DEVICES",
              "UCX_RNDV_THRESH", "PSTRIPE_UCX_RNDV_THRESH", "UCX_RCACHE_ENABLE",
              "PSTRIPE_UCX_RCACHE_ENABLE"}) {
            unsetenv(v);
        }
    }
};

TEST_F(ClientUcx, UcxTlsForMpiDoesNotReachTheClient)
{
    setenv("UCX_TLS", "self,sm", 1);
    setenv("UCX_NET_DEVICES", "lo", 1);
    /* the client's own defaults: no shared memory, which its endpoints
     * (peer error handling) never use in UCX 1.13 (psc_config.c) */
    EXPECT_EQ("^sm,self", client_ucx_value("TLS"));
    EXPECT_EQ("all", client_ucx_value("NET_DEVICES"));
}

TEST_F(ClientUcx, PstripeUcxTlsAllGivesUcxsList)
{
    setenv("PSTRIPE_UCX_TLS", "all", 1);
    EXPECT_EQ("all", client_ucx_value("TLS"));
}

TEST_F(ClientUcx, PstripeUcxTlsIsHonoured)
{
    setenv("UCX_TLS", "self,sm", 1);
    setenv("PSTRIPE_UCX_TLS", "tcp", 1);
    setenv("PSTRIPE_UCX_NET_DEVICES", "lo", 1);
    EXPECT_EQ("tcp", client_ucx_value("TLS"));
    EXPECT_EQ("lo", client_ucx_value("NET_DEVICES"));
}

TEST_F(ClientUcx, DevicesThatReachTheServers)
{
    /* servers on loopback addresses: the loopback devices alone (psc_progress.c) */
    setenv("UCX_NET_DEVICES", "eth7", 1);
    EXPECT_EQ("lo", client_ucx_value("NET_DEVICES", "lo"));
    /* the user's PSTRIPE_UCX_NET_DEVICES still wins */
    setenv("PSTRIPE_UCX_NET_DEVICES", "all", 1);
    EXPECT_EQ("all", client_ucx_value("NET_DEVICES", "lo"));
}

/* psc_net_devices for servers at these numeric IPv4 or IPv6 addresses. */
const char *devices_for(const std::vector<const char *> &addrs, char *buf, size_t len)
{
    std::vector<psc_server_t> servers(addrs.size());
    pstripe_fs_t fs;

    memset(&fs, 0, sizeof(fs));
    for (size_t i = 0; i < addrs.size(); i++) {
        memset(&servers[i], 0, sizeof(servers[i]));
        auto *in4 = reinterpret_cast<struct sockaddr_in *>(&servers[i].sa);
        auto *in6 = reinterpret_cast<struct sockaddr_in6 *>(&servers[i].sa);
        if (inet_pton(AF_INET, addrs[i], &in4->sin_addr) == 1) {
            in4->sin_family = AF_INET;
        } else {
            EXPECT_EQ(1, inet_pton(AF_INET6, addrs[i], &in6->sin6_addr)) << addrs[i];
            in6->sin6_family = AF_INET6;
        }
    }
    fs.nservers = (uint32_t)servers.size();
    fs.servers = servers.data();
    return psc_net_devices(&fs, buf, len);
}

TEST_F(ClientUcx, LoopbackDevicesOnlyWhenEveryServerIsOnLoopback)
{
    char host_lo[256], buf[256];
    if (ps_loopback_devices(host_lo, sizeof(host_lo)) == 0) {
        GTEST_SKIP() << "no loopback device here";
    }
    const char *d = devices_for({"127.0.0.1", "127.0.0.2", "::1"}, buf, sizeof(buf));
    ASSERT_NE(nullptr, d);
    EXPECT_EQ(std::string(host_lo), d);
    /* one server elsewhere: every device (UCX picks the one that reaches it) */
    EXPECT_EQ(nullptr, devices_for({"127.0.0.1", "192.0.2.7"}, buf, sizeof(buf)));
    EXPECT_EQ(nullptr, devices_for({"2001:db8::1", "::1"}, buf, sizeof(buf)));
    /* no servers, or no room for the names: every device */
    EXPECT_EQ(nullptr, devices_for({}, buf, sizeof(buf)));
    EXPECT_EQ(nullptr, devices_for({"127.0.0.1"}, buf, 1));
}

TEST_F(ClientUcx, OtherSettingsPstripePrefixWins)
{
    /* Settings other than transports and devices: UCX_* apply to both
     * contexts (UCX's own rule), PSTRIPE_UCX_* to the client alone. */
    setenv("UCX_RNDV_THRESH", "12345", 1);
    EXPECT_EQ("12345", client_ucx_value("RNDV_THRESH"));
    setenv("PSTRIPE_UCX_RNDV_THRESH", "23456", 1);
    EXPECT_EQ("23456", client_ucx_value("RNDV_THRESH"));
}

/* No UCP registration cache: its hook test races a main thread's malloc
 * (psc_config.c), unless PSTRIPE_UCX_RCACHE_ENABLE asks for one. */
TEST_F(ClientUcx, NoRegistrationCacheUnlessAskedFor)
{
    setenv("UCX_RCACHE_ENABLE", "y", 1);
    EXPECT_EQ("n", client_ucx_value("RCACHE_ENABLE"));
    setenv("PSTRIPE_UCX_RCACHE_ENABLE", "try", 1);
    EXPECT_EQ("try", client_ucx_value("RCACHE_ENABLE"));
}

/* Make UCP contexts as the client does (its settings), n of them, in a
 * thread, while this one grows and shrinks the heap. */
void *make_contexts(void *arg)
{
    for (int i = *static_cast<int *>(arg); i > 0; i--) {
        ucp_config_t *config = nullptr;
        ucp_context_h context;
        ucp_params_t params = {};
        char msg[256];

        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features = UCP_FEATURE_AM;
        if (psc_ucx_config_read(&config, 0, "lo", msg, sizeof(msg)) != PS_OK) {
            _exit(2);
        }
        if (ucp_init(&params, config, &context) == UCS_OK) {
            ucp_cleanup(context);
        }
        ucp_config_release(config);
    }
    return nullptr;
}

/* The client makes its context in a thread beside the program's (MPI_Init's
 * at load, for one): the main thread's heap must stay whole. With UCP's
 * registration cache, 1,000 contexts so made cut the heap back under the
 * main thread's malloc in 4 runs of 10 (session 63). In a child, whose
 * crash, abort or hang (60 s) is the failure. */
TEST_F(ClientUcx, ContextsBesideAGrowingHeapLeaveItWhole)
{
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        static std::atomic<bool> done{false};
        static int n = 2000;
        pthread_t thread;
        auto run = [](void *arg) -> void * {
            make_contexts(arg);
            done = true;
            return nullptr;
        };
        alarm(60); /* a damaged heap can also deadlock malloc */
        if (pthread_create(&thread, nullptr, run, &n) != 0) {
            _exit(2);
        }
        while (!done) { /* sizes below the mmap threshold: the break moves */
            void *p[64];
            for (int i = 0; i < 64; i++) {
                p[i] = malloc(4096 + (size_t)(i * 977) % 60000);
                memset(p[i], i, 64);
            }
            for (int i = 63; i >= 0; i--) {
                free(p[i]);
            }
        }
        pthread_join(thread, nullptr);
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << (WIFSIGNALED(status) ? "the child died of signal " + std::to_string(WTERMSIG(status)) +
                                      " (6: malloc found its heap damaged; 14: a hang)"
                                : "the child exited " + std::to_string(WEXITSTATUS(status)) +
                                      " (2: the client's UCX settings or a thread failed)");
}

TEST_F(ClientUcx, BadPstripeUcxValueIsAnError)
{
    setenv("PSTRIPE_UCX_RNDV_THRESH", "not-a-size", 1);
    ucp_config_t *config = nullptr;
    char msg[256] = "";
    EXPECT_NE(PS_OK, psc_ucx_config_read(&config, 0, nullptr, msg, sizeof(msg)));
    EXPECT_NE(std::string(""), std::string(msg));
    if (config != nullptr) {
        ucp_config_release(config);
    }
}

} // namespace

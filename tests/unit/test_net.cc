/*
 * test_net.cc: ps_addr_is_local, ps_addr_is_loopback, ps_loopback_devices
 * (common/ps_net.c).
 */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>

#include <net/if.h>
#include <string>

extern "C" {
#include "ps_net.h"
}

/* pred (ps_addr_is_local, ps_addr_is_loopback) of a numeric IPv4 or IPv6
 * address */
static int address_is(int (*pred)(const struct sockaddr *), const char *text)
{
    struct addrinfo hints, *ai = nullptr;
    memset(&hints, 0, sizeof(hints));
    hints.ai_flags = AI_NUMERICHOST;
    EXPECT_EQ(getaddrinfo(text, nullptr, &hints, &ai), 0) << text;
    if (ai == nullptr) {
        return -1;
    }
    int yes = pred(ai->ai_addr);
    freeaddrinfo(ai);
    return yes;
}

static int local(const char *text)
{
    return address_is(ps_addr_is_local, text);
}

static int loopback(const char *text)
{
    return address_is(ps_addr_is_loopback, text);
}

TEST(Net, LoopbackIsLocal)
{
    EXPECT_EQ(1, local("127.0.0.1"));
    EXPECT_EQ(1, local("127.5.6.7"));
    EXPECT_EQ(1, local("::1"));
}

/* documentation ranges (RFC 5737, RFC 3849): no host has them */
TEST(Net, OtherHostsAreNot)
{
    EXPECT_EQ(0, local("192.0.2.1"));
    EXPECT_EQ(0, local("203.0.113.9"));
    EXPECT_EQ(0, local("2001:db8::1"));
    struct sockaddr un;
    memset(&un, 0, sizeof(un));
    un.sa_family = AF_UNIX;
    EXPECT_FALSE(ps_addr_is_local(&un));
}

TEST(Net, EveryInterfaceAddressIsLocal)
{
    struct ifaddrs *ifs;
    int n = 0;
    ASSERT_EQ(getifaddrs(&ifs), 0);
    for (struct ifaddrs *i = ifs; i != nullptr; i = i->ifa_next) {
        if (i->ifa_addr == nullptr ||
            (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6)) {
            continue;
        }
        EXPECT_TRUE(ps_addr_is_local(i->ifa_addr)) << i->ifa_name;
        n++;
    }
    freeifaddrs(ifs);
    EXPECT_GT(n, 0) << "no interface address at all";
}

TEST(Net, LoopbackAddresses)
{
    EXPECT_EQ(1, loopback("127.0.0.1"));
    EXPECT_EQ(1, loopback("127.200.0.9"));
    EXPECT_EQ(1, loopback("::1"));
    EXPECT_EQ(0, loopback("128.0.0.1"));
    EXPECT_EQ(0, loopback("192.0.2.1"));
    EXPECT_EQ(0, loopback("::2"));
}

/* the flags of interface name (0 if there is none) */
static unsigned flags_of(const std::string &name)
{
    struct ifaddrs *ifs;
    unsigned flags = 0;
    if (getifaddrs(&ifs) != 0) {
        return 0;
    }
    for (struct ifaddrs *i = ifs; i != nullptr; i = i->ifa_next) {
        if (name == i->ifa_name) {
            flags = i->ifa_flags;
        }
    }
    freeifaddrs(ifs);
    return flags;
}

TEST(Net, LoopbackDevicesAreListedOnce)
{
    char buf[256];
    int n = ps_loopback_devices(buf, sizeof(buf));
    ASSERT_GT(n, 0) << "no loopback interface";
    std::string list(buf), seen = ",";
    int count = 0;
    for (size_t start = 0; start <= list.size(); count++) {
        size_t end = list.find(',', start);
        end = end == std::string::npos ? list.size() : end;
        std::string name = list.substr(start, end - start);
        EXPECT_NE(0u, flags_of(name) & IFF_LOOPBACK) << name;
        EXPECT_EQ(std::string::npos, seen.find("," + name + ",")) << name << " twice in " << list;
        seen += name + ",";
        start = end + 1;
    }
    EXPECT_EQ(n, count) << list;
}

TEST(Net, LoopbackDevicesThatDoNotFitAreNone)
{
    char buf[2] = "x";
    EXPECT_EQ(0, ps_loopback_devices(buf, sizeof(buf)));
    EXPECT_STREQ("", buf);
    EXPECT_EQ(0, ps_loopback_devices(buf, 0));
}

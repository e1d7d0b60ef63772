/*
 * test_net.cc: ps_addr_is_local (common/ps_net.c).
 */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>

extern "C" {
#include "ps_net.h"
}

/* ps_addr_is_local of a numeric IPv4 or IPv6 address */
static int local(const char *text)
{
    struct addrinfo hints, *ai = nullptr;
    memset(&hints, 0, sizeof(hints));
    hints.ai_flags = AI_NUMERICHOST;
    EXPECT_EQ(getaddrinfo(text, nullptr, &hints, &ai), 0) << text;
    if (ai == nullptr) {
        return -1;
    }
    int here = ps_addr_is_local(ai->ai_addr);
    freeaddrinfo(ai);
    return here;
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

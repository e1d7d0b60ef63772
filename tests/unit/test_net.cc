/*
 * test_net.cc: ps_addr_is_local (common/ps_net.c).
 */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>

extern "C" {
#include "ps_net.h"
}

static int local4(const char *text)
{
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    EXPECT_EQ(inet_pton(AF_INET, text, &sin.sin_addr), 1) << text;
    return ps_addr_is_local((const struct sockaddr *)&sin);
}

static int local6(const char *text)
{
    struct sockaddr_in6 sin6;
    memset(&sin6, 0, sizeof(sin6));
    sin6.sin6_family = AF_INET6;
    EXPECT_EQ(inet_pton(AF_INET6, text, &sin6.sin6_addr), 1) << text;
    return ps_addr_is_local((const struct sockaddr *)&sin6);
}

TEST(Net, LoopbackIsLocal)
{
    EXPECT_TRUE(local4("127.0.0.1"));
    EXPECT_TRUE(local4("127.5.6.7"));
    EXPECT_TRUE(local6("::1"));
}

/* documentation ranges (RFC 5737, RFC 3849): no host has them */
TEST(Net, OtherHostsAreNot)
{
    EXPECT_FALSE(local4("192.0.2.1"));
    EXPECT_FALSE(local4("203.0.113.9"));
    EXPECT_FALSE(local6("2001:db8::1"));
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

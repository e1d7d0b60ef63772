/*
 * ps_net.c: facts about network addresses (see ps_net.h).
 */
#include "ps_net.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>

static int ps_addr_equal(const struct sockaddr *a, const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family) {
        return 0;
    }
    if (a->sa_family == AF_INET) {
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    }
    return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                  &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
}

int ps_addr_is_local(const struct sockaddr *sa)
{
    struct ifaddrs *ifs = NULL;
    int here = 0;

    if (sa->sa_family == AF_INET) {
        if ((ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127) {
            return 1;
        }
    } else if (sa->sa_family == AF_INET6) {
        if (IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr)) {
            return 1;
        }
    } else {
        return 0;
    }
    if (getifaddrs(&ifs) != 0) {
        return 0;
    }
    for (const struct ifaddrs *i = ifs; i != NULL && !here; i = i->ifa_next) {
        here = i->ifa_addr != NULL && ps_addr_equal(i->ifa_addr, sa);
    }
    freeifaddrs(ifs);
    return here;
}

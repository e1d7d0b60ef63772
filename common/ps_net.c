/*
 * ps_net.c: facts about network addresses and this host (see ps_net.h).
 */
#include "ps_net.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int ps_shm_id(ps_shm_id_t *id)
{
    char text[64];
    unsigned v[16];
    struct stat st;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    int ok;

    memset(id, 0, sizeof(*id));
    if (f == NULL) {
        return -1;
    }
    ok = fgets(text, sizeof(text), f) != NULL &&
         sscanf(text, "%2x%2x%2x%2x-%2x%2x-%2x%2x-%2x%2x-%2x%2x%2x%2x%2x%2x", &v[0], &v[1], &v[2],
                &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13],
                &v[14], &v[15]) == 16;
    fclose(f);
    if (!ok || stat("/proc/self/ns/net", &st) != 0) {
        return -1;
    }
    for (int i = 0; i < 16; i++) {
        id->boot_id[i] = (uint8_t)v[i];
    }
    id->netns = (uint64_t)st.st_ino;
    id->uid = (uint32_t)geteuid();
    return 0;
}

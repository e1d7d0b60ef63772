/*
 * ps_net.c: facts about network addresses and this host (see ps_net.h).
 */
#include "ps_net.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
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

int ps_addr_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    }
    return sa->sa_family == AF_INET6 &&
           IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

int ps_addr_is_local(const struct sockaddr *sa)
{
    struct ifaddrs *ifs = NULL;
    int here = 0;

    if (ps_addr_is_loopback(sa)) {
        return 1;
    }
    if ((sa->sa_family != AF_INET && sa->sa_family != AF_INET6) || getifaddrs(&ifs) != 0) {
        return 0;
    }
    for (const struct ifaddrs *i = ifs; i != NULL && !here; i = i->ifa_next) {
        here = i->ifa_addr != NULL && ps_addr_equal(i->ifa_addr, sa);
    }
    freeifaddrs(ifs);
    return here;
}

/* Is name already in the comma-separated list? */
static int ps_list_has(const char *list, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = list; *p != '\0'; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0')) {
            return 1;
        }
    }
    return 0;
}

int ps_loopback_devices(char *buf, size_t len)
{
    struct ifaddrs *ifs = NULL;
    size_t used = 0;
    int count = 0, fits = 1;

    if (len == 0) {
        return 0;
    }
    buf[0] = '\0';
    if (getifaddrs(&ifs) != 0) {
        return 0;
    }
    /* an interface is listed once per address family */
    for (const struct ifaddrs *i = ifs; i != NULL && fits; i = i->ifa_next) {
        if (!(i->ifa_flags & IFF_LOOPBACK) || ps_list_has(buf, i->ifa_name)) {
            continue;
        }
        int n = snprintf(buf + used, len - used, "%s%s", count > 0 ? "," : "", i->ifa_name);
        fits = n >= 0 && (size_t)n < len - used;
        used += fits ? (size_t)n : 0;
        count += fits;
    }
    freeifaddrs(ifs);
    if (!fits) {
        buf[0] = '\0';
        return 0;
    }
    return count;
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

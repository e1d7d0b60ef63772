/*
 * ps_net.h: facts about network addresses and this host.
 */
#ifndef PS_NET_H
#define PS_NET_H

#include "ps_proto.h"

#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Whether sa (AF_INET or AF_INET6) is an address of this host: a loopback
 * address (127.0.0.0/8, ::1) or one of its interfaces' (getifaddrs). 0 for
 * other families and when the interfaces cannot be listed.
 */
int ps_addr_is_local(const struct sockaddr *sa);

/* Whether sa is a loopback address (127.0.0.0/8, ::1). */
int ps_addr_is_loopback(const struct sockaddr *sa);

/*
 * The names of this host's loopback interfaces (IFF_LOOPBACK), comma
 * separated, into buf (len bytes). Returns how many; 0 when there is none,
 * they cannot be listed or they do not fit (buf is then "").
 */
int ps_loopback_devices(char *buf, size_t len);

/*
 * This host, network namespace and user (ps_shm_id_t in ps_proto.h): the
 * kernel's boot id, the inode of /proc/self/ns/net and the effective uid.
 * Two processes with the same id reach each other on the loopback address
 * and may read each other's memory. 0 on success, -1 if the first two
 * cannot be read.
 */
int ps_shm_id(ps_shm_id_t *id);

#ifdef __cplusplus
}
#endif

#endif

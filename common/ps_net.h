/*
 * ps_net.h: facts about network addresses.
 */
#ifndef PS_NET_H
#define PS_NET_H

#include <sys/socket.h>

/*
 * Whether sa (AF_INET or AF_INET6) is an address of this host: a loopback
 * address (127.0.0.0/8, ::1) or one of its interfaces' (getifaddrs). 0 for
 * other families and when the interfaces cannot be listed.
 */
int ps_addr_is_local(const struct sockaddr *sa);

#endif

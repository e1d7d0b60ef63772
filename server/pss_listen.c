/*
 * pss_listen.c: a worker's UCX listener, and the port of worker 0 when the
 * configuration leaves it open (port 0).
 *
 * Clients know a server by worker 0's address; they learn the other
 * workers' ports from it. A server restarted by `pstripe local start` or a
 * test listens on the port its clients already have. If that port had been
 * an ephemeral one (what bind(0) gives), the kernel could meanwhile have
 * handed it to some client's outgoing connection as its local port, and the
 * restart would fail with "address in use". So worker 0 asked for port 0
 * takes a free port above /proc/sys/net/ipv4/ip_local_port_range (below it
 * if nothing is above), which no connect() is ever given. The choice starts
 * at a random port and walks on; a port that another process takes between
 * our probe and our listen is skipped too.
 */
#include "pss_listen.h"

#include "pss_conn.h"

#include "ps_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define PSS_PORT_MIN      1024 /* below: privileged */
#define PSS_PORT_ATTEMPTS 256

static void pss_set_port(struct sockaddr_storage *ss, uint16_t port)
{
    if (ss->ss_family == AF_INET) {
        ((struct sockaddr_in *)ss)->sin_port = htons(port);
    } else {
        ((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
    }
}

static uint16_t pss_get_port(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        return ntohs(((const struct sockaddr_in *)ss)->sin_port);
    }
    return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

/* The ports no connect() is given: [*lo, *hi], or 0 if there are none. */
static int pss_unassigned_ports(unsigned *lo, unsigned *hi)
{
    unsigned elo = 32768, ehi = 60999; /* Linux's default */
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");

    if (f != NULL) {
        if (fscanf(f, "%u %u", &elo, &ehi) != 2 || elo > ehi) {
            elo = 32768;
            ehi = 60999;
        }
        fclose(f);
    }
    if (ehi < 65535) {
        *lo = ehi + 1 > PSS_PORT_MIN ? ehi + 1 : PSS_PORT_MIN;
        *hi = 65535;
        return 1;
    }
    if (elo > PSS_PORT_MIN) {
        *lo = PSS_PORT_MIN;
        *hi = elo - 1;
        return 1;
    }
    return 0;
}

/* Whether a TCP socket could listen on ss now (with SO_REUSEADDR, as UCX's
 * listener: a port whose old connections sit in TIME_WAIT is free). */
static int pss_port_free(const struct sockaddr_storage *ss, socklen_t len)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1, ok;

    if (fd < 0) {
        return 1; /* cannot tell: let the listener try */
    }
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    ok = bind(fd, (const struct sockaddr *)ss, len) == 0 && listen(fd, 1) == 0;
    close(fd);
    return ok;
}

/* A listener on ss whose connection requests go to cb (with w): *out. */
static ps_status_t pss_listener_make(pss_worker_t *w, const struct sockaddr_storage *ss,
                                     socklen_t len, ucp_listener_conn_callback_t cb,
                                     ucp_listener_h *out, int quiet_busy)
{
    ucp_listener_params_t params;
    ucs_status_t ucs_status;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
    params.sockaddr.addr = (const struct sockaddr *)ss;
    params.sockaddr.addrlen = len;
    params.conn_handler.cb = cb;
    params.conn_handler.arg = w;
    ucs_status = ucp_listener_create(w->ucp_worker, &params, out);
    if (ucs_status == UCS_ERR_BUSY && quiet_busy) {
        return PS_ERR_BUSY;
    }
    if (ucs_status != UCS_OK) {
        char host[INET6_ADDRSTRLEN] = "?";
        inet_ntop(ss->ss_family,
                  ss->ss_family == AF_INET
                      ? (const void *)&((const struct sockaddr_in *)ss)->sin_addr
                      : (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr,
                  host, sizeof(host));
        ps_error("worker %u: listen on %s:%u: %s", w->index, host, pss_get_port(ss),
                 ucs_status_string(ucs_status));
        return ucs_status == UCS_ERR_BUSY ? PS_ERR_BUSY : PS_ERR_CONN;
    }
    return PS_OK;
}

static ps_status_t pss_listen_on(pss_worker_t *w, const struct sockaddr_storage *ss, socklen_t len,
                                 int quiet_busy)
{
    return pss_listener_make(w, ss, len, pss_conn_accept_cb, &w->listener, quiet_busy);
}

/* With shm: w's second listener, on the loopback address (so that only
 * clients of this host reach it) and a port the kernel chooses, whose
 * connections may use shared memory (pss_conn_accept_shm_cb). Sets
 * s->shm_ports[w->index]. */
static ps_status_t pss_listen_shm(pss_worker_t *w)
{
    struct sockaddr_storage ss;
    struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
    ucp_listener_attr_t attr = {.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR};
    ps_status_t status;

    memset(&ss, 0, sizeof(ss));
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    status = pss_listener_make(w, &ss, sizeof(*sin), pss_conn_accept_shm_cb, &w->shm_listener, 0);
    if (status != PS_OK) {
        return status;
    }
    if (ucp_listener_query(w->shm_listener, &attr) != UCS_OK) {
        ps_error("worker %u: ucp_listener_query (shm listener) failed", w->index);
        return PS_ERR_CONN;
    }
    w->server->shm_ports[w->index] = pss_get_port(&attr.sockaddr);
    ps_info("worker %u: shared-memory connections on 127.0.0.1:%u", w->index,
            w->server->shm_ports[w->index]);
    return PS_OK;
}

/* Worker 0 asked for any port: a free one outside the ephemeral range. */
static ps_status_t pss_listen_any_port(pss_worker_t *w, struct sockaddr_storage *ss, socklen_t len)
{
    unsigned lo, hi, start = 0;

    if (!pss_unassigned_ports(&lo, &hi)) {
        return pss_listen_on(w, ss, len, 0); /* the kernel's choice */
    }
    if (getrandom(&start, sizeof(start), 0) != (ssize_t)sizeof(start)) {
        start = (unsigned)getpid();
    }
    for (unsigned i = 0; i < PSS_PORT_ATTEMPTS && i <= hi - lo; i++) {
        pss_set_port(ss, (uint16_t)(lo + (start + i) % (hi - lo + 1)));
        if (!pss_port_free(ss, len)) {
            continue;
        }
        ps_status_t status = pss_listen_on(w, ss, len, 1);
        if (status != PS_ERR_BUSY) {
            return status;
        }
    }
    ps_warn("worker 0: no free port in %u-%u after %d tries; taking an ephemeral one (a restart "
            "on it may find it taken)",
            lo, hi, PSS_PORT_ATTEMPTS);
    pss_set_port(ss, 0);
    return pss_listen_on(w, ss, len, 0);
}

ps_status_t pss_listen(pss_worker_t *w)
{
    pss_server_t *s = w->server;
    struct sockaddr_storage ss;
    socklen_t len;
    ucp_listener_attr_t attr;
    ucs_status_t ucs_status;
    struct addrinfo hints, *ai = NULL;
    uint16_t port = w->index == 0 ? s->listen_port : 0;
    char port_str[16];
    int gai_status;
    ps_status_t status;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(port_str, sizeof(port_str), "%u", port);
    gai_status = getaddrinfo(s->listen_host[0] ? s->listen_host : NULL, port_str, &hints, &ai);
    if (gai_status != 0) {
        ps_error("listen address '%s': %s", s->listen_host, gai_strerror(gai_status));
        return PS_ERR_INVALID;
    }
    memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
    len = ai->ai_addrlen;
    freeaddrinfo(ai);

    if (w->index == 0 && port == 0) {
        status = pss_listen_any_port(w, &ss, len);
    } else {
        status = pss_listen_on(w, &ss, len, 0);
    }
    if (status != PS_OK) {
        return status;
    }
    attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
    ucs_status = ucp_listener_query(w->listener, &attr);
    if (ucs_status != UCS_OK) {
        ps_error("worker %u: ucp_listener_query: %s", w->index, ucs_status_string(ucs_status));
        return PS_ERR_CONN;
    }
    s->ports[w->index] = pss_get_port(&attr.sockaddr);
    ps_info("worker %u: listening on %s:%u (core %d)", w->index, s->listen_host, s->ports[w->index],
            w->cpu);
    return s->cfg.shm ? pss_listen_shm(w) : PS_OK;
}

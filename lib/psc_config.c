/*
 * psc_config.c: the client's tunables ([client] section, PSTRIPE_<NAME>).
 *
 * buffer_size, buffer_count, max_regions and bounce_threshold set how list
 * I/O is cut into batches and pipelined; each file holds its own copy
 * (set per file through the API), starting from the connection's. Their defaults
 * come from the sweep recorded in the commit that set them.
 *
 * The UCX settings of the client's UCP context are separate: PSTRIPE_UCX_<NAME>
 * (psc_ucx_config_read). In an MPI program the MPI library (MPICH ch4:ucx)
 * holds a UCP context of its own in the same process, and the user's UCX_*
 * settings are meant for it.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "ps_config.h"
#include "ps_layout.h"
#include "ps_proto.h"
#include "ps_status.h"
#include "psc_config.h"
#include "psc_error.h"
#include "pstripe.h"

#define PSC_FIELD(_name, _dfl, _doc, _type, _member, _min, _max)                                   \
    {                                                                                              \
        _name, _dfl, _doc, _type, offsetof(psc_config_t, _member), _min, _max                      \
    }

/* The per-file fields come last (PSC_NCONN_FIELDS before them), so that
 * the table's tail is the per-file table; their offsets are those of
 * psc_io_opts_t, the first member of psc_config_t. */
#define PSC_NCONN_FIELDS 11

const ps_config_field_t psc_config_table[] = {
    PSC_FIELD("servers", "", "servers of the cluster, host:port,host:port,... (layout order)",
              PS_CFG_STRING, servers, 1, 0),
    PSC_FIELD("stripe_size", "1m", "default stripe size of new files", PS_CFG_SIZE, stripe_size,
              (double)PS_STRIPE_SIZE_MIN, (double)PS_STRIPE_SIZE_MAX),
    PSC_FIELD("stripe_count", "0", "default number of servers a new file is striped over (0: all)",
              PS_CFG_INT, stripe_count, 0, PS_STRIPE_COUNT_MAX),
    PSC_FIELD("timeout", "30s", "a server that does not answer a request within this fails it",
              PS_CFG_TIME, timeout, 0.001, 86400.0),
    PSC_FIELD("connect_timeout", "10s", "longest time to connect to a server (at most timeout)",
              PS_CFG_TIME, connect_timeout, 0.001, 86400.0),
    PSC_FIELD("log_level", "warn", "error, warn, info, debug or trace", PS_CFG_LOGLEVEL, log_level,
              1, 0),
    PSC_FIELD("auth", "",
              "how to prove who this client is: munge, key or none; empty: as the server asks "
              "(a client set to none is refused by servers that require auth)",
              PS_CFG_STRING, auth, 0, 0),
    PSC_FIELD("auth_key_file", "",
              "auth = key: file holding the cluster key, readable by its owner alone",
              PS_CFG_STRING, auth_key_file, 0, 0),
    PSC_FIELD("munge_socket", "", "auth = munge: munged's socket (empty: MUNGE's default)",
              PS_CFG_STRING, munge_socket, 0, 0),
    PSC_FIELD("spin", "50us",
              "a blocked call (or the progress thread, while requests are out) keeps "
              "progressing this long, yielding the CPU each turn, before it sleeps: a wake-up "
              "from sleep costs about 20 us on a VM, while spinning longer, through a server's "
              "disk I/O, delays the disk's completion on a small machine; 0: sleep at once",
              PS_CFG_TIME, spin, 0, 0.01),
    PSC_FIELD("shm", "yes",
              "connect to a server of this host by shared memory where the server offers it "
              "(its shm setting): large reads about 1.5 times as fast as over TCP loopback",
              PS_CFG_BOOL, shm, 0, 0),
    /* Per-file from here on. Defaults by measurement (run-matrix buffers
     * scenario, 16 MiB transfers, 2 servers, two passes; and 4 MiB transfers
     * alternated 3 times): 1m x 4 wrote 800-850 MiB/s with 1 process where
     * 4m x 4 wrote 570-660. */
    PSC_FIELD("buffer_size", "1m", "largest payload of one batch (per server request)", PS_CFG_SIZE,
              io.buffer_size, 4096, (double)PS_MAX_PAYLOAD),
    PSC_FIELD("buffer_count", "4", "batches in flight per server and operation", PS_CFG_INT,
              io.buffer_count, 1, 256),
    PSC_FIELD("max_regions", "65536", "largest number of regions in one batch", PS_CFG_INT,
              io.max_regions, 1, PS_MAX_REGIONS),
    PSC_FIELD("bounce_threshold", "8k",
              "write batches and scattered rendezvous read replies this big are staged in one "
              "contiguous buffer (UCX 1.13 moves IOV rendezvous data in 8 KiB copies); 0: never",
              PS_CFG_SIZE, io.bounce_threshold, 0, (double)PS_MAX_PAYLOAD),
    {NULL, NULL, NULL, 0, 0, 0, 0}};

const ps_config_field_t *const psc_io_config_table = &psc_config_table[PSC_NCONN_FIELDS];

_Static_assert(offsetof(psc_config_t, io) == 0, "psc_io_config_table's offsets need io first");

/* Whether PSC_NCONN_FIELDS splits the table where the per-file fields
 * begin: every field before it lies past io, every one from it inside.
 * (A connection field added without raising the count made "shm" per-file,
 * written at its connection offset into a file's smaller options.) */
static int psc_config_table_split_ok(void)
{
    for (int i = 0; psc_config_table[i].name != NULL; i++) {
        int per_file = psc_config_table[i].offset < sizeof(psc_io_opts_t);
        if (per_file != (i >= PSC_NCONN_FIELDS)) {
            return 0;
        }
    }
    return 1;
}

ps_status_t psc_config_load(psc_config_t *cfg, const char *path, int required, int *file_found)
{
    char err[PSC_MSG_MAX];
    ps_status_t status;

    memset(cfg, 0, sizeof(*cfg));
    err[0] = '\0';
    *file_found = 0;
    if (!psc_config_table_split_ok()) {
        return psc_error(PS_ERR_INVALID,
                         "the client's config table: PSC_NCONN_FIELDS (%d) is not "
                         "where its per-file fields begin",
                         PSC_NCONN_FIELDS);
    }
    status = ps_config_set_defaults(psc_config_table, cfg);
    if (status != PS_OK) {
        return psc_error(status, "cannot set client config defaults");
    }

    if (path != NULL) {
        status = ps_config_load_file(psc_config_table, cfg, path, "client", err, sizeof(err));
        if (status == PS_OK) {
            *file_found = 1;
        } else if (status == PS_ERR_NO_ENTRY) {
            if (required) {
                status = psc_error(PS_ERR_NOT_CONFIGURED, "config file %s not found", path);
                goto err_release;
            }
        } else {
            status = psc_error(status, "config file %s: %s", path, err);
            goto err_release;
        }
    }

    status = ps_config_load_env(psc_config_table, cfg, err, sizeof(err));
    if (status != PS_OK) {
        status = psc_error(status, "environment: %s", err);
        goto err_release;
    }
    return PS_OK;

err_release:
    ps_config_release(psc_config_table, cfg);
    return status;
}

/* The settings that choose transports and devices. UCX reads UCX_<NAME> under
 * any prefix (checked with UCX 1.13: with the prefix "PSTRIPE", UCX_TLS=self,sm
 * gives the context TLS=self,sm, and PSTRIPE_UCX_TLS overrides it), so a
 * UCX_TLS meant for MPI would leave the client unable to reach the servers.
 * Unless PSTRIPE_UCX_<NAME> is set, each is put back to its value here: UCX's
 * default, "all", but for the transports: not self, and not shared memory
 * but, with shm (a server of this host may offer it), cma: an endpoint with
 * peer error handling (psc_conn.c) never uses shared memory in UCX 1.13,
 * and making its interfaces cost a process's first open 4-7 ms of its
 * 14-20 (pstripe run of an open/close loop, 3 alternations: 19.9 16.5 13.8
 * -> 12.1 12.4 10.1); like the servers, no shared-memory FIFOs (mm: posix,
 * sysv, xpmem; pss_main.c),
 * and cma alone moved large reads as fast as with them (2 processes, 4 MiB
 * calls, 2 alternations: 1,643-1,804 MiB/s against 1,823-2,175).
 *
 * The TCP segment sizes too, at UCX's defaults: a peer that sends a
 * segment larger than the receiver's TCP_RX_SEG_SIZE makes the receiver
 * abort (UCX 1.13, tcp_ep.c's assertion on the segment's length), so a
 * UCX_TCP_TX_SEG_SIZE=256k meant for MPI (with RX_SEG_SIZE alike, as UCX
 * requires within a process) killed a server with default settings on the
 * first 256 KiB write batch. They have no PSTRIPE_UCX_ form: UCX does not
 * read a transport's settings under the prefix (and warns that such a
 * variable is unused), and ucp_config_modify takes them (without the
 * transport's "TCP_") unchecked.
 *
 * The network devices are those that reach the servers: the loopback
 * ones when every server's address is a loopback address
 * (psc_net_devices), else all. UCX queries each device's speed and default route (an ioctl
 * and a read of /proc/net/route each time) for every endpoint and lane it
 * sets up, and adds a lane over every device: with eth0 beside lo, a
 * process's first MPI_File_open with 2 processes took 31.5 ms at the
 * median (25.5-41.6), with lo alone 23.3 (20.9-31.4) (local cluster of 2
 * servers, 10 alternations).
 *
 * And no UCP registration cache (RCACHE_ENABLE, UCX's default "try"; our
 * transports need no registration, and nothing here maps memory): making
 * it installs a memory-event handler, and UCX 1.13 tests its hooks then
 * with a brk(NULL) that stores the break it read in glibc's __curbrk after
 * the syscall. The client makes its context in a thread of its own beside
 * the program's (MPI_Init's, at load): a malloc of the main thread that
 * moved the break in between got its heap cut back by the next one
 * ("break adjusted to free malloc space", then SIGSEGV: a CI run at
 * 74f0b26). A program of two threads, one making contexts, one growing and
 * shrinking the heap, fails 4 runs of 10 with the cache, 0 of 10 (five
 * times as many contexts) without (session 63). */
static const struct {
    const char *name, *value;
    int own_var; /* PSTRIPE_UCX_<name> sets it (UCX reads it itself) */
} psc_ucx_own_keys[] = {{"TLS", "^sm,self", 1},     {"NET_DEVICES", "all", 1},
                        {"SHM_DEVICES", "all", 1},  {"ACC_DEVICES", "all", 1},
                        {"SELF_DEVICES", "all", 1}, {"TX_SEG_SIZE", "8k", 0},
                        {"RX_SEG_SIZE", "64k", 0},  {"RCACHE_ENABLE", "n", 1}};

ps_status_t psc_ucx_config_read(struct ucp_config **config_p, int shm, const char *net_devices,
                                char *msg, size_t msglen)
{
    ucp_config_t *config;
    ucs_status_t status;

    status = ucp_config_read("PSTRIPE", NULL, &config);
    if (status != UCS_OK) {
        snprintf(msg, msglen, "ucp_config_read(PSTRIPE_UCX_*): %s", ucs_status_string(status));
        return PS_ERR_CONN;
    }
    for (size_t i = 0; i < sizeof(psc_ucx_own_keys) / sizeof(psc_ucx_own_keys[0]); i++) {
        char var[64];

        if (psc_ucx_own_keys[i].own_var) {
            snprintf(var, sizeof(var), "PSTRIPE_UCX_%s", psc_ucx_own_keys[i].name);
            if (getenv(var) != NULL) {
                continue;
            }
        }
        const char *value = psc_ucx_own_keys[i].value;
        if (i == 0 && shm) {
            value = "^mm,self";
        } else if (i == 1 && net_devices != NULL) {
            value = net_devices;
        }
        status = ucp_config_modify(config, psc_ucx_own_keys[i].name, value);
        if (status != UCS_OK) {
            snprintf(msg, msglen, "ucp_config_modify(%s=%s): %s", psc_ucx_own_keys[i].name, value,
                     ucs_status_string(status));
            ucp_config_release(config);
            return PS_ERR_CONN;
        }
    }
    *config_p = config;
    return PS_OK;
}

ps_status_t pstripe_check_option(const char *name, const char *value)
{
    char err[PSC_MSG_MAX];
    psc_config_t cfg;
    ps_status_t status;

    if (name == NULL || value == NULL) {
        return psc_error(PS_ERR_INVALID, "option name or value is NULL");
    }
    memset(&cfg, 0, sizeof(cfg));
    status = ps_config_set_defaults(psc_config_table, &cfg);
    if (status == PS_OK) {
        status = ps_config_set(psc_config_table, &cfg, name, value, err, sizeof(err));
        if (status != PS_OK) {
            psc_error(status, "%s", err);
        }
    }
    ps_config_release(psc_config_table, &cfg);
    return status;
}

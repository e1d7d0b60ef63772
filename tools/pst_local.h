/*
 * pst_local.h: what the two halves of `pstripe local` share.
 *
 * pst_local.c holds the commands (start, stop, status: options, the cluster
 * directory, pid files and client.conf); pst_local_proc.c holds the daemon
 * processes (spawning with a ready pipe, waiting for their addresses,
 * checking that a pid is still our daemon, waiting for exits on pidfds,
 * stopping). See the top of pst_local.c for the layout of DIR.
 */
#ifndef PST_LOCAL_H
#define PST_LOCAL_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "pst_tool.h"

#define PST_LOCAL_NSERVERS_MAX     256
#define PST_LOCAL_STOP_TIMEOUT_DFL 30.0 /* seconds */
#define PST_LOCAL_ADDR_MAX         128

/* Options of one `local` subcommand. */
typedef struct pst_local_opts {
    const char *dir_arg;
    char dir[PATH_MAX]; /* absolute */
    int nservers;       /* 0: not given */
    const char *workers;
    const char **settings; /* server --set values */
    int nsettings;
    double timeout; /* seconds */
    const char *auth; /* start: munge, key or none; NULL: key */
    int cluster_size; /* start: servers of the cluster (each is told its index) */
} pst_local_opts_t;

/* A local cluster's authentication (pst_local_auth.c). */
typedef struct pst_local_auth {
    char path[PATH_MAX + 16];     /* the key file or munged's socket */
    char set_mode[32];            /* server setting "auth=MODE" */
    char set_path[PATH_MAX + 32]; /* server setting naming path ("" for none) */
    char set_key[PATH_MAX + 32];  /* munge: server setting naming the capability key ("") */
    char conf[PATH_MAX + 64];     /* client.conf lines */
} pst_local_auth_t;

/* Make the cluster's key or start its munged (as o->auth says) and fill a
 * with what servers and clients must be told; reports a failure. */
ps_status_t pst_local_auth_start(pst_ctx_t *ctx, const pst_local_opts_t *o, pst_local_auth_t *a);

/* Stop the cluster's munged, if it runs. */
void pst_local_auth_stop(const char *dir);

/* One daemon of the cluster being started. A start on a cluster where some
 * daemons still run starts only the others (running = 1 for those), each on
 * the address client.conf lists for it (listen). */
typedef struct pst_server {
    int running;        /* already running: not started, never stopped here */
    const char *listen; /* address to listen on; NULL: 127.0.0.1:0 (any port) */
    pid_t pid;
    int ready_fd; /* read end of the --ready-fd pipe, -1 when done */
    size_t addr_len;
    char addr[PST_LOCAL_ADDR_MAX];
    int ready;           /* address received */
    const char *failure; /* why it did not start */
} pst_server_t;

/* Says whether pids[i] == pid still runs (pst_wait_exit). */
typedef int (*pst_alive_fn_t)(pid_t pid, int i, void *arg);

/* DIR/server<i><suffix>. DIR's length is checked once when the options are
 * parsed, so that these always fit. */
void pst_local_path(char *buf, size_t len, const char *dir, int i, const char *suffix);

/* Pid of server i from its pid file; 0 if there is none or it is unreadable. */
pid_t pst_local_read_pid(const char *dir, int i);

/* Pid of the running daemon of server i, 0 if it does not run. */
pid_t pst_local_running(const char *dir, int i);

/* If the daemon of server i (its pid file's) is still exiting, wait for it
 * (at most 10 s): a daemon killed a moment ago holds its data directory's
 * lock until it has exited. */
void pst_local_wait_exiting(const char *dir, int i);

/* pst_alive_fn_t for the daemons of cluster directory arg (a const char *):
 * pid is still the daemon of DIR/server<i>. */
int pst_daemon_alive(pid_t pid, int i, void *arg);

/*
 * Wait until none of pids[0..n) runs any more, at most timeout seconds.
 * Entries that stopped are set to 0. Returns how many still run.
 */
int pst_wait_exit(pid_t *pids, int n, double timeout, pst_alive_fn_t alive, void *arg);

/* The pstripe-server binary to start. */
const char *pst_local_server_binary(char *buf, size_t len);

/*
 * Fork and exec the n daemons of o->dir, each with a ready pipe (srv[i]
 * zeroed by the caller). Stops at the first failure, reported; the daemons
 * already forked are in srv[] either way, for the caller to wait on or stop.
 */
ps_status_t pst_local_spawn(pst_ctx_t *ctx, const pst_local_opts_t *o, const char *binary,
                            pst_server_t *srv, int n);

/* Wait for every daemon's address on its ready pipe, until the timeout. */
void pst_local_wait_ready(pst_server_t *srv, int n, double timeout);

/* Report each forked daemon of srv[] that did not send its address (why,
 * and the end of its log). Returns PS_OK if all did. */
ps_status_t pst_local_report_unready(pst_ctx_t *ctx, const pst_local_opts_t *o, pst_server_t *srv,
                                     int n);

/* Stop the daemons this start launched (after a failure) and reap them. */
void pst_local_abort(pst_ctx_t *ctx, pst_server_t *srv, int n);

#endif

/*
 * psc_progress.h: starting and stopping a connection's progress thread, and
 * the turn of progress that the worker's owner runs (see psc_progress.c).
 */
#ifndef PSC_PROGRESS_H
#define PSC_PROGRESS_H

#include "psc_internal.h"

/* Start the thread (UCX context and worker); sets the thread's message on
 * failure. */
ps_status_t psc_progress_start(pstripe_fs_t *fs);
/* Close every connection (bounded wait) and stop the thread. */
void psc_progress_stop(pstripe_fs_t *fs);
/* The network devices that reach fs's servers, for psc_ucx_config_read:
 * the host's loopback devices (written to buf) when every server's address
 * is a loopback address, else NULL (all devices; psc_config.c says why). */
const char *psc_net_devices(const pstripe_fs_t *fs, char *buf, size_t len);

/* --- whoever owns the worker (fs->owner) --- */

/* One turn: posted commands, UCX progress, failed connections, deadlines,
 * completions of ready ops. Returns how much happened (0: nothing). */
int psc_progress_turn(pstripe_fs_t *fs);
/* How long the owner may sleep on the worker's event fd (ms, -1: until an
 * event): the nearest deadline, or a cleanup or trim timer. */
int psc_progress_timeout_ms(pstripe_fs_t *fs);
/* Put the worker's event fd back in the progress thread's epoll set if it
 * is out (the owner, with fs->lock held by a caller). 0 if epoll_ctl
 * refused (no memory, or the user's epoll watches used up): the thread
 * then sleeps at most PSC_UNWATCHED_POLL_MS while ops are out and tries
 * again at each sleep, so that no reply waits for a request's deadline. */
int psc_watch_worker_fd(pstripe_fs_t *fs);
#define PSC_UNWATCHED_POLL_MS 1
/* 1 if something besides the posted queue needs the progress thread once a
 * caller gives the worker back: ops in flight or waiting for a connection,
 * completions or failures not yet handled, connections being closed, cached
 * staging buffers due for release before the sleeping thread would wake,
 * a disconnect. */
int psc_progress_busy(pstripe_fs_t *fs);

#endif

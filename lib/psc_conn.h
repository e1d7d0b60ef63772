/*
 * psc_conn.h: connections to servers and the ops sent on them (see
 * psc_conn.c).
 */
#ifndef PSC_CONN_H
#define PSC_CONN_H

#include <ucp/api/ucp.h>

#include "psc_internal.h"

/* API thread: post an op that completes into call; the caller waits for the
 * call next (psc_call_wait), which sends it. */
void psc_op_post(pstripe_fs_t *fs, psc_op_t *op, psc_call_t *call);

/* --- progress thread only --- */

/* Start an op: connect its server first if needed. It always completes
 * through its done_cb or call, never synchronously. */
void psc_op_submit(pstripe_fs_t *fs, psc_op_t *op);
/* From UCX callbacks: the connection failed with this UCX status; recorded
 * in conn->fail_status/fail_msg and handled by the main loop. */
void psc_conn_lost(pstripe_fs_t *fs, psc_conn_t *conn, ucs_status_t status);
/* Declare a connection dead: every op on it fails with status and msg. */
void psc_conn_fail(pstripe_fs_t *fs, psc_conn_t *conn, ps_status_t status, const char *msg);
/* Close a server's connection at disconnect. */
void psc_server_disconnect(pstripe_fs_t *fs, psc_server_t *srv);
/* Free failed connections that UCX and their ops have let go of. */
void psc_conn_free_dead(pstripe_fs_t *fs);
/* At a stop whose deadline passed: give UCX the close requests still
 * outstanding, so that destroying the worker may complete and free them. */
void psc_conn_release_closing(pstripe_fs_t *fs);
/* Free every dead connection, closed or not (the worker is destroyed). */
void psc_conn_free_all_dead(pstripe_fs_t *fs);

#endif

/*
 * psc_op.h: one request message and its reply (psc_op_t): preparing it,
 * recording its error, the req_id slot table that matches replies to ops,
 * and the end of its life on the progress thread (ready, finished).
 */
#ifndef PSC_OP_H
#define PSC_OP_H

#include "psc_internal.h"

/* Prepare an op: type, body (copied into the AM header, at most 128 bytes),
 * destination; every other field is reset. */
void psc_op_init(psc_op_t *op, uint32_t server, uint16_t type, const void *body, uint32_t body_len);
/* Prepare an object request (ps_obj_req_t) to a file's object on server,
 * routed to the object's worker, carrying cap (NULL: none, for OBJ_STAT). */
void psc_op_init_obj(psc_op_t *op, uint32_t server, uint16_t type, uint64_t file_id, uint64_t size,
                     const ps_cap_t *cap);
/* Record an error on an op (first one wins). */
void psc_op_error(psc_op_t *op, ps_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* --- progress thread only --- */

/* Give the op a req_id and register it for its reply. */
ps_status_t psc_slot_insert(pstripe_fs_t *fs, psc_op_t *op);
/* The op waiting for req_id, or NULL (late, duplicated, forged). */
psc_op_t *psc_slot_find(pstripe_fs_t *fs, uint64_t req_id);
/* No reply is expected any more (no-op when not registered). */
void psc_slot_remove(pstripe_fs_t *fs, psc_op_t *op);

/* Move the op to fs->readyq, its completion to run from the main loop. */
void psc_op_make_ready(pstripe_fs_t *fs, psc_op_t *op);
/* ...once its send, its reply and any data receive are all done. */
void psc_op_check_ready(pstripe_fs_t *fs, psc_op_t *op);
/* Fail an op that never reached the wire. */
void psc_op_fail_now(pstripe_fs_t *fs, psc_op_t *op, ps_status_t status, const char *msg);
/* Complete a ready op: its done_cb, or its call. */
void psc_op_finish(pstripe_fs_t *fs, psc_op_t *op);
/* A UCX request of the op completed (send_req or recv_req already NULL).
 * Returns 1 if the op had completed early (detached): nothing more to do,
 * and the op was freed (release_cb) if that was its last UCX request. */
int psc_op_detached(psc_op_t *op);

/* How op would be sent on conn now (NULL: not connected yet):
 * UCP_AM_SEND_FLAG_EAGER, UCP_AM_SEND_FLAG_RNDV, or 0 (UCX chooses); eager
 * write data counts against the connection's credit (psc_op.c). */
uint32_t psc_op_send_protocol(const psc_conn_t *conn, const psc_op_t *op);
/* The same, for op's send now: its eager write data is charged to conn's
 * credit (and returned by psc_op_make_ready). */
uint32_t psc_op_send_charged(psc_conn_t *conn, psc_op_t *op);

/* The worker of a server with nworkers that the op's route names. */
uint32_t psc_route_worker(const psc_op_t *op, uint32_t nworkers);

/* Make the main loop wake up by this deadline (ns). */
void psc_update_deadline(pstripe_fs_t *fs, uint64_t deadline);

#endif

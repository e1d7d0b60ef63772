/*
 * psc_call.h: a group of ops an API thread posted (psc_call_t), and how it
 * hands work to the worker's owner (psc_post). Waiting is in psc_wait.h.
 */
#ifndef PSC_CALL_H
#define PSC_CALL_H

#include "psc_internal.h"

void psc_call_init(psc_call_t *call);
/* Progress thread: one op (or io request) of the call is done with this
 * status; the first error wins. */
void psc_call_complete(pstripe_fs_t *fs, psc_call_t *call, ps_status_t status, const char *msg);
/* Queue a command for the worker's owner and wake it. With call non-NULL
 * (an op posted into it), count one more op on the call as well. */
void psc_post(pstripe_fs_t *fs, psc_cmd_t *cmd, psc_call_t *call);
/* The same for a caller that waits for the command right after
 * (psc_call_wait, psc_call_wait_done): the progress thread is not woken, the
 * waiter runs the queue itself (or wakes whoever has the worker then). */
void psc_post_then_wait(pstripe_fs_t *fs, psc_cmd_t *cmd, psc_call_t *call);

#endif

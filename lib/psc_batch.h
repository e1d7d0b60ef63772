/*
 * psc_batch.h: the progress thread's side of list I/O (psc_batch.c): cut a
 * posted request into batches per server and keep buffer_count of them in
 * flight.
 */
#ifndef PSC_BATCH_H
#define PSC_BATCH_H

#include "psc_request.h"

/* Progress thread: start moving a posted request (its start command). */
void psc_io_start_cmd(pstripe_fs_t *fs, psc_cmd_t *cmd);

#endif

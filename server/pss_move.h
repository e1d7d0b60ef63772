/*
 * pss_move.h: MOVE, a rename between two metadata servers (pss_move.c).
 */
#ifndef PSS_MOVE_H
#define PSS_MOVE_H

#include "pss_metadb.h"

/* Answer a MOVE request. */
void pss_move_handle(pss_worker_t *w, pss_req_t *req);

/*
 * For `pstripe gc` (META_LIVE): the LEAVEs admitted since the server
 * started (counted after their commit), and, in txn, the names marked as
 * leaving and the moves held as arrived. Read the count before txn begins:
 * a LEAVE the transaction does not see then shows in a later count
 * (lib/psc_gc.c).
 */
uint64_t pss_move_leaves(pss_server_t *s);
ps_status_t pss_move_marks(pss_server_t *s, MDB_txn *txn, uint32_t *marks, uint32_t *arrivals);

#endif

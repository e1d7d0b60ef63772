/*
 * pss_move.h: MOVE, a rename between two metadata servers (pss_move.c).
 */
#ifndef PSS_MOVE_H
#define PSS_MOVE_H

#include "pss_metadb.h"

/* Answer a MOVE request. */
void pss_move_handle(pss_worker_t *w, pss_req_t *req);

/* For `pstripe gc` (META_LIVE), in txn: the names marked as leaving, the
 * moves held as arrived, the number of the last departure (a name here
 * that a DONE took away; numbered from 1, 0 if none) and the highest
 * number no longer kept (departures are kept an hour). */
typedef struct pss_move_counts {
    uint32_t marks, arrivals;
    uint64_t departed, forgotten;
} pss_move_counts_t;
ps_status_t pss_move_counts(pss_server_t *s, MDB_txn *txn, pss_move_counts_t *c);

/* In txn, fn(file_id, arg) for each departure kept whose number is
 * greater than after. */
ps_status_t pss_move_departures(pss_server_t *s, MDB_txn *txn, uint64_t after,
                                void (*fn)(uint64_t file_id, void *arg), void *arg);

#endif

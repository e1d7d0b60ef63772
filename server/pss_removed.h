/*
 * pss_removed.h: records of removed files' ids, so that a client that had
 * the file open gets PS_ERR_STALE instead of recreating its objects (see
 * pss_removed.c).
 */
#ifndef PSS_REMOVED_H
#define PSS_REMOVED_H

#include "pss.h"

/* Create and open DIR/removed, prune the records past cap_life. */
ps_status_t pss_removed_init(pss_server_t *s);
void pss_removed_close(pss_server_t *s);

/* Record that file_id's objects were removed (now). */
ps_status_t pss_removed_mark(pss_server_t *s, uint64_t file_id);

/* PS_ERR_STALE if file_id was removed less than cap_life (and a slack for
 * clock skew, pss_removed.c) ago, else PS_OK (or the error of reading the
 * record). */
ps_status_t pss_removed_check(pss_server_t *s, uint64_t file_id);

/* Delete the records past that age (main thread). */
void pss_removed_prune(pss_server_t *s);

/* Seconds between prunes: cap_life / 2, within [1, 600]. */
unsigned pss_removed_prune_interval(const pss_server_t *s);

#endif

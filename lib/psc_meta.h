/*
 * psc_meta.h: what psc_list.c and psc_sync.c use of psc_meta.c.
 */
#ifndef PSC_META_H
#define PSC_META_H

#include "psc_internal.h"

/* Check a file's layout as received from server against this cluster. */
ps_status_t psc_check_info(pstripe_fs_t *fs, const ps_file_info_t *info, uint32_t server);

/* 1 if status means a server could not be reached (connection, timeout,
 * shutting down). */
int psc_unreachable(ps_status_t status);

/* Stats of n files from their objects (one parallel round of OBJ_STAT).
 * down == NULL: any failure fails; else objects on servers that could not
 * be reached are counted in st[i].unreachable and down[server] is set. */
ps_status_t psc_stat_objects(pstripe_fs_t *fs, const ps_file_info_t *info, size_t n,
                             pstripe_stat_t *st, uint8_t *down);

/* The capability of an open file for a data request, renewed when past
 * half its life (API threads only: it may wait for a LOOKUP). */
void psc_file_cap(pstripe_file_t *file, ps_cap_t *cap);

/* Free a handle without asking the servers anything (pstripe_close asks). */
void psc_file_free(pstripe_file_t *file);

#endif

/*
 * psc_move.h: renames between two metadata servers (psc_move.c).
 */
#ifndef PSC_MOVE_H
#define PSC_MOVE_H

#include "psc_internal.h"

/* Rename names (FROM, flen bytes, then TO, tlen) whose metadata servers
 * differ, as one step that no crash leaves half done. rep gets the file
 * the new name replaced, if any (has_replaced, replaced, replaced_cap):
 * the caller removes its objects. */
ps_status_t psc_move(pstripe_fs_t *fs, const char *names, size_t flen, size_t tlen,
                     ps_rename_rep_t *rep);

/* Settle the unfinished move of the name leaving its server (PS_OK if
 * there is none; PS_ERR_BUSY if it is still under way). */
ps_status_t psc_move_settle(pstripe_fs_t *fs, const char *name, size_t len);

/* Root: settle every unfinished move from names of server (`pstripe gc`),
 * passing with a warning those still under way. */
ps_status_t psc_move_settle_server(pstripe_fs_t *fs, uint32_t server);

/* Root: finish the moves server holds as arrived whose client died before
 * the last step (`pstripe gc`). Only tidying: a failure is a warning. */
void psc_move_finish_arrivals(pstripe_fs_t *fs, uint32_t server);

#endif

/*
 * pss_gc.h: OBJ_LIST and META_LIVE, what `pstripe gc` asks of a server to
 * find the objects that no path leads to (see pss_gc.c).
 */
#ifndef PSS_GC_H
#define PSS_GC_H

#include "pss.h"

/* Answer an OBJ_LIST or META_LIVE request (any worker serves them). */
void pss_gc_handle(pss_worker_t *w, pss_req_t *req);

#endif

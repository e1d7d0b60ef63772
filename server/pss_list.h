/*
 * pss_list.h: LIST, a page of the namespace in path order (pss_list.c).
 */
#ifndef PSS_LIST_H
#define PSS_LIST_H

#include "pss.h"

/* Answer a LIST request. */
void pss_list_handle(pss_worker_t *w, pss_req_t *req);

#endif

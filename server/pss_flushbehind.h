/*
 * pss_flushbehind.h: background flushes of an object's file once
 * flush_behind bytes have been written to it (see pss_flushbehind.c).
 */
#ifndef PSS_FLUSHBEHIND_H
#define PSS_FLUSHBEHIND_H

#include "pss.h"
#include "pss_object.h"

/* bytes of obj's file written by small writes reached the disk (a write's
 * aio completed): past flush_behind since its last flush, start one in the
 * background. */
void pss_fb_wrote(pss_worker_t *w, pss_object_t *obj, uint64_t bytes);

/* Take in the flushes the reaper finished (from pss_store_progress). */
void pss_fb_progress(pss_worker_t *w);

#endif

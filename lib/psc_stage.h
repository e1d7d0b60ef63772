/*
 * psc_stage.h: the cache of staging (bounce) buffers, contiguous buffers
 * that large batches and rendezvous replies are staged in. Progress thread
 * only.
 */
#ifndef PSC_STAGE_H
#define PSC_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "psc_internal.h"

/* A staging buffer of at least size bytes (cached), its capacity in *cap.
 * NULL if out of memory. */
void *psc_bounce_get(pstripe_fs_t *fs, size_t size, size_t *cap);
/* Return a buffer (NULL is ignored): kept for reuse or released. */
void psc_bounce_put(pstripe_fs_t *fs, void *buf, size_t cap);
/* Release buffers idle for long enough; returns ns until the next one
 * would be released (0: the cache is empty). */
uint64_t psc_bounce_trim(pstripe_fs_t *fs, uint64_t now);
/* Release every cached buffer. */
void psc_bounce_free_all(pstripe_fs_t *fs);

#endif

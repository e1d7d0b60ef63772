/*
 * psc_readahead.h: read-ahead of streams of reads, for the read caches
 * (psc_rcache.c calls these under a cache's lock; psc_readahead.c).
 */
#ifndef PSC_READAHEAD_H
#define PSC_READAHEAD_H

#include "pstripe.h"

typedef struct psc_ra psc_ra_t;

/* Read-ahead for a cache of cache_size bytes in blocks of block bytes (its
 * windows take up to cache_size more, from its first stream on); NULL when
 * out of memory. */
psc_ra_t *psc_ra_create(pstripe_file_t *file, size_t cache_size, uint64_t block);
/* A one-region read: served from a window (returns 1, *nread = its bytes,
 * all below the end of file) or left to the caller (0), and followed as
 * part of a stream either way. */
int psc_ra_read(psc_ra_t *ra, const pstripe_region_t *reg, const struct iovec *mem, size_t nmem,
                uint64_t *nread);
/* The owner writes [lo, hi): the windows over it go. */
void psc_ra_invalidate(psc_ra_t *ra, uint64_t lo, uint64_t hi);
/* The windows go and the streams are forgotten. */
void psc_ra_drop(psc_ra_t *ra);
void psc_ra_free(psc_ra_t *ra);

#endif

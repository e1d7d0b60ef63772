/*
 * pss_cache.h: a worker's cache of object bytes.
 *
 * Objects are read and written with direct I/O, so the kernel keeps none of
 * their bytes. The worker keeps spans it has just written to disk
 * (write-through) or read from disk, those pss_job.c chooses
 * (pss_span_keep: small and noncontiguous I/O, objects several clients
 * read, not the whole megabytes of a stream), in granules of
 * PSS_CACHE_GRANULE bytes of one object with a map of their valid 512-byte
 * units, in the server's `cache` bytes of memory (pss_cache_mem_t: each
 * worker owns a slice and shares the rest; a worker's least recently used
 * granules go first once it can take no more); a read whose pieces are
 * all valid in the cache is copied piece by piece from the granules into
 * its reply instead of read from disk (pss_cache_gather), or, when it is
 * a whole reply within one granule, sent from the cache's memory itself
 * (pss_cache_lend); read-ahead reads from disk
 * straight into a granule (pss_cache_fill), and a kept write span is laid
 * out in one and written from it (the same call). The bytes kept are
 * always what the disk holds (or will hold: reads keep the write-back
 * stage's bytes laid over the disk's, and any write drops the blocks of
 * its spans before it starts), so a hit returns exactly what a disk read
 * would. A size change drops the bytes from the block of
 * the kept size on; remove and close drop all of an object's granules.
 * Only the object's worker touches its granules: no lock.
 */
#ifndef PSS_CACHE_H
#define PSS_CACHE_H

#include "pss.h"

#define PSS_CACHE_GRANULE (1u << 20) /* bytes of one granule, aligned in the object */

typedef struct pss_cache pss_cache_t;
typedef struct pss_cache_mem pss_cache_mem_t;

/* One object's side of it (a member of pss_object_t). */
typedef struct pss_cobj {
    pss_cgran_t *granules; /* its granules in the worker's cache */
    uint64_t n;            /* how many */
} pss_cobj_t;

/* The server's memory for the workers' caches: `budget` bytes (NULL in
 * *out, and PS_OK, if it is below one granule), shared as pss_cache.c says. */
ps_status_t pss_cache_mem_init(pss_cache_mem_t **out, uint64_t budget, uint32_t nworkers);
void pss_cache_mem_free(pss_cache_mem_t *m); /* after the workers' caches */

/* Fault in [off, off + len) of that memory ahead of its use, changing no
 * byte (buffers in use may lie there); off is a multiple of the page size,
 * and what lies past its end is ignored. */
ps_status_t pss_cache_prefault(pss_cache_mem_t *m, uint64_t off, uint64_t len);

/* The thread that faults all of it in at idle priority: started once the
 * workers run, stopped (joined) at shutdown or by pss_cache_mem_free. */
void pss_cache_warm_start(pss_cache_mem_t *m);
void pss_cache_warm_stop(pss_cache_mem_t *m);

/* Worker `worker`'s cache, in mem (NULL in *out, and PS_OK, if mem is NULL). */
ps_status_t pss_cache_init(pss_cache_t **out, pss_cache_mem_t *mem, uint32_t worker);
void pss_cache_cleanup(pss_cache_t *c);

/* Keep a copy of the object's bytes [off, off + len), as on disk. */
void pss_cache_put(pss_worker_t *w, pss_cobj_t *co, uint64_t off, uint64_t len, const uint8_t *src);

/* Copy the object's bytes [off, off + len) into dst if every one of them is
 * kept: 1, else 0 (and dst untouched). dst NULL: only say whether they are. */
int pss_cache_get(pss_worker_t *w, pss_cobj_t *co, uint64_t off, uint64_t len, uint8_t *dst);

/* Count pieces of len bytes, the c-th at the object's off + c * stride:
 * dst NULL, 1 if every byte of them is kept, else 0; else copy them one
 * after another into dst, each straight from its granule's memory (they
 * must have been found kept: only a missing granule is seen, 0). */
int pss_cache_gather(pss_worker_t *w, pss_cobj_t *co, uint64_t off, uint64_t len, uint64_t stride,
                     uint64_t count, uint8_t *dst);
/*
 * Lend the object's bytes [off, off + len) to a reply, without a copy, if
 * they lie in one granule and every one is kept: their address in the
 * cache, *g pinned until pss_cache_unpin; else NULL. A pinned granule's
 * kept bytes never change: it is not reused, a put leaves them alone, and a
 * drop that touches it takes it from its object (which gets a new one).
 */
const uint8_t *pss_cache_lend(pss_worker_t *w, pss_cobj_t *co, uint64_t off, uint64_t len,
                              pss_cgran_t **g);
void pss_cache_unpin(pss_worker_t *w, pss_cgran_t *g);

/*
 * Memory to read the object's bytes [off, off + len) from disk into, or to
 * lay them out in and write them from (whole units of one granule, none
 * of it lent: else NULL), *g pinned and those units not valid; then
 * pss_cache_filled keeps them (ok: the disk I/O succeeded) unless they
 * were dropped meanwhile, and unpins.
 */
uint8_t *pss_cache_fill(pss_worker_t *w, pss_cobj_t *co, uint64_t off, uint64_t len,
                        pss_cgran_t **g);
void pss_cache_filled(pss_worker_t *w, pss_cgran_t *g, uint64_t off, uint64_t len, int ok);

/* Forget the object's bytes in [lo, hi) (hi = UINT64_MAX: all of them). */
void pss_cache_drop(pss_worker_t *w, pss_cobj_t *co, uint64_t lo, uint64_t hi);

#endif

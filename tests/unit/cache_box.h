/*
 * cache_box: the server's cache (server/pss_cache.c) behind a plain C
 * interface for the unit tests, which are C++ and cannot include the
 * server's headers (C11 atomics). One worker's cache and two objects.
 */
#ifndef CACHE_BOX_H
#define CACHE_BOX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cache_box cache_box;

cache_box *cache_box_new(uint64_t budget); /* NULL: no memory */
void cache_box_free(cache_box *b);
void cache_box_put(cache_box *b, int obj, uint64_t off, uint64_t len, const uint8_t *src);
int cache_box_get(cache_box *b, int obj, uint64_t off, uint64_t len, uint8_t *dst);
void cache_box_drop(cache_box *b, int obj, uint64_t lo, uint64_t hi);
const uint8_t *cache_box_lend(cache_box *b, int obj, uint64_t off, uint64_t len, void **pin);
void cache_box_unpin(cache_box *b, void *pin);
uint8_t *cache_box_fill(cache_box *b, int obj, uint64_t off, uint64_t len, void **pin);
void cache_box_filled(cache_box *b, void *pin, uint64_t off, uint64_t len, int ok);
/* pss_cache_prefault of [off, off + len) of the memory: 1 on success */
int cache_box_prefault(cache_box *b, uint64_t off, uint64_t len);

#ifdef __cplusplus
}
#endif

#endif

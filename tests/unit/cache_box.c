/*
 * cache_box (cache_box.h): a worker with a cache and two objects, for the
 * unit tests of server/pss_cache.c, which is compiled in from here (as
 * coll_domain.c does for the driver's math).
 */
#include "cache_box.h"

#include "pss_cache.c"

struct cache_box {
    pss_cache_mem_t *mem;
    pss_worker_t w;
    pss_cobj_t obj[2];
};

cache_box *cache_box_new(uint64_t budget)
{
    cache_box *b = calloc(1, sizeof(*b));

    if (b == NULL || pss_cache_mem_init(&b->mem, budget, 1) != PS_OK ||
        pss_cache_init(&b->w.cache, b->mem, 0) != PS_OK) {
        free(b);
        return NULL;
    }
    return b;
}

void cache_box_free(cache_box *b)
{
    pss_cache_cleanup(b->w.cache);
    pss_cache_mem_free(b->mem);
    free(b);
}

void cache_box_put(cache_box *b, int obj, uint64_t off, uint64_t len, const uint8_t *src)
{
    pss_cache_put(&b->w, &b->obj[obj], off, len, src);
}

int cache_box_get(cache_box *b, int obj, uint64_t off, uint64_t len, uint8_t *dst)
{
    return pss_cache_get(&b->w, &b->obj[obj], off, len, dst);
}

void cache_box_drop(cache_box *b, int obj, uint64_t lo, uint64_t hi)
{
    pss_cache_drop(&b->w, &b->obj[obj], lo, hi);
}

const uint8_t *cache_box_lend(cache_box *b, int obj, uint64_t off, uint64_t len, void **pin)
{
    return pss_cache_lend(&b->w, &b->obj[obj], off, len, (pss_cgran_t **)pin);
}

void cache_box_unpin(cache_box *b, void *pin)
{
    pss_cache_unpin(&b->w, pin);
}

uint8_t *cache_box_fill(cache_box *b, int obj, uint64_t off, uint64_t len, void **pin)
{
    return pss_cache_fill(&b->w, &b->obj[obj], off, len, (pss_cgran_t **)pin);
}

void cache_box_filled(cache_box *b, void *pin, uint64_t off, uint64_t len, int ok)
{
    pss_cache_filled(&b->w, pin, off, len, ok);
}

int cache_box_prefault(cache_box *b, uint64_t off, uint64_t len)
{
    return pss_cache_prefault(b->mem, off, len) == PS_OK;
}

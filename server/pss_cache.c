/*
 * pss_cache.c: the worker's cache of object bytes (see pss_cache.h).
 * Granules are found by (object, offset) in a chained hash table sized for
 * the budget, and are on two lists: their object's (drops of all of it)
 * and the worker's LRU (eviction). Which bytes of a granule are valid is a
 * bitmap of PSS_CACHE_UNIT-byte units (disk spans are whole units: the
 * server's alignment is a multiple of it). Buffers of evicted or dropped
 * granules are reused, so that a full cache costs no page faults.
 */
#include "pss_cache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PSS_CACHE_UNIT  512u /* bytes per bit of a granule's valid map */
#define PSS_CACHE_UNITS (PSS_CACHE_GRANULE / PSS_CACHE_UNIT)
#define PSS_CACHE_WORDS (PSS_CACHE_UNITS / 64)

struct pss_cgran {
    struct pss_cgran *hnext;               /* hash chain */
    struct pss_cgran *onext, *oprev;       /* the object's granules */
    struct pss_cgran *lru_prev, *lru_next; /* the worker's, most recently used first */
    pss_cobj_t *obj;                       /* whose */
    uint64_t base;   /* offset in the object, a multiple of PSS_CACHE_GRANULE */
    uint32_t nvalid; /* units valid */
    uint64_t valid[PSS_CACHE_WORDS];
    uint8_t *buf; /* PSS_CACHE_GRANULE bytes */
};

struct pss_cache {
    uint64_t max_granules, ngranules; /* allocated (in use or free) */
    pss_cgran_t **table;
    size_t nbuckets;
    pss_cgran_t *lru_head, *lru_tail;
    pss_cgran_t *free; /* unused granules (hnext chain), buffers kept */
};

ps_status_t pss_cache_init(pss_cache_t **out, uint64_t budget)
{
    pss_cache_t *c;
    size_t n = 64;

    *out = NULL;
    if (budget < PSS_CACHE_GRANULE) {
        return PS_OK;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    c->max_granules = budget / PSS_CACHE_GRANULE;
    while (n < c->max_granules * 2 && n < (1u << 22)) {
        n *= 2;
    }
    c->nbuckets = n;
    c->table = calloc(n, sizeof(*c->table));
    if (c->table == NULL) {
        free(c);
        return PS_ERR_NO_MEMORY;
    }
    *out = c;
    return PS_OK;
}

static void pss_cgran_free_list(pss_cgran_t *g)
{
    while (g != NULL) {
        pss_cgran_t *next = g->hnext;
        free(g->buf);
        free(g);
        g = next;
    }
}

void pss_cache_cleanup(pss_cache_t *c)
{
    if (c == NULL) {
        return;
    }
    for (size_t b = 0; b < c->nbuckets; b++) {
        pss_cgran_free_list(c->table[b]);
    }
    pss_cgran_free_list(c->free);
    free(c->table);
    free(c);
}

static size_t pss_cache_bucket(const pss_cache_t *c, const pss_cobj_t *co, uint64_t base)
{
    uint64_t h = ((uint64_t)(uintptr_t)co ^ (base / PSS_CACHE_GRANULE) * 0x9e3779b97f4a7c15ull) *
                 0xff51afd7ed558ccdull;
    return (size_t)(h >> 29) & (c->nbuckets - 1);
}

static pss_cgran_t *pss_cache_find(const pss_cache_t *c, const pss_cobj_t *co, uint64_t base)
{
    for (pss_cgran_t *g = c->table[pss_cache_bucket(c, co, base)]; g != NULL; g = g->hnext) {
        if (g->obj == co && g->base == base) {
            return g;
        }
    }
    return NULL;
}

static void pss_lru_unlink(pss_cache_t *c, pss_cgran_t *g)
{
    *(g->lru_prev != NULL ? &g->lru_prev->lru_next : &c->lru_head) = g->lru_next;
    *(g->lru_next != NULL ? &g->lru_next->lru_prev : &c->lru_tail) = g->lru_prev;
    g->lru_prev = g->lru_next = NULL;
}

static void pss_lru_push(pss_cache_t *c, pss_cgran_t *g)
{
    g->lru_prev = NULL;
    g->lru_next = c->lru_head;
    *(c->lru_head != NULL ? &c->lru_head->lru_prev : &c->lru_tail) = g;
    c->lru_head = g;
}

/* Take g out of the table and both lists; its buffer goes to the free list. */
static void pss_cgran_release(pss_cache_t *c, pss_cgran_t *g)
{
    pss_cgran_t **pp = &c->table[pss_cache_bucket(c, g->obj, g->base)];

    while (*pp != g) {
        pp = &(*pp)->hnext;
    }
    *pp = g->hnext;
    pss_lru_unlink(c, g);
    *(g->oprev != NULL ? &g->oprev->onext : &g->obj->granules) = g->onext;
    if (g->onext != NULL) {
        g->onext->oprev = g->oprev;
    }
    g->obj->n--;
    g->obj = NULL;
    g->hnext = c->free;
    c->free = g;
}

/* A granule for (co, base), empty: reused, new within the budget, or the
 * least recently used one's. NULL if memory ran out. */
static pss_cgran_t *pss_cgran_get(pss_cache_t *c, pss_cobj_t *co, uint64_t base)
{
    pss_cgran_t *g;

    if (c->free == NULL && c->ngranules < c->max_granules) {
        g = calloc(1, sizeof(*g));
        if (g != NULL && (g->buf = malloc(PSS_CACHE_GRANULE)) == NULL) {
            free(g);
            g = NULL;
        }
        if (g != NULL) {
            c->ngranules++;
            g->hnext = c->free;
            c->free = g;
        }
    }
    if (c->free == NULL && c->lru_tail != NULL) {
        pss_cgran_release(c, c->lru_tail);
    }
    if ((g = c->free) == NULL) {
        return NULL;
    }
    c->free = g->hnext;
    size_t b = pss_cache_bucket(c, co, base);
    g->hnext = c->table[b];
    c->table[b] = g;
    g->obj = co;
    g->base = base;
    memset(g->valid, 0, sizeof(g->valid));
    g->nvalid = 0;
    g->oprev = NULL;
    g->onext = co->granules;
    if (co->granules != NULL) {
        co->granules->oprev = g;
    }
    co->granules = g;
    co->n++;
    pss_lru_push(c, g);
    return g;
}

/* Set (on) or clear the valid bits of units [u, v) of g. */
static void pss_cgran_mark(pss_cgran_t *g, uint32_t u, uint32_t v, int on)
{
    for (; u < v; u++) {
        uint64_t bit = 1ull << (u % 64), *word = &g->valid[u / 64];
        if (on && !(*word & bit)) {
            *word |= bit;
            g->nvalid++;
        } else if (!on && (*word & bit)) {
            *word &= ~bit;
            g->nvalid--;
        }
        if (u % 64 == 0 && v - u >= 64 && *word == (on ? ~0ull : 0)) {
            u += 63; /* a whole word already as wanted */
        }
    }
}

/* Are units [u, v) of g all valid? */
static int pss_cgran_valid(const pss_cgran_t *g, uint32_t u, uint32_t v)
{
    for (; u < v; u++) {
        if (u % 64 == 0 && v - u >= 64) {
            if (g->valid[u / 64] != ~0ull) {
                return 0;
            }
            u += 63;
        } else if (!(g->valid[u / 64] & (1ull << (u % 64)))) {
            return 0;
        }
    }
    return 1;
}

void pss_cache_put(pss_worker_t *w, pss_cobj_t *co, uint64_t off, uint64_t len, const uint8_t *src)
{
    pss_cache_t *c = w->cache;
    uint64_t end = off + len;

    if (c == NULL) {
        return;
    }
    for (uint64_t base = off / PSS_CACHE_GRANULE * PSS_CACHE_GRANULE; base < end;
         base += PSS_CACHE_GRANULE) {
        uint32_t lo = (uint32_t)((off > base ? off : base) - base);
        uint32_t hi =
            (uint32_t)((end < base + PSS_CACHE_GRANULE ? end : base + PSS_CACHE_GRANULE) - base);
        pss_cgran_t *g = pss_cache_find(c, co, base);
        if (g == NULL && (g = pss_cgran_get(c, co, base)) == NULL) {
            continue; /* not kept: the next read of these bytes goes to disk */
        }
        memcpy(g->buf + lo, src + (base + lo - off), hi - lo);
        /* whole units only: a unit partly copied is not valid */
        pss_cgran_mark(g, (lo + PSS_CACHE_UNIT - 1) / PSS_CACHE_UNIT, hi / PSS_CACHE_UNIT, 1);
        pss_lru_unlink(c, g);
        pss_lru_push(c, g);
    }
}

int pss_cache_get(pss_worker_t *w, pss_cobj_t *co, uint64_t off, uint64_t len, uint8_t *dst)
{
    pss_cache_t *c = w->cache;
    uint64_t end = off + len, first = off / PSS_CACHE_GRANULE * PSS_CACHE_GRANULE;

    if (c == NULL || co->n == 0 || len == 0 ||
        (end - first + PSS_CACHE_GRANULE - 1) / PSS_CACHE_GRANULE > co->n) {
        return 0;
    }
    for (int copy = 0; copy < (dst != NULL ? 2 : 1); copy++) { /* check every granule, then copy */
        for (uint64_t base = first; base < end; base += PSS_CACHE_GRANULE) {
            uint64_t lo = (off > base ? off : base) - base;
            uint64_t hi = (end < base + PSS_CACHE_GRANULE ? end : base + PSS_CACHE_GRANULE) - base;
            pss_cgran_t *g = pss_cache_find(c, co, base);
            if (!copy &&
                (g == NULL || !pss_cgran_valid(g, lo / PSS_CACHE_UNIT,
                                               (hi + PSS_CACHE_UNIT - 1) / PSS_CACHE_UNIT))) {
                return 0;
            }
            if (copy) {
                memcpy(dst + (base + lo - off), g->buf + lo, hi - lo);
                pss_lru_unlink(c, g);
                pss_lru_push(c, g);
            }
        }
    }
    return 1;
}

/* Forget [lo, hi) of g (offsets in the object, every unit they touch);
 * release it once nothing in it is valid. */
static void pss_cgran_drop(pss_cache_t *c, pss_cgran_t *g, uint64_t lo, uint64_t hi)
{
    uint64_t a = lo > g->base ? lo - g->base : 0;
    uint64_t b = hi - g->base < PSS_CACHE_GRANULE ? hi - g->base : PSS_CACHE_GRANULE;

    if (hi <= g->base || a >= PSS_CACHE_GRANULE) {
        return;
    }
    pss_cgran_mark(g, (uint32_t)(a / PSS_CACHE_UNIT),
                   (uint32_t)((b + PSS_CACHE_UNIT - 1) / PSS_CACHE_UNIT), 0);
    if (g->nvalid == 0) {
        pss_cgran_release(c, g);
    }
}

void pss_cache_drop(pss_worker_t *w, pss_cobj_t *co, uint64_t lo, uint64_t hi)
{
    pss_cache_t *c = w->cache;

    if (c == NULL || co->n == 0 || hi <= lo) {
        return;
    }
    uint64_t first = lo / PSS_CACHE_GRANULE * PSS_CACHE_GRANULE;
    if (hi - first > co->n * (uint64_t)PSS_CACHE_GRANULE) {
        /* more granules in the range than the object has: walk the object's */
        pss_cgran_t *g = co->granules, *next;
        for (; g != NULL; g = next) {
            next = g->onext;
            pss_cgran_drop(c, g, lo, hi);
        }
        return;
    }
    for (uint64_t base = first; base < hi; base += PSS_CACHE_GRANULE) {
        pss_cgran_t *g = pss_cache_find(c, co, base);
        if (g != NULL) {
            pss_cgran_drop(c, g, lo, hi);
        }
    }
}

/*
 * pss_cache.c: the worker's cache of object bytes (see pss_cache.h).
 * Granules are found by (object, offset) in a chained hash table sized for
 * the budget, and are on two lists: their object's (drops of all of it)
 * and the worker's LRU (eviction). Which bytes of a granule are valid is a
 * bitmap of PSS_CACHE_UNIT-byte units (disk spans are whole units: the
 * server's alignment is a multiple of it). Buffers of evicted or dropped
 * granules are reused by their worker.
 *
 * Memory. The buffers are the server's (pss_cache_mem_t): one mapping of
 * the `cache` budget, in which each worker owns a slice of
 * budget / (2 x workers) and the other half is shared, taken first come;
 * a worker takes a buffer from its slice, then from the shared half, and
 * once both are gone it reuses its least recently used granule. Buffers
 * beyond its slice that a drop (a write, a remove, a close) frees go back
 * to the shared half, so that the next busy object, maybe another
 * worker's, finds them: one worker serving the one busy object keeps up
 * to (1 + 1/workers) / 2 of the budget, and no worker is ever left
 * without any. The shared half's lock is taken once per granule a
 * worker gains or gives back, never to find or copy bytes.
 *
 * A fresh page costs the kernel a fault and a zeroing: filling a 2 GiB
 * cache that way spent 43% of both CPUs in clear_page under a benchmark's
 * writes, which ran at half their speed. So a thread at idle priority
 * faults in the whole mapping after start (pss_cache_warm_*), on x86 by a
 * write to each page that changes no byte (a compare-and-swap: safe beside
 * workers already using the first buffers; elsewhere as below). It is
 * also each page's first access from user space, which costs a VM's
 * hypervisor a trip of its own (a test program's first memcpy into 1 GiB
 * populated by MADV_POPULATE_WRITE ran at 619 MB/s, the second at 20
 * GB/s; with one load per page in between, both at 22 GB/s; a fresh
 * server's first reads of a file two clients read, copied into the
 * cache, ran at a quarter of their speed). MADV_POPULATE_WRITE, still
 * used on other machines, holds the process's memory-map lock, which a
 * thread at idle priority can be preempted holding, and then the
 * workers' mmap and mprotect (malloc growing an arena) wait: up to 200
 * ms in a perf trace of fresh servers beside a CI run. A write fault
 * takes only the mapping's own lock on kernels with per-VMA locks (6.4
 * and later; before, it holds the memory-map lock too, one fault at a
 * time): a test program timing mmap + munmap of 256 KiB while a thread
 * at idle priority warmed 2 GiB, one busy loop beside, 6.18: mean
 * 163-2,655 us, worst 0.3-9.2 ms with the madvise (9 runs); 4.9-6.7 us,
 * worst 0.1 ms with these writes (3 runs). The thread also has the kernel
 * read one byte of each page (pss_cache_kernel_touch: the kernel's first
 * access through the process's mapping is charged apart, and a worker's
 * sends of bytes a disk read had just put in fresh granules ran at a
 * quarter of the speed of later sends). It takes only CPU time nobody
 * else wants and stops at shutdown; the server's memory grows to the
 * budget within seconds of its start.
 *
 * The mapping asks for transparent huge pages (ps_mem_map_huge). On the
 * VM of session 31 a cache of 4 KiB pages cost the servers a quarter more
 * CPU for the same transfers (two servers side by side, alternated 4
 * times, 2 processes: 1 GiB contiguous writes and reads 189-160 ticks
 * against 263-220, reads 1,847-2,247 MiB/s against 1,427-1,649; 1 MiB
 * list writes and reads of 4 KiB regions 315-385 ticks against 381-476)
 * and twice the time to fault 2 GiB in (8.1-8.4 s against 14.7 s, both
 * servers at once).
 */
#include "pss_cache.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ps_log.h"
#include "ps_mem.h"
#include "ps_time.h"

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
    uint32_t pins;   /* replies sending from it, disk reads filling it: see pss_cache_lend */
    uint64_t valid[PSS_CACHE_WORDS];
    uint8_t *buf; /* PSS_CACHE_GRANULE bytes */
};

struct pss_cache_mem {
    uint8_t *base;        /* the mapping (ps_mem_map_huge) */
    size_t map_len;       /* its bytes */
    uint64_t ngranules;   /* buffers in it */
    uint64_t slice;       /* buffers each worker owns, from slice x worker index */
    uint64_t shared;      /* first buffer of the shared half */
    pthread_mutex_t lock; /* of the three below */
    uint64_t taken;       /* buffers of the shared half handed out once */
    uint8_t **back;       /* buffers given back to it, nback of them */
    uint64_t nback;
    pthread_t warm; /* pss_cache_warm_start */
    int warm_started;
    atomic_int warm_stop;
};

struct pss_cache {
    pss_cache_mem_t *mem;
    uint64_t first, own; /* the worker's slice: buffers [first, first + own) */
    uint64_t taken;      /* of its slice */
    uint64_t held;       /* buffers it has, of its slice or shared */
    pss_cgran_t **table;
    size_t nbuckets;
    pss_cgran_t *lru_head, *lru_tail;
    pss_cgran_t *free;    /* unused granules (hnext chain), buffers kept */
    pss_cgran_t *orphans; /* released while pinned (lru links): free once unpinned */
};

ps_status_t pss_cache_mem_init(pss_cache_mem_t **out, uint64_t budget, uint32_t nworkers)
{
    pss_cache_mem_t *m;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t ram = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0, n;

    *out = NULL;
    if (ram > 0 && budget > ram / 2) { /* all of it is faulted in: no OOM kill by a typo */
        ps_warn("cache=%llu MiB is more than half of this machine's %llu MiB of memory: "
                "using %llu MiB",
                (unsigned long long)(budget >> 20), (unsigned long long)(ram >> 20),
                (unsigned long long)(ram / 2 >> 20));
        budget = ram / 2;
    }
    n = budget / PSS_CACHE_GRANULE;
    if (n == 0) {
        return PS_OK;
    }
    m = calloc(1, sizeof(*m));
    if (m == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    m->map_len = ps_mem_huge_round(n * PSS_CACHE_GRANULE);
    m->base = ps_mem_map_huge(m->map_len, 0);
    if (m->base == NULL) {
        free(m);
        return PS_ERR_NO_MEMORY;
    }
    m->ngranules = n;
    m->slice = n / (2 * (uint64_t)(nworkers > 0 ? nworkers : 1));
    m->shared = m->slice * nworkers;
    m->back = calloc(n - m->shared, sizeof(*m->back));
    if (m->back == NULL) {
        ps_mem_unmap_huge(m->base, m->map_len, 0);
        free(m);
        return PS_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&m->lock, NULL);
    *out = m;
    return PS_OK;
}

void pss_cache_mem_free(pss_cache_mem_t *m)
{
    if (m == NULL) {
        return;
    }
    pss_cache_warm_stop(m);
    ps_mem_unmap_huge(m->base, m->map_len, 0);
    pthread_mutex_destroy(&m->lock);
    free(m->back);
    free(m);
}

/* A buffer of the worker's slice, else of the shared half; NULL: none left. */
static uint8_t *pss_cache_mem_take(pss_cache_t *c)
{
    pss_cache_mem_t *m = c->mem;
    uint8_t *buf = NULL;

    if (c->taken < c->own) {
        buf = m->base + (c->first + c->taken++) * PSS_CACHE_GRANULE;
    } else {
        pthread_mutex_lock(&m->lock);
        if (m->nback > 0) {
            buf = m->back[--m->nback];
        } else if (m->shared + m->taken < m->ngranules) {
            buf = m->base + (m->shared + m->taken++) * PSS_CACHE_GRANULE;
        }
        pthread_mutex_unlock(&m->lock);
    }
    c->held += buf != NULL;
    return buf;
}

/* Give the free granules' buffers beyond the worker's slice back to the
 * shared half. */
static void pss_cache_give_back(pss_cache_t *c)
{
    pss_cache_mem_t *m = c->mem;

    if (c->held <= c->own || c->free == NULL) {
        return;
    }
    pthread_mutex_lock(&m->lock);
    while (c->held > c->own && c->free != NULL) {
        pss_cgran_t *g = c->free;
        c->free = g->hnext;
        m->back[m->nback++] = g->buf;
        c->held--;
        free(g);
    }
    pthread_mutex_unlock(&m->lock);
}

ps_status_t pss_cache_init(pss_cache_t **out, pss_cache_mem_t *mem, uint32_t worker)
{
    pss_cache_t *c;
    size_t n = 64;

    *out = NULL;
    if (mem == NULL) {
        return PS_OK;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    c->mem = mem;
    c->first = mem->slice * worker;
    c->own = mem->slice;
    while (n < c->own + mem->ngranules - mem->shared && n < (1u << 22)) {
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
    while (c->orphans != NULL) { /* sends still out: their unpin finds no cache */
        pss_cgran_t *next = c->orphans->lru_next;
        free(c->orphans);
        c->orphans = next;
    }
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

/* g was just used: most recently used from now on. */
static void pss_lru_touch(pss_cache_t *c, pss_cgran_t *g)
{
    pss_lru_unlink(c, g);
    pss_lru_push(c, g);
}

/* Take g out of the table and both lists; its buffer goes to the free
 * list, or, while g is pinned, waits on the orphans' list. */
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
    if (g->pins > 0) {
        g->lru_next = c->orphans;
        if (c->orphans != NULL) {
            c->orphans->lru_prev = g;
        }
        c->orphans = g;
        return;
    }
    g->hnext = c->free;
    c->free = g;
}

/* A granule for (co, base), empty: reused, new within the budget, or the
 * least recently used one's. NULL if memory ran out. */
static pss_cgran_t *pss_cgran_get(pss_cache_t *c, pss_cobj_t *co, uint64_t base)
{
    pss_cgran_t *g;
    uint8_t *buf;

    /* (a buffer whose granule could not be allocated is not used again) */
    if (c->free == NULL && (buf = pss_cache_mem_take(c)) != NULL &&
        (g = calloc(1, sizeof(*g))) != NULL) {
        g->buf = buf;
        g->hnext = c->free;
        c->free = g;
    }
    if (c->free == NULL) {
        pss_cgran_t *victim = c->lru_tail;
        while (victim != NULL && victim->pins > 0) {
            victim = victim->lru_prev;
        }
        if (victim != NULL) {
            pss_cgran_release(c, victim);
        }
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

/* Copy src into bytes [lo, hi) of g; a pinned granule's valid units are
 * left as they are (a reply may be sending them; they hold these bytes). */
static void pss_cgran_copy_in(pss_cgran_t *g, uint32_t lo, uint32_t hi, const uint8_t *src)
{
    if (g->pins == 0) {
        memcpy(g->buf + lo, src, hi - lo);
        return;
    }
    for (uint32_t a = lo; a < hi;) {
        uint32_t u = a / PSS_CACHE_UNIT, b = (u + 1) * PSS_CACHE_UNIT;
        b = b < hi ? b : hi;
        if (!pss_cgran_valid(g, u, u + 1)) {
            memcpy(g->buf + a, src + (a - lo), b - a);
        }
        a = b;
    }
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
        pss_cgran_copy_in(g, lo, hi, src + (base + lo - off));
        /* whole units only: a unit partly copied is not valid */
        pss_cgran_mark(g, (lo + PSS_CACHE_UNIT - 1) / PSS_CACHE_UNIT, hi / PSS_CACHE_UNIT, 1);
        pss_lru_touch(c, g);
    }
}

int pss_cache_gather(pss_worker_t *w, pss_cobj_t *co, uint64_t off, uint64_t len, uint64_t stride,
                     uint64_t count, uint8_t *dst)
{
    pss_cache_t *c = w->cache;
    pss_cgran_t *g = NULL; /* the granule of the last piece: runs stay in one for long */

    if (c == NULL || co->n == 0) {
        return count == 0 || len == 0;
    }
    for (uint64_t k = 0; k < count; k++) {
        for (uint64_t o = off + k * stride, end = o + len; o < end;) {
            uint64_t base = o / PSS_CACHE_GRANULE * PSS_CACHE_GRANULE, lo = o - base;
            uint64_t n = end - o < PSS_CACHE_GRANULE - lo ? end - o : PSS_CACHE_GRANULE - lo;
            if (g == NULL || g->base != base) {
                if ((g = pss_cache_find(c, co, base)) == NULL) {
                    return 0;
                }
                if (dst != NULL) {
                    pss_lru_touch(c, g);
                }
            }
            if (dst == NULL &&
                !pss_cgran_valid(g, (uint32_t)(lo / PSS_CACHE_UNIT),
                                 (uint32_t)((lo + n + PSS_CACHE_UNIT - 1) / PSS_CACHE_UNIT))) {
                return 0;
            }
            if (dst != NULL) {
                memcpy(dst, g->buf + lo, n);
                dst += n;
            }
            o += n;
        }
    }
    return 1;
}

int pss_cache_get(pss_worker_t *w, pss_cobj_t *co, uint64_t off, uint64_t len, uint8_t *dst)
{
    return len > 0 && pss_cache_gather(w, co, off, len, len, 1, NULL) &&
           (dst == NULL || pss_cache_gather(w, co, off, len, len, 1, dst));
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
    if (g->pins > 0) { /* lent bytes never change: the object gets a new granule */
        pss_cgran_release(c, g);
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
    } else {
        for (uint64_t base = first; base < hi; base += PSS_CACHE_GRANULE) {
            pss_cgran_t *g = pss_cache_find(c, co, base);
            if (g != NULL) {
                pss_cgran_drop(c, g, lo, hi);
            }
        }
    }
    pss_cache_give_back(c);
}

const uint8_t *pss_cache_lend(pss_worker_t *w, pss_cobj_t *co, uint64_t off, uint64_t len,
                              pss_cgran_t **out)
{
    pss_cache_t *c = w->cache;
    uint64_t base = off / PSS_CACHE_GRANULE * PSS_CACHE_GRANULE, lo = off - base;
    pss_cgran_t *g;

    if (c == NULL || co->n == 0 || len == 0 || lo + len > PSS_CACHE_GRANULE ||
        (g = pss_cache_find(c, co, base)) == NULL ||
        !pss_cgran_valid(g, (uint32_t)(lo / PSS_CACHE_UNIT),
                         (uint32_t)((lo + len + PSS_CACHE_UNIT - 1) / PSS_CACHE_UNIT))) {
        return NULL;
    }
    g->pins++;
    pss_lru_touch(c, g);
    *out = g;
    return g->buf + lo;
}

uint8_t *pss_cache_fill(pss_worker_t *w, pss_cobj_t *co, uint64_t off, uint64_t len,
                        pss_cgran_t **out)
{
    pss_cache_t *c = w->cache;
    uint64_t base = off / PSS_CACHE_GRANULE * PSS_CACHE_GRANULE, lo = off - base;
    pss_cgran_t *g;

    if (c == NULL || len == 0 || lo + len > PSS_CACHE_GRANULE || lo % PSS_CACHE_UNIT != 0 ||
        len % PSS_CACHE_UNIT != 0) {
        return NULL;
    }
    g = pss_cache_find(c, co, base);
    if (g != NULL && g->pins > 0) {
        return NULL; /* the disk would write bytes a reply may be sending */
    }
    if (g == NULL && (g = pss_cgran_get(c, co, base)) == NULL) {
        return NULL;
    }
    pss_cgran_mark(g, (uint32_t)(lo / PSS_CACHE_UNIT), (uint32_t)((lo + len) / PSS_CACHE_UNIT), 0);
    g->pins++;
    *out = g;
    return g->buf + lo;
}

void pss_cache_filled(pss_worker_t *w, pss_cgran_t *g, uint64_t off, uint64_t len, int ok)
{
    pss_cache_t *c = w->cache;
    uint64_t lo = off % PSS_CACHE_GRANULE;

    if (c == NULL) {
        return;
    }
    if (ok && g->obj != NULL) { /* not dropped while the disk read ran */
        pss_cgran_mark(g, (uint32_t)(lo / PSS_CACHE_UNIT), (uint32_t)((lo + len) / PSS_CACHE_UNIT),
                       1);
        pss_lru_touch(c, g);
    }
    pss_cache_unpin(w, g);
}

void pss_cache_unpin(pss_worker_t *w, pss_cgran_t *g)
{
    pss_cache_t *c = w->cache;

    if (c == NULL || --g->pins > 0 || g->obj != NULL) {
        return; /* (no cache: cleaned up, with g, while the send was out) */
    }
    *(g->lru_prev != NULL ? &g->lru_prev->lru_next : &c->orphans) = g->lru_next;
    if (g->lru_next != NULL) {
        g->lru_next->lru_prev = g->lru_prev;
    }
    g->lru_prev = g->lru_next = NULL;
    g->hnext = c->free;
    c->free = g;
    pss_cache_give_back(c);
}

/* ---- faulting the memory in at idle priority ------------------------------------ */

#define PSS_CACHE_WARM_STEP  (4u << 20) /* bytes per step; the stop flag is seen between */
#define PSS_CACHE_TOUCH_STEP 4096u     /* the smallest page size */
#define PSS_CACHE_TOUCH_IOV  1024      /* pages the kernel reads per writev (IOV_MAX) */

/* Has the kernel read one byte of each page of [p, p + len) through this
 * process's mapping: a writev of them into an empty pipe, drained at once.
 * On this VM (a paravirtual guest, doc/journal/issue-8.md) the kernel's first such
 * access to a page costs a hypervisor trip of about 8 us even after user
 * space's loads: 1 GiB of memory so warmed, filled by O_DIRECT reads and
 * sent through a socket pair, went at 420 MiB/s the first time and 5,900
 * MiB/s after; touched this way first (2.2 s for the GiB), at 6,400. */
static ps_status_t pss_cache_kernel_touch(uint8_t *p, uint64_t len)
{
    struct iovec iov[PSS_CACHE_TOUCH_IOV];
    char sink[PSS_CACHE_TOUCH_IOV];
    ps_status_t status = PS_OK;
    uint64_t o = 0;
    int pfd[2];

    if (pipe(pfd) != 0) {
        return ps_status_from_errno(errno);
    }
    while (o < len && status == PS_OK) {
        ssize_t n = 0;

        for (; n < PSS_CACHE_TOUCH_IOV && o < len; n++, o += PSS_CACHE_TOUCH_STEP) {
            iov[n].iov_base = p + o;
            iov[n].iov_len = 1;
        }
        /* at most PIPE_BUF bytes into an empty pipe: written whole, read whole */
        errno = 0;
        if (writev(pfd[1], iov, (int)n) != n || read(pfd[0], sink, (size_t)n) != n) {
            status = ps_status_from_errno(errno != 0 ? errno : EIO);
        }
    }
    close(pfd[0]);
    close(pfd[1]);
    return status;
}

ps_status_t pss_cache_prefault(pss_cache_mem_t *m, uint64_t off, uint64_t len)
{
    uint64_t size = m != NULL ? m->ngranules * PSS_CACHE_GRANULE : 0;

    if (off >= size) {
        return PS_OK;
    }
    if (len > size - off) {
        len = size - off;
    }
#if defined(__x86_64__) || defined(__i386__)
    /* a write fault per page (per huge page where the kernel gives them),
     * the first user-space access too (see the top of this file): lock
     * cmpxchg of a byte with 0 always writes, the byte's own value back
     * when it is not 0, atomically, so a worker's store (or a disk read's
     * DMA, coherent on x86) lands before or after it, whole. No load
     * first: a read fault maps the huge zero page, which a write fault
     * then splits into 4 KiB pages on kernels before 6.13 (Debian 12's
     * 6.1); and an or of 0 is an idempotent operation a compiler may make
     * a load. */
    for (uint64_t o = 0; o < len; o += PSS_CACHE_TOUCH_STEP) {
        uint8_t zero = 0;

        (void)__atomic_compare_exchange_n(m->base + off + o, &zero, 0, 0, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED);
    }
#else
    /* elsewhere a CPU's write beside a disk read's DMA into the page is not
     * safe on every machine (DMA not coherent with the caches): the kernel
     * maps the pages, holding the memory-map lock, and one load per page
     * is the first user-space access */
    if (madvise(m->base + off, len, MADV_POPULATE_WRITE) != 0) {
        return ps_status_from_errno(errno);
    }
    for (uint64_t o = 0; o < len; o += PSS_CACHE_TOUCH_STEP) {
        (void)__atomic_load_n(m->base + off + o, __ATOMIC_RELAXED);
    }
#endif
    return pss_cache_kernel_touch(m->base + off, len);
}

static void *pss_cache_warm_main(void *arg)
{
    pss_cache_mem_t *m = arg;
    struct sched_param none = {0};
    uint64_t size = m->ngranules * PSS_CACHE_GRANULE;
    uint64_t t0 = ps_time_ns(), off;

    pthread_setschedparam(pthread_self(), SCHED_IDLE, &none);
    for (off = 0; off < size && !atomic_load(&m->warm_stop); off += PSS_CACHE_WARM_STEP) {
        ps_status_t status = pss_cache_prefault(m, off, PSS_CACHE_WARM_STEP);
        if (status != PS_OK) {
            ps_info("cache memory is faulted in as used (%s)", ps_status_string(status));
            return NULL;
        }
    }
    if (off >= size) {
        ps_info("cache memory faulted in: %" PRIu64 " MiB in %.1f s", size >> 20,
                (double)(ps_time_ns() - t0) * 1e-9);
    }
    return NULL;
}

void pss_cache_warm_start(pss_cache_mem_t *m)
{
    int err;

    if (m == NULL) {
        return;
    }
    err = pthread_create(&m->warm, NULL, pss_cache_warm_main, m);
    if (err != 0) {
        errno = err;
        ps_warn("no thread to fault in the cache's memory (faulted in as used): %m");
        return;
    }
    m->warm_started = 1;
}

void pss_cache_warm_stop(pss_cache_mem_t *m)
{
    if (m == NULL || !m->warm_started) {
        return;
    }
    atomic_store(&m->warm_stop, 1);
    pthread_join(m->warm, NULL);
    m->warm_started = 0;
}

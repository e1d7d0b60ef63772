/*
 * pss_stage.c: the write-back stage's table (see pss_stage.h): staged
 * blocks found by (object, offset) in a chained hash table sized for the
 * budget, each with a bitmap of the bytes written, on its object's list
 * (flushes and removes take an object's blocks) and on the worker's age
 * list (pss_store.c flushes the oldest).
 */
#include "pss_stage.h"

#include "pss_object.h"

#include "ps_mem.h"

#include <stdlib.h>
#include <string.h>

ps_status_t pss_stage_init(pss_stage_t **out, uint64_t budget, uint32_t align, uint32_t mem_align)
{
    pss_stage_t *st;
    size_t n = 64;

    *out = NULL;
    if (budget < align) {
        return PS_OK;
    }
    st = calloc(1, sizeof(*st));
    if (st == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    st->align = align;
    st->mem_align = mem_align;
    st->chunk_len = ps_mem_huge_round((size_t)align + mem_align);
    st->max_blocks = budget / align;
    while (n < st->max_blocks && n < (1u << 24)) {
        n *= 2;
    }
    st->nbuckets = n;
    st->table = calloc(n, sizeof(*st->table));
    if (st->table == NULL) {
        free(st);
        return PS_ERR_NO_MEMORY;
    }
    *out = st;
    return PS_OK;
}

static size_t pss_stage_bucket(const pss_stage_t *st, const pss_object_t *obj, uint64_t off)
{
    uint64_t h = (obj->file_id ^ (off / st->align) * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
    return (size_t)(h >> 29) & (st->nbuckets - 1);
}

pss_sblock_t *pss_stage_find(const pss_stage_t *st, const pss_object_t *obj, uint64_t off)
{
    if (st == NULL || obj->nstaged == 0) {
        return NULL;
    }
    for (pss_sblock_t *b = st->table[pss_stage_bucket(st, obj, off)]; b != NULL; b = b->hnext) {
        if (b->obj == obj && b->off == off) {
            return b;
        }
    }
    return NULL;
}

int pss_stage_whole(const pss_stage_t *st, const pss_object_t *obj, uint64_t off)
{
    const pss_sblock_t *b = pss_stage_find(st, obj, off);
    return b != NULL && b->covered == st->align;
}

int pss_stage_touches(const pss_stage_t *st, const pss_object_t *obj, uint64_t off, uint64_t len)
{
    uint64_t a, first, end;

    if (st == NULL || obj->nstaged == 0 || len == 0) {
        return 0;
    }
    a = st->align;
    first = off / a * a;
    end = off + len;
    if ((end - first) / a > obj->nstaged) {
        for (const pss_sblock_t *b = obj->staged; b != NULL; b = b->onext) {
            if (b->off + a > off && b->off < end) {
                return 1;
            }
        }
        return 0;
    }
    for (uint64_t o = first; o < end; o += a) {
        if (pss_stage_find(st, obj, o) != NULL) {
            return 1;
        }
    }
    return 0;
}

uint64_t pss_stage_new_blocks(const pss_stage_t *st, const pss_object_t *obj, uint64_t off,
                              uint64_t len)
{
    uint64_t a = st->align, n = 0;

    for (uint64_t o = off / a * a; o < off + len; o += a) {
        n += pss_stage_find(st, obj, o) == NULL;
    }
    return n;
}

/* A new block's buffer: the next one of the last chunk, or of a new chunk
 * (buffers are never given back: a freed block keeps its buffer on the
 * spare list, and pss_stage_cleanup unmaps the chunks). Chunks are huge
 * pages where the system has them: with one heap allocation per block,
 * 4 KiB list writes cost the servers up to a tenth more CPU. */
static uint8_t *pss_stage_carve(pss_stage_t *st)
{
    size_t step = (st->align + st->mem_align - 1) / st->mem_align * st->mem_align;
    uint8_t *buf;

    if (st->carve_left == 0) {
        uint8_t **chunks = realloc(st->chunks, (st->nchunks + 1) * sizeof(*chunks));
        if (chunks == NULL) {
            return NULL;
        }
        st->chunks = chunks;
        if ((chunks[st->nchunks] = ps_mem_map_huge(st->chunk_len, 0)) == NULL) {
            return NULL;
        }
        st->carve = chunks[st->nchunks++];
        st->carve_left = st->chunk_len / step;
    }
    buf = st->carve;
    st->carve += step;
    st->carve_left--;
    return buf;
}

static pss_sblock_t *pss_stage_new(pss_stage_t *st, pss_object_t *obj, uint64_t off, uint64_t now)
{
    size_t words = (st->align + 63) / 64;
    pss_sblock_t *b;
    size_t h;

    if (st->nblocks >= st->max_blocks) {
        return NULL;
    }
    if (st->spare != NULL) {
        uint8_t *buf;
        b = st->spare;
        st->spare = b->hnext;
        st->nspare--;
        buf = b->buf;
        memset(b, 0, sizeof(*b) + words * sizeof(uint64_t));
        b->buf = buf;
    } else {
        b = calloc(1, sizeof(*b) + words * sizeof(uint64_t));
        if (b == NULL || (b->buf = pss_stage_carve(st)) == NULL) {
            free(b);
            return NULL;
        }
    }
    b->obj = obj;
    b->off = off;
    b->ns = now;
    b->attached = 1;
    h = pss_stage_bucket(st, obj, off);
    b->hnext = st->table[h];
    st->table[h] = b;
    b->onext = obj->staged;
    if (obj->staged != NULL) {
        obj->staged->oprev = b;
    }
    obj->staged = b;
    obj->nstaged++;
    b->aprev = st->youngest;
    if (st->youngest != NULL) {
        st->youngest->anext = b;
    } else {
        st->oldest = b;
    }
    st->youngest = b;
    st->nblocks++;
    st->nattached++;
    return b;
}

/* Mark bytes [lo, hi) of b written; count the ones that were not. */
static void pss_stage_mark(pss_sblock_t *b, uint32_t lo, uint32_t hi)
{
    while (lo < hi) {
        uint32_t first = lo % 64, n = 64 - first < hi - lo ? 64 - first : hi - lo;
        uint64_t *word = &b->map[lo / 64];
        uint64_t mask = (n == 64 ? ~0ull : (1ull << n) - 1) << first;

        /* fresh bytes, the common case, need no count */
        b->covered += (*word & mask) == 0 ? n : (uint32_t)__builtin_popcountll(mask & ~*word);
        *word |= mask;
        lo += n;
    }
}

pss_sblock_t *pss_stage_get(pss_stage_t *st, pss_object_t *obj, uint64_t boff, uint64_t now)
{
    pss_sblock_t *b = pss_stage_find(st, obj, boff);

    return b != NULL ? b : pss_stage_new(st, obj, boff, now);
}

/* Copy n bytes, 8 <= n <= 2 * W, as two moves of W bytes (the second one
 * overlapping the first): no call per region. */
#define PSS_COPY_TWO(W, dst, src, n)                                                               \
    do {                                                                                           \
        uint8_t head_[W], tail_[W];                                                                \
        memcpy(head_, (src), W);                                                                   \
        memcpy(tail_, (src) + (n) - (W), W);                                                       \
        memcpy((dst), head_, W);                                                                   \
        memcpy((dst) + (n) - (W), tail_, W);                                                       \
    } while (0)

/* memcpy for a region of a stream of small ones (a call each was a fifth
 * of the servers' time writing 64-byte regions). */
static inline void pss_copy_region(uint8_t *dst, const uint8_t *src, uint64_t len)
{
    if (len > 64 || len < 8) {
        memcpy(dst, src, len);
    } else if (len > 32) {
        PSS_COPY_TWO(32, dst, src, len);
    } else if (len > 16) {
        PSS_COPY_TWO(16, dst, src, len);
    } else {
        PSS_COPY_TWO(8, dst, src, len);
    }
}

void pss_stage_put_in(pss_sblock_t *b, uint64_t off, const uint8_t *src, uint64_t len,
                      uint64_t stride, uint64_t count)
{
    uint32_t at = (uint32_t)(off - b->off);

    for (uint64_t c = 0; c < count; c++, at += (uint32_t)stride, src += len) {
        pss_copy_region(b->buf + at, src, len);
        pss_stage_mark(b, at, at + (uint32_t)len);
    }
}

void pss_stage_mark_spec(pss_sblock_t *b)
{
    if (!b->spec && b->attached) {
        b->spec = 1;
        b->obj->spec_waiting++;
    }
}

void pss_stage_detach(pss_stage_t *st, pss_sblock_t *b)
{
    pss_object_t *obj = b->obj;
    pss_sblock_t **pp = &st->table[pss_stage_bucket(st, obj, b->off)];

    if (!b->attached) {
        return;
    }
    obj->spec_waiting -= b->spec;
    for (; *pp != NULL; pp = &(*pp)->hnext) {
        if (*pp == b) {
            *pp = b->hnext;
            break;
        }
    }
    if (b->oprev != NULL) {
        b->oprev->onext = b->onext;
    } else {
        obj->staged = b->onext;
    }
    if (b->onext != NULL) {
        b->onext->oprev = b->oprev;
    }
    if (b->aprev != NULL) {
        b->aprev->anext = b->anext;
    } else {
        st->oldest = b->anext;
    }
    if (b->anext != NULL) {
        b->anext->aprev = b->aprev;
    } else {
        st->youngest = b->aprev;
    }
    b->hnext = b->onext = b->oprev = b->anext = b->aprev = NULL;
    b->attached = 0;
    obj->nstaged--;
    st->nattached--;
}

/*
 * Freed blocks are all kept for the next ones: a flush frees blocks as fast
 * as interleaved writes stage new ones (malloc and free of each took 7% of
 * a server's samples in a 512-byte vector write), and blocks given back to
 * the system came back as fresh pages, zeroed by the kernel and touched
 * again (with 1,024 kept, 64-byte vector writes spent 9.6% of a server's
 * samples in clear_page). Blocks in use and kept never pass the budget.
 */
void pss_stage_free_block(pss_stage_t *st, pss_sblock_t *b)
{
    pss_stage_detach(st, b);
    st->nblocks--;
    b->hnext = st->spare;
    st->spare = b;
    st->nspare++;
}

void pss_stage_drop_object(pss_stage_t *st, pss_object_t *obj)
{
    while (st != NULL && obj->staged != NULL) {
        pss_stage_free_block(st, obj->staged);
    }
}

size_t pss_stage_ranges(const pss_stage_t *st, const pss_sblock_t *b, uint32_t (*out)[2])
{
    size_t n = 0;
    uint32_t i = 0, a = st->align;

    if (b->covered == a) { /* whole: the common case of a flush */
        if (out != NULL) {
            out[0][0] = 0;
            out[0][1] = a;
        }
        return 1;
    }
    while (i < a) {
        while (i < a && !(b->map[i / 64] & (1ull << (i % 64)))) {
            i = (i % 64 == 0 && b->map[i / 64] == 0) ? i + 64 : i + 1;
        }
        if (i >= a) {
            break;
        }
        uint32_t lo = i;
        while (i < a && (b->map[i / 64] & (1ull << (i % 64)))) {
            i = (i % 64 == 0 && b->map[i / 64] == ~0ull) ? i + 64 : i + 1;
        }
        if (out != NULL) {
            out[n][0] = lo;
            out[n][1] = i < a ? i : a;
        }
        n++;
    }
    return n;
}

/* Copy b's written bytes inside [off, off + len) over buf (buf[0] is at off). */
static void pss_stage_overlay_block(const pss_stage_t *st, const pss_sblock_t *b, uint64_t off,
                                    uint64_t len, uint8_t *buf)
{
    uint64_t lo = b->off > off ? b->off : off;
    uint64_t hi = b->off + st->align < off + len ? b->off + st->align : off + len;

    if (b->covered == st->align) {
        memcpy(buf + (lo - off), b->buf + (lo - b->off), hi - lo);
        return;
    }
    for (uint64_t o = lo; o < hi; o++) {
        uint64_t i = o - b->off;
        if (b->map[i / 64] & (1ull << (i % 64))) {
            buf[o - off] = b->buf[i];
        }
    }
}

void pss_stage_overlay(const pss_stage_t *st, const pss_object_t *obj, uint64_t off, uint64_t len,
                       uint8_t *buf)
{
    uint64_t a;

    if (st == NULL || obj->nstaged == 0 || len == 0) {
        return;
    }
    a = st->align;
    if ((off + len - off / a * a) / a > obj->nstaged) {
        for (const pss_sblock_t *b = obj->staged; b != NULL; b = b->onext) {
            if (b->off + a > off && b->off < off + len) {
                pss_stage_overlay_block(st, b, off, len, buf);
            }
        }
        return;
    }
    for (uint64_t o = off / a * a; o < off + len; o += a) {
        const pss_sblock_t *b = pss_stage_find(st, obj, o);
        if (b != NULL) {
            pss_stage_overlay_block(st, b, off, len, buf);
        }
    }
}

void pss_stage_cleanup(pss_stage_t *st)
{
    if (st == NULL) {
        return;
    }
    while (st->oldest != NULL) {
        pss_stage_free_block(st, st->oldest);
    }
    while (st->spare != NULL) {
        pss_sblock_t *b = st->spare;
        st->spare = b->hnext;
        free(b);
    }
    for (size_t i = 0; i < st->nchunks; i++) {
        ps_mem_unmap_huge(st->chunks[i], st->chunk_len, 0);
    }
    free(st->chunks);
    free(st->table);
    free(st);
}

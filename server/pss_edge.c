/*
 * pss_edge.c: kept edge blocks of recent writes (see pss_edge.h): a small
 * ring of PSS_EDGE_SLOTS blocks per object, allocated at the first write.
 */
#include "pss_edge.h"

#include <stdlib.h>
#include <string.h>

static int pss_edge_find(const pss_edges_t *e, uint64_t block)
{
    for (int i = 0; i < PSS_EDGE_SLOTS; i++) {
        if ((e->valid & (1u << i)) && e->off[i] == block) {
            return i;
        }
    }
    return -1;
}

static void pss_edge_keep(pss_edges_t *e, uint32_t align, uint64_t block, const uint8_t *src)
{
    int i = pss_edge_find(e, block);

    if (i < 0) {
        i = (int)(e->next++ % PSS_EDGE_SLOTS);
        e->off[i] = block;
        e->valid |= 1u << i;
    }
    memcpy(e->buf + (size_t)i * align, src, align);
}

void pss_edge_note(pss_edges_t *e, uint32_t align, uint64_t off, uint64_t len, const uint8_t *buf)
{
    if (len < align) {
        return;
    }
    if (e->buf == NULL) {
        e->buf = malloc((size_t)PSS_EDGE_SLOTS * align);
        if (e->buf == NULL) {
            return; /* no copies: writes read what they need, as without them */
        }
        e->valid = 0;
    }
    /* blocks inside the span that were kept from earlier writes */
    for (int i = 0; i < PSS_EDGE_SLOTS; i++) {
        if ((e->valid & (1u << i)) && e->off[i] >= off && e->off[i] < off + len) {
            memcpy(e->buf + (size_t)i * align, buf + (e->off[i] - off), align);
        }
    }
    pss_edge_keep(e, align, off, buf);
    pss_edge_keep(e, align, off + len - align, buf + len - align);
}

int pss_edge_copy(const pss_edges_t *e, uint32_t align, uint64_t off, uint64_t len, uint8_t *dst)
{
    uint64_t block = off / align * align;
    int i;

    if (e->buf == NULL || len == 0 || off + len > block + align) {
        return 0;
    }
    i = pss_edge_find(e, block);
    if (i < 0) {
        return 0;
    }
    if (dst != NULL) {
        memcpy(dst, e->buf + (size_t)i * align + (off - block), len);
    }
    return 1;
}

void pss_edge_drop(pss_edges_t *e)
{
    e->valid = 0;
}

void pss_edge_free(pss_edges_t *e)
{
    free(e->buf);
    e->buf = NULL;
    e->valid = 0;
}

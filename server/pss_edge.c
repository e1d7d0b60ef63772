/*
 * pss_edge.c: kept edge blocks of recent writes (see pss_edge.h): a small
 * ring of PSS_EDGE_SLOTS blocks per object, allocated at the first write.
 */
#include "pss_edge.h"

#include <stdlib.h>
#include <string.h>

static int pss_edge_find(const pss_object_t *obj, uint64_t block)
{
    for (int i = 0; i < PSS_EDGE_SLOTS; i++) {
        if ((obj->edge_valid & (1u << i)) && obj->edge_off[i] == block) {
            return i;
        }
    }
    return -1;
}

static void pss_edge_keep(pss_object_t *obj, uint32_t align, uint64_t block, const uint8_t *src)
{
    int i = pss_edge_find(obj, block);

    if (i < 0) {
        i = (int)(obj->edge_next++ % PSS_EDGE_SLOTS);
        obj->edge_off[i] = block;
        obj->edge_valid |= 1u << i;
    }
    memcpy(obj->edge_buf + (size_t)i * align, src, align);
}

void pss_edge_note(pss_object_t *obj, uint32_t align, uint64_t off, uint64_t len,
                   const uint8_t *buf)
{
    if (len < align) {
        return;
    }
    if (obj->edge_buf == NULL) {
        obj->edge_buf = malloc((size_t)PSS_EDGE_SLOTS * align);
        if (obj->edge_buf == NULL) {
            return; /* no copies: writes read what they need, as without them */
        }
        obj->edge_valid = 0;
    }
    /* blocks inside the span that were kept from earlier writes */
    for (int i = 0; i < PSS_EDGE_SLOTS; i++) {
        if ((obj->edge_valid & (1u << i)) && obj->edge_off[i] >= off &&
            obj->edge_off[i] < off + len) {
            memcpy(obj->edge_buf + (size_t)i * align, buf + (obj->edge_off[i] - off), align);
        }
    }
    pss_edge_keep(obj, align, off, buf);
    pss_edge_keep(obj, align, off + len - align, buf + len - align);
}

int pss_edge_copy(const pss_object_t *obj, uint32_t align, uint64_t off, uint64_t len, uint8_t *dst)
{
    uint64_t block = off / align * align;
    int i;

    if (obj->edge_buf == NULL || len == 0 || off + len > block + align) {
        return 0;
    }
    i = pss_edge_find(obj, block);
    if (i < 0) {
        return 0;
    }
    if (dst != NULL) {
        memcpy(dst, obj->edge_buf + (size_t)i * align + (off - block), len);
    }
    return 1;
}

void pss_edge_drop(pss_object_t *obj)
{
    obj->edge_valid = 0;
}

void pss_edge_free(pss_object_t *obj)
{
    free(obj->edge_buf);
    obj->edge_buf = NULL;
    obj->edge_valid = 0;
}

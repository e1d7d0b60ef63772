/*
 * stage_box (stage_box.h): one block of a write-back stage, for the unit
 * tests of server/pss_stage.c, which is compiled in from here (as
 * cache_box.c does for the server's cache).
 */
#include "stage_box.h"

#include "pss_stage.c"

struct stage_box {
    pss_stage_t *st;
    pss_object_t obj;
    pss_sblock_t *blk;
};

stage_box *stage_box_new(uint32_t align)
{
    stage_box *b = calloc(1, sizeof(*b));

    if (b == NULL || pss_stage_init(&b->st, 4 * (uint64_t)align, align, 512) != PS_OK ||
        b->st == NULL || (b->blk = pss_stage_get(b->st, &b->obj, 0, 1)) == NULL) {
        if (b != NULL && b->st != NULL) {
            pss_stage_cleanup(b->st);
        }
        free(b);
        return NULL;
    }
    memset(b->blk->buf, 0, align);
    return b;
}

void stage_box_free(stage_box *b)
{
    pss_stage_drop_object(b->st, &b->obj);
    pss_stage_cleanup(b->st);
    free(b);
}

void stage_box_put(stage_box *b, uint64_t off, const uint8_t *src, uint64_t len, uint64_t stride,
                   uint64_t count)
{
    pss_stage_put_in(b->blk, off, src, len, stride, count);
}

const uint8_t *stage_box_bytes(const stage_box *b)
{
    return b->blk->buf;
}

uint32_t stage_box_covered(const stage_box *b)
{
    return b->blk->covered;
}

size_t stage_box_ranges(const stage_box *b, uint32_t (*out)[2], size_t max)
{
    uint32_t(*all)[2] = malloc(b->st->align * sizeof(*all));
    size_t n;

    if (all == NULL) {
        abort(); /* a test without memory cannot go on */
    }
    n = pss_stage_ranges(b->st, b->blk, all);

    for (size_t i = 0; i < n && i < max; i++) {
        out[i][0] = all[i][0];
        out[i][1] = all[i][1];
    }
    free(all);
    return n;
}

/*
 * stage_box: one staged block of the server's write-back stage
 * (server/pss_stage.c) behind a plain C interface for the unit tests,
 * which are C++ and cannot include the server's headers (C11 atomics).
 */
#ifndef STAGE_BOX_H
#define STAGE_BOX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stage_box stage_box;

/* A stage of blocks of align bytes holding one block at object offset 0
 * (its bytes zero); NULL if out of memory. */
stage_box *stage_box_new(uint32_t align);
void stage_box_free(stage_box *b);
/* pss_stage_put_in on the block (off: in the object, inside the block) */
void stage_box_put(stage_box *b, uint64_t off, const uint8_t *src, uint64_t len, uint64_t stride,
                   uint64_t count);
const uint8_t *stage_box_bytes(const stage_box *b);
uint32_t stage_box_covered(const stage_box *b);
/* pss_stage_ranges: how many, the first max of them in out */
size_t stage_box_ranges(const stage_box *b, uint32_t (*out)[2], size_t max);

#ifdef __cplusplus
}
#endif

#endif

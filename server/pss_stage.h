/*
 * pss_stage.h: the worker's write-back stage for partial blocks.
 *
 * Two processes writing interleaved small regions of the same blocks (a
 * vector view: process r writes region i at (2i + r) * z) send batches that
 * each cover only part of every block. Written at once, every block costs
 * a read-modify-write, or 4 KiB pieces; a local file system meets both
 * halves in its page cache before writeback. So the bytes of a write span
 * that leaves a block partly written (and of any span touching a block
 * already staged, and, while several clients write the object, the short
 * runs of whole blocks of a strided write: 32 KiB regions of the same
 * pattern) are copied here, one buffer per file-system block keyed
 * by object and offset, and the write is acknowledged after the copy.
 * Later writes to the same blocks land in the same buffers; whole blocks
 * are written at once when they make a long run (pss_job.c: a whole span
 * of the write, or 16 blocks; one I/O per run, one io_submit), else with
 * their neighbours or at their age as partial ones are; a block still
 * partial is written after
 * `write_back_age`, before OBJ_SYNC, OBJ_FLUSH (a writer's close), truncate
 * and the object's close, and when the
 * stage is full (read-modify-write for its missing bytes, or blind where
 * the edge blocks or the end of the file give them). Reads overlay the
 * staged bytes on what they read from disk.
 *
 * This file is only the table: blocks, their coverage bitmaps, the age
 * list and the byte budget. What is flushed when is pss_store.c's; how,
 * pss_job.c's. Only the owning worker touches its stage: no locks.
 *
 * What the stage changes: a server crash loses the staged bytes, exactly
 * as a crash loses a local file system's dirty pages. MPI promises
 * durability only after MPI_File_sync; OBJ_SYNC writes the object's staged
 * blocks first, and a client whose server restarted since its last write,
 * or whose staged bytes failed on disk, gets an error from its next sync
 * or close (lib/psc_sync.c).
 */
#ifndef PSS_STAGE_H
#define PSS_STAGE_H

#include "pss.h"

typedef struct pss_sblock pss_sblock_t;

/* One staged block. */
struct pss_sblock {
    pss_sblock_t *hnext;         /* hash chain */
    pss_sblock_t *oprev, *onext; /* its object's staged blocks */
    pss_sblock_t *aprev, *anext; /* the worker's, oldest first */
    pss_object_t *obj;
    uint64_t off;     /* object offset, a multiple of align */
    uint64_t ns;      /* when its first bytes were staged (CLOCK_MONOTONIC) */
    uint32_t covered; /* bytes of it written */
    int attached;     /* in the table (else a flush job owns it) */
    int spec;         /* staged by a short span, to be joined by its neighbours */
    uint8_t *buf;     /* align bytes, aligned for direct I/O */
    uint64_t map[];   /* bit i: byte i written */
};

typedef struct pss_stage {
    pss_sblock_t **table; /* hash by (object, offset), chained */
    size_t nbuckets;      /* a power of 2 */
    pss_sblock_t *oldest, *youngest;
    uint64_t nblocks;     /* in use: attached or owned by a flush job */
    pss_sblock_t *spare;  /* freed blocks kept for reuse (chained by hnext) */
    uint64_t nspare;
    uint64_t nattached;   /* in the table */
    uint64_t max_blocks;  /* budget: write_back / align */
    uint32_t align, mem_align;
    uint8_t **chunks; /* the blocks' buffers, carved from huge-page chunks */
    size_t nchunks, chunk_len;
    uint8_t *carve;    /* the next buffer in the last chunk */
    size_t carve_left; /* buffers left there */
} pss_stage_t;

/* The stage of a worker with budget bytes (0: no stage, *out is NULL). */
ps_status_t pss_stage_init(pss_stage_t **out, uint64_t budget, uint32_t align, uint32_t mem_align);

/* Free every block and the stage (worker exit, after the last flush). */
void pss_stage_cleanup(pss_stage_t *st);

/* The staged block of obj at off (a multiple of align), or NULL. */
pss_sblock_t *pss_stage_find(const pss_stage_t *st, const pss_object_t *obj, uint64_t off);

/* Is obj's block at off (a multiple of align) staged and whole? */
int pss_stage_whole(const pss_stage_t *st, const pss_object_t *obj, uint64_t off);

/* Does obj have a staged block inside [off, off + len)? */
int pss_stage_touches(const pss_stage_t *st, const pss_object_t *obj, uint64_t off, uint64_t len);

/* Blocks not staged yet that staging [off, off + len) of obj would add. */
uint64_t pss_stage_new_blocks(const pss_stage_t *st, const pss_object_t *obj, uint64_t off,
                              uint64_t len);

/* The staged block of obj at boff (a multiple of align), staged now (and
 * stamped now) if it is not; NULL if the budget is spent or memory ran out. */
pss_sblock_t *pss_stage_get(pss_stage_t *st, pss_object_t *obj, uint64_t boff, uint64_t now);

/* Copy count regions of len bytes, region c from src + c * len to object
 * offset off + c * stride, into staged block b (they lie inside it). */
void pss_stage_put_in(pss_sblock_t *b, uint64_t off, const uint8_t *src, uint64_t len,
                      uint64_t stride, uint64_t count);

/* Mark b as staged by a short span (counted in its object's spec_waiting
 * until it leaves the table). */
void pss_stage_mark_spec(pss_sblock_t *b);

/* Take b out of the table (a flush job owns it until pss_stage_free_block). */
void pss_stage_detach(pss_stage_t *st, pss_sblock_t *b);

/* Free a detached block (kept for the next one: pss_stage_cleanup frees). */
void pss_stage_free_block(pss_stage_t *st, pss_sblock_t *b);

/* Detach and free every block of obj (it was removed: its bytes go too). */
void pss_stage_drop_object(pss_stage_t *st, pss_object_t *obj);

/* Copy the staged bytes of obj inside [off, off + len) over buf (which
 * holds those bytes as read from disk). */
void pss_stage_overlay(const pss_stage_t *st, const pss_object_t *obj, uint64_t off, uint64_t len,
                       uint8_t *buf);

/* The written ranges of b as [lo, hi) offsets in the block, in order,
 * written to out (unless NULL); returns how many. */
size_t pss_stage_ranges(const pss_stage_t *st, const pss_sblock_t *b, uint32_t (*out)[2]);

#endif

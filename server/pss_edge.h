/*
 * pss_edge.h: copies of the edge blocks of an object's recent writes.
 *
 * A write that starts or ends inside a block needs that block's other
 * bytes: without them the span is read before it is written
 * (read-modify-write, pss_job.c). Writes that follow each other (appends
 * of unaligned records, HDF5's chunks, one process's region next to
 * another's) start in the very block the previous write ended in. So the
 * first and last block of every span written are kept, a few per object,
 * and a later write whose missing bytes all lie in kept blocks (or past
 * the end of the file, where they are zeros) is written blind.
 *
 * Coherent because only the object's worker writes it and jobs that share
 * a block never run at once (pss_job_conflicts): a block is refreshed by
 * every write that covers it and forgotten when a write fails, on resize,
 * remove and close.
 */
#ifndef PSS_EDGE_H
#define PSS_EDGE_H

#include "pss.h"

#define PSS_EDGE_SLOTS 8 /* edge blocks of recent writes an object keeps */

/* One object's kept blocks (a member of pss_object_t). */
typedef struct pss_edges {
    uint8_t *buf;                 /* PSS_EDGE_SLOTS blocks of align bytes, or NULL */
    uint64_t off[PSS_EDGE_SLOTS]; /* object offset of each kept block */
    uint32_t valid;               /* bit i: slot i holds a block */
    uint32_t next;                /* slot to replace next (a ring) */
} pss_edges_t;

/* The span [off, off + len) of the object (whole blocks of align bytes) was
 * written from buf: refresh the kept blocks inside it and keep its first and
 * last block. Without memory for the blocks nothing is kept. */
void pss_edge_note(pss_edges_t *e, uint32_t align, uint64_t off, uint64_t len, const uint8_t *buf);

/* If the block holding [off, off + len) (which must lie in one block) is
 * kept, copy those bytes to dst (unless dst is NULL) and return 1. */
int pss_edge_copy(const pss_edges_t *e, uint32_t align, uint64_t off, uint64_t len, uint8_t *dst);

/* Forget every kept block (its bytes changed or are unknown). */
void pss_edge_drop(pss_edges_t *e);

/* Free the kept blocks' memory (the object goes away). */
void pss_edge_free(pss_edges_t *e);

#endif

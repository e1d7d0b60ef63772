/*
 * pss_share.h: objects several clients read, or write, at once.
 *
 * When several clients read interleaved regions of the same blocks (every
 * process of a strided pattern, each read cache filling whole blocks), each
 * would read the same spans from disk. Once a second client reads an object
 * (within PSS_SHARE_WINDOW_NS of another), the object's reads are shared for
 * a while: a read job waits for a running read of the same blocks instead
 * of reading them again, and then finds its spans in the worker's cache
 * (pss_cache.h), which keeps what every read and write moved.
 *
 * Writes are noted the same way, in a pss_share_t of their own: while
 * several clients write an object, the short spans of a strided write wait
 * in the write-back stage for the other writers' blocks between them
 * (pss_plan.c), so that the blocks go to disk in long runs. A lone strided
 * writer's gaps never fill: its spans are written at once; so are those of
 * writers whose gaps nobody fills, once a trial of their short spans went
 * out unjoined (PSS_SPEC_TRIAL, pss_jobdef.h).
 */
#ifndef PSS_SHARE_H
#define PSS_SHARE_H

#include "pss.h"

/* One object's side of it (members of pss_object_t: one for reads, one for
 * writes). */
typedef struct pss_share {
    const void *last_conn; /* connection of the last job */
    uint64_t last_ns;      /* when the last job started or ended */
    uint64_t until;        /* ns: shared until then */
} pss_share_t;

/* A job of conn starts on the object: is the object read (or written) by
 * several clients now (another's job started or ended a moment ago)? */
int pss_share_note(pss_share_t *sh, const void *conn);

/* A client's job on the object ended: the next client's is as close to it
 * as to its start (a slow disk's write can outlast the window). */
void pss_share_note_end(pss_share_t *sh);

/* Is it now (without noting a job)? */
int pss_share_active(const pss_share_t *sh);

#endif

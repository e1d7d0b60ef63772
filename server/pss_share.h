/*
 * pss_share.h: disk reads shared by the clients that read one object.
 *
 * When several clients read interleaved regions of the same blocks (every
 * process of a strided pattern, each read cache filling whole blocks), each
 * would read the same spans from disk. Once a second client reads an object
 * (within PSS_SHARE_WINDOW_NS of another), the object's reads are shared for
 * a while: a read job waits for a running read of the same blocks instead
 * of reading them again, and then finds its spans in the worker's cache
 * (pss_cache.h), which keeps what every read and write moved.
 */
#ifndef PSS_SHARE_H
#define PSS_SHARE_H

#include "pss.h"

/* One object's side of it (a member of pss_object_t). */
typedef struct pss_share {
    const void *last_reader; /* connection of the last read job */
    uint64_t last_read_ns;   /* when it started */
    uint64_t until;          /* ns: reads are shared until then */
} pss_share_t;

/* A read job of conn starts on the object: is the object read by several clients
 * now (its reads shared)? */
int pss_share_note_reader(pss_worker_t *w, pss_share_t *sh, const void *conn);

/* Is the object's reading shared now (without noting a reader)? */
int pss_share_active(const pss_share_t *sh);

#endif

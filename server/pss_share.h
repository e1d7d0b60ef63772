/*
 * pss_share.h: disk reads shared by the clients that read one object.
 *
 * When several clients read interleaved regions of the same blocks (every
 * process of a strided pattern, each read cache filling whole blocks), each
 * would read the same spans from disk. Once a second client reads an object
 * (within PSS_SHARE_WINDOW_NS of another), the object's reads are shared for
 * a while: a read job waits for a running read of the same blocks instead
 * of reading them again, the spans read are kept in a per-worker LRU of
 * read_share bytes, and a span inside a kept one is copied from memory.
 * A write job drops the kept spans it touches before it starts; resize,
 * remove and close drop all of the object's.
 */
#ifndef PSS_SHARE_H
#define PSS_SHARE_H

#include "pss.h"

/* One object's side of it (a member of pss_object_t). */
typedef struct pss_share {
    pss_rspan_t *spans;      /* kept read spans */
    const void *last_reader; /* connection of the last read job */
    uint64_t last_read_ns;   /* when it started */
    uint64_t until;          /* ns: reads are shared until then */
} pss_share_t;

/* A read job of conn starts on the object: is the object read by several clients
 * now (its reads shared)? */
int pss_share_note_reader(pss_worker_t *w, pss_share_t *sh, const void *conn);

/* Is the object's reading shared now (without noting a reader)? */
int pss_share_active(const pss_share_t *sh);

/* Copy [off, off + len) of the object from a kept span into dst: 1 if it was kept. */
int pss_share_copy(pss_worker_t *w, pss_share_t *sh, uint64_t off, uint64_t len, uint8_t *dst);

/* Keep a copy of the object's bytes [off, off + len) just read from disk. */
void pss_share_keep(pss_worker_t *w, pss_share_t *sh, uint64_t off, uint64_t len,
                    const uint8_t *src);

/* Drop the object's kept spans that intersect [lo, hi). */
void pss_share_drop(pss_worker_t *w, pss_share_t *sh, uint64_t lo, uint64_t hi);

#endif

/*
 * pss_readahead.h: reading ahead of the clients that walk an object forward
 * (the policy; pss_read_ahead in pss_job.c reads).
 *
 * A local file system reads ahead into the page cache, which every process
 * shares: two processes reading alternate chunks of a file (HDF5 chunks of
 * a column decomposition, the bands of a strided view) each find the
 * other's read-ahead. The servers use direct I/O, so without this every
 * small or medium read waited for its own disk I/O, and a 256 KiB read took
 * 2 to 4 times the disk's own time for it (0.6-0.7 ms against fio's 0.15-0.3).
 *
 * Per object, up to PSS_RA_STREAMS streams (processes reading their own
 * parts of it, or all of them walking it together). A read that the cache
 * keeps (pss_span_keep: small, several regions, or of an object several
 * clients read; not the whole megabytes of one client's large stream,
 * which go straight into the reply), or one the cache served whole from
 * its memory (a stream of 1 MiB reads keeps its read-ahead once its reads
 * come from what was read ahead), continues the stream whose front is within
 * one window of its start (the server tunable read_ahead, 4m), or starts a
 * new one in place of the stream unused longest. From a stream's
 * second forward read on (ending past its front), when less than half a
 * window is ahead, the worker reads the rest of the next window past the
 * front (below the object's size, skipping what its cache holds) into its
 * cache (pss_cache.h), one job per max_io bytes. A read that meets a
 * read-ahead in flight waits for that job (pss_job_conflicts) and then
 * copies from the cache.
 */
#ifndef PSS_READAHEAD_H
#define PSS_READAHEAD_H

#include <stdint.h>

#define PSS_RA_STREAMS 4 /* streams followed per object (processes reading their own parts) */

typedef struct pss_ra_stream {
    uint64_t end;    /* end of its furthest read */
    uint64_t ahead;  /* end of what was read ahead */
    uint64_t used;   /* pss_ra_t.clock at its last read (0: unused) */
    uint32_t streak; /* forward reads in a row */
} pss_ra_stream_t;

/* One object's side of it (a member of pss_object_t). */
typedef struct pss_ra {
    pss_ra_stream_t s[PSS_RA_STREAMS];
    uint64_t clock; /* reads noted */
    unsigned last;  /* the stream of the last read noted */
} pss_ra_t;

/* A read job of an object of `size` bytes finished (OK) over [lo, hi)
 * (aligned); kept: its spans went into the cache. 1 and [*from, *to)
 * (aligned, below size rounded up) to read ahead now, counted as read
 * ahead; 0: nothing to read. win: the read_ahead window (0: none). */
int pss_ra_note(pss_ra_t *ra, uint64_t win, uint64_t align, uint64_t size, uint64_t lo,
                uint64_t hi, int kept, uint64_t *from, uint64_t *to);

/* The read-ahead pss_ra_note asked for last could not start at `at` (no
 * memory, or a write of those bytes runs): nothing past it is ahead, so the
 * stream's next forward read asks again. */
void pss_ra_stopped(pss_ra_t *ra, uint64_t at);

/* Forget the streams (the object's cached bytes were dropped). */
void pss_ra_reset(pss_ra_t *ra);

#endif

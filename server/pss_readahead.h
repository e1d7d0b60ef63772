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
 * As Linux's page cache does, it reads ahead only what reads show to be a
 * stream, in a window that grows while what it read ahead is used:
 *
 * - Per object, up to PSS_RA_STREAMS streams (processes reading their own
 *   parts of it, or all of them walking it together). A read from disk
 *   that the cache keeps (pss_span_keep: small, several regions, or of an
 *   object several clients read; not the whole megabytes of one client's
 *   large stream, which go straight into the reply) continues the stream
 *   whose end is nearest, of those it reaches (past the stream's end, a
 *   window beyond what it read ahead; behind it, half a window; the
 *   read's length while the stream has no window), or starts one in place
 *   of the stream unused longest.
 *   A read the cache served counts only for the stream reading ahead
 *   whose last window behind its front, or what it read ahead, it meets:
 *   HDF5's chunk index, read from the cache for every call, took every
 *   stream's place and pushed the data's reads out of the last reads.
 * - A stream reads ahead first when one of its reads follows on from one
 *   of the object's last PSS_RA_RECENT reads from disk (any client's,
 *   large ones too), at most its own length after it: a window of two to
 *   four times the two reads' bytes, never less. A small read (not a
 *   scattered piece) further on, at most 7 times its length and
 *   PSS_RA_GAP, follows on too when it keeps a stride: the last read is
 *   as long, and as far past another of the last reads. One reader of
 *   one 4-8 KiB chunk in up to 8, or of one 16 KiB chunk in up to 5, is
 *   a stream (reading the gaps costs less than a disk read per chunk);
 *   of one 4 KiB chunk in 9, or of 64 KiB chunks in 3, is not; random
 *   reads, and a small read shortly after a large one, keep no stride.
 *   Random reads (IOR -z) seldom follow on from another and read nothing
 *   ahead; before, a read within a window of a stream's front started a
 *   4 MiB window, and the servers read 6 times the bytes of IOR's random
 *   47008-byte reads.
 * - A read the cache served from a stream's last read-ahead (Linux's
 *   PG_readahead) doubles the window (quadruples it while small), up to
 *   read_ahead. A read from disk past the front of a stream that reads
 *   ahead, within a window of what it read ahead, moves it on too: of
 *   processes reading alternate chunks each at its own pace, the one
 *   ahead reads P chunks past its last read, next to none of the last
 *   reads (a review's case, session 84).
 * - When less than half a window is ahead of a stream's front after such
 *   a read, the worker reads the rest of the window past the front (below
 *   the object's size, past what the object's other streams read ahead,
 *   skipping what its cache holds) into its cache (pss_cache.h), one job
 *   per max_io bytes. A read that meets a read-ahead in flight waits for
 *   that job (pss_job_conflicts) and then copies from the cache.
 *
 * A job notes its reads by runs of spans (pss_job_read_runs in
 * pss_plan.c): a job merged from two clients' streams far apart is two
 * reads, not one over its hull. The pieces of a request scattered over
 * more than PSS_RA_SCATTER runs count only where they continue a stream
 * or follow on from a last read: 8 of them between two reads of a stream
 * pushed its reads out of the last reads, and it never read ahead.
 */
#ifndef PSS_READAHEAD_H
#define PSS_READAHEAD_H

#include <stdint.h>

#define PSS_RA_STREAMS 8 /* streams followed per object (processes reading their own parts) */
#define PSS_RA_RECENT  8 /* reads remembered per object, for reads that follow on */

typedef struct pss_ra_stream {
    uint64_t end;    /* end of its furthest read */
    uint64_t ahead;  /* end of what was read ahead */
    uint64_t mark;   /* start of the read-ahead a cached read grows the window from */
    uint64_t window; /* bytes it reads ahead (0: nothing yet) */
    uint64_t used;   /* pss_ra_t.clock at its last read (0: unused) */
} pss_ra_stream_t;

/* One object's side of it (a member of pss_object_t). */
typedef struct pss_ra {
    pss_ra_stream_t s[PSS_RA_STREAMS];
    /* the object's last reads, for reads that follow on */
    uint64_t recent_lo[PSS_RA_RECENT], recent_hi[PSS_RA_RECENT];
    unsigned recent_next; /* the slot the next read takes */
    uint64_t clock;       /* reads noted */
    unsigned last;        /* the stream of the last read noted */
} pss_ra_t;

/* Bytes past one of the last reads within which a small read that keeps
 * a stride follows on from it (and within 7 times its length: one chunk
 * in 9 or more would read 9 times the bytes it uses or more, which loses
 * once the disk's bandwidth is the limit; scattered pieces follow on only
 * within their own length). Reading a gap through costs less than a disk
 * read of its own while the gap is smaller than what the disk moves in one
 * I/O's fixed cost: fio on this host (direct, queue depth 1) reads 4 KiB
 * in 33-40 us, 64 KiB in 52-54, 128 KiB in 74 and 1 MiB in 400-427 (about
 * 30 us and 0.37 us per KiB), so gaps up to about 90 KiB are worth
 * reading. (Before, a reader of one 4-16 KiB chunk in 3 or 4 read each
 * chunk from disk.) */
#define PSS_RA_GAP (64u * 1024)

/* How a read was served (pss_ra_note's how). */
#define PSS_RA_KEPT      1u /* the cache keeps its bytes (or they were read ahead) */
#define PSS_RA_CACHED    2u /* served from the cache */
#define PSS_RA_SCATTERED 4u /* a piece of a request of many far apart (pss_job_read_runs) */

/* Runs of one request in a job beyond which its pieces are scattered: a
 * read of those that neither continues a stream nor follows on from one
 * of the last reads is forgotten, or one list read of scattered pieces
 * (an HDF5 column of rows 12 KiB or more apart) pushed every stream's
 * reads out of the last PSS_RA_RECENT. */
#define PSS_RA_SCATTER (PSS_RA_RECENT / 2)

/* A read of an object of `size` bytes finished (OK) over [lo, hi)
 * (aligned); how: PSS_RA_* flags. 1 and [*from, *to) (aligned, below size
 * rounded up) to read ahead now, counted as read ahead; 0: nothing to read.
 * win: the read_ahead window (0: none). */
int pss_ra_note(pss_ra_t *ra, uint64_t win, uint64_t align, uint64_t size, uint64_t lo, uint64_t hi,
                unsigned how, uint64_t *from, uint64_t *to);

/* The read-ahead pss_ra_note asked for could not start at `at` (no memory,
 * or a write of those bytes runs): nothing past it is ahead, so the
 * stream's next forward read asks again. stream: ra->last right after that
 * pss_ra_note (a job that started before may have noted another read). */
void pss_ra_stopped(pss_ra_t *ra, unsigned stream, uint64_t at);

/* Forget the streams (the object's cached bytes were dropped). */
void pss_ra_reset(pss_ra_t *ra);

#endif

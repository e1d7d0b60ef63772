/*
 * pss_jobdef.h: the insides of an I/O job (pss_job.h), shared by the files
 * that plan jobs (pss_plan.c) and run them (pss_job.c, pss_aio.c); nothing
 * else includes it.
 */
#ifndef PSS_JOBDEF_H
#define PSS_JOBDEF_H

#include "pss_object.h"
#include "pss_stage.h"

/* A part of one region, or count whole regions of one run, inside one span:
 * region c at span_off + c * stride in the span, at mem + c * len in memory. */
typedef struct pss_piece {
    uint64_t span_off; /* bytes from the span's start, of the first region */
    uint64_t len;      /* bytes of each region */
    uint64_t stride;   /* bytes between region starts */
    uint64_t count;    /* regions */
    uint64_t obj_off;  /* object offset of the first region */
    uint8_t *mem;      /* write: source in the payload; read: destination in the reply */
    uint32_t batch;    /* its request's index in the job's batches (0 in a flush) */
} pss_piece_t;

/* Staged whole blocks in a row written at once (a run through a span
 * staged for being short waits for pss_join_run bytes, pss_plan.h). */
#define PSS_WHOLE_RUN 16

/* Bytes of an object's short spans that may go out unjoined before its
 * short spans are written at once (unless four times as many were joined). */
#define PSS_SPEC_TRIAL (4u << 20)

/* An object's short spans staged and waiting take at most this share of
 * the stage (1/PSS_SPEC_SHARE): spans whose gaps nobody fills are counted
 * as missed only when they age out, and 1 MiB spans filled the whole
 * stage before that (writes then waited 120-200 ms for room). */
#define PSS_SPEC_SHARE 2

/* One aligned disk I/O of a job (a span of the plan). */
typedef struct pss_span_io {
    struct iocb iocb;
    struct pss_span_io *next_wait;
    pss_job_t *job;
    uint64_t off, len;
    uint8_t *buf;
    int own_buf;    /* buf allocated here (else it points into a payload) */
    size_t buf_cap; /* its capacity (pss_buf_get) */
    int holes;   /* write: read the span first */
    int writing; /* current phase is the write */
    int shared;  /* read: copied from a span kept for sharing, not read from disk */
    int staged;  /* write: copied into the write-back stage, not written now */
    int short_staged; /* staged to wait for its neighbours (pss_job_stage_plan) */
    int lent;         /* read: buf is cache memory lent to the reply (pss_span_lend) */
    pss_cgran_t *gran; /* read-ahead: buf is this cache granule's, pinned (pss_cache_fill) */
    int hit;           /* read: its pieces were copied from the cache (pss_span_hit) */
    int kept;          /* read: its bytes are the cache's (the read-ahead notes it) */
    uint32_t first_piece, npieces;
} pss_span_io_t;

struct pss_job {
    pss_job_t *next; /* the object's running jobs */
    pss_object_t *obj;
    int is_write;
    pss_req_t **batches;
    uint32_t nbatches;
    pss_span_io_t *spans;
    size_t nspans, spans_left;
    pss_piece_t *pieces;
    size_t npieces;
    uint64_t max_end; /* end of the furthest region */
    uint32_t align;   /* the server's disk alignment, bytes */
    ps_status_t status;
    pss_stage_t *stage;      /* a flush of staged blocks: the stage that owns them */
    pss_sblock_t **sblocks;  /* and the blocks it writes (sorted), freed with the job */
    size_t nsblocks;
    int read_ahead;          /* reads into the cache only (pss_ra_job) */
    int behind;              /* writes: every batch a write-behind flush (PS_IO_BEHIND),
                                whose writer does not wait for the disk */
    int answered;            /* its batches were answered at its start (pss_job_answer_early) */
    uint64_t failed_base;    /* the object's failed writes when it started: the replies' mark
                                (a flush it starts may fail before its own answer) */
    uint64_t disk_bytes;     /* a read's bytes from disk (its replies say so) */
};

#define PSS_GAPS_MAX 32 /* covered ranges of a span looked at to fill its holes blind */

/*
 * Can the holes of write span sp be filled without reading the span? Bytes
 * at or past phys (the file's length before its job) are zeros; the others
 * must lie in edge blocks kept from earlier writes (pss_edge.c). With fill,
 * also put those bytes into sp->buf.
 */
int pss_span_prefill(pss_span_io_t *sp, uint64_t phys, int fill);

/* A job writing the staged blocks (sorted by offset) of obj: neighbours in
 * one span (up to max_io), whole blocks apart from partial ones (a span of
 * partial blocks is read first, in one I/O, unless pss_span_prefill knows
 * its missing bytes). */
pss_job_t *pss_flush_plan(pss_worker_t *w, pss_object_t *obj, pss_sblock_t **blocks, size_t n);

/* Prepare sp's disk I/O; it goes to the kernel with the others prepared at
 * the same time, or waits in order for a slot (pss_aio.c). */
void pss_aio_submit(pss_worker_t *w, pss_span_io_t *sp);

/* Hand the prepared I/Os to the kernel (after a job's spans are prepared). */
void pss_aio_flush(pss_worker_t *w);

#endif

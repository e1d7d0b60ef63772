/*
 * psc_request.h: a list I/O request (pstripe_request_t), the type shared by
 * the caller's side (psc_io.c) and the progress thread's (psc_batch.c).
 * Types only, so that neither side depends on the other through it.
 */
#ifndef PSC_REQUEST_H
#define PSC_REQUEST_H

#include <stdint.h>
#include <sys/uio.h>

#include "psc_internal.h"

/* count regions of len bytes, region c at obj_off + c * stride in the
 * target's object (stride > len when count > 1) and at stream_off + c * len
 * in the caller's memory stream: the regions of a strided access that fall
 * in one stripe, one after the other in the stream, are one piece. */
typedef struct psc_piece {
    uint64_t obj_off;    /* bytes, in the target's object */
    uint64_t len;        /* bytes of each region */
    uint64_t stride;     /* bytes between region starts in the object */
    uint64_t count;      /* regions */
    uint64_t stream_off; /* bytes, in the caller's memory stream */
} psc_piece_t;

/* The regions of a list I/O as the caller gave them: regions or strided
 * runs (a region is a run of one); psc_args_run reads either. And the
 * caller's PSTRIPE_WRITE_* flags. */
typedef struct psc_args {
    const pstripe_region_t *regions; /* one of the two, or neither when n is 0 */
    const pstripe_run_t *runs;
    size_t n;
    unsigned flags;
} psc_args_t;

/* Check the arguments of a list I/O (the file's mode, the flags, NULL
 * arrays, overflowing regions, memory and regions of one length); *total =
 * bytes of the regions (psc_io.c; the write-behind buffers and read caches
 * check theirs with it too). */
ps_status_t psc_io_check(pstripe_file_t *file, int is_write, const psc_args_t *args,
                         const struct iovec *mem, size_t nmem, uint64_t *total);

static inline pstripe_run_t psc_args_run(const psc_args_t *a, size_t i)
{
    if (a->runs != NULL) {
        return a->runs[i];
    }
    pstripe_run_t r = {a->regions[i].offset, a->regions[i].length, a->regions[i].length, 1};
    return r;
}

typedef struct psc_target {
    uint32_t k;      /* stripe target */
    uint32_t server; /* cluster index */
    psc_piece_t *pieces;
    size_t npieces, cap;
    size_t cur;       /* next piece to batch */
    uint64_t cur_reg; /* regions of pieces[cur] already batched */
    uint64_t cur_off; /* bytes of its next region already batched */
    unsigned inflight;
    unsigned max_inflight;
    uint64_t batch_max; /* payload bytes of one of its batches, at most buffer_size */
} psc_target_t;

struct pstripe_request {
    psc_cmd_t start;
    psc_call_t call;
    pstripe_fs_t *fs;
    int is_write;
    uint32_t io_flags; /* PS_IO_* flags every batch carries (PS_IO_BEHIND) */
    uint64_t file_id;
    ps_cap_t cap; /* the file's capability, carried by every batch */
    ps_layout_t layout;
    /* caller's memory, as one stream */
    struct iovec *mem;
    size_t nmem;
    uint64_t *mem_off; /* nmem + 1 prefix sums */
    /* the regions, copied for reads (to count bytes below the file size) */
    psc_args_t args;
    void *args_copy;
    uint64_t total;
    /* per stripe target */
    psc_target_t *targets;
    uint32_t ntargets;
    /* the file's tunables, copied at start */
    uint64_t buffer_size;
    uint32_t buffer_count;
    uint32_t max_regions;
    uint64_t bounce_threshold;
    /* progress-thread state */
    unsigned inflight;
    ps_status_t status;
    char msg[PSC_MSG_MAX];
    int need_stat;
    int stat_started;
    unsigned stat_pending;
    psc_op_t *stat_ops;
    ps_obj_rep_t *stat_reps;
    uint64_t bytes; /* result */
    psc_file_seen_t *seen; /* the file's (a reference), set as servers answer */
};

#endif

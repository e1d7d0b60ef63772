/*
 * ps_extent.h: region lists: sort, coalesce, and plan disk I/O.
 *
 * A region is (offset, length) in a file or an object. The server turns the
 * regions of one or more write/read batches into as few aligned disk I/Os as
 * possible with ps_extent_plan(); clients use the same types for file views.
 */
#ifndef PS_EXTENT_H
#define PS_EXTENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ps_extent {
    uint64_t off; /* bytes */
    uint64_t len; /* bytes */
} ps_extent_t;

/* Sort by offset (ties by length); not required to be stable. */
void ps_extent_sort(ps_extent_t *ext, size_t n);

/*
 * Merge adjacent and overlapping extents of a sorted list in place; returns
 * the new count. Zero-length extents are dropped.
 */
size_t ps_extent_coalesce(ps_extent_t *ext, size_t n);

/* One disk I/O produced by ps_extent_plan(). */
typedef struct ps_io_span {
    uint64_t off;      /* bytes, multiple of align */
    uint64_t len;      /* bytes, multiple of align, <= max(max_io, align) */
    uint32_t nregions; /* number of input regions that intersect this span */
    uint32_t holes;    /* 1 if some byte of the span is not covered by any region
                          (a write must read the span first: read-modify-write) */
} ps_io_span_t;

/*
 * Plan the disk I/Os that serve a list of regions sorted by offset
 * (overlaps allowed, zero lengths ignored).
 *
 * Output spans are sorted, disjoint, aligned to `align` (a power of two) and
 * cover every byte of every region. Two regions share a span when the gap
 * between them is at most `max_gap` bytes or when they touch the same aligned
 * block; a span is cut at an aligned boundary when it would exceed `max_io`
 * bytes (max_io is rounded down to a multiple of align, minimum align).
 * Writes an array of at most ps_extent_plan_bound(n, ...) spans to `spans`
 * and returns how many were written.
 */
size_t ps_extent_plan(const ps_extent_t *sorted, size_t n, uint64_t align, uint64_t max_gap,
                      uint64_t max_io, ps_io_span_t *spans);

/* Upper bound on the spans ps_extent_plan() can produce for these regions. */
size_t ps_extent_plan_bound(const ps_extent_t *sorted, size_t n, uint64_t align,
                            uint64_t max_io);

/* A strided run of regions: count regions of len bytes, region i at
 * off + i * stride (stride >= len: the regions do not overlap). */
typedef struct ps_extent_run {
    uint64_t off;    /* bytes, region 0 */
    uint64_t len;    /* bytes per region */
    uint64_t stride; /* bytes between region starts */
    uint64_t count;  /* regions */
} ps_extent_run_t;

/* End of a run's last region (off + stride * (count - 1) + len); off if count is 0. */
uint64_t ps_extent_run_end(const ps_extent_run_t *run);

/* 1 if the runs are sorted by offset and each ends at or before the next
 * one's offset (their hulls are disjoint), so ps_extent_plan_runs() applies. */
int ps_extent_runs_disjoint(const ps_extent_run_t *runs, size_t n);

/*
 * The regions of runs sorted by offset (their hulls may interleave, as
 * those of several clients' batches of one block do), listed into ext
 * (room for all their regions) in the order of ps_extent_sort(): a merge
 * of the runs, O(regions x log of the runs that overlap at once), not a
 * sort of the regions. The runs are used up (they are the merge's heap).
 * Returns the number of regions.
 */
size_t ps_extent_runs_merge(ps_extent_run_t *runs, size_t n, ps_extent_t *ext);

/*
 * ps_extent_plan() for runs whose hulls are sorted and disjoint
 * (ps_extent_runs_disjoint), without expanding them: the spans (and their
 * nregions, which count regions, not runs) are exactly those that
 * ps_extent_plan() gives for the runs' regions listed one by one. A run
 * whose gaps (stride - len) are at most max_gap costs O(1 + spans it
 * touches); others are walked region by region, still without memory.
 * Runs with count or len 0 are ignored.
 */
size_t ps_extent_plan_runs(const ps_extent_run_t *runs, size_t n, uint64_t align, uint64_t max_gap,
                           uint64_t max_io, ps_io_span_t *spans);

/* Upper bound on the spans ps_extent_plan_runs() can produce for these runs. */
size_t ps_extent_plan_runs_bound(const ps_extent_run_t *runs, size_t n, uint64_t align,
                                 uint64_t max_io);

#ifdef __cplusplus
}
#endif

#endif

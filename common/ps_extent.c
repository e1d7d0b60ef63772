/*
 * ps_extent.c: region lists and disk I/O planning.
 *
 * Why the server plans I/O instead of doing one syscall per region: MPI
 * programs with strided or collective patterns send batches of thousands of
 * small regions (a 64-byte record every 128 bytes is typical), and one pread
 * or pwrite per region would cost far more than the bytes it moves. The
 * server therefore sorts the regions of a batch (and of other batches queued
 * for the same object) and plans a few large disk I/Os that cover them all:
 *
 *  - O_DIRECT needs every I/O's offset and length to be multiples of the
 *    device's alignment, so each span is widened to aligned boundaries.
 *  - A write span that contains bytes no region writes (a gap, or the
 *    unaligned head and tail of the widened span) must first be read, so the
 *    write puts back what was there: read-modify-write. The `holes` flag says
 *    when; a fully covered span is written blind.
 *  - Regions separated by a small gap (max_gap) are cheaper to serve with one
 *    I/O that also moves the gap than with two I/Os; regions that touch the
 *    same aligned block must share a span anyway, or two spans would overlap
 *    on that block and one write would undo the other.
 *  - A span is cut at max_io so one huge region, or a long run of merged
 *    regions, does not become a single I/O that the disk queue cannot overlap
 *    with others and the server cannot buffer.
 *
 * The planner is one pass over the sorted regions (O(n) plus the output),
 * then one pass that counts the regions of every span with a difference
 * array kept in the spans themselves (O(n log spans)); it allocates nothing.
 * Sorting, done by the caller with ps_extent_sort(), is O(n log n).
 */
#include "ps_extent.h"

#include <stdlib.h>

static int ps_extent_cmp(const void *a, const void *b)
{
    const ps_extent_t *x = a, *y = b;

    if (x->off != y->off) {
        return x->off < y->off ? -1 : 1;
    }
    if (x->len != y->len) {
        return x->len < y->len ? -1 : 1;
    }
    return 0;
}

void ps_extent_sort(ps_extent_t *ext, size_t n)
{
    /* Clients send their regions in ascending order: check before sorting
     * (qsort of an already sorted array was 6% of all CPU time in a
     * 2-process write of 8-byte regions). */
    size_t i = 1;
    while (i < n && ps_extent_cmp(&ext[i - 1], &ext[i]) <= 0) {
        i++;
    }
    if (i < n) {
        qsort(ext, n, sizeof(*ext), ps_extent_cmp);
    }
}

/* End of an extent; saturates instead of wrapping at 2^64. */
static inline uint64_t ps_extent_end(uint64_t off, uint64_t len)
{
    return len > UINT64_MAX - off ? UINT64_MAX : off + len;
}

size_t ps_extent_coalesce(ps_extent_t *ext, size_t n)
{
    size_t out = 0;
    uint64_t end = 0;

    for (size_t i = 0; i < n; i++) {
        if (ext[i].len == 0) {
            continue;
        }
        if (out > 0 && ext[i].off <= end) {
            uint64_t e = ps_extent_end(ext[i].off, ext[i].len);
            if (e > end) {
                end = e;
                ext[out - 1].len = end - ext[out - 1].off;
            }
            continue;
        }
        ext[out] = ext[i];
        end = ps_extent_end(ext[i].off, ext[i].len);
        ext[out].len = end - ext[out].off;
        out++;
    }
    return out;
}

/* Alignment arithmetic. align is documented as a power of two, but the modulo
 * form works for any value and costs nothing next to the I/O it plans. */
static inline uint64_t ps_align_down(uint64_t x, uint64_t align)
{
    return x - x % align;
}

static inline uint64_t ps_align_up(uint64_t x, uint64_t align)
{
    uint64_t r = x % align;
    return r == 0 ? x : x + (align - r);
}

static inline uint64_t ps_plan_align(uint64_t align)
{
    return align == 0 ? 1 : align;
}

/* max_io rounded down to a multiple of align, and at least align. */
static inline uint64_t ps_plan_max_io(uint64_t align, uint64_t max_io)
{
    uint64_t mio = ps_align_down(max_io, align);
    return mio < align ? align : mio;
}

size_t ps_extent_plan_bound(const ps_extent_t *sorted, size_t n, uint64_t align,
                            uint64_t max_io)
{
    size_t bound = 0;

    align = ps_plan_align(align);
    max_io = ps_plan_max_io(align, max_io);

    /* A region adds at most ceil(aligned hull / max_io) spans: the spans it
     * opens start at or after align_down(off) and are max_io apart. */
    for (size_t i = 0; i < n; i++) {
        uint64_t hull, k;

        if (sorted[i].len == 0) {
            continue;
        }
        hull = ps_align_up(ps_extent_end(sorted[i].off, sorted[i].len), align) -
               ps_align_down(sorted[i].off, align);
        k = hull / max_io + (hull % max_io != 0);
        if (k > SIZE_MAX - bound) {
            return SIZE_MAX;
        }
        bound += (size_t)k;
    }
    return bound;
}

/* The span being built: [start, align_up(end)) with `covered` bytes of it
 * covered by regions, and `limit` = start + max_io where it must be cut. */
typedef struct ps_plan_span {
    int open;
    uint64_t start;
    uint64_t end;
    uint64_t limit;
    uint64_t covered;
} ps_plan_span_t;

static void ps_plan_flush(ps_plan_span_t *cur, uint64_t align, ps_io_span_t *spans, size_t *count)
{
    ps_io_span_t *s = &spans[(*count)++];

    s->off = cur->start;
    s->len = ps_align_up(cur->end, align) - cur->start;
    s->nregions = 0;
    s->holes = cur->covered != s->len;
    cur->open = 0;
}

/*
 * Count, for every span, the regions that intersect it. A region intersects a
 * run of consecutive spans: the first whose end is past its offset (found by a
 * pointer that only moves forward, since regions are sorted) to the last that
 * starts before its end (binary search; a long region may cover many spans).
 * +1 at the first and -1 after the last, then a prefix sum. The counts are
 * kept modulo 2^32 while the difference array is built; the final values are
 * exact whenever fewer than 2^32 regions are planned.
 */
static void ps_plan_count(const ps_extent_t *sorted, size_t n, ps_io_span_t *spans, size_t count)
{
    size_t first = 0;
    uint32_t run = 0;

    for (size_t i = 0; i < n; i++) {
        uint64_t ro = sorted[i].off, re;
        size_t lo, hi;

        if (sorted[i].len == 0) {
            continue;
        }
        re = ps_extent_end(ro, sorted[i].len);
        while (first < count && spans[first].off + spans[first].len <= ro) {
            first++;
        }
        if (first == count) {
            break;
        }
        lo = first;
        hi = count; /* first span starting at or after re */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (spans[mid].off < re) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (lo == first) {
            continue; /* in no span: cannot happen for sorted input */
        }
        spans[first].nregions += 1;
        if (lo < count) {
            spans[lo].nregions -= 1;
        }
    }

    for (size_t i = 0; i < count; i++) {
        run += spans[i].nregions;
        spans[i].nregions = run;
    }
}

/* ---- runs: closed forms over the regions of a run --------------------------- */

uint64_t ps_extent_run_end(const ps_extent_run_t *r)
{
    return r->count == 0 ? r->off : r->off + r->stride * (r->count - 1) + r->len;
}

/* Bytes of the run's regions below x. */
static uint64_t ps_run_below(const ps_extent_run_t *r, uint64_t x)
{
    uint64_t d, i, rem;

    if (x <= r->off) {
        return 0;
    }
    d = x - r->off;
    i = d / r->stride;
    if (i >= r->count) {
        return r->count * r->len;
    }
    rem = d - i * r->stride;
    return i * r->len + (rem < r->len ? rem : r->len);
}

/* The first byte at or after x that a region covers (x below the run's end). */
static uint64_t ps_run_next(const ps_extent_run_t *r, uint64_t x)
{
    uint64_t d, i;

    if (x <= r->off) {
        return r->off;
    }
    d = x - r->off;
    i = d / r->stride;
    return d - i * r->stride < r->len ? x : r->off + (i + 1) * r->stride;
}

/* The end of the covered bytes below x: x when the byte before x is covered,
 * else the end of the last region that ends before x (x above the run's start). */
static uint64_t ps_run_cover_end(const ps_extent_run_t *r, uint64_t x)
{
    uint64_t d = x - r->off, i = d / r->stride, rem;

    if (i >= r->count) {
        return ps_extent_run_end(r);
    }
    rem = d - i * r->stride;
    if (rem == 0) {
        return i == 0 ? r->off : r->off + (i - 1) * r->stride + r->len;
    }
    return rem <= r->len ? x : r->off + i * r->stride + r->len;
}

/* Regions of the run that intersect [a, b). */
static uint64_t ps_run_regions_in(const ps_extent_run_t *r, uint64_t a, uint64_t b)
{
    uint64_t start_below, end_by;

    start_below = b <= r->off ? 0 : (b - r->off - 1) / r->stride + 1;
    if (start_below > r->count) {
        start_below = r->count;
    }
    end_by = a < r->off + r->len ? 0 : (a - r->off - r->len) / r->stride + 1;
    if (end_by > r->count) {
        end_by = r->count;
    }
    return start_below > end_by ? start_below - end_by : 0;
}

int ps_extent_runs_disjoint(const ps_extent_run_t *runs, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (runs[i].off < ps_extent_run_end(&runs[i - 1])) {
            return 0;
        }
    }
    return 1;
}

/* ---- merging runs -------------------------------------------------------------- */

/* Does run x's next region come before run y's (ps_extent_cmp's order)? */
static int ps_run_before(const ps_extent_run_t *x, const ps_extent_run_t *y)
{
    return x->off < y->off || (x->off == y->off && x->len < y->len);
}

static void ps_run_swap(ps_extent_run_t *x, ps_extent_run_t *y)
{
    ps_extent_run_t t = *x;
    *x = *y;
    *y = t;
}

/* heap[0..n): restore the heap order after heap[0] moved later. */
static void ps_heap_down(ps_extent_run_t *heap, size_t n)
{
    size_t i = 0;

    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && ps_run_before(&heap[l], &heap[m])) {
            m = l;
        }
        if (l + 1 < n && ps_run_before(&heap[l + 1], &heap[m])) {
            m = l + 1;
        }
        if (m == i) {
            return;
        }
        ps_run_swap(&heap[i], &heap[m]);
        i = m;
    }
}

/* heap[0..n]: restore the heap order after heap[n] was added. */
static void ps_heap_up(ps_extent_run_t *heap, size_t n)
{
    while (n > 0 && ps_run_before(&heap[n], &heap[(n - 1) / 2])) {
        ps_run_swap(&heap[n], &heap[(n - 1) / 2]);
        n = (n - 1) / 2;
    }
}

/* The heap holds the runs whose next region may come first: a run joins
 * it when the merge reaches its offset (all runs at or before the top's
 * offset are in, so the top is the least region left), in runs[0..h)
 * (h <= j, the runs read so far: run j is read before its slot is
 * reused). */
size_t ps_extent_runs_merge(ps_extent_run_t *runs, size_t n, ps_extent_t *ext)
{
    size_t h = 0, j = 0, out = 0;

    while (h > 0 || j < n) {
        if (j < n && (h == 0 || runs[j].off <= runs[0].off)) {
            if (runs[j].count > 0) {
                runs[h] = runs[j];
                ps_heap_up(runs, h++);
            }
            j++;
            continue;
        }
        ext[out].off = runs[0].off;
        ext[out].len = runs[0].len;
        out++;
        if (--runs[0].count > 0) {
            runs[0].off += runs[0].stride;
        } else {
            runs[0] = runs[--h];
        }
        ps_heap_down(runs, h);
    }
    return out;
}

/* ---- the planner ------------------------------------------------------------- */

typedef struct ps_plan_state {
    ps_plan_span_t cur;
    uint64_t cov_end; /* end of the union of the regions seen so far */
    uint64_t align, max_gap, max_io;
    ps_io_span_t *spans;
    size_t count;
} ps_plan_state_t;

/*
 * One pass over the sorted regions keeps the union of the regions seen so far
 * (its end is cov_end; sorted input means a region can only extend it at the
 * right) and hands each newly covered stretch to the span being built:
 *
 *  - A region that is neither within max_gap of cov_end nor in the block
 *    where the union ends closes the span; the next one starts at its
 *    aligned-down offset.
 *  - Newly covered bytes at or past the span's limit (start + max_io) close
 *    it too: the next span starts at the limit when the bytes run on, or at
 *    the aligned-down start of the bytes after a gap. Either way it starts at
 *    or after the limit, an aligned offset at or after the end of the closed
 *    span, so spans never overlap.
 *
 * Each span thus starts in the block of its first covered byte and ends with
 * the block of its last, and counting covered bytes gives the holes flag.
 * Regions must end at least one block below 2^64 (off + len + align fits in
 * 64 bits), which ps_proto_check_regions() with any real max_obj_size ensures.
 *
 * ps_plan_add() takes a run whose gaps (stride - len) are at most max_gap:
 * no region of it can close the span by the first rule, so the run acts as
 * one stretch from its first byte to its last whose covered bytes, next
 * covered byte and last covered end come from closed forms (ps_run_*). A
 * single region is the run {off, len, len, 1}. Runs with larger gaps are fed
 * to it region by region. The run must not start below cov_end unless
 * everything in [off, cov_end) is already covered (true for sorted single
 * regions and for runs with disjoint hulls).
 */
static void ps_plan_add(ps_plan_state_t *st, const ps_extent_run_t *r)
{
    ps_plan_span_t *cur = &st->cur;
    uint64_t align = st->align, ro = r->off, re = ps_extent_run_end(r), u0;

    if (cur->open && ro > st->cov_end && ro - st->cov_end > st->max_gap &&
        ps_align_down(ro, align) >= ps_align_up(st->cov_end, align)) {
        ps_plan_flush(cur, align, st->spans, &st->count);
    }

    u0 = ro > st->cov_end ? ro : st->cov_end; /* only bytes not covered yet */
    while (u0 < re) {
        uint64_t seg_end;

        if (cur->open && u0 >= cur->limit) {
            ps_plan_flush(cur, align, st->spans, &st->count);
        }
        if (!cur->open) {
            u0 = ps_run_next(r, u0);
            cur->open = 1;
            cur->start = ps_align_down(u0, align);
            cur->limit =
                cur->start > UINT64_MAX - st->max_io ? UINT64_MAX : cur->start + st->max_io;
            cur->covered = 0;
        }
        seg_end = re < cur->limit ? re : cur->limit;
        cur->covered += ps_run_below(r, seg_end) - ps_run_below(r, u0);
        cur->end = ps_run_cover_end(r, seg_end);
        u0 = seg_end;
    }
    if (re > st->cov_end) {
        st->cov_end = re;
    }
}

static void ps_plan_init(ps_plan_state_t *st, uint64_t align, uint64_t max_gap, uint64_t max_io,
                         ps_io_span_t *spans)
{
    st->cur.open = 0;
    st->cov_end = 0;
    st->align = ps_plan_align(align);
    st->max_gap = max_gap;
    st->max_io = ps_plan_max_io(st->align, max_io);
    st->spans = spans;
    st->count = 0;
}

static size_t ps_plan_done(ps_plan_state_t *st)
{
    if (st->cur.open) {
        ps_plan_flush(&st->cur, st->align, st->spans, &st->count);
    }
    return st->count;
}

size_t ps_extent_plan(const ps_extent_t *sorted, size_t n, uint64_t align, uint64_t max_gap,
                      uint64_t max_io, ps_io_span_t *spans)
{
    ps_plan_state_t st;
    size_t count;

    ps_plan_init(&st, align, max_gap, max_io, spans);
    for (size_t i = 0; i < n; i++) {
        ps_extent_run_t r = {sorted[i].off, sorted[i].len, sorted[i].len, 1};
        if (r.len != 0) {
            ps_plan_add(&st, &r);
        }
    }
    count = ps_plan_done(&st);
    ps_plan_count(sorted, n, spans, count);
    return count;
}

/* Count the regions of every span: runs and spans are both sorted and
 * disjoint, so each (run, span) pair that intersects is visited once. */
static void ps_plan_count_runs(const ps_extent_run_t *runs, size_t n, ps_io_span_t *spans,
                               size_t count)
{
    size_t first = 0;

    for (size_t i = 0; i < n; i++) {
        const ps_extent_run_t *r = &runs[i];
        uint64_t re;

        if (r->count == 0 || r->len == 0) {
            continue;
        }
        re = ps_extent_run_end(r);
        while (first < count && spans[first].off + spans[first].len <= r->off) {
            first++;
        }
        for (size_t k = first; k < count && spans[k].off < re; k++) {
            spans[k].nregions +=
                (uint32_t)ps_run_regions_in(r, spans[k].off, spans[k].off + spans[k].len);
        }
    }
}

size_t ps_extent_plan_runs(const ps_extent_run_t *runs, size_t n, uint64_t align, uint64_t max_gap,
                           uint64_t max_io, ps_io_span_t *spans)
{
    ps_plan_state_t st;
    size_t count;

    ps_plan_init(&st, align, max_gap, max_io, spans);
    for (size_t i = 0; i < n; i++) {
        const ps_extent_run_t *r = &runs[i];

        if (r->count == 0 || r->len == 0) {
            continue;
        }
        if (r->count == 1 || r->stride - r->len <= max_gap) {
            ps_plan_add(&st, r);
            continue;
        }
        for (uint64_t k = 0; k < r->count; k++) {
            ps_extent_run_t one = {r->off + k * r->stride, r->len, r->len, 1};
            ps_plan_add(&st, &one);
        }
    }
    count = ps_plan_done(&st);
    ps_plan_count_runs(runs, n, spans, count);
    return count;
}

size_t ps_extent_plan_runs_bound(const ps_extent_run_t *runs, size_t n, uint64_t align,
                                 uint64_t max_io)
{
    size_t bound = 0;

    align = ps_plan_align(align);
    max_io = ps_plan_max_io(align, max_io);

    /* Spans are disjoint, at least a block long, and each opens in a block
     * of the run whose byte opened it: at most the blocks of the run's hull,
     * and at most what its regions one by one could open. */
    for (size_t i = 0; i < n; i++) {
        const ps_extent_run_t *r = &runs[i];
        uint64_t blocks, per_region, k;

        if (r->count == 0 || r->len == 0) {
            continue;
        }
        blocks = (ps_align_up(ps_extent_run_end(r), align) - ps_align_down(r->off, align)) / align;
        per_region = (ps_align_up(r->len, align) + align) / max_io + 1;
        k = r->count > blocks / per_region ? blocks : r->count * per_region;
        if (k > SIZE_MAX - bound) {
            return SIZE_MAX;
        }
        bound += (size_t)k;
    }
    return bound;
}

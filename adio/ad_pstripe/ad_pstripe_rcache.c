/*
 * ad_pstripe_rcache.c: the read cache's blocks (the policy, when a read is
 * served from them and what drops them, is ad_pstripe_cache.c's).
 *
 * romio_pstripe_rc_size bytes of a handle hold direct-mapped blocks of
 * romio_pstripe_rc_block_size bytes: block b in slot b % nslots, tagged
 * with b and the number of its bytes that were below the file's size when
 * it was read. The misses of an access are fetched in one list read; when
 * the misses walk forward, the blocks after them are read ahead in the
 * background (one list read in flight, its blocks untagged until it is
 * waited for, and left untagged if it was made stale meanwhile), in a
 * window that doubles up to half the cache. Only the caller's entry point
 * (under the handle's cache lock) calls these.
 */

#include "ad_pstripe.h"

void ADIOI_PSTRIPE_Rc_drop(ADIOI_PSTRIPE_fs * ps)
{
    size_t s;

    for (s = 0; s < ps->rc_nslots; s++)
        ps->rc_tag[s] = -1;
    ps->rc_next = -1;
    ps->rc_window = 0;
    ps->rc_ahead_stale = 1;
    ps->rc_dropped = 1;
    ADIOI_PSTRIPE_Ra_drop(ps);
}

/* Drop the cached blocks of [lo, lo + len); 0 once the whole cache went. */
static int rc_invalidate_range(ADIOI_PSTRIPE_fs * ps, uint64_t lo, uint64_t len)
{
    uint64_t bs = (uint64_t) ps->rc_block, b, b1;
    size_t s;

    if (len == 0 || ps->rc_nslots == 0)
        return ps->rc_nslots > 0;
    b = lo / bs;
    b1 = (lo + len - 1) / bs;
    if (ps->rc_nahead > 0 && b <= ps->rc_ahead[ps->rc_nahead - 1] && ps->rc_ahead[0] <= b1)
        ps->rc_ahead_stale = 1;
    if (b1 - b + 1 >= ps->rc_nslots) {
        ADIOI_PSTRIPE_Rc_drop(ps);
        return 0;
    }
    for (; b <= b1; b++) {
        s = b % ps->rc_nslots;
        if (ps->rc_tag[s] == (int64_t) b)
            ps->rc_tag[s] = -1;
    }
    return 1;
}

/* Drop the cached blocks that the regions touch. */
void ADIOI_PSTRIPE_Rc_invalidate(ADIOI_PSTRIPE_fs * ps, const pstripe_region_t * regions, size_t n)
{
    for (size_t i = 0; i < n && rc_invalidate_range(ps, regions[i].offset, regions[i].length);
         i++)
        continue;
}

/* The same for an access (of runs: every block from a run's first byte to
 * its last). */
void ADIOI_PSTRIPE_Rc_invalidate_access(ADIOI_PSTRIPE_fs * ps, const ADIOI_PSTRIPE_access * acc)
{
    pstripe_run_t r;

    for (size_t i = 0; i < ADIOI_PSTRIPE_Access_nruns(acc); i++) {
        r = ADIOI_PSTRIPE_Access_run(acc, i);
        if (!rc_invalidate_range(ps, r.offset, (r.count - 1) * r.stride + r.length))
            return;
    }
}

int ADIOI_PSTRIPE_Rc_setup(ADIOI_PSTRIPE_fs * ps)
{
    size_t s;

    if (ps->rc_nslots > 0)
        return 1;
    if (ps->rc_block <= 0 || ps->rc_size < 2 * ps->rc_block)
        return 0;
    ps->rc_nslots = (size_t) (ps->rc_size / ps->rc_block);
    ps->rc_data = ADIOI_PSTRIPE_Buf_alloc(ps->rc_nslots * (size_t) ps->rc_block);
    ps->rc_tag = ADIOI_Malloc(ps->rc_nslots * sizeof(*ps->rc_tag));
    ps->rc_valid = ADIOI_Malloc(ps->rc_nslots * sizeof(*ps->rc_valid));
    ps->rc_ahead = ADIOI_Malloc(ps->rc_nslots * sizeof(*ps->rc_ahead));
    ps->rc_nahead = 0;
    ps->rc_ahead_from = -1;
    for (s = 0; s < ps->rc_nslots; s++)
        ps->rc_tag[s] = -1;
    ps->rc_next = -1;
    return 1;
}

/* Is block b cached with the bytes [from, to) of it valid? */
int ADIOI_PSTRIPE_Rc_hit(const ADIOI_PSTRIPE_fs * ps, uint64_t b, uint64_t to)
{
    size_t s = b % ps->rc_nslots;

    return ps->rc_tag[s] == (int64_t) b && to <= ps->rc_valid[s];
}

/* Tag the slots of blocks (ascending) just read: nread bytes, those below
 * the file's size coming first. */
static void rc_tag_blocks(ADIOI_PSTRIPE_fs * ps, const uint64_t * blocks, size_t n,
                          uint64_t nread)
{
    uint64_t bs = (uint64_t) ps->rc_block, left = nread;
    size_t i, s;

    for (i = 0; i < n; i++) {
        s = blocks[i] % ps->rc_nslots;
        ps->rc_tag[s] = (int64_t) blocks[i];
        ps->rc_valid[s] = MPL_MIN(bs, left);
        left -= ps->rc_valid[s];
    }
}

/* Read blocks (ascending, not whole-valid hits) into their slots in one
 * list read: waited for (req NULL; returns a pstripe status, the slots
 * tagged), or left running (*req). */
int ADIOI_PSTRIPE_Rc_fetch(ADIOI_PSTRIPE_fs * ps, const uint64_t * blocks, size_t n,
                           pstripe_request_t ** req)
{
    uint64_t bs = (uint64_t) ps->rc_block, nread = 0;
    pstripe_region_t *regs = ADIOI_Malloc(n * sizeof(*regs));
    struct iovec *iov = ADIOI_Malloc(n * sizeof(*iov));
    size_t i, s;
    int status;

    for (i = 0; i < n; i++) {
        s = blocks[i] % ps->rc_nslots;
        ps->rc_tag[s] = -1;
        regs[i].offset = blocks[i] * bs;
        regs[i].length = bs;
        iov[i].iov_base = ps->rc_data + s * bs;
        iov[i].iov_len = bs;
    }
    if (req != NULL) {
        status = pstripe_iread_list(ps->file, regs, n, iov, n, req);
    } else {
        status = pstripe_read_list(ps->file, regs, n, iov, n, &nread);
        if (status == PS_OK)
            rc_tag_blocks(ps, blocks, n, nread);
    }
    ADIOI_Free(regs);
    ADIOI_Free(iov);
    return status;
}

/* Wait for the read-ahead in flight; its blocks become hits unless it
 * failed or was made stale meanwhile (the program's reads then fetch
 * them again and see the servers' errors themselves). */
void ADIOI_PSTRIPE_Rc_ahead_settle(ADIOI_PSTRIPE_fs * ps)
{
    uint64_t nread = 0;
    int status;

    if (ps->rc_ahead_req == NULL)
        return;
    status = pstripe_request_wait(ps->rc_ahead_req, &nread);
    ps->rc_ahead_req = NULL;
    if (status == PS_OK && !ps->rc_ahead_stale)
        rc_tag_blocks(ps, ps->rc_ahead, ps->rc_nahead, nread);
    ps->rc_nahead = 0;
}

/* Start reading blocks ahead (ascending) in the background, unless bytes
 * the write-behind buffer holds lie there (the servers do not have them). */
void ADIOI_PSTRIPE_Rc_ahead_start(ADIOI_PSTRIPE_fs * ps, const uint64_t * blocks, size_t n)
{
    uint64_t bs = (uint64_t) ps->rc_block;

    if (n == 0 || ADIOI_PSTRIPE_Wb_overlaps(ps, (ADIO_Offset) (blocks[0] * bs),
                                            (ADIO_Offset) ((blocks[n - 1] + 1) * bs)))
        return;
    memcpy(ps->rc_ahead, blocks, n * sizeof(*blocks));
    ps->rc_nahead = n;
    ps->rc_ahead_stale = 0;
    if (ADIOI_PSTRIPE_Rc_fetch(ps, blocks, n, &ps->rc_ahead_req) != PS_OK) {
        ps->rc_ahead_req = NULL;
        ps->rc_nahead = 0;
    }
}

/* Is block b being read ahead? */
static int rc_pending(const ADIOI_PSTRIPE_fs * ps, uint64_t b)
{
    return ps->rc_nahead > 0 && ps->rc_ahead[0] <= b && b <= ps->rc_ahead[ps->rc_nahead - 1];
}

/* The blocks an access of blocks [b0, b0 + span) misses (ascending, into
 * missing; returns their count), then the blocks to read ahead (*nahead
 * more): when the misses walk forward, a window after the access that
 * doubles up to the rest of the cache; when the access reaches into what
 * was read ahead, the next window. */
size_t ADIOI_PSTRIPE_Rc_plan(ADIOI_PSTRIPE_fs * ps, const ADIOI_PSTRIPE_access * acc,
                             uint64_t b0, uint64_t span, uint64_t * missing, size_t * nahead)
{
    uint64_t bs = (uint64_t) ps->rc_block, b, b1, from, to, last, base = UINT64_MAX, c;
    char *need = ADIOI_Calloc(span, 1);
    size_t i, n = 0, nruns = ADIOI_PSTRIPE_Access_nruns(acc);
    int whole = 0;              /* block `base` is cached whole */

    /* every block of the span here whole (what was read ahead): no region
     * needs a look (8-byte regions: 131,072 of them a call) */
    for (b = b0; b < b0 + span && ADIOI_PSTRIPE_Rc_hit(ps, b, bs); b++)
        continue;
    for (i = b < b0 + span ? 0 : nruns; i < nruns; i++) {
        pstripe_run_t r = ADIOI_PSTRIPE_Access_run(acc, i);
        for (c = 0; c < r.count; c++) {
            from = r.offset + c * r.stride;
            to = from + r.length;
            /* many small regions to a block: decided once a block is missed
             * or known whole (from - base wraps around when from < base) */
            if (base != UINT64_MAX && from - base < bs && to - base <= bs &&
                (whole || need[base / bs - b0]))
                continue;
            for (b = from / bs, b1 = (to - 1) / bs; b <= b1; b++) {
                uint64_t end = MPL_MIN(to, (b + 1) * bs) - b * bs;
                if (!ADIOI_PSTRIPE_Rc_hit(ps, b, end))
                    need[b - b0] = 1;
                base = b * bs;
                whole = ADIOI_PSTRIPE_Rc_hit(ps, b, bs);
            }
        }
    }
    for (b = 0; b < span; b++)
        if (need[b])
            missing[n++] = b0 + b;
    ADIOI_Free(need);

    *nahead = 0;
    last = b0 + span - 1;
    if (n > 0 && (int64_t) missing[0] != ps->rc_next) {
        ps->rc_window = 0;      /* not sequential */
        ps->rc_next = (int64_t) (missing[n - 1] + 1);
        return n;
    }
    if (n > 0) {                /* the first miss is where the last fetch ended */
        ps->rc_next = (int64_t) (missing[n - 1] + 1);
        from = last + 1;
    } else if (ps->rc_window > 0 && ps->rc_ahead_req == NULL &&
               (int64_t) last >= ps->rc_ahead_from && ps->rc_next > (int64_t) last) {
        from = (uint64_t) ps->rc_next;  /* reading what was read ahead */
    } else {
        return 0;
    }
    /* half the cache at most: the next window starts when the program
     * enters this one */
    ps->rc_window = (int) MPL_MIN(MPL_MAX(2 * ps->rc_window, 1), (long long) ps->rc_nslots / 2);
    /* not over the access's own slots */
    to = MPL_MIN(from + (uint64_t) ps->rc_window, b0 + ps->rc_nslots);
    for (b = from; b < to; b++)
        if (!ADIOI_PSTRIPE_Rc_hit(ps, b, bs) && !rc_pending(ps, b))
            missing[n + (*nahead)++] = b;
    if (*nahead > 0) {
        ps->rc_ahead_from = (int64_t) missing[n];
        ps->rc_next = (int64_t) (missing[n + *nahead - 1] + 1);
    }
    return n;
}

/* Copy an access out of the cache (every block it touches is cached):
 * bytes past a block's valid length read as zeros and are not counted. */
uint64_t ADIOI_PSTRIPE_Rc_serve(ADIOI_PSTRIPE_fs * ps, const ADIOI_PSTRIPE_access * acc)
{
    uint64_t bs = (uint64_t) ps->rc_block, base = UINT64_MAX, valid = 0, from, to, in, len, v;
    uint64_t got = 0, k;
    ADIOI_PSTRIPE_mem_cursor c = { acc->iov, acc->niov, 0, 0 };
    const char *blk = NULL;
    size_t i, s, nruns = ADIOI_PSTRIPE_Access_nruns(acc);
    pstripe_run_t r;

    for (i = 0; i < nruns; i++) {
        r = ADIOI_PSTRIPE_Access_run(acc, i);
        for (k = 0, from = r.offset; k < r.count; k++, from = r.offset + k * r.stride) {
            for (to = from + r.length; from < to; from += len) {
                in = from - base;       /* wraps around when from < base */
                if (blk == NULL || in >= bs) {
                    base = from / bs * bs;
                    s = (size_t) ((from / bs) % ps->rc_nslots);
                    blk = ps->rc_data + s * bs;
                    valid = ps->rc_valid[s];
                    in = from - base;
                }
                len = MPL_MIN(to - from, bs - in);
                v = valid > in ? MPL_MIN(valid - in, len) : 0;
                ADIOI_PSTRIPE_Mem_copy(&c, (char *) blk + in, v, 1);
                if (v < len)
                    ADIOI_PSTRIPE_Mem_copy(&c, NULL, len - v, 1);
                got += v;
            }
        }
    }
    return got;
}

/* Free the blocks (after waiting for a read-ahead in flight): the sizes
 * of new hints take effect at the next use. */
void ADIOI_PSTRIPE_Rc_release(ADIOI_PSTRIPE_fs * ps)
{
    ADIOI_PSTRIPE_Rc_ahead_settle(ps);
    pstripe_buffer_free(ps->rc_data);
    if (ps->rc_tag)
        ADIOI_Free(ps->rc_tag);
    if (ps->rc_valid)
        ADIOI_Free(ps->rc_valid);
    if (ps->rc_ahead)
        ADIOI_Free(ps->rc_ahead);
    ps->rc_data = NULL;
    ps->rc_tag = NULL;
    ps->rc_valid = NULL;
    ps->rc_ahead = NULL;
    ps->rc_nslots = 0;
}

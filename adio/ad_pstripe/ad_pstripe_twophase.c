/*
 * ad_pstripe_twophase.c: two-phase collective I/O with stripe-aligned
 * file domains and list I/O (ad_pstripe_coll.c decides when).
 *
 * This is not ROMIO's generic two-phase (ADIOI_GEN_WriteStridedColl, which
 * stays available for comparison when romio_pstripe_listio_write or _read
 * is disabled): that code gives each aggregator one contiguous file domain,
 * which on a striped file touches every server, and it fills holes by
 * reading the domain before writing it back. Here the file domains are
 * whole stripes, dealt to the aggregators so that each serves as few
 * servers as possible, and cut into rounds of cb_buffer_size bytes
 * (ad_pstripe_aggregate.c, where the math is).
 *
 * Each process cuts its own access (the region and iovec lists of list
 * I/O) into pieces that fall in one aggregator's domain and one round
 * (plan_pieces). The pieces' offsets and lengths go to their aggregators
 * in one all-to-all (exchange_pieces); from then on every process knows
 * exactly what it sends and receives in each round, so rounds need no
 * collective call, a process simply walks the rounds it takes part in in
 * increasing order (next_round), which cannot deadlock: the lowest
 * unfinished round can always finish. In each round the aggregator sorts
 * the round's pieces by file offset and gives each its place in the round
 * buffer in that order (plan_round); every process's packed data is
 * received straight into those places (an hindexed datatype per process),
 * so pieces that touch in the file, from whatever process, become one
 * region, and the buffer is one iovec: one list write per round
 * (write_round). Holes are never read, so there is no read-modify-write.
 * The write of round r runs (pstripe_iwrite_list) while round r + 1 is
 * exchanged, in a second buffer. A read round (read_round) is the mirror: a
 * list read into the buffer, then the pieces go back to their owners, who
 * unpack them into their memory.
 *
 * If an aggregator's I/O fails it keeps exchanging (so nobody waits for it
 * forever) and every process returns the first failing process's error.
 */

#include "ad_pstripe.h"
#include "ad_pstripe_aggregate.h"

#define ADIOI_PSTRIPE_COLL_TAG 0x5053   /* "PS" */

/* Bytes of one process's access that lie in one aggregator's domain and
 * one round of it: what the process tells the aggregator (three
 * MPI_LONG_LONG on the wire). */
typedef struct {
    ADIO_Offset off;            /* file offset */
    ADIO_Offset len;            /* bytes */
    ADIO_Offset round;          /* round of the aggregator */
} coll_piece;

/* The pieces exchanged with one peer, in the order of the access's regions:
 * file order, so that their rounds are nondecreasing, unless a read's
 * filetype has blocks that overlap and an access goes back in the file.
 * Both ends walk a list in its order, a round at a time (next_round takes
 * the lowest round among the pieces due next, so the lowest of all
 * processes can always finish either way). Every process keeps one list per aggregator, of its own
 * pieces, with where each is in its memory stream; an aggregator also keeps
 * one per process, of the pieces it receives, with the place of each in
 * the round buffer. [cur, end) are the pieces of the current round. */
typedef struct {
    coll_piece *piece;
    ADIO_Offset *at;            /* memory stream offset, or place in the round buffer */
    int n;
    int cur, end;
    ADIO_Offset bytes;          /* of the pieces [cur, end) */
} coll_peer;

/* The access's memory as one stream of bytes, over its iovecs. */
typedef struct {
    const struct iovec *iov;
    size_t niov;
    ADIO_Offset *prefix;        /* prefix[k]: stream offset of iov[k] */
} mem_stream;

/* A received piece of the current round, for sorting by file offset. */
typedef struct {
    ADIO_Offset off;
    int g;                      /* index of the piece in coll_plan.recvd */
} piece_order;

/* Everything one collective call knows once the pieces are exchanged. */
typedef struct {
    ADIO_File fd;
    ADIOI_PSTRIPE_fs *ps;
    int nprocs, myrank;
    const int *agg;             /* [dom.naggs] the aggregators' ranks */
    int *own_agg;               /* agg when not ROMIO's ranklist (choose_aggregators) */
    int my_agg;                 /* my index in agg; -1: not an aggregator */
    ADIOI_PSTRIPE_domains dom;
    int64_t *base;              /* per aggregator: domain position of round 0 */
    mem_stream mem;
    coll_peer *to_agg;          /* [naggs]: my pieces */
    coll_peer *from;            /* [nprocs]: the pieces I aggregate */
    coll_piece *mine, *recvd;   /* storage of to_agg[].piece and from[].piece */
    ADIO_Offset *mine_at, *recvd_at;    /* storage of to_agg[].at and from[].at */
    int nrecvd, max_from;       /* pieces received; most from one process */
    /* per round, sized for the largest */
    piece_order *order;
    MPI_Datatype *ptype;        /* per process: its pieces' places in the round buffer */
    int *lens;
    MPI_Aint *displs;
    MPI_Request *reqs;
    MPI_Status *statuses;
    int nreqs;
    pstripe_region_t *regions;
    size_t regions_cap;
    /* the aggregator's writes in flight, one per round buffer */
    pstripe_request_t *pending[2];
    int slot;                   /* round buffer of the next round */
    int status;                 /* first pstripe error of this process */
    char detail[256];
} coll_plan;

/* One round, as plan_round lays it out. */
typedef struct {
    ADIO_Offset round;
    char *sendbuf;              /* my pieces for the other aggregators, packed */
    char *abuf;                 /* the aggregator's round buffer */
    ADIO_Offset abytes;         /* bytes in abuf */
    int nregions;               /* regions of the aggregator's list I/O */
} coll_round;

/* Copy between the access's memory stream and a packed buffer. */
static void stream_copy(const mem_stream * m, ADIO_Offset moff, ADIO_Offset len, char *packed,
                        int to_packed)
{
    size_t lo = 0, hi = m->niov, k;
    ADIO_Offset in, n;

    /* last iovec that starts at or before moff */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (m->prefix[mid] <= moff)
            lo = mid;
        else
            hi = mid;
    }
    for (k = lo; len > 0; k++) {
        in = moff - m->prefix[k];
        n = MPL_MIN(len, (ADIO_Offset) m->iov[k].iov_len - in);
        if (n <= 0)
            continue;
        if (to_packed)
            memcpy(packed, (char *) m->iov[k].iov_base + in, n);
        else
            memcpy((char *) m->iov[k].iov_base + in, packed, n);
        packed += n;
        moff += n;
        len -= n;
    }
}

/* Buffer idx (0, 1: the aggregator's round buffers, 2: packed pieces) of
 * at least size bytes, kept with the file so that collective calls do not
 * pay for fresh pages each time; freed at close. */
static char *coll_buffer(ADIOI_PSTRIPE_fs * ps, int idx, ADIO_Offset size)
{
    if (size > (ADIO_Offset) ps->coll_size[idx]) {
        pstripe_buffer_free(ps->coll_buf[idx]);
        ps->coll_buf[idx] = ADIOI_PSTRIPE_Buf_alloc((size_t) size);
        ps->coll_size[idx] = (size_t) size;
    }
    return ps->coll_buf[idx];
}

static int piece_cmp(const void *a, const void *b)
{
    const piece_order *x = a, *y = b;

    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->g - y->g;         /* same offset: keep rank order */
}

/* The first pstripe error of this process is the one reported. */
static void coll_failed(coll_plan * pl, int status)
{
    if (pl->status == PS_OK) {
        pl->status = status;
        MPL_snprintf(pl->detail, sizeof(pl->detail), "%s", pstripe_last_error());
    }
}

/* Wait for the write that last used round buffer slot. */
static void wait_pending(coll_plan * pl, int slot)
{
    int status;

    if (pl->pending[slot] == NULL)
        return;
    status = pstripe_request_wait(pl->pending[slot], NULL);
    pl->pending[slot] = NULL;
    if (status != PS_OK)
        coll_failed(pl, status);
}

/* Cut the access into pieces, one list per aggregator, in file order.
 * Called twice: to count the pieces (fill = 0), then to fill the lists. */
static void cut_access(coll_plan * pl, const ADIOI_PSTRIPE_access * acc, int fill)
{
    ADIOI_PSTRIPE_cut cut;
    ADIO_Offset moff = 0, off, left;
    coll_peer *peer;
    size_t r;
    int a;

    for (a = 0; a < pl->dom.naggs; a++)
        pl->to_agg[a].n = 0;
    for (r = 0; r < acc->nregions; r++) {
        off = (ADIO_Offset) acc->regions[r].offset;
        left = (ADIO_Offset) acc->regions[r].length;
        while (left > 0) {
            ADIOI_PSTRIPE_Domain_cut(&pl->dom, pl->base, off, left, &cut);
            peer = &pl->to_agg[cut.agg];
            if (fill) {
                peer->piece[peer->n].off = off;
                peer->piece[peer->n].len = cut.len;
                peer->piece[peer->n].round = cut.round;
                peer->at[peer->n] = moff;
            }
            peer->n++;
            off += cut.len;
            moff += cut.len;
            left -= cut.len;
        }
    }
}

/*
 * The aggregators of a read: unless the hints name them (cb_nodes,
 * cb_config_list), one per stripe of the file (at most one per process,
 * spread over the ranks) when that is more than ROMIO's default of one per
 * node, so that the stripes' servers are read in parallel by as many
 * processes, not one after the other through one. Writes keep ROMIO's
 * (every process writing its round was slower: two processes, 4 KiB
 * vector writes 562-771 -> 352-512 MiB/s, where reads of 4 KiB regions
 * went 592-1,119 -> 1,694-2,021). Returns the number; pl->agg the ranks.
 */
static int choose_aggregators(coll_plan * pl, int is_write)
{
    ADIO_File fd = pl->fd;
    int n = MPL_MIN(pl->nprocs, (int) pl->ps->layout.stripe_count), a;

    pl->agg = fd->hints->ranklist;
    if (is_write || pl->ps->cb_given || n <= fd->hints->cb_nodes)
        return fd->hints->cb_nodes;
    pl->own_agg = ADIOI_Malloc(n * sizeof(*pl->own_agg));
    for (a = 0; a < n; a++)
        pl->own_agg[a] = (int) ((long long) a * pl->nprocs / n);
    pl->agg = pl->own_agg;
    return n;
}

/* The domains of this call and my pieces, and my memory as a stream. */
static void plan_pieces(coll_plan * pl, const ADIOI_PSTRIPE_access * acc,
                        const ADIOI_PSTRIPE_range * ranges, int is_write)
{
    ADIO_File fd = pl->fd;
    ADIO_Offset min_start = -1;
    int a, p, total = 0;
    size_t k;

    ADIOI_PSTRIPE_Domains_init(&pl->dom, choose_aggregators(pl, is_write),
                               (int64_t) pl->ps->layout.stripe_size,
                               (int64_t) pl->ps->layout.stripe_count,
                               (int64_t) fd->hints->cb_buffer_size);
    pl->my_agg = -1;
    for (a = 0; a < pl->dom.naggs; a++)
        if (pl->agg[a] == pl->myrank)
            pl->my_agg = a;
    for (p = 0; p < pl->nprocs; p++)
        if (ranges[p].end > ranges[p].start && (min_start < 0 || ranges[p].start < min_start))
            min_start = ranges[p].start;
    pl->base = ADIOI_Malloc(pl->dom.naggs * sizeof(*pl->base));
    ADIOI_PSTRIPE_Domain_bases(&pl->dom, min_start, pl->base);

    pl->to_agg = ADIOI_Calloc(pl->dom.naggs, sizeof(*pl->to_agg));
    cut_access(pl, acc, 0);
    for (a = 0; a < pl->dom.naggs; a++)
        total += pl->to_agg[a].n;
    pl->mine = ADIOI_Malloc((total + 1) * sizeof(*pl->mine));
    pl->mine_at = ADIOI_Malloc((total + 1) * sizeof(*pl->mine_at));
    for (a = 0, total = 0; a < pl->dom.naggs; a++) {
        pl->to_agg[a].piece = pl->mine + total;
        pl->to_agg[a].at = pl->mine_at + total;
        total += pl->to_agg[a].n;
    }
    cut_access(pl, acc, 1);

    pl->mem.iov = acc->iov;
    pl->mem.niov = acc->niov;
    pl->mem.prefix = ADIOI_Malloc((acc->niov + 1) * sizeof(ADIO_Offset));
    pl->mem.prefix[0] = 0;
    for (k = 0; k < acc->niov; k++)
        pl->mem.prefix[k + 1] = pl->mem.prefix[k] + (ADIO_Offset) acc->iov[k].iov_len;
}

/* Every aggregator learns the pieces it will handle: the counts in an
 * all-to-all, then the pieces in an all-to-allv. Then the per-round
 * arrays are sized. */
static void exchange_pieces(coll_plan * pl)
{
    int nprocs = pl->nprocs, naggs = pl->dom.naggs, a, p;
    int *send_counts = ADIOI_Calloc(4 * nprocs, sizeof(int));
    int *recv_counts = send_counts + nprocs;
    int *sdispls = recv_counts + nprocs, *rdispls = sdispls + nprocs;
    MPI_Datatype piece_type;

    for (a = 0; a < naggs; a++) {
        p = pl->agg[a];
        send_counts[p] = pl->to_agg[a].n;
        sdispls[p] = (int) (pl->to_agg[a].piece - pl->mine);
    }
    ADIOI_PSTRIPE_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, pl->fd->comm);
    pl->nrecvd = 0;
    pl->max_from = 1;
    for (p = 0; p < nprocs; p++) {
        rdispls[p] = pl->nrecvd;
        pl->nrecvd += recv_counts[p];
        pl->max_from = MPL_MAX(pl->max_from, recv_counts[p]);
    }
    pl->recvd = ADIOI_Malloc((pl->nrecvd + 1) * sizeof(*pl->recvd));
    pl->recvd_at = ADIOI_Malloc((pl->nrecvd + 1) * sizeof(*pl->recvd_at));
    MPI_Type_contiguous(3, MPI_LONG_LONG, &piece_type);
    MPI_Type_commit(&piece_type);
    ADIOI_PSTRIPE_Alltoallv(pl->mine, send_counts, sdispls, piece_type, pl->recvd, recv_counts,
                            rdispls, piece_type, pl->fd->comm);
    MPI_Type_free(&piece_type);

    pl->from = ADIOI_Calloc(nprocs, sizeof(*pl->from));
    for (p = 0; p < nprocs; p++) {
        pl->from[p].piece = pl->recvd + rdispls[p];
        pl->from[p].at = pl->recvd_at + rdispls[p];
        pl->from[p].n = recv_counts[p];
    }
    ADIOI_Free(send_counts);

    pl->order = ADIOI_Malloc((pl->nrecvd + 1) * sizeof(*pl->order));
    pl->ptype = ADIOI_Malloc(nprocs * sizeof(*pl->ptype));
    pl->lens = ADIOI_Malloc(pl->max_from * sizeof(*pl->lens));
    pl->displs = ADIOI_Malloc(pl->max_from * sizeof(*pl->displs));
    pl->reqs = ADIOI_Malloc((naggs + nprocs + 1) * sizeof(*pl->reqs));
    pl->statuses = ADIOI_Malloc((naggs + nprocs + 1) * sizeof(*pl->statuses));
}

/* Lowest round (below round, if round >= 0) of the peers' next pieces. */
static ADIO_Offset peers_next_round(const coll_peer * peer, int n, ADIO_Offset round)
{
    int i;

    for (i = 0; i < n; i++)
        if (peer[i].cur < peer[i].n && (round < 0 || peer[i].piece[peer[i].cur].round < round))
            round = peer[i].piece[peer[i].cur].round;
    return round;
}

/* Mark the peers' pieces of round: [cur, end) and their bytes. */
static void peers_mark_round(coll_peer * peer, int n, ADIO_Offset round)
{
    int i;

    for (i = 0; i < n; i++) {
        peer[i].bytes = 0;
        for (peer[i].end = peer[i].cur;
             peer[i].end < peer[i].n && peer[i].piece[peer[i].end].round == round; peer[i].end++)
            peer[i].bytes += peer[i].piece[peer[i].end].len;
    }
}

/* The lowest round this process takes part in; 0 when there is none left. */
static int next_round(coll_plan * pl, coll_round * rd)
{
    ADIO_Offset round = peers_next_round(pl->to_agg, pl->dom.naggs, -1);

    round = peers_next_round(pl->from, pl->nprocs, round);
    if (round < 0)
        return 0;
    rd->round = round;
    peers_mark_round(pl->to_agg, pl->dom.naggs, round);
    peers_mark_round(pl->from, pl->nprocs, round);
    return 1;
}

/* The aggregator's pieces of this round in file order: each gets its place
 * in the round buffer in that order, so that neighbouring pieces
 * (whichever process they come from) make one region of the list I/O and
 * the buffer is a single iovec. */
static void place_pieces(coll_plan * pl, coll_round * rd)
{
    pstripe_region_t *regions = pl->regions;
    ADIO_Offset pos = 0;
    int k = 0, i, n, p;

    for (p = 0; p < pl->nprocs; p++) {
        for (i = pl->from[p].cur; i < pl->from[p].end; i++, k++) {
            pl->order[k].g = (int) (pl->from[p].piece - pl->recvd) + i;
            pl->order[k].off = pl->recvd[pl->order[k].g].off;
        }
    }
    qsort(pl->order, k, sizeof(*pl->order), piece_cmp);
    for (n = 0, i = 0; i < k; i++) {
        const coll_piece *piece = &pl->recvd[pl->order[i].g];
        pl->recvd_at[pl->order[i].g] = pos;
        pos += piece->len;
        if (n > 0 && regions[n - 1].offset + regions[n - 1].length == (uint64_t) piece->off) {
            regions[n - 1].length += (uint64_t) piece->len;
        } else {
            regions[n].offset = (uint64_t) piece->off;
            regions[n].length = (uint64_t) piece->len;
            n++;
        }
    }
    rd->nregions = n;
}

/* Per process: its pieces' places in the round buffer, an hindexed type
 * that the process's packed data is received into (sent from). */
static void make_types(coll_plan * pl)
{
    int p, i, cnt;

    for (p = 0; p < pl->nprocs; p++) {
        const coll_peer *from = &pl->from[p];
        pl->ptype[p] = MPI_DATATYPE_NULL;
        cnt = from->end - from->cur;
        if (cnt == 0 || p == pl->myrank)
            continue;
        for (i = 0; i < cnt; i++) {
            pl->lens[i] = (int) from->piece[from->cur + i].len;
            pl->displs[i] = (MPI_Aint) from->at[from->cur + i];
        }
        MPI_Type_create_hindexed(cnt, pl->lens, pl->displs, MPI_BYTE, &pl->ptype[p]);
        MPI_Type_commit(&pl->ptype[p]);
    }
}

/* The buffers of a round and, on an aggregator, its list I/O and types. */
static void plan_round(coll_plan * pl, coll_round * rd)
{
    ADIO_Offset sbytes = 0;
    int a, p, npieces = 0;

    for (a = 0; a < pl->dom.naggs; a++)
        if (a != pl->my_agg)
            sbytes += pl->to_agg[a].bytes;
    rd->abytes = 0;
    for (p = 0; p < pl->nprocs; p++) {
        rd->abytes += pl->from[p].bytes;
        npieces += pl->from[p].end - pl->from[p].cur;
    }
    rd->sendbuf = coll_buffer(pl->ps, 2, sbytes);
    /* the aggregator's buffer: wait for the write that last used it */
    wait_pending(pl, pl->slot);
    rd->abuf = coll_buffer(pl->ps, pl->slot, rd->abytes);
    if ((size_t) npieces > pl->regions_cap) {
        if (pl->regions)
            ADIOI_Free(pl->regions);
        pl->regions_cap = npieces;
        pl->regions = ADIOI_Malloc(pl->regions_cap * sizeof(*pl->regions));
    }
    rd->nregions = 0;
    if (npieces > 0)
        place_pieces(pl, rd);
    make_types(pl);
}

/* Copy my pieces of this round for the other aggregators between my
 * memory and the send buffer, where they are packed in aggregator order. */
static void copy_for_aggs(coll_plan * pl, coll_round * rd, int to_packed)
{
    ADIO_Offset pos = 0;
    int a, i;

    for (a = 0; a < pl->dom.naggs; a++) {
        const coll_peer *peer = &pl->to_agg[a];
        if (a == pl->my_agg)
            continue;
        for (i = peer->cur; i < peer->end; i++) {
            stream_copy(&pl->mem, peer->at[i], peer->piece[i].len, rd->sendbuf + pos, to_packed);
            pos += peer->piece[i].len;
        }
    }
}

/* Send (write) or receive (read) my packed pieces of this round to or from
 * the other aggregators. */
static void post_for_aggs(coll_plan * pl, coll_round * rd, int send)
{
    ADIO_Offset pos = 0;
    int a, rank;

    for (a = 0; a < pl->dom.naggs; a++) {
        const coll_peer *peer = &pl->to_agg[a];
        if (a == pl->my_agg || peer->bytes == 0)
            continue;
        rank = pl->agg[a];
        if (send)
            MPI_Isend(rd->sendbuf + pos, (int) peer->bytes, MPI_BYTE, rank,
                      ADIOI_PSTRIPE_COLL_TAG, pl->fd->comm, &pl->reqs[pl->nreqs++]);
        else
            MPI_Irecv(rd->sendbuf + pos, (int) peer->bytes, MPI_BYTE, rank,
                      ADIOI_PSTRIPE_COLL_TAG, pl->fd->comm, &pl->reqs[pl->nreqs++]);
        pos += peer->bytes;
    }
}

/* Aggregator: receive (write) or send (read) the other processes' pieces
 * of this round, into or from their places in the round buffer. */
static void post_for_procs(coll_plan * pl, coll_round * rd, int send)
{
    int p;

    for (p = 0; p < pl->nprocs; p++) {
        if (pl->ptype[p] == MPI_DATATYPE_NULL)
            continue;
        if (send)
            MPI_Isend(rd->abuf, 1, pl->ptype[p], p, ADIOI_PSTRIPE_COLL_TAG, pl->fd->comm,
                      &pl->reqs[pl->nreqs++]);
        else
            MPI_Irecv(rd->abuf, 1, pl->ptype[p], p, ADIOI_PSTRIPE_COLL_TAG, pl->fd->comm,
                      &pl->reqs[pl->nreqs++]);
    }
}

/* Aggregator: copy the pieces I aggregate myself between my memory and
 * their places in the round buffer. */
static void copy_self(coll_plan * pl, coll_round * rd, int to_buffer)
{
    const coll_peer *mine, *self;
    int i, j;

    if (pl->my_agg < 0)
        return;
    mine = &pl->to_agg[pl->my_agg];
    self = &pl->from[pl->myrank];
    for (i = mine->cur, j = self->cur; i < mine->end; i++, j++)
        stream_copy(&pl->mem, mine->at[i], mine->piece[i].len, rd->abuf + self->at[j],
                    to_buffer);
}

/* A write round: the pieces gather in the aggregators' round buffers,
 * which are written with one list write each, left running. */
static void write_round(coll_plan * pl, coll_round * rd)
{
    struct iovec iov = { rd->abuf, (size_t) rd->abytes };
    int status;

    pl->nreqs = 0;
    post_for_procs(pl, rd, 0);
    copy_for_aggs(pl, rd, 1);
    post_for_aggs(pl, rd, 1);
    copy_self(pl, rd, 1);
    ADIOI_PSTRIPE_Waitall_yielding(pl->nreqs, pl->reqs, pl->statuses);

    if (rd->nregions > 0 && pl->status == PS_OK) {
        status = pstripe_iwrite_list(pl->ps->file, pl->regions, rd->nregions, &iov, 1,
                                     &pl->pending[pl->slot]);
        if (status != PS_OK) {
            pl->pending[pl->slot] = NULL;
            coll_failed(pl, status);
        }
        pl->slot ^= 1;
    }
}

/* A read round: the aggregators read their round buffers with one list
 * read each (zeros after an error) and scatter the pieces. */
static void read_round(coll_plan * pl, coll_round * rd)
{
    struct iovec iov = { rd->abuf, (size_t) rd->abytes };
    int status = PS_ERR_IO;

    pl->nreqs = 0;
    post_for_aggs(pl, rd, 0);
    if (rd->nregions > 0) {
        if (pl->status == PS_OK) {
            status = pstripe_read_list(pl->ps->file, pl->regions, rd->nregions, &iov, 1, NULL);
            if (status != PS_OK)
                coll_failed(pl, status);
        }
        if (status != PS_OK)
            memset(rd->abuf, 0, rd->abytes);
        post_for_procs(pl, rd, 1);
        copy_self(pl, rd, 0);
    }
    ADIOI_PSTRIPE_Waitall_yielding(pl->nreqs, pl->reqs, pl->statuses);
    copy_for_aggs(pl, rd, 0);
}

static void end_round(coll_plan * pl)
{
    int a, p;

    for (p = 0; p < pl->nprocs; p++)
        if (pl->ptype[p] != MPI_DATATYPE_NULL)
            MPI_Type_free(&pl->ptype[p]);
    for (a = 0; a < pl->dom.naggs; a++)
        pl->to_agg[a].cur = pl->to_agg[a].end;
    for (p = 0; p < pl->nprocs; p++)
        pl->from[p].cur = pl->from[p].end;
}

static void plan_free(coll_plan * pl)
{
    ADIOI_Free(pl->reqs);
    ADIOI_Free(pl->statuses);
    ADIOI_Free(pl->order);
    ADIOI_Free(pl->ptype);
    ADIOI_Free(pl->lens);
    ADIOI_Free(pl->displs);
    if (pl->regions)
        ADIOI_Free(pl->regions);
    ADIOI_Free(pl->from);
    ADIOI_Free(pl->recvd);
    ADIOI_Free(pl->recvd_at);
    ADIOI_Free(pl->mem.prefix);
    ADIOI_Free(pl->to_agg);
    ADIOI_Free(pl->mine);
    ADIOI_Free(pl->mine_at);
    ADIOI_Free(pl->base);
    if (pl->own_agg)
        ADIOI_Free(pl->own_agg);
}

/* Two-phase I/O of the access acc (its regions made); ranges holds every
 * process's (ad_pstripe_coll.c). */
void ADIOI_PSTRIPE_Two_phase(ADIO_File fd, ADIOI_PSTRIPE_access * acc,
                             const ADIOI_PSTRIPE_range * ranges, int is_write, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_TWO_PHASE";
    coll_plan plan;
    coll_round rd;
    int failed, first_failed;

    memset(&plan, 0, sizeof(plan));
    plan.fd = fd;
    plan.ps = fd->fs_ptr;
    plan.status = PS_OK;
    MPI_Comm_size(fd->comm, &plan.nprocs);
    MPI_Comm_rank(fd->comm, &plan.myrank);

    plan_pieces(&plan, acc, ranges, is_write);
    exchange_pieces(&plan);
    while (next_round(&plan, &rd)) {
        plan_round(&plan, &rd);
        if (is_write)
            write_round(&plan, &rd);
        else
            read_round(&plan, &rd);
        end_round(&plan);
    }
    wait_pending(&plan, 0);
    wait_pending(&plan, 1);
    if (is_write)
        fd->dirty_write = 1;

    /* every process returns the first failing process's error */
    failed = (plan.status != PS_OK) ? plan.myrank : plan.nprocs;
    ADIOI_PSTRIPE_Allreduce(&failed, &first_failed, 1, MPI_INT, MPI_MIN, fd->comm);
    if (first_failed < plan.nprocs)
        *error_code = ADIOI_PSTRIPE_Bcast_status(fd, first_failed, plan.status, myname,
                                                 is_write ? "collective write" :
                                                 "collective read", __LINE__, plan.detail);
    else
        *error_code = MPI_SUCCESS;
    plan_free(&plan);
}

/*
 * ad_pstripe_coll.c: collective I/O (two-phase) with stripe-aligned file
 * domains and list I/O.
 *
 * This is not ROMIO's generic two-phase (ADIOI_GEN_WriteStridedColl, which
 * stays available for comparison when romio_pstripe_listio_write or _read
 * is disabled): that code gives each aggregator one contiguous file domain,
 * which on a striped file touches every server, and it fills holes by
 * reading the domain before writing it back. Here:
 *
 * File domains are whole stripes. Stripe i lives on stripe target
 * k = i % stripe_count, and targets are dealt to the cb_nodes aggregators
 * (ROMIO's ranklist) round robin, so an aggregator serves the stripes of
 * about stripe_count / cb_nodes targets, that is, talks to as few servers
 * as possible. With more aggregators than targets, the rows of a target's
 * stripes are dealt to the aggregators that share it.
 *
 * Each process cuts its own access (the region and iovec lists of list
 * I/O) into pieces that fall in one aggregator's domain and one round. The
 * stripes an aggregator owns, taken in file order, form its domain; a round
 * is cb_buffer_size bytes of that domain, counted from the first stripe of
 * the collective access. The pieces' offsets and lengths go to their
 * aggregators in one all-to-all; from then on every process knows exactly
 * what it sends and receives in each round, so rounds need no collective
 * call, a process simply walks the rounds it takes part in in increasing
 * order (which cannot deadlock: the lowest unfinished round can always
 * finish). In a write round the aggregator sorts the round's pieces by file
 * offset and gives each its place in the round buffer in that order; every
 * process's packed data is received straight into those places (an
 * hindexed datatype per process), so pieces that touch in the file, from
 * whatever process, become one region, and the buffer is one iovec: one
 * list write per round. Holes are never read, so there is no
 * read-modify-write. The write of round r runs
 * (pstripe_iwrite_list) while round r + 1 is exchanged, in a second buffer.
 * A read round is the mirror: a list read into the buffer, then the pieces
 * go back to their owners, who unpack them into their memory.
 *
 * romio_cb_write / romio_cb_read behave as in ROMIO: disable means
 * independent list I/O, enable means two-phase, automatic means two-phase
 * only when the processes' access ranges interleave. Atomic mode uses
 * independent I/O under the file lock, since an aggregator's write mixes
 * several processes' data.
 *
 * If an aggregator's I/O fails it keeps exchanging (so nobody waits for it
 * forever) and every process returns the first failing process's error.
 */

#include "ad_pstripe.h"

#define ADIOI_PSTRIPE_COLL_TAG 0x5053   /* "PS" */

typedef struct {
    ADIO_Offset off;            /* file offset */
    ADIO_Offset len;
    ADIO_Offset round;
    ADIO_Offset moff;           /* offset in the access's memory stream */
} coll_piece;

typedef struct {
    ADIO_Offset off;
    int g;                      /* index of the piece in the received metadata */
} piece_order;

static int piece_cmp(const void *a, const void *b)
{
    const piece_order *x = a, *y = b;

    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->g - y->g;         /* same offset: keep rank order */
}

typedef struct {
    int naggs;
    int *ranklist;
    ADIO_Offset stripe_size;
    ADIO_Offset stripe_count;
    ADIO_Offset round_size;
    ADIO_Offset *base;          /* per aggregator: domain position of round 0 */
} coll_domains;

/* Aggregator (index into ranklist) of stripe i. */
static int agg_of_stripe(const coll_domains * d, ADIO_Offset i)
{
    ADIO_Offset k = i % d->stripe_count, row = i / d->stripe_count, g;

    if (d->naggs <= d->stripe_count)
        return (int) (k % d->naggs);
    g = d->naggs / d->stripe_count;
    return (int) (k + d->stripe_count * (row % g));
}

/* Number of stripes aggregator a owns below stripe i. */
static ADIO_Offset stripes_below(const coll_domains * d, int a, ADIO_Offset i)
{
    ADIO_Offset sc = d->stripe_count, naggs = d->naggs;

    if (naggs <= sc) {
        ADIO_Offset targets = (sc - a + naggs - 1) / naggs;
        ADIO_Offset row = i / sc, k = i % sc;
        return row * targets + (k > a ? (k - a + naggs - 1) / naggs : 0);
    } else {
        ADIO_Offset g = naggs / sc, ka = a % sc, ra = a / sc, rows;
        if (a >= g * sc)
            return 0;
        rows = i > ka ? (i - ka + sc - 1) / sc : 0;
        return rows > ra ? (rows - ra + g - 1) / g : 0;
    }
}

/* Position of file offset off (in stripe i, owned by a) in a's domain. */
static ADIO_Offset domain_pos(const coll_domains * d, int a, ADIO_Offset i, ADIO_Offset off)
{
    return stripes_below(d, a, i) * d->stripe_size + off % d->stripe_size;
}

/* Cut the access into pieces, one list per aggregator, in file order (so
 * rounds are nondecreasing along each list). counts[a] is set. */
static coll_piece **make_pieces(const coll_domains * d, const ADIOI_PSTRIPE_access * acc,
                                int *counts)
{
    coll_piece **lists;
    int pass, a;
    size_t r;

    lists = ADIOI_Calloc(d->naggs, sizeof(*lists));
    for (pass = 0; pass < 2; pass++) {
        ADIO_Offset moff = 0;
        if (pass == 1) {
            for (a = 0; a < d->naggs; a++) {
                lists[a] = ADIOI_Malloc((counts[a] + 1) * sizeof(coll_piece));
                counts[a] = 0;
            }
        } else {
            memset(counts, 0, d->naggs * sizeof(int));
        }
        for (r = 0; r < acc->nregions; r++) {
            ADIO_Offset off = (ADIO_Offset) acc->regions[r].offset;
            ADIO_Offset left = (ADIO_Offset) acc->regions[r].length;
            while (left > 0) {
                ADIO_Offset i = off / d->stripe_size;
                ADIO_Offset pos, round, take;
                a = agg_of_stripe(d, i);
                pos = domain_pos(d, a, i, off) - d->base[a];
                round = pos / d->round_size;
                take = MPL_MIN(left, (i + 1) * d->stripe_size - off);
                take = MPL_MIN(take, (round + 1) * d->round_size - pos);
                if (pass == 1) {
                    coll_piece *p = &lists[a][counts[a]];
                    p->off = off;
                    p->len = take;
                    p->round = round;
                    p->moff = moff;
                }
                counts[a]++;
                off += take;
                moff += take;
                left -= take;
            }
        }
    }
    return lists;
}

/* Copy between the access's memory stream and a packed buffer. */
typedef struct {
    const struct iovec *iov;
    size_t niov;
    ADIO_Offset *prefix;        /* prefix[k]: stream offset of iov[k] */
} mem_stream;

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
        if (ps->coll_buf[idx] != NULL)
            ADIOI_Free(ps->coll_buf[idx]);
        ps->coll_buf[idx] = ADIOI_Malloc(size);
        ps->coll_size[idx] = (size_t) size;
    }
    return ps->coll_buf[idx];
}

static void independent(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                        int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                        int is_write, int *error_code)
{
    int buftype_is_contig, filetype_is_contig, lock_err = MPI_SUCCESS;
    ADIO_Offset off;

    ADIOI_Datatype_iscontig(datatype, &buftype_is_contig);
    ADIOI_Datatype_iscontig(fd->filetype, &filetype_is_contig);
    if (buftype_is_contig && filetype_is_contig) {
        off = (file_ptr_type == ADIO_EXPLICIT_OFFSET) ?
            fd->disp + (ADIO_Offset) fd->etype_size * offset : 0;
        if (fd->atomicity)
            lock_err = ADIOI_PSTRIPE_Lock(fd, is_write);
        if (lock_err != MPI_SUCCESS) {
            *error_code = lock_err;
            return;
        }
        if (is_write)
            ADIO_WriteContig(fd, buf, count, datatype, file_ptr_type, off, status, error_code);
        else
            ADIO_ReadContig(fd, buf, count, datatype, file_ptr_type, off, status, error_code);
        if (fd->atomicity)
            ADIOI_PSTRIPE_Unlock(fd);
    } else if (is_write) {
        ADIO_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    } else {
        ADIO_ReadStrided(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    }
}

/* Do the access ranges [start, end) of the processes overlap? (ROMIO's
 * test compares neighbours in rank order; this one sorts.) */
static int ranges_interleave(ADIO_Offset * se, int nprocs)
{
    ADIO_Offset *st = ADIOI_Malloc(2 * nprocs * sizeof(ADIO_Offset));
    int i, j, n = 0, inter = 0;
    ADIO_Offset max_end;

    for (i = 0; i < nprocs; i++) {
        if (se[2 * i + 1] <= se[2 * i])
            continue;
        /* insertion sort by start: nprocs is small next to the I/O */
        for (j = n; j > 0 && st[2 * (j - 1)] > se[2 * i]; j--) {
            st[2 * j] = st[2 * (j - 1)];
            st[2 * j + 1] = st[2 * (j - 1) + 1];
        }
        st[2 * j] = se[2 * i];
        st[2 * j + 1] = se[2 * i + 1];
        n++;
    }
    for (i = 1, max_end = n ? st[1] : 0; i < n && !inter; i++) {
        if (st[2 * i] < max_end)
            inter = 1;
        max_end = MPL_MAX(max_end, st[2 * i + 1]);
    }
    ADIOI_Free(st);
    return inter;
}

static void two_phase(ADIO_File fd, ADIOI_PSTRIPE_access * acc, ADIO_Offset * se,
                      int is_write, int *error_code)
{
    static char myname[] = "ADIOI_PSTRIPE_TWO_PHASE";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    coll_domains d;
    coll_piece **mine;
    mem_stream mem;
    int nprocs, myrank, my_agg = -1, a, p, i, j;
    int *send_counts, *recv_counts, *sdispls, *rdispls;
    ADIO_Offset *send_meta, *recv_meta = NULL, min_start = -1, total_recv;
    int *nmine;                 /* my pieces per aggregator */
    int *scur, *rcur;           /* cursors: my pieces per aggregator, received per process */
    int *rstart = NULL;         /* first received piece of process p in recv_meta */
    piece_order *order;         /* a round's received pieces, sorted by offset */
    ADIO_Offset *place;         /* place of each received piece in the round buffer */
    MPI_Datatype *ptype;        /* per process: its pieces' places */
    int *lens, nrecv_pieces = 0, max_pieces = 1;
    MPI_Aint *displs;
    MPI_Request *reqs;
    MPI_Status *statuses;
    char *sendbuf = NULL;
    pstripe_request_t *pending[2] = { NULL, NULL };
    pstripe_region_t *regions = NULL;
    size_t regions_cap = 0;
    int slot = 0, status = PS_OK, first_failed, failed;
    char detail[256] = "";

    MPI_Comm_size(fd->comm, &nprocs);
    MPI_Comm_rank(fd->comm, &myrank);

    d.naggs = fd->hints->cb_nodes;
    d.ranklist = fd->hints->ranklist;
    d.stripe_size = ps->layout.stripe_size > 0 ? (ADIO_Offset) ps->layout.stripe_size :
        (ADIO_Offset) fd->hints->cb_buffer_size;
    d.stripe_count = ps->layout.stripe_count > 0 ? (ADIO_Offset) ps->layout.stripe_count : 1;
    d.round_size = fd->hints->cb_buffer_size > 0 ? fd->hints->cb_buffer_size : d.stripe_size;
    for (a = 0; a < d.naggs; a++)
        if (d.ranklist[a] == myrank)
            my_agg = a;
    for (p = 0; p < nprocs; p++)
        if (se[2 * p + 1] > se[2 * p] && (min_start < 0 || se[2 * p] < min_start))
            min_start = se[2 * p];
    d.base = ADIOI_Malloc(d.naggs * sizeof(ADIO_Offset));
    for (a = 0; a < d.naggs; a++)
        d.base[a] = stripes_below(&d, a, min_start / d.stripe_size) * d.stripe_size;

    /* my pieces, and where they are in my memory */
    send_counts = ADIOI_Calloc(4 * nprocs, sizeof(int));
    recv_counts = send_counts + nprocs;
    sdispls = recv_counts + nprocs;
    rdispls = sdispls + nprocs;
    {
        int *per_agg = ADIOI_Malloc(d.naggs * sizeof(int));
        mine = make_pieces(&d, acc, per_agg);
        for (a = 0; a < d.naggs; a++)
            send_counts[d.ranklist[a]] = 3 * per_agg[a];
        ADIOI_Free(per_agg);
    }
    mem.iov = acc->iov;
    mem.niov = acc->niov;
    mem.prefix = ADIOI_Malloc((acc->niov + 1) * sizeof(ADIO_Offset));
    mem.prefix[0] = 0;
    for (i = 0; i < (int) acc->niov; i++)
        mem.prefix[i + 1] = mem.prefix[i] + (ADIO_Offset) acc->iov[i].iov_len;

    /* phase 0: every aggregator learns the pieces it will handle */
    MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, fd->comm);
    {
        int nsend = 0, nrecv = 0;
        for (p = 0; p < nprocs; p++) {
            sdispls[p] = nsend;
            rdispls[p] = nrecv;
            nsend += send_counts[p];
            nrecv += recv_counts[p];
        }
        send_meta = ADIOI_Malloc((nsend + 1) * sizeof(ADIO_Offset));
        for (a = 0; a < d.naggs; a++) {
            ADIO_Offset *m = send_meta + sdispls[d.ranklist[a]];
            for (i = 0; i < send_counts[d.ranklist[a]] / 3; i++) {
                m[3 * i] = mine[a][i].off;
                m[3 * i + 1] = mine[a][i].len;
                m[3 * i + 2] = mine[a][i].round;
            }
        }
        recv_meta = ADIOI_Malloc((nrecv + 1) * sizeof(ADIO_Offset));
        MPI_Alltoallv(send_meta, send_counts, sdispls, MPI_LONG_LONG, recv_meta, recv_counts,
                      rdispls, MPI_LONG_LONG, fd->comm);
        ADIOI_Free(send_meta);
    }

    scur = ADIOI_Calloc(d.naggs + 2 * nprocs, sizeof(int));
    rcur = scur + d.naggs;
    rstart = rcur + nprocs;
    for (p = 0; p < nprocs; p++) {
        rstart[p] = rdispls[p] / 3;
        recv_counts[p] /= 3;
    }
    for (p = 0; p < nprocs; p++) {
        nrecv_pieces += recv_counts[p];
        max_pieces = MPL_MAX(max_pieces, recv_counts[p]);
    }
    order = ADIOI_Malloc((nrecv_pieces + 1) * sizeof(*order));
    place = ADIOI_Malloc((nrecv_pieces + 1) * sizeof(*place));
    ptype = ADIOI_Malloc(nprocs * sizeof(*ptype));
    lens = ADIOI_Malloc(max_pieces * sizeof(*lens));
    displs = ADIOI_Malloc(max_pieces * sizeof(*displs));
    nmine = ADIOI_Malloc(d.naggs * sizeof(int));
    for (a = 0; a < d.naggs; a++)
        nmine[a] = send_counts[d.ranklist[a]] / 3;
    reqs = ADIOI_Malloc((d.naggs + nprocs + 1) * sizeof(MPI_Request));
    statuses = ADIOI_Malloc((d.naggs + nprocs + 1) * sizeof(MPI_Status));

    /* the rounds this process takes part in, in increasing order */
    for (;;) {
        ADIO_Offset round = -1, sbytes = 0, pos;
        int nreqs = 0, nregions = 0;
        char *abuf;

        for (a = 0; a < d.naggs; a++)
            if (scur[a] < nmine[a] && (round < 0 || mine[a][scur[a]].round < round))
                round = mine[a][scur[a]].round;
        if (my_agg >= 0)
            for (p = 0; p < nprocs; p++)
                if (rcur[p] < recv_counts[p]) {
                    ADIO_Offset r = recv_meta[3 * (rstart[p] + rcur[p]) + 2];
                    if (round < 0 || r < round)
                        round = r;
                }
        if (round < 0)
            break;

        /* sizes of this round */
        for (a = 0; a < d.naggs; a++)
            if (a != my_agg)
                for (i = scur[a]; i < nmine[a] && mine[a][i].round == round; i++)
                    sbytes += mine[a][i].len;
        total_recv = 0;
        if (my_agg >= 0)
            for (p = 0; p < nprocs; p++)
                for (i = rcur[p]; i < recv_counts[p]; i++) {
                    ADIO_Offset *m = recv_meta + 3 * (rstart[p] + i);
                    if (m[2] != round)
                        break;
                    total_recv += m[1];
                    nregions++;
                }

        sendbuf = coll_buffer(ps, 2, sbytes);
        /* the aggregator's buffer: wait for the write that last used it */
        if (pending[slot] != NULL) {
            int rc = pstripe_request_wait(pending[slot], NULL);
            pending[slot] = NULL;
            if (rc != PS_OK && status == PS_OK) {
                status = rc;
                MPL_snprintf(detail, sizeof(detail), "%s", pstripe_last_error());
            }
        }
        abuf = coll_buffer(ps, slot, total_recv);
        if ((size_t) nregions > regions_cap) {
            if (regions)
                ADIOI_Free(regions);
            regions_cap = nregions;
            regions = ADIOI_Malloc(regions_cap * sizeof(*regions));
        }

        /* the aggregator's pieces of this round in file order: each gets
         * its place in the buffer in that order, so that neighbouring
         * pieces (whichever process they come from) make one region of the
         * list I/O and the buffer is a single iovec; each process's pieces
         * are received into (sent from) their places with an hindexed type */
        if (my_agg >= 0 && nregions > 0) {
            int k = 0;
            for (p = 0; p < nprocs; p++)
                for (i = rcur[p]; i < recv_counts[p]; i++) {
                    int g = rstart[p] + i;
                    if (recv_meta[3 * g + 2] != round)
                        break;
                    order[k].off = recv_meta[3 * g];
                    order[k].g = g;
                    k++;
                }
            qsort(order, k, sizeof(*order), piece_cmp);
            pos = 0;
            nregions = 0;
            for (i = 0; i < k; i++) {
                int g = order[i].g;
                ADIO_Offset off = recv_meta[3 * g], len = recv_meta[3 * g + 1];
                place[g] = pos;
                pos += len;
                if (nregions > 0 &&
                    regions[nregions - 1].offset + regions[nregions - 1].length == (uint64_t) off) {
                    regions[nregions - 1].length += (uint64_t) len;
                } else {
                    regions[nregions].offset = (uint64_t) off;
                    regions[nregions].length = (uint64_t) len;
                    nregions++;
                }
            }
            for (p = 0; p < nprocs; p++) {
                int cnt = 0;
                ptype[p] = MPI_DATATYPE_NULL;
                for (i = rcur[p]; i < recv_counts[p]; i++, cnt++) {
                    int g = rstart[p] + i;
                    if (recv_meta[3 * g + 2] != round)
                        break;
                    lens[cnt] = (int) recv_meta[3 * g + 1];
                    displs[cnt] = (MPI_Aint) place[g];
                }
                if (cnt > 0 && p != myrank) {
                    MPI_Type_create_hindexed(cnt, lens, displs, MPI_BYTE, &ptype[p]);
                    MPI_Type_commit(&ptype[p]);
                }
            }
        }

        if (is_write) {
            /* receive the others' pieces into their places; pack and send
             * mine to the other aggregators; copy those I aggregate myself
             * straight from my memory to their places */
            if (my_agg >= 0 && nregions > 0)
                for (p = 0; p < nprocs; p++)
                    if (p != myrank && ptype[p] != MPI_DATATYPE_NULL)
                        MPI_Irecv(abuf, 1, ptype[p], p, ADIOI_PSTRIPE_COLL_TAG, fd->comm,
                                  &reqs[nreqs++]);
            pos = 0;
            for (a = 0; a < d.naggs; a++) {
                ADIO_Offset start = pos;
                if (a == my_agg)
                    continue;
                for (i = scur[a]; i < nmine[a] && mine[a][i].round == round; i++) {
                    stream_copy(&mem, mine[a][i].moff, mine[a][i].len, sendbuf + pos, 1);
                    pos += mine[a][i].len;
                }
                if (pos > start)
                    MPI_Isend(sendbuf + start, (int) (pos - start), MPI_BYTE, d.ranklist[a],
                              ADIOI_PSTRIPE_COLL_TAG, fd->comm, &reqs[nreqs++]);
            }
            if (my_agg >= 0)
                for (i = scur[my_agg], j = rstart[myrank] + rcur[myrank];
                     i < nmine[my_agg] && mine[my_agg][i].round == round; i++, j++)
                    stream_copy(&mem, mine[my_agg][i].moff, mine[my_agg][i].len, abuf + place[j],
                                1);
            MPI_Waitall(nreqs, reqs, statuses);

            if (my_agg >= 0 && nregions > 0 && status == PS_OK) {
                struct iovec iov = { abuf, (size_t) total_recv };
                int rc = pstripe_iwrite_list(ps->file, regions, nregions, &iov, 1,
                                             &pending[slot]);
                if (rc != PS_OK) {
                    pending[slot] = NULL;
                    status = rc;
                    MPL_snprintf(detail, sizeof(detail), "%s", pstripe_last_error());
                }
                slot ^= 1;
            }
        } else {
            /* post receives for my pieces, read the aggregator's, send */
            pos = 0;
            for (a = 0; a < d.naggs; a++) {
                ADIO_Offset start = pos;
                if (a == my_agg)
                    continue;
                for (i = scur[a]; i < nmine[a] && mine[a][i].round == round; i++)
                    pos += mine[a][i].len;
                if (pos > start)
                    MPI_Irecv(sendbuf + start, (int) (pos - start), MPI_BYTE, d.ranklist[a],
                              ADIOI_PSTRIPE_COLL_TAG, fd->comm, &reqs[nreqs++]);
            }
            if (my_agg >= 0 && nregions > 0) {
                int rc = PS_ERR_IO;
                if (status == PS_OK) {
                    struct iovec iov = { abuf, (size_t) total_recv };
                    rc = pstripe_read_list(ps->file, regions, nregions, &iov, 1, NULL);
                    if (rc != PS_OK) {
                        status = rc;
                        MPL_snprintf(detail, sizeof(detail), "%s", pstripe_last_error());
                    }
                }
                if (rc != PS_OK)
                    memset(abuf, 0, total_recv);
                for (p = 0; p < nprocs; p++)
                    if (p != myrank && ptype[p] != MPI_DATATYPE_NULL)
                        MPI_Isend(abuf, 1, ptype[p], p, ADIOI_PSTRIPE_COLL_TAG, fd->comm,
                                  &reqs[nreqs++]);
                for (i = scur[my_agg], j = rstart[myrank] + rcur[myrank];
                     i < nmine[my_agg] && mine[my_agg][i].round == round; i++, j++)
                    stream_copy(&mem, mine[my_agg][i].moff, mine[my_agg][i].len, abuf + place[j],
                                0);
            }
            MPI_Waitall(nreqs, reqs, statuses);
            pos = 0;
            for (a = 0; a < d.naggs; a++)
                for (i = scur[a]; a != my_agg && i < nmine[a] && mine[a][i].round == round; i++) {
                    stream_copy(&mem, mine[a][i].moff, mine[a][i].len, sendbuf + pos, 0);
                    pos += mine[a][i].len;
                }
        }

        if (my_agg >= 0 && nregions > 0)
            for (p = 0; p < nprocs; p++)
                if (ptype[p] != MPI_DATATYPE_NULL)
                    MPI_Type_free(&ptype[p]);

        /* next round */
        for (a = 0; a < d.naggs; a++)
            while (scur[a] < nmine[a] && mine[a][scur[a]].round == round)
                scur[a]++;
        if (my_agg >= 0)
            for (p = 0; p < nprocs; p++)
                while (rcur[p] < recv_counts[p] &&
                       recv_meta[3 * (rstart[p] + rcur[p]) + 2] == round)
                    rcur[p]++;
    }

    for (slot = 0; slot < 2; slot++) {
        if (pending[slot] != NULL) {
            int rc = pstripe_request_wait(pending[slot], NULL);
            if (rc != PS_OK && status == PS_OK) {
                status = rc;
                MPL_snprintf(detail, sizeof(detail), "%s", pstripe_last_error());
            }
        }
    }
    if (is_write)
        fd->dirty_write = 1;

    /* every process returns the first failing process's error */
    failed = (status != PS_OK) ? myrank : nprocs;
    MPI_Allreduce(&failed, &first_failed, 1, MPI_INT, MPI_MIN, fd->comm);
    if (first_failed < nprocs)
        *error_code = ADIOI_PSTRIPE_Bcast_status(fd, first_failed, status, myname,
                                                 is_write ? "collective write" :
                                                 "collective read", __LINE__, detail);
    else
        *error_code = MPI_SUCCESS;

    ADIOI_Free(reqs);
    ADIOI_Free(statuses);
    ADIOI_Free(order);
    ADIOI_Free(place);
    ADIOI_Free(ptype);
    ADIOI_Free(lens);
    ADIOI_Free(displs);
    ADIOI_Free(nmine);
    ADIOI_Free(scur);
    if (regions)
        ADIOI_Free(regions);
    ADIOI_Free(recv_meta);
    ADIOI_Free(mem.prefix);
    for (a = 0; a < d.naggs; a++)
        ADIOI_Free(mine[a]);
    ADIOI_Free(mine);
    ADIOI_Free(send_counts);
    ADIOI_Free(d.base);
}

static void pstripe_coll(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                         int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                         int is_write, int *error_code)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    ADIOI_PSTRIPE_access acc;
    ADIO_Offset my_se[2], *se;
    int cb = is_write ? fd->hints->cb_write : fd->hints->cb_read;
    int nprocs, build_err, all_ok, ok;

    *error_code = MPI_SUCCESS;
    if ((is_write ? ps->listio_write : ps->listio_read) == ADIOI_HINT_DISABLE) {
        /* ROMIO's generic two-phase over our contiguous I/O, for comparison;
         * its file domains are aligned to striping_unit (our stripe size) */
        if (is_write)
            ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                       error_code);
        else
            ADIOI_GEN_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                      error_code);
        return;
    }
    if (fd->atomicity || cb == ADIOI_HINT_DISABLE) {
        independent(fd, buf, count, datatype, file_ptr_type, offset, status, is_write,
                    error_code);
        return;
    }

    MPI_Comm_size(fd->comm, &nprocs);
    ADIOI_PSTRIPE_Access_build(fd, buf, count, datatype, file_ptr_type, offset, &acc,
                               &build_err);
    ok = (build_err == MPI_SUCCESS);
    my_se[0] = ok ? acc.start : 0;
    my_se[1] = ok && acc.total > 0 ? acc.end : my_se[0];
    se = ADIOI_Malloc(2 * nprocs * sizeof(ADIO_Offset));
    MPI_Allgather(my_se, 2, MPI_LONG_LONG, se, 2, MPI_LONG_LONG, fd->comm);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, fd->comm);

    if (!all_ok) {
        *error_code = ok ? MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
                                                "ADIOI_PSTRIPE_COLL", __LINE__, MPI_ERR_IO,
                                                "**io", "**io %s",
                                                "pstripe: collective I/O failed on another process")
            : build_err;
    } else if (cb == ADIOI_HINT_AUTO && !ranges_interleave(se, nprocs)) {
        /* nothing to gain from aggregation: independent list I/O */
        ADIOI_PSTRIPE_Access_free(&acc);
        ADIOI_Free(se);
        independent(fd, buf, count, datatype, file_ptr_type, offset, status, is_write,
                    error_code);
        return;
    } else if (ADIOI_PSTRIPE_Apply_options(fd, error_code) == 0) {
        two_phase(fd, &acc, se, is_write, error_code);
        if (*error_code == MPI_SUCCESS) {
            if (file_ptr_type == ADIO_INDIVIDUAL)
                fd->fp_ind = acc.end;
            fd->fp_sys_posn = -1;
#ifdef HAVE_STATUS_SET_BYTES
            if (status)
                MPIR_Status_set_bytes(status, datatype, (MPI_Count) acc.total);
#endif
        }
    }
    if (ok)
        ADIOI_PSTRIPE_Access_free(&acc);
    ADIOI_Free(se);
}

void ADIOI_PSTRIPE_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                    MPI_Datatype datatype, int file_ptr_type,
                                    ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    pstripe_coll(fd, (void *) buf, count, datatype, file_ptr_type, offset, status, 1,
                 error_code);
}

void ADIOI_PSTRIPE_ReadStridedColl(ADIO_File fd, void *buf, int count,
                                   MPI_Datatype datatype, int file_ptr_type,
                                   ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    pstripe_coll(fd, buf, count, datatype, file_ptr_type, offset, status, 0, error_code);
}

/* Nonblocking collectives (MPI_File_iwrite_all ...): done at once, then a
 * completed request is returned. */
void ADIOI_PSTRIPE_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                     MPI_Datatype datatype, int file_ptr_type,
                                     ADIO_Offset offset, ADIO_Request * request,
                                     int *error_code)
{
    ADIO_Status status;
    MPI_Count nbytes = 0;

    MPI_Status_set_elements_x(&status, MPI_BYTE, 0);
    ADIOI_PSTRIPE_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                                   error_code);
    if (*error_code == MPI_SUCCESS)
        MPI_Get_elements_x(&status, MPI_BYTE, &nbytes);
    MPIO_Completed_request_create(&fd, nbytes, error_code, request);
}

void ADIOI_PSTRIPE_IreadStridedColl(ADIO_File fd, void *buf, int count,
                                    MPI_Datatype datatype, int file_ptr_type,
                                    ADIO_Offset offset, ADIO_Request * request,
                                    int *error_code)
{
    ADIO_Status status;
    MPI_Count nbytes = 0;

    MPI_Status_set_elements_x(&status, MPI_BYTE, 0);
    ADIOI_PSTRIPE_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                                  error_code);
    if (*error_code == MPI_SUCCESS)
        MPI_Get_elements_x(&status, MPI_BYTE, &nbytes);
    MPIO_Completed_request_create(&fd, nbytes, error_code, request);
}

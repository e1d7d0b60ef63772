/*
 * ps_random: random accesses, drawn from a seed, checked against a byte
 * model of the file under MPI's nonatomic consistency rules: the driver's
 * write-behind buffer, read cache and read-ahead must keep them.
 *
 * The run is cut into epochs. In each epoch the file is cut into slots
 * (of a size drawn per epoch, 777 bytes to 3 MiB) and the slots are given,
 * in runs, to one process each or to nobody; all this is drawn from the
 * seed alike on every process. A process writes only bytes of its own
 * slots, and reads only bytes of its own slots (its writes of this epoch
 * must show at once, also those still in the driver's write-behind buffer)
 * or of nobody's (bytes the others wrote in earlier epochs, visible since
 * the MPI_File_sync, MPI_Barrier, MPI_File_sync that ends every epoch).
 * Every process draws every process's accesses from the seed (the epoch is
 * drawn twice: first without I/O, for the end of the others' furthest
 * write), so it keeps the whole file's model. Its reads are compared with
 * it, bytes and the byte count of MPI_Get_count alike: a read counts the
 * bytes below the end of file, which is the model's size at the epoch's
 * start or past the process's own writes; where another process's writes
 * of the epoch may have extended the file meanwhile (or the process's own
 * nonblocking write in flight), the count may be anything up to that
 * furthest end (the bytes there are a hole: zeros).
 *
 * The accesses (each process several per step, a few steps per epoch):
 * - MPI_File_write_at and read_at of 1 byte to 600 KiB (most of them
 *   small), within the file, in a zone of 256 KiB the process returns to,
 *   across the end of file, just and far past it (holes), over and around
 *   the process's recent writes (at once, while still buffered); one in
 *   five with a noncontiguous memory type (pieces with gaps, some in
 *   reverse order);
 * - streams of 8-20 reads of 1 byte to 300 KB with a constant step (the
 *   driver reads ahead), some shifted, some backward, some past the end of
 *   file, with small reads of another place between them, the process
 *   writing ahead of its stream (small, large, nonblocking) and reading on
 *   over its writes;
 * - MPI_File_iwrite_at with reads and writes beside it before MPI_Wait
 *   (or MPI_Waitall, or MPI_Test in a loop), then a read over it;
 *   MPI_File_iread_at;
 * - collective MPI_File_write_at_all and read_at_all (or their
 *   nonblocking forms) of each process's own ranges;
 * - a vector file view (small blocks, resized or not), set collectively,
 *   read and written through, independently and collectively, at explicit
 *   offsets or at the individual file pointer (whose position is checked),
 *   then the view set back to bytes;
 * - a view of each process's own slots in a window shared by all (the
 *   views interleave: two-phase I/O), written collectively and read back,
 *   then a view of the slots it may read, read collectively and
 *   independently;
 * - the shared file pointer: set collectively (MPI_File_seek_shared),
 *   then an ordered write or read (each process's length drawn alike on
 *   all, 0 where its range would leave what it may access), the pointer
 *   checked (MPI_File_get_position_shared), then one process alone writes
 *   and reads on at the pointer (MPI_File_write_shared, read_shared);
 * - independent accesses in atomic mode; MPI_File_set_info with other
 *   cache sizes (or write-behind or the read cache disabled);
 * - at the end of an epoch, after sync-barrier-sync, MPI_File_get_size
 *   against the model, and sometimes a collective MPI_File_set_size (grow
 *   or shrink) or MPI_File_preallocate, and MPI_File_get_size again.
 * Last, the file is closed and opened again and every process reads it
 * whole, in pieces of random sizes.
 *
 * The driver's cache sizes at open are drawn from the seed (seed % 4:
 * small buffers that fill and evict, the defaults, medium, and large
 * blocks that read ahead large reads with gaps).
 *
 * Where ROMIO's generic code (ufs, the reference) differs: a noncontiguous
 * read (through a view, or into a noncontiguous memory type), a two-phase
 * collective read and MPI_File_iread_at in atomic mode count every byte
 * asked for, also past the end of file (pstripe counts only those below
 * it, except in its aggregated collective reads and in ROMIO's atomic
 * iread): there either count is accepted, and only the bytes below the end
 * of file are compared. romio_ds_write is disabled, and on ufs
 * romio_cb_write too: ROMIO's data-sieving and two-phase writes read the
 * holes between the data and write them back, past the end of file as
 * stale or 0xff bytes.
 *
 * Usage: ps_random FILENAME [SEED [EPOCHS]]   (defaults: seed 1, 60 epochs)
 * On a mismatch: seed, epoch, step, op index, offset, length, expected and
 * got, then MPI_Abort. With PS_RANDOM_VERBOSE set, rank 0 prints what was
 * done and where the time went; with PS_RANDOM_DEBUG, a mismatch prints
 * the file's size too.
 */
#include "pstest.h"

#include <stdarg.h>

#define MAXF ((MPI_Offset) 24 << 20)    /* no write reaches past this */
#define CAP (MAXF + ((MPI_Offset) 1 << 20))     /* nor any read */
#define BIG (600 << 10)         /* largest contiguous access */
#define VIEW_MAX (256 << 10)    /* largest access through a view */
#define MAXREG 8192             /* regions of an access through a view */
#define NONE (-1)               /* a slot nobody writes this epoch */
#define NREC 8                  /* recent writes kept, to read back */
#define MAXSTEPS 12
#define MAXVOPS 4

enum { M_READ, M_WRITE };
enum { S_INDEP, S_COLL_WRITE, S_COLL_READ, S_VIEW, S_ATOMIC, S_SET_INFO, S_OWN_VIEW, S_SHARED,
    NKINDS
};
enum { V_INDEP, V_COLL_READ, V_COLL_WRITE };
enum { ST_WRITE, ST_READ, ST_STREAM, ST_STREAM_READS, ST_IWRITE, ST_IREAD, ST_COLL_WRITE,
    ST_COLL_READ, ST_VIEW_READ, ST_VIEW_WRITE, ST_SET_SIZE, ST_PREALLOC, ST_ATOMIC, ST_SET_INFO,
    ST_ORDERED, ST_SHARED, ST_AMBIG, NSTATS
};
static const char *stat_name[NSTATS] = {
    "writes", "reads", "streams", "stream reads", "iwrites", "ireads", "coll writes",
    "coll reads", "view reads", "view writes", "set_size", "preallocate", "atomic phases",
    "set_info", "ordered accesses", "shared-pointer accesses", "ambiguous counts"
};

typedef struct {
    uint64_t s;
} rng_t;

typedef struct {
    MPI_Offset off, len;
} reg_t;

/* What one process has done this epoch (every process keeps every one's). */
typedef struct {
    rng_t r;                    /* its draws this epoch */
    MPI_Offset vis;             /* its end of file: the epoch's, or past its own writes */
    MPI_Offset wmax;            /* end of its furthest write this epoch */
    MPI_Offset hot;             /* a zone it accesses often this epoch */
    MPI_Offset pend_off, pend_len;      /* its nonblocking write in flight ... */
    unsigned pend_tag;          /* ... its data ... */
    int pend_how;               /* ... and how it is completed (wait_req) */
    MPI_Offset rec_off[NREC], rec_len[NREC];    /* its recent writes */
    int nrec;
    long nop;                   /* its accesses so far (op index) */
} rstate;

/* The steps of an epoch, alike on all processes. */
typedef struct {
    int kind;
    int nvops, vkind[MAXVOPS];  /* S_VIEW: its accesses */
    int view_info;              /* S_VIEW: set the view with the info object */
    int nb;                     /* S_COLL_*: nonblocking (MPI_File_iwrite_at_all ...) */
    int hints;                  /* S_SET_INFO: which cache sizes */
    MPI_Offset w0, wl;          /* S_OWN_VIEW: the window */
    int readback;               /* S_OWN_VIEW: read the collective write back collectively */
    int fp;                     /* S_*VIEW: collective accesses at the individual file pointer */
    MPI_Offset sfp_at;          /* S_SHARED: where the shared pointer is set ... */
    int sfp_write;              /* ... the ordered access a write ... */
    rng_t sfp_r;                /* ... its lengths ... */
    int solo;                   /* ... and who goes on alone at the shared pointer */
} step_t;

static unsigned seed;
static int epoch, nepochs;
static const char *fname;
static int on_pstripe;
static MPI_File fh;
static MPI_Info info;

static unsigned char *model;    /* the file as it must be */
static MPI_Offset csize;        /* its size at the epoch's start */
static MPI_Offset slot_sz;      /* the epoch's slots ... */
static long nslots;
static short *owner;            /* ... and their owners (or NONE) */
static rstate *rs;              /* every process's state */
static int pass1;               /* drawing the epoch ahead: no I/O, no model */
static MPI_Offset e_other;      /* end of the others' furthest write this epoch */
static unsigned char *wbuf, *rbuf, *ibuf, *pbuf;
static reg_t regs[MAXREG];
static long stats[NSTATS];
static MPI_Request ireq;        /* my nonblocking write */
static int cur_step, cur_kind;  /* the step being done */
static int atomic;              /* in atomic mode */
static double t_steps, t_sync, t_final;         /* seconds spent (rank 0 prints them) */
static double t_kind[NKINDS];
static const char *kind_name[NKINDS] = { "independent", "collective write", "collective read",
    "view", "atomic", "set_info", "own-slot view", "shared pointer"
};

/* (functions, not PS_MIN and PS_MAX: their arguments are often draws) */
static MPI_Offset omin(MPI_Offset a, MPI_Offset b)
{
    return a < b ? a : b;
}

static MPI_Offset omax(MPI_Offset a, MPI_Offset b)
{
    return a > b ? a : b;
}

/* ---- random numbers ----------------------------------------------------- */

static uint64_t rnext(rng_t * r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* 0 .. n-1 (0 if n <= 0) */
static MPI_Offset rnd(rng_t * r, MPI_Offset n)
{
    return n > 0 ? (MPI_Offset) (rnext(r) % (uint64_t) n) : 0;
}

static int chance(rng_t * r, int pct)
{
    return rnd(r, 100) < pct;
}

static rng_t rng_for(int ep, int who)
{
    rng_t r;

    r.s = (uint64_t) seed * 0x2545F4914F6CDD1DULL ^ ((uint64_t) (ep + 1) << 40) ^
        (uint64_t) (who + 3) * 0xD1B54A32D192ED03ULL;
    rnext(&r);
    return r;
}

/* The data tag of process q's access number nop. */
static unsigned data_tag(int q, long nop)
{
    rng_t r;

    r.s = (uint64_t) seed * 0x9E3779B97F4A7C15ULL ^ ((uint64_t) epoch << 48) ^
        ((uint64_t) q << 32) ^ (uint64_t) nop;
    return (unsigned) rnext(&r);
}

/* ---- the slots ---------------------------------------------------------- */

static int legal_slot(int q, long s, int mode)
{
    int o = owner[s];

    return mode == M_WRITE ? o == q : (o == q || o == NONE);
}

static MPI_Offset limit_of(int mode)
{
    return mode == M_WRITE ? MAXF : CAP;
}

/* May process q access [off, off + len) (mode)? Not over its write in
 * flight either. */
static int legal(int q, MPI_Offset off, MPI_Offset len, int mode)
{
    const rstate *st = &rs[q];
    long s;

    if (off < 0 || len <= 0 || off + len > limit_of(mode))
        return 0;
    if (st->pend_len > 0 && off < st->pend_off + st->pend_len && st->pend_off < off + len)
        return 0;
    for (s = (long) (off / slot_sz); s <= (long) ((off + len - 1) / slot_sz); s++)
        if (!legal_slot(q, s, mode))
            return 0;
    return 1;
}

/* Move [*off, *off + *len) to the first place at or after *off that q may
 * access, and cut it where that stops. 0 if there is none near. */
static int fit(int q, MPI_Offset * off, MPI_Offset * len, int mode)
{
    const rstate *st = &rs[q];
    MPI_Offset lim = limit_of(mode), o = omax(*off, 0), end;
    long s, k;

    for (s = (long) (o / slot_sz), k = 0; k < 4096; s++, k++) {
        if ((MPI_Offset) s * slot_sz >= lim)
            return 0;
        if (legal_slot(q, s, mode))
            break;
    }
    if (k == 4096)
        return 0;
    o = omax(o, (MPI_Offset) s * slot_sz);
    end = omin(o + *len, lim);
    while ((MPI_Offset) (s + 1) * slot_sz < end && legal_slot(q, s + 1, mode))
        s++;
    end = omin(end, (MPI_Offset) (s + 1) * slot_sz);
    /* not over the write in flight */
    if (st->pend_len > 0 && o < st->pend_off + st->pend_len && st->pend_off < end) {
        if (o >= st->pend_off)
            return 0;
        end = st->pend_off;
    }
    *off = o;
    *len = end - o;
    return *len > 0;
}

/* The epoch's slots: a size, and owners given in runs of slots. */
static void draw_slots(rng_t * sh)
{
    static const MPI_Offset sizes[] = { 777, 4096, 10000, 65536, 300001, 1 << 20, 3 << 20 };
    long s, run, k;
    int o;

    slot_sz = sizes[rnd(sh, sizeof(sizes) / sizeof(sizes[0]))];
    nslots = (long) ((CAP + slot_sz - 1) / slot_sz);
    free(owner);
    owner = malloc(nslots * sizeof(*owner));
    for (s = 0; s < nslots; s += run) {
        run = 1 + rnd(sh, slot_sz < 65536 ? 64 : 4);
        o = chance(sh, 35) ? NONE : (int) rnd(sh, ps_nprocs);
        for (k = s; k < s + run && k < nslots; k++)
            owner[k] = (short) ((MPI_Offset) k * slot_sz >= MAXF ? NONE : o);
    }
}

/* ---- the model ---------------------------------------------------------- */

/* Process q wrote [off, off + len) with tag (applied to the model in the
 * second pass only). */
static void note_write(int q, MPI_Offset off, MPI_Offset len, unsigned tag)
{
    rstate *st = &rs[q];

    if (len <= 0)
        return;
    if (!pass1)
        ps_fill(model + off, (size_t) len, (uint64_t) off, tag);
    st->vis = omax(st->vis, off + len);
    st->wmax = omax(st->wmax, off + len);
    st->rec_off[st->nrec % NREC] = off;
    st->rec_len[st->nrec % NREC] = len;
    st->nrec++;
}

static int exec(int q)
{
    return !pass1 && q == ps_rank;
}

/* Report a mismatch of process q's current access, and abort. */
static void fail_at(int q, MPI_Offset off, MPI_Offset len, const char *fmt, ...)
    __attribute__ ((format(printf, 4, 5)));

static void fail_at(int q, MPI_Offset off, MPI_Offset len, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (getenv("PS_RANDOM_DEBUG") != NULL) {
        MPI_Offset size = -1;
        MPI_File_get_size(fh, &size);
        fprintf(stderr, "(size now %lld)\n", (long long) size);
    }
    PS_FAIL("seed %u: epoch %d: step %d (%s): op %ld: offset %lld: length %lld: %s", seed,
            epoch, cur_step, kind_name[cur_kind], rs[q].nop, (long long) off, (long long) len,
            msg);
}

/* Check a read of the regions (in data order, ascending; n bytes in all)
 * that counted got bytes into buf. The count must lie between the bytes
 * below my end of file and those below the furthest end of file it may
 * see; loose: ROMIO's generic count of every byte asked for is accepted
 * too (then only the bytes below my end of file are compared). */
static void check_read(int q, const char *what, const unsigned char *data, const reg_t * rg,
                       int nreg, MPI_Offset n, int got, int loose)
{
    const rstate *st = &rs[q];
    MPI_Offset vis = st->vis, amb = omax(vis, e_other), lo = 0, hi = 0, cmp = 0, k = 0, o;
    int i;

    if (st->pend_len > 0)
        amb = omax(amb, st->pend_off + st->pend_len);
    for (i = 0; i < nreg; i++) {
        lo += omax(0, omin(rg[i].len, vis - rg[i].off));
        hi += omax(0, omin(rg[i].len, amb - rg[i].off));
    }
    if (hi > lo)
        stats[ST_AMBIG]++;
    if (loose && got == n)
        cmp = lo;
    else if (got < lo || got > hi)
        fail_at(q, rg[0].off, n, "%s: %d bytes counted, expected %lld..%lld (end of file %lld, "
                "others may have extended it to %lld)", what, got, (long long) lo, (long long) hi,
                (long long) vis, (long long) amb);
    else
        cmp = got;
    for (i = 0; i < nreg && k < cmp; i++)
        for (o = rg[i].off; o < rg[i].off + rg[i].len && k < cmp; o++, k++)
            if (data[k] != model[o])
                fail_at(q, rg[0].off, n,
                        "%s: byte at file offset %lld (byte %lld of the read, region %d at %lld "
                        "of %lld bytes) is 0x%02x, expected 0x%02x (%d bytes counted)", what,
                        (long long) o, (long long) k, i, (long long) rg[i].off,
                        (long long) rg[i].len, data[k], model[o], got);
}

/* ---- accesses ----------------------------------------------------------- */

static MPI_Offset draw_size(rng_t * r)
{
    int k = (int) rnd(r, 100);

    if (k < 20)
        return 1 + rnd(r, 64);
    if (k < 55)
        return 1 + rnd(r, 4096);
    if (k < 75)
        return 4097 + rnd(r, 61440);
    if (k < 94)
        return 65537 + rnd(r, 196608);
    return 262145 + rnd(r, BIG - 262144);
}

/* A place for an access of len bytes by q: in the file, across its end,
 * just past it or far past it (a hole), or over a recent own write. */
static MPI_Offset draw_where(int q, rng_t * r, MPI_Offset len, int mode)
{
    const rstate *st = &rs[q];
    MPI_Offset end = omax(st->vis, 1);
    int k = (int) rnd(r, 100), i;

    if (st->nrec > 0 && k < (mode == M_READ ? 30 : 12)) {
        i = (int) rnd(r, omin(st->nrec, NREC));
        return omax(0, st->rec_off[i] + rnd(r, st->rec_len[i] + 64) - 32);
    }
    k = (int) rnd(r, 100);
    if (k < 35)                 /* the zone: cached blocks, rewritten */
        return st->hot + rnd(r, 256 << 10);
    if (k < 75)
        return rnd(r, end);
    if (k < 90)
        return omax(0, end - rnd(r, len + 4096));
    if (k < 97)
        return end + rnd(r, 65536);
    return end + rnd(r, 1 + rnd(r, 4 << 20));
}

/* The memory of an access: contiguous, or (drawn: 1 in 5) 2 to 7 pieces
 * with gaps, in order or reversed, described by an hindexed type. */
typedef struct {
    int n;                      /* pieces; 0: contiguous */
    int blen[8];
    MPI_Aint disp[8];
} mem_t;

static void mem_draw(rng_t * r, MPI_Offset len, mem_t * m)
{
    MPI_Offset left = len, at, pos[8], span;
    int i, rev;

    m->n = 0;
    if (len < 2 || !chance(r, 20))
        return;
    m->n = 2 + (int) rnd(r, omin(6, len - 1));
    rev = chance(r, 30);
    at = rnd(r, 16);
    for (i = 0; i < m->n; i++) {
        m->blen[i] = (int) (i == m->n - 1 ? left : 1 + rnd(r, left - (m->n - 1 - i)));
        left -= m->blen[i];
        pos[i] = at;
        at += m->blen[i] + 1 + rnd(r, 64);
    }
    span = at;
    for (i = 0; i < m->n; i++)
        m->disp[i] = (MPI_Aint) (rev ? span - pos[i] - m->blen[i] : pos[i]);
}

/* The datatype and count of an access of len bytes in memory m (free the
 * type with mem_free). */
static MPI_Datatype mem_type(const mem_t * m, MPI_Offset len, int *count)
{
    MPI_Datatype t;

    if (m->n == 0) {
        *count = (int) len;
        return MPI_BYTE;
    }
    MPI_Type_create_hindexed(m->n, m->blen, m->disp, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    *count = 1;
    return t;
}

static void mem_free(MPI_Datatype * t)
{
    if (*t != MPI_BYTE)
        MPI_Type_free(t);
}

/* Put the packed bytes into memory m at buf, or take them out. */
static void mem_copy(const mem_t * m, unsigned char *buf, unsigned char *packed, MPI_Offset len,
                     int to_mem)
{
    MPI_Offset k = 0;
    int i;

    if (m->n == 0) {
        if (to_mem)
            memcpy(buf, packed, (size_t) len);
        else
            memcpy(packed, buf, (size_t) len);
        return;
    }
    for (i = 0; i < m->n; k += m->blen[i], i++)
        if (to_mem)
            memcpy(buf + m->disp[i], packed + k, (size_t) m->blen[i]);
        else
            memcpy(packed + k, buf + m->disp[i], (size_t) m->blen[i]);
}

/* Write [off, off + len) (coll: 0 independent, 1 collective, 2
 * nonblocking collective). */
static void write_at(int q, rng_t * r, MPI_Offset off, MPI_Offset len, int coll,
                     const char *what)
{
    unsigned tag = data_tag(q, rs[q].nop);
    MPI_Datatype type;
    MPI_Request req;
    MPI_Status st;
    mem_t m;
    int got, count;

    mem_draw(r, len, &m);
    if (exec(q)) {
        ps_fill(pbuf, (size_t) len, (uint64_t) off, tag);
        mem_copy(&m, wbuf, pbuf, len, 1);
        type = mem_type(&m, len, &count);
        if (coll == 2) {
            PS_MPI(MPI_File_iwrite_at_all(fh, off, wbuf, count, type, &req));
            PS_MPI(MPI_Wait(&req, &st));
        } else if (coll) {
            PS_MPI(MPI_File_write_at_all(fh, off, wbuf, count, type, &st));
        } else {
            PS_MPI(MPI_File_write_at(fh, off, wbuf, count, type, &st));
        }
        mem_free(&type);
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (got != len)
            fail_at(q, off, len, "%s: %d bytes counted", what, got);
        stats[coll ? ST_COLL_WRITE : ST_WRITE]++;
    }
    note_write(q, off, len, tag);
    rs[q].nop++;
}

/* Read [off, off + len) and check it (coll as for write_at). */
static void read_at(int q, rng_t * r, MPI_Offset off, MPI_Offset len, int coll,
                    const char *what)
{
    MPI_Datatype type;
    MPI_Request req;
    MPI_Status st;
    mem_t m;
    reg_t rg;
    int got, count;

    mem_draw(r, len, &m);
    if (exec(q)) {
        type = mem_type(&m, len, &count);
        if (coll == 2) {
            PS_MPI(MPI_File_iread_at_all(fh, off, rbuf, count, type, &req));
            PS_MPI(MPI_Wait(&req, &st));
        } else if (coll) {
            PS_MPI(MPI_File_read_at_all(fh, off, rbuf, count, type, &st));
        } else {
            PS_MPI(MPI_File_read_at(fh, off, rbuf, count, type, &st));
        }
        mem_free(&type);
        MPI_Get_count(&st, MPI_BYTE, &got);
        mem_copy(&m, rbuf, pbuf, len, 0);
        if (len > 0) {
            rg.off = off;
            rg.len = len;
            /* (ROMIO's generic strided read, for a noncontiguous memory
             * type on ufs, counts every byte asked for) */
            check_read(q, what, pbuf, &rg, 1, len, got, coll || (m.n > 0 && !on_pstripe));
        }
        stats[coll ? ST_COLL_READ : ST_READ]++;
    }
    rs[q].nop++;
}

/* Start a nonblocking write of [off, off + len) (q has none in flight). */
static void iwrite_start(int q, rng_t * r, MPI_Offset off, MPI_Offset len)
{
    rstate *st = &rs[q];
    MPI_Datatype type;
    mem_t m;
    int count;

    st->pend_tag = data_tag(q, st->nop);
    st->pend_how = (int) rnd(r, 3);
    mem_draw(r, len, &m);
    if (exec(q)) {
        ps_fill(pbuf, (size_t) len, (uint64_t) off, st->pend_tag);
        mem_copy(&m, ibuf, pbuf, len, 1);
        type = mem_type(&m, len, &count);
        PS_MPI(MPI_File_iwrite_at(fh, off, ibuf, count, type, &ireq));
        mem_free(&type);
        stats[ST_IWRITE]++;
    }
    st->pend_off = off;
    st->pend_len = len;
    st->nop++;
}

/* Complete a request: MPI_Wait, MPI_Waitall, or a loop of MPI_Test with
 * some computing between the tests (how: 0, 1, 2). */
static void wait_req(MPI_Request * req, MPI_Status * status, int how)
{
    int done = 0;

    if (how == 0) {
        PS_MPI(MPI_Wait(req, status));
    } else if (how == 1) {
        PS_MPI(MPI_Waitall(1, req, status));
    } else {
        while (!done) {
            PS_MPI(MPI_Test(req, &done, status));
            if (!done)
                ps_compute(20000);
        }
    }
}

static void iwrite_wait(int q)
{
    rstate *st = &rs[q];
    MPI_Offset off = st->pend_off, len = st->pend_len;
    MPI_Status status;
    int got;

    if (len == 0)
        return;
    if (exec(q)) {
        wait_req(&ireq, &status, st->pend_how);
        MPI_Get_count(&status, MPI_BYTE, &got);
        if (got != len)
            fail_at(q, off, len, "iwrite_at: %d bytes counted after MPI_Wait", got);
    }
    st->pend_off = st->pend_len = 0;
    note_write(q, off, len, st->pend_tag);
}

/* A blocking write somewhere q may write; 0 if it found no place. */
static int op_write(int q, rng_t * r, const char *what)
{
    MPI_Offset len = draw_size(r), off = draw_where(q, r, len, M_WRITE);

    if (!fit(q, &off, &len, M_WRITE))
        return 0;
    write_at(q, r, off, len, 0, what);
    return 1;
}

static void op_read(int q, rng_t * r, const char *what)
{
    MPI_Offset len = draw_size(r), off = draw_where(q, r, len, M_READ);

    if (fit(q, &off, &len, M_READ))
        read_at(q, r, off, len, 0, what);
}

/* A write, then at once a read over it and around it. */
static void op_write_read(int q, rng_t * r)
{
    const rstate *st = &rs[q];
    MPI_Offset off, len;

    if (!op_write(q, r, "write (to read back)"))
        return;
    off = st->rec_off[(st->nrec - 1) % NREC];
    len = st->rec_len[(st->nrec - 1) % NREC];
    off = omax(0, off - rnd(r, 100));
    len = len + rnd(r, 200);
    if (fit(q, &off, &len, M_READ))
        read_at(q, r, off, len, 0, "read back of an own write at once");
}

static void op_iwrite(int q, rng_t * r)
{
    MPI_Offset len = draw_size(r), off = draw_where(q, r, len, M_WRITE);
    int k, n = (int) rnd(r, 4);

    if (!fit(q, &off, &len, M_WRITE))
        return;
    iwrite_start(q, r, off, len);
    for (k = 0; k < n; k++) {
        if (chance(r, 25))
            op_write(q, r, "write beside a nonblocking write");
        else
            op_read(q, r, "read beside a nonblocking write");
    }
    iwrite_wait(q);
    if (chance(r, 60)) {
        off = omax(0, off - rnd(r, 50));
        len = omin(len + rnd(r, 100), BIG);
        if (fit(q, &off, &len, M_READ))
            read_at(q, r, off, len, 0, "read after a nonblocking write");
    }
}

static void op_iread(int q, rng_t * r)
{
    MPI_Offset len = draw_size(r), off = draw_where(q, r, len, M_READ);
    MPI_Datatype type;
    MPI_Request req;
    MPI_Status status;
    mem_t m;
    reg_t rg;
    int got, count, how;

    if (!fit(q, &off, &len, M_READ))
        return;
    mem_draw(r, len, &m);
    how = (int) rnd(r, 3);
    if (exec(q)) {
        type = mem_type(&m, len, &count);
        PS_MPI(MPI_File_iread_at(fh, off, rbuf, count, type, &req));
        wait_req(&req, &status, how);
        mem_free(&type);
        MPI_Get_count(&status, MPI_BYTE, &got);
        mem_copy(&m, rbuf, pbuf, len, 0);
        rg.off = off;
        rg.len = len;
        /* (ROMIO's MPI_File_iread_at reads at once in atomic mode, and
         * counts every byte asked for; so does its generic strided read,
         * for a noncontiguous memory type on ufs) */
        check_read(q, "iread_at", pbuf, &rg, 1, len, got, atomic || (m.n > 0 && !on_pstripe));
        stats[ST_IREAD]++;
    }
    rs[q].nop++;
}

/* Reads of size bytes at off0 + k * step (the driver reads ahead; some
 * streams go backward), some shifted a little or further, with small reads
 * of one other place between them now and then (as a program reads its
 * metadata); q writes ahead of them, small, large or nonblocking, and goes
 * on reading over its writes. */
static void op_stream(int q, rng_t * r)
{
    rstate *st = &rs[q];
    MPI_Offset size, step, off0, off, len, meta, end = omax(st->vis, 1);
    int n = 8 + (int) rnd(r, 13), k, c = (int) rnd(r, 100), wait_at = -1;

    if (c < 40)
        size = 1 + rnd(r, 4096);
    else if (c < 60)
        size = 1024 << rnd(r, 3);
    else if (c < 93)
        size = 4097 + rnd(r, 61440);
    else
        size = 100000 + rnd(r, 200001);
    c = (int) rnd(r, 100);
    if (c < 30)
        step = size;
    else if (c < 55)
        step = size + 1 + rnd(r, size);
    else
        step = 2 * size + rnd(r, 2 * size + 1);
    c = (int) rnd(r, 100);
    if (c < 55)
        off0 = rnd(r, end);
    else if (c < 85)
        off0 = omax(0, end - rnd(r, n * step));       /* runs past the end of file */
    else
        off0 = end + rnd(r, 65536);
    len = size;
    if (!fit(q, &off0, &len, M_READ))
        return;
    if (chance(r, 5)) {         /* backward */
        off0 += (n - 1) * step;
        step = -step;
    }
    meta = draw_where(q, r, 2048, M_READ);      /* read now and then between (metadata) */
    if (exec(q))
        stats[ST_STREAM]++;
    for (k = 0; k < n; k++) {
        off = off0 + k * step;
        c = (int) rnd(r, 100);
        if (c < 8)              /* shifted within the read-ahead's slack */
            off += rnd(r, size / 16 + 2);
        else if (c < 11)        /* or further */
            off += rnd(r, omax(step, size) + 1);
        if (legal(q, off, size, M_READ) && off + size <= CAP) {
            read_at(q, r, off, size, 0, "stream read");
            if (exec(q))
                stats[ST_STREAM_READS]++;
        }
        if (k == wait_at)
            iwrite_wait(q);
        c = (int) rnd(r, 100);
        if (c >= 90) {
            len = 1 + rnd(r, 2048);
            if (legal(q, meta, len, M_READ))
                read_at(q, r, meta, len, 0, "read between stream reads");
        } else if (c < 15) {
            /* an own write ahead of the stream */
            off = off0 + (k + 1 + rnd(r, 4)) * step + rnd(r, step) - size / 2;
            len = chance(r, 50) ? 1 + rnd(r, 300) : chance(r, 70) ? 1000 + rnd(r, 70000) :
                draw_size(r);
            if (legal(q, off, len, M_WRITE))
                write_at(q, r, off, len, 0, "write ahead of a stream");
        } else if (c < 20 && st->pend_len == 0) {
            off = off0 + (k + 1 + rnd(r, 4)) * step + rnd(r, step) - size / 2;
            len = chance(r, 60) ? 1 + rnd(r, 2000) : 1 + rnd(r, 100000);
            if (legal(q, off, len, M_WRITE)) {
                iwrite_start(q, r, off, len);
                wait_at = k + (int) rnd(r, 3);
            }
        }
    }
    iwrite_wait(q);
}

static void step_indep(int q, rng_t * r)
{
    int n = 1 + (int) rnd(r, 6), k, c;

    for (k = 0; k < n; k++) {
        c = (int) rnd(r, 100);
        if (c < 32)
            op_write(q, r, "write_at");
        else if (c < 60)
            op_read(q, r, "read_at");
        else if (c < 72)
            op_write_read(q, r);
        else if (c < 82)
            op_stream(q, r);
        else if (c < 93)
            op_iwrite(q, r);
        else
            op_iread(q, r);
    }
}

/* ---- collective steps --------------------------------------------------- */

static void step_coll_write(int q, rng_t * r, const step_t * sp)
{
    MPI_Offset len = draw_size(r), off = draw_where(q, r, len, M_WRITE);

    if (chance(r, 20) || !fit(q, &off, &len, M_WRITE))
        off = len = 0;
    write_at(q, r, off, len, 1 + sp->nb, sp->nb ? "iwrite_at_all" : "write_at_all");
}

static void step_coll_read(int q, rng_t * r, const step_t * sp)
{
    MPI_Offset len = draw_size(r), off = draw_where(q, r, len, M_READ);

    if (chance(r, 15) || !fit(q, &off, &len, M_READ))
        off = len = 0;
    read_at(q, r, off, len, 1 + sp->nb, sp->nb ? "iread_at_all" : "read_at_all");
}

/* Atomic mode around some independent accesses (stronger rules than the
 * model needs; the driver bypasses its caches, under its lock). */
static void step_atomic(int q, rng_t * r)
{
    if (exec(q)) {
        PS_MPI(MPI_File_set_atomicity(fh, 1));
        atomic = 1;
        stats[ST_ATOMIC]++;
    }
    step_indep(q, r);
    if (exec(q)) {
        PS_MPI(MPI_File_set_atomicity(fh, 0));
        atomic = 0;
    }
}

/* New cache sizes (MPI_File_set_info: buffered writes go out, the caches
 * are made again). */
static void step_set_info(int q, const step_t * sp)
{
    static const char *const cfg[6][5] = {
        {"16k", "64k", "4k", "enable", "enable"},
        {"2m", "4m", "64k", "enable", "enable"},
        {"256k", "1m", "16k", "enable", "enable"},
        {"1m", "8m", "256k", "enable", "enable"},
        {"64k", "256k", "8k", "disable", "enable"},
        {"64k", "256k", "8k", "enable", "disable"},
    };
    const char *const *c = cfg[sp->hints % 6];
    MPI_Info inf;

    if (!exec(q))
        return;
    MPI_Info_create(&inf);
    MPI_Info_set(inf, "romio_pstripe_wb_buffer_size", c[0]);
    MPI_Info_set(inf, "romio_pstripe_rc_size", c[1]);
    MPI_Info_set(inf, "romio_pstripe_rc_block_size", c[2]);
    MPI_Info_set(inf, "romio_pstripe_write_behind", c[3]);
    MPI_Info_set(inf, "romio_pstripe_read_cache", c[4]);
    PS_MPI(MPI_File_set_info(fh, inf));
    MPI_Info_free(&inf);
    stats[ST_SET_INFO]++;
}

/* A vector view: blocks of b bytes every s bytes, c of them, tiles of
 * ext bytes from disp. */
typedef struct {
    MPI_Offset disp, c, b, s, ext;
} view_t;

/* The regions of n bytes of view data from data offset vo, cut before the
 * first region q may not access (mode); returns the bytes kept. */
static MPI_Offset view_regions(int q, const view_t * v, MPI_Offset vo, MPI_Offset n, int mode,
                               int *nreg)
{
    MPI_Offset k = vo, kept = 0, tile, in, blk, o, len;

    *nreg = 0;
    while (kept < n && *nreg < MAXREG) {
        tile = k / (v->c * v->b);
        in = k % (v->c * v->b);
        blk = in / v->b;
        o = v->disp + tile * v->ext + blk * v->s + in % v->b;
        len = omin(v->b - in % v->b, n - kept);
        if (!legal(q, o, len, mode))
            break;
        regs[(*nreg)++] = (reg_t) {
        o, len};
        kept += len;
        k += len;
    }
    return kept;
}

/* Write (or read) n bytes of view data from view offset vo through the
 * view set now, whose regions these are (regs[0..nreg), in data order);
 * coll: 0 independent, 1 collective, 2 nonblocking collective; fp: at the
 * individual file pointer (MPI_File_seek first), which must end past the
 * access (a read's: if it ends below the end of file). */
static void view_io(int q, MPI_Offset vo, MPI_Offset n, int nreg, int write, int coll, int fp,
                    const char *what)
{
    rstate *st = &rs[q];
    unsigned tag = data_tag(q, st->nop);
    unsigned char *buf = write ? wbuf : rbuf;
    MPI_Request req;
    MPI_Status status;
    MPI_Offset k, pos;
    int i, got, c = (int) n;

    if (write) {
        if (exec(q)) {
            for (i = 0, k = 0; i < nreg; k += regs[i].len, i++)
                ps_fill(wbuf + k, (size_t) regs[i].len, (uint64_t) regs[i].off, tag);
        }
        for (i = 0; i < nreg; i++)
            note_write(q, regs[i].off, regs[i].len, tag);
    }
    if (exec(q)) {
        if (fp)
            PS_MPI(MPI_File_seek(fh, vo, MPI_SEEK_SET));
        if (coll == 2 && write && fp)
            PS_MPI(MPI_File_iwrite_all(fh, buf, c, MPI_BYTE, &req));
        else if (coll == 2 && write)
            PS_MPI(MPI_File_iwrite_at_all(fh, vo, buf, c, MPI_BYTE, &req));
        else if (coll == 2 && fp)
            PS_MPI(MPI_File_iread_all(fh, buf, c, MPI_BYTE, &req));
        else if (coll == 2)
            PS_MPI(MPI_File_iread_at_all(fh, vo, buf, c, MPI_BYTE, &req));
        else if (coll && write && fp)
            PS_MPI(MPI_File_write_all(fh, buf, c, MPI_BYTE, &status));
        else if (coll && write)
            PS_MPI(MPI_File_write_at_all(fh, vo, buf, c, MPI_BYTE, &status));
        else if (coll && fp)
            PS_MPI(MPI_File_read_all(fh, buf, c, MPI_BYTE, &status));
        else if (coll)
            PS_MPI(MPI_File_read_at_all(fh, vo, buf, c, MPI_BYTE, &status));
        else if (write && fp)
            PS_MPI(MPI_File_write(fh, buf, c, MPI_BYTE, &status));
        else if (write)
            PS_MPI(MPI_File_write_at(fh, vo, buf, c, MPI_BYTE, &status));
        else if (fp)
            PS_MPI(MPI_File_read(fh, buf, c, MPI_BYTE, &status));
        else
            PS_MPI(MPI_File_read_at(fh, vo, buf, c, MPI_BYTE, &status));
        if (coll == 2)
            PS_MPI(MPI_Wait(&req, &status));
        MPI_Get_count(&status, MPI_BYTE, &got);
        if (write && got != n)
            fail_at(q, nreg ? regs[0].off : 0, n, "%s: %d bytes counted", what, got);
        if (!write && n > 0)
            check_read(q, what, rbuf, regs, nreg, n, got, coll || !on_pstripe);
        /* (where a read stops at the end of file, ROMIO moves the pointer
         * past the bytes read only, when the view is contiguous) */
        for (i = 0, k = 0; i < nreg; i++)
            k += omax(0, omin(regs[i].len, st->vis - regs[i].off));
        if (fp && (write || k == n)) {
            PS_MPI(MPI_File_get_position(fh, &pos));
            if (pos != vo + n)
                fail_at(q, nreg ? regs[0].off : 0, n, "%s: file pointer at %lld after %d bytes "
                        "from view offset %lld (%d regions), expected %lld", what,
                        (long long) pos, got, (long long) vo, nreg, (long long) (vo + n));
        }
        stats[write ? ST_VIEW_WRITE : ST_VIEW_READ]++;
    }
    st->nop++;
}

static void view_access(int q, rng_t * r, const view_t * v, int kind, int coll_fp)
{
    int write = kind == V_COLL_WRITE || (kind == V_INDEP && chance(r, 45));
    int coll = kind != V_INDEP, nreg = 0, fp = coll ? coll_fp : chance(r, 30);
    MPI_Offset vo = rnd(r, chance(r, 70) ? v->c * v->b : 4 * v->c * v->b);
    MPI_Offset n = 1 + rnd(r, omin(VIEW_MAX, omin(3 * v->c * v->b, 2048 * v->b)));

    n = view_regions(q, v, vo, n, write ? M_WRITE : M_READ, &nreg);
    if (n == 0 && !coll)
        return;
    view_io(q, vo, n, nreg, write, coll, fp,
            write ? (coll ? "write_at_all through a view" : "write through a view")
            : (coll ? "read_at_all through a view" : "read through a view"));
}

/* The runs of slots in [w0, w0 + wl) that q may access (mode), in file
 * order; returns their bytes. */
static MPI_Offset slot_runs(int q, MPI_Offset w0, MPI_Offset wl, int mode, reg_t * runs,
                            int *nruns)
{
    MPI_Offset o, len, total = 0;
    long s;

    *nruns = 0;
    for (s = (long) (w0 / slot_sz); (MPI_Offset) s * slot_sz < w0 + wl; s++) {
        if (!legal_slot(q, s, mode))
            continue;
        o = omax((MPI_Offset) s * slot_sz, w0);
        len = omin((MPI_Offset) (s + 1) * slot_sz, w0 + wl) - o;
        if (*nruns > 0 && runs[*nruns - 1].off + runs[*nruns - 1].len == o)
            runs[*nruns - 1].len += len;
        else if (*nruns < MAXREG)
            runs[(*nruns)++] = (reg_t) {
            o, len};
        else
            break;
        total += len;
    }
    return total;
}

/* The regions (into regs) of view data [vo, vo + n) of a view of these
 * runs. */
static int slice_runs(const reg_t * runs, int nruns, MPI_Offset vo, MPI_Offset n)
{
    MPI_Offset at = 0, from, to;
    int i, nreg = 0;

    for (i = 0; i < nruns && at < vo + n; at += runs[i].len, i++) {
        from = omax(vo, at);
        to = omin(vo + n, at + runs[i].len);
        if (from < to)
            regs[nreg++] = (reg_t) {
            runs[i].off + from - at, to - from};
    }
    return nreg;
}

/* Every process sets a view of its own slots in a window of the file (the
 * same for all: the processes' views interleave, two-phase I/O), writes
 * part of it collectively and maybe reads it back; then a view of the
 * slots it may read (its own and nobody's), read collectively, and maybe
 * independently. */
static void step_own_view(int q, rng_t * r, const step_t * sp)
{
    static reg_t runs[MAXREG];
    static int blens[MAXREG];
    static MPI_Aint displs[MAXREG];
    MPI_Datatype ftype = MPI_BYTE;
    MPI_Offset total, vo, n;
    int k, i, nruns, nreg;

    for (k = 0; k < 2; k++) {
        total = slot_runs(q, sp->w0, sp->wl, k == 0 ? M_WRITE : M_READ, runs, &nruns);
        if (exec(q)) {
            for (i = 0; i < nruns; i++) {
                blens[i] = (int) runs[i].len;
                displs[i] = (MPI_Aint) runs[i].off;
            }
            if (nruns > 0) {
                MPI_Type_create_hindexed(nruns, blens, displs, MPI_BYTE, &ftype);
                MPI_Type_commit(&ftype);
            }
            PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, ftype, "native",
                                     sp->view_info ? info : MPI_INFO_NULL));
        }
        vo = rnd(r, total / 2 + 1);
        n = omin(total - vo, 1 + rnd(r, BIG));
        nreg = slice_runs(runs, nruns, vo, n);
        if (k == 0) {
            view_io(q, vo, n, nreg, 1, 1 + sp->nb, sp->fp, "write_at_all through own slots");
            if (sp->readback)   /* (collective: alike on all) */
                view_io(q, vo, n, nreg, 0, 1, sp->fp, "read_at_all back through own slots");
        } else {
            view_io(q, vo, n, nreg, 0, 1 + sp->nb, sp->fp, "read_at_all through readable slots");
            if (chance(r, 40) && n > 0) {
                vo += rnd(r, n);
                n = omin(total - vo, 1 + rnd(r, BIG));
                nreg = slice_runs(runs, nruns, vo, n);
                view_io(q, vo, n, nreg, 0, 0, chance(r, 30), "read through readable slots");
            }
        }
        if (exec(q) && nruns > 0)
            MPI_Type_free(&ftype);
        ftype = MPI_BYTE;
    }
    if (exec(q))
        PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
}

static void step_view(int q, rng_t * r, const step_t * sp)
{
    view_t v;
    MPI_Offset len = 1, c;
    MPI_Datatype vec, ftype;
    int k;

    c = rnd(r, 100);
    v.b = c < 40 ? 1 + rnd(r, 16) : c < 80 ? 1 + rnd(r, 512) : 1 + rnd(r, 8192);
    v.c = 1 + rnd(r, 48);
    v.s = v.b + 1 + rnd(r, chance(r, 50) ? v.b : 2 * v.b + 64);
    v.ext = chance(r, 50) ? v.c * v.s : (v.c - 1) * v.s + v.b;
    v.disp = draw_where(q, r, v.c * v.s, chance(r, 50) ? M_READ : M_WRITE);
    if (!fit(q, &v.disp, &len, chance(r, 50) ? M_READ : M_WRITE))
        v.disp = rnd(r, omax(csize, 1));
    if (exec(q)) {
        MPI_Type_vector((int) v.c, (int) v.b, (int) v.s, MPI_BYTE, &vec);
        MPI_Type_create_resized(vec, 0, (MPI_Aint) v.ext, &ftype);
        MPI_Type_commit(&ftype);
        PS_MPI(MPI_File_set_view(fh, v.disp, MPI_BYTE, ftype, "native",
                                 sp->view_info ? info : MPI_INFO_NULL));
        MPI_Type_free(&vec);
    }
    for (k = 0; k < sp->nvops; k++)
        view_access(q, r, &v, sp->vkind[k], sp->fp);
    if (exec(q)) {
        PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MPI_Type_free(&ftype);
    }
}

/* ---- the shared file pointer ------------------------------------------ */

/* The ordered access of step sp, alike on every process: each process's
 * range (off[p], len[p]), in rank order from sp->sfp_at, with len[p] 0
 * where the range would leave what p may access. Returns the pointer's
 * end. */
static MPI_Offset ordered_ranges(const step_t * sp, MPI_Offset * off, MPI_Offset * len)
{
    int mode = sp->sfp_write ? M_WRITE : M_READ, p, again;
    rng_t r = sp->sfp_r;
    MPI_Offset at;

    for (p = 0; p < ps_nprocs; p++)
        len[p] = chance(&r, 20) ? 0 : omin(draw_size(&r), 128 << 10);
    do {
        again = 0;
        for (p = 0, at = sp->sfp_at; p < ps_nprocs; at += len[p], p++) {
            off[p] = at;
            if (len[p] > 0 && !legal(p, at, len[p], mode)) {
                len[p] = 0;
                again = 1;
            }
        }
    } while (again);
    return at;
}

/* Is the shared pointer at want? (p's view) */
static void check_shared_pos(int q, MPI_Offset want, const char *what)
{
    MPI_Offset pos;

    PS_MPI(MPI_File_get_position_shared(fh, &pos));
    if (pos != want)
        fail_at(q, want, 0, "%s: shared file pointer at %lld, expected %lld", what,
                (long long) pos, (long long) want);
}

/* Process q's part of a shared-pointer step: the pointer set (after a
 * barrier: the last step's solo accesses are done), the ordered access,
 * the pointer checked between two barriers; then, if q is the step's solo
 * process, writes and reads at the pointer, each where q may access (an
 * access that would leave it is not done, and the pointer stays). */
static void step_shared(int q, rng_t * r, const step_t * sp)
{
    MPI_Offset *off = malloc(ps_nprocs * sizeof(*off)), *len = malloc(ps_nprocs * sizeof(*len));
    MPI_Offset end = ordered_ranges(sp, off, len), o, l;
    unsigned tag = data_tag(q, rs[q].nop);
    MPI_Datatype type;
    MPI_Status st;
    mem_t m;
    reg_t rg;
    int got, count, n, k, w;

    if (exec(q)) {
        MPI_Barrier(MPI_COMM_WORLD);
        PS_MPI(MPI_File_seek_shared(fh, sp->sfp_at, MPI_SEEK_SET));
        if (sp->sfp_write) {
            ps_fill(wbuf, (size_t) len[q], (uint64_t) off[q], tag);
            PS_MPI(MPI_File_write_ordered(fh, wbuf, (int) len[q], MPI_BYTE, &st));
        } else {
            PS_MPI(MPI_File_read_ordered(fh, rbuf, (int) len[q], MPI_BYTE, &st));
        }
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (sp->sfp_write && got != len[q])
            fail_at(q, off[q], len[q], "write_ordered: %d bytes counted", got);
        if (!sp->sfp_write && len[q] > 0) {
            rg.off = off[q];
            rg.len = len[q];
            check_read(q, "read_ordered", rbuf, &rg, 1, len[q], got, 0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        check_shared_pos(q, end, sp->sfp_write ? "after write_ordered" : "after read_ordered");
        MPI_Barrier(MPI_COMM_WORLD);    /* all have looked before the solo process goes on */
        stats[ST_ORDERED] += len[q] > 0;
    }
    if (sp->sfp_write)
        note_write(q, off[q], len[q], tag);
    rs[q].nop++;
    free(off);
    free(len);
    if (q != sp->solo)
        return;
    n = 1 + (int) rnd(r, 4);
    for (k = 0; k < n; k++) {
        w = chance(r, 50);
        l = omin(draw_size(r), 128 << 10);
        mem_draw(r, l, &m);
        o = end;
        if (!legal(q, o, l, w ? M_WRITE : M_READ))
            continue;
        tag = data_tag(q, rs[q].nop);
        if (exec(q)) {
            type = mem_type(&m, l, &count);
            if (w) {
                ps_fill(pbuf, (size_t) l, (uint64_t) o, tag);
                mem_copy(&m, wbuf, pbuf, l, 1);
                PS_MPI(MPI_File_write_shared(fh, wbuf, count, type, &st));
            } else {
                PS_MPI(MPI_File_read_shared(fh, rbuf, count, type, &st));
            }
            mem_free(&type);
            MPI_Get_count(&st, MPI_BYTE, &got);
            if (w && got != l)
                fail_at(q, o, l, "write_shared: %d bytes counted", got);
            if (!w) {
                mem_copy(&m, rbuf, pbuf, l, 0);
                rg.off = o;
                rg.len = l;
                /* (ROMIO's generic strided read counts every byte asked
                 * for; so does pstripe's, through ROMIO's naive path) */
                check_read(q, "read_shared", pbuf, &rg, 1, l, got, m.n > 0);
            }
            check_shared_pos(q, o + l, w ? "after write_shared" : "after read_shared");
            stats[ST_SHARED]++;
        }
        if (w)
            note_write(q, o, l, tag);
        rs[q].nop++;
        end = o + l;
    }
}

static void run_steps(const step_t * steps, int nsteps)
{
    int s, q;

    for (s = 0; s < nsteps; s++)
        for (q = 0; q < ps_nprocs; q++) {
            rng_t *r = &rs[q].r;
            double t0 = MPI_Wtime();
            cur_step = s;
            cur_kind = steps[s].kind;
            switch (steps[s].kind) {
                case S_INDEP:
                    step_indep(q, r);
                    break;
                case S_COLL_WRITE:
                    step_coll_write(q, r, &steps[s]);
                    break;
                case S_COLL_READ:
                    step_coll_read(q, r, &steps[s]);
                    break;
                case S_ATOMIC:
                    step_atomic(q, r);
                    break;
                case S_SET_INFO:
                    step_set_info(q, &steps[s]);
                    break;
                case S_OWN_VIEW:
                    step_own_view(q, r, &steps[s]);
                    break;
                case S_SHARED:
                    step_shared(q, r, &steps[s]);
                    break;
                default:
                    step_view(q, r, &steps[s]);
                    break;
            }
            if (exec(q))
                t_kind[steps[s].kind] += MPI_Wtime() - t0;
        }
}

static void sync_barrier_sync(void)
{
    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));
}

static void check_size(const char *what)
{
    MPI_Offset size;

    PS_MPI(MPI_File_get_size(fh, &size));
    if (size != csize)
        PS_FAIL("seed %u: epoch %d: %s: size %lld, expected %lld", seed, epoch, what,
                (long long) size, (long long) csize);
    /* nobody writes on (the next epoch) before all have looked */
    MPI_Barrier(MPI_COMM_WORLD);
}

/* One epoch: its slots and steps, drawn ahead once (no I/O) for the ends
 * of the others' writes, then done; sync-barrier-sync; the size; maybe a
 * change of size. */
static void run_epoch(void)
{
    rng_t sh = rng_for(epoch, -1);
    step_t steps[MAXSTEPS];
    rstate *saved = malloc(ps_nprocs * sizeof(*saved));
    int nsteps, s, k, q, c;
    MPI_Offset ns;
    double t;

    draw_slots(&sh);
    nsteps = 2 + (int) rnd(&sh, 5);
    for (s = 0; s < nsteps; s++) {
        c = (int) rnd(&sh, 100);
        steps[s].kind = c < 56 ? S_INDEP : c < 65 ? S_COLL_WRITE : c < 72 ? S_COLL_READ :
            c < 81 ? S_VIEW : c < 89 ? S_OWN_VIEW : c < 93 ? S_SHARED : c < 97 ? S_ATOMIC :
            S_SET_INFO;
        steps[s].nvops = 1 + (int) rnd(&sh, MAXVOPS);
        for (k = 0; k < steps[s].nvops; k++) {
            c = (int) rnd(&sh, 100);
            steps[s].vkind[k] = c < 60 ? V_INDEP : c < 80 ? V_COLL_READ : V_COLL_WRITE;
        }
        steps[s].view_info = chance(&sh, 30);
        steps[s].nb = chance(&sh, 30);
        steps[s].hints = (int) rnd(&sh, 6);
        steps[s].readback = chance(&sh, 50);
        steps[s].fp = chance(&sh, 30);
        steps[s].w0 = rnd(&sh, omax(csize, 1)) / slot_sz * slot_sz;
        steps[s].wl = omin(slot_sz * (1 + rnd(&sh, omax(1, (8 << 20) / slot_sz))),
                           MAXF - steps[s].w0);
        steps[s].sfp_at = rnd(&sh, omax(csize, 1) + 65536);
        steps[s].sfp_write = chance(&sh, 50);
        steps[s].sfp_r = sh;
        rnext(&sh);
        steps[s].solo = (int) rnd(&sh, ps_nprocs);
    }
    for (q = 0; q < ps_nprocs; q++) {
        rs[q].r = rng_for(epoch, q);
        rs[q].hot = rnd(&rs[q].r, omax(csize, 1)) / 4096 * 4096;
        rs[q].vis = csize;
        rs[q].wmax = 0;
        rs[q].pend_off = rs[q].pend_len = 0;
    }

    memcpy(saved, rs, ps_nprocs * sizeof(*saved));
    pass1 = 1;
    e_other = 0;
    run_steps(steps, nsteps);
    for (q = 0; q < ps_nprocs; q++)
        if (q != ps_rank)
            e_other = omax(e_other, rs[q].wmax);
    memcpy(rs, saved, ps_nprocs * sizeof(*saved));
    free(saved);
    pass1 = 0;
    t = MPI_Wtime();
    run_steps(steps, nsteps);
    t_steps += MPI_Wtime() - t;

    t = MPI_Wtime();
    sync_barrier_sync();
    t_sync += MPI_Wtime() - t;
    for (q = 0; q < ps_nprocs; q++)
        csize = omax(csize, rs[q].vis);
    check_size("get_size after sync-barrier-sync");

    c = (int) rnd(&sh, 100);
    if (csize > MAXF / 2 && chance(&sh, 15))
        c = 8;                  /* keep the file well below MAXF */
    if (c < 6) {
        ns = omin(csize + rnd(&sh, 2 << 20), MAXF);
    } else if (c < 12) {
        ns = csize - rnd(&sh, csize / 3 + 1);
    } else if (c < 18) {
        ns = chance(&sh, 70) ? omin(csize + 1 + rnd(&sh, 3 << 20), MAXF) : rnd(&sh, csize + 1);
        PS_MPI(MPI_File_preallocate(fh, ns));
        csize = omax(csize, ns);
        stats[ST_PREALLOC]++;
        check_size("get_size after preallocate");
        return;
    } else {
        return;
    }
    PS_MPI(MPI_File_set_size(fh, ns));
    if (ns < csize)
        memset(model + ns, 0, (size_t) (csize - ns));
    csize = ns;
    stats[ST_SET_SIZE]++;
    check_size("get_size after set_size");
}

/* After close and open: every process reads the whole file (and past its
 * end) in pieces of random sizes, from a place of its own on, round. */
static void final_check(void)
{
    rng_t sh = rng_for(nepochs, -1), r = rng_for(nepochs, ps_rank);
    MPI_Offset total = csize + 1 + rnd(&r, 100000), start = rnd(&r, total), done = 0, off, len;
    MPI_Status st;
    reg_t rg;
    int got;

    /* MPI_File_open is collective: the same info on all */
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR,
                         chance(&sh, 50) ? info : MPI_INFO_NULL, &fh));
    epoch = nepochs;
    check_size("get_size after close and open");
    rs[ps_rank].vis = csize;
    rs[ps_rank].pend_len = 0;
    e_other = 0;
    for (; done < total; done += len) {
        off = (start + done) % total;
        len = omin(omin(chance(&r, 50) ? 1 + rnd(&r, 70000) : draw_size(&r), total - done),
                     total - off);
        PS_MPI(MPI_File_read_at(fh, off, rbuf, (int) len, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &got);
        rg.off = off;
        rg.len = len;
        check_read(ps_rank, "read after close and open", rbuf, &rg, 1, len, got, 0);
        rs[ps_rank].nop++;
    }
    PS_MPI(MPI_File_close(&fh));
}

/* The driver's caches, by the seed. */
static void set_cache_hints(void)
{
    static const char *const cfg[4][3] = {
        {"16k", "64k", "4k"}, {NULL, NULL, NULL}, {"256k", "1m", "16k"}, {"1m", "8m", "256k"}
    };
    int k = (int) (seed % 4);

    if (cfg[k][0] == NULL)
        return;
    MPI_Info_set(info, "romio_pstripe_wb_buffer_size", cfg[k][0]);
    MPI_Info_set(info, "romio_pstripe_rc_size", cfg[k][1]);
    MPI_Info_set(info, "romio_pstripe_rc_block_size", cfg[k][2]);
}

int main(int argc, char **argv)
{
    const char *pos[4];
    int i, npos = 0, named = 0;
    long total[NSTATS];

    fname = ps_init(&argc, &argv);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-fname") == 0 && i + 1 < argc) {
            i++;
            named = 1;
        } else if (npos < 4) {
            pos[npos++] = argv[i];
        }
    }
    seed = npos > 1 - named ? (unsigned) strtoul(pos[1 - named], NULL, 0) : 1;
    nepochs = npos > 2 - named ? atoi(pos[2 - named]) : 60;
    on_pstripe = ps_is_pstripe(fname);

    model = calloc((size_t) CAP, 1);
    wbuf = malloc(BIG + VIEW_MAX);
    rbuf = malloc(BIG + VIEW_MAX);
    ibuf = malloc(BIG + VIEW_MAX);
    pbuf = malloc(BIG + VIEW_MAX);
    rs = calloc(ps_nprocs, sizeof(*rs));
    info = ps_test_info();
    MPI_Info_set(info, "romio_ds_write", "disable");
    if (!on_pstripe)
        MPI_Info_set(info, "romio_cb_write", "disable");
    set_cache_hints();

    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    for (epoch = 0; epoch < nepochs; epoch++)
        run_epoch();
    PS_MPI(MPI_File_close(&fh));
    t_final = MPI_Wtime();
    final_check();
    t_final = MPI_Wtime() - t_final;

    MPI_Reduce(stats, total, NSTATS, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (ps_rank == 0 && getenv("PS_RANDOM_VERBOSE") != NULL) {
        for (i = 0; i < NSTATS; i++)
            printf("%s%s %ld", i ? ", " : "ps_random: ", stat_name[i], total[i]);
        printf("; size %lld; seconds: steps %.2f, sync %.2f, final check %.2f\n",
               (long long) csize, t_steps, t_sync, t_final);
        for (i = 0; i < NKINDS; i++)
            printf("  %s steps: %.2f s\n", kind_name[i], t_kind[i]);
    }
    if (ps_rank == 0)
        printf("ps_random: %d processes: seed %u: %d epochs: PASS\n", ps_nprocs, seed, nepochs);
    MPI_Info_free(&info);
    free(model);
    free(wbuf);
    free(rbuf);
    free(ibuf);
    free(pbuf);
    free(rs);
    free(owner);
    MPI_Finalize();
    return 0;
}

/*
 * ps_cache: MPI consistency with the driver's write-behind and read cache,
 * checked against a byte model of the file.
 *
 * - many small independent writes (interleaved between the processes),
 *   overlapping ones in program order (the last wins), each read back at
 *   once by the writer (while still buffered), then through another view;
 * - cached blocks follow the writer's own later writes;
 * - another process sees the writes after sync-barrier-sync (also over
 *   bytes it had read before), and after close and open;
 * - reads across the end of file count only the bytes below it, also after
 *   another process extended the file (sync-barrier-sync); reads of a hole
 *   below the reader's own write past the end of file (buffered, or beyond
 *   a stream read ahead) count the hole;
 * - medium reads with a constant step (read ahead by the driver) see the
 *   reader's own writes at once (also a nonblocking write's, after
 *   MPI_Wait) and another's after sync-barrier-sync;
 * - collective writes of non-interleaved ranges are buffered like
 *   independent ones: read back at once, seen by others after
 *   sync-barrier-sync;
 * - a collective write drops the read cache: a process reads, another
 *   rewrites those bytes (no message between), both write other bytes
 *   collectively, and the first reads the new bytes;
 * - MPI_File_preallocate keeps the bytes other processes wrote just before
 *   it (still buffered, or in flight);
 * - a process's buffered write, a barrier, then another's write over it:
 *   the later write stays (parallel HDF5's fill values and data);
 * - a process's buffered write, then a collective MPI_File_set_view, then
 *   another process reads the bytes at once (cached before): the new ones;
 * - a process's buffered write, then a message (send, isend and wait,
 *   irecv polled by test, sendrecv, bcast, allreduce, a partition made
 *   ready and polled by parrived; or the reader's ssend, which returns
 *   once the writer posted its receive), then another
 *   process reads the bytes at once, where it had cached the old ones: it
 *   sees the new ones;
 * - atomic mode: rank 0 writes, barrier, rank 1 reads at once (no sync),
 *   even where rank 1 had cached the old bytes;
 * - one process alone opens a file right after the collective close (no
 *   barrier, as ROMIO's test hindexed does) and sees everything the
 *   others had buffered (32 MiB each, sent by their close);
 * - on pstripe, the hints show in MPI_File_get_info.
 *
 * The pstripe run uses a small write-behind buffer and a small read cache
 * (so that buffers fill and blocks are evicted). Rank 0 prints the number
 * of small writes ("small writes: N"): mpi-tests compares it with the
 * servers' write batches.
 */
#include "pstest.h"

#include <unistd.h>

#define S 512                   /* slot size */
#define NB 64                   /* slots per process */
#define NSMALL 16               /* small writes per slot in the counted phase */
#define HOLE (512 << 10)        /* room past the slots (hole_reads, preallocate) */
#define LATE (32 << 20)         /* bytes each writer leaves to its close */
#define LATE_PIECE (4 << 20)    /* ... written and read this much a call */

static unsigned char *model;    /* the whole file as it must be */
static MPI_Offset fsize;        /* its size */
static int on_pstripe;          /* the file is a pstripe: one */

/* Apply a write by process `rank` of len bytes at off with seed to the
 * model (every process applies every process's writes, in the order they
 * are made visible). */
static void model_write(MPI_Offset off, int len, unsigned seed)
{
    ps_fill(model + off, len, off, seed);
    if (off + len > fsize)
        fsize = off + len;
}

static MPI_Offset slot_off(int slot, int rank)
{
    return ((MPI_Offset) slot * ps_nprocs + rank) * S;
}

static void write_small(MPI_File fh, MPI_Offset off, int len, unsigned seed)
{
    unsigned char buf[S];
    MPI_Status st;

    ps_fill(buf, len, off, seed);
    PS_MPI(MPI_File_write_at(fh, off, buf, len, MPI_BYTE, &st));
}

/* Read [off, off + len) with small reads of `piece` bytes; compare with the
 * model, byte counts included (bytes past the model's size: none). */
static void check_range(MPI_File fh, MPI_Offset off, MPI_Offset len, int piece, const char *what)
{
    unsigned char buf[4096];
    MPI_Status st;
    MPI_Offset o, want;
    int n, got;

    for (o = off; o < off + len; o += piece) {
        n = (int) PS_MIN((MPI_Offset) piece, off + len - o);
        PS_MPI(MPI_File_read_at(fh, o, buf, n, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &got);
        want = PS_MAX(0, PS_MIN((MPI_Offset) n, fsize - o));
        if (got != want)
            PS_FAIL("%s: read of %d at %lld: %d bytes, expected %lld", what, n, (long long) o, got,
                    (long long) want);
        for (int i = 0; i < got; i++)
            if (buf[i] != model[o + i])
                PS_FAIL("%s: byte at %lld is 0x%02x, expected 0x%02x (read of %d at %lld)", what,
                        (long long) (o + i), buf[i], model[o + i], n, (long long) o);
    }
}

/* Read [off, off + len) through a view of z-byte regions every 2z bytes
 * (many small regions to a cached block, some past EOF); compare the
 * regions below the model's size with the model. pstripe counts those
 * bytes; ROMIO's generic strided read (ufs) counts the whole request. */
static void check_view_range(MPI_File fh, MPI_Offset off, int len, int z, const char *what)
{
    int nreg = len / (2 * z), got, i, k = 0;
    unsigned char *buf = malloc((size_t) nreg * z);
    MPI_Datatype vec;
    MPI_Status st;
    MPI_Offset r, want = 0;

    MPI_Type_vector(nreg, z, 2 * z, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    PS_MPI(MPI_File_set_view(fh, off, MPI_BYTE, vec, "native", MPI_INFO_NULL));
    PS_MPI(MPI_File_read_at(fh, 0, buf, nreg * z, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &got);
    for (i = 0; i < nreg; i++)
        want += PS_MAX(0, PS_MIN((MPI_Offset) z, fsize - (off + (MPI_Offset) i * 2 * z)));
    if (got != want && (on_pstripe || got != nreg * z))
        PS_FAIL("%s: %d bytes, expected %lld", what, got, (long long) want);
    for (i = 0; i < nreg && k < want; i++)
        for (r = off + (MPI_Offset) i * 2 * z; r < off + (MPI_Offset) i * 2 * z + z && k < want;
             r++, k++)
            if (buf[k] != model[r])
                PS_FAIL("%s: byte at %lld is 0x%02x, expected 0x%02x", what, (long long) r,
                        buf[k], model[r]);
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&vec);
    free(buf);
}

/* Small interleaved writes, overlapping ones, each read back at once. */
static void own_writes(MPI_File fh, int *nsmall)
{
    int i, k, r;

    for (i = 0; i < NB; i++) {
        for (k = 0; k < NSMALL; k++) {
            MPI_Offset off = slot_off(i, ps_rank) + k * (S / NSMALL);
            write_small(fh, off, S / NSMALL, 1);
            (*nsmall)++;
        }
        /* overlapping, in order: the last wins */
        write_small(fh, slot_off(i, ps_rank) + 100, 50, 2);
        write_small(fh, slot_off(i, ps_rank) + 120, 10, 3);
        *nsmall += 2;
    }
    for (r = 0; r < ps_nprocs; r++) {
        for (i = 0; i < NB; i++) {
            model_write(slot_off(i, r), S, 1);
            model_write(slot_off(i, r) + 100, 50, 2);
            model_write(slot_off(i, r) + 120, 10, 3);
        }
    }
    /* read back at once: the bytes of my slots (others' are not visible
     * yet), in pieces of several sizes */
    for (i = 0; i < NB; i++)
        check_range(fh, slot_off(i, ps_rank), S, 1 + (i % 7) * 37, "own write read back");
    /* a cached block follows my own later writes */
    write_small(fh, slot_off(3, ps_rank) + 7, 33, 4);
    for (r = 0; r < ps_nprocs; r++)
        model_write(slot_off(3, r) + 7, 33, 4);
    check_range(fh, slot_off(3, ps_rank), S, 64, "own rewrite read back");
}

/* My slots through a vector view: one noncontiguous read, then small
 * writes through the view, read back at once. */
static void view_reads(MPI_File fh)
{
    MPI_Datatype vec;
    MPI_Status st;
    unsigned char *buf = malloc((size_t) NB * S), want[S];
    int i, got;

    MPI_Type_vector(NB, S, S * ps_nprocs, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    PS_MPI(MPI_File_set_view(fh, (MPI_Offset) ps_rank * S, MPI_BYTE, vec, "native",
                             MPI_INFO_NULL));
    PS_MPI(MPI_File_read_at(fh, 0, buf, NB * S, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &got);
    PS_CHECK(got == NB * S, "view read: %d bytes", got);
    for (i = 0; i < NB; i++)
        ps_compare(buf + (size_t) i * S, model + slot_off(i, ps_rank), S, "view read");
    /* small writes through the view: view offset i*S+200 is file offset
     * slot_off(i)+200 */
    for (i = 0; i < NB; i += 5) {
        ps_fill(want, 40, (uint64_t) slot_off(i, ps_rank) + 200, 5);
        PS_MPI(MPI_File_write_at(fh, (MPI_Offset) i * S + 200, want, 40, MPI_BYTE, &st));
        model_write(slot_off(i, ps_rank) + 200, 40, 5);
        PS_MPI(MPI_File_read_at(fh, (MPI_Offset) i * S + 190, buf, 60, MPI_BYTE, &st));
        ps_compare(buf, model + slot_off(i, ps_rank) + 190, 60, "view write read back");
    }
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&vec);
    free(buf);
    /* the other processes' view writes, for the model */
    for (int r = 0; r < ps_nprocs; r++)
        for (i = 0; i < NB; i += 5)
            if (r != ps_rank)
                model_write(slot_off(i, r) + 200, 40, 5);
}

static void sync_barrier_sync(MPI_File fh)
{
    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));
}

/* Reads across the end of file; then the last process extends the file
 * with a small write and everybody sees it after sync-barrier-sync. */
static void eof_reads(MPI_File fh)
{
    MPI_Offset size, old = fsize;

    check_range(fh, old - 100, 300, 300, "read across EOF");
    check_range(fh, old + 10, 50, 50, "read past EOF");
    check_view_range(fh, old - 2000, 4000, 8, "view read of small regions across EOF");
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == ps_nprocs - 1) {
        write_small(fh, old + 50, 10, 6);
        model_write(old + 50, 10, 6);
        memset(model + old, 0, 50);
        check_range(fh, old - 100, 300, 300, "own read across the new EOF");
    } else {
        model_write(old + 50, 10, 6);
        memset(model + old, 0, 50);
    }
    sync_barrier_sync(fh);
    PS_MPI(MPI_File_get_size(fh, &size));
    PS_CHECK(size == fsize, "size %lld after the extension, expected %lld", (long long) size,
             (long long) fsize);
    check_range(fh, old - 100, 300, 300, "read across the new EOF");
    check_view_range(fh, old - 2000, 4000, 8, "view read of small regions across the new EOF");
}

/* Reads of `piece` bytes at off0 + k * step for k in [k0, k1), one call
 * each, compared with the model (counts included). */
static void check_stream(MPI_File fh, MPI_Offset off0, int step, int piece, int k0, int k1,
                         const char *what)
{
    int k;

    for (k = k0; k < k1; k++)
        check_range(fh, off0 + (MPI_Offset) k * step, piece, piece, what);
}

/* Reads of a hole below the last process's own write past the end of
 * file count the hole's bytes (zeros) at once: after a small write that
 * waits in the write-behind buffer (the read does not overlap it), and
 * after a direct write beyond a stream of reads that the driver had read
 * ahead past the old end of file (whether the window's read reaches the
 * servers before the write is a race: it usually does). */
static void hole_reads(MPI_File fh)
{
    static unsigned char big[5000];     /* direct: more than a quarter of the 16k buffer */
    const int piece = 1500, step = 2500;
    MPI_Offset old = fsize, off0;
    MPI_Status st;
    int writer = ps_rank == ps_nprocs - 1;

    if (writer)
        write_small(fh, old + 3000, 10, 30);
    model_write(old + 3000, 10, 30);
    if (writer)
        check_range(fh, old + 100, 1000, 1000, "own read of a hole below a buffered write");

    off0 = fsize - 4 * step;
    if (writer)
        check_stream(fh, off0, step, piece, 0, 4, "stream read up to EOF");
    ps_fill(big, (int) sizeof(big), (uint64_t) (off0 + 40 * step), 31);
    if (writer)
        PS_MPI(MPI_File_write_at(fh, off0 + 40 * step, big, (int) sizeof(big), MPI_BYTE, &st));
    model_write(off0 + 40 * step, (int) sizeof(big), 31);
    if (writer)
        check_stream(fh, off0, step, piece, 4, 16, "stream read of a hole below an own write");
    sync_barrier_sync(fh);
}

/* Reads of `piece` bytes that walk the file with a constant step (the
 * driver reads them ahead in the background): rank 0 writes bytes its
 * stream has read ahead, small (buffered) and larger (direct), and reads
 * them back at once as the stream goes on, then shifted by `shift`, past
 * the end of file; then rank 1 reads ahead bytes that rank 0 rewrites, and
 * sees them after sync-barrier-sync. */
static void stream_reads(MPI_File fh, int piece, int step, int shift)
{
    int n = (int) ((fsize + 3000) / step);

    if (ps_rank == 0) {
        check_stream(fh, 0, step, piece, 0, 5, "stream read");
        write_small(fh, 7 * step + 10, 100, 20);        /* write-behind */
        model_write(7 * step + 10, 100, 20);
        check_stream(fh, 0, step, piece, 5, 9, "stream read over an own small write");
        {
            /* a direct write (more than a quarter of the 16k buffer) */
            static unsigned char big[5000];
            MPI_Status st;

            ps_fill(big, (int) sizeof(big), 12 * step, 21);
            PS_MPI(MPI_File_write_at(fh, 12 * step, big, (int) sizeof(big), MPI_BYTE, &st));
            model_write(12 * step, (int) sizeof(big), 21);
        }
        check_stream(fh, 0, step, piece, 9, 14, "stream read over an own write");
        /* shifted within the slack (as HDF5's metadata shifts chunks) */
        check_stream(fh, shift, step, piece, 14, n, "shifted stream read, past EOF");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank != 0) {
        model_write(7 * step + 10, 100, 20);
        model_write(12 * step, 5000, 21);
    }
    sync_barrier_sync(fh);
    if (ps_nprocs < 2)
        return;
    if (ps_rank == 1)
        check_stream(fh, 0, step, piece, 0, 4, "stream read before another process's write");
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0)
        write_small(fh, 6 * step + 5, 200, 22);
    model_write(6 * step + 5, 200, 22);
    sync_barrier_sync(fh);
    if (ps_rank == 1)
        check_stream(fh, 0, step, piece, 4, n,
                     "stream read of another process's write after sync-barrier-sync");
}

/* Rank 0 writes bytes ahead of its stream of reads with a nonblocking
 * write, and the stream goes on over other bytes while the write runs (the
 * driver reads ahead over the write in flight); after MPI_Wait the stream
 * reads the new bytes. Whether a read ahead passes the write in flight is
 * a race: eight rounds make it likely. */
static void nonblocking_write_ahead(MPI_File fh)
{
    const int piece = 1100, step = 1700, len = 400;
    static unsigned char buf[400];
    MPI_Request req;
    MPI_Status st;
    int round;

    MPI_Barrier(MPI_COMM_WORLD);        /* the others read these bytes before */
    for (round = 0; round < 8; round++) {
        MPI_Offset base = (MPI_Offset) round * 1000, at = base + 7 * step + 100;

        if (ps_rank == 0) {
            check_stream(fh, base, step, piece, 0, 5, "stream read before a nonblocking write");
            ps_fill(buf, len, at, 30 + round);
            PS_MPI(MPI_File_iwrite_at(fh, at, buf, len, MPI_BYTE, &req));
            /* a small read next to it at once: the read cache fetches its
             * block, maybe before the write is done */
            check_range(fh, at + len, 64, 64, "small read beside a nonblocking write");
            check_stream(fh, base, step, piece, 5, 7, "stream read beside a nonblocking write");
            PS_MPI(MPI_Wait(&req, &st));
            model_write(at, len, 30 + round);
            check_range(fh, at, 64, 64, "small read after a nonblocking write");
            check_stream(fh, base, step, piece, 7, 10, "stream read after a nonblocking write");
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (round = 0; ps_rank != 0 && round < 8; round++)
        model_write((MPI_Offset) round * 1000 + 7 * step + 100, len, 30 + round);
    sync_barrier_sync(fh);
}

/* Rank 1 reads small pieces in file order (the read cache reads blocks
 * ahead of them in the background), then the next 8 blocks are rewritten
 * by a collective write (which drops the cache) and rank 1 reads on: it
 * sees the write at once, not the old bytes read ahead. */
static void ahead_collective_write(MPI_File fh)
{
    const MPI_Offset base = 1000;       /* all inside the file with 2 processes */
    const MPI_Offset at = base + 123 * 100 + 300;
    const int piece = 100, nread = 123, len = 8 * 4096;
    static unsigned char buf[8 * 4096];
    MPI_Status st;

    if (ps_nprocs < 2)
        return;
    if (ps_rank == 1) {
        check_stream(fh, base, piece, piece, 0, nread, "small reads in file order");
        usleep(100000);         /* the read-ahead in flight gets the old bytes */
    }
    ps_fill(buf, len, at, 40);
    /* every process writes the same bytes: the ranges overlap, so the
     * write is two-phase and rank 0 writes them (rank 1 only drops) */
    PS_MPI(MPI_File_write_at_all(fh, at, buf, len, MPI_BYTE, &st));
    model_write(at, len, 40);
    if (ps_rank == 1)
        check_stream(fh, base, piece, piece, nread, nread + len / piece + 6,
                     "small reads over an own collective write ahead of them");
    sync_barrier_sync(fh);
}

/* Rank 0 caches blocks (small reads), rank 1 rewrites them at the servers
 * (a write larger than a quarter of its write-behind buffer; no message
 * between them: a pause orders it), then every process writes a few bytes
 * of its own collectively: a collective write drops the read cache (as
 * the MPICH driver's have always done, and the README says), so rank 0's
 * next reads see rank 1's bytes. Counted with the small writes. */
static void collective_write_drops(MPI_File fh, int *nsmall)
{
    const MPI_Offset off = slot_off(56, 0);
    unsigned char big[8192], small[64];
    MPI_Status st;
    int r;

    if (ps_nprocs < 2)
        return;
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0)
        check_range(fh, off, sizeof(big), 100, "bytes read before another process's write");
    if (ps_rank == 1) {
        usleep(200000); /* after rank 0's reads */
        ps_fill(big, sizeof(big), off, 52);
        PS_MPI(MPI_File_write_at(fh, off, big, sizeof(big), MPI_BYTE, &st));
    }
    model_write(off, sizeof(big), 52);
    ps_fill(small, sizeof(small), slot_off(54, ps_rank), 53);
    PS_MPI(MPI_File_write_at_all(fh, slot_off(54, ps_rank), small, sizeof(small), MPI_BYTE, &st));
    (*nsmall)++;
    for (r = 0; r < ps_nprocs; r++)
        model_write(slot_off(54, r), sizeof(small), 53);
    if (ps_rank == 0)
        check_range(fh, off, sizeof(big), 100, "another process's write after a collective write");
    sync_barrier_sync(fh);
}

/* Collective writes whose processes' ranges do not interleave (each its
 * own piece of slots 30-37) are independent I/O, buffered by write-behind
 * like independent writes: the writer reads each back at once, also over a
 * small independent write of its own that the collective one overwrites
 * (program order: the last wins); the others see them after
 * sync-barrier-sync. Counted with the small writes. */
static void own_collective_writes(MPI_File fh, int *nsmall)
{
    unsigned char buf[S];
    MPI_Status st;
    int i, r;

    for (i = 0; i < 8; i++) {
        MPI_Offset off = slot_off(30 + i, ps_rank) + 17;
        int len = 200 + 20 * i;

        if (i % 2)
            write_small(fh, off + 50, 64, 60 + i);      /* overwritten below */
        ps_fill(buf, len, off, 70 + i);
        PS_MPI(MPI_File_write_at_all(fh, off, buf, len, MPI_BYTE, &st));
        (*nsmall)++;
        for (r = 0; r < ps_nprocs; r++) {
            if (i % 2)
                model_write(slot_off(30 + i, r) + 17 + 50, 64, 60 + i);
            model_write(slot_off(30 + i, r) + 17, len, 70 + i);
        }
        check_range(fh, off, len, 100, "an own collective write, at once");
    }
    sync_barrier_sync(fh);
    check_range(fh, slot_off(30, 0), (MPI_Offset) 8 * ps_nprocs * S, 256,
                "every process's collective writes after sync-barrier-sync");
    /* before the next collective write over these bytes: MPI does not make
     * a collective call wait for the other processes (OMPIO's fcoll may
     * write a process's bytes before another has entered it) */
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every process but rank 0 writes past the end of file, enough to fill
 * its write-behind buffer (a send in flight, more buffered), then all
 * preallocate beyond it (ROMIO runs it on rank 0 alone): the writes keep
 * their bytes, the size is the larger of the two. */
static void preallocate_keeps_writes(MPI_File fh)
{
    MPI_Offset old = fsize, size;
    int r, k;

    for (r = 1; r < ps_nprocs; r++)
        for (k = 0; k < 48; k++) {
            MPI_Offset off = old + ((MPI_Offset) k * ps_nprocs + r) * 700;
            if (ps_rank == r)
                write_small(fh, off, 500, 40);
            model_write(off, 500, 40);
        }
    PS_MPI(MPI_File_preallocate(fh, old + 20000));
    if (fsize < old + 20000)
        fsize = old + 20000;
    sync_barrier_sync(fh);
    PS_MPI(MPI_File_get_size(fh, &size));
    PS_CHECK(size == fsize, "size %lld after preallocate, expected %lld", (long long) size,
             (long long) fsize);
    check_range(fh, old, fsize - old, 4000, "writes beside a preallocate");
}

/* Rank 0 rewrites bytes the others have read (and may have cached): they
 * see the new bytes after sync-barrier-sync. */
static void cross_visibility(MPI_File fh)
{
    MPI_Offset off = slot_off(20, 0) + 64;

    if (ps_rank != 0)
        check_range(fh, slot_off(20, 0), S, 32, "before another process's write");
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0)
        write_small(fh, off, 64, 7);
    model_write(off, 64, 7);
    sync_barrier_sync(fh);
    check_range(fh, slot_off(20, 0), S, 32, "another process's write after sync-barrier-sync");
}

/* Rank 0 writes a few bytes (buffered), a barrier, then rank 1 writes a
 * larger piece over them (sent at once): after close and open rank 1's
 * bytes must be there. MPI asks for sync-barrier-sync between them;
 * parallel HDF5 orders its fill values and the data written over them by
 * the barrier alone, and the driver flushes at MPI_Barrier for it. */
static void barrier_orders_writes(MPI_File fh)
{
    MPI_Offset off = slot_off(30, 0);
    unsigned char big[8192];
    MPI_Status st;

    if (ps_nprocs < 2)
        return;
    if (ps_rank == 0)
        write_small(fh, off + 100, 64, 50);
    model_write(off + 100, 64, 50);
    MPI_Barrier(MPI_COMM_WORLD);
    ps_fill(big, sizeof(big), off, 51);
    if (ps_rank == 1)
        PS_MPI(MPI_File_write_at(fh, off, big, sizeof(big), MPI_BYTE, &st));
    model_write(off, sizeof(big), 51);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* MPI_File_set_view orders two processes' accesses as it does on a POSIX
 * file system, where it is collective (its check of the info argument is
 * an allreduce): rank 1 reads bytes (twice: the second read caches their
 * block), rank 0 writes over them (buffered), both set a view (no other
 * message between), and rank 1 reads the bytes at once: the new ones. MPI
 * asks for sync-barrier-sync; the driver flushes before set_view's first
 * collective step, so that no process leaves it before the buffered
 * writes of every process are at the servers. */
static void set_view_orders_accesses(MPI_File fh)
{
    MPI_Offset off = slot_off(34, 0);
    int round;

    if (ps_nprocs < 2)
        return;
    for (round = 0; round < 8; round++) {
        if (ps_rank == 1) {
            check_range(fh, off, S, S, "bytes before another process's write and set_view");
            check_range(fh, off, S, S, "bytes before another process's write and set_view");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (ps_rank == 0)
            write_small(fh, off + 8 * round, 64, 60 + round);
        model_write(off + 8 * round, 64, 60 + round);
        PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        if (ps_rank == 1)
            check_range(fh, off, S, S, "another process's buffered write after set_view");
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* Any message orders two processes' accesses, as on a POSIX file system:
 * rank 1 reads bytes (twice: the second read caches their block) and
 * tells rank 0, which writes over them (buffered), then a message of kind
 * k goes from rank 0 to rank 1, which reads the bytes at once (no sync):
 * the new ones, not its cached block nor what the servers had before
 * rank 0's buffer was sent. */
static void message_orders_accesses(MPI_File fh, const char *fname)
{
    enum { SEND, ISEND, SENDRECV, BCAST, ALLREDUCE, PARTITIONED, SSEND, NKINDS };
    MPI_Offset off;
    MPI_Request rq;
    MPI_File clean;
    char cname[1024];
    int k, kind, token = 1, ready = 1, sum, flag, writer, reader;

    if (ps_nprocs < 2)
        return;
    /* a handle with nothing buffered, opened last: a message's flush walks
     * it first and skips it (without its lock), then flushes fh */
    ps_fname(cname, sizeof(cname), fname, ".clean");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, cname,
                         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &clean));
    for (k = 0; k < NKINDS; k++) {
        /* (MPI 3.1, Open MPI 4.1: no partitioned calls, a send instead,
         * so that the file is the same as under MPICH) */
        kind = k == PARTITIONED && MPI_VERSION < 4 ? SEND : k;
        off = slot_off(40 + k, 0) + 30;
        /* a synchronous send tells its sender that the receiver (the
         * writer, there) has posted the receive */
        writer = kind == SSEND ? 1 : 0;
        reader = 1 - writer;
#if MPI_VERSION >= 4
        /* a partitioned send started before the write: its Pready sends */
        if (kind == PARTITIONED && ps_rank == 0) {
            MPI_Psend_init(&token, 1, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
            MPI_Start(&rq);
        }
        if (kind == PARTITIONED && ps_rank == 1) {
            MPI_Precv_init(&token, 1, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
            MPI_Start(&rq);
        }
#endif
        if (ps_rank == reader) {
            check_range(fh, off, 64, 64, "before another process's write");
            check_range(fh, off, 64, 16, "before another process's write");
            MPI_Send(&ready, 1, MPI_INT, writer, 1, MPI_COMM_WORLD);
        } else if (ps_rank == writer) {
            MPI_Recv(&ready, 1, MPI_INT, reader, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            write_small(fh, off + 8, 40, 80 + k);
        }
        model_write(off + 8, 40, 80 + k);
        if (kind == SEND && ps_rank == 0)
            MPI_Send(&token, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
        if (kind == SEND && ps_rank == 1)
            MPI_Recv(&token, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (kind == ISEND && ps_rank == 0) {
            MPI_Isend(&token, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
        if (kind == ISEND && ps_rank == 1) {       /* polled: reads between the polls */
            MPI_Irecv(&token, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &rq);
            for (flag = 0; !flag;) {
                check_range(fh, off, 8, 8, "bytes another process did not write");
                MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
            }
        }
#if MPI_VERSION >= 4
        if (kind == PARTITIONED && ps_rank == 0) {
            MPI_Pready(0, rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
        if (kind == PARTITIONED && ps_rank == 1)
            for (flag = 0; !flag;) {
                check_range(fh, off, 8, 8, "bytes another process did not write");
                MPI_Parrived(rq, 0, &flag);
            }
#endif
        if (kind == SENDRECV && ps_rank <= 1)
            MPI_Sendrecv_replace(&token, 1, MPI_INT, 1 - ps_rank, 4, 1 - ps_rank, 4,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (kind == BCAST)
            MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (kind == ALLREDUCE)
            MPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (kind == SSEND && ps_rank == reader)
            MPI_Ssend(&token, 1, MPI_INT, writer, 6, MPI_COMM_WORLD);
        if (kind == SSEND && ps_rank == writer)
            MPI_Recv(&token, 1, MPI_INT, reader, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (ps_rank == reader)
            check_range(fh, off, 64, 16, "another process's write after a message");
        if (kind == PARTITIONED && ps_rank <= 1) {
            if (ps_rank == 1)
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
            MPI_Request_free(&rq);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    PS_MPI(MPI_File_close(&clean));
}

/* Atomic mode: rank 0 writes, barrier, rank 1 reads at once. Rank 1 first
 * caches the old bytes. */
static void atomic_mode(MPI_File fh)
{
    MPI_Offset off = slot_off(5, 0) + 30;
    int i;

    if (ps_nprocs < 2)
        return;
    if (ps_rank == 1)
        check_range(fh, slot_off(5, 0), S, 16, "before atomic mode");
    PS_MPI(MPI_File_set_atomicity(fh, 1));
    MPI_Barrier(MPI_COMM_WORLD);        /* set_atomicity need not synchronize */
    for (i = 0; i < 4; i++) {
        if (ps_rank == 0)
            write_small(fh, off + i * 20, 20, 10 + i);
        model_write(off + i * 20, 20, 10 + i);
        MPI_Barrier(MPI_COMM_WORLD);
        if (ps_rank == 1)
            check_range(fh, off, 100, 16, "atomic read of another process's write");
        MPI_Barrier(MPI_COMM_WORLD);
    }
    PS_MPI(MPI_File_set_atomicity(fh, 0));
}

/* Every process but the last writes LATE bytes of a second file, kept by
 * write-behind (a buffer large enough) for the close to send, which takes
 * the servers some 20 ms; the last process, with nothing to send, opens
 * the file alone right after the collective close and reads them all. */
static void read_alone_after_close(const char *fname)
{
    char late[1024];
    unsigned char *buf = malloc(LATE_PIECE), *want = malloc(LATE_PIECE);
    int reader = ps_nprocs - 1, r;
    MPI_Offset off;
    MPI_Info big;
    MPI_Status st;
    MPI_File fh;

    snprintf(late, sizeof(late), "%s.late", fname);
    if (ps_rank == 0)
        MPI_File_delete(late, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info_create(&big);
    MPI_Info_set(big, "romio_pstripe_wb_buffer_size", "128m");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, late, MPI_MODE_CREATE | MPI_MODE_RDWR, big, &fh));
    MPI_Info_free(&big);
    for (off = 0; ps_rank != reader && off < LATE; off += LATE_PIECE) {
        ps_fill(buf, LATE_PIECE, (uint64_t) ps_rank * LATE + off, 21);
        PS_MPI(MPI_File_write_at(fh, (MPI_Offset) ps_rank * LATE + off, buf, LATE_PIECE,
                                 MPI_BYTE, &st));
    }
    PS_MPI(MPI_File_close(&fh));
    if (ps_rank == reader) {
        PS_MPI(MPI_File_open(MPI_COMM_SELF, late, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        /* last bytes first: they reach the servers last */
        for (r = reader - 1; r >= 0; r--)
            for (off = (MPI_Offset) (r + 1) * LATE - LATE_PIECE; off >= (MPI_Offset) r * LATE;
                 off -= LATE_PIECE) {
                PS_MPI(MPI_File_read_at(fh, off, buf, LATE_PIECE, MPI_BYTE, &st));
                ps_fill(want, LATE_PIECE, (uint64_t) off, 21);
                ps_compare(buf, want, LATE_PIECE, "a process's read right after the close");
            }
        PS_MPI(MPI_File_close(&fh));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0)
        MPI_File_delete(late, MPI_INFO_NULL);
    free(buf);
    free(want);
}

static void check_hints(MPI_File fh, const char *fname)
{
    static const char *const keys[][2] = {
        {"romio_pstripe_write_behind", "enable"}, {"romio_pstripe_wb_buffer_size", "16384"},
        {"romio_pstripe_read_cache", "enable"}, {"romio_pstripe_rc_size", "65536"},
        {"romio_pstripe_rc_block_size", "4096"},
    };
    char value[MPI_MAX_INFO_VAL + 1];
    MPI_Info info;
    int k, flag;

    /* (ROMIO_HINTS may switch the caches off, to compare) */
    if (!ps_is_pstripe(fname) || getenv("ROMIO_HINTS") != NULL)
        return;
    PS_MPI(MPI_File_get_info(fh, &info));
    for (k = 0; k < 5; k++) {
        MPI_Info_get(info, keys[k][0], MPI_MAX_INFO_VAL, value, &flag);
        PS_CHECK(flag && strcmp(value, keys[k][1]) == 0, "hint %s: \"%s\", expected %s",
                 keys[k][0], flag ? value : "(none)", keys[k][1]);
    }
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    MPI_File fh;
    MPI_Info info = ps_test_info();
    int nsmall = 0, total;

    model = calloc((size_t) (NB + 2) * ps_nprocs * S + HOLE, 1);
    on_pstripe = ps_is_pstripe(fname);
    MPI_Info_set(info, "romio_pstripe_wb_buffer_size", "16k");
    MPI_Info_set(info, "romio_pstripe_rc_size", "64k");
    MPI_Info_set(info, "romio_pstripe_rc_block_size", "4k");
    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    check_hints(fh, fname);

    own_writes(fh, &nsmall);
    view_reads(fh);
    sync_barrier_sync(fh);
    check_range(fh, 0, fsize, 4000, "every process's writes after sync-barrier-sync");
    eof_reads(fh);
    hole_reads(fh);
    stream_reads(fh, 1500, 2500, 60);   /* more than a quarter of a 4k block */
    stream_reads(fh, 1024, 2500, 40);   /* a quarter, with gaps */
    nonblocking_write_ahead(fh);
    cross_visibility(fh);
    preallocate_keeps_writes(fh);
    own_collective_writes(fh, &nsmall);
    ahead_collective_write(fh);
    collective_write_drops(fh, &nsmall);
    barrier_orders_writes(fh);
    set_view_orders_accesses(fh);
    message_orders_accesses(fh, fname);
    atomic_mode(fh);
    PS_MPI(MPI_File_close(&fh));

    /* after close and open, with the default cache sizes */
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    check_range(fh, 0, fsize, 333, "after close and open");
    PS_MPI(MPI_File_close(&fh));
    read_alone_after_close(fname);

    MPI_Info_free(&info);
    MPI_Reduce(&nsmall, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (ps_rank == 0)
        printf("ps_cache: %d processes: small writes: %d: PASS\n", ps_nprocs, total);
    free(model);
    MPI_Finalize();
    return 0;
}

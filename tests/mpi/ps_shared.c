/*
 * ps_shared: shared file pointers, ordered mode and MPI_MODE_SEQUENTIAL.
 *
 * 1. Every process appends NREC records of varying length at once with
 *    MPI_File_write_shared (every fourth with iwrite_shared); then every
 *    process reads the file back and walks it record by record: each
 *    (rank, seq) is there exactly once with its bytes intact, nothing
 *    overlaps, nothing is missing, and the shared pointer is at the total.
 * 2. set_view resets the pointer to 0; after set_size(0), write_ordered
 *    writes one block per process, of a different size on each, in rank
 *    order (every 8-byte word of the result holds its own offset, so the
 *    file is the same whatever the interleaving of step 1 was).
 * 3. seek_shared / get_position_shared (SEEK_SET, SEEK_CUR, SEEK_END);
 *    read_ordered gives each process its block back; read_shared and
 *    iread_shared of 64-byte chunks until the end hand out every chunk
 *    exactly once.
 * 4. write_ordered_begin/end append one more block each; read_ordered_begin
 *    /end read them back.
 * 5. A second open of the file has its own pointer, at 0 (on pstripe);
 *    with a view of ints, the pointer counts ints.
 * Every look at the pointer is followed by a barrier, so that no process
 * moves it before the others have looked.
 * 6. MPI_MODE_SEQUENTIAL: a file opened write-only in sequential mode gets
 *    records from every process with write_shared; reopened, it holds
 *    them all; opened with MPI_MODE_APPEND, its pointer starts at the end.
 *    It is deleted afterwards.
 * 7. Records appended with write_shared and write_ordered are read by every
 *    other process after a barrier alone, without MPI_File_sync (as ROMIO's
 *    own test shared_fp does): writes at the shared pointer are written
 *    through, not kept by write-behind. MPI's nonatomic mode would not
 *    promise it; pstripe does (README). It is opened with
 *    MPI_MODE_DELETE_ON_CLOSE, which MPI_File_get_amode shows (Open MPI's
 *    lacked it on pstripe files), and is gone after the close.
 * On pstripe, between 4 and 5: a seek_shared before the start of the view
 * is MPI_ERR_ARG on every process (under Open MPI the others got process
 * 0's error code, which no other process knows); and under Open MPI a
 * split ordered call that fails (the pointer near INT64_MAX, which the
 * servers refuse to pass) begins nothing: the next one works (it was
 * MPI_ERR_REQUEST). (ROMIO keeps its split call begun after such a
 * failure: not checked under MPICH.)
 *
 * The file left behind is the one of steps 2 and 4, equal on pstripe and
 * ufs. Usage: ps_shared FILENAME
 */
#include "pstest.h"

#ifdef OPEN_MPI
#define PS_OMPIO 1
#else
#define PS_OMPIO 0
#endif

#define NREC  300
#define MAGIC 0x31434552u       /* "REC1" */
#define CHUNK 64

typedef struct {
    uint32_t magic, rank, seq, len;
} rec_hdr_t;

static int rec_len(int rank, int seq)
{
    return (int) sizeof(rec_hdr_t) + ((rank * 7 + seq) % 6) * 8;
}

static unsigned char rec_byte(int rank, int seq, int i)
{
    return (unsigned char) (rank * 31 + seq * 7 + i);
}

static void rec_make(unsigned char *buf, int rank, int seq)
{
    rec_hdr_t h = { MAGIC, (uint32_t) rank, (uint32_t) seq, (uint32_t) rec_len(rank, seq) };
    int i;

    memcpy(buf, &h, sizeof(h));
    for (i = sizeof(h); i < (int) h.len; i++)
        buf[i] = rec_byte(rank, seq, i);
}

/* Append NREC records per process with write_shared; return the total. */
static MPI_Offset append_records(MPI_File fh)
{
    unsigned char rec[64];
    MPI_Status st;
    MPI_Request req;
    long long mine = 0, total = 0;
    int seq, got;

    for (seq = 0; seq < NREC; seq++) {
        int len = rec_len(ps_rank, seq);
        rec_make(rec, ps_rank, seq);
        if (seq % 4 == 3) {
            PS_MPI(MPI_File_iwrite_shared(fh, rec, len, MPI_BYTE, &req));
            PS_MPI(MPI_Wait(&req, &st));
        } else {
            PS_MPI(MPI_File_write_shared(fh, rec, len, MPI_BYTE, &st));
        }
        MPI_Get_count(&st, MPI_BYTE, &got);
        PS_CHECK(got == len, "record %d: wrote %d of %d bytes", seq, got, len);
        mine += len;
    }
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* Read the whole file on every process and walk it: every record of every
 * process exactly once, intact, and nothing else. */
static void check_records(MPI_File fh, MPI_Offset total)
{
    unsigned char *buf = malloc(total + 1);
    char *seen = calloc((size_t) ps_nprocs * NREC, 1);
    MPI_Offset size, off = 0;
    MPI_Status st;
    long long nrec = 0;
    int i;

    PS_MPI(MPI_File_get_size(fh, &size));
    PS_CHECK(size == total, "file has %lld bytes after the appends, expected %lld",
             (long long) size, (long long) total);
    PS_MPI(MPI_File_read_at(fh, 0, buf, (int) total, MPI_BYTE, &st));
    while (off < total) {
        rec_hdr_t h;
        PS_CHECK(off + (MPI_Offset) sizeof(h) <= total, "record header cut at %lld",
                 (long long) off);
        memcpy(&h, buf + off, sizeof(h));
        PS_CHECK(h.magic == MAGIC && h.rank < (uint32_t) ps_nprocs && h.seq < NREC &&
                 h.len == (uint32_t) rec_len(h.rank, h.seq),
                 "no valid record at offset %lld (overlap or hole)", (long long) off);
        PS_CHECK(off + h.len <= total, "record at %lld runs past the end", (long long) off);
        PS_CHECK(!seen[h.rank * NREC + h.seq], "record %u/%u twice", h.rank, h.seq);
        seen[h.rank * NREC + h.seq] = 1;
        for (i = sizeof(h); i < (int) h.len; i++)
            PS_CHECK(buf[off + i] == rec_byte(h.rank, h.seq, i),
                     "record %u/%u byte %d damaged", h.rank, h.seq, i);
        off += h.len;
        nrec++;
    }
    PS_CHECK(nrec == (long long) ps_nprocs * NREC, "%lld records, expected %d", nrec,
             ps_nprocs * NREC);
    free(seen);
    free(buf);
}

static void expect_position(MPI_File fh, MPI_Offset want, const char *when)
{
    MPI_Offset pos = -1;

    PS_MPI(MPI_File_get_position_shared(fh, &pos));
    PS_CHECK(pos == want, "%s: shared position %lld, expected %lld", when, (long long) pos,
             (long long) want);
    MPI_Barrier(MPI_COMM_WORLD);        /* nobody moves it before all have looked */
}

/* Block of rank r in step 2: its size and where write_ordered puts it. */
static MPI_Offset block_size(int r)
{
    return 1024 + 256 * (MPI_Offset) r;
}

static MPI_Offset block_start(int r)
{
    MPI_Offset off = 0;
    int q;

    for (q = 0; q < r; q++)
        off += block_size(q);
    return off;
}

/* n bytes whose 8-byte words hold their own file offset (n, off multiples of 8). */
static void fill_words(unsigned char *buf, MPI_Offset n, MPI_Offset off)
{
    MPI_Offset i;

    for (i = 0; i < n; i += 8) {
        uint64_t w = (uint64_t) (off + i);
        memcpy(buf + i, &w, 8);
    }
}

static void check_words(const unsigned char *buf, MPI_Offset n, MPI_Offset off, const char *what)
{
    unsigned char *want = malloc(n);

    fill_words(want, n, off);
    ps_compare(buf, want, (size_t) n, what);
    free(want);
}

/* Steps 2-4. Returns the file's final size. */
static MPI_Offset ordered_steps(MPI_File fh)
{
    MPI_Offset mine = block_size(ps_rank), total = block_start(ps_nprocs), chunks, n;
    unsigned char *buf = malloc(mine), *got = malloc(mine), chunk[CHUNK];
    long long *offs = malloc(sizeof(*offs) * (total / CHUNK + 1)), *all = NULL;
    int nmine = 0, *counts = NULL, *displs = NULL, i, cnt;
    MPI_Status st;
    MPI_Request req;

    /* 2: set_view resets; write_ordered in rank order */
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    expect_position(fh, 0, "after set_view");
    PS_MPI(MPI_File_set_size(fh, 0));
    fill_words(buf, mine, block_start(ps_rank));
    PS_MPI(MPI_File_write_ordered(fh, buf, (int) mine, MPI_BYTE, &st));
    expect_position(fh, total, "after write_ordered");
    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));

    /* 3: seeks, read_ordered, read_shared chunks */
    PS_MPI(MPI_File_seek_shared(fh, 64, MPI_SEEK_SET));
    expect_position(fh, 64, "seek_shared SEEK_SET 64");
    PS_MPI(MPI_File_seek_shared(fh, 64, MPI_SEEK_CUR));
    expect_position(fh, 128, "seek_shared SEEK_CUR +64");
    PS_MPI(MPI_File_seek_shared(fh, -64, MPI_SEEK_END));
    expect_position(fh, total - 64, "seek_shared SEEK_END -64");
    PS_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    PS_MPI(MPI_File_read_ordered(fh, got, (int) mine, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    PS_CHECK(cnt == mine, "read_ordered read %d of %lld bytes", cnt, (long long) mine);
    check_words(got, mine, block_start(ps_rank), "read_ordered block");
    expect_position(fh, total, "after read_ordered");

    PS_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    for (;;) {
        if (nmine % 2) {
            PS_MPI(MPI_File_iread_shared(fh, chunk, CHUNK, MPI_BYTE, &req));
            PS_MPI(MPI_Wait(&req, &st));
        } else {
            PS_MPI(MPI_File_read_shared(fh, chunk, CHUNK, MPI_BYTE, &st));
        }
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        if (cnt == 0)
            break;
        PS_CHECK(cnt == CHUNK, "read_shared read %d bytes", cnt);
        memcpy(&offs[nmine], chunk, 8);
        check_words(chunk, CHUNK, offs[nmine], "read_shared chunk");
        nmine++;
    }
    chunks = total / CHUNK;
    if (ps_rank == 0) {
        counts = malloc(sizeof(int) * ps_nprocs);
        displs = malloc(sizeof(int) * ps_nprocs);
    }
    MPI_Gather(&nmine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (ps_rank == 0) {
        char *seen = calloc(chunks, 1);
        for (n = 0, i = 0; i < ps_nprocs; i++) {
            displs[i] = (int) n;
            n += counts[i];
        }
        PS_CHECK(n == chunks, "read_shared handed out %lld chunks, expected %lld",
                 (long long) n, (long long) chunks);
        all = malloc(sizeof(*all) * (n + 1));
        MPI_Gatherv(offs, nmine, MPI_LONG_LONG, all, counts, displs, MPI_LONG_LONG, 0,
                    MPI_COMM_WORLD);
        for (i = 0; i < n; i++) {
            PS_CHECK(all[i] % CHUNK == 0 && all[i] / CHUNK < chunks && !seen[all[i] / CHUNK],
                     "chunk at %lld read twice or misplaced", all[i]);
            seen[all[i] / CHUNK] = 1;
        }
        free(seen);
        free(all);
        free(counts);
        free(displs);
    } else {
        MPI_Gatherv(offs, nmine, MPI_LONG_LONG, NULL, NULL, NULL, MPI_LONG_LONG, 0,
                    MPI_COMM_WORLD);
    }

    /* 4: split ordered: one more 64-byte block per process at the end (the
     * reads past the end above moved the pointer beyond it) */
    PS_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    expect_position(fh, total, "seek_shared SEEK_END 0");
    fill_words(buf, 64, total + 64 * (MPI_Offset) ps_rank);
    PS_MPI(MPI_File_write_ordered_begin(fh, buf, 64, MPI_BYTE));
    PS_MPI(MPI_File_write_ordered_end(fh, buf, &st));
    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));
    PS_MPI(MPI_File_seek_shared(fh, total, MPI_SEEK_SET));
    PS_MPI(MPI_File_read_ordered_begin(fh, got, 64, MPI_BYTE));
    PS_MPI(MPI_File_read_ordered_end(fh, got, &st));
    check_words(got, 64, total + 64 * (MPI_Offset) ps_rank, "read_ordered_begin block");
    total += 64 * (MPI_Offset) ps_nprocs;
    expect_position(fh, total, "after the split ordered calls");

    /* 4b: read_ordered across the end counts only the bytes there, whole
     * and split (under Open MPI it counted them all: session 80) */
    for (i = 0; i < 2; i++) {
        MPI_Offset at = total - 48 + 96 * (MPI_Offset) ps_rank, want = total - at;

        want = want < 0 ? 0 : want > 96 ? 96 : want;
        PS_MPI(MPI_File_seek_shared(fh, total - 48, MPI_SEEK_SET));
        if (i == 0) {
            PS_MPI(MPI_File_read_ordered(fh, got, 96, MPI_BYTE, &st));
        } else {
            PS_MPI(MPI_File_read_ordered_begin(fh, got, 96, MPI_BYTE));
            PS_MPI(MPI_File_read_ordered_end(fh, got, &st));
        }
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        PS_CHECK(cnt == want, "read_ordered%s across the end read %d bytes, not %lld",
                 i ? "_begin" : "", cnt, (long long) want);
        if (cnt > 0)
            check_words(got, cnt, at, "read_ordered across the end");
        MPI_Barrier(MPI_COMM_WORLD);
    }
    PS_MPI(MPI_File_seek_shared(fh, total, MPI_SEEK_SET));
    expect_position(fh, total, "after the reads across the end");

    free(offs);
    free(buf);
    free(got);
    return total;
}

/* Between 4 and 5, on pstripe: seeks and split ordered calls that fail;
 * the pointer is at total after. */
static void failed_calls(MPI_File fh, MPI_Offset total)
{
    unsigned char buf[8] = { 0 };
    MPI_Status st;

    PS_MPI_EXPECT(MPI_File_seek_shared(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
    if (PS_OMPIO) {
        PS_MPI(MPI_File_seek_shared(fh, INT64_MAX - 4, MPI_SEEK_SET));
        PS_MPI_EXPECT(MPI_File_write_ordered_begin(fh, buf, 8, MPI_BYTE), MPI_ERR_IO);
        PS_MPI_EXPECT(MPI_File_read_ordered_begin(fh, buf, 8, MPI_BYTE), MPI_ERR_IO);
    }
    PS_MPI(MPI_File_seek_shared(fh, total, MPI_SEEK_SET));
    PS_MPI(MPI_File_read_ordered_begin(fh, buf, 0, MPI_BYTE));
    PS_MPI(MPI_File_read_ordered_end(fh, buf, &st));
    expect_position(fh, total, "after the failed calls");
}

/* 6: sequential mode. */
static void sequential(const char *fname)
{
    char name[1024];
    MPI_File fh;
    MPI_Offset total;

    ps_fname(name, sizeof(name), fname, ".seq");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, name,
                         MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                         MPI_INFO_NULL, &fh));
    total = append_records(fh);
    PS_MPI(MPI_File_close(&fh));
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    check_records(fh, total);
    PS_MPI(MPI_File_close(&fh));
    /* MPI_MODE_APPEND starts the shared pointer at the end */
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL,
                         &fh));
    expect_position(fh, total, "open with MPI_MODE_APPEND");
    PS_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0)
        PS_MPI(MPI_File_delete(name, MPI_INFO_NULL));
}

/* 7: appends at the shared pointer, seen by the others after a barrier:
 * the first n records of the file hold every process's record of this
 * kind (bytes 0x40 + rank, or 0x80 + rank) once. */
static void check_after_barrier(MPI_File fh, int n, int kind, const char *what)
{
    unsigned char *all = malloc((size_t) n * CHUNK);
    int *count = calloc(ps_nprocs, sizeof(int)), i, j, got;
    MPI_Status st;

    PS_MPI(MPI_File_read_at(fh, 0, all, n * CHUNK, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &got);
    PS_CHECK(got == n * CHUNK, "%s, after a barrier: read %d of %d bytes", what, got, n * CHUNK);
    for (i = n - ps_nprocs; i < n; i++) {
        int b = all[i * CHUNK], r = b - kind, whole = 1;
        for (j = 1; j < CHUNK; j++)
            whole &= all[i * CHUNK + j] == b;
        PS_CHECK(whole && r >= 0 && r < ps_nprocs,
                 "%s, after a barrier: record %d holds 0x%02x (another process's append not "
                 "seen)", what, i, b);
        if (whole && r >= 0 && r < ps_nprocs)
            count[r]++;
    }
    for (i = 0; i < ps_nprocs; i++)
        PS_CHECK(count[i] == 1, "%s, after a barrier: rank %d's record seen %d times", what, i,
                 count[i]);
    free(count);
    free(all);
}

static void seen_after_barrier(const char *fname)
{
    char name[1024];
    unsigned char mine[CHUNK];
    MPI_File fh;
    MPI_Status st;
    int amode, mode = MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE;

    ps_fname(name, sizeof(name), fname, ".bar");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, name, mode, MPI_INFO_NULL, &fh));
    PS_MPI(MPI_File_get_amode(fh, &amode));
    PS_CHECK(amode == mode, "MPI_File_get_amode: 0x%x, opened with 0x%x", amode, mode);
    PS_MPI(MPI_File_set_size(fh, 0));
    memset(mine, 0x40 + ps_rank, CHUNK);
    PS_MPI(MPI_File_write_shared(fh, mine, CHUNK, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    check_after_barrier(fh, ps_nprocs, 0x40, "write_shared");
    MPI_Barrier(MPI_COMM_WORLD);
    memset(mine, 0x80 + ps_rank, CHUNK);
    PS_MPI(MPI_File_write_ordered(fh, mine, CHUNK, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    check_after_barrier(fh, 2 * ps_nprocs, 0x80, "write_ordered");
    PS_MPI(MPI_File_close(&fh));
    if (ps_rank == 0)
        PS_MPI_EXPECT(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                      MPI_ERR_NO_SUCH_FILE);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    MPI_File fh, fh2;
    MPI_Offset total;
    double t0, t1;

    t0 = MPI_Wtime();
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    PS_MPI(MPI_File_set_size(fh, 0));
    expect_position(fh, 0, "after open");
    total = append_records(fh);
    t1 = MPI_Wtime();
    expect_position(fh, total, "after the appends");
    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));
    check_records(fh, total);
    if (ps_rank == 0)
        printf("ps_shared: %d processes wrote %d records (%lld bytes) with write_shared "
               "in %.3f s\n", ps_nprocs, ps_nprocs * NREC, (long long) total, t1 - t0);

    total = ordered_steps(fh);
    if (ps_is_pstripe(fname))
        failed_calls(fh, total);

    /* 5: a second open has its own pointer (pstripe only: ROMIO's ufs names
     * its hidden pointer file from a random number that can repeat in one
     * process, and then two opens share it) */
    if (ps_is_pstripe(fname)) {
        PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh2));
        expect_position(fh2, 0, "second open");
        expect_position(fh, total, "first open, after the second open");
        PS_MPI(MPI_File_close(&fh2));
    }

    /* the pointer counts etypes of the view: ints here */
    PS_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    expect_position(fh, 0, "after set_view to ints");
    PS_MPI(MPI_File_seek_shared(fh, 10, MPI_SEEK_SET));
    expect_position(fh, 10, "seek_shared to int 10");
    {
        int two[2], cnt;
        MPI_Status st;
        PS_MPI(MPI_File_read_ordered(fh, two, 2, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &cnt);
        PS_CHECK(cnt == 2 && two[0] == 40 + 8 * ps_rank && two[1] == 0,
                 "read_ordered of ints: %d ints, %d %d; expected 2, %d 0", cnt, two[0], two[1],
                 40 + 8 * ps_rank);
    }
    expect_position(fh, 10 + 2 * (MPI_Offset) ps_nprocs, "after read_ordered of ints");
    PS_MPI(MPI_File_close(&fh));

    sequential(fname);
    seen_after_barrier(fname);
    if (ps_rank == 0)
        printf("ps_shared: PASS (%d processes)\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

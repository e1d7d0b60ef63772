/*
 * ps_hints: hints given at open and with MPI_File_set_info, what
 * MPI_File_get_info shows, and the data paths they select.
 *
 * The file is created with a layout (striping_factor 2, striping_unit
 * 128 KiB, start_iodevice 1), the client tunables of the pstripe hints, and
 * list I/O switched off, so that noncontiguous accesses take ROMIO's
 * data-sieving path (read-modify-write of whole buffers, made safe by the
 * driver's file lock: all processes write interleaved blocks at once).
 * Then list I/O is switched on with MPI_File_set_info and the same is done
 * in another region. On pstripe, get_info must show the effective values:
 * the layout the file really has (also when it is reopened with other
 * layout hints, which apply only at creation), the tunables, the switches.
 * Hints as users write them never fail an open (check_fitting): a
 * striping_factor larger than the cluster is clamped to it, 0 and -1 mean
 * the default, a start_iodevice outside the cluster is ignored, a
 * striping_unit the servers cannot use is fitted, malformed values of
 * pstripe's own hints are ignored; get_info shows the effective values,
 * and the info read back from a file creates the same layout again.
 *
 * Hints in MPI_File_set_info and set_view's info remake the caches they
 * change (cache_hints): get_info shows the caches the file has, and bytes
 * written through each state are all there.
 *
 * ROMIO's hints file gives the hints the info does not (hints_file).
 *
 * Built with Open MPI (OMPIO and the components of adio/ompio): OMPIO has
 * no data sieving (the list I/O switches are checked and have no effect:
 * OMPIO always hands the fs lists) and no romio_filesystem_type; set_info
 * and set_view reach the components through the hooks library mpi-tests
 * preloads (as `pstripe run` does). The rest is checked as under ROMIO.
 *
 * Usage: ps_hints FILENAME
 */
#include "pstest.h"
#include <stdarg.h>
#include <unistd.h>

#ifdef OPEN_MPI
#define PS_OMPIO 1
#else
#define PS_OMPIO 0
#endif

#define B 4099                  /* bytes per block: not a divisor of anything */
#define NB 64                   /* blocks per process and region */

static void expect_info(MPI_File fh, const char *key, const char *want)
{
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;

    PS_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    PS_CHECK(flag, "get_info has no %s", key);
    PS_CHECK(strcmp(value, want) == 0, "get_info: %s is \"%s\", expected \"%s\"", key, value,
             want);
    MPI_Info_free(&info);
}

/* The value of key in the info of fh (0 if absent). */
static long long info_ll(MPI_File fh, const char *key)
{
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;

    PS_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    PS_CHECK(flag, "get_info has no %s", key);
    return atoll(value);
}

typedef struct {
    long long factor, unit, start, bufsize;
} layout_seen;

/* Create the file base.SUFFIX with the hints of given and the pairs key,
 * value, ... (ending with NULL), write and read some bytes, and return what get_info shows. The open
 * must succeed: hints never fail it. */
static layout_seen create_with(const char *base, const char *suffix, MPI_Info given, ...)
{
    char name[1024];
    const char *k, *v;
    MPI_Info info;
    MPI_File fh;
    MPI_Status st;
    layout_seen seen = {0, 0, 0, 0};
    unsigned char out[1000], in[1000];
    va_list ap;

    ps_fname(name, sizeof(name), base, suffix);
    if (given != MPI_INFO_NULL)
        MPI_Info_dup(given, &info);
    else
        MPI_Info_create(&info);
    va_start(ap, given);
    while ((k = va_arg(ap, const char *)) != NULL) {
        v = va_arg(ap, const char *);
        MPI_Info_set(info, k, v);
    }
    va_end(ap);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR |
                         MPI_MODE_DELETE_ON_CLOSE, info, &fh));
    MPI_Info_free(&info);
    ps_fill(out, sizeof(out), (uint64_t) ps_rank * sizeof(out), 7);
    PS_MPI(MPI_File_write_at_all(fh, (MPI_Offset) ps_rank * sizeof(out), out, sizeof(out),
                                 MPI_BYTE, &st));
    PS_MPI(MPI_File_read_at_all(fh, (MPI_Offset) ps_rank * sizeof(out), in, sizeof(in),
                                MPI_BYTE, &st));
    ps_compare(in, out, sizeof(in), suffix);
    if (ps_is_pstripe(base)) {
        seen.factor = info_ll(fh, "striping_factor");
        seen.unit = info_ll(fh, "striping_unit");
        seen.start = info_ll(fh, "start_iodevice");
        seen.bufsize = info_ll(fh, "romio_pstripe_buffer_size");
    }
    PS_MPI(MPI_File_close(&fh));
    return seen;
}

#define EXPECT_LL(got, want, what)                                                         \
    PS_CHECK((got) == (want), "%s: %lld, expected %lld", what, (long long) (got),           \
             (long long) (want))

/* Layout hints out of range, malformed pstripe hints: the open succeeds
 * and get_info shows what the file got. */
static void check_fitting(const char *fname)
{
    int pstripe = ps_is_pstripe(fname);
    layout_seen def, s;
    char v[32];
    MPI_Info info;
    MPI_File fh;

    def = create_with(fname, ".def", MPI_INFO_NULL, NULL);
    /* a striping_factor larger than any cluster: clamped to this one */
    s = create_with(fname, ".f50", MPI_INFO_NULL, "striping_factor", "50", NULL);
    if (pstripe) {
        long long nservers = s.factor;
        PS_CHECK(nservers >= 1 && nservers < 50, "striping_factor 50 shows %lld", nservers);
        snprintf(v, sizeof(v), "%lld", nservers + 1);
        s = create_with(fname, ".fn1", MPI_INFO_NULL, "striping_factor", v, NULL);
        EXPECT_LL(s.factor, nservers, "striping_factor = servers + 1");
        snprintf(v, sizeof(v), "%lld", nservers);
        s = create_with(fname, ".fn", MPI_INFO_NULL, "striping_factor", v, NULL);
        EXPECT_LL(s.factor, nservers, "striping_factor = servers");
        if (ps_rank == 0)
            printf("  striping_factor 50 on a %lld-server cluster: %lld\n", nservers, nservers);
        /* a start_iodevice outside the cluster is ignored (the path chooses) */
        snprintf(v, sizeof(v), "%lld", nservers);
        s = create_with(fname, ".sbig", MPI_INFO_NULL, "start_iodevice", v, NULL);
        PS_CHECK(s.start >= 0 && s.start < nservers, "start_iodevice %s shows %lld", v, s.start);
    }
    /* 0 and -1 mean the default */
    s = create_with(fname, ".f0", MPI_INFO_NULL, "striping_factor", "0", "striping_unit", "0",
                    NULL);
    EXPECT_LL(s.factor, def.factor, "striping_factor 0");
    EXPECT_LL(s.unit, def.unit, "striping_unit 0");
    s = create_with(fname, ".fm1", MPI_INFO_NULL, "striping_factor", "-1", "striping_unit", "-1",
                    NULL);
    EXPECT_LL(s.factor, def.factor, "striping_factor -1");
    EXPECT_LL(s.unit, def.unit, "striping_unit -1");
    s = create_with(fname, ".sm2", MPI_INFO_NULL, "start_iodevice", "-2", NULL);
    if (pstripe)
        PS_CHECK(s.start >= 0 && s.start < PS_MAX(def.factor, 1),
                 "start_iodevice -2 shows %lld", s.start);
    /* a striping_unit the servers cannot use is fitted */
    s = create_with(fname, ".u100", MPI_INFO_NULL, "striping_unit", "100", NULL);
    if (pstripe)
        EXPECT_LL(s.unit, 512, "striping_unit 100");
    s = create_with(fname, ".u4g", MPI_INFO_NULL, "striping_unit", "4g", "striping_factor", "1",
                    NULL);
    if (pstripe) {
        EXPECT_LL(s.unit, 1LL << 30, "striping_unit 4g");
        EXPECT_LL(s.factor, 1, "striping_factor 1");
    }
    /* malformed values are ignored (with a warning in the log) */
    s = create_with(fname, ".bad", MPI_INFO_NULL, "striping_factor", "many",
                    "romio_pstripe_buffer_size", "lots", "romio_pstripe_buffer_count", "0",
                    "romio_pstripe_listio_write", "maybe", NULL);
    EXPECT_LL(s.factor, def.factor, "striping_factor many");
    EXPECT_LL(s.bufsize, def.bufsize, "romio_pstripe_buffer_size lots");

    /* the info read back sets the same layout again */
    if (pstripe) {
        char name[1024];
        ps_fname(name, sizeof(name), fname, ".lay");
        MPI_Info_create(&info);
        MPI_Info_set(info, "striping_factor", "1");
        MPI_Info_set(info, "striping_unit", "4096");
        MPI_Info_set(info, "start_iodevice", "-5");
        PS_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR |
                             MPI_MODE_DELETE_ON_CLOSE, info, &fh));
        MPI_Info_free(&info);
        PS_MPI(MPI_File_get_info(fh, &info));
        s = create_with(fname, ".again", info, NULL);
        MPI_Info_free(&info);
        EXPECT_LL(s.factor, 1, "striping_factor from get_info");
        EXPECT_LL(s.unit, 4096, "striping_unit from get_info");
        EXPECT_LL(s.start, info_ll(fh, "start_iodevice"), "start_iodevice from get_info");
        PS_MPI(MPI_File_close(&fh));
    }
}

/* Rank r writes blocks r, r + P, r + 2P, ... of the region at base, with a
 * vector view, from strided memory; all processes at once; then reads them
 * back and rank 0 checks the whole region. */
static void interleaved(MPI_File fh, MPI_Offset base, unsigned seed, const char *what)
{
    MPI_Datatype ftype, mtype, t;
    MPI_Status st;
    unsigned char *src = malloc(2 * NB * B), *back = malloc(2 * NB * B), *p1, *p2;
    MPI_Offset total = (MPI_Offset) NB * B * ps_nprocs;

    MPI_Type_vector(NB, B, B * ps_nprocs, MPI_BYTE, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint) NB * B * ps_nprocs, &ftype);
    MPI_Type_free(&t);
    MPI_Type_commit(&ftype);
    MPI_Type_vector(NB, B, 2 * B, MPI_BYTE, &mtype);    /* every other block */
    MPI_Type_commit(&mtype);

    ps_fill(src, 2 * NB * B, (uint64_t) ps_rank << 32, seed);
    memset(back, 0, 2 * NB * B);
    PS_MPI(MPI_File_set_view(fh, base + (MPI_Offset) ps_rank * B, MPI_BYTE, ftype, "native",
                             MPI_INFO_NULL));
    PS_MPI(MPI_File_write_at(fh, 0, src, 1, mtype, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_read_at(fh, 0, back, 1, mtype, &st));
    p1 = ps_pack(src, 1, mtype);
    p2 = ps_pack(back, 1, mtype);
    ps_compare(p2, p1, (size_t) NB * B, what);
    free(p1);
    free(p2);

    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0) {
        unsigned char *whole = malloc(total), *want = malloc(total), *s = malloc(2 * NB * B);
        int q, k;
        for (q = 0; q < ps_nprocs; q++) {
            ps_fill(s, 2 * NB * B, (uint64_t) q << 32, seed);
            for (k = 0; k < NB; k++)
                memcpy(want + ((MPI_Offset) k * ps_nprocs + q) * B, s + (size_t) 2 * k * B, B);
        }
        PS_MPI(MPI_File_read_at(fh, base, whole, (int) total, MPI_BYTE, &st));
        ps_compare(whole, want, total, what);
        free(whole);
        free(want);
        free(s);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
    free(src);
    free(back);
}

/* Hints in set_view's info (HDF5 passes its file's info to every view):
 * the same values again are shown unchanged, a new one is taken. (That
 * the same values leave the caches' buffers alone is not visible here:
 * it is a speed, measured in 9b512e8.) */
static void view_hints(MPI_File fh)
{
    MPI_Info info;

    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_pstripe_buffer_size", "65536");
    MPI_Info_set(info, "romio_pstripe_listio_write", "enable");
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    expect_info(fh, "romio_pstripe_buffer_size", "65536");
    expect_info(fh, "romio_pstripe_listio_write", "enable");
    MPI_Info_set(info, "romio_pstripe_wb_buffer_size", "3m");
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    expect_info(fh, "romio_pstripe_wb_buffer_size", "3145728");
    expect_info(fh, "romio_pstripe_buffer_size", "65536");
    MPI_Info_set(info, "romio_pstripe_buffer_size", "131072");
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    expect_info(fh, "romio_pstripe_buffer_size", "131072");
    MPI_Info_free(&info);
}

/*
 * A view or set_info whose info is MPI_INFO_NULL on some processes and an
 * info object on others (MPI lets them differ): the collective calls that
 * follow still pair up, and the bytes are right. Under MPICH the driver
 * agreed on hints only where there was an info object, so its allreduce
 * met another process's next collective (a hang or an error before
 * session 74; under Open MPI the hooks' agreement the same way). A
 * pstripe hint given by some processes only is MPI_ERR_NOT_SAME on every
 * process. Open MPI's set_info refuses MPI_INFO_NULL (MPI_ERR_INFO) on
 * the processes that pass it alone, and the others' agreement on the
 * hints must not wait for them (the hooks took part only after a
 * successful call: a hang).
 */
static void null_info_views(MPI_File fh, int pstripe)
{
    MPI_Info info = MPI_INFO_NULL, mine;
    MPI_Status st;
    unsigned char out[64], in[64];
    int rc;

    if (ps_rank > 0)
        MPI_Info_create(&info);
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    if (!PS_OMPIO)
        PS_MPI(MPI_File_set_info(fh, info));
    else        /* Open MPI refuses MPI_INFO_NULL there, on that process alone: */
        PS_MPI_EXPECT(MPI_File_set_info(fh, info), ps_rank == 0 ? MPI_ERR_INFO : MPI_SUCCESS);
    ps_fill(out, sizeof(out), (uint64_t) ps_rank * sizeof(out), 21);
    PS_MPI(MPI_File_write_at_all(fh, (MPI_Offset) ps_rank * sizeof(out), out, sizeof(out),
                                 MPI_BYTE, &st));
    PS_MPI(MPI_File_read_at_all(fh, (MPI_Offset) ps_rank * sizeof(out), in, sizeof(in),
                                MPI_BYTE, &st));
    ps_compare(in, out, sizeof(in), "a view with MPI_INFO_NULL on some processes");
    if (pstripe && ps_nprocs > 1) {
        mine = info;
        if (ps_rank > 0)
            MPI_Info_set(mine, "romio_pstripe_wb_buffer_size", "3m");
        rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", mine);
        PS_MPI_EXPECT(rc, MPI_ERR_NOT_SAME);
        PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    }
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
}

/* expect_info on a pstripe file; nothing elsewhere */
static void expect_if(int pstripe, MPI_File fh, const char *key, const char *want)
{
    if (pstripe)
        expect_info(fh, key, want);
}

/* Round k of small writes: each process writes its records k*R .. k*R +
 * R - 1 of REC bytes, record i of rank r at base + (i * P + r) * REC. */
#define REC 100
#define R   40

static void write_round(MPI_File fh, MPI_Offset base, int k)
{
    unsigned char rec[REC];
    MPI_Status st;
    int i;

    for (i = k * R; i < (k + 1) * R; i++) {
        MPI_Offset at = base + ((MPI_Offset) i * ps_nprocs + ps_rank) * REC;
        ps_fill(rec, REC, (uint64_t) at, 11);
        PS_MPI(MPI_File_write_at(fh, at, rec, REC, MPI_BYTE, &st));
    }
}

/*
 * Hints that remake the caches (set_info and a view's info): small writes
 * before, between and after, each taken by the caches the file has then;
 * get_info shows them (write-behind "disable" only when the file has no
 * buffer); after sync-barrier-sync every process reads every record.
 * Under Open MPI before the hooks passed set_info on, get_info lost the
 * keys set_info named. (On ufs: the writes and reads only.)
 */
static void cache_hints(MPI_File fh, MPI_Offset base, int pstripe)
{
    MPI_Info info;
    MPI_Status st;
    int rounds = 4, n = rounds * R * ps_nprocs;
    unsigned char *all = malloc((size_t) n * REC), *want = malloc((size_t) n * REC);

    write_round(fh, base, 0);
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_pstripe_write_behind", "disable");
    MPI_Info_set(info, "romio_pstripe_rc_size", "1m");
    PS_MPI(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    expect_if(pstripe, fh, "romio_pstripe_write_behind", "disable");
    expect_if(pstripe, fh, "romio_pstripe_rc_size", "1048576");
    expect_if(pstripe, fh, "romio_pstripe_buffer_size", "131072"); /* from view_hints */
    write_round(fh, base, 1);

    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_pstripe_write_behind", "enable");
    MPI_Info_set(info, "romio_pstripe_wb_buffer_size", "1m");
    PS_MPI(MPI_File_set_info(fh, info));
    expect_if(pstripe, fh, "romio_pstripe_write_behind", "enable");
    expect_if(pstripe, fh, "romio_pstripe_wb_buffer_size", "1048576");
    write_round(fh, base, 2);
    /* the same hints at a view: nothing changes */
    PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    MPI_Info_free(&info);
    expect_if(pstripe, fh, "romio_pstripe_wb_buffer_size", "1048576");
    /* a bad value is ignored: the file keeps what it has */
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_pstripe_wb_buffer_size", "huge");
    PS_MPI(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    expect_if(pstripe, fh, "romio_pstripe_wb_buffer_size", "1048576");
    write_round(fh, base, 3);

    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));
    PS_MPI(MPI_File_read_at(fh, base, all, n * REC, MPI_BYTE, &st));
    for (int i = 0; i < n; i++)
        ps_fill(want + (size_t) i * REC, REC, (uint64_t) (base + (MPI_Offset) i * REC), 11);
    ps_compare(all, want, (size_t) n * REC, "records written through changing caches");
    MPI_Barrier(MPI_COMM_WORLD);
    free(all);
    free(want);
}

/*
 * ROMIO's hints file (ROMIO_HINTS), read at a process's first open beneath
 * the info's hints, under both MPIs (the Open MPI components read it as
 * ROMIO does): a key only the file gives is taken, one the info gives too
 * is the info's; comments and lines of other than two words are skipped.
 * Only rank 0's file counts; each process points ROMIO_HINTS at it. The
 * first open of the program: later ones keep the file's hints, which
 * change nothing the rest checks.
 */
static void hints_file(const char *fname)
{
    static const char text[] = "# hints for ps_hints\n"
                               "romio_pstripe_write_behind disable\n"
                               "romio_pstripe_rc_size 131072\n"
                               "romio_pstripe_buffer_count 7 extra\n"
                               "romio_pstripe_max_regions\n"
                               "\tromio_pstripe_rc_block_size  8192\n";
    char path[64] = "", other[1024];
    MPI_Info info;
    MPI_File fh;

    if (ps_rank == 0) {
        int fd;

        snprintf(path, sizeof(path), "/tmp/ps_hints.XXXXXX");
        fd = mkstemp(path);
        PS_CHECK(fd >= 0 && write(fd, text, sizeof(text) - 1) == (ssize_t)sizeof(text) - 1,
                 "cannot write the hints file %s", path);
        close(fd);
    }
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    setenv("ROMIO_HINTS", path, 1);
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_pstripe_rc_size", "65536");
    ps_fname(other, sizeof(other), fname, ".hfile");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR |
                         MPI_MODE_DELETE_ON_CLOSE, info, &fh));
    MPI_Info_free(&info);
    unsetenv("ROMIO_HINTS");
    expect_info(fh, "romio_pstripe_write_behind", "disable");
    expect_info(fh, "romio_pstripe_rc_size", "65536");
    expect_info(fh, "romio_pstripe_rc_block_size", "8192");
    PS_CHECK(info_ll(fh, "romio_pstripe_buffer_count") != 7,
             "a line of three words was taken: buffer_count 7");
    PS_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0)
        unlink(path);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    int pstripe = ps_is_pstripe(fname);
    MPI_Offset region = (MPI_Offset) NB * B * ps_nprocs;
    MPI_File fh;
    MPI_Info info;
    char other[1024], value[MPI_MAX_INFO_VAL + 1];
    int flag;

    if (pstripe)
        hints_file(fname);
    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_factor", "2");
    MPI_Info_set(info, "striping_unit", "131072");
    MPI_Info_set(info, "start_iodevice", "1");
    MPI_Info_set(info, "romio_pstripe_buffer_size", "2m");
    MPI_Info_set(info, "romio_pstripe_buffer_count", "3");
    MPI_Info_set(info, "romio_pstripe_max_regions", "1000");
    MPI_Info_set(info, "romio_pstripe_listio_read", "disable");
    MPI_Info_set(info, "romio_pstripe_listio_write", "disable");
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "ind_wr_buffer_size", "65536");
    MPI_Info_set(info, "ind_rd_buffer_size", "65536");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);

    expect_info(fh, "cb_buffer_size", "1048576");
    if (pstripe) {
        expect_info(fh, "striping_factor", "2");
        expect_info(fh, "striping_unit", "131072");
        expect_info(fh, "start_iodevice", "1");
        expect_info(fh, "romio_pstripe_buffer_size", "2097152");
        expect_info(fh, "romio_pstripe_buffer_count", "3");
        expect_info(fh, "romio_pstripe_max_regions", "1000");
        expect_info(fh, "romio_pstripe_listio_read", "disable");
        expect_info(fh, "romio_pstripe_listio_write", "disable");
    }
    if (pstripe && !PS_OMPIO) {
        PS_MPI(MPI_File_get_info(fh, &info));
        MPI_Info_get(info, "romio_filesystem_type", MPI_MAX_INFO_VAL, value, &flag);
        PS_CHECK(flag && strstr(value, "PSTRIPE"), "romio_filesystem_type is \"%s\"",
                 flag ? value : "(none)");
        MPI_Info_free(&info);
    }

    /* data sieving (generic path), every process at once */
    interleaved(fh, 0, 1, "data-sieving writes of interleaved blocks");

    /* list I/O on again */
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_pstripe_listio_read", "enable");
    MPI_Info_set(info, "romio_pstripe_listio_write", "enable");
    MPI_Info_set(info, "romio_pstripe_buffer_size", "65536");
    PS_MPI(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    if (pstripe) {
        expect_info(fh, "romio_pstripe_listio_read", "enable");
        expect_info(fh, "romio_pstripe_listio_write", "enable");
        expect_info(fh, "romio_pstripe_buffer_size", "65536");
        expect_info(fh, "romio_pstripe_buffer_count", "3");
        expect_info(fh, "striping_unit", "131072");
        view_hints(fh);
    }
    cache_hints(fh, 3 * region, pstripe); /* (on ufs too: the files are compared) */
    interleaved(fh, region, 2, "list I/O writes of interleaved blocks");
    PS_MPI(MPI_File_close(&fh));

    /* layout hints apply at creation only: a reopen shows the real layout */
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_factor", "1");
    MPI_Info_set(info, "striping_unit", "1048576");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, info, &fh));
    if (pstripe) {
        expect_info(fh, "striping_factor", "2");
        expect_info(fh, "striping_unit", "131072");
        expect_info(fh, "start_iodevice", "1");
        if (!PS_OMPIO)
            expect_info(fh, "romio_pstripe_listio_write", "enable");
    }
    if (pstripe) {
        /* the same info at a view (as HDF5 passes it): still the real layout */
        PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
        expect_info(fh, "striping_unit", "131072");
        expect_info(fh, "striping_factor", "2");
    }
    MPI_Info_free(&info);
    interleaved(fh, 2 * region, 3, "list I/O writes after a reopen");
    PS_MPI(MPI_File_close(&fh));

    /* a file with the default layout: the info shows a real layout */
    ps_fname(other, sizeof(other), fname, ".default");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR |
                         MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    if (pstripe) {
        PS_MPI(MPI_File_get_info(fh, &info));
        MPI_Info_get(info, "striping_unit", MPI_MAX_INFO_VAL, value, &flag);
        PS_CHECK(flag && atoi(value) > 0, "default striping_unit \"%s\"", flag ? value : "");
        MPI_Info_get(info, "striping_factor", MPI_MAX_INFO_VAL, value, &flag);
        PS_CHECK(flag && atoi(value) > 0, "default striping_factor \"%s\"", flag ? value : "");
        MPI_Info_get(info, "romio_pstripe_buffer_size", MPI_MAX_INFO_VAL, value, &flag);
        PS_CHECK(flag && atoi(value) > 0, "default buffer_size \"%s\"", flag ? value : "");
        MPI_Info_free(&info);
    }
    if (pstripe && !PS_OMPIO) {
        /* a two-phase round is a request to the servers: cb_buffer_size
         * under 64 KiB is raised (1 byte took 2.2 s for a 40 KB write) */
        MPI_Info_create(&info);
        MPI_Info_set(info, "cb_buffer_size", "1");
        PS_MPI(MPI_File_set_info(fh, info));
        MPI_Info_free(&info);
        expect_info(fh, "cb_buffer_size", "65536");
    }
    null_info_views(fh, pstripe);
    PS_MPI(MPI_File_close(&fh));

    check_fitting(fname);

    if (ps_rank == 0)
        printf("ps_hints: %d processes: PASS\n", ps_nprocs);
    MPI_Finalize();
    return 0;
}

/*
 * pstest.h: small helpers shared by the MPI test programs (header only).
 *
 * The programs are plain MPI-IO programs in the manner of ROMIO's test/
 * directory: they take a file name (with its ROMIO prefix, "pstripe:/x" or
 * "ufs:/tmp/x") as argument, so that the same program runs on pstripe and
 * on a local file system, and the runner compares the files they leave.
 * Every write is read back and compared; a failed check prints where and
 * aborts with MPI_Abort, so a failure never looks like a hang.
 */
#ifndef PSTEST_H
#define PSTEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ps_rank, ps_nprocs;

#define PS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PS_MAX(a, b) ((a) > (b) ? (a) : (b))
static const char *ps_prog = "test";

#define PS_FAIL(...)                                                        \
    do {                                                                    \
        fprintf(stderr, "%s: rank %d: %s:%d: ", ps_prog, ps_rank, __FILE__, \
                __LINE__);                                                  \
        fprintf(stderr, __VA_ARGS__);                                       \
        fprintf(stderr, "\n");                                              \
        fflush(stderr);                                                     \
        MPI_Abort(MPI_COMM_WORLD, 1);                                       \
    } while (0)

/* Check an MPI call: anything but MPI_SUCCESS fails the test, with the
 * error string. */
#define PS_MPI(call)                                                        \
    do {                                                                    \
        int ps_rc_ = (call);                                                \
        if (ps_rc_ != MPI_SUCCESS) {                                        \
            char ps_msg_[MPI_MAX_ERROR_STRING];                             \
            int ps_len_ = 0;                                                \
            MPI_Error_string(ps_rc_, ps_msg_, &ps_len_);                    \
            PS_FAIL("%s failed: %s", #call, ps_msg_);                       \
        }                                                                   \
    } while (0)

#define PS_CHECK(cond, ...)                                                 \
    do {                                                                    \
        if (!(cond))                                                        \
            PS_FAIL(__VA_ARGS__);                                           \
    } while (0)

/* Expect an MPI call to fail with error class cls. */
#define PS_MPI_EXPECT(call, cls)                                            \
    do {                                                                    \
        int ps_rc_ = (call), ps_cls_ = MPI_SUCCESS;                         \
        char ps_msg_[MPI_MAX_ERROR_STRING] = "";                            \
        int ps_len_ = 0;                                                    \
        if (ps_rc_ != MPI_SUCCESS) {                                        \
            MPI_Error_class(ps_rc_, &ps_cls_);                              \
            MPI_Error_string(ps_rc_, ps_msg_, &ps_len_);                    \
        }                                                                   \
        if (ps_cls_ != (cls))                                               \
            PS_FAIL("%s: expected error class %d (%s), got %d: %s", #call,  \
                    (int) (cls), #cls, ps_cls_, ps_msg_);                   \
    } while (0)

/* Initialize MPI at thread level `required` (or fail); the file name is
 * argv[1] or the argument of -fname. */
static inline const char *ps_init_thread(int *argc, char ***argv, int required)
{
    const char *fname = NULL;
    int i, provided;

    MPI_Init_thread(argc, argv, required, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &ps_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ps_nprocs);
    ps_prog = strrchr((*argv)[0], '/') ? strrchr((*argv)[0], '/') + 1 : (*argv)[0];
    for (i = 1; i < *argc; i++) {
        if (strcmp((*argv)[i], "-fname") == 0 && i + 1 < *argc)
            fname = (*argv)[++i];
        else if (fname == NULL)
            fname = (*argv)[i];
    }
    if (fname == NULL) {
        if (ps_rank == 0)
            fprintf(stderr, "usage: %s [-fname] FILENAME (e.g. pstripe:/t or ufs:/tmp/t)\n",
                    ps_prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (provided < required)
        PS_FAIL("MPI_Init_thread: thread level %d provided, %d required", provided, required);
    /* errors are checked at every call */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    return fname;
}

static inline const char *ps_init(int *argc, char ***argv)
{
    return ps_init_thread(argc, argv, MPI_THREAD_SINGLE);
}

/* Is this a pstripe: file? Some checks only hold there (layout hints,
 * unsupported shared file pointers). */
static inline int ps_is_pstripe(const char *fname)
{
    return strncmp(fname, "pstripe:", 8) == 0;
}

/* A file name derived from the test's: name + suffix. */
static inline void ps_fname(char *buf, size_t len, const char *fname, const char *suffix)
{
    snprintf(buf, len, "%s%s", fname, suffix);
}

/* The byte expected at file offset off for data tagged seed. */
static inline unsigned char ps_byte(uint64_t off, unsigned seed)
{
    uint64_t x = off * 0x9E3779B97F4A7C15ULL + seed * 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 29;
    return (unsigned char) (x ^ (x >> 17));
}

static inline void ps_fill(unsigned char *buf, size_t len, uint64_t off, unsigned seed)
{
    size_t i;
    for (i = 0; i < len; i++)
        buf[i] = ps_byte(off + i, seed);
}

/* Compare; report the first differing byte. */
static inline void ps_compare(const unsigned char *got, const unsigned char *want, size_t len,
                              const char *what)
{
    size_t i;
    for (i = 0; i < len; i++)
        if (got[i] != want[i])
            PS_FAIL("%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, len, got[i],
                    want[i]);
}

/* Byte displacements, in typemap order, of the count * size(type) bytes a
 * datatype selects from a buffer (found by packing an index pattern one
 * byte of the index at a time). Caller frees. The type must have lb >= 0. */
static inline int64_t *ps_type_offsets(MPI_Datatype type, int count, MPI_Count * nbytes)
{
    MPI_Count size;
    MPI_Aint lb, extent, true_lb, true_extent, span;
    unsigned char *src, *packed;
    int64_t *offs;
    int pos, b;
    MPI_Count i;

    MPI_Type_size_x(type, &size);
    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Type_get_true_extent(type, &true_lb, &true_extent);
    PS_CHECK(true_lb >= 0, "ps_type_offsets: negative true lb");
    span = (count - 1) * extent + true_lb + true_extent;
    src = malloc(span + 1);
    packed = malloc(size * count + 1);
    offs = calloc(size * count + 1, sizeof(int64_t));
    for (b = 0; b < 4; b++) {
        for (i = 0; i < span; i++)
            src[i] = (unsigned char) (i >> (8 * b));
        pos = 0;
        MPI_Pack(src, count, type, packed, (int) (size * count), &pos, MPI_COMM_SELF);
        for (i = 0; i < size * count; i++)
            offs[i] |= (int64_t) packed[i] << (8 * b);
    }
    free(src);
    free(packed);
    *nbytes = size * count;
    return offs;
}

/* The bytes a memory datatype selects from buf, packed. Caller frees. */
static inline unsigned char *ps_pack(const void *buf, int count, MPI_Datatype type)
{
    MPI_Count size;
    unsigned char *packed;
    int pos = 0;

    MPI_Type_size_x(type, &size);
    packed = malloc(size * count + 1);
    MPI_Pack(buf, count, type, packed, (int) (size * count), &pos, MPI_COMM_SELF);
    return packed;
}

/* Spend some time computing (to overlap nonblocking I/O). */
static inline double ps_compute(int n)
{
    volatile double x = 1.0;
    int i;
    for (i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

/* Info with the hints every test uses: small stripes and collective
 * buffers, so that modest sizes cross many stripes and rounds, and several
 * aggregators on one host. On ufs only the generic ones matter. */
static inline MPI_Info ps_test_info(void)
{
    MPI_Info info;
    char v[32];

    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", "65536");
    MPI_Info_set(info, "cb_buffer_size", "262144");
    MPI_Info_set(info, "cb_config_list", "*:*");
    snprintf(v, sizeof(v), "%d", ps_nprocs);
    MPI_Info_set(info, "cb_nodes", v);
    return info;
}

#endif

/*
 * ad_pstripe.h: ROMIO driver for pstripe, a striped parallel file system.
 *
 * The driver talks to the storage servers only through the client library
 * (pstripe.h). One pstripe_fs_t connection per process is made at the first
 * open (or delete) and kept until MPI_Finalize, where a delete callback on an
 * attribute of MPI_COMM_SELF disconnects it.
 *
 * Files are named "pstripe:/path" (ROMIO strips the prefix; a relative name
 * is taken relative to the root of the pstripe namespace).
 *
 * Data paths:
 * - contiguous: one striped request (pstripe_pread/pwrite);
 * - noncontiguous (independent): the file view and the memory datatype are
 *   flattened into one region list and one iovec list per call, sent with
 *   pstripe_read_list/write_list (ad_pstripe_io_list.c);
 * - collective: a two-phase exchange of our own with file domains made of
 *   whole stripes, assigned so that each aggregator serves as few servers as
 *   possible (ad_pstripe_aggregate.c); aggregators write and read with
 *   list I/O (ad_pstripe_twophase.c); when the processes' ranges do not
 *   interleave, or a write's regions are small, each process does its
 *   own list I/O instead (ad_pstripe_coll.c);
 * - nonblocking: pstripe_iread_list/iwrite_list under MPI generalized
 *   requests (ad_pstripe_aio.c); nonblocking collectives take the same
 *   path, each process for its own regions, when the blocking call would
 *   not aggregate (ad_pstripe_aio.c, the test in ad_pstripe_coll.c).
 *
 * Shared file pointers (write_shared, the ordered calls, MPI_MODE_SEQUENTIAL)
 * are counters at the file's metadata owner (ad_pstripe_sharedfp.c). Atomic mode and ROMIO's data-sieving path use a
 * whole-file lock built on MPI one-sided communication among the processes
 * that opened the file together (ad_pstripe_lock.c).
 */
#ifndef AD_PSTRIPE_H_INCLUDED
#define AD_PSTRIPE_H_INCLUDED

#include "adio.h"
#include <pthread.h>
#include <sys/uio.h>
#include <string.h>
#include "pstripe.h"
#include "ad_pstripe_aggregate.h"
#include "ad_pstripe_sync.h"

/* Hints of our own (besides striping_factor, striping_unit, start_iodevice). */
#define ADIOI_PSTRIPE_HINT_BUFFER_SIZE  "romio_pstripe_buffer_size"
#define ADIOI_PSTRIPE_HINT_BUFFER_COUNT "romio_pstripe_buffer_count"
#define ADIOI_PSTRIPE_HINT_MAX_REGIONS  "romio_pstripe_max_regions"
#define ADIOI_PSTRIPE_HINT_LISTIO_READ  "romio_pstripe_listio_read"
#define ADIOI_PSTRIPE_HINT_LISTIO_WRITE "romio_pstripe_listio_write"
#define ADIOI_PSTRIPE_HINT_WRITE_BEHIND "romio_pstripe_write_behind"
#define ADIOI_PSTRIPE_HINT_WB_SIZE      "romio_pstripe_wb_buffer_size"
#define ADIOI_PSTRIPE_HINT_READ_CACHE   "romio_pstripe_read_cache"
#define ADIOI_PSTRIPE_HINT_RC_SIZE      "romio_pstripe_rc_size"
#define ADIOI_PSTRIPE_HINT_RC_BLOCK     "romio_pstripe_rc_block_size"

/* Largest striping_unit a hint can ask for (ROMIO keeps it in an int); a
 * larger one is lowered to it (ad_pstripe_hints.c). */
#define ADIOI_PSTRIPE_UNIT_MAX (1LL << 30)

/* Their defaults (ADIOI_PSTRIPE_fs_alloc). */
#define ADIOI_PSTRIPE_WB_SIZE_DEFAULT  (2 << 20)
#define ADIOI_PSTRIPE_RC_SIZE_DEFAULT  (4 << 20)
#define ADIOI_PSTRIPE_RC_BLOCK_DEFAULT (64 << 10)
/* the smallest cb_buffer_size taken (ad_pstripe_hints.c, raise_cb_buffer) */
#define ADIOI_PSTRIPE_CB_MIN (64 << 10)

/* Connection tunables a file can override (index into ADIOI_PSTRIPE_fs.opt). */
enum {
    ADIOI_PSTRIPE_OPT_BUFFER_SIZE = 0,
    ADIOI_PSTRIPE_OPT_BUFFER_COUNT,
    ADIOI_PSTRIPE_OPT_MAX_REGIONS,
    ADIOI_PSTRIPE_NOPTS
};

/* Per-file state, in fd->fs_ptr. It is allocated by the first SetInfo of
 * MPI_File_open (before the open itself), so that hints can be checked
 * and kept before the file exists. */
typedef struct ADIOI_PSTRIPE_fs_s {
    pstripe_file_t *file;
    char *path;                 /* normalized pstripe path ("/a/b") */
    pstripe_layout_t layout;    /* layout of the open file */
    pstripe_layout_t create_layout;     /* from hints, used if we create it */
    long long opt[ADIOI_PSTRIPE_NOPTS]; /* per-file tunables; 0: connection's */
    int listio_read;            /* ADIOI_HINT_ENABLE or ADIOI_HINT_DISABLE */
    int listio_write;
    int pending_error;          /* hint error found while opening */
    int setinfo_error;          /* what the last SetInfo returned (set_view
                                 * drops it: Reset_shared_fp returns it) */
    int view_flush_error;       /* set_view's flush before its first
                                 * collective step (Set_view_begin; returned
                                 * by Reset_shared_fp too) */
    int last_status;            /* status of the last pstripe_open */
    int all_open;               /* every process of fd->comm opened it */
    uint64_t sfp_instance;      /* shared file pointer of this open (0: none) */
    uint32_t sfp_view;          /* set_views since the open (pstripe_sfp_set) */
    int sfp_lost;               /* a fetch-and-add found it lost (the server restarted)
                                 * and no one has set it since */
    int sfp_lost_any;           /* sfp_lost of any process, at the last hint agreement */
    int cb_given;               /* the hints named cb_nodes or cb_config_list */
    char *coll_buf[3];          /* collective I/O buffers (ad_pstripe_twophase.c) */
    size_t coll_size[3];
    MPI_Win lock_win;           /* whole-file lock (ad_pstripe_lock.c) */
    void *lock_base;
    int lock_depth;
    /* write-behind and read cache (ad_pstripe_cache.c: the library's) */
    int write_behind;           /* ADIOI_HINT_ENABLE or ADIOI_HINT_DISABLE */
    long long wb_size;          /* buffer size in bytes */
    pstripe_wbuf_t *wb;         /* while open, unless read-only */
    int read_cache;
    long long rc_size, rc_block;        /* bytes */
    pstripe_rcache_t *rc;       /* while open, unless write-only */
    unsigned long epoch_seen;   /* ADIOI_PSTRIPE_Sync_after's count at the last read */
    int bypass;                 /* > 0: in a collective call, no caching */
    int coll_reads_apart;       /* collective reads whose ranges were apart, in a row
                                 * (ad_pstripe_coll.c) */
    int at_shared_fp;           /* the next access is at the shared pointer: written through */
    int sfp_error;              /* a failed Get_shared_fp's error, for the access ROMIO
                                 * makes after it (ADIOI_PSTRIPE_Sfp_failed_access) */
    pstripe_region_t *spare_regions;    /* an access's region array kept for the next one */
    size_t spare_cap;
} ADIOI_PSTRIPE_fs;

/* One access, flattened: file regions in view order, memory as iovecs.
 * A view whose filetype is one strided run (a vector, a subarray's rows)
 * gives runs and no region array: the library takes runs
 * (pstripe_write_runs), and whoever needs the regions asks for them
 * (ADIOI_PSTRIPE_Access_regions). */
typedef struct ADIOI_PSTRIPE_access_s {
    pstripe_region_t *regions;  /* NULL while the access is runs only */
    size_t nregions;            /* regions of the access, in either form */
    size_t regions_cap;         /* of regions when it is an array of its own */
    pstripe_run_t *runs;        /* or NULL */
    size_t nruns, runs_cap;
    struct iovec *iov;
    size_t niov;
    ADIO_Offset total;          /* bytes accessed */
    ADIO_Offset start;          /* lowest file offset accessed */
    ADIO_Offset end;            /* one past the last byte of the last region */
    ADIO_Offset hi;             /* one past the highest byte accessed (end, unless a
                                 * filetype's block reaches past later ones) */
    pstripe_region_t one_region;        /* storage when there is one region */
    struct iovec one_iov;       /* storage when memory is contiguous */
} ADIOI_PSTRIPE_access;

/* Do our list I/O paths serve this direction? (romio_pstripe_listio_read
 * and _write; when disabled, ROMIO's generic code runs over our contiguous
 * calls, for comparison.) */
static inline int ADIOI_PSTRIPE_Listio(ADIO_File fd, int is_write)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    return (is_write ? ps->listio_write : ps->listio_read) != ADIOI_HINT_DISABLE;
}

/* ad_pstripe_common.c */
extern pstripe_fs_t *ADIOI_PSTRIPE_fs_handle;
void ADIOI_PSTRIPE_Init(int *error_code);
int ADIOI_PSTRIPE_err(const char *myname, const char *what, const char *filename,
                      int line, int status, const char *detail);
char *ADIOI_PSTRIPE_Path(const char *filename);
ADIOI_PSTRIPE_fs *ADIOI_PSTRIPE_fs_alloc(void);
void ADIOI_PSTRIPE_fs_free(ADIOI_PSTRIPE_fs * ps);
void ADIOI_PSTRIPE_Apply_options(ADIO_File fd);
long long ADIOI_PSTRIPE_Option_value(ADIO_File fd, int opt);
void ADIOI_PSTRIPE_file_opened(int delta);

/* ad_pstripe_cache.c */
int ADIOI_PSTRIPE_Cache_write(ADIO_File fd, ADIOI_PSTRIPE_access * acc, int *error_code);
int ADIOI_PSTRIPE_Cache_read(ADIO_File fd, ADIOI_PSTRIPE_access * acc, uint64_t * nread,
                             int *error_code);
int ADIOI_PSTRIPE_Cache_flush(ADIO_File fd, int drop);
int ADIOI_PSTRIPE_Cache_sync(ADIO_File fd);
void ADIOI_PSTRIPE_Cache_drop(ADIOI_PSTRIPE_fs * ps);
void ADIOI_PSTRIPE_Cache_setup(ADIO_File fd);
void ADIOI_PSTRIPE_Cache_release(ADIOI_PSTRIPE_fs * ps);

/* ad_pstripe_common.c */
void *ADIOI_PSTRIPE_Buf_alloc(size_t size);
/* The driver's own barrier, waited for as ADIOI_PSTRIPE_Wait_collective
 * (ad_pstripe_sync.h) waits; its allreduce and allgather (and ROMIO's
 * info check's allreduce), so where ADIOI_PSTRIPE_Wait_politely says
 * (ADIOI_PSTRIPE_Wait_started). All of them start the nonblocking form on
 * every process: MPI does not match it with the blocking one. */
int ADIOI_PSTRIPE_Barrier(MPI_Comm comm);
int ADIOI_PSTRIPE_Allreduce(const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int ADIOI_PSTRIPE_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
/* Two-phase I/O's exchanges: MPICH's waits, but yielding the CPU between
 * tests where ADIOI_PSTRIPE_Wait_politely says (ad_pstripe_common.c). */
int ADIOI_PSTRIPE_Waitall_yielding(int n, MPI_Request * reqs, MPI_Status * statuses);
int ADIOI_PSTRIPE_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int ADIOI_PSTRIPE_Alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls,
                            MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                            const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm);

/* ad_pstripe_coll.c */
int ADIOI_PSTRIPE_Coll_aggregates(ADIO_File fd, const void *buf, int count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  int is_write);

/* ad_pstripe_twophase.c */
void ADIOI_PSTRIPE_Two_phase(ADIO_File fd, ADIOI_PSTRIPE_access * acc,
                             const ADIOI_PSTRIPE_range * ranges, int is_write, int *error_code);

/* ad_pstripe_fcntl.c */
int ADIOI_PSTRIPE_Bcast_status(ADIO_File fd, int root, int status, const char *myname,
                               const char *what, int line, const char *root_detail);

/* ad_pstripe_hints.c */
void ADIOI_PSTRIPE_Set_layout_hints(ADIO_File fd);
void ADIOI_PSTRIPE_Fit_layout(ADIOI_PSTRIPE_fs * ps);

/* ad_pstripe_io_list.c */
void ADIOI_PSTRIPE_Access_build(ADIO_File fd, const void *buf, int count,
                                MPI_Datatype datatype, int file_ptr_type,
                                ADIO_Offset offset, ADIOI_PSTRIPE_access * acc,
                                int *error_code);
void ADIOI_PSTRIPE_Access_regions(ADIO_File fd, ADIOI_PSTRIPE_access * acc);
void ADIOI_PSTRIPE_View_runs_end(void);
void ADIOI_PSTRIPE_Access_free(ADIO_File fd, ADIOI_PSTRIPE_access * acc);
int ADIOI_PSTRIPE_Access_io(ADIO_File fd, ADIOI_PSTRIPE_access * acc, int is_write,
                            uint64_t * nbytes);
void ADIOI_PSTRIPE_Strided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                           int is_write, int *error_code);

/* ad_pstripe_sharedfp.c (the Get/Set/Get_ordered functions are called by
 * ROMIO's generic code through adio/patch-romio.sh) */
void ADIOI_PSTRIPE_Sharedfp_open(ADIO_File fd);
int ADIOI_PSTRIPE_Sharedfp_close(ADIO_File fd);
void ADIOI_PSTRIPE_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,
                                 int *error_code);
void ADIOI_PSTRIPE_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code);
void ADIOI_PSTRIPE_Reset_shared_fp(ADIO_File fd, int *error_code);
void ADIOI_PSTRIPE_Get_ordered_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,
                                  int *error_code);
/* The error of an access at the pointer a failed Get_shared_fp returned
 * (offset: ADIO_EXPLICIT_OFFSET's, in bytes, or in etypes if in_etypes),
 * else MPI_SUCCESS. */
int ADIOI_PSTRIPE_Sfp_failed_access(ADIO_File fd, ADIO_Offset offset, int in_etypes);

/* ad_pstripe_lock.c */
void ADIOI_PSTRIPE_Lock_setup(ADIO_File fd, int *error_code);
void ADIOI_PSTRIPE_Lock_free(ADIO_File fd);
int ADIOI_PSTRIPE_Lock_needed(ADIO_File fd);
int ADIOI_PSTRIPE_Lock(ADIO_File fd, int exclusive);
int ADIOI_PSTRIPE_Unlock(ADIO_File fd);

/* the operations */
void ADIOI_PSTRIPE_Open(ADIO_File fd, int *error_code);
void ADIOI_PSTRIPE_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code);
void ADIOI_PSTRIPE_Close(ADIO_File fd, int *error_code);
void ADIOI_PSTRIPE_Delete(const char *filename, int *error_code);
void ADIOI_PSTRIPE_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code);
void ADIOI_PSTRIPE_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
void ADIOI_PSTRIPE_Flush(ADIO_File fd, int *error_code);
int ADIOI_PSTRIPE_Feature(ADIO_File fd, int flag);
void ADIOI_PSTRIPE_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
void ADIOI_PSTRIPE_Set_view_begin(ADIO_File fd);
int ADIOI_PSTRIPE_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                          ADIO_Offset len);

/* The data operations, declared by their signatures (those of the fields
 * of ADIOI_Fns in ROMIO's adioi.h). */
typedef void ADIOI_PSTRIPE_read_op(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                   int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                   int *error_code);
typedef void ADIOI_PSTRIPE_iread_op(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                    int file_ptr_type, ADIO_Offset offset,
                                    ADIO_Request * request, int *error_code);
typedef void ADIOI_PSTRIPE_write_op(ADIO_File fd, const void *buf, int count,
                                    MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                    ADIO_Status * status, int *error_code);
typedef void ADIOI_PSTRIPE_iwrite_op(ADIO_File fd, const void *buf, int count,
                                     MPI_Datatype datatype, int file_ptr_type,
                                     ADIO_Offset offset, ADIO_Request * request, int *error_code);
ADIOI_PSTRIPE_read_op ADIOI_PSTRIPE_ReadContig, ADIOI_PSTRIPE_ReadStrided,
    ADIOI_PSTRIPE_ReadStridedColl;
ADIOI_PSTRIPE_write_op ADIOI_PSTRIPE_WriteContig, ADIOI_PSTRIPE_WriteStrided,
    ADIOI_PSTRIPE_WriteStridedColl;
ADIOI_PSTRIPE_iread_op ADIOI_PSTRIPE_IreadContig, ADIOI_PSTRIPE_IreadStrided,
    ADIOI_PSTRIPE_IreadStridedColl;
ADIOI_PSTRIPE_iwrite_op ADIOI_PSTRIPE_IwriteContig, ADIOI_PSTRIPE_IwriteStrided,
    ADIOI_PSTRIPE_IwriteStridedColl;

#endif /* AD_PSTRIPE_H_INCLUDED */

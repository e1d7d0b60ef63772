/*
 * ps_ompio.h: what the pstripe fs, fbtl and sharedfp components of Open
 * MPI's OMPIO share (adio/ompio/README explains the components).
 *
 * The three components are separate DSOs that Open MPI loads at run time.
 * They share the client through the shared libpstripe (one client per
 * process) and share a file through ompio_file_t::f_fs_ptr, which the fs
 * component sets to a ps_ompio_file_t when it opens a pstripe: file. Each
 * DSO compiles ps_ompio_common.c into itself; every symbol but the
 * component structure is hidden (-fvisibility=hidden), and the fs
 * component's pstripe_ompio_independent, pstripe_ompio_coll_result
 * (ps_ompio_coll.c) and pstripe_ompio_set_info (ps_ompio_hints.c), which
 * libpstripe-ompi-hooks.so looks up.
 */
#ifndef PS_OMPIO_H
#define PS_OMPIO_H

#include "ompi_config.h"
#include "mpi.h"
#include "ompi/mca/common/ompio/common_ompio.h"
#include "opal/util/info.h"
#include "opal/util/output.h"

#include <pstripe.h>

/* OMPIO has no file-system type for pstripe (enum ompio_fs_type ends at
 * GPFS = 6); the fs component marks its files with this value, and the fbtl
 * and sharedfp components claim exactly the files that carry it. */
#define PS_OMPIO_FSTYPE ((enum ompio_fs_type)0x70)

#define PS_OMPIO_PREFIX     "pstripe:"
#define PS_OMPIO_PREFIX_LEN 8

/* Longest reason of a failure one process sends the others. */
#define PS_OMPIO_WHY_MAX 256

/* Default size of a file's write-behind buffer (romio_pstripe_wb_buffer_size),
 * as the MPICH driver's. */
#define PS_OMPIO_WB_SIZE (2 << 20)
/* ... and of its read cache and the cache's blocks (romio_pstripe_rc_size,
 * romio_pstripe_rc_block_size) */
#define PS_OMPIO_RC_SIZE  (4 << 20)
#define PS_OMPIO_RC_BLOCK (64 << 10)

/* The values of an enable / disable / automatic hint. */
enum { PS_OMPIO_ENABLE = 1, PS_OMPIO_DISABLE, PS_OMPIO_AUTOMATIC };

/* f_fs_ptr of a pstripe file */
typedef struct ps_ompio_file {
    pstripe_file_t *file;
    MPI_Win lock_win;   /* 1-byte window at rank 0 of lock_comm: the lock of
                           atomic mode (ps_ompio_lock); MPI_WIN_NULL for one
                           process, or if it could not be created */
    MPI_Comm lock_comm; /* duplicate of the file's communicator */
    int lock_failed;    /* the window could not be created */
    char lock_byte;
    int delete_on_close; /* MPI_MODE_DELETE_ON_CLOSE, done by our close */
    /* Write-behind buffer and read cache (the fs component sets them up at
     * open, the fbtl uses them): NULL when off, and always without the
     * preloaded libpstripe-ompi-hooks.so, whose pstripe_ompio_bypass (> 0
     * inside a collective or shared-pointer MPI-IO call: neither is used)
     * is kept. */
    pstripe_wbuf_t *wb;
    pstripe_rcache_t *rc;
    int rc_all; /* every process of the file has one (agreed at open and
                   at each MPI_File_set_info that remade the caches) */
    int (*bypass)(void);
    /* What the hints ask for (ps_ompio_hints.c; the same on every process:
     * agreed at open and at each MPI_File_set_info): write_behind and
     * read_cache PS_OMPIO_ENABLE, _DISABLE or _AUTOMATIC; the sizes in
     * bytes (the write-behind buffer takes writes of a quarter of wb_size
     * or less). romio_cb_read and romio_cb_write: PS_OMPIO_ENABLE (OMPIO
     * aggregates every blocking collective read / write), PS_OMPIO_DISABLE
     * (made independent), PS_OMPIO_AUTOMATIC (independent too:
     * ps_ompio_coll.c) */
    int write_behind, read_cache;
    size_t wb_size, rc_size, rc_block;
    int cb_read, cb_write;
    int listio_read, listio_write; /* the ROMIO driver's; shown, no effect */
    /* The first failed read or write of the fbtl not yet reported by a sync
     * or close: OMPIO 4.1's vulcan and dynamic fcoll print "fbtl_pwritev
     * failed" and return MPI_SUCCESS from the collective call, so the next
     * MPI_File_sync or MPI_File_close returns it (ps_ompio_deferred). */
    int failed_class;   /* MPI error class, MPI_SUCCESS when none */
    char failed_msg[384];
    /* Where a failure that Open MPI drops goes: the preloaded hooks'
     * pstripe_ompio_dropped, whose MPI call returns it (NULL without
     * them: only printed, and kept as above); it also tells whether the
     * thread's MPI call failed already. */
    int (*dropped)(int code, int *note);
} ps_ompio_file_t;

/* 0 if the Open MPI this process runs is the major.minor we were built for;
 * else prints why (naming the component) and returns OMPI_ERR_NOT_SUPPORTED.
 * Called from each component's register function, so a mismatched component
 * is never used. */
int ps_ompio_check_version(const char *component);

/* An MPI error class for a pstripe status. */
int ps_ompio_mpi_error(ps_status_t status);

/* An MPI error code of class mpi_class whose MPI_Error_string is msg
 * (the caller's reason, "pstripe: ..."): one code per class, added with
 * MPI_Add_error_code, its string replaced by the latest failure. Falls back
 * to the bare class if MPI cannot add codes. MPI_SUCCESS stays that. */
int ps_ompio_code(int mpi_class, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The reason of the calling thread's last failed pstripe call: the
 * client's detailed message, else status's text. */
const char *ps_ompio_reason(ps_status_t status);

/* An error code of mpi_class for a failed call: "pstripe: WHAT PATH: why",
 * or "pstripe: why" if why names PATH already. */
int ps_ompio_fail_why(int mpi_class, const char *what, const char *path, const char *why);

/* ps_ompio_fail_why with the class and reason of a failed pstripe call. */
int ps_ompio_fail(const char *what, const char *path, ps_status_t status);

/* Print a failed pstripe call with the client's detailed message (where
 * OMPIO drops the error code: blocking independent reads and writes). */
void ps_ompio_report(const char *what, const char *path, ps_status_t status);

/* Keep the first failure of a read or write of pf (see failed_class):
 * 1 if this one is kept, 0 if an earlier one is. */
int ps_ompio_note_failure(ps_ompio_file_t *pf, const char *what, const char *path,
                          ps_status_t status, int mpi_class);

/* The error code of pf's kept failure (then forgotten), or MPI_SUCCESS. */
int ps_ompio_deferred(ps_ompio_file_t *pf);

/* The hints of one open or MPI_File_set_info (ps_ompio_hints.c, in the fs
 * component), as given: a value that does not parse is not given. */
#define PS_OMPIO_NHINTS 15
typedef struct {
    int present[PS_OMPIO_NHINTS];
    long long val[PS_OMPIO_NHINTS];
} ps_ompio_hints_t;

/* Our hints in info (NULL, or Open MPI's null info: none), and at_open
 * beneath them those of ROMIO's hints file ($ROMIO_HINTS), a value that
 * does not parse left out with a warning; then checked to be the same on
 * every process of comm (collective): MPI_SUCCESS, or MPI_ERR_NOT_SAME
 * naming the first hint that differs (call: the MPI call, for the message). */
int ps_ompio_hints_get(MPI_Comm comm, opal_info_t *info, ps_ompio_hints_t *hv, const char *call,
                       int at_open);

/* The layout the hints ask for (0 / -1: the default), as the ROMIO driver
 * reads them; pstripe_layout_fit fits it to the cluster before a create. */
pstripe_layout_t ps_ompio_hints_layout(const ps_ompio_hints_t *hv);

/* At open, once every process has the file open: the per-file tunables
 * the hints give, and OMPIO's stripe fields from the file's layout. */
int ps_ompio_hints_open_file(ompio_file_t *fh, ps_ompio_file_t *pf, const ps_ompio_hints_t *hv);

/* At open, then: the write-behind buffer, the read cache and the
 * collective switches as the hints ask (collective: rc_all), and the
 * effective values (these, the layout, the tunables) into info. */
void ps_ompio_hints_open_caches(ompio_file_t *fh, opal_info_t *info, ps_ompio_file_t *pf,
                                const ps_ompio_hints_t *hv);

/* Free pf's write-behind buffer (its bytes sent first; a failure printed
 * and kept for the next sync or close) and its read cache. */
void ps_ompio_caches_free(ompio_file_t *fh, ps_ompio_file_t *pf);

/* The ompio_file_t of a program's file if it is a pstripe file open
 * through OMPIO, else NULL (ps_ompio_coll.c, in the fs component). */
ompio_file_t *ps_ompio_fs_file(MPI_File file);

/* The io module of the program's file whose OMPIO part is fh (a copy per
 * file, whose calls a component may replace), or NULL for a file another
 * component opened for itself. */
struct mca_io_base_module_2_0_0_t *ps_ompio_io_module(ompio_file_t *fh);

/* The pstripe path of a "pstripe:/path" name, or NULL if it is not one. */
const char *ps_ompio_path(const char *filename);

/* Atomic mode: whole-file mutex over the processes that opened the file
 * together (exclusive for writers, shared for readers). */
int ps_ompio_lock(ps_ompio_file_t *pf, int exclusive);
void ps_ompio_unlock(ps_ompio_file_t *pf);

#endif

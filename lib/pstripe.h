/*
 * pstripe.h: the pstripe client library (libpstripe). No MPI.
 *
 * A pstripe_fs_t is a connection to a cluster of storage servers. It owns a
 * progress thread that drives all network traffic, so nonblocking operations
 * progress while the caller computes, and every function here is thread-safe.
 *
 * Every function returns PS_OK (0) or a negative ps_status_t (ps_status.h);
 * pstripe_strerror() describes it and pstripe_last_error() gives the detailed
 * message of the calling thread's last failure ("server 127.0.0.1:41002 did
 * not answer within 30s"). Outputs are set only on success.
 *
 * Paths are absolute within the pstripe namespace ("/dir/file"); they are
 * normalized ("//", ".", ".." resolved) before use. A path that names no
 * file (relative, or the root "/") fails with PS_ERR_BAD_NAME, a longer one
 * than PS_PATH_MAX with PS_ERR_NAME_TOO_LONG.
 *
 * Failures: a server that does not answer a request within the `timeout`
 * tunable fails it with PS_ERR_TIMEOUT, a lost connection with PS_ERR_CONN
 * (every request then in flight to that server fails the same way). The next
 * call that needs the server connects to it again (HELLO, bounded by
 * `connect_timeout`), so a restarted server is used again without
 * reconnecting the pstripe_fs_t; a call made before the loss is noticed may
 * still fail once with PS_ERR_CONN.
 */
#ifndef PSTRIPE_H
#define PSTRIPE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ps_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pstripe_fs pstripe_fs_t;
typedef struct pstripe_file pstripe_file_t;
typedef struct pstripe_request pstripe_request_t;

/* Layout of a file. Zero fields mean "the configured default". */
typedef struct pstripe_layout {
    uint64_t stripe_size;  /* bytes per stripe (0: config stripe_size) */
    uint32_t stripe_count; /* servers to stripe over (0: config stripe_count) */
    int32_t first_server;  /* server of stripe 0; -1: chosen by hashing the path */
} pstripe_layout_t;

typedef struct pstripe_stat {
    uint64_t size;   /* bytes, derived from the objects on the servers */
    uint64_t blocks; /* bytes allocated on disk, all servers */
    uint64_t file_id;
    pstripe_layout_t layout;
    uint32_t mode;     /* permission bits */
    uint64_t ctime_ns; /* creation, ns since the epoch */
    uint64_t mtime_ns; /* last data modification (max over objects) */
    uint32_t unreachable; /* pstripe_list: objects whose server did not answer (size and
                             blocks count only the others) */
    uint32_t uid;         /* owner (0 for files made before owners were recorded) */
    uint32_t gid;         /* group */
} pstripe_stat_t;

typedef struct pstripe_statfs {
    uint64_t total_bytes; /* sum over the servers' file systems, each counted once */
    uint64_t free_bytes;
    uint64_t avail_bytes;
    uint64_t files; /* paths in the namespace */
    uint32_t nservers;
    uint32_t nfilesystems; /* distinct file systems holding the servers' data */
} pstripe_statfs_t;

/* A file region: bytes [offset, offset + length) of the file. */
typedef struct pstripe_region {
    uint64_t offset;
    uint64_t length;
} pstripe_region_t;

/* A strided run: count regions of length bytes, region c at offset +
 * c * stride (stride >= length when count > 1). The regions of a vector
 * view, a subarray's rows: one run instead of one region each. */
typedef struct pstripe_run {
    uint64_t offset;
    uint64_t length;
    uint64_t stride;
    uint64_t count;
} pstripe_run_t;

/* Open flags. Exactly one of RDONLY, WRONLY, RDWR. */
#define PSTRIPE_RDONLY 0x01
#define PSTRIPE_WRONLY 0x02
#define PSTRIPE_RDWR   0x03
#define PSTRIPE_CREAT  0x10 /* create if missing, with the given layout */
#define PSTRIPE_EXCL   0x20 /* with CREAT: fail with PS_ERR_EXISTS if it exists */
#define PSTRIPE_TRUNC  0x40 /* truncate to 0 on open (needs write access) */
/* Writing a file opened RDONLY, reading one opened WRONLY, or truncating one
 * opened RDONLY fails with PS_ERR_ACCESS. */

/* --- connection ------------------------------------------------------------- */

/*
 * Connect to the servers of a config file. config_path NULL means
 * $PSTRIPE_CONFIG, else $HOME/.config/pstripe/client.conf, else
 * /etc/pstripe/client.conf. Settings come from the file's [client] section,
 * then PSTRIPE_* environment variables. PS_ERR_NOT_CONFIGURED if no file or
 * no servers (with config_path NULL and no file at the default places,
 * PSTRIPE_SERVERS alone is enough); a config_path or $PSTRIPE_CONFIG that
 * names a missing file is PS_ERR_NOT_CONFIGURED. PS_ERR_CONN / PS_ERR_TIMEOUT
 * if a server cannot be reached (every server is contacted).
 */
ps_status_t pstripe_connect(const char *config_path, pstripe_fs_t **fs_p);

/*
 * Connect to explicit servers ("host:port,host:port,..."), with optional
 * "name=value" settings (NULL-terminated array, may be NULL) applied after
 * the environment.
 */
ps_status_t pstripe_connect_servers(const char *servers, const char *const *settings,
                                    pstripe_fs_t **fs_p);

/*
 * Open the endpoints to every worker of each server that has at most
 * max_workers workers, now, as the ops that need them would (a connection
 * has worker 0's; each other worker's, and with shared memory worker 0's
 * too, is made for the first op routed there, and a file uses a few of a
 * server's workers). A program that connects ahead of its first file
 * operation takes them off that operation too. A server not connected
 * now is left to the ops that need it. Fails only if every server it
 * tried failed.
 */
ps_status_t pstripe_connect_workers(pstripe_fs_t *fs, uint32_t max_workers);

/* Close every connection and stop the progress thread. Open files must be
 * closed and nonblocking requests waited for first. */
void pstripe_disconnect(pstripe_fs_t *fs);

/* Change a tunable of this connection (timeout, stripe_size, stripe_count,
 * log_level...; buffer_size, buffer_count, max_regions and bounce_threshold
 * are the defaults of files opened later, see pstripe_file_set_option).
 * PS_ERR_INVALID with a message in pstripe_last_error() for an unknown name
 * or bad value. */
ps_status_t pstripe_set_option(pstripe_fs_t *fs, const char *name, const char *value);
/* Check a tunable's name and value without a connection (what
 * pstripe_set_option and pstripe_connect_servers's settings would say of
 * it): PS_ERR_INVALID with the reason in pstripe_last_error(). */
ps_status_t pstripe_check_option(const char *name, const char *value);
/* Current value of a tunable, formatted with units ("4m"). */
ps_status_t pstripe_get_option(pstripe_fs_t *fs, const char *name, char *buf, size_t len);
/* Print the client's tunables with their docs (config-file syntax); with fs
 * NULL, the defaults. stdio_file NULL means stdout. */
void pstripe_print_config(pstripe_fs_t *fs, void *stdio_file);

int pstripe_num_servers(pstripe_fs_t *fs);
/* "host:port" of server i (0-based, in config order). */
const char *pstripe_server_address(pstripe_fs_t *fs, int i);
/* 1 if server i's address (resolved at connect) is one of this host's
 * (loopback or an interface's), else 0 (also for no such server). */
int pstripe_server_is_local(pstripe_fs_t *fs, int i);

/* --- namespace ---------------------------------------------------------------- */

/* Open (and with PSTRIPE_CREAT create) a file. layout may be NULL. */
ps_status_t pstripe_open(pstripe_fs_t *fs, const char *path, int flags, uint32_t mode,
                         const pstripe_layout_t *layout, pstripe_file_t **file_p);
/* Close a file (does not sync). Its requests still in flight complete and
 * may be waited for after. Fails (and closes all the same) when a write
 * of this handle that a server answered before its disk failed there since
 * the last pstripe_fsync or pstripe_check_writes, or when such a server
 * restarted or cannot be reached (those bytes may be lost). Writes still
 * in flight at the close are not asked about: wait for them first. */
ps_status_t pstripe_close(pstripe_file_t *file);

ps_status_t pstripe_stat(pstripe_fs_t *fs, const char *path, pstripe_stat_t *st);
ps_status_t pstripe_fstat(pstripe_file_t *file, pstripe_stat_t *st);
/* Remove a path and its objects on every server. Handles that still have
 * the file open (in this or another process) then fail with PS_ERR_STALE
 * in their reads, writes, truncates and fsync (for the servers' cap_life
 * and a slack for clock skew; after it with PS_ERR_ACCESS); pstripe_fstat
 * reports no data.
 * The same holds for the file a rename replaces. */
ps_status_t pstripe_unlink(pstripe_fs_t *fs, const char *path);
/* Rename a path, replacing the file `to` named (whose objects are then
 * removed). The file never loses its name: within one metadata server the
 * rename is one transaction (after a crash either name is as before or the
 * rename is complete); between two it is three flushed steps, during which
 * the file shows under both names, and a crash between them leaves the old
 * name "being renamed" (PS_ERR_BUSY for removal, rename and chmod) until
 * the next of these settles it, the servers' move_life after the rename
 * began (doc/design.md, "Renaming"). A name onto itself: PS_OK if it
 * exists. */
ps_status_t pstripe_rename(pstripe_fs_t *fs, const char *from, const char *to);
/* Index (in the configured server list) of the server that holds path's
 * metadata. */
ps_status_t pstripe_path_server(pstripe_fs_t *fs, const char *path, uint32_t *server);
/* Set the size (shrink or extend with zeros). */
ps_status_t pstripe_truncate(pstripe_fs_t *fs, const char *path, uint64_t size);
ps_status_t pstripe_ftruncate(pstripe_file_t *file, uint64_t size);
/* Reserve disk space for the first size bytes (the servers' fallocate):
 * the size grows to size if smaller, data is never touched, so writes of
 * other clients in flight keep their bytes (MPI_File_preallocate). */
ps_status_t pstripe_preallocate(pstripe_file_t *file, uint64_t size);
/* Set the permission bits (<= 0777): the owner or root only
 * (PS_ERR_ACCESS otherwise). */
ps_status_t pstripe_chmod(pstripe_fs_t *fs, const char *path, uint32_t mode);
/* Set the owner (uid; root only) and/or the group (gid; the owner may set
 * a group it is in, as the servers' user database says, root any); -1
 * leaves one unchanged. */
ps_status_t pstripe_chown(pstripe_fs_t *fs, const char *path, int64_t uid, int64_t gid);
/* Make the file's data durable on every server it is striped over, and its
 * metadata on its owner; fails as pstripe_close does. */
ps_status_t pstripe_fsync(pstripe_file_t *file);
/* What pstripe_close asks, without closing: for the handles of other
 * processes whose writes one pstripe_fsync made durable (MPI_File_sync). */
ps_status_t pstripe_check_writes(pstripe_file_t *file);
/* Call fn for every path that starts with prefix, in path order per server
 * and merged; fn returning nonzero (a ps_status_t, or a value of the
 * caller's) stops the listing and is returned as is. A server that cannot
 * be reached does not stop it: its paths are missing, files with objects on
 * it come with st->unreachable > 0, and the listing then returns
 * PS_ERR_CONN (or PS_ERR_TIMEOUT) with a message naming those servers. */
typedef int (*pstripe_list_fn)(const char *path, const pstripe_stat_t *st, void *arg);
ps_status_t pstripe_list(pstripe_fs_t *fs, const char *prefix, pstripe_list_fn fn, void *arg);
ps_status_t pstripe_statfs(pstripe_fs_t *fs, pstripe_statfs_t *st);

/* An orphaned object: one of a file that no path names any more (an rm
 * whose client died between the name and the objects, or that found a data
 * server down). */
typedef struct pstripe_orphan {
    uint64_t file_id;
    uint32_t server; /* index in the configuration's server list */
    uint64_t size;   /* the object's size */
    uint64_t blocks; /* bytes it holds on disk */
} pstripe_orphan_t;
/* Find every orphaned object on the servers and, unless dry_run, remove
 * it, calling fn (may be NULL) for each one removed (dry_run: found); fn
 * returning nonzero stops the collection and is returned. Root's alone
 * (PS_ERR_ACCESS for other users, unless the servers run with auth =
 * none). Nothing is removed unless every server knows its place in the
 * cluster (server_index, cluster_size: PS_ERR_INVALID otherwise), listed
 * its objects and answered which files still have a name (lib/psc_gc.c
 * says why that is safe beside running programs). */
typedef int (*pstripe_gc_fn)(const pstripe_orphan_t *orphan, void *arg);
ps_status_t pstripe_gc(pstripe_fs_t *fs, int dry_run, pstripe_gc_fn fn, void *arg);

/* Layout of an open file. */
ps_status_t pstripe_file_layout(pstripe_file_t *file, pstripe_layout_t *layout);
/* Fit a layout asked for by MPI-IO hints to the cluster before a create,
 * never failing (each change logged at warn level, naming path): a
 * stripe_size outside [512 B, PSTRIPE_STRIPE_SIZE_FIT_MAX] is rounded into
 * it (0 stays the default), a stripe_count above the cluster's servers is
 * clamped to them, a first_server outside the cluster becomes -1. Asks the
 * servers (pstripe_statfs) only when stripe_count > 1 or first_server > 0;
 * if that fails the layout is left for the create to refuse. */
#define PSTRIPE_STRIPE_SIZE_FIT_MAX (1ull << 30)
void pstripe_layout_fit(pstripe_fs_t *fs, const char *path, pstripe_layout_t *layout);
/* *server = the server index of stripe target k (PS_ERR_INVALID for k at or
 * past the stripe count). */
ps_status_t pstripe_file_server(pstripe_file_t *file, uint32_t k, uint32_t *server);

/* --- shared file pointers ------------------------------------------------------ */
/* A 64-bit counter kept in memory by the file's metadata owner, named by the
 * file and an instance: a random nonzero id chosen by one process at a
 * collective open and shared with the others, so two independent opens of a
 * file have independent counters and a reopen starts at 0. Only
 * pstripe_sfp_set makes a counter (set it to 0 at the open, before any
 * process adds): a fetch-and-add of an unknown counter fails with
 * PS_ERR_NO_ENTRY (the server restarted since, or dropped it unused), never
 * starting again at 0. Values stay <= INT64_MAX. Errors: PS_ERR_TOO_BIG for an
 * add past INT64_MAX or a value above it, or when the server's table of
 * counters is full (it keeps a bounded number; counters unused for an hour
 * may be dropped when it is full); PS_ERR_INVALID for a NULL file or
 * instance 0; connection errors as for other calls.
 * `view` counts the resets to 0 that the openers agreed on without telling
 * the server (MPI_File_set_view, collective): 0 at the open, one more at
 * each. A counter reached with a newer view than its last starts again at
 * 0; an older view fails with PS_ERR_INVALID. */
/* Atomically: *old_value = counter; counter += incr. */
ps_status_t pstripe_sfp_fetch_add(pstripe_file_t *file, uint64_t instance, uint32_t view,
                                  uint64_t incr, uint64_t *old_value);
/* counter = value. */
ps_status_t pstripe_sfp_set(pstripe_file_t *file, uint64_t instance, uint32_t view,
                            uint64_t value);
/* Forget the counter (at close; a later fetch-and-add fails, a set makes it again). */
ps_status_t pstripe_sfp_release(pstripe_file_t *file, uint64_t instance);

/* Per-file tunables: buffer_size, buffer_count, max_regions, bounce_threshold. A file starts with
 * the connection's values when opened; setting one changes only this file's later requests.
 * PS_ERR_INVALID (message in pstripe_last_error()) for another name or a bad value (same grammar
 * and ranges as the config table). Not to be called while a request of the file is being started
 * by another thread. */
ps_status_t pstripe_file_set_option(pstripe_file_t *file, const char *name, const char *value);
/* Current value of a per-file tunable, formatted with units ("1m"). */
ps_status_t pstripe_file_get_option(pstripe_file_t *file, const char *name, char *buf, size_t len);

/* --- data ------------------------------------------------------------------- */

/*
 * List I/O. Write the file regions, in order, from the memory described by
 * mem[0..nmem) (taken in order as one stream of bytes); the total memory
 * length must equal the total region length (else PS_ERR_INVALID). Regions
 * may be unsorted and may overlap (a later region wins). Regions are split by
 * stripe, packed per server into batches of at most buffer_size bytes and
 * max_regions regions, and up to buffer_count batches per server are in
 * flight at once (the file's tunables, as they are when the call starts). Returns when every byte
 * is acknowledged.
 */
ps_status_t pstripe_write_list(pstripe_file_t *file, const pstripe_region_t *regions,
                               size_t nregions, const struct iovec *mem, size_t nmem);
/*
 * The same with flags: PSTRIPE_WRITE_BEHIND says the caller does not wait
 * for the disk (a write-behind flush): the servers may acknowledge the
 * regions of short runs once they hold them in memory, in their write-back
 * stage, where other clients' reads see them; they reach the disk joined
 * with their neighbours' bytes or by age, and before pstripe_fsync
 * returns, which reports a failed write (as a local file system's page
 * cache does). Other bits: PS_ERR_INVALID.
 */
#define PSTRIPE_WRITE_BEHIND 0x1u
ps_status_t pstripe_write_list_flags(pstripe_file_t *file, const pstripe_region_t *regions,
                                     size_t nregions, const struct iovec *mem, size_t nmem,
                                     unsigned flags);
/*
 * Read the file regions into mem (as write_list). Bytes beyond the end of
 * the file read as zeros; *nread (may be NULL) is set to the number of
 * requested bytes that lie below the file's size.
 */
ps_status_t pstripe_read_list(pstripe_file_t *file, const pstripe_region_t *regions,
                              size_t nregions, const struct iovec *mem, size_t nmem,
                              uint64_t *nread);

/*
 * The same with the regions given as strided runs (regions in the order of
 * the runs, and of the regions in each run): no region array, and the
 * library cuts each run at stripe boundaries without walking its regions.
 */
ps_status_t pstripe_write_runs(pstripe_file_t *file, const pstripe_run_t *runs, size_t nruns,
                               const struct iovec *mem, size_t nmem);
ps_status_t pstripe_read_runs(pstripe_file_t *file, const pstripe_run_t *runs, size_t nruns,
                              const struct iovec *mem, size_t nmem, uint64_t *nread);
/* pstripe_write_runs with the flags of pstripe_write_list_flags. */
ps_status_t pstripe_write_runs_flags(pstripe_file_t *file, const pstripe_run_t *runs, size_t nruns,
                                     const struct iovec *mem, size_t nmem, unsigned flags);
/*
 * Runs built one region at a time: the region [offset, offset + length)
 * appended to runs[0..*nruns) (room for one more run): the last run takes
 * it when it is that run's next region (the same length, one stride on; a
 * second region sets the stride), a region right after a single one
 * joins it (one longer region), else a new run starts (*nruns + 1). A
 * region of length 0 is left out. The same bytes in the same order.
 */
void pstripe_runs_append(pstripe_run_t *runs, size_t *nruns, uint64_t offset, uint64_t length);
/* The regions of runs[0..nruns), in order, into regions (room for the sum
 * of the runs' counts). */
void pstripe_runs_regions(const pstripe_run_t *runs, size_t nruns, pstripe_region_t *regions);

/* Contiguous shorthands. */
ps_status_t pstripe_pwrite(pstripe_file_t *file, const void *buf, uint64_t len, uint64_t offset);
ps_status_t pstripe_pread(pstripe_file_t *file, void *buf, uint64_t len, uint64_t offset,
                          uint64_t *nread);

/*
 * Nonblocking list I/O: start the operation and return at once; the progress
 * thread moves it. The region and iovec arrays are copied; the memory they
 * point to must stay valid until completion.
 */
ps_status_t pstripe_iwrite_list(pstripe_file_t *file, const pstripe_region_t *regions,
                                size_t nregions, const struct iovec *mem, size_t nmem,
                                pstripe_request_t **req_p);
ps_status_t pstripe_iwrite_list_flags(pstripe_file_t *file, const pstripe_region_t *regions,
                                      size_t nregions, const struct iovec *mem, size_t nmem,
                                      unsigned flags, pstripe_request_t **req_p);
ps_status_t pstripe_iread_list(pstripe_file_t *file, const pstripe_region_t *regions,
                               size_t nregions, const struct iovec *mem, size_t nmem,
                               pstripe_request_t **req_p);
/* The same with the regions given as strided runs (as pstripe_write_runs). */
ps_status_t pstripe_iwrite_runs(pstripe_file_t *file, const pstripe_run_t *runs, size_t nruns,
                                const struct iovec *mem, size_t nmem, pstripe_request_t **req_p);
ps_status_t pstripe_iread_runs(pstripe_file_t *file, const pstripe_run_t *runs, size_t nruns,
                               const struct iovec *mem, size_t nmem, pstripe_request_t **req_p);
/* *done = 1 when complete (then pstripe_request_wait() does not block). */
ps_status_t pstripe_request_test(pstripe_request_t *req, int *done);
/* Wait for completion, free the request, return its status; *bytes (may be
 * NULL) = bytes transferred (for reads: below the file size). */
ps_status_t pstripe_request_wait(pstripe_request_t *req, uint64_t *bytes);

/*
 * Write-behind buffers: what an MPI-IO layer keeps of a file's small writes
 * between calls (MPI's consistency rules let a process hold its writes
 * until a sync, a close or a message to another process). A write of at
 * most a quarter of the buffer's size is copied in and the call returns;
 * the buffered regions go to the servers as one list write flagged
 * PSTRIPE_WRITE_BEHIND when the buffer fills (without waiting: a second
 * buffer of the same size fills meanwhile, and writes reach the servers in
 * order) and, waited for, when flushed. A failed send is returned by the
 * call that sent or waited for it and kept: pstripe_wbuf_sync returns it
 * once more (then forgets it), so that a program learns at its next sync
 * or close that a write was lost. Thread-safe; any thread may flush any
 * buffer (pstripe_wbuf_flush_all flushes every buffer of the process).
 * Atomic operations and reads of other processes do not see buffered
 * bytes: the caller decides what to buffer and when to flush. Flush, sync
 * and free take NULL for a file without a buffer (PS_OK).
 */
typedef struct pstripe_wbuf pstripe_wbuf_t;
ps_status_t pstripe_wbuf_create(pstripe_file_t *file, size_t size, pstripe_wbuf_t **wbuf);
/* Buffer a write (regions and memory as pstripe_write_list, checked as it
 * checks them: a file opened read-only is refused here, not at the flush):
 * *taken = 1. A larger one (more than a quarter of the buffer's bytes or regions) is
 * not taken (*taken = 0) and what is buffered is flushed first, so that the
 * caller's own write of it comes after every buffered one; so is one that
 * reaches near or past the servers' object limit (the caller's write then
 * fails in its own call, and the buffered writes are not lost with it). */
ps_status_t pstripe_wbuf_write(pstripe_wbuf_t *wbuf, const pstripe_region_t *regions,
                               size_t nregions, const struct iovec *mem, size_t nmem, int *taken);
/* Send what is buffered and wait for it (and for a send in flight). */
ps_status_t pstripe_wbuf_flush(pstripe_wbuf_t *wbuf);
/* Before a read from offset on: wait for a send in flight, and flush when
 * buffered bytes lie at or past offset (they may be read, or extend the
 * file over the read). */
ps_status_t pstripe_wbuf_flush_for_read(pstripe_wbuf_t *wbuf, uint64_t offset);
/* Flush; then the kept failure of an earlier send, if any (once). */
ps_status_t pstripe_wbuf_sync(pstripe_wbuf_t *wbuf);
/* Flush every buffer of the process; the first failure. */
ps_status_t pstripe_wbuf_flush_all(void);
/* pstripe_wbuf_sync every buffer of the process (what is left open at the
 * end of a program); the number whose sync failed. Their failures are
 * forgotten: a later sync of them returns only its own. */
int pstripe_wbuf_sync_all(void);
/* Flush, then take size bytes for each of the two buffers from now on (a
 * flush failure is returned and kept, as by pstripe_wbuf_flush). */
ps_status_t pstripe_wbuf_resize(pstripe_wbuf_t *wbuf, size_t size);
/* Are bytes buffered or a send in flight: in wbuf, or (NULL) in any buffer
 * of the process? */
int pstripe_wbuf_pending(const pstripe_wbuf_t *wbuf);
/* pstripe_wbuf_sync, then free it (NULL: PS_OK). */
ps_status_t pstripe_wbuf_free(pstripe_wbuf_t *wbuf);

/*
 * Read caches: what an MPI-IO layer keeps of a file's small reads between
 * calls. A read whose regions are at most a quarter block on average and
 * span at most 4 blocks (and half the cache) is served from whole blocks (block bytes each,
 * size / block of them, direct mapped), its missing blocks fetched in one
 * list read; a read reaching past the bytes a block had below the end of
 * file when it was fetched is left to the caller (*served = 0), as is a
 * larger one, unless it is one region of a stream of reads of the same
 * length and step, whose next reads are read ahead into windows of up to
 * half size bytes (two of them). The first small read after a drop is left
 * to the caller too. The caller keeps it coherent: its own writes invalidate the
 * blocks they touch, a sync or view change drops it, and
 * pstripe_rcache_drop_all drops every cache of the process at its next
 * read (a message came: another process may have written). Buffered
 * writes must be flushed before a read may fetch their bytes (see
 * pstripe_wbuf_flush_for_read). Thread-safe; NULL is a cache that serves
 * nothing.
 */
typedef struct pstripe_rcache pstripe_rcache_t;
ps_status_t pstripe_rcache_create(pstripe_file_t *file, size_t size, size_t block,
                                  pstripe_rcache_t **rcache);
/* Serve a read (regions and memory as pstripe_read_list): *served = 1 and
 * *nread = its bytes; or *served = 0, nothing read. Arguments
 * pstripe_read_list would refuse, and a failed fetch, are returned
 * (nothing served). */
ps_status_t pstripe_rcache_read(pstripe_rcache_t *rcache, const pstripe_region_t *regions,
                                size_t nregions, const struct iovec *mem, size_t nmem,
                                uint64_t *nread, int *served);
/* Would a read of nregions regions, total bytes in all, within [lo, hi) be
 * served (if its blocks' bytes lie below the end of file)? The span and
 * size test of pstripe_rcache_read, for a caller that must build the
 * regions first. */
int pstripe_rcache_takes(const pstripe_rcache_t *rcache, uint64_t lo, uint64_t hi, uint64_t total,
                         size_t nregions);
/* The lowest offset a read from offset on may fetch (its block's start):
 * buffered writes from there on must be flushed before the read. */
uint64_t pstripe_rcache_reach(const pstripe_rcache_t *rcache, uint64_t offset);
void pstripe_rcache_invalidate(pstripe_rcache_t *rcache, const pstripe_region_t *regions,
                               size_t nregions);
/* The same for regions given as runs: every block from a run's first byte
 * to its last. */
void pstripe_rcache_invalidate_runs(pstripe_rcache_t *rcache, const pstripe_run_t *runs,
                                    size_t nruns);
void pstripe_rcache_drop(pstripe_rcache_t *rcache);
void pstripe_rcache_drop_all(void);
void pstripe_rcache_free(pstripe_rcache_t *rcache);

/*
 * Connecting ahead: pstripe_preconnect_start starts pstripe_connect(NULL)
 * (then pstripe_connect_workers(max_workers)) in a thread of the library's
 * own, so that a process's first pstripe call finds its connection made (an
 * MPI library starts it when it is loaded, beside MPI_Init). Nothing is
 * started when PSTRIPE_PRECONNECT=0 is in the environment, or a second time.
 * pstripe_preconnect_take joins it and returns 1 with its outcome (*status;
 * *fs when PS_OK, else pstripe_last_error() says why), or 0 when no
 * connection was started or it was taken before. A connection never taken
 * is closed at exit; a forked child forgets the parent's.
 */
void pstripe_preconnect_start(int max_workers);
int pstripe_preconnect_take(pstripe_fs_t **fs, ps_status_t *status);

/* --- administration ------------------------------------------------------------ */

/* Counters of server i (see ps_stats_rep_t in ps_proto.h for meanings). */
typedef struct pstripe_server_stats {
    uint64_t uptime_ns, nworkers, requests, errors;
    uint64_t bytes_written, bytes_read, write_batches, read_batches;
    uint64_t regions_written, regions_read, disk_writes, disk_reads;
    uint64_t disk_bytes_written, disk_bytes_read, rmw_reads;
    uint64_t queue_depth, queue_depth_max, merged_batches, direct_io;
    uint64_t latency_hist[24]; /* bucket i: requests served in < 2^i us */
    uint64_t merged_writers, merge_waits;
    uint64_t auth_mode;    /* 0 none, 1 munge, 2 key (ps_auth_mode_t) */
    uint64_t auth_ok;      /* AUTH requests accepted */
    uint64_t auth_refused; /* AUTH requests and unauthenticated requests refused */
    /* write-back stage of partial blocks (the server's write_back) */
    uint64_t staged_bytes;     /* write bytes copied into it */
    uint64_t stage_whole;      /* blocks written once whole */
    uint64_t stage_partial;    /* blocks written partial (age, sync, truncate, full) */
    uint64_t stage_rmw;        /* of those, read first (read-modify-write) */
    uint64_t stage_full_waits; /* writes that waited for room */
    uint64_t stage_errors;     /* failed writes of staged blocks (reported by fsync) */
    uint64_t stage_blocks;     /* blocks staged now */
    uint64_t read_ahead_bytes; /* read ahead of forward reads into the server's cache */
    uint64_t eager_replies;    /* replies whose data went eagerly (the server's eager_reply) */
    uint64_t rndv_requests;    /* requests whose data came by rendezvous */
    uint64_t flushes_behind;   /* background flushes of files behind their writes
                                  (the server's flush_behind) */
    uint64_t cap_refused;      /* data requests refused for their capability (missing,
                                  forged, expired, another file's, without the right) */
} pstripe_server_stats_t;
ps_status_t pstripe_server_stats(pstripe_fs_t *fs, int server, pstripe_server_stats_t *st);

/* Parse a size the way the configuration does ("65536", "4k", "1m", "2GiB":
 * powers of 1024); PS_ERR_INVALID for anything else. So that every layer
 * (the tool, the MPI drivers) reads sizes with one grammar. */
ps_status_t pstripe_parse_size(const char *str, uint64_t *value);

/* Memory for large I/O buffers that a program (or a driver) fills and
 * reuses: from 1 MiB up it is mapped 2 MiB-aligned in whole 2 MiB pieces
 * with transparent huge pages requested, so that its first touch costs a
 * page fault per 2 MiB rather than per 4 KiB; smaller sizes come from
 * the heap. *capacity (if not NULL) gets the usable size, at least size.
 * NULL when out of memory. Free with pstripe_buffer_free (NULL is ignored;
 * a pointer it did not make is reported on stderr and aborts). */
void *pstripe_buffer_alloc(size_t size, size_t *capacity);
void pstripe_buffer_free(void *buf);

/* Status description, and the calling thread's last detailed error message. */
const char *pstripe_strerror(ps_status_t status);
const char *pstripe_last_error(void);

#ifdef __cplusplus
}
#endif

#endif

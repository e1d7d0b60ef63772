/*
 * fbtl_pstripe.c: the pstripe fbtl component of OMPIO. The list of
 * (memory, file offset, length) entries OMPIO hands down in f_io_array goes
 * out as one pstripe list I/O call (as strided runs: make_list; regions
 * split by stripe and batched per server by the client library), not one
 * request per entry.
 *
 * Nonblocking: pstripe_iwrite_runs/iread_runs start the transfer on the
 * client's progress thread; OMPIO's progress hook (registered by OMPIO
 * around ipwritev/ipreadv) tests the request and completes the MPI request.
 *
 * Caches: where the fs component gave the file a write-behind buffer
 * (pf->wb), a small independent write is copied into it
 * (pstripe_wbuf_write) and the call returns; a read first sends the
 * buffered bytes it may see (pstripe_wbuf_flush_for_read), and a
 * nonblocking access, an atomic-mode one and an aggregator's access inside
 * a collective call (pf->bypass) all of them. Where it gave the file a read
 * cache (pf->rc), a small independent blocking read is served from it
 * (pstripe_rcache_read); every write invalidates the blocks it touches,
 * and a nonblocking write's completion drops the cache.
 *
 * Atomic mode (MPI_File_set_atomicity(fh, 1)): every access runs under the
 * file's whole-file lock (ps_ompio_lock: exclusive for writes, shared for
 * reads). A nonblocking access in atomic mode runs to completion under the
 * lock before ipwritev/ipreadv return (the MPI request then completes at
 * the first test), since the lock must not be taken inside the progress
 * hook.
 */
#include "ps_ompio.h"

#include "ompi/mca/fbtl/fbtl.h"
#include "ompi/mca/common/ompio/common_ompio_request.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static int fbtl_priority = 50;

/* what an MPI request of ours carries (req_data) */
typedef struct ps_fbtl_req {
    pstripe_request_t *preq; /* NULL once waited for (or never started) */
    int err;                 /* MPI error when preq is NULL */
    uint64_t bytes;
    ompio_file_t *fh; /* open until the request completes (MPI requires it) */
    int is_write;
    int busy; /* a thread is in it (claim), or it is complete */
    int completed;
} ps_fbtl_req_t;

/*
 * An access from OMPIO's io array: the file side as strided runs
 * (pstripe_runs_append: a vector view's 131,072 8-byte regions of a 1 MiB
 * call are one run), the memory side with adjacent pieces joined (a
 * contiguous buffer is one iovec), and the file side as regions only
 * where a cache may take the access (list_regions). A region and an iovec
 * per entry, copied again by the library, were 9 MiB of fresh memory a
 * call of 131,072 regions: a third of the time went to page faults (perf,
 * 2 processes reading through a vector view of 8-byte regions).
 */
typedef struct ps_list {
    pstripe_run_t *runs;
    struct iovec *iov;
    pstripe_region_t *regions;    /* NULL until list_regions */
    size_t nruns, niov, nregions; /* nregions: the runs' */
    uint64_t total, lo, hi;       /* bytes; the lowest offset, past the highest */
} ps_list_t;

static void free_list(ps_list_t *list)
{
    free(list->runs);
    free(list->iov);
    free(list->regions);
}

static int make_list(ompio_file_t *fh, ps_list_t *list)
{
    size_t i, n = (size_t)fh->f_num_of_io_entries;
    const mca_common_ompio_io_array_t *e;
    struct iovec *last;
    uint64_t off;

    memset(list, 0, sizeof(*list));
    list->lo = UINT64_MAX;
    /* (room for the worst case: only what is written is touched) */
    list->runs = malloc((n ? n : 1) * sizeof(*list->runs));
    list->iov = malloc((n ? n : 1) * sizeof(*list->iov));
    if (list->runs == NULL || list->iov == NULL) {
        free_list(list);
        memset(list, 0, sizeof(*list));
        return MPI_ERR_NO_MEM;
    }
    for (i = 0; i < n; i++) {
        e = &fh->f_io_array[i];
        if (e->length == 0) {
            continue;
        }
        off = (uint64_t)(intptr_t)e->offset;
        pstripe_runs_append(list->runs, &list->nruns, off, e->length);
        last = list->niov > 0 ? &list->iov[list->niov - 1] : NULL;
        if (last != NULL && (char *)last->iov_base + last->iov_len == (char *)e->memory_address) {
            last->iov_len += e->length;
        } else {
            list->iov[list->niov].iov_base = e->memory_address;
            list->iov[list->niov++].iov_len = e->length;
        }
        list->total += e->length;
        list->lo = off < list->lo ? off : list->lo;
        list->hi = off + e->length > list->hi ? off + e->length : list->hi;
    }
    for (i = 0; i < list->nruns; i++) { /* (adjacent entries joined: fewer regions) */
        list->nregions += list->runs[i].count;
    }
    if (list->nregions == 0) {
        list->lo = 0;
    }
    return MPI_SUCCESS;
}

/* The file side as regions, for a cache (after make_list). */
static int list_regions(ps_list_t *list)
{
    if (list->regions == NULL) {
        list->regions = malloc((list->nregions ? list->nregions : 1) * sizeof(*list->regions));
        if (list->regions == NULL) {
            return MPI_ERR_NO_MEM;
        }
        pstripe_runs_regions(list->runs, list->nruns, list->regions);
    }
    return MPI_SUCCESS;
}

/* The MPI error class of a failed access (a write refused because the
 * file is open read-only is MPI_ERR_READ_ONLY, as OMPIO's own check). */
static int rw_class(ompio_file_t *fh, int is_write, ps_status_t status)
{
    if (is_write && status == PS_ERR_ACCESS && (fh->f_amode & MPI_MODE_RDONLY)) {
        return MPI_ERR_READ_ONLY;
    }
    return ps_ompio_mpi_error(status);
}

/* A failed access: an MPI error code whose string names pstripe, the file
 * and the reason. A blocking one (noted not NULL) is also kept for the next
 * sync, as OMPIO may drop its error (*noted: this one kept, not an earlier
 * one); a nonblocking one's request carries it to MPI_Wait. */
static int rw_fail(ompio_file_t *fh, int is_write, ps_status_t status, int *noted)
{
    const char *what = is_write ? "write to" : "read from";
    const char *detail = pstripe_last_error();
    int cls = rw_class(fh, is_write, status);

    if (noted != NULL) {
        *noted = ps_ompio_note_failure(fh->f_fs_ptr, what, fh->f_filename, status, cls);
    }
    if (detail == NULL || *detail == '\0') {
        detail = pstripe_strerror(status);
    }
    return ps_ompio_code(cls, "pstripe: %s %s: %s", what, fh->f_filename, detail);
}

/* Before an access: the buffered writes it must come after (all of them,
 * unless it is a read or a write the buffer may take) are sent. *taken: a
 * write the buffer took (one of at most a quarter of its bytes). */
static ps_status_t wb_before(ompio_file_t *fh, ps_list_t *list, int is_write, int *taken)
{
    ps_ompio_file_t *pf = fh->f_fs_ptr;

    *taken = 0;
    if (is_write) {
        pstripe_rcache_invalidate_runs(pf->rc, list->runs, list->nruns);
    }
    if (pf->wb == NULL) {
        return PS_OK;
    }
    if (!is_write) {
        /* (the read cache fetches whole blocks: buffered bytes in them too) */
        return pstripe_wbuf_flush_for_read(pf->wb, pstripe_rcache_reach(pf->rc, list->lo));
    }
    if (fh->f_atomicity || pf->bypass() > 0 || list->total > pf->wb_size / 4) {
        return pstripe_wbuf_flush(pf->wb);
    }
    if (list_regions(list) != MPI_SUCCESS) {
        return PS_ERR_NO_MEMORY;
    }
    return pstripe_wbuf_write(pf->wb, list->regions, list->nregions, list->iov, list->niov, taken);
}

/* A blocking read the read cache may serve: a small one, or one region (of
 * a stream, to be read ahead); *taken: served. */
static ps_status_t rc_read(ompio_file_t *fh, ps_list_t *list, uint64_t *nread, int *taken)
{
    ps_ompio_file_t *pf = fh->f_fs_ptr;

    *taken = 0;
    if (pf->rc == NULL || fh->f_atomicity || pf->bypass() > 0 ||
        (list->nregions > 1 &&
         !pstripe_rcache_takes(pf->rc, list->lo, list->hi, list->total, list->nregions))) {
        return PS_OK;
    }
    if (list_regions(list) != MPI_SUCCESS) {
        return PS_ERR_NO_MEMORY;
    }
    return pstripe_rcache_read(pf->rc, list->regions, list->nregions, list->iov, list->niov, nread,
                               taken);
}

/* One list access, done before it returns, under the lock in atomic mode.
 * Returns the bytes moved (reads: those below the end of the file), or
 * OMPI_ERROR with *err its MPI error code (printed; for noted, see
 * rw_fail; else 0 there). */
static ssize_t list_io(ompio_file_t *fh, int is_write, int *err, int *noted)
{
    ps_ompio_file_t *pf = fh->f_fs_ptr;
    const char *what = is_write ? "write to" : "read from";
    uint64_t nread = 0;
    ps_status_t status;
    ps_list_t list;
    int taken;

    if (noted != NULL) {
        *noted = 0;
    }
    if ((*err = make_list(fh, &list)) != MPI_SUCCESS) {
        return OMPI_ERROR;
    }
    status = wb_before(fh, &list, is_write, &taken);
    if (status == PS_OK && !is_write) {
        status = rc_read(fh, &list, &nread, &taken);
    }
    if (status != PS_OK || taken) {
        free_list(&list);
        if (status != PS_OK) { /* a flush or a cache's fetch: the message says which */
            ps_ompio_report(what, fh->f_filename, status);
            *err = rw_fail(fh, is_write, status, noted);
            return OMPI_ERROR;
        }
        return (ssize_t)(is_write ? list.total : nread);
    }
    if (fh->f_atomicity && (*err = ps_ompio_lock(pf, is_write)) != MPI_SUCCESS) {
        opal_output(0, "pstripe: %s: atomic mode: cannot take the file lock (MPI error %d%s)",
                    fh->f_filename, *err,
                    pf->lock_failed ? ": its MPI window could not be created at open" : "");
        free_list(&list);
        return OMPI_ERROR;
    }
    if (is_write) {
        /* with caching on (not in atomic mode), a direct write's short
         * runs are answered from the servers' stage too, as the buffer's
         * flushes are: OMPIO's collective 4 KiB writes (IOR, 2 ranks)
         * 13.8-22.2 -> 18.4-31.8 MiB/s; the sync waits for the disk */
        status =
            pstripe_write_runs_flags(pf->file, list.runs, list.nruns, list.iov, list.niov,
                                     pf->wb != NULL && !fh->f_atomicity ? PSTRIPE_WRITE_BEHIND : 0);
    } else {
        status = pstripe_read_runs(pf->file, list.runs, list.nruns, list.iov, list.niov, &nread);
    }
    if (fh->f_atomicity) {
        ps_ompio_unlock(pf);
    }
    free_list(&list);
    if (status != PS_OK) {
        ps_ompio_report(what, fh->f_filename, status);
        *err = rw_fail(fh, is_write, status, noted);
        return OMPI_ERROR;
    }
    return (ssize_t)(is_write ? list.total : nread);
}

/*
 * The blocking calls answer a failure with 0 bytes, not a negative number:
 * OMPIO (4.1) drops the error of a blocking access anyway (independent
 * calls count only what was moved; the vulcan and dynamic fcoll print
 * "fbtl_pwritev failed" and return MPI_SUCCESS), and on that error path
 * vulcan leaves a request in OMPIO's pending list, after which every
 * MPI_File_sync of that process returns MPI_ERR_OTHER at once while the
 * others wait in its barrier. With 0 bytes the status shows a short count,
 * the MPI call returns the failure where the hooks are preloaded (handed
 * to them: pf->dropped), and else the next MPI_File_sync returns it on
 * every process (fs_file_sync). Once the MPI call failed, the rest of it
 * fails here at once.
 */
static ssize_t blocking_io(ompio_file_t *fh, int is_write)
{
    ps_ompio_file_t *pf = fh->f_fs_ptr;
    int err, noted;
    ssize_t n;

    if (pf == NULL) {
        return 0;
    }
    if (pf->dropped != NULL && pf->dropped(MPI_SUCCESS, NULL) != MPI_SUCCESS) {
        /* the MPI call failed already: OMPIO would send each of its
         * cycles to a server that did not answer, a timeout each */
        return 0;
    }
    n = list_io(fh, is_write, &err, &noted);
    if (n < 0 && pf->dropped != NULL) {
        (void)pf->dropped(err, noted ? &pf->failed_class : NULL);
    }
    return n < 0 ? 0 : n;
}

static ssize_t fbtl_preadv(ompio_file_t *fh)
{
    return blocking_io(fh, 0);
}

static ssize_t fbtl_pwritev(ompio_file_t *fh)
{
    return blocking_io(fh, 1);
}

/* Waits for the library's request and keeps its outcome: a write drops
 * the read cache (blocks read while it was in flight may be old), a
 * failure is the request's error (and, if keep, the next sync's:
 * rw_fail). */
static void finish(ps_fbtl_req_t *data, int keep)
{
    int kept;

    ps_status_t status = pstripe_request_wait(data->preq, &data->bytes);

    data->preq = NULL;
    if (data->is_write) {
        pstripe_rcache_drop(((ps_ompio_file_t *)data->fh->f_fs_ptr)->rc);
    }
    data->err = MPI_SUCCESS;
    if (status != PS_OK) {
        ps_ompio_report("nonblocking access to", data->fh->f_filename, status);
        data->err = rw_fail(data->fh, data->is_write, status, keep ? &kept : NULL);
    }
}

/* OMPIO's progress (4.1, mca_common_ompio_component_progress) takes no
 * lock: under MPI_THREAD_MULTIPLE two threads' MPI calls may progress the
 * same request at once, and both would wait for (and free) its library
 * request. One thread at a time: 1 if this one has it. */
static int claim(ps_fbtl_req_t *data)
{
    return !__atomic_exchange_n(&data->busy, 1, __ATOMIC_ACQUIRE);
}

static bool fbtl_progress(mca_ompio_request_t *req)
{
    ps_fbtl_req_t *data = req->req_data;
    int done = 0;

    if (!claim(data)) {
        return false; /* another thread is in it, or it is complete */
    }
    if (data->preq != NULL) {
        ps_status_t status = pstripe_request_test(data->preq, &done);
        if (status == PS_OK && !done) {
            __atomic_store_n(&data->busy, 0, __ATOMIC_RELEASE);
            return false;
        }
        finish(data, 0);
    }
    req->req_ompi.req_status.MPI_ERROR = data->err;
    req->req_ompi.req_status._ucount = (size_t)data->bytes;
    __atomic_store_n(&data->completed, 1, __ATOMIC_RELEASE); /* and stays claimed */
    return true;
}

/* MPI_Request_free of a request still running (MPI allows it) waits for
 * it here: its memory is going away, and a failed write, which no
 * MPI_Wait can return now, is the next sync's error. */
static void fbtl_request_free(mca_ompio_request_t *req)
{
    ps_fbtl_req_t *data = req->req_data;

    if (data == NULL) {
        return;
    }
    while (!claim(data) && !__atomic_load_n(&data->completed, __ATOMIC_ACQUIRE)) {
        sched_yield(); /* another thread's progress is in it */
    }
    if (data->preq != NULL) {
        finish(data, 1);
    }
    free(data);
    req->req_data = NULL;
}

/* The request is started (its data complete): OMPIO's progress may look
 * at it from now on. It is in OMPIO's list of pending requests from its
 * allocation, so a progress function set earlier ran inside the start
 * (the atomic-mode lock waits in MPI progress) and completed the request
 * with nothing counted: under Open MPI with 2 processes, 19 of 20
 * atomic-mode MPI_File_iwrite_at counted 0 bytes. */
static ssize_t progress_from_here(mca_ompio_request_t *req)
{
    req->req_progress_fn = fbtl_progress;
    return 0;
}

static ssize_t start_io(ompio_file_t *fh, ompi_request_t *request, int is_write)
{
    mca_ompio_request_t *req = (mca_ompio_request_t *)request;
    ps_ompio_file_t *pf = fh->f_fs_ptr;
    ps_fbtl_req_t *data = calloc(1, sizeof(*data));
    ps_status_t status;
    ps_list_t list;
    ssize_t n;

    if (data == NULL) {
        return OMPI_ERROR;
    }
    data->fh = fh;
    data->is_write = is_write;
    /* OMPIO leaves the request's object unset, and Open MPI 4.1's
     * ompi_errhandler_request_invoke follows it to the file's error
     * handler when the request fails: a NULL there crashes MPI_Wait */
    req->req_ompi.req_mpi_object.file = fh->f_fh;
    req->req_data = data;
    req->req_free_fn = fbtl_request_free;
    /* From here on a failure is the request's error, not the return value:
     * OMPIO (4.1) abandons a request whose start fails without freeing it,
     * and the leftover in its list of pending requests makes every later
     * MPI_File_sync of the process fail with MPI_ERR_OTHER before reaching
     * the fs component. */
    if (fh->f_atomicity) {
        n = list_io(fh, is_write, &data->err, NULL);
        data->bytes = n < 0 ? 0 : (uint64_t)n;
        return progress_from_here(req);
    }
    if (make_list(fh, &list) != MPI_SUCCESS) {
        data->err = MPI_ERR_NO_MEM;
        return progress_from_here(req);
    }
    if (is_write) {
        pstripe_rcache_invalidate_runs(pf->rc, list.runs, list.nruns);
    }
    status = pstripe_wbuf_flush(pf->wb); /* a nonblocking access comes after them */
    if (status != PS_OK) {
        free_list(&list);
        ps_ompio_report("flush the buffered writes of", fh->f_filename, status);
        data->err = rw_fail(fh, is_write, status, NULL);
        return progress_from_here(req);
    }
    if (is_write) {
        status =
            pstripe_iwrite_runs(pf->file, list.runs, list.nruns, list.iov, list.niov, &data->preq);
    } else {
        status =
            pstripe_iread_runs(pf->file, list.runs, list.nruns, list.iov, list.niov, &data->preq);
    }
    free_list(&list); /* the library copies the arrays */
    if (status != PS_OK) {
        ps_ompio_report(is_write ? "cannot start a write to" : "cannot start a read from",
                        fh->f_filename, status);
        data->preq = NULL;
        data->err = rw_fail(fh, is_write, status, NULL);
    }
    return progress_from_here(req);
}

static ssize_t fbtl_ipreadv(ompio_file_t *fh, ompi_request_t *request)
{
    return start_io(fh, request, 0);
}

static ssize_t fbtl_ipwritev(ompio_file_t *fh, ompi_request_t *request)
{
    return start_io(fh, request, 1);
}

static int fbtl_module_init(ompio_file_t *fh)
{
    (void)fh;
    return OMPI_SUCCESS;
}

static int fbtl_module_finalize(ompio_file_t *fh)
{
    (void)fh;
    return OMPI_SUCCESS;
}

static mca_fbtl_base_module_1_0_0_t fbtl_module = {
    fbtl_module_init, fbtl_module_finalize, fbtl_preadv,   fbtl_ipreadv,
    fbtl_pwritev,     fbtl_ipwritev,        fbtl_progress, fbtl_request_free,
};

static int fbtl_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void)enable_progress_threads;
    (void)enable_mpi_threads;
    return OMPI_SUCCESS;
}

/* Claim the files the pstripe fs component opened, and only those. */
static struct mca_fbtl_base_module_1_0_0_t *fbtl_file_query(ompio_file_t *fh, int *priority)
{
    *priority = fbtl_priority;
    return fh->f_fstype == PS_OMPIO_FSTYPE ? &fbtl_module : NULL;
}

static int fbtl_file_unquery(ompio_file_t *fh)
{
    (void)fh;
    return OMPI_SUCCESS;
}

static int fbtl_register(void);

__attribute__((visibility("default")))
mca_fbtl_base_component_2_0_0_t mca_fbtl_pstripe_component = {
    .fbtlm_version =
        {
            MCA_FBTL_BASE_VERSION_2_0_0,
            .mca_component_name = "pstripe",
            MCA_BASE_MAKE_VERSION(component, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                                  OMPI_RELEASE_VERSION),
            .mca_register_component_params = fbtl_register,
        },
    .fbtlm_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
    .fbtlm_init_query = fbtl_init_query,
    .fbtlm_file_query = fbtl_file_query,
    .fbtlm_file_unquery = fbtl_file_unquery,
};

static int fbtl_register(void)
{
    int rc = ps_ompio_check_version("fbtl");

    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    fbtl_priority = 50;
    (void)mca_base_component_var_register(&mca_fbtl_pstripe_component.fbtlm_version, "priority",
                                          "Priority of the fbtl pstripe component (it claims only "
                                          "files of the pstripe fs component)",
                                          MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9,
                                          MCA_BASE_VAR_SCOPE_READONLY, &fbtl_priority);
    return OMPI_SUCCESS;
}

/*
 * fs_pstripe.c: the pstripe fs component of OMPIO. It claims files named
 * "pstripe:/path", opens them with the layout hints (the ROMIO driver's
 * names), and does close, delete, set_size and sync.
 *
 * Hints (layout, tunables, caches, collective switches) are read, agreed
 * and shown in the file's info by ps_ompio_hints.c, at open and at each
 * MPI_File_set_info and MPI_File_set_view.
 * Caches: a file opened for writing gets a write-behind buffer
 * (pstripe_wbuf_*, romio_pstripe_wb_buffer_size bytes, 2 MiB by default)
 * for the fbtl's small independent writes, and one opened for reading a
 * read cache (pstripe_rcache_*, 4 MiB of 64 KiB blocks) for its small
 * independent reads, when libpstripe-ompi-hooks.so is preloaded (`pstripe
 * run` does it): its MPI calls send every buffer before a message may tell
 * another process about a write, and drop every cache after one may have
 * come (ps_ompio_hooks.c; at the PMPI_ level, which Open MPI's Fortran
 * bindings call too). Without it, or with the hints set to disable,
 * nothing is cached. Sync, close, set_size, get_size and preallocate flush
 * the file's buffer first, sync and set_size drop its cache; sync and
 * close return a failed flush once more.
 * MPI_File_preallocate is ours too (fs_file_preallocate, set in the file's
 * copy of OMPIO's io module at open): OMPIO's own reads the file back and
 * writes it through the individual file pointer, which both calls move, so
 * each piece lands after the place it was read from (Open MPI 4.1.4: 1 MiB
 * written, preallocate to 2 MiB, and the second MiB held a copy of the
 * first instead of zeros, on a local file as well).
 * MPI_File_get_amode too (fs_file_get_amode): OMPIO's copy of the access
 * mode lacks MPI_MODE_DELETE_ON_CLOSE, which our close does instead.
 * Errors carry their reason: MPI_Error_string names pstripe and the cause
 * (ps_ompio_code).
 */
#include "ps_ompio.h"

#include "ompi/file/file.h"        /* the file's io module (fs_file_preallocate) */
#include "ompi/mca/fs/base/base.h" /* mca_fs_base_get_file_perm */
#include "ompi/mca/fs/fs.h"

#include <dlfcn.h>
#include <stdlib.h>

static int fs_priority = 50;
static pstripe_fs_t *fs_handle; /* one connection per process */

static ps_status_t ps_connect(void)
{
    ps_status_t status;

    if (fs_handle != NULL) {
        return PS_OK;
    }
    /* the connection libpstripe-ompi-hooks.so started at load, if any */
    if (!pstripe_preconnect_take(&fs_handle, &status)) {
        status = pstripe_connect(NULL, &fs_handle);
    }
    if (status != PS_OK) {
        ps_ompio_report("cannot connect to the servers of", getenv("PSTRIPE_CONFIG"), status);
        fs_handle = NULL;
    }
    return status;
}

static int open_flags(int amode, int create)
{
    int flags = (amode & MPI_MODE_RDONLY)   ? PSTRIPE_RDONLY
                : (amode & MPI_MODE_WRONLY) ? PSTRIPE_WRONLY
                                            : PSTRIPE_RDWR;

    if (create && (amode & MPI_MODE_CREATE)) {
        flags |= PSTRIPE_CREAT | ((amode & MPI_MODE_EXCL) ? PSTRIPE_EXCL : 0);
    }
    return flags;
}

/* Rank 0 creates (or opens) first, so that the others find the file;
 * then every process opens it. All fail or none (the same error class on
 * all; each process's own reason, rank 0's, or which process failed). */
static int open_all(MPI_Comm comm, int rank, const char *path, int amode, int perm,
                    const ps_ompio_hints_t *hv, pstripe_file_t **file_p)
{
    pstripe_layout_t layout = ps_ompio_hints_layout(hv);
    ps_status_t status = ps_connect();
    int cls, all_cls, code = MPI_SUCCESS;

    if (rank == 0 && status == PS_OK) {
        if (amode & MPI_MODE_CREATE) {
            pstripe_layout_fit(fs_handle, path, &layout);
        }
        status =
            pstripe_open(fs_handle, path, open_flags(amode, 1), (uint32_t)perm, &layout, file_p);
    }
    cls = (status == PS_OK) ? MPI_SUCCESS : ps_ompio_mpi_error(status);
    MPI_Bcast(&cls, 1, MPI_INT, 0, comm);
    if (cls != MPI_SUCCESS) { /* rank 0's reason, for the others' message */
        char why[PS_OMPIO_WHY_MAX] = "";
        if (rank == 0) {
            snprintf(why, sizeof(why), "%s", ps_ompio_reason(status));
        }
        MPI_Bcast(why, sizeof(why), MPI_CHAR, 0, comm);
        code = rank == 0 ? ps_ompio_fail("cannot open", path, status)
                         : ps_ompio_fail_why(cls, "cannot open", path, why);
    } else {
        if (rank != 0 && status == PS_OK) {
            status =
                pstripe_open(fs_handle, path, open_flags(amode, 0), (uint32_t)perm, NULL, file_p);
        }
        if (status != PS_OK) {
            cls = ps_ompio_mpi_error(status);
            code = ps_ompio_fail("cannot open", path, status);
        }
    }
    MPI_Allreduce(&cls, &all_cls, 1, MPI_INT, MPI_MAX, comm);
    if (all_cls == MPI_SUCCESS) {
        return MPI_SUCCESS;
    }
    if (status == PS_OK && cls == MPI_SUCCESS) {
        pstripe_close(*file_p);
        *file_p = NULL;
    }
    if (cls != all_cls) {
        code = ps_ompio_code(all_cls, "pstripe: cannot open %s: the open failed on another process",
                             path);
    }
    return code;
}

/* The window of atomic mode's lock, on a duplicate of the file's
 * communicator with errors returned (a failure must not abort the program:
 * then atomic-mode accesses fail, see ps_ompio_lock). One process needs no
 * lock (its blocking accesses do not overlap in time). */
static void lock_setup(MPI_Comm comm, ps_ompio_file_t *pf)
{
    int rank, nprocs, rc;

    pf->lock_win = MPI_WIN_NULL;
    pf->lock_comm = MPI_COMM_NULL;
    MPI_Comm_size(comm, &nprocs);
    if (nprocs == 1) {
        return;
    }
    MPI_Comm_rank(comm, &rank);
    rc = MPI_Comm_dup(comm, &pf->lock_comm);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(pf->lock_comm, MPI_ERRORS_RETURN);
        rc = MPI_Win_create(&pf->lock_byte, rank == 0 ? 1 : 0, 1, MPI_INFO_NULL, pf->lock_comm,
                            &pf->lock_win);
    }
    if (rc == MPI_SUCCESS) {
        MPI_Win_set_errhandler(pf->lock_win, MPI_ERRORS_RETURN);
    } else {
        pf->lock_win = MPI_WIN_NULL;
        pf->lock_failed = 1;
    }
}

static void lock_free(ps_ompio_file_t *pf)
{
    if (pf->lock_win != MPI_WIN_NULL) {
        MPI_Win_free(&pf->lock_win);
    }
    if (pf->lock_comm != MPI_COMM_NULL) {
        MPI_Comm_free(&pf->lock_comm);
    }
}

/* What process 0 did (status, PS_OK on the others; size: the size it was
 * asked for), as every process's answer: its error, or one saying that it
 * failed there. A negative size was refused before any call, so the
 * client's last message is an earlier call's: the answer names the size.
 * Collective. */
static int root_outcome(ompio_file_t *fh, const char *what, ps_status_t status,
                        OMPI_MPI_OFFSET_TYPE size)
{
    int cls = ps_ompio_mpi_error(status);

    if (fh->f_comm != MPI_COMM_NULL) {
        MPI_Bcast(&cls, 1, MPI_INT, 0, fh->f_comm);
    }
    if (cls != MPI_SUCCESS && size < 0) {
        return ps_ompio_code(cls, "pstripe: %s %s: the size %lld is negative", what, fh->f_filename,
                             (long long)size);
    }
    if (status != PS_OK) {
        return ps_ompio_fail(what, fh->f_filename, status);
    }
    if (cls != MPI_SUCCESS) {
        return ps_ompio_code(cls, "pstripe: %s %s: it failed on process 0", what, fh->f_filename);
    }
    return MPI_SUCCESS;
}

/* MPI_File_preallocate (collective): the same size on every process, and
 * process 0 has the servers reserve the space up to it (as the ROMIO
 * driver does: no data read or written, the file grows to it if shorter);
 * every process returns its outcome. */
static int fs_file_preallocate(struct ompi_file_t *file, OMPI_MPI_OFFSET_TYPE diskspace)
{
    mca_common_ompio_data_t *data = (mca_common_ompio_data_t *)file->f_io_selected_data;
    ompio_file_t *fh = &data->ompio_fh;
    ps_ompio_file_t *pf = fh->f_fs_ptr;
    OMPI_MPI_OFFSET_TYPE root = diskspace;
    ps_status_t status = PS_OK;
    int differ, any, err;

    OPAL_THREAD_LOCK(&file->f_lock);
    (void)pstripe_wbuf_flush(pf->wb); /* a failure is kept for the sync */
    MPI_Bcast(&root, 1, MPI_OFFSET, 0, fh->f_comm);
    differ = root != diskspace;
    MPI_Allreduce(&differ, &any, 1, MPI_INT, MPI_MAX, fh->f_comm);
    if (any) {
        OPAL_THREAD_UNLOCK(&file->f_lock);
        return ps_ompio_code(MPI_ERR_NOT_SAME,
                             "pstripe: MPI_File_preallocate of %s: the size is not the same on "
                             "every process",
                             fh->f_filename);
    }
    if (fh->f_rank == 0) {
        status =
            diskspace < 0 ? PS_ERR_INVALID : pstripe_preallocate(pf->file, (uint64_t)diskspace);
    }
    err = root_outcome(fh, "cannot preallocate", status, diskspace);
    OPAL_THREAD_UNLOCK(&file->f_lock);
    return err;
}

/* MPI_File_get_amode: the access mode the file was opened with, which
 * holds MPI_MODE_DELETE_ON_CLOSE even though OMPIO's copy does not (our
 * close deletes the file, see fs_file_open). */
static int fs_file_get_amode(struct ompi_file_t *file, int *amode)
{
    mca_common_ompio_data_t *data = (mca_common_ompio_data_t *)file->f_io_selected_data;
    ompio_file_t *fh = &data->ompio_fh;
    ps_ompio_file_t *pf = fh->f_fs_ptr;

    OPAL_THREAD_LOCK(&file->f_lock);
    *amode = fh->f_amode | (pf != NULL && pf->delete_on_close ? MPI_MODE_DELETE_ON_CLOSE : 0);
    OPAL_THREAD_UNLOCK(&file->f_lock);
    return MPI_SUCCESS;
}

/* A file opened by the program (not by another component for itself):
 * its MPI_File_preallocate and MPI_File_get_amode are ours. */
static void take_calls(ompio_file_t *fh)
{
    mca_io_base_module_2_0_0_t *module = ps_ompio_io_module(fh);

    if (module != NULL) {
        module->io_module_file_preallocate = fs_file_preallocate;
        module->io_module_file_get_amode = fs_file_get_amode;
    }
}

static int fs_file_open(struct ompi_communicator_t *comm, const char *filename, int amode,
                        struct opal_info_t *info, ompio_file_t *fh)
{
    const char *path = ps_ompio_path(filename);
    ps_ompio_hints_t hv;
    ps_ompio_file_t *pf;
    int rank, err;

    if (path == NULL) {
        return MPI_ERR_BAD_FILE;
    }
    MPI_Comm_rank(comm, &rank);
    err = ps_ompio_hints_get(comm, info, &hv, "MPI_File_open", 1);
    if (err != MPI_SUCCESS) {
        return err;
    }
    pf = calloc(1, sizeof(*pf));
    if (pf == NULL) {
        return MPI_ERR_NO_MEM;
    }
    pf->dropped = (int (*)(int, int *))dlsym(RTLD_DEFAULT, "pstripe_ompio_dropped");
    /* f_perm is OMPIO_PERM_NULL (-1) unless the program gave a mode: then
     * 0666 less the umask, as OMPIO's ufs and ROMIO do (passed as it was,
     * every new file was 0777) */
    err = open_all(comm, rank, path, amode, mca_fs_base_get_file_perm(fh), &hv, &pf->file);
    if (err == MPI_SUCCESS) {
        int failed, any_failed = 1;

        err = ps_ompio_hints_open_file(fh, pf, &hv);
        failed = (err != MPI_SUCCESS);
        /* collective, after every process's open: on all or none */
        MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm);
        if (!any_failed) {
            lock_setup(comm, pf);
        } else {
            pstripe_close(pf->file);
            if (!failed) {
                err = ps_ompio_code(MPI_ERR_IO,
                                    "pstripe: cannot open %s: the open failed on "
                                    "another process",
                                    filename);
            }
        }
    }
    if (err != MPI_SUCCESS) {
        free(pf);
        return err;
    }
    ps_ompio_hints_open_caches(fh, info, pf, &hv);
    /* OMPIO would delete on every process (through ufs, the name joined
     * to the working directory); our close does it once, and our
     * get_amode still shows the bit */
    pf->delete_on_close = (fh->f_amode & MPI_MODE_DELETE_ON_CLOSE) != 0;
    fh->f_amode &= ~MPI_MODE_DELETE_ON_CLOSE;
    fh->f_fs_ptr = pf;
    fh->fd = -1;
    take_calls(fh);
    return MPI_SUCCESS;
}

static int fs_file_close(ompio_file_t *fh)
{
    ps_ompio_file_t *pf = fh->f_fs_ptr;
    ps_status_t status;
    int err;

    if (pf == NULL) {
        return MPI_SUCCESS;
    }
    ps_ompio_caches_free(fh, pf);
    lock_free(pf); /* collective: every process is done with the file */
    status = pstripe_close(pf->file);
    if (status != PS_OK) {
        /* printed too: Open MPI drops the close's error code */
        ps_ompio_report("cannot close", fh->f_filename, status);
    }
    err = status == PS_OK ? MPI_SUCCESS : ps_ompio_fail("cannot close", fh->f_filename, status);
    if (err == MPI_SUCCESS) {
        err = ps_ompio_deferred(pf); /* a failed access OMPIO did not report */
    }
    if (pf->delete_on_close && fh->f_rank == 0) {
        status = pstripe_unlink(fs_handle, ps_ompio_path(fh->f_filename));
        if (status != PS_OK) {
            err = ps_ompio_fail("cannot delete on close", fh->f_filename, status);
        }
    }
    if (pf->dropped != NULL) {
        (void)pf->dropped(err, NULL); /* Open MPI drops the close's answer */
    }
    free(pf);
    fh->f_fs_ptr = NULL;
    return err;
}

static int fs_file_delete(char *filename, struct opal_info_t *info)
{
    const char *path = ps_ompio_path(filename);
    ps_status_t status;

    (void)info;
    if (path == NULL) {
        return MPI_ERR_BAD_FILE;
    }
    status = ps_connect();
    if (status == PS_OK) {
        status = pstripe_unlink(fs_handle, path);
    }
    return status == PS_OK ? MPI_SUCCESS : ps_ompio_fail("cannot delete", filename, status);
}

/* OMPIO calls this on every process (with the same size): rank 0 sets it,
 * the others learn the result. The barrier first keeps rank 0 from changing
 * the size while another process may still look at the size an earlier
 * MPI_File_set_size left (ufs under OMPIO has that race: each process
 * truncates on its own). */
static int fs_file_set_size(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE size)
{
    ps_ompio_file_t *pf = fh->f_fs_ptr;
    ps_status_t status = pstripe_wbuf_flush(pf->wb);

    if (fh->f_comm != MPI_COMM_NULL) {
        MPI_Barrier(fh->f_comm); /* (which flushes every process's buffers) */
    }
    if (status != PS_OK) {
        ps_ompio_note_failure(pf, "flush of the buffered writes of", fh->f_filename, status,
                              ps_ompio_mpi_error(status));
        status = PS_OK;
    }
    if (fh->f_rank == 0) {
        status = size < 0 ? PS_ERR_INVALID : pstripe_ftruncate(pf->file, (uint64_t)size);
    }
    pstripe_rcache_drop(pf->rc);
    return root_outcome(fh, "cannot set the size of", status, size);
}

static int fs_file_get_size(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE *size)
{
    ps_ompio_file_t *pf = fh->f_fs_ptr;
    pstripe_stat_t st;
    ps_status_t status;

    status = pstripe_wbuf_flush(pf->wb); /* its bytes may extend the file */
    if (status != PS_OK) {
        return ps_ompio_fail("cannot flush the buffered writes of", fh->f_filename, status);
    }
    status = pstripe_fstat(pf->file, &st);
    if (status != PS_OK) {
        return ps_ompio_fail("cannot get the size of", fh->f_filename, status);
    }
    *size = (OMPI_MPI_OFFSET_TYPE)st.size;
    return MPI_SUCCESS;
}

/* Collective (OMPIO calls it after a barrier of every process): the sync,
 * then a failed access that OMPIO did not report (ps_ompio_deferred), on
 * every process: OMPIO's collective writes fail, if at all, only on the
 * aggregators that wrote. */
static int fs_file_sync(ompio_file_t *fh)
{
    ps_ompio_file_t *pf = fh->f_fs_ptr;
    ps_status_t status;
    int err, failed, any_failed = 0;

    pstripe_rcache_drop(pf->rc);
    status = pstripe_wbuf_sync(pf->wb); /* this flush's failure, or a kept one */
    if (status == PS_OK) {
        status = pstripe_fsync(pf->file);
    }
    err = ps_ompio_deferred(pf); /* reported now, by this sync, either way */
    if (status != PS_OK) {
        err = ps_ompio_fail("cannot sync", fh->f_filename, status);
    }
    failed = (err != MPI_SUCCESS);
    if (fh->f_comm != MPI_COMM_NULL &&
        MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, fh->f_comm) == MPI_SUCCESS &&
        any_failed && !failed) {
        err = ps_ompio_code(MPI_ERR_IO,
                            "pstripe: sync of %s: an earlier access or the sync failed on "
                            "another process",
                            fh->f_filename);
    }
    return err;
}

static int fs_module_init(ompio_file_t *fh)
{
    /* a component queried after us may have changed it */
    fh->f_fstype = PS_OMPIO_FSTYPE;
    return OMPI_SUCCESS;
}

static int fs_module_finalize(ompio_file_t *fh)
{
    (void)fh;
    return OMPI_SUCCESS;
}

static mca_fs_base_module_1_0_0_t fs_module = {
    fs_module_init, fs_module_finalize, fs_file_open,     fs_file_close,
    fs_file_delete, fs_file_set_size,   fs_file_get_size, fs_file_sync,
};

static int fs_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void)enable_progress_threads;
    (void)enable_mpi_threads;
    return OMPI_SUCCESS;
}

/* Claim "pstripe:" names, and nothing else (the name is seen unchanged). */
static struct mca_fs_base_module_1_0_0_t *fs_file_query(ompio_file_t *fh, int *priority)
{
    *priority = fs_priority;
    if (ps_ompio_path(fh->f_filename) == NULL) {
        return NULL;
    }
    fh->f_fstype = PS_OMPIO_FSTYPE;
    return &fs_module;
}

static int fs_file_unquery(ompio_file_t *fh)
{
    (void)fh;
    return OMPI_SUCCESS;
}

static int fs_register(void);

static int fs_close_component(void)
{
    if (fs_handle != NULL) {
        pstripe_disconnect(fs_handle);
        fs_handle = NULL;
    }
    return OMPI_SUCCESS;
}

__attribute__((visibility("default"))) mca_fs_base_component_2_0_0_t mca_fs_pstripe_component = {
    .fsm_version =
        {
            MCA_FS_BASE_VERSION_2_0_0,
            .mca_component_name = "pstripe",
            MCA_BASE_MAKE_VERSION(component, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                                  OMPI_RELEASE_VERSION),
            .mca_close_component = fs_close_component,
            .mca_register_component_params = fs_register,
        },
    .fsm_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
    .fsm_init_query = fs_init_query,
    .fsm_file_query = fs_file_query,
    .fsm_file_unquery = fs_file_unquery,
};

static int fs_register(void)
{
    int rc = ps_ompio_check_version("fs");

    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    fs_priority = 50;
    (void)mca_base_component_var_register(&mca_fs_pstripe_component.fsm_version, "priority",
                                          "Priority of the fs pstripe component (it claims only "
                                          "pstripe: file names)",
                                          MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9,
                                          MCA_BASE_VAR_SCOPE_READONLY, &fs_priority);
    return OMPI_SUCCESS;
}

/*
 * sharedfp_pstripe.c: the pstripe sharedfp component of OMPIO: shared file
 * pointers on the servers' counter (pstripe_sfp_*, the counter the ROMIO
 * driver uses too).
 *
 * At the collective open rank 0 draws a random nonzero instance id, sets
 * the counter of this open (kept by the file's metadata owner) to 0 and
 * broadcasts the id (0 if the server could not make it: then the open
 * succeeds and shared accesses fail, saying why). Only a set makes a
 * counter: a fetch-and-add of one the server lost (it restarted since the
 * open) fails with MPI_ERR_IO and the library's reason, never restarting
 * at 0. The counter holds the
 * shared pointer in bytes of the file view, as Open MPI's own sharedfp
 * components keep it; reads and writes at it go through OMPIO's explicit-
 * offset calls (in etypes: counter / etype size).
 *   read/write_shared     one fetch-and-add of the access's size;
 *   ordered (collective)  an MPI_Scan of the sizes, one fetch-and-add of the
 *                         total by the last rank, a broadcast of the base;
 *   seek_shared           an allreduce (no process's earlier accesses
 *                         come after the new pointer), rank 0 sets the
 *                         counter, a broadcast of its outcome: every
 *                         program's seek (ours: the file's io module's
 *                         seek_shared, set at the open), and OMPIO's at
 *                         MODE_APPEND opens;
 *   set_view              OMPIO seeks to 0: every process counts a new
 *                         view (see pstripe_sfp_set), and the counter
 *                         starts again at 0 when it sees one; nothing is
 *                         sent (HDF5 sets a view around every collective
 *                         access) unless a process found the pointer lost
 *                         since it was last set: the allreduce that stands
 *                         for the barrier says so, and rank 0 sets it;
 *   get_position_shared   a fetch-and-add of 0 (bytes: OMPIO converts).
 * At close, after a barrier, rank 0 releases the counter.
 */
#include "ps_ompio.h"

#include "ompi/file/file.h" /* the file's io module (file_seek_shared) */
#include "ompi/mca/sharedfp/base/base.h"
#include "ompi/mca/sharedfp/sharedfp.h"
#include "opal/datatype/opal_datatype.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

static int sharedfp_priority = 50;

typedef struct ps_sfp {
    uint64_t instance; /* 0: the open could not make a pointer (see why) */
    uint32_t view;     /* set_views since the open */
    int lost;          /* a fetch-and-add here found it lost since it was set */
    char why[256];
    ompi_status_public_t split_status; /* of the ordered *_begin call */
    int split_err;
} ps_sfp_t;

static int sfp_fail(ompio_file_t *fh, const char *what, ps_status_t status)
{
    return ps_ompio_fail(what, fh->f_filename, status);
}

static pstripe_file_t *pfile(ompio_file_t *fh)
{
    return ((ps_ompio_file_t *)fh->f_fs_ptr)->file;
}

/* The error of a file whose open made no pointer. */
static int no_pointer(ompio_file_t *fh)
{
    ps_sfp_t *sfp = fh->f_sharedfp_data;

    return ps_ompio_code(MPI_ERR_IO, "pstripe: %s has no shared file pointer: %s", fh->f_filename,
                         sfp != NULL ? sfp->why : "not open");
}

/* *pos = the shared pointer (bytes); it moves by incr. */
static int fetch_add(ompio_file_t *fh, uint64_t incr, uint64_t *pos)
{
    ps_sfp_t *sfp = fh->f_sharedfp_data;
    ps_status_t status;

    if (sfp == NULL || fh->f_fs_ptr == NULL) {
        return MPI_ERR_FILE;
    }
    if (sfp->instance == 0) {
        return no_pointer(fh);
    }
    status = pstripe_sfp_fetch_add(pfile(fh), sfp->instance, sfp->view, incr, pos);
    if (status == PS_ERR_NO_ENTRY) {
        sfp->lost = 1;      /* for the next set_view */
        status = PS_ERR_IO; /* the pointer is lost, not the file (message: the library's) */
    }
    return status == PS_OK ? MPI_SUCCESS : sfp_fail(fh, "shared file pointer of", status);
}

static size_t access_bytes(int count, struct ompi_datatype_t *datatype)
{
    size_t size = 0;

    opal_datatype_type_size(&datatype->super, &size);
    return (size_t)(count < 0 ? 0 : count) * size;
}

static OMPI_MPI_OFFSET_TYPE in_etypes(ompio_file_t *fh, uint64_t bytes)
{
    return (OMPI_MPI_OFFSET_TYPE)(bytes / (fh->f_etype_size ? fh->f_etype_size : 1));
}

/* Collective: this process's offset (bytes) for an ordered access of
 * mine bytes, rank order, all at the pointer, which moves by the total. */
static int ordered_offset(ompio_file_t *fh, uint64_t mine, uint64_t *offset)
{
    MPI_Comm comm = fh->f_comm;
    unsigned long long incl = 0, base = 0;
    int err = MPI_SUCCESS, last = fh->f_size - 1;

    if (MPI_Scan(&(unsigned long long){mine}, &incl, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm) !=
        MPI_SUCCESS) {
        return MPI_ERR_OTHER;
    }
    if (fh->f_rank == last) {
        uint64_t pos = 0;

        err = fetch_add(fh, incl, &pos);
        base = pos;
    }
    MPI_Bcast(&err, 1, MPI_INT, last, comm);
    MPI_Bcast(&base, 1, MPI_UNSIGNED_LONG_LONG, last, comm);
    if (err != MPI_SUCCESS) {
        return fh->f_rank == last ? err
                                  : ps_ompio_code(MPI_ERR_IO,
                                                  "pstripe: ordered access to %s: the shared file "
                                                  "pointer failed on process %d",
                                                  fh->f_filename, last);
    }
    *offset = base + incl - mine;
    return MPI_SUCCESS;
}

/* Rank 0's outcome err (MPI_SUCCESS on the others) as every process's:
 * its error class and message go to all, and each other process makes
 * its own code of them (codes are per process). Collective. */
static int root_outcome(ompio_file_t *fh, int err)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int cls = MPI_SUCCESS, len = 0;

    if (fh->f_rank == 0 && err != MPI_SUCCESS) {
        MPI_Error_class(err, &cls);
        MPI_Error_string(err, msg, &len);
        cls = cls != MPI_SUCCESS ? cls : MPI_ERR_OTHER;
    }
    MPI_Bcast(&cls, 1, MPI_INT, 0, fh->f_comm);
    if (cls == MPI_SUCCESS) {
        return MPI_SUCCESS;
    }
    MPI_Bcast(msg, sizeof(msg), MPI_CHAR, 0, fh->f_comm);
    return fh->f_rank == 0 ? err : ps_ompio_code(cls, "%s", msg);
}

/* Collective: the pointer at offset (etypes) from whence, set by rank 0.
 * reset: OMPIO's seek to 0 at set_view, which sets it only if some
 * process found it lost (else every process counts the new view). */
static int seek(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE offset, int whence, int reset)
{
    ps_sfp_t *sfp = fh->f_sharedfp_data;
    OMPI_MPI_OFFSET_TYPE pos = offset * (OMPI_MPI_OFFSET_TYPE)fh->f_etype_size, size;
    int err = MPI_SUCCESS, any_lost = 0;
    uint64_t cur;

    /* the same on every process: no process's older accesses come after
     * the new pointer, nor anyone's newer ones before it */
    if (MPI_Allreduce(&sfp->lost, &any_lost, 1, MPI_INT, MPI_MAX, fh->f_comm) != MPI_SUCCESS) {
        return MPI_ERR_OTHER;
    }
    if (reset) {
        sfp->view++;
        if (!any_lost) {
            return MPI_SUCCESS;
        }
    }
    if (fh->f_rank == 0) {
        if (whence == MPI_SEEK_CUR) {
            err = fetch_add(fh, 0, &cur);
            pos += (OMPI_MPI_OFFSET_TYPE)cur;
        } else if (whence == MPI_SEEK_END) {
            err = fh->f_fs->fs_file_get_size(fh, &size);
            pos += size;
        } else if (whence != MPI_SEEK_SET) {
            err = MPI_ERR_ARG;
        }
        if (err == MPI_SUCCESS && pos < 0) {
            err = ps_ompio_code(MPI_ERR_ARG,
                                "pstripe: seek of the shared file pointer of %s "
                                "before the start of the view",
                                fh->f_filename);
        }
        if (err == MPI_SUCCESS && sfp->instance == 0) {
            err = no_pointer(fh);
        } else if (err == MPI_SUCCESS) {
            ps_status_t status =
                pstripe_sfp_set(pfile(fh), sfp->instance, sfp->view, (uint64_t)pos);

            err = status == PS_OK ? MPI_SUCCESS : sfp_fail(fh, "shared file pointer of", status);
        }
    }
    /* no process uses the pointer before it is set */
    err = root_outcome(fh, err);
    if (err == MPI_SUCCESS) {
        sfp->lost = 0;
    }
    return err;
}

/* OMPIO's own seeks: to 0 at set_view, to the end at a MODE_APPEND open. */
static int sfp_seek(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE offset, int whence)
{
    return seek(fh, offset, whence, whence == MPI_SEEK_SET && offset == 0);
}

/* The program's MPI_File_seek_shared (the file's io module's, as
 * mca_io_ompio_file_seek_shared): always sets the pointer, so that a seek
 * to 0 sets a lost one again. */
static int sfp_file_seek_shared(struct ompi_file_t *file, OMPI_MPI_OFFSET_TYPE offset, int whence)
{
    ompio_file_t *fh = &((mca_common_ompio_data_t *)file->f_io_selected_data)->ompio_fh;
    int err;

    OPAL_THREAD_LOCK(&file->f_lock);
    err = seek(fh, offset, whence, 0);
    OPAL_THREAD_UNLOCK(&file->f_lock);
    return err;
}

/* A file opened by the program (not by another component for itself):
 * its MPI_File_seek_shared is ours. */
static void take_seek_shared(ompio_file_t *fh)
{
    mca_io_base_module_2_0_0_t *module = ps_ompio_io_module(fh);

    if (module != NULL) {
        module->io_module_file_seek_shared = sfp_file_seek_shared;
    }
}

/* In bytes: OMPIO's get_position_shared divides by the etype size itself
 * (io_ompio_file_open.c), as seek_shared hands etypes down. */
static int sfp_get_position(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE *offset)
{
    uint64_t pos;
    int err = fetch_add(fh, 0, &pos);

    if (err == MPI_SUCCESS) {
        *offset = (OMPI_MPI_OFFSET_TYPE)pos;
    }
    return err;
}

static int sfp_read(ompio_file_t *fh, void *buf, int count, struct ompi_datatype_t *datatype,
                    ompi_status_public_t *status)
{
    uint64_t pos;
    int err = fetch_add(fh, access_bytes(count, datatype), &pos);

    return err != MPI_SUCCESS ? err
                              : mca_common_ompio_file_read_at(fh, in_etypes(fh, pos), buf, count,
                                                              datatype, status);
}

static int sfp_iread(ompio_file_t *fh, void *buf, int count, struct ompi_datatype_t *datatype,
                     ompi_request_t **request)
{
    uint64_t pos;
    int err = fetch_add(fh, access_bytes(count, datatype), &pos);

    return err != MPI_SUCCESS ? err
                              : mca_common_ompio_file_iread_at(fh, in_etypes(fh, pos), buf, count,
                                                               datatype, request);
}

static int sfp_write(ompio_file_t *fh, const void *buf, int count, struct ompi_datatype_t *datatype,
                     ompi_status_public_t *status)
{
    uint64_t pos;
    int err = fetch_add(fh, access_bytes(count, datatype), &pos);

    return err != MPI_SUCCESS ? err
                              : mca_common_ompio_file_write_at(fh, in_etypes(fh, pos), buf, count,
                                                               datatype, status);
}

static int sfp_iwrite(ompio_file_t *fh, const void *buf, int count,
                      struct ompi_datatype_t *datatype, ompi_request_t **request)
{
    uint64_t pos;
    int err = fetch_add(fh, access_bytes(count, datatype), &pos);

    return err != MPI_SUCCESS ? err
                              : mca_common_ompio_file_iwrite_at(fh, in_etypes(fh, pos), buf, count,
                                                                datatype, request);
}

/* The ordered calls: once the offsets are agreed, each process accesses
 * its own part by the independent call, as ROMIO's ordered calls do (the
 * parts do not interleave, so OMPIO's aggregation gains nothing; and its
 * collective read counted every byte asked for past the end of file:
 * session 80's review, tests/mpi/ps_shared). */
static int sfp_read_ordered(ompio_file_t *fh, void *buf, int count,
                            struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    uint64_t pos;
    int err = ordered_offset(fh, access_bytes(count, datatype), &pos);

    return err != MPI_SUCCESS ? err
                              : mca_common_ompio_file_read_at(fh, in_etypes(fh, pos), buf, count,
                                                              datatype, status);
}

static int sfp_write_ordered(ompio_file_t *fh, const void *buf, int count,
                             struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    uint64_t pos;
    int err = ordered_offset(fh, access_bytes(count, datatype), &pos);

    return err != MPI_SUCCESS ? err
                              : mca_common_ompio_file_write_at(fh, in_etypes(fh, pos), buf, count,
                                                               datatype, status);
}

/* Split ordered calls: the access runs in *_begin, *_end reports it. */
static int sfp_read_ordered_begin(ompio_file_t *fh, void *buf, int count,
                                  struct ompi_datatype_t *datatype)
{
    ps_sfp_t *sfp = fh->f_sharedfp_data;

    if (fh->f_split_coll_in_use) {
        return MPI_ERR_REQUEST;
    }
    sfp->split_err = sfp_read_ordered(fh, buf, count, datatype, &sfp->split_status);
    /* as Open MPI's own components: a failed begin begins nothing */
    fh->f_split_coll_in_use = sfp->split_err == MPI_SUCCESS;
    return sfp->split_err;
}

static int sfp_read_ordered_end(ompio_file_t *fh, void *buf, ompi_status_public_t *status)
{
    ps_sfp_t *sfp = fh->f_sharedfp_data;

    (void)buf;
    fh->f_split_coll_in_use = false;
    if (status != MPI_STATUS_IGNORE) {
        *status = sfp->split_status;
    }
    return sfp->split_err;
}

static int sfp_write_ordered_begin(ompio_file_t *fh, const void *buf, int count,
                                   struct ompi_datatype_t *datatype)
{
    ps_sfp_t *sfp = fh->f_sharedfp_data;

    if (fh->f_split_coll_in_use) {
        return MPI_ERR_REQUEST;
    }
    sfp->split_err = sfp_write_ordered(fh, buf, count, datatype, &sfp->split_status);
    /* as Open MPI's own components: a failed begin begins nothing */
    fh->f_split_coll_in_use = sfp->split_err == MPI_SUCCESS;
    return sfp->split_err;
}

static int sfp_write_ordered_end(ompio_file_t *fh, const void *buf, ompi_status_public_t *status)
{
    return sfp_read_ordered_end(fh, (void *)buf, status);
}

/* Collective, after the fs component opened the file: rank 0 draws the
 * instance and makes the counter at 0. If it cannot, the open still
 * succeeds (as under the ROMIO driver) and every shared access fails,
 * saying why. */
static int sfp_file_open(struct ompi_communicator_t *comm, const char *filename, int amode,
                         struct opal_info_t *info, ompio_file_t *fh)
{
    ps_sfp_t *sfp = calloc(1, sizeof(*sfp));
    unsigned long long instance = 0;
    char why[sizeof(sfp->why)] = "";
    int rank;

    (void)amode, (void)info;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        if (getrandom(&instance, sizeof(instance), 0) != (ssize_t)sizeof(instance)) {
            instance = 0;
            snprintf(why, sizeof(why), "no instance id (getrandom failed)");
        } else if (fh->f_fs_ptr == NULL) {
            instance = 0;
            snprintf(why, sizeof(why), "the file is not open");
        } else {
            instance = instance != 0 ? instance : 1;
            ps_status_t status = pstripe_sfp_set(pfile(fh), instance, 0, 0);

            if (status != PS_OK) {
                ps_ompio_report("cannot make the shared file pointer of", filename, status);
                snprintf(why, sizeof(why), "the server could not make one at the open: %s",
                         pstripe_last_error());
                instance = 0;
            }
        }
    }
    MPI_Bcast(&instance, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
    MPI_Bcast(why, sizeof(why), MPI_CHAR, 0, comm);
    if (sfp == NULL) {
        return MPI_ERR_NO_MEM;
    }
    sfp->instance = instance;
    snprintf(sfp->why, sizeof(sfp->why), "%s", why);
    fh->f_sharedfp_data = sfp;
    take_seek_shared(fh);
    return MPI_SUCCESS;
}

/* Collective: once every process is done with the pointer, rank 0
 * forgets it on the server. */
static int sfp_file_close(ompio_file_t *fh)
{
    ps_sfp_t *sfp = fh->f_sharedfp_data;
    ps_status_t status = PS_OK;

    if (sfp == NULL) {
        return MPI_SUCCESS;
    }
    MPI_Barrier(fh->f_comm);
    if (fh->f_rank == 0 && fh->f_fs_ptr != NULL && sfp->instance != 0) {
        status = pstripe_sfp_release(pfile(fh), sfp->instance);
    }
    free(sfp);
    fh->f_sharedfp_data = NULL;
    return status == PS_OK ? MPI_SUCCESS
                           : sfp_fail(fh, "cannot release the shared file pointer of", status);
}

static int sfp_module_init(ompio_file_t *fh)
{
    (void)fh;
    return OMPI_SUCCESS;
}

static int sfp_module_finalize(ompio_file_t *fh)
{
    (void)fh;
    return OMPI_SUCCESS;
}

static mca_sharedfp_base_module_1_0_0_t sfp_module = {
    sfp_module_init,
    sfp_module_finalize,
    sfp_seek,
    sfp_get_position,
    sfp_read,
    sfp_read_ordered,
    sfp_read_ordered_begin,
    sfp_read_ordered_end,
    sfp_iread,
    sfp_write,
    sfp_write_ordered,
    sfp_write_ordered_begin,
    sfp_write_ordered_end,
    sfp_iwrite,
    sfp_file_open,
    sfp_file_close,
};

/*
 * Open MPI asks every sharedfp component about every file it opens. Two are
 * for POSIX files and misbehave on pstripe names: lockedfile's query
 * formats the name into a 256-byte buffer (Open MPI 4.1.4: a name of 245
 * bytes or more aborts the program, "buffer overflow detected", on ufs
 * too), and sm's makes and maps a file in the session directory named
 * after it (an error on stderr for a name of about 200 bytes or more). So
 * their queries are wrapped: a pstripe file, which this component takes,
 * is not theirs to look at; any other file goes to them as before.
 */
typedef struct mca_sharedfp_base_module_1_0_0_t *(*sfp_query_fn)(ompio_file_t *, int *);

static const char *const posix_name[2] = {"lockedfile", "sm"};
static sfp_query_fn posix_query[2]; /* their own queries */

static struct mca_sharedfp_base_module_1_0_0_t *posix_guard(int i, ompio_file_t *fh, int *priority)
{
    return fh->f_fstype == PS_OMPIO_FSTYPE ? NULL : posix_query[i](fh, priority);
}

static struct mca_sharedfp_base_module_1_0_0_t *lockedfile_guard(ompio_file_t *fh, int *priority)
{
    return posix_guard(0, fh, priority);
}

static struct mca_sharedfp_base_module_1_0_0_t *sm_guard(ompio_file_t *fh, int *priority)
{
    return posix_guard(1, fh, priority);
}

static const sfp_query_fn posix_guard_fn[2] = {lockedfile_guard, sm_guard};

/* Wrap the queries of the POSIX components that are loaded (once: the
 * framework is opened once per process). */
static int sfp_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_base_component_list_item_t *cli;

    (void)enable_progress_threads;
    (void)enable_mpi_threads;
    OPAL_LIST_FOREACH(cli, &ompi_sharedfp_base_framework.framework_components,
                      mca_base_component_list_item_t)
    {
        mca_sharedfp_base_component_t *c = (mca_sharedfp_base_component_t *)cli->cli_component;

        for (int i = 0; i < 2; i++) {
            if (strcmp(c->sharedfpm_version.mca_component_name, posix_name[i]) == 0 &&
                c->sharedfpm_file_query != posix_guard_fn[i]) {
                posix_query[i] = c->sharedfpm_file_query;
                c->sharedfpm_file_query = posix_guard_fn[i];
            }
        }
    }
    return OMPI_SUCCESS;
}

static struct mca_sharedfp_base_module_1_0_0_t *sfp_file_query(ompio_file_t *fh, int *priority)
{
    *priority = sharedfp_priority;
    return fh->f_fstype == PS_OMPIO_FSTYPE ? &sfp_module : NULL;
}

static int sfp_file_unquery(ompio_file_t *fh)
{
    (void)fh;
    return OMPI_SUCCESS;
}

static int sfp_register(void);

__attribute__((visibility("default")))
mca_sharedfp_base_component_2_0_0_t mca_sharedfp_pstripe_component = {
    .sharedfpm_version =
        {
            MCA_SHAREDFP_BASE_VERSION_2_0_0,
            .mca_component_name = "pstripe",
            MCA_BASE_MAKE_VERSION(component, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                                  OMPI_RELEASE_VERSION),
            .mca_register_component_params = sfp_register,
        },
    .sharedfpm_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
    .sharedfpm_init_query = sfp_init_query,
    .sharedfpm_file_query = sfp_file_query,
    .sharedfpm_file_unquery = sfp_file_unquery,
};

static int sfp_register(void)
{
    int rc = ps_ompio_check_version("sharedfp");

    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    sharedfp_priority = 50;
    (void)mca_base_component_var_register(&mca_sharedfp_pstripe_component.sharedfpm_version,
                                          "priority",
                                          "Priority of the sharedfp pstripe component (it claims "
                                          "only files of the pstripe fs component)",
                                          MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9,
                                          MCA_BASE_VAR_SCOPE_READONLY, &sharedfp_priority);
    return OMPI_SUCCESS;
}

/*
 * sharedfp_pstripe.c: the pstripe sharedfp component of OMPIO.
 *
 * It claims the files of the pstripe fs component, so that no other
 * sharedfp component (sm, lockedfile, individual: they keep their pointer
 * in local files named after the file, which do not exist for a pstripe:
 * name) is tried on them. Shared file pointers need a counter on the
 * servers that this version of pstripe does not offer to Open MPI: every
 * shared-pointer read, write and MPI_File_get_position_shared fails with
 * MPI_ERR_UNSUPPORTED_OPERATION and says so (seeks are accepted, see
 * sfp_seek); the file's other operations are not affected.
 */
#include "ps_ompio.h"

#include "ompi/mca/sharedfp/sharedfp.h"

static int sharedfp_priority = 50;

static int refuse(ompio_file_t *fh, const char *op)
{
    return ps_ompio_code(MPI_ERR_UNSUPPORTED_OPERATION,
                         "pstripe: %s on %s: shared file pointers are not supported on pstripe "
                         "files under Open MPI; use explicit offsets or individual file pointers",
                         op, fh->f_filename);
}

/* OMPIO itself seeks the shared pointer, at every MPI_File_set_view and at
 * an MPI_MODE_APPEND open, and fails those if the seek fails: seeking is
 * accepted and moves nothing (there is no pointer to move); every operation
 * that would use the pointer refuses. */
static int sfp_seek(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE offset, int whence)
{
    (void)fh, (void)offset, (void)whence;
    return MPI_SUCCESS;
}

static int sfp_get_position(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE *offset)
{
    (void)offset;
    return refuse(fh, "MPI_File_get_position_shared");
}

static int sfp_read(ompio_file_t *fh, void *buf, int count, struct ompi_datatype_t *datatype,
                    ompi_status_public_t *status)
{
    (void)buf, (void)count, (void)datatype, (void)status;
    return refuse(fh, "MPI_File_read_shared");
}

static int sfp_read_ordered(ompio_file_t *fh, void *buf, int count,
                            struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    (void)buf, (void)count, (void)datatype, (void)status;
    return refuse(fh, "MPI_File_read_ordered");
}

static int sfp_read_ordered_begin(ompio_file_t *fh, void *buf, int count,
                                  struct ompi_datatype_t *datatype)
{
    (void)buf, (void)count, (void)datatype;
    return refuse(fh, "MPI_File_read_ordered_begin");
}

static int sfp_read_ordered_end(ompio_file_t *fh, void *buf, ompi_status_public_t *status)
{
    (void)buf, (void)status;
    return refuse(fh, "MPI_File_read_ordered_end");
}

static int sfp_iread(ompio_file_t *fh, void *buf, int count, struct ompi_datatype_t *datatype,
                     ompi_request_t **request)
{
    (void)buf, (void)count, (void)datatype, (void)request;
    return refuse(fh, "MPI_File_iread_shared");
}

static int sfp_write(ompio_file_t *fh, const void *buf, int count,
                     struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    (void)buf, (void)count, (void)datatype, (void)status;
    return refuse(fh, "MPI_File_write_shared");
}

static int sfp_write_ordered(ompio_file_t *fh, const void *buf, int count,
                             struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    (void)buf, (void)count, (void)datatype, (void)status;
    return refuse(fh, "MPI_File_write_ordered");
}

static int sfp_write_ordered_begin(ompio_file_t *fh, const void *buf, int count,
                                   struct ompi_datatype_t *datatype)
{
    (void)buf, (void)count, (void)datatype;
    return refuse(fh, "MPI_File_write_ordered_begin");
}

static int sfp_write_ordered_end(ompio_file_t *fh, const void *buf, ompi_status_public_t *status)
{
    (void)buf, (void)status;
    return refuse(fh, "MPI_File_write_ordered_end");
}

static int sfp_iwrite(ompio_file_t *fh, const void *buf, int count,
                      struct ompi_datatype_t *datatype, ompi_request_t **request)
{
    (void)buf, (void)count, (void)datatype, (void)request;
    return refuse(fh, "MPI_File_iwrite_shared");
}

static int sfp_file_open(struct ompi_communicator_t *comm, const char *filename, int amode,
                         struct opal_info_t *info, ompio_file_t *fh)
{
    (void)comm, (void)filename, (void)amode, (void)info, (void)fh;
    return OMPI_SUCCESS;
}

static int sfp_file_close(ompio_file_t *fh)
{
    (void)fh;
    return OMPI_SUCCESS;
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

static int sfp_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void)enable_progress_threads;
    (void)enable_mpi_threads;
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
    .sharedfpm_version = {
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

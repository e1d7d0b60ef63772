/*
 * ps_ompio_common.c: version check, error mapping and the atomic-mode lock,
 * compiled into each pstripe OMPIO component.
 */
#include "ps_ompio.h"

#include "ompi/file/file.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PS_OMPIO_NCLASSES 128

static int class_codes[PS_OMPIO_NCLASSES]; /* 0: none added yet */

int ps_ompio_check_version(const char *component)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = 0, major = -1, minor = -1;

    /* callable before MPI_Init; Open MPI's begins "Open MPI v4.1.4, ..." */
    memset(version, 0, sizeof(version));
    if (MPI_Get_library_version(version, &len) == MPI_SUCCESS &&
        sscanf(version, "Open MPI v%d.%d", &major, &minor) == 2 && major == OMPI_MAJOR_VERSION &&
        minor == OMPI_MINOR_VERSION) {
        return OMPI_SUCCESS;
    }
    version[strcspn(version, ",\n")] = '\0';
    opal_output(0,
                "pstripe: the %s component was built for Open MPI %d.%d, but this process "
                "runs \"%s\": not loaded (its structures differ between versions); "
                "rebuild pstripe against this Open MPI. pstripe: files cannot be opened.",
                component, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, version);
    return OMPI_ERR_NOT_SUPPORTED;
}

int ps_ompio_mpi_error(ps_status_t status)
{
    switch (status) {
    case PS_OK:
        return MPI_SUCCESS;
    case PS_ERR_NO_ENTRY:
    case PS_ERR_STALE: /* removed while open */
        return MPI_ERR_NO_SUCH_FILE;
    case PS_ERR_EXISTS:
        return MPI_ERR_FILE_EXISTS;
    case PS_ERR_ACCESS:
        return MPI_ERR_ACCESS;
    case PS_ERR_NO_SPACE:
        return MPI_ERR_NO_SPACE;
    case PS_ERR_NO_MEMORY:
        return MPI_ERR_NO_MEM;
    case PS_ERR_NAME_TOO_LONG:
    case PS_ERR_BAD_NAME:
        return MPI_ERR_BAD_FILE;
    case PS_ERR_INVALID:
        return MPI_ERR_ARG;
    case PS_ERR_UNSUPPORTED:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    case PS_ERR_BUSY: /* a name being renamed between servers */
        return MPI_ERR_FILE_IN_USE;
    default:
        return MPI_ERR_IO;
    }
}

int ps_ompio_code(int mpi_class, const char *fmt, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    va_list ap;
    int code;

    if (mpi_class == MPI_SUCCESS || mpi_class < 0 || mpi_class >= PS_OMPIO_NCLASSES) {
        return mpi_class;
    }
    code = class_codes[mpi_class];
    if (code == 0) {
        if (MPI_Add_error_code(mpi_class, &code) != MPI_SUCCESS) {
            return mpi_class;
        }
        class_codes[mpi_class] = code;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (MPI_Add_error_string(code, msg) != MPI_SUCCESS) {
        return mpi_class;
    }
    return code;
}

const char *ps_ompio_reason(ps_status_t status)
{
    const char *detail = pstripe_last_error();

    return detail != NULL && *detail != '\0' ? detail : pstripe_strerror(status);
}

int ps_ompio_fail_why(int mpi_class, const char *what, const char *path, const char *why)
{
    if (path != NULL && strstr(why, path) != NULL) { /* "cannot open /f: no such file" */
        return ps_ompio_code(mpi_class, "pstripe: %s", why);
    }
    return ps_ompio_code(mpi_class, "pstripe: %s %s: %s", what, path != NULL ? path : "", why);
}

int ps_ompio_fail(const char *what, const char *path, ps_status_t status)
{
    return ps_ompio_fail_why(ps_ompio_mpi_error(status), what, path, ps_ompio_reason(status));
}

void ps_ompio_report(const char *what, const char *path, ps_status_t status)
{
    const char *detail = pstripe_last_error();

    opal_output(0, "pstripe: %s %s: %s%s%s", what, path != NULL ? path : "",
                pstripe_strerror(status), (detail != NULL && *detail) ? ": " : "",
                detail != NULL ? detail : "");
}

int ps_ompio_note_failure(ps_ompio_file_t *pf, const char *what, const char *path,
                          ps_status_t status, int mpi_class)
{
    const char *detail = pstripe_last_error();

    if (pf == NULL || pf->failed_class != MPI_SUCCESS) {
        return 0;
    }
    if (detail == NULL || *detail == '\0') {
        detail = pstripe_strerror(status);
    }
    pf->failed_class = mpi_class != MPI_SUCCESS ? mpi_class : ps_ompio_mpi_error(status);
    snprintf(pf->failed_msg, sizeof(pf->failed_msg), "pstripe: an earlier %s %s failed: %s", what,
             path != NULL ? path : "", detail);
    return 1;
}

int ps_ompio_deferred(ps_ompio_file_t *pf)
{
    int cls;

    if (pf == NULL || pf->failed_class == MPI_SUCCESS) {
        return MPI_SUCCESS;
    }
    cls = pf->failed_class;
    pf->failed_class = MPI_SUCCESS;
    return ps_ompio_code(cls, "%s", pf->failed_msg);
}

struct mca_io_base_module_2_0_0_t *ps_ompio_io_module(ompio_file_t *fh)
{
    struct ompi_file_t *file = fh->f_fh;

    if (file != NULL && file->f_io_version == MCA_IO_BASE_V_2_0_0 &&
        file->f_io_selected_data != NULL &&
        &((mca_common_ompio_data_t *)file->f_io_selected_data)->ompio_fh == fh) {
        return &file->f_io_selected_module.v2_0_0;
    }
    return NULL;
}

const char *ps_ompio_path(const char *filename)
{
    if (filename == NULL || (strncmp(filename, PS_OMPIO_PREFIX, PS_OMPIO_PREFIX_LEN) != 0 &&
                             strncmp(filename, "PSTRIPE:", PS_OMPIO_PREFIX_LEN) != 0)) {
        return NULL;
    }
    return filename + PS_OMPIO_PREFIX_LEN;
}

/*
 * A passive-target lock on a one-byte window at rank 0, as the ROMIO driver
 * does (adio/ad_pstripe/ad_pstripe_lock.c): MPI may grant a lock lazily, so
 * a one-byte get completed by a flush inside the epoch makes it a real
 * mutex.
 */
int ps_ompio_lock(ps_ompio_file_t *pf, int exclusive)
{
    char byte;
    int rc;

    if (pf->lock_failed) {
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (pf->lock_win == MPI_WIN_NULL) {
        return MPI_SUCCESS; /* one process */
    }
    rc = MPI_Win_lock(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0, pf->lock_win);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = MPI_Get(&byte, 1, MPI_BYTE, 0, 0, 1, MPI_BYTE, pf->lock_win);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Win_flush(0, pf->lock_win);
    }
    if (rc != MPI_SUCCESS) {
        MPI_Win_unlock(0, pf->lock_win);
    }
    return rc;
}

void ps_ompio_unlock(ps_ompio_file_t *pf)
{
    if (pf->lock_win != MPI_WIN_NULL) {
        MPI_Win_unlock(0, pf->lock_win);
    }
}

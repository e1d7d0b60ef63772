/*
 * ad_pstripe_io.c: ReadContig and WriteContig, one striped request each.
 */

#include "ad_pstripe.h"

static void io_contig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                      int file_ptr_type, ADIO_Offset offset, ADIO_Status * status, int is_write,
                      int *error_code)
{
    MPI_Count datatype_size;
    uint64_t len, nbytes = 0;

    *error_code = MPI_SUCCESS;
    MPI_Type_size_x(datatype, &datatype_size);
    len = (uint64_t) datatype_size * (uint64_t) count;

    if (file_ptr_type == ADIO_INDIVIDUAL)
        offset = fd->fp_ind;
    else    /* (atomic iwrite_shared / iread_shared after their pointer failed) */
        *error_code = ADIOI_PSTRIPE_Sfp_failed_access(fd, offset, 0);

    if (len > 0 && *error_code == MPI_SUCCESS) {
        ADIOI_PSTRIPE_access acc;

        memset(&acc, 0, sizeof(acc));
        acc.one_region.offset = (uint64_t) offset;
        acc.one_region.length = len;
        acc.one_iov.iov_base = buf;
        acc.one_iov.iov_len = (size_t) len;
        acc.regions = &acc.one_region;
        acc.iov = &acc.one_iov;
        acc.nregions = acc.niov = 1;
        acc.total = (ADIO_Offset) len;
        acc.start = offset;
        acc.end = acc.hi = offset + (ADIO_Offset) len;
        *error_code = ADIOI_PSTRIPE_Access_io(fd, &acc, is_write, &nbytes);
    }
    if (*error_code != MPI_SUCCESS)
        return;

    /* as ROMIO's generic contiguous I/O: the file pointer moves by what
     * was transferred (a read stops at the end of the file) */
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind += (ADIO_Offset) nbytes;
    fd->fp_sys_posn = offset + (ADIO_Offset) nbytes;

#ifdef HAVE_STATUS_SET_BYTES
    if (status)
        MPIR_Status_set_bytes(status, datatype, (MPI_Count) nbytes);
#endif
}

void ADIOI_PSTRIPE_ReadContig(ADIO_File fd, void *buf, int count,
                              MPI_Datatype datatype, int file_ptr_type,
                              ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    io_contig(fd, buf, count, datatype, file_ptr_type, offset, status, 0, error_code);
}

void ADIOI_PSTRIPE_WriteContig(ADIO_File fd, const void *buf, int count,
                               MPI_Datatype datatype, int file_ptr_type,
                               ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    io_contig(fd, (void *) buf, count, datatype, file_ptr_type, offset, status, 1, error_code);
}

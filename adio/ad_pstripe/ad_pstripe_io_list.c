/*
 * ad_pstripe_io_list.c: noncontiguous independent I/O with list I/O.
 *
 * An access (count elements of a memory datatype, at an offset in the
 * current file view) becomes two lists: the file regions, in the order the
 * view assigns data to them, and the memory pieces, in the order the
 * datatype packs them. Both describe the same stream of bytes, so the
 * library can pair them up without us copying anything: one
 * pstripe_write_list or pstripe_read_list per call, split per server and
 * pipelined by the library. There is no data sieving and no
 * read-modify-write on the client: holes between regions are never read or
 * written. Neighbouring pieces are merged, so a contiguous tile boundary or
 * a contiguous memory type costs nothing.
 *
 * The file side follows ROMIO's own conventions (ADIOI_Calc_my_off_len):
 * block j of filetype instance n is at disp + n * extent + indices[j]; an
 * explicit offset counts etypes of view data; the individual file pointer
 * is a byte position that lies in a data block or at the end of one, and
 * after the access it points just past the last byte accessed.
 */

#include "ad_pstripe.h"

typedef struct {
    void *items;
    size_t n, cap, size;
} growvec;

static void *grow(growvec * v)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 16;
        v->items = ADIOI_Realloc(v->items, v->cap * v->size);
    }
    return (char *) v->items + v->n++ * v->size;
}

/*
 * Room for n regions in v (empty), from the file's spare array: a call of
 * 131,072 small regions built its 2 MiB array by doublings (a realloc
 * copy each, and fresh pages at every call: 12% of a 2-process list write
 * of 8-byte regions). The access gives the array back when freed.
 */
#define REGIONS_RESERVE_MAX (1 << 20)       /* regions reserved at once; more grow */

static void regions_reserve(ADIOI_PSTRIPE_fs * ps, growvec * v, size_t n)
{
    if (ps->spare_regions != NULL) {
        v->items = ps->spare_regions;
        v->cap = ps->spare_cap;
        ps->spare_regions = NULL;
        ps->spare_cap = 0;
    }
    if (v->cap < n) {
        v->items = ADIOI_Realloc(v->items, n * v->size);
        v->cap = n;
    }
}

static void add_region(growvec * v, ADIO_Offset off, ADIO_Offset len)
{
    pstripe_region_t *r;

    if (len <= 0)
        return;
    if (v->n > 0) {
        r = (pstripe_region_t *) v->items + v->n - 1;
        if (r->offset + r->length == (uint64_t) off) {
            r->length += (uint64_t) len;
            return;
        }
    }
    r = grow(v);
    r->offset = (uint64_t) off;
    r->length = (uint64_t) len;
}

static void add_iov(growvec * v, char *addr, ADIO_Offset len)
{
    struct iovec *io;

    if (len <= 0)
        return;
    if (v->n > 0) {
        io = (struct iovec *) v->items + v->n - 1;
        if ((char *) io->iov_base + io->iov_len == addr) {
            io->iov_len += (size_t) len;
            return;
        }
    }
    io = grow(v);
    io->iov_base = addr;
    io->iov_len = (size_t) len;
}

/* Bytes of view data that come before the byte position pos of the file
 * (pos is the individual file pointer: in a block, or at a block's end). */
static ADIO_Offset view_data_offset(ADIO_File fd, ADIOI_Flatlist_node * flat,
                                    MPI_Count ftype_size, MPI_Aint ftype_extent, ADIO_Offset pos)
{
    ADIO_Offset rel = pos - fd->disp, first = -1, n, local, cum = 0;
    MPI_Count i;

    for (i = 0; i < flat->count; i++) {
        if (flat->blocklens[i] > 0) {
            first = flat->indices[i];
            break;
        }
    }
    if (first < 0 || rel <= first)
        return 0;
    n = (rel - first) / ftype_extent;
    local = rel - n * ftype_extent;
    for (i = 0; i < flat->count; i++) {
        if (flat->blocklens[i] == 0)
            continue;
        if (flat->indices[i] + flat->blocklens[i] > local)
            return n * ftype_size + cum + MPL_MAX(0, local - flat->indices[i]);
        cum += flat->blocklens[i];
    }
    return (n + 1) * ftype_size;
}

/* Append a run, or extend the last one when it continues it (the next
 * instance of a vector view continues the previous one's run). */
static void add_run(growvec * v, ADIO_Offset off, ADIO_Offset len, ADIO_Offset stride,
                    ADIO_Offset count)
{
    pstripe_run_t *r;

    if (len <= 0 || count <= 0)
        return;
    if (count == 1)
        stride = len;
    if (v->n > 0) {
        r = (pstripe_run_t *) v->items + v->n - 1;
        if (r->length == (uint64_t) len && (r->count == 1 || r->stride == (uint64_t) stride) &&
            (uint64_t) off == r->offset + r->count * (uint64_t) stride &&
            (count == 1 || stride > len)) {
            r->stride = (uint64_t) stride;
            r->count += (uint64_t) count;
            return;
        }
    }
    r = grow(v);
    r->offset = (uint64_t) off;
    r->length = (uint64_t) len;
    r->stride = (uint64_t) stride;
    r->count = (uint64_t) count;
}

/* A filetype as one strided run: blocks of len bytes, stride bytes apart,
 * the first at first, blocks of them per instance; regular is 0 when the
 * type is not one such run. Kept as an attribute of the type (worked out
 * once per type; it goes with the type, so no view and no type ROMIO puts
 * in fd->filetype for a while, as its file-realm collectives do, can see
 * another's). */
typedef struct {
    int regular;
    ADIO_Offset first, len, stride, blocks;
} view_run;

static int view_run_keyval = MPI_KEYVAL_INVALID;

static int view_run_delete(MPI_Datatype type, int keyval, void *attr, void *extra)
{
    ADIOI_Free(attr);
    return MPI_SUCCESS;
}

void ADIOI_PSTRIPE_View_runs_end(void)
{
    if (view_run_keyval != MPI_KEYVAL_INVALID)
        MPI_Type_free_keyval(&view_run_keyval);
}

/* Is the filetype one strided run: blocks of one length at one stride, in
 * order (empty blocks before and after them, the markers of a resized
 * type's bounds, carry no data)? */
static const view_run *view_run_of(MPI_Datatype type, ADIOI_Flatlist_node * flat)
{
    view_run *vr;
    ADIO_Offset len, stride;
    MPI_Count j0 = 0, j1 = flat->count, j;
    int found = 0;

    if (view_run_keyval == MPI_KEYVAL_INVALID)
        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, view_run_delete, &view_run_keyval, NULL);
    MPI_Type_get_attr(type, view_run_keyval, &vr, &found);
    if (found)
        return vr;
    vr = ADIOI_Calloc(1, sizeof(*vr));
    while (j0 < j1 && flat->blocklens[j0] == 0)
        j0++;
    while (j1 > j0 && flat->blocklens[j1 - 1] == 0)
        j1--;
    len = j1 > j0 ? flat->blocklens[j0] : 0;
    stride = j1 - j0 > 1 ? flat->indices[j0 + 1] - flat->indices[j0] : len;
    for (j = j0; j < j1 && len > 0 && stride >= len; j++)
        if (flat->blocklens[j] != len || flat->indices[j] != flat->indices[j0] + (j - j0) * stride)
            break;
    if (len > 0 && stride >= len && j == j1) {
        vr->regular = 1;
        vr->first = flat->indices[j0];
        vr->len = len;
        vr->stride = stride;
        vr->blocks = j1 - j0;
    }
    MPI_Type_set_attr(type, view_run_keyval, vr);
    return vr;
}

/* The file side of an access of a view that is one strided run: total
 * bytes from view data offset data_off, one run per filetype instance
 * (merged when the next continues it), a block cut at either end a run of
 * its own. */
static void build_runs(ADIO_File fd, const view_run * vr, ADIO_Offset data_off,
                       ADIO_Offset total, MPI_Count ftype_size, MPI_Aint extent, growvec * runs)
{
    ADIO_Offset len = vr->len, stride = vr->stride, nb = vr->blocks;
    ADIO_Offset base = fd->disp + (data_off / ftype_size) * (ADIO_Offset) extent;
    ADIO_Offset within = data_off % ftype_size, j = within / len, skip = within % len;
    ADIO_Offset left = total, off, m;

    while (left > 0) {
        off = base + vr->first + j * stride;
        if (skip > 0 || left < len) {   /* part of a block */
            m = MPL_MIN(len - skip, left);
            add_run(runs, off + skip, m, m, 1);
            left -= m;
            skip = 0;
            j++;
        } else {
            m = MPL_MIN(nb - j, left / len);
            add_run(runs, off, len, stride, m);
            left -= m * len;
            j += m;
        }
        if (j == nb) {
            j = 0;
            base += extent;
        }
    }
}

void ADIOI_PSTRIPE_Access_build(ADIO_File fd, const void *buf, int count,
                                MPI_Datatype datatype, int file_ptr_type,
                                ADIO_Offset offset, ADIOI_PSTRIPE_access * acc,
                                int *error_code)
{
    growvec regions = { NULL, 0, 0, sizeof(pstripe_region_t) };
    growvec iovs = { NULL, 0, 0, sizeof(struct iovec) };
    ADIOI_Flatlist_node *flat;
    MPI_Count buftype_size, ftype_size, i, j;
    MPI_Aint lb, extent;
    ADIO_Offset total, off, data_off, n, within, cum, left, take, skip, at, lo, hi;
    const view_run *vr;
    int contig;

    *error_code = MPI_SUCCESS;
    memset(acc, 0, sizeof(*acc));
    MPI_Type_size_x(datatype, &buftype_size);
    total = (ADIO_Offset) buftype_size * (ADIO_Offset) count;
    acc->total = total;

    /* memory */
    ADIOI_Datatype_iscontig(datatype, &contig);
    if (contig) {
        acc->one_iov.iov_base = (void *) buf;
        acc->one_iov.iov_len = (size_t) total;
        acc->iov = &acc->one_iov;
        acc->niov = total > 0 ? 1 : 0;
    } else if (total > 0) {
        flat = ADIOI_Flatten_and_find(datatype);
        MPI_Type_get_extent(datatype, &lb, &extent);
        for (j = 0; j < count; j++)
            for (i = 0; i < flat->count; i++)
                add_iov(&iovs, (char *) buf + j * (ADIO_Offset) extent + flat->indices[i],
                        flat->blocklens[i]);
        acc->iov = iovs.items;
        acc->niov = iovs.n;
    }

    /* file */
    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    if (contig) {
        off = (file_ptr_type == ADIO_INDIVIDUAL) ? fd->fp_ind :
            fd->disp + (ADIO_Offset) fd->etype_size * offset;
        acc->one_region.offset = (uint64_t) off;
        acc->one_region.length = (uint64_t) total;
        acc->regions = &acc->one_region;
        acc->nregions = total > 0 ? 1 : 0;
        acc->start = off;
        acc->end = acc->hi = off + total;
        return;
    }

    flat = ADIOI_Flatten_and_find(fd->filetype);
    MPI_Type_size_x(fd->filetype, &ftype_size);
    MPI_Type_get_extent(fd->filetype, &lb, &extent);
    if (ftype_size == 0 || total == 0) {
        /* nothing to access (a view with no data, or a count of 0, as a
         * process may give a collective call): the individual file pointer
         * stays where it is */
        acc->start = acc->end = acc->hi = (file_ptr_type == ADIO_INDIVIDUAL) ? fd->fp_ind : fd->disp;
        acc->total = 0;
        return;
    }
    if (file_ptr_type == ADIO_INDIVIDUAL)
        data_off = view_data_offset(fd, flat, ftype_size, extent, fd->fp_ind);
    else
        data_off = (ADIO_Offset) fd->etype_size * offset;
    vr = total > 0 ? view_run_of(fd->filetype, flat) : NULL;
    if (vr != NULL && vr->regular) {
        growvec runs = { NULL, 0, 0, sizeof(pstripe_run_t) };
        pstripe_run_t *last;
        size_t r;

        build_runs(fd, vr, data_off, total, ftype_size, extent, &runs);
        acc->runs = runs.items;
        acc->nruns = runs.n;
        acc->runs_cap = runs.cap;
        last = &acc->runs[runs.n - 1];
        acc->start = (ADIO_Offset) acc->runs[0].offset;
        acc->end = (ADIO_Offset) (last->offset + (last->count - 1) * last->stride + last->length);
        for (r = 0, acc->hi = 0; r < runs.n; r++) {
            last = &acc->runs[r];
            acc->nregions += last->count;
            acc->start = MPL_MIN(acc->start, (ADIO_Offset) last->offset);
            acc->hi = MPL_MAX(acc->hi, (ADIO_Offset) (last->offset + (last->count - 1) *
                                                      last->stride + last->length));
        }
        return;
    }
    regions_reserve(fd->fs_ptr, &regions,
                    (size_t) MPL_MIN(flat->count * (total / ftype_size + 2), REGIONS_RESERVE_MAX));

    n = data_off / ftype_size;
    within = data_off % ftype_size;
    for (i = 0, cum = 0; i < flat->count; i++) {
        if (cum + flat->blocklens[i] > within)
            break;
        cum += flat->blocklens[i];
    }
    skip = within - cum;
    left = total;
    off = fd->disp + n * (ADIO_Offset) extent;
    lo = -1;
    hi = 0;
    while (left > 0) {
        take = MPL_MIN(flat->blocklens[i] - skip, left);
        at = off + flat->indices[i] + skip;
        add_region(&regions, at, take);
        lo = lo < 0 ? at : MPL_MIN(lo, at);     /* (overlapping blocks go back) */
        hi = MPL_MAX(hi, at + take);
        left -= take;
        skip = 0;
        if (++i == flat->count) {
            i = 0;
            off += extent;
        }
    }
    acc->regions = regions.items;
    acc->nregions = regions.n;
    acc->regions_cap = regions.cap;
    acc->start = lo;
    acc->end = (ADIO_Offset) (acc->regions[regions.n - 1].offset +
                              acc->regions[regions.n - 1].length);
    acc->hi = hi;
}

/* The regions of an access given as runs (no-op once they are there). */
void ADIOI_PSTRIPE_Access_regions(ADIO_File fd, ADIOI_PSTRIPE_access * acc)
{
    growvec regions = { NULL, 0, 0, sizeof(pstripe_region_t) };

    if (acc->regions != NULL || acc->nruns == 0)
        return;
    regions_reserve(fd->fs_ptr, &regions, acc->nregions);
    pstripe_runs_regions(acc->runs, acc->nruns, regions.items);
    acc->regions = regions.items;
    acc->regions_cap = regions.cap;
}

void ADIOI_PSTRIPE_Access_free(ADIO_File fd, ADIOI_PSTRIPE_access * acc)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    if (acc->regions != &acc->one_region && acc->regions != NULL) {
        if (ps->spare_regions == NULL && acc->regions_cap > 0) {
            ps->spare_regions = acc->regions;   /* for the next access */
            ps->spare_cap = acc->regions_cap;
        } else {
            ADIOI_Free(acc->regions);
        }
    }
    if (acc->iov != &acc->one_iov && acc->iov != NULL)
        ADIOI_Free(acc->iov);
    if (acc->runs != NULL)
        ADIOI_Free(acc->runs);
    acc->runs = NULL;
    acc->regions = NULL;
    acc->iov = NULL;
}

/* One access, blocking: through the write-behind buffer or the read cache
 * (ad_pstripe_cache.c), else to the servers. *nbytes: the bytes moved (a
 * read's: those below the end of file). Returns an MPI error code. */
int ADIOI_PSTRIPE_Access_io(ADIO_File fd, ADIOI_PSTRIPE_access * acc, int is_write,
                            uint64_t * nbytes)
{
    static char myname[] = "ADIOI_PSTRIPE_ACCESS_IO";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int rc = PS_OK, handled, err;

    *nbytes = 0;
    handled = is_write ? ADIOI_PSTRIPE_Cache_write(fd, acc, &err)
        : ADIOI_PSTRIPE_Cache_read(fd, acc, nbytes, &err);
    if (err != MPI_SUCCESS)
        return err;
    if (handled)
        rc = PS_OK;
    else if (is_write && acc->regions == NULL)
        rc = pstripe_write_runs(ps->file, acc->runs, acc->nruns, acc->iov, acc->niov);
    else if (is_write)
        rc = pstripe_write_list(ps->file, acc->regions, acc->nregions, acc->iov, acc->niov);
    else if (acc->regions == NULL)
        rc = pstripe_read_runs(ps->file, acc->runs, acc->nruns, acc->iov, acc->niov, nbytes);
    else
        rc = pstripe_read_list(ps->file, acc->regions, acc->nregions, acc->iov, acc->niov,
                               nbytes);
    if (rc != PS_OK)
        return ADIOI_PSTRIPE_err(myname, is_write ? "write" : "read", ps->path, __LINE__, rc,
                                 NULL);
    if (is_write) {
        *nbytes = (uint64_t) acc->total;
        fd->dirty_write = 1;
    }
    return MPI_SUCCESS;
}

/* Blocking list I/O of one access (in atomic mode under the lock). */
static void list_io(ADIO_File fd, void *buf, int count, MPI_Datatype datatype, int file_ptr_type,
                    ADIO_Offset offset, ADIO_Status * status, int is_write, int *error_code)
{
    ADIOI_PSTRIPE_access acc;
    uint64_t nbytes = 0;

    ADIOI_PSTRIPE_Access_build(fd, buf, count, datatype, file_ptr_type, offset, &acc,
                               error_code);
    if (*error_code != MPI_SUCCESS)
        return;

    if (acc.total > 0) {
        if (fd->atomicity)
            *error_code = ADIOI_PSTRIPE_Lock(fd, is_write);
        if (*error_code != MPI_SUCCESS)
            goto fn_exit;
        *error_code = ADIOI_PSTRIPE_Access_io(fd, &acc, is_write, &nbytes);
        if (fd->atomicity)
            ADIOI_PSTRIPE_Unlock(fd);
        if (*error_code != MPI_SUCCESS)
            goto fn_exit;
    }

    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind = acc.end;
    fd->fp_sys_posn = -1;
#ifdef HAVE_STATUS_SET_BYTES
    if (status)
        MPIR_Status_set_bytes(status, datatype, (MPI_Count) nbytes);
#endif

  fn_exit:
    ADIOI_PSTRIPE_Access_free(fd, &acc);
}

/* A blocking noncontiguous access (ReadStrided, WriteStrided; also the
 * nonblocking ones done at once): our list I/O, or ROMIO's data sieving over
 * our contiguous calls when the listio hint disables it, for comparison (a
 * write then reads, modifies and writes back under our whole-file lock). */
void ADIOI_PSTRIPE_Strided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                           int is_write, int *error_code)
{
    /* (atomic iwrite_shared / iread_shared after their pointer failed) */
    *error_code = file_ptr_type == ADIO_EXPLICIT_OFFSET
        ? ADIOI_PSTRIPE_Sfp_failed_access(fd, offset, 1) : MPI_SUCCESS;
    if (*error_code != MPI_SUCCESS)
        return;
    if (ADIOI_PSTRIPE_Listio(fd, is_write))
        list_io(fd, buf, count, datatype, file_ptr_type, offset, status, is_write, error_code);
    else if (is_write)
        ADIOI_GEN_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                               error_code);
    else
        ADIOI_GEN_ReadStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                              error_code);
}

void ADIOI_PSTRIPE_ReadStrided(ADIO_File fd, void *buf, int count,
                               MPI_Datatype datatype, int file_ptr_type,
                               ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    ADIOI_PSTRIPE_Strided(fd, buf, count, datatype, file_ptr_type, offset, status, 0, error_code);
}

void ADIOI_PSTRIPE_WriteStrided(ADIO_File fd, const void *buf, int count,
                                MPI_Datatype datatype, int file_ptr_type,
                                ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    ADIOI_PSTRIPE_Strided(fd, (void *) buf, count, datatype, file_ptr_type, offset, status, 1,
                          error_code);
}

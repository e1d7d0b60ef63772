/*
 * psc_runs.c: region lists in their strided form (pstripe_run_t), built
 * one region at a time (pstripe_runs_append: an MPI layer flattening a
 * view) and expanded back into regions (pstripe_runs_regions: for the
 * caches, which take regions). The I/O calls take either form
 * (pstripe_write_list / pstripe_write_runs, psc_io.c).
 */
#include "pstripe.h"

void pstripe_runs_append(pstripe_run_t *runs, size_t *nruns, uint64_t offset, uint64_t length)
{
    pstripe_run_t *r = *nruns > 0 ? &runs[*nruns - 1] : NULL;

    if (length == 0) {
        return;
    }
    if (r != NULL && r->count == 1 && offset == r->offset + r->length) {
        r->length += length; /* right after a single region: one region */
        r->stride = r->length;
        return;
    }
    if (r != NULL && length == r->length) {
        if (r->count == 1 && offset > r->offset + r->length) {
            r->stride = offset - r->offset;
            r->count = 2;
            return;
        }
        if (r->count > 1 && offset == r->offset + r->count * r->stride) {
            r->count++;
            return;
        }
    }
    r = &runs[(*nruns)++];
    r->offset = offset;
    r->length = length;
    r->stride = length;
    r->count = 1;
}

void pstripe_runs_regions(const pstripe_run_t *runs, size_t nruns, pstripe_region_t *regions)
{
    for (size_t i = 0; i < nruns; i++) {
        for (uint64_t c = 0; c < runs[i].count; c++) {
            regions->offset = runs[i].offset + c * runs[i].stride;
            regions++->length = runs[i].length;
        }
    }
}

/*
 * psb_pattern.c: file layouts, file views and verification data.
 *
 * The strided patterns (vector, subarray, indexed, per-region) all put the
 * same bytes at the same file offsets; they differ only in how the MPI
 * program describes them to MPI-IO. That makes their bandwidths directly
 * comparable: a difference is the cost of the description (datatype
 * flattening, list I/O, data sieving, one request per region), not of the
 * data.
 *
 * The view's filetype covers m regions (m = xfer / region, at least 1) and is
 * tiled by MPI: tile n starts at n * m * (P+G) * region, and since a block
 * holds a whole number of tiles the segments need no special case.
 *
 * Verification data depend only on the file offset (a hash of the 8-byte
 * word index, then the byte within the word), so any process can check any
 * byte, whichever process wrote it and however it was described.
 */
#include "psb.h"

#include <stdlib.h>
#include <string.h>

static const char *psb_pattern_names[PSB_PATTERN_LAST] = {
    "contig", "vector", "subarray", "indexed", "per-region",
};

const char *psb_pattern_name(psb_pattern_t pattern)
{
    return psb_pattern_names[pattern];
}

int psb_pattern_parse(const char *name, psb_pattern_t *pattern)
{
    for (int i = 0; i < PSB_PATTERN_LAST; i++) {
        if (strcmp(name, psb_pattern_names[i]) == 0) {
            *pattern = (psb_pattern_t)i;
            return 0;
        }
    }
    if (strcmp(name, "perregion") == 0) {
        *pattern = PSB_PATTERN_PER_REGION;
        return 0;
    }
    return -1;
}

int psb_pattern_strided(psb_pattern_t pattern)
{
    return pattern != PSB_PATTERN_CONTIG;
}

int64_t psb_file_offset(const psb_layout_t *l, int64_t q)
{
    int64_t slots = l->nprocs + l->gap;
    int64_t k = q / l->block;
    int64_t in_block = q % l->block;

    if (!psb_pattern_strided(l->pattern)) {
        return (k * slots + l->rank) * l->block + in_block;
    }
    int64_t i = in_block / l->region;
    int64_t w = in_block % l->region;
    return k * slots * l->block + (i * slots + l->rank) * l->region + w;
}

int64_t psb_run_length(const psb_layout_t *l, int64_t q, int64_t max)
{
    int64_t unit = psb_pattern_strided(l->pattern) ? l->region : l->block;
    int64_t left = unit - q % unit;

    /* Without other processes or holes, consecutive units touch. */
    if (l->nprocs + l->gap == 1) {
        left = max;
    }
    return left < max ? left : max;
}

int64_t psb_regions_in(const psb_layout_t *l, int64_t q, int64_t len)
{
    int64_t n = 0;

    if (l->nprocs + l->gap == 1) {
        return len > 0 ? 1 : 0;
    }
    int64_t unit = psb_pattern_strided(l->pattern) ? l->region : l->block;
    int64_t first = q / unit;
    int64_t last = (q + len - 1) / unit;
    if (len > 0) {
        n = last - first + 1;
    }
    return n;
}

int psb_set_view(MPI_File fh, const psb_layout_t *l, MPI_Info info)
{
    MPI_Datatype base, ftype;
    MPI_Offset disp = 0;
    int64_t slots = l->nprocs + l->gap;
    int64_t m = l->xfer > l->region ? l->xfer / l->region : 1;
    int rc;

    /* A tile must divide the block; xfer and region divide it already. */
    while (m > 1 && (l->block / l->region) % m != 0) {
        m--;
    }
    MPI_Aint extent = (MPI_Aint)(m * slots * l->region);

    switch (l->pattern) {
    case PSB_PATTERN_VECTOR:
        MPI_Type_vector((int)m, (int)l->region, (int)(slots * l->region),
                        MPI_BYTE, &base);
        MPI_Type_create_resized(base, 0, extent, &ftype);
        MPI_Type_free(&base);
        disp = (MPI_Offset)l->rank * l->region;
        break;
    case PSB_PATTERN_SUBARRAY: {
        int sizes[2] = {(int)m, (int)(slots * l->region)};
        int subsizes[2] = {(int)m, (int)l->region};
        int starts[2] = {0, (int)(l->rank * l->region)};
        MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C,
                                 MPI_BYTE, &ftype);
        break;
    }
    case PSB_PATTERN_INDEXED: {
        int *displs = malloc((size_t)m * sizeof(*displs));
        if (displs == NULL) {
            return MPI_ERR_NO_MEM;
        }
        for (int64_t i = 0; i < m; i++) {
            displs[i] = (int)((i * slots + l->rank) * l->region);
        }
        MPI_Type_create_indexed_block((int)m, (int)l->region, displs, MPI_BYTE,
                                      &base);
        free(displs);
        MPI_Type_create_resized(base, 0, extent, &ftype);
        MPI_Type_free(&base);
        break;
    }
    default:
        return MPI_SUCCESS;
    }
    MPI_Type_commit(&ftype);
    rc = MPI_File_set_view(fh, disp, MPI_BYTE, ftype, "native", info);
    MPI_Type_free(&ftype);
    return rc;
}

static inline uint64_t psb_mix(uint64_t x)
{
    /* splitmix64 finalizer */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void psb_fill_run(uint64_t seed, int64_t fo, unsigned char *p,
                         int64_t len)
{
    while (len > 0) {
        uint64_t word = psb_mix(((uint64_t)fo >> 3) ^ (seed << 40));
        int b = (int)(fo & 7);
        for (; b < 8 && len > 0; b++, len--, fo++) {
            *p++ = (unsigned char)(word >> (8 * b));
        }
    }
}

void psb_fill(const psb_layout_t *l, uint64_t seed, int64_t q,
              unsigned char *buf, int64_t len)
{
    while (len > 0) {
        int64_t run = psb_run_length(l, q, len);
        psb_fill_run(seed, psb_file_offset(l, q), buf, run);
        buf += run;
        q += run;
        len -= run;
    }
}

int64_t psb_check(const psb_layout_t *l, uint64_t seed, int64_t q,
                  const unsigned char *buf, int64_t len, int64_t *first_bad)
{
    unsigned char tmp[4096];
    int64_t bad = 0;

    while (len > 0) {
        int64_t run = psb_run_length(l, q, len);
        int64_t fo = psb_file_offset(l, q);
        for (int64_t done = 0; done < run;) {
            int64_t n = run - done < (int64_t)sizeof(tmp)
                            ? run - done
                            : (int64_t)sizeof(tmp);
            psb_fill_run(seed, fo + done, tmp, n);
            if (memcmp(tmp, buf + done, (size_t)n) != 0) {
                for (int64_t i = 0; i < n; i++) {
                    if (tmp[i] != buf[done + i]) {
                        if (bad == 0) {
                            *first_bad = fo + done + i;
                        }
                        bad++;
                    }
                }
            }
            done += n;
        }
        buf += run;
        q += run;
        len -= run;
    }
    return bad;
}

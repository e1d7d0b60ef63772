/*
 * psc_mem.c: memory for I/O buffers (pstripe_buffer_alloc).
 *
 * The buffers that writes are staged and cached in (the library's staging
 * buffers, the driver's write-behind buffers, read cache and read-ahead
 * windows, its collective buffers) are large, short-lived (a file's open,
 * a burst of batches) and written whole soon after they are made, so their
 * cost is the first touch: one page fault per 4 KiB page, about 17 us
 * each on the VM we measure on (one store per page over 4 MiB of fresh
 * memory: 17.5-18.1 ms). From PS_MEM_HUGE / 2 up they are mapped on their
 * own, 2 MiB-aligned and in whole 2 MiB pieces, with MADV_HUGEPAGE
 * (ps_mem_map_huge): where
 * transparent huge pages are enabled (Debian's default is "madvise") each
 * piece costs one fault (the same 4 MiB: 0.2-0.7 ms). Smaller buffers come
 * from the heap (posix_memalign). Where huge pages are off, or none is
 * free, the kernel backs the mapping with small pages: as before, never an
 * error.
 *
 * A header in front of each buffer says how it was made, so that
 * pstripe_buffer_free needs only the pointer: for a mapped buffer it sits
 * at the end of a page of its own below the aligned start.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pstripe.h"

#include "ps_mem.h"

#define PSC_MEM_HDR   64 /* keeps the buffer 64-byte aligned */
#define PSC_MEM_PAGE  4096ull
#define PSC_MEM_MAGIC 0x70736d656d627566ull

typedef struct {
    uint64_t magic;
    uint64_t mapped; /* bytes mapped from the buffer's start; 0: malloc */
} psc_mem_hdr_t;

void *pstripe_buffer_alloc(size_t size, size_t *capacity)
{
    psc_mem_hdr_t *hdr;
    size_t cap;
    char *buf;

    if (size > SIZE_MAX - 2 * PS_MEM_HUGE) {
        return NULL;
    }
    if (size < PS_MEM_HUGE / 2) {
        cap = size;
        if (posix_memalign((void **)&hdr, PSC_MEM_HDR, PSC_MEM_HDR + cap) != 0) {
            return NULL;
        }
        buf = (char *)hdr + PSC_MEM_HDR;
        hdr->mapped = 0;
    } else {
        cap = ps_mem_huge_round(size);
        buf = ps_mem_map_huge(cap, PSC_MEM_PAGE);
        if (buf == NULL) {
            return NULL;
        }
        hdr = (psc_mem_hdr_t *)(buf - PSC_MEM_HDR);
        hdr->mapped = cap;
    }
    hdr->magic = PSC_MEM_MAGIC;
    if (capacity != NULL) {
        *capacity = cap;
    }
    return buf;
}

void pstripe_buffer_free(void *buf)
{
    psc_mem_hdr_t *hdr;

    if (buf == NULL) {
        return;
    }
    hdr = (psc_mem_hdr_t *)((char *)buf - PSC_MEM_HDR);
    if (hdr->magic != PSC_MEM_MAGIC) {
        /* not ours, or freed twice: memory is already corrupt */
        fprintf(stderr,
                "pstripe_buffer_free: %p was not made by pstripe_buffer_alloc, or is freed "
                "twice\n",
                buf);
        abort();
    }
    hdr->magic = 0;
    if (hdr->mapped == 0) {
        free(hdr);
    } else {
        ps_mem_unmap_huge(buf, hdr->mapped, PSC_MEM_PAGE);
    }
}

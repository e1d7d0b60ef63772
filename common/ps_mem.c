/*
 * ps_mem.c: memory mapped on huge-page boundaries (see ps_mem.h): a mapping
 * one huge page larger than asked, trimmed at both ends.
 */
#include "ps_mem.h"

#include <stdint.h>
#include <sys/mman.h>

void *ps_mem_map_huge(size_t len, size_t below)
{
    size_t span;
    uintptr_t base, start, end;
    void *map;

    if (len > SIZE_MAX - below - PS_MEM_HUGE) {
        return NULL;
    }
    span = below + len + PS_MEM_HUGE;
    map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        return NULL;
    }
    base = (uintptr_t)map;
    start = (base + below + PS_MEM_HUGE - 1) & ~(uintptr_t)(PS_MEM_HUGE - 1);
    end = base + span;
    if (start - below > base) {
        munmap(map, start - below - base);
    }
    if (end > start + len) {
        munmap((void *)(start + len), end - start - len);
    }
    madvise((void *)start, len, MADV_HUGEPAGE); /* a hint: failure is harmless */
    return (void *)start;
}

void ps_mem_unmap_huge(void *p, size_t len, size_t below)
{
    if (p != NULL) {
        munmap((char *)p - below, below + len);
    }
}

/*
 * ps_mem.h: memory mapped on huge-page boundaries, for the large buffers of
 * the client library (pstripe_buffer_alloc) and of the servers (their
 * cache, their I/O buffers).
 *
 * On the VMs we measure on memory of 4 KiB pages is expensive: its first
 * touch costs a fault of about 17 us a page, and the servers spent 10-30%
 * more CPU on the same transfers with their cache and buffers on 4 KiB
 * pages than on 2 MiB ones (doc/journal/issue-8.md, session 31). Where
 * transparent huge pages are enabled (Debian's default is "madvise") a
 * mapping made here is backed by 2 MiB pages; where they are off, or none
 * is free, by small pages: never an error.
 */
#ifndef PS_MEM_H
#define PS_MEM_H

#include <stddef.h>

#define PS_MEM_HUGE ((size_t)2 << 20)

/* len rounded up to whole huge pages (what ps_mem_map_huge takes). */
static inline size_t ps_mem_huge_round(size_t len)
{
    return (len + PS_MEM_HUGE - 1) / PS_MEM_HUGE * PS_MEM_HUGE;
}

/* len bytes (a multiple of PS_MEM_HUGE: ps_mem_huge_round) of fresh zeroed memory starting on
 * a PS_MEM_HUGE boundary, with transparent huge pages requested, and
 * `below` bytes (a multiple of the page size, or 0) mapped just below the
 * start; NULL when out of memory. */
void *ps_mem_map_huge(size_t len, size_t below);

/* Unmap what ps_mem_map_huge(len, below) returned. */
void ps_mem_unmap_huge(void *p, size_t len, size_t below);

#endif

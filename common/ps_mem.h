/*
 * ps_mem.h: memory mapped on huge-page boundaries, for the large buffers of
 * the client library (pstripe_buffer_alloc) and of the servers (their
 * cache, their I/O buffers).
 *
 * On the VMs we measure on a 4 KiB page is expensive twice over: its first
 * touch (a fault, about 17 us) and every TLB miss on it afterwards (a
 * server's copies into a cache of 4 KiB pages cost a quarter more CPU than
 * into the same cache on 2 MiB pages: doc/status.md, session 31). Where
 * transparent huge pages are enabled (Debian's default is "madvise") a
 * mapping made here is backed by 2 MiB pages; where they are off, or none
 * is free, by small pages: never an error.
 */
#ifndef PS_MEM_H
#define PS_MEM_H

#include <stddef.h>

#define PS_MEM_HUGE ((size_t)2 << 20)

/* len bytes (a multiple of PS_MEM_HUGE) of fresh zeroed memory starting on
 * a PS_MEM_HUGE boundary, with transparent huge pages requested, and
 * `below` bytes (a multiple of the page size, or 0) mapped just below the
 * start; NULL when out of memory. */
void *ps_mem_map_huge(size_t len, size_t below);

/* Unmap what ps_mem_map_huge(len, below) returned. */
void ps_mem_unmap_huge(void *p, size_t len, size_t below);

#endif

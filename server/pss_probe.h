/*
 * pss_probe.h: the start-up probe of the object directory's file system.
 */
#ifndef PSS_PROBE_H
#define PSS_PROBE_H

#include "pss.h"

/*
 * Probe DIR/obj (s->obj_dir_fd): the O_DIRECT alignment (want: 1 = required,
 * 0 = not wanted, -1 = if available), the block size that disk I/O and
 * object lengths are planned in, and support for the size attribute. Sets
 * s->direct_io, s->align and s->mem_align.
 */
ps_status_t pss_probe(pss_server_t *s, int want);

#endif

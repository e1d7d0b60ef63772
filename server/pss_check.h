/*
 * pss_check.h: is a data directory's metadata store usable? Checked before
 * the server opens it, and by `pstripe-server --check`.
 */
#ifndef PSS_CHECK_H
#define PSS_CHECK_H

#include <stdint.h>

#include "ps_status.h"

typedef struct pss_meta_report {
    int store_found;       /* DIR/meta/data.mdb exists and is not empty */
    uint64_t paths;        /* entries of the namespace */
    uint64_t bad_entries;  /* entries whose value is not a file record */
    int has_server_id;     /* the store holds a server id */
    uint64_t objects;      /* object files under DIR/obj */
    char problem[512];     /* why the store must not be used, naming files relative
                            * to the data directory; "" if it may be used */
} pss_meta_report_t;

/*
 * Check DIR's metadata store without trusting it: it is read by a child
 * process (a truncated or overwritten LMDB file can make a reader fault),
 * every entry of the namespace is visited, and the objects are counted. A
 * missing, empty or damaged store in a directory that holds objects is a
 * problem (the namespace would silently start empty); so is one that cannot
 * be read. PS_OK when the check ran (the verdict is in rep->problem).
 */
ps_status_t pss_meta_check(const char *data_dir, pss_meta_report_t *rep);

#endif

/*
 * psc_fs.h: what the API files share from psc_fs.c: argument checks and a
 * new file's tunables.
 */
#ifndef PSC_FS_H
#define PSC_FS_H

#include <stddef.h>

#include "psc_internal.h"

/* PS_OK, or PS_ERR_INVALID with a message for a NULL fs. */
ps_status_t psc_check_fs(pstripe_fs_t *fs);
/* Normalize a user path into out (PS_PATH_MAX + 1 bytes); sets last error. */
ps_status_t psc_normalize(const char *path, char *out, size_t *len);
/* A new file's tunables: the connection's current ones. */
void psc_fs_file_opts(pstripe_fs_t *fs, psc_io_opts_t *opts);

#endif

/*
 * ps_status.h: the one status enum of pstripe.
 *
 * 0 is success, errors are negative. These numbers travel on the wire (in
 * reply headers): append new codes at the end, never renumber.
 */
#ifndef PS_STATUS_H
#define PS_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ps_status {
    PS_OK                 = 0,
    PS_ERR_NO_MEMORY      = -1,  /* allocation failed */
    PS_ERR_INVALID        = -2,  /* bad argument, bad hint, bad config value */
    PS_ERR_IO             = -3,  /* a disk I/O failed on a server */
    PS_ERR_NO_ENTRY       = -4,  /* no such file (path not in the namespace) */
    PS_ERR_EXISTS         = -5,  /* exclusive create of an existing path */
    PS_ERR_ACCESS         = -6,  /* permission or open-mode violation */
    PS_ERR_NO_SPACE       = -7,  /* a server's disk is full */
    PS_ERR_PROTO          = -8,  /* malformed, truncated or out-of-range message */
    PS_ERR_TIMEOUT        = -9,  /* a server did not answer in time */
    PS_ERR_CONN           = -10, /* connection to a server failed or was lost */
    PS_ERR_UNSUPPORTED    = -11, /* operation not offered */
    PS_ERR_TOO_BIG        = -12, /* request exceeds a server or protocol limit */
    PS_ERR_NAME_TOO_LONG  = -13, /* path longer than PS_PATH_MAX */
    PS_ERR_NOT_CONFIGURED = -14, /* no servers configured / config file missing */
    PS_ERR_SHUTDOWN       = -15, /* server is shutting down */
    PS_ERR_BUSY           = -16, /* resource busy, try again */
    PS_ERR_CANCELED       = -17, /* operation canceled */
    PS_ERR_WRONG_WORKER   = -18, /* request routed to a worker that does not own it */
    PS_ERR_FILE_TOO_LARGE = -19, /* beyond the largest file a server's file system holds (EFBIG) */
    PS_ERR_STALE          = -20, /* the file was removed while open (ESTALE) */
    PS_ERR_BAD_NAME       = -21, /* not a file name: relative, the root, a NUL */
    PS_ERR_LAST           = -22
} ps_status_t;

/* Constant human-readable string for a status ("no such file"). */
const char *ps_status_string(int status);

/* Map an errno value (EIO, ENOSPC, EACCES, ...) to a status. */
ps_status_t ps_status_from_errno(int err);

#ifdef __cplusplus
}
#endif

#endif

#include "ps_status.h"

#include <errno.h>

const char *ps_status_string(int status)
{
    switch (status) {
    case PS_OK:                 return "success";
    case PS_ERR_NO_MEMORY:      return "out of memory";
    case PS_ERR_INVALID:        return "invalid argument";
    case PS_ERR_IO:             return "input/output error";
    case PS_ERR_NO_ENTRY:       return "no such file";
    case PS_ERR_EXISTS:         return "file exists";
    case PS_ERR_ACCESS:         return "permission denied";
    case PS_ERR_NO_SPACE:       return "no space left on server";
    case PS_ERR_PROTO:          return "protocol error";
    case PS_ERR_TIMEOUT:        return "server did not answer in time";
    case PS_ERR_CONN:           return "connection to server failed";
    case PS_ERR_UNSUPPORTED:    return "operation not supported";
    case PS_ERR_TOO_BIG:        return "request too large";
    case PS_ERR_NAME_TOO_LONG:  return "path name too long";
    case PS_ERR_NOT_CONFIGURED: return "no servers configured";
    case PS_ERR_SHUTDOWN:       return "server is shutting down";
    case PS_ERR_BUSY:           return "resource busy";
    case PS_ERR_CANCELED:       return "operation canceled";
    case PS_ERR_WRONG_WORKER:   return "request sent to the wrong server worker";
    case PS_ERR_FILE_TOO_LARGE: return "file too large for the server's file system";
    case PS_ERR_STALE:          return "the file was removed while open (stale file handle)";
    case PS_ERR_BAD_NAME:       return "not a valid file name";
    default:                    return "unknown status";
    }
}

ps_status_t ps_status_from_errno(int err)
{
    switch (err) {
    case 0:            return PS_OK;
    case ENOMEM:       return PS_ERR_NO_MEMORY;
    case EINVAL:       return PS_ERR_INVALID;
    case ENOENT:       return PS_ERR_NO_ENTRY;
    case EEXIST:       return PS_ERR_EXISTS;
    case EACCES:
    case EPERM:
    case EROFS:        return PS_ERR_ACCESS;
    case ENOSPC:
    case EDQUOT:       return PS_ERR_NO_SPACE;
    case ENAMETOOLONG: return PS_ERR_NAME_TOO_LONG;
    case ETIMEDOUT:    return PS_ERR_TIMEOUT;
    case ECONNREFUSED:
    case ECONNRESET:
    case EPIPE:        return PS_ERR_CONN;
    case EFBIG:        return PS_ERR_FILE_TOO_LARGE;
    case ESTALE:       return PS_ERR_STALE;
    case EBUSY:
    case EAGAIN:       return PS_ERR_BUSY;
    case ENOTSUP:      return PS_ERR_UNSUPPORTED;
    default:           return PS_ERR_IO;
    }
}

/*
 * psc_error.c: per-thread error messages (pstripe_last_error) and status
 * descriptions (pstripe_strerror). Calls nothing else of lib/.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psc_error.h"
#include "pstripe.h"

static __thread char psc_tls_msg[PSC_MSG_MAX];

/* A message longer than the buffer keeps its start and its end, the
 * middle elided: a long path must not cut off the cause after it. */
static void psc_vset_error(const char *fmt, va_list ap)
{
    const size_t keep = sizeof(psc_tls_msg) - 1;
    const size_t head = keep / 2 - 2, tail = keep - head - 3;
    va_list again;
    char *full;
    int n;

    va_copy(again, ap);
    n = vsnprintf(psc_tls_msg, sizeof(psc_tls_msg), fmt, ap);
    if (n >= 0 && (size_t)n > keep && (full = malloc((size_t)n + 1)) != NULL) {
        vsnprintf(full, (size_t)n + 1, fmt, again);
        memcpy(psc_tls_msg + head, "...", 3);
        memcpy(psc_tls_msg + head + 3, full + n - tail, tail + 1);
        free(full);
    }
    va_end(again);
}

void psc_set_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    psc_vset_error(fmt, ap);
    va_end(ap);
}

ps_status_t psc_error(ps_status_t status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    psc_vset_error(fmt, ap);
    va_end(ap);
    return status;
}

const char *pstripe_last_error(void)
{
    return psc_tls_msg;
}

const char *pstripe_strerror(ps_status_t status)
{
    return ps_status_string(status);
}

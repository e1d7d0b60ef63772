/*
 * psc_error.c: per-thread error messages (pstripe_last_error) and status
 * descriptions (pstripe_strerror). Calls nothing else of lib/.
 */
#include <stdarg.h>
#include <stdio.h>

#include "psc_error.h"
#include "pstripe.h"

static __thread char psc_tls_msg[PSC_MSG_MAX];

void psc_set_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(psc_tls_msg, sizeof(psc_tls_msg), fmt, ap);
    va_end(ap);
}

ps_status_t psc_error(ps_status_t status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(psc_tls_msg, sizeof(psc_tls_msg), fmt, ap);
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

/*
 * psc_error.h: the calling thread's detailed error message, as
 * pstripe_last_error() returns it.
 *
 * A leaf of the library: it calls nothing else of lib/, so every other file
 * (config, the progress engine, the API) can report errors through it.
 */
#ifndef PSC_ERROR_H
#define PSC_ERROR_H

#include "ps_status.h"

#define PSC_MSG_MAX 512 /* bytes of an error message */

/* Set the calling thread's message. */
void psc_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Set the calling thread's message and return status. */
ps_status_t psc_error(ps_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif

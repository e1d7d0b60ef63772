/*
 * pss_aio.h: a worker's libaio queue, which runs the spans of its I/O jobs
 * (pss_job.h).
 */
#ifndef PSS_AIO_H
#define PSS_AIO_H

#include "pss_object.h"

/* The worker's aio context and eventfd; done finishes a span whose disk
 * I/O returned res (bytes or -errno): pss_job_span_done. */
ps_status_t pss_aio_init(pss_worker_t *w,
                         void (*done)(pss_worker_t *w, struct pss_span_io *sp, long res));
void pss_aio_cleanup(pss_worker_t *w);

/* Reap completed disk I/Os (finishing the jobs they complete). */
void pss_aio_reap(pss_worker_t *w);

/* Submit waiting spans while the queue has room. */
void pss_aio_submit_waiting(pss_worker_t *w);

/* Disk I/Os in flight or waiting? */
int pss_aio_busy(pss_worker_t *w);

#endif

/*
 * pss_aio.c: a worker's libaio queue. At most aio_depth of its spans are in
 * flight; the others wait in order. Prepared spans go to the kernel
 * together, one io_submit for all of a job's spans, so the block layer sees
 * them at once and merges neighbours. Completions arrive on the worker's
 * eventfd (on its epoll set) and finish their spans by w->aio_done
 * (pss_job_span_done: the job layer above, called back, not called).
 */
#include "pss_aio.h"

#include "pss_jobdef.h"

#include "ps_log.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

ps_status_t pss_aio_init(pss_worker_t *w,
                         void (*done)(pss_worker_t *w, struct pss_span_io *sp, long res))
{
    int aio_status;

    w->aio_done = done;
    w->aio_depth = (int)w->server->cfg.aio_depth;
    w->aio_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->aio_efd < 0) {
        ps_error("worker %u: eventfd for aio: %m", w->index);
        return PS_ERR_IO;
    }
    memset(&w->aio_ctx, 0, sizeof(w->aio_ctx));
    aio_status = io_setup(w->aio_depth, &w->aio_ctx);
    if (aio_status < 0) {
        errno = -aio_status;
        ps_error("worker %u: io_setup(%d): %m (see /proc/sys/fs/aio-max-nr)", w->index,
                 w->aio_depth);
        return ps_status_from_errno(-aio_status);
    }
    w->aio_wait_head = NULL;
    w->aio_wait_tail = &w->aio_wait_head;
    return PS_OK;
}

void pss_aio_cleanup(pss_worker_t *w)
{
    if (w->aio_ctx != NULL) {
        io_destroy(w->aio_ctx);
        w->aio_ctx = NULL;
    }
    if (w->aio_efd >= 0) {
        close(w->aio_efd);
        w->aio_efd = -1;
    }
}

int pss_aio_busy(pss_worker_t *w)
{
    return w->aio_inflight > 0 || w->aio_wait_head != NULL;
}

/*
 * Hand the prepared I/Os to the kernel, as many per io_submit as there are
 * (one system call for a job's spans, and the block layer sees them
 * together and merges neighbours). An I/O the kernel refuses completes with
 * the error.
 */
void pss_aio_flush(pss_worker_t *w)
{
    while (w->aio_nbatch > 0) {
        int n = io_submit(w->aio_ctx, w->aio_nbatch, w->aio_batch);
        if (n > 0) {
            w->aio_nbatch -= n;
            memmove(w->aio_batch, w->aio_batch + n,
                    (size_t)w->aio_nbatch * sizeof(w->aio_batch[0]));
            w->aio_inflight += n;
            PSS_STAT_SET(w, queue_depth, w->aio_inflight);
            if ((uint64_t)w->aio_inflight > PSS_STAT_GET(w, queue_depth_max)) {
                PSS_STAT_SET(w, queue_depth_max, w->aio_inflight);
            }
            continue;
        }
        pss_span_io_t *sp = w->aio_batch[0]->data;
        w->aio_nbatch--;
        memmove(w->aio_batch, w->aio_batch + 1, (size_t)w->aio_nbatch * sizeof(w->aio_batch[0]));
        errno = n < 0 ? -n : EAGAIN;
        ps_error("worker %u: io_submit %s of %" PRIu64 " bytes at %" PRIu64 " of object %016" PRIx64
                 ": %m",
                 w->index, sp->writing ? "write" : "read", sp->len, sp->off, sp->job->obj->file_id);
        w->aio_done(w, sp, n < 0 ? n : -EAGAIN);
    }
}

/* A read's length: up to the largest file the file system holds (none of
 * its bytes lies beyond, and ext4 refuses a direct read that reaches past
 * it; pss_probe.c). What is cut reads as zeros, as a short read at the end
 * of a file does (pss_job_span_done); a read that starts there is 0 bytes
 * long, which file systems complete at once. */
static uint64_t pss_aio_read_len(const pss_server_t *s, const pss_span_io_t *sp)
{
    if (sp->off >= s->max_file) {
        return 0;
    }
    return sp->len < s->max_file - sp->off ? sp->len : s->max_file - sp->off;
}

/* Prepare sp's disk I/O; pss_aio_flush submits it (or it waits for a slot). */
void pss_aio_submit(pss_worker_t *w, pss_span_io_t *sp)
{
    pss_object_t *obj = sp->job->obj;
    struct iocb *iocbp = &sp->iocb;

    if (w->aio_inflight + w->aio_nbatch >= w->aio_depth) {
        sp->next_wait = NULL;
        *w->aio_wait_tail = sp;
        w->aio_wait_tail = &sp->next_wait;
        return;
    }
    if (sp->writing) {
        io_prep_pwrite(iocbp, obj->fd, sp->buf, sp->len, (long long)sp->off);
        PSS_STAT_ADD(w, disk_writes, 1);
        PSS_STAT_ADD(w, disk_bytes_written, sp->len);
    } else {
        uint64_t len = pss_aio_read_len(w->server, sp);
        io_prep_pread(iocbp, obj->fd, sp->buf, len, (long long)sp->off);
        PSS_STAT_ADD(w, disk_reads, 1);
        PSS_STAT_ADD(w, disk_bytes_read, len);
        sp->job->disk_bytes += len;
        if (sp->job->is_write) {
            PSS_STAT_ADD(w, rmw_reads, 1);
        }
        if (sp->job->stage != NULL) {
            PSS_STAT_ADD(w, stage_rmw, 1);
        }
    }
    io_set_eventfd(iocbp, w->aio_efd);
    iocbp->data = sp;
    w->aio_batch[w->aio_nbatch++] = iocbp;
    if (w->aio_nbatch == PSS_AIO_BATCH) {
        pss_aio_flush(w);
    }
}

void pss_aio_reap(pss_worker_t *w)
{
    struct io_event evs[64];
    struct timespec zero = {0, 0};
    int n;

    while (w->aio_inflight > 0) {
        n = io_getevents(w->aio_ctx, 0, 64, evs, &zero);
        if (n < 0) {
            if (n == -EINTR) {
                continue;
            }
            errno = -n;
            ps_error("worker %u: io_getevents: %m", w->index);
            return;
        }
        if (n == 0) {
            return;
        }
        w->aio_inflight -= n;
        w->answered += (uint64_t)n;
        PSS_STAT_SET(w, queue_depth, w->aio_inflight);
        for (int i = 0; i < n; i++) {
            w->aio_done(w, evs[i].data, (long)evs[i].res);
        }
        pss_aio_flush(w); /* the writes of read-modify-writes just read */
    }
}

void pss_aio_submit_waiting(pss_worker_t *w)
{
    while (w->aio_wait_head != NULL && w->aio_inflight + w->aio_nbatch < w->aio_depth) {
        pss_span_io_t *sp = w->aio_wait_head;
        w->aio_wait_head = sp->next_wait;
        if (w->aio_wait_head == NULL) {
            w->aio_wait_tail = &w->aio_wait_head;
        }
        pss_aio_submit(w, sp);
    }
    pss_aio_flush(w);
}

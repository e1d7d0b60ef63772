/*
 * pss_flushbehind.c: flushes of the disk's write cache behind the writes.
 *
 * A direct write's aio completes when the disk has the bytes, but a disk
 * with a volatile write cache (and a virtual disk, whose host caches it)
 * keeps them there until a flush: the fdatasync of an OBJ_SYNC then waits
 * for every byte written since the last one, after the transfers instead
 * of beside them (on this VM about 1.2 ms a MiB: 128 MiB written directly
 * in 0.14 s, their fdatasync 0.16 s; HDF5's collective write of 128 MiB by
 * 2 processes spent 0.17-0.19 s of its 0.47 s in the final fdatasyncs,
 * the disk idle meanwhile). So once flush_behind bytes of an object's file
 * have reached the disk since its last flush began, the worker has the
 * reaper's thread fdatasync the file while writes go on; the sync at the
 * end finds little left to flush.
 *
 * Only small writes count (pss_job_span_done: clients' write-behind
 * flushes, job->behind, and the write-back stage's blocks): the bursts of
 * buffered small I/O that a sync or close ends. A virtual disk completes no write while its host
 * flushes, so a flush stalls the writes that wait for the disk: a stream
 * of large writes, counted too, waited behind each (1.5 GiB in 1 MiB
 * calls, 2 processes, flush_behind 8m: p99 latency 1.6 -> 20-22 ms);
 * counting small writes alone it keeps 1.6-1.8 ms, and HDF5's chunked
 * writes and 4 KiB list writes keep the gain (doc/journal/issue-8.md,
 * "Session 59").
 *
 * The flush uses a descriptor of its own, opened again through
 * /proc/self/fd: a write-back error is reported to each open file, so the
 * worker's own fdatasync at OBJ_SYNC still sees what this one saw. A
 * failed flush counts as a failed write (reported by its writers' next
 * OBJ_SYNC or OBJ_FLUSH, ps_proto.h). Requests that need the object idle
 * (sync, flush, truncate, allocate, remove) wait for the flush in flight
 * as they wait for running jobs (pss_store.c); reads and writes do not.
 * A worker has at most PSS_FB_MAX of them queued or running (each holds a
 * descriptor, and the reaper does them one at a time); an object that
 * finds them all taken tries again at its next write's completion.
 * The reaper hands the result back on the worker's list (one
 * compare-and-swap) and wakes it.
 */
#include "pss_flushbehind.h"

#include "pss_reaper.h"

#include "ps_log.h"
#include "ps_time.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PSS_FB_MAX 4 /* flushes of a worker given to the reaper at once */

typedef struct pss_fb {
    struct pss_fb *next;
    pss_worker_t *worker;
    pss_object_t *obj;
    int err; /* the fdatasync's errno, 0: done */
} pss_fb_t;

static void pss_fb_ready(void *arg, int err) /* on the reaper's thread */
{
    pss_fb_t *f = arg;
    pss_worker_t *w = f->worker;
    pss_fb_t *head = atomic_load(&w->fb_done);

    f->err = err;
    do {
        f->next = head;
    } while (!atomic_compare_exchange_weak(&w->fb_done, &head, f));
    pss_worker_wake(w);
}

/* A flush that could not start: said (at most once a second), and left
 * to the object's next sync. */
static void pss_fb_skipped(pss_worker_t *w, const pss_object_t *obj, const char *why)
{
    uint64_t dropped;

    if (ps_log_limit_pass(&w->io_error_log, ps_time_ns(), PSS_LOG_EVERY_NS, &dropped)) {
        ps_warn("worker %u: no background flush of object %016" PRIx64 " (%s): its next sync "
                "flushes it all (%" PRIu64 " such lines dropped)",
                w->index, obj->file_id, why, dropped);
    }
}

static void pss_fb_start(pss_worker_t *w, pss_object_t *obj)
{
    char path[32];
    pss_fb_t *f = malloc(sizeof(*f));
    int fd = -1;

    obj->unflushed = 0; /* tried again after as many bytes, whatever happens */
    if (f != NULL) {
        snprintf(path, sizeof(path), "/proc/self/fd/%d", obj->fd);
        fd = open(path, O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0) {
        pss_fb_skipped(w, obj, f == NULL ? "no memory" : strerror(errno));
        free(f);
        return;
    }
    f->worker = w;
    f->obj = obj;
    if (pss_reaper_sync(w->server->reaper, fd, pss_fb_ready, f) != 0) {
        pss_fb_skipped(w, obj, "the reaper thread cannot take it");
        close(fd);
        free(f);
        return;
    }
    obj->flushing = 1;
    w->fb_inflight++;
    PSS_STAT_ADD(w, flushes_behind, 1);
}

void pss_fb_wrote(pss_worker_t *w, pss_object_t *obj, uint64_t bytes)
{
    uint64_t limit = w->server->cfg.flush_behind;

    obj->unflushed += bytes;
    if (limit > 0 && obj->unflushed >= limit && !obj->flushing && obj->fd >= 0 &&
        w->fb_inflight < PSS_FB_MAX) {
        pss_fb_start(w, obj);
    }
}

void pss_fb_progress(pss_worker_t *w)
{
    pss_fb_t *f = atomic_load_explicit(&w->fb_done, memory_order_relaxed) != NULL
                      ? atomic_exchange(&w->fb_done, NULL)
                      : NULL;

    while (f != NULL) {
        pss_fb_t *next = f->next;
        pss_object_t *obj = f->obj;
        obj->flushing = 0;
        w->fb_inflight--;
        if (f->err != 0) {
            errno = f->err;
            ps_error("worker %u: flush of object %016" PRIx64 " behind its writes: %m", w->index,
                     obj->file_id);
            pss_obj_write_failed(w, obj, ps_status_from_errno(f->err));
        }
        if (obj->blocked && obj->active == NULL) {
            obj->blocked = 0; /* a control request waited for the flush */
        }
        pss_obj_schedule(w, obj);
        free(f);
        f = next;
    }
}

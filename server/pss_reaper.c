/*
 * pss_reaper.c: file calls that may block for long, on a thread of its own:
 * the last close of removed object files, and background fdatasyncs
 * (pss_flushbehind.c), in the order given.
 *
 * Unlinking a file only takes its name while a descriptor still holds it;
 * the file system frees its blocks at the last close (ext4 truncates it
 * there, and, mounted with `discard`, waits for a discard of every
 * extent). Done by the worker, that stalled every request of the worker:
 * removing a 1 GiB file (512 MiB on each of 2 servers) took 0.23-0.29 s
 * (`pstripe rm`, 3 times), and a worker was seen blocked 18 ms in
 * blkdev_issue_discard by the unlink of a 64 MiB object. So a removal
 * unlinks the name on the worker (after its record, pss_removed.c) and
 * hands the descriptor here, and the worker answers the removal once the
 * close is done (pss_store.c): the file is gone for every client at once,
 * the remover hears of it once its space is back, as before, and nobody
 * else waits. (Answered at once, the next benchmark case's writes met the
 * discards of the last one's file: list writes of 4 KiB and 1 MiB
 * regions 1,392-1,758 and 1,034-1,332 MiB/s -> 1,109-1,302 and
 * 839-1,089.) The queue is a list under a mutex: one lock per removal,
 * never on the I/O path.
 */
#include "pss_reaper.h"

#include "ps_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct pss_reap_fd {
    struct pss_reap_fd *next;
    int fd;
    int sync; /* fdatasync before the close */
    void (*done)(void *, int);
    void *arg;
} pss_reap_fd_t;

struct pss_reaper {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_cond_t idle_cond; /* nothing queued, nothing being closed */
    pss_reap_fd_t *head, **tail;
    int busy; /* an entry is being closed (outside the lock) */
    int stop;
};

static void *pss_reaper_main(void *arg)
{
    pss_reaper_t *r = arg;

    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (r->head == NULL && !r->stop) {
            pthread_cond_broadcast(&r->idle_cond);
            pthread_cond_wait(&r->cond, &r->lock);
        }
        if (r->head == NULL) {
            break; /* stopping, and everything is closed */
        }
        pss_reap_fd_t *e = r->head;
        r->head = e->next;
        if (r->head == NULL) {
            r->tail = &r->head;
        }
        r->busy = 1;
        pthread_mutex_unlock(&r->lock);
        int err = e->sync && fdatasync(e->fd) != 0 ? errno : 0;
        if (close(e->fd) != 0 && !e->sync) {
            ps_warn("closing a removed object file: %m");
        }
        if (e->done != NULL) {
            e->done(e->arg, err);
        }
        free(e);
        pthread_mutex_lock(&r->lock);
        r->busy = 0;
    }
    pthread_cond_broadcast(&r->idle_cond);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

ps_status_t pss_reaper_start(pss_reaper_t **out)
{
    pss_reaper_t *r = calloc(1, sizeof(*r));
    int err;

    *out = NULL;
    if (r == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
    pthread_cond_init(&r->idle_cond, NULL);
    r->tail = &r->head;
    err = pthread_create(&r->thread, NULL, pss_reaper_main, r);
    if (err != 0) {
        ps_warn("pthread_create for the reaper: %s (removals free space on the worker)",
                strerror(err));
        pthread_cond_destroy(&r->idle_cond);
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->lock);
        free(r);
        return PS_ERR_NO_MEMORY;
    }
    pthread_setname_np(r->thread, "pss-reaper");
    *out = r;
    return PS_OK;
}

static int pss_reaper_queue(pss_reaper_t *r, int fd, int sync, void (*done)(void *, int), void *arg)
{
    pss_reap_fd_t *e = r != NULL ? malloc(sizeof(*e)) : NULL;

    if (e == NULL) {
        return -1;
    }
    e->next = NULL;
    e->fd = fd;
    e->sync = sync;
    e->done = done;
    e->arg = arg;
    pthread_mutex_lock(&r->lock);
    *r->tail = e;
    r->tail = &e->next;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->lock);
    return 0;
}

void pss_reaper_give(pss_reaper_t *r, int fd, void (*done)(void *, int), void *arg)
{
    if (pss_reaper_queue(r, fd, 0, done, arg) != 0) {
        close(fd);
        if (done != NULL) {
            done(arg, 0);
        }
    }
}

int pss_reaper_sync(pss_reaper_t *r, int fd, void (*done)(void *, int), void *arg)
{
    return pss_reaper_queue(r, fd, 1, done, arg);
}

void pss_reaper_drain(pss_reaper_t *r)
{
    if (r == NULL) {
        return;
    }
    pthread_mutex_lock(&r->lock);
    while (r->head != NULL || r->busy) {
        pthread_cond_wait(&r->idle_cond, &r->lock);
    }
    pthread_mutex_unlock(&r->lock);
}

void pss_reaper_stop(pss_reaper_t *r)
{
    if (r == NULL) {
        return;
    }
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    pthread_cond_destroy(&r->idle_cond);
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

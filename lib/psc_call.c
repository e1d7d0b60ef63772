/*
 * psc_call.c: the API threads' side of the progress engine. A call counts
 * the ops an API thread posted (psc_wait.c waits until they are all
 * completed); psc_post queues work and wakes whoever owns the UCX worker
 * through its eventfd: the caller that drives it, else the progress thread
 * (unless the poster is about to wait and drive the worker itself).
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "psc_call.h"

/* --- calls ------------------------------------------------------------------ */

void psc_call_init(psc_call_t *call)
{
    call->pending = 1;
    call->done = 0;
    call->status = PS_OK;
    call->msg[0] = '\0';
}

static void psc_call_release_locked(pstripe_fs_t *fs, psc_call_t *call, ps_status_t status,
                                    const char *msg)
{
    if (status != PS_OK && call->status == PS_OK) {
        call->status = status;
        snprintf(call->msg, sizeof(call->msg), "%s", msg);
    }
    if (--call->pending == 0) {
        call->done = 1;
        pthread_cond_broadcast(&fs->cond);
    }
}

void psc_call_complete(pstripe_fs_t *fs, psc_call_t *call, ps_status_t status, const char *msg)
{
    pthread_mutex_lock(&fs->lock);
    psc_call_release_locked(fs, call, status, msg);
    pthread_mutex_unlock(&fs->lock);
}

/* --- posting ------------------------------------------------------------------ */

static void psc_wake(int fd)
{
    uint64_t one = 1;
    ssize_t n;

    do {
        n = write(fd, &one, sizeof(one));
    } while (n < 0 && errno == EINTR);
    /* EAGAIN means the counter is already huge: the sleeper is awake anyway. */
}

static void psc_post_cmd(pstripe_fs_t *fs, psc_cmd_t *cmd, psc_call_t *call, int wake)
{
    int fd = -1;

    pthread_mutex_lock(&fs->lock);
    if (call != NULL) {
        call->pending++;
    }
    ucs_list_add_tail(&fs->postq, &cmd->list);
    if (fs->owner == PSC_OWNER_CALLER) {
        fd = fs->owner_wake_fd;
    } else if (wake) {
        fd = fs->wake_fd;
    }
    pthread_mutex_unlock(&fs->lock);
    if (fd >= 0) {
        psc_wake(fd);
    }
}

void psc_post(pstripe_fs_t *fs, psc_cmd_t *cmd, psc_call_t *call)
{
    psc_post_cmd(fs, cmd, call, 1);
}

void psc_post_then_wait(pstripe_fs_t *fs, psc_cmd_t *cmd, psc_call_t *call)
{
    psc_post_cmd(fs, cmd, call, 0);
}

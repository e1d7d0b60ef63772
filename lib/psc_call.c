/*
 * psc_call.c: the API threads' side of the progress engine. A call counts
 * the ops an API thread posted and waits until the progress thread has
 * completed them all; psc_post queues work and wakes the progress thread
 * through its eventfd.
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

ps_status_t psc_call_wait(pstripe_fs_t *fs, psc_call_t *call)
{
    pthread_mutex_lock(&fs->lock);
    psc_call_release_locked(fs, call, PS_OK, "");
    while (!call->done) {
        pthread_cond_wait(&fs->cond, &fs->lock);
    }
    pthread_mutex_unlock(&fs->lock);
    if (call->status != PS_OK) {
        psc_set_error("%s", call->msg[0] ? call->msg : ps_status_string(call->status));
    }
    return call->status;
}

void psc_call_complete(pstripe_fs_t *fs, psc_call_t *call, ps_status_t status, const char *msg)
{
    pthread_mutex_lock(&fs->lock);
    psc_call_release_locked(fs, call, status, msg);
    pthread_mutex_unlock(&fs->lock);
}

/* --- posting ------------------------------------------------------------------ */

static void psc_wake(pstripe_fs_t *fs)
{
    uint64_t one = 1;
    ssize_t n;

    do {
        n = write(fs->wake_fd, &one, sizeof(one));
    } while (n < 0 && errno == EINTR);
    /* EAGAIN means the counter is already huge: the thread is awake anyway. */
}

void psc_post(pstripe_fs_t *fs, psc_cmd_t *cmd, psc_call_t *call)
{
    int was_empty;

    pthread_mutex_lock(&fs->lock);
    if (call != NULL) {
        call->pending++;
    }
    was_empty = ucs_list_is_empty(&fs->postq);
    ucs_list_add_tail(&fs->postq, &cmd->list);
    pthread_mutex_unlock(&fs->lock);
    if (was_empty) {
        psc_wake(fs);
    }
}

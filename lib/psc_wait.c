/*
 * psc_wait.c: a caller's wait, which drives the UCX worker itself.
 *
 * A caller blocked on its call (psc_call_wait, pstripe_request_wait) takes
 * the worker when nobody has it (fs->owner): it runs the posted queue (its
 * own ops were posted with psc_post_then_wait, so the progress thread was
 * never woken for them and they are sent from here), UCX progress, deadlines
 * and completions, and, once nothing happened for `spin` (fs->spin_ns, a
 * turn of progress and a sched_yield at a time: long enough for a reply
 * that needs no disk; a reply that waits for a disk I/O is not spun for,
 * since a spinning thread delays the disk's completion on a small
 * machine, see `spin` in psc_config.c), sleeps in poll()
 * on the worker's event fd and on fs->owner_wake_fd (other threads' posts)
 * until its call is done; a deadline that passes fails the connection here
 * as it would on the thread.
 * On the way it completes other callers' ops and nonblocking requests. While
 * it has the worker, the worker's event fd is out of the progress thread's
 * epoll set, so that a reply wakes the caller only.
 *
 * Then it gives the worker back: the next blocked caller takes it (they
 * sleep on fs->cond), and the progress thread is woken only if something is
 * left for it (psc_progress_busy: ops in flight, a connection being closed);
 * otherwise the worker is armed and the thread sleeps on, on the worker's
 * event fd again (keepalive, connection errors). While the progress thread
 * has the worker (it runs its loop), a caller sleeps on fs->cond; the thread
 * lets the worker go when it goes to sleep.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ps_log.h"
#include "ps_time.h"
#include "psc_call.h"
#include "psc_progress.h"
#include "psc_stage.h"
#include "psc_wait.h"

/* Take the worker if nobody has it (fs->lock held). */
static int psc_wait_take_locked(pstripe_fs_t *fs)
{
    if (fs->owner != PSC_OWNER_NONE || fs->stop_requested) {
        return 0;
    }
    fs->owner = PSC_OWNER_CALLER;
    if (fs->ucp_fd_watched) {
        if (epoll_ctl(fs->epoll_fd, EPOLL_CTL_DEL, fs->ucp_fd, NULL) < 0) {
            ps_debug("epoll_ctl DEL of the worker's event fd: %m");
        }
        fs->ucp_fd_watched = 0;
    }
    return 1;
}

static void psc_wait_wake_thread(pstripe_fs_t *fs)
{
    uint64_t one = 1;
    ssize_t n;

    do {
        n = write(fs->wake_fd, &one, sizeof(one));
    } while (n < 0 && errno == EINTR);
}

/*
 * Give the worker back (fs->lock not held). Idle staging buffers due are
 * released here; those due later need the thread's timer only if it sleeps
 * past their release by more than a second (its timer is rounded up to
 * milliseconds): the thread is then woken once, with its timer moved. Waking
 * it whenever some were cached made every blocking call that followed a
 * large transfer, for 5 s, two hops instead of one.
 */
static void psc_wait_give(pstripe_fs_t *fs)
{
    int busy = psc_progress_busy(fs);
    uint64_t due = UINT64_MAX;

    if (!busy && ucp_worker_arm(fs->ucp_worker) == UCS_ERR_BUSY) {
        busy = 1; /* events arrived since the last progress */
    }
    if (fs->nbounce > 0) {
        uint64_t now = ps_time_ns(), next = psc_bounce_trim(fs, now);

        due = next != 0 ? now + next : UINT64_MAX;
    }
    pthread_mutex_lock(&fs->lock);
    if (due != UINT64_MAX && due + 1000000000u < fs->thread_wake_ns) {
        fs->thread_wake_ns = due;
        busy = 1;
    }
    if (!ucs_list_is_empty(&fs->postq)) {
        busy = 1;
    }
    if (!psc_watch_worker_fd(fs)) {
        busy = 1; /* the thread polls, and tries again */
    }
    fs->owner = PSC_OWNER_NONE;
    pthread_cond_broadcast(&fs->cond); /* the next caller, or the thread, takes it */
    pthread_mutex_unlock(&fs->lock);
    if (busy) {
        psc_wait_wake_thread(fs);
    }
}

/* Sleep until the worker has events, a thread posted work, or a timer. */
static void psc_wait_sleep(pstripe_fs_t *fs)
{
    struct pollfd pfd[2] = {{.fd = fs->ucp_fd, .events = POLLIN},
                            {.fd = fs->owner_wake_fd, .events = POLLIN}};
    uint64_t value;

    if (ucp_worker_arm(fs->ucp_worker) == UCS_ERR_BUSY) {
        return;
    }
    if (poll(pfd, 2, psc_progress_timeout_ms(fs)) > 0 && (pfd[1].revents & POLLIN)) {
        if (read(fs->owner_wake_fd, &value, sizeof(value)) < 0) {
            /* EAGAIN: already drained */
        }
    }
}

static int psc_wait_is_done(pstripe_fs_t *fs, psc_call_t *call)
{
    int done;

    pthread_mutex_lock(&fs->lock);
    done = call->done;
    pthread_mutex_unlock(&fs->lock);
    return done;
}

/* Drive the worker until call is done. */
static void psc_wait_drive(pstripe_fs_t *fs, psc_call_t *call)
{
    uint64_t spin_end = 0, spin = fs->spin_ns;

    for (;;) {
        int n = psc_progress_turn(fs);

        if (psc_wait_is_done(fs, call)) {
            return;
        }
        if (n > 0) {
            spin_end = 0;
        } else if (spin_end == 0 && spin > 0) {
            spin_end = ps_time_ns() + spin;
        } else if (spin_end != 0 && ps_time_ns() < spin_end) {
            sched_yield();
        } else {
            psc_wait_sleep(fs);
            spin_end = 0;
        }
    }
}

void psc_call_wait_done(pstripe_fs_t *fs, psc_call_t *call)
{
    pthread_mutex_lock(&fs->lock);
    __atomic_add_fetch(&fs->nwaiters, 1, __ATOMIC_RELAXED);
    while (!call->done) {
        if (psc_wait_take_locked(fs)) {
            pthread_mutex_unlock(&fs->lock);
            psc_wait_drive(fs, call);
            psc_wait_give(fs);
            pthread_mutex_lock(&fs->lock);
        } else {
            pthread_cond_wait(&fs->cond, &fs->lock);
        }
    }
    __atomic_sub_fetch(&fs->nwaiters, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&fs->lock);
}

ps_status_t psc_call_wait(pstripe_fs_t *fs, psc_call_t *call)
{
    psc_call_complete(fs, call, PS_OK, ""); /* drop the caller's hold */
    psc_call_wait_done(fs, call);
    if (call->status != PS_OK) {
        psc_set_error("%s", call->msg[0] ? call->msg : ps_status_string(call->status));
    }
    return call->status;
}

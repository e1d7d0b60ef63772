/*
 * psc_progress.c: the progress thread, its loop, and the turn of progress
 * that whoever owns the UCX worker runs (psc_wait.c runs it in a blocking
 * caller).
 *
 * Every pstripe_fs_t has one progress thread that creates its UCX context
 * and worker. It sleeps in epoll_wait() on two fds, the worker's event fd
 * (armed with ucp_worker_arm() only once progress found nothing to do) and
 * an eventfd that API threads write when they queue work, with a timeout
 * equal to the nearest request deadline. Before sleeping it gives the worker
 * up (fs->owner), so that a caller blocked in psc_call_wait can drive it; such
 * a caller takes the worker's event fd out of the thread's epoll set while it
 * has it, so that a reply wakes the caller only. The thread spins briefly
 * (the `spin` tunable, yielding the CPU each turn) before sleeping while
 * requests are out and no caller waits, because a reply often follows a
 * request within microseconds and a wake-up from sleep costs about 20 us on
 * a VM, but never polls while idle: the machines we run on are shared with
 * MPI ranks and daemons.
 *
 * One turn of the loop runs the posted commands, UCX progress (whose
 * callbacks only record what happened), the failed connections, the
 * deadlines, then the completions of the ready ops (which may send more).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ps_log.h"
#include "ps_net.h"
#include "ps_time.h"
#include "psc_call.h"
#include "psc_config.h"
#include "psc_conn.h"
#include "psc_op.h"
#include "psc_progress.h"
#include "psc_recv.h"
#include "psc_stage.h"

#define PSC_STOP_FLUSH_NS 2000000000ull /* longest graceful close at disconnect */
#define PSC_PROGRESS_BURST 64            /* ucp_worker_progress calls a turn, at most */

static int psc_drain_postq(pstripe_fs_t *fs)
{
    ucs_list_link_t q;
    psc_cmd_t *cmd, *tmp;
    int n = 0;

    pthread_mutex_lock(&fs->lock);
    if (ucs_list_is_empty(&fs->postq)) {
        pthread_mutex_unlock(&fs->lock);
        return 0;
    }
    ucs_list_head_init(&q);
    ucs_list_splice_tail(&q, &fs->postq);
    ucs_list_head_init(&fs->postq);
    pthread_mutex_unlock(&fs->lock);

    ucs_list_for_each_safe(cmd, tmp, &q, list)
    {
        ucs_list_del(&cmd->list);
        cmd->fn(fs, cmd);
        n++;
    }
    return n;
}

static int psc_drain_failq(pstripe_fs_t *fs)
{
    int n = 0;

    while (!ucs_list_is_empty(&fs->failq)) {
        psc_conn_t *conn = ucs_list_head(&fs->failq, psc_conn_t, fail_link);

        /* removes it from failq, keeping the recorded cause */
        psc_conn_fail(fs, conn, conn->fail_status, conn->fail_msg);
        n++;
    }
    return n;
}

static int psc_drain_readyq(pstripe_fs_t *fs)
{
    int n = 0;

    while (!ucs_list_is_empty(&fs->readyq)) {
        psc_op_t *op = ucs_list_extract_head(&fs->readyq, psc_op_t, cmd.list);

        psc_op_finish(fs, op);
        n++;
    }
    return n;
}

static void psc_check_conn_deadlines(pstripe_fs_t *fs, psc_conn_t *conn, uint64_t now)
{
    psc_op_t *op;
    char msg[PSC_MSG_MAX];

    if (conn == NULL || conn->failed) {
        return;
    }
    ucs_list_for_each(op, &conn->inflight, cmd.list)
    {
        /* Every op here is unfinished: unanswered, its reply's rendezvous data
         * still coming, or answered before its own send completed (which a
         * lost peer might never complete). */
        if (now >= op->deadline_ns) {
            if (op->type == PS_MSG_HELLO) {
                snprintf(
                    msg, sizeof(msg),
                    "server %s did not answer HELLO within %gs (connect_timeout, at most timeout)",
                    conn->server->addr, op->timeout_s);
            } else if (op->reply_done && op->recv_req == NULL) {
                snprintf(msg, sizeof(msg),
                         "the send of %s to server %s did not complete within %gs",
                         ps_msg_type_name(op->type), conn->server->addr, op->timeout_s);
            } else {
                snprintf(msg, sizeof(msg),
                         "server %s did not answer %s within %gs (worker %u, req %#llx; %s)",
                         conn->server->addr, ps_msg_type_name(op->type), op->timeout_s, op->worker,
                         (unsigned long long)op->req_id,
                         op->send_req != NULL ? "UCX had not finished sending the request"
                                              : "the request had been sent");
            }
            psc_conn_fail(fs, conn, PS_ERR_TIMEOUT, msg);
            return;
        }
        psc_update_deadline(fs, op->deadline_ns);
    }
}

static void psc_check_deadlines(pstripe_fs_t *fs)
{
    uint64_t now = ps_time_ns();

    if (fs->next_deadline_ns == 0 || now < fs->next_deadline_ns) {
        return;
    }
    fs->next_deadline_ns = 0;
    for (uint32_t i = 0; i < fs->nservers; i++) {
        psc_check_conn_deadlines(fs, fs->servers[i].conn, now);
    }
}

int psc_progress_turn(pstripe_fs_t *fs)
{
    int n = 0;
    unsigned p;

    n += psc_drain_postq(fs);
    /* Bounded: while replies keep coming, the deadlines and the ready ops'
     * completions still get their turn. */
    for (int i = 0; i < PSC_PROGRESS_BURST; i++) {
        p = ucp_worker_progress(fs->ucp_worker);
        n += (int)p;
        if (p == 0) {
            break;
        }
    }
    n += psc_drain_failq(fs);
    /* Deadlines before the ready queue: ops failed by a timeout complete in
     * this iteration, before the next ucp_worker_progress(), which can block
     * for seconds while UCX tears down the closed endpoints (UCX 1.13 removes
     * the sockcm handler synchronously). */
    psc_check_deadlines(fs);
    n += psc_drain_readyq(fs);
    psc_conn_free_dead(fs);
    return n;
}

int psc_progress_busy(pstripe_fs_t *fs)
{
    if (fs->stopping || !ucs_list_is_empty(&fs->readyq) || !ucs_list_is_empty(&fs->failq) ||
        !ucs_list_is_empty(&fs->dead_conns)) {
        return 1;
    }
    for (uint32_t i = 0; i < fs->nservers; i++) {
        psc_server_t *srv = &fs->servers[i];

        if (!ucs_list_is_empty(&srv->waitq) ||
            (srv->conn != NULL &&
             (srv->state != PSC_SRV_CONNECTED || !ucs_list_is_empty(&srv->conn->inflight)))) {
            return 1;
        }
    }
    return 0;
}

/*
 * Take the worker for the thread's loop: 0 if a caller drives it. The thread
 * never waits for a caller to let go: the caller does all there is to do
 * while it has the worker and wakes the thread when it gives it back with
 * work left (psc_wait_give). A thread that waited for the worker instead was
 * woken by every give and, slow to be scheduled on a loaded machine, lost the
 * worker to the caller's next call each time: a futex wake and a context
 * switch per blocking call (200 over 200 calls in one CI run).
 */
static int psc_thread_own(pstripe_fs_t *fs)
{
    if (fs->thread_owns) {
        return 1;
    }
    pthread_mutex_lock(&fs->lock);
    if (fs->owner != PSC_OWNER_CALLER) {
        fs->owner = PSC_OWNER_THREAD;
        fs->thread_wake_ns = 0;
        fs->thread_owns = 1;
    }
    pthread_mutex_unlock(&fs->lock);
    return fs->thread_owns;
}

/* Sleep while a caller has the worker (its event fd is out of the epoll
 * set then): until a wake or the thread's timer, fs->thread_wake_ns, which a
 * giving caller moves earlier for staging buffers due (psc_wait_give). A
 * timer that passes under a caller is the caller's: its give checks again. */
static void psc_thread_nap(pstripe_fs_t *fs)
{
    struct epoll_event ev[2];
    uint64_t now = ps_time_ns(), wake, value;
    int timeout_ms = -1;

    pthread_mutex_lock(&fs->lock);
    if (fs->thread_wake_ns <= now) {
        fs->thread_wake_ns = UINT64_MAX;
    }
    wake = fs->thread_wake_ns;
    pthread_mutex_unlock(&fs->lock);
    if (wake != UINT64_MAX) {
        timeout_ms = (int)((wake - now + 999999) / 1000000);
    }
    if (epoll_wait(fs->epoll_fd, ev, 2, timeout_ms) > 0 &&
        read(fs->wake_fd, &value, sizeof(value)) < 0) {
        /* EAGAIN: the wake was not ours, or someone else drained it */
    }
}

/* Give the worker up before sleeping until wake_ns (it is armed); a waiting
 * caller takes it. */
static void psc_thread_unown(pstripe_fs_t *fs, uint64_t wake_ns)
{
    fs->thread_owns = 0;
    pthread_mutex_lock(&fs->lock);
    fs->owner = PSC_OWNER_NONE;
    fs->thread_wake_ns = wake_ns;
    if (fs->nwaiters > 0) {
        pthread_cond_broadcast(&fs->cond);
    }
    pthread_mutex_unlock(&fs->lock);
}

static int psc_is_idle_for_stop(pstripe_fs_t *fs)
{
    if (!ucs_list_is_empty(&fs->readyq) || !ucs_list_is_empty(&fs->failq)) {
        return 0;
    }
    for (uint32_t i = 0; i < fs->nservers; i++) {
        psc_server_t *srv = &fs->servers[i];

        if (srv->conn != NULL || !ucs_list_is_empty(&srv->waitq)) {
            return 0;
        }
    }
    return ucs_list_is_empty(&fs->dead_conns);
}

/* Disconnect: close every live connection with a flush (the servers see an
 * orderly disconnect), bounded by PSC_STOP_FLUSH_NS. */
static void psc_stop_cmd(pstripe_fs_t *fs, psc_cmd_t *cmd)
{
    fs->stopping = 1;
    fs->stop_deadline_ns = ps_time_ns() + PSC_STOP_FLUSH_NS;
    for (uint32_t i = 0; i < fs->nservers; i++) {
        psc_server_disconnect(fs, &fs->servers[i]);
    }
}

/* An epoll set of the worker's event fd and the wake eventfd. */
static ps_status_t psc_epoll_init(pstripe_fs_t *fs)
{
    int fds[2] = {fs->ucp_fd, fs->wake_fd};
    struct epoll_event ev;

    fs->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (fs->epoll_fd < 0) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "epoll_create1: %s", strerror(errno));
        return PS_ERR_CONN;
    }
    for (int i = 0; i < 2; i++) {
        ev.events = EPOLLIN;
        ev.data.fd = fds[i];
        if (epoll_ctl(fs->epoll_fd, EPOLL_CTL_ADD, fds[i], &ev) < 0) {
            snprintf(fs->init_msg, sizeof(fs->init_msg), "epoll_ctl: %s", strerror(errno));
            goto err_close_epoll;
        }
    }
    return PS_OK;

err_close_epoll:
    close(fs->epoll_fd);
    fs->epoll_fd = -1;
    return PS_ERR_CONN;
}

const char *psc_net_devices(const pstripe_fs_t *fs, char *buf, size_t len)
{
    if (fs->nservers == 0) {
        return NULL;
    }
    for (uint32_t i = 0; i < fs->nservers; i++) {
        if (!ps_addr_is_loopback((const struct sockaddr *)&fs->servers[i].sa)) {
            return NULL;
        }
    }
    return ps_loopback_devices(buf, len) > 0 ? buf : NULL;
}

static ps_status_t psc_ucx_init(pstripe_fs_t *fs)
{
    ucp_params_t params;
    ucp_worker_params_t wparams;
    ucp_am_handler_param_t aparams;
    ucp_config_t *config;
    ucs_status_t status;
    int shm = 0;
    char devices[256];

    for (uint32_t i = 0; i < fs->nservers; i++) {
        shm |= fs->servers[i].shm_maybe;
    }
    if (psc_ucx_config_read(&config, shm, psc_net_devices(fs, devices, sizeof(devices)),
                            fs->init_msg, sizeof(fs->init_msg)) != PS_OK) {
        return PS_ERR_CONN;
    }
    params.field_mask =
        UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED | UCP_PARAM_FIELD_NAME;
    params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 0;
    params.name = "pstripe-client";
    status = ucp_init(&params, config, &fs->ucp_context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "ucp_init: %s", ucs_status_string(status));
        return PS_ERR_CONN;
    }
    wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SERIALIZED; /* the thread or a caller, see fs->owner */
    status = ucp_worker_create(fs->ucp_context, &wparams, &fs->ucp_worker);
    if (status != UCS_OK) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "ucp_worker_create: %s",
                 ucs_status_string(status));
        goto err_cleanup;
    }
    aparams.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                         UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    aparams.id = PS_AM_ID_REPLY;
    aparams.cb = psc_am_reply_cb;
    aparams.arg = fs;
    aparams.flags = UCP_AM_FLAG_WHOLE_MSG;
    status = ucp_worker_set_am_recv_handler(fs->ucp_worker, &aparams);
    if (status != UCS_OK) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "ucp_worker_set_am_recv_handler: %s",
                 ucs_status_string(status));
        goto err_destroy_worker;
    }
    status = ucp_worker_get_efd(fs->ucp_worker, &fs->ucp_fd);
    if (status != UCS_OK) {
        snprintf(fs->init_msg, sizeof(fs->init_msg), "ucp_worker_get_efd: %s",
                 ucs_status_string(status));
        goto err_destroy_worker;
    }
    if (psc_epoll_init(fs) != PS_OK) {
        goto err_destroy_worker;
    }
    fs->ucp_fd_watched = 1;
    return PS_OK;

err_destroy_worker:
    ucp_worker_destroy(fs->ucp_worker);
    fs->ucp_worker = NULL;
err_cleanup:
    ucp_cleanup(fs->ucp_context);
    fs->ucp_context = NULL;
    return PS_ERR_CONN;
}

static void psc_ucx_fini(pstripe_fs_t *fs)
{
    close(fs->epoll_fd);
    fs->epoll_fd = -1;
    ucp_worker_destroy(fs->ucp_worker);
    fs->ucp_worker = NULL;
    ucp_cleanup(fs->ucp_context);
    fs->ucp_context = NULL;
}

/*
 * Closing endpoints (after a failure, or at disconnect) is finished by UCX
 * progress callbacks that raise no fd event, so while any close or failed
 * connection is being cleaned up we sleep with a short timeout that backs
 * off from 1 ms to PSC_CLEANUP_POLL_MS_MAX; otherwise we sleep until an
 * event or the nearest deadline.
 */
#define PSC_CLEANUP_POLL_MS_MAX 64

int psc_progress_timeout_ms(pstripe_fs_t *fs)
{
    uint64_t now = ps_time_ns();
    int timeout_ms = -1;

    if (fs->next_deadline_ns != 0) {
        timeout_ms =
            fs->next_deadline_ns > now ? (int)((fs->next_deadline_ns - now + 999999) / 1000000) : 0;
    }
    if (fs->stopping) {
        uint64_t left = fs->stop_deadline_ns > now ? fs->stop_deadline_ns - now : 0;
        int stop_ms = (int)((left + 999999) / 1000000);

        if (timeout_ms < 0 || stop_ms < timeout_ms) {
            timeout_ms = stop_ms;
        }
    }
    if (fs->nbounce > 0) {
        uint64_t trim_ns = psc_bounce_trim(fs, now);
        int trim_ms = (int)((trim_ns + 999999) / 1000000);

        if (trim_ns != 0 && (timeout_ms < 0 || trim_ms < timeout_ms)) {
            timeout_ms = trim_ms;
        }
    }
    if (!ucs_list_is_empty(&fs->dead_conns)) {
        fs->cleanup_poll_ms = fs->cleanup_poll_ms == 0 ? 1 : fs->cleanup_poll_ms * 2;
        if (fs->cleanup_poll_ms > PSC_CLEANUP_POLL_MS_MAX) {
            fs->cleanup_poll_ms = PSC_CLEANUP_POLL_MS_MAX;
        }
        if (timeout_ms < 0 || fs->cleanup_poll_ms < timeout_ms) {
            timeout_ms = fs->cleanup_poll_ms;
        }
    } else {
        fs->cleanup_poll_ms = 0;
    }
    return timeout_ms;
}

int psc_watch_worker_fd(pstripe_fs_t *fs)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fs->ucp_fd};

    if (fs->ucp_fd_watched) {
        return 1;
    }
    if (epoll_ctl(fs->epoll_fd, EPOLL_CTL_ADD, fs->ucp_fd, &ev) == 0 || errno == EEXIST) {
        if (fs->ucp_fd_refused) {
            ps_info("the worker's event fd is watched again");
        }
        fs->ucp_fd_watched = 1;
        fs->ucp_fd_refused = 0;
        return 1;
    }
    if (!fs->ucp_fd_refused) {
        ps_warn("epoll_ctl ADD of the worker's event fd: %m (polling every %d ms while "
                "requests are out until it succeeds)",
                PSC_UNWATCHED_POLL_MS);
    }
    fs->ucp_fd_refused = 1;
    return 0;
}

static void psc_sleep(pstripe_fs_t *fs)
{
    struct epoll_event ev[2];
    uint64_t value;
    uint64_t wake_ns;
    int timeout_ms;
    int n;

    if (ucp_worker_arm(fs->ucp_worker) == UCS_ERR_BUSY) {
        return;
    }
    timeout_ms = psc_progress_timeout_ms(fs);
    if (!psc_watch_worker_fd(fs) && timeout_ms > PSC_UNWATCHED_POLL_MS) {
        timeout_ms = PSC_UNWATCHED_POLL_MS; /* ops are out (a deadline is set) */
    }
    wake_ns = timeout_ms < 0 ? UINT64_MAX : ps_time_ns() + (uint64_t)timeout_ms * 1000000u;
    psc_thread_unown(fs, wake_ns);
    n = epoll_wait(fs->epoll_fd, ev, 2, timeout_ms);
    for (int i = 0; i < n; i++) {
        if (ev[i].data.fd == fs->wake_fd) {
            if (read(fs->wake_fd, &value, sizeof(value)) < 0) {
                /* EAGAIN: someone else drained it */
            }
        }
    }
}

static void *psc_progress_main(void *arg)
{
    pstripe_fs_t *fs = arg;
    ps_status_t status;

    pthread_setname_np(pthread_self(), "pstripe-prog"); /* (15 characters at most) */
    status = psc_ucx_init(fs);
    pthread_mutex_lock(&fs->lock);
    fs->init_status = status;
    fs->init_done = 1;
    pthread_cond_broadcast(&fs->cond);
    pthread_mutex_unlock(&fs->lock);
    if (status != PS_OK) {
        return NULL;
    }

    for (;;) {
        uint64_t spin_end;
        int n;

        if (!psc_thread_own(fs)) {
            psc_thread_nap(fs);
            continue;
        }
        n = psc_progress_turn(fs);

        if (fs->stopping && (psc_is_idle_for_stop(fs) || ps_time_ns() >= fs->stop_deadline_ns)) {
            break;
        }
        if (n > 0) {
            continue;
        }
        /* Nothing happened: spin a little while requests are out, then sleep. */
        spin_end =
            fs->next_deadline_ns != 0 && __atomic_load_n(&fs->nwaiters, __ATOMIC_RELAXED) == 0
                ? ps_time_ns() + fs->spin_ns
                : 0;
        while (ps_time_ns() < spin_end && n == 0) {
            sched_yield();
            n = (int)ucp_worker_progress(fs->ucp_worker);
        }
        if (n == 0) {
            psc_sleep(fs);
        }
    }
    psc_conn_release_closing(fs);
    psc_ucx_fini(fs);
    /* ops UCX had not let go of by the stop's deadline: no callback comes now */
    while (!ucs_list_is_empty(&fs->detached_ops)) {
        psc_op_t *op = ucs_list_head(&fs->detached_ops, psc_op_t, detached_link);

        op->send_req = NULL;
        op->recv_req = NULL;
        if (op->staged != NULL) {
            psc_bounce_put(fs, op->staged, op->staged_cap);
            op->staged = NULL;
        }
        op->release_cb(fs, op); /* takes it off the list */
    }
    psc_bounce_free_all(fs);
    return NULL;
}

static void psc_close_wake_fds(pstripe_fs_t *fs)
{
    close(fs->wake_fd);
    fs->wake_fd = -1;
    close(fs->owner_wake_fd);
    fs->owner_wake_fd = -1;
}

ps_status_t psc_progress_start(pstripe_fs_t *fs)
{
    int error;

    fs->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fs->wake_fd < 0) {
        return psc_error(PS_ERR_NO_MEMORY, "eventfd: %s", strerror(errno));
    }
    fs->owner_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fs->owner_wake_fd < 0) {
        close(fs->wake_fd);
        fs->wake_fd = -1;
        return psc_error(PS_ERR_NO_MEMORY, "eventfd: %s", strerror(errno));
    }
    fs->spin_ns = (uint64_t)(fs->cfg.spin * 1e9);
    fs->owner = PSC_OWNER_THREAD; /* until its first sleep */
    fs->thread_owns = 1;
    ucs_list_head_init(&fs->readyq);
    ucs_list_head_init(&fs->failq);
    ucs_list_head_init(&fs->dead_conns);
    ucs_list_head_init(&fs->detached_ops);
    error = pthread_create(&fs->thread, NULL, psc_progress_main, fs);
    if (error != 0) {
        psc_close_wake_fds(fs);
        return psc_error(PS_ERR_NO_MEMORY, "pthread_create: %s", strerror(error));
    }
    pthread_mutex_lock(&fs->lock);
    while (!fs->init_done) {
        pthread_cond_wait(&fs->cond, &fs->lock);
    }
    pthread_mutex_unlock(&fs->lock);
    if (fs->init_status != PS_OK) {
        pthread_join(fs->thread, NULL);
        psc_close_wake_fds(fs);
        return psc_error(fs->init_status, "UCX initialization failed: %s", fs->init_msg);
    }
    fs->thread_started = 1;
    return PS_OK;
}

void psc_progress_stop(pstripe_fs_t *fs)
{
    if (!fs->thread_started) {
        return;
    }
    pthread_mutex_lock(&fs->lock);
    fs->stop_requested = 1; /* no caller takes the worker from now on */
    pthread_mutex_unlock(&fs->lock);
    fs->stop_cmd.fn = psc_stop_cmd;
    psc_post(fs, &fs->stop_cmd, NULL);
    pthread_join(fs->thread, NULL);
    fs->thread_started = 0;
    psc_conn_free_all_dead(fs); /* still closing when the flush deadline passed */
    psc_close_wake_fds(fs);
    free(fs->slots);
    free(fs->free_slots);
    fs->slots = NULL;
    fs->free_slots = NULL;
}

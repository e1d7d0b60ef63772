/*
 * pss_store.c: the OBJ_* requests: their checks, each object's queue, and
 * the control requests (stat, truncate, allocate, sync, remove).
 *
 * Requests of one object wait in its queue, in arrival order (but for a
 * write that needs no room in a full stage, which may pass writes and
 * reads whose bytes it does not touch: below). Batches of
 * one object queued at the same time (for example from several clients, or
 * arriving while earlier I/O runs) are planned together into one job
 * (pss_job.c), so 100,000 small regions spread over many requests still
 * become a few large I/Os. A job starts only when none of its spans
 * intersects a span of a job already running on the object (reads may
 * overlap reads); otherwise the queue waits, in order, until a job
 * finishes. Two read-modify-write cycles on the same block can therefore
 * never interleave and lose each other's bytes. Truncate, allocate, remove
 * and sync wait for the object to be idle.
 *
 * Interleaved writers and the write-back stage. When two clients write
 * interleaved small regions of the same blocks (region i of process r at
 * (i * 2 + r) * z), each batch alone covers only part of its blocks. Its
 * spans that would need read-modify-write go to the worker's stage
 * (pss_stage.h) and the batch is answered after the copy; the other
 * client's batch completes the blocks there, is answered likewise, and
 * then they are written whole (pss_job.c). Here: the policy. A partial
 * block is written once it is write_back_age old (a timerfd on the
 * worker's epoll set wakes the loop, nothing polls), before OBJ_SYNC,
 * OBJ_FLUSH, OBJ_TRUNCATE and OBJ_ALLOCATE of its object (OBJ_REMOVE drops it),
 * when the worker stops, and when a write needs more room than
 * is left (the write waits for the flush: the stage never grows past
 * write_back; while several clients write the object, the flush waits
 * write_back_wait for the others, whose writes that need no room go
 * ahead of the waiting one, and each write that comes meanwhile has the
 * waiting one planned again with it). A write that would take more than half the stage, or
 * comes while the worker's open-file budget is spent, bypasses it (after
 * the object's staged blocks are written).
 */
#include "pss_store.h"

#include "pss_aio.h"
#include "pss_cache.h"
#include "pss_flushbehind.h"
#include "pss_job.h"
#include "pss_object.h"
#include "pss_plan.h"
#include "pss_probe.h"
#include "pss_reaper.h"
#include "pss_removed.h"
#include "pss_req.h"
#include "pss_stage.h"

#include "ps_log.h"
#include "ps_time.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define PSS_MAX_OBJ_SIZE (1ull << 44) /* bytes: regions must end below this (16 TiB) */

/* ---- start-up -------------------------------------------------------------------- */

ps_status_t pss_store_init(pss_server_t *s)
{
    char path[4096];
    int want;

    snprintf(path, sizeof(path), "%s/obj", s->data_dir);
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        ps_error("mkdir %s: %m", path);
        return ps_status_from_errno(errno);
    }
    s->obj_dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->obj_dir_fd < 0) {
        ps_error("open %s: %m", path);
        return ps_status_from_errno(errno);
    }
    for (int i = 0; i < 256; i++) {
        char sub[4];
        snprintf(sub, sizeof(sub), "%02x", i);
        if (mkdirat(s->obj_dir_fd, sub, 0700) != 0 && errno != EEXIST) {
            ps_error("mkdir %s/%s: %m", path, sub);
            return ps_status_from_errno(errno);
        }
    }

    const char *d = s->cfg.direct_io;
    int yes;
    if (strcasecmp(d, "auto") == 0) {
        want = -1;
    } else if (ps_parse_bool(d, &yes) == PS_OK) {
        want = yes;
    } else {
        ps_error("direct_io: '%s' is not auto, yes or no", d);
        return PS_ERR_INVALID;
    }
    return pss_probe(s, want);
}

/* ---- per-worker state -------------------------------------------------------------- */

ps_status_t pss_store_worker_init(pss_worker_t *w)
{
    struct epoll_event ev = {.events = EPOLLIN};
    ps_status_t status = pss_aio_init(w, pss_job_span_done);
    if (status != PS_OK) {
        return status;
    }
    status = pss_stage_init(&w->stage, w->server->cfg.write_back, w->server->align,
                            w->server->mem_align);
    if (status != PS_OK) {
        ps_error("worker %u: no memory for the write-back stage's table", w->index);
        return status;
    }
    status = pss_cache_init(&w->cache, w->server->cache_mem, w->index);
    if (status != PS_OK) {
        ps_error("worker %u: no memory for the cache's table", w->index);
        return status;
    }
    w->stage_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (w->stage_tfd < 0) {
        ps_error("worker %u: timerfd_create: %m", w->index);
        return PS_ERR_IO;
    }
    w->stage_timer = 1;
    ev.data.fd = w->stage_tfd; /* the loop wakes and reads it */
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->stage_tfd, &ev) != 0) {
        ps_error("worker %u: epoll_ctl of the stage timer: %m", w->index);
        return PS_ERR_IO;
    }
    return pss_obj_table_init(w);
}

void pss_store_worker_cleanup(pss_worker_t *w)
{
    pss_aio_cleanup(w);
    pss_obj_table_cleanup(w);
    pss_stage_cleanup(w->stage);
    w->stage = NULL;
    pss_cache_cleanup(w->cache);
    w->cache = NULL;
    if (w->stage_timer) {
        close(w->stage_tfd);
        w->stage_timer = 0;
    }
}

/* ---- the write-back stage's policy (see the top) ---------------------------------- */

static void pss_stage_arm(pss_worker_t *w, uint64_t deadline)
{
    struct itimerspec its = {{0, 0}, {0, 0}};

    if (w->stage_armed != 0 && w->stage_armed <= deadline) {
        return;
    }
    its.it_value.tv_sec = (time_t)(deadline / 1000000000ull);
    its.it_value.tv_nsec = (long)(deadline % 1000000000ull);
    if (timerfd_settime(w->stage_tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0) {
        ps_error("worker %u: timerfd_settime: %m", w->index);
        return;
    }
    w->stage_armed = deadline;
}

#define PSS_FLUSH_SKIP 16 /* objects whose flush must wait, looked past in one round */

/*
 * Start writing the staged blocks first staged at or before born_by, one
 * job per object, oldest first. An object with a running job that
 * overlaps them is passed over: it is tried again when its jobs finish.
 */
static void pss_stage_flush_by(pss_worker_t *w, uint64_t born_by)
{
    pss_object_t *skip[PSS_FLUSH_SKIP];
    int nskip = 0;
    pss_sblock_t *b = w->stage->oldest;

    while (b != NULL && b->ns <= born_by) {
        int passed = 0;
        for (int i = 0; i < nskip; i++) {
            passed |= skip[i] == b->obj;
        }
        if (passed) {
            b = b->anext;
            continue;
        }
        if (pss_job_flush(w, b->obj, born_by) > 0) {
            b = w->stage->oldest; /* it took blocks anywhere in the list */
            continue;
        }
        if (nskip == PSS_FLUSH_SKIP) {
            break;
        }
        skip[nskip++] = b->obj;
        b = b->anext;
    }
}

/* Make room for need more blocks: start writing the older half of the
 * staged blocks (by age), while the younger ones keep waiting for their
 * partners; unless the flushes already running free enough of it (a slow
 * disk: flushing more would write young halves of blocks unjoined). */
static void pss_stage_flush_older_half(pss_worker_t *w, uint64_t need)
{
    pss_stage_t *st = w->stage;

    if (st->oldest != NULL && st->nattached + need > st->max_blocks) {
        pss_stage_flush_by(w, st->oldest->ns + (st->youngest->ns - st->oldest->ns) / 2);
    }
}

/*
 * A write of obj waits for room since obj->swait_ns: is it time to write
 * the older half of the stage partial? At once when obj has one writer
 * (nobody will complete its halves); while several write it, only after
 * write_back_wait, so that the others' writes, which go ahead of it when
 * they need no room (pss_obj_writes_ahead), complete the halves first: a
 * writer that ran a stage ahead of its partner (the partner's process
 * kept off the CPU) made the flush write every half partial, and each
 * of the partner's halves, staged alone again, after it (225,000 blocks
 * written partial in one of session 66's matrix runs). Also at once when
 * another client's write came meanwhile and needs room itself
 * (swait_futile, pss_obj_writes_ahead): nobody is left to complete the
 * halves (two clients' small writes that leave their blocks partial
 * would each wait out write_back_wait whenever the stage filled). And
 * for PSS_SWAIT_SKIP times write_back_wait after a wait of the object ran
 * out: four IOR processes writing 64-byte quarters of each block through
 * stages of 64 KiB on two servers ran 3 runs of 38 at 0.8-7.9 MiB/s (the
 * others 17-44), the slowest waiting out the whole wait 807 times, a write on one
 * server waiting with two other processes' writes queued behind it while
 * on the other server a write waited alone: nobody could come on either.
 * Else the timer is set for it.
 */
#define PSS_SWAIT_SKIP 10 /* write_back_waits without a wait after one ran out */

static int pss_stage_wait_over(pss_worker_t *w, pss_object_t *obj, uint64_t now)
{
    uint64_t wait = (uint64_t)(w->server->cfg.write_back_wait * 1e9);
    uint64_t until = obj->swait_ns + wait;

    if (now >= until && obj->swait_skip_until < obj->swait_ns) {
        /* ran out: the others did not come in time (they may wait for
         * room elsewhere, for this writer's bytes) */
        obj->swait_skip_until = now + PSS_SWAIT_SKIP * wait;
    }
    if (now >= until || now < obj->swait_skip_until || !pss_share_active(&obj->writers) ||
        obj->swait_futile) {
        return 1;
    }
    pss_stage_arm(w, until);
    return 0;
}

/*
 * Before a write job starts: mark its spans that go to the stage. 1 if it
 * must wait: for room (the object waits on the worker's list until the
 * room is there; a flush of the older half of what is staged is started
 * when pss_stage_wait_over says so), or, for a job too large for the
 * stage, for the write of the staged blocks it touches.
 */
static int pss_stage_wait(pss_worker_t *w, pss_object_t *obj, pss_job_t *job)
{
    pss_stage_t *st = w->stage;
    int touches, room = 0;
    uint64_t need = pss_job_stage_plan(w, job, &touches);

    if (st == NULL) {
        return 0;
    }
    if (need > st->max_blocks / 2 || (need > 0 && w->nopen >= w->max_open)) {
        /* too large for the stage, or the open-file budget is spent (an
         * object with staged blocks stays open): written now */
        pss_job_unstage(job);
        if (!touches) {
            return 0;
        }
        need = 0;
        if (pss_job_flush(w, obj, UINT64_MAX) > 0) {
            return 1; /* planned again when the flush finishes */
        }
    } else if (st->nblocks + need <= st->max_blocks) {
        return 0;
    } else {
        PSS_STAT_ADD(w, stage_full_waits, 1);
        room = 1;
    }
    if (!obj->swait) {
        obj->swait = 1;
        obj->swait_futile = 0;
        obj->swait_ns = ps_time_ns();
        obj->next_swait = w->swait_head;
        w->swait_head = obj;
    }
    obj->swait_need = need;
    if (room && pss_stage_wait_over(w, obj, ps_time_ns())) {
        pss_stage_flush_older_half(w, need);
    }
    return 1;
}

/* obj's write no longer waits for room (it started): off the worker's
 * list, so that its next wait starts its own write_back_wait and the
 * list never holds an object that may be freed. */
static void pss_stage_unwait(pss_worker_t *w, pss_object_t *obj)
{
    if (!obj->swait) {
        return;
    }
    for (pss_object_t **pp = &w->swait_head; *pp != NULL; pp = &(*pp)->next_swait) {
        if (*pp == obj) {
            *pp = obj->next_swait;
            break;
        }
    }
    obj->swait = 0;
}

/* Objects waiting for room that now fits go again; the others wait for
 * the flushes (started again for blocks staged since). */
static void pss_stage_wake(pss_worker_t *w)
{
    pss_stage_t *st = w->stage;
    uint64_t now = ps_time_ns();
    int flushed = 0;

    for (pss_object_t **pp = &w->swait_head; *pp != NULL;) {
        pss_object_t *obj = *pp;
        if (st->nblocks + obj->swait_need <= st->max_blocks) {
            *pp = obj->next_swait;
            obj->swait = 0;
            obj->blocked = 0;
            pss_obj_schedule(w, obj);
            continue;
        }
        if (!flushed && st->nattached > 0 && pss_stage_wait_over(w, obj, now)) {
            pss_stage_flush_older_half(w, obj->swait_need);
            flushed = 1;
        }
        pp = &obj->next_swait;
    }
}

/* Age out partial blocks (all of them when the worker stops) and size
 * attributes behind their objects, wake writes waiting for room, and set
 * the timer for the next one due. */
static void pss_stage_progress(pss_worker_t *w)
{
    pss_stage_t *st = w->stage;
    uint64_t now, age;

    now = ps_time_ns();
    age = (uint64_t)(w->server->cfg.write_back_age * 1e9);
    if (w->stage_armed != 0 && now >= w->stage_armed) {
        /* due by the clock; the timer itself may fire a little later (timer
         * slack), and the loop reads it then (pss_worker_loop) */
        w->stage_armed = 0;
    }
    if (w->grown_head != NULL) {
        /* size attributes behind their objects: stored as old as staged blocks get */
        uint64_t oldest = pss_obj_save_grown(w, now > age ? now - age : 0);
        if (oldest != 0) {
            pss_stage_arm(w, oldest + age);
        }
    }
    if (st == NULL) {
        return;
    }
    if (atomic_load(&w->server->stopping) || w->nopen > w->max_open) {
        /* stopping, or objects must close: they close once written */
        pss_stage_flush_by(w, UINT64_MAX);
    } else if (st->oldest != NULL && st->oldest->ns + age <= now) {
        pss_stage_flush_by(w, now - age);
    }
    if (w->swait_head != NULL) {
        pss_stage_wake(w);
    }
    PSS_STAT_SET(w, stage_blocks, st->nblocks);
    for (pss_sblock_t *b = st->oldest; b != NULL; b = b->anext) {
        if (b->ns + age > now) {
            pss_stage_arm(w, b->ns + age);
            break;
        }
    }
}
/* ---- the object's queue ------------------------------------------------------------ */

static pss_req_t *pss_obj_pop(pss_object_t *obj)
{
    pss_req_t *req = obj->wait_head;
    obj->wait_head = req->next;
    if (obj->wait_head == NULL) {
        obj->wait_tail = &obj->wait_head;
    }
    req->next = NULL;
    return req;
}

/* ---- answers after the reaper's close ------------------------------------------------ */

/*
 * A REMOVE, or a TRUNCATE to 0, is answered once the reaper has closed the
 * object's old file (pss_reaper.c), so that its space is free when the
 * client hears of it, while the worker goes on with other requests. The
 * reaper pushes the answer onto the worker's list (one compare-and-swap)
 * and wakes the worker, whose pss_store_progress sends it.
 */
typedef struct pss_late {
    struct pss_late *next;
    pss_worker_t *worker;
    pss_req_t *req;
    ps_status_t status;
    ps_obj_rep_t rep;
} pss_late_t;

static void pss_late_ready(void *arg, int err) /* on the reaper's thread */
{
    (void)err; /* a close's: not asked */
    pss_late_t *l = arg;
    pss_worker_t *w = l->worker;
    pss_late_t *head = atomic_load(&w->late);

    do {
        l->next = head;
    } while (!atomic_compare_exchange_weak(&w->late, &head, l));
    pss_worker_wake(w);
}

static void pss_late_answer(pss_worker_t *w)
{
    pss_late_t *l = atomic_load_explicit(&w->late, memory_order_relaxed) != NULL
                        ? atomic_exchange(&w->late, NULL)
                        : NULL;

    while (l != NULL) {
        pss_late_t *next = l->next;
        pss_reply(l->req, l->status, &l->rep, sizeof(l->rep), NULL, 0, 0);
        free(l);
        l = next;
    }
}

/* Answer req once old_fd (-1: none, answer now) is closed. */
static void pss_answer_after_close(pss_worker_t *w, pss_req_t *req, ps_status_t status,
                                   const ps_obj_rep_t *rep, int old_fd)
{
    pss_late_t *l = old_fd >= 0 ? malloc(sizeof(*l)) : NULL;

    if (l == NULL) {
        if (old_fd >= 0) {
            close(old_fd); /* no memory for the wait: here, then */
        }
        pss_reply(req, status, rep, sizeof(*rep), NULL, 0, 0);
        return;
    }
    l->worker = w;
    l->req = req;
    l->status = status;
    l->rep = *rep;
    pss_reaper_give(w->server->reaper, old_fd, pss_late_ready, l);
}

static void pss_obj_control(pss_worker_t *w, pss_object_t *obj, pss_req_t *req)
{
    ps_obj_rep_t rep;
    ps_status_t status = PS_OK;
    int old_fd = -1; /* a file to close before the answer */

    switch (req->hdr.type) {
    case PS_MSG_OBJ_STAT:
        if (obj->fd < 0) {
            status = pss_obj_open(w, obj, 0); /* an unreadable object is an error */
        }
        if (status == PS_ERR_STALE) {
            status = PS_OK; /* a removed file's object is not there (a listing goes on) */
        }
        break;
    case PS_MSG_OBJ_TRUNCATE:
    case PS_MSG_OBJ_ALLOCATE:
        status = pss_obj_open(w, obj, 1);
        if (status == PS_OK && req->hdr.type == PS_MSG_OBJ_TRUNCATE) {
            status = pss_obj_resize(w, obj, req->body.obj.size, &old_fd);
        } else if (status == PS_OK) {
            status = pss_obj_allocate(w, obj, req->body.obj.size);
        }
        break;
    case PS_MSG_OBJ_SYNC:
    case PS_MSG_OBJ_FLUSH: /* (its staged blocks are on disk: pss_obj_run) */
        /* no file: nothing written here, or removed with what it had (the
         * writer must hear it); one that cannot be opened: that error */
        status = pss_obj_open(w, obj, 0);
        if (status == PS_OK && obj->fd >= 0 && req->hdr.type == PS_MSG_OBJ_SYNC) {
            status = pss_obj_sync(w, obj);
        }
        if (status == PS_OK && obj->failed_writes > req->body.obj.size) {
            status = obj->failed_status; /* failed since the writer's mark */
            ps_error("worker %u: %s of object %016" PRIx64 ": %" PRIu64
                     " of its writes failed on disk after their answer, the last: %s",
                     w->index, ps_msg_type_name(req->hdr.type), obj->file_id,
                     obj->failed_writes - req->body.obj.size, ps_status_string(status));
        }
        break;
    case PS_MSG_OBJ_REMOVE:
        pss_obj_fill_rep(obj, &rep); /* what it was */
        status = pss_obj_remove(w, obj, &old_fd);
        pss_answer_after_close(w, req, status, &rep, old_fd);
        return;
    }
    pss_obj_fill_rep(obj, &rep);
    pss_answer_after_close(w, req, status, &rep, old_fd);
}

/*
 * The longest run of same-kind batches at the head of obj's queue, up to
 * max_merge bytes (at least one), in a malloc'd array; NULL if out of memory.
 */
static pss_req_t **pss_obj_head_batches(pss_server_t *s, pss_object_t *obj, uint32_t *nbatches)
{
    pss_req_t *head = obj->wait_head;
    uint16_t type = head->hdr.type;
    uint32_t n = 0;
    uint64_t bytes = 0;

    for (pss_req_t *r = head; r != NULL && r->hdr.type == type; r = r->next) {
        if (n > 0 && bytes + r->body.io.payload_len > s->cfg.max_merge) {
            break;
        }
        bytes += r->body.io.payload_len;
        n++;
    }
    pss_req_t **batches = malloc(n * sizeof(*batches));
    if (batches == NULL) {
        return NULL;
    }
    pss_req_t *r = head;
    for (uint32_t i = 0; i < n; i++, r = r->next) {
        batches[i] = r;
    }
    *nbatches = n;
    return batches;
}

/* Request r's hull, [r->lo, r->hi), computed once. */
static void pss_req_hull(pss_req_t *r)
{
    uint64_t lo = UINT64_MAX, hi = 0;

    if (r->hi != 0) {
        return;
    }
    for (uint32_t i = 0; i < r->body.io.nregions; i++) {
        ps_extent_run_t run = pss_io_run(r, i);
        uint64_t end = ps_extent_run_end(&run);
        lo = run.off < lo ? run.off : lo;
        hi = end > hi ? end : hi;
    }
    r->lo = lo;
    r->hi = hi;
}

/* May r, queued in obj, go before the requests ahead of it: are they all
 * reads and writes whose bytes r does not touch? */
static int pss_obj_may_pass(pss_object_t *obj, pss_req_t *r)
{
    pss_req_hull(r);
    for (pss_req_t *q = obj->wait_head; q != r; q = q->next) {
        if (q->hdr.type != PS_MSG_OBJ_WRITE && q->hdr.type != PS_MSG_OBJ_READ) {
            return 0;
        }
        pss_req_hull(q);
        if (q->lo < r->hi && r->lo < q->hi) {
            return 0;
        }
    }
    return 1;
}

static void pss_obj_unlink(pss_object_t *obj, pss_req_t *r)
{
    pss_req_t **pp = &obj->wait_head;

    while (*pp != r) {
        pp = &(*pp)->next;
    }
    *pp = r->next;
    if (obj->wait_tail == &r->next) {
        obj->wait_tail = pp;
    }
}

/*
 * r, a write queued in obj while the write at its head waits for room in
 * the stage: started now, out of turn, if it needs no room (it completes
 * staged blocks, or stages nothing), touches no byte of a request before
 * it and intersects no running job. 1 if it was started; else *room says
 * whether the room it needs is what held it. The other writers' halves
 * thus complete the blocks the waiting writer staged before the stage
 * writes them partial (pss_stage_wait_over).
 */
static int pss_obj_write_ahead(pss_worker_t *w, pss_object_t *obj, pss_req_t *r, int *room)
{
    pss_req_t **batch;
    pss_job_t *job;
    int touches;

    if (r->hdr.type != PS_MSG_OBJ_WRITE || obj->fd < 0 || !pss_obj_may_pass(obj, r) ||
        (batch = malloc(sizeof(*batch))) == NULL) {
        return 0;
    }
    batch[0] = r;
    if ((job = pss_job_plan(w, obj, batch, 1, 1)) == NULL) {
        free(batch);
        return 0;
    }
    if (pss_job_conflicts(job) || (*room = pss_job_stage_plan(w, job, &touches) > 0)) {
        pss_job_free(w, job);
        return 0;
    }
    pss_obj_unlink(obj, r);
    pss_share_note(&obj->writers, r->conn);
    pss_job_start(w, job);
    return 1;
}

#define PSS_AHEAD_MAX 16 /* queued writes looked at each time the head is planned to wait */

/* The job of the first n_head batches of obj's queue waits for room: the
 * writes that need none go ahead (any client's: the waiting one's own
 * need room too, as a rule, and fail the check). With n_head > 1 the head
 * itself is tried alone: the other writer's halves at the head, planned
 * with the waiting writer's next write queued behind them, waited with it
 * for room that they alone do not need (each writer's rounds then waited
 * out write_back_wait, and the halves went partial after all). A write
 * that comes while it waits has it planned again (pss_store_handle). A
 * write of another client that needs room itself ends the wait: the
 * older half of the stage is written now (pss_stage_wait_over). */
static void pss_obj_writes_ahead(pss_worker_t *w, pss_object_t *obj, uint32_t n_head)
{
    pss_req_t *r = n_head > 1 ? obj->wait_head : obj->wait_head->next, *next;
    int futile = obj->swait_futile;

    for (int n = 0; r != NULL && n < PSS_AHEAD_MAX && obj->blocked; n++, r = next) {
        int room = 0;
        next = r->next;
        if (!pss_obj_write_ahead(w, obj, r, &room) && room && r->conn != obj->wait_head->conn) {
            obj->swait_futile = 1;
        }
    }
    if (obj->wait_head == NULL) {
        /* every batch of the head run went ahead alone (two short spans
         * planned together are staged to wait for their neighbours, each
         * alone is not): nothing waits for room any more */
        pss_stage_unwait(w, obj);
        return;
    }
    if (!futile && obj->swait_futile && obj->blocked) {
        pss_stage_flush_older_half(w, obj->swait_need);
    }
}

/*
 * Plan a job of the batches at the head of obj's queue and start it, or
 * block the queue if the job intersects a running one (it is planned again
 * when that one finishes). A batch that cannot be planned is answered with
 * the error.
 */
static void pss_obj_start_io(pss_worker_t *w, pss_object_t *obj)
{
    int is_write = obj->wait_head->hdr.type == PS_MSG_OBJ_WRITE;
    uint32_t n;
    pss_req_t **batches = pss_obj_head_batches(w->server, obj, &n);

    if (batches == NULL) {
        pss_reply(pss_obj_pop(obj), PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, 0);
        return;
    }
    if (obj->fd < 0) {
        /* A read of an object that exists but cannot be opened (damaged
         * size attribute, EMFILE, EIO) is an error, never zeros or stale
         * buffers; one that does not exist reads as zeros. */
        ps_status_t status = pss_obj_open(w, obj, is_write);
        if (status != PS_OK) {
            free(batches);
            pss_reply(pss_obj_pop(obj), status, NULL, 0, NULL, 0, 0);
            return;
        }
    }
    pss_job_t *job = pss_job_plan(w, obj, batches, n, is_write);
    if (job == NULL) {
        free(batches);
        pss_reply(pss_obj_pop(obj), PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, 0);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (is_write && w->stage != NULL) {
            pss_share_note(&obj->writers, batches[i]->conn);
        } else if (!is_write && w->cache != NULL) {
            pss_share_note(&obj->share, batches[i]->conn); /* without a cache nothing is shared */
        }
    }
    /* blocked before pss_stage_wait starts a flush: one whose I/O the
     * kernel refuses finishes at once, unblocks it and plans it again */
    obj->blocked = 1;
    if (pss_job_conflicts(job) || (is_write && pss_stage_wait(w, obj, job))) {
        pss_job_free(w, job); /* and the array; the requests stay queued */
        if (obj->swait && w->server->cfg.write_back_wait > 0) {
            pss_obj_writes_ahead(w, obj, n);
        }
        return;
    }
    obj->blocked = 0;
    pss_stage_unwait(w, obj); /* admitted without pss_stage_wake: a job freed room */
    for (uint32_t i = 0; i < n; i++) {
        pss_obj_pop(obj);
    }
    pss_job_start(w, job);
}

/*
 * Start whatever the head of the object's queue allows: control requests
 * when the object is idle (STAT at once), and I/O jobs made of the longest
 * run of same-kind batches at the head (up to max_merge bytes) when they do
 * not intersect a running job.
 */
static void pss_obj_run(pss_worker_t *w, pss_object_t *obj)
{
    while (obj->wait_head != NULL && !obj->blocked) {
        uint16_t type = obj->wait_head->hdr.type;

        if (type == PS_MSG_OBJ_WRITE || type == PS_MSG_OBJ_READ) {
            pss_obj_start_io(w, obj);
            continue;
        }
        if (type != PS_MSG_OBJ_STAT && (obj->active != NULL || obj->flushing)) {
            obj->blocked = 1;
            break;
        }
        if (type == PS_MSG_OBJ_REMOVE) {
            pss_stage_drop_object(w->stage, obj); /* its bytes go with it */
        } else if (type != PS_MSG_OBJ_STAT && obj->nstaged > 0) {
            /* sync, flush, truncate and allocate see the staged bytes on disk
             * first; blocked before the flush starts: one whose I/O the
             * kernel refuses finishes inside the start and unblocks it */
            obj->blocked = 1;
            if (pss_job_flush(w, obj, UINT64_MAX) > 0) {
                break;
            }
            obj->blocked = 0;
            pss_reply(pss_obj_pop(obj), PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, 0);
            continue;
        }
        pss_obj_control(w, obj, pss_obj_pop(obj));
    }
}

/* ---- entry points ------------------------------------------------------------------- */

/*
 * Check an OBJ_READ/OBJ_WRITE batch (its region list against its payload
 * and the object size limit), count it, and point req->payload at the write
 * data or allocate the read reply.
 */
static ps_status_t pss_io_prepare(pss_worker_t *w, pss_req_t *req)
{
    const ps_io_req_t *io = &req->body.io;
    int inline_list = (io->flags & PS_IO_LIST_INLINE) != 0;
    uint64_t rbytes = inline_list ? 0 : ps_io_list_bytes(io), nreg = io->nregions;
    ps_status_t status;

    if (((uintptr_t)req->data % 8) != 0) {
        /* held UCX data is 8-byte aligned (checked in the AM callback) */
        return PS_ERR_PROTO;
    }
    req->list = inline_list ? (const void *)(req->body.raw + sizeof(*io)) : req->data;
    if (io->flags & PS_IO_RUNS) {
        status = ps_proto_check_runs((const ps_run_t *)req->list, io->nregions, io->payload_len,
                                     PSS_MAX_OBJ_SIZE, &nreg);
    } else {
        status = ps_proto_check_regions((const ps_region_t *)req->list, io->nregions,
                                        io->payload_len, PSS_MAX_OBJ_SIZE);
    }
    if (status != PS_OK) {
        return status;
    }
    if (req->hdr.type == PS_MSG_OBJ_WRITE) {
        req->payload = (const uint8_t *)req->data + rbytes;
        PSS_STAT_ADD(w, write_batches, 1);
        PSS_STAT_ADD(w, regions_written, nreg);
        PSS_STAT_ADD(w, bytes_written, io->payload_len);
        return PS_OK;
    }
    req->reply_buf = pss_buf_get(w, io->payload_len ? io->payload_len : 1, w->server->mem_align,
                                 &req->reply_cap);
    if (req->reply_buf == NULL) {
        ps_error("worker %u: no memory for a %" PRIu64 "-byte read reply", w->index,
                 io->payload_len);
        return PS_ERR_NO_MEMORY;
    }
    PSS_STAT_ADD(w, read_batches, 1);
    PSS_STAT_ADD(w, regions_read, nreg);
    PSS_STAT_ADD(w, bytes_read, io->payload_len);
    return PS_OK;
}

void pss_store_handle(pss_worker_t *w, pss_req_t *req)
{
    uint16_t type = req->hdr.type;
    uint64_t file_id;
    pss_object_t *obj;

    if (type == PS_MSG_OBJ_WRITE || type == PS_MSG_OBJ_READ) {
        ps_status_t status = pss_io_prepare(w, req);
        if (status == PS_ERR_PROTO || status == PS_ERR_FILE_TOO_LARGE) {
            pss_reject(req, status,
                       status == PS_ERR_FILE_TOO_LARGE
                           ? "a region ends past the object size limit"
                           : "bad region or run list (lengths and counts > 0, strides at least "
                             "the length, bytes summing to the payload, at most 2^20 regions)");
            return;
        } else if (status != PS_OK) {
            pss_reply(req, status, NULL, 0, NULL, 0, 0);
            return;
        }
        file_id = req->body.io.file_id;
    } else {
        file_id = req->body.obj.file_id;
        if ((type == PS_MSG_OBJ_TRUNCATE || type == PS_MSG_OBJ_ALLOCATE) &&
            req->body.obj.size > PSS_MAX_OBJ_SIZE) {
            ps_warn("worker %u: %s of %016" PRIx64 " to %" PRIu64
                    " bytes: above the object size limit",
                    w->index, ps_msg_type_name(type), file_id, req->body.obj.size);
            pss_reply(req, PS_ERR_FILE_TOO_LARGE, NULL, 0, NULL, 0, 0);
            return;
        }
    }

    obj = pss_obj_get(w, file_id);
    if (obj == NULL) {
        pss_reply(req, PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, 0);
        return;
    }
    req->next = NULL;
    *obj->wait_tail = req;
    obj->wait_tail = &req->next;
    if (!obj->blocked) {
        pss_obj_schedule(w, obj);
    } else if (obj->swait && w->server->cfg.write_back_wait > 0) {
        /* the write waiting for room is planned again with this one:
         * together they may need none (the other writer's halves of the
         * same blocks, which could not pass it), else the writes behind
         * it that need none go ahead (pss_obj_start_io) */
        obj->blocked = 0;
        pss_obj_schedule(w, obj);
    }
}

void pss_store_progress(pss_worker_t *w)
{
    pss_late_answer(w);
    pss_fb_progress(w);
    pss_stage_progress(w);
    pss_aio_reap(w);
    pss_aio_submit_waiting(w);
    while (w->ready_head != NULL) {
        pss_object_t *obj = w->ready_head;
        w->ready_head = obj->next_ready;
        obj->scheduled = 0;
        pss_obj_run(w, obj);
        pss_obj_forget_if_idle(w, obj);
    }
    pss_obj_trim(w);
    pss_aio_submit_waiting(w);
    if (w->stage != NULL) {
        PSS_STAT_SET(w, stage_blocks, w->stage->nblocks);
    }
}

int pss_store_busy(pss_worker_t *w)
{
    return pss_aio_busy(w) || w->ready_head != NULL || w->swait_head != NULL ||
           w->fb_inflight > 0 || (w->stage != NULL && w->stage->nattached > 0);
}

void pss_store_sync_all(pss_worker_t *w)
{
    if (w->stage != NULL && w->stage->nattached > 0) {
        ps_warn("worker %u: %llu staged blocks not written before exit (drain timeout): their "
                "clients' next fsync fails",
                w->index, (unsigned long long)w->stage->nattached);
    }
    pss_obj_close_all(w);
}

/*
 * pss_store.c: the OBJ_* requests: their checks, each object's queue, and
 * the control requests (stat, truncate, sync, remove).
 *
 * Requests of one object wait in its queue, in arrival order. Batches of
 * one object queued at the same time (for example from several clients, or
 * arriving while earlier I/O runs) are planned together into one job
 * (pss_job.c), so 100,000 small regions spread over many requests still
 * become a few large I/Os. A job starts only when none of its spans
 * intersects a span of a job already running on the object (reads may
 * overlap reads); otherwise the queue waits, in order, until a job
 * finishes. Two read-modify-write cycles on the same block can therefore
 * never interleave and lose each other's bytes. Truncate, remove and sync
 * wait for the object to be idle.
 *
 * Interleaved writers. When two clients write interleaved small regions of
 * the same blocks (region i of process r at (i * 2 + r) * z), each batch
 * alone covers only part of its blocks and needs read-modify-write, while
 * the two together cover them whole. Batches queued at the same time are
 * planned together anyway; a batch that arrives alone would start at once.
 * So a write batch whose plan needs read-modify-write is held, when
 * another client (or several) wrote the object in one of its last
 * PSS_OBJ_RECENT write jobs less than PSS_MERGE_WINDOW_NS ago, or is
 * writing it now, and none of those touched the blocks this
 * batch writes (then the partner's half is on disk already, and waiting
 * would only pair this batch with the partner's next one, of other blocks,
 * round after round), and nothing else of the object is queued, for at most
 * the merge_wait tunable (1 ms by default): the other client's
 * batch usually arrives meanwhile and the two are planned as one job that
 * writes the blocks blind. The hold ends early when another batch arrives
 * (the queue is planned again), and a timerfd on the worker's epoll set
 * ends it otherwise, so nothing polls. A client writing alone waits at most
 * once: its own job then becomes the object's last writer.
 */
#include "pss_store.h"

#include "pss_job.h"
#include "pss_object.h"
#include "pss_probe.h"
#include "pss_req.h"

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
#define PSS_MERGE_WINDOW_NS (10ull * 1000 * 1000) /* another client wrote this recently: hold */

/* ---- start-up -------------------------------------------------------------------- */

ps_status_t pss_store_init(pss_server_t *s)
{
    char path[4096];
    int want;

    snprintf(path, sizeof(path), "%s/obj", s->data_dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
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
        if (mkdirat(s->obj_dir_fd, sub, 0755) != 0 && errno != EEXIST) {
            ps_error("mkdir %s/%s: %m", path, sub);
            return ps_status_from_errno(errno);
        }
    }

    s->merge_wait_ns = (uint64_t)(s->cfg.merge_wait * 1e9);

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
    ps_status_t status = pss_aio_init(w);
    if (status != PS_OK) {
        return status;
    }
    w->hold_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (w->hold_tfd < 0) {
        ps_error("worker %u: timerfd_create: %m", w->index);
        return PS_ERR_IO;
    }
    w->hold_timer = 1;
    ev.data.fd = w->hold_tfd; /* the loop wakes; pss_store_progress reads it */
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->hold_tfd, &ev) != 0) {
        ps_error("worker %u: epoll_ctl of the hold timer: %m", w->index);
        return PS_ERR_IO;
    }
    return pss_obj_table_init(w);
}

void pss_store_worker_cleanup(pss_worker_t *w)
{
    pss_aio_cleanup(w);
    pss_obj_table_cleanup(w);
    if (w->hold_timer) {
        close(w->hold_tfd);
        w->hold_timer = 0;
    }
}

/* ---- holding writes for another client's (see the top) ---------------------------- */

static void pss_hold_arm(pss_worker_t *w, uint64_t deadline)
{
    struct itimerspec its = {{0, 0}, {0, 0}};

    if (w->hold_armed != 0 && w->hold_armed <= deadline) {
        return;
    }
    its.it_value.tv_sec = (time_t)(deadline / 1000000000ull);
    its.it_value.tv_nsec = (long)(deadline % 1000000000ull);
    if (timerfd_settime(w->hold_tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0) {
        ps_error("worker %u: timerfd_settime: %m", w->index);
        return;
    }
    w->hold_armed = deadline;
}

static void pss_unhold(pss_worker_t *w, pss_object_t *obj)
{
    obj->hold_until = 0;
    for (pss_object_t **pp = &w->held_head; *pp != NULL; pp = &(*pp)->next_held) {
        if (*pp == obj) {
            *pp = obj->next_held;
            break;
        }
    }
}

/* Reschedule the objects whose hold has ended (they start unheld), and
 * read the timer once it has fired (its fd is level-triggered). */
static void pss_hold_expire(pss_worker_t *w)
{
    uint64_t now, next = 0, ticks;

    if (w->held_head == NULL && w->hold_armed == 0) {
        return;
    }
    now = ps_time_ns();
    if (w->hold_armed != 0 && now >= w->hold_armed) {
        if (read(w->hold_tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN) {
            ps_error("worker %u: read of the hold timer: %m", w->index);
        }
        w->hold_armed = 0;
    }
    for (pss_object_t **pp = &w->held_head; *pp != NULL;) {
        pss_object_t *obj = *pp;
        if (now >= obj->hold_until) {
            *pp = obj->next_held;
            obj->blocked = 0;
            pss_obj_schedule(w, obj); /* hold_until stays: it starts now */
            continue;
        }
        next = next == 0 || obj->hold_until < next ? obj->hold_until : next;
        pp = &obj->next_held;
    }
    if (next != 0) {
        pss_hold_arm(w, next);
    }
}

/* Recent write jobs (PSS_MERGE_WINDOW_NS) of clients other than conn: -1 if
 * one of them touched [lo, hi), else 1 if there is one, else 0. */
static int pss_obj_recent_other(const pss_object_t *obj, const void *conn, uint64_t lo, uint64_t hi,
                                uint64_t now)
{
    int found = 0;

    for (int k = 0; k < PSS_OBJ_RECENT; k++) {
        if (obj->recent[k].ns == 0 || now - obj->recent[k].ns > PSS_MERGE_WINDOW_NS ||
            (!obj->recent[k].multi && obj->recent[k].conn == conn)) {
            continue;
        }
        if (lo < obj->recent[k].hi && obj->recent[k].lo < hi) {
            return -1;
        }
        found = 1;
    }
    return found;
}

/*
 * Should this write job (of the n batches at the head of obj's queue) wait
 * for another client's batch? If so the object is held (blocked until a
 * batch arrives or the hold ends) and 1 is returned.
 */
static int pss_obj_hold(pss_worker_t *w, pss_object_t *obj, const pss_job_t *job,
                        pss_req_t **batches, uint32_t n)
{
    const void *conn = batches[0]->conn;
    uint64_t now, lo, hi;

    if (w->server->merge_wait_ns == 0 || batches[n - 1]->next != NULL) {
        return 0;
    }
    for (uint32_t i = 1; i < n; i++) {
        if (batches[i]->conn != conn) {
            return 0; /* several writers already: plan what is here */
        }
    }
    if (!pss_job_needs_rmw(job)) {
        return 0;
    }
    now = ps_time_ns();
    if (obj->hold_until == 0) {
        pss_job_hull(job, &lo, &hi);
        int running = pss_job_other_writer(obj, conn, lo, hi);
        int recent = pss_obj_recent_other(obj, conn, lo, hi, now);
        if (running < 0 || recent < 0 || (!running && !recent)) {
            return 0; /* no writer nearby, or it wrote these blocks already: no partner to wait for
                       */
        }
        obj->hold_until = now + w->server->merge_wait_ns;
        obj->next_held = w->held_head;
        w->held_head = obj;
        PSS_STAT_ADD(w, merge_waits, 1);
    } else if (now >= obj->hold_until) {
        return 0;
    }
    pss_hold_arm(w, obj->hold_until);
    obj->blocked = 1;
    return 1;
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

static void pss_obj_control(pss_worker_t *w, pss_object_t *obj, pss_req_t *req)
{
    ps_obj_rep_t rep;
    ps_status_t status = PS_OK;

    switch (req->hdr.type) {
    case PS_MSG_OBJ_STAT:
        if (obj->fd < 0) {
            status = pss_obj_open(w, obj, 0); /* an unreadable object is an error */
        }
        break;
    case PS_MSG_OBJ_TRUNCATE:
        status = pss_obj_open(w, obj, 1);
        if (status == PS_OK) {
            status = pss_obj_resize(w, obj, req->body.obj.size);
        }
        break;
    case PS_MSG_OBJ_SYNC:
        status = pss_obj_sync(w, obj);
        break;
    case PS_MSG_OBJ_REMOVE:
        pss_obj_fill_rep(obj, &rep); /* what it was */
        status = pss_obj_remove(w, obj);
        pss_reply(req, status, &rep, sizeof(rep), NULL, 0, NULL);
        return;
    }
    pss_obj_fill_rep(obj, &rep);
    pss_reply(req, status, &rep, sizeof(rep), NULL, 0, NULL);
}

/*
 * A held batch met batches of other clients, but together they still need
 * read-modify-write: those are not its partners (they are the other
 * client's previous batch, of other blocks). Merging them would pair the
 * two clients' batches off by one round from then on; instead the others
 * go first, alone, and the held batch keeps waiting for its partner.
 */
static int pss_obj_mismatched(pss_object_t *obj, const pss_job_t *job, pss_req_t **batches,
                              uint32_t n)
{
    int multi = 0;

    if (obj->hold_until == 0 || ps_time_ns() >= obj->hold_until) {
        return 0;
    }
    for (uint32_t i = 1; i < n; i++) {
        multi |= batches[i]->conn != batches[0]->conn;
    }
    return multi && pss_job_needs_rmw(job);
}

/* Reorder the n batches at the head of obj's queue: those of other clients
 * than the first batch's, then the first client's, each in arrival order;
 * the next job takes only the new head client's batches. */
static void pss_obj_rotate(pss_object_t *obj, pss_req_t **batches, uint32_t n)
{
    pss_req_t *rest = batches[n - 1]->next, **tail = &obj->wait_head;
    const pss_conn_t *conn = batches[0]->conn;

    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < n; i++) {
            if ((batches[i]->conn == conn) == (pass == 1)) {
                *tail = batches[i];
                tail = &batches[i]->next;
            }
        }
    }
    *tail = rest;
    if (rest == NULL) {
        obj->wait_tail = tail;
    }
    obj->head_one_conn = 1;
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
        if (n > 0 && (bytes + r->body.io.payload_len > s->cfg.max_merge ||
                      (obj->head_one_conn && r->conn != head->conn))) {
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

    obj->head_one_conn = 0;

    if (batches == NULL) {
        pss_reply(pss_obj_pop(obj), PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, NULL);
        return;
    }
    if (obj->fd < 0) {
        /* A read of an object that exists but cannot be opened (damaged
         * size attribute, EMFILE, EIO) is an error, never zeros or stale
         * buffers; one that does not exist reads as zeros. */
        ps_status_t status = pss_obj_open(w, obj, is_write);
        if (status != PS_OK) {
            free(batches);
            pss_reply(pss_obj_pop(obj), status, NULL, 0, NULL, 0, NULL);
            return;
        }
    }
    pss_job_t *job = pss_job_plan(w, obj, batches, n, is_write);
    if (job == NULL) {
        free(batches);
        pss_reply(pss_obj_pop(obj), PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, NULL);
        return;
    }
    if (is_write && pss_obj_mismatched(obj, job, batches, n)) {
        pss_obj_rotate(obj, batches, n);
        pss_job_free(job); /* and the array: the other clients' batches go first */
        return;
    }
    if (is_write && pss_obj_hold(w, obj, job, batches, n)) {
        pss_job_free(job); /* and the array; planned again when the hold ends */
        return;
    }
    if (obj->hold_until != 0) {
        pss_unhold(w, obj);
    }
    if (!is_write) {
        pss_share_note_reader(w, &obj->share, batches[0]->conn);
    }
    if (pss_job_conflicts(job)) {
        pss_job_free(job); /* and the array; the requests stay queued */
        obj->blocked = 1;
        return;
    }
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
        if (type != PS_MSG_OBJ_STAT && obj->active != NULL) {
            obj->blocked = 1;
            break;
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
    uint64_t rbytes = ps_io_list_bytes(io), nreg = io->nregions;
    ps_status_t status;

    if (((uintptr_t)req->data % 8) != 0) {
        /* held UCX data is 8-byte aligned (checked in the AM callback) */
        return PS_ERR_PROTO;
    }
    if (io->flags & PS_IO_RUNS) {
        status = ps_proto_check_runs((const ps_run_t *)req->data, io->nregions, io->payload_len,
                                     PSS_MAX_OBJ_SIZE, &nreg);
    } else {
        status = ps_proto_check_regions((const ps_region_t *)req->data, io->nregions,
                                        io->payload_len, PSS_MAX_OBJ_SIZE);
    }
    if (status != PS_OK) {
        ps_warn("worker %u: %s req %llu for object %016" PRIx64 ": bad %s list (%u "
                "entries, payload %" PRIu64 " bytes; lengths and counts must be > 0, strides "
                "at least the length, bytes sum to the payload and end below %llu)",
                w->index, ps_msg_type_name(req->hdr.type), (unsigned long long)req->hdr.req_id,
                io->file_id, (io->flags & PS_IO_RUNS) ? "run" : "region", io->nregions,
                io->payload_len, (unsigned long long)PSS_MAX_OBJ_SIZE);
        return status;
    }
    if (req->hdr.type == PS_MSG_OBJ_WRITE) {
        req->payload = (const uint8_t *)req->data + rbytes;
        PSS_STAT_ADD(w, write_batches, 1);
        PSS_STAT_ADD(w, regions_written, nreg);
        PSS_STAT_ADD(w, bytes_written, io->payload_len);
        return PS_OK;
    }
    if (posix_memalign((void **)&req->reply_buf, w->server->mem_align,
                       io->payload_len ? io->payload_len : 1) != 0) {
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
        if (status != PS_OK) {
            pss_reply(req, status, NULL, 0, NULL, 0, NULL);
            return;
        }
        file_id = req->body.io.file_id;
    } else {
        file_id = req->body.obj.file_id;
        if (type == PS_MSG_OBJ_TRUNCATE && req->body.obj.size > PSS_MAX_OBJ_SIZE) {
            ps_warn("worker %u: OBJ_TRUNCATE of %016" PRIx64 " to %" PRIu64
                    " bytes: above the object size limit",
                    w->index, file_id, req->body.obj.size);
            pss_reply(req, PS_ERR_TOO_BIG, NULL, 0, NULL, 0, NULL);
            return;
        }
    }

    obj = pss_obj_get(w, file_id);
    if (obj == NULL) {
        pss_reply(req, PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, NULL);
        return;
    }
    req->next = NULL;
    *obj->wait_tail = req;
    obj->wait_tail = &req->next;
    if (obj->hold_until != 0) {
        obj->blocked = 0; /* held for this: plan the queue again */
    }
    if (!obj->blocked) {
        pss_obj_schedule(w, obj);
    }
}

void pss_store_progress(pss_worker_t *w)
{
    pss_hold_expire(w);
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
}

int pss_store_busy(pss_worker_t *w)
{
    return pss_aio_busy(w) || w->ready_head != NULL || w->held_head != NULL;
}

void pss_store_sync_all(pss_worker_t *w)
{
    pss_obj_close_all(w);
}

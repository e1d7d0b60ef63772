/*
 * pss_sharedfp.c: shared file pointers. A counter is named by (file_id,
 * instance); all requests for one file id reach one worker of the file's
 * metadata owner, so the table is that worker's alone and needs no lock,
 * and a fetch-and-add is atomic because the worker serves one request at a
 * time.
 *
 * The table is a hash of PSS_SFP_BUCKETS chains holding at most PSS_SFP_MAX
 * counters. A counter is made only by SET (the collective open sets it to
 * 0; seek_shared sets it too); RELEASE (at close) forgets it. set_view's
 * reset to 0 sends nothing: the request's view says how many set_views its
 * sender has made, and a newer one than the counter's own resets it
 * (pss_sfp_to_view).
 * A FETCH_ADD of an unknown counter fails with PS_ERR_NO_ENTRY instead of
 * starting again at 0: the counters live in memory only, so after a
 * restart of this server (or after an idle counter was dropped) the
 * pointer's position is lost, and a program appending with write_shared
 * would overwrite its own records if the pointer silently restarted at 0.
 * When the table is full, a counter unused for PSS_SFP_IDLE_NS is dropped
 * (logged) to make room; if there is none the request fails with
 * PS_ERR_TOO_BIG, never reusing a live one. A user other than root holds
 * at most PSS_SFP_USER_MAX of them, so that no one user can fill the table
 * and keep everyone else's MPI opens from making theirs.
 */
#include "pss_sharedfp.h"

#include "pss_conn.h"
#include "pss_req.h"

#include "ps_log.h"
#include "ps_time.h"

#include <stdlib.h>
#include <string.h>

#define PSS_SFP_BUCKETS 1024u

typedef struct pss_sfp {
    struct pss_sfp *next;
    uint64_t file_id;
    uint64_t instance;
    uint64_t value;
    uint64_t used_ns; /* last request, ps_time_ns() */
    uint32_t view;    /* of the last FETCH_ADD or SET */
    uint32_t uid;     /* of the connection that made it */
} pss_sfp_t;

struct pss_sfp_table {
    pss_sfp_t *buckets[PSS_SFP_BUCKETS];
    size_t count;
    ps_log_limit_t refused_log; /* counters refused (a user may ask in a loop) */
};

static pss_sfp_t **pss_sfp_slot(struct pss_sfp_table *t, uint64_t file_id, uint64_t instance)
{
    uint64_t h = (file_id ^ (instance * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    pss_sfp_t **p = &t->buckets[(h >> 32) % PSS_SFP_BUCKETS];

    while (*p != NULL && ((*p)->file_id != file_id || (*p)->instance != instance)) {
        p = &(*p)->next;
    }
    return p;
}

/* Drop the counter unused longest if it has been unused PSS_SFP_IDLE_NS. */
static int pss_sfp_expire(struct pss_sfp_table *t, uint64_t now)
{
    pss_sfp_t **oldest = NULL, *e;

    for (unsigned b = 0; b < PSS_SFP_BUCKETS; b++) {
        for (pss_sfp_t **p = &t->buckets[b]; *p != NULL; p = &(*p)->next) {
            if (oldest == NULL || (*p)->used_ns < (*oldest)->used_ns) {
                oldest = p;
            }
        }
    }
    if (oldest == NULL || now - (*oldest)->used_ns < PSS_SFP_IDLE_NS) {
        return 0;
    }
    e = *oldest;
    ps_warn("shared file pointer of file %016llx instance %016llx unused for %llu s: dropped",
            (unsigned long long)e->file_id, (unsigned long long)e->instance,
            (unsigned long long)((now - e->used_ns) / 1000000000ull));
    *oldest = e->next;
    free(e);
    t->count--;
    return 1;
}

/* Counters that uid made (a walk of the table: only a SET of a new
 * counter, once per MPI open, asks). */
static size_t pss_sfp_count_uid(const struct pss_sfp_table *t, uint32_t uid)
{
    size_t n = 0;

    for (unsigned b = 0; b < PSS_SFP_BUCKETS; b++) {
        for (const pss_sfp_t *e = t->buckets[b]; e != NULL; e = e->next) {
            n += e->uid == uid;
        }
    }
    return n;
}

/* The counter, made (at 0) for uid if unknown and `create`; *out NULL and
 * an error if it is unknown and not `create` (PS_ERR_NO_ENTRY) or cannot be
 * made. */
static ps_status_t pss_sfp_get(pss_worker_t *w, const ps_sfp_req_t *rq, int create, uint32_t uid,
                               uint64_t now, pss_sfp_t **out)
{
    struct pss_sfp_table *t = w->sfp;
    pss_sfp_t **slot, *e;

    *out = NULL;
    if (t == NULL) {
        t = w->sfp = calloc(1, sizeof(*t));
        if (t == NULL) {
            return PS_ERR_NO_MEMORY;
        }
    }
    slot = pss_sfp_slot(t, rq->file_id, rq->instance);
    if (*slot != NULL) {
        *out = *slot;
        return PS_OK;
    }
    if (!create) {
        ps_debug("worker %u: fetch-and-add of unknown shared file pointer (file %016llx "
                 "instance %016llx): refused",
                 w->index, (unsigned long long)rq->file_id, (unsigned long long)rq->instance);
        return PS_ERR_NO_ENTRY;
    }
    if (uid != 0 && pss_sfp_count_uid(t, uid) >= PSS_SFP_USER_MAX) {
        if (ps_log_limit_pass(&t->refused_log, now, PSS_LOG_EVERY_NS, NULL)) {
            ps_warn("worker %u: uid %u already has %d shared file pointers here, the most one "
                    "user may: refused",
                    w->index, uid, PSS_SFP_USER_MAX);
        }
        return PS_ERR_TOO_BIG;
    }
    if (t->count >= PSS_SFP_MAX) {
        if (!pss_sfp_expire(t, now)) {
            if (ps_log_limit_pass(&t->refused_log, now, PSS_LOG_EVERY_NS, NULL)) {
                ps_warn("worker %u: shared file pointer table full (%d counters in use)", w->index,
                        PSS_SFP_MAX);
            }
            return PS_ERR_TOO_BIG;
        }
        slot = pss_sfp_slot(t, rq->file_id, rq->instance); /* the chain may have changed */
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    e->file_id = rq->file_id;
    e->instance = rq->instance;
    e->view = rq->view;
    e->uid = uid;
    *slot = e;
    t->count++;
    *out = e;
    return PS_OK;
}

static ps_status_t pss_sfp_release(pss_worker_t *w, const ps_sfp_req_t *rq, ps_sfp_rep_t *rep)
{
    pss_sfp_t **slot, *e;

    if (w->sfp == NULL) {
        return PS_OK;
    }
    slot = pss_sfp_slot(w->sfp, rq->file_id, rq->instance);
    e = *slot;
    if (e != NULL) {
        rep->value = e->value;
        *slot = e->next;
        free(e);
        w->sfp->count--;
    }
    return PS_OK;
}

/* Bring the counter to the request's view: a newer one starts at 0 (every
 * opener made the same collective set_view, and the allreduce that starts
 * it orders each process's older accesses before anyone's newer ones); an older
 * one comes from a process that has not made a set_view the others have,
 * an erroneous program, and is refused. Views wrap (serial arithmetic). */
static ps_status_t pss_sfp_to_view(pss_sfp_t *e, uint32_t view)
{
    int32_t ahead = (int32_t)(view - e->view);

    if (ahead < 0) {
        return PS_ERR_INVALID;
    }
    if (ahead > 0) {
        e->value = 0;
        e->view = view;
    }
    return PS_OK;
}

void pss_sfp_handle(pss_worker_t *w, pss_req_t *req)
{
    ps_sfp_req_t rq;
    ps_sfp_rep_t rep = {0};
    pss_sfp_t *e = NULL;
    uint64_t now = ps_time_ns();
    ps_status_t status;

    rq = req->body.sfp; /* checked by ps_proto_decode */
    if (rq.op == PS_SFP_RELEASE) {
        status = pss_sfp_release(w, &rq, &rep);
        pss_reply(req, status, &rep, sizeof(rep), NULL, 0, 0);
        return;
    }
    status =
        pss_sfp_get(w, &rq, rq.op == PS_SFP_SET, req->conn != NULL ? req->conn->uid : 0, now, &e);
    if (status == PS_OK) {
        status = pss_sfp_to_view(e, rq.view);
    }
    if (status == PS_OK && rq.op == PS_SFP_FETCH_ADD) {
        if (rq.value > PS_SFP_VALUE_MAX - e->value) {
            status = PS_ERR_TOO_BIG;
        } else {
            rep.value = e->value;
            e->value += rq.value;
        }
    } else if (status == PS_OK) {
        e->value = rq.value;
        rep.value = e->value;
    }
    if (e != NULL) {
        e->used_ns = now;
    }
    pss_reply(req, status, &rep, sizeof(rep), NULL, 0, 0);
}

void pss_sfp_cleanup(pss_worker_t *w)
{
    if (w->sfp == NULL) {
        return;
    }
    for (unsigned b = 0; b < PSS_SFP_BUCKETS; b++) {
        while (w->sfp->buckets[b] != NULL) {
            pss_sfp_t *e = w->sfp->buckets[b];
            w->sfp->buckets[b] = e->next;
            free(e);
        }
    }
    free(w->sfp);
    w->sfp = NULL;
}

/*
 * pss_share.c: kept read spans (see pss_share.h). Each kept span is on two
 * lists: its object's (for lookups and drops) and the worker's LRU (for the
 * read_share byte budget). Only the object's worker touches either.
 */
#include "pss_share.h"

#include "ps_time.h"

#include <stdlib.h>
#include <string.h>

#define PSS_SHARE_WINDOW_NS (50ull * 1000 * 1000)   /* two readers this close: share */
#define PSS_SHARE_HOLD_NS   (1000ull * 1000 * 1000) /* sharing lasts this long after */
#define PSS_SHARE_MAX_SPAN  (8ull << 20)            /* bytes: larger spans are not kept */

struct pss_rspan {
    pss_rspan_t *obj_next;            /* the object's kept spans */
    pss_rspan_t *lru_prev, *lru_next; /* the worker's, most recently used first */
    pss_share_t *owner; /* its object's side */
    uint64_t off, len;
    uint8_t *buf;
};

int pss_share_note_reader(pss_worker_t *w, pss_share_t *sh, const void *conn)
{
    uint64_t now = ps_time_ns();

    if (w->server->cfg.read_share == 0) {
        return 0;
    }
    if (sh->last_reader != NULL && sh->last_reader != conn &&
        now - sh->last_read_ns < PSS_SHARE_WINDOW_NS) {
        sh->until = now + PSS_SHARE_HOLD_NS;
    }
    sh->last_reader = conn;
    sh->last_read_ns = now;
    return now < sh->until;
}

int pss_share_active(const pss_share_t *sh)
{
    return sh->until != 0 && ps_time_ns() < sh->until;
}

static void pss_lru_unlink(pss_worker_t *w, pss_rspan_t *r)
{
    if (r->lru_prev != NULL) {
        r->lru_prev->lru_next = r->lru_next;
    } else {
        w->share_head = r->lru_next;
    }
    if (r->lru_next != NULL) {
        r->lru_next->lru_prev = r->lru_prev;
    } else {
        w->share_tail = r->lru_prev;
    }
    r->lru_prev = r->lru_next = NULL;
}

static void pss_lru_push(pss_worker_t *w, pss_rspan_t *r)
{
    r->lru_prev = NULL;
    r->lru_next = w->share_head;
    if (w->share_head != NULL) {
        w->share_head->lru_prev = r;
    } else {
        w->share_tail = r;
    }
    w->share_head = r;
}

/* Unlink r from both lists (pp: its link in the object's list) and free it. */
static void pss_rspan_free(pss_worker_t *w, pss_rspan_t **pp)
{
    pss_rspan_t *r = *pp;

    *pp = r->obj_next;
    pss_lru_unlink(w, r);
    w->share_bytes -= r->len;
    free(r->buf);
    free(r);
}

int pss_share_copy(pss_worker_t *w, pss_share_t *sh, uint64_t off, uint64_t len, uint8_t *dst)
{
    for (pss_rspan_t *r = sh->spans; r != NULL; r = r->obj_next) {
        if (r->off <= off && off + len <= r->off + r->len) {
            memcpy(dst, r->buf + (off - r->off), len);
            pss_lru_unlink(w, r);
            pss_lru_push(w, r);
            return 1;
        }
    }
    return 0;
}

static void pss_share_evict(pss_worker_t *w, uint64_t need)
{
    while (w->share_tail != NULL && w->share_bytes + need > w->server->cfg.read_share) {
        pss_rspan_t *victim = w->share_tail;
        pss_rspan_t **pp = &victim->owner->spans;
        while (*pp != victim) {
            pp = &(*pp)->obj_next;
        }
        pss_rspan_free(w, pp);
    }
}

void pss_share_keep(pss_worker_t *w, pss_share_t *sh, uint64_t off, uint64_t len,
                    const uint8_t *src)
{
    if (len == 0 || len > PSS_SHARE_MAX_SPAN || len > w->server->cfg.read_share) {
        return;
    }
    pss_share_drop(w, sh, off, off + len); /* no two kept copies of one byte */
    pss_share_evict(w, len);
    pss_rspan_t *r = calloc(1, sizeof(*r));
    if (r == NULL || (r->buf = malloc(len)) == NULL) {
        free(r);
        return; /* not kept: the next read goes to disk */
    }
    memcpy(r->buf, src, len);
    r->owner = sh;
    r->off = off;
    r->len = len;
    r->obj_next = sh->spans;
    sh->spans = r;
    pss_lru_push(w, r);
    w->share_bytes += len;
}

void pss_share_drop(pss_worker_t *w, pss_share_t *sh, uint64_t lo, uint64_t hi)
{
    pss_rspan_t **pp = &sh->spans;

    while (*pp != NULL) {
        if ((*pp)->off < hi && lo < (*pp)->off + (*pp)->len) {
            pss_rspan_free(w, pp);
        } else {
            pp = &(*pp)->obj_next;
        }
    }
}

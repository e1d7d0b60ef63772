/*
 * pss_move.c: MOVE, the steps of a rename between two metadata servers
 * (ps_proto.h "MOVE", doc/design.md "Renaming").
 *
 * The source server S marks the old name as leaving (a record of "marks",
 * keyed like the name, holding the ticket and both names). The
 * destination server D decides, once and for all, whether the move
 * arrived or is given up, and S acts on D's receipt of that decision. D
 * keeps an arrived move in "arrived" (with its ticket and names, which a
 * QUERY of arrivals gives `pstripe gc` should the client die before the
 * last step) until S's receipt that the old name is gone, then, like a
 * given-up one, in "settled", keyed by the ticket's
 * expiry then its id, from whose front such records are purged once the
 * ticket is long expired (a replayed ARRIVE finds them until then). A mark
 * therefore never disappears while the file has a second name, and a
 * second name never appears once the mark may go: no crash between the
 * steps loses the file or leaves it with two names for good. Every step
 * but FORGET is flushed before its answer.
 *
 * S numbers each name a DONE takes away ("departed": the number, big-endian,
 * then the file id and the time), in the DONE's transaction, and keeps the
 * numbers an hour (the last always), so that `pstripe gc` can ask which
 * files left since it began (pss_gc.c, lib/psc_gc.c).
 */
#include "pss_move.h"

#include "pss_meta.h"
#include "pss_metadb.h"
#include "pss_perm.h"
#include "pss_req.h"

#include "ps_cap.h"
#include "ps_log.h"
#include "ps_time.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* Settled records are kept this long past their ticket's expiry (by D's
 * clock); then ARRIVE and RESOLVE purge them. ARRIVE admits a ticket up to
 * PSS_MOVE_SKEW_NS past its expiry (S's clock may be behind D's; only a
 * RESOLVE that gave the move up first stops it), never once its record
 * may be purged, so that a replayed ticket cannot bring a name back unless
 * D's clock is set back by more than the difference. (Refusing any ticket
 * that expires before a purged record's would hold even then, but after
 * every clock of a cluster ran ahead and was set right, it refused every
 * fresh ticket for as long as the clocks had been ahead: session 78's
 * review.) */
#define PSS_MOVE_KEEP_NS (24 * 3600ull * 1000000000ull)
#define PSS_MOVE_SKEW_NS (1800ull * 1000000000ull)
#define PSS_MOVE_PURGE   16 /* settled records an ARRIVE or RESOLVE purges at most */
#define PSS_DEPART_KEEP_NS (3600ull * 1000000000ull) /* departures kept (a DONE purges) */

/* A departure's value: the file id, then the time of the DONE. */
typedef struct pss_departure {
    uint64_t file_id, time_ns;
} pss_departure_t;

/* A mark's value: the ticket, then the lengths and bytes of both names. */
typedef struct pss_mark {
    ps_move_ticket_t ticket;
    uint32_t src_len, dst_len;
} pss_mark_t;

/* A request's names and the reply being built. */
typedef struct pss_move {
    pss_worker_t *w;
    pss_req_t *req;
    const ps_move_req_t *m;
    const char *src, *dst;
    ps_move_rep_t rep;
} pss_move_t;

/* A stored mark (or arrived record) val into *mark: 1 if well formed. */
static int pss_mark_parse(const MDB_val *val, pss_mark_t *mark)
{
    if (val->mv_size < sizeof(*mark)) {
        return 0;
    }
    memcpy(mark, val->mv_data, sizeof(*mark));
    return mark->src_len <= PS_PATH_MAX && mark->dst_len <= PS_PATH_MAX &&
           val->mv_size == sizeof(*mark) + mark->src_len + mark->dst_len;
}

/* The mark of key in txn into *mark (names in *val): PS_OK, PS_ERR_NO_ENTRY
 * or an error. */
static ps_status_t pss_mark_get(pss_server_t *s, MDB_txn *txn, const pss_key_t *key,
                                pss_mark_t *mark, MDB_val *val)
{
    int mdb_status = mdb_get(txn, s->mdb_marks, (MDB_val *)&key->val, val);

    if (mdb_status != 0) {
        return pss_mdb_status(mdb_status);
    }
    if (!pss_mark_parse(val, mark)) {
        ps_error("metadata store: a mark of %zu bytes is malformed", val->mv_size);
        return PS_ERR_IO;
    }
    return PS_OK;
}

/* The stored form of the request's move (marks and arrived records): its
 * ticket t, the names' lengths, the names; in buf. */
static void pss_mark_val(const pss_move_t *mv, const ps_move_ticket_t *t, uint8_t *buf,
                         MDB_val *val)
{
    pss_mark_t mark = {.ticket = *t, .src_len = mv->m->src_len, .dst_len = mv->m->dst_len};

    memcpy(buf, &mark, sizeof(mark));
    memcpy(buf + sizeof(mark), mv->src, mark.src_len);
    memcpy(buf + sizeof(mark) + mark.src_len, mv->dst, mark.dst_len);
    val->mv_size = sizeof(mark) + mark.src_len + mark.dst_len;
    val->mv_data = buf;
}

/* Commit txn (or abort it if status is not PS_OK) and, with flush, flush
 * the store. */
static ps_status_t pss_move_commit(pss_server_t *s, MDB_txn *txn, ps_status_t status, int flush)
{
    int mdb_status;

    if (status != PS_OK) {
        mdb_txn_abort(txn);
        return status;
    }
    mdb_status = pss_txn_commit(s, txn);
    if (mdb_status != 0) {
        ps_error("metadata store: commit of a MOVE: %s", mdb_strerror(mdb_status));
        return pss_mdb_status(mdb_status);
    }
    return flush ? pss_meta_sync(s) : PS_OK;
}

/* x as 8 big-endian bytes at b (keys that sort by it), and back. */
static void pss_be64_put(uint8_t *b, uint64_t x)
{
    for (int i = 0; i < 8; i++) {
        b[i] = (uint8_t)(x >> (56 - 8 * i));
    }
}

static uint64_t pss_be64_get(const void *b)
{
    uint64_t x = 0;

    for (int i = 0; i < 8; i++) {
        x = x << 8 | ((const uint8_t *)b)[i];
    }
    return x;
}

/* The key of a move's record at D: its expiry (big-endian, so that records
 * sort by it) and its id. */
static void pss_move_key(const ps_move_ticket_t *t, uint8_t key[16], MDB_val *val)
{
    pss_be64_put(key, t->expiry_ns);
    memcpy(key + 8, &t->tid, sizeof(t->tid));
    val->mv_size = 16;
    val->mv_data = key;
}

/* A receipt of state for the move of ticket t. */
static void pss_receipt(pss_server_t *s, const ps_move_ticket_t *t, uint32_t state,
                        ps_move_receipt_t *r)
{
    memset(r, 0, sizeof(*r));
    r->tid = t->tid;
    r->state = state;
    if (s->caps) {
        ps_move_receipt_sign(s->cap_key, r, t);
    }
}

/* LEAVE: mark SRC as leaving for DST and hand out the ticket. */
static ps_status_t pss_move_leave(pss_move_t *mv, MDB_txn *txn)
{
    pss_server_t *s = mv->w->server;
    const ps_move_req_t *m = mv->m;
    uint8_t buf[sizeof(pss_mark_t) + 2 * PS_PATH_MAX];
    ps_move_ticket_t *t = &mv->rep.ticket;
    pss_key_t key;
    MDB_val val;
    ps_status_t status;

    status = pss_meta_get(s, txn, mv->src, m->src_len, &key, &t->info);
    if (status == PS_OK && m->file_id != 0 && t->info.file_id != m->file_id) {
        status = PS_ERR_NO_ENTRY; /* the old name now names another file */
    }
    if (status == PS_OK) {
        status = pss_meta_allow(mv->req, &t->info, PS_CAP_REMOVE, mv->src, m->src_len);
    }
    if (status == PS_OK) {
        status = pss_meta_unmarked(s, txn, &key);
    }
    while (status == PS_OK && t->tid == 0) {
        if (getrandom(&t->tid, sizeof(t->tid), 0) != (ssize_t)sizeof(t->tid)) {
            ps_error("getrandom for a move id: %m");
            status = PS_ERR_IO;
        }
    }
    if (status != PS_OK) {
        return status;
    }
    t->expiry_ns = ps_cap_now_ns() + (uint64_t)(s->cfg.move_life * 1e9);
    t->flags = m->flags;
    if (s->caps) {
        ps_move_ticket_sign(s->cap_key, t, mv->src, m->src_len, mv->dst, m->dst_len);
    }
    pss_mark_val(mv, t, buf, &val);
    return pss_mdb_status(mdb_put(txn, s->mdb_marks, &key.val, &val, MDB_NOOVERWRITE));
}

/* Drop up to PSS_MOVE_PURGE settled records kept long enough. */
static ps_status_t pss_move_purge(pss_server_t *s, MDB_txn *txn, uint64_t now)
{
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int mdb_status = mdb_cursor_open(txn, s->mdb_settled, &cur);

    for (int i = 0; mdb_status == 0 && i < PSS_MOVE_PURGE; i++) {
        uint64_t expiry;

        mdb_status = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
        if (mdb_status != 0 || k.mv_size != 16) {
            break;
        }
        expiry = pss_be64_get(k.mv_data);
        if (now < PSS_MOVE_KEEP_NS || expiry > now - PSS_MOVE_KEEP_NS) {
            break;
        }
        mdb_status = mdb_cursor_del(cur, 0);
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    return mdb_status == MDB_NOTFOUND ? PS_OK : pss_mdb_status(mdb_status);
}

/* The state D recorded for the ticket's move: PS_MOVE_ARRIVED (in
 * "arrived"), PS_MOVE_GIVEN_UP or PS_MOVE_DEPARTED (arrived, and S dropped
 * the old name; both in "settled"), or 0 if none; -1 on an error (*status). */
static int pss_move_state(pss_server_t *s, MDB_txn *txn, const ps_move_ticket_t *t,
                          ps_status_t *status)
{
    uint8_t kb[16];
    uint32_t state;
    MDB_val k, v;
    int mdb_status;

    pss_move_key(t, kb, &k);
    mdb_status = mdb_get(txn, s->mdb_arrived, &k, &v);
    if (mdb_status == 0) {
        return PS_MOVE_ARRIVED; /* (protocol 17 stored the state alone) */
    }
    if (mdb_status == MDB_NOTFOUND) {
        mdb_status = mdb_get(txn, s->mdb_settled, &k, &v);
    }
    if (mdb_status == MDB_NOTFOUND) {
        return 0;
    }
    if (mdb_status != 0 || v.mv_size != sizeof(state)) {
        *status = mdb_status != 0 ? pss_mdb_status(mdb_status) : PS_ERR_IO;
        return -1;
    }
    memcpy(&state, v.mv_data, sizeof(state));
    return (int)state;
}

/* Record the request's move as state: arrived (with its ticket and names,
 * for QUERY of arrivals), or settled (given up, or departed: then no longer
 * arrived); purge old settled records. */
static ps_status_t pss_move_record(pss_move_t *mv, MDB_txn *txn, uint32_t state)
{
    pss_server_t *s = mv->w->server;
    const ps_move_ticket_t *t = &mv->m->ticket;
    uint8_t kb[16], buf[sizeof(pss_mark_t) + 2 * PS_PATH_MAX];
    MDB_val k, v = {sizeof(state), &state};
    ps_status_t status = pss_move_purge(s, txn, ps_cap_now_ns());
    int mdb_status;

    pss_move_key(t, kb, &k);
    if (status != PS_OK) {
        return status;
    }
    if (state == PS_MOVE_ARRIVED) {
        pss_mark_val(mv, t, buf, &v);
        return pss_mdb_status(mdb_put(txn, s->mdb_arrived, &k, &v, 0));
    }
    mdb_status = mdb_del(txn, s->mdb_arrived, &k, NULL);
    if (mdb_status != 0 && mdb_status != MDB_NOTFOUND) {
        return pss_mdb_status(mdb_status);
    }
    return pss_mdb_status(mdb_put(txn, s->mdb_settled, &k, &v, 0));
}

/*
 * In txn: put DST = the ticket's file, replacing DST as RENAME would.
 * PS_OK if it arrived; a refusal that gives the move up for good sets
 * rep.refused; any other status leaves nothing recorded (PS_ERR_BUSY: DST
 * is itself leaving; the client settles it and asks again).
 */
static ps_status_t pss_move_put_dst(pss_move_t *mv, MDB_txn *txn)
{
    pss_server_t *s = mv->w->server;
    const ps_move_ticket_t *t = &mv->m->ticket;
    ps_file_info_t info = t->info;
    uint32_t life_s;
    pss_key_t key;
    ps_status_t status;

    status = pss_meta_get(s, txn, mv->dst, mv->m->dst_len, &key, &mv->rep.replaced);
    if (status == PS_OK) {
        if (t->flags & PS_RENAME_NOREPLACE) {
            mv->rep.refused = PS_ERR_EXISTS;
            return PS_OK;
        }
        if (pss_meta_allow(mv->req, &mv->rep.replaced, PS_CAP_REMOVE, mv->dst, mv->m->dst_len) !=
            PS_OK) {
            mv->rep.refused = PS_ERR_ACCESS;
            return PS_OK;
        }
        status = pss_meta_unmarked(s, txn, &key);
        if (status != PS_OK) {
            return status;
        }
        pss_perm_grant(s, mv->req, mv->rep.replaced.file_id, PS_CAP_REMOVE, &mv->rep.replaced_cap,
                       &life_s);
        mv->rep.has_replaced = 1;
        status = pss_meta_del(s, txn, &key, mv->rep.replaced.file_id);
    } else if (status == PS_ERR_NO_ENTRY) {
        memset(&mv->rep.replaced, 0, sizeof(mv->rep.replaced));
        status = PS_OK;
    }
    if (status == PS_OK) {
        info.mtime_ns = ps_wall_ns();
        status = pss_meta_put(s, txn, &key, mv->dst, mv->m->dst_len, &info);
    }
    return status;
}

/* Whether the ticket of an ARRIVE with no record here is too old to
 * arrive (logged): past its expiry by more than the servers' clocks may
 * differ. */
static int pss_move_stale(const pss_move_t *mv)
{
    const ps_move_ticket_t *t = &mv->m->ticket;
    uint64_t now = ps_cap_now_ns();
    int stale = now > PSS_MOVE_SKEW_NS && now - PSS_MOVE_SKEW_NS > t->expiry_ns;

    if (stale) {
        ps_warn("worker %u: MOVE ARRIVE of %.*s with a ticket %.0f s past its expiry: refused "
                "(are the servers' clocks apart?)",
                mv->w->index, (int)mv->m->dst_len, mv->dst, (double)(now - t->expiry_ns) / 1e9);
    }
    return stale;
}

/*
 * ARRIVE (arrive 1: the commit point) or RESOLVE: D's decision on the
 * ticket's move, recorded once and for all. RESOLVE gives up a move D has
 * no record of once its ticket expired (or with PS_MOVE_GIVE_UP), else
 * answers PS_ERR_BUSY (still under way). A move already recorded answers
 * its receipt.
 */
static ps_status_t pss_move_decide(pss_move_t *mv, MDB_txn *txn, int arrive)
{
    pss_server_t *s = mv->w->server;
    const ps_move_ticket_t *t = &mv->m->ticket;
    ps_status_t status = PS_OK;
    int state = pss_move_state(s, txn, t, &status);

    if (state < 0) {
        return status;
    }
    if (state == 0) {
        if (arrive && pss_move_stale(mv)) {
            mv->rep.refused = PS_ERR_TIMEOUT;
        } else if (arrive) {
            status = pss_move_put_dst(mv, txn);
            if (status != PS_OK) {
                mv->rep.has_replaced = 0;
                return status;
            }
        } else if (!(mv->m->flags & PS_MOVE_GIVE_UP) && ps_cap_now_ns() <= t->expiry_ns) {
            return PS_ERR_BUSY;
        }
        state = arrive && mv->rep.refused == 0 ? PS_MOVE_ARRIVED : PS_MOVE_GIVEN_UP;
        status = pss_move_record(mv, txn, (uint32_t)state);
    } else if (state == PS_MOVE_GIVEN_UP && arrive) {
        mv->rep.refused = PS_ERR_CANCELED;
    }
    pss_receipt(s, t, state == PS_MOVE_DEPARTED ? PS_MOVE_ARRIVED : (uint32_t)state,
                &mv->rep.receipt);
    return status;
}

/* A departure's number from its key (8 bytes, big-endian; 0 if malformed). */
static uint64_t pss_departure_number(const MDB_val *k)
{
    return k->mv_size == 8 ? pss_be64_get(k->mv_data) : 0;
}

/* In txn, number the departure of file_id after the last one, and purge up
 * to PSS_MOVE_PURGE departures (never the last, which carries the count
 * on) stamped more than PSS_DEPART_KEEP_NS before now, or after it (the
 * clock ran ahead and was set back: else they would hold up the purge of
 * all behind them for as long). A purge only makes gc ask again (more). */
static ps_status_t pss_move_depart(pss_server_t *s, MDB_txn *txn, uint64_t file_id)
{
    pss_departure_t d = {file_id, ps_cap_now_ns()};
    uint8_t kb[8];
    uint64_t number = 1;
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int mdb_status = mdb_cursor_open(txn, s->mdb_departed, &cur);

    if (mdb_status == 0) {
        mdb_status = mdb_cursor_get(cur, &k, &v, MDB_LAST);
        number = mdb_status == 0 ? pss_departure_number(&k) + 1 : 1;
        mdb_status = mdb_status == MDB_NOTFOUND ? 0 : mdb_status;
    }
    pss_be64_put(kb, number);
    k = (MDB_val){sizeof(kb), kb};
    v = (MDB_val){sizeof(d), &d};
    if (mdb_status == 0) {
        mdb_status = mdb_cursor_put(cur, &k, &v, MDB_APPEND);
    }
    for (int i = 0; mdb_status == 0 && i < PSS_MOVE_PURGE; i++) {
        pss_departure_t old;

        mdb_status = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
        if (mdb_status != 0 || pss_departure_number(&k) == number || v.mv_size != sizeof(old)) {
            break;
        }
        memcpy(&old, v.mv_data, sizeof(old));
        if (old.time_ns <= d.time_ns + PSS_DEPART_KEEP_NS &&
            old.time_ns + PSS_DEPART_KEEP_NS >= d.time_ns) {
            break; /* (times are ns since 1970: no sum wraps) */
        }
        mdb_status = mdb_cursor_del(cur, 0);
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    return mdb_status == MDB_NOTFOUND ? PS_OK : pss_mdb_status(mdb_status);
}

/* DONE: act on D's receipt if SRC's mark is the ticket's move; answer that
 * SRC holds no mark of it (the ticket, checked, says SRC is its old name,
 * and a mark is made only by the LEAVE that made the ticket). */
static ps_status_t pss_move_done(pss_move_t *mv, MDB_txn *txn)
{
    pss_server_t *s = mv->w->server;
    const ps_move_ticket_t *t = &mv->m->ticket;
    pss_mark_t mark;
    pss_key_t key;
    MDB_val val;
    ps_status_t status;

    pss_key_make(s, mv->src, mv->m->src_len, &key);
    status = pss_mark_get(s, txn, &key, &mark, &val);
    if (status == PS_OK && mark.ticket.tid == t->tid) {
        status = pss_mdb_status(mdb_del(txn, s->mdb_marks, &key.val, NULL));
        if (status == PS_OK && mv->m->receipt.state == PS_MOVE_ARRIVED) {
            status = pss_meta_del(s, txn, &key, mark.ticket.info.file_id);
            if (status == PS_OK) {
                status = pss_move_depart(s, txn, mark.ticket.info.file_id);
            }
            status = status == PS_ERR_NO_ENTRY ? PS_OK : status;
        }
    } else if (status == PS_OK || status == PS_ERR_NO_ENTRY) {
        status = PS_OK; /* not (or no longer) this move's mark */
    }
    pss_receipt(s, t, PS_MOVE_DEPARTED, &mv->rep.receipt);
    return status;
}

/* FORGET: an arrived move that S no longer marks is departed. Its record
 * stays until the ticket's expiry is long past (a replayed ARRIVE finds it),
 * then the purge drops it. */
static ps_status_t pss_move_forget(pss_move_t *mv, MDB_txn *txn)
{
    pss_server_t *s = mv->w->server;
    ps_status_t status = PS_OK;
    int state = pss_move_state(s, txn, &mv->m->ticket, &status);

    if (state != PS_MOVE_ARRIVED) {
        return state < 0 ? status : PS_OK;
    }
    return pss_move_record(mv, txn, PS_MOVE_DEPARTED);
}

/* The first record of db (marks, or arrived), or the first after key
 * after (not NULL), into *mark, its names in *val; PS_ERR_NO_ENTRY if
 * none. (Arrived records of protocol 17 hold no names: they are passed
 * over.) */
static ps_status_t pss_move_first(pss_server_t *s, MDB_txn *txn, MDB_dbi db, const pss_key_t *after,
                                  pss_mark_t *mark, MDB_val *val)
{
    MDB_cursor *cur = NULL;
    MDB_cursor_op op = after != NULL ? MDB_SET_RANGE : MDB_FIRST;
    MDB_val k = after != NULL ? after->val : (MDB_val){0, NULL};
    int mdb_status = mdb_cursor_open(txn, db, &cur);

    for (; mdb_status == 0; op = MDB_NEXT) {
        mdb_status = mdb_cursor_get(cur, &k, val, op);
        if (mdb_status == 0 && after != NULL && pss_val_eq(&k, &after->val)) {
            continue; /* (strictly after) */
        }
        if (mdb_status != 0 || pss_mark_parse(val, mark)) {
            break;
        }
        if (db != s->mdb_arrived || val->mv_size != sizeof(uint32_t)) {
            ps_error("metadata store: a record of a move of %zu bytes is malformed", val->mv_size);
            mdb_status = EIO;
        }
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    return pss_mdb_status(mdb_status);
}

/* QUERY: SRC's mark, or (src_len 0, root) the first mark of the store (or
 * the first after DST's), or with PS_MOVE_ARRIVALS its first arrived move
 * and its receipt. */
static ps_status_t pss_move_query(pss_move_t *mv, MDB_txn *txn, uint8_t **data, size_t *len)
{
    pss_server_t *s = mv->w->server;
    const ps_move_req_t *m = mv->m;
    int arrivals = (m->flags & PS_MOVE_ARRIVALS) != 0;
    ps_file_info_t info;
    pss_mark_t mark;
    pss_key_t key;
    MDB_val val;
    ps_status_t status;

    if (m->src_len == 0) {
        if (!pss_perm_is_root(s, mv->req)) {
            return PS_ERR_ACCESS;
        }
        if (m->dst_len > 0) {
            pss_key_make(s, mv->dst, m->dst_len, &key);
        }
        status = pss_move_first(s, txn, arrivals ? s->mdb_arrived : s->mdb_marks,
                                m->dst_len > 0 ? &key : NULL, &mark, &val);
    } else {
        status = pss_meta_get(s, txn, mv->src, m->src_len, &key, &info);
        if (status == PS_OK) {
            status = pss_meta_allow(mv->req, &info, PS_CAP_REMOVE, mv->src, m->src_len);
        }
        if (status == PS_OK) {
            status = pss_mark_get(s, txn, &key, &mark, &val);
        }
    }
    if (status != PS_OK) {
        return status;
    }
    *len = mark.src_len + mark.dst_len;
    *data = malloc(*len);
    if (*data == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    memcpy(*data, (const uint8_t *)val.mv_data + sizeof(mark), *len);
    mv->rep.ticket = mark.ticket;
    mv->rep.src_len = mark.src_len;
    mv->rep.dst_len = mark.dst_len;
    if (arrivals) {
        pss_receipt(s, &mark.ticket, PS_MOVE_ARRIVED, &mv->rep.receipt);
    }
    return PS_OK;
}

/* The request's names are valid and its server's, and its signed words genuine. */
static ps_status_t pss_move_check(pss_move_t *mv)
{
    pss_server_t *s = mv->w->server;
    const ps_move_req_t *m = mv->m;
    int at_src = m->op == PS_MOVE_LEAVE || m->op == PS_MOVE_DONE || m->op == PS_MOVE_QUERY;
    const char *name = at_src ? mv->src : mv->dst;
    size_t len = at_src ? m->src_len : m->dst_len;
    ps_status_t status = PS_OK;

    if (m->src_len > 0) {
        status = pss_check_path(mv->req, mv->src, m->src_len);
    }
    if (status == PS_OK && m->dst_len > 0) {
        status = pss_check_path(mv->req, mv->dst, m->dst_len);
    }
    if (status != PS_OK) {
        return status;
    }
    if (m->op != PS_MOVE_QUERY && m->src_len == m->dst_len &&
        memcmp(mv->src, mv->dst, m->src_len) == 0) {
        return PS_ERR_INVALID; /* a name onto itself */
    }
    if (s->cfg.cluster_size <= 0 || s->cfg.server_index < 0) {
        ps_warn("worker %u: MOVE refused: this server does not know its place in the cluster "
                "(server_index, cluster_size), so it cannot tell which server decides a move",
                mv->w->index);
        return PS_ERR_UNSUPPORTED;
    }
    if (len > 0 && !pss_meta_owns(s, name, len)) {
        ps_warn("worker %u: MOVE req %llu (op %u) of a name another server owns: refused",
                mv->w->index, (unsigned long long)mv->req->hdr.req_id, m->op);
        return PS_ERR_INVALID;
    }
    if (!s->caps) {
        return PS_OK;
    }
    if (m->op == PS_MOVE_LEAVE || m->op == PS_MOVE_QUERY) {
        return PS_OK;
    }
    if (!ps_move_ticket_ok(s->cap_key, &m->ticket, mv->src, m->src_len, mv->dst, m->dst_len) ||
        ((m->op == PS_MOVE_DONE || m->op == PS_MOVE_FORGET) &&
         !ps_move_receipt_ok(s->cap_key, &m->receipt, &m->ticket))) {
        return PS_ERR_ACCESS;
    }
    return PS_OK;
}

/* Run the request's step in one transaction (a write one, flushed, but for QUERY). */
static ps_status_t pss_move_step(pss_move_t *mv, uint8_t **data, size_t *len)
{
    pss_server_t *s = mv->w->server;
    int query = mv->m->op == PS_MOVE_QUERY;
    MDB_txn *txn;
    ps_status_t status = pss_txn_begin(s, query ? MDB_RDONLY : 0, &txn);

    if (status != PS_OK) {
        return status;
    }
    switch (mv->m->op) {
    case PS_MOVE_LEAVE:
        status = pss_move_leave(mv, txn);
        break;
    case PS_MOVE_ARRIVE:
    case PS_MOVE_RESOLVE:
        status = pss_move_decide(mv, txn, mv->m->op == PS_MOVE_ARRIVE);
        break;
    case PS_MOVE_DONE:
        status = pss_move_done(mv, txn);
        break;
    case PS_MOVE_FORGET:
        status = pss_move_forget(mv, txn);
        break;
    default:
        status = pss_move_query(mv, txn, data, len);
        mdb_txn_abort(txn);
        return status;
    }
    /* FORGET only tidies: lost in a crash, it leaves an arrived record (for gc) */
    return pss_move_commit(s, txn, status, mv->m->op != PS_MOVE_FORGET);
}

void pss_move_handle(pss_worker_t *w, pss_req_t *req)
{
    pss_move_t mv;
    uint8_t *data = NULL;
    size_t len = 0;
    ps_status_t status;

    memset(&mv, 0, sizeof(mv));
    mv.w = w;
    mv.req = req;
    mv.m = &req->body.move;
    mv.src = req->data;
    mv.dst = (const char *)req->data + mv.m->src_len;
    status = pss_move_check(&mv);
    if (status == PS_OK) {
        status = pss_move_step(&mv, &data, &len);
    }
    if (status != PS_OK) {
        free(data);
        pss_reply(req, status, NULL, 0, NULL, 0, 0);
        return;
    }
    ps_debug("worker %u: MOVE op %u of %.*s to %.*s: %s", w->index, mv.m->op, (int)mv.m->src_len,
             mv.src, (int)mv.m->dst_len, mv.dst,
             mv.rep.refused != 0 ? ps_status_string(mv.rep.refused) : "done");
    pss_reply(req, PS_OK, &mv.rep, sizeof(mv.rep), data, len, 0);
}

/* Entries of db in txn (at most UINT32_MAX). */
static ps_status_t pss_move_count(MDB_txn *txn, MDB_dbi db, uint32_t *n)
{
    MDB_stat st;
    int mdb_status = mdb_stat(txn, db, &st);

    *n = mdb_status != 0 ? 0 : st.ms_entries > UINT32_MAX ? UINT32_MAX : (uint32_t)st.ms_entries;
    return pss_mdb_status(mdb_status);
}

ps_status_t pss_move_counts(pss_server_t *s, MDB_txn *txn, pss_move_counts_t *c)
{
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    ps_status_t status = pss_move_count(txn, s->mdb_marks, &c->marks);
    int mdb_status;

    if (status == PS_OK) {
        status = pss_move_count(txn, s->mdb_arrived, &c->arrivals);
    }
    c->departed = c->forgotten = 0;
    if (status != PS_OK) {
        return status;
    }
    mdb_status = mdb_cursor_open(txn, s->mdb_departed, &cur);
    if (mdb_status == 0) {
        mdb_status = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    }
    if (mdb_status == 0) {
        c->forgotten = pss_departure_number(&k) - 1;
        mdb_status = mdb_cursor_get(cur, &k, &v, MDB_LAST);
    }
    if (mdb_status == 0) {
        c->departed = pss_departure_number(&k);
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    return mdb_status == MDB_NOTFOUND ? PS_OK : pss_mdb_status(mdb_status);
}

ps_status_t pss_move_departures(pss_server_t *s, MDB_txn *txn, uint64_t after,
                                void (*fn)(uint64_t file_id, void *arg), void *arg)
{
    uint8_t kb[8];
    MDB_cursor *cur = NULL;
    MDB_val k = {sizeof(kb), kb}, v;
    int mdb_status = mdb_cursor_open(txn, s->mdb_departed, &cur);

    pss_be64_put(kb, after + 1);
    for (MDB_cursor_op op = MDB_SET_RANGE; mdb_status == 0 && after < UINT64_MAX; op = MDB_NEXT) {
        pss_departure_t d;

        mdb_status = mdb_cursor_get(cur, &k, &v, op);
        if (mdb_status == 0 && v.mv_size != sizeof(d)) {
            ps_error("metadata store: a departure of %zu bytes is malformed", v.mv_size);
            mdb_status = EIO;
        }
        if (mdb_status == 0) {
            memcpy(&d, v.mv_data, sizeof(d));
            fn(d.file_id, arg);
        }
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    return mdb_status == MDB_NOTFOUND ? PS_OK : pss_mdb_status(mdb_status);
}

/*
 * psc_move.c: a rename between two metadata servers (ps_proto.h "MOVE",
 * doc/design.md "Renaming"), and settling a move a client left unfinished.
 *
 * The old name's server S marks it as leaving and signs a ticket; the new
 * name's server D takes the ticket and decides, once and for all, whether
 * the move arrived (the new name is in place) or is given up; S then drops
 * the old name or the mark on D's signed receipt. A client that dies, or a
 * server that goes down, between the steps leaves a mark, which the next
 * client to remove, rename or change the old name (or `pstripe gc`)
 * settles the same way: it asks D for the receipt. D gives a move whose
 * ticket has not expired (the old server's move_life) time to arrive, so
 * until then that name answers PS_ERR_BUSY.
 */
#include "ps_layout.h"
#include "ps_log.h"
#include "psc_call.h"
#include "psc_conn.h"
#include "psc_error.h"
#include "psc_move.h"
#include "psc_op.h"
#include "psc_wait.h"

#include <stdlib.h>
#include <string.h>

#define PSC_SETTLE_MAX 1000 /* marks `pstripe gc` settles on one server per run */

/* One MOVE step, sent to the server of the name the step acts on (at S:
 * SRC; at D: DST; server when that name is empty). names: SRC then DST.
 * A QUERY's reply data (both names) lands in *data (malloc'd, the caller
 * frees). */
static ps_status_t psc_move_call(pstripe_fs_t *fs, uint32_t server, const ps_move_req_t *req,
                                 const char *names, ps_move_rep_t *rep, void **data)
{
    int at_src = req->op == PS_MOVE_LEAVE || req->op == PS_MOVE_DONE || req->op == PS_MOVE_QUERY;
    const char *name = at_src ? names : names + req->src_len;
    uint32_t len = at_src ? req->src_len : req->dst_len;
    psc_call_t call;
    psc_op_t op;
    ps_status_t status;

    memset(rep, 0, sizeof(*rep));
    psc_call_init(&call);
    psc_op_init(&op, len > 0 ? ps_path_server(name, len, fs->nservers) : server, PS_MSG_MOVE, req,
                sizeof(*req));
    if (len > 0) {
        op.route = PSC_ROUTE_PATH;
        op.route_path = name;
        op.route_path_len = len;
    }
    op.send_buf = names;
    op.send_count = (size_t)req->src_len + req->dst_len;
    op.rep_body = rep;
    op.rep_body_len = sizeof(*rep);
    if (data != NULL) {
        op.recv_mode = PSC_RECV_ALLOC;
        op.recv_max = 2 * PS_PATH_MAX;
    }
    psc_op_post(fs, &op, &call);
    status = psc_call_wait(fs, &call);
    if (data != NULL) {
        *data = op.recv_alloc;
    }
    if (status == PS_OK && data != NULL &&
        (rep->src_len == 0 || rep->dst_len == 0 ||
         op.recv_alloc_len != (uint64_t)rep->src_len + rep->dst_len)) {
        status = psc_error(PS_ERR_PROTO, "server %s sent a malformed MOVE reply",
                           fs->servers[op.server].addr);
    }
    return status;
}

/* A MOVE request: op, the ticket and receipt it carries (NULL: none), and
 * the lengths of the names that follow it. */
static void psc_move_req(ps_move_req_t *req, uint32_t op, const ps_move_ticket_t *t,
                         const ps_move_receipt_t *r, size_t src_len, size_t dst_len)
{
    memset(req, 0, sizeof(*req));
    req->op = op;
    req->src_len = (uint32_t)src_len;
    req->dst_len = (uint32_t)dst_len;
    if (t != NULL) {
        req->ticket = *t;
    }
    if (r != NULL) {
        req->receipt = *r;
    }
}

/* With D's receipt: DONE at S, then (arrived) FORGET at D, which is only
 * tidying: its status goes to *forgot if not NULL (a failure leaves a
 * record of a few bytes on D, which `pstripe gc` finishes). */
static ps_status_t psc_move_finish(pstripe_fs_t *fs, const ps_move_ticket_t *t,
                                   const ps_move_receipt_t *decided, const char *names,
                                   size_t src_len, size_t dst_len, ps_status_t *forgot)
{
    ps_move_req_t req;
    ps_move_rep_t rep;
    ps_status_t status, forget;

    psc_move_req(&req, PS_MOVE_DONE, t, decided, src_len, dst_len);
    status = psc_move_call(fs, 0, &req, names, &rep, NULL);
    if (status != PS_OK || decided->state != PS_MOVE_ARRIVED) {
        forget = PS_OK;
    } else {
        psc_move_req(&req, PS_MOVE_FORGET, t, &rep.receipt, src_len, dst_len);
        forget = psc_move_call(fs, 0, &req, names, &rep, NULL);
    }
    if (forget != PS_OK) {
        ps_debug("rename of %.*s: the record of the move stays on its new server: %s", (int)src_len,
                 names, pstripe_last_error());
    }
    if (forgot != NULL) {
        *forgot = forget;
    }
    return status;
}

/* Settle the move of a marked name whose ticket and names a QUERY gave. */
static ps_status_t psc_move_settle_names(pstripe_fs_t *fs, const ps_move_ticket_t *t,
                                         const char *names, size_t src_len, size_t dst_len)
{
    ps_move_req_t req;
    ps_move_rep_t rep;
    ps_status_t status;

    psc_move_req(&req, PS_MOVE_RESOLVE, t, NULL, src_len, dst_len);
    status = psc_move_call(fs, 0, &req, names, &rep, NULL);
    if (status == PS_ERR_BUSY) {
        return psc_error(PS_ERR_BUSY,
                         "%.*s is being renamed to %.*s (a rename between servers under way, or "
                         "interrupted less than the server's move_life ago)",
                         (int)src_len, names, (int)dst_len, names + src_len);
    }
    if (status == PS_OK) {
        status = psc_move_finish(fs, t, &rep.receipt, names, src_len, dst_len, NULL);
    }
    if (status != PS_OK && status != PS_ERR_BUSY) {
        char why[PSC_MSG_MAX];
        snprintf(why, sizeof(why), "%s", pstripe_last_error());
        psc_set_error("cannot settle the unfinished rename of %.*s to %.*s: %s", (int)src_len,
                      names, (int)dst_len, names + src_len, why);
    }
    return status;
}

/* QUERY at server the mark of name (len bytes), or (name NULL: root's) the
 * first marked name after (*after_len bytes of) after, and settle what it
 * finds; still under way (PS_ERR_BUSY), root's gets its name in after. */
static ps_status_t psc_move_settle_query(pstripe_fs_t *fs, uint32_t server, const char *name,
                                         size_t len, char *after, size_t *after_len)
{
    ps_move_req_t req;
    ps_move_rep_t rep;
    void *data = NULL;
    ps_status_t status;

    psc_move_req(&req, PS_MOVE_QUERY, NULL, NULL, len, name != NULL ? 0 : *after_len);
    status = psc_move_call(fs, server, &req, name != NULL ? name : after, &rep, &data);
    if (status == PS_OK && name != NULL && (rep.src_len != len || memcmp(data, name, len) != 0)) {
        status = psc_error(PS_ERR_PROTO, "server %s answered a MOVE query with another name",
                           fs->servers[ps_path_server(name, len, fs->nservers)].addr);
    }
    if (status == PS_OK) {
        status = psc_move_settle_names(fs, &rep.ticket, data, rep.src_len, rep.dst_len);
    }
    if (status == PS_ERR_BUSY && name == NULL && rep.src_len > 0) {
        memcpy(after, data, rep.src_len); /* (rep.src_len <= PS_PATH_MAX: checked) */
        *after_len = rep.src_len;
    }
    free(data);
    return status;
}

ps_status_t psc_move_settle(pstripe_fs_t *fs, const char *name, size_t len)
{
    ps_status_t status = psc_move_settle_query(fs, 0, name, len, NULL, NULL);

    if (status == PS_ERR_BUSY) {
        char why[PSC_MSG_MAX];
        snprintf(why, sizeof(why), "%s", pstripe_last_error());
        return psc_error(PS_ERR_BUSY, "%s: try again", why);
    }
    return status == PS_ERR_NO_ENTRY ? PS_OK : status; /* settled meanwhile, or no name */
}

ps_status_t psc_move_settle_server(pstripe_fs_t *fs, uint32_t server)
{
    char after[PS_PATH_MAX];
    size_t after_len = 0;

    for (int i = 0; i < PSC_SETTLE_MAX; i++) {
        ps_status_t status = psc_move_settle_query(fs, server, NULL, 0, after, &after_len);

        if (status == PS_ERR_BUSY) {
            ps_warn("%s; left to finish", pstripe_last_error());
        } else if (status != PS_OK) {
            return status == PS_ERR_NO_ENTRY ? PS_OK : status;
        }
    }
    return psc_error(PS_ERR_BUSY,
                     "server %s: more than %d unfinished renames settled, and more "
                     "come: try again",
                     fs->servers[server].addr, PSC_SETTLE_MAX);
}

/* QUERY at server D a move it holds as arrived (*tid: its id) and finish
 * it (DONE at its old name's server, FORGET at D), as its client would
 * have. */
static ps_status_t psc_move_forget_query(pstripe_fs_t *fs, uint32_t server, uint64_t *tid)
{
    ps_move_req_t req;
    ps_move_rep_t rep;
    ps_move_receipt_t arrived;
    void *data = NULL;
    ps_status_t forgot, status;

    psc_move_req(&req, PS_MOVE_QUERY, NULL, NULL, 0, 0);
    req.flags = PS_MOVE_ARRIVALS;
    status = psc_move_call(fs, server, &req, NULL, &rep, &data);
    if (status == PS_OK &&
        (rep.receipt.state != PS_MOVE_ARRIVED || rep.receipt.tid != rep.ticket.tid ||
         ps_path_server((const char *)data + rep.src_len, rep.dst_len, fs->nservers) != server)) {
        status = psc_error(PS_ERR_PROTO,
                           "its record of the move of %.*s to %.*s is not one it may hold (the "
                           "new name is another server's, or the receipt not the move's)",
                           (int)rep.src_len, (const char *)data, (int)rep.dst_len,
                           (const char *)data + rep.src_len);
    }
    if (status == PS_OK && rep.ticket.tid == *tid) {
        status = psc_error(PS_ERR_IO,
                           "its record of the move of %.*s to %.*s stays after DONE "
                           "and FORGET",
                           (int)rep.src_len, (const char *)data, (int)rep.dst_len,
                           (const char *)data + rep.src_len);
    }
    if (status == PS_OK) {
        *tid = rep.ticket.tid;
        arrived = rep.receipt;
        status =
            psc_move_finish(fs, &rep.ticket, &arrived, data, rep.src_len, rep.dst_len, &forgot);
        status = status == PS_OK ? forgot : status;
    }
    free(data);
    return status;
}

void psc_move_finish_arrivals(pstripe_fs_t *fs, uint32_t server)
{
    uint64_t tid = 0;

    for (int i = 0; i < PSC_SETTLE_MAX; i++) {
        ps_status_t status = psc_move_forget_query(fs, server, &tid);

        if (status == PS_ERR_NO_ENTRY) {
            return;
        }
        if (status != PS_OK) {
            ps_warn("server %s: cannot finish the renames it holds as arrived: %s",
                    fs->servers[server].addr, pstripe_last_error());
            return;
        }
    }
}

/* One MOVE step; if the name it acts on is itself leaving (PS_ERR_BUSY),
 * settle that move (name, len) and send the step once more. */
static ps_status_t psc_move_call_settled(pstripe_fs_t *fs, const ps_move_req_t *req,
                                         const char *names, ps_move_rep_t *rep, const char *name,
                                         size_t len)
{
    ps_status_t status = psc_move_call(fs, 0, req, names, rep, NULL);

    if (status == PS_ERR_BUSY) {
        status = psc_move_settle(fs, name, len);
        if (status == PS_OK) {
            status = psc_move_call(fs, 0, req, names, rep, NULL);
        }
    }
    return status;
}

/* LEAVE at S (settling an earlier move of SRC first): the ticket. */
static ps_status_t psc_move_leave(pstripe_fs_t *fs, const char *names, size_t flen, size_t tlen,
                                  ps_move_ticket_t *t)
{
    ps_move_req_t req;
    ps_move_rep_t rep;
    ps_status_t status;

    psc_move_req(&req, PS_MOVE_LEAVE, NULL, NULL, flen, tlen);
    status = psc_move_call_settled(fs, &req, names, &rep, names, flen);
    if (status == PS_ERR_NO_ENTRY) {
        psc_set_error("cannot rename %.*s: no such file", (int)flen, names);
    } else if (status == PS_ERR_ACCESS) {
        psc_set_error("cannot rename %.*s to %.*s: permission denied", (int)flen, names, (int)tlen,
                      names + flen);
    } else if (status == PS_ERR_UNSUPPORTED) {
        psc_set_error("cannot rename %.*s to %.*s: their metadata servers differ, and such a "
                      "rename needs servers that know their places in the cluster: start every "
                      "server with server_index and cluster_size (as `pstripe local start` does)",
                      (int)flen, names, (int)tlen, names + flen);
    }
    *t = rep.ticket;
    return status;
}

/* ARRIVE at D (settling a move of DST first): D's receipt in *rep. If
 * the answer does not come, ask D to give the move up (why it failed in
 * why); if even that fails, the mark stays for the next client to settle. */
static ps_status_t psc_move_arrive(pstripe_fs_t *fs, const ps_move_ticket_t *t, const char *names,
                                   size_t flen, size_t tlen, ps_move_rep_t *rep, char *why)
{
    ps_move_req_t req;
    ps_status_t status;

    psc_move_req(&req, PS_MOVE_ARRIVE, t, NULL, flen, tlen);
    status = psc_move_call_settled(fs, &req, names, rep, names + flen, tlen);
    if (status == PS_OK) {
        return PS_OK;
    }
    snprintf(why, PSC_MSG_MAX, "%s", pstripe_last_error());
    psc_move_req(&req, PS_MOVE_RESOLVE, t, NULL, flen, tlen);
    req.flags = PS_MOVE_GIVE_UP;
    if (psc_move_call(fs, 0, &req, names, rep, NULL) != PS_OK) {
        return psc_error(status,
                         "cannot rename %.*s to %.*s: %s; %.*s stays busy for removal, rename "
                         "and chmod until the next of these settles the rename (after the "
                         "server's move_life at most)",
                         (int)flen, names, (int)tlen, names + flen, why, (int)flen, names);
    }
    rep->refused = rep->receipt.state == PS_MOVE_ARRIVED ? 0 : status;
    rep->has_replaced = 0; /* (if it arrived, the replaced file's objects stay for gc) */
    return PS_OK;
}

/* The error of a move D gave up. */
static ps_status_t psc_move_refused(ps_status_t refused, const char *names, size_t flen,
                                    size_t tlen)
{
    const char *why = refused == PS_ERR_EXISTS    ? "the new name exists"
                      : refused == PS_ERR_ACCESS  ? "permission denied (replacing the new name)"
                      : refused == PS_ERR_TIMEOUT ? "the new name's server found the old one's "
                                                    "ticket stale (are their clocks apart?)"
                      : refused == PS_ERR_BUSY ? "the new name is itself being renamed; try again"
                                               : ps_status_string(refused);

    return psc_error(refused, "cannot rename %.*s to %.*s: %s", (int)flen, names, (int)tlen,
                     names + flen, why);
}

ps_status_t psc_move(pstripe_fs_t *fs, const char *names, size_t flen, size_t tlen,
                     ps_rename_rep_t *out)
{
    char why[PSC_MSG_MAX] = "";
    ps_move_ticket_t t;
    ps_move_rep_t rep;
    ps_status_t status = psc_move_leave(fs, names, flen, tlen, &t);

    memset(out, 0, sizeof(*out));
    if (status == PS_OK) {
        status = psc_move_arrive(fs, &t, names, flen, tlen, &rep, why);
    }
    if (status != PS_OK) {
        return status;
    }
    status = psc_move_finish(fs, &t, &rep.receipt, names, flen, tlen, NULL);
    if (status != PS_OK) {
        char why[PSC_MSG_MAX];
        snprintf(why, sizeof(why), "%s", pstripe_last_error());
        return psc_error(status,
                         "cannot finish renaming %.*s to %.*s (%s): %s; the old name stays until "
                         "a removal, rename or chmod of it settles the rename",
                         (int)flen, names, (int)tlen, names + flen,
                         rep.receipt.state == PS_MOVE_ARRIVED ? "the file has its new name"
                                                              : "nothing was renamed",
                         why);
    }
    if (rep.receipt.state != PS_MOVE_ARRIVED && why[0] != '\0') {
        return psc_error(rep.refused, "cannot rename %.*s to %.*s: %s", (int)flen, names, (int)tlen,
                         names + flen, why);
    }
    if (rep.receipt.state != PS_MOVE_ARRIVED) {
        return psc_move_refused(rep.refused, names, flen, tlen);
    }
    out->info = t.info;
    out->has_replaced = rep.has_replaced;
    out->replaced = rep.replaced;
    out->replaced_cap = rep.replaced_cap;
    return PS_OK;
}

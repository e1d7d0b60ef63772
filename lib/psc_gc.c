/*
 * psc_gc.c: pstripe_gc, the collection of orphaned objects: those of files
 * no path names any more. An `rm` removes the name first, then the objects
 * (psc_meta.c), so a client that dies in between, or a data server that is
 * down meanwhile, leaves them.
 *
 * 1. OBJ_LIST: every server's object ids, in pages of PS_IDS_MAX (65,536).
 * 2. META_LIVE: which of those ids a path names, asked of every server
 *    (each server owns part of the namespace) in chunks of PS_LIVE_MAX
 *    (2^20: each costs a server a scan of its whole namespace), or left
 *    that server by a rename since step 2 began.
 * 3. OBJ_STAT and OBJ_REMOVE of each object no server named (root needs
 *    no capability for that).
 *
 * Why this never removes a live file's object: an object exists only after
 * its file's CREATE committed (a write needs the capability the owner
 * gives with the file's id), and file ids are random 64-bit numbers never
 * given twice. So an object listed in step 1 belongs to a file created
 * before step 2 began, and a file that still has its name then is found by
 * its owner's scan of its namespace in one read transaction (a rename
 * within a server is one transaction, and the scan sees before or after
 * it). A rename between servers S and D is not: the file is named at S,
 * then at both, then at D, so step 2 could ask D before the file arrived
 * and S after it left. So each server numbers the names such a rename
 * took from it, in the same transaction, and answers the files that left
 * after the number it gave before step 2 began as named too
 * (psc_gc_live). A file whose name goes after its scan is being removed
 * anyway, and
 * the scan flushes the store before it answers, so no crash brings that
 * name back. Any server that does not answer steps 1 and 2, or does not
 * know its place in the cluster (a list that missed a server would take its
 * files for orphans), stops the collection before anything is removed.
 */
#include <stdlib.h>
#include <string.h>

#include "ps_log.h"
#include "ps_proto.h"
#include "ps_status.h"
#include "psc_call.h"
#include "psc_conn.h"
#include "psc_fs.h"
#include "psc_move.h"
#include "psc_op.h"
#include "psc_wait.h"

#define PSC_GC_BATCH 256u /* OBJ_STAT and OBJ_REMOVE requests in flight */
/* and the bytes of the objects whose removals are in flight at once: a
 * server frees about 2 GiB a second (pss_reaper.c), well within a client's
 * timeout */
#define PSC_GC_BYTES (4ull << 30)

typedef struct psc_ids {
    uint64_t *v;
    size_t n;
} psc_ids_t;

/* What a collection does with the orphans it finds. */
typedef struct psc_gc {
    pstripe_fs_t *fs;
    int dry_run;
    pstripe_gc_fn fn;
    void *arg;
    psc_op_t *ops; /* PSC_GC_BATCH of each */
    ps_obj_rep_t *reps;
} psc_gc_t;

static ps_status_t psc_ids_append(psc_ids_t *ids, const uint64_t *v, size_t n)
{
    uint64_t *grown;

    if (n == 0) {
        return PS_OK;
    }
    grown = realloc(ids->v, (ids->n + n) * sizeof(*grown));
    if (grown == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory for %zu object ids", ids->n + n);
    }
    ids->v = grown;
    memcpy(ids->v + ids->n, v, n * sizeof(*v));
    ids->n += n;
    return PS_OK;
}

/* One id request (OBJ_LIST or META_LIVE) to server; the reply's ids land
 * in *out (malloc'd, the caller frees), checked ascending and > after. */
static ps_status_t psc_gc_call(pstripe_fs_t *fs, uint32_t server, uint16_t type,
                               const ps_ids_req_t *req, const uint64_t *send, uint64_t **out,
                               ps_ids_rep_t *rep)
{
    psc_call_t call;
    psc_op_t op;
    ps_status_t status;
    uint64_t prev = type == PS_MSG_OBJ_LIST ? req->after : 0; /* (ids are never 0) */

    psc_call_init(&call);
    psc_op_init(&op, server, type, req, sizeof(*req));
    op.send_buf = send;
    op.send_count = send != NULL ? req->count * sizeof(*send) : 0;
    op.rep_body = rep;
    op.rep_body_len = sizeof(*rep);
    op.recv_mode = PSC_RECV_ALLOC;
    op.recv_max = (uint64_t)req->count * sizeof(uint64_t);
    psc_op_post(fs, &op, &call);
    status = psc_call_wait(fs, &call);
    *out = op.recv_alloc;
    if (status != PS_OK) {
        return status;
    }
    if (op.recv_alloc_len != (uint64_t)rep->count * sizeof(uint64_t) || rep->count > req->count ||
        (type == PS_MSG_OBJ_LIST && rep->more && rep->count == 0)) {
        goto err_proto; /* (a page of none with more would be asked for ever) */
    }
    for (uint32_t i = 0; i < rep->count; i++) {
        uint64_t id;

        memcpy(&id, (const char *)op.recv_alloc + i * sizeof(id), sizeof(id));
        if (id <= prev) {
            goto err_proto;
        }
        prev = id;
    }
    return PS_OK;

err_proto:
    return psc_error(PS_ERR_PROTO, "server %s sent a malformed %s reply", fs->servers[server].addr,
                     ps_msg_type_name(type));
}

/* Step 1: the ids of every object server holds, ascending. */
static ps_status_t psc_gc_list(pstripe_fs_t *fs, uint32_t server, psc_ids_t *ids)
{
    ps_ids_req_t req = {.after = 0, .count = PS_IDS_MAX, .reserved = 0};
    ps_ids_rep_t rep;

    do {
        uint64_t *page = NULL;
        ps_status_t status = psc_gc_call(fs, server, PS_MSG_OBJ_LIST, &req, NULL, &page, &rep);

        if (status == PS_ERR_ACCESS) {
            status = psc_error(PS_ERR_ACCESS,
                               "only root may collect orphaned objects (server %s "
                               "refused to list its objects)",
                               fs->servers[server].addr);
        }
        if (status == PS_OK) {
            status = psc_ids_append(ids, page, rep.count);
        }
        free(page);
        if (status != PS_OK) {
            return status;
        }
        if (rep.count > 0) {
            req.after = ids->v[ids->n - 1];
        }
    } while (rep.more);
    return PS_OK;
}

static int psc_id_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Step 2: mark in live[] the ids[] (n, ascending, unique) a path names,
 * or that left server s by a rename after its count before[s].departed. */
static ps_status_t psc_gc_live(pstripe_fs_t *fs, const ps_ids_rep_t *before, const uint64_t *ids,
                               size_t n, uint8_t *live)
{
    for (size_t first = 0; first < n; first += PS_LIVE_MAX) {
        ps_ids_req_t req = {.after = 0, .count = 0, .reserved = 0};

        req.count = (uint32_t)(n - first < PS_LIVE_MAX ? n - first : PS_LIVE_MAX);
        for (uint32_t s = 0; s < fs->nservers; s++) {
            uint64_t *named = NULL;
            ps_ids_rep_t rep;
            ps_status_t status;

            req.after = before[s].departed;
            status = psc_gc_call(fs, s, PS_MSG_META_LIVE, &req, ids + first, &named, &rep);
            if (status == PS_OK && rep.more) {
                status = psc_error(PS_ERR_BUSY,
                                   "server %s no longer knows every file renamed away from it "
                                   "since gc began (it keeps them an hour): try again",
                                   fs->servers[s].addr);
            }
            for (uint32_t i = 0; status == PS_OK && i < rep.count; i++) {
                const uint64_t *hit =
                    bsearch(&named[i], ids + first, req.count, sizeof(*ids), psc_id_cmp);
                if (hit == NULL) {
                    status = psc_error(PS_ERR_PROTO, "server %s named a file id not asked about",
                                       fs->servers[s].addr);
                } else {
                    live[hit - ids] = 1;
                }
            }
            free(named);
            if (status != PS_OK) {
                return status;
            }
        }
    }
    return PS_OK;
}

/* Every server's counts of renames between servers (META_LIVE of no ids). */
static ps_status_t psc_gc_counts(pstripe_fs_t *fs, ps_ids_rep_t *reps)
{
    ps_ids_req_t req = {.after = 0, .count = 0, .reserved = 0};

    for (uint32_t s = 0; s < fs->nservers; s++) {
        uint64_t *named = NULL;
        ps_status_t status = psc_gc_call(fs, s, PS_MSG_META_LIVE, &req, NULL, &named, &reps[s]);

        free(named);
        if (status != PS_OK) {
            return status;
        }
    }
    return PS_OK;
}

/* Tidy what interrupted renames between servers left, as counts shows:
 * settle their marks (those still under way are left to their clients) and
 * finish the arrivals. The file has its name either way, so a failure is
 * a warning. 1 if there was anything to tidy. */
static int psc_gc_tidy(pstripe_fs_t *fs, const ps_ids_rep_t *counts)
{
    int any = 0;

    for (uint32_t s = 0; s < fs->nservers; s++) {
        ps_status_t status = counts[s].marks > 0 ? psc_move_settle_server(fs, s) : PS_OK;

        if (status != PS_OK) {
            ps_warn("gc: server %s: %s", fs->servers[s].addr, pstripe_last_error());
        }
        any |= counts[s].marks > 0 || counts[s].arrivals > 0;
    }
    for (uint32_t s = 0; s < fs->nservers; s++) {
        if (counts[s].arrivals > 0) {
            psc_move_finish_arrivals(fs, s);
        }
    }
    return any;
}

/* Step 2, after tidying (not in a dry run): the counts first, then every
 * server's answer. */
static ps_status_t psc_gc_named(pstripe_fs_t *fs, int dry_run, const uint64_t *ids, size_t n,
                                uint8_t *live)
{
    ps_ids_rep_t *before = calloc(fs->nservers, sizeof(*before));
    ps_status_t status =
        before != NULL ? psc_gc_counts(fs, before) : psc_error(PS_ERR_NO_MEMORY, "no memory");

    if (status == PS_OK && !dry_run && psc_gc_tidy(fs, before)) {
        status = psc_gc_counts(fs, before);
    }
    if (status == PS_OK) {
        status = psc_gc_live(fs, before, ids, n, live);
    }
    free(before);
    return status;
}

/* Tell gc->fn of an orphan (its stat in r); its nonzero answer stops. */
static ps_status_t psc_gc_tell(psc_gc_t *gc, uint32_t server, uint64_t id, const ps_obj_rep_t *r)
{
    pstripe_orphan_t o = {.file_id = id, .server = server, .size = r->size, .blocks = r->blocks};

    return gc->fn != NULL ? (ps_status_t)gc->fn(&o, gc->arg) : PS_OK;
}

/* Remove the orphans ids[keep[a..b)] of server at once, telling gc->fn of
 * each one removed. */
static ps_status_t psc_gc_remove(psc_gc_t *gc, uint32_t server, const uint64_t *ids,
                                 const size_t *keep, size_t a, size_t b)
{
    psc_call_t call;
    ps_status_t status, told = PS_OK;

    psc_call_init(&call);
    for (size_t j = a; j < b; j++) {
        psc_op_init_obj(&gc->ops[j], server, PS_MSG_OBJ_REMOVE, ids[keep[j]], 0, NULL);
        psc_op_post(gc->fs, &gc->ops[j], &call);
    }
    status = psc_call_wait(gc->fs, &call);
    for (size_t j = a; j < b && told == PS_OK; j++) {
        if (gc->ops[j].status == PS_OK || gc->ops[j].status == PS_ERR_NO_ENTRY) {
            told = psc_gc_tell(gc, server, ids[keep[j]], &gc->reps[keep[j]]);
        }
    }
    return status == PS_ERR_NO_ENTRY ? told : status != PS_OK ? status : told;
}

/* Step 3 for n (up to PSC_GC_BATCH) orphans of server: stat them (one gone
 * since the listing, by its own rm, is left out), then remove them in
 * groups of at most PSC_GC_BYTES (or, with dry_run, only tell gc->fn). */
static ps_status_t psc_gc_batch(psc_gc_t *gc, uint32_t server, const uint64_t *ids, size_t n)
{
    size_t keep[PSC_GC_BATCH], nkeep = 0, first = 0;
    uint64_t bytes = 0;
    psc_call_t call;
    ps_status_t status;

    psc_call_init(&call);
    for (size_t i = 0; i < n; i++) {
        psc_op_init_obj(&gc->ops[i], server, PS_MSG_OBJ_STAT, ids[i], 0, NULL);
        gc->ops[i].rep_body = &gc->reps[i];
        gc->ops[i].rep_body_len = sizeof(gc->reps[i]);
        psc_op_post(gc->fs, &gc->ops[i], &call);
    }
    status = psc_call_wait(gc->fs, &call);
    for (size_t i = 0; i < n && status == PS_OK; i++) {
        if (gc->reps[i].exists) {
            keep[nkeep++] = i;
        }
    }
    for (size_t j = 0; j < nkeep && status == PS_OK; j++) {
        if (gc->dry_run) {
            status = psc_gc_tell(gc, server, ids[keep[j]], &gc->reps[keep[j]]);
            continue;
        }
        bytes += gc->reps[keep[j]].blocks;
        if (bytes >= PSC_GC_BYTES || j + 1 == nkeep) {
            status = psc_gc_remove(gc, server, ids, keep, first, j + 1);
            first = j + 1;
            bytes = 0;
        }
    }
    return status;
}

/* Step 3 for server: its listed ids (ascending) that no path names. */
static ps_status_t psc_gc_collect(psc_gc_t *gc, uint32_t server, const psc_ids_t *listed,
                                  const psc_ids_t *all, const uint8_t *live)
{
    uint64_t batch[PSC_GC_BATCH];
    size_t n = 0;
    ps_status_t status = PS_OK;

    for (size_t i = 0; i < listed->n && status == PS_OK; i++) {
        const uint64_t *at = bsearch(&listed->v[i], all->v, all->n, sizeof(*all->v), psc_id_cmp);

        if (!live[at - all->v]) {
            batch[n++] = listed->v[i];
        }
        if (n == PSC_GC_BATCH || (i + 1 == listed->n && n > 0)) {
            status = psc_gc_batch(gc, server, batch, n);
            n = 0;
        }
    }
    return status;
}

/* All servers' ids, merged: ascending and unique. */
static ps_status_t psc_gc_merge(const psc_ids_t *lists, uint32_t nlists, psc_ids_t *all)
{
    size_t n = 0;

    for (uint32_t s = 0; s < nlists; s++) {
        ps_status_t status = psc_ids_append(all, lists[s].v, lists[s].n);
        if (status != PS_OK) {
            return status;
        }
    }
    if (all->n == 0) {
        return PS_OK;
    }
    qsort(all->v, all->n, sizeof(*all->v), psc_id_cmp);
    for (size_t i = 0; i < all->n; i++) {
        if (n == 0 || all->v[i] != all->v[n - 1]) {
            all->v[n++] = all->v[i];
        }
    }
    all->n = n;
    return PS_OK;
}

/* Every server knows its place in the cluster and this client's list has
 * it there (psc_hello_misplaced refused any other place): else a list that
 * leaves a server out would take its files for orphans. */
static ps_status_t psc_gc_check_places(pstripe_fs_t *fs)
{
    for (uint32_t s = 0; s < fs->nservers; s++) {
        const psc_server_t *srv = &fs->servers[s];

        if (srv->place != s + 1 || srv->cluster_size != fs->nservers) {
            return psc_error(PS_ERR_INVALID,
                             "server %s does not know its place in the cluster: start every "
                             "server with server_index and cluster_size (as `pstripe local "
                             "start` does), so that a client whose list misses a server cannot "
                             "take that server's files for orphans",
                             srv->addr);
        }
    }
    return PS_OK;
}

/* Steps 1 and 2: lists[] of every server's ids, all of them merged in
 * *all, and which of those a path names in *live (malloc'd). */
static ps_status_t psc_gc_find(pstripe_fs_t *fs, int dry_run, psc_ids_t *lists, psc_ids_t *all,
                               uint8_t **live)
{
    ps_status_t status = PS_OK;

    for (uint32_t s = 0; s < fs->nservers && status == PS_OK; s++) {
        status = psc_gc_list(fs, s, &lists[s]); /* (connects to each: its HELLO) */
    }
    if (status == PS_OK) {
        status = psc_gc_check_places(fs);
    }
    if (status == PS_OK) {
        status = psc_gc_merge(lists, fs->nservers, all);
    }
    if (status == PS_OK && (*live = calloc(all->n ? all->n : 1, 1)) == NULL) {
        status = psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    if (status == PS_OK) {
        status = psc_gc_named(fs, dry_run, all->v, all->n, *live);
    }
    return status;
}

ps_status_t pstripe_gc(pstripe_fs_t *fs, int dry_run, pstripe_gc_fn fn, void *arg)
{
    psc_gc_t gc = {fs, dry_run, fn, arg, NULL, NULL};
    psc_ids_t *lists, all = {NULL, 0};
    uint8_t *live = NULL;
    ps_status_t status;

    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    lists = calloc(fs->nservers, sizeof(*lists));
    gc.ops = calloc(PSC_GC_BATCH, sizeof(*gc.ops));
    gc.reps = calloc(PSC_GC_BATCH, sizeof(*gc.reps));
    if (lists == NULL || gc.ops == NULL || gc.reps == NULL) {
        status = psc_error(PS_ERR_NO_MEMORY, "no memory");
    } else {
        status = psc_gc_find(fs, dry_run, lists, &all, &live);
    }
    for (uint32_t s = 0; s < fs->nservers && status == PS_OK; s++) {
        status = psc_gc_collect(&gc, s, &lists[s], &all, live);
    }
    for (uint32_t s = 0; lists != NULL && s < fs->nservers; s++) {
        free(lists[s].v);
    }
    free(lists);
    free(gc.ops);
    free(gc.reps);
    free(all.v);
    free(live);
    return status;
}

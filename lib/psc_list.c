/*
 * psc_list.c: pstripe_list, the merged listing of every server's paths with
 * their sizes (LIST pages from each server, OBJ_STAT rounds through
 * psc_meta.c). A server that cannot be reached is left out and named in
 * the error the listing returns at its end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps_log.h"
#include "ps_status.h"
#include "psc_call.h"
#include "psc_conn.h"
#include "psc_fs.h"
#include "psc_meta.h"
#include "psc_op.h"
#include "psc_wait.h"

#define PSC_LIST_PAGE 512u /* entries per LIST request */

typedef struct psc_list_entry {
    ps_file_info_t info;
    const char *path; /* into the page's data, not NUL-terminated */
    uint32_t path_len;
} psc_list_entry_t;

typedef struct psc_list_cursor {
    void *data; /* the page as received */
    psc_list_entry_t *entries;
    pstripe_stat_t *stats;
    uint32_t n, next;
    int more;    /* the server has more after this page */
    char *after; /* resume key: last path of the previous page */
    uint32_t after_len;
} psc_list_cursor_t;

/* Send one LIST request (prefix, resume after cur->after) to a server; the
 * page lands in cur->data, its header in *rep and its length in *data_len. */
static ps_status_t psc_list_request(pstripe_fs_t *fs, uint32_t server, const char *prefix,
                                    size_t plen, psc_list_cursor_t *cur, ps_list_rep_t *rep,
                                    uint64_t *data_len)
{
    ps_list_req_t req = {.prefix_len = (uint32_t)plen,
                         .after_len = cur->after_len,
                         .max_entries = PSC_LIST_PAGE,
                         .reserved = 0};
    psc_call_t call;
    psc_op_t op;
    char *send;
    ps_status_t status;

    send = malloc(plen + cur->after_len + 1);
    if (send == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    memcpy(send, prefix, plen);
    if (cur->after_len > 0) {
        memcpy(send + plen, cur->after, cur->after_len);
    }
    psc_call_init(&call);
    psc_op_init(&op, server, PS_MSG_LIST, &req, sizeof(req));
    op.send_buf = send;
    op.send_count = plen + cur->after_len;
    op.rep_body = rep;
    op.rep_body_len = sizeof(*rep);
    op.recv_mode = PSC_RECV_ALLOC;
    op.recv_max = (uint64_t)PSC_LIST_PAGE * (sizeof(ps_list_entry_t) + PS_PATH_MAX + 8);
    psc_op_post(fs, &op, &call);
    status = psc_call_wait(fs, &call);
    free(send);
    if (status != PS_OK) {
        return status;
    }
    cur->data = op.recv_alloc;
    *data_len = op.recv_alloc_len;
    return PS_OK;
}

/* Parse a page of n entries (data_len bytes in cur->data) into
 * cur->entries and infos[]; every entry must start with the prefix. */
static ps_status_t psc_list_parse(pstripe_fs_t *fs, uint32_t server, const char *prefix,
                                  size_t plen, psc_list_cursor_t *cur, uint32_t n,
                                  uint64_t data_len, ps_file_info_t *infos)
{
    const char *p = cur->data, *end = p + data_len;

    for (uint32_t i = 0; i < n; i++) {
        ps_list_entry_t e;
        size_t padded;

        if ((size_t)(end - p) < sizeof(e)) {
            goto err_proto;
        }
        memcpy(&e, p, sizeof(e));
        p += sizeof(e);
        padded = ((size_t)e.path_len + 7) & ~(size_t)7;
        if (e.path_len == 0 || e.path_len > PS_PATH_MAX || (size_t)(end - p) < padded ||
            (plen > 0 && (e.path_len < plen || memcmp(p, prefix, plen) != 0)) ||
            psc_check_info(fs, &e.info, server) != PS_OK) {
            goto err_proto;
        }
        cur->entries[i].info = e.info;
        cur->entries[i].path = p;
        cur->entries[i].path_len = e.path_len;
        infos[i] = e.info;
        p += padded;
    }
    if (p != end) {
        goto err_proto;
    }
    return PS_OK;

err_proto:
    return psc_error(PS_ERR_PROTO, "server %s sent a malformed LIST entry",
                     fs->servers[server].addr);
}

/* Keep the cursor's last path: the next page starts after it. */
static ps_status_t psc_list_set_after(psc_list_cursor_t *cur)
{
    psc_list_entry_t *last = &cur->entries[cur->n - 1];
    char *after = realloc(cur->after, last->path_len);

    if (after == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    memcpy(after, last->path, last->path_len);
    cur->after = after;
    cur->after_len = last->path_len;
    return PS_OK;
}

/* Replace the cursor's page with the server's next one, with the entries'
 * stats (one parallel round of OBJ_STAT per page: sizes come from the
 * objects). */
static ps_status_t psc_list_fetch(pstripe_fs_t *fs, uint32_t server, const char *prefix,
                                  size_t plen, psc_list_cursor_t *cur, uint8_t *down)
{
    ps_list_rep_t rep;
    ps_file_info_t *infos;
    uint64_t data_len = 0;
    ps_status_t status;

    free(cur->data);
    free(cur->entries);
    free(cur->stats);
    cur->data = NULL;
    cur->entries = NULL;
    cur->stats = NULL;
    cur->n = cur->next = 0;

    status = psc_list_request(fs, server, prefix, plen, cur, &rep, &data_len);
    if (status != PS_OK) {
        return status;
    }
    cur->more = rep.more != 0;
    if (rep.nentries > PSC_LIST_PAGE || rep.data_len != data_len) {
        return psc_error(PS_ERR_PROTO, "server %s sent a malformed LIST reply",
                         fs->servers[server].addr);
    }
    if (rep.nentries == 0) {
        cur->more = 0;
        return PS_OK;
    }
    cur->entries = calloc(rep.nentries, sizeof(*cur->entries));
    cur->stats = calloc(rep.nentries, sizeof(*cur->stats));
    infos = calloc(rep.nentries, sizeof(*infos));
    if (cur->entries == NULL || cur->stats == NULL || infos == NULL) {
        status = psc_error(PS_ERR_NO_MEMORY, "no memory");
        goto out_free_infos;
    }
    status = psc_list_parse(fs, server, prefix, plen, cur, rep.nentries, data_len, infos);
    if (status != PS_OK) {
        goto out_free_infos;
    }
    cur->n = rep.nentries;
    status = psc_stat_objects(fs, infos, cur->n, cur->stats, down);
    if (status == PS_OK) {
        status = psc_list_set_after(cur);
    }
    if (status != PS_OK) {
        cur->n = 0;
    }
out_free_infos:
    free(infos);
    return status;
}

static int psc_path_cmp(const psc_list_entry_t *a, const psc_list_entry_t *b)
{
    uint32_t n = a->path_len < b->path_len ? a->path_len : b->path_len;
    int c = memcmp(a->path, b->path, n);

    if (c != 0) {
        return c;
    }
    return a->path_len < b->path_len ? -1 : a->path_len > b->path_len;
}

/* After a listing: PS_ERR_CONN naming the servers in down[], or PS_OK. */
static ps_status_t psc_list_down_error(pstripe_fs_t *fs, const uint8_t *down)
{
    char names[PSC_MSG_MAX / 2];
    size_t pos = 0;

    names[0] = '\0';
    for (uint32_t s = 0; s < fs->nservers; s++) {
        if (down[s] && pos < sizeof(names)) {
            pos += (size_t)snprintf(names + pos, sizeof(names) - pos, "%s%s", pos ? ", " : "",
                                    fs->servers[s].addr);
        }
    }
    if (names[0] == '\0') {
        return PS_OK;
    }
    return psc_error(PS_ERR_CONN,
                     "could not reach server(s) %s: the listing misses the files whose metadata "
                     "is there, and sizes of files with objects there are incomplete",
                     names);
}

ps_status_t pstripe_list(pstripe_fs_t *fs, const char *prefix, pstripe_list_fn fn, void *arg)
{
    psc_list_cursor_t *cur;
    char path[PS_PATH_MAX + 1];
    uint8_t *down;
    size_t plen;
    ps_status_t status = PS_OK;

    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    if (fn == NULL) {
        return psc_error(PS_ERR_INVALID, "list callback is NULL");
    }
    if (prefix == NULL) {
        prefix = "";
    }
    plen = strlen(prefix);
    if (plen > PS_PATH_MAX) {
        return psc_error(PS_ERR_NAME_TOO_LONG, "list prefix longer than %u bytes", PS_PATH_MAX);
    }
    cur = calloc(fs->nservers, sizeof(*cur));
    down = calloc(fs->nservers, 1);
    if (cur == NULL || down == NULL) {
        free(cur);
        free(down);
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    for (uint32_t s = 0; s < fs->nservers; s++) {
        cur[s].more = 1;
    }
    /* Merge the servers' sorted streams, fetching a page when one runs dry. */
    for (;;) {
        int best = -1;

        for (uint32_t s = 0; s < fs->nservers; s++) {
            if (cur[s].next == cur[s].n && cur[s].more) {
                status = psc_list_fetch(fs, s, prefix, plen, &cur[s], down);
                if (psc_unreachable(status)) {
                    down[s] = 1; /* list the others */
                    cur[s].more = 0;
                    cur[s].n = cur[s].next = 0;
                    status = PS_OK;
                } else if (status != PS_OK) {
                    goto out;
                }
            }
            if (cur[s].next < cur[s].n &&
                (best < 0 || psc_path_cmp(&cur[s].entries[cur[s].next],
                                          &cur[best].entries[cur[best].next]) < 0)) {
                best = (int)s;
            }
        }
        if (best < 0) {
            break;
        }
        {
            psc_list_cursor_t *c = &cur[best];
            psc_list_entry_t *e = &c->entries[c->next];

            memcpy(path, e->path, e->path_len);
            path[e->path_len] = '\0';
            status = fn(path, &c->stats[c->next], arg);
            c->next++;
            if (status != 0) {
                goto out;
            }
        }
    }
out:
    for (uint32_t s = 0; s < fs->nservers; s++) {
        free(cur[s].data);
        free(cur[s].entries);
        free(cur[s].stats);
        free(cur[s].after);
    }
    free(cur);
    if (status == PS_OK) {
        status = psc_list_down_error(fs, down);
    }
    free(down);
    return status;
}

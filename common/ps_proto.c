/*
 * ps_proto.c: checking wire messages (their names and trace dumps:
 * ps_proto_dump.c).
 *
 * Everything here reads bytes that came from the network. The decoder copies
 * each fixed struct out of the buffer with memcpy (AM headers need not be
 * 8-byte aligned), checks the lengths before it looks at a field, and does
 * its arithmetic in 64 bits against limits that keep every product far from
 * overflowing. It never asserts: bad input is PS_ERR_PROTO.
 */
#include "ps_proto.h"
#include "ps_status.h"

#include <stdio.h>
#include <string.h>

void ps_msg_hdr_init(ps_msg_hdr_t *hdr, ps_msg_type_t type, uint64_t req_id, int32_t status,
                     uint32_t body_len)
{
    memset(hdr, 0, sizeof(*hdr));
    hdr->magic = PS_PROTO_MAGIC;
    hdr->version = PS_PROTO_VERSION;
    hdr->type = (uint16_t)type;
    hdr->req_id = req_id;
    hdr->status = status;
    hdr->body_len = body_len;
}

ps_status_t ps_proto_body_len(uint16_t type, int is_reply, uint32_t *len)
{
    size_t req, rep;

    switch (type) {
    case PS_MSG_HELLO:
        req = sizeof(ps_hello_req_t);
        rep = sizeof(ps_hello_rep_t);
        break;
    case PS_MSG_CREATE:
        req = sizeof(ps_create_req_t);
        rep = sizeof(ps_file_rep_t);
        break;
    case PS_MSG_LOOKUP:
    case PS_MSG_REMOVE:
        req = sizeof(ps_path_req_t);
        rep = sizeof(ps_file_rep_t);
        break;
    case PS_MSG_LIST:
        req = sizeof(ps_list_req_t);
        rep = sizeof(ps_list_rep_t);
        break;
    case PS_MSG_OBJ_WRITE:
    case PS_MSG_OBJ_READ:
        req = sizeof(ps_io_req_t);
        rep = sizeof(ps_io_rep_t);
        break;
    case PS_MSG_OBJ_STAT:
    case PS_MSG_OBJ_TRUNCATE:
    case PS_MSG_OBJ_ALLOCATE:
    case PS_MSG_OBJ_REMOVE:
    case PS_MSG_OBJ_SYNC:
    case PS_MSG_OBJ_FLUSH:
        req = sizeof(ps_obj_req_t);
        rep = sizeof(ps_obj_rep_t);
        break;
    case PS_MSG_META_SYNC:
        req = 0;
        rep = 0;
        break;
    case PS_MSG_STATFS:
        req = 0;
        rep = sizeof(ps_statfs_rep_t);
        break;
    case PS_MSG_STATS:
        req = 0;
        rep = sizeof(ps_stats_rep_t);
        break;
    case PS_MSG_SHARED_FP:
        req = sizeof(ps_sfp_req_t);
        rep = sizeof(ps_sfp_rep_t);
        break;
    case PS_MSG_AUTH:
        req = sizeof(ps_auth_req_t);
        rep = sizeof(ps_auth_rep_t);
        break;
    case PS_MSG_RENAME:
        req = sizeof(ps_rename_req_t);
        rep = sizeof(ps_rename_rep_t);
        break;
    case PS_MSG_SETATTR:
        req = sizeof(ps_setattr_req_t);
        rep = sizeof(ps_file_rep_t);
        break;
    case PS_MSG_OBJ_LIST:
    case PS_MSG_META_LIVE:
        req = sizeof(ps_ids_req_t);
        rep = sizeof(ps_ids_rep_t);
        break;
    case PS_MSG_MOVE:
        req = sizeof(ps_move_req_t);
        rep = sizeof(ps_move_rep_t);
        break;
    case PS_MSG_LOOKUP_ID:
        req = sizeof(ps_id_req_t);
        rep = sizeof(ps_file_rep_t);
        break;
    default:
        return PS_ERR_PROTO;
    }
    *len = (uint32_t)(is_reply ? rep : req);
    return PS_OK;
}

static int ps_proto_path_len_ok(uint32_t len)
{
    return len >= 1 && len <= PS_PATH_MAX;
}

static int ps_proto_io_req_ok(uint16_t type, const ps_io_req_t *req)
{
    uint32_t flags = PS_IO_RUNS | (type == PS_MSG_OBJ_WRITE ? PS_IO_LIST_INLINE | PS_IO_BEHIND : 0);

    return req->nregions >= 1 && req->nregions <= PS_MAX_REGIONS &&
           req->payload_len <= PS_MAX_PAYLOAD && (req->flags & ~flags) == 0 &&
           (!(req->flags & PS_IO_LIST_INLINE) || ps_io_list_bytes(req) <= PS_IO_INLINE_MAX);
}

/* ps_proto_data_len of a MOVE request (ps_proto.h, "MOVE"). */
static int ps_proto_move_req_ok(const void *body, uint64_t *data_len)
{
    ps_move_req_t req;
    uint32_t flags;
    int query;

    memcpy(&req, body, sizeof(req));
    query = req.op == PS_MOVE_QUERY;
    flags = req.op == PS_MOVE_LEAVE     ? PS_RENAME_NOREPLACE
            : req.op == PS_MOVE_RESOLVE ? PS_MOVE_GIVE_UP
            : query                     ? PS_MOVE_ARRIVALS
                                        : 0;
    if (req.op < PS_MOVE_LEAVE || req.op > PS_MOVE_FORGET || (req.flags & ~flags) != 0 ||
        ((req.flags & PS_MOVE_ARRIVALS) && req.src_len != 0) || req.src_len > PS_PATH_MAX ||
        (req.src_len == 0 && !query) ||
        (query ? req.dst_len != 0 && (req.src_len != 0 || (req.flags & PS_MOVE_ARRIVALS) ||
                                      req.dst_len > PS_PATH_MAX)
               : !ps_proto_path_len_ok(req.dst_len)) ||
        (req.op != PS_MOVE_LEAVE && req.file_id != 0) || req.ticket.reserved != 0 ||
        (req.ticket.flags & ~PS_RENAME_NOREPLACE) != 0 || req.receipt.reserved != 0 ||
        (req.op == PS_MOVE_DONE && req.receipt.state != PS_MOVE_ARRIVED &&
         req.receipt.state != PS_MOVE_GIVEN_UP) ||
        (req.op == PS_MOVE_FORGET && req.receipt.state != PS_MOVE_DEPARTED)) {
        return PS_ERR_PROTO;
    }
    *data_len = (uint64_t)req.src_len + req.dst_len;
    return PS_OK;
}

/* ps_proto_data_len of a request. */
static int ps_proto_req_data_len(uint16_t type, const void *body, uint64_t *data_len)
{
    switch (type) {
    case PS_MSG_CREATE: {
        ps_create_req_t req;
        memcpy(&req, body, sizeof(req));
        if (!ps_proto_path_len_ok(req.path_len) ||
            (req.access & ~(PS_CAP_READ | PS_CAP_WRITE)) != 0) {
            return PS_ERR_PROTO;
        }
        *data_len = req.path_len;
        return PS_OK;
    }
    case PS_MSG_LOOKUP:
    case PS_MSG_REMOVE: {
        ps_path_req_t req;
        memcpy(&req, body, sizeof(req));
        if (!ps_proto_path_len_ok(req.path_len) || (req.access & ~PS_CAP_ALL) != 0 ||
            (type == PS_MSG_REMOVE && req.access != 0)) {
            return PS_ERR_PROTO;
        }
        *data_len = req.path_len;
        return PS_OK;
    }
    case PS_MSG_SETATTR: {
        ps_setattr_req_t req;
        memcpy(&req, body, sizeof(req));
        if (!ps_proto_path_len_ok(req.path_len) || req.valid == 0 ||
            (req.valid & ~(PS_SETATTR_MODE | PS_SETATTR_UID | PS_SETATTR_GID)) != 0 ||
            req.mode > 0777 || req.reserved != 0) {
            return PS_ERR_PROTO;
        }
        *data_len = req.path_len;
        return PS_OK;
    }
    case PS_MSG_LIST: {
        ps_list_req_t req;
        memcpy(&req, body, sizeof(req));
        if (req.prefix_len > PS_PATH_MAX || req.after_len > PS_PATH_MAX || req.max_entries == 0 ||
            req.max_entries > PS_LIST_MAX) {
            return PS_ERR_PROTO;
        }
        *data_len = (uint64_t)req.prefix_len + req.after_len;
        return PS_OK;
    }
    case PS_MSG_HELLO: {
        ps_hello_req_t req;
        memcpy(&req, body, sizeof(req));
        return (req.flags & ~PS_HELLO_SHM) != 0 ? PS_ERR_PROTO : PS_OK;
    }
    case PS_MSG_AUTH: {
        ps_auth_req_t req;
        memcpy(&req, body, sizeof(req));
        if (req.cred_len == 0 || req.cred_len > PS_AUTH_CRED_MAX) {
            return PS_ERR_PROTO;
        }
        *data_len = req.cred_len;
        return PS_OK;
    }
    case PS_MSG_RENAME: {
        ps_rename_req_t req;
        memcpy(&req, body, sizeof(req));
        if (!ps_proto_path_len_ok(req.src_len) || !ps_proto_path_len_ok(req.dst_len) ||
            (req.flags & ~PS_RENAME_NOREPLACE) != 0) {
            return PS_ERR_PROTO;
        }
        *data_len = (uint64_t)req.src_len + req.dst_len;
        return PS_OK;
    }
    case PS_MSG_OBJ_WRITE:
    case PS_MSG_OBJ_READ: {
        ps_io_req_t req;
        memcpy(&req, body, sizeof(req));
        if (!ps_proto_io_req_ok(type, &req)) {
            return PS_ERR_PROTO;
        }
        *data_len = (req.flags & PS_IO_LIST_INLINE) ? 0 : ps_io_list_bytes(&req);
        if (type == PS_MSG_OBJ_WRITE) {
            *data_len += req.payload_len;
        }
        return PS_OK;
    }
    case PS_MSG_SHARED_FP: {
        ps_sfp_req_t req;
        memcpy(&req, body, sizeof(req));
        if (req.op < PS_SFP_FETCH_ADD || req.op > PS_SFP_RELEASE || req.value > PS_SFP_VALUE_MAX ||
            (req.op == PS_SFP_RELEASE && req.value != 0)) {
            return PS_ERR_PROTO;
        }
        return PS_OK;
    }
    case PS_MSG_OBJ_LIST:
    case PS_MSG_META_LIVE: {
        ps_ids_req_t req;
        memcpy(&req, body, sizeof(req));
        if ((req.count == 0 && type == PS_MSG_OBJ_LIST) ||
            req.count > (type == PS_MSG_META_LIVE ? PS_LIVE_MAX : PS_IDS_MAX) ||
            req.reserved != 0) {
            return PS_ERR_PROTO;
        }
        *data_len = type == PS_MSG_META_LIVE ? (uint64_t)req.count * sizeof(uint64_t) : 0;
        return PS_OK;
    }
    case PS_MSG_MOVE:
        return ps_proto_move_req_ok(body, data_len);
    case PS_MSG_LOOKUP_ID: {
        ps_id_req_t req;
        memcpy(&req, body, sizeof(req));
        if (req.file_id == 0 || (req.access & ~(PS_CAP_READ | PS_CAP_WRITE)) != 0 ||
            req.reserved != 0) {
            return PS_ERR_PROTO;
        }
        return PS_OK;
    }
    default:
        return PS_OK;
    }
}

/*
 * The AM data length a valid body implies, or PS_ERR_PROTO. The limits
 * checked first bound every operand (nregions <= 2^20, payload <= 2^30,
 * path lengths <= 4096, nentries <= 4096), so the sums and products below
 * cannot overflow 64 bits; the LIST reply's data_len, the only free 64-bit
 * length, is compared against bounds, never multiplied.
 */
static int ps_proto_data_len(uint16_t type, int is_reply, const void *body, uint64_t *data_len)
{
    *data_len = 0;

    if (!is_reply) {
        return ps_proto_req_data_len(type, body, data_len);
    }
    switch (type) {
    case PS_MSG_HELLO: {
        ps_hello_rep_t rep;
        memcpy(&rep, body, sizeof(rep));
        if (rep.nworkers == 0 || rep.nworkers > PS_MAX_WORKERS || rep.worker >= rep.nworkers ||
            (rep.flags & ~PS_HELLO_SHM) != 0 || rep.place > rep.cluster_size ||
            (rep.place == 0) != (rep.cluster_size == 0)) {
            return PS_ERR_PROTO;
        }
        *data_len = (uint64_t)rep.nworkers * sizeof(uint32_t);
        if (rep.flags & PS_HELLO_SHM) {
            *data_len += (uint64_t)rep.nworkers * sizeof(uint32_t) + sizeof(ps_shm_id_t);
        }
        return PS_OK;
    }
    case PS_MSG_LIST: {
        /* Each entry is a ps_list_entry_t and 1..PS_PATH_MAX path bytes padded
         * to 8, so the data length is a multiple of 8 between these bounds. */
        const uint64_t min_entry = sizeof(ps_list_entry_t) + 8;
        const uint64_t max_entry = sizeof(ps_list_entry_t) + ((PS_PATH_MAX + 7) & ~7ull);
        ps_list_rep_t rep;
        memcpy(&rep, body, sizeof(rep));
        if (rep.nentries > PS_LIST_MAX || rep.data_len % 8 != 0 ||
            rep.data_len < rep.nentries * min_entry || rep.data_len > rep.nentries * max_entry) {
            return PS_ERR_PROTO;
        }
        *data_len = rep.data_len;
        return PS_OK;
    }
    case PS_MSG_OBJ_READ: {
        ps_io_rep_t rep;
        memcpy(&rep, body, sizeof(rep));
        if (rep.bytes > PS_MAX_PAYLOAD) {
            return PS_ERR_PROTO;
        }
        *data_len = rep.bytes;
        return PS_OK;
    }
    case PS_MSG_SHARED_FP: {
        ps_sfp_rep_t rep;
        memcpy(&rep, body, sizeof(rep));
        return rep.value > PS_SFP_VALUE_MAX ? PS_ERR_PROTO : PS_OK;
    }
    case PS_MSG_OBJ_LIST:
    case PS_MSG_META_LIVE: {
        ps_ids_rep_t rep;
        memcpy(&rep, body, sizeof(rep));
        if (rep.count > (type == PS_MSG_META_LIVE ? PS_LIVE_MAX : PS_IDS_MAX) || rep.more > 1 ||
            (type == PS_MSG_OBJ_LIST && (rep.arrivals != 0 || rep.departed != 0))) {
            return PS_ERR_PROTO;
        }
        *data_len = (uint64_t)rep.count * sizeof(uint64_t);
        return PS_OK;
    }
    case PS_MSG_MOVE: {
        ps_move_rep_t rep;
        memcpy(&rep, body, sizeof(rep));
        if (rep.src_len > PS_PATH_MAX || rep.dst_len > PS_PATH_MAX || rep.has_replaced > 1 ||
            rep.receipt.state > PS_MOVE_DEPARTED || rep.refused > 0 || rep.refused <= PS_ERR_LAST) {
            return PS_ERR_PROTO;
        }
        *data_len = (uint64_t)rep.src_len + rep.dst_len;
        return PS_OK;
    }
    default:
        return PS_OK;
    }
}

ps_status_t ps_proto_decode(const void *buf, size_t hdr_len, int is_reply, ps_msg_view_t *view)
{
    ps_msg_hdr_t hdr;
    uint64_t data_len = 0;
    uint32_t expect;

    if (buf == NULL || hdr_len < sizeof(hdr)) {
        return PS_ERR_PROTO;
    }
    memcpy(&hdr, buf, sizeof(hdr));
    if (hdr.magic != PS_PROTO_MAGIC || hdr.version != PS_PROTO_VERSION) {
        return PS_ERR_PROTO;
    }
    if (ps_proto_body_len(hdr.type, is_reply, &expect) != PS_OK ||
        hdr.body_len != hdr_len - sizeof(hdr)) {
        return PS_ERR_PROTO;
    }
    if (!is_reply && hdr.type == PS_MSG_OBJ_WRITE && hdr.body_len >= expect) {
        ps_io_req_t io;
        memcpy(&io, (const char *)buf + sizeof(hdr), sizeof(io));
        if ((io.flags & PS_IO_LIST_INLINE) && io.nregions <= PS_MAX_REGIONS) {
            expect += (uint32_t)ps_io_list_bytes(&io); /* at most 32 MiB; checked below */
        }
    }

    if (!is_reply && hdr.status != 0) {
        return PS_ERR_PROTO;
    }
    if (is_reply && hdr.status > 0) {
        return PS_ERR_PROTO;
    }

    if (is_reply && hdr.status < 0) {
        /* An error reply: no body is required and no data follows. A sender
         * may still send the full (then meaningless) body. */
        if (hdr.body_len != 0 && hdr.body_len != expect) {
            return PS_ERR_PROTO;
        }
    } else {
        if (hdr.body_len != expect ||
            ps_proto_data_len(hdr.type, is_reply, (const char *)buf + sizeof(hdr), &data_len) !=
                PS_OK) {
            return PS_ERR_PROTO;
        }
    }

    view->hdr = (const ps_msg_hdr_t *)buf;
    view->body = (const char *)buf + sizeof(hdr);
    view->data_len = data_len;
    return PS_OK;
}

ps_status_t ps_proto_check_regions(const ps_region_t *regions, uint32_t nregions,
                                   uint64_t payload_len, uint64_t max_obj_size)
{
    uint64_t sum = 0;

    if (regions == NULL || nregions == 0 || nregions > PS_MAX_REGIONS) {
        return PS_ERR_PROTO;
    }
    for (uint32_t i = 0; i < nregions; i++) {
        ps_region_t r;
        memcpy(&r, &regions[i], sizeof(r)); /* AM data need not be aligned */
        if (r.len == 0) {
            return PS_ERR_PROTO;
        }
        if (r.off > max_obj_size || r.len > max_obj_size - r.off) {
            return PS_ERR_FILE_TOO_LARGE; /* well formed, but past any object */
        }
        if (r.len > payload_len - sum) { /* sum <= payload_len holds throughout */
            return PS_ERR_PROTO;
        }
        sum += r.len;
    }
    return sum == payload_len ? PS_OK : PS_ERR_PROTO;
}

/*
 * Each run is checked before anything is computed from it, in an order that
 * keeps every operation in range: count and len are at least 1, so count <=
 * rest and len <= rest / count bound len * count by the payload still
 * unclaimed (rest <= 2^30 after the decoder); off + len <= max_obj_size; and
 * stride * (count - 1) is compared by division against the room left.
 */
static ps_status_t ps_proto_run_check(const ps_run_t *r, uint64_t rest, uint64_t max_obj_size)
{
    if (r->count == 0 || r->len == 0 || r->stride < r->len) {
        return PS_ERR_PROTO;
    }
    if (r->count > rest || r->len > rest / r->count) {
        return PS_ERR_PROTO; /* more bytes than the payload has left */
    }
    if (r->off > max_obj_size || r->len > max_obj_size - r->off ||
        (r->count > 1 && r->stride > (max_obj_size - r->off - r->len) / (r->count - 1))) {
        return PS_ERR_FILE_TOO_LARGE; /* well formed, but past any object */
    }
    return PS_OK;
}

ps_status_t ps_proto_check_runs(const ps_run_t *runs, uint32_t nruns, uint64_t payload_len,
                                uint64_t max_obj_size, uint64_t *nregions)
{
    uint64_t sum = 0, count = 0;

    if (runs == NULL || nruns == 0 || nruns > PS_MAX_REGIONS) {
        return PS_ERR_PROTO;
    }
    for (uint32_t i = 0; i < nruns; i++) {
        ps_run_t r;
        memcpy(&r, &runs[i], sizeof(r)); /* AM data need not be aligned */
        ps_status_t status = ps_proto_run_check(&r, payload_len - sum, max_obj_size);
        if (status != PS_OK) {
            return status;
        }
        sum += r.len * r.count;
        count += r.count;
    }
    /* (the regions, not the runs, are the servers' work: a few runs of
     * 1-byte regions must not make a plan of millions) */
    if (sum != payload_len || count > PS_MAX_REGIONS) {
        return PS_ERR_PROTO;
    }
    *nregions = count;
    return PS_OK;
}

ps_status_t ps_proto_check_path(const char *path, size_t len)
{
    size_t start;

    if (path == NULL || len == 0) {
        return PS_ERR_INVALID;
    }
    if (len > PS_PATH_MAX) {
        return PS_ERR_NAME_TOO_LONG;
    }
    if (path[0] != '/' || path[len - 1] == '/') { /* the root "/" is not a file */
        return PS_ERR_INVALID;
    }
    if (memchr(path, '\0', len) != NULL) {
        return PS_ERR_INVALID;
    }

    /* Walk the components between slashes. */
    start = 1;
    for (size_t i = 1; i <= len; i++) {
        if (i == len || path[i] == '/') {
            size_t clen = i - start;
            if (clen == 0 || (clen == 1 && path[start] == '.') ||
                (clen == 2 && path[start] == '.' && path[start + 1] == '.')) {
                return PS_ERR_INVALID;
            }
            start = i + 1;
        }
    }
    return PS_OK;
}

/*
 * Normalization walks the components from the last to the first, counting
 * the ".." it still has to apply: a ".." cancels the nearest kept component
 * to its left, which is what a left-to-right stack would do, but read from
 * the right it needs no stack and no scratch buffer. The first pass measures
 * the result, the second writes it backwards into out. ".." above the root
 * stays at the root, as in POSIX.
 */
static size_t ps_path_walk(const char *path, size_t len, char *out, size_t out_len)
{
    size_t skip = 0, total = 0, pos = out_len, end = len;

    while (end > 0) {
        size_t begin = end;
        while (begin > 0 && path[begin - 1] != '/') {
            begin--;
        }
        size_t clen = end - begin;
        if (clen == 0 || (clen == 1 && path[begin] == '.')) {
            /* empty or "." */
        } else if (clen == 2 && path[begin] == '.' && path[begin + 1] == '.') {
            skip++;
        } else if (skip > 0) {
            skip--;
        } else {
            total += clen + 1;
            if (out != NULL) {
                pos -= clen;
                memcpy(out + pos, path + begin, clen);
                out[--pos] = '/';
            }
        }
        end = begin > 0 ? begin - 1 : 0; /* step over the slash */
    }
    return total;
}

ps_status_t ps_path_normalize(const char *path, char *out, size_t outlen)
{
    size_t len, total;

    if (path == NULL || out == NULL || path[0] != '/') {
        return PS_ERR_INVALID;
    }
    len = strlen(path);
    total = ps_path_walk(path, len, NULL, 0);
    if (total == 0) {
        return PS_ERR_INVALID; /* the root, which is not a file */
    }
    if (total > PS_PATH_MAX || total + 1 > outlen) {
        return PS_ERR_NAME_TOO_LONG;
    }
    ps_path_walk(path, len, out, total);
    out[total] = '\0';
    return PS_OK;
}

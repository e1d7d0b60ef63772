/*
 * ps_proto.c: checking and describing wire messages.
 *
 * Everything here reads bytes that came from the network. The decoder copies
 * each fixed struct out of the buffer with memcpy (AM headers need not be
 * 8-byte aligned), checks the lengths before it looks at a field, and does
 * its arithmetic in 64 bits against limits that keep every product far from
 * overflowing. It never asserts: bad input is PS_ERR_PROTO.
 */
#include "ps_proto.h"
#include "ps_status.h"

#include <inttypes.h>
#include <stdarg.h>
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
        (query ? req.dst_len != 0 : !ps_proto_path_len_ok(req.dst_len)) ||
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

const char *ps_auth_mode_name(uint32_t mode)
{
    switch (mode) {
    case PS_AUTH_NONE:
        return "none";
    case PS_AUTH_MUNGE:
        return "munge";
    case PS_AUTH_KEY:
        return "key";
    case PS_AUTH_TICKET:
        return "ticket";
    default:
        return "unknown";
    }
}

const char *ps_msg_type_name(uint16_t type)
{
    static const char *const names[] = {
        [PS_MSG_HELLO] = "HELLO",
        [PS_MSG_CREATE] = "CREATE",
        [PS_MSG_LOOKUP] = "LOOKUP",
        [PS_MSG_REMOVE] = "REMOVE",
        [PS_MSG_LIST] = "LIST",
        [PS_MSG_OBJ_WRITE] = "OBJ_WRITE",
        [PS_MSG_OBJ_READ] = "OBJ_READ",
        [PS_MSG_OBJ_STAT] = "OBJ_STAT",
        [PS_MSG_OBJ_TRUNCATE] = "OBJ_TRUNCATE",
        [PS_MSG_OBJ_ALLOCATE] = "OBJ_ALLOCATE",
        [PS_MSG_OBJ_REMOVE] = "OBJ_REMOVE",
        [PS_MSG_OBJ_SYNC] = "OBJ_SYNC",
        [PS_MSG_OBJ_FLUSH] = "OBJ_FLUSH",
        [PS_MSG_META_SYNC] = "META_SYNC",
        [PS_MSG_STATFS] = "STATFS",
        [PS_MSG_STATS] = "STATS",
        [PS_MSG_SHARED_FP] = "SHARED_FP",
        [PS_MSG_RENAME] = "RENAME",
        [PS_MSG_AUTH] = "AUTH",
        [PS_MSG_SETATTR] = "SETATTR",
        [PS_MSG_OBJ_LIST] = "OBJ_LIST",
        [PS_MSG_META_LIVE] = "META_LIVE",
        [PS_MSG_MOVE] = "MOVE",
    };

    if (type == 0 || type >= PS_MSG_TYPE_LAST || names[type] == NULL) {
        return "UNKNOWN";
    }
    return names[type];
}

/* Append to a dump line; keeps the line NUL-terminated when it is cut. */
static __attribute__((format(printf, 4, 5))) void ps_dump_add(char *buf, size_t len, size_t *pos,
                                                              const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*pos >= len) {
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (n > 0) {
        *pos += (size_t)n;
    }
}

#define PS_DUMP(...) ps_dump_add(buf, len, pos, __VA_ARGS__)
static void ps_dump_req(char *buf, size_t len, size_t *pos, uint16_t type, const void *body)
{
    {
        switch (type) {
        case PS_MSG_HELLO: {
            ps_hello_req_t b;
            memcpy(&b, body, sizeof(b));
            PS_DUMP(" client_version=%" PRIu32 " flags=0x%" PRIx32, b.client_version, b.flags);
            return;
        }
        case PS_MSG_CREATE: {
            ps_create_req_t b;
            memcpy(&b, body, sizeof(b));
            PS_DUMP(" stripe_size=%" PRIu64 " stripe_count=%" PRIu32 " first_server=%" PRIu32
                    " mode=0%" PRIo32 " flags=0x%" PRIx32 " path_len=%" PRIu32,
                    b.stripe_size, b.stripe_count, b.first_server, b.mode, b.flags, b.path_len);
            return;
        }
        case PS_MSG_LOOKUP:
        case PS_MSG_REMOVE: {
            ps_path_req_t b;
            memcpy(&b, body, sizeof(b));
            PS_DUMP(" path_len=%" PRIu32 " access=0x%" PRIx32, b.path_len, b.access);
            return;
        }
        case PS_MSG_SETATTR: {
            ps_setattr_req_t b;
            memcpy(&b, body, sizeof(b));
            PS_DUMP(" path_len=%" PRIu32 " valid=0x%" PRIx32 " mode=0%" PRIo32 " uid=%" PRIu32
                    " gid=%" PRIu32,
                    b.path_len, b.valid, b.mode, b.uid, b.gid);
            return;
        }
        case PS_MSG_LIST: {
            ps_list_req_t b;
            memcpy(&b, body, sizeof(b));
            PS_DUMP(" prefix_len=%" PRIu32 " after_len=%" PRIu32 " max_entries=%" PRIu32,
                    b.prefix_len, b.after_len, b.max_entries);
            return;
        }
        case PS_MSG_OBJ_WRITE:
        case PS_MSG_OBJ_READ: {
            ps_io_req_t b;
            memcpy(&b, body, sizeof(b));
            PS_DUMP(" file_id=%016" PRIx64 " nregions=%" PRIu32 "%s%s payload_len=%" PRIu64,
                    b.file_id, b.nregions, (b.flags & PS_IO_RUNS) ? " (runs)" : "",
                    (b.flags & PS_IO_LIST_INLINE) ? " (inline)" : "", b.payload_len);
            return;
        }
        case PS_MSG_OBJ_STAT:
        case PS_MSG_OBJ_TRUNCATE:
        case PS_MSG_OBJ_ALLOCATE:
        case PS_MSG_OBJ_REMOVE:
        case PS_MSG_OBJ_SYNC:
        case PS_MSG_OBJ_FLUSH: {
            ps_obj_req_t b;
            memcpy(&b, body, sizeof(b));
            PS_DUMP(" file_id=%016" PRIx64 " size=%" PRIu64, b.file_id, b.size);
            return;
        }
        case PS_MSG_SHARED_FP: {
            ps_sfp_req_t b;
            memcpy(&b, body, sizeof(b));
            PS_DUMP(" file_id=%016" PRIx64 " instance=%016" PRIx64 " view=%" PRIu32 " op=%" PRIu32
                    " value=%" PRIu64,
                    b.file_id, b.instance, b.view, b.op, b.value);
            return;
        }
        case PS_MSG_RENAME: {
            ps_rename_req_t b;
            memcpy(&b, body, sizeof(b));
            PS_DUMP(" src_len=%" PRIu32 " dst_len=%" PRIu32 " flags=0x%" PRIx32
                    " file_id=%016" PRIx64,
                    b.src_len, b.dst_len, b.flags, b.file_id);
            return;
        }
        case PS_MSG_OBJ_LIST:
        case PS_MSG_META_LIVE: {
            ps_ids_req_t b;
            memcpy(&b, body, sizeof(b));
            PS_DUMP(" after=%016" PRIx64 " count=%" PRIu32, b.after, b.count);
            return;
        }
        case PS_MSG_MOVE: {
            ps_move_req_t b;
            memcpy(&b, body, sizeof(b));
            PS_DUMP(" op=%" PRIu32 " src_len=%" PRIu32 " dst_len=%" PRIu32 " flags=0x%" PRIx32
                    " tid=%016" PRIx64,
                    b.op, b.src_len, b.dst_len, b.flags,
                    b.op == PS_MOVE_DONE ? b.receipt.tid : b.ticket.tid);
            return;
        }
        default:
            return;
        }
    }
}

static void ps_dump_body(char *buf, size_t len, size_t *pos, uint16_t type, int is_reply,
                         const void *body)
{
    if (!is_reply) {
        ps_dump_req(buf, len, pos, type, body);
        return;
    }
    switch (type) {
    case PS_MSG_HELLO: {
        ps_hello_rep_t b;
        memcpy(&b, body, sizeof(b));
        PS_DUMP(" server_id=%016" PRIx64 " nworkers=%" PRIu32 " worker=%" PRIu32
                " block_size=%" PRIu32 " flags=0x%" PRIx32,
                b.server_id, b.nworkers, b.worker, b.block_size, b.flags);
        return;
    }
    case PS_MSG_CREATE:
    case PS_MSG_LOOKUP:
    case PS_MSG_REMOVE:
    case PS_MSG_SETATTR: {
        ps_file_rep_t b;
        memcpy(&b, body, sizeof(b));
        PS_DUMP(" file_id=%016" PRIx64 " stripe_size=%" PRIu64 " stripe_count=%" PRIu32
                " first_server=%" PRIu32 " mode=0%" PRIo32 " uid=%" PRIu32 " gid=%" PRIu32
                " created=%" PRIu32 " cap_rights=0x%" PRIx32,
                b.info.file_id, b.info.stripe_size, b.info.stripe_count, b.info.first_server,
                b.info.mode, b.info.uid, b.info.gid, b.created, b.cap.rights);
        return;
    }
    case PS_MSG_LIST: {
        ps_list_rep_t b;
        memcpy(&b, body, sizeof(b));
        PS_DUMP(" nentries=%" PRIu32 " more=%" PRIu32 " data_len=%" PRIu64, b.nentries, b.more,
                b.data_len);
        return;
    }
    case PS_MSG_OBJ_WRITE:
    case PS_MSG_OBJ_READ: {
        ps_io_rep_t b;
        memcpy(&b, body, sizeof(b));
        PS_DUMP(" bytes=%" PRIu64 " obj_size=%" PRIu64 " %s=%" PRIu64, b.bytes, b.obj_size,
                type == PS_MSG_OBJ_WRITE ? "failed_writes" : "disk_bytes", b.disk_bytes);
        return;
    }
    case PS_MSG_OBJ_STAT:
    case PS_MSG_OBJ_TRUNCATE:
    case PS_MSG_OBJ_ALLOCATE:
    case PS_MSG_OBJ_REMOVE:
    case PS_MSG_OBJ_SYNC:
    case PS_MSG_OBJ_FLUSH: {
        ps_obj_rep_t b;
        memcpy(&b, body, sizeof(b));
        PS_DUMP(" exists=%" PRIu32 " size=%" PRIu64 " blocks=%" PRIu64, b.exists, b.size, b.blocks);
        return;
    }
    case PS_MSG_STATFS: {
        ps_statfs_rep_t b;
        memcpy(&b, body, sizeof(b));
        PS_DUMP(" bsize=%" PRIu64 " blocks=%" PRIu64 " bfree=%" PRIu64 " files=%" PRIu64, b.bsize,
                b.blocks, b.bfree, b.files);
        return;
    }
    case PS_MSG_STATS: {
        ps_stats_rep_t b;
        memcpy(&b, body, sizeof(b));
        PS_DUMP(" requests=%" PRIu64 " errors=%" PRIu64 " queue_depth=%" PRIu64, b.requests,
                b.errors, b.queue_depth);
        return;
    }
    case PS_MSG_SHARED_FP: {
        ps_sfp_rep_t b;
        memcpy(&b, body, sizeof(b));
        PS_DUMP(" value=%" PRIu64, b.value);
        return;
    }
    case PS_MSG_RENAME: {
        ps_rename_rep_t b;
        memcpy(&b, body, sizeof(b));
        PS_DUMP(" file_id=%016" PRIx64 " has_replaced=%" PRIu32 " replaced_id=%016" PRIx64,
                b.info.file_id, b.has_replaced, b.replaced.file_id);
        return;
    }
    case PS_MSG_OBJ_LIST:
    case PS_MSG_META_LIVE: {
        ps_ids_rep_t b;
        memcpy(&b, body, sizeof(b));
        PS_DUMP(" count=%" PRIu32 " more=%" PRIu32 " departed=%" PRIu64, b.count, b.more,
                b.departed);
        return;
    }
    case PS_MSG_MOVE: {
        ps_move_rep_t b;
        memcpy(&b, body, sizeof(b));
        PS_DUMP(" tid=%016" PRIx64 " state=%" PRIu32 " refused=%" PRId32 " has_replaced=%" PRIu32,
                b.ticket.tid | b.receipt.tid, b.receipt.state, b.refused, b.has_replaced);
        return;
    }
    default:
        return;
    }
#undef PS_DUMP
}

/*
 * A header does not say whether it is a request or a reply (the AM id does).
 * The dump guesses from the status (only replies carry errors) and the body
 * length, which differs between request and reply for every type but LIST
 * and META_SYNC; a LIST body that fits both is shown both ways.
 */
const char *ps_proto_dump(const void *buf, size_t hdr_len, char *out, size_t len)
{
    ps_msg_hdr_t hdr;
    size_t pos = 0;
    const void *body;
    uint32_t req_len, rep_len;

    if (out == NULL || len == 0) {
        return out;
    }
    out[0] = '\0';
    if (buf == NULL || hdr_len < sizeof(hdr)) {
        ps_dump_add(out, len, &pos, "short header (%zu bytes)", hdr_len);
        return out;
    }
    memcpy(&hdr, buf, sizeof(hdr));
    if (hdr.magic != PS_PROTO_MAGIC) {
        ps_dump_add(out, len, &pos, "bad magic 0x%08" PRIx32, hdr.magic);
        return out;
    }
    ps_dump_add(out, len, &pos, "%s id=%" PRIu64, ps_msg_type_name(hdr.type), hdr.req_id);
    if (hdr.version != PS_PROTO_VERSION) {
        ps_dump_add(out, len, &pos, " bad version %u", hdr.version);
        return out;
    }
    if (hdr.status != 0) {
        ps_dump_add(out, len, &pos, " status=%d (%s)", hdr.status, ps_status_string(hdr.status));
    }
    ps_dump_add(out, len, &pos, " body_len=%" PRIu32, hdr.body_len);
    if (hdr.body_len != hdr_len - sizeof(hdr)) {
        ps_dump_add(out, len, &pos, " (header has %zu bytes)", hdr_len);
        return out;
    }

    body = (const char *)buf + sizeof(hdr);
    if (hdr.body_len == 0 || ps_proto_body_len(hdr.type, 0, &req_len) != PS_OK ||
        ps_proto_body_len(hdr.type, 1, &rep_len) != PS_OK) {
        return out;
    }
    if (hdr.status == 0 && req_len == hdr.body_len && rep_len == hdr.body_len) {
        ps_dump_add(out, len, &pos, " req?");
        ps_dump_body(out, len, &pos, hdr.type, 0, body);
        ps_dump_add(out, len, &pos, " rep?");
        ps_dump_body(out, len, &pos, hdr.type, 1, body);
    } else if (hdr.status == 0 && req_len == hdr.body_len) {
        ps_dump_add(out, len, &pos, " req");
        ps_dump_body(out, len, &pos, hdr.type, 0, body);
    } else if (rep_len == hdr.body_len) {
        ps_dump_add(out, len, &pos, " rep");
        ps_dump_body(out, len, &pos, hdr.type, 1, body);
    }
    return out;
}

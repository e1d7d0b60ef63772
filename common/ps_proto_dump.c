/*
 * ps_proto_dump.c: the names of wire messages and auth modes, and the one
 * line of a message that trace logs print (ps_proto_dump). Like the
 * decoder, it checks each length before it reads a field, so it may be
 * given any bytes.
 */
#include "ps_proto.h"
#include "ps_status.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
        [PS_MSG_LOOKUP_ID] = "LOOKUP_ID",
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
        case PS_MSG_LOOKUP_ID: {
            ps_id_req_t b;
            memcpy(&b, body, sizeof(b));
            PS_DUMP(" file_id=%016" PRIx64 " access=0x%" PRIx32, b.file_id, b.access);
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
    case PS_MSG_SETATTR:
    case PS_MSG_LOOKUP_ID: {
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

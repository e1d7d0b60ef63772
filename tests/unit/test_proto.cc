/*
 * Wire protocol: pinned struct sizes and offsets, encode/decode round trips
 * for every message type, every kind of truncated or corrupt header, and a
 * fuzz loop (every truncation, random byte flips) checked against a simple
 * reference decoder written here. Messages are decoded from the very end of a
 * page followed by an inaccessible page, so a read past hdr_len crashes the
 * test instead of passing unnoticed.
 */
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ps_cap.h"
#include "ps_proto.h"
#include "ps_status.h"

namespace {

typedef std::vector<uint8_t> bytes_t;

/* Two pages, the second PROT_NONE: place() puts a message flush against it. */
class guarded_buf {
  public:
    guarded_buf()
    {
        m_page = (size_t)sysconf(_SC_PAGESIZE);
        void *p =
            mmap(NULL, 2 * m_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            abort();
        }
        m_base = (uint8_t *)p;
        mprotect(m_base + m_page, m_page, PROT_NONE);
    }
    ~guarded_buf()
    {
        munmap(m_base, 2 * m_page);
    }

    const uint8_t *place(const uint8_t *data, size_t len)
    {
        uint8_t *p = m_base + m_page - len;
        if (len > 0) {
            memcpy(p, data, len);
        }
        return p;
    }

  private:
    uint8_t *m_base;
    size_t m_page;
};

guarded_buf &guard()
{
    static guarded_buf buf;
    return buf;
}

int decode(const bytes_t &m, size_t len, int is_reply, ps_msg_view_t *view,
           const uint8_t **where = NULL)
{
    const uint8_t *p = guard().place(m.data(), len);
    if (where) {
        *where = p;
    }
    return ps_proto_decode(p, len, is_reply, view);
}

int decode(const bytes_t &m, int is_reply, ps_msg_view_t *view = NULL)
{
    ps_msg_view_t v;
    return decode(m, m.size(), is_reply, view ? view : &v);
}

bytes_t make(uint16_t type, int32_t status, const void *body, size_t body_len, uint64_t req_id = 42)
{
    ps_msg_hdr_t hdr;
    bytes_t m(sizeof(hdr) + body_len);

    ps_msg_hdr_init(&hdr, (ps_msg_type_t)type, req_id, status, (uint32_t)body_len);
    memcpy(m.data(), &hdr, sizeof(hdr));
    if (body_len) {
        memcpy(m.data() + sizeof(hdr), body, body_len);
    }
    return m;
}

template <typename T> bytes_t make(uint16_t type, const T &body, int32_t status = 0)
{
    return make(type, status, &body, sizeof(body));
}

bytes_t make_empty(uint16_t type, int32_t status = 0)
{
    return make(type, status, NULL, 0);
}

/* Header field accessors on an encoded message. */
ps_msg_hdr_t hdr_of(const bytes_t &m)
{
    ps_msg_hdr_t h;
    memcpy(&h, m.data(), sizeof(h));
    return h;
}

void set_hdr(bytes_t &m, const ps_msg_hdr_t &h)
{
    memcpy(m.data(), &h, sizeof(h));
}

/* A valid message and what decoding it must give. */
struct sample {
    std::string name;
    bytes_t msg;
    int is_reply;
    uint64_t data_len;
};

ps_create_req_t create_req(uint32_t path_len)
{
    ps_create_req_t b = {};
    b.stripe_size = 1 << 20;
    b.stripe_count = 4;
    b.first_server = 1;
    b.mode = 0644;
    b.flags = PS_CREATE_EXCL;
    b.path_len = path_len;
    return b;
}

ps_path_req_t path_req(uint32_t path_len)
{
    ps_path_req_t b = {};
    b.path_len = path_len;
    return b;
}

ps_setattr_req_t setattr_req(uint32_t path_len, uint32_t valid)
{
    ps_setattr_req_t b = {};
    b.path_len = path_len;
    b.valid = valid;
    b.mode = 0640;
    b.uid = 1000;
    b.gid = 100;
    return b;
}

ps_rename_req_t rename_req(uint32_t src_len, uint32_t dst_len, uint32_t flags = 0)
{
    ps_rename_req_t b = {};
    b.src_len = src_len;
    b.dst_len = dst_len;
    b.flags = flags;
    b.file_id = 0x1234;
    return b;
}

ps_move_req_t move_req(uint32_t op, uint32_t src_len, uint32_t dst_len, uint32_t flags = 0,
                       uint32_t state = 0)
{
    ps_move_req_t b = {};
    b.op = op;
    b.src_len = src_len;
    b.dst_len = dst_len;
    b.flags = flags;
    b.file_id = op == PS_MOVE_LEAVE ? 0x1234 : 0;
    b.ticket.tid = 0x77;
    b.ticket.expiry_ns = 1;
    b.ticket.flags = PS_RENAME_NOREPLACE;
    b.receipt.tid = 0x77;
    b.receipt.state = state;
    return b;
}

ps_move_rep_t move_rep(uint32_t src_len, uint32_t dst_len, uint32_t state, int32_t refused = 0)
{
    ps_move_rep_t b = {};
    b.ticket.tid = 0x77;
    b.receipt.state = state;
    b.refused = refused;
    b.src_len = src_len;
    b.dst_len = dst_len;
    return b;
}

ps_rename_rep_t rename_rep()
{
    ps_rename_rep_t b = {};
    b.info.file_id = 0xabcdef;
    b.replaced.file_id = 0x123;
    b.has_replaced = 1;
    return b;
}

/* Types this branch defines (numbers reserved for other messages may be
 * missing in between). */
bool type_defined(uint16_t t)
{
    uint32_t len;
    return ps_proto_body_len(t, 0, &len) == PS_OK;
}

ps_list_req_t list_req(uint32_t prefix, uint32_t after, uint32_t max)
{
    ps_list_req_t b = {};
    b.prefix_len = prefix;
    b.after_len = after;
    b.max_entries = max;
    return b;
}

ps_list_rep_t list_rep(uint32_t n, uint32_t more, uint64_t data_len)
{
    ps_list_rep_t b = {};
    b.nentries = n;
    b.more = more;
    b.data_len = data_len;
    return b;
}

ps_io_req_t io_req(uint32_t nregions, uint64_t payload)
{
    ps_io_req_t b = {};
    b.file_id = 0x0123456789abcdefull;
    b.nregions = nregions;
    b.payload_len = payload;
    return b;
}

ps_io_rep_t io_rep(uint64_t bytes)
{
    ps_io_rep_t b = {};
    b.bytes = bytes;
    b.obj_size = 1 << 30;
    return b;
}

/* Numbers below PS_MSG_TYPE_LAST may be reserved for messages of other
 * branches (15, 16): those are not defined here. */
ps_hello_rep_t hello_rep(uint32_t nworkers, uint32_t worker)
{
    ps_hello_rep_t b = {};
    b.server_id = 0xfeedull;
    b.nworkers = nworkers;
    b.worker = worker;
    b.block_size = 4096;
    return b;
}

ps_hello_rep_t flagged_hello_rep(uint32_t flags, uint16_t place, uint16_t cluster_size)
{
    ps_hello_rep_t b = hello_rep(4, 0);
    b.flags = flags;
    b.place = place;
    b.cluster_size = cluster_size;
    return b;
}

ps_obj_req_t obj_req(uint64_t size)
{
    ps_obj_req_t b = {};
    b.file_id = 77;
    b.size = size;
    return b;
}

ps_obj_rep_t obj_rep()
{
    ps_obj_rep_t b = {};
    b.size = 12345;
    b.blocks = 16384;
    b.mtime_ns = 1700000000000000000ull;
    b.exists = 1;
    return b;
}

ps_sfp_req_t sfp_req(uint32_t op, uint64_t value)
{
    ps_sfp_req_t b = {};
    b.file_id = 0xabcdef;
    b.instance = 0x0123456789abcdefull;
    b.value = value;
    b.op = op;
    return b;
}

ps_sfp_rep_t sfp_rep(uint64_t value)
{
    ps_sfp_rep_t b = {};
    b.value = value;
    return b;
}

ps_file_rep_t file_rep()
{
    ps_file_rep_t b = {};
    b.info.file_id = 0xabcdef;
    b.info.stripe_size = 1 << 20;
    b.info.stripe_count = 2;
    b.info.mode = 0600;
    b.created = 1;
    return b;
}

const uint64_t list_entry_max = sizeof(ps_list_entry_t) + PS_PATH_MAX;
const uint64_t list_entry_min = sizeof(ps_list_entry_t) + 8;

std::vector<sample> valid_samples()
{
    std::vector<sample> s;
    ps_hello_req_t hello = {PS_PROTO_VERSION, 0};
    ps_statfs_rep_t statfs = {4096, 1000, 500, 400, 3, 77};
    ps_stats_rep_t stats = {};
    stats.requests = 10;
    stats.latency_hist[PS_STATS_HIST_BUCKETS - 1] = 5;

    /* requests */
    s.push_back({"HELLO req", make(PS_MSG_HELLO, hello), 0, 0});
    ps_hello_req_t hello_shm = {PS_PROTO_VERSION, PS_HELLO_SHM};
    s.push_back({"HELLO req shm", make(PS_MSG_HELLO, hello_shm), 0, 0});
    s.push_back({"CREATE req", make(PS_MSG_CREATE, create_req(10)), 0, 10});
    s.push_back(
        {"CREATE req max path", make(PS_MSG_CREATE, create_req(PS_PATH_MAX)), 0, PS_PATH_MAX});
    s.push_back({"LOOKUP req", make(PS_MSG_LOOKUP, path_req(4)), 0, 4});
    s.push_back(
        {"LOOKUP req max path", make(PS_MSG_LOOKUP, path_req(PS_PATH_MAX)), 0, PS_PATH_MAX});
    s.push_back({"REMOVE req", make(PS_MSG_REMOVE, path_req(1)), 0, 1});
    ps_path_req_t lookup_rw = path_req(6);
    lookup_rw.access = PS_CAP_READ | PS_CAP_WRITE | PS_CAP_REMOVE;
    s.push_back({"LOOKUP req rw", make(PS_MSG_LOOKUP, lookup_rw), 0, 6});
    ps_create_req_t create_rw = create_req(3);
    create_rw.access = PS_CAP_READ | PS_CAP_WRITE;
    s.push_back({"CREATE req rw", make(PS_MSG_CREATE, create_rw), 0, 3});
    s.push_back({"SETATTR req mode", make(PS_MSG_SETATTR, setattr_req(9, PS_SETATTR_MODE)), 0, 9});
    s.push_back({"SETATTR req all",
                 make(PS_MSG_SETATTR, setattr_req(PS_PATH_MAX, PS_SETATTR_MODE | PS_SETATTR_UID |
                                                                   PS_SETATTR_GID)),
                 0, PS_PATH_MAX});
    s.push_back({"LIST req", make(PS_MSG_LIST, list_req(3, 5, 100)), 0, 8});
    s.push_back({"LIST req empty prefix", make(PS_MSG_LIST, list_req(0, 0, PS_LIST_MAX)), 0, 0});
    s.push_back({"LIST req max", make(PS_MSG_LIST, list_req(PS_PATH_MAX, PS_PATH_MAX, 1)), 0,
                 2 * PS_PATH_MAX});
    s.push_back({"OBJ_WRITE req", make(PS_MSG_OBJ_WRITE, io_req(3, 4096)), 0, 3 * 16 + 4096});
    s.push_back({"OBJ_WRITE req max",
                 make(PS_MSG_OBJ_WRITE, io_req(PS_MAX_REGIONS, PS_MAX_PAYLOAD)), 0,
                 (uint64_t)PS_MAX_REGIONS * 16 + PS_MAX_PAYLOAD});
    s.push_back({"OBJ_READ req", make(PS_MSG_OBJ_READ, io_req(2, 100)), 0, 2 * 16});
    s.push_back({"OBJ_READ req max", make(PS_MSG_OBJ_READ, io_req(PS_MAX_REGIONS, PS_MAX_PAYLOAD)),
                 0, (uint64_t)PS_MAX_REGIONS * 16});
    s.push_back({"OBJ_STAT req", make(PS_MSG_OBJ_STAT, obj_req(0)), 0, 0});
    s.push_back({"OBJ_TRUNCATE req", make(PS_MSG_OBJ_TRUNCATE, obj_req(1ull << 40)), 0, 0});
    s.push_back({"OBJ_ALLOCATE req", make(PS_MSG_OBJ_ALLOCATE, obj_req(1ull << 40)), 0, 0});
    s.push_back({"OBJ_REMOVE req", make(PS_MSG_OBJ_REMOVE, obj_req(0)), 0, 0});
    s.push_back({"OBJ_SYNC req", make(PS_MSG_OBJ_SYNC, obj_req(0)), 0, 0});
    s.push_back({"OBJ_FLUSH req", make(PS_MSG_OBJ_FLUSH, obj_req(UINT64_MAX)), 0, 0});
    s.push_back({"META_SYNC req", make_empty(PS_MSG_META_SYNC), 0, 0});
    s.push_back({"STATFS req", make_empty(PS_MSG_STATFS), 0, 0});
    s.push_back({"STATS req", make_empty(PS_MSG_STATS), 0, 0});
    s.push_back(
        {"SHARED_FP fetch-add req", make(PS_MSG_SHARED_FP, sfp_req(PS_SFP_FETCH_ADD, 8)), 0, 0});
    s.push_back({"SHARED_FP set req max",
                 make(PS_MSG_SHARED_FP, sfp_req(PS_SFP_SET, PS_SFP_VALUE_MAX)), 0, 0});
    s.push_back(
        {"SHARED_FP release req", make(PS_MSG_SHARED_FP, sfp_req(PS_SFP_RELEASE, 0)), 0, 0});
    s.push_back({"AUTH req", make(PS_MSG_AUTH, ps_auth_req_t{PS_AUTH_KEY, 32, 0, 0}), 0, 32});
    s.push_back({"AUTH req max",
                 make(PS_MSG_AUTH, ps_auth_req_t{PS_AUTH_MUNGE, PS_AUTH_CRED_MAX, 0, 0}), 0,
                 PS_AUTH_CRED_MAX});
    s.push_back({"OBJ_LIST req", make(PS_MSG_OBJ_LIST, ps_ids_req_t{77, 1, 0}), 0, 0});
    s.push_back({"OBJ_LIST req max", make(PS_MSG_OBJ_LIST, ps_ids_req_t{0, PS_IDS_MAX, 0}), 0, 0});
    s.push_back({"META_LIVE req", make(PS_MSG_META_LIVE, ps_ids_req_t{0, 3, 0}), 0, 24});
    s.push_back({"META_LIVE req max", make(PS_MSG_META_LIVE, ps_ids_req_t{0, PS_LIVE_MAX, 0}), 0,
                 8ull * PS_LIVE_MAX});
    s.push_back({"META_LIVE req no ids", make(PS_MSG_META_LIVE, ps_ids_req_t{0, 0, 0}), 0, 0});
    s.push_back({"LOOKUP_ID req", make(PS_MSG_LOOKUP_ID, ps_id_req_t{77, 3, 0}), 0, 0});
    s.push_back(
        {"LOOKUP_ID req no access", make(PS_MSG_LOOKUP_ID, ps_id_req_t{~0ull, 0, 0}), 0, 0});
    s.push_back(
        {"META_LIVE req departed after", make(PS_MSG_META_LIVE, ps_ids_req_t{9, 2, 0}), 0, 16});
    s.push_back({"MOVE LEAVE req", make(PS_MSG_MOVE, move_req(PS_MOVE_LEAVE, 5, 7)), 0, 12});
    s.push_back(
        {"MOVE LEAVE req noreplace max",
         make(PS_MSG_MOVE, move_req(PS_MOVE_LEAVE, PS_PATH_MAX, PS_PATH_MAX, PS_RENAME_NOREPLACE)),
         0, 2ull * PS_PATH_MAX});
    s.push_back({"MOVE ARRIVE req", make(PS_MSG_MOVE, move_req(PS_MOVE_ARRIVE, 5, 7)), 0, 12});
    s.push_back({"MOVE DONE req arrived",
                 make(PS_MSG_MOVE, move_req(PS_MOVE_DONE, 5, 7, 0, PS_MOVE_ARRIVED)), 0, 12});
    s.push_back({"MOVE DONE req given up",
                 make(PS_MSG_MOVE, move_req(PS_MOVE_DONE, 5, 7, 0, PS_MOVE_GIVEN_UP)), 0, 12});
    s.push_back({"MOVE QUERY req", make(PS_MSG_MOVE, move_req(PS_MOVE_QUERY, 5, 0)), 0, 5});
    s.push_back(
        {"MOVE QUERY req any name", make(PS_MSG_MOVE, move_req(PS_MOVE_QUERY, 0, 0)), 0, 0});
    s.push_back({"MOVE QUERY req marks after a name",
                 make(PS_MSG_MOVE, move_req(PS_MOVE_QUERY, 0, PS_PATH_MAX)), 0, PS_PATH_MAX});
    s.push_back({"MOVE QUERY req arrivals",
                 make(PS_MSG_MOVE, move_req(PS_MOVE_QUERY, 0, 0, PS_MOVE_ARRIVALS)), 0, 0});
    s.push_back({"MOVE RESOLVE req give up",
                 make(PS_MSG_MOVE, move_req(PS_MOVE_RESOLVE, 5, 7, PS_MOVE_GIVE_UP)), 0, 12});
    s.push_back({"MOVE FORGET req",
                 make(PS_MSG_MOVE, move_req(PS_MOVE_FORGET, 5, 7, 0, PS_MOVE_DEPARTED)), 0, 12});
    s.push_back({"RENAME req", make(PS_MSG_RENAME, rename_req(5, 7)), 0, 12});
    s.push_back({"RENAME req max", make(PS_MSG_RENAME, rename_req(PS_PATH_MAX, PS_PATH_MAX,
                                                                  PS_RENAME_NOREPLACE)),
                 0, 2 * PS_PATH_MAX});

    /* replies */
    s.push_back({"HELLO rep", make(PS_MSG_HELLO, hello_rep(4, 3)), 1, 16});
    s.push_back({"HELLO rep placed", make(PS_MSG_HELLO, flagged_hello_rep(0, 2, 2)), 1, 16});
    ps_hello_rep_t hello_rep_shm = hello_rep(4, 3);
    hello_rep_shm.flags = PS_HELLO_SHM;
    s.push_back({"HELLO rep shm", make(PS_MSG_HELLO, hello_rep_shm), 1, 4 * 8 + 32});
    s.push_back(
        {"HELLO rep max", make(PS_MSG_HELLO, hello_rep(PS_MAX_WORKERS, 0)), 1, PS_MAX_WORKERS * 4});
    s.push_back({"CREATE rep", make(PS_MSG_CREATE, file_rep()), 1, 0});
    s.push_back({"LOOKUP rep", make(PS_MSG_LOOKUP, file_rep()), 1, 0});
    s.push_back({"REMOVE rep", make(PS_MSG_REMOVE, file_rep()), 1, 0});
    s.push_back({"SETATTR rep", make(PS_MSG_SETATTR, file_rep()), 1, 0});
    s.push_back({"LOOKUP_ID rep", make(PS_MSG_LOOKUP_ID, file_rep()), 1, 0});
    s.push_back(
        {"LIST rep", make(PS_MSG_LIST, list_rep(2, 1, 2 * list_entry_min)), 1, 2 * list_entry_min});
    s.push_back({"LIST rep empty", make(PS_MSG_LIST, list_rep(0, 0, 0)), 1, 0});
    s.push_back({"LIST rep max",
                 make(PS_MSG_LIST, list_rep(PS_LIST_MAX, 1, PS_LIST_MAX * list_entry_max)), 1,
                 PS_LIST_MAX * list_entry_max});
    s.push_back({"OBJ_WRITE rep", make(PS_MSG_OBJ_WRITE, io_rep(4096)), 1, 0});
    s.push_back({"OBJ_READ rep", make(PS_MSG_OBJ_READ, io_rep(4096)), 1, 4096});
    s.push_back(
        {"OBJ_READ rep max", make(PS_MSG_OBJ_READ, io_rep(PS_MAX_PAYLOAD)), 1, PS_MAX_PAYLOAD});
    s.push_back({"OBJ_STAT rep", make(PS_MSG_OBJ_STAT, obj_rep()), 1, 0});
    s.push_back({"OBJ_TRUNCATE rep", make(PS_MSG_OBJ_TRUNCATE, obj_rep()), 1, 0});
    s.push_back({"OBJ_ALLOCATE rep", make(PS_MSG_OBJ_ALLOCATE, obj_rep()), 1, 0});
    s.push_back({"OBJ_REMOVE rep", make(PS_MSG_OBJ_REMOVE, obj_rep()), 1, 0});
    s.push_back({"OBJ_SYNC rep", make(PS_MSG_OBJ_SYNC, obj_rep()), 1, 0});
    s.push_back({"OBJ_FLUSH rep", make(PS_MSG_OBJ_FLUSH, obj_rep()), 1, 0});
    s.push_back({"META_SYNC rep", make_empty(PS_MSG_META_SYNC), 1, 0});
    s.push_back({"OBJ_LIST rep", make(PS_MSG_OBJ_LIST, ps_ids_rep_t{2, 1}), 1, 16});
    s.push_back({"OBJ_LIST rep max", make(PS_MSG_OBJ_LIST, ps_ids_rep_t{PS_IDS_MAX, 0}), 1,
                 8ull * PS_IDS_MAX});
    s.push_back({"META_LIVE rep", make(PS_MSG_META_LIVE, ps_ids_rep_t{1, 0}), 1, 8});
    s.push_back({"META_LIVE rep max", make(PS_MSG_META_LIVE, ps_ids_rep_t{PS_LIVE_MAX, 0}), 1,
                 8ull * PS_LIVE_MAX});
    s.push_back({"META_LIVE rep empty", make(PS_MSG_META_LIVE, ps_ids_rep_t{0, 0}), 1, 0});
    s.push_back(
        {"META_LIVE rep moves", make(PS_MSG_META_LIVE, ps_ids_rep_t{0, 0, 2, 3, 5, 0}), 1, 0});
    s.push_back({"META_LIVE rep departures forgotten",
                 make(PS_MSG_META_LIVE, ps_ids_rep_t{1, 1, 0, 0, 5, 0}), 1, 8});
    s.push_back({"STATFS rep", make(PS_MSG_STATFS, statfs), 1, 0});
    s.push_back({"STATS rep", make(PS_MSG_STATS, stats), 1, 0});
    s.push_back({"SHARED_FP rep", make(PS_MSG_SHARED_FP, sfp_rep(4096)), 1, 0});
    s.push_back({"SHARED_FP rep max", make(PS_MSG_SHARED_FP, sfp_rep(PS_SFP_VALUE_MAX)), 1, 0});
    s.push_back({"AUTH rep", make(PS_MSG_AUTH, ps_auth_rep_t{}), 1, 0});
    s.push_back({"RENAME rep", make(PS_MSG_RENAME, rename_rep()), 1, 0});
    s.push_back({"MOVE rep", make(PS_MSG_MOVE, move_rep(0, 0, PS_MOVE_ARRIVED)), 1, 0});
    s.push_back({"MOVE rep refused",
                 make(PS_MSG_MOVE, move_rep(0, 0, PS_MOVE_GIVEN_UP, PS_ERR_EXISTS)), 1, 0});
    s.push_back({"MOVE QUERY rep", make(PS_MSG_MOVE, move_rep(5, 7, 0)), 1, 12});

    /* error replies carry no data, with or without their (meaningless) body */
    for (uint16_t t = 1; t < PS_MSG_TYPE_LAST; t++) {
        if (!type_defined(t)) {
            continue;
        }
        s.push_back({std::string(ps_msg_type_name(t)) + " error rep",
                     make_empty(t, PS_ERR_NO_ENTRY), 1, 0});
    }
    s.push_back(
        {"OBJ_READ error rep with body", make(PS_MSG_OBJ_READ, io_rep(4096), PS_ERR_IO), 1, 0});
    s.push_back({"HELLO error rep with bad body",
                 make(PS_MSG_HELLO, hello_rep(0, 9), PS_ERR_SHUTDOWN), 1, 0});
    s.push_back(
        {"LIST error rep, unknown status", make(PS_MSG_LIST, list_rep(1, 0, 7), -1000), 1, 0});
    return s;
}

/*
 * Reference decoder: the rules of ps_proto.h written out once more, as
 * plainly as possible. Returns false for PS_ERR_PROTO.
 */
template <typename T> T body_at(const bytes_t &m)
{
    T b;
    memcpy(&b, m.data() + sizeof(ps_msg_hdr_t), sizeof(b));
    return b;
}

bool reference_decode(const bytes_t &m, int is_reply, uint64_t *data_len)
{
    if (m.size() < sizeof(ps_msg_hdr_t)) {
        return false;
    }
    ps_msg_hdr_t h = hdr_of(m);
    if (h.magic != PS_PROTO_MAGIC || h.version != PS_PROTO_VERSION || h.type == 0 ||
        h.type >= PS_MSG_TYPE_LAST || h.body_len != m.size() - sizeof(h)) {
        return false;
    }
    if (is_reply ? h.status > 0 : h.status != 0) {
        return false;
    }
    uint32_t want = 0;
    if (ps_proto_body_len(h.type, is_reply, &want) != PS_OK) {
        return false;
    }
    *data_len = 0;
    if (is_reply && h.status < 0) {
        return h.body_len == 0 || h.body_len == want;
    }
    /* an OBJ_WRITE with PS_IO_LIST_INLINE: its list follows the body */
    uint64_t inline_len = 0;
    if (!is_reply && h.type == PS_MSG_OBJ_WRITE && h.body_len >= want) {
        ps_io_req_t b = body_at<ps_io_req_t>(m);
        if (b.flags & PS_IO_LIST_INLINE) {
            inline_len = (uint64_t)b.nregions * ((b.flags & PS_IO_RUNS) ? 32 : 16);
        }
    }
    if (h.body_len != want + inline_len) {
        return false;
    }

    if (!is_reply) {
        switch (h.type) {
        case PS_MSG_HELLO:
            return (body_at<ps_hello_req_t>(m).flags & ~1u) == 0; /* PS_HELLO_SHM */
        case PS_MSG_CREATE: {
            ps_create_req_t b = body_at<ps_create_req_t>(m);
            *data_len = b.path_len;
            return b.path_len >= 1 && b.path_len <= PS_PATH_MAX && b.access <= 3;
        }
        case PS_MSG_LOOKUP:
        case PS_MSG_REMOVE: {
            ps_path_req_t b = body_at<ps_path_req_t>(m);
            *data_len = b.path_len;
            return b.path_len >= 1 && b.path_len <= PS_PATH_MAX &&
                   (h.type == PS_MSG_LOOKUP ? b.access <= 7 : b.access == 0);
        }
        case PS_MSG_SETATTR: {
            ps_setattr_req_t b = body_at<ps_setattr_req_t>(m);
            *data_len = b.path_len;
            return b.path_len >= 1 && b.path_len <= PS_PATH_MAX && b.valid >= 1 && b.valid <= 7 &&
                   b.mode <= 0777 && b.reserved == 0;
        }
        case PS_MSG_LIST: {
            ps_list_req_t b = body_at<ps_list_req_t>(m);
            *data_len = (uint64_t)b.prefix_len + b.after_len;
            return b.prefix_len <= PS_PATH_MAX && b.after_len <= PS_PATH_MAX &&
                   b.max_entries >= 1 && b.max_entries <= PS_LIST_MAX;
        }
        case PS_MSG_AUTH: {
            uint64_t n = body_at<ps_auth_req_t>(m).cred_len;
            *data_len = n;
            return n >= 1 && n <= PS_AUTH_CRED_MAX;
        }
        case PS_MSG_RENAME: {
            ps_rename_req_t b = body_at<ps_rename_req_t>(m);
            *data_len = (uint64_t)b.src_len + b.dst_len;
            return b.src_len >= 1 && b.src_len <= PS_PATH_MAX && b.dst_len >= 1 &&
                   b.dst_len <= PS_PATH_MAX && (b.flags == 0 || b.flags == PS_RENAME_NOREPLACE);
        }
        case PS_MSG_LOOKUP_ID: {
            ps_id_req_t b = body_at<ps_id_req_t>(m);
            return b.file_id != 0 && (b.access & ~3u) == 0 && b.reserved == 0;
        }
        case PS_MSG_OBJ_WRITE:
        case PS_MSG_OBJ_READ: {
            ps_io_req_t b = body_at<ps_io_req_t>(m);
            uint32_t known = h.type == PS_MSG_OBJ_WRITE ? 7 : 1; /* RUNS, LIST_INLINE, BEHIND */
            if (b.nregions < 1 || b.nregions > PS_MAX_REGIONS || b.payload_len > PS_MAX_PAYLOAD ||
                (b.flags & ~known) != 0 || inline_len > PS_IO_INLINE_MAX) {
                return false;
            }
            *data_len =
                (inline_len ? 0 : (uint64_t)b.nregions * ((b.flags & PS_IO_RUNS) ? 32 : 16)) +
                (h.type == PS_MSG_OBJ_WRITE ? b.payload_len : 0);
            return true;
        }
        case PS_MSG_SHARED_FP: {
            ps_sfp_req_t b = body_at<ps_sfp_req_t>(m);
            bool op_ok = b.op == PS_SFP_FETCH_ADD || b.op == PS_SFP_SET ||
                         (b.op == PS_SFP_RELEASE && b.value == 0);
            return op_ok && b.value <= (uint64_t)INT64_MAX;
        }
        case PS_MSG_OBJ_LIST:
        case PS_MSG_META_LIVE: {
            ps_ids_req_t b = body_at<ps_ids_req_t>(m);
            bool live = h.type == PS_MSG_META_LIVE;
            *data_len = live ? 8ull * b.count : 0;
            return (b.count >= 1 || live) && b.count <= (live ? PS_LIVE_MAX : PS_IDS_MAX) &&
                   b.reserved == 0;
        }
        case PS_MSG_MOVE: {
            ps_move_req_t b = body_at<ps_move_req_t>(m);
            bool query = b.op == PS_MOVE_QUERY;
            uint32_t flags = b.op == PS_MOVE_LEAVE     ? 1u /* PS_RENAME_NOREPLACE */
                             : b.op == PS_MOVE_RESOLVE ? 2u /* PS_MOVE_GIVE_UP */
                             : query                   ? 4u /* PS_MOVE_ARRIVALS */
                                                       : 0u;
            uint32_t state = b.receipt.state;
            *data_len = (uint64_t)b.src_len + b.dst_len;
            return b.op >= 1 && b.op <= 6 && (b.flags & ~flags) == 0 && b.src_len <= PS_PATH_MAX &&
                   (b.src_len >= 1 || query) && (!(b.flags & 4u) || b.src_len == 0) &&
                   (query ? b.dst_len == 0 ||
                                (b.src_len == 0 && !(b.flags & 4u) && b.dst_len <= PS_PATH_MAX)
                          : b.dst_len >= 1 && b.dst_len <= PS_PATH_MAX) &&
                   (b.op == PS_MOVE_LEAVE || b.file_id == 0) && b.ticket.reserved == 0 &&
                   b.ticket.flags <= 1 && b.receipt.reserved == 0 &&
                   (b.op != PS_MOVE_DONE || state == 1 || state == 2) &&
                   (b.op != PS_MOVE_FORGET || state == 3);
        }
        default:
            return true;
        }
    }
    switch (h.type) {
    case PS_MSG_HELLO: {
        ps_hello_rep_t b = body_at<ps_hello_rep_t>(m);
        /* with PS_HELLO_SHM (1): the shm ports and a 32-byte ps_shm_id_t too */
        *data_len = (uint64_t)b.nworkers * ((b.flags & 1) ? 8 : 4) + ((b.flags & 1) ? 32 : 0);
        return b.nworkers >= 1 && b.nworkers <= PS_MAX_WORKERS && b.worker < b.nworkers &&
               (b.flags & ~1u) == 0 && b.place <= b.cluster_size &&
               (b.place == 0) == (b.cluster_size == 0);
    }
    case PS_MSG_LIST: {
        ps_list_rep_t b = body_at<ps_list_rep_t>(m);
        *data_len = b.data_len;
        return b.nentries <= PS_LIST_MAX && b.data_len % 8 == 0 &&
               b.data_len >= b.nentries * list_entry_min &&
               b.data_len <= b.nentries * list_entry_max;
    }
    case PS_MSG_OBJ_READ: {
        ps_io_rep_t b = body_at<ps_io_rep_t>(m);
        *data_len = b.bytes;
        return b.bytes <= PS_MAX_PAYLOAD;
    }
    case PS_MSG_SHARED_FP:
        return body_at<ps_sfp_rep_t>(m).value <= (uint64_t)INT64_MAX;
    case PS_MSG_OBJ_LIST:
    case PS_MSG_META_LIVE: {
        ps_ids_rep_t b = body_at<ps_ids_rep_t>(m);
        *data_len = 8ull * b.count;
        bool live = h.type == PS_MSG_META_LIVE;
        return b.count <= (live ? PS_LIVE_MAX : PS_IDS_MAX) && b.more <= 1 &&
               (live || (b.arrivals == 0 && b.departed == 0));
    }
    case PS_MSG_MOVE: {
        ps_move_rep_t b = body_at<ps_move_rep_t>(m);
        *data_len = (uint64_t)b.src_len + b.dst_len;
        return b.src_len <= PS_PATH_MAX && b.dst_len <= PS_PATH_MAX && b.has_replaced <= 1 &&
               b.receipt.state <= 3 && b.refused <= 0 && b.refused > PS_ERR_LAST;
    }
    default:
        return true;
    }
}

} // namespace

/* Pinned wire sizes and offsets (like UCX's test_obj_size.cc): a change here
 * is a protocol change and needs PS_PROTO_VERSION bumped. */
TEST(proto, wire_sizes)
{
    EXPECT_EQ(24u, sizeof(ps_msg_hdr_t));
    EXPECT_EQ(16u, sizeof(ps_region_t));
    EXPECT_EQ(32u, sizeof(ps_run_t));
    EXPECT_EQ(56u, sizeof(ps_file_info_t));
    EXPECT_EQ(56u, sizeof(ps_cap_t));
    EXPECT_EQ(24u, sizeof(ps_setattr_req_t));
    EXPECT_EQ(8u, sizeof(ps_hello_req_t));
    EXPECT_EQ(56u, sizeof(ps_hello_rep_t));
    EXPECT_EQ(32u, sizeof(ps_shm_id_t));
    EXPECT_EQ(16u, sizeof(ps_auth_req_t));
    EXPECT_EQ(56u, sizeof(ps_auth_ticket_t));
    EXPECT_EQ(64u, sizeof(ps_auth_rep_t));
    EXPECT_EQ(32u, sizeof(ps_create_req_t));
    EXPECT_EQ(120u, sizeof(ps_file_rep_t));
    EXPECT_EQ(8u, sizeof(ps_path_req_t));
    EXPECT_EQ(16u, sizeof(ps_list_req_t));
    EXPECT_EQ(16u, sizeof(ps_list_rep_t));
    EXPECT_EQ(64u, sizeof(ps_list_entry_t));
    EXPECT_EQ(80u, sizeof(ps_io_req_t));
    EXPECT_EQ(24u, sizeof(ps_io_rep_t));
    EXPECT_EQ(72u, sizeof(ps_obj_req_t));
    EXPECT_EQ(32u, sizeof(ps_obj_rep_t));
    EXPECT_EQ(48u, sizeof(ps_statfs_rep_t));
    EXPECT_EQ(480u, sizeof(ps_stats_rep_t));
    EXPECT_EQ(88u, sizeof(ps_sfp_req_t));
    EXPECT_EQ(8u, sizeof(ps_sfp_rep_t));
    EXPECT_EQ(24u, sizeof(ps_rename_req_t));
    EXPECT_EQ(176u, sizeof(ps_rename_rep_t));
    EXPECT_EQ(16u, sizeof(ps_ids_req_t));
    EXPECT_EQ(32u, sizeof(ps_ids_rep_t));
    EXPECT_EQ(112u, sizeof(ps_move_ticket_t));
    EXPECT_EQ(48u, sizeof(ps_move_receipt_t));
    EXPECT_EQ(184u, sizeof(ps_move_req_t));
    EXPECT_EQ(288u, sizeof(ps_move_rep_t));
    EXPECT_EQ(16u, sizeof(ps_extent_t));
    EXPECT_EQ(24u, sizeof(ps_io_span_t));
}

TEST(proto, wire_offsets)
{
    EXPECT_EQ(0u, offsetof(ps_msg_hdr_t, magic));
    EXPECT_EQ(4u, offsetof(ps_msg_hdr_t, version));
    EXPECT_EQ(6u, offsetof(ps_msg_hdr_t, type));
    EXPECT_EQ(8u, offsetof(ps_msg_hdr_t, req_id));
    EXPECT_EQ(16u, offsetof(ps_msg_hdr_t, status));
    EXPECT_EQ(20u, offsetof(ps_msg_hdr_t, body_len));
    EXPECT_EQ(8u, offsetof(ps_region_t, len));
    EXPECT_EQ(8u, offsetof(ps_run_t, len));
    EXPECT_EQ(16u, offsetof(ps_run_t, stride));
    EXPECT_EQ(24u, offsetof(ps_run_t, count));
    EXPECT_EQ(20u, offsetof(ps_io_req_t, flags));
    EXPECT_EQ(16u, offsetof(ps_file_info_t, stripe_count));
    EXPECT_EQ(24u, offsetof(ps_file_info_t, mode));
    EXPECT_EQ(32u, offsetof(ps_file_info_t, ctime_ns));
    EXPECT_EQ(8u, offsetof(ps_hello_rep_t, nworkers));
    EXPECT_EQ(16u, offsetof(ps_hello_rep_t, block_size));
    EXPECT_EQ(20u, offsetof(ps_hello_rep_t, auth_mode));
    EXPECT_EQ(24u, offsetof(ps_hello_rep_t, nonce));
    EXPECT_EQ(40u, offsetof(ps_hello_rep_t, instance));
    EXPECT_EQ(48u, offsetof(ps_hello_rep_t, flags));
    EXPECT_EQ(52u, offsetof(ps_hello_rep_t, place));
    EXPECT_EQ(54u, offsetof(ps_hello_rep_t, cluster_size));
    EXPECT_EQ(4u, offsetof(ps_hello_req_t, flags));
    EXPECT_EQ(16u, offsetof(ps_shm_id_t, netns));
    EXPECT_EQ(24u, offsetof(ps_shm_id_t, uid));
    EXPECT_EQ(4u, offsetof(ps_auth_req_t, cred_len));
    EXPECT_EQ(16u, offsetof(ps_auth_ticket_t, uid));
    EXPECT_EQ(24u, offsetof(ps_auth_ticket_t, mac));
    EXPECT_EQ(8u, offsetof(ps_auth_rep_t, ticket));
    EXPECT_EQ(360u, offsetof(ps_stats_rep_t, auth_mode));
    EXPECT_EQ(24u, offsetof(ps_create_req_t, path_len));
    EXPECT_EQ(56u, offsetof(ps_file_rep_t, created));
    EXPECT_EQ(60u, offsetof(ps_file_rep_t, cap_life_s));
    EXPECT_EQ(64u, offsetof(ps_file_rep_t, cap));
    EXPECT_EQ(48u, offsetof(ps_file_info_t, uid));
    EXPECT_EQ(52u, offsetof(ps_file_info_t, gid));
    EXPECT_EQ(8u, offsetof(ps_cap_t, expiry_ns));
    EXPECT_EQ(16u, offsetof(ps_cap_t, uid));
    EXPECT_EQ(20u, offsetof(ps_cap_t, rights));
    EXPECT_EQ(24u, offsetof(ps_cap_t, mac));
    EXPECT_EQ(28u, offsetof(ps_create_req_t, access));
    EXPECT_EQ(4u, offsetof(ps_path_req_t, access));
    EXPECT_EQ(8u, offsetof(ps_id_req_t, access));
    EXPECT_EQ(12u, offsetof(ps_id_req_t, reserved));
    EXPECT_EQ(24u, offsetof(ps_io_req_t, cap));
    EXPECT_EQ(16u, offsetof(ps_obj_req_t, cap));
    EXPECT_EQ(32u, offsetof(ps_sfp_req_t, cap));
    EXPECT_EQ(120u, offsetof(ps_rename_rep_t, replaced_cap));
    EXPECT_EQ(18, PS_MSG_SETATTR);
    EXPECT_EQ(19, PS_MSG_OBJ_ALLOCATE);
    EXPECT_EQ(21, PS_MSG_OBJ_LIST);
    EXPECT_EQ(22, PS_MSG_META_LIVE);
    EXPECT_EQ(8u, offsetof(ps_ids_req_t, count));
    EXPECT_EQ(16u, offsetof(ps_ids_rep_t, departed));
    EXPECT_EQ(24u, offsetof(ps_ids_rep_t, reserved));
    EXPECT_EQ(23, PS_MSG_MOVE);
    EXPECT_EQ(16u, offsetof(ps_move_req_t, file_id));
    EXPECT_EQ(24u, offsetof(ps_move_req_t, ticket));
    EXPECT_EQ(136u, offsetof(ps_move_req_t, receipt));
    EXPECT_EQ(16u, offsetof(ps_move_ticket_t, info));
    EXPECT_EQ(80u, offsetof(ps_move_ticket_t, mac));
    EXPECT_EQ(16u, offsetof(ps_move_receipt_t, mac));
    EXPECT_EQ(112u, offsetof(ps_move_rep_t, receipt));
    EXPECT_EQ(160u, offsetof(ps_move_rep_t, refused));
    EXPECT_EQ(168u, offsetof(ps_move_rep_t, replaced));
    EXPECT_EQ(224u, offsetof(ps_move_rep_t, replaced_cap));
    EXPECT_EQ(280u, offsetof(ps_move_rep_t, src_len));
    EXPECT_EQ(8u, offsetof(ps_list_req_t, max_entries));
    EXPECT_EQ(8u, offsetof(ps_list_rep_t, data_len));
    EXPECT_EQ(56u, offsetof(ps_list_entry_t, path_len));
    EXPECT_EQ(8u, offsetof(ps_io_req_t, payload_len));
    EXPECT_EQ(16u, offsetof(ps_io_req_t, nregions));
    EXPECT_EQ(24u, offsetof(ps_obj_rep_t, exists));
    EXPECT_EQ(8u * 19, offsetof(ps_stats_rep_t, latency_hist));
    EXPECT_EQ(8u * 43, offsetof(ps_stats_rep_t, merged_writers));
    EXPECT_EQ(8u * 44, offsetof(ps_stats_rep_t, merge_waits));
    EXPECT_EQ(8u * 48, offsetof(ps_stats_rep_t, staged_bytes));
    EXPECT_EQ(8u * 54, offsetof(ps_stats_rep_t, stage_blocks));
    EXPECT_EQ(8u * 55, offsetof(ps_stats_rep_t, read_ahead_bytes));
    EXPECT_EQ(8u * 56, offsetof(ps_stats_rep_t, eager_replies));
    EXPECT_EQ(8u * 57, offsetof(ps_stats_rep_t, rndv_requests));
    EXPECT_EQ(8u * 58, offsetof(ps_stats_rep_t, flushes_behind));
    EXPECT_EQ(8u * 59, offsetof(ps_stats_rep_t, cap_refused));
    EXPECT_EQ(8u, offsetof(ps_sfp_req_t, instance));
    EXPECT_EQ(16u, offsetof(ps_sfp_req_t, value));
    EXPECT_EQ(24u, offsetof(ps_sfp_req_t, op));
    EXPECT_EQ(28u, offsetof(ps_sfp_req_t, view));
    EXPECT_EQ(15, PS_MSG_SHARED_FP);
    EXPECT_EQ(8u, offsetof(ps_rename_req_t, flags));
    EXPECT_EQ(16u, offsetof(ps_rename_req_t, file_id));
    EXPECT_EQ(56u, offsetof(ps_rename_rep_t, replaced));
    EXPECT_EQ(112u, offsetof(ps_rename_rep_t, has_replaced));
    /* "PST1" in memory order */
    uint32_t magic = PS_PROTO_MAGIC;
    EXPECT_EQ(0, memcmp(&magic, "PST1", 4));
}

TEST(proto, hdr_init)
{
    ps_msg_hdr_t h;
    memset(&h, 0xff, sizeof(h));
    ps_msg_hdr_init(&h, PS_MSG_OBJ_READ, 0x1122334455667788ull, PS_ERR_IO, 24);
    EXPECT_EQ(PS_PROTO_MAGIC, h.magic);
    EXPECT_EQ(PS_PROTO_VERSION, h.version);
    EXPECT_EQ(PS_MSG_OBJ_READ, h.type);
    EXPECT_EQ(0x1122334455667788ull, h.req_id);
    EXPECT_EQ(PS_ERR_IO, h.status);
    EXPECT_EQ(24u, h.body_len);
}

TEST(proto, body_len)
{
    struct {
        uint16_t type;
        uint32_t req, rep;
    } expect[] = {
        {PS_MSG_HELLO, 8, 56},         {PS_MSG_CREATE, 32, 120},   {PS_MSG_LOOKUP, 8, 120},
        {PS_MSG_REMOVE, 8, 120},       {PS_MSG_LIST, 16, 16},      {PS_MSG_OBJ_WRITE, 80, 24},
        {PS_MSG_OBJ_READ, 80, 24},     {PS_MSG_OBJ_STAT, 72, 32},  {PS_MSG_OBJ_TRUNCATE, 72, 32},
        {PS_MSG_OBJ_REMOVE, 72, 32},   {PS_MSG_OBJ_SYNC, 72, 32},  {PS_MSG_META_SYNC, 0, 0},
        {PS_MSG_STATFS, 0, 48},        {PS_MSG_STATS, 0, 480},     {PS_MSG_SHARED_FP, 88, 8},
        {PS_MSG_RENAME, 24, 176},      {PS_MSG_AUTH, 16, 64},      {PS_MSG_SETATTR, 24, 120},
        {PS_MSG_OBJ_ALLOCATE, 72, 32}, {PS_MSG_OBJ_FLUSH, 72, 32}, {PS_MSG_OBJ_LIST, 16, 32},
        {PS_MSG_META_LIVE, 16, 32},    {PS_MSG_MOVE, 184, 288},    {PS_MSG_LOOKUP_ID, 16, 120},
    };
    for (auto &e : expect) {
        uint32_t req = 1, rep = 1;
        EXPECT_EQ(PS_OK, ps_proto_body_len(e.type, 0, &req)) << ps_msg_type_name(e.type);
        EXPECT_EQ(PS_OK, ps_proto_body_len(e.type, 1, &rep)) << ps_msg_type_name(e.type);
        EXPECT_EQ(e.req, req) << ps_msg_type_name(e.type);
        EXPECT_EQ(e.rep, rep) << ps_msg_type_name(e.type);
    }
    EXPECT_EQ(24u, sizeof(expect) / sizeof(expect[0])); /* every type */
    uint32_t len = 7;
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_body_len(0, 0, &len));
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_body_len(PS_MSG_TYPE_LAST, 1, &len));
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_body_len(0xffff, 0, &len));
    EXPECT_EQ(7u, len); /* not set on failure */
}

TEST(proto, auth_mode_names)
{
    EXPECT_STREQ("none", ps_auth_mode_name(PS_AUTH_NONE));
    EXPECT_STREQ("munge", ps_auth_mode_name(PS_AUTH_MUNGE));
    EXPECT_STREQ("key", ps_auth_mode_name(PS_AUTH_KEY));
    EXPECT_STREQ("ticket", ps_auth_mode_name(PS_AUTH_TICKET));
    EXPECT_STREQ("unknown", ps_auth_mode_name(PS_AUTH_TICKET + 1));
}

TEST(proto, type_names)
{
    EXPECT_STREQ("HELLO", ps_msg_type_name(PS_MSG_HELLO));
    EXPECT_STREQ("OBJ_WRITE", ps_msg_type_name(PS_MSG_OBJ_WRITE));
    EXPECT_STREQ("STATS", ps_msg_type_name(PS_MSG_STATS));
    EXPECT_STREQ("UNKNOWN", ps_msg_type_name(0));
    EXPECT_STREQ("UNKNOWN", ps_msg_type_name(PS_MSG_TYPE_LAST));
    EXPECT_STREQ("RENAME", ps_msg_type_name(PS_MSG_RENAME));
    for (uint16_t t = 1; t < PS_MSG_TYPE_LAST; t++) {
        if (!type_defined(t)) {
            EXPECT_STREQ("UNKNOWN", ps_msg_type_name(t));
            continue;
        }
        EXPECT_STRNE("UNKNOWN", ps_msg_type_name(t));
    }
}

TEST(proto, round_trip_every_type)
{
    int types_seen[2][PS_MSG_TYPE_LAST] = {};

    for (const sample &s : valid_samples()) {
        ps_msg_view_t view;
        const uint8_t *where;
        ASSERT_EQ(PS_OK, decode(s.msg, s.msg.size(), s.is_reply, &view, &where)) << s.name;
        EXPECT_EQ((const void *)where, (const void *)view.hdr) << s.name;
        EXPECT_EQ((const void *)(where + sizeof(ps_msg_hdr_t)), view.body) << s.name;
        EXPECT_EQ(s.data_len, view.data_len) << s.name;
        /* the fields come back as they were encoded */
        ps_msg_hdr_t h = hdr_of(s.msg);
        EXPECT_EQ(42u, view.hdr->req_id) << s.name;
        EXPECT_EQ(h.type, view.hdr->type) << s.name;
        EXPECT_EQ(h.status, view.hdr->status) << s.name;
        EXPECT_EQ(0, memcmp(view.body, s.msg.data() + sizeof(h), h.body_len)) << s.name;
        /* and the reference agrees */
        uint64_t ref_len;
        EXPECT_TRUE(reference_decode(s.msg, s.is_reply, &ref_len)) << s.name;
        EXPECT_EQ(s.data_len, ref_len) << s.name;
        if (h.status == 0) {
            types_seen[s.is_reply][h.type] = 1;
        }
    }
    for (int r = 0; r < 2; r++) {
        for (int t = 1; t < PS_MSG_TYPE_LAST; t++) {
            if (!type_defined((uint16_t)t)) {
                continue;
            }
            EXPECT_TRUE(types_seen[r][t]) << ps_msg_type_name(t) << (r ? " rep" : " req");
        }
    }
}

TEST(proto, unaligned_buffer)
{
    bytes_t m = make(PS_MSG_OBJ_WRITE, io_req(3, 4096));
    std::vector<uint8_t> buf(m.size() + 1);
    memcpy(buf.data() + 1, m.data(), m.size());
    ps_msg_view_t view;
    ASSERT_EQ(PS_OK, ps_proto_decode(buf.data() + 1, m.size(), 0, &view));
    EXPECT_EQ(3u * 16 + 4096, view.data_len);
}

TEST(proto, short_header)
{
    bytes_t m = make_empty(PS_MSG_STATS);
    ps_msg_view_t view;
    for (size_t len = 0; len < sizeof(ps_msg_hdr_t); len++) {
        EXPECT_EQ(PS_ERR_PROTO, decode(m, len, 0, &view)) << len;
        EXPECT_EQ(PS_ERR_PROTO, decode(m, len, 1, &view)) << len;
    }
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_decode(NULL, 24, 0, &view));
}

TEST(proto, bad_header_fields)
{
    bytes_t good = make(PS_MSG_LOOKUP, path_req(5));
    ps_msg_hdr_t h;

    ASSERT_EQ(PS_OK, decode(good, 0));

    bytes_t m = good;
    h = hdr_of(m);
    h.magic = 0x50535431u; /* byte-swapped: a big-endian peer */
    set_hdr(m, h);
    EXPECT_EQ(PS_ERR_PROTO, decode(m, 0)) << "bad magic";

    for (uint16_t v : {0, PS_PROTO_VERSION - 1, PS_PROTO_VERSION + 1, 0xffff}) {
        m = good;
        h = hdr_of(m);
        h.version = v;
        set_hdr(m, h);
        EXPECT_EQ(PS_ERR_PROTO, decode(m, 0)) << "version " << v;
    }

    for (uint16_t t : {0, (int)PS_MSG_TYPE_LAST, 0x100, 0xffff}) {
        m = good;
        h = hdr_of(m);
        h.type = t;
        set_hdr(m, h);
        EXPECT_EQ(PS_ERR_PROTO, decode(m, 0)) << "type " << t;
        EXPECT_EQ(PS_ERR_PROTO, decode(m, 1)) << "type " << t;
    }

    /* requests carry status 0; replies 0 or a negative status */
    m = good;
    h = hdr_of(m);
    h.status = PS_ERR_IO;
    set_hdr(m, h);
    EXPECT_EQ(PS_ERR_PROTO, decode(m, 0)) << "request with a status";
    m = make(PS_MSG_OBJ_STAT, obj_rep(), 1);
    EXPECT_EQ(PS_ERR_PROTO, decode(m, 1)) << "positive status";

    /* a LOOKUP request body is not a LOOKUP reply body */
    EXPECT_EQ(PS_ERR_PROTO, decode(good, 1));
}

TEST(proto, wrong_body_len)
{
    for (const sample &s : valid_samples()) {
        ps_msg_hdr_t h = hdr_of(s.msg);
        /* body_len says more or less than the header holds */
        for (int64_t delta : {-8, -1, 1, 8, 1 << 20}) {
            if ((int64_t)h.body_len + delta < 0) {
                continue;
            }
            bytes_t m = s.msg;
            ps_msg_hdr_t h2 = h;
            h2.body_len = (uint32_t)(h.body_len + delta);
            set_hdr(m, h2);
            EXPECT_EQ(PS_ERR_PROTO, decode(m, s.is_reply)) << s.name << " body_len " << h2.body_len;
        }
        /* consistent body_len and length, but the wrong size for the type */
        for (uint32_t extra : {1u, 8u}) {
            bytes_t m = s.msg;
            m.resize(m.size() + extra);
            ps_msg_hdr_t h2 = h;
            h2.body_len += extra;
            set_hdr(m, h2);
            uint32_t full = 0;
            ps_proto_body_len(h.type, s.is_reply, &full);
            if (s.is_reply && h.status < 0 && h2.body_len == full) {
                continue; /* an error reply may carry the full body (SHARED_FP's is 8) */
            }
            EXPECT_EQ(PS_ERR_PROTO, decode(m, s.is_reply)) << s.name << " +" << extra;
        }
        if (h.body_len >= 8) {
            bytes_t m = s.msg;
            m.resize(m.size() - 8);
            ps_msg_hdr_t h2 = h;
            h2.body_len -= 8;
            set_hdr(m, h2);
            EXPECT_EQ(PS_ERR_PROTO, decode(m, s.is_reply)) << s.name << " -8";
        }
    }
    /* an error reply: body_len 0 or the full body, nothing in between */
    ps_io_rep_t rep = io_rep(10);
    bytes_t m = make(PS_MSG_OBJ_READ, PS_ERR_IO, &rep, 8);
    EXPECT_EQ(PS_ERR_PROTO, decode(m, 1));
}

TEST(proto, length_fields_out_of_range)
{
    struct bad {
        const char *what;
        bytes_t msg;
        int is_reply;
    } cases[] = {
        {"CREATE path_len 0", make(PS_MSG_CREATE, create_req(0)), 0},
        {"CREATE path_len max+1", make(PS_MSG_CREATE, create_req(PS_PATH_MAX + 1)), 0},
        {"CREATE path_len ~0", make(PS_MSG_CREATE, create_req(UINT32_MAX)), 0},
        {"LOOKUP path_len 0", make(PS_MSG_LOOKUP, path_req(0)), 0},
        {"LOOKUP path_len max+1", make(PS_MSG_LOOKUP, path_req(PS_PATH_MAX + 1)), 0},
        {"REMOVE path_len 0", make(PS_MSG_REMOVE, path_req(0)), 0},
        {"REMOVE path_len ~0", make(PS_MSG_REMOVE, path_req(UINT32_MAX)), 0},
        {"LIST prefix_len max+1", make(PS_MSG_LIST, list_req(PS_PATH_MAX + 1, 0, 1)), 0},
        {"LIST after_len max+1", make(PS_MSG_LIST, list_req(0, PS_PATH_MAX + 1, 1)), 0},
        {"LIST lengths ~0 (32-bit sum overflows)",
         make(PS_MSG_LIST, list_req(UINT32_MAX, UINT32_MAX, 1)), 0},
        {"LIST max_entries 0", make(PS_MSG_LIST, list_req(1, 0, 0)), 0},
        {"LIST max_entries max+1", make(PS_MSG_LIST, list_req(1, 0, PS_LIST_MAX + 1)), 0},
        {"OBJ_WRITE nregions 0", make(PS_MSG_OBJ_WRITE, io_req(0, 0)), 0},
        {"OBJ_WRITE nregions max+1", make(PS_MSG_OBJ_WRITE, io_req(PS_MAX_REGIONS + 1, 10)), 0},
        {"OBJ_WRITE payload max+1", make(PS_MSG_OBJ_WRITE, io_req(1, PS_MAX_PAYLOAD + 1)), 0},
        {"OBJ_WRITE overflow", make(PS_MSG_OBJ_WRITE, io_req(UINT32_MAX, UINT64_MAX)), 0},
        {"OBJ_WRITE payload ~0-15 (sum wraps)", make(PS_MSG_OBJ_WRITE, io_req(1, UINT64_MAX - 15)),
         0},
        {"OBJ_READ nregions 0", make(PS_MSG_OBJ_READ, io_req(0, 10)), 0},
        {"OBJ_READ nregions ~0", make(PS_MSG_OBJ_READ, io_req(UINT32_MAX, 10)), 0},
        {"OBJ_READ payload max+1", make(PS_MSG_OBJ_READ, io_req(1, PS_MAX_PAYLOAD + 1)), 0},
        {"HELLO rep nworkers 0", make(PS_MSG_HELLO, hello_rep(0, 0)), 1},
        {"HELLO rep nworkers max+1", make(PS_MSG_HELLO, hello_rep(PS_MAX_WORKERS + 1, 0)), 1},
        {"HELLO rep nworkers ~0", make(PS_MSG_HELLO, hello_rep(UINT32_MAX, 0)), 1},
        {"HELLO rep worker >= nworkers", make(PS_MSG_HELLO, hello_rep(4, 4)), 1},
        {"HELLO rep unknown flag", make(PS_MSG_HELLO, flagged_hello_rep(2, 0, 0)), 1},
        {"HELLO rep place past the cluster", make(PS_MSG_HELLO, flagged_hello_rep(0, 3, 2)), 1},
        {"HELLO rep place without a size", make(PS_MSG_HELLO, flagged_hello_rep(0, 1, 0)), 1},
        {"HELLO rep size without a place", make(PS_MSG_HELLO, flagged_hello_rep(0, 0, 2)), 1},
        {"HELLO req unknown flag", make(PS_MSG_HELLO, ps_hello_req_t{PS_PROTO_VERSION, 2}), 0},
        {"LIST rep nentries max+1",
         make(PS_MSG_LIST, list_rep(PS_LIST_MAX + 1, 0, (PS_LIST_MAX + 1) * list_entry_min)), 1},
        {"LIST rep data_len not a multiple of 8", make(PS_MSG_LIST, list_rep(1, 0, 65)), 1},
        {"LIST rep data_len too small", make(PS_MSG_LIST, list_rep(2, 0, list_entry_min)), 1},
        {"LIST rep data_len too large", make(PS_MSG_LIST, list_rep(1, 0, list_entry_max + 8)), 1},
        {"LIST rep data without entries", make(PS_MSG_LIST, list_rep(0, 0, 64)), 1},
        {"LIST rep data_len ~0-7", make(PS_MSG_LIST, list_rep(PS_LIST_MAX, 0, UINT64_MAX - 7)), 1},
        {"OBJ_READ rep bytes max+1", make(PS_MSG_OBJ_READ, io_rep(PS_MAX_PAYLOAD + 1)), 1},
        {"OBJ_READ rep bytes ~0", make(PS_MSG_OBJ_READ, io_rep(UINT64_MAX)), 1},
        {"SHARED_FP op 0", make(PS_MSG_SHARED_FP, sfp_req(0, 1)), 0},
        {"SHARED_FP op 4", make(PS_MSG_SHARED_FP, sfp_req(4, 1)), 0},
        {"SHARED_FP op ~0", make(PS_MSG_SHARED_FP, sfp_req(UINT32_MAX, 1)), 0},
        {"SHARED_FP add > INT64_MAX",
         make(PS_MSG_SHARED_FP, sfp_req(PS_SFP_FETCH_ADD, (uint64_t)INT64_MAX + 1)), 0},
        {"SHARED_FP set ~0", make(PS_MSG_SHARED_FP, sfp_req(PS_SFP_SET, UINT64_MAX)), 0},
        {"SHARED_FP release with a value", make(PS_MSG_SHARED_FP, sfp_req(PS_SFP_RELEASE, 1)), 0},
        {"SHARED_FP rep value > INT64_MAX",
         make(PS_MSG_SHARED_FP, sfp_rep((uint64_t)INT64_MAX + 1)), 1},
        {"LOOKUP_ID file 0", make(PS_MSG_LOOKUP_ID, ps_id_req_t{0, 1, 0}), 0},
        {"LOOKUP_ID access REMOVE", make(PS_MSG_LOOKUP_ID, ps_id_req_t{5, PS_CAP_REMOVE, 0}), 0},
        {"LOOKUP_ID access ~0", make(PS_MSG_LOOKUP_ID, ps_id_req_t{5, ~0u, 0}), 0},
        {"LOOKUP_ID reserved", make(PS_MSG_LOOKUP_ID, ps_id_req_t{5, 1, 1}), 0},
        {"RENAME src_len 0", make(PS_MSG_RENAME, rename_req(0, 5)), 0},
        {"RENAME dst_len 0", make(PS_MSG_RENAME, rename_req(5, 0)), 0},
        {"RENAME src_len max+1", make(PS_MSG_RENAME, rename_req(PS_PATH_MAX + 1, 5)), 0},
        {"RENAME dst_len ~0", make(PS_MSG_RENAME, rename_req(5, UINT32_MAX)), 0},
        {"RENAME lengths ~0 (32-bit sum overflows)",
         make(PS_MSG_RENAME, rename_req(UINT32_MAX, UINT32_MAX)), 0},
        {"RENAME unknown flag", make(PS_MSG_RENAME, rename_req(5, 5, 0x2)), 0},
        {"MOVE op 0", make(PS_MSG_MOVE, move_req(0, 5, 5)), 0},
        {"MOVE op 7", make(PS_MSG_MOVE, move_req(7, 5, 5)), 0},
        {"MOVE op ~0", make(PS_MSG_MOVE, move_req(UINT32_MAX, 5, 5)), 0},
        {"MOVE LEAVE src_len 0", make(PS_MSG_MOVE, move_req(PS_MOVE_LEAVE, 0, 5)), 0},
        {"MOVE LEAVE dst_len 0", make(PS_MSG_MOVE, move_req(PS_MOVE_LEAVE, 5, 0)), 0},
        {"MOVE ARRIVE src_len max+1",
         make(PS_MSG_MOVE, move_req(PS_MOVE_ARRIVE, PS_PATH_MAX + 1, 5)), 0},
        {"MOVE ARRIVE lengths ~0 (32-bit sum overflows)",
         make(PS_MSG_MOVE, move_req(PS_MOVE_ARRIVE, UINT32_MAX, UINT32_MAX)), 0},
        {"MOVE QUERY with a new name", make(PS_MSG_MOVE, move_req(PS_MOVE_QUERY, 5, 5)), 0},
        {"MOVE QUERY of arrivals after a name",
         make(PS_MSG_MOVE, move_req(PS_MOVE_QUERY, 0, 5, PS_MOVE_ARRIVALS)), 0},
        {"MOVE QUERY after a name too long",
         make(PS_MSG_MOVE, move_req(PS_MOVE_QUERY, 0, PS_PATH_MAX + 1)), 0},
        {"MOVE QUERY src_len ~0", make(PS_MSG_MOVE, move_req(PS_MOVE_QUERY, UINT32_MAX, 0)), 0},
        {"MOVE ARRIVE with a flag", make(PS_MSG_MOVE, move_req(PS_MOVE_ARRIVE, 5, 5, 1)), 0},
        {"MOVE LEAVE give-up flag", make(PS_MSG_MOVE, move_req(PS_MOVE_LEAVE, 5, 5, 2)), 0},
        {"MOVE RESOLVE unknown flag", make(PS_MSG_MOVE, move_req(PS_MOVE_RESOLVE, 5, 5, 4)), 0},
        {"MOVE DONE without a state", make(PS_MSG_MOVE, move_req(PS_MOVE_DONE, 5, 5)), 0},
        {"MOVE DONE departed", make(PS_MSG_MOVE, move_req(PS_MOVE_DONE, 5, 5, 0, 3)), 0},
        {"MOVE FORGET arrived", make(PS_MSG_MOVE, move_req(PS_MOVE_FORGET, 5, 5, 0, 1)), 0},
        {"MOVE rep state 4", make(PS_MSG_MOVE, move_rep(0, 0, 4)), 1},
        {"MOVE rep refused > 0", make(PS_MSG_MOVE, move_rep(0, 0, 2, 1)), 1},
        {"MOVE rep refused unknown", make(PS_MSG_MOVE, move_rep(0, 0, 2, PS_ERR_LAST)), 1},
        {"MOVE rep src_len max+1", make(PS_MSG_MOVE, move_rep(PS_PATH_MAX + 1, 1, 0)), 1},
        {"MOVE rep lengths ~0", make(PS_MSG_MOVE, move_rep(UINT32_MAX, UINT32_MAX, 0)), 1},
    };
    for (auto &c : cases) {
        uint64_t ref;
        EXPECT_EQ(PS_ERR_PROTO, decode(c.msg, c.is_reply)) << c.what;
        EXPECT_FALSE(reference_decode(c.msg, c.is_reply, &ref)) << c.what;
    }
}

TEST(proto, every_truncation_and_extension)
{
    for (const sample &s : valid_samples()) {
        ps_msg_view_t view;
        for (size_t len = 0; len < s.msg.size(); len++) {
            ASSERT_EQ(PS_ERR_PROTO, decode(s.msg, len, s.is_reply, &view))
                << s.name << " cut to " << len;
        }
        bytes_t longer = s.msg;
        longer.push_back(0);
        EXPECT_EQ(PS_ERR_PROTO, decode(longer, s.is_reply)) << s.name << " + 1 byte";
    }
}

/* Random byte flips: the decoder must agree with the reference on every
 * mutated message, never crash, and never read past the buffer (guard page). */
TEST(proto, random_corruption)
{
    std::mt19937_64 rng(12345);
    std::vector<sample> samples = valid_samples();
    size_t accepted = 0, rejected = 0;
    char dump[256];

    for (int iter = 0; iter < 200000; iter++) {
        const sample &s = samples[rng() % samples.size()];
        bytes_t m = s.msg;
        int nflips = 1 + (int)(rng() % 4);
        for (int f = 0; f < nflips; f++) {
            size_t pos = rng() % m.size();
            if (rng() % 2) {
                m[pos] ^= (uint8_t)(1u << (rng() % 8));
            } else {
                m[pos] = (uint8_t)rng();
            }
        }
        size_t len = m.size();
        if (rng() % 8 == 0) {
            len = rng() % (m.size() + 1);
            m.resize(len);
        }
        int is_reply = (rng() % 4 == 0) ? !s.is_reply : s.is_reply;

        ps_msg_view_t view;
        uint64_t ref_len = 0;
        int ret = decode(m, len, is_reply, &view);
        bool ref_ok = reference_decode(m, is_reply, &ref_len);
        ASSERT_TRUE(ret == PS_OK || ret == PS_ERR_PROTO) << ret;
        ASSERT_EQ(ref_ok, ret == PS_OK) << s.name << " iteration " << iter;
        if (ret == PS_OK) {
            ASSERT_EQ(ref_len, view.data_len) << s.name << " iteration " << iter;
            accepted++;
        } else {
            rejected++;
        }
        /* the dump must cope with anything */
        const uint8_t *p = guard().place(m.data(), len);
        ps_proto_dump(p, len, dump, sizeof(dump));
        ASSERT_LT(strlen(dump), sizeof(dump));
    }
    /* both outcomes must have been exercised */
    EXPECT_GT(accepted, 1000u);
    EXPECT_GT(rejected, 1000u);
}

TEST(proto, check_regions)
{
    const uint64_t max = 1ull << 40;
    ps_region_t r[3] = {{0, 10}, {100, 20}, {50, 5}};

    EXPECT_EQ(PS_OK, ps_proto_check_regions(r, 3, 35, max));
    EXPECT_EQ(PS_OK, ps_proto_check_regions(r, 1, 10, 10)); /* ends exactly at the limit */
    EXPECT_EQ(PS_ERR_FILE_TOO_LARGE, ps_proto_check_regions(r, 1, 10, 9)) << "one past the limit";
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_check_regions(r, 3, 34, max)) << "sum too small";
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_check_regions(r, 3, 36, max)) << "sum too large";
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_check_regions(r, 0, 0, max)) << "no regions";
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_check_regions(NULL, 1, 0, max));
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_check_regions(r, PS_MAX_REGIONS + 1, 35, max));

    ps_region_t zero[2] = {{0, 10}, {20, 0}};
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_check_regions(zero, 2, 10, max)) << "zero length";

    ps_region_t wrap[1] = {{UINT64_MAX - 5, 10}};
    EXPECT_EQ(PS_ERR_FILE_TOO_LARGE, ps_proto_check_regions(wrap, 1, 10, UINT64_MAX))
        << "off+len wraps";

    /* well formed but past any object: "file too large", not a protocol error */
    ps_region_t past[1] = {{max, 1}};
    EXPECT_EQ(PS_ERR_FILE_TOO_LARGE, ps_proto_check_regions(past, 1, 1, max))
        << "past max_obj_size";
    ps_region_t last[1] = {{max - 1, 1}};
    EXPECT_EQ(PS_OK, ps_proto_check_regions(last, 1, 1, max)) << "the last byte";

    /* the sum of the lengths wraps to exactly payload_len */
    ps_region_t big[3] = {{0, 1ull << 63}, {0, 1ull << 63}, {0, 7}};
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_check_regions(big, 3, 7, UINT64_MAX)) << "sum wraps";

    /* region arrays in AM data need not be aligned */
    std::vector<uint8_t> buf(sizeof(r) + 1);
    memcpy(buf.data() + 1, r, sizeof(r));
    EXPECT_EQ(PS_OK, ps_proto_check_regions((const ps_region_t *)(buf.data() + 1), 3, 35, max));
}

/* Every malformed run is refused, one defect at a time, from a valid list. */
TEST(proto, check_runs)
{
    const uint64_t max = 1ull << 40;
    ps_run_t r[3] = {{0, 8, 16, 4}, {1000, 100, 100, 1}, {5000, 1, 7, 10}};
    uint64_t n = 0;

    ASSERT_EQ(PS_OK, ps_proto_check_runs(r, 3, 32 + 100 + 10, max, &n));
    EXPECT_EQ(15u, n);

    auto check = [&](ps_run_t bad, uint64_t payload) {
        ps_run_t l[3] = {r[0], bad, r[2]};
        uint64_t cnt = 12345;
        ps_status_t status = ps_proto_check_runs(l, 3, payload, max, &cnt);
        if (status != PS_OK) {
            EXPECT_EQ(12345u, cnt) << "count set on failure";
        }
        return status;
    };
    EXPECT_EQ(PS_OK, check({1000, 100, 100, 1}, 142));
    EXPECT_EQ(PS_ERR_PROTO, check({1000, 100, 100, 0}, 42)) << "zero count";
    EXPECT_EQ(PS_ERR_PROTO, check({1000, 0, 100, 3}, 42)) << "zero length";
    EXPECT_EQ(PS_ERR_PROTO, check({1000, 100, 99, 2}, 242)) << "stride < length (overlap)";
    EXPECT_EQ(PS_ERR_PROTO, check({1000, 100, 0, 1}, 142)) << "stride 0 < length";
    EXPECT_EQ(PS_ERR_PROTO, check({1000, 100, 100, 1}, 141)) << "total below the payload";
    EXPECT_EQ(PS_ERR_PROTO, check({1000, 100, 100, 1}, 143)) << "total above the payload";
    /* well formed but past any object: "file too large", not a protocol error */
    EXPECT_EQ(PS_ERR_FILE_TOO_LARGE, check({max - 99, 100, 100, 1}, 142)) << "last region past max";
    EXPECT_EQ(PS_OK, check({max - 100, 100, 100, 1}, 142)) << "ends exactly at max";
    EXPECT_EQ(PS_ERR_FILE_TOO_LARGE, check({max - 1000, 1, 1000, 2}, 44))
        << "stride takes it past max";
    EXPECT_EQ(PS_OK, check({max - 1001, 1, 1000, 2}, 44)) << "stride lands on max - 1";
    EXPECT_EQ(PS_ERR_FILE_TOO_LARGE, check({UINT64_MAX - 5, 10, 10, 1}, 52)) << "off + len wraps";
    /* stride * (count - 1) wraps 64 bits to a small number */
    EXPECT_EQ(PS_ERR_FILE_TOO_LARGE, check({0, 1, 1ull << 62, 5}, 47)) << "stride * count wraps";
    /* len * count wraps 64 bits to exactly the payload */
    EXPECT_EQ(PS_ERR_PROTO, check({0, 1ull << 62, 1ull << 62, 4}, 42)) << "len * count wraps";
    EXPECT_EQ(PS_ERR_PROTO, check({0, 3, 3, 1ull << 63}, 42)) << "count beyond the payload";

    EXPECT_EQ(PS_ERR_PROTO, ps_proto_check_runs(r, 0, 0, max, &n)) << "no runs";
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_check_runs(NULL, 1, 32, max, &n));
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_check_runs(r, PS_MAX_REGIONS + 1, 142, max, &n));
    /* at most PS_MAX_REGIONS regions, however few the runs (a server
     * plans every region: 64 Mi 1-byte regions took it 1 GB and 5.6 s) */
    ps_run_t many[2] = {{0, 1, 2, PS_MAX_REGIONS}, {1ull << 30, 1, 1, 1}};
    EXPECT_EQ(PS_OK, ps_proto_check_runs(many, 1, PS_MAX_REGIONS, max, &n));
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_check_runs(many, 2, PS_MAX_REGIONS + 1, max, &n))
        << "one region more than a list may hold";
    /* a truncated list: fewer runs than the payload needs */
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_check_runs(r, 2, 142, max, &n)) << "truncated list";

    /* run arrays in AM data need not be aligned */
    std::vector<uint8_t> buf(sizeof(r) + 1);
    memcpy(buf.data() + 1, r, sizeof(r));
    EXPECT_EQ(PS_OK, ps_proto_check_runs((const ps_run_t *)(buf.data() + 1), 3, 142, max, &n));
}

/* The decoder: unknown flags are refused; with PS_IO_RUNS the list takes 32
 * bytes an entry, and a truncated or extended list is caught by data_len. */
TEST(proto, io_runs_flag)
{
    for (uint16_t type : {PS_MSG_OBJ_WRITE, PS_MSG_OBJ_READ}) {
        ps_io_req_t b = {7, 100, 3, PS_IO_RUNS};
        ps_msg_view_t v;
        bytes_t m = make(type, b);
        ASSERT_EQ(PS_OK, ps_proto_decode(m.data(), m.size(), 0, &v));
        EXPECT_EQ(3u * 32 + (type == PS_MSG_OBJ_WRITE ? 100 : 0), v.data_len);
        EXPECT_EQ(96u, ps_io_list_bytes(&b));
        b.flags = 0;
        EXPECT_EQ(48u, ps_io_list_bytes(&b));
        for (uint32_t f : {0x2u, 0x3u, 0x80000000u}) {
            b.flags = f;
            m = make(type, b);
            EXPECT_EQ(PS_ERR_PROTO, ps_proto_decode(m.data(), m.size(), 0, &v)) << "flags " << f;
        }
    }
}

/* PS_IO_BEHIND: a write's flag only; it changes no length. */
TEST(proto, io_behind_flag)
{
    for (uint16_t type : {PS_MSG_OBJ_WRITE, PS_MSG_OBJ_READ}) {
        ps_io_req_t b = {7, 100, 3, PS_IO_RUNS | PS_IO_BEHIND};
        ps_msg_view_t v;
        bytes_t m = make(type, b);
        if (type == PS_MSG_OBJ_READ) {
            EXPECT_EQ(PS_ERR_PROTO, ps_proto_decode(m.data(), m.size(), 0, &v));
            continue;
        }
        ASSERT_EQ(PS_OK, ps_proto_decode(m.data(), m.size(), 0, &v));
        EXPECT_EQ(3u * 32 + 100, v.data_len);
    }
}

/* An OBJ_WRITE of n list entries of entry bytes each, sent with the list
 * after its body (PS_IO_LIST_INLINE): list_extra bytes more or fewer in the
 * header than the list takes. */
static bytes_t make_inline_write(uint16_t type, uint32_t flags, uint32_t n, size_t entry,
                                 long list_extra = 0)
{
    ps_io_req_t b = {7, 100, n, flags | PS_IO_LIST_INLINE};
    std::vector<uint8_t> body(sizeof(b) + n * entry + list_extra, 0x5a);
    memcpy(body.data(), &b, sizeof(b));
    return make(type, 0, body.data(), body.size());
}

/* PS_IO_LIST_INLINE: an OBJ_WRITE's list in the header (at most
 * PS_IO_INLINE_MAX bytes, counted by body_len), the AM data the payload
 * alone; refused on OBJ_READ, with a list too long, or when the header holds
 * more or less than the list. */
TEST(proto, io_list_inline)
{
    ps_msg_view_t v;
    bytes_t m = make_inline_write(PS_MSG_OBJ_WRITE, 0, 2, 16);
    ASSERT_EQ(PS_OK, ps_proto_decode(m.data(), m.size(), 0, &v));
    EXPECT_EQ(100u, v.data_len) << "the data is the payload alone";
    EXPECT_EQ(sizeof(ps_io_req_t) + 32, v.hdr->body_len);

    m = make_inline_write(PS_MSG_OBJ_WRITE, PS_IO_RUNS, 3, 32);
    ASSERT_EQ(PS_OK, ps_proto_decode(m.data(), m.size(), 0, &v));
    EXPECT_EQ(100u, v.data_len);

    uint32_t most = PS_IO_INLINE_MAX / 16;
    m = make_inline_write(PS_MSG_OBJ_WRITE, 0, most, 16);
    EXPECT_EQ(PS_OK, ps_proto_decode(m.data(), m.size(), 0, &v)) << "a list of the largest size";
    m = make_inline_write(PS_MSG_OBJ_WRITE, 0, most + 1, 16);
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_decode(m.data(), m.size(), 0, &v)) << "a list too long";

    m = make_inline_write(PS_MSG_OBJ_READ, 0, 2, 16);
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_decode(m.data(), m.size(), 0, &v))
        << "reads carry no inline list";
    for (long extra : {-1L, 1L, -32L, 16L}) {
        m = make_inline_write(PS_MSG_OBJ_WRITE, 0, 2, 16, extra);
        EXPECT_EQ(PS_ERR_PROTO, ps_proto_decode(m.data(), m.size(), 0, &v)) << "extra " << extra;
    }
    /* the flag without the list in the header (a list sent as data before) */
    ps_io_req_t b = {7, 100, 2, PS_IO_LIST_INLINE};
    m = make(PS_MSG_OBJ_WRITE, b);
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_decode(m.data(), m.size(), 0, &v));
    /* nregions too large to be a list at all */
    b.nregions = PS_MAX_REGIONS + 1;
    m = make(PS_MSG_OBJ_WRITE, b);
    EXPECT_EQ(PS_ERR_PROTO, ps_proto_decode(m.data(), m.size(), 0, &v));
    for (bytes_t msg : {make_inline_write(PS_MSG_OBJ_WRITE, 0, 2, 16),
                        make_inline_write(PS_MSG_OBJ_WRITE, 0, most + 1, 16),
                        make_inline_write(PS_MSG_OBJ_READ, 0, 2, 16)}) {
        uint64_t ref_len = 0;
        bool ok = ps_proto_decode(msg.data(), msg.size(), 0, &v) == PS_OK;
        EXPECT_EQ(ok, reference_decode(msg, 0, &ref_len));
        if (ok) {
            EXPECT_EQ(v.data_len, ref_len);
        }
    }
}

TEST(proto, check_path)
{
    auto check = [](const std::string &p) { return ps_proto_check_path(p.data(), p.size()); };

    EXPECT_EQ(PS_OK, check("/a"));
    EXPECT_EQ(PS_OK, check("/dir/file.dat"));
    EXPECT_EQ(PS_OK, check("/a/.b/..c/.../c."));
    EXPECT_EQ(PS_OK, check("/with space/and:colon"));

    EXPECT_EQ(PS_ERR_INVALID, check(""));
    EXPECT_EQ(PS_ERR_INVALID, check("/")) << "the root is not a file";
    EXPECT_EQ(PS_ERR_INVALID, check("a/b")) << "relative";
    EXPECT_EQ(PS_ERR_INVALID, check("/a/")) << "trailing slash";
    EXPECT_EQ(PS_ERR_INVALID, check("//a"));
    EXPECT_EQ(PS_ERR_INVALID, check("/a//b"));
    EXPECT_EQ(PS_ERR_INVALID, check("/./a"));
    EXPECT_EQ(PS_ERR_INVALID, check("/a/."));
    EXPECT_EQ(PS_ERR_INVALID, check("/a/../b"));
    EXPECT_EQ(PS_ERR_INVALID, check("/.."));
    EXPECT_EQ(PS_ERR_INVALID, check(std::string("/a\0b", 4))) << "NUL inside";
    EXPECT_EQ(PS_ERR_INVALID, ps_proto_check_path(NULL, 3));

    std::string longest = "/" + std::string(PS_PATH_MAX - 1, 'x');
    EXPECT_EQ(PS_OK, check(longest));
    EXPECT_EQ(PS_ERR_NAME_TOO_LONG, check(longest + "y"));

    /* the length is what counts, not a NUL: bytes past len are not read */
    const char *p = "/abc/def";
    EXPECT_EQ(PS_OK, ps_proto_check_path(p, 4));
    EXPECT_EQ(PS_ERR_INVALID, ps_proto_check_path(p, 5));
}

namespace {

/* Reference normalization with an explicit stack. */
int reference_normalize(const std::string &path, std::string *out)
{
    if (path.empty() || path[0] != '/') {
        return PS_ERR_INVALID;
    }
    std::vector<std::string> stack;
    size_t i = 0;
    while (i <= path.size()) {
        size_t j = path.find('/', i);
        if (j == std::string::npos) {
            j = path.size();
        }
        std::string c = path.substr(i, j - i);
        if (c == "..") {
            if (!stack.empty()) {
                stack.pop_back();
            }
        } else if (!c.empty() && c != ".") {
            stack.push_back(c);
        }
        i = j + 1;
    }
    if (stack.empty()) {
        return PS_ERR_INVALID;
    }
    out->clear();
    for (auto &c : stack) {
        *out += "/" + c;
    }
    return out->size() > PS_PATH_MAX ? PS_ERR_NAME_TOO_LONG : PS_OK;
}

} // namespace

TEST(proto, path_normalize)
{
    struct {
        const char *in, *out;
        int ret;
    } cases[] = {
        {"/a", "/a", PS_OK},
        {"/a/b/c", "/a/b/c", PS_OK},
        {"//a///b//", "/a/b", PS_OK},
        {"/a/./b/.", "/a/b", PS_OK},
        {"/a/b/../c", "/a/c", PS_OK},
        {"/a/b/c/../../d", "/a/d", PS_OK},
        {"/../a", "/a", PS_OK},
        {"/../../a/..//b", "/b", PS_OK},
        {"/.../..a/a..", "/.../..a/a..", PS_OK},
        {"/a/..", NULL, PS_ERR_INVALID},
        {"/", NULL, PS_ERR_INVALID},
        {"/./..", NULL, PS_ERR_INVALID},
        {"a/b", NULL, PS_ERR_INVALID},
        {"", NULL, PS_ERR_INVALID},
    };
    char out[PS_PATH_MAX + 1];

    for (auto &c : cases) {
        strcpy(out, "untouched");
        EXPECT_EQ(c.ret, ps_path_normalize(c.in, out, sizeof(out))) << c.in;
        if (c.ret == PS_OK) {
            EXPECT_STREQ(c.out, out) << c.in;
            EXPECT_EQ(PS_OK, ps_proto_check_path(out, strlen(out))) << c.in;
        } else {
            EXPECT_STREQ("untouched", out) << c.in << ": output set on error";
        }
    }
    EXPECT_EQ(PS_ERR_INVALID, ps_path_normalize(NULL, out, sizeof(out)));

    /* length limits apply to the result, not the input */
    std::string name(PS_PATH_MAX - 1, 'x');
    std::string in = "/" + name;
    for (int i = 0; i < 1000; i++) {
        in += "/.";
    }
    EXPECT_EQ(PS_OK, ps_path_normalize(in.c_str(), out, sizeof(out)));
    EXPECT_EQ(PS_PATH_MAX, strlen(out));
    EXPECT_EQ(PS_ERR_NAME_TOO_LONG, ps_path_normalize((in + "/y").c_str(), out, sizeof(out)));
    EXPECT_EQ(PS_OK, ps_path_normalize((in + "/y/..").c_str(), out, sizeof(out)));
    /* the output buffer must hold the result and its NUL */
    char small[4];
    EXPECT_EQ(PS_OK, ps_path_normalize("/abc/../ab", small, sizeof(small)));
    EXPECT_STREQ("/ab", small);
    EXPECT_EQ(PS_ERR_NAME_TOO_LONG, ps_path_normalize("/abc", small, sizeof(small)));
}

TEST(proto, path_normalize_random)
{
    static const char *const parts[] = {"", ".", "..", "a", "bc", "...", ".x"};
    std::mt19937_64 rng(99);
    char out[PS_PATH_MAX + 1];

    for (int iter = 0; iter < 20000; iter++) {
        std::string path;
        int n = (int)(rng() % 10);
        for (int i = 0; i < n; i++) {
            path += "/";
            path += parts[rng() % 7];
        }
        if (path.empty() || rng() % 10 == 0) {
            path += "/";
        }
        std::string want;
        int ref = reference_normalize(path, &want);
        int ret = ps_path_normalize(path.c_str(), out, sizeof(out));
        ASSERT_EQ(ref, ret) << path;
        if (ret == PS_OK) {
            ASSERT_EQ(want, out) << path;
            ASSERT_EQ(PS_OK, ps_proto_check_path(out, strlen(out))) << path;
        }
    }
}

TEST(proto, dump)
{
    char buf[512];
    std::string s;

    bytes_t w = make(PS_MSG_OBJ_WRITE, io_req(3, 4096));
    s = ps_proto_dump(w.data(), w.size(), buf, sizeof(buf));
    EXPECT_NE(std::string::npos, s.find("OBJ_WRITE id=42")) << s;
    EXPECT_NE(std::string::npos, s.find("nregions=3")) << s;
    EXPECT_NE(std::string::npos, s.find("payload_len=4096")) << s;
    EXPECT_NE(std::string::npos, s.find("0123456789abcdef")) << s;

    bytes_t e = make_empty(PS_MSG_LOOKUP, PS_ERR_NO_ENTRY);
    s = ps_proto_dump(e.data(), e.size(), buf, sizeof(buf));
    EXPECT_NE(std::string::npos, s.find("LOOKUP")) << s;
    EXPECT_NE(std::string::npos, s.find("status=-4 (no such file)")) << s;

    bytes_t h = make(PS_MSG_HELLO, hello_rep(8, 2));
    s = ps_proto_dump(h.data(), h.size(), buf, sizeof(buf));
    EXPECT_NE(std::string::npos, s.find("rep")) << s;
    EXPECT_NE(std::string::npos, s.find("nworkers=8")) << s;

    bytes_t l = make(PS_MSG_LIST, list_req(3, 0, 100));
    s = ps_proto_dump(l.data(), l.size(), buf, sizeof(buf));
    EXPECT_NE(std::string::npos, s.find("max_entries=100")) << s; /* ambiguous: both views */
    EXPECT_NE(std::string::npos, s.find("nentries=3")) << s;

    s = ps_proto_dump(w.data(), 10, buf, sizeof(buf));
    EXPECT_EQ("short header (10 bytes)", s);

    bytes_t bad = w;
    bad[0] ^= 0xff;
    s = ps_proto_dump(bad.data(), bad.size(), buf, sizeof(buf));
    EXPECT_NE(std::string::npos, s.find("bad magic")) << s;

    /* a cut line is still a string */
    for (size_t len = 1; len < 40; len++) {
        char small[40];
        memset(small, 'x', sizeof(small));
        ps_proto_dump(w.data(), w.size(), small, len);
        EXPECT_LT(strlen(small), len);
    }
}

/* Capabilities (ps_cap.h): a signed one passes; any change of a field, a
 * wrong key, another file, expiry or a missing right is refused. */
TEST(cap, sign_and_check)
{
    uint8_t cluster_key[32], key[PS_CAP_KEY_LEN], other_key[PS_CAP_KEY_LEN];
    memset(cluster_key, 7, sizeof(cluster_key));
    ps_cap_key_derive(cluster_key, sizeof(cluster_key), key);
    cluster_key[0] ^= 1;
    ps_cap_key_derive(cluster_key, sizeof(cluster_key), other_key);
    ASSERT_NE(0, memcmp(key, other_key, sizeof(key)));

    ps_cap_t cap = {};
    cap.file_id = 0x1234;
    cap.expiry_ns = 2000;
    cap.uid = 65534;
    cap.rights = PS_CAP_READ;
    ps_cap_sign(key, &cap);
    EXPECT_EQ(nullptr, ps_cap_check(key, &cap, 0x1234, PS_CAP_READ, 1000));
    EXPECT_EQ(nullptr, ps_cap_check(key, &cap, 0x1234, 0, 2000));
    EXPECT_STREQ("without the right", ps_cap_check(key, &cap, 0x1234, PS_CAP_WRITE, 1000));
    EXPECT_STREQ("for another file", ps_cap_check(key, &cap, 0x1235, PS_CAP_READ, 1000));
    EXPECT_STREQ("expired", ps_cap_check(key, &cap, 0x1234, PS_CAP_READ, 2001));
    EXPECT_STREQ("forged", ps_cap_check(other_key, &cap, 0x1234, PS_CAP_READ, 1000));

    ps_cap_t widened = cap;
    widened.rights |= PS_CAP_WRITE;
    EXPECT_STREQ("forged", ps_cap_check(key, &widened, 0x1234, PS_CAP_WRITE, 1000));
    ps_cap_t extended = cap;
    extended.expiry_ns += 1;
    EXPECT_STREQ("forged", ps_cap_check(key, &extended, 0x1234, PS_CAP_READ, 1000));
    ps_cap_t moved = cap;
    moved.file_id = 0x1235;
    EXPECT_STREQ("forged", ps_cap_check(key, &moved, 0x1235, PS_CAP_READ, 1000));
    for (size_t i = 0; i < PS_AUTH_MAC_LEN; i++) {
        ps_cap_t bad = cap;
        bad.mac[i] ^= 0x80;
        EXPECT_STREQ("forged", ps_cap_check(key, &bad, 0x1234, PS_CAP_READ, 1000)) << i;
    }
    ps_cap_t none = {};
    EXPECT_STREQ("missing", ps_cap_check(key, &none, 0, 0, 0));
}

/*
 * test_server_raw.cc: the raw UCX client of the server tests (see
 * test_server_raw.h).
 */
#include "test_server_raw.h"

#include <arpa/inet.h>
#include <stddef.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "ps_hmac.h"
#include "ps_layout.h"
#include "ps_time.h"

namespace ps_test {

struct raw_client::pending_send {
    std::vector<uint8_t> hdr, data;
    bool done = false;
};

struct rndv_recv {
    raw_client *client;
    std::shared_ptr<raw_reply> reply;
    void *desc;
    bool done = false;
};

raw_client::raw_client()
{
    ucp_params_t params;
    ucp_config_t *config;
    ucp_worker_params_t wparams;

    if (ucp_config_read(NULL, NULL, &config) != UCS_OK) {
        failed_ = true;
        return;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    ucs_status_t st = ucp_init(&params, config, &ctx_);
    ucp_config_release(config);
    if (st != UCS_OK) {
        fprintf(stderr, "raw_client: ucp_init: %s\n", ucs_status_string(st));
        failed_ = true;
        return;
    }
    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    st = ucp_worker_create(ctx_, &wparams, &worker_);
    if (st != UCS_OK || ucp_worker_get_efd(worker_, &efd_) != UCS_OK) {
        failed_ = true;
        return;
    }
    ucp_am_handler_param_t am;
    memset(&am, 0, sizeof(am));
    am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    am.id = PS_AM_ID_REPLY;
    am.cb = am_cb;
    am.arg = this;
    am.flags = UCP_AM_FLAG_WHOLE_MSG;
    if (ucp_worker_set_am_recv_handler(worker_, &am) != UCS_OK) {
        failed_ = true;
    }
}

raw_client::~raw_client()
{
    if (ep_ != nullptr) {
        ucp_request_param_t p;
        memset(&p, 0, sizeof(p));
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = failed_ ? UCP_EP_CLOSE_FLAG_FORCE : 0;
        ucs_status_ptr_t r = ucp_ep_close_nbx(ep_, &p);
        if (UCS_PTR_IS_PTR(r)) {
            uint64_t deadline = ps_time_ns() + 5000000000ull;
            while (ucp_request_check_status(r) == UCS_INPROGRESS && ps_time_ns() < deadline) {
                ucp_worker_progress(worker_);
            }
            if (ucp_request_check_status(r) == UCS_INPROGRESS) {
                /* UCX 1.13 aborts destroying a worker whose endpoint is
                 * still flushing ("pending request ... should have been
                 * flushed", seen once in CI): leave it to the process's end */
                fprintf(stderr, "raw_client: the endpoint's close did not complete in 5 s; "
                                "its UCX worker is left alive\n");
                worker_ = nullptr;
                ctx_ = nullptr;
            } else {
                ucp_request_free(r);
            }
        }
        ep_ = nullptr;
    }
    if (worker_ != nullptr) {
        /* sends still pending are dropped with the worker */
        for (pending_send *s : sends_) {
            if (s->done) {
                delete s;
            }
        }
        ucp_worker_destroy(worker_);
    }
    if (ctx_ != nullptr) {
        ucp_cleanup(ctx_);
    }
}

void raw_client::err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    raw_client *c = static_cast<raw_client *>(arg);
    (void)ep;
    (void)status;
    c->failed_ = true;
}

bool raw_client::connect(const std::string &host, uint16_t port, double timeout_s, bool shm)
{
    struct sockaddr_in sa;
    ucp_ep_params_t params;

    if (worker_ == nullptr) {
        return false;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    if (inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1) {
        fprintf(stderr, "raw_client: bad address %s\n", host.c_str());
        return false;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    params.sockaddr.addr = (const struct sockaddr *)&sa;
    params.sockaddr.addrlen = sizeof(sa);
    params.err_mode = shm ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = err_cb;
    params.err_handler.arg = this;
    ucs_status_t st = ucp_ep_create(worker_, &params, &ep_);
    if (st != UCS_OK) {
        fprintf(stderr, "raw_client: ucp_ep_create %s:%u: %s\n", host.c_str(), port,
                ucs_status_string(st));
        ep_ = nullptr;
        return false;
    }
    (void)timeout_s;
    return true;
}

ucs_status_t raw_client::am_cb(void *arg, const void *header, size_t header_length, void *data,
                               size_t length, const ucp_am_recv_param_t *param)
{
    raw_client *c = static_cast<raw_client *>(arg);
    auto reply = std::make_shared<raw_reply>();

    reply->header.assign((const uint8_t *)header, (const uint8_t *)header + header_length);
    if (header_length >= sizeof(ps_msg_hdr_t)) {
        memcpy(&reply->hdr, header, sizeof(ps_msg_hdr_t));
    }
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        rndv_recv *r = new rndv_recv{c, reply, data};
        reply->data.resize(length);
        c->rndv_todo_.push_back(r); /* received after progress returns */
        return UCS_INPROGRESS;
    }
    reply->data.assign((const uint8_t *)data, (const uint8_t *)data + length);
    reply->received = true;
    c->replies_[reply->hdr.req_id] = reply;
    return UCS_OK;
}

void raw_client::recv_cb(void *request, ucs_status_t status, size_t length, void *user_data)
{
    rndv_recv *r = static_cast<rndv_recv *>(user_data);
    (void)length;
    if (status == UCS_OK) {
        r->reply->received = true;
        r->client->replies_[r->reply->hdr.req_id] = r->reply;
    } else {
        fprintf(stderr, "raw_client: rendezvous receive failed: %s\n",
                ucs_status_string(status));
    }
    r->done = true;
    if (request != nullptr) {
        ucp_request_free(request);
    }
    delete r;
}

void raw_client::send_cb(void *request, ucs_status_t status, void *user_data)
{
    pending_send *s = static_cast<pending_send *>(user_data);
    (void)status;
    s->done = true;
    ucp_request_free(request);
}

void raw_client::reap_sends()
{
    std::vector<pending_send *> keep;
    for (pending_send *s : sends_) {
        if (s->done) {
            delete s;
        } else {
            keep.push_back(s);
        }
    }
    sends_.swap(keep);
    if (!rndv_todo_.empty()) {
        std::vector<void *> todo;
        todo.swap(rndv_todo_);
        for (void *v : todo) {
            rndv_recv *r = static_cast<rndv_recv *>(v);
            ucp_request_param_t p;
            memset(&p, 0, sizeof(p));
            p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
            p.cb.recv_am = recv_cb;
            p.user_data = r;
            ucs_status_ptr_t req = ucp_am_recv_data_nbx(worker_, r->desc, r->reply->data.data(),
                                                        r->reply->data.size(), &p);
            if (req == nullptr) {
                recv_cb(nullptr, UCS_OK, r->reply->data.size(), r);
            } else if (UCS_PTR_IS_ERR(req)) {
                recv_cb(nullptr, UCS_PTR_STATUS(req), 0, r);
            }
        }
    }
}

void raw_client::send_raw(const void *hdr, size_t hdr_len, const void *data, size_t data_len)
{
    pending_send *s = new pending_send;
    s->hdr.assign((const uint8_t *)hdr, (const uint8_t *)hdr + hdr_len);
    if (data_len > 0) {
        s->data.assign((const uint8_t *)data, (const uint8_t *)data + data_len);
    }
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                     UCP_OP_ATTR_FIELD_FLAGS;
    p.cb.send = send_cb;
    p.user_data = s;
    p.flags = UCP_AM_SEND_FLAG_REPLY | send_protocol_;
    ucs_status_ptr_t r = ucp_am_send_nbx(ep_, PS_AM_ID_REQUEST, s->hdr.data(), s->hdr.size(),
                                         data_len ? s->data.data() : nullptr, data_len, &p);
    if (r == nullptr) {
        delete s;
    } else if (UCS_PTR_IS_ERR(r)) {
        fprintf(stderr, "raw_client: ucp_am_send_nbx: %s\n",
                ucs_status_string(UCS_PTR_STATUS(r)));
        delete s;
    } else {
        sends_.push_back(s);
    }
}

raw_reply raw_client::authenticate(const std::string &key_file, uint32_t uid, uint32_t gid)
{
    auth_tried_ = true;
    raw_reply h = hello();
    ps_hello_rep_t hr = h.body<ps_hello_rep_t>();
    if (!h.received || h.status() != 0 || hr.auth_mode != PS_AUTH_KEY) {
        return h;
    }
    uint8_t key[PS_KEY_MAX], mac[PS_AUTH_MAC_LEN];
    size_t key_len = 0;
    char err[512];
    if (ps_key_file_load(key_file.c_str(), key, &key_len, err, sizeof(err)) != PS_OK) {
        fprintf(stderr, "raw_client: %s\n", err);
        return h;
    }
    const void *parts[5] = {PS_AUTH_KEY_LABEL, hr.nonce, &hr.server_id, &uid, &gid};
    size_t lens[5] = {sizeof(PS_AUTH_KEY_LABEL) - 1, PS_AUTH_NONCE_LEN, 8, 4, 4};
    ps_hmac_sha256(key, key_len, 5, parts, lens, mac);
    ps_auth_req_t req{PS_AUTH_KEY, PS_AUTH_MAC_LEN, uid, gid};
    return call(PS_MSG_AUTH, &req, sizeof(req), mac, sizeof(mac));
}

ps_cap_t raw_client::make_cap(uint64_t file_id, uint32_t rights, uint64_t expiry_ns)
{
    static bool loaded = false;
    static bool have_key = false;
    static uint8_t cap_key[PS_CAP_KEY_LEN];
    ps_cap_t cap{};

    if (!loaded) {
        const char *file = getenv("PSTRIPE_AUTH_KEY_FILE");
        uint8_t key[PS_KEY_MAX];
        size_t key_len = 0;
        char err[512];
        loaded = true;
        if (file != nullptr && ps_key_file_load(file, key, &key_len, err, sizeof(err)) == PS_OK) {
            ps_cap_key_derive(key, key_len, cap_key);
            have_key = true;
        }
    }
    if (have_key) {
        cap.file_id = file_id;
        cap.expiry_ns = expiry_ns;
        cap.rights = rights;
        ps_cap_sign(cap_key, &cap);
    }
    return cap;
}

/* Where a data request's body keeps its file id and capability; false for
 * other types or bodies of another size. */
static bool raw_cap_offsets(uint16_t type, uint32_t body_len, size_t *id_off, size_t *cap_off)
{
    *id_off = 0;
    switch (type) {
    case PS_MSG_OBJ_WRITE:
    case PS_MSG_OBJ_READ:
        *cap_off = offsetof(ps_io_req_t, cap);
        return body_len == sizeof(ps_io_req_t);
    case PS_MSG_OBJ_STAT:
    case PS_MSG_OBJ_TRUNCATE:
    case PS_MSG_OBJ_ALLOCATE:
    case PS_MSG_OBJ_REMOVE:
    case PS_MSG_OBJ_SYNC:
    case PS_MSG_OBJ_FLUSH:
        *cap_off = offsetof(ps_obj_req_t, cap);
        return body_len == sizeof(ps_obj_req_t);
    case PS_MSG_SHARED_FP:
        *cap_off = offsetof(ps_sfp_req_t, cap);
        return body_len == sizeof(ps_sfp_req_t);
    default:
        return false;
    }
}

uint64_t raw_client::send(uint16_t type, const void *body, uint32_t body_len, const void *data,
                          size_t data_len)
{
    std::vector<uint8_t> hdr(sizeof(ps_msg_hdr_t) + body_len);
    ps_msg_hdr_t h;

    if (auto_auth_ && !auth_tried_ && type != PS_MSG_HELLO && type != PS_MSG_AUTH) {
        const char *key = getenv("PSTRIPE_AUTH_KEY_FILE");
        authenticate(key != nullptr ? key : "");
    }
    uint64_t id = next_id_++;

    ps_msg_hdr_init(&h, (ps_msg_type_t)type, id, 0, body_len);
    memcpy(hdr.data(), &h, sizeof(h));
    if (body_len > 0) {
        memcpy(hdr.data() + sizeof(h), body, body_len);
    }
    size_t id_off, cap_off;
    if (auto_caps_ && raw_cap_offsets(type, body_len, &id_off, &cap_off)) {
        static const ps_cap_t zero{};
        uint8_t *cap = hdr.data() + sizeof(h) + cap_off;
        if (memcmp(cap, &zero, sizeof(zero)) == 0) {
            uint64_t file_id;
            memcpy(&file_id, hdr.data() + sizeof(h) + id_off, sizeof(file_id));
            ps_cap_t c = make_cap(file_id, PS_CAP_ALL, ps_cap_now_ns() + 3600ull * 1000000000ull);
            memcpy(cap, &c, sizeof(c));
        }
    }
    send_raw(hdr.data(), hdr.size(), data, data_len);
    return id;
}

raw_reply raw_client::wait(uint64_t req_id, double timeout_s)
{
    uint64_t deadline = ps_time_ns() + (uint64_t)(timeout_s * 1e9);

    for (;;) {
        while (ucp_worker_progress(worker_) != 0) {
        }
        reap_sends();
        auto it = replies_.find(req_id);
        if (it != replies_.end()) {
            raw_reply r = *it->second;
            replies_.erase(it);
            return r;
        }
        uint64_t now = ps_time_ns();
        if (now >= deadline || failed_) {
            return raw_reply();
        }
        if (!rndv_todo_.empty()) {
            continue;
        }
        ucs_status_t st = ucp_worker_arm(worker_);
        if (st == UCS_ERR_BUSY) {
            continue;
        }
        struct pollfd pfd = {efd_, POLLIN, 0};
        poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1);
    }
}

raw_reply raw_client::call(uint16_t type, const void *body, uint32_t body_len, const void *data,
                           size_t data_len, double timeout_s)
{
    return wait(send(type, body, body_len, data, data_len), timeout_s);
}

raw_reply raw_client::hello()
{
    ps_hello_req_t req{PS_PROTO_VERSION, 0};
    return call(PS_MSG_HELLO, &req, sizeof(req));
}

raw_reply raw_client::stats(ps_stats_rep_t *rep)
{
    raw_reply r = call(PS_MSG_STATS, nullptr, 0);
    if (rep != nullptr) {
        *rep = r.body<ps_stats_rep_t>();
    }
    return r;
}

std::vector<uint8_t> raw_client::io_data(const std::vector<ps_region_t> &regions,
                                         const std::vector<uint8_t> &payload)
{
    std::vector<uint8_t> d(regions.size() * sizeof(ps_region_t) + payload.size());
    memcpy(d.data(), regions.data(), regions.size() * sizeof(ps_region_t));
    if (!payload.empty()) {
        memcpy(d.data() + regions.size() * sizeof(ps_region_t), payload.data(), payload.size());
    }
    return d;
}

raw_reply raw_client::write(uint64_t file_id, const std::vector<ps_region_t> &regions,
                            const std::vector<uint8_t> &payload, uint32_t flags)
{
    ps_io_req_t req{file_id, payload.size(), (uint32_t)regions.size(), flags};
    std::vector<uint8_t> d = io_data(regions, payload);
    return call(PS_MSG_OBJ_WRITE, &req, sizeof(req), d.data(), d.size());
}

raw_reply raw_client::read(uint64_t file_id, const std::vector<ps_region_t> &regions)
{
    uint64_t total = 0;
    for (const ps_region_t &r : regions) {
        total += r.len;
    }
    ps_io_req_t req{file_id, total, (uint32_t)regions.size(), 0};
    return call(PS_MSG_OBJ_READ, &req, sizeof(req), regions.data(),
                regions.size() * sizeof(ps_region_t));
}

raw_reply raw_client::obj(uint16_t type, uint64_t file_id, uint64_t size)
{
    ps_obj_req_t req{file_id, size};
    return call(type, &req, sizeof(req));
}

raw_reply raw_client::path_op(uint16_t type, const std::string &path)
{
    ps_path_req_t req{(uint32_t)path.size(), 0};
    return call(type, &req, sizeof(req), path.data(), path.size());
}

raw_reply raw_client::create(const std::string &path, uint32_t flags, uint64_t stripe_size,
                             uint32_t stripe_count, uint32_t first_server)
{
    ps_create_req_t req{stripe_size, stripe_count, first_server, 0644, flags,
                        (uint32_t)path.size(), 0};
    return call(PS_MSG_CREATE, &req, sizeof(req), path.data(), path.size());
}

raw_reply raw_client::rename(const std::string &src, const std::string &dst, uint32_t flags,
                             uint64_t file_id)
{
    ps_rename_req_t req{(uint32_t)src.size(), (uint32_t)dst.size(), flags, 0, file_id};
    std::string data = src + dst;
    return call(PS_MSG_RENAME, &req, sizeof(req), data.data(), data.size());
}

::testing::AssertionResult start_with_faults(ps_cluster &cluster,
                                             const std::vector<std::string> &args, const char *name,
                                             const std::string &value, uint32_t nworkers)
{
    setenv("LD_PRELOAD", PS_AIO_FAULTS_PATH, 1);
    setenv(name, value.c_str(), 1);
#if defined(__SANITIZE_ADDRESS__)
    /* --enable-asan: the preloaded library is not instrumented and would
     * come before ASan's runtime, which then refuses to start */
    const char *asan = getenv("ASAN_OPTIONS");
    std::string saved = asan != nullptr ? asan : "";
    setenv("ASAN_OPTIONS", (saved + ":verify_asan_link_order=0").c_str(), 1);
#endif
    ::testing::AssertionResult started = cluster.start(1, nworkers, args);
#if defined(__SANITIZE_ADDRESS__)
    setenv("ASAN_OPTIONS", saved.c_str(), 1);
#endif
    unsetenv("LD_PRELOAD");
    unsetenv(name);
    return started;
}

uint64_t file_id_for_worker(uint32_t worker, uint32_t nworkers, uint64_t seed)
{
    for (uint64_t id = seed * 0x100000001ull + 1;; id++) {
        if (ps_object_worker(id, nworkers) == worker) {
            return id;
        }
    }
}

std::string path_for_worker(uint32_t worker, uint32_t nworkers, const std::string &base)
{
    for (int i = 0;; i++) {
        std::string p = base + std::to_string(i);
        if (ps_path_worker(p.data(), p.size(), nworkers) == worker) {
            return p;
        }
    }
}

uint8_t pat(uint64_t off, uint8_t seed)
{
    return (uint8_t)(((off * 131u + 7u) ^ (off >> 9)) % 255u + 1u + seed);
}

std::vector<uint8_t> payload_for(const std::vector<ps_region_t> &regions, uint8_t seed)
{
    std::vector<uint8_t> p;
    for (const ps_region_t &r : regions) {
        for (uint64_t i = 0; i < r.len; i++) {
            p.push_back(pat(r.off + i, seed));
        }
    }
    return p;
}

} // namespace ps_test

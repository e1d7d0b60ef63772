/*
 * test_server_raw.h: a raw UCX client for the server tests. It sends
 * hand-built (possibly malformed) active messages straight at one worker of a
 * pstripe-server and collects the replies, without the client library.
 *
 * Waiting is event driven (ucp_worker_arm + poll on the worker's event fd
 * with a timeout), so a test waiting for the daemon does not steal its CPU.
 */
#ifndef TEST_SERVER_RAW_H
#define TEST_SERVER_RAW_H

#include <stdint.h>
#include <string.h>
#include <ucp/api/ucp.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ps_cap.h"
#include "ps_cluster.h"
#include "ps_proto.h"
#include "ps_status.h"

namespace ps_test {

struct raw_reply {
    bool received = false;
    ps_msg_hdr_t hdr{};              /* valid when received */
    std::vector<uint8_t> header;     /* whole AM header as received */
    std::vector<uint8_t> data;       /* AM data */
    int status() const { return hdr.status; }
    /* The fixed body, copied out (zeros if the header is too short). */
    template <typename T> T body() const
    {
        T t{};
        if (header.size() >= sizeof(ps_msg_hdr_t) + sizeof(T)) {
            memcpy(&t, header.data() + sizeof(ps_msg_hdr_t), sizeof(T));
        }
        return t;
    }
};

class raw_client {
public:
    raw_client();
    ~raw_client();
    raw_client(const raw_client &) = delete;
    raw_client &operator=(const raw_client &) = delete;

    /* Connect to host:port; false (with a message on stderr) on failure.
     * shm: without peer-failure detection, as to a server's shm port. */
    bool connect(const std::string &host, uint16_t port, double timeout_s = 10.0, bool shm = false);
    bool connected() const { return ep_ != nullptr && !failed_; }

    /* Send an AM with raw header bytes and data (copied); returns a send id. */
    void send_raw(const void *hdr, size_t hdr_len, const void *data, size_t data_len);
    /* Send a request built from type, body and data; returns its req_id. */
    uint64_t send(uint16_t type, const void *body, uint32_t body_len, const void *data,
                  size_t data_len);
    /* Wait for the reply with this req_id (timeout: .received false). */
    raw_reply wait(uint64_t req_id, double timeout_s = 30.0);
    /* send + wait */
    raw_reply call(uint16_t type, const void *body, uint32_t body_len, const void *data = nullptr,
                   size_t data_len = 0, double timeout_s = 30.0);

    /*
     * Authentication. By default the first send() of any other type than
     * HELLO and AUTH first sends HELLO and, if the server asks for the
     * cluster key, an AUTH answering its nonce with the key of
     * PSTRIPE_AUTH_KEY_FILE (ps_cluster's). set_auto_auth(false) turns that
     * off, for tests of what unauthenticated connections get.
     */
    void set_auto_auth(bool on)
    {
        auto_auth_ = on;
    }
    /* UCP_AM_SEND_FLAG_EAGER or _RNDV for the sends that follow (0: UCX
     * chooses, the default). */
    void set_send_protocol(uint32_t flag)
    {
        send_protocol_ = flag;
    }
    /*
     * Capabilities. Like a metadata owner, a test holding the cluster key
     * (PSTRIPE_AUTH_KEY_FILE) can sign them: by default send() puts a valid
     * capability with every right into a data request (OBJ_*, SHARED_FP)
     * whose capability is all zeros. set_auto_caps(false) sends the bodies
     * as given, for tests of what the servers refuse.
     */
    void set_auto_caps(bool on)
    {
        auto_caps_ = on;
    }
    /* A capability signed with the key of PSTRIPE_AUTH_KEY_FILE (zeros if
     * there is none). */
    static ps_cap_t make_cap(uint64_t file_id, uint32_t rights, uint64_t expiry_ns);
    /* HELLO then AUTH with this key (uid/gid claimed as given); the AUTH
     * reply (the HELLO's if that failed or the server needs no auth). */
    raw_reply authenticate(const std::string &key_file, uint32_t uid = 0, uint32_t gid = 0);

    /* Helpers for common requests. */
    raw_reply hello();
    raw_reply stats(ps_stats_rep_t *rep);
    raw_reply write(uint64_t file_id, const std::vector<ps_region_t> &regions,
                    const std::vector<uint8_t> &payload, uint32_t flags = 0);
    raw_reply read(uint64_t file_id, const std::vector<ps_region_t> &regions);
    raw_reply obj(uint16_t type, uint64_t file_id, uint64_t size = 0);
    raw_reply path_op(uint16_t type, const std::string &path);
    raw_reply create(const std::string &path, uint32_t flags = 0, uint64_t stripe_size = 65536,
                     uint32_t stripe_count = 1, uint32_t first_server = 0);
    raw_reply rename(const std::string &src, const std::string &dst, uint32_t flags = 0,
                     uint64_t file_id = 0);

    /* Build the request bytes of a write (regions then payload). */
    static std::vector<uint8_t> io_data(const std::vector<ps_region_t> &regions,
                                        const std::vector<uint8_t> &payload);
    uint64_t next_req_id() { return next_id_++; }

private:
    struct pending_send;
    static ucs_status_t am_cb(void *arg, const void *header, size_t header_length, void *data,
                              size_t length, const ucp_am_recv_param_t *param);
    static void send_cb(void *request, ucs_status_t status, void *user_data);
    static void recv_cb(void *request, ucs_status_t status, size_t length, void *user_data);
    static void err_cb(void *arg, ucp_ep_h ep, ucs_status_t status);
    bool progress_wait(double timeout_s);
    void reap_sends();

    ucp_context_h ctx_ = nullptr;
    ucp_worker_h worker_ = nullptr;
    ucp_ep_h ep_ = nullptr;
    int efd_ = -1;
    bool failed_ = false;
    bool auto_auth_ = true;
    uint32_t send_protocol_ = 0;
    bool auto_caps_ = true;
    bool auth_tried_ = false;
    uint64_t next_id_ = 1;
    std::map<uint64_t, std::shared_ptr<raw_reply>> replies_; /* by req_id, completed */
    std::vector<void *> rndv_todo_;                          /* rndv replies to receive */
    std::vector<pending_send *> sends_;
};

/* Find a file id whose objects belong to worker `worker` of `nworkers`. */
/* cluster.start(1, nworkers, args) with tests/integration/aio_faults.c
 * preloaded into the server, its variable name set to value. */
::testing::AssertionResult start_with_faults(ps_cluster &cluster,
                                             const std::vector<std::string> &args, const char *name,
                                             const std::string &value, uint32_t nworkers = 1);

uint64_t file_id_for_worker(uint32_t worker, uint32_t nworkers, uint64_t seed = 1);
/* Find a path owned by worker `worker` of `nworkers`. */
std::string path_for_worker(uint32_t worker, uint32_t nworkers, const std::string &base);

/* The byte the I/O tests expect at object offset off (0 is never a value). */
uint8_t pat(uint64_t off, uint8_t seed = 0);
/* The bytes of regions, one after the other, by pat. */
std::vector<uint8_t> payload_for(const std::vector<ps_region_t> &regions, uint8_t seed = 0);

} // namespace ps_test

#endif

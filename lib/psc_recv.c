/*
 * psc_recv.c: replies. The UCX active-message handler matches a reply to
 * its op by req_id, checks it, copies its body, and receives its data into
 * the op's destination: eager data is copied at once, rendezvous data is
 * received by UCX (staged in one contiguous buffer when it is large and
 * scattered, see psc_io.c) and completes in psc_recv_cb.
 */
#include <stdlib.h>
#include <string.h>

#include "ps_log.h"
#include "psc_conn.h"
#include "psc_op.h"
#include "psc_recv.h"
#include "psc_stage.h"

/* Copy eager data into the op's destination. */
static void psc_scatter(psc_op_t *op, const void *data, size_t length)
{
    const ucp_dt_iov_t *iov;
    const char *p = data;

    if (!op->recv_iov) {
        memcpy(op->recv_buf, data, length);
        return;
    }
    iov = op->recv_buf;
    for (size_t i = 0; i < op->recv_count && length > 0; i++) {
        size_t n = iov[i].length < length ? iov[i].length : length;
        memcpy(iov[i].buffer, p, n);
        p += n;
        length -= n;
    }
}

static void psc_recv_cb(void *request, ucs_status_t status, size_t length, void *user_data)
{
    psc_op_t *op = user_data;
    psc_conn_t *conn = op->conn;
    pstripe_fs_t *fs;

    ucp_request_free(request);
    op->recv_req = NULL;
    if (psc_op_detached(op)) {
        return;
    }
    fs = conn->server->fs;
    if (status != UCS_OK) {
        psc_conn_lost(fs, conn, status);
        psc_op_error(op, conn->fail_status, "%s", conn->fail_msg);
    } else if (op->staged != NULL) {
        psc_scatter(op, op->staged, op->recv_len);
    }
    psc_op_check_ready(fs, op);
}

/* Receive a reply's data into dst (count bytes or IOV entries). */
static void psc_recv_data(pstripe_fs_t *fs, psc_op_t *op, void *data, size_t length,
                          const ucp_am_recv_param_t *param, void *dst, size_t count, int iov)
{
    ucp_request_param_t rparam;
    void *req;

    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        if (iov || dst != data) {
            psc_scatter(op, data, length);
        }
        return;
    }
    if (iov && op->stage_min != 0 && length >= op->stage_min) {
        /* UCX 1.13 receives rendezvous data into an IOV through 8 KiB
         * active messages; into one contiguous buffer it can use 64 KiB
         * zero-copy fragments or RMA. Stage it and scatter on completion. */
        op->staged = psc_bounce_get(fs, length, &op->staged_cap);
        if (op->staged != NULL) {
            dst = op->staged;
            count = length;
            iov = 0;
        }
    }
    rparam.op_attr_mask =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
    rparam.cb.recv_am = psc_recv_cb;
    rparam.user_data = op;
    rparam.datatype = iov ? ucp_dt_make_iov() : ucp_dt_make_contig(1);
    req = ucp_am_recv_data_nbx(fs->ucp_worker, data, dst, count, &rparam);
    if (req == NULL && op->staged != NULL) {
        psc_scatter(op, op->staged, length);
    }
    if (UCS_PTR_IS_ERR(req)) {
        psc_op_error(op, PS_ERR_CONN, "receiving %s reply data from server %s failed: %s",
                     ps_msg_type_name(op->type), op->conn->server->addr,
                     ucs_status_string(UCS_PTR_STATUS(req)));
    } else if (req != NULL) {
        op->recv_req = req;
    }
}

/* Receive a successful reply's data (length bytes) as the op expects it. */
static void psc_reply_data(pstripe_fs_t *fs, psc_op_t *op, void *data, size_t length,
                           const ucp_am_recv_param_t *param)
{
    const char *addr = op->conn->server->addr;

    switch (op->recv_mode) {
    case PSC_RECV_BUF:
        if (length != op->recv_len) {
            psc_op_error(op, PS_ERR_PROTO, "server %s sent %zu bytes for %s, expected %llu", addr,
                         length, ps_msg_type_name(op->type), (unsigned long long)op->recv_len);
            return;
        }
        psc_recv_data(fs, op, data, length, param, op->recv_buf, op->recv_count, op->recv_iov);
        break;
    case PSC_RECV_ALLOC:
        if (length > op->recv_max) {
            psc_op_error(op, PS_ERR_PROTO, "server %s sent %zu bytes for %s, at most %llu allowed",
                         addr, length, ps_msg_type_name(op->type),
                         (unsigned long long)op->recv_max);
            return;
        }
        op->recv_alloc = malloc(length);
        if (op->recv_alloc == NULL) {
            psc_op_error(op, PS_ERR_NO_MEMORY, "no memory for a %zu-byte %s reply", length,
                         ps_msg_type_name(op->type));
            return;
        }
        op->recv_alloc_len = length;
        op->recv_buf = op->recv_alloc;
        op->recv_iov = 0;
        psc_recv_data(fs, op, data, length, param, op->recv_alloc, length, 0);
        break;
    default:
        psc_op_error(op, PS_ERR_PROTO, "server %s sent unexpected data with %s", addr,
                     ps_msg_type_name(op->type));
        break;
    }
}

/* Check a reply (hdr: an aligned copy of header) against its op: it
 * decodes, has the op's type, a known status and as much data as announced.
 * Copies the body; PS_OK if the data is to be received. */
static ps_status_t psc_reply_check(psc_op_t *op, const ps_msg_hdr_t *hdr, const void *header,
                                   size_t header_length, size_t length)
{
    const char *addr = op->conn->server->addr;
    ps_msg_view_t view;
    ps_status_t status;

    status = ps_proto_decode(header, header_length, 1, &view);
    if (status != PS_OK || hdr->type != op->type) {
        psc_op_error(op, PS_ERR_PROTO, "server %s sent a malformed reply to %s", addr,
                     ps_msg_type_name(op->type));
        return PS_ERR_PROTO;
    }
    if (hdr->status != PS_OK) {
        if (hdr->status > 0 || hdr->status <= PS_ERR_LAST) {
            psc_op_error(op, PS_ERR_PROTO, "server %s answered %s with unknown status %d", addr,
                         ps_msg_type_name(op->type), (int)hdr->status);
            return PS_ERR_PROTO;
        }
        status = (ps_status_t)hdr->status;
        psc_op_error(op, status, "server %s: %s: %s", addr, ps_msg_type_name(op->type),
                     ps_status_string(status));
        return status;
    }
    if (length != view.data_len) {
        psc_op_error(op, PS_ERR_PROTO, "server %s sent %zu bytes of %s reply data, expected %llu",
                     addr, length, ps_msg_type_name(op->type), (unsigned long long)view.data_len);
        return PS_ERR_PROTO;
    }
    if (op->rep_body != NULL) {
        size_t n = hdr->body_len < op->rep_body_len ? hdr->body_len : op->rep_body_len;

        memset(op->rep_body, 0, op->rep_body_len);
        memcpy(op->rep_body, view.body, n);
    }
    return PS_OK;
}

ucs_status_t psc_am_reply_cb(void *arg, const void *header, size_t header_length, void *data,
                             size_t length, const ucp_am_recv_param_t *param)
{
    pstripe_fs_t *fs = arg;
    ps_msg_hdr_t hdr;
    psc_op_t *op;

    if (header_length < sizeof(hdr)) {
        ps_warn("dropping a reply with a %zu-byte header", header_length);
        return UCS_OK;
    }
    memcpy(&hdr, header, sizeof(hdr));
    ps_trace("reply to %s req_id %#llx, status %d, %zu data bytes", ps_msg_type_name(hdr.type),
             (unsigned long long)hdr.req_id, (int)hdr.status, length);
    op = psc_slot_find(fs, hdr.req_id);
    if (op == NULL) {
        ps_debug("dropping a late or unknown reply (req_id %#llx)", (unsigned long long)hdr.req_id);
        return UCS_OK;
    }
    psc_slot_remove(fs, op);
    op->reply_done = 1;
    op->instance = op->conn->hello_rep.instance;
    if (psc_reply_check(op, &hdr, header, header_length, length) == PS_OK && length > 0) {
        psc_reply_data(fs, op, data, length, param);
    }
    psc_op_check_ready(fs, op);
    return UCS_OK;
}

/*
 * ps_cap.c: capabilities (see ps_cap.h and ps_proto.h). The MAC covers
 * every field but itself, so a holder cannot widen its rights, move it to
 * another file or extend its life; the check verifies the MAC first, in
 * constant time, and only then looks at the fields.
 */
#include "ps_cap.h"

#include "ps_hmac.h"

#include <stddef.h>
#include <string.h>
#include <time.h>

void ps_cap_key_derive(const uint8_t *cluster_key, size_t key_len, uint8_t *cap_key)
{
    const void *parts[1] = {PS_CAP_LABEL};
    size_t lens[1] = {sizeof(PS_CAP_LABEL) - 1};
    ps_hmac_sha256(cluster_key, key_len, 1, parts, lens, cap_key);
}

static void ps_cap_mac(const uint8_t *cap_key, const ps_cap_t *cap, uint8_t *mac)
{
    const void *parts[2] = {PS_CAP_LABEL, cap};
    size_t lens[2] = {sizeof(PS_CAP_LABEL) - 1, offsetof(ps_cap_t, mac)};
    ps_hmac_sha256(cap_key, PS_CAP_KEY_LEN, 2, parts, lens, mac);
}

void ps_cap_sign(const uint8_t *cap_key, ps_cap_t *cap)
{
    ps_cap_mac(cap_key, cap, cap->mac);
}

const char *ps_cap_check(const uint8_t *cap_key, const ps_cap_t *cap, uint64_t file_id,
                         uint32_t need, uint64_t now_ns)
{
    uint8_t mac[PS_AUTH_MAC_LEN];

    ps_cap_mac(cap_key, cap, mac);
    if (!ps_mem_equal_ct(mac, cap->mac, sizeof(mac))) {
        return cap->file_id == 0 && cap->expiry_ns == 0 ? "missing" : "forged";
    }
    if (cap->file_id != file_id) {
        return "for another file";
    }
    if (now_ns > cap->expiry_ns) {
        return "expired";
    }
    if ((cap->rights & need) != need) {
        return "without the right";
    }
    return NULL;
}

/* The lengths of both names are MAC'd too: no other split of the same
 * bytes into two names verifies. */
static void ps_move_ticket_mac(const uint8_t *cap_key, const ps_move_ticket_t *t, const char *src,
                               size_t src_len, const char *dst, size_t dst_len, uint8_t *mac)
{
    uint32_t lens32[2] = {(uint32_t)src_len, (uint32_t)dst_len};
    const void *parts[5] = {PS_MOVE_TICKET_LABEL, t, lens32, src, dst};
    size_t lens[5] = {sizeof(PS_MOVE_TICKET_LABEL) - 1, offsetof(ps_move_ticket_t, mac),
                      sizeof(lens32), src_len, dst_len};
    ps_hmac_sha256(cap_key, PS_CAP_KEY_LEN, 5, parts, lens, mac);
}

void ps_move_ticket_sign(const uint8_t *cap_key, ps_move_ticket_t *t, const char *src,
                         size_t src_len, const char *dst, size_t dst_len)
{
    ps_move_ticket_mac(cap_key, t, src, src_len, dst, dst_len, t->mac);
}

int ps_move_ticket_ok(const uint8_t *cap_key, const ps_move_ticket_t *t, const char *src,
                      size_t src_len, const char *dst, size_t dst_len)
{
    uint8_t mac[PS_AUTH_MAC_LEN];

    ps_move_ticket_mac(cap_key, t, src, src_len, dst, dst_len, mac);
    return ps_mem_equal_ct(mac, t->mac, sizeof(mac));
}

/* A receipt is bound to its move's ticket (its MAC names the ticket's). */
static void ps_move_receipt_mac(const uint8_t *cap_key, const ps_move_receipt_t *r,
                                const ps_move_ticket_t *t, uint8_t *mac)
{
    const void *parts[3] = {PS_MOVE_RECEIPT_LABEL, r, t->mac};
    size_t lens[3] = {sizeof(PS_MOVE_RECEIPT_LABEL) - 1, offsetof(ps_move_receipt_t, mac),
                      sizeof(t->mac)};
    ps_hmac_sha256(cap_key, PS_CAP_KEY_LEN, 3, parts, lens, mac);
}

void ps_move_receipt_sign(const uint8_t *cap_key, ps_move_receipt_t *r, const ps_move_ticket_t *t)
{
    ps_move_receipt_mac(cap_key, r, t, r->mac);
}

int ps_move_receipt_ok(const uint8_t *cap_key, const ps_move_receipt_t *r,
                       const ps_move_ticket_t *t)
{
    uint8_t mac[PS_AUTH_MAC_LEN];

    ps_move_receipt_mac(cap_key, r, t, mac);
    return r->tid == t->tid && ps_mem_equal_ct(mac, r->mac, sizeof(mac));
}

uint64_t ps_cap_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

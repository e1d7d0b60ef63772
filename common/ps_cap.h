/*
 * ps_cap.h: capabilities (ps_proto.h): the key every server of a cluster
 * derives from the cluster key, signing at the metadata owner, and the
 * check a data server makes on every data request.
 */
#ifndef PS_CAP_H
#define PS_CAP_H

#include "ps_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PS_CAP_KEY_LEN 32u /* bytes of a capability key */

/* The capability key of a cluster key: HMAC-SHA256(cluster key, PS_CAP_LABEL).
 * A capability never reveals the cluster key, and an AUTH proof is never a
 * valid capability MAC (different labels). */
void ps_cap_key_derive(const uint8_t *cluster_key, size_t key_len, uint8_t *cap_key);

/* Fill cap->mac over PS_CAP_LABEL and the other fields of cap. */
void ps_cap_sign(const uint8_t *cap_key, ps_cap_t *cap);

/*
 * Check that cap is genuine (MAC, compared in constant time), names file_id,
 * has not expired at now_ns (CLOCK_REALTIME) and holds every right in need
 * (0: any). Returns NULL if it does, else the reason ("forged", "expired",
 * "for another file", "without the right").
 */
const char *ps_cap_check(const uint8_t *cap_key, const ps_cap_t *cap, uint64_t file_id,
                         uint32_t need, uint64_t now_ns);

/* Fill t->mac over PS_MOVE_TICKET_LABEL, t's other fields, the lengths of
 * src and dst and their bytes; and 1 if t's MAC is that (constant time). */
void ps_move_ticket_sign(const uint8_t *cap_key, ps_move_ticket_t *t, const char *src,
                         size_t src_len, const char *dst, size_t dst_len);
int ps_move_ticket_ok(const uint8_t *cap_key, const ps_move_ticket_t *t, const char *src,
                      size_t src_len, const char *dst, size_t dst_len);

/* The same for a receipt of the move of ticket t (over
 * PS_MOVE_RECEIPT_LABEL, its fields and t's MAC); ok also needs r's tid to
 * be t's. */
void ps_move_receipt_sign(const uint8_t *cap_key, ps_move_receipt_t *r, const ps_move_ticket_t *t);
int ps_move_receipt_ok(const uint8_t *cap_key, const ps_move_receipt_t *r,
                       const ps_move_ticket_t *t);

/* CLOCK_REALTIME in ns (capability expiries). */
uint64_t ps_cap_now_ns(void);

#ifdef __cplusplus
}
#endif

#endif

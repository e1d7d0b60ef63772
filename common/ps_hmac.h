/*
 * ps_hmac.h: SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the
 * cluster-key challenge-response and the tickets of AUTH (ps_proto.h).
 * Small and dependency-free; checked against the RFC 4231 vectors in
 * tests/unit/test_hmac.cc.
 */
#ifndef PS_HMAC_H
#define PS_HMAC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PS_SHA256_LEN 32u

typedef struct ps_sha256 {
    uint32_t h[8];
    uint64_t total; /* bytes hashed */
    uint8_t buf[64];
    size_t nbuf;
} ps_sha256_t;

void ps_sha256_init(ps_sha256_t *ctx);
void ps_sha256_update(ps_sha256_t *ctx, const void *data, size_t len);
void ps_sha256_final(ps_sha256_t *ctx, uint8_t out[PS_SHA256_LEN]);

/* HMAC-SHA256 of the concatenation of n parts (parts[i], lens[i]). */
void ps_hmac_sha256(const void *key, size_t key_len, size_t n, const void *const *parts,
                    const size_t *lens, uint8_t out[PS_SHA256_LEN]);

/* 1 if the len bytes of a and b are equal, in time independent of where
 * they differ. */
int ps_mem_equal_ct(const void *a, const void *b, size_t len);

#define PS_KEY_MIN 16u   /* bytes: shortest cluster key accepted */
#define PS_KEY_MAX 4096u /* bytes: longest */

/*
 * Read a cluster key file into key (PS_KEY_MAX bytes), its length to
 * *key_len. Refused (PS_ERR_ACCESS, the reason in err) unless it is a
 * regular file owned by the caller's effective uid with no group or other
 * permission bits, holding PS_KEY_MIN..PS_KEY_MAX bytes (a trailing newline
 * is not part of the key). Returns a ps_status_t.
 */
int ps_key_file_load(const char *path, uint8_t *key, size_t *key_len, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif

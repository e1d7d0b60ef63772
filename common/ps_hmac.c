/*
 * ps_hmac.c: SHA-256 and HMAC-SHA256 (see ps_hmac.h).
 */
#include "ps_hmac.h"

#include "ps_status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint32_t ps_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t ps_ror32(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static void ps_sha256_block(ps_sha256_t *ctx, const uint8_t *p)
{
    uint32_t w[64], s[8];

    for (int i = 0; i < 16; i++) {
        w[i] = ((uint32_t)p[4 * i] << 24) | ((uint32_t)p[4 * i + 1] << 16) |
               ((uint32_t)p[4 * i + 2] << 8) | p[4 * i + 3];
    }
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ps_ror32(w[i - 15], 7) ^ ps_ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ps_ror32(w[i - 2], 17) ^ ps_ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(s, ctx->h, sizeof(s));
    for (int i = 0; i < 64; i++) {
        uint32_t S1 = ps_ror32(s[4], 6) ^ ps_ror32(s[4], 11) ^ ps_ror32(s[4], 25);
        uint32_t ch = (s[4] & s[5]) ^ (~s[4] & s[6]);
        uint32_t t1 = s[7] + S1 + ch + ps_sha256_k[i] + w[i];
        uint32_t S0 = ps_ror32(s[0], 2) ^ ps_ror32(s[0], 13) ^ ps_ror32(s[0], 22);
        uint32_t maj = (s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]);
        uint32_t t2 = S0 + maj;
        memmove(&s[1], &s[0], 7 * sizeof(uint32_t));
        s[4] += t1;
        s[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++) {
        ctx->h[i] += s[i];
    }
}

void ps_sha256_init(ps_sha256_t *ctx)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(ctx->h, h0, sizeof(h0));
    ctx->total = 0;
    ctx->nbuf = 0;
}

void ps_sha256_update(ps_sha256_t *ctx, const void *data, size_t len)
{
    const uint8_t *p = data;

    ctx->total += len;
    while (len > 0) {
        size_t n = 64 - ctx->nbuf < len ? 64 - ctx->nbuf : len;
        memcpy(ctx->buf + ctx->nbuf, p, n);
        ctx->nbuf += n;
        p += n;
        len -= n;
        if (ctx->nbuf == 64) {
            ps_sha256_block(ctx, ctx->buf);
            ctx->nbuf = 0;
        }
    }
}

void ps_sha256_final(ps_sha256_t *ctx, uint8_t out[PS_SHA256_LEN])
{
    uint64_t bits = ctx->total * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (ctx->nbuf < 56 ? 56 : 120) - ctx->nbuf;

    for (int i = 0; i < 8; i++) {
        pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    }
    ps_sha256_update(ctx, pad, padlen + 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(ctx->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(ctx->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(ctx->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)ctx->h[i];
    }
}

void ps_hmac_sha256(const void *key, size_t key_len, size_t n, const void *const *parts,
                    const size_t *lens, uint8_t out[PS_SHA256_LEN])
{
    uint8_t k[64] = {0}, pad[64], inner[PS_SHA256_LEN];
    ps_sha256_t ctx;

    if (key_len > 64) {
        ps_sha256_init(&ctx);
        ps_sha256_update(&ctx, key, key_len);
        ps_sha256_final(&ctx, k);
    } else if (key_len > 0) {
        memcpy(k, key, key_len);
    }
    for (int i = 0; i < 64; i++) {
        pad[i] = k[i] ^ 0x36;
    }
    ps_sha256_init(&ctx);
    ps_sha256_update(&ctx, pad, 64);
    for (size_t i = 0; i < n; i++) {
        ps_sha256_update(&ctx, parts[i], lens[i]);
    }
    ps_sha256_final(&ctx, inner);
    for (int i = 0; i < 64; i++) {
        pad[i] = k[i] ^ 0x5c;
    }
    ps_sha256_init(&ctx);
    ps_sha256_update(&ctx, pad, 64);
    ps_sha256_update(&ctx, inner, sizeof(inner));
    ps_sha256_final(&ctx, out);
}

int ps_mem_equal_ct(const void *a, const void *b, size_t len)
{
    const volatile uint8_t *x = a, *y = b;
    uint8_t diff = 0;

    for (size_t i = 0; i < len; i++) {
        diff |= x[i] ^ y[i];
    }
    return diff == 0;
}

int ps_key_file_load(const char *path, uint8_t *key, size_t *key_len, char *err, size_t errlen)
{
    uint8_t buf[PS_KEY_MAX + 2];
    struct stat st;
    ssize_t n;
    int fd;

    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int open_errno = errno;
        snprintf(err, errlen, "cannot open the cluster key %s: %s", path, strerror(open_errno));
        return open_errno == ENOENT ? PS_ERR_NOT_CONFIGURED : PS_ERR_ACCESS;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "the cluster key %s is not a regular file", path);
        goto err_close;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        snprintf(err, errlen,
                 "the cluster key %s must be owned by uid %u and readable by it alone "
                 "(it is uid %u, mode %04o): chmod 600 it",
                 path, (unsigned)geteuid(), (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        goto err_close;
    }
    n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n > 0 && buf[n - 1] == '\n') {
        n--;
    }
    if (n < (ssize_t)PS_KEY_MIN || n > (ssize_t)PS_KEY_MAX) {
        snprintf(err, errlen, "the cluster key %s must hold %u to %u bytes", path, PS_KEY_MIN,
                 PS_KEY_MAX);
        return PS_ERR_INVALID;
    }
    memcpy(key, buf, (size_t)n);
    *key_len = (size_t)n;
    return PS_OK;

err_close:
    close(fd);
    return PS_ERR_ACCESS;
}

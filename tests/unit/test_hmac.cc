/*
 * test_hmac.cc: SHA-256 and HMAC-SHA256 of common/ps_hmac.c against the
 * FIPS 180-4 examples and the RFC 4231 test cases, and the cluster key
 * file's checks (owner, mode, length).
 */
#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdio.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "ps_hmac.h"
#include "ps_status.h"

namespace {

std::string hex(const uint8_t *p, size_t n)
{
    std::string s;
    char b[3];
    for (size_t i = 0; i < n; i++) {
        snprintf(b, sizeof(b), "%02x", p[i]);
        s += b;
    }
    return s;
}

std::string sha256(const std::string &m, size_t chunk = 0)
{
    ps_sha256_t c;
    uint8_t out[PS_SHA256_LEN];
    ps_sha256_init(&c);
    if (chunk == 0) {
        ps_sha256_update(&c, m.data(), m.size());
    } else {
        for (size_t i = 0; i < m.size(); i += chunk) {
            ps_sha256_update(&c, m.data() + i, std::min(chunk, m.size() - i));
        }
    }
    ps_sha256_final(&c, out);
    return hex(out, sizeof(out));
}

std::string hmac(const std::string &key, const std::string &msg)
{
    uint8_t out[PS_SHA256_LEN];
    const void *parts[1] = {msg.data()};
    size_t lens[1] = {msg.size()};
    ps_hmac_sha256(key.data(), key.size(), 1, parts, lens, out);
    return hex(out, sizeof(out));
}

} // namespace

TEST(hmac, sha256_vectors)
{
    EXPECT_EQ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", sha256(""));
    EXPECT_EQ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", sha256("abc"));
    std::string m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    EXPECT_EQ("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", sha256(m));
    EXPECT_EQ(sha256(m), sha256(m, 7)); /* updates in pieces give the same digest */
    std::string million(1000000, 'a');
    EXPECT_EQ("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
              sha256(million, 4096));
}

TEST(hmac, rfc4231)
{
    /* test cases 1, 2, 4, 6 and 7 */
    EXPECT_EQ("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
              hmac(std::string(20, '\x0b'), "Hi There"));
    EXPECT_EQ("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
              hmac("Jefe", "what do ya want for nothing?"));
    std::string key4;
    for (int i = 1; i <= 25; i++) {
        key4 += (char)i;
    }
    EXPECT_EQ("82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
              hmac(key4, std::string(50, '\xcd')));
    EXPECT_EQ(
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
        hmac(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"));
    EXPECT_EQ("9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
              hmac(std::string(131, '\xaa'),
                   "This is a test using a larger than block-size key and a larger than "
                   "block-size data. The key needs to be hashed before being used by the HMAC "
                   "algorithm."));
}

TEST(hmac, parts_are_concatenated)
{
    uint8_t a[PS_SHA256_LEN], b[PS_SHA256_LEN];
    const void *parts[3] = {"what do ", "ya want ", "for nothing?"};
    size_t lens[3] = {8, 8, 12};
    ps_hmac_sha256("Jefe", 4, 3, parts, lens, a);
    EXPECT_EQ("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", hex(a, 32));
    const void *one[1] = {"what do ya want for nothing!"};
    size_t len1[1] = {28};
    ps_hmac_sha256("Jefe", 4, 1, one, len1, b);
    EXPECT_FALSE(ps_mem_equal_ct(a, b, sizeof(a)));
    EXPECT_TRUE(ps_mem_equal_ct(a, a, sizeof(a)));
}

TEST(hmac, key_file_checks)
{
    char path[] = "/tmp/ps-test-key-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(33, write(fd, "0123456789abcdef0123456789abcdef\n", 33));
    close(fd);
    uint8_t key[PS_KEY_MAX];
    size_t len = 0;
    char err[512] = "";

    ASSERT_EQ(0, chmod(path, 0600));
    EXPECT_EQ(PS_OK, ps_key_file_load(path, key, &len, err, sizeof(err))) << err;
    EXPECT_EQ(32u, len); /* the newline is not part of the key */

    ASSERT_EQ(0, chmod(path, 0640));
    EXPECT_EQ(PS_ERR_ACCESS, ps_key_file_load(path, key, &len, err, sizeof(err)));
    EXPECT_NE(nullptr, strstr(err, "readable by it alone")) << err;

    ASSERT_EQ(0, chmod(path, 0600));
    fd = open(path, O_WRONLY | O_TRUNC);
    ASSERT_EQ(5, write(fd, "short", 5));
    close(fd);
    EXPECT_EQ(PS_ERR_INVALID, ps_key_file_load(path, key, &len, err, sizeof(err)));
    unlink(path);
    EXPECT_EQ(PS_ERR_NOT_CONFIGURED, ps_key_file_load(path, key, &len, err, sizeof(err)));
}

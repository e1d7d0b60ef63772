/* Status codes: numbers pinned (they travel on the wire), strings, errno map. */
#include <gtest/gtest.h>

#include <cerrno>
#include <set>
#include <string>

#include "ps_status.h"

TEST(status, wire_numbers_are_pinned)
{
    EXPECT_EQ(0, PS_OK);
    EXPECT_EQ(-1, PS_ERR_NO_MEMORY);
    EXPECT_EQ(-2, PS_ERR_INVALID);
    EXPECT_EQ(-3, PS_ERR_IO);
    EXPECT_EQ(-4, PS_ERR_NO_ENTRY);
    EXPECT_EQ(-5, PS_ERR_EXISTS);
    EXPECT_EQ(-6, PS_ERR_ACCESS);
    EXPECT_EQ(-7, PS_ERR_NO_SPACE);
    EXPECT_EQ(-8, PS_ERR_PROTO);
    EXPECT_EQ(-9, PS_ERR_TIMEOUT);
    EXPECT_EQ(-10, PS_ERR_CONN);
    EXPECT_EQ(-11, PS_ERR_UNSUPPORTED);
    EXPECT_EQ(-12, PS_ERR_TOO_BIG);
    EXPECT_EQ(-13, PS_ERR_NAME_TOO_LONG);
    EXPECT_EQ(-14, PS_ERR_NOT_CONFIGURED);
    EXPECT_EQ(-15, PS_ERR_SHUTDOWN);
    EXPECT_EQ(-16, PS_ERR_BUSY);
    EXPECT_EQ(-17, PS_ERR_CANCELED);
    EXPECT_EQ(-18, PS_ERR_WRONG_WORKER);
    EXPECT_EQ(-19, PS_ERR_FILE_TOO_LARGE);
    EXPECT_EQ(-20, PS_ERR_STALE);
    EXPECT_EQ(-21, PS_ERR_BAD_NAME);
    EXPECT_EQ(-22, PS_ERR_LAST);
}

TEST(status, every_code_has_its_own_string)
{
    std::set<std::string> seen;

    for (int s = 0; s > PS_ERR_LAST; s--) {
        std::string str = ps_status_string(s);
        EXPECT_NE("unknown status", str) << "status " << s;
        EXPECT_TRUE(seen.insert(str).second) << "duplicate string '" << str << "'";
    }
    EXPECT_STREQ("unknown status", ps_status_string(PS_ERR_LAST));
    EXPECT_STREQ("unknown status", ps_status_string(1));
    EXPECT_STREQ("unknown status", ps_status_string(-1000));
}

TEST(status, from_errno)
{
    EXPECT_EQ(PS_OK, ps_status_from_errno(0));
    EXPECT_EQ(PS_ERR_NO_MEMORY, ps_status_from_errno(ENOMEM));
    EXPECT_EQ(PS_ERR_INVALID, ps_status_from_errno(EINVAL));
    EXPECT_EQ(PS_ERR_NO_ENTRY, ps_status_from_errno(ENOENT));
    EXPECT_EQ(PS_ERR_EXISTS, ps_status_from_errno(EEXIST));
    EXPECT_EQ(PS_ERR_ACCESS, ps_status_from_errno(EACCES));
    EXPECT_EQ(PS_ERR_ACCESS, ps_status_from_errno(EPERM));
    EXPECT_EQ(PS_ERR_ACCESS, ps_status_from_errno(EROFS));
    EXPECT_EQ(PS_ERR_NO_SPACE, ps_status_from_errno(ENOSPC));
    EXPECT_EQ(PS_ERR_NO_SPACE, ps_status_from_errno(EDQUOT));
    EXPECT_EQ(PS_ERR_NAME_TOO_LONG, ps_status_from_errno(ENAMETOOLONG));
    EXPECT_EQ(PS_ERR_TIMEOUT, ps_status_from_errno(ETIMEDOUT));
    EXPECT_EQ(PS_ERR_CONN, ps_status_from_errno(ECONNREFUSED));
    EXPECT_EQ(PS_ERR_CONN, ps_status_from_errno(ECONNRESET));
    EXPECT_EQ(PS_ERR_CONN, ps_status_from_errno(EPIPE));
    EXPECT_EQ(PS_ERR_FILE_TOO_LARGE, ps_status_from_errno(EFBIG));
    EXPECT_EQ(PS_ERR_STALE, ps_status_from_errno(ESTALE));
    EXPECT_EQ(PS_ERR_BUSY, ps_status_from_errno(EBUSY));
    EXPECT_EQ(PS_ERR_BUSY, ps_status_from_errno(EAGAIN));
    EXPECT_EQ(PS_ERR_UNSUPPORTED, ps_status_from_errno(ENOTSUP));
    EXPECT_EQ(PS_ERR_IO, ps_status_from_errno(EIO));
    EXPECT_EQ(PS_ERR_IO, ps_status_from_errno(EXDEV)); /* anything else */
}

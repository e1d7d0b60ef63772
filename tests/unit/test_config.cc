/*
 * Tunables: defaults, parsers, every error message, INI files (written to a
 * temporary directory under the current directory, which `make check` sets
 * to the build tree), environment overrides, and print -> load round trips.
 */
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ps_config.h"
#include "ps_log.h"
#include "ps_status.h"

namespace {

struct test_conf {
    int64_t count;
    uint64_t buffer_size;
    double timeout;
    int direct;
    char *servers;
    int log_level;
    uint64_t max_bytes;
    int64_t offset;
};

const ps_config_field_t table[] = {
    {"count", "16", "number of buffers", PS_CFG_INT, offsetof(test_conf, count), 1, 1024},
    {"buffer_size", "4m", "bytes per buffer", PS_CFG_SIZE, offsetof(test_conf, buffer_size), 4096,
     1 << 30},
    {"timeout", "30s", "request timeout", PS_CFG_TIME, offsetof(test_conf, timeout), 0.001, 3600},
    {"direct", "yes", "use O_DIRECT", PS_CFG_BOOL, offsetof(test_conf, direct), 0, 0},
    {"servers", "", "host:port list", PS_CFG_STRING, offsetof(test_conf, servers), 0, 0},
    {"log_level", "warn", "log level", PS_CFG_LOGLEVEL, offsetof(test_conf, log_level), 0, 0},
    {"max_bytes", "1g", "no range given", PS_CFG_SIZE, offsetof(test_conf, max_bytes), 0, 0},
    {"offset", "-5", "min > max: no range", PS_CFG_INT, offsetof(test_conf, offset), 1, 0},
    {NULL, NULL, NULL, PS_CFG_INT, 0, 0, 0},
};

std::string fmt(const char *name, const test_conf &c)
{
    char buf[512];
    const ps_config_field_t *f = ps_config_find(table, name);
    EXPECT_NE(nullptr, f) << name;
    if (f == NULL || ps_config_format(f, &c, buf, sizeof(buf)) != PS_OK) {
        return "<format failed>";
    }
    return buf;
}

class config : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ASSERT_EQ(PS_OK, ps_config_set_defaults(table, &m_conf));
        char tmpl[] = "ps-unit-config-XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl)) << "mkdtemp in " << get_current_dir_name();
        m_dir = tmpl;
    }

    void TearDown() override
    {
        ps_config_release(table, &m_conf);
        for (const std::string &f : m_files) {
            unlink(f.c_str());
        }
        rmdir(m_dir.c_str());
    }

    std::string write_file(const std::string &name, const std::string &text)
    {
        std::string path = m_dir + "/" + name;
        std::ofstream(path) << text;
        m_files.push_back(path);
        return path;
    }

    /* set and return the error message ("" on success) */
    std::string set_err(const char *name, const char *value, int *ret = NULL)
    {
        char err[1024] = "";
        int r = ps_config_set(table, &m_conf, name, value, err, sizeof(err));
        if (ret) {
            *ret = r;
        }
        return r == PS_OK ? "" : err;
    }

    test_conf m_conf;
    std::string m_dir;
    std::vector<std::string> m_files;
};

} // namespace

TEST_F(config, defaults)
{
    EXPECT_EQ(16, m_conf.count);
    EXPECT_EQ(4u << 20, m_conf.buffer_size);
    EXPECT_DOUBLE_EQ(30.0, m_conf.timeout);
    EXPECT_EQ(1, m_conf.direct);
    ASSERT_NE(nullptr, m_conf.servers);
    EXPECT_STREQ("", m_conf.servers);
    EXPECT_EQ(PS_LOG_WARN, m_conf.log_level);
    EXPECT_EQ(1u << 30, m_conf.max_bytes);
    EXPECT_EQ(-5, m_conf.offset);

    EXPECT_EQ("16", fmt("count", m_conf));
    EXPECT_EQ("4m", fmt("buffer_size", m_conf));
    EXPECT_EQ("30s", fmt("timeout", m_conf));
    EXPECT_EQ("yes", fmt("direct", m_conf));
    EXPECT_EQ("", fmt("servers", m_conf));
    EXPECT_EQ("warn", fmt("log_level", m_conf));
    EXPECT_EQ("1g", fmt("max_bytes", m_conf));
    EXPECT_EQ("-5", fmt("offset", m_conf));
}

TEST_F(config, bad_default_is_reported)
{
    const ps_config_field_t bad[] = {
        {"size", "4q", "bad default", PS_CFG_SIZE, 0, 0, 0},
        {NULL, NULL, NULL, PS_CFG_INT, 0, 0, 0},
    };
    uint64_t v;
    int saved = ps_log_level;
    ps_log_set_level((ps_log_level_t)-1); /* keep the expected error out of the output */
    EXPECT_EQ(PS_ERR_INVALID, ps_config_set_defaults(bad, &v));
    ps_log_set_level((ps_log_level_t)saved);
}

TEST_F(config, set_values)
{
    EXPECT_EQ("", set_err("count", "1024"));
    EXPECT_EQ(1024, m_conf.count);
    EXPECT_EQ("", set_err("count", "+7"));
    EXPECT_EQ(7, m_conf.count);
    EXPECT_EQ("", set_err("buffer_size", "512k"));
    EXPECT_EQ(512u << 10, m_conf.buffer_size);
    EXPECT_EQ("", set_err("buffer_size", "1G"));
    EXPECT_EQ(1u << 30, m_conf.buffer_size);
    EXPECT_EQ("", set_err("buffer_size", "4096"));
    EXPECT_EQ(4096u, m_conf.buffer_size);
    EXPECT_EQ("", set_err("buffer_size", "2MiB"));
    EXPECT_EQ(2u << 20, m_conf.buffer_size);
    EXPECT_EQ("", set_err("timeout", "500ms"));
    EXPECT_DOUBLE_EQ(0.5, m_conf.timeout);
    EXPECT_EQ("500ms", fmt("timeout", m_conf));
    EXPECT_EQ("", set_err("timeout", "2m"));
    EXPECT_DOUBLE_EQ(120, m_conf.timeout);
    EXPECT_EQ("", set_err("timeout", "1.5"));
    EXPECT_DOUBLE_EQ(1.5, m_conf.timeout);
    EXPECT_EQ("1500ms", fmt("timeout", m_conf));
    EXPECT_EQ("", set_err("direct", "off"));
    EXPECT_EQ(0, m_conf.direct);
    EXPECT_EQ("no", fmt("direct", m_conf));
    EXPECT_EQ("", set_err("direct", "TRUE"));
    EXPECT_EQ(1, m_conf.direct);
    EXPECT_EQ("", set_err("servers", "a:1,b:2"));
    EXPECT_STREQ("a:1,b:2", m_conf.servers);
    EXPECT_EQ("", set_err("log_level", "TRACE"));
    EXPECT_EQ(PS_LOG_TRACE, m_conf.log_level);
    EXPECT_EQ("", set_err("max_bytes", "8e"));
    EXPECT_EQ(8ull << 60, m_conf.max_bytes);
    EXPECT_EQ("", set_err("max_bytes", "0"));
    EXPECT_EQ(0u, m_conf.max_bytes);
    EXPECT_EQ("", set_err("offset", "-9223372036854775808"));
    EXPECT_EQ(INT64_MIN, m_conf.offset);
}

TEST_F(config, error_messages)
{
    struct {
        const char *name, *value, *msg;
    } cases[] = {
        {"nope", "1", "unknown key 'nope'"},
        {"count", "abc", "count: 'abc' is not an integer"},
        {"count", "12x", "count: '12x' is not an integer"},
        {"count", "", "count: '' is not an integer"},
        {"count", " 5", "count: ' 5' is not an integer"},
        {"count", "0x10", "count: '0x10' is not an integer"},
        {"count", "0", "count: '0' is out of range (1..1024)"},
        {"count", "1025", "count: '1025' is out of range (1..1024)"},
        {"count", "-3", "count: '-3' is out of range (1..1024)"},
        {"count", "99999999999999999999", "count: '99999999999999999999' does not fit in 64 bits"},
        {"offset", "9223372036854775808", "offset: '9223372036854775808' does not fit in 64 bits"},
        {"offset", "-9223372036854775809",
         "offset: '-9223372036854775809' does not fit in 64 bits"},
        {"buffer_size", "4x", "buffer_size: '4x' is not a size (e.g. 4m)"},
        {"buffer_size", "-1", "buffer_size: '-1' is not a size (e.g. 4m)"},
        {"buffer_size", "1.5m", "buffer_size: '1.5m' is not a size (e.g. 4m)"},
        {"buffer_size", "m", "buffer_size: 'm' is not a size (e.g. 4m)"},
        {"buffer_size", "4mm", "buffer_size: '4mm' is not a size (e.g. 4m)"},
        {"buffer_size", "2g", "buffer_size: '2g' is out of range (4k..1g)"},
        {"buffer_size", "1k", "buffer_size: '1k' is out of range (4k..1g)"},
        {"max_bytes", "16e", "max_bytes: '16e' is too large"},
        {"max_bytes", "18446744073709551616", "max_bytes: '18446744073709551616' is too large"},
        {"max_bytes", "99999999999999999999999k",
         "max_bytes: '99999999999999999999999k' is too large"},
        {"max_bytes", "99999999999999999999999x",
         "max_bytes: '99999999999999999999999x' is not a size (e.g. 4m)"},
        {"timeout", "soon", "timeout: 'soon' is not a time (e.g. 30s, 500ms)"},
        {"timeout", "-1s", "timeout: '-1s' is not a time (e.g. 30s, 500ms)"},
        {"timeout", "5 s", "timeout: '5 s' is not a time (e.g. 30s, 500ms)"},
        {"timeout", "1e3", "timeout: '1e3' is not a time (e.g. 30s, 500ms)"},
        {"timeout", "inf", "timeout: 'inf' is not a time (e.g. 30s, 500ms)"},
        {"timeout", "nan", "timeout: 'nan' is not a time (e.g. 30s, 500ms)"},
        {"timeout", "0x10", "timeout: '0x10' is not a time (e.g. 30s, 500ms)"},
        {"timeout", "5d", "timeout: '5d' is not a time (e.g. 30s, 500ms)"},
        {"timeout", ".", "timeout: '.' is not a time (e.g. 30s, 500ms)"},
        {"timeout", "2h", "timeout: '2h' is out of range (1ms..1h)"},
        {"timeout", "0", "timeout: '0' is out of range (1ms..1h)"},
        {"timeout", "999us", "timeout: '999us' is out of range (1ms..1h)"},
        {"direct", "maybe", "direct: 'maybe' is not a boolean (yes/no, true/false, on/off, 1/0)"},
        {"direct", "", "direct: '' is not a boolean (yes/no, true/false, on/off, 1/0)"},
        {"log_level", "loud",
         "log_level: 'loud' is not a log level (error, warn, info, debug, trace)"},
    };
    std::string too_long_time(400, '9');
    too_long_time += "h";

    for (auto &c : cases) {
        int ret;
        std::vector<std::string> before;
        for (const ps_config_field_t *f = table; f->name; f++) {
            before.push_back(fmt(f->name, m_conf));
        }
        EXPECT_EQ(c.msg, set_err(c.name, c.value, &ret)) << c.name << "=" << c.value;
        EXPECT_EQ(PS_ERR_INVALID, ret);
        /* a rejected value leaves every field as it was */
        size_t i = 0;
        for (const ps_config_field_t *f = table; f->name; f++, i++) {
            EXPECT_EQ(before[i], fmt(f->name, m_conf)) << c.name << "=" << c.value;
        }
    }
    EXPECT_EQ("timeout: '" + too_long_time + "' is too large",
              set_err("timeout", too_long_time.c_str()));
    EXPECT_EQ("count: no value", set_err("count", NULL));

    /* a NULL or short err buffer is fine */
    EXPECT_EQ(PS_ERR_INVALID, ps_config_set(table, &m_conf, "count", "x", NULL, 0));
    char small[8];
    EXPECT_EQ(PS_ERR_INVALID, ps_config_set(table, &m_conf, "count", "x", small, sizeof(small)));
    EXPECT_STREQ("count: ", small);
}

TEST(config_parse, size)
{
    struct {
        const char *in;
        uint64_t out;
    } good[] = {
        {"0", 0},
        {"4096", 4096},
        {"512k", 512 << 10},
        {"512K", 512 << 10},
        {"4m", 4 << 20},
        {"4MB", 4 << 20},
        {"4MiB", 4 << 20},
        {"1g", 1ull << 30},
        {"3t", 3ull << 40},
        {"2p", 2ull << 50},
        {"15e", 15ull << 60},
        {"100b", 100},
        {"18446744073709551615", UINT64_MAX},
        {"0k", 0},
    };
    for (auto &g : good) {
        uint64_t v = 1;
        EXPECT_EQ(PS_OK, ps_parse_size(g.in, &v)) << g.in;
        EXPECT_EQ(g.out, v) << g.in;
    }
    for (const char *bad : {"", "k", "-1", "+1", " 1", "1 ", "1.0", "1x", "1kk", "1kib2", "0x10",
                            "1ki", "16e", "18446744073709551616", "1bb"}) {
        uint64_t v = 7;
        EXPECT_EQ(PS_ERR_INVALID, ps_parse_size(bad, &v)) << bad;
        EXPECT_EQ(7u, v) << bad;
    }
    uint64_t v;
    EXPECT_EQ(PS_ERR_INVALID, ps_parse_size(NULL, &v));
}

TEST(config_parse, format_size)
{
    struct {
        uint64_t in;
        const char *out;
    } cases[] = {
        {0, "0"},
        {100, "100"},
        {1023, "1023"},
        {1024, "1k"},
        {1536, "1536"},
        {3072, "3k"},
        {1536 * 1024, "1536k"},
        {4 << 20, "4m"},
        {1ull << 30, "1g"},
        {5ull << 40, "5t"},
        {1ull << 50, "1p"},
        {1ull << 60, "1e"},
        {UINT64_MAX, "18446744073709551615"},
    };
    for (auto &c : cases) {
        char buf[32];
        ps_format_size(c.in, buf, sizeof(buf));
        EXPECT_STREQ(c.out, buf) << c.in;
        uint64_t back;
        EXPECT_EQ(PS_OK, ps_parse_size(buf, &back));
        EXPECT_EQ(c.in, back);
    }
}

TEST(config_parse, time)
{
    struct {
        const char *in;
        double out;
    } good[] = {
        {"30", 30},        {"30s", 30},    {"500ms", 0.5}, {"100us", 1e-4},
        {"250ns", 2.5e-7}, {"2m", 120},    {"2min", 120},  {"1h", 3600},
        {"0.5", 0.5},      {".25s", 0.25}, {"1.", 1},      {"0", 0},
    };
    for (auto &g : good) {
        double v = -1;
        EXPECT_EQ(PS_OK, ps_parse_time(g.in, &v)) << g.in;
        EXPECT_DOUBLE_EQ(g.out, v) << g.in;
    }
    for (const char *bad : {"", "s", "-1", "+1", "1 s", "1e3", "1e3s", "inf", "nan", "0x1p3", "1S",
                            "1sec", "1.2.3", "5d", "1hh"}) {
        double v = 7;
        EXPECT_EQ(PS_ERR_INVALID, ps_parse_time(bad, &v)) << bad;
        EXPECT_EQ(7, v) << bad;
    }
}

TEST(config_parse, boolean)
{
    for (const char *yes : {"yes", "YES", "true", "True", "on", "1"}) {
        int v = 0;
        EXPECT_EQ(PS_OK, ps_parse_bool(yes, &v)) << yes;
        EXPECT_EQ(1, v) << yes;
    }
    for (const char *no : {"no", "false", "OFF", "0"}) {
        int v = 1;
        EXPECT_EQ(PS_OK, ps_parse_bool(no, &v)) << no;
        EXPECT_EQ(0, v) << no;
    }
    for (const char *bad : {"", "y", "n", "2", "yess", "enabled"}) {
        int v = 5;
        EXPECT_EQ(PS_ERR_INVALID, ps_parse_bool(bad, &v)) << bad;
        EXPECT_EQ(5, v);
    }
}

TEST_F(config, format_time_units)
{
    struct {
        const char *in, *out;
    } cases[] = {
        {"30s", "30s"}, {"0.5", "500ms"},  {"120", "2m"},   {"1000us", "1ms"}, {"3600", "1h"},
        {"90", "90s"},  {"1.5", "1500ms"}, {"3600s", "1h"}, {"0.001", "1ms"},
    };
    for (auto &c : cases) {
        EXPECT_EQ("", set_err("timeout", c.in));
        EXPECT_EQ(c.out, fmt("timeout", m_conf)) << c.in;
    }
    m_conf.timeout = 1e-4; /* below the range: only for formatting */
    EXPECT_EQ("100us", fmt("timeout", m_conf));
    m_conf.timeout = 2.5e-7;
    EXPECT_EQ("250ns", fmt("timeout", m_conf));
    m_conf.timeout = 0;
    EXPECT_EQ("0s", fmt("timeout", m_conf));
}

TEST_F(config, find_format_release)
{
    EXPECT_EQ(&table[1], ps_config_find(table, "buffer_size"));
    EXPECT_EQ(nullptr, ps_config_find(table, "Buffer_Size"));
    EXPECT_EQ(nullptr, ps_config_find(table, "nope"));
    EXPECT_EQ(nullptr, ps_config_find(table, NULL));

    char buf[3];
    EXPECT_EQ(PS_ERR_INVALID, ps_config_format(&table[0], &m_conf, buf, 2)) << "'16' needs 3";
    EXPECT_EQ(PS_OK, ps_config_format(&table[0], &m_conf, buf, 3));
    EXPECT_EQ(PS_ERR_INVALID, ps_config_format(&table[1], &m_conf, buf, 2)) << "'4m' needs 3";
    EXPECT_EQ(PS_ERR_INVALID, ps_config_format(&table[2], &m_conf, buf, 3)) << "'30s' needs 4";
    EXPECT_LT(strlen(buf), 3u);

    ASSERT_EQ("", set_err("servers", "x:1"));
    ps_config_release(table, &m_conf);
    EXPECT_EQ(nullptr, m_conf.servers);
    ps_config_release(table, &m_conf); /* twice is fine */
}

TEST_F(config, load_file)
{
    std::string path =
        write_file("client.conf", "; pstripe test configuration\n"
                                  "# comment\n"
                                  "count = 1\n" /* before any section: not [client] */
                                  "\n"
                                  "[client]\n"
                                  "count = 32\n"
                                  "buffer_size = 8m ; inline comment\n"
                                  "timeout=2m\n"
                                  "servers = host1:1234,host2:1234\n"
                                  "count = 33\n" /* the later one wins */
                                  "[server]\n"
                                  "count = 999999\n"
                                  "not_a_client_key = 1\n"
                                  "[client]\n"
                                  "log_level = debug"); /* no final newline */
    char err[512] = "";
    ASSERT_EQ(PS_OK, ps_config_load_file(table, &m_conf, path.c_str(), "client", err, sizeof(err)))
        << err;
    EXPECT_EQ(33, m_conf.count);
    EXPECT_EQ(8u << 20, m_conf.buffer_size);
    EXPECT_DOUBLE_EQ(120, m_conf.timeout);
    EXPECT_STREQ("host1:1234,host2:1234", m_conf.servers);
    EXPECT_EQ(PS_LOG_DEBUG, m_conf.log_level);
    EXPECT_EQ(1, m_conf.direct) << "unset keys keep their default";

    /* [server] has a value out of range for this table, and a key it lacks */
    EXPECT_EQ(PS_ERR_INVALID,
              ps_config_load_file(table, &m_conf, path.c_str(), "server", err, sizeof(err)));
    EXPECT_EQ(path + ":12: count: '999999' is out of range (1..1024)", std::string(err));

    /* no section: the keys before the first [section] */
    test_conf top;
    ASSERT_EQ(PS_OK, ps_config_set_defaults(table, &top));
    ASSERT_EQ(PS_OK, ps_config_load_file(table, &top, path.c_str(), NULL, err, sizeof(err)));
    EXPECT_EQ(1, top.count);
    ps_config_release(table, &top);
}

TEST_F(config, load_file_errors)
{
    char err[512] = "";
    std::string missing = m_dir + "/missing.conf";
    EXPECT_EQ(PS_ERR_NO_ENTRY,
              ps_config_load_file(table, &m_conf, missing.c_str(), "client", err, sizeof(err)));
    EXPECT_EQ("open " + missing + ": No such file or directory", std::string(err));

    /* each bad file fails and says where ("<path>:<line>: ") and why */
    const struct {
        const char *name, *text, *error;
    } bad[] = {
        {"unknown.conf", "[client]\ncount = 2\nbogus = 1\n", "3: unknown key 'bogus' in [client]"},
        {"syntax.conf", "[client]\ncount = 2\nthis line has no equals sign\n",
         "3: syntax error (expected '[section]' or 'name = value')"},
        {"section.conf", "[client\ncount = 2\n",
         "1: syntax error (expected '[section]' or 'name = value')"},
        {"value.conf", "[client]\n\n\nbuffer_size = 4 m\n",
         "4: buffer_size: '4 m' is not a size (e.g. 4m)"},
    };
    std::string p;
    for (const auto &b : bad) {
        p = write_file(b.name, b.text);
        EXPECT_EQ(PS_ERR_INVALID,
                  ps_config_load_file(table, &m_conf, p.c_str(), "client", err, sizeof(err)))
            << b.name;
        EXPECT_EQ(p + ":" + b.error, std::string(err));
    }

    /* a line longer than inih's buffer is an error, not silently cut */
    std::string servers(1000, 'h');
    p = write_file("long.conf", "[client]\nservers = " + servers + "\ncount = 3\n");
    EXPECT_EQ(PS_ERR_INVALID,
              ps_config_load_file(table, &m_conf, p.c_str(), "client", err, sizeof(err)));
    EXPECT_EQ(0u, std::string(err).find(p + ":2: line longer than ")) << err;
    EXPECT_STRNE(servers.c_str(), m_conf.servers);

    /* a line just under the limit is fine */
    std::string fits = "servers = " + std::string(150, 's');
    p = write_file("fits.conf", "[client]\n" + fits + "\n");
    EXPECT_EQ(PS_OK, ps_config_load_file(table, &m_conf, p.c_str(), "client", err, sizeof(err)))
        << err;
    EXPECT_EQ(std::string(150, 's'), m_conf.servers);
}

TEST_F(config, env_override)
{
    char err[256] = "";
    setenv("PSTRIPE_BUFFER_SIZE", "16m", 1);
    setenv("PSTRIPE_LOG_LEVEL", "info", 1);
    setenv("PSTRIPE_SERVERS", "10.0.0.1:7000", 1);
    setenv("PSTRIPE_buffer_size", "1k", 1); /* the name is upper-cased */
    EXPECT_EQ(PS_OK, ps_config_load_env(table, &m_conf, err, sizeof(err))) << err;
    EXPECT_EQ(16u << 20, m_conf.buffer_size);
    EXPECT_EQ(PS_LOG_INFO, m_conf.log_level);
    EXPECT_STREQ("10.0.0.1:7000", m_conf.servers);
    EXPECT_EQ(16, m_conf.count) << "unset variables change nothing";

    setenv("PSTRIPE_COUNT", "abc", 1);
    EXPECT_EQ(PS_ERR_INVALID, ps_config_load_env(table, &m_conf, err, sizeof(err)));
    EXPECT_STREQ("environment PSTRIPE_COUNT: 'abc' is not an integer", err);

    for (const char *v : {"PSTRIPE_BUFFER_SIZE", "PSTRIPE_LOG_LEVEL", "PSTRIPE_SERVERS",
                          "PSTRIPE_buffer_size", "PSTRIPE_COUNT"}) {
        unsetenv(v);
    }
}

TEST_F(config, sources_override_in_order)
{
    char err[256] = "";
    std::string p = write_file("order.conf", "[client]\ncount = 100\nbuffer_size = 64k\n");
    ASSERT_EQ(PS_OK, ps_config_load_file(table, &m_conf, p.c_str(), "client", err, sizeof(err)));
    setenv("PSTRIPE_COUNT", "200", 1);
    ASSERT_EQ(PS_OK, ps_config_load_env(table, &m_conf, err, sizeof(err)));
    unsetenv("PSTRIPE_COUNT");
    ASSERT_EQ("", set_err("buffer_size", "128k"));
    EXPECT_EQ(200, m_conf.count);
    EXPECT_EQ(128u << 10, m_conf.buffer_size);
    EXPECT_DOUBLE_EQ(30, m_conf.timeout);
}

TEST_F(config, print_then_load_round_trip)
{
    const char *settings[][2] = {
        {"count", "77"},        {"buffer_size", "1536k"},   {"timeout", "250ms"},
        {"direct", "off"},      {"servers", "a:1,b:2,c:3"}, {"log_level", "trace"},
        {"max_bytes", "12345"}, {"offset", "-42"},
    };
    for (auto &s : settings) {
        ASSERT_EQ("", set_err(s[0], s[1]));
    }

    std::string path = m_dir + "/printed.conf";
    m_files.push_back(path);
    FILE *f = fopen(path.c_str(), "w");
    ASSERT_NE(nullptr, f);
    ps_config_print(table, &m_conf, "client", f);
    fclose(f);

    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(0u, text.str().find("[client]\n")) << text.str();
    EXPECT_NE(std::string::npos, text.str().find("# number of buffers (default: 16)\ncount = 77\n"))
        << text.str();
    EXPECT_NE(std::string::npos, text.str().find("# host:port list (default: none)\nservers = "))
        << text.str();

    test_conf back;
    char err[256] = "";
    ASSERT_EQ(PS_OK, ps_config_set_defaults(table, &back));
    ASSERT_EQ(PS_OK, ps_config_load_file(table, &back, path.c_str(), "client", err, sizeof(err)))
        << err << "\n"
        << text.str();
    for (const ps_config_field_t *fld = table; fld->name; fld++) {
        EXPECT_EQ(fmt(fld->name, m_conf), fmt(fld->name, back)) << fld->name;
    }
    EXPECT_EQ(m_conf.count, back.count);
    EXPECT_EQ(m_conf.buffer_size, back.buffer_size);
    EXPECT_DOUBLE_EQ(m_conf.timeout, back.timeout);
    EXPECT_STREQ(m_conf.servers, back.servers);
    ps_config_release(table, &back);

    /* the defaults round-trip too */
    test_conf d1, d2;
    ASSERT_EQ(PS_OK, ps_config_set_defaults(table, &d1));
    ASSERT_EQ(PS_OK, ps_config_set_defaults(table, &d2));
    f = fopen(path.c_str(), "w");
    ps_config_print(table, &d1, "client", f);
    fclose(f);
    ASSERT_EQ(PS_OK, ps_config_load_file(table, &d2, path.c_str(), "client", err, sizeof(err)))
        << err;
    for (const ps_config_field_t *fld = table; fld->name; fld++) {
        EXPECT_EQ(fmt(fld->name, d1), fmt(fld->name, d2)) << fld->name;
    }
    ps_config_release(table, &d1);
    ps_config_release(table, &d2);
}

/*
 * ps_config.c: tunables declared in tables (see ps_config.h).
 *
 * Every source of settings (defaults, the INI file, the environment, explicit
 * name=value pairs) goes through one function, ps_config_apply(), which
 * parses the string for the field's type, checks the range, and only then
 * stores the value, so a rejected setting leaves the field as it was. Error
 * messages name where the bad value came from ("client.conf:3: buffer_size",
 * "environment PSTRIPE_BUFFER_SIZE") and say what was expected.
 */
#include "ps_config.h"
#include "ps_log.h"
#include "ps_status.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PS_CONFIG_ENV_PREFIX "PSTRIPE_"

static __attribute__((format(printf, 3, 4))) void ps_config_err(char *err, size_t errlen,
                                                                const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- parsers -------------------------------------------------------------- */

typedef enum {
    PS_PARSE_OK,
    PS_PARSE_SYNTAX,  /* not a number of this kind */
    PS_PARSE_OVERFLOW /* well formed, but does not fit */
} ps_parse_result_t;

/* Decimal digits, then an optional binary unit k/m/g/t/p/e (any case),
 * optionally followed by "b" or "ib" ("4m", "4M", "4MB", "4MiB"), or a
 * bare "b" ("4096b"). No sign, no spaces, no fractions. */
static ps_parse_result_t ps_parse_size_ex(const char *str, uint64_t *value)
{
    const char *p = str;
    uint64_t v = 0;
    unsigned shift = 0;

    if (str == NULL || !isdigit((unsigned char)*p)) {
        return PS_PARSE_SYNTAX;
    }
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) {
            /* keep scanning so "99999999999999999999x" is a syntax error */
            while (isdigit((unsigned char)*p)) {
                p++;
            }
            return *p == '\0' || strchr("kKmMgGtTpPeEbB", *p) ? PS_PARSE_OVERFLOW : PS_PARSE_SYNTAX;
        }
        v = v * 10 + d;
    }

    switch (tolower((unsigned char)*p)) {
    case 'k':
        shift = 10;
        break;
    case 'm':
        shift = 20;
        break;
    case 'g':
        shift = 30;
        break;
    case 't':
        shift = 40;
        break;
    case 'p':
        shift = 50;
        break;
    case 'e':
        shift = 60;
        break;
    default:
        break;
    }
    if (shift != 0) {
        p++;
        if (tolower((unsigned char)p[0]) == 'i' && tolower((unsigned char)p[1]) == 'b') {
            p += 2;
        } else if (tolower((unsigned char)p[0]) == 'b') {
            p++;
        }
    } else if (tolower((unsigned char)*p) == 'b') {
        p++;
    }
    if (*p != '\0') {
        return PS_PARSE_SYNTAX;
    }
    if (shift != 0 && v > (UINT64_MAX >> shift)) {
        return PS_PARSE_OVERFLOW;
    }
    *value = v << shift;
    return PS_PARSE_OK;
}

ps_status_t ps_parse_size(const char *str, uint64_t *value)
{
    return ps_parse_size_ex(str, value) == PS_PARSE_OK ? PS_OK : PS_ERR_INVALID;
}

/* snprintf-like: returns the length the full text needs. */
static int ps_format_size_n(uint64_t value, char *buf, size_t len)
{
    static const char units[] = "kmgtpe";

    for (int i = 5; i >= 0; i--) {
        uint64_t unit = 1ull << (10 * (i + 1));
        if (value != 0 && value % unit == 0) {
            return snprintf(buf, len, "%" PRIu64 "%c", value / unit, units[i]);
        }
    }
    return snprintf(buf, len, "%" PRIu64, value);
}

void ps_format_size(uint64_t value, char *buf, size_t len)
{
    ps_format_size_n(value, buf, len);
}

/* A decimal number ("30", "0.5", ".5") and a unit: none or "s" for seconds,
 * "ms", "us", "ns", "m" or "min", "h". No sign, exponent, hex, inf or nan:
 * the number is scanned by hand and strtod() must stop where the scan did. */
static ps_parse_result_t ps_parse_time_ex(const char *str, double *seconds)
{
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {{"", 1},      {"s", 1},  {"ms", 1e-3}, {"us", 1e-6},
                 {"ns", 1e-9}, {"m", 60}, {"min", 60},  {"h", 3600}};
    const char *p = str;
    char *end;
    int digits = 0;
    double v;

    if (str == NULL) {
        return PS_PARSE_SYNTAX;
    }
    for (; isdigit((unsigned char)*p); p++) {
        digits++;
    }
    if (*p == '.') {
        for (p++; isdigit((unsigned char)*p); p++) {
            digits++;
        }
    }
    if (digits == 0) {
        return PS_PARSE_SYNTAX;
    }
    v = strtod(str, &end);
    if (end != p) {
        return PS_PARSE_SYNTAX;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(p, units[i].suffix) == 0) {
            v *= units[i].mult;
            if (!isfinite(v)) {
                return PS_PARSE_OVERFLOW;
            }
            *seconds = v;
            return PS_PARSE_OK;
        }
    }
    return PS_PARSE_SYNTAX;
}

ps_status_t ps_parse_time(const char *str, double *seconds)
{
    return ps_parse_time_ex(str, seconds) == PS_PARSE_OK ? PS_OK : PS_ERR_INVALID;
}

/* Largest exact unit, to the nanosecond: "2m", "30s", "500ms", "100us". */
static int ps_format_time(double seconds, char *buf, size_t len)
{
    static const struct {
        const char *suffix;
        uint64_t ns;
    } units[] = {{"h", 3600000000000ull}, {"m", 60000000000ull}, {"s", 1000000000ull},
                 {"ms", 1000000ull},      {"us", 1000ull},       {"ns", 1ull}};
    double ns = seconds * 1e9;
    uint64_t n;

    if (!(ns >= 0) || ns >= 1.8e19) { /* negative, NaN, or beyond uint64 ns */
        return snprintf(buf, len, "%.0fs", seconds);
    }
    n = (uint64_t)(ns + 0.5);
    if (n == 0) {
        return snprintf(buf, len, "0s");
    }
    for (size_t i = 0;; i++) { /* the last unit, 1 ns, always divides */
        if (n % units[i].ns == 0) {
            return snprintf(buf, len, "%" PRIu64 "%s", n / units[i].ns, units[i].suffix);
        }
    }
}

ps_status_t ps_parse_bool(const char *str, int *value)
{
    static const char *const yes[] = {"yes", "true", "on", "1"};
    static const char *const no[] = {"no", "false", "off", "0"};

    if (str == NULL) {
        return PS_ERR_INVALID;
    }
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(str, yes[i]) == 0) {
            *value = 1;
            return PS_OK;
        }
        if (strcasecmp(str, no[i]) == 0) {
            *value = 0;
            return PS_OK;
        }
    }
    return PS_ERR_INVALID;
}

static ps_parse_result_t ps_parse_int_ex(const char *str, int64_t *value)
{
    const char *p = str;
    char *end;
    long long v;

    if (str == NULL) {
        return PS_PARSE_SYNTAX;
    }
    if (*p == '-' || *p == '+') {
        p++;
    }
    if (!isdigit((unsigned char)*p)) {
        return PS_PARSE_SYNTAX;
    }
    errno = 0;
    v = strtoll(str, &end, 10);
    if (*end != '\0') {
        return PS_PARSE_SYNTAX;
    }
    if (errno == ERANGE) {
        return PS_PARSE_OVERFLOW;
    }
    *value = v;
    return PS_PARSE_OK;
}

/* ---- one field ------------------------------------------------------------ */

static void *ps_config_ptr(const ps_config_field_t *field, void *obj)
{
    return (char *)obj + field->offset;
}

static const void *ps_config_cptr(const ps_config_field_t *field, const void *obj)
{
    return (const char *)obj + field->offset;
}

/* A range is given when min <= max, except the all-zero one that a table
 * entry without min/max initializers gets, which would allow only 0. */
static int ps_config_has_range(const ps_config_field_t *field)
{
    return field->min <= field->max && !(field->min == 0 && field->max == 0);
}

/* Format a range bound in the field's own syntax. */
static void ps_config_format_bound(const ps_config_field_t *field, double bound, char *buf,
                                   size_t len)
{
    switch (field->type) {
    case PS_CFG_SIZE:
        ps_format_size(bound <= 0 ? 0 : (uint64_t)bound, buf, len);
        break;
    case PS_CFG_TIME:
        ps_format_time(bound, buf, len);
        break;
    default:
        snprintf(buf, len, "%.0f", bound);
        break;
    }
}

static ps_status_t ps_config_out_of_range(const ps_config_field_t *field, const char *label,
                                          const char *value, char *err, size_t errlen)
{
    char lo[32], hi[32];

    ps_config_format_bound(field, field->min, lo, sizeof(lo));
    ps_config_format_bound(field, field->max, hi, sizeof(hi));
    ps_config_err(err, errlen, "%s: '%s' is out of range (%s..%s)", label, value, lo, hi);
    return PS_ERR_INVALID;
}

/*
 * Parse value for field and store it in obj; label starts the error message.
 * The field keeps its old value on error.
 */
static ps_status_t ps_config_apply(const ps_config_field_t *field, void *obj, const char *value,
                                   const char *label, char *err, size_t errlen)
{
    void *ptr = ps_config_ptr(field, obj);
    ps_parse_result_t res;

    if (value == NULL) {
        ps_config_err(err, errlen, "%s: no value", label);
        return PS_ERR_INVALID;
    }

    switch (field->type) {
    case PS_CFG_INT: {
        int64_t v = 0;
        res = ps_parse_int_ex(value, &v);
        if (res == PS_PARSE_SYNTAX) {
            ps_config_err(err, errlen, "%s: '%s' is not an integer", label, value);
            return PS_ERR_INVALID;
        }
        if (res == PS_PARSE_OVERFLOW) {
            ps_config_err(err, errlen, "%s: '%s' does not fit in 64 bits", label, value);
            return PS_ERR_INVALID;
        }
        if (ps_config_has_range(field) && ((double)v < field->min || (double)v > field->max)) {
            return ps_config_out_of_range(field, label, value, err, errlen);
        }
        *(int64_t *)ptr = v;
        return PS_OK;
    }
    case PS_CFG_SIZE: {
        uint64_t v = 0;
        res = ps_parse_size_ex(value, &v);
        if (res == PS_PARSE_SYNTAX) {
            ps_config_err(err, errlen, "%s: '%s' is not a size (e.g. 4m)", label, value);
            return PS_ERR_INVALID;
        }
        if (res == PS_PARSE_OVERFLOW) {
            ps_config_err(err, errlen, "%s: '%s' is too large", label, value);
            return PS_ERR_INVALID;
        }
        if (ps_config_has_range(field) && ((double)v < field->min || (double)v > field->max)) {
            return ps_config_out_of_range(field, label, value, err, errlen);
        }
        *(uint64_t *)ptr = v;
        return PS_OK;
    }
    case PS_CFG_TIME: {
        double v = 0;
        res = ps_parse_time_ex(value, &v);
        if (res == PS_PARSE_SYNTAX) {
            ps_config_err(err, errlen, "%s: '%s' is not a time (e.g. 30s, 500ms)", label, value);
            return PS_ERR_INVALID;
        }
        if (res == PS_PARSE_OVERFLOW) {
            ps_config_err(err, errlen, "%s: '%s' is too large", label, value);
            return PS_ERR_INVALID;
        }
        if (ps_config_has_range(field) && (v < field->min || v > field->max)) {
            return ps_config_out_of_range(field, label, value, err, errlen);
        }
        *(double *)ptr = v;
        return PS_OK;
    }
    case PS_CFG_BOOL: {
        int v = 0;
        if (ps_parse_bool(value, &v) != PS_OK) {
            ps_config_err(err, errlen,
                          "%s: '%s' is not a boolean (yes/no, true/false, on/off, 1/0)", label,
                          value);
            return PS_ERR_INVALID;
        }
        *(int *)ptr = v;
        return PS_OK;
    }
    case PS_CFG_STRING: {
        char *copy = strdup(value);
        if (copy == NULL) {
            ps_config_err(err, errlen, "%s: out of memory", label);
            return PS_ERR_NO_MEMORY;
        }
        free(*(char **)ptr);
        *(char **)ptr = copy;
        return PS_OK;
    }
    case PS_CFG_LOGLEVEL: {
        ps_log_level_t level;
        if (ps_log_level_parse(value, &level) != PS_OK) {
            ps_config_err(err, errlen,
                          "%s: '%s' is not a log level (error, warn, info, debug, trace)", label,
                          value);
            return PS_ERR_INVALID;
        }
        *(int *)ptr = (int)level;
        return PS_OK;
    }
    }
    ps_config_err(err, errlen, "%s: field has an unknown type %d", label, (int)field->type);
    return PS_ERR_INVALID;
}

/* ---- tables --------------------------------------------------------------- */

const ps_config_field_t *ps_config_find(const ps_config_field_t *table, const char *name)
{
    if (name == NULL) {
        return NULL;
    }
    for (const ps_config_field_t *f = table; f->name != NULL; f++) {
        if (strcmp(f->name, name) == 0) {
            return f;
        }
    }
    return NULL;
}

/*
 * obj may be uninitialized memory: STRING fields are overwritten, not freed,
 * so call ps_config_release() before setting defaults a second time.
 */
ps_status_t ps_config_set_defaults(const ps_config_field_t *table, void *obj)
{
    char err[256];

    for (const ps_config_field_t *f = table; f->name != NULL; f++) {
        void *ptr = ps_config_ptr(f, obj);
        ps_status_t status;

        switch (f->type) {
        case PS_CFG_INT:
            *(int64_t *)ptr = 0;
            break;
        case PS_CFG_SIZE:
            *(uint64_t *)ptr = 0;
            break;
        case PS_CFG_TIME:
            *(double *)ptr = 0;
            break;
        case PS_CFG_STRING:
            *(char **)ptr = NULL;
            break;
        default:
            *(int *)ptr = 0;
            break;
        }
        if (f->dfl == NULL) {
            continue;
        }
        status = ps_config_apply(f, obj, f->dfl, f->name, err, sizeof(err));
        if (status != PS_OK) {
            ps_error("default of %s", err);
            return status;
        }
    }
    return PS_OK;
}

ps_status_t ps_config_set(const ps_config_field_t *table, void *obj, const char *name,
                          const char *value, char *err, size_t errlen)
{
    const ps_config_field_t *f = ps_config_find(table, name);

    if (f == NULL) {
        ps_config_err(err, errlen, "unknown key '%s'", name ? name : "(null)");
        return PS_ERR_INVALID;
    }
    return ps_config_apply(f, obj, value, f->name, err, errlen);
}

/* ---- INI file ------------------------------------------------------------- */

typedef struct ps_config_file_ctx {
    const ps_config_field_t *table;
    void *obj;
    const char *path;
    const char *section;
    FILE *file;
    int lineno;         /* lines read so far: the line inih is handling */
    ps_status_t status; /* first error, PS_OK if none */
    char *err;
    size_t errlen;
} ps_config_file_ctx_t;

/*
 * Feed inih one line at a time so we know the line number in the handler, and
 * catch lines longer than inih's fixed line buffer (200 bytes by default):
 * inih would otherwise parse the rest of such a line as a new line, and a long
 * `servers` list would be silently cut.
 */
static char *ps_config_reader(char *str, int num, void *stream)
{
    ps_config_file_ctx_t *ctx = stream;
    size_t len;
    int c;

    if (fgets(str, num, ctx->file) == NULL) {
        return NULL;
    }
    ctx->lineno++;
    len = strlen(str);
    if (len == 0 || str[len - 1] == '\n') {
        return str;
    }
    c = fgetc(ctx->file);
    if (c == EOF || c == '\n') {
        return str; /* a last line without newline, or exactly full */
    }
    while (c != EOF && c != '\n') {
        c = fgetc(ctx->file);
    }
    if (ctx->status == PS_OK) {
        ps_config_err(ctx->err, ctx->errlen, "%s:%d: line longer than %d bytes", ctx->path,
                      ctx->lineno, num - 1);
        ctx->status = PS_ERR_INVALID;
    }
    str[0] = '\0'; /* an empty line, which inih skips */
    return str;
}

static int ps_config_ini_handler(void *user, const char *section, const char *name,
                                 const char *value)
{
    ps_config_file_ctx_t *ctx = user;
    const ps_config_field_t *f;
    char label[512];
    ps_status_t status;

    if (ctx->status != PS_OK || strcmp(section, ctx->section) != 0) {
        return 1;
    }
    f = ps_config_find(ctx->table, name);
    if (f == NULL) {
        ps_config_err(ctx->err, ctx->errlen, "%s:%d: unknown key '%s' in [%s]", ctx->path,
                      ctx->lineno, name, ctx->section);
        ctx->status = PS_ERR_INVALID;
        return 1;
    }
    snprintf(label, sizeof(label), "%s:%d: %s", ctx->path, ctx->lineno, f->name);
    status = ps_config_apply(f, ctx->obj, value, label, ctx->err, ctx->errlen);
    if (status != PS_OK) {
        ctx->status = status;
    }
    return 1;
}

ps_status_t ps_config_load_file(const ps_config_field_t *table, void *obj, const char *path,
                                const char *section, char *err, size_t errlen)
{
    ps_config_file_ctx_t ctx = {.table = table,
                                .obj = obj,
                                .path = path,
                                .section = section ? section : "",
                                .status = PS_OK,
                                .err = err,
                                .errlen = errlen};
    int line; /* ini_parse_stream: 0, the first bad line, or -2 (no memory) */

    ctx.file = fopen(path, "re");
    if (ctx.file == NULL) {
        int e = errno;
        ps_config_err(err, errlen, "open %s: %s", path, strerror(e));
        return e == ENOENT ? PS_ERR_NO_ENTRY : ps_status_from_errno(e);
    }
    line = ini_parse_stream(ps_config_reader, &ctx, ps_config_ini_handler, &ctx);
    if (ferror(ctx.file) && ctx.status == PS_OK) {
        ps_config_err(err, errlen, "read %s: %s", path, strerror(errno));
        ctx.status = PS_ERR_IO;
    }
    fclose(ctx.file);

    if (ctx.status != PS_OK) {
        return ctx.status;
    }
    if (line == -2) {
        ps_config_err(err, errlen, "%s: out of memory", path);
        return PS_ERR_NO_MEMORY;
    }
    if (line != 0) {
        ps_config_err(err, errlen, "%s:%d: syntax error (expected '[section]' or 'name = value')",
                      path, line);
        return PS_ERR_INVALID;
    }
    return PS_OK;
}

/* ---- environment ---------------------------------------------------------- */

static void ps_config_env_name(const char *name, char *buf, size_t len)
{
    size_t n = strlen(PS_CONFIG_ENV_PREFIX), i;

    snprintf(buf, len, "%s", PS_CONFIG_ENV_PREFIX);
    for (i = 0; name[i] != '\0' && n + i + 1 < len; i++) {
        buf[n + i] = isalnum((unsigned char)name[i]) ? (char)toupper((unsigned char)name[i]) : '_';
    }
    buf[n + i] = '\0';
}

ps_status_t ps_config_load_env(const ps_config_field_t *table, void *obj, char *err, size_t errlen)
{
    for (const ps_config_field_t *f = table; f->name != NULL; f++) {
        char var[128], label[160];
        const char *value;
        ps_status_t status;

        ps_config_env_name(f->name, var, sizeof(var));
        value = getenv(var);
        if (value == NULL) {
            continue;
        }
        snprintf(label, sizeof(label), "environment %s", var);
        status = ps_config_apply(f, obj, value, label, err, errlen);
        if (status != PS_OK) {
            return status;
        }
    }
    return PS_OK;
}

/* ---- output --------------------------------------------------------------- */

ps_status_t ps_config_format(const ps_config_field_t *field, const void *obj, char *buf, size_t len)
{
    const void *ptr = ps_config_cptr(field, obj);
    int n;

    if (buf == NULL || len == 0) {
        return PS_ERR_INVALID;
    }
    switch (field->type) {
    case PS_CFG_INT:
        n = snprintf(buf, len, "%" PRId64, *(const int64_t *)ptr);
        break;
    case PS_CFG_SIZE:
        n = ps_format_size_n(*(const uint64_t *)ptr, buf, len);
        break;
    case PS_CFG_TIME:
        n = ps_format_time(*(const double *)ptr, buf, len);
        break;
    case PS_CFG_BOOL:
        n = snprintf(buf, len, "%s", *(const int *)ptr ? "yes" : "no");
        break;
    case PS_CFG_STRING: {
        const char *s = *(const char *const *)ptr;
        n = snprintf(buf, len, "%s", s ? s : "");
        break;
    }
    case PS_CFG_LOGLEVEL:
        n = snprintf(buf, len, "%s", ps_log_level_name((ps_log_level_t) * (const int *)ptr));
        break;
    default:
        buf[0] = '\0';
        return PS_ERR_INVALID;
    }
    return n < 0 || (size_t)n >= len ? PS_ERR_INVALID : PS_OK;
}

/*
 * The doc goes on its own comment line above the setting: inih only knows ';'
 * as an inline comment, so "name = value  # doc" would read "value  # doc".
 */
void ps_config_print(const ps_config_field_t *table, const void *obj, const char *section,
                     FILE *out)
{
    if (section != NULL && section[0] != '\0') {
        fprintf(out, "[%s]\n", section);
    }
    for (const ps_config_field_t *f = table; f->name != NULL; f++) {
        char value[128];

        fprintf(out, "# %s (default: %s)\n", f->doc ? f->doc : "",
                f->dfl && f->dfl[0] ? f->dfl : "none");
        if (f->type == PS_CFG_STRING) { /* any length */
            const char *s = *(const char *const *)ps_config_cptr(f, obj);
            fprintf(out, "%s = %s\n", f->name, s ? s : "");
        } else {
            ps_config_format(f, obj, value, sizeof(value));
            fprintf(out, "%s = %s\n", f->name, value);
        }
    }
}

void ps_config_release(const ps_config_field_t *table, void *obj)
{
    for (const ps_config_field_t *f = table; f->name != NULL; f++) {
        if (f->type == PS_CFG_STRING) {
            char **ptr = ps_config_ptr(f, obj);
            free(*ptr);
            *ptr = NULL;
        }
    }
}

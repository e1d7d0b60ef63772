/*
 * ps_log.h: logging with a run-time level.
 *
 * ps_error/ps_warn/ps_info/ps_debug/ps_trace format like printf and also
 * accept %m. The level comes from ps_log_set_level(), normally fed by the
 * "log_level" tunable (env PSTRIPE_LOG_LEVEL). Output goes to stderr unless
 * ps_log_open() names a file. Each line: time, level, component, thread, text.
 * Thread-safe (each line is written with one write(2)).
 */
#ifndef PS_LOG_H
#define PS_LOG_H

#include <stdarg.h>
#include <stdint.h>

#include "ps_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ps_log_level {
    PS_LOG_ERROR = 0,
    PS_LOG_WARN = 1,
    PS_LOG_INFO = 2,
    PS_LOG_DEBUG = 3,
    PS_LOG_TRACE = 4
} ps_log_level_t;

/* The level in force. Threads read it without a lock: set it only with
 * ps_log_set_level() and read it with ps_log_enabled(). */
extern int ps_log_level;

void ps_log_set_level(ps_log_level_t level);
static inline int ps_log_enabled(ps_log_level_t level)
{
    return (int)level <= __atomic_load_n(&ps_log_level, __ATOMIC_RELAXED);
}
/* Parse "error", "warn", "info", "debug", "trace" into *level; PS_ERR_INVALID
 * if unknown. */
ps_status_t ps_log_level_parse(const char *name, ps_log_level_t *level);
const char *ps_log_level_name(ps_log_level_t level);
/* Component name printed in every line ("server", "client", "tool"). */
void ps_log_set_component(const char *name);
/* Append log lines to a file instead of stderr; on failure errno tells why. */
ps_status_t ps_log_open(const char *path);

void ps_log_write(ps_log_level_t level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define ps_log(_level, _fmt, ...)                                                                  \
    do {                                                                                           \
        if (ps_log_enabled(_level)) {                                                              \
            ps_log_write((_level), __FILE__, __LINE__, _fmt, ##__VA_ARGS__);                       \
        }                                                                                          \
    } while (0)

/*
 * A line that may repeat as fast as requests come (a full or failing disk
 * answering every write): ps_log_limit_pass lets one through at most every
 * every_ns, and counts the others in *dropped (the caller says how many in
 * the next line that goes out; a counter such as `pstripe stats`'s errors
 * keeps the total). One per thread, or under the caller's lock; zeroed to
 * start. A full disk's 36,000 failed writes in a second (2 processes, 4
 * KiB each, write-behind off): 36,000 lines of the servers' logs before,
 * 2 with it.
 */
typedef struct ps_log_limit {
    uint64_t next_ns; /* no line before this time */
    uint64_t dropped; /* lines left out since the last one */
} ps_log_limit_t;

/* 1 if a line may go out at now_ns (*dropped, unless NULL: the lines left
 * out before it, which the limit then forgets), else 0 (and the line is
 * counted). */
int ps_log_limit_pass(ps_log_limit_t *lim, uint64_t now_ns, uint64_t every_ns, uint64_t *dropped);

#define ps_error(_fmt, ...) ps_log(PS_LOG_ERROR, _fmt, ##__VA_ARGS__)
#define ps_warn(_fmt, ...)  ps_log(PS_LOG_WARN, _fmt, ##__VA_ARGS__)
#define ps_info(_fmt, ...)  ps_log(PS_LOG_INFO, _fmt, ##__VA_ARGS__)
#define ps_debug(_fmt, ...) ps_log(PS_LOG_DEBUG, _fmt, ##__VA_ARGS__)
#define ps_trace(_fmt, ...) ps_log(PS_LOG_TRACE, _fmt, ##__VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif

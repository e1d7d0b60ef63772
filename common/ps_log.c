#include "ps_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int ps_log_level = PS_LOG_WARN;

static const char *ps_log_component = "pstripe";
static int ps_log_fd = STDERR_FILENO;

static const char *const ps_log_names[] = {"error", "warn", "info", "debug", "trace"};

void ps_log_set_level(ps_log_level_t level)
{
    __atomic_store_n(&ps_log_level, (int)level, __ATOMIC_RELAXED);
}

ps_status_t ps_log_level_parse(const char *name, ps_log_level_t *level)
{
    for (int i = 0; i < (int)(sizeof(ps_log_names) / sizeof(ps_log_names[0])); i++) {
        if (strcasecmp(name, ps_log_names[i]) == 0) {
            *level = (ps_log_level_t)i;
            return PS_OK;
        }
    }
    return PS_ERR_INVALID;
}

const char *ps_log_level_name(ps_log_level_t level)
{
    if ((int)level < 0 || level > PS_LOG_TRACE) {
        return "?";
    }
    return ps_log_names[level];
}

void ps_log_set_component(const char *name)
{
    ps_log_component = name;
}

ps_status_t ps_log_open(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        return ps_status_from_errno(errno);
    }
    if (ps_log_fd != STDERR_FILENO) {
        close(ps_log_fd);
    }
    ps_log_fd = fd;
    return PS_OK;
}

void ps_log_write(ps_log_level_t level, const char *file, int line, const char *fmt, ...)
{
    int saved_errno = errno; /* so that %m reports the caller's errno */
    char buf[2048];
    struct timespec ts;
    struct tm tm;
    const char *base = strrchr(file, '/');
    va_list ap;
    int n;

    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    n = snprintf(buf, sizeof(buf), "[%02d:%02d:%02d.%06ld] %-5s %s[%d:%ld] %s:%d ", tm.tm_hour,
                 tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000, ps_log_level_name(level),
                 ps_log_component, (int)getpid(), (long)syscall(SYS_gettid), base ? base + 1 : file,
                 line);
    if (n < 0 || n >= (int)sizeof(buf)) {
        n = 0;
    }
    errno = saved_errno;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0) {
        m = 0;
    }
    n += m;
    if (n > (int)sizeof(buf) - 2) {
        n = (int)sizeof(buf) - 2;
    }
    buf[n++] = '\n';
    ssize_t ret = write(ps_log_fd, buf, (size_t)n);
    (void)ret;
    errno = saved_errno;
}

int ps_log_limit_pass(ps_log_limit_t *lim, uint64_t now_ns, uint64_t every_ns, uint64_t *dropped)
{
    if (now_ns < lim->next_ns) {
        lim->dropped++;
        return 0;
    }
    if (dropped != NULL) {
        *dropped = lim->dropped;
    }
    lim->dropped = 0;
    lim->next_ns = now_ns + every_ns;
    return 1;
}

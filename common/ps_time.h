/* ps_time.h: monotonic and wall clock helpers. */
#ifndef PS_TIME_H
#define PS_TIME_H

#include <stdint.h>
#include <time.h>

/* Monotonic time in nanoseconds. */
static inline uint64_t ps_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wall-clock time in nanoseconds since the epoch. */
static inline uint64_t ps_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif

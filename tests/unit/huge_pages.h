/*
 * huge_pages.h: what the unit tests of the huge-page mappings
 * (common/ps_mem.c) ask /proc and /sys.
 */
#ifndef HUGE_PAGES_H
#define HUGE_PAGES_H

#include <stdint.h>
#include <string.h>

#include <fstream>
#include <sstream>
#include <string>

/* AnonHugePages (kB) of the mapping that contains p, from /proc/self/smaps. */
inline long huge_kb(const void *p)
{
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    bool in = false;

    while (std::getline(smaps, line)) {
        unsigned long lo, hi;
        char dash;
        std::istringstream range(line);
        if (line.find(' ') < line.find(':')) {
            /* a mapping's first line, "lo-hi perms offset dev ...", not a
             * field ("Rss:    4 kB") */
            if (range >> std::hex >> lo >> dash >> hi) {
                in = a >= lo && a < hi;
            }
            continue;
        }
        if (in && line.rfind("AnonHugePages:", 0) == 0) {
            return std::stol(line.substr(strlen("AnonHugePages:")));
        }
    }
    return -1;
}

inline bool thp_enabled()
{
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string s;

    return std::getline(f, s) && s.find("[never]") == std::string::npos;
}

#endif

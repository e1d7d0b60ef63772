/*
 * psc_stage.c: staging buffers, cached by the progress thread.
 *
 * Staging buffers are reused because fresh memory is expensive to touch: on
 * the VMs we run on a first-touch page fault costs 17-45 us per 4 KiB page
 * (64 MiB: 0.5-0.8 s, i.e. slower than the disk), a second pass over the
 * same memory 10 ms. They come from pstripe_buffer_alloc (psc_mem.c):
 * from 1 MiB up, whole 2 MiB huge pages where THP allows.
 * Idle buffers are kept up to fs->bounce_limit bytes (enough for a full
 * pipeline to every server) and released after PSC_BOUNCE_IDLE_NS unused.
 */
#include <stdlib.h>

#include "ps_time.h"
#include "psc_stage.h"

#define PSC_BOUNCE_IDLE_NS 5000000000ull

void *psc_bounce_get(pstripe_fs_t *fs, size_t size, size_t *cap)
{
    unsigned best = fs->nbounce;
    void *buf;

    for (unsigned i = 0; i < fs->nbounce; i++) {
        if (fs->bounce[i].size >= size && fs->bounce[i].size <= 2 * size + 65536 &&
            (best == fs->nbounce || fs->bounce[i].size < fs->bounce[best].size)) {
            best = i;
        }
    }
    if (best < fs->nbounce) {
        buf = fs->bounce[best].buf;
        *cap = fs->bounce[best].size;
        fs->bounce[best] = fs->bounce[--fs->nbounce];
        return buf;
    }
    /* large buffers come rounded up: they fit later batches of similar size */
    return pstripe_buffer_alloc(size ? size : 1, cap);
}

void psc_bounce_put(pstripe_fs_t *fs, void *buf, size_t cap)
{
    uint64_t limit = __atomic_load_n(&fs->bounce_limit, __ATOMIC_RELAXED);
    uint64_t total = cap;

    if (buf == NULL) {
        return;
    }
    for (unsigned i = 0; i < fs->nbounce; i++) {
        total += fs->bounce[i].size;
    }
    if (fs->nbounce == PSC_BOUNCE_CACHE || total > limit) {
        pstripe_buffer_free(buf);
        return;
    }
    fs->bounce[fs->nbounce].buf = buf;
    fs->bounce[fs->nbounce].size = cap;
    fs->bounce[fs->nbounce].idle_since_ns = ps_time_ns();
    fs->nbounce++;
}

/* Release buffers idle for PSC_BOUNCE_IDLE_NS. */
uint64_t psc_bounce_trim(pstripe_fs_t *fs, uint64_t now)
{
    uint64_t next = 0;

    for (unsigned i = 0; i < fs->nbounce;) {
        uint64_t age = now - fs->bounce[i].idle_since_ns;

        if (age >= PSC_BOUNCE_IDLE_NS) {
            pstripe_buffer_free(fs->bounce[i].buf);
            fs->bounce[i] = fs->bounce[--fs->nbounce];
            continue;
        }
        if (next == 0 || PSC_BOUNCE_IDLE_NS - age < next) {
            next = PSC_BOUNCE_IDLE_NS - age;
        }
        i++;
    }
    return next;
}

void psc_bounce_free_all(pstripe_fs_t *fs)
{
    while (fs->nbounce > 0) {
        fs->nbounce--;
        pstripe_buffer_free(fs->bounce[fs->nbounce].buf);
    }
}

/*
 * pss_spin.c: the spin window of a worker's loop (see pss_spin.h).
 *
 * Something happened when UCX reported events or the worker's counters
 * moved: requests in flight, disk I/Os in flight, reply sends in flight,
 * and `answered` (replies sent and disk I/Os completed, ever). The counters
 * in flight alone miss a blocking write: a request that comes, one disk I/O
 * and the reply leave them as they were when the loop last looked (at the
 * arrival it went to the disk without a look, since no window is kept
 * while the disk works), so the worker slept 12 us after each reply, and
 * the client's next request, 25 us after it, woke it (about 20 us here):
 * a blocking 4 KiB write took 128-129 us at the median, with `answered`
 * 118-123 (1 process, caches off, 4 alternations; session 51).
 */
#include "pss_spin.h"

int pss_spin_more(pss_worker_t *w, unsigned events, uint64_t now, uint64_t *spin_end)
{
    uint64_t activity = w->answered * 0xff51afd7ed558ccdull + w->inflight * 0x9e3779b97f4a7c15ull +
                        (uint64_t)w->aio_inflight + (w->sends_inflight << 32);
    uint64_t spin_ns = (uint64_t)(w->server->cfg.spin * 1e9);

    if (spin_ns == 0 || w->stop_seen || w->aio_inflight > 0) {
        /* not while the disk works: its completion runs on a CPU of this
         * machine, which a spinning thread delays (pss_worker.c) */
        return 0;
    }
    if (events > 0 || activity != w->spin_activity) {
        w->spin_activity = activity;
        *spin_end = now + spin_ns;
    }
    return now < *spin_end;
}

/*
 * spin_box (spin_box.h): a worker's spin window, for the unit tests of
 * server/pss_spin.c, which is compiled in from here (as stage_box.c does
 * for the write-back stage).
 */
#include "spin_box.h"

#include "pss_spin.c"

struct spin_box {
    pss_server_t server;
    pss_worker_t worker;
    uint64_t spin_end;
};

spin_box *spin_box_new(double spin_s)
{
    spin_box *b = calloc(1, sizeof(*b));

    if (b != NULL) {
        b->server.cfg.spin = spin_s;
        b->worker.server = &b->server;
    }
    return b;
}

void spin_box_free(spin_box *b)
{
    free(b);
}

void spin_box_set(spin_box *b, uint64_t inflight, int aio_inflight, uint64_t sends_inflight,
                  uint64_t answered)
{
    b->worker.inflight = inflight;
    b->worker.aio_inflight = aio_inflight;
    b->worker.sends_inflight = sends_inflight;
    b->worker.answered = answered;
}

int spin_box_more(spin_box *b, unsigned events, uint64_t now)
{
    return pss_spin_more(&b->worker, events, now, &b->spin_end);
}

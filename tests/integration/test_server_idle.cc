/*
 * test_server_idle.cc: an idle cluster uses no CPU. Four daemons with the
 * default number of workers (one per core) and a connected client each are
 * left alone for a few seconds; their CPU time (utime + stime of the whole
 * process, /proc/PID/stat fields 14 and 15, in clock ticks) must grow by less
 * than 1% of the wall time, summed over all four, once each has faulted its
 * cache memory in. A daemon that polled would burn a whole core per worker.
 */
#include <gtest/gtest.h>

#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "ps_cluster.h"
#include "ps_time.h"
#include "test_server_raw.h"

using namespace ps_test;

TEST(ServerIdle, IdleClusterUsesUnderOnePercentCpu)
{
    const int nservers = 4;
    const double seconds = 5.0;
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(nservers, 0)); /* default: one worker per core */

    /* connected clients, as in real use (UCX keeps its connections alive) */
    std::vector<std::unique_ptr<raw_client>> clients;
    uint32_t workers = 0;
    for (int i = 0; i < nservers; i++) {
        clients.emplace_back(new raw_client());
        ASSERT_TRUE(clients.back()->connect(cluster.host(i), cluster.port(i)));
        raw_reply h = clients.back()->hello();
        ASSERT_TRUE(h.received);
        workers += h.body<ps_hello_rep_t>().nworkers;
    }

    /* The cache's memory is faulted in after start, at idle priority: a
     * start-up cost, not idling. Wait for each server to say it is done. */
    for (int i = 0; i < nservers; i++) {
        ASSERT_TRUE(cluster.wait_cache_faulted(i));
    }

    double before[nservers];
    for (int i = 0; i < nservers; i++) {
        before[i] = cluster.cpu_seconds(i);
        ASSERT_GE(before[i], 0);
    }
    /* The measurement window, not a wait for something: nothing is to happen
     * in it, and the test sleeps too so that its own CPU does not count. */
    uint64_t t0 = ps_time_ns();
    poll(nullptr, 0, (int)(seconds * 1000));
    double wall = (double)(ps_time_ns() - t0) * 1e-9;
    double used = 0;
    for (int i = 0; i < nservers; i++) {
        double after = cluster.cpu_seconds(i);
        ASSERT_GE(after, 0);
        used += after - before[i];
    }
    double percent = 100.0 * used / wall;
    printf("idle cluster: %d servers, %u workers in all, %.3f s CPU in %.2f s wall = %.2f%% "
           "(clock tick %.0f ms)\n",
           nservers, workers, used, wall, percent, 1000.0 / (double)sysconf(_SC_CLK_TCK));
    EXPECT_LT(percent, 1.0);
}

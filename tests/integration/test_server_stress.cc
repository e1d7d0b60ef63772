/*
 * test_server_stress.cc: several clients writing interleaved, unaligned
 * pieces of the same objects at once (so that nearly every disk block is
 * read-modify-written by several batches in flight), on a server with two
 * workers; the result is checked byte for byte against a model.
 */
#include <gtest/gtest.h>

#include <random>

#include "ps_cluster.h"
#include "ps_layout.h"
#include "test_server_raw.h"

using namespace ps_test;

TEST(ServerStress, InterleavedUnalignedWritersAgreeWithModel)
{
    const int nclients = 3, nobjs = 4, rounds = 12, batches = 6, regions = 60;
    const uint64_t chunk = 7, obj_size = 96 * 1024, nchunks = obj_size / chunk;
    ps_cluster cluster;
    ASSERT_TRUE(cluster.start(1, 2, {"--set", "coalesce_gap=1k", "--set", "max_io=64k"}));

    /* each client talks to both workers */
    std::vector<std::unique_ptr<raw_client>> conn[nclients];
    uint32_t ports[2];
    {
        raw_client c;
        ASSERT_TRUE(c.connect(cluster.host(0), cluster.port(0)));
        raw_reply h = c.hello();
        ASSERT_TRUE(h.received);
        memcpy(ports, h.data.data(), sizeof(ports));
    }
    for (int k = 0; k < nclients; k++) {
        for (int wi = 0; wi < 2; wi++) {
            conn[k].emplace_back(new raw_client());
            ASSERT_TRUE(conn[k][wi]->connect(cluster.host(0), (uint16_t)ports[wi]));
        }
    }
    uint64_t fids[nobjs];
    for (int o = 0; o < nobjs; o++) {
        fids[o] = file_id_for_worker((uint32_t)(o % 2), 2, 100 + (uint64_t)o);
    }
    std::vector<std::vector<uint8_t>> model(nobjs, std::vector<uint8_t>(obj_size, 0));
    std::vector<uint64_t> size(nobjs, 0);
    std::mt19937_64 rng(12345);

    for (int round = 0; round < rounds; round++) {
        std::vector<std::pair<raw_client *, uint64_t>> pending;
        for (int k = 0; k < nclients; k++) {
            /* client k owns chunks j with j % nclients == k; no chunk twice a round */
            std::vector<uint64_t> mine;
            for (uint64_t j = (uint64_t)k; j < nchunks; j += nclients) {
                mine.push_back(j);
            }
            std::shuffle(mine.begin(), mine.end(), rng);
            size_t next = 0;
            for (int b = 0; b < batches; b++) {
                int o = (int)(rng() % nobjs);
                std::vector<ps_region_t> regs;
                std::vector<uint8_t> payload;
                for (int r = 0; r < regions && next < mine.size(); r++, next++) {
                    uint64_t j = mine[next];
                    uint64_t skip = rng() % chunk;
                    uint64_t len = 1 + rng() % (chunk - skip);
                    ps_region_t reg{j * chunk + skip, len};
                    regs.push_back(reg);
                    for (uint64_t i = 0; i < len; i++) {
                        uint8_t v = (uint8_t)(rng() | 1);
                        payload.push_back(v);
                        model[o][reg.off + i] = v;
                    }
                    size[o] = std::max(size[o], reg.off + reg.len);
                }
                ps_io_req_t io{fids[o], payload.size(), (uint32_t)regs.size(), 0};
                std::vector<uint8_t> d = raw_client::io_data(regs, payload);
                raw_client *c = conn[k][ps_object_worker(fids[o], 2)].get();
                pending.emplace_back(
                    c, c->send(PS_MSG_OBJ_WRITE, &io, sizeof(io), d.data(), d.size()));
            }
        }
        for (auto &p : pending) {
            raw_reply r = p.first->wait(p.second, 60);
            ASSERT_TRUE(r.received);
            ASSERT_EQ(r.status(), PS_OK);
        }
    }

    for (int o = 0; o < nobjs; o++) {
        raw_client *c = conn[0][ps_object_worker(fids[o], 2)].get();
        raw_reply r = c->read(fids[o], {{0, obj_size}});
        ASSERT_TRUE(r.received);
        ASSERT_EQ(r.status(), PS_OK);
        ASSERT_EQ(r.data.size(), obj_size);
        size_t bad = 0, first_bad = 0;
        for (size_t i = 0; i < obj_size; i++) {
            if (r.data[i] != model[o][i] && bad++ == 0) {
                first_bad = i;
            }
        }
        EXPECT_EQ(bad, 0u) << "object " << o << ": " << bad << " wrong bytes, first at "
                           << first_bad;
        raw_reply st = c->obj(PS_MSG_OBJ_STAT, fids[o]);
        EXPECT_EQ(st.body<ps_obj_rep_t>().size, size[o]) << "object " << o;
    }
    ps_stats_rep_t st{};
    ASSERT_TRUE(conn[0][0]->stats(&st).received);
    printf("stress: %llu write batches, %llu regions, %llu disk writes, %llu rmw reads, "
           "%llu merged batches, max queue depth %llu\n",
           (unsigned long long)st.write_batches, (unsigned long long)st.regions_written,
           (unsigned long long)st.disk_writes, (unsigned long long)st.rmw_reads,
           (unsigned long long)st.merged_batches, (unsigned long long)st.queue_depth_max);
}

/*
 * pss_admin.c: HELLO, STATFS and STATS (see pss_admin.h). HELLO gives the
 * server id, the number of workers and every worker's port, which clients
 * use to route each request to its owner; STATFS reports the data
 * directory's file system (and an id that tells two servers sharing one
 * apart); STATS sums the counters of all workers.
 */
#include "pss_admin.h"

#include "pss_auth.h"
#include "pss_metadb.h"
#include "pss_req.h"

#include "ps_layout.h"
#include "ps_log.h"
#include "ps_time.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

static void pss_handle_hello(pss_worker_t *w, pss_req_t *req)
{
    pss_server_t *s = w->server;
    ps_hello_rep_t rep;
    int shm = s->cfg.shm && (req->body.hello.flags & PS_HELLO_SHM);
    size_t n = s->nworkers * sizeof(uint32_t), len = shm ? 2 * n + sizeof(ps_shm_id_t) : n;
    uint8_t *ports = malloc(len);

    if (ports == NULL) {
        pss_reply(req, PS_ERR_NO_MEMORY, NULL, 0, NULL, 0, 0);
        return;
    }
    memcpy(ports, s->ports, n);
    if (shm) { /* the shared-memory ports and who may use them (pss_listen.c) */
        memcpy(ports + n, s->shm_ports, n);
        memcpy(ports + 2 * n, &s->shm_id, sizeof(ps_shm_id_t));
    }
    memset(&rep, 0, sizeof(rep));
    rep.flags = shm ? PS_HELLO_SHM : 0;
    rep.server_id = s->server_id;
    rep.nworkers = s->nworkers;
    rep.worker = w->index;
    rep.block_size = s->align;
    rep.instance = s->instance;
    if (s->cfg.server_index >= 0 && s->cfg.server_index < s->cfg.cluster_size &&
        s->cfg.cluster_size < UINT16_MAX) {
        rep.place = (uint16_t)(s->cfg.server_index + 1);
        rep.cluster_size = (uint16_t)s->cfg.cluster_size;
    }
    if (pss_auth_hello(w, req, &rep) != PS_OK) {
        free(ports);
        pss_reply(req, PS_ERR_IO, NULL, 0, NULL, 0, 0);
        return;
    }
    pss_reply(req, PS_OK, &rep, sizeof(rep), ports, len, 0);
}

static void pss_handle_statfs(pss_worker_t *w, pss_req_t *req)
{
    struct statvfs sv;
    ps_statfs_rep_t rep;

    if (statvfs(w->server->data_dir, &sv) != 0) {
        int statvfs_errno = errno;
        ps_error("statvfs %s: %m", w->server->data_dir);
        pss_reply(req, ps_status_from_errno(statvfs_errno), NULL, 0, NULL, 0, 0);
        return;
    }
    memset(&rep, 0, sizeof(rep));
    rep.bsize = sv.f_frsize ? sv.f_frsize : sv.f_bsize;
    rep.blocks = sv.f_blocks;
    rep.bfree = sv.f_bfree;
    rep.bavail = sv.f_bavail;
    rep.files = pss_meta_count(w->server);
    /* This boot of this machine, and the file system's id on it. */
    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f != NULL) {
        if (fgets(boot, sizeof(boot), f) == NULL) {
            boot[0] = '\0';
        }
        fclose(f);
    }
    uint64_t fsid = (uint64_t)sv.f_fsid;
    rep.fs_id = ps_hash_bytes(boot, strlen(boot)) ^ ps_hash_u64(fsid);
    pss_reply(req, PS_OK, &rep, sizeof(rep), NULL, 0, 0);
}

/* Sum the counters of every worker (each read without a lock, see pss_stats_t). */
static void pss_stats_collect(pss_server_t *s, ps_stats_rep_t *rep)
{
    memset(rep, 0, sizeof(*rep));
    rep->uptime_ns = ps_time_ns() - s->start_ns;
    rep->nworkers = s->nworkers;
    rep->direct_io = (uint64_t)s->direct_io;
    rep->auth_mode = s->auth_mode;
    for (uint32_t i = 0; i < s->nworkers; i++) {
        pss_worker_t *w = s->workers[i];
        rep->requests += PSS_STAT_GET(w, requests);
        rep->errors += PSS_STAT_GET(w, errors);
        rep->bytes_written += PSS_STAT_GET(w, bytes_written);
        rep->bytes_read += PSS_STAT_GET(w, bytes_read);
        rep->write_batches += PSS_STAT_GET(w, write_batches);
        rep->read_batches += PSS_STAT_GET(w, read_batches);
        rep->regions_written += PSS_STAT_GET(w, regions_written);
        rep->regions_read += PSS_STAT_GET(w, regions_read);
        rep->disk_writes += PSS_STAT_GET(w, disk_writes);
        rep->disk_reads += PSS_STAT_GET(w, disk_reads);
        rep->disk_bytes_written += PSS_STAT_GET(w, disk_bytes_written);
        rep->disk_bytes_read += PSS_STAT_GET(w, disk_bytes_read);
        rep->rmw_reads += PSS_STAT_GET(w, rmw_reads);
        rep->queue_depth += PSS_STAT_GET(w, queue_depth);
        uint64_t qmax = PSS_STAT_GET(w, queue_depth_max);
        rep->queue_depth_max = qmax > rep->queue_depth_max ? qmax : rep->queue_depth_max;
        rep->merged_batches += PSS_STAT_GET(w, merged_batches);
        rep->merged_writers += PSS_STAT_GET(w, merged_writers);
        rep->staged_bytes += PSS_STAT_GET(w, staged_bytes);
        rep->stage_whole += PSS_STAT_GET(w, stage_whole);
        rep->stage_partial += PSS_STAT_GET(w, stage_partial);
        rep->stage_rmw += PSS_STAT_GET(w, stage_rmw);
        rep->stage_full_waits += PSS_STAT_GET(w, stage_full_waits);
        rep->stage_errors += PSS_STAT_GET(w, stage_errors);
        rep->stage_blocks += PSS_STAT_GET(w, stage_blocks);
        rep->read_ahead_bytes += PSS_STAT_GET(w, read_ahead_bytes);
        rep->eager_replies += PSS_STAT_GET(w, eager_replies);
        rep->rndv_requests += PSS_STAT_GET(w, rndv_requests);
        rep->flushes_behind += PSS_STAT_GET(w, flushes_behind);
        rep->auth_ok += PSS_STAT_GET(w, auth_ok);
        rep->auth_refused += PSS_STAT_GET(w, auth_refused);
        rep->cap_refused += PSS_STAT_GET(w, cap_refused);
        for (int b = 0; b < PS_STATS_HIST_BUCKETS; b++) {
            rep->latency_hist[b] += PSS_STAT_GET(w, latency_hist[b]);
        }
    }
}

static void pss_handle_stats(pss_worker_t *w, pss_req_t *req)
{
    ps_stats_rep_t rep;
    pss_stats_collect(w->server, &rep);
    pss_reply(req, PS_OK, &rep, sizeof(rep), NULL, 0, 0);
}

void pss_admin_handle(pss_worker_t *w, pss_req_t *req)
{
    switch (req->hdr.type) {
    case PS_MSG_HELLO:
        pss_handle_hello(w, req);
        break;
    case PS_MSG_STATFS:
        pss_handle_statfs(w, req);
        break;
    case PS_MSG_STATS:
        pss_handle_stats(w, req);
        break;
    default:
        pss_reply(req, PS_ERR_PROTO, NULL, 0, NULL, 0, 0);
        break;
    }
}

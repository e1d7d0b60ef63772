/*
 * psc_statfs.c: what the client asks of every server, or of one, about
 * the servers themselves: capacity (pstripe_statfs) and counters
 * (pstripe_server_stats).
 */
#include <stdlib.h>
#include <string.h>

#include "ps_status.h"
#include "psc_call.h"
#include "psc_conn.h"
#include "psc_fs.h"
#include "psc_op.h"
#include "psc_wait.h"

ps_status_t pstripe_statfs(pstripe_fs_t *fs, pstripe_statfs_t *st)
{
    ps_statfs_rep_t *reps;
    psc_call_t call;
    psc_op_t *ops;
    pstripe_statfs_t s;
    ps_status_t status;

    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    if (st == NULL) {
        return psc_error(PS_ERR_INVALID, "st is NULL");
    }
    ops = calloc(fs->nservers, sizeof(*ops));
    reps = calloc(fs->nservers, sizeof(*reps));
    if (ops == NULL || reps == NULL) {
        free(ops);
        free(reps);
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    psc_call_init(&call);
    for (uint32_t i = 0; i < fs->nservers; i++) {
        psc_op_init(&ops[i], i, PS_MSG_STATFS, NULL, 0);
        ops[i].rep_body = &reps[i];
        ops[i].rep_body_len = sizeof(reps[i]);
        psc_op_post(fs, &ops[i], &call);
    }
    status = psc_call_wait(fs, &call);
    if (status == PS_OK) {
        memset(&s, 0, sizeof(s));
        for (uint32_t i = 0; i < fs->nservers; i++) {
            uint32_t j = 0;
            while (j < i && reps[j].fs_id != reps[i].fs_id) {
                j++;
            }
            if (j == i) { /* space of a file system no earlier server shares */
                s.total_bytes += reps[i].bsize * reps[i].blocks;
                s.free_bytes += reps[i].bsize * reps[i].bfree;
                s.avail_bytes += reps[i].bsize * reps[i].bavail;
                s.nfilesystems++;
            }
            s.files += reps[i].files;
        }
        s.nservers = fs->nservers;
        *st = s;
    }
    free(ops);
    free(reps);
    return status;
}

ps_status_t pstripe_server_stats(pstripe_fs_t *fs, int server, pstripe_server_stats_t *st)
{
    ps_stats_rep_t rep;
    psc_call_t call;
    psc_op_t op;
    ps_status_t status;

    _Static_assert(sizeof(pstripe_server_stats_t) == sizeof(ps_stats_rep_t),
                   "pstripe_server_stats_t mirrors ps_stats_rep_t");
    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    if (st == NULL || server < 0 || (uint32_t)server >= fs->nservers) {
        return psc_error(PS_ERR_INVALID, "no server %d (or st is NULL)", server);
    }
    psc_call_init(&call);
    psc_op_init(&op, (uint32_t)server, PS_MSG_STATS, NULL, 0);
    op.rep_body = &rep;
    op.rep_body_len = sizeof(rep);
    psc_op_post(fs, &op, &call);
    status = psc_call_wait(fs, &call);
    if (status == PS_OK) {
        memcpy(st, &rep, sizeof(*st));
    }
    return status;
}

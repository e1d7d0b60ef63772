/*
 * psc_sync.c: fsync and close, and what they ask the servers about the
 * file's writes (psc_file_seen_t, filled in by the writes' answers).
 */
#include <stdlib.h>

#include "psc_call.h"
#include "psc_conn.h"
#include "psc_meta.h"
#include "psc_op.h"
#include "psc_wait.h"

/*
 * Ask each object of the file that this handle wrote whether writes the
 * server answered before the disk failed there since (OBJ_SYNC, an fsync
 * of every object and of the path's metadata, or OBJ_FLUSH, a close:
 * staged bytes written, no fsync), and whether a server restarted since it
 * acknowledged writes (it acknowledges partial blocks once they are in its
 * memory, as a page cache does: its answer now proves nothing). Each is
 * reported once, as Linux reports a lost writeback.
 */
static ps_status_t psc_file_check_writes(pstripe_file_t *file, uint16_t type)
{
    pstripe_fs_t *fs = file->fs;
    uint64_t *wrote = file->seen->wrote_instance, *mark = file->seen->failed_mark;
    uint32_t n = file->layout.stripe_count, nops = 0;
    int sync = type == PS_MSG_OBJ_SYNC;
    psc_call_t call;
    psc_op_t *ops;
    ps_cap_t cap;
    ps_status_t status;

    ops = calloc(n + 1, sizeof(*ops));
    if (ops == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    psc_file_cap(file, &cap);
    psc_call_init(&call);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t s = ps_layout_server(&file->layout, k, fs->nservers);
        if (sync || wrote[s] != 0) { /* a close asks only where it wrote */
            psc_op_init_obj(&ops[nops], s, type, file->info.file_id,
                            wrote[s] != 0 ? mark[s] : UINT64_MAX, &cap);
            psc_op_post(fs, &ops[nops++], &call);
        }
    }
    if (sync) {
        psc_op_init(&ops[nops], ps_path_server(file->path, file->path_len, fs->nservers),
                    PS_MSG_META_SYNC, NULL, 0);
        psc_op_post(fs, &ops[nops++], &call);
    }
    if (nops > 0) {
        psc_call_wait(fs, &call);
    }
    status = PS_OK;
    for (uint32_t i = 0; i < nops; i++) {
        uint32_t s = ops[i].server;
        if (ops[i].status != PS_OK && status == PS_OK &&
            (sync || (ops[i].status != PS_ERR_STALE && ops[i].status != PS_ERR_ACCESS))) {
            /* (a close of a file removed, or replaced, since: nothing of it to hear) */
            status = psc_error(ops[i].status, "%s", ops[i].msg);
        }
        if (ops[i].type == PS_MSG_META_SYNC || wrote[s] == 0 || psc_unreachable(ops[i].status)) {
            continue;
        }
        if (wrote[s] != fs->servers[s].instance && status == PS_OK) {
            status = psc_error(PS_ERR_IO,
                               "server %s restarted since it acknowledged writes to %s: bytes "
                               "written before the restart and not synced may be lost",
                               fs->servers[s].addr, file->path);
        }
        wrote[s] = 0;
    }
    free(ops);
    return status;
}

ps_status_t pstripe_fsync(pstripe_file_t *file)
{
    if (file == NULL) {
        return psc_error(PS_ERR_INVALID, "file is NULL");
    }
    return psc_file_check_writes(file, PS_MSG_OBJ_SYNC);
}

ps_status_t pstripe_check_writes(pstripe_file_t *file)
{
    if (file == NULL) {
        return psc_error(PS_ERR_INVALID, "file is NULL");
    }
    return psc_file_check_writes(file, PS_MSG_OBJ_FLUSH);
}

ps_status_t pstripe_close(pstripe_file_t *file)
{
    ps_status_t status;

    if (file == NULL) {
        return psc_error(PS_ERR_INVALID, "file is NULL");
    }
    status = psc_file_check_writes(file, PS_MSG_OBJ_FLUSH);
    free(file->path);
    psc_file_seen_drop(file->seen);
    free(file);
    return status;
}

/*
 * psc_sync.c: fsync and close, and what they ask the servers about the
 * file's writes (psc_file_seen_t, psc_seen.c: what the writes' answers told).
 */
#include <pthread.h>
#include <stdlib.h>

#include "psc_call.h"
#include "psc_conn.h"
#include "psc_meta.h"
#include "psc_op.h"
#include "psc_wait.h"

/*
 * One answer of a check that asked about *asked (instance 0: nothing of
 * it), folded into status (the call's first failure): its own failure,
 * else a restart since the handle's first acknowledgement there (one
 * report a server: both say its bytes may be lost); then the handle's
 * record of that server is forgotten (psc_file_seen_checked), unless this
 * call reports another server's failure (this one is then left for the
 * next check) or the server was not reached. sync: an fsync (else a
 * close's question); gone: the file was found removed or replaced.
 */
static ps_status_t psc_check_answer(pstripe_file_t *file, const psc_op_t *op,
                                    const psc_asked_t *asked, int sync, int gone,
                                    ps_status_t status)
{
    pstripe_fs_t *fs = file->fs;
    uint32_t s = op->server;
    /* a close of a file removed (or replaced) since: nothing of it to hear */
    int moot = !sync && (op->status == PS_ERR_STALE || (op->status == PS_ERR_ACCESS && gone));

    if (op->status != PS_OK && !moot) {
        if (status != PS_OK) {
            return status; /* this call reports another failure: the next one this */
        }
        status = psc_error(op->status, "%s", op->msg);
    }
    if (op->type == PS_MSG_META_SYNC || asked->instance == 0 || psc_unreachable(op->status)) {
        return status; /* (unreached: asked again by the next check) */
    }
    if (!moot && op->status == PS_OK && asked->instance != fs->servers[s].instance) {
        if (status != PS_OK) {
            return status; /* this call reports another failure: the next one this */
        }
        status = psc_error(PS_ERR_IO,
                           "server %s restarted since it acknowledged writes to %s: bytes "
                           "written (or sizes set) before the restart and not synced may "
                           "be lost",
                           fs->servers[s].addr, file->path);
    }
    psc_file_seen_checked(file->seen, s, asked);
    return status;
}

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
    uint32_t n = file->layout.stripe_count, nops = 0;
    int sync = type == PS_MSG_OBJ_SYNC, gone;
    psc_asked_t *asked; /* per op: what it asks about */
    psc_call_t call;
    psc_op_t *ops;
    ps_cap_t cap;
    ps_status_t status = PS_OK;

    ops = calloc(n + 1, sizeof(*ops) + sizeof(*asked));
    if (ops == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    asked = (psc_asked_t *)(ops + n + 1);
    psc_file_cap(file, &cap);
    pthread_mutex_lock(&fs->lock);
    gone = file->gone;
    pthread_mutex_unlock(&fs->lock);
    psc_call_init(&call);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t s = ps_layout_server(&file->layout, k, fs->nservers);
        psc_asked_t a = psc_file_seen_ask(file->seen, s);

        if (sync || a.instance != 0) { /* a close asks only where it wrote */
            asked[nops] = a;
            psc_op_init_obj(&ops[nops], s, type, file->info.file_id,
                            a.instance != 0 ? a.mark : UINT64_MAX, &cap);
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
    for (uint32_t i = 0; i < nops; i++) {
        status = psc_check_answer(file, &ops[i], &asked[i], sync, gone, status);
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
    psc_file_free(file);
    return status;
}

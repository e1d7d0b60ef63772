/*
 * psc_sharedfp.c: shared file pointers (pstripe_sfp_*): one SHARED_FP
 * request to the file's metadata owner ps_path_server(), routed to the
 * worker that owns the file id there (ps_object_worker), which keeps the
 * counter (server/pss_sharedfp.c).
 *
 * The server keeps counters in memory only and makes one only on a SET (the
 * collective open sets it to 0): a fetch-and-add of a counter it does not
 * know, because it restarted since the open or dropped the counter after
 * an hour unused, fails with PS_ERR_NO_ENTRY, which is reported here as a
 * lost pointer rather than a missing file.
 */
#include <string.h>

#include "ps_status.h"
#include "psc_call.h"
#include "psc_conn.h"
#include "psc_error.h"
#include "psc_op.h"
#include "psc_meta.h"
#include "psc_wait.h"

static ps_status_t psc_sfp_call(pstripe_file_t *file, uint64_t instance, uint32_t view,
                                uint32_t op_code, uint64_t value, uint64_t *result)
{
    pstripe_fs_t *fs;
    ps_sfp_req_t req;
    ps_sfp_rep_t rep = {0};
    psc_call_t call;
    psc_op_t op;
    ps_status_t status;

    if (file == NULL || instance == 0) {
        return psc_error(PS_ERR_INVALID, "shared file pointer: %s",
                         file == NULL ? "file is NULL" : "instance 0");
    }
    if (value > PS_SFP_VALUE_MAX) {
        return psc_error(PS_ERR_TOO_BIG, "shared file pointer: value %llu above INT64_MAX",
                         (unsigned long long)value);
    }
    fs = file->fs;
    memset(&req, 0, sizeof(req));
    req.file_id = file->info.file_id;
    psc_file_cap(file, &req.cap);
    req.instance = instance;
    req.value = value;
    req.op = op_code;
    req.view = view;
    psc_call_init(&call);
    psc_op_init(&op, ps_path_server(file->path, file->path_len, fs->nservers), PS_MSG_SHARED_FP,
                &req, sizeof(req));
    op.route = PSC_ROUTE_OBJECT;
    op.route_file_id = req.file_id;
    op.rep_body = &rep;
    op.rep_body_len = sizeof(rep);
    psc_op_post(fs, &op, &call);
    status = psc_call_wait(fs, &call);
    if (status == PS_ERR_TOO_BIG) {
        return psc_error(status, "shared file pointer: %s on server %u",
                         op_code == PS_SFP_FETCH_ADD
                             ? "the pointer would pass INT64_MAX, or the table of pointers is full"
                             : "the table of pointers is full",
                         op.server);
    }
    if (status == PS_ERR_NO_ENTRY) {
        return psc_error(status,
                         "shared file pointer of %.*s lost: server %u does not know it (it "
                         "restarted since the file was opened, or dropped the pointer after "
                         "an hour unused); set it again (seek_shared) or reopen the file",
                         (int)file->path_len, file->path, op.server);
    }
    if (status == PS_ERR_INVALID) {
        return psc_error(status,
                         "shared file pointer of %.*s: view %u is older than the pointer's "
                         "(this process is still before a set_view that others have finished)",
                         (int)file->path_len, file->path, view);
    }
    if (status != PS_OK) {
        return status;
    }
    if (result != NULL) {
        *result = rep.value;
    }
    return PS_OK;
}

ps_status_t pstripe_sfp_fetch_add(pstripe_file_t *file, uint64_t instance, uint32_t view,
                                  uint64_t incr, uint64_t *old_value)
{
    if (old_value == NULL) {
        return psc_error(PS_ERR_INVALID, "shared file pointer: old_value is NULL");
    }
    return psc_sfp_call(file, instance, view, PS_SFP_FETCH_ADD, incr, old_value);
}

ps_status_t pstripe_sfp_set(pstripe_file_t *file, uint64_t instance, uint32_t view,
                            uint64_t value)
{
    return psc_sfp_call(file, instance, view, PS_SFP_SET, value, NULL);
}

ps_status_t pstripe_sfp_release(pstripe_file_t *file, uint64_t instance)
{
    return psc_sfp_call(file, instance, 0, PS_SFP_RELEASE, 0, NULL);
}

/*
 * pss_mtime.c: a file's modification time, which is its writes' answers'
 * (see pss_mtime.h).
 */
#include "pss_mtime.h"

#include "pss_jobdef.h"

#include "ps_time.h"

static void pss_mtime_now(pss_object_t *obj)
{
    uint64_t now = ps_file_time_ns(); /* (later than a disk write's own stamp) */

    if (now > obj->write_ns) {
        obj->write_ns = now;
    }
}

void pss_mtime_write_answered(pss_job_t *job)
{
    pss_object_t *obj = job->obj;
    int staged = obj->nstaged > 0;

    for (size_t i = 0; i < job->nspans; i++) {
        staged |= job->spans[i].staged;
    }
    for (const pss_job_t *j = obj->active; j != NULL; j = j->next) {
        staged |= j->stage != NULL;
    }
    if (staged) {
        pss_mtime_now(obj);
    }
}

void pss_mtime_flush_done(pss_worker_t *w, pss_object_t *obj)
{
    for (const pss_job_t *j = obj->active; j != NULL; j = j->next) {
        if (j->is_write && j->nbatches > 0) {
            pss_mtime_now(obj);
            break;
        }
    }
    pss_obj_keep_write_time(w, obj);
}

/*
 * pss_mtime.h: a file's modification time, which is its writes' answers',
 * not the disk writes'.
 *
 * A direct write stamps the object's file as the kernel writes it, just
 * before its answer. Staged bytes (pss_stage.h) are answered first and
 * reach the disk later, by age or at a sync; their flush would stamp the
 * file with its own time. So each object keeps write_ns (pss_object.h),
 * the time of its last write answered while staged bytes are involved,
 * from the kernel's coarse clock, which it stamps files with
 * (ps_file_time_ns); OBJ_STAT reports it while it is later than the file's
 * (pss_obj_fill_rep), and a finished flush puts it back on the file
 * (pss_obj_keep_write_time), as the close's cut of a file to its size
 * puts back the time it found.
 */
#ifndef PSS_MTIME_H
#define PSS_MTIME_H

#include "pss_object.h"

/* A client's write job was answered: note its time in its object's
 * write_ns if it staged bytes, or if staged bytes wait or are being
 * flushed (whose flush would hide its own stamp). */
void pss_mtime_write_answered(pss_job_t *job);

/* A flush of obj's staged blocks finished: put write_ns back on the file;
 * if a client's write runs beside it (it may have stamped the file before
 * the flush did, and its answer, with nothing staged left, notes no time),
 * now first. */
void pss_mtime_flush_done(pss_worker_t *w, pss_object_t *obj);

#endif

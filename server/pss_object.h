/*
 * pss_object.h: a worker's objects. Each file's part on this server is one
 * object, DIR/obj/XX/<file_id in hex>, owned by the worker
 * ps_object_worker(file_id): only that thread opens it, queues its
 * requests, plans and issues its I/O, so no lock is needed.
 */
#ifndef PSS_OBJECT_H
#define PSS_OBJECT_H

#include "pss.h"
#include "pss_edge.h"
#include "pss_cache.h"
#include "pss_readahead.h"
#include "pss_share.h"

typedef struct pss_job pss_job_t;

struct pss_object {
    pss_object_t *hnext; /* hash chain */
    uint64_t file_id;
    int fd;
    int exists;
    uint64_t size;      /* logical size, bytes */
    uint64_t phys_size; /* end of the bytes on disk that may hold data: >= size, a
                         * multiple of align; zeros past it (pss_span_prefill) */
    uint64_t file_len;  /* length of the file on disk: >= phys_size (pss_job_extend) */
    int size_attr;      /* the size attribute exists (a file without it is as long as its size) */
    uint64_t saved_size;   /* the size the attribute holds (or the file's length, without one) */
    uint64_t size_grew_ns; /* when size passed the attribute's value, 0: it has not */
    int size_fail_counted; /* a failed store of the size still to store is counted as a
                              failed write (its retries are not) */
    pss_object_t *next_grown; /* worker's list of objects whose attribute is behind */
    pss_req_t *wait_head, **wait_tail;
    pss_job_t *active; /* running jobs (pss_job.c) */
    int dirty;         /* written since the last fdatasync */
    uint64_t unflushed; /* bytes written since its last flush began (pss_flushbehind.c) */
    int flushing;       /* a flush of it runs in the background */
    int size_dirty;    /* size attribute set since the last fsync */
    int blocked;       /* head of the queue waits for a running job */
    int scheduled;
    pss_object_t *next_ready;
    /* write-back stage (pss_stage.c) */
    struct pss_sblock *staged;  /* its staged blocks */
    uint64_t nstaged;           /* how many */
    /* writes answered before the disk that failed there (ps_proto.h, before
     * ps_obj_req_t): how many so far, and the last one's status; kept with
     * the file (PSS_FAILED_XATTR) when it is closed, and in the table while
     * that count is not (failed_saved: the count the file holds) */
    uint64_t failed_writes;
    ps_status_t failed_status;
    uint64_t failed_saved;
    pss_object_t *next_swait;   /* worker's list of objects waiting for stage room */
    int swait;                  /* on that list */
    uint64_t swait_need;        /* blocks its next write adds to the stage */
    uint64_t swait_ns;          /* when it began to wait */
    int swait_futile;           /* another client's write came and needs room too */
    uint64_t swait_skip_until;  /* no wait before then: the last one ran out */
    pss_edges_t edges;  /* edge blocks of recent writes (pss_edge.c) */
    pss_share_t share;  /* reads shared by several clients (pss_share.c) */
    pss_share_t writers; /* several clients write it (pss_share.c) */
    uint64_t spec_joined, spec_missed; /* blocks of short spans written joined, unjoined */
    uint64_t spec_waiting;             /* blocks of short spans staged now (pss_stage.c) */
    pss_cobj_t cache;   /* its bytes in the worker's cache (pss_cache.c) */
    pss_ra_t ra;        /* its forward reads and what was read ahead (pss_readahead.c) */
};

static inline uint64_t pss_round_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

/* The worker's table (and its share of the open-file budget). */
ps_status_t pss_obj_table_init(pss_worker_t *w);
void pss_obj_table_cleanup(pss_worker_t *w);

/* The object of file_id, created (and its file opened if it exists) when
 * first asked for; NULL if out of memory. */
pss_object_t *pss_obj_get(pss_worker_t *w, uint64_t file_id);

/* Put obj on the worker's list of objects with work to (re)consider. */
void pss_obj_schedule(pss_worker_t *w, pss_object_t *obj);

/* Forget an idle object that has no open file (keeps the table small),
 * unless its file could not keep its failed writes (its writers' marks). */
void pss_obj_forget_if_idle(pss_worker_t *w, pss_object_t *obj);

/*
 * Keep the number of open objects of this worker under max_open: close
 * (after fdatasync of written ones) and forget idle objects until a quarter
 * of the budget is free again. They are reopened on their next request.
 */
void pss_obj_trim(pss_worker_t *w);

/* Close every object, syncing what was written, and free them (worker exit). */
void pss_obj_close_all(pss_worker_t *w);

/*
 * Open the object's file (create it if `create`). A missing file without
 * `create` is PS_OK with obj->exists == 0; a missing file whose file was
 * removed less than cap_life ago is PS_ERR_STALE (pss_removed.c).
 */
ps_status_t pss_obj_open(pss_worker_t *w, pss_object_t *obj, int create);

/* Store the logical size in the object's attribute (made durable by fsync). */
ps_status_t pss_obj_save_size(pss_worker_t *w, pss_object_t *obj);

/*
 * A write made the object longer (obj->size is already the new size): the
 * attribute is stored later, by pss_obj_save_grown, by pss_obj_sync, at
 * truncate and at close, so that a stream of appending writes costs no
 * synchronous metadata update each. A server killed in between loses the
 * growth as it loses staged blocks: the writers' next sync fails (the
 * client sees the server's new instance).
 */
void pss_obj_size_grew(pss_worker_t *w, pss_object_t *obj, uint64_t now);

/* A write answered before the disk failed there (OBJ_SYNC and OBJ_FLUSH
 * report it to the writers whose mark is below). */
void pss_obj_write_failed(pss_worker_t *w, pss_object_t *obj, ps_status_t status);

/*
 * Store the attributes of the objects that grew at or before born_by
 * (UINT64_MAX: all); a failure counts as a failed write.
 * Returns when the oldest one left grew, 0 if none is left.
 */
uint64_t pss_obj_save_grown(pss_worker_t *w, uint64_t born_by);

/*
 * Make what was written to the object durable: fdatasync for data, fsync
 * when the size attribute changed since the last time. A failure (of
 * either, or of storing a grown size) counts as a failed write, so that
 * every writer answered before it hears of it.
 */
ps_status_t pss_obj_sync(pss_worker_t *w, pss_object_t *obj);

/*
 * Set the object's logical size (truncate or extend; the object is idle).
 * The file keeps a whole number of blocks: blocks past the new size are
 * dropped, and when the size falls inside a block, the tail of that block
 * is zeroed on disk (read, clear, write back, as the data path does), so
 * that a later extension reads zeros there. A resize to 0 gives the object
 * a new file instead: *old_fd is then the old one's descriptor (unlinked),
 * whose close frees its blocks, for the caller to close; else -1.
 */
ps_status_t pss_obj_resize(pss_worker_t *w, pss_object_t *obj, uint64_t size, int *old_fd);

/*
 * Reserve disk space for the object's first size bytes (the object is
 * idle): fallocate allocates its holes below that, without touching its
 * data, and the logical size grows to size if it was smaller (never
 * shrinks). On a file system without fallocate the file is only extended
 * (sparse). MPI_File_preallocate: writes of other clients queued before or
 * after it keep their bytes.
 */
ps_status_t pss_obj_allocate(pss_worker_t *w, pss_object_t *obj, uint64_t size);

/* Record the removal (pss_removed.c) and unlink the object's file, whose
 * descriptor (opened for it if need be) *old_fd is for the caller to close,
 * which frees the blocks (-1: none); obj stays, empty. */
ps_status_t pss_obj_remove(pss_worker_t *w, pss_object_t *obj, int *old_fd);

/* The OBJ_* reply fields of obj: existence, size, blocks, mtime. */
void pss_obj_fill_rep(pss_object_t *obj, ps_obj_rep_t *rep);

#endif

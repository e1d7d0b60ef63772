/*
 * psc_wbuf.c: write-behind buffers (pstripe_wbuf_*, pstripe.h).
 *
 * A buffer holds an open file's small writes as regions (in the order
 * written, adjacent ones joined) and their bytes, and sends them as one list
 * write flagged PSTRIPE_WRITE_BEHIND: when it is full, without waiting (the
 * bytes go to a second buffer meanwhile, and the next send waits for the
 * one in flight, so writes reach the servers in order), and, waited for,
 * when flushed. Every buffer of the process is on one list, so that
 * pstripe_wbuf_flush_all can send them all (what an MPI layer does before a
 * message leaves the process). A buffer's own mutex covers its state; the
 * list's mutex is taken before a buffer's, never after.
 *
 * A failed send is returned by the call that sent or waited for it and kept
 * (with its message) until a pstripe_wbuf_sync that flushed without a new
 * failure returns it once more: a program learns of a lost write at the
 * sync or close that follows, as the MPI standard has it.
 */
#include "psc_error.h"
#include "psc_request.h"
#include "pstripe.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pstripe_wbuf {
    pstripe_file_t *file;
    pthread_mutex_t lock;
    size_t size;        /* bytes of each of the two buffers */
    size_t max_regions; /* regions a send carries at most */
    char *data;         /* the bytes buffered, in region order */
    size_t used;
    pstripe_region_t *regions;
    size_t nregions, cap;
    uint64_t hi;            /* one past the highest buffered byte */
    pstripe_request_t *req; /* the full buffer being sent, or NULL */
    char *data_out;         /* its bytes and regions (kept until done) */
    pstripe_region_t *regions_out;
    size_t cap_out;
    int dirty;        /* bytes buffered or a send in flight (atomic) */
    ps_status_t kept; /* a failed send not yet returned by a sync */
    char kept_msg[PSC_MSG_MAX];
    struct pstripe_wbuf *prev, *next;
};

static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pstripe_wbuf *all_head;
/* buffers dirty now: pstripe_wbuf_flush_all, called before every message
 * of an MPI program, takes no lock while it is 0 */
static int all_dirty;

ps_status_t pstripe_wbuf_create(pstripe_file_t *file, size_t size, pstripe_wbuf_t **wbuf)
{
    struct pstripe_wbuf *wb;

    if (file == NULL || wbuf == NULL || size == 0) {
        return psc_error(PS_ERR_INVALID, "write-behind buffer: size %zu (at least 1 byte)", size);
    }
    wb = calloc(1, sizeof(*wb));
    if (wb == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "write-behind buffer: out of memory");
    }
    wb->file = file;
    wb->size = size;
    wb->max_regions = size / 16 > 64 ? size / 16 : 64;
    pthread_mutex_init(&wb->lock, NULL);
    pthread_mutex_lock(&all_lock);
    wb->next = all_head;
    if (all_head != NULL) {
        all_head->prev = wb;
    }
    all_head = wb;
    pthread_mutex_unlock(&all_lock);
    *wbuf = wb;
    return PS_OK;
}

/* A failed send: kept (the first one) and returned with its message (made
 * apart first: the calling thread's message is the one it quotes). */
static ps_status_t wb_failed(struct pstripe_wbuf *wb, ps_status_t status)
{
    char msg[PSC_MSG_MAX];

    snprintf(msg, sizeof(msg), "write-behind flush failed: %s", pstripe_last_error());
    if (wb->kept == PS_OK) {
        wb->kept = status;
        memcpy(wb->kept_msg, msg, sizeof(msg));
    }
    return psc_error(status, "%s", msg);
}

/* Wait for the send in flight, if any. */
static ps_status_t wb_wait(struct pstripe_wbuf *wb)
{
    ps_status_t status;

    if (wb->req == NULL) {
        return PS_OK;
    }
    status = pstripe_request_wait(wb->req, NULL);
    wb->req = NULL;
    return status == PS_OK ? PS_OK : wb_failed(wb, status);
}

static void wb_settle_dirty(struct pstripe_wbuf *wb)
{
    int dirty = wb->nregions > 0 || wb->req != NULL;

    if (__atomic_exchange_n(&wb->dirty, dirty, __ATOMIC_ACQ_REL) != dirty) {
        __atomic_add_fetch(&all_dirty, dirty ? 1 : -1, __ATOMIC_RELEASE);
    }
}

/* The buffer is full: send it without waiting (after the send before it)
 * and take the other buffer. */
static ps_status_t wb_start(struct pstripe_wbuf *wb)
{
    struct iovec iov = {wb->data, wb->used};
    ps_status_t err = wb_wait(wb), status;
    pstripe_region_t *regions = wb->regions;
    char *data = wb->data;
    size_t cap = wb->cap;

    status = pstripe_iwrite_list_flags(wb->file, wb->regions, wb->nregions, &iov, 1,
                                       PSTRIPE_WRITE_BEHIND, &wb->req);
    if (status != PS_OK) {
        wb->req = NULL;
        status = wb_failed(wb, status);
        err = err != PS_OK ? err : status;
    }
    wb->data = wb->data_out, wb->regions = wb->regions_out, wb->cap = wb->cap_out;
    wb->data_out = data, wb->regions_out = regions, wb->cap_out = cap;
    wb->nregions = 0;
    wb->used = 0;
    return err;
}

/* Send what is buffered and wait (after the send in flight). */
static ps_status_t wb_flush(struct pstripe_wbuf *wb)
{
    struct iovec iov = {wb->data, wb->used};
    ps_status_t err = wb_wait(wb), status;

    if (wb->nregions > 0) {
        status = pstripe_write_list_flags(wb->file, wb->regions, wb->nregions, &iov, 1,
                                          PSTRIPE_WRITE_BEHIND);
        if (status != PS_OK) {
            status = wb_failed(wb, status);
            err = err != PS_OK ? err : status;
        }
    }
    wb->nregions = 0;
    wb->used = 0;
    wb_settle_dirty(wb);
    return err;
}

/* Copy a write in (it fits: bytes and regions). */
static ps_status_t wb_append(struct pstripe_wbuf *wb, const pstripe_region_t *regions, size_t n,
                             const struct iovec *mem, size_t nmem, uint64_t total)
{
    pstripe_region_t *last, *grown;
    size_t i, cap;
    char *to;

    if (wb->data == NULL && (wb->data = pstripe_buffer_alloc(wb->size, NULL)) == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "write-behind buffer: out of memory");
    }
    if (wb->nregions + n > wb->cap) {
        cap = 2 * wb->cap > wb->nregions + n ? 2 * wb->cap : wb->nregions + n;
        grown = realloc(wb->regions, cap * sizeof(*grown));
        if (grown == NULL) {
            return psc_error(PS_ERR_NO_MEMORY, "write-behind buffer: out of memory");
        }
        wb->regions = grown, wb->cap = cap;
    }
    if (wb->used == 0) {
        wb->hi = 0;
    }
    for (i = 0; i < n; i++) {
        if (regions[i].length == 0) {
            continue;
        }
        last = wb->nregions > 0 ? &wb->regions[wb->nregions - 1] : NULL;
        if (last != NULL && last->offset + last->length == regions[i].offset) {
            last->length += regions[i].length; /* the bytes are adjacent too */
        } else {
            wb->regions[wb->nregions++] = regions[i];
        }
        if (regions[i].offset + regions[i].length > wb->hi) {
            wb->hi = regions[i].offset + regions[i].length;
        }
    }
    to = wb->data + wb->used;
    for (i = 0; i < nmem; i++) {
        memcpy(to, mem[i].iov_base, mem[i].iov_len);
        to += mem[i].iov_len;
    }
    wb->used += (size_t)total;
    return PS_OK;
}

/* Does a write reach past the file offset below which every byte lies
 * under the servers' object limit (whole rows of stripes)? Such a write is
 * not buffered: it must fail in its own call, not at the flush, where it
 * failed the whole batch and lost the good writes buffered with it. */
static int wb_past_limit(const pstripe_wbuf_t *wb, const pstripe_region_t *regions, size_t n)
{
    const ps_layout_t *l = &wb->file->layout;
    uint64_t end = PS_MAX_OBJ_SIZE / l->stripe_size * l->stripe_size * l->stripe_count;

    for (size_t i = 0; i < n; i++) {
        if (regions[i].length > 0 && regions[i].offset + regions[i].length > end) {
            return 1; /* (psc_io_check refused a sum that overflows) */
        }
    }
    return 0;
}

ps_status_t pstripe_wbuf_write(pstripe_wbuf_t *wb, const pstripe_region_t *regions, size_t n,
                               const struct iovec *mem, size_t nmem, int *taken)
{
    psc_args_t args = {regions, NULL, n, PSTRIPE_WRITE_BEHIND};
    uint64_t total;
    ps_status_t status;

    *taken = 0;
    status = psc_io_check(wb->file, 1, &args, mem, nmem, &total);
    if (status != PS_OK) {
        return status;
    }
    pthread_mutex_lock(&wb->lock);
    if (total > wb->size / 4 || n > wb->max_regions / 4 || wb_past_limit(wb, regions, n)) {
        status = wb_flush(wb); /* a direct write comes after every buffered one */
        pthread_mutex_unlock(&wb->lock);
        return status;
    }
    if (wb->used > 0 && (wb->used + total > wb->size || wb->nregions + n > wb->max_regions)) {
        status = wb_start(wb);
    }
    if (status == PS_OK) {
        status = wb_append(wb, regions, n, mem, nmem, total);
        *taken = status == PS_OK;
    }
    wb_settle_dirty(wb);
    pthread_mutex_unlock(&wb->lock);
    return status;
}

ps_status_t pstripe_wbuf_flush(pstripe_wbuf_t *wb)
{
    ps_status_t status;

    if (wb == NULL || !__atomic_load_n(&wb->dirty, __ATOMIC_ACQUIRE)) {
        return PS_OK;
    }
    pthread_mutex_lock(&wb->lock);
    status = wb_flush(wb);
    pthread_mutex_unlock(&wb->lock);
    return status;
}

ps_status_t pstripe_wbuf_flush_for_read(pstripe_wbuf_t *wb, uint64_t offset)
{
    ps_status_t status = PS_OK;

    if (wb == NULL || !__atomic_load_n(&wb->dirty, __ATOMIC_ACQUIRE)) {
        return PS_OK;
    }
    pthread_mutex_lock(&wb->lock);
    status = wb_wait(wb);
    /* bytes at or past the read's start may be read, or extend the file
     * over it; bytes below it are neither */
    if (wb->nregions > 0 && wb->hi > offset) {
        ps_status_t flushed = wb_flush(wb);

        status = status != PS_OK ? status : flushed;
    }
    wb_settle_dirty(wb);
    pthread_mutex_unlock(&wb->lock);
    return status;
}

ps_status_t pstripe_wbuf_sync(pstripe_wbuf_t *wb)
{
    ps_status_t status;

    if (wb == NULL) {
        return PS_OK;
    }
    pthread_mutex_lock(&wb->lock);
    status = wb_flush(wb);
    if (status == PS_OK && wb->kept != PS_OK) {
        status = psc_error(wb->kept, "%s", wb->kept_msg);
        wb->kept = PS_OK;
    }
    pthread_mutex_unlock(&wb->lock);
    return status;
}

ps_status_t pstripe_wbuf_resize(pstripe_wbuf_t *wb, size_t size)
{
    ps_status_t status;

    if (wb == NULL || size == 0) {
        return psc_error(PS_ERR_INVALID, "write-behind buffer: size %zu (at least 1 byte)", size);
    }
    pthread_mutex_lock(&wb->lock);
    status = wb_flush(wb);
    if (size != wb->size) { /* both buffers are made again at their next use */
        pstripe_buffer_free(wb->data);
        pstripe_buffer_free(wb->data_out);
        wb->data = wb->data_out = NULL;
        wb->size = size;
        wb->max_regions = size / 16 > 64 ? size / 16 : 64;
    }
    pthread_mutex_unlock(&wb->lock);
    return status;
}

int pstripe_wbuf_pending(const pstripe_wbuf_t *wb)
{
    if (wb == NULL) {
        return __atomic_load_n(&all_dirty, __ATOMIC_ACQUIRE) > 0;
    }
    return __atomic_load_n(&wb->dirty, __ATOMIC_ACQUIRE);
}

/* fn on every buffer (all of them, or the dirty ones): the first failure,
 * and how many failed. */
static ps_status_t each_buffer(ps_status_t (*fn)(pstripe_wbuf_t *), int all, int *nfailed)
{
    ps_status_t status = PS_OK, one;
    struct pstripe_wbuf *wb;

    *nfailed = 0;
    if (!all && __atomic_load_n(&all_dirty, __ATOMIC_ACQUIRE) == 0) {
        return PS_OK;
    }
    pthread_mutex_lock(&all_lock);
    for (wb = all_head; wb != NULL; wb = wb->next) {
        one = fn(wb);
        *nfailed += one != PS_OK;
        status = status != PS_OK ? status : one;
    }
    pthread_mutex_unlock(&all_lock);
    return status;
}

ps_status_t pstripe_wbuf_flush_all(void)
{
    int nfailed;

    return each_buffer(pstripe_wbuf_flush, 0, &nfailed);
}

/* Sync, then forget a failure the sync's own flush kept. */
static ps_status_t wb_sync_forget(pstripe_wbuf_t *wb)
{
    ps_status_t status = pstripe_wbuf_sync(wb);

    pthread_mutex_lock(&wb->lock);
    wb->kept = PS_OK;
    pthread_mutex_unlock(&wb->lock);
    return status;
}

int pstripe_wbuf_sync_all(void)
{
    int nfailed;

    (void)each_buffer(wb_sync_forget, 1, &nfailed);
    return nfailed;
}

ps_status_t pstripe_wbuf_free(pstripe_wbuf_t *wb)
{
    ps_status_t status;

    if (wb == NULL) {
        return PS_OK;
    }
    pthread_mutex_lock(&all_lock);
    if (wb->prev != NULL) {
        wb->prev->next = wb->next;
    } else {
        all_head = wb->next;
    }
    if (wb->next != NULL) {
        wb->next->prev = wb->prev;
    }
    pthread_mutex_unlock(&all_lock);
    status = pstripe_wbuf_sync(wb);
    pstripe_buffer_free(wb->data);
    pstripe_buffer_free(wb->data_out);
    free(wb->regions);
    free(wb->regions_out);
    pthread_mutex_destroy(&wb->lock);
    free(wb);
    return status;
}

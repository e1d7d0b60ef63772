/*
 * psc_seen.c: what the servers' answers told about a file handle's writes
 * (psc_file_seen_t), which fsync and close ask about (psc_sync.c). Write
 * answers come from any thread that drives progress, checks from the
 * caller's: the per-server records change under the record's lock.
 */
#include <pthread.h>
#include <stdlib.h>

#include "psc_internal.h"

psc_file_seen_t *psc_file_seen_new(uint32_t nservers, uint32_t ntargets)
{
    psc_file_seen_t *seen = calloc(1, sizeof(*seen) + 3 * nservers * sizeof(uint64_t) + ntargets);

    if (seen != NULL) {
        seen->refs = 1;
        pthread_mutex_init(&seen->lock, NULL);
        seen->wrote_instance = (uint64_t *)(seen + 1);
        seen->failed_mark = seen->wrote_instance + nservers;
        seen->answers = seen->failed_mark + nservers;
        seen->read_disk = (uint8_t *)(seen->answers + nservers);
    }
    return seen;
}

psc_file_seen_t *psc_file_seen_hold(psc_file_seen_t *seen)
{
    __atomic_add_fetch(&seen->refs, 1, __ATOMIC_RELAXED);
    return seen;
}

void psc_file_seen_drop(psc_file_seen_t *seen)
{
    if (__atomic_sub_fetch(&seen->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        pthread_mutex_destroy(&seen->lock);
        free(seen);
    }
}

void psc_file_seen_wrote(psc_file_seen_t *seen, uint32_t s, uint64_t instance, uint64_t failed)
{
    pthread_mutex_lock(&seen->lock);
    if (seen->wrote_instance[s] == 0) {
        seen->wrote_instance[s] = instance;
        seen->failed_mark[s] = failed;
    } else if (failed < seen->failed_mark[s]) {
        seen->failed_mark[s] = failed;
    }
    seen->answers[s]++;
    pthread_mutex_unlock(&seen->lock);
}

psc_asked_t psc_file_seen_ask(psc_file_seen_t *seen, uint32_t s)
{
    psc_asked_t a;

    pthread_mutex_lock(&seen->lock);
    a.instance = seen->wrote_instance[s];
    a.mark = seen->failed_mark[s];
    a.answers = seen->answers[s];
    pthread_mutex_unlock(&seen->lock);
    return a;
}

/* The server may have staged a write acknowledged while the check asked
 * after it answered the check, so such a write's loss is left for the next
 * check to hear (a failure that coincides may then be reported twice,
 * never not at all). */
void psc_file_seen_checked(psc_file_seen_t *seen, uint32_t s, const psc_asked_t *asked)
{
    pthread_mutex_lock(&seen->lock);
    if (seen->answers[s] == asked->answers && seen->wrote_instance[s] == asked->instance) {
        seen->wrote_instance[s] = 0;
    }
    pthread_mutex_unlock(&seen->lock);
}

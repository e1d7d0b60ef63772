/*
 * psc_preconnect.c: connecting ahead (pstripe_preconnect_*, pstripe.h).
 *
 * An MPI library starts the connection when it is loaded, in a thread of
 * its own beside MPI_Init, and the process's first pstripe call takes it:
 * connecting costs 15-30 ms of CPU on a 2-vCPU host (UCX's context, 5 ms,
 * and worker, 2 ms; then each server's endpoint, HELLO and AUTH), which
 * was all the first MPI_File_open's before (session 60: a first open of 2
 * processes, 2 local servers of 2 workers, 20-38 ms without, 2.1-2.6 ms
 * with the workers' endpoints made ahead too). A failure is kept with its
 * message for the first call, which reports it as its own; a forked child
 * forgets the thread (it has no use for the parent's UCX), and a
 * connection nobody took is closed at exit.
 */
#include "psc_error.h"
#include "pstripe.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    pthread_t thread;
    int started; /* a thread to join */
    int max_workers;
    ps_status_t status;
    pstripe_fs_t *fs; /* the connection, status PS_OK */
    char msg[PSC_MSG_MAX];
} pre;

static void *preconnect_run(void *arg)
{
    (void)arg;
    pre.status = pstripe_connect(NULL, &pre.fs);
    if (pre.status == PS_OK) {
        (void)pstripe_connect_workers(pre.fs, pre.max_workers);
    } else {
        snprintf(pre.msg, sizeof(pre.msg), "%s", pstripe_last_error());
    }
    return NULL;
}

static void preconnect_forget(void)
{
    pre.started = 0;
    pre.fs = NULL;
}

void pstripe_preconnect_start(int max_workers)
{
    static int atfork;
    const char *env = getenv("PSTRIPE_PRECONNECT");

    if (pre.started || (env != NULL && strcmp(env, "0") == 0)) {
        return;
    }
    if (!atfork++) {
        pthread_atfork(NULL, NULL, preconnect_forget);
    }
    pre.max_workers = max_workers;
    pre.started = pthread_create(&pre.thread, NULL, preconnect_run, NULL) == 0;
}

int pstripe_preconnect_take(pstripe_fs_t **fs, ps_status_t *status)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int started;

    pthread_mutex_lock(&lock);
    started = pre.started;
    if (started) {
        pthread_join(pre.thread, NULL);
        pre.started = 0;
        *status = pre.status;
        if (pre.status == PS_OK) {
            *fs = pre.fs;
        } else {
            psc_set_error("%s", pre.msg);
        }
        pre.fs = NULL;
    }
    pthread_mutex_unlock(&lock);
    return started;
}

/* A program that never used pstripe: close the connection at exit (before
 * UCX's own destructors, whose libraries were loaded before this one). */
__attribute__((destructor)) static void preconnect_end(void)
{
    pstripe_fs_t *fs = NULL;
    ps_status_t status;

    if (pstripe_preconnect_take(&fs, &status) && status == PS_OK) {
        pstripe_disconnect(fs);
    }
}

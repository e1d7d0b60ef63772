/*
 * aio_refuse.c: preloaded into a pstripe-server by test_server
 * (LD_PRELOAD): libaio's io_submit refuses every I/O (EAGAIN, as when the
 * kernel has no room for more) while the file named by $PSTEST_AIO_REFUSE
 * exists, and submits as usual otherwise. The server's I/O that the kernel
 * refuses at submission completes inside its start, the one path where a
 * job finishes before the code that started it returns.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <libaio.h>
#include <stdlib.h>
#include <unistd.h>

int io_submit(io_context_t ctx, long nr, struct iocb *iocbs[])
{
    static int (*real)(io_context_t, long, struct iocb *[]);
    const char *trigger = getenv("PSTEST_AIO_REFUSE");

    if (trigger != NULL && access(trigger, F_OK) == 0) {
        return -EAGAIN;
    }
    if (real == NULL) {
        real = (int (*)(io_context_t, long, struct iocb *[]))dlsym(RTLD_NEXT, "io_submit");
    }
    return real != NULL ? real(ctx, nr, iocbs) : -ENOSYS;
}

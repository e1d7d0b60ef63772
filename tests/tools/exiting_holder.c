/*
 * exiting_holder FILE SECONDS: flock FILE (waiting for it), then let the
 * main thread exit (pthread_exit) while a second thread keeps the process,
 * and with it the lock, for SECONDS. Meanwhile the process looks like a daemon killed while
 * its threads finish their disk I/O: its leader is a zombie, its command
 * line is gone, its files are still open. tests/tools/local.sh puts its pid
 * in a server's pid file: `pstripe local start` must wait for it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

static unsigned hold_seconds;

static void *hold(void *arg)
{
    (void)arg;
    sleep(hold_seconds);
    exit(0);
}

int main(int argc, char **argv)
{
    pthread_t t;
    int fd;

    if (argc != 3) {
        fprintf(stderr, "usage: exiting_holder FILE SECONDS\n");
        return 2;
    }
    hold_seconds = (unsigned)atoi(argv[2]);
    fd = open(argv[1], O_RDWR | O_CREAT, 0644);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) { /* after the killed daemon let go */
        perror(argv[1]);
        return 1;
    }
    if (pthread_create(&t, NULL, hold, NULL) != 0) {
        fprintf(stderr, "exiting_holder: pthread_create failed\n");
        return 1;
    }
    pthread_exit(NULL);
}

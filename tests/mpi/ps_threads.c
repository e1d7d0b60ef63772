/*
 * ps_threads: small writes in one thread while another calls MPI_Barrier
 * (MPI_THREAD_MULTIPLE), checked against a byte model of the file.
 *
 * The driver's MPI_Barrier (and every call that sends a message) sends
 * every handle's write-behind buffer first; a barrier in one thread must
 * not race a write that is filling the same buffer in another. Each
 * process runs two threads: the main thread writes ROUNDS small pieces of
 * its own area
 * (with a small write-behind buffer, which also fills now and then), reads
 * every 500th piece back at once, and rewrites every 7th piece with new
 * data; the barrier thread calls MPI_Barrier on a communicator of its own
 * until every main thread is done. The main thread writes BURST pieces
 * after each start of a barrier, so that writes and flushes overlap (the
 * driver without a lock in the flush: 5 runs of 5 failed, with lost
 * bytes, a flush error or a double free). Then a message sent by a second
 * thread while the main thread waits in a collective write, for that
 * message (it must not wait for the write; with ROMIO's lock in the flush
 * it hung until the alarm);
 * then a second file opened, written and closed OC_ROUNDS times while the
 * barrier thread's barriers flush every open file;
 * then, on a file of each process's own, HOLE_ROUNDS reads of a hole
 * below the process's own buffered write, past the servers' end of file,
 * while a second thread's messages flush that write at any moment: each
 * must count all its bytes and read zeros (a read sent before such a
 * flush came back short and, the buffer then empty, was not read again:
 * the driver before the fix returned fewer bytes).
 * Checked: after both threads, sync-barrier-sync, every process reads the
 * whole file; after close and open, again.
 */
#include "pstest.h"

#include <pthread.h>
#include <unistd.h>

#define PIECE 40        /* bytes per write */
#define STEP 56         /* between pieces */
#define ROUNDS 3000     /* writes per process */
#define AREA ((MPI_Offset) ROUNDS * STEP)
#define BURST 50        /* writes between the starts of two barriers, at least */
#define OC_ROUNDS 16    /* opens and closes of a second file under barriers */
#define HOLE_ROUNDS 1500        /* reads of a hole below a buffered write */
#define HOLE_LEN 100    /* bytes read at each, and written HOLE_LEN after them */

static unsigned char *model;    /* the whole file as it must be */
static MPI_Offset fsize;
static MPI_Comm barrier_comm;
static int writes_done;         /* set by the main thread, read by the barrier thread */
static int nbarriers;           /* made by the barrier thread, in all */
static int barriers_started;    /* by the barrier thread, read by the main thread */

static MPI_Offset piece_off(int rank, int i)
{
    return (MPI_Offset) rank * AREA + (MPI_Offset) i * STEP;
}

static void model_write(MPI_Offset off, int len, unsigned seed)
{
    ps_fill(model + off, len, (uint64_t) off, seed);
    fsize = PS_MAX(fsize, off + len);
}

/* Barriers until every main thread is done writing (checked every 8th,
 * so that all barrier threads stop after the same count). */
static void *barrier_thread(void *arg)
{
    int mine, all = 0, i;

    (void) arg;
    for (i = 0; !all; i++) {
        __atomic_add_fetch(&barriers_started, 1, __ATOMIC_RELEASE);
        PS_MPI(MPI_Barrier(barrier_comm));
        usleep(200);    /* the writer's turn: its buffer fills between barriers */
        if (i % 8 == 7) {
            mine = __atomic_load_n(&writes_done, __ATOMIC_ACQUIRE);
            PS_MPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, barrier_comm));
        }
    }
    nbarriers += i;
    return NULL;
}

static void write_piece(MPI_File fh, MPI_Offset off, unsigned seed)
{
    unsigned char buf[PIECE];
    MPI_Status st;

    ps_fill(buf, PIECE, (uint64_t) off, seed);
    PS_MPI(MPI_File_write_at(fh, off, buf, PIECE, MPI_BYTE, &st));
}

static void read_check(MPI_File fh, MPI_Offset off, MPI_Offset len, const char *what)
{
    unsigned char *buf = malloc(len);
    MPI_Status st;
    int n;

    PS_MPI(MPI_File_read_at(fh, off, buf, (int) len, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    PS_CHECK(n == len, "%s: read %d of %lld bytes", what, n, (long long) len);
    ps_compare(buf, model + off, len, what);
    free(buf);
}

/* Piece at off was just written (seed 1; its rewrite comes later). */
static void read_own(MPI_File fh, MPI_Offset off)
{
    unsigned char buf[PIECE], want[PIECE];
    MPI_Status st;
    int n;

    PS_MPI(MPI_File_read_at(fh, off, buf, PIECE, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    PS_CHECK(n == PIECE, "own write, read at once: read %d of %d bytes", n, PIECE);
    ps_fill(want, PIECE, (uint64_t) off, 1);
    ps_compare(buf, want, PIECE, "own write, read at once");
}

/* Wait until the barrier thread starts its next barrier, then go on
 * writing while it flushes. */
static void wait_barrier_start(void)
{
    int next = __atomic_load_n(&barriers_started, __ATOMIC_ACQUIRE) + 1;

    while (__atomic_load_n(&barriers_started, __ATOMIC_ACQUIRE) < next)
        usleep(20);
}

/* The main thread's writes; every process models every process's. */
static void write_area(MPI_File fh)
{
    int i, p;

    for (i = 0; i < ROUNDS; i++) {
        if (i % BURST == 0)
            wait_barrier_start();
        write_piece(fh, piece_off(ps_rank, i), 1);
        if (i % 7 == 6)
            write_piece(fh, piece_off(ps_rank, i - 3), 2);
        if (i % 500 == 499)
            read_own(fh, piece_off(ps_rank, i));
    }
    for (p = 0; p < ps_nprocs; p++)
        for (i = 0; i < ROUNDS; i++) {
            model_write(piece_off(p, i), PIECE, 1);
            if (i % 7 == 6)
                model_write(piece_off(p, i - 3), PIECE, 2);
        }
}

/* Rank 0's second thread sends rank 1 the message that lets rank 1 join
 * the collective write that rank 0's main thread is already in. */
static void *send_thread(void *arg)
{
    int token = 1;

    (void) arg;
    usleep(100000);     /* the main thread waits in the collective by now */
    PS_MPI(MPI_Send(&token, 1, MPI_INT, 1, 9, barrier_comm));
    return NULL;
}

/* A message sent while another thread is in a collective file call must
 * not wait for that call (the message's flush takes no lock a file call
 * holds): rank 1 joins the collective only once rank 0's other thread
 * has sent it a message. A hang here fails by the alarm. */
static void message_during_collective(MPI_File fh)
{
    unsigned char buf[PIECE];
    MPI_Offset off = piece_off(ps_rank, 1);
    MPI_Status st;
    pthread_t tid;
    int token, p;

    if (ps_nprocs < 2)
        return;
    ps_fill(buf, PIECE, (uint64_t) off, 3);
    alarm(60);
    if (ps_rank == 0)
        PS_CHECK(pthread_create(&tid, NULL, send_thread, NULL) == 0, "pthread_create");
    if (ps_rank == 1)
        PS_MPI(MPI_Recv(&token, 1, MPI_INT, 0, 9, barrier_comm, MPI_STATUS_IGNORE));
    PS_MPI(MPI_File_write_at_all(fh, off, buf, PIECE, MPI_BYTE, &st));
    if (ps_rank == 0)
        PS_CHECK(pthread_join(tid, NULL) == 0, "pthread_join");
    alarm(0);
    for (p = 0; p < ps_nprocs; p++)
        model_write(piece_off(p, 1), PIECE, 3);
}

/* Files opened, written and closed by the main thread while the barrier
 * thread's barriers flush every open file (the list of open files
 * changes under the flush). Each round's small write must be in the
 * file after it. */
static void open_close_during_barriers(const char *fname, MPI_Info info)
{
    unsigned char buf[PIECE], want[PIECE];
    char oc[1024];
    MPI_Offset off;
    MPI_Status st;
    MPI_File fh;
    pthread_t tid;
    int i, p;

    ps_fname(oc, sizeof(oc), fname, ".oc");
    if (ps_rank == 0)
        MPI_File_delete(oc, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    __atomic_store_n(&writes_done, 0, __ATOMIC_RELEASE);
    PS_CHECK(pthread_create(&tid, NULL, barrier_thread, NULL) == 0, "pthread_create");
    for (i = 0; i < OC_ROUNDS; i++) {
        PS_MPI(MPI_File_open(MPI_COMM_WORLD, oc, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
        write_piece(fh, ((MPI_Offset) ps_rank * OC_ROUNDS + i) * STEP, 7);
        PS_MPI(MPI_File_close(&fh));
    }
    __atomic_store_n(&writes_done, 1, __ATOMIC_RELEASE);
    PS_CHECK(pthread_join(tid, NULL) == 0, "pthread_join");
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, oc, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (p = 0; p < ps_nprocs; p++)
        for (i = 0; i < OC_ROUNDS; i++) {
            off = ((MPI_Offset) p * OC_ROUNDS + i) * STEP;
            PS_MPI(MPI_File_read_at(fh, off, buf, PIECE, MPI_BYTE, &st));
            ps_fill(want, PIECE, (uint64_t) off, 7);
            ps_compare(buf, want, PIECE, "a write before a close, while barriers flushed");
        }
    PS_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (ps_rank == 0)
        MPI_File_delete(oc, MPI_INFO_NULL);
}

static MPI_Comm self_comm;
static int holes_done;          /* set by the main thread, read by the flush thread */

/* Messages to itself (each flushes every handle's buffer) at random
 * moments, until the main thread is done. */
static void *flush_thread(void *arg)
{
    unsigned seed = 12345u + (unsigned) ps_rank;
    int out = 1, in;

    (void) arg;
    while (!__atomic_load_n(&holes_done, __ATOMIC_ACQUIRE)) {
        PS_MPI(MPI_Sendrecv(&out, 1, MPI_INT, 0, 5, &in, 1, MPI_INT, 0, 5, self_comm,
                            MPI_STATUS_IGNORE));
        usleep(rand_r(&seed) % 150);
    }
    return NULL;
}

/* Round i writes HOLE_LEN bytes at base + 2 * HOLE_LEN (buffered), then
 * reads [base, base + HOLE_LEN): below its own write, so all of it counts
 * and reads as zeros, whatever the servers had when the read reached them
 * (their end of file is round i - 1's write, below base). */
static void hole_reads_during_flushes(const char *fname, MPI_Info info)
{
    unsigned char buf[HOLE_LEN], zero[HOLE_LEN] = {0};
    char own[1024], tag[32];
    MPI_Offset base;
    MPI_Status st;
    MPI_File fh;
    pthread_t tid;
    int i, n;

    snprintf(tag, sizeof(tag), ".hole%d", ps_rank);
    ps_fname(own, sizeof(own), fname, tag);
    MPI_File_delete(own, MPI_INFO_NULL);
    MPI_Info_set(info, "romio_pstripe_read_cache", "disable");
    PS_MPI(MPI_File_open(MPI_COMM_SELF, own, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Comm_dup(MPI_COMM_SELF, &self_comm);
    PS_CHECK(pthread_create(&tid, NULL, flush_thread, NULL) == 0, "pthread_create");
    for (i = 0; i < HOLE_ROUNDS; i++) {
        base = (MPI_Offset) i * 4 * HOLE_LEN;
        ps_fill(buf, HOLE_LEN, (uint64_t) base, 9);
        PS_MPI(MPI_File_write_at(fh, base + 2 * HOLE_LEN, buf, HOLE_LEN, MPI_BYTE, &st));
        memset(buf, 0xee, HOLE_LEN);
        PS_MPI(MPI_File_read_at(fh, base, buf, HOLE_LEN, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &n);
        PS_CHECK(n == HOLE_LEN, "round %d: a hole below the own buffered write: read %d of %d",
                 i, n, HOLE_LEN);
        ps_compare(buf, zero, HOLE_LEN, "a hole below the own buffered write");
    }
    __atomic_store_n(&holes_done, 1, __ATOMIC_RELEASE);
    PS_CHECK(pthread_join(tid, NULL) == 0, "pthread_join");
    MPI_Comm_free(&self_comm);
    PS_MPI(MPI_File_close(&fh));
    MPI_File_delete(own, MPI_INFO_NULL);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    MPI_Info info = ps_test_info();
    pthread_t tid;
    MPI_File fh;

    model = calloc((size_t) AREA * ps_nprocs, 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &barrier_comm);
    MPI_Info_set(info, "romio_pstripe_write_behind", "enable");
    MPI_Info_set(info, "romio_pstripe_wb_buffer_size", "16384");
    if (ps_rank == 0)
        MPI_File_delete(fname, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));

    PS_CHECK(pthread_create(&tid, NULL, barrier_thread, NULL) == 0, "pthread_create");
    write_area(fh);
    __atomic_store_n(&writes_done, 1, __ATOMIC_RELEASE);
    PS_CHECK(pthread_join(tid, NULL) == 0, "pthread_join");

    message_during_collective(fh);
    open_close_during_barriers(fname, info);
    hole_reads_during_flushes(fname, info);

    PS_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PS_MPI(MPI_File_sync(fh));
    read_check(fh, 0, fsize, "every process's writes after sync-barrier-sync");
    PS_MPI(MPI_File_close(&fh));

    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    read_check(fh, 0, fsize, "after close and open");
    PS_MPI(MPI_File_close(&fh));

    MPI_Comm_free(&barrier_comm);
    MPI_Info_free(&info);
    free(model);
    if (ps_rank == 0)
        printf("ps_threads: %d processes, %d writes and %d barriers each: PASS\n", ps_nprocs,
               ROUNDS, nbarriers);
    MPI_Finalize();
    return 0;
}

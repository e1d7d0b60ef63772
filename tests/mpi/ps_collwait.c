/*
 * ps_collwait: the program's blocking collectives while a file is open.
 *
 * With a pstripe file open and a server on this host (the test cluster),
 * the driver's library runs each blocking collective as its nonblocking
 * form and waits for it with a short spin and then sleeps
 * (ad_pstripe_sync.c), so that a process that arrived first does not take
 * a CPU from the servers. Checked here, with the file open:
 *
 * - the results of every kind of blocking collective (rooted, all-to-all,
 *   reductions in place and not, scans, vector forms, large-count forms),
 *   on MPI_COMM_WORLD and on a split communicator;
 * - an erroneous call (a root out of range) still fails with its error
 *   class, under MPI_ERRORS_RETURN;
 * - on pstripe with 2 or more processes: rank 0, waiting in MPI_Barrier,
 *   MPI_Allreduce, MPI_File_set_view (whose first wait is ROMIO's
 *   collective check of the info argument) and MPI_File_read_at_all (the
 *   driver's gather of the processes' ranges) for the last rank, which
 *   sleeps WAIT_S first, spends
 *   less than a third of that wait on its CPU (MPICH's own wait polls the
 *   whole time: the same program on ufs: uses a CPU for all of it, which
 *   is printed, not checked).
 *
 * First, with 2 or more processes, the same collectives while rank 0
 * alone has a file open (its own, on MPI_COMM_SELF), so that it waits
 * politely and the others do not: MPI never matches a blocking collective
 * with a nonblocking one, and a driver that started the blocking form
 * where it does not wait politely hung at the first barrier (an alarm
 * ends the test then).
 *
 * Each process then writes its block of the file (compared with ufs by
 * mpi-tests) and reads it back.
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "pstest.h"

#define N 1000
#define WAIT_S 0.5

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* Every kind of blocking collective on comm, results checked. */
static void check_collectives(MPI_Comm comm)
{
    int rank, size, i, j, root;
    int *v, *w, *counts, *displs;
    long long sum;
    MPI_Count cnt = N;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    root = size - 1;
    v = malloc((size_t) N * size * sizeof(int));
    w = malloc((size_t) N * size * sizeof(int));
    counts = malloc(size * sizeof(int));
    displs = malloc(size * sizeof(int));

    PS_MPI(MPI_Barrier(comm));

    for (i = 0; i < N; i++)
        v[i] = rank == root ? i * 3 + 1 : -1;
    PS_MPI(MPI_Bcast(v, N, MPI_INT, root, comm));
    for (i = 0; i < N; i++)
        PS_CHECK(v[i] == i * 3 + 1, "Bcast: v[%d] = %d", i, v[i]);
    for (i = 0; i < N; i++)
        v[i] = rank == 0 ? i + 7 : 0;
    PS_MPI(MPI_Bcast_c(v, cnt, MPI_INT, 0, comm));
    for (i = 0; i < N; i++)
        PS_CHECK(v[i] == i + 7, "Bcast_c: v[%d] = %d", i, v[i]);

    for (i = 0; i < N; i++)
        v[i] = rank + i;
    PS_MPI(MPI_Allreduce(v, w, N, MPI_INT, MPI_SUM, comm));
    for (i = 0; i < N; i++)
        PS_CHECK(w[i] == size * (size - 1) / 2 + size * i, "Allreduce: w[%d] = %d", i, w[i]);
    PS_MPI(MPI_Allreduce(MPI_IN_PLACE, v, N, MPI_INT, MPI_MAX, comm));
    for (i = 0; i < N; i++)
        PS_CHECK(v[i] == size - 1 + i, "Allreduce in place: v[%d] = %d", i, v[i]);
    sum = rank + 1;
    PS_MPI(MPI_Allreduce_c(MPI_IN_PLACE, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm));
    PS_CHECK(sum == (long long) size * (size + 1) / 2, "Allreduce_c: %lld", sum);

    for (i = 0; i < N; i++)
        v[i] = rank * i;
    PS_MPI(MPI_Reduce(v, w, N, MPI_INT, MPI_SUM, root, comm));
    for (i = 0; i < N && rank == root; i++)
        PS_CHECK(w[i] == i * size * (size - 1) / 2, "Reduce: w[%d] = %d", i, w[i]);

    for (i = 0; i < N; i++)
        v[i] = rank * N + i;
    PS_MPI(MPI_Allgather(v, N, MPI_INT, w, N, MPI_INT, comm));
    for (i = 0; i < N * size; i++)
        PS_CHECK(w[i] == i, "Allgather: w[%d] = %d", i, w[i]);
    PS_MPI(MPI_Gather(v, N, MPI_INT, w, N, MPI_INT, 0, comm));
    for (i = 0; i < N * size && rank == 0; i++)
        PS_CHECK(w[i] == i, "Gather: w[%d] = %d", i, w[i]);
    for (j = 0; j < size; j++) {
        counts[j] = j + 1;
        displs[j] = j * (j + 1) / 2;
    }
    PS_MPI(MPI_Allgatherv(v, rank + 1, MPI_INT, w, counts, displs, MPI_INT, comm));
    for (j = 0; j < size; j++)
        for (i = 0; i <= j; i++)
            PS_CHECK(w[displs[j] + i] == j * N + i, "Allgatherv: rank %d's %d", j, i);

    for (i = 0; i < N * size; i++)
        v[i] = rank == root ? i : -1;
    PS_MPI(MPI_Scatter(v, N, MPI_INT, w, N, MPI_INT, root, comm));
    for (i = 0; i < N; i++)
        PS_CHECK(w[i] == rank * N + i, "Scatter: w[%d] = %d", i, w[i]);

    for (j = 0; j < size; j++)
        for (i = 0; i < N; i++)
            v[j * N + i] = rank * 1000000 + j * N + i;
    PS_MPI(MPI_Alltoall(v, N, MPI_INT, w, N, MPI_INT, comm));
    for (j = 0; j < size; j++)
        for (i = 0; i < N; i++)
            PS_CHECK(w[j * N + i] == j * 1000000 + rank * N + i, "Alltoall: from %d, %d", j, i);
    for (j = 0; j < size; j++) {
        counts[j] = N / 2;
        displs[j] = j * N;
    }
    PS_MPI(MPI_Alltoallv(v, counts, displs, MPI_INT, w, counts, displs, MPI_INT, comm));
    for (j = 0; j < size; j++)
        for (i = 0; i < N / 2; i++)
            PS_CHECK(w[j * N + i] == j * 1000000 + rank * N + i, "Alltoallv: from %d, %d", j, i);

    for (i = 0; i < N * size; i++)
        v[i] = i + rank;
    PS_MPI(MPI_Reduce_scatter_block(v, w, N, MPI_INT, MPI_SUM, comm));
    for (i = 0; i < N; i++)
        PS_CHECK(w[i] == size * (rank * N + i) + size * (size - 1) / 2,
                 "Reduce_scatter_block: w[%d] = %d", i, w[i]);

    v[0] = rank + 1;
    PS_MPI(MPI_Scan(v, w, 1, MPI_INT, MPI_SUM, comm));
    PS_CHECK(w[0] == (rank + 1) * (rank + 2) / 2, "Scan: %d", w[0]);
    w[0] = -5;
    PS_MPI(MPI_Exscan(v, w, 1, MPI_INT, MPI_SUM, comm));
    PS_CHECK(rank == 0 || w[0] == rank * (rank + 1) / 2, "Exscan: %d", w[0]);

    free(v);
    free(w);
    free(counts);
    free(displs);
}

/* An erroneous collective returns its error, as MPICH's own does. */
static void check_error(void)
{
    MPI_Comm comm;
    int x = 0;

    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    PS_MPI_EXPECT(MPI_Bcast(&x, 1, MPI_INT, ps_nprocs + 3, comm), MPI_ERR_ROOT);
    PS_MPI_EXPECT(MPI_Reduce(&x, NULL, 1, MPI_INT, MPI_SUM, -7, comm), MPI_ERR_ROOT);
    PS_MPI(MPI_Barrier(comm));
    MPI_Comm_free(&comm);
}

/* CPU seconds rank 0 spends in one collective that the last rank enters
 * WAIT_S late (kind: an index of late_call; the file calls on fh, whose
 * read finds the file still empty). */
static const char *const late_call[] = {
    "MPI_Barrier", "MPI_Allreduce", "MPI_File_set_view", "MPI_File_read_at_all"
};

#define NLATE ((int) (sizeof(late_call) / sizeof(late_call[0])))

static double late_wait_cpu(MPI_File fh, int kind)
{
    double cpu = 0.0;
    int x = 1, y = 0;

    PS_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (ps_rank == ps_nprocs - 1)
        usleep((useconds_t) (WAIT_S * 1e6));
    cpu = thread_cpu_s();
    if (kind == 0)
        PS_MPI(MPI_Barrier(MPI_COMM_WORLD));
    else if (kind == 1) {
        PS_MPI(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        PS_CHECK(y == ps_nprocs, "Allreduce: %d", y);
    } else if (kind == 2)
        PS_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    else
        PS_MPI(MPI_File_read_at_all(fh, ps_rank, &y, 1, MPI_INT, MPI_STATUS_IGNORE));
    return thread_cpu_s() - cpu;
}

static void hung(int sig)
{
    static const char msg[] = "ps_collwait: FAIL: collectives hung while only rank 0 had a "
        "file open (blocking and nonblocking forms mixed?)\n";
    (void) sig;
    (void) !write(2, msg, sizeof(msg) - 1);
    _exit(1);
}

/* The collectives while rank 0 alone has a file (of its own) open. */
static void check_mixed_waits(const char *fname)
{
    char own[4096];
    MPI_File fh;

    snprintf(own, sizeof(own), "%s.rank0", fname);
    if (ps_rank == 0)
        PS_MPI(MPI_File_open(MPI_COMM_SELF, own, MPI_MODE_CREATE | MPI_MODE_RDWR,
                             MPI_INFO_NULL, &fh));
    signal(SIGALRM, hung);
    alarm(120);
    check_collectives(MPI_COMM_WORLD);
    alarm(0);
    if (ps_rank == 0) {
        PS_MPI(MPI_File_close(&fh));
        PS_MPI(MPI_File_delete(own, MPI_INFO_NULL));
    }
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    const int block = 65536;
    unsigned char *buf = malloc(block), *back = malloc(block);
    MPI_Comm half;
    MPI_File fh;
    int kind;

    if (ps_nprocs > 1)
        check_mixed_waits(fname);
    PS_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
    check_collectives(MPI_COMM_WORLD);
    MPI_Comm_split(MPI_COMM_WORLD, ps_rank % 2, ps_nprocs - ps_rank, &half);
    check_collectives(half);
    MPI_Comm_free(&half);
    check_error();

    for (kind = 0; kind < NLATE && ps_nprocs > 1; kind++) {
        double cpu = late_wait_cpu(fh, kind);
        if (ps_rank != 0)
            continue;
        printf("%s: rank 0 waited %.1f s in %s on %.3f s of CPU\n", ps_prog, WAIT_S,
               late_call[kind], cpu);
        PS_CHECK(!ps_is_pstripe(fname) || cpu < WAIT_S / 3,
                 "%s: %.3f s of CPU in a %.1f s wait: polled instead of sleeping",
                 late_call[kind], cpu, WAIT_S);
    }

    ps_fill(buf, block, (uint64_t) ps_rank * block, 5);
    PS_MPI(MPI_File_write_at(fh, (MPI_Offset) ps_rank * block, buf, block, MPI_BYTE,
                             MPI_STATUS_IGNORE));
    PS_MPI(MPI_File_read_at(fh, (MPI_Offset) ps_rank * block, back, block, MPI_BYTE,
                            MPI_STATUS_IGNORE));
    ps_compare(back, buf, block, "own block");
    PS_MPI(MPI_File_close(&fh));
    free(buf);
    free(back);
    MPI_Finalize();
    return 0;
}

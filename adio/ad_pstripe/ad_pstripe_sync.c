/*
 * ad_pstripe_sync.c: the MPI calls that carry a message between processes,
 * made to order the driver's caches as they order the processes.
 *
 * MPI orders two processes' conflicting accesses to a file, in nonatomic
 * mode, only by sync-barrier-sync or close and open. Programs order them by
 * any message: rank 0 writes a header, then a broadcast says it is there;
 * a worker writes its part, then sends "done". On a POSIX file system
 * (ROMIO's ufs, Lustre, GPFS) a write is seen by everyone once its call
 * returns, so those programs work there; with the driver's write-behind
 * the bytes could still be in the writer's buffer, and with its read cache
 * the reader could serve old bytes from blocks read before (parallel HDF5
 * lost a dataset's data so: rank 0's fill values, written before a
 * barrier, reached the servers after the others' data; testphdf5's
 * ccontw, 15 of 15 runs). So, around each call of this file:
 *
 * - FLUSH: before the call, every open handle's buffered writes go to the
 *   servers (ADIOI_PSTRIPE_Sync_before): calls that send (point to point,
 *   the start of a nonblocking or persistent operation, a partition made
 *   ready, one-sided puts) and nonblocking receives (a synchronous send
 *   completes once its receive is posted: that tells the sender);
 * - DROP: after it, every handle's next read drops its cached blocks
 *   (ADIOI_PSTRIPE_Sync_after, one atomic increment): calls that receive
 *   or complete (receives, probes, waits, one-sided gets; the polls,
 *   tests and Iprobe, only when they found something);
 * - BOTH: calls that do both (collectives, sendrecv, blocking receives
 *   and synchronous sends, one-sided synchronization and
 *   read-modify-write).
 *
 * The blocking collectives also wait differently while a pstripe file is
 * open and one of its servers runs on this host (a test machine, a node
 * that stores too): MPICH's own wait polls without pause, and a process
 * that reached a barrier first took from the servers and the slower
 * processes the CPU they needed (on 2 vCPUs, 74% of such a process's
 * samples were MPICH's polling in pstripe-bench's barrier). Every such
 * call starts its nonblocking form (PS_COLL below) and waits there as
 * the driver's own collectives do (ADIOI_PSTRIPE_Wait_collective: a
 * spin of 50 us to 1 ms, then sleeps); elsewhere it waits as MPI_Wait
 * does.
 *
 * Not hooked: calls that create or free communicators and windows or
 * connect processes (collective, but not a way programs pass word of
 * their writes), and collective MPI-IO calls on another file (ROMIO
 * calls PMPI_ inside them).
 *
 * A process with nothing buffered sends nothing and takes no lock (one
 * atomic load per call); a read after a message
 * reads from the servers. These definitions replace MPICH's weak MPI_
 * symbols in the library (MPI's profiling interface), the large-count
 * (_c) forms too; each calls its PMPI_ form. A tool that defines its own
 * MPI_ function and calls PMPI_ bypasses the hook; so does a message MPI
 * does not carry (shared memory written directly). The driver itself calls
 * MPI only through PMPI_ (ROMIO's mpipr.h, and ad_pstripe_lock.c and
 * ad_pstripe_sharedfp.c for the calls mpipr.h lacks), and this file
 * includes mpi.h alone, so that no macro of mpipr.h renames what it
 * defines. Under MPI_THREAD_MULTIPLE the flush takes the cache lock of
 * each handle holding buffered writes, not ROMIO's (ad_pstripe_cache.c
 * says why).
 */
#include <mpi.h>

#include "ad_pstripe_sync.h"

#define PS_FLUSH 1
#define PS_DROP 2
#define PS_BOTH (PS_FLUSH | PS_DROP)

/* Exported as MPICH's own are (the library is built with hidden
 * visibility; mpi.h marks its prototypes only under ROMIO's config); which
 * name is defined and which called: PS_DEFINE and PS_NEXT in
 * ad_pstripe_sync.h. */
#define PS_HOOK(kind, name, params, args)                       \
    PS_DEFINE(name, params)                                     \
    {                                                           \
        int rc_;                                                \
        if (PS_##kind & PS_FLUSH)                               \
            ADIOI_PSTRIPE_Sync_before();                        \
        rc_ = PS_NEXT(name) args;                               \
        if (PS_##kind & PS_DROP)                                \
            ADIOI_PSTRIPE_Sync_after();                         \
        return rc_;                                             \
    }                                                           \
    PS_ALIAS(name, params)

/* A poll: DROP only when it found something (done, an expression of its
 * parameters), so that a program reading between polls keeps its cache;
 * kind FLUSH: it flushes first too (NONE: not). */
#define PS_NONE 0
#define PS_POLL(kind, name, done, params, args)                 \
    PS_DEFINE(name, params)                                     \
    {                                                           \
        int rc_;                                                \
        if (PS_##kind & PS_FLUSH)                               \
            ADIOI_PSTRIPE_Sync_before();                        \
        rc_ = PS_NEXT(name) args;                               \
        if (rc_ == MPI_SUCCESS && (done))                       \
            ADIOI_PSTRIPE_Sync_after();                         \
        return rc_;                                             \
    }                                                           \
    PS_ALIAS(name, params)

/* A blocking collective: BOTH, as its nonblocking form waited for by
 * ADIOI_PSTRIPE_Wait_started (while the driver asks for it, a wait that
 * sleeps after a short spin instead of polling the CPU that the servers
 * need). Always the nonblocking form: MPI never matches a blocking
 * collective with a nonblocking one, and whether a process waits politely
 * is its own (its open files, a server on its host), so choosing the
 * blocking form where it does not hung every program whose processes
 * differ there: rank 0 with a file of its own open (MPI_COMM_SELF), then
 * an MPI_Barrier of all (tests/mpi/ps_collwait). The nonblocking form
 * costs MPICH about 0.3 us more for a small allreduce or broadcast, and a
 * barrier less (2 processes, no file open, 100,000 calls, 3 alternations:
 * allreduce 0.59-0.70 -> 0.87-1.04 us, bcast 0.24-0.31 -> 0.47-0.59,
 * barrier 0.84-1.05 -> 0.56-0.73). */
#define PS_WITH_REQ(...) (__VA_ARGS__, &req_)
#ifdef PS_SYNC_PRELOAD
/* Open MPI (libpstripe-ompi-hooks.so): the blocking form itself, waited
 * for as Open MPI waits (its components have no polite wait). */
#define PS_COLL(name, iname, params, args) PS_HOOK(BOTH, name, params, args)
#else
#define PS_COLL(name, iname, params, args)                      \
    PS_DEFINE(name, params)                                     \
    {                                                           \
        MPI_Request req_;                                       \
        int rc_;                                                \
        ADIOI_PSTRIPE_Sync_before();                            \
        rc_ = PS_NEXT(iname) PS_WITH_REQ args;                  \
        if (rc_ == MPI_SUCCESS)                                 \
            rc_ = ADIOI_PSTRIPE_Wait_started(&req_);            \
        ADIOI_PSTRIPE_Sync_after();                             \
        return rc_;                                             \
    }
#endif

/* Calls new in MPI 4 (the large-count forms, partitioned and Isendrecv):
 * hooked where mpi.h has them (MPICH 4), left out where it does not (Open
 * MPI 4.1, which compiles this file into libpstripe-ompi-hooks.so). */
#if MPI_VERSION >= 4
#define PS_HOOK4 PS_HOOK
#define PS_POLL4 PS_POLL
#define PS_COLL4 PS_COLL
#else
#define PS_HOOK4(...)
#define PS_POLL4(...)
#define PS_COLL4(...)
#endif

/* ---- calls that send ---------------------------------------------------- */

PS_HOOK(FLUSH, Send,
        (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
        (buf, count, datatype, dest, tag, comm))
PS_HOOK4(FLUSH, Send_c,
        (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
        (buf, count, datatype, dest, tag, comm))
PS_HOOK(FLUSH, Bsend,
        (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
        (buf, count, datatype, dest, tag, comm))
PS_HOOK4(FLUSH, Bsend_c,
        (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
        (buf, count, datatype, dest, tag, comm))
PS_HOOK(BOTH, Ssend,
        (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
        (buf, count, datatype, dest, tag, comm))
PS_HOOK4(BOTH, Ssend_c,
        (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
        (buf, count, datatype, dest, tag, comm))
PS_HOOK(FLUSH, Rsend,
        (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
        (buf, count, datatype, dest, tag, comm))
PS_HOOK4(FLUSH, Rsend_c,
        (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
        (buf, count, datatype, dest, tag, comm))
PS_HOOK(FLUSH, Isend,
        (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, datatype, dest, tag, comm, request))
PS_HOOK4(FLUSH, Isend_c,
        (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, datatype, dest, tag, comm, request))
PS_HOOK(FLUSH, Ibsend,
        (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, datatype, dest, tag, comm, request))
PS_HOOK4(FLUSH, Ibsend_c,
        (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, datatype, dest, tag, comm, request))
PS_HOOK(FLUSH, Issend,
        (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, datatype, dest, tag, comm, request))
PS_HOOK4(FLUSH, Issend_c,
        (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, datatype, dest, tag, comm, request))
PS_HOOK(FLUSH, Irsend,
        (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, datatype, dest, tag, comm, request))
PS_HOOK4(FLUSH, Irsend_c,
        (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, datatype, dest, tag, comm, request))
PS_HOOK(FLUSH, Irecv,
        (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, datatype, source, tag, comm, request))
PS_HOOK4(FLUSH, Irecv_c,
        (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, datatype, source, tag, comm, request))
PS_HOOK(FLUSH, Imrecv,
        (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request),
        (buf, count, datatype, message, request))
PS_HOOK4(FLUSH, Imrecv_c,
        (void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
         MPI_Request *request),
        (buf, count, datatype, message, request))
PS_HOOK4(FLUSH, Isendrecv,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
         void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
         comm, request))
PS_HOOK4(FLUSH, Isendrecv_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
         comm, request))
PS_HOOK4(FLUSH, Isendrecv_replace,
        (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
         int recvtag, MPI_Comm comm, MPI_Request *request),
        (buf, count, datatype, dest, sendtag, source, recvtag, comm, request))
PS_HOOK4(FLUSH, Isendrecv_replace_c,
        (void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
         int recvtag, MPI_Comm comm, MPI_Request *request),
        (buf, count, datatype, dest, sendtag, source, recvtag, comm, request))
PS_HOOK(FLUSH, Start, (MPI_Request * request), (request))
PS_HOOK(FLUSH, Startall, (int count, MPI_Request array_of_requests[]), (count, array_of_requests))
PS_HOOK4(FLUSH, Pready, (int partition, MPI_Request request), (partition, request))
PS_HOOK4(FLUSH, Pready_range, (int partition_low, int partition_high, MPI_Request request),
        (partition_low, partition_high, request))
PS_HOOK4(FLUSH, Pready_list, (int length, int array_of_partitions[], MPI_Request request),
        (length, array_of_partitions, request))
PS_HOOK(FLUSH, Put,
        (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, win))
PS_HOOK4(FLUSH, Put_c,
        (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
         int target_rank, MPI_Aint target_disp, MPI_Count target_count,
         MPI_Datatype target_datatype, MPI_Win win),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, win))
PS_HOOK(FLUSH, Rput,
        (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
         MPI_Request *request),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, win, request))
PS_HOOK4(FLUSH, Rput_c,
        (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
         int target_rank, MPI_Aint target_disp, MPI_Count target_count,
         MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, win, request))
PS_HOOK(FLUSH, Accumulate,
        (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
         MPI_Win win),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, op, win))
PS_HOOK4(FLUSH, Accumulate_c,
        (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
         int target_rank, MPI_Aint target_disp, MPI_Count target_count,
         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, op, win))
PS_HOOK(FLUSH, Raccumulate,
        (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
         MPI_Win win, MPI_Request *request),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, op, win, request))
PS_HOOK4(FLUSH, Raccumulate_c,
        (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
         int target_rank, MPI_Aint target_disp, MPI_Count target_count,
         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, op, win, request))
PS_HOOK(FLUSH, Ibarrier, (MPI_Comm comm, MPI_Request *request), (comm, request))
PS_HOOK(FLUSH, Ibcast,
        (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
         MPI_Request *request),
        (buffer, count, datatype, root, comm, request))
PS_HOOK4(FLUSH, Ibcast_c,
        (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
         MPI_Request *request),
        (buffer, count, datatype, root, comm, request))
PS_HOOK(FLUSH, Igather,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
         MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
PS_HOOK4(FLUSH, Igather_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
PS_HOOK(FLUSH, Igatherv,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
         const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
         MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request))
PS_HOOK4(FLUSH, Igatherv_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request))
PS_HOOK(FLUSH, Iscatter,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
         MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
PS_HOOK4(FLUSH, Iscatter_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
PS_HOOK(FLUSH, Iscatterv,
        (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
         void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
         MPI_Request *request),
        (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
PS_HOOK4(FLUSH, Iscatterv_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
PS_HOOK(FLUSH, Iallgather,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
PS_HOOK4(FLUSH, Iallgather_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
PS_HOOK(FLUSH, Iallgatherv,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
         MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request))
PS_HOOK4(FLUSH, Iallgatherv_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request))
PS_HOOK(FLUSH, Ialltoall,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
PS_HOOK4(FLUSH, Ialltoall_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
PS_HOOK(FLUSH, Ialltoallv,
        (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
         void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
         request))
PS_HOOK4(FLUSH, Ialltoallv_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
         MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
         const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
         request))
PS_HOOK(FLUSH, Ialltoallw,
        (const void *sendbuf, const int sendcounts[], const int sdispls[],
         const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
         const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
         request))
PS_HOOK4(FLUSH, Ialltoallw_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
         const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
         MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
         request))
PS_HOOK(FLUSH, Ireduce,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, count, datatype, op, root, comm, request))
PS_HOOK4(FLUSH, Ireduce_c,
        (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
         int root, MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, count, datatype, op, root, comm, request))
PS_HOOK(FLUSH, Iallreduce,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, count, datatype, op, comm, request))
PS_HOOK4(FLUSH, Iallreduce_c,
        (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, count, datatype, op, comm, request))
PS_HOOK(FLUSH, Ireduce_scatter,
        (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
         MPI_Op op, MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, recvcounts, datatype, op, comm, request))
PS_HOOK4(FLUSH, Ireduce_scatter_c,
        (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
         MPI_Op op, MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, recvcounts, datatype, op, comm, request))
PS_HOOK(FLUSH, Ireduce_scatter_block,
        (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, recvcount, datatype, op, comm, request))
PS_HOOK4(FLUSH, Ireduce_scatter_block_c,
        (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, recvcount, datatype, op, comm, request))
PS_HOOK(FLUSH, Iscan,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, count, datatype, op, comm, request))
PS_HOOK4(FLUSH, Iscan_c,
        (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, count, datatype, op, comm, request))
PS_HOOK(FLUSH, Iexscan,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, count, datatype, op, comm, request))
PS_HOOK4(FLUSH, Iexscan_c,
        (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, count, datatype, op, comm, request))
PS_HOOK(FLUSH, Ineighbor_allgather,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
PS_HOOK4(FLUSH, Ineighbor_allgather_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
PS_HOOK(FLUSH, Ineighbor_allgatherv,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
         MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request))
PS_HOOK4(FLUSH, Ineighbor_allgatherv_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request))
PS_HOOK(FLUSH, Ineighbor_alltoall,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
PS_HOOK4(FLUSH, Ineighbor_alltoall_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
PS_HOOK(FLUSH, Ineighbor_alltoallv,
        (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
         void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
         request))
PS_HOOK4(FLUSH, Ineighbor_alltoallv_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
         MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
         const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
         request))
PS_HOOK(FLUSH, Ineighbor_alltoallw,
        (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
         const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
         MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
         request))
PS_HOOK4(FLUSH, Ineighbor_alltoallw_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
         const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
         MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
         request))

/* ---- calls that receive or complete -------------------------------------- */

PS_HOOK(BOTH, Recv,
        (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
         MPI_Status *status),
        (buf, count, datatype, source, tag, comm, status))
PS_HOOK4(BOTH, Recv_c,
        (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
         MPI_Status *status),
        (buf, count, datatype, source, tag, comm, status))
PS_HOOK(BOTH, Mrecv,
        (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status),
        (buf, count, datatype, message, status))
PS_HOOK4(BOTH, Mrecv_c,
        (void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
         MPI_Status *status),
        (buf, count, datatype, message, status))
PS_HOOK(DROP, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status),
        (source, tag, comm, status))
PS_POLL(NONE, Iprobe, *flag, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status),
        (source, tag, comm, flag, status))
PS_HOOK(DROP, Mprobe,
        (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status),
        (source, tag, comm, message, status))
PS_POLL(NONE, Improbe, *flag,
        (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status),
        (source, tag, comm, flag, message, status))
PS_HOOK(DROP, Wait, (MPI_Request * request, MPI_Status *status), (request, status))
PS_HOOK(DROP, Waitall, (int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]),
        (count, array_of_requests, array_of_statuses))
PS_HOOK(DROP, Waitany, (int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status),
        (count, array_of_requests, indx, status))
PS_HOOK(DROP, Waitsome,
        (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
         MPI_Status array_of_statuses[]),
        (incount, array_of_requests, outcount, array_of_indices, array_of_statuses))
PS_POLL(NONE, Test, *flag, (MPI_Request * request, int *flag, MPI_Status *status),
        (request, flag, status))
PS_POLL(NONE, Testall, *flag,
        (int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]),
        (count, array_of_requests, flag, array_of_statuses))
PS_POLL(NONE, Testany, *flag,
        (int count, MPI_Request array_of_requests[], int *indx, int *flag, MPI_Status *status),
        (count, array_of_requests, indx, flag, status))
PS_POLL(NONE, Testsome, *outcount > 0,
        (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
         MPI_Status array_of_statuses[]),
        (incount, array_of_requests, outcount, array_of_indices, array_of_statuses))
PS_POLL(NONE, Request_get_status, *flag, (MPI_Request request, int *flag, MPI_Status *status),
        (request, flag, status))
PS_POLL4(NONE, Parrived, *flag, (MPI_Request request, int partition, int *flag),
        (request, partition, flag))
PS_HOOK(DROP, Get,
        (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, win))
PS_HOOK4(DROP, Get_c,
        (void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, win))
PS_HOOK(DROP, Rget,
        (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
         MPI_Request *request),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, win, request))
PS_HOOK4(DROP, Rget_c,
        (void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
         MPI_Request *request),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, win, request))

/* ---- calls that do both ------------------------------------------------- */

PS_HOOK(BOTH, Sendrecv,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
         void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
         MPI_Comm comm, MPI_Status *status),
        (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
         comm, status))
PS_HOOK4(BOTH, Sendrecv_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
         MPI_Comm comm, MPI_Status *status),
        (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
         comm, status))
PS_HOOK(BOTH, Sendrecv_replace,
        (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
         int recvtag, MPI_Comm comm, MPI_Status *status),
        (buf, count, datatype, dest, sendtag, source, recvtag, comm, status))
PS_HOOK4(BOTH, Sendrecv_replace_c,
        (void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
         int recvtag, MPI_Comm comm, MPI_Status *status),
        (buf, count, datatype, dest, sendtag, source, recvtag, comm, status))
PS_COLL(Barrier, Ibarrier, (MPI_Comm comm), (comm))
PS_COLL(Bcast, Ibcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm),
        (buffer, count, datatype, root, comm))
PS_COLL4(Bcast_c, Ibcast_c,
        (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm),
        (buffer, count, datatype, root, comm))
PS_COLL(Gather, Igather,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
         MPI_Datatype recvtype, int root, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
PS_COLL4(Gather_c, Igather_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
PS_COLL(Gatherv, Igatherv,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
         const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
         MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))
PS_COLL4(Gatherv_c, Igatherv_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
         MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))
PS_COLL(Scatter, Iscatter,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
         MPI_Datatype recvtype, int root, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
PS_COLL4(Scatter_c, Iscatter_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
PS_COLL(Scatterv, Iscatterv,
        (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
         void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
        (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))
PS_COLL4(Scatterv_c, Iscatterv_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
         MPI_Comm comm),
        (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))
PS_COLL(Allgather, Iallgather,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
         MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
PS_COLL4(Allgather_c, Iallgather_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
PS_COLL(Allgatherv, Iallgatherv,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
PS_COLL4(Allgatherv_c, Iallgatherv_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
         MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
PS_COLL(Alltoall, Ialltoall,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
         MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
PS_COLL4(Alltoall_c, Ialltoall_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
PS_COLL(Alltoallv, Ialltoallv,
        (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
         void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
         MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
PS_COLL4(Alltoallv_c, Ialltoallv_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
         MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
         const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
PS_COLL(Alltoallw, Ialltoallw,
        (const void *sendbuf, const int sendcounts[], const int sdispls[],
         const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
         const MPI_Datatype recvtypes[], MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
PS_COLL4(Alltoallw_c, Ialltoallw_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
         const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
PS_COLL(Reduce, Ireduce,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
         MPI_Comm comm),
        (sendbuf, recvbuf, count, datatype, op, root, comm))
PS_COLL4(Reduce_c, Ireduce_c,
        (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
         int root, MPI_Comm comm),
        (sendbuf, recvbuf, count, datatype, op, root, comm))
PS_COLL(Allreduce, Iallreduce,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm),
        (sendbuf, recvbuf, count, datatype, op, comm))
PS_COLL4(Allreduce_c, Iallreduce_c,
        (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm),
        (sendbuf, recvbuf, count, datatype, op, comm))
PS_COLL(Reduce_scatter, Ireduce_scatter,
        (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
         MPI_Op op, MPI_Comm comm),
        (sendbuf, recvbuf, recvcounts, datatype, op, comm))
PS_COLL4(Reduce_scatter_c, Ireduce_scatter_c,
        (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
         MPI_Op op, MPI_Comm comm),
        (sendbuf, recvbuf, recvcounts, datatype, op, comm))
PS_COLL(Reduce_scatter_block, Ireduce_scatter_block,
        (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm),
        (sendbuf, recvbuf, recvcount, datatype, op, comm))
PS_COLL4(Reduce_scatter_block_c, Ireduce_scatter_block_c,
        (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm),
        (sendbuf, recvbuf, recvcount, datatype, op, comm))
PS_COLL(Scan, Iscan,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm),
        (sendbuf, recvbuf, count, datatype, op, comm))
PS_COLL4(Scan_c, Iscan_c,
        (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm),
        (sendbuf, recvbuf, count, datatype, op, comm))
PS_COLL(Exscan, Iexscan,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm),
        (sendbuf, recvbuf, count, datatype, op, comm))
PS_COLL4(Exscan_c, Iexscan_c,
        (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm),
        (sendbuf, recvbuf, count, datatype, op, comm))
PS_COLL(Neighbor_allgather, Ineighbor_allgather,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
         MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
PS_COLL4(Neighbor_allgather_c, Ineighbor_allgather_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
PS_COLL(Neighbor_allgatherv, Ineighbor_allgatherv,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
PS_COLL4(Neighbor_allgatherv_c, Ineighbor_allgatherv_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
         MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
PS_COLL(Neighbor_alltoall, Ineighbor_alltoall,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
         MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
PS_COLL4(Neighbor_alltoall_c, Ineighbor_alltoall_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
PS_COLL(Neighbor_alltoallv, Ineighbor_alltoallv,
        (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
         void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
         MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
PS_COLL4(Neighbor_alltoallv_c, Ineighbor_alltoallv_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
         MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
         const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
PS_COLL(Neighbor_alltoallw, Ineighbor_alltoallw,
        (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
         const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
PS_COLL4(Neighbor_alltoallw_c, Ineighbor_alltoallw_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
         const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
PS_HOOK(BOTH, Get_accumulate,
        (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
         int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
         int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
        (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
         target_rank, target_disp, target_count, target_datatype, op, win))
PS_HOOK4(BOTH, Get_accumulate_c,
        (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
         void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
         MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
         MPI_Win win),
        (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
         target_rank, target_disp, target_count, target_datatype, op, win))
PS_HOOK(BOTH, Rget_accumulate,
        (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
         int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
         int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
         MPI_Request *request),
        (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
         target_rank, target_disp, target_count, target_datatype, op, win, request))
PS_HOOK4(BOTH, Rget_accumulate_c,
        (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
         void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
         MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
         MPI_Win win, MPI_Request *request),
        (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
         target_rank, target_disp, target_count, target_datatype, op, win, request))
PS_HOOK(BOTH, Fetch_and_op,
        (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
         MPI_Aint target_disp, MPI_Op op, MPI_Win win),
        (origin_addr, result_addr, datatype, target_rank, target_disp, op, win))
PS_HOOK(BOTH, Compare_and_swap,
        (const void *origin_addr, const void *compare_addr, void *result_addr,
         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win),
        (origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win))
PS_HOOK(BOTH, Win_fence, (int assert, MPI_Win win), (assert, win))
PS_HOOK(BOTH, Win_post, (MPI_Group group, int assert, MPI_Win win), (group, assert, win))
PS_HOOK(BOTH, Win_start, (MPI_Group group, int assert, MPI_Win win), (group, assert, win))
PS_HOOK(BOTH, Win_complete, (MPI_Win win), (win))
PS_HOOK(BOTH, Win_wait, (MPI_Win win), (win))
PS_POLL(FLUSH, Win_test, *flag, (MPI_Win win, int *flag), (win, flag))
PS_HOOK(BOTH, Win_lock, (int lock_type, int rank, int assert, MPI_Win win),
        (lock_type, rank, assert, win))
PS_HOOK(BOTH, Win_unlock, (int rank, MPI_Win win), (rank, win))
PS_HOOK(BOTH, Win_lock_all, (int assert, MPI_Win win), (assert, win))
PS_HOOK(BOTH, Win_unlock_all, (MPI_Win win), (win))
PS_HOOK(BOTH, Win_flush, (int rank, MPI_Win win), (rank, win))
PS_HOOK(BOTH, Win_flush_all, (MPI_Win win), (win))
PS_HOOK(BOTH, Win_flush_local, (int rank, MPI_Win win), (rank, win))
PS_HOOK(BOTH, Win_flush_local_all, (MPI_Win win), (win))
PS_HOOK(BOTH, Win_sync, (MPI_Win win), (win))

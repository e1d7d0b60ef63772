#!/usr/bin/python3
"""ps_pycache: a Python program (mpi4py) whose small writes are buffered
and ordered by its own messages, as ps_fcache checks for Fortran.

mpi4py loads libmpi itself (a Python extension, dlopened after the
program started), so the preloaded hooks library finds no MPI at load and
loads the client library at the first pstripe open. Checked:
- on pstripe:, MPI_File_get_info says write-behind and the read cache are
  enabled (a Python program is cached);
- rank 1 reads a slot of eight 8-byte words (twice: the second read caches
  its block) and tells rank 0, which writes words 1-5 over it (buffered);
  then a message of kind k goes from rank 0 to rank 1 (send, isend against
  an irecv polled by test with reads between the polls, sendrecv_replace,
  bcast, allreduce, barrier; or rank 1's ssend, which returns once rank 0
  posted its receive), and rank 1 reads the slot at once: the new words;
- every process writes 8-byte words interleaved with the others', and
  after sync-barrier-sync every process reads them all.
Every word holds seed * 1000003 + offset / 8. Prints "small writes: N"
(all processes') and "ps_pycache: ok".

Usage: ps_pycache.py FILENAME      (e.g. pstripe:/mpi/p)
"""
import struct
import sys

from mpi4py import MPI

NKINDS = 8
NWORDS = 256
BASE = 4096

comm = MPI.COMM_WORLD
rank, nprocs = comm.Get_rank(), comm.Get_size()


def fail(what):
    print(f"ps_pycache: rank {rank}: {what}", flush=True)
    comm.Abort(1)


def word(off, seed):
    return seed * 1000003 + off // 8


def write_words(fh, off, n, seed):
    for j in range(n):
        o = off + 8 * j
        fh.Write_at(o, struct.pack("<q", word(o, seed)))


def check_words(fh, off, n, seed, first, last, what):
    """The n words from off: words first..last of seed, the others of
    seed 1."""
    buf = bytearray(8 * n)
    st = MPI.Status()
    fh.Read_at(off, buf, st)
    if st.Get_count(MPI.BYTE) != 8 * n:
        fail(f"{what}: read {st.Get_count(MPI.BYTE)} bytes of {8 * n}")
    for j, (got,) in enumerate(struct.iter_unpack("<q", buf)):
        o = off + 8 * j
        want = word(o, seed if first <= j <= last else 1)
        if got != want:
            fail(f"{what}: offset {o} holds {got}, not {want}")


def slot(k):
    return 128 * k


def message_round(fh, k):
    """Rank 1 caches slot k, rank 0 writes words 1-5 of it (buffered), a
    message of kind k, rank 1 reads them at once. Kind 6: rank 1 writes
    and rank 0 reads, told by rank 1's synchronous send that rank 0 has
    posted its receive."""
    writer = 1 if k == 6 else 0
    reader = 1 - writer
    token = bytearray(4)
    if rank == reader:
        check_words(fh, slot(k), 8, 0, 0, -1, "before another process's write")
        check_words(fh, slot(k), 8, 0, 0, -1, "before another process's write")
        comm.Send(token, dest=writer, tag=1)
    elif rank == writer:
        comm.Recv(token, source=reader, tag=1)
        write_words(fh, slot(k) + 8, 5, 10 + k)
    if k == 0:
        if rank == 0:
            comm.Send(token, dest=1, tag=2)
        elif rank == 1:
            comm.Recv(token, source=0, tag=2)
    elif k == 1:
        if rank == 0:
            comm.Isend(token, dest=1, tag=3).Wait()
        elif rank == 1:
            req = comm.Irecv(token, source=0, tag=3)
            while True:  # polled: reads between the polls keep the cache
                check_words(fh, slot(k), 1, 0, 0, -1, "a word nobody wrote")
                if req.Test():
                    break
    elif k == 2:
        if rank <= 1:
            comm.Sendrecv_replace(token, dest=1 - rank, sendtag=4, source=1 - rank, recvtag=4)
    elif k == 3:
        comm.Bcast(token, root=0)
    elif k == 4:
        comm.Allreduce(MPI.IN_PLACE, token, op=MPI.BOR)
    elif k == 5:
        comm.Barrier()
    elif k == 6:
        if rank == reader:
            comm.Ssend(token, dest=writer, tag=6)
        elif rank == writer:
            comm.Recv(token, source=reader, tag=6)
    else:  # a probe that finds the message, then its receive
        if rank == 0:
            comm.Send(token, dest=1, tag=7)
        elif rank == 1:
            comm.Probe(source=0, tag=7)
            comm.Recv(token, source=0, tag=7)
    if rank == reader:
        check_words(fh, slot(k), 8, 10 + k, 1, 5, "another process's write after a message")
    comm.Barrier()


def sync_barrier_sync(fh):
    fh.Sync()
    comm.Barrier()
    fh.Sync()


def check_cached(fh):
    info = fh.Get_info()
    wb = info.Get("romio_pstripe_write_behind")
    rc = info.Get("romio_pstripe_read_cache")
    info.Free()
    if wb != "enable" or rc != "enable":
        fail(f"not cached: write-behind {wb}, read cache {rc}")


def main():
    if len(sys.argv) != 2:
        if rank == 0:
            print("usage: ps_pycache.py FILENAME")
        comm.Abort(2)
    fname = sys.argv[1]
    fh = MPI.File.Open(comm, fname, MPI.MODE_CREATE | MPI.MODE_RDWR)
    if fname.startswith("pstripe:"):
        check_cached(fh)
    if rank == 0:
        for k in range(NKINDS):
            write_words(fh, slot(k), 8, 1)
    sync_barrier_sync(fh)
    if nprocs >= 2:
        for k in range(NKINDS):
            message_round(fh, k)
    for i in range(NWORDS):
        write_words(fh, BASE + 8 * (i * nprocs + rank), 1, 99)
    sync_barrier_sync(fh)
    check_words(fh, BASE, NWORDS * nprocs, 99, 0, NWORDS * nprocs - 1,
                "interleaved writes after sync-barrier-sync")
    nsmall = 8 * NKINDS + NWORDS * nprocs + (5 * NKINDS if nprocs >= 2 else 0)
    fh.Close()
    if rank == 0:
        print(f"small writes: {nsmall}")
        print("ps_pycache: ok", flush=True)


main()

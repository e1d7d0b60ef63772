/*
 * ad_pstripe_sync.h: what the driver does around an MPI call that carries
 * a message between processes (ad_pstripe_sync.c defines those calls;
 * ad_pstripe_cache.c the first two, ad_pstripe_common.c the others).
 */
#ifndef AD_PSTRIPE_SYNC_H_INCLUDED
#define AD_PSTRIPE_SYNC_H_INCLUDED

#include <mpi.h>
#include <stdint.h>

/* Before a message may leave: every open handle's buffered writes go to
 * the servers. */
void ADIOI_PSTRIPE_Sync_before(void);

/* After a message may have come: the next read of every handle drops the
 * blocks it cached. */
void ADIOI_PSTRIPE_Sync_after(void);

/* Wait for a started collective (MPI_Ibarrier, MPI_Ibcast ...) with a
 * short spin and then sleeps (yields, just after a flush:
 * ADIOI_PSTRIPE_Wait_after_flush); the MPI error code of the collective. */
int ADIOI_PSTRIPE_Wait_collective(MPI_Request * req);

/* A flush of buffered writes that took took_ns has just ended: the
 * collective waits of the next took_ns yield rather than sleep. */
void ADIOI_PSTRIPE_Wait_after_flush(uint64_t took_ns);

/* Whether the program's blocking collectives should wait as
 * ADIOI_PSTRIPE_Wait_collective does: while a pstripe file is open and
 * a server runs on this host. */
int ADIOI_PSTRIPE_Wait_politely(void);

/* Wait for a started collective: as ADIOI_PSTRIPE_Wait_collective where
 * ADIOI_PSTRIPE_Wait_politely says, else as MPI_Wait. Every process starts
 * the same (nonblocking) form whatever it says. */
int ADIOI_PSTRIPE_Wait_started(MPI_Request * req);

#endif /* AD_PSTRIPE_SYNC_H_INCLUDED */

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

/* Where the hooks sit (PS_DEFINE the function a hook defines, PS_NEXT what
 * it calls, PS_ALIAS a second name for it).
 * In MPICH's library (the driver) a hook is the MPI_ function, in front of
 * MPICH's weak one, and calls the PMPI_ form.
 * In libpstripe-ompi-hooks.so (PS_SYNC_PRELOAD), preloaded in front of Open
 * MPI's libmpi, a hook is the PMPI_ function, and the MPI_ function its
 * alias: Open MPI's Fortran bindings call PMPI_ (libmpi_mpifh.so, which the
 * mpi and mpi_f08 modules use too), and so does a tool's own MPI_ wrapper.
 * It calls libmpi's PMPI_ function, looked up once
 * (ADIOI_PSTRIPE_Sync_next). Open MPI's libmpi calls one PMPI_ function
 * that this file hooks through its PLT (PMPI_Sendrecv_replace calls
 * PMPI_Sendrecv: flushed twice, the second with nothing to send). */
#ifdef PS_SYNC_PRELOAD
/* The function called NAME after this library (libmpi's), stored in *NEXT
 * the first time; a program without it is told so and aborted. */
void *ADIOI_PSTRIPE_Sync_next(const char *name, void **next);

#define PS_DEFINE(name, params) __attribute__((visibility("default"))) int PMPI_##name params
#define PS_NEXT(name)                                                   \
    ((__typeof__(&PMPI_##name)) ({                                      \
        static void *next_;                                             \
        void *p_ = __atomic_load_n(&next_, __ATOMIC_ACQUIRE);           \
        p_ != NULL ? p_ : ADIOI_PSTRIPE_Sync_next("PMPI_" #name, &next_); \
    }))
#define PS_ALIAS(name, params) \
    __attribute__((visibility("default"), alias("PMPI_" #name))) int MPI_##name params;
#else
#define PS_DEFINE(name, params) __attribute__((visibility("default"))) int MPI_##name params
#define PS_NEXT(name) PMPI_##name
#define PS_ALIAS(name, params)
#endif

#endif /* AD_PSTRIPE_SYNC_H_INCLUDED */

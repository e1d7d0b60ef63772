/*
 * ad_pstripe_sync.h: what the driver does around an MPI call that carries
 * a message between processes (ad_pstripe_sync.c defines those calls;
 * ad_pstripe_cache.c these two).
 */
#ifndef AD_PSTRIPE_SYNC_H_INCLUDED
#define AD_PSTRIPE_SYNC_H_INCLUDED

/* Before a message may leave: every open handle's buffered writes go to
 * the servers. */
void ADIOI_PSTRIPE_Sync_before(void);

/* After a message may have come: the next read of every handle drops the
 * blocks it cached. */
void ADIOI_PSTRIPE_Sync_after(void);

#endif /* AD_PSTRIPE_SYNC_H_INCLUDED */

##
## ad_pstripe: ROMIO driver for the pstripe striped file system.
## Included by ROMIO's adio/Makefile.mk (paths are relative to ROMIO's
## top directory). The driver includes only pstripe.h (and the ps_status.h
## it includes): the build adds -I for them and links the client library.
##

if BUILD_AD_PSTRIPE

noinst_HEADERS += adio/ad_pstripe/ad_pstripe.h adio/ad_pstripe/ad_pstripe_aggregate.h \
    adio/ad_pstripe/ad_pstripe_sync.h

romio_other_sources +=                   \
    adio/ad_pstripe/ad_pstripe.c         \
    adio/ad_pstripe/ad_pstripe_aggregate.c \
    adio/ad_pstripe/ad_pstripe_aio.c     \
    adio/ad_pstripe/ad_pstripe_cache.c   \
    adio/ad_pstripe/ad_pstripe_coll.c    \
    adio/ad_pstripe/ad_pstripe_common.c  \
    adio/ad_pstripe/ad_pstripe_fcntl.c   \
    adio/ad_pstripe/ad_pstripe_hints.c   \
    adio/ad_pstripe/ad_pstripe_io.c      \
    adio/ad_pstripe/ad_pstripe_io_list.c \
    adio/ad_pstripe/ad_pstripe_lock.c    \
    adio/ad_pstripe/ad_pstripe_open.c    \
    adio/ad_pstripe/ad_pstripe_sharedfp.c \
    adio/ad_pstripe/ad_pstripe_sync.c    \
    adio/ad_pstripe/ad_pstripe_twophase.c

endif BUILD_AD_PSTRIPE

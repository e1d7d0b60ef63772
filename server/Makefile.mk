# server: the storage daemon pstripe-server (fragment included by the
# top-level Makefile.am). The only place that uses libaio, hwloc and LMDB.
bin_PROGRAMS += server/pstripe-server
server_pstripe_server_SOURCES = \
	server/pss.h \
	server/pss_main.c \
	server/pss_config.c \
	server/pss_worker.c \
	server/pss_store.c \
	server/pss_meta.c
server_pstripe_server_CFLAGS = $(AM_CFLAGS) $(UCX_CFLAGS) $(HWLOC_CFLAGS) $(LMDB_CFLAGS)
server_pstripe_server_LDADD = common/libpscommon.la \
	$(UCX_LIBS) $(HWLOC_LIBS) $(LMDB_LIBS) $(AIO_LIBS)

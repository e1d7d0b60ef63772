# server: the storage daemon pstripe-server (fragment included by the
# top-level Makefile.am). The only place that uses libaio, hwloc and LMDB.
bin_PROGRAMS += server/pstripe-server
server_pstripe_server_SOURCES = \
	server/pss.h \
	server/pss_main.c \
	server/pss_config.h server/pss_config.c \
	server/pss_worker.h server/pss_worker.c \
	server/pss_spin.h server/pss_spin.c \
	server/pss_listen.h server/pss_listen.c \
	server/pss_conn.h server/pss_conn.c \
	server/pss_req.h server/pss_req.c \
	server/pss_admin.h server/pss_admin.c \
	server/pss_auth.h server/pss_auth.c \
	server/pss_perm.h server/pss_perm.c \
	server/pss_metadb.h server/pss_metadb.c \
	server/pss_meta.h server/pss_meta.c \
	server/pss_list.h server/pss_list.c \
	server/pss_move.h server/pss_move.c \
	server/pss_gc.h server/pss_gc.c \
	server/pss_sharedfp.h server/pss_sharedfp.c \
	server/pss_check.h server/pss_check.c \
	server/pss_store.h server/pss_store.c \
	server/pss_aio.h server/pss_aio.c \
	server/pss_job.h server/pss_job.c \
	server/pss_jobdef.h server/pss_plan.h server/pss_plan.c \
	server/pss_stage.h server/pss_stage.c \
	server/pss_object.h server/pss_object.c \
	server/pss_removed.h server/pss_removed.c \
	server/pss_reaper.h server/pss_reaper.c \
	server/pss_flushbehind.h server/pss_flushbehind.c \
	server/pss_edge.h server/pss_edge.c \
	server/pss_share.h server/pss_share.c \
	server/pss_readahead.h server/pss_readahead.c \
	server/pss_cache.h server/pss_cache.c \
	server/pss_probe.h server/pss_probe.c
server_pstripe_server_CFLAGS = $(AM_CFLAGS) $(UCX_CFLAGS) $(HWLOC_CFLAGS) $(LMDB_CFLAGS)
server_pstripe_server_LDADD = common/libpscommon.la \
	$(UCX_LIBS) $(HWLOC_LIBS) $(LMDB_LIBS) $(AIO_LIBS) $(MUNGE_LIBS)

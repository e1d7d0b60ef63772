# lib: fragment included by the top-level Makefile.am.
#
# lib/libpsclient.la is a convenience library (client code + common/) that the
# tool, the tests and the ROMIO driver link statically; lib/libpstripe.la is
# the installed shared library built from it, exporting only pstripe_*.
noinst_LTLIBRARIES += lib/libpsclient.la
lib_libpsclient_la_SOURCES = \
	lib/pstripe.h lib/psc_internal.h \
	lib/psc_error.h lib/psc_error.c \
	lib/psc_config.h lib/psc_config.c \
	lib/psc_mem.c lib/psc_stage.h lib/psc_stage.c \
	lib/psc_call.h lib/psc_call.c \
	lib/psc_op.h lib/psc_op.c \
	lib/psc_conn.h lib/psc_conn.c \
	lib/psc_auth.h lib/psc_auth.c \
	lib/psc_recv.h lib/psc_recv.c \
	lib/psc_progress.h lib/psc_progress.c \
	lib/psc_wait.h lib/psc_wait.c lib/psc_wbuf.c lib/psc_rcache.c lib/psc_readahead.h lib/psc_readahead.c lib/psc_preconnect.c \
	lib/psc_fs.h lib/psc_fs.c \
	lib/psc_meta.h lib/psc_meta.c lib/psc_statfs.c lib/psc_move.h lib/psc_move.c lib/psc_list.c lib/psc_gc.c lib/psc_seen.c lib/psc_sync.c \
	lib/psc_sharedfp.c lib/psc_layout.c \
	lib/psc_request.h lib/psc_io.c lib/psc_runs.c lib/psc_batch.h lib/psc_batch.c
lib_libpsclient_la_CFLAGS = $(AM_CFLAGS) $(UCX_CFLAGS)
lib_libpsclient_la_LIBADD = common/libpscommon.la $(UCX_LIBS)

lib_LTLIBRARIES += lib/libpstripe.la
lib_libpstripe_la_SOURCES =
lib_libpstripe_la_LIBADD = lib/libpsclient.la
lib_libpstripe_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0 -export-symbols-regex '^pstripe_'

include_HEADERS += lib/pstripe.h common/ps_status.h
pkgconfig_DATA += lib/pstripe.pc

# common/: status codes, logging, config tables, wire protocol, stripe math,
# region lists, huge-page mappings, local addresses. No MPI, no UCX, no libaio.
noinst_LTLIBRARIES += common/libpscommon.la
common_libpscommon_la_SOURCES = \
	common/ps_status.c common/ps_status.h \
	common/ps_log.c common/ps_log.h \
	common/ps_config.c common/ps_config.h \
	common/ps_proto.c common/ps_proto_dump.c common/ps_proto.h \
	common/ps_hmac.c common/ps_hmac.h \
	common/ps_cap.c common/ps_cap.h \
	common/ps_layout.c common/ps_layout.h \
	common/ps_extent.c common/ps_extent.h \
	common/ps_mem.c common/ps_mem.h \
	common/ps_net.c common/ps_net.h \
	common/ps_time.h
common_libpscommon_la_CFLAGS = $(AM_CFLAGS) $(INIH_CFLAGS)
common_libpscommon_la_LIBADD = $(INIH_LIBS)

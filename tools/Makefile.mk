# tools/: the `pstripe` command (fragment included by the top-level Makefile.am).
# Linked with the convenience library lib/libpsclient.la, so the build-tree
# binary tools/pstripe is the real program (no libtool wrapper script) and
# finds ../server/pstripe-server and ../adio/pstripe-run next to itself; the
# installed one uses the paths below.
bin_PROGRAMS += tools/pstripe
tools_pstripe_SOURCES = \
	tools/pst_tool.h \
	tools/pstripe.c \
	tools/pst_fs.c \
	tools/pst_attr.c \
	tools/pst_cp.c \
	tools/pst_partial.c \
	tools/pst_local.h \
	tools/pst_local.c \
	tools/pst_local_proc.c \
	tools/pst_local_auth.c
tools_pstripe_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPST_SBINDIR='"$(sbindir)"' \
	-DPST_BINDIR='"$(bindir)"' \
	-DPST_PKGLIBEXECDIR='"$(pkglibexecdir)"'
tools_pstripe_LDADD = lib/libpsclient.la

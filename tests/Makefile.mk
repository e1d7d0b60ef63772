# tests: fragment included by the top-level Makefile.am

# ---- integration-test harness and server tests (owner: server engineer) ----
# tests/integration/libpscluster.la is the daemon harness (ps_cluster.h): it
# forks pstripe-server with --ready-fd and keeps data under
# $(abs_top_builddir)/tests/tmp. Every integration test binary links it:
#   tests_integration_foo_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
#   tests_integration_foo_LDADD = tests/integration/libpscluster.la ... $(GTEST_LIBS)
# and should list server/pstripe-server in EXTRA_..._DEPENDENCIES so that the
# daemon is built first.
check_LTLIBRARIES = tests/integration/libpscluster.la
tests_integration_libpscluster_la_SOURCES = \
	tests/integration/ps_cluster.cc tests/integration/ps_cluster.h
tests_integration_libpscluster_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPS_SERVER_PATH=\"$(abs_top_builddir)/server/pstripe-server\" \
	-DPS_TEST_TMPDIR=\"$(abs_top_builddir)/tests/tmp\"
tests_integration_libpscluster_la_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)

# tests: fragment included by the top-level Makefile.am

# ---- unit tests (tests/unit) ------------------------------------------------
# GoogleTest units of common/ (protocol, stripe math, extents, config,
# status codes), of the ROMIO driver's file-domain math and of the server's
# read-ahead policy, cache and write-back stage. One binary, run
# by `make check`.
check_PROGRAMS += tests/unit/unit_tests
TESTS += tests/unit/unit_tests
tests_unit_unit_tests_SOURCES = \
	tests/unit/test_status.cc \
	tests/unit/test_proto.cc \
	tests/unit/test_hmac.cc \
	tests/unit/test_layout.cc \
	tests/unit/test_extent.cc \
	tests/unit/test_config.cc \
	tests/unit/test_net.cc \
	tests/unit/test_log.cc \
	tests/unit/test_coll_domain.cc tests/unit/coll_domain.c \
	adio/ad_pstripe/ad_pstripe_aggregate.h \
	tests/unit/test_readahead.cc server/pss_readahead.c server/pss_readahead.h \
	tests/unit/test_cache.cc tests/unit/cache_box.c tests/unit/cache_box.h \
	tests/unit/test_stage.cc tests/unit/stage_box.c tests/unit/stage_box.h \
	tests/unit/test_spin.cc tests/unit/spin_box.c tests/unit/spin_box.h \
	tests/unit/test_mem.cc lib/psc_mem.c tests/unit/huge_pages.h \
	tests/unit/test_runs.cc lib/psc_runs.c
# The driver's domain math comes in through tests/unit/coll_domain.c, the
# server's cache through tests/unit/cache_box.c, its write-back stage
# through tests/unit/stage_box.c, its workers' spin window through
# tests/unit/spin_box.c; the server's read-ahead
# policy includes nothing of the server; the buffer allocator
# (lib/psc_mem.c) and the runs (lib/psc_runs.c) nothing of the client
# library.
tests_unit_unit_tests_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adio/ad_pstripe \
	-I$(top_srcdir)/server
tests_unit_unit_tests_CXXFLAGS = $(AM_CXXFLAGS)
tests_unit_unit_tests_LDADD = common/libpscommon.la $(GTEST_LIBS)
# ---- end of unit tests -----------------------------------------------------

# ---- integration-test harness and server tests --------------------------------
# tests/integration/libpscluster.la is the daemon harness (ps_cluster.h): it
# forks pstripe-server with --ready-fd and keeps data under
# $(abs_top_builddir)/tests/tmp. Every integration test binary links it
# (the default LDADD below does), and linking it builds the daemon first.
check_LTLIBRARIES = tests/integration/libpscluster.la
tests_integration_libpscluster_la_SOURCES = \
	tests/integration/ps_cluster.cc tests/integration/ps_cluster.h
tests_integration_libpscluster_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPS_SERVER_PATH=\"$(abs_top_builddir)/server/pstripe-server\" \
	-DPS_TEST_TMPDIR=\"$(abs_top_builddir)/tests/tmp\"
tests_integration_libpscluster_la_CXXFLAGS = $(AM_CXXFLAGS)
# every program linking the harness needs the daemon it starts
EXTRA_tests_integration_libpscluster_la_DEPENDENCIES = server/pstripe-server

# Server tests: real daemons through the harness,
# malformed requests through a raw UCX client (test_server_raw.*).
check_PROGRAMS += tests/integration/test_server
TESTS += tests/integration/test_server
tests_integration_test_server_SOURCES = \
	tests/integration/test_server_raw.cc tests/integration/test_server_raw.h \
	tests/integration/test_server_basic.cc \
	tests/integration/test_server_auth.cc \
	tests/integration/test_server_shm.cc \
	tests/integration/test_server_perm.cc \
	tests/integration/test_server_proto.cc \
	tests/integration/test_server_io.cc \
	tests/integration/test_server_readahead.cc \
	tests/integration/test_server_wback.cc \
	tests/integration/test_server_meta.cc \
	tests/integration/test_server_gc.cc \
	tests/integration/test_server_move.cc \
	tests/integration/test_server_restart.cc \
	tests/integration/test_server_stress.cc \
	tests/integration/test_server_perf.cc \
	tests/integration/test_server_idle.cc
tests_integration_test_server_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPS_SERVER_PATH=\"$(abs_top_builddir)/server/pstripe-server\" \
	-DPS_AIO_FAULTS_PATH=\"$(abs_top_builddir)/tests/integration/aio-faults.so\"
# aio-faults.so: preloaded into a server by test_server (tests/integration/aio_faults.c)
EXTRA_tests_integration_test_server_DEPENDENCIES = tests/integration/aio-faults.so
tests/integration/aio-faults.so: tests/integration/aio_faults.c
	$(AM_V_CC)$(CC) $(CFLAGS) -fPIC -shared -o $@ $(srcdir)/tests/integration/aio_faults.c -ldl -lpthread
CLEANFILES += tests/integration/aio-faults.so
EXTRA_DIST += tests/integration/aio_faults.c
tests_integration_test_server_CXXFLAGS = $(AM_CXXFLAGS) $(UCX_CFLAGS) $(LMDB_CFLAGS)
tests_integration_test_server_LDADD = tests/integration/libpscluster.la \
	common/libpscommon.la $(UCX_LIBS) $(LMDB_LIBS) $(GTEST_LIBS)
CLEANFILES += -r tests/tmp
# ---- end of harness and server tests ---------------------------------------

# ---- client library integration tests (lib/) ---------------------------------
# Real daemons through ps_cluster.h; the client linked statically from
# lib/libpsclient.la. Programs here take the defaults below (LDADD, and the
# flags added to AM_*FLAGS); test_client_bench runs its sweeps small (see the
# top of the file for the full measurement).
AM_CPPFLAGS += -I$(top_srcdir)/tests/integration
AM_CXXFLAGS += $(GTEST_CFLAGS)
LDADD = tests/integration/libpscluster.la lib/libpsclient.la $(GTEST_LIBS)
PSC_TESTS = tests/integration/test_client_io tests/integration/test_client_meta \
	tests/integration/test_client_fault tests/integration/test_client_bench \
	tests/integration/test_client_sharedfp \
	tests/integration/test_client_ucx
check_PROGRAMS += $(PSC_TESTS)
TESTS += $(PSC_TESTS)
PSC_TEST_UTIL = tests/integration/test_client_util.h
tests_integration_test_client_io_SOURCES = tests/integration/test_client_io.cc $(PSC_TEST_UTIL)
tests_integration_test_client_meta_SOURCES = tests/integration/test_client_meta.cc $(PSC_TEST_UTIL) \
	tests/integration/test_server_raw.cc tests/integration/test_server_raw.h
# test_client_meta sends single MOVE steps through the server tests' raw
# client (a client that dies between them)
tests_integration_test_client_meta_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPS_AIO_FAULTS_PATH=\"$(abs_top_builddir)/tests/integration/aio-faults.so\"
tests_integration_test_client_meta_CXXFLAGS = $(AM_CXXFLAGS) $(UCX_CFLAGS) $(LMDB_CFLAGS)
# (and writes into a stopped server's LMDB store)
tests_integration_test_client_meta_LDADD = $(LDADD) $(LMDB_LIBS)
tests_integration_test_client_fault_SOURCES = tests/integration/test_client_fault.cc \
	tests/integration/test_client_wback.cc tests/integration/test_client_wbuf.cc $(PSC_TEST_UTIL)
tests_integration_test_client_fault_CXXFLAGS = $(AM_CXXFLAGS) $(UCX_CFLAGS)
tests_integration_test_client_bench_SOURCES = tests/integration/test_client_bench.cc $(PSC_TEST_UTIL)
tests_integration_test_client_sharedfp_SOURCES = tests/integration/test_client_sharedfp.cc \
	$(PSC_TEST_UTIL)
# The client's own UCX settings (PSTRIPE_UCX_*); no daemons.
tests_integration_test_client_ucx_SOURCES = tests/integration/test_client_ucx.cc
tests_integration_test_client_ucx_CXXFLAGS = $(AM_CXXFLAGS) $(UCX_CFLAGS)


# ---- MPI tests (tests/mpi: the ROMIO driver, adio/ad_pstripe) ----------------
# Plain MPI-IO programs built with the system MPI compiler $(MPICC) (as
# mpi-bench is), so that they link the system MPICH ABI and run on the
# pstripe-enabled MPICH through `pstripe run`. tests/mpi/mpi-tests runs each
# on pstripe: and ufs: with 1, 2 and 4 processes and compares the files;
# tests/mpi/mpi-kill fails a server under a running program.
PSM_PROGS = tests/mpi/ps_contig tests/mpi/ps_views tests/mpi/ps_coll3d \
	tests/mpi/ps_errors tests/mpi/ps_hints tests/mpi/ps_atomic tests/mpi/ps_kill \
	tests/mpi/ps_campaign tests/mpi/ps_cache tests/mpi/ps_shared tests/mpi/ps_bigfile \
	tests/mpi/ps_icoll tests/mpi/ps_fortran tests/mpi/ps_pack tests/mpi/ps_perm tests/mpi/ps_sfp_lost \
	tests/mpi/ps_readahead tests/mpi/ps_wbsend tests/mpi/ps_random tests/mpi/ps_threads \
	tests/mpi/ps_noclose tests/mpi/ps_manyfiles tests/mpi/ps_collwait tests/mpi/ps_strided \
	tests/mpi/ps_fcache tests/mpi/ps_collapart tests/mpi/ps_overlap
PSM_CFLAGS = -std=gnu11 $(PS_WARN_CFLAGS) $(PS_OPT_CFLAGS)
PSM_CC = $(AM_V_CC)$(MKDIR_P) tests/mpi && $(MPICC) $(PSM_CFLAGS) $(CFLAGS) -o $@
check_SCRIPTS += $(PSM_PROGS)
TESTS += tests/mpi/mpi-tests tests/mpi/mpi-kill tests/mpi/mpi-campaign tests/mpi/mpi-pack \
	tests/mpi/mpi-sfp-lost
EXTRA_DIST += tests/mpi/pstest.h tests/mpi/mpi-tests tests/mpi/mpi-kill tests/mpi/mpi-campaign \
	tests/mpi/ps_contig.c tests/mpi/ps_views.c tests/mpi/ps_coll3d.c \
	tests/mpi/ps_errors.c tests/mpi/ps_hints.c tests/mpi/ps_atomic.c tests/mpi/ps_kill.c \
	tests/mpi/ps_campaign.c tests/mpi/ps_cache.c tests/mpi/ps_shared.c \
	tests/mpi/ps_bigfile.c tests/mpi/ps_icoll.c \
	tests/mpi/ps_fortran.f90 tests/mpi/ps_pack.c tests/mpi/mpi-pack tests/mpi/ps_perm.c \
	tests/mpi/ps_sfp_lost.c tests/mpi/mpi-sfp-lost tests/mpi/ps_readahead.c \
	tests/mpi/ps_wbsend.c tests/mpi/ps_random.c tests/mpi/ps_threads.c \
	tests/mpi/ps_noclose.c tests/mpi/ps_manyfiles.c tests/mpi/ps_collwait.c tests/mpi/ps_strided.c \
	tests/mpi/ps_fcache.f90 tests/mpi/ps_collapart.c tests/mpi/ps_overlap.c
CLEANFILES += $(PSM_PROGS)
tests/mpi/ps_contig: tests/mpi/ps_contig.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_contig.c
tests/mpi/ps_shared: tests/mpi/ps_shared.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_shared.c
tests/mpi/ps_sfp_lost: tests/mpi/ps_sfp_lost.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_sfp_lost.c
tests/mpi/ps_views: tests/mpi/ps_views.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_views.c
tests/mpi/ps_coll3d: tests/mpi/ps_coll3d.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_coll3d.c
tests/mpi/ps_errors: tests/mpi/ps_errors.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_errors.c
tests/mpi/ps_hints: tests/mpi/ps_hints.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_hints.c
tests/mpi/ps_atomic: tests/mpi/ps_atomic.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_atomic.c
tests/mpi/ps_kill: tests/mpi/ps_kill.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_kill.c
tests/mpi/ps_campaign: tests/mpi/ps_campaign.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_campaign.c
tests/mpi/ps_cache: tests/mpi/ps_cache.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_cache.c
tests/mpi/ps_random: tests/mpi/ps_random.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_random.c
tests/mpi/ps_threads: tests/mpi/ps_threads.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_threads.c
tests/mpi/ps_noclose: tests/mpi/ps_noclose.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_noclose.c
tests/mpi/ps_manyfiles: tests/mpi/ps_manyfiles.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_manyfiles.c
tests/mpi/ps_collwait: tests/mpi/ps_collwait.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_collwait.c
tests/mpi/ps_readahead: tests/mpi/ps_readahead.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_readahead.c
tests/mpi/ps_strided: tests/mpi/ps_strided.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_strided.c
tests/mpi/ps_wbsend: tests/mpi/ps_wbsend.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_wbsend.c
tests/mpi/ps_collapart: tests/mpi/ps_collapart.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_collapart.c
tests/mpi/ps_overlap: tests/mpi/ps_overlap.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_overlap.c
tests/mpi/ps_bigfile: tests/mpi/ps_bigfile.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_bigfile.c
tests/mpi/ps_icoll: tests/mpi/ps_icoll.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_icoll.c
tests/mpi/ps_pack: tests/mpi/ps_pack.c
	$(PSM_CC) $(srcdir)/tests/mpi/ps_pack.c
tests/mpi/ps_perm: tests/mpi/ps_perm.c tests/mpi/pstest.h
	$(PSM_CC) $(srcdir)/tests/mpi/ps_perm.c
# Fortran 90 programs, built with the system mpif90 (no module of their own,
# so no .mod file is left behind).
PSM_FC = $(AM_V_GEN)$(MKDIR_P) tests/mpi && $(MPIF90) -O2 -Wall -o $@
tests/mpi/ps_fortran: tests/mpi/ps_fortran.f90
	$(PSM_FC) $(srcdir)/tests/mpi/ps_fortran.f90
tests/mpi/ps_fcache: tests/mpi/ps_fcache.f90
	$(PSM_FC) $(srcdir)/tests/mpi/ps_fcache.f90
# ---- end of MPI tests --------------------------------------------------------

# ---- MPI tests under Open MPI (adio/ompio) -----------------------------------
# The same programs built with Open MPI's mpicc (tests/mpi/openmpi/), when
# configure found its devel headers (BUILD_OMPIO). mpi-tests-openmpi runs
# them through `pstripe run -- mpirun.openmpi` on pstripe: and on plain
# paths and compares the files; mpi-kill-openmpi fails a server under
# ps_kill; mpi-sfp-lost-openmpi restarts every server under ps_sfp_lost;
# ompi-version fakes another Open MPI version (fake-ompi-version.so,
# preloaded) and expects the components to refuse;
# mpi4py-openmpi runs a Python program (ps_pycache.py, Debian's mpi4py);
# run-mixed expects `pstripe run` to refuse either MPI's program under the
# other's launcher. All exit 77 (skipped) without Open MPI.
PSM_OMPI_PROGS = tests/mpi/openmpi/ps_contig tests/mpi/openmpi/ps_views tests/mpi/openmpi/ps_coll3d tests/mpi/openmpi/ps_errors \
	tests/mpi/openmpi/ps_hints tests/mpi/openmpi/ps_atomic tests/mpi/openmpi/ps_kill \
	tests/mpi/openmpi/ps_shared tests/mpi/openmpi/ps_perm tests/mpi/openmpi/ps_random \
	tests/mpi/openmpi/ps_strided tests/mpi/openmpi/ps_icoll tests/mpi/openmpi/ps_threads \
	tests/mpi/openmpi/ps_cache tests/mpi/openmpi/ps_wbsend tests/mpi/openmpi/ps_readahead \
	tests/mpi/openmpi/ps_fcache tests/mpi/openmpi/ps_fortran tests/mpi/openmpi/ps_collapart \
	tests/mpi/openmpi/ps_sfp_lost tests/mpi/openmpi/ps_noclose
PSM_OMPI_CC = $(AM_V_CC)$(MKDIR_P) tests/mpi/openmpi && $(OMPICC) $(PSM_CFLAGS) $(CFLAGS) -o $@
if BUILD_OMPIO
check_SCRIPTS += $(PSM_OMPI_PROGS) tests/mpi/openmpi/fake-ompi-version.so
endif
TESTS += tests/mpi/mpi-tests-openmpi tests/mpi/mpi-kill-openmpi tests/mpi/ompi-version \
	tests/mpi/mpi4py-openmpi tests/mpi/mpi-sfp-lost-openmpi tests/mpi/run-mixed
EXTRA_DIST += tests/mpi/mpi-tests-openmpi tests/mpi/mpi-kill-openmpi tests/mpi/ompi-version \
	tests/mpi/run-mixed \
	tests/mpi/fake_ompi_version.c tests/mpi/mpi4py-openmpi tests/mpi/ps_pycache.py \
	tests/mpi/mpi-sfp-lost-openmpi
CLEANFILES += $(PSM_OMPI_PROGS) tests/mpi/openmpi/fake-ompi-version.so
tests/mpi/openmpi/ps_contig: tests/mpi/ps_contig.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_contig.c
tests/mpi/openmpi/ps_views: tests/mpi/ps_views.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_views.c
tests/mpi/openmpi/ps_coll3d: tests/mpi/ps_coll3d.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_coll3d.c
tests/mpi/openmpi/ps_errors: tests/mpi/ps_errors.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_errors.c
tests/mpi/openmpi/ps_hints: tests/mpi/ps_hints.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_hints.c
tests/mpi/openmpi/ps_atomic: tests/mpi/ps_atomic.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_atomic.c
tests/mpi/openmpi/ps_kill: tests/mpi/ps_kill.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_kill.c
tests/mpi/openmpi/ps_shared: tests/mpi/ps_shared.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_shared.c
tests/mpi/openmpi/ps_perm: tests/mpi/ps_perm.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_perm.c
tests/mpi/openmpi/ps_random: tests/mpi/ps_random.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_random.c
tests/mpi/openmpi/ps_strided: tests/mpi/ps_strided.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_strided.c
tests/mpi/openmpi/ps_icoll: tests/mpi/ps_icoll.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_icoll.c
tests/mpi/openmpi/ps_threads: tests/mpi/ps_threads.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_threads.c
tests/mpi/openmpi/ps_cache: tests/mpi/ps_cache.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_cache.c
tests/mpi/openmpi/ps_wbsend: tests/mpi/ps_wbsend.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_wbsend.c
tests/mpi/openmpi/ps_collapart: tests/mpi/ps_collapart.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_collapart.c
tests/mpi/openmpi/ps_readahead: tests/mpi/ps_readahead.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_readahead.c
tests/mpi/openmpi/ps_noclose: tests/mpi/ps_noclose.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_noclose.c
tests/mpi/openmpi/ps_sfp_lost: tests/mpi/ps_sfp_lost.c tests/mpi/pstest.h
	$(PSM_OMPI_CC) $(srcdir)/tests/mpi/ps_sfp_lost.c
PSM_OMPI_FC = $(AM_V_GEN)$(MKDIR_P) tests/mpi/openmpi && $(OMPIF90) -O2 -Wall -o $@
tests/mpi/openmpi/ps_fcache: tests/mpi/ps_fcache.f90
	$(PSM_OMPI_FC) $(srcdir)/tests/mpi/ps_fcache.f90
tests/mpi/openmpi/ps_fortran: tests/mpi/ps_fortran.f90
	$(PSM_OMPI_FC) $(srcdir)/tests/mpi/ps_fortran.f90
tests/mpi/openmpi/fake-ompi-version.so: tests/mpi/fake_ompi_version.c
	$(PSM_OMPI_CC) -fPIC -shared $(srcdir)/tests/mpi/fake_ompi_version.c
# ---- end of MPI tests under Open MPI ------------------------------------------

# ---- tools tests ---------------------------------------------------------------
# Shell scripts that drive the `pstripe` command (tools/) against local
# clusters of real daemons started with `pstripe local start`. Each test
# runs from the top of the build tree, keeps its files in its own directory
# under $(abs_top_builddir)/tests/tmp/ and stops its cluster in an EXIT trap
# (tests/tools/lib.sh). tests/tools/cp-1g.sh is the 1 GiB acceptance copy,
# run by hand (see its header).
check_PROGRAMS += tests/tools/exiting_holder
tests_tools_exiting_holder_SOURCES = tests/tools/exiting_holder.c
tests_tools_exiting_holder_LDADD = -lpthread
TESTS += \
	tests/tools/local.sh \
	tests/tools/cp.sh \
	tests/tools/ops.sh \
	tests/tools/errors.sh \
	tests/tools/hung-server.sh \
	tests/tools/disk-full.sh \
	tests/tools/meta-damage.sh \
	tests/tools/netns.sh \
	tests/tools/auth.sh \
	tests/tools/perm.sh \
	tests/tools/cp-partial.sh \
	tests/tools/degraded.sh \
	tests/tools/gc.sh \
	tests/tools/mv.sh \
	tests/tools/file-too-large.sh
EXTRA_DIST += \
	tests/tools/lib.sh \
	tests/tools/local.sh \
	tests/tools/cp.sh \
	tests/tools/ops.sh \
	tests/tools/errors.sh \
	tests/tools/hung-server.sh \
	tests/tools/disk-full.sh \
	tests/tools/meta-damage.sh \
	tests/tools/netns.sh \
	tests/tools/auth.sh \
	tests/tools/perm.sh \
	tests/tools/cp-partial.sh \
	tests/tools/degraded.sh \
	tests/tools/gc.sh \
	tests/tools/mv.sh \
	tests/tools/file-too-large.sh \
	tests/tools/cp-1g.sh
# ---- end of tools tests ----------------------------------------------------------

# ---- structure of the sources -----------------------------------------------------
# scripts/check-structure checks the source tree it lives in (also in a VPATH
# build): no function over 150 lines, no file over 900, no include/call cycle
# among the files of lib/ or of server/. tests/tools/check-structure.sh
# checks the checker on synthetic trees (no build needed).
TESTS += scripts/check-structure tests/tools/check-structure.sh
EXTRA_DIST += scripts/check-structure tests/tools/check-structure.sh
# tests/tools/run-matrix-analysis.sh: mpi-bench/run-matrix's targets and
# --replot on synthetic results (no build, no cluster, no fio).
TESTS += tests/tools/run-matrix-analysis.sh
EXTRA_DIST += tests/tools/run-matrix-analysis.sh
# ---- end of structure checks ------------------------------------------------------

# ---- pstripe MPICH and pstripe-run (tests/adio: adio/ build glue) -------------
# run-library: a program built with the system $(MPICC) runs on the pstripe
# MPICH through `pstripe-run mpiexec -n 2`; run-refuses: pstripe-run refuses
# when programs would get another library (including a program with an RPATH
# to the system one); open-pstripe: a pstripe: file name reaches the driver.
# They skip (77) with --disable-mpich. tests/adio/env.sh, written here, tells
# them where things are.
ADIO_TEST_PROGS = tests/adio/mpi_library tests/adio/mpi_library_rpath tests/adio/mpi_open
ADIO_TEST_CC = $(AM_V_CC)$(MKDIR_P) tests/adio && \
	$(MPICC) -std=gnu11 $(PS_WARN_CFLAGS) $(PS_OPT_CFLAGS) $(CFLAGS) -o $@
check_SCRIPTS += $(ADIO_TEST_PROGS) tests/adio/env.sh
TESTS += tests/adio/run-library.sh tests/adio/run-refuses.sh tests/adio/open-pstripe.sh
EXTRA_DIST += tests/adio/common.sh tests/adio/run-library.sh tests/adio/run-refuses.sh \
	tests/adio/open-pstripe.sh tests/adio/mpi_library.c tests/adio/mpi_open.c
CLEANFILES += $(ADIO_TEST_PROGS) tests/adio/env.sh
tests/adio/mpi_library: tests/adio/mpi_library.c
	$(ADIO_TEST_CC) $(srcdir)/tests/adio/mpi_library.c
# The same program with an RPATH (not RUNPATH) to the system libmpich's
# directory, which beats LD_LIBRARY_PATH.
tests/adio/mpi_library_rpath: tests/adio/mpi_library.c
	$(ADIO_TEST_CC) -Wl,--disable-new-dtags \
	    -Wl,-rpath,"$$(dirname "$$(readlink -f "$$($(MPICC) -print-file-name=libmpich.so.12)")")" \
	    $(srcdir)/tests/adio/mpi_library.c
tests/adio/mpi_open: tests/adio/mpi_open.c
	$(ADIO_TEST_CC) $(srcdir)/tests/adio/mpi_open.c
tests/adio/env.sh: Makefile
	$(AM_V_GEN)$(MKDIR_P) tests/adio && { \
	    echo "build_mpich=$(adio_build_mpich)"; \
	    echo "builddir='$(abs_top_builddir)'"; \
	    echo "srcdir='$(abs_top_srcdir)'"; \
	    echo "pstripe_run='$(abs_top_builddir)/adio/pstripe-run'"; \
	    echo "mpich_prefix='$(adio_mpich_prefix)'"; \
	    echo "device='$(MPICH_DEVICE)'"; \
	    echo "custom='$(MPICH_CUSTOM)'"; \
	    echo "system_mpiexec='$$(echo '$(MPICC)' | sed 's|mpicc\([^/]*\)$$|mpiexec\1|')'"; \
	    echo "system_libmpich='$$($(MPICC) -print-file-name=libmpich.so.12)'"; \
	} > $@.tmp && mv $@.tmp $@
# ---- end of pstripe MPICH and pstripe-run tests ------------------------------

# ---- protocol fuzzing (tests/fuzz) ------------------------------------------------
# fuzz_proto is a libFuzzer target over common/ps_proto.c and
# ps_proto_dump.c, built with clang when configure found one that can (else
# run-fuzz is skipped); run-fuzz runs it for PS_FUZZ_SECONDS (30) from the
# committed seed corpus.
if BUILD_FUZZ
FUZZ_SRC = $(srcdir)/tests/fuzz/fuzz_proto.c $(srcdir)/common/ps_proto.c \
	$(srcdir)/common/ps_proto_dump.c $(srcdir)/common/ps_status.c
check_SCRIPTS += tests/fuzz/fuzz_proto
tests/fuzz/fuzz_proto: $(FUZZ_SRC) $(srcdir)/common/ps_proto.h
	$(AM_V_CC)$(MKDIR_P) tests/fuzz && $(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=undefined -I$(srcdir)/common -o $@ $(FUZZ_SRC)
CLEANFILES += tests/fuzz/fuzz_proto
endif
TESTS += tests/fuzz/run-fuzz
EXTRA_DIST += tests/fuzz/run-fuzz tests/fuzz/fuzz_proto.c tests/fuzz/corpus

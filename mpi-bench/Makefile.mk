# mpi-bench: fragment included by the top-level Makefile.am
#
# pstripe-bench is an MPI program built with the system MPI compiler
# ($(MPICC) from configure), not automake's $(CC), so that it links the
# system MPICH ABI and runs unchanged on the pstripe-enabled MPICH through
# `pstripe run`. Hence a rule of our own, and SCRIPTS to install it.
# It is not built with the sanitizers: MPICH's own leaks at MPI_Finalize
# would drown a LeakSanitizer report.

PSB_HDRS = mpi-bench/psb.h
PSB_SRCS = mpi-bench/psb_main.c mpi-bench/psb_args.c mpi-bench/psb_pattern.c \
	mpi-bench/psb_report.c
PSB_CFLAGS = -std=gnu11 $(PS_WARN_CFLAGS) $(PS_OPT_CFLAGS)

psbexecdir = $(bindir)
psbexec_SCRIPTS = mpi-bench/pstripe-bench

mpi-bench/pstripe-bench: $(PSB_SRCS) $(PSB_HDRS)
	@$(MKDIR_P) mpi-bench
	$(AM_V_CC)$(MPICC) $(PSB_CFLAGS) $(CFLAGS) -o $@ \
	    $(srcdir)/mpi-bench/psb_main.c \
	    $(srcdir)/mpi-bench/psb_args.c \
	    $(srcdir)/mpi-bench/psb_pattern.c \
	    $(srcdir)/mpi-bench/psb_report.c

# pstripe-bench-openmpi: the same program built with Open MPI's mpicc, for
# `run-matrix --mpi openmpi` (pstripe through the OMPIO components of
# adio/ompio), when configure found Open MPI's devel headers.
if BUILD_OMPIO
psbexec_SCRIPTS += mpi-bench/pstripe-bench-openmpi
endif
mpi-bench/pstripe-bench-openmpi: $(PSB_SRCS) $(PSB_HDRS)
	@$(MKDIR_P) mpi-bench
	$(AM_V_CC)$(OMPICC) $(PSB_CFLAGS) $(CFLAGS) -o $@ \
	    $(srcdir)/mpi-bench/psb_main.c \
	    $(srcdir)/mpi-bench/psb_args.c \
	    $(srcdir)/mpi-bench/psb_pattern.c \
	    $(srcdir)/mpi-bench/psb_report.c

# pstripe-h5bench: the parallel HDF5 scenario of run-matrix. Built with the
# system mpicc and the flags of Debian's libhdf5-mpich-dev (pkg-config
# hdf5-mpich) when that package is installed; otherwise the rule says so and
# builds nothing, and run-matrix and smoke-test skip their HDF5 parts.
PSB_H5_SRCS = mpi-bench/psb_hdf5.c
noinst_SCRIPTS = mpi-bench/pstripe-h5bench

mpi-bench/pstripe-h5bench: $(PSB_H5_SRCS)
	@$(MKDIR_P) mpi-bench
	@if $(PKG_CONFIG) --exists hdf5-mpich; then \
	    echo "  CC       $@"; \
	    $(MPICC) $(PSB_CFLAGS) $(CFLAGS) -o $@ $(srcdir)/mpi-bench/psb_hdf5.c \
	        `$(PKG_CONFIG) --cflags hdf5-mpich` \
	        `$(PKG_CONFIG) --libs-only-L hdf5-mpich` -lhdf5; \
	else \
	    echo "mpi-bench: HDF5 for MPICH not installed (libhdf5-mpich-dev):" \
	        "pstripe-h5bench not built, HDF5 scenario skipped"; \
	fi

# The runner and its README, installed beside the data of the package.
psbdatadir = $(pkgdatadir)/mpi-bench
dist_psbdata_SCRIPTS = mpi-bench/run-matrix mpi-bench/ab-servers
dist_psbdata_DATA = mpi-bench/README mpi-bench/psb_cluster.py

CLEANFILES += mpi-bench/pstripe-bench mpi-bench/pstripe-h5bench mpi-bench/pstripe-bench-openmpi
EXTRA_DIST += $(PSB_SRCS) $(PSB_HDRS) $(PSB_H5_SRCS) mpi-bench/smoke-test

# Smoke test: small sizes, every pattern, with verification, on ufs: and,
# when the tool and the pstripe MPICH are built, on pstripe:.
TESTS += mpi-bench/smoke-test

# ab-servers' statistics and usage errors, and two short side-by-side runs
# of one server binary (about 20 s).
TESTS += mpi-bench/ab-servers-test
EXTRA_DIST += mpi-bench/ab-servers-test

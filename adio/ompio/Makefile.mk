# adio/ompio/: the pstripe fs, fbtl and sharedfp components of Open MPI's
# OMPIO (fragment included by the top-level Makefile.am; adio/ompio/README
# explains them).
#
# Built with Open MPI's compiler wrapper $(OMPICC) against its devel headers
# when configure found them (BUILD_OMPIO). Each component is a DSO named as
# Open MPI looks for it (mca_<framework>_pstripe.so), exports only its
# component structure, and links the shared libpstripe (one client per
# process, whichever components are loaded):
#
#   build tree   adio/openmpi/mca_{fs,fbtl,sharedfp}_pstripe.so  (RPATH: lib/.libs)
#   installed    $(pkglibdir)/openmpi/                           (RPATH: $(libdir))
#
# The sharedfp component also links Open MPI's libmca_common_ompio (the
# explicit-offset calls it reads and writes the shared pointer with).
#
# libpstripe-ompi-hooks.so, beside them, is what pstripe-run preloads into
# Open MPI programs (ps_ompio_hooks.c, with the MPICH driver's
# ad_pstripe_sync.c): MPI calls that flush the components' write-behind
# buffers. It defines them at the PMPI_ level (Open MPI's Fortran bindings
# call PMPI_), with the MPI_ names as aliases. Compiled with the plain
# compiler against Open MPI's headers and linked with neither libmpi nor
# libpstripe, so that a process that is not an MPI program (mpirun, orted,
# a script pstripe-run starts) loads it harmlessly: the PMPI_ functions of
# libmpi it calls are looked up (dlsym RTLD_NEXT) at their first call, and
# it loads libpstripe (found by its RPATH) with dlopen in MPI programs only.
# pstripe-run adds the directory beside its MPICH (adio/mpich, or
# $(pkglibdir)/mpich) named openmpi to Open MPI's component path.

EXTRA_DIST += adio/ompio/README adio/ompio/configure.m4 adio/ompio/ps_ompio.h \
	adio/ompio/ps_ompio_common.c adio/ompio/fs_pstripe.c adio/ompio/fbtl_pstripe.c \
	adio/ompio/sharedfp_pstripe.c adio/ompio/ps_ompio_hooks.c adio/ompio/ps_ompio_coll.c \
	adio/ompio/ps_ompio_hints.c

ompio_instdir = $(pkglibdir)/openmpi
ompio_build_dsos =
ompio_inst_dsos =
if BUILD_OMPIO
ompio_build_dsos += adio/openmpi/mca_fs_pstripe.so adio/openmpi/mca_fbtl_pstripe.so \
	adio/openmpi/mca_sharedfp_pstripe.so adio/openmpi/libpstripe-ompi-hooks.so
ompio_inst_dsos += adio/ompio/inst/mca_fs_pstripe.so adio/ompio/inst/mca_fbtl_pstripe.so \
	adio/ompio/inst/mca_sharedfp_pstripe.so adio/ompio/inst/libpstripe-ompi-hooks.so
ompio_cflags = -std=gnu11 $(PS_WARN_CFLAGS) $(PS_OPT_CFLAGS) $(CFLAGS) -fPIC -shared \
	-fvisibility=hidden $(OMPI_CPPFLAGS) -I$(top_srcdir)/lib -I$(top_srcdir)/common
ompio_deps = $(srcdir)/adio/ompio/ps_ompio.h $(srcdir)/adio/ompio/ps_ompio_common.c \
	$(srcdir)/lib/pstripe.h lib/libpstripe.la
# ompio_link (then -Wl,-rpath,...): link $@ from adio/ompio/<framework>_pstripe.c and the
# common part against the shared libpstripe of this build tree.
ompio_link = $(OMPICC) $(ompio_cflags) -o $@ $(srcdir)/adio/ompio/$${f}_pstripe.c \
	$(srcdir)/adio/ompio/ps_ompio_common.c -L$(abs_top_builddir)/lib/.libs -lpstripe

ompio_hooks_src = $(srcdir)/adio/ompio/ps_ompio_hooks.c $(srcdir)/adio/ad_pstripe/ad_pstripe_sync.c
ompio_hooks_link = $(CC) -std=gnu11 $(PS_WARN_CFLAGS) $(PS_OPT_CFLAGS) $(CFLAGS) -fPIC -shared \
	-fvisibility=hidden -DPS_SYNC_PRELOAD $(OMPI_CPPFLAGS) -I$(top_srcdir)/lib \
	-I$(top_srcdir)/common -I$(top_srcdir)/adio/ad_pstripe -o $@ $(ompio_hooks_src)
adio/openmpi/libpstripe-ompi-hooks.so: $(ompio_hooks_src) \
		$(srcdir)/adio/ad_pstripe/ad_pstripe_sync.h $(ompio_deps)
	@$(MKDIR_P) adio/openmpi
	$(AM_V_CC)$(ompio_hooks_link) -Wl,-rpath,$(abs_top_builddir)/lib/.libs
adio/ompio/inst/libpstripe-ompi-hooks.so: $(ompio_hooks_src) \
		$(srcdir)/adio/ad_pstripe/ad_pstripe_sync.h $(ompio_deps)
	@$(MKDIR_P) adio/ompio/inst
	$(AM_V_CC)$(ompio_hooks_link) -Wl,-rpath,$(libdir)
# (the fs component also decides the hooks' collective calls, ps_ompio_coll.c,
# and takes the hints, ps_ompio_hints.c: at open, set_info and set_view)
ompio_fs_src = $(srcdir)/adio/ompio/ps_ompio_coll.c $(srcdir)/adio/ompio/ps_ompio_hints.c
ompio_fs_deps = $(srcdir)/adio/ompio/fs_pstripe.c $(ompio_fs_src) $(ompio_deps)
adio/openmpi/mca_fs_pstripe.so: $(ompio_fs_deps)
	@$(MKDIR_P) adio/openmpi
	$(AM_V_CC)f=fs; $(ompio_link) $(ompio_fs_src) \
		-Wl,-rpath,$(abs_top_builddir)/lib/.libs
adio/ompio/inst/mca_fs_pstripe.so: $(ompio_fs_deps)
	@$(MKDIR_P) adio/ompio/inst
	$(AM_V_CC)f=fs; $(ompio_link) $(ompio_fs_src) \
		-Wl,-rpath,$(libdir)
adio/openmpi/mca_fbtl_pstripe.so: $(srcdir)/adio/ompio/fbtl_pstripe.c $(ompio_deps)
	@$(MKDIR_P) adio/openmpi
	$(AM_V_CC)f=fbtl; $(ompio_link) -Wl,-rpath,$(abs_top_builddir)/lib/.libs
adio/ompio/inst/mca_fbtl_pstripe.so: $(srcdir)/adio/ompio/fbtl_pstripe.c $(ompio_deps)
	@$(MKDIR_P) adio/ompio/inst
	$(AM_V_CC)f=fbtl; $(ompio_link) -Wl,-rpath,$(libdir)
adio/openmpi/mca_sharedfp_pstripe.so: $(srcdir)/adio/ompio/sharedfp_pstripe.c $(ompio_deps)
	@$(MKDIR_P) adio/openmpi
	$(AM_V_CC)f=sharedfp; $(ompio_link) -lmca_common_ompio -Wl,-rpath,$(abs_top_builddir)/lib/.libs
adio/ompio/inst/mca_sharedfp_pstripe.so: $(srcdir)/adio/ompio/sharedfp_pstripe.c $(ompio_deps)
	@$(MKDIR_P) adio/ompio/inst
	$(AM_V_CC)f=sharedfp; $(ompio_link) -lmca_common_ompio -Wl,-rpath,$(libdir)
endif

all-local: ompio-all
ompio-all: $(ompio_build_dsos) $(ompio_inst_dsos)

install-exec-local: ompio-install-exec
ompio-install-exec: $(ompio_inst_dsos)
	test -z '$(ompio_inst_dsos)' || $(MKDIR_P) '$(DESTDIR)$(ompio_instdir)'
	for f in $(ompio_inst_dsos); do \
	    $(INSTALL_PROGRAM) $$f '$(DESTDIR)$(ompio_instdir)/'; done

uninstall-local: ompio-uninstall
ompio-uninstall:
	rm -rf '$(DESTDIR)$(ompio_instdir)'

CLEANFILES += $(ompio_build_dsos) $(ompio_inst_dsos)
.PHONY: ompio-all ompio-install-exec ompio-uninstall

# adio/: the MPICH that carries the pstripe ROMIO driver, and `pstripe run`
# (fragment included by the top-level Makefile.am; adio/README explains it).
#
# `make` builds an MPICH of the system MPICH's version with adio/ad_pstripe
# compiled into its ROMIO (adio/build-mpich.sh, in a kept directory under
# $(MPICH_CACHE)), and copies it into the build tree, so that `make check`
# runs without `make install`. `make install` copies it once more:
#
#   build tree   adio/mpich/             bin/mpicc, bin/mpiexec, lib/libmpi.so.12,
#                                        lib/abi/libmpich.so.12 -> ../libmpi.so.12
#                adio/pstripe-run, adio/pstripe-mpi-check
#   installed    $(pkglibdir)/mpich/     (PREFIX/lib/pstripe/mpich)
#                $(pkglibexecdir)/pstripe-run, pstripe-mpi-check
#
# The installed MPICH is a private one, under pkglibdir rather than bindir and
# libdir: there its mpicc, mpiexec and libmpi.so would shadow the system MPI
# for every program (and for ldconfig). Only pstripe-run puts it in front.
# pstripe-run and the check program go to pkglibexecdir because the pstripe
# tool runs them (`pstripe run`); users do not.

adio_mpich_prefix = $(abs_top_builddir)/adio/mpich
adio_mpich_instdir = $(pkglibdir)/mpich
# The driver and the client library linked with it. Make variables, so that a
# build can be pointed at another copy (make adio_driver_dir=...).
adio_driver_dir = $(abs_top_srcdir)/adio/ad_pstripe
adio_client_la = lib/libpsclient.la
adio_client_a = $(abs_top_builddir)/lib/.libs/libpsclient.a

EXTRA_DIST += adio/README adio/build-mpich.sh adio/patch-romio.sh \
	adio/pstripe-run.in adio/pstripe-mpi-check.c

# pstripe-run: one template, two copies. The build tree's points into the
# build tree; the installed one (adio/inst/) into the installed MPICH.
if BUILD_MPICH
adio_build_mpich = yes
else
adio_build_mpich = no
endif
adio_run_sed = sed \
	-e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	-e 's|@MPICH_CUSTOM[@]|$(MPICH_CUSTOM)|g' \
	-e 's|@BUILD_MPICH[@]|$(adio_build_mpich)|g'

pkglibexec_SCRIPTS = adio/inst/pstripe-run

adio/pstripe-run: adio/pstripe-run.in Makefile
	@$(MKDIR_P) adio
	$(AM_V_GEN)$(adio_run_sed) \
	    -e 's|@MPICH_PREFIX[@]|$(adio_mpich_prefix)|g' \
	    -e 's|@MPI_CHECK[@]|$(abs_top_builddir)/adio/pstripe-mpi-check|g' \
	    $(srcdir)/adio/pstripe-run.in > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@

adio/inst/pstripe-run: adio/pstripe-run.in Makefile
	@$(MKDIR_P) adio/inst
	$(AM_V_GEN)$(adio_run_sed) \
	    -e 's|@MPICH_PREFIX[@]|$(adio_mpich_instdir)|g' \
	    -e 's|@MPI_CHECK[@]|$(pkglibexecdir)/pstripe-mpi-check|g' \
	    $(srcdir)/adio/pstripe-run.in > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@

# The check program pstripe-run runs first: built with the system mpicc, like
# the programs it will run, it reports which libmpi the loader gave it.
adio/pstripe-mpi-check: adio/pstripe-mpi-check.c
	@$(MKDIR_P) adio
	$(AM_V_CC)$(MPICC) -std=gnu11 $(PS_WARN_CFLAGS) $(PS_OPT_CFLAGS) $(CFLAGS) \
	    -o $@ $(srcdir)/adio/pstripe-mpi-check.c

all-local: adio-all
adio_all = adio/pstripe-run adio/inst/pstripe-run
CLEANFILES += adio/pstripe-run adio/inst/pstripe-run adio/pstripe-mpi-check
if BUILD_MPICH
adio_all += adio/pstripe-mpi-check adio-mpich
endif
adio-all: $(adio_all)

# Runs every time; build-mpich.sh returns at once when neither the driver,
# the client library nor the options changed. $(MAKE) on the line hands our
# jobserver (-j) down to MPICH's make.
adio-mpich: $(adio_client_la)
	$(AM_V_GEN)MAKE="$(MAKE)" $(SHELL) $(srcdir)/adio/build-mpich.sh build \
	    --cache='$(MPICH_CACHE)' \
	    --source='$(MPICH_SOURCE)' \
	    --deb-source='$(MPICH_DEB_SOURCE)' \
	    --system-version='$(MPICH_SYSTEM_VERSION)' \
	    --driver='$(adio_driver_dir)' \
	    --client-lib='$(adio_client_a)' \
	    --cppflags='-I$(abs_top_srcdir)/lib -I$(abs_top_srcdir)/common' \
	    --libs='$(UCX_LIBS) $(INIH_LIBS)' \
	    --device='$(MPICH_DEVICE)' \
	    --custom='$(MPICH_CUSTOM)' \
	    --configure-flags='$(MPICH_CONFIGURE_FLAGS)' \
	    --prefix='$(adio_mpich_prefix)' \
	    --stamp='$(abs_top_builddir)/adio/mpich.stamp'

install-exec-local: adio-install-exec
adio-install-exec:
	if test '$(adio_build_mpich)' = yes; then \
	    $(MKDIR_P) '$(DESTDIR)$(pkglibexecdir)' && \
	    $(INSTALL_PROGRAM) adio/pstripe-mpi-check '$(DESTDIR)$(pkglibexecdir)/pstripe-mpi-check' && \
	    $(SHELL) $(srcdir)/adio/build-mpich.sh install \
	        --from='$(adio_mpich_prefix)' \
	        --to='$(DESTDIR)$(adio_mpich_instdir)' \
	        --prefix='$(adio_mpich_instdir)'; \
	fi

uninstall-local: adio-uninstall
adio-uninstall:
	rm -rf '$(DESTDIR)$(adio_mpich_instdir)' '$(DESTDIR)$(pkglibexecdir)/pstripe-mpi-check'

# `make clean` drops the build tree's copy (the next make copies it again from
# the kept build); distclean also drops the build, if it is this tree's own.
clean-local: adio-clean
adio-clean:
	rm -rf adio/mpich adio/mpich.stamp
distclean-local: adio-distclean
adio-distclean:
	if test '$(MPICH_CACHE)' = '$(abs_top_builddir)/adio/mpich-cache'; then \
	    rm -rf '$(MPICH_CACHE)'; fi

.PHONY: adio-all adio-mpich adio-install-exec adio-uninstall adio-clean adio-distclean

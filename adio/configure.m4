dnl adio/configure.m4: options for the pstripe-enabled MPICH (owned by adio/).
dnl
dnl `make` builds an MPICH of the same version as the system one with the
dnl pstripe ROMIO driver compiled in (adio/build-mpich.sh does the work; see
dnl adio/README). Here we only decide where its source comes from, where it
dnl is built, and check the tools that build needs, so that a missing piece
dnl fails now, with a clear message, rather than ten minutes into `make`.

AC_ARG_ENABLE([mpich],
  [AS_HELP_STRING([--disable-mpich],
    [do not build the MPICH with the pstripe ROMIO driver (then there is no
     `pstripe run' and no pstripe: in MPI programs; for daemon-only work)])],
  [], [enable_mpich=yes])
AC_ARG_WITH([mpich-source],
  [AS_HELP_STRING([--with-mpich-source=DIR|TARBALL],
    [MPICH source tree or tarball to build the driver into (default: the
     Debian source package of the system MPICH, by apt-get source)])],
  [], [with_mpich_source=])
AC_ARG_WITH([mpich-cache],
  [AS_HELP_STRING([--with-mpich-cache=DIR],
    [keep the MPICH download and build in DIR; build trees configured alike
     with the same DIR share them (default: BUILDDIR/adio/mpich-cache)])],
  [], [with_mpich_cache=])
AC_ARG_WITH([mpich-device],
  [AS_HELP_STRING([--with-mpich-device=DEVICE],
    [MPICH device of the pstripe MPICH (default: system, the system
     MPICH's own, from its configure line)])],
  [], [with_mpich_device=system])
AC_ARG_VAR([MPICH_CONFIGURE_FLAGS],
  [extra arguments for MPICH's configure, e.g. --enable-g=dbg])

MPICH_SYSTEM_VERSION=
MPICH_SOURCE=
MPICH_DEB_SOURCE=
MPICH_CACHE=
MPICH_DEVICE=$with_mpich_device
dnl The string MPI_Get_library_version reports as "MPICH Custom Information";
dnl pstripe-run checks it to know the pstripe MPICH is the one loaded.
MPICH_CUSTOM="pstripe-$PACKAGE_VERSION"

# ps_abs_path VAR: make the path in $VAR absolute (relative to the directory
# configure runs in).
ps_abs_path() {
  eval "ps_p=\$$1"
  case $ps_p in
    /*) ;;
    *) eval "$1=\"\$(pwd)/\$ps_p\"" ;;
  esac
}

AS_IF([test "x$enable_mpich" != xno && test "x$enable_asan" = xyes],
  [AC_MSG_ERROR([--enable-asan needs --disable-mpich: the client library linked into the pstripe MPICH would need the sanitizer runtime loaded first in every MPI program, which pstripe-run does not arrange])])

AS_IF([test "x$enable_mpich" != xno], [
  # The version of the system MPICH, from the mpi.h that $MPICC compiles with:
  # the source we build must be the same version (same ABI, libmpich.so.12).
  AC_MSG_CHECKING([for the MPICH version behind $MPICC])
  cat > conftest.c <<_PS_EOF
#include <mpi.h>
ps_mpich_version=MPICH_VERSION
_PS_EOF
  MPICH_SYSTEM_VERSION=`$MPICC -E conftest.c 2>/dev/null | sed -n 's/^ps_mpich_version *= *"\(.*\)".*/\1/p'`
  ps_mpi_h=`$MPICC -E conftest.c 2>/dev/null | sed -n 's/^# @<:@0-9@:>@* "\(.*\/mpi\.h\)".*/\1/p' | head -n 1`
  rm -f conftest.c
  AS_IF([test -z "$MPICH_SYSTEM_VERSION"],
    [AC_MSG_RESULT([none])
     AC_MSG_ERROR([$MPICC is not an MPICH compiler wrapper (its mpi.h defines no MPICH_VERSION); set MPICC=mpicc.mpich, or use --disable-mpich])])
  AC_MSG_RESULT([$MPICH_SYSTEM_VERSION ($ps_mpi_h)])

  AS_IF([test -n "$with_mpich_source" && test "x$with_mpich_source" != xno], [
    MPICH_SOURCE=$with_mpich_source
    ps_abs_path MPICH_SOURCE
    AS_IF([test -d "$MPICH_SOURCE"],
      [AS_IF([test -f "$MPICH_SOURCE/configure" && test -d "$MPICH_SOURCE/src/mpi/romio"], [],
         [AC_MSG_ERROR([--with-mpich-source=$MPICH_SOURCE: not an MPICH release tree (no configure or src/mpi/romio)])])],
      [test -f "$MPICH_SOURCE"], [],
      [AC_MSG_ERROR([--with-mpich-source=$MPICH_SOURCE: no such file or directory])])
  ], [
    # Debian's source package of the system MPICH: the package that owns mpi.h.
    AC_MSG_CHECKING([for the Debian source package of the system MPICH])
    ps_pkg=`dpkg -S "$ps_mpi_h" 2>/dev/null | sed -n '1s/:.*//p'`
    AS_IF([test -n "$ps_pkg"],
      [MPICH_DEB_SOURCE=`dpkg-query -W -f='${source:Package}=${source:Version}' "$ps_pkg" 2>/dev/null`])
    AS_IF([test -z "$MPICH_DEB_SOURCE"],
      [AC_MSG_RESULT([none])
       AC_MSG_ERROR([$ps_mpi_h belongs to no Debian package; give the MPICH $MPICH_SYSTEM_VERSION source with --with-mpich-source=DIR|TARBALL, or use --disable-mpich])])
    AC_MSG_RESULT([$MPICH_DEB_SOURCE])
    AC_CHECK_PROG([PS_HAVE_APT_GET], [apt-get], [yes], [no])
    AS_IF([test "x$PS_HAVE_APT_GET" != xyes],
      [AC_MSG_ERROR([apt-get not found to fetch the MPICH source: use --with-mpich-source=DIR|TARBALL, or --disable-mpich])])
  ])

  MPICH_CACHE=$with_mpich_cache
  AS_IF([test -z "$MPICH_CACHE" || test "x$MPICH_CACHE" = xyes || test "x$MPICH_CACHE" = xno],
        [MPICH_CACHE="`pwd`/adio/mpich-cache"])
  ps_abs_path MPICH_CACHE

  # Tools build-mpich.sh and pstripe-run use beyond those every build needs.
  for ps_tool in flock sha256sum tar xz autoreconf ldd; do
    AC_MSG_CHECKING([for $ps_tool])
    AS_IF([command -v $ps_tool >/dev/null 2>&1],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([$ps_tool is needed to build the pstripe MPICH: run scripts/install-deps, or use --disable-mpich])])
  done
])

AC_SUBST([MPICH_SYSTEM_VERSION])
AC_SUBST([MPICH_SOURCE])
AC_SUBST([MPICH_DEB_SOURCE])
AC_SUBST([MPICH_CACHE])
AC_SUBST([MPICH_DEVICE])
AC_SUBST([MPICH_CUSTOM])
AM_CONDITIONAL([BUILD_MPICH], [test "x$enable_mpich" != xno])

dnl adio/ompio/configure.m4: the pstripe components for Open MPI's OMPIO
dnl (owned by adio/ompio/; adio/ompio/README explains them).
dnl
dnl They are built when Open MPI's compiler wrapper and devel headers are
dnl there (Debian: libopenmpi-dev), against that Open MPI only: they refuse
dnl to load into another major.minor. Without them, a message says so and
dnl the rest builds as before.

AC_ARG_ENABLE([ompio],
  [AS_HELP_STRING([--disable-ompio],
    [do not build the pstripe fs/fbtl/sharedfp components for Open MPI
     (default: build them when mpicc.openmpi and its devel headers are found)])],
  [], [enable_ompio=auto])
AC_ARG_VAR([OMPICC], [Open MPI C compiler wrapper (default: mpicc.openmpi)])
AC_ARG_VAR([OMPIF90], [Open MPI Fortran compiler wrapper, for its Fortran test (default: mpif90.openmpi)])

ps_ompio=no
OMPI_VERSION_MM=
OMPI_COMPONENT_DIR=
AS_IF([test "x$enable_ompio" != xno], [
  AC_PATH_PROGS([OMPICC], [mpicc.openmpi], [no])
  ps_ompio_why=
  AS_IF([test "x$OMPICC" = xno],
    [ps_ompio_why="mpicc.openmpi not found (package libopenmpi-dev)"],
    [AC_MSG_CHECKING([for Open MPI's OMPIO devel headers])
     ps_ompio_inc=`$OMPICC --showme:incdirs 2>/dev/null`
     ps_ompio_cppflags=
     for ps_d in $ps_ompio_inc; do ps_ompio_cppflags="$ps_ompio_cppflags -I$ps_d"; done
     cat > conftest.c <<_PS_EOF
#include "ompi_config.h"
#include "ompi/mca/fs/fs.h"
#include "ompi/mca/fbtl/fbtl.h"
#include "ompi/mca/sharedfp/sharedfp.h"
#include "ompi/mca/common/ompio/common_ompio.h"
ps_ompi_version=OMPI_MAJOR_VERSION.OMPI_MINOR_VERSION
_PS_EOF
     AS_IF([$OMPICC $ps_ompio_cppflags -E conftest.c >conftest.i 2>/dev/null],
       [OMPI_VERSION_MM=`sed -n 's/^ps_ompi_version=\(@<:@0-9@:>@*\) *\. *\(@<:@0-9@:>@*\).*/\1.\2/p' conftest.i`
        AC_MSG_RESULT([yes (Open MPI $OMPI_VERSION_MM)])],
       [AC_MSG_RESULT([no])
        ps_ompio_why="$OMPICC does not compile against fs.h/fbtl.h/common_ompio.h (Open MPI devel headers missing)"])
     rm -f conftest.c conftest.i
     AS_IF([test -z "$ps_ompio_why" && test "x$OMPI_VERSION_MM" != x4.1],
       [ps_ompio_why="Open MPI $OMPI_VERSION_MM: the components are written for Open MPI 4.1's OMPIO"])])
  dnl the Fortran test of the components' caches (tests/mpi/ps_fcache)
  AS_IF([test -z "$ps_ompio_why"], [
    AC_PATH_PROGS([OMPIF90], [mpif90.openmpi], [no])
    AC_MSG_CHECKING([whether $OMPIF90 compiles a Fortran 90 MPI program])
    printf 'program t\n  use mpi\n  integer :: e\n  call MPI_Init(e)\n  call MPI_Finalize(e)\nend program t\n' > conftest-mpi.f90
    AS_IF([test "x$OMPIF90" != xno && $OMPIF90 conftest-mpi.f90 -o conftest-mpi >/dev/null 2>&1],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       ps_ompio_why="no working mpif90.openmpi (packages libopenmpi-dev, gfortran)"])
    rm -f conftest-mpi.f90 conftest-mpi])
  AS_IF([test -z "$ps_ompio_why"], [
    ps_ompio=yes
    OMPI_CPPFLAGS=$ps_ompio_cppflags
    # where Open MPI's own components are, for `pstripe run --check'
    for ps_d in `$OMPICC --showme:libdirs 2>/dev/null`; do
      for ps_c in "$ps_d/openmpi3" "$ps_d/openmpi"; do
        AS_IF([test -z "$OMPI_COMPONENT_DIR" && test -f "$ps_c/mca_io_ompio.so"],
              [OMPI_COMPONENT_DIR=$ps_c])
      done
    done
  ], [test "x$enable_ompio" = xyes], [
    AC_MSG_ERROR([--enable-ompio: $ps_ompio_why])
  ], [
    AC_MSG_NOTICE([not building the Open MPI components (pstripe: under Open MPI): $ps_ompio_why; run scripts/install-deps to get them])
  ])
])
AC_MSG_CHECKING([whether to build the pstripe components for Open MPI])
AC_MSG_RESULT([$ps_ompio])
AC_SUBST([OMPI_CPPFLAGS])
AC_SUBST([OMPI_VERSION_MM])
AC_SUBST([OMPI_COMPONENT_DIR])
AM_CONDITIONAL([BUILD_OMPIO], [test "x$ps_ompio" = xyes])

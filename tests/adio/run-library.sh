#!/bin/sh
# A program built with the system mpicc, started by
# `pstripe-run mpiexec -n 2 PROG`, runs on the pstripe MPICH: both ranks
# report its device, its custom version string and its libmpi.so.12; the
# same program without pstripe-run gets the system libmpich.so.12. Also: under
# pstripe-run, mpicc and mpiexec are the pstripe MPICH's, and a program built
# with that mpicc runs too.
. "$(dirname "$0")/common.sh"
prog=tests/adio/mpi_library
ours=$(readlink -f "$mpich_prefix/lib/libmpi.so.12")

# The program is a system-MPICH program (it asks for libmpich.so.12) ...
ldd "$prog" | grep -q 'libmpich\.so\.12 => ' || fail "$prog does not link libmpich.so.12"
# ... and without pstripe-run it runs on the system library.
run "$system_mpiexec" -n 1 "$prog"
[ $rc -eq 0 ] || fail "$prog on the system MPICH"
case $out in
    *"custom=$custom"*|*"library=$ours"*) fail "without pstripe-run, $prog already runs on the pstripe MPICH" ;;
esac
# Configured as the system MPICH (--with-mpich-device=system, the default):
# ours must report the system's device; the custom version tells them apart.
if [ "$device" = system ]; then
    device=$(echo "$out" | sed -n 's/^rank 0\/1 device=\([^ ]*\) .*/\1/p')
    [ -n "$device" ] || fail "no device in the system MPICH's output"
fi

run "$pstripe_run" --check
[ $rc -eq 0 ] || fail "pstripe-run --check"
echo "$out" | grep -q "library: $ours\$" || fail "pstripe-run --check does not report $ours"

run "$pstripe_run" mpiexec -n 2 "$prog"
[ $rc -eq 0 ] || fail "pstripe-run mpiexec -n 2 $prog"
for r in 0 1; do
    echo "$out" | grep -qxF "rank $r/2 device=$device custom=$custom library=$ours" ||
        fail "rank $r does not report the pstripe MPICH ($device, $custom, $ours)"
done

run "$pstripe_run" sh -c 'command -v mpiexec; command -v mpicc'
[ "$out" = "$mpich_prefix/bin/mpiexec
$mpich_prefix/bin/mpicc" ] || fail "under pstripe-run, mpiexec and mpicc are not $mpich_prefix/bin's"

run "$pstripe_run" mpicc -o "$tmp/mpi_library_ours" "$srcdir/tests/adio/mpi_library.c"
[ $rc -eq 0 ] || fail "the pstripe MPICH's mpicc cannot build $prog"
run "$pstripe_run" mpiexec -n 1 "$tmp/mpi_library_ours"
echo "$out" | grep -qxF "rank 0/1 device=$device custom=$custom library=$ours" ||
    fail "a program built with the pstripe MPICH's mpicc does not run on it"

rm -rf "$tmp"
echo PASS

#!/bin/sh
# pstripe-run refuses (exit 125, a message, CMD not run) whenever programs
# would not get the pstripe MPICH:
#   1. an MPICH prefix whose library is the system one (custom string wrong);
#   2. the libmpich.so.12 link missing, so the loader silently keeps the
#      system library (the library path is wrong);
#   3. a program with an RPATH to the system library, which beats
#      LD_LIBRARY_PATH (found by asking ldd about the command's programs).
. "$(dirname "$0")/common.sh"
sys_lib=$(readlink -f "$system_libmpich")

# expect_refusal WHAT: the last run must have failed with 125, said why, and
# not have run the command (which would have made $tmp/ran).
expect_refusal() {
    [ $rc -eq 125 ] || fail "$1: pstripe-run exited $rc, not 125"
    echo "$out" | grep -q "pstripe-run: refusing" || fail "$1: no refusal message"
    [ ! -e "$tmp/ran" ] || fail "$1: the command was run anyway"
}

# 1. A prefix that is the system MPICH in disguise.
fake=$tmp/system-mpich
mkdir -p "$fake/bin" "$fake/lib/abi"
ln -s "$system_mpiexec" "$fake/bin/mpiexec"
ln -s "$sys_lib" "$fake/lib/libmpi.so.12"
ln -s "$sys_lib" "$fake/lib/abi/libmpich.so.12"
run env PSTRIPE_MPICH_PREFIX="$fake" "$pstripe_run" touch "$tmp/ran"
expect_refusal "system library as MPICH"
echo "$out" | grep -q 'not the pstripe MPICH' || fail "no word on the custom version string"

# 2. The real pstripe MPICH, but without lib/abi/libmpich.so.12.
nolink=$tmp/no-abi-link
mkdir -p "$nolink/lib"
ln -s "$mpich_prefix/bin" "$nolink/bin"
ln -s "$(readlink -f "$mpich_prefix/lib/libmpi.so.12")" "$nolink/lib/libmpi.so.12"
run env PSTRIPE_MPICH_PREFIX="$nolink" "$pstripe_run" touch "$tmp/ran"
expect_refusal "no libmpich.so.12 link"
echo "$out" | grep -q "the loader gave this program $sys_lib" || fail "no word on the library loaded"

# 3. A program whose RPATH points at the system library's directory. First
#    show that the refusal is deserved: in pstripe-run's environment it
#    really loads the system library.
prog=tests/adio/mpi_library_rpath
readelf -d "$prog" | grep -q '(RPATH)' || fail "$prog has no RPATH"
run env LD_LIBRARY_PATH="$mpich_prefix/lib/abi:$mpich_prefix/lib" "$system_mpiexec" -n 1 "$prog"
echo "$out" | grep -q "library=$sys_lib" || fail "$prog does not load the system library; the test proves nothing"
run "$pstripe_run" mpiexec -n 1 "$prog"
expect_refusal "program with an RPATH"
echo "$out" | grep -q "$prog: the loader resolves libmpich.so.12 to" || fail "no word on $prog"

rm -rf "$tmp"
echo PASS

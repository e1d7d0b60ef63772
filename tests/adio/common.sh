# tests/adio/common.sh: sourced by the tests/adio scripts (run by `make
# check` from the top of the build tree, where tests/adio/env.sh, written by
# make, says where things are).
set -u
. tests/adio/env.sh

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

[ "$build_mpich" = yes ] || skip "configured with --disable-mpich"

# Every test works in its own directory under the build tree.
tmp=$builddir/tests/tmp/adio-$(basename "$0" .sh)
rm -rf "$tmp"
mkdir -p "$tmp"

# run CMD...: run with a time limit (a hung mpiexec must not hang make check),
# output in $out, status in $rc, both printed for the log.
run() {
    echo "+ $*"
    out=$(timeout 300 "$@" 2>&1)
    rc=$?
    printf '%s\n[exit %d]\n' "$out" "$rc"
}

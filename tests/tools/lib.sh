# tests/tools/lib.sh: helpers for the `pstripe` tool tests (sourced).
#
# Each test runs from the top of the build tree (as `make check` does; set
# PSTRIPE_BUILDDIR to run one by hand from elsewhere), uses its own directory
# $tmp under tests/tmp/ of the build tree (a real disk: O_DIRECT must work
# there, so never /dev/shm), starts its cluster with `pstripe local start`
# and always stops it from an EXIT trap. On failure the directory is kept and
# the servers' logs are printed; on success it is removed. Every call of the
# tool is bounded by a timeout, so a hang fails the test instead of make check.

set -eu

top_builddir=${PSTRIPE_BUILDDIR:-$PWD}
PSTRIPE=$top_builddir/tools/pstripe
if [ ! -x "$PSTRIPE" ] || [ ! -x "$top_builddir/server/pstripe-server" ]; then
    echo "$0: no tools/pstripe or server/pstripe-server under $top_builddir;" \
         "run from the top of the build tree (make check) or set PSTRIPE_BUILDDIR" >&2
    exit 99 # hard error for the automake harness
fi

# Hermetic: nothing from the caller's environment (PSTRIPE_CONFIG of a real
# cluster, PSTRIPE_SERVER of another build) may leak into a test; only the
# tests' own PSTRIPE_TEST_* knobs (and PSTRIPE_BUILDDIR, read above) stay.
for var in $(env | sed -n 's/^\(PSTRIPE_[A-Z_]*\)=.*/\1/p'); do
    case $var in
    PSTRIPE_TEST_*) ;;
    *) unset "$var" ;;
    esac
done

test_name=$(basename "$0" .sh)
tmp=$top_builddir/tests/tmp/tools-$test_name.$$
cluster=$tmp/cluster
rm -rf "$tmp"
mkdir -p "$tmp"
export PSTRIPE_CONFIG=$cluster/client.conf
# Small clusters on a shared 2-core machine: one worker per server.
workers=${PSTRIPE_TEST_WORKERS:-1}

# Bounded call of the tool.
pst() {
    timeout -k 5 "${PST_TIMEOUT:-120}" "$PSTRIPE" "$@"
}

step() {
    printf '\n==== %s\n' "$*"
}

# need_prog BIN [WHY]: the MPI test program BIN is built (else exit 99, or
# skip saying WHY it may be missing) and is not older than its source
# beside the calling script: a run by hand after a change of the source
# would test the old program (make check rebuilds it first).
need_prog() {
    if [ ! -x "$1" ]; then
        [ -n "${2:-}" ] && { echo "SKIP: $1 is not built ($2)"; exit 77; }
        echo "$0: $1 is not built" >&2
        exit 99
    fi
    for src in "$(dirname "$0")/$(basename "$1")".c "$(dirname "$0")/$(basename "$1")".f90; do
        if [ -f "$src" ] && [ "$src" -nt "$1" ]; then
            echo "$0: $1 is older than $src: rebuild it (make ${1#"$top_builddir"/})" >&2
            exit 99
        fi
    done
}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# expect_status CODE CMD...: run CMD, keep stdout in $out and stderr in $err,
# fail unless it exits with CODE.
expect_status() {
    want=$1
    shift
    set +e
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    set -e
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
    printf '$ %s -> %s\n' "$*" "$got"
    [ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/  | /'
    [ -n "$err" ] && printf '%s\n' "$err" | sed 's/^/  ! /'
    [ "$got" = "$want" ] || fail "'$*' exited with $got, expected $want"
}

# contains TEXT PATTERN WHAT: fail unless TEXT matches the grep -E PATTERN.
contains() {
    printf '%s\n' "$1" | grep -Eq -- "$2" || fail "$3: no match for /$2/"
}

not_contains() {
    if printf '%s\n' "$1" | grep -Eq -- "$2"; then
        fail "$3: unexpected match for /$2/"
    fi
}

# wait_until SECONDS CMD...: run CMD until it succeeds, at most SECONDS;
# returns 1 if it never did. The one place a test polls: a short pause
# between tries, never a fixed wait for something to have happened.
wait_until() {
    wait_deadline=$(($(date +%s) + $1))
    shift
    until "$@"; do
        [ "$(date +%s)" -lt "$wait_deadline" ] || return 1
        sleep 0.05
    done
}

# (a small server cache: the default, 2g per server, is faulted in after
# start, and tests run several daemons at once)
start_cluster() {
    pst local start --dir "$cluster" --workers "$workers" --set cache=64m "$@"
}

# write_counts: "BATCHES REGIONS" written, summed over the test cluster's
# servers.
write_counts() {
    pst stats | sed -n 's/^ *written .* in \([0-9]*\) batches, \([0-9]*\) regions.*/\1 \2/p' |
        awk '{ b += $1; r += $2 } END { print b + 0, r + 0 }'
}

# Pid of server i of the test cluster.
# Give server 0 a small ext4 file system (64 MiB in a file under $tmp,
# loop-mounted on its data directory, unmounted at exit); extra arguments go
# to mkfs.ext4. Exits 77 (skip) without root, mkfs.ext4 or loop devices.
loop_mount_server0() {
    img=$tmp/disk.img
    mnt=$cluster/server0
    if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 >/dev/null || [ ! -e /dev/loop-control ]; then
        echo "SKIP: needs root, mkfs.ext4 and loop devices"
        exit 77
    fi
    truncate -s 64M "$img"
    mkfs.ext4 -q -F "$@" "$img"
    mkdir -p "$mnt"
    if ! mount -o loop "$img" "$mnt"; then
        echo "SKIP: cannot loop-mount a file system here"
        exit 77
    fi
    # the EXIT trap stops the server, then runs this
    cleanup_extra='umount "$mnt" 2>/dev/null || umount -l "$mnt"'
}

server_pid() {
    cat "$cluster/server$1.pid"
}

cleanup() {
    rc=$?
    trap - EXIT
    set +e
    if [ -d "$cluster" ]; then
        # Stopped servers (SIGSTOP by a test) must get SIGTERM delivered.
        for f in "$cluster"/server*.pid; do
            [ -f "$f" ] && kill -CONT "$(cat "$f")" 2>/dev/null
        done
        timeout -k 5 90 "$PSTRIPE" local stop --dir "$cluster" --timeout 30 >/dev/null ||
            { echo "FAIL: local stop of $cluster failed" >&2; rc=1; }
        for log in "$cluster"/server*.log; do
            [ -f "$log" ] || continue
            if grep -Eq 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error:' "$log"; then
                echo "FAIL: sanitizer report in $log" >&2
                rc=1
            fi
            if [ "$rc" != 0 ]; then
                echo "---- $log (last 40 lines) ----" >&2
                tail -n 40 "$log" >&2
            fi
        done
    fi
    # A test's own teardown (e.g. unmounting), after its servers stopped.
    [ -z "${cleanup_extra:-}" ] || eval "$cleanup_extra"
    if [ "$rc" = 0 ]; then
        rm -rf "$tmp"
    else
        echo "test $test_name failed (exit $rc); its files are in $tmp" >&2
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

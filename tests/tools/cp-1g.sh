#!/bin/sh
# Acceptance run, by hand (not in make check: it needs 3 GiB of disk in the
# build tree and about a minute): copy a 1 GiB random file into a local
# 4-server cluster and back out, compare the bytes, and print the time and
# rate of each direction as the tool measures it (from open to the last
# acknowledged byte, in the `copied ...` line of --progress) and as the
# shell measures the whole command (connect and disconnect included).
#
#   cd BUILDDIR && /path/to/src/tests/tools/cp-1g.sh [SIZE]   (head -c syntax, default 1G)
#
# Environment: PSTRIPE_TEST_WORKERS (workers per server, default 1 here; 0
# means the server's default of one per core), CP_OPTS (extra cp options,
# e.g. "--chunk-size 16m --depth 8").
PSTRIPE_TEST_WORKERS=${PSTRIPE_TEST_WORKERS:-1}
. "$(dirname "$0")/lib.sh"

size=${1:-1G}
cp_opts=${CP_OPTS:-}
if [ "$workers" = 0 ]; then
    expect_status 0 pst local start --dir "$cluster" -n 4 --set cache=64m
else
    expect_status 0 start_cluster -n 4
fi

step "make $size of random data"
head -c "$size" /dev/urandom >"$tmp/src"
bytes=$(stat -c %s "$tmp/src")

now() { date +%s.%N; }
rate() { echo "$1 $2 $3" | awk '{ t = $2 - $1; printf "%.2f s, %.1f MiB/s", t, $3 / 1048576 / t }'; }

step "cp in"
t0=$(now)
# shellcheck disable=SC2086
pst cp --progress $cp_opts "$tmp/src" pstripe:/big 2>"$tmp/in.err" || { cat "$tmp/in.err"; fail "cp in"; }
t1=$(now)
in_tool=$(grep '^copied' "$tmp/in.err")
in_shell=$(rate "$t0" "$t1" "$bytes")

step "cp out"
t0=$(now)
# shellcheck disable=SC2086
pst cp --progress $cp_opts pstripe:/big "$tmp/dst" 2>"$tmp/out.err" || { cat "$tmp/out.err"; fail "cp out"; }
t1=$(now)
out_tool=$(grep '^copied' "$tmp/out.err")
out_shell=$(rate "$t0" "$t1" "$bytes")

step "the disk's own limit in the same run (dd with O_DIRECT, 4 MiB blocks)"
# The servers' data dirs are on this disk too, so this is the ceiling for
# the copy in (write) and out (read) on this machine now.
t0=$(now)
dd if="$tmp/src" of="$tmp/dd" bs=4M oflag=direct status=none
t1=$(now)
dd_write=$(rate "$t0" "$t1" "$bytes")
t0=$(now)
dd if="$tmp/dd" of=/dev/null bs=4M iflag=direct status=none
t1=$(now)
dd_read=$(rate "$t0" "$t1" "$bytes")
rm -f "$tmp/dd"

step "compare"
cmp "$tmp/src" "$tmp/dst" || fail "the copy differs from the source"
pst stat /big
pst stats | grep -E '^server|regions/disk|disk writes|disk reads|queue depth|direct I/O|latency  '

cat <<REPORT

==== cp of $bytes bytes through 4 local servers ($(
    [ "$workers" = 0 ] && echo "default workers" || echo "$workers worker(s)") each), cmp identical
cp in : tool: $in_tool
        shell (whole command): $in_shell
cp out: tool: $out_tool
        shell (whole command): $out_shell
disk  : dd write O_DIRECT 4M: $dd_write; dd read O_DIRECT 4M: $dd_read
load  : $(cat /proc/loadavg)
REPORT

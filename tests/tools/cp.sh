#!/bin/sh
# `pstripe cp` into and out of a 4-server cluster: a 64 MiB random file comes
# back byte for byte (cmp), `stat` shows the layout and the 4 servers in
# stripe order, object files are open with O_DIRECT on the servers, and the
# odd cases: sizes that are not a multiple of anything, an empty file, a
# chosen layout, stdin/stdout, a local directory as destination, pstripe to
# pstripe. (The 1 GiB acceptance run is tests/tools/cp-1g.sh, by hand.)
. "$(dirname "$0")/lib.sh"

expect_status 0 start_cluster -n 4
servers=$(sed -n 's/^servers *= *//p' "$cluster/client.conf")

step "64 MiB random file in and back out"
head -c 64M /dev/urandom >"$tmp/big"
expect_status 0 pst cp --progress "$tmp/big" pstripe:/big
contains "$err" "copied 64.0 MiB \(67108864 bytes\) in .* MiB/s" "cp in progress summary"
expect_status 0 pst cp --progress pstripe:/big "$tmp/big.out"
contains "$err" "copied 64.0 MiB" "cp out progress summary"
cmp "$tmp/big" "$tmp/big.out" || fail "64 MiB file differs after the round trip"
# Other chunkings of the pipeline give the same bytes.
expect_status 0 pst cp --chunk-size 1m --depth 16 pstripe:/big "$tmp/big.out2"
cmp "$tmp/big" "$tmp/big.out2" || fail "64 MiB file differs (1m chunks, depth 16)"
expect_status 0 pst cp --chunk-size 3m --depth 1 "$tmp/big" pstripe:/big2
expect_status 0 pst cp pstripe:/big2 "$tmp/big.out3"
cmp "$tmp/big" "$tmp/big.out3" || fail "64 MiB file differs (3m chunks, depth 1)"
rm -f "$tmp/big.out" "$tmp/big.out2" "$tmp/big.out3"

step "stat: size, layout, the 4 servers in stripe order"
expect_status 0 pst stat /big
contains "$out" "Size: 67108864 \(64.0 MiB\)" "stat size"
contains "$out" "Layout: stripe size 1m \(1048576 bytes\), stripe count 4, first server [0-3]" "stat layout"
contains "$out" "File id: [0-9a-f]{16}" "stat file id"
contains "$out" "Mode: 0644" "stat mode"

step "cp keeps the source's mode (a new destination, less the umask, as cp(1))"
head -c 5000 /dev/urandom >"$tmp/secret"
chmod 600 "$tmp/secret"
expect_status 0 pst cp "$tmp/secret" pstripe:/secret
expect_status 0 pst stat /secret
contains "$out" "Mode: 0600" "0600 file copied in"
expect_status 0 pst cp pstripe:/secret "$tmp/secret.out"
[ "$(stat -c %a "$tmp/secret.out")" = 600 ] || fail "0600 file copied out as $(stat -c %a "$tmp/secret.out")"
chmod 750 "$tmp/secret"
expect_status 0 pst cp "$tmp/secret" pstripe:/secret750
expect_status 0 pst stat /secret750
contains "$out" "Mode: 0750" "0750 file copied in"
contains "$out" "Created: [0-9]{4}-" "stat ctime"
contains "$out" "Modified: [0-9]{4}-" "stat mtime"
first=$(printf '%s\n' "$out" | sed -n 's/.*first server \([0-9]*\).*/\1/p')
for k in 0 1 2 3; do
    s=$(((first + k) % 4))
    addr=$(echo "$servers" | cut -d, -f$((s + 1)))
    contains "$out" "stripe $k: server $s $addr\$" "stat stripe $k"
done

step "objects are open with O_DIRECT on the servers"
# A daemon may close objects that are idle, so look while a copy is still
# writing: cp reads from a FIFO whose writer keeps it open after 8 MiB.
mkfifo "$tmp/fifo"
pst cp --chunk-size 1m - pstripe:/slow <"$tmp/fifo" >"$tmp/slow.out" 2>&1 &
cp_pid=$!
exec 3>"$tmp/fifo"
head -c 8M /dev/urandom >&3
# Succeeds once some server has an object file open; each one found must
# be open with O_DIRECT.
object_open_direct() {
    found=""
    for i in 0 1 2 3; do
        pid=$(server_pid $i)
        for fd in /proc/"$pid"/fd/*; do
            target=$(readlink "$fd" 2>/dev/null) || continue
            case "$target" in
            "$cluster/server$i/obj/"*)
                flags=$(sed -n 's/^flags:[[:space:]]*//p' "/proc/$pid/fdinfo/${fd##*/}")
                echo "server$i fd ${fd##*/} -> $target flags $flags"
                # O_DIRECT is 040000 (octal) on x86-64.
                [ $((0$flags & 040000)) -ne 0 ] || fail "$target is open without O_DIRECT"
                found=yes
                ;;
            esac
        done
    done
    [ -n "$found" ]
}
opened=no
wait_until 30 object_open_direct && opened=yes
exec 3>&-
wait "$cp_pid" || { cat "$tmp/slow.out"; fail "cp from the FIFO failed"; }
[ "$opened" = yes ] || fail "no object file found open on any server while writing"
expect_status 0 pst stats
[ "$(printf '%s\n' "$out" | grep -c 'direct I/O yes')" = 4 ] || fail "stats: not every server reports direct I/O"

step "odd sizes, a chosen layout"
head -c 5242999 /dev/urandom >"$tmp/odd"
expect_status 0 pst cp --stripe-size 64k --stripe-count 3 "$tmp/odd" pstripe:/odd
expect_status 0 pst stat pstripe:/odd
contains "$out" "Size: 5242999 " "stat odd size"
contains "$out" "stripe size 64k \(65536 bytes\), stripe count 3" "stat odd layout"
[ "$(printf '%s\n' "$out" | grep -c '    stripe [0-9]*: server')" = 3 ] || fail "stat odd: not 3 servers"
expect_status 0 pst cp pstripe:/odd "$tmp/odd.out"
cmp "$tmp/odd" "$tmp/odd.out" || fail "odd-sized file differs"

step "empty file"
: >"$tmp/empty"
expect_status 0 pst cp "$tmp/empty" pstripe:/empty
expect_status 0 pst stat /empty
contains "$out" "Size: 0 " "empty size"
echo stale >"$tmp/empty.out"
expect_status 0 pst cp pstripe:/empty "$tmp/empty.out"
[ ! -s "$tmp/empty.out" ] || fail "empty file copied out is not empty"

step "stdin and stdout"
head -c 1234567 /dev/urandom >"$tmp/stream"
cat "$tmp/stream" | pst cp - pstripe:/stream || fail "cp from stdin"
pst cp pstripe:/stream - | cmp - "$tmp/stream" || fail "cp to stdout differs"

step "destination directory, pstripe to pstripe"
mkdir "$tmp/dir"
expect_status 0 pst cp pstripe:/odd "$tmp/dir"
cmp "$tmp/odd" "$tmp/dir/odd" || fail "copy into a local directory"
expect_status 0 pst cp "$tmp/odd" pstripe:/d/
expect_status 0 pst cp pstripe:/d/odd pstripe:/odd.copy
expect_status 0 pst cp pstripe:/odd.copy "$tmp/odd.copy"
cmp "$tmp/odd" "$tmp/odd.copy" || fail "pstripe to pstripe copy differs"

step "overwrite a larger file with a smaller one"
expect_status 0 pst cp "$tmp/odd" pstripe:/big
expect_status 0 pst stat /big
contains "$out" "Size: 5242999 " "overwritten size"
expect_status 0 pst cp pstripe:/big "$tmp/big.small"
cmp "$tmp/odd" "$tmp/big.small" || fail "overwritten file differs"
echo "PASS"

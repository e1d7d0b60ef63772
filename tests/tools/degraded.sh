#!/bin/sh
# One of four servers is dead (issue 11, item 6): a new client still starts;
# files whose metadata and stripes are all on live servers are listed,
# stat'ed, read and written; only files that touch the dead server fail,
# with an error that names it; `ls` lists what it can, shows "?" for sizes
# it cannot know, names the dead server and exits 1. After a restart of
# that server everything works again.
. "$(dirname "$0")/lib.sh"

expect_status 0 start_cluster -n 4
n=12
for i in $(seq 1 $n); do
    head -c $((100000 + i * 1000)) /dev/urandom >"$tmp/f$i"
    expect_status 0 pst cp --stripe-count 1 "$tmp/f$i" pstripe:/f$i
done
dead=3
# a file over all four servers whose metadata is on a live one: its data
# always touches the dead server
for w in wide1 wide2 wide3 wide4 wide5 wide6; do
    expect_status 0 pst cp --stripe-count 4 "$tmp/f1" pstripe:/$w
    pst stat /$w | grep -q "Metadata: server $dead " || break
done
wide=/$w
dead_addr=$(sed -n 's/^servers *= *//p' "$cluster/client.conf" | cut -d, -f$((dead + 1)))
echo "server $dead is $dead_addr"

# owners f: "META STRIPE" server indexes of /f (from stat, before the kill).
owners() {
    pst stat "$1" | awk '/Metadata: server/ { m = $3 } /stripe 0: server/ { s = $5 } END { print m, s }'
}
for i in $(seq 1 $n); do
    owners /f$i >"$tmp/owners$i"
done
owners $wide >"$tmp/owners-wide"

step "kill server $dead"
kill -9 "$(server_pid $dead)"
gone() { ! kill -0 "$(server_pid $dead)" 2>/dev/null; }
wait_until 10 gone || fail "server $dead did not die"

step "ls lists what it can, names the dead server, exits 1"
expect_status 1 pst ls -l
contains "$err" "could not reach server\(s\) $dead_addr" "ls error"
good=0 bad=0
for i in $(seq 1 $n); do
    set -- $(cat "$tmp/owners$i")
    meta=$1 stripe=$2
    if [ "$meta" = $dead ]; then
        not_contains "$out" " /f$i\$" "ls (metadata of /f$i on the dead server)"
    elif [ "$stripe" = $dead ]; then
        contains "$out" " \? .* /f$i\$" "ls -l size of /f$i (its data on the dead server)"
    else
        contains "$out" " $(wc -c <"$tmp/f$i") .* /f$i\$" "ls -l of /f$i"
    fi
done

set -- $(cat "$tmp/owners-wide")
if [ "$1" != $dead ]; then
    contains "$out" " \? .* $wide\$" "ls -l size of $wide (striped over the dead server)"
else
    fail "no wide file with its metadata on a live server"
fi

step "files on live servers read and stat; the others fail naming the dead server"
expect_status 1 pst cp pstripe:$wide "$tmp/wide.out"
contains "$err" "$dead_addr" "error reading $wide names the dead server"
for i in $(seq 1 $n); do
    set -- $(cat "$tmp/owners$i")
    meta=$1 stripe=$2
    if [ "$meta" != $dead ] && [ "$stripe" != $dead ]; then
        expect_status 0 pst stat /f$i
        expect_status 0 pst cp pstripe:/f$i "$tmp/out$i"
        cmp "$tmp/f$i" "$tmp/out$i" || fail "/f$i differs with server $dead down"
        good=$((good + 1))
    else
        expect_status 1 pst cp pstripe:/f$i "$tmp/out$i"
        contains "$err" "$dead_addr" "error for /f$i names the dead server"
        bad=$((bad + 1))
    fi
done
echo "with server $dead dead: $good files read back, $bad failed naming it"
[ "$good" -gt 0 ] || fail "no file was on live servers only (unlucky hashing): raise n"
[ "$bad" -gt 0 ] || fail "no file touched the dead server"

step "writes of new files: those on live servers work"
wrote=0
for i in $(seq 1 8); do
    set +e
    pst cp --stripe-count 1 "$tmp/f$i" pstripe:/new$i >"$tmp/out" 2>"$tmp/err"
    rc=$?
    set -e
    if [ $rc = 0 ]; then
        expect_status 0 pst cp pstripe:/new$i "$tmp/back$i"
        cmp "$tmp/f$i" "$tmp/back$i" || fail "/new$i differs"
        wrote=$((wrote + 1))
    else
        contains "$(cat "$tmp/err")" "$dead_addr" "error writing /new$i names the dead server"
    fi
done
echo "$wrote of 8 new files written with server $dead dead"
[ "$wrote" -gt 0 ] || fail "no new file could be written"

step "restart the dead server: everything works again"
expect_status 0 start_cluster
expect_status 0 pst ls
for i in $(seq 1 $n); do
    expect_status 0 pst cp pstripe:/f$i "$tmp/out$i"
    cmp "$tmp/f$i" "$tmp/out$i" || fail "/f$i differs after the restart"
done
echo "ok: degraded operation"

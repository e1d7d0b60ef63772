#!/bin/sh
# `pstripe gc`: an rm with a data server down removes the name and leaves
# that server's objects, and says which file; after the restart `gc -n`
# lists exactly those objects and removes nothing, `gc` removes them (their
# object files go, the space comes back) while a writer makes new files
# beside it, and every file that still has a name reads back whole. With a
# server down, gc fails naming it and removes nothing, not even the
# orphans it could list on the live server. A client whose server list
# misses a server, and a cluster whose servers do not know their places,
# are refused: such a client would take the missing server's files for
# orphans.
. "$(dirname "$0")/lib.sh"

expect_status 0 start_cluster -n 2
n=10
head -c 300000 /dev/urandom >"$tmp/data"
for i in $(seq 1 $n); do
    expect_status 0 pst cp --stripe-count 2 --stripe-size 64k "$tmp/data" pstripe:/f$i
done
expect_status 0 pst gc -n
contains "$out" "^0 orphaned objects.*nothing to do" "gc -n of a clean cluster"

addr() { sed -n 's/^servers *= *//p' "$cluster/client.conf" | cut -d, -f$(($1 + 1)); }
gone() { ! kill -0 "$(server_pid "$1")" 2>/dev/null; }
obj_file() { echo "$cluster/server$1/obj/$(echo "$2" | cut -c1-2)/$2"; }

# kill_and_rm DEAD: rm every /f<i> with server DEAD killed; the ids that rm
# reports left behind go to $tmp/orphans<DEAD>, the names gone to
# $tmp/removed<DEAD>; then restart DEAD.
kill_and_rm() {
    step "rm with server $1 down"
    kill -9 "$(server_pid "$1")"
    wait_until 10 gone "$1" || fail "server $1 did not die"
    : >"$tmp/orphans$1"
    : >"$tmp/removed$1"
    for i in $(seq 1 $n); do
        [ -e "$tmp/gone$i" ] && continue
        expect_status 1 pst rm /f$i
        if printf '%s\n' "$err" | grep -q "removed /f$i, but not all of its data.*until \`pstripe gc\`"; then
            printf '%s\n' "$err" | sed -n 's/.*(file id \([0-9a-f]*\)).*/\1/p' >>"$tmp/orphans$1"
            echo /f$i >>"$tmp/removed$1"
            touch "$tmp/gone$i"
        fi
    done
    expect_status 0 start_cluster
    echo "orphans on server $1: $(tr '\n' ' ' <"$tmp/orphans$1")"
}

kill_and_rm 1
[ -s "$tmp/orphans1" ] || fail "no file had its metadata on server 0 (raise n)"
for id in $(cat "$tmp/orphans1"); do
    [ -f "$(obj_file 1 "$id")" ] || fail "object $id is not on server 1"
done

step "gc -n lists exactly the orphans and removes nothing"
expect_status 0 pst gc -n
[ "$(printf '%s\n' "$out" | grep -c '^orphaned object')" = "$(wc -l <"$tmp/orphans1")" ] ||
    fail "gc -n found another number of orphans"
for id in $(cat "$tmp/orphans1"); do
    contains "$out" "^orphaned object of file $id on server 1 \($(addr 1)\): 131072 bytes" \
        "gc -n names $id"
    [ -f "$(obj_file 1 "$id")" ] || fail "gc -n removed $id"
done

step "gc removes them beside a writer of new files"
(
    for j in $(seq 1 8); do
        pst cp --stripe-count 2 --stripe-size 64k "$tmp/data" pstripe:/new$j || exit 1
    done
) >"$tmp/writer.log" 2>&1 &
writer=$!
expect_status 0 pst gc
wait $writer || fail "the writer failed: $(cat "$tmp/writer.log")"
contains "$out" "orphaned objects, .* on disk: removed" "gc summary"
for id in $(cat "$tmp/orphans1"); do
    contains "$out" "^removed object of file $id on server 1" "gc names $id"
    [ ! -e "$(obj_file 1 "$id")" ] || fail "gc left $id"
done
expect_status 0 pst gc
contains "$out" "^0 orphaned objects" "a second gc"

step "every file with a name reads back whole"
check_all() {
    for f in $(pst ls); do
        expect_status 0 pst cp pstripe:$f "$tmp/back"
        cmp "$tmp/data" "$tmp/back" || fail "$f differs after gc"
    done
}
check_all
for j in $(seq 1 8); do
    pst stat /new$j >/dev/null || fail "/new$j, written beside gc, is gone"
done

kill_and_rm 0
[ -s "$tmp/orphans0" ] || fail "no file left had its metadata on server 1 (raise n)"

step "with server 1 down, gc fails naming it and removes nothing"
kill -9 "$(server_pid 1)"
wait_until 10 gone 1 || fail "server 1 did not die"
expect_status 1 pst gc
contains "$err" "$(addr 1)" "gc error names the dead server"
for id in $(cat "$tmp/orphans0"); do
    [ -f "$(obj_file 0 "$id")" ] || fail "gc with a server down removed $id"
done
expect_status 0 start_cluster
expect_status 0 pst gc
for id in $(cat "$tmp/orphans0"); do
    contains "$out" "^removed object of file $id on server 0" "gc names $id"
    [ ! -e "$(obj_file 0 "$id")" ] || fail "gc left $id"
done
check_all

step "a list that misses a server, and servers that do not know their places, are refused"
sed "s/^\(servers *= *[^,]*\),.*/\1/" "$cluster/client.conf" >"$tmp/partial.conf"
grep -q "^servers *= *[^,]*$" "$tmp/partial.conf" || fail "no one-server list made"
expect_status 1 pst -c "$tmp/partial.conf" gc
contains "$err" "server 0 of a cluster of 2|cluster of 2" "gc with a partial list"
expect_status 0 pst local stop --dir "$cluster"
expect_status 0 start_cluster --set server_index=-1 --set cluster_size=0
expect_status 1 pst gc -n
contains "$err" "does not know its place in the cluster" "gc on servers without places"
check_all
echo "ok: gc"

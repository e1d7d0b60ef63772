#!/bin/sh
# A damaged or lost metadata store is noticed (issue 11): the server refuses
# to start, with a message that says what to do, on an empty, missing,
# truncated or overwritten meta/data.mdb in a data directory that holds
# objects; it never crashes; `pstripe-server --check` reports the same. With
# the store put back it serves the files again.
. "$(dirname "$0")/lib.sh"

server=$top_builddir/server/pstripe-server
data=$cluster/server0

step "a server with files"
expect_status 0 start_cluster -n 1
head -c 3000000 /dev/urandom >"$tmp/f"
for i in 1 2 3 4 5 6 7 8; do
    expect_status 0 pst cp "$tmp/f" "pstripe:/dir/f$i"
done
expect_status 0 pst local stop --dir "$cluster"
expect_status 0 "$server" --data "$data" --check
contains "$out" "^namespace +8 paths, 0 damaged entries, server id present" "check of a good store"
contains "$out" "^usable" "check of a good store"
cp "$data/meta/data.mdb" "$tmp/data.mdb.good"
size=$(stat -c %s "$tmp/data.mdb.good")

# refused DESCRIPTION PATTERN: the check and a start both refuse, naming the cause.
refused() {
    expect_status 1 "$server" --data "$data" --check
    contains "$out" "^NOT USABLE +.*$2" "--check of $1"
    expect_status 1 start_cluster -n 1
    contains "$(cat "$data.log")" "$2.*The server does not start on it: restore" "start on $1"
    not_contains "$(cat "$data.log")" "AddressSanitizer|Segmentation|Bus error|core dumped" "start on $1"
}

step "an empty data.mdb"
: >"$data/meta/data.mdb"
refused "an empty store" "meta/data.mdb is missing or empty, but obj/ holds [0-9]+ objects"

step "no data.mdb"
rm -f "$data/meta/data.mdb"
refused "a missing store" "meta/data.mdb is missing or empty, but obj/ holds"

step "a truncated data.mdb"
head -c 12288 "$tmp/data.mdb.good" >"$data/meta/data.mdb"
refused "a truncated store" "meta/data.mdb .*(damaged|cannot be read)"

step "overwritten pages in the middle of data.mdb"
cp "$tmp/data.mdb.good" "$data/meta/data.mdb"
pages=$((size / 4096))
[ "$pages" -gt 2 ] || fail "the store has only $pages pages"
head -c $(((pages - 2) * 4096)) /dev/urandom |
    dd of="$data/meta/data.mdb" bs=4096 seek=2 conv=notrunc status=none
refused "an overwritten store" "meta/data.mdb .*(damaged|cannot be read)"

step "the store put back: the files are served again"
cp "$tmp/data.mdb.good" "$data/meta/data.mdb"
expect_status 0 start_cluster -n 1
expect_status 0 pst cp pstripe:/dir/f5 "$tmp/f5"
cmp "$tmp/f" "$tmp/f5" || fail "a file read after the store was restored differs"
echo "PASS"

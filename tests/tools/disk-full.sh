#!/bin/sh
# A server's disk fills up: writes fail with "no space left" and nothing else
# is harmed; `rm` frees the space on the full disk (the metadata store needs
# room to record a removal, so the client frees the data first); a server
# restarts on a full disk (its start-up probe writes no data); a removal
# frees the space even when it cannot record itself. The server's
# data directory is a small ext4 file system in a file, loop-mounted: needs
# root and a loop device, else the test is skipped.
. "$(dirname "$0")/lib.sh"

loop_mount_server0

used_kib() { df -k --output=used "$mnt" | tail -n 1 | tr -d ' '; }

step "fill the disk through pstripe"
expect_status 0 start_cluster -n 1
head -c 80000000 /dev/urandom >"$tmp/big"
head -c 1000000 /dev/urandom >"$tmp/small"
expect_status 0 pst cp "$tmp/small" pstripe:/small
expect_status 1 pst cp "$tmp/big" pstripe:/big
contains "$err" "no space left" "a write to a full disk"

step "nothing else is harmed: other files read back; the failed copy left no name"
expect_status 0 pst cp pstripe:/small "$tmp/small.out"
cmp "$tmp/small" "$tmp/small.out" || fail "a file written before the disk filled differs"
expect_status 0 pst ls
[ "$out" = "/small" ] || fail "ls after a copy that failed on a full disk: '$out'"

step "rm frees space on the full disk"
head -c 40000000 /dev/urandom >"$tmp/mid"
expect_status 0 pst cp "$tmp/mid" pstripe:/mid
head -c 100000000 /dev/zero >"$mnt/fill" 2>/dev/null || true
[ "$(df -k --output=avail "$mnt" | tail -n 1 | tr -d ' ')" -lt 64 ] || fail "could not fill the disk"
full=$(used_kib)
echo "used on the full disk: $full KiB"
# the servers' records of removed files (DIR/removed, pss_removed.c) fill
# their directory's last block, so that the removal below may find no room
# to record itself: it must free the space all the same
# (ext4 gives back blocks reserved for delayed allocation at writeback:
# sync, and fill again, until the directory cannot grow)
n=0
for round in 1 2 3; do
    sync
    head -c 100000000 /dev/zero >>"$mnt/fill" 2>/dev/null || true
    sync
    while [ $n -lt 5000 ] && touch "$mnt/removed/$(printf 'feed%012x' $n)" 2>/dev/null; do
        n=$((n + 1))
    done
done
[ $n -lt 5000 ] || fail "the records' directory never filled on a full disk"
echo "records' directory full after $n more entries"
expect_status 0 pst rm /mid
# (whether the record found no room depends on blocks ext4 gives back
# when the object is closed: said, not checked)
if grep -q "no room to record the removal" "$cluster/server0.log"; then
    echo "the removal could not record itself and freed the space all the same"
fi
expect_status 0 pst ls
[ "$out" = "/small" ] || fail "ls after rm: '$out'"
freed=$(used_kib)
echo "used after rm: $freed KiB"
[ "$freed" -lt $((full / 2)) ] || fail "rm freed too little ($full -> $freed KiB)"
expect_status 0 pst cp "$tmp/small" pstripe:/small2

step "a server restarts on a full disk"
expect_status 0 pst local stop --dir "$cluster"
head -c 100000000 /dev/zero >"$mnt/fill" 2>/dev/null || true
[ "$(df -k --output=avail "$mnt" | tail -n 1 | tr -d ' ')" -lt 64 ] || fail "could not fill the disk"
expect_status 0 start_cluster -n 1
expect_status 0 pst ls
contains "$out" "^/small2\$" "ls on a full disk"
expect_status 0 pst cp pstripe:/small "$tmp/small.out2"
cmp "$tmp/small" "$tmp/small.out2" || fail "a file read on a full disk differs"
expect_status 1 pst cp "$tmp/small" pstripe:/small3
contains "$err" "no space left" "a write to a full disk after restart"
rm -f "$mnt/fill"
expect_status 0 pst cp "$tmp/small" pstripe:/small4
echo "PASS"

#!/bin/sh
# A copy that is killed midway is never mistaken for a good one (issue 11,
# item 5): `pstripe cp` writes DST.pstripe-partial-* and renames it onto DST
# only once every byte is written and synced, in both directions. Killed
# with SIGKILL midway, it leaves DST exactly as it was (the old file, or no
# file) and a name that `ls` marks as a partial copy; the next cp to DST
# and `rm DST` remove it; a failed copy removes its own temporary name.
# The copy in reads from a FIFO that this script feeds, so the kill lands
# midway by construction; the copy out is stopped (SIGSTOP) as soon as its
# temporary file has data, then killed. (The copies to kill run without
# the `pst` timeout wrapper, so that $! is the copy itself.)
. "$(dirname "$0")/lib.sh"

expect_status 0 start_cluster -n 4

old=$tmp/old
new=$tmp/new
head -c 3000000 /dev/urandom >"$old"
head -c 20000000 /dev/urandom >"$new"
expect_status 0 pst cp "$old" pstripe:/dst

# A partial copy of /dst with data (`ls -l`: size is field 7).
partial_has_data() {
    pst ls -l / | awk '/ \/dst\.pstripe-partial-/ && $7 > 0 { found = 1 } END { exit !found }'
}

step "copy in, killed midway: /dst keeps the old bytes"
mkfifo "$tmp/fifo"
"$PSTRIPE" cp --chunk-size 1m "$tmp/fifo" pstripe:/dst 2>"$tmp/cp-in.err" &
cp_pid=$!
exec 3>"$tmp/fifo"
head -c 5000000 "$new" >&3 # 5 of 20 MB: the copy has more to read
wait_until 60 partial_has_data || fail "no partial copy with data appeared"
kill -9 "$cp_pid"
wait "$cp_pid" 2>/dev/null || true
exec 3>&-
expect_status 0 pst ls
contains "$out" "^/dst\$" "ls after the kill"
contains "$out" "^/dst\.pstripe-partial-[0-9a-f]{8}  \(partial copy: incomplete\)\$" \
    "ls marks the partial copy"
[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] || fail "ls shows other names: $out"
expect_status 0 pst cp pstripe:/dst "$tmp/dst.out"
cmp "$old" "$tmp/dst.out" || fail "/dst changed under a killed copy"

step "the next copy to /dst removes the partial copy"
expect_status 0 pst cp "$new" pstripe:/dst
expect_status 0 pst ls
[ "$out" = "/dst" ] || fail "ls after a complete copy: '$out'"
expect_status 0 pst cp pstripe:/dst "$tmp/dst.out"
cmp "$new" "$tmp/dst.out" || fail "/dst differs after a complete copy"

step "copy in to a new name, killed: no /fresh at all; rm /fresh removes the partial copy"
"$PSTRIPE" cp --chunk-size 1m "$tmp/fifo" pstripe:/fresh 2>/dev/null &
cp_pid=$!
exec 3>"$tmp/fifo"
head -c 3000000 "$new" >&3
fresh_partial() { pst ls / | grep -q '^/fresh\.pstripe-partial-'; }
wait_until 60 fresh_partial || fail "no partial copy of /fresh appeared"
kill -9 "$cp_pid"
wait "$cp_pid" 2>/dev/null || true
exec 3>&-
expect_status 1 pst stat /fresh
contains "$err" "no such file" "stat of a never completed copy"
expect_status 0 pst rm /fresh
expect_status 0 pst ls
[ "$out" = "/dst" ] || fail "ls after rm of the partial copy: '$out'"

step "two copies to one name at once: the first learns why it failed"
# (the second removes the partial copy it finds, the first's live one: the
# first failed with only "the file was removed while open")
"$PSTRIPE" cp --chunk-size 1m "$tmp/fifo" pstripe:/race 2>"$tmp/race.err" &
cp_pid=$!
exec 3>"$tmp/fifo"
head -c 3000000 "$new" >&3
race_partial() { pst ls / | grep -q '^/race\.pstripe-partial-'; }
wait_until 60 race_partial || fail "no partial copy of /race appeared"
expect_status 0 pst cp "$old" pstripe:/race
head -c 3000000 "$new" >&3
exec 3>&-
wait "$cp_pid" && fail "the first copy succeeded after its partial copy was removed"
contains "$(cat "$tmp/race.err")" "the partial copy /race\.pstripe-partial-[0-9a-f]{8} was removed meanwhile: by another .pstripe cp. to pstripe:/race" \
    "the first copy names the likely cause"
expect_status 0 pst cp pstripe:/race "$tmp/race.out"
cmp "$old" "$tmp/race.out" || fail "/race is not the second copy's"
expect_status 0 pst rm /race

step "a refused copy leaves no name (a copy failing midway: disk-full.sh)"
expect_status 1 pst cp --stripe-count 9 "$new" pstripe:/dst
expect_status 0 pst ls
[ "$out" = "/dst" ] || fail "ls after a failed copy: '$out'"

step "names as long as the file systems allow (the partial copy's is shortened)"
# (a pstripe name of 4,072-4,096 bytes, or a local last component of
# 232-255, left no room for the tag: cp failed "cannot create")
long=/$(printf '%04095d' 7)
"$PSTRIPE" cp --chunk-size 1m "$tmp/fifo" "pstripe:$long" 2>/dev/null &
cp_pid=$!
exec 3>"$tmp/fifo"
head -c 3000000 "$new" >&3 || true # (a copy that fails at once closes the FIFO)
long_partial() { pst ls /0 | grep -Eq '^/0+~[0-9a-f]{8}\.pstripe-partial-[0-9a-f]{8}  \(partial copy'; }
wait_until 60 long_partial || fail "no partial copy of the 4,096-byte name appeared"
kill -9 "$cp_pid"
wait "$cp_pid" 2>/dev/null || true
exec 3>&-
expect_status 0 pst cp "$old" "pstripe:$long"
expect_status 0 pst ls /0
[ "$out" = "$long" ] || fail "the next copy to a 4,096-byte name left other names"
longlocal=$tmp/$(printf '%0255d' 7)
expect_status 0 pst cp "pstripe:$long" "$longlocal"
cmp "$old" "$longlocal" || fail "a copy to a 255-byte local name differs"
expect_status 0 pst cp "$new" "pstripe:$long"
expect_status 0 pst cp "pstripe:$long" "$longlocal"
cmp "$new" "$longlocal" || fail "a copy replacing a 255-byte local name differs"
expect_status 0 pst rm "$long"
rm -f "$longlocal"

# Kill the copy out $cp_pid once $1 (a function) finds its partial file
# with data, checked again while the copy is stopped (else $2).
kill_copy_out() {
    wait_until 60 "$1" || fail "$2"
    kill -STOP "$cp_pid"
    if ! "$1"; then
        kill -9 "$cp_pid"
        fail "the copy out finished before it could be stopped (machine too fast for this check)"
    fi
    kill -9 "$cp_pid"
    kill -CONT "$cp_pid" 2>/dev/null || true
    wait "$cp_pid" 2>/dev/null || true
}

step "copy out, killed midway: the local file keeps the old bytes"
cp "$old" "$tmp/local"
chmod 0640 "$tmp/local"
"$PSTRIPE" cp --chunk-size 64k --depth 1 pstripe:/dst "$tmp/local" 2>/dev/null &
cp_pid=$!
local_partial() {
    for f in "$tmp"/local.pstripe-partial-*; do
        [ -s "$f" ] && return 0
    done
    return 1
}
kill_copy_out local_partial "no local partial copy with data appeared"
cmp "$old" "$tmp/local" || fail "the local destination changed under a killed copy"
ls "$tmp"/local.pstripe-partial-* >/dev/null || fail "no partial copy name left"

step "the next copy out replaces it and removes the partial copy, keeping the mode"
expect_status 0 pst cp pstripe:/dst "$tmp/local"
cmp "$new" "$tmp/local" || fail "local copy differs"
[ "$(stat -c %a "$tmp/local")" = 640 ] || fail "mode of the replaced file not kept"
if ls "$tmp"/local.pstripe-partial-* >/dev/null 2>&1; then
    fail "partial copy left after a complete copy out"
fi

step "a 255-byte local name: a killed copy's partial file is found however the name is written"
# (its partial name is shortened and hashed; the hash covers the last
# component only, so ./NAME and DIR/NAME find the same partial copies)
mkdir "$tmp/lnd"
lname=$(printf '%0255d' 3)
(cd "$tmp/lnd" && exec "$PSTRIPE" cp --chunk-size 64k --depth 1 pstripe:/dst "./$lname") 2>/dev/null &
cp_pid=$!
lnd_partial() {
    for f in "$tmp"/lnd/*.pstripe-partial-*; do
        [ -s "$f" ] && return 0
    done
    return 1
}
kill_copy_out lnd_partial "no partial copy of the 255-byte local name appeared"
expect_status 0 pst cp pstripe:/dst "$tmp/lnd/../lnd/$lname"
cmp "$new" "$tmp/lnd/$lname" || fail "a copy to a 255-byte local name differs"
[ "$(ls "$tmp/lnd")" = "$lname" ] || fail "a partial copy was left beside the 255-byte name"

step "copy out to a device is written in place"
expect_status 0 pst cp pstripe:/dst /dev/null
echo "ok: killed copies leave the destination as it was"

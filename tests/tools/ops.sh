#!/bin/sh
# ls, rm, truncate, df, stats, config and help against a 4-server cluster:
# their outputs and exit codes.
. "$(dirname "$0")/lib.sh"

expect_status 0 start_cluster -n 4

step "help and usage"
expect_status 0 pst help
contains "$out" "^Usage: pstripe " "help"
help=$out
for cmd in ls stat rm mv cp truncate df stats config local run; do
    contains "$help" "^  $cmd " "help lists $cmd"
    expect_status 0 pst "$cmd" --help
    contains "$out" "^Usage: pstripe $cmd" "$cmd --help"
done
expect_status 0 pst help cp
contains "$out" "--stripe-size" "help cp"
expect_status 0 pst help gc
contains "$out" "is left to finish, with a warning" "help gc says it leaves renames under way"
expect_status 0 pst local start --help
contains "$out" "--workers" "local start --help"
expect_status 2 pst
expect_status 2 pst frobnicate
contains "$err" "unknown command 'frobnicate'" "unknown command"
expect_status 2 pst ls --frobnicate
expect_status 2 pst stat
contains "$err" "missing PATH" "stat without PATH"
expect_status 2 pst truncate /a
expect_status 2 pst cp /a
expect_status 2 pst mv /a
contains "$err" "expected SRC and DST" "mv without DST"
expect_status 2 pst local
expect_status 2 pst local stop

step "files to work with"
head -c 1024 /dev/urandom >"$tmp/a"
head -c 1048577 /dev/urandom >"$tmp/b"
expect_status 0 pst cp "$tmp/a" pstripe:/a
expect_status 0 pst cp "$tmp/b" pstripe:/dir/b
expect_status 0 pst cp "$tmp/a" pstripe:/dir/c

step "ls"
expect_status 0 pst ls
[ "$out" = "$(printf '/a\n/dir/b\n/dir/c')" ] || fail "ls: wrong listing or order"
expect_status 0 pst ls /dir/
[ "$out" = "$(printf '/dir/b\n/dir/c')" ] || fail "ls /dir/: wrong listing"
expect_status 0 pst ls pstripe:/dir/b
[ "$out" = "/dir/b" ] || fail "ls with pstripe: prefix"
expect_status 0 pst ls /nothing
[ -z "$out" ] || fail "ls of an unused prefix prints something"
expect_status 0 pst ls -l
contains "$out" "^-rw-r--r-- $(id -un) +$(id -gn) +4 x 1m +1024  [0-9-]+ [0-9:]+  /a\$" "ls -l /a"
contains "$out" " 1048577  [0-9-]+ [0-9:]+  /dir/b\$" "ls -l /dir/b"
expect_status 2 pst ls /a /b

step "ls and stat escape names that would forge lines or drive the terminal"
odd=$(printf '/odd\nname\033[2J\\x')
expect_status 0 pst cp "$tmp/a" "pstripe:$odd"
expect_status 0 pst ls /odd
[ "$out" = '/odd\nname\033[2J\\x' ] || fail "ls of an odd name: '$out'"
expect_status 0 pst ls -l /odd
contains "$out" '  /odd\\nname\\033\[2J\\\\x$' "ls -l of an odd name"
expect_status 0 pst stat "$odd"
contains "$out" '^  File: /odd\\nname\\033\[2J\\\\x$' "stat of an odd name"
expect_status 0 pst rm "$odd"

step "truncate"
expect_status 0 pst truncate /a 10m
expect_status 0 pst stat /a
contains "$out" "Size: 10485760 " "size after truncate up"
{ cat "$tmp/a"; head -c $((10485760 - 1024)) /dev/zero; } >"$tmp/a.10m"
expect_status 0 pst cp pstripe:/a "$tmp/a.out"
cmp "$tmp/a.10m" "$tmp/a.out" || fail "extended file is not the data then zeros"
expect_status 0 pst truncate pstripe:/a 100
expect_status 0 pst cp pstripe:/a "$tmp/a.out"
head -c 100 "$tmp/a" | cmp - "$tmp/a.out" || fail "file truncated to 100 bytes differs"
expect_status 0 pst truncate /a 0
expect_status 0 pst stat /a
contains "$out" "Size: 0 " "size after truncate to 0"
expect_status 1 pst truncate /a 12q
contains "$err" "SIZE: '12q' is not a size" "bad size"
expect_status 2 pst truncate /a -5
expect_status 1 pst truncate /missing 10
contains "$err" "cannot truncate /missing" "truncate of a missing file"

step "rm"
expect_status 0 pst rm /dir/c
expect_status 0 pst ls
[ "$out" = "$(printf '/a\n/dir/b')" ] || fail "ls after rm"
expect_status 1 pst rm /dir/c
contains "$err" "cannot remove /dir/c: .*(no such file|not found|No such)" "rm of a missing file"
expect_status 0 pst rm -f /dir/c
expect_status 1 pst rm /missing pstripe:/a
contains "$err" "cannot remove /missing" "rm of one missing file among others"
expect_status 0 pst ls
[ "$out" = "/dir/b" ] || fail "rm did not remove the existing file beside a missing one"
expect_status 1 pst stat /a
contains "$err" "^pstripe stat: /a: " "stat of a removed file"

step "df"
expect_status 0 pst df
contains "$out" "^Servers +Size +Used +Avail +Use% +Files" "df header"
contains "$out" "^4 .* [0-9.]+ [KMGTP]iB .*% +1\$" "df line (4 servers, 1 file)"
expect_status 0 pst df -b
contains "$out" "^4 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+% +1\$" "df -b"
# the 4 servers share one file system: its space is counted once
size=$(printf '%s\n' "$out" | awk 'NR == 2 { print $2 }')
want=$(stat -f -c '%S %b' "$cluster/server0" | awk '{ printf "%.0f", $1 * $2 }')
[ "$size" = "$want" ] || fail "df -b size $size, but the servers' one file system holds $want bytes"

step "stats"
expect_status 0 pst cp pstripe:/dir/b "$tmp/b.out"
expect_status 0 pst stats
[ "$(printf '%s\n' "$out" | grep -c '^server [0-3]  127\.0\.0\.1:[0-9]*  up ')" = 4 ] ||
    fail "stats does not show 4 servers"
for what in "requests" "written" "read" "disk writes" "disk reads" "regions/disk IO" \
    "queue depth" "latency"; do
    contains "$out" "^  $what " "stats $what"
done
contains "$out" "^    [0-9.]+(us|ms|s) - [0-9.]+(us|ms|s) +[0-9]+ #+" "stats latency histogram"
expect_status 0 pst stats 2
[ "$(printf '%s\n' "$out" | grep -c '^server ')" = 1 ] || fail "stats 2: not one server"
contains "$out" "^server 2 " "stats 2"
addr=$(sed -n 's/^servers *= *//p' "$cluster/client.conf" | cut -d, -f4)
expect_status 0 pst stats "$addr"
contains "$out" "^server 3  $addr " "stats by address"
expect_status 1 pst stats 7
contains "$err" "no server '7'" "stats of a server that does not exist"

step "config and global options"
expect_status 0 pst config
contains "$out" "^\[client\]" "config section"
for key in servers stripe_size stripe_count buffer_size buffer_count max_regions timeout \
    connect_timeout log_level; do
    contains "$out" "^$key *=" "config $key"
done
expect_status 0 pst config --set buffer_size=8m
contains "$out" "^buffer_size *= *8m" "config --set"
expect_status 0 pst --set stripe_size=128k config
contains "$out" "^stripe_size *= *128k" "config --set before the command"
expect_status 1 pst config --set no_such_tunable=1
contains "$err" "no_such_tunable" "unknown tunable"
expect_status 1 pst config --set buffer_size=lots
contains "$err" "(buffer_size|PSTRIPE_BUFFER_SIZE).*'lots' is not a size" "bad tunable value"
expect_status 2 pst config --set buffer_size
servers=$(sed -n 's/^servers *= *//p' "$cluster/client.conf")
expect_status 0 env -u PSTRIPE_CONFIG "$PSTRIPE" --servers "$servers" \
    --set auth_key_file="$cluster/auth.key" ls
[ "$out" = "/dir/b" ] || fail "ls with --servers"
expect_status 0 env -u PSTRIPE_CONFIG "$PSTRIPE" ls -c "$cluster/client.conf"
[ "$out" = "/dir/b" ] || fail "ls with -c"
step "run: execs pstripe-run with -- CMD and the connection in the environment"
cat >"$tmp/fake-run" <<'SCRIPT'
#!/bin/sh
echo "args: $*"
echo "config: ${PSTRIPE_CONFIG:-} servers: ${PSTRIPE_SERVERS:-} timeout: ${PSTRIPE_TIMEOUT:-}"
exit 7
SCRIPT
chmod +x "$tmp/fake-run"
expect_status 7 env PSTRIPE_RUN="$tmp/fake-run" "$PSTRIPE" -c "$cluster/client.conf" run --set timeout=5s -- mpiexec -n 2 ./prog -x pstripe:/out
contains "$out" "^args: -- mpiexec -n 2 ./prog -x pstripe:/out\$" "run passes CMD after --"
contains "$out" "^config: $cluster/client.conf servers:  timeout: 5s\$" "run exports the connection"
expect_status 7 env PSTRIPE_RUN="$tmp/fake-run" "$PSTRIPE" run -v --check
contains "$out" "^args: -v --check\$" "run --check"
expect_status 2 env PSTRIPE_RUN="$tmp/fake-run" "$PSTRIPE" run
expect_status 1 env PSTRIPE_RUN="$tmp/none" "$PSTRIPE" run -- true
contains "$err" "cannot run $tmp/none" "run without the script"
echo "PASS"

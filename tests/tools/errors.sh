#!/bin/sh
# Bad input gives a clear message and exit status 1 (2 for usage errors),
# and an unreachable or dead server fails at once, naming the server. (A hung
# server is tests/tools/hung-server.sh.)
. "$(dirname "$0")/lib.sh"

step "no config"
expect_status 1 env -u PSTRIPE_CONFIG HOME="$tmp" "$PSTRIPE" ls
contains "$err" "no pstripe servers configured" "no config"
contains "$err" "pstripe local start" "no config hint"
expect_status 1 env PSTRIPE_CONFIG="$tmp/none.conf" "$PSTRIPE" ls
contains "$err" "none.conf" "missing PSTRIPE_CONFIG file"
expect_status 1 pst -c "$tmp/none.conf" ls
contains "$err" "config file $tmp/none.conf: No such file" "missing -c file"
expect_status 1 env -u PSTRIPE_CONFIG HOME="$tmp" "$PSTRIPE" config
contains "$err" "config --defaults" "config without servers: hint"
expect_status 0 env -u PSTRIPE_CONFIG HOME="$tmp" "$PSTRIPE" config --defaults
contains "$out" "^stripe_size *= *1m" "config --defaults"
expect_status 1 pst -c "$tmp" ls
contains "$err" "config file $tmp: is a directory, not a file" "-c naming a directory"
expect_status 1 env PSTRIPE_CONFIG="$tmp" "$PSTRIPE" ls
contains "$err" "config file $tmp \(.PSTRIPE_CONFIG\): is a directory" "PSTRIPE_CONFIG naming a directory"
expect_status 1 pst --set timeout=abc ls
contains "$err" "^pstripe ls: --set timeout=abc: timeout: 'abc' is not a time" "a bad --set value"
not_contains "$err" "environment" "a bad --set value (not the environment's)"
printf '[client]\nservers =\n' >"$tmp/empty.conf"
expect_status 1 pst -c "$tmp/empty.conf" ls
contains "$err" "pstripe ls: " "config without servers"

step "nothing listens at the address"
# Port 1 on loopback: connection refused at once.
t0=$(date +%s)
expect_status 1 env -u PSTRIPE_CONFIG "$PSTRIPE" --servers 127.0.0.1:1 --set connect_timeout=3s ls
t1=$(date +%s)
contains "$err" "127\.0\.0\.1:1" "unreachable server named in the message"
[ $((t1 - t0)) -le 20 ] || fail "unreachable server took $((t1 - t0))s"

expect_status 0 start_cluster -n 4
# --set servers overrides the config file's list: the message names it
expect_status 1 pst --set servers=127.0.0.1:1 --set connect_timeout=3s ls
contains "$err" "cannot connect to 127\.0\.0\.1:1 \(--set servers\)" "--set servers named, not the config file"
head -c 100000 /dev/urandom >"$tmp/f"
expect_status 0 pst cp "$tmp/f" pstripe:/f

step "missing files and bad arguments"
expect_status 1 pst cp "$tmp/does-not-exist" pstripe:/x
contains "$err" "cannot open $tmp/does-not-exist: No such file" "cp of a missing local file"
expect_status 1 pst cp pstripe:/does-not-exist "$tmp/x"
contains "$err" "cannot open pstripe:/does-not-exist: " "cp of a missing pstripe file"
[ ! -e "$tmp/x" ] || fail "cp of a missing pstripe file created the destination"
expect_status 1 pst cp pstripe:/f "$tmp/no/such/dir/x"
contains "$err" "cannot create $tmp/no/such/dir/x" "cp into a missing directory"
expect_status 2 pst cp "$tmp/f" "$tmp/g"
contains "$err" "neither .* is a pstripe path" "cp local to local"
expect_status 1 pst cp --stripe-size 1x "$tmp/f" pstripe:/y
contains "$err" "--stripe-size: '1x' is not a size" "bad --stripe-size"
expect_status 1 pst cp --stripe-count 0 "$tmp/f" pstripe:/y
expect_status 1 pst cp --stripe-count 9 "$tmp/f" pstripe:/y
contains "$err" "cannot create pstripe:/y" "stripe count larger than the cluster"
expect_status 1 pst cp --stripe-size 100 "$tmp/f" pstripe:/y
contains "$err" "cannot create pstripe:/y" "stripe size below the minimum"
expect_status 2 pst chown nosuchuser-ps /f
contains "$err" "'nosuchuser-ps': no such user" "chown to an unknown user"
expect_status 2 pst chown 4294967295 /f
contains "$err" "no such user" "chown to (uid_t)-1"
expect_status 2 pst chown :nosuchgroup-ps /f
contains "$err" "'nosuchgroup-ps': no such group" "chown to an unknown group"
expect_status 1 pst stat /does-not-exist
contains "$err" "^pstripe stat: /does-not-exist: " "stat of a missing file"
long=/$(printf '%03000d' 0)
expect_status 1 pst stat "$long"
contains "$err" "\.\.\.0*: no such file\$" "the cause after a long missing name"
expect_status 1 pst stat relative/path
contains "$err" "invalid path 'relative/path': pstripe paths start with '/'" "a relative path"
expect_status 1 pst ls m_
contains "$err" "invalid prefix 'm_': pstripe paths start with '/'" "ls of a prefix without /"
expect_status 1 pst stat /a/../..
contains "$err" "invalid path '/a/../..': it names the root, no file" "the root"
expect_status 1 pst local status --dir "$tmp/nowhere"

step "a server list that is not the cluster's: refused, never wrong bytes"
# (before: a list naming server 0 twice read /f's 100,000 bytes as 1,148,576,
# stripe 0 twice; another order put names and stripes on the wrong servers)
list=$(sed -n 's/^servers *= *//p' "$cluster/client.conf")
s0=$(echo "$list" | cut -d, -f1) s1=$(echo "$list" | cut -d, -f2)
s2=$(echo "$list" | cut -d, -f3) s3=$(echo "$list" | cut -d, -f4)
sed "s|^servers *=.*|servers = $s0,$s0,$s2,$s3|" "$cluster/client.conf" >"$tmp/dup.conf"
expect_status 1 pst -c "$tmp/dup.conf" cp pstripe:/f "$tmp/dup-out"
contains "$err" "are the same server: each must be listed once" "a server listed twice"
[ ! -e "$tmp/dup-out" ] || fail "a server listed twice: cp wrote $tmp/dup-out"
sed "s|^servers *=.*|servers = $s1,$s0,$s2,$s3|" "$cluster/client.conf" >"$tmp/swap.conf"
expect_status 1 pst -c "$tmp/swap.conf" stat /f
contains "$err" "is server 1 of a cluster of 4, but this client's list .* has it as server 0 of 4" "servers in another order"
sed "s|^servers *=.*|servers = $s0,$s1|" "$cluster/client.conf" >"$tmp/half.conf"
expect_status 1 pst -c "$tmp/half.conf" ls
contains "$err" "is server 0 of a cluster of 4, but this client's list .* has it as server 0 of 2" "half the cluster"

for i in 0 1 2 3 4 5 6 7; do expect_status 0 pst cp "$tmp/f" pstripe:/g$i; done
pid=$(server_pid 2)
addr=$(sed -n 's/^servers *= *//p' "$cluster/client.conf" | cut -d, -f3)
step "a server that is gone"
expect_status 0 kill -KILL "$pid"
t0=$(date +%s)
expect_status 1 pst --set timeout=3s --set connect_timeout=3s ls
t1=$(date +%s)
contains "$err" "$addr" "dead server named in the message"
[ $((t1 - t0)) -le 15 ] || fail "a dead server took $((t1 - t0))s to fail"
expect_status 1 pst --set timeout=3s --set connect_timeout=3s rm /g0 /g1 /g2 /g3 /g4 /g5 /g6 /g7
contains "$err" "cannot remove /g.*$addr" "rm names the dead server"
not_contains "$err" "listing" "rm's message is the removal's, not its listing's"
expect_status 1 pst local status --dir "$cluster"
contains "$out" "^2 +$pid +dead " "status shows the dead server"
echo "PASS"

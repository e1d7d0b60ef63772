#!/bin/sh
# `pstripe local start|status|stop` with 4 real daemons: files it writes,
# status, refusing a second start, restarting only the servers that died
# (on the addresses client.conf lists; all of them, when all died), restart
# on the same DIR (same data dirs in the same order: a file written before
# the restart reads back identical), refusing another server count, stop
# (SIGTERM; the daemons are gone).
. "$(dirname "$0")/lib.sh"

step "start 4 servers"
expect_status 2 pst --set timeout=1s local start --dir "$cluster"
contains "$err" "server tunables go after it" "client --set before local"
[ ! -e "$cluster" ] || fail "a refused start created $cluster"
cluster=$cluster/nested # --dir is created with its parents
export PSTRIPE_CONFIG=$cluster/client.conf
expect_status 0 start_cluster -n 4
contains "$out" "Started 4 pstripe servers in $cluster" "start output"
contains "$out" "export PSTRIPE_CONFIG=$cluster/client.conf" "start output"
contains "$out" "pstripe local stop --dir $cluster" "start output"
for i in 0 1 2 3; do
    [ -d "$cluster/server$i" ] || fail "no data dir server$i"
    [ -s "$cluster/server$i.log" ] || fail "no log server$i.log"
    pid=$(server_pid $i)
    kill -0 "$pid" || fail "server$i (pid $pid) is not running"
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "--data $cluster/server$i " ||
        fail "pid $pid is not the daemon of server$i"
    # Daemonized: its own session, stdio not ours.
    [ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ] || fail "server$i is not a session leader"
done
servers=$(sed -n 's/^servers *= *//p' "$cluster/client.conf")
echo "client.conf servers: $servers"
[ "$(echo "$servers" | tr ',' '\n' | grep -Ec '^127\.0\.0\.1:[0-9]+$')" = 4 ] ||
    fail "client.conf does not list 4 addresses: $servers"
grep -q '^\[client\]' "$cluster/client.conf" || fail "client.conf has no [client] section"

step "status"
expect_status 0 pst local status --dir "$cluster"
[ "$(printf '%s\n' "$out" | grep -c ' running ')" = 4 ] || fail "status does not show 4 running"
i=0
for addr in $(echo "$servers" | tr ',' ' '); do
    contains "$out" "^$i +$(server_pid $i) +running +$addr +$cluster/server$i\$" "status line $i"
    i=$((i + 1))
done

step "a second start on the same DIR is refused"
expect_status 1 start_cluster
contains "$err" "already running" "second start"

step "the cluster answers; write a file to read back after the restart"
head -c 3000000 /dev/urandom >"$tmp/before"
expect_status 0 pst cp "$tmp/before" pstripe:/before
expect_status 0 pst ls
contains "$out" "^/before\$" "ls"

step "servers that died are restarted alone, on their addresses"
conf_before=$(cat "$cluster/client.conf")
pid0=$(server_pid 0) pid2=$(server_pid 2) pid3=$(server_pid 3)
kill -9 "$(server_pid 1)"
not_all_running() { ! pst local status --dir "$cluster" >/dev/null 2>&1; }
wait_until 10 not_all_running || fail "status does not notice the killed server1"
expect_status 1 pst cp pstripe:/before "$tmp/during"
expect_status 0 start_cluster
contains "$out" "Restarted 1 of the 4 pstripe servers" "partial restart"
contains "$out" "server0 .*(was running)" "partial restart keeps server0"
[ "$(cat "$cluster/client.conf")" = "$conf_before" ] || fail "client.conf changed on a partial restart"
[ "$(server_pid 0) $(server_pid 2) $(server_pid 3)" = "$pid0 $pid2 $pid3" ] ||
    fail "a partial restart replaced a running server"
expect_status 0 pst cp pstripe:/before "$tmp/after-partial"
cmp "$tmp/before" "$tmp/after-partial" || fail "file differs after server1 was restarted"
expect_status 0 pst local status --dir "$cluster"

step "a server still exiting (leader a zombie, a thread holding the lock) is waited for"
kill -9 "$(server_pid 1)"
wait_until 10 not_all_running || fail "status does not notice the killed server1"
dead=$(server_pid 1)
gone() { ! kill -0 "$dead" 2>/dev/null || grep -q '^State:.*Z' "/proc/$dead/status"; }
wait_until 10 gone || fail "server1 did not die"
"$top_builddir/tests/tools/exiting_holder" "$cluster/server1/lock" 2 &
holder=$!
leader_gone() { grep -q '^State:.*Z' "/proc/$holder/status"; }
wait_until 10 leader_gone || fail "exiting_holder's main thread did not exit"
echo "$holder" >"$cluster/server1.pid"
expect_status 0 start_cluster
contains "$out" "Restarted 1 of the 4 pstripe servers" "restart after the exiting holder"
wait "$holder" || fail "exiting_holder failed"
expect_status 0 pst local status --dir "$cluster"

step "all servers killed are restarted on their addresses"
conf_before=$(cat "$cluster/client.conf")
killed=$(cat "$cluster"/server*.pid)
kill -9 $killed
none_left() {
    for pid in $killed; do
        kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status" && return 1
    done
    return 0
}
wait_until 10 none_left || fail "the killed servers did not die"
expect_status 0 start_cluster
contains "$out" "Restarted the 4 pstripe servers .* on their addresses \(all had died\)" "full restart"
[ "$(cat "$cluster/client.conf")" = "$conf_before" ] || fail "client.conf changed on a full restart"
expect_status 0 pst cp pstripe:/before "$tmp/after-all"
cmp "$tmp/before" "$tmp/after-all" || fail "file differs after every server was restarted"

step "an address taken meanwhile: all on new ports when all died, an error while others run"
# squat PORT: another process listens on 127.0.0.1:PORT (pid in $squatter)
squat() {
    python3 -c "import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); print('listening', flush=True); time.sleep(120)" \
        "$1" >"$tmp/squat.out" &
    squatter=$!
    cleanup_extra="kill $squatter 2>/dev/null"
    listening() { grep -q listening "$tmp/squat.out"; }
    wait_until 10 listening || fail "nothing listens on port $1"
}
port0=$(sed -n 's/^servers *= *127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$cluster/client.conf")
[ -n "$port0" ] || fail "no port of server0 in client.conf"
killed=$(cat "$cluster"/server*.pid)
kill -9 $killed
wait_until 10 none_left || fail "the killed servers did not die"
squat "$port0"
expect_status 0 start_cluster
contains "$out" "server0's address 127.0.0.1:$port0 is taken by another process: the servers of .* start on new ports" "all died, a port taken"
contains "$out" "Started 4 pstripe servers" "new ports"
not_contains "$(cat "$cluster/client.conf")" ":$port0," "server0's taken port"
expect_status 0 pst cp pstripe:/before "$tmp/after-taken"
cmp "$tmp/before" "$tmp/after-taken" || fail "file differs after the restart on new ports"
kill -9 "$(server_pid 1)"
wait_until 10 not_all_running || fail "status does not notice the killed server1"
port1=$(sed -n 's/^servers *= *[^,]*,127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$cluster/client.conf")
kill "$squatter"
wait "$squatter" 2>/dev/null || true
squat "$port1"
expect_status 1 start_cluster
contains "$err" "server1's address 127.0.0.1:$port1 is taken by another process: cannot restart it there while the others run" "partial restart, a port taken"
kill "$squatter"
wait "$squatter" 2>/dev/null || true
cleanup_extra=
expect_status 0 start_cluster
contains "$out" "Restarted 1 of the 4 pstripe servers" "partial restart once the port is free"

step "stop"
pids=$(cat "$cluster"/server*.pid)
expect_status 0 pst local stop --dir "$cluster"
[ "$(printf '%s\n' "$out" | grep -c '^stopped server')" = 4 ] || fail "stop did not stop 4"
not_contains "$err" "SIGKILL" "stop (servers must exit on SIGTERM)"
for pid in $pids; do
    if kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status"; then
        fail "pid $pid still runs after stop"
    fi
done
ls "$cluster"/server*.pid >/dev/null 2>&1 && fail "pid files left after stop"
expect_status 1 pst local status --dir "$cluster"
[ "$(printf '%s\n' "$out" | grep -c ' stopped ')" = 4 ] || fail "status does not show 4 stopped"
expect_status 0 pst local stop --dir "$cluster"
contains "$out" "no server .* was running" "stop of a stopped cluster"

step "restart: same number of servers and data dirs, in the same order"
expect_status 1 start_cluster -n 3
contains "$err" "holds the data of 4 servers" "restart with -n 3"
expect_status 0 start_cluster
contains "$out" "Started 4 pstripe servers" "restart"
expect_status 0 pst cp pstripe:/before "$tmp/after"
cmp "$tmp/before" "$tmp/after" || fail "file written before the restart differs"
expect_status 0 pst local status --dir "$cluster"

step "stop again"
expect_status 0 pst local stop --dir "$cluster"
echo "PASS"

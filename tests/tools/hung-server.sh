#!/bin/sh
# A server that accepts connections but never answers (stopped with SIGSTOP:
# the kernel still completes TCP handshakes) makes the tool fail with exit
# status 1 within the configured timeouts, naming the server; once it runs
# again the cluster works.
. "$(dirname "$0")/lib.sh"

expect_status 0 start_cluster -n 4
head -c 100000 /dev/urandom >"$tmp/f"
expect_status 0 pst cp "$tmp/f" pstripe:/f

pid=$(server_pid 2)
addr=$(sed -n 's/^servers *= *//p' "$cluster/client.conf" | cut -d, -f3)
step "connect to a cluster with a stopped server (2s timeouts)"
kill -STOP "$pid"
t0=$(date +%s)
PST_TIMEOUT=60 expect_status 1 pst --set timeout=2s --set connect_timeout=2s ls
t1=$(date +%s)
kill -CONT "$pid"
contains "$err" "$addr" "hung server named in the message"
[ $((t1 - t0)) -le 15 ] || fail "a hung server took $((t1 - t0))s to fail with 2s timeouts"
expect_status 0 pst ls
[ "$out" = "/f" ] || fail "the cluster does not work after SIGCONT"

step "a server stopped while a file is open: cp fails within the timeout"
head -c 16M /dev/urandom >"$tmp/g"
mkfifo "$tmp/fifo"
pst --set timeout=2s cp --chunk-size 1m - pstripe:/g <"$tmp/fifo" >"$tmp/cp.out" 2>&1 &
cp_pid=$!
exec 3>"$tmp/fifo"
head -c 1M "$tmp/g" >&3
kill -STOP "$pid"
t0=$(date +%s)
cat "$tmp/g" >&3 2>/dev/null || true
exec 3>&-
set +e
wait "$cp_pid"
rc=$?
set -e
t1=$(date +%s)
kill -CONT "$pid"
cat "$tmp/cp.out"
[ "$rc" = 1 ] || fail "cp with a stopped server exited with $rc, expected 1"
contains "$(cat "$tmp/cp.out")" "$addr|did not answer|timed out|time" "cp error names the timeout"
[ $((t1 - t0)) -le 20 ] || fail "cp with a stopped server took $((t1 - t0))s to fail"
echo "PASS"

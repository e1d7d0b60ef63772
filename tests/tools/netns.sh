#!/bin/sh
# Servers and clients on different hosts (issue 11): two servers in one
# network namespace, the client in another, joined by a veth pair with their
# own addresses (all traffic stays inside namespaces this test makes). Files
# go across; an MPI program runs there (when the pstripe MPICH is built);
# then the link is cut: the client fails within its timeouts, no hang, and
# once the link is back the servers serve again. Needs root and `ip netns`.
. "$(dirname "$0")/lib.sh"

srv_ns=pss-srv-$$ cli_ns=pss-cli-$$
srv_if=pss$$ cli_if=psc$$
srv_ip=10.213.0.1 cli_ip=10.213.0.2
server=$top_builddir/server/pstripe-server
conf=$tmp/client.conf
pids=

if [ "$(id -u)" != 0 ] || ! ip netns add "$srv_ns" 2>/dev/null; then
    echo "SKIP: needs root and network namespaces (ip netns)"
    exit 77
fi
teardown() {
    for pid in $pids; do kill -TERM "$pid" 2>/dev/null; done
    for pid in $pids; do
        wait_until 30 sh -c "! kill -0 $pid 2>/dev/null" || kill -KILL "$pid" 2>/dev/null
    done
    ip netns del "$srv_ns" 2>/dev/null
    ip netns del "$cli_ns" 2>/dev/null
    if [ "$rc" != 0 ]; then
        for log in "$tmp"/server*.log; do
            echo "---- $log (last 30 lines) ----" >&2
            tail -n 30 "$log" >&2
        done
    fi
}
cleanup_extra=teardown

in_srv() { ip netns exec "$srv_ns" "$@"; }
in_cli() { ip netns exec "$cli_ns" "$@"; }

step "two hosts: namespaces $srv_ns ($srv_ip) and $cli_ns ($cli_ip)"
ip netns add "$cli_ns"
ip link add "$srv_if" type veth peer name "$cli_if"
ip link set "$srv_if" netns "$srv_ns"
ip link set "$cli_if" netns "$cli_ns"
in_srv ip addr add "$srv_ip/24" dev "$srv_if"
in_cli ip addr add "$cli_ip/24" dev "$cli_if"
for ns in "$srv_ns" "$cli_ns"; do
    ip netns exec "$ns" ip link set lo up
done
in_srv ip link set "$srv_if" up
in_cli ip link set "$cli_if" up

step "start two servers on $srv_ip"
servers=
# the client and the servers authenticate with a cluster key (README "Security")
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/auth.key"
chmod 600 "$tmp/auth.key"
for i in 0 1; do
    # ip netns exec itself (it execs the server), not the in_srv function:
    # $! must be the server's pid for the teardown's kill
    ip netns exec "$srv_ns" "$server" --data "$tmp/server$i" --listen "$srv_ip:0" --workers 1 --ready-fd 3 \
        --set auth=key --set auth_key_file="$tmp/auth.key" \
        3>"$tmp/ready$i" >"$tmp/server$i.log" 2>&1 &
    pids="$pids $!"
done
for i in 0 1; do
    has_addr() { grep -q ":" "$tmp/ready$i" 2>/dev/null; }
    wait_until 30 has_addr || fail "server$i did not report its address"
    servers="$servers${servers:+,}$(cat "$tmp/ready$i")"
done
printf '[client]\nservers = %s\ntimeout = 3s\nconnect_timeout = 3s\nauth_key_file = %s\n' \
    "$servers" "$tmp/auth.key" >"$conf"
echo "servers: $servers"
case $servers in "$srv_ip":*,"$srv_ip":*) ;; *) fail "servers do not listen on $srv_ip" ;; esac

step "files across the link"
head -c 5000000 /dev/urandom >"$tmp/f"
expect_status 0 in_cli "$PSTRIPE" -c "$conf" cp "$tmp/f" pstripe:/f
expect_status 0 in_cli "$PSTRIPE" -c "$conf" cp pstripe:/f "$tmp/f.back"
cmp "$tmp/f" "$tmp/f.back" || fail "the file read back across the link differs"
expect_status 0 in_cli "$PSTRIPE" -c "$conf" stat /f
contains "$out" "server 1 $srv_ip:" "stat names a server across the link"

if in_cli "$PSTRIPE" -c "$conf" run -- true >/dev/null 2>&1 && [ -x "$top_builddir/tests/mpi/ps_contig" ]; then
    step "an MPI program on the client host"
    # the default timeouts: the cut link below checks the short ones, and
    # with 3 s this step failed once in CI when the whole VM stood still
    # for 6 s (the client's own timer fired 3 s late; session 69)
    sed -e '/^timeout/d' -e '/^connect_timeout/d' "$conf" >"$tmp/client-mpi.conf"
    expect_status 0 in_cli env PSTRIPE_CONFIG="$tmp/client-mpi.conf" timeout -k 10 300 "$PSTRIPE" run -- \
        mpiexec -n 2 "$top_builddir/tests/mpi/ps_contig" pstripe:/mpi/contig
else
    echo "(no pstripe MPICH built: MPI step skipped)"
fi

step "the link is cut: the client fails within its timeouts"
in_srv ip link set "$srv_if" down
t0=$(date +%s)
PST_TIMEOUT=60 expect_status 1 in_cli "$PSTRIPE" -c "$conf" cp pstripe:/f "$tmp/f.cut"
t=$(($(date +%s) - t0))
echo "failed after ${t}s"
[ "$t" -le 20 ] || fail "the cut link took ${t}s to fail with 3s timeouts"
contains "$err" "$srv_ip" "the error names the server"

step "the link is back: the servers serve again"
in_srv ip link set "$srv_if" up
serves() { in_cli "$PSTRIPE" -c "$conf" cp pstripe:/f "$tmp/f.again" >/dev/null 2>&1; }
wait_until 60 serves || fail "the servers do not serve once the link is back"
cmp "$tmp/f" "$tmp/f.again" || fail "the file read after the link came back differs"
echo "PASS"

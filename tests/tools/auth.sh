#!/bin/sh
# Authentication of local clusters (issue 13): by default a cluster key
# (DIR/auth.key, 0600): the key holder is served, another uid cannot read
# the key and is refused with the reason, a wrong key and a client set to
# another mode are refused, the refusals are counted in `pstripe stats`,
# which names the mode. With --auth munge a private munged serves the
# cluster: root and uid 65534 both authenticate, as themselves, and
# `local stop` stops munged too. (Skipped parts: munge without root or
# without munged installed; setpriv missing.)
. "$(dirname "$0")/lib.sh"

step "key cluster (the default)"
expect_status 0 start_cluster -n 2
[ "$(stat -c %a "$cluster/auth.key")" = 600 ] || fail "auth.key is not mode 600"
contains "$(cat "$cluster/client.conf")" "^auth = key$" "client.conf names the mode"
contains "$(cat "$cluster/client.conf")" "^auth_key_file = $cluster/auth.key$" "client.conf names the key"
head -c 100000 /dev/urandom >"$tmp/in"
expect_status 0 pst cp "$tmp/in" pstripe:/f
expect_status 0 pst cp pstripe:/f "$tmp/back"
cmp "$tmp/in" "$tmp/back" || fail "copy differs"
expect_status 0 pst stats
contains "$out" "auth +key \(cluster key\): [1-9][0-9]* accepted, 0 refused" "stats names the mode"

step "wrong key, other mode, no key"
printf '%s' 0123456789abcdef0123456789abcdef >"$tmp/wrong.key"
chmod 600 "$tmp/wrong.key"
PSTRIPE_AUTH_KEY_FILE=$tmp/wrong.key expect_status 1 pst ls
contains "$err" "refused this client's authentication \(auth = key\)" "wrong key message"
PSTRIPE_AUTH=munge expect_status 1 pst ls
contains "$err" "requires auth = key and this client is set to auth = munge" "mode mismatch"
chmod 644 "$tmp/wrong.key"
PSTRIPE_AUTH_KEY_FILE=$tmp/wrong.key expect_status 1 pst ls
contains "$err" "readable by it alone" "a key others can read is not used"
expect_status 0 pst stats
contains "$out" "auth +key \(cluster key\): [0-9]+ accepted, [1-9][0-9]* refused" "refusal counted"
grep -q "wrong cluster key" "$cluster"/server*.log || fail "no server log says 'wrong cluster key'"

if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
    step "another uid cannot read the key"
    expect_status 1 setpriv --reuid=65534 --regid=65534 --clear-groups \
        timeout 60 "$PSTRIPE" ls
    contains "$err" "cannot open the cluster key $cluster/auth.key: Permission denied" "uid 65534"
fi
expect_status 0 pst local stop --dir "$cluster"

if command -v munged >/dev/null && command -v mungekey >/dev/null && [ "$(id -u)" = 0 ]; then
    step "munge cluster (a private munged)"
    cluster=$tmp/mcluster
    export PSTRIPE_CONFIG=$cluster/client.conf
    expect_status 0 start_cluster -n 2 --auth munge
    [ -S "$cluster/munge/sock" ] || fail "no munged socket"
    mpid=$(cat "$cluster/munge/munged.pid")
    contains "$(cat "$cluster/client.conf")" "^munge_socket = $cluster/munge/sock$" "client.conf"
    expect_status 0 pst cp "$tmp/in" pstripe:/m
    expect_status 0 setpriv --reuid=65534 --regid=65534 --clear-groups \
        timeout 60 "$PSTRIPE" ls
    contains "$out" "/m" "uid 65534 lists through MUNGE"
    expect_status 0 pst stats
    contains "$out" "auth +munge: [1-9][0-9]* accepted" "stats names munge"
    PSTRIPE_MUNGE_SOCKET=$tmp/nosock expect_status 1 pst ls
    contains "$err" "cannot get a MUNGE credential from munged \(socket $tmp/nosock\)" "no munged"
    expect_status 0 pst local stop --dir "$cluster"
    # exited (a zombie until init reaps it counts as exited)
    gone() { [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }
    gone "$mpid" || fail "munged (pid $mpid) still runs after local stop"
else
    echo "SKIP: munge cluster (needs root and the munge package)"
fi
echo PASS

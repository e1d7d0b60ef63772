#!/bin/sh
# Permissions (issue 13): on a MUNGE cluster, where uid 65534 ("nobody")
# authenticates as itself, nobody cannot read, overwrite, truncate,
# remove, chmod or chown a 0600 file of root's; can read it once root makes
# it 0644 and write, truncate and remove it once 0666; a file nobody
# creates is nobody's (`ls -l`), its group may be set to a group of
# nobody's only, its owner by root only. A process of nobody's whose gid is
# another group (users) still has nobody's groups of the servers' user
# database (nogroup, its group in passwd): group bits, chgrp. An MPI program run as nobody (tests/mpi/ps_perm)
# gets MPI_ERR_ACCESS, and reads once the mode allows. `pstripe gc` is
# root's. Data requests carry capabilities: the servers
# count no refusal for these normal clients. (Skipped without root, munge or
# setpriv: the test needs a second identity.)
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v munged >/dev/null || ! command -v setpriv >/dev/null; then
    echo "SKIP: needs root, the munge package and setpriv"
    exit 77
fi
nobody() {
    setpriv --reuid=65534 --regid=65534 --clear-groups timeout -k 5 60 "$PSTRIPE" "$@"
}
# nobody with gid 100 (users): MUNGE tells that gid; nogroup (65534), its
# group in passwd, only the servers' user database tells
nobody_users() {
    setpriv --reuid=65534 --regid=100 --clear-groups timeout -k 5 60 "$PSTRIPE" "$@"
}
# An MPI program as nobody (tests/mpi/ps_perm), 2 processes, on the
# pstripe MPICH, and under Open MPI (its OMPIO components) where built;
# skipped where `pstripe run --check` fails.
mpi_ok=0
if [ -x "$top_builddir/tests/mpi/ps_perm" ] && pst run --check >/dev/null 2>&1; then
    mpi_ok=1
fi
ompi_ok=0
if [ -x "$top_builddir/tests/mpi/openmpi/ps_perm" ] && command -v mpirun.openmpi >/dev/null; then
    ompi_ok=1
fi
nobody_mpi() {
    if [ "$mpi_ok" = 1 ]; then
        expect_status 0 setpriv --reuid=65534 --regid=65534 --clear-groups timeout -k 5 120 \
            "$PSTRIPE" run -- mpiexec -n 2 "$top_builddir/tests/mpi/ps_perm" "pstripe:$1" "$2"
        contains "$out" "ps_perm: 2 processes, $2: PASS" "MPI program as nobody ($2)"
    else
        echo "SKIP: MPI step ($2): no tests/mpi/ps_perm or no pstripe MPICH (pstripe run --check)"
    fi
    if [ "$ompi_ok" = 1 ]; then
        expect_status 0 setpriv --reuid=65534 --regid=65534 --clear-groups timeout -k 5 120 \
            "$PSTRIPE" run -- mpirun.openmpi --oversubscribe -n 2 \
            "$top_builddir/tests/mpi/openmpi/ps_perm" "pstripe:$1" "$2"
        contains "$out" "ps_perm: 2 processes, $2: PASS" "Open MPI program as nobody ($2)"
    else
        echo "SKIP: Open MPI step ($2): no tests/mpi/openmpi/ps_perm"
    fi
}

step "a munge cluster; root's 0600 file"
expect_status 0 start_cluster -n 2 --auth munge
chmod 755 "$tmp" # nobody reads the client config and its inputs here
head -c 300000 /dev/urandom >"$tmp/secret"
chmod 600 "$tmp/secret"
head -c 5000 /dev/urandom >"$tmp/other"
chmod 644 "$tmp/other"
expect_status 0 pst cp "$tmp/secret" pstripe:/secret
expect_status 0 pst ls -l /secret
contains "$out" "^-rw------- root +root .* 300000 .*/secret$" "ls -l: mode, owner, group"

step "nobody cannot read, overwrite, truncate, remove, chmod or chown it"
expect_status 1 nobody cp pstripe:/secret -
contains "$err" "cannot open /secret: permission denied" "read"
expect_status 1 nobody cp "$tmp/other" pstripe:/secret
contains "$err" "cannot replace pstripe:/secret: permission denied" "overwrite, refused before the copy"
expect_status 0 pst ls
not_contains "$out" "partial" "the refused copy's partial file is left behind"
expect_status 1 nobody truncate /secret 0
contains "$err" "cannot truncate /secret: permission denied" "truncate"
expect_status 1 nobody rm /secret
contains "$err" "cannot unlink /secret: permission denied" "rm"
expect_status 1 nobody chmod 666 /secret
contains "$err" "only the owner or root may change the mode" "chmod"
expect_status 1 nobody chown 65534 /secret
contains "$err" "only root may change the owner" "chown"
expect_status 0 pst stat /secret
before=$(printf '%s\n' "$out" | grep Modified)
expect_status 1 nobody chown 0 /secret
contains "$err" "only root may change the owner" "chown to the owner it has, by another user"
expect_status 0 pst stat /secret
[ "$(printf '%s\n' "$out" | grep Modified)" = "$before" ] || fail "a refused chown rewrote the entry"
nobody_mpi /secret denied
# nor off the servers' disks: their data directories are theirs alone
ls "$cluster"/server0/obj/*/* >/dev/null || fail "no object files to try"
if setpriv --reuid=65534 --regid=65534 --clear-groups \
    sh -c "cat $cluster/server*/obj/*/* $cluster/server*/meta/data.mdb" >/dev/null 2>&1; then
    fail "nobody read the servers' object files or metadata store"
fi
expect_status 0 pst cp pstripe:/secret "$tmp/back"
cmp "$tmp/secret" "$tmp/back" || fail "root's file changed"

step "0644: nobody reads it, still cannot write or remove it"
expect_status 0 pst chmod 644 /secret
expect_status 0 pst ls -l /secret
contains "$out" "^-rw-r--r-- root" "chmod 644 shown"
nobody cp pstripe:/secret - >"$tmp/nobody-read" || fail "nobody cannot read a 0644 file"
cmp "$tmp/secret" "$tmp/nobody-read" || fail "nobody read other bytes"
expect_status 1 nobody truncate /secret 0
expect_status 1 nobody rm /secret
nobody_mpi /secret readonly

step "0666: nobody truncates, removes and replaces root's files"
expect_status 0 pst chmod 666 /secret
expect_status 0 pst cp "$tmp/secret" pstripe:/shared
expect_status 0 pst chmod 666 /shared
expect_status 0 nobody truncate /secret 10
expect_status 0 pst ls -l /secret
contains "$out" "^-rw-rw-rw- root +root .* 10 .*/secret$" "truncated by nobody, still root's"
expect_status 0 nobody rm /shared
expect_status 1 pst stat /shared
# cp writes a new file and renames it onto the name: the copy is the
# copier's, with the replaced file's mode
expect_status 0 nobody cp "$tmp/other" pstripe:/secret
expect_status 0 pst cp pstripe:/secret "$tmp/back2"
cmp "$tmp/other" "$tmp/back2" || fail "nobody's overwrite not read back"
expect_status 0 pst ls -l /secret
contains "$out" "^-rw-rw-rw- nobody +nogroup .* 5000 .*/secret$" "replaced by nobody's copy"

step "nobody's own file"
expect_status 0 nobody cp "$tmp/other" pstripe:/mine
expect_status 0 pst ls -l /mine
contains "$out" "^-rw-r--r-- nobody +nogroup " "owner is the creator"
expect_status 1 nobody chown :0 /mine
contains "$err" "only the owner may change the group, to one of its groups" "chgrp to another group"
expect_status 0 nobody chown :65534 /mine
expect_status 1 nobody chown 65534:0 /mine
contains "$err" "only root may change the owner; only the owner may change the group" \
    "chown of owner and group: both rules named"
expect_status 0 nobody chown 65534 /mine
expect_status 0 nobody chmod 600 /mine
expect_status 1 pst chown 12345 /nonexistent
contains "$err" "no such file" "chown of a missing file"
expect_status 0 pst chown 0:0 /mine
expect_status 0 pst ls -l /mine
contains "$out" "^-rw------- root +root " "root gave it away"
expect_status 1 nobody cp pstripe:/mine -

step "groups of the servers' user database"
expect_status 0 pst cp "$tmp/other" pstripe:/grp
expect_status 0 pst chown 0:65534 /grp
expect_status 0 pst chmod 640 /grp
expect_status 0 pst ls -l /grp
contains "$out" "^-rw-r----- root +nogroup " "root's file of group nogroup"
nobody_users cp pstripe:/grp - >"$tmp/grp-read" || fail "nobody (gid users) cannot read a 0640 file of nogroup"
cmp "$tmp/other" "$tmp/grp-read" || fail "nobody read other bytes of /grp"
expect_status 1 nobody_users cp "$tmp/other" pstripe:/grp
contains "$err" "permission denied" "group bits r--: no write"
expect_status 0 pst chown 0:42 /grp
expect_status 1 nobody_users cp pstripe:/grp -
contains "$err" "cannot open /grp: permission denied" "a group nobody is not in"
expect_status 0 nobody_users cp "$tmp/other" pstripe:/mine2
expect_status 0 pst ls -l /mine2
contains "$out" "^-rw-r--r-- nobody +users " "created with the process's gid"
expect_status 0 nobody_users chown :65534 /mine2
expect_status 0 pst ls -l /mine2
contains "$out" "^-rw-r--r-- nobody +nogroup " "chgrp to nobody's group in passwd"
expect_status 1 nobody_users chown :42 /mine2
contains "$err" "only the owner may change the group, to one of its groups" "chgrp to a group nobody is not in"

step "gc is root's: nobody is refused, root finds nothing to collect"
expect_status 1 nobody gc -n
contains "$err" "only root may collect orphaned objects" "gc as nobody"
expect_status 0 pst gc -n
contains "$out" "^0 orphaned objects" "gc as root"

step "no capability refused for these normal clients, and the mode is named"
expect_status 0 pst stats
contains "$out" "auth +munge: [1-9][0-9]* accepted, 0 refused" "no refusal counted"
if grep -q "capability" "$cluster"/server*.log; then
    grep "capability" "$cluster"/server*.log
    fail "a server refused a capability of a normal client"
fi
echo PASS

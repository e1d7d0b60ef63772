#!/bin/sh
# Writes beyond the largest file a server's file system holds (ext4 with
# 4 KiB blocks: 16 TiB - 4 KiB) fail with "file too large", not a generic
# I/O error: `pstripe truncate` reports it, and an MPI write across the limit
# returns MPI_ERR_IO with the text (tests/mpi/ps_bigfile), and the last
# block ext4 holds writes and reads back. One server whose
# data directory is a loop-mounted ext4 (file offset = object offset); needs
# root and a loop device, else skipped.
. "$(dirname "$0")/lib.sh"

loop_mount_server0 -b 4096

expect_status 0 start_cluster -n 1

step "truncate beyond ext4's largest file"
expect_status 0 pst cp /dev/null pstripe:/t
expect_status 0 pst truncate /t 15t
expect_status 1 pst truncate /t 17t
contains "$err" "file too large" "truncate to 17 TiB"
expect_status 0 pst stat /t
contains "$out" "Size: 16492674416640 " "the size after a refused truncate"

step "an MPI write across 16 TiB"
bindir=$top_builddir/tests/mpi
if [ -x "$bindir/ps_bigfile" ] && "$PSTRIPE" run -- true >/dev/null 2>&1; then
    expect_status 0 timeout -k 5 120 "$PSTRIPE" run -- mpiexec -n 1 "$bindir/ps_bigfile" \
        pstripe:/big
    contains "$out" "OBJ_WRITE: file too large for the server's file system" "MPI error (server)"
    contains "$out" "cannot write at offset [0-9]+: file too large" "MPI error (client)"
    contains "$out" "ps_bigfile: ok" "ps_bigfile"
    # files near the limit are extended up to it, not past (which failed,
    # and left those writes synchronous inside io_submit)
    if grep "ftruncate object" "$cluster/server0.log"; then
        fail "a server extended a file past what its file system holds"
    fi
else
    echo "no pstripe MPICH or no tests/mpi/ps_bigfile: the MPI step is left out"
fi
echo "ok: file too large"

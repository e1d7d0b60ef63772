#!/bin/sh
# Writes beyond the largest file a server's file system holds (ext4 with
# 4 KiB blocks: 16 TiB - 4 KiB) fail with "file too large", not a generic
# I/O error: `pstripe truncate` reports it, and an MPI write across the limit
# returns MPI_ERR_IO with the text (tests/mpi/ps_bigfile). One server whose
# data directory is a loop-mounted ext4 (file offset = object offset); needs
# root and a loop device, else skipped.
. "$(dirname "$0")/lib.sh"

img=$tmp/disk.img
mnt=$cluster/server0
if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 >/dev/null || [ ! -e /dev/loop-control ]; then
    echo "SKIP: needs root, mkfs.ext4 and loop devices"
    exit 77
fi
truncate -s 64M "$img"
mkfs.ext4 -q -F -b 4096 "$img"
mkdir -p "$mnt"
if ! mount -o loop "$img" "$mnt"; then
    echo "SKIP: cannot loop-mount a file system here"
    exit 77
fi
cleanup_extra='umount "$mnt" 2>/dev/null || umount -l "$mnt"'

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
else
    echo "no pstripe MPICH or no tests/mpi/ps_bigfile: the MPI step is left out"
fi
echo "ok: file too large"

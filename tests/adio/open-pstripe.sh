#!/bin/sh
# A "pstripe:" file name reaches the pstripe ROMIO driver in the pstripe
# MPICH, and only there; ufs: files still work in it.
#   - system MPICH: ROMIO does not know the prefix (fstype unsupported);
#   - pstripe MPICH, no servers configured: the driver answers with its own
#     error on both ranks (MPI_ERR_IO, "pstripe: connect to the servers: ..."
#     from ADIOI_PSTRIPE_Init);
#   - pstripe MPICH, ufs: file: written, read back, size 2 x 4 KiB.
# Reading and writing pstripe: files on real daemons is tests/mpi's job.
. "$(dirname "$0")/common.sh"
prog=tests/adio/mpi_open
# Hermetic: no client config from the caller (or from $HOME) may be found.
for var in $(env | sed -n 's/^\(PSTRIPE_[A-Z_]*\)=.*/\1/p'); do
    unset "$var"
done
export PSTRIPE_CONFIG="$tmp/no-such-client.conf" HOME="$tmp"

run "$system_mpiexec" -n 1 "$prog" pstripe:/adio-open-test
[ $rc -ne 0 ] || fail "the system MPICH opened a pstripe: file"
echo "$out" | grep -q 'fstypeunsupported' || fail "the system MPICH did not reject the pstripe: prefix"

run "$pstripe_run" mpiexec -n 2 "$prog" pstripe:/adio-open-test
[ $rc -ne 0 ] || fail "opened a pstripe: file with no servers configured"
# MPI_Error_string: "Other I/O error , error stack:" and on the next line
# "ADIOI_PSTRIPE_INIT(<line>): pstripe: connect to the servers: <reason>".
n=$(echo "$out" | grep -c '^open failed: MPI_File_open: MPI_ERR_IO: ')
m=$(echo "$out" | grep -c 'ADIOI_PSTRIPE_INIT.*pstripe: connect to the servers')
[ "$n" -eq 2 ] && [ "$m" -eq 2 ] ||
    fail "expected the driver's connect error (MPI_ERR_IO) on both ranks, got $n MPI_ERR_IO, $m from the driver"

run "$pstripe_run" mpiexec -n 2 "$prog" "ufs:$tmp/ufs-file"
[ $rc -eq 0 ] && echo "$out" | grep -qx 'open ok size=8192' ||
    fail "the pstripe MPICH cannot write a ufs: file"

rm -rf "$tmp"
echo PASS

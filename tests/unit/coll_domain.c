/*
 * The driver's file-domain math (adio/ad_pstripe/ad_pstripe_aggregate.c),
 * compiled into the unit tests from here rather than listed as a source:
 * that way the build leaves no object file in the driver's directory, which
 * is linked into MPICH's ROMIO tree and fingerprinted by
 * adio/build-mpich.sh. The file includes nothing of MPI or ROMIO.
 */
#include "ad_pstripe_aggregate.c"

/*
 * fake_ompi_version.c: an LD_PRELOAD library for tests/mpi/ompi-version.
 * MPI_Get_library_version reports $PSM_FAKE_OMPI_VERSION (default: an Open
 * MPI 5.0 string), so that the pstripe OMPIO components, which compare the
 * running Open MPI with the one they were built for, see another version.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int MPI_Get_library_version(char *version, int *resultlen)
{
    const char *v = getenv("PSM_FAKE_OMPI_VERSION");

    if (v == NULL) {
        v = "Open MPI v5.0.3, package: fake for tests/mpi/ompi-version";
    }
    strncpy(version, v, MPI_MAX_LIBRARY_VERSION_STRING - 1);
    version[MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    *resultlen = (int)strlen(version);
    return MPI_SUCCESS;
}

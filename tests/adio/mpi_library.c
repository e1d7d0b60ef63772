/*
 * mpi_library: each rank prints which MPI library it runs on, one line:
 *   rank R/N device=DEVICE custom=CUSTOM library=PATH
 * DEVICE and CUSTOM are the "MPICH Device" and "MPICH Custom Information"
 * lines of MPI_Get_library_version; PATH is the file the MPI symbols come
 * from (see adio/pstripe-mpi-check.c for why PMPI_Get_library_version).
 * Built with the system mpicc, so it asks for libmpich.so.12.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void field(const char *version, const char *key, char *buf, size_t len)
{
    const char *p = strstr(version, key);
    size_t n;

    buf[0] = '\0';
    if (p == NULL || p[strlen(key)] != ':')
        return;
    p += strlen(key) + 1;
    p += strspn(p, " \t");
    n = strcspn(p, "\n");
    if (n >= len)
        n = len - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

int main(int argc, char **argv)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING], device[256], custom[256];
    char library[PATH_MAX] = "(unknown)";
    Dl_info info;
    void *sym;
    int rank, size, len;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_library_version(version, &len);
    field(version, "MPICH Device", device, sizeof(device));
    field(version, "MPICH Custom Information", custom, sizeof(custom));
    sym = dlsym(RTLD_DEFAULT, "PMPI_Get_library_version");
    if (sym != NULL && dladdr(sym, &info) != 0 && info.dli_fname != NULL &&
        realpath(info.dli_fname, library) == NULL)
        snprintf(library, sizeof(library), "%s", info.dli_fname);
    printf("rank %d/%d device=%s custom=%s library=%s\n", rank, size, device, custom, library);
    MPI_Finalize();
    return 0;
}

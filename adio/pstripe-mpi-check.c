/*
 * pstripe-mpi-check: report which MPI library this process got from the
 * loader, and optionally insist that it is the pstripe MPICH.
 *
 *   pstripe-mpi-check [--expect-custom=STRING] [--expect-library=PATH]
 *
 * It is built with the system mpicc, exactly like the programs `pstripe run`
 * starts, so the library it is given is the one they will be given. Without
 * the right directory first in LD_LIBRARY_PATH the loader silently keeps the
 * system libmpich.so.12, and nothing fails until pstripe: file names do; so
 * pstripe-run asks this program instead of assuming.
 *
 * Two independent proofs:
 *   - the file the MPI symbols come from (dladdr on PMPI_Get_library_version,
 *     a symbol this program does not call, so its address is the library's,
 *     not a PLT slot of the executable), resolved with realpath and compared
 *     with --expect-library;
 *   - the "MPICH Custom Information" line of MPI_Get_library_version, which
 *     the pstripe build sets (configure --with-custom-version-string) and
 *     Debian's leaves empty, compared with --expect-custom.
 * MPI_Get_library_version may be called before MPI_Init, so no mpiexec is
 * needed and nothing is started.
 *
 * Output: "library: PATH", "device: ...", "custom: ..." lines on stdout.
 * Exit status: 0 if every expectation holds, 1 if one does not (with the
 * reason on stderr), 2 on a usage error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy the value of the line "KEY:\t..." of the version string into buf. */
static void version_field(const char *version, const char *key, char *buf, size_t len)
{
    size_t keylen = strlen(key);
    const char *p = version;

    buf[0] = '\0';
    while (p != NULL && *p != '\0') {
        if (strncmp(p, key, keylen) == 0 && p[keylen] == ':') {
            const char *v = p + keylen + 1;
            size_t n;

            v += strspn(v, " \t");
            n = strcspn(v, "\n");
            if (n >= len) {
                n = len - 1;
            }
            memcpy(buf, v, n);
            buf[n] = '\0';
            return;
        }
        p = strchr(p, '\n');
        if (p != NULL) {
            p++;
        }
    }
}

int main(int argc, char **argv)
{
    const char *expect_custom = NULL, *expect_library = NULL;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    char device[256], custom[256], mpich[64];
    char library[PATH_MAX], expected[PATH_MAX];
    void *sym;
    Dl_info info;
    int len, i, ok = 1;

    for (i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--expect-custom=", 16) == 0) {
            expect_custom = argv[i] + 16;
        } else if (strncmp(argv[i], "--expect-library=", 17) == 0) {
            expect_library = argv[i] + 17;
        } else {
            fprintf(stderr, "usage: %s [--expect-custom=STRING] [--expect-library=PATH]\n",
                    argv[0]);
            return 2;
        }
    }

    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) {
        fprintf(stderr, "pstripe-mpi-check: MPI_Get_library_version failed\n");
        return 1;
    }
    version_field(version, "MPICH Version", mpich, sizeof(mpich));
    version_field(version, "MPICH Device", device, sizeof(device));
    version_field(version, "MPICH Custom Information", custom, sizeof(custom));

    sym = dlsym(RTLD_DEFAULT, "PMPI_Get_library_version");
    if (sym == NULL || dladdr(sym, &info) == 0 || info.dli_fname == NULL ||
        realpath(info.dli_fname, library) == NULL) {
        snprintf(library, sizeof(library), "(unknown)");
    }

    printf("library: %s\n", library);
    printf("version: %s\n", mpich);
    printf("device: %s\n", device);
    printf("custom: %s\n", custom);

    if (expect_library != NULL) {
        if (realpath(expect_library, expected) == NULL) {
            fprintf(stderr, "pstripe-mpi-check: expected library %s: %m\n", expect_library);
            ok = 0;
        } else if (strcmp(library, expected) != 0) {
            fprintf(stderr,
                    "pstripe-mpi-check: the loader gave this program %s, not %s\n",
                    library, expected);
            ok = 0;
        }
    }
    if (expect_custom != NULL && strcmp(custom, expect_custom) != 0) {
        fprintf(stderr,
                "pstripe-mpi-check: the MPI library reports device %s and custom "
                "information \"%s\", not \"%s\": it is not the pstripe MPICH\n",
                device, custom, expect_custom);
        ok = 0;
    }
    return ok ? 0 : 1;
}

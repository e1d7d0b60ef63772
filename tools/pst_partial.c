/*
 * pst_partial.c: the temporary names of copies in progress.
 *
 * `pstripe cp` writes DST.pstripe-partial-XXXXXXXX and renames it onto DST
 * only once every byte is written and synced, so a copy that is killed or
 * fails leaves DST as it was (the old file, or no file) and a name that says
 * what it is. On pstripe the suffix is chosen so that the temporary name
 * has the same metadata server as DST: the rename is then one transaction
 * on that server (doc/design.md, "Renaming"). Partial copies of DST left by
 * earlier copies are removed by the next `cp` to DST and by `rm DST`.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps_proto.h"
#include "pst_tool.h"

#define PST_PARTIAL_TRIES 100000 /* suffixes tried for a co-located name (expected: nservers) */
#define PST_PARTIAL_RAND  8      /* bytes of the random suffix: 8 hex digits on pstripe, */
#define PST_PARTIAL_LRAND 6      /* and mkostemp's XXXXXX locally */
#define PST_PARTIAL_HASH  9      /* "~" and 8 hex digits: the mark of a shortened name */

int pst_is_partial(const char *path)
{
    const char *tag = strstr(path, PST_PARTIAL_TAG);

    return tag != NULL && strchr(tag, '/') == NULL;
}

/*
 * What dst's partial copies are named from: dst itself, unless dst, the tag
 * and the random suffix would be too long. For a pstripe name (local 0):
 * past PS_PATH_MAX bytes; for a local one: past PATH_MAX - 1 bytes, or its
 * last component past NAME_MAX. Then dst is cut by as much as that and
 * marked with "~" and 8 hex digits of a hash, so that a name as long as its
 * file system allows can be copied to, and its partial copies found again:
 * a hash of the whole (normalized) pstripe name, or of the local name's
 * last component (its directory may be written in other ways), which is
 * all that is cut there.
 */
static ps_status_t pst_partial_base(const char *dst, int local, char *base, size_t len)
{
    const size_t add = strlen(PST_PARTIAL_TAG) + (local ? PST_PARTIAL_LRAND : PST_PARTIAL_RAND);
    const char *slash = strrchr(dst, '/'), *last = (local && slash != NULL) ? slash + 1 : dst;
    size_t n = strlen(dst), span = strlen(last), cut = 0;
    size_t total_max = local ? PATH_MAX - 1 : PS_PATH_MAX;
    uint32_t hash = 2166136261u; /* FNV-1a */

    if (n + add > total_max) {
        cut = n + add - total_max;
    }
    if (local && span + add > NAME_MAX && span + add - NAME_MAX > cut) {
        cut = span + add - NAME_MAX;
    }
    if (cut == 0) {
        return pst_snprintf(base, len, "%s", dst);
    }
    cut += PST_PARTIAL_HASH;
    if (cut >= span) {
        return PS_ERR_NAME_TOO_LONG; /* a long path with a short last component */
    }
    for (const char *p = last; *p != '\0'; p++) {
        hash = (hash ^ (unsigned char)*p) * 16777619u;
    }
    return pst_snprintf(base, len, "%.*s~%08" PRIx32, (int)(n - cut), dst, hash);
}

ps_status_t pst_partial_name(pstripe_fs_t *fs, const char *dst, char *tmp, size_t len)
{
    char norm[PS_PATH_MAX + 1], base[PS_PATH_MAX + 1];
    uint32_t want, got, r = 0;
    ps_status_t status;

    status = ps_path_normalize(dst, norm, sizeof(norm)); /* as pst_partial_clean finds them */
    if (status == PS_OK) {
        status = pst_partial_base(norm, 0, base, sizeof(base));
    }
    if (status == PS_OK) {
        status = pstripe_path_server(fs, dst, &want);
    }
    if (status != PS_OK) {
        return status;
    }
    if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        r = (uint32_t)getpid() * 2654435761u;
    }
    for (int i = 0; i < PST_PARTIAL_TRIES; i++, r++) {
        status = pst_snprintf(tmp, len, "%s%s%08" PRIx32, base, PST_PARTIAL_TAG, r);
        if (status == PS_OK) {
            status = pstripe_path_server(fs, tmp, &got);
        }
        if (status != PS_OK || got == want) {
            return status;
        }
    }
    return PS_ERR_BUSY; /* not reached with a sane hash */
}

/* Collects the names pstripe_list finds. */
typedef struct pst_partial_list {
    char **names;
    size_t n, cap;
} pst_partial_list_t;

static int pst_partial_collect(const char *path, const pstripe_stat_t *st, void *arg)
{
    pst_partial_list_t *l = arg;

    (void)st;
    if (!pst_is_partial(path)) {
        return 0;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        char **names = realloc(l->names, cap * sizeof(*names));

        if (names == NULL) {
            return PS_ERR_NO_MEMORY;
        }
        l->names = names;
        l->cap = cap;
    }
    l->names[l->n] = strdup(path);
    if (l->names[l->n] == NULL) {
        return PS_ERR_NO_MEMORY;
    }
    l->n++;
    return 0;
}

ps_status_t pst_partial_clean(pst_ctx_t *ctx, pstripe_fs_t *fs, const char *dst, int *nremoved)
{
    char norm[PS_PATH_MAX + 1], base[PS_PATH_MAX + 1], prefix[PS_PATH_MAX + 64];
    pst_partial_list_t l = {0};
    ps_status_t status;

    *nremoved = 0;
    if (ps_path_normalize(dst, norm, sizeof(norm)) != PS_OK ||
        pst_partial_base(norm, 0, base, sizeof(base)) != PS_OK ||
        pst_snprintf(prefix, sizeof(prefix), "%s%s", base, PST_PARTIAL_TAG) != PS_OK) {
        return PS_OK; /* no valid name: no partial copies of it either */
    }
    status = pstripe_list(fs, prefix, pst_partial_collect, &l);
    for (size_t i = 0; i < l.n; i++) {
        ps_status_t rm_status = pstripe_unlink(fs, l.names[i]);

        if (rm_status == PS_OK) {
            (*nremoved)++;
        } else if (rm_status != PS_ERR_NO_ENTRY) {
            pst_lib_error(ctx, rm_status, "cannot remove the partial copy %s", l.names[i]);
            status = status == PS_OK ? rm_status : status;
        }
        free(l.names[i]);
    }
    free(l.names);
    return status;
}

int pst_local_partial_open(const char *dst, mode_t mode, char *tmp, size_t len)
{
    char base[PATH_MAX];
    struct stat sb;
    glob_t g;
    int fd;

    if (pst_partial_base(dst, 1, base, sizeof(base)) != PS_OK) {
        errno = ENAMETOOLONG;
        return -1;
    }

    if (pst_snprintf(tmp, len, "%s%s*", base, PST_PARTIAL_TAG) == PS_OK &&
        glob(tmp, GLOB_NOSORT | GLOB_NOESCAPE, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            if (lstat(g.gl_pathv[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
                unlink(g.gl_pathv[i]); /* left by a killed copy */
            }
        }
        globfree(&g);
    }
    if (pst_snprintf(tmp, len, "%s%sXXXXXX", base, PST_PARTIAL_TAG) != PS_OK) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    /* the mode a plain create with mode would give (mkstemp makes 0600),
     * or the replaced file's */
    if (stat(dst, &sb) == 0) {
        fchmod(fd, sb.st_mode & 07777);
    } else {
        mode_t mask = umask(0);

        umask(mask);
        fchmod(fd, mode & ~mask & 07777);
    }
    return fd;
}

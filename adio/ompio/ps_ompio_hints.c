/*
 * ps_ompio_hints.c: the pstripe hints of a file under Open MPI (part of the
 * fs component), at open and by MPI_File_set_info and MPI_File_set_view.
 *
 * Hints are taken as the ROMIO driver takes them (issue 9): equal on every
 * process, or the call fails with MPI_ERR_NOT_SAME; a value that does not
 * parse, or is out of range for one of our own hints, is ignored with a
 * warning, as if not given. Layout hints, fitted, never refused
 * (pstripe_layout_fit, the ROMIO driver's code):
 *   striping_factor  servers to stripe over; 0 or less: the default; more
 *                    than the cluster has: clamped      at creation only
 *   striping_unit    stripe size in bytes (k, m, g); 0 or less: the
 *                    default; rounded into 512 B..1 GiB  at creation only
 *   start_iodevice   server of stripe 0; outside the cluster (or < 0):
 *                    chosen by the path                 at creation only
 *   romio_pstripe_buffer_size, romio_pstripe_buffer_count,
 *   romio_pstripe_max_regions: the client's per-file tunables.
 *   romio_pstripe_write_behind, romio_pstripe_read_cache
 *   (enable/disable/automatic), romio_pstripe_wb_buffer_size,
 *   romio_pstripe_rc_size, romio_pstripe_rc_block_size: the file's
 *   write-behind buffer and read cache (fs_pstripe.c).
 *   romio_pstripe_listio_read/_write: the ROMIO driver's switches; checked,
 *   and of no effect here (OMPIO always hands down lists).
 *   romio_cb_read, romio_cb_write (enable/disable/automatic): whether
 *   OMPIO aggregates the blocking collective reads and writes, or each
 *   process makes the independent call (pstripe_ompio_independent).
 * At open, ROMIO's hints file ($ROMIO_HINTS, else /etc/romio-hints, read
 * at a process's first open) gives the hints the info does not, as under
 * MPICH (read_hints_file).
 * The file's info (MPI_File_get_info) shows the effective values: the
 * layout the file has, the tunables its requests use, the caches it has.
 *
 * After open, Open MPI's MPI_File_set_info keeps only keys a component
 * subscribed to (opal_infosubscribe_change_info), and its set_view takes no
 * hints; a subscriber's callback runs on one process, key by key, where
 * these hints must be agreed by all. So libpstripe-ompi-hooks.so (which
 * `pstripe run` preloads, as the caches need) calls pstripe_ompio_set_info
 * after both calls, as the ROMIO driver's SetInfo runs for both: the
 * hints agreed, the tunables taken, the caches remade when their hints
 * change them (the buffered writes sent first), the collective switches
 * set, and the effective values written back into the file's info.
 * Without the preloaded library these calls change nothing of ours (get_info
 * then lacks a key set_info named, as Open MPI does for any key no
 * component takes).
 */
#include "ps_ompio.h"

#include "ompi/file/file.h"
#include "opal/util/info.h"
#include "ps_layout.h" /* PS_STRIPE_COUNT_MAX (a macro only) */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum {
    HINT_FACTOR,
    HINT_UNIT,
    HINT_START,
    HINT_BSIZE,
    HINT_BCOUNT,
    HINT_MAXREG,
    HINT_LISTIO_READ,
    HINT_LISTIO_WRITE,
    HINT_WRITE_BEHIND,
    HINT_READ_CACHE,
    HINT_WB_SIZE,
    HINT_RC_SIZE,
    HINT_RC_BLOCK,
    HINT_CB_READ,
    HINT_CB_WRITE,
    NHINTS
};
_Static_assert(NHINTS == PS_OMPIO_NHINTS, "ps_ompio.h counts the hints");
enum { KIND_COUNT, KIND_SIZE, KIND_LAYOUT, KIND_LAYOUT_SIZE, KIND_ENABLE };

static const struct {
    const char *key;
    const char *option; /* per-file tunable, or NULL for a layout hint */
    int kind;
    const char *expect;
} hint_table[NHINTS] = {
    {"striping_factor", NULL, KIND_LAYOUT, "an integer (servers; 0 or less: the default)"},
    {"striping_unit", NULL, KIND_LAYOUT_SIZE, "a stripe size in bytes (k, m, g suffixes allowed)"},
    {"start_iodevice", NULL, KIND_LAYOUT, "an integer (a server index; -1: chosen by the path)"},
    {"romio_pstripe_buffer_size", "buffer_size", KIND_SIZE,
     "a size in bytes from 1 to 2147483647 (k, m, g suffixes allowed)"},
    {"romio_pstripe_buffer_count", "buffer_count", KIND_COUNT, "an integer from 1 to 2147483647"},
    {"romio_pstripe_max_regions", "max_regions", KIND_COUNT, "an integer from 1 to 2147483647"},
    {"romio_pstripe_listio_read", NULL, KIND_ENABLE, "enable, disable or automatic"},
    {"romio_pstripe_listio_write", NULL, KIND_ENABLE, "enable, disable or automatic"},
    {"romio_pstripe_write_behind", NULL, KIND_ENABLE, "enable, disable or automatic"},
    {"romio_pstripe_read_cache", NULL, KIND_ENABLE, "enable, disable or automatic"},
    {"romio_pstripe_wb_buffer_size", NULL, KIND_SIZE,
     "a size in bytes from 1 to 2147483647 (k, m, g suffixes allowed)"},
    {"romio_pstripe_rc_size", NULL, KIND_SIZE,
     "a size in bytes from 1 to 2147483647 (k, m, g suffixes allowed)"},
    {"romio_pstripe_rc_block_size", NULL, KIND_SIZE,
     "a size in bytes from 1 to 2147483647 (k, m, g suffixes allowed)"},
    {"romio_cb_read", NULL, KIND_ENABLE, "enable, disable or automatic"},
    {"romio_cb_write", NULL, KIND_ENABLE, "enable, disable or automatic"},
};

static int parse_hint(int kind, const char *value, long long *val)
{
    uint64_t size;
    char *end;
    long long v;

    if (kind == KIND_ENABLE) {
        if (!strcasecmp(value, "enable")) {
            *val = PS_OMPIO_ENABLE;
        } else if (!strcasecmp(value, "disable")) {
            *val = PS_OMPIO_DISABLE;
        } else if (!strcasecmp(value, "automatic")) {
            *val = PS_OMPIO_AUTOMATIC;
        } else {
            return -1;
        }
        return 0;
    }
    if (kind == KIND_SIZE) {
        if (pstripe_parse_size(value, &size) != PS_OK || size < 1 || size > INT32_MAX) {
            return -1;
        }
        *val = (long long)size;
        return 0;
    }
    errno = 0;
    v = strtoll(value, &end, 10);
    if (kind == KIND_LAYOUT_SIZE && (errno != 0 || end == value || *end != '\0' || v > 0)) {
        /* a positive size, maybe with a suffix; huge ones are fitted */
        if (pstripe_parse_size(value, &size) != PS_OK) {
            return -1;
        }
        *val = size > LLONG_MAX ? LLONG_MAX : (long long)size;
        return 0;
    }
    if (errno != 0 || end == value || *end != '\0' ||
        (kind == KIND_COUNT && (v < 1 || v > INT32_MAX))) {
        return -1;
    }
    *val = v;
    return 0;
}

/* Hint k given as value: taken, or left out with a warning if it does not
 * parse (MPI lets an implementation ignore a hint). */
static void take_hint(int k, const char *value, ps_ompio_hints_t *hv)
{
    if (parse_hint(hint_table[k].kind, value, &hv->val[k]) != 0) {
        opal_output(0, "pstripe: warning: MPI-IO hint %s=\"%s\" ignored: expected %s",
                    hint_table[k].key, value, hint_table[k].expect);
        hv->val[k] = 0;
        return;
    }
    hv->present[k] = 1;
}

/* Our hints from info. */
static void read_hints(opal_info_t *info, ps_ompio_hints_t *hv)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int k, flag;

    for (k = 0; k < NHINTS; k++) {
        hv->present[k] = 0;
        hv->val[k] = 0;
        flag = 0;
        if (info != NULL && info != &ompi_mpi_info_null.info.super &&
            opal_info_get(info, hint_table[k].key, MPI_MAX_INFO_VAL, value, &flag) ==
                OPAL_SUCCESS &&
            flag) {
            take_hint(k, value, hv);
        }
    }
}

#define HINTS_FILE_MAX 4096 /* ROMIO reads this much of it */

/* Its text as read at the first open, for the opens after; under the
 * lock (threads may open files at once; no collective runs under it). */
static pthread_mutex_t sys_hints_lock = PTHREAD_MUTEX_INITIALIZER;
static char sys_hints[HINTS_FILE_MAX + 1];
static int sys_hints_read;

/* The hints file's text into buf (HINTS_FILE_MAX + 1 bytes): the one read
 * before, if every process of comm has it, else read again (ROMIO's rule:
 * read at the first open, by rank 0 of that open's comm, and broadcast;
 * again when a process joins that has not). */
static int load_hints_file(MPI_Comm comm, char *buf)
{
    int done, all_done, rank;

    pthread_mutex_lock(&sys_hints_lock);
    done = sys_hints_read;
    memcpy(buf, sys_hints, HINTS_FILE_MAX + 1);
    pthread_mutex_unlock(&sys_hints_lock);
    if (MPI_Allreduce(&done, &all_done, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS ||
        MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) {
        return MPI_ERR_OTHER;
    }
    if (all_done) {
        return MPI_SUCCESS;
    }
    if (rank == 0) {
        const char *path = getenv("ROMIO_HINTS");
        int fd = path != NULL ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        ssize_t n = 0;

        if (fd < 0) {
            fd = open("/etc/romio-hints", O_RDONLY | O_CLOEXEC);
        }
        if (fd >= 0) {
            n = read(fd, buf, HINTS_FILE_MAX);
            close(fd);
        }
        buf[n > 0 ? n : 0] = '\0';
    }
    if (MPI_Bcast(buf, HINTS_FILE_MAX, MPI_CHAR, 0, comm) != MPI_SUCCESS) {
        return MPI_ERR_OTHER;
    }
    buf[HINTS_FILE_MAX] = '\0';
    pthread_mutex_lock(&sys_hints_lock);
    memcpy(sys_hints, buf, HINTS_FILE_MAX + 1);
    sys_hints_read = 1;
    pthread_mutex_unlock(&sys_hints_lock);
    return MPI_SUCCESS;
}

/*
 * The hints file ROMIO reads (system_hints.c), read and parsed the same
 * way, so that one file serves programs of both MPIs: $ROMIO_HINTS, else
 * /etc/romio-hints; lines "KEY VALUE", '#' first a comment, lines of other
 * than two words skipped. Our hints in it that info did not give are taken
 * (info's win, as in ROMIO).
 */
static int read_hints_file(MPI_Comm comm, ps_ompio_hints_t *hv)
{
    char buf[HINTS_FILE_MAX + 1], *line, *lp, *wp;

    if (load_hints_file(comm, buf) != MPI_SUCCESS) {
        return MPI_ERR_OTHER;
    }
    for (line = strtok_r(buf, "\n", &lp); line != NULL; line = strtok_r(NULL, "\n", &lp)) {
        char *key = strtok_r(line, " \t", &wp);
        char *value = key != NULL ? strtok_r(NULL, " \t", &wp) : NULL;

        if (key == NULL || key[0] == '#' || value == NULL || strtok_r(NULL, " \t", &wp) != NULL) {
            continue;
        }
        for (int k = 0; k < NHINTS; k++) {
            if (!hv->present[k] && strcmp(key, hint_table[k].key) == 0) {
                take_hint(k, value, hv);
            }
        }
    }
    return MPI_SUCCESS;
}

/* The same hints on every process (a hint given by some processes only, or
 * with other values, would give the processes different files or
 * different collective paths): one allreduce of the values and their
 * negations (MAX). */
int ps_ompio_hints_get(MPI_Comm comm, opal_info_t *info, ps_ompio_hints_t *hv, const char *call,
                       int at_open)
{
    long long mine[4 * NHINTS], all[4 * NHINTS];
    int k;

    read_hints(info, hv);
    if (at_open && read_hints_file(comm, hv) != MPI_SUCCESS) {
        return MPI_ERR_OTHER;
    }
    for (k = 0; k < NHINTS; k++) {
        mine[k] = hv->present[k];
        mine[NHINTS + k] = hv->val[k];
        mine[2 * NHINTS + k] = -hv->present[k];
        mine[3 * NHINTS + k] = hv->val[k] == LLONG_MIN ? LLONG_MAX : -hv->val[k];
    }
    if (MPI_Allreduce(mine, all, 4 * NHINTS, MPI_LONG_LONG, MPI_MAX, comm) != MPI_SUCCESS) {
        return MPI_ERR_OTHER;
    }
    for (k = 0; k < NHINTS; k++) {
        if (all[k] != -all[2 * NHINTS + k] || all[NHINTS + k] != -all[3 * NHINTS + k]) {
            return ps_ompio_code(MPI_ERR_NOT_SAME,
                                 "pstripe: %s: hint %s differs between the processes (or is "
                                 "given by some only)",
                                 call, hint_table[k].key);
        }
    }
    return MPI_SUCCESS;
}

pstripe_layout_t ps_ompio_hints_layout(const ps_ompio_hints_t *hv)
{
    pstripe_layout_t layout = {0, 0, -1};
    long long v;

    if (hv->present[HINT_FACTOR] && (v = hv->val[HINT_FACTOR]) > 0) {
        layout.stripe_count = (uint32_t)(v > PS_STRIPE_COUNT_MAX ? PS_STRIPE_COUNT_MAX : v);
    }
    if (hv->present[HINT_UNIT] && (v = hv->val[HINT_UNIT]) > 0) {
        layout.stripe_size = (uint64_t)v;
    }
    if (hv->present[HINT_START] && (v = hv->val[HINT_START]) >= 0 && v <= INT32_MAX) {
        layout.first_server = (int32_t)v;
    }
    return layout;
}

/* The per-file tunables the hints give (a value out of the library's
 * range is ignored with a warning, as by ROMIO). */
static void take_tunables(pstripe_file_t *file, const ps_ompio_hints_t *hv)
{
    char value[32];
    int k;

    for (k = HINT_BSIZE; k <= HINT_MAXREG; k++) {
        if (!hv->present[k]) {
            continue;
        }
        snprintf(value, sizeof(value), "%lld", hv->val[k]);
        if (pstripe_file_set_option(file, hint_table[k].option, value) != PS_OK) {
            opal_output(0, "pstripe: warning: MPI-IO hint %s=%s ignored: %s", hint_table[k].key,
                        value, pstripe_last_error());
        }
    }
}

/* The settings of pf the hints change: caches and collective switches. */
static void take_settings(ps_ompio_file_t *pf, const ps_ompio_hints_t *hv)
{
    if (hv->present[HINT_WRITE_BEHIND]) {
        pf->write_behind = (int)hv->val[HINT_WRITE_BEHIND];
    }
    if (hv->present[HINT_READ_CACHE]) {
        pf->read_cache = (int)hv->val[HINT_READ_CACHE];
    }
    if (hv->present[HINT_WB_SIZE]) {
        pf->wb_size = (size_t)hv->val[HINT_WB_SIZE];
    }
    if (hv->present[HINT_RC_SIZE]) {
        pf->rc_size = (size_t)hv->val[HINT_RC_SIZE];
    }
    if (hv->present[HINT_RC_BLOCK]) {
        pf->rc_block = (size_t)hv->val[HINT_RC_BLOCK];
    }
    if (hv->present[HINT_CB_READ]) {
        pf->cb_read = (int)hv->val[HINT_CB_READ];
    }
    if (hv->present[HINT_CB_WRITE]) {
        pf->cb_write = (int)hv->val[HINT_CB_WRITE];
    }
    if (hv->present[HINT_LISTIO_READ]) {
        pf->listio_read = (int)hv->val[HINT_LISTIO_READ];
    }
    if (hv->present[HINT_LISTIO_WRITE]) {
        pf->listio_write = (int)hv->val[HINT_LISTIO_WRITE];
    }
}

/* Does hv hold any of our hints? */
static int hints_given(const ps_ompio_hints_t *hv)
{
    int k;

    for (k = 0; k < NHINTS; k++) {
        if (hv->present[k]) {
            return 1;
        }
    }
    return 0;
}

/* Would the hints change the caches of pf? (HDF5 passes its file's info,
 * with the hints given at open, to every set_view: remaking the caches each
 * time made the ROMIO driver's H5Dwrite twice as slow, 9b512e8.) */
static int caches_change(const ps_ompio_file_t *pf, const ps_ompio_hints_t *hv)
{
    static const int keys[] = {HINT_WRITE_BEHIND, HINT_READ_CACHE, HINT_WB_SIZE, HINT_RC_SIZE,
                               HINT_RC_BLOCK};
    const long long now[] = {pf->write_behind, pf->read_cache, (long long)pf->wb_size,
                             (long long)pf->rc_size, (long long)pf->rc_block};
    size_t i;

    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (hv->present[keys[i]] && hv->val[keys[i]] != now[i]) {
            return 1;
        }
    }
    return 0;
}

/* pf's write-behind buffer and read cache, as its settings ask, where
 * libpstripe-ompi-hooks.so is preloaded (else nothing is cached; said
 * once when a hint asked for a cache). */
static void caches_make(ompio_file_t *fh, ps_ompio_file_t *pf)
{
    static int told;
    int (*bypass)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "pstripe_ompio_bypass");
    int (*hooked)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "pstripe_ompio_hooked");

    if (bypass == NULL &&
        (pf->write_behind == PS_OMPIO_ENABLE || pf->read_cache == PS_OMPIO_ENABLE) && !told++) {
        opal_output(0,
                    "pstripe: write-behind and the read cache need libpstripe-ompi-hooks.so "
                    "preloaded (pstripe run does it): %s is not cached",
                    fh->f_filename);
    }
    if (hooked == NULL || !hooked()) {
        bypass = NULL;
    }
    pf->bypass = bypass;
    if (bypass != NULL && pf->write_behind != PS_OMPIO_DISABLE &&
        !(fh->f_amode & MPI_MODE_RDONLY) &&
        pstripe_wbuf_create(pf->file, pf->wb_size, &pf->wb) != PS_OK) {
        opal_output(0, "pstripe: warning: %s: no write-behind: %s", fh->f_filename,
                    pstripe_last_error());
    }
    if (bypass != NULL && pf->read_cache != PS_OMPIO_DISABLE && !(fh->f_amode & MPI_MODE_WRONLY) &&
        pstripe_rcache_create(pf->file, pf->rc_size, pf->rc_block, &pf->rc) != PS_OK) {
        opal_output(0, "pstripe: warning: %s: no read cache: %s", fh->f_filename,
                    pstripe_last_error());
    }
}

void ps_ompio_caches_free(ompio_file_t *fh, ps_ompio_file_t *pf)
{
    ps_status_t status;

    pstripe_rcache_free(pf->rc);
    pf->rc = NULL;
    status = pstripe_wbuf_free(pf->wb);
    pf->wb = NULL;
    if (status != PS_OK) {
        ps_ompio_report("cannot flush the buffered writes of", fh->f_filename, status);
        ps_ompio_note_failure(pf, "flush of the buffered writes of", fh->f_filename, status,
                              ps_ompio_mpi_error(status));
    }
}

/* Whether a collective read waits for the others (ps_ompio_coll.c) must
 * be the same everywhere, so it must not hang on one process's failed
 * cache set-up: does every process have a read cache? Collective. */
static void agree_rc_all(MPI_Comm comm, ps_ompio_file_t *pf)
{
    int have_rc = pf->rc != NULL;

    if (MPI_Allreduce(&have_rc, &pf->rc_all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
        pf->rc_all = 0;
    }
}

static void info_set_ll(opal_info_t *info, const char *key, long long v)
{
    char value[32];

    snprintf(value, sizeof(value), "%lld", v);
    opal_info_set(info, key, value);
}

/* The effective values into info: the layout the file has, the tunables
 * its requests use (in bytes, as the ROMIO driver shows them), the caches
 * it has and the collective switches. A key saved as given ("_OMPI_IN_"
 * + key: Open MPI's set_info keeps the value given, which get_info would
 * show instead) goes. */
static void show(opal_info_t *info, const ps_ompio_file_t *pf)
{
    static const char *const name[] = {"", "enable", "disable", "automatic"};
    char key[OPAL_MAX_INFO_KEY + 1], value[64];
    pstripe_layout_t layout;
    uint64_t v;
    int k;

    if (info == NULL || info == &ompi_mpi_info_null.info.super) {
        return;
    }
    if (pstripe_file_layout(pf->file, &layout) == PS_OK) {
        info_set_ll(info, "striping_unit", (long long)layout.stripe_size);
        info_set_ll(info, "striping_factor", layout.stripe_count);
        info_set_ll(info, "start_iodevice", layout.first_server);
    }
    for (k = HINT_BSIZE; k <= HINT_MAXREG; k++) {
        if (pstripe_file_get_option(pf->file, hint_table[k].option, value, sizeof(value)) ==
                PS_OK &&
            pstripe_parse_size(value, &v) == PS_OK) {
            info_set_ll(info, hint_table[k].key, (long long)v);
        }
    }
    opal_info_set(info, "romio_pstripe_write_behind", pf->wb != NULL ? "enable" : "disable");
    opal_info_set(info, "romio_pstripe_read_cache", pf->rc != NULL ? "enable" : "disable");
    info_set_ll(info, "romio_pstripe_wb_buffer_size", (long long)pf->wb_size);
    info_set_ll(info, "romio_pstripe_rc_size", (long long)pf->rc_size);
    info_set_ll(info, "romio_pstripe_rc_block_size", (long long)pf->rc_block);
    opal_info_set(info, "romio_cb_read", name[pf->cb_read]);
    opal_info_set(info, "romio_cb_write", name[pf->cb_write]);
    opal_info_set(info, "romio_pstripe_listio_read", name[pf->listio_read]);
    opal_info_set(info, "romio_pstripe_listio_write", name[pf->listio_write]);
    for (k = 0; k < NHINTS; k++) {
        snprintf(key, sizeof(key), OPAL_INFO_SAVE_PREFIX "%s", hint_table[k].key);
        (void)opal_info_delete(info, key); /* (none: nothing to do) */
    }
}

int ps_ompio_hints_open_file(ompio_file_t *fh, ps_ompio_file_t *pf, const ps_ompio_hints_t *hv)
{
    pstripe_layout_t layout;
    ps_status_t status;

    take_tunables(pf->file, hv);
    status = pstripe_file_layout(pf->file, &layout);
    if (status != PS_OK) {
        return ps_ompio_fail("cannot read the layout of", fh->f_filename, status);
    }
    fh->f_stripe_size = (size_t)layout.stripe_size;
    fh->f_stripe_count = (int)layout.stripe_count;
    fh->f_fs_block_size = layout.stripe_size > INT32_MAX ? INT32_MAX : (int)layout.stripe_size;
    return MPI_SUCCESS;
}

void ps_ompio_hints_open_caches(ompio_file_t *fh, opal_info_t *info, ps_ompio_file_t *pf,
                                const ps_ompio_hints_t *hv)
{
    pf->write_behind = pf->read_cache = PS_OMPIO_AUTOMATIC;
    pf->wb_size = PS_OMPIO_WB_SIZE;
    pf->rc_size = PS_OMPIO_RC_SIZE;
    pf->rc_block = PS_OMPIO_RC_BLOCK;
    pf->cb_read = pf->cb_write = PS_OMPIO_AUTOMATIC;
    pf->listio_read = pf->listio_write = PS_OMPIO_ENABLE;
    take_settings(pf, hv);
    caches_make(fh, pf);
    agree_rc_all(fh->f_comm, pf);
    show(info, pf);
}

/*
 * The hints of info (MPI_INFO_NULL: none, agreed all the same) on an
 * open pstripe file, after Open MPI's MPI_File_set_info (of_set_info 1:
 * it dropped from the file's info the keys of ours it named) or
 * MPI_File_set_view (0) (file: any program's file; MPI_SUCCESS at once
 * for one that is not pstripe's).
 * Collective, as both calls are. Layout hints apply at creation only.
 * Caches whose hints change are remade: the buffered writes sent first (a
 * failure is kept for the next sync or close, as a flush's), the read
 * cache dropped. Returns MPI_SUCCESS or the agreement's error (the same on
 * every process). For libpstripe-ompi-hooks.so, which looks it up.
 */
__attribute__((visibility("default"))) int pstripe_ompio_set_info(MPI_File file, MPI_Info info,
                                                                  int of_set_info)
{
    ompio_file_t *fh = ps_ompio_fs_file(file);
    ps_ompio_file_t *pf;
    ps_ompio_hints_t hv;
    int err, remake = 0;

    if (fh == NULL) {
        return MPI_SUCCESS;
    }
    pf = fh->f_fs_ptr;
    /* agreed with MPI_INFO_NULL too: the processes' info may differ (the
     * others' allreduce met this one's next collective: a hang) */
    err = ps_ompio_hints_get(fh->f_comm, info == MPI_INFO_NULL ? NULL : &info->super, &hv,
                             "MPI_File_set_info or MPI_File_set_view", 0);
    OPAL_THREAD_LOCK(&file->f_lock);
    if (err == MPI_SUCCESS) {
        take_tunables(pf->file, &hv);
        remake = caches_change(pf, &hv);
        take_settings(pf, &hv);
        if (remake) {
            ps_ompio_caches_free(fh, pf);
            caches_make(fh, pf);
        }
    }
    if (of_set_info || err != MPI_SUCCESS || hints_given(&hv)) {
        show(file->super.s_info, pf);
    }
    OPAL_THREAD_UNLOCK(&file->f_lock);
    if (remake) { /* alike everywhere: the settings are agreed */
        agree_rc_all(fh->f_comm, pf);
    }
    return err;
}

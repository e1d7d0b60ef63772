/*
 * ad_pstripe_hints.c: SetInfo.
 *
 * Hints are taken as users write them (MPI lets an implementation ignore a
 * hint it cannot honour): a value that does not parse, or is out of range
 * for one of our own hints, is ignored with a warning in the log (level
 * warn), as if it were not given. The layout hints are fitted rather than
 * refused: striping_factor 0 or below and striping_unit 0 or below mean the
 * default, start_iodevice below 0 means "chosen by the path", a
 * striping_unit is raised to the servers' smallest stripe or lowered to
 * ADIOI_PSTRIPE_UNIT_MAX, and at creation (Fit_layout, once the cluster's
 * size is known) a striping_factor larger than the cluster is clamped to
 * it and a start_iodevice outside it is ignored. Every process takes part
 * in one allreduce, whether or not its info carries the key, so that a
 * hint given by some processes only, or with different values, is caught
 * (MPI_ERR_NOT_SAME, ROMIO's error class for the layout hints, naming the
 * hint) instead of mismatching collectives. ADIO_Open
 * ignores SetInfo's error code, so an error found while opening is kept in
 * the file's state and returned by OpenColl; ADIO_Set_view ignores it too,
 * so the error of a view's SetInfo is kept and returned by set_view's next
 * call into the driver (Reset_shared_fp). set_view flushes the buffered
 * writes before it calls SetInfo (Set_view_begin, below).
 *
 * The effective values are written back into fd->info: the layout the file
 * really has (after open), the tunables its requests use (the file's own in
 * the client library once open, else those it will start with), and the
 * list I/O switches.
 */

#include "ad_pstripe.h"
#include "adio_extern.h"
#include "ps_layout.h"
#include "ps_log.h"
#include <errno.h>
#include <strings.h>

enum {
    KEY_STRIPING_FACTOR,
    KEY_STRIPING_UNIT,
    KEY_START_IODEVICE,
    KEY_BUFFER_SIZE,
    KEY_BUFFER_COUNT,
    KEY_MAX_REGIONS,
    KEY_LISTIO_READ,
    KEY_LISTIO_WRITE,
    KEY_WRITE_BEHIND,
    KEY_WB_SIZE,
    KEY_READ_CACHE,
    KEY_RC_SIZE,
    KEY_RC_BLOCK,
    NKEYS
};

enum {
    KIND_COUNT,                 /* integer >= 1 */
    KIND_SIZE,                  /* size >= 1, k/m/g suffix allowed */
    KIND_LAYOUT,                /* any integer (fitted by set_layout_hints) */
    KIND_LAYOUT_SIZE,           /* any integer, or a size with k/m/g suffix */
    KIND_ENABLE                 /* enable | disable | automatic */
};

static const struct {
    const char *key;
    int kind;
    const char *expect;
} hint_table[NKEYS] = {
    {"striping_factor", KIND_LAYOUT, "an integer (servers; 0 or less: the default)"},
    {"striping_unit", KIND_LAYOUT_SIZE, "a stripe size in bytes (k, m, g suffixes allowed)"},
    {"start_iodevice", KIND_LAYOUT, "an integer (a server index; -1: chosen by the path)"},
    {ADIOI_PSTRIPE_HINT_BUFFER_SIZE, KIND_SIZE, "a size in bytes from 1 to 2147483647 (k, m, g suffixes allowed)"},
    {ADIOI_PSTRIPE_HINT_BUFFER_COUNT, KIND_COUNT, "an integer from 1 to 2147483647"},
    {ADIOI_PSTRIPE_HINT_MAX_REGIONS, KIND_COUNT, "an integer from 1 to 2147483647"},
    {ADIOI_PSTRIPE_HINT_LISTIO_READ, KIND_ENABLE, "enable, disable or automatic"},
    {ADIOI_PSTRIPE_HINT_LISTIO_WRITE, KIND_ENABLE, "enable, disable or automatic"},
    {ADIOI_PSTRIPE_HINT_WRITE_BEHIND, KIND_ENABLE, "enable, disable or automatic"},
    {ADIOI_PSTRIPE_HINT_WB_SIZE, KIND_SIZE, "a size in bytes from 1 to 2147483647 (k, m, g suffixes allowed)"},
    {ADIOI_PSTRIPE_HINT_READ_CACHE, KIND_ENABLE, "enable, disable or automatic"},
    {ADIOI_PSTRIPE_HINT_RC_SIZE, KIND_SIZE, "a size in bytes from 1 to 2147483647 (k, m, g suffixes allowed)"},
    {ADIOI_PSTRIPE_HINT_RC_BLOCK, KIND_SIZE, "a size in bytes from 1 to 2147483647 (k, m, g suffixes allowed)"},
};

/* The hint of each per-file tunable (ADIOI_PSTRIPE_OPT_...). */
static const int key_of_opt[ADIOI_PSTRIPE_NOPTS] = {
    KEY_BUFFER_SIZE, KEY_BUFFER_COUNT, KEY_MAX_REGIONS
};

static int parse_hint(int kind, const char *value, long long *val)
{
    char *end;
    long long v;
    uint64_t size;

    switch (kind) {
        case KIND_COUNT:
        case KIND_LAYOUT:
        case KIND_LAYOUT_SIZE:
            errno = 0;
            v = strtoll(value, &end, 10);
            if (kind == KIND_LAYOUT_SIZE && (errno != 0 || end == value || *end != '\0' || v > 0)) {
                /* a positive size, maybe with a suffix; huge ones are fitted */
                if (pstripe_parse_size(value, &size) != PS_OK)
                    return -1;
                *val = size > LLONG_MAX ? LLONG_MAX : (long long) size;
                return 0;
            }
            if (errno != 0 || end == value || *end != '\0')
                return -1;
            if (kind == KIND_COUNT && (v < 1 || v > INT_MAX))
                return -1;
            *val = v;
            return 0;
        case KIND_SIZE:
            if (pstripe_parse_size(value, &size) != PS_OK || size < 1 || size > INT_MAX)
                return -1;
            *val = (long long) size;
            return 0;
        case KIND_ENABLE:
            if (!strcasecmp(value, "enable") || !strcasecmp(value, "automatic") ||
                !strcasecmp(value, "requested"))
                *val = ADIOI_HINT_ENABLE;
            else if (!strcasecmp(value, "disable"))
                *val = ADIOI_HINT_DISABLE;
            else
                return -1;
            return 0;
    }
    return -1;
}

static void set_info_ll(MPI_Info info, const char *key, long long v)
{
    char value[MPI_MAX_INFO_VAL + 1];

    MPL_snprintf(value, sizeof(value), "%lld", v);
    ADIOI_Info_set(info, key, value);
}

/* fd->hints and fd->info from the layout of the open file. */
void ADIOI_PSTRIPE_Set_layout_hints(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    fd->hints->striping_unit = (int) ps->layout.stripe_size;
    fd->hints->striping_factor = (int) ps->layout.stripe_count;
    fd->hints->start_iodevice = ps->layout.first_server;
    fd->blksize = (long) ps->layout.stripe_size;
    set_info_ll(fd->info, "striping_unit", fd->hints->striping_unit);
    set_info_ll(fd->info, "striping_factor", fd->hints->striping_factor);
    set_info_ll(fd->info, "start_iodevice", fd->hints->start_iodevice);
}

/* The pstripe hints of one SetInfo call, as given. */
typedef struct {
    int present[NKEYS];
    long long val[NKEYS];
} hint_values;

/* Read and parse our hints from users_info (which may be MPI_INFO_NULL); a
 * value that does not parse is left out, with a warning. */
static void read_hints(MPI_Info users_info, hint_values * hv)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int k, flag;

    for (k = 0; k < NKEYS; k++) {
        hv->present[k] = 0;
        hv->val[k] = 0;
        if (users_info == MPI_INFO_NULL)
            continue;
        ADIOI_Info_get(users_info, hint_table[k].key, MPI_MAX_INFO_VAL, value, &flag);
        if (!flag)
            continue;
        if (parse_hint(hint_table[k].kind, value, &hv->val[k]) != 0) {
            ps_warn("MPI-IO hint %s=\"%s\" ignored: expected %s", hint_table[k].key, value,
                    hint_table[k].expect);
            hv->val[k] = 0;
            continue;
        }
        hv->present[k] = 1;
    }
}

/* One allreduce (MAX of values and of their negations) tells every process
 * whether all processes agree, (*any) whether any of them gave one of our
 * hints and (*cb_any, in: this process's) whether any named the
 * aggregators; and (ps->sfp_lost_any) whether any found the shared file
 * pointer lost, for set_view's reset after it (ad_pstripe_sharedfp.c: a
 * second allreduce there made HDF5's collective writes 2-5 times
 * slower). Returns the MPI error code (the same on every process),
 * whose string names the first hint that differs (ROMIO's
 * MPIO_ERR_CREATE_CODE_INFO_NOT_SAME passes MPICH a message that is not
 * in its table, and the key was lost: "(unknown)(): Inconsistent
 * arguments to collective routine"). */
static int agree_hints(ADIO_File fd, hint_values * hv, int *any, int *cb_any, int at_open)
{
    static char myname[] = "ADIOI_PSTRIPE_SETINFO";
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    long long local[4 * NKEYS + 2], global[4 * NKEYS + 2];
    int k, err = MPI_SUCCESS;

    for (k = 0; k < NKEYS; k++) {
        local[k] = hv->present[k];
        local[NKEYS + k] = hv->val[k];
        local[2 * NKEYS + k] = -hv->present[k];
        /* (-LLONG_MAX, not -LLONG_MIN, for a value that was that small) */
        local[3 * NKEYS + k] = hv->val[k] == LLONG_MIN ? LLONG_MAX : -hv->val[k];
    }
    local[4 * NKEYS] = *cb_any;
    local[4 * NKEYS + 1] = ps->sfp_lost;
    MPI_Allreduce(local, global, 4 * NKEYS + 2, MPI_LONG_LONG, MPI_MAX, fd->comm);

    *cb_any = global[4 * NKEYS] != 0;
    ps->sfp_lost_any = global[4 * NKEYS + 1] != 0;
    *any = 0;
    for (k = 0; k < NKEYS; k++) {
        *any |= global[k] != 0;
        if (global[k] != -global[2 * NKEYS + k] ||
            global[NKEYS + k] != -global[3 * NKEYS + k]) {
            char what[MPI_MAX_INFO_KEY + 64];

            MPL_snprintf(what, sizeof(what), "(pstripe: hint %s not the same on every process)",
                         hint_table[k].key);
            err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                       MPI_ERR_NOT_SAME, "**notsame", "**notsame %s %s", what,
                                       at_open ? "MPI_File_open" : "MPI_File_set_view/set_info");
            break;
        }
    }
    return err;
}

/* Layout hints: they matter only when the open creates the file. Values
 * the servers cannot use are fitted (0 in create_layout: the default);
 * what depends on the cluster's size is fitted by Fit_layout. */
static void set_layout_hints(ADIOI_PSTRIPE_fs * ps, const hint_values * hv, int at_open)
{
    long long v;

    if (!at_open)
        return;
    if (hv->present[KEY_STRIPING_FACTOR]) {
        v = hv->val[KEY_STRIPING_FACTOR];
        ps->create_layout.stripe_count = v <= 0 ? 0 : (uint32_t) MPL_MIN(v, PS_STRIPE_COUNT_MAX);
    }
    if (hv->present[KEY_STRIPING_UNIT]) {
        v = hv->val[KEY_STRIPING_UNIT];
        if (v <= 0)
            ps->create_layout.stripe_size = 0;
        else
            ps->create_layout.stripe_size =
                (uint64_t) MPL_MIN(MPL_MAX(v, (long long) PS_STRIPE_SIZE_MIN),
                                   ADIOI_PSTRIPE_UNIT_MAX);
    }
    if (hv->present[KEY_START_IODEVICE]) {
        v = hv->val[KEY_START_IODEVICE];
        ps->create_layout.first_server = (v < 0 || v > INT32_MAX) ? -1 : (int32_t) v;
    }
}

/* Fit the layout hints to the cluster before a create (pstripe_layout_fit,
 * shared with the OMPIO fs component): a striping_factor larger than the
 * cluster is clamped to it, a start_iodevice outside it is ignored (the
 * path chooses). When the cluster's size cannot be learnt, the layout is
 * left as it is (the create reports what is wrong). */
void ADIOI_PSTRIPE_Fit_layout(ADIOI_PSTRIPE_fs * ps)
{
    pstripe_layout_fit(ADIOI_PSTRIPE_fs_handle, ps->path, &ps->create_layout);
}

/* Buffer hints: the client library's tunables for this file's I/O. */
static void set_buffer_hints(ADIOI_PSTRIPE_fs * ps, const hint_values * hv)
{
    int k;

    for (k = 0; k < ADIOI_PSTRIPE_NOPTS; k++)
        if (hv->present[key_of_opt[k]])
            ps->opt[k] = hv->val[key_of_opt[k]];
}

/* List I/O hints: our noncontiguous paths, or ROMIO's generic ones. */
static void set_listio_hints(ADIOI_PSTRIPE_fs * ps, const hint_values * hv)
{
    if (hv->present[KEY_LISTIO_READ])
        ps->listio_read = (int) hv->val[KEY_LISTIO_READ];
    if (hv->present[KEY_LISTIO_WRITE])
        ps->listio_write = (int) hv->val[KEY_LISTIO_WRITE];
}

/* Write-behind and read cache hints (ad_pstripe_cache.c). */
static void set_cache_hints(ADIOI_PSTRIPE_fs * ps, const hint_values * hv)
{
    if (hv->present[KEY_WRITE_BEHIND])
        ps->write_behind = (int) hv->val[KEY_WRITE_BEHIND];
    if (hv->present[KEY_WB_SIZE])
        ps->wb_size = hv->val[KEY_WB_SIZE];
    if (hv->present[KEY_READ_CACHE])
        ps->read_cache = (int) hv->val[KEY_READ_CACHE];
    if (hv->present[KEY_RC_SIZE])
        ps->rc_size = hv->val[KEY_RC_SIZE];
    if (hv->present[KEY_RC_BLOCK])
        ps->rc_block = hv->val[KEY_RC_BLOCK];
}

static void show_cache_hints(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    ADIOI_Info_set(fd->info, ADIOI_PSTRIPE_HINT_WRITE_BEHIND,
                   ps->write_behind == ADIOI_HINT_DISABLE ? "disable" : "enable");
    set_info_ll(fd->info, ADIOI_PSTRIPE_HINT_WB_SIZE, ps->wb_size);
    ADIOI_Info_set(fd->info, ADIOI_PSTRIPE_HINT_READ_CACHE,
                   ps->read_cache == ADIOI_HINT_DISABLE ? "disable" : "enable");
    set_info_ll(fd->info, ADIOI_PSTRIPE_HINT_RC_SIZE, ps->rc_size);
    set_info_ll(fd->info, ADIOI_PSTRIPE_HINT_RC_BLOCK, ps->rc_block);
}

/* The effective values, into fd->info (after ADIOI_GEN_SetInfo, which
 * makes fd->info and may have stepped on striping_unit): the connection's
 * tunables where the file sets none, the list I/O switches, and the layout
 * of the open file, else the layout hints given. */
static void show_hints(ADIO_File fd, const hint_values * hv, int err)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    int k;

    for (k = 0; k < ADIOI_PSTRIPE_NOPTS; k++) {
        long long v = ps->opt[k] ? ps->opt[k] : ADIOI_PSTRIPE_Option_value(fd, k);
        if (v > 0)
            set_info_ll(fd->info, hint_table[key_of_opt[k]].key, v);
    }
    ADIOI_Info_set(fd->info, ADIOI_PSTRIPE_HINT_LISTIO_READ,
                   ps->listio_read == ADIOI_HINT_DISABLE ? "disable" : "enable");
    ADIOI_Info_set(fd->info, ADIOI_PSTRIPE_HINT_LISTIO_WRITE,
                   ps->listio_write == ADIOI_HINT_DISABLE ? "disable" : "enable");
    show_cache_hints(fd);
    if (ps->file != NULL) {
        ADIOI_PSTRIPE_Set_layout_hints(fd);
    } else if (err == MPI_SUCCESS) {
        /* before the open: the layout hints as they will be asked for */
        if (hv->present[KEY_STRIPING_FACTOR])
            set_info_ll(fd->info, "striping_factor", ps->create_layout.stripe_count);
        if (hv->present[KEY_STRIPING_UNIT])
            set_info_ll(fd->info, "striping_unit", (long long) ps->create_layout.stripe_size);
        if (hv->present[KEY_START_IODEVICE])
            set_info_ll(fd->info, "start_iodevice", ps->create_layout.first_server);
    }
}

/* After ADIOI_GEN_SetInfo: cb_buffer_size is the size of a two-phase
 * round, and each round is a request to the servers, so a smaller one than
 * ADIOI_PSTRIPE_CB_MIN is raised to it, with a warning (cb_buffer_size=1:
 * a 40 KB collective write of 2 processes took 2.2 s, 0.17-0.27 s on ufs). */
static void raise_cb_buffer(ADIO_File fd)
{
    if (fd->hints->cb_buffer_size >= ADIOI_PSTRIPE_CB_MIN)
        return;
    ps_warn("MPI-IO hint cb_buffer_size=%d raised to %d: each round of two-phase I/O is a "
            "request to the servers", fd->hints->cb_buffer_size, ADIOI_PSTRIPE_CB_MIN);
    fd->hints->cb_buffer_size = ADIOI_PSTRIPE_CB_MIN;
    set_info_ll(fd->info, "cb_buffer_size", ADIOI_PSTRIPE_CB_MIN);
}

/* The value key has now on an open handle (a layout key: none, LLONG_MIN;
 * it matters at creation only). */
static long long current_value(const ADIOI_PSTRIPE_fs * ps, int k)
{
    int i;

    for (i = 0; i < ADIOI_PSTRIPE_NOPTS; i++)
        if (key_of_opt[i] == k)
            return ps->opt[i];
    switch (k) {
        case KEY_LISTIO_READ:
            return ps->listio_read;
        case KEY_LISTIO_WRITE:
            return ps->listio_write;
        case KEY_WRITE_BEHIND:
            return ps->write_behind;
        case KEY_WB_SIZE:
            return ps->wb_size;
        case KEY_READ_CACHE:
            return ps->read_cache;
        case KEY_RC_SIZE:
            return ps->rc_size;
        case KEY_RC_BLOCK:
            return ps->rc_block;
    }
    return LLONG_MIN;
}

/* Would these hints (agreed: alike on every process) change anything of
 * an open handle? HDF5 passes its file's info object, with the hints the
 * program gave at open, to every set_view: taking them again each time
 * made and freed the caches' buffers twice an H5Dwrite (h5bench -c -L
 * chunked -H romio_pstripe_write_behind=enable: 1.27-1.42 ms a call
 * against 0.53-0.58 without the hint). */
static int hints_change(const ADIOI_PSTRIPE_fs * ps, const hint_values * hv)
{
    int k;

    for (k = 0; k < NKEYS; k++)
        if (hv->present[k] && current_value(ps, k) != LLONG_MIN &&
            hv->val[k] != current_value(ps, k))
            return 1;
    return 0;
}

/* Does the info object (or MPI_INFO_NULL) name key? */
static int info_has(MPI_Info info, const char *key)
{
    int len, flag = 0;

    if (info != MPI_INFO_NULL)
        MPI_Info_get_valuelen(info, key, &len, &flag);
    return flag;
}

static void set_info(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;
    hint_values hv;
    int at_open = 0, any = 0, cb_any, gen_error, err = MPI_SUCCESS, old_listio_write;
    int flush_err = MPI_SUCCESS, lock_err = MPI_SUCCESS;

    *error_code = MPI_SUCCESS;
    if (ps == NULL) {
        /* first call, from MPI_File_open, before the file is opened */
        ps = fd->fs_ptr = ADIOI_PSTRIPE_fs_alloc();
        at_open = 1;
        /* connect now so that the info object can show the connection's
         * tunables; a failure is reported by OpenColl */
        ADIOI_PSTRIPE_Init(&gen_error);
    }
    read_hints(users_info, &hv);
    /* every process agrees, with an info object or MPI_INFO_NULL (MPI lets
     * them differ: agreeing only where there was one paired this allreduce
     * with another process's next collective); whether any process named
     * the aggregators is agreed too (they choose them alike:
     * ad_pstripe_twophase.c) */
    cb_any = info_has(users_info, "cb_nodes") || info_has(users_info, "cb_config_list");
    err = agree_hints(fd, &hv, &any, &cb_any, at_open);
    ps->cb_given |= cb_any;
    /* set_view and set_info: buffered writes go out, the read cache is
     * dropped (a failure stays as the handle's sticky error too) */
    if (!at_open)
        flush_err = ADIOI_PSTRIPE_Cache_flush(fd, 1);
    if (!at_open && err == MPI_SUCCESS && (!any || !hints_change(ps, &hv))) {
        /* nothing of ours changes (HDF5 sets a view, with its info object,
         * around every access of a derived type): the buffers stay; the
         * layout is shown again over a striping_unit ROMIO's SetInfo took */
        ADIOI_GEN_SetInfo(fd, users_info, &gen_error);
        raise_cb_buffer(fd);
        if (ps->file != NULL)
            ADIOI_PSTRIPE_Set_layout_hints(fd);
        *error_code = flush_err;
        return;
    }
    old_listio_write = ps->listio_write;
    if (err == MPI_SUCCESS) {
        set_layout_hints(ps, &hv, at_open);
        set_buffer_hints(ps, &hv);
        set_listio_hints(ps, &hv);
        set_cache_hints(ps, &hv);
        /* the caches take the new sizes */
        ADIOI_PSTRIPE_Cache_setup(fd);
    }
    /* ROMIO's own hints (cb_*, ds_*, ind_*): always, since ADIO_Open
     * relies on them even when ours are wrong */
    ADIOI_GEN_SetInfo(fd, users_info, &gen_error);
    raise_cb_buffer(fd);
    show_hints(fd, &hv, err);

    /* (the hints agreed: err is every process's) */
    if (err != MPI_SUCCESS) {
        if (at_open)
            ps->pending_error = err;
        *error_code = err;
        return;
    }
    /* an open file takes changed buffer hints at once (at open, Open does);
     * every process goes on to the collective window below even when its
     * flush failed: one that left would hang the others */
    if (ps->file != NULL)
        ADIOI_PSTRIPE_Apply_options(fd);

    /* switching to ROMIO's data-sieving writes on an open file needs the
     * lock; SetInfo is collective, so the window can be made here */
    if (ps->file != NULL && old_listio_write != ps->listio_write && ADIOI_PSTRIPE_Lock_needed(fd))
        ADIOI_PSTRIPE_Lock_setup(fd, &lock_err);
    *error_code = flush_err != MPI_SUCCESS ? flush_err : lock_err;
}

/* MPI_File_set_view's first step, before its collective check of the info
 * argument (adio/patch-romio.sh): the file's buffered writes go to the
 * servers, so that no process leaves that allreduce before every process's
 * writes of the old view are there. It orders them as the barrier at the
 * end of ROMIO's set_view did, which pstripe files skip: on 2 vCPUs with
 * the servers, that barrier was a wait after each process's flush, when the
 * process that flushed first had gone to sleep (HDF5's collective writes,
 * two set_views an H5Dwrite: issue 8's "Session 39"). A failed flush is
 * set_view's error (Reset_shared_fp returns it) and stays the handle's
 * sticky error, for the next sync or close. */
void ADIOI_PSTRIPE_Set_view_begin(ADIO_File fd)
{
    ADIOI_PSTRIPE_fs *ps = fd->fs_ptr;

    if (ps != NULL)
        ps->view_flush_error = ADIOI_PSTRIPE_Cache_flush(fd, 0);
}

void ADIOI_PSTRIPE_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    ADIOI_PSTRIPE_fs *ps;

    set_info(fd, users_info, error_code);
    ps = fd->fs_ptr;
    if (ps != NULL)
        ps->setinfo_error = *error_code;
}

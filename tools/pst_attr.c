/*
 * pst_attr.c: `pstripe chmod` and `pstripe chown`. Both change the
 * metadata at the path's owner server (SETATTR); the rules (owner or root
 * for the mode, root for the owner, the owner's own group for chgrp) are
 * the servers'.
 */
#include "config.h"

#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pst_tool.h"

/* Octal permission bits, 0..0777. */
static int pst_parse_mode(const char *s, uint32_t *mode)
{
    char *end;
    unsigned long v = strtoul(s, &end, 8);

    if (*s == '\0' || *end != '\0' || v > 0777) {
        return -1;
    }
    *mode = (uint32_t)v;
    return 0;
}

/* A user or group: a number, or a name of the local passwd/group database. */
static int pst_parse_id(const char *s, int is_group, int64_t *id)
{
    char *end;
    unsigned long long v;

    if (*s == '\0') {
        *id = -1;
        return 0;
    }
    v = strtoull(s, &end, 10);
    if (*end == '\0' && v < UINT32_MAX) { /* (uid_t)-1 means "no change" to chown(2) */
        *id = (int64_t)v;
        return 0;
    }
    if (*end == '\0') {
        return -1; /* a number out of range */
    }
    if (is_group) {
        struct group *gr = getgrnam(s);
        if (gr != NULL) {
            *id = gr->gr_gid;
            return 0;
        }
    } else {
        struct passwd *pw = getpwnam(s);
        if (pw != NULL) {
            *id = pw->pw_uid;
            return 0;
        }
    }
    return -1;
}

typedef struct pst_attr_arg {
    int is_chown;
    uint32_t mode;
    int64_t uid, gid;
} pst_attr_arg_t;

static ps_status_t pst_attr_one(pst_ctx_t *ctx, pstripe_fs_t *fs, const char *path, void *arg)
{
    const pst_attr_arg_t *a = arg;
    ps_status_t status =
        a->is_chown ? pstripe_chown(fs, path, a->uid, a->gid) : pstripe_chmod(fs, path, a->mode);

    if (status != PS_OK) {
        pst_lib_error(ctx, status, "%s", path);
    }
    return status;
}

int pst_cmd_chmod(pst_ctx_t *ctx, int argc, char **argv)
{
    pst_attr_arg_t a = {0};
    int ret;

    if ((ret = pst_parse_no_opts(ctx, argc, argv)) != PST_CONTINUE) {
        return ret;
    }
    if (argc - optind < 2) {
        return pst_usage_error(ctx, "expected MODE and PATH...");
    }
    if (pst_parse_mode(argv[optind], &a.mode) != 0) {
        return pst_usage_error(ctx, "MODE must be octal permission bits (e.g. 640), 0..777");
    }
    optind++;
    return pst_for_each_path(ctx, argc, argv, pst_attr_one, &a);
}

int pst_cmd_chown(pst_ctx_t *ctx, int argc, char **argv)
{
    pst_attr_arg_t a = {.is_chown = 1};
    char spec[256], *colon;
    int ret;

    if ((ret = pst_parse_no_opts(ctx, argc, argv)) != PST_CONTINUE) {
        return ret;
    }
    if (argc - optind < 2) {
        return pst_usage_error(ctx, "expected OWNER[:GROUP] (or :GROUP) and PATH...");
    }
    snprintf(spec, sizeof(spec), "%s", argv[optind]);
    colon = strchr(spec, ':');
    if (colon != NULL) {
        *colon = '\0';
    }
    a.gid = -1;
    if (pst_parse_id(spec, 0, &a.uid) != 0) {
        return pst_usage_error(ctx, "'%s': no such user (a name, or a number below 4294967295)",
                               spec);
    }
    if (colon != NULL && pst_parse_id(colon + 1, 1, &a.gid) != 0) {
        return pst_usage_error(ctx, "'%s': no such group (a name, or a number below 4294967295)",
                               colon + 1);
    }
    if (a.uid == -1 && a.gid == -1) {
        return pst_usage_error(ctx, "'%s': expected OWNER[:GROUP] or :GROUP (names or numbers)",
                               argv[optind]);
    }
    optind++;
    return pst_for_each_path(ctx, argc, argv, pst_attr_one, &a);
}

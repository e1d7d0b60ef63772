/*
 * pst_tool.h: shared pieces of the `pstripe` command (tools/).
 *
 * Every subcommand is a function pst_cmd_<name>(ctx, argc, argv) that parses
 * its own options with getopt_long (argv[0] is "pstripe <name>", so getopt's
 * messages name the subcommand) and returns the process exit status:
 * PST_EXIT_OK, PST_EXIT_ERROR (the operation failed: missing file,
 * unreachable server, bad value) or PST_EXIT_USAGE (the command line itself
 * is wrong: unknown option, missing or extra arguments).
 *
 * The global options (-c/--config, --servers, --set, -h/--help) are accepted
 * before the subcommand and among its own options; PST_GLOBAL_LONGOPTS and
 * pst_global_opt() implement them once.
 */
#ifndef PST_TOOL_H
#define PST_TOOL_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "pstripe.h"

#define PST_EXIT_OK    0
#define PST_EXIT_ERROR 1
#define PST_EXIT_USAGE 2

/* Returned by pst_global_opt() when option parsing should go on. */
#define PST_CONTINUE (-1)

/* Prefix that marks a pstripe path in `cp` ("pstripe:/dir/file"). */
#define PST_PATH_PREFIX "pstripe:"

typedef struct pst_cmd pst_cmd_t;

typedef struct pst_ctx {
    const char *config;    /* -c/--config FILE, or NULL */
    const char *servers;   /* --servers LIST, or NULL */
    const char **settings; /* --set NAME=VALUE, NULL-terminated */
    int nsettings;
    const pst_cmd_t *cmd; /* subcommand being run */
    char name[64];        /* "pstripe <cmd>", prefix of error messages */
} pst_ctx_t;

struct pst_cmd {
    const char *name;
    int (*fn)(pst_ctx_t *ctx, int argc, char **argv);
    const char *synopsis; /* arguments, for the usage line */
    const char *summary;  /* one line, for `pstripe help` */
    const char *help;     /* description and options, for `pstripe CMD --help` */
};

/* Long option values of the global options without a short form. */
enum {
    PST_OPT_SERVERS = 0x100,
    PST_OPT_SET,
    PST_OPT_FIRST_LOCAL /* first value free for a subcommand's own options */
};

#define PST_GLOBAL_SHORTOPTS "c:h"
#define PST_GLOBAL_LONGOPTS                                                                        \
    {"config", required_argument, NULL, 'c'},                                                      \
        {"servers", required_argument, NULL, PST_OPT_SERVERS},                                     \
        {"set", required_argument, NULL, PST_OPT_SET},                                             \
    {                                                                                              \
        "help", no_argument, NULL, 'h'                                                             \
    }

/*
 * Handle a getopt_long() result that is not one of the subcommand's own
 * options: a global option (returns PST_CONTINUE), --help (prints the
 * subcommand's help, returns PST_EXIT_OK) or an unknown option / missing
 * argument (getopt already printed why; prints a hint, returns PST_EXIT_USAGE).
 */
int pst_global_opt(pst_ctx_t *ctx, int opt, const char *arg);

/*
 * Append a --set NAME=VALUE argument to the NULL-terminated array
 * *settings_p of *n_p entries. Returns PST_CONTINUE, or the exit status
 * after printing why (not NAME=VALUE: usage; out of memory: error).
 */
int pst_add_setting(pst_ctx_t *ctx, const char *arg, const char ***settings_p, int *n_p);

/* Print a usage error for the current subcommand and return PST_EXIT_USAGE. */
int pst_usage_error(pst_ctx_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print "pstripe CMD: <message>" on stderr. */
void pst_msg(pst_ctx_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Print "pstripe CMD: <message>: <reason>" for a failed library call with
 * status: the reason is pstripe_last_error() (the library's detailed
 * message), or pstripe_strerror(status) when there is none.
 */
void pst_lib_error(pst_ctx_t *ctx, ps_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Connect as the global options say: --servers LIST, else the config file
 * (-c FILE or the default search); --set settings apply to both. On failure
 * prints the reason (with a hint when nothing is configured) and returns
 * its status; PS_OK and *fs_p on success.
 */
ps_status_t pst_connect(pst_ctx_t *ctx, pstripe_fs_t **fs_p);

/* Strip an optional "pstripe:" prefix from a path argument. */
const char *pst_fs_path(const char *arg);

/* "64.0 MiB", "512 B": human-readable binary size. */
void pst_human_size(uint64_t bytes, char *buf, size_t len);

/* Parse a size ("4m", "1g", "4096") or report "<what>: '<str>' is not a
 * size" and return PS_ERR_INVALID. */
ps_status_t pst_parse_size_arg(pst_ctx_t *ctx, const char *what, const char *str, uint64_t *value);

/* snprintf that reports truncation: PS_OK, or PS_ERR_NAME_TOO_LONG if the
 * result did not fit (long paths must fail cleanly, never be cut). */
ps_status_t pst_snprintf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Partial copies (pst_partial.c): `pstripe cp` writes DST + PST_PARTIAL_TAG
 * + a suffix and renames it onto DST once it is complete and synced. */
#define PST_PARTIAL_TAG ".pstripe-partial-"
/* 1 if the last component of path is a partial copy's name. */
int pst_is_partial(const char *path);
/* A temporary name for dst whose metadata server is dst's (into tmp). */
ps_status_t pst_partial_name(pstripe_fs_t *fs, const char *dst, char *tmp, size_t len);
/* Remove the partial copies of dst left by earlier copies; reports failures. */
ps_status_t pst_partial_clean(pst_ctx_t *ctx, pstripe_fs_t *fs, const char *dst, int *nremoved);
/* Local: remove dst's stale partial copies, create a new one (name in tmp,
 * mode as dst's or as a plain create's); an fd, or -1 with errno. */
int pst_local_partial_open(const char *dst, mode_t mode, char *tmp, size_t len);

/* Directory of the running executable (/proc/self/exe), without a trailing
 * slash; "" if unknown. */
void pst_exe_dir(char *buf, size_t len);

/*
 * A program the tool runs: $env_var if set, else build_path relative to the
 * build tree (<exe dir>/../build_path, in buf) if it is executable there;
 * NULL if neither, for the caller's installed path.
 */
const char *pst_find_program(const char *env_var, const char *build_path, char *buf, size_t len);

/* Parse only global options and --help; for commands without options. */
int pst_parse_no_opts(pst_ctx_t *ctx, int argc, char **argv);

/* One call of a command that takes PATH arguments; reports its failure. */
typedef ps_status_t (*pst_path_fn_t)(pst_ctx_t *ctx, pstripe_fs_t *fs, const char *path, void *arg);

/* Connect and run fn on each PATH argument (argv[optind..]): the exit
 * status, 1 if a call failed (the others still run). */
int pst_for_each_path(pst_ctx_t *ctx, int argc, char **argv, pst_path_fn_t fn, void *arg);

/* Subcommands. */
int pst_cmd_ls(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_stat(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_rm(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_mv(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_truncate(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_df(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_gc(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_stats(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_config(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_cp(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_local(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_run(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_chmod(pst_ctx_t *ctx, int argc, char **argv);
int pst_cmd_chown(pst_ctx_t *ctx, int argc, char **argv);

#endif

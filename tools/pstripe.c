/*
 * pstripe.c: the `pstripe` command: entry point, command table, help, the
 * global options and the helpers every subcommand shares, and `pstripe run`.
 *
 * The subcommands live in pst_fs.c (ls, stat, rm, truncate, df, stats,
 * config), pst_cp.c (cp) and pst_local.c (local start/stop/status).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps_config.h"
#include "pst_tool.h"

#ifndef PST_PKGLIBEXECDIR
#define PST_PKGLIBEXECDIR "/usr/local/libexec/pstripe"
#endif

static const char pst_global_help[] =
    "Global options (before or after COMMAND):\n"
    "  -c, --config FILE     client config file; default $PSTRIPE_CONFIG, else\n"
    "                        ~/.config/pstripe/client.conf, else /etc/pstripe/client.conf\n"
    "      --servers LIST    servers to use instead of a config file (host:port,...)\n"
    "      --set NAME=VALUE  set a client tunable, e.g. --set timeout=5s (repeatable;\n"
    "                        `pstripe config` lists them)\n"
    "  -h, --help            show help\n";

static const pst_cmd_t pst_cmds[] = {
    {"ls", pst_cmd_ls, "[-l] [PREFIX]", "list files whose path starts with PREFIX",
     "List the files whose path starts with PREFIX (default: every file), in path\n"
     "order, one per line.\n"
     "\n"
     "  -l, --long    also show mode, owner, group, stripe count x stripe size, size\n"
     "                in bytes and modification time\n"},
    {"stat", pst_cmd_stat, "PATH...", "show size, layout, servers, file id, mode and times",
     "Show a file's size, allocated bytes, file id, mode, creation and modification\n"
     "times, and its layout: stripe size, stripe count and the servers (index and\n"
     "address) that hold its stripes, in stripe order.\n"},
    {"rm", pst_cmd_rm, "[-f] PATH...", "remove files",
     "Remove each PATH and its objects on every server. Every PATH is tried; the\n"
     "exit status is 1 if any of them failed. Removing takes ownership of the file\n"
     "or write permission on it (or root).\n"
     "\n"
     "  -f, --force   ignore missing files\n"},
    {"mv", pst_cmd_mv, "SRC DST", "rename a file",
     "Rename SRC to DST, replacing DST if it exists. The file never loses its\n"
     "name, even across a crash. When two servers hold the names' metadata, the\n"
     "file moves in three flushed steps and shows under both names for a moment\n"
     "(never for good; doc/design.md, \"Renaming\"). Renaming takes what removing\n"
     "SRC (and an existing DST) takes: ownership, write permission, or root.\n"
     "\n"
     "If such a rename is interrupted (a server down, the client killed), SRC\n"
     "stays \"being renamed\": removing, renaming or chmod-ing it fails until the\n"
     "servers' move_life (1 min) has passed, then the next of these (or `pstripe\n"
     "gc`) finishes or undoes the rename.\n"},
    {"chmod", pst_cmd_chmod, "MODE PATH...", "set the permission bits of files",
     "Set the permission bits of each PATH to MODE (octal, e.g. 640). Only the\n"
     "file's owner or root may.\n"},
    {"chown", pst_cmd_chown, "OWNER[:GROUP] PATH...", "set the owner or group of files",
     "Set the owner (root only) and/or the group of each PATH; :GROUP alone sets\n"
     "only the group. OWNER and GROUP are names of this machine's user and group\n"
     "databases or numbers. A file's owner may set the group to its own (primary)\n"
     "group; root may set any.\n"},
    {"cp", pst_cmd_cp, "[OPTIONS] SRC DST", "copy a file into or out of pstripe",
     "Copy SRC to DST. pstripe paths are written pstripe:/path; the other side is a\n"
     "local file ('-' is stdin or stdout). pstripe to pstripe works too. If DST is\n"
     "a local directory or ends with '/', SRC's base name is appended.\n"
     "\n"
     "The file is moved in chunks with several nonblocking pstripe reads or writes\n"
     "in flight while the local side is read or written, so the network, the\n"
     "servers' disks and the local file are busy at the same time.\n"
     "\n"
     "      --stripe-size SIZE   stripe size of a new pstripe file (e.g. 1m)\n"
     "      --stripe-count N     servers to stripe a new pstripe file over\n"
     "      --chunk-size SIZE    bytes per nonblocking request (default 8m)\n"
     "      --depth N            requests in flight (default 4)\n"
     "      --progress           show progress (default: on a terminal, for files\n"
     "                           of 64 MiB or more)\n"
     "      --no-progress        never show progress\n"},
    {"truncate", pst_cmd_truncate, "PATH SIZE", "set a file's size",
     "Set the size of PATH to SIZE bytes (suffixes k, m, g, t: powers of 1024),\n"
     "shrinking it or extending it with zeros. The file must exist.\n"},
    {"df", pst_cmd_df, "[-b]", "show the cluster's capacity and number of files",
     "Show the capacity of the cluster: total, used and available bytes summed\n"
     "over the file systems holding the servers' data directories (servers that\n"
     "share one are counted once), the use ratio and the number of files.\n"
     "\n"
     "  -b, --bytes   sizes in bytes instead of human-readable units\n"},
    {"gc", pst_cmd_gc, "[-n]", "remove orphaned objects (root)",
     "Find the objects on the servers whose file no path names any more, and\n"
     "remove them: an rm leaves them when its client dies between removing the\n"
     "name and the objects, or when a data server is down (the rm then says so).\n"
     "Each one is printed with its file id, server and the bytes it holds. Safe\n"
     "beside running programs: an object is removed only if, after every server\n"
     "listed its objects, no server's namespace named its file. Every server\n"
     "must answer, else nothing is removed. Root only (unless auth = none).\n"
     "Renames between two servers that a client left unfinished are settled\n"
     "first; one still under way (or interrupted less than the servers'\n"
     "move_life ago) is left to finish, with a warning. A file being renamed\n"
     "is never taken for an orphan, also while renames keep running.\n"
     "\n"
     "  -n, --dry-run   only print what would be removed (settles nothing)\n"},
    {"stats", pst_cmd_stats, "[SERVER]", "show the servers' counters",
     "Show the counters of every server, or of SERVER (an index in the server list\n"
     "or a host:port address): bytes and requests, regions received, disk I/Os and\n"
     "regions per disk I/O (how well regions were coalesced), read-modify-write\n"
     "reads, disk queue depth, and the histogram of request service times.\n"},
    {"config", pst_cmd_config, "[--defaults]", "print the client's effective tunables",
     "Print the client's tunables with their effective values (after the config\n"
     "file, PSTRIPE_* environment variables and --set) and one line of\n"
     "documentation each, in config-file syntax. This connects to the servers,\n"
     "as every command does.\n"
     "\n"
     "      --defaults    print the built-in defaults instead (no servers needed)\n"},
    {"local", pst_cmd_local, "start|stop|status --dir DIR [OPTIONS]",
     "start, stop or show a cluster of daemons on this machine",
     "Manage a cluster of pstripe-server daemons on 127.0.0.1 whose state lives in\n"
     "DIR: data in DIR/server<i>/, logs DIR/server<i>.log, pids DIR/server<i>.pid,\n"
     "and the client config DIR/client.conf. See `pstripe local start --help`,\n"
     "`pstripe local stop --help`, `pstripe local status --help`.\n"},
    {"run", pst_cmd_run, "[-v] -- CMD [ARGS...] | --check",
     "run an MPI command on the pstripe-enabled MPICH",
     "Run CMD with the pstripe-enabled MPICH in place of the system one (e.g.\n"
     "`pstripe run -- mpiexec -n 2 ./prog pstripe:/out`), through the pstripe-run\n"
     "script ($PSTRIPE_RUN, else the build tree's adio/pstripe-run, else the\n"
     "installed one). -c, --servers and --set are passed on to the program as\n"
     "PSTRIPE_CONFIG, PSTRIPE_SERVERS and PSTRIPE_<NAME> environment variables.\n"
     "The exit status is CMD's (125 if pstripe-run itself fails).\n"
     "\n"
     "  -v, --verbose   say which MPI library and mpiexec are used\n"
     "      --check     only check that the pstripe MPICH is there and is loaded\n"},
    {"help", NULL, "[COMMAND]", "show help for pstripe or a command", ""},
};

#define PST_NCMDS (sizeof(pst_cmds) / sizeof(pst_cmds[0]))

static const pst_cmd_t *pst_find_cmd(const char *name)
{
    for (size_t i = 0; i < PST_NCMDS; i++) {
        if (strcmp(pst_cmds[i].name, name) == 0) {
            return &pst_cmds[i];
        }
    }
    return NULL;
}

static void pst_print_main_help(FILE *out)
{
    fprintf(out, "Usage: pstripe [GLOBAL OPTIONS] COMMAND [ARGS...]\n"
                 "\n"
                 "pstripe is a striped parallel file system; this command manages its files\n"
                 "and local clusters of its servers.\n"
                 "\n"
                 "Commands:\n");
    for (size_t i = 0; i < PST_NCMDS; i++) {
        char left[64];
        snprintf(left, sizeof(left), "%s %s", pst_cmds[i].name, pst_cmds[i].synopsis);
        if (strlen(left) > 24) {
            fprintf(out, "  %s\n  %-24s  %s\n", left, "", pst_cmds[i].summary);
        } else {
            fprintf(out, "  %-24s  %s\n", left, pst_cmds[i].summary);
        }
    }
    fprintf(out,
            "\n%s"
            "      --version         show the version\n"
            "\n"
            "pstripe paths are absolute (/dir/file); `cp` writes them pstripe:/dir/file.\n"
            "Quick start:\n"
            "  pstripe local start --dir /tmp/pst && export PSTRIPE_CONFIG=/tmp/pst/client.conf\n"
            "  pstripe cp big.dat pstripe:/big.dat && pstripe stat /big.dat\n"
            "\n"
            "Exit status: 0 success, 1 error, 2 usage error.\n"
            "Run `pstripe help COMMAND` or `pstripe COMMAND --help` for a command's options.\n",
            pst_global_help);
}

static void pst_print_cmd_help(const pst_cmd_t *cmd, const char *name)
{
    printf("Usage: %s %s\n\n%s\n%s", name, cmd->synopsis, cmd->help, pst_global_help);
}

int pst_global_opt(pst_ctx_t *ctx, int opt, const char *arg)
{
    switch (opt) {
    case 'c':
        ctx->config = arg;
        return PST_CONTINUE;
    case PST_OPT_SERVERS:
        ctx->servers = arg;
        return PST_CONTINUE;
    case PST_OPT_SET:
        return pst_add_setting(ctx, arg, &ctx->settings, &ctx->nsettings);
    case 'h':
        if (ctx->cmd != NULL) {
            pst_print_cmd_help(ctx->cmd, ctx->name);
        } else {
            pst_print_main_help(stdout);
        }
        return PST_EXIT_OK;
    default: /* '?' or ':': getopt printed the reason */
        fprintf(stderr, "Try '%s --help'.\n", ctx->name);
        return PST_EXIT_USAGE;
    }
}

int pst_add_setting(pst_ctx_t *ctx, const char *arg, const char ***settings_p, int *n_p)
{
    const char *eq = strchr(arg, '=');
    const char **settings;

    if (eq == NULL || eq == arg) {
        return pst_usage_error(ctx, "--set needs NAME=VALUE, not '%s'", arg);
    }
    settings = realloc(*settings_p, (size_t)(*n_p + 2) * sizeof(*settings));
    if (settings == NULL) {
        pst_msg(ctx, "out of memory");
        return PST_EXIT_ERROR;
    }
    settings[(*n_p)++] = arg;
    settings[*n_p] = NULL;
    *settings_p = settings;
    return PST_CONTINUE;
}

/* "pstripe CMD: <message>" on stderr, without the newline. */
static void pst_vmsg(pst_ctx_t *ctx, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", ctx->name);
    vfprintf(stderr, fmt, ap);
}

int pst_usage_error(pst_ctx_t *ctx, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    pst_vmsg(ctx, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    if (ctx->cmd != NULL) {
        fprintf(stderr, "Usage: %s %s\n", ctx->name, ctx->cmd->synopsis);
    }
    fprintf(stderr, "Try '%s --help'.\n", ctx->name);
    return PST_EXIT_USAGE;
}

void pst_msg(pst_ctx_t *ctx, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    pst_vmsg(ctx, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
}

void pst_lib_error(pst_ctx_t *ctx, ps_status_t status, const char *fmt, ...)
{
    const char *reason = pstripe_last_error();
    va_list ap;

    if (reason == NULL || reason[0] == '\0') {
        reason = pstripe_strerror(status);
    }
    va_start(ap, fmt);
    pst_vmsg(ctx, fmt, ap);
    va_end(ap);
    fprintf(stderr, ": %s\n", reason);
}

/*
 * --set NAME=VALUE must hold while connecting (connect_timeout, timeout,
 * log_level) and override both the config file and the environment. For
 * --servers the library takes the settings directly. For a config file it
 * reads PSTRIPE_<NAME> after the file, so the settings go into the
 * environment first; once connected they are set again through
 * pstripe_set_option(), which rejects unknown names and bad values with a
 * clear message (the environment path would ignore a misspelled name).
 */
static ps_status_t pst_settings_to_env(pst_ctx_t *ctx)
{
    for (int i = 0; i < ctx->nsettings; i++) {
        const char *s = ctx->settings[i];
        const char *eq = strchr(s, '=');
        char var[128] = "PSTRIPE_", name[128];
        size_t n = strlen(var);
        ps_status_t status;

        for (const char *p = s; p < eq; p++) {
            if (n + 1 >= sizeof(var) || !(isalnum((unsigned char)*p) || *p == '_')) {
                pst_msg(ctx, "--set %s: '%.*s' is not a tunable name", s, (int)(eq - s), s);
                return PS_ERR_INVALID;
            }
            var[n++] = (char)toupper((unsigned char)*p);
        }
        var[n] = '\0';
        snprintf(name, sizeof(name), "%.*s", (int)(eq - s), s);
        status = pstripe_check_option(name, eq + 1);
        if (status != PS_OK) {
            pst_lib_error(ctx, status, "--set %s", s);
            return status;
        }
        if (setenv(var, eq + 1, 1) != 0) {
            status = ps_status_from_errno(errno);
            pst_msg(ctx, "setenv %s: %s", var, strerror(errno));
            return status;
        }
    }
    return PS_OK;
}

/* Connect to the --servers list, with the --set settings. */
static ps_status_t pst_connect_list(pst_ctx_t *ctx, pstripe_fs_t **fs_p)
{
    ps_status_t status = pstripe_connect_servers(ctx->servers, ctx->settings, fs_p);

    if (status == PS_ERR_INVALID) {
        pst_lib_error(ctx, status, "invalid configuration");
    } else if (status != PS_OK) {
        pst_lib_error(ctx, status, "cannot connect to %s", ctx->servers);
    }
    return status;
}

/* A failed connection's message names where the servers came from. */
static void pst_connect_error(pst_ctx_t *ctx, ps_status_t status)
{
    const char *env = getenv("PSTRIPE_CONFIG");

    for (int i = ctx->nsettings - 1; i >= 0; i--) { /* the last one is in effect */
        if (strncmp(ctx->settings[i], "servers=", 8) == 0) {
            pst_lib_error(ctx, status, "cannot connect to %s (--set servers)",
                          ctx->settings[i] + 8);
            return;
        }
    }
    pst_lib_error(ctx, status, "cannot connect to the servers of %s",
                  ctx->config       ? ctx->config
                  : (env && env[0]) ? env
                                    : "the default config");
}

/* The config file named by -c or $PSTRIPE_CONFIG, if any, is a readable
 * file (a directory would otherwise fail as "cannot connect"). */
static ps_status_t pst_check_config_file(pst_ctx_t *ctx)
{
    const char *env = getenv("PSTRIPE_CONFIG");
    const char *path = ctx->config ? ctx->config : (env && env[0]) ? env : NULL;
    struct stat st;

    if (path == NULL) {
        return PS_OK;
    }
    if (stat(path, &st) != 0 || access(path, R_OK) != 0) {
        ps_status_t status = ps_status_from_errno(errno);

        pst_msg(ctx, "config file %s%s: %s", path, ctx->config ? "" : " ($PSTRIPE_CONFIG)",
                strerror(errno));
        return status;
    }
    if (S_ISDIR(st.st_mode)) {
        pst_msg(ctx, "config file %s%s: is a directory, not a file", path,
                ctx->config ? "" : " ($PSTRIPE_CONFIG)");
        return PS_ERR_INVALID;
    }
    return PS_OK;
}

/* Connect as the config file (-c FILE, or the default search) says, with
 * the --set settings in the environment. */
static ps_status_t pst_connect_config(pst_ctx_t *ctx, pstripe_fs_t **fs_p)
{
    ps_status_t status;

    status = pst_settings_to_env(ctx);
    if (status == PS_OK) {
        status = pst_check_config_file(ctx);
    }
    if (status != PS_OK) {
        return status;
    }
    status = pstripe_connect(ctx->config, fs_p);
    if (status == PS_ERR_NOT_CONFIGURED) {
        pst_lib_error(ctx, status, "no pstripe servers configured");
        fprintf(
            stderr,
            "Give -c FILE or --servers HOST:PORT,..., or export PSTRIPE_CONFIG=FILE;\n"
            "`pstripe local start --dir DIR` starts a local cluster and writes DIR/client.conf.\n");
    } else if (status == PS_ERR_INVALID) {
        pst_lib_error(ctx, status, "invalid configuration");
    } else if (status != PS_OK) {
        pst_connect_error(ctx, status);
    }
    return status;
}

/* The --set settings again, through pstripe_set_option(), which rejects
 * unknown names and bad values. */
static ps_status_t pst_apply_settings(pst_ctx_t *ctx, pstripe_fs_t *fs)
{
    ps_status_t status;

    for (int i = 0; i < ctx->nsettings; i++) {
        const char *s = ctx->settings[i];
        const char *eq = strchr(s, '=');
        char name[128];

        snprintf(name, sizeof(name), "%.*s", (int)(eq - s), s);
        if (strcmp(name, "servers") == 0) {
            continue; /* used by the connection itself */
        }
        status = pstripe_set_option(fs, name, eq + 1);
        if (status != PS_OK) {
            pst_lib_error(ctx, status, "--set %s", s);
            return status;
        }
    }
    return PS_OK;
}

ps_status_t pst_connect(pst_ctx_t *ctx, pstripe_fs_t **fs_p)
{
    pstripe_fs_t *fs;
    ps_status_t status;

    if (ctx->servers != NULL) {
        return pst_connect_list(ctx, fs_p);
    }
    status = pst_connect_config(ctx, &fs);
    if (status != PS_OK) {
        return status;
    }
    status = pst_apply_settings(ctx, fs);
    if (status != PS_OK) {
        pstripe_disconnect(fs);
        return status;
    }
    *fs_p = fs;
    return PS_OK;
}

const char *pst_fs_path(const char *arg)
{
    size_t n = strlen(PST_PATH_PREFIX);
    return (strncmp(arg, PST_PATH_PREFIX, n) == 0) ? arg + n : arg;
}

void pst_human_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;

    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) {
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    } else {
        snprintf(buf, len, "%.1f %s", v, units[u]);
    }
}

ps_status_t pst_parse_size_arg(pst_ctx_t *ctx, const char *what, const char *str, uint64_t *value)
{
    ps_status_t status = ps_parse_size(str, value);

    if (status != PS_OK) {
        pst_msg(ctx, "%s: '%s' is not a size (e.g. 4096, 512k, 4m, 1g)", what, str);
    }
    return status;
}

ps_status_t pst_snprintf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return (n < 0 || (size_t)n >= len) ? PS_ERR_NAME_TOO_LONG : PS_OK;
}

void pst_exe_dir(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    char *slash;

    if (n <= 0) {
        buf[0] = '\0';
        return;
    }
    buf[n] = '\0';
    slash = strrchr(buf, '/');
    if (slash != NULL) {
        *slash = '\0';
    } else {
        buf[0] = '\0';
    }
}

const char *pst_find_program(const char *env_var, const char *build_path, char *buf, size_t len)
{
    const char *env = getenv(env_var);
    char dir[PATH_MAX];

    if (env != NULL && env[0] != '\0') {
        return env;
    }
    pst_exe_dir(dir, sizeof(dir));
    if (dir[0] != '\0' && pst_snprintf(buf, len, "%s/../%s", dir, build_path) == PS_OK &&
        access(buf, X_OK) == 0) {
        return buf;
    }
    return NULL;
}

/* --- pstripe run ------------------------------------------------------------- */

/* The pstripe-run script: $PSTRIPE_RUN, else the build tree's
 * <exe dir>/../adio/pstripe-run, else the installed one. */
static const char *pst_run_script(char *buf, size_t len)
{
    const char *found = pst_find_program("PSTRIPE_RUN", "adio/pstripe-run", buf, len);
    return found ? found : PST_PKGLIBEXECDIR "/pstripe-run";
}

int pst_cmd_run(pst_ctx_t *ctx, int argc, char **argv)
{
    static const struct option opts[] = {{"verbose", no_argument, NULL, 'v'},
                                         {"check", no_argument, NULL, 'C'},
                                         PST_GLOBAL_LONGOPTS,
                                         {NULL, 0, NULL, 0}};
    char buf[4096], abs_config[4096];
    const char *script;
    char **args;
    int c, ret, verbose = 0, check = 0, n = 0;

    /* '+': stop at the first non-option, so CMD's own options stay CMD's. */
    while ((c = getopt_long(argc, argv, "+v" PST_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
        if (c == 'v') {
            verbose = 1;
        } else if (c == 'C') {
            check = 1;
        } else if ((ret = pst_global_opt(ctx, c, optarg)) != PST_CONTINUE) {
            return ret;
        }
    }
    if (optind >= argc && !check) {
        return pst_usage_error(ctx, "no command to run");
    }

    /* Hand the connection options to the program through the environment,
     * where the client library inside the ROMIO driver looks for them. */
    if (ctx->config != NULL) {
        if (realpath(ctx->config, abs_config) == NULL) {
            pst_msg(ctx, "config file %s: %s", ctx->config, strerror(errno));
            return PST_EXIT_ERROR;
        }
        setenv("PSTRIPE_CONFIG", abs_config, 1);
    }
    if (ctx->servers != NULL) {
        setenv("PSTRIPE_SERVERS", ctx->servers, 1);
    }
    if (pst_settings_to_env(ctx) != PS_OK) {
        return PST_EXIT_ERROR;
    }

    /* pstripe-run [-v] [--check | -- CMD...] */
    args = calloc((size_t)(argc - optind + 4), sizeof(*args));
    if (args == NULL) {
        pst_msg(ctx, "out of memory");
        return PST_EXIT_ERROR;
    }
    script = pst_run_script(buf, sizeof(buf));
    args[n++] = (char *)script;
    if (verbose) {
        args[n++] = "-v";
    }
    if (check) {
        args[n++] = "--check";
    } else {
        args[n++] = "--";
        for (int i = optind; i < argc; i++) {
            args[n++] = argv[i];
        }
    }
    args[n] = NULL;
    execv(script, args);
    pst_msg(ctx, "cannot run %s: %s (set PSTRIPE_RUN to the pstripe-run script)", script,
            strerror(errno));
    free(args);
    return PST_EXIT_ERROR;
}

/* --- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        PST_GLOBAL_LONGOPTS, {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}};
    pst_ctx_t ctx = {0};
    const pst_cmd_t *cmd;
    int c, ret;

    snprintf(ctx.name, sizeof(ctx.name), "pstripe");
    /* '+': global options end at the subcommand's name. */
    while ((c = getopt_long(argc, argv, "+" PST_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
        if (c == 'V') {
            printf("pstripe %s\n", PACKAGE_VERSION);
            return PST_EXIT_OK;
        }
        if ((ret = pst_global_opt(&ctx, c, optarg)) != PST_CONTINUE) {
            return ret;
        }
    }
    if (optind >= argc) {
        pst_print_main_help(stderr);
        return PST_EXIT_USAGE;
    }

    cmd = pst_find_cmd(argv[optind]);
    if (cmd == NULL) {
        fprintf(stderr, "pstripe: unknown command '%s'\nRun 'pstripe help' for the list.\n",
                argv[optind]);
        return PST_EXIT_USAGE;
    }
    if (cmd->fn == NULL) { /* help [COMMAND] */
        if (optind + 1 >= argc) {
            pst_print_main_help(stdout);
            return PST_EXIT_OK;
        }
        const pst_cmd_t *about = pst_find_cmd(argv[optind + 1]);
        if (about == NULL || about->fn == NULL) {
            fprintf(stderr, "pstripe help: unknown command '%s'\n", argv[optind + 1]);
            return PST_EXIT_USAGE;
        }
        snprintf(ctx.name, sizeof(ctx.name), "pstripe %s", about->name);
        pst_print_cmd_help(about, ctx.name);
        return PST_EXIT_OK;
    }

    ctx.cmd = cmd;
    snprintf(ctx.name, sizeof(ctx.name), "pstripe %s", cmd->name);
    argv[optind] = ctx.name; /* getopt's messages then name the subcommand */
    argc -= optind;
    argv += optind;
    optind = 0; /* glibc: start a fresh scan */
    ret = cmd->fn(&ctx, argc, argv);
    free(ctx.settings);
    return ret;
}

/*
 * psc_fs.c: connecting (config, servers, progress thread, HELLO to every
 * server), the connection's tunables, and the argument checks the API
 * files share.
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ps_log.h"
#include "ps_net.h"
#include "ps_status.h"
#include "psc_call.h"
#include "psc_conn.h"
#include "psc_fs.h"
#include "psc_op.h"
#include "psc_wait.h"
#include "psc_progress.h"

ps_status_t psc_check_fs(pstripe_fs_t *fs)
{
    if (fs == NULL) {
        return psc_error(PS_ERR_INVALID, "no file system (NULL)");
    }
    return PS_OK;
}

ps_status_t psc_normalize(const char *path, char *out, size_t *len)
{
    ps_status_t status;
    const char *why = NULL;

    if (path == NULL) {
        return psc_error(PS_ERR_INVALID, "path is NULL");
    }
    status = ps_path_normalize(path, out, PS_PATH_MAX + 1);
    if (status == PS_ERR_INVALID) { /* not absolute, or the root */
        why = path[0] != '/' ? "pstripe paths start with '/'" : "it names the root, no file";
    } else if (status == PS_OK) {
        status = ps_proto_check_path(out, strlen(out));
    }
    if (status == PS_ERR_INVALID) {
        status = PS_ERR_BAD_NAME;
    }
    if (status != PS_OK) {
        return psc_error(status, "invalid path '%.200s': %s", path,
                         why != NULL ? why : ps_status_string(status));
    }
    *len = strlen(out);
    return PS_OK;
}

/* Parse "host:port" or "[v6addr]:port" and resolve it. */
static ps_status_t psc_server_resolve(psc_server_t *srv, const char *spec)
{
    char host[256], port[16];
    struct addrinfo hints, *res;
    const char *colon;
    size_t hlen;
    int gai_status;

    if (spec[0] == '[') {
        const char *end = strchr(spec, ']');

        if (end == NULL || end[1] != ':') {
            return psc_error(PS_ERR_INVALID, "server '%s': expected [address]:port", spec);
        }
        hlen = (size_t)(end - spec - 1);
        colon = end + 1;
        spec++;
    } else {
        colon = strrchr(spec, ':');
        if (colon == NULL) {
            return psc_error(PS_ERR_INVALID, "server '%s': expected host:port", spec);
        }
        hlen = (size_t)(colon - spec);
    }
    if (hlen == 0 || hlen >= sizeof(host) || strlen(colon + 1) == 0 ||
        strlen(colon + 1) >= sizeof(port) || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
        atoi(colon + 1) <= 0 || atoi(colon + 1) > 65535) {
        return psc_error(PS_ERR_INVALID, "server '%s': expected host:port", srv->addr);
    }
    memcpy(host, spec, hlen);
    host[hlen] = '\0';
    snprintf(port, sizeof(port), "%s", colon + 1);

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    gai_status = getaddrinfo(host, port, &hints, &res);
    if (gai_status != 0) {
        return psc_error(PS_ERR_CONN, "server %s: cannot resolve '%s': %s", srv->addr, host,
                         gai_strerror(gai_status));
    }
    memcpy(&srv->sa, res->ai_addr, res->ai_addrlen);
    srv->salen = res->ai_addrlen;
    freeaddrinfo(res);
    return PS_OK;
}

static ps_status_t psc_servers_parse(pstripe_fs_t *fs, const char *list)
{
    char *copy, *tok, *save = NULL;
    uint32_t n = 0, cap = 0;
    ps_status_t status = PS_OK;

    if (list == NULL || list[0] == '\0') {
        return psc_error(PS_ERR_NOT_CONFIGURED, "no servers configured (key 'servers')");
    }
    copy = strdup(list);
    if (copy == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    for (tok = strtok_r(copy, ", \t", &save); tok != NULL; tok = strtok_r(NULL, ", \t", &save)) {
        psc_server_t *srv;

        if (n == PS_STRIPE_COUNT_MAX) {
            status = psc_error(PS_ERR_INVALID, "more than %u servers", PS_STRIPE_COUNT_MAX);
            goto out;
        }
        if (n == cap) {
            psc_server_t *s;

            cap = cap ? cap * 2 : 8;
            s = realloc(fs->servers, cap * sizeof(*s));
            if (s == NULL) {
                status = psc_error(PS_ERR_NO_MEMORY, "no memory");
                goto out;
            }
            fs->servers = s;
        }
        srv = &fs->servers[n];
        memset(srv, 0, sizeof(*srv));
        srv->fs = fs;
        srv->index = n;
        srv->state = PSC_SRV_DISCONNECTED;
        ucs_list_head_init(&srv->waitq);
        srv->addr = strdup(tok);
        fs->nservers = ++n;
        if (srv->addr == NULL) {
            status = psc_error(PS_ERR_NO_MEMORY, "no memory");
            goto out;
        }
        status = psc_server_resolve(srv, tok);
        if (status != PS_OK) {
            goto out;
        }
        for (uint32_t i = 0; i + 1 < n; i++) {
            if (fs->servers[i].salen == srv->salen &&
                memcmp(&fs->servers[i].sa, &srv->sa, srv->salen) == 0) {
                status = psc_error(PS_ERR_INVALID,
                                   "servers: %s (server %u) and %s (server %u) are the same "
                                   "server: each must be listed once",
                                   fs->servers[i].addr, i, srv->addr, n - 1);
                goto out;
            }
        }
        srv->shm_maybe = fs->cfg.shm && ps_addr_is_local((const struct sockaddr *)&srv->sa);
    }
    if (n == 0) {
        status = psc_error(PS_ERR_NOT_CONFIGURED, "no servers configured (key 'servers')");
    }
out:
    free(copy);
    return status;
}

static void psc_fs_free(pstripe_fs_t *fs)
{
    for (uint32_t i = 0; i < fs->nservers; i++) {
        free(fs->servers[i].addr);
    }
    free(fs->servers);
    while (fs->npiece_cache > 0) {
        free(fs->piece_cache[--fs->npiece_cache].p);
    }
    ps_config_release(psc_config_table, &fs->cfg);
    pthread_cond_destroy(&fs->cond);
    pthread_mutex_destroy(&fs->lock);
    free(fs);
}

/* Publish the tunables the progress thread reads (atomics). */
static void psc_fs_apply_locked(pstripe_fs_t *fs)
{
    /* idle staging buffers kept: a full pipeline of batches to every server */
    const psc_io_opts_t *io = &fs->cfg.io;
    uint64_t batch = io->buffer_size + (uint64_t)io->max_regions * sizeof(ps_region_t);
    uint64_t limit = batch * (uint64_t)io->buffer_count * (fs->nservers ? fs->nservers : 1);

    __atomic_store_n(&fs->bounce_limit, limit > (64ull << 20) ? limit : (64ull << 20),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&fs->timeout_ns, (uint64_t)(fs->cfg.timeout * 1e9), __ATOMIC_RELAXED);
    __atomic_store_n(&fs->connect_timeout_ns, (uint64_t)(fs->cfg.connect_timeout * 1e9),
                     __ATOMIC_RELAXED);
}

/*
 * After the first connection round failed with status: PS_OK if at least
 * one server answered and every other failure means a server could not be
 * reached (it is retried on use), else status (its message is the error).
 */
static ps_status_t psc_fs_some_reached(pstripe_fs_t *fs, const psc_op_t *ops, ps_status_t status)
{
    uint32_t reached = 0;

    for (uint32_t i = 0; i < fs->nservers; i++) {
        if (ops[i].status == PS_OK) {
            reached++;
        } else if (ops[i].status != PS_ERR_CONN && ops[i].status != PS_ERR_TIMEOUT &&
                   ops[i].status != PS_ERR_SHUTDOWN) {
            return psc_error(ops[i].status, "%s", ops[i].msg);
        }
    }
    if (reached == 0) {
        return status;
    }
    for (uint32_t i = 0; i < fs->nservers; i++) {
        if (ops[i].status != PS_OK) {
            ps_info("server %s is not reachable now (%s); files that do not need it work",
                    fs->servers[i].addr, ops[i].msg);
        }
    }
    return PS_OK;
}

/* Connect to every server at once (kind PSC_CONNECT_SERVER: worker 0,
 * HELLO and AUTH; PSC_CONNECT_WORKERS: every worker's endpoint too, of the
 * servers with at most max_workers). A server that cannot be reached now is
 * tried again when an op needs it: the files that do not touch it keep
 * working. */
static ps_status_t psc_fs_connect_all(pstripe_fs_t *fs, int kind, uint32_t max_workers)
{
    psc_call_t call;
    psc_op_t *ops;
    ps_status_t status;

    ops = calloc(fs->nservers, sizeof(*ops));
    if (ops == NULL) {
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    psc_call_init(&call);
    for (uint32_t i = 0; i < fs->nservers; i++) {
        psc_op_init(&ops[i], i, 0, NULL, 0);
        ops[i].connect_only = kind;
        ops[i].connect_max = max_workers;
        psc_op_post(fs, &ops[i], &call);
    }
    status = psc_call_wait(fs, &call);
    if (status != PS_OK) {
        status = psc_fs_some_reached(fs, ops, status);
    }
    free(ops);
    return status;
}

/* Takes ownership of cfg (released on failure too). */
static ps_status_t psc_fs_create(psc_config_t *cfg, pstripe_fs_t **fs_p)
{
    pstripe_fs_t *fs;
    ps_status_t status;

    fs = calloc(1, sizeof(*fs));
    if (fs == NULL) {
        ps_config_release(psc_config_table, cfg);
        return psc_error(PS_ERR_NO_MEMORY, "no memory");
    }
    pthread_mutex_init(&fs->lock, NULL);
    pthread_cond_init(&fs->cond, NULL);
    ucs_list_head_init(&fs->postq);
    fs->cfg = *cfg;
    fs->wake_fd = -1;
    fs->owner_wake_fd = -1;
    fs->epoll_fd = -1;
    ps_log_set_level((ps_log_level_t)fs->cfg.log_level);
    psc_fs_apply_locked(fs);

    status = psc_servers_parse(fs, fs->cfg.servers);
    if (status != PS_OK) {
        goto err_free;
    }
    psc_fs_apply_locked(fs); /* again, now that nservers is known */
    if (fs->cfg.stripe_count > (int64_t)fs->nservers) {
        status = psc_error(PS_ERR_INVALID, "stripe_count %lld exceeds the %u servers",
                           (long long)fs->cfg.stripe_count, fs->nservers);
        goto err_free;
    }
    status = psc_progress_start(fs);
    if (status != PS_OK) {
        goto err_free;
    }

    status = psc_fs_connect_all(fs, PSC_CONNECT_SERVER, 0);
    if (status != PS_OK) {
        goto err_stop;
    }
    *fs_p = fs;
    return PS_OK;

err_stop:
    psc_progress_stop(fs);
err_free:
    psc_fs_free(fs);
    return status;
}

ps_status_t pstripe_connect_workers(pstripe_fs_t *fs, uint32_t max_workers)
{
    return psc_fs_connect_all(fs, PSC_CONNECT_WORKERS, max_workers);
}

ps_status_t pstripe_connect(const char *config_path, pstripe_fs_t **fs_p)
{
    char home_path[4096];
    const char *env = getenv("PSTRIPE_CONFIG");
    const char *home = getenv("HOME");
    psc_config_t cfg;
    int found = 0;
    ps_status_t status;

    if (fs_p == NULL) {
        return psc_error(PS_ERR_INVALID, "fs_p is NULL");
    }
    if (config_path != NULL) {
        status = psc_config_load(&cfg, config_path, 1, &found);
    } else if (env != NULL && env[0] != '\0') {
        status = psc_config_load(&cfg, env, 1, &found);
    } else {
        status = PS_ERR_NO_ENTRY;
        if (home != NULL && home[0] != '\0') {
            snprintf(home_path, sizeof(home_path), "%s/.config/pstripe/client.conf", home);
            status = psc_config_load(&cfg, home_path, 0, &found);
            if (status == PS_OK && !found) {
                ps_config_release(psc_config_table, &cfg);
            }
        }
        if (status != PS_OK || !found) {
            if (status != PS_OK && status != PS_ERR_NO_ENTRY) {
                return status;
            }
            status = psc_config_load(&cfg, "/etc/pstripe/client.conf", 0, &found);
        }
    }
    if (status != PS_OK) {
        return status;
    }
    if (cfg.servers == NULL || cfg.servers[0] == '\0') {
        ps_config_release(psc_config_table, &cfg);
        if (!found) {
            return psc_error(PS_ERR_NOT_CONFIGURED,
                             "no client config: set PSTRIPE_CONFIG or create "
                             "~/.config/pstripe/client.conf or /etc/pstripe/client.conf");
        }
        return psc_error(PS_ERR_NOT_CONFIGURED, "no servers in the client config");
    }
    return psc_fs_create(&cfg, fs_p);
}

ps_status_t pstripe_connect_servers(const char *servers, const char *const *settings,
                                    pstripe_fs_t **fs_p)
{
    char err[PSC_MSG_MAX];
    psc_config_t cfg;
    int found;
    ps_status_t status;

    if (fs_p == NULL) {
        return psc_error(PS_ERR_INVALID, "fs_p is NULL");
    }
    status = psc_config_load(&cfg, NULL, 0, &found);
    if (status != PS_OK) {
        return status;
    }
    if (servers != NULL) {
        status = ps_config_set(psc_config_table, &cfg, "servers", servers, err, sizeof(err));
        if (status != PS_OK) {
            status = psc_error(status, "%s", err);
            goto err_release;
        }
    }
    for (size_t i = 0; settings != NULL && settings[i] != NULL; i++) {
        const char *eq = strchr(settings[i], '=');
        char name[64];

        if (eq == NULL || (size_t)(eq - settings[i]) >= sizeof(name)) {
            status = psc_error(PS_ERR_INVALID, "setting '%s': expected name=value", settings[i]);
            goto err_release;
        }
        memcpy(name, settings[i], (size_t)(eq - settings[i]));
        name[eq - settings[i]] = '\0';
        status = ps_config_set(psc_config_table, &cfg, name, eq + 1, err, sizeof(err));
        if (status != PS_OK) {
            status = psc_error(status, "%s", err);
            goto err_release;
        }
    }
    return psc_fs_create(&cfg, fs_p);

err_release:
    ps_config_release(psc_config_table, &cfg);
    return status;
}

void pstripe_disconnect(pstripe_fs_t *fs)
{
    if (fs == NULL) {
        return;
    }
    psc_progress_stop(fs);
    psc_fs_free(fs);
}

ps_status_t pstripe_set_option(pstripe_fs_t *fs, const char *name, const char *value)
{
    char err[PSC_MSG_MAX];
    int64_t old_count;
    ps_status_t status;

    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    if (name == NULL || value == NULL) {
        return psc_error(PS_ERR_INVALID, "option name or value is NULL");
    }
    if (strcmp(name, "servers") == 0) {
        return psc_error(PS_ERR_INVALID, "servers cannot change on a connected file system");
    }
    pthread_mutex_lock(&fs->lock);
    old_count = fs->cfg.stripe_count;
    status = ps_config_set(psc_config_table, &fs->cfg, name, value, err, sizeof(err));
    if (status == PS_OK && fs->cfg.stripe_count > (int64_t)fs->nservers) {
        snprintf(err, sizeof(err), "stripe_count %lld exceeds the %u servers",
                 (long long)fs->cfg.stripe_count, fs->nservers);
        fs->cfg.stripe_count = old_count;
        status = PS_ERR_INVALID;
    }
    if (status == PS_OK) {
        psc_fs_apply_locked(fs);
        if (strcmp(name, "log_level") == 0) {
            ps_log_set_level((ps_log_level_t)fs->cfg.log_level);
        }
    }
    pthread_mutex_unlock(&fs->lock);
    if (status != PS_OK) {
        return psc_error(status, "%s", err);
    }
    return PS_OK;
}

/* Format the field name of table, a member of obj, into buf. */
static ps_status_t psc_option_format(const ps_config_field_t *table, const void *obj,
                                     const char *name, char *buf, size_t len)
{
    const ps_config_field_t *field = ps_config_find(table, name);
    ps_status_t status;

    if (field == NULL) {
        return psc_error(PS_ERR_INVALID, "unknown option '%s'", name);
    }
    status = ps_config_format(field, obj, buf, len);
    if (status != PS_OK) {
        return psc_error(status, "cannot format option '%s'", name);
    }
    return PS_OK;
}

ps_status_t pstripe_get_option(pstripe_fs_t *fs, const char *name, char *buf, size_t len)
{
    ps_status_t status;

    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    if (name == NULL || buf == NULL) {
        return psc_error(PS_ERR_INVALID, "option name or buffer is NULL");
    }
    pthread_mutex_lock(&fs->lock);
    status = psc_option_format(psc_config_table, &fs->cfg, name, buf, len);
    pthread_mutex_unlock(&fs->lock);
    return status;
}

ps_status_t pstripe_parse_size(const char *str, uint64_t *value)
{
    return ps_parse_size(str, value);
}

/* The per-file tunables, for messages. */
#define PSC_FILE_OPTIONS "buffer_size, buffer_count, max_regions, bounce_threshold"

ps_status_t pstripe_file_set_option(pstripe_file_t *file, const char *name, const char *value)
{
    char err[PSC_MSG_MAX];
    ps_status_t status;

    if (file == NULL || name == NULL || value == NULL) {
        return psc_error(PS_ERR_INVALID, "file, option name or value is NULL");
    }
    if (ps_config_find(psc_io_config_table, name) == NULL) {
        return psc_error(PS_ERR_INVALID, "'%s' is not a per-file option (" PSC_FILE_OPTIONS ")",
                         name);
    }
    status = ps_config_set(psc_io_config_table, &file->opts, name, value, err, sizeof(err));
    if (status != PS_OK) {
        return psc_error(status, "%s", err);
    }
    return PS_OK;
}

ps_status_t pstripe_file_get_option(pstripe_file_t *file, const char *name, char *buf, size_t len)
{
    if (file == NULL || name == NULL || buf == NULL) {
        return psc_error(PS_ERR_INVALID, "file, option name or buffer is NULL");
    }
    if (ps_config_find(psc_io_config_table, name) == NULL) {
        return psc_error(PS_ERR_INVALID, "'%s' is not a per-file option (" PSC_FILE_OPTIONS ")",
                         name);
    }
    return psc_option_format(psc_io_config_table, &file->opts, name, buf, len);
}

/* A new file's tunables: the connection's current ones. */
void psc_fs_file_opts(pstripe_fs_t *fs, psc_io_opts_t *opts)
{
    pthread_mutex_lock(&fs->lock);
    *opts = fs->cfg.io;
    pthread_mutex_unlock(&fs->lock);
}

void pstripe_print_config(pstripe_fs_t *fs, void *stdio_file)
{
    FILE *out = stdio_file != NULL ? stdio_file : stdout;
    psc_config_t dfl;

    if (fs == NULL) {
        /* No connection: the defaults, for `pstripe config`. */
        memset(&dfl, 0, sizeof(dfl));
        if (ps_config_set_defaults(psc_config_table, &dfl) == PS_OK) {
            ps_config_print(psc_config_table, &dfl, "client", out);
        }
        ps_config_release(psc_config_table, &dfl);
        return;
    }
    pthread_mutex_lock(&fs->lock);
    ps_config_print(psc_config_table, &fs->cfg, "client", out);
    pthread_mutex_unlock(&fs->lock);
}

int pstripe_num_servers(pstripe_fs_t *fs)
{
    if (psc_check_fs(fs) != PS_OK) {
        return PS_ERR_INVALID;
    }
    return (int)fs->nservers;
}

const char *pstripe_server_address(pstripe_fs_t *fs, int i)
{
    if (fs == NULL || i < 0 || (uint32_t)i >= fs->nservers) {
        psc_set_error("no server %d", i);
        return NULL;
    }
    return fs->servers[i].addr;
}

int pstripe_server_is_local(pstripe_fs_t *fs, int i)
{
    if (fs == NULL || i < 0 || (uint32_t)i >= fs->nservers) {
        psc_set_error("no server %d", i);
        return 0;
    }
    return ps_addr_is_local((const struct sockaddr *)&fs->servers[i].sa);
}

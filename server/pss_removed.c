/*
 * pss_removed.c: the file ids whose objects were removed (OBJ_REMOVE: an
 * unlink, or the file a rename replaced), kept for cap_life.
 *
 * A client that had the file open before it was removed still holds a
 * capability for it (valid up to cap_life after it was issued). Without a
 * record, its next write would create the object again, on a file no name
 * leads to (its space never freed), and its next read would return zeros as
 * a hole. So a removal leaves an empty file DIR/removed/<file id> whose
 * modification time is the removal's, and opening a missing object for a
 * file id with such a record younger than cap_life fails with
 * PS_ERR_STALE (an OBJ_SYNC or OBJ_FLUSH of it too; an OBJ_STAT finds no object). The
 * record is written before the object is unlinked, so a removal that
 * cannot record itself fails whole, except for want of room: a full disk
 * must still be freed (pss_obj_remove). Past cap_life every capability issued
 * before the removal has expired (the metadata owner issues none for a
 * removed file), so the record is pruned (after cap_life and a slack for
 * clock skew, below): by the main thread every cap_life / 2 (at most 10
 * minutes) and at start-up. Records are files, so they outlive a restart
 * (not a machine crash right after the removal: they are not fsynced);
 * with auth = none (no capabilities) they guard cap_life, no more.
 *
 * Workers create and check records with single system calls on the
 * directory (a record's object is owned by one worker, which serialises
 * them); the prune removes only expired records, so it needs no lock. (A
 * second removal of the same id refreshing its record between the prune's
 * look and its unlink loses the record: a file id is removed twice only
 * when an unlink on a full disk freed the data first, see pstripe_unlink,
 * or with auth = none.)
 */
#include "pss_removed.h"

#include "ps_log.h"
#include "ps_time.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void pss_removed_name(uint64_t file_id, char *buf, size_t len)
{
    snprintf(buf, len, "%016" PRIx64, file_id);
}

/* cap_life, and as much again up to a minute: capabilities carry the
 * metadata owner's wall clock, the records this server's (and a file
 * system's coarse timestamps), so a small skew must not let one outlive
 * the record. */
static uint64_t pss_removed_life_ns(const pss_server_t *s)
{
    double slack = s->cfg.cap_life < 60 ? s->cfg.cap_life : 60;

    return (uint64_t)((s->cfg.cap_life + slack) * 1e9);
}

/* Is a record of time mtime past its life at wall time now_ns? */
static int pss_removed_expired(const pss_server_t *s, const struct stat *st, uint64_t now_ns)
{
    uint64_t at = (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;

    return at + pss_removed_life_ns(s) <= now_ns;
}

ps_status_t pss_removed_init(pss_server_t *s)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/removed", s->data_dir);
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        ps_error("mkdir %s: %m", path);
        return ps_status_from_errno(errno);
    }
    s->removed_dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->removed_dir_fd < 0) {
        ps_error("open %s: %m", path);
        return ps_status_from_errno(errno);
    }
    pss_removed_prune(s);
    return PS_OK;
}

void pss_removed_close(pss_server_t *s)
{
    if (s->removed_dir_fd >= 0) {
        close(s->removed_dir_fd);
        s->removed_dir_fd = -1;
    }
}

ps_status_t pss_removed_mark(pss_server_t *s, uint64_t file_id)
{
    char name[32];
    int fd;

    pss_removed_name(file_id, name, sizeof(name));
    fd = openat(s->removed_dir_fd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || futimens(fd, NULL) != 0) { /* a second removal starts its life again */
        ps_error("record the removal of %s/removed/%s: %m", s->data_dir, name);
        ps_status_t status = ps_status_from_errno(errno);
        if (fd >= 0) {
            close(fd);
        }
        return status;
    }
    close(fd);
    return PS_OK;
}

ps_status_t pss_removed_check(pss_server_t *s, uint64_t file_id)
{
    char name[32];
    struct stat st;

    pss_removed_name(file_id, name, sizeof(name));
    if (fstatat(s->removed_dir_fd, name, &st, 0) != 0) {
        if (errno == ENOENT) {
            return PS_OK;
        }
        ps_error("stat %s/removed/%s: %m", s->data_dir, name);
        return ps_status_from_errno(errno);
    }
    return pss_removed_expired(s, &st, ps_wall_ns()) ? PS_OK : PS_ERR_STALE;
}

void pss_removed_prune(pss_server_t *s)
{
    int fd = openat(s->removed_dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    uint64_t now = ps_wall_ns();
    unsigned kept = 0, pruned = 0;
    struct dirent *de;

    if (dir == NULL) {
        ps_warn("read %s/removed: %m", s->data_dir);
        if (fd >= 0) {
            close(fd);
        }
        return;
    }
    while ((de = readdir(dir)) != NULL) {
        struct stat st;
        if (de->d_name[0] == '.' || fstatat(fd, de->d_name, &st, 0) != 0) {
            continue;
        }
        if (!pss_removed_expired(s, &st, now)) {
            kept++;
        } else if (unlinkat(fd, de->d_name, 0) == 0) {
            pruned++;
        }
    }
    closedir(dir);
    if (pruned > 0) {
        ps_debug("%s/removed: %u records past cap_life pruned, %u kept", s->data_dir, pruned, kept);
    }
}

unsigned pss_removed_prune_interval(const pss_server_t *s)
{
    double half = s->cfg.cap_life / 2;

    return half < 1 ? 1 : half > 600 ? 600 : (unsigned)half;
}

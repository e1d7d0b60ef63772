/*
 * pss_probe.c: at start-up, find how objects can be written: with O_DIRECT
 * or not, with what alignment, in what block size, and whether the file
 * system keeps the size attribute.
 *
 * O_DIRECT needs every disk I/O's file offset, length and buffer aligned to
 * what the file system asks for; we do not guess it but ask (statx
 * STATX_DIOALIGN, else the device's logical block size with BLKSSZGET, else
 * by trying reads of growing alignment). Disk I/O is then planned in whole
 * file-system blocks when those are larger (4 KiB on ext4 against a
 * 512-byte O_DIRECT minimum): ext4 serializes a direct write that is not
 * block-aligned against every other direct I/O of the file and runs it
 * inside io_submit. Two processes interleaving 512-byte regions wrote
 * 73-222 MiB/s with 512-byte planning and 251-339 MiB/s with 4 KiB planning
 * (median call 5.9-24 ms against 3.2-4.2 ms).
 *
 * It also finds the largest file the file system holds, which can be less
 * than the largest object (ext4 with 4 KiB blocks: 16 TiB - 4 KiB against
 * 16 TiB): writes past it fail there (EFBIG, "file too large"), and disk
 * reads stop at it (no byte lies beyond, and ext4 refuses a direct read
 * that reaches past it with EINVAL, where its buffered reads stop there).
 */
#include "pss_probe.h"

#include "ps_log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

static ps_status_t pss_probe_read_align(int fd, uint32_t *off_align, uint32_t *mem_align)
{
    uint8_t *buf;
    uint32_t a, m;

    if (posix_memalign((void **)&buf, 8192, 16384) != 0) {
        return PS_ERR_NO_MEMORY;
    }
    *off_align = 0;
    for (a = 512; a <= 4096 && *off_align == 0; a *= 2) {
        if (pread(fd, buf, a, a) >= 0) {
            *off_align = a;
        }
    }
    *mem_align = 0;
    for (m = 8; m <= 4096 && *mem_align == 0 && *off_align != 0; m *= 2) {
        if (pread(fd, buf + m, *off_align, 0) >= 0) {
            *mem_align = m;
        }
    }
    free(buf);
    return (*off_align != 0 && *mem_align != 0) ? PS_OK : PS_ERR_UNSUPPORTED;
}

/*
 * The O_DIRECT offset and memory alignment for fd (open with O_DIRECT):
 * statx(STATX_DIOALIGN) when the kernel reports it, else the device's
 * logical block size (BLKSSZGET). Returns how it was found (NULL if not);
 * *off_align stays 0 when neither worked.
 */
static const char *pss_probe_dio_align(int fd, uint32_t *off_align, uint32_t *mem_align)
{
    struct statx stx;
    struct stat st;
    const char *how = NULL;

    *off_align = *mem_align = 0;
    memset(&stx, 0, sizeof(stx));
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
        (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align != 0) {
        *off_align = stx.stx_dio_offset_align;
        *mem_align = stx.stx_dio_mem_align;
        how = "statx STATX_DIOALIGN";
    }
    if (*off_align == 0 && fstat(fd, &st) == 0) {
        char dev[64];
        snprintf(dev, sizeof(dev), "/dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
        int bfd = open(dev, O_RDONLY | O_CLOEXEC);
        int ssz = 0;
        if (bfd >= 0) {
            if (ioctl(bfd, BLKSSZGET, &ssz) == 0 && ssz > 0) {
                *off_align = (uint32_t)ssz;
                *mem_align = (uint32_t)ssz;
                how = "BLKSSZGET";
            }
            close(bfd);
        }
    }
    return how;
}

/* Two pages of data in the probe file, for trial reads to read. Only this
 * last resort writes data (it fails on a full disk; then direct_io = auto
 * falls back to buffered I/O). */
static ps_status_t pss_probe_fill(pss_server_t *s, const char *probe)
{
    static const uint8_t zeros[8192];
    ps_status_t status = PS_OK;
    int fd = openat(s->obj_dir_fd, probe, O_WRONLY | O_CLOEXEC);

    if (fd < 0 || pwrite(fd, zeros, sizeof(zeros), 0) != (ssize_t)sizeof(zeros)) {
        ps_warn("write %s/obj/%s for trial O_DIRECT reads: %m", s->data_dir, probe);
        status = ps_status_from_errno(errno != 0 ? errno : EIO);
    }
    if (fd >= 0) {
        close(fd);
    }
    return status;
}

/*
 * Find the O_DIRECT alignment of the data directory's file system, using a
 * probe file (see pss_probe_dio_align). Sets s->direct_io, s->align and
 * s->mem_align.
 */
static ps_status_t pss_probe_direct(pss_server_t *s, int want)
{
    const char *probe = ".probe";
    uint32_t off_align = 0, mem_align = 0;
    const char *how;
    int fd;

    s->direct_io = 0;
    s->align = 1;
    s->mem_align = 64;
    if (want == 0) {
        ps_info("direct_io = no: objects use buffered I/O");
        return PS_OK;
    }

    /* An empty file: the probe must also work on a full disk. */
    fd = openat(s->obj_dir_fd, probe, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        ps_error("create %s/obj/%s: %m", s->data_dir, probe);
        return ps_status_from_errno(errno);
    }
    close(fd);

    fd = openat(s->obj_dir_fd, probe, O_RDWR | O_DIRECT | O_CLOEXEC);
    if (fd < 0) {
        int open_errno = errno;
        unlinkat(s->obj_dir_fd, probe, 0);
        errno = open_errno;
        if (want == 1) {
            ps_error("open %s/obj/%s with O_DIRECT: %m (direct_io = yes)", s->data_dir, probe);
            return ps_status_from_errno(open_errno);
        }
        ps_warn("open %s/obj/%s with O_DIRECT: %m; the file system refuses direct I/O, "
                "falling back to buffered I/O",
                s->data_dir, probe);
        return PS_OK;
    }

    how = pss_probe_dio_align(fd, &off_align, &mem_align);
    if (how == NULL && pss_probe_fill(s, probe) == PS_OK &&
        pss_probe_read_align(fd, &off_align, &mem_align) == PS_OK) {
        how = "trial reads";
    }
    close(fd);
    unlinkat(s->obj_dir_fd, probe, 0);

    if (off_align == 0 || (off_align & (off_align - 1)) != 0 || off_align > 65536) {
        if (want == 1) {
            ps_error("%s/obj: could not find a usable O_DIRECT alignment (direct_io = yes)",
                     s->data_dir);
            return PS_ERR_UNSUPPORTED;
        }
        ps_warn("%s/obj: could not find a usable O_DIRECT alignment; falling back to "
                "buffered I/O",
                s->data_dir);
        return PS_OK;
    }
    if (mem_align == 0 || (mem_align & (mem_align - 1)) != 0) {
        mem_align = off_align;
    }
    s->direct_io = 1;
    s->align = off_align;
    /*
     * Buffers are page-aligned even when the file system accepts less: on the
     * virtio disks we run on, O_DIRECT from 512-byte-aligned (not page-aligned)
     * memory is accepted but served about 30x slower, with io_submit blocking
     * for the whole I/O. Spans whose payload memory is not page-aligned are
     * bounced through an aligned buffer instead (a memcpy is far cheaper).
     */
    long page = sysconf(_SC_PAGESIZE);
    s->mem_align = mem_align;
    if (page > 0 && (uint32_t)page > s->mem_align) {
        s->mem_align = (uint32_t)page;
    }
    ps_info("%s/obj: O_DIRECT with offset alignment %u, memory alignment %u (file system "
            "minimum %u, from %s)",
            s->data_dir, s->align, s->mem_align, mem_align, how);
    return PS_OK;
}

/*
 * The largest file fd's file system holds: lseek refuses an offset past it
 * (EINVAL; ext4 checks its s_maxbytes, tmpfs, XFS and btrfs allow any
 * offset up to 2^63 - 1), so it is the largest offset lseek takes, found by
 * bisection (63 calls at start-up). A file system whose lseek refuses
 * even 2 GiB tells nothing that way: no limit is assumed then.
 */
static uint64_t pss_probe_max_file(int fd)
{
    uint64_t lo = 0, hi = (uint64_t)INT64_MAX; /* lseek takes lo; hi is to be tried */

    if (lseek(fd, (off_t)hi, SEEK_SET) >= 0) {
        return hi;
    }
    if (lseek(fd, (off_t)1 << 31, SEEK_SET) < 0) {
        ps_warn("lseek to 2 GiB in the object directory: %m; no largest file size assumed");
        return UINT64_MAX;
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (lseek(fd, (off_t)mid, SEEK_SET) >= 0) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/*
 * Disk I/O and objects' lengths are in whole file-system blocks and sizes
 * live in an attribute (see pss_object.c): raise align to the block
 * size, check that the file system keeps user attributes, and find the
 * largest file it holds.
 */
static ps_status_t pss_probe_sizes(pss_server_t *s)
{
    const char *probe = ".probe-xattr";
    struct statvfs vfs;
    uint64_t le = 0;
    uint32_t bs = 4096;

    if (fstatvfs(s->obj_dir_fd, &vfs) == 0 && vfs.f_bsize >= 512 && vfs.f_bsize <= (1u << 20) &&
        (vfs.f_bsize & (vfs.f_bsize - 1)) == 0) {
        bs = (uint32_t)vfs.f_bsize;
    }
    if (bs > s->align) {
        s->align = bs;
    }

    int fd = openat(s->obj_dir_fd, probe, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        ps_error("create %s/obj/%s: %m", s->data_dir, probe);
        return ps_status_from_errno(errno);
    }
    int ok = fsetxattr(fd, PSS_SIZE_XATTR, &le, sizeof(le), 0) == 0;
    int xattr_errno = errno;
    uint64_t max_file = pss_probe_max_file(fd);
    s->max_file = max_file - max_file % s->align;
    close(fd);
    unlinkat(s->obj_dir_fd, probe, 0);
    if (!ok) {
        errno = xattr_errno;
        ps_error("%s/obj: the file system does not keep user extended attributes (%m); "
                 "pstripe-server stores each object's size in one (%s): use ext4, XFS, btrfs "
                 "or tmpfs",
                 s->data_dir, PSS_SIZE_XATTR);
        return PS_ERR_UNSUPPORTED;
    }
    ps_info("%s/obj: disk I/O and object files in blocks of %u bytes, sizes in %s, files of "
            "at most %" PRIu64 " bytes",
            s->data_dir, s->align, PSS_SIZE_XATTR, s->max_file);
    return PS_OK;
}

ps_status_t pss_probe(pss_server_t *s, int want)
{
    ps_status_t status = pss_probe_direct(s, want);
    if (status != PS_OK) {
        return status;
    }
    return pss_probe_sizes(s);
}

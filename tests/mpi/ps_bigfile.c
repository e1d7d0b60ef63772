/*
 * ps_bigfile: a write near the largest file the server's file system holds
 * (ext4 with 4 KiB blocks: 16 TiB - 4 KiB) fails with MPI_ERR_IO and an
 * error string that says "too large" (a block ext4 refuses: EFBIG at the
 * server; a write across 16 TiB: refused by the client), and writes below
 * the limit, up to the last block ext4 holds, work and read back. Run by
 * tests/tools/file-too-large.sh on a one-server cluster whose data
 * directory is a loop-mounted ext4 (file offset = object offset); one
 * process.
 *
 * Usage: ps_bigfile FILENAME
 */
#include "pstest.h"

#define LIMIT ((MPI_Offset) 1 << 44) /* ext4 (4 KiB blocks): s_maxbytes + 4 KiB */

/* Expect a failed write with MPI_ERR_IO and "too large" in its string. */
static void expect_too_large(MPI_File fh, MPI_Offset off, const void *buf, int len,
                             const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Status st;
    int rc, cls, mlen;

    rc = MPI_File_write_at(fh, off, buf, len, MPI_BYTE, &st);
    PS_CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &mlen);
    printf("%s: class %d, \"%s\"\n", what, cls, msg);
    PS_CHECK(cls == MPI_ERR_IO || cls == MPI_ERR_FILE, "%s: error class %d, expected MPI_ERR_IO",
             what, cls);
    PS_CHECK(strstr(msg, "too large") != NULL, "%s: error string \"%s\" does not say too large",
             what, msg);
}

int main(int argc, char **argv)
{
    const char *fname = ps_init(&argc, &argv);
    unsigned char buf[8192], back[4096];
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;

    ps_fill(buf, sizeof(buf), 0, 3);
    /* each write goes to the server at once (no write-behind buffer) */
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_pstripe_write_behind", "disable");
    PS_MPI(MPI_File_open(MPI_COMM_SELF, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    /* 1 MiB below the limit: works and reads back */
    PS_MPI(MPI_File_write_at(fh, LIMIT - (1 << 20), buf, 4096, MPI_BYTE, &st));
    PS_MPI(MPI_File_read_at(fh, LIMIT - (1 << 20), back, 4096, MPI_BYTE, &st));
    PS_CHECK(memcmp(buf, back, 4096) == 0, "the block below the limit reads back different");
    /* the last block ext4 holds: works and reads back, though the read
     * cache's 64 KiB block and the servers' aligned disk reads around it
     * reach past what the file system can hold (read as a hole) */
    PS_MPI(MPI_File_write_at(fh, LIMIT - 8192, buf + 4096, 4096, MPI_BYTE, &st));
    PS_MPI(MPI_File_read_at(fh, LIMIT - 8192, back, 4096, MPI_BYTE, &st));
    PS_CHECK(memcmp(buf + 4096, back, 4096) == 0, "the last block ext4 holds reads back different");
    PS_MPI(MPI_File_read_at(fh, LIMIT - 4096 - 100, back, 100, MPI_BYTE, &st));
    PS_CHECK(memcmp(buf + 8192 - 100, back, 100) == 0, "the last bytes below the limit differ");
    /* the last 4 KiB below 16 TiB: ext4 refuses it (EFBIG at the server) */
    expect_too_large(fh, LIMIT - 4096, buf, 4096, "write of the block ext4 does not hold");
    /* across 16 TiB: the client refuses it (no server object goes past it) */
    expect_too_large(fh, LIMIT - 4096, buf, 8192, "write across 16 TiB");
    /* the file is still usable */
    PS_MPI(MPI_File_read_at(fh, LIMIT - (1 << 20), back, 4096, MPI_BYTE, &st));
    PS_CHECK(memcmp(buf, back, 4096) == 0, "the block below the limit changed");
    PS_MPI(MPI_File_close(&fh));
    printf("ps_bigfile: ok\n");
    MPI_Finalize();
    return 0;
}

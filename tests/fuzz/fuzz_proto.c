/*
 * fuzz_proto.c: libFuzzer target for the protocol decoders a server and a
 * client run on bytes from the network (common/ps_proto.c): the AM header
 * check (ps_proto_decode), the region and strided-run lists of
 * OBJ_READ/OBJ_WRITE (ps_proto_check_regions, ps_proto_check_runs), wire paths
 * (ps_proto_check_path, ps_path_normalize), and the trace dump (ps_proto_dump,
 * common/ps_proto_dump.c).
 *
 * Input: byte 0 bit 0 = is_reply, bytes 1-2 = length of the AM header (little
 * endian, cut to what is there), then the header, then the AM data. The
 * decoders must never read outside what they were given (ASan) nor hit
 * undefined behaviour (UBSan); every accepted message must be consistent
 * (checked with __builtin_trap, which the fuzzer reports as a crash).
 * Built with clang -fsanitize=fuzzer,address,undefined; run by
 * tests/fuzz/run-fuzz for a bounded time from the committed corpus.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ps_proto.h"

/* A run list the decoder accepted must be what it promises. */
static void fuzz_check_runs_ok(const ps_run_t *runs, uint32_t n, uint64_t payload_len)
{
    unsigned __int128 sum = 0;

    for (uint32_t i = 0; i < n; i++) {
        if (runs[i].count == 0 || runs[i].len == 0 || runs[i].stride < runs[i].len) {
            __builtin_trap(); /* accepted an empty or self-overlapping run */
        }
        if ((unsigned __int128)runs[i].off +
                (unsigned __int128)runs[i].stride * (runs[i].count - 1) + runs[i].len >
            (unsigned __int128)UINT64_MAX) {
            __builtin_trap(); /* accepted a run past the end of the offset space */
        }
        sum += (unsigned __int128)runs[i].len * runs[i].count;
    }
    if (sum != payload_len) {
        __builtin_trap();
    }
}

static void fuzz_check_regions_ok(const ps_region_t *regions, uint32_t n, uint64_t payload_len)
{
    uint64_t sum = 0;

    for (uint32_t i = 0; i < n; i++) {
        if (regions[i].len == 0 || regions[i].off + regions[i].len < regions[i].off) {
            __builtin_trap(); /* accepted an empty or overflowing region */
        }
        sum += regions[i].len;
    }
    if (sum != payload_len) {
        __builtin_trap();
    }
}

static void fuzz_io(const ps_msg_view_t *view, const uint8_t *data, size_t data_len)
{
    ps_io_req_t io;
    uint64_t rlen, nregions = 0;
    void *list;

    memcpy(&io, view->body, sizeof(io));
    rlen = ps_io_list_bytes(&io);
    if (io.flags & PS_IO_LIST_INLINE) {
        /* the list follows the body in the header, which decode sized */
        if (view->hdr->body_len != sizeof(io) + rlen) {
            __builtin_trap();
        }
        data = (const uint8_t *)view->body + sizeof(io);
        data_len = rlen;
    } else if (view->data_len != data_len || rlen > data_len) {
        return; /* a receiver refuses a length mismatch before looking inside */
    }
    list = malloc(rlen ? (size_t)rlen : 1); /* exact size: ASan sees any overread */
    if (list == NULL) {
        return;
    }
    memcpy(list, data, (size_t)rlen);
    if (io.flags & PS_IO_RUNS) {
        if (ps_proto_check_runs(list, io.nregions, io.payload_len, UINT64_MAX / 2, &nregions) ==
            PS_OK) {
            fuzz_check_runs_ok(list, io.nregions, io.payload_len);
        }
    } else if (ps_proto_check_regions(list, io.nregions, io.payload_len, UINT64_MAX / 2) ==
               PS_OK) {
        fuzz_check_regions_ok(list, io.nregions, io.payload_len);
    }
    free(list);
}

static void fuzz_path(const uint8_t *data, size_t len)
{
    char *path = malloc(len + 1), out[PS_PATH_MAX + 1];

    if (path == NULL) {
        return;
    }
    memcpy(path, data, len);
    path[len] = '\0';
    if (ps_proto_check_path(path, len) == PS_OK && memchr(path, '\0', len) != NULL) {
        __builtin_trap(); /* accepted a path with a NUL */
    }
    if (ps_path_normalize(path, out, sizeof(out)) == PS_OK &&
        ps_proto_check_path(out, strlen(out)) != PS_OK) {
        __builtin_trap(); /* normalized into something the wire check refuses */
    }
    free(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
    ps_msg_view_t view;
    size_t hdr_len, data_len;
    uint8_t *hdr;
    char dump[256];

    if (size < 3) {
        return 0;
    }
    hdr_len = (size_t)in[1] | (size_t)in[2] << 8;
    if (hdr_len > size - 3) {
        hdr_len = size - 3;
    }
    data_len = size - 3 - hdr_len;
    hdr = malloc(hdr_len ? hdr_len : 1); /* exact size, aligned as UCX gives it */
    if (hdr == NULL) {
        return 0;
    }
    memcpy(hdr, in + 3, hdr_len);
    ps_proto_dump(hdr, hdr_len, dump, sizeof(dump));
    if (ps_proto_decode(hdr, hdr_len, in[0] & 1, &view) == PS_OK) {
        if ((const uint8_t *)view.body < hdr ||
            (const uint8_t *)view.body + view.hdr->body_len > hdr + hdr_len) {
            __builtin_trap(); /* a view outside the header */
        }
        if (!(in[0] & 1) && view.hdr->status == 0 &&
            (view.hdr->type == PS_MSG_OBJ_WRITE || view.hdr->type == PS_MSG_OBJ_READ)) {
            fuzz_io(&view, in + 3 + hdr_len, data_len);
        }
    }
    fuzz_path(in + 3 + hdr_len, data_len);
    free(hdr);
    return 0;
}

/*
 * ps_layout.h: stripe layout math (RAID-0 over a list of servers).
 *
 * A file is cut into stripes of stripe_size bytes. Stripe i lives on stripe
 * target k = i % stripe_count, which is server (first_server + k) % nservers
 * of the cluster's server list, at object offset
 * (i / stripe_count) * stripe_size + (offset % stripe_size).
 * Each server keeps one object per file holding, densely packed, every stripe
 * the file has on it. A file's size is therefore derived from its objects'
 * sizes: the largest file offset any object's last byte maps back to.
 */
#ifndef PS_LAYOUT_H
#define PS_LAYOUT_H

#include <stdint.h>

#include "ps_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PS_STRIPE_SIZE_MIN  512ull       /* bytes */
#define PS_STRIPE_SIZE_MAX  (1ull << 32) /* bytes */
#define PS_STRIPE_COUNT_MAX 1024u        /* servers */

typedef struct ps_layout {
    uint64_t stripe_size;  /* bytes per stripe, PS_STRIPE_SIZE_MIN..MAX */
    uint32_t stripe_count; /* number of servers the file is striped over, >= 1 */
    uint32_t first_server; /* index in the cluster's server list of stripe 0 */
} ps_layout_t;

/* Check a layout against a cluster of nservers; PS_OK or PS_ERR_INVALID. */
ps_status_t ps_layout_check(const ps_layout_t *layout, uint32_t nservers);

/* Server index (in the cluster list) that holds stripe target k. */
uint32_t ps_layout_server(const ps_layout_t *layout, uint32_t k, uint32_t nservers);

/*
 * Map file offset off to its stripe target (*k), the offset in that target's
 * object (*obj_off), and the bytes left in this stripe from off (return value).
 */
uint64_t ps_layout_map(const ps_layout_t *layout, uint64_t off, uint32_t *k, uint64_t *obj_off);

/* Size of target k's object when the file is exactly file_size bytes long. */
uint64_t ps_layout_obj_size(const ps_layout_t *layout, uint64_t file_size, uint32_t k);

/* File size implied by target k's object being obj_size bytes (0 if empty). */
uint64_t ps_layout_file_size(const ps_layout_t *layout, uint32_t k, uint64_t obj_size);

/* Hashes shared by clients and servers for placement. */
uint64_t ps_hash_bytes(const void *data, uint64_t len);
uint64_t ps_hash_u64(uint64_t value);
/* Owner server of a path among nservers, and its worker among nworkers. */
uint32_t ps_path_server(const char *path, uint64_t len, uint32_t nservers);
uint32_t ps_path_worker(const char *path, uint64_t len, uint32_t nworkers);
/* Worker (on every server) that owns the objects of file_id. */
uint32_t ps_object_worker(uint64_t file_id, uint32_t nworkers);

#ifdef __cplusplus
}
#endif

#endif

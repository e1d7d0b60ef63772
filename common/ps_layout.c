#include "ps_layout.h"
#include "ps_status.h"

ps_status_t ps_layout_check(const ps_layout_t *layout, uint32_t nservers)
{
    if (layout->stripe_size < PS_STRIPE_SIZE_MIN || layout->stripe_size > PS_STRIPE_SIZE_MAX ||
        layout->stripe_count == 0 || layout->stripe_count > PS_STRIPE_COUNT_MAX ||
        (nservers != 0 && (layout->stripe_count > nservers || layout->first_server >= nservers))) {
        return PS_ERR_INVALID;
    }
    return PS_OK;
}

uint32_t ps_layout_server(const ps_layout_t *layout, uint32_t k, uint32_t nservers)
{
    return (uint32_t)(((uint64_t)layout->first_server + k) % nservers);
}

uint64_t ps_layout_map(const ps_layout_t *layout, uint64_t off, uint32_t *k, uint64_t *obj_off)
{
    uint64_t stripe = off / layout->stripe_size;
    uint64_t in_stripe = off % layout->stripe_size;

    *k = (uint32_t)(stripe % layout->stripe_count);
    *obj_off = (stripe / layout->stripe_count) * layout->stripe_size + in_stripe;
    return layout->stripe_size - in_stripe;
}

uint64_t ps_layout_obj_size(const ps_layout_t *layout, uint64_t file_size, uint32_t k)
{
    uint64_t ss = layout->stripe_size, sc = layout->stripe_count;
    uint64_t full_rows = file_size / (ss * sc); /* complete rows of stripes */
    uint64_t rest = file_size % (ss * sc);      /* bytes in the last, partial row */
    uint64_t size = full_rows * ss;

    if (rest > (uint64_t)k * ss) {
        uint64_t in_row = rest - (uint64_t)k * ss;
        size += in_row < ss ? in_row : ss;
    }
    return size;
}

uint64_t ps_layout_file_size(const ps_layout_t *layout, uint32_t k, uint64_t obj_size)
{
    uint64_t ss = layout->stripe_size, sc = layout->stripe_count;
    uint64_t last, row, in_stripe;

    if (obj_size == 0) {
        return 0;
    }
    last = obj_size - 1;
    row = last / ss;
    in_stripe = last % ss;
    return (row * sc + k) * ss + in_stripe + 1;
}

/* FNV-1a followed by a 64-bit finalizer (splitmix64) for better high bits. */
static uint64_t ps_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

uint64_t ps_hash_bytes(const void *data, uint64_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;

    for (uint64_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return ps_mix64(h);
}

uint64_t ps_hash_u64(uint64_t value)
{
    return ps_mix64(value + 0x9e3779b97f4a7c15ull);
}

uint32_t ps_path_server(const char *path, uint64_t len, uint32_t nservers)
{
    return (uint32_t)(ps_hash_bytes(path, len) % nservers);
}

uint32_t ps_path_worker(const char *path, uint64_t len, uint32_t nworkers)
{
    return (uint32_t)((ps_hash_bytes(path, len) >> 32) % nworkers);
}

uint32_t ps_object_worker(uint64_t file_id, uint32_t nworkers)
{
    return (uint32_t)(ps_hash_u64(file_id) % nworkers);
}

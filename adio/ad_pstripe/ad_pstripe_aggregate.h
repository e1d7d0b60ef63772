/*
 * ad_pstripe_aggregate.h: the file domains of collective I/O.
 *
 * Whether a collective access is aggregated at all (the processes' ranges
 * and region sizes), and how the byte range of an aggregated one is cut
 * into the aggregators' file domains (whole stripes, dealt so that each
 * aggregator serves as few servers as possible) and into rounds of
 * cb_buffer_size bytes of a domain.
 * Pure functions over plain integers, with no MPI or ADIO type, so that a
 * unit test (tests/unit/test_coll_domain.cc) checks them against a
 * brute-force model without MPI; ad_pstripe_twophase.c does the exchange.
 */
#ifndef AD_PSTRIPE_AGGREGATE_H_INCLUDED
#define AD_PSTRIPE_AGGREGATE_H_INCLUDED

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One process's access in a collective call, as the processes gather
 * them (four MPI_LONG_LONG on the wire): its file range [start, end)
 * (start = end: nothing; start = -1: its access could not be built), its
 * bytes and its regions. */
typedef struct ADIOI_PSTRIPE_range_s {
    long long start, end, bytes, nregions;
} ADIOI_PSTRIPE_range;

/*
 * Interleaved writes of regions smaller than this on average are written
 * as independent list I/O under automatic aggregation: the regions travel
 * as strided runs or lists and the servers merge the writers' batches
 * (pss_plan.c), while two-phase moves every region through the exchange
 * and leaves the other processes waiting for the aggregator. Set in
 * session 65 (it was 64 KiB, where two-phase won when the limit was first
 * measured): pstripe-bench -p vector -c, 4 MiB calls, romio_cb_write
 * automatic (two-phase at these sizes) against disable, side by side, 2
 * processes, 4 rounds: 64 KiB regions 167-412 MiB/s against 403-926, 256
 * KiB 444-869 against 502-808, 1 MiB 376-855 against 851-1,159; 4
 * processes on 2 cores, 2 rounds: 282-596 against 364-924. Larger regions
 * were not measured.
 */
#define ADIOI_PSTRIPE_COLL_SMALL_REGION (4 << 20)

/*
 * Likewise for reads (the limit was 128 bytes; two-phase won from 1 KiB
 * up when it was set): pstripe-bench -p vector -c -r, 1 MiB calls (4 MiB
 * for the largest regions), romio_cb_read automatic against disable, 2
 * processes, 4 rounds: 1 KiB regions 582-1,717 MiB/s against 1,171-3,769,
 * 4 KiB 1,209-3,810 against 1,474-4,602, 32 KiB 904-3,334 against
 * 1,346-6,502; 2 rounds: 128 KiB 297-2,049 against 1,783-3,755, 1 MiB
 * 615-3,341 against 3,147-3,558; 4 processes: 579-808 against
 * 1,400-2,312. HDF5's collective reads of column blocks (4 KiB regions
 * interleaved; pstripe-h5bench -d cols -c, 64 MiB), romio_cb_read enable
 * against disable, 2 rounds: contiguous 1,003-1,111 against 1,245-1,347,
 * chunked 1,156-1,260 against 1,339-1,375.
 */
#define ADIOI_PSTRIPE_COLL_SMALL_READ_REGION (4 << 20)

/* Do the file ranges of the accesses ranges[0..n) overlap (empty ones
 * aside)? scratch: room for n ranges. */
int ADIOI_PSTRIPE_Ranges_interleave(const ADIOI_PSTRIPE_range * ranges, int n,
                                    ADIOI_PSTRIPE_range * scratch);

/* Automatic aggregation of the accesses ranges[0..n): two-phase (1) only
 * when their file ranges interleave (empty ones aside) and their regions
 * average ADIOI_PSTRIPE_COLL_SMALL_REGION (writes) or
 * ADIOI_PSTRIPE_COLL_SMALL_READ_REGION (reads) bytes or more.
 * scratch: room for n ranges. */
int ADIOI_PSTRIPE_Ranges_aggregate(const ADIOI_PSTRIPE_range * ranges, int n, int is_write,
                                   ADIOI_PSTRIPE_range * scratch);

/* The geometry of the file domains of one collective call. */
typedef struct ADIOI_PSTRIPE_domains_s {
    int naggs;                  /* aggregators (cb_nodes) */
    int64_t stripe_size;        /* bytes */
    int64_t stripe_count;       /* stripe targets of the file */
    int64_t round_size;         /* bytes of a domain per round (cb_buffer_size) */
} ADIOI_PSTRIPE_domains;

/* One piece of an access, as ADIOI_PSTRIPE_Domain_cut finds it. */
typedef struct ADIOI_PSTRIPE_cut_s {
    int agg;                    /* aggregator (index into the ranklist) */
    int64_t round;              /* round of that aggregator */
    int64_t len;                /* bytes */
} ADIOI_PSTRIPE_cut;

/* The geometry from the file's layout and the cb_buffer_size hint; a layout
 * without stripes (size or count 0) counts as one stripe of cb_buffer_size
 * bytes on one target. */
void ADIOI_PSTRIPE_Domains_init(ADIOI_PSTRIPE_domains * d, int naggs, int64_t stripe_size,
                                int64_t stripe_count, int64_t cb_buffer_size);

/* Aggregator of stripe i (the i-th stripe of the file). */
int ADIOI_PSTRIPE_Stripe_agg(const ADIOI_PSTRIPE_domains * d, int64_t i);

/* Number of stripes aggregator agg owns below stripe i. */
int64_t ADIOI_PSTRIPE_Stripes_below(const ADIOI_PSTRIPE_domains * d, int agg, int64_t i);

/* Position of file offset off in its aggregator's domain (the stripes the
 * aggregator owns, in file order, end to end). */
int64_t ADIOI_PSTRIPE_Domain_pos(const ADIOI_PSTRIPE_domains * d, int64_t off);

/* base[a] for each of the d->naggs aggregators: the domain position where
 * round 0 of aggregator a starts, for a collective access whose lowest
 * offset is start. */
void ADIOI_PSTRIPE_Domain_bases(const ADIOI_PSTRIPE_domains * d, int64_t start, int64_t * base);

/* The first piece of the bytes [off, off + len) (off >= the start given to
 * Domain_bases, len > 0): as many bytes from off as lie in one stripe and
 * in one round of its aggregator. */
void ADIOI_PSTRIPE_Domain_cut(const ADIOI_PSTRIPE_domains * d, const int64_t * base,
                              int64_t off, int64_t len, ADIOI_PSTRIPE_cut * cut);

#ifdef __cplusplus
}
#endif

#endif /* AD_PSTRIPE_AGGREGATE_H_INCLUDED */

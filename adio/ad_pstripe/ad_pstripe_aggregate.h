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
 * (an MPI datatype entry each) and leaves the other processes waiting for
 * the aggregator. pstripe-bench -c (2 processes, 1 MiB calls, vector,
 * subarray and indexed views, romio_cb_write automatic against disable,
 * 2 rounds): 8-byte regions 70-72 against 565-662 MiB/s, 64 B 316-345
 * against 809-927, 4 KiB 637-818 against 721-1,038, 32 KiB 653-948
 * against 744-1,122, but 64 KiB 686-813 against 502-612 and 128 KiB
 * 674-768 against 508-617; with 4 processes on 2 cores (64 B - 32 KiB)
 * 49-63 against 275-342.
 */
#define ADIOI_PSTRIPE_COLL_SMALL_REGION (64 << 10)

/*
 * Likewise for reads, whose two-phase exchange costs less (the servers
 * send each process's regions packed either way): pstripe-bench -p vector
 * -c -r, 2 processes, 1 MiB calls, romio_cb_read automatic against
 * disable, 2 rounds: 8-byte regions 78-85 against 492-659 MiB/s, 32 B
 * 284-287 against 570-620, 64 B 427-459 against 637-815, 128 B 590-759
 * against 675-720, 256 B 756-763 against 767-791, but 1 KiB 1,039-1,145
 * against 800-843 and 4 KiB 1,452-1,777 against 727-1,192. Independent
 * under automatic aggregation (6 runs, with a trial limit of 256 B, which
 * routes these sizes as 128 does): 8 B 134-571 MiB/s, 64 B 479-887, where
 * two-phase read 78-85 and 427-459 (the allgather that decides, and the
 * processes' own list reads no longer in step, make the spread).
 */
#define ADIOI_PSTRIPE_COLL_SMALL_READ_REGION 128

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

/*
 * twophase.h: the schedule arithmetic of the deterministic two-phase h-relation routing of Bader,
 * Helman and JaJa ("Practical parallel algorithms for personalized communication and integer
 * sorting", 1996, Section 3, Section 3.3 and Appendix B), and the three local steps of the
 * algorithm as pure memory operations. No MPI: algos/alltoallv_twophase.c runs these around two
 * alltoall transposes, and tests/unit/test_twophase.c runs them around a simulated transpose on p
 * simulated ranks.
 *
 * The unit. Algorithms see bytes, not elements, so a message of s bytes is cut into
 * ceil(s / U) units of U bytes (the last one shorter). U is a power of two derived from the
 * agreed h1 and h2 only (xchg_twophase_unit_bytes), so every rank cuts every message alike
 * without knowing any other rank's counts. Unit k of the message from rank i to rank j goes to
 * bin (i + j + k) mod p: the paper's dealing, with units for elements. The paper's bounds hold
 * for units as they hold for elements (the proof only counts how many units each destination
 * deals), with N = the units a rank routes in place of n/p:
 *     phase 1 bin (units)  <= N/p + (p-1)/2    N  <= floor(h1/U) + (p-1)
 *     phase 2 bin (units)  <= M/p + (p-1)/2    M  <= floor(h2/U) + (p-1)
 * (each of the p-1 messages adds at most one partial unit; the message to self is a local
 * copy and is not routed). xchg_twophase_bin_bound is the exact form of the bound, also
 * limited by the longest run of extra units a message can make (units of one message).
 *
 * The header. A phase-1 block from rank i starts with rank i's byte counts for every
 * destination (p counts of 4 bytes, or 8 when a message may exceed 4 GiB): the intermediate
 * rank needs them to split the block by destination. A phase-2 block needs no header: the
 * final receiver knows its own receive counts, which equal the senders' counts.
 *
 * Layouts (all runs are packed, in this order):
 *     phase-1 block from i to b:  [counts s_i[0..p-1]] [units for j = 0, 1, ..., p-1]
 *     phase-2 block from b to j:  [units from i = 0, 1, ..., p-1]
 * where the units of message (i -> j) held by bin b are k = k0, k0 + p, k0 + 2p, ... with
 * k0 = (b - i - j) mod p, in increasing k: the order within every message is kept.
 */
#ifndef XCHG_SCHED_TWOPHASE_H
#define XCHG_SCHED_TWOPHASE_H

#include <stddef.h>

#define XCHG_TWOPHASE_UNIT_MIN ((size_t)8)
#define XCHG_TWOPHASE_UNIT_MAX ((size_t)65536)
/* Bytes after each phase-2 block on the wire: the intermediate rank's own count for the block
 * and a failure flag, 8 bytes each (algos/alltoallv_twophase.c), which the model prices too. */
#define XCHG_TWOPHASE_TRAILER ((size_t)16)

/* The fixed sizes of one call, from values that are equal on every rank. */
typedef struct xchg_twophase_plan {
    int nranks;
    size_t unit_bytes;   /* U */
    size_t unit_max;     /* most units of one message: ceil(max_block / U) */
    size_t count_bytes;  /* width of one header count: 4 or 8 */
    size_t header_bytes; /* p counts */
    size_t units1;       /* most units any rank deals in step 1 */
    size_t units2;       /* most units any rank receives in step 5 */
    size_t cap1, cap2;   /* bin capacities in units: xchg_twophase_bin_bound of units1, units2 */
    size_t block1_bytes; /* transpose of step 2: header + cap1 units, rounded up to 8 bytes */
    size_t block2_bytes; /* transpose of step 4: cap2 units */
} xchg_twophase_plan_t;

/* The unit for a call: a power of two in [XCHG_TWOPHASE_UNIT_MIN, XCHG_TWOPHASE_UNIT_MAX]
 * close to 4 sqrt(h / (p (p+1))), h = min(h1, h2) (see twophase.c for why). */
size_t xchg_twophase_unit_bytes(int p, size_t h1, size_t h2);

/* Largest bin when a rank deals `units` units over p bins and no message has more than
 * unit_max units: max over delta of floor((units - delta (delta+1)/2) / p) + delta, delta
 * in 0 .. min(p-1, unit_max) with delta (delta+1)/2 <= units (Eq. 1-4 of the paper, exact
 * in integers). Never above units/p + (p-1)/2. */
size_t xchg_twophase_bin_bound(size_t units, int p, size_t unit_max);

/* The plan from p, the agreed h1 (most bytes any rank sends), h2 (most bytes any rank
 * receives) and the largest single message. 0, or -1 when the blocks would overflow size_t. */
int xchg_twophase_plan_init(xchg_twophase_plan_t *plan, int p, size_t h1, size_t h2,
                            size_t max_block);

/* Units of a message of `bytes` bytes, and the length of its unit k. */
size_t xchg_twophase_units(const xchg_twophase_plan_t *plan, size_t bytes);
size_t xchg_twophase_unit_len(const xchg_twophase_plan_t *plan, size_t bytes, size_t k);

/* The units of message (src -> dst), `units` of them, that land in bin `bin`: returns how
 * many, and *first the smallest k among them (the others are first + p, first + 2p, ...). */
size_t xchg_twophase_run(size_t units, int p, int src, int dst, int bin, size_t *first);
/* The bytes of message (src -> dst), `bytes` long, that land in bin `bin`. */
size_t xchg_twophase_run_bytes(const xchg_twophase_plan_t *plan, size_t bytes, int src, int dst,
                               int bin);

/* Step 1 on rank `rank`: write the p phase-1 blocks (p * block1_bytes at bins) from the
 * user's send buffer; fill[b] receives the payload bytes of bin b. The message to self is
 * skipped (its count in the header is 0). 0, or -1 when a bin would exceed cap1 (the agreed
 * h1 or max_block was below this rank's own counts). */
int xchg_twophase_deal(const xchg_twophase_plan_t *plan, int rank, const char *sendbuf,
                       const size_t *sendbytes, const size_t *sendoffs, char *bins, size_t *fill);

/* Step 3 on rank `rank`: from the p phase-1 blocks received (from ranks 0..p-1, at landing)
 * write the p phase-2 blocks (at bins2), each ordered by source; fill[j] receives the payload
 * bytes of the block for j. 0, or -1 when a received header does not fit its block or a
 * phase-2 block would exceed cap2. */
int xchg_twophase_rearrange(const xchg_twophase_plan_t *plan, int rank, const char *landing,
                            char *bins2, size_t *fill);

/* Step 5 on rank `rank`: copy every unit of the p phase-2 blocks received (from intermediate
 * ranks 0..p-1, at landing2) to its place in recvbuf. Only bytes inside
 * [recvoffs[i], recvoffs[i] + recvbytes[i]) for i != rank are written. 0, or -1 when a block
 * is shorter than the counts say. */
int xchg_twophase_place(const xchg_twophase_plan_t *plan, int rank, const char *landing2,
                        char *recvbuf, const size_t *recvbytes, const size_t *recvoffs);
/* Step 5 when the senders' counts (sentbytes[i]: the bytes rank i sent this rank) may differ
 * from this rank's (an erroneous program): the blocks are read as the senders wrote them, and
 * of each message only its first recvbytes[i] bytes are placed (as a truncated receive keeps
 * them). xchg_twophase_place is this with sentbytes = recvbytes. */
int xchg_twophase_place_cut(const xchg_twophase_plan_t *plan, int rank, const char *landing2,
                            char *recvbuf, const size_t *sentbytes, const size_t *recvbytes,
                            const size_t *recvoffs);

/* The registry's applicability predicate of twophase (twophase.c): 1 when
 * the blocks of the call fit and a forced inner alltoall can serve both transposes. */
struct xchg_call;
struct xchg_params;
int xchg_alltoallv_twophase_applies(const struct xchg_call *call, const struct xchg_params *params,
                                    const char **why);

#endif

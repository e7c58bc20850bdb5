/*
 * radix.h: pure schedule arithmetic of Bruck's radix-r index algorithm (MPI_Alltoall).
 *
 * Paper: Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient Algorithms for All-to-All
 * Communications in Multiport Message-Passing Systems", IEEE TPDS 1997
 * (Section 3 and Appendix A).
 *
 * Block ids. After the paper's Phase 1 rotation, block j (0 <= j < p) of rank i is the one
 * rank i sends to rank (i + j) mod p. Phase 2 writes j in radix r with w = ceil(log_r p)
 * digits; subphase x (0 <= x < w) has steps z = 1 .. r-1, the last subphase only
 * ceil(p / r^(w-1)) - 1 of them (Appendix A, lines 7-11). In step z of subphase x every rank
 * sends the blocks whose digit x equals z, packed into one message, to rank + z*r^x and
 * receives the same block ids from rank - z*r^x. With k ports, k consecutive steps of a
 * subphase (they move disjoint block ids, so they are independent) form one round.
 *
 * Measures, in blocks (multiply by the block size b):
 *   C1 (exact, Appendix A) = (w-1) ceil((r-1)/k) + ceil((ceil(p/r^(w-1)) - 1)/k)
 *                         <= ceil((r-1)/k) w                                 (Section 3.4)
 *   C2 (exact)            = sum over rounds of the largest message of the round
 *   paper's bound         =  ceil((r-1)/k) ceil(p/r) w                       (Section 3.4)
 * The exact C2 meets the paper's bound for k = 1 (checked for every p <= 512 and every r)
 * but not always for k >= 2: the paper assumes every message holds at most ceil(p/r) blocks,
 * while a message can hold up to r^x ceil(p / r^(x+1)) blocks, r^(w-1) in the last subphase
 * (p = 8, r = 4, k = 3: C2 = 2 + 4 = 6 > 4). For k = 1 the shorter last subphase makes up
 * for it; for k >= 2 its one round still carries the large message. A bound that always holds is
 * xchg_radix_c2_safe_bound(): sum over subphases x of ceil(steps_x / k) * r^x * ceil(p / r^(x+1)).
 *
 * Pure code: no MPI. Every function is cheap (O(1) or O(rounds)) except the simulator.
 */
#ifndef XCHG_SCHED_RADIX_H
#define XCHG_SCHED_RADIX_H

#include <stddef.h>

#define XCHG_RADIX_MAX_DIGITS 32 /* w <= 31 for p < 2^31 and r >= 2 */

typedef struct xchg_radix {
    int nranks;                        /* p >= 1 */
    int radix;                         /* r: values below 2 act as 2, above p as p */
    int nports;                        /* k: below 1 acts as 1, above r - 1 as r - 1 */
    int ndigits;                       /* w = ceil(log_r p); 0 when p = 1 */
    int weight[XCHG_RADIX_MAX_DIGITS]; /* r^x for x < w */
    int last_steps;                    /* steps of subphase w-1: ceil(p / r^(w-1)) - 1 */
    int rounds_per_subphase;           /* ceil((r-1)/k), subphases 0 .. w-2 */
    int nrounds;                       /* C1 */
} xchg_radix_t;

/* Complete the schedule for p ranks, radix r and k ports (r and k clamped as above). */
void xchg_radix_init(xchg_radix_t *sched, int nranks, int radix, int nports);

/* Steps of subphase x: r - 1, or last_steps for the last subphase. */
int xchg_radix_nsteps(const xchg_radix_t *sched, int subphase);

/* Round q (0 <= q < nrounds): its subphase, its first step and how many steps it runs. */
void xchg_radix_round(const xchg_radix_t *sched, int round, int *subphase, int *first_step,
                      int *nsteps);

/* Block ids 0 .. p-1 whose digit x is z: how many there are (non-increasing in z). */
int xchg_radix_step_count(const xchg_radix_t *sched, int subphase, int step);

/* The index-th block id of step z of subphase x in message order (ids in decreasing order,
 * so that in the last subphase a message lands on consecutive places of the receive buffer,
 * see alltoall_radix.c). 0 <= index < xchg_radix_step_count(). */
int xchg_radix_step_block(const xchg_radix_t *sched, int subphase, int step, int index);

/* The steps of subphase x as at most 3 runs of consecutive steps with the same count
 * (steps first[i] .. last[i] move count[i] blocks each); returns the number of runs. Lets the
 * cost model price a subphase in O(1) instead of O(r). */
int xchg_radix_count_runs(const xchg_radix_t *sched, int subphase, int first[3], int last[3],
                          int count[3]);

/* Largest message of round q and the sum of its messages, in blocks. */
int xchg_radix_round_max_blocks(const xchg_radix_t *sched, int round);
size_t xchg_radix_round_total_blocks(const xchg_radix_t *sched, int round);

/* The measures above, C2 and the bounds in blocks. */
int xchg_radix_paper_c1(const xchg_radix_t *sched);
size_t xchg_radix_c2(const xchg_radix_t *sched);
size_t xchg_radix_paper_c2_bound(const xchg_radix_t *sched);
size_t xchg_radix_c2_safe_bound(const xchg_radix_t *sched);

/* The symbolic simulator. It runs the schedule on p ranks that each hold p labelled blocks
 * (slot j of rank i starts with the block from rank i for rank (i + j) mod p) and reports
 * every message of every round: who sends which blocks to whom. All messages of a round are
 * reported (built from the slots as they were before the round) before its blocks move. */
typedef struct xchg_radix_msg {
    int round, subphase, step;
    int offset; /* z * r^x: src + offset = dst (mod p) */
    int src, dst;
    int nblocks;
    const int *origin; /* [nblocks] the rank whose send buffer the block comes from */
    const int *dest;   /* [nblocks] the rank it is for */
} xchg_radix_msg_t;

typedef struct xchg_radix_visitor {
    void (*message)(void *arg, const xchg_radix_msg_t *msg);
    void (*round_end)(void *arg, int round); /* may be NULL */
    void *arg;
} xchg_radix_visitor_t;

/* 0 on success, -1 when memory is exhausted (3 p^2 ints are allocated). */
int xchg_radix_simulate(const xchg_radix_t *sched, const xchg_radix_visitor_t *visitor);

#endif

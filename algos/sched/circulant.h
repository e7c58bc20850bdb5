/*
 * circulant.h: pure schedule arithmetic of Bruck's circulant-graph concatenation algorithm
 * (MPI_Allgather), k ports.
 *
 * Paper: Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient Algorithms for All-to-All
 * Communications in Multiport Message-Passing Systems", IEEE TPDS 1997
 * (Section 4 and Appendix B).
 *
 * d = ceil(log_{k+1} p) rounds, n1 = (k+1)^(d-1), n2 = p - n1. Trees grow with negative
 * offsets, as in Appendix B: rank i sends to rank i - s and receives from rank i + s, so after
 * round t rank i holds the (k+1)^(t+1) blocks i, i+1, ... (the mirror image of Section 4,
 * where a rank holds the blocks that precede it).
 *   Rounds t = 0 .. d-2: port z = 1 .. k sends the (k+1)^t held blocks over offset
 *   z (k+1)^t (offsets S_t of Section 4.1).
 *   Round d-1: the table of n2 columns (the blocks i+n1 .. i+p-1 still missing at rank i)
 *   by b rows is cut into k areas (Proposition 4.2), area a arriving over one offset.
 *
 * Unit: one byte (the algorithm sees byte blocks; b = block_bytes). A cell (column c, row u)
 * is byte u of the c-th missing block; cells are numbered column-major, cell = c * b + u.
 *
 * The partition. Areas are consecutive runs of cells in column-major order (Table 1 of the
 * paper is such a partition). An area's run starts at row u0 of column L and holds `bytes`
 * cells; it fits the held blocks (column span <= n1) when u0 + bytes <= n1 * b. For a cap C
 * on the area size, taking the longest run that fits at every area is optimal (the end each
 * area can reach does not decrease with its start), so the smallest feasible cap is found by
 * bisection between ceil(b n2 / k) and b ceil(n2 / k) (areas of whole columns, always
 * feasible); feasibility of a cap is a closed form (the greedy runs repeat in cycles), so the
 * partition costs O(log b) and the areas O(k). The cap is ceil(b n2 / k) wherever
 * Proposition 4.2 proves it possible (checked by tests/unit/test_sched_circulant.c for every
 * p < 1000, k <= 9, b <= 16 and some b up to 64 KiB); in the range the paper excludes (b >= 3,
 * k >= 3, (k+1)^d - k < p < (k+1)^d) it may exceed that by at most b - 1, with C1 kept at d:
 * the second option of the paper's Remark (about half of the excluded cases still meet the
 * bound).
 *
 * Offsets of the last round. The paper gives area a the offset n1 + L (its leftmost column is
 * fed by tree node 0). When several areas start in the same column (n2 < k), an area may be
 * fed by tree node m (offset n1 + L - m, any m with m * b + u0 + bytes <= n1 * b); the first m
 * whose offset no earlier area uses is taken, so the k messages go to k different ranks
 * whenever the held blocks allow (found in O(1) per area, see circulant.c). The table
 * partition and C2 do not change.
 *
 * Addresses. Everything is a contiguous run of bytes of the concatenated result (p * b bytes,
 * block q at q * b), taken modulo p * b, and a byte keeps its address from sender to receiver:
 * a message from rank i over offset s takes the run at i * b + send_start and lands at the
 * same address of rank i - s, which is (i - s) * b + send_start + s * b.
 *
 * k >= p - 1 acts as k = p - 1 (the paper assumes k <= p - 2; p - 1 ports is its one-round
 * trivial algorithm: every rank sends its block to every other).
 *
 * C1 = d. C2 = b (n1 - 1) / k + (largest area) = ceil(b (p-1) / k) outside the excluded
 * range (Theorem 4.3). Pure code: no MPI.
 */
#ifndef XCHG_SCHED_CIRCULANT_H
#define XCHG_SCHED_CIRCULANT_H

#include <stddef.h>

typedef struct xchg_circ_area {
    size_t first_cell; /* first cell of the run, column-major */
    size_t bytes;      /* cells in the area (0: unused port) */
    int column;        /* leftmost column L */
    int feeder;        /* tree node m (0 .. n1-1) that feeds column L; the paper's choice is 0 */
    int offset;        /* rank i sends the area to rank i - offset: n1 + L - m */
    size_t send_start; /* run start relative to the sender's own block: m*b + first_cell - L*b */
} xchg_circ_area_t;

typedef struct xchg_circ {
    int nranks;              /* p >= 1 */
    int nports;              /* k, clamped to 1 .. max(1, p-1) */
    size_t block_bytes;      /* b */
    int nrounds;             /* d = ceil(log_{k+1} p); 0 when p = 1 */
    int n1, n2;              /* blocks held before the last round, blocks it brings */
    int nareas;              /* areas with at least one cell */
    size_t last_cap;         /* largest area: C2 of the last round */
    int excluded;            /* p, b, k lie in the range Proposition 4.2 excludes */
    xchg_circ_area_t *areas; /* [nports], the caller's storage */
} xchg_circ_t;

/* The number of ports the schedule uses for a requested k (k < 1 acts as 1). */
int xchg_circ_ports(int nranks, int nports);

/* Plan the schedule; areas must have room for xchg_circ_ports(nranks, nports) entries.
 * O(k + log b). */
void xchg_circ_plan(xchg_circ_t *plan, int nranks, int nports, size_t block_bytes,
                    xchg_circ_area_t *areas);

/* The plan's numbers without its areas (areas = NULL): rounds, n1, n2, nareas, last_cap,
 * excluded. O(log k + log b + d): what the cost model needs. */
void xchg_circ_shape(xchg_circ_t *plan, int nranks, int nports, size_t block_bytes);

/* The last-round table partition alone: n2 columns of b cells into k areas of column span at
 * most n1 (Proposition 4.2). Fills areas[0 .. k-1] (unused ones zeroed), sets *nareas and
 * returns the largest area, the smallest cap this family of partitions can meet. */
size_t xchg_circ_partition(int n1, int n2, int nports, size_t block_bytes, xchg_circ_area_t *areas,
                           int *nareas);

/* (k+1)^t: the blocks held before round t < d, and the unit of the offsets S_t */
int xchg_circ_held(const xchg_circ_t *plan, int round);

/* The paper's excluded range of Proposition 4.2 (k here is the effective k). */
int xchg_circ_excluded(int nranks, int nports, size_t block_bytes);

/* C2 of the schedule in bytes, and the lower bound ceil(b (p-1) / k) (Proposition 2.2). */
size_t xchg_circ_c2(const xchg_circ_t *plan);
size_t xchg_circ_c2_lower(int nranks, int nports, size_t block_bytes);

/* One message of the schedule: src sends the run of `bytes` bytes at address `start` (modulo
 * p * b, see the addresses above) to dst, which stores it at the same address. */
typedef struct xchg_circ_msg {
    int round;
    int port;   /* 0 .. k-1 */
    int offset; /* src - offset = dst (mod p) */
    int src, dst;
    size_t start;
    size_t bytes;
} xchg_circ_msg_t;

/* The messages of round t for rank src, in port order; returns how many (<= k). Messages of
 * zero bytes are left out. */
int xchg_circ_round_messages(const xchg_circ_t *plan, int round, int src, xchg_circ_msg_t *msgs);

/* The symbolic simulator: every message of every round, rank by rank, then round_end. */
typedef struct xchg_circ_visitor {
    void (*message)(void *arg, const xchg_circ_msg_t *msg);
    void (*round_end)(void *arg, int round); /* may be NULL */
    void *arg;
} xchg_circ_visitor_t;

/* 0 on success, -1 when memory is exhausted. */
int xchg_circ_simulate(const xchg_circ_t *plan, const xchg_circ_visitor_t *visitor);

#endif

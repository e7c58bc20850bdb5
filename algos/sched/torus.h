/*
 * torus.h: the pure schedule of complete exchange on an all-port ring or 2D torus (MPI_Alltoall):
 * Liu, Gu, Bi, Tu, Dong, "Optimal All-to-All Personalized Communication in All-Port Tori", 2006:
 * algorithm AR (Section III, Fig. 2) and algorithm AT2 (Section IV, Fig. 5), generalised to every
 * shape. No MPI: algos/alltoall_torus.c runs a node's plan (xchg_torus_plan_t) through
 * xchg_exchange, tests/unit/test_sched_torus.c moves every block along its route and runs every
 * node's plan in one process, and build/xchg-sched prints it.
 *
 * Nodes and ports. An r x c torus (a ring is 1 x p) numbers node (x, y) as x c + y, the order of
 * MPI_Cart_coords. Every node has four ports, one per direction: +x, +y, -x, -y (a ring uses
 * +y and -y). In a step every node sends at most one message out of each port; a message goes
 * h hops straight along its port's dimension (wormhole: the nodes it passes do not handle it)
 * and its blocks are combined. A block is the data of one (origin, destination) pair; the
 * SPLIT kind below moves every block as two parts of ceil(b/2) and floor(b/2) bytes.
 *
 * The ring algorithm R(n), on a ring of n nodes (logical ring positions 0 .. n-1):
 *   - n even >= 4: AR. Stage 1 (one step): a block for a node of the other parity moves one hop
 *     in its direction; stage 2 (floor(n/4) steps): the even sub-ring relays in + direction, the
 *     odd one in -; stage 3 (ceil(n/4) - 1 steps): the other way round; every sub-ring leg goes
 *     2 hops. A block goes the shorter way; at the tie (distance n/2) the way that fits: for
 *     n = 0 mod 4 even nodes go +, odd nodes - (both in stage 2), for n = 2 mod 4 even nodes go
 *     -, odd nodes + (the paper's Stage 1 sets). n/2 steps, ceil(n^2/8) blocks (Lemma 2).
 *   - n odd: neighbour relay: every step each node sends to both neighbours what still has to
 *     travel that way; (n-1)/2 steps, (n^2-1)/8 blocks, both optimal (no tie to balance).
 *   - n = 2: one step; n = 1: none.
 *
 * The kinds of schedule (xchg_torus_t.kind), chosen by the shape alone:
 *   - RING (r = 1 or c = 1): R(p) on the ring.
 *   - AT2 (r and c even): the paper's AT2 for every even r and c. Phase 1 (steps 0 and 1): a
 *     block whose destination differs from its origin in x parity moves one hop in x, in y
 *     parity one hop in y; both: x first for the quadrants (+x,+y) and (-x,-y), y first for the
 *     other two (Table I). Then every block is at a node of its destination's group
 *     G_ij = {x mod 2 = i, y mod 2 = j}. Phase 2 runs R(c/2) on the logical rows of G00 and G11
 *     (nodes 2 apart, a logical hop is 2 hops) and R(r/2) on the logical columns of G01 and
 *     G10 at the same time; phase 3 the other dimension. Every link is used by one group in a
 *     phase. What the paper leaves open, and the simulator settled:
 *       * a node holds a bundle per destination column (row) of its logical ring: 3 columns of
 *         blocks for itself, 2 for the others, 1 at the tie distance; where R(n/2) allows either
 *         way at the tie (n/2 = 2 or n/2 = 2 mod 4) the tie bundle is split in halves, one per
 *         way: blocks whose origin has the node's parity in the other dimension go the ring's
 *         way, the others the opposite way (without the split 4x4 and 12x12 miss Lemma 4);
 *       * the shorter logical ring of a phase is placed on the steps of the longer one where its
 *         messages are not the largest of the step (a dynamic programme over the two per-step
 *         profiles), and may spread one of its steps over two steps, half of each bundle at a
 *         time, split by the same parity as the tie (without this 8x12 and 12x16 miss Lemma 4);
 *       * phase 1 at a tie (a dimension of 2 mod 4 nodes): + when destination and origin have
 *         the same parity in the other dimension, else -.
 *     2 + 2 max(S(r/2), S(c/2)) steps, S(n) = steps of R(n): c/2 + 2 for multiples of 4 with
 *     r <= c, and then r c^2/8 blocks (Lemma 4; checked for r, c in {4, 8, 12, 16}).
 *   - SPLIT (the others: an odd dimension and the other >= 2): every block in two parts, part 0
 *     runs R(c) along its row then R(r) along its column, part 1 the other order, at the same
 *     time (rows and columns use different links). As for AT2 a ring that allows either way at
 *     the tie splits its tie bundle, by the parity of the destination's (first ring) or the
 *     origin's (second ring) coordinate in the other dimension (halves within one part when that
 *     dimension is odd), and the shorter ring is placed, possibly spread, on the longer one's
 *     steps. 2 max(S(r), S(c)) steps.
 * Every block travels a shortest path; no directed link carries two messages in a step.
 *
 * Generalised sizes against the optimum (tests/unit/test_sched_torus.c prints the table and
 * asserts the worst cases): the bound on bytes is the load of the busiest dimension's links,
 * r c^2 / 8 blocks for c even and r (c^2 - 1) / 8 for c odd (c the larger dimension, Lemma 1);
 * start-ups are compared with the paper's at the next shape it covers (imaginary nodes: an even
 * ring of at least 4, a torus of multiples of 4).
 *   - Rings: optimal in bytes (ceil(p^2/8), (p^2-1)/8 for p odd), p/2 or (p-1)/2 steps, never
 *     more than padding.
 *   - AT2 shapes with a dimension of 2 mod 4: 1 % to 25 % more bytes than the bound (2x4 1.25,
 *     2x6 1.22, 12x14 1.13, 2x8 1.13, 6x6 1.11, 6x8 1.04, 10x10 1.04, 16x20 1.02; 2x2 takes 2
 *     blocks against 1), and fewer or as many steps as padding (6x6: 4 against 6).
 *   - SPLIT shapes: the bound or up to 17 % more (3x3, 3x4, 3x5, 5x5, 2x7, 11x13 exact; 5x6 1.02,
 *     4x5 1.08, 6x7 1.11, 7x8 1.16, 8x9 1.16), and about max(r, c) steps where padding takes
 *     max(r, c)/2 + 2: the same up to 7 per dimension, 2 more at 8 to 10 (5x8: 8 against 6), 6 more
 *     at 16 (3x16: 16 against 10).
 *
 * Pure code: no MPI. Memory: xchg_torus_init allocates O(r + c) (freed by xchg_torus_free);
 * a plan O(blocks the node sends and receives), and its store (the node's buffer for messages
 * and relayed blocks) plan.store_units units, at most 3 r c in every shape the unit test runs
 * (and 2.4 at 32x32). A plan receives a relayed block where its next message sends it from
 * (torus.c, "a node's plan"), so a node copies its own blocks into messages once, what arrives
 * for it out of them once, and relayed blocks only where AT2's phases regroup them: under
 * 2 r c copies per node on rings, 1.9 (4x4) to 3.4 (8x12) on AT2 tori, store 1.6 to 2.9 r c.
 * Where that layout would need a store above 3 r c (8x16, 12x12 and larger), the plan also
 * moves the relayed blocks that wait more than a step into slots of their own: 4.4 (8x16) to
 * 4.75 (16x16) r c copies, store 2.1 to 2.4 r c. The paper counts 3 r c (one rearrangement
 * per phase); packing and unpacking every message at every hop took 2.5 (4x4), 4.5 (8x8) and
 * 6.5 (16x16), with a store of 2.0, 2.2 and 2.3 r c.
 */
#ifndef XCHG_SCHED_TORUS_H
#define XCHG_SCHED_TORUS_H

#include <stddef.h>
#include <stdint.h>

enum { XCHG_TORUS_RING = 1, XCHG_TORUS_AT2 = 2, XCHG_TORUS_SPLIT = 3 };

/* Ports: directions out of a node. Port q moves along dimension q % 2 (0: x, 1: y), in the
 * + direction for q < 2. */
enum {
    XCHG_TORUS_XPLUS = 0,
    XCHG_TORUS_YPLUS,
    XCHG_TORUS_XMINUS,
    XCHG_TORUS_YMINUS,
    XCHG_TORUS_NPORTS
};

/* A ring R(n) in one dimension (logical positions 0 .. n-1). */
typedef struct xchg_torus_ring {
    int n;
    int steps;     /* S(n) */
    int split_tie; /* AT2 only: the tie bundle goes half each way (n = 2, or n = 2 mod 4, n >= 6) */
} xchg_torus_ring_t;

typedef struct xchg_torus {
    int rows, cols; /* r x c; a ring is 1 x p */
    int nodes;
    int kind;
    int nparts;      /* 2 for SPLIT (a block moves as two parts), else 1 */
    int phase_steps; /* P: steps of one ring phase (RING: the ring's) */
    int nsteps;
    xchg_torus_ring_t ring[2]; /* the ring of each dimension (AT2: r/2 and c/2; RING: ring[1]) */
    /* where each ring step s of dimension dim runs in its phase: place[dim][2s] (blocks of
     * flip 0) and place[dim][2s+1] (flip 1); equal unless the step is spread over two steps */
    int *place[2];
    /* the other way: the ring step run at phase step k and which half (-1: whole, 0, 1) */
    int *run_step[2], *run_half[2];
    /* per step: the largest message in units (a block; a part for SPLIT) and the most messages
     * one node sends */
    long *step_units;
    int *step_msgs;
} xchg_torus_t;

/* Build the schedule of an r x c torus (r, c >= 1; a dimension of 1 makes it a ring).
 * 0 on success, -1 when memory is exhausted or the shape is invalid. */
int xchg_torus_init(xchg_torus_t *t, int rows, int cols);
void xchg_torus_free(xchg_torus_t *t);

/* Bytes of part `part` of a block of b bytes (the whole block when nparts = 1) and its offset. */
size_t xchg_torus_part_bytes(const xchg_torus_t *t, size_t block_bytes, int part);
size_t xchg_torus_part_offset(const xchg_torus_t *t, size_t block_bytes, int part);

/* Transmission in units summed over the steps (sum of step_units), and the hops between two
 * nodes along a shortest path. */
long xchg_torus_units(const xchg_torus_t *t);
int xchg_torus_distance(const xchg_torus_t *t, int a, int b);

/* Neighbour of node at `hops` hops out of port. */
int xchg_torus_neighbour(const xchg_torus_t *t, int node, int port, int hops);

/* One leg of a block's route: at step `step` it leaves `node` out of `port` for `hops` hops. */
typedef struct xchg_torus_leg {
    int step, node, port, hops;
} xchg_torus_leg_t;

/* The route of part `part` of the block from origin to dest (origin != dest): its legs in step
 * order, at most max of them; returns how many there are. */
int xchg_torus_route(const xchg_torus_t *t, int origin, int dest, int part, xchg_torus_leg_t *legs,
                     int max);

/* A block of a message. */
typedef struct xchg_torus_block {
    int origin, dest, part;
} xchg_torus_block_t;

/* The message that node sends out of port at step: its blocks in message order (at most max are
 * written), the peer it goes to and its hops. Returns the number of blocks (0: no message), or
 * -1 when there are more than max. */
int xchg_torus_message(const xchg_torus_t *t, int step, int node, int port,
                       xchg_torus_block_t *blocks, int max, int *peer, int *hops);

/* The senders of node's incoming messages at step: up to XCHG_TORUS_NPORTS (node, port) pairs
 * in the order the ports are numbered (the order in which receives must be posted when two come
 * from one node). Returns how many; some may turn out empty. */
int xchg_torus_senders(const xchg_torus_t *t, int step, int node, int *from, int *port);

/* A node's plan: what it sends and receives in every step, where every message is, and the
 * local copies around each step (the plan's section of torus.c says how it lays them out). */
enum { XCHG_TORUS_AT_SEND = 0, XCHG_TORUS_AT_RECV, XCHG_TORUS_AT_STORE };
typedef struct xchg_torus_loc {
    int where; /* XCHG_TORUS_AT_SEND: the send buffer's block `index` (a destination);
                  _AT_RECV: the receive buffer's block `index` (an origin); _AT_STORE: the
                  node's store, `pos` blocks (of the part's size) after unit `index` */
    int index;
    int pos;
} xchg_torus_loc_t;

typedef struct xchg_torus_xfer {
    int peer;
    int part;
    int nblocks;
    xchg_torus_loc_t at; /* its first block; the others follow it (a message is contiguous) */
} xchg_torus_xfer_t;

/* nblocks blocks (of the part's size) from `from` to `to`, consecutive on both sides (in a
 * buffer only when a block is one part: t->nparts = 1). */
typedef struct xchg_torus_copy {
    int part;
    int nblocks;
    xchg_torus_loc_t from, to;
} xchg_torus_copy_t;

typedef struct xchg_torus_plan {
    int nsteps;
    int *send_first, *recv_first;   /* [nsteps + 1]: step k's transfers are sends[send_first[k] ..
                                       send_first[k+1]), in port order; likewise recvs */
    int *pack_first, *unpack_first; /* [nsteps + 1]: step k's copies before its exchange are
                                       copies[pack_first[k] .. unpack_first[k]), after it
                                       copies[unpack_first[k] .. pack_first[k+1]) */
    xchg_torus_xfer_t *sends, *recvs;
    xchg_torus_copy_t *copies;
    int store_units;       /* size of the store in units (a block; a part for SPLIT) */
    long packed, unpacked; /* blocks copied into messages and out of them to the receive buffer
                              (the copies the algorithm makes besides the block to self) */
    long moved;            /* relayed blocks copied out of a received message into a slot of
                              their own, to wait for a later step (and copied again, counted in
                              packed, into the message they leave in) */
} xchg_torus_plan_t;

/* The plan of node; 0 on success, -1 when memory is exhausted. */
int xchg_torus_plan_init(const xchg_torus_t *t, int node, xchg_torus_plan_t *plan);
void xchg_torus_plan_free(xchg_torus_plan_t *plan);

/* "RxC" or "P" into r and c (P means a ring: r = 1, c = P); a dimension of 1 makes a ring. 0 on
 * success, -1 when it is not that form or a dimension is 0 or above 1e9. */
int xchg_torus_parse_dims(const char *text, int *rows, int *cols);

/* The shape a call runs on, from the first of: dims in
 * params, the communicator's periodic Cartesian topology, XCHG_TORUS (shim/config.c); 0 and the
 * shape (a ring as 1 x P), or -1 and *why when there is none or it does not have comm_size
 * nodes. And the registry's predicate, which refuses the call then. */
struct xchg_call;
struct xchg_params;
int xchg_alltoall_torus_shape(const struct xchg_call *call, const struct xchg_params *params,
                              int *rows, int *cols, const char **why);
int xchg_alltoall_torus_applies(const struct xchg_call *call, const struct xchg_params *params,
                                const char **why);

#endif

/*
 * factor.h: the schedule of the hierarchical factor algorithm of Sanders and Traff ("The
 * hierarchical factor algorithm for all-to-all communication", 2002): who exchanges with whom in
 * every phase, round and step. No MPI: algos/alltoall_hier.c and algos/alltoallv_hier.c run it,
 * tuning/cost_hier.c prices it, tests/unit/test_sched_factor.c checks it and build/xchg-sched
 * prints it.
 *
 * Terms (the paper's, Section 3). Nodes hold ranks; l(u) is the local index of rank u among
 * its node's ranks in rank order. Nodes are ordered by (size, id): the node order U < V. A
 * phase keeps the active nodes, those with at least `current` ranks, where current runs over
 * the distinct node sizes S_1 < S_2 < ... and done is the size before it (0 first); d =
 * current - done. A phase has one round per 1-factor of its A active nodes (Lemma 1: factor i
 * pairs the nodes at positions a and (i - a) mod A of the node order, a node may be paired
 * with itself). In a round, paired nodes U < V exchange: every u of U with done <= l(u) <
 * current with every v of V, one exchange (m_uv one way, m_vu the other) per step, d size(V)
 * steps. A node paired with itself sends inside the node.
 *
 * Steps. The paper counts a node's messages inside the node as its steps too, and its
 * Theorem 1 says the algorithm takes as many steps as the ranks of one node send, the block to
 * self included: max size * p (xchg_factor_paper_steps with copies). Fig. 3's 15 steps for
 * nodes of 1, 2 and 3 ranks count no copies (3 * 6 = 18 with them). Executed here:
 *   - inter-node: the d size(V) exchanges of a pair are steps 0 .. d size(V) - 1, step
 *     t = i + d q being u = done + i with v = (i + q) mod size(V) (a diagonal order: any d
 *     consecutive steps have distinct senders and distinct receivers);
 *   - inside a node, shared memory has no single port, so a node paired with itself runs its
 *     messages like pairwise exchange: in step q (0 .. size - 2) every sender u sends to the
 *     rank l(u) + 1 + q of the node, all at once. The block to self is no step (a local copy
 *     before the rounds). For nodes of 1, 2, 3 ranks this gives Fig. 3's 15 steps.
 *   - with k ports, steps k b .. k b + k - 1 of every pair form the round's batch b (one
 *     xchg_exchange): no node has more than k inter-node steps in flight.
 * Modes:
 *   XCHG_FACTOR_PLAIN: Fig. 2 as it stands: a node paired with itself in phase ph sends from
 *     its ranks done <= l(u) < current.
 *   XCHG_FACTOR_EARLY: Section 4's improvement: a node does all its intra-node work in the
 *     round of the first phase where it is paired with itself (every node has exactly one such
 *     round per phase), all its ranks sending at once; its later self-paired rounds are empty,
 *     so rounds without inter-node traffic (Fig. 3's note; phases of one node; the all-local
 *     round of a phase of two nodes) vanish. Never more steps than PLAIN: in the first phase
 *     all senders at once take the size - 1 steps that PLAIN's take, and later there are none.
 */
#ifndef XCHG_SCHED_FACTOR_H
#define XCHG_SCHED_FACTOR_H

#include <stddef.h>

enum { XCHG_FACTOR_PLAIN = 0, XCHG_FACTOR_EARLY = 1 };

/* The node sizes in node order, as runs: what every count depends on. */
typedef struct xchg_factor_shape {
    int nnodes;             /* nodes with ranks */
    int nphases;            /* distinct sizes */
    const int *phase_size;  /* [nphases]: the distinct sizes, ascending (current of each phase) */
    const int *phase_first; /* [nphases]: position of the first node of that size; the nodes
                               active in phase ph are the positions phase_first[ph] .. nnodes-1 */
} xchg_factor_shape_t;

/* The schedule of one layout. */
typedef struct xchg_factor {
    xchg_factor_shape_t shape;
    int nranks;
    int mode;
    int max_size;       /* ranks of the largest node */
    const int *node_of; /* [nranks]: the caller's */
    int *order;         /* [shape.nnodes]: node id at each position of the node order */
    int *pos;           /* [nnodes]: position of each node id, -1 for a node without ranks */
    int *first;         /* [nnodes + 1]: node x's ranks are members[first[x] .. first[x+1]) */
    int *members;       /* [nranks]: ranks grouped by node, in rank order */
    int *local;         /* [nranks]: l(u) */
} xchg_factor_t;

/* One step of one rank in one round. */
typedef struct xchg_factor_slot {
    int step; /* the step of the round; with k ports it runs in batch step / k */
    int peer; /* the other rank */
    int send; /* 1: this rank sends its block for peer */
    int recv; /* 1: this rank receives peer's block */
} xchg_factor_slot_t;

/* Bytes of workspace xchg_factor_init needs for nranks ranks on nnodes node ids. */
size_t xchg_factor_workspace_bytes(int nranks, int nnodes);

/* The schedule of nranks ranks, rank r on node node_of[r] (0 .. nnodes-1; ids without ranks are
 * left out) in the given mode; node_of must outlive f. 0, or -1 when a node id is out of range
 * or nranks < 1. */
int xchg_factor_init(xchg_factor_t *f, int nranks, int nnodes, const int *node_of, int mode,
                     void *workspace);

/* The rounds of a phase (its active nodes). */
int xchg_factor_nrounds(const xchg_factor_shape_t *s, int phase);

/* done and current of a phase. */
void xchg_factor_phase_range(const xchg_factor_shape_t *s, int phase, int *done, int *current);

/* Ranks of the node at position a of the node order. */
int xchg_factor_size_at(const xchg_factor_shape_t *s, int a);

/* Position (in the node order) of the partner of the node at position a in a round; -1 when
 * that node is not active in the phase. */
int xchg_factor_partner_at(const xchg_factor_shape_t *s, int phase, int round, int a);

/* A round's steps in the given mode: the longest inter-node pair (d size(V), 0 without one)
 * and the longest node paired with itself; the round takes the larger. O(1). */
void xchg_factor_round_steps(const xchg_factor_shape_t *s, int mode, int phase, int round,
                             int *exchange_steps, int *local_steps);

/* The paper's step count (Fig. 2, a node's messages one after the other): sum over rounds of
 * the most messages of a pair of nodes, with the blocks to self (copies = 1; Theorem 1: max
 * size * p) or without them (copies = 0; Fig. 3's 15). */
long xchg_factor_paper_steps(const xchg_factor_shape_t *s, int copies);

/* Executed steps (k = 1) and batches with k ports: sums over rounds of the round's steps and of
 * ceil(steps / k). */
long xchg_factor_steps(const xchg_factor_shape_t *s, int mode);
long xchg_factor_batches(const xchg_factor_shape_t *s, int mode, int nports);

/* The most entries xchg_factor_rank_slots writes for one round. */
int xchg_factor_max_slots(const xchg_factor_t *f);

/* Rank's steps in a round, by increasing step (an exchange is one entry with send and recv;
 * inside a node a step may hold a send and a receive with different peers). Returns how many
 * were written to out (at most xchg_factor_max_slots). */
int xchg_factor_rank_slots(const xchg_factor_t *f, int phase, int round, int rank,
                           xchg_factor_slot_t *out);

/* The registry's predicate for both collectives (factor.c): every call but those
 * whose node layout summary is inconsistent, or with more than XCHG_FACTOR_MAX_NODE_RANKS ranks on
 * a node (the steps of a pair, up to that squared, are ints). A NULL topology is one node. */
#define XCHG_FACTOR_MAX_NODE_RANKS 46340
struct xchg_call;
struct xchg_params;
int xchg_alltoall_hier_applies(const struct xchg_call *call, const struct xchg_params *params,
                               const char **why);

#endif

/*
 * cost.h: the cost model of every algorithm, in the linear model of Bruck et al. ("Efficient
 * algorithms for all-to-all communications in multiport message-passing systems", 1997,
 * Section 1.2):
 *     predicted time = C1 * beta + C2 * tau + (bytes copied locally) * rho,
 * with k simultaneous messages costing beta + m tau (1 + port_share (k - 1)) per round, and a
 * call's local copies at rho_cached where they fit the cache (xchg_cost_copy).
 * Two levels: a call whose communicator spans nodes is priced with the inter-node constants
 * (xchg_machine_for), and a node's injection limit and the gap it spends on each message out
 * of it (LogGP's g: gap_inter) slow its rounds (xchg_cost_round).
 * Each function completes the zero fields of params with the values the model prefers and
 * returns the predicted time in seconds, or INFINITY when the algorithm cannot serve the call.
 * Pure code: no MPI calls.
 */
#ifndef XCHG_COST_H
#define XCHG_COST_H

#include "../algos/sched/types.h"

/* Built-in constants used when no tuning table gives measured ones. */
extern const xchg_machine_t xchg_machine_default;

/* The constants that price call's messages (the model of a flat algorithm, whose every round
 * has some rank whose message leaves its node once the communicator spans nodes):
 *  - one node (call->topo NULL or topo->nnodes <= 1): machine as it is;
 *  - more nodes: beta and tau are beta_inter and tau_inter (where they are not 0), with an
 *    injection limit node_share = max_node_ranks / inject, and with a gap at the node
 *    node_gap = max_node_ranks gap_inter (see xchg_machine_t).
 * The same call gives the same constants again when its result is passed back in. */
xchg_machine_t xchg_machine_for(const xchg_call_t *call, const xchg_machine_t *machine);

/* The bytes of one piece of a message between nodes (xchg_ctx_t.cut_inter, algos/round.c), 0
 * for whole messages: XCHG_CUT_INTER (16 KiB) where the link carries such a piece in at least
 * XCHG_CUT_GAPS gaps at a node (gap_inter, else beta_inter, else beta; tau_inter, else tau), so
 * that a piece's own start-up hides behind the bytes of those before it. */
#define XCHG_CUT_INTER ((size_t)16 << 10)
#define XCHG_CUT_GAPS 4.0
size_t xchg_cut_inter(const xchg_machine_t *machine);

/* Seconds per pass through a node's shared segment: machine->sync where a table measured it,
 * else a message's start-up inside the node (beta). */
double xchg_cost_sync(const xchg_machine_t *machine);

/* Seconds for every rank of call's busiest node to copy `bytes` at once (the shared-memory
 * algorithms, which copy each byte in and out): rho a byte while the node's ranks are few or the
 * bytes fit a rank's share of the caches, and slower beyond that once more of them copy than the
 * node's memory serves at full speed (tuning/cost_base.c, NODE_COPY_STREAMS, NODE_COPY_CACHED). */
double xchg_cost_node_copies(const xchg_call_t *call, const xchg_machine_t *machine, double bytes);
/* Seconds of a call's local copies of bytes in all (not through a node's segment): bytes rho,
 * or bytes rho_cached when they are at most cached_bytes. */
double xchg_cost_copy(const xchg_machine_t *machine, double bytes);
/* Seconds on the wire of one message of bytes: bytes tau, with tau_large past large_from. */
double xchg_cost_wire(const xchg_machine_t *machine, double bytes);
/* The least seconds per byte of any message (m times it is at most xchg_cost_wire(m)): the rate
 * of a lower bound. */
double xchg_cost_least_tau(const xchg_machine_t *machine);

/* Time of one round with nmsgs messages of at most max_bytes each in flight on every rank:
 * beta + max(max_bytes tau (1 + port_share (nmsgs - 1)),
 *            nmsgs (max_bytes tau node_share + node_gap)). */
double xchg_cost_round(const xchg_machine_t *machine, int nmsgs, size_t max_bytes);

/* The time of native's calls measured at MPI_Init (xchg_machine_t.native_small at 1 B, native_mid
 * at XCHG_NATIVE_MID_BYTES: linear between, the larger's beyond) that native's price never falls
 * below for this call, or 0 when none applies (another size, no bytes, nothing measured). */
double xchg_cost_native_floor(const xchg_call_t *call, const xchg_machine_t *machine);
double xchg_cost_native(const xchg_call_t *call, const xchg_machine_t *machine,
                        xchg_params_t *params);
double xchg_cost_alltoall_pairwise(const xchg_call_t *call, const xchg_machine_t *machine,
                                   xchg_params_t *params);
double xchg_cost_alltoall_radix(const xchg_call_t *call, const xchg_machine_t *machine,
                                xchg_params_t *params);
double xchg_cost_alltoall_torus(const xchg_call_t *call, const xchg_machine_t *machine,
                                xchg_params_t *params);
double xchg_cost_alltoall_hier(const xchg_call_t *call, const xchg_machine_t *machine,
                               xchg_params_t *params);
double xchg_cost_alltoallv_hier(const xchg_call_t *call, const xchg_machine_t *machine,
                                xchg_params_t *params);
double xchg_cost_allgather_ring(const xchg_call_t *call, const xchg_machine_t *machine,
                                xchg_params_t *params);
double xchg_cost_allgather_circulant(const xchg_call_t *call, const xchg_machine_t *machine,
                                     xchg_params_t *params);
double xchg_cost_alltoallv_pairwise(const xchg_call_t *call, const xchg_machine_t *machine,
                                    xchg_params_t *params);
/* the shm algorithms of all three collectives (tuning/cost_shm.c) */
double xchg_cost_shm(const xchg_call_t *call, const xchg_machine_t *machine,
                     xchg_params_t *params);
/* the node algorithms of all three collectives (tuning/cost_node.c) */
double xchg_cost_node(const xchg_call_t *call, const xchg_machine_t *machine,
                      xchg_params_t *params);
/* The time of one alltoall transpose of call->block_bytes on call's communicator, by a model
 * of the caller's choice (twophase's inner alltoall left to selection). */
typedef double xchg_transpose_cost_fn(const xchg_call_t *transpose, const xchg_machine_t *machine);
/* twophase (tuning/cost_twophase.c): the inner transposes are priced by params->inner's model
 * when it is set, else by auto_inner (the registry's entry passes the best of its alltoall
 * models: xchg_cost_alltoallv_twophase, tuning/registry.h). */
double xchg_cost_twophase(const xchg_call_t *call, const xchg_machine_t *machine,
                          xchg_params_t *params, xchg_transpose_cost_fn *auto_inner);

#endif

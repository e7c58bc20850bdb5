/*
 * sim.h: the simulator's parts (docs/sim.md).
 *
 *   engine.c  p simulated ranks in one process: each runs the unmodified algorithm function on
 *             its own stack (ucontext coroutines, switched only inside xchg_exchange), with its
 *             own xchg_ctx_t; xchg_exchange is implemented here, in memory, instead of
 *             algos/round.c. Every round of every rank is logged (sends, receives, peers, bytes).
 *   net.c     the network models (flat, nodes, torus): the cost of every logged message, then a
 *             deterministic replay of the log on a virtual clock.
 *   check.c   the workloads: buffers filled from a formula, guards, every byte checked.
 *   main.c    build/xchg-sim: arguments, one run or a sweep, the model's prediction beside it.
 */
#ifndef XCHG_SIM_H
#define XCHG_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "../algos/xchg.h"

/* The log of one rank: its rounds, and in them its sends and receives in posting order. */
typedef struct sim_send {
    int32_t peer;
    int32_t round; /* the sender's round (its index in sim_rank_t.rounds) */
    uint64_t bytes;
    double cost; /* seconds from the round's start until the message has arrived (net.c) */
} sim_send_t;

typedef struct sim_recv {
    int32_t peer;      /* the sender */
    uint32_t send_idx; /* the matching send: index in the sender's sends log */
} sim_recv_t;

typedef struct sim_round {
    double start, end; /* virtual clock (net.c) */
    uint32_t first_send, nsends, first_recv, nrecvs;
} sim_round_t;

/* One simulated rank. ctx comes first: the engine finds the rank from the context. */
typedef struct sim_rank {
    xchg_ctx_t ctx;
    ucontext_t uc;
    char *stack;
    size_t stack_len;
    int done, blocked, pending;
    /* the round in progress: the caller's message lists, matched flags, and (for long lists)
     * the indices sorted by peer so a match is found by binary search */
    const xchg_msg_t *sends, *recvs;
    int nsends, nrecvs, cap;
    uint8_t *smatched, *rmatched;
    int *sorder, *rorder;
    /* the log */
    sim_round_t *rounds;
    int nrounds, rounds_cap;
    sim_send_t *slog;
    size_t nslog, slog_cap;
    sim_recv_t *rlog;
    size_t nrlog, rlog_cap;
    int coll_first; /* the first round of the collective (before it: the agreement) */
} sim_rank_t;

/* A world of p ranks. */
typedef struct sim_world {
    int p;
    sim_rank_t *ranks;
    int *node_of, *node_size, nnodes;
    xchg_topo_t topo;
    ucontext_t sched;
    int *queue; /* ready ranks, a ring of p */
    int qhead, qlen, current, ndone;
    int32_t *order; /* (rank, round) pairs in the order the rounds completed */
    size_t norder, order_cap;
    int failed;
    char error[512];
    int corrupt; /* tests of the checks, on the first message to rank p - 1 from another rank:
                    1 flips its last byte (non-empty only), 2 makes its receive a byte longer */
    uint64_t messages, bytes; /* between different ranks */
} sim_world_t;

typedef void sim_body_fn(xchg_ctx_t *ctx, void *arg);

/* engine.c. node_of[p] (NULL: one node); topo is copied into every context. */
sim_world_t *sim_world_new(int p, const int *node_of, const xchg_topo_t *topo, size_t stack_bytes);
/* Run body on every rank; 0 when every rank returned, else -1 with world->error set
 * (a message size mismatch, a bad peer, a deadlock, no memory). */
int sim_world_run(sim_world_t *w, sim_body_fn *body, void *arg);
void sim_world_free(sim_world_t *w);
/* Called by a rank's body: the rounds from here on are the collective's (before: agreement). */
void sim_mark_collective(xchg_ctx_t *ctx);
sim_rank_t *sim_rank_of(xchg_ctx_t *ctx);

/* net.c */
enum { SIM_NET_FLAT = 0, SIM_NET_NODES = 1, SIM_NET_TORUS = 2 };
typedef struct sim_net {
    int kind;
    xchg_machine_t machine; /* beta, tau, rho, port_share; beta_inter, tau_inter, inject */
    int rows, cols;         /* torus: rank = x * cols + y */
} sim_net_t;

typedef struct sim_times {
    double agree;   /* the agreement rounds (alltoallv), ending at the latest rank */
    double coll;    /* the collective, from the end of the agreement to its last rank's end */
    int rounds_max; /* rounds of the collective, most and fewest over the ranks */
    int rounds_min;
    uint64_t sent_max; /* bytes a rank sent to other ranks in the collective, the most */
} sim_times_t;

/* Cost every logged message on net, then replay; 0, or -1 with world->error set. */
int sim_net_replay(sim_world_t *w, const sim_net_t *net, sim_times_t *times);

#endif

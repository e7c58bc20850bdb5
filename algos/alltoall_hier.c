/*
 * alltoall_hier.c: the hierarchical factor algorithm for MPI_Alltoall (name "hier"), for
 * nodes that hold different numbers of ranks, k ports.
 *
 * Paper: Sanders, Traff, "The hierarchical factor algorithm for all-to-all communication"
 * (../shared/papers/003_9e1d01d36fc0153f.txt), algorithm ClusteredAllToAll (Fig. 2) over the
 * 1-factorization of Lemma 1, with Section 4's improvement. The schedule is
 * algos/sched/factor.c (terms, step order and modes in factor.h), shared with the cost model
 * (tuning/cost_hier.c), the unit test and build/xchg-sched.
 *
 * Phases. The block to self is copied first. Then phase after phase, one per distinct node
 * size S_1 < S_2 < ... (done = the previous size, current = this one): the nodes with at least
 * current ranks are active, ordered by (size, node id); round i of the phase pairs the active
 * nodes at positions a and (i - a) mod A. Paired nodes U < V: every u of U with
 * done <= l(u) < current exchanges blocks with every v of V, one exchange per step and pair of
 * nodes (a node's single port), k steps per batch with k ports. A node paired with itself
 * exchanges inside the node, pairwise-like, and only once (Section 4: in the first phase; see
 * XCHG_FACTOR_EARLY). Every batch is one xchg_exchange() of this rank's steps in it, straight
 * between the user's buffers; a rank skips the batches it has no step in. Ranks do not wait
 * for each other beyond their own messages: the k-port bound holds per batch of the schedule,
 * and every message is in the same (phase, round, batch) at both ends, which each rank runs in
 * that order, so the rounds cannot deadlock.
 *
 * Cost (the paper's single-port model, generalised to k ports): C1 = sum over rounds of
 * ceil(L / k) batches, L the round's longest pair (inter-node d size(V); inside a node
 * size - 1, first phase only); for k = 1 and equal node sizes S (N nodes, N >= 3), C1 = N S^2.
 * Theorem 1: the paper's count (a node's messages one at a time, blocks to self included) is
 * max size * p. C2 = b per step (b = block bytes): b C1 with k steps of b bytes in flight per
 * node and batch. Local copies: the block to self.
 * Restrictions: none in practice (the predicate, xchg_alltoall_hier_applies, refuses an
 * inconsistent layout summary and more than 46340 ranks on a node); any layout (the ranks of a
 * node need not be consecutive), one-rank nodes, one node (then it is pairwise exchange inside
 * the node), p = 1 (the copy only).
 *
 * Scratch (per call, pushed on the context's scratch stack and released at the end):
 *   [ the schedule's workspace: O(p + nodes) ints ]
 *   [ one round's steps | sends | receives ]   (2 max size entries each)
 */
#include <string.h>

#include "xchg.h"
#include "sched/factor.h"

int xchg_alltoall_hier_applies(const xchg_call_t *call, const xchg_params_t *params,
                               const char **why)
{
    const xchg_topo_t *topo = call->topo;
    (void)params;
    if (!topo)
        return 1; /* a tool's call: one node */
    if (topo->nnodes < 1 || topo->nnodes > call->comm_size || topo->min_node_ranks < 1 ||
        topo->max_node_ranks < topo->min_node_ranks ||
        (long)topo->max_node_ranks * topo->nnodes < call->comm_size) {
        *why = "the communicator's node layout summary is inconsistent";
        return 0;
    }
    if (topo->max_node_ranks > XCHG_FACTOR_MAX_NODE_RANKS) {
        *why = "more than 46340 ranks on one node (a pair's step numbers would overflow)";
        return 0;
    }
    return 1;
}

/* One round: this rank's steps, batch by batch (k steps of the round per batch). */
static int run_round(xchg_ctx_t *ctx, const xchg_factor_slot_t *slots, int nslots, int nports,
                     const char *send, char *recv, size_t block_bytes, xchg_msg_t *sends,
                     xchg_msg_t *recvs)
{
    int rc = MPI_SUCCESS;
    for (int s = 0; s < nslots && rc == MPI_SUCCESS;) {
        int batch = slots[s].step / nports, nsends = 0, nrecvs = 0;
        for (; s < nslots && slots[s].step / nports == batch; s++) {
            int peer = slots[s].peer;
            if (slots[s].send)
                sends[nsends++] =
                    (xchg_msg_t){peer, (void *)(send + (size_t)peer * block_bytes), block_bytes};
            if (slots[s].recv)
                recvs[nrecvs++] =
                    (xchg_msg_t){peer, recv + (size_t)peer * block_bytes, block_bytes};
        }
        rc = xchg_exchange(ctx, sends, nsends, recvs, nrecvs);
    }
    return rc;
}

int xchg_alltoall_hier(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t block_bytes,
                       const xchg_params_t *params)
{
    const char *send = sendbuf;
    char *recv = recvbuf;
    int p = ctx->size, rank = ctx->rank, rc = MPI_SUCCESS, nslots, most;
    int nports = params->nports > 0 ? params->nports : 1;
    xchg_factor_t sched;
    xchg_factor_slot_t *slots;
    xchg_msg_t *sends, *recvs;
    xchg_mark_t mark = xchg_scratch_mark(ctx);
    void *workspace;

    /* the schedule of this communicator's layout, and room for one round */
    workspace = xchg_scratch_push(ctx, xchg_factor_workspace_bytes(p, ctx->nnodes));
    if (!workspace) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    if (xchg_factor_init(&sched, p, ctx->nnodes, ctx->node_of, XCHG_FACTOR_EARLY, workspace) != 0) {
        rc = MPI_ERR_INTERN;
        goto out;
    }
    most = xchg_factor_max_slots(&sched);
    slots = xchg_scratch_push(ctx, (size_t)most * (sizeof *slots + 2 * sizeof(xchg_msg_t)));
    if (!slots) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    sends = (xchg_msg_t *)(slots + most);
    recvs = sends + most;

    memcpy(recv + (size_t)rank * block_bytes, send + (size_t)rank * block_bytes, block_bytes);
    /* phases over the node sizes; rounds over the 1-factors of the active nodes */
    for (int ph = 0; ph < sched.shape.nphases; ph++) {
        if (sched.pos[ctx->node] < sched.shape.phase_first[ph])
            break; /* this rank's node has left: it has exchanged everything */
        for (int i = 0; i < xchg_factor_nrounds(&sched.shape, ph); i++) {
            nslots = xchg_factor_rank_slots(&sched, ph, i, rank, slots);
            rc = run_round(ctx, slots, nslots, nports, send, recv, block_bytes, sends, recvs);
            if (rc != MPI_SUCCESS)
                goto out;
        }
    }
out:
    xchg_scratch_release(ctx, mark);
    return rc;
}

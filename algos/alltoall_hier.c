/*
 * alltoall_hier.c: the hierarchical factor algorithm for MPI_Alltoall (name "hier"), for
 * nodes that hold different numbers of ranks, k ports.
 *
 * Paper: Sanders, Traff, "The hierarchical factor algorithm for all-to-all communication", 2002:
 * algorithm ClusteredAllToAll (Fig. 2) over the 1-factorization of Lemma 1, with Section 4's
 * improvement. The schedule is algos/sched/factor.c (terms, step order and modes in factor.h),
 * shared with the cost model (tuning/cost_hier.c), the unit test and build/xchg-sched.
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
 * It runs as MPI_Alltoallv's hier (alltoallv_hier.c) with every message block_bytes long.
 * Scratch (per call, pushed on the context's scratch stack and released at the end):
 *   [ byte counts and offsets: 2p sizes ] then alltoallv_hier's:
 *   [ the schedule's workspace: O(p + nodes) ints ]
 *   [ one round's steps | sends | receives ]   (2 max size entries each)
 */
#include <string.h>

#include "xchg.h"
#include "sched/factor.h"

/* Equal blocks are a special case of MPI_Alltoallv's: the same schedule and rounds
 * (alltoallv_hier.c), with every message block_bytes long at j * block_bytes. */
int xchg_alltoall_hier(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t block_bytes,
                       const xchg_params_t *params)
{
    int p = ctx->size, rc;
    xchg_mark_t mark = xchg_scratch_mark(ctx);
    size_t *bytes = xchg_scratch_push(ctx, 2 * (size_t)p * sizeof *bytes), *offs;

    if (!bytes)
        return MPI_ERR_NO_MEM;
    offs = bytes + p;
    for (int j = 0; j < p; j++) {
        bytes[j] = block_bytes;
        offs[j] = (size_t)j * block_bytes;
    }
    rc = xchg_alltoallv_hier(ctx, sendbuf, bytes, offs, recvbuf, bytes, offs, NULL, params, NULL);
    xchg_scratch_release(ctx, mark);
    return rc;
}

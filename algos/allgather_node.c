/*
 * allgather_node.c: MPI_Allgather through each node's shared segment, with the nodes' blocks
 * concatenated between one leader per node (name "node", key k); for any node layout.
 *
 * Paper: Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient Algorithms for All-to-All
 * Communications in Multiport Message-Passing Systems", 1997, Section 4 (the circulant
 * concatenation, k ports), over nodes instead of ranks; plan algos/sched/node.c.
 *
 * The half holds the whole result, every node's ranks' blocks (a piece of c bytes of each) in
 * node x's relative order, node (x + d) mod N at chunk d, its ranks in rank order:
 *
 *   half:  | chunk 0: x's blocks | chunk 1: node x+1's | ... | chunk N-1: node x-1's |
 *
 * A pass (a piece of c bytes of every block):
 *   gather    every rank copies its piece into chunk 0; the node synchronises;
 *   exchange  the leader (the node's lowest rank) runs ceil(log_{k+1} N) rounds: in round s,
 *             with dist = (k + 1)^s, for z = 1 .. k (while z dist < N) it sends chunks
 *             0 .. count - 1 (count = min(dist, N - z dist)) to node x - z dist's leader and
 *             receives chunks z dist .. z dist + count - 1 from node x + z dist's (all of them
 *             contiguous in the half), a round's messages at once; the node synchronises;
 *   broadcast every rank copies every other rank's piece out of the half.
 * c = the half's share per block (rounded down to 64): ceil(b / c) passes, equal on all ranks.
 * Cost (tuning/cost_node.c): per pass two synchronisations and the leader's rounds (a start-up
 * each, a gap a message), whose messages add up to (p - n_x) c bytes; every rank copies its
 * block in and the (p - 1) others out. k = 1 is Bruck's one port; the model takes k = N - 1
 * (one round) where that is more than 5 % faster.
 * Restrictions: the predicate (xchg_node_applies: every node's ranks share memory, a byte of
 * every block fits XCHG_SHM_BYTES). Without a segment (agreed) it runs circulant (k = 1).
 */
#include <string.h>

#include "node.h"
#include "sched/shm.h"

/* The leader's rounds of one pass: pieces of `piece` bytes, chunk_at in blocks; room in
 * msgs, sends and recvs for a round's messages. */
static int leader_rounds(xchg_ctx_t *ctx, const xchg_node_layout_t *lay, const size_t *chunk_at,
                         char *half, size_t piece, int ports, xchg_node_gather_msg_t *msgs,
                         xchg_msg_t *sends, xchg_msg_t *recvs)
{
    int x = ctx->node, nn = ctx->nnodes, rc = MPI_SUCCESS;
    for (int s = 0; s < xchg_node_gather_rounds(nn, ports) && rc == MPI_SUCCESS; s++) {
        int n = xchg_node_gather_round(nn, ports, x, s, msgs);
        for (int i = 0; i < n; i++) {
            const xchg_node_gather_msg_t *m = &msgs[i];
            sends[i] = (xchg_msg_t){lay->members[lay->first[m->to]], half,
                                    (chunk_at[m->count] - chunk_at[0]) * piece};
            recvs[i] = (xchg_msg_t){lay->members[lay->first[m->from]],
                                    half + chunk_at[m->first] * piece,
                                    (chunk_at[m->first + m->count] - chunk_at[m->first]) * piece};
        }
        rc = xchg_exchange(ctx, sends, n, recvs, n);
    }
    return rc;
}

/* Every other rank's piece out of the half, at byte `at` of its block. */
static void broadcast_out(const xchg_ctx_t *ctx, const xchg_node_layout_t *lay,
                          const size_t *chunk_at, const char *half, size_t piece, char *recv,
                          size_t block_bytes, size_t at, size_t n)
{
    for (int r = 0; r < ctx->size; r++) {
        int rel = (lay->node_of[r] - ctx->node + ctx->nnodes) % ctx->nnodes;
        if (r != ctx->rank)
            xchg_copy(recv + (size_t)r * block_bytes + at,
                      half + (chunk_at[rel] + (size_t)lay->local[r]) * piece, n);
    }
}

int xchg_allgather_node(xchg_ctx_t *ctx, const void *sendblock, void *recvbuf, size_t block_bytes,
                        const xchg_params_t *params)
{
    char *recv = recvbuf, *own = recv + (size_t)ctx->rank * block_bytes;
    int p = ctx->size, rc, nn = ctx->nnodes;
    /* k as given, at most N - 1 (one round), at least 1 */
    int ports = params->nports < nn ? params->nports : nn - 1;
    size_t piece, *chunk_at;
    xchg_node_layout_t lay;
    xchg_node_gather_msg_t *msgs;
    xchg_msg_t *sends;
    xchg_mark_t mark = xchg_scratch_mark(ctx);

    if (sendblock != own)
        xchg_copy(own, sendblock, block_bytes);
    if (p == 1 || block_bytes == 0)
        return MPI_SUCCESS;
    rc = xchg_node_layout_push(ctx, &lay);
    ports = ports > 1 ? ports : 1;
    chunk_at = xchg_scratch_push(ctx, ((size_t)ctx->nnodes + 1) * sizeof *chunk_at);
    msgs = xchg_scratch_push(ctx, (size_t)ports * sizeof *msgs);
    sends = xchg_scratch_push(ctx, 2 * (size_t)ports * sizeof *sends);
    if (rc != MPI_SUCCESS || !chunk_at || !msgs || !sends) {
        rc = rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM;
        goto out;
    }
    rc = ctx->shm_reserve ? ctx->shm_reserve(ctx, xchg_shm_need(XCHG_ALLGATHER, p, block_bytes, 0))
                          : MPI_ERR_OTHER;
    piece = rc == MPI_SUCCESS ? ctx->shm->half_bytes / (size_t)p : 0;
    if (piece == 0) {
        xchg_params_t one = {.nports = 1};
        xchg_scratch_release(ctx, mark);
        return xchg_allgather_circulant(ctx, own, recvbuf, block_bytes, &one);
    }
    piece = piece > 64 ? piece - piece % 64 : piece;
    piece = piece < block_bytes ? piece : block_bytes;
    xchg_node_gather_chunks(&lay, ctx->node, chunk_at);

    /* a pass per piece of the blocks */
    for (size_t at = 0; at < block_bytes; at += piece) {
        size_t n = block_bytes - at < piece ? block_bytes - at : piece;
        char *half = xchg_shm_half(ctx);
        xchg_copy(half + (chunk_at[0] + (size_t)ctx->local_rank) * n, own + at, n);
        xchg_shm_sync(ctx);
        if (ctx->local_rank == 0 && rc == MPI_SUCCESS)
            rc = leader_rounds(ctx, &lay, chunk_at, half, n, ports, msgs, sends, sends + ports);
        if (ctx->nnodes > 1)
            xchg_shm_sync(ctx);
        broadcast_out(ctx, &lay, chunk_at, half, n, recv, block_bytes, at, n);
        xchg_shm_next(ctx);
    }
out:
    xchg_scratch_release(ctx, mark);
    return rc;
}

/*
 * alltoall_node.c: MPI_Alltoall through each node's shared segment, with few large messages
 * between nodes (name "node", key leaders); for any node layout: uneven nodes, ranks of a node
 * not consecutive, one-rank nodes, one node.
 *
 * Paper: Sanders, Traff, "The hierarchical factor algorithm for all-to-all communication"
 * (Section 2, Lemma 1's 1-factorization; Section 3, the node order and the single-ported
 * node), applied to nodes whose ranks pool their blocks: the plan is algos/sched/node.c (terms
 * and the segment's windows in node.h), the passes algos/node.c.
 *
 * Phases of a pass (a pass moves up to W bytes of every stream of a node, W the windows' size):
 *   gather   every rank copies its blocks for the other ranks into its node's segment: for each
 *            other node y one message (x's blocks for y's ranks, receiver-major, n_x n_y b
 *            bytes), and the local stream (the blocks between x's own ranks);
 *   exchange the node's leaders exchange the messages with the other nodes' leaders, one
 *            1-factor round after the other: with leaders=1 each node sends and receives one
 *            message at a time (the paper's single-ported node), N - 1 rounds for N even, N for
 *            N odd; with L leaders a node's rounds rotate over its min(L, n_x) leaders (a share
 *            of its destinations each) and a message of at least twice XCHG_NODE_SPLIT_MIN
 *            bytes is cut into parts by bytes over the leaders of both nodes;
 *   scatter  every rank copies the blocks addressed to it out of the local stream and the other
 *            nodes' messages.
 *
 *   half:  | local: [d][s] blocks | out to y: [d of y][s of x] | ... | in from y: [d of x][s of y]
 * | ...
 *
 * Cost (tuning/cost_node.c): per pass two node synchronisations; between nodes the busiest
 * leader's rounds, ceil((N - 1) / L) start-ups at the inter-node constants, and the bytes of
 * its node's link, n_x (p - n_x) b each way; every rank copies its (p - 1) b bytes in and out.
 * Restrictions: the registry's predicate (xchg_node_applies: every node's ranks share memory,
 * a window per node fits XCHG_SHM_BYTES). When no segment can be had, or its halves cannot hold
 * the windows (agreed on every rank alike), it runs hier (k = 1), the same schedule with every
 * rank's own messages.
 */
#include <string.h>

#include "node.h"

int xchg_alltoall_node(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t block_bytes,
                       const xchg_params_t *params)
{
    int p = ctx->size, rank = ctx->rank, rc;
    size_t longest, *bytes, *offs;
    xchg_node_call_t c;
    xchg_mark_t mark = xchg_scratch_mark(ctx);

    xchg_copy((char *)recvbuf + (size_t)rank * block_bytes,
              (const char *)sendbuf + (size_t)rank * block_bytes, block_bytes);
    if (p == 1 || block_bytes == 0)
        return MPI_SUCCESS;
    memset(&c, 0, sizeof c);
    rc = xchg_node_layout_push(ctx, &c.lay);
    if (rc != MPI_SUCCESS)
        goto out;

    /* a segment whose windows hold the longest stream, else pieces; without one: hier */
    longest = xchg_node_alltoall_longest(&c.lay, block_bytes);
    rc = ctx->shm_reserve ? ctx->shm_reserve(ctx, xchg_node_half_for(ctx->nnodes, 0, longest))
                          : MPI_ERR_OTHER;
    if (rc != MPI_SUCCESS ||
        xchg_node_windows(ctx->shm->half_bytes, ctx->nnodes, 0, longest, &c.win) != 0) {
        xchg_params_t one = {.nports = 1};
        xchg_scratch_release(ctx, mark);
        return xchg_alltoall_hier(ctx, sendbuf, recvbuf, block_bytes, &one);
    }
    c.cfg = (xchg_node_cfg_t){params->leaders > 0 ? params->leaders : 1, c.win.window,
                              XCHG_NODE_SPLIT_MIN, 0, params->nports};
    rc = xchg_node_call_push(ctx, &c);
    bytes = xchg_scratch_push(ctx, 2 * (size_t)p * sizeof *bytes);
    if (rc != MPI_SUCCESS || !bytes) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }

    /* every block's place, by the plan's closed forms */
    offs = bytes + p;
    for (int j = 0; j < p; j++) {
        bytes[j] = block_bytes;
        offs[j] = (size_t)j * block_bytes;
        c.send_at[j] = j == rank ? 0 : xchg_node_block_at(&c.lay, rank, j, block_bytes);
        c.recv_at[j] = j == rank ? 0 : xchg_node_block_at(&c.lay, j, rank, block_bytes);
    }
    for (int y = 0; y < ctx->nnodes; y++) {
        c.stream_len[y] = xchg_node_stream_len(&c.lay, ctx->node, y, block_bytes);
        c.in_len[y] = xchg_node_stream_len(&c.lay, y, ctx->node, block_bytes);
    }
    c.send = sendbuf;
    c.sendbytes = c.recvbytes = bytes;
    c.sendoffs = c.recvoffs = offs;
    c.recv = recvbuf;
    rc = xchg_node_run(ctx, &c);
out:
    xchg_scratch_release(ctx, mark);
    return rc;
}

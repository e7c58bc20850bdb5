/*
 * alltoallv_node.c: MPI_Alltoallv through each node's shared segment, with few large messages
 * between nodes (name "node", key leaders): the structure of MPI_Alltoall's node
 * (alltoall_node.c; plan algos/sched/node.c, passes algos/node.c), each block with its own size.
 *
 * The counts are exchanged once, inside the node, through the segment: a first pass in which
 * every rank writes a header (its send row: bytes to every rank; the bytes it receives from
 * each node; its statistics) and the node synchronises. From the headers every rank of the
 * node computes the same stream lengths and its own blocks' places: a sender's block in the
 * message to y lies after the blocks of y's earlier receivers and of its node's earlier
 * senders (from the rows), a receiver's block in the message from y after the bytes of its
 * node's earlier receivers from y (their totals) and of y's earlier senders to it (its own
 * counts). Nothing about counts crosses a node's link: both ends of a message know its length
 * (MPI requires the sender's and the receiver's counts to match; counts that do not are an
 * erroneous program: inside a node the receiver sees the sender's row and reports
 * MPI_ERR_TRUNCATE when it was sent more than it receives; between nodes the passes of the two
 * nodes may come apart, which is this algorithm's weakness against such programs).
 *
 * Skew. With leaders=1 a node's leader carries all its bytes, as the link does anyway. With L
 * leaders a message of at least twice XCHG_NODE_SPLIT_MIN bytes is cut into min(L_x, L_y)
 * parts by bytes (not by destination) over the leaders of both nodes, so a skewed node's
 * largest message is shared by all of its leaders; smaller ones go whole, the rounds rotating
 * over the leaders.
 *
 * Statistics (xchg_carry_t): every node's maxima (from its headers) ride behind each pair's
 * message of the first pass (every pair then exchanges, empty or not), so every rank ends with
 * everyone's maxima.
 * Cost (tuning/cost_node.c): as alltoall's node with the busiest node's bytes (from the agreed
 * or carried h1 and h2), one more synchronisation for the headers.
 * Restrictions: the predicate (xchg_node_applies: the headers of the largest node and a window
 * per node fit XCHG_SHM_BYTES); its first call takes the segment at that limit (the lengths are
 * not known before the headers). Without a segment that holds them (agreed) it runs hier
 * (k = 1). Bytes of recvbuf outside the given blocks are never touched.
 */
#include <string.h>

#include "node.h"

/* This rank's header: statistics, bytes received from each node, bytes sent to each rank. */
static void write_header(const xchg_ctx_t *ctx, uint64_t *hdr, const size_t *sendbytes,
                         const size_t *recvbytes, const xchg_carry_t *carry)
{
    int p = ctx->size, nn = ctx->nnodes;
    memset(hdr, 0, (3 + (size_t)nn) * sizeof *hdr);
    for (int i = 0; carry && i < 3; i++)
        hdr[i] = carry->mine[i];
    for (int j = 0; j < p; j++) {
        if (ctx->node_of[j] != ctx->node)
            hdr[3 + ctx->node_of[j]] += recvbytes[j];
        hdr[3 + nn + j] = sendbytes[j];
    }
}

/* The header pass: write, synchronise, read every place and the node's maxima. Returns
 * MPI_ERR_TRUNCATE when a sender of this rank's node sends it more than it receives from that
 * sender (an erroneous program; the block is cut to the receive size, as MPI cuts a message),
 * else MPI_SUCCESS. */
static int header_pass(xchg_ctx_t *ctx, xchg_node_call_t *c, const size_t *sendbytes,
                       const size_t *recvbytes, const xchg_carry_t *carry)
{
    int rc = MPI_SUCCESS;
    xchg_node_headers_t h = {xchg_shm_half(ctx), xchg_node_v_header_bytes(ctx->size, ctx->nnodes),
                             ctx->nnodes};
    write_header(ctx, (uint64_t *)(xchg_shm_half(ctx) + (size_t)c->me * h.stride), sendbytes,
                 recvbytes, carry);
    xchg_shm_sync(ctx);
    xchg_node_v_send_layout(&c->lay, &h, c->node, c->me, c->send_at, c->stream_len);
    xchg_node_v_recv_layout(&c->lay, &h, c->node, c->me, recvbytes, c->recv_at, c->in_len);
    for (int l = 0; l < ctx->local_size; l++) {
        int sender = c->lay.members[c->lay.first[c->node] + l];
        for (int i = 0; i < 3; i++)
            if (xchg_node_hdr_stats(&h, l)[i] > c->stats[i])
                c->stats[i] = xchg_node_hdr_stats(&h, l)[i];
        if (l != c->me && xchg_node_hdr_row(&h, l)[ctx->rank] > recvbytes[sender])
            rc = MPI_ERR_TRUNCATE;
    }
    xchg_shm_next(ctx);
    return rc;
}

int xchg_alltoallv_node(xchg_ctx_t *ctx, const void *sendbuf, const size_t *sendbytes,
                        const size_t *sendoffs, void *recvbuf, const size_t *recvbytes,
                        const size_t *recvoffs, const xchg_call_t *call,
                        const xchg_params_t *params, xchg_carry_t *carry)
{
    int p = ctx->size, rank = ctx->rank, rc, truncated;
    size_t headers;
    xchg_node_call_t c;
    xchg_mark_t mark = xchg_scratch_mark(ctx);

    xchg_copy((char *)recvbuf + recvoffs[rank], (const char *)sendbuf + sendoffs[rank],
              recvbytes[rank]);
    if (p == 1) {
        if (carry) {
            memcpy(carry->agreed, carry->mine, sizeof carry->agreed);
            carry->done = 1;
        }
        return MPI_SUCCESS;
    }
    memset(&c, 0, sizeof c);
    rc = xchg_node_layout_push(ctx, &c.lay);
    if (rc != MPI_SUCCESS)
        goto out;

    /* the segment at its limit; the headers and a window per node must fit, else hier */
    headers = (size_t)c.lay.max_size * xchg_node_v_header_bytes(p, ctx->nnodes);
    rc = ctx->shm_reserve ? ctx->shm_reserve(ctx, SIZE_MAX) : MPI_ERR_OTHER;
    if (rc != MPI_SUCCESS || ctx->shm->half_bytes < headers ||
        xchg_node_windows(ctx->shm->half_bytes, ctx->nnodes, 0, SIZE_MAX, &c.win) != 0) {
        xchg_params_t one = {.nports = 1};
        xchg_scratch_release(ctx, mark);
        return xchg_alltoallv_hier(ctx, sendbuf, sendbytes, sendoffs, recvbuf, recvbytes, recvoffs,
                                   call, &one, carry);
    }
    c.cfg = (xchg_node_cfg_t){params->leaders > 0 ? params->leaders : 1, c.win.window,
                              XCHG_NODE_SPLIT_MIN, carry != NULL, params->nports};
    rc = xchg_node_call_push(ctx, &c);
    if (rc != MPI_SUCCESS)
        goto out;
    c.send = sendbuf;
    c.sendbytes = sendbytes;
    c.sendoffs = sendoffs;
    c.recv = recvbuf;
    c.recvbytes = recvbytes;
    c.recvoffs = recvoffs;
    truncated = header_pass(ctx, &c, sendbytes, recvbytes, carry);
    rc = xchg_node_run(ctx, &c);
    if (rc == MPI_SUCCESS)
        rc = truncated;
    /* carried from a truncated call too (an erroneous program), as pairwise and hier do: this
     * rank read every header and pass all the same, and the other ranks keep what they carried,
     * so the next call is decided alike everywhere (shim/normalize.c, v_run) */
    if ((rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE) && carry) {
        memcpy(carry->agreed, c.stats, sizeof carry->agreed);
        carry->done = 1;
    }
out:
    xchg_scratch_release(ctx, mark);
    return rc;
}

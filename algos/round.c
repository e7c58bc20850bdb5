/*
 * round.c: the one place where the library's messages are posted and waited for.
 *
 * xchg_exchange() runs one communication round: every receive is posted first, then every
 * send, then the round waits for all of them. Messages are PMPI_Irecv/PMPI_Isend of MPI_BYTE
 * on the context's private channel with the context's own tag (shim/channel.c), so they can
 * never match the user's traffic, nor another context's on the same channel. A
 * message larger than XCHG_PIECE_BYTES is split into pieces of at most that many bytes (the
 * count of a PMPI_Isend is an int). A receive names exactly the bytes its sender sends, so both
 * sides cut the message the same way; each posts its pieces in order, with the same peer, tag
 * and communicator, and MPI's non-overtaking rule matches such messages in the order they were
 * posted, so the k-th piece sent lands in the k-th piece received. A message to this rank is a
 * local memcpy (the i-th self send pairs with the i-th self receive).
 *
 * XCHG_PIECE_BYTES is 2^30 unless the build says otherwise: `make PIECE=4096` builds a library
 * that splits everything above 4 KiB, so that the test suite exercises splitting without
 * buffers of gigabytes.
 *
 * A message to or from a rank on another node is cut at ctx->cut_inter bytes too, where the
 * shim set it (xchg_cut_inter, tuning/cost_base.c: on slow links). Both ends of such a message
 * see the other on another node, and the context's cut is alike on every rank, so they cut it
 * the same way. Emulated cluster (3,2,2,1 ranks at 100 Mbit/s, Open MPI's TCP transport),
 * MPI_Alltoall of 16 KiB blocks: one leader per node sending its node's 48 and 96 KiB messages
 * whole took 34 ms, where the link needs 20 and native (messages of 16 KiB) took 21.4; cut at
 * 16 KiB, 21.9 (docs/results.md, stop 82).
 *
 * Waiting policy (XCHG_WAIT, resolved per context into ctx->yield):
 *   spin:  PMPI_Waitall;
 *   yield: PMPI_Testall, then sched_yield() until everything has completed. With more ranks
 *          than cores MPICH's blocking wait busy-polls and starves the peer it waits for;
 *          yielding hands the core over.
 *
 * The request array lives in the context and only grows, so no round allocates once the
 * context has seen its largest round.
 */
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "xchg.h"

#ifndef XCHG_PIECE_BYTES
#define XCHG_PIECE_BYTES ((size_t)1 << 30)
#endif

_Static_assert((size_t)(XCHG_PIECE_BYTES) > 0 && (size_t)(XCHG_PIECE_BYTES) <= INT_MAX,
               "XCHG_PIECE_BYTES must be between 1 and INT_MAX");

/* The most bytes of one piece of a message to or from peer. */
static size_t piece_for(const xchg_ctx_t *ctx, int peer)
{
    if (ctx->cut_inter > 0 && ctx->cut_inter < XCHG_PIECE_BYTES && ctx->node_of &&
        ctx->node_of[peer] != ctx->node)
        return ctx->cut_inter;
    return XCHG_PIECE_BYTES;
}

static int pieces(size_t bytes, size_t piece)
{
    return bytes == 0 ? 1 : (int)((bytes + piece - 1) / piece);
}

static int reserve_requests(xchg_ctx_t *ctx, int n)
{
    MPI_Request *grown;
    MPI_Status *stats;
    if (n <= ctx->reqs_cap)
        return MPI_SUCCESS;
    grown = realloc(ctx->reqs, (size_t)n * sizeof *grown);
    if (!grown)
        return MPI_ERR_NO_MEM;
    ctx->reqs = grown;
    stats = realloc(ctx->stats, (size_t)n * sizeof *stats);
    if (!stats)
        return MPI_ERR_NO_MEM;
    ctx->stats = stats;
    ctx->reqs_cap = n;
    return MPI_SUCCESS;
}

static int post(xchg_ctx_t *ctx, const xchg_msg_t *msg, int is_send, int *nreqs)
{
    int rc = MPI_SUCCESS;
    size_t done = 0, piece = piece_for(ctx, msg->peer);
    do {
        size_t len = msg->bytes - done < piece ? msg->bytes - done : piece;
        char *at = (char *)msg->buf + done;
        if (is_send)
            rc = PMPI_Isend(at, (int)len, MPI_BYTE, msg->peer, ctx->tag, ctx->comm,
                            &ctx->reqs[*nreqs]);
        else
            rc = PMPI_Irecv(at, (int)len, MPI_BYTE, msg->peer, ctx->tag, ctx->comm,
                            &ctx->reqs[*nreqs]);
        if (rc != MPI_SUCCESS)
            return rc;
        (*nreqs)++;
        done += len;
    } while (done < msg->bytes);
    return rc;
}

/* Wait for every request of the round under the context's policy. A request that failed (a
 * truncated receive in an erroneous program, whose sizes differ between ranks) does not end
 * the wait early: every other request is completed too, so none outlives the round (a receive
 * left posted would later write into a buffer the program may have freed), and the round
 * returns that request's own error (MPI_ERR_TRUNCATE), as the MPI library's own collective
 * reports it, rather than MPI_ERR_IN_STATUS. */
static int wait_all(xchg_ctx_t *ctx, int nreqs)
{
    int rc, flag = 0;
    if (!ctx->yield) {
        rc = PMPI_Waitall(nreqs, ctx->reqs, ctx->stats);
    } else {
        for (;;) {
            rc = PMPI_Testall(nreqs, ctx->reqs, &flag, ctx->stats);
            if (rc != MPI_SUCCESS || flag)
                break;
            sched_yield();
        }
    }
    if (rc == MPI_SUCCESS)
        return rc;
    for (int i = 0; i < nreqs && rc == MPI_ERR_IN_STATUS; i++)
        if (ctx->stats[i].MPI_ERROR != MPI_SUCCESS && ctx->stats[i].MPI_ERROR != MPI_ERR_PENDING)
            rc = ctx->stats[i].MPI_ERROR;
    for (int i = 0; i < nreqs; i++)
        if (ctx->reqs[i] != MPI_REQUEST_NULL)
            PMPI_Wait(&ctx->reqs[i], MPI_STATUS_IGNORE);
    return rc;
}

/* Pair the i-th send to self with the i-th receive from self. */
static void copy_to_self(const xchg_ctx_t *ctx, const xchg_msg_t *sends, int nsends,
                         const xchg_msg_t *recvs, int nrecvs)
{
    int s = 0, r = 0;
    for (;;) {
        while (s < nsends && sends[s].peer != ctx->rank)
            s++;
        while (r < nrecvs && recvs[r].peer != ctx->rank)
            r++;
        if (s == nsends || r == nrecvs)
            return;
        if (sends[s].bytes && recvs[r].buf != sends[s].buf)
            memmove(recvs[r].buf, sends[s].buf,
                    sends[s].bytes < recvs[r].bytes ? sends[s].bytes : recvs[r].bytes);
        s++;
        r++;
    }
}

int xchg_exchange(xchg_ctx_t *ctx, const xchg_msg_t *sends, int nsends, const xchg_msg_t *recvs,
                  int nrecvs)
{
    int rc, need = 0, nreqs = 0;

    for (int i = 0; i < nrecvs; i++)
        need +=
            recvs[i].peer == ctx->rank ? 0 : pieces(recvs[i].bytes, piece_for(ctx, recvs[i].peer));
    for (int i = 0; i < nsends; i++)
        need +=
            sends[i].peer == ctx->rank ? 0 : pieces(sends[i].bytes, piece_for(ctx, sends[i].peer));
    rc = reserve_requests(ctx, need);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < nrecvs && rc == MPI_SUCCESS; i++)
        if (recvs[i].peer != ctx->rank)
            rc = post(ctx, &recvs[i], 0, &nreqs);
    for (int i = 0; i < nsends && rc == MPI_SUCCESS; i++)
        if (sends[i].peer != ctx->rank)
            rc = post(ctx, &sends[i], 1, &nreqs);
    if (rc == MPI_SUCCESS)
        copy_to_self(ctx, sends, nsends, recvs, nrecvs);
    /* Wait even after a failed post, so that no posted request outlives the round. */
    if (nreqs > 0) {
        int wrc = wait_all(ctx, nreqs);
        if (rc == MPI_SUCCESS)
            rc = wrc;
    }
    return rc;
}

/*
 * agree.c: the element-wise maximum of a few values over all ranks of a context, built on
 * xchg_exchange() alone, so that it runs the same over MPI (algos/round.c) and in the
 * simulator's in-memory round layer (sim/engine.c); or, on one node whose segment is made,
 * through the segment.
 *
 * Dissemination (Hensgen, Finkel and Manber's barrier pattern): in round s every rank sends its
 * running maxima to rank + 2^s and receives from rank - 2^s, ceil(log2 p) rounds of n * 8 bytes.
 *
 * Through the segment (a communicator on one node that an shm algorithm's call gave one,
 * ctx->shm: made and grown at the same call on every rank, so every rank takes the same way):
 * one pass, every rank writing its values at its rank's place in the half, one synchronisation
 * of the node, every rank reading all (algos/shm.c), instead of ceil(log2 p) rounds of messages;
 * up to 7 values in one pass of lines (algos/shm.c, one-line passes).
 * Like every pass it ends with a synchronisation, after which the half of the pass before it may
 * be written again: a caller between a pass and its reads (a segment grown in the middle of a
 * call, alltoallv_shm.c) reads first.
 */
#include <string.h>

#include "xchg.h"

/* The segment can carry the agreement: one node, a segment, every rank's values in a half. */
static int through_segment(const xchg_ctx_t *ctx, int n)
{
    return ctx->nnodes == 1 && ctx->shm &&
           (size_t)ctx->size * (size_t)n * sizeof(uint64_t) <= ctx->shm->half_bytes;
}

static void agree_segment(xchg_ctx_t *ctx, uint64_t *vals, int n)
{
    uint64_t *half;
    if (xchg_shm_line_fits(ctx, (size_t)n * sizeof *vals)) {
        memcpy(xchg_shm_line(ctx, ctx->rank), vals, (size_t)n * sizeof *vals);
        xchg_shm_line_arrive(ctx);
        for (int r = 0; r < ctx->size; r++) {
            uint64_t theirs[XCHG_SHM_LINE_DATA / sizeof *vals];
            if (r == ctx->rank)
                continue;
            memcpy(theirs, xchg_shm_line(ctx, r), (size_t)n * sizeof *vals);
            for (int i = 0; i < n; i++)
                vals[i] = theirs[i] > vals[i] ? theirs[i] : vals[i];
        }
        xchg_shm_next(ctx);
        return;
    }
    half = (uint64_t *)xchg_shm_half(ctx);
    memcpy(half + (size_t)ctx->rank * (size_t)n, vals, (size_t)n * sizeof *vals);
    xchg_shm_arrive(ctx);
    for (int r = 0; r < ctx->size; r++)
        for (int i = 0; i < n; i++)
            if (half[(size_t)r * (size_t)n + (size_t)i] > vals[i])
                vals[i] = half[(size_t)r * (size_t)n + (size_t)i];
}

int xchg_agree_max(xchg_ctx_t *ctx, uint64_t *vals, int n)
{
    uint64_t incoming[XCHG_AGREE_MAX];
    int rc = MPI_SUCCESS;

    if (n > XCHG_AGREE_MAX)
        return MPI_ERR_ARG;
    if (ctx->size > 1 && through_segment(ctx, n)) {
        agree_segment(ctx, vals, n);
        return MPI_SUCCESS;
    }
    /* Dissemination: after round s every rank holds the maximum over the 2^(s+1) ranks that
     * precede it, and the maximum is idempotent, so overlaps for p not a power of two are
     * harmless. */
    for (int dist = 1; dist < ctx->size; dist *= 2) {
        xchg_msg_t send = {(ctx->rank + dist) % ctx->size, vals, (size_t)n * sizeof *vals};
        xchg_msg_t recv = {(ctx->rank - dist + ctx->size) % ctx->size, incoming,
                           (size_t)n * sizeof *vals};
        rc = xchg_exchange(ctx, &send, 1, &recv, 1);
        if (rc != MPI_SUCCESS)
            return rc;
        for (int i = 0; i < n; i++)
            if (incoming[i] > vals[i])
                vals[i] = incoming[i];
    }
    return rc;
}

/*
 * agree.c: the element-wise maximum of a few values over all ranks of a context, built on
 * xchg_exchange() alone, so that it runs the same over MPI (algos/round.c) and in the
 * simulator's in-memory round layer (sim/engine.c).
 *
 * Dissemination (Hensgen, Finkel and Manber's barrier pattern): in round s every rank sends its
 * running maxima to rank + 2^s and receives from rank - 2^s, ceil(log2 p) rounds of n * 8 bytes.
 */
#include "xchg.h"

int xchg_agree_max(xchg_ctx_t *ctx, uint64_t *vals, int n)
{
    uint64_t incoming[XCHG_AGREE_MAX];
    int rc = MPI_SUCCESS;

    if (n > XCHG_AGREE_MAX)
        return MPI_ERR_ARG;
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

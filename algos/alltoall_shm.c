/*
 * alltoall_shm.c: MPI_Alltoall through shared memory, for a communicator whose ranks all share
 * one machine's memory (no paper: what an MPI library's shared-memory collectives do, here on
 * an MPI-3 shared window; the pass and its synchronisation are algos/shm.c's).
 *
 * One pass: every rank copies its p - 1 blocks for the others into the half (block for rank j
 * of rank i at slot i p + j), arrives, waits for all, and copies the p - 1 blocks addressed to
 * it out: one synchronisation instead of p - 1 messages, every byte copied twice.
 *
 *   half:  | 0->0 | 0->1 | ... | 0->p-1 | 1->0 | ... | p-1->p-1 |   (slots of n bytes)
 *
 * A block larger than the half allows (p^2 slots of at most half / p^2 bytes) goes in several
 * passes of n-byte pieces: ceil(b / n) passes, equal on all ranks (b, p and the half are).
 * Blocks whose p - 1 fit one cache line beside a sequence word go in one pass of lines instead
 * (algos/shm.c, one-line passes: at 2 ranks, blocks of up to 56 bytes).
 * Cost: passes synchronisations (one start-up each) and 2 (p - 1) b + b bytes copied.
 * Restrictions: the registry's predicate (all ranks on one machine, p^2 <= XCHG_SHM_BYTES). When
 * no segment can be had (the shim found none on every rank alike) it runs pairwise exchange.
 */
#include <string.h>

#include "xchg.h"
#include "sched/shm.h"

/* Blocks that fit one line: rank i's line holds its blocks for the others in rank order (its
 * own left out), so rank j's is the (j < i ? j : j - 1)-th. */
static void line_pass(xchg_ctx_t *ctx, const char *send, char *recv, size_t b)
{
    int p = ctx->size, rank = ctx->rank;
    char *mine = xchg_shm_line(ctx, rank);
    for (int j = 0, at = 0; j < p; j++)
        if (j != rank)
            xchg_copy(mine + (size_t)at++ * b, send + (size_t)j * b, b);
    xchg_shm_line_arrive(ctx);
    for (int i = 0; i < p; i++)
        if (i != rank)
            xchg_copy(recv + (size_t)i * b,
                      xchg_shm_line(ctx, i) + (size_t)(rank < i ? rank : rank - 1) * b, b);
    xchg_shm_next(ctx);
}

int xchg_alltoall_shm(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t block_bytes,
                      const xchg_params_t *params)
{
    const char *send = sendbuf;
    char *recv = recvbuf;
    int p = ctx->size, rank = ctx->rank, rc;
    size_t piece;

    (void)params; /* no keys */
    xchg_copy(recv + (size_t)rank * block_bytes, send + (size_t)rank * block_bytes, block_bytes);
    if (p == 1 || block_bytes == 0)
        return MPI_SUCCESS;
    rc = ctx->shm_reserve ? ctx->shm_reserve(ctx, xchg_shm_need(XCHG_ALLTOALL, p, block_bytes, 0))
                          : MPI_ERR_OTHER;
    if (rc != MPI_SUCCESS || xchg_shm_piece(XCHG_ALLTOALL, p, ctx->shm->half_bytes) == 0) {
        xchg_params_t one = {.nports = 1};
        return xchg_alltoall_pairwise(ctx, sendbuf, recvbuf, block_bytes, &one);
    }
    if (block_bytes <= XCHG_SHM_LINE_DATA / (size_t)(p - 1) &&
        xchg_shm_line_fits(ctx, (size_t)(p - 1) * block_bytes)) {
        line_pass(ctx, send, recv, block_bytes);
        return MPI_SUCCESS;
    }
    piece = xchg_shm_piece(XCHG_ALLTOALL, p, ctx->shm->half_bytes);
    for (size_t at = 0; at < block_bytes; at += piece) {
        size_t n = block_bytes - at < piece ? block_bytes - at : piece;
        char *half = xchg_shm_half(ctx);
        char *mine = half + (size_t)rank * (size_t)p * n;
        for (int j = 0; j < p; j++)
            if (j != rank)
                xchg_copy(mine + (size_t)j * n, send + (size_t)j * block_bytes + at, n);
        xchg_shm_arrive(ctx);
        for (int i = 0; i < p; i++)
            if (i != rank)
                xchg_copy(recv + (size_t)i * block_bytes + at, half + ((size_t)i * p + rank) * n,
                          n);
    }
    return MPI_SUCCESS;
}

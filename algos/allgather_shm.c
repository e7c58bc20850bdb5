/*
 * allgather_shm.c: MPI_Allgather through shared memory, for a communicator whose ranks all
 * share one machine's memory (the pass and its synchronisation: algos/shm.c).
 *
 * One pass: every rank copies its block into slot rank of the half, arrives, waits for all, and
 * copies the other p - 1 blocks out.
 *
 *   half:  | block of 0 | block of 1 | ... | block of p-1 |   (slots of n bytes)
 *
 * A block larger than half / p goes in ceil(b / n) passes of n-byte pieces (equal on all ranks);
 * one of up to 56 bytes in one pass of lines instead (algos/shm.c, one-line passes).
 * Cost: passes synchronisations and p b bytes copied (b in, (p - 1) b out).
 * Restrictions: the registry's predicate (all ranks on one machine). Without a segment (none
 * could be had, on every rank alike) it runs the ring.
 */
#include <string.h>

#include "xchg.h"
#include "sched/shm.h"

int xchg_allgather_shm(xchg_ctx_t *ctx, const void *sendblock, void *recvbuf, size_t block_bytes,
                       const xchg_params_t *params)
{
    const char *send = sendblock;
    char *recv = recvbuf, *own;
    int p = ctx->size, rank = ctx->rank, rc;
    size_t piece;

    own = recv + (size_t)rank * block_bytes;
    if (send != own)
        xchg_copy(own, send, block_bytes);
    if (p == 1 || block_bytes == 0)
        return MPI_SUCCESS;
    rc = ctx->shm_reserve ? ctx->shm_reserve(ctx, xchg_shm_need(XCHG_ALLGATHER, p, block_bytes, 0))
                          : MPI_ERR_OTHER;
    if (rc != MPI_SUCCESS || xchg_shm_piece(XCHG_ALLGATHER, p, ctx->shm->half_bytes) == 0)
        return xchg_allgather_ring(ctx, own, recvbuf, block_bytes, params);
    if (xchg_shm_line_fits(ctx, block_bytes)) {
        xchg_copy(xchg_shm_line(ctx, rank), own, block_bytes);
        xchg_shm_line_arrive(ctx);
        for (int i = 0; i < p; i++)
            if (i != rank)
                xchg_copy(recv + (size_t)i * block_bytes, xchg_shm_line(ctx, i), block_bytes);
        xchg_shm_next(ctx);
        return MPI_SUCCESS;
    }
    piece = xchg_shm_piece(XCHG_ALLGATHER, p, ctx->shm->half_bytes);
    for (size_t at = 0; at < block_bytes; at += piece) {
        size_t n = block_bytes - at < piece ? block_bytes - at : piece;
        char *half = xchg_shm_half(ctx);
        xchg_copy(half + (size_t)rank * n, own + at, n);
        xchg_shm_arrive(ctx);
        for (int i = 0; i < p; i++)
            if (i != rank)
                xchg_copy(recv + (size_t)i * block_bytes + at, half + (size_t)i * n, n);
    }
    return MPI_SUCCESS;
}

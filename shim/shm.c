/*
 * shm.c: the shared segment of a context (xchg_shm_t, algos/xchg.h) for the shm algorithms.
 *
 * Made on the first shm call of a communicator, with MPI_Win_allocate_shared on the context's
 * private communicator: rank 0 allocates the whole segment (control block and two halves) and
 * every rank maps it (MPI_Win_shared_query). The halves start at the call's need rounded up to
 * a power of two, at least SHM_FIRST bytes, and grow when a call needs more, up to
 * XCHG_SHM_BYTES (topo.shm_bytes); a call larger than that goes in pieces (algos/alltoall_shm.c and
 * its two siblings). Every step is collective and depends only on values equal on all ranks (the
 * call's need, the current size), so every rank makes, grows and frees the segment at the same
 * call. Whether the window could be made is agreed with one allreduce: when it fails anywhere, the
 * context gives up shared memory on every rank and the shm algorithms send messages instead. The
 * segment goes with the context (xchg_shm_free from shim/context.c: the user's MPI_Comm_free, or
 * MPI_Finalize for MPI_COMM_WORLD and MPI_COMM_SELF; both are collective).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define SHM_FIRST ((size_t)64 << 10) /* the smallest half made */

void xchg_shm_free(xchg_ctx_t *ctx)
{
    if (!ctx->shm)
        return;
    PMPI_Win_free(&ctx->shm->win);
    free(ctx->shm);
    ctx->shm = NULL;
}

int xchg_shm_reserve(xchg_ctx_t *ctx, size_t bytes)
{
    size_t limit = ctx->topo.shm_bytes, half = SHM_FIRST, total;
    int mine[2], all[2] = {0, 0}, disp;
    MPI_Aint size;
    char *base = NULL;
    xchg_shm_t *shm;
    MPI_Win win = MPI_WIN_NULL;

    if (ctx->shm_failed || limit == 0)
        return MPI_ERR_OTHER;
    if (bytes > limit)
        bytes = limit;
    if (ctx->shm && ctx->shm->half_bytes >= bytes)
        return MPI_SUCCESS;
    while (half < bytes)
        half *= 2;
    if (half > limit)
        half = limit;
    if (ctx->shm) {
        /* every rank is done with the old segment (it read only headers since its last pass) */
        PMPI_Barrier(ctx->comm);
        xchg_shm_free(ctx);
    }
    total = XCHG_SHM_CONTROL + 2 * half;
    shm = calloc(1, sizeof *shm);
    mine[0] = PMPI_Win_allocate_shared(ctx->rank == 0 ? (MPI_Aint)total : 0, 1, MPI_INFO_NULL,
                                       ctx->comm, &base, &win) == MPI_SUCCESS;
    mine[1] = mine[0] && shm && PMPI_Win_shared_query(win, 0, &size, &disp, &base) == MPI_SUCCESS &&
              base && (size_t)size >= total;
    if (mine[1] && ctx->rank == 0)
        memset(base, 0, XCHG_SHM_CONTROL);
    /* agree; the allreduce also orders rank 0's zeroed counters before anyone's first pass */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, ctx->comm) != MPI_SUCCESS)
        all[0] = all[1] = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (all[1]) {
        *shm = (xchg_shm_t){.base = base, .half_bytes = half, .passes = 0, .win = win};
        ctx->shm = shm;
        return MPI_SUCCESS;
    }
    if (all[0])
        PMPI_Win_free(&win); /* made everywhere (else it is left: no collective free is possible) */
    free(shm);
    ctx->shm_failed = 1;
    if (xchg_config.verbose && ctx->rank == 0) {
        fprintf(stderr,
                "xchg: no shared segment of %zu bytes for a communicator of %d ranks: the shm "
                "algorithms send messages on it\n",
                total, ctx->size);
        fflush(stderr);
    }
    return MPI_ERR_NO_MEM;
}

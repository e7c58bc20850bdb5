/*
 * allgather_ring.c: ring concatenation for MPI_Allgather (baseline).
 *
 * Round s = 0 .. p-2: pass block (rank - s) mod p to rank + 1 and receive block
 * (rank - s - 1) mod p from rank - 1, in place in recvbuf.
 *
 * Cost: C1 = p - 1, C2 = b (p - 1) (optimal volume, most rounds), plus one local copy of b
 * bytes unless the call is MPI_IN_PLACE. Restrictions: none; one port.
 */
#include <string.h>

#include "xchg.h"

int xchg_allgather_ring(xchg_ctx_t *ctx, const void *sendblock, void *recvbuf, size_t block_bytes,
                        const xchg_params_t *params)
{
    char *recv = recvbuf;
    int p = ctx->size, rank = ctx->rank, rc = MPI_SUCCESS;
    int right = (rank + 1) % p, left = (rank - 1 + p) % p;

    (void)params;
    if (sendblock != recv + (size_t)rank * block_bytes)
        xchg_copy(recv + (size_t)rank * block_bytes, sendblock, block_bytes);
    for (int s = 0; s < p - 1; s++) {
        int out_block = (rank - s + p) % p, in_block = (rank - s - 1 + 2 * p) % p;
        /* the first block out is this rank's own: from sendblock, which the copy above read
         * (the copy in recvbuf was just written, and a peer that copies it out of this rank's
         * memory takes it dirty from this core's cache) */
        char *from = s == 0 ? (char *)sendblock : recv + (size_t)out_block * block_bytes;
        xchg_msg_t send = {right, from, block_bytes};
        xchg_msg_t recvmsg = {left, recv + (size_t)in_block * block_bytes, block_bytes};
        rc = xchg_exchange(ctx, &send, 1, &recvmsg, 1);
        if (rc != MPI_SUCCESS)
            goto out;
    }
out:
    return rc;
}

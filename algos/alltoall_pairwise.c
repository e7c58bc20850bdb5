/*
 * alltoall_pairwise.c: pairwise exchange for MPI_Alltoall (baseline).
 *
 * Step s = 1 .. p-1: send the block for rank (rank + s) mod p and receive the block from rank
 * (rank - s) mod p, straight between the user's buffers (no packing; scratch holds only the message
 * lists, pushed on the context's scratch stack). This is the r = p case of Bruck's radix index
 * algorithm (Bruck et al., "Efficient algorithms for all-to-all communications in multiport
 * message-passing systems", 1997, Section 3.3, case 2) with the rotations folded into the
 * addressing. With k ports, k consecutive steps are in flight in one round.
 *
 * Cost (linear model): C1 = ceil((p-1)/k), C2 = b * ceil((p-1)/k) (b = block bytes; k messages
 * of b bytes per round), plus one local copy of b bytes (the block to self).
 * Restrictions: none; p = 1 is the local copy only.
 */
#include <string.h>

#include "xchg.h"

int xchg_alltoall_pairwise(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf,
                           size_t block_bytes, const xchg_params_t *params)
{
    const char *send = sendbuf;
    char *recv = recvbuf;
    int p = ctx->size, rank = ctx->rank, rc = MPI_SUCCESS;
    int nports = params->nports > 0 ? params->nports : 1;
    xchg_msg_t *sends, *recvs;
    xchg_mark_t mark = xchg_scratch_mark(ctx);

    if (nports > p - 1)
        nports = p > 1 ? p - 1 : 1;
    sends = xchg_scratch_push(ctx, 2 * (size_t)nports * sizeof *sends);
    if (!sends) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    recvs = sends + nports;
    xchg_copy(recv + (size_t)rank * block_bytes, send + (size_t)rank * block_bytes, block_bytes);
    /* rounds of up to nports consecutive steps */
    for (int first = 1; first < p; first += nports) {
        int n = 0;
        for (int step = first; step < first + nports && step < p; step++, n++) {
            int to = (rank + step) % p, from = (rank - step + p) % p;
            sends[n] = (xchg_msg_t){to, (void *)(send + (size_t)to * block_bytes), block_bytes};
            recvs[n] = (xchg_msg_t){from, recv + (size_t)from * block_bytes, block_bytes};
        }
        rc = xchg_exchange(ctx, sends, n, recvs, n);
        if (rc != MPI_SUCCESS)
            goto out;
    }
out:
    xchg_scratch_release(ctx, mark);
    return rc;
}

/*
 * alltoallv_pairwise.c: pairwise exchange for MPI_Alltoallv (baseline).
 *
 * As alltoall_pairwise.c, with each (source, destination) message of its own size: step s
 * sends the message for (rank + s) mod p and receives the one from (rank - s) mod p, straight
 * between the user's buffers at the given offsets; k consecutive steps per round.
 *
 * Cost: C1 = ceil((p-1)/k); a round lasts as long as its largest message, so with skewed
 * counts C2 can approach ceil((p-1)/k) * (largest message), which is what the two-phase
 * algorithm avoids (alltoallv_twophase.c).
 * Restrictions: none. Bytes of recvbuf outside the given blocks are never touched.
 */
#include <string.h>

#include "xchg.h"

int xchg_alltoallv_pairwise(xchg_ctx_t *ctx, const void *sendbuf, const size_t *sendbytes,
                            const size_t *sendoffs, void *recvbuf, const size_t *recvbytes,
                            const size_t *recvoffs, const xchg_call_t *call,
                            const xchg_params_t *params, xchg_carry_t *carry)
{
    (void)carry;
    const char *send = sendbuf;
    char *recv = recvbuf;
    int p = ctx->size, rank = ctx->rank, rc = MPI_SUCCESS;
    int nports = params->nports > 0 ? params->nports : 1;
    xchg_msg_t *sends, *recvs;

    (void)call;
    if (nports > p - 1)
        nports = p > 1 ? p - 1 : 1;
    sends = xchg_scratch(ctx, XCHG_SCRATCH_A2AV_0, 2 * (size_t)nports * sizeof *sends);
    if (!sends)
        return MPI_ERR_NO_MEM;
    recvs = sends + nports;
    memcpy(recv + recvoffs[rank], send + sendoffs[rank], recvbytes[rank]);
    for (int first = 1; first < p; first += nports) {
        int n = 0;
        for (int step = first; step < first + nports && step < p; step++, n++) {
            int to = (rank + step) % p, from = (rank - step + p) % p;
            sends[n] = (xchg_msg_t){to, (void *)(send + sendoffs[to]), sendbytes[to]};
            recvs[n] = (xchg_msg_t){from, recv + recvoffs[from], recvbytes[from]};
        }
        rc = xchg_exchange(ctx, sends, n, recvs, n);
        if (rc != MPI_SUCCESS)
            goto out;
    }
out:
    return rc;
}

/*
 * alltoallv_pairwise.c: pairwise exchange for MPI_Alltoallv (baseline).
 *
 * As alltoall_pairwise.c, with each (source, destination) message of its own size: step s
 * sends the message for (rank + s) mod p and receives the one from (rank - s) mod p, straight
 * between the user's buffers at the given offsets; k consecutive steps per round.
 *
 * Without statistics to carry an empty message is not sent (MPI makes the byte counts of both
 * sides equal, so sender and receiver both skip it; MPICH's alltoallv skips them too).
 * Carrying statistics (xchg_carry_t, when the shim asks for it): every rank hears from every
 * other rank once, so every message, empty ones included, carries them (algos/carry.h).
 *
 * Cost: C1 = ceil((p-1)/k); a round lasts as long as its largest message, so with skewed
 * counts C2 can approach ceil((p-1)/k) * (largest message), which is what the two-phase
 * algorithm avoids (alltoallv_twophase.c). Carrying adds one 24-byte message per pair.
 * Restrictions: none. Bytes of recvbuf outside the given blocks are never touched.
 * Errors: a round that fails (a receive truncated by a longer message: an erroneous program)
 * does not end the exchange; every later round still runs, so that no other rank waits for
 * this one, and the first error is returned at the end.
 */
#include <string.h>

#include "carry.h"

int xchg_alltoallv_pairwise(xchg_ctx_t *ctx, const void *sendbuf, const size_t *sendbytes,
                            const size_t *sendoffs, void *recvbuf, const size_t *recvbytes,
                            const size_t *recvoffs, const xchg_call_t *call,
                            const xchg_params_t *params, xchg_carry_t *carry)
{
    const char *send = sendbuf;
    char *recv = recvbuf;
    int p = ctx->size, rank = ctx->rank, rc, round_rc;
    int nports = params->nports > 0 ? params->nports : 1;
    xchg_carry_space_t space;
    xchg_mark_t mark = xchg_scratch_mark(ctx);

    (void)call;
    if (nports > p - 1)
        nports = p > 1 ? p - 1 : 1;
    rc = xchg_carry_space(ctx, nports, carry, &space);
    if (rc != MPI_SUCCESS)
        goto out;
    xchg_copy(recv + recvoffs[rank], send + sendoffs[rank], recvbytes[rank]);
    if (carry)
        xchg_carry_begin(carry);
    for (int first = 1; first < p; first += nports) {
        int last = first + nports < p ? first + nports : p;
        for (int step = first; step < last; step++) {
            int to = (rank + step) % p, from = (rank - step + p) % p;
            xchg_carry_send(&space, step - first, carry, to, send + sendoffs[to], sendbytes[to]);
            xchg_carry_recv(&space, step - first, carry, from, recv + recvoffs[from],
                            recvbytes[from]);
        }
        round_rc = xchg_carry_round(ctx, &space);
        /* the statistics' messages are whole even when a data message was cut (carry.h) */
        for (int step = first; step < last && carry; step++) {
            int from = (rank - step + p) % p;
            xchg_carry_arrived(&space, step - first, carry, recv + recvoffs[from], recvbytes[from]);
        }
        rc = rc == MPI_SUCCESS ? round_rc : rc;
    }
    if (carry)
        carry->done = rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE;
out:
    xchg_scratch_release(ctx, mark);
    return rc;
}

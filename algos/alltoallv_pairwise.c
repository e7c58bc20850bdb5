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
 * other rank once (empty messages included), so each message also carries the sender's three
 * statistics (24 bytes) and every rank ends with their maxima over all ranks, with no round of
 * its own. A message of at
 * most CARRY_INLINE bytes travels with the statistics appended, through a scratch copy; a
 * larger one is sent from the user's buffer as it is, with the statistics as a second message
 * to the same peer in the same round (matched in order: MPI does not overtake). Sender and
 * receiver agree on which form a message takes, because MPI requires their byte counts to be
 * equal.
 *
 *   scratch (one push): sends[2k] recvs[2k] | stats[k][3] | out slots[k] | in slots[k]
 *   (a slot holds CARRY_INLINE + 24 bytes; the three last parts only when carrying)
 *
 * Cost: C1 = ceil((p-1)/k); a round lasts as long as its largest message, so with skewed
 * counts C2 can approach ceil((p-1)/k) * (largest message), which is what the two-phase
 * algorithm avoids (alltoallv_twophase.c). Carrying adds 24 bytes and two copies of at most
 * CARRY_INLINE bytes per message, or one 24-byte message per large message.
 * Restrictions: none. Bytes of recvbuf outside the given blocks are never touched.
 */
#include <string.h>

#include "xchg.h"

#define CARRY_INLINE 1024 /* largest message that carries the statistics inline */
#define CARRY_WORDS 3
#define CARRY_BYTES (CARRY_WORDS * sizeof(uint64_t))

/* Scratch of one round (see the file header). */
typedef struct round_space {
    xchg_msg_t *sends, *recvs; /* 2 nports each: a step may post two messages */
    char *out, *in;            /* nports inline slots of CARRY_INLINE + CARRY_BYTES each */
    uint64_t *stats;           /* nports x CARRY_WORDS: statistics received apart */
} round_space_t;

static int round_space(xchg_ctx_t *ctx, int nports, int carrying, round_space_t *space)
{
    size_t lists = 4 * (size_t)nports * sizeof(xchg_msg_t);
    size_t slots = carrying ? (size_t)nports * (CARRY_INLINE + CARRY_BYTES) : 0;
    size_t stats = carrying ? (size_t)nports * CARRY_BYTES : 0;
    char *base = xchg_scratch_push(ctx, lists + stats + 2 * slots);
    if (!base)
        return MPI_ERR_NO_MEM;
    space->sends = (xchg_msg_t *)base;
    space->recvs = space->sends + 2 * nports;
    space->stats = (uint64_t *)(base + lists);
    space->out = base + lists + stats;
    space->in = space->out + slots;
    return MPI_SUCCESS;
}

/* Post-round work of a carrying step: the inline message to its place, the peer's statistics
 * into the maxima. */
static void carry_arrived(const round_space_t *space, int slot, char *dest, size_t bytes,
                          xchg_carry_t *carry)
{
    const char *in = space->in + (size_t)slot * (CARRY_INLINE + CARRY_BYTES);
    uint64_t stats[CARRY_WORDS];
    if (bytes <= CARRY_INLINE) {
        memcpy(dest, in, bytes);
        memcpy(stats, in + bytes, CARRY_BYTES);
    } else {
        memcpy(stats, space->stats + (size_t)slot * CARRY_WORDS, CARRY_BYTES);
    }
    for (int w = 0; w < CARRY_WORDS; w++)
        if (stats[w] > carry->agreed[w])
            carry->agreed[w] = stats[w];
}

/* One step's messages: plain, or carrying the statistics inline or apart. */
static void post_step(const round_space_t *space, int slot, xchg_carry_t *carry, int to,
                      const char *out_data, size_t out_bytes, int from, char *in_data,
                      size_t in_bytes, int *nsends, int *nrecvs)
{
    char *out = space->out + (size_t)slot * (CARRY_INLINE + CARRY_BYTES);
    char *in = space->in + (size_t)slot * (CARRY_INLINE + CARRY_BYTES);
    if (!carry) { /* empty messages stay home (MPI makes both sides' byte counts equal) */
        if (out_bytes > 0)
            space->sends[(*nsends)++] = (xchg_msg_t){to, (void *)out_data, out_bytes};
        if (in_bytes > 0)
            space->recvs[(*nrecvs)++] = (xchg_msg_t){from, in_data, in_bytes};
        return;
    }
    if (out_bytes <= CARRY_INLINE) {
        memcpy(out, out_data, out_bytes);
        memcpy(out + out_bytes, carry->mine, CARRY_BYTES);
        space->sends[(*nsends)++] = (xchg_msg_t){to, out, out_bytes + CARRY_BYTES};
    } else {
        space->sends[(*nsends)++] = (xchg_msg_t){to, (void *)out_data, out_bytes};
        space->sends[(*nsends)++] = (xchg_msg_t){to, carry->mine, CARRY_BYTES};
    }
    if (in_bytes <= CARRY_INLINE) {
        space->recvs[(*nrecvs)++] = (xchg_msg_t){from, in, in_bytes + CARRY_BYTES};
    } else {
        space->recvs[(*nrecvs)++] = (xchg_msg_t){from, in_data, in_bytes};
        space->recvs[(*nrecvs)++] =
            (xchg_msg_t){from, space->stats + (size_t)slot * CARRY_WORDS, CARRY_BYTES};
    }
}

int xchg_alltoallv_pairwise(xchg_ctx_t *ctx, const void *sendbuf, const size_t *sendbytes,
                            const size_t *sendoffs, void *recvbuf, const size_t *recvbytes,
                            const size_t *recvoffs, const xchg_call_t *call,
                            const xchg_params_t *params, xchg_carry_t *carry)
{
    const char *send = sendbuf;
    char *recv = recvbuf;
    int p = ctx->size, rank = ctx->rank, rc;
    int nports = params->nports > 0 ? params->nports : 1;
    round_space_t space;
    xchg_mark_t mark = xchg_scratch_mark(ctx);

    (void)call;
    if (nports > p - 1)
        nports = p > 1 ? p - 1 : 1;
    rc = round_space(ctx, nports, carry != NULL, &space);
    if (rc != MPI_SUCCESS)
        goto out;
    memcpy(recv + recvoffs[rank], send + sendoffs[rank], recvbytes[rank]);
    if (carry)
        memcpy(carry->agreed, carry->mine, CARRY_BYTES);
    for (int first = 1; first < p; first += nports) {
        int nsends = 0, nrecvs = 0, last = first + nports < p ? first + nports : p;
        for (int step = first; step < last; step++) {
            int to = (rank + step) % p, from = (rank - step + p) % p;
            post_step(&space, step - first, carry, to, send + sendoffs[to], sendbytes[to], from,
                      recv + recvoffs[from], recvbytes[from], &nsends, &nrecvs);
        }
        rc = xchg_exchange(ctx, space.sends, nsends, space.recvs, nrecvs);
        if (rc != MPI_SUCCESS)
            goto out;
        for (int step = first; step < last && carry; step++) {
            int from = (rank - step + p) % p;
            carry_arrived(&space, step - first, recv + recvoffs[from], recvbytes[from], carry);
        }
    }
    if (carry)
        carry->done = 1;
out:
    xchg_scratch_release(ctx, mark);
    return rc;
}

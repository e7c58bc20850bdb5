/*
 * carry.c: MPI_Alltoallv's statistics carried in an algorithm's own messages (carry.h).
 */
#include <string.h>

#include "carry.h"

#define CARRY_WORDS 3
#define CARRY_BYTES (CARRY_WORDS * sizeof(uint64_t))

int xchg_carry_space(xchg_ctx_t *ctx, int n, const xchg_carry_t *carry, xchg_carry_space_t *space)
{
    size_t lists = 4 * (size_t)n * sizeof(xchg_msg_t);
    size_t stats = carry ? (size_t)n * CARRY_BYTES : 0;
    char *base = xchg_scratch_push(ctx, lists + stats);
    if (!base)
        return MPI_ERR_NO_MEM;
    space->sends = (xchg_msg_t *)base;
    space->recvs = space->sends + 2 * n;
    space->stats = (uint64_t *)(base + lists);
    space->nsends = space->nrecvs = 0;
    return MPI_SUCCESS;
}

void xchg_carry_begin(xchg_carry_t *carry)
{
    memcpy(carry->agreed, carry->mine, CARRY_BYTES);
}

void xchg_carry_send(xchg_carry_space_t *space, int slot, const xchg_carry_t *carry, int to,
                     const void *data, size_t bytes)
{
    (void)slot;
    if (!carry) { /* an empty message stays home (MPI makes both sides' byte counts equal) */
        if (bytes > 0)
            space->sends[space->nsends++] = (xchg_msg_t){to, (void *)data, bytes};
    } else {
        space->sends[space->nsends++] = (xchg_msg_t){to, (void *)carry->mine, CARRY_BYTES};
        space->sends[space->nsends++] = (xchg_msg_t){to, (void *)data, bytes};
    }
}

void xchg_carry_recv(xchg_carry_space_t *space, int slot, const xchg_carry_t *carry, int from,
                     void *data, size_t bytes)
{
    if (!carry) {
        if (bytes > 0)
            space->recvs[space->nrecvs++] = (xchg_msg_t){from, data, bytes};
    } else {
        space->recvs[space->nrecvs++] =
            (xchg_msg_t){from, space->stats + (size_t)slot * CARRY_WORDS, CARRY_BYTES};
        space->recvs[space->nrecvs++] = (xchg_msg_t){from, data, bytes};
    }
}

int xchg_carry_round(xchg_ctx_t *ctx, xchg_carry_space_t *space)
{
    int rc = xchg_exchange(ctx, space->sends, space->nsends, space->recvs, space->nrecvs);
    space->nsends = space->nrecvs = 0;
    return rc;
}

void xchg_carry_arrived(const xchg_carry_space_t *space, int slot, xchg_carry_t *carry,
                        void *data, size_t bytes)
{
    uint64_t stats[CARRY_WORDS];
    (void)data;
    (void)bytes;
    if (!carry)
        return;
    memcpy(stats, space->stats + (size_t)slot * CARRY_WORDS, CARRY_BYTES);
    for (int w = 0; w < CARRY_WORDS; w++)
        if (stats[w] > carry->agreed[w])
            carry->agreed[w] = stats[w];
}

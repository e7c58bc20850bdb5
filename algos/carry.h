/*
 * carry.h: carrying MPI_Alltoallv's statistics in an algorithm's own messages (xchg_carry_t),
 * for the algorithms in which every rank hears from every other rank exactly once (pairwise,
 * hier). Each message, empty ones included, also carries the sender's three statistics (24
 * bytes), and every rank ends with their maxima over all ranks, with no round of its own.
 *
 * A message of at most XCHG_CARRY_INLINE bytes travels with the statistics appended, through a
 * scratch slot; a larger one is sent from the user's buffer as it is, with the statistics as a
 * second message to the same peer in the same round (matched in order: MPI does not overtake).
 * Sender and receiver agree on which form a message takes, because MPI requires their byte
 * counts to be equal. Without carrying, empty messages are not sent (both sides skip them).
 *
 * Space for one round of at most n sends and n receives (one scratch push):
 *   sends[2n] recvs[2n] | stats[n][3] | out slots[n] | in slots[n]
 *   (a slot holds XCHG_CARRY_INLINE + 24 bytes; the three last parts only when carrying)
 */
#ifndef XCHG_CARRY_H
#define XCHG_CARRY_H

#include "xchg.h"

#define XCHG_CARRY_INLINE 1024 /* largest message that carries the statistics inline */

typedef struct xchg_carry_space {
    xchg_msg_t *sends, *recvs; /* 2 n each: a message may take two */
    char *out, *in;            /* n inline slots each */
    uint64_t *stats;           /* n x 3: statistics received apart */
    int nsends, nrecvs;        /* posted in the current round */
} xchg_carry_space_t;

/* The space of rounds of at most n sends and n receives, pushed on ctx's scratch stack. */
int xchg_carry_space(xchg_ctx_t *ctx, int n, const xchg_carry_t *carry, xchg_carry_space_t *space);
/* Before the first round: the maxima start with this rank's own statistics. */
void xchg_carry_begin(xchg_carry_t *carry);
/* Post a send (to) or a receive (from) of the current round in slot `slot` (< n). */
void xchg_carry_send(xchg_carry_space_t *space, int slot, const xchg_carry_t *carry, int to,
                     const void *data, size_t bytes);
void xchg_carry_recv(xchg_carry_space_t *space, int slot, const xchg_carry_t *carry, int from,
                     void *data, size_t bytes);
/* Run the current round's messages (xchg_exchange) and start the next. */
int xchg_carry_round(xchg_ctx_t *ctx, xchg_carry_space_t *space);
/* After the round: the message received in slot `slot` to its place, its statistics into the
 * maxima (carrying only). */
void xchg_carry_arrived(const xchg_carry_space_t *space, int slot, xchg_carry_t *carry,
                        void *data, size_t bytes);

#endif

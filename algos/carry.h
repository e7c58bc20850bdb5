/*
 * carry.h: carrying MPI_Alltoallv's statistics in an algorithm's own messages (xchg_carry_t),
 * for the algorithms in which every rank hears from every other rank exactly once (pairwise,
 * hier). Each message, empty ones included, goes with the sender's three statistics (24
 * bytes), and every rank ends with their maxima over all ranks, with no round of its own.
 *
 * The statistics go as a message of their own, before the data message to the same peer in the
 * same round (matched in order: MPI does not overtake), both always posted: the form of a pair's
 * messages then never depends on its byte counts, which in an erroneous program (counts that
 * differ between sender and receiver) differ between the two sides. A data message longer
 * than its receive is cut (MPI_ERR_TRUNCATE on the receiver), and nothing is left on the
 * channel for a later call to receive, so every rank still ends with the same maxima. Without
 * carrying, empty messages are not sent (both sides skip them, as MPI libraries do).
 *
 * Space for one round of at most n sends and n receives (one scratch push):
 *   sends[2n] recvs[2n] | stats[n][3] (the last part only when carrying)
 */
#ifndef XCHG_CARRY_H
#define XCHG_CARRY_H

#include "xchg.h"

typedef struct xchg_carry_space {
    xchg_msg_t *sends, *recvs; /* 2 n each: a message may take two */
    uint64_t *stats;           /* n x 3: statistics received */
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

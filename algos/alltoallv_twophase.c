/*
 * alltoallv_twophase.c: deterministic two-phase h-relation routing for MPI_Alltoallv.
 *
 * Paper: Bader, Helman, JaJa, "Practical Parallel Algorithms for Personalized Communication
 * and Integer Sorting", 1996: Section 3 (algorithm and
 * bin bounds), Section 3.3 (general case: h1 sent, h2 received), Appendix B (pseudocode).
 * The schedule arithmetic and the three local steps are in sched/twophase.c; the unit (a
 * chunk of U bytes), the header and the block layouts are described in sched/twophase.h.
 *
 * Phases, on every rank i (the message to self is a local copy first and is never routed):
 *   1. deal: unit k of the message for j goes to bin (i + j + k) mod p; every bin starts with
 *      rank i's byte counts (the header the intermediate rank needs);
 *   2. transpose of fixed blocks: bin b goes to rank b; block1 = 4p (the counts) + cap1 U,
 *      cap1 <= (h1/U + p-1)/p + (p-1)/2 units (the paper's n/p^2 + p/2, which every bin meets);
 *   3. rearrange: split each received block by final destination, runs ordered by source;
 *   4. transpose of fixed blocks: block2 = cap2 U, cap2 <= (h2/U + p-1)/p + (p-1)/2 units
 *      (the paper's h/p + p/2);
 *   5. place: every unit is copied to recvbuf + recvoffs[source] + k U; the receiver
 *      knows where each unit goes from its own receive counts alone.
 * Both transposes go through the alltoall the shim hands in (ctx->inner_alltoall: its selection,
 * the tuning table, else the model: normally radix with the model's r), or through the inner
 * algorithm forced with
 *     XCHG_ALLTOALLV=twophase:inner=NAME[,r=R][,k=K]     e.g. twophase:inner=radix,r=4
 * (',' and ':' both separate items, so twophase:inner=radix:r=4 is the same; r and k are
 * given to the inner algorithm, and completed by its model when absent).
 *
 * Agreement: the block sizes depend on h1 (most bytes any rank sends), h2 (most bytes any rank
 * receives) and the largest single message, which the shim agrees on before running it with
 * one xchg_agree_max of 3 values: ceil(log2 p) rounds of 24 bytes (the shim predicts the
 * choice from the statistics the previous call carried, and agrees only when it is this).
 *
 * Cost, linear model, transposes by radix r with k ports (C1/C2 of alltoall_radix per
 * transpose): C1 = 2 ceil((r-1)/k) ceil(log_r p) (+ ceil(log2 p) for the agreement);
 * C2 <= ceil((r-1)/k) ceil(p/r) ceil(log_r p) (block1 + block2), with
 * block1 ~ h1/p + U (p+1)/2 + 4p and block2 ~ h2/p + U (p+1)/2; local copies h1 + h2 + the
 * intermediate's share. Unlike pairwise, no round waits for the largest message: a rank that
 * receives h2 bytes receives them spread evenly over all intermediates (tuning/cost_twophase.c).
 * Restrictions (xchg_alltoallv_twophase_applies, the registry's predicate): p blocks of
 * either transpose must fit in size_t / 4, and a forced inner algorithm must serve both
 * transposes. Order within every (source, destination) message is kept; bytes of recvbuf
 * outside the receive ranges are never written.
 *
 * Count mismatches (an erroneous program: a sender's count for a message differs from its
 * receiver's). Only the sender knows its count, and a phase-2 block has no header, so each
 * phase-2 block ends in a trailer of TRAILER_BYTES: the intermediate rank's own count for the
 * block's destination (so the final receiver hears every sender's count once, from the block
 * that sender sent it as intermediate) and whether the intermediate's rearrangement failed. A
 * receiver whose counts all match places as usual; otherwise it reads the blocks as the senders
 * wrote them, keeps the first recvbytes[i] bytes of each message (as a truncated receive does)
 * and returns MPI_ERR_TRUNCATE when a sender sent more than it receives, or when a block could
 * not be built or read (only such a program can overfill the agreed bins). Either way every
 * rank takes part in both transposes, so that no rank waits forever. The cost models price the
 * transposes without the trailer (p * 16 bytes a rank).
 *
 * Scratch (pushed on the context's scratch stack in this order; the transposes push theirs
 * above and release it before they return):
 *   bins     [ bin 0 | bin 1 | ... | bin p-1 ]       p x block1, step 1 output
 *            bin b = [ counts s_i[0..p-1] ][ runs for j = 0..p-1 ][ slack ]
 *   landing  [ from 0 | from 1 | ... | from p-1 ]    p x block1, step 2 landing
 *   bins2    [ for 0 | for 1 | ... | for p-1 ]       p x (block2 + trailer), step 3 output
 *            block for j = [ runs by source ][ slack ][ count of this rank -> j | failed ]
 *   landing2 [ from 0 | ... | from p-1 ]             p x (block2 + trailer), step 4 landing: in
 *            the dead bins when that fits in block1, else pushed
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xchg.h"
#include "sched/twophase.h"

#define TRAILER_BYTES XCHG_TWOPHASE_TRAILER /* after each phase-2 block: a count, a flag */

/* The trailers of this rank's phase-2 blocks: its own count for each destination, and whether
 * its rearrangement failed. */
static void write_trailers(const xchg_twophase_plan_t *wire, int rank, const size_t *sendbytes,
                           int failed, char *bins2)
{
    for (int j = 0; j < wire->nranks; j++) {
        uint64_t trailer[2] = {j == rank ? 0 : sendbytes[j], (uint64_t)failed};
        memcpy(bins2 + (size_t)(j + 1) * wire->block2_bytes - TRAILER_BYTES, trailer,
               sizeof trailer);
    }
}

/* Step 5 after reading the trailers: every sender's count (sent[i]) and whether any block
 * failed; places the units, cut to this rank's counts where they differ. MPI_SUCCESS,
 * MPI_ERR_TRUNCATE (a longer message, or a block that failed), or MPI_ERR_NO_MEM. */
static int place_checked(xchg_ctx_t *ctx, const xchg_twophase_plan_t *wire, const char *landing2,
                         char *recv, const size_t *recvbytes, const size_t *recvoffs, int broken)
{
    int p = ctx->size, rank = ctx->rank, longer = 0, differ = 0;
    size_t *sent = xchg_scratch_push(ctx, (size_t)p * sizeof *sent);

    if (!sent)
        return MPI_ERR_NO_MEM;
    for (int b = 0; b < p; b++) {
        uint64_t trailer[2];
        memcpy(trailer, landing2 + (size_t)(b + 1) * wire->block2_bytes - TRAILER_BYTES,
               sizeof trailer);
        sent[b] = b == rank ? recvbytes[b] : (size_t)trailer[0];
        broken |= trailer[1] != 0;
        differ |= sent[b] != recvbytes[b];
        longer |= sent[b] > recvbytes[b];
    }
    if (!broken && !differ)
        broken = xchg_twophase_place(wire, rank, landing2, recv, recvbytes, recvoffs) != 0;
    else if (!broken)
        broken = xchg_twophase_place_cut(wire, rank, landing2, recv, sent, recvbytes,
                                         recvoffs) != 0;
    return broken || longer ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

int xchg_alltoallv_twophase(xchg_ctx_t *ctx, const void *sendbuf, const size_t *sendbytes,
                            const size_t *sendoffs, void *recvbuf, const size_t *recvbytes,
                            const size_t *recvoffs, const xchg_call_t *call,
                            const xchg_params_t *params, xchg_carry_t *carry)
{
    (void)carry;
    const char *send = sendbuf;
    char *recv = recvbuf, *bins, *landing, *bins2, *landing2;
    int p = ctx->size, rank = ctx->rank, rc = MPI_SUCCESS, broken = 0;
    size_t *fill = NULL;
    xchg_twophase_plan_t plan, wire;
    xchg_mark_t mark = xchg_scratch_mark(ctx);

    /* the message to self: a local copy (the shim makes both sides' counts equal) */
    if (sendbytes[rank] > 0)
        xchg_copy(recv + recvoffs[rank], send + sendoffs[rank], sendbytes[rank]);
    /* nothing crosses ranks: the same answer on every rank, from agreed values */
    if (p == 1 || call->max_send_bytes == 0 || call->max_recv_bytes == 0)
        return MPI_SUCCESS;
    if (xchg_twophase_plan_init(&plan, p, call->max_send_bytes, call->max_recv_bytes,
                                call->max_block_bytes) != 0)
        return MPI_ERR_ARG;
    /* the phase-2 blocks as they travel: the plan's, and the trailer */
    wire = plan;
    wire.block2_bytes += TRAILER_BYTES;

    fill = xchg_scratch_push(ctx, (size_t)p * sizeof *fill);
    bins = xchg_scratch_push(ctx, (size_t)p * plan.block1_bytes);
    landing = xchg_scratch_push(ctx, (size_t)p * plan.block1_bytes);
    bins2 = xchg_scratch_push(ctx, (size_t)p * wire.block2_bytes);
    if (!fill || !bins || !landing || !bins2) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }

    /* Steps 1-2: deal into bins, first transpose. A local step that finds the agreed sizes
     * violated (only an erroneous program can do that) still takes part in both transposes,
     * so that no other rank waits forever, and says so in its trailers. */
    broken |= xchg_twophase_deal(&plan, rank, send, sendbytes, sendoffs, bins, fill);
    rc = ctx->inner_alltoall(ctx, bins, landing, plan.block1_bytes, params->inner, params);
    if (rc != MPI_SUCCESS)
        goto out;

    /* Steps 3-4: regroup by final destination, the trailers, second transpose; the step-1
     * bins are dead, so they take the step-4 landing when it fits */
    broken |= xchg_twophase_rearrange(&wire, rank, landing, bins2, fill);
    write_trailers(&wire, rank, sendbytes, broken, bins2);
    landing2 = wire.block2_bytes <= plan.block1_bytes
                   ? bins
                   : xchg_scratch_push(ctx, (size_t)p * wire.block2_bytes);
    if (!landing2) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    rc = ctx->inner_alltoall(ctx, bins2, landing2, wire.block2_bytes, params->inner, params);
    if (rc != MPI_SUCCESS)
        goto out;

    /* Step 5: every unit to its place in the receive buffer */
    rc = place_checked(ctx, &wire, landing2, recv, recvbytes, recvoffs, broken);
out:
    xchg_scratch_release(ctx, mark);
    return rc;
}

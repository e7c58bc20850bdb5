/*
 * alltoall_radix.c: Bruck's radix-r index algorithm for MPI_Alltoall, k ports.
 *
 * Paper: Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient Algorithms for All-to-All
 * Communications in Multiport Message-Passing Systems", IEEE TPDS 1997
 * (Section 3, pseudocode in Appendix A). The
 * schedule arithmetic is algos/sched/radix.c, shared with the cost model, the unit tests and
 * build/xchg-sched.
 *
 * Phases. The paper (1) rotates the p blocks of rank i up by i, so that block id j is the block
 * for rank i + j; (2) runs w = ceil(log_r p) subphases: in step z (1 <= z <= r-1; the last
 * subphase has ceil(p / r^(w-1)) - 1 steps) of subphase x, the blocks whose radix-r digit x is
 * z, packed into one message, move z * r^x ranks to the right; (3) rotates back down by i.
 * With k ports, up to k steps of a subphase (they move disjoint ids) form one round: one
 * xchg_exchange() with up to k sends and k receives.
 *
 * Both rotations are replaced by index arithmetic. At rank i the block with id j lives
 *   - in sendbuf at block (i + j) mod p while it has not moved (digits below x all zero), and
 *   - in recvbuf at block (i - j) mod p once it has: that place holds whichever block with
 *     id j the rank has at the moment, and at the end it holds the block from rank i - j,
 *     which is where MPI_Alltoall wants it. Phase 3 is therefore free and phase 1 costs
 *     nothing either: blocks are read from sendbuf at their first move.
 * Local copies that remain, each of one block of b bytes:
 *   - the block to self (id 0), once;
 *   - pack: a message of more than one block is gathered into scratch before its round; a
 *     message of one block (it has not moved yet) is sent straight from sendbuf;
 *   - unpack: a received message is scattered to its places, except when its ids are
 *     consecutive (always in the last subphase, and for a single block) and their places do
 *     not wrap around the end of recvbuf; then it is received in place (messages list their
 *     blocks by decreasing id for this).
 * So r = p (direct exchange) copies only the block to self. r = 2 at p = 8 packs the 12
 * blocks it forwards and unpacks 8 of them plus, on the 3 ranks where the last subphase wraps,
 * 4 more: at most 25 block copies per call and rank, against 2H + 2p = 40 for the paper's
 * code (H = 12 forwarded blocks; Appendix A copies p blocks in each rotation).
 *
 * What these copies cost, measured: docs/results.md, local copies (a few percent of a call for
 * large blocks, nothing for small ones).
 *
 * Cost (linear model, b = block bytes): C1 = (w-1) ceil((r-1)/k) + ceil((ceil(p/r^(w-1))-1)/k)
 * <= ceil((r-1)/k) w; C2 = b * (sum over rounds of the round's largest message in blocks), at
 * most b ceil((r-1)/k) ceil(p/r) w for k = 1 (see algos/sched/radix.h for k >= 2).
 * Restrictions: none. Every p >= 1 and every r >= 2 (r > p acts as r = p; r or k of 0 act as
 * r = 2, k = 1); k above r - 1 acts as r - 1.
 *
 * Scratch (per call, sized by the largest round):
 *   first push:  [ sends[k] | recvs[k] | step records[k] | packed messages of a round ]
 *   second push: [ received messages of a round that are not received in place ]
 */
#include <string.h>

#include "xchg.h"
#include "sched/radix.h"

/* What a step of the current round left to do after the exchange. */
typedef struct radix_step {
    int step;
    int count;       /* blocks in the message */
    int in_place;    /* received straight into recvbuf */
    size_t incoming; /* first block in the receive scratch otherwise */
} radix_step_t;

#define RADIX_ALIGN 64

int xchg_alltoall_radix(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t block_bytes,
                        const xchg_params_t *params)
{
    const char *send = sendbuf;
    char *recv = recvbuf, *scratch, *packed, *incoming;
    const size_t b = block_bytes;
    int p = ctx->size, me = ctx->rank, rc = MPI_SUCCESS, most_steps;
    size_t most_blocks = 0, header;
    xchg_radix_t sched;
    xchg_msg_t *sends, *recvs;
    radix_step_t *steps;
    xchg_mark_t mark = xchg_scratch_mark(ctx);

    /* id 0, the block to self: a local copy straight to its final place */
    xchg_copy(recv + (size_t)me * b, send + (size_t)me * b, b);
    if (p == 1 || b == 0)
        goto out;

    /* scratch for the largest round */
    xchg_radix_init(&sched, p, params->radix, params->nports);
    most_steps = sched.nports; /* at most r - 1: xchg_radix_init clamps k */
    for (int q = 0; q < sched.nrounds; q++) {
        size_t blocks = xchg_radix_round_total_blocks(&sched, q);
        most_blocks = blocks > most_blocks ? blocks : most_blocks;
    }
    header = 2 * (size_t)most_steps * sizeof(xchg_msg_t) + (size_t)most_steps * sizeof *steps;
    header = (header + RADIX_ALIGN - 1) / RADIX_ALIGN * RADIX_ALIGN;
    scratch = xchg_scratch_push(ctx, header + most_blocks * b);
    incoming = xchg_scratch_push(ctx, most_blocks * b);
    if (!scratch || !incoming) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    sends = (xchg_msg_t *)scratch;
    recvs = sends + most_steps;
    steps = (radix_step_t *)(recvs + most_steps);
    packed = scratch + header;

    for (int q = 0; q < sched.nrounds; q++) {
        int x, first, nsteps, weight;
        size_t packed_at = 0, incoming_at = 0;
        xchg_radix_round(&sched, q, &x, &first, &nsteps);
        weight = sched.weight[x];

        /* build the round: up to k independent steps of subphase x */
        for (int s = 0; s < nsteps; s++) {
            int z = first + s, count = xchg_radix_step_count(&sched, x, z);
            int offset = z * weight, to = (me + offset) % p, from = (me - offset + p) % p;
            int top = xchg_radix_step_block(&sched, x, z, 0);
            size_t place = (size_t)((me - top + p) % p);

            /* send: a single block has not moved yet (its id is z r^x) and leaves sendbuf as
             * it is; more blocks are packed, from sendbuf or from their place in recvbuf */
            if (count == 1) {
                sends[s] = (xchg_msg_t){to, (void *)(send + (size_t)((me + top) % p) * b), b};
            } else {
                for (int n = 0; n < count; n++) {
                    int j = xchg_radix_step_block(&sched, x, z, n);
                    const char *from_place = j % weight == 0
                                                 ? send + (size_t)((me + j) % p) * b
                                                 : recv + (size_t)((me - j + p) % p) * b;
                    xchg_copy(packed + (packed_at + (size_t)n) * b, from_place, b);
                }
                sends[s] = (xchg_msg_t){to, packed + packed_at * b, (size_t)count * b};
                packed_at += (size_t)count;
            }

            /* receive: in place when the ids are consecutive and their places do not wrap */
            steps[s] = (radix_step_t){z, count, 0, 0};
            if (count <= weight && place + (size_t)count <= (size_t)p) {
                recvs[s] = (xchg_msg_t){from, recv + place * b, (size_t)count * b};
                steps[s].in_place = 1;
            } else {
                recvs[s] = (xchg_msg_t){from, incoming + incoming_at * b, (size_t)count * b};
                steps[s].incoming = incoming_at;
                incoming_at += (size_t)count;
            }
        }

        rc = xchg_exchange(ctx, sends, nsteps, recvs, nsteps);
        if (rc != MPI_SUCCESS)
            goto out;

        /* unpack what did not arrive in place: id j goes to block (me - j) mod p */
        for (int s = 0; s < nsteps; s++) {
            if (steps[s].in_place)
                continue;
            for (int n = 0; n < steps[s].count; n++) {
                int j = xchg_radix_step_block(&sched, x, steps[s].step, n);
                xchg_copy(recv + (size_t)((me - j + p) % p) * b,
                          incoming + (steps[s].incoming + (size_t)n) * b, b);
            }
        }
    }
out:
    xchg_scratch_release(ctx, mark);
    return rc;
}

/*
 * alltoallv_hier.c: the hierarchical factor algorithm for MPI_Alltoallv (name "hier"), for
 * nodes that hold different numbers of ranks, k ports.
 *
 * Paper: Sanders, Traff, "The hierarchical factor algorithm for all-to-all communication", 2002:
 * algorithm ClusteredAllToAll (Fig. 2) with Section 4's improvement, as algos/alltoall_hier.c runs
 * it for MPI_Alltoall: the same schedule (algos/sched/factor.c), each message with its own size,
 * straight between the user's buffers at the given offsets. The paper treats regular all-to-all
 * only; nothing in the schedule depends on the sizes, but a step lasts as long as its message, so
 * skewed counts make the rounds uneven as they make pairwise's.
 *
 * Phases: the message to self is copied; then, phase by phase over the distinct node sizes and
 * round by round over the 1-factors of the active nodes, this rank's steps, k steps of every
 * pair of nodes per batch (one xchg_exchange). See alltoall_hier.c and factor.h.
 * Cost: C1 as alltoall_hier.c (sum over rounds of ceil(L / k)); C2 at most the largest message
 * times C1 (tuning/cost_hier.c prices it so, as pairwise's model does). Local copies: the
 * message to self.
 * Statistics for the next call (xchg_carry_t, when the shim asks for it): every rank receives
 * exactly one message from every other rank, so each message, empty ones included, carries
 * them (algos/carry.h); without carrying, empty messages stay home.
 * Restrictions: as alltoall_hier.c (xchg_alltoall_hier_applies). Bytes of recvbuf outside the
 * given blocks are never touched.
 *
 * Scratch (per call, on the context's scratch stack):
 *   [ the schedule's workspace: O(p + nodes) ints ]
 *   [ one round's steps ]   [ one batch's messages (carry.h) ]
 */
#include <string.h>

#include "carry.h"
#include "sched/factor.h"

/* Where one rank's messages are: block j at offs[j], bytes[j] long. */
typedef struct blocks {
    char *buf;
    const size_t *bytes, *offs;
} blocks_t;

/* One round: this rank's steps, batch by batch (k steps of the round per batch; a batch of
 * more than room slots, which the schedule never makes, would go in parts). A batch that fails
 * (a truncated receive: an erroneous program) does not stop the others; the first error is
 * returned. */
static int run_round(xchg_ctx_t *ctx, const xchg_factor_slot_t *slots, int nslots, int nports,
                     int room, const blocks_t *out, const blocks_t *in,
                     xchg_carry_space_t *space, xchg_carry_t *carry)
{
    int rc = MPI_SUCCESS, batch_rc;
    for (int s = 0; s < nslots;) {
        int batch = slots[s].step / nports, first = s;
        for (; s < nslots && s - first < room && slots[s].step / nports == batch; s++) {
            int peer = slots[s].peer;
            if (slots[s].send)
                xchg_carry_send(space, s - first, carry, peer, out->buf + out->offs[peer],
                                out->bytes[peer]);
            if (slots[s].recv)
                xchg_carry_recv(space, s - first, carry, peer, in->buf + in->offs[peer],
                                in->bytes[peer]);
        }
        batch_rc = xchg_carry_round(ctx, space);
        /* the statistics' messages are whole even when a data message was cut (carry.h) */
        for (int r = first; r < s && carry; r++)
            if (slots[r].recv)
                xchg_carry_arrived(space, r - first, carry, in->buf + in->offs[slots[r].peer],
                                   in->bytes[slots[r].peer]);
        rc = rc == MPI_SUCCESS ? batch_rc : rc;
    }
    return rc;
}

int xchg_alltoallv_hier(xchg_ctx_t *ctx, const void *sendbuf, const size_t *sendbytes,
                        const size_t *sendoffs, void *recvbuf, const size_t *recvbytes,
                        const size_t *recvoffs, const xchg_call_t *call,
                        const xchg_params_t *params, xchg_carry_t *carry)
{
    const blocks_t out = {(char *)sendbuf, sendbytes, sendoffs};
    const blocks_t in = {recvbuf, recvbytes, recvoffs};
    int p = ctx->size, rank = ctx->rank, rc = MPI_SUCCESS, nslots, most, room;
    int nports = params->nports > 0 ? params->nports : 1;
    xchg_factor_t sched;
    xchg_factor_slot_t *slots;
    xchg_carry_space_t space;
    xchg_mark_t mark = xchg_scratch_mark(ctx);
    void *workspace;

    (void)call;
    /* the schedule of this communicator's layout, and room for one round */
    workspace = xchg_scratch_push(ctx, xchg_factor_workspace_bytes(p, ctx->nnodes));
    if (!workspace) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    if (xchg_factor_init(&sched, p, ctx->nnodes, ctx->node_of, XCHG_FACTOR_EARLY, workspace) != 0) {
        rc = MPI_ERR_INTERN;
        goto out;
    }
    most = xchg_factor_max_slots(&sched);
    slots = xchg_scratch_push(ctx, (size_t)most * sizeof *slots);
    if (!slots) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    /* a rank takes part in at most two slots a step (a send and a receive inside its node) */
    room = most / 2 < nports ? most : 2 * nports;
    rc = xchg_carry_space(ctx, room, carry, &space);
    if (rc != MPI_SUCCESS)
        goto out;

    xchg_copy(in.buf + recvoffs[rank], out.buf + sendoffs[rank], recvbytes[rank]);
    if (carry)
        xchg_carry_begin(carry);
    /* phases over the node sizes; rounds over the 1-factors of the active nodes */
    for (int ph = 0; ph < sched.shape.nphases; ph++) {
        if (sched.pos[ctx->node] < sched.shape.phase_first[ph])
            break; /* this rank's node has left: it has exchanged everything */
        for (int i = 0; i < xchg_factor_nrounds(&sched.shape, ph); i++) {
            int round_rc;
            nslots = xchg_factor_rank_slots(&sched, ph, i, rank, slots);
            /* every round runs, even after one failed, so that no other rank waits for this */
            round_rc = run_round(ctx, slots, nslots, nports, room, &out, &in, &space, carry);
            rc = rc == MPI_SUCCESS ? round_rc : rc;
        }
    }
    if (carry)
        carry->done = rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE;
out:
    xchg_scratch_release(ctx, mark);
    return rc;
}

/*
 * alltoall_torus.c: complete exchange on an all-port ring or 2D torus for MPI_Alltoall.
 *
 * Paper: Liu, Gu, Bi, Tu, Dong, "Optimal All-to-All Personalized Communication in All-Port Tori"
 * (../shared/papers/004_b7196a565a1bb1dc.txt): algorithm AR on a ring (Section III, Fig. 2) and
 * AT2 on an r x c torus (Section IV, Fig. 5), generalised to every shape. The schedule is the
 * pure code of algos/sched/torus.c (see torus.h for the phases, the generalisation and what it
 * costs), shared with the cost model (tuning/cost_torus.c), the unit tests and build/xchg-sched.
 *
 * Phases (AT2; AR is one ring phase, the other shapes two): phase 1, two steps in which every
 * node sends out of its four ports what goes to the other groups G_ij (x and y parity), the
 * second step relaying the diagonal blocks; phases 2 and 3, AR on the logical rows and columns
 * of each group, at the same time, every node relaying what is not for it. Every step is one
 * xchg_exchange(): up to four messages out (one per port, to the node 1, 2 or 4 hops along it)
 * and up to four in; a message combines the blocks of many (origin, destination) pairs.
 *
 * Cost (linear model, b = block bytes; r <= c multiples of 4): C1 = c/2 + 2 rounds,
 * C2 = r c^2 / 8 b (Lemma 4, the lower bound of Lemma 1); a ring of p (even): p/2 rounds,
 * ceil(p^2/8) b (Lemma 2). Other shapes: torus.h. Local copies: the block to self, and every
 * block of a message of more than one block is packed before its step and unpacked after it
 * (a single block goes out of and into its place when it can): about 2 copies per block and hop
 * where the paper counts 3 r c m rho in all (one rearrangement per phase); the plan counts them.
 *
 * The shape. The parameter dims (RxC, P for a ring), which the cost model fills in from the
 * communicator's periodic Cartesian topology (rank order of MPI_Cart_coords: rank = x c + y) or
 * from XCHG_TORUS for a communicator without one; a shape without comm_size nodes is refused.
 * All of them are equal on every rank, so every rank runs the same schedule.
 *
 * Restrictions: a shape (above); p = 1 copies the block. Memory: the node's plan (malloc, freed
 * at the end: O(blocks it sends and receives), torus.h).
 *
 * Scratch (pushed on the context's scratch stack, released at the end; u = ceil(b/2) for the
 * SPLIT kind, b otherwise):
 *   [ sends[4] | recvs[4] ] [ packed messages of a step: max_send_units u ]
 *   [ received messages of a step: max_recv_units u ] [ relay store: nslots slots of u bytes ]
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "xchg.h"
#include "sched/torus.h"

int xchg_alltoall_torus_shape(const xchg_call_t *call, const xchg_params_t *params, int *rows,
                              int *cols, const char **why)
{
    static __thread char text[192];
    const xchg_topo_t *topo = call->topo;
    const char *from;
    int r, c;

    if (params && params->dims_r > 0 && params->dims_c > 0) {
        r = params->dims_r;
        c = params->dims_c;
        from = "dims";
    } else if (topo && topo->torus_ndims > 0) {
        r = topo->torus_dims[0];
        c = topo->torus_ndims > 1 ? topo->torus_dims[1] : 1;
        from = topo->torus_from_env ? "XCHG_TORUS" : "the periodic Cartesian topology";
    } else {
        *why = "no torus shape: the communicator has no periodic Cartesian topology, and neither "
               "dims nor XCHG_TORUS gives one";
        return -1;
    }
    if (r < 1 || c < 1 || (long long)r * c != call->comm_size) {
        snprintf(text, sizeof text,
                 "the shape %dx%d (%s) has %lld nodes, the communicator %d ranks", r, c, from,
                 (long long)r * c, call->comm_size);
        *why = text;
        return -1;
    }
    /* a ring is 1 x P, whichever way it was given */
    *rows = r == 1 || c == 1 ? 1 : r;
    *cols = r == 1 || c == 1 ? r * c : c;
    return 0;
}

int xchg_alltoall_torus_applies(const xchg_call_t *call, const xchg_params_t *params,
                                const char **why)
{
    int rows, cols;
    return xchg_alltoall_torus_shape(call, params, &rows, &cols, why) == 0;
}

/* Where a block (or part) of a plan is on this rank. */
typedef struct places {
    const char *send;
    char *recv, *store;
    size_t block_bytes, unit;
    const xchg_torus_t *t;
} places_t;

static char *place(const places_t *at, const xchg_torus_loc_t *loc, int part)
{
    size_t offset = xchg_torus_part_offset(at->t, at->block_bytes, part);
    if (loc->where == XCHG_TORUS_AT_SEND)
        return (char *)at->send + (size_t)loc->index * at->block_bytes + offset;
    if (loc->where == XCHG_TORUS_AT_RECV)
        return at->recv + (size_t)loc->index * at->block_bytes + offset;
    return at->store + (size_t)loc->index * at->unit;
}

/* Step k of the plan: pack, one xchg_exchange, unpack. */
static int run_step(xchg_ctx_t *ctx, const xchg_torus_plan_t *plan, int k, const places_t *at,
                    char *packed, char *incoming, xchg_msg_t *sends, xchg_msg_t *recvs)
{
    int nsends = 0, nrecvs = 0, rc;
    size_t used = 0;

    /* messages out: a single block from its place, more packed */
    for (int i = plan->send_first[k]; i < plan->send_first[k + 1]; i++) {
        const xchg_torus_xfer_t *x = &plan->sends[i];
        size_t bytes = xchg_torus_part_bytes(at->t, at->block_bytes, x->part);
        if (bytes == 0)
            continue; /* the empty second part of 1-byte blocks */
        if (x->nblocks == 1) {
            sends[nsends++] =
                (xchg_msg_t){x->peer, place(at, &plan->locs[x->first], x->part), bytes};
            continue;
        }
        for (int j = 0; j < x->nblocks; j++)
            memcpy(packed + used + (size_t)j * bytes,
                   place(at, &plan->locs[x->first + (size_t)j], x->part), bytes);
        sends[nsends++] = (xchg_msg_t){x->peer, packed + used, (size_t)x->nblocks * bytes};
        used += (size_t)x->nblocks * bytes;
    }

    /* messages in: a single block for this rank into its place, others to the step's buffer */
    used = 0;
    for (int i = plan->recv_first[k]; i < plan->recv_first[k + 1]; i++) {
        const xchg_torus_xfer_t *x = &plan->recvs[i];
        size_t bytes = xchg_torus_part_bytes(at->t, at->block_bytes, x->part);
        if (bytes == 0)
            continue;
        if (x->nblocks == 1 && plan->locs[x->first].where == XCHG_TORUS_AT_RECV) {
            recvs[nrecvs++] =
                (xchg_msg_t){x->peer, place(at, &plan->locs[x->first], x->part), bytes};
            continue;
        }
        recvs[nrecvs++] = (xchg_msg_t){x->peer, incoming + used, (size_t)x->nblocks * bytes};
        used += (size_t)x->nblocks * bytes;
    }

    rc = xchg_exchange(ctx, sends, nsends, recvs, nrecvs);
    if (rc != MPI_SUCCESS)
        return rc;

    /* what was received into the step's buffer: to the receive buffer or the relay store */
    used = 0;
    for (int i = plan->recv_first[k]; i < plan->recv_first[k + 1]; i++) {
        const xchg_torus_xfer_t *x = &plan->recvs[i];
        size_t bytes = xchg_torus_part_bytes(at->t, at->block_bytes, x->part);
        if (bytes == 0 || (x->nblocks == 1 && plan->locs[x->first].where == XCHG_TORUS_AT_RECV))
            continue;
        for (int j = 0; j < x->nblocks; j++)
            memcpy(place(at, &plan->locs[x->first + (size_t)j], x->part),
                   incoming + used + (size_t)j * bytes, bytes);
        used += (size_t)x->nblocks * bytes;
    }
    return MPI_SUCCESS;
}

int xchg_alltoall_torus(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t block_bytes,
                        const xchg_params_t *params)
{
    const size_t b = block_bytes;
    int p = ctx->size, me = ctx->rank, rc = MPI_SUCCESS, have_sched = 0, have_plan = 0;
    xchg_mark_t mark = xchg_scratch_mark(ctx);
    xchg_torus_t sched;
    xchg_torus_plan_t plan;
    places_t at;
    xchg_msg_t *msgs;
    char *packed, *incoming;

    /* the block to self: a local copy straight to its place */
    memcpy((char *)recvbuf + (size_t)me * b, (const char *)sendbuf + (size_t)me * b, b);
    if (p == 1 || b == 0)
        goto out;
    if (params->dims_r < 1 || params->dims_c < 1 ||
        (long long)params->dims_r * params->dims_c != p) {
        rc = MPI_ERR_ARG; /* no shape: the predicate refuses such a call */
        goto out;
    }

    /* the schedule, this rank's plan and the scratch they need */
    if (xchg_torus_init(&sched, params->dims_r, params->dims_c) != 0) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    have_sched = 1;
    if (xchg_torus_plan_init(&sched, me, &plan) != 0) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    have_plan = 1;
    at = (places_t){sendbuf, recvbuf, NULL, b, xchg_torus_part_bytes(&sched, b, 0), &sched};
    msgs = xchg_scratch_push(ctx, 2 * XCHG_TORUS_NPORTS * sizeof *msgs);
    packed = xchg_scratch_push(ctx, (size_t)plan.max_send_units * at.unit);
    incoming = xchg_scratch_push(ctx, (size_t)plan.max_recv_units * at.unit);
    at.store = xchg_scratch_push(ctx, (size_t)plan.nslots * at.unit);
    if (!msgs || !packed || !incoming || !at.store) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }

    /* every step: all ports at once */
    for (int k = 0; k < plan.nsteps && rc == MPI_SUCCESS; k++)
        rc = run_step(ctx, &plan, k, &at, packed, incoming, msgs, msgs + XCHG_TORUS_NPORTS);
out:
    if (have_plan)
        xchg_torus_plan_free(&plan);
    if (have_sched)
        xchg_torus_free(&sched);
    xchg_scratch_release(ctx, mark);
    return rc;
}

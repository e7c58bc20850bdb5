/*
 * alltoall_torus.c: complete exchange on an all-port ring or 2D torus for MPI_Alltoall.
 *
 * Paper: Liu, Gu, Bi, Tu, Dong, "Optimal All-to-All Personalized Communication in All-Port Tori",
 * 2006: algorithm AR on a ring (Section III, Fig. 2) and AT2 on an r x c torus (Section IV, Fig.
 * 5), generalised to every shape. The schedule is the pure code of algos/sched/torus.c (see torus.h
 * for the phases, the generalisation and what it costs), shared with the cost model
 * (tuning/cost_torus.c), the unit tests and build/xchg-sched.
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
 * ceil(p^2/8) b (Lemma 2). Other shapes: torus.h. Local copies (the plan lays out the store so
 * that a relayed block stays where it lands, torus.c's plan section; plan.packed and .unpacked
 * count them): the block to self; every own block that leaves in a message of more than one
 * block, once; every block for this rank that arrives in such a message, once; and a relayed
 * block only where a phase regroups the blocks (AT2's phases 2 and 3) or its message cannot be
 * received in place, or it waits long where the store would exceed 3 r c units (torus.h). Per
 * node, in units of r c m (measured by tests/unit/test_sched_torus.c): rings under 2 (relays
 * never copied), 4x4 1.9, 8x8 3.2, 16x16 4.75, where the paper counts 3 r c m rho (one
 * rearrangement per phase) and the former pack-and-unpack at every hop took 2.5, 4.5 and 6.5
 * for those tori.
 *
 * The shape. The parameter dims (RxC, P for a ring), which the cost model fills in from the
 * communicator's periodic Cartesian topology (rank order of MPI_Cart_coords: rank = x c + y) or
 * from XCHG_TORUS for a communicator without one; a shape without comm_size nodes is refused.
 * All of them are equal on every rank, so every rank runs the same schedule.
 *
 * Restrictions: a shape (above); p = 1 copies the block.
 *
 * The plan. The schedule and this rank's plan are pure functions of (r, c, rank) and cost
 * O(r c (r + c)) to build (milliseconds at 16x16, more than a call of small blocks), so they are
 * kept in one small process-wide cache (PLAN_CACHE entries, mutex-protected, shared by every
 * communicator and thread): a repeated call shape builds them once. An entry is never changed or
 * freed once filled (so it is used without the lock); when the cache is full, a new shape is built
 * for the call and freed at its end. Memory per entry: O(r + c) for the schedule, O(blocks the node
 * sends and receives) for the plan (torus.h).
 *
 * Scratch (pushed on the context's scratch stack, released at the end; u = ceil(b/2) for the
 * SPLIT kind, b otherwise):
 *   [ sends[4] | recvs[4] ] [ store: plan.store_units units of u bytes ]
 * The store holds every message that is not a single block in its place (packed sends, received
 * messages, relayed blocks), at the offsets the plan gives (a part-1 block of SPLIT takes
 * floor(b/2) bytes, so the blocks of a message are contiguous).
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "xchg.h"
#include "sched/torus.h"

#define PLAN_CACHE 8

typedef struct torus_entry {
    int rows, cols, node;
    xchg_torus_t sched;
    xchg_torus_plan_t plan;
} torus_entry_t;

static torus_entry_t plan_cache[PLAN_CACHE];
static int plan_cache_used;
static pthread_mutex_t plan_cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* The schedule of rows x cols and node's plan into *e; 0, or -1 when memory is exhausted. */
static int build_entry(torus_entry_t *e, int rows, int cols, int node)
{
    e->rows = rows;
    e->cols = cols;
    e->node = node;
    if (xchg_torus_init(&e->sched, rows, cols) != 0)
        return -1;
    if (xchg_torus_plan_init(&e->sched, node, &e->plan) != 0) {
        xchg_torus_free(&e->sched);
        return -1;
    }
    return 0;
}

/* The schedule and plan of (rows, cols, node): from the cache, built into the cache while it
 * has room, else built into *own (*owned = 1: the caller frees it). NULL when memory is
 * exhausted. */
static const torus_entry_t *torus_plan(int rows, int cols, int node, torus_entry_t *own, int *owned)
{
    const torus_entry_t *found = NULL;

    *owned = 0;
    pthread_mutex_lock(&plan_cache_lock);
    for (int i = 0; i < plan_cache_used && !found; i++)
        if (plan_cache[i].rows == rows && plan_cache[i].cols == cols && plan_cache[i].node == node)
            found = &plan_cache[i];
    if (!found && plan_cache_used < PLAN_CACHE &&
        build_entry(&plan_cache[plan_cache_used], rows, cols, node) == 0)
        found = &plan_cache[plan_cache_used++];
    pthread_mutex_unlock(&plan_cache_lock);
    if (found)
        return found;
    if (build_entry(own, rows, cols, node) != 0)
        return NULL;
    *owned = 1;
    return own;
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
    if (loc->where == XCHG_TORUS_AT_STORE)
        return at->store + (size_t)loc->index * at->unit +
               (size_t)loc->pos * xchg_torus_part_bytes(at->t, at->block_bytes, part);
    return (loc->where == XCHG_TORUS_AT_SEND ? (char *)at->send : at->recv) +
           (size_t)loc->index * at->block_bytes +
           xchg_torus_part_offset(at->t, at->block_bytes, part);
}

/* Copies [first, end) of the plan (consecutive blocks are one memcpy). */
static void run_copies(const xchg_torus_plan_t *plan, int first, int end, const places_t *at)
{
    for (int c = first; c < end; c++) {
        const xchg_torus_copy_t *cp = &plan->copies[c];
        xchg_copy(place(at, &cp->to, cp->part), place(at, &cp->from, cp->part),
                  (size_t)cp->nblocks * xchg_torus_part_bytes(at->t, at->block_bytes, cp->part));
    }
}

/* The messages [first, end) of a step as xchg_exchange takes them; returns how many (the empty
 * second parts of 1-byte blocks are left out, on both sides). */
static int step_msgs(const xchg_torus_xfer_t *xfers, int first, int end, const places_t *at,
                     xchg_msg_t *msgs)
{
    int n = 0;
    for (int i = first; i < end; i++) {
        size_t bytes =
            (size_t)xfers[i].nblocks * xchg_torus_part_bytes(at->t, at->block_bytes, xfers[i].part);
        if (bytes > 0)
            msgs[n++] = (xchg_msg_t){xfers[i].peer, place(at, &xfers[i].at, xfers[i].part), bytes};
    }
    return n;
}

/* Step k of the plan: pack, one xchg_exchange, unpack. */
static int run_step(xchg_ctx_t *ctx, const xchg_torus_plan_t *plan, int k, const places_t *at,
                    xchg_msg_t *sends, xchg_msg_t *recvs)
{
    int nsends, nrecvs, rc;

    run_copies(plan, plan->pack_first[k], plan->unpack_first[k], at);
    nsends = step_msgs(plan->sends, plan->send_first[k], plan->send_first[k + 1], at, sends);
    nrecvs = step_msgs(plan->recvs, plan->recv_first[k], plan->recv_first[k + 1], at, recvs);
    rc = xchg_exchange(ctx, sends, nsends, recvs, nrecvs);
    if (rc != MPI_SUCCESS)
        return rc;
    run_copies(plan, plan->unpack_first[k], plan->pack_first[k + 1], at);
    return MPI_SUCCESS;
}

int xchg_alltoall_torus(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t block_bytes,
                        const xchg_params_t *params)
{
    const size_t b = block_bytes;
    int p = ctx->size, me = ctx->rank, rc = MPI_SUCCESS, owned = 0;
    xchg_mark_t mark = xchg_scratch_mark(ctx);
    const torus_entry_t *entry = NULL;
    const xchg_torus_plan_t *plan;
    torus_entry_t own;
    places_t at;
    xchg_msg_t *msgs;

    /* the block to self: a local copy straight to its place */
    xchg_copy((char *)recvbuf + (size_t)me * b, (const char *)sendbuf + (size_t)me * b, b);
    if (p == 1 || b == 0)
        goto out;
    if (params->dims_r < 1 || params->dims_c < 1 ||
        (long long)params->dims_r * params->dims_c != p) {
        rc = MPI_ERR_ARG; /* no shape: the predicate refuses such a call */
        goto out;
    }

    /* the schedule and this rank's plan (cached), and the scratch they need */
    entry = torus_plan(params->dims_r, params->dims_c, me, &own, &owned);
    if (!entry) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    plan = &entry->plan;
    at = (places_t){sendbuf,      recvbuf, NULL, b, xchg_torus_part_bytes(&entry->sched, b, 0),
                    &entry->sched};
    msgs = xchg_scratch_push(ctx, 2 * XCHG_TORUS_NPORTS * sizeof *msgs);
    at.store = xchg_scratch_push(ctx, (size_t)plan->store_units * at.unit);
    if (!msgs || !at.store) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }

    /* every step: all ports at once */
    for (int k = 0; k < plan->nsteps && rc == MPI_SUCCESS; k++)
        rc = run_step(ctx, plan, k, &at, msgs, msgs + XCHG_TORUS_NPORTS);
out:
    if (owned) {
        xchg_torus_plan_free(&own.plan);
        xchg_torus_free(&own.sched);
    }
    xchg_scratch_release(ctx, mark);
    return rc;
}

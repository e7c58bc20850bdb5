/*
 * cost_twophase.c: cost model of the two-phase h-relation routing for MPI_Alltoallv
 * (algos/alltoallv_twophase.c; Bader, Helman, JaJa,
 * "Practical parallel algorithms for personalized communication and integer sorting", 1996,
 * Sections 3 and 3.3).
 *
 * Inputs: only the agreed values of the call (p, h1 = most bytes any rank sends, h2 = most
 * bytes any rank receives, the largest single message), so the prediction, and with it the
 * choice between twophase and pairwise, is the same on every rank and follows the imbalance of
 * the call. From them the plan (sched/twophase.c) gives the two fixed transpose blocks
 * block1 ~ h1/p + U (p+1)/2 + 4p and block2 ~ h2/p + U (p+1)/2, and
 *     time = T_alltoall(block1) + T_alltoall(block2) + rho (h1 + h2 + p min(cap1, cap2) U)
 * where T_alltoall is the model of the forced inner algorithm (params->inner), or else what
 * the caller's auto_inner says (the registry passes the best model among its alltoall
 * algorithms that can serve the block, what the library's own selection does without a
 * tuning table: tuning/registry.c), and the copies are steps 1, 3 and 5. The transposes
 * run on the call's communicator, so their models see its layout (call->topo) and price their
 * rounds with the constants of the links they cross (xchg_machine_for). The agreement
 * round is not charged: the shim pays it for every alltoallv that may choose this algorithm,
 * whichever it chooses.
 *
 * At p = 2 the model says INFINITY: with no third rank each byte crosses twice, and the
 * transposes' models (shared memory on one node) and rho (a copy of 1 MiB, in cache) priced it
 * at 2 times shm for MPI_Alltoallv of 16 MiB at 2 ranks, where it ran 9.3 ms against shm's
 * 2.7 (45 ms on its first call, its scratch touched); learning probed it in a sort of 8 calls.
 *
 * Against pairwise (tuning/cost_base.c), which is charged ceil((p-1)/k) rounds of the largest
 * single message: twophase wins when messages are skewed (the largest message is much above
 * h/p, so pairwise rounds wait on it, while the transposes carry h/p + O(p U) per block) and,
 * through the radix transposes, when p is large and messages are small (2 ceil(log_r p)
 * start-ups instead of p - 1); pairwise wins for balanced, large messages, where twophase
 * moves every byte twice and copies it three times.
 *
 * params: inner (NULL = the library's selection), and r/k for a forced inner algorithm. Zero r/k
 * are left 0: they are completed per transpose by the inner algorithm's own model when the
 * transposes run (xchg_alltoall_select_run), since the two blocks may prefer different r.
 * Given r/k are returned as they run (as the inner model normalises them: radix r = min(r, p),
 * k = min(k, r - 1); pairwise k = min(k, p - 1); the larger of the two transposes' values when
 * they differ); with inner NULL they are not used and only clamped to r <= p, k <= p - 1.
 *
 * Work: the plan (xchg_twophase_plan_init) and, per transpose, the model of the forced inner
 * alltoall or auto_inner (the registry's: every registered alltoall, each a bounded search,
 * tuning/cost_radix.c).
 */
#include <math.h>

#include "cost.h"
#include "../algos/sched/twophase.h"

/* One transpose of block_bytes per rank pair on the call's communicator (its layout picks
 * the inner models' constants, xchg_machine_for); *ran receives the inner parameters the
 * forced inner model completed (zero for the library's selection, which auto_inner prices). */
static double transpose_cost(const xchg_call_t *call, size_t block_bytes,
                             const xchg_machine_t *machine, const xchg_params_t *params,
                             xchg_transpose_cost_fn *auto_inner, xchg_params_t *ran)
{
    xchg_call_t transpose = {0};
    const xchg_algo_t *inner = params->inner;

    transpose.coll = XCHG_ALLTOALL;
    transpose.comm_size = call->comm_size;
    transpose.topo = call->topo;
    transpose.block_bytes = block_bytes;
    transpose.max_block_bytes = block_bytes;
    *ran = (xchg_params_t){0};
    if (inner) {
        ran->radix = params->radix;
        ran->nports = params->nports;
        return !inner->native && inner->cost ? inner->cost(&transpose, machine, ran) : INFINITY;
    }
    return auto_inner ? auto_inner(&transpose, machine) : INFINITY;
}

/* A given r or k as it runs (see the file header): the larger of the transposes' values, at
 * most `most`; 0 stays 0. */
static int ran_as(int given, int first, int second, int most)
{
    int v = first > second ? first : second;
    if (given <= 0)
        return given;
    if (v <= 0)
        v = given;
    return v < most ? v : most;
}

double xchg_cost_twophase(const xchg_call_t *call, const xchg_machine_t *machine,
                          xchg_params_t *params, xchg_transpose_cost_fn *auto_inner)
{
    int p = call->comm_size;
    size_t h1 = call->max_send_bytes, h2 = call->max_recv_bytes, middle;
    xchg_twophase_plan_t plan;
    xchg_params_t ran1 = {0}, ran2 = {0};
    double t;

    if (p < 1 || xchg_twophase_plan_init(&plan, p, h1, h2, call->max_block_bytes) != 0)
        return INFINITY;
    /* two ranks, no r or k given to complete: the price below is infinite (at its end), and
     * pricing the transposes would rank every alltoall algorithm twice for nothing */
    if (p == 2 && params->radix <= 0 && params->nports <= 0)
        return INFINITY;
    if (p == 1 || h1 == 0 || h2 == 0) {
        /* nothing crosses ranks: the self copy only */
        t = (double)call->max_block_bytes * machine->rho;
    } else {
        middle = (size_t)p * (plan.cap1 < plan.cap2 ? plan.cap1 : plan.cap2) * plan.unit_bytes;
        t = transpose_cost(call, plan.block1_bytes, machine, params, auto_inner, &ran1) +
            transpose_cost(call, plan.block2_bytes + XCHG_TWOPHASE_TRAILER, machine, params,
                           auto_inner, &ran2) +
            (double)(h1 + h2 + middle) * machine->rho;
    }
    params->radix = ran_as(params->radix, ran1.radix, ran2.radix, p > 2 ? p : 2);
    params->nports = ran_as(params->nports, ran1.nports, ran2.nports, p > 2 ? p - 1 : 1);
    /* two ranks: no third to route through, so the transposes move every byte twice where one
     * exchange moves it once, whatever the skew: auto never takes it (a forced one runs) */
    return p == 2 ? INFINITY : t;
}

/*
 * cost_twophase.c: cost model of the two-phase h-relation routing for MPI_Alltoallv
 * (algos/alltoallv_twophase.c; Bader, Helman, JaJa, ../shared/papers/001_4fe372a83d448690.txt,
 * Sections 3 and 3.3).
 *
 * Inputs: only the agreed values of the call (p, h1 = most bytes any rank sends, h2 = most
 * bytes any rank receives, the largest single message), so the prediction, and with it the
 * choice between twophase and pairwise, is the same on every rank and follows the imbalance of
 * the call. From them the plan (sched/twophase.c) gives the two fixed transpose blocks
 * block1 ~ h1/p + U (p+1)/2 + 4p and block2 ~ h2/p + U (p+1)/2, and
 *     time = T_alltoall(block1) + T_alltoall(block2) + rho (h1 + h2 + p min(cap1, cap2) U)
 * where T_alltoall is the model of the forced inner algorithm, or else the best model among
 * the registry's alltoall algorithms that can serve the block (what the library's own
 * selection does without a tuning table), and the copies are steps 1, 3 and 5. The agreement
 * round is not charged: the shim pays it for every alltoallv that may choose this algorithm,
 * whichever it chooses.
 *
 * Against pairwise (tuning/cost_base.c), which is charged ceil((p-1)/k) rounds of the largest
 * single message: twophase wins when messages are skewed (the largest message is much above
 * h/p, so pairwise rounds wait on it, while the transposes carry h/p + O(p U) per block) and,
 * through the radix transposes, when p is large and messages are small (2 ceil(log_r p)
 * start-ups instead of p - 1); pairwise wins for balanced, large messages, where twophase
 * moves every byte twice and copies it three times.
 *
 * params: inner (0 = the library's selection), and r/k for a forced inner algorithm. They are
 * left as given: zero r/k are completed per transpose by the inner algorithm's own model when
 * the transposes run (xchg_alltoall_select_run), since the two blocks may prefer different r.
 */
#include <math.h>

#include "cost.h"
#include "../algos/sched/twophase.h"

/* One transpose of block_bytes per rank pair. */
static double transpose_cost(int p, size_t block_bytes, const xchg_machine_t *machine,
                             const xchg_params_t *params)
{
    xchg_call_t transpose = {0};
    double best = INFINITY;

    transpose.coll = XCHG_ALLTOALL;
    transpose.comm_size = p;
    transpose.block_bytes = block_bytes;
    transpose.max_block_bytes = block_bytes;
    if (params->inner > 0 && params->inner <= xchg_nalgos) {
        const xchg_algo_t *inner = &xchg_algos[params->inner - 1];
        xchg_params_t inner_params = {0};
        inner_params.radix = params->radix;
        inner_params.nports = params->nports;
        return inner->alltoall && inner->cost ? inner->cost(&transpose, machine, &inner_params)
                                              : INFINITY;
    }
    for (int i = 0; i < xchg_nalgos; i++) {
        const xchg_algo_t *algo = &xchg_algos[i];
        xchg_params_t candidate = {0};
        const char *why = "";
        double t;
        if (algo->coll != XCHG_ALLTOALL || !algo->cost ||
            !algo->applies(&transpose, &candidate, &why))
            continue;
        t = algo->cost(&transpose, machine, &candidate);
        if (t < best)
            best = t;
    }
    return best;
}

double xchg_cost_alltoallv_twophase(const xchg_call_t *call, const xchg_machine_t *machine,
                                    xchg_params_t *params)
{
    int p = call->comm_size;
    size_t h1 = call->max_send_bytes, h2 = call->max_recv_bytes, middle;
    xchg_twophase_plan_t plan;

    if (p < 1 || xchg_twophase_plan_init(&plan, p, h1, h2, call->max_block_bytes) != 0)
        return INFINITY;
    /* nothing crosses ranks: the self copy only */
    if (p == 1 || h1 == 0 || h2 == 0)
        return (double)call->max_block_bytes * machine->rho;
    middle = (size_t)p * (plan.cap1 < plan.cap2 ? plan.cap1 : plan.cap2) * plan.unit_bytes;
    return transpose_cost(p, plan.block1_bytes, machine, params) +
           transpose_cost(p, plan.block2_bytes, machine, params) +
           (double)(h1 + h2 + middle) * machine->rho;
}

/*
 * cost_base.c: the built-in machine constants, the cost of one round, and the cost models of
 * the baselines (native, pairwise, ring). See cost.h for the model.
 */
#include <math.h>

#include "cost.h"

/* Defaults when no tuning table is loaded: a shared-memory node with a few microseconds of
 * message start-up and memcpy-class bandwidth (about 10 GB/s measured here for memcpy, so
 * 1e-10 s/byte for local copies and twice that on the wire, which crosses memory twice). */
const xchg_machine_t xchg_machine_default = {
    .beta = 3e-6,
    .tau = 2e-10,
    .rho = 1e-10,
    .port_share = 1.0,
};

double xchg_cost_round(const xchg_machine_t *machine, int nmsgs, size_t max_bytes)
{
    if (nmsgs <= 0)
        return 0.0;
    return machine->beta +
           (double)max_bytes * machine->tau * (1.0 + machine->port_share * (nmsgs - 1));
}

/* The MPI library's own collective cannot be predicted from beta and tau: only a measured
 * tuning table (xchg-tune --verify) can choose it. */
double xchg_cost_native(const xchg_call_t *call, const xchg_machine_t *machine,
                        xchg_params_t *params)
{
    (void)call;
    (void)machine;
    (void)params;
    return INFINITY;
}

/* ceil((p-1)/k) rounds of k messages of `message` bytes; k chosen when not given (a k above
 * p - 1 acts as p - 1). */
static double pairwise_rounds(int p, size_t message, const xchg_machine_t *machine,
                              xchg_params_t *params)
{
    double best = INFINITY;
    int best_k = 1;
    if (p <= 1) {
        if (params->nports == 0)
            params->nports = 1;
        return 0.0;
    }
    for (int k = 1; k <= p - 1; k++) {
        int nports = params->nports > 0 ? params->nports : k;
        int inflight = nports < p - 1 ? nports : p - 1;
        double t = ((p - 2) / inflight + 1) * xchg_cost_round(machine, inflight, message);
        if (t < best) {
            best = t;
            best_k = nports;
        }
        if (params->nports > 0)
            break;
    }
    params->nports = best_k;
    return best;
}

double xchg_cost_alltoall_pairwise(const xchg_call_t *call, const xchg_machine_t *machine,
                                   xchg_params_t *params)
{
    return pairwise_rounds(call->comm_size, call->block_bytes, machine, params) +
           (double)call->block_bytes * machine->rho;
}

double xchg_cost_allgather_ring(const xchg_call_t *call, const xchg_machine_t *machine,
                                xchg_params_t *params)
{
    (void)params;
    return (call->comm_size - 1) * xchg_cost_round(machine, 1, call->block_bytes) +
           (double)call->block_bytes * machine->rho;
}

/* Upper bound from the agreed values: every round lasts as long as the largest message of
 * the call. Exact for even counts; with skewed counts it charges pairwise for the rounds that
 * wait on a few large messages, which is the imbalance two-phase routing removes. */
double xchg_cost_alltoallv_pairwise(const xchg_call_t *call, const xchg_machine_t *machine,
                                    xchg_params_t *params)
{
    return pairwise_rounds(call->comm_size, call->max_block_bytes, machine, params) +
           (double)call->max_block_bytes * machine->rho;
}

/*
 * cost_base.c: the built-in machine constants, the cost of one round, and the cost models of
 * the baselines (pairwise, ring; native is in cost_native.c). See cost.h for the model.
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

/* ceil((p-1)/k) rounds of k messages of `message` bytes. A given k is clamped to what runs
 * (1 .. p - 1). Left 0, k is chosen among all of 1 .. p - 1 without trying them: with
 * R = ceil((p-1)/k) rounds the time is R a + R k g, a = beta + m tau (1 - port_share) and
 * g = m tau port_share >= 0, and since 1 <= R, R k >= p - 1 and R <= p - 1, it is at least
 * a + (p-1) g (k = p - 1) when a > 0 and at least (p-1) (a + g) (k = 1) when a <= 0. */
static double pairwise_time(int p, int nports, size_t message, const xchg_machine_t *machine)
{
    return ((p - 2) / nports + 1) * xchg_cost_round(machine, nports, message);
}

static double pairwise_rounds(int p, size_t message, const xchg_machine_t *machine,
                              xchg_params_t *params)
{
    double one, all;
    if (p <= 2) {
        params->nports = 1;
        return p <= 1 ? 0.0 : pairwise_time(p, 1, message, machine);
    }
    if (params->nports > 0) {
        params->nports = params->nports < p - 1 ? params->nports : p - 1;
        return pairwise_time(p, params->nports, message, machine);
    }
    one = pairwise_time(p, 1, message, machine);
    all = pairwise_time(p, p - 1, message, machine);
    params->nports = all < one ? p - 1 : 1;
    return all < one ? all : one;
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

/*
 * cost_circulant.c: cost model of the circulant concatenation algorithm for MPI_Allgather
 * (algos/allgather_circulant.c; Bruck et al., "Efficient
 * algorithms for all-to-all communications in multiport message-passing systems", 1997,
 * Section 4).
 *
 * Predicted time = sum over the d rounds of xchg_cost_round(k, (k+1)^t b) for t < d-1, plus
 * xchg_cost_round(areas, largest area) for the last round (so the message sizes sum to the
 * C2 of Theorem 4.3), plus rho * bytes copied locally: the own block, and the runs that wrap
 * around the end of the receive buffer. In round t < d-1 the k+1 runs a rank touches span
 * (k+1)^(t+1) blocks, so one of them, of (k+1)^t blocks, wraps at a fraction
 * (k+1)^(t+1) / p of the ranks; the last round always wraps one run (charged at the largest
 * area).
 *
 * k left 0: every k in 1 .. min(p - 1, CIRC_MAX_PORTS) is evaluated and the fastest kept.
 * Each costs O(d + log b) (xchg_circ_shape: the plan's numbers without its areas). The
 * parameter is returned as it runs: k = min(k, p - 1), at least 1 (a k at or above p - 1 is
 * the one-round algorithm).
 */
#include <math.h>

#include "cost.h"
#include "../algos/sched/circulant.h"

#define CIRC_MAX_PORTS 16

static double circulant_time(int p, int k, size_t b, const xchg_machine_t *machine)
{
    xchg_circ_t plan;
    double t = 0.0, copied = (double)b, held = 1.0; /* (k+1)^round */

    xchg_circ_shape(&plan, p, k, b);
    for (int round = 0; round + 1 < plan.nrounds; round++, held *= plan.nports + 1) {
        t += xchg_cost_round(machine, plan.nports, (size_t)held * b);
        copied += held * b * held * (plan.nports + 1) / p;
    }
    t += xchg_cost_round(machine, plan.nareas, plan.last_cap);
    copied += (double)plan.last_cap;
    return t + xchg_cost_copy(machine, copied);
}

double xchg_cost_allgather_circulant(const xchg_call_t *call, const xchg_machine_t *given,
                                     xchg_params_t *params)
{
    int p = call->comm_size, best_k = 1;
    size_t b = call->block_bytes;
    xchg_machine_t m = xchg_machine_for(call, given);
    const xchg_machine_t *machine = &m;
    double best = INFINITY;

    if (p <= 1) {
        params->nports = 1;
        return xchg_cost_copy(machine, (double)b);
    }
    if (params->nports > 0) {
        /* a given k: the schedule uses at most p - 1 ports, and so does the model */
        params->nports = xchg_circ_ports(p, params->nports);
        return circulant_time(p, params->nports, b, machine);
    }
    for (int k = 1; k <= CIRC_MAX_PORTS && k <= p - 1; k++) {
        double t = circulant_time(p, k, b, machine);
        if (t < best) {
            best = t;
            best_k = k;
        }
    }
    params->nports = best_k;
    return best;
}

/*
 * cost_radix.c: cost model of the radix index algorithm for MPI_Alltoall
 * (algos/alltoall_radix.c; Bruck et al., ../shared/papers/002_0c74752dd805d1e2.txt, Section 3).
 *
 * Predicted time = sum over the C1 rounds of xchg_cost_round(steps in the round, largest
 * message of the round) + rho * bytes copied locally. The rounds and message sizes are the
 * exact ones of the schedule (algos/sched/radix.c), so sum of the largest messages is the C2
 * of the paper's model. Local copies follow the algorithm: the block to self, every block of a
 * message of more than one block packed, and every such block unpacked unless its message is
 * received in place (consecutive ids, which wrap at (count - 1) of the p ranks: the model
 * charges the average over ranks).
 *
 * The rounds of a subphase are priced run by run (xchg_radix_count_runs: at most 3 runs of
 * steps with equal counts), so one (r, k) costs O(log_r p) whatever r is.
 *
 * Choice of parameters left 0. r: every r in [2, p] for p <= RADIX_FULL_SEARCH; above, the
 * radices 2 .. 32, for every number of digits w the smallest r with r^w >= p and the next
 * RADIX_MAX_PORTS radices after it (further up, rounds and bytes only grow), ceil(p/m) for
 * m = 2 .. 8 (a last subphase of m - 1 steps), and p.
 * k: 1 .. min(r - 1, RADIX_MAX_PORTS) and r - 1 (a whole subphase per round). A given r above
 * p is evaluated as p and left as given; a given k is used as given.
 */
#include <math.h>

#include "cost.h"
#include "../algos/sched/radix.h"

#define RADIX_FULL_SEARCH 64
#define RADIX_MAX_PORTS 16

/* Bytes copied locally by one rank (see the file header). */
static double copied_bytes(const xchg_radix_t *sched, size_t block_bytes)
{
    double blocks = 1.0; /* the block to self */
    for (int x = 0; x < sched->ndigits; x++) {
        int first[3], last[3], count[3];
        int runs = xchg_radix_count_runs(sched, x, first, last, count);
        for (int i = 0; i < runs; i++) {
            double c = count[i], per_step;
            if (count[i] <= 1)
                continue; /* sent from sendbuf, received in place */
            per_step = c + (count[i] > sched->weight[x] ? c : c * (c - 1) / sched->nranks);
            blocks += per_step * (last[i] - first[i] + 1);
        }
    }
    return blocks * (double)block_bytes;
}

/* The rounds of the schedule, run by run: a round that starts at step z0 has the count of z0
 * as its largest message (counts do not increase with the step). */
static double rounds_time(const xchg_radix_t *sched, size_t block_bytes,
                          const xchg_machine_t *machine)
{
    int k = sched->nports;
    double t = 0.0;
    for (int x = 0; x < sched->ndigits; x++) {
        int first[3], last[3], count[3], steps = xchg_radix_nsteps(sched, x);
        int runs = xchg_radix_count_runs(sched, x, first, last, count);
        int final_round = (steps - 1) / k; /* the only round that may hold fewer than k steps */
        for (int i = 0; i < runs; i++) {
            /* rounds start at steps 1 + j k; those starting inside this run */
            int j0 = (first[i] - 1 + k - 1) / k, j1 = (last[i] - 1) / k;
            size_t bytes = (size_t)count[i] * block_bytes;
            if (j1 < j0)
                continue;
            if (j1 == final_round) {
                t += xchg_cost_round(machine, steps - final_round * k, bytes);
                j1--;
            }
            if (j1 >= j0)
                t += (j1 - j0 + 1) * xchg_cost_round(machine, k, bytes);
        }
    }
    return t;
}

static double time_for(int p, int r, int k, size_t block_bytes, const xchg_machine_t *machine)
{
    xchg_radix_t sched;
    xchg_radix_init(&sched, p, r, k);
    return rounds_time(&sched, block_bytes, machine);
}

/* Best time for radix r, over the k candidates (or the given k); *best_k receives it. */
static double radix_time(int p, int r, int given_k, size_t block_bytes,
                         const xchg_machine_t *machine, int *best_k)
{
    xchg_radix_t sched;
    double copies, best;
    int most = r - 1 < RADIX_MAX_PORTS ? r - 1 : RADIX_MAX_PORTS;

    xchg_radix_init(&sched, p, r, 1);
    copies = copied_bytes(&sched, block_bytes) * machine->rho; /* the same for every k */
    if (given_k > 0) {
        *best_k = given_k;
        return time_for(p, r, given_k, block_bytes, machine) + copies;
    }
    best = INFINITY;
    for (int k = 1; k <= most + 1; k++) {
        int ports = k <= most ? k : r - 1; /* the last candidate: a whole subphase per round */
        double t;
        if (k == most + 1 && ports == most)
            break;
        t = time_for(p, r, ports, block_bytes, machine) + copies;
        if (t < best) {
            best = t;
            *best_k = ports;
        }
    }
    return best;
}

/* The smallest r >= 2 with r^w >= p. */
static int smallest_radix(int p, int w)
{
    int r = (int)ceil(pow((double)p, 1.0 / w));
    if (r < 2)
        r = 2;
    while (r > 2 && pow((double)(r - 1), w) >= (double)p)
        r--;
    while (pow((double)r, w) < (double)p)
        r++;
    return r;
}

static void consider(int p, int r, const xchg_params_t *given, size_t block_bytes,
                     const xchg_machine_t *machine, double *best, int *best_r, int *best_k)
{
    int k = 1;
    double t;
    if (r < 2 || r > p)
        return;
    t = radix_time(p, r, given->nports, block_bytes, machine, &k);
    if (t < *best) {
        *best = t;
        *best_r = r;
        *best_k = k;
    }
}

double xchg_cost_alltoall_radix(const xchg_call_t *call, const xchg_machine_t *machine,
                                xchg_params_t *params)
{
    int p = call->comm_size, best_r = 2, best_k = 1;
    size_t b = call->block_bytes;
    double best = INFINITY;

    if (p <= 1) {
        params->radix = params->radix > 0 ? params->radix : 2;
        params->nports = params->nports > 0 ? params->nports : 1;
        return (double)b * machine->rho;
    }
    if (params->radix > 0) {
        consider(p, params->radix < p ? params->radix : p, params, b, machine, &best, &best_r,
                 &best_k);
        best_r = params->radix;
    } else if (p <= RADIX_FULL_SEARCH) {
        for (int r = 2; r <= p; r++)
            consider(p, r, params, b, machine, &best, &best_r, &best_k);
    } else {
        for (int r = 2; r <= 32; r++)
            consider(p, r, params, b, machine, &best, &best_r, &best_k);
        for (int w = 2; (1 << (w - 1)) < p && w < XCHG_RADIX_MAX_DIGITS; w++) {
            int r = smallest_radix(p, w);
            for (int extra = 0; extra <= RADIX_MAX_PORTS; extra++)
                if (r + extra > 32)
                    consider(p, r + extra, params, b, machine, &best, &best_r, &best_k);
        }
        for (int parts = 2; parts <= 8; parts++)
            if ((p + parts - 1) / parts > 32)
                consider(p, (p + parts - 1) / parts, params, b, machine, &best, &best_r, &best_k);
        consider(p, p, params, b, machine, &best, &best_r, &best_k);
    }
    params->radix = best_r;
    params->nports = params->nports > 0 ? params->nports : best_k;
    return best;
}

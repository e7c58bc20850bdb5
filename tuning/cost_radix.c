/*
 * cost_radix.c: cost model of the radix index algorithm for MPI_Alltoall
 * (algos/alltoall_radix.c; Bruck et al., "Efficient algorithms for all-to-all communications in
 * multiport message-passing systems", 1997, Section 3).
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
 * steps with equal counts), so one (r, k) costs O(log_r p) whatever r is; the runs of a radix
 * are found once and priced for every k.
 *
 * Choice of the parameters left 0, from a bounded set of candidates, so that the work of a
 * decision hardly grows with p (build/xchg-decide measures what a decision costs):
 *   r: p and p - 1; every radix up to 8 (16 for a given k), 16 and 32; for w = 2, 3, ..
 *      digits the smallest radix r_w with r_w^w >= p, the one before it (the largest with
 *      w + 1 digits) and the next one (4 for a given k): above r_w the w - 1 full subphases
 *      only grow while the last one shrinks slowly; ceil(p/m) for m = 2 .. 4 (.. 8 for a
 *      given k), a last subphase of m - 1 steps; for a given k, k and k + 1 and the radices
 *      jk + 1 at and above every r_w (full subphases of whole rounds).
 *   k: 1 and r - 1 first, then 2 .. 4 (2 .. 16 for a given r), the steps of every subphase
 *      and the end of every run of equal counts (a round boundary where the message size
 *      drops). Within a run every message has the same size, and there the time of R rounds
 *      of a subphase of n steps is R (beta + m tau (1 - port_share)) + port_share m tau n,
 *      least at R = 1 or R = n: so the best k is mostly 1 or r - 1, else near a run boundary.
 *   Pruning: a radix is built only when a lower bound of its time (its rounds' start-ups,
 *   p - 1 blocks on the wire, the block to self) can beat the best time so far, and its k
 *   beyond 1 and r - 1 are priced only when a bound over every k (rounds_bound) can. The
 *   bounds leave out a node's injection limit (node_share, cost.h), which only adds time, so
 *   they hold with it; the candidates are the same (with the limit a round of many messages
 *   costs more, so the best k is more often a small one, which every radix tries). Ties go
 *   to the smaller r, then the smaller k, so the choice does not depend on the search order.
 *   The set is a heuristic: it can miss the best (r, k) of the whole space, by little where it
 *   does (docs/results.md, the radix model's bounded search against an exhaustive one).
 * The parameters are returned as they run: r above p acts as p and k above r - 1 acts as
 * r - 1 (algos/alltoall_radix.c), so r = min(r, p) and k = min(k, r - 1) (r >= 2, k >= 1);
 * a given r or k is otherwise kept.
 */
#include <math.h>

#include "cost.h"
#include "../algos/sched/radix.h"

#define RADIX_MAX_CAND 160 /* radix candidates: at most 2 + 17 + 7 * 6 + 2 * 30 + 7 + 2 */
#define PORTS_SEARCH 4     /* k up to this one for every radix of the search */
#define PORTS_GIVEN_R 16   /* and for a given radix (the search it replaces went this far) */
#define PORTS_MAX_CAND (PORTS_GIVEN_R + 4 * XCHG_RADIX_MAX_DIGITS)

/* A radix's schedule, subphase by subphase, as runs of steps with equal counts. */
typedef struct radix_shape {
    int radix;
    int ndigits;
    int steps[XCHG_RADIX_MAX_DIGITS];
    int nruns[XCHG_RADIX_MAX_DIGITS];
    int first[XCHG_RADIX_MAX_DIGITS][3], last[XCHG_RADIX_MAX_DIGITS][3];
    int count[XCHG_RADIX_MAX_DIGITS][3];
    double copied_blocks; /* per rank, see the file header; the same for every k */
} radix_shape_t;

static void shape_init(radix_shape_t *shape, int p, int r)
{
    xchg_radix_t sched;
    double blocks = 1.0; /* the block to self */

    xchg_radix_init(&sched, p, r, 1);
    shape->radix = sched.radix;
    shape->ndigits = sched.ndigits;
    for (int x = 0; x < sched.ndigits; x++) {
        int *first = shape->first[x], *last = shape->last[x], *count = shape->count[x];
        shape->steps[x] = xchg_radix_nsteps(&sched, x);
        shape->nruns[x] = xchg_radix_count_runs(&sched, x, first, last, count);
        /* copies: a message of more than one block is packed, and unpacked unless in place */
        for (int i = 0; i < shape->nruns[x]; i++) {
            double c = count[i], per_step;
            if (count[i] <= 1)
                continue; /* sent from sendbuf, received in place */
            per_step = c + (count[i] > sched.weight[x] ? c : c * (c - 1) / sched.nranks);
            blocks += per_step * (last[i] - first[i] + 1);
        }
    }
    shape->copied_blocks = blocks;
}

/* The rounds of the schedule with k ports, run by run: a round that starts at step z0 has the
 * count of z0 as its largest message (counts do not increase with the step). */
static double rounds_time(const radix_shape_t *shape, int k, size_t block_bytes,
                          const xchg_machine_t *machine)
{
    double t = 0.0;
    for (int x = 0; x < shape->ndigits; x++) {
        int steps = shape->steps[x];
        int final_round = (steps - 1) / k; /* the only round that may hold fewer than k steps */
        for (int i = 0; i < shape->nruns[x]; i++) {
            /* rounds start at steps 1 + j k; those starting inside this run */
            int j0 = (shape->first[x][i] - 1 + k - 1) / k, j1 = (shape->last[x][i] - 1) / k;
            size_t bytes = (size_t)shape->count[x][i] * block_bytes;
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

/* The same for k = 1 (a round per step) and k = r - 1 (a round per subphase, led by its first
 * step), without divisions: the two times every radix is tried with first. */
static double rounds_one_port(const radix_shape_t *shape, size_t block_bytes,
                              const xchg_machine_t *machine)
{
    double t = 0.0;
    for (int x = 0; x < shape->ndigits; x++)
        for (int i = 0; i < shape->nruns[x]; i++)
            t += (shape->last[x][i] - shape->first[x][i] + 1) *
                 xchg_cost_round(machine, 1, (size_t)shape->count[x][i] * block_bytes);
    return t;
}

static double rounds_all_ports(const radix_shape_t *shape, size_t block_bytes,
                               const xchg_machine_t *machine)
{
    double t = 0.0;
    for (int x = 0; x < shape->ndigits; x++)
        t += xchg_cost_round(machine, shape->steps[x], (size_t)shape->count[x][0] * block_bytes);
    return t;
}

/* A lower bound on the rounds' time over every k: a round of n messages of at most c blocks,
 * m blocks in all, costs beta + c b tau (1 + s (n - 1)) (s = port_share), which is at least
 * beta + b tau (s m + (1 - s) c) for s <= 1 and beta + b tau m for s >= 1; and a subphase has
 * at least one round, and the largest message of its first round is the largest it has. tau
 * here is the least rate of any message (xchg_cost_least_tau), so the bound stays one where a
 * byte past large_from costs less. */
static double rounds_bound(const radix_shape_t *shape, size_t block_bytes,
                           const xchg_machine_t *machine)
{
    double s = machine->port_share < 1.0 ? machine->port_share : 1.0, t = 0.0;
    double tau = xchg_cost_least_tau(machine);
    for (int x = 0; x < shape->ndigits; x++) {
        double blocks = 0.0;
        for (int i = 0; i < shape->nruns[x]; i++)
            blocks += (double)shape->count[x][i] * (shape->last[x][i] - shape->first[x][i] + 1);
        t += machine->beta +
             (double)block_bytes * tau * (s * blocks + (1.0 - s) * shape->count[x][0]);
    }
    return t;
}

static double copies_time(const radix_shape_t *shape, size_t block_bytes,
                          const xchg_machine_t *machine)
{
    return xchg_cost_copy(machine, shape->copied_blocks * (double)block_bytes);
}

/* Add v to the set list[0 .. *n) when it lies in [lo, hi] and is new. */
static void add_candidate(int *list, int *n, int max, int v, int lo, int hi)
{
    if (v < lo || v > hi || *n >= max)
        return;
    for (int i = 0; i < *n; i++)
        if (list[i] == v)
            return;
    list[(*n)++] = v;
}

/* The k candidates of a radix besides 1 and r - 1 (see the file header): 2 .. upto, the steps
 * of every subphase and the end of every run. */
static int port_candidates(const radix_shape_t *shape, int upto, int *list)
{
    int n = 0, most = shape->radix - 2;
    for (int k = 2; k <= upto; k++)
        add_candidate(list, &n, PORTS_MAX_CAND, k, 2, most);
    for (int x = 0; x < shape->ndigits; x++) {
        add_candidate(list, &n, PORTS_MAX_CAND, shape->steps[x], 2, most);
        for (int i = 0; i < shape->nruns[x]; i++)
            add_candidate(list, &n, PORTS_MAX_CAND, shape->last[x][i], 2, most);
    }
    return n;
}

/* r^w >= p, without overflow. */
static int reaches(long r, int w, int p)
{
    long power = 1;
    for (int i = 0; i < w; i++)
        if ((power *= r) >= p)
            return 1;
    return 0;
}

/* The smallest r >= 2 with r^w >= p (w >= 2), from the floating-point root corrected in
 * integers. */
static int smallest_radix(int p, int w)
{
    int r = (int)pow((double)p, 1.0 / w);
    if (r < 2)
        r = 2;
    while (r > 2 && reaches(r - 1, w, p))
        r--;
    while (!reaches(r, w, p))
        r++;
    return r;
}

/* How widely the radices are searched: with k given a radix is priced once, with k left 0
 * a few times, so a given k affords more radices. */
typedef struct breadth {
    int small; /* every radix up to this one */
    int after; /* the radices r_w + 1 .. r_w + after after the smallest of w digits */
    int parts; /* ceil(p/m) for m = 2 .. parts */
} breadth_t;

static const breadth_t auto_ports = {8, 1, 4}, given_ports = {16, 4, 8};

/* The r candidates for p >= 3 ranks (see the file header). */
static int radix_candidates(int p, int given_k, int *list)
{
    const breadth_t *breadth = given_k > 0 ? &given_ports : &auto_ports;
    int n = 0;

    /* r = p first: often the best, and then its time rules out most others at once */
    add_candidate(list, &n, RADIX_MAX_CAND, p, 2, p);
    add_candidate(list, &n, RADIX_MAX_CAND, p - 1, 2, p);
    for (int r = 2; r <= breadth->small; r++)
        add_candidate(list, &n, RADIX_MAX_CAND, r, 2, p);
    add_candidate(list, &n, RADIX_MAX_CAND, 16, 2, p);
    add_candidate(list, &n, RADIX_MAX_CAND, 32, 2, p);
    /* by number of digits w = 2, 3, ..: r_w, the smallest radix with w digits, and a few after
     * it; for a given k the radices jk + 1 from r_w up (full subphases of whole rounds) */
    for (int w = 2; w < XCHG_RADIX_MAX_DIGITS; w++) {
        int r = smallest_radix(p, w);
        for (int e = -1; e <= breadth->after && r > breadth->small; e++)
            add_candidate(list, &n, RADIX_MAX_CAND, r + e, 2, p);
        if (given_k > 0) {
            int j = (r - 1 + given_k - 1) / given_k;
            add_candidate(list, &n, RADIX_MAX_CAND, j * given_k + 1, 2, p);
            add_candidate(list, &n, RADIX_MAX_CAND, (j + 1) * given_k + 1, 2, p);
        }
        if (r <= (given_k > 0 ? 2 : breadth->small))
            break;
    }
    for (int m = 2; m <= breadth->parts; m++)
        add_candidate(list, &n, RADIX_MAX_CAND, (p + m - 1) / m, 2, p);
    if (given_k > 0 && given_k < p) {
        /* the largest radices whose subphases take one round each */
        add_candidate(list, &n, RADIX_MAX_CAND, given_k, 2, p);
        add_candidate(list, &n, RADIX_MAX_CAND, given_k + 1, 2, p);
    }
    return n;
}

/* Keep (t, r, k) when it is faster than the best so far, or as fast with a smaller r or k. */
static void keep(double t, int r, int k, double *best, int *best_r, int *best_k)
{
    if (t < *best || (t == *best && (r < *best_r || (r == *best_r && k < *best_k)))) {
        *best = t;
        *best_r = r;
        *best_k = k;
    }
}

/* A lower bound for radix r, before its schedule is built: its rounds (C1 for a given k, one
 * per subphase at least otherwise) each carry a message of at least one block, the ids
 * 1 .. p-1 are sent at least once each (see rounds_bound), and the block to self is copied. */
static double quick_bound(int p, int r, int k, size_t block_bytes, const xchg_machine_t *machine)
{
    double s = machine->port_share < 1.0 ? machine->port_share : 1.0, b = (double)block_bytes;
    double tau = xchg_cost_least_tau(machine); /* as in rounds_bound */
    long reach = 1, below = 1;
    int w = 0, rounds;
    while (reach < p) {
        below = reach;
        reach *= r;
        w++;
    }
    rounds = w;
    if (k > 0) {
        int last_steps = (int)((p + below - 1) / below) - 1;
        rounds = (w - 1) * ((r - 2) / k + 1) + (last_steps + k - 1) / k;
    }
    return rounds * (machine->beta + (1.0 - s) * b * tau) + b * s * (p - 1) * tau +
           xchg_cost_copy(machine, b);
}

/* Whether a radix whose times are at least `bound` can still be kept (see keep). */
static int may_keep(double bound, int r, double best, int best_r)
{
    return bound < best || (bound == best && r < best_r);
}

/* The search over the candidates. A radix whose quick bound cannot beat the best time is not
 * built. With k given, one time per radix. Otherwise first k = 1 and k = r - 1 for every
 * radix (the best k when a subphase's messages are of one size), then the other k candidates
 * of the radices whose lower bound can still beat the best time. */
static double search(int p, int given_k, const int *radices, int nradices, size_t block_bytes,
                     const xchg_machine_t *machine, int *best_r, int *best_k)
{
    double best = INFINITY, bound[RADIX_MAX_CAND];
    radix_shape_t shape;

    *best_r = radices[0];
    *best_k = 1;
    for (int i = 0; i < nradices; i++) {
        int r = radices[i], k = given_k < r - 1 ? given_k : r - 1;
        double copies;
        bound[i] = quick_bound(p, r, given_k > 0 ? k : 0, block_bytes, machine);
        if (!may_keep(bound[i], r, best, *best_r))
            continue;
        shape_init(&shape, p, r);
        copies = copies_time(&shape, block_bytes, machine);
        if (given_k > 0) {
            keep(rounds_time(&shape, k, block_bytes, machine) + copies, r, k, &best, best_r,
                 best_k);
            continue;
        }
        keep(rounds_one_port(&shape, block_bytes, machine) + copies, r, 1, &best, best_r, best_k);
        keep(rounds_all_ports(&shape, block_bytes, machine) + copies, r, r - 1, &best, best_r,
             best_k);
        bound[i] = rounds_bound(&shape, block_bytes, machine) + copies;
    }
    for (int i = 0; i < nradices && given_k <= 0; i++) {
        int ports[PORTS_MAX_CAND], nports;
        double copies;
        if (!may_keep(bound[i], radices[i], best, *best_r))
            continue;
        shape_init(&shape, p, radices[i]);
        copies = copies_time(&shape, block_bytes, machine);
        nports = port_candidates(&shape, nradices == 1 ? PORTS_GIVEN_R : PORTS_SEARCH, ports);
        for (int j = 0; j < nports; j++)
            keep(rounds_time(&shape, ports[j], block_bytes, machine) + copies, radices[i], ports[j],
                 &best, best_r, best_k);
    }
    return best;
}

double xchg_cost_alltoall_radix(const xchg_call_t *call, const xchg_machine_t *given,
                                xchg_params_t *params)
{
    int p = call->comm_size, best_r = 2, best_k = 1, radices[RADIX_MAX_CAND], nradices = 1;
    size_t b = call->block_bytes;
    xchg_machine_t m = xchg_machine_for(call, given);
    const xchg_machine_t *machine = &m;
    double best;

    if (p <= 1) {
        /* nothing is sent: r = 2, k = 1 whatever was asked */
        params->radix = 2;
        params->nports = 1;
        return xchg_cost_copy(machine, (double)b);
    }
    /* the radices: the one given (above p it acts as p), else the candidates */
    if (params->radix > 0 || p == 2)
        radices[0] = params->radix > 0 && params->radix < p ? params->radix : p;
    else
        nradices = radix_candidates(p, params->nports, radices);
    best = search(p, params->nports, radices, nradices, b, machine, &best_r, &best_k);
    params->radix = best_r;
    params->nports = best_k;
    return best;
}

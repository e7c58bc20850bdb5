/*
 * cost_hier.c: cost model of the hierarchical factor algorithm for MPI_Alltoall and MPI_Alltoallv
 * (algos/alltoall_hier.c, algos/alltoallv_hier.c; Sanders, Traff, "The hierarchical factor
 * algorithm for all-to-all communication", 2002; the schedule is algos/sched/factor.c). For
 * MPI_Alltoallv every message is priced as the call's largest (b = max_block_bytes), as pairwise's
 * alltoallv model does.
 *
 * Predicted time = sum over rounds of the slower of the round's two parts, + rho b for the
 * block to self:
 *   - between nodes, ceil(E / k) batches of k' = min(k, E) exchange steps of a node (E = the
 *     round's longest pair of nodes), at the inter-node constants (beta_inter, tau_inter):
 *     beta + max(b tau (1 + port_share (r - 1)), k' (b tau / inject + gap_inter)), where
 *     r = ceil(k' / d) is what one rank has in flight (the steps of a pair are spread over its
 *     d senders and the receivers) and k' what the node's interface carries: hier puts k'
 *     messages, not max_node_ranks k, through it (compare xchg_machine_for for the flat
 *     algorithms);
 *   - inside a node (a node paired with itself, first phase only), ceil(L / k) batches of
 *     min(k, L) sends per rank at the intra-node constants (xchg_cost_round), L = size - 1.
 * Every batch of a round is priced as full, as pairwise prices its last round, so on one node
 * (or without topology) this is pairwise's time exactly.
 *
 * The layout. Selection sees only the topology summary (xchg_call_t.topo: nodes, fewest and
 * most ranks per node), not every node's size, so the model assumes two sizes: n_max nodes of
 * the most ranks and the others of the fewest, n_max = (p - N min) / (max - min) rounded
 * (exact when the layout has at most two sizes, an estimate otherwise). The rounds are counted
 * per phase in closed form: with A active nodes, d = current - done and S the most ranks,
 * A - 1 rounds pair the largest node with another (E = d S) and one pairs it with itself
 * (E = d times the next node's size for A >= 3, else 0); in the first phase every round is
 * taken to hold a node of S ranks that works inside itself (an upper bound). Section 4's mode,
 * as the algorithm runs.
 *
 * Where it stands. With one level of constants (beta_inter = tau_inter = 0, inject = 0) the
 * model does not prefer hier to pairwise and radix: the node's one pair at a time only adds
 * start-ups (with the built-in constants, none of 5940 layouts of 2 to 16 nodes of 1 to 8
 * ranks and blocks of 1 B to 1 MiB).
 * With two levels it can: the flat algorithms are priced at the inter-node constants in every
 * round, with the busiest node's whole load through its interface (xchg_machine_for, an upper
 * bound), hier with the steps that really leave a node and its intra-node work at the
 * intra-node constants; so on uneven nodes with a slow network or an injection limit the
 * model picks it. Whether that holds is for measurements on a cluster (xchg-tune's table).
 *
 * k left 0: the fastest of 1 .. 8, the powers of two, inject, every phase's longest pair and
 * the longest round (all of a round in flight), ties to the smaller k. A given k is kept as it
 * is (above the longest round it acts as that round's steps; the algorithm takes any k >= 1).
 *
 * Against the simulator (build/xchg-sim, docs/sim.md): exact on layouts of one or two node
 * sizes for k >= the ranks of a node; for smaller k it is up to (ranks per node) / k times
 * too slow (8x at k = 1 on nodes of 8), because it runs a round's ceil(E / k) batches one after
 * another while a rank waits only for the batches that hold its own steps, so a node's senders
 * overlap theirs (an upper bound: the larger k it prefers is also the faster one there).
 */
#include <math.h>

#include "cost.h"
#include "../algos/sched/factor.h"

/* A two-size stand-in for the layout the topology summary describes (see the header). */
typedef struct hier_layout {
    int phase_size[2], phase_first[2];
    xchg_factor_shape_t shape;
} hier_layout_t;

static void layout_from_call(const xchg_call_t *call, hier_layout_t *lay)
{
    const xchg_topo_t *topo = call->topo;
    int p = call->comm_size, nnodes = 1, fewest = p, most = p;

    if (topo && topo->nnodes > 1 && topo->min_node_ranks >= 1 &&
        topo->max_node_ranks >= topo->min_node_ranks) {
        nnodes = topo->nnodes;
        fewest = topo->min_node_ranks;
        most = topo->max_node_ranks;
    }
    lay->shape.nnodes = nnodes;
    lay->shape.phase_size = lay->phase_size;
    lay->shape.phase_first = lay->phase_first;
    lay->phase_size[0] = fewest;
    lay->phase_first[0] = 0;
    lay->shape.nphases = 1;
    if (most > fewest) {
        double share = (double)(p - (long)nnodes * fewest) / (most - fewest);
        int nmost = (int)lround(share);
        nmost = nmost < 1 ? 1 : nmost > nnodes - 1 ? nnodes - 1 : nmost;
        lay->phase_size[1] = most;
        lay->phase_first[1] = nnodes - nmost;
        lay->shape.nphases = 2;
    }
}

/* One batch of `steps` inter-node exchange steps of a node whose pairs have d senders. */
static double inter_batch(const xchg_machine_t *machine, long steps, long d, size_t block_bytes)
{
    long per_rank = (steps + d - 1) / d;
    double beta = machine->beta_inter > 0 ? machine->beta_inter : machine->beta;
    double tau = machine->tau_inter > 0 ? machine->tau_inter : machine->tau;
    double ports = 1.0 + machine->port_share * (double)(per_rank - 1);
    double bytes = (double)block_bytes * tau;
    double node = (machine->inject > 0 ? (double)steps / machine->inject : 0.0) * bytes +
                  (double)steps * machine->gap_inter;
    return beta + (node > ports * bytes ? node : ports * bytes);
}

/* ceil(steps / k) batches of min(k, steps) steps, between nodes (d senders) or inside one. */
static double round_part(long steps, int k, long d, int inter, size_t block_bytes,
                         const xchg_machine_t *intra)
{
    long batch = steps < k ? steps : k;
    if (steps <= 0)
        return 0.0;
    return (double)((steps + k - 1) / k) * (inter
                                                ? inter_batch(intra, batch, d, block_bytes)
                                                : xchg_cost_round(intra, (int)batch, block_bytes));
}

/* The rounds of a phase: nregular rounds with `regular` inter-node steps and one with
 * `special`; `local` intra-node steps in every round of the first phase. */
static void phase_rounds(const xchg_factor_shape_t *s, int ph, long *d, long *regular,
                         int *nregular, long *special, long *local)
{
    int done, current, first = s->phase_first[ph], nactive = s->nnodes - first;
    int most = s->phase_size[s->nphases - 1];

    xchg_factor_phase_range(s, ph, &done, &current);
    *d = current - done;
    *nregular = nactive - 1;
    *regular = *d * most;
    *special = nactive >= 3 ? *d * xchg_factor_size_at(s, s->nnodes - 2) : 0;
    *local = ph == 0 ? most - 1 : 0;
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}

static double hier_time(const xchg_factor_shape_t *s, int k, size_t b, const xchg_machine_t *intra)
{
    double t = 0.0;
    /* one node: one phase of one round, the node with itself, whose p - 1 sends are the whole
     * time (phase_rounds' local; no regular round, no special one); the same value as the loop
     * below, without its rounds (a new shape's ranking prices hier for every candidate k) */
    if (s->nnodes == 1)
        return round_part(s->phase_size[0] - 1, k, 1, 0, b, intra);
    for (int ph = 0; ph < s->nphases; ph++) {
        long d, regular, special, local;
        int nregular;
        double inside;
        phase_rounds(s, ph, &d, &regular, &nregular, &special, &local);
        inside = round_part(local, k, 1, 0, b, intra);
        t += nregular * max2(round_part(regular, k, d, 1, b, intra), inside) +
             max2(round_part(special, k, d, 1, b, intra), inside);
    }
    return t;
}

/* Keep k when it is faster, or as fast and smaller. */
static void try_ports(const xchg_factor_shape_t *s, long k, size_t block_bytes,
                      const xchg_machine_t *machine, double *best, int *best_k)
{
    double t;
    if (k < 1 || k > XCHG_FACTOR_MAX_NODE_RANKS * (long)XCHG_FACTOR_MAX_NODE_RANKS)
        return;
    t = hier_time(s, (int)k, block_bytes, machine);
    if (t < *best || (t == *best && k < *best_k)) {
        *best = t;
        *best_k = (int)k;
    }
}

/* The model for messages of b bytes. */
static double hier_cost(const xchg_call_t *call, const xchg_machine_t *machine,
                        xchg_params_t *params, size_t b)
{
    hier_layout_t lay;
    xchg_machine_t intra = *machine;
    double best = INFINITY, copy = xchg_cost_copy(machine, (double)b);
    long longest = 1;
    int best_k = 1;

    intra.node_share = 0.0; /* inside a node no interface is shared */
    intra.node_gap = 0.0;
    layout_from_call(call, &lay);
    if (params->nports > 0)
        return hier_time(&lay.shape, params->nports, b, &intra) + copy;
    /* the candidates for k */
    for (int ph = 0; ph < lay.shape.nphases; ph++) {
        long d, regular, special, local;
        int nregular;
        phase_rounds(&lay.shape, ph, &d, &regular, &nregular, &special, &local);
        longest = regular > longest ? regular : longest;
        longest = special > longest ? special : longest;
        longest = local > longest ? local : longest;
        try_ports(&lay.shape, regular, b, &intra, &best, &best_k);
        try_ports(&lay.shape, special, b, &intra, &best, &best_k);
    }
    for (long k = 1; k <= 8 && k <= longest; k++)
        try_ports(&lay.shape, k, b, &intra, &best, &best_k);
    for (long k = 16; k < longest; k *= 2)
        try_ports(&lay.shape, k, b, &intra, &best, &best_k);
    if (machine->inject > 0 && machine->inject < longest)
        try_ports(&lay.shape, machine->inject, b, &intra, &best, &best_k);
    try_ports(&lay.shape, longest, b, &intra, &best, &best_k);
    params->nports = best_k;
    return best + copy;
}

double xchg_cost_alltoall_hier(const xchg_call_t *call, const xchg_machine_t *machine,
                               xchg_params_t *params)
{
    return hier_cost(call, machine, params, call->block_bytes);
}

/* Every step priced at the largest message of the call: an upper bound, exact for even
 * counts (as pairwise's alltoallv model). */
double xchg_cost_alltoallv_hier(const xchg_call_t *call, const xchg_machine_t *machine,
                                xchg_params_t *params)
{
    return hier_cost(call, machine, params, call->max_block_bytes);
}

/*
 * cost_base.c: the built-in machine constants, the constants that apply to a call, the cost of
 * one round, and the cost models of the baselines (pairwise, ring; native is in cost_native.c).
 * See cost.h for the model.
 *
 * Two levels (xchg_machine_for). The flat algorithms (pairwise, ring, radix, circulant, and
 * twophase's transposes) send in every round from rank i to rank i + s (mod p) for some shifts
 * s; on a communicator whose nodes hold consecutive ranks every such round has a rank whose
 * message leaves its node (the last rank of the first node, the first rank or the last rank:
 * one of them sends across for every s in 1 .. p - 1), and a round lasts as long as its slowest
 * message, so once the communicator spans nodes every round is priced at the inter-node constants.
 * On an interleaved layout a round may stay inside the nodes (a shift that is a multiple of the
 * layout's period); it is priced the same, an upper bound. With an injection limit a round of k
 * messages per rank is taken to send max_node_ranks k messages out of the busiest node, at most
 * inject of them at full speed at once: the round's bytes take at least max_node_ranks k / inject
 * times one message's time (node_share k), and the round costs the larger of that and the rank's
 * own ports' time (xchg_cost_round). The load is an upper bound: in most rounds some of a node's
 * messages stay inside it. Pairwise, which runs every shift once, is priced closer: over the
 * whole call a node of n ranks sends exactly n (p - n) messages out (every rank one to each rank
 * outside), most for the largest node (n (p - n) grows up to n = p / 2, and a node above half
 * holds more than any other can), so its link needs max_node_ranks (p - max_node_ranks) / inject
 * message times in all, against the rounds' own ports; pairwise_time takes the larger of the
 * two sums. That is exact when the node's link or the ports bound every round, and below the
 * round-by-round maximum otherwise (a lower bound then).
 *
 * The gap at a node (gap_inter, LogGP's g): a node spends gap_inter on every message that leaves
 * it, one message after another, whatever its size. A round of k messages per rank keeps the
 * busiest node busy max_node_ranks k gap_inter (node_gap k), added to its link's bytes; pairwise
 * over the whole call n (p - n) gap_inter; the ring on consecutive nodes one gap a step. Without
 * it the models let a rank's messages in flight share one start-up, and on the emulated 3,2,2,1
 * cluster at 100 Mbit/s (8 ranks on 2 cores) they priced pairwise:k=7 at 1 B below radix:r=2
 * where it ran 1.5 times slower (370 against 245 us); the calibration there measured gap_inter
 * = 17 to 22 us (shim/calibrate.c), and with it the models rank node, radix and pairwise:k=7 as
 * they ran.
 *
 * Against the simulator (build/xchg-sim, docs/sim.md): exact for every flat algorithm on one
 * level with even blocks. Before pairwise took the node's total, the bound above showed on
 * nodes: pairwise k = 1 on nodes of 3, 5 and 8 ranks (inject 1, 1 KiB blocks) ran 1.2 times
 * faster than priced. Alltoallv pairwise carrying statistics sends 24 bytes more per message,
 * which no model here prices: with k = p - 1 and 8-byte blocks it runs 1.4 (p = 257) to 2
 * (p = 1024) times slower than priced.
 * A torus is priced as a flat network, without links shared by multi-hop messages: pairwise
 * k = 1 on a ring of 257 with 1 KiB blocks runs 5 times slower than priced, on 32x32 1.6 times.
 */
#include <math.h>

#include "cost.h"

/* Defaults when no tuning table is loaded: a shared-memory node with a few microseconds of
 * message start-up and memcpy-class bandwidth (about 10 GB/s, a common rate of memcpy, so
 * 1e-10 s/byte for local copies and twice that on the wire, which crosses memory twice). */
const xchg_machine_t xchg_machine_default = {
    .beta = 3e-6,
    .tau = 2e-10,
    .rho = 1e-10,
    .port_share = 1.0,
};

xchg_machine_t xchg_machine_for(const xchg_call_t *call, const xchg_machine_t *machine)
{
    xchg_machine_t m = *machine;
    const xchg_topo_t *topo = call->topo;

    if (!topo || topo->nnodes <= 1)
        return m;
    if (m.beta_inter > 0)
        m.beta = m.beta_inter;
    if (m.tau_inter > 0)
        m.tau = m.tau_inter;
    m.tau_large = 0.0; /* measured inside a node only */
    if (m.inject > 0 && topo->max_node_ranks > 0)
        m.node_share = (double)topo->max_node_ranks / m.inject;
    if (m.gap_inter > 0 && topo->max_node_ranks > 0)
        m.node_gap = m.gap_inter * topo->max_node_ranks;
    return m;
}

/* Cutting messages between nodes (tuning/cost.h). On the emulated cluster (3,2,2,1 ranks,
 * 100 Mbit/s: tau_inter 7e-8 s/B, gap_inter 17 to 22 us) messages of 48 KiB and more, sent a few
 * at once, ran at 0.6 of the link's rate under Open MPI's TCP transport and MPICH's, and at its
 * rate when cut at 16 KiB (pieces of 32 and 64 KiB did not help; docs/results.md, stop 82). A
 * fast network, whose 16 KiB take less than a few start-ups, keeps its messages whole: there a
 * piece would cost its start-up. The models do not price the pieces: where the cut is taken,
 * their gaps hide behind the bytes. */
size_t xchg_cut_inter(const xchg_machine_t *machine)
{
    double tau = machine->tau_inter > 0 ? machine->tau_inter : machine->tau;
    double gap = machine->gap_inter > 0    ? machine->gap_inter
                 : machine->beta_inter > 0 ? machine->beta_inter
                                           : machine->beta;
    return (double)XCHG_CUT_INTER * tau >= XCHG_CUT_GAPS * gap ? XCHG_CUT_INTER : 0;
}

double xchg_cost_sync(const xchg_machine_t *machine)
{
    return machine->sync > 0 ? machine->sync : machine->beta;
}

/* How many ranks of a node copy at full speed at once; beyond it the node's memory is the limit.
 * Measured on a 16-core Xeon (device run of 2026-11-26, MPICH, 16 ranks on one node): shm's
 * alltoallv of 32 MiB a rank took 23 ms where one rank's copy rate (rho = 5.4e-11 s/B, measured
 * by the calibration) prices it at 3.9 ms: the 16 ranks copied 2.7 ranks' worth at once. */
#define NODE_COPY_STREAMS 3.0
/* The bytes a rank copies within its share of the caches, where the node's memory is not the
 * limit: an assumption (a quarter of a common 1 MiB L2), not a measurement. Small calls keep
 * rho: there the synchronisations decide, as on the 2-core VM. */
#define NODE_COPY_CACHED 262144.0

double xchg_cost_node_copies(const xchg_call_t *call, const xchg_machine_t *machine, double bytes)
{
    const xchg_topo_t *topo = call->topo;
    int n = topo && topo->max_node_ranks > 0 ? topo->max_node_ranks : call->comm_size;
    double crowd = n / NODE_COPY_STREAMS, beyond = bytes - NODE_COPY_CACHED;

    if (crowd <= 1.0 || beyond <= 0)
        return bytes * machine->rho;
    return (NODE_COPY_CACHED + beyond * crowd) * machine->rho;
}

double xchg_cost_copy(const xchg_machine_t *machine, double bytes)
{
    if (machine->rho_cached > 0 && bytes <= machine->cached_bytes)
        return bytes * machine->rho_cached;
    return bytes * machine->rho;
}

double xchg_cost_wire(const xchg_machine_t *machine, double bytes)
{
    if (!(machine->tau_large > 0) || bytes <= machine->large_from)
        return bytes * machine->tau;
    return machine->large_from * machine->tau + (bytes - machine->large_from) * machine->tau_large;
}

double xchg_cost_least_tau(const xchg_machine_t *machine)
{
    return machine->tau_large > 0 && machine->tau_large < machine->tau ? machine->tau_large
                                                                        : machine->tau;
}

double xchg_cost_round(const xchg_machine_t *machine, int nmsgs, size_t max_bytes)
{
    double bytes = xchg_cost_wire(machine, (double)max_bytes), ports, node;
    if (nmsgs <= 0)
        return 0.0;
    ports = bytes * (1.0 + machine->port_share * (nmsgs - 1));
    node = (bytes * machine->node_share + machine->node_gap) * nmsgs;
    return machine->beta + (node > ports ? node : ports);
}

/* The messages the busiest node's link carries in a whole pairwise exchange: max_node_ranks
 * (p - max_node_ranks) (see the top); 0 on one node. */
static double pairwise_node_messages(const xchg_call_t *call)
{
    int p = call->comm_size, n;
    if (!call->topo || call->topo->nnodes <= 1)
        return 0.0;
    n = call->topo->max_node_ranks < p ? call->topo->max_node_ranks : p;
    return (double)n * (p - n);
}

/* Those messages in units of one message at full speed (/ inject); 0 without an injection limit
 * or on one node. */
static double pairwise_node_load(const xchg_call_t *call, const xchg_machine_t *machine)
{
    if (!(machine->node_share > 0) || !(machine->inject > 0))
        return 0.0;
    return pairwise_node_messages(call) / machine->inject;
}

/* ceil((p-1)/k) rounds of k messages of `message` bytes: R beta + m tau max(R (1 + s (k - 1)),
 * L_k) with R = ceil((p-1)/k), s = port_share and L_k the busiest node's load
 * (pairwise_node_load) with its allowance for crowding, below. A given k is clamped to what
 * runs (1 .. p - 1). Left 0, k is chosen among all of 1 .. p - 1 mostly without trying them:
 * 1 <= R <= p - 1, R k >= p - 1, and without a node load the time is R a + R k g with
 * a = beta + m tau (1 - s), g = m tau s. For s <= 1 every term is least at R = 1, R k = p - 1
 * (k = p - 1); for s > 1 the time is at least a + (p-1) g (k = p - 1) when a > 0 and
 * (p-1) (a + g) (k = 1) when a <= 0. With a node load the least time may lie between (where
 * the ports' sum meets L_k), so the smallest k of every round count R is tried (for one R the
 * time grows with k): about 2 sqrt(p) of them.
 *
 * The allowance for crowding: L_k = L (1 + PAIRWISE_CROWDING (k - 1) / (p - 2)), nothing at
 * k = 1, PAIRWISE_CROWDING at k = p - 1. Where the node's link bounds the call, more messages
 * in flight buy only overlapped start-ups in the model, which would price the crowd at the
 * link as free; on the emulated 3,2,2,1 cluster at 100 Mbit/s (docs/cluster-figures.md) all
 * of node 0's messages at once took 1.5 to 1.9 times as long as one per rank at 64 KiB in
 * three runs of four (1.02 in the fourth). The allowance is no measured constant: it makes
 * k = 1 win where the start-ups that more messages in flight overlap would save less than 2 %
 * of the link's time, and leaves k to the start-ups where they matter. Where messages between
 * nodes are cut (xchg_cut_inter: slow links) no crowd forms, and there is no allowance: cut at
 * 16 KiB, a few messages at once ran at the link's rate (stop 82), and on the same cluster with
 * one link per node priced (inject=1) MPI_Alltoall of 512 KiB blocks took 0.71 s a call under
 * pairwise:k=7 and 0.97 to 1.11 under k = 1, native 0.83 to 0.91 (Open MPI, stop 84). */
#define PAIRWISE_CROWDING 0.02

/* The busiest node's link over a whole pairwise exchange: its load in messages at full speed,
 * the seconds its messages' gaps take (gap_inter each), and the allowance for crowding at k =
 * p - 1 (PAIRWISE_CROWDING, or 0 where messages between nodes are cut). */
typedef struct node_link {
    double load, gaps, crowding;
} node_link_t;

static double pairwise_time(int p, int nports, size_t message, const xchg_machine_t *machine,
                            node_link_t link)
{
    double rounds = (p - 2) / nports + 1, bytes = xchg_cost_wire(machine, (double)message),
           ports = rounds * (1.0 + machine->port_share * (nports - 1)) * bytes, node;
    if (p <= 1)
        return 0.0;
    if (p > 2)
        link.load *= 1.0 + link.crowding * (nports - 1) / (p - 2);
    node = link.load * bytes + link.gaps;
    return rounds * machine->beta + (node > ports ? node : ports);
}

static int pairwise_scan(int p, size_t message, const xchg_machine_t *machine, node_link_t link,
                         double *best)
{
    int best_k = 1;
    *best = INFINITY;
    for (int k = 1; k <= p - 1;) {
        int rounds = (p - 2) / k + 1;
        double t = pairwise_time(p, k, message, machine, link);
        if (t < *best) {
            *best = t;
            best_k = k;
        }
        if (rounds == 1)
            break;
        k = (p - 2) / (rounds - 1) + 1; /* the smallest k of rounds - 1 rounds */
    }
    return best_k;
}

static double pairwise_rounds(const xchg_call_t *call, size_t message,
                              const xchg_machine_t *machine, xchg_params_t *params)
{
    int p = call->comm_size;
    node_link_t link = {pairwise_node_load(call, machine),
                        pairwise_node_messages(call) * machine->gap_inter,
                        xchg_cut_inter(machine) == 0 ? PAIRWISE_CROWDING : 0.0};
    double one, all;
    if (p <= 2) {
        params->nports = 1;
        return pairwise_time(p, 1, message, machine, link);
    }
    if (params->nports > 0) {
        params->nports = params->nports < p - 1 ? params->nports : p - 1;
        return pairwise_time(p, params->nports, message, machine, link);
    }
    if (link.load > 0 || link.gaps > 0) {
        params->nports = pairwise_scan(p, message, machine, link, &one);
        return one;
    }
    one = pairwise_time(p, 1, message, machine, link);
    all = pairwise_time(p, p - 1, message, machine, link);
    params->nports = all < one ? p - 1 : 1;
    return all < one ? all : one;
}

double xchg_cost_alltoall_pairwise(const xchg_call_t *call, const xchg_machine_t *machine,
                                   xchg_params_t *params)
{
    xchg_machine_t m = xchg_machine_for(call, machine);
    return pairwise_rounds(call, call->block_bytes, &m, params) +
           xchg_cost_copy(&m, (double)call->block_bytes);
}

/* On a layout whose nodes hold consecutive ranks, a ring step sends one message out of each
 * node (its last rank's, to the next node's first): one message of the node's link a step,
 * not max_node_ranks, so an injection limit of at least one costs nothing (exact). */
double xchg_cost_allgather_ring(const xchg_call_t *call, const xchg_machine_t *machine,
                                xchg_params_t *params)
{
    xchg_machine_t m = xchg_machine_for(call, machine);
    (void)params;
    if (call->topo && call->topo->consecutive) {
        if (m.node_share > 0 && m.inject > 0)
            m.node_share = 1.0 / m.inject;
        if (m.node_gap > 0)
            m.node_gap = m.gap_inter;
    }
    return (call->comm_size - 1) * xchg_cost_round(&m, 1, call->block_bytes) +
           xchg_cost_copy(&m, (double)call->block_bytes);
}

/* Upper bound from the agreed values: every round lasts as long as the largest message of
 * the call. Exact for even counts; with skewed counts it charges pairwise for the rounds that
 * wait on a few large messages, which is the imbalance two-phase routing removes. */
double xchg_cost_alltoallv_pairwise(const xchg_call_t *call, const xchg_machine_t *machine,
                                    xchg_params_t *params)
{
    xchg_machine_t m = xchg_machine_for(call, machine);
    return pairwise_rounds(call, call->max_block_bytes, &m, params) +
           xchg_cost_copy(&m, (double)call->max_block_bytes);
}

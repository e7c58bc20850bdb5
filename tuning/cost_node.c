/*
 * cost_node.c: cost model of the node algorithms (algos/alltoall_node.c, alltoallv_node.c,
 * allgather_node.c; plan algos/sched/node.h) on the two-level machine (xchg_machine_t): beta,
 * tau inside a node, beta_inter, tau_inter and the injection limit between nodes, rho for
 * copies.
 *
 * The layout. Selection sees the topology summary (nodes N, fewest and most ranks per node),
 * so the model takes two sizes, as tuning/cost_hier.c does: N_max nodes of n_max ranks and the
 * others of n_min, N_max = (p - N n_min) / (n_max - n_min) rounded (exact for layouts of at most
 * two sizes). The time is the slower of the two kinds of node.
 *
 * MPI_Alltoall, blocks of b bytes, L leaders (L_x = min(L, n_x)), passes T (the longest stream,
 * n_max max(n_max - 1, the next node's size) b, through windows of the limit's (2 N - 1)-th
 * part):
 *   inside   T synchronisations after the writes and T after the messages, sync each (as the
 *            shm model prices one, xchg_cost_sync), and (2 (p - 1) + 1) b rho of copies per rank
 * (in, out, self); between  for node x: its leaders run ceil(S / L_x) steps one after another, S =
 * T (N - 1) P steps in all (P: parts per message, min(L_x, L_y, piece / 64 KiB) for pieces of 128
 * KiB or more, else 1), beta_inter each; its link carries n_x (p - n_x) b bytes each way, min(L_x,
 * S) messages at once and at most inject at full speed (no limit without one): n_x (p - n_x) b
 * tau_inter / min(L_x, S, inject), and the node spends gap_inter on each of its S messages out,
 * one after another, however many leaders send them. The leaders' steps are sequential (a step's
 * start-up then its bytes), so the three add up; with k ports a leader's steps go k at a time,
 * ceil(ceil(S / L_x) / k) start-ups (the bytes still pass the one link, the gaps the one
 * interface), and the node's gaps and its link's bytes overlap, so the larger counts: with
 * messages in flight together one leaves the node a gap after another while the earlier ones'
 * bytes are on the link (LogGP's g and G; the flat models' rounds take the larger of the node's
 * gaps and a rank's bytes alike, xchg_cost_round). Summed, they priced MPI_Alltoall of 256 B on
 * 3,2,2,1 at 100 Mbit/s (MPI_Init's constants: gap_inter 22 us, tau_inter 7e-8 s/B) at 237 us
 * against native's 297, within XCHG_MODEL_MARGIN, where `node` took 0.53 to 0.66 of native's
 * time (`xchg-tune --verify`, scripts/bench_node.sh); the larger: 161. MPI_Alltoallv: the same
 * with the busiest node's bytes n_x min(h, (p - n_x) m) (h = max(h1, h2), m the largest message:
 * agreed or carried values), one more synchronisation (the headers) and its n_x p 8 bytes of
 * headers read by every rank. MPI_Allgather: per pass (c = the limit's p-th part of a block, T =
 * ceil(b / c)) two synchronisations and the leader's ceil(log_{k+1} N) rounds, beta_inter each, and
 * gap_inter for each of its messages; through each node's link the busier way: in, (p - n_x) b
 * (the node of fewest ranks receives the most), out, its own n_x b in each of its M messages and
 * the F chunks of other nodes they forward (the plan's counts, each chunk priced at the other
 * nodes' average), (M n_x + F (p - n_x) / (N - 1)) b. With equal nodes out equals in for every
 * k; a node larger than the others sends more with more ports (one round: its blocks to each
 * of the N - 1 others; emulated 4,1,1,1,1 at 100 Mbit/s, blocks of 256 B to 4 KiB: k = 1 took
 * 0.82 of native, one round 1.01 to 1.03, as 13 b against 16 b out of the four-rank node
 * predicts); p b rho of copies per rank. k left 0: 1, or N - 1 (one round) where that is
 * more than 5 % faster. One node: no messages, one synchronisation a pass. p =
 * 1: the local copy. Without shared memory (the predicate refuses): INFINITY.
 *
 * leaders left 0: the fastest of 1, 2, 4, ... up to n_max (and n_max), where more leaders are
 * more than 5 % faster than fewer (ranks that run messages between nodes compete for the
 * cores with the node's others: 3,2,2,1 at 100 Mbit/s, MPI_Alltoall of 1 to 64 B with all
 * steps at once, 130 to 132 us with one leader, 146 to 151 with three). A
 * given leaders is kept as given (above n_x it acts as n_x). k left 0: 1, or all of a leader's
 * steps at once (the rounds, N - 1 or N) where that is more than 5 % faster: the factor
 * schedule's one message at a time is the paper's for bandwidth, and keeps it where start-ups
 * are a small part (Emulated 3,2,2,1 at 100 Mbit/s, MPI_Alltoallv of 1 to 64 B, leaders=1:
 * 155 to 180 us one at a time, 121 to 136 all at once; native 221 to 287).
 *
 * Where it stands. It prices what the plan does, not what the MPI library does meanwhile: a
 * node's ranks wait for its leaders (they poll MPI's progress), and the copies are priced at
 * rho a byte, slowed where more of a node's ranks copy at once than its memory serves
 * (xchg_cost_node_copies). It beats the flat algorithms where
 * start-ups between nodes dominate (p - 1 rounds of pairwise against N - 1 steps of a leader),
 * and loses to them by the copies where bytes dominate.
 */
#include <math.h>

#include "cost.h"
#include "../algos/sched/node.h"

/* Two node sizes standing in for the layout (see the top). */
typedef struct node_kinds {
    int nnodes, n[2], count[2]; /* n[0] fewest ranks, n[1] most; count of nodes of each */
} node_kinds_t;

static node_kinds_t kinds_of(const xchg_call_t *call)
{
    const xchg_topo_t *topo = call->topo;
    node_kinds_t k = {1, {call->comm_size, call->comm_size}, {0, 1}};
    int p = call->comm_size;

    if (topo && topo->nnodes > 1 && topo->min_node_ranks >= 1 &&
        topo->max_node_ranks >= topo->min_node_ranks) {
        k.nnodes = topo->nnodes;
        k.n[0] = topo->min_node_ranks;
        k.n[1] = topo->max_node_ranks;
        k.count[1] = 1;
        if (k.n[1] > k.n[0]) {
            long most = lround((double)(p - (long)k.nnodes * k.n[0]) / (k.n[1] - k.n[0]));
            k.count[1] = most < 1 ? 1 : most > k.nnodes - 1 ? k.nnodes - 1 : (int)most;
        } else {
            k.count[1] = k.nnodes;
        }
        k.count[0] = k.nnodes - k.count[1];
    }
    return k;
}

static double beta_between(const xchg_machine_t *m)
{
    return m->beta_inter > 0 ? m->beta_inter : m->beta;
}

static double tau_between(const xchg_machine_t *m)
{
    return m->tau_inter > 0 ? m->tau_inter : m->tau;
}

/* The leaders' part of a call for a node of n ranks: `link` bytes each way through its link,
 * a piece of `pair` bytes per message and pass, T passes. */
static double between(const node_kinds_t *k, const xchg_machine_t *m, int leaders, int ports,
                      int n, double link, double pair, double passes)
{
    double lx = leaders < n ? leaders : n, parts = 1, steps, streams, gaps, bytes;
    double ly = leaders < k->n[1] ? leaders : k->n[1];
    if (k->nnodes <= 1)
        return 0.0;
    if (pair >= 2.0 * (double)XCHG_NODE_SPLIT_MIN)
        parts = fmin(fmin(lx, ly), floor(pair / (double)XCHG_NODE_SPLIT_MIN));
    steps = passes * (k->nnodes - 1) * parts;
    streams = fmin(lx, steps);
    if (m->inject > 0)
        streams = fmin(streams, m->inject);
    gaps = steps * m->gap_inter;
    bytes = link * tau_between(m) / fmax(streams, 1.0);
    return ceil(ceil(steps / lx) / (ports > 1 ? ports : 1)) * beta_between(m) +
           (ports > 1 ? fmax(gaps, bytes) : gaps + bytes);
}

/* MPI_Alltoall and MPI_Alltoallv at `leaders` leaders and `ports` ports. */
static double exchange_time(const xchg_call_t *call, const xchg_machine_t *m, int leaders,
                            int ports, const xchg_node_windows_t *w, double longest)
{
    node_kinds_t k = kinds_of(call);
    int p = call->comm_size, v = call->coll == XCHG_ALLTOALLV;
    double b = (double)call->block_bytes, passes = ceil(longest / (double)w->window), worst = 0;
    double syncs = passes * (k.nnodes > 1 ? 2 : 1) + v;
    double in = v ? (double)call->max_send_bytes : (double)p * b;
    double out = v ? (double)call->max_recv_bytes : (double)(p - 1) * b;

    for (int i = 0; i < 2; i++) {
        int n = k.n[i];
        double off = v ? fmin(fmax((double)call->max_send_bytes, (double)call->max_recv_bytes),
                              (double)(p - n) * (double)call->max_block_bytes)
                       : (double)(p - n) * b;
        double link = n * off, pair = link / fmax(k.nnodes - 1, 1) / fmax(passes, 1);
        double t = k.count[i] > 0 ? between(&k, m, leaders, ports, n, link, pair, passes) : 0.0;
        if (v)
            t += 8.0 * n * p * m->rho; /* the node's headers, read by each rank */
        worst = t > worst ? t : worst;
    }
    if (passes == 0)
        syncs = v;
    return syncs * xchg_cost_sync(m) + xchg_cost_node_copies(call, m, in + out) + worst;
}

/* MPI_Allgather: the leader's circulant rounds over the nodes, `ports` messages a round. */
static double gather_time(const xchg_call_t *call, const xchg_machine_t *m, size_t limit,
                          int ports)
{
    node_kinds_t k = kinds_of(call);
    int p = call->comm_size, rounds = xchg_node_gather_rounds(k.nnodes, ports);
    long forwarded;
    int messages = xchg_node_gather_messages(k.nnodes, ports, &forwarded);
    size_t piece = limit / (size_t)p, b = call->block_bytes;
    double passes, bytes = 0.0;

    /* the busier way through each kind's link: in, every other node's blocks; out, its own
     * blocks in each of its messages and the chunks they forward (the other nodes' average) */
    for (int i = 0; i < 2; i++) {
        double n = k.n[i], others = k.nnodes > 1 ? (p - n) / (k.nnodes - 1) : 0.0;
        double in = (p - n) * (double)b, out = (messages * n + (double)forwarded * others) * b;
        if (k.count[i] > 0)
            bytes = fmax(bytes, fmax(in, out));
    }
    piece = piece > 64 ? piece - piece % 64 : piece;
    passes = b == 0 ? 0 : ceil((double)b / (double)piece);
    return passes * (k.nnodes > 1 ? 2 : 1) * xchg_cost_sync(m) +
           passes * (rounds * beta_between(m) + messages * m->gap_inter) + bytes * tau_between(m) +
           xchg_cost_node_copies(call, m, (double)b + (double)(p - 1) * (double)b);
}

/* Whether `more` (leaders or ports) is worth it against `fewer`: more than 5 % faster (see the
 * top: ties go to the paper's single-ported schedule and to fewer leaders). */
static int worth(double more, double fewer)
{
    return more < 0.95 * fewer;
}

/* The ports of a call at `leaders`: `given` when given, else 1 or all of a leader's steps
 * (the rounds) where that is more than 5 % faster (see the top). */
static int ports_for(const xchg_call_t *call, const xchg_machine_t *m, int leaders,
                     const xchg_node_windows_t *w, double longest, int given)
{
    int all = xchg_node_rounds(call->topo->nnodes);
    if (given > 0)
        return given;
    return worth(exchange_time(call, m, leaders, all, w, longest),
                 exchange_time(call, m, leaders, 1, w, longest))
               ? all
               : 1;
}

double xchg_cost_node(const xchg_call_t *call, const xchg_machine_t *machine, xchg_params_t *params)
{
    const xchg_topo_t *topo = call->topo;
    int p = call->comm_size, best_l = 1, most, given = params->leaders;
    size_t limit = topo ? topo->node_shm_bytes : 0, header = 0;
    double longest, best = INFINITY;
    xchg_node_windows_t w;

    if (call->coll != XCHG_ALLGATHER && given <= 0)
        params->leaders = 1; /* what runs where the model has nothing to choose */
    if (p <= 1)
        return xchg_cost_copy(machine, (double)call->block_bytes);
    if (limit == 0)
        return INFINITY;
    if (call->coll == XCHG_ALLGATHER) {
        int all = topo->nnodes > 1 ? topo->nnodes - 1 : 1;
        if (limit / (size_t)p == 0)
            return INFINITY;
        if (params->nports <= 0 && topo->nnodes <= 1)
            params->nports = 1; /* one node: no rounds to price (gather_time alike for any k) */
        if (params->nports <= 0)
            params->nports = worth(gather_time(call, machine, limit, all),
                                   gather_time(call, machine, limit, 1))
                                 ? all
                                 : 1;
        return gather_time(call, machine, limit, params->nports);
    }
    most = topo->max_node_ranks;
    longest = xchg_node_call_longest(call, &header);
    if (xchg_node_windows(limit, topo->nnodes, header, SIZE_MAX, &w) != 0)
        return INFINITY;
    if (topo->nnodes <= 1) {
        /* one node: no leaders' messages (between), so leaders and ports change nothing, and
         * the loop below would keep its first candidate; the ranking of a new call shape on one
         * node priced eight exchange times for one (the node model was a third of the ranking's
         * instructions at 2 ranks; the ranking 28 % fewer without them) */
        params->leaders = given > 0 ? given : 1;
        params->nports = params->nports > 0 ? params->nports : 1;
        return exchange_time(call, machine, params->leaders, params->nports, &w, longest);
    }
    for (int l = given > 0 ? given : 1; l <= most || l == given;
         l = l < most && 2 * l > most ? most : 2 * l) {
        double t = exchange_time(call, machine, l, ports_for(call, machine, l, &w, longest,
                                                               params->nports), &w, longest);
        if (t < best && (best == INFINITY || worth(t, best))) {
            best = t;
            best_l = l;
        }
        if (l >= most || l == given)
            break;
    }
    params->leaders = best_l;
    params->nports = ports_for(call, machine, best_l, &w, longest, params->nports);
    return best;
}

/*
 * factor.c: the schedule of the hierarchical factor algorithm (Sanders, Traff,
 * "The hierarchical factor algorithm for all-to-all communication", 2002, Fig. 2 and
 * Section 4); see factor.h for the
 * terms, the step order and the two modes.
 *
 * Everything a round needs is closed form: the partner of a node (Lemma 1's factor), the nodes
 * paired with themselves (2a = i mod A: one for A odd, none or two for A even) and the longest
 * pair (the last node of the order unless it is paired with itself, then the one before it).
 * A rank's steps in a round come out in step order without sorting, so a round costs a rank
 * O(its own steps).
 */
#include <string.h>

#include "factor.h"
#include "types.h"

static int imax(int a, int b)
{
    return a > b ? a : b;
}

size_t xchg_factor_workspace_bytes(int nranks, int nnodes)
{
    /* order, pos, phase_size, phase_first: nnodes each; first: nnodes + 1; members, local:
     * nranks each; a counter array of max(nranks, nnodes) + 2 for the sorts */
    size_t ints = 5 * (size_t)nnodes + 1 + 2 * (size_t)nranks + (size_t)imax(nranks, nnodes) + 2;
    return ints * sizeof(int);
}

/* The node order by (size, id): a counting sort on the sizes, stable in node id. */
static void order_nodes(xchg_factor_t *f, int nnodes, int *count)
{
    int *order = f->order, n = 0;
    memset(count, 0, ((size_t)f->max_size + 2) * sizeof *count);
    for (int x = 0; x < nnodes; x++)
        count[f->first[x + 1] - f->first[x]]++;
    count[0] = 0; /* node ids without ranks are left out */
    for (int s = 0, at = 0; s <= f->max_size; s++) {
        int c = count[s];
        count[s] = at;
        at += c;
    }
    for (int x = 0; x < nnodes; x++) {
        int size = f->first[x + 1] - f->first[x];
        f->pos[x] = -1;
        if (size > 0) {
            f->pos[x] = count[size];
            order[count[size]++] = x;
            n++;
        }
    }
    f->shape.nnodes = n;
}

/* The phases: one per distinct size, in the node order. */
static void find_phases(xchg_factor_t *f, int *phase_size, int *phase_first)
{
    int nphases = 0, last = 0;
    for (int a = 0; a < f->shape.nnodes; a++) {
        int x = f->order[a], size = f->first[x + 1] - f->first[x];
        if (size != last) {
            phase_size[nphases] = size;
            phase_first[nphases++] = a;
            last = size;
        }
    }
    f->shape.nphases = nphases;
    f->shape.phase_size = phase_size;
    f->shape.phase_first = phase_first;
}

int xchg_factor_init(xchg_factor_t *f, int nranks, int nnodes, const int *node_of, int mode,
                     void *workspace)
{
    int *ws = workspace, *fill, *phase_size, *phase_first;

    if (nranks < 1 || nnodes < 1)
        return -1;
    for (int r = 0; r < nranks; r++)
        if (node_of[r] < 0 || node_of[r] >= nnodes)
            return -1;
    memset(f, 0, sizeof *f);
    f->nranks = nranks;
    f->mode = mode;
    f->node_of = node_of;
    f->order = ws;
    f->pos = f->order + nnodes;
    phase_size = f->pos + nnodes;
    phase_first = phase_size + nnodes;
    f->first = phase_first + nnodes;
    f->members = f->first + nnodes + 1;
    f->local = f->members + nranks;
    fill = f->local + nranks;

    /* members of every node in rank order, and l(u) */
    memset(f->first, 0, ((size_t)nnodes + 1) * sizeof *f->first);
    for (int r = 0; r < nranks; r++)
        f->first[node_of[r] + 1]++;
    for (int x = 0; x < nnodes; x++) {
        f->max_size = imax(f->max_size, f->first[x + 1]);
        f->first[x + 1] += f->first[x];
    }
    memcpy(fill, f->first, (size_t)nnodes * sizeof *fill);
    for (int r = 0; r < nranks; r++) {
        int x = node_of[r];
        f->local[r] = fill[x] - f->first[x];
        f->members[fill[x]++] = r;
    }
    order_nodes(f, nnodes, fill);
    find_phases(f, phase_size, phase_first);
    return 0;
}

int xchg_factor_nrounds(const xchg_factor_shape_t *s, int phase)
{
    return s->nnodes - s->phase_first[phase];
}

void xchg_factor_phase_range(const xchg_factor_shape_t *s, int phase, int *done, int *current)
{
    *done = phase > 0 ? s->phase_size[phase - 1] : 0;
    *current = s->phase_size[phase];
}

int xchg_factor_size_at(const xchg_factor_shape_t *s, int a)
{
    int lo = 0, hi = s->nphases - 1;
    /* the last phase whose first node is at or before a */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (s->phase_first[mid] <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    return s->phase_size[lo];
}

int xchg_factor_partner_at(const xchg_factor_shape_t *s, int phase, int round, int a)
{
    int first = s->phase_first[phase], nactive = s->nnodes - first, rel = a - first;
    if (rel < 0)
        return -1;
    return first + ((round - rel) % nactive + nactive) % nactive;
}

/* The positions (relative to the phase's first node) paired with themselves in a round of
 * nactive nodes: a with 2a = round mod nactive. Returns how many (0 .. 2). */
static int self_paired(int nactive, int round, int *fixed)
{
    if (nactive % 2 == 1) {
        fixed[0] = (int)((long)round * ((nactive + 1) / 2) % nactive);
        return 1;
    }
    if (round % 2 == 1)
        return 0;
    fixed[0] = round / 2;
    fixed[1] = round / 2 + nactive / 2;
    return 2;
}

/* Ranks of the largest node in an inter-node pair of the round, 0 when there is none: the last
 * node unless it is paired with itself, then the one before it (paired with the first). */
static int largest_exchanged(const xchg_factor_shape_t *s, int phase, int round)
{
    int first = s->phase_first[phase], nactive = s->nnodes - first;
    int last = nactive - 1;
    if ((2 * (long)last - round) % nactive != 0)
        return xchg_factor_size_at(s, first + last);
    return nactive >= 3 ? xchg_factor_size_at(s, first + last - 1) : 0;
}

/* The senders of a node of `size` ranks paired with itself: local indices [*lo, *hi). */
static void local_senders(int mode, int phase, int done, int current, int size, int *lo, int *hi)
{
    if (mode == XCHG_FACTOR_EARLY) {
        *lo = 0;
        *hi = phase == 0 ? size : 0;
    } else {
        *lo = done;
        *hi = current;
    }
}

void xchg_factor_round_steps(const xchg_factor_shape_t *s, int mode, int phase, int round,
                             int *exchange_steps, int *local_steps)
{
    int done, current, fixed[2], nfixed;
    int first = s->phase_first[phase], nactive = s->nnodes - first;

    xchg_factor_phase_range(s, phase, &done, &current);
    *exchange_steps = (current - done) * largest_exchanged(s, phase, round);
    *local_steps = 0;
    nfixed = self_paired(nactive, round, fixed);
    for (int j = 0; j < nfixed; j++) {
        int size = xchg_factor_size_at(s, first + fixed[j]), lo, hi;
        local_senders(mode, phase, done, current, size, &lo, &hi);
        if (hi > lo)
            *local_steps = imax(*local_steps, size - 1);
    }
}

long xchg_factor_paper_steps(const xchg_factor_shape_t *s, int copies)
{
    long steps = 0;
    for (int ph = 0; ph < s->nphases; ph++) {
        int done, current, first = s->phase_first[ph], nactive = s->nnodes - first;
        xchg_factor_phase_range(s, ph, &done, &current);
        for (int i = 0; i < nactive; i++) {
            int fixed[2], nfixed = self_paired(nactive, i, fixed);
            int most = (current - done) * largest_exchanged(s, ph, i);
            for (int j = 0; j < nfixed; j++) {
                int size = xchg_factor_size_at(s, first + fixed[j]);
                most = imax(most, (current - done) * (copies ? size : size - 1));
            }
            steps += most;
        }
    }
    return steps;
}

long xchg_factor_batches(const xchg_factor_shape_t *s, int mode, int nports)
{
    long batches = 0;
    if (nports < 1)
        nports = 1;
    for (int ph = 0; ph < s->nphases; ph++)
        for (int i = 0; i < xchg_factor_nrounds(s, ph); i++) {
            int exchange, local, steps;
            xchg_factor_round_steps(s, mode, ph, i, &exchange, &local);
            steps = imax(exchange, local);
            batches += steps / nports + (steps % nports != 0);
        }
    return batches;
}

long xchg_factor_steps(const xchg_factor_shape_t *s, int mode)
{
    return xchg_factor_batches(s, mode, 1);
}

int xchg_factor_max_slots(const xchg_factor_t *f)
{
    return imax(1, 2 * f->max_size);
}

/* A rank of a node paired with itself: in step q, sender u sends to l(u) + 1 + q, so the rank
 * receives from l - 1 - q when that rank is a sender. */
static int local_slots(const xchg_factor_t *f, int phase, int rank, xchg_factor_slot_t *out)
{
    int node = f->node_of[rank], l = f->local[rank], done, current, lo, hi, n = 0;
    int size = f->first[node + 1] - f->first[node];
    const int *ranks = f->members + f->first[node];

    xchg_factor_phase_range(&f->shape, phase, &done, &current);
    local_senders(f->mode, phase, done, current, size, &lo, &hi);
    for (int q = 0; q + 1 < size; q++) {
        int to = (l + 1 + q) % size, from = ((l - 1 - q) % size + size) % size;
        if (l >= lo && l < hi)
            out[n++] = (xchg_factor_slot_t){q, ranks[to], 1, 0};
        if (from >= lo && from < hi)
            out[n++] = (xchg_factor_slot_t){q, ranks[from], 0, 1};
    }
    return n;
}

/* A rank of the smaller node U of a pair (U < V): with d = current - done and i = l - done,
 * steps i + d q, q = 0 .. size(V) - 1, with v = (i + q) mod size(V). */
static int lower_slots(const xchg_factor_t *f, int phase, int rank, int upper,
                       xchg_factor_slot_t *out)
{
    int done, current, l = f->local[rank], n = 0;
    int size = f->first[upper + 1] - f->first[upper];
    const int *ranks = f->members + f->first[upper];

    xchg_factor_phase_range(&f->shape, phase, &done, &current);
    if (l < done || l >= current)
        return 0;
    for (int q = 0; q < size; q++)
        out[n++] = (xchg_factor_slot_t){(l - done) + (current - done) * q,
                                        ranks[(l - done + q) % size], 1, 1};
    return n;
}

/* A rank v = l of the larger node V: u = done + i meets it in step i + d ((l - i) mod size(V)).
 * For i <= l that is d l - (d - 1) i, for i > l d (size + l) - (d - 1) i, every one of the
 * latter above every one of the former (d <= size): so i from min(l, d-1) down to 0, then
 * from d - 1 down to l + 1 is the step order. */
static int upper_slots(const xchg_factor_t *f, int phase, int rank, int lower,
                       xchg_factor_slot_t *out)
{
    int done, current, d, l = f->local[rank], size, n = 0;
    const int *ranks = f->members + f->first[lower];

    xchg_factor_phase_range(&f->shape, phase, &done, &current);
    d = current - done;
    size = f->first[f->node_of[rank] + 1] - f->first[f->node_of[rank]];
    for (int i = (l < d - 1 ? l : d - 1); i >= 0; i--)
        out[n++] = (xchg_factor_slot_t){i + d * (l - i), ranks[done + i], 1, 1};
    for (int i = d - 1; i > l; i--)
        out[n++] = (xchg_factor_slot_t){i + d * (size + l - i), ranks[done + i], 1, 1};
    return n;
}

int xchg_factor_rank_slots(const xchg_factor_t *f, int phase, int round, int rank,
                           xchg_factor_slot_t *out)
{
    int a = f->pos[f->node_of[rank]], b = xchg_factor_partner_at(&f->shape, phase, round, a);

    if (b < 0)
        return 0;
    if (b == a)
        return local_slots(f, phase, rank, out);
    if (a < b)
        return lower_slots(f, phase, rank, f->order[b], out);
    return upper_slots(f, phase, rank, f->order[b], out);
}

int xchg_alltoall_hier_applies(const xchg_call_t *call, const xchg_params_t *params,
                               const char **why)
{
    const xchg_topo_t *topo = call->topo;
    (void)params;
    if (!topo)
        return 1; /* a tool's call: one node */
    if (topo->nnodes < 1 || topo->nnodes > call->comm_size || topo->min_node_ranks < 1 ||
        topo->max_node_ranks < topo->min_node_ranks ||
        (long)topo->max_node_ranks * topo->nnodes < call->comm_size) {
        *why = "the communicator's node layout summary is inconsistent";
        return 0;
    }
    if (topo->max_node_ranks > XCHG_FACTOR_MAX_NODE_RANKS) {
        *why = "more than 46340 ranks on one node (a pair's step numbers would overflow)";
        return 0;
    }
    return 1;
}

/*
 * node.c: the plans of the node algorithms (see node.h for the terms, the segment's windows,
 * the rounds between nodes and the leaders' steps).
 *
 * Everything a rank needs is closed form or one pass over the layout: the partner of a node in
 * a round (Lemma 1's factor, Sanders and Traff, Section 2, with the self-loops of N even in one
 * factor), a pair's steps, the place of an alltoall block in its stream; for alltoallv one pass
 * over the node's headers (O(n_x p) for a sender, O(n_x^2 + p) for a receiver).
 */
#include <math.h>
#include <string.h>

#include "node.h"
#include "types.h"

static int imin(int a, int b)
{
    return a < b ? a : b;
}

size_t xchg_node_workspace_bytes(int nranks, int nnodes)
{
    /* first: nnodes + 1; members, local: nranks each; order, pos: nnodes each; fill: the
     * larger of nnodes and nranks + 2 (the sort's counts: sizes up to nranks) */
    size_t fill = (size_t)(nnodes > nranks + 2 ? nnodes : nranks + 2);
    return (3 * (size_t)nnodes + 1 + 2 * (size_t)nranks + fill) * sizeof(int);
}

/* The node order by (size, id): a counting sort on the sizes, stable in id (count: max_size + 2
 * ints). */
static void order_nodes(xchg_node_layout_t *lay, int *count)
{
    memset(count, 0, ((size_t)lay->max_size + 2) * sizeof *count);
    for (int x = 0; x < lay->nnodes; x++)
        count[xchg_node_size(lay, x) + 1]++;
    for (int s = 1; s <= lay->max_size + 1; s++)
        count[s] += count[s - 1];
    for (int x = 0; x < lay->nnodes; x++) {
        lay->pos[x] = count[xchg_node_size(lay, x)]++;
        lay->order[lay->pos[x]] = x;
    }
}

int xchg_node_init(xchg_node_layout_t *lay, int nranks, int nnodes, const int *node_of,
                   void *workspace)
{
    int *ws = workspace, *fill;

    if (nranks < 1 || nnodes < 1 || nnodes > nranks)
        return -1;
    for (int r = 0; r < nranks; r++)
        if (node_of[r] < 0 || node_of[r] >= nnodes)
            return -1;
    memset(lay, 0, sizeof *lay);
    lay->nranks = nranks;
    lay->nnodes = nnodes;
    lay->node_of = node_of;
    lay->first = ws;
    lay->members = lay->first + nnodes + 1;
    lay->local = lay->members + nranks;
    lay->order = lay->local + nranks;
    lay->pos = lay->order + nnodes;
    fill = lay->pos + nnodes;

    /* members of every node in rank order, and l(r) */
    memset(lay->first, 0, ((size_t)nnodes + 1) * sizeof *lay->first);
    for (int r = 0; r < nranks; r++)
        lay->first[node_of[r] + 1]++;
    for (int x = 0; x < nnodes; x++) {
        if (lay->first[x + 1] == 0)
            return -1;
        lay->max_size = lay->first[x + 1] > lay->max_size ? lay->first[x + 1] : lay->max_size;
        lay->first[x + 1] += lay->first[x];
    }
    memcpy(fill, lay->first, (size_t)nnodes * sizeof *fill);
    for (int r = 0; r < nranks; r++) {
        int x = node_of[r];
        lay->local[r] = fill[x] - lay->first[x];
        lay->members[fill[x]++] = r;
    }
    order_nodes(lay, fill);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Rounds between nodes                                                                       */

int xchg_node_rounds(int nnodes)
{
    return nnodes <= 1 ? 0 : nnodes % 2 == 0 ? nnodes - 1 : nnodes;
}

/* The partner position of position a in round f of N positions. */
static int partner_pos(int nnodes, int round, int a)
{
    int m = nnodes % 2 == 0 ? nnodes - 1 : nnodes, b;
    if (nnodes <= 1)
        return a;
    if (a == m) /* N even: the last position takes the one left out (2 b = f mod m) */
        return (int)((long)round * ((m + 1) / 2) % m);
    b = ((round - a) % m + m) % m;
    return b == a && m != nnodes ? m : b;
}

int xchg_node_partner(const xchg_node_layout_t *lay, int x, int round)
{
    return lay->order[partner_pos(lay->nnodes, round, lay->pos[x])];
}

int xchg_node_round_of(const xchg_node_layout_t *lay, int x, int y)
{
    int n = lay->nnodes, m = n % 2 == 0 ? n - 1 : n, a = lay->pos[x], b = lay->pos[y];
    if (a == m || b == m) /* N even, one of them last: the round where the other is left out */
        return (2 * (a == m ? b : a)) % m;
    return (a + b) % m;
}

/* ------------------------------------------------------------------------------------------ */
/* Windows and steps                                                                          */

int xchg_node_windows(size_t half, int nnodes, size_t header, size_t want, xchg_node_windows_t *w)
{
    size_t count = 2 * (size_t)nnodes - 1, stride, cap;
    if (half < header || nnodes < 1)
        return -1;
    stride = ((half - header) / count) & ~(size_t)63;
    if (stride < XCHG_NODE_EXTRA + XCHG_NODE_MIN_WINDOW)
        return -1;
    /* no larger than the data wants (rounded up to 64) */
    if (want < stride - XCHG_NODE_EXTRA) {
        cap = want < XCHG_NODE_MIN_WINDOW ? XCHG_NODE_MIN_WINDOW : (want + 63) & ~(size_t)63;
        stride = cap < stride - XCHG_NODE_EXTRA ? cap + XCHG_NODE_EXTRA : stride;
    }
    w->header = header;
    w->stride = stride;
    w->window = stride - XCHG_NODE_EXTRA;
    return 0;
}

size_t xchg_node_half_for(int nnodes, size_t header, size_t want)
{
    size_t count = 2 * (size_t)nnodes - 1, stride;
    want = want < XCHG_NODE_MIN_WINDOW ? XCHG_NODE_MIN_WINDOW : want;
    if (want > SIZE_MAX / 2 / count)
        return SIZE_MAX;
    stride = ((want + 63) & ~(size_t)63) + XCHG_NODE_EXTRA;
    return header + count * stride;
}

/* Parts of a piece: min(L_x, L_y, piece / split_min), at least one for a piece with bytes. */
static int parts_of(size_t piece, int lx, int ly, size_t split_min)
{
    size_t parts = split_min > 0 ? piece / split_min : piece;
    int most = imin(lx, ly);
    if (piece == 0)
        return 0;
    return parts < 1 ? 1 : parts < (size_t)most ? (int)parts : most;
}

/* Part q of parts of a piece: its offset and bytes (the remainder spread over the first). */
static void part_range(size_t piece, int parts, int q, size_t *off, size_t *bytes)
{
    size_t each = piece / (size_t)parts, extra = piece % (size_t)parts;
    *off = each * (size_t)q + ((size_t)q < extra ? (size_t)q : extra);
    *bytes = each + ((size_t)q < extra);
}

int xchg_node_batch(const xchg_node_layout_t *lay, const xchg_node_cfg_t *cfg)
{
    int most = imin(cfg->leaders, lay->max_size);
    long steps = (long)xchg_node_rounds(lay->nnodes) * (most > 1 ? most : 1);
    if (cfg->ports <= 1 || steps <= 1)
        return 1; /* a one-node communicator has no steps */
    return cfg->ports < steps ? cfg->ports : (int)steps;
}

int xchg_node_steps(const xchg_node_layout_t *lay, const xchg_node_cfg_t *cfg, int x, int y,
                    int round, size_t pass, size_t out_len, size_t in_len, xchg_node_step_t *steps)
{
    int lx = xchg_node_leaders(lay, x, cfg->leaders), ly = xchg_node_leaders(lay, y, cfg->leaders);
    size_t out_piece = xchg_node_piece(out_len, cfg->window, pass);
    size_t in_piece = xchg_node_piece(in_len, cfg->window, pass);
    int out_parts = parts_of(out_piece, lx, ly, cfg->split_min);
    int in_parts = parts_of(in_piece, lx, ly, cfg->split_min);
    int stats = cfg->carry && pass == 0, nsteps;

    /* with the statistics, an empty first piece is one part of no bytes */
    int out_steps = out_parts > 0 ? out_parts : stats;
    int in_steps = in_parts > 0 ? in_parts : stats;
    nsteps = out_steps > in_steps ? out_steps : in_steps;
    for (int q = 0; q < nsteps; q++) {
        xchg_node_step_t *s = &steps[q];
        long turn = (long)pass + round + q;
        memset(s, 0, sizeof *s);
        s->leader = (int)(turn % lx);
        s->peer_leader = (int)(turn % ly);
        if (q < out_steps) {
            s->send = 1;
            if (out_parts > 0)
                part_range(out_piece, out_parts, q, &s->send_off, &s->send_bytes);
            s->send_stats = stats && q == out_steps - 1;
            s->send_bytes += s->send_stats ? XCHG_NODE_STATS : 0;
        }
        if (q < in_steps) {
            s->recv = 1;
            if (in_parts > 0)
                part_range(in_piece, in_parts, q, &s->recv_off, &s->recv_bytes);
            s->recv_stats = stats && q == in_steps - 1;
            s->recv_bytes += s->recv_stats ? XCHG_NODE_STATS : 0;
        }
    }
    return nsteps;
}

/* ------------------------------------------------------------------------------------------ */
/* MPI_Alltoall                                                                               */

size_t xchg_node_block_at(const xchg_node_layout_t *lay, int s, int d, size_t b)
{
    int x = lay->node_of[s], n = xchg_node_size(lay, x), ls = lay->local[s], ld = lay->local[d];
    if (lay->node_of[d] != x)
        return ((size_t)ld * (size_t)n + (size_t)ls) * b;
    /* the local stream: for each receiver, the blocks of the others */
    return ((size_t)ld * (size_t)(n - 1) + (size_t)(ls < ld ? ls : ls - 1)) * b;
}

size_t xchg_node_stream_len(const xchg_node_layout_t *lay, int x, int y, size_t b)
{
    size_t nx = (size_t)xchg_node_size(lay, x);
    return nx * (x == y ? nx - 1 : (size_t)xchg_node_size(lay, y)) * b;
}

size_t xchg_node_alltoall_longest(const xchg_node_layout_t *lay, size_t b)
{
    size_t most = 0, second = 0;
    for (int x = 0; x < lay->nnodes; x++) {
        size_t n = (size_t)xchg_node_size(lay, x);
        if (n > most) {
            second = most;
            most = n;
        } else if (n > second) {
            second = n;
        }
    }
    /* the largest node's local stream, or its message to the second largest */
    most = most * (most - 1 > second ? most - 1 : second);
    return b > 0 && most > SIZE_MAX / b ? SIZE_MAX : most * b;
}

/* ------------------------------------------------------------------------------------------ */
/* MPI_Alltoallv                                                                              */

size_t xchg_node_v_header_bytes(int nranks, int nnodes)
{
    size_t bytes = (3 + (size_t)nnodes + (size_t)nranks) * sizeof(uint64_t);
    return (bytes + 63) & ~(size_t)63;
}

void xchg_node_v_send_layout(const xchg_node_layout_t *lay, const xchg_node_headers_t *h, int x,
                             int me, size_t *send_at, size_t *stream_len)
{
    int n = xchg_node_size(lay, x);
    for (int y = 0; y < lay->nnodes; y++) {
        const int *dest = lay->members + lay->first[y];
        size_t len = 0;
        /* receiver-major: for each receiver d of y, the blocks of x's members for it */
        for (int k = 0; k < xchg_node_size(lay, y); k++) {
            int d = dest[k];
            for (int l = 0; l < n; l++) {
                if (y == x && l == k)
                    continue; /* the block to self: a local copy */
                if (l == me)
                    send_at[d] = len;
                len += xchg_node_hdr_row(h, l)[d];
            }
        }
        stream_len[y] = len;
    }
}

void xchg_node_v_recv_layout(const xchg_node_layout_t *lay, const xchg_node_headers_t *h, int x,
                             int me, const size_t *recvbytes, size_t *recv_at, size_t *in_len)
{
    int n = xchg_node_size(lay, x);
    const int *mine = lay->members + lay->first[x];

    /* the messages from other nodes: the receivers before me, then my senders in order */
    for (int y = 0; y < lay->nnodes; y++) {
        const int *src = lay->members + lay->first[y];
        size_t at = 0, len = 0;
        if (y == x)
            continue;
        for (int l = 0; l < n; l++) {
            if (l == me)
                at = len;
            len += xchg_node_hdr_totals(h, l)[y];
        }
        in_len[y] = len;
        for (int k = 0; k < xchg_node_size(lay, y); k++) {
            recv_at[src[k]] = at;
            at += recvbytes[src[k]];
        }
    }
    /* the local stream, as its senders lay it out */
    {
        size_t at = 0;
        for (int k = 0; k <= me; k++)
            for (int l = 0; l < n; l++) {
                if (l == k)
                    continue;
                if (k == me)
                    recv_at[mine[l]] = at;
                at += xchg_node_hdr_row(h, l)[mine[k]];
            }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* MPI_Allgather                                                                              */

int xchg_node_gather_rounds(int nnodes, int ports)
{
    int rounds = 0;
    long k = ports > 1 ? ports : 1;
    for (long dist = 1; dist < nnodes; dist *= k + 1)
        rounds++;
    return rounds;
}

int xchg_node_gather_messages(int nnodes, int ports, long *forwarded)
{
    long k = ports > 1 ? ports : 1, others = 0;
    int n = 0;
    for (long dist = 1; dist < nnodes; dist *= k + 1)
        for (long z = 1; z <= k && z * dist < nnodes; z++, n++)
            others += (dist < nnodes - z * dist ? dist : nnodes - z * dist) - 1;
    if (forwarded)
        *forwarded = others;
    return n;
}

int xchg_node_gather_round(int nnodes, int ports, int x, int round, xchg_node_gather_msg_t *msgs)
{
    long k = ports > 1 ? ports : 1, dist = 1;
    int n = 0;
    for (int s = 0; s < round && dist < nnodes; s++)
        dist *= k + 1;
    for (long z = 1; z <= k && z * dist < nnodes; z++, n++) {
        int d = (int)(z * dist);
        msgs[n].to = ((x - d) % nnodes + nnodes) % nnodes;
        msgs[n].from = (x + d) % nnodes;
        msgs[n].first = d;
        msgs[n].count = imin((int)dist, nnodes - d);
    }
    return n;
}

void xchg_node_gather_chunks(const xchg_node_layout_t *lay, int x, size_t *chunk_at)
{
    size_t at = 0;
    for (int d = 0; d < lay->nnodes; d++) {
        chunk_at[d] = at;
        at += (size_t)xchg_node_size(lay, (x + d) % lay->nnodes);
    }
    chunk_at[lay->nnodes] = at;
}

/* ------------------------------------------------------------------------------------------ */
/* The predicate                                                                              */

int xchg_node_applies(const xchg_call_t *call, const xchg_params_t *params, const char **why)
{
    const xchg_topo_t *topo = call->topo;
    xchg_node_windows_t w;
    size_t limit, header = 0;
    int p = call->comm_size;

    (void)params;
    if (p <= 1)
        return 1; /* the local copy */
    if (!topo || topo->node_shm_bytes == 0) {
        *why = "the ranks of a node cannot share memory (no node layout, a node that spans "
               "machines, or XCHG_SHM_BYTES=0)";
        return 0;
    }
    if (topo->nnodes < 1 || topo->nnodes > p || topo->min_node_ranks < 1 ||
        topo->max_node_ranks < topo->min_node_ranks ||
        (long)topo->max_node_ranks * topo->nnodes < p) {
        *why = "the communicator's node layout summary is inconsistent";
        return 0;
    }
    limit = topo->node_shm_bytes;
    if (call->coll == XCHG_ALLGATHER) {
        if (limit / (size_t)p == 0) {
            *why = "XCHG_SHM_BYTES is too small for a byte of every rank's block";
            return 0;
        }
        return 1;
    }
    if (call->coll == XCHG_ALLTOALLV)
        header = (size_t)topo->max_node_ranks * xchg_node_v_header_bytes(p, topo->nnodes);
    if (xchg_node_windows(limit, topo->nnodes, header, SIZE_MAX, &w) != 0) {
        *why = "XCHG_SHM_BYTES is too small for a window per node (and the alltoallv headers)";
        return 0;
    }
    return 1;
}

double xchg_node_call_longest(const struct xchg_call *call, size_t *header)
{
    const xchg_topo_t *topo = call->topo;
    int p = call->comm_size, nn = topo && topo->nnodes > 1 ? topo->nnodes : 1;
    int most = topo && topo->max_node_ranks > 0 ? topo->max_node_ranks : p;
    size_t bytes;

    *header = 0;
    if (call->coll != XCHG_ALLTOALLV)
        return (double)most * (double)most * (double)call->block_bytes;
    *header = (size_t)most * xchg_node_v_header_bytes(p, nn);
    bytes =
        call->max_send_bytes > call->max_recv_bytes ? call->max_send_bytes : call->max_recv_bytes;
    return (double)bytes * most;
}

void xchg_node_as_run(const struct xchg_call *call, struct xchg_params *params)
{
    const xchg_topo_t *topo = call->topo;
    int nn = topo && topo->nnodes > 1 ? topo->nnodes : 1, p = call->comm_size;
    int most = topo && topo->max_node_ranks > 0 ? topo->max_node_ranks : p;
    int k = params->nports > 1 ? params->nports : 1, leaders = params->leaders;
    int ports = nn > 1 ? nn - 1 : 1; /* a leader's most steps of a pass */
    size_t header;
    double longest;
    xchg_node_windows_t w, widest;

    params->nports = k < ports ? k : ports;
    if (call->coll == XCHG_ALLGATHER)
        return; /* the code runs min(k, N - 1) ports */
    if (nn <= 1) {
        params->leaders = 1; /* one node (or no layout): no messages between nodes */
        return;
    }
    leaders = leaders < 1 ? 1 : leaders < most ? leaders : most;
    /* the passes and the largest piece as the model sees the call (windows of the limit; the
     * passes at most those of its windows, the pieces at most its widest window, alltoallv's
     * without its headers, which go in a pass of their own): a leader of step q of round f
     * in pass t is (t + f + q) mod L_x, and pieces below twice split_min are one part (q = 0),
     * so leaders beyond the passes' and rounds' turns take no step */
    longest = xchg_node_call_longest(call, &header);
    if (xchg_node_windows(topo->node_shm_bytes, nn, header, SIZE_MAX, &w) == 0 &&
        xchg_node_windows(topo->node_shm_bytes, nn, 0, SIZE_MAX, &widest) == 0) {
        double passes = ceil(longest / (double)w.window);
        double turns = (passes > 0 ? passes : 1) + xchg_node_rounds(nn) - 1;
        double piece = fmin(longest, (double)widest.window);
        if (piece < 2.0 * (double)XCHG_NODE_SPLIT_MIN && turns < leaders)
            leaders = (int)turns;
    }
    params->leaders = leaders;
    /* with more than one leader a rank may send for one and receive for another: its most steps
     * of a pass are 2 (N - 1) */
    ports = leaders > 1 ? 2 * (nn - 1) : nn - 1;
    params->nports = k < ports ? k : ports;
}

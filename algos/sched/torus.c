/*
 * torus.c: the schedule of complete exchange on an all-port ring or 2D torus (Liu et al., "Optimal
 * all-to-all personalized communication in all-port tori", 2006, algorithms AR and AT2 of
 * Sections III and IV), generalised to every shape. See torus.h for
 * the algorithms, the kinds of schedule and what they cost. Pure code: no MPI.
 *
 * A block's route is computed in O(1) (path_init) from its origin and destination: the phase-1
 * hops (AT2), then one ring route per ring phase (the dimension, the logical start and the ring
 * algorithm's legs); path_leg answers "where does it go at step k" in O(1). A message is found
 * by enumerating the blocks that can be at the sending node when its phase starts (they come
 * from at most two ring positions behind it) and keeping those whose leg at that step leaves
 * the node out of the port. Sender and receiver enumerate alike, so both know the order of the
 * blocks in a message without sending it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torus.h"
#include "types.h"

/* ---- rings ---- */

static int mod(long a, long n)
{
    long m = a % n;
    return (int)(m < 0 ? m + n : m);
}

static int ring_steps(int n)
{
    if (n <= 1)
        return 0;
    if (n == 2)
        return 1;
    return n % 2 == 0 ? n / 2 : (n - 1) / 2;
}

static void ring_init(xchg_torus_ring_t *ring, int n, int may_split)
{
    ring->n = n;
    ring->steps = ring_steps(n);
    ring->split_tie = may_split && (n == 2 || (n >= 6 && n % 4 == 2));
}

/* A block's route on a ring: an optional one-hop leg at ring step 0 (AR's stage 1), then
 * `count` legs of `unit` hops at ring steps start, start + 1, ... all in direction dir. */
typedef struct ring_route {
    int dir, first, count, unit, start;
} ring_route_t;

/* The route from a to b; flip (0 or 1) chooses the half of a split tie bundle. */
static void ring_route(const xchg_torus_ring_t *ring, int a, int b, int flip, ring_route_t *rt)
{
    int n = ring->n, d = mod(b - a, n), dist, at;

    memset(rt, 0, sizeof *rt);
    rt->dir = 1;
    rt->unit = 1;
    if (d == 0)
        return;
    if (n == 2) { /* one step, either way */
        rt->dir = ring->split_tie && flip ? -1 : 1;
        rt->count = 1;
        return;
    }
    if (n % 2 == 1) { /* neighbour relay, the shorter way */
        rt->dir = 2 * d < n ? 1 : -1;
        rt->count = rt->dir > 0 ? d : n - d;
        return;
    }
    /* AR: the shorter way; at the tie the way with room (see torus.h) */
    if (2 * d < n)
        rt->dir = 1;
    else if (2 * d > n)
        rt->dir = -1;
    else if (n % 4 == 0)
        rt->dir = a % 2 == 0 ? 1 : -1;
    else
        rt->dir = (a % 2 == 0) == !(ring->split_tie && flip) ? -1 : 1;
    dist = rt->dir > 0 ? d : n - d;
    at = a;
    if (dist % 2 == 1) { /* stage 1: one hop onto the sub-ring of b's parity */
        rt->first = 1;
        at = mod(a + rt->dir, n);
        dist--;
    }
    /* stage 2 carries the even sub-ring's + legs and the odd sub-ring's - legs */
    rt->unit = 2;
    rt->count = dist / 2;
    rt->start = (at % 2 == 0) == (rt->dir > 0) ? 1 : 1 + n / 4;
}

/* Logical hops of the route's leg at ring step s (0: none); *pos is where it leaves from. */
static int ring_leg(const ring_route_t *rt, int n, int a, int s, int *pos)
{
    if (rt->first && s == 0) {
        *pos = a;
        return 1;
    }
    if (s < rt->start || s >= rt->start + rt->count)
        return 0;
    *pos = mod(a + (long)rt->dir * (rt->first + rt->unit * (s - rt->start)), n);
    return rt->unit;
}

/* Logical hops of every leg at ring step s (the same for all legs of that step). */
static int ring_step_hops(const xchg_torus_ring_t *ring, int s)
{
    return ring->n % 2 == 0 && ring->n > 2 && s > 0 ? 2 : 1;
}

/* Messages one node sends at ring step s (at most). */
static int ring_step_msgs(const xchg_torus_ring_t *ring, int s)
{
    if (ring->n == 2)
        return ring->split_tie ? 2 : 1;
    return ring->n % 2 == 1 || s == 0 ? 2 : 1;
}

/* Where the bundles that leave position a in direction dir at ring step s started: at most two
 * positions (AR: the start of the sub-ring leg, or one hop before it for a stage-1 block). */
static int ring_sources(const xchg_torus_ring_t *ring, int s, int a, int dir, int src[2])
{
    int n = ring->n, stage2, j, start;
    if (n <= 2 || n % 2 == 1 || s == 0) {
        src[0] = mod(a - (long)dir * s, n);
        return 1;
    }
    stage2 = s <= n / 4;
    j = stage2 ? s - 1 : s - 1 - n / 4;
    if (((a % 2 == 0) == (dir > 0)) != stage2)
        return 0;
    start = mod(a - 2L * j * dir, n);
    src[0] = start;
    src[1] = mod(start - dir, n);
    return 2;
}

/* Blocks in the largest message of ring step s when every bundle holds one block (closed forms
 * of R(n), checked against the simulator in tests/unit/test_sched_torus.c). */
static long ring_unit_profile(int n, int s)
{
    int quarter = n / 4, quarter_up = (n + 3) / 4;
    if (n == 2)
        return 1;
    if (n % 2 == 1)
        return (n - 1) / 2 - s;
    if (s == 0)
        return quarter_up;
    if (s <= quarter)
        return quarter - (s - 1) + quarter_up - 1 - (s - 1);
    s -= quarter + 1;
    return quarter_up - 1 - s + quarter - 1 - s;
}

/* ---- coordinates ---- */

static int dim_size(const xchg_torus_t *t, int dim)
{
    return dim == 0 ? t->rows : t->cols;
}

static void coords(const xchg_torus_t *t, int node, int at[2])
{
    at[0] = node / t->cols;
    at[1] = node % t->cols;
}

static int node_at(const xchg_torus_t *t, const int at[2])
{
    return at[0] * t->cols + at[1];
}

static int port_of(int dim, int dir)
{
    return dir > 0 ? dim : dim + 2;
}

int xchg_torus_neighbour(const xchg_torus_t *t, int node, int port, int hops)
{
    int at[2], dim = port % 2;
    coords(t, node, at);
    at[dim] = mod(at[dim] + (long)(port < 2 ? hops : -hops), dim_size(t, dim));
    return node_at(t, at);
}

int xchg_torus_distance(const xchg_torus_t *t, int a, int b)
{
    int pa[2], pb[2], hops = 0;
    coords(t, a, pa);
    coords(t, b, pb);
    for (int dim = 0; dim < 2; dim++) {
        int n = dim_size(t, dim), d = mod(pb[dim] - pa[dim], n);
        hops += d < n - d ? d : n - d;
    }
    return hops;
}

/* ---- a block's path ---- */

typedef struct path_phase {
    int dim, base, stride, parity, half;
    int a, start_node;
    ring_route_t rt;
} path_phase_t;

typedef struct torus_path {
    int origin;
    int nfirst; /* AT2 phase 1: single hops at steps 0 .. nfirst - 1 */
    int first_dim[2], first_dir[2];
    int nphases;
    path_phase_t phase[2];
} torus_path_t;

/* AT2 phase 1: the direction of a hop over an odd offset delta in a dimension of n nodes; at the
 * tie, by the parity of the offset in the other dimension. */
static int first_dir(int delta, int n, int other_odd)
{
    if (2 * delta < n)
        return 1;
    if (2 * delta > n)
        return -1;
    return other_odd ? -1 : 1;
}

static void phase1(const xchg_torus_t *t, const int from[2], const int to[2], torus_path_t *path,
                   int at[2])
{
    int delta[2], move[2], dir[2], order[2] = {0, 1}, nmoves;
    for (int dim = 0; dim < 2; dim++) {
        delta[dim] = mod(to[dim] - from[dim], dim_size(t, dim));
        move[dim] = delta[dim] % 2;
    }
    for (int dim = 0; dim < 2; dim++)
        dir[dim] = move[dim] ? first_dir(delta[dim], dim_size(t, dim), delta[1 - dim] % 2) : 0;
    nmoves = move[0] + move[1];
    if (nmoves == 2 && dir[0] != dir[1]) { /* y first in the quadrants (-x,+y) and (+x,-y) */
        order[0] = 1;
        order[1] = 0;
    } else if (nmoves == 1) {
        order[0] = move[0] ? 0 : 1;
    }
    path->nfirst = nmoves;
    for (int i = 0; i < nmoves; i++) {
        int dim = order[i];
        path->first_dim[i] = dim;
        path->first_dir[i] = dir[dim];
        at[dim] = mod(at[dim] + dir[dim], dim_size(t, dim));
    }
}

/* One ring phase of the path: along dim from at[] to to[dim]; at[] moves to the end. */
static void ring_phase(const xchg_torus_t *t, torus_path_t *path, int dim, int base, int flip,
                       int at[2], const int to[2])
{
    path_phase_t *ph = &path->phase[path->nphases++];
    const xchg_torus_ring_t *ring = &t->ring[dim];
    ph->dim = dim;
    ph->base = base;
    ph->stride = t->kind == XCHG_TORUS_AT2 ? 2 : 1;
    ph->parity = at[dim] % ph->stride;
    ph->half = flip;
    ph->a = at[dim] / ph->stride;
    ph->start_node = node_at(t, at);
    ring_route(ring, ph->a, to[dim] / ph->stride, flip, &ph->rt);
    at[dim] = to[dim];
}

static void path_init(const xchg_torus_t *t, int origin, int dest, int part, torus_path_t *path)
{
    int from[2], to[2], at[2];
    coords(t, origin, from);
    coords(t, dest, to);
    at[0] = from[0];
    at[1] = from[1];
    path->origin = origin;
    path->nfirst = 0;
    path->nphases = 0;
    if (t->kind == XCHG_TORUS_RING) {
        ring_phase(t, path, 1, 0, 0, at, to);
    } else if (t->kind == XCHG_TORUS_SPLIT) {
        /* part 0 along the row first; the flip bit is the parity of the destination's (origin's)
         * coordinate in the other dimension */
        int first = part == 0 ? 1 : 0;
        ring_phase(t, path, first, 0, to[1 - first] % 2, at, to);
        ring_phase(t, path, 1 - first, t->phase_steps, from[first] % 2, at, to);
    } else {
        /* phase 1 to a node of the destination's group; G00 and G11 then go along the row */
        int dim2 = (to[0] + to[1]) % 2 == 0 ? 1 : 0;
        phase1(t, from, to, path, at);
        ring_phase(t, path, dim2, 2, (from[1 - dim2] - at[1 - dim2]) % 2 != 0, at, to);
        ring_phase(t, path, 1 - dim2, 2 + t->phase_steps, (from[dim2] - to[dim2]) % 2 != 0, at, to);
    }
}

/* The path's leg at step k: 1 and node, port, hops; 0 when the block does not move then. */
static int path_leg(const xchg_torus_t *t, const torus_path_t *path, int k, int *node, int *port,
                    int *hops)
{
    if (k < path->nfirst) {
        int at[2];
        coords(t, path->origin, at);
        for (int i = 0; i < k; i++)
            at[path->first_dim[i]] =
                mod(at[path->first_dim[i]] + path->first_dir[i], dim_size(t, path->first_dim[i]));
        *node = node_at(t, at);
        *port = port_of(path->first_dim[k], path->first_dir[k]);
        *hops = 1;
        return 1;
    }
    for (int i = 0; i < path->nphases; i++) {
        const path_phase_t *ph = &path->phase[i];
        int local = k - ph->base, s, half, pos, logical, at[2];
        if (local < 0 || local >= t->phase_steps)
            continue;
        s = t->run_step[ph->dim][local];
        half = t->run_half[ph->dim][local];
        if (s < 0 || (half >= 0 && half != ph->half))
            return 0;
        logical = ring_leg(&ph->rt, t->ring[ph->dim].n, ph->a, s, &pos);
        if (logical == 0)
            return 0;
        coords(t, ph->start_node, at);
        at[ph->dim] = pos * ph->stride + ph->parity;
        *node = node_at(t, at);
        *port = port_of(ph->dim, ph->rt.dir);
        *hops = logical * ph->stride;
        return 1;
    }
    return 0;
}

int xchg_torus_route(const xchg_torus_t *t, int origin, int dest, int part, xchg_torus_leg_t *legs,
                     int max)
{
    torus_path_t path;
    int n = 0;
    path_init(t, origin, dest, part, &path);
    for (int k = 0; k < t->nsteps; k++) {
        xchg_torus_leg_t leg = {k, 0, 0, 0};
        if (!path_leg(t, &path, k, &leg.node, &leg.port, &leg.hops))
            continue;
        if (n < max)
            legs[n] = leg;
        n++;
    }
    return n;
}

/* ---- messages ---- */

typedef struct message {
    const xchg_torus_t *t;
    int step, node, port, phase;
    xchg_torus_block_t *blocks; /* NULL: count only */
    int max, count, hops;
} message_t;

/* Keep the block when its leg at the message's step is this message (and, for a ring phase, its
 * phase started at start_node: a block is considered once). */
static void consider(message_t *m, int origin, int dest, int part, int start_node)
{
    torus_path_t path;
    int node, port, hops;
    if (origin == dest)
        return;
    path_init(m->t, origin, dest, part, &path);
    if (m->phase >= 0 && path.phase[m->phase].start_node != start_node)
        return;
    if (!path_leg(m->t, &path, m->step, &node, &port, &hops) || node != m->node || port != m->port)
        return;
    if (m->blocks && m->count < m->max)
        m->blocks[m->count] = (xchg_torus_block_t){origin, dest, part};
    m->count++;
    m->hops = hops;
}

/* The distinct offsets -1, 0, +1 in a dimension of n nodes (0 first). */
static int near_offsets(int n, int offsets[3])
{
    offsets[0] = 0;
    if (n == 1)
        return 1;
    offsets[1] = 1;
    if (n == 2)
        return 2;
    offsets[2] = -1;
    return 3;
}

/* AT2 phase 1: step 0 sends the node's own blocks, step 1 relays what came over the other
 * dimension in step 0. */
static void phase1_message(message_t *m)
{
    const xchg_torus_t *t = m->t;
    int other = 1 - m->port % 2, at[2], offsets[3], noff, from[2];
    coords(t, m->node, at);
    noff = m->step == 0 ? 1 : near_offsets(dim_size(t, other), offsets);
    if (m->step == 0)
        offsets[0] = 0;
    for (int i = 0; i < noff; i++) {
        if (m->step == 1 && offsets[i] == 0)
            continue;
        from[m->port % 2] = at[m->port % 2];
        from[other] = mod(at[other] + offsets[i], dim_size(t, other));
        for (int dest = 0; dest < t->nodes; dest++)
            consider(m, node_at(t, from), dest, 0, -1);
    }
}

/* The blocks at `start` when its ring phase begins that go to ring position b of dimension dim:
 * the candidates, each checked by consider(). */
static void bundle(message_t *m, int dim, int start, int b, int part)
{
    const xchg_torus_t *t = m->t;
    int other = 1 - dim, at[2], to[2], from[2], offsets[3], noff, stride;
    int n_other = dim_size(t, other);
    coords(t, start, at);
    stride = t->kind == XCHG_TORUS_AT2 ? 2 : 1;
    to[dim] = b * stride + at[dim] % stride;
    to[other] = at[other];
    if (t->kind == XCHG_TORUS_RING) {
        consider(m, start, node_at(t, to), 0, start);
    } else if (m->phase == 0) {
        /* first ring phase: AT2, from the 3 x 3 nodes around (phase 1 moved them here), for
         * every destination of the group in the other dimension; SPLIT, the node's own */
        int offsets_dim[3], ndim = near_offsets(dim_size(t, dim), offsets_dim);
        noff = near_offsets(n_other, offsets);
        for (to[other] = at[other] % stride; to[other] < n_other; to[other] += stride) {
            if (t->kind == XCHG_TORUS_SPLIT) {
                consider(m, start, node_at(t, to), part, start);
                continue;
            }
            for (int i = 0; i < ndim; i++)
                for (int j = 0; j < noff; j++) {
                    from[dim] = mod(at[dim] + offsets_dim[i], dim_size(t, dim));
                    from[other] = mod(at[other] + offsets[j], n_other);
                    consider(m, node_at(t, from), node_at(t, to), part, start);
                }
        }
    } else {
        /* second ring phase: blocks for the node's own line of the other dimension, from every
         * origin in it (AT2: from the 3 lines around, which phase 1 moved here) */
        int nfrom = t->kind == XCHG_TORUS_AT2 ? near_offsets(dim_size(t, dim), offsets) : 1;
        if (t->kind != XCHG_TORUS_AT2)
            offsets[0] = 0;
        to[other] = at[other];
        for (int i = 0; i < nfrom; i++)
            for (from[other] = 0; from[other] < n_other; from[other]++) {
                from[dim] = mod(at[dim] + offsets[i], dim_size(t, dim));
                consider(m, node_at(t, from), node_at(t, to), part, start);
            }
    }
}

/* The ring phase (0 or 1), dimension and part of node's messages at step k; -1 when none. */
static int ring_phase_of(const xchg_torus_t *t, int k, int node, int port_dim, int *dim, int *part,
                         int *base)
{
    int at[2], phase, row_first;
    if (t->kind == XCHG_TORUS_AT2) {
        if (k < 2)
            return -1;
        phase = (k - 2) / t->phase_steps;
        *base = 2 + phase * t->phase_steps;
        coords(t, node, at);
        row_first = (at[0] + at[1]) % 2 == 0; /* G00 and G11 */
        *dim = (phase == 0) == row_first ? 1 : 0;
        *part = 0;
    } else if (t->kind == XCHG_TORUS_SPLIT) {
        phase = k / t->phase_steps;
        *base = phase * t->phase_steps;
        *dim = port_dim;
        *part = (phase == 0) == (port_dim == 1) ? 0 : 1; /* part 0: row, then column */
    } else {
        phase = 0;
        *base = 0;
        *dim = 1;
        *part = 0;
    }
    return *dim == port_dim ? phase : -1;
}

int xchg_torus_message(const xchg_torus_t *t, int step, int node, int port,
                       xchg_torus_block_t *blocks, int max, int *peer, int *hops)
{
    message_t m = {t, step, node, port, -1, blocks, max, 0, 0};
    int dim, part, base, s, a, src[2], nsrc, at[2], stride;

    if (step < 0 || step >= t->nsteps || port < 0 || port >= XCHG_TORUS_NPORTS)
        return 0;
    if (t->kind == XCHG_TORUS_AT2 && step < 2) {
        phase1_message(&m);
    } else {
        m.phase = ring_phase_of(t, step, node, port % 2, &dim, &part, &base);
        if (m.phase < 0 || (s = t->run_step[dim][step - base]) < 0)
            return 0;
        stride = t->kind == XCHG_TORUS_AT2 ? 2 : 1;
        coords(t, node, at);
        a = at[dim] / stride;
        nsrc = ring_sources(&t->ring[dim], s, a, port < 2 ? 1 : -1, src);
        for (int i = 0; i < nsrc; i++) {
            /* the targets beyond the node in the port's direction, at most half the ring from
             * the bundle's start (shortest paths): nearest first for the bundles that started
             * at the node's own sub-ring position, farthest first for those that came over
             * AR's stage 1 (and in stage 1 itself), so that what a node receives holds its own
             * bundles at both ends and what it passes on in between, in the order of its next
             * message (the plan receives that part in place) */
            int n = t->ring[dim].n, dir = port < 2 ? 1 : -1, start[2] = {at[0], at[1]};
            int lo = mod((long)(a - src[i]) * dir, n) + 1, hi = n / 2;
            int far_first = i == 1 || (s == 0 && n % 2 == 0 && n > 2);
            start[dim] = src[i] * stride + at[dim] % stride;
            for (int ahead = lo; ahead <= hi; ahead++)
                bundle(&m, dim, node_at(t, start),
                       mod(src[i] + (long)dir * (far_first ? hi + lo - ahead : ahead), n), part);
        }
    }
    if (peer)
        *peer = m.count ? xchg_torus_neighbour(t, node, port, m.hops) : -1;
    if (hops)
        *hops = m.hops;
    return blocks && m.count > max ? -1 : m.count;
}

int xchg_torus_senders(const xchg_torus_t *t, int step, int node, int *from, int *port)
{
    int n = 0;
    for (int q = 0; q < XCHG_TORUS_NPORTS; q++) {
        int dim, part, base, s, hops;
        if (t->kind == XCHG_TORUS_AT2 && step < 2) {
            hops = 1;
        } else {
            if (ring_phase_of(t, step, node, q % 2, &dim, &part, &base) < 0 ||
                (s = t->run_step[dim][step - base]) < 0)
                continue;
            hops = ring_step_hops(&t->ring[dim], s) * (t->kind == XCHG_TORUS_AT2 ? 2 : 1);
        }
        /* the message that arrives travelling out of port q comes from hops behind */
        from[n] = xchg_torus_neighbour(t, node, (q + 2) % XCHG_TORUS_NPORTS, hops);
        port[n++] = q;
    }
    return n;
}

/* ---- placement of the shorter ring and the per-step sizes ---- */

/* Per ring step of dimension dim: the largest message (whole) and the largest of each half, in
 * units, from bundle weights w[2t + f] (t: logical offset of the target, f: the flip bit). */
static int weighted_profile(const xchg_torus_ring_t *ring, const long *w, long *whole, long *half0,
                            long *half1)
{
    int n = ring->n, reps = n % 2 == 1 ? 1 : 2;
    long *acc = calloc((size_t)ring->steps * 8 + 1, sizeof *acc); /* [s][parity][dir][f] */
    if (!acc)
        return -1;
    for (int a = 0; a < reps && n > 1; a++)
        for (int b = 0; b < n; b++)
            for (int f = 0; f < 2 && b != a; f++) {
                long weight = w[2 * mod(b - a, n) + f];
                ring_route_t rt;
                if (weight == 0)
                    continue;
                ring_route(ring, a, b, f, &rt);
                for (int s = 0; s < ring->steps; s++) {
                    int pos;
                    if (ring_leg(&rt, n, a, s, &pos))
                        acc[s * 8 + (reps == 2 ? pos % 2 : 0) * 4 + (rt.dir > 0) * 2 + f] += weight;
                }
            }
    for (int s = 0; s < ring->steps; s++) {
        whole[s] = half0[s] = half1[s] = 0;
        for (int key = 0; key < 4; key++) {
            long *pair = &acc[s * 8 + key * 2];
            whole[s] = pair[0] + pair[1] > whole[s] ? pair[0] + pair[1] : whole[s];
            half0[s] = pair[0] > half0[s] ? pair[0] : half0[s];
            half1[s] = pair[1] > half1[s] ? pair[1] : half1[s];
        }
    }
    free(acc);
    return 0;
}

/* AT2: bundle weights of the first ring phase in dimension dim, at a node of a group that runs
 * it ((0,0) for rows, (0,1) for columns): blocks phase 1 brought there, by target and flip. */
static void at2_weights(const xchg_torus_t *t, int dim, long *w)
{
    int other = 1 - dim, u[2] = {0, dim == 1 ? 0 : 1}, to[2], from[2];
    int off[2][3], noff[2], start = node_at(t, u), n = t->ring[dim].n;
    noff[0] = near_offsets(t->rows, off[0]);
    noff[1] = near_offsets(t->cols, off[1]);
    memset(w, 0, 2 * (size_t)n * sizeof *w);
    for (to[dim] = u[dim]; to[dim] < dim_size(t, dim); to[dim] += 2)
        for (to[other] = u[other]; to[other] < dim_size(t, other); to[other] += 2)
            for (int i = 0; i < noff[0]; i++)
                for (int j = 0; j < noff[1]; j++) {
                    torus_path_t path;
                    from[0] = mod(u[0] + off[0][i], t->rows);
                    from[1] = mod(u[1] + off[1][j], t->cols);
                    if (node_at(t, from) == node_at(t, to))
                        continue;
                    path_init(t, node_at(t, from), node_at(t, to), 0, &path);
                    if (path.phase[0].start_node != start || path.phase[0].dim != dim)
                        continue;
                    w[2 * mod(to[dim] / 2 - u[dim] / 2, n) + path.phase[0].half]++;
                }
}

/* The profiles of both dimensions' rings (whole steps and halves), in units. */
static int ring_profiles(const xchg_torus_t *t, long *prof[2][3])
{
    for (int dim = 0; dim < 2; dim++) {
        const xchg_torus_ring_t *ring = &t->ring[dim];
        /* RING: one block per bundle; SPLIT: a part for every node of the other dimension, by
         * the parity of its coordinate there (the flip bit); AT2: as phase 1 left them */
        int other = t->kind == XCHG_TORUS_SPLIT ? dim_size(t, 1 - dim) : 1, rc;
        long *w;
        if (t->kind != XCHG_TORUS_AT2 && !ring->split_tie) {
            /* every bundle alike and the flip bit does not change routes: closed forms */
            for (int s = 0; s < ring->steps; s++) {
                prof[dim][0][s] = ring_unit_profile(ring->n, s) * other;
                prof[dim][1][s] = ring_unit_profile(ring->n, s) * ((other + 1) / 2);
                prof[dim][2][s] = ring_unit_profile(ring->n, s) * (other / 2);
            }
            continue;
        }
        w = malloc(2 * (size_t)ring->n * sizeof *w);
        if (!w)
            return -1;
        if (t->kind == XCHG_TORUS_AT2) {
            at2_weights(t, dim, w);
        } else {
            for (int b = 0; b < ring->n; b++) {
                w[2 * b] = (other + 1) / 2;
                w[2 * b + 1] = other / 2;
            }
        }
        rc = weighted_profile(ring, w, prof[dim][0], prof[dim][1], prof[dim][2]);
        free(w);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static long max_long(long a, long b)
{
    return a > b ? a : b;
}

/* Place the ring steps of dimension `dim` (profile prof[0..2]) on the phase steps whose largest
 * messages are fixed[0 .. P): a dynamic programme over (ring step j, phase step k) minimising the
 * sum over steps of the largest message; spreading a step over two (half of each bundle at a
 * time) only where may_halve. Ties go to the earlier placement, a whole step before halves. */
static int place_ring(xchg_torus_t *t, int dim, long *const prof[3], const long *fixed,
                      int may_halve)
{
    int m = t->ring[dim].steps, n = t->phase_steps;
    long *cost = malloc((size_t)(m + 1) * (size_t)(n + 1) * sizeof *cost);
    char *how = malloc((size_t)(m + 1) * (size_t)(n + 1));
    const long never = LONG_MAX / 4;
#define AT(j, k) ((size_t)(j) * (size_t)(n + 1) + (size_t)(k))
    if (!cost || !how) {
        free(cost);
        free(how);
        return -1;
    }
    for (int k = n; k >= 0; k--)
        cost[AT(m, k)] = k == n ? 0 : cost[AT(m, k + 1)] + fixed[k];
    for (int j = m - 1; j >= 0; j--) {
        cost[AT(j, n)] = never;
        for (int k = n - 1; k >= 0; k--) {
            long whole = max_long(fixed[k], prof[0][j]) + cost[AT(j + 1, k + 1)];
            long halves = never, skip = fixed[k] + cost[AT(j, k + 1)];
            if (may_halve && k + 1 < n)
                halves = max_long(fixed[k], prof[1][j]) + max_long(fixed[k + 1], prof[2][j]) +
                         cost[AT(j + 1, k + 2)];
            cost[AT(j, k)] = whole;
            how[AT(j, k)] = 'w';
            if (halves < cost[AT(j, k)]) {
                cost[AT(j, k)] = halves;
                how[AT(j, k)] = 'h';
            }
            if (skip < cost[AT(j, k)]) {
                cost[AT(j, k)] = skip;
                how[AT(j, k)] = 's';
            }
        }
    }
    for (int j = 0, k = 0; j < m; k++) {
        if (how[AT(j, k)] == 's')
            continue;
        t->place[dim][2 * j] = k;
        if (how[AT(j, k)] == 'h')
            k++;
        t->place[dim][2 * j + 1] = k;
        j++;
    }
#undef AT
    free(cost);
    free(how);
    return 0;
}

/* Placement of both rings, the inverse tables and the per-step sizes. */
static int plan_phases(xchg_torus_t *t)
{
    long *prof[2][3], *fixed;
    int longer, rc = -1, base = t->kind == XCHG_TORUS_AT2 ? 2 : 0;

    for (int dim = 0; dim < 2; dim++)
        for (int i = 0; i < 3; i++)
            prof[dim][i] = calloc((size_t)t->ring[dim].steps + 1, sizeof(long));
    fixed = calloc((size_t)t->phase_steps + 1, sizeof *fixed);
    if (!fixed || !prof[0][0] || !prof[0][1] || !prof[0][2] || !prof[1][0] || !prof[1][1] ||
        !prof[1][2] || ring_profiles(t, prof) != 0)
        goto out;

    /* the longer ring runs at its own steps; the shorter one is placed around it */
    longer = t->ring[1].steps >= t->ring[0].steps ? 1 : 0;
    for (int s = 0; s < t->ring[longer].steps; s++) {
        t->place[longer][2 * s] = t->place[longer][2 * s + 1] = s;
        fixed[s] = prof[longer][0][s];
    }
    if (t->ring[1 - longer].steps == t->phase_steps) {
        for (int s = 0; s < t->phase_steps; s++)
            t->place[1 - longer][2 * s] = t->place[1 - longer][2 * s + 1] = s;
    } else if (place_ring(t, 1 - longer, prof[1 - longer], fixed,
                          t->kind != XCHG_TORUS_RING && !t->ring[1 - longer].split_tie) != 0) {
        goto out;
    }

    /* inverse tables, and the largest message of every ring-phase step */
    for (int dim = 0; dim < 2; dim++) {
        for (int k = 0; k < t->phase_steps; k++)
            t->run_step[dim][k] = t->run_half[dim][k] = -1;
        for (int s = 0; s < t->ring[dim].steps; s++)
            for (int f = 0; f < 2; f++) {
                int k = t->place[dim][2 * s + f];
                int split = t->place[dim][2 * s] != t->place[dim][2 * s + 1];
                t->run_step[dim][k] = s;
                t->run_half[dim][k] = split ? f : -1;
            }
    }
    for (int k = base; k < t->nsteps; k++) {
        int local = (k - base) % t->phase_steps, msgs[2] = {0, 0};
        t->step_units[k] = 0;
        for (int dim = 0; dim < 2; dim++) {
            int s = t->run_step[dim][local], half = t->run_half[dim][local];
            if (s < 0)
                continue;
            t->step_units[k] = max_long(t->step_units[k], prof[dim][half < 0 ? 0 : 1 + half][s]);
            msgs[dim] = ring_step_msgs(&t->ring[dim], s);
        }
        /* SPLIT runs both dimensions at once; elsewhere a node is in one ring */
        t->step_msgs[k] = t->kind == XCHG_TORUS_SPLIT ? msgs[0] + msgs[1]
                                                      : (msgs[0] > msgs[1] ? msgs[0] : msgs[1]);
    }
    rc = 0;
out:
    for (int dim = 0; dim < 2; dim++)
        for (int i = 0; i < 3; i++)
            free(prof[dim][i]);
    free(fixed);
    return rc;
}

/* AT2 phase 1: the largest message and the most messages of a node at steps 0 and 1. The
 * schedule repeats with period 2 in both dimensions there, so the blocks of the four origins of a
 * 2 x 2 block, counted by (step, the sending node's parities, port), are every message's. */
static void phase1_sizes(xchg_torus_t *t)
{
    long count[2][4][XCHG_TORUS_NPORTS] = {{{0}}};
    for (int origin = 0; origin < 4; origin++) {
        int from[2] = {origin / 2, origin % 2};
        for (int dest = 0; dest < t->nodes; dest++) {
            torus_path_t path;
            if (dest == node_at(t, from))
                continue;
            path_init(t, node_at(t, from), dest, 0, &path);
            for (int k = 0; k < path.nfirst; k++) {
                int node, port, hops, at[2];
                path_leg(t, &path, k, &node, &port, &hops);
                coords(t, node, at);
                count[k][(at[0] % 2) * 2 + at[1] % 2][port]++;
            }
        }
    }
    for (int k = 0; k < 2; k++) {
        t->step_units[k] = 0;
        t->step_msgs[k] = 0;
        for (int node = 0; node < 4; node++) {
            int msgs = 0;
            for (int q = 0; q < XCHG_TORUS_NPORTS; q++) {
                t->step_units[k] = max_long(t->step_units[k], count[k][node][q]);
                msgs += count[k][node][q] > 0;
            }
            t->step_msgs[k] = msgs > t->step_msgs[k] ? msgs : t->step_msgs[k];
        }
    }
}

int xchg_torus_init(xchg_torus_t *t, int rows, int cols)
{
    memset(t, 0, sizeof *t);
    if (rows < 1 || cols < 1 || (long long)rows * cols > INT_MAX)
        return -1;
    if (rows == 1 || cols == 1) {
        t->kind = XCHG_TORUS_RING;
        cols = rows * cols;
        rows = 1;
    } else {
        t->kind = rows % 2 == 0 && cols % 2 == 0 ? XCHG_TORUS_AT2 : XCHG_TORUS_SPLIT;
    }
    t->rows = rows;
    t->cols = cols;
    t->nodes = rows * cols;
    t->nparts = t->kind == XCHG_TORUS_SPLIT ? 2 : 1;
    if (t->kind == XCHG_TORUS_AT2) {
        ring_init(&t->ring[0], rows / 2, 1);
        ring_init(&t->ring[1], cols / 2, 1);
    } else {
        ring_init(&t->ring[0], rows, t->kind == XCHG_TORUS_SPLIT);
        ring_init(&t->ring[1], cols, t->kind == XCHG_TORUS_SPLIT);
    }
    t->phase_steps = t->ring[0].steps > t->ring[1].steps ? t->ring[0].steps : t->ring[1].steps;
    t->nsteps = t->kind == XCHG_TORUS_AT2     ? 2 + 2 * t->phase_steps
                : t->kind == XCHG_TORUS_SPLIT ? 2 * t->phase_steps
                                              : t->phase_steps;
    for (int dim = 0; dim < 2; dim++) {
        t->place[dim] = malloc((2 * (size_t)t->ring[dim].steps + 1) * sizeof(int));
        t->run_step[dim] = malloc(((size_t)t->phase_steps + 1) * sizeof(int));
        t->run_half[dim] = malloc(((size_t)t->phase_steps + 1) * sizeof(int));
    }
    t->step_units = calloc((size_t)t->nsteps + 1, sizeof *t->step_units);
    t->step_msgs = calloc((size_t)t->nsteps + 1, sizeof *t->step_msgs);
    if (!t->place[0] || !t->place[1] || !t->run_step[0] || !t->run_step[1] || !t->run_half[0] ||
        !t->run_half[1] || !t->step_units || !t->step_msgs || plan_phases(t) != 0) {
        xchg_torus_free(t);
        return -1;
    }
    if (t->kind == XCHG_TORUS_AT2)
        phase1_sizes(t);
    return 0;
}

void xchg_torus_free(xchg_torus_t *t)
{
    for (int dim = 0; dim < 2; dim++) {
        free(t->place[dim]);
        free(t->run_step[dim]);
        free(t->run_half[dim]);
        t->place[dim] = t->run_step[dim] = t->run_half[dim] = NULL;
    }
    free(t->step_units);
    free(t->step_msgs);
    t->step_units = NULL;
    t->step_msgs = NULL;
}

size_t xchg_torus_part_bytes(const xchg_torus_t *t, size_t block_bytes, int part)
{
    if (t->nparts == 1)
        return block_bytes;
    return part == 0 ? (block_bytes + 1) / 2 : block_bytes / 2;
}

size_t xchg_torus_part_offset(const xchg_torus_t *t, size_t block_bytes, int part)
{
    return part == 0 ? 0 : xchg_torus_part_bytes(t, block_bytes, 0);
}

long xchg_torus_units(const xchg_torus_t *t)
{
    long units = 0;
    for (int k = 0; k < t->nsteps; k++)
        units += t->step_units[k];
    return units;
}

/* ---- a node's plan ----
 *
 * The node's messages, in step order (in a step its sends in port order, then its receives in
 * the order of xchg_torus_senders), and where each block of each message is. Every message is
 * contiguous: a block that comes in and goes on later (a relayed block) should stay where it
 * landed, so the planner lays the store out for that:
 *   - a received message R is received inside the frame of the later send S that takes most
 *     of its relayed blocks, when those sit at positions of S that keep R's order and spacing
 *     (S position = R position + d): the frame is S's buffer widened to cover R. R's blocks for
 *     the node are copied out after R's step, its blocks for other sends wait in the frame until
 *     those are packed; no frame position holds two blocks at once (a block for the node may
 *     sit where S packs its own blocks later, after R's step; fits_frame checks every one);
 *   - a send S of one own block goes out of the send buffer, one whose blocks lie in order in
 *     one received message's region goes out of there; any other S is packed into its frame
 *     (own blocks from the send buffer, relayed ones from where they landed) before its step;
 *   - a received message of one block for the node lands in the receive buffer; any other R
 *     that is not in a frame gets a region of its own, alive until its last block leaves;
 *   - when that layout's store would exceed 3 r c units (xchg_torus_plan_init), the plan is made
 *     again with every relayed block that leaves more than a step after it came, in a send
 *     that packs it, copied out to a slot of its own after its step (moved()), so that a
 *     received message's room is free after the next step.
 * Regions (frames and received messages' own) are placed in the store first-fit by their
 * lifetimes: a region is written from its first receive (or its packing) and read until its
 * send; two regions share units only when their lifetimes are apart, and a step never receives
 * into units that it sends from or that another receive of the step uses. */

/* Block key -> index, open addressing with linear probing (deletion shifts back, so no
 * tombstones). */
typedef struct slot_map {
    int64_t *keys; /* -1: empty */
    int *slots;
    size_t cap, used;
} slot_map_t;

static size_t map_home(const slot_map_t *map, int64_t key)
{
    return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 20) & (map->cap - 1);
}

static int map_put(slot_map_t *map, int64_t key, int slot);

static int map_grow(slot_map_t *map)
{
    slot_map_t bigger = {NULL, NULL, map->cap ? 2 * map->cap : 64, 0};
    bigger.keys = malloc(bigger.cap * sizeof *bigger.keys);
    bigger.slots = malloc(bigger.cap * sizeof *bigger.slots);
    if (!bigger.keys || !bigger.slots) {
        free(bigger.keys);
        free(bigger.slots);
        return -1;
    }
    for (size_t i = 0; i < bigger.cap; i++)
        bigger.keys[i] = -1;
    for (size_t i = 0; i < map->cap; i++)
        if (map->keys[i] >= 0)
            map_put(&bigger, map->keys[i], map->slots[i]);
    free(map->keys);
    free(map->slots);
    *map = bigger;
    return 0;
}

static int map_put(slot_map_t *map, int64_t key, int slot)
{
    size_t i;
    if (2 * (map->used + 1) > map->cap && map_grow(map) != 0)
        return -1;
    for (i = map_home(map, key); map->keys[i] >= 0; i = (i + 1) & (map->cap - 1))
        ;
    map->keys[i] = key;
    map->slots[i] = slot;
    map->used++;
    return 0;
}

/* The slot of key, removed from the map; -1 when absent. */
static int map_take(slot_map_t *map, int64_t key)
{
    size_t i, j;
    int slot;
    if (map->cap == 0)
        return -1;
    for (i = map_home(map, key); map->keys[i] != key; i = (i + 1) & (map->cap - 1))
        if (map->keys[i] < 0)
            return -1;
    slot = map->slots[i];
    /* shift back the entries of the run after i that may sit at i */
    for (j = (i + 1) & (map->cap - 1); map->keys[j] >= 0; j = (j + 1) & (map->cap - 1)) {
        size_t home = map_home(map, map->keys[j]);
        if (((j - home) & (map->cap - 1)) >= ((j - i) & (map->cap - 1))) {
            map->keys[i] = map->keys[j];
            map->slots[i] = map->slots[j];
            i = j;
        }
    }
    map->keys[i] = -1;
    map->used--;
    return slot;
}

/* Room for need elements of elem bytes in *array (capacity *cap, grown by doubling). */
static int reserve(void **array, size_t *cap, size_t need, size_t elem)
{
    void *grown;
    size_t want = *cap ? *cap : 16;
    if (need <= *cap)
        return 0;
    while (want < need)
        want *= 2;
    grown = realloc(*array, want * elem);
    if (!grown)
        return -1;
    *array = grown;
    *cap = want;
    return 0;
}

static int64_t block_key(const xchg_torus_t *t, const xchg_torus_block_t *b)
{
    return ((int64_t)b->origin * t->nodes + b->dest) * t->nparts + b->part;
}

/* A message of the node while planning. */
typedef struct pmsg {
    int step, send, peer, part, n;
    int first; /* its blocks: blocks[first .. first + n) */
    /* a receive: the send its relayed blocks all go to (-1: none or several) and the offset of
     * its positions there; attached: it lands in that send's frame */
    int to, offset, attached;
    /* a send: its frame's region (-1: none), where the send starts in it; or the receive it goes
     * out of directly (-1: none) and at which position */
    int region, base, from, from_pos;
    /* the receives in a send's frame: a list from the send's first_attached through the
     * receives' next_attached (-1 ends it) */
    int first_attached, next_attached;
} pmsg_t;

/* A region of the store: units [at, at + len) from time start to time end (inclusive). Times:
 * 3k packing of step k, 3k + 1 its exchange, 3k + 2 unpacking. */
typedef struct region {
    int start, end;
    long len, at;
} region_t;

typedef struct planner {
    const xchg_torus_t *t;
    int node;
    int moves; /* move relayed blocks that wait long out of their messages (moved()) */
    pmsg_t *msgs;
    size_t nmsgs, cap_msgs;
    xchg_torus_block_t *blocks;
    size_t nblocks, cap_blocks;
    int *link;         /* per block: a relayed block's place in the other message (-1: none) */
    int *slot;         /* per received block: the region of its slot when moved (-1: none) */
    region_t *regions; /* per region */
    size_t nregions, cap_regions;
    xchg_torus_copy_t *copies;
    size_t ncopies, cap_copies;
} planner_t;

/* Step k's messages into the planner: the node's sends, then its receives. */
static int gather_step(planner_t *pl, int k, xchg_torus_block_t *buf, int max)
{
    const xchg_torus_t *t = pl->t;
    int from[XCHG_TORUS_NPORTS], port[XCHG_TORUS_NPORTS], nsenders;

    for (int pass = 0; pass < 2; pass++) {
        nsenders = pass == 0 ? XCHG_TORUS_NPORTS : xchg_torus_senders(t, k, pl->node, from, port);
        for (int i = 0; i < nsenders; i++) {
            int peer, n = pass == 0
                              ? xchg_torus_message(t, k, pl->node, i, buf, max, &peer, NULL)
                              : xchg_torus_message(t, k, from[i], port[i], buf, max, &peer, NULL);
            if (n < 0 || (pass == 1 && n > 0 && peer != pl->node))
                return -1;
            if (n == 0)
                continue;
            if (reserve((void **)&pl->msgs, &pl->cap_msgs, pl->nmsgs + 1, sizeof *pl->msgs) ||
                reserve((void **)&pl->blocks, &pl->cap_blocks, pl->nblocks + (size_t)n,
                        sizeof *pl->blocks) ||
                pl->nblocks + (size_t)n > INT_MAX)
                return -1;
            pl->msgs[pl->nmsgs++] = (pmsg_t){.step = k,
                                             .send = pass == 0,
                                             .peer = pass == 0 ? peer : from[i],
                                             .part = buf[0].part,
                                             .n = n,
                                             .first = (int)pl->nblocks,
                                             .to = -1,
                                             .region = -1,
                                             .from = -1,
                                             .first_attached = -1,
                                             .next_attached = -1};
            for (int j = 0; j < n; j++) {
                if (buf[j].part != buf[0].part)
                    return -1;
                pl->blocks[pl->nblocks++] = buf[j];
            }
        }
    }
    return 0;
}

/* Link every relayed block's arrival to its departure; -1 when a send has a block the node does
 * not hold or a received block never leaves. */
static int link_blocks(planner_t *pl)
{
    slot_map_t map = {NULL, NULL, 0, 0};
    int rc = 0;
    for (size_t m = 0; m < pl->nmsgs && rc == 0; m++) {
        const pmsg_t *msg = &pl->msgs[m];
        for (int j = 0; j < msg->n && rc == 0; j++) {
            int b = msg->first + j;
            const xchg_torus_block_t *blk = &pl->blocks[b];
            pl->link[b] = -1;
            if (msg->send && blk->origin != pl->node) {
                int arrived = map_take(&map, block_key(pl->t, blk));
                if (arrived < 0) {
                    rc = -1;
                    break;
                }
                pl->link[b] = arrived;
                pl->link[arrived] = b;
            } else if (!msg->send && blk->dest != pl->node) {
                rc = map_put(&map, block_key(pl->t, blk), b);
            }
        }
    }
    if (rc == 0 && map.used != 0)
        rc = -1;
    free(map.keys);
    free(map.slots);
    return rc;
}

/* Is block j of receive m, when m lands in send `to`'s frame (-1: in a region of its own),
 * copied to a slot of its own after m's step? When it leaves more than one step later in
 * another send that packs it: so the received message's room is free after the next step. */
static int moved(const planner_t *pl, const int *owner, int m, int j, int to)
{
    const pmsg_t *r = &pl->msgs[m];
    int b = r->first + j, s;
    if (pl->link[b] < 0)
        return 0;
    s = owner[pl->link[b]];
    return pl->moves && s != to && pl->msgs[s].from != m && pl->msgs[s].step > r->step + 1;
}

/* When position j of receive m stops being needed if m lands in a frame: after the unpacking of
 * its step (a block for the node), at the exchange of the send it goes on in (in place), or
 * when that send is packed (another send). */
static int frame_end(const planner_t *pl, const int *owner, int m, int j)
{
    const pmsg_t *r = &pl->msgs[m];
    int b = r->first + j, s;
    if (pl->link[b] < 0 || moved(pl, owner, m, j, r->to))
        return 3 * r->step + 2;
    s = owner[pl->link[b]];
    return 3 * pl->msgs[s].step + (s == r->to ? 1 : 0);
}

static int overlap(int a0, int a1, int b0, int b1)
{
    return a0 <= b1 && b0 <= a1;
}

/* Can receive m (to and offset set) land in its send's frame next to the receives already
 * there? Every frame position is used by one block at a time: send S's own positions are packed
 * at 3 s and read at 3 s + 1; a receive's blocks are written at 3 r + 1 and read until
 * frame_end. */
static int fits_frame(const planner_t *pl, const int *owner, int m)
{
    const pmsg_t *r = &pl->msgs[m], *s = &pl->msgs[r->to];
    for (int i = 0; i < r->n; i++) {
        int pos = r->offset + i, b = r->first + i, w = 3 * r->step + 1;
        int e = frame_end(pl, owner, m, i);
        /* fed: the block S sends from here is this one or another receive's */
        int fed = pos >= 0 && pos < s->n && pl->link[s->first + pos] == b;
        for (int o = s->first_attached; o >= 0; o = pl->msgs[o].next_attached) {
            const pmsg_t *other = &pl->msgs[o];
            int at = pos - other->offset;
            if (at < 0 || at >= other->n)
                continue;
            if (overlap(w, e, 3 * other->step + 1, frame_end(pl, owner, o, at)))
                return 0;
            if (pos >= 0 && pos < s->n && pl->link[s->first + pos] == other->first + at)
                fed = 1;
        }
        if (pos >= 0 && pos < s->n && !fed && overlap(w, e, 3 * s->step, 3 * s->step + 1))
            return 0; /* S packs this position while the block is still here */
    }
    return 1;
}

/* The receives that land inside a send's frame (see the top of this section): each goes to the
 * send that takes most of its relayed blocks, when those keep one offset and it fits. */
static void attach_receives(planner_t *pl, const int *owner)
{
    for (size_t m = 0; m < pl->nmsgs; m++) {
        pmsg_t *r = &pl->msgs[m];
        int to = -1, most = 0, offset = 0, ok = 1, seen[8], nseen = 0, again;
        if (r->send)
            continue;
        for (int j = 0; j < r->n; j++) {
            int b = r->first + j, s, count = 0;
            if (pl->link[b] < 0)
                continue;
            /* each send counted once (the first 8; more are counted again, as rarely as they
             * occur) */
            s = owner[pl->link[b]];
            again = 0;
            for (int k = 0; k < nseen && !again; k++)
                again = seen[k] == s;
            if (again)
                continue;
            if (nseen < 8)
                seen[nseen++] = s;
            for (int i = j; i < r->n; i++)
                count += pl->link[r->first + i] >= 0 && owner[pl->link[r->first + i]] == s;
            if (count > most) {
                most = count;
                to = s;
                offset = pl->link[b] - pl->msgs[s].first - j;
            }
        }
        if (to < 0)
            continue;
        for (int j = 0; j < r->n && ok; j++) {
            int b = r->first + j;
            if (pl->link[b] >= 0 && owner[pl->link[b]] == to &&
                pl->link[b] - pl->msgs[to].first - j != offset)
                ok = 0;
        }
        r->to = to;
        r->offset = offset;
        r->attached = ok && fits_frame(pl, owner, (int)m);
        if (r->attached) {
            r->next_attached = pl->msgs[to].first_attached;
            pl->msgs[to].first_attached = (int)m;
        }
    }
}

static int add_region(planner_t *pl, int start, int end, long len)
{
    if (reserve((void **)&pl->regions, &pl->cap_regions, pl->nregions + 1, sizeof *pl->regions))
        return -1;
    pl->regions[pl->nregions] = (region_t){start, end, len, 0};
    return (int)pl->nregions++;
}

/* A slot of one block for block j of receive m (moved): from the copy after m's step until
 * the block's send is packed. */
static int add_slot(planner_t *pl, const int *owner, int m, int j)
{
    const pmsg_t *r = &pl->msgs[m];
    const pmsg_t *s = &pl->msgs[owner[pl->link[r->first + j]]];
    return add_region(pl, 3 * r->step + 2, 3 * s->step, 1);
}

/* Frames, direct sends and the regions of received messages. */
static int make_regions(planner_t *pl, const int *owner, int *recv_region)
{
    for (size_t m = 0; m < pl->nmsgs; m++) {
        pmsg_t *s = &pl->msgs[m];
        int lo = 0, hi = s->n, first = 3 * s->step, last = 3 * s->step + 1, attached = 0;
        int from = -1, from_pos = 0;
        if (!s->send)
            continue;
        for (int o = s->first_attached; o >= 0; o = pl->msgs[o].next_attached) {
            const pmsg_t *r = &pl->msgs[o];
            attached = 1;
            lo = r->offset < lo ? r->offset : lo;
            hi = r->offset + r->n > hi ? r->offset + r->n : hi;
            first = 3 * r->step + 1 < first ? 3 * r->step + 1 : first;
            for (int j = 0; j < r->n; j++) {
                int e = frame_end(pl, owner, o, j);
                last = e > last ? e : last;
                if (moved(pl, owner, o, j, r->to) &&
                    (pl->slot[r->first + j] = add_slot(pl, owner, o, j)) < 0)
                    return -1;
            }
        }
        if (!attached) {
            /* direct: one own block, or blocks in order in one received message */
            for (int j = 0; j < s->n; j++) {
                int b = s->first + j, arrived = pl->link[b];
                int r = arrived < 0 ? -1 : owner[arrived];
                if (j == 0 && r >= 0 && !pl->msgs[r].attached) {
                    from = r;
                    from_pos = arrived - pl->msgs[r].first;
                } else if (r < 0 || r != from || arrived - pl->msgs[r].first != from_pos + j ||
                           pl->msgs[r].attached) {
                    from = -1;
                    break;
                }
            }
            if (from >= 0 || (s->n == 1 && pl->link[s->first] < 0)) {
                s->from = from;
                s->from_pos = from_pos;
                continue;
            }
        }
        s->base = -lo;
        s->region = add_region(pl, first, last, hi - lo);
        if (s->region < 0)
            return -1;
    }
    for (size_t m = 0; m < pl->nmsgs; m++) {
        const pmsg_t *r = &pl->msgs[m];
        int end = 3 * r->step + 2;
        recv_region[m] = -1;
        if (r->send || r->attached || (r->n == 1 && pl->link[r->first] < 0))
            continue;
        for (int j = 0; j < r->n; j++) {
            int b = r->first + j;
            if (pl->link[b] >= 0 && moved(pl, owner, (int)m, j, -1)) {
                if ((pl->slot[b] = add_slot(pl, owner, (int)m, j)) < 0)
                    return -1;
            } else if (pl->link[b] >= 0) {
                const pmsg_t *s = &pl->msgs[owner[pl->link[b]]];
                int last = 3 * s->step + (s->from == (int)m ? 1 : 0);
                end = last > end ? last : end;
            }
        }
        recv_region[m] = add_region(pl, 3 * r->step + 1, end, r->n);
        if (recv_region[m] < 0)
            return -1;
    }
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const region_t *x = *(region_t *const *)a, *y = *(region_t *const *)b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* First fit: every region at the lowest units free over its lifetime; returns the store's size
 * in units, or -1 when memory is exhausted. The regions are placed in the order they start;
 * the ones still alive then (live, kept in the order of their units) are the only ones a
 * region must keep apart from: O(regions x live). */
static long place_regions(planner_t *pl)
{
    size_t n = pl->nregions, nlive = 0;
    region_t **order = malloc((n + 1) * sizeof *order), **live = malloc((n + 1) * sizeof *live);
    long size = 0;
    if (!order || !live) {
        free(order);
        free(live);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = &pl->regions[i];
    qsort(order, n, sizeof *order, by_start);
    for (size_t i = 0; i < n; i++) {
        region_t *r = order[i];
        size_t kept = 0, j;
        long at = 0;
        /* the regions that ended before r starts are gone */
        for (j = 0; j < nlive; j++)
            if (live[j]->end >= r->start)
                live[kept++] = live[j];
        nlive = kept;
        for (j = 0; j < nlive; j++) {
            if (live[j]->at >= at + r->len)
                break;
            if (live[j]->at + live[j]->len > at)
                at = live[j]->at + live[j]->len;
        }
        r->at = at;
        size = at + r->len > size ? at + r->len : size;
        if (r->len == 0)
            continue;
        /* r joins the live ones before the first that lies above it */
        while (j > 0 && live[j - 1]->at > at)
            j--;
        memmove(&live[j + 1], &live[j], (nlive - j) * sizeof *live);
        live[j] = r;
        nlive++;
    }
    free(order);
    free(live);
    return size;
}

/* Where position pos of message m is. */
static xchg_torus_loc_t loc_of(const planner_t *pl, const int *recv_region, int m, int pos)
{
    const pmsg_t *msg = &pl->msgs[m];
    const xchg_torus_block_t *blk = &pl->blocks[msg->first + pos];
    if (msg->send) {
        if (msg->region >= 0)
            return (xchg_torus_loc_t){XCHG_TORUS_AT_STORE, (int)pl->regions[msg->region].at,
                                      msg->base + pos};
        if (msg->from >= 0)
            return loc_of(pl, recv_region, msg->from, msg->from_pos + pos);
        return (xchg_torus_loc_t){XCHG_TORUS_AT_SEND, blk->dest, 0};
    }
    if (msg->attached) {
        const pmsg_t *s = &pl->msgs[msg->to];
        return (xchg_torus_loc_t){XCHG_TORUS_AT_STORE, (int)pl->regions[s->region].at,
                                  s->base + msg->offset + pos};
    }
    if (recv_region[m] < 0)
        return (xchg_torus_loc_t){XCHG_TORUS_AT_RECV, blk->origin, 0};
    return (xchg_torus_loc_t){XCHG_TORUS_AT_STORE, (int)pl->regions[recv_region[m]].at, pos};
}

/* The slot of a moved block. */
static xchg_torus_loc_t slot_loc(const planner_t *pl, int block)
{
    return (xchg_torus_loc_t){XCHG_TORUS_AT_STORE, (int)pl->regions[pl->slot[block]].at, 0};
}

/* A copy of one block; merged with the previous copy when both sides continue it. */
static int add_copy(planner_t *pl, int part, xchg_torus_loc_t from, xchg_torus_loc_t to)
{
    if (pl->ncopies > 0) {
        xchg_torus_copy_t *last = &pl->copies[pl->ncopies - 1];
        int whole = pl->t->nparts == 1;
        if (last->part == part && last->from.where == from.where && last->to.where == to.where &&
            (from.where == XCHG_TORUS_AT_STORE
                 ? from.index == last->from.index && from.pos == last->from.pos + last->nblocks
                 : whole && from.index == last->from.index + last->nblocks) &&
            (to.where == XCHG_TORUS_AT_STORE
                 ? to.index == last->to.index && to.pos == last->to.pos + last->nblocks
                 : whole && to.index == last->to.index + last->nblocks)) {
            last->nblocks++;
            return 0;
        }
    }
    if (reserve((void **)&pl->copies, &pl->cap_copies, pl->ncopies + 1, sizeof *pl->copies))
        return -1;
    pl->copies[pl->ncopies++] = (xchg_torus_copy_t){part, 1, from, to};
    return 0;
}

/* The plan from the laid-out messages: transfers, then the copies of every step. */
static int emit_plan(planner_t *pl, const int *owner, const int *recv_region,
                     xchg_torus_plan_t *plan, xchg_torus_copy_t **copies)
{
    size_t nsends = 0, nrecvs = 0, m = 0;
    plan->sends = malloc((pl->nmsgs + 1) * sizeof *plan->sends);
    plan->recvs = malloc((pl->nmsgs + 1) * sizeof *plan->recvs);
    if (!plan->sends || !plan->recvs)
        return -1;
    for (int k = 0; k < plan->nsteps; k++) {
        size_t first = m, end = m;
        while (end < pl->nmsgs && pl->msgs[end].step == k)
            end++;
        plan->send_first[k] = (int)nsends;
        plan->recv_first[k] = (int)nrecvs;
        plan->pack_first[k] = (int)pl->ncopies;
        /* sends (packing the frames), then receives */
        for (m = first; m < end; m++) {
            const pmsg_t *msg = &pl->msgs[m];
            xchg_torus_xfer_t x = {msg->peer, msg->part, msg->n,
                                   loc_of(pl, recv_region, (int)m, 0)};
            if (!msg->send) {
                plan->recvs[nrecvs++] = x;
                continue;
            }
            plan->sends[nsends++] = x;
            for (int j = 0; msg->region >= 0 && j < msg->n; j++) {
                int arrived = pl->link[msg->first + j], r = -1;
                if (arrived >= 0 && pl->msgs[r = owner[arrived]].attached &&
                    pl->msgs[r].to == (int)m)
                    continue; /* landed in place */
                if (add_copy(pl, msg->part,
                             arrived < 0 ? (xchg_torus_loc_t){XCHG_TORUS_AT_SEND,
                                                              pl->blocks[msg->first + j].dest, 0}
                             : pl->slot[arrived] >= 0
                                 ? slot_loc(pl, arrived)
                                 : loc_of(pl, recv_region, r, arrived - pl->msgs[r].first),
                             loc_of(pl, recv_region, (int)m, j)) != 0)
                    return -1;
                plan->packed++;
            }
        }
        plan->unpack_first[k] = (int)pl->ncopies;
        for (m = first; m < end; m++) {
            const pmsg_t *msg = &pl->msgs[m];
            if (msg->send || (!msg->attached && recv_region[m] < 0))
                continue;
            for (int j = 0; j < msg->n; j++) {
                const xchg_torus_block_t *blk = &pl->blocks[msg->first + j];
                if (pl->slot[msg->first + j] >= 0) {
                    if (add_copy(pl, msg->part, loc_of(pl, recv_region, (int)m, j),
                                 slot_loc(pl, msg->first + j)) != 0)
                        return -1;
                    plan->moved++;
                    continue;
                }
                if (pl->link[msg->first + j] >= 0)
                    continue;
                if (add_copy(pl, msg->part, loc_of(pl, recv_region, (int)m, j),
                             (xchg_torus_loc_t){XCHG_TORUS_AT_RECV, blk->origin, 0}) != 0)
                    return -1;
                plan->unpacked++;
            }
        }
        m = end;
    }
    plan->send_first[plan->nsteps] = (int)nsends;
    plan->recv_first[plan->nsteps] = (int)nrecvs;
    plan->pack_first[plan->nsteps] = (int)pl->ncopies;
    plan->unpack_first[plan->nsteps] = (int)pl->ncopies;
    *copies = pl->copies;
    pl->copies = NULL;
    return 0;
}

/* The plan of node, with or without moving blocks that wait long. */
static int plan_build(const xchg_torus_t *t, int node, int moves, xchg_torus_plan_t *plan)
{
    planner_t pl;
    long most = 1, store;
    int rc = 0, max_blocks, *owner = NULL, *recv_region = NULL;
    xchg_torus_block_t *buf;

    memset(plan, 0, sizeof *plan);
    memset(&pl, 0, sizeof pl);
    pl.t = t;
    pl.node = node;
    pl.moves = moves;
    for (int k = 0; k < t->nsteps; k++)
        most = t->step_units[k] > most ? t->step_units[k] : most;
    max_blocks = most > INT_MAX ? INT_MAX : (int)most;
    buf = malloc((size_t)max_blocks * sizeof *buf);
    plan->nsteps = t->nsteps;
    plan->send_first = malloc(((size_t)t->nsteps + 1) * sizeof(int));
    plan->recv_first = malloc(((size_t)t->nsteps + 1) * sizeof(int));
    plan->pack_first = malloc(((size_t)t->nsteps + 1) * sizeof(int));
    plan->unpack_first = malloc(((size_t)t->nsteps + 1) * sizeof(int));
    if (!buf || !plan->send_first || !plan->recv_first || !plan->pack_first || !plan->unpack_first)
        rc = -1;
    for (int k = 0; k < t->nsteps && rc == 0; k++)
        rc = gather_step(&pl, k, buf, max_blocks);
    if (rc == 0) {
        pl.link = malloc((pl.nblocks + 1) * sizeof *pl.link);
        pl.slot = malloc((pl.nblocks + 1) * sizeof *pl.slot);
        owner = malloc((pl.nblocks + 1) * sizeof *owner);
        recv_region = malloc((pl.nmsgs + 1) * sizeof *recv_region);
        rc = pl.link && pl.slot && owner && recv_region ? 0 : -1;
        for (size_t b = 0; rc == 0 && b < pl.nblocks; b++)
            pl.slot[b] = -1;
    }
    for (size_t m = 0; m < pl.nmsgs && rc == 0; m++)
        for (int j = 0; j < pl.msgs[m].n; j++)
            owner[pl.msgs[m].first + j] = (int)m;
    if (rc == 0)
        rc = link_blocks(&pl);
    if (rc == 0) {
        attach_receives(&pl, owner);
        rc = make_regions(&pl, owner, recv_region);
    }
    if (rc == 0 && ((store = place_regions(&pl)) < 0 || store > INT_MAX))
        rc = -1;
    if (rc == 0) {
        plan->store_units = (int)store;
        rc = emit_plan(&pl, owner, recv_region, plan, &plan->copies);
    }
    free(buf);
    free(owner);
    free(recv_region);
    free(pl.msgs);
    free(pl.blocks);
    free(pl.link);
    free(pl.slot);
    free(pl.regions);
    free(pl.copies);
    if (rc != 0)
        xchg_torus_plan_free(plan);
    return rc;
}

/* Fewest copies first; when that store would exceed 3 r c units, the plan that moves the
 * blocks that wait long into slots of their own (more copies, a store about the size of the
 * blocks the node holds at once). */
int xchg_torus_plan_init(const xchg_torus_t *t, int node, xchg_torus_plan_t *plan)
{
    if (plan_build(t, node, 0, plan) != 0)
        return -1;
    if (plan->store_units <= 3L * t->nodes * t->nparts)
        return 0;
    xchg_torus_plan_free(plan);
    return plan_build(t, node, 1, plan);
}

void xchg_torus_plan_free(xchg_torus_plan_t *plan)
{
    free(plan->send_first);
    free(plan->recv_first);
    free(plan->pack_first);
    free(plan->unpack_first);
    free(plan->sends);
    free(plan->recvs);
    free(plan->copies);
    memset(plan, 0, sizeof *plan);
}

/* ---- shapes ---- */

static int parse_dim(const char *text, const char **end, int *value)
{
    long v = 0;
    if (*text < '0' || *text > '9')
        return -1;
    while (*text >= '0' && *text <= '9') {
        v = v * 10 + (*text++ - '0');
        if (v > 1000000000L)
            return -1;
    }
    if (v < 1)
        return -1;
    *end = text;
    *value = (int)v;
    return 0;
}

int xchg_torus_parse_dims(const char *text, int *rows, int *cols)
{
    const char *at = text;
    int r, c = 1;
    if (parse_dim(at, &at, &r) != 0)
        return -1;
    if (*at == 'x' && parse_dim(at + 1, &at, &c) != 0)
        return -1;
    if (*at != '\0' || (long long)r * c > INT_MAX)
        return -1;
    if (r == 1 || c == 1) {
        c = r * c;
        r = 1;
    }
    *rows = r;
    *cols = c;
    return 0;
}

int xchg_alltoall_torus_shape(const xchg_call_t *call, const xchg_params_t *params, int *rows,
                              int *cols, const char **why)
{
    static __thread char text[192];
    const xchg_topo_t *topo = call->topo;
    const char *from;
    int r, c;

    if (params && params->dims_r > 0 && params->dims_c > 0) {
        r = params->dims_r;
        c = params->dims_c;
        from = "dims";
    } else if (topo && topo->torus_ndims > 0) {
        r = topo->torus_dims[0];
        c = topo->torus_ndims > 1 ? topo->torus_dims[1] : 1;
        from = topo->torus_from_env ? "XCHG_TORUS" : "the periodic Cartesian topology";
    } else {
        *why = "no torus shape: the communicator has no periodic Cartesian topology, and neither "
               "dims nor XCHG_TORUS gives one";
        return -1;
    }
    if (r < 1 || c < 1 || (long long)r * c != call->comm_size) {
        snprintf(text, sizeof text,
                 "the shape %dx%d (%s) has %lld nodes, the communicator %d ranks", r, c, from,
                 (long long)r * c, call->comm_size);
        *why = text;
        return -1;
    }
    /* a ring is 1 x P, whichever way it was given */
    *rows = r == 1 || c == 1 ? 1 : r;
    *cols = r == 1 || c == 1 ? r * c : c;
    return 0;
}

int xchg_alltoall_torus_applies(const xchg_call_t *call, const xchg_params_t *params,
                                const char **why)
{
    int rows, cols;
    return xchg_alltoall_torus_shape(call, params, &rows, &cols, why) == 0;
}

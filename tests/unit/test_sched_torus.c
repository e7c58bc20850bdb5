/*
 * test_sched_torus.c: the all-port ring and torus schedule (algos/sched/torus.c; Liu et al.,
 * "Optimal all-to-all personalized communication in all-port tori", 2006, algorithms AR and
 * AT2), its plans and its cost model
 * (tuning/cost_torus.c), without MPI.
 *
 * The simulator. For every shape below it moves every block (every part of every (origin,
 * destination) pair) along its route and checks: the route starts at the origin, every leg
 * leaves from where the previous one ended, steps increase, it ends at the destination (so every
 * block is delivered, and exactly once: a route has one end), and its hops add up to the torus
 * distance (a shortest path). The blocks that leave a node out of a port in a step form one
 * message: they agree on the hops, and no directed link carries two messages in a step (a
 * message of h hops uses h links). Then, from what it saw: every step carries a message, the
 * largest message of every step and the most messages of a node equal what the schedule
 * declares (step_units, step_msgs, which the cost model prices), and xchg_torus_message returns
 * exactly the blocks of every message, each once, with its peer and hops.
 * Every node's plan is then run in one process on blocks that carry their own names: every
 * block lands once in its place of the receive buffer, the relay store is empty at the end, and
 * the plan's receives match the senders' messages in the order MPI would match them. The plans
 * run on a simulated store per node, with their packing before and unpacking after every step
 * as the algorithm does them (so a block that a layout overwrote too early arrives wrong), and
 * no step may receive into store units that it sends from or receives into twice (MPI forbids
 * it). Every shape's copies are counted: a block for a node is copied out of a message at most
 * once, a ring copies only its own blocks into messages (relays are received in place), the
 * paper's tori copy at most 5 r c blocks per node (its 3 rearrangements, the delivery, and the
 * relayed blocks moved out of the way when the store would exceed 3 r c units), and no store
 * exceeds 3 r c units.
 *
 * The paper's figures: rings p = 4 .. 64 (even) take p/2 steps and ceil(p^2/8) blocks (Lemma 2);
 * tori r, c in {4, 8, 12, 16} (r <= c, and r > c transposed) c/2 + 2 steps and r c^2/8 blocks
 * (Lemma 4; Table II's row for 2^d x 2^d). Generalised sizes (every p from 1 to 64, every r x c
 * up to 10 x 10 and a few more) against the bound on bytes (the load of the busiest dimension's
 * links) and the paper's start-ups at the next shape of multiples of 4: printed as a table; the
 * rings are optimal, and the worst ratios are asserted as the header of algos/sched/torus.h
 * states them.
 * The registry's dims parameter (parse, format), the shape's precedence (dims, then a periodic
 * Cartesian topology, then XCHG_TORUS) and refusals, and the cost model: INFINITY without a
 * shape, and with beta, tau alone (port_share 0, rho 0) exactly the paper's
 * (c/2 + 2) t_s + r c^2/8 m t_w and p/2 t_s + ceil(p^2/8) m t_w.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algos/sched/torus.h"
#include "../../tuning/registry.h"
#include "../../tuning/cost.h"

#include "unit.h"

#define MAX_LEGS 4096

static int64_t key_of(const xchg_torus_t *t, int origin, int dest, int part)
{
    return ((int64_t)origin * t->nodes + dest) * t->nparts + part;
}

/* What the simulator saw of one shape. */
typedef struct seen {
    long *units; /* [step]: largest message */
    int *msgs;   /* [step]: most messages of one node */
    int *count;  /* [(step * nodes + node) * 4 + port]: blocks */
    int *hops;   /* same index: hops (0 none) */
    char *link;  /* same index: directed link (node, port) used in the step */
} seen_t;

/* Move every block along its route; returns 0 when every check passed. */
static int simulate(const xchg_torus_t *t, const char *name, seen_t *seen)
{
    static xchg_torus_leg_t legs[MAX_LEGS];
    size_t cells = (size_t)t->nsteps * (size_t)t->nodes * XCHG_TORUS_NPORTS;
    long before = failures;

    seen->count = calloc(cells + 1, sizeof *seen->count);
    seen->hops = calloc(cells + 1, sizeof *seen->hops);
    seen->link = calloc(cells + 1, 1);
    seen->units = calloc((size_t)t->nsteps + 1, sizeof *seen->units);
    seen->msgs = calloc((size_t)t->nsteps + 1, sizeof *seen->msgs);
    if (!seen->count || !seen->hops || !seen->link || !seen->units || !seen->msgs) {
        CHECK(0, "%s: out of memory", name);
        return -1;
    }
    for (int o = 0; o < t->nodes; o++)
        for (int d = 0; d < t->nodes; d++)
            for (int part = 0; part < t->nparts && o != d; part++) {
                int n = xchg_torus_route(t, o, d, part, legs, MAX_LEGS), at = o, total = 0;
                for (int i = 0; i < n && i < MAX_LEGS; i++) {
                    size_t cell =
                        ((size_t)legs[i].step * t->nodes + legs[i].node) * 4 + (size_t)legs[i].port;
                    if (legs[i].node != at || (i > 0 && legs[i].step <= legs[i - 1].step) ||
                        legs[i].hops < 1) {
                        CHECK(0,
                              "%s: block %d>%d part %d: leg %d (step %d from %d) does not "
                              "follow (at %d)",
                              name, o, d, part, i, legs[i].step, legs[i].node, at);
                        break;
                    }
                    if (seen->hops[cell] && seen->hops[cell] != legs[i].hops)
                        CHECK(0, "%s: step %d node %d port %d: blocks of %d and %d hops", name,
                              legs[i].step, legs[i].node, legs[i].port, seen->hops[cell],
                              legs[i].hops);
                    seen->hops[cell] = legs[i].hops;
                    seen->count[cell]++;
                    total += legs[i].hops;
                    at = xchg_torus_neighbour(t, at, legs[i].port, legs[i].hops);
                }
                CHECK(n <= MAX_LEGS && at == d, "%s: block %d>%d part %d ends at %d", name, o, d,
                      part, at);
                CHECK(total == xchg_torus_distance(t, o, d),
                      "%s: block %d>%d part %d travels %d hops, the distance is %d", name, o, d,
                      part, total, xchg_torus_distance(t, o, d));
            }

    /* messages: links, sizes, messages per node */
    for (int k = 0; k < t->nsteps; k++)
        for (int node = 0; node < t->nodes; node++) {
            int msgs = 0;
            for (int q = 0; q < XCHG_TORUS_NPORTS; q++) {
                size_t cell = ((size_t)k * t->nodes + node) * 4 + (size_t)q;
                int at = node;
                if (!seen->count[cell])
                    continue;
                msgs++;
                seen->units[k] =
                    seen->count[cell] > seen->units[k] ? seen->count[cell] : seen->units[k];
                for (int h = 0; h < seen->hops[cell]; h++) {
                    size_t link = ((size_t)k * t->nodes + at) * 4 + (size_t)q;
                    CHECK(!seen->link[link], "%s: step %d: link %d port %d carries two messages",
                          name, k, at, q);
                    seen->link[link] = 1;
                    at = xchg_torus_neighbour(t, at, q, 1);
                }
            }
            seen->msgs[k] = msgs > seen->msgs[k] ? msgs : seen->msgs[k];
        }
    for (int k = 0; k < t->nsteps; k++) {
        CHECK(seen->units[k] > 0, "%s: step %d carries nothing", name, k);
        CHECK(seen->units[k] == t->step_units[k], "%s: step %d: largest message %ld, declared %ld",
              name, k, seen->units[k], t->step_units[k]);
        CHECK(seen->msgs[k] <= t->step_msgs[k], "%s: step %d: %d messages from a node, declared %d",
              name, k, seen->msgs[k], t->step_msgs[k]);
    }
    return failures == before ? 0 : -1;
}

/* xchg_torus_message agrees with the routes: the same blocks, each once, peer and hops. */
static void check_messages(const xchg_torus_t *t, const char *name, const seen_t *seen)
{
    int most = 1;
    xchg_torus_block_t *blocks;
    int *stamp = calloc((size_t)t->nodes * t->nodes * t->nparts + 1, sizeof *stamp), mark = 0;

    for (int k = 0; k < t->nsteps; k++)
        most = t->step_units[k] > most ? (int)t->step_units[k] : most;
    blocks = malloc((size_t)most * sizeof *blocks);
    if (!blocks || !stamp) {
        CHECK(0, "%s: out of memory", name);
        free(blocks);
        free(stamp);
        return;
    }
    for (int k = 0; k < t->nsteps; k++)
        for (int node = 0; node < t->nodes; node++)
            for (int q = 0; q < XCHG_TORUS_NPORTS; q++) {
                size_t cell = ((size_t)k * t->nodes + node) * 4 + (size_t)q;
                int peer, hops, n = xchg_torus_message(t, k, node, q, blocks, most, &peer, &hops);
                mark++;
                CHECK(n == seen->count[cell],
                      "%s: step %d node %d port %d: %d blocks, routes say %d", name, k, node, q, n,
                      seen->count[cell]);
                if (n <= 0)
                    continue;
                CHECK(hops == seen->hops[cell] &&
                          peer == xchg_torus_neighbour(t, node, q, seen->hops[cell]),
                      "%s: step %d node %d port %d: peer %d hops %d", name, k, node, q, peer, hops);
                for (int i = 0; i < n; i++) {
                    xchg_torus_leg_t legs[MAX_LEGS];
                    int64_t key = key_of(t, blocks[i].origin, blocks[i].dest, blocks[i].part);
                    int nlegs = xchg_torus_route(t, blocks[i].origin, blocks[i].dest,
                                                 blocks[i].part, legs, MAX_LEGS),
                        found = 0;
                    CHECK(stamp[key] != mark, "%s: step %d node %d port %d: block %d>%d twice",
                          name, k, node, q, blocks[i].origin, blocks[i].dest);
                    stamp[key] = mark;
                    for (int j = 0; j < nlegs && j < MAX_LEGS; j++)
                        found |= legs[j].step == k && legs[j].node == node && legs[j].port == q;
                    CHECK(found, "%s: step %d node %d port %d: block %d>%d is not on its route",
                          name, k, node, q, blocks[i].origin, blocks[i].dest);
                }
            }
    free(blocks);
    free(stamp);
}

/* The key a plan location holds at node (its t-th block on), or -2 where a buffer side steps
 * over parts; *unit gets the store unit (-1 elsewhere). Blocks are simulated as even, so a
 * part is one unit of the store. */
static int64_t *at_loc(const xchg_torus_t *t, int64_t *store, int64_t *recv, int node,
                       xchg_torus_loc_t loc, int part, int nth, long store_units, long *unit)
{
    *unit = -1;
    if (loc.where == XCHG_TORUS_AT_STORE) {
        long u = (long)loc.index + loc.pos + nth;
        if (loc.index < 0 || loc.pos < 0 || u >= store_units)
            return NULL;
        *unit = u;
        return &store[u];
    }
    if (loc.where == XCHG_TORUS_AT_RECV && (nth == 0 || t->nparts == 1) && loc.index + nth >= 0 &&
        loc.index + nth < t->nodes)
        return &recv[((size_t)node * t->nodes + (size_t)(loc.index + nth)) * t->nparts + part];
    return NULL;
}

/* The value at a send-side location: the send buffer's blocks are their own keys. */
static int64_t read_loc(const xchg_torus_t *t, int64_t *store, int node, xchg_torus_loc_t loc,
                        int part, int nth, long store_units)
{
    long unit;
    int64_t *cell;
    if (loc.where == XCHG_TORUS_AT_SEND)
        return (nth == 0 || t->nparts == 1) && loc.index + nth >= 0 && loc.index + nth < t->nodes
                   ? key_of(t, node, loc.index + nth, part)
                   : -2;
    cell = loc.where == XCHG_TORUS_AT_STORE
               ? at_loc(t, store, NULL, node, loc, part, nth, store_units, &unit)
               : NULL;
    return cell ? *cell : -2;
}

/* One copy into the store or the receive buffer: what lands in the receive buffer must be the
 * block for that place, and land there once. Returns 0 when every check passed. */
static int write_loc(const xchg_torus_t *t, int64_t *store, int64_t *recv, int node,
                     xchg_torus_loc_t loc, int part, int nth, long store_units, int64_t value,
                     const char *name, int step)
{
    long unit;
    int64_t *cell = at_loc(t, store, recv, node, loc, part, nth, store_units, &unit);
    if (!cell) {
        CHECK(0, "%s: step %d: node %d writes outside its buffers (where %d, index %d, pos %d)",
              name, step, node, loc.where, loc.index, loc.pos + nth);
        return -1;
    }
    if (loc.where == XCHG_TORUS_AT_RECV) {
        int64_t want = key_of(t, loc.index + nth, node, part);
        CHECK(value == want && *cell == -1, "%s: step %d: node %d receives %lld for %lld", name,
              step, node, (long long)value, (long long)want);
        if (value != want || *cell != -1)
            return -1;
    }
    *cell = value;
    return 0;
}

/* Node's copies [first, end) of a step. */
static int run_copies(const xchg_torus_t *t, const xchg_torus_plan_t *pl, int first, int end,
                      int64_t *store, int64_t *recv, int node, const char *name, int step)
{
    for (int c = first; c < end; c++) {
        const xchg_torus_copy_t *cp = &pl->copies[c];
        for (int j = 0; j < cp->nblocks; j++) {
            int64_t v = read_loc(t, store, node, cp->from, cp->part, j, pl->store_units);
            if (v < 0) {
                CHECK(0, "%s: step %d: node %d copies from an empty or invalid place", name, step,
                      node);
                return -1;
            }
            if (write_loc(t, store, recv, node, cp->to, cp->part, j, pl->store_units, v, name,
                          step) != 0)
                return -1;
        }
    }
    return 0;
}

/* Marks units [at, at + n) of a step's use (1 sent from, 2 received into); -1 when a receive
 * meets another use (MPI forbids it). */
static int mark_units(char *used, xchg_torus_loc_t loc, int n, long store_units, char how)
{
    if (loc.where != XCHG_TORUS_AT_STORE)
        return 0;
    for (long u = (long)loc.index + loc.pos; u < (long)loc.index + loc.pos + n; u++) {
        if (u < 0 || u >= store_units)
            return -1;
        if (how == 2 && used[u])
            return -1;
        if (how == 1 && used[u] == 2)
            return -1;
        used[u] = how > used[u] ? how : used[u];
    }
    return 0;
}

/* Run every node's plan on named blocks: packing, messages and unpacking as the algorithm runs
 * them, on a store per node. Every block must land once in its place of the receive buffer, and
 * no step may receive into units it sends from or receives into twice. */
static void run_plans(const xchg_torus_t *t, const char *name)
{
    int p = t->nodes, parts = t->nparts, ok = 1;
    xchg_torus_plan_t *plans = calloc((size_t)p, sizeof *plans);
    int64_t **store = calloc((size_t)p, sizeof *store), *recv = NULL, **out = NULL;
    char **used = calloc((size_t)p, sizeof *used);
    int *cursor = calloc((size_t)p * p, sizeof *cursor);

    if (!plans || !store || !used || !cursor) {
        CHECK(0, "%s: out of memory", name);
        goto out;
    }
    recv = malloc((size_t)p * p * parts * sizeof *recv);
    out = calloc((size_t)p * XCHG_TORUS_NPORTS, sizeof *out);
    if (!recv || !out) {
        CHECK(0, "%s: out of memory", name);
        goto out;
    }
    for (size_t i = 0; i < (size_t)p * p * parts; i++)
        recv[i] = -1;
    for (int node = 0; node < p; node++) {
        if (xchg_torus_plan_init(t, node, &plans[node]) != 0) {
            CHECK(0, "%s: no plan for node %d", name, node);
            goto out;
        }
        store[node] = malloc(((size_t)plans[node].store_units + 1) * sizeof **store);
        used[node] = malloc((size_t)plans[node].store_units + 1);
        if (!store[node] || !used[node]) {
            CHECK(0, "%s: out of memory", name);
            goto out;
        }
        for (int u = 0; u < plans[node].store_units; u++)
            store[node][u] = -3; /* never written */
    }
    for (int k = 0; k < t->nsteps && ok; k++) {
        /* every node packs and sends (before anything arrives) */
        for (int node = 0; node < p && ok; node++) {
            const xchg_torus_plan_t *pl = &plans[node];
            memset(used[node], 0, (size_t)pl->store_units + 1);
            if (run_copies(t, pl, pl->pack_first[k], pl->unpack_first[k], store[node], recv, node,
                           name, k) != 0) {
                ok = 0;
                break;
            }
            for (int i = pl->send_first[k]; i < pl->send_first[k + 1]; i++) {
                const xchg_torus_xfer_t *x = &pl->sends[i];
                int64_t *msg = malloc((size_t)x->nblocks * sizeof *msg);
                CHECK(msg && mark_units(used[node], x->at, x->nblocks, pl->store_units, 1) == 0,
                      "%s: step %d: node %d sends from outside its store", name, k, node);
                for (int b = 0; msg && b < x->nblocks; b++)
                    msg[b] = read_loc(t, store[node], node, x->at, x->part, b, pl->store_units);
                out[(size_t)node * XCHG_TORUS_NPORTS + (size_t)(i - pl->send_first[k])] = msg;
            }
        }
        /* every node receives: the i-th message from a peer is the peer's i-th to it */
        memset(cursor, 0, (size_t)p * p * sizeof *cursor);
        for (int node = 0; node < p && ok; node++) {
            const xchg_torus_plan_t *pl = &plans[node];
            for (int i = pl->recv_first[k]; i < pl->recv_first[k + 1] && ok; i++) {
                const xchg_torus_xfer_t *x = &pl->recvs[i];
                const xchg_torus_plan_t *from = &plans[x->peer];
                int nth = cursor[(size_t)x->peer * p + node]++, match = -1;
                for (int j = from->send_first[k]; j < from->send_first[k + 1]; j++)
                    if (from->sends[j].peer == node && nth-- == 0) {
                        match = j;
                        break;
                    }
                if (match < 0 || from->sends[match].nblocks != x->nblocks ||
                    from->sends[match].part != x->part) {
                    CHECK(0, "%s: step %d: node %d's receive from %d has no matching message", name,
                          k, node, x->peer);
                    ok = 0;
                    break;
                }
                if (mark_units(used[node], x->at, x->nblocks, pl->store_units, 2) != 0) {
                    CHECK(0, "%s: step %d: node %d receives into units the step also uses", name, k,
                          node);
                    ok = 0;
                    break;
                }
                const int64_t *msg = out[(size_t)x->peer * XCHG_TORUS_NPORTS +
                                         (size_t)(match - from->send_first[k])];
                for (int b = 0; b < x->nblocks && ok; b++)
                    if (msg[b] < 0 || write_loc(t, store[node], recv, node, x->at, x->part, b,
                                                pl->store_units, msg[b], name, k) != 0) {
                        CHECK(0, "%s: step %d: node %d: block %d of the message from %d (%lld)",
                              name, k, node, b, x->peer, (long long)msg[b]);
                        ok = 0;
                    }
            }
        }
        /* every node unpacks what is its own */
        for (int node = 0; node < p && ok; node++) {
            const xchg_torus_plan_t *pl = &plans[node];
            if (run_copies(t, pl, pl->unpack_first[k], pl->pack_first[k + 1], store[node], recv,
                           node, name, k) != 0)
                ok = 0;
        }
        for (int i = 0; i < p * XCHG_TORUS_NPORTS; i++) {
            free(out[i]);
            out[i] = NULL;
        }
    }
    for (int node = 0; node < p && ok; node++)
        for (int o = 0; o < p; o++)
            for (int part = 0; part < parts && o != node; part++)
                CHECK(recv[((size_t)node * p + o) * parts + part] == key_of(t, o, node, part),
                      "%s: node %d never received part %d from %d", name, node, part, o);
out:
    for (int node = 0; plans && store && used && node < p; node++) {
        xchg_torus_plan_free(&plans[node]);
        free(store[node]);
        free(used[node]);
    }
    free(plans);
    free(store);
    free(used);
    free(recv);
    free(out);
    free(cursor);
}

/* The copies of every node's plan (the counts the plans declare, which run_plans executes):
 * a block for the node is copied out of a message at most once; on a ring only the node's own
 * blocks are copied into messages (relayed blocks are received where they leave from) and none
 * is moved; the store holds at most 3 r c units. Returns the copies per node in units of r c
 * blocks. */
static double check_copies(const xchg_torus_t *t, const char *name)
{
    long total = 0, rc_units = (long)t->nodes * t->nparts;
    for (int node = 0; node < t->nodes; node++) {
        xchg_torus_plan_t pl;
        if (xchg_torus_plan_init(t, node, &pl) != 0) {
            CHECK(0, "%s: no plan for node %d", name, node);
            return -1;
        }
        CHECK(pl.unpacked <= rc_units - t->nparts, "%s: node %d unpacks %ld blocks", name, node,
              pl.unpacked);
        CHECK(t->kind != XCHG_TORUS_RING || pl.packed <= t->nodes - 1,
              "%s: node %d packs %ld blocks, more than its own %d", name, node, pl.packed,
              t->nodes - 1);
        CHECK(pl.store_units <= 3 * rc_units, "%s: node %d's store of %d units is above 3 r c",
              name, node, pl.store_units);
        CHECK(pl.moved == 0 || t->kind != XCHG_TORUS_RING,
              "%s: node %d moves %ld relayed blocks on a ring", name, node, pl.moved);
        total += pl.packed + pl.unpacked + pl.moved;
        xchg_torus_plan_free(&pl);
    }
    return (double)total / t->nodes / rc_units;
}

/* check_shape's copies per node, in r c blocks (check_copies) */
static double t_copies;

/* Everything about one shape; returns its transmission in blocks (parts count half). */
static double check_shape(int rows, int cols, int run, xchg_torus_t *t)
{
    char name[64];
    seen_t seen = {0};
    snprintf(name, sizeof name, "%dx%d", rows, cols);
    if (xchg_torus_init(t, rows, cols) != 0) {
        CHECK(0, "%s: no schedule", name);
        return -1;
    }
    if (simulate(t, name, &seen) == 0) {
        check_messages(t, name, &seen);
        if (run)
            run_plans(t, name);
        t_copies = check_copies(t, name);
    }
    free(seen.units);
    free(seen.msgs);
    free(seen.count);
    free(seen.hops);
    free(seen.link);
    return (double)xchg_torus_units(t) / t->nparts;
}

/* The bound on bytes: the load of the busiest dimension's links, in blocks. */
static double bound_blocks(int rows, int cols)
{
    double best = 0;
    for (int dim = 0; dim < 2; dim++) {
        int n = dim ? cols : rows, other = dim ? rows : cols;
        double sum = 0;
        for (int k = 0; k < n; k++)
            sum += k < n - k ? k : n - k;
        /* r c nodes send other * sum hop-blocks along dim over 2 r c links */
        best = other * sum / 2 > best ? other * sum / 2 : best;
    }
    return best;
}

/* The paper's start-ups at the next ring of an even size >= 4 (p/2) or the next torus of
 * multiples of 4 (larger/2 + 2). */
static int padded_startups(int rows, int cols)
{
    if (rows == 1 || cols == 1) {
        int p = rows * cols, even = p < 4 ? 4 : p + p % 2;
        return p == 1 ? 0 : even / 2;
    }
    int r = (rows + 3) / 4 * 4, c = (cols + 3) / 4 * 4;
    return (r > c ? r : c) / 2 + 2;
}

static void paper_shapes(void)
{
    xchg_torus_t t;
    for (int p = 4; p <= 64; p += 2) {
        double blocks = check_shape(1, p, p <= 32, &t);
        CHECK(t.kind == XCHG_TORUS_RING && t.nsteps == p / 2, "ring %d: %d steps, Lemma 2 says %d",
              p, t.nsteps, p / 2);
        CHECK(blocks == (p * p + 7) / 8, "ring %d: %.1f blocks, Lemma 2 says %d", p, blocks,
              (p * p + 7) / 8);
        xchg_torus_free(&t);
    }
    for (int r = 4; r <= 16; r += 4)
        for (int c = r; c <= 16; c += 4)
            for (int flip = 0; flip < 2 && !(flip && r == c); flip++) {
                int rows = flip ? c : r, cols = flip ? r : c;
                double blocks = check_shape(rows, cols, (long)r * c <= 128, &t);
                CHECK(t.kind == XCHG_TORUS_AT2 && t.nsteps == c / 2 + 2,
                      "torus %dx%d: %d steps, the paper says %d", rows, cols, t.nsteps, c / 2 + 2);
                CHECK(blocks == (double)r * c * c / 8, "torus %dx%d: %.1f blocks, Lemma 4 says %d",
                      rows, cols, blocks, r * c * c / 8);
                /* the paper's 3 rearrangements of r c blocks, the copies out to the receive
                 * buffer, and (from 12x12 on) the blocks moved to keep the store within 3 r c:
                 * at most 5 r c */
                CHECK(t_copies <= 5, "torus %dx%d: %.2f r c copies per node", rows, cols, t_copies);
                printf("test_sched_torus: torus %dx%d: %.2f r c local copies per node (the paper: "
                       "3)\n",
                       rows, cols, t_copies);
                xchg_torus_free(&t);
            }
}

/* One generalised shape: checked, printed, its ratio to the bound returned (and its blocks). */
static double general_shape(int rows, int cols, int *steps, double *blocks_out)
{
    xchg_torus_t t;
    double blocks = check_shape(rows, cols, (long)rows * cols <= 64, &t), bound;
    const char *kind = t.kind == XCHG_TORUS_RING  ? "ring"
                       : t.kind == XCHG_TORUS_AT2 ? "at2"
                                                  : "split";
    bound = bound_blocks(rows, cols);
    *steps = t.nsteps;
    if (blocks_out)
        *blocks_out = blocks;
    printf("  %3dx%-3d %-5s steps %3d (padded %3d)  blocks %8.1f  bound %8.1f  ratio %.3f\n", rows,
           cols, kind, t.nsteps, padded_startups(rows, cols), blocks, bound,
           bound > 0 ? blocks / bound : 1.0);
    xchg_torus_free(&t);
    return bound > 0 ? blocks / bound : 1.0;
}

static void general_shapes(void)
{
    /* more shapes than the loop below covers: larger, and long thin ones */
    static const int extra[][2] = {{6, 12},  {3, 16}, {10, 12}, {12, 14}, {8, 20},
                                   {16, 20}, {2, 16}, {4, 14},  {11, 13}};
    double worst_even = 0, worst_split = 0, ratio;
    int steps;

    printf("test_sched_torus: generalised sizes (blocks: bytes / block size; padded: the "
           "paper's start-ups at the next valid shape)\n");
    /* rings: every size, optimal */
    for (int p = 1; p <= 64; p++) {
        double blocks;
        ratio = general_shape(1, p, &steps, &blocks);
        /* whole blocks: ceil(p^2/8) for p even */
        CHECK(blocks == ceil(bound_blocks(1, p)), "ring %d: %.3f times the bound", p, ratio);
        CHECK(steps == p / 2, "ring %d: %d steps, expected %d", p, steps, p / 2);
    }
    for (int r = 2; r <= 10; r++)
        for (int c = r; c <= 10; c++) {
            ratio = general_shape(r, c, &steps, NULL);
            if (r % 2 == 0 && c % 2 == 0) {
                worst_even = ratio > worst_even && !(r == 2 && c == 2) ? ratio : worst_even;
                CHECK(steps <= padded_startups(r, c), "%dx%d: %d steps, more than padding's %d", r,
                      c, steps, padded_startups(r, c));
            } else {
                worst_split = ratio > worst_split ? ratio : worst_split;
                CHECK(steps <= padded_startups(r, c) + 2, "%dx%d: %d steps, padding takes %d", r, c,
                      steps, padded_startups(r, c));
            }
        }
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        ratio = general_shape(extra[i][0], extra[i][1], &steps, NULL);
        if (extra[i][0] % 2 == 0 && extra[i][1] % 2 == 0)
            worst_even = ratio > worst_even ? ratio : worst_even;
        else
            worst_split = ratio > worst_split ? ratio : worst_split;
    }
    /* the figures of algos/sched/torus.h */
    CHECK(worst_even <= 1.25 + 1e-9, "even tori: worst ratio %.3f above 1.25", worst_even);
    CHECK(worst_split <= 1.17, "split tori: worst ratio %.3f above 1.17", worst_split);
    printf("test_sched_torus: worst ratio to the bound: even tori %.3f (2x2: 2), others %.3f\n",
           worst_even, worst_split);
}

static void parse_dims(void)
{
    int r = 0, c = 0;
    CHECK(xchg_torus_parse_dims("8", &r, &c) == 0 && r == 1 && c == 8, "8 -> %dx%d", r, c);
    CHECK(xchg_torus_parse_dims("4x6", &r, &c) == 0 && r == 4 && c == 6, "4x6 -> %dx%d", r, c);
    CHECK(xchg_torus_parse_dims("8x1", &r, &c) == 0 && r == 1 && c == 8, "8x1 -> %dx%d", r, c);
    CHECK(xchg_torus_parse_dims("1x5", &r, &c) == 0 && r == 1 && c == 5, "1x5 -> %dx%d", r, c);
    static const char *const bad[] = {"",    "x",     "4x",  "x4",   "0",           "4x0",
                                      "-4",  "4x4x4", "4X4", "4 x4", "65536x65536", "10000000000",
                                      "4x6 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(xchg_torus_parse_dims(bad[i], &r, &c) != 0, "'%s' accepted", bad[i]);
}

/* The spec "torus:dims=..." parsed and formatted back. */
static void check_spec(const char *spec, int rows, int cols, const char *formatted)
{
    xchg_params_t params;
    char err[256], text[64];
    int algo;
    if (xchg_spec_parse(XCHG_ALLTOALL, spec, &algo, &params, err, sizeof err) != 0) {
        CHECK(0, "%s: %s", spec, err);
        return;
    }
    xchg_params_format(&xchg_algos[algo], &params, text, sizeof text);
    CHECK(strcmp(xchg_algos[algo].name, "torus") == 0 && params.dims_r == rows &&
              params.dims_c == cols && strcmp(text, formatted) == 0,
          "%s: %s %dx%d '%s'", spec, xchg_algos[algo].name, params.dims_r, params.dims_c, text);
}

static void registry_and_shape(void)
{
    xchg_topo_t ring = {0}, torus = {0};
    xchg_call_t call = {0};
    xchg_params_t params = {0};
    xchg_params_t given = {.dims_r = 2, .dims_c = 8};
    const char *why = "";
    char err[256];
    int algo;

    check_spec("torus:dims=4x4", 4, 4, "dims=4x4");
    check_spec("torus:dims=8", 1, 8, "dims=8");
    check_spec("torus:dims=8x1", 1, 8, "dims=8");
    check_spec("torus:dims=2x3", 2, 3, "dims=2x3");
    CHECK(xchg_spec_parse(XCHG_ALLTOALL, "torus:dims=4x0", &algo, &params, err, sizeof err) != 0 &&
              strstr(err, "dims=4x0") != NULL,
          "dims=4x0 accepted or not named: %s", err);
    CHECK(xchg_spec_parse(XCHG_ALLTOALL, "torus:r=2", &algo, &params, err, sizeof err) != 0,
          "torus:r=2 accepted");

    /* no shape: a flat communicator without XCHG_TORUS */
    call.coll = XCHG_ALLTOALL;
    call.comm_size = 16;
    call.block_bytes = 1024;
    memset(&params, 0, sizeof params);
    CHECK(!xchg_alltoall_torus_applies(&call, &params, &why) && strstr(why, "no torus shape"),
          "flat: applies (%s)", why);
    CHECK(isinf(xchg_cost_alltoall_torus(&call, &xchg_machine_default, &params)),
          "flat: the model prices it");

    /* the periodic Cartesian topology; dims given win over it */
    torus.torus_ndims = 2;
    torus.torus_dims[0] = 4;
    torus.torus_dims[1] = 4;
    call.topo = &torus;
    CHECK(isfinite(xchg_cost_alltoall_torus(&call, &xchg_machine_default, &params)) &&
              params.dims_r == 4 && params.dims_c == 4,
          "torus 4x4: dims %dx%d", params.dims_r, params.dims_c);
    CHECK(xchg_alltoall_torus_applies(&call, &given, &why) &&
              isfinite(xchg_cost_alltoall_torus(&call, &xchg_machine_default, &given)) &&
              given.dims_r == 2 && given.dims_c == 8,
          "dims=2x8 on a 4x4 torus: %dx%d", given.dims_r, given.dims_c);
    call.comm_size = 12;
    memset(&params, 0, sizeof params);
    CHECK(!xchg_alltoall_torus_applies(&call, &params, &why) && strstr(why, "4x4") &&
              strstr(why, "12 ranks"),
          "4x4 on 12 ranks: %s", why);
    ring.torus_ndims = 1;
    ring.torus_dims[0] = 12;
    ring.torus_dims[1] = 1;
    call.topo = &ring;
    CHECK(isfinite(xchg_cost_alltoall_torus(&call, &xchg_machine_default, &params)) &&
              params.dims_r == 1 && params.dims_c == 12,
          "ring of 12: dims %dx%d", params.dims_r, params.dims_c);

    /* XCHG_TORUS for a communicator without a topology: the context puts its shape in the
     * topology summary, marked as coming from the variable */
    torus.torus_ndims = 2;
    torus.torus_dims[0] = 2;
    torus.torus_dims[1] = 4;
    torus.torus_from_env = 1;
    call.topo = &torus;
    call.comm_size = 8;
    memset(&params, 0, sizeof params);
    CHECK(isfinite(xchg_cost_alltoall_torus(&call, &xchg_machine_default, &params)) &&
              params.dims_r == 2 && params.dims_c == 4,
          "XCHG_TORUS=2x4: dims %dx%d", params.dims_r, params.dims_c);
    call.comm_size = 6;
    memset(&params, 0, sizeof params);
    CHECK(!xchg_alltoall_torus_applies(&call, &params, &why) && strstr(why, "XCHG_TORUS"),
          "XCHG_TORUS=2x4 on 6 ranks: %s", why);
}

/* With only start-ups and bytes on the wire the model is the paper's formula. */
static void cost_formula(void)
{
    xchg_machine_t machine = {.beta = 1e-5, .tau = 1e-9};
    xchg_topo_t topo = {0};
    xchg_call_t call = {0};
    call.coll = XCHG_ALLTOALL;
    call.block_bytes = 1000;
    call.topo = &topo;
    for (int r = 4; r <= 16; r += 4)
        for (int c = r; c <= 16; c += 4) {
            xchg_params_t params = {.dims_r = r, .dims_c = c};
            double want = (c / 2 + 2) * machine.beta + (double)r * c * c / 8 * 1000 * machine.tau;
            double got;
            call.comm_size = r * c;
            got = xchg_cost_alltoall_torus(&call, &machine, &params);
            CHECK(fabs(got - want) <= 1e-9 * want, "%dx%d: model %g, paper %g", r, c, got, want);
        }
    for (int p = 4; p <= 64; p += 2) {
        xchg_params_t params = {.dims_r = 1, .dims_c = p};
        double want = p / 2 * machine.beta + (double)((p * p + 7) / 8) * 1000 * machine.tau, got;
        call.comm_size = p;
        got = xchg_cost_alltoall_torus(&call, &machine, &params);
        CHECK(fabs(got - want) <= 1e-9 * want, "ring %d: model %g, paper %g", p, got, want);
    }
}

int main(void)
{
    registry_and_shape();
    cost_formula();
    parse_dims();
    paper_shapes();
    general_shapes();
    return unit_finish("test_sched_torus");
}

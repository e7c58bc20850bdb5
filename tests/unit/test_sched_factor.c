/*
 * test_sched_factor.c: the hierarchical factor schedule (algos/sched/factor.c) and its cost
 * model (tuning/cost_hier.c), without MPI.
 *
 * Layouts: every multiset of 1 to 5 node sizes from 1 to 6, each three ways (nodes in
 * ascending size with consecutive ranks; descending with the ranks dealt round-robin over the
 * nodes; a random order of the nodes with a random rank for every place), 400 random layouts
 * of 6 to 8 nodes of 1 to 6 ranks, 40 random layouts of up to 64 nodes and 512 ranks, one
 * node of 1 to 12 ranks (p = 1 included), and up to 24 one-rank nodes. Each in both modes with
 * k in {1, 2, 3} (large layouts {1, 3, 8}). For each, every rank's steps of every round are
 * collected and checked against an independent reading of Fig. 2 (the node order, phases and
 * Lemma 1's factors are computed here again):
 *   - every message m_uv (u != v) is sent exactly once and received exactly once, at the same
 *     phase, round and step at both ends; a rank's steps come in step order, at most one send
 *     and one receive per step;
 *   - every message is where Fig. 2 puts it: between nodes paired in that round's factor,
 *     inter-node ones as exchanges (both ways in one step) whose rank on the smaller node U has
 *     done <= l(u) < current, intra-node ones from a sender with done <= l(u) < current (PLAIN)
 *     or in the first phase (EARLY);
 *   - a node takes part in at most one inter-node exchange per step and at most k per batch
 *     (steps kb .. kb + k - 1), always with the one node it is paired with;
 *   - the rounds' lengths (inter-node, intra-node) and the batch count equal the closed forms
 *     (xchg_factor_round_steps, xchg_factor_batches); EARLY never takes more steps than PLAIN,
 *     and at least the largest node's inter-node exchanges (size (p - size) / k batches);
 *   - the paper's step count, read off PLAIN's messages (per round the most messages of a pair
 *     of nodes, with the blocks to self), is Theorem 1's max size * p, and equals
 *     xchg_factor_paper_steps with and without the copies.
 * Golden: Fig. 3 (nodes of 1, 2, 3 ranks): 3 phases of 3, 2 and 1 rounds, 15 steps without the
 * copies (the caption), 18 with them (Theorem 1), the rounds' pairs and lengths, EARLY's 11.
 * Cost model (one- and two-level machines): on one node (or without topology) it is
 * pairwise's time, given k or not, for MPI_Alltoall and MPI_Alltoallv; a given k comes back as
 * given; with beta = 1 and tau = rho = 0 it counts the batches of the schedule exactly for every
 * layout of at most two sizes, and with beta_inter = 1, beta = 0 its inter-node batches; its chosen
 * k is no slower than k = 1 and than all of the longest round in flight.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algos/sched/factor.h"
#include "../../tuning/cost.h"

#include "unit.h"

#define MAX_SIZES 128

static unsigned long rng = 12345;
static int rnd(int n)
{
    rng = rng * 6364136223846793005UL + 1442695040888963407UL;
    return (int)((rng >> 33) % (unsigned long)n);
}

/* ---- an independent reading of Fig. 2 ---- */

typedef struct ref {
    int p, nnodes;
    const int *size; /* [nnodes] by node id */
    int order[MAX_SIZES], pos[MAX_SIZES];
    int *local; /* [p] */
    int nphases, current[MAX_SIZES];
    int max_size;
} ref_t;

static void ref_init(ref_t *r, int p, int nnodes, const int *size, const int *node_of)
{
    int seen[MAX_SIZES] = {0};
    r->p = p;
    r->nnodes = nnodes;
    r->size = size;
    r->local = malloc((size_t)p * sizeof *r->local);
    for (int u = 0; u < p; u++)
        r->local[u] = seen[node_of[u]]++;
    /* node order by (size, id): selection sort */
    for (int x = 0; x < nnodes; x++)
        r->order[x] = x;
    for (int a = 0; a < nnodes; a++)
        for (int b = a + 1; b < nnodes; b++) {
            int x = r->order[a], y = r->order[b];
            if (size[y] < size[x] || (size[y] == size[x] && y < x)) {
                r->order[a] = y;
                r->order[b] = x;
            }
        }
    r->max_size = 0;
    r->nphases = 0;
    for (int a = 0; a < nnodes; a++) {
        int s = size[r->order[a]];
        r->pos[r->order[a]] = a;
        if (r->nphases == 0 || r->current[r->nphases - 1] != s)
            r->current[r->nphases++] = s;
        if (s > r->max_size)
            r->max_size = s;
    }
}

/* Active nodes of a phase (those with at least current ranks) and the partner of node x in
 * round i: positions among the active ones paired by (i - a) mod A. */
static int ref_active(const ref_t *r, int ph)
{
    int n = 0;
    for (int x = 0; x < r->nnodes; x++)
        n += r->size[x] >= r->current[ph];
    return n;
}

static int ref_partner(const ref_t *r, int ph, int i, int x)
{
    int nactive = ref_active(r, ph), first = r->nnodes - nactive, a = r->pos[x] - first;
    if (a < 0)
        return -1;
    return r->order[first + ((i - a) % nactive + nactive) % nactive];
}

/* ---- the check of one layout ---- */

typedef struct outcome {
    long steps, batches, paper_copies, paper_plain;
    int problems;
} outcome_t;

static char label[256];

static void problem(outcome_t *o, const char *what, int ph, int i, int rank, int peer)
{
    o->problems++;
    CHECK(0, "%s: %s (phase %d round %d rank %d peer %d)", label, what, ph, i, rank, peer);
}

/* A round's inter-node sends, node by node: one exchange per step, at most k per batch. */
static void check_round_ports(const ref_t *r, const int *node_of, const xchg_factor_slot_t *all,
                              const int *nall, const int *start, int k, int ph, int i, outcome_t *o)
{
    int cap = r->max_size * r->max_size + 1;
    int *per_step = calloc((size_t)cap, sizeof *per_step);
    int *per_batch = calloc((size_t)cap, sizeof *per_batch);
    int *touched = malloc((size_t)r->p * r->max_size * sizeof *touched);

    for (int x = 0; x < r->nnodes; x++) {
        int ntouched = 0;
        for (int u = 0; u < r->p; u++) {
            if (node_of[u] != x)
                continue;
            for (int e = start[u]; e < start[u] + nall[u]; e++) {
                const xchg_factor_slot_t *s = &all[e];
                if (node_of[s->peer] == x || !s->send)
                    continue;
                if (s->step >= cap) {
                    problem(o, "step beyond max size squared", ph, i, u, s->peer);
                    continue;
                }
                if (per_step[s->step]++ == 1)
                    problem(o, "a node in two inter-node exchanges at one step", ph, i, u, s->peer);
                if (per_batch[s->step / k]++ == k)
                    problem(o, "a node in more than k inter-node steps of a batch", ph, i, u,
                            s->peer);
                touched[ntouched++] = s->step;
            }
        }
        for (int t = 0; t < ntouched; t++) {
            per_step[touched[t]] = 0;
            per_batch[touched[t] / k] = 0;
        }
    }
    free(per_step);
    free(per_batch);
    free(touched);
}

/* Is message u -> v (an entry of rank `rank`) where Fig. 2 puts it? */
static void check_place(const ref_t *r, const int *node_of, int mode, int ph, int i, int rank,
                        const xchg_factor_slot_t *s, outcome_t *o)
{
    int x = node_of[rank], y = node_of[s->peer];
    int done = ph > 0 ? r->current[ph - 1] : 0, current = r->current[ph];

    if (ref_partner(r, ph, i, x) != y) {
        problem(o, "message between nodes not paired in this round", ph, i, rank, s->peer);
        return;
    }
    if (x != y) {
        int lower = r->pos[x] < r->pos[y] ? rank : s->peer;
        if (!s->send || !s->recv)
            problem(o, "an inter-node step that is not an exchange", ph, i, rank, s->peer);
        if (r->local[lower] < done || r->local[lower] >= current)
            problem(o, "exchange of a rank outside done <= l(u) < current", ph, i, rank, s->peer);
        return;
    }
    if (s->send && s->recv)
        problem(o, "an intra-node step both ways", ph, i, rank, s->peer);
    if (mode == XCHG_FACTOR_EARLY && ph != 0)
        problem(o, "EARLY: intra-node message after the first phase", ph, i, rank, s->peer);
    if (mode == XCHG_FACTOR_PLAIN) {
        int sender = s->send ? rank : s->peer;
        if (r->local[sender] < done || r->local[sender] >= current)
            problem(o, "PLAIN: intra-node sender outside done <= l(u) < current", ph, i, rank,
                    s->peer);
    }
}

/* The paper's length of a round (PLAIN): per pair of nodes the messages of its u side, plus
 * the blocks to self of a node paired with itself (d of them). */
static long paper_round(const ref_t *r, const int *node_of, const xchg_factor_slot_t *all,
                        const int *nall, const int *start, int ph, int i, int copies)
{
    long most = 0, *count = calloc((size_t)r->nnodes, sizeof *count);
    int d = r->current[ph] - (ph > 0 ? r->current[ph - 1] : 0);

    for (int u = 0; u < r->p; u++)
        for (int e = start[u]; e < start[u] + nall[u]; e++) {
            int x = node_of[u], y = node_of[all[e].peer];
            /* one count per step: the sending side inside a node, the lower node between */
            if ((x == y && all[e].send) || (x != y && r->pos[x] < r->pos[y]))
                count[x]++;
        }
    for (int x = 0; x < r->nnodes; x++) {
        int y = ref_partner(r, ph, i, x);
        long c = count[x] + (y == x && copies ? d : 0);
        if (y >= 0 && c > most)
            most = c;
    }
    free(count);
    return most;
}

/* Every round of one layout in one mode with k ports. */
static outcome_t run_layout(int p, int nnodes, const int *size, const int *node_of, int mode, int k)
{
    outcome_t o = {0, 0, 0, 0, 0};
    ref_t r;
    xchg_factor_t f;
    void *ws = malloc(xchg_factor_workspace_bytes(p, nnodes));
    long *sent = malloc((size_t)p * p * sizeof *sent), *got = malloc((size_t)p * p * sizeof *got);
    int most, *nall = malloc((size_t)p * sizeof *nall), *start = malloc((size_t)p * sizeof *start);
    xchg_factor_slot_t *all;
    long round_id = 0;

    ref_init(&r, p, nnodes, size, node_of);
    CHECK(xchg_factor_init(&f, p, nnodes, node_of, mode, ws) == 0, "%s: init failed", label);
    most = xchg_factor_max_slots(&f);
    all = malloc((size_t)p * most * sizeof *all);
    for (long j = 0; j < (long)p * p; j++)
        sent[j] = got[j] = -1;
    CHECK(f.shape.nphases == r.nphases && f.max_size == r.max_size, "%s: %d phases, max %d", label,
          f.shape.nphases, f.max_size);

    for (int ph = 0; ph < r.nphases && ph < f.shape.nphases; ph++) {
        int nrounds = xchg_factor_nrounds(&f.shape, ph);
        CHECK(nrounds == ref_active(&r, ph), "%s: phase %d has %d rounds", label, ph, nrounds);
        for (int i = 0; i < nrounds; i++, round_id++) {
            int exch = 0, loc = 0, want_exch, want_loc, steps;
            for (int u = 0; u < p; u++) {
                start[u] = u * most;
                nall[u] = xchg_factor_rank_slots(&f, ph, i, u, all + start[u]);
                if (nall[u] > most)
                    problem(&o, "more entries than xchg_factor_max_slots", ph, i, u, -1);
                for (int e = start[u]; e < start[u] + nall[u]; e++) {
                    const xchg_factor_slot_t *s = &all[e];
                    int inter;
                    if (s->peer < 0 || s->peer >= p || s->peer == u || !(s->send || s->recv)) {
                        problem(&o, "bad entry", ph, i, u, s->peer);
                        continue;
                    }
                    if (e > start[u] && s->step < all[e - 1].step)
                        problem(&o, "steps out of order", ph, i, u, s->peer);
                    for (int g = start[u]; g < e; g++)
                        if (all[g].step == s->step &&
                            ((all[g].send && s->send) || (all[g].recv && s->recv)))
                            problem(&o, "two sends or two receives in one step", ph, i, u, s->peer);
                    check_place(&r, node_of, mode, ph, i, u, s, &o);
                    if (s->send) {
                        if (sent[(long)u * p + s->peer] >= 0)
                            problem(&o, "message sent twice", ph, i, u, s->peer);
                        sent[(long)u * p + s->peer] = round_id * 1000000000L + s->step;
                    }
                    if (s->recv) {
                        if (got[(long)s->peer * p + u] >= 0)
                            problem(&o, "message received twice", ph, i, u, s->peer);
                        got[(long)s->peer * p + u] = round_id * 1000000000L + s->step;
                    }
                    inter = node_of[u] != node_of[s->peer];
                    if (inter && s->step + 1 > exch)
                        exch = s->step + 1;
                    if (!inter && s->step + 1 > loc)
                        loc = s->step + 1;
                }
            }
            check_round_ports(&r, node_of, all, nall, start, k, ph, i, &o);
            xchg_factor_round_steps(&f.shape, mode, ph, i, &want_exch, &want_loc);
            if (exch != want_exch || loc != want_loc) {
                CHECK(0, "%s: phase %d round %d: steps %d/%d, closed form %d/%d", label, ph, i,
                      exch, loc, want_exch, want_loc);
                o.problems++;
            }
            steps = exch > loc ? exch : loc;
            o.steps += steps;
            o.batches += (steps + k - 1) / k;
            if (mode == XCHG_FACTOR_PLAIN) {
                o.paper_copies += paper_round(&r, node_of, all, nall, start, ph, i, 1);
                o.paper_plain += paper_round(&r, node_of, all, nall, start, ph, i, 0);
            }
        }
    }
    /* every message exactly once, and at the same place at both ends */
    for (int u = 0; u < p; u++)
        for (int v = 0; v < p; v++) {
            long s = sent[(long)u * p + v], g = got[(long)u * p + v];
            if (u != v && (s < 0 || g < 0 || s != g)) {
                CHECK(0, "%s: message %d -> %d: sent at %ld, received at %ld", label, u, v, s, g);
                o.problems++;
            }
        }
    CHECK(o.batches == xchg_factor_batches(&f.shape, mode, k), "%s: %ld batches, closed form %ld",
          label, o.batches, xchg_factor_batches(&f.shape, mode, k));
    free(all);
    free(ws);
    free(sent);
    free(got);
    free(nall);
    free(start);
    free(r.local);
    return o;
}

/* Both modes and every k of the list on one layout, with the counts that hold across them. */
static void check_layout(int p, int nnodes, const int *size, const int *node_of, const int *ks,
                         int nks, const char *what)
{
    int max_size = 0;
    for (int x = 0; x < nnodes; x++)
        max_size = size[x] > max_size ? size[x] : max_size;
    for (int j = 0; j < nks; j++) {
        int k = ks[j];
        outcome_t plain, early;
        long lower = ((long)max_size * (p - max_size) + k - 1) / k;
        xchg_factor_t f;
        void *ws = malloc(xchg_factor_workspace_bytes(p, nnodes));

        snprintf(label, sizeof label, "%s PLAIN k=%d", what, k);
        plain = run_layout(p, nnodes, size, node_of, XCHG_FACTOR_PLAIN, k);
        snprintf(label, sizeof label, "%s EARLY k=%d", what, k);
        early = run_layout(p, nnodes, size, node_of, XCHG_FACTOR_EARLY, k);
        CHECK(early.batches <= plain.batches && early.batches >= lower,
              "%s k=%d: EARLY %ld batches, PLAIN %ld, lower bound %ld", what, k, early.batches,
              plain.batches, lower);
        xchg_factor_init(&f, p, nnodes, node_of, XCHG_FACTOR_PLAIN, ws);
        if (k == 1) {
            /* Theorem 1, read off the messages */
            CHECK(plain.paper_copies == (long)max_size * p &&
                      plain.paper_copies == xchg_factor_paper_steps(&f.shape, 1) &&
                      plain.paper_plain == xchg_factor_paper_steps(&f.shape, 0),
                  "%s: paper steps %ld (Theorem 1: %ld, closed form %ld), without copies %ld "
                  "(closed form %ld)",
                  what, plain.paper_copies, (long)max_size * p,
                  xchg_factor_paper_steps(&f.shape, 1), plain.paper_plain,
                  xchg_factor_paper_steps(&f.shape, 0));
            CHECK(plain.steps == xchg_factor_steps(&f.shape, XCHG_FACTOR_PLAIN) &&
                      early.steps == xchg_factor_steps(&f.shape, XCHG_FACTOR_EARLY),
                  "%s: steps %ld/%ld", what, plain.steps, early.steps);
        }
        free(ws);
    }
}

/* ---- layouts ---- */

/* node_of for sizes (by node id): consecutive, round-robin or random. */
enum { CONSECUTIVE, ROUND_ROBIN, RANDOM };

static int make_layout(int nnodes, const int *size, int how, int *node_of)
{
    int p = 0, left[MAX_SIZES];
    for (int x = 0; x < nnodes; x++) {
        left[x] = size[x];
        for (int j = 0; j < size[x]; j++)
            node_of[p++] = x;
    }
    if (how == ROUND_ROBIN) {
        int at = 0;
        for (int round = 0; at < p; round++)
            for (int x = 0; x < nnodes; x++)
                if (left[x]-- > 0)
                    node_of[at++] = x;
    } else if (how == RANDOM) {
        for (int u = p - 1; u > 0; u--) {
            int v = rnd(u + 1), t = node_of[u];
            node_of[u] = node_of[v];
            node_of[v] = t;
        }
    }
    return p;
}

static void three_ways(int nnodes, const int *ascending, const int *ks, int nks)
{
    int size[MAX_SIZES], node_of[8 * MAX_SIZES], p;
    char what[200];
    int n = snprintf(what, sizeof what, "sizes");
    for (int x = 0; x < nnodes; x++)
        n += snprintf(what + n, sizeof what - n, "%s%d", x ? "," : " ", ascending[x]);

    memcpy(size, ascending, (size_t)nnodes * sizeof *size);
    p = make_layout(nnodes, size, CONSECUTIVE, node_of);
    check_layout(p, nnodes, size, node_of, ks, nks, what);
    for (int x = 0; x < nnodes; x++)
        size[x] = ascending[nnodes - 1 - x];
    p = make_layout(nnodes, size, ROUND_ROBIN, node_of);
    snprintf(what + n, sizeof what - n, " descending round-robin");
    check_layout(p, nnodes, size, node_of, ks, nks, what);
    for (int x = nnodes - 1; x > 0; x--) {
        int y = rnd(x + 1), t = size[x];
        size[x] = size[y];
        size[y] = t;
    }
    p = make_layout(nnodes, size, RANDOM, node_of);
    snprintf(what + n, sizeof what - n, " random order and ranks");
    check_layout(p, nnodes, size, node_of, ks, nks, what);
}

/* Every non-decreasing sequence of nnodes sizes in 1 .. 6. */
static int all_multisets(int nnodes, int at, int *sizes, const int *ks, int nks)
{
    int count = 0;
    if (at == nnodes) {
        three_ways(nnodes, sizes, ks, nks);
        return 1;
    }
    for (int s = at > 0 ? sizes[at - 1] : 1; s <= 6; s++) {
        sizes[at] = s;
        count += all_multisets(nnodes, at + 1, sizes, ks, nks);
    }
    return count;
}

static void random_layouts(int count, int min_nodes, int max_nodes, int max_size, int max_p,
                           const int *ks, int nks)
{
    int size[MAX_SIZES], node_of[8 * MAX_SIZES];
    for (int c = 0; c < count; c++) {
        int nnodes = min_nodes + rnd(max_nodes - min_nodes + 1), p = 0, top = 1 + rnd(max_size);
        char what[64];
        for (int x = 0; x < nnodes; x++) {
            size[x] = 1 + rnd(top);
            if (p + size[x] > max_p)
                size[x] = 1;
            p += size[x];
        }
        p = make_layout(nnodes, size, RANDOM, node_of);
        snprintf(what, sizeof what, "random layout %d (p=%d, %d nodes)", c, p, nnodes);
        check_layout(p, nnodes, size, node_of, ks, nks, what);
    }
}

/* ---- golden: Fig. 3 ---- */

static void fig3(void)
{
    int size[3] = {1, 2, 3}, node_of[6], ks[1] = {1};
    int rounds[3] = {3, 2, 1};
    /* per round: the partner of nodes 0, 1, 2 (-1 inactive) and the steps PLAIN / EARLY */
    int partner[6][3] = {{0, 2, 1}, {1, 0, 2}, {2, 1, 0}, {-1, 1, 2}, {-1, 2, 1}, {-1, -1, 2}};
    int plain_steps[6] = {3, 2, 3, 2, 3, 2}, early_steps[6] = {3, 2, 3, 0, 3, 0};
    xchg_factor_t f;
    void *ws = malloc(xchg_factor_workspace_bytes(6, 3));
    int round = 0, p = make_layout(3, size, CONSECUTIVE, node_of);

    check_layout(p, 3, size, node_of, ks, 1, "Fig. 3");
    xchg_factor_init(&f, p, 3, node_of, XCHG_FACTOR_PLAIN, ws);
    CHECK(f.shape.nphases == 3, "Fig. 3: %d phases, expected 3", f.shape.nphases);
    for (int ph = 0; ph < 3 && ph < f.shape.nphases; ph++) {
        CHECK(xchg_factor_nrounds(&f.shape, ph) == rounds[ph], "Fig. 3: phase %d: %d rounds",
              ph + 1, xchg_factor_nrounds(&f.shape, ph));
        for (int i = 0; i < rounds[ph]; i++, round++) {
            int exch, loc;
            for (int x = 0; x < 3; x++) {
                int b = xchg_factor_partner_at(&f.shape, ph, i, f.pos[x]);
                CHECK((b < 0 ? -1 : f.order[b]) == partner[round][x],
                      "Fig. 3: phase %d round %d: node %d paired with %d, expected %d", ph + 1,
                      i + 1, x, b < 0 ? -1 : f.order[b], partner[round][x]);
            }
            xchg_factor_round_steps(&f.shape, XCHG_FACTOR_PLAIN, ph, i, &exch, &loc);
            CHECK((exch > loc ? exch : loc) == plain_steps[round],
                  "Fig. 3: phase %d round %d: %d steps, expected %d", ph + 1, i + 1,
                  exch > loc ? exch : loc, plain_steps[round]);
            xchg_factor_round_steps(&f.shape, XCHG_FACTOR_EARLY, ph, i, &exch, &loc);
            CHECK((exch > loc ? exch : loc) == early_steps[round],
                  "Fig. 3: phase %d round %d: EARLY %d steps, expected %d", ph + 1, i + 1,
                  exch > loc ? exch : loc, early_steps[round]);
        }
    }
    CHECK(xchg_factor_paper_steps(&f.shape, 0) == 15 && xchg_factor_paper_steps(&f.shape, 1) == 18,
          "Fig. 3: paper steps %ld without copies (caption: 15), %ld with (Theorem 1: 18)",
          xchg_factor_paper_steps(&f.shape, 0), xchg_factor_paper_steps(&f.shape, 1));
    CHECK(xchg_factor_steps(&f.shape, XCHG_FACTOR_PLAIN) == 15 &&
              xchg_factor_steps(&f.shape, XCHG_FACTOR_EARLY) == 11,
          "Fig. 3: executed steps PLAIN %ld (expected 15), EARLY %ld (expected 11)",
          xchg_factor_steps(&f.shape, XCHG_FACTOR_PLAIN),
          xchg_factor_steps(&f.shape, XCHG_FACTOR_EARLY));
    free(ws);
}

static void bad_layouts(void)
{
    int node_of[4] = {0, 2, 2, 0}, bad[3] = {0, 3, 1};
    xchg_factor_t f;
    void *ws = malloc(xchg_factor_workspace_bytes(4, 3));
    /* node id 1 has no ranks: left out of the order */
    CHECK(xchg_factor_init(&f, 4, 3, node_of, XCHG_FACTOR_EARLY, ws) == 0 && f.shape.nnodes == 2 &&
              f.pos[1] == -1 && f.shape.nphases == 1,
          "a node id without ranks is not left out");
    CHECK(xchg_factor_init(&f, 3, 3, bad, XCHG_FACTOR_EARLY, ws) == -1,
          "a node id out of range is accepted");
    CHECK(xchg_factor_init(&f, 0, 1, bad, XCHG_FACTOR_EARLY, ws) == -1, "p = 0 is accepted");
    free(ws);
}

/* ---- cost model ---- */

static const xchg_machine_t machines[] = {
    {.beta = 3e-6, .tau = 2e-10, .rho = 1e-10, .port_share = 1.0},
    {.beta = 3e-6, .tau = 2e-10, .rho = 1e-10, .port_share = 0.0},
    {.beta = 1e-6, .tau = 1e-9, .rho = 0.0, .port_share = 2.0},
    {.beta = 1e-9, .tau = 1e-6, .rho = 0.0, .port_share = 4.0},
    /* two levels, with and without a node's injection limit */
    {.beta = 1e-6,
     .tau = 1e-10,
     .rho = 1e-10,
     .port_share = 1.0,
     .beta_inter = 5e-6,
     .tau_inter = 1e-9},
    {.beta = 1e-6,
     .tau = 1e-10,
     .rho = 1e-10,
     .port_share = 0.5,
     .beta_inter = 5e-6,
     .tau_inter = 1e-9,
     .inject = 2},
};
#define NMACHINES (sizeof machines / sizeof machines[0])

static xchg_call_t make_call(int p, size_t b, const xchg_topo_t *topo)
{
    xchg_call_t call;
    memset(&call, 0, sizeof call);
    call.coll = XCHG_ALLTOALL;
    call.comm_size = p;
    call.topo = topo;
    call.block_bytes = b;
    return call;
}

static void cost_one_node(void)
{
    for (size_t m = 0; m < NMACHINES; m++)
        for (int p = 1; p <= 40; p++) {
            xchg_topo_t topo = {.nnodes = 1, .min_node_ranks = p, .max_node_ranks = p};
            for (int with_topo = 0; with_topo <= 1; with_topo++) {
                xchg_call_t call = make_call(p, 1000, with_topo ? &topo : NULL);
                int ks[5] = {0, 1, 2, 3, p > 1 ? p - 1 : 1};
                for (int j = 0; j < 5; j++) {
                    xchg_params_t hier = {.nports = ks[j]}, pair = {.nports = ks[j]};
                    double th = xchg_cost_alltoall_hier(&call, &machines[m], &hier);
                    double tp = xchg_cost_alltoall_pairwise(&call, &machines[m], &pair);
                    CHECK(fabs(th - tp) <= 1e-12 * tp,
                          "one node p=%d k=%d machine %zu: hier %g, pairwise %g", p, ks[j], m, th,
                          tp);
                    CHECK(ks[j] == 0 || hier.nports == ks[j], "p=%d: given k=%d came back as %d", p,
                          ks[j], hier.nports);
                    /* MPI_Alltoallv: every message priced as the largest */
                    call.coll = XCHG_ALLTOALLV;
                    call.max_block_bytes = call.block_bytes;
                    hier = (xchg_params_t){.nports = ks[j]};
                    pair = (xchg_params_t){.nports = ks[j]};
                    th = xchg_cost_alltoallv_hier(&call, &machines[m], &hier);
                    tp = xchg_cost_alltoallv_pairwise(&call, &machines[m], &pair);
                    CHECK(fabs(th - tp) <= 1e-12 * tp,
                          "alltoallv one node p=%d k=%d machine %zu: hier %g, pairwise %g", p,
                          ks[j], m, th, tp);
                    call.coll = XCHG_ALLTOALL;
                }
            }
        }
}

/* Inter-node batches of the schedule: sum over rounds of ceil(longest pair / k). */
static long inter_batches(const xchg_factor_shape_t *s, int k)
{
    long batches = 0;
    for (int ph = 0; ph < s->nphases; ph++)
        for (int i = 0; i < xchg_factor_nrounds(s, ph); i++) {
            int exchange, local;
            xchg_factor_round_steps(s, XCHG_FACTOR_EARLY, ph, i, &exchange, &local);
            batches += (exchange + k - 1) / k;
        }
    return batches;
}

/* Layouts of at most two sizes: the model's batches are the schedule's, all of them (beta = 1,
 * tau = rho = 0) and those between nodes (beta_inter = 1, beta = 0). */
static void cost_counts_batches(void)
{
    const xchg_machine_t count = {.beta = 1.0, .tau = 0.0, .rho = 0.0, .port_share = 1.0};
    const xchg_machine_t count_inter = {
        .beta = 0.0, .tau = 0.0, .rho = 0.0, .port_share = 1.0, .beta_inter = 1.0};
    int size[MAX_SIZES], node_of[8 * MAX_SIZES];
    for (int nnodes = 2; nnodes <= 9; nnodes++)
        for (int lo = 1; lo <= 5; lo++)
            for (int hi = lo; hi <= 7; hi++)
                for (int nhi = 1; nhi <= nnodes - (hi > lo); nhi++) {
                    xchg_factor_t f;
                    void *ws;
                    int p;
                    for (int x = 0; x < nnodes; x++)
                        size[x] = x < nhi ? hi : lo;
                    p = make_layout(nnodes, size, RANDOM, node_of);
                    ws = malloc(xchg_factor_workspace_bytes(p, nnodes));
                    xchg_factor_init(&f, p, nnodes, node_of, XCHG_FACTOR_EARLY, ws);
                    for (int k = 1; k <= 5; k++) {
                        xchg_topo_t topo = {
                            .nnodes = nnodes, .min_node_ranks = lo, .max_node_ranks = hi};
                        xchg_call_t call = make_call(p, 64, &topo);
                        xchg_params_t params = {.nports = k};
                        double t = xchg_cost_alltoall_hier(&call, &count, &params);
                        long want = xchg_factor_batches(&f.shape, XCHG_FACTOR_EARLY, k);
                        CHECK(t == (double)want,
                              "%d nodes, %d of %d ranks and the rest of %d, k=%d: model %g "
                              "batches, schedule %ld",
                              nnodes, nhi, hi, lo, k, t, want);
                        t = xchg_cost_alltoall_hier(&call, &count_inter, &params);
                        want = inter_batches(&f.shape, k);
                        CHECK(t == (double)want,
                              "%d nodes, %d of %d ranks and the rest of %d, k=%d: model %g "
                              "inter-node batches, schedule %ld",
                              nnodes, nhi, hi, lo, k, t, want);
                    }
                    free(ws);
                }
}

/* The chosen k: no slower than k = 1 and than the longest round in flight. */
static void cost_choice(void)
{
    for (size_t m = 0; m < NMACHINES; m++)
        for (int nnodes = 2; nnodes <= 12; nnodes += 5)
            for (int lo = 1; lo <= 4; lo++)
                for (int hi = lo; hi <= 8; hi += 3) {
                    xchg_topo_t topo = {
                        .nnodes = nnodes, .min_node_ranks = lo, .max_node_ranks = hi};
                    int p = (nnodes - 1) * lo + hi;
                    for (size_t b = 1; b <= 1 << 20; b *= 64) {
                        xchg_call_t call = make_call(p, b, &topo);
                        xchg_params_t chosen = {.nports = 0}, one = {.nports = 1},
                                      all = {.nports = 1 << 20};
                        double t = xchg_cost_alltoall_hier(&call, &machines[m], &chosen);
                        double t1 = xchg_cost_alltoall_hier(&call, &machines[m], &one);
                        double tall = xchg_cost_alltoall_hier(&call, &machines[m], &all);
                        xchg_params_t again = chosen;
                        double t2 = xchg_cost_alltoall_hier(&call, &machines[m], &again);
                        CHECK(chosen.nports >= 1 && t <= t1 && t <= tall && t2 == t,
                              "machine %zu, %d nodes %d..%d, b=%zu: chosen k=%d %g, k=1 %g, "
                              "all %g, again %g",
                              m, nnodes, lo, hi, b, chosen.nports, t, t1, tall, t2);
                    }
                }
}

int main(void)
{
    int sizes[8], nmultisets = 0;
    const int small_ks[3] = {1, 2, 3}, large_ks[3] = {1, 3, 8};
    int one_node[1], node_of[64];

    fig3();
    bad_layouts();
    for (int nnodes = 1; nnodes <= 5; nnodes++)
        nmultisets += all_multisets(nnodes, 0, sizes, small_ks, 3);
    CHECK(nmultisets == 461, "%d multisets of 1 to 5 sizes in 1..6, expected 461", nmultisets);
    random_layouts(400, 6, 8, 6, 48, small_ks, 3);
    random_layouts(40, 1, 64, 16, 512, large_ks, 3);
    for (int p = 1; p <= 12; p++) {
        one_node[0] = p;
        make_layout(1, one_node, CONSECUTIVE, node_of);
        check_layout(p, 1, one_node, node_of, small_ks, 3, "one node");
    }
    for (int nnodes = 1; nnodes <= 24; nnodes++) {
        int ones[24];
        for (int x = 0; x < nnodes; x++)
            ones[x] = 1;
        make_layout(nnodes, ones, RANDOM, node_of);
        check_layout(nnodes, nnodes, ones, node_of, small_ks, 3, "one-rank nodes");
    }
    cost_one_node();
    cost_counts_batches();
    cost_choice();
    return unit_finish("test_sched_factor");
}

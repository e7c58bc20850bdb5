/*
 * test_sched_node.c: the plans of the node algorithms (algos/sched/node.c), without MPI.
 *
 * A call is simulated from the plan alone, byte by byte: every byte of every block carries a
 * tag of its own. Per pass, every node's ranks write their bytes of the pass into the node's
 * windows where the plan puts them (a window cell written twice in a pass fails); every pair of
 * nodes meeting in a round runs its steps as both ends see them (each step must meet its twin
 * at the other end: same part, leaders swapped, the sent bytes exactly the bytes received at the
 * same window offset), copying the sender's window bytes into the receiver's window; the
 * statistics, when carried, ride at the piece's end in the first pass; then every rank reads its
 * bytes where the plan says they are. Every byte must arrive exactly once, at its destination,
 * in its place, and the statistics of every other node at every node. A step's two messages
 * must travel between two pairs of ranks (leader j sends as member j, receives as member
 * n - 1 - j) unless both leaders are the middle members of nodes of odd size. A second
 * simulation runs every rank's steps on a clock: each rank posts its steps' messages (as a
 * sender, a receiver or both) one step at a time in its order, a message moves when both its
 * ranks have posted it, a rank takes its next step when its messages have moved, a node's next
 * pass starts when all its ranks finished the last one; it must finish (no deadlock), and no
 * node may have more messages posted each way than its leaders. Allgather: the circulant rounds
 * between the nodes' leaders, simulated the same way with tagged bytes, every rank reading every
 * block.
 *
 * Layouts: every multiset of 1 to 8 node sizes from 1 to 6 (3002), in the node order of the
 * sizes with consecutive ranks, and (up to 6 nodes) in reverse with ranks dealt round-robin and
 * in a random order with ranks at random; random layouts up to p = 512; one node; one-rank
 * nodes. Windows small enough for several passes (and the halves' window arithmetic), parts
 * split at a few bytes (split_min small), leaders 1 to 4, alltoallv counts even, skewed and
 * sparse (zero) with and without the statistics.
 * At p = 4096 (nodes of 1 to 64 ranks, random sizes and order): the rounds (every pair once,
 * partners symmetric), the steps' twins and the clocked run for every pair and pass, and the
 * blocks' places: for alltoall every stream's blocks tile it exactly, for alltoallv the sender's
 * place of every block equals its receiver's and every stream length both ends' (the byte
 * simulation's memory would be p^2 tags; the places and the steps are what it combines).
 * What runs (xchg_node_as_run, which xchg-tune uses to time one of two params that make the
 * same call): for random layouts of up to 6 nodes, blocks of 1 B to 300,000 B and segments of
 * 16 KiB to 8 MiB, every leaders 1 to 7 and k 1 to 8 that it names alike send the same
 * messages, hashed from the plan as algos/node.c runs it (rank, pass, peer ranks, parts,
 * batches).
 * The simulator (build/xchg-sim) cannot run the node algorithms (they move data through shared
 * memory); this is their check at scale.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algos/sched/node.h"
#include "../../tuning/cost.h"

#include "unit.h"

#define MAX_P 4096
#define MAX_NODES 4096

static unsigned long rng = 2718281828UL;
static int rnd(int n)
{
    rng = rng * 6364136223846793005UL + 1442695040888963407UL;
    return (int)((rng >> 33) % (unsigned long)n);
}

/* ---- layouts ---- */

enum { CONSECUTIVE, ROUND_ROBIN, RANDOM };

/* node_of for nodes of the given sizes; the number of ranks */
static int make_layout(int nnodes, const int *sizes, int how, int *node_of)
{
    int p = 0, left[MAX_NODES];
    for (int x = 0; x < nnodes; x++) {
        left[x] = sizes[x];
        p += sizes[x];
    }
    if (how == CONSECUTIVE) {
        for (int x = 0, r = 0; x < nnodes; x++)
            for (int i = 0; i < sizes[x]; i++)
                node_of[r++] = x;
    } else if (how == ROUND_ROBIN) {
        for (int r = 0, x = nnodes - 1; r < p; x = (x + nnodes - 1) % nnodes)
            if (left[x] > 0) {
                left[x]--;
                node_of[r++] = x;
            }
    } else {
        for (int r = 0; r < p; r++) {
            int x = rnd(nnodes);
            while (left[x] == 0)
                x = (x + 1) % nnodes;
            left[x]--;
            node_of[r] = x;
        }
    }
    return p;
}

/* ---- block sizes ---- */

enum { EVEN, SKEWED, SPARSE };

static size_t block_size(int kind, size_t b, int s, int d)
{
    switch (kind) {
    case SKEWED: /* one rank's blocks for rank 0 are far larger */
        return s == 1 && d == 0 ? 40 * b + 3 : (size_t)((s * 7 + d * 3) % 4);
    case SPARSE:
        return (s + 2 * d) % 5 == 0 ? (size_t)(s % 3 + 1) : 0;
    default:
        return b;
    }
}

/* ---- the simulated call ---- */

typedef struct sim {
    const xchg_node_layout_t *lay;
    int p, nnodes, v; /* v: alltoallv (headers), else alltoall */
    int kind;
    size_t b;
    xchg_node_cfg_t cfg;
    size_t *size;                /* [p * p] */
    uint32_t *tag0;              /* [p * p]: first tag of each block */
    uint32_t ntags;              /* data tags 1 .. ntags, then one per node for the statistics */
    unsigned char *got;          /* [ntags + nnodes + 1]: times delivered */
    size_t *send_at, *recv_at;   /* [p * p]: place of block s -> d, by sender and by receiver */
    size_t *stream_len, *in_len; /* [nnodes * nnodes]: x's stream to y (y = x: local), from y */
    size_t *passes;              /* [nnodes] */
    uint32_t *win;               /* [nnodes][2 nnodes - 1][stride] */
    size_t stride;
} sim_t;

static uint32_t *window(sim_t *s, int x, int index)
{
    return s->win + ((size_t)x * (2 * (size_t)s->nnodes - 1) + (size_t)index) * s->stride;
}

static int stream_window(int x, int y)
{
    return x == y ? xchg_node_local_window() : xchg_node_out_window(x, y);
}

/* Node x's headers (alltoallv) as its ranks would write them. */
static char *make_headers(const sim_t *s, int x, xchg_node_headers_t *h)
{
    const xchg_node_layout_t *lay = s->lay;
    int n = xchg_node_size(lay, x);
    char *base;
    h->stride = xchg_node_v_header_bytes(s->p, s->nnodes);
    h->nnodes = s->nnodes;
    base = calloc((size_t)n, h->stride);
    h->base = base;
    for (int l = 0; l < n; l++) {
        int me = lay->members[lay->first[x] + l];
        uint64_t *hdr = (uint64_t *)(base + (size_t)l * h->stride);
        for (int j = 0; j < s->p; j++) {
            hdr[3 + s->nnodes + j] = s->size[(size_t)me * s->p + j];
            if (lay->node_of[j] != x)
                hdr[3 + lay->node_of[j]] += s->size[(size_t)j * s->p + me];
        }
    }
    return base;
}

/* The places of every block and the streams' lengths, as every rank computes them. */
static void plan_places(sim_t *s)
{
    const xchg_node_layout_t *lay = s->lay;
    int p = s->p, nn = s->nnodes;
    size_t *row_at = malloc((size_t)p * sizeof *row_at), *lens = malloc((size_t)nn * sizeof *lens);
    size_t *recvbytes = malloc((size_t)p * sizeof *recvbytes);

    for (int x = 0; x < nn; x++) {
        xchg_node_headers_t h;
        char *hdrs = s->v ? make_headers(s, x, &h) : NULL;
        for (int l = 0; l < xchg_node_size(lay, x); l++) {
            int me = lay->members[lay->first[x] + l];
            if (s->v) {
                xchg_node_v_send_layout(lay, &h, x, l, row_at, lens);
                for (int j = 0; j < p; j++)
                    if (j != me)
                        s->send_at[(size_t)me * p + j] = row_at[j];
                memcpy(&s->stream_len[(size_t)x * nn], lens, (size_t)nn * sizeof *lens);
                for (int j = 0; j < p; j++)
                    recvbytes[j] = s->size[(size_t)j * p + me];
                xchg_node_v_recv_layout(lay, &h, x, l, recvbytes, row_at, lens);
                for (int j = 0; j < p; j++)
                    if (j != me)
                        s->recv_at[(size_t)j * p + me] = row_at[j];
                for (int y = 0; y < nn; y++)
                    if (y != x)
                        s->in_len[(size_t)x * nn + y] = lens[y];
            } else {
                for (int j = 0; j < p; j++)
                    if (j != me) {
                        s->send_at[(size_t)me * p + j] = xchg_node_block_at(lay, me, j, s->b);
                        s->recv_at[(size_t)j * p + me] = xchg_node_block_at(lay, j, me, s->b);
                    }
                for (int y = 0; y < nn; y++) {
                    s->stream_len[(size_t)x * nn + y] = xchg_node_stream_len(lay, x, y, s->b);
                    if (y != x)
                        s->in_len[(size_t)x * nn + y] = xchg_node_stream_len(lay, y, x, s->b);
                }
            }
        }
        free(hdrs);
    }
    for (int x = 0; x < nn; x++) {
        size_t most = 0;
        for (int y = 0; y < nn; y++) {
            size_t t = xchg_node_passes(s->stream_len[(size_t)x * nn + y], s->cfg.window);
            most = t > most ? t : most;
            t = y == x ? 0 : xchg_node_passes(s->in_len[(size_t)x * nn + y], s->cfg.window);
            most = t > most ? t : most;
        }
        s->passes[x] = most == 0 && s->cfg.carry && nn > 1 ? 1 : most;
    }
    free(row_at);
    free(lens);
    free(recvbytes);
}

/* The bytes of block src -> dst that fall in pass t, as [lo, hi) of the block. */
static int pass_range(const sim_t *s, size_t at, size_t len, size_t t, size_t *lo, size_t *hi)
{
    size_t w = s->cfg.window, a = t * w, e = a + w;
    *lo = at > a ? at : a;
    *hi = at + len < e ? at + len : e;
    if (*lo >= *hi)
        return 0;
    *lo -= at;
    *hi -= at;
    return 1;
}

/* Pass t's writes: every rank of every node with a pass t. */
static void sim_writes(sim_t *s, size_t t, const char *what)
{
    int p = s->p;
    for (int src = 0; src < p; src++) {
        int x = s->lay->node_of[src];
        if (t >= s->passes[x])
            continue;
        for (int dst = 0; dst < p; dst++) {
            size_t len = s->size[(size_t)src * p + dst], at = s->send_at[(size_t)src * p + dst];
            size_t lo, hi;
            uint32_t *w = window(s, x, stream_window(x, s->lay->node_of[dst]));
            if (dst == src || !pass_range(s, at, len, t, &lo, &hi))
                continue;
            for (size_t i = lo; i < hi; i++) {
                uint32_t *cell = &w[at + i - t * s->cfg.window];
                CHECK(*cell == 0, "%s: pass %zu: rank %d's byte %zu for %d lands on a written cell",
                      what, t, src, i, dst);
                *cell = s->tag0[(size_t)src * p + dst] + (uint32_t)i;
            }
        }
    }
}

static long seen_split, seen_later_pass, seen_stats; /* what the layouts exercised */
static long seen_one_pair, seen_two_pairs;

/* Node x's and y's views of their steps in pass t must be twins; the bytes move. */
static void sim_pair(sim_t *s, int x, int y, size_t t, const char *what)
{
    xchg_node_step_t sx[64], sy[64];
    int nn = s->nnodes, f = xchg_node_round_of(s->lay, x, y);
    int n1 = xchg_node_steps(s->lay, &s->cfg, x, y, f, t, s->stream_len[(size_t)x * nn + y],
                             s->in_len[(size_t)x * nn + y], sx);
    int n2 = xchg_node_steps(s->lay, &s->cfg, y, x, f, t, s->stream_len[(size_t)y * nn + x],
                             s->in_len[(size_t)y * nn + x], sy);
    CHECK(n1 == n2, "%s: pass %zu: %d steps at node %d, %d at node %d", what, t, n1, x, n2, y);
    seen_split += n1 > 1;
    seen_later_pass += t > 0 && n1 > 0;
    seen_stats += n1 > 0 && sx[n1 - 1].send_stats;
    for (int q = 0; q < n1 && q < n2; q++) {
        const xchg_node_step_t *a = &sx[q], *b = &sy[q];
        CHECK(a->leader == b->peer_leader && a->peer_leader == b->leader && a->send == b->recv &&
                  a->recv == b->send && a->send_off == b->recv_off &&
                  a->send_bytes == b->recv_bytes && a->recv_off == b->send_off &&
                  a->recv_bytes == b->send_bytes && a->send_stats == b->recv_stats &&
                  a->recv_stats == b->send_stats,
              "%s: pass %zu step %d between %d and %d: the ends differ", what, t, q, x, y);
        if (a->send && a->recv) {
            /* its two messages between one pair of ranks only for two middle members of nodes
             * of odd size */
            int nx = xchg_node_size(s->lay, x), ny = xchg_node_size(s->lay, y);
            int same = a->leader == xchg_node_receiver(s->lay, x, a->leader) &&
                       b->leader == xchg_node_receiver(s->lay, y, b->leader);
            CHECK(same == (nx % 2 == 1 && ny % 2 == 1 && 2 * a->leader == nx - 1 &&
                           2 * b->leader == ny - 1),
                  "%s: pass %zu step %d between %d and %d: both ways between ranks %d and %d", what,
                  t, q, x, y, a->leader, b->leader);
            seen_one_pair += same;
            seen_two_pairs += !same;
        }
        for (int dir = 0; dir < 2 && s->win; dir++) {
            const xchg_node_step_t *st = dir ? b : a;
            int from = dir ? y : x, to = dir ? x : y;
            size_t bytes = st->send_bytes, off = st->send_off;
            uint32_t *out = window(s, from, xchg_node_out_window(from, to));
            uint32_t *in = window(s, to, xchg_node_in_window(nn, to, from));
            if (!st->send)
                continue;
            if (st->send_stats) {
                size_t piece =
                    xchg_node_piece(s->stream_len[(size_t)from * nn + to], s->cfg.window, t);
                bytes -= XCHG_NODE_STATS;
                CHECK(off + bytes == piece,
                      "%s: the statistics of %d to %d are not at the "
                      "piece's end",
                      what, from, to);
                for (int i = 0; i < XCHG_NODE_STATS; i++)
                    out[off + bytes + (size_t)i] = s->ntags + 1 + (uint32_t)from;
                bytes += XCHG_NODE_STATS;
            }
            CHECK(off + bytes <= s->stride, "%s: a step of %d to %d leaves its window", what, from,
                  to);
            for (size_t i = 0; i < bytes && off + i < s->stride; i++)
                in[off + i] = out[off + i];
        }
    }
}

/* Pass t's reads, and the statistics of the first pass. */
static void sim_reads(sim_t *s, size_t t, const char *what)
{
    int p = s->p, nn = s->nnodes;
    for (int dst = 0; dst < p; dst++) {
        int x = s->lay->node_of[dst];
        if (t >= s->passes[x])
            continue;
        for (int src = 0; src < p; src++) {
            int y = s->lay->node_of[src];
            size_t len = s->size[(size_t)src * p + dst], at = s->recv_at[(size_t)src * p + dst];
            size_t lo, hi;
            const uint32_t *w =
                window(s, x, y == x ? xchg_node_local_window() : xchg_node_in_window(nn, x, y));
            if (src == dst || !pass_range(s, at, len, t, &lo, &hi))
                continue;
            for (size_t i = lo; i < hi; i++) {
                uint32_t want = s->tag0[(size_t)src * p + dst] + (uint32_t)i,
                         cell = w[at + i - t * s->cfg.window];
                CHECK(cell == want, "%s: pass %zu: byte %zu of %d -> %d reads tag %u, not %u", what,
                      t, i, src, dst, cell, want);
                if (cell == want && want <= s->ntags)
                    s->got[want]++;
            }
        }
    }
    for (int x = 0; t == 0 && s->cfg.carry && x < nn; x++)
        for (int y = 0; y < nn; y++)
            if (y != x) {
                const uint32_t *w = window(s, x, xchg_node_in_window(nn, x, y));
                size_t piece = xchg_node_piece(s->in_len[(size_t)x * nn + y], s->cfg.window, 0);
                CHECK(w[piece] == s->ntags + 1 + (uint32_t)y,
                      "%s: node %d has no statistics of node %d", what, x, y);
            }
}

/* ---- the clocked run of the leaders' steps ---- */

/* One rank's part of a step: the message it sends to the peer node's rank `to`, the one it
 * receives from the peer node's rank `from` (-1: none), each cleared once it has moved. */
typedef struct task {
    size_t pass;
    int round, part, peer_node, to, from;
} task_t;

typedef struct rank_q {
    task_t *tasks;
    int n, next;
} rank_q_t;

/* Every rank's steps in its order (pass, round, part), as algos/node.c's leader_pass runs
 * them: a step's send by the leader's sending member, its receive by its receiving member. */
static rank_q_t *rank_queues(const sim_t *s)
{
    const xchg_node_layout_t *lay = s->lay;
    int nn = s->nnodes, rounds = xchg_node_rounds(nn), m = lay->max_size;
    rank_q_t *q = calloc((size_t)nn * (size_t)m, sizeof *q);
    for (int x = 0; x < nn; x++) {
        int lx = xchg_node_leaders(lay, x, s->cfg.leaders), nx = xchg_node_size(lay, x);
        for (int me = 0; me < nx; me++) {
            rank_q_t *rq = &q[x * m + me];
            int send_as = me < lx ? me : -1,
                recv_as = xchg_node_receives_for(lay, x, s->cfg.leaders, me);
            size_t cap = 16;
            CHECK((recv_as >= 0) == (nx - 1 - me < lx) &&
                      (recv_as < 0 || xchg_node_receiver(lay, x, recv_as) == me),
                  "node %d: member %d receives for leader %d", x, me, recv_as);
            rq->tasks = malloc(cap * sizeof(task_t));
            for (size_t t = 0; t < s->passes[x]; t++)
                for (int f = 0; f < rounds; f++) {
                    xchg_node_step_t st[64];
                    int y = xchg_node_partner(lay, x, f), n;
                    if (y == x)
                        continue;
                    n = xchg_node_steps(lay, &s->cfg, x, y, f, t, s->stream_len[(size_t)x * nn + y],
                                        s->in_len[(size_t)x * nn + y], st);
                    for (int k = 0; k < n; k++) {
                        int sends = st[k].leader == send_as && st[k].send;
                        int recvs = st[k].leader == recv_as && st[k].recv, to;
                        CHECK(st[k].leader >= 0 && st[k].leader < lx, "leader %d of %d at node %d",
                              st[k].leader, lx, x);
                        if (!sends && !recvs)
                            continue;
                        if ((size_t)rq->n % cap == 0 && rq->n > 0)
                            rq->tasks = realloc(rq->tasks, ((size_t)rq->n + cap) * sizeof(task_t));
                        to = sends ? xchg_node_receiver(lay, y, st[k].peer_leader) : -1;
                        rq->tasks[rq->n++] =
                            (task_t){t, f, k, y, to, recvs ? st[k].peer_leader : -1};
                    }
                }
        }
    }
    return q;
}

/* A rank's current task, when it is of its node's current pass. */
static task_t *current(rank_q_t *q, const size_t *pass, int x)
{
    return q->next < q->n && q->tasks[q->next].pass == pass[x] ? &q->tasks[q->next] : NULL;
}

/* Each rank posts its current task's messages and waits for them (k = 1); a message moves when
 * both its ranks have posted it; a node's next pass starts when all its ranks finished the
 * last. It must finish (no deadlock), and no node may have more messages posted each way than
 * its leaders. */
static void clocked_run(const sim_t *s, const char *what)
{
    int nn = s->nnodes, m = s->lay->max_size, left = 0;
    rank_q_t *q = rank_queues(s);
    size_t *pass = calloc((size_t)nn, sizeof *pass);

    for (int i = 0; i < nn * m; i++)
        for (int k = 0; k < q[i].n; k++)
            left += (q[i].tasks[k].to >= 0) + (q[i].tasks[k].from >= 0);
    for (long tick = 1; left > 0; tick++) {
        int ran = 0, advanced = 0;
        /* every message whose two ranks have it posted moves (sender and receiver both clear) */
        for (int x = 0; x < nn; x++) {
            int out = 0, in = 0;
            for (int me = 0; me < xchg_node_size(s->lay, x); me++) {
                task_t *a = current(&q[x * m + me], pass, x), *b;
                out += a && a->to >= 0;
                in += a && a->from >= 0;
                if (!a || a->to < 0 ||
                    !(b = current(&q[a->peer_node * m + a->to], pass, a->peer_node)))
                    continue;
                if (b->pass != a->pass || b->round != a->round || b->part != a->part ||
                    b->peer_node != x || b->from != me)
                    continue;
                a->to = b->from = -1;
                ran += 2;
            }
            CHECK(out <= xchg_node_leaders(s->lay, x, s->cfg.leaders) &&
                      in <= xchg_node_leaders(s->lay, x, s->cfg.leaders),
                  "%s: node %d has %d messages out and %d in posted, %d leaders", what, x, out, in,
                  xchg_node_leaders(s->lay, x, s->cfg.leaders));
        }
        /* a rank whose task has no message left takes its next */
        for (int i = 0; i < nn * m; i++) {
            rank_q_t *r = &q[i];
            if (r->next < r->n && r->tasks[r->next].to < 0 && r->tasks[r->next].from < 0) {
                r->next++;
                advanced = 1;
            }
        }
        /* a node whose ranks finished its pass starts the next */
        for (int x = 0; x < nn; x++) {
            int done = pass[x] < s->passes[x];
            for (int me = 0; me < xchg_node_size(s->lay, x) && done; me++)
                done = !current(&q[x * m + me], pass, x);
            if (done) {
                pass[x]++;
                advanced = 1;
            }
        }
        left -= ran;
        if (!ran && !advanced)
            break;
    }
    CHECK(left == 0, "%s: the leaders' steps deadlock with %d messages left", what, left);
    for (int i = 0; i < nn * m; i++)
        free(q[i].tasks);
    free(q);
    free(pass);
}

/* One call, simulated; window: the windows' data bytes. */
static void simulate(const xchg_node_layout_t *lay, int v, int kind, size_t b, int leaders,
                     size_t window, size_t split_min, int carry, const char *label)
{
    int p = lay->nranks, nn = lay->nnodes;
    sim_t s = {.lay = lay, .p = p, .nnodes = nn, .v = v, .kind = kind, .b = b};
    size_t maxpass = 0, cells;
    char what[200];

    snprintf(what, sizeof what, "%s p=%d nodes=%d %s leaders=%d window=%zu split=%zu%s", label, p,
             nn, v ? "alltoallv" : "alltoall", leaders, window, split_min, carry ? " carry" : "");
    s.cfg = (xchg_node_cfg_t){leaders, window, split_min, carry && v, 1};
    s.size = malloc((size_t)p * p * sizeof *s.size);
    s.tag0 = malloc((size_t)p * p * sizeof *s.tag0);
    s.send_at = calloc((size_t)p * p, sizeof *s.send_at);
    s.recv_at = calloc((size_t)p * p, sizeof *s.recv_at);
    s.stream_len = calloc((size_t)nn * nn, sizeof *s.stream_len);
    s.in_len = calloc((size_t)nn * nn, sizeof *s.in_len);
    s.passes = calloc((size_t)nn, sizeof *s.passes);
    for (int i = 0; i < p; i++)
        for (int j = 0; j < p; j++) {
            size_t len = v ? block_size(kind, b, i, j) : b;
            s.size[(size_t)i * p + j] = len;
            s.tag0[(size_t)i * p + j] = s.ntags + 1;
            s.ntags += (uint32_t)len;
        }
    s.got = calloc((size_t)s.ntags + nn + 2, 1);
    plan_places(&s);
    s.stride = window + XCHG_NODE_EXTRA;
    cells = (size_t)nn * (2 * (size_t)nn - 1) * s.stride;
    s.win = malloc(cells * sizeof *s.win);
    for (int x = 0; x < nn; x++)
        maxpass = s.passes[x] > maxpass ? s.passes[x] : maxpass;
    for (size_t t = 0; t < maxpass; t++) {
        memset(s.win, 0, cells * sizeof *s.win);
        sim_writes(&s, t, what);
        for (int x = 0; x < nn; x++)
            for (int y = x + 1; y < nn; y++)
                sim_pair(&s, x, y, t, what);
        sim_reads(&s, t, what);
    }
    {
        long lost = 0, twice = 0;
        for (uint32_t i = 1; i <= s.ntags; i++) {
            lost += s.got[i] == 0;
            twice += s.got[i] > 1;
        }
        /* the bytes to self are copies, not part of the plan */
        for (int i = 0; i < p; i++)
            lost -= (long)s.size[(size_t)i * p + i];
        CHECK(lost == 0 && twice == 0, "%s: %ld bytes lost, %ld delivered twice", what, lost,
              twice);
    }
    clocked_run(&s, what);
    free(s.size);
    free(s.tag0);
    free(s.send_at);
    free(s.recv_at);
    free(s.stream_len);
    free(s.in_len);
    free(s.passes);
    free(s.got);
    free(s.win);
}

/* ---- allgather ---- */

/* The circulant rounds between the nodes with tagged slices of c bytes per block, k ports:
 * every node's buffer in its relative order, each round's messages all at once on the state
 * before it, then every rank reads every block. */
static void simulate_gather_ports(const xchg_node_layout_t *lay, size_t c, int ports,
                                  const char *label)
{
    int p = lay->nranks, nn = lay->nnodes, rounds = xchg_node_gather_rounds(nn, ports);
    int k = ports > 1 ? ports : 1;
    long reach = 1;
    xchg_node_gather_msg_t msgs[64], back[64];
    int *sent = calloc((size_t)nn, sizeof *sent);
    long *forwarded = calloc((size_t)nn, sizeof *forwarded), expect_forwarded = -1;
    size_t cells = (size_t)p * c, *chunk_at = malloc(((size_t)nn + 1) * nn * sizeof *chunk_at);
    uint32_t *buf = calloc((size_t)nn * cells, sizeof *buf), *next = malloc((size_t)nn * cells * 4);
    char what[160];

    snprintf(what, sizeof what, "%s p=%d nodes=%d allgather c=%zu k=%d", label, p, nn, c, k);
    for (int x = 0; x < nn; x++)
        xchg_node_gather_chunks(lay, x, &chunk_at[(size_t)x * (nn + 1)]);
    /* every rank writes its slice at its own node's chunk 0 */
    for (int r = 0; r < p; r++)
        for (size_t i = 0; i < c; i++)
            buf[(size_t)lay->node_of[r] * cells + (size_t)lay->local[r] * c + i] =
                (uint32_t)((size_t)r * c + i + 1);
    /* ceil(log_{k+1} N) rounds: (k + 1)^(rounds - 1) < N <= (k + 1)^rounds */
    for (int s = 0; s + 1 < rounds; s++)
        reach *= k + 1;
    CHECK(rounds == 0 ? nn <= 1 : reach < nn && reach * (k + 1) >= nn, "%s: %d rounds", what,
          rounds);
    for (int s = 0; s < rounds; s++) {
        memcpy(next, buf, (size_t)nn * cells * sizeof *buf);
        for (int x = 0; x < nn; x++) {
            const size_t *mine = &chunk_at[(size_t)x * (nn + 1)];
            int n = xchg_node_gather_round(nn, ports, x, s, msgs);
            sent[x] += n;
            CHECK(n >= 1 && n <= k, "%s: round %d: node %d has %d messages", what, s, x, n);
            for (int j = 0; j < n; j++) {
                int from = msgs[j].from, first = msgs[j].first, count = msgs[j].count, seen = 0;
                const size_t *theirs = &chunk_at[(size_t)from * (nn + 1)];
                size_t bytes = (theirs[count] - theirs[0]) * c;
                /* the sender sees the same message from its side */
                int m = xchg_node_gather_round(nn, ports, from, s, back);
                for (int i = 0; i < m; i++)
                    seen += back[i].to == x && back[i].count == count && back[i].first == first;
                CHECK(seen == 1, "%s: round %d: %d receives from %d, which does not send it that",
                      what, s, x, from);
                forwarded[from] += count - 1; /* the sender's chunks after its own */
                CHECK((mine[first + count] - mine[first]) * c == bytes,
                      "%s: round %d: %d expects %zu bytes from %d, which sends %zu", what, s, x,
                      (mine[first + count] - mine[first]) * c, from, bytes);
                for (size_t i = 0; i < bytes && mine[first] * c + i < cells; i++) {
                    uint32_t cell = buf[(size_t)from * cells + i];
                    CHECK(cell != 0, "%s: round %d: %d sends a byte it does not have", what, s,
                          from);
                    CHECK(next[(size_t)x * cells + mine[first] * c + i] == 0,
                          "%s: round %d: %d receives a byte twice", what, s, x);
                    next[(size_t)x * cells + mine[first] * c + i] = cell;
                }
            }
        }
        memcpy(buf, next, (size_t)nn * cells * sizeof *buf);
    }
    for (int d = 0; d < p; d++) {
        int x = lay->node_of[d];
        const size_t *mine = &chunk_at[(size_t)x * (nn + 1)];
        for (int r = 0; r < p; r++) {
            int rel = (lay->node_of[r] - x + nn) % nn;
            size_t at = (mine[rel] + (size_t)lay->local[r]) * c;
            for (size_t i = 0; i < c; i++)
                CHECK(buf[(size_t)x * cells + at + i] == (uint32_t)((size_t)r * c + i + 1),
                      "%s: rank %d reads a wrong byte %zu of rank %d's block", what, d, i, r);
        }
    }
    for (int x = 0; x < nn; x++) {
        int messages = xchg_node_gather_messages(nn, ports, &expect_forwarded);
        CHECK(sent[x] == messages,
              "%s: node %d sent %d messages, xchg_node_gather_messages says %d", what, x, sent[x],
              messages);
        CHECK(forwarded[x] == expect_forwarded,
              "%s: node %d forwarded %ld chunks of other nodes, xchg_node_gather_messages says %ld",
              what, x, forwarded[x], expect_forwarded);
    }
    free(sent);
    free(forwarded);
    free(chunk_at);
    free(buf);
    free(next);
}

/* ... with one port, two, three, and all of them (one round) */
static void simulate_gather(const xchg_node_layout_t *lay, size_t c, const char *label)
{
    int ports[] = {1, 2, 3, lay->nnodes > 1 ? lay->nnodes - 1 : 1, 64};
    for (int i = 0; i < 5; i++)
        if (ports[i] < 64 || lay->nnodes <= 64)
            simulate_gather_ports(lay, c, ports[i], label);
}

/* ---- rounds ---- */

/* Every pair of nodes meets in exactly one round, partners are mutual, xchg_node_round_of says
 * where; N odd: every node sits out one round, N even: none. */
static void check_rounds(const xchg_node_layout_t *lay, const char *label)
{
    int nn = lay->nnodes, rounds = xchg_node_rounds(nn);
    unsigned char *met = calloc((size_t)nn * nn, 1);
    long idle = 0, bad = 0, twice = 0, wrong_round = 0;

    CHECK(rounds == (nn <= 1  ? 0
                     : nn % 2 ? nn
                              : nn - 1),
          "%s: %d rounds for %d nodes", label, rounds, nn);
    for (int f = 0; f < rounds; f++)
        for (int x = 0; x < nn; x++) {
            int y = xchg_node_partner(lay, x, f);
            if (y == x) {
                idle++;
                continue;
            }
            bad += xchg_node_partner(lay, y, f) != x;
            twice += met[(size_t)x * nn + y]++ > 0;
            wrong_round += xchg_node_round_of(lay, x, y) != f;
        }
    CHECK(bad == 0 && twice == 0 && wrong_round == 0,
          "%s: %ld partners not mutual, %ld pairs met twice, %ld round_of wrong", label, bad, twice,
          wrong_round);
    for (int x = 0; x < nn; x++)
        for (int y = 0; y < nn; y++)
            CHECK(x == y || met[(size_t)x * nn + y] == 1, "%s: nodes %d and %d never meet", label,
                  x, y);
    CHECK(idle == (nn > 1 && nn % 2 ? nn : 0), "%s: %ld idle places", label, idle);
    free(met);
}

/* ---- one layout, every variant ---- */

static xchg_node_layout_t *new_layout(int p, int nn, const int *node_of)
{
    xchg_node_layout_t *lay = malloc(sizeof *lay);
    void *ws = malloc(xchg_node_workspace_bytes(p, nn));
    CHECK(xchg_node_init(lay, p, nn, node_of, ws) == 0, "init p=%d nodes=%d", p, nn);
    return lay;
}

static void free_layout(xchg_node_layout_t *lay)
{
    free(lay->first);
    free(lay);
}

static void check_layout(int nn, const int *sizes, int how, int full, const char *label)
{
    static int node_of[MAX_P];
    int p = make_layout(nn, sizes, how, node_of);
    xchg_node_layout_t *lay = new_layout(p, nn, node_of);

    check_rounds(lay, label);
    simulate(lay, 0, EVEN, 2, 1, 64, 8, 0, label);
    simulate(lay, 1, SKEWED, 3, 2, 64, 4, 1, label);
    if (full) {
        simulate(lay, 0, EVEN, 3, 3, 128, 16, 0, label);
        simulate(lay, 1, SPARSE, 1, 1, 64, 4, 0, label);
        simulate(lay, 1, EVEN, 2, 4, 64, 4, 1, label);
        simulate_gather(lay, 2, label);
    } else {
        simulate_gather(lay, 1, label);
    }
    free_layout(lay);
}

/* Every multiset of nn sizes from lo to 6 (nondecreasing). */
static int all_multisets(int nn, int at, int *sizes)
{
    int count = 0;
    if (at == nn) {
        int reversed[8];
        check_layout(nn, sizes, CONSECUTIVE, nn <= 4, "multiset");
        if (nn <= 6) {
            for (int x = 0; x < nn; x++)
                reversed[x] = sizes[nn - 1 - x];
            check_layout(nn, reversed, ROUND_ROBIN, 0, "multiset reversed, dealt");
            check_layout(nn, sizes, RANDOM, 0, "multiset at random");
        }
        return 1;
    }
    for (int s = at ? sizes[at - 1] : 1; s <= 6; s++) {
        sizes[at] = s;
        count += all_multisets(nn, at + 1, sizes);
    }
    return count;
}

/* ---- p = 4096 ---- */

/* The blocks of every stream of alltoall tile it: each place taken once, the length exact. */
static void check_alltoall_places(const xchg_node_layout_t *lay, size_t b, const char *label)
{
    long bad = 0;
    for (int x = 0; x < lay->nnodes; x++)
        for (int y = 0; y < lay->nnodes; y++) {
            size_t len = xchg_node_stream_len(lay, x, y, b), nblocks = len / b;
            unsigned char *seen = calloc(nblocks + 1, 1);
            for (int i = lay->first[x]; i < lay->first[x + 1]; i++)
                for (int k = lay->first[y]; k < lay->first[y + 1]; k++) {
                    int src = lay->members[i], dst = lay->members[k];
                    size_t at = xchg_node_block_at(lay, src, dst, b);
                    if (src == dst)
                        continue;
                    if (at % b != 0 || at / b >= nblocks || seen[at / b]++)
                        bad++;
                }
            for (size_t i = 0; i < nblocks; i++)
                bad += seen[i] != 1;
            free(seen);
        }
    CHECK(bad == 0, "%s: %ld alltoall places overlap, leave gaps or leave their stream", label,
          bad);
}

/* alltoallv: the sender's place of each block of a few sender nodes equals its receiver's,
 * and their streams' lengths the receivers'. */
static void check_alltoallv_places(const xchg_node_layout_t *lay, int kind, const char *label)
{
    int p = lay->nranks, nn = lay->nnodes, senders[3] = {0, nn / 2, nn - 1};
    sim_t s = {.lay = lay, .p = p, .nnodes = nn, .v = 1, .kind = kind, .b = 5};
    size_t *send_at[3], *lens[3], *recv_at = malloc((size_t)p * sizeof(size_t));
    size_t *in_len = malloc((size_t)nn * sizeof(size_t)), *recvbytes = malloc((size_t)p * 8);
    long bad_place = 0, bad_len = 0;

    s.size = malloc((size_t)p * p * sizeof *s.size);
    for (int i = 0; i < p; i++)
        for (int j = 0; j < p; j++)
            s.size[(size_t)i * p + j] = block_size(kind, s.b, i, j);
    for (int k = 0; k < 3; k++) {
        int x = senders[k], n = xchg_node_size(lay, x);
        xchg_node_headers_t h;
        char *hdrs = make_headers(&s, x, &h);
        send_at[k] = malloc((size_t)n * p * sizeof(size_t));
        lens[k] = malloc((size_t)nn * sizeof(size_t));
        for (int l = 0; l < n; l++)
            xchg_node_v_send_layout(lay, &h, x, l, &send_at[k][(size_t)l * p], lens[k]);
        free(hdrs);
    }
    for (int y = 0; y < nn; y++) {
        xchg_node_headers_t h;
        char *hdrs = make_headers(&s, y, &h);
        for (int l = 0; l < xchg_node_size(lay, y); l++) {
            int d = lay->members[lay->first[y] + l];
            for (int j = 0; j < p; j++)
                recvbytes[j] = s.size[(size_t)j * p + d];
            xchg_node_v_recv_layout(lay, &h, y, l, recvbytes, recv_at, in_len);
            for (int k = 0; k < 3; k++) {
                int x = senders[k];
                if (k > 0 && senders[k] == senders[k - 1])
                    continue;
                for (int i = 0; i < xchg_node_size(lay, x); i++) {
                    int src = lay->members[lay->first[x] + i];
                    if (src != d && send_at[k][(size_t)i * p + d] != recv_at[src])
                        bad_place++;
                }
                if (x != y && lens[k][y] != in_len[x])
                    bad_len++;
            }
        }
        free(hdrs);
    }
    CHECK(bad_place == 0 && bad_len == 0,
          "%s: %ld alltoallv places and %ld message lengths differ between the ends", label,
          bad_place, bad_len);
    for (int k = 0; k < 3; k++) {
        free(send_at[k]);
        free(lens[k]);
    }
    free(s.size);
    free(recv_at);
    free(in_len);
    free(recvbytes);
}

/* The steps' twins and the clocked run of alltoall's pieces (no bytes: see the top). */
static void check_steps_large(const xchg_node_layout_t *lay, size_t b, int leaders, size_t window,
                              size_t split_min, const char *label)
{
    int nn = lay->nnodes;
    sim_t s = {.lay = lay, .p = lay->nranks, .nnodes = nn, .b = b};
    size_t most = 0;
    char what[160];

    snprintf(what, sizeof what, "%s p=%d nodes=%d leaders=%d window=%zu", label, lay->nranks, nn,
             leaders, window);
    s.cfg = (xchg_node_cfg_t){leaders, window, split_min, 0, 1};
    s.stream_len = malloc((size_t)nn * nn * sizeof(size_t));
    s.in_len = malloc((size_t)nn * nn * sizeof(size_t));
    s.passes = calloc((size_t)nn, sizeof(size_t));
    for (int x = 0; x < nn; x++)
        for (int y = 0; y < nn; y++) {
            s.stream_len[(size_t)x * nn + y] = xchg_node_stream_len(lay, x, y, b);
            s.in_len[(size_t)x * nn + y] = xchg_node_stream_len(lay, y, x, b);
            size_t t = xchg_node_passes(s.stream_len[(size_t)x * nn + y], window);
            s.passes[x] = t > s.passes[x] ? t : s.passes[x];
        }
    for (int x = 0; x < nn; x++)
        most = s.passes[x] > most ? s.passes[x] : most;
    for (size_t t = 0; t < most; t++)
        for (int x = 0; x < nn; x++)
            for (int y = x + 1; y < nn; y++)
                sim_pair(&s, x, y, t, what);
    clocked_run(&s, what);
    free(s.stream_len);
    free(s.in_len);
    free(s.passes);
}

static void check_large(int seed)
{
    static int sizes[MAX_NODES], node_of[MAX_P];
    int nn = 0, p = 0;
    xchg_node_layout_t *lay;
    char label[64];

    rng = (unsigned long)seed;
    while (p < MAX_P) {
        int n = 1 + rnd(64);
        n = n > MAX_P - p ? MAX_P - p : n;
        sizes[nn++] = n;
        p += n;
    }
    make_layout(nn, sizes, RANDOM, node_of);
    snprintf(label, sizeof label, "p=4096 seed %d", seed);
    lay = new_layout(p, nn, node_of);
    check_rounds(lay, label);
    check_alltoall_places(lay, 3, label);
    check_alltoallv_places(lay, SKEWED, label);
    check_steps_large(lay, 8, 1, 4096, XCHG_NODE_SPLIT_MIN, label);
    check_steps_large(lay, 64, 3, 2048, 256, label);
    simulate_gather(lay, 1, label);
    free_layout(lay);
}

/* ---- exact expectations ---- */

/* Nodes of 3, 2, 2, 1 ranks (ids 0 .. 3): node order 3, 1, 2, 0; N even, so 3 rounds in which
 * the largest node meets 3, 2 and 1 (positions 0 and 3 first, as position 0 is its own partner
 * in factor 0 of the first three). */
static void golden_3221(void)
{
    int sizes[4] = {3, 2, 2, 1}, node_of[8], expect[3] = {3, 2, 1};
    int p = make_layout(4, sizes, CONSECUTIVE, node_of);
    xchg_node_layout_t *lay = new_layout(p, 4, node_of);
    xchg_node_cfg_t cfg = {1, 64, 8, 0, 1};
    xchg_node_step_t st[8];
    int n;

    CHECK(lay->order[0] == 3 && lay->order[1] == 1 && lay->order[2] == 2 && lay->order[3] == 0,
          "3,2,2,1: node order %d %d %d %d", lay->order[0], lay->order[1], lay->order[2],
          lay->order[3]);
    for (int f = 0; f < 3; f++)
        CHECK(xchg_node_partner(lay, 0, f) == expect[f], "3,2,2,1: round %d pairs node 0 with %d",
              f, xchg_node_partner(lay, 0, f));
    CHECK(xchg_node_partner(lay, 1, 0) == 2, "3,2,2,1: round 0 pairs nodes 1 and 2");
    /* node 0's message to node 1 is 3 x 2 blocks: of 10 bytes, 60 in one window of 64 */
    CHECK(xchg_node_stream_len(lay, 0, 1, 10) == 60 && xchg_node_stream_len(lay, 0, 0, 10) == 60,
          "3,2,2,1: stream lengths");
    n = xchg_node_steps(lay, &cfg, 0, 1, 2, 0, 60, 60, st);
    CHECK(n == 1 && st[0].send_bytes == 60 && st[0].recv_bytes == 60 && st[0].leader == 0,
          "3,2,2,1: one step of 60 bytes each way (%d steps)", n);
    /* 3 leaders, parts of at least 8 bytes: node 0 and node 1 (2 leaders) cut 60 into 2 */
    cfg.leaders = 3;
    n = xchg_node_steps(lay, &cfg, 0, 1, 2, 0, 60, 20, st);
    CHECK(n == 2 && st[0].send_off == 0 && st[0].send_bytes == 30 && st[1].send_off == 30 &&
              st[1].send_bytes == 30 && st[0].leader == 2 && st[1].leader == 0 &&
              st[0].peer_leader == 0 && st[1].peer_leader == 1 && st[0].recv_bytes == 10 &&
              st[1].recv_bytes == 10,
          "3,2,2,1: 3 leaders: two parts each way, leaders (2, 0) and (0, 1)");
    /* the block of rank 1 (node 0, l = 1) for rank 4 (node 1, l = 1) in the message of node 0
     * to node 1: after receiver 3's three blocks, at 3 + 1 blocks */
    CHECK(xchg_node_block_at(lay, 1, 4, 10) == 40, "3,2,2,1: block 1 -> 4 at %zu",
          xchg_node_block_at(lay, 1, 4, 10));
    CHECK(xchg_node_block_at(lay, 2, 1, 10) == 30, "3,2,2,1: local block 2 -> 1 at %zu",
          xchg_node_block_at(lay, 2, 1, 10));
    free_layout(lay);
}

static void check_windows(void)
{
    xchg_node_windows_t w;
    CHECK(xchg_node_windows(65536, 4, 0, SIZE_MAX, &w) == 0 && w.stride == 9344 &&
              w.window == 9280 && w.header == 0,
          "windows of 64 KiB for 4 nodes: stride %zu window %zu", w.stride, w.window);
    CHECK(xchg_node_windows(65536, 4, 640, 100, &w) == 0 && w.stride == 192 && w.window == 128 &&
              xchg_node_window_at(&w, 2) == 640 + 384,
          "windows capped at 100 bytes: stride %zu window %zu", w.stride, w.window);
    CHECK(xchg_node_windows(7 * 127, 4, 0, SIZE_MAX, &w) != 0, "7 windows of 127 bytes fit");
    CHECK(xchg_node_windows(7 * 128, 4, 0, SIZE_MAX, &w) == 0 && w.window == 64,
          "7 windows of 128 bytes do not fit");
    CHECK(xchg_node_half_for(4, 640, 100) == 640 + 7 * 192, "half for 100-byte windows: %zu",
          xchg_node_half_for(4, 640, 100));
    CHECK(xchg_node_windows(xchg_node_half_for(9, 64, 1000), 9, 64, 1000, &w) == 0 &&
              w.window >= 1000,
          "the half for 1000-byte windows holds them");
    CHECK(xchg_node_passes(0, 64) == 0 && xchg_node_passes(64, 64) == 1 &&
              xchg_node_passes(65, 64) == 2 && xchg_node_piece(65, 64, 1) == 1 &&
              xchg_node_piece(65, 64, 2) == 0,
          "passes and pieces");
}

static void bad_layouts(void)
{
    int node_of[4] = {0, 2, 2, 0}, ws[64];
    xchg_node_layout_t lay;
    CHECK(xchg_node_init(&lay, 4, 3, node_of, ws) != 0, "a node without ranks is refused");
    node_of[1] = 3;
    CHECK(xchg_node_init(&lay, 4, 3, node_of, ws) != 0, "a node id out of range is refused");
    CHECK(xchg_node_init(&lay, 0, 1, node_of, ws) != 0, "no ranks is refused");
}

/* ---- what runs (xchg_node_as_run) ---- */

/* A call of blocks of b bytes between every two ranks (alltoallv: its agreed maxima). */
static xchg_call_t even_call(int coll, int p, const xchg_topo_t *topo, size_t b)
{
    return (xchg_call_t){.coll = coll,
                         .comm_size = p,
                         .topo = topo,
                         .block_bytes = b,
                         .max_send_bytes = b * (size_t)p,
                         .max_recv_bytes = b * (size_t)p,
                         .max_block_bytes = b};
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 1099511628211ull;
}

/* A node's ranks' messages between nodes as algos/node.c runs them (leader_pass, batches of
 * xchg_node_batch), for MPI_Alltoall of b bytes (alltoallv with even counts and
 * the statistics carried: the same streams), hashed: which rank sends what to which rank and
 * receives what in which pass, and where each batch ends. */
static uint64_t run_signature(const xchg_node_layout_t *lay, size_t b, size_t window, int carry,
                              int leaders, int ports)
{
    xchg_node_cfg_t cfg = {leaders, window, XCHG_NODE_SPLIT_MIN, carry, ports};
    xchg_node_step_t steps[64];
    int nn = lay->nnodes, rounds = xchg_node_rounds(nn), batch = xchg_node_batch(lay, &cfg);
    uint64_t h = 1469598103934665603ull;

    for (int x = 0; x < nn; x++) {
        size_t passes = carry ? 1 : 0;
        for (int y = 0; y < nn; y++) {
            size_t out = xchg_node_passes(xchg_node_stream_len(lay, x, y, b), window);
            size_t in = y == x ? 0 : xchg_node_passes(xchg_node_stream_len(lay, y, x, b), window);
            passes = out > passes ? out : passes;
            passes = in > passes ? in : passes;
        }
        for (int me = 0; me < xchg_node_size(lay, x); me++)
            for (size_t t = 0; t < passes; t++) {
                int held = 0, send_as = me < xchg_node_leaders(lay, x, leaders) ? me : -1;
                int recv_as = xchg_node_receives_for(lay, x, leaders, me);
                for (int f = 0; f < rounds; f++) {
                    int y = xchg_node_partner(lay, x, f), n;
                    if (y == x)
                        continue;
                    n = xchg_node_steps(lay, &cfg, x, y, f, t, xchg_node_stream_len(lay, x, y, b),
                                        xchg_node_stream_len(lay, y, x, b), steps);
                    for (int q = 0; q < n; q++) {
                        const xchg_node_step_t *st = &steps[q];
                        int sends = st->leader == send_as && st->send;
                        int recvs = st->leader == recv_as && st->recv;
                        if (st->leader != send_as && st->leader != recv_as)
                            continue;
                        h = mix(mix(mix(mix(h, (uint64_t)x), (uint64_t)me), t), (uint64_t)y);
                        h = mix(mix(h, (uint64_t)st->peer_leader), (uint64_t)sends);
                        if (sends)
                            h = mix(
                                mix(mix(h, (uint64_t)xchg_node_receiver(lay, y, st->peer_leader)),
                                    st->send_off),
                                st->send_bytes);
                        h = mix(h, (uint64_t)recvs);
                        if (recvs)
                            h = mix(mix(h, st->recv_off), st->recv_bytes);
                        if (++held == batch) {
                            h = mix(h, 0xba7c4ull);
                            held = 0;
                        }
                    }
                }
                if (held > 0)
                    h = mix(h, 0xba7c4ull);
            }
    }
    return h;
}

/* For every leaders 1 .. 7 and k 1 .. 8 of a call: where two make the same params as they run
 * (xchg_node_as_run), they send the same messages in the same batches. Counts the pairs merged
 * and the pairs kept apart that do differ. */
static void check_as_run_call(const xchg_node_layout_t *lay, int coll, size_t b, size_t limit,
                              long *merged, long *apart, const char *label)
{
    enum { MAXL = 7, MAXK = 8 };
    xchg_topo_t topo = {.nnodes = lay->nnodes,
                        .max_node_ranks = lay->max_size,
                        .min_node_ranks = lay->max_size,
                        .node_shm_bytes = limit};
    int p = lay->nranks, v = coll == XCHG_ALLTOALLV;
    xchg_call_t call = even_call(coll, p, &topo, b);
    xchg_node_windows_t w;
    xchg_params_t as[MAXL * MAXK];
    uint64_t sig[MAXL * MAXK];

    for (int x = 0; x < lay->nnodes; x++)
        if (xchg_node_size(lay, x) < topo.min_node_ranks)
            topo.min_node_ranks = xchg_node_size(lay, x);
    /* the windows as the algorithms take them at the limit: alltoallv's headers go in a pass
     * of their own (alltoallv_node.c), so its windows are the larger of the model's two */
    if (xchg_node_windows(limit, lay->nnodes, 0, SIZE_MAX, &w) != 0 ||
        (size_t)lay->max_size * lay->max_size * b / w.window > 64)
        return; /* up to 64 passes: the turns the leaders rotate over */
    for (int l = 1; l <= MAXL; l++)
        for (int k = 1; k <= MAXK; k++) {
            int i = (l - 1) * MAXK + k - 1;
            as[i] = (xchg_params_t){.leaders = l, .nports = k};
            xchg_node_as_run(&call, &as[i]);
            sig[i] = run_signature(lay, b, w.window, v, l, k);
        }
    for (int i = 0; i < MAXL * MAXK; i++)
        for (int j = i + 1; j < MAXL * MAXK; j++) {
            int same = as[i].leaders == as[j].leaders && as[i].nports == as[j].nports;
            if (same) {
                CHECK(sig[i] == sig[j],
                      "%s: %s of %zu B, limit %zu: leaders=%d,k=%d and leaders=%d,k=%d run as "
                      "leaders=%d,k=%d but send different messages",
                      label, v ? "alltoallv" : "alltoall", b, limit, i / MAXK + 1, i % MAXK + 1,
                      j / MAXK + 1, j % MAXK + 1, as[i].leaders, as[i].nports);
                (*merged)++;
            } else {
                *apart += sig[i] != sig[j];
            }
        }
}

static void check_as_run(void)
{
    static const size_t blocks[] = {1, 256, 4096, 65536, 300000};
    /* 393,600 bytes: between two nodes, windows just above twice split_min without the
     * alltoallv headers and just below with them */
    static const size_t limits[] = {(size_t)1 << 14, 393600, (size_t)1 << 20, (size_t)8 << 20};
    int sizes[6], node_of[64];
    long merged = 0, apart = 0;

    for (int trial = 0; trial < 60; trial++) {
        int nn = 1 + rnd(6), p;
        xchg_node_layout_t *lay;
        for (int x = 0; x < nn; x++)
            sizes[x] = 1 + rnd(6);
        p = make_layout(nn, sizes, trial % 3 == 0 ? CONSECUTIVE : RANDOM, node_of);
        lay = new_layout(p, nn, node_of);
        for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
            for (size_t j = 0; j < sizeof limits / sizeof limits[0]; j++) {
                check_as_run_call(lay, XCHG_ALLTOALL, blocks[i], limits[j], &merged, &apart,
                                  "as run");
                check_as_run_call(lay, XCHG_ALLTOALLV, blocks[i], limits[j], &merged, &apart,
                                  "as run");
            }
        free_layout(lay);
    }
    CHECK(merged > 0 && apart > 0, "as run: %ld pairs merged, %ld kept apart that differ", merged,
          apart);
    {
        /* allgather: the ports the code runs, min(k, N - 1); one node: 1 */
        xchg_topo_t topo = {
            .nnodes = 4, .min_node_ranks = 1, .max_node_ranks = 3, .node_shm_bytes = 1 << 20};
        xchg_call_t call = {
            .coll = XCHG_ALLGATHER, .comm_size = 8, .topo = &topo, .block_bytes = 1};
        xchg_params_t k2 = {.nports = 2}, k3 = {.nports = 3}, k9 = {.nports = 9};
        xchg_node_as_run(&call, &k2);
        xchg_node_as_run(&call, &k3);
        xchg_node_as_run(&call, &k9);
        CHECK(k2.nports == 2 && k3.nports == 3 && k9.nports == 3,
              "allgather at 4 nodes: k=2, 3, 9 run as %d, %d, %d (expected 2, 3, 3)", k2.nports,
              k3.nports, k9.nports);
        topo.nnodes = 1;
        xchg_node_as_run(&call, &k9);
        CHECK(k9.nports == 1, "allgather on one node: k runs as %d, expected 1", k9.nports);
    }
}

/* ---- the cost model (tuning/cost_node.c) ---- */

static int cost_ports = 1;  /* the k node_cost gives (0: the model's) */
static int cost_ports_back; /* the k it came back with */

static double node_cost(int coll, int p, int nnodes, int lo, int hi, size_t b, size_t limit,
                        const xchg_machine_t *m, int leaders, int *chosen)
{
    xchg_topo_t topo = {
        .nnodes = nnodes, .min_node_ranks = lo, .max_node_ranks = hi, .node_shm_bytes = limit};
    xchg_call_t call = even_call(coll, p, &topo, b);
    xchg_params_t params = {.leaders = leaders, .nports = cost_ports};
    double t = xchg_cost_node(&call, m, &params);
    if (chosen)
        *chosen = params.leaders;
    cost_ports_back = params.nports;
    return t;
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-15;
}

static void check_cost(void)
{
    xchg_machine_t starts = {.beta_inter = 1}, bytes = {.tau_inter = 1, .inject = 1};
    xchg_machine_t inside = {.beta = 1, .beta_inter = 1e-12}, copies = {.rho = 1};
    int chosen;

    /* no shared memory, one rank */
    CHECK(isinf(node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 8, 0, &starts, 0, NULL)),
          "node without shared memory is not INFINITY");
    CHECK(node_cost(XCHG_ALLTOALL, 1, 1, 1, 1, 8, 1 << 20, &copies, 0, &chosen) == 8 && chosen == 1,
          "p = 1: the copy of 8 bytes at rho 1, leaders 1");
    /* start-ups between nodes: the busiest leader's steps, ceil((N - 1) / L_x), the one-rank
     * node of 3,2,2,1 running its 3 alone whatever L */
    CHECK(node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 8, 1 << 20, &starts, 1, NULL) == 3,
          "3,2,2,1, one leader: 3 steps");
    CHECK(node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 8, 1 << 20, &starts, 3, NULL) == 3,
          "3,2,2,1, 3 leaders: the one-rank node's 3 steps");
    CHECK(node_cost(XCHG_ALLTOALL, 8, 4, 2, 2, 8, 1 << 20, &starts, 2, NULL) == 2,
          "2,2,2,2, 2 leaders: ceil(3 / 2) steps");
    CHECK(node_cost(XCHG_ALLTOALL, 15, 5, 3, 3, 8, 1 << 20, &starts, 0, &chosen) == 2 &&
              chosen == 2,
          "5 nodes of 3, leaders from the model: 2 (ceil(4 / 2) steps; 3 leaders no fewer)");
    CHECK(node_cost(XCHG_ALLGATHER, 8, 4, 1, 3, 8, 1 << 20, &starts, 0, NULL) == 2,
          "allgather over 4 nodes: 2 circulant rounds");
    /* bytes through the busiest link, inject 1: max(3 x 5, 1 x 7) blocks */
    CHECK(near(node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 100, 1 << 20, &bytes, 1, NULL), 1500),
          "3,2,2,1: node 0's link carries 15 blocks of 100 bytes (%g)",
          node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 100, 1 << 20, &bytes, 1, NULL));
    /* allgather, the busier way through a link: k=1 over 3,2,2,1 (two nodes of 3, two of 1 to
     * the model): a 3-rank node sends its 3 blocks in both of its messages and forwards one
     * chunk of the others' average (5/3 blocks), 7.67 blocks, more than the 7 that a one-rank
     * node receives; k=3, one round: its 3 blocks to each of 3 nodes */
    CHECK(near(node_cost(XCHG_ALLGATHER, 8, 4, 1, 3, 100, 1 << 20, &bytes, 0, NULL),
               100.0 * (2 * 3 + 5.0 / 3)),
          "allgather, k=1: a 3-rank node sends 7.67 blocks (%g)",
          node_cost(XCHG_ALLGATHER, 8, 4, 1, 3, 100, 1 << 20, &bytes, 0, NULL));
    cost_ports = 3;
    CHECK(near(node_cost(XCHG_ALLGATHER, 8, 4, 1, 3, 100, 1 << 20, &bytes, 0, NULL), 900),
          "allgather, k=3: a 3-rank node sends its 3 blocks 3 times");
    /* equal nodes: out equals in whatever k */
    CHECK(near(node_cost(XCHG_ALLGATHER, 8, 4, 2, 2, 100, 1 << 20, &bytes, 0, NULL), 600),
          "allgather over 2,2,2,2, k=3: 6 blocks each way");
    cost_ports = 1;
    CHECK(near(node_cost(XCHG_ALLGATHER, 8, 4, 2, 2, 100, 1 << 20, &bytes, 0, NULL), 600),
          "allgather over 2,2,2,2, k=1: 6 blocks each way");
    /* unlimited injection: 3 leaders carry node 0's 15 blocks at once */
    bytes.inject = 0;
    CHECK(near(node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 100, 1 << 20, &bytes, 3, NULL), 700),
          "3,2,2,1, no injection limit, 3 leaders: the one-rank node's 7 blocks alone (%g)",
          node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 100, 1 << 20, &bytes, 3, NULL));
    /* inside: two synchronisations a pass between nodes, one on one node; passes of the
     * windows: 3,2,2,1 at 64 KiB halves has windows of 9280 bytes, its longest stream 9 blocks */
    CHECK(node_cost(XCHG_ALLTOALL, 4, 1, 4, 4, 8, 1 << 20, &inside, 0, NULL) == 1,
          "one node: one synchronisation");
    CHECK(fabs(node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 1000, 65536, &inside, 1, NULL) - 2) < 1e-9,
          "3,2,2,1, 9000 bytes in windows of 9280: one pass, two synchronisations");
    CHECK(fabs(node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 2000, 65536, &inside, 1, NULL) - 4) < 1e-9,
          "3,2,2,1, 18000 bytes in windows of 9280: two passes");
    CHECK(fabs(node_cost(XCHG_ALLTOALLV, 8, 4, 1, 3, 100, 65536, &inside, 1, NULL) - 3) < 1e-9,
          "alltoallv: one more synchronisation for the headers");
    /* copies: 2 (p - 1) + 1 blocks per rank */
    CHECK(node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 10, 1 << 20, &copies, 1, NULL) == 150,
          "copies of 15 blocks of 10 bytes");
    /* a given leaders comes back as given */
    node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 8, 1 << 20, &starts, 5, &chosen);
    CHECK(chosen == 5, "leaders=5 given, %d back", chosen);
    /* ports: a leader's steps k at a time, ceil(ceil(S / L_x) / k) start-ups; the bytes and
     * the gaps as one at a time. Left to the model: all at once where start-ups decide, one at
     * a time where they are a small part */
    cost_ports = 2;
    CHECK(node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 8, 1 << 20, &starts, 1, NULL) == 2,
          "3,2,2,1, one leader, k=2: ceil(3 / 2) start-ups");
    cost_ports = 3;
    CHECK(near(node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 100, 1 << 20, &bytes, 3, NULL), 700),
          "3,2,2,1, k=3: the bytes as with one at a time");
    cost_ports = 0;
    CHECK(node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 8, 1 << 20, &starts, 1, NULL) == 1 &&
              cost_ports_back == 3,
          "3,2,2,1, k from the model where start-ups decide: all 3 at once (k=%d)",
          cost_ports_back);
    CHECK(node_cost(XCHG_ALLTOALLV, 8, 4, 1, 3, 8, 1 << 20, &starts, 1, NULL) == 1 &&
              cost_ports_back == 3,
          "alltoallv: the same (k=%d)", cost_ports_back);
    CHECK(node_cost(XCHG_ALLGATHER, 8, 4, 1, 3, 8, 1 << 20, &starts, 0, NULL) == 1 &&
              cost_ports_back == 3,
          "allgather over 4 nodes, k from the model: one round of 3 messages (k=%d)",
          cost_ports_back);
    cost_ports = 2;
    CHECK(node_cost(XCHG_ALLGATHER, 9, 9, 1, 1, 8, 1 << 20, &starts, 0, NULL) == 2,
          "allgather over 9 nodes, k=2: 2 rounds (3 nodes' chunks, then 9)");
    cost_ports = 0;
    {
        xchg_machine_t mostly_bytes = {.beta_inter = 1, .tau_inter = 1, .inject = 1};
        node_cost(XCHG_ALLTOALL, 8, 4, 1, 3, 100, 1 << 20, &mostly_bytes, 1, NULL);
        CHECK(cost_ports_back == 1, "bytes decide (1500 against 3 start-ups): k=1, not %d",
              cost_ports_back);
        /* allgather over 4,1,1,1,1 where bytes decide: one round sends the 4-rank node's blocks
         * to each of the 4 others (16 blocks out), k=1 13 (its own in 3 messages, one forwarded
         * chunk of 1 block) */
        node_cost(XCHG_ALLGATHER, 8, 5, 1, 4, 100, 1 << 20, &mostly_bytes, 0, NULL);
        CHECK(cost_ports_back == 1, "allgather over 4,1,1,1,1, bytes decide: k=1, not %d",
              cost_ports_back);
        cost_ports = 4;
        CHECK(near(node_cost(XCHG_ALLGATHER, 8, 5, 1, 4, 100, 1 << 20, &bytes, 0, NULL), 1600),
              "allgather over 4,1,1,1,1, k=4: 16 blocks out of the 4-rank node");
        cost_ports = 1;
        CHECK(near(node_cost(XCHG_ALLGATHER, 8, 5, 1, 4, 100, 1 << 20, &bytes, 0, NULL), 1300),
              "allgather over 4,1,1,1,1, k=1: 13 blocks out of the 4-rank node");
        cost_ports = 0;
    }
    cost_ports = 1;
}

int main(void)
{
    int sizes[MAX_NODES], node_of[MAX_P], count = 0;

    check_windows();
    bad_layouts();
    golden_3221();
    check_cost();
    check_as_run();
    for (int nn = 1; nn <= 8; nn++)
        count += all_multisets(nn, 0, sizes);
    CHECK(count == 3002, "%d multisets of 1 to 8 sizes in 1..6, expected 3002", count);
    for (int i = 0; i < 12; i++) {
        int nn = 1 + rnd(64), p = 0;
        for (int x = 0; x < nn; x++) {
            sizes[x] = 1 + rnd(i < 6 ? 8 : 16);
            p += sizes[x];
        }
        if (p > 512)
            continue;
        make_layout(nn, sizes, RANDOM, node_of);
        check_layout(nn, sizes, RANDOM, 1, "random");
    }
    for (int n = 1; n <= 12; n++)
        check_layout(1, &n, CONSECUTIVE, 1, "one node");
    for (int nn = 2; nn <= 24; nn += 3) {
        for (int x = 0; x < nn; x++)
            sizes[x] = 1;
        check_layout(nn, sizes, RANDOM, 1, "one-rank nodes");
    }
    check_large(1);
    check_large(7);
    CHECK(seen_split > 0 && seen_later_pass > 0 && seen_stats > 0,
          "the layouts never split a piece (%ld), ran a second pass (%ld) or carried (%ld)",
          seen_split, seen_later_pass, seen_stats);
    CHECK(seen_one_pair > 0 && seen_two_pairs > seen_one_pair,
          "steps both ways between one pair of ranks %ld, between two pairs %ld", seen_one_pair,
          seen_two_pairs);
    return unit_finish("test_sched_node");
}

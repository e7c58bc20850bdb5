/*
 * test_sched_circulant.c: the circulant concatenation schedule (algos/sched/circulant.c) and
 * its cost model (tuning/cost_circulant.c), without MPI.
 *
 * The simulator runs the schedule and an independent tracker follows every byte of every
 * block (a 64-bit mask per rank and block, so b <= 64 here): a rank only sends bytes it holds
 * before the round, no byte arrives twice, a rank sends at most k messages per round, each to
 * rank - offset, and at the end every rank holds every byte. This runs for every p <= 64 with
 * k in 1..5 and b in {1, 2, 3, 4, 5, 7, 8, 13, 64}, and for every p <= 512 with k in {1, 2, 3}
 * and b in {1, 3}. The rounds equal ceil(log_{k+1} p), the sum over rounds of the largest
 * message equals xchg_circ_c2(), and C2 equals the lower bound ceil(b (p-1) / k) wherever
 * Proposition 4.2 proves it possible; in the excluded range it is at most b - 1 above (the
 * Remark). The C2 claim alone is also checked from the plan for p < 1000, k < 10 and b up to
 * 64 KiB. Golden values: the paper's Table 1 partition, Fig. 9 (p = 5, k = 1), the
 * xchg-sched example p = 10 k = 3 b = 3, an excluded case, distinct feeders, k clamping; and
 * the cost model's exact predictions, choices and the k it returns (as it runs, <= p - 1).
 * The planning (closed-form cap, O(1) feeders) is checked area by area against the reference
 * partition it replaced (k greedy runs per tried cap, a search of the earlier areas per
 * feeder) for every p <= 96 and k <= p + 1 and for large p (up to 3001) with k up to p - 1;
 * xchg_circ_shape against the plan's numbers; and plans at p = 65536 with k up to p - 1 for
 * a sample of receiving ranks (every byte held by its sender, arriving once, none missing).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algos/sched/circulant.h"
#include "../../tuning/cost.h"

#include "unit.h"

typedef struct tracker {
    int p, k;
    size_t b;
    uint64_t *have;     /* [rank * p + block]: bytes held, bit u = byte u */
    uint64_t *arriving; /* the same for bytes arriving in the current round */
    size_t *touched;    /* indices of arriving that are not zero */
    size_t ntouched;
    int *sent; /* [rank]: messages sent in the current round */
    int round, rounds;
    size_t largest, c2;
    char problem[256];
} tracker_t;

static void problem(tracker_t *t, const char *text)
{
    if (!t->problem[0])
        snprintf(t->problem, sizeof t->problem, "%s", text);
}

static uint64_t bits(size_t from, size_t to) /* bytes from .. to-1 of a block */
{
    uint64_t upto = to >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << to) - 1);
    return upto & ~(((uint64_t)1 << from) - 1);
}

static void on_message(void *arg, const xchg_circ_msg_t *msg)
{
    tracker_t *t = arg;
    size_t total = t->b * (size_t)t->p, pos = msg->start, left = msg->bytes;
    char text[256];

    if (msg->round != t->round || msg->dst != ((msg->src - msg->offset) % t->p + t->p) % t->p ||
        msg->offset <= 0 || msg->offset >= t->p || msg->bytes == 0 || msg->start >= total) {
        snprintf(text, sizeof text, "round %d (now %d): %d -> %d offset %d start %zu bytes %zu",
                 msg->round, t->round, msg->src, msg->dst, msg->offset, msg->start, msg->bytes);
        problem(t, text);
        return;
    }
    if (++t->sent[msg->src] > t->k) {
        snprintf(text, sizeof text, "round %d: rank %d sends more than k = %d messages", msg->round,
                 msg->src, t->k);
        problem(t, text);
    }
    if (msg->bytes > t->largest)
        t->largest = msg->bytes;
    /* the run, block by block, modulo p * b */
    size_t block = pos / t->b, row = pos % t->b;
    uint64_t *from = t->have + (size_t)msg->src * t->p, *to = t->have + (size_t)msg->dst * t->p;
    uint64_t *in = t->arriving + (size_t)msg->dst * t->p;
    while (left > 0) {
        size_t take = t->b - row < left ? t->b - row : left;
        uint64_t mask = bits(row, row + take);
        if ((from[block] & mask) != mask) {
            snprintf(text, sizeof text,
                     "round %d: rank %d sends bytes %zu..%zu of block %zu, "
                     "which it does not hold",
                     msg->round, msg->src, row, row + take - 1, block);
            problem(t, text);
        }
        if ((to[block] | in[block]) & mask) {
            snprintf(text, sizeof text,
                     "round %d: rank %d receives bytes %zu..%zu of block %zu "
                     "a second time",
                     msg->round, msg->dst, row, row + take - 1, block);
            problem(t, text);
        }
        if (!in[block])
            t->touched[t->ntouched++] = (size_t)(in + block - t->arriving);
        in[block] |= mask;
        left -= take;
        row = 0;
        block = block + 1 == (size_t)t->p ? 0 : block + 1;
    }
}

static void on_round_end(void *arg, int round)
{
    tracker_t *t = arg;
    for (size_t i = 0; i < t->ntouched; i++) {
        t->have[t->touched[i]] |= t->arriving[t->touched[i]];
        t->arriving[t->touched[i]] = 0;
    }
    t->ntouched = 0;
    memset(t->sent, 0, (size_t)t->p * sizeof *t->sent);
    t->c2 += t->largest;
    t->largest = 0;
    t->rounds++;
    t->round = round + 1;
}

/* The paper's quantities, computed here independently. */
static int effective_ports(int p, int k)
{
    return p >= 2 && k > p - 1 ? p - 1 : k;
}

static int rounds_expected(int p, int k)
{
    int d = 0;
    for (long reach = 1; reach < p; reach *= k + 1)
        d++;
    return d;
}

static int excluded(int p, int k, size_t b)
{
    long top = 1;
    while (top < p)
        top *= k + 1;
    return b >= 3 && k >= 3 && top - k < p && p < top;
}

static size_t lower_bound(int p, int k, size_t b)
{
    return p < 2 ? 0 : (b * (size_t)(p - 1) + (size_t)k - 1) / (size_t)k;
}

/* The C2 claims, from the plan alone. */
static void check_c2(int p, int k_requested, size_t b, const xchg_circ_t *plan, size_t c2)
{
    int k = effective_ports(p, k_requested);
    size_t lower = lower_bound(p, k, b);
    CHECK(xchg_circ_c2_lower(p, k_requested, b) == lower,
          "lower bound p=%d k=%d b=%zu: expected %zu got %zu", p, k, b, lower,
          xchg_circ_c2_lower(p, k_requested, b));
    CHECK(plan->excluded == excluded(p, k, b), "excluded p=%d k=%d b=%zu: expected %d got %d", p, k,
          b, excluded(p, k, b), plan->excluded);
    if (!excluded(p, k, b))
        CHECK(c2 == lower, "C2 p=%d k=%d b=%zu: %zu, the paper proves %zu", p, k, b, c2, lower);
    else
        CHECK(c2 >= lower && c2 + 1 <= lower + b,
              "C2 p=%d k=%d b=%zu (excluded range): %zu, expected %zu .. %zu", p, k, b, c2, lower,
              lower + b - 1);
}

/* The tracker's arrays, kept from one schedule to the next (they only grow). */
static tracker_t pool;
static size_t pool_cells;

static int tracker_reset(tracker_t *t, int p, int k, size_t b)
{
    size_t cells = (size_t)p * p;
    if (cells > pool_cells) {
        free(pool.have);
        free(pool.arriving);
        free(pool.touched);
        free(pool.sent);
        pool.have = malloc(cells * sizeof *pool.have);
        pool.arriving = malloc(cells * sizeof *pool.arriving);
        pool.touched = malloc(cells * sizeof *pool.touched);
        pool.sent = malloc((size_t)p * sizeof *pool.sent);
        pool_cells = pool.have && pool.arriving && pool.touched && pool.sent ? cells : 0;
        if (!pool_cells)
            return -1;
    }
    memset(t, 0, sizeof *t);
    t->p = p;
    t->k = k;
    t->b = b;
    t->have = pool.have;
    t->arriving = pool.arriving;
    t->touched = pool.touched;
    t->sent = pool.sent;
    memset(t->have, 0, cells * sizeof *t->have);
    memset(t->arriving, 0, cells * sizeof *t->arriving);
    memset(t->sent, 0, (size_t)p * sizeof *t->sent);
    return 0;
}

static void check_schedule(int p, int k, size_t b)
{
    int kk = xchg_circ_ports(p, k);
    xchg_circ_area_t *areas = malloc((size_t)kk * sizeof *areas);
    xchg_circ_t plan;
    tracker_t t;
    xchg_circ_visitor_t visitor = {on_message, on_round_end, &t};
    int rc;

    if (!areas || tracker_reset(&t, p, kk, b) != 0) {
        CHECK(0, "out of memory for p=%d", p);
        goto out;
    }
    for (int i = 0; i < p; i++)
        t.have[(size_t)i * p + i] = bits(0, b);
    xchg_circ_plan(&plan, p, k, b, areas);
    rc = xchg_circ_simulate(&plan, &visitor);
    CHECK(rc == 0, "simulate p=%d k=%d b=%zu returned %d", p, k, b, rc);
    for (size_t i = 0; i < (size_t)p * p && !t.problem[0]; i++)
        if (t.have[i] != bits(0, b)) {
            char text[128];
            snprintf(text, sizeof text, "rank %zu ends without all of block %zu", i / p, i % p);
            problem(&t, text);
        }
    CHECK(!t.problem[0], "delivery p=%d k=%d b=%zu: %s", p, k, b, t.problem);
    CHECK(kk == effective_ports(p, k) && plan.nports == kk, "ports p=%d k=%d: %d, expected %d", p,
          k, plan.nports, effective_ports(p, k));
    CHECK(t.rounds == rounds_expected(p, kk) && plan.nrounds == t.rounds,
          "C1 p=%d k=%d b=%zu: expected %d, plan %d, simulated %d", p, k, b, rounds_expected(p, kk),
          plan.nrounds, t.rounds);
    CHECK(t.c2 == xchg_circ_c2(&plan), "C2 p=%d k=%d b=%zu: simulated %zu, plan %zu", p, k, b, t.c2,
          xchg_circ_c2(&plan));
    check_c2(p, k, b, &plan, t.c2);
out:
    free(areas);
}

static void check_schedules(void)
{
    static const size_t small_b[] = {1, 2, 3, 4, 5, 7, 8, 13, 64};
    for (int p = 1; p <= 64; p++)
        for (int k = 1; k <= 5; k++)
            for (size_t i = 0; i < sizeof small_b / sizeof small_b[0]; i++)
                check_schedule(p, k, small_b[i]);
    for (int p = 65; p <= 512; p++)
        for (int k = 1; k <= 3; k++) {
            check_schedule(p, k, 1);
            check_schedule(p, k, 3);
        }
}

/* The C2 claim for many more shapes, from the plan alone. */
static void check_plans(void)
{
    xchg_circ_area_t areas[9];
    static const size_t large_b[] = {100, 1000, 4096, 65536, 65537};
    for (int p = 1; p < 1000; p++)
        for (int k = 1; k <= 9; k++)
            for (size_t i = 0; i < 16 + sizeof large_b / sizeof large_b[0]; i++) {
                size_t b = i < 16 ? i + 1 : large_b[i - 16];
                xchg_circ_t plan;
                size_t cells = 0;
                xchg_circ_plan(&plan, p, k, b, areas);
                check_c2(p, k, b, &plan, xchg_circ_c2(&plan));
                for (int a = 0; a < plan.nareas; a++)
                    cells += areas[a].bytes;
                CHECK(cells == b * (size_t)plan.n2 || p == 1,
                      "areas p=%d k=%d b=%zu: %zu cells, expected %zu", p, k, b, cells,
                      b * (size_t)plan.n2);
            }
}

/* The partition as it was planned before the closed-form cap and the O(1) feeders: k greedy
 * runs per tried cap, and every earlier area searched for each feeder. The new planning must
 * give the same areas, field by field, so that every byte travels as before. */
static size_t ref_run_end(size_t pos, size_t cap, size_t b, int n1)
{
    size_t by_span = (pos / b + (size_t)n1) * b;
    return pos + cap < by_span ? pos + cap : by_span;
}

static int ref_feasible(size_t cap, int k, size_t b, int n1, int n2)
{
    size_t pos = 0, cells = b * (size_t)n2;
    for (int a = 0; a < k && pos < cells; a++)
        pos = ref_run_end(pos, cap, b, n1);
    return pos >= cells;
}

static size_t ref_partition(int n1, int n2, int k, size_t b, xchg_circ_area_t *areas, int *nareas)
{
    size_t cells = b * (size_t)n2, lo, hi, pos = 0;
    *nareas = 0;
    for (int a = 0; a < k; a++)
        areas[a] = (xchg_circ_area_t){0, 0, 0, 0, 0, 0};
    if (cells == 0)
        return 0;
    lo = (cells + (size_t)k - 1) / (size_t)k;
    hi = b * (size_t)((n2 + k - 1) / k);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ref_feasible(mid, k, b, n1, n2))
            hi = mid;
        else
            lo = mid + 1;
    }
    for (int a = 0; a < k && pos < cells; a++) {
        xchg_circ_area_t *area = &areas[a];
        size_t end = ref_run_end(pos, lo, b, n1), first_row = pos % b;
        int most;
        if (end > cells)
            end = cells;
        most = (int)(((size_t)n1 * b - first_row - (end - pos)) / b);
        area->first_cell = pos;
        area->bytes = end - pos;
        area->column = (int)(pos / b);
        for (int m = 0; m <= most; m++) {
            int used = 0;
            for (int e = 0; e < a; e++)
                used |= areas[e].offset == n1 + area->column - m;
            if (!used) {
                area->feeder = m;
                break;
            }
        }
        area->offset = n1 + area->column - area->feeder;
        area->send_start = (size_t)area->feeder * b + first_row;
        (*nareas)++;
        pos = end;
    }
    return lo;
}

/* The plan of (p, k, b) against the reference partition, and its numbers against
 * xchg_circ_shape. */
static void check_against_reference(int p, int k, size_t b, xchg_circ_area_t *areas,
                                    xchg_circ_area_t *expected)
{
    xchg_circ_t plan, shape;
    size_t cap;
    int nareas, same = 1;

    xchg_circ_plan(&plan, p, k, b, areas);
    xchg_circ_shape(&shape, p, k, b);
    cap = ref_partition(plan.n1, plan.n2, plan.nports, b, expected, &nareas);
    CHECK(plan.last_cap == cap && plan.nareas == nareas,
          "reference p=%d k=%d b=%zu: cap %zu areas %d, expected %zu %d", p, k, b, plan.last_cap,
          plan.nareas, cap, nareas);
    for (int a = 0; a < plan.nports && same; a++)
        same = areas[a].first_cell == expected[a].first_cell &&
               areas[a].bytes == expected[a].bytes && areas[a].column == expected[a].column &&
               areas[a].feeder == expected[a].feeder && areas[a].offset == expected[a].offset &&
               areas[a].send_start == expected[a].send_start;
    CHECK(same, "reference p=%d k=%d b=%zu: the areas differ from the reference partition", p, k,
          b);
    CHECK(shape.nrounds == plan.nrounds && shape.n1 == plan.n1 && shape.n2 == plan.n2 &&
              shape.nports == plan.nports && shape.nareas == plan.nareas &&
              shape.last_cap == plan.last_cap && shape.excluded == plan.excluded &&
              shape.areas == NULL,
          "shape p=%d k=%d b=%zu: d %d n1 %d areas %d cap %zu, plan %d %d %d %zu", p, k, b,
          shape.nrounds, shape.n1, shape.nareas, shape.last_cap, plan.nrounds, plan.n1, plan.nareas,
          plan.last_cap);
}

static void check_references(void)
{
    static const size_t bs[] = {1, 2, 3, 5, 8, 13};
    static const int big_p[] = {1000, 1023, 1024, 2426, 3001};
    int most = 3001;
    xchg_circ_area_t *areas = malloc((size_t)most * sizeof *areas);
    xchg_circ_area_t *expected = malloc((size_t)most * sizeof *expected);

    if (!areas || !expected) {
        CHECK(0, "out of memory for the reference plans");
        goto out;
    }
    /* every k for small p, k = p - 1 included */
    for (int p = 1; p <= 96; p++)
        for (int k = 1; k <= p + 1; k++)
            for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
                check_against_reference(p, k, bs[i], areas, expected);
    /* large p: the ports where several areas share a column (n2 < k) and around */
    for (size_t i = 0; i < sizeof big_p / sizeof big_p[0]; i++) {
        int p = big_p[i];
        const int ks[] = {1, 2, 7, 40, p / 3, p / 2, p / 2 + 1, p - 3, p - 2, p - 1};
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
            check_against_reference(p, ks[j], 1, areas, expected);
            check_against_reference(p, ks[j], 7, areas, expected);
            check_against_reference(p, ks[j], 64, areas, expected);
        }
    }
out:
    free(areas);
    free(expected);
}

/* A plan too large for the simulator (p = 65536, k up to p - 1), checked for a sample of
 * receiving ranks: every message a sampled rank receives is a run its sender holds before the
 * round, no byte arrives twice, and at the end the rank holds all p b bytes. The messages are
 * computed from the plan as circulant.h describes them and compared with
 * xchg_circ_round_messages for the sampled senders. */
static void check_large(int p, int k, size_t b)
{
    const int sample[] = {0, 1, 2, p / 3, p / 2, p - 2, p - 1};
    size_t total = b * (size_t)p;
    int kk = xchg_circ_ports(p, k);
    xchg_circ_area_t *areas = malloc((size_t)kk * sizeof *areas);
    xchg_circ_msg_t *msgs = malloc((size_t)kk * sizeof *msgs);
    unsigned char *have = malloc(total);
    xchg_circ_t plan;

    if (!areas || !msgs || !have) {
        CHECK(0, "out of memory for p=%d k=%d", p, k);
        goto out;
    }
    xchg_circ_plan(&plan, p, k, b, areas);
    check_c2(p, k, b, &plan, xchg_circ_c2(&plan));
    for (size_t s = 0; s < sizeof sample / sizeof sample[0]; s++) {
        int dst = sample[s], bad = 0;
        size_t missing = 0;
        memset(have, 0, total);
        memset(have + (size_t)dst * b, 1, b);
        for (int t = 0; t < plan.nrounds && !bad; t++) {
            int last = t == plan.nrounds - 1, n;
            size_t held = last ? (size_t)plan.n1 : (size_t)xchg_circ_held(&plan, t);
            int nmsgs = last ? plan.nareas : plan.nports;
            /* the sender's messages, from the library, for the sampled senders */
            n = xchg_circ_round_messages(&plan, t, dst, msgs);
            CHECK(n == nmsgs, "p=%d k=%d round %d: rank %d sends %d messages, expected %d", p, k, t,
                  dst, n, nmsgs);
            for (int i = 0; i < nmsgs && !bad; i++) {
                int offset = last ? plan.areas[i].offset : (i + 1) * (int)held;
                int src = (int)(((long)dst + offset) % p);
                size_t start =
                    last ? ((size_t)src * b + plan.areas[i].send_start) % total : (size_t)src * b;
                size_t bytes = last ? plan.areas[i].bytes : held * b;
                size_t from_own = (start + total - (size_t)src * b) % total;
                if (i < n && (msgs[i].offset != offset ||
                              msgs[i].start !=
                                  ((size_t)dst * b + (start + total - (size_t)src * b)) % total ||
                              msgs[i].bytes != bytes))
                    bad = 1;
                /* the sender holds blocks src .. src + held - 1 */
                if (from_own + bytes > held * b)
                    bad = 2;
                for (size_t u = 0; u < bytes && !bad; u++) {
                    size_t at = (start + u) % total;
                    if (have[at])
                        bad = 3;
                    have[at] = 1;
                }
            }
        }
        for (size_t u = 0; u < total; u++)
            missing += !have[u];
        CHECK(!bad && missing == 0,
              "large plan p=%d k=%d b=%zu, rank %d: problem %d (1 message differs, 2 not held, "
              "3 twice), %zu bytes missing",
              p, k, b, dst, bad, missing);
    }
out:
    free(areas);
    free(msgs);
    free(have);
}

static void check_large_plans(void)
{
    int p = 65536;
    xchg_circ_t plan;
    xchg_circ_area_t *areas = malloc((size_t)(p - 1) * sizeof *areas);

    check_large(p, p - 1, 1);
    check_large(p, p - 1, 3);
    check_large(p, p - 2, 3); /* d = 2, one column in the last round: 3 areas */
    check_large(p, 40000, 5); /* d = 2, areas of 4 bytes: several start in a column */
    check_large(p, 255, 5);   /* d = 2, 256 x 256 */
    check_large(p, 16, 1 << 10);
    /* k = p - 1: one round, area a is block a + 1 of the receiver, over offset a + 1 */
    if (!areas) {
        CHECK(0, "out of memory for p=%d", p);
        return;
    }
    xchg_circ_plan(&plan, p, p - 1, 7, areas);
    for (int a = 0; a < p - 1; a++)
        if (areas[a].first_cell != (size_t)a * 7 || areas[a].bytes != 7 || areas[a].column != a ||
            areas[a].feeder != 0 || areas[a].offset != a + 1 || areas[a].send_start != 0) {
            CHECK(0, "p=%d k=p-1 b=7: area %d is %zu %zu %d %d %d %zu", p, a, areas[a].first_cell,
                  areas[a].bytes, areas[a].column, areas[a].feeder, areas[a].offset,
                  areas[a].send_start);
            break;
        }
    CHECK(plan.nrounds == 1 && plan.n1 == 1 && plan.nareas == p - 1 && plan.last_cap == 7,
          "p=%d k=p-1 b=7: d %d n1 %d areas %d cap %zu", p, plan.nrounds, plan.n1, plan.nareas,
          plan.last_cap);
    free(areas);
}

static void check_area(const xchg_circ_area_t *a, size_t first, size_t bytes, int column,
                       int offset, size_t send_start, const char *what)
{
    CHECK(a->first_cell == first && a->bytes == bytes && a->column == column &&
              a->offset == offset && a->send_start == send_start,
          "%s: first %zu bytes %zu column %d offset %d send_start %zu, expected %zu %zu %d %d "
          "%zu",
          what, a->first_cell, a->bytes, a->column, a->offset, a->send_start, first, bytes, column,
          offset, send_start);
}

static void check_golden(void)
{
    xchg_circ_area_t areas[8];
    xchg_circ_t plan;
    xchg_circ_msg_t msgs[8];
    int nareas, n;
    size_t cap;

    /* Table 1: n1 = 3, n2 = 7, b = 3, k = 3: areas of 7 cells over offsets 3, 5, 7 */
    cap = xchg_circ_partition(3, 7, 3, 3, areas, &nareas);
    CHECK(cap == 7 && nareas == 3, "Table 1: cap %zu areas %d, expected 7 3", cap, nareas);
    check_area(&areas[0], 0, 7, 0, 3, 0, "Table 1 A1");
    check_area(&areas[1], 7, 7, 2, 5, 1, "Table 1 A2");
    check_area(&areas[2], 14, 7, 4, 7, 2, "Table 1 A3");

    /* p = 10, k = 3, b = 3: d = 2, n1 = 4, n2 = 6; areas of two columns over 4, 6, 8 */
    xchg_circ_plan(&plan, 10, 3, 3, areas);
    CHECK(plan.nrounds == 2 && plan.n1 == 4 && plan.n2 == 6 && plan.last_cap == 6 &&
              xchg_circ_c2(&plan) == 9,
          "p=10 k=3 b=3: d %d n1 %d n2 %d cap %zu C2 %zu, expected 2 4 6 6 9", plan.nrounds,
          plan.n1, plan.n2, plan.last_cap, xchg_circ_c2(&plan));
    check_area(&areas[0], 0, 6, 0, 4, 0, "p=10 A1");
    check_area(&areas[1], 6, 6, 2, 6, 0, "p=10 A2");
    check_area(&areas[2], 12, 6, 4, 8, 0, "p=10 A3");
    /* rank 9 in round 0 sends its block (bytes 27..29) to ranks 8, 7, 6 */
    n = xchg_circ_round_messages(&plan, 0, 9, msgs);
    CHECK(n == 3 && msgs[0].dst == 8 && msgs[1].dst == 7 && msgs[2].dst == 6 &&
              msgs[2].start == 27 && msgs[2].bytes == 3,
          "p=10 round 0 rank 9: n %d dst %d %d %d start %zu bytes %zu", n, msgs[0].dst, msgs[1].dst,
          msgs[2].dst, msgs[2].start, msgs[2].bytes);
    /* rank 9 in the last round holds blocks 9, 0, 1, 2; area 3 (blocks 9 and 0 for rank 1)
     * leaves from address 27 and wraps around the end */
    n = xchg_circ_round_messages(&plan, 1, 9, msgs);
    CHECK(n == 3 && msgs[2].dst == 1 && msgs[2].start == 27 && msgs[2].bytes == 6,
          "p=10 round 1 rank 9: n %d dst %d start %zu bytes %zu", n, msgs[2].dst, msgs[2].start,
          msgs[2].bytes);

    /* Fig. 9 / Appendix B: p = 5, k = 1: offsets 1, 2, then one block over offset 4 */
    xchg_circ_plan(&plan, 5, 1, 1, areas);
    CHECK(plan.nrounds == 3 && plan.n1 == 4 && plan.n2 == 1 && plan.nareas == 1 &&
              areas[0].offset == 4 && xchg_circ_c2(&plan) == 4,
          "p=5 k=1: d %d n1 %d n2 %d areas %d offset %d C2 %zu", plan.nrounds, plan.n1, plan.n2,
          plan.nareas, areas[0].offset, xchg_circ_c2(&plan));

    /* excluded range: p = 15, k = 3, b = 3: cap 12 = ceil(33/3) + 1, C2 15 > 14 */
    xchg_circ_plan(&plan, 15, 3, 3, areas);
    CHECK(plan.excluded && plan.last_cap == 12 && xchg_circ_c2(&plan) == 15,
          "p=15 k=3 b=3: excluded %d cap %zu C2 %zu, expected 1 12 15", plan.excluded,
          plan.last_cap, xchg_circ_c2(&plan));
    /* ... and p = 14 in the same range still meets the bound */
    xchg_circ_plan(&plan, 14, 3, 3, areas);
    CHECK(plan.excluded && xchg_circ_c2(&plan) == 13,
          "p=14 k=3 b=3: excluded %d C2 %zu, "
          "expected 1 13",
          plan.excluded, xchg_circ_c2(&plan));

    /* n2 < k: three 1-byte areas in column 0 are fed by nodes 0, 1, 2 (offsets 4, 3, 2) */
    xchg_circ_plan(&plan, 5, 3, 3, areas);
    CHECK(plan.nareas == 3 && areas[0].offset == 4 && areas[1].offset == 3 &&
              areas[2].offset == 2 && areas[1].send_start == 3 + 1 && areas[2].send_start == 6 + 2,
          "p=5 k=3 b=3: offsets %d %d %d send starts %zu %zu", areas[0].offset, areas[1].offset,
          areas[2].offset, areas[1].send_start, areas[2].send_start);

    /* k above p - 1 acts as p - 1: one round, every block to every rank */
    xchg_circ_plan(&plan, 3, 5, 4, areas);
    CHECK(plan.nports == 2 && plan.nrounds == 1 && plan.nareas == 2 && plan.last_cap == 4,
          "p=3 k=5: k %d d %d areas %d cap %zu, expected 2 1 2 4", plan.nports, plan.nrounds,
          plan.nareas, plan.last_cap);
    xchg_circ_plan(&plan, 1, 0, 8, areas);
    CHECK(plan.nrounds == 0 && xchg_circ_c2(&plan) == 0, "p=1: d %d C2 %zu", plan.nrounds,
          xchg_circ_c2(&plan));
}

static double model(int p, size_t b, const xchg_machine_t *m, int *k)
{
    xchg_call_t call;
    xchg_params_t params = {.nports = *k};
    double t;
    memset(&call, 0, sizeof call);
    call.coll = XCHG_ALLGATHER;
    call.comm_size = p;
    call.block_bytes = b;
    t = xchg_cost_allgather_circulant(&call, m, &params);
    *k = params.nports;
    return t;
}

static void check_cost(void)
{
    const xchg_machine_t plain = {.beta = 1e-6, .tau = 1e-9, .rho = 0.0, .port_share = 1.0};
    /* start-ups dominate, free ports */
    const xchg_machine_t ports = {.beta = 1e-3, .tau = 1e-12, .rho = 0.0, .port_share = 0.0};
    const xchg_machine_t copies = {.beta = 0.0, .tau = 0.0, .rho = 1.0, .port_share = 1.0};
    int k;
    double t, expected;

    /* p = 8, k = 1, b = 10: rounds of 10, 20 and 40 bytes */
    k = 1;
    t = model(8, 10, &plain, &k);
    expected = 3e-6 + 70e-9;
    CHECK(k == 1 && fabs(t - expected) < 1e-15, "cost p=8 k=1 b=10: k %d t %.9g, expected %.9g", k,
          t, expected);
    /* p = 10, k = 3, b = 3, ports sharing a link: 3 msgs of 3 bytes, then 3 of 6 */
    k = 3;
    t = model(10, 3, &plain, &k);
    expected = 2e-6 + (3 * 3 + 6 * 3) * 1e-9;
    CHECK(k == 3 && fabs(t - expected) < 1e-15, "cost p=10 k=3 b=3: k %d t %.9g, expected %.9g", k,
          t, expected);
    /* a k above p - 1 is the one-round algorithm, and is returned as it runs: k = p - 1 */
    k = 50;
    t = model(4, 8, &plain, &k);
    expected = 1e-6 + 3 * 8e-9;
    CHECK(k == 3 && fabs(t - expected) < 1e-15, "cost p=4 k=50 b=8: k %d t %.9g, expected 3 %.9g",
          k, t, expected);
    k = 1000000;
    t = model(65536, 1, &plain, &k);
    CHECK(k == 65535 && isfinite(t), "cost p=65536 k=1000000: k %d t %g, expected k=65535", k, t);
    k = 7;
    model(1, 8, &plain, &k);
    CHECK(k == 1, "cost p=1 k=7: k %d, expected 1", k);
    k = 5;
    model(6, 8, &plain, &k);
    CHECK(k == 5, "cost p=6 k=5: k %d, expected 5 (kept)", k);
    /* free ports and costly start-ups: as many ports as rounds can use */
    for (int p = 2; p <= 17; p++) {
        k = 0;
        t = model(p, 8, &ports, &k);
        CHECK(k == p - 1 && fabs(t - 1e-3 - 8e-12) < 1e-15,
              "cost, beta dominant, free ports, p=%d: chose k=%d t=%g, expected k=p-1", p, k, t);
    }
    /* nothing given: k completed */
    k = 0;
    t = model(64, 1 << 16, &plain, &k);
    CHECK(k >= 1 && k <= 16 && isfinite(t), "cost p=64 defaults: k=%d t=%g", k, t);
    /* copies: the own block and one area of the last round (p = 2: 1 + 1 bytes) */
    k = 1;
    t = model(2, 1, &copies, &k);
    CHECK(t == 2.0, "copies p=2 b=1: %g, expected 2", t);
}

int main(void)
{
    check_golden();
    check_references();
    check_large_plans();
    check_plans();
    check_schedules();
    check_cost();
    free(pool.have);
    free(pool.arriving);
    free(pool.touched);
    free(pool.sent);
    return unit_finish("test_sched_circulant");
}

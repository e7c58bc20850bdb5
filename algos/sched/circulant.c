/*
 * circulant.c: schedule arithmetic, last-round table partition (Proposition 4.2) and symbolic
 * simulator of Bruck's circulant concatenation algorithm
 * (Bruck et al., "Efficient algorithms for all-to-all communications in multiport
 * message-passing systems", 1997, Section 4 and Appendix B). See circulant.h for
 * the conventions (bytes as the unit, negative offsets, addresses). Pure code: no MPI.
 */
#include <stdint.h>
#include <stdlib.h>

#include "circulant.h"

int xchg_circ_ports(int nranks, int nports)
{
    if (nports < 1)
        nports = 1;
    if (nranks >= 2 && nports > nranks - 1)
        nports = nranks - 1;
    return nports;
}

/* d = ceil(log_{k+1} p) and (k+1)^(d-1) */
static int rounds_for(int nranks, int nports, int64_t *below)
{
    int64_t reach = 1, prev = 1;
    int d = 0;
    while (reach < nranks) {
        prev = reach;
        reach *= (int64_t)nports + 1;
        d++;
    }
    *below = prev;
    return d;
}

int xchg_circ_excluded(int nranks, int nports, size_t block_bytes)
{
    int64_t below;
    nports = xchg_circ_ports(nranks, nports);
    if (nranks < 2 || block_bytes < 3 || nports < 3)
        return 0;
    /* below = (k+1)^(d-1), so (k+1)^d = below * (k+1) */
    rounds_for(nranks, nports, &below);
    return below * (nports + 1) - nports < nranks && nranks < below * (nports + 1);
}

/* Where k greedy runs of at most `cap` cells end: each run starts where the last one ended
 * and is the longest that holds at most cap cells and stays within n1 columns of its first
 * column (the end a run can reach does not decrease with its start, so the greedy runs reach
 * furthest). Closed form instead of k steps. With cap <= (n1 - 1) b + 1 the column span never
 * binds (a run from row u ends by row u + cap <= n1 b), so the runs end at k cap. Above, with
 * c = cap - (n1 - 1) b in 2 .. b (a cap above n1 b acts as n1 b), a run from row u <= b - c
 * takes cap cells and moves the row to u + c, a run from a higher row ends at the column
 * boundary n1 columns on: from row 0 the runs repeat in cycles of q = floor(b / c) runs of cap
 * cells (rows 0, c, .., (q-1) c), plus, when q c < b, one run to the boundary. */
static size_t runs_reach(size_t runs, size_t cap, size_t block_bytes, int n1)
{
    size_t b = block_bytes, span = (size_t)n1 * b, c, q, cycle, advance;

    if (cap > span)
        cap = span;
    if (cap + b <= span + 1)
        return runs * cap;
    c = cap + b - span;
    q = b / c;
    cycle = q * c == b ? q : q + 1;
    advance = q * c == b ? q * cap : (q * (size_t)(n1 - 1) + (size_t)n1) * b;
    return runs / cycle * advance + runs % cycle * cap;
}

/* The smallest cap k column-major runs can meet (bisection between ceil(b n2 / k) and
 * b ceil(n2 / k), which whole columns always meet) and how many runs it takes. */
static size_t last_round(int n1, int n2, int nports, size_t block_bytes, int *nareas)
{
    size_t b = block_bytes, cells = b * (size_t)n2, lo, hi, used_lo = 1, used_hi;

    *nareas = 0;
    if (cells == 0)
        return 0;
    lo = (cells + (size_t)nports - 1) / (size_t)nports;
    hi = b * (size_t)((n2 + nports - 1) / nports);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (runs_reach((size_t)nports, mid, b, n1) >= cells)
            hi = mid;
        else
            lo = mid + 1;
    }
    /* the fewest runs of that cap that cover the table */
    used_hi = (size_t)nports;
    while (used_lo < used_hi) {
        size_t mid = used_lo + (used_hi - used_lo) / 2;
        if (runs_reach(mid, lo, b, n1) >= cells)
            used_hi = mid;
        else
            used_lo = mid + 1;
    }
    *nareas = (int)used_lo;
    return lo;
}

/* The end of the run of at most cap cells that starts at cell pos (see runs_reach). */
static size_t run_end(size_t pos, size_t cap, size_t block_bytes, int n1)
{
    size_t by_span = (pos / block_bytes + (size_t)n1) * block_bytes;
    return pos + cap < by_span ? pos + cap : by_span;
}

/* The feeders. Area a in column L takes the largest offset o = n1 + L - m not used by an
 * earlier area, m in 0 .. most (the paper's m = 0 when nothing is free). Columns do not
 * decrease with a, so the used offsets are all <= the current n1 + L: either n1 + L is new
 * (m = 0), or it is the top of the run of used offsets [lo, n1 + L], and the largest free
 * offset is lo - 1. Only that top run needs tracking: two areas share a column only when the
 * cap is below b, and then every column holds the start of an area, so n1 + L grows by one
 * from column to column and the used offsets stay one run. O(1) per area instead of a search
 * over the earlier areas (O(k^2) for k = p - 1). */
typedef struct feeders {
    int lo, hi; /* the top run of used offsets; empty when hi < lo */
} feeders_t;

static void feed(feeders_t *used, xchg_circ_area_t *area, int n1, int most)
{
    int top = n1 + area->column;
    area->feeder = 0;
    if (top > used->hi) {
        used->lo = top == used->hi + 1 && used->hi >= used->lo ? used->lo : top;
        used->hi = top;
    } else if (top - used->lo + 1 <= most) {
        area->feeder = top - used->lo + 1;
        used->lo--;
    }
    area->offset = top - area->feeder;
}

size_t xchg_circ_partition(int n1, int n2, int nports, size_t block_bytes, xchg_circ_area_t *areas,
                           int *nareas)
{
    size_t b = block_bytes, cells = b * (size_t)n2, cap, pos = 0;
    feeders_t used = {1, 0};

    for (int a = 0; a < nports; a++)
        areas[a] = (xchg_circ_area_t){0, 0, 0, 0, 0, 0};
    cap = last_round(n1, n2, nports, b, nareas);

    /* the areas themselves: the greedy runs of the cap, each with its feeder */
    for (int a = 0; a < *nareas; a++) {
        xchg_circ_area_t *area = &areas[a];
        size_t end = run_end(pos, cap, b, n1), first_row = pos % b;

        if (end > cells)
            end = cells;
        area->first_cell = pos;
        area->bytes = end - pos;
        area->column = (int)(pos / b);
        feed(&used, area, n1, (int)(((size_t)n1 * b - first_row - (end - pos)) / b));
        area->send_start = (size_t)area->feeder * b + first_row;
        pos = end;
    }
    return cap;
}

void xchg_circ_shape(xchg_circ_t *plan, int nranks, int nports, size_t block_bytes)
{
    int64_t below;

    if (nranks < 1)
        nranks = 1;
    nports = xchg_circ_ports(nranks, nports);
    plan->nranks = nranks;
    plan->nports = nports;
    plan->block_bytes = block_bytes;
    plan->nrounds = rounds_for(nranks, nports, &below);
    plan->n1 = (int)below;
    plan->n2 = nranks - plan->n1;
    plan->excluded = xchg_circ_excluded(nranks, nports, block_bytes);
    plan->areas = NULL;
    plan->last_cap = last_round(plan->n1, plan->n2, nports, block_bytes, &plan->nareas);
}

void xchg_circ_plan(xchg_circ_t *plan, int nranks, int nports, size_t block_bytes,
                    xchg_circ_area_t *areas)
{
    xchg_circ_shape(plan, nranks, nports, block_bytes);
    plan->areas = areas;
    xchg_circ_partition(plan->n1, plan->n2, plan->nports, block_bytes, areas, &plan->nareas);
}

int xchg_circ_held(const xchg_circ_t *plan, int round)
{
    int held = 1;
    for (int t = 0; t < round; t++)
        held *= plan->nports + 1;
    return held;
}

size_t xchg_circ_c2(const xchg_circ_t *plan)
{
    if (plan->nrounds == 0)
        return 0;
    return plan->block_bytes * (size_t)(plan->n1 - 1) / (size_t)plan->nports + plan->last_cap;
}

size_t xchg_circ_c2_lower(int nranks, int nports, size_t block_bytes)
{
    size_t k = (size_t)xchg_circ_ports(nranks, nports);
    if (nranks < 2)
        return 0;
    return (block_bytes * (size_t)(nranks - 1) + k - 1) / k;
}

int xchg_circ_round_messages(const xchg_circ_t *plan, int round, int src, xchg_circ_msg_t *msgs)
{
    int p = plan->nranks, n = 0;
    size_t b = plan->block_bytes, total = b * (size_t)p, own = b * (size_t)src;

    if (b == 0 || round < 0 || round >= plan->nrounds)
        return 0;
    if (round < plan->nrounds - 1) {
        /* offsets S_t: the held blocks go to k ranks at once */
        int held = xchg_circ_held(plan, round);
        for (int z = 1; z <= plan->nports; z++) {
            int offset = z * held;
            msgs[n++] = (xchg_circ_msg_t){
                round, z - 1, offset, src, (src - offset + p) % p, own, (size_t)held * b};
        }
        return n;
    }
    /* the last round: one area per port */
    for (int a = 0; a < plan->nareas; a++) {
        const xchg_circ_area_t *area = &plan->areas[a];
        xchg_circ_msg_t *msg = &msgs[n++];
        *msg = (xchg_circ_msg_t){.round = round, .port = a, .offset = area->offset, .src = src};
        msg->dst = (src - area->offset + p) % p;
        msg->start = (own + area->send_start) % total;
        msg->bytes = area->bytes;
    }
    return n;
}

int xchg_circ_simulate(const xchg_circ_t *plan, const xchg_circ_visitor_t *visitor)
{
    xchg_circ_msg_t *msgs = malloc((size_t)plan->nports * sizeof *msgs);
    if (!msgs)
        return -1;
    for (int t = 0; t < plan->nrounds; t++) {
        for (int src = 0; src < plan->nranks; src++) {
            int n = xchg_circ_round_messages(plan, t, src, msgs);
            for (int i = 0; i < n; i++)
                visitor->message(visitor->arg, &msgs[i]);
        }
        if (visitor->round_end)
            visitor->round_end(visitor->arg, t);
    }
    free(msgs);
    return 0;
}

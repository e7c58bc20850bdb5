/*
 * circulant.c: schedule arithmetic, last-round table partition (Proposition 4.2) and symbolic
 * simulator of Bruck's circulant concatenation algorithm
 * (../shared/papers/002_0c74752dd805d1e2.txt, Section 4 and Appendix B). See circulant.h for
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

/* The end of the longest run that starts at cell `pos`, holds at most `cap` cells and stays
 * within n1 columns of its first column. */
static size_t run_end(size_t pos, size_t cap, size_t block_bytes, int n1)
{
    size_t by_span = (pos / block_bytes + (size_t)n1) * block_bytes;
    return pos + cap < by_span ? pos + cap : by_span;
}

/* Can k runs of at most cap cells cover the n2 x b table? Greedy longest runs are optimal. */
static int cap_feasible(size_t cap, int nports, size_t block_bytes, int n1, int n2)
{
    size_t pos = 0, cells = block_bytes * (size_t)n2;
    for (int a = 0; a < nports && pos < cells; a++)
        pos = run_end(pos, cap, block_bytes, n1);
    return pos >= cells;
}

size_t xchg_circ_partition(int n1, int n2, int nports, size_t block_bytes, xchg_circ_area_t *areas,
                           int *nareas)
{
    size_t b = block_bytes, cells = b * (size_t)n2, lo, hi, pos = 0;

    *nareas = 0;
    for (int a = 0; a < nports; a++)
        areas[a] = (xchg_circ_area_t){0, 0, 0, 0, 0, 0};
    if (cells == 0)
        return 0;

    /* the smallest cap that a partition into k column-major runs can meet */
    lo = (cells + (size_t)nports - 1) / (size_t)nports;
    hi = b * (size_t)((n2 + nports - 1) / nports);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cap_feasible(mid, nports, b, n1, n2))
            hi = mid;
        else
            lo = mid + 1;
    }

    /* the areas themselves, each with a feeder whose offset is not taken yet if possible */
    for (int a = 0; a < nports && pos < cells; a++) {
        xchg_circ_area_t *area = &areas[a];
        size_t end = run_end(pos, lo, b, n1), first_row = pos % b;
        int most;

        if (end > cells)
            end = cells;
        most = (int)(((size_t)n1 * b - first_row - (end - pos)) / b);
        area->first_cell = pos;
        area->bytes = end - pos;
        area->column = (int)(pos / b);
        area->feeder = 0;
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

void xchg_circ_plan(xchg_circ_t *plan, int nranks, int nports, size_t block_bytes,
                    xchg_circ_area_t *areas)
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
    plan->areas = areas;
    plan->last_cap =
        xchg_circ_partition(plan->n1, plan->n2, nports, block_bytes, areas, &plan->nareas);
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

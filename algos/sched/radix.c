/*
 * radix.c: schedule arithmetic and symbolic simulator of Bruck's radix-r index algorithm
 * (Bruck et al., "Efficient algorithms for all-to-all communications in multiport
 * message-passing systems", 1997, Section 3 and Appendix A). See radix.h for the
 * block-id convention and the measures. Pure code: no MPI.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "radix.h"

static int ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

void xchg_radix_init(xchg_radix_t *sched, int nranks, int radix, int nports)
{
    int64_t reach = 1;

    if (nranks < 1)
        nranks = 1;
    if (radix < 2)
        radix = 2;
    if (radix > nranks && nranks >= 2)
        radix = nranks;
    if (nports < 1)
        nports = 1;
    if (nports > radix - 1)
        nports = radix - 1; /* a round holds the steps of one subphase: at most r - 1 */
    sched->nranks = nranks;
    sched->radix = radix;
    sched->nports = nports;
    /* w = ceil(log_r p): the number of radix-r digits of the ids 0 .. p-1 */
    sched->ndigits = 0;
    while (reach < nranks) {
        sched->weight[sched->ndigits++] = (int)reach;
        reach *= radix;
    }
    sched->rounds_per_subphase = ceil_div(radix - 1, nports);
    sched->last_steps =
        sched->ndigits > 0 ? ceil_div(nranks, sched->weight[sched->ndigits - 1]) - 1 : 0;
    sched->nrounds = sched->ndigits > 0 ? (sched->ndigits - 1) * sched->rounds_per_subphase +
                                              ceil_div(sched->last_steps, nports)
                                        : 0;
}

int xchg_radix_nsteps(const xchg_radix_t *sched, int subphase)
{
    return subphase == sched->ndigits - 1 ? sched->last_steps : sched->radix - 1;
}

void xchg_radix_round(const xchg_radix_t *sched, int round, int *subphase, int *first_step,
                      int *nsteps)
{
    int x = round / sched->rounds_per_subphase, steps;

    if (x > sched->ndigits - 1)
        x = sched->ndigits - 1;
    round -= x * sched->rounds_per_subphase;
    steps = xchg_radix_nsteps(sched, x);
    *subphase = x;
    *first_step = 1 + round * sched->nports;
    *nsteps = steps - (*first_step - 1) < sched->nports ? steps - (*first_step - 1) : sched->nports;
}

/* Ids below p with digit x equal to z: ids = hi * r^(x+1) + z * r^x + lo with lo < r^x. Every
 * complete group of r^(x+1) ids holds r^x of them, the incomplete last group what is left. */
int xchg_radix_step_count(const xchg_radix_t *sched, int subphase, int step)
{
    int64_t weight = sched->weight[subphase];
    int64_t group = weight * sched->radix;
    int64_t full = sched->nranks / group, rest = sched->nranks % group;
    int64_t extra = rest - step * weight;

    if (extra < 0)
        extra = 0;
    if (extra > weight)
        extra = weight;
    return (int)(full * weight + extra);
}

int xchg_radix_count_runs(const xchg_radix_t *sched, int subphase, int first[3], int last[3],
                          int count[3])
{
    int64_t weight = sched->weight[subphase];
    int64_t group = weight * sched->radix;
    int full = (int)(sched->nranks / group), rest = (int)(sched->nranks % group);
    int steps = xchg_radix_nsteps(sched, subphase);
    /* below step rest / r^x a step has a whole extra r^x ids, at it the remainder, above none */
    int edge = (int)(rest / weight), n = 0;
    int from[3] = {1, edge, edge + 1}, to[3] = {edge - 1, edge, steps};
    int blocks[3] = {(int)((full + 1) * weight), (int)(full * weight + rest % weight),
                     (int)(full * weight)};

    for (int i = 0; i < 3; i++) {
        int lo = from[i] > 1 ? from[i] : 1, hi = to[i] < steps ? to[i] : steps;
        if (lo > hi)
            continue;
        first[n] = lo;
        last[n] = hi;
        count[n] = blocks[i];
        n++;
    }
    return n;
}

int xchg_radix_step_block(const xchg_radix_t *sched, int subphase, int step, int index)
{
    int64_t weight = sched->weight[subphase];
    int64_t ascending = xchg_radix_step_count(sched, subphase, step) - 1 - index;

    return (int)(ascending / weight * weight * sched->radix + step * weight + ascending % weight);
}

int xchg_radix_round_max_blocks(const xchg_radix_t *sched, int round)
{
    int x, first, n;
    xchg_radix_round(sched, round, &x, &first, &n);
    return xchg_radix_step_count(sched, x, first); /* counts do not increase with the step */
}

size_t xchg_radix_round_total_blocks(const xchg_radix_t *sched, int round)
{
    int x, first, n;
    size_t total = 0;
    xchg_radix_round(sched, round, &x, &first, &n);
    for (int z = first; z < first + n; z++)
        total += (size_t)xchg_radix_step_count(sched, x, z);
    return total;
}

int xchg_radix_paper_c1(const xchg_radix_t *sched)
{
    return sched->rounds_per_subphase * sched->ndigits;
}

size_t xchg_radix_c2(const xchg_radix_t *sched)
{
    size_t total = 0;
    for (int q = 0; q < sched->nrounds; q++)
        total += (size_t)xchg_radix_round_max_blocks(sched, q);
    return total;
}

size_t xchg_radix_paper_c2_bound(const xchg_radix_t *sched)
{
    return (size_t)sched->rounds_per_subphase * (size_t)ceil_div(sched->nranks, sched->radix) *
           (size_t)sched->ndigits;
}

size_t xchg_radix_c2_safe_bound(const xchg_radix_t *sched)
{
    size_t total = 0;
    for (int x = 0; x < sched->ndigits; x++) {
        int64_t group = (int64_t)sched->weight[x] * sched->radix;
        int64_t groups = (sched->nranks + group - 1) / group;
        total += (size_t)ceil_div(xchg_radix_nsteps(sched, x), sched->nports) *
                 (size_t)(sched->weight[x] * groups);
    }
    return total;
}

int xchg_radix_simulate(const xchg_radix_t *sched, const xchg_radix_visitor_t *visitor)
{
    size_t p = (size_t)sched->nranks;
    int rc = -1;
    /* slot[j * p + i]: origin of the block that rank i holds under id j; the block is for
     * rank (origin + j) mod p, since every move of id j carries it offset ranks further and
     * the offsets of id j add up to j. One row per id, so that moving an id is one pass. */
    int *slot = malloc(p * p * sizeof *slot);
    int *origin = malloc(p * p * sizeof *origin); /* [src * count + n] for the current step */
    int *dest = malloc(p * p * sizeof *dest);
    int *moved = malloc(p * sizeof *moved);

    if (!slot || !origin || !dest || !moved)
        goto out;
    for (size_t j = 0; j < p; j++)
        for (size_t i = 0; i < p; i++)
            slot[j * p + i] = (int)i;
    for (int q = 0; q < sched->nrounds; q++) {
        int x, first, nsteps;
        xchg_radix_round(sched, q, &x, &first, &nsteps);
        /* report every message of the round from the slots as they are before the round */
        for (int z = first; z < first + nsteps; z++) {
            int offset = z * sched->weight[x];
            size_t count = (size_t)xchg_radix_step_count(sched, x, z);
            for (size_t n = 0; n < count; n++) {
                int j = xchg_radix_step_block(sched, x, z, (int)n);
                const int *row = slot + (size_t)j * p;
                for (size_t src = 0; src < p; src++) {
                    origin[src * count + n] = row[src];
                    dest[src * count + n] = (int)((row[src] + (size_t)j) % p);
                }
            }
            for (size_t src = 0; src < p; src++) {
                xchg_radix_msg_t msg = {.round = q, .subphase = x, .step = z};
                msg.offset = offset;
                msg.src = (int)src;
                msg.dst = (int)((src + offset) % p);
                msg.nblocks = (int)count;
                msg.origin = origin + src * count;
                msg.dest = dest + src * count;
                visitor->message(visitor->arg, &msg);
            }
        }
        /* then move them: id j of every rank goes offset ranks to the right */
        for (int z = first; z < first + nsteps; z++) {
            size_t offset = (size_t)z * sched->weight[x];
            int count = xchg_radix_step_count(sched, x, z);
            for (int n = 0; n < count; n++) {
                int *row = slot + (size_t)xchg_radix_step_block(sched, x, z, n) * p;
                for (size_t i = 0; i < p; i++)
                    moved[(i + offset) % p] = row[i];
                memcpy(row, moved, p * sizeof *row);
            }
        }
        if (visitor->round_end)
            visitor->round_end(visitor->arg, q);
    }
    rc = 0;
out:
    free(slot);
    free(origin);
    free(dest);
    free(moved);
    return rc;
}

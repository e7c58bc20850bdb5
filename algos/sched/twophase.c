/*
 * twophase.c: schedule arithmetic and local steps of the two-phase h-relation routing
 * (Bader, Helman, JaJa, "Practical parallel algorithms for personalized communication and
 * integer sorting", 1996, Section 3 and Appendix B).
 * See twophase.h for the unit, the bounds, the header and the block layouts. Pure code.
 *
 * Choice of the unit U. A rank copies each of its units once in step 1 and once in step 5
 * (one memcpy per unit: about h/U calls), while every transpose block carries up to
 * (p+1)/2 units of slack beyond its h/p bytes of payload (p blocks per transpose, two
 * transposes: about p (p+1) U bytes of padding). A memcpy call costs about as much as
 * copying or sending a few tens of bytes, so the sum of the two is smallest near
 * U = 4 sqrt(h / (p (p+1))); we take the power of two at or below it, within [8, 64 KiB].
 * For 1 MiB per rank that is 256 bytes at p = 8 and 1 KiB at p = 2; for a few hundred bytes
 * per rank it is the minimum, 8. h = min(h1, h2) because the padding of the lighter
 * transpose is the one that weighs most against its payload.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "twophase.h"
#include "types.h"

size_t xchg_twophase_unit_bytes(int p, size_t h1, size_t h2)
{
    size_t h = h1 < h2 ? h1 : h2;
    size_t quota, unit = XCHG_TWOPHASE_UNIT_MIN;

    if (h == 0)
        h = h1 > h2 ? h1 : h2;
    if (p < 1)
        p = 1;
    /* largest power of two with unit^2 / 16 <= h / (p (p+1)) (unit^2 / 16 is exact) */
    quota = h / ((size_t)p * ((size_t)p + 1));
    while (unit < XCHG_TWOPHASE_UNIT_MAX && (2 * unit) * (2 * unit) / 16 <= quota)
        unit *= 2;
    return unit;
}

size_t xchg_twophase_bin_bound(size_t units, int p, size_t unit_max)
{
    size_t delta;

    if (p <= 1)
        return units;
    /* delta: the units of a bin beyond the full passes (at most one per destination, each
     * the tail of a run that began delta' < delta bins earlier: at least delta (delta+1)/2
     * such units in all); a run is shorter than p and than a message. The bound
     * (units - delta (delta+1)/2) / p + delta never decreases from delta to delta + 1 (the
     * first term loses delta + 1 < p units, so at most 1), so the largest admissible delta
     * gives it: the largest with delta (delta+1)/2 <= units, at most p - 1 and unit_max. */
    delta = (size_t)p - 1 < unit_max ? (size_t)p - 1 : unit_max;
    {
        size_t root = (size_t)((sqrt(8.0 * (double)units + 1.0) - 1.0) / 2.0);
        if (root < delta)
            delta = root;
    }
    while (delta > 0 && delta * (delta + 1) / 2 > units) /* the float root may be one high */
        delta--;
    while (delta + 1 <= (size_t)p - 1 && delta + 1 <= unit_max &&
           (delta + 1) * (delta + 2) / 2 <= units) /* ... or one low */
        delta++;
    return (units - delta * (delta + 1) / 2) / (size_t)p + delta;
}

/* Most units a rank routes: each of its p-1 messages to others adds at most one partial unit
 * to floor(total / U), and none has more than unit_max units. */
static size_t units_bound(size_t total_bytes, size_t unit, size_t unit_max, int p)
{
    size_t others = (size_t)p - 1;
    size_t by_total = total_bytes / unit + others;
    size_t by_message = unit_max <= SIZE_MAX / (others ? others : 1) ? others * unit_max : SIZE_MAX;
    return by_total < by_message ? by_total : by_message;
}

/* header + cap units, rounded up to 8 bytes; 0 when p such blocks would overflow */
static size_t block_size(size_t header, size_t cap, size_t unit, int p)
{
    size_t limit = SIZE_MAX / 4 / (size_t)p, block;
    if (cap > limit / unit)
        return 0;
    block = (header + cap * unit + 7) & ~(size_t)7;
    return block <= limit ? block : 0;
}

int xchg_twophase_plan_init(xchg_twophase_plan_t *plan, int p, size_t h1, size_t h2,
                            size_t max_block)
{
    memset(plan, 0, sizeof *plan);
    if (p < 1)
        return -1;
    plan->nranks = p;
    plan->unit_bytes = xchg_twophase_unit_bytes(p, h1, h2);
    plan->unit_max = max_block / plan->unit_bytes + (max_block % plan->unit_bytes != 0);
    plan->count_bytes = max_block > UINT32_MAX ? 8 : 4;
    plan->header_bytes = (size_t)p * plan->count_bytes;
    plan->units1 = units_bound(h1, plan->unit_bytes, plan->unit_max, p);
    plan->units2 = units_bound(h2, plan->unit_bytes, plan->unit_max, p);
    plan->cap1 = xchg_twophase_bin_bound(plan->units1, p, plan->unit_max);
    plan->cap2 = xchg_twophase_bin_bound(plan->units2, p, plan->unit_max);
    plan->block1_bytes = block_size(plan->header_bytes, plan->cap1, plan->unit_bytes, p);
    plan->block2_bytes = block_size(0, plan->cap2, plan->unit_bytes, p);
    if (plan->block1_bytes == 0 || (plan->block2_bytes == 0 && plan->cap2 > 0))
        return -1;
    return 0;
}

size_t xchg_twophase_units(const xchg_twophase_plan_t *plan, size_t bytes)
{
    return bytes / plan->unit_bytes + (bytes % plan->unit_bytes != 0);
}

size_t xchg_twophase_unit_len(const xchg_twophase_plan_t *plan, size_t bytes, size_t k)
{
    size_t rest = bytes - k * plan->unit_bytes;
    return rest < plan->unit_bytes ? rest : plan->unit_bytes;
}

size_t xchg_twophase_run(size_t units, int p, int src, int dst, int bin, size_t *first)
{
    long long k0 = ((long long)bin - src - dst) % p;
    if (k0 < 0)
        k0 += p;
    *first = (size_t)k0;
    return units > (size_t)k0 ? (units - (size_t)k0 - 1) / (size_t)p + 1 : 0;
}

size_t xchg_twophase_run_bytes(const xchg_twophase_plan_t *plan, size_t bytes, int src, int dst,
                               int bin)
{
    size_t first, last, n;
    n = xchg_twophase_run(xchg_twophase_units(plan, bytes), plan->nranks, src, dst, bin, &first);
    if (n == 0)
        return 0;
    /* only the message's last unit can be short, and it is the last of its run */
    last = first + (n - 1) * (size_t)plan->nranks;
    return (n - 1) * plan->unit_bytes + xchg_twophase_unit_len(plan, bytes, last);
}

static void put_count(const xchg_twophase_plan_t *plan, char *at, size_t value)
{
    if (plan->count_bytes == 4) {
        uint32_t v = (uint32_t)value;
        memcpy(at, &v, sizeof v);
    } else {
        uint64_t v = value;
        memcpy(at, &v, sizeof v);
    }
}

static size_t get_count(const xchg_twophase_plan_t *plan, const char *at)
{
    if (plan->count_bytes == 4) {
        uint32_t v;
        memcpy(&v, at, sizeof v);
        return v;
    } else {
        uint64_t v;
        memcpy(&v, at, sizeof v);
        return (size_t)v;
    }
}

/* A message may hold at most unit_max units (the agreed largest message). */
static int message_fits(const xchg_twophase_plan_t *plan, size_t bytes)
{
    return xchg_twophase_units(plan, bytes) <= plan->unit_max;
}

int xchg_twophase_deal(const xchg_twophase_plan_t *plan, int rank, const char *sendbuf,
                       const size_t *sendbytes, const size_t *sendoffs, char *bins, size_t *fill)
{
    int p = plan->nranks;
    size_t unit = plan->unit_bytes, cap_bytes = plan->cap1 * unit;

    /* every block starts with this rank's counts (0 for itself: the self message is copied
     * directly, not routed) */
    for (int b = 0; b < p; b++) {
        fill[b] = 0;
        for (int j = 0; j < p; j++)
            put_count(plan, bins + (size_t)b * plan->block1_bytes + (size_t)j * plan->count_bytes,
                      j == rank ? 0 : sendbytes[j]);
    }
    /* unit k of the message for j goes to bin (rank + j + k) mod p; destinations in
     * increasing order, so that each bin holds its runs ordered by destination */
    for (int j = 0; j < p; j++) {
        size_t bytes = sendbytes[j], units;
        const char *from = sendbuf + sendoffs[j];
        int bin = (int)(((long long)rank + j) % p);
        if (j == rank || bytes == 0)
            continue;
        if (!message_fits(plan, bytes))
            return -1;
        units = xchg_twophase_units(plan, bytes);
        for (size_t k = 0; k < units; k++) {
            size_t len = xchg_twophase_unit_len(plan, bytes, k);
            if (len > cap_bytes - fill[bin])
                return -1;
            memcpy(bins + (size_t)bin * plan->block1_bytes + plan->header_bytes + fill[bin],
                   from + k * unit, len);
            fill[bin] += len;
            bin = bin + 1 == p ? 0 : bin + 1;
        }
    }
    return 0;
}

int xchg_twophase_rearrange(const xchg_twophase_plan_t *plan, int rank, const char *landing,
                            char *bins2, size_t *fill)
{
    int p = plan->nranks;
    size_t cap_bytes = plan->cap2 * plan->unit_bytes;

    for (int j = 0; j < p; j++)
        fill[j] = 0;
    /* sources in increasing order, so that each phase-2 block holds its runs ordered by
     * source; within a phase-1 block the run for each destination is contiguous */
    for (int i = 0; i < p; i++) {
        const char *block = landing + (size_t)i * plan->block1_bytes;
        size_t at = plan->header_bytes;
        for (int j = 0; j < p; j++) {
            size_t bytes = get_count(plan, block + (size_t)j * plan->count_bytes), len;
            if (!message_fits(plan, bytes))
                return -1;
            len = xchg_twophase_run_bytes(plan, bytes, i, j, rank);
            if (len > plan->block1_bytes - at || len > cap_bytes - fill[j])
                return -1;
            memcpy(bins2 + (size_t)j * plan->block2_bytes + fill[j], block + at, len);
            at += len;
            fill[j] += len;
        }
    }
    return 0;
}

int xchg_twophase_place_cut(const xchg_twophase_plan_t *plan, int rank, const char *landing2,
                            char *recvbuf, const size_t *sentbytes, const size_t *recvbytes,
                            const size_t *recvoffs)
{
    int p = plan->nranks;
    size_t unit = plan->unit_bytes;

    for (int i = 0; i < p; i++)
        if (i != rank && !message_fits(plan, sentbytes[i]))
            return -1;
    /* the block from intermediate b holds, for each source i in order, the units of
     * (i -> rank) with k = first, first + p, ...; bytes past recvbytes[i] are dropped */
    for (int b = 0; b < p; b++) {
        const char *block = landing2 + (size_t)b * plan->block2_bytes;
        size_t at = 0;
        for (int i = 0; i < p; i++) {
            size_t bytes = sentbytes[i], k, n;
            if (i == rank)
                continue;
            n = xchg_twophase_run(xchg_twophase_units(plan, bytes), p, i, rank, b, &k);
            for (; n > 0; n--, k += (size_t)p) {
                size_t len = xchg_twophase_unit_len(plan, bytes, k), start = k * unit;
                if (len > plan->block2_bytes - at)
                    return -1;
                if (start < recvbytes[i])
                    memcpy(recvbuf + recvoffs[i] + start, block + at,
                           len < recvbytes[i] - start ? len : recvbytes[i] - start);
                at += len;
            }
        }
    }
    return 0;
}

int xchg_twophase_place(const xchg_twophase_plan_t *plan, int rank, const char *landing2,
                        char *recvbuf, const size_t *recvbytes, const size_t *recvoffs)
{
    return xchg_twophase_place_cut(plan, rank, landing2, recvbuf, recvbytes, recvbytes, recvoffs);
}

/* The registry's applicability predicate. */
int xchg_alltoallv_twophase_applies(const xchg_call_t *call, const xchg_params_t *params,
                                    const char **why)
{
    xchg_twophase_plan_t plan;
    const xchg_algo_t *inner = params->inner;

    if (xchg_twophase_plan_init(&plan, call->comm_size, call->max_send_bytes, call->max_recv_bytes,
                                call->max_block_bytes) != 0) {
        if (why)
            *why = "p transpose blocks of h/p + p/2 units overflow the address space";
        return 0;
    }
    if (!inner)
        return 1;
    if (inner->native || inner->coll != XCHG_ALLTOALL) {
        if (why)
            *why = "inner names no xchg alltoall algorithm";
        return 0;
    }
    for (int phase = 0; phase < 2; phase++) {
        xchg_call_t transpose = {0};
        xchg_params_t inner_params = {0};
        const char *inner_why = "";
        transpose.coll = XCHG_ALLTOALL;
        transpose.comm_size = call->comm_size;
        transpose.block_bytes = phase == 0 ? plan.block1_bytes : plan.block2_bytes;
        transpose.max_block_bytes = transpose.block_bytes;
        inner_params.radix = params->radix;
        inner_params.nports = params->nports;
        if (!inner->applies(&transpose, &inner_params, &inner_why)) {
            if (why)
                *why = "the forced inner alltoall cannot serve its transposes";
            return 0;
        }
    }
    return 1;
}

/*
 * test_twophase.c: the two-phase h-relation schedule (algos/sched/twophase.c), its cost model
 * and predicate, and the benchmark workload generators (tuning/workloads.c). No MPI.
 *
 *  - bin bounds: on random, skewed and adversarial count matrices, every step-1 bin holds at
 *    most N/p + (p-1)/2 units (N: the units its rank deals; the paper's n/p^2 + (p-1)/2) and
 *    every step-4 bin at most M/p + (p-1)/2 (M: the units its destination receives), both
 *    within the exact bound and the plan's capacities; the bound is reached where the paper
 *    says it is tight;
 *  - the whole routing on p simulated ranks: deal, a simulated transpose, rearrange, a
 *    simulated transpose, place; every byte arrives at its place (data from a formula of
 *    source, destination and index), receive-buffer gaps keep their sentinel, and the local
 *    steps never write past their blocks even when handed plans that are too small;
 *  - the workloads: per-rank sums, Eq. 7 against a direct transcription, the key-level
 *    definition of the h-relation, the g-group shape, Figure 3 and Eq. 9's tiling, parsing.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tuning/registry.h"
#include "../../algos/sched/twophase.h"
#include "../../tuning/cost.h"
#include "../../tuning/workloads.h"

#include "unit.h"

/* Deterministic random numbers (splitmix64). */
static uint64_t rng_state = 12345;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static size_t rnd_below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

/* The byte of message (src -> dst) at index idx; never 0, the sentinel. */
static unsigned char data_byte(int src, int dst, size_t idx)
{
    uint64_t h =
        ((uint64_t)src * 1000003u + (uint64_t)dst * 7919u + idx * 2654435761u) ^ 0x5bd1e995u;
    h ^= h >> 13;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    return (unsigned char)(h % 255 + 1);
}

/* ---------------------------------------------------------------------------------------- */
/* Count matrices (bytes, p x p, row = source) */

enum { SHAPE_RANDOM, SHAPE_SKEWED, SHAPE_ONE_DEST, SHAPE_TIGHT, SHAPE_SPARSE, SHAPE_TINY, NSHAPES };
static const char *const shape_names[] = {"random", "skewed", "one-dest",
                                          "tight",  "sparse", "tiny"};

static void make_matrix(size_t *bytes, int p, int shape, size_t scale, size_t unit)
{
    int hot = (int)rnd_below((size_t)p);
    for (int i = 0; i < p; i++)
        for (int j = 0; j < p; j++) {
            size_t *s = &bytes[(size_t)i * p + j];
            switch (shape) {
            case SHAPE_RANDOM:
                *s = rnd_below(scale + 1);
                break;
            case SHAPE_SKEWED: /* one hot destination takes most */
                *s = j == hot ? scale * (size_t)p / 2 + rnd_below(scale) : rnd_below(scale / 8 + 1);
                break;
            case SHAPE_ONE_DEST:
                *s = j == hot ? scale : 0;
                break;
            case SHAPE_TIGHT: {
                /* the paper's tight case: every destination's run ends in bin `hot`, so that
                 * bin gets one extra unit from every destination (a full passes + 1..p) */
                size_t a = scale / (unit * (size_t)p * (size_t)p);
                size_t run = (size_t)((((long long)hot - i - j) % p + p) % p) + 1;
                *s = i == j ? 0 : (a * (size_t)p + run) * unit;
                break;
            }
            case SHAPE_SPARSE:
                *s = rnd_below(4) == 0 ? rnd_below(scale * 4 + 1) : 0;
                break;
            default: /* tiny messages: 0..3 bytes */
                *s = rnd_below(4);
                break;
            }
        }
}

static void agreed_values(const size_t *bytes, int p, size_t *h1, size_t *h2, size_t *max_block)
{
    *h1 = *h2 = *max_block = 0;
    for (int i = 0; i < p; i++) {
        size_t row = 0, col = 0;
        for (int j = 0; j < p; j++) {
            row += bytes[(size_t)i * p + j];
            col += bytes[(size_t)j * p + i];
            if (bytes[(size_t)i * p + j] > *max_block)
                *max_block = bytes[(size_t)i * p + j];
        }
        if (row > *h1)
            *h1 = row;
        if (col > *h2)
            *h2 = col;
    }
}

/* 2 p bin <= 2 N + p (p-1): the paper's bound N/p + (p-1)/2 without fractions */
static int within_paper_bound(size_t bin, size_t units, int p)
{
    return 2 * (size_t)p * bin <= 2 * units + (size_t)p * ((size_t)p - 1);
}

/* Bin occupancy by brute force (deal unit by unit) against the plan and the bounds. */
static void check_bins(const size_t *bytes, int p, const char *shape)
{
    size_t h1, h2, max_block, *units, *phase1, *phase2;
    xchg_twophase_plan_t plan;

    agreed_values(bytes, p, &h1, &h2, &max_block);
    CHECK(xchg_twophase_plan_init(&plan, p, h1, h2, max_block) == 0,
          "plan_init(p=%d, h1=%zu, h2=%zu, max=%zu) failed", p, h1, h2, max_block);
    units = calloc((size_t)p * p, sizeof *units);
    phase1 = calloc((size_t)p * p, sizeof *phase1); /* [rank][bin] */
    phase2 = calloc((size_t)p * p, sizeof *phase2); /* [intermediate][destination] */
    for (int i = 0; i < p; i++)
        for (int j = 0; j < p; j++) {
            size_t n = i == j ? 0 : xchg_twophase_units(&plan, bytes[(size_t)i * p + j]);
            units[(size_t)i * p + j] = n;
            for (size_t k = 0; k < n; k++) {
                int bin = (int)(((size_t)i + (size_t)j + k) % (size_t)p);
                phase1[(size_t)i * p + bin]++;
                phase2[(size_t)bin * p + j]++;
            }
            /* the closed form of a run agrees with dealing one by one */
            for (int bin = 0; bin < p; bin++) {
                size_t first, brute = 0, brute_first = SIZE_MAX;
                size_t run = xchg_twophase_run(n, p, i, j, bin, &first);
                for (size_t k = 0; k < n; k++)
                    if (((size_t)i + (size_t)j + k) % (size_t)p == (size_t)bin) {
                        brute++;
                        if (brute_first == SIZE_MAX)
                            brute_first = k;
                    }
                CHECK(run == brute && (run == 0 || first == brute_first),
                      "run(n=%zu, p=%d, %d->%d, bin %d) = %zu first %zu, expected %zu first %zu", n,
                      p, i, j, bin, run, first, brute, brute_first);
            }
        }
    for (int i = 0; i < p; i++) {
        size_t dealt = 0, received = 0, worst1 = 0, worst2 = 0;
        for (int j = 0; j < p; j++) {
            dealt += units[(size_t)i * p + j];
            received += units[(size_t)j * p + i];
        }
        for (int b = 0; b < p; b++) {
            if (phase1[(size_t)i * p + b] > worst1)
                worst1 = phase1[(size_t)i * p + b];
            if (phase2[(size_t)b * p + i] > worst2)
                worst2 = phase2[(size_t)b * p + i];
        }
        CHECK(dealt <= plan.units1 && received <= plan.units2,
              "%s p=%d rank %d: deals %zu units (bound %zu), receives %zu (bound %zu)", shape, p, i,
              dealt, plan.units1, received, plan.units2);
        CHECK(within_paper_bound(worst1, dealt, p),
              "%s p=%d rank %d: step-1 bin of %zu units > N/p + (p-1)/2, N = %zu", shape, p, i,
              worst1, dealt);
        CHECK(within_paper_bound(worst2, received, p),
              "%s p=%d destination %d: step-4 bin of %zu units > M/p + (p-1)/2, M = %zu", shape, p,
              i, worst2, received);
        CHECK(worst1 <= xchg_twophase_bin_bound(dealt, p, plan.unit_max) && worst1 <= plan.cap1,
              "%s p=%d rank %d: step-1 bin %zu > exact bound %zu or cap1 %zu", shape, p, i, worst1,
              xchg_twophase_bin_bound(dealt, p, plan.unit_max), plan.cap1);
        CHECK(worst2 <= xchg_twophase_bin_bound(received, p, plan.unit_max) && worst2 <= plan.cap2,
              "%s p=%d destination %d: step-4 bin %zu > exact bound %zu or cap2 %zu", shape, p, i,
              worst2, xchg_twophase_bin_bound(received, p, plan.unit_max), plan.cap2);
    }
    free(units);
    free(phase1);
    free(phase2);
}

static void test_bin_bounds(void)
{
    static const int sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 31, 64};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int p = sizes[s];
        size_t *bytes = malloc((size_t)p * p * sizeof *bytes);
        int trials = p <= 16 ? 12 : 3;
        for (int shape = 0; shape < NSHAPES; shape++)
            for (int trial = 0; trial < trials; trial++) {
                size_t scale = (size_t)1 << rnd_below(p <= 16 ? 16 : 12);
                size_t h1, h2, max_block;
                xchg_twophase_plan_t plan;
                make_matrix(bytes, p, SHAPE_RANDOM, scale, 8); /* to learn the unit */
                agreed_values(bytes, p, &h1, &h2, &max_block);
                xchg_twophase_plan_init(&plan, p, h1, h2, max_block);
                make_matrix(bytes, p, shape, scale, plan.unit_bytes);
                check_bins(bytes, p, shape_names[shape]);
            }
        free(bytes);
    }
}

/* Exact values of the bound and the unit. */
static void test_exact_values(void)
{
    for (int p = 2; p <= 40; p++) {
        size_t tight = (size_t)p * ((size_t)p + 1) / 2;
        /* the paper's tight case: N = p(p+1)/2 (+ full passes) reaches N/p + (p-1)/2 = p */
        CHECK(xchg_twophase_bin_bound(tight, p, SIZE_MAX) == (size_t)p,
              "bin_bound(%zu, p=%d) = %zu, expected %d", tight, p,
              xchg_twophase_bin_bound(tight, p, SIZE_MAX), p);
        CHECK(xchg_twophase_bin_bound(tight + 3 * (size_t)p * p, p, SIZE_MAX) == 4 * (size_t)p,
              "bin_bound(%zu, p=%d) = %zu, expected %d", tight + 3 * (size_t)p * p, p,
              xchg_twophase_bin_bound(tight + 3 * (size_t)p * p, p, SIZE_MAX), 4 * p);
        /* one unit per message: the p-1 runs start in distinct bins */
        CHECK(xchg_twophase_bin_bound((size_t)p - 1, p, 1) == 1, "bin_bound(%d, p=%d, 1) = %zu",
              p - 1, p, xchg_twophase_bin_bound((size_t)p - 1, p, 1));
        for (size_t n = 0; n < 300; n += 7)
            CHECK(within_paper_bound(xchg_twophase_bin_bound(n, p, SIZE_MAX), n, p),
                  "bin_bound(%zu, p=%d) = %zu above the paper's bound", n, p,
                  xchg_twophase_bin_bound(n, p, SIZE_MAX));
    }
    CHECK(xchg_twophase_bin_bound(17, 1, 5) == 17, "bin_bound(17, p=1) = %zu",
          xchg_twophase_bin_bound(17, 1, 5));
    CHECK(xchg_twophase_unit_bytes(8, 1 << 20, 1 << 20) == 256, "unit(8, 1 MiB) = %zu",
          xchg_twophase_unit_bytes(8, 1 << 20, 1 << 20));
    CHECK(xchg_twophase_unit_bytes(2, 1 << 20, 1 << 20) == 1024, "unit(2, 1 MiB) = %zu",
          xchg_twophase_unit_bytes(2, 1 << 20, 1 << 20));
    CHECK(xchg_twophase_unit_bytes(8, 1 << 20, 8 << 20) == 256, "unit(8, 1 MiB, 8 MiB) = %zu",
          xchg_twophase_unit_bytes(8, 1 << 20, 8 << 20));
    CHECK(xchg_twophase_unit_bytes(8, 0, 0) == XCHG_TWOPHASE_UNIT_MIN, "unit(8, 0) = %zu",
          xchg_twophase_unit_bytes(8, 0, 0));
    CHECK(xchg_twophase_unit_bytes(2, (size_t)1 << 40, (size_t)1 << 40) == XCHG_TWOPHASE_UNIT_MAX,
          "unit(2, 1 TiB) = %zu", xchg_twophase_unit_bytes(2, (size_t)1 << 40, (size_t)1 << 40));
    {
        xchg_twophase_plan_t plan;
        /* p = 8, 1 MiB each way, one message of it all: U = 256, 4096 + 7 units, bins of
         * floor((4102 - 28) / 8) + 7 = 516 units */
        CHECK(xchg_twophase_plan_init(&plan, 8, 1 << 20, 1 << 20, 1 << 20) == 0 &&
                  plan.unit_bytes == 256 && plan.units1 == 4096 + 7 && plan.cap1 == 516 &&
                  plan.count_bytes == 4 && plan.block1_bytes == 32 + 516 * 256 &&
                  plan.block2_bytes == 516 * 256,
              "plan(8, 1 MiB): unit %zu units1 %zu cap1 %zu block1 %zu block2 %zu", plan.unit_bytes,
              plan.units1, plan.cap1, plan.block1_bytes, plan.block2_bytes);
        CHECK(xchg_twophase_plan_init(&plan, 4, 40, 40, (size_t)5 << 32) == 0 &&
                  plan.count_bytes == 8,
              "a message above 4 GiB needs 8-byte counts (got %zu)", plan.count_bytes);
        CHECK(xchg_twophase_plan_init(&plan, 1024, SIZE_MAX / 2, SIZE_MAX / 2, SIZE_MAX / 4) == -1,
              "plan for h = SIZE_MAX/2 must report overflow");
    }
}

/* ---------------------------------------------------------------------------------------- */
/* The whole routing on p simulated ranks */

#define GUARD 64
#define GUARD_BYTE 0xEE

static int guard_intact(const unsigned char *end)
{
    for (int g = 0; g < GUARD; g++)
        if (end[g] != GUARD_BYTE)
            return 0;
    return 1;
}

/* Runs the five steps with the plan from (h1, h2, max_block) and checks the result; with
 * honest = 0 the plan may be too small, and then only "fails cleanly" is checked. */
static void simulate(const size_t *bytes, int p, size_t h1, size_t h2, size_t max_block, int honest,
                     const char *what)
{
    xchg_twophase_plan_t plan;
    unsigned char **sendbuf = calloc((size_t)p, sizeof *sendbuf);
    unsigned char **recvbuf = calloc((size_t)p, sizeof *recvbuf);
    unsigned char **bins = calloc((size_t)p, sizeof *bins);
    unsigned char **bins2 = calloc((size_t)p, sizeof *bins2);
    unsigned char *landing, *landing2;
    size_t *sendoffs = calloc((size_t)p * p, sizeof *sendoffs);
    size_t *recvoffs = calloc((size_t)p * p, sizeof *recvoffs);
    size_t *recvbytes = calloc((size_t)p * p, sizeof *recvbytes);
    size_t *sendsize = calloc((size_t)p, sizeof *sendsize);
    size_t *recvsize = calloc((size_t)p, sizeof *recvsize);
    size_t *fill = calloc((size_t)p, sizeof *fill);
    int broken = 0;

    if (xchg_twophase_plan_init(&plan, p, h1, h2, max_block) != 0) {
        CHECK(!honest, "%s: plan_init failed", what);
        goto out;
    }
    /* buffers: send messages in reverse destination order with gaps, receive regions in
     * source order with gaps of 1..3 bytes */
    for (int i = 0; i < p; i++) {
        size_t at = 1;
        for (int j = p - 1; j >= 0; j--) {
            sendoffs[(size_t)i * p + j] = at;
            at += bytes[(size_t)i * p + j] + (size_t)(j % 2);
        }
        sendsize[i] = at;
        sendbuf[i] = malloc(at);
        memset(sendbuf[i], 0, at);
        for (int j = 0; j < p; j++)
            for (size_t k = 0; k < bytes[(size_t)i * p + j]; k++)
                sendbuf[i][sendoffs[(size_t)i * p + j] + k] = data_byte(i, j, k);
        at = 2;
        for (int s = 0; s < p; s++) {
            recvoffs[(size_t)i * p + s] = at;
            recvbytes[(size_t)i * p + s] = bytes[(size_t)s * p + i];
            at += bytes[(size_t)s * p + i] + 1 + (size_t)(s % 3);
        }
        recvsize[i] = at;
        recvbuf[i] = malloc(at + GUARD);
        memset(recvbuf[i], 0, at);
        memset(recvbuf[i] + at, GUARD_BYTE, GUARD);
        bins[i] = malloc((size_t)p * plan.block1_bytes + GUARD);
        memset(bins[i] + (size_t)p * plan.block1_bytes, GUARD_BYTE, GUARD);
        bins2[i] = malloc((size_t)p * plan.block2_bytes + GUARD);
        memset(bins2[i] + (size_t)p * plan.block2_bytes, GUARD_BYTE, GUARD);
    }
    landing = malloc((size_t)p * plan.block1_bytes + 1);
    landing2 = malloc((size_t)p * plan.block2_bytes + GUARD);
    memset(landing2 + (size_t)p * plan.block2_bytes, GUARD_BYTE, GUARD);

    /* step 1 on every rank */
    for (int i = 0; i < p; i++) {
        broken |= xchg_twophase_deal(&plan, i, (const char *)sendbuf[i], &bytes[(size_t)i * p],
                                     &sendoffs[(size_t)i * p], (char *)bins[i], fill);
        CHECK(guard_intact(bins[i] + (size_t)p * plan.block1_bytes),
              "%s: deal on rank %d wrote past its %d blocks of %zu", what, i, p, plan.block1_bytes);
    }
    CHECK(!honest || !broken, "%s: deal failed with an honest plan", what);
    /* steps 2-3: rank b receives block b of every rank, then regroups */
    for (int b = 0; b < p && !broken; b++) {
        for (int i = 0; i < p; i++)
            memcpy(landing + (size_t)i * plan.block1_bytes, bins[i] + (size_t)b * plan.block1_bytes,
                   plan.block1_bytes);
        broken |= xchg_twophase_rearrange(&plan, b, (const char *)landing, (char *)bins2[b], fill);
        CHECK(guard_intact(bins2[b] + (size_t)p * plan.block2_bytes),
              "%s: rearrange on rank %d wrote past its blocks", what, b);
    }
    CHECK(!honest || !broken, "%s: rearrange failed with an honest plan", what);
    /* steps 4-5: rank j receives block j of every intermediate, then places */
    for (int j = 0; j < p && !broken; j++) {
        for (int b = 0; b < p; b++)
            memcpy(landing2 + (size_t)b * plan.block2_bytes,
                   bins2[b] + (size_t)j * plan.block2_bytes, plan.block2_bytes);
        /* the message to self is the algorithm's local copy */
        memcpy(recvbuf[j] + recvoffs[(size_t)j * p + j], sendbuf[j] + sendoffs[(size_t)j * p + j],
               bytes[(size_t)j * p + j]);
        broken |= xchg_twophase_place(&plan, j, (const char *)landing2, (char *)recvbuf[j],
                                      &recvbytes[(size_t)j * p], &recvoffs[(size_t)j * p]);
        CHECK(guard_intact(recvbuf[j] + recvsize[j]), "%s: place on rank %d wrote past recvbuf",
              what, j);
    }
    CHECK(!honest || !broken, "%s: place failed with an honest plan", what);
    if (!honest)
        goto out;
    /* every byte at its place, every gap untouched */
    for (int j = 0; j < p; j++) {
        size_t bad = 0, first_bad = 0, gap_bad = 0, at = 0;
        for (int s = 0; s < p; s++) {
            size_t off = recvoffs[(size_t)j * p + s], n = recvbytes[(size_t)j * p + s];
            for (; at < off; at++)
                gap_bad += recvbuf[j][at] != 0;
            for (size_t k = 0; k < n; k++, at++)
                if (recvbuf[j][at] != data_byte(s, j, k) && bad++ == 0)
                    first_bad = at;
        }
        for (; at < recvsize[j]; at++)
            gap_bad += recvbuf[j][at] != 0;
        CHECK(bad == 0 && gap_bad == 0,
              "%s: rank %d received %zu wrong bytes (first at %zu) and %zu written gap bytes", what,
              j, bad, first_bad, gap_bad);
    }
    free(landing);
    free(landing2);
out:
    for (int i = 0; i < p; i++) {
        free(sendbuf[i]);
        free(recvbuf[i]);
        free(bins[i]);
        free(bins2[i]);
    }
    free(sendbuf);
    free(recvbuf);
    free(bins);
    free(bins2);
    free(sendoffs);
    free(recvoffs);
    free(recvbytes);
    free(sendsize);
    free(recvsize);
    free(fill);
}

static void test_routing(void)
{
    static const int sizes[] = {1, 2, 3, 4, 5, 7, 8, 11, 16};
    char what[128];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int p = sizes[s];
        size_t *bytes = malloc((size_t)p * p * sizeof *bytes);
        for (int shape = 0; shape < NSHAPES; shape++)
            for (int trial = 0; trial < 4; trial++) {
                size_t scale = (size_t)1 << rnd_below(14), h1, h2, max_block;
                make_matrix(bytes, p, shape, scale, 8 << rnd_below(4));
                agreed_values(bytes, p, &h1, &h2, &max_block);
                snprintf(what, sizeof what, "routing %s p=%d scale=%zu", shape_names[shape], p,
                         scale);
                simulate(bytes, p, h1, h2, max_block, 1, what);
                /* plans too small for the counts: the steps must fail, not overrun */
                snprintf(what, sizeof what, "short plan %s p=%d scale=%zu", shape_names[shape], p,
                         scale);
                simulate(bytes, p, h1 / 4, h2 / 4, max_block / 2, 0, what);
            }
        free(bytes);
    }
}

/* Steps 3 and 5 handed counts that do not fit their blocks (a corrupt header, receive counts
 * above what was routed) report it and write nothing out of bounds. */
static void test_guards(void)
{
    for (int p = 3; p <= 9; p++) {
        xchg_twophase_plan_t plan;
        size_t max_block = 1000, *fill = calloc((size_t)p, sizeof *fill);
        size_t *recvbytes = calloc((size_t)p, sizeof *recvbytes);
        size_t *recvoffs = calloc((size_t)p, sizeof *recvoffs);
        unsigned char *landing, *bins2, *recvbuf;
        int rc;

        xchg_twophase_plan_init(&plan, p, max_block, max_block, max_block);
        landing = calloc((size_t)p, plan.block1_bytes);
        bins2 = malloc((size_t)p * plan.block2_bytes + GUARD);
        memset(bins2 + (size_t)p * plan.block2_bytes, GUARD_BYTE, GUARD);
        /* every source claims max_block bytes for every destination: p^2 max_block in all */
        for (int i = 0; i < p; i++)
            for (int j = 0; j < p; j++) {
                unsigned char *at = landing + (size_t)i * plan.block1_bytes + j * plan.count_bytes;
                uint32_t count = (uint32_t)max_block;
                memcpy(at, &count, sizeof count);
            }
        rc = xchg_twophase_rearrange(&plan, 1, (const char *)landing, (char *)bins2, fill);
        CHECK(rc == -1 && guard_intact(bins2 + (size_t)p * plan.block2_bytes),
              "p=%d: rearrange of oversized headers returned %d (want -1), guard %s", p, rc,
              guard_intact(bins2 + (size_t)p * plan.block2_bytes) ? "intact" : "overwritten");
        /* a receiver expecting max_block from every source, while the blocks hold h2 */
        recvbuf = malloc((size_t)p * max_block + GUARD);
        memset(recvbuf + (size_t)p * max_block, GUARD_BYTE, GUARD);
        for (int i = 0; i < p; i++) {
            recvbytes[i] = max_block;
            recvoffs[i] = (size_t)i * max_block;
        }
        rc = xchg_twophase_place(&plan, 0, (const char *)bins2, (char *)recvbuf, recvbytes,
                                 recvoffs);
        CHECK(rc == -1 && guard_intact(recvbuf + (size_t)p * max_block),
              "p=%d: place of oversized receive counts returned %d (want -1)", p, rc);
        /* a message of more units than the agreed largest one */
        recvbytes[1] = plan.unit_max * plan.unit_bytes + 1;
        CHECK(xchg_twophase_place(&plan, 0, (const char *)bins2, (char *)recvbuf, recvbytes,
                                  recvoffs) == -1,
              "p=%d: place of a message above max_block must fail", p);
        free(fill);
        free(recvbytes);
        free(recvoffs);
        free(landing);
        free(bins2);
        free(recvbuf);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Cost model and predicate */

static void test_cost(void)
{
    xchg_call_t call = {0};
    xchg_params_t params = {0};
    const char *why = "";
    int twophase = xchg_algo_find(XCHG_ALLTOALLV, "twophase");
    int pairwise = xchg_algo_find(XCHG_ALLTOALLV, "pairwise");
    size_t mib = (size_t)1 << 20;
    double t2, t1;

    CHECK(twophase >= 0 && pairwise >= 0, "twophase and pairwise are registered (%d, %d)", twophase,
          pairwise);
    if (twophase < 0 || pairwise < 0)
        return;
    call.coll = XCHG_ALLTOALLV;
    /* g-group-like imbalance at p = 64: messages of n/2, receivers get 8n. Pairwise waits on
     * a large message in every round, the transposes carry h/p per block. */
    call.comm_size = 64;
    call.max_send_bytes = mib;
    call.max_recv_bytes = 8 * mib;
    call.max_block_bytes = mib / 2;
    t2 = xchg_cost_alltoallv_twophase(&call, &xchg_machine_default, &params);
    memset(&params, 0, sizeof params);
    t1 = xchg_cost_alltoallv_pairwise(&call, &xchg_machine_default, &params);
    CHECK(isfinite(t2) && t2 < t1, "skewed p=64: twophase %g s should beat pairwise %g s", t2, t1);
    /* balanced and large at p = 3: pairwise moves every byte once, twophase twice */
    call.comm_size = 3;
    call.max_send_bytes = call.max_recv_bytes = 24 * mib;
    call.max_block_bytes = 8 * mib;
    memset(&params, 0, sizeof params);
    t2 = xchg_cost_alltoallv_twophase(&call, &xchg_machine_default, &params);
    memset(&params, 0, sizeof params);
    t1 = xchg_cost_alltoallv_pairwise(&call, &xchg_machine_default, &params);
    CHECK(isfinite(t2) && t1 < t2, "balanced p=3: pairwise %g s should beat twophase %g s", t1, t2);
    /* a forced inner algorithm is costed as that algorithm */
    memset(&params, 0, sizeof params);
    params.inner = &xchg_algos[xchg_algo_find(XCHG_ALLTOALL, "pairwise")];
    CHECK(isfinite(xchg_cost_alltoallv_twophase(&call, &xchg_machine_default, &params)),
          "twophase:inner=pairwise has a finite cost");
    /* p = 2, skewed or not, any inner: no third rank to route through, auto never takes it */
    call.comm_size = 2;
    for (int skewed = 0; skewed < 2; skewed++)
        for (int inner = 0; inner < 2; inner++) {
            call.max_send_bytes = skewed ? 16 * mib : 8 * mib;
            call.max_recv_bytes = 8 * mib;
            call.max_block_bytes = skewed ? 16 * mib : 4 * mib;
            memset(&params, 0, sizeof params);
            if (inner)
                params.inner = &xchg_algos[xchg_algo_find(XCHG_ALLTOALL, "pairwise")];
            t2 = xchg_cost_alltoallv_twophase(&call, &xchg_machine_default, &params);
            CHECK(isinf(t2), "p=2 skewed=%d inner=%s: twophase %g s, expected INFINITY", skewed,
                  inner ? "pairwise" : "auto", t2);
        }
    /* what cannot be served */
    memset(&params, 0, sizeof params);
    call.comm_size = 1024;
    call.max_send_bytes = call.max_recv_bytes = SIZE_MAX / 2;
    call.max_block_bytes = SIZE_MAX / 4;
    CHECK(isinf(xchg_cost_alltoallv_twophase(&call, &xchg_machine_default, &params)),
          "twophase cost for h = SIZE_MAX/2 must be INFINITY");
    CHECK(!xchg_alltoallv_twophase_applies(&call, &params, &why) && why[0],
          "twophase must not apply for h = SIZE_MAX/2");
    call.comm_size = 8;
    call.max_send_bytes = call.max_recv_bytes = mib;
    call.max_block_bytes = mib / 8;
    CHECK(xchg_alltoallv_twophase_applies(&call, &params, &why), "twophase applies at p=8: %s",
          why);
    {
        int algo;
        char err[256];
        CHECK(xchg_spec_parse(XCHG_ALLTOALLV, "twophase:inner=pairwise:k=2", &algo, &params, err,
                              sizeof err) == 0 &&
                  algo == twophase &&
                  params.inner == &xchg_algos[xchg_algo_find(XCHG_ALLTOALL, "pairwise")] &&
                  params.nports == 2,
              "parse twophase:inner=pairwise:k=2 (algo %d inner %s k %d)", algo,
              params.inner ? params.inner->name : "-", params.nports);
        CHECK(xchg_spec_parse(XCHG_ALLTOALLV, "twophase:inner=bogus", &algo, &params, err,
                              sizeof err) != 0,
              "twophase:inner=bogus must be rejected");
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Workloads */

/* Eq. 7 transcribed directly in integers: floor(h (1 - h i / (2N - h))) with h = H n,
 * N = n p, for i < 2N/h, i != p-1 (H <= p, 2p/H an integer). */
static size_t eq7(size_t n, int p, int H, int i)
{
    unsigned __int128 h = (unsigned __int128)H * n, N = (unsigned __int128)n * (unsigned)p;
    unsigned __int128 num = h * (2 * N - h - h * (unsigned)i);
    return (size_t)(num / (2 * N - h));
}

static void test_workloads(void)
{
    static const char *const specs[] = {"uniform",         "hrel:h=1",           "hrel:h=2",
                                        "hrel:h=4",        "hrel:h=8",           "hrel:h=3",
                                        "ggroup:g=2,t=2",  "ggroup:g=4,t=4,h=2", "ggroup:g=8:t=2",
                                        "ggroup:g=16,t=4", "ggroup:g=3,t=5,h=7"};
    static const size_t ns[] = {0, 1, 2, 7, 64, 1000, 4096, 1000003};
    size_t counts[64];
    char err[256];
    xchg_workload_t wl;

    /* every rank sends exactly n; count() agrees with counts() */
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        CHECK(xchg_workload_parse(specs[s], &wl, err, sizeof err) == 0, "parse %s: %s", specs[s],
              err);
        for (int p = 1; p <= 40; p++)
            for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
                for (int src = 0; src < p; src++) {
                    size_t sum = 0, mismatch = 0;
                    xchg_workload_counts(&wl, p, ns[k], src, counts);
                    for (int dst = 0; dst < p; dst++) {
                        sum += counts[dst];
                        if ((src + dst + (int)k) % 5 == 0) /* a sample of single counts */
                            mismatch += xchg_workload_count(&wl, p, ns[k], src, dst) != counts[dst];
                    }
                    CHECK(sum == ns[k] && mismatch == 0,
                          "%s p=%d n=%zu src=%d: counts sum to %zu, %zu differ from count()",
                          specs[s], p, ns[k], src, sum, mismatch);
                }
    }
    /* uniform: everyone also receives n */
    xchg_workload_parse("uniform", &wl, err, sizeof err);
    for (int p = 1; p <= 20; p++) {
        size_t n = 3 * (size_t)p + 2, bad = 0;
        for (int dst = 0; dst < p; dst++) {
            size_t got = 0;
            for (int src = 0; src < p; src++)
                got += xchg_workload_count(&wl, p, n, src, dst);
            bad += got != n;
        }
        CHECK(bad == 0, "uniform p=%d n=%zu: %zu ranks do not receive n", p, n, bad);
    }
    /* hrel: Eq. 7 exactly where its assumptions hold, and the key-level definition */
    for (int H = 2; H <= 8; H *= 2)
        for (int p = H / 2 > 1 ? H / 2 : 1; p <= 64; p += H / 2 > 1 ? H / 2 : 1) {
            size_t n = 96, recv[64] = {0}, expected_sum = 0;
            char spec[32];
            if (H > p)
                continue;
            snprintf(spec, sizeof spec, "hrel:h=%d", H);
            xchg_workload_parse(spec, &wl, err, sizeof err);
            for (int src = 0; src < p; src++) {
                xchg_workload_counts(&wl, p, n, src, counts);
                for (int dst = 0; dst < p; dst++)
                    recv[dst] += counts[dst];
            }
            for (int i = 0; i < p - 1; i++) {
                size_t want = i < 2 * p / H ? eq7(n, p, H, i) : 0;
                expected_sum += want;
                CHECK(recv[i] == want, "%s p=%d n=%zu: rank %d receives %zu, Eq. 7 says %zu", spec,
                      p, n, i, recv[i], want);
            }
            CHECK(p == 1 || recv[p - 1] == n * (size_t)p - expected_sum,
                  "%s p=%d: rank p-1 receives %zu, Eq. 7 says %zu", spec, p, recv[p - 1],
                  n * (size_t)p - expected_sum);
            CHECK(recv[0] == (size_t)H * n, "%s p=%d: rank 0 receives %zu, not h = %zu", spec, p,
                  recv[0], (size_t)H * n);
        }
    {
        /* h = 8n/p at p = 32: rank 0 gets 8n, ranks 7..30 nothing (3/4 of them, roughly) */
        size_t n = 1000, recv[32] = {0}, zeros = 0;
        int p = 32;
        xchg_workload_parse("hrel:h=8", &wl, err, sizeof err);
        for (int src = 0; src < p; src++) {
            xchg_workload_counts(&wl, p, n, src, counts);
            for (int dst = 0; dst < p; dst++)
                recv[dst] += counts[dst];
        }
        for (int i = 7; i < p - 1; i++)
            zeros += recv[i] == 0;
        CHECK(recv[0] == 8 * n && zeros == 24 && recv[6] > 0 && recv[1] < recv[0] &&
                  recv[p - 1] < 8,
              "hrel:h=8 p=32: rank 0 %zu (want 8000), %zu zeros in 7..30 (want 24), rank 31 %zu",
              recv[0], zeros, recv[p - 1]);
        /* key level: rank src holds keys src, src + p, ...; key x goes to the rank whose
         * run [V_d, V_d + v_d) holds x */
        for (int src = 0; src < p; src++) {
            size_t brute[32] = {0}, start = 0, mismatch = 0;
            int d = 0;
            for (size_t x = 0; x < n * (size_t)p; x++) {
                while (x >= start + recv[d])
                    start += recv[d++];
                if (x % (size_t)p == (size_t)src)
                    brute[d]++;
            }
            xchg_workload_counts(&wl, p, n, src, counts);
            for (int dst = 0; dst < p; dst++)
                mismatch += brute[dst] != counts[dst];
            CHECK(mismatch == 0,
                  "hrel:h=8 p=32 src=%d: %zu counts differ from the key-level "
                  "definition",
                  src, mismatch);
        }
    }
    /* ggroup in the paper's ranges: p/H receivers, each receiving exactly h = H n; each
     * group sends to the same t ranks; Eq. 9 tiles every receiver's h units */
    for (int p = 4; p <= 64; p *= 2)
        for (int H = 1; H <= 8; H *= 2)
            for (int g = H; g * g <= H * p; g *= 2)
                for (int t = g / H > 1 ? g / H : 1; t <= p / g; t *= 2) {
                    size_t n = 64 * (size_t)t, recv[64] = {0}, receivers = 0, bad = 0;
                    char spec[64];
                    unsigned char *covered;
                    snprintf(spec, sizeof spec, "ggroup:g=%d,t=%d,h=%d", g, t, H);
                    xchg_workload_parse(spec, &wl, err, sizeof err);
                    covered = calloc((size_t)p * H * n, 1);
                    for (int src = 0; src < p; src++) {
                        xchg_workload_counts(&wl, p, n, src, counts);
                        for (int dst = 0; dst < p; dst++)
                            recv[dst] += counts[dst];
                        for (int b = 0; b < t; b++) {
                            int dst = xchg_workload_ggroup_dest(&wl, p, src, b);
                            size_t off = xchg_workload_ggroup_offset(&wl, p, n, src, b);
                            bad += xchg_workload_ggroup_dest(&wl, p, src / g * g, b) != dst;
                            for (size_t k = 0; k < n / (size_t)t; k++)
                                if (off + k >= (size_t)H * n ||
                                    covered[(size_t)dst * H * n + off + k]++)
                                    bad++;
                        }
                    }
                    for (int dst = 0; dst < p; dst++) {
                        receivers += recv[dst] > 0;
                        bad += recv[dst] != 0 && recv[dst] != (size_t)H * n;
                    }
                    CHECK(receivers == (size_t)(p / H) && bad == 0,
                          "%s p=%d: %zu receivers (want %d), %zu bad loads or placements", spec, p,
                          receivers, p / H, bad);
                    free(covered);
                }
    /* Figure 3: p = 16, g = 4, t = 4, h = 2n/p */
    {
        static const int group0[] = {8, 12, 1, 5}, group2[] = {0, 4, 9, 13};
        int bad = 0;
        xchg_workload_parse("ggroup:g=4,t=4,h=2", &wl, err, sizeof err);
        for (int b = 0; b < 4; b++)
            bad += xchg_workload_ggroup_dest(&wl, 16, 1, b) != group0[b] ||
                   xchg_workload_ggroup_dest(&wl, 16, 10, b) != group2[b];
        CHECK(bad == 0, "Figure 3 destinations differ in %d places", bad);
    }
    /* parsing: Tables I/II defaults, errors */
    {
        static const char *const table[] = {"ggroup:g=8,t=8", "ggroup:g=8,t=4", "ggroup:g=16,t=4",
                                            "ggroup:g=16,t=2"};
        static const int table_h[] = {1, 2, 4, 8};
        static const char *const bad_specs[] = {
            "hrel",        "hrel:h=0",     "hrel:h=x", "ggroup:g=4", "ggroup:t=4",
            "uniform:h=2", "hrel:h=4:x=1", "fft",      "hrel:h=-2",  "ggroup:g=4,t=4,h="};
        char text[64];
        for (int i = 0; i < 4; i++)
            CHECK(xchg_workload_parse(table[i], &wl, err, sizeof err) == 0 && wl.h == table_h[i],
                  "%s: h = %d, expected %d", table[i], wl.h, table_h[i]);
        for (size_t i = 0; i < sizeof bad_specs / sizeof bad_specs[0]; i++)
            CHECK(xchg_workload_parse(bad_specs[i], &wl, err, sizeof err) == -1 && err[0],
                  "'%s' must be rejected", bad_specs[i]);
        xchg_workload_parse("hrel:h=4", &wl, err, sizeof err);
        xchg_workload_format(&wl, text, sizeof text);
        CHECK(wl.kind == XCHG_WORKLOAD_HREL && wl.h == 4 && strcmp(text, "hrel:h=4") == 0,
              "hrel:h=4 parsed as kind %d h %d, formatted '%s'", wl.kind, wl.h, text);
        xchg_workload_parse("ggroup:t=4:g=4", &wl, err, sizeof err);
        xchg_workload_format(&wl, text, sizeof text);
        CHECK(strcmp(text, "ggroup:g=4,t=4,h=1") == 0, "ggroup:t=4:g=4 formatted '%s'", text);
    }
}

int main(void)
{
    test_exact_values();
    test_bin_bounds();
    test_routing();
    test_guards();
    test_cost();
    test_workloads();
    return unit_finish("test_twophase");
}

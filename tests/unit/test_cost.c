/*
 * test_cost.c: the cost models as a whole (tuning/cost_*.c), without MPI: the parameters they
 * return are the ones the algorithms run, and their bounded searches find what a full search
 * finds where that is provable.
 *
 *  - pairwise (alltoall and alltoallv): the k chosen without trying every k (k = 1 or p - 1,
 *    cost_base.c) has the least time of all k in 1 .. p - 1, for p <= 300 and machines with
 *    ports that share a link, that do not, and that interfere (port_share > 1); a given k is
 *    returned as it runs, min(k, p - 1), and p = 1, 2 return k = 1;
 *  - radix: the chosen (r, k) is at least as fast as every (r, k) with r in {2, 3, p - 1, p}
 *    and k in {1, 2, r - 1} (candidates the search always has), at p <= 9 as every r with
 *    k in 1 .. 4 and r - 1 (or the given k), and priced again as given it costs the same;
 *  - circulant: k left 0 is the fastest k <= 16; a given k above p - 1 comes back as p - 1;
 *  - twophase: given r and k come back as the forced inner algorithm runs them (radix:
 *    r <= p, k <= r - 1; pairwise: k <= p - 1), and are clamped (r <= p, k <= p - 1) when the
 *    inner algorithm is left to the selection; at p = 2 it costs INFINITY (auto never takes it);
 *  - two levels (xchg_machine_for): on one node (no topology, or one node) every model prices
 *    with the intra-node constants, on several nodes exactly as a one-level machine of the
 *    inter-node constants would; inter-node constants of 0 are the intra-node ones;
 *  - injection limit: node_share = max_node_ranks / inject, only across nodes; a round is
 *    slowed only when the busiest node sends more messages than the limit, by the ratio;
 *    pairwise's k is still the least time over every k (also where it scans: ports that
 *    interfere and a limit between them), and every model's time grows with the limit;
 *  - shm: passes (at beta, or at a measured sync) and bytes copied by hand (one pass, pieces past
 * the limit for each collective, an alltoallv whose busiest sender does not fit its region), the
 * slot and region arithmetic of algos/sched/shm.h, and the refusals (no shared memory, slots that
 *    do not fit; one rank is always served).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../tuning/cost.h"
#include "../../tuning/registry.h"
#include "../../algos/sched/shm.h"

#include "unit.h"

static const xchg_machine_t machines[] = {
    {.beta = 3e-6, .tau = 2e-10, .rho = 1e-10, .port_share = 1.0}, /* the built-in constants */
    {.beta = 3e-6, .tau = 2e-10, .rho = 1e-10, .port_share = 0.0}, /* perfect ports */
    {.beta = 3e-6, .tau = 2e-10, .rho = 1e-10, .port_share = 0.5},
    {.beta = 1e-6, .tau = 1e-9, .rho = 0.0, .port_share = 2.0}, /* ports that interfere */
    {.beta = 5e-6, .tau = 1e-10, .rho = 0.0, .port_share = 4.0},
    {.beta = 1e-3, .tau = 1e-12, .rho = 0.0, .port_share = 1.0}, /* start-ups dominate */
    {.beta = 1e-9, .tau = 1e-6, .rho = 0.0, .port_share = 1.0},  /* bytes dominate */
    /* a byte past 16 KiB ten times cheaper (the calibration's tau_large: a single copy) */
    {.beta = 4e-7, .tau = 3e-10, .rho = 5e-11, .port_share = 0.5, .tau_large = 3e-11,
     .large_from = 16384},
};
#define NMACHINES (sizeof machines / sizeof machines[0])

static xchg_call_t make_call(int coll, int p, size_t b)
{
    xchg_call_t call;
    memset(&call, 0, sizeof call);
    call.coll = coll;
    call.comm_size = p;
    call.block_bytes = b;
    call.max_send_bytes = b * (size_t)p;
    call.max_recv_bytes = b * (size_t)p;
    call.max_block_bytes = b;
    call.max_total_bytes = 2 * b * (size_t)p;
    return call;
}

/* pairwise: the least time over every k, against the model's choice */
static void check_pairwise(void)
{
    static const size_t sizes[] = {1, 64, 4096, 1 << 20};
    for (int p = 1; p <= 300; p++)
        for (size_t m = 0; m < NMACHINES; m++)
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
                xchg_call_t call = make_call(XCHG_ALLTOALL, p, sizes[i]);
                xchg_params_t params = {0};
                double t = xchg_cost_alltoall_pairwise(&call, &machines[m], &params),
                       best = INFINITY;
                int best_k = 1;
                for (int k = 1; k <= p - 1; k++) {
                    double tk = ((p - 2) / k + 1) * xchg_cost_round(&machines[m], k, sizes[i]) +
                                (double)sizes[i] * machines[m].rho;
                    if (tk < best) {
                        best = tk;
                        best_k = k;
                    }
                }
                if (p <= 1)
                    best = (double)sizes[i] * machines[m].rho;
                CHECK(fabs(t - best) <= 1e-12 * best && params.nports >= 1 &&
                          params.nports <= (p > 2 ? p - 1 : 1),
                      "pairwise p=%d machine %zu b=%zu: k=%d t=%.12g, every k: k=%d t=%.12g", p, m,
                      sizes[i], params.nports, t, best_k, best);
            }
    /* given k: as it runs */
    for (int p = 1; p <= 20; p++)
        for (int k = 1; k <= 25; k++) {
            xchg_call_t call = make_call(XCHG_ALLTOALLV, p, 100);
            xchg_params_t params = {.nports = k}, again;
            double t = xchg_cost_alltoallv_pairwise(&call, &machines[0], &params);
            int want = p <= 2 ? 1 : k < p - 1 ? k : p - 1;
            again = (xchg_params_t){.nports = want};
            CHECK(params.nports == want &&
                      t == xchg_cost_alltoallv_pairwise(&call, &machines[0], &again),
                  "pairwise p=%d k=%d: returned k=%d, expected %d", p, k, params.nports, want);
        }
    {
        xchg_call_t call = make_call(XCHG_ALLTOALL, 65536, 8);
        xchg_params_t params = {.nports = 1000000};
        xchg_cost_alltoall_pairwise(&call, &machines[0], &params);
        CHECK(params.nports == 65535, "pairwise p=65536 k=1000000: k=%d", params.nports);
    }
}

static double radix_time(int p, size_t b, const xchg_machine_t *m, int r, int k)
{
    xchg_call_t call = make_call(XCHG_ALLTOALL, p, b);
    xchg_params_t params = {.radix = r, .nports = k};
    return xchg_cost_alltoall_radix(&call, m, &params);
}

/* radix: the choice beats the candidates every search has, and is priced consistently */
static void check_radix(void)
{
    static const int sizes[] = {3, 4, 7, 16, 64, 100, 1000, 4096, 65536};
    static const size_t blocks[] = {1, 256, 1 << 16};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t m = 0; m < NMACHINES; m++)
            for (size_t j = 0; j < sizeof blocks / sizeof blocks[0]; j++) {
                int p = sizes[i], rs[4] = {2, 3, p - 1, p};
                xchg_call_t call = make_call(XCHG_ALLTOALL, p, blocks[j]);
                xchg_params_t params = {0};
                double t = xchg_cost_alltoall_radix(&call, &machines[m], &params);
                double again = radix_time(p, blocks[j], &machines[m], params.radix, params.nports);
                CHECK(params.radix >= 2 && params.radix <= p && params.nports >= 1 &&
                          params.nports <= params.radix - 1 && fabs(again - t) <= 1e-12 * t,
                      "radix p=%d machine %zu b=%zu: r=%d k=%d t=%.12g, given back %.12g", p, m,
                      blocks[j], params.radix, params.nports, t, again);
                for (int a = 0; a < 4; a++) {
                    int ks[3] = {1, 2, rs[a] - 1};
                    for (int c = 0; c < 3; c++) {
                        double other;
                        if (rs[a] < 2 || ks[c] < 1 || ks[c] > rs[a] - 1)
                            continue;
                        other = radix_time(p, blocks[j], &machines[m], rs[a], ks[c]);
                        CHECK(t <= other * (1 + 1e-12),
                              "radix p=%d machine %zu b=%zu: chose r=%d k=%d t=%.12g, but r=%d "
                              "k=%d takes %.12g",
                              p, m, blocks[j], params.radix, params.nports, t, rs[a], ks[c], other);
                    }
                }
            }
}

/* radix at p <= 9, where every r is a candidate: the choice beats every r with k in
 * 1 .. min(4, r - 1) and r - 1; and with k given, every r. */
static void check_radix_small(void)
{
    static const size_t blocks[] = {1, 64, 4096, 1 << 20};
    for (int p = 3; p <= 9; p++)
        for (size_t m = 0; m < NMACHINES; m++)
            for (size_t j = 0; j < sizeof blocks / sizeof blocks[0]; j++)
                for (int given = 0; given <= 3; given++) {
                    xchg_call_t call = make_call(XCHG_ALLTOALL, p, blocks[j]);
                    xchg_params_t params = {.nports = given};
                    double t = xchg_cost_alltoall_radix(&call, &machines[m], &params);
                    for (int r = 2; r <= p; r++)
                        for (int k = 1; k <= r - 1; k++) {
                            double other;
                            if ((given && k != (given < r - 1 ? given : r - 1)) ||
                                (!given && k > 4 && k < r - 1))
                                continue;
                            other = radix_time(p, blocks[j], &machines[m], r, k);
                            CHECK(t <= other * (1 + 1e-12),
                                  "radix p=%d machine %zu b=%zu k=%d: chose r=%d k=%d "
                                  "t=%.12g, but r=%d k=%d takes %.12g",
                                  p, m, blocks[j], given, params.radix, params.nports, t, r, k,
                                  other);
                        }
                }
}

/* circulant: k left 0 is the fastest k <= 16 */
static void check_circulant(void)
{
    for (int p = 2; p <= 200; p += p < 40 ? 1 : 13)
        for (size_t m = 0; m < NMACHINES; m++) {
            xchg_call_t call = make_call(XCHG_ALLGATHER, p, 1000);
            xchg_params_t params = {0};
            double t = xchg_cost_allgather_circulant(&call, &machines[m], &params), best = INFINITY;
            for (int k = 1; k <= 16 && k <= p - 1; k++) {
                xchg_params_t given = {.nports = k};
                double tk = xchg_cost_allgather_circulant(&call, &machines[m], &given);
                best = tk < best ? tk : best;
            }
            CHECK(t == best && params.nports >= 1 && params.nports <= p - 1 && params.nports <= 16,
                  "circulant p=%d machine %zu: k=%d t=%.12g, best of k <= 16 %.12g", p, m,
                  params.nports, t, best);
        }
}

/* twophase: given r and k as the inner algorithm runs them */
static void check_twophase_one(int p, const char *inner, int r, int k, int want_r, int want_k)
{
    xchg_call_t call = make_call(XCHG_ALLTOALLV, p, 1000);
    xchg_params_t params = {.radix = r, .nports = k};
    double t;
    call.max_block_bytes = 4000; /* some skew */
    if (inner)
        params.inner = &xchg_algos[xchg_algo_find(XCHG_ALLTOALL, inner)];
    t = xchg_cost_alltoallv_twophase(&call, &machines[0], &params);
    CHECK(params.radix == want_r && params.nports == want_k && (p == 2 ? isinf(t) : isfinite(t)),
          "twophase p=%d inner=%s r=%d k=%d: returned r=%d k=%d t=%g, expected r=%d k=%d", p,
          inner ? inner : "auto", r, k, params.radix, params.nports, t, want_r, want_k);
}

static void check_twophase(void)
{
    check_twophase_one(5, "radix", 1000000, 1000000, 5, 4);
    check_twophase_one(5, "radix", 3, 1000000, 3, 2);
    check_twophase_one(5, "radix", 1000000, 2, 5, 2);
    check_twophase_one(5, "radix", 0, 0, 0, 0);
    check_twophase_one(64, "pairwise", 0, 1000000, 0, 63);
    check_twophase_one(64, "pairwise", 1000000, 7, 64, 7);
    check_twophase_one(64, NULL, 1000000, 1000000, 64, 63);
    check_twophase_one(64, NULL, 0, 0, 0, 0);
    check_twophase_one(2, "radix", 1000000, 1000000, 2, 1);
    {
        /* only k given: at most r - 1 of the radix either transpose chose */
        xchg_call_t call = make_call(XCHG_ALLTOALLV, 100, 1000);
        xchg_params_t params = {.nports = 1000000,
                                .inner = &xchg_algos[xchg_algo_find(XCHG_ALLTOALL, "radix")]};
        xchg_cost_alltoallv_twophase(&call, &machines[0], &params);
        CHECK(params.radix == 0 && params.nports >= 1 && params.nports <= 99,
              "twophase p=100 inner=radix k=1000000: r=%d k=%d", params.radix, params.nports);
    }
}

/* A call of p ranks on nnodes nodes of at most `most` ranks each (NULL topology: nnodes 0). */
static xchg_call_t call_on(int coll, int p, size_t b, const xchg_topo_t *topo)
{
    xchg_call_t call = make_call(coll, p, b);
    call.topo = topo;
    return call;
}

typedef double cost_fn(const xchg_call_t *, const xchg_machine_t *, xchg_params_t *);

/* Every model of this file's algorithms, with its parameters left 0 (twophase's transposes
 * forced to one of them, so that no other registered alltoall takes part), for the two-level
 * checks. */
static const struct {
    const char *name;
    int coll;
    cost_fn *cost;
    const char *inner;
} models[] = {
    {"alltoall pairwise", XCHG_ALLTOALL, xchg_cost_alltoall_pairwise, NULL},
    {"alltoall radix", XCHG_ALLTOALL, xchg_cost_alltoall_radix, NULL},
    {"allgather ring", XCHG_ALLGATHER, xchg_cost_allgather_ring, NULL},
    {"allgather circulant", XCHG_ALLGATHER, xchg_cost_allgather_circulant, NULL},
    {"alltoallv pairwise", XCHG_ALLTOALLV, xchg_cost_alltoallv_pairwise, NULL},
    {"alltoallv twophase:inner=radix", XCHG_ALLTOALLV, xchg_cost_alltoallv_twophase, "radix"},
    {"alltoallv twophase:inner=pairwise", XCHG_ALLTOALLV, xchg_cost_alltoallv_twophase, "pairwise"},
    {"native alltoall", XCHG_ALLTOALL, xchg_cost_native, NULL},
    {"native allgather", XCHG_ALLGATHER, xchg_cost_native, NULL},
    {"native alltoallv", XCHG_ALLTOALLV, xchg_cost_native, NULL},
};
#define NMODELS (sizeof models / sizeof models[0])

/* The model's time and parameters on machine m for call. */
static double priced(size_t i, const xchg_call_t *call, const xchg_machine_t *m,
                     xchg_params_t *params)
{
    *params = (xchg_params_t){0};
    if (models[i].inner)
        params->inner = &xchg_algos[xchg_algo_find(XCHG_ALLTOALL, models[i].inner)];
    return models[i].cost(call, m, params);
}

/* A call's local copies of at most cached_bytes cost rho_cached a byte (xchg-tune's repeated
 * memcpy that stays in the cache), larger ones rho, and copies through a node's segment rho
 * whatever their size: the helper, and pairwise's and ring's prices, which copy the own block
 * (MPICH at 2 ranks on 2 cores, xchg-tune's constants: pairwise:k=1's MPI_Alltoallv of 64 KiB
 * was priced 9.3 us with rho alone and took 6.7; native's took 9.8). */
static void check_cached_copies(void)
{
    xchg_machine_t m = {.beta = 4.8e-7, .tau = 1.3e-10, .rho = 7e-11, .port_share = 1.0,
                        .tau_large = 4.3e-11, .large_from = 16384};
    xchg_call_t v = make_call(XCHG_ALLTOALLV, 2, 65536), ring = make_call(XCHG_ALLGATHER, 2, 65536);
    xchg_params_t params = {.nports = 1};
    double plain_v, plain_ring, cached_v, cached_ring, c;

    plain_v = xchg_cost_alltoallv_pairwise(&v, &m, &params);
    plain_ring = xchg_cost_allgather_ring(&ring, &m, &params);
    CHECK(xchg_cost_copy(&m, 65536) == 65536 * m.rho, "copy without rho_cached: %g",
          xchg_cost_copy(&m, 65536));
    m.rho_cached = 2.5e-11;
    m.cached_bytes = 524288;
    c = xchg_cost_copy(&m, 65536);
    CHECK(c == 65536 * m.rho_cached, "copy of 64 KiB within cached_bytes: %g, expected %g", c,
          65536 * m.rho_cached);
    c = xchg_cost_copy(&m, 1048576);
    CHECK(c == 1048576 * m.rho, "copy of 1 MiB past cached_bytes: %g, expected %g", c,
          1048576 * m.rho);
    params.nports = 1;
    cached_v = xchg_cost_alltoallv_pairwise(&v, &m, &params);
    params.nports = 1;
    cached_ring = xchg_cost_allgather_ring(&ring, &m, &params);
    CHECK(fabs(plain_v - cached_v - 65536 * (m.rho - m.rho_cached)) < 1e-12 &&
              fabs(plain_ring - cached_ring - 65536 * (m.rho - m.rho_cached)) < 1e-12,
          "pairwise's and ring's own block at rho_cached: pairwise %.3g -> %.3g, ring %.3g -> "
          "%.3g",
          plain_v, cached_v, plain_ring, cached_ring);
    CHECK(cached_v < 9.8e-6 / 1.5 && plain_v > 9.8e-6 / 1.5,
          "pairwise:k=1's 64 KiB MPI_Alltoallv priced %.3g s with rho_cached, %.3g without: a "
          "clear win over native's 9.8e-06 only with it",
          cached_v, plain_v);
    c = xchg_cost_node_copies(&v, &m, 65536);
    CHECK(c == 65536 * m.rho, "copies through the segment stay at rho: %g", c);
}

/* Messages past large_from inside a node cost tau_large a byte (the calibration's exchanges):
 * the wire time, the levels, and the recorded case that made it (shim/calibrate.c): MPICH at 2
 * ranks on 2 cores, whose own 64 KiB alltoall ran in 7.3 us. */
static void check_large_messages(void)
{
    static const xchg_topo_t two = {
        .nnodes = 2, .min_node_ranks = 1, .max_node_ranks = 1, .consecutive = 1};
    xchg_machine_t m = {.beta = 3.9e-7, .tau = 3.03e-10, .rho = 4.43e-11, .port_share = 1.0};
    xchg_call_t call = make_call(XCHG_ALLTOALL, 2, 65536);
    xchg_params_t params = {0};
    double linear = xchg_cost_native(&call, &m, &params), two_part, w;

    CHECK(xchg_cost_wire(&m, 65536) == 65536 * m.tau, "wire without tau_large: %g",
          xchg_cost_wire(&m, 65536));
    m.tau_large = 3.46e-11;
    m.large_from = 16384;
    w = xchg_cost_wire(&m, 1000);
    CHECK(w == 1000 * m.tau, "wire below large_from: %g, expected %g", w, 1000 * m.tau);
    w = xchg_cost_wire(&m, 65536);
    CHECK(fabs(w - (16384 * m.tau + 49152 * m.tau_large)) < 1e-18, "wire past large_from: %g", w);
    two_part = xchg_cost_native(&call, &m, &params);
    CHECK(linear > 20e-6 && two_part > 5e-6 && two_part < 10e-6,
          "native 64 KiB at 2 ranks: %.3g s on one line, %.3g s with tau_large (ran 7.3e-06)",
          linear, two_part);
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 2, .topo = &two}, &m);
    CHECK(m.tau_large == 0, "machine_for two nodes keeps tau_large %g", m.tau_large);
}

/* Native's calls of 1 B measured at MPI_Init (xchg_machine_t.native_small): a floor under native's
 * price on communicators of the measured size that move bytes, and nothing elsewhere. The case
 * recorded on a 2-core Xeon VM (MPICH, 2 ranks): beta 0.449 us, MPI_Allgather of 1 B measured
 * 0.74 us, priced 0.45 by the model. */
static void check_native_small(void)
{
    xchg_machine_t m = {.beta = 4.49e-7, .tau = 2.89e-10, .rho = 7.29e-11};
    xchg_params_t params = {0};
    xchg_call_t call = make_call(XCHG_ALLGATHER, 2, 1);
    double modelled = xchg_cost_native(&call, &m, &params), t;

    m.native_small[XCHG_ALLGATHER] = 7.4e-7;
    m.native_small_ranks = 2;
    t = xchg_cost_native(&call, &m, &params);
    CHECK(modelled < 7.4e-7 && t == 7.4e-7, "native 1 B allgather: %.3g s, modelled %.3g", t,
          modelled);
    call = make_call(XCHG_ALLGATHER, 2, 0);
    t = xchg_cost_native(&call, &m, &params);
    CHECK(t < 7.4e-7, "native allgather of 0 B keeps its model: %.3g s", t);
    call = make_call(XCHG_ALLTOALL, 2, 1);
    t = xchg_cost_native(&call, &m, &params);
    CHECK(t < 7.4e-7, "no alltoall measured: the model's %.3g s", t);
    call = make_call(XCHG_ALLGATHER, 4, 1);
    t = xchg_cost_native(&call, &m, &params);
    CHECK(t != 7.4e-7, "4 ranks are not the 2 measured: %.3g s", t);
    call = make_call(XCHG_ALLGATHER, 2, 65536);
    t = xchg_cost_native(&call, &m, &params);
    CHECK(t > 7.4e-7, "native allgather of 64 KiB above the floor: %.3g s", t);
    /* and of 4 KiB blocks (native_mid): the case recorded on the 2-core EPYC VM (MPICH, 2
     * ranks), MPI_Allgather of 4 KiB measured 10.5 us; linear between the two sizes, the
     * larger's beyond it while the model prices less */
    m.native_mid[XCHG_ALLGATHER] = 10.5e-6;
    call = make_call(XCHG_ALLGATHER, 2, XCHG_NATIVE_MID_BYTES);
    t = xchg_cost_native(&call, &m, &params);
    CHECK(t == 10.5e-6, "native 4 KiB allgather: %.3g s, want the measured 1.05e-05", t);
    call = make_call(XCHG_ALLGATHER, 2, 2048);
    t = xchg_cost_native(&call, &m, &params);
    CHECK(fabs(t - (7.4e-7 + (10.5e-6 - 7.4e-7) * 2047.0 / 4095.0)) < 1e-12,
          "native 2 KiB allgather: %.4g s, want halfway between the two measured", t);
    call = make_call(XCHG_ALLGATHER, 2, 8192);
    t = xchg_cost_native(&call, &m, &params);
    CHECK(t == 10.5e-6, "native 8 KiB allgather: %.3g s, want the 4 KiB floor", t);
    call = make_call(XCHG_ALLGATHER, 2, 1);
    t = xchg_cost_native(&call, &m, &params);
    CHECK(t == 7.4e-7, "native 1 B allgather with both measured: %.3g s", t);
    call = make_call(XCHG_ALLGATHER, 4, 4096);
    t = xchg_cost_native(&call, &m, &params);
    CHECK(t != 10.5e-6, "4 ranks are not the 2 measured at 4 KiB: %.3g s", t);
}

/* Native's MPI_Allgather under Open MPI's rules (cost_native.c): recursive doubling (circulant
 * k = 1) on a power-of-two communicator above 2 ranks at every size, where MPICH's take the ring
 * from p b = 512 KiB; elsewhere the two agree. On the emulated cluster's constants (one link
 * per node), 64 KiB at 8 ranks: recursive doubling priced about 3 times the ring, as measured. */
static void check_native_openmpi(void)
{
    static const xchg_topo_t uneven = {
        .nnodes = 4, .min_node_ranks = 1, .max_node_ranks = 3, .consecutive = 1};
    xchg_machine_t mpich = {.beta = 4.8e-6, .tau = 3.5e-10, .beta_inter = 2.6e-5,
                            .tau_inter = 7.06e-8, .gap_inter = 3.6e-5, .inject = 1,
                            .rho = 2.4e-11},
                   ompi = mpich;
    xchg_params_t params = {0}, one = {.nports = 1};
    ompi.native_rules = XCHG_NATIVE_OPENMPI;
    for (int p = 2; p <= 16; p++)
        for (size_t b = 1; b <= (1u << 18); b *= 64) {
            xchg_call_t call = call_on(XCHG_ALLGATHER, p, b, &uneven);
            double as_mpich = xchg_cost_native(&call, &mpich, &params),
                   as_ompi = xchg_cost_native(&call, &ompi, &params),
                   ring = xchg_cost_allgather_ring(&call, &mpich, &params),
                   doubling = xchg_cost_allgather_circulant(&call, &mpich, &one);
            int pow2 = p > 2 && (p & (p - 1)) == 0;
            CHECK(as_ompi == (pow2 ? doubling : as_mpich),
                  "Open MPI's native allgather p=%d b=%zu: %.6g, expected %.6g", p, b, as_ompi,
                  pow2 ? doubling : as_mpich);
            if (pow2 && (size_t)p * b >= 524288)
                CHECK(as_mpich == ring, "MPICH's native allgather p=%d b=%zu: %.6g, the ring's %.6g",
                      p, b, as_mpich, ring);
            one.nports = 1;
        }
    {
        xchg_call_t call = call_on(XCHG_ALLGATHER, 8, 65536, &uneven);
        double as_ompi = xchg_cost_native(&call, &ompi, &params),
               ring = xchg_cost_allgather_ring(&call, &ompi, &params);
        CHECK(as_ompi > 2.5 * ring, "Open MPI's 64 KiB allgather on 3,2,2,1: %.6g, the ring %.6g",
              as_ompi, ring);
    }
}

/* One node prices with beta and tau, several nodes with beta_inter and tau_inter. */
static void check_two_levels(void)
{
    static const xchg_topo_t one = {
        .nnodes = 1, .min_node_ranks = 8, .max_node_ranks = 8, .consecutive = 1};
    static const xchg_topo_t two = {
        .nnodes = 2, .min_node_ranks = 4, .max_node_ranks = 4, .consecutive = 1};
    static const int sizes[] = {2, 3, 8, 17, 100};
    static const size_t blocks[] = {1, 300, 1 << 16};
    const xchg_machine_t levels = {.beta = 1e-6,
                                   .tau = 1e-10,
                                   .rho = 5e-11,
                                   .port_share = 0.5,
                                   .beta_inter = 7e-6,
                                   .tau_inter = 8e-10};
    const xchg_machine_t intra = {.beta = 1e-6, .tau = 1e-10, .rho = 5e-11, .port_share = 0.5};
    const xchg_machine_t inter = {.beta = 7e-6, .tau = 8e-10, .rho = 5e-11, .port_share = 0.5};
    xchg_machine_t unset = intra, m;

    /* the constants */
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 8, .topo = &two}, &levels);
    CHECK(m.beta == 7e-6 && m.tau == 8e-10 && m.rho == 5e-11 && m.port_share == 0.5 &&
              m.node_share == 0,
          "machine_for two nodes: expected beta 7e-6 tau 8e-10, got %g %g (rho %g s %g c %g)",
          m.beta, m.tau, m.rho, m.port_share, m.node_share);
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 8, .topo = &two}, &m);
    CHECK(m.beta == 7e-6 && m.tau == 8e-10, "machine_for applied twice: got %g %g", m.beta, m.tau);
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 8, .topo = &one}, &levels);
    CHECK(m.beta == 1e-6 && m.tau == 1e-10, "machine_for one node: got %g %g", m.beta, m.tau);
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 8, .topo = NULL}, &levels);
    CHECK(m.beta == 1e-6 && m.tau == 1e-10, "machine_for no topology: got %g %g", m.beta, m.tau);
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 8, .topo = &two}, &unset);
    CHECK(m.beta == 1e-6 && m.tau == 1e-10,
          "machine_for inter 0: expected the intra constants, got %g %g", m.beta, m.tau);
    unset.beta_inter = 2e-6; /* only the start-up given */
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 8, .topo = &two}, &unset);
    CHECK(m.beta == 2e-6 && m.tau == 1e-10, "machine_for beta_inter only: got %g %g", m.beta,
          m.tau);

    /* every model */
    for (size_t i = 0; i < NMODELS; i++)
        for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++)
            for (size_t j = 0; j < sizeof blocks / sizeof blocks[0]; j++) {
                int p = sizes[a];
                xchg_call_t flat = call_on(models[i].coll, p, blocks[j], NULL);
                xchg_call_t on_one = call_on(models[i].coll, p, blocks[j], &one);
                xchg_call_t on_two = call_on(models[i].coll, p, blocks[j], &two);
                xchg_params_t got, want;
                double t, w;

                t = priced(i, &flat, &levels, &got);
                w = priced(i, &flat, &intra, &want);
                CHECK(t == w && memcmp(&got, &want, sizeof got) == 0,
                      "%s p=%d b=%zu, no topology: %.12g, expected the intra-node %.12g",
                      models[i].name, p, blocks[j], t, w);
                t = priced(i, &on_one, &levels, &got);
                CHECK(t == w && memcmp(&got, &want, sizeof got) == 0,
                      "%s p=%d b=%zu, one node: %.12g, expected the intra-node %.12g",
                      models[i].name, p, blocks[j], t, w);
                t = priced(i, &on_two, &levels, &got);
                w = priced(i, &flat, &inter, &want);
                CHECK(t == w && memcmp(&got, &want, sizeof got) == 0,
                      "%s p=%d b=%zu, two nodes: %.12g r=%d k=%d, expected the inter-node %.12g "
                      "r=%d k=%d",
                      models[i].name, p, blocks[j], t, got.radix, got.nports, w, want.radix,
                      want.nports);
                CHECK(w > priced(i, &flat, &intra, &want) || blocks[j] * (size_t)p == 0 ||
                          (p == 2 && isinf(w) && strstr(models[i].name, "twophase")),
                      "%s p=%d b=%zu: the inter-node constants should cost more", models[i].name, p,
                      blocks[j]);
            }
}

/* The injection limit: node_share, the round, pairwise's k against every k (its node load: the
 * busiest node's n (p - n) messages out), and every model. */
static void check_injection(void)
{
    static const xchg_topo_t one = {
        .nnodes = 1, .min_node_ranks = 8, .max_node_ranks = 8, .consecutive = 1};
    static const xchg_topo_t four = {
        .nnodes = 4, .min_node_ranks = 2, .max_node_ranks = 4, .consecutive = 1};
    static const xchg_topo_t wide = {
        .nnodes = 8, .min_node_ranks = 1, .max_node_ranks = 64, .consecutive = 1};
    /* c = node_share = 64 / inject: 0.5, 2 (between s = 1 and 4), 3.56 (just under s = 4: k
     * from 1 to 6 are limited by the node, above by the ports), 4, 8 */
    static const int limits[] = {128, 32, 18, 16, 8};
    static const size_t sizes[] = {1, 64, 4096, 1 << 20};
    const xchg_machine_t perfect = {.beta = 1e-6, .tau = 1e-9, .port_share = 0.0, .inject = 4};
    xchg_machine_t m;
    double one_msg;

    /* node_share only across nodes; a round slowed only above the limit, by the ratio */
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 8, .topo = &one}, &perfect);
    CHECK(m.node_share == 0, "injection on one node: node_share %g, expected 0", m.node_share);
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 14, .topo = &four}, &perfect);
    CHECK(m.node_share == 1.0, "injection 4 ranks, limit 4: node_share %g, expected 1",
          m.node_share);
    one_msg = xchg_cost_round(&perfect, 1, 1000);
    CHECK(xchg_cost_round(&m, 1, 1000) == one_msg,
          "4 messages out of a node with a limit of 4: %g, expected one message's %g",
          xchg_cost_round(&m, 1, 1000), one_msg);
    CHECK(fabs(xchg_cost_round(&m, 3, 1000) - (1e-6 + 3 * 1000 * 1e-9)) < 1e-18,
          "12 messages out of a node with a limit of 4: %.12g, expected 3 times the bytes",
          xchg_cost_round(&m, 3, 1000));
    m.node_share = 0.5; /* a limit of 8 */
    CHECK(xchg_cost_round(&m, 2, 1000) == one_msg &&
              fabs(xchg_cost_round(&m, 4, 1000) - (1e-6 + 2 * 1000 * 1e-9)) < 1e-18,
          "limit 8: 8 messages cost one message's time (%g, %g), 16 twice its bytes (%.12g)",
          xchg_cost_round(&m, 2, 1000), one_msg, xchg_cost_round(&m, 4, 1000));

    /* by hand: 8 ranks on nodes of 3, 2, 2, 1, one link per node (inject 1), k = 1: node 0
     * sends 3 x 5 = 15 messages out in 7 rounds, so 7 beta + 15 messages' bytes */
    {
        static const xchg_topo_t uneven = {
            .nnodes = 4, .min_node_ranks = 1, .max_node_ranks = 3, .consecutive = 1};
        const xchg_machine_t link = {.beta = 1e-6, .tau = 1e-9, .port_share = 1.0, .inject = 1};
        xchg_call_t call = call_on(XCHG_ALLTOALL, 8, 1000, &uneven);
        xchg_params_t params = {.nports = 1};
        double t = xchg_cost_alltoall_pairwise(&call, &link, &params),
               expect = 7 * 1e-6 + 15 * 1000 * 1e-9;
        CHECK(fabs(t - expect) < 1e-15,
              "pairwise k=1 on 3,2,2,1 with inject 1: %.12g, expected %.12g", t, expect);
    }

    /* by hand: the ring on 3,2,2,1 (consecutive) sends one message out of each node a step: 7
     * steps of one message, the limit of 1 costs nothing; interleaved, the bound of 3 a step */
    {
        static const xchg_topo_t consecutive = {
            .nnodes = 4, .min_node_ranks = 1, .max_node_ranks = 3, .consecutive = 1};
        static const xchg_topo_t interleaved = {
            .nnodes = 4, .min_node_ranks = 1, .max_node_ranks = 3, .consecutive = 0};
        const xchg_machine_t link = {.beta = 1e-6, .tau = 1e-9, .port_share = 1.0, .inject = 1};
        xchg_call_t call = call_on(XCHG_ALLGATHER, 8, 1000, &consecutive);
        xchg_params_t params = {0};
        double t = xchg_cost_allgather_ring(&call, &link, &params);
        CHECK(fabs(t - 7 * (1e-6 + 1000 * 1e-9)) < 1e-15,
              "ring on 3,2,2,1 consecutive, inject 1: %.12g, expected %.12g", t,
              7 * (1e-6 + 1000 * 1e-9));
        call = call_on(XCHG_ALLGATHER, 8, 1000, &interleaved);
        t = xchg_cost_allgather_ring(&call, &link, &params);
        CHECK(fabs(t - 7 * (1e-6 + 3 * 1000 * 1e-9)) < 1e-15,
              "ring on 3,2,2,1 interleaved, inject 1: %.12g, expected %.12g", t,
              7 * (1e-6 + 3 * 1000 * 1e-9));
    }

    /* by hand: the emulated cluster's 100 Mbit/s links (MPI_Init's constants, stop 84), one
     * link per node, MPI_Alltoall of 512 KiB blocks on 3,2,2,1: its messages between nodes are
     * cut, no crowd forms, and the start-ups choose all of a rank's messages at once (k = 7);
     * the same links priced as a fast network's, messages whole, keep the allowance for
     * crowding: at 16 MiB blocks it outweighs the start-ups that k = 7 saves (2 % of 15
     * messages' bytes against the start-ups that fewer rounds save), and fewer messages at
     * once win (k = 2 here) */
    {
        static const xchg_topo_t uneven = {
            .nnodes = 4, .min_node_ranks = 1, .max_node_ranks = 3, .consecutive = 1};
        const xchg_machine_t slow = {.beta = 4.8e-6, .tau = 3.5e-10, .port_share = 0.0,
                                     .beta_inter = 2.6e-5, .tau_inter = 7.06e-8,
                                     .gap_inter = 3.6e-5, .inject = 1, .rho = 2.4e-11};
        xchg_machine_t fast = slow;
        xchg_call_t call = call_on(XCHG_ALLTOALL, 8, 512 << 10, &uneven);
        xchg_params_t params = {0};
        fast.tau_inter = 8e-11;
        fast.gap_inter = 5e-7;
        CHECK(xchg_cut_inter(&slow) > 0 && xchg_cut_inter(&fast) == 0,
              "the slow links should cut (%zu), the fast keep messages whole (%zu)",
              xchg_cut_inter(&slow), xchg_cut_inter(&fast));
        xchg_cost_alltoall_pairwise(&call, &slow, &params);
        CHECK(params.nports == 7, "pairwise on cut links, 512 KiB: k=%d, expected 7",
              params.nports);
        call = call_on(XCHG_ALLTOALL, 8, 16 << 20, &uneven);
        params.nports = 0;
        xchg_cost_alltoall_pairwise(&call, &slow, &params);
        CHECK(params.nports == 7, "pairwise on cut links, 16 MiB: k=%d, expected 7", params.nports);
        params.nports = 0;
        xchg_cost_alltoall_pairwise(&call, &fast, &params);
        CHECK(params.nports < 7,
              "pairwise on a fast network, 16 MiB: k=%d, expected fewer "
              "than 7 (the allowance for crowding)",
              params.nports);
    }

    /* pairwise: the least time over every k, the node's load with its allowance for crowding
     * (2 % at k = p - 1, none at k = 1, linear between: cost_base.c; none where messages
     * between nodes are cut) */
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++)
        for (size_t a = 0; a < NMACHINES; a++)
            for (int p = 5; p <= 300; p += p < 40 ? 1 : 7)
                for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
                    xchg_machine_t limited = machines[a];
                    xchg_call_t call = call_on(XCHG_ALLTOALL, p, sizes[i], &wide);
                    xchg_params_t params = {0};
                    double t, rounds_time[300], least = INFINITY;
                    int chosen = 0;
                    limited.inject = limits[l];
                    t = xchg_cost_alltoall_pairwise(&call, &limited, &params);
                    m = xchg_machine_for(&call, &limited);
                    /* the busiest node (64 ranks, at most p) sends each of its ranks'
                     * messages to every rank outside it once: n (p - n) of them through a
                     * link that carries `inject` at full speed */
                    int n = p < 64 ? p : 64;
                    double node = (double)n * (p - n) / limits[l];
                    for (int k = 1; k <= p - 1; k++) {
                        int rounds = 0;
                        double ports = 0.0;
                        for (int sent = 0; sent < p - 1; sent += k) { /* every round, a */
                            rounds++;                                 /* short last one too, */
                            ports += 1.0 + m.port_share * (k - 1);    /* priced at k ports */
                        }
                        double crowded = node * (1.0 + (xchg_cut_inter(&m) == 0 ? 0.02 : 0.0) *
                                                           (k - 1) / (p - 2));
                        rounds_time[k] = rounds * m.beta + (double)sizes[i] * m.tau *
                                                               (crowded > ports ? crowded : ports);
                        least = rounds_time[k] < least ? rounds_time[k] : least;
                    }
                    for (int k = p - 1; k >= 1; k--) /* the smallest k of the least time */
                        if (rounds_time[k] <= least)
                            chosen = k;
                    double expect = rounds_time[chosen] + (double)sizes[i] * m.rho;
                    CHECK(params.nports == chosen && fabs(t - expect) <= 1e-12 * expect,
                          "pairwise, limit %d, machine %zu, p=%d b=%zu: k=%d t=%.12g, every k: "
                          "k=%d t=%.12g (least %.12g)",
                          limits[l], a, p, sizes[i], params.nports, t, chosen, expect, least);
                }

    /* every model costs more with a tighter limit, never less; the same on one node. The
     * layout is interleaved: on consecutive nodes the ring sends one message out of a node a
     * step, which a limit of 1 does not slow (checked by hand above) */
    for (size_t i = 0; i < NMODELS; i++)
        for (int p = 8; p <= 64; p *= 2) {
            xchg_topo_t four_mixed = four;
            four_mixed.consecutive = 0;
            xchg_call_t across = call_on(models[i].coll, p, 4096, &four_mixed);
            xchg_call_t inside = call_on(models[i].coll, p, 4096, &one);
            xchg_machine_t limited = perfect;
            xchg_params_t params;
            double free_time, limited_time;
            limited.inject = 0;
            free_time = priced(i, &across, &limited, &params);
            limited.inject = 1;
            limited_time = priced(i, &across, &limited, &params);
            CHECK(limited_time > free_time,
                  "%s p=%d: a limit of 1 across 4 nodes should cost more: %.12g, without %.12g",
                  models[i].name, p, limited_time, free_time);
            CHECK(priced(i, &inside, &limited, &params) == priced(i, &inside, &perfect, &params),
                  "%s p=%d: the limit must not touch one node", models[i].name, p);
        }
}

/* The shm algorithms' model and predicate (tuning/cost_shm.c, algos/sched/shm.h): passes
 * (synchronisations) and bytes copied by hand, the pieces past the limit, and the refusals. */
static double shm_price(int coll, int p, size_t b, size_t limit, size_t h1, size_t h2,
                        size_t largest, const xchg_machine_t *m, int *applies)
{
    xchg_topo_t topo = {.nnodes = 1, .min_node_ranks = p, .max_node_ranks = p, .shm_bytes = limit};
    xchg_call_t call = {.coll = coll,
                        .comm_size = p,
                        .topo = &topo,
                        .block_bytes = b,
                        .max_send_bytes = h1,
                        .max_recv_bytes = h2,
                        .max_block_bytes = largest};
    xchg_params_t params = {0};
    const char *why = "";
    int algo = xchg_algo_find(coll, "shm");
    *applies = xchg_algos[algo].applies(&call, &params, &why);
    return xchg_algos[algo].cost(&call, m, &params);
}

static void check_shm(void)
{
    xchg_machine_t m = {.beta = 1e-6, .tau = 1e-9, .rho = 1e-10};
    int ok;
    double t;

    /* alltoall, p = 4, 1000-byte blocks, one pass: beta + (2 * 3 + 1) * 1000 rho */
    t = shm_price(XCHG_ALLTOALL, 4, 1000, 1 << 20, 0, 0, 0, &m, &ok);
    CHECK(ok && fabs(t - (1e-6 + 7000 * 1e-10)) < 1e-15, "shm alltoall p=4 b=1000: %g", t);
    /* limit 4 KiB: 16 slots of 256 bytes, 1000 bytes in 4 passes */
    t = shm_price(XCHG_ALLTOALL, 4, 1000, 4096, 0, 0, 0, &m, &ok);
    CHECK(ok && fabs(t - (4e-6 + 7000 * 1e-10)) < 1e-15, "shm alltoall pieces: %g", t);
    /* a measured pass (sync) prices each pass instead of beta */
    m.sync = 2.5e-7;
    t = shm_price(XCHG_ALLTOALL, 4, 1000, 4096, 0, 0, 0, &m, &ok);
    CHECK(ok && fabs(t - (4 * 2.5e-7 + 7000 * 1e-10)) < 1e-15, "shm alltoall pieces, sync: %g", t);
    m.sync = 0;
    CHECK(xchg_shm_piece(XCHG_ALLTOALL, 4, 4096) == 256 &&
              xchg_shm_piece(XCHG_ALLTOALL, 3, 4096) == 448 &&
              xchg_shm_piece(XCHG_ALLGATHER, 3, 4096) == 1344 &&
              xchg_shm_piece(XCHG_ALLGATHER, 100, 4096) == 40,
          "shm pieces: %zu %zu %zu %zu", xchg_shm_piece(XCHG_ALLTOALL, 4, 4096),
          xchg_shm_piece(XCHG_ALLTOALL, 3, 4096), xchg_shm_piece(XCHG_ALLGATHER, 3, 4096),
          xchg_shm_piece(XCHG_ALLGATHER, 100, 4096));
    /* allgather, p = 8, 64 KiB under 1 MiB: one pass, 8 blocks copied, the half beyond a
     * rank's 256 KiB of cache slowed by 8 / 3: eight ranks copy at once, more than the node's
     * memory serves at full speed (NODE_COPY_STREAMS, 3) */
    t = shm_price(XCHG_ALLGATHER, 8, 65536, 1 << 20, 0, 0, 0, &m, &ok);
    CHECK(ok && fabs(t - (1e-6 + (262144 + 262144 * 8.0 / 3) * 1e-10)) < 1e-15,
          "shm allgather p=8: %g", t);
    /* alltoallv, p = 4, 1 MiB: regions of 262144 bytes, header 64; h1 fits */
    CHECK(xchg_shm_header_bytes(4) == 64 && xchg_shm_header_bytes(5) == 128 &&
              xchg_shm_region(4, 1 << 20) == 262144 && xchg_shm_region(3, 1000) == 320,
          "shm header %zu %zu region %zu %zu", xchg_shm_header_bytes(4), xchg_shm_header_bytes(5),
          xchg_shm_region(4, 1 << 20), xchg_shm_region(3, 1000));
    /* what a pass asks of a half (xchg_shm_need): p^2 and p blocks; for alltoallv a region
     * that holds the header and the most a sender writes, for every p and a few amounts; an
     * amount that overflows asks SIZE_MAX */
    CHECK(xchg_shm_need(XCHG_ALLTOALL, 3, 100, 0) == 900 &&
              xchg_shm_need(XCHG_ALLGATHER, 3, 100, 0) == 300 &&
              xchg_shm_need(XCHG_ALLTOALLV, 4, 0, 1000) == 4 * (64 + 64 + 1000) &&
              xchg_shm_need(XCHG_ALLTOALL, 4, SIZE_MAX / 8, 0) == SIZE_MAX &&
              xchg_shm_need(XCHG_ALLGATHER, 4, SIZE_MAX / 2, 0) == SIZE_MAX &&
              xchg_shm_need(XCHG_ALLTOALLV, 4, 0, SIZE_MAX / 4) == SIZE_MAX,
          "shm need: %zu %zu %zu", xchg_shm_need(XCHG_ALLTOALL, 3, 100, 0),
          xchg_shm_need(XCHG_ALLGATHER, 3, 100, 0), xchg_shm_need(XCHG_ALLTOALLV, 4, 0, 1000));
    for (int p = 2, bad = 0; p <= 64 && !bad; p++) {
        static const size_t most[] = {0, 1, 63, 64, 1000, 65536, 1 << 20};
        for (size_t i = 0; i < sizeof most / sizeof most[0] && !bad; i++) {
            size_t half = xchg_shm_need(XCHG_ALLTOALLV, p, 0, most[i]);
            bad = xchg_shm_region(p, half) < xchg_shm_header_bytes(p) + most[i];
            CHECK(!bad, "shm need p=%d: a region of %zu for a header of %zu and %zu bytes", p,
                  xchg_shm_region(p, half), xchg_shm_header_bytes(p), most[i]);
        }
    }
    /* h1 + h2 less the block to self, copied once: the least of the largest message 40000
     * and the mean blocks 100000 / 4 and 50000 / 4 */
    t = shm_price(XCHG_ALLTOALLV, 4, 0, 1 << 20, 100000, 50000, 40000, &m, &ok);
    CHECK(ok && fabs(t - (1e-6 + 137500 * 1e-10)) < 1e-15, "shm alltoallv fits: %g", t);
    /* uniform blocks of 16 KiB at p = 2: 3 blocks copied, as the alltoall of them */
    t = shm_price(XCHG_ALLTOALLV, 2, 0, 1 << 20, 32768, 32768, 16384, &m, &ok);
    CHECK(ok && fabs(t - shm_price(XCHG_ALLTOALL, 2, 16384, 1 << 20, 0, 0, 0, &m, &ok)) < 1e-15 &&
              fabs(t - (1e-6 + 49152 * 1e-10)) < 1e-15,
          "shm alltoallv uniform p=2: %g", t);
    /* h1 beyond the region: pieces of (262144 - 64) / 4 = 65520 bytes, 300000 in 5 more; the
     * block to self 100000 */
    t = shm_price(XCHG_ALLTOALLV, 4, 0, 1 << 20, 400000, 400000, 300000, &m, &ok);
    CHECK(ok && fabs(t - (6e-6 + (262144 + 437856 * 4.0 / 3) * 1e-10)) < 1e-15,
          "shm alltoallv pieces: %g", t);
    /* a byte read out of the segment costs rho like any other, whatever tau_large (the MPI
     * library's single copy between cores): with xchg_copy the reads of what another core had
     * just written ran at the local copies' rate (design.md, "Copies") */
    m.tau_large = 3e-10;
    t = shm_price(XCHG_ALLTOALL, 4, 1000, 1 << 20, 0, 0, 0, &m, &ok);
    CHECK(ok && fabs(t - (1e-6 + 7000 * 1e-10)) < 1e-15, "shm alltoall p=4 b=1000, tau_large: %g",
          t);
    t = shm_price(XCHG_ALLTOALLV, 4, 0, 1 << 20, 100000, 50000, 40000, &m, &ok);
    CHECK(ok && fabs(t - (1e-6 + (100000 + 37500) * 1e-10)) < 1e-15,
          "shm alltoallv fits, tau_large: %g", t);
    t = shm_price(XCHG_ALLGATHER, 4, 1000, 1 << 20, 0, 0, 0, &m, &ok);
    CHECK(ok && fabs(t - (1e-6 + 4000 * 1e-10)) < 1e-15, "shm allgather p=4 b=1000, tau_large: %g",
          t);
    m.tau_large = 0;
    /* refusals: no shared memory; slots that do not fit; p = 1 always served (a copy) */
    t = shm_price(XCHG_ALLTOALL, 4, 8, 0, 0, 0, 0, &m, &ok);
    CHECK(!ok && !(t < INFINITY), "shm without shared memory: applies %d, %g", ok, t);
    t = shm_price(XCHG_ALLTOALL, 100, 8, 4096, 0, 0, 0, &m, &ok);
    CHECK(!ok && !(t < INFINITY), "shm alltoall p=100 in 4 KiB: applies %d, %g", ok, t);
    t = shm_price(XCHG_ALLTOALLV, 32, 8, 4096, 0, 0, 0, &m, &ok);
    CHECK(!ok && !(t < INFINITY), "shm alltoallv p=32 in 4 KiB: applies %d, %g", ok, t);
    t = shm_price(XCHG_ALLGATHER, 1, 500, 0, 0, 0, 0, &m, &ok);
    CHECK(ok && fabs(t - 500 * 1e-10) < 1e-18, "shm p=1: applies %d, %g", ok, t);
    /* the node's copies: rho a byte up to 3 ranks copying at once or up to 256 KiB a rank,
     * beyond that n / 3 times slower, n the busiest node's ranks (the communicator's size where
     * no topology is known) */
    {
        xchg_topo_t two = {.nnodes = 1, .min_node_ranks = 2, .max_node_ranks = 2};
        xchg_topo_t uneven = {.nnodes = 4, .min_node_ranks = 1, .max_node_ranks = 6};
        xchg_call_t c2 = {.comm_size = 2, .topo = &two}, c16 = {.comm_size = 16},
                    cu = {.comm_size = 13, .topo = &uneven};
        double two_ranks = xchg_cost_node_copies(&c2, &m, 1e6),
               cached = xchg_cost_node_copies(&c16, &m, 2e5),
               crowded = xchg_cost_node_copies(&c16, &m, 1e6),
               busiest = xchg_cost_node_copies(&cu, &m, 1e6);
        CHECK(fabs(two_ranks - 1e6 * 1e-10) < 1e-18, "node copies, 2 ranks: %g", two_ranks);
        CHECK(fabs(cached - 2e5 * 1e-10) < 1e-18, "node copies, 16 ranks, 200 kB: %g", cached);
        CHECK(fabs(crowded - (262144 + 737856 * 16.0 / 3) * 1e-10) < 1e-18,
              "node copies, 16 ranks, 1 MB: %g", crowded);
        CHECK(fabs(busiest - (262144 + 737856 * 2.0) * 1e-10) < 1e-18,
              "node copies, busiest node of 6: %g", busiest);
    }
}

/* The gap at a node (gap_inter): node_gap only across nodes, a round slowed by the busiest
 * node's messages, every model priced no lower with it, and the emulated cluster's order. */
static void check_gap(void)
{
    static const xchg_topo_t one = {
        .nnodes = 1, .min_node_ranks = 8, .max_node_ranks = 8, .consecutive = 1};
    /* the emulated cluster: 4 nodes of 3, 2, 2 and 1 ranks, each node's segment available */
    static const xchg_topo_t cluster = {.nnodes = 4,
                                        .min_node_ranks = 1,
                                        .max_node_ranks = 3,
                                        .consecutive = 1,
                                        .node_shm_bytes = 1 << 20};
    static const int sizes[] = {2, 8, 17};
    static const size_t blocks[] = {1, 300, 1 << 16};
    /* the calibration's constants on that cluster at 100 Mbit/s (Open MPI, XCHG_VERBOSE=1) */
    const xchg_machine_t measured = {.beta = 7.18e-6,
                                     .tau = 1.93e-10,
                                     .rho = 1.78e-11,
                                     .port_share = 1.0,
                                     .beta_inter = 3.25e-5,
                                     .tau_inter = 1.85e-10,
                                     .gap_inter = 1.7e-5};
    xchg_machine_t no_gap = measured, m;
    xchg_call_t call;
    xchg_params_t par;
    double node, radix, pairwise7, circ1, circ7;

    no_gap.gap_inter = 0;
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 8, .topo = &cluster}, &measured);
    CHECK(m.node_gap == 3 * 1.7e-5, "machine_for gap: node_gap %g, expected 3 ranks' %g",
          m.node_gap, 3 * 1.7e-5);
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 8, .topo = &cluster}, &m);
    CHECK(m.node_gap == 3 * 1.7e-5, "machine_for gap applied twice: %g", m.node_gap);
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 8, .topo = &one}, &measured);
    CHECK(m.node_gap == 0, "machine_for gap on one node: node_gap %g, expected 0", m.node_gap);
    m = xchg_machine_for(&(xchg_call_t){.comm_size = 8, .topo = NULL}, &measured);
    CHECK(m.node_gap == 0, "machine_for gap without a topology: node_gap %g", m.node_gap);

    /* a round of k messages per rank: beta + k node_gap once the gaps exceed the bytes */
    m = (xchg_machine_t){.beta = 1e-5, .tau = 1e-12, .port_share = 1.0, .node_gap = 4e-6};
    CHECK(fabs(xchg_cost_round(&m, 5, 1) - (1e-5 + 5 * 4e-6)) < 1e-15,
          "round of 5 with node_gap 4e-6: %.12g, expected %.12g", xchg_cost_round(&m, 5, 1),
          1e-5 + 5 * 4e-6);
    m.tau = 1e-6; /* the ports' bytes (5000 * 1e-6 * 5) exceed the gaps */
    CHECK(fabs(xchg_cost_round(&m, 5, 1000) - (1e-5 + 5 * 1000 * 1e-6)) < 1e-15,
          "round of 5 bound by the ports: %.12g", xchg_cost_round(&m, 5, 1000));

    /* every model: no cheaper with a gap, the same on one node */
    for (size_t i = 0; i < NMODELS; i++)
        for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++)
            for (size_t j = 0; j < sizeof blocks / sizeof blocks[0]; j++) {
                int p = sizes[a];
                xchg_call_t on_nodes = call_on(models[i].coll, p, blocks[j], &cluster);
                xchg_call_t on_one = call_on(models[i].coll, p, blocks[j], &one);
                xchg_params_t got, want;
                double t = priced(i, &on_nodes, &measured, &got),
                       w = priced(i, &on_nodes, &no_gap, &want);
                CHECK(t >= w && (t > w || p <= 3),
                      "%s p=%d b=%zu on nodes: %.12g with the gap, %.12g without", models[i].name,
                      p, blocks[j], t, w);
                t = priced(i, &on_one, &measured, &got);
                w = priced(i, &on_one, &no_gap, &want);
                CHECK(t == w && memcmp(&got, &want, sizeof got) == 0,
                      "%s p=%d b=%zu on one node: %.12g with the gap, %.12g without",
                      models[i].name, p, blocks[j], t, w);
            }

    /* The cluster at 1 B, measured (xchg-bench, forced, median of 3): node:leaders=1 167 us,
     * radix:r=2 245, native 281, pairwise:k=7 356 to 387. With the gap the models rank node,
     * radix and pairwise:k=7 in that order; without it pairwise:k=7 came first among the
     * flat ones (a rank's seven messages priced as one start-up). */
    call = call_on(XCHG_ALLTOALL, 8, 1, &cluster);
    par = (xchg_params_t){0};
    node = xchg_cost_node(&call, &measured, &par);
    par = (xchg_params_t){.radix = 2, .nports = 1};
    radix = xchg_cost_alltoall_radix(&call, &measured, &par);
    par = (xchg_params_t){.nports = 7};
    pairwise7 = xchg_cost_alltoall_pairwise(&call, &measured, &par);
    CHECK(node < radix && radix < pairwise7,
          "cluster 1 B alltoall with the gap: node %.3g radix:r=2 %.3g pairwise:k=7 %.3g s, "
          "expected that order",
          node, radix, pairwise7);
    par = (xchg_params_t){.radix = 2, .nports = 1};
    radix = xchg_cost_alltoall_radix(&call, &no_gap, &par);
    par = (xchg_params_t){.nports = 7};
    pairwise7 = xchg_cost_alltoall_pairwise(&call, &no_gap, &par);
    CHECK(pairwise7 < radix,
          "cluster 1 B alltoall without the gap: pairwise:k=7 %.3g radix %.3g (the old order)",
          pairwise7, radix);
    /* allgather at 1 B: node 195 to 227 us, native (Bruck, one message a round) 250, circulant
     * with all seven messages at once 369 to 385 */
    call = call_on(XCHG_ALLGATHER, 8, 1, &cluster);
    par = (xchg_params_t){.nports = 1};
    circ1 = xchg_cost_allgather_circulant(&call, &measured, &par);
    par = (xchg_params_t){.nports = 7};
    circ7 = xchg_cost_allgather_circulant(&call, &measured, &par);
    par = (xchg_params_t){0};
    node = xchg_cost_node(&call, &measured, &par);
    CHECK(node < circ1 && circ1 < circ7,
          "cluster 1 B allgather with the gap: node %.3g circulant:k=1 %.3g circulant:k=7 %.3g s, "
          "expected that order",
          node, circ1, circ7);
}

/* Messages between nodes are cut at 16 KiB where 16 KiB take at least 4 gaps on the link
 * (xchg_cut_inter): the emulated cluster's 100 Mbit/s and 1 Gbit/s links, not a fast network;
 * the gap falls back to beta_inter, then beta, and tau_inter to tau. */
static void check_cut(void)
{
    xchg_machine_t m = xchg_machine_default;
    struct {
        double beta, tau, beta_inter, tau_inter, gap_inter;
        size_t cut;
    } cases[] = {
        {3e-6, 2e-10, 1.6e-5, 7.0e-8, 2.6e-5,
         XCHG_CUT_INTER}, /* 100 Mbit/s: 1.15 ms, 4 gaps 104 us */
        {3e-6, 2e-10, 1.6e-5, 8.5e-9, 2.6e-5, XCHG_CUT_INTER}, /* 1 Gbit/s: 139 us against 104 */
        {3e-6, 2e-10, 1.6e-5, 8.5e-9, 3.5e-5, 0},              /* 139 us against 140: whole */
        {1e-6, 1e-10, 2e-6, 8e-11, 5e-7, 0},                   /* a fast network: 1.3 us */
        {1e-6, 1e-10, 3e-5, 1e-9, 1e-5, 0},                    /* node.sh's dear start-ups */
        {1e-6, 1e-10, 3e-5, 1e-7, 0, XCHG_CUT_INTER},          /* no gap: beta_inter's 120 us */
        {1e-6, 1e-10, 5e-4, 1e-7, 0, 0},                       /* beta_inter of 2 ms: whole */
        {1e-5, 1e-7, 0, 0, 0, XCHG_CUT_INTER},                 /* one level: beta and tau */
        {1e-3, 1e-7, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        m.beta = cases[i].beta;
        m.tau = cases[i].tau;
        m.beta_inter = cases[i].beta_inter;
        m.tau_inter = cases[i].tau_inter;
        m.gap_inter = cases[i].gap_inter;
        CHECK(xchg_cut_inter(&m) == cases[i].cut, "cut case %zu: %zu, expected %zu", i,
              xchg_cut_inter(&m), cases[i].cut);
    }
}

int main(void)
{
    check_pairwise();
    check_radix();
    check_radix_small();
    check_circulant();
    check_twophase();
    check_two_levels();
    check_native_small();
    check_native_openmpi();
    check_large_messages();
    check_cached_copies();
    check_injection();
    check_gap();
    check_cut();
    check_shm();
    return unit_finish("test_cost");
}

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
 *    inner algorithm is left to the selection.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../tuning/cost.h"

#include "unit.h"

static const xchg_machine_t machines[] = {
    {.beta = 3e-6, .tau = 2e-10, .rho = 1e-10, .port_share = 1.0}, /* the built-in constants */
    {.beta = 3e-6, .tau = 2e-10, .rho = 1e-10, .port_share = 0.0}, /* perfect ports */
    {.beta = 3e-6, .tau = 2e-10, .rho = 1e-10, .port_share = 0.5},
    {.beta = 1e-6, .tau = 1e-9, .rho = 0.0, .port_share = 2.0}, /* ports that interfere */
    {.beta = 5e-6, .tau = 1e-10, .rho = 0.0, .port_share = 4.0},
    {.beta = 1e-3, .tau = 1e-12, .rho = 0.0, .port_share = 1.0}, /* start-ups dominate */
    {.beta = 1e-9, .tau = 1e-6, .rho = 0.0, .port_share = 1.0},  /* bytes dominate */
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
                xchg_params_t params = {0, 0, 0};
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
            xchg_params_t params = {0, k, 0}, again;
            double t = xchg_cost_alltoallv_pairwise(&call, &machines[0], &params);
            int want = p <= 2 ? 1 : k < p - 1 ? k : p - 1;
            again = (xchg_params_t){0, want, 0};
            CHECK(params.nports == want &&
                      t == xchg_cost_alltoallv_pairwise(&call, &machines[0], &again),
                  "pairwise p=%d k=%d: returned k=%d, expected %d", p, k, params.nports, want);
        }
    {
        xchg_call_t call = make_call(XCHG_ALLTOALL, 65536, 8);
        xchg_params_t params = {0, 1000000, 0};
        xchg_cost_alltoall_pairwise(&call, &machines[0], &params);
        CHECK(params.nports == 65535, "pairwise p=65536 k=1000000: k=%d", params.nports);
    }
}

static double radix_time(int p, size_t b, const xchg_machine_t *m, int r, int k)
{
    xchg_call_t call = make_call(XCHG_ALLTOALL, p, b);
    xchg_params_t params = {r, k, 0};
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
                xchg_params_t params = {0, 0, 0};
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
                    xchg_params_t params = {0, given, 0};
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
            xchg_params_t params = {0, 0, 0};
            double t = xchg_cost_allgather_circulant(&call, &machines[m], &params), best = INFINITY;
            for (int k = 1; k <= 16 && k <= p - 1; k++) {
                xchg_params_t given = {0, k, 0};
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
    xchg_params_t params = {r, k, 0};
    double t;
    call.max_block_bytes = 4000; /* some skew */
    if (inner)
        params.inner = xchg_algo_find(XCHG_ALLTOALL, inner) + 1;
    t = xchg_cost_alltoallv_twophase(&call, &machines[0], &params);
    CHECK(params.radix == want_r && params.nports == want_k && isfinite(t),
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
        xchg_params_t params = {0, 1000000, xchg_algo_find(XCHG_ALLTOALL, "radix") + 1};
        xchg_cost_alltoallv_twophase(&call, &machines[0], &params);
        CHECK(params.radix == 0 && params.nports >= 1 && params.nports <= 99,
              "twophase p=100 inner=radix k=1000000: r=%d k=%d", params.radix, params.nports);
    }
}

int main(void)
{
    check_pairwise();
    check_radix();
    check_radix_small();
    check_circulant();
    check_twophase();
    return unit_finish("test_cost");
}

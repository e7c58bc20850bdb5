/*
 * test_fit: xchg-tune's arithmetic (tuning/fit.c) on exact inputs: points on a line give back
 * its beta and tau; the weights 1/t^2 (a hand-solved fit that the unweighted one does not give);
 * the refits of a negative beta or tau; the outlier rule (one outlier dropped, none among 3
 * points, at most a quarter of the points, a refit that fails keeps the fit before it); every
 * degenerate input a clear failure with every number 0, never a NaN; the sustained rate;
 * port_share; the table's rounding; the native curves' points.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../tuning/fit.h"
#include "unit.h"

/* a and b agree to a relative 1e-12 (absolutely when b is 0) */
static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-12 * (fabs(b) > 0 ? fabs(b) : 1);
}

static void check_fit(const char *what, const xchg_fit_t *f, double beta, double tau, int npoints,
                      int dropped)
{
    CHECK(f->ok, "%s: no fit", what);
    CHECK(close_to(f->beta, beta), "%s: beta %.17g, expected %.17g", what, f->beta, beta);
    CHECK(close_to(f->tau, tau), "%s: tau %.17g, expected %.17g", what, f->tau, tau);
    CHECK(f->npoints == npoints, "%s: %d points kept, expected %d", what, f->npoints, npoints);
    CHECK(f->dropped == dropped, "%s: %d dropped, expected %d", what, f->dropped, dropped);
}

/* Sizes 0, 1, 2, 4, ..., 4 MiB on the line beta + m tau give back beta and tau, residual 0. */
static void test_line(void)
{
    size_t bytes[24];
    double seconds[24], beta = 2e-6, tau = 1e-9;
    xchg_fit_t f;
    int n = 0, rc;
    bytes[n++] = 0;
    for (size_t m = 1; m <= ((size_t)4 << 20); m *= 2)
        bytes[n++] = m;
    for (int i = 0; i < n; i++)
        seconds[i] = beta + (double)bytes[i] * tau;
    rc = xchg_fit_linear(bytes, seconds, n, &f);
    CHECK(rc == XCHG_FIT_OK, "line: rc %d (%s)", rc, xchg_fit_error(rc));
    check_fit("line", &f, beta, tau, 24, 0);
    CHECK(f.rms < 1e-12 && f.worst < 1e-12, "line: residual rms %g worst %g", f.rms, f.worst);
}

/* (0, 1), (1, 2), (2, 4): with weights 1/t^2 the normal equations give beta = 32/33 and
 * tau = 14/11 (the unweighted fit is 5/6 and 3/2); relative residuals -1/33, 4/33, -4/33. */
static void test_weights(void)
{
    size_t bytes[3] = {0, 1, 2};
    double seconds[3] = {1, 2, 4};
    xchg_fit_t f;
    int rc = xchg_fit_linear(bytes, seconds, 3, &f);
    CHECK(rc == XCHG_FIT_OK, "weights: rc %d", rc);
    check_fit("weights", &f, 32.0 / 33, 14.0 / 11, 3, 0);
    CHECK(close_to(f.rms, sqrt(11.0) / 33), "weights: rms %.17g, expected sqrt(11)/33", f.rms);
    CHECK(close_to(f.worst, 4.0 / 33), "weights: worst %.17g, expected 4/33", f.worst);
}

/* (1, 1), (2, 3) lie on t = -1 + 2m: beta < 0, so tau alone, E / C = (5/3) / (13/9) = 15/13.
 * (1, 3), (2, 1): tau < 0, so beta alone, D / A = (4/3) / (10/9) = 6/5. */
static void test_refits(void)
{
    size_t bytes[2] = {1, 2};
    double rising[2] = {1, 3}, falling[2] = {3, 1};
    xchg_fit_t f;
    xchg_fit_linear(bytes, rising, 2, &f);
    check_fit("negative beta", &f, 0, 15.0 / 13, 2, 0);
    xchg_fit_linear(bytes, falling, 2, &f);
    check_fit("negative tau", &f, 6.0 / 5, 0, 2, 0);
}

static void test_outliers(void)
{
    size_t bytes[12] = {0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    size_t three[3] = {0, 100, 200};
    size_t eight[8] = {0, 1, 2, 4, 8, 16, 32, 64};
    size_t two_sizes[8] = {10, 10, 10, 10, 10, 10, 10, 20};
    double seconds[12], few[3] = {1, 20, 3}, capped[8], lone[8] = {1, 1, 1, 1, 1, 1, 1, 9};
    xchg_fit_t f;

    /* 12 points on t = 2 + m / 100, one of them twice as slow: dropped, the line back */
    for (int i = 0; i < 12; i++)
        seconds[i] = 2 + (double)bytes[i] / 100;
    seconds[5] *= 2;
    xchg_fit_linear(bytes, seconds, 12, &f);
    check_fit("one outlier", &f, 2, 0.01, 11, 1);

    /* 3 points: a quarter of them is none, so nothing is dropped (beta 823/805, tau 877/80500) */
    xchg_fit_linear(three, few, 3, &f);
    check_fit("three points", &f, 823.0 / 805, 877.0 / 80500, 3, 0);

    /* 8 points, the first three 3/2, 2 and 5 times as slow: the rule would drop all three, the
     * cap (8 / 4) stops it at two, so the third still pulls beta off 2 */
    for (int i = 0; i < 8; i++)
        capped[i] = 2 + (double)eight[i] / 100;
    capped[0] *= 1.5;
    capped[1] *= 2;
    capped[2] *= 5;
    xchg_fit_linear(eight, capped, 8, &f);
    check_fit("cap", &f, 2867424092763.0 / 1310312474921, 1381911887157.0 / 262062494984200, 6, 2);

    /* seven points at 10 B, one at 20 B far off: dropping it leaves one size, so the fit before
     * the drop stands (beta < 0 refitted: tau alone, 117/1142) */
    xchg_fit_linear(two_sizes, lone, 8, &f);
    check_fit("refit fails", &f, 0, 117.0 / 1142, 8, 0);
}

/* A failure: its code, ok 0 and every number 0 (no NaN). */
static void fails(const char *what, const size_t *bytes, const double *seconds, int n, int code)
{
    xchg_fit_t f;
    int rc;
    memset(&f, 0x7f, sizeof f); /* garbage the call must overwrite */
    rc = xchg_fit_linear(bytes, seconds, n, &f);
    CHECK(rc == code, "%s: rc %d (%s), expected %d (%s)", what, rc, xchg_fit_error(rc), code,
          xchg_fit_error(code));
    CHECK(!f.ok && f.beta == 0 && f.tau == 0 && f.rms == 0 && f.worst == 0 && f.npoints == 0 &&
              f.dropped == 0,
          "%s: ok %d beta %g tau %g rms %g worst %g npoints %d dropped %d", what, f.ok, f.beta,
          f.tau, f.rms, f.worst, f.npoints, f.dropped);
}

static void test_degenerate(void)
{
    size_t bytes[XCHG_FIT_MAX_POINTS + 1], equal[4] = {64, 64, 64, 64}, fives[5] = {5, 5, 5, 5, 5};
    double seconds[XCHG_FIT_MAX_POINTS + 1], times[4] = {1, 2, 3, 4},
                                             spread[5] = {1, 3, 7, 0.3, 11};
    double zero[3] = {1, 0, 3}, negative[3] = {1, -2, 3}, nan[3] = {1, NAN, 3},
           inf[3] = {1, INFINITY, 3};
    const char *texts[5];

    for (int i = 0; i <= XCHG_FIT_MAX_POINTS; i++) {
        bytes[i] = (size_t)i;
        seconds[i] = 1 + i;
    }
    fails("no point", bytes, seconds, 0, XCHG_FIT_TOO_FEW);
    fails("one point", bytes, seconds, 1, XCHG_FIT_TOO_FEW);
    fails("too many points", bytes, seconds, XCHG_FIT_MAX_POINTS + 1, XCHG_FIT_TOO_MANY);
    fails("a zero time", bytes, zero, 3, XCHG_FIT_BAD_TIME);
    fails("a negative time", bytes, negative, 3, XCHG_FIT_BAD_TIME);
    fails("a NaN time", bytes, nan, 3, XCHG_FIT_BAD_TIME);
    fails("an infinite time", bytes, inf, 3, XCHG_FIT_BAD_TIME);
    fails("all sizes equal", equal, times, 4, XCHG_FIT_ONE_SIZE);
    /* here rounding leaves the determinant of the normal equations a little above 0 */
    fails("all sizes 5", fives, spread, 5, XCHG_FIT_ONE_SIZE);
    /* the largest count is accepted */
    CHECK(xchg_fit_linear(bytes, seconds, XCHG_FIT_MAX_POINTS, &(xchg_fit_t){0}) == XCHG_FIT_OK,
          "%d points refused", XCHG_FIT_MAX_POINTS);

    /* every code has words of its own */
    for (int code = 0; code < 5; code++) {
        texts[code] = xchg_fit_error(code);
        for (int other = 0; other < code; other++)
            CHECK(strcmp(texts[code], texts[other]) != 0, "codes %d and %d: the same words '%s'",
                  other, code, texts[code]);
    }
}

/* The last two points' slope replaces tau when steeper than 1.25 tau. */
static void test_sustained(void)
{
    size_t bytes[4] = {0, 100, 200, 300};
    double steep[4] = {1, 2, 3, 6}, gentle[4] = {1, 2, 3, 4.2}, bad[4] = {1, 2, 3, NAN};
    size_t unsorted[4] = {0, 100, 300, 200};
    xchg_fit_t fit = {.beta = 1, .tau = 0.01, .ok = 1}, failed = {0};

    CHECK(close_to(xchg_fit_sustained_tau(bytes, steep, 4, &fit), 0.03),
          "3 s over 100 B against tau 0.01: %g, expected 0.03",
          xchg_fit_sustained_tau(bytes, steep, 4, &fit));
    CHECK(xchg_fit_sustained_tau(bytes, gentle, 4, &fit) == 0,
          "1.2 times tau is not steeper by a quarter: %g",
          xchg_fit_sustained_tau(bytes, gentle, 4, &fit));
    CHECK(xchg_fit_sustained_tau(bytes, steep, 4, &failed) == 0, "a failed fit gave a rate");
    CHECK(xchg_fit_sustained_tau(unsorted, steep, 4, &fit) == 0, "decreasing sizes gave a rate");
    CHECK(xchg_fit_sustained_tau(bytes, steep, 1, &fit) == 0, "one point gave a rate");
    CHECK(xchg_fit_sustained_tau(bytes, bad, 4, &fit) == 0, "a NaN time gave a rate");
}

static void test_port_share(void)
{
    double linear[4] = {1, 1.5, 2, 2.5}, uneven[3] = {1, 2, 2}, faster[2] = {2, 1},
           zero[3] = {1, 0, 2};
    double share = -7;
    int rc;

    /* T_k - T_1 = 0.5 (k - 1) and T_1 - beta = 1: 0.5; with beta = 0.5, 1 */
    rc = xchg_fit_port_share(linear, 4, 0, &share);
    CHECK(rc == 0 && close_to(share, 0.5), "linear, beta 0: rc %d, %g (expected 0.5)", rc, share);
    rc = xchg_fit_port_share(linear, 4, 0.5, &share);
    CHECK(rc == 0 && close_to(share, 1), "linear, beta 0.5: rc %d, %g (expected 1)", rc, share);
    /* y = 1, 1 at x = 1, 2: (1 + 2) / (1 + 4) = 0.6 */
    rc = xchg_fit_port_share(uneven, 3, 0, &share);
    CHECK(rc == 0 && close_to(share, 0.6), "uneven: rc %d, %g (expected 0.6)", rc, share);
    /* two messages faster than one: 0, not negative */
    rc = xchg_fit_port_share(faster, 2, 0, &share);
    CHECK(rc == 0 && share == 0, "faster: rc %d, %g (expected 0)", rc, share);

    share = -7;
    CHECK(xchg_fit_port_share(linear, 1, 0, &share) == -1 && share == -7, "kmax 1 was measured");
    CHECK(xchg_fit_port_share(linear, 4, 1, &share) == -1 && share == -7,
          "T_1 = beta was measured");
    CHECK(xchg_fit_port_share(zero, 3, 0, &share) == -1 && share == -7, "a zero time was measured");
    CHECK(xchg_fit_port_share(linear, 4, NAN, &share) == -1 && share == -7,
          "a NaN beta was measured");
}

static void test_round_and_curves(void)
{
    size_t buckets[4] = {0, 1, 2, 4};
    double seconds[4] = {1.23456e-6, -1, 2e-6, 3.33333e-6};
    xchg_native_point_t points[4];
    int n;

    CHECK(xchg_fit_round(1.23456e-6) == 1.235e-6, "1.23456e-6 rounded to %.17g",
          xchg_fit_round(1.23456e-6));
    CHECK(xchg_fit_round(98766) == 98770, "98766 rounded to %.17g", xchg_fit_round(98766));
    CHECK(xchg_fit_round(0) == 0, "0 rounded to %g", xchg_fit_round(0));

    /* the untimed bucket (negative) is left out, the others rounded */
    n = xchg_fit_curve_points(buckets, seconds, 4, points);
    CHECK(n == 3, "%d points, expected 3", n);
    if (n == 3) {
        CHECK(points[0].bytes == 0 && points[0].seconds == 1.235e-6, "point 0: %zu %.17g",
              points[0].bytes, points[0].seconds);
        CHECK(points[1].bytes == 2 && points[1].seconds == 2e-6, "point 1: %zu %.17g",
              points[1].bytes, points[1].seconds);
        CHECK(points[2].bytes == 4 && points[2].seconds == 3.333e-6, "point 2: %zu %.17g",
              points[2].bytes, points[2].seconds);
    }
}

int main(void)
{
    test_line();
    test_weights();
    test_refits();
    test_outliers();
    test_degenerate();
    test_sustained();
    test_port_share();
    test_round_and_curves();
    return unit_finish("test_fit");
}

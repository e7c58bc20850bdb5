/*
 * fit.c: the arithmetic of xchg-tune's measurements (fit.h): the weighted least-squares fit of
 * T(m) = beta + m tau with its outlier rule, the sustained rate of a link, port_share, and the
 * native curves' points. xchg-tune measures (MPI); everything here is a function of the numbers
 * it measured, so that the unit tests (tests/unit/test_fit.c) can check it on exact inputs.
 *
 * The fit minimises sum_i w_i (beta + m_i tau - t_i)^2 with w_i = 1 / t_i^2, the square of the
 * relative error of each point. With the weighted sums A = sum w, B = sum w m, C = sum w m^2,
 * D = sum w t, E = sum w m t, the normal equations give
 *     beta = (D C - E B) / (A C - B^2),   tau = (A E - B D) / (A C - B^2),
 * and A C - B^2 > 0 exactly when the points have two distinct sizes (Cauchy-Schwarz), which
 * is checked first, so that no division by zero can make a NaN.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"

/* A time the fit can weigh: finite and above 0. */
static int time_ok(double seconds)
{
    return isfinite(seconds) && seconds > 0;
}

/* Whether the points not dropped have two distinct sizes. */
static int two_sizes(const size_t *bytes, const int *drop, int n)
{
    int first = -1;
    for (int i = 0; i < n; i++) {
        if (drop[i])
            continue;
        if (first < 0)
            first = i;
        else if (bytes[i] != bytes[first])
            return 1;
    }
    return 0;
}

/* rms and worst relative residual of the kept points under fit. */
static void residuals(const size_t *bytes, const double *seconds, const int *drop, int n,
                      xchg_fit_t *fit)
{
    double sum2 = 0;
    fit->worst = 0;
    for (int i = 0; i < n; i++) {
        double rel = (fit->beta + (double)bytes[i] * fit->tau - seconds[i]) / seconds[i];
        if (drop[i])
            continue;
        sum2 += rel * rel;
        if (fabs(rel) > fit->worst)
            fit->worst = fabs(rel);
    }
    fit->rms = sqrt(sum2 / fit->npoints);
}

/* The weighted fit of the points not dropped (times checked by the caller). */
static int fit_weighted(const size_t *bytes, const double *seconds, const int *drop, int n,
                        xchg_fit_t *fit)
{
    double A = 0, B = 0, C = 0, D = 0, E = 0, det;

    memset(fit, 0, sizeof *fit);
    if (!two_sizes(bytes, drop, n))
        return XCHG_FIT_ONE_SIZE;
    /* the weighted sums of the normal equations */
    for (int i = 0; i < n; i++) {
        double u = 1.0 / seconds[i], x = (double)bytes[i];
        if (drop[i])
            continue;
        A += u * u;
        B += x * u * u;
        C += x * x * u * u;
        D += u;
        E += x * u;
        fit->npoints++;
    }
    det = A * C - B * B;
    if (!(det > 0)) { /* two sizes so far apart that the sums lose the difference */
        memset(fit, 0, sizeof *fit);
        return XCHG_FIT_ONE_SIZE;
    }
    fit->beta = (D * C - E * B) / det;
    fit->tau = (A * E - B * D) / det;
    /* the model's terms cannot be negative: refit with the other one alone */
    if (fit->beta < 0) {
        fit->beta = 0;
        fit->tau = E / C; /* C > 0: some size is above 0 */
    }
    if (fit->tau < 0) {
        fit->tau = 0;
        fit->beta = D / A;
    }
    residuals(bytes, seconds, drop, n, fit);
    fit->ok = 1;
    return XCHG_FIT_OK;
}

/* The kept point farthest off fit, relative to its time, or -1; its residual in *worst_rel. */
static int worst_point(const size_t *bytes, const double *seconds, const int *drop, int n,
                       const xchg_fit_t *fit, double *worst_rel)
{
    int worst = -1;
    *worst_rel = 0;
    for (int i = 0; i < n; i++) {
        double rel = fabs((fit->beta + (double)bytes[i] * fit->tau - seconds[i]) / seconds[i]);
        if (!drop[i] && rel > *worst_rel) {
            *worst_rel = rel;
            worst = i;
        }
    }
    return worst;
}

int xchg_fit_linear(const size_t *bytes, const double *seconds, int n, xchg_fit_t *fit)
{
    int drop[XCHG_FIT_MAX_POINTS] = {0};
    int rc;

    memset(fit, 0, sizeof *fit);
    if (n < 2)
        return XCHG_FIT_TOO_FEW;
    if (n > XCHG_FIT_MAX_POINTS)
        return XCHG_FIT_TOO_MANY;
    for (int i = 0; i < n; i++)
        if (!time_ok(seconds[i]))
            return XCHG_FIT_BAD_TIME;
    rc = fit_weighted(bytes, seconds, drop, n, fit);

    /* drop outliers one at a time: the worst point, when it is far off the others' rms */
    for (int dropped = 0; rc == XCHG_FIT_OK && dropped < n / XCHG_FIT_MAX_DROPPED_PART; dropped++) {
        xchg_fit_t refit;
        double worst_rel, others2, others;
        int worst = worst_point(bytes, seconds, drop, n, fit, &worst_rel);
        /* the rms of the other points: (sum of squares - the worst's) / (points - 1) */
        others2 = fit->npoints > 1 ? (fit->rms * fit->rms * fit->npoints - worst_rel * worst_rel) /
                                         (fit->npoints - 1)
                                   : 0;
        others = others2 > 0 ? sqrt(others2) : 0;
        if (worst < 0 || worst_rel <= XCHG_FIT_OUTLIER * others)
            break;
        drop[worst] = 1;
        if (fit_weighted(bytes, seconds, drop, n, &refit) != XCHG_FIT_OK)
            break; /* what is left cannot be fitted: keep the fit before */
        refit.dropped = dropped + 1;
        *fit = refit;
    }
    return rc;
}

const char *xchg_fit_error(int code)
{
    switch (code) {
    case XCHG_FIT_OK:
        return "no error";
    case XCHG_FIT_TOO_FEW:
        return "fewer than 2 points";
    case XCHG_FIT_TOO_MANY:
        return "more than 64 points (XCHG_FIT_MAX_POINTS)";
    case XCHG_FIT_BAD_TIME:
        return "a time that is not a number above 0";
    case XCHG_FIT_ONE_SIZE:
        return "fewer than 2 distinct message sizes";
    default:
        return "unknown error";
    }
}

double xchg_fit_sustained_tau(const size_t *bytes, const double *seconds, int n,
                              const xchg_fit_t *fit)
{
    double slope;
    if (!fit->ok || n < 2 || bytes[n - 1] <= bytes[n - 2] || !time_ok(seconds[n - 1]) ||
        !time_ok(seconds[n - 2]))
        return 0;
    slope = (seconds[n - 1] - seconds[n - 2]) / (double)(bytes[n - 1] - bytes[n - 2]);
    return slope > XCHG_FIT_SUSTAINED * fit->tau ? slope : 0;
}

int xchg_fit_port_share(const double *round_seconds, int kmax, double beta, double *port_share)
{
    double num = 0, den = 0, t1;
    if (kmax < 2 || !isfinite(beta))
        return -1;
    for (int k = 1; k <= kmax; k++)
        if (!time_ok(round_seconds[k - 1]))
            return -1;
    t1 = round_seconds[0];
    if (!(t1 > beta))
        return -1;
    /* least squares through the origin of y_k = (T_k - T_1) / (T_1 - beta) over x_k = k - 1 */
    for (int k = 2; k <= kmax; k++) {
        double y = (round_seconds[k - 1] - t1) / (t1 - beta);
        num += (k - 1) * y;
        den += (double)(k - 1) * (k - 1);
    }
    *port_share = num / den > 0 ? num / den : 0;
    return 0;
}

double xchg_fit_round(double value)
{
    char text[32];
    snprintf(text, sizeof text, "%.4g", value);
    return strtod(text, NULL);
}

int xchg_fit_curve_points(const size_t *buckets, const double *seconds, int nbuckets,
                          xchg_native_point_t *points)
{
    int n = 0;
    for (int b = 0; b < nbuckets; b++)
        if (seconds[b] >= 0)
            points[n++] = (xchg_native_point_t){buckets[b], xchg_fit_round(seconds[b])};
    return n;
}

/*
 * fit.h: the arithmetic of xchg-tune's measurements (tools/xchg-tune.c), apart from the MPI
 * that takes them: the fit of the linear model T(m) = beta + m tau to ping-pong times (Bruck et
 * al., "Efficient algorithms for all-to-all communications in multiport message-passing
 * systems", 1997, Section 1.2), the sustained rate of a link, port_share from rounds of k
 * messages (tuning/cost.h), and the native curves of the tuning table.
 * Pure C: no MPI calls. Every function returns a clear failure on degenerate input (too few
 * points, a time that is not a positive number, one size only), never a NaN.
 */
#ifndef XCHG_FIT_H
#define XCHG_FIT_H

#include <stddef.h>

#include "table.h"

/* What steers the fit, each with its reason. */
/* points of one fit: xchg-tune measures 24 sizes at most */
#define XCHG_FIT_MAX_POINTS 64
/* a point this many times the others' rms off the fit is an outlier (another process took the
 * processor while it was timed) */
#define XCHG_FIT_OUTLIER 3.0
/* at most 1 / this of the points are dropped as outliers: beyond that the measurement, not a
 * point, is bad */
#define XCHG_FIT_MAX_DROPPED_PART 4
/* the two largest sizes' slope replaces tau when steeper by a quarter: a rate-limited link
 * passes a burst faster than it sustains, and the relative fit favours small messages */
#define XCHG_FIT_SUSTAINED 1.25

/* Why a fit failed (xchg_fit_error says it in words). */
enum {
    XCHG_FIT_OK = 0,
    XCHG_FIT_TOO_FEW,  /* fewer than 2 points */
    XCHG_FIT_TOO_MANY, /* more than XCHG_FIT_MAX_POINTS */
    XCHG_FIT_BAD_TIME, /* a time that is not a finite number above 0 */
    XCHG_FIT_ONE_SIZE  /* the points kept have fewer than 2 distinct sizes */
};

/* A fit of T(m) = beta + m tau. On failure every number is 0 and ok is 0. */
typedef struct xchg_fit {
    double beta;  /* seconds */
    double tau;   /* seconds per byte */
    double rms;   /* root mean square relative residual of the points kept */
    double worst; /* largest relative residual of the points kept */
    int npoints;  /* points kept */
    int dropped;  /* outliers dropped */
    int ok;       /* 1: a fit */
} xchg_fit_t;

/* The least-squares fit of seconds[i] = beta + bytes[i] tau with every point weighted by
 * 1 / seconds[i]^2, so that the fit minimises relative errors and small messages count as
 * much as large ones. A negative beta is refitted through the origin (tau alone), then a
 * negative tau as beta alone. Outliers, a point more than XCHG_FIT_OUTLIER times the others'
 * rms relative residual off the fit, are dropped one at a time (the worst first, then a refit),
 * at most n / XCHG_FIT_MAX_DROPPED_PART of them; a refit that fails keeps the fit before it.
 * XCHG_FIT_OK or why it failed (fit zeroed). */
int xchg_fit_linear(const size_t *bytes, const double *seconds, int n, xchg_fit_t *fit);

/* The reason of a failure code, in words ("fewer than 2 points"). */
const char *xchg_fit_error(int code);

/* The sustained rate of a link: the slope (seconds per byte) between the last two points,
 * which must be the largest sizes in increasing order (as ping-pong measures them), when it is
 * more than XCHG_FIT_SUSTAINED times the fit's tau; 0 when it is not, when the fit failed, or
 * when the points do not allow it (fewer than 2, the last size not above the one before it, a
 * time that is not a finite number above 0). */
double xchg_fit_sustained_tau(const size_t *bytes, const double *seconds, int n,
                              const xchg_fit_t *fit);

/* port_share (tuning/cost.h) from round_seconds[k - 1] = T_k, the time of a round of k
 * messages each way, k = 1 .. kmax: T_k = beta + m tau (1 + port_share (k - 1)), so
 * (T_k - T_1) / (T_1 - beta) = port_share (k - 1), solved by least squares over k = 2 .. kmax;
 * a negative result is 0. 0 and *port_share set, or -1 (*port_share unchanged) when kmax < 2,
 * T_1 is not above beta, or a time is not a finite number above 0. */
int xchg_fit_port_share(const double *round_seconds, int kmax, double beta, double *port_share);

/* value with the 4 significant digits that the tuning table keeps ("%.4g"), so that what the
 * table says is what xchg-tune used. */
double xchg_fit_round(double value);

/* The points of a native curve (table.h) from one row of timed buckets: bucket b's seconds
 * rounded by xchg_fit_round, the buckets whose seconds are negative (not timed) left out.
 * points has room for nbuckets; returns how many it holds. */
int xchg_fit_curve_points(const size_t *buckets, const double *seconds, int nbuckets,
                          xchg_native_point_t *points);

#endif

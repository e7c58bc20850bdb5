/*
 * bench_common.c: the helpers of bench.h that both of xchg-bench's modes use (xchg-bench.c, the
 * benchmark of every algorithm, and bench_overhead.c, the cost of interposing): quartiles and
 * medians of timings, and the algorithm auto ran.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../shim/api.h"
#include "bench.h"

void bench_auto_choice(int coll, char *out, size_t outlen)
{
    if (xchg_last_choice(coll, out, outlen) != 0)
        snprintf(out, outlen, "none");
    for (char *c = out; *c; c++)
        if (*c == ',')
            *c = ':';
}

void bench_quartiles(double *v, int n, double *q1, double *median, double *q3)
{
    qsort(v, (size_t)n, sizeof *v, tool_cmp_double);
    *q1 = v[n / 4];
    *median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    *q3 = v[(3 * n) / 4 < n ? (3 * n) / 4 : n - 1];
}

double bench_median(double *v, int n)
{
    double q1, median, q3;
    bench_quartiles(v, n, &q1, &median, &q3);
    return median;
}

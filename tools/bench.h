/*
 * bench.h: what xchg-bench's two modes share: its options, and the helpers both use
 * (tools/bench_common.c) besides tools/xchg-bench.c (the benchmark of every algorithm) and
 * tools/bench_overhead.c (--overhead, the cost of interposing). The Makefile links
 * bench_overhead.c and bench_common.c into xchg-bench only (mk/tools.mk).
 */
#ifndef XCHG_BENCH_H
#define XCHG_BENCH_H

#include <stdio.h>

#include "../tuning/workloads.h"
#include "tool_common.h"

#define MAX_SPECS 64
#define SPEC_LEN 160
#define MAX_SIZES 64
#define MAX_ROUNDS 1000 /* --rounds */

typedef struct bench_options {
    int colls[XCHG_NCOLLS];
    int ncolls;
    char specs[MAX_SPECS][SPEC_LEN]; /* as given, before SQRTP / P */
    int nspecs;                      /* 0: the default list */
    size_t min_bytes, max_bytes;
    size_t sizes[MAX_SIZES]; /* --sizes, else empty */
    int nsizes;
    int check;
    int warmup;               /* untimed calls before timing */
    int overhead;             /* --overhead */
    int batches, batch_calls; /* --overhead: rounds, calls per batch */
    xchg_workload_t workload;
    char workload_text[64];
    double seconds; /* time budget per line */
    int min_iters, max_iters;
    int rounds; /* --rounds: each line's budget split into this many turns, specs alternating */
    const char *out_path;
    int verbose;
} bench_options_t;

/* Sorts v (n > 0 values); its quartiles. */
void bench_quartiles(double *v, int n, double *q1, double *median, double *q3);

/* Sorts v (n > 0 values); its median. */
double bench_median(double *v, int n);

/* The params column of auto, after its calls: the algorithm and parameters that served the
 * last call of coll (xchg_last_choice: after learning, what auto settled on), items separated
 * by ':', or "none" before any. */
void bench_auto_choice(int coll, char *out, size_t outlen);

/* --overhead (bench_overhead.c): every selected collective at every size, CSV lines on out
 * (rank 0) and then the summary on standard error. 0, or 1 after a failed call. */
int bench_overhead(const bench_options_t *opt, FILE *out, const char *mpi_name);

#endif

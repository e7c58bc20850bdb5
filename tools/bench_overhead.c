/*
 * bench_overhead.c: xchg-bench --overhead (tools/xchg-bench.c parses the options and calls
 * bench_overhead; bench.h is what the two share).
 *
 *     mpiexec -n 2 build/xchg-bench --overhead [--sizes 1,16,256] [--batches 200]
 *
 * It measures what interposing costs, apart from any algorithm, per collective and block
 * (--sizes, default 1, 16 and 256 bytes; alltoallv with uniform counts), in four parts:
 *    (a) PMPI_Alltoall etc. on MPI_COMM_WORLD: the MPI library alone;
 *    (b) MPI_Alltoall etc. through the shim forced to native: (b) - (a) is the native path's
 *        overhead;
 *    (c) the call through the shim on MPI_COMM_SELF, forced to the algorithm that is then one
 *        local copy of one block (alltoall, alltoallv: pairwise; allgather: ring), minus a
 *        plain memcpy of the same bytes: the shim's own bookkeeping (context, types, selection,
 *        statistics) for a cached call shape with contiguous types;
 *    (d) auto on MPI_COMM_WORLD, for reference.
 * Calls are timed in batches of --batch-calls (default 100) back-to-back calls, a batch's time
 * divided by its calls; the slowest rank's time of each batch counts. Each difference is
 * measured in one phase with one forcing: (a) and (b) alternate batch by batch (the order
 * swapping every round), then the self call and the memcpy, then (a) and (d); each phase
 * starts with --warmup untimed calls of both and then times --batches (default 200) rounds.
 * A difference is the median over the rounds of the paired per-call differences, so load that
 * drifts during the run hits both sides alike. One CSV line per collective and block, times
 * in nanoseconds per call (medians over the batches):
 *
 *     mpi,ranks,collective,bytes,batches,batch_calls,pmpi_ns,native_ns,native_overhead_ns,
 *     native_overhead_iqr_ns,self_algorithm,self_ns,memcpy_ns,bookkeeping_ns,bookkeeping_iqr_ns,
 *     auto_ns,auto_minus_pmpi_ns,auto_params
 *
 *  - native_overhead_ns = median of (b) - (a); bookkeeping_ns = median of self - memcpy;
 *    auto_minus_pmpi_ns = median of (d) - (a), from the third phase's own (a) batches;
 *  - *_iqr_ns: the interquartile range of those paired differences (their spread; a median of
 *    N rounds is good to about IQR / sqrt(N));
 *  - auto_params: what auto ran, as xchg-bench's params column for auto.
 * Rank 0 then prints a summary against the targets (native path within 50 ns, bookkeeping
 * below 100 ns) on standard error. --algos, --workload and --check do not apply to it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../shim/api.h"
#include "bench.h"
#include "tool_common.h"

/* the targets of the summary */
#define NATIVE_OVERHEAD_TARGET_NS 50.0
#define BOOKKEEPING_TARGET_NS 100.0

static int world_rank, world_size;

/* What a timed batch runs: the MPI library's collective on MPI_COMM_WORLD (past the shim), the
 * tool's call through the shim on MPI_COMM_WORLD, the same on MPI_COMM_SELF, or a memcpy of
 * the block that the call on MPI_COMM_SELF copies. */
enum { RUN_PMPI, RUN_SHIM, RUN_SELF, RUN_MEMCPY };

/* The series of one (collective, block): per-call seconds of each batch, per part. */
enum { T_PMPI, T_NATIVE, T_SELF, T_MEMCPY, T_PMPI_AGAIN, T_AUTO, T_SERIES };

typedef struct overhead {
    double pmpi, native, native_extra, native_extra_iqr; /* seconds per call */
    double self, copy, bookkeeping, bookkeeping_iqr;
    double autos, auto_extra;
    char auto_params[SPEC_LEN];
} overhead_t;

/* The algorithm that, on a communicator of one rank, is one local copy of one block: the
 * collective's baseline (every rank pair's message once, directly; the registry's flag). */
static const char *self_spec(int coll)
{
    return xchg_algos[xchg_baseline_index(coll)].name;
}

static int run_pmpi(const tool_call_t *call, MPI_Comm comm)
{
    int count = (int)call->bytes;
    switch (call->coll) {
    case XCHG_ALLTOALL:
        return PMPI_Alltoall(call->send, count, MPI_BYTE, call->recv, count, MPI_BYTE, comm);
    case XCHG_ALLGATHER:
        return PMPI_Allgather(call->send, count, MPI_BYTE, call->recv, count, MPI_BYTE, comm);
    default:
        return PMPI_Alltoallv(call->send, call->sendcounts, call->sdispls, MPI_BYTE, call->recv,
                              call->recvcounts, call->rdispls, MPI_BYTE, comm);
    }
}

/* `calls` back-to-back calls of one kind; *per_call (may be NULL) gets seconds per call. */
static int time_batch(int kind, const tool_call_t *world, const tool_call_t *self, int calls,
                      double *per_call)
{
    int rc = MPI_SUCCESS;
    double start = MPI_Wtime();
    for (int i = 0; i < calls && rc == MPI_SUCCESS; i++) {
        switch (kind) {
        case RUN_PMPI:
            rc = run_pmpi(world, MPI_COMM_WORLD);
            break;
        case RUN_SHIM:
            rc = tool_call_run(world, MPI_COMM_WORLD);
            break;
        case RUN_SELF:
            rc = tool_call_run(self, MPI_COMM_SELF);
            break;
        default:
            memcpy(self->recv, self->send, self->bytes);
            __asm__ __volatile__("" : : "r"(self->recv) : "memory"); /* the copy stays */
            break;
        }
    }
    if (per_call && calls > 0)
        *per_call = (MPI_Wtime() - start) / calls;
    return rc;
}

/* One phase: `warmup` untimed calls of each kind, then opt->batches rounds of one batch of
 * each, every batch after a barrier, the order swapping every round. */
static int overhead_phase(const bench_options_t *opt, const int kinds[2], const tool_call_t *world,
                          const tool_call_t *self, double *times[2])
{
    int rc = MPI_SUCCESS;
    for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++)
        rc = time_batch(kinds[k], world, self, opt->warmup, NULL);
    for (int b = 0; b < opt->batches && rc == MPI_SUCCESS; b++) {
        for (int step = 0; step < 2 && rc == MPI_SUCCESS; step++) {
            int k = (b + step) % 2;
            rc = tool_barrier(MPI_COMM_WORLD, 0);
            if (rc == MPI_SUCCESS)
                rc = time_batch(kinds[k], world, self, opt->batch_calls, &times[k][b]);
        }
    }
    return rc;
}

/* Median and interquartile range of a[i] - b[i] (overwrites a). */
static void paired_difference(double *a, const double *b, int n, double *median, double *iqr)
{
    double q1, q3;
    for (int i = 0; i < n; i++)
        a[i] -= b[i];
    bench_quartiles(a, n, &q1, median, &q3);
    *iqr = q3 - q1;
}

static double median_copy(const double *v, int n, double *scratch)
{
    memcpy(scratch, v, (size_t)n * sizeof *v);
    return bench_median(scratch, n);
}

/* The figures of one (collective, block) from its series (overwritten) of n batches. */
static void overhead_figures(double *t[T_SERIES], double *scratch, int n, overhead_t *res)
{
    double spread;
    res->pmpi = median_copy(t[T_PMPI], n, scratch);
    res->native = median_copy(t[T_NATIVE], n, scratch);
    res->self = median_copy(t[T_SELF], n, scratch);
    res->copy = median_copy(t[T_MEMCPY], n, scratch);
    res->autos = median_copy(t[T_AUTO], n, scratch);
    paired_difference(t[T_NATIVE], t[T_PMPI], n, &res->native_extra, &res->native_extra_iqr);
    paired_difference(t[T_SELF], t[T_MEMCPY], n, &res->bookkeeping, &res->bookkeeping_iqr);
    paired_difference(t[T_AUTO], t[T_PMPI_AGAIN], n, &res->auto_extra, &spread);
}

/* --overhead for one collective and block: the three phases, then the figures. buffer has
 * room for T_SERIES + 1 series of opt->batches values. */
static int overhead_cell(int coll, size_t bytes, const bench_options_t *opt, tool_call_t *world,
                         tool_call_t *self, double *buffer, overhead_t *res)
{
    static const int against_pmpi[2] = {RUN_PMPI, RUN_SHIM},
                     against_copy[2] = {RUN_SELF, RUN_MEMCPY};
    int n = opt->batches, rc;
    double *t[T_SERIES];

    for (int k = 0; k < T_SERIES; k++)
        t[k] = buffer + (size_t)k * n;
    tool_call_uniform(world, bytes);
    tool_call_uniform(self, bytes);
    memset(res, 0, sizeof *res);

    /* (a) and (b): the MPI library alone, and through the shim forced to native (a spec that
     * does not force is an error: xchg_force said why on rank 0) */
    rc = xchg_force(coll, xchg_algos[xchg_native_index(coll)].name) == 0 ? MPI_SUCCESS
                                                                         : MPI_ERR_OTHER;
    if (rc == MPI_SUCCESS)
        rc = overhead_phase(opt, against_pmpi, world, self, (double *[2]){t[T_PMPI], t[T_NATIVE]});
    /* (c): the shim on MPI_COMM_SELF, where the algorithm is one copy, and that copy alone */
    if (rc == MPI_SUCCESS)
        rc = xchg_force(coll, self_spec(coll)) == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
    if (rc == MPI_SUCCESS)
        rc = overhead_phase(opt, against_copy, world, self, (double *[2]){t[T_SELF], t[T_MEMCPY]});
    /* (d): auto after its warm-up (where it learns), against (a) again */
    if (rc == MPI_SUCCESS)
        rc = xchg_force(coll, "auto") == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
    if (rc == MPI_SUCCESS)
        rc = overhead_phase(opt, against_pmpi, world, self,
                            (double *[2]){t[T_PMPI_AGAIN], t[T_AUTO]});
    if (rc == MPI_SUCCESS && world_rank == 0)
        bench_auto_choice(coll, res->auto_params, sizeof res->auto_params);
    /* the slowest rank's time of each batch */
    if (rc == MPI_SUCCESS)
        rc = tool_allreduce(buffer, T_SERIES * n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        overhead_figures(t, buffer + (size_t)T_SERIES * n, n, res);
    return rc;
}

static void overhead_csv(FILE *out, const char *mpi_name, int coll, size_t bytes,
                         const bench_options_t *opt, const overhead_t *r)
{
    fprintf(out, "%s,%d,%s,%zu,%d,%d,%.1f,%.1f,%.1f,%.1f,%s,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%s\n",
            mpi_name, world_size, xchg_coll_name(coll), bytes, opt->batches, opt->batch_calls,
            r->pmpi * 1e9, r->native * 1e9, r->native_extra * 1e9, r->native_extra_iqr * 1e9,
            self_spec(coll), r->self * 1e9, r->copy * 1e9, r->bookkeeping * 1e9,
            r->bookkeeping_iqr * 1e9, r->autos * 1e9, r->auto_extra * 1e9, r->auto_params);
    fflush(out);
}

/* A difference against its target, in ns: the median, +- the standard error of a median of n
 * (about 0.93 IQR / sqrt(n)), and a verdict: "ok" or "OVER" when two standard errors away
 * from the target leave it on that side, else "unclear" (too noisy to tell). */
static void verdict(double median_ns, double iqr_ns, int n, double target_ns, char *out,
                    size_t outlen)
{
    double error = 0.93 * iqr_ns / sqrt((double)n);
    const char *word = median_ns + 2 * error <= target_ns  ? "ok"
                       : median_ns - 2 * error > target_ns ? "OVER"
                                                           : "unclear";
    snprintf(out, outlen, "%+.1f +-%.1f %s", median_ns, error, word);
}

/* Rank 0's readable summary of --overhead, against the targets. */
static void overhead_summary(const bench_options_t *opt, const char *mpi_name,
                             overhead_t results[][MAX_SIZES])
{
    double worst_native = -INFINITY, worst_books = -INFINITY;
    FILE *err = stderr;

    fprintf(err,
            "\nxchg-bench --overhead: %s, %d ranks, %d rounds of batches of %d calls; ns per "
            "call, medians; differences +- the standard error of their median\n"
            "%-10s %6s %9s %9s %-24s %8s %7s %-24s %9s  %s\n",
            mpi_name, world_size, opt->batches, opt->batch_calls, "collective", "bytes", "PMPI (a)",
            "shim (b)", "(b)-(a), target 50", "self", "memcpy", "bookkeeping, target 100",
            "auto (d)", "auto ran");
    for (int c = 0; c < opt->ncolls; c++) {
        for (int k = 0; k < opt->nsizes; k++) {
            const overhead_t *r = &results[c][k];
            char native_col[48], books_col[48];
            verdict(r->native_extra * 1e9, r->native_extra_iqr * 1e9, opt->batches,
                    NATIVE_OVERHEAD_TARGET_NS, native_col, sizeof native_col);
            verdict(r->bookkeeping * 1e9, r->bookkeeping_iqr * 1e9, opt->batches,
                    BOOKKEEPING_TARGET_NS, books_col, sizeof books_col);
            fprintf(err, "%-10s %6zu %9.1f %9.1f %-24s %8.1f %7.1f %-24s %9.1f  %s\n",
                    xchg_coll_name(opt->colls[c]), opt->sizes[k], r->pmpi * 1e9, r->native * 1e9,
                    native_col, r->self * 1e9, r->copy * 1e9, books_col, r->autos * 1e9,
                    r->auto_params);
            worst_native = fmax(worst_native, r->native_extra * 1e9);
            worst_books = fmax(worst_books, r->bookkeeping * 1e9);
        }
    }
    fprintf(err,
            "native path overhead: at most %+.1f ns (target: within %.0f)\n"
            "xchg bookkeeping:     at most %.1f ns (target: below %.0f)\n",
            worst_native, NATIVE_OVERHEAD_TARGET_NS, worst_books, BOOKKEEPING_TARGET_NS);
}

int bench_overhead(const bench_options_t *opt, FILE *out, const char *mpi_name)
{
    static overhead_t results[XCHG_NCOLLS][MAX_SIZES];
    size_t series = (size_t)(T_SERIES + 1) * (size_t)opt->batches;
    double *buffer = malloc(series * sizeof *buffer);
    tool_call_t world, self;
    int rc = buffer ? MPI_SUCCESS : MPI_ERR_NO_MEM;

    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (world_rank == 0)
        fprintf(out, "mpi,ranks,collective,bytes,batches,batch_calls,pmpi_ns,native_ns,"
                     "native_overhead_ns,native_overhead_iqr_ns,self_algorithm,self_ns,memcpy_ns,"
                     "bookkeeping_ns,bookkeeping_iqr_ns,auto_ns,auto_minus_pmpi_ns,auto_params\n");
    for (int c = 0; c < opt->ncolls && rc == MPI_SUCCESS; c++) {
        int coll = opt->colls[c];
        size_t most = (size_t)world_size * opt->max_bytes;
        if (tool_call_alloc(&world, coll, world_size, world_rank, most, most) != 0 ||
            tool_call_alloc(&self, coll, 1, 0, opt->max_bytes, opt->max_bytes) != 0) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        for (int k = 0; k < opt->nsizes && rc == MPI_SUCCESS; k++) {
            rc = overhead_cell(coll, opt->sizes[k], opt, &world, &self, buffer, &results[c][k]);
            if (rc == MPI_SUCCESS && world_rank == 0)
                overhead_csv(out, mpi_name, coll, opt->sizes[k], opt, &results[c][k]);
            if (rc == MPI_SUCCESS && world_rank == 0 && opt->verbose)
                fprintf(stderr, "xchg-bench: overhead %s %zu B done\n", xchg_coll_name(coll),
                        opt->sizes[k]);
        }
        xchg_force(coll, "auto");
        tool_call_free(&world);
        tool_call_free(&self);
    }
    free(buffer);
    if (rc != MPI_SUCCESS) {
        if (world_rank == 0)
            fprintf(stderr, "xchg-bench: --overhead: a call failed (MPI error %d)\n", rc);
        return 1;
    }
    if (world_rank == 0)
        overhead_summary(opt, mpi_name, results);
    return 0;
}

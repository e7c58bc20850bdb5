/*
 * xchg-decide: how long one uncached decision takes, for a few communicator sizes, collectives
 * and block sizes, and how long each registered algorithm's cost model takes alone.
 *
 *   build/xchg-decide [-p 8,64,1024,65536] [-b 1,1024,65536] [-t MS] [-T TABLE]
 *
 * A decision is xchg_decide() (shim/select.c: forced > tuning table > every model), so it
 * honours XCHG_ALLTOALL / XCHG_ALLGATHER / XCHG_ALLTOALLV and XCHG_TUNING like the library
 * does (-T TABLE: that tuning table instead of XCHG_TUNING's, through shim/api.h); with none
 * of them set it is the built-in models' choice. The models are called as the selection calls
 * them: xchg_algos[i].cost with all parameters left to the model.
 *
 * Shapes. alltoall and allgather: blocks of b bytes. alltoallv "even": every rank sends and
 * receives p blocks of b bytes (h1 = h2 = p b, largest message b); "skewed": the same h1 and
 * h2, but one message of each rank carries half of its bytes (largest message p b / 2).
 *
 * Timing: each figure is the smallest mean over 3 batches of calls, a batch lasting at least
 * MS milliseconds (default 2), in CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), so
 * that other jobs on a shared machine inflate it less than wall-clock time (on an idle machine
 * the two agree: a decision neither blocks nor sleeps). Single process, no MPI is started:
 * the decision is pure code. Nothing here asserts a time; the tests do not run it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../shim/api.h"
#include "../tuning/cost.h"

#define MAX_LIST 16
#define BATCHES 3

typedef struct shape {
    int coll;
    const char *name;
    int skewed; /* alltoallv: one message carries half of a rank's bytes */
} shape_t;

static const shape_t shapes[] = {
    {XCHG_ALLTOALL, "alltoall", 0},
    {XCHG_ALLGATHER, "allgather", 0},
    {XCHG_ALLTOALLV, "alltoallv", 0},
    {XCHG_ALLTOALLV, "alltoallv-skew", 1},
};

/* What one timed call does: a decision (algo < 0) or the model of registry entry algo. */
typedef struct job {
    const xchg_call_t *call;
    int algo;
} job_t;

static volatile double sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_once(const job_t *job)
{
    xchg_params_t params = {0};
    if (job->algo < 0)
        sink += xchg_decide(job->call, &params, NULL, 0);
    else
        sink += xchg_algos[job->algo].cost(job->call, xchg_api_machine(), &params);
    sink += params.radix + params.nports;
}

/* Nanoseconds per call: the smallest batch mean, batches of at least min_seconds. */
static double time_job(const job_t *job, double min_seconds)
{
    double best = INFINITY;
    long n = 1;

    /* grow the batch until it lasts min_seconds */
    for (;;) {
        double start = now(), spent;
        for (long i = 0; i < n; i++)
            run_once(job);
        spent = now() - start;
        best = spent / (double)n;
        if (spent >= min_seconds)
            break;
        n *= spent > 0 ? (min_seconds / spent < 2 ? 2 : 4) : 4;
    }
    for (int batch = 1; batch < BATCHES; batch++) {
        double start = now(), mean;
        for (long i = 0; i < n; i++)
            run_once(job);
        mean = (now() - start) / (double)n;
        best = mean < best ? mean : best;
    }
    return best * 1e9;
}

static void make_call(xchg_call_t *call, const shape_t *shape, int p, size_t bytes)
{
    memset(call, 0, sizeof *call);
    call->coll = shape->coll;
    call->comm_size = p;
    call->block_bytes = bytes;
    if (shape->coll != XCHG_ALLTOALLV)
        return;
    call->max_send_bytes = bytes * (size_t)p;
    call->max_recv_bytes = bytes * (size_t)p;
    call->max_block_bytes = shape->skewed ? bytes * (size_t)p / 2 : bytes;
    if (call->max_block_bytes < bytes)
        call->max_block_bytes = bytes;
    call->max_total_bytes = call->max_send_bytes + call->max_recv_bytes;
    call->block_bytes = xchg_size_key(call);
}

/* "8,64,1024" into values; the count, or -1 for a bad list. */
static int parse_list(const char *text, long *values, long lo, long hi)
{
    int n = 0;
    char *end;
    while (*text) {
        long v = strtol(text, &end, 10);
        if (end == text || v < lo || v > hi || n == MAX_LIST || (*end && *end != ','))
            return -1;
        values[n++] = v;
        text = *end ? end + 1 : end;
    }
    return n > 0 ? n : -1;
}

static void row(int p, const shape_t *shape, size_t bytes, double min_seconds)
{
    xchg_call_t call;
    xchg_params_t params = {0};
    job_t job;
    char text[128], choice[160];
    int algo;

    make_call(&call, shape, p, bytes);
    algo = xchg_decide(&call, &params, NULL, 0);
    xchg_params_format(&xchg_algos[algo], &params, text, sizeof text);
    snprintf(choice, sizeof choice, "%s%s%s", xchg_algos[algo].name, text[0] ? ":" : "", text);
    job = (job_t){&call, -1};
    printf("%6d %-15s %6zu %10.0f  %-24s", p, shape->name, bytes, time_job(&job, min_seconds),
           choice);
    for (int i = 0; i < xchg_nalgos; i++) {
        if (xchg_algos[i].coll != call.coll || !xchg_algos[i].cost)
            continue;
        job.algo = i;
        printf(" %s=%.0f", xchg_algos[i].name, time_job(&job, min_seconds));
    }
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    long ps[MAX_LIST] = {8, 64, 1024, 65536}, bytes[MAX_LIST] = {1, 1024, 65536}, ms = 2;
    int nps = 4, nbytes = 3;
    const char *table = NULL;

    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(argv[i], "-p") == 0 && (nps = parse_list(value, ps, 1, 1 << 30)) > 0)
            i++;
        else if (strcmp(argv[i], "-b") == 0 && (nbytes = parse_list(value, bytes, 0, 1L << 40)) > 0)
            i++;
        else if (strcmp(argv[i], "-t") == 0 && parse_list(value, &ms, 1, 10000) == 1)
            i++;
        else if (strcmp(argv[i], "-T") == 0 && i + 1 < argc)
            table = argv[++i];
        else if (strcmp(argv[i], "--version") == 0) {
            printf("xchg-decide %s\n", xchg_version());
            return 0;
        } else {
            fprintf(stderr,
                    "usage: %s [-p P,P,...] [-b BYTES,BYTES,...] [-t MS] [-T TABLE] | --version\n",
                    argv[0]);
            return 2;
        }
    }

    xchg_config_load(); /* the environment: forced algorithms, tuning table, constants */
    if (table && xchg_api_load_table(table) < 0)
        return 2; /* reported with the file's name */
    printf("# CPU ns per call, smallest mean of %d batches of at least %ld ms; decide = "
           "xchg_decide uncached (forced > table > model), then each model alone\n",
           BATCHES, ms);
    printf("# machine beta=%g tau=%g rho=%g port_share=%g\n", xchg_api_machine()->beta,
           xchg_api_machine()->tau, xchg_api_machine()->rho, xchg_api_machine()->port_share);
    printf("%6s %-15s %6s %10s  %-24s %s\n", "p", "collective", "bytes", "decide_ns", "decision",
           "model_ns");
    for (int i = 0; i < nps; i++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int j = 0; j < nbytes; j++)
                row((int)ps[i], &shapes[s], (size_t)bytes[j], (double)ms * 1e-3);
    return 0;
}

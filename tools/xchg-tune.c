/*
 * xchg-tune: measure this machine's constants of the linear model and write a tuning table.
 *
 *     mpiexec -n 16 build/xchg-tune -o tuning.txt [--verify] [--quick]
 *     XCHG_TUNING=tuning.txt scripts/xchgrun -n 16 ./app
 *
 * Phases (the model is T = beta + m tau, Bruck et al., "Efficient algorithms for all-to-all
 * communications in multiport message-passing systems", 1997, Section 1.2; tuning/cost.h adds
 * rho and port_share). The arithmetic of phases 1, 2 and 4 (fits, port_share, the curves'
 * points) is tuning/fit.c, unit-tested; this file measures.
 *  1. beta, tau: ping-pong between world rank 0 and one partner over message sizes 0 B to 4 MiB,
 *     every message through xchg_exchange (the round helper the algorithms use, with its waiting
 *     policy). The one-way time of each size is half the median round trip; beta and tau are the
 *     least-squares fit of T(m) = beta + m tau with every point weighted by 1/T(m)^2, so the fit
 *     minimises relative errors and small messages count as much as large ones, outliers dropped
 *     (xchg_fit_linear); the residual is reported as the root mean square relative error. The
 *     partner is a rank on the same node, and when the job spans nodes a rank on another node too.
 *     The table's machine line keeps both levels: beta and tau of the pair on one node, beta_inter
 *     and tau_inter of the pair across nodes (version 2 of the table; when rank 0 has no other rank
 *     on its node, beta and tau are the pair's across nodes and there is no second level). Across
 *     nodes tau_inter is the sustained rate of the two largest sizes when that is more than a
 *     quarter slower than the fit (a rate-limited link passes a burst faster than it sustains, and
 *     the relative fit favours small messages).
 *  1a. tau_large (a rank on rank 0's node): one exchange each way between rank 0 and it of 16 KiB
 *     and of port_bytes (below), medians; their difference per byte, where below tau, prices a
 *     message's bytes past 16 KiB (the calibration at MPI_Init measures the same, shim/calibrate.c;
 *     without it a table's machine line priced them at the fit's tau).
 *  1b. inject (jobs on several nodes): the ranks of rank 0's node (up to 4) send port_bytes
 *     each to ranks of other nodes at once, against one alone; inject = n t_one / t_all
 *     (measure_inject), the node's interface carrying inject messages at full speed.
 *  2. port_share: one round of xchg_exchange with k = 1..4 messages of m = 1 MiB (256 KiB with
 *     --quick) each way; T_k = beta + m tau (1 + port_share (k - 1)) gives port_share by least
 *     squares over k from (T_k - T_1) / (T_1 - beta) = port_share (k - 1). The round runs the
 *     way the library's rounds will run on this node, under the library's waiting policy
 *     (ctx->yield: XCHG_WAIT, by default yield when the node is oversubscribed and the MPI
 *     library's own wait does not yield; shim/context.c, algos/round.c), and the report names
 *     the policy:
 *      - oversubscribed (more ranks on rank 0's node than hwloc's processing units for them):
 *        every rank of that node sends k messages and receives k at once, as in a round of
 *        pairwise:k, so the figure holds the processes that share a processor and yield it
 *        while they wait, as they will in a collective;
 *      - else rank 0 exchanges with k partners at once; when the node has fewer processing
 *        units than k + 1 busy ranks need, the k messages each way go to one partner, so that
 *        the figure measures the messages in flight rather than processes waiting for a
 *        processor that a collective on this node would not leave idle.
 *  3. rho: seconds per byte of memcpy of 8 MiB on rank 0; sync, a pass through the node's
 *     shared segment: the shm MPI_Alltoall of 1 B over pairwise's with every message at once,
 *     both timed on rank 0's node, times the model's price of that pairwise call (measure_sync;
 *     none when rank 0 is alone on its node).
 *  4. native: the MPI library's own collective (forced in-process with xchg_force, so the
 *     tool's own MPI_Alltoall etc. go through the shim) is timed for each collective, each
 *     communicator size of --sizes (default 2 .. the job's size) and each block-size bucket
 *     (0 B and powers of two up to --max-bytes, default 4 MiB; powers of four with --quick),
 *     on a communicator of that size split from the world (the other ranks sleep). Each
 *     collective and size gives a curve, seconds per call at the buckets, which the table
 *     carries (`native` lines) and which prices native from here on: in the model's choice
 *     below and, for calls no rule decides, in the library (tuning/cost_native.c). The report
 *     compares the curves with the model of native (the MPI library's documented default
 *     algorithm with the measured constants): the median of measured / modelled per collective.
 *  5. The table: in every cell (collective x size x bucket) every applicable registered algorithm
 *     is priced by its cost model (xchg_algos[i].cost) with the parameters the model prefers and
 *     the variants its keys' descriptors name (tuning/registry.c: r = 2, ceil(sqrt(p)), p; k = 1,
 *     2, 4; every inner alltoall), native by its measured time, and the cheapest wins. The models
 *     see the layout of the cell's communicator, world ranks 0 .. p - 1 (so a cell that spans nodes
 *     is priced at the inter-node constants). Bucket b covers block sizes from b up to the next
 *     bucket - 1 (the last one: and above); size p covers p up to the next listed size - 1 (the
 *     largest: itself). Equal neighbouring cells are merged into ranges, first over block sizes,
 *     then over communicator sizes whose rows are equal and span as many nodes. When the job spans
 *     nodes every rule names the nodes its cells spanned (nodes=N, version 2): a communicator of
 *     that size laid out otherwise is left to the cost models.
 *  6. --verify: every cell's model's best few candidates (--candidates, default 3), and its
 *     cheapest candidate with k = 1 when none of those has it, are timed on the spot like native in
 *     phase 4 (whose time there stands for native) and the measured best is kept; where the
 *     model's first choice and its nearest rival come within 1.5 times of each other, both are
 *     timed twice more, in turns, and keep their medians (confirm_close). The report says
 *     how often the model's first choice was the measured best, the model's median relative error,
 *     and the time the verification took against timing every candidate (estimated from the
 *     measured time per candidate; --verify-all times them all).
 *
 * Every rank computes the same cells from the same broadcast constants and native times, so
 * the measurement loops run in step on all ranks; only rank 0 prints and writes.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../shim/api.h"
#include "../tuning/cost.h"
#include "../tuning/fit.h"
#include "../tuning/table.h"
#include "../tuning/table_write.h"
#include "tool_common.h"

#define MAX_SIZES 256
#define MAX_BUCKETS 64
#define MAX_CANDIDATES 64
#define PINGPONG_MAX ((size_t)4 << 20)
#define PORTS_MAX 4
#define CACHED_COPY (64 << 10) /* rho_cached's memcpy: source and destination in any L2 */
#define LARGE_BYTES (16 << 10) /* tau_large's bytes count past this (shim/calibrate.c's LARGE) */

_Static_assert(MAX_BUCKETS <= XCHG_NATIVE_MAX_POINTS, "a native curve holds every bucket");

/* How the k simultaneous messages of the port_share measurement are laid out. */
enum {
    PORTS_PARTNERS,    /* rank 0 with ranks 1..k */
    PORTS_ONE_PARTNER, /* k messages each way between ranks 0 and 1 */
    PORTS_NODE         /* every rank of rank 0's node with its k successors and predecessors */
};

typedef struct options {
    const char *out_path; /* NULL: stdout */
    int sizes[MAX_SIZES];
    int nsizes;
    size_t max_bytes;
    int verify, verify_all, quick, ncandidates, verbose;
} options_t;

typedef struct candidate {
    int algo;
    xchg_params_t params; /* completed by the cost model */
    double predicted;     /* seconds: the cost model, for native its measured curve */
    double measured;      /* seconds (median), 0 when not timed */
    int native;           /* the MPI library's own collective */
} candidate_t;

typedef struct cell {
    int algo;
    xchg_params_t params;
    double predicted;
} cell_t;

/* A growing array of values (one allocation failure drops the value: this is a report). */
typedef struct series {
    double *values;
    int n, cap;
} series_t;

/* What --verify found, over all cells. */
typedef struct verify_summary {
    int cells, model_first_best, model_first_within5, model_first_within10, native_best;
    int close_cells; /* cells whose timed runner-up was within 5 % of the measured best */
    /* timed candidates that have a model: |predicted - measured| / measured, over all cells
     * and over the cells whose ranks all had a processing unit; measured / predicted */
    series_t errors, errors_fitting, ratios;
    int pus;
    double slowdown_log_sum; /* sum of log(model's first measured / best measured) */
    int timed, all_candidates;
    int confirmed; /* cells whose close call was timed again in turns (confirm_close) */
    double seconds, estimated_all_seconds;
} verify_summary_t;

static int world_rank, world_size;
static FILE *info; /* rank 0's report: stdout, or stderr when the table goes to stdout */
/* The layout of each size's cells, world ranks 0 .. opt.sizes[s] - 1 (cell_layouts), and the
 * nodes of the job: what the cost models see of a cell's communicator. */
static xchg_topo_t cell_topo[MAX_SIZES];
static int job_nodes;

static void usage(FILE *out)
{
    fprintf(out, "usage: mpiexec -n N xchg-tune [options]   (xchg-tune --version: its version)\n"
                 "  -o FILE           write the table to FILE (- : standard output); without -o\n"
                 "                    it goes to the per-user cache, where every program run\n"
                 "                    with xchg on this machine and layout finds it\n"
                 "  --sizes 2,4,8     communicator sizes of the table (default: 2 .. N)\n"
                 "  --max-bytes SIZE  largest block-size bucket (default 4M; K, M, G allowed)\n"
                 "  --verify          time the model's best candidates (and its best with k=1)\n"
                 "                    and native in each cell\n"
                 "                    and keep the measured best\n"
                 "  --verify-all      like --verify, timing every candidate\n"
                 "  --candidates N    candidates --verify times besides native (default 3)\n"
                 "  --quick           fewer sizes and buckets, shorter measurements\n"
                 "  -v                print every verified cell and its timed candidates\n");
}

static int parse_sizes(const char *text, options_t *opt)
{
    const char *p = text;
    opt->nsizes = 0;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 1000000 || (*end && *end != ',') || opt->nsizes == MAX_SIZES)
            return -1;
        opt->sizes[opt->nsizes++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return opt->nsizes > 0 ? 0 : -1;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* 0 on success, 1 for --help, -1 for a bad command line (message printed on rank 0). */
static int parse_options(int argc, char **argv, options_t *opt)
{
    int have_sizes = 0;
    memset(opt, 0, sizeof *opt);
    opt->max_bytes = (size_t)4 << 20;
    opt->ncandidates = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-o") == 0 && value) {
            opt->out_path = value;
            i++;
        } else if (strcmp(a, "--sizes") == 0 && value) {
            if (parse_sizes(value, opt) != 0) {
                if (world_rank == 0)
                    fprintf(stderr, "xchg-tune: --sizes %s: expected a list like 2,4,8\n", value);
                return -1;
            }
            have_sizes = 1;
            i++;
        } else if (strcmp(a, "--max-bytes") == 0 && value) {
            if (tool_parse_bytes(value, &opt->max_bytes) != 0 ||
                opt->max_bytes > ((size_t)1 << 30)) {
                if (world_rank == 0)
                    fprintf(stderr, "xchg-tune: --max-bytes %s: expected a size up to 1G\n", value);
                return -1;
            }
            i++;
        } else if (strcmp(a, "--candidates") == 0 && value) {
            opt->ncandidates = atoi(value);
            if (opt->ncandidates < 1 || opt->ncandidates > MAX_CANDIDATES) {
                if (world_rank == 0)
                    fprintf(stderr, "xchg-tune: --candidates %s: expected 1..%d\n", value,
                            MAX_CANDIDATES);
                return -1;
            }
            i++;
        } else if (strcmp(a, "--verify") == 0) {
            opt->verify = 1;
        } else if (strcmp(a, "--verify-all") == 0) {
            opt->verify = opt->verify_all = 1;
        } else if (strcmp(a, "--quick") == 0) {
            opt->quick = 1;
        } else if (strcmp(a, "-v") == 0) {
            opt->verbose = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (world_rank == 0)
                usage(stdout);
            return 1;
        } else {
            if (world_rank == 0) {
                fprintf(stderr, "xchg-tune: unknown or incomplete option '%s'\n", a);
                usage(stderr);
            }
            return -1;
        }
    }
    if (!have_sizes) {
        /* every size up to the job's; --quick: the powers of two and the job's size */
        for (int p = 2; p <= world_size && opt->nsizes < MAX_SIZES; p++)
            if (!opt->quick || (p & (p - 1)) == 0 || p == world_size)
                opt->sizes[opt->nsizes++] = p;
    }
    qsort(opt->sizes, (size_t)opt->nsizes, sizeof opt->sizes[0], cmp_int);
    for (int i = 0; i < opt->nsizes; i++) {
        if (opt->sizes[i] > world_size) {
            if (world_rank == 0)
                fprintf(stderr, "xchg-tune: size %d is larger than the job (%d ranks)\n",
                        opt->sizes[i], world_size);
            return -1;
        }
        if (i > 0 && opt->sizes[i] == opt->sizes[i - 1]) {
            if (world_rank == 0)
                fprintf(stderr, "xchg-tune: size %d is listed twice\n", opt->sizes[i]);
            return -1;
        }
    }
    if (opt->nsizes == 0) {
        if (world_rank == 0)
            fprintf(stderr, "xchg-tune: needs at least 2 ranks (mpiexec -n 2 or more)\n");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1: ping-pong and the fit                                                            */

/* Ping-pong between world ranks a and b over sizes (collective over the world: the other
 * ranks sleep). On a, oneway[i] is half the median round trip of sizes[i]. */
static int pingpong(xchg_ctx_t *ctx, int a, int b, const size_t *sizes, int nsizes, double budget,
                    char *buf, double *oneway)
{
    int rc = MPI_SUCCESS;
    int me = ctx->rank;

    if (me == a || me == b) {
        int peer = me == a ? b : a;
        double *round_trips = malloc(1000 * sizeof *round_trips);
        if (!round_trips)
            return MPI_ERR_NO_MEM;
        /* settle first: the first messages between two ranks cost far more */
        for (int w = 0; w < 200 && rc == MPI_SUCCESS; w++) {
            xchg_msg_t msg = {peer, buf, 0};
            rc = xchg_exchange(ctx, me == a ? &msg : NULL, me == a, me == a ? NULL : &msg, me != a);
            if (rc == MPI_SUCCESS)
                rc = xchg_exchange(ctx, me == a ? NULL : &msg, me != a, me == a ? &msg : NULL,
                                   me == a);
        }
        for (int i = 0; i < nsizes && rc == MPI_SUCCESS; i++) {
            xchg_msg_t msg = {peer, buf, sizes[i]};
            uint64_t reps = 0;
            xchg_msg_t control = {peer, &reps, sizeof reps};
            if (me == a) {
                /* two untimed round trips choose the repetitions, which b is told */
                double t = MPI_Wtime();
                for (int w = 0; w < 2 && rc == MPI_SUCCESS; w++) {
                    rc = xchg_exchange(ctx, &msg, 1, NULL, 0);
                    if (rc == MPI_SUCCESS)
                        rc = xchg_exchange(ctx, NULL, 0, &msg, 1);
                }
                t = (MPI_Wtime() - t) / 2;
                reps = t > 0 ? (uint64_t)(budget / t) : 1000;
                reps = reps < 5 ? 5 : reps > 1000 ? 1000 : reps;
                if (rc == MPI_SUCCESS)
                    rc = xchg_exchange(ctx, &control, 1, NULL, 0);
                for (uint64_t r = 0; r < reps && rc == MPI_SUCCESS; r++) {
                    double t0 = MPI_Wtime();
                    rc = xchg_exchange(ctx, &msg, 1, NULL, 0);
                    if (rc == MPI_SUCCESS)
                        rc = xchg_exchange(ctx, NULL, 0, &msg, 1);
                    round_trips[r] = MPI_Wtime() - t0;
                }
                qsort(round_trips, reps, sizeof *round_trips, tool_cmp_double);
                oneway[i] = round_trips[reps / 2] / 2;
            } else {
                for (int w = 0; w < 2 && rc == MPI_SUCCESS; w++) {
                    rc = xchg_exchange(ctx, NULL, 0, &msg, 1);
                    if (rc == MPI_SUCCESS)
                        rc = xchg_exchange(ctx, &msg, 1, NULL, 0);
                }
                if (rc == MPI_SUCCESS)
                    rc = xchg_exchange(ctx, NULL, 0, &control, 1);
                for (uint64_t r = 0; r < reps && rc == MPI_SUCCESS; r++) {
                    rc = xchg_exchange(ctx, NULL, 0, &msg, 1);
                    if (rc == MPI_SUCCESS)
                        rc = xchg_exchange(ctx, &msg, 1, NULL, 0);
                }
            }
        }
        free(round_trips);
    }
    if (rc == MPI_SUCCESS)
        rc = tool_barrier(MPI_COMM_WORLD, !(me == a || me == b));
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 2 and 3: k ports, local copies                                                      */

/* How many ranks rank 0's node has, and this rank's index among them in rank order through
 * *mine (-1 when it is on another node). */
static int node_count(const xchg_ctx_t *ctx, int *mine)
{
    int n = 0;
    *mine = -1;
    for (int r = 0; r < ctx->size; r++) {
        if (r == ctx->rank && ctx->node_of[r] == ctx->node_of[0])
            *mine = n;
        n += ctx->node_of[r] == ctx->node_of[0];
    }
    return n;
}

/* The index-th rank, in rank order, of rank 0's node. */
static int node_member(const xchg_ctx_t *ctx, int index)
{
    for (int r = 0; r < ctx->size; r++)
        if (ctx->node_of[r] == ctx->node_of[0] && index-- == 0)
            return r;
    return 0;
}

/* This rank's messages in a round of k messages each way under layout (recvs land in
 * recvbuf, k blocks of `bytes`); returns their count, 0 when the rank takes no part. */
static int port_messages(const xchg_ctx_t *ctx, int layout, int k, size_t bytes, char *sendbuf,
                         char *recvbuf, xchg_msg_t *sends, xchg_msg_t *recvs)
{
    int me = ctx->rank, n, mine, to, from;

    if (layout == PORTS_PARTNERS && me > 0) {
        if (me > k)
            return 0;
        sends[0] = (xchg_msg_t){0, sendbuf, bytes};
        recvs[0] = (xchg_msg_t){0, recvbuf, bytes};
        return 1;
    }
    if (layout == PORTS_ONE_PARTNER && me > 1)
        return 0;
    n = node_count(ctx, &mine);
    if (layout == PORTS_NODE && mine < 0)
        return 0;
    for (int j = 0; j < k; j++) {
        if (layout == PORTS_PARTNERS) {
            to = from = j + 1;
        } else if (layout == PORTS_ONE_PARTNER) {
            to = from = 1 - me;
        } else { /* the node's ranks in a ring: k successors, k predecessors */
            to = node_member(ctx, (mine + 1 + j) % n);
            from = node_member(ctx, (mine - 1 - j + n) % n);
        }
        sends[j] = (xchg_msg_t){to, sendbuf, bytes};
        recvs[j] = (xchg_msg_t){from, recvbuf + (size_t)j * bytes, bytes};
    }
    return k;
}

/* T_k for k = 1..kmax on rank 0: the median of reps rounds of k messages of `bytes` in each
 * direction, laid out by layout (PORTS_PARTNERS: rank 0 with ranks 1..k; PORTS_ONE_PARTNER:
 * ranks 0 and 1 only, for nodes whose processing units cannot hold k + 1 busy ranks;
 * PORTS_NODE: every rank of rank 0's node at once, as in a round of pairwise:k), under the
 * context's waiting policy. The rounds of k = 1..kmax take turns, each after a barrier of all
 * ranks (those that take no part sleep in it), so that every k sees the same load on a
 * shared machine and starts together, as the rounds of a collective do. */
static int measure_ports(xchg_ctx_t *ctx, int kmax, int layout, size_t bytes, int reps,
                         char *sendbuf, char *recvbuf, double *t_k)
{
    int rc = MPI_SUCCESS;
    double *times = malloc((size_t)(kmax + 1) * reps * sizeof *times);
    if (!times)
        return MPI_ERR_NO_MEM;
    for (int r = -3; r < reps && rc == MPI_SUCCESS; r++) {
        for (int k = 1; k <= kmax && rc == MPI_SUCCESS; k++) {
            xchg_msg_t sends[PORTS_MAX], recvs[PORTS_MAX];
            int nmsgs = port_messages(ctx, layout, k, bytes, sendbuf, recvbuf, sends, recvs);
            double t0;
            rc = tool_barrier(MPI_COMM_WORLD, nmsgs == 0);
            if (rc != MPI_SUCCESS || nmsgs == 0)
                continue;
            t0 = MPI_Wtime();
            rc = xchg_exchange(ctx, sends, nmsgs, recvs, nmsgs);
            if (r >= 0)
                times[(size_t)k * reps + r] = MPI_Wtime() - t0;
        }
    }
    if (ctx->rank == 0)
        for (int k = 1; k <= kmax; k++) {
            qsort(times + (size_t)k * reps, (size_t)reps, sizeof *times, tool_cmp_double);
            t_k[k] = times[(size_t)k * reps + reps / 2];
        }
    free(times);
    return rc;
}

/* Seconds per byte of memcpy (rank 0; the others sleep in the barrier). */
static double measure_copy(size_t bytes, int reps)
{
    char *src = malloc(bytes), *dst = malloc(bytes);
    double *times = malloc((size_t)reps * sizeof *times), rho = 0;
    volatile char sink = 0;
    if (!src || !dst || !times)
        goto out;
    memset(src, 3, bytes);
    memset(dst, 4, bytes);
    for (int r = -2; r < reps; r++) {
        double t0;
        src[0] = (char)r;
        t0 = MPI_Wtime();
        memcpy(dst, src, bytes);
        sink = dst[bytes - 1];
        sink = dst[0];
        if (r >= 0)
            times[r] = MPI_Wtime() - t0;
    }
    (void)sink;
    qsort(times, (size_t)reps, sizeof *times, tool_cmp_double);
    rho = times[reps / 2] / (double)bytes;
out:
    free(src);
    free(dst);
    free(times);
    return rho;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 5: candidates and cells                                                             */

static int cmp_candidate(const void *a, const void *b)
{
    const candidate_t *x = a, *y = b;
    if (x->predicted != y->predicted)
        return x->predicted < y->predicted ? -1 : 1;
    return x->algo - y->algo;
}

/* Whether two parameter sets are equal, field by field: the struct's padding after leaders is
 * not part of its value, so memcmp could tell equal sets apart. */
static int params_equal(const xchg_params_t *x, const xchg_params_t *y)
{
    return x->radix == y->radix && x->nports == y->nports && x->inner == y->inner &&
           x->dims_r == y->dims_r && x->dims_c == y->dims_c && x->leaders == y->leaders;
}

/* Whether params x and y of algorithm a make the same call (as a runs them). */
static int same_run(const xchg_algo_t *a, const xchg_call_t *call, const xchg_params_t *x,
                    const xchg_params_t *y)
{
    xchg_params_t rx = *x, ry = *y;
    if (a->as_run) {
        a->as_run(call, &rx);
        a->as_run(call, &ry);
    }
    return params_equal(&rx, &ry);
}

static void add_candidate(candidate_t *out, int *n, int algo, const xchg_params_t *given,
                          const xchg_call_t *call, const xchg_machine_t *machine)
{
    const xchg_algo_t *a = &xchg_algos[algo];
    xchg_params_t params = *given;
    const char *why = "";
    double t;

    if (*n == MAX_CANDIDATES || !a->applies(call, &params, &why))
        return;
    t = a->cost(call, machine, &params);
    if (!isfinite(t))
        return;
    /* params that send the same messages as a candidate's (xchg_algo_t.as_run) are one
     * candidate: the cheaper priced of them, the first on a tie (timing both would time one
     * call twice and call the faster of two readings the better algorithm) */
    for (int i = 0; i < *n; i++)
        if (out[i].algo == algo && same_run(a, call, &out[i].params, &params)) {
            if (t < out[i].predicted) {
                out[i].params = params;
                out[i].predicted = t;
            }
            return;
        }
    out[*n] = (candidate_t){algo, params, t, 0, a->native};
    (*n)++;
}

/* The library's rule for the models' choice (xchg_model_clear_win, shim/select.c): an xchg
 * candidate goes before native only when it is priced XCHG_MODEL_MARGIN times faster, and never
 * for a call that moves no bytes; otherwise native moves to the front (the others keep their
 * order), so the table's choice and the verified "first choice" are what the library's models
 * would run. */
static void native_first_unless_clearly_beaten(const xchg_call_t *call, candidate_t *cands, int n)
{
    int native = -1;
    for (int i = 0; i < n && native < 0; i++)
        if (cands[i].native)
            native = i;
    if (native <= 0 || xchg_model_clear_win(call, cands[0].predicted, cands[native].predicted))
        return;
    candidate_t moved = cands[native];
    memmove(&cands[1], &cands[0], (size_t)native * sizeof *cands);
    cands[0] = moved;
}

/* Every applicable algorithm of coll with the model's parameters and a few variants, cheapest
 * first (native priced by its curve in machine->native, else by its model; native first unless
 * an xchg candidate is clearly faster), on a communicator of p ranks laid out as topo. */
static int enumerate(int coll, int p, const xchg_topo_t *topo, size_t bytes,
                     const xchg_machine_t *machine, candidate_t *out)
{
    xchg_call_t call = tool_model_call(coll, p, bytes);
    xchg_params_t variants[4 * XCHG_MAX_KEYS + 16];
    int n = 0;
    call.topo = topo;
    for (int i = 0; i < xchg_nalgos; i++) {
        const xchg_algo_t *a = &xchg_algos[i];
        xchg_params_t params;
        int nvariants;
        if (a->coll != coll)
            continue;
        memset(&params, 0, sizeof params);
        add_candidate(out, &n, i, &params, &call, machine);
        /* the values each key's descriptor names for xchg-tune (xchg_param_t.tune) */
        nvariants =
            xchg_params_variants(a, p, variants, (int)(sizeof variants / sizeof variants[0]));
        for (int v = 0; v < nvariants; v++)
            add_candidate(out, &n, i, &variants[v], &call, machine);
    }
    qsort(out, (size_t)n, sizeof *out, cmp_candidate);
    native_first_unless_clearly_beaten(&call, out, n);
    return n;
}

static void spec_of(int algo, const xchg_params_t *params, char *out, size_t outlen)
{
    char text[128];
    xchg_params_format(&xchg_algos[algo], params, text, sizeof text);
    snprintf(out, outlen, "%s%s%s", xchg_algos[algo].name, text[0] ? ":" : "", text);
}

/* Buckets: 0 and the powers of two (--quick: four) up to max_bytes. */
static int make_buckets(const options_t *opt, size_t *buckets)
{
    int n = 0;
    buckets[n++] = 0;
    for (size_t b = 1; b <= opt->max_bytes && n < MAX_BUCKETS; b *= opt->quick ? 4 : 2)
        buckets[n++] = b;
    return n;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 6: verification                                                                     */

static double median_of(series_t *series)
{
    int n = series->n;
    double *values = series->values;
    if (n == 0)
        return 0;
    qsort(values, (size_t)n, sizeof *values, tool_cmp_double);
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static void series_add(series_t *series, double value)
{
    if (series->n == series->cap) {
        int cap = series->cap ? 2 * series->cap : 256;
        double *grown = realloc(series->values, (size_t)cap * sizeof *grown);
        if (!grown)
            return;
        series->values = grown;
        series->cap = cap;
    }
    series->values[series->n++] = value;
}

/* The median of reps exchanges of `bytes` each way between rank 0 and peer, as one step of
 * pairwise (both send at once), on rank 0 (the other ranks sleep in the barriers). */
static int measure_pair_exchange(xchg_ctx_t *ctx, int peer, size_t bytes, int reps,
                                 char *sendbuf, char *recvbuf, double *seconds)
{
    int rc = MPI_SUCCESS, in = ctx->rank == 0 || ctx->rank == peer;
    series_t times = {NULL, 0, 0};
    for (int r = -3; r < reps && rc == MPI_SUCCESS; r++) {
        int other = ctx->rank == 0 ? peer : 0;
        xchg_msg_t send = {other, sendbuf, bytes}, recv = {other, recvbuf, bytes};
        double t0;
        rc = tool_barrier(MPI_COMM_WORLD, !in);
        if (rc != MPI_SUCCESS || !in)
            continue;
        t0 = MPI_Wtime();
        rc = xchg_exchange(ctx, &send, 1, &recv, 1);
        if (r >= 0 && ctx->rank == 0)
            series_add(&times, MPI_Wtime() - t0);
    }
    if (ctx->rank == 0)
        *seconds = median_of(&times);
    free(times.values);
    return rc;
}

/* Median seconds per call of spec (forced in-process) on comm, or -1 when timing failed
 * (reported); *wall gets the time the measurement took. */
static double time_spec(int coll, const char *spec, size_t bytes, double budget,
                        const options_t *opt, tool_call_t *call, MPI_Comm comm, double *wall)
{
    tool_timing_t timing;
    int rc = MPI_ERR_OTHER;

    tool_call_uniform(call, bytes);
    if (xchg_force(coll, spec) == 0) /* cannot fail for a spec the registry wrote */
        rc = tool_time_collective(call, comm, budget, opt->quick ? 2 : 3, 50, NULL, NULL, NULL,
                                  &timing, NULL);
    xchg_force(coll, "auto");
    *wall = rc == MPI_SUCCESS ? timing.wall : 0;
    if (rc == MPI_SUCCESS)
        return timing.median;
    if (world_rank == 0)
        fprintf(stderr, "xchg-tune: timing %s %s p=%d bytes=%zu failed\n", xchg_coll_name(coll),
                spec, call->p, bytes);
    return -1;
}

/* Two specs of coll timed `turns` times each (up to TURNS_MAX), in turns: spec[0] first in
 * the even turns, spec[1] first in the odd ones, so that a change of the machine's load touches
 * both alike. median[k] is the median of spec[k]'s timings and of prior[k] where that is > 0 (a
 * timing made before). Every timing is made whatever an earlier one gave, so that the ranks stay
 * in step; returns 1 when none failed, else 0 with median untouched. *spent gets their wall
 * time added. */
#define TURNS_MAX 5

static int time_in_turns(int coll, const char *const spec[2], const double prior[2], int turns,
                         size_t bytes, double budget, const options_t *opt, tool_call_t *call,
                         MPI_Comm comm, double median[2], double *spent)
{
    double t[2][TURNS_MAX + 1];
    int n[2] = {0, 0}, ok = 1;

    for (int k = 0; k < 2; k++)
        if (prior[k] > 0)
            t[k][n[k]++] = prior[k];
    for (int turn = 0; turn < turns && turn < TURNS_MAX; turn++)
        for (int j = 0; j < 2; j++) {
            int k = turn % 2 ? 1 - j : j;
            double wall = 0;
            t[k][n[k]] = time_spec(coll, spec[k], bytes, budget, opt, call, comm, &wall);
            ok &= t[k][n[k]++] >= 0;
            *spent += wall;
        }
    if (!ok)
        return 0;
    for (int k = 0; k < 2; k++) {
        series_t times = {t[k], n[k], n[k]};
        median[k] = median_of(&times);
    }
    return 1;
}

/* A cell's model's first choice and its rival (the measured best when the first lost, else the
 * next best), measured within CONFIRM_WITHIN of each other, are timed again CONFIRM_TURNS times
 * each, in turns, and each keeps the median of its three timings: a near win of the first is
 * checked as a near miss is. One timing of a few milliseconds is at the mercy of one slow
 * stretch of the machine: with --quick, MPI_Alltoall of 4 MiB at 2 ranks read 944 us under
 * pairwise:k=1 and 858 under radix:r=2,k=1, two schedules that make the same single exchange
 * there. What both --verify's report and the table's rule rest on is which of the two is
 * faster, so that comparison is timed in turns, as the sync is (measure_sync). */
#define CONFIRM_WITHIN 1.5
#define CONFIRM_TURNS 2

/* Time cands[0] and cands[rival] again (above); returns 1 when both were, *spent their wall
 * time added. A timing that fails leaves both as they were (0). */
static int confirm_close(int coll, size_t bytes, double budget, const options_t *opt,
                         tool_call_t *call, MPI_Comm comm, candidate_t *cands, int rival,
                         double *spent)
{
    char specs[2][160];
    const char *const spec[2] = {specs[0], specs[1]};
    double prior[2] = {cands[rival].measured, cands[0].measured}, median[2];

    spec_of(cands[rival].algo, &cands[rival].params, specs[0], sizeof specs[0]);
    spec_of(cands[0].algo, &cands[0].params, specs[1], sizeof specs[1]);
    if (!time_in_turns(coll, spec, prior, CONFIRM_TURNS, bytes, budget, opt, call, comm, median,
                       spent))
        return 0;
    cands[rival].measured = median[0];
    cands[0].measured = median[1];
    return 1;
}

/* Time the candidates of one cell on comm and return the index of the measured best. Native
 * is not timed again when phase 4 timed it in this cell (native_time >= 0). */
static int verify_cell(int coll, int p, size_t bytes, candidate_t *cands, int ncands,
                       double native_time, const options_t *opt, tool_call_t *call, MPI_Comm comm,
                       verify_summary_t *s)
{
    double budget = opt->quick ? 0.004 : 0.02, spent = 0;
    int best = -1, timed = 0, with_model = 0, one_port = 0, rival;
    char spec[160];

    for (int i = 0; i < ncands; i++) {
        double wall;
        /* besides the model's best few, its cheapest one-port candidate (k = 1): one message
         * in flight per rank is what a shared or rate-limited link rewards in ways the
         * linear model does not see (many flows at once overflow a link's queue) */
        int extra = !cands[i].native && !one_port && cands[i].params.nports == 1;
        if (!cands[i].native && !opt->verify_all && with_model >= opt->ncandidates && !extra)
            continue;
        with_model += !cands[i].native;
        one_port |= !cands[i].native && cands[i].params.nports == 1;
        if (cands[i].native && native_time >= 0) {
            cands[i].measured = native_time;
        } else {
            spec_of(cands[i].algo, &cands[i].params, spec, sizeof spec);
            cands[i].measured = time_spec(coll, spec, bytes, budget, opt, call, comm, &wall);
            if (cands[i].measured < 0) {
                cands[i].measured = 0;
                continue;
            }
            spent += wall;
            timed++;
        }
        if (best < 0 || cands[i].measured < cands[best].measured)
            best = i;
        if (!cands[i].native) {
            double error = fabs(cands[i].predicted - cands[i].measured) / cands[i].measured;
            series_add(&s->errors, error);
            if (p <= s->pus)
                series_add(&s->errors_fitting, error);
            if (cands[i].predicted > 0)
                series_add(&s->ratios, cands[i].measured / cands[i].predicted);
        }
    }

    /* a close call between the model's first and its rival, timed again (confirm_close) */
    s->estimated_all_seconds += timed ? spent / timed * ncands : 0;
    rival = best > 0 ? best : -1; /* the model's first lost to it; or won, over the next */
    for (int i = 1; best == 0 && i < ncands; i++)
        if (cands[i].measured > 0 && (rival < 0 || cands[i].measured < cands[rival].measured))
            rival = i;
    if (rival > 0 && cands[0].measured > 0 &&
        fmax(cands[0].measured, cands[rival].measured) <=
            CONFIRM_WITHIN * fmin(cands[0].measured, cands[rival].measured)) {
        s->confirmed += confirm_close(coll, bytes, budget, opt, call, comm, cands, rival, &spent);
        for (int i = 0; i < ncands; i++)
            if (cands[i].measured > 0 && cands[i].measured < cands[best].measured)
                best = i;
    }

    s->cells++;
    s->timed += timed;
    s->all_candidates += ncands;
    s->seconds += spent;
    if (best >= 0) {
        const candidate_t *first = &cands[0];
        if (best == 0)
            s->model_first_best++;
        if (first->measured > 0 && first->measured <= 1.05 * cands[best].measured)
            s->model_first_within5++;
        if (first->measured > 0 && first->measured <= 1.1 * cands[best].measured)
            s->model_first_within10++;
        if (first->measured > 0)
            s->slowdown_log_sum += log(first->measured / cands[best].measured);
        if (cands[best].native)
            s->native_best++;
        for (int i = 0; i < ncands; i++)
            if (i != best && cands[i].measured > 0 &&
                cands[i].measured <= 1.05 * cands[best].measured) {
                s->close_cells++;
                break;
            }
    }
    if (opt->verbose && world_rank == 0 && best >= 0) {
        char first_spec[160], best_spec[160];
        spec_of(cands[0].algo, &cands[0].params, first_spec, sizeof first_spec);
        spec_of(cands[best].algo, &cands[best].params, best_spec, sizeof best_spec);
        fprintf(info,
                "  %-9s p=%-3d %8zu B: model %-22s %9.1f us predicted %9.1f us measured;"
                " best %-22s %9.1f us (priced %.1f)\n",
                xchg_coll_name(coll), p, bytes, first_spec, cands[0].predicted * 1e6,
                cands[0].measured * 1e6, best_spec, cands[best].measured * 1e6,
                cands[best].predicted * 1e6);
        fprintf(info, "    timed (priced):");
        for (int i = 0; i < ncands; i++)
            if (cands[i].measured > 0) {
                spec_of(cands[i].algo, &cands[i].params, spec, sizeof spec);
                fprintf(info, " %s %.1f us (%.1f)", spec, cands[i].measured * 1e6,
                        cands[i].predicted * 1e6);
            }
        fprintf(info, "\n");
    }
    return best;
}

/* ---------------------------------------------------------------------------------------- */
/* Measurement loops over the cells (phases 4 and 6)                                         */

/* The index of a cell (collective, size index, bucket) in cells and native times. */
static size_t cell_at(const options_t *opt, int nbuckets, int coll, int s, int b)
{
    return ((size_t)coll * opt->nsizes + s) * nbuckets + b;
}

/* One cell of a measurement loop, collective over comm (opt->sizes[s] ranks): call holds
 * buffers for coll up to the largest bucket. */
typedef void cell_fn(int coll, int s, int b, tool_call_t *call, MPI_Comm comm, void *arg);

/* fn in every cell, size by size, on a communicator of world ranks 0 .. p - 1 split from the
 * world (the other ranks sleep in a barrier); with progress, one line per size on rank 0. */
static void for_each_cell(const options_t *opt, const size_t *buckets, int nbuckets, int progress,
                          cell_fn *fn, void *arg)
{
    size_t max_block = buckets[nbuckets - 1];
    size_t per_rank = (size_t)opt->sizes[opt->nsizes - 1] * max_block;

    for (int s = 0; s < opt->nsizes; s++) {
        int p = opt->sizes[s], member = world_rank < p;
        MPI_Comm comm;
        double t0 = MPI_Wtime();
        MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, world_rank, &comm);
        for (int coll = 0; member && coll < XCHG_NCOLLS; coll++) {
            tool_call_t call;
            if (tool_call_alloc(&call, coll, p, world_rank,
                                coll == XCHG_ALLGATHER ? max_block : per_rank, per_rank) != 0) {
                fprintf(stderr, "xchg-tune: out of memory for %zu-byte buffers\n", per_rank);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            for (int b = 0; b < nbuckets; b++)
                fn(coll, s, b, &call, comm, arg);
            tool_call_free(&call);
        }
        if (member)
            MPI_Comm_free(&comm);
        tool_barrier(MPI_COMM_WORLD, 1);
        if (world_rank == 0 && progress) {
            fprintf(info, "  p=%d: %.1f s\n", p, MPI_Wtime() - t0);
            fflush(info);
        }
    }
}

typedef struct native_pass {
    const options_t *opt;
    const size_t *buckets;
    int nbuckets;
    double *times;  /* [cell] median seconds per call, -1 where timing failed */
    double seconds; /* spent timing */
} native_pass_t;

static void time_native(int coll, int s, int b, tool_call_t *call, MPI_Comm comm, void *arg)
{
    native_pass_t *pass = arg;
    const options_t *opt = pass->opt;
    double wall, budget = opt->verify ? (opt->quick ? 0.004 : 0.02) : (opt->quick ? 0.002 : 0.005);

    pass->times[cell_at(opt, pass->nbuckets, coll, s, b)] =
        time_spec(coll, xchg_algos[xchg_native_index(coll)].name, pass->buckets[b], budget, opt,
                  call, comm, &wall);
    pass->seconds += wall;
}

/* Phase 4: native timed in every cell into times (on every rank: rank 0 takes part in every
 * size and broadcasts what it measured, so that every rank builds the same curves and makes
 * the same choices). */
static int measure_native(const options_t *opt, const size_t *buckets, int nbuckets, double *times,
                          double *seconds)
{
    native_pass_t pass = {opt, buckets, nbuckets, times, 0};
    int ncells = XCHG_NCOLLS * opt->nsizes * nbuckets, rc;

    for (int i = 0; i < ncells; i++)
        times[i] = -1;
    for_each_cell(opt, buckets, nbuckets, 0, time_native, &pass);
    *seconds = pass.seconds;
    rc = tool_bcast(times, ncells, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        rc = tool_bcast(seconds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return rc;
}

/* The curve of each collective and size: its timed buckets, 4 significant digits (what the
 * table's native lines say is what this run used). */
static void build_curves(const double *times, const options_t *opt, const size_t *buckets,
                         int nbuckets, xchg_native_curves_t *curves)
{
    xchg_native_point_t points[MAX_BUCKETS];
    for (int coll = 0; coll < XCHG_NCOLLS; coll++)
        for (int s = 0; s < opt->nsizes; s++) {
            /* the row of (coll, s): its buckets are consecutive cells */
            int n = xchg_fit_curve_points(buckets, times + cell_at(opt, nbuckets, coll, s, 0),
                                          nbuckets, points);
            if (n > 0 && xchg_native_curve_add(curves, coll, opt->sizes[s], points, n, 0) != 0 &&
                world_rank == 0)
                fprintf(stderr, "xchg-tune: no memory for the native curve of %s on %d ranks\n",
                        xchg_coll_name(coll), opt->sizes[s]);
        }
}

/* Per collective: measured native / the model of native (tuning/cost_native.c without the
 * curves: the MPI library's default algorithm priced with the measured constants), the
 * median and the range over the timed cells. */
static void describe_native(FILE *out, const char *prefix, const double *times,
                            const options_t *opt, const size_t *buckets, int nbuckets,
                            const xchg_machine_t *machine)
{
    xchg_machine_t modelled = *machine;
    xchg_params_t none;
    series_t ratios = {NULL, 0, 0};

    modelled.native = NULL;
    for (int coll = 0; coll < XCHG_NCOLLS; coll++) {
        ratios.n = 0;
        for (int s = 0; s < opt->nsizes; s++)
            for (int b = 0; b < nbuckets; b++) {
                xchg_call_t call = tool_model_call(coll, opt->sizes[s], buckets[b]);
                double t = times[cell_at(opt, nbuckets, coll, s, b)], model;
                call.topo = &cell_topo[s];
                memset(&none, 0, sizeof none);
                model = xchg_cost_native(&call, &modelled, &none);
                if (t >= 0 && model > 0)
                    series_add(&ratios, xchg_fit_round(t) / model);
            }
        if (ratios.n == 0) {
            fprintf(out, "%snative %s: not measured\n", prefix, xchg_coll_name(coll));
            continue;
        }
        qsort(ratios.values, (size_t)ratios.n, sizeof *ratios.values, tool_cmp_double);
        fprintf(out,
                "%snative %s: measured / modelled (the MPI library's default algorithm with "
                "these constants) median %.3gx, from %.3gx to %.3gx over %d cells\n",
                prefix, xchg_coll_name(coll), median_of(&ratios), ratios.values[0],
                ratios.values[ratios.n - 1], ratios.n);
    }
    free(ratios.values);
}

typedef struct verify_pass {
    const options_t *opt;
    const size_t *buckets;
    int nbuckets;
    const xchg_machine_t *machine; /* native priced by its curves */
    const double *native_times;    /* phase 4 */
    cell_t *cells;
    candidate_t *cands;
    verify_summary_t *summary;
} verify_pass_t;

static void verify_one(int coll, int s, int b, tool_call_t *call, MPI_Comm comm, void *arg)
{
    verify_pass_t *pass = arg;
    size_t at = cell_at(pass->opt, pass->nbuckets, coll, s, b);
    int p = pass->opt->sizes[s];
    int n = enumerate(coll, p, &cell_topo[s], pass->buckets[b], pass->machine, pass->cands);
    int best = verify_cell(coll, p, pass->buckets[b], pass->cands, n, pass->native_times[at],
                           pass->opt, call, comm, pass->summary);
    if (best >= 0) {
        pass->cells[at].algo = pass->cands[best].algo;
        pass->cells[at].params = pass->cands[best].params;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* The table                                                                                 */

static int same_choice(const cell_t *a, const cell_t *b)
{
    return a->algo == b->algo && params_equal(&a->params, &b->params);
}

/* Rules of one row (one collective, one size): equal neighbouring buckets merged. */
static int row_rules(const cell_t *row, const size_t *buckets, int nbuckets, xchg_rule_t *out)
{
    int n = 0;
    for (int b = 0; b < nbuckets; b++) {
        size_t hi = b + 1 < nbuckets ? buckets[b + 1] - 1 : SIZE_MAX;
        if (n > 0 && out[n - 1].algo == row[b].algo &&
            params_equal(&out[n - 1].params, &row[b].params)) {
            out[n - 1].bmax = hi;
            continue;
        }
        memset(&out[n], 0, sizeof out[n]);
        out[n].bmin = buckets[b];
        out[n].bmax = hi;
        out[n].algo = row[b].algo;
        out[n].params = row[b].params;
        n++;
    }
    return n;
}

static int rows_equal(const cell_t *a, const cell_t *b, int nbuckets)
{
    for (int i = 0; i < nbuckets; i++)
        if (!same_choice(&a[i], &b[i]))
            return 0;
    return 1;
}

/* cells[coll][size][bucket] into rules, rows with equal choices whose cells span as many nodes
 * merged over sizes; when the job spans nodes each rule names them (nodes=N). */
static int build_table(const cell_t *cells, const options_t *opt, const size_t *buckets,
                       int nbuckets, xchg_table_t *table)
{
    int cap = XCHG_NCOLLS * opt->nsizes * nbuckets;
    table->rules = calloc((size_t)cap, sizeof *table->rules);
    if (!table->rules)
        return -1;
    for (int coll = 0; coll < XCHG_NCOLLS; coll++) {
        for (int s = 0; s < opt->nsizes;) {
            const cell_t *row = &cells[((size_t)coll * opt->nsizes + s) * nbuckets];
            int last = s, n;
            while (last + 1 < opt->nsizes && cell_topo[last + 1].nnodes == cell_topo[s].nnodes &&
                   rows_equal(row, &cells[((size_t)coll * opt->nsizes + last + 1) * nbuckets],
                              nbuckets))
                last++;
            n = row_rules(row, buckets, nbuckets, &table->rules[table->nrules]);
            for (int r = 0; r < n; r++) {
                xchg_rule_t *rule = &table->rules[table->nrules + r];
                rule->coll = coll;
                rule->pmin = opt->sizes[s];
                rule->pmax = last + 1 < opt->nsizes ? opt->sizes[last + 1] - 1 : opt->sizes[last];
                if (job_nodes > 1)
                    rule->nmin = rule->nmax = cell_topo[s].nnodes;
            }
            table->nrules += n;
            s = last + 1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------- */

typedef struct measured {
    xchg_fit_t same, cross;  /* same node; across nodes (ok = 0 when not measured) */
    int same_fit, cross_fit; /* xchg_fit_linear's verdicts, when measured */
    int same_peer, cross_peer;
    double t_k[PORTS_MAX + 1];
    int kmax, layout;
    int yield;          /* the waiting policy the rounds ran under (ctx->yield) */
    int oversubscribed; /* rank 0's node has more ranks than processing units */
    int node_size, node_pus;
    size_t port_bytes;
    double port_share;
    int port_measured;
    double rho;
    size_t copy_bytes;
    double rho_cached;   /* seconds per byte of a memcpy of CACHED_COPY, repeated (0: none) */
    size_t cached_bytes; /* a quarter of the L2 cache (sysconf), 0 when unknown */
    double sync_ratio;      /* shm / pairwise:k=n-1, 1 B, on rank 0's node (0: not measured) */
    int sync_ranks;         /* n, that node's ranks */
    double cross_sustained; /* tau of the two largest ping-pongs across nodes (0: not used) */
    int inject_senders;     /* ranks of rank 0's node that sent at once (0: not measured) */
    double inject_one, inject_all; /* one of them alone, all of them: seconds */
    int inject;                    /* what the table says: 0 unlimited */
    double t_large, t_huge; /* one exchange of LARGE_BYTES and of port_bytes each way between
                               rank 0 and same_peer: seconds (0: not measured) */
    double seconds;
} measured_t;

static void fit_text(const char *what, const xchg_fit_t *f, int peer, char *out, size_t outlen)
{
    snprintf(out, outlen,
             "%s (world ranks 0 and %d): beta=%.3g s, tau=%.3g s/B (%.2f GB/s), fit residual "
             "%.1f%% rms, %.1f%% worst over %d sizes%s",
             what, peer, f->beta, f->tau, f->tau > 0 ? 1e-9 / f->tau : 0.0, 100 * f->rms,
             100 * f->worst, f->npoints, f->dropped ? " (outliers dropped)" : "");
}

static void print_points(const char *what, const size_t *sizes, const double *oneway, int n,
                         const xchg_fit_t *f)
{
    fprintf(info, "  ping-pong %s: bytes, one-way us, fit us\n", what);
    for (int i = 0; i < n; i++)
        fprintf(info, "    %9zu %10.2f %10.2f\n", sizes[i], oneway[i] * 1e6,
                (f->beta + (double)sizes[i] * f->tau) * 1e6);
}

/* Processing units of the node: hwloc's count from the context, else the processors this
 * process may run on. */
static int processing_units(const xchg_ctx_t *ctx)
{
    cpu_set_t set;
    if (ctx->node_pus > 0)
        return ctx->node_pus;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    return 1;
}

/* A node's injection limit (inject=, xchg_machine_t): the n ranks of rank 0's node (at most
 * PORTS_MAX) each send `bytes` to a rank on another node at once, against one of them alone.
 * When the node's interface carries one message at full speed at a time the n messages take n
 * times as long: inject = n t_one / t_all, rounded, 1 .. n; 0 (no limit) when n messages take
 * less than 1.5 times one. The receivers are the first ranks of the other nodes in turn, so
 * that as few as possible share a receiving node (when fewer nodes than senders remain, a node
 * receives two messages and the figure is a lower bound). Every rank takes part in the
 * barriers; a trial's time is its last receiver's, the median of reps. */
static int measure_inject(xchg_ctx_t *ctx, size_t bytes, int reps, char *sendbuf, char *recvbuf,
                          measured_t *m)
{
    int mine, n = node_count(ctx, &mine), remote[PORTS_MAX], nremote = 0, rc = MPI_SUCCESS;
    double times[2][64];

    n = n < PORTS_MAX ? n : PORTS_MAX;
    reps = reps < 64 ? reps : 64;
    /* the first rank of every other node, in node order, then the second ones ... */
    for (int round = 0; nremote < n && round < ctx->size; round++) {
        int before = nremote;
        for (int node = 0; node < ctx->nnodes && nremote < n; node++) {
            int seen = 0;
            if (node == ctx->node_of[0])
                continue;
            for (int r = 0; r < ctx->size; r++)
                if (ctx->node_of[r] == node && seen++ == round) {
                    remote[nremote++] = r;
                    break;
                }
        }
        if (nremote == before)
            break;
    }
    if (n < 2 || nremote == 0)
        return MPI_SUCCESS;
    for (int trial = 0; trial < 2; trial++) {
        int senders = trial == 0 ? 1 : n;
        for (int rep = 0; rep < reps && rc == MPI_SUCCESS; rep++) {
            xchg_msg_t sends[1], recvs[PORTS_MAX];
            int nsends = 0, nrecvs = 0;
            double t0, elapsed = 0;
            for (int i = 0; i < senders; i++) {
                int from = node_member(ctx, i), to = remote[i % nremote];
                if (ctx->rank == from)
                    sends[nsends++] = (xchg_msg_t){to, sendbuf, bytes};
                if (ctx->rank == to) {
                    recvs[nrecvs] = (xchg_msg_t){from, recvbuf + (size_t)nrecvs * bytes, bytes};
                    nrecvs++;
                }
            }
            rc = tool_barrier(MPI_COMM_WORLD, nsends + nrecvs == 0);
            t0 = MPI_Wtime();
            if (rc == MPI_SUCCESS && nsends + nrecvs > 0)
                rc = xchg_exchange(ctx, sends, nsends, recvs, nrecvs);
            if (nrecvs > 0)
                elapsed = MPI_Wtime() - t0;
            if (rc == MPI_SUCCESS)
                rc = tool_allreduce(&elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            times[trial][rep] = elapsed;
        }
        qsort(times[trial], (size_t)reps, sizeof times[trial][0], tool_cmp_double);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    m->inject_senders = n;
    m->inject_one = times[0][reps / 2];
    m->inject_all = times[1][reps / 2];
    if (m->inject_one > 0 && m->inject_all > 1.5 * m->inject_one) {
        int inject = (int)lround(n * m->inject_one / m->inject_all);
        m->inject = inject < 1 ? 1 : inject > n ? n : inject;
    }
    return MPI_SUCCESS;
}

/* sync: what one pass through a node's shared segment costs, against messages: the shm
 * algorithm's MPI_Alltoall of 1 B and pairwise's with every message at once (k = n - 1), on the
 * communicator of rank 0's node's n ranks, both forced in-process and timed like every
 * candidate. A timed call of either carries the same overhead besides its pass or its messages:
 * the call's own path and the barrier's skew (0.3 to 0.5 us a call with MPICH at 2 ranks on a
 * 2-core VM, where the ping-pong's beta is 0.13 us), and on a node with more ranks than cores
 * the waits for every rank to be scheduled, which the ping-pong, run while the other ranks
 * sleep, does not see (Open MPI, 8 ranks on 2 cores: 7 to 30 us a call of 1 B against a priced
 * 1 to 10). So the ratio of the two, not shm's time, is what a pass costs against the model's
 * price of that pairwise call (sync_from_ratio). A single timing of each scattered the ratio
 * from 0.39 to 1.24 over 3 runs at 2 ranks (MPICH), so it is the ratio of medians of
 * SYNC_TURNS each. Collective over the world; *ratio and *n are rank 0's (*ratio 0 when a
 * timing failed). */
#define SYNC_TURNS 5 /* each timed this many times, in turns; the medians' ratio */
_Static_assert(SYNC_TURNS <= TURNS_MAX && CONFIRM_TURNS <= TURNS_MAX, "time_in_turns' bound");

static int measure_sync(xchg_ctx_t *ctx, const options_t *opt, double *ratio, int *n)
{
    MPI_Comm node;
    int mine, in, rc;
    *n = node_count(ctx, &mine);
    in = mine >= 0;
    *ratio = 0;
    rc = MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, ctx->rank, &node);
    if (rc != MPI_SUCCESS)
        return rc;
    if (in) {
        tool_call_t call;
        double spent = 0, budget = opt->quick ? 0.004 : 0.02, none[2] = {0, 0}, median[2];
        char pairwise[32];
        const char *const spec[2] = {"shm", pairwise};
        snprintf(pairwise, sizeof pairwise, "pairwise:k=%d", *n - 1);
        if (tool_call_alloc(&call, XCHG_ALLTOALL, *n, mine, (size_t)*n, (size_t)*n) ==
            MPI_SUCCESS) {
            if (time_in_turns(XCHG_ALLTOALL, spec, none, SYNC_TURNS, 1, budget, opt, &call, node,
                              median, &spent) &&
                median[1] > 0)
                *ratio = median[0] / median[1];
            tool_call_free(&call);
        }
        MPI_Comm_free(&node);
    }
    return tool_barrier(MPI_COMM_WORLD, !in);
}

/* sync from measure_sync's ratio: the ratio times the model's price of the pairwise call it was
 * measured against (on one node of n ranks, with machine's constants), less the shm call's own
 * copies; 0 (a pass priced at beta) without a ratio or with nothing left. */
static double sync_from_ratio(double ratio, int n, const xchg_machine_t *machine)
{
    xchg_call_t call = tool_model_call(XCHG_ALLTOALL, n, 1);
    xchg_params_t params = {0};
    double sync;
    if (!(ratio > 0) || n < 2)
        return 0.0;
    params.nports = n - 1;
    sync = ratio * xchg_cost_alltoall_pairwise(&call, machine, &params) -
           (2.0 * (n - 1) + 1.0) * machine->rho;
    return sync > 0 ? sync : 0.0;
}

static int measure_machine(xchg_ctx_t *ctx, const options_t *opt, measured_t *m,
                           xchg_machine_t *machine)
{
    size_t sizes[32];
    double oneway[32];
    int nsizes = 0, rc;
    double start = MPI_Wtime();
    size_t pp_max = opt->quick ? ((size_t)1 << 20) : PINGPONG_MAX;
    double pp_budget = opt->quick ? 0.01 : 0.04;
    char *buf, *recvbuf;

    memset(m, 0, sizeof *m);
    m->same_peer = m->cross_peer = -1;
    for (int r = 1; r < ctx->size; r++) {
        if (m->same_peer < 0 && ctx->node_of[r] == ctx->node_of[0])
            m->same_peer = r;
        if (m->cross_peer < 0 && ctx->node_of[r] != ctx->node_of[0])
            m->cross_peer = r;
    }
    sizes[nsizes++] = 0;
    for (size_t s = 1; s <= pp_max; s *= opt->quick ? 4 : 2)
        sizes[nsizes++] = s;

    /* the k messages as the library's rounds will run here: on an oversubscribed node every
     * rank of it at once (they share the processors and wait under the library's policy, as
     * in a collective); else k partners, which need k + 1 busy processes: with fewer
     * processing units on the node than that, k messages go to one partner instead */
    {
        int layout[6], pus = processing_units(ctx), mine;
        int local = node_count(ctx, &mine);
        layout[0] = ctx->size - 1 < PORTS_MAX ? ctx->size - 1 : PORTS_MAX;
        layout[1] = PORTS_PARTNERS;
        layout[2] = ctx->node_pus > 0 && local > ctx->node_pus;
        layout[3] = local;
        layout[4] = pus;
        if (layout[2] && local >= 3) {
            layout[0] = local - 1 < PORTS_MAX ? local - 1 : PORTS_MAX;
            layout[1] = PORTS_NODE;
        } else if (ctx->nnodes == 1 && (pus - 1 < layout[0] || layout[0] < 2)) {
            layout[0] = PORTS_MAX;
            layout[1] = PORTS_ONE_PARTNER;
        }
        layout[5] = ctx->yield;
        rc = tool_bcast(layout, 6, MPI_INT, 0, MPI_COMM_WORLD); /* rank 0's view for all */
        if (rc != MPI_SUCCESS)
            return rc;
        m->kmax = layout[0];
        m->layout = layout[1];
        m->oversubscribed = layout[2];
        m->node_size = layout[3];
        m->node_pus = layout[4];
        m->yield = layout[5];
    }
    m->port_bytes = opt->quick ? ((size_t)256 << 10) : ((size_t)1 << 20);
    buf = malloc(pp_max > m->port_bytes ? pp_max : m->port_bytes);
    recvbuf = malloc((size_t)PORTS_MAX * m->port_bytes);
    if (!buf || !recvbuf)
        return MPI_ERR_NO_MEM;
    memset(buf, 5, pp_max > m->port_bytes ? pp_max : m->port_bytes);
    memset(recvbuf, 6, (size_t)PORTS_MAX * m->port_bytes);

    /* beta and tau, on one node and across nodes */
    if (m->same_peer > 0) {
        rc = pingpong(ctx, 0, m->same_peer, sizes, nsizes, pp_budget, buf, oneway);
        if (rc != MPI_SUCCESS)
            return rc;
        if (ctx->rank == 0) {
            m->same_fit = xchg_fit_linear(sizes, oneway, nsizes, &m->same);
            if (opt->verbose)
                print_points("one node", sizes, oneway, nsizes, &m->same);
        }
    }
    if (m->cross_peer > 0) {
        rc = pingpong(ctx, 0, m->cross_peer, sizes, nsizes, pp_budget, buf, oneway);
        if (rc != MPI_SUCCESS)
            return rc;
        if (ctx->rank == 0) {
            m->cross_fit = xchg_fit_linear(sizes, oneway, nsizes, &m->cross);
            if (opt->verbose)
                print_points("across nodes", sizes, oneway, nsizes, &m->cross);
            /* A link with a rate limit or a buffer passes a burst faster than it sustains
             * (tc's tbf, a switch's buffers); a collective's traffic between nodes lasts long
             * enough to run at the sustained rate (tuning/fit.h). */
            m->cross_sustained = xchg_fit_sustained_tau(sizes, oneway, nsizes, &m->cross);
        }
    }

    /* k simultaneous exchanges against one */
    rc = measure_ports(ctx, m->kmax, m->layout, m->port_bytes, opt->quick ? 20 : 40, buf, recvbuf,
                       m->t_k);
    if (rc != MPI_SUCCESS)
        return rc;

    /* a large message's bytes past LARGE_BYTES inside a node (tau_large, as the calibration
     * at MPI_Init measures it, shim/calibrate.c): a shared-memory transport copies once past
     * its eager limit, and the one line of the ping-pong's fit prices those bytes above what
     * an exchange takes (docs/results.md, stop 47) */
    if (m->same_peer > 0 && m->port_bytes > LARGE_BYTES) {
        rc = measure_pair_exchange(ctx, m->same_peer, LARGE_BYTES, opt->quick ? 20 : 40, buf,
                                   recvbuf, &m->t_large);
        if (rc == MPI_SUCCESS)
            rc = measure_pair_exchange(ctx, m->same_peer, m->port_bytes, opt->quick ? 20 : 40,
                                       buf, recvbuf, &m->t_huge);
        if (rc != MPI_SUCCESS)
            return rc;
    }

    /* how many of a node's messages leave it at full speed at once */
    if (ctx->nnodes > 1) {
        rc = measure_inject(ctx, m->port_bytes, opt->quick ? 5 : 9, buf, recvbuf, m);
        if (rc != MPI_SUCCESS)
            return rc;
    }

    /* local copies */
    m->copy_bytes = opt->quick ? ((size_t)2 << 20) : ((size_t)8 << 20);
    if (ctx->rank == 0) {
#ifdef _SC_LEVEL2_CACHE_SIZE
        long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#else
        long l2 = 0; /* unknown: no rho_cached */
#endif
        m->rho = measure_copy(m->copy_bytes, opt->quick ? 5 : 15);
        /* a call's copies of up to a quarter of the core's L2 in all stay in it, source and
         * destination, with room for what else the call touches */
        m->cached_bytes = l2 > 0 ? (size_t)l2 / 4 : 0;
        m->rho_cached = m->cached_bytes >= CACHED_COPY ? measure_copy(CACHED_COPY, 101) : 0;
    }
    rc = tool_barrier(MPI_COMM_WORLD, ctx->rank != 0);
    if (rc != MPI_SUCCESS)
        return rc;

    /* a pass through the node's segment */
    if (m->same_peer > 0) {
        rc = measure_sync(ctx, opt, &m->sync_ratio, &m->sync_ranks);
        if (rc != MPI_SUCCESS)
            return rc;
    }

    if (ctx->rank == 0) {
        /* both levels when both pairs were measured; else the one pair's for all messages */
        const xchg_fit_t *f = m->same.ok ? &m->same : &m->cross;
        *machine = xchg_machine_default;
        if (f->ok) {
            machine->beta = f->beta;
            machine->tau = f->tau;
        }
        if (m->same.ok && m->cross.ok) {
            machine->beta_inter = m->cross.beta;
            machine->tau_inter = m->cross_sustained > 0 ? m->cross_sustained : m->cross.tau;
            machine->inject = m->inject;
        }
        if (m->rho > 0)
            machine->rho = m->rho;
        if (m->rho_cached > 0 && m->rho_cached < machine->rho) {
            machine->rho_cached = m->rho_cached;
            machine->cached_bytes = (double)m->cached_bytes;
        }
        if (xchg_fit_port_share(m->t_k + 1, m->kmax, machine->beta, &m->port_share) == 0) {
            m->port_measured = 1;
            machine->port_share = m->port_share;
        }
        machine->sync = m->same.ok ? sync_from_ratio(m->sync_ratio, m->sync_ranks, machine) : 0;
        /* used where the larger exchange was the slower and its bytes cost less than tau */
        if (m->same.ok && m->t_large > 0 && m->t_huge > m->t_large) {
            double tau_large = (m->t_huge - m->t_large) / (double)(m->port_bytes - LARGE_BYTES);
            if (tau_large < machine->tau) {
                machine->tau_large = tau_large;
                machine->large_from = LARGE_BYTES;
            }
        }
    }
    free(buf);
    free(recvbuf);
    /* 4 significant digits: what the table's machine line says is what the table used */
    machine->beta = xchg_fit_round(machine->beta);
    machine->tau = xchg_fit_round(machine->tau);
    machine->rho = xchg_fit_round(machine->rho);
    machine->port_share = xchg_fit_round(machine->port_share);
    machine->beta_inter = xchg_fit_round(machine->beta_inter);
    machine->tau_inter = xchg_fit_round(machine->tau_inter);
    machine->sync = xchg_fit_round(machine->sync);
    machine->tau_large = xchg_fit_round(machine->tau_large);
    machine->rho_cached = xchg_fit_round(machine->rho_cached);
    rc = tool_bcast(machine, (int)(sizeof *machine), MPI_BYTE, 0, MPI_COMM_WORLD);
    /* the gap at a node, as the calibration at MPI_Init measures it: every rank sends across at
       once (collective, the same value on every rank) */
    if (rc == MPI_SUCCESS && ctx->nnodes > 1 && machine->beta_inter > 0)
        machine->gap_inter = xchg_fit_round(xchg_api_measure_gap(machine->beta_inter));
    m->seconds = MPI_Wtime() - start;
    return rc;
}

/* The layout of world ranks 0 .. p - 1 for every size of the table (cell_topo), summarised
 * as the library summarises a communicator's (shim/context.c): nodes numbered in order of
 * their lowest rank, which a prefix of the world keeps. The layout hash is left 0: no cost
 * model reads it. */
static int cell_layouts(const xchg_ctx_t *ctx, const options_t *opt)
{
    int *count = calloc((size_t)ctx->nnodes, sizeof *count);

    if (!count)
        return MPI_ERR_NO_MEM;
    job_nodes = ctx->nnodes;
    for (int s = 0; s < opt->nsizes; s++) {
        xchg_topo_t *t = &cell_topo[s];
        int p = opt->sizes[s];
        memset(count, 0, (size_t)ctx->nnodes * sizeof *count);
        memset(t, 0, sizeof *t);
        t->consecutive = 1;
        t->min_node_ranks = p;
        for (int r = 0; r < p; r++) {
            count[ctx->node_of[r]]++;
            if (r > 0 && ctx->node_of[r] < ctx->node_of[r - 1])
                t->consecutive = 0;
        }
        for (int node = 0; node < ctx->nnodes; node++) {
            if (count[node] == 0)
                continue;
            t->nnodes++;
            t->min_node_ranks = count[node] < t->min_node_ranks ? count[node] : t->min_node_ranks;
            t->max_node_ranks = count[node] > t->max_node_ranks ? count[node] : t->max_node_ranks;
        }
        /* the shm algorithms: a prefix of a world in one machine's memory is in it too, and
         * so is a prefix within one node of a world whose nodes' ranks share memory (the
         * library gives such a communicator shm: shim/context.c); the node algorithms: the
         * nodes of a prefix are nodes of the world, whose ranks share memory where the world's
         * do (without it xchg-tune never priced nor timed `node`). On one node `node` runs
         * what `shm` runs, through the same segment: a tie that timing splits at random, so it
         * is left to shm there */
        t->shm_bytes = t->nnodes > 1             ? 0
                       : ctx->topo.shm_bytes > 0 ? ctx->topo.shm_bytes
                                                 : ctx->topo.node_shm_bytes;
        t->node_shm_bytes = t->nnodes > 1 ? ctx->topo.node_shm_bytes : 0;
    }
    free(count);
    return MPI_SUCCESS;
}

/* Why the rounds waited as they did (the library's policy, shim/context.c). */
static const char *wait_reason(const measured_t *m)
{
    if (xchg_api_wait() == 1)
        return "XCHG_WAIT=spin";
    if (xchg_api_wait() == 2)
        return "XCHG_WAIT=yield";
    if (m->yield)
        return "XCHG_WAIT=auto on an oversubscribed node";
    if (m->oversubscribed)
        return "XCHG_WAIT=auto on an oversubscribed node, where the MPI library's own wait "
               "yields";
    return "XCHG_WAIT=auto on a node that is not oversubscribed";
}

static void describe_measurements(FILE *out, const char *prefix, const measured_t *m,
                                  const xchg_machine_t *machine)
{
    char text[512];
    if (m->same.ok) {
        fit_text("ping-pong on one node", &m->same, m->same_peer, text, sizeof text);
        fprintf(out, "%s%s\n", prefix, text);
    } else if (m->same_fit != XCHG_FIT_OK) {
        fprintf(out, "%sping-pong on one node: no fit (%s)\n", prefix, xchg_fit_error(m->same_fit));
    }
    if (m->cross.ok) {
        fit_text("ping-pong across nodes", &m->cross, m->cross_peer, text, sizeof text);
        fprintf(out, "%s%s\n", prefix, text);
    } else if (m->cross_fit != XCHG_FIT_OK) {
        fprintf(out, "%sping-pong across nodes: no fit (%s)\n", prefix,
                xchg_fit_error(m->cross_fit));
    }
    if (m->cross_sustained > 0)
        fprintf(out,
                "%sacross nodes the two largest ping-pongs run at %.3g s/B (%.2f GB/s), more "
                "than a quarter slower than the fit: tau_inter is that sustained rate\n",
                prefix, m->cross_sustained, 1e-9 / m->cross_sustained);
    if (m->inject_senders > 0)
        fprintf(out,
                "%s%d ranks of rank 0's node sending %zu B each to other nodes at once: %.3g s, "
                "one alone %.3g s -> inject=%d%s\n",
                prefix, m->inject_senders, m->port_bytes, m->inject_all, m->inject_one, m->inject,
                m->inject ? "" : " (no limit seen)");
    if (!m->same.ok && !m->cross.ok)
        fprintf(out, "%sping-pong: not measured; built-in beta and tau\n", prefix);
    if (m->port_measured) {
        char layout[256];
        if (m->layout == PORTS_NODE)
            snprintf(layout, sizeof layout,
                     "each of the %d ranks on rank 0's node with its k neighbours at once, as in "
                     "a round of pairwise:k: the node is oversubscribed, %d ranks on %d "
                     "processing units",
                     m->node_size, m->node_size, m->node_pus);
        else
            snprintf(layout, sizeof layout, "%s",
                     m->layout == PORTS_ONE_PARTNER
                         ? "k messages each way between ranks 0 and 1: too few processing units "
                           "or ranks for k partners"
                         : "rank 0 with ranks 1..k");
        fprintf(out, "%sk simultaneous exchanges of %zu B (%s), under %s waiting (%s):", prefix,
                m->port_bytes, layout, m->yield ? "yield" : "spin", wait_reason(m));
        for (int k = 1; k <= m->kmax; k++)
            fprintf(out, " T%d=%.3g s", k, m->t_k[k]);
        fprintf(out, " -> port_share=%.3g\n", m->port_share);
    } else {
        fprintf(out, "%sport_share: not measured; built-in %.3g\n", prefix, machine->port_share);
    }
    if (m->t_large > 0 && m->t_huge > 0)
        fprintf(out,
                "%sone exchange between ranks 0 and %d, each way, of %d B: %.3g s, of %zu B: "
                "%.3g s -> %s\n",
                prefix, m->same_peer, LARGE_BYTES, m->t_large, m->port_bytes, m->t_huge,
                machine->tau_large > 0 ? "tau_large" : "not below tau: no tau_large");
    if (machine->tau_large > 0)
        fprintf(out, "%s  tau_large=%.3g s/B (%.2f GB/s) past %.0f B\n", prefix,
                machine->tau_large, 1e-9 / machine->tau_large, machine->large_from);
    fprintf(out, "%slocal copies (memcpy of %zu B): rho=%.3g s/B (%.2f GB/s)\n", prefix,
            m->copy_bytes, machine->rho, machine->rho > 0 ? 1e-9 / machine->rho : 0.0);
    if (machine->rho_cached > 0)
        fprintf(out,
                "%slocal copies that stay in the cache (memcpy of %d B, repeated): rho_cached=%.3g "
                "s/B (%.2f GB/s), for a call's copies of up to %zu B (a quarter of the L2)\n",
                prefix, CACHED_COPY, machine->rho_cached, 1e-9 / machine->rho_cached,
                m->cached_bytes);
    if (machine->sync > 0)
        fprintf(out,
                "%sa pass through the node's shared segment (shm alltoall of 1 B on rank 0's "
                "node, %d ranks) took %.2f times pairwise:k=%d's call: sync=%.3g s\n",
                prefix, m->sync_ranks, m->sync_ratio, m->sync_ranks - 1, machine->sync);
    if (machine->gap_inter > 0)
        fprintf(out,
                "%severy rank sending small messages to ranks of other nodes at once: a node "
                "spends gap_inter=%.3g s on each message out of it\n",
                prefix, machine->gap_inter);
}

/* The 1-minute load average (Linux), "?" elsewhere: the machine may be shared. */
static void read_load(char *out, size_t outlen)
{
    FILE *file = fopen("/proc/loadavg", "r");
    snprintf(out, outlen, "?");
    if (file) {
        if (fscanf(file, "%15s", out) != 1)
            snprintf(out, outlen, "?");
        fclose(file);
    }
}

/* The table's comment: where and how it was made, what was measured, how cells were chosen. */
static void make_comment(char *comment, size_t len, const options_t *opt, const xchg_ctx_t *ctx,
                         const measured_t *m, const xchg_machine_t *machine,
                         const double *native_times, const size_t *buckets, int nbuckets,
                         const char *mpi_name, const char *load)
{
    char host[256] = "?", date[64] = "?", *text = NULL;
    time_t now = time(NULL);
    size_t text_len = 0, used = 0;
    FILE *mem;

    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
    used += (size_t)snprintf(comment + used, len - used,
                             "written by xchg-tune on %s, %s\n%s, %d ranks on %d node%s, %s "
                             "waiting, load average %s at the start\n",
                             host, date, mpi_name, world_size, ctx->nnodes,
                             ctx->nnodes > 1 ? "s" : "", ctx->yield ? "yield" : "spin", load);
    mem = open_memstream(&text, &text_len);
    if (mem) {
        describe_measurements(mem, "", m, machine);
        describe_native(mem, "", native_times, opt, buckets, nbuckets, machine);
        fclose(mem);
        used += (size_t)snprintf(comment + used, len - used, "%s", text);
        free(text);
    }
    if (used < len)
        snprintf(comment + used, len - used,
                 "cells: communicator sizes %d..%d x block bytes 0..%zu (powers of %d); "
                 "choice: %s\n"
                 "first match wins; calls no rule covers use the cost models with the machine "
                 "line, and native's curve for their collective and communicator size",
                 opt->sizes[0], opt->sizes[opt->nsizes - 1], opt->max_bytes, opt->quick ? 4 : 2,
                 opt->verify ? (opt->verify_all ? "measured best of every candidate"
                                                : "measured best of the model's best and native")
                             : "cheapest cost model, native at its measured time");
}

/* Write the table to -o FILE, standard output (-o -) or, without -o, the per-user cache; 0, or
 * 1 when that failed (reported). */
static int write_table(const options_t *opt, const xchg_table_t *table, const char *comment)
{
    FILE *out = stdout;
    int status = 0;

    if (!opt->out_path) {
        const char *path = NULL;
        if (xchg_api_cache_write(table, comment, &path) != 0) {
            fprintf(stderr, "xchg-tune: the table could not go to the cache (%s); give -o FILE\n",
                    path ? path : "the cache is off: XCHG_CACHE=0, XCHG_TUNING set, or no home");
            return 1;
        }
        fprintf(info, "xchg-tune: the table is in the cache: %s\n", path);
        return 0;
    }
    if (strcmp(opt->out_path, "-") != 0) {
        out = fopen(opt->out_path, "w");
        if (!out) {
            fprintf(stderr, "xchg-tune: cannot write %s\n", opt->out_path);
            return 1;
        }
    }
    if (xchg_table_write(out, table, comment) != 0) {
        fprintf(stderr, "xchg-tune: writing the table failed\n");
        status = 1;
    }
    if (out != stdout && fclose(out) != 0 && status == 0) {
        fprintf(stderr, "xchg-tune: writing %s failed\n", opt->out_path);
        status = 1;
    }
    return status;
}

static void report_verify(verify_summary_t *summary)
{
    fprintf(info,
            "verify: the model's first choice was the measured best in %d of %d cells "
            "(%.0f%%), within 5%% of it in %d (%.0f%%), within 10%% in %d (%.0f%%); native was "
            "best in %d\n",
            summary->model_first_best, summary->cells,
            100.0 * summary->model_first_best / summary->cells, summary->model_first_within5,
            100.0 * summary->model_first_within5 / summary->cells, summary->model_first_within10,
            100.0 * summary->model_first_within10 / summary->cells, summary->native_best);
    fprintf(info,
            "verify: in %d of the %d cells (%.0f%%) another timed candidate measured within 5%% "
            "of the best (there a timing's scatter may decide which is best)\n",
            summary->close_cells, summary->cells, 100.0 * summary->close_cells / summary->cells);
    fprintf(info,
            "verify: median relative error of the model %.0f%% (%d timings; %.0f%% "
            "over the %d with no more ranks than the %d processing units); measured "
            "time / predicted: median %.3gx; the model's choice took %.2fx the best's "
            "time (geometric mean)\n",
            100 * median_of(&summary->errors), summary->errors.n,
            100 * median_of(&summary->errors_fitting), summary->errors_fitting.n, summary->pus,
            median_of(&summary->ratios), exp(summary->slowdown_log_sum / summary->cells));
    fprintf(info,
            "verify: timed %d of %d candidates in %.1f s (%d close cells timed again "
            "in turns); timing every candidate would take about %.1f s\n",
            summary->timed, summary->all_candidates, summary->seconds, summary->confirmed,
            summary->estimated_all_seconds);
}

int main(int argc, char **argv)
{
    options_t opt;
    measured_t m;
    xchg_machine_t machine;
    xchg_table_t table; /* native's curves on every rank, the rules on rank 0 */
    xchg_ctx_t *ctx;
    size_t buckets[MAX_BUCKETS];
    int nbuckets, ncells, native_chosen = 0, rc = MPI_SUCCESS, status = 0;
    cell_t *cells = NULL;
    double *native_times = NULL; /* [cell] seconds per call, -1 where not measured */
    candidate_t *cands = NULL;
    verify_summary_t summary;
    double start, model_seconds, native_seconds;
    char mpi_name[64], load[32];

    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--version") == 0) { /* before MPI_Init: no launcher needed */
            printf("xchg-tune %s\n", xchg_version());
            return 0;
        }
    MPI_Init(&argc, &argv);
    start = MPI_Wtime();
    read_load(load, sizeof load);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    memset(&summary, 0, sizeof summary);
    memset(&table, 0, sizeof table);

    status = parse_options(argc, argv, &opt);
    if (status != 0) {
        MPI_Finalize();
        return status < 0 ? 2 : 0;
    }
    info = opt.out_path && strcmp(opt.out_path, "-") == 0 ? stderr : stdout;
    tool_mpi_name(mpi_name, sizeof mpi_name);
    if (xchg_api_disabled()) {
        if (world_rank == 0)
            fprintf(stderr, "xchg-tune: XCHG_DISABLE is set: nothing to tune\n");
        MPI_Finalize();
        return 2;
    }
    /* the table being made must not decide the measurements */
    for (int coll = 0; coll < XCHG_NCOLLS; coll++)
        xchg_force(coll, "auto");
    xchg_api_drop_table();

    ctx = xchg_ctx_get(MPI_COMM_WORLD, &rc, NULL);
    if (!ctx) {
        if (world_rank == 0)
            fprintf(stderr, "xchg-tune: no xchg context for MPI_COMM_WORLD (error %d)\n", rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    /* phases 1-3 */
    rc = measure_machine(ctx, &opt, &m, &machine);
    if (rc != MPI_SUCCESS)
        goto fail;
    rc = cell_layouts(ctx, &opt);
    if (rc != MPI_SUCCESS)
        goto fail;
    if (world_rank == 0) {
        fprintf(info, "xchg-tune: %d ranks on %d node%s, %s, %s waiting, load average %s\n",
                world_size, ctx->nnodes, ctx->nnodes > 1 ? "s" : "", mpi_name,
                ctx->yield ? "yield" : "spin", load);
        describe_measurements(info, "  ", &m, &machine);
        fprintf(info, "  the table uses beta=%.4g tau=%.4g rho=%.4g port_share=%.4g", machine.beta,
                machine.tau, machine.rho, machine.port_share);
        if (machine.sync > 0)
            fprintf(info, " sync=%.4g", machine.sync);
        if (machine.tau_large > 0)
            fprintf(info, " tau_large=%.4g past %.0f B", machine.tau_large, machine.large_from);
        if (machine.rho_cached > 0)
            fprintf(info, " rho_cached=%.4g up to %.0f B", machine.rho_cached,
                    machine.cached_bytes);
        if (machine.beta_inter > 0 || machine.tau_inter > 0)
            fprintf(info, ", across nodes beta_inter=%.4g tau_inter=%.4g", machine.beta_inter,
                    machine.tau_inter);
        if (machine.gap_inter > 0)
            fprintf(info, " gap_inter=%.4g", machine.gap_inter);
        fprintf(info, " (measured in %.1f s)\n", m.seconds);
        fflush(info);
    }

    summary.pus = processing_units(ctx);
    nbuckets = make_buckets(&opt, buckets);
    ncells = XCHG_NCOLLS * opt.nsizes * nbuckets;
    cells = calloc((size_t)ncells, sizeof *cells);
    native_times = malloc((size_t)ncells * sizeof *native_times);
    cands = malloc(MAX_CANDIDATES * sizeof *cands);
    if (!cells || !native_times || !cands) {
        rc = MPI_ERR_NO_MEM;
        goto fail;
    }

    /* phase 4: native's curves, which price native from here on */
    rc = measure_native(&opt, buckets, nbuckets, native_times, &native_seconds);
    if (rc != MPI_SUCCESS)
        goto fail;
    build_curves(native_times, &opt, buckets, nbuckets, &table.native);
    machine.native = &table.native;
    if (world_rank == 0) {
        fprintf(info, "  native timed in %d cells in %.1f s\n", ncells, native_seconds);
        describe_native(info, "  ", native_times, &opt, buckets, nbuckets, &machine);
        fflush(info);
    }

    /* phase 5: the model's choice in every cell, native at its measured cost */
    model_seconds = MPI_Wtime();
    for (int coll = 0; coll < XCHG_NCOLLS; coll++)
        for (int s = 0; s < opt.nsizes; s++)
            for (int b = 0; b < nbuckets; b++) {
                cell_t *cell = &cells[cell_at(&opt, nbuckets, coll, s, b)];
                int n = enumerate(coll, opt.sizes[s], &cell_topo[s], buckets[b], &machine, cands);
                cell->algo = n > 0 ? cands[0].algo : xchg_native_index(coll);
                cell->params = n > 0 ? cands[0].params : (xchg_params_t){0};
                cell->predicted = n > 0 ? cands[0].predicted : INFINITY;
                native_chosen += xchg_algos[cell->algo].native;
            }
    model_seconds = MPI_Wtime() - model_seconds;

    /* phase 6: measure the best candidates of every cell */
    if (opt.verify) {
        verify_pass_t pass = {&opt,         buckets, nbuckets, &machine,
                              native_times, cells,   cands,    &summary};
        if (world_rank == 0) {
            fprintf(info, "xchg-tune: verifying %d cells (%s)...\n", ncells,
                    opt.verify_all ? "every candidate" : "the model's best and native");
            fflush(info);
        }
        for_each_cell(&opt, buckets, nbuckets, !opt.verbose, verify_one, &pass);
    }

    if (world_rank == 0) {
        char comment[4096];
        if (build_table(cells, &opt, buckets, nbuckets, &table) != 0) {
            rc = MPI_ERR_NO_MEM;
            goto fail;
        }
        table.has_machine = 1;
        table.machine = machine;
        table.machine.native = NULL; /* the curves are table.native */
        make_comment(comment, sizeof comment, &opt, ctx, &m, &machine, native_times, buckets,
                     nbuckets, mpi_name, load);
        status = write_table(&opt, &table, comment);
        fprintf(info,
                "xchg-tune: %d rules and %d native curves from %d cells (model: %.3f s; "
                "native chosen by the model in %d)%s%s\n",
                table.nrules, table.native.ncurves, ncells, model_seconds, native_chosen,
                opt.out_path ? " in " : "", opt.out_path ? opt.out_path : "");
        if (opt.verify && summary.cells > 0)
            report_verify(&summary);
        fprintf(info, "xchg-tune: done in %.1f s\n", MPI_Wtime() - start);
    }
    xchg_table_free(&table);
    free(cells);
    free(native_times);
    free(cands);
    free(summary.errors.values);
    free(summary.errors_fitting.values);
    free(summary.ratios.values);
    MPI_Finalize();
    return status;

fail:
    fprintf(stderr, "xchg-tune: rank %d: MPI error %d\n", world_rank, rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

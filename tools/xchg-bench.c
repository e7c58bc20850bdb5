/*
 * xchg-bench: an OSU-style benchmark of every algorithm of the three collectives, and of the
 * cost of interposing at all (--overhead).
 *
 *     mpiexec -n 8 build/xchg-bench [--coll alltoall] [--algos native,radix:r=2] [--check]
 *     mpiexec -n 2 build/xchg-bench --overhead
 *
 * For each collective, each algorithm spec (forced in-process with xchg_force, so the tool's
 * own MPI_Alltoall / MPI_Allgather / MPI_Alltoallv calls go through the shim; "native" is the
 * MPI library's collective, "auto" the library's own choice with XCHG_TUNING if set) and each
 * block size (powers of two from --min-bytes to --max-bytes, or the list --sizes), one CSV line:
 *
 *     mpi,ranks,collective,algorithm,params,bytes,iters,min_us,median_us,max_us
 *
 *  - bytes: the block of one rank pair (alltoall, allgather); for alltoallv the mean block,
 *    every rank sending n = ranks x bytes in all, spread over the destinations by --workload
 *    (tuning/workloads.h: uniform, hrel:h=H, ggroup:g=G,t=T; default uniform).
 *  - algorithm: the spec as requested ("native", "auto", "radix", "radix:r=SQRTP"), so that
 *    one spec is one line in the plots; specs that come out the same for this rank count
 *    (r=SQRTP and r=P are both r=2 at 2 ranks) are run once, under the first one's name. A spec
 *    given again as it was written runs again, named SPEC#2 (#3, ...): native,auto,native
 *    times native twice in one run, a control of how far two lines of the same collective
 *    differ (scripts/compare.sh --control).
 *  - params: the parameters the algorithm ran with, the model's completion of the spec
 *    included, items separated by ':' (so the field is a valid spec suffix and holds no
 *    comma); for auto, the algorithm auto ran and its parameters (bench_auto_choice); "fallback"
 *    when the algorithm cannot serve the call (the library then runs auto's choice).
 *  - Timing (tool_common.h): --warmup untimed calls (default 40, so that a library that learns
 *    from the first calls of a shape has settled: xchg's trials take up to 36 calls), then as
 *    many iterations as fit in --time-ms (at least --min-iters, at most --max-iters); every
 *    iteration starts after a barrier and counts the slowest rank's time for the call
 *    (per-iteration MAX over ranks); min, median and max over the iterations, in microseconds.
 *    --rounds R splits that into R turns per spec, the specs of one block taking turns
 *    (A B A B ...; each later turn after one untimed call), so that load drifting over seconds
 *    hits all of them alike; the median is then the median of the turns' medians, iters the
 *    sum.
 *  - --check: before every call, warm-up included (outside the timed region), the send buffer
 *    is filled from a formula of (source, destination, byte index, iteration) and the receive
 *    buffer with a poison byte; after it every received byte is compared. A wrong byte is
 *    printed with its place and the tool exits 1, so a fast wrong answer cannot pass.
 *
 * --overhead measures what interposing costs instead, apart from any algorithm: PMPI against
 * the shim forced to native, the shim's bookkeeping on MPI_COMM_SELF against a memcpy, auto
 * (tools/bench_overhead.c, whose header says how, and its CSV columns).
 *
 * Specs in --algos are separated by ','; parameters within a spec by ':' (a piece with '='
 * and no ':' after a spec continues it, so "radix:r=2,k=2" also works). Values SQRTP and P
 * stand for ceil(sqrt(ranks)) and ranks. A spec naming an algorithm that a collective does
 * not have is skipped for that collective.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../shim/api.h"
#include "../tuning/cost.h"
#include "../tuning/workloads.h"
#include "bench.h"
#include "tool_common.h"

/* What --check needs to know about the running call. */
typedef struct check_state {
    const bench_options_t *opt;
    const char *coll_name, *spec;
    int failures_printed;
} check_state_t;

static int world_rank, world_size;
static const xchg_topo_t *world_topo; /* MPI_COMM_WORLD's layout as the shim sees it */

static void usage(FILE *out)
{
    fprintf(out, "usage: mpiexec -n N xchg-bench [options]   (xchg-bench --version: its version)\n"
                 "  --coll LIST         alltoall,allgather,alltoallv (default: all three)\n"
                 "  --algos LIST        specs, e.g. native,auto,pairwise:k=2,radix:r=SQRTP\n"
                 "                      (default: native, auto, every algorithm, radix-like ones\n"
                 "                      also with r=2, r=SQRTP, r=P)\n"
                 "  --min-bytes SIZE    smallest block (default 1)\n"
                 "  --max-bytes SIZE    largest block (default 1M); powers of two in between\n"
                 "  --sizes LIST        these blocks instead, e.g. 1,16,256,4K,64K\n"
                 "  --workload SPEC     alltoallv counts: uniform, hrel:h=H, ggroup:g=G,t=T\n"
                 "  --check             check every received byte of every call\n"
                 "  --warmup N          untimed calls before timing each line (default 40)\n"
                 "  --time-ms MS        time budget per line (default 100)\n"
                 "  --min-iters N       at least N timed iterations (default 5)\n"
                 "  --max-iters N       at most N timed iterations (default 1000)\n"
                 "  --rounds R          time the specs of one block in R turns each, in\n"
                 "                      alternation; a line's median is the median of its\n"
                 "                      turns' medians (default 1: one turn per spec)\n"
                 "  --overhead          measure the interposition overhead instead (blocks\n"
                 "                      1, 16, 256 unless --sizes; summary on standard error)\n"
                 "  --batches N         --overhead: timed rounds per phase (default 200)\n"
                 "  --batch-calls N     --overhead: calls per timed batch (default 100)\n"
                 "  -o FILE             write the CSV to FILE (default: standard output)\n"
                 "  -v                  progress on standard error\n");
}

static int bad_option(const char *fmt, const char *value)
{
    if (world_rank == 0) {
        fprintf(stderr, "xchg-bench: ");
        fprintf(stderr, fmt, value);
        fprintf(stderr, "\n");
    }
    return -1;
}

static int parse_colls(const char *text, bench_options_t *opt)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    opt->ncolls = 0;
    for (char *item = strtok(buf, ","); item; item = strtok(NULL, ",")) {
        int coll = -1;
        for (int c = 0; c < XCHG_NCOLLS; c++)
            if (strcmp(item, xchg_coll_name(c)) == 0)
                coll = c;
        if (coll < 0)
            return bad_option("--coll: unknown collective '%s' (alltoall, allgather, alltoallv)",
                              item);
        opt->colls[opt->ncolls++] = coll;
        if (opt->ncolls == XCHG_NCOLLS)
            break;
    }
    return opt->ncolls > 0 ? 0 : bad_option("--coll '%s': no collective", text);
}

/* Comma-separated specs; "k=2" after "radix:r=2" continues that spec. */
static int parse_specs(const char *text, bench_options_t *opt)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", text);
    opt->nspecs = 0;
    for (char *item = strtok(buf, ","); item; item = strtok(NULL, ",")) {
        if (opt->nspecs > 0 && strchr(item, '=') && !strchr(item, ':')) {
            char *last = opt->specs[opt->nspecs - 1];
            size_t used = strlen(last);
            snprintf(last + used, SPEC_LEN - used, ":%s", item);
            continue;
        }
        if (opt->nspecs == MAX_SPECS)
            return bad_option("--algos: more than 64 specs in '%s'", text);
        snprintf(opt->specs[opt->nspecs++], SPEC_LEN, "%s", item);
    }
    return opt->nspecs > 0 ? 0 : bad_option("--algos '%s': no spec", text);
}

/* Comma-separated block sizes, kept in the order given. */
static int parse_sizes(const char *text, bench_options_t *opt)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    opt->nsizes = 0;
    for (char *item = strtok(buf, ","); item; item = strtok(NULL, ",")) {
        size_t bytes;
        if (tool_parse_bytes(item, &bytes) != 0 || bytes > ((size_t)1 << 30))
            return bad_option("--sizes: '%s' is not a size up to 1G (1, 64K, 1M)", item);
        if (opt->nsizes == MAX_SIZES)
            return bad_option("--sizes: more than 64 sizes in '%s'", text);
        opt->sizes[opt->nsizes++] = bytes;
    }
    return opt->nsizes > 0 ? 0 : bad_option("--sizes '%s': no size", text);
}

/* A count option from least to most; 0, or -1 reported. */
static int parse_count(const char *name, const char *value, int least, int most, int *out)
{
    char *end;
    long v = strtol(value, &end, 10);
    if (*end != '\0' || end == value || v < least || v > most) {
        if (world_rank == 0)
            fprintf(stderr, "xchg-bench: %s '%s': expected a number from %d to %d\n", name, value,
                    least, most);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* 0 on success, 1 for --help, -1 for a bad command line (reported on rank 0). */
static int parse_options(int argc, char **argv, bench_options_t *opt)
{
    char err[256];
    memset(opt, 0, sizeof *opt);
    for (int c = 0; c < XCHG_NCOLLS; c++)
        opt->colls[c] = c;
    opt->ncolls = XCHG_NCOLLS;
    opt->min_bytes = 1;
    opt->max_bytes = (size_t)1 << 20;
    opt->seconds = 0.1;
    opt->min_iters = 5;
    opt->max_iters = 1000;
    opt->rounds = 1;
    opt->warmup = 40;
    opt->batches = 200;
    opt->batch_calls = 100;
    snprintf(opt->workload_text, sizeof opt->workload_text, "uniform");
    xchg_workload_parse("uniform", &opt->workload, err, sizeof err);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        int takes_value = 1;
        if (strcmp(a, "--check") == 0) {
            opt->check = 1;
            takes_value = 0;
        } else if (strcmp(a, "--overhead") == 0) {
            opt->overhead = 1;
            takes_value = 0;
        } else if (strcmp(a, "-v") == 0) {
            opt->verbose = 1;
            takes_value = 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (world_rank == 0)
                usage(stdout);
            return 1;
        } else if (!value) {
            if (world_rank == 0)
                usage(stderr);
            return bad_option("unknown option or missing value: '%s'", a);
        } else if (strcmp(a, "--coll") == 0) {
            if (parse_colls(value, opt) != 0)
                return -1;
        } else if (strcmp(a, "--algos") == 0) {
            if (parse_specs(value, opt) != 0)
                return -1;
        } else if (strcmp(a, "--min-bytes") == 0) {
            if (tool_parse_bytes(value, &opt->min_bytes) != 0)
                return bad_option("--min-bytes '%s': expected a size such as 1, 64K, 1M", value);
        } else if (strcmp(a, "--max-bytes") == 0) {
            if (tool_parse_bytes(value, &opt->max_bytes) != 0 || opt->max_bytes > ((size_t)1 << 30))
                return bad_option("--max-bytes '%s': expected a size up to 1G", value);
        } else if (strcmp(a, "--workload") == 0) {
            if (xchg_workload_parse(value, &opt->workload, err, sizeof err) != 0) {
                if (world_rank == 0)
                    fprintf(stderr, "xchg-bench: --workload %s: %s\n", value, err);
                return -1;
            }
            snprintf(opt->workload_text, sizeof opt->workload_text, "%s", value);
        } else if (strcmp(a, "--time-ms") == 0) {
            opt->seconds = atof(value) / 1000;
            if (!(opt->seconds > 0))
                return bad_option("--time-ms '%s': expected a positive number", value);
        } else if (strcmp(a, "--sizes") == 0) {
            if (parse_sizes(value, opt) != 0)
                return -1;
        } else if (strcmp(a, "--min-iters") == 0) {
            if (parse_count(a, value, 1, 10000000, &opt->min_iters) != 0)
                return -1;
        } else if (strcmp(a, "--max-iters") == 0) {
            if (parse_count(a, value, 1, 10000000, &opt->max_iters) != 0)
                return -1;
        } else if (strcmp(a, "--rounds") == 0) {
            if (parse_count(a, value, 1, MAX_ROUNDS, &opt->rounds) != 0)
                return -1;
        } else if (strcmp(a, "--warmup") == 0) {
            if (parse_count(a, value, 0, 1000000, &opt->warmup) != 0)
                return -1;
        } else if (strcmp(a, "--batches") == 0) {
            if (parse_count(a, value, 1, 1000000, &opt->batches) != 0)
                return -1;
        } else if (strcmp(a, "--batch-calls") == 0) {
            if (parse_count(a, value, 1, 1000000, &opt->batch_calls) != 0)
                return -1;
        } else if (strcmp(a, "-o") == 0) {
            opt->out_path = value;
        } else {
            if (world_rank == 0)
                usage(stderr);
            return bad_option("unknown option '%s'", a);
        }
        i += takes_value;
    }
    if (opt->max_iters < opt->min_iters)
        opt->max_iters = opt->min_iters;
    if (opt->min_bytes > opt->max_bytes)
        return bad_option("--min-bytes is larger than --max-bytes%s", "");
    if (opt->overhead && opt->nsizes == 0) {
        static const size_t small[] = {1, 16, 256};
        for (int k = 0; k < 3; k++)
            opt->sizes[opt->nsizes++] = small[k];
    }
    if (opt->nsizes == 0) { /* powers of two from --min-bytes to --max-bytes */
        for (size_t bytes = opt->min_bytes; bytes <= opt->max_bytes && opt->nsizes < MAX_SIZES;
             bytes = bytes ? 2 * bytes : 1)
            opt->sizes[opt->nsizes++] = bytes;
    }
    opt->max_bytes = 0; /* from now on: the largest block, for the buffers */
    for (int k = 0; k < opt->nsizes; k++)
        opt->max_bytes = opt->sizes[k] > opt->max_bytes ? opt->sizes[k] : opt->max_bytes;
    return 0;
}

/* The default specs of coll: native, auto, every algorithm, and the variants its keys'
 * descriptors name for xchg-bench (xchg_param_t.bench: "radix:r=2", "radix:r=SQRTP", ...). */
static int default_specs(int coll, char specs[][SPEC_LEN])
{
    int n = 0;
    snprintf(specs[n++], SPEC_LEN, "%s", xchg_algos[xchg_native_index(coll)].name);
    snprintf(specs[n++], SPEC_LEN, "auto");
    for (int i = 0; i < xchg_nalgos && n < MAX_SPECS; i++) {
        const xchg_algo_t *a = &xchg_algos[i];
        if (a->coll != coll || a->native)
            continue;
        snprintf(specs[n++], SPEC_LEN, "%s", a->name);
        for (int k = 0; k < XCHG_MAX_KEYS && a->keys[k]; k++) {
            const char *at = a->keys[k]->bench;
            while (at && *at && n < MAX_SPECS) {
                int len = (int)strcspn(at, ",");
                snprintf(specs[n++], SPEC_LEN, "%s:%s=%.*s", a->name, a->keys[k]->key, len, at);
                at += len + (at[len] == ',');
            }
        }
    }
    return n;
}

/* Replace the values SQRTP and P by numbers for p ranks (xchg_param_token). */
static void substitute(const char *spec, int p, char *out, size_t outlen)
{
    size_t used = 0;
    out[0] = '\0';
    while (*spec && used + 1 < outlen) {
        int at_value = used > 0 && out[used - 1] == '=';
        size_t word = strcspn(spec, ",:");
        if (at_value && !(spec[0] >= '0' && spec[0] <= '9') &&
            xchg_param_token(spec, word, p) > 0) {
            used +=
                (size_t)snprintf(out + used, outlen - used, "%ld", xchg_param_token(spec, word, p));
            spec += word;
        } else {
            out[used++] = *spec++;
            out[used] = '\0';
        }
    }
}

/* ----------------------------------------------------------------------------------------- */
/* --check                                                                                    */

/* Warm-up calls before a line's timing (tool_time_collective_warm makes at least one). */
static int warmup_calls(const bench_options_t *opt)
{
    return opt->warmup > 1 ? opt->warmup : 1;
}

static inline unsigned char expected_byte(int src, int dst, size_t index, int iteration)
{
    uint32_t x = (uint32_t)src * 2654435761u ^ (uint32_t)dst * 40503u ^ (uint32_t)iteration * 97u;
    x += (uint32_t)index * 131u + (uint32_t)(index >> 8) * 7u;
    return (unsigned char)(x ^ (x >> 8) ^ (x >> 16));
}

static void check_prepare(tool_call_t *call, int iteration, void *arg)
{
    (void)arg;
    /* send data: block for destination j from formula (allgather: one block, dst = src) */
    for (int j = 0; j < call->p; j++) {
        size_t count, offset;
        int dst = call->coll == XCHG_ALLGATHER ? call->rank : j;
        if (call->coll == XCHG_ALLGATHER && j > 0)
            break;
        count = call->coll == XCHG_ALLTOALLV ? (size_t)call->sendcounts[j] : call->bytes;
        offset = call->coll == XCHG_ALLTOALLV ? (size_t)call->sdispls[j] : (size_t)j * call->bytes;
        for (size_t i = 0; i < count; i++)
            call->send[offset + i] = (char)expected_byte(call->rank, dst, i, iteration);
    }
    memset(call->recv, (iteration & 1) ? 0x00 : 0xff, call->recv_bytes ? call->recv_bytes : 1);
}

static int check_result(tool_call_t *call, int iteration, void *arg)
{
    check_state_t *state = arg;
    int bad = 0;
    for (int j = 0; j < call->p; j++) {
        size_t count, offset;
        int dst = call->coll == XCHG_ALLGATHER ? j : call->rank;
        count = call->coll == XCHG_ALLTOALLV ? (size_t)call->recvcounts[j] : call->bytes;
        offset = call->coll == XCHG_ALLTOALLV ? (size_t)call->rdispls[j] : (size_t)j * call->bytes;
        for (size_t i = 0; i < count; i++) {
            unsigned char want = expected_byte(j, dst, i, iteration);
            unsigned char got = (unsigned char)call->recv[offset + i];
            if (got == want)
                continue;
            bad = 1;
            if (state->failures_printed++ < 3)
                fprintf(stderr,
                        "xchg-bench: CHECK FAILED: %s %s, %d ranks, %zu bytes, %s %d: rank %d, "
                        "byte %zu of the block from rank %d is 0x%02x, expected 0x%02x\n",
                        state->coll_name, state->spec, call->p, call->bytes,
                        iteration < 0 ? "warm-up call" : "iteration",
                        iteration < 0 ? warmup_calls(state->opt) + iteration + 1 : iteration + 1,
                        call->rank, i, j, got, want);
            break;
        }
    }
    return bad;
}

/* ----------------------------------------------------------------------------------------- */

/* Counts of the alltoallv call for mean block `bytes` under the workload; fills the model's
 * call shape (agreed maxima over all ranks, computed locally from the formula). */
static void shape_alltoallv(tool_call_t *call, const bench_options_t *opt, size_t bytes,
                            xchg_call_t *model)
{
    int p = call->p;
    size_t n = (size_t)p * bytes, send_total = 0, recv_total = 0;
    size_t *row = malloc((size_t)p * sizeof *row), *col_sum = calloc((size_t)p, sizeof *col_sum);
    size_t max_send = 0, max_block = 0, max_total = 0, max_recv = 0;

    call->bytes = bytes;
    if (!row || !col_sum) {
        fprintf(stderr, "xchg-bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int src = 0; src < p; src++) {
        size_t sum = 0;
        xchg_workload_counts(&opt->workload, p, n, src, row);
        for (int dst = 0; dst < p; dst++) {
            sum += row[dst];
            col_sum[dst] += row[dst];
            max_block = row[dst] > max_block ? row[dst] : max_block;
            if (src == call->rank) {
                call->sendcounts[dst] = (int)row[dst];
                call->sdispls[dst] = (int)send_total;
                send_total += row[dst];
            }
            if (dst == call->rank) {
                call->recvcounts[src] = (int)row[dst];
                call->rdispls[src] = (int)recv_total;
                recv_total += row[dst];
            }
        }
        max_send = sum > max_send ? sum : max_send;
    }
    for (int r = 0; r < p; r++) {
        size_t sent = 0;
        xchg_workload_counts(&opt->workload, p, n, r, row);
        for (int dst = 0; dst < p; dst++)
            sent += row[dst];
        max_recv = col_sum[r] > max_recv ? col_sum[r] : max_recv;
        max_total = sent + col_sum[r] > max_total ? sent + col_sum[r] : max_total;
    }
    call->send_bytes = send_total;
    call->recv_bytes = recv_total;
    memset(model, 0, sizeof *model);
    model->coll = XCHG_ALLTOALLV;
    model->comm_size = p;
    model->max_send_bytes = max_send;
    model->max_recv_bytes = max_recv;
    model->max_block_bytes = max_block;
    model->max_total_bytes = max_total;
    model->block_bytes = xchg_size_key(model);
    free(row);
    free(col_sum);
}

/* The largest per-rank send and receive volumes of the alltoallv sweep. */
static void alltoallv_extent(const bench_options_t *opt, int p, int rank, size_t bytes,
                             size_t *send, size_t *recv)
{
    size_t n = (size_t)p * bytes, *row = malloc((size_t)p * sizeof *row);
    *send = *recv = 0;
    if (!row)
        return;
    for (int src = 0; src < p; src++) {
        xchg_workload_counts(&opt->workload, p, n, src, row);
        for (int dst = 0; dst < p; dst++) {
            if (src == rank)
                *send += row[dst];
            if (dst == rank)
                *recv += row[dst];
        }
    }
    free(row);
}

/* A params column from an algorithm and its parameters: items separated by ':'. */
static void params_column(int algo, const xchg_params_t *params, int with_name, char *out,
                          size_t outlen)
{
    char text[128];
    xchg_params_format(&xchg_algos[algo], params, text, sizeof text);
    if (with_name)
        snprintf(out, outlen, "%s%s%s", xchg_algos[algo].name, text[0] ? ":" : "", text);
    else
        snprintf(out, outlen, "%s", text);
    for (char *c = out; *c; c++)
        if (*c == ',')
            *c = ':';
}


/* The params column of a forced spec for this call: the parameters it runs with, as the shim
 * completes them; "fallback" when the algorithm cannot serve the call (the shim then runs
 * auto's choice). */
static void describe(int coll, const char *spec, const xchg_call_t *model, char *out, size_t outlen)
{
    int algo;
    xchg_params_t params;
    char err[256];
    const char *why = "";

    out[0] = '\0';
    if (xchg_spec_parse(coll, spec, &algo, &params, err, sizeof err) != 0)
        return;
    if (!xchg_algos[algo].applies(model, &params, &why)) {
        snprintf(out, outlen, "fallback");
        return;
    }
    xchg_algos[algo].cost(model, xchg_api_machine(), &params);
    params_column(algo, &params, 0, out, outlen);
}

/* Does coll have the algorithm a spec names ("auto" always)? */
static int spec_applies_to(int coll, const char *spec)
{
    char name[SPEC_LEN];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(spec, ":"), spec);
    return strcmp(name, "auto") == 0 || xchg_algo_find(coll, name) >= 0;
}



/* One turn of one spec of coll at the call's block size: `warmup` untimed calls, then
 * iterations within the budget. 0, or 1 after a failure (reported on rank 0). */
static int bench_turn(int coll, const char *spec, tool_call_t *call, const bench_options_t *opt,
                      int warmup, double seconds, int min_iters, int max_iters,
                      tool_timing_t *timing)
{
    check_state_t state = {opt, xchg_coll_name(coll), spec, 0};
    int failed = -1, rc;

    xchg_force(coll, spec);
    rc = tool_time_collective_warm(call, MPI_COMM_WORLD, warmup, seconds, min_iters, max_iters,
                                   opt->check ? check_prepare : NULL,
                                   opt->check ? check_result : NULL, &state, timing, &failed);
    if (rc == MPI_SUCCESS)
        return 0;
    if (world_rank == 0)
        fprintf(
            stderr, "xchg-bench: %s %s, %zu bytes: %s\n", xchg_coll_name(coll), spec, call->bytes,
            failed >= 0 ? "wrong result (see CHECK FAILED above)" : "the call returned an error");
    return 1;
}

/* A spec's line at one block: the turns' figures joined (iterations added up, the least
 * minimum, the median of the turns' medians, the largest maximum). */
typedef struct line {
    tool_timing_t sum;
    double medians[MAX_ROUNDS];
    int turns;
} line_t;

static void line_add(line_t *line, const tool_timing_t *turn)
{
    if (line->turns == 0 || turn->min < line->sum.min)
        line->sum.min = turn->min;
    if (line->turns == 0 || turn->max > line->sum.max)
        line->sum.max = turn->max;
    line->sum.iters += turn->iters;
    line->medians[line->turns++] = turn->median;
}

/* Print a spec's CSV line on rank 0. */
static void bench_print(int coll, const char *spec, const char *name, const tool_call_t *call,
                        const xchg_call_t *model, line_t *line, const bench_options_t *opt,
                        FILE *out, const char *mpi_name, const char *auto_ran)
{
    char params_col[SPEC_LEN];
    int n = line->turns;
    double median;

    if (world_rank != 0)
        return;
    median = bench_median(line->medians, n);
    /* for auto, what served its last call (auto_ran, taken after its last turn) */
    if (strcmp(spec, "auto") == 0)
        snprintf(params_col, sizeof params_col, "%s", auto_ran);
    else
        describe(coll, spec, model, params_col, sizeof params_col);
    fprintf(out, "%s,%d,%s,%s,%s,%zu,%d,%.3f,%.3f,%.3f\n", mpi_name, world_size,
            xchg_coll_name(coll), name, params_col, call->bytes, line->sum.iters,
            line->sum.min * 1e6, median * 1e6, line->sum.max * 1e6);
    fflush(out);
    if (opt->verbose)
        fprintf(stderr, "xchg-bench: %s %s %zu B: %.1f us (%d iterations, %d turns)\n",
                xchg_coll_name(coll), spec, call->bytes, median * 1e6, line->sum.iters, n);
}

static int run_collective(int coll, const bench_options_t *opt, FILE *out, const char *mpi_name)
{
    char default_list[MAX_SPECS][SPEC_LEN];
    char(*specs)[SPEC_LEN] = opt->nspecs ? (char(*)[SPEC_LEN])opt->specs : default_list;
    int nspecs = opt->nspecs ? opt->nspecs : default_specs(coll, default_list);
    char run_specs[MAX_SPECS][SPEC_LEN];
    const char *run_names[MAX_SPECS];
    char again_names[MAX_SPECS][SPEC_LEN + 16]; /* SPEC#2, ...: a spec given again as written */
    char auto_ran[MAX_SPECS][SPEC_LEN];         /* what served an auto spec's last call */
    int nrun = 0;
    size_t max_send, max_recv;
    tool_call_t call;
    line_t *lines;
    int status = 0;
    /* a turn's share of a line's budget and iteration bounds */
    double turn_seconds = opt->seconds / opt->rounds;
    int turn_min = (opt->min_iters + opt->rounds - 1) / opt->rounds;
    int turn_max = (opt->max_iters + opt->rounds - 1) / opt->rounds;

    if (!world_topo) {
        int rc;
        xchg_ctx_t *ctx = xchg_ctx_get(MPI_COMM_WORLD, &rc, NULL);
        world_topo = ctx && !ctx->passthrough ? &ctx->topo : NULL;
    }
    /* buffers for the largest call of the sweep */
    if (coll == XCHG_ALLTOALLV) {
        alltoallv_extent(opt, world_size, world_rank, opt->max_bytes, &max_send, &max_recv);
    } else {
        max_send = coll == XCHG_ALLGATHER ? opt->max_bytes : (size_t)world_size * opt->max_bytes;
        max_recv = (size_t)world_size * opt->max_bytes;
    }
    if (tool_call_alloc(&call, coll, world_size, world_rank, max_send, max_recv) != 0) {
        fprintf(stderr, "xchg-bench: out of memory for %zu + %zu bytes\n", max_send, max_recv);
        return 1;
    }

    /* the specs this collective runs: its algorithms, SQRTP and P replaced, repeats dropped */
    for (int s = 0; s < nspecs && nrun < MAX_SPECS; s++) {
        int repeated = 0, again = 1;
        if (!spec_applies_to(coll, specs[s]))
            continue;
        substitute(specs[s], world_size, run_specs[nrun], SPEC_LEN);
        for (int e = 0; e < nrun; e++) {
            if (strcmp(run_specs[nrun], run_specs[e]) != 0)
                continue;
            if (strcmp(specs[s], run_names[e]) == 0 || strchr(run_names[e], '#'))
                again++; /* given again as written: it runs again */
            else
                repeated = 1; /* r=SQRTP and r=P can both be r=2 */
        }
        if (repeated)
            continue;
        if (xchg_force(coll, run_specs[nrun]) != 0) { /* xchg_force said why on rank 0 */
            status = 2;
            break;
        }
        run_names[nrun] = specs[s];
        if (again > 1) {
            snprintf(again_names[nrun], sizeof again_names[nrun], "%.*s#%d", SPEC_LEN - 1, specs[s],
                     again);
            run_names[nrun] = again_names[nrun];
        }
        nrun++;
    }

    /* sizes outside, specs inside, and with --rounds the specs' turns in alternation: a burst
     * of noise from other processes hits one block size of every spec rather than every size
     * of one spec, and load that drifts during a block's lines hits every spec alike */
    lines = status == 0 ? malloc(MAX_SPECS * sizeof *lines) : NULL;
    if (status == 0 && !lines) {
        fprintf(stderr, "xchg-bench: out of memory\n");
        status = 1;
    }
    for (int k = 0; k < opt->nsizes && status == 0; k++) {
        xchg_call_t model;
        if (coll == XCHG_ALLTOALLV) {
            shape_alltoallv(&call, opt, opt->sizes[k], &model);
        } else {
            tool_call_uniform(&call, opt->sizes[k]);
            model = tool_model_call(coll, world_size, opt->sizes[k]);
        }
        model.topo = world_topo; /* the shim's predicates read the communicator's layout */
        memset(lines, 0, (size_t)nrun * sizeof *lines);
        for (int r = 0; r < opt->rounds && status == 0; r++) {
            for (int s = 0; s < nrun && status == 0; s++) {
                tool_timing_t turn;
                /* the first turn warms up as asked; a later one with one call, after the
                 * other specs ran in between */
                status = bench_turn(coll, run_specs[s], &call, opt, r == 0 ? opt->warmup : 1,
                                    turn_seconds, turn_min, turn_max, &turn);
                if (status == 0)
                    line_add(&lines[s], &turn);
                if (strcmp(run_specs[s], "auto") == 0)
                    bench_auto_choice(coll, auto_ran[s], sizeof auto_ran[s]);
            }
        }
        for (int s = 0; s < nrun && status == 0; s++)
            bench_print(coll, run_specs[s], run_names[s], &call, &model, &lines[s], opt, out,
                        mpi_name, auto_ran[s]);
    }
    free(lines);
    xchg_force(coll, "auto");
    tool_call_free(&call);
    return status;
}

int main(int argc, char **argv)
{
    bench_options_t opt;
    char mpi_name[64];
    FILE *out = stdout;
    int status;

    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--version") == 0) { /* before MPI_Init: no launcher needed */
            printf("xchg-bench %s\n", xchg_version());
            return 0;
        }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    status = parse_options(argc, argv, &opt);
    if (status != 0) {
        MPI_Finalize();
        return status < 0 ? 2 : 0;
    }
    if (xchg_api_disabled() && world_rank == 0)
        fprintf(stderr, "xchg-bench: XCHG_DISABLE is set: every line measures native\n");
    /* every spec must parse for every collective that has its algorithm */
    for (int s = 0; s < opt.nspecs; s++) {
        int known = 0;
        char spec[SPEC_LEN], err[256];
        substitute(opt.specs[s], world_size, spec, sizeof spec);
        for (int c = 0; c < opt.ncolls; c++) {
            int algo;
            xchg_params_t params;
            if (!spec_applies_to(opt.colls[c], spec))
                continue;
            known = 1;
            if (strcmp(spec, "auto") != 0 &&
                xchg_spec_parse(opt.colls[c], spec, &algo, &params, err, sizeof err) != 0) {
                if (world_rank == 0)
                    fprintf(stderr, "xchg-bench: --algos %s (%s): %s\n", opt.specs[s],
                            xchg_coll_name(opt.colls[c]), err);
                MPI_Finalize();
                return 2;
            }
        }
        if (!known) {
            if (world_rank == 0)
                fprintf(stderr,
                        "xchg-bench: --algos %s: no selected collective has this "
                        "algorithm\n",
                        opt.specs[s]);
            MPI_Finalize();
            return 2;
        }
    }
    tool_mpi_name(mpi_name, sizeof mpi_name);
    if (world_rank == 0 && opt.out_path) {
        out = fopen(opt.out_path, "w");
        if (!out) {
            fprintf(stderr, "xchg-bench: cannot write %s\n", opt.out_path);
            status = 2;
        }
    }
    tool_bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status != 0) {
        MPI_Finalize();
        return status;
    }
    if (opt.overhead) {
        status = bench_overhead(&opt, out, mpi_name);
    } else {
        if (world_rank == 0) {
            fprintf(out, "mpi,ranks,collective,algorithm,params,bytes,iters,min_us,median_us,"
                         "max_us\n");
            fflush(out);
        }
        for (int c = 0; c < opt.ncolls && status == 0; c++)
            status = run_collective(opt.colls[c], &opt, out, mpi_name);
    }
    if (world_rank == 0 && out != stdout)
        fclose(out);
    MPI_Finalize();
    return status;
}

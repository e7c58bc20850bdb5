/*
 * main.c: build/xchg-sim, the simulator's command line (docs/sim.md).
 *
 *   xchg-sim COLL ALGO[:KEY=VALUE,...] p=N bytes=B [options]
 *   xchg-sim --sweep [options]
 *
 * One run: the registry's cost model completes the parameters and predicts the time (as the
 * shim does before it runs an algorithm), p simulated ranks run the algorithm's own function
 * (engine.c), every byte is checked (check.c), the log is replayed on the network model
 * (net.c), and the simulated time is printed beside the model's with their ratio. ALGO "auto"
 * is the model's choice among xchg's own algorithms (native has no function to simulate).
 * An alltoallv whose algorithm needs the agreed maxima runs xchg_agree_max first, as the shim
 * does, and checks the agreed values; its time is printed apart (the models do not charge it).
 *
 * The sweep: every registered algorithm that the model can price (not native) over a list of
 * p and block sizes on each network (flat; nodes of 8 ranks; the most square torus), with the
 * model's parameters and, where k is a key, with one port (k=1), one CSV line per run
 * (scripts/sim.sh draws the plots). Two-level constants not given default to 10 beta, 10 tau
 * and inject 1; alltoallv runs without carried statistics (the models do not charge them).
 *
 * Exit status: 0 all runs verified; 1 a wrong byte, a wrong agreed value, an algorithm's error
 * code or a simulator error (size mismatch, deadlock); 2 bad arguments.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "check.h"
#include "sim.h"
#include "../algos/sched/twophase.h"
#include "../tuning/cost.h"
#include "../tuning/registry.h"
#include "version.h" /* XCHG_VERSION, generated in the build folder (mk/version.mk) */

#define MAX_P 65536
#define STACK_BYTES (256 * 1024)

typedef struct options {
    int coll, p, inplace, csv, corrupt, no_carry;
    size_t bytes;
    const char *spec;
    sim_net_t net;
    int *node_sizes, nnodes_given;
    xchg_workload_t wl;
    double mem_limit; /* bytes the buffers may take (estimate), else the run is refused */
} options_t;

typedef struct result {
    const xchg_algo_t *algo;
    xchg_params_t params;
    double model, wall;
    sim_times_t t;
    uint64_t messages, bytes;
    int ok;
    int carried; /* alltoallv: the algorithm carried the statistics for the next call */
} result_t;

static const xchg_machine_t *run_machine; /* the sweep's or the run's constants */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: xchg-sim COLL ALGO[:KEY=VALUE,...] p=N bytes=B [options]\n"
            "       xchg-sim --sweep [--sweep-p LIST] [--sweep-bytes LIST] [options]\n"
            "       xchg-sim --version\n"
            "  COLL alltoall | allgather | alltoallv; ALGO a registered algorithm or auto\n"
            "  --net flat | nodes=S1,S2,... (ranks per node, consecutive; S*N: N nodes of S)\n"
            "        | torus=RxC | torus=P (a ring)\n"
            "  --beta S --tau S --rho S --port-share X --beta-inter S --tau-inter S --inject N\n"
            "  --workload uniform|hrel:h=H|ggroup:g=G,t=T[,h=H]   (alltoallv; default uniform)\n"
            "  --inplace (allgather)  --no-carry (alltoallv: no statistics carried)\n"
            "  --csv (one CSV line)  --mem-limit GIB (buffers, estimated; default 8)\n");
}

static void die(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "xchg-sim: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    exit(2);
}

static double parse_seconds(const char *name, const char *v)
{
    char *end;
    double d;
    errno = 0;
    d = strtod(v, &end);
    if (errno || end == v || *end || !(d >= 0) || !isfinite(d))
        die("%s: '%s' is not a non-negative number", name, v);
    return d;
}

static long parse_long(const char *name, const char *v, long lo, long hi)
{
    char *end;
    long n;
    errno = 0;
    n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < lo || n > hi) {
        fprintf(stderr, "xchg-sim: %s: '%s' is not an integer from %ld to %ld\n", name, v, lo, hi);
        exit(2);
    }
    return n;
}

static int parse_shape(const char *v, int *rows, int *cols)
{
    char *end;
    long r = strtol(v, &end, 10), c;
    if (end == v || r < 1 || r > MAX_P)
        return -1;
    if (*end == '\0') {
        *rows = 1;
        *cols = (int)r;
        return 0;
    }
    if (*end != 'x')
        return -1;
    c = strtol(end + 1, &end, 10);
    if (*end || c < 1 || c > MAX_P || r * c > MAX_P)
        return -1;
    *rows = (int)r;
    *cols = (int)c;
    return 0;
}

static void parse_net(options_t *o, const char *v)
{
    if (strcmp(v, "flat") == 0) {
        o->net.kind = SIM_NET_FLAT;
    } else if (strncmp(v, "nodes=", 6) == 0) {
        const char *s = v + 6;
        o->net.kind = SIM_NET_NODES;
        o->nnodes_given = 0;
        free(o->node_sizes);
        o->node_sizes = malloc(sizeof *o->node_sizes);
        while (o->node_sizes) {
            char *end;
            long n = strtol(s, &end, 10), times = 1;
            if (*end == '*' && end[1] != '\0') /* S*N: N nodes of S ranks */
                times = strtol(end + 1, &end, 10);
            if (end == s || n < 1 || n > MAX_P || times < 1 || times > MAX_P ||
                (*end && *end != ','))
                die("--net %s: node sizes must be integers >= 1 (S*N for N nodes of S) separated "
                    "by commas%s",
                    v, "");
            o->node_sizes = realloc(o->node_sizes, (size_t)(o->nnodes_given + times) * sizeof(int));
            for (long t = 0; t < times && o->node_sizes; t++)
                o->node_sizes[o->nnodes_given++] = (int)n;
            if (!*end)
                break;
            s = end + 1;
        }
        if (!o->node_sizes)
            die("--net %s: out of memory%s", v, "");
    } else if (strncmp(v, "torus=", 6) == 0) {
        o->net.kind = SIM_NET_TORUS;
        if (parse_shape(v + 6, &o->net.rows, &o->net.cols) != 0)
            die("--net %s: the shape must be RxC or P (a ring)%s", v, "");
    } else {
        die("--net %s: expected flat, nodes=S1,S2,... or torus=RxC / torus=P%s", v, "");
    }
}

/* The torus shape for the sweep: the most square R x C with R <= C (a prime p: a ring). */
static void square_shape(int p, int *rows, int *cols)
{
    int r = 1;
    for (int d = 1; (long)d * d <= p; d++)
        if (p % d == 0)
            r = d;
    *rows = r;
    *cols = p / r;
}

/* The node layout and the topology summary for p ranks on net. */
static int make_layout(const options_t *o, int p, int *node_of, xchg_topo_t *topo, char *err,
                       size_t errlen)
{
    int n = 0, at = 0;
    memset(topo, 0, sizeof *topo);
    topo->consecutive = 1;
    if (o->net.kind == SIM_NET_NODES) {
        long sum = 0;
        for (n = 0; n < o->nnodes_given; n++)
            sum += o->node_sizes[n];
        if (sum != p) {
            snprintf(err, errlen, "--net nodes=...: the node sizes add up to %ld ranks, p is %d",
                     sum, p);
            return -1;
        }
        for (n = 0; n < o->nnodes_given; n++)
            for (int j = 0; j < o->node_sizes[n]; j++)
                node_of[at++] = n;
        topo->nnodes = o->nnodes_given;
    } else if (o->net.kind == SIM_NET_TORUS) {
        if ((long)o->net.rows * o->net.cols != p) {
            snprintf(err, errlen, "--net torus=%dx%d has %ld nodes, p is %d", o->net.rows,
                     o->net.cols, (long)o->net.rows * o->net.cols, p);
            return -1;
        }
        for (int i = 0; i < p; i++)
            node_of[i] = i; /* every torus node a node of its own */
        topo->nnodes = p;
        topo->torus_ndims = o->net.rows == 1 ? 1 : 2;
        topo->torus_dims[0] = o->net.rows == 1 ? o->net.cols : o->net.rows;
        topo->torus_dims[1] = o->net.rows == 1 ? 0 : o->net.cols;
    } else {
        for (int i = 0; i < p; i++)
            node_of[i] = 0;
        topo->nnodes = 1;
    }
    topo->min_node_ranks = p;
    topo->max_node_ranks = 0;
    {
        int *count = calloc((size_t)topo->nnodes, sizeof *count);
        uint64_t h = 1469598103934665603ull;
        if (!count)
            return -1;
        for (int i = 0; i < p; i++) {
            count[node_of[i]]++;
            h = (h ^ (uint64_t)node_of[i]) * 1099511628211ull;
        }
        for (int i = 0; i < topo->nnodes; i++) {
            topo->min_node_ranks = count[i] < topo->min_node_ranks ? count[i] : topo->min_node_ranks;
            topo->max_node_ranks = count[i] > topo->max_node_ranks ? count[i] : topo->max_node_ranks;
        }
        topo->layout_hash = h;
        free(count);
    }
    return 0;
}

/* The call as the shim builds it (alltoallv: from the true maxima, which the agreement must
 * reproduce; the size key as xchg_size_key computes it). */
static void make_call(const sim_job_t *job, const xchg_topo_t *topo, xchg_call_t *call)
{
    memset(call, 0, sizeof *call);
    call->coll = job->coll;
    call->comm_size = job->p;
    call->topo = topo;
    call->block_bytes = job->bytes;
    if (job->coll == XCHG_ALLTOALLV) {
        size_t h = job->h1 > job->h2 ? job->h1 : job->h2;
        call->max_send_bytes = job->h1;
        call->max_recv_bytes = job->h2;
        call->max_block_bytes = job->max_block;
        call->block_bytes = (h + (size_t)job->p - 1) / (size_t)job->p;
    }
}

/* An algorithm xchg runs itself: not native, and bound to a function (algos/impls.c). */
static int runs_here(const xchg_algo_t *a)
{
    return !a->native && xchg_impl_find(a->coll, a->name) != NULL;
}

/* The model's fastest algorithm of the collective that xchg runs itself, or NULL. */
static const xchg_algo_t *model_best(const xchg_call_t *call, const xchg_machine_t *machine,
                                     xchg_params_t *params)
{
    return xchg_model_best(call, machine, runs_here, params, NULL);
}

/* The alltoall that twophase's transposes run (xchg_ctx_t.inner_alltoall): the forced inner
 * algorithm completed by its model, else the model's choice; the same on every rank. */
static int sim_inner(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t block_bytes,
                     const xchg_algo_t *inner, const xchg_params_t *params)
{
    xchg_call_t call = {0};
    xchg_params_t chosen = {0};
    const xchg_impl_t *impl;

    call.coll = XCHG_ALLTOALL;
    call.comm_size = ctx->size;
    call.topo = &ctx->topo;
    call.block_bytes = block_bytes;
    if (inner) {
        chosen.radix = params ? params->radix : 0;
        chosen.nports = params ? params->nports : 0;
        inner->cost(&call, run_machine, &chosen);
    } else if (!(inner = model_best(&call, run_machine, &chosen))) {
        return MPI_ERR_INTERN;
    }
    impl = xchg_impl_find(XCHG_ALLTOALL, inner->name);
    return impl && impl->alltoall ? impl->alltoall(ctx, sendbuf, recvbuf, block_bytes, &chosen)
                                  : MPI_ERR_INTERN;
}

/* What every simulated rank runs. */
typedef struct run {
    sim_job_t *job;
    const xchg_impl_t *impl;
    const xchg_algo_t *algo;
    xchg_params_t params;
    xchg_call_t call;
    int *rc;
    int agree_bad, carry_bad, no_carry;
    int carried; /* some rank's algorithm carried the statistics */
} run_t;

static void body(xchg_ctx_t *ctx, void *arg)
{
    run_t *run = arg;
    sim_job_t *job = run->job;
    int r = ctx->rank, p = job->p;
    unsigned char *recv = sim_job_recvbuf(job, r);

    ctx->inner_alltoall = sim_inner;
    if (job->coll == XCHG_ALLTOALL) {
        run->rc[r] = run->impl->alltoall(ctx, job->send[r], recv, job->bytes, &run->params);
    } else if (job->coll == XCHG_ALLGATHER) {
        const void *block = job->inplace ? recv + (size_t)r * job->bytes : job->send[r];
        run->rc[r] = run->impl->allgather(ctx, block, recv, job->bytes, &run->params);
    } else {
        const size_t *sendbytes = job->counts + (size_t)r * p;
        const size_t *recvbytes = job->recvbytes + (size_t)r * p;
        xchg_carry_t carry = {{0}, {0}, 0};
        for (int j = 0; j < p; j++) {
            carry.mine[0] += sendbytes[j];
            carry.mine[1] += recvbytes[j];
            carry.mine[2] = sendbytes[j] > carry.mine[2] ? sendbytes[j] : carry.mine[2];
            carry.mine[2] = recvbytes[j] > carry.mine[2] ? recvbytes[j] : carry.mine[2];
        }
        if (!run->algo->no_agreement) {
            uint64_t agreed[3] = {carry.mine[0], carry.mine[1], carry.mine[2]};
            int rc = xchg_agree_max(ctx, agreed, 3);
            if (rc != MPI_SUCCESS || agreed[0] != job->h1 || agreed[1] != job->h2 ||
                agreed[2] != job->max_block)
                run->agree_bad = r + 1;
        }
        sim_mark_collective(ctx);
        run->rc[r] = run->impl->alltoallv(ctx, job->send[r], sendbytes, job->sendoffs + (size_t)r * p,
                                          recv, recvbytes, job->recvoffs + (size_t)r * p,
                                          &run->call, &run->params,
                                          run->no_carry ? NULL : &carry);
        run->carried |= carry.done;
        if (carry.done && (carry.agreed[0] != job->h1 || carry.agreed[1] != job->h2 ||
                           carry.agreed[2] != job->max_block))
            run->carry_bad = r + 1;
    }
}

/* The buffers' size, estimated before allocating them. An alltoallv that needs the agreed
 * values (twophase) sizes its scratch from them: its transposes' blocks, which grow as p^3. */
static double estimate_bytes(const sim_job_t *job, const xchg_algo_t *algo)
{
    double p = job->p, b = (double)job->bytes;
    double data = 2 * p * p * b + (job->coll == XCHG_ALLTOALLV ? 4 * p * p * 8 : 0);
    if (job->coll == XCHG_ALLTOALLV && !algo->no_agreement) {
        xchg_twophase_plan_t plan;
        size_t h = (size_t)(p * b * 4);
        if (xchg_twophase_plan_init(&plan, job->p, h, h, h) == 0)
            data += 3 * p * p * (double)(plan.block1_bytes > plan.block2_bytes ? plan.block1_bytes
                                                                                : plan.block2_bytes);
    }
    return data + p * (STACK_BYTES / 8.0);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The algorithm of spec (NULL for auto: chosen once the call is known); 0, or 2 (printed). */
static int parse_algo(int coll, const char *spec, run_t *run)
{
    char err[512];
    int index;
    run->algo = NULL;
    if (strcmp(spec, "auto") == 0)
        return 0;
    if (xchg_spec_parse(coll, spec, &index, &run->params, err, sizeof err) != 0) {
        fprintf(stderr, "xchg-sim: ALGO %s: %s\n", spec, err);
        return 2;
    }
    run->algo = &xchg_algos[index];
    if (run->algo->native || !xchg_impl_find(coll, run->algo->name)) {
        fprintf(stderr, "xchg-sim: ALGO %s: the MPI library's own collective cannot be simulated\n",
                spec);
        return 2;
    }
    if (run->algo->shared_memory) {
        fprintf(stderr,
                "xchg-sim: ALGO %s: it moves data through shared memory, not messages: the "
                "simulator cannot run it\n",
                spec);
        return 2;
    }
    return 0;
}

/* auto's choice, the predicate, the model's parameters and prediction; 0, or 2 (printed). */
static int complete_algo(const options_t *o, const char *spec, run_t *run, result_t *res)
{
    const char *why = "";
    if (!run->algo && !(run->algo = model_best(&run->call, &o->net.machine, &run->params))) {
        fprintf(stderr, "xchg-sim: auto: no algorithm of %s can serve this call\n",
                xchg_coll_name(o->coll));
        return 2;
    }
    if (!run->algo->applies(&run->call, &run->params, &why)) {
        fprintf(stderr, "xchg-sim: ALGO %s does not apply: %s\n", spec, why);
        return 2;
    }
    res->model = run->algo->cost(&run->call, &o->net.machine, &run->params);
    res->algo = run->algo;
    res->params = run->params;
    run->impl = xchg_impl_find(o->coll, run->algo->name);
    return 0;
}

/* After the run: return codes, agreed and carried maxima, every byte; 0, or 1 (printed). */
static int check_run(const run_t *run, const sim_job_t *job)
{
    char err[512], what[160];
    int bad = 0;
    snprintf(what, sizeof what, "xchg-sim: %s %s p=%d bytes=%zu", xchg_coll_name(job->coll),
             run->algo->name, job->p, job->bytes);
    for (int r = 0; r < job->p && !bad; r++)
        if (run->rc[r] != MPI_SUCCESS) {
            fprintf(stderr, "%s: rank %d returned MPI error %d\n", what, r, run->rc[r]);
            bad = 1;
        }
    if (!bad && (run->agree_bad || run->carry_bad)) {
        fprintf(stderr, "%s: rank %d %s wrong maxima\n", what,
                (run->agree_bad ? run->agree_bad : run->carry_bad) - 1,
                run->agree_bad ? "agreed on" : "carried");
        bad = 1;
    }
    if (!bad && sim_job_check(job, err, sizeof err) != 0) {
        fprintf(stderr, "%s: WRONG DATA: %s\n", what, err);
        bad = 1;
    }
    return bad;
}

/* One run; 0 verified, 1 a failure (printed), 2 refused (printed). */
static int run_one(const options_t *o, int p, size_t bytes, const char *spec, result_t *res)
{
    sim_job_t job = {.coll = o->coll, .p = p, .bytes = bytes, .inplace = o->inplace, .wl = o->wl};
    run_t run;
    xchg_topo_t topo;
    sim_world_t *w = NULL;
    int *node_of = malloc((size_t)p * sizeof *node_of), status;
    char err[512];
    double t0 = now();

    memset(&run, 0, sizeof run);
    memset(res, 0, sizeof *res);
    run_machine = &o->net.machine;
    if (!node_of || make_layout(o, p, node_of, &topo, err, sizeof err) != 0) {
        fprintf(stderr, "xchg-sim: %s\n", node_of ? err : "out of memory");
        status = 2;
        goto out;
    }
    if ((status = parse_algo(o->coll, spec, &run)) != 0)
        goto out;
    /* the buffers first: an alltoallv's call needs the true maxima */
    status = 1;
    if (sim_job_init(&job) != 0) {
        fprintf(stderr, "xchg-sim: out of memory for the buffers of p=%d bytes=%zu\n", p, bytes);
        goto out;
    }
    make_call(&job, &topo, &run.call);
    if ((status = complete_algo(o, spec, &run, res)) != 0)
        goto out;
    status = 1;
    run.job = &job;
    run.no_carry = o->no_carry;
    run.rc = calloc((size_t)p, sizeof *run.rc);
    w = run.rc ? sim_world_new(p, node_of, &topo, STACK_BYTES) : NULL;
    if (!w) {
        fprintf(stderr, "xchg-sim: out of memory for %d simulated ranks\n", p);
        goto out;
    }
    w->corrupt = o->corrupt;
    if (sim_world_run(w, body, &run) != 0) {
        fprintf(stderr, "xchg-sim: %s %s p=%d bytes=%zu: simulator error: %s\n",
                xchg_coll_name(o->coll), run.algo->name, p, bytes, w->error);
        goto out;
    }
    if (check_run(&run, &job) != 0)
        goto out;
    if (sim_net_replay(w, &o->net, &res->t) != 0) {
        fprintf(stderr, "xchg-sim: %s\n", w->error);
        goto out;
    }
    res->messages = w->messages;
    res->bytes = w->bytes;
    res->carried = run.carried;
    res->ok = 1;
    status = 0;
out:
    res->wall = now() - t0;
    sim_world_free(w);
    sim_job_free(&job);
    free(run.rc);
    free(node_of);
    return status;
}

static const char *net_text(const sim_net_t *net, const options_t *o, char *out, size_t len)
{
    if (net->kind == SIM_NET_FLAT)
        snprintf(out, len, "flat");
    else if (net->kind == SIM_NET_TORUS && net->rows == 1)
        snprintf(out, len, "torus=%d", net->cols);
    else if (net->kind == SIM_NET_TORUS)
        snprintf(out, len, "torus=%dx%d", net->rows, net->cols);
    else {
        /* runs of equal sizes as S*N; ';' between them (the CSV is comma separated) */
        size_t used = (size_t)snprintf(out, len, "nodes=");
        for (int i = 0; i < o->nnodes_given && used < len;) {
            int j = i;
            while (j < o->nnodes_given && o->node_sizes[j] == o->node_sizes[i])
                j++;
            if (j - i > 1)
                used += (size_t)snprintf(out + used, len - used, "%s%d*%d", i ? ";" : "",
                                         o->node_sizes[i], j - i);
            else
                used += (size_t)snprintf(out + used, len - used, "%s%d", i ? ";" : "",
                                         o->node_sizes[i]);
            i = j;
        }
    }
    return out;
}

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void print_csv_header(void)
{
    printf("coll,spec,algo,params,p,bytes,net,workload,sim_s,model_s,model_over_sim,rounds_max,"
           "rounds_min,sent_max_bytes,messages,agree_s,wall_s,maxrss_kb\n");
}

static void print_result(const options_t *o, const char *spec, int p, size_t bytes,
                         const result_t *r)
{
    char params[128], net[256], wl[96] = "";
    double ratio = r->t.coll > 0 ? r->model / r->t.coll : (r->model == 0 ? 1.0 : INFINITY);
    xchg_params_format(r->algo, &r->params, params, sizeof params);
    net_text(&o->net, o, net, sizeof net);
    if (o->coll == XCHG_ALLTOALLV) {
        int n = xchg_workload_format(&o->wl, wl, sizeof wl);
        /* the algorithm carried the statistics for the next call (the models leave them out) */
        if (r->carried && n > 0 && (size_t)n < sizeof wl)
            snprintf(wl + n, sizeof wl - (size_t)n, "+carry");
    }
    if (o->csv) {
        char spec_field[128];
        snprintf(spec_field, sizeof spec_field, "%s", spec);
        for (char *c = params; *c; c++)
            *c = *c == ',' ? ';' : *c; /* one CSV field each */
        for (char *c = spec_field; *c; c++)
            *c = *c == ',' ? ';' : *c;
        spec = spec_field;
        printf("%s,%s,%s,%s,%d,%zu,%s,%s,%.6e,%.6e,%.4f,%d,%d,%llu,%llu,%.6e,%.3f,%ld\n",
               xchg_coll_name(o->coll), spec, r->algo->name, params, p, bytes, net, wl, r->t.coll,
               r->model, ratio, r->t.rounds_max, r->t.rounds_min,
               (unsigned long long)r->t.sent_max, (unsigned long long)r->messages, r->t.agree,
               r->wall, maxrss_kb());
        return;
    }
    printf("%s %s%s%s p=%d bytes=%zu net=%s%s%s\n", xchg_coll_name(o->coll), r->algo->name,
           params[0] ? ":" : "", params, p, bytes, net, wl[0] ? " workload=" : "", wl);
    printf("  verified:  every byte of %d receive buffers, their guards, the send buffers\n", p);
    printf("  simulated: %.4e s, rounds per rank %d (fewest %d), at most %llu bytes sent by "
           "a rank, %llu messages between ranks\n",
           r->t.coll, r->t.rounds_max, r->t.rounds_min, (unsigned long long)r->t.sent_max,
           (unsigned long long)r->messages);
    if (r->t.agree > 0)
        printf("  agreement: %.4e s before it (xchg_agree_max; the models leave it out)\n",
               r->t.agree);
    printf("  model:     %.4e s   model/simulated %.3f\n", r->model, ratio);
    printf("  wall %.2f s, peak memory %ld MiB\n", r->wall, maxrss_kb() / 1024);
}

/* Comma-separated positive integers. */
static int parse_list(const char *name, const char *v, long *out, int max)
{
    int n = 0;
    const char *s = v;
    while (n < max) {
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s || x < 1 || (*end && *end != ','))
            die("%s: '%s' is not a list of positive integers", name, v);
        out[n++] = x;
        if (!*end)
            break;
        s = end + 1;
    }
    return n;
}

/* The sweep's network of kind for p ranks: as given (flat), nodes of 8 ranks (the last one
 * smaller), or the most square torus. */
static void sweep_net(options_t *o, const sim_net_t *base, int kind, int p)
{
    const int node_ranks = 8;
    o->net = *base;
    o->net.kind = kind;
    if (kind == SIM_NET_TORUS)
        square_shape(p, &o->net.rows, &o->net.cols);
    if (kind == SIM_NET_NODES) {
        o->nnodes_given = (p + node_ranks - 1) / node_ranks;
        free(o->node_sizes);
        o->node_sizes = malloc((size_t)o->nnodes_given * sizeof(int));
        for (int k = 0; o->node_sizes && k < o->nnodes_given; k++)
            o->node_sizes[k] = k < p / node_ranks ? node_ranks : p % node_ranks;
    }
}

/* 1 when the sweep runs algo at p, bytes on o's network: its model can price the call (torus
 * needs a shape) and its buffers fit under --mem-limit (else a note on stderr). */
static int sweep_runs(const options_t *o, const xchg_algo_t *algo, int p, size_t bytes)
{
    sim_job_t est = {.coll = algo->coll, .p = p, .bytes = bytes};
    xchg_call_t call = {0};
    xchg_topo_t topo;
    xchg_params_t params = {0};
    int *node_of = malloc((size_t)p * sizeof *node_of), ok;
    char err[256];

    ok = node_of && (o->net.kind != SIM_NET_NODES || o->node_sizes) &&
         make_layout(o, p, node_of, &topo, err, sizeof err) == 0;
    free(node_of);
    if (!ok)
        return 0;
    call.coll = algo->coll;
    call.comm_size = p;
    call.topo = &topo;
    call.block_bytes = call.max_block_bytes = bytes;
    call.max_send_bytes = call.max_recv_bytes = (size_t)p * bytes;
    if (!(algo->cost(&call, &o->net.machine, &params) < INFINITY))
        return 0;
    if (estimate_bytes(&est, algo) > o->mem_limit) {
        fprintf(stderr, "xchg-sim: sweep: %s %s p=%d bytes=%zu skipped (buffers above "
                        "--mem-limit)\n",
                xchg_coll_name(algo->coll), algo->name, p, bytes);
        return 0;
    }
    return 1;
}

static int sweep(options_t *o, const long *plist, int np, const long *blist, int nb)
{
    static const int nets[] = {SIM_NET_FLAT, SIM_NET_NODES, SIM_NET_TORUS};
    int failures = 0;
    sim_net_t base = o->net;

    o->csv = 1;
    print_csv_header();
    for (int n = 0; n < 3; n++)
        for (int coll = 0; coll < XCHG_NCOLLS; coll++)
            for (int a = 0; a < xchg_nalgos; a++) {
                const xchg_algo_t *algo = &xchg_algos[a];
                if (algo->coll != coll || algo->native || algo->shared_memory)
                    continue;
                o->coll = coll;
                for (int i = 0; i < np; i++)
                    for (int j = 0; j < nb; j++) {
                        int p = (int)plist[i];
                        size_t bytes = (size_t)blist[j];
                        sweep_net(o, &base, nets[n], p);
                        if (!sweep_runs(o, algo, p, bytes))
                            continue;
                        /* the model's parameters, and one port (k=1) where k is a key */
                        for (int v = 0; v < 1 + xchg_algo_has_key(algo, "k"); v++) {
                            char spec[64];
                            result_t res;
                            snprintf(spec, sizeof spec, "%s%s", algo->name, v ? ":k=1" : "");
                            if (run_one(o, p, bytes, spec, &res) == 0)
                                print_result(o, spec, p, bytes, &res);
                            else
                                failures++;
                        }
                        fflush(stdout);
                    }
            }
    return failures ? 1 : 0;
}

/* Everything on the command line. */
typedef struct args {
    options_t o;
    long plist[64], blist[64];
    int np, nb, do_sweep, p, have_bytes, npos;
    const char *coll_name;
} args_t;

/* A flag without a value; 0 when arg is none. */
static int parse_flag(args_t *a, const char *arg)
{
    static const char *const flags[] = {"--sweep",   "--inplace",  "--csv",
                                        "--corrupt", "--no-carry", "--corrupt-size"};
    int *const fields[] = {&a->do_sweep, &a->o.inplace, &a->o.csv,
                           &a->o.corrupt, &a->o.no_carry, &a->o.corrupt};
    static const int values[] = {1, 1, 1, 1, 1, 2};
    for (int f = 0; f < 6; f++)
        if (strcmp(arg, flags[f]) == 0) {
            *fields[f] = values[f];
            return 1;
        }
    return 0;
}

/* An option with a value (--name value or --name=value). */
static void parse_option(args_t *a, const char *name, const char *v)
{
    xchg_machine_t *m = &a->o.net.machine;
    char err[256];
    if (strcmp(name, "--net") == 0)
        parse_net(&a->o, v);
    else if (strcmp(name, "--beta") == 0)
        m->beta = parse_seconds(name, v);
    else if (strcmp(name, "--tau") == 0)
        m->tau = parse_seconds(name, v);
    else if (strcmp(name, "--rho") == 0)
        m->rho = parse_seconds(name, v);
    else if (strcmp(name, "--port-share") == 0)
        m->port_share = parse_seconds(name, v);
    else if (strcmp(name, "--beta-inter") == 0)
        m->beta_inter = parse_seconds(name, v);
    else if (strcmp(name, "--tau-inter") == 0)
        m->tau_inter = parse_seconds(name, v);
    else if (strcmp(name, "--inject") == 0)
        m->inject = (int)parse_long(name, v, 0, MAX_P);
    else if (strcmp(name, "--workload") == 0) {
        if (xchg_workload_parse(v, &a->o.wl, err, sizeof err) != 0)
            die("--workload: %s%s", err, "");
    } else if (strcmp(name, "--mem-limit") == 0)
        a->o.mem_limit = parse_seconds(name, v) * (1 << 30);
    else if (strcmp(name, "--sweep-p") == 0)
        a->np = parse_list(name, v, a->plist, 64);
    else if (strcmp(name, "--sweep-bytes") == 0)
        a->nb = parse_list(name, v, a->blist, 64);
    else
        die("unknown option %s (see xchg-sim --help)%s", name, "");
}

static void parse_args(int argc, char **argv, args_t *a)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *eq = strchr(arg, '='), *v;
        char name[64];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(arg, "--version") == 0) {
            printf("xchg-sim %s\n", XCHG_VERSION);
            exit(0);
        }
        if (strncmp(arg, "--", 2) == 0) {
            if (parse_flag(a, arg))
                continue;
            snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
            v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v)
                die("%s: a value is missing%s", name, "");
            parse_option(a, name, v);
        } else if (strncmp(arg, "p=", 2) == 0) {
            a->p = (int)parse_long("p", arg + 2, 1, MAX_P);
        } else if (strncmp(arg, "bytes=", 6) == 0) {
            a->o.bytes = (size_t)parse_long("bytes", arg + 6, 0, 1L << 30);
            a->have_bytes = 1;
        } else if (a->npos < 2) {
            *(a->npos++ == 0 ? &a->coll_name : &a->o.spec) = arg;
        } else {
            die("unexpected argument '%s' (see xchg-sim --help)%s", arg, "");
        }
    }
}

/* The sweep's defaults: p, block sizes, two-level constants, no carried statistics. */
static int run_sweep(args_t *a)
{
    static const long dp[] = {2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    static const long db[] = {8, 256, 4096};
    xchg_machine_t *m = &a->o.net.machine;
    if (a->np == 0) {
        a->np = (int)(sizeof dp / sizeof dp[0]);
        memcpy(a->plist, dp, sizeof dp);
    }
    if (a->nb == 0) {
        a->nb = (int)(sizeof db / sizeof db[0]);
        memcpy(a->blist, db, sizeof db);
    }
    m->beta_inter = m->beta_inter > 0 ? m->beta_inter : 10 * m->beta;
    m->tau_inter = m->tau_inter > 0 ? m->tau_inter : 10 * m->tau;
    m->inject = m->inject > 0 ? m->inject : 1;
    a->o.no_carry = 1;
    return sweep(&a->o, a->plist, a->np, a->blist, a->nb);
}

/* One run's arguments complete and consistent, its buffers below --mem-limit; else exit 2. */
static void check_single(args_t *a)
{
    static const char *const colls[XCHG_NCOLLS] = {"alltoall", "allgather", "alltoallv"};
    options_t *o = &a->o;
    sim_job_t est;
    int idx, c;
    xchg_params_t pr;
    char err[256];
    double need;

    if (!a->coll_name || !o->spec) {
        usage(stderr);
        exit(2);
    }
    for (c = 0; c < XCHG_NCOLLS && strcmp(a->coll_name, colls[c]) != 0; c++)
        ;
    if (c == XCHG_NCOLLS)
        die("COLL '%s': expected alltoall, allgather or alltoallv%s", a->coll_name, "");
    o->coll = c;
    if (a->p == 0)
        die("p=N is missing%s%s", "", "");
    if (!a->have_bytes)
        die("bytes=B is missing%s%s", "", "");
    if (o->inplace && o->coll != XCHG_ALLGATHER)
        die("--inplace: only for allgather%s%s", "", "");
    if (o->net.kind == SIM_NET_NODES && o->nnodes_given == 0)
        die("--net nodes=: no node sizes%s%s", "", "");
    est = (sim_job_t){.coll = o->coll, .p = a->p, .bytes = o->bytes};
    need = estimate_bytes(&est, xchg_spec_parse(o->coll, o->spec, &idx, &pr, err, sizeof err) == 0
                                    ? &xchg_algos[idx]
                                    : &xchg_algos[0]);
    if (need > o->mem_limit) {
        fprintf(stderr,
                "xchg-sim: p=%d bytes=%zu needs about %.1f GiB of buffers, above --mem-limit "
                "%.1f GiB\n",
                a->p, o->bytes, need / (1 << 30), o->mem_limit / (1 << 30));
        exit(2);
    }
}

int main(int argc, char **argv)
{
    args_t a;
    result_t res;
    int status;

    memset(&a, 0, sizeof a);
    a.o.net.kind = SIM_NET_FLAT;
    a.o.net.machine = xchg_machine_default;
    a.o.net.machine.rho = 0; /* the simulator times messages, not the algorithms' own copies */
    a.o.mem_limit = 8.0 * (1 << 30);
    a.o.wl.kind = XCHG_WORKLOAD_UNIFORM;
    parse_args(argc, argv, &a);
    if (a.do_sweep)
        return run_sweep(&a);
    check_single(&a);
    if (a.o.csv)
        print_csv_header();
    status = run_one(&a.o, a.p, a.o.bytes, a.o.spec, &res);
    if (status == 0)
        print_result(&a.o, a.o.spec, a.p, a.o.bytes, &res);
    free(a.o.node_sizes);
    return status;
}

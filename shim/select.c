/*
 * select.c: which algorithm serves a call.
 *
 * Precedence: forced by the environment (XCHG_ALLTOALL, ...) > the tuning table
 * (XCHG_TUNING) > learning (shim/learn.c) > the built-in cost models. A choice whose
 * applicability predicate fails falls back to the next level, and XCHG_VERBOSE=1 says why;
 * under XCHG_STRICT=1 a forced algorithm that cannot serve a call is an error instead.
 *
 * The models (xchg_model_rank, models.c) price every registered algorithm of the collective, and
 * the MPI library's own collective too (xchg_cost_native: what MPICH's documented default selection
 * does for the call, priced with the same constants). Without a table the models are trusted
 * only for a clear gain: an xchg algorithm is chosen only when its predicted time times
 * XCHG_MODEL_MARGIN is below native's. The margin is the models' error on shared memory: the
 * linear fit of xchg-tune leaves residuals of tens of percent there (eager/rendezvous switch,
 * caches), so a predicted gain below a third is not a gain anyone can count on.
 *
 * Every input of a decision is a field of xchg_call_t, which is equal on all ranks, plus the
 * configuration, which is equal by assumption (the same environment on every rank). Decisions
 * are cached in the context's learning domain (small open-addressed tables: its channel's,
 * shared by every communicator of the same group, or the context's own) under (collective, size
 * key, skew class, torus shape): for MPI_Alltoall and MPI_Allgather the key is the exact block
 * size; for MPI_Alltoallv it is bucketed (xchg_bucket) with the skew class, so that a program
 * whose counts change every call still hits the cache. Communicators of one group have the same
 * size and node layout, so only a Cartesian shape (xchg_topo_t.torus_*) can tell their calls
 * apart beyond the key. Every rank makes the same sequence of calls on the domain's
 * communicators (as for learning, shim/shim.h), so a bucket decided from its first call's exact
 * values is decided the same way on every rank, and eviction (by position, no clock) is the
 * same everywhere too. That holds for MPI_Alltoallv's selections, which run on the same calls
 * everywhere (on agreed statistics), but not for the others': MPI_Alltoall and MPI_Allgather
 * skip selection when a call repeats the last one's arguments (normalize.c), and ranks may
 * describe one call by different type handles, so one rank may look up (and insert, and
 * evict) where another does not. Their decisions depend on the exact block size alone, so one
 * made again is the same; a bucket's is not. So alltoallv's decisions have a table of their
 * own, which the others' lookups never touch (tests/mpi/decision_cache.c: with one table, a rank
 * that lost a bucket this way decided it again from other counts, and the job received wrong
 * bytes, failed with an MPI error or hung). A new communicator of a known group so decides its
 * calls without the models: they took 0.6 to 3.8 us of its first call of a shape (MPICH, 2
 * ranks, in the harness between cells, where their code is cold).
 *
 * The join of the registry with the functions that run its entries, and the models' ranking
 * that both selection and learning start from, are in models.c; a call that the models decide
 * hands their ranking on to learning, which starts a new shape's candidates from it instead of
 * ranking the call again. Cached and memorised decisions carry the configuration's generation
 * (config.c), which xchg_select_forget bumps when the configuration changes (xchg_force, a
 * table loaded or dropped).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "../tuning/cost.h"

#define XCHG_PROBE 4 /* slots tried per lookup in the decision cache */

/* The model's choice: the fastest xchg algorithm when it beats native by the margin; the
 * ranking it reads is left in *r for learning (xchg_learn_pick). */
static int model_choice(const xchg_call_t *call, xchg_params_t *params, xchg_ranking_t *r)
{
    int n = xchg_model_ranking(call, r), native = xchg_native_index(call->coll);
    const xchg_choice_t *ranked = r->ranked;
    double native_time = INFINITY;

    for (int i = 0; i < n; i++)
        if (ranked[i].algo == native)
            native_time = ranked[i].time;
    for (int i = 0; i < n; i++) {
        if (ranked[i].algo == native)
            continue;
        if (xchg_model_clear_win(call, ranked[i].time, native_time)) {
            *params = ranked[i].params;
            return ranked[i].algo;
        }
        break; /* the fastest xchg algorithm is not clearly faster: none is */
    }
    memset(params, 0, sizeof *params);
    return native;
}

static void say(const xchg_call_t *call, int algo, const xchg_params_t *params, const char *reason)
{
    char text[128];
    xchg_params_format(&xchg_algos[algo], params, text, sizeof text);
    fprintf(stderr, "xchg: decide %s p=%d block=%zu: %s [%s] (%s)\n", xchg_coll_name(call->coll),
            call->comm_size, xchg_size_key(call), xchg_algos[algo].name, text, reason);
    fflush(stderr);
}

/* algo's predicate, and for an xchg algorithm a function to run it (xchg_algo_impl). */
static int can_serve(int algo, const xchg_call_t *call, const xchg_params_t *params,
                     const char **why)
{
    if (!xchg_algos[algo].native && !xchg_algo_impl(algo)) {
        *why = "no implementation is bound to it (algos/impls.c)";
        return 0;
    }
    return xchg_algos[algo].applies(call, params, why);
}

/* Appends to the reason a decision gives (XCHG_VERBOSE's line); nothing where none was asked
 * for (len 0: a call's decision without XCHG_VERBOSE formats no text). */
__attribute__((format(printf, 3, 4))) static void because(char *reason, size_t len,
                                                          const char *format, ...)
{
    va_list args;
    size_t used;
    if (len == 0)
        return;
    used = strlen(reason);
    va_start(args, format);
    vsnprintf(reason + used, len - used, format, args);
    va_end(args);
}

/* forced > table > model, with the level that decided in *source (and the models' ranking,
 * when they decided, in *r); the reason in reason[0 .. len) when len > 0. */
static int decide(const xchg_call_t *call, xchg_params_t *params, char *reason, size_t len,
                  int *source, xchg_ranking_t *r)
{
    const char *why = "";
    int forced = xchg_config.forced[call->coll];
    const xchg_rule_t *rule;

    if (len > 0)
        reason[0] = '\0';
    if (forced != XCHG_AUTO) {
        *params = xchg_config.forced_params[call->coll];
        if (can_serve(forced, call, params, &why)) {
            xchg_algos[forced].cost(call, &xchg_config.machine, params);
            because(reason, len, "forced");
            *source = XCHG_FROM_FORCED;
            return forced;
        }
        because(reason, len, "fallback: forced %s cannot serve this call: %s; ",
                xchg_algos[forced].name, why);
    }
    rule = xchg_table_lookup(&xchg_config.table, call->coll, call->comm_size,
                             call->topo ? call->topo->nnodes : 1, xchg_size_key(call));
    if (rule) {
        const char *file = getenv("XCHG_TUNING");
        *params = rule->params;
        if (can_serve(rule->algo, call, params, &why)) {
            xchg_algos[rule->algo].cost(call, &xchg_config.machine, params);
            because(reason, len, "table %s:%d", file ? file : "?", rule->line);
            *source = forced != XCHG_AUTO ? XCHG_FROM_FALLBACK : XCHG_FROM_TABLE;
            return rule->algo;
        }
        because(reason, len, "table %s:%d names %s, which cannot serve it: %s; ", file ? file : "?",
                rule->line, xchg_algos[rule->algo].name, why);
    }
    rule = xchg_table_lookup(&xchg_config.cache, call->coll, call->comm_size,
                             call->topo ? call->topo->nnodes : 1, xchg_size_key(call));
    if (rule) {
        *params = rule->params;
        if (can_serve(rule->algo, call, params, &why)) {
            xchg_algos[rule->algo].cost(call, &xchg_config.machine, params);
            because(reason, len, "cache %s:%d", xchg_config.cache_path, rule->line);
            *source = forced != XCHG_AUTO ? XCHG_FROM_FALLBACK : XCHG_FROM_CACHE;
            return rule->algo;
        }
        because(reason, len, "cache %s:%d names %s, which cannot serve it: %s; ",
                xchg_config.cache_path, rule->line, xchg_algos[rule->algo].name, why);
    }
    if (len > 0)
        because(reason, len, "model%s",
                xchg_native_curve_find(xchg_config.machine.native, call->coll, call->comm_size)
                    ? " (native measured)"
                    : "");
    *source = forced != XCHG_AUTO ? XCHG_FROM_FALLBACK : XCHG_FROM_MODEL;
    return model_choice(call, params, r);
}

int xchg_decide(const xchg_call_t *call, xchg_params_t *params, char *reason, size_t len)
{
    int source;
    xchg_ranking_t r;
    r.n = -1; /* not made yet (its array is not cleared: the ranking fills it) */
    return decide(call, params, reason, reason ? len : 0, &source, &r);
}

xchg_shim_state_t *xchg_shim_state(xchg_ctx_t *ctx)
{
    xchg_shim_state_t *state;
    if (ctx->shim)
        return ctx->shim;
    state = calloc(1, sizeof *state);
    if (!state)
        return NULL;
    /* the channel's learning domain, unless threads may call its contexts in any order */
    state->learning = xchg_config.thread_multiple ? NULL : xchg_channel_learning(ctx);
    if (!state->learning) {
        state->learning = xchg_learning_new();
        state->own_learning = 1;
    }
    if (!state->learning) {
        free(state);
        return NULL;
    }
    return ctx->shim = state;
}

void xchg_shim_state_free(xchg_shim_state_t *state)
{
    if (state && state->own_learning)
        free(state->learning);
    free(state);
}

/* The cached decision of a call shape, made now when absent (the models' ranking, when they
 * made it, left in *r). NULL only without memory. */
static xchg_decision_t *cached_decision(xchg_ctx_t *ctx, const xchg_call_t *call, xchg_ranking_t *r)
{
    xchg_shim_state_t *state = xchg_shim_state(ctx);
    unsigned gen = xchg_select_generation(), skew = xchg_skew_class(call);
    size_t key = call->block_bytes;
    size_t hash, slot;
    xchg_decision_t *d, *decisions;
    int torus[3] = {0, 0, 0};
    char reason[512];
    int say_it = xchg_config.verbose && ctx->rank == 0;

    if (!state)
        return NULL;
    decisions = state->learning->decisions[call->coll == XCHG_ALLTOALLV];
    if (call->coll == XCHG_ALLTOALLV)
        key = xchg_bucket(key);
    if (call->topo) {
        torus[0] = call->topo->torus_ndims;
        torus[1] = call->topo->torus_dims[0];
        torus[2] = call->topo->torus_dims[1];
    }
    /* the high bits of the product: sizes that are multiples of a power of two differ there */
    hash =
        (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 40) ^ ((size_t)call->coll << 4) ^ skew;
    for (int probe = 0; probe < XCHG_PROBE; probe++) {
        d = &decisions[(hash + (size_t)probe) % XCHG_DECISIONS];
        if (d->gen == gen && d->coll == call->coll && d->key == key && d->skew == skew &&
            memcmp(d->torus, torus, sizeof torus) == 0)
            return d;
    }
    /* absent: the first free or stale slot of the probe sequence, else its first slot */
    slot = hash % XCHG_DECISIONS;
    for (int probe = 0; probe < XCHG_PROBE; probe++) {
        size_t s = (hash + (size_t)probe) % XCHG_DECISIONS;
        if (decisions[s].gen != gen) {
            slot = s;
            break;
        }
    }
    d = &decisions[slot];
    memset(d, 0, sizeof *d);
    /* the reason's text only for XCHG_VERBOSE's line (about 500 instructions a new shape) */
    d->algo = decide(call, &d->params, reason, say_it ? sizeof reason : 0, &d->source, r);
    d->gen = gen;
    d->coll = call->coll;
    d->key = key;
    d->skew = skew;
    memcpy(d->torus, torus, sizeof torus);
    d->shape = -1;
    if (say_it)
        say(call, d->algo, &d->params, reason);
    return d;
}

int xchg_select(xchg_ctx_t *ctx, const xchg_call_t *call, xchg_choice_t *choice, int *trial,
                int *learned)
{
    xchg_ranking_t r; /* made once, for the decision and a new shape's candidates */
    xchg_decision_t *d;

    r.n = -1; /* not made yet (its array is not cleared: the ranking fills it) */
    d = cached_decision(ctx, call, &r);

    *trial = -1;
    *learned = -1;
    if (!d)
        return MPI_ERR_NO_MEM;
    if (d->source == XCHG_FROM_FALLBACK && xchg_config.strict) {
        const char *why = "";
        int forced = xchg_config.forced[call->coll];
        xchg_params_t params = xchg_config.forced_params[call->coll];
        can_serve(forced, call, &params, &why);
        if (ctx->rank == 0) {
            fprintf(stderr, "xchg: strict: %s %s cannot serve p=%d block=%zu: %s\n",
                    xchg_coll_name(call->coll), xchg_algos[forced].name, call->comm_size,
                    xchg_size_key(call), why);
            fflush(stderr);
        }
        /* every rank refuses this call (the decision is agreed): none returns before rank 0 has
         * said why, so a program that aborts on the error still shows the reason */
        PMPI_Barrier(ctx->comm);
        return MPI_ERR_OTHER;
    }
    choice->algo = d->algo;
    choice->params = d->params;
    choice->time = 0.0;
    if ((d->source == XCHG_FROM_MODEL || d->source == XCHG_FROM_CACHE) && xchg_config.learn &&
        ctx->size > 1) {
        *trial = xchg_learn_pick(ctx, call, d->source, choice, &d->shape, &r);
        *learned = *trial < 0 ? d->shape : -1;
    }
    return MPI_SUCCESS;
}

int xchg_alltoall_select_run(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf,
                             size_t block_bytes, const xchg_algo_t *inner,
                             const xchg_params_t *params)
{
    xchg_call_t call;
    xchg_params_t chosen = {0};
    xchg_decision_t *d;
    xchg_ranking_t r;
    int algo;

    memset(&call, 0, sizeof call);
    call.coll = XCHG_ALLTOALL;
    call.comm_size = ctx->size;
    call.topo = &ctx->topo;
    call.block_bytes = block_bytes;
    if (inner && inner >= xchg_algos && inner < xchg_algos + xchg_nalgos &&
        xchg_algo_impl((int)(inner - xchg_algos)) && inner->coll == XCHG_ALLTOALL) {
        algo = (int)(inner - xchg_algos);
        chosen.radix = params ? params->radix : 0;
        chosen.nports = params ? params->nports : 0;
        xchg_algos[algo].cost(&call, &xchg_config.machine, &chosen);
    } else {
        r.n = -1;
        d = cached_decision(ctx, &call, &r);
        if (!d)
            return MPI_ERR_NO_MEM;
        algo = d->algo;
        chosen = d->params;
    }
    if (!xchg_algo_impl(algo)) {
        /* native: the MPI library's alltoall on the user's communicator (the private channel
         * may be shared with other communicators, so no collective runs on it) */
        if (block_bytes <= (size_t)INT32_MAX)
            return PMPI_Alltoall(sendbuf, (int)block_bytes, MPI_BYTE, recvbuf, (int)block_bytes,
                                 MPI_BYTE, ctx->user);
        algo = xchg_baseline_index(XCHG_ALLTOALL);
        memset(&chosen, 0, sizeof chosen);
        xchg_algos[algo].cost(&call, &xchg_config.machine, &chosen);
    }
    return xchg_algo_impl(algo)->alltoall(ctx, sendbuf, recvbuf, block_bytes, &chosen);
}

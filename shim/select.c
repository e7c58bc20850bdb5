/*
 * select.c: which algorithm serves a call.
 *
 * Precedence: forced by the environment (XCHG_ALLTOALL, ...) > the tuning table
 * (XCHG_TUNING) > the built-in cost models. A choice whose applicability predicate fails falls
 * back to the next level, and XCHG_VERBOSE=1 says why. Every input of the choice is a field of
 * xchg_call_t, which is equal on all ranks, so every rank of a communicator picks the same
 * algorithm and the same parameters.
 *
 * Decisions are cached (a small table per process, keyed by the whole xchg_call_t), so the
 * cost models run once per new call shape; XCHG_VERBOSE prints each new decision once.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define XCHG_DECISIONS 512

typedef struct decision {
    int used;
    xchg_call_t call;
    int algo;
    xchg_params_t params;
    int announced;
} decision_t;

static decision_t decisions[XCHG_DECISIONS];
static int decisions_next;
static pthread_mutex_t decisions_lock = PTHREAD_MUTEX_INITIALIZER;

/* The size key. alltoall and allgather: the bytes of one block. alltoallv: the mean block of
 * the busiest rank, ceil(max(h1, h2) / p), from the agreed h1 (most bytes any rank sends) and
 * h2 (most bytes any rank receives). The tuning table's block ranges and the model's inputs
 * use this key and nothing else. */
size_t xchg_size_key(const xchg_call_t *call)
{
    size_t h;
    if (call->coll != XCHG_ALLTOALLV)
        return call->block_bytes;
    h = call->max_send_bytes > call->max_recv_bytes ? call->max_send_bytes : call->max_recv_bytes;
    return call->comm_size > 0 ? (h + (size_t)call->comm_size - 1) / (size_t)call->comm_size : h;
}

/* Complete params with the algorithm's model and return its predicted time. */
static double complete(int algo, const xchg_call_t *call, xchg_params_t *params)
{
    return xchg_algos[algo].cost(call, &xchg_config.machine, params);
}

static int model_choice(const xchg_call_t *call, xchg_params_t *params)
{
    int best = -1;
    double best_time = INFINITY;
    const char *why;

    for (int i = 0; i < xchg_nalgos; i++) {
        xchg_params_t candidate = {0};
        double t;
        if (xchg_algos[i].coll != call->coll || !xchg_algos[i].applies(call, &candidate, &why))
            continue;
        t = complete(i, call, &candidate);
        if (t < best_time) {
            best_time = t;
            best = i;
            *params = candidate;
        }
    }
    if (best < 0) { /* no model predicts anything: the MPI library's own collective */
        best = xchg_algo_find(call->coll, "native");
        memset(params, 0, sizeof *params);
    }
    return best;
}

static void say(const xchg_call_t *call, int algo, const xchg_params_t *params,
                const char *reason)
{
    char text[128];
    xchg_params_format(&xchg_algos[algo], params, text, sizeof text);
    fprintf(stderr, "xchg: decide %s p=%d block=%zu: %s [%s] (%s)\n", xchg_coll_name(call->coll),
            call->comm_size, xchg_size_key(call), xchg_algos[algo].name, text, reason);
    fflush(stderr);
}

/* Decide without the cache; reason receives the explanation. */
int xchg_decide(const xchg_call_t *call, xchg_params_t *params, char *reason, size_t len)
{
    char scratch[8];
    if (!reason) {
        reason = scratch;
        len = sizeof scratch;
    }
    const char *why = "";
    int forced = xchg_config.forced[call->coll];
    const xchg_rule_t *rule;

    reason[0] = '\0';
    if (forced != XCHG_AUTO) {
        *params = xchg_config.forced_params[call->coll];
        if (xchg_algos[forced].applies(call, params, &why)) {
            complete(forced, call, params);
            snprintf(reason, len, "forced");
            return forced;
        }
        snprintf(reason, len, "fallback: forced %s cannot serve this call: %s; ",
                 xchg_algos[forced].name, why);
    }
    rule = xchg_table_lookup(&xchg_config.table, call->coll, call->comm_size, xchg_size_key(call));
    if (rule) {
        const char *file = getenv("XCHG_TUNING");
        size_t used = strlen(reason);
        *params = rule->params;
        if (xchg_algos[rule->algo].applies(call, params, &why)) {
            complete(rule->algo, call, params);
            snprintf(reason + used, len - used, "table %s:%d", file ? file : "?", rule->line);
            return rule->algo;
        }
        snprintf(reason + used, len - used, "table %s:%d names %s, which cannot serve it: %s; ",
                 file ? file : "?", rule->line, xchg_algos[rule->algo].name, why);
    }
    {
        size_t used = strlen(reason);
        snprintf(reason + used, len - used, "model");
    }
    return model_choice(call, params);
}

void xchg_select_forget(void)
{
    pthread_mutex_lock(&decisions_lock);
    memset(decisions, 0, sizeof decisions);
    decisions_next = 0;
    pthread_mutex_unlock(&decisions_lock);
}

static int select_cached(const xchg_call_t *call, xchg_params_t *params, int announce)
{
    char reason[512];
    int algo, print = 0;

    pthread_mutex_lock(&decisions_lock);
    for (int i = 0; i < XCHG_DECISIONS; i++) {
        decision_t *d = &decisions[i];
        if (d->used && memcmp(&d->call, call, sizeof *call) == 0) {
            *params = d->params;
            algo = d->algo;
            print = announce && !d->announced && xchg_config.verbose;
            d->announced |= print;
            pthread_mutex_unlock(&decisions_lock);
            if (print) {
                xchg_decide(call, params, reason, sizeof reason); /* the same, with its reason */
                say(call, algo, params, reason);
            }
            return algo;
        }
    }
    algo = xchg_decide(call, params, reason, sizeof reason);
    print = announce && xchg_config.verbose;
    decisions[decisions_next] = (decision_t){1, *call, algo, *params, print};
    decisions_next = (decisions_next + 1) % XCHG_DECISIONS;
    pthread_mutex_unlock(&decisions_lock);
    if (print)
        say(call, algo, params, reason);
    return algo;
}

int xchg_select(xchg_ctx_t *ctx, const xchg_call_t *call, int *algo, xchg_params_t *params)
{
    *algo = select_cached(call, params, ctx->rank == 0);
    return MPI_SUCCESS;
}

int xchg_alltoall_select_run(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf,
                             size_t block_bytes, int inner, const xchg_params_t *params)
{
    xchg_call_t call;
    xchg_params_t chosen = {0};
    int algo;

    memset(&call, 0, sizeof call);
    call.coll = XCHG_ALLTOALL;
    call.comm_size = ctx->size;
    call.block_bytes = block_bytes;
    if (inner > 0 && inner <= xchg_nalgos && xchg_algos[inner - 1].alltoall) {
        algo = inner - 1;
        chosen.radix = params ? params->radix : 0;
        chosen.nports = params ? params->nports : 0;
        complete(algo, &call, &chosen);
    } else {
        algo = select_cached(&call, &chosen, 0);
    }
    if (!xchg_algos[algo].alltoall) {
        /* native: the MPI library's alltoall on the private communicator */
        if (block_bytes <= (size_t)INT32_MAX)
            return PMPI_Alltoall(sendbuf, (int)block_bytes, MPI_BYTE, recvbuf, (int)block_bytes,
                                 MPI_BYTE, ctx->comm);
        algo = xchg_algo_find(XCHG_ALLTOALL, "pairwise");
        memset(&chosen, 0, sizeof chosen);
        complete(algo, &call, &chosen);
    }
    return xchg_algos[algo].alltoall(ctx, sendbuf, recvbuf, block_bytes, &chosen);
}

/*
 * learn.c: selection that learns (XCHG_LEARN, on by default): the MPI side of the policy in
 * tuning/learn_policy.c, which decides everything from agreed values; this file runs it.
 *
 * A call shape is (learning domain, collective, size bucket, skew class). Shapes that the cost
 * models decide, or that a cached table decided (shim/cache.c), learn; a forced algorithm or a
 * rule of the user's own XCHG_TUNING table is obeyed as it is. A new shape's candidates are
 * native and the models' best xchg algorithms (those priced within the policy's span of the
 * best, and the best with one message in flight, since the port count is what the models know
 * least; on nodes linked by a network where no gap at a node was measured, the node algorithm:
 * xchg_lp_node_joins), the decided one first. The policy then names, call by call, what runs,
 * which calls are timed, and at which call the ranks agree on the times. Where the models are
 * sure of their choice (xchg_lp_sure: native priced at least twice it, on calls whose bytes cost
 * less than a start-up), the shape runs it untimed and learns only once the program has made
 * it relearn_first times (xchg_lp_start_sure).
 *
 * The one entry point per call is advance(): every call of a shape, on whichever path it takes
 * (xchg_learn_pick through selection, or xchg_learn_tick on the memorised fast path of
 * shim/normalize.c), advances its policy state exactly once, so every rank is at the same step
 * of the same shape at the same call. A probe's calls after its first take the memorised path
 * too (a selection costs about what a whole call of 1 B does on one node); a step taken on the
 * fast path that runs another candidate than the memorised one is left pending for the
 * selection that follows in the same call.
 *
 * Timing. On one machine a timed call has no barrier (one before every timed call would cost
 * the program as much again on its smallest calls): each rank times the call from its choice to
 * its end. A rank that arrives early waits for its peers inside the call, so no rank's own time
 * is the call's; but the ranks' monotonic clocks are one clock, so at a probe's last call the
 * ranks agree on the latest start and the latest end of each timed call (one xchg_agree_max of
 * up to 12 values and the carried ones below), and the probe's time is the median over its
 * calls of latest end - latest start (over each probe's calls apart where a chained probe and
 * native's share the agreement). Across machines clocks differ, so a timed call starts with a
 * barrier of the channel (xchg_learn_start) and its time is the slowest rank's from there (the
 * least of the ranks' own times would be the last arrival's, who found its data there already).
 * The same goes for the watch.
 *
 * What an agreement carries besides the times, for the policy's allowance (learn_policy.c):
 * the cost of the domain's previous agreement (for the smallest calls an agreement costs more
 * than the probe's calls); the least of the ranks' times in the barriers since it, charged to
 * each timed call; and the sum of the round's calls after its first, each from its entry to its
 * exit (its barrier included; untimed calls too, which the probes' medians leave out), the
 * least of the ranks'. The measurements behind this: docs/design.md, Learning.
 *
 * Domains: the shapes of all contexts on one channel (the same group: duplicates of one
 * communicator) are one domain, so that a program with many communicators of one group learns
 * once; that needs the calls of those contexts in the same order on every rank, which a program
 * that is not multithreaded makes (collectives that need every rank's data, made in different
 * orders on different ranks, would deadlock natively). Under MPI_THREAD_MULTIPLE every context
 * has a domain of its own.
 *
 * Consistency: candidates come from the call's shape (equal on all ranks), the policy's inputs
 * are agreed, and its state advances with the domain's calls. XCHG_TEST_SKEW_TIMES=1 distorts
 * each rank's clock differently to test exactly that; XCHG_TEST_DRIFT=1 makes watched calls read
 * 100 times slower than they ran, to test the watch; XCHG_TEST_PROBE_ALL=1 probes every
 * candidate, to test a probe's mechanics whatever the policy would skip.
 *
 * What settles is remembered (xchg_learned_rules) for the per-user cache (shim/cache.c) and for
 * XCHG_LEARN=FILE, which world rank 0 writes at MPI_Finalize as a tuning table; so is an
 * unsettled round's verdict on its probes so far (xchg_lp_interim), once native and another
 * candidate are measured: a program that makes a shape too few times for its round to settle
 * (the integer sort's 8 alltoallv of 16 MiB) leaves its next run that verdict, which that run
 * takes from the first call, instead of nothing and the same probes again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim.h"
#include "../algos/sched/shm.h"
#include "../tuning/table_write.h"

#define LEARNED_MAX 1024     /* shapes' verdicts kept for the cache and XCHG_LEARN=FILE */
#define TEST_DRIFT_FACTOR 100.0 /* XCHG_TEST_DRIFT=1: watched times are taken this many times */

/* one agreement: a start and an end per timed call, and the three carried values */
_Static_assert(2 * XCHG_LP_AGREED_MAX + 3 <= XCHG_AGREE_MAX, "an agreement's values");

static xchg_rule_t learned[LEARNED_MAX];
static int nlearned;
static pthread_mutex_t learned_lock = PTHREAD_MUTEX_INITIALIZER;

xchg_learning_t *xchg_learning_new(void)
{
    return calloc(1, sizeof(xchg_learning_t));
}

const xchg_shape_t *xchg_learn_shape(const xchg_ctx_t *ctx, int slot)
{
    return &ctx->shim->learning->shapes[slot];
}

/* A shape as one key, never 0 (xchg_learning_t.shape_keys): skew is at most 15, coll one of
 * XCHG_NCOLLS. */
static uint64_t shape_key(int coll, unsigned bucket, unsigned skew)
{
    return 1u | (uint64_t)coll << 1 | (uint64_t)skew << 8 | (uint64_t)bucket << 32;
}

/* Candidate c is algo with params. */
static int is(const xchg_lp_cand_t *c, int algo, const xchg_params_t *params)
{
    const xchg_params_t *a = &c->params;
    return c->algo == algo && a->radix == params->radix && a->nports == params->nports &&
           a->inner == params->inner && a->dims_r == params->dims_r &&
           a->dims_c == params->dims_c && a->leaders == params->leaders;
}

/* c is a candidate already: the same algorithm and parameters, or priced exactly as one taken
 * (the same schedule to the models: hier on one node is pairwise), shared memory apart. */
static int taken(const xchg_lp_cand_t *cand, int n, const xchg_choice_t *c)
{
    for (int i = 1; i < n; i++) {
        if (is(&cand[i], c->algo, &c->params))
            return 1;
        if (cand[i].predicted == c->time &&
            xchg_algos[cand[i].algo].shared_memory == xchg_algos[c->algo].shared_memory)
            return 1;
    }
    return 0;
}

static void add(xchg_lp_cand_t *cand, int *n, const xchg_choice_t *c)
{
    if (*n >= XCHG_LP_MAX || taken(cand, *n, c))
        return;
    cand[*n] = (xchg_lp_cand_t){c->algo, c->params, c->time, 0.0, 0,
                                xchg_algos[c->algo].shared_memory, 0};
    (*n)++;
}

/* The shape's candidates (cand[0] native) and the index of the one to probe first (or, for a
 * cached verdict, the settled winner): the decided choice when it is cached or an xchg algorithm
 * (the models' clear win); else, when the models see no clear win either way (the best xchg
 * candidate is priced within XCHG_MODEL_MARGIN of native, above it or below), that candidate;
 * native first only when the models price it clearly faster or the call moves no bytes. Native
 * is probed in every round anyway, and probed after a measured candidate its probe is sized by
 * that measurement (learn_policy.c, fit_native): when the xchg candidate is much the faster,
 * native costs one call instead of a full probe; when native is the faster, both are probed in
 * full in either order. On one node without a table's sync the models price a message's
 * start-up and a pass through the segment by the same beta, so every small call there is such a
 * tie, and most are won by shared memory (MPICH, 2 ranks: shm 0.14 to 0.23 us against native's
 * 0.26 to 0.45 at 1 B to 256 B). */
static int candidates(const xchg_call_t *call, int source, const xchg_choice_t *decided,
                      xchg_ranking_t *r, xchg_lp_cand_t *cand, int *first, int *tie)
{
    xchg_choice_t d = *decided;
    const xchg_choice_t *ranked = r->ranked;
    int n = xchg_model_ranking(call, r), native = xchg_native_index(call->coll);
    int ncand = 1, node;
    double best = 0.0, serial;

    cand[0] = (xchg_lp_cand_t){native, {0}, 0.0, 0.0, 0, 0, 0};
    for (int i = 0; i < n; i++) {
        if (ranked[i].algo == native)
            cand[0].predicted = ranked[i].time;
        else if (best == 0.0)
            best = ranked[i].time;
    }
    serial = best;
    *first = 0;
    *tie = 0;
    for (int i = 0; i < n && source == XCHG_FROM_MODEL && d.algo == native; i++) {
        if (ranked[i].algo == native)
            continue;
        if (ranked[i].time <= XCHG_MODEL_MARGIN * cand[0].predicted && !xchg_call_empty(call)) {
            d = ranked[i]; /* no clear win either way; a cached verdict of native stays, and an
                              empty call starts from native (xchg_model_clear_win) */
            *tie = 1;
        }
        break;
    }
    if (d.algo != native) {
        d.time = xchg_algos[d.algo].cost(call, &xchg_config.machine, &d.params);
        add(cand, &ncand, &d);
        *first = ncand - 1;
    }
    for (int i = 0; i < n; i++)
        if (ranked[i].algo != native && ranked[i].time <= xchg_lp_constants.span * best)
            add(cand, &ncand, &ranked[i]);
    /* the best one with one message in flight, when it has more */
    for (int i = 1; i < ncand; i++) {
        xchg_choice_t one = {cand[i].algo, cand[i].params, 0.0};
        const char *why;
        if (one.params.nports <= 1)
            continue;
        one.params.nports = 1;
        if (!xchg_algos[one.algo].applies(call, &one.params, &why))
            break;
        one.time = xchg_algos[one.algo].cost(call, &xchg_config.machine, &one.params);
        if (one.params.nports == 1 && one.time <= xchg_lp_constants.span * best)
            add(cand, &ncand, &one);
        serial = one.params.nports == 1 ? one.time : serial;
        break;
    }
    /* the node algorithm where start-ups between nodes are dear and no gap was measured
     * (xchg_lp_node_joins), its time unknown: without the gap the models' price leaves out
     * what it saves; never on one node (the name's search, about 250 instructions, only
     * across nodes) */
    node = call->topo && call->topo->nnodes > 1 ? xchg_algo_find(call->coll, "node") : -1;
    for (int i = 0; i < n && node >= 0; i++) {
        xchg_choice_t unpriced = ranked[i];
        if (ranked[i].algo != node)
            continue;
        unpriced.time = 0.0;
        if (xchg_lp_node_joins(call, &xchg_config.machine, ranked[i].time, serial))
            add(cand, &ncand, &unpriced);
        break;
    }
    return ncand;
}

/* Mark the candidates whose first call must make or grow the context's segment to halves of
 * more than XCHG_SHM_SETUP_HALF bytes (learn_policy.h: they wait for a repeated shape). Up to
 * that size, the world's processes have the segment that MPI_Init made (normalize.c), and
 * other processes make one in 0.1 to 0.3 ms on a 2-core VM, which a shape's first calls absorb
 * and which the memory of a new communicator costs any library; growing one to halves of 1 MiB
 * took 1.4 ms (HPCC's MPIFFT, 4 ranks on 2 cores), against 10 to 50 us that the calls could
 * gain. The segment's state is agreed: every rank makes and grows it at the same call. */
static void mark_setup(const xchg_ctx_t *ctx, const xchg_call_t *call, xchg_lp_cand_t *cand,
                       int ncand)
{
    int dear = xchg_shm_new_half(ctx, xchg_shm_need(call->coll, call->comm_size, call->block_bytes,
                                                    call->max_send_bytes)) > XCHG_SHM_SETUP_HALF;
    for (int c = 1; c < ncand; c++)
        cand[c].setup = dear && xchg_algos[cand[c].algo].shared_memory;
}

static void announce(const xchg_ctx_t *ctx, const xchg_shape_t *s, const char *what, int winner);

/* The slot of a shape: found, or a new one started with its candidates (settled on the first
 * at once where the models are sure of it: xchg_lp_sure; where they see no clear win,
 * xchg_lp_start_tie: settled on native for a close tie of cheap calls, or of dear ones across
 * nodes, else with the first round's first probe counted as exploration). */
static int shape_for(const xchg_ctx_t *ctx, xchg_learning_t *dom, const xchg_call_t *call,
                     int source, const xchg_choice_t *decided, int *hint, xchg_ranking_t *r)
{
    unsigned bucket = xchg_bucket(call->block_bytes), skew = xchg_skew_class(call);
    uint64_t key = shape_key(call->coll, bucket, skew);
    xchg_lp_cand_t cand[XCHG_LP_MAX];
    xchg_shape_t *s;
    int ncand, first, tie;

    if (*hint >= 0 && dom->shape_keys[*hint] == key)
        return *hint;
    for (int i = 0; i < XCHG_SHAPES; i++)
        if (dom->shape_keys[i] == key)
            return *hint = i;
    *hint = dom->next;
    dom->next = (dom->next + 1) % XCHG_SHAPES;
    dom->epoch++; /* a new shape (and perhaps an evicted one): memorised choices are void */
    dom->shape_keys[*hint] = key;
    s = &dom->shapes[*hint];
    memset(s, 0, sizeof *s);
    s->coll = call->coll;
    s->bucket = bucket;
    s->skew = skew;
    ncand = candidates(call, source, decided, r, cand, &first, &tie);
    mark_setup(ctx, call, cand, ncand);
    if (source == XCHG_FROM_CACHE)
        xchg_lp_start_known(&s->lp, cand, ncand, first);
    else if (first > 0 && !xchg_config.test_probe_all &&
             xchg_lp_sure(call, &xchg_config.machine, cand[0].predicted, cand[first].predicted)) {
        xchg_lp_start_sure(&s->lp, cand, ncand, first);
        if (xchg_config.verbose && ctx->rank == 0 && s->lp.phase == XCHG_LP_SETTLED)
            announce(ctx, s, "sure", s->lp.winner);
    } else if (tie && !xchg_config.test_probe_all) {
        xchg_lp_start_tie(&s->lp, cand, ncand, first,
                          !call->topo || call->topo->nnodes <= 1 ? XCHG_LP_ONE_NODE
                          : ctx->cut_inter > 0                   ? XCHG_LP_ACROSS_CUT
                                                                 : XCHG_LP_ACROSS);
        if (xchg_config.verbose && ctx->rank == 0 && s->lp.phase == XCHG_LP_SETTLED)
            announce(ctx, s, "tie", s->lp.winner);
    } else
        xchg_lp_start(&s->lp, cand, ncand, first);
    s->lp.probe_all = xchg_config.test_probe_all;
    return *hint;
}

/* The one step per call (file header). A step that moves the shape between settled and probing,
 * or that changes what a settled shape runs (a stored verdict that waited for its set-up), voids
 * the memorised choices; 1 when it did. */
static int advance(xchg_learning_t *dom, xchg_shape_t *s)
{
    int phase = s->lp.phase, ran = s->step.cand;
    s->step = xchg_lp_call(&s->lp);
    if (s->lp.phase == phase && (phase != XCHG_LP_SETTLED || s->step.cand == ran))
        return 0;
    dom->epoch++;
    return 1;
}

int xchg_learn_pick(xchg_ctx_t *ctx, const xchg_call_t *call, int source, xchg_choice_t *choice,
                    int *hint, xchg_ranking_t *ranking)
{
    xchg_learning_t *dom = ctx->shim->learning;
    int slot = shape_for(ctx, dom, call, source, choice, hint, ranking);
    xchg_shape_t *s = &dom->shapes[slot];

    if (s->pending)
        s->pending = 0; /* xchg_learn_tick took this call's step already */
    else
        advance(dom, s);
    choice->algo = s->lp.cand[s->step.cand].algo;
    choice->params = s->lp.cand[s->step.cand].params;
    /* a probe's calls (the first of each candidate comes through here, the others may take the
     * memorised path, xchg_learn_tick) and a settled shape's watched calls are reported */
    return s->lp.phase == XCHG_LP_PROBING || s->step.timed ? slot : -1;
}

int xchg_learn_tick(xchg_ctx_t *ctx, int slot, int algo, const xchg_params_t *params)
{
    xchg_learning_t *dom = ctx->shim->learning;
    xchg_shape_t *s = &dom->shapes[slot];
    int changed;
    if (s->step.cand == s->lp.winner && xchg_lp_quiet(&s->lp)) {
        /* what advance() finds then: still settled, on the same candidate */
        s->step = (xchg_lp_step_t){s->lp.winner, 0, 0, -1};
        changed = 0;
    } else {
        changed = advance(dom, s);
    }
    if (changed || !is(&s->lp.cand[s->step.cand], algo, params)) {
        /* this call's step, for the selection that follows; the memorised choices are void,
         * so that no other fast path of this call counts it again */
        s->pending = 1;
        dom->epoch++;
        return XCHG_TICK_RELEARN;
    }
    /* a probe's calls of one candidate take the memorised path too, reported as the probe's
     * calls are: they cost what the candidate costs, not a selection each */
    return s->lp.phase == XCHG_LP_PROBING || s->step.timed ? XCHG_TICK_WATCH : XCHG_TICK_ON;
}

void xchg_learn_unpick(xchg_ctx_t *ctx, int slot)
{
    ctx->shim->learning->shapes[slot].pending = 1;
}

double xchg_learn_clock(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

double xchg_learn_start(xchg_ctx_t *ctx, int slot)
{
    xchg_learning_t *dom = ctx->shim->learning;
    double began = xchg_learn_clock(), ended;
    dom->shapes[slot].entered = began;
    if (ctx->one_clock || !dom->shapes[slot].step.timed)
        return began;
    /* across machines: every rank starts the timed call together; the barrier's cost (the
     * least of this rank's, agreed as the least of the ranks') goes to the policy */
    PMPI_Barrier(ctx->comm);
    ended = xchg_learn_clock();
    if (dom->sync_local == 0 || ended - began < dom->sync_local)
        dom->sync_local = ended - began > 0 ? ended - began : 1e-9;
    return ended;
}

/* Remember a shape's verdict, candidate `winner`, for the cache and XCHG_LEARN=FILE: a settled
 * round's, or an unsettled one's so far (the latest verdict stands). */
static void remember(const xchg_ctx_t *ctx, const xchg_shape_t *s, int winner)
{
    xchg_rule_t rule = {0};
    rule.coll = s->coll;
    rule.pmin = rule.pmax = ctx->size;
    rule.nmin = rule.nmax = ctx->topo.nnodes;
    xchg_bucket_range(s->bucket, &rule.bmin, &rule.bmax);
    rule.algo = s->lp.cand[winner].algo;
    rule.params = s->lp.cand[winner].params;
    pthread_mutex_lock(&learned_lock);
    for (int i = 0; i < nlearned; i++) {
        if (learned[i].coll == rule.coll && learned[i].pmin == rule.pmin &&
            learned[i].nmin == rule.nmin && learned[i].bmin == rule.bmin) {
            learned[i] = rule;
            goto out;
        }
    }
    if (nlearned < LEARNED_MAX)
        learned[nlearned++] = rule;
out:
    pthread_mutex_unlock(&learned_lock);
}

int xchg_learned_rules(xchg_rule_t *rules, int max)
{
    int n;
    pthread_mutex_lock(&learned_lock);
    n = nlearned < max ? nlearned : max;
    memcpy(rules, learned, (size_t)n * sizeof *rules);
    pthread_mutex_unlock(&learned_lock);
    return n;
}

/* XCHG_VERBOSE: what a round of probes measured and what won ("learn": the settled round's
 * winner; "so far": an unsettled round's verdict on its probes so far). */
static void announce(const xchg_ctx_t *ctx, const xchg_shape_t *s, const char *what, int winner)
{
    char line[1024], text[128];
    size_t used, lo, hi;
    const xchg_lp_t *lp = &s->lp;

    xchg_bucket_range(s->bucket, &lo, &hi);
    used = (size_t)snprintf(line, sizeof line, "xchg: %s %s p=%d block=%zu-%zu:", what,
                            xchg_coll_name(s->coll), ctx->size, lo, hi);
    for (int c = 0; c < lp->ncand && used < sizeof line; c++) {
        xchg_params_format(&xchg_algos[lp->cand[c].algo], &lp->cand[c].params, text, sizeof text);
        if (lp->cand[c].measured > 0 && lp->cand[c].predicted > 0)
            used += (size_t)snprintf(line + used, sizeof line - used, " %s[%s] %.2fus (priced "
                                     "%.2fus)%s", xchg_algos[lp->cand[c].algo].name, text,
                                     lp->cand[c].measured * 1e6, lp->cand[c].predicted * 1e6,
                                     c + 1 < lp->ncand ? "," : "");
        else if (lp->cand[c].measured > 0)
            used += (size_t)snprintf(line + used, sizeof line - used, " %s[%s] %.2fus%s",
                                     xchg_algos[lp->cand[c].algo].name, text,
                                     lp->cand[c].measured * 1e6, c + 1 < lp->ncand ? "," : "");
        else if (lp->cand[c].predicted > 0)
            used += (size_t)snprintf(line + used, sizeof line - used, " %s[%s] not run (priced "
                                     "%.2fus)%s", xchg_algos[lp->cand[c].algo].name, text,
                                     lp->cand[c].predicted * 1e6, c + 1 < lp->ncand ? "," : "");
        else
            used += (size_t)snprintf(line + used, sizeof line - used, " %s[%s] not run (unpriced)%s",
                                     xchg_algos[lp->cand[c].algo].name, text,
                                     c + 1 < lp->ncand ? "," : "");
    }
    xchg_params_format(&xchg_algos[lp->cand[winner].algo], &lp->cand[winner].params, text,
                       sizeof text);
    if (lp->sync_s > 0 && used < sizeof line) /* across machines: what a probe paid besides */
        snprintf(line + used, sizeof line - used, " (agreement %.2fus, barrier %.2fus)",
                 lp->agree_s * 1e6, lp->sync_s * 1e6);
    fprintf(stderr, "%s -> %s [%s]\n", line, xchg_algos[lp->cand[winner].algo].name, text);
    fflush(stderr);
}

static void announce_drift(const xchg_ctx_t *ctx, const xchg_shape_t *s, double seconds,
                           int winner, double winner_s, double rival_s)
{
    size_t lo, hi;
    xchg_bucket_range(s->bucket, &lo, &hi);
    fprintf(stderr,
            "xchg: watch %s p=%d block=%zu-%zu: %s now %.2fus (learned at %.2fus, the other "
            "side's best %.2fus) -> learn again\n",
            xchg_coll_name(s->coll), ctx->size, lo, hi, xchg_algos[s->lp.cand[winner].algo].name,
            seconds * 1e6, winner_s * 1e6, rival_s * 1e6);
    fflush(stderr);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t to_ns(double seconds)
{
    return seconds > 0 ? (uint64_t)(seconds * 1e9 + 0.5) : 0;
}

/* What an agreement carries besides the calls' times, each agreed as the least of the ranks'
 * own: a rank that arrived early also waited for the others, the last one to arrive waited for
 * no one, so its time is the thing's own. */
typedef struct carried {
    double previous; /* the domain's previous agreement (0 when this is its first) */
    double sync;     /* the barrier that began a timed call since it (across machines; 0 on one
                        machine, where timed calls have none) */
    double round;    /* the probe round's calls after its first (0 for a watch) */
} carried_t;

/* One agreement of the domain: the element-wise maximum of vals[0 .. n-1], with *c carried in
 * the same exchange (in: round, this rank's; out: all three, agreed). Each rank times its own
 * part of this one for the next. */
static int agree(xchg_ctx_t *ctx, uint64_t *vals, int n, carried_t *c)
{
    xchg_learning_t *dom = ctx->shim->learning;
    double began = xchg_learn_clock();
    int rc;

    vals[n] = UINT64_MAX - to_ns(dom->agree_local); /* the maximum of this is the least time */
    vals[n + 1] = UINT64_MAX - to_ns(dom->sync_local);
    vals[n + 2] = UINT64_MAX - to_ns(c->round);
    rc = xchg_agree_max(ctx, vals, n + 3);
    dom->agree_local = xchg_learn_clock() - began;
    dom->sync_local = 0.0;
    c->previous = (UINT64_MAX - vals[n]) * 1e-9;
    c->sync = (UINT64_MAX - vals[n + 1]) * 1e-9;
    c->round = (UINT64_MAX - vals[n + 2]) * 1e-9;
    return rc;
}

/* The agreed times of the timed calls in ngroups groups of counts[g] consecutive samples (file
 * header, timing): agreed[g], the median of group g; *c as agree() says. */
static int agree_time(xchg_ctx_t *ctx, const xchg_shape_t *s, const int *counts, int ngroups,
                      double *agreed, carried_t *c)
{
    double durations[XCHG_LP_AGREED_MAX];
    uint64_t vals[2 * XCHG_LP_AGREED_MAX + 3];
    int rc, n = 0;

    for (int g = 0; g < ngroups; g++)
        n += counts[g];
    if (ctx->one_clock) { /* latest start, latest end of each call */
        for (int k = 0; k < n; k++) {
            vals[2 * k] = to_ns(s->starts[k]);
            vals[2 * k + 1] = to_ns(s->ends[k]);
        }
        rc = agree(ctx, vals, 2 * n, c);
        for (int k = 0; k < n; k++)
            durations[k] = vals[2 * k + 1] > vals[2 * k] ? (vals[2 * k + 1] - vals[2 * k]) * 1e-9
                                                         : 1e-9;
    } else {
        for (int k = 0; k < n; k++) /* the slowest rank's time of each call, from the barrier */
            vals[k] = to_ns(s->ends[k] > s->starts[k] ? s->ends[k] - s->starts[k] : 1e-9);
        rc = agree(ctx, vals, n, c);
        for (int k = 0; k < n; k++)
            durations[k] = vals[k] * 1e-9;
    }
    for (int g = 0, at = 0; g < ngroups; at += counts[g], g++) {
        qsort(durations + at, (size_t)counts[g], sizeof *durations, cmp_double);
        agreed[g] = durations[at + counts[g] / 2];
    }
    return rc;
}

/* A watched call's agreement: the watch's verdict, and a new round when it drifted. */
static int watch_done(xchg_ctx_t *ctx, xchg_shape_t *s)
{
    int winner = s->lp.winner, rc, count = XCHG_LP_SAMPLES;
    double agreed, winner_s = s->lp.winner_s, rival_s = s->lp.rival_s;
    carried_t carried = {0};

    rc = agree_time(ctx, s, &count, 1, &agreed, &carried);
    if (rc != MPI_SUCCESS)
        return rc;
    if (xchg_lp_watch_done(&s->lp, agreed)) {
        ctx->shim->learning->epoch++;
        if (xchg_config.verbose && ctx->rank == 0)
            announce_drift(ctx, s, agreed, winner, winner_s, rival_s);
    }
    return MPI_SUCCESS;
}

int xchg_learn_record(xchg_ctx_t *ctx, int slot, double start, double end)
{
    xchg_learning_t *dom = ctx->shim->learning;
    xchg_shape_t *s = &dom->shapes[slot];
    int probing = s->lp.phase == XCHG_LP_PROBING, rc, k = s->step.sample, winner, groups;
    int counts[2];
    double agreed[2], seconds = end - start;
    carried_t carried = {0};

    if (probing && s->lp.round_calls <= 1) /* the round's first call: not counted */
        s->round_local = 0.0;
    else if (probing)
        s->round_local += end > s->entered ? end - s->entered : 0.0;
    if (!s->step.timed || k < 0 || k >= XCHG_LP_AGREED_MAX)
        return MPI_SUCCESS;
    if (xchg_config.test_skew) /* a different distortion on every rank and candidate */
        seconds *= 1.0 + (double)((ctx->rank * 7 + s->step.cand * 3) % 5);
    if (xchg_config.test_drift && !probing)
        seconds *= TEST_DRIFT_FACTOR;
    s->starts[k] = start;
    s->ends[k] = start + (seconds > 0 ? seconds : 1e-9);
    if (!s->step.agree)
        return MPI_SUCCESS;
    if (!probing)
        return watch_done(ctx, s);
    groups = xchg_lp_agreed_samples(&s->lp, counts);
    for (int g = 0; g < groups; g++)
        counts[g] = counts[g] > 0 ? counts[g] : 1;
    carried.round = s->round_local;
    rc = agree_time(ctx, s, counts, groups, agreed, &carried);
    if (rc != MPI_SUCCESS)
        return rc;
    xchg_lp_probe_done(&s->lp, agreed, carried.previous, carried.sync, carried.round);
    if (s->lp.phase == XCHG_LP_SETTLED) {
        dom->epoch++;
        remember(ctx, s, s->lp.winner);
        if (xchg_config.verbose && ctx->rank == 0)
            announce(ctx, s, "learn", s->lp.winner);
    } else if ((winner = xchg_lp_interim(&s->lp)) >= 0) {
        /* a program that ends before the round does leaves its next run this verdict */
        remember(ctx, s, winner);
        if (xchg_config.verbose && ctx->rank == 0)
            announce(ctx, s, "so far", winner);
    }
    return MPI_SUCCESS;
}

/* The learned table, written as the cache's are (xchg_table_file_write): a program that reads
 * the file meanwhile (XCHG_TUNING of another job) finds the old table or the new one. */
void xchg_learn_write(void)
{
    xchg_table_t table = {0};
    int rc;

    if (!xchg_config.learn_path[0] || xchg_world_rank != 0)
        return;
    pthread_mutex_lock(&learned_lock);
    table.nrules = nlearned;
    table.rules = learned;
    table.has_machine = 1;
    table.machine = xchg_config.machine;
    table.machine.native = NULL;
    rc = xchg_table_file_write(xchg_config.learn_path, &table,
                               "learned by xchg (XCHG_LEARN) during one run", 0644);
    pthread_mutex_unlock(&learned_lock);
    if (rc != 0)
        xchg_warn("XCHG_LEARN=%s: cannot write the learned table (%s)", xchg_config.learn_path,
                  strerror(errno));
}

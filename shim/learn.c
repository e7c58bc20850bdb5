/*
 * learn.c: selection that learns (XCHG_LEARN, on by default).
 *
 * A call shape is (communicator, collective, size bucket, skew class); only shapes that the
 * cost models decide learn (a forced algorithm or a tuning-table rule is obeyed as it is).
 * On the first call of a shape the trial's candidates are fixed: native (always cand[0]) and
 * the models' best XCHG_LEARN_MAX - 1 xchg algorithms for that call, of those predicted
 * within CANDIDATE_SPAN of the best prediction (trying what the model expects to be far
 * slower would cost the program more than it could teach), one of each predicted time, and,
 * while a slot is free, the best one again with one message in flight (add_one_port), then the
 * schedule of fewest start-ups (add_few_rounds: Bruck's index with radix 2 and the circulant
 * concatenation one message at a time, ceil(log2 p) rounds), then the next algorithms in the
 * models' order, each priced within WIDE_SPAN of the best. The last two are there because the
 * built-in models know the machine only by default constants: on the emulated cluster (100
 * Mbit/s links, where a call of 1 B costs 0.3 to 0.5 ms against the models' few
 * microseconds) a verified table ran radix:r=2:k=1 for 1 and 16 B alltoall at 0.69 and 0.74
 * of native and the ring for 4 KiB allgather at 0.47, and learning, timing only what the
 * models ranked within CANDIDATE_SPAN, never tried them (docs/cluster-figures.md). The next
 * ncand * LEARN_ROUNDS calls of the shape run the candidates one after the other, a block of
 * LEARN_ROUNDS calls each (call i runs candidate i div LEARN_ROUNDS); every rank keeps its own
 * times, the first call of a block being a warm-up that is not counted (it pays for the switch
 * from the candidate before). Blocks, not turns: after settling the program runs its winner
 * call after call, and a call can run faster or slower after another algorithm's than after
 * its own (taken in turns, native, A, B, native, A, B, ..., the ring's 64 KiB MPI_Allgather at
 * 2 ranks under MPICH read 15 us in turn with native's and 43 us alone). Blocks do not explain
 * everything: on the emulated cluster Open MPI's 64 KiB alltoall read 84 to 99 ms in trials,
 * in turns and in blocks alike, and 140 to 250 ms in xchg-bench's lines of it, timed from a
 * barrier too. After the last of them the ranks agree on the slowest rank's median time and
 * second slowest counted call per candidate (one xchg_agree_max of 2 x ncand values: the
 * collective is as slow as its slowest rank, and a median is not fooled by one lucky call)
 * and settle: the fastest of the xchg candidates whose median beats native's by LEARN_MARGIN
 * and whose second slowest counted call beats native's median (4 of its 5 calls do) wins,
 * else native. The following calls of the shape run the winner; after RELEARN_FIRST of them the
 * shape is learned again (the load on a machine changes, and a trial taken under a burst of
 * noise may have settled wrong), and every further trial waits RELEARN_GROWTH times longer, so
 * a wrong choice lasts at most RELEARN_FIRST calls and a right one costs less and less. A
 * close call (an xchg winner with native within LEARN_TOSSUP of it) waits as long: its verdict
 * was confirmed (below), and where the machine's state turns the order (shm against Open
 * MPI's single-copy alltoall at 64 KiB on 8 ranks read 250 to 865 us from one minute to the
 * next on the shared VM) the watch (below) sees its winner become slower than native was.
 * Before the confirmation and the watch, close calls were learned again every RELEARN_FIRST
 * calls, every time: 36 trial calls, most of them of other candidates, in every 164 calls of
 * such a shape.
 *
 * A close verdict is confirmed before it stands: when an xchg candidate wins with native within
 * LEARN_TOSSUP of it, that winner and then native run one more block each (the winner first,
 * so that load that drifts over the trial and its confirmation does not favour one side), and
 * the ranks agree on those calls' times (one more reduction of 4 values); the winner keeps the
 * shape only if it beats native by the same rules on them (a watched floor, below, included),
 * else native takes it. Where
 * the two tie and the calls scatter (8 ranks on 2 cores: single calls of one collective 20 to
 * 60 us apart), one trial's 5 calls pass the rules by luck often enough that every run had a
 * cell or two where an xchg algorithm that ties native ran 5 to 10 % slower than it in the
 * program's own calls; two independent passes are needed now. A clear win (native slower by
 * LEARN_TOSSUP or more) settles at once.
 *
 * A candidate LEARN_FAR times slower than the winner is not timed again in the next trial: its
 * agreed times stand (far_ns) and its block runs the winner; each trial decides anew which
 * candidates are far, from agreed values.
 *
 * The watch: a settled shape's winner is timed on one call in watch_every (WATCH_FIRST, about
 * doubled after every check that found nothing, up to WATCH_MAX; odd, so that the timed calls
 * do not lock onto a cycle of the program or of xchg, such as alltoallv's carrying call, one in
 * 8); after XCHG_LEARN_SAMPLES timed calls the ranks agree on the slowest rank's median of them
 * (one xchg_agree_max of one value). When the winner has become WATCH_DRIFT times slower than
 * in its trial and slower than the other side's best was there, the shape is learned again from
 * the next call: a choice that the machine made slow (shm at 64 KiB on the VM above) is left
 * within a few hundred calls, however clear its win was when it was learned. The watched median
 * then stands as that candidate's least time in the next FLOOR_TRIALS trials: a trial's few
 * calls can still read faster than what the program then sees, over hundreds of calls, and
 * the shape must not swing back at once.
 * A timed call costs two clock reads and the slower path through selection; the check one
 * reduction every 85 to 1285 calls. MPI_Alltoallv is decided from an earlier call's statistics,
 * so a watched call carries its own, and its time counts only when they show it was the shape
 * it was decided as (shim/normalize.c); a native MPI_Alltoallv carries none and is not watched.
 *
 * Timing: every timed call (a trial's, a watched one) starts after a barrier of the
 * communicator (xchg_learn_start), and each rank times it from there to its own end: so the
 * ranks start together, and the slowest rank's time is the call's own, not what the ranks'
 * arrival did to it. Timed from each rank's own arrival instead, consecutive calls overlap
 * where the program calls them back to back: on the emulated cluster (Open MPI, 8 ranks,
 * 3,2,2,1 nodes, 100 Mbit/s) native's 64 KiB alltoall then read 88 to 96 ms in trials, and 127
 * to 161 ms in xchg-bench's lines, which time from a barrier; pairwise:k=1 read 88 to 98 in
 * trials and 85 to 87 in the lines, and one trial of two settled on native.
 *
 * Consistency: a trial lives in the communicator's context and advances only with that
 * communicator's calls, which every rank makes in the same order; the candidates come from
 * the call's shape (equal on all ranks) and the winner from agreed values. So every rank runs
 * the same algorithm at every call, whatever its own clock says (XCHG_TEST_SKEW_TIMES=1 distorts
 * each rank's clock differently to test exactly that).
 *
 * With XCHG_VERBOSE=1 rank 0 of the communicator prints what was tried and what won; with
 * XCHG_LEARN=FILE world rank 0 writes the settled shapes of its communicators as a tuning
 * table at MPI_Finalize (one rule per communicator size and bucket, the latest trial's winner).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "../tuning/table_write.h"

#define LEARN_ROUNDS (1 + XCHG_LEARN_SAMPLES) /* calls per candidate, the first a warm-up */
#define LEARN_MARGIN 0.95      /* an xchg candidate must take less than this times native's time */
#define RELEARN_FIRST 128      /* calls of a settled shape before it is learned again, */
#define RELEARN_GROWTH 8       /* times this after every further trial, */
#define RELEARN_MAX (1u << 21) /* up to this */
#define LEARNED_MAX 256        /* settled shapes remembered for XCHG_LEARN=FILE */
#define CANDIDATE_SPAN 2.0     /* candidates: predicted within this factor of the best prediction */
#define WIDE_SPAN 4.0          /* free slots: other schedules predicted within this factor */
#define LEARN_TOSSUP 1.25      /* an xchg winner less than this much faster than native is
                                  confirmed by one more block of each before it stands */
#define LEARN_FAR 8.0          /* a candidate this many times slower than the winner is not timed
                                  again in the next trial: its last times are reused */
#define WATCH_FIRST 17         /* a settled winner is timed every this many calls, */
#define WATCH_MAX 257          /* 2 n - 1 after every check that found it as fast, up to this */
#define FLOOR_TRIALS 4         /* trials in which a drifted winner's watched time stands */
#define WATCH_DRIFT 1.25       /* learned again when it became this many times slower than in
                                  its trial, and slower than the other side's best was */
#define TEST_DRIFT_FACTOR 100.0 /* XCHG_TEST_DRIFT=1: watched times are taken this many times */
#define TEST_CLOSE_NATIVE 100e-6 /* XCHG_TEST_CLOSE=1: a trial's native calls and every call of a */
#define TEST_CLOSE_OTHER 90e-6   /* confirmation read this, the trial's other calls this */

static xchg_rule_t learned[LEARNED_MAX];
static int nlearned;
static pthread_mutex_t learned_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slot of a shape: found, or a new trial with its candidates. */
static int trial_is(const xchg_trial_t *t, int coll, unsigned bucket, unsigned skew)
{
    return t->used && t->coll == coll && t->bucket == bucket && t->skew == skew;
}

/* Whether c is a candidate of t already: the same algorithm and parameters, or priced exactly
 * as one taken already, which is the same schedule to the models (hier on one node is
 * pairwise: trying both only gives noise a second chance). Not so for shared memory against
 * messages (at p = 2 shm and pairwise price alike). */
static int taken(const xchg_trial_t *t, const xchg_choice_t *c)
{
    for (int i = 1; i < t->ncand; i++) {
        const xchg_choice_t *o = &t->cand[i];
        if (o->algo == c->algo && o->params.radix == c->params.radix &&
            o->params.nports == c->params.nports)
            return 1;
        if (o->time == c->time &&
            xchg_algos[o->algo].shared_memory == xchg_algos[c->algo].shared_memory)
            return 1;
    }
    return 0;
}

/* Add c, priced with its parameters as given, when a slot is free, the model keeps them, it
 * is within span times the best prediction, and not taken already. */
static void add_priced(const xchg_call_t *call, xchg_trial_t *t, xchg_choice_t c, double best_time,
                       double span)
{
    xchg_params_t given = c.params;
    const char *why;

    if (t->ncand >= XCHG_LEARN_MAX || c.algo < 0 || !xchg_algo_impl(c.algo) ||
        !xchg_algos[c.algo].applies(call, &c.params, &why))
        return;
    c.params = given;
    c.time = xchg_algos[c.algo].cost(call, &xchg_config.machine, &c.params);
    if (!(c.time <= span * best_time) || c.params.nports != given.nports ||
        (given.radix && c.params.radix != given.radix) || taken(t, &c))
        return;
    t->cand[t->ncand++] = c;
}

/* The best xchg candidate with one message in flight (k=1), when it has more and a slot is
 * free: the port count is where the models know least (how many messages a node's link or the
 * scheduler really carries at once; on links that serialize, all at once loses to one by one),
 * so the trial also times the one-port schedule when it is priced within CANDIDATE_SPAN. */
static void add_one_port(const xchg_call_t *call, xchg_trial_t *t, double best_time)
{
    xchg_choice_t one;

    if (t->ncand < 2 || t->cand[1].params.nports <= 1)
        return;
    one = t->cand[1];
    one.params.nports = 1;
    add_priced(call, t, one, best_time, CANDIDATE_SPAN);
}

/* The schedule of fewest start-ups, one message at a time (file header): where a start-up
 * costs far more than the models' default beta, it is what wins the small blocks. */
static void add_few_rounds(const xchg_call_t *call, xchg_trial_t *t, double best_time)
{
    xchg_choice_t c = {-1, {0}, 0.0};

    if (call->coll == XCHG_ALLTOALL) {
        c.algo = xchg_algo_find(XCHG_ALLTOALL, "radix");
        c.params.radix = 2;
    } else if (call->coll == XCHG_ALLGATHER) {
        c.algo = xchg_algo_find(XCHG_ALLGATHER, "circulant");
    }
    c.params.nports = 1;
    add_priced(call, t, c, best_time, WIDE_SPAN);
}

static xchg_trial_t *trial_for(xchg_shim_state_t *state, const xchg_call_t *call, unsigned bucket,
                               unsigned skew, int *hint)
{
    xchg_choice_t ranked[XCHG_MAX_ALGOS];
    int n, native;
    xchg_trial_t *t;

    if (*hint >= 0 && trial_is(&state->trials[*hint], call->coll, bucket, skew))
        return &state->trials[*hint];
    for (int i = 0; i < XCHG_TRIALS; i++) {
        if (trial_is(&state->trials[i], call->coll, bucket, skew)) {
            *hint = i;
            return &state->trials[i];
        }
    }
    native = xchg_algo_find(call->coll, "native");
    state->epoch++; /* a new trial (and perhaps an evicted one): memorised choices are void */
    *hint = state->next_trial;
    t = &state->trials[state->next_trial];
    state->next_trial = (state->next_trial + 1) % XCHG_TRIALS;
    memset(t, 0, sizeof *t);
    t->used = 1;
    t->coll = call->coll;
    t->bucket = bucket;
    t->skew = skew;
    t->cand[0] = (xchg_choice_t){native, {0}, 0.0};
    t->ncand = 1;
    n = xchg_model_rank(call, ranked, XCHG_MAX_ALGOS);
    for (int i = 0; i < n && t->ncand < XCHG_LEARN_MAX; i++)
        if (ranked[i].algo != native && !taken(t, &ranked[i]) &&
            ranked[i].time <= CANDIDATE_SPAN * ranked[0].time)
            t->cand[t->ncand++] = ranked[i];
    add_one_port(call, t, ranked[0].time);
    add_few_rounds(call, t, ranked[0].time);
    for (int i = 0; i < n; i++) { /* other algorithms, within WIDE_SPAN */
        int have = ranked[i].algo == native;
        for (int c = 1; c < t->ncand; c++)
            have |= t->cand[c].algo == ranked[i].algo;
        if (!have)
            add_priced(call, t, ranked[i], ranked[0].time, WIDE_SPAN);
    }
    t->settled = t->ncand == 1;
    return t;
}

/* The candidate whose block the trial's next call is in: cand[calls div LEARN_ROUNDS]; in a
 * confirmation the provisional winner's block, then native's. */
static int block_cand(const xchg_trial_t *t)
{
    int block = t->calls / LEARN_ROUNDS;
    if (t->confirming)
        return block == 0 ? t->winner : 0;
    return block;
}

int xchg_learn_pick(xchg_ctx_t *ctx, const xchg_call_t *call, xchg_choice_t *choice, int *hint)
{
    xchg_shim_state_t *state = xchg_shim_state(ctx);
    unsigned bucket = xchg_bucket(call->block_bytes);
    unsigned skew = xchg_skew_class(call);
    xchg_trial_t *t;
    int c;

    if (!state)
        return -1;
    t = trial_for(state, call, bucket, skew, hint);
    if (t->settled) {
        int tick = xchg_learn_tick(ctx, *hint);
        if (tick != XCHG_TICK_RELEARN) {
            *choice = t->cand[t->winner];
            return tick == XCHG_TICK_WATCH ? *hint : -1;
        }
    }
    /* a far candidate's calls run the winner: timing it again would cost more than it could
     * teach (native's 64 KiB alltoall at 8 ranks on 2 cores under MPICH: 110 ms a call, the
     * winner's under 1 ms) */
    c = block_cand(t);
    *choice = !t->confirming && t->far_ns[c][0] ? t->cand[t->winner] : t->cand[c];
    return (int)(t - state->trials);
}

double xchg_learn_start(xchg_ctx_t *ctx)
{
    /* the barrier: a dissemination of nothing through xchg's rounds, which wait as the context
     * does (yielding on an oversubscribed node, where MPICH's own barrier polls for tens of
     * milliseconds); its failure would show in the call itself */
    uint64_t nothing = 0;
    (void)xchg_agree_max(ctx, &nothing, 1);
    return PMPI_Wtime();
}

/* Learn the shape again from the next call: the same candidates, fresh samples. */
static void learn_again(xchg_ctx_t *ctx, xchg_trial_t *t)
{
    t->settled = 0;
    t->confirming = 0;
    t->calls = 0;
    memset(t->ns, 0, sizeof t->ns);
    ctx->shim->epoch++;
}

int xchg_learn_tick(xchg_ctx_t *ctx, int slot)
{
    xchg_trial_t *t = &ctx->shim->trials[slot];
    if (--t->countdown == 0) {
        learn_again(ctx, t);
        return XCHG_TICK_RELEARN;
    }
    if (t->watch_every == 0 || --t->watch_in > 0)
        return XCHG_TICK_ON;
    t->watch_in = t->watch_every;
    return XCHG_TICK_WATCH;
}

/* Remember a settled shape for XCHG_LEARN=FILE. */
static void remember(const xchg_trial_t *t, int p)
{
    xchg_rule_t rule = {0};
    if (!xchg_config.learn_path[0])
        return;
    rule.coll = t->coll;
    rule.pmin = rule.pmax = p;
    xchg_bucket_range(t->bucket, &rule.bmin, &rule.bmax);
    rule.algo = t->cand[t->winner].algo;
    rule.params = t->cand[t->winner].params;
    pthread_mutex_lock(&learned_lock);
    for (int i = 0; i < nlearned; i++) {
        if (learned[i].coll == rule.coll && learned[i].pmin == p && learned[i].bmin == rule.bmin) {
            learned[i] = rule; /* learned again: the latest trial stands */
            goto out;
        }
    }
    if (nlearned < LEARNED_MAX)
        learned[nlearned++] = rule;
out:
    pthread_mutex_unlock(&learned_lock);
}

/* floored: the candidate whose times are the watch's (settle), or -1; reused: the candidates
 * (bits) whose times are the last trial's */
static void announce(const xchg_ctx_t *ctx, const xchg_trial_t *t, const uint64_t *agreed,
                     int floored, int reused)
{
    const char *label = t->confirming ? "confirm against native:" : "->";
    char line[1024], text[128];
    size_t used, lo, hi;

    xchg_bucket_range(t->bucket, &lo, &hi);
    used = (size_t)snprintf(line, sizeof line,
                            "xchg: learn %s p=%d block=%zu-%zu:", xchg_coll_name(t->coll),
                            ctx->size, lo, hi);
    for (int c = 0; c < t->ncand && used < sizeof line; c++) {
        xchg_params_format(&xchg_algos[t->cand[c].algo], &t->cand[c].params, text, sizeof text);
        used += (size_t)snprintf(line + used, sizeof line - used,
                                 " %s[%s] %.2fus (second slowest %.2fus%s)%s",
                                 xchg_algos[t->cand[c].algo].name, text, agreed[c] / 1e3,
                                 agreed[t->ncand + c] / 1e3,
                                 c == floored          ? ", at least as watched"
                                 : reused & (1 << c) ? ", as last timed"
                                                       : "",
                                 c + 1 < t->ncand ? "," : "");
    }
    xchg_params_format(&xchg_algos[t->cand[t->winner].algo], &t->cand[t->winner].params, text,
                       sizeof text);
    fprintf(stderr, "%s %s %s [%s]", line, label, xchg_algos[t->cand[t->winner].algo].name,
            text);
    fputc('\n', stderr);
    fflush(stderr);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The medians (agreed[c]) and second slowest calls (agreed[ncand + c]) of the ncand
 * candidates: t->ns[c][0..n-1] of every timed candidate agreed over the ranks (the slowest
 * rank's), in one reduction. */
static int agree_times(xchg_ctx_t *ctx, xchg_trial_t *t, uint64_t *agreed)
{
    for (int c = 0; c < t->ncand; c++) {
        qsort(t->ns[c], XCHG_LEARN_SAMPLES, sizeof t->ns[c][0], cmp_u64);
        agreed[c] = t->ns[c][XCHG_LEARN_SAMPLES / 2];
        agreed[t->ncand + c] = t->ns[c][XCHG_LEARN_SAMPLES - 2];
    }
    return xchg_agree_max(ctx, agreed, 2 * t->ncand);
}

/* A drifted winner's steady time, as the watch saw it, as candidate c's least time while its
 * FLOOR_TRIALS last (median and second slowest call). */
static void apply_floor(const xchg_trial_t *t, int c, uint64_t *median, uint64_t *second)
{
    if (t->floor_trials <= 0 || c != t->floor_cand)
        return;
    *median = *median > t->floor_ns ? *median : t->floor_ns;
    *second = *second > t->floor_ns ? *second : t->floor_ns;
}

/* Whether candidate c beats native by the rules (settle): its median below LEARN_MARGIN times
 * native's, and its second slowest counted call below native's median. */
static int beats_native(const xchg_trial_t *t, const uint64_t *agreed, int c)
{
    return (double)agreed[c] < LEARN_MARGIN * (double)agreed[0] && agreed[t->ncand + c] < agreed[0];
}

/* Settle on t->winner from the agreed times: how soon the shape is learned again, which
 * candidates are far, whether and how the winner is watched (file header). */
static void settle_on(xchg_ctx_t *ctx, xchg_trial_t *t, const uint64_t *agreed)
{
    int best = 0, rival;

    for (int c = 1; c < t->ncand; c++)
        if (best == 0 || agreed[c] < agreed[best])
            best = c;
    t->settled = 1;
    t->confirming = 0;
    if (t->floor_trials > 0)
        t->floor_trials--;
    for (int c = 0; c < t->ncand; c++) {
        int far = c != t->winner && (double)agreed[c] > LEARN_FAR * (double)agreed[t->winner];
        t->far_ns[c][0] = far ? agreed[c] : 0;
        t->far_ns[c][1] = far ? agreed[t->ncand + c] : 0;
    }
    rival = t->winner > 0 ? 0 : best;
    t->relearn = t->relearn == 0                              ? RELEARN_FIRST
                 : t->relearn >= RELEARN_MAX / RELEARN_GROWTH ? RELEARN_MAX
                                                              : t->relearn * RELEARN_GROWTH;
    t->countdown = t->relearn;
    t->winner_ns = agreed[t->winner];
    t->rival_ns = agreed[rival];
    /* not watched: native alone (nothing to flip to), and native for MPI_Alltoallv, which
     * carries no statistics: a call of it cannot tell its own shape (shim/normalize.c) */
    t->watch_every = rival == t->winner || (t->coll == XCHG_ALLTOALLV && t->winner == 0) ? 0
                     : t->watch_every == 0                                            ? WATCH_FIRST
                                                                                      : t->watch_every;
    t->watch_in = t->watch_every;
    t->nwatch = 0;
    ctx->shim->epoch++;
    remember(t, ctx->size);
}

/* The trial's last call ran: agree on the slowest rank's median and second slowest counted
 * call per candidate (one reduction of 2 x ncand values) and settle. The median (not the
 * minimum) keeps one lucky call from deciding; an xchg candidate wins only if its median
 * beats native's by LEARN_MARGIN and its second slowest counted call beats native's median
 * too (the fastest such one), so that where every candidate is as fast as native and the calls
 * scatter (more ranks than cores, where the scheduler sets the time) a lucky median does not
 * take the shape off native, while one outlier call of a faster candidate does not keep it
 * out. A close verdict (native within LEARN_TOSSUP of the xchg winner) is confirmed first
 * (confirm). */
static int settle(xchg_ctx_t *ctx, xchg_trial_t *t)
{
    uint64_t agreed[2 * XCHG_LEARN_MAX]; /* medians, then second slowest calls */
    int rc, floored = -1, reused = 0;

    rc = agree_times(ctx, t, agreed);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int c = 0; c < t->ncand; c++) { /* far candidates: their last times (agreed then) */
        if (t->far_ns[c][0]) {
            reused |= 1 << c;
            agreed[c] = t->far_ns[c][0];
            agreed[t->ncand + c] = t->far_ns[c][1];
        }
    }
    if (t->floor_trials > 0) { /* a drifted winner: its steady time as seen by the watch */
        floored = t->floor_cand;
        apply_floor(t, floored, &agreed[floored], &agreed[t->ncand + floored]);
    }
    /* the winner: the fastest of the xchg candidates that beat native by the rules (one whose
     * median is best but whose calls scatter does not hide one that passes) */
    t->winner = 0;
    for (int c = 1; c < t->ncand; c++)
        if (beats_native(t, agreed, c) && (t->winner == 0 || agreed[c] < agreed[t->winner]))
            t->winner = c;
    if (t->winner > 0 && (double)agreed[0] < LEARN_TOSSUP * (double)agreed[t->winner]) {
        t->confirming = 1; /* t->winner is the provisional winner meanwhile */
        t->calls = 0;
        memcpy(t->trial_ns, agreed, sizeof agreed);
    } else {
        settle_on(ctx, t, agreed);
    }
    if (xchg_config.verbose && ctx->rank == 0)
        announce(ctx, t, agreed, floored, reused);
    return MPI_SUCCESS;
}

/* The confirmation's last call ran (a block of the provisional winner, then one of native), so
 * a verdict that a few lucky calls gave, where the two tie and the calls scatter, must come
 * out again from calls of their own: the winner keeps the shape only if it beats native by
 * the same rules on them, else native does. Their agreed times replace the trial's for the
 * two (a drifted winner's watched floor still stands). */
static int confirm(xchg_ctx_t *ctx, xchg_trial_t *t)
{
    int w = t->winner, rc;
    xchg_trial_t two = {.ncand = 2};
    uint64_t got[4], *agreed = t->trial_ns;

    memcpy(two.ns[0], t->ns[0], sizeof two.ns[0]);
    memcpy(two.ns[1], t->ns[w], sizeof two.ns[1]);
    rc = agree_times(ctx, &two, got);
    if (rc != MPI_SUCCESS)
        return rc;
    apply_floor(t, w, &got[1], &got[3]);
    t->winner = beats_native(&two, got, 1) ? w : 0;
    agreed[0] = got[0];
    agreed[w] = got[1];
    agreed[t->ncand] = got[2];
    agreed[t->ncand + w] = got[3];
    settle_on(ctx, t, agreed);
    if (xchg_config.verbose && ctx->rank == 0) {
        char text[128];
        size_t lo, hi;
        xchg_bucket_range(t->bucket, &lo, &hi);
        xchg_params_format(&xchg_algos[t->cand[w].algo], &t->cand[w].params, text, sizeof text);
        fprintf(stderr,
                "xchg: confirm %s p=%d block=%zu-%zu: native %.2fus (second slowest %.2fus), "
                "%s[%s] %.2fus (second slowest %.2fus) -> %s\n",
                xchg_coll_name(t->coll), ctx->size, lo, hi, got[0] / 1e3, got[2] / 1e3,
                xchg_algos[t->cand[w].algo].name, text, got[1] / 1e3, got[3] / 1e3,
                t->winner ? "confirmed" : "native");
        fflush(stderr);
    }
    return MPI_SUCCESS;
}

/* A watched call's time (ns): after XCHG_LEARN_SAMPLES of them, agree on the slowest rank's
 * median and learn the shape again when its winner drifted (file header, the watch). */
static int watch_record(xchg_ctx_t *ctx, xchg_trial_t *t, uint64_t ns)
{
    uint64_t median;
    int rc, drift;

    t->watch_ns[t->nwatch++] = ns;
    if (t->nwatch < XCHG_LEARN_SAMPLES)
        return MPI_SUCCESS;
    t->nwatch = 0;
    qsort(t->watch_ns, XCHG_LEARN_SAMPLES, sizeof t->watch_ns[0], cmp_u64);
    median = t->watch_ns[XCHG_LEARN_SAMPLES / 2];
    rc = xchg_agree_max(ctx, &median, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    drift = (double)median > WATCH_DRIFT * (double)t->winner_ns && median > t->rival_ns;
    if (!drift) {
        t->watch_every = t->watch_every >= (WATCH_MAX + 1) / 2 ? WATCH_MAX : 2 * t->watch_every - 1;
        t->watch_in = t->watch_every;
        return MPI_SUCCESS;
    }
    if (xchg_config.verbose && ctx->rank == 0) {
        size_t lo, hi;
        xchg_bucket_range(t->bucket, &lo, &hi);
        fprintf(stderr,
                "xchg: watch %s p=%d block=%zu-%zu: %s now %.2fus (learned at %.2fus, the other "
                "side's best %.2fus) -> learn again\n",
                xchg_coll_name(t->coll), ctx->size, lo, hi, xchg_algos[t->cand[t->winner].algo].name,
                median / 1e3, t->winner_ns / 1e3, t->rival_ns / 1e3);
        fflush(stderr);
    }
    t->relearn = 0; /* the next trial is followed soon by another */
    t->watch_every = WATCH_FIRST;
    t->floor_cand = t->winner;
    t->floor_ns = median;
    t->floor_trials = FLOOR_TRIALS;
    learn_again(ctx, t);
    return MPI_SUCCESS;
}

int xchg_learn_record(xchg_ctx_t *ctx, int trial, double seconds)
{
    xchg_trial_t *t = &ctx->shim->trials[trial];
    int c = t->settled ? t->winner : block_cand(t), sample = t->calls % LEARN_ROUNDS - 1;
    uint64_t ns;

    if (xchg_config.test_skew) /* a different distortion on every rank and candidate */
        seconds *= 1.0 + (double)((ctx->rank * 7 + c * 3) % 5);
    if (xchg_config.test_drift && t->settled)
        seconds *= TEST_DRIFT_FACTOR;
    if (xchg_config.test_close && !t->settled)
        seconds = c == 0 || t->confirming ? TEST_CLOSE_NATIVE : TEST_CLOSE_OTHER;
    ns = seconds > 0 ? (uint64_t)(seconds * 1e9) + 1 : 1;
    if (t->settled) /* a watched call of the settled winner */
        return watch_record(ctx, t, seconds >= 0 ? ns : UINT64_MAX / 2);
    /* the first call of a block is its warm-up; a far candidate's block ran the winner */
    if (sample >= 0 && (t->confirming || !t->far_ns[c][0]))
        t->ns[c][sample] = seconds >= 0 ? ns : UINT64_MAX / 2;
    t->calls++;
    if (t->confirming)
        return t->calls < 2 * LEARN_ROUNDS ? MPI_SUCCESS : confirm(ctx, t);
    return t->calls < t->ncand * LEARN_ROUNDS ? MPI_SUCCESS : settle(ctx, t);
}

void xchg_learn_write(void)
{
    xchg_table_t table = {0};
    FILE *out;

    if (!xchg_config.learn_path[0] || xchg_world_rank != 0)
        return;
    out = fopen(xchg_config.learn_path, "w");
    if (!out) {
        xchg_warn("XCHG_LEARN=%s: cannot write the learned table", xchg_config.learn_path);
        return;
    }
    pthread_mutex_lock(&learned_lock);
    table.nrules = nlearned;
    table.rules = learned;
    table.has_machine = 1;
    table.machine = xchg_config.machine;
    table.machine.native = NULL;
    table.native = xchg_config.table.native; /* the loaded table's native curves, kept */
    if (xchg_table_write(out, &table, "learned by xchg (XCHG_LEARN) during one run") != 0)
        xchg_warn("XCHG_LEARN=%s: writing failed", xchg_config.learn_path);
    pthread_mutex_unlock(&learned_lock);
    if (fclose(out) != 0)
        xchg_warn("XCHG_LEARN=%s: writing failed", xchg_config.learn_path);
}

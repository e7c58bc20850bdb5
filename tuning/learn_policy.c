/*
 * learn_policy.c: learning's decisions (learn_policy.h), pure: no MPI and no clock. Every input
 * is a value the ranks agreed (shim/learn.c), so every rank takes the same path. This header
 * states the rules and why; the measurements behind them are in docs/design.md, "Learning".
 *
 * A shape is in one of two phases:
 *
 *   PROBING  a round of probes. A probe is probe_warmup untimed calls and a few timed ones of
 *            one candidate; after its last call the ranks agree on its time
 *            (xchg_lp_probe_done), and next_probe picks the following one or settles.
 *   SETTLED  every call runs the winner. One call in watch_every is timed; XCHG_LP_SAMPLES of
 *            them make a watch check (xchg_lp_watch_done), and a drift starts a new round.
 *            After countdown calls a new round starts anyway, each later one relearn_growth
 *            times later, up to relearn_max.
 *
 * A shape starts in a round (xchg_lp_start), or settled without one: on a stored verdict
 * (xchg_lp_start_known), on a choice the models are sure of (xchg_lp_start_sure), or on native
 * where they see a close tie of cheap calls, or of dear ones across nodes (xchg_lp_start_tie);
 * these make their first round after relearn_known, relearn_first, tie_after or tie_dear_after
 * calls.
 *
 * The rules of a round:
 *  - Order. The round's first probe runs what the call would run anyway: the models' choice, or
 *    the winner when relearning. Native comes next: it is the reference every xchg candidate
 *    must beat. The others follow by expected time.
 *  - Expected time. A candidate's prediction times the geometric mean of measured / predicted
 *    over the probed candidates of its kind (messages, or copies through shared memory: the two
 *    kinds' models rest on different constants), else over native. The models rank algorithms
 *    of one kind far better than they price them. A gain that only native's scale promises is
 *    not counted (kind_measured): native's model is another algorithm's.
 *  - Samples. Timed calls per probe fall with the call's cost (samples_for): a cheap call
 *    scatters by its own size and its samples are cheap; from dear_s up one call is a sample
 *    worth its cost and needs no warm-up (but the shape's very first call, which pays for what
 *    the program's buffers and the library set up once).
 *  - Skips. A candidate expected at hopeless times the best measured is not probed, nor one
 *    whose expected cost overruns the allowance.
 *  - The allowance (allowance(), cost_so_far()). Over a shape's first budget_calls calls,
 *    probing may cost budget_share of that many calls of the reference, the better of native
 *    and the models' choice as measured. It is paced: a probe may spend only the share of the
 *    calls made by its end, so a shape made a handful of times is not spent on a third
 *    candidate. A probe's cost is its calls' excess over the reference, its agreement (measured
 *    and carried by the next one) and, across machines, the barrier of each timed call; or the
 *    round's calls as timed whole, where that says more (the medians leave out warm-ups and slow
 *    calls). The round's first probe is not exploration: its calls are not counted, only its
 *    barriers; but for a dear tie's (below). A first round that the allowance cut short is followed
 *    by a second after budget_calls calls.
 *  - Native's probe (fit_native). Probed in every round, after native_warmup untimed calls
 *    (the MPI library sets a communicator up in its first calls), with the timed calls the
 *    allowance pays for. Expected at more than twice the best, or with the allowance spent, it
 *    is timed by one call: with no warm-up where the call is dear or in the shape's first round
 *    (a verdict against such a cold call of a cheap one is checked again after recheck_cold
 *    calls), else after native_warmup untimed calls.
 *  - The chain (chain_worth, chain_native). Where the first probe is expected cheaper than
 *    dear_s and native is priced within chain_within of it, one agreement covers both: for the
 *    smallest calls an agreement costs more than a probe's calls. Where native is priced further
 *    off, the first's agreement stays, because its measured time sizes native's probe.
 *  - Set-up (waits()). A candidate whose first call makes or grows the node's shared segment to
 *    a large size pays a one-time cost that no timed call sees; it waits until the shape's
 *    setup_after-th call, and a stored verdict for it runs native until then.
 *
 * Settling: the fastest probed candidate wins, an xchg one only below margin times native
 * (settle(), verdict()). A new round forgets the times but for candidates far slower than the
 * winner (relearn()).
 *
 * Ties (xchg_lp_start_tie). Where the models see no clear win, the selection runs native and
 * the models' best xchg candidate is priced within XCHG_MODEL_MARGIN of it. Such a candidate may
 * gain that margin or lose as much, and a round pays for its probes before it knows; a shape
 * that the program makes a handful of times cannot pay them back.
 *  - A close tie (the candidate priced at tie_close times native or more: a gain of at most
 *    what a round costs a short-lived shape) of calls cheaper than dear_s runs native,
 *    unwatched, and makes its first round after tie_after calls, once the program has shown
 *    that it repeats the shape (as a sure start does). Started at once, MPICH's MPI_Alltoall of
 *    64 KiB at 2 ranks (native 9 us a call; `pairwise` priced as native) probed `pairwise` or
 *    `shm` first, then native, and its first 15 calls took 1.1 to 1.2 times native's (the
 *    harness's short cells: 1.16 and 1.23 in stops 61 and 62), to settle on native.
 *  - A tie that promises more (stop 55: MPICH's 4 KiB at 2 ranks, `shm` priced 1.41 us against
 *    native's 1.92 on some runs, where native's first calls on a communicator take 7 to 9 us)
 *    and a dear tie (from dear_s up: one of its calls may gain what many cheap ones do) start
 *    their round at once. Its first probe is the best xchg candidate, not what the shape would
 *    run without learning, so its calls' excess over the reference counts against the allowance
 *    once native is measured, as any other probe's does.
 *  - But a close dear tie across nodes whose messages go whole runs native too, unwatched, and
 *    makes its first round after tie_dear_after calls. There a dear call's time is its bytes
 *    through the links, which every candidate moves alike (the models price them within a few
 *    percent of each other), and a round costs about one call of its loser. Emulated cluster
 *    (3,2,2,1 ranks at 100 Mbit/s), before messages between nodes were cut: the integer sort's
 *    4 MPI_Alltoallv of 32 MiB a rank, `pairwise:k=7` priced as native, took 10.2 s a call
 *    against native's 6.3 under MPICH, 6.37 against 7.78 and 6.91 against 6.50 under Open MPI;
 *    the 3D FFT's 20 MPI_Alltoall of 512 KiB blocks (native 0.85 to 0.88 s a call,
 *    `pairwise:k=7` 0.80 to 0.89, `node` 1.23, all priced 0.26) spent a call of its round at
 *    once on `node`. Where the messages are cut (slow links: xchg_cut_inter, algos/round.c),
 *    the candidates move the bytes faster than native does, and a dear tie whose candidate is
 *    priced at tie_cut_s or more is probed at once: the same cluster, MPI_Alltoall of 512 KiB
 *    blocks, `pairwise` (k = 7, the models' first candidate, priced 0.26 s) 0.73 s a call
 *    against native's 0.95 under Open MPI, 0.79 against 1.26 under MPICH; MPI_Alltoallv of 4
 *    MiB blocks under MPICH 6.1 s against 7.6 (stop 82). Cheaper ones still wait: at 64 KiB
 *    blocks (priced 32 ms) `pairwise:k=7`'s calls took 85 to 95 ms or, when TCP lost a segment
 *    and waited out its retransmission timeout, 200 to 600 ms, native's 93 to 140 or 300, so
 *    one timed call of each chose at random: in 4 of 10 short runs of 15 calls the median took
 *    1.5 to 2.1 times native's (docs/results.md, stop 82). On one node the candidates differ
 *    by more than the links (MPICH, 2 ranks, the same sort: `pairwise:k=1` 6.8 ms a call,
 *    native 9.3, both priced 2.3), so there a dear tie is probed at once too.
 *  - A dear tie's warm-up call, the shape's first, runs native (tie_native): that call pays
 *    the one-time costs, the candidate's one timed call follows, then native's one. A dear
 *    shape is one that a program makes a handful of times (an integer sort's 4 MPI_Alltoallv of
 *    32 MiB a rank), and a candidate that loses then costs one of them, not two: on the
 *    emulated cluster (3,2,2,1 ranks, 100 Mbit/s, MPICH) `pairwise` took 10.2 s a call there
 *    against native's 6.3.
 *  - But a dear tie across cut links whose candidate is priced at tie_cold_s or more times it
 *    on the shape's first call, with no warm-up, then native's one call: the winner runs from
 *    the third call, not the fourth. What that first call sets up once (the receive buffer's
 *    pages, the MPI library's connections, TCP's slow start, a lost segment's retransmission
 *    timeout of 0.2 s or more) is counted against the candidate, never for it, and is a small
 *    share of such a call. The integer sort's 4 MPI_Alltoallv of 32 MiB a rank on the emulated
 *    cluster (Open MPI, priced 2.1 s, `pairwise` 5.6 s a call, native 7.0) took 24.75 s
 *    (median of 13 runs) against 26.24 with the warm-up (docs/results.md, stop 83). Below it the
 *    cold call decides too often: the 3D FFT's MPI_Alltoall of 512 KiB blocks (priced 0.26 s,
 *    `pairwise` 0.74 to 0.83 s a call in later rounds, native 0.88 to 0.92) read 0.72, 0.86
 *    and 1.38 s on its cold first call in three traced runs, two of which settled on native
 *    until a later round; 2 of 6 timed runs took 18.2 and 18.3 s against 15.9 to 16.4.
 *
 * The sure start (xchg_lp_sure): native priced at least `sure` times the models' choice, on a
 * call whose busiest rank's bytes cost less than one start-up. There the prices are counts of
 * start-ups, which the models know, and a round is mostly cost for a short-lived shape. Where
 * native's price is its calls' time measured at MPI_Init, `sure_measured` times is enough; and
 * `sure_far` times for calls of more bytes, up to the 4 KiB blocks measured there or, where the
 * machine's per-byte constant changes later, up to blocks of large_from bytes: MPICH's
 * MPI_Alltoall of 4 KiB at 2 ranks took 9 to 13 us a call natively and 1 to 3.5 under `shm`,
 * and a round's native probe (5 calls and an agreement) cost more than the shape's first 40
 * calls under `shm` took.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "cost.h"
#include "learn_policy.h"

const xchg_lp_constants_t xchg_lp_constants = {
    .margin = 0.95,          /* a win below 5 % is within the timing noise of a few calls */
    .budget_share = 0.10,    /* auto may cost at most 10 % more than the better of native and */
    .budget_calls = 40,      /* the models' choice over the first 40 calls of a shape */
    .cheap_s = 30e-6,        /* below this, calls scatter by their own size: 3 samples */
    .dear_s = 1e-3,          /* from a millisecond up, one call is a sample worth its cost */
    .hopeless = 2.0,         /* the models' error between xchg algorithms is tens of percent */
    .far = 4.0,              /* a candidate 4 times slower will not become the fastest */
    .relearn_first = 128,    /* a choice taken under a burst of load lasts at most this long */
    .relearn_growth = 8,     /* and a right one costs less and less */
    .relearn_max = 1u << 21, /* a shape made for hours is still checked now and then */
    .relearn_known = 128,    /* a stored verdict may rest on a round its program cut short or
                              * on another run's load: checked as soon as a fresh one */
    .watch_first = 17,       /* odd: the timed calls do not lock onto a cycle of the program */
    .watch_max = 257,        /* a watch check's agreement, every 4 watched calls, stays a
                              * negligible share of a long-lived shape's calls */
    .drift = 1.25,           /* beyond the scatter of calls of one algorithm over minutes */
    .native_warmup = 2,      /* the MPI library's first calls on a communicator set it up */
    .recheck_cold = 32,      /* soon, yet after a short-lived shape's calls */
    .tie_after = 16,         /* a close tie promises a gain within the models' error, worth a
                              * round in a shape the program repeats (setup_after), not in one it
                              * makes a handful of times (an FFT's 8 transposes) */
    .tie_dear_after = 128,   /* a close dear tie across nodes, messages whole: a round costs
                              * about one call of its loser (the FFT's `node` 1.23 s against
                              * native's 0.85) to gain within the models' error, paid back only
                              * over many calls */
    .tie_cut_s = 0.2,        /* a call priced under one TCP retransmission timeout (Linux's
                              * least, 200 ms) may take several times its price when a segment
                              * is lost: one timed call of each cannot tell them apart */
    .tie_cold_s = 1.0,       /* what a first call sets up (connections, a lost segment's 0.2 s or
                              * more) is a small share of a call priced at a second (taking 3 s
                              * or more); the 3D FFT's, priced 0.26 s (0.55 since one link per
                              * node is priced), took 0.74 to 0.83 s a call, and 0.72 to 1.38 s on
                              * a cold first call */
    .tie_close = 0.90,       /* a gain of 10 %, the allowance's share, is what a round costs a
                              * short-lived shape; a tie that promises more is probed at once */
    .setup_after = 16,       /* a shape made 16 times is one the program repeats: a set-up worth
                              * tens of its calls is paid back */
    .span = 3.0,             /* the models' error between xchg algorithms is tens of percent */
    .dear_link = 2.0,        /* one machine's emulated nodes measure about 1 (start-ups through one
                              * memory); a network's are several times shared memory's */
    .chain_within = 2.0,     /* past twice the first, native's probe is worth sizing by the first's
                              * measured time (fit_native: one cold call) */
    .sure = 2.0,             /* wherever native was priced twice the choice for calls of a few
                              * bytes, the choice measured faster (xchg_lp_sure) */
    .sure_measured = 1.5,    /* native's price measured: the choice's model errs on shared memory
                              * by XCHG_MODEL_MARGIN at most, the margin selection trusts it by */
    .sure_far = 5.0,         /* past a start-up's bytes the shared-memory models priced MPICH's
                              * 4 KiB calls at 2 ranks up to 4 times below their time (`shm`
                              * priced 0.87 us, measured 3.5); blocks up to large_from, where the
                              * models' per-byte constant is tau, as sure (xchg_lp_sure) */
};

#define C xchg_lp_constants

/* c must wait: it needs a set-up, and the shape has made too few calls yet. */
static int waits(const xchg_lp_t *lp, int c)
{
    return lp->cand[c].setup && lp->calls < C.setup_after;
}

/* The best measured time (s) among the probed candidates, or 0 when none is. */
static double best_measured(const xchg_lp_t *lp)
{
    double best = 0.0;
    for (int c = 0; c < lp->ncand; c++)
        if (lp->cand[c].measured > 0 && (best == 0 || lp->cand[c].measured < best))
            best = lp->cand[c].measured;
    return best;
}

/* Exploration's cost so far in this round: the probes' excess, their agreements and the
 * barriers their timed calls began with, as the probes' medians count it; or, where more, as
 * the round's calls took (round_s: warm-up calls and slow calls too, barriers included) beyond
 * that many calls of the reference `ref`. The round's first probe is not counted: it runs what
 * the shape would run without learning, and its first calls pay for what it sets up; its
 * barriers are learning's and stay counted. Asked only after a probe has ended (next_probe,
 * fit_native), so that the first probe's part is known. */
static double cost_so_far(const xchg_lp_t *lp, double ref)
{
    const xchg_lp_cand_t *first = &lp->cand[lp->winner]; /* during a round: its first probe */
    double tie = lp->tie && lp->rounds == 1 && first->measured > ref /* a tie's first: explored */
                     ? (lp->first_calls - lp->tie_native) * (first->measured - ref)
                     : 0.0;
    double counted = lp->spent + tie + lp->agreements * lp->agree_s + lp->synced * lp->sync_s;
    double taken = lp->round_s - lp->first_s - (lp->round_calls - lp->first_calls) * ref + tie +
                   lp->agreements * lp->agree_s + lp->first_synced * lp->sync_s;
    return lp->round_s > 0 && taken > counted ? taken : counted;
}

/* What a probe with `timed` timed calls costs beside its calls' excess. */
static double probe_overhead(const xchg_lp_t *lp, int timed)
{
    return lp->agree_s + timed * lp->sync_s;
}

/* The reference of the allowance: the better of native and the models' choice, as measured
 * (whichever is measured when only one is); 0 before either. */
static double reference(const xchg_lp_t *lp, int first)
{
    double n = lp->cand[0].measured, f = lp->cand[first].measured;
    if (n > 0 && f > 0)
        return n < f ? n : f;
    return n > 0 ? n : f;
}

/* The geometric mean of measured / predicted over the probed xchg candidates (c >= 1) whose
 * `shared` is `family` (any when family < 0), in *ratio; returns how many there were. */
static int probed_ratio(const xchg_lp_t *lp, int family, double *ratio)
{
    double log_sum = 0.0;
    int n = 0;
    for (int i = 1; i < lp->ncand; i++)
        if (lp->cand[i].measured > 0 && lp->cand[i].predicted > 0 &&
            (family < 0 || lp->cand[i].shared == family)) {
            log_sum += log(lp->cand[i].measured / lp->cand[i].predicted);
            n++;
        }
    if (n > 0)
        *ratio = exp(log_sum / n);
    return n;
}

void xchg_lp_warm(void)
{
    volatile double x = 2.0; /* not folded away */
    x = exp(log(x));
    (void)x;
}

int xchg_lp_node_joins(const xchg_call_t *call, const xchg_machine_t *machine, double node_s,
                       double serial_s)
{
    if (!call->topo || call->topo->nnodes <= 1 || !(machine->beta > 0))
        return 0;
    if (!(machine->beta_inter >= C.dear_link * machine->beta) || machine->gap_inter > 0)
        return 0;
    return node_s < INFINITY && node_s <= C.span * serial_s;
}

/* The expected time of candidate c: measured, else its prediction times the scale (file header,
 * expected time): measured / predicted over the probed xchg candidates of its kind, else over
 * native (the reference of both kinds: the other kind's error says little about this one's);
 * 0 when unknown. */
static double expected(const xchg_lp_t *lp, int c)
{
    double ratio = 1.0;
    const xchg_lp_cand_t *native = &lp->cand[0];
    int native_known = native->measured > 0 && native->predicted > 0;
    if (lp->cand[c].measured > 0)
        return lp->cand[c].measured;
    if (!(lp->cand[c].predicted > 0))
        return 0.0;
    if (probed_ratio(lp, lp->cand[c].shared, &ratio) == 0 && native_known)
        ratio = native->measured / native->predicted;
    return lp->cand[c].predicted * ratio;
}

/* Whether a candidate of c's kind has been measured, so that c's expected time rests on its
 * own kind's error (expected()); where it rests on native's alone, next_probe does not count
 * the gain it promises: native's model prices another algorithm, whose error says little about
 * xchg's. */
static int kind_measured(const xchg_lp_t *lp, int c)
{
    double ratio;
    return probed_ratio(lp, lp->cand[c].shared, &ratio) > 0;
}

/* Timed calls for a call expected to take `seconds` (0: unknown). */
static int samples_for(double seconds)
{
    if (!(seconds > 0))
        return 2;
    return seconds < C.cheap_s ? 3 : seconds < C.dear_s ? 2 : 1;
}

static void begin_probe(xchg_lp_t *lp, int c, double expect)
{
    lp->current = c;
    lp->probe_made = 0;
    /* a dear call needs no warm-up to be worth timing, except the shape's very first call,
     * which pays for what the program's buffers and the library set up once */
    lp->probe_warmup = expect > 0 && expect >= C.dear_s && lp->round_calls > 0 ? 0 : 1;
    lp->probe_calls = lp->probe_warmup + samples_for(expect);
}

/* The current probe's timed calls. */
static int probe_samples(const xchg_lp_t *lp)
{
    return lp->probe_calls - lp->probe_warmup;
}

int xchg_lp_agreed_samples(const xchg_lp_t *lp, int counts[2])
{
    if (lp->chained > 0) {
        counts[0] = lp->chained;
        counts[1] = probe_samples(lp);
        return 2;
    }
    counts[0] = probe_samples(lp);
    return 1;
}

/* Whether the round's first probe, `first`, chains into native's (file header, the chain): both
 * expected cheaper than a dear call, native within chain_within of the first. */
static int chain_worth(const xchg_lp_t *lp, int first)
{
    double f = expected(lp, first), n = expected(lp, 0);
    return first != 0 && lp->ncand > 1 && !(lp->cand[0].measured > 0) && f > 0 && f < C.dear_s &&
           n > 0 && n <= C.chain_within * f;
}

/* A round's first probe: the winner when relearning, else the models' choice. */
static void begin_round(xchg_lp_t *lp, int first)
{
    lp->phase = XCHG_LP_PROBING;
    lp->round_calls = 0;
    lp->round_s = 0.0;
    lp->first_calls = 0;
    lp->first_s = 0.0;
    lp->first_synced = 0;
    lp->spent = 0.0;
    lp->agreements = 0;
    lp->synced = 0;
    lp->deferred = 0;
    lp->overrun = 0;
    lp->native_cold = 0;
    lp->chained = 0;
    lp->rounds++;
    for (int c = 0; c < lp->ncand; c++)
        lp->cand[c].skipped = 0;
    lp->winner = first;
    begin_probe(lp, first, expected(lp, first));
    lp->chain = chain_worth(lp, first);
}

void xchg_lp_start(xchg_lp_t *lp, const xchg_lp_cand_t *cand, int ncand, int first)
{
    memset(lp, 0, sizeof *lp);
    lp->ncand = ncand < XCHG_LP_MAX ? ncand : XCHG_LP_MAX;
    memcpy(lp->cand, cand, (size_t)lp->ncand * sizeof *cand);
    for (int c = 0; c < lp->ncand; c++)
        lp->cand[c].measured = 0.0;
    if (first < 0 || first >= lp->ncand || waits(lp, first))
        first = 0;
    begin_round(lp, first);
    if (lp->ncand == 1) { /* native alone: nothing to learn */
        lp->phase = XCHG_LP_SETTLED;
        lp->winner = 0;
        lp->countdown = lp->relearn = C.relearn_max;
    }
}

/* A started shape settled on `winner` without a round: unwatched, probed after `countdown`
 * calls (a stored verdict, or the models sure). */
static void start_settled(xchg_lp_t *lp, int winner, unsigned countdown)
{
    lp->phase = XCHG_LP_SETTLED;
    lp->winner = winner;
    lp->chain = 0;
    lp->relearn = 0;
    lp->countdown = countdown;
    lp->watch_every = 0;
}

void xchg_lp_start_known(xchg_lp_t *lp, const xchg_lp_cand_t *cand, int ncand, int winner)
{
    xchg_lp_start(lp, cand, ncand, winner);
    start_settled(lp, winner >= 0 && winner < lp->ncand ? winner : 0, C.relearn_known);
    lp->known = 1;
}

void xchg_lp_start_sure(xchg_lp_t *lp, const xchg_lp_cand_t *cand, int ncand, int first)
{
    xchg_lp_start(lp, cand, ncand, first);
    if (lp->phase == XCHG_LP_PROBING && lp->winner != 0) /* not native alone, nor a first that
                                                            waits for its set-up */
        start_settled(lp, lp->winner, C.relearn_first);
}

void xchg_lp_start_tie(xchg_lp_t *lp, const xchg_lp_cand_t *cand, int ncand, int first, int across)
{
    double e, native;
    xchg_lp_start(lp, cand, ncand, first);
    if (lp->phase != XCHG_LP_PROBING || lp->current == 0)
        return; /* native alone, or a first that waits for its set-up: native's round */
    e = expected(lp, lp->current);
    native = lp->cand[0].predicted;
    if (native > 0 && e >= C.tie_close * native &&
        (!(e >= C.dear_s) || across == XCHG_LP_ACROSS ||
         (across == XCHG_LP_ACROSS_CUT && !(e >= C.tie_cut_s)))) {
        /* close: native, a round once the program has repeated the shape (the top) */
        start_settled(lp, 0, e >= C.dear_s ? C.tie_dear_after : C.tie_after);
        return;
    }
    lp->tie = 1;
    if (across == XCHG_LP_ACROSS_CUT && e >= C.tie_cold_s) {
        /* timed from the shape's first call, with no warm-up (file header, ties) */
        lp->probe_warmup = 0;
        lp->probe_calls = samples_for(e);
        return;
    }
    /* a dear first probe warms up on native (file header, ties) */
    lp->tie_native = e >= C.dear_s && lp->probe_warmup == 1;
}

int xchg_lp_sure(const xchg_call_t *call, const xchg_machine_t *machine, double native_s,
                 double first_s)
{
    double peers = call->comm_size > 1 ? call->comm_size - 1 : 0, bytes, block;
    double least = xchg_cost_native_floor(call, machine);
    int measured = least > 0 && native_s <= least; /* native's price is the measurement */
    if (!(first_s > 0 && first_s < INFINITY &&
          native_s >= (measured ? C.sure_measured : C.sure) * first_s))
        return 0;
    if (call->coll == XCHG_ALLTOALLV)
        bytes = (double)(call->max_send_bytes > call->max_recv_bytes ? call->max_send_bytes
                                                                     : call->max_recv_bytes);
    else /* alltoall: sent and received; allgather: received */
        bytes = peers * (double)call->block_bytes;
    /* blocks of the size measured, or up to large_from: the choice's price scales by the same
     * tau, and native's is its 4 KiB measurement, which more bytes only exceed (alltoallv: the
     * busiest rank's, its own block's too) */
    block = machine->large_from > XCHG_NATIVE_MID_BYTES ? machine->large_from
                                                        : (double)XCHG_NATIVE_MID_BYTES;
    if (measured && machine->native_mid[call->coll] > 0 && native_s >= C.sure_far * first_s &&
        bytes <= (call->coll == XCHG_ALLTOALLV ? call->comm_size : peers) * block)
        return 1;
    return machine->beta > 0 && bytes * machine->tau < machine->beta;
}

/* The fastest probed xchg candidate (c >= 1), or -1 when none is probed. */
static int fastest(const xchg_lp_t *lp)
{
    int best = -1;
    for (int c = 1; c < lp->ncand; c++)
        if (lp->cand[c].measured > 0 && (best < 0 || lp->cand[c].measured < lp->cand[best].measured))
            best = c;
    return best;
}

/* The verdict on the probes so far: the fastest xchg candidate, when native is not measured or
 * it is below margin times native; else native. */
static int verdict(const xchg_lp_t *lp, int best)
{
    return best > 0 && (lp->cand[0].measured == 0 ||
                        lp->cand[best].measured < C.margin * lp->cand[0].measured)
               ? best
               : 0;
}

int xchg_lp_interim(const xchg_lp_t *lp)
{
    int best = fastest(lp);
    if (lp->phase != XCHG_LP_PROBING || !(lp->cand[0].measured > 0) || best < 0)
        return -1;
    return verdict(lp, best);
}

/* Settle on the fastest probed candidate (an xchg one only below margin times native). */
static void settle(xchg_lp_t *lp)
{
    int best = fastest(lp);
    lp->winner = verdict(lp, best);
    lp->winner_s = lp->cand[lp->winner].measured;
    lp->rival_s = lp->winner == 0 ? (best > 0 ? lp->cand[best].measured : 0.0)
                                  : lp->cand[0].measured;
    lp->phase = XCHG_LP_SETTLED;
    lp->known = 0;
    if (lp->deferred) { /* a set-up candidate waits: the next round starts when it may run */
        lp->countdown = C.setup_after > lp->calls ? C.setup_after - lp->calls : 1;
    } else if (lp->native_cold && lp->winner != 0) { /* native read from one cold call */
        lp->countdown = C.recheck_cold;
    } else if (lp->overrun && lp->rounds == 1) {
        /* the first round's allowance left candidates out: the next round, with an allowance
         * of its own, starts once the shape's first budget_calls calls are past */
        lp->countdown = C.budget_calls;
    } else {
        lp->relearn = lp->relearn == 0 ? C.relearn_first
                      : lp->relearn >= C.relearn_max / C.relearn_growth
                          ? C.relearn_max
                          : lp->relearn * C.relearn_growth;
        lp->countdown = lp->relearn;
    }
    lp->watch_every = lp->rival_s > 0 ? (lp->watch_every ? lp->watch_every : C.watch_first) : 0;
    lp->watch_in = lp->watch_every;
}

/* The allowance of a probe of `calls` calls that would begin now (file header): budget_share
 * of the reference over the shape's calls by the probe's end, up to budget_calls of them. */
static double allowance(const xchg_lp_t *lp, double ref, int calls)
{
    unsigned by_end = lp->calls + (unsigned)calls;
    unsigned window = (unsigned)C.budget_calls;
    return C.budget_share * ref * (by_end < window ? by_end : window);
}

/* The next probe of the round, or -1: native first when not yet measured, then the others by
 * expected time, each unless hopeless or its expected excess and agreement overrun what is left
 * of the allowance. */
static int next_probe(xchg_lp_t *lp, int first, double *expect)
{
    double best = best_measured(lp), ref = reference(lp, first), spent = cost_so_far(lp, ref);
    int pick = -1;

    if (lp->cand[0].measured == 0 && !lp->cand[0].skipped) {
        *expect = expected(lp, 0);
        return 0;
    }
    for (int c = 1; c < lp->ncand; c++) {
        double e = expected(lp, c), excess = e - ref, cost;
        int calls, hopeless, unsure;
        if (lp->cand[c].measured > 0 || lp->cand[c].skipped)
            continue;
        if (waits(lp, c)) {
            lp->deferred = 1;
            continue;
        }
        calls = (e > 0 && e >= C.dear_s ? 0 : 1) + samples_for(e);
        unsure = e > 0 && !kind_measured(lp, c); /* its gain rests on native's scale alone */
        if (unsure && excess < 0)
            excess = 0.0; /* not counted: the allowance must pay for the probe */
        cost = calls * excess + probe_overhead(lp, samples_for(e)); /* < 0: a gain */
        hopeless = e > 0 && best > 0 && e >= C.hopeless * best;
        if (!lp->probe_all &&
            (hopeless || ((cost > 0 || unsure) && cost > allowance(lp, ref, calls) - spent))) {
            lp->cand[c].skipped = 1;
            lp->overrun |= !hopeless;
            continue;
        }
        if (pick < 0 || e < *expect) {
            pick = c;
            *expect = e;
        }
    }
    return pick;
}

/* Native's probe (file header): as many calls as the allowance pays for at its expected excess
 * over the reference (and each call's barrier across machines), its warm-up grown to
 * native_warmup: a cheap call keeps its three timed calls where the allowance pays for one call
 * more (the MPI library's calls right after its set-up still scatter, and a median of two reads
 * the slower), otherwise within the same calls, one timed call fewer. When it is expected to
 * cost more than twice the best or the allowance pays for no more, it is timed once with no
 * warm-up: a dear call (dear_s up) in every round, a cheaper one in the shape's first round
 * only, where a short-lived shape cannot pay for more. Such a cold call can read native several
 * times slower than it runs, so a round that settles against it is checked again after
 * recheck_cold calls, where native gets native_warmup untimed calls and one timed call. */
static void fit_native(xchg_lp_t *lp, double expect, double ref, double best)
{
    double allowance =
        C.budget_share * C.budget_calls * ref - cost_so_far(lp, ref) - lp->agree_s;
    double excess = (expect > ref ? expect - ref : 0.0) + lp->sync_s; /* a call, timed */
    int calls = INT_MAX; /* what the allowance pays for */
    if (excess > 0 && ref > 0)
        calls = allowance > 0 ? (int)(allowance / excess) : 1;
    if (calls < lp->probe_calls)
        lp->probe_calls = calls < 1 ? 1 : calls;
    if (lp->probe_calls < 2 || (expect > 0 && expect > 2 * best)) {
        int dear = expect > 0 && expect >= C.dear_s, cold = !dear && lp->rounds <= 1;
        lp->probe_warmup = dear || cold ? 0 : C.native_warmup;
        lp->probe_calls = lp->probe_warmup + 1;
        lp->native_cold = cold;
    } else {
        while (lp->probe_warmup > 0 && lp->probe_warmup < C.native_warmup &&
               lp->probe_calls - lp->probe_warmup > 1) {
            /* above: three timed calls where the allowance pays, else one fewer */
            if (lp->probe_calls - lp->probe_warmup >= 3 && calls > lp->probe_calls)
                lp->probe_calls++;
            lp->probe_warmup++;
        }
    }
}

/* The chained first probe's last call ran: native's probe follows at once, sized by what the
 * first is expected to take (its measurement comes with native's). */
static void chain_native(xchg_lp_t *lp)
{
    double first = expected(lp, lp->current), expect = expected(lp, 0);
    lp->chain = 0;
    lp->chain_cand = lp->current;
    lp->chain_calls = lp->probe_calls;
    lp->chained = probe_samples(lp);
    begin_probe(lp, 0, expect);
    fit_native(lp, expect, first, first);
}

void xchg_lp_probe_done(xchg_lp_t *lp, const double *seconds, double agree_s, double sync_s,
                        double round_s)
{
    int first = lp->winner; /* during a round: its first probe */
    double ref, expect = 0.0, t;
    int next;

    if (lp->phase != XCHG_LP_PROBING)
        return;
    if (agree_s > 0)
        lp->agree_s = agree_s;
    if (sync_s > 0)
        lp->sync_s = sync_s;
    if (round_s > 0)
        lp->round_s = round_s;
    if (lp->chained > 0) { /* the round's first probe, agreed with native's */
        t = *seconds++;
        lp->first_calls = lp->chain_calls;
        /* its calls after the round's first, at its median: the round's time then, which
         * only this agreement's sum, over native's calls too, would have told */
        lp->first_s = (lp->chain_calls - 1) * t;
        lp->first_synced = lp->chained;
        lp->synced += lp->chained;
        lp->cand[lp->chain_cand].measured = t > 0 ? t : 1e-9;
        lp->chained = 0;
    } else if (lp->agreements == 0) { /* the round's first probe: what runs anyway
                                         (cost_so_far) */
        lp->first_calls = lp->round_calls;
        lp->first_s = lp->round_s;
        lp->first_synced = probe_samples(lp);
    }
    t = *seconds;
    lp->agreements++;
    lp->synced += probe_samples(lp);
    lp->cand[lp->current].measured = t > 0 ? t : 1e-9;
    ref = reference(lp, first);
    if (lp->current != first && t > ref)
        lp->spent += lp->probe_calls * (t - ref);
    next = next_probe(lp, first, &expect);
    if (next < 0) {
        settle(lp);
        return;
    }
    begin_probe(lp, next, expect);
    if (next == 0)
        fit_native(lp, expect, ref, best_measured(lp));
}

/* A new round of probes; candidates far slower than the winner keep their times. */
static void relearn(xchg_lp_t *lp)
{
    int winner = lp->winner;
    for (int c = 0; c < lp->ncand; c++) {
        double m = lp->cand[c].measured;
        int far = c != winner && c != 0 && m > 0 && lp->winner_s > 0 && m > C.far * lp->winner_s;
        if (!far)
            lp->cand[c].measured = 0.0;
    }
    begin_round(lp, winner);
}

xchg_lp_step_t xchg_lp_call(xchg_lp_t *lp)
{
    xchg_lp_step_t step = {lp->winner, 0, 0, -1};

    if (lp->calls < UINT_MAX)
        lp->calls++;
    if (lp->phase == XCHG_LP_SETTLED) {
        if (--lp->countdown == 0)
            relearn(lp);
        else if (waits(lp, lp->winner)) { /* a stored verdict that needs a set-up */
            step.cand = 0;
            return step;
        } else if (lp->watch_every > 0 && --lp->watch_in == 0) {
            lp->watch_in = lp->watch_every;
            step.timed = 1;
            step.sample = lp->probe_made++ % XCHG_LP_SAMPLES;
            step.agree = step.sample == XCHG_LP_SAMPLES - 1;
            return step;
        } else {
            return step;
        }
    }
    step.timed = lp->probe_made >= lp->probe_warmup;
    /* a dear tie's warm-up: the shape's first call, on native */
    step.cand =
        !step.timed && lp->tie_native && lp->rounds == 1 && lp->agreements == 0 ? 0 : lp->current;
    step.sample = step.timed ? lp->probe_made - lp->probe_warmup + lp->chained : -1;
    lp->probe_made++;
    lp->round_calls++;
    step.agree = lp->probe_made == lp->probe_calls;
    if (step.agree && lp->chain) { /* its agreement comes with native's */
        step.agree = 0;
        chain_native(lp);
    }
    return step;
}

int xchg_lp_watch_done(xchg_lp_t *lp, double seconds)
{
    int drift = lp->phase == XCHG_LP_SETTLED && lp->rival_s > 0 &&
                seconds > C.drift * lp->winner_s && seconds > lp->rival_s;
    lp->probe_made = 0;
    if (!drift) {
        unsigned next = 2 * lp->watch_every - 1;
        lp->watch_every = next > C.watch_max ? C.watch_max : next;
        lp->watch_in = lp->watch_every;
        return 0;
    }
    lp->relearn = 0; /* the next round is followed soon by another */
    lp->watch_every = C.watch_first;
    relearn(lp);
    return 1;
}

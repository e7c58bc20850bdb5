/*
 * learn_policy.h: learning's decisions as pure functions (no MPI): which candidate a call shape
 * runs next, for how many calls, when the ranks must agree on times, which candidate wins, when
 * a settled shape is timed again or learned again. shim/learn.c drives it with agreed times
 * (every input below is equal on all ranks, so every rank takes the same path); the unit test
 * tests/unit/test_learn_policy.c drives it with recorded ones.
 *
 * The model proposes, measurements correct. A shape starts with the candidates the cost models
 * rank (native always among them) and runs the models' choice first (their best priced one when
 * they see no clear win). It then probes the others in the order of their predicted time,
 * scaled by what the probes so far measured against what was predicted, while a candidate can
 * still win and the exploration allowance (a share of the best time so far over the first
 * budget_calls calls) covers its expected cost. A probe is a warm-up call and a few timed calls,
 * fewer the dearer the call, and ends with an agreement of the ranks, which the allowance pays
 * for too. Then the shape settles on the fastest (an xchg candidate must beat native by the
 * margin), is watched on one call in many, and is learned again after growing intervals or when
 * the watch sees it drift. Where the models are sure of their choice (xchg_lp_sure), a shape
 * starts settled on it and makes its first round only after relearn_first calls
 * (xchg_lp_start_sure); where they see a close tie of cheap calls, it starts settled on native
 * and makes its first round after tie_after calls, and a close tie of dear ones across nodes
 * likewise after tie_dear_after calls (xchg_lp_start_tie).
 */
#ifndef XCHG_LEARN_POLICY_H
#define XCHG_LEARN_POLICY_H

#include <limits.h>

#include "../algos/sched/types.h"

#define XCHG_LP_MAX 4      /* candidates of a shape: native (cand[0]) and up to three others */
#define XCHG_LP_SAMPLES 4  /* timed calls of a probe (3 at most) or of a watch check (4) */
#define XCHG_LP_AGREED_MAX 6 /* timed calls one agreement covers: two chained probes of 3 */

/* The constants that steer learning, each with its reason (one place: learn_policy.c). */
typedef struct xchg_lp_constants {
    double margin;         /* an xchg candidate wins only below this times native's time */
    double budget_share;   /* exploration may cost this share of the best time ... */
    int budget_calls;      /* ... over this many calls */
    double cheap_s;        /* calls below this take XCHG_LP_SAMPLES timed calls a probe, */
    double dear_s;         /* below this 2, from this up 1 */
    double hopeless;       /* a candidate whose scaled prediction is this many times the best
                              measured time is not probed */
    double far;            /* one measured this many times slower than the winner is not probed
                              again when the shape is learned again */
    unsigned relearn_first; /* calls of a settled shape before it is learned again, */
    unsigned relearn_growth; /* times this after every further probe round, */
    unsigned relearn_max;   /* up to this */
    unsigned relearn_known; /* a shape settled from a stored verdict: calls before it is probed */
    unsigned watch_first;   /* a settled winner is timed on one call in this many, */
    unsigned watch_max;     /* about doubled after every check that found it as fast, up to this */
    double drift;           /* learned again when the watch finds it this many times slower
                              than it was measured, and slower than the rival was */
    int native_warmup;      /* untimed calls before native's timed ones, unless dear */
    unsigned recheck_cold;  /* calls before a round that settled against native timed by one
                              cold call is probed again */
    unsigned tie_after;     /* a close tie of calls cheaper than dear_s runs native for this
                               many calls, then makes its first round, */
    unsigned tie_dear_after; /* and a close dear tie across nodes for this many, */
    double tie_cut_s;        /* unless its messages between nodes are cut and the candidate is
                                priced at this or more */
    double tie_cold_s;       /* such a tie's candidate priced at this or more is timed on the
                                shape's first call, with no warm-up on native */
    double tie_close;       /* close: the candidate priced at this times native's price or more */
    unsigned setup_after;   /* a candidate that must first set something up (the node's shared
                              segment made or grown) runs from the shape's call this many on */
    double span;             /* candidates: xchg algorithms priced within this factor of the best */
    double dear_link;        /* a start-up between nodes this many times one inside makes the
                                node algorithm a candidate wherever it serves (xchg_lp_node_joins) */
    double chain_within;     /* a round's first probe and native's share one agreement when the
                                first is cheaper than dear_s and native is priced within this
                                factor of it */
    double sure;             /* the models are sure of their choice (xchg_lp_sure) when native is
                                priced this many times it or more, and a rank's bytes cost less
                                than one start-up */
    double sure_measured;    /* the same when native's price is its time measured at MPI_Init
                                (xchg_machine_t.native_small) */
    double sure_far;         /* and this many times where it is, for calls of any bytes up to
                                the measured 4 KiB blocks (xchg_machine_t.native_mid) */
} xchg_lp_constants_t;

extern const xchg_lp_constants_t xchg_lp_constants;

enum { XCHG_LP_PROBING, XCHG_LP_SETTLED };

typedef struct xchg_lp_cand {
    int algo;
    xchg_params_t params;
    double predicted; /* the models' time (s); 0 when unknown */
    double measured;  /* agreed time of its last probe (s); 0: never probed */
    int skipped;      /* not probed in this round (hopeless, far, or over the allowance) */
    int shared;       /* 1: moves its data through shared memory (its model prices copies, not
                         messages); native and message algorithms 0 */
    int setup;        /* 1: its first call sets up what it needs once (makes or grows the node's
                         shared segment), a cost that only a repeated shape pays back */
} xchg_lp_cand_t;

/* What a call of the shape does (xchg_lp_call). */
typedef struct xchg_lp_step {
    int cand;  /* the candidate to run */
    int timed; /* 1: time this call (a probe's timed call, or a watched call) */
    int agree; /* 1: after this call the ranks agree on the times (xchg_lp_probe_done or
                  xchg_lp_watch_done follows) */
    int sample; /* a probe's timed call: its index among the timed calls that its agreement
                   covers (a chained probe's after the first probe's: xchg_lp_agreed_samples) */
} xchg_lp_step_t;

typedef struct xchg_lp {
    int phase;
    int ncand;
    xchg_lp_cand_t cand[XCHG_LP_MAX]; /* cand[0] is native */
    int current;      /* probing: the candidate of the current probe */
    int probe_calls;  /* its calls: warm-up (when probe_warmup) and timed */
    int probe_warmup;
    int probe_made;   /* calls of it made so far */
    double spent;     /* exploration cost so far: sum over probe calls of (time - best) */
    int agreements;   /* probes of this round that ended with an agreement */
    double agree_s;   /* the cost of one agreement, as last measured (0: not yet known) */
    int synced;       /* timed calls of this round's probes that began with a barrier */
    double sync_s;    /* the cost of that barrier, as last measured (0: none, one machine) */
    int round_calls;  /* calls since the probe round began */
    double round_s;   /* the agreed time of the round's calls after its first, each from its
                         entry to its exit (its barrier included); 0: not measured */
    int first_calls;  /* the round's calls when its first probe ended, */
    double first_s;   /* round_s then: what runs anyway, not exploration (cost_so_far), */
    int first_synced; /* and that probe's timed calls (their barriers are learning's) */
    int winner;
    double winner_s, rival_s; /* the winner's and the best other side's measured times */
    unsigned relearn;   /* calls between settling and the next probe round */
    unsigned countdown; /* calls left before it */
    unsigned watch_every, watch_in; /* 0: not watched */
    int known;          /* settled from a stored verdict, not by probes */
    unsigned calls;     /* the shape's calls so far (saturating) */
    int deferred;       /* this round passed over a set-up candidate (too few calls yet) */
    int overrun;        /* this round passed over a candidate that its allowance could not pay
                           for (not a hopeless one) */
    int native_cold;    /* this round timed native by one call without warm-up */
    unsigned rounds;    /* probe rounds begun */
    int chain;          /* 1: the current probe (the round's first) ends without an agreement;
                           native's probe follows at once and one agreement covers both */
    int chained;        /* > 0: the current probe (native's) follows a chained one, whose timed
                           calls, this many, its agreement covers first */
    int chain_cand, chain_calls; /* that chained probe's candidate and calls */
    int tie;            /* started by xchg_lp_start_tie: the first round's first probe is
                           exploration (cost_so_far) */
    int tie_native;     /* 1: that probe is dear, and its warm-up call runs native (the
                           selection's choice, which pays the shape's one-time costs), so that
                           the tie risks one call of the candidate, not two */
    int probe_all;      /* testing (XCHG_TEST_PROBE_ALL, set after xchg_lp_start): probe every
                           candidate that may run, none hopeless or over the allowance */
} xchg_lp_t;

/* Start learning a shape: ncand candidates (cand[0] native), first the models' choice. A
 * candidate marked setup runs only from the shape's setup_after-th call: until then its
 * probe waits (native is probed first in its place) and, as a stored verdict, native runs. */
void xchg_lp_start(xchg_lp_t *lp, const xchg_lp_cand_t *cand, int ncand, int first);
/* Start a shape settled on cand `winner` from a stored verdict (a cached table rule): it runs
 * unwatched and is probed after relearn_known calls. */
void xchg_lp_start_known(xchg_lp_t *lp, const xchg_lp_cand_t *cand, int ncand, int winner);
/* Start a shape whose first candidate the models are sure of (xchg_lp_sure): it runs unwatched,
 * and its first round of probes begins after relearn_first calls, when the shape has shown that
 * the program repeats it. A first that must wait for its set-up starts as xchg_lp_start does. */
void xchg_lp_start_sure(xchg_lp_t *lp, const xchg_lp_cand_t *cand, int ncand, int first);
/* Start learning a shape where the models see no clear win (their best xchg candidate, first,
 * priced within XCHG_MODEL_MARGIN of native either way, so the selection runs native)
 * (learn_policy.c, "Ties"). Where that candidate is expected cheaper than dear_s and priced at
 * tie_close times native or more, the shape runs native, unwatched, and makes its first round
 * after tie_after calls, when it has shown that the program repeats it. Otherwise as
 * xchg_lp_start, but the first round's first probe is exploration too, paid by the allowance;
 * where it is dear, its warm-up call runs native. across (XCHG_LP_*): whether the call spans
 * nodes, and whether its messages between them are cut (xchg_cut_inter). Across nodes a close
 * tie of dear calls runs native too, and makes its first round after tie_dear_after calls;
 * but where the messages are cut and the candidate is priced at tie_cut_s or more it starts
 * its round at once; from tie_cold_s up the candidate is timed on the shape's first call, with
 * no warm-up. */
enum { XCHG_LP_ONE_NODE, XCHG_LP_ACROSS, XCHG_LP_ACROSS_CUT };
void xchg_lp_start_tie(xchg_lp_t *lp, const xchg_lp_cand_t *cand, int ncand, int first, int across);
/* Whether the models are sure of their choice, priced first_s, against native, priced
 * native_s: native_s is at least sure times first_s, and the bytes of the call's busiest rank
 * cost less than one start-up inside a node at tau (machine's beta and tau). The two kinds of
 * models, messages and copies through shared memory, share the start-up constants but not the
 * per-byte ones, so where the bytes cost more the ratio of the prices is not sure; where
 * start-ups make the prices, it is their count, which the models know. Where native_s is the
 * time of native's calls of 1 B measured at MPI_Init (it is machine's native_small for the
 * call's collective and size), the factor is sure_measured: only the choice's price is a
 * model then; where 4 KiB blocks were measured too (native_mid), sure_far for a call of more
 * bytes, up to those blocks' (peers times 4 KiB for the busiest rank). (The measurements
 * behind the factors: docs/design.md, Learning.) */
int xchg_lp_sure(const xchg_call_t *call, const xchg_machine_t *machine, double native_s,
                 double first_s);
/* The next call of the shape. */
xchg_lp_step_t xchg_lp_call(xchg_lp_t *lp);
/* The next call of a settled shape when it changes nothing but the shape's counters, as
 * xchg_lp_call would take it (its step: the winner, untimed, no agreement): neither the next
 * round, nor a watched call, nor a stored verdict's wait for its set-up is due. Counts the call
 * and returns 1; otherwise 0, and xchg_lp_call takes the call. Inline: it is nearly every call
 * of a long-lived shape, which pays no function call for it. */
static inline int xchg_lp_quiet(xchg_lp_t *lp)
{
    unsigned calls = lp->calls < UINT_MAX ? lp->calls + 1 : lp->calls;
    if (lp->phase != XCHG_LP_SETTLED || lp->countdown <= 1 ||
        (lp->watch_every > 0 && lp->watch_in <= 1) ||
        (lp->cand[lp->winner].setup && calls < xchg_lp_constants.setup_after))
        return 0;
    lp->calls = calls;
    lp->countdown--;
    if (lp->watch_every > 0)
        lp->watch_in--;
    return 1;
}
/* A probe's last call ran: seconds[g] is the agreed time of the timed calls of group g of
 * xchg_lp_agreed_samples (the ranks' medians, agreed): one probe's, or a chained probe's and
 * native's (learn_policy.c, the chain); agree_s the agreed cost of an earlier agreement (the domain's latest before this
 * one, shim/learn.c), 0 when none is known; sync_s the agreed cost of the barrier that begins
 * each timed call where the ranks' clocks differ (across machines), 0 where they have none;
 * round_s the agreed time of the round's calls so far after its first (untimed ones too, each
 * from entry to exit), 0 when not measured. Settles when no candidate is left worth probing. */
void xchg_lp_probe_done(xchg_lp_t *lp, const double *seconds, double agree_s, double sync_s,
                        double round_s);
/* The watch's agreed time of the winner: 1 when it drifted (the shape is probed again from its
 * next call), else 0. */
int xchg_lp_watch_done(xchg_lp_t *lp, double seconds);
/* Touch once, at the library's start, what the policy's first decisions need: a process's
 * first log() faults libm's code and tables in, which costs as much as tens of calls of 1 B and
 * would otherwise fall on a probe's decision in the middle of a program. */
void xchg_lp_warm(void);
/* Whether the node algorithm, priced node_s, joins a new shape's candidates although the models
 * rank it below those within span of the best: when call spans nodes, a start-up between nodes
 * costs at least dear_link times one inside (machine's beta_inter against beta), no gap at a
 * node was measured (machine's gap_inter 0), and node_s is within span of serial_s, the best
 * candidate's price with one message in flight. Without the gap the models price the messages
 * that a rank has in flight between nodes as one start-up; where start-ups between nodes are
 * dear, the messages of a node's ranks pass its one interface one after another, which the
 * node algorithm saves and the models then do not see (docs/design.md); so it joins with its
 * time unknown (predicted 0: probed by a few calls, never judged hopeless). With the gap the
 * models price that, and node joins as they rank it. */
int xchg_lp_node_joins(const xchg_call_t *call, const xchg_machine_t *machine, double node_s,
                       double serial_s);
/* The verdict of an unsettled round on its probes so far, for a program that ends before the
 * round does (shim/learn.c stores it in the cache): the candidate that settling now would take,
 * once native and at least one other candidate are measured in it; -1 before that, and when
 * the shape is settled. */
int xchg_lp_interim(const xchg_lp_t *lp);
/* The timed calls that the probe's coming agreement covers, as groups of consecutive samples
 * (step.sample 0 up): counts[0] the current probe's, or when it follows a chained probe that
 * one's and counts[1] the current one's. Returns the number of groups (1 or 2). */
int xchg_lp_agreed_samples(const xchg_lp_t *lp, int counts[2]);

#endif

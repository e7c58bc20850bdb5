/*
 * xchg-sched: print the schedule of an algorithm before running it.
 *
 *   xchg-sched alltoall radix p=N [r=R] [k=K] [b=BYTES] [show=all|rank0]
 *   xchg-sched allgather circulant p=N [k=K] [b=BYTES] [show=all|rank0]
 *   xchg-sched alltoall hier nodes=S1,S2,... [k=K] [mode=early|plain] [show=all|rounds]
 *   xchg-sched alltoall torus dims=RxC|P [b=BYTES] [show=all|node0]
 *
 * For every round: who sends which blocks (or which bytes of which blocks) to whom, and how
 * many bytes; then C1 and C2 of the schedule next to the formulas of Bruck et al., "Efficient
 * algorithms for all-to-all communications in multiport message-passing systems", 1997,
 * Sections 3 and 4. Defaults: r = 2, k = 1, b = 1; show = all up to 16 ranks, rank0 above
 * (every rank does the same, shifted by its rank). The schedules are the ones the algorithms
 * run (algos/sched/). No MPI is started.
 * hier (Sanders and Traff, "The hierarchical factor algorithm for all-to-all communication"):
 * nodes of S1, S2, ... consecutive ranks (as XCHG_NODES), every phase, round and step
 * (show=all, the default up to 64 ranks) or only the pairs of nodes of every round
 * (show=rounds), then the step counts next to Fig. 3's and Theorem 1's; mode=plain prints
 * Fig. 2 without Section 4's improvement (the algorithm runs mode=early).
 * torus (Liu, Gu, Bi, Tu, Dong, "Optimal all-to-all personalized communication in all-port
 * tori", Sections III-IV): dims=RxC (P: a ring), every step's messages out of every port
 * (show=all, the default up to 64 nodes, or node0) with the blocks they carry
 * (origin>destination, * for a relayed one), then steps and bytes next to the paper's (AR:
 * p/2, ceil(p^2/8); AT2: c/2 + 2, r c^2/8) and the bound on bytes.
 * The subcommands are the registry's: "COLL NAME" runs the printer that the entry of that
 * collective and name names (xchg_algo_t.schedule, XCHG_SCHEDULE_*; printers below).
 * The algorithms' own keys (r, k, dims) are read as the registry's descriptors read them
 * (tuning/registry.c), the same values and messages as XCHG_ALLTOALL=NAME:KEY=VALUE.
 *   xchg-sched markdown   prints the README's tables of algorithms and keys from the registry
 * A bad argument gives a message naming it, the usage, and exit status 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/sched/circulant.h"
#include "../algos/sched/factor.h"
#include "../algos/sched/radix.h"
#include "../algos/sched/torus.h"
#include "../tuning/registry.h"
#include "version.h" /* XCHG_VERSION, generated in the build folder (mk/version.mk) */

#define RADIX_MAX_RANKS 4096 /* the simulator keeps 3 p^2 ints */
#define CIRC_MAX_RANKS 1000000

typedef struct options {
    const xchg_algo_t *algo; /* the registry entry: radix's or circulant's */
    int alltoall;            /* 1: radix's schedule, 0: circulant's */
    long p, r, k, b;
    int all_ranks;
} options_t;

/* A printer of schedules, run for the subcommand "COLL NAME" of the registry entry that names
 * it (xchg_algo_t.schedule); the printers in the order of the usage. */
typedef struct printer {
    int schedule;     /* XCHG_SCHEDULE_* */
    const char *args; /* its arguments, for the usage */
    int (*run)(const xchg_algo_t *algo, int argc, char **argv);
} printer_t;

static int run_radix(const xchg_algo_t *algo, int argc, char **argv);
static int run_circulant(const xchg_algo_t *algo, int argc, char **argv);
static int show_hier(const xchg_algo_t *algo, int argc, char **argv);
static int show_torus(const xchg_algo_t *algo, int argc, char **argv);

static const printer_t printers[] = {
    {XCHG_SCHEDULE_RADIX, "p=N [r=R] [k=K] [b=BYTES] [show=all|rank0]", run_radix},
    {XCHG_SCHEDULE_CIRCULANT, "p=N [k=K] [b=BYTES] [show=all|rank0]", run_circulant},
    {XCHG_SCHEDULE_HIER, "nodes=S1,S2,... [k=K] [mode=early|plain] [show=all|rounds]", show_hier},
    {XCHG_SCHEDULE_TORUS, "dims=RxC|P [b=BYTES] [show=all|node0]", show_torus},
};
static const int nprinters = (int)(sizeof printers / sizeof printers[0]);

/* The registry entry whose schedule the printer prints, or NULL. */
static const xchg_algo_t *printer_algo(int schedule)
{
    for (int i = 0; i < xchg_nalgos; i++)
        if (xchg_algos[i].schedule == schedule)
            return &xchg_algos[i];
    return NULL;
}

/* The name of the entry of the printer of schedule ("?" when the registry has none). */
static const char *printer_name(int schedule)
{
    const xchg_algo_t *algo = printer_algo(schedule);
    return algo ? algo->name : "?";
}

static void usage(FILE *out)
{
    for (int i = 0; i < nprinters; i++) {
        const xchg_algo_t *algo = printer_algo(printers[i].schedule);
        if (algo)
            fprintf(out, "%s xchg-sched %s %s %s\n",
                    i ? "      " : "usage:", xchg_coll_name(algo->coll), algo->name,
                    printers[i].args);
    }
    fprintf(out,
            "       xchg-sched markdown   (the README's tables of algorithms and keys)\n"
            "       xchg-sched --version\n"
            "  p: ranks (1 .. %d for %s, .. %d for %s); r: radix >= 2 (above p acts as p);\n"
            "  k: ports >= 1; b: bytes per block >= 1 (default 1); show: every rank's messages "
            "or rank 0's\n"
            "  (default: all up to 16 ranks)\n"
            "  nodes: ranks of every node, consecutive ranks as XCHG_NODES (at most 4096 nodes "
            "and 65536 ranks);\n"
            "  mode: early (as the algorithm runs, Section 4) or plain (Fig. 2); show: every step "
            "or the rounds\n"
            "  (default: all up to 64 ranks)\n",
            RADIX_MAX_RANKS, printer_name(XCHG_SCHEDULE_RADIX), CIRC_MAX_RANKS,
            printer_name(XCHG_SCHEDULE_CIRCULANT));
}

static int bad(const char *arg, const char *why)
{
    fprintf(stderr, "xchg-sched: bad argument '%s': %s\n", arg, why);
    usage(stderr);
    return 2;
}

static int parse_long(const char *text, long lo, long hi, long *out)
{
    char *end;
    long v;
    if (text[0] < '0' || text[0] > '9')
        return -1;
    v = strtol(text, &end, 10);
    if (*end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* arg when it is KEY=VALUE of one of the algorithm's own keys (its registry entry's
 * descriptors, tuning/registry.c, as XCHG_ALLTOALL=NAME:KEY=VALUE takes them): parsed into
 * params, 1; 0 when the key is not one of them; -1 after the message for a bad value. */
static int algo_key(const xchg_algo_t *algo, const char *arg, xchg_params_t *params)
{
    const char *eq = strchr(arg, '=');
    const xchg_param_t *desc;
    char key[32], err[256];

    if (!eq || (size_t)(eq - arg) >= sizeof key)
        return 0;
    memcpy(key, arg, (size_t)(eq - arg));
    key[eq - arg] = '\0';
    if (!(desc = xchg_algo_key(algo, key)))
        return 0;
    if (xchg_param_parse(desc, eq + 1, params, err, sizeof err) != 0) {
        bad(arg, err);
        return -1;
    }
    return 1;
}

/* "unknown key (keys: p, b, show; radix's: r,k)": the tool's keys, then the algorithm's. */
static int unknown_key(const char *arg, const xchg_algo_t *algo, const char *tool_keys)
{
    char keys[64], why[160];
    xchg_algo_keys_text(algo, keys, sizeof keys);
    snprintf(why, sizeof why, "unknown key (keys: %s; %s's: %s)", tool_keys, algo->name, keys);
    return bad(arg, why);
}

/* The arguments of radix and circulant (argv[3] on) into opt: 0 when they are good, else the
 * exit status (2) after the message. */
static int parse(const xchg_algo_t *algo, int argc, char **argv, options_t *opt)
{
    int show = -1, known;
    xchg_params_t params = {0};
    memset(opt, 0, sizeof *opt);
    opt->algo = algo;
    opt->alltoall = algo->schedule == XCHG_SCHEDULE_RADIX;
    opt->r = 2;
    opt->k = 1;
    opt->b = 1;
    for (int i = 3; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        const char *value = eq ? eq + 1 : "";
        size_t keylen = eq ? (size_t)(eq - argv[i]) : 0;
        long max_p = opt->alltoall ? RADIX_MAX_RANKS : CIRC_MAX_RANKS;
        if (!eq)
            return bad(argv[i], "expected KEY=VALUE");
        known = algo_key(algo, argv[i], &params);
        if (known < 0)
            return 2;
        if (known)
            continue;
        if (keylen == 1 && argv[i][0] == 'p') {
            if (parse_long(value, 1, max_p, &opt->p) != 0)
                return bad(argv[i], opt->alltoall ? "p must be an integer from 1 to 4096"
                                                  : "p must be an integer from 1 to 1000000");
        } else if (keylen == 1 && argv[i][0] == 'b') {
            if (parse_long(value, 1, 1L << 40, &opt->b) != 0)
                return bad(argv[i], "b must be an integer >= 1 (bytes per block)");
        } else if (keylen == 4 && strncmp(argv[i], "show", 4) == 0) {
            if (strcmp(value, "all") == 0)
                show = 1;
            else if (strcmp(value, "rank0") == 0)
                show = 0;
            else
                return bad(argv[i], "show must be all or rank0");
        } else {
            return unknown_key(argv[i], algo, "p, b, show");
        }
    }
    opt->r = params.radix > 0 ? params.radix : opt->r;
    opt->k = params.nports > 0 ? params.nports : opt->k;
    if (opt->p == 0)
        return bad(argv[argc - 1], "missing p=N, the number of ranks");
    opt->all_ranks = show >= 0 ? show : opt->p <= 16;
    return 0;
}

/* ---- alltoall radix ---- */

typedef struct radix_printer {
    size_t b;
    int all_ranks;
    int last_round, last_step;
} radix_printer_t;

static void radix_message(void *arg, const xchg_radix_msg_t *msg)
{
    radix_printer_t *pr = arg;
    if (msg->round != pr->last_round || msg->step != pr->last_step) {
        if (msg->round != pr->last_round)
            printf("\nround %d:\n", msg->round);
        printf("  subphase %d step %d: the blocks whose digit %d is %d (%d per message) go to "
               "rank + %d\n",
               msg->subphase, msg->step, msg->subphase, msg->step, msg->nblocks, msg->offset);
        pr->last_round = msg->round;
        pr->last_step = msg->step;
    }
    if (!pr->all_ranks && msg->src != 0)
        return;
    printf("    %d -> %d:", msg->src, msg->dst);
    for (int n = 0; n < msg->nblocks; n++)
        printf(" %d>%d", msg->origin[n], msg->dest[n]);
    printf("  (%zu bytes)\n", (size_t)msg->nblocks * pr->b);
}

static int show_radix(const options_t *opt)
{
    xchg_radix_t s;
    radix_printer_t pr = {(size_t)opt->b, opt->all_ranks, -1, -1};
    xchg_radix_visitor_t visitor = {radix_message, NULL, &pr};
    size_t b = (size_t)opt->b;
    int r_given = opt->r > opt->p ? (int)opt->p : (int)opt->r;

    xchg_radix_init(&s, (int)opt->p, r_given, opt->k > 1000000 ? 1000000 : (int)opt->k);
    printf("%s %s: p=%d r=%d k=%d, b=%zu bytes per block%s\n", xchg_coll_name(opt->algo->coll),
           opt->algo->name, s.nranks, s.radix, s.nports, b,
           opt->r > opt->p && opt->p > 1 ? " (r above p acts as p)" : "");
    printf("w = ceil(log_%d %d) = %d subphases; steps per subphase:", s.radix, s.nranks, s.ndigits);
    for (int x = 0; x < s.ndigits; x++)
        printf(" %d", xchg_radix_nsteps(&s, x));
    printf("\nblock i>j is the block of rank i for rank j; %s\n",
           opt->all_ranks ? "every rank's messages"
                          : "rank 0's messages (every rank sends the same, shifted by its rank)");
    if (xchg_radix_simulate(&s, &visitor) != 0) {
        fprintf(stderr, "xchg-sched: out of memory for p=%d\n", s.nranks);
        return 1;
    }
    printf("\nC1 = %d rounds; paper: ceil((r-1)/k) * ceil(log_r p) = %d * %d = %d%s\n", s.nrounds,
           s.rounds_per_subphase, s.ndigits, xchg_radix_paper_c1(&s),
           s.nrounds == xchg_radix_paper_c1(&s) ? ""
                                                : " (an upper bound: the last subphase "
                                                  "has fewer steps, Appendix A)");
    printf("C2 = %zu bytes (sum over rounds of the largest message); paper's bound: "
           "b * ceil((r-1)/k) * ceil(p/r) * ceil(log_r p) = %zu%s\n",
           xchg_radix_c2(&s) * b, xchg_radix_paper_c2_bound(&s) * b,
           xchg_radix_c2(&s) > xchg_radix_paper_c2_bound(&s)
               ? " (exceeded: with k > 1 a last-subphase message can hold more than "
                 "ceil(p/r) blocks; see algos/sched/radix.h)"
               : "");
    return 0;
}

/* ---- allgather circulant ---- */

typedef struct circ_printer {
    const xchg_circ_t *plan;
    int all_ranks;
    int last_round;
} circ_printer_t;

static void circ_message(void *arg, const xchg_circ_msg_t *msg)
{
    circ_printer_t *pr = arg;
    size_t b = pr->plan->block_bytes, total = b * (size_t)pr->plan->nranks;
    size_t pos = msg->start, left = msg->bytes;

    if (msg->round != pr->last_round) {
        int last = msg->round == pr->plan->nrounds - 1;
        printf("\nround %d%s:\n", msg->round, last ? " (last: the table areas)" : "");
        pr->last_round = msg->round;
    }
    if (!pr->all_ranks && msg->src != 0)
        return;
    printf("    %d -> %d (offset %d):", msg->src, msg->dst, msg->offset);
    while (left > 0) {
        size_t block = pos / b, row = pos % b;
        size_t take = b - row < left ? b - row : left;
        if (take == b)
            printf(" B%zu", block);
        else
            printf(" B%zu[%zu..%zu]", block, row, row + take - 1);
        left -= take;
        pos = (pos + take) % total;
    }
    printf("  (%zu bytes)\n", msg->bytes);
}

static int show_circulant(const options_t *opt)
{
    int k = xchg_circ_ports((int)opt->p, opt->k > 1000000 ? 1000000 : (int)opt->k);
    xchg_circ_area_t *areas = malloc((size_t)k * sizeof *areas);
    xchg_circ_t plan;
    circ_printer_t pr = {&plan, opt->all_ranks, -1};
    xchg_circ_visitor_t visitor = {circ_message, NULL, &pr};
    size_t lower, c2;

    if (!areas) {
        fprintf(stderr, "xchg-sched: out of memory\n");
        return 1;
    }
    xchg_circ_plan(&plan, (int)opt->p, k, (size_t)opt->b, areas);
    printf("%s %s: p=%d k=%d, b=%zu bytes per block%s\n", xchg_coll_name(opt->algo->coll),
           opt->algo->name, plan.nranks, plan.nports, plan.block_bytes,
           opt->k > plan.nports ? " (k above p-1 acts as p-1)" : "");
    printf("d = ceil(log_%d %d) = %d rounds; n1 = %d blocks held before the last round, "
           "n2 = %d brought by it\n",
           plan.nports + 1, plan.nranks, plan.nrounds, plan.n1, plan.n2);
    if (plan.nrounds > 0) {
        printf("last round: table of %d columns (blocks i+%d .. i+%d of rank i) x %zu bytes in "
               "%d areas of at most %zu bytes (ceil(b*n2/k) = %zu)\n",
               plan.n2, plan.n1, plan.nranks - 1, plan.block_bytes, plan.nareas, plan.last_cap,
               (plan.block_bytes * (size_t)plan.n2 + (size_t)plan.nports - 1) /
                   (size_t)plan.nports);
        for (int a = 0; a < plan.nareas; a++) {
            size_t first = areas[a].first_cell, end = first + areas[a].bytes - 1;
            printf("  area %d: cells %zu..%zu (column %zu row %zu to column %zu row %zu), "
                   "offset %d (tree node %d feeds column %d)\n",
                   a + 1, first, end, first / plan.block_bytes, first % plan.block_bytes,
                   end / plan.block_bytes, end % plan.block_bytes, areas[a].offset, areas[a].feeder,
                   areas[a].column);
        }
    }
    printf("Bq is block q (from rank q), Bq[u..v] its bytes u..v; rank i sends to i - offset "
           "(Appendix B);\n%s\n",
           opt->all_ranks ? "every rank's messages"
                          : "rank 0's messages (every rank sends the same, shifted by its rank)");
    xchg_circ_simulate(&plan, &visitor);
    lower = xchg_circ_c2_lower(plan.nranks, plan.nports, plan.block_bytes);
    c2 = xchg_circ_c2(&plan);
    printf("\nC1 = %d rounds; paper: ceil(log_{k+1} p) = %d (optimal)\n", plan.nrounds,
           plan.nrounds);
    printf("C2 = %zu bytes (sum over rounds of the largest message); paper: "
           "ceil(b(p-1)/k) = %zu%s\n",
           c2, lower,
           c2 == lower ? " (optimal, Theorem 4.3)"
           : plan.excluded
               ? " (p, b, k lie in the range Proposition 4.2 excludes: C1 kept optimal, C2 at "
                 "most b-1 above, the paper's Remark)"
               : " (above the bound)");
    free(areas);
    return 0;
}

/* ---- alltoall hier ---- */

#define HIER_MAX_NODES 4096
#define HIER_MAX_RANKS 65536
#define HIER_SHOW_RANKS 64

typedef struct hier_options {
    int nnodes, nranks, mode, messages;
    long k;
    int *size; /* [HIER_MAX_NODES] */
} hier_options_t;

/* "S1,S2,...": the ranks of every node. */
static int parse_nodes(const char *arg, const char *list, hier_options_t *opt)
{
    const char *at = list;
    opt->nnodes = opt->nranks = 0;
    while (*at) {
        char text[16];
        size_t len = strcspn(at, ",");
        long size;
        if (len == 0 || len >= sizeof text || opt->nnodes == HIER_MAX_NODES)
            return bad(arg, "nodes must be 1 to 4096 sizes separated by commas");
        memcpy(text, at, len);
        text[len] = '\0';
        if (parse_long(text, 1, HIER_MAX_RANKS, &size) != 0 || opt->nranks + size > HIER_MAX_RANKS)
            return bad(arg, "every node holds at least 1 rank, all together at most 65536");
        opt->size[opt->nnodes++] = (int)size;
        opt->nranks += (int)size;
        at += len;
        if (*at == ',' && *++at == '\0')
            return bad(arg, "nodes must not end with a comma");
    }
    return opt->nnodes > 0 ? 0 : bad(arg, "nodes must list at least one size");
}

static int parse_hier(const xchg_algo_t *algo, int argc, char **argv, hier_options_t *opt)
{
    int show = -1, rc, known;
    xchg_params_t params = {0};
    opt->k = 1;
    opt->mode = XCHG_FACTOR_EARLY;
    opt->nnodes = 0;
    for (int i = 3; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        const char *value = eq ? eq + 1 : "";
        size_t keylen = eq ? (size_t)(eq - argv[i]) : 0;
        if (!eq)
            return bad(argv[i], "expected KEY=VALUE");
        known = algo_key(algo, argv[i], &params);
        if (known < 0)
            return 2;
        if (known)
            continue;
        if (keylen == 5 && strncmp(argv[i], "nodes", 5) == 0) {
            if ((rc = parse_nodes(argv[i], value, opt)) != 0)
                return rc;
        } else if (keylen == 4 && strncmp(argv[i], "mode", 4) == 0) {
            if (strcmp(value, "early") != 0 && strcmp(value, "plain") != 0)
                return bad(argv[i], "mode must be early or plain");
            opt->mode = value[0] == 'e' ? XCHG_FACTOR_EARLY : XCHG_FACTOR_PLAIN;
        } else if (keylen == 4 && strncmp(argv[i], "show", 4) == 0) {
            if (strcmp(value, "all") != 0 && strcmp(value, "rounds") != 0)
                return bad(argv[i], "show must be all or rounds");
            show = value[0] == 'a';
        } else {
            return unknown_key(argv[i], algo, "nodes, mode, show");
        }
    }
    opt->k = params.nports > 0 ? params.nports : opt->k;
    if (opt->nnodes == 0)
        return bad(argv[argc - 1], "missing nodes=S1,S2,..., the ranks of every node");
    opt->messages = show >= 0 ? show : opt->nranks <= HIER_SHOW_RANKS;
    return 0;
}

/* The pairs of nodes of a round: "node X with node Y (S steps)", "node X inside (S steps)". */
static void print_pairs(const xchg_factor_t *f, int ph, int round)
{
    int first = f->shape.phase_first[ph], done, current;
    xchg_factor_phase_range(&f->shape, ph, &done, &current);
    for (int a = first; a < f->shape.nnodes; a++) {
        int b = xchg_factor_partner_at(&f->shape, ph, round, a);
        int size_b = xchg_factor_size_at(&f->shape, b), steps = 0;
        if (b < a)
            continue;
        if (b == a) {
            /* inside a node: in every phase (plain) or in the first (early) */
            steps = f->mode == XCHG_FACTOR_PLAIN || ph == 0 ? size_b - 1 : 0;
            printf("%s node %d inside (%d step%s)", a > first ? "," : "", f->order[a], steps,
                   steps == 1 ? "" : "s");
        } else {
            steps = (current - done) * size_b;
            printf("%s node %d with node %d (%d step%s)", a > first ? "," : "", f->order[a],
                   f->order[b], steps, steps == 1 ? "" : "s");
        }
    }
    printf("\n");
}

/* Every step of a round, batch by batch: u<>v an exchange between nodes, u>v a send inside a
 * node. */
static void print_steps(const xchg_factor_t *f, int ph, int round, int steps, long k,
                        xchg_factor_slot_t *slots)
{
    int most = xchg_factor_max_slots(f);
    int *count = malloc((size_t)f->nranks * sizeof *count);
    if (!count)
        return;
    for (int u = 0; u < f->nranks; u++)
        count[u] = xchg_factor_rank_slots(f, ph, round, u, slots + (size_t)u * most);
    for (int t = 0; t < steps; t++) {
        if (k > 1 && t % k == 0)
            printf("    batch %ld (steps %d..%ld):\n", t / k, t,
                   t + k - 1 < steps - 1 ? t + k - 1 : steps - 1);
        printf("    %sstep %d:", k > 1 ? "  " : "", t);
        for (int u = 0; u < f->nranks; u++)
            for (int e = 0; e < count[u]; e++) {
                const xchg_factor_slot_t *s = &slots[(size_t)u * most + e];
                int here = f->node_of[u], there = f->node_of[s->peer];
                if (s->step != t)
                    continue;
                if (here != there && f->pos[here] < f->pos[there])
                    printf(" %d<>%d", u, s->peer);
                else if (here == there && s->send)
                    printf(" %d>%d", u, s->peer);
            }
        printf("\n");
    }
    free(count);
}

static void print_hier_summary(const xchg_factor_t *f, const hier_options_t *opt)
{
    const xchg_factor_shape_t *s = &f->shape;
    long steps = xchg_factor_steps(s, opt->mode);
    long other = xchg_factor_steps(s, opt->mode == XCHG_FACTOR_EARLY ? XCHG_FACTOR_PLAIN
                                                                     : XCHG_FACTOR_EARLY);
    printf("\nsteps (k = 1): %ld; %ld with mode=%s\n", steps, other,
           opt->mode == XCHG_FACTOR_EARLY ? "plain (Fig. 2: intra-node sends in every phase)"
                                          : "early (Section 4: intra-node work in the first phase, "
                                            "as the algorithm runs)");
    printf("the paper's count (a node's messages one after the other): %ld without the blocks "
           "to self (Fig. 3's caption counts so), %ld with them = Theorem 1's max size %d x p "
           "%d\n",
           xchg_factor_paper_steps(s, 0), xchg_factor_paper_steps(s, 1), f->max_size, f->nranks);
    printf("batches with k=%ld (one xchg_exchange each; at most k inter-node steps of a node in "
           "flight): %ld\n",
           opt->k, xchg_factor_batches(s, opt->mode, opt->k > 1000000 ? 1000000 : (int)opt->k));
}

static int show_hier(const xchg_algo_t *algo, int argc, char **argv)
{
    static int size[HIER_MAX_NODES];
    hier_options_t opt = {0, 0, 0, 0, 1, size};
    xchg_factor_t f;
    int rc = parse_hier(algo, argc, argv, &opt), *node_of = NULL;
    void *ws = NULL;
    xchg_factor_slot_t *slots = NULL;

    if (rc != 0)
        return rc;
    node_of = malloc((size_t)opt.nranks * sizeof *node_of);
    ws = malloc(xchg_factor_workspace_bytes(opt.nranks, opt.nnodes));
    for (int x = 0, u = 0; node_of && x < opt.nnodes; x++)
        for (int j = 0; j < opt.size[x]; j++)
            node_of[u++] = x;
    if (!node_of || !ws || xchg_factor_init(&f, opt.nranks, opt.nnodes, node_of, opt.mode, ws)) {
        fprintf(stderr, "xchg-sched: out of memory\n");
        free(node_of);
        free(ws);
        return 1;
    }
    if (opt.messages)
        slots = malloc((size_t)opt.nranks * xchg_factor_max_slots(&f) * sizeof *slots);
    printf("%s %s: p=%d on %d node%s, k=%ld, mode=%s\n", xchg_coll_name(algo->coll), algo->name,
           opt.nranks, opt.nnodes, opt.nnodes == 1 ? "" : "s", opt.k,
           opt.mode == XCHG_FACTOR_EARLY ? "early (as the algorithm runs)" : "plain (Fig. 2)");
    printf("node order (size, id):");
    for (int a = 0; a < f.shape.nnodes; a++) {
        int x = f.order[a], n = f.first[x + 1] - f.first[x];
        if (n == 1)
            printf(" node %d (1 rank: %d)", x, f.members[f.first[x]]);
        else
            printf(" node %d (%d ranks: %d..%d)", x, n, f.members[f.first[x]],
                   f.members[f.first[x + 1] - 1]);
    }
    printf("\n%s", opt.messages
                       ? "u<>v: u and v exchange their blocks; u>v: u sends its block for v "
                         "inside a node\n"
                       : "");
    for (int ph = 0; ph < f.shape.nphases; ph++) {
        int done, current;
        xchg_factor_phase_range(&f.shape, ph, &done, &current);
        printf("\nphase %d: done=%d current=%d, %d active node%s: %d round%s\n", ph + 1, done,
               current, xchg_factor_nrounds(&f.shape, ph),
               xchg_factor_nrounds(&f.shape, ph) == 1 ? "" : "s", xchg_factor_nrounds(&f.shape, ph),
               xchg_factor_nrounds(&f.shape, ph) == 1 ? "" : "s");
        for (int i = 0; i < xchg_factor_nrounds(&f.shape, ph); i++) {
            int exchange, local, steps;
            xchg_factor_round_steps(&f.shape, opt.mode, ph, i, &exchange, &local);
            steps = exchange > local ? exchange : local;
            printf("  round %d (%d step%s):", i + 1, steps, steps == 1 ? "" : "s");
            print_pairs(&f, ph, i);
            if (slots)
                print_steps(&f, ph, i, steps, opt.k, slots);
        }
    }
    print_hier_summary(&f, &opt);
    free(slots);
    free(node_of);
    free(ws);
    return 0;
}

/* ---- alltoall torus ---- */

/* One message: port, peer, hops, bytes and its blocks (* relayed: not the node's own). */
static void print_torus_message(const xchg_torus_t *t, int k, int node, int port,
                                xchg_torus_block_t *blocks, int max, long b)
{
    static const char *const ports[XCHG_TORUS_NPORTS] = {"+x", "+y", "-x", "-y"};
    int peer, hops, n = xchg_torus_message(t, k, node, port, blocks, max, &peer, &hops);
    if (n <= 0)
        return;
    printf("  node %d %s -> %d (%d hop%s, %zu bytes):", node, ports[port], peer, hops,
           hops == 1 ? "" : "s", (size_t)n * xchg_torus_part_bytes(t, (size_t)b, blocks[0].part));
    for (int i = 0; i < n; i++) {
        printf(" %d>%d", blocks[i].origin, blocks[i].dest);
        if (t->nparts > 1)
            printf(".%d", blocks[i].part);
        if (blocks[i].origin != node)
            putchar('*');
    }
    putchar('\n');
}

/* The steps and bytes next to the paper's figures and the bound on bytes. */
static void print_torus_summary(const xchg_torus_t *t, long b)
{
    static const char *const kinds[] = {"", "ring (AR; neighbour relay for odd p)", "torus (AT2)",
                                        "torus (split: rows and columns)"};
    int r = t->rows < t->cols ? t->rows : t->cols, c = t->rows < t->cols ? t->cols : t->rows;
    double bound = 0, units = (double)xchg_torus_units(t) / t->nparts;
    for (int dim = 0; dim < 2; dim++) {
        int n = dim ? t->cols : t->rows, other = dim ? t->rows : t->cols;
        double sum = 0;
        for (int i = 0; i < n; i++)
            sum += i < n - i ? i : n - i;
        bound = other * sum / 2 > bound ? other * sum / 2 : bound;
    }
    printf("steps (start-ups): %d; transmission: %.1f blocks (%.0f bytes); bound on bytes: %.1f "
           "blocks (busiest dimension's links)\n",
           t->nsteps, units, units * (double)b, bound);
    if (t->kind == XCHG_TORUS_RING && t->cols % 2 == 0 && t->cols >= 4)
        printf("paper (Lemma 2): p/2 = %d steps, ceil(p^2/8) = %d blocks\n", t->cols / 2,
               (t->cols * t->cols + 7) / 8);
    if (t->kind == XCHG_TORUS_AT2 && r % 4 == 0 && c % 4 == 0)
        printf("paper (Lemma 4): c/2 + 2 = %d steps, r c^2/8 = %d blocks\n", c / 2 + 2,
               r * c * c / 8);
    printf("schedule: %s\n", kinds[t->kind]);
}

static int show_torus(const xchg_algo_t *algo, int argc, char **argv)
{
    int rows = 0, cols = 0, show = -1, most = 1;
    long b = 1;
    xchg_torus_t t;
    xchg_torus_block_t *blocks;

    for (int i = 3; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        xchg_params_t params = {0};
        int known = algo_key(algo, argv[i], &params);
        if (known < 0)
            return 2;
        if (known) {
            rows = params.dims_r;
            cols = params.dims_c;
            if ((long)rows * cols > 4096)
                return bad(argv[i], "at most 4096 nodes here");
        } else if (eq && strncmp(argv[i], "b=", 2) == 0) {
            if (parse_long(eq + 1, 1, 1L << 40, &b) != 0)
                return bad(argv[i], "b must be an integer >= 1 (bytes per block)");
        } else if (eq && strncmp(argv[i], "show=", 5) == 0) {
            if (strcmp(eq + 1, "all") != 0 && strcmp(eq + 1, "node0") != 0)
                return bad(argv[i], "show must be all or node0");
            show = strcmp(eq + 1, "all") == 0;
        } else {
            return unknown_key(argv[i], algo, "b, show");
        }
    }
    if (rows == 0)
        return bad(argv[argc - 1], "missing dims=RxC (a torus) or dims=P (a ring)");
    if (xchg_torus_init(&t, rows, cols) != 0) {
        fprintf(stderr, "xchg-sched: out of memory\n");
        return 1;
    }
    for (int k = 0; k < t.nsteps; k++)
        most = t.step_units[k] > most ? (int)t.step_units[k] : most;
    blocks = malloc((size_t)most * sizeof *blocks);
    if (!blocks) {
        xchg_torus_free(&t);
        fprintf(stderr, "xchg-sched: out of memory\n");
        return 1;
    }
    show = show >= 0 ? show : t.nodes <= 64;
    printf("%s %s dims=%dx%d: %d nodes (node x*%d+y), b=%ld%s\n", xchg_coll_name(algo->coll),
           algo->name, t.rows, t.cols, t.nodes, t.cols, b,
           t.nparts > 1 ? ", every block in two parts (.0: row first, .1: column first)" : "");
    for (int k = 0; k < t.nsteps; k++) {
        printf("step %d: largest message %ld unit%s, at most %d message%s per node\n", k,
               t.step_units[k], t.step_units[k] == 1 ? "" : "s", t.step_msgs[k],
               t.step_msgs[k] == 1 ? "" : "s");
        for (int node = 0; node < (show ? t.nodes : 1); node++)
            for (int q = 0; q < XCHG_TORUS_NPORTS; q++)
                print_torus_message(&t, k, node, q, blocks, most, b);
    }
    print_torus_summary(&t, b);
    free(blocks);
    xchg_torus_free(&t);
    return 0;
}

static int run_radix(const xchg_algo_t *algo, int argc, char **argv)
{
    options_t opt;
    int rc = parse(algo, argc, argv, &opt);
    return rc != 0 ? rc : show_radix(&opt);
}

static int run_circulant(const xchg_algo_t *algo, int argc, char **argv)
{
    options_t opt;
    int rc = parse(algo, argc, argv, &opt);
    return rc != 0 ? rc : show_circulant(&opt);
}

/* ---- the subcommands ---- */

/* The printer of an entry, or NULL. */
static const printer_t *printer_of(const xchg_algo_t *algo)
{
    for (int i = 0; i < nprinters; i++)
        if (algo->schedule != XCHG_SCHEDULE_NONE && printers[i].schedule == algo->schedule)
            return &printers[i];
    return NULL;
}

/* 1 when coll has an entry with a printer */
static int coll_has_printer(int coll)
{
    for (int i = 0; i < xchg_nalgos; i++)
        if (xchg_algos[i].coll == coll && printer_of(&xchg_algos[i]))
            return 1;
    return 0;
}

/* The names of coll's entries with a printer, "radix, hier and torus" (last_word: "and" or
 * "or"); their count. */
static int printed_names(int coll, const char *last_word, char *out, size_t outlen)
{
    int n = 0, total = 0;
    size_t used = 0;
    for (int i = 0; i < xchg_nalgos; i++)
        total += xchg_algos[i].coll == coll && printer_of(&xchg_algos[i]);
    out[0] = '\0';
    for (int i = 0; i < xchg_nalgos && used < outlen; i++) {
        if (xchg_algos[i].coll != coll || !printer_of(&xchg_algos[i]))
            continue;
        n++;
        used += (size_t)snprintf(out + used, outlen - used, "%s%s",
                                 n == 1       ? ""
                                 : n == total ? " "
                                              : ", ",
                                 xchg_algos[i].name);
        if (n == total - 1 && used < outlen)
            used += (size_t)snprintf(out + used, outlen - used, " %s", last_word);
    }
    return total;
}

/* The collectives that have printers, "alltoall or allgather" ("NAMES for COLL, ..." when
 * with_names). */
static void printed_colls(int with_names, char *out, size_t outlen)
{
    char names[256];
    int n = 0, total = 0;
    size_t used = 0;
    for (int c = 0; c < XCHG_NCOLLS; c++)
        total += coll_has_printer(c);
    out[0] = '\0';
    for (int c = 0; c < XCHG_NCOLLS && used < outlen; c++) {
        const char *separator;
        if (!coll_has_printer(c))
            continue;
        n++;
        separator = n == 1 ? "" : with_names || n < total ? ", " : " or ";
        printed_names(c, "or", names, sizeof names);
        used +=
            (size_t)snprintf(out + used, outlen - used, "%s%s%s%s", separator,
                             with_names ? names : "", with_names ? " for " : "", xchg_coll_name(c));
    }
}

/* The subcommand "COLL NAME ...": the printer of the registry entry that NAME names. */
static int run_printer(int argc, char **argv)
{
    char text[512], why[600];
    int coll = -1, idx, n;
    const printer_t *printer;

    printed_colls(0, text, sizeof text);
    if (argc < 2) {
        snprintf(why, sizeof why, "missing the collective (%s)", text);
        return bad("", why);
    }
    for (int c = 0; c < XCHG_NCOLLS; c++)
        if (strcmp(argv[1], xchg_coll_name(c)) == 0 && coll_has_printer(c))
            coll = c;
    if (coll < 0) {
        snprintf(why, sizeof why, "the collective must be %s", text);
        return bad(argv[1], why);
    }
    if (argc < 3) {
        printed_colls(1, text, sizeof text);
        snprintf(why, sizeof why, "missing the algorithm (%s)", text);
        return bad(argv[1], why);
    }
    idx = xchg_algo_find(coll, argv[2]);
    printer = idx >= 0 ? printer_of(&xchg_algos[idx]) : NULL;
    if (!printer) {
        n = printed_names(coll, "and", text, sizeof text);
        snprintf(why, sizeof why, "the %s algorithm%s here %s %s", xchg_coll_name(coll),
                 n == 1 ? "" : "s", n == 1 ? "is" : "are", text);
        return bad(argv[2], why);
    }
    return printer->run(&xchg_algos[idx], argc, argv);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("xchg-sched %s\n", XCHG_VERSION);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "markdown") == 0) {
        xchg_registry_markdown(stdout); /* README.md's tables (test_readme checks them) */
        return 0;
    }
    return run_printer(argc, argv);
}

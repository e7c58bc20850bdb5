/*
 * xchg-sched: print the schedule of a Bruck algorithm before running it.
 *
 *   xchg-sched alltoall radix p=N [r=R] [k=K] [b=BYTES] [show=all|rank0]
 *   xchg-sched allgather circulant p=N [k=K] [b=BYTES] [show=all|rank0]
 *
 * For every round: who sends which blocks (or which bytes of which blocks) to whom, and how
 * many bytes; then C1 and C2 of the schedule next to the paper's formulas
 * (../shared/papers/002_0c74752dd805d1e2.txt, Sections 3 and 4). Defaults: r = 2, k = 1,
 * b = 1; show = all up to 16 ranks, rank0 above (every rank does the same, shifted by its
 * rank). The schedules are the ones the algorithms run (algos/sched/). No MPI is started.
 * A bad argument gives a message naming it, the usage, and exit status 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algos/sched/circulant.h"
#include "../../algos/sched/radix.h"

#define RADIX_MAX_RANKS 4096 /* the simulator keeps 3 p^2 ints */
#define CIRC_MAX_RANKS 1000000

typedef struct options {
    int alltoall; /* 1: alltoall radix, 0: allgather circulant */
    long p, r, k, b;
    int all_ranks;
} options_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: xchg-sched alltoall radix p=N [r=R] [k=K] [b=BYTES] [show=all|rank0]\n"
            "       xchg-sched allgather circulant p=N [k=K] [b=BYTES] [show=all|rank0]\n"
            "  p: ranks (1 .. %d for radix, .. %d for circulant); r: radix >= 2 (above p acts "
            "as p);\n"
            "  k: ports >= 1; b: bytes per block >= 1 (default 1); show: every rank's messages "
            "or rank 0's\n"
            "  (default: all up to 16 ranks)\n",
            RADIX_MAX_RANKS, CIRC_MAX_RANKS);
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

/* 0 when the arguments are good, else the exit status (2) after the message. */
static int parse(int argc, char **argv, options_t *opt)
{
    int show = -1;
    memset(opt, 0, sizeof *opt);
    opt->r = 2;
    opt->k = 1;
    opt->b = 1;
    if (argc < 2)
        return bad("", "missing the collective (alltoall or allgather)");
    if (strcmp(argv[1], "alltoall") == 0)
        opt->alltoall = 1;
    else if (strcmp(argv[1], "allgather") != 0)
        return bad(argv[1], "the collective must be alltoall or allgather");
    if (argc < 3)
        return bad(argv[1], "missing the algorithm (radix for alltoall, circulant for allgather)");
    if (strcmp(argv[2], opt->alltoall ? "radix" : "circulant") != 0)
        return bad(argv[2], opt->alltoall ? "the alltoall algorithm here is radix"
                                          : "the allgather algorithm here is circulant");
    for (int i = 3; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        const char *value = eq ? eq + 1 : "";
        size_t keylen = eq ? (size_t)(eq - argv[i]) : 0;
        long max_p = opt->alltoall ? RADIX_MAX_RANKS : CIRC_MAX_RANKS;
        if (!eq)
            return bad(argv[i], "expected KEY=VALUE");
        if (keylen == 1 && argv[i][0] == 'p') {
            if (parse_long(value, 1, max_p, &opt->p) != 0)
                return bad(argv[i], opt->alltoall ? "p must be an integer from 1 to 4096"
                                                  : "p must be an integer from 1 to 1000000");
        } else if (keylen == 1 && argv[i][0] == 'r' && opt->alltoall) {
            if (parse_long(value, 2, 1000000000L, &opt->r) != 0)
                return bad(argv[i], "r must be an integer >= 2");
        } else if (keylen == 1 && argv[i][0] == 'k') {
            if (parse_long(value, 1, 1000000000L, &opt->k) != 0)
                return bad(argv[i], "k must be an integer >= 1");
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
            return bad(argv[i], opt->alltoall ? "unknown key (keys: p, r, k, b, show)"
                                              : "unknown key (keys: p, k, b, show)");
        }
    }
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
    printf("alltoall radix: p=%d r=%d k=%d, b=%zu bytes per block%s\n", s.nranks, s.radix, s.nports,
           b, opt->r > opt->p && opt->p > 1 ? " (r above p acts as p)" : "");
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
    printf("allgather circulant: p=%d k=%d, b=%zu bytes per block%s\n", plan.nranks, plan.nports,
           plan.block_bytes, opt->k > plan.nports ? " (k above p-1 acts as p-1)" : "");
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

int main(int argc, char **argv)
{
    options_t opt;
    int rc = parse(argc, argv, &opt);
    if (rc != 0)
        return rc;
    return opt.alltoall ? show_radix(&opt) : show_circulant(&opt);
}

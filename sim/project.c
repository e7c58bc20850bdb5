/*
 * project.c: build/xchg-project, cost projections of MPI_Alltoall and MPI_Allgather to
 * 65 536 ranks against MPICH 4's default algorithms. Pure code: no MPI is started.
 *
 *   build/xchg-project                    the projection tables, Markdown, on standard output
 *   build/xchg-project --tsv              the same figures tab-separated, one line per row
 *   build/xchg-project --update FILE      replace the part of FILE between the lines
 *                                         <!-- xchg-project:begin --> and <!-- xchg-project:end -->
 *                                         with the tables (docs/projections.md; `make projections`)
 *   build/xchg-project --update FILE --sim build/xchg-sim
 *                                         also the part between <!-- xchg-project-sim:begin -->
 *                                         and <!-- xchg-project-sim:end -->: the rows of p <= 1024
 *                                         run on the simulator (flat network, the same constants),
 *                                         MPICH's schedule and the best xchg algorithm
 *
 * For every machine below, collective (alltoall, allgather), p in {64, 1024, 16384, 65536} and
 * block in {8 B, 256 B, 4 KiB, 64 KiB}, three predicted times, all from xchg's own cost models
 * (tuning/cost_*.c) with the machine's constants:
 *   - MPICH: the algorithm MPICH 4 runs by default (mpich_default: the thresholds of its CVARs,
 *     as its compiled-in selection tree applies them), priced by the xchg model of the same
 *     schedule. The same figure is what the registry's "native" entry predicts
 *     (tuning/cost_native.c); check_native() compares the two on a grid around every threshold
 *     and the tool fails when they differ, so a change to either rule is caught;
 *   - auto: what xchg's selection picks with no tuning table and nothing forced, found by
 *     calling the selection itself (xchg_decide, shim/select.c: the models' fastest xchg
 *     algorithm only when it is predicted XCHG_MODEL_MARGIN = 1.5 times faster than native,
 *     else native), with the machine's constants put where a tuning table's would be. Learning
 *     (shim/learn.c) is left out: it needs timings of the real program;
 *   - best: the models' fastest xchg algorithm, native left out (xchg_model_rank), with the
 *     parameters its model completes.
 * Ratios are MPICH's time over auto's and over best's: above 1 xchg is predicted faster.
 * The one-port variant prices MPICH's choice and every xchg algorithm again with k = 1 (each
 * message its own start-up; scattered becomes pairwise exchange): the start-ups that the
 * models overlap for k messages in flight decide most of the alltoall gains above.
 *
 * The machine is flat: one rank per node, every message at the same constants (call->topo
 * NULL, so no layout enters a model), with k messages in flight costing
 * beta + m tau (1 + port_share (k - 1)) (tuning/cost.h). port_share = 1 on every machine: each
 * node has one network interface, which the messages in flight share; their start-ups overlap,
 * their bytes do not. docs/projections.md gives the sources of the constants and what the
 * figures do not model (contention inside the network, per-message software overhead).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../shim/api.h"
#include "../tuning/cost.h"

#define MARK_BEGIN "<!-- xchg-project:begin -->"
#define MARK_END "<!-- xchg-project:end -->"
#define SIM_BEGIN "<!-- xchg-project-sim:begin -->"
#define SIM_END "<!-- xchg-project-sim:end -->"
#define SIM_MAX_P 1024 /* rows up to this p are simulated (--sim) */
#define DOC_MAX_BYTES (1 << 20)

/* MPICH 4.0's defaults, as MPI_T reports them for the installed libmpich (4.0.2) and as its
 * compiled-in selection tree (maint/tuning/coll/mpir/generic.json) uses them. */
#define MPICH_ALLTOALL_SHORT_MSG_SIZE 256    /* Bruck at or below, on 8 ranks or more */
#define MPICH_ALLTOALL_MEDIUM_MSG_SIZE 32768 /* scattered at or below, pairwise above */
#define MPICH_ALLTOALL_THROTTLE 32           /* scattered: sends and receives per batch */
#define MPICH_ALLGATHER_SHORT_MSG_SIZE 81920 /* p b below: Bruck (any p) */
#define MPICH_ALLGATHER_LONG_MSG_SIZE 524288 /* p b below on a power of two: recursive doubling */

typedef struct fabric {
    const char *name;
    xchg_machine_t machine;
} fabric_t;

/* Sources and reasons: docs/projections.md, "Constants". */
static const fabric_t fabrics[] = {
    {"IBM SP-1 (Bruck et al.)", {.beta = 29e-6, .tau = 0.12e-6, .rho = 0.0, .port_share = 1.0}},
    {"Intel Paragon (Liu et al.)",
     {.beta = 75e-6, .tau = 0.011e-6, .rho = 0.014e-6, .port_share = 1.0}},
    {"InfiniBand NDR 400 Gb/s (Azure HBv4)",
     {.beta = 2e-6, .tau = 8.0 / 400e9, .rho = 1e-10, .port_share = 1.0}},
};
#define NFABRICS (int)(sizeof fabrics / sizeof fabrics[0])

static const int ranks[] = {64, 1024, 16384, 65536};
static const size_t blocks[] = {8, 256, 4096, 65536};
static const int colls[] = {XCHG_ALLTOALL, XCHG_ALLGATHER};
#define NRANKS (int)(sizeof ranks / sizeof ranks[0])
#define NBLOCKS (int)(sizeof blocks / sizeof blocks[0])
#define NCOLLS (int)(sizeof colls / sizeof colls[0])

/* One algorithm with parameters and its predicted time. */
typedef struct pick {
    int algo; /* registry index */
    xchg_params_t params;
    double time;
    char label[96]; /* how the tables name it */
} pick_t;

typedef struct row {
    int coll, p;
    size_t block;
    pick_t mpich, automatic, best;
    pick_t mpich_one, best_one; /* one-port: every message its own start-up (k = 1) */
} row_t;

/* ---- MPICH 4's default choice ---- */

typedef struct mpich_choice {
    const char *label; /* MPICH's name of the algorithm */
    const char *algo;  /* the xchg algorithm with the same schedule */
    int radix, nports;
} mpich_choice_t;

static int is_pow2(int p)
{
    return p > 0 && (p & (p - 1)) == 0;
}

/* MPICH 4's intracommunicator selection for a call that is not MPI_IN_PLACE:
 *   alltoall:  p >= 8 and b <= SHORT: brucks (radix 2, one message per step);
 *              b <= MEDIUM: scattered (every message posted, THROTTLE sends and receives a
 *              batch; a batch waits for the previous one): pairwise with k = min(p - 1, 32);
 *              larger: pairwise (one exchange per step);
 *   allgather: p a power of two and p b < LONG: recursive doubling (log2 p steps, the held
 *              blocks doubling: circulant k = 1's schedule on a power of two);
 *              p b < SHORT: brucks (circulant k = 1); else ring. */
static mpich_choice_t mpich_default(int coll, int p, size_t b)
{
    size_t total = (size_t)p * b;
    int throttle = p - 1 < MPICH_ALLTOALL_THROTTLE ? (p > 1 ? p - 1 : 1) : MPICH_ALLTOALL_THROTTLE;

    if (coll == XCHG_ALLTOALL) {
        if (p >= 8 && b <= MPICH_ALLTOALL_SHORT_MSG_SIZE)
            return (mpich_choice_t){"brucks", "radix", 2, 1};
        if (b <= MPICH_ALLTOALL_MEDIUM_MSG_SIZE)
            return (mpich_choice_t){"scattered", "pairwise", 0, throttle};
        return (mpich_choice_t){"pairwise", "pairwise", 0, 1};
    }
    if (is_pow2(p) && total < MPICH_ALLGATHER_LONG_MSG_SIZE)
        return (mpich_choice_t){"recursive doubling", "circulant", 0, 1};
    if (total < MPICH_ALLGATHER_SHORT_MSG_SIZE)
        return (mpich_choice_t){"brucks", "circulant", 0, 1};
    return (mpich_choice_t){"ring", "ring", 0, 0};
}

static xchg_call_t make_call(int coll, int p, size_t b)
{
    xchg_call_t call = {0};
    call.coll = coll;
    call.comm_size = p;
    call.block_bytes = b; /* the size key of alltoall and allgather */
    return call;
}

static void name_pick(pick_t *pick)
{
    char params[64];
    xchg_params_format(&xchg_algos[pick->algo], &pick->params, params, sizeof params);
    snprintf(pick->label, sizeof pick->label, "%s%s%s", xchg_algos[pick->algo].name,
             params[0] ? ":" : "", params);
}

/* MPICH's choice, priced by the xchg model of the same schedule. -1 when the registry lacks
 * the algorithm (a registry change this tool has not followed). */
static int price_mpich(int coll, int p, size_t b, const xchg_machine_t *machine, int one_port,
                       pick_t *pick)
{
    mpich_choice_t c = mpich_default(coll, p, b);
    xchg_call_t call = make_call(coll, p, b);
    char params[64];

    memset(pick, 0, sizeof *pick);
    pick->algo = xchg_algo_find(coll, c.algo);
    if (pick->algo < 0) {
        fprintf(stderr, "xchg-project: the registry has no %s algorithm '%s'\n",
                xchg_coll_name(coll), c.algo);
        return -1;
    }
    pick->params.radix = c.radix;
    pick->params.nports = one_port && c.nports > 1 ? 1 : c.nports;
    pick->time = xchg_algos[pick->algo].cost(&call, machine, &pick->params);
    xchg_params_format(&xchg_algos[pick->algo], &pick->params, params, sizeof params);
    snprintf(pick->label, sizeof pick->label, "%s (%s%s%s)", c.label, c.algo, params[0] ? ":" : "",
             params);
    return 0;
}

/* tuning/cost_native.c must price native as MPICH's default: the same time as the xchg model
 * of mpich_default's schedule, at every p and block of a grid around the thresholds. Returns
 * the number of disagreements (each reported). */
static int check_native(void)
{
    static const int ps[] = {2,  3,   7,   8,   9,    31,   32,   33,    63,   64,
                             65, 100, 320, 640, 1000, 1024, 6400, 65535, 65536};
    static const size_t bs[] = {0,    1,    8,    255,  256,   257,   1024,  1280, 2047,
                                2048, 4096, 8191, 8192, 32767, 32768, 32769, 65536};
    int bad = 0, native[2] = {xchg_native_index(XCHG_ALLTOALL), xchg_native_index(XCHG_ALLGATHER)};

    if (native[0] < 0 || native[1] < 0) {
        fprintf(stderr, "xchg-project: the registry has no native entry\n");
        return 1;
    }
    for (int f = 0; f < NFABRICS; f++)
        for (int c = 0; c < NCOLLS; c++)
            for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
                for (size_t j = 0; j < sizeof bs / sizeof bs[0]; j++) {
                    xchg_call_t call = make_call(colls[c], ps[i], bs[j]);
                    xchg_params_t none = {0};
                    pick_t mine;
                    double theirs;
                    if (price_mpich(colls[c], ps[i], bs[j], &fabrics[f].machine, 0, &mine) != 0)
                        return bad + 1;
                    theirs = xchg_algos[native[c]].cost(&call, &fabrics[f].machine, &none);
                    if (fabs(theirs - mine.time) <= 1e-9 * fabs(mine.time))
                        continue;
                    if (bad++ < 10)
                        fprintf(stderr,
                                "xchg-project: %s %s p=%d block=%zu: native is priced %.6g s, "
                                "MPICH's default %s %.6g s (tuning/cost_native.c no longer "
                                "models MPICH's defaults)\n",
                                fabrics[f].name, xchg_coll_name(colls[c]), ps[i], bs[j], theirs,
                                mine.label, mine.time);
                }
    return bad;
}

/* ---- xchg's choices ---- */

/* The selection's inputs as in a job with no XCHG_* variable and no table: nothing forced,
 * no rules, the fabric's constants in the configuration's machine. */
static int configure(const xchg_machine_t *machine)
{
    static const char *vars[] = {"XCHG_ALLTOALL", "XCHG_ALLGATHER", "XCHG_ALLTOALLV", "XCHG_TUNING",
                                 "XCHG_DISABLE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    xchg_machine_t m = *machine;
    xchg_config_load();
    for (int coll = 0; coll < XCHG_NCOLLS; coll++)
        if (xchg_force(coll, "auto") != 0)
            return -1;
    if (xchg_api_table_rules() != 0)
        return -1;
    m.native = NULL; /* no measured curves: native by its model */
    xchg_api_set_machine(&m);
    return 0;
}

/* The fastest xchg algorithm when every message pays its own start-up: every algorithm with
 * a key k priced at k = 1 (its other parameters left to the model), the others as they are. */
static int best_one_port(const xchg_call_t *call, const xchg_machine_t *machine, pick_t *best)
{
    const char *why;
    memset(best, 0, sizeof *best);
    best->algo = -1;
    best->time = INFINITY;
    for (int i = 0; i < xchg_nalgos; i++) {
        xchg_params_t params = {0};
        double t;
        if (xchg_algos[i].coll != call->coll || xchg_algos[i].native ||
            !xchg_algos[i].applies(call, &params, &why))
            continue;
        if (xchg_algo_has_key(&xchg_algos[i], "k"))
            params.nports = 1;
        t = xchg_algos[i].cost(call, machine, &params);
        /* a tie within rounding keeps the earlier entry (pairwise before radix:r=p) */
        if (t < best->time * (1.0 - 1e-12)) {
            best->algo = i;
            best->params = params;
            best->time = t;
        }
    }
    if (best->algo < 0) {
        fprintf(stderr, "xchg-project: no xchg %s algorithm can serve p=%d\n",
                xchg_coll_name(call->coll), call->comm_size);
        return -1;
    }
    name_pick(best);
    return 0;
}

static int project_row(row_t *row, const fabric_t *fabric)
{
    xchg_call_t call = make_call(row->coll, row->p, row->block);
    xchg_choice_t ranked[XCHG_MAX_ALGOS];
    int n, native = xchg_native_index(row->coll);
    pick_t *a = &row->automatic, *best = &row->best;

    if (price_mpich(row->coll, row->p, row->block, &fabric->machine, 0, &row->mpich) != 0 ||
        price_mpich(row->coll, row->p, row->block, &fabric->machine, 1, &row->mpich_one) != 0 ||
        best_one_port(&call, &fabric->machine, &row->best_one) != 0)
        return -1;

    memset(a, 0, sizeof *a);
    a->algo = xchg_decide(&call, &a->params, NULL, 0);
    a->time = a->algo == native ? row->mpich.time
                                : xchg_algos[a->algo].cost(&call, &fabric->machine, &a->params);
    name_pick(a);

    memset(best, 0, sizeof *best);
    best->algo = -1;
    n = xchg_model_rank(&call, ranked, XCHG_MAX_ALGOS);
    for (int i = 0; i < n && best->algo < 0; i++) {
        if (ranked[i].algo == native)
            continue;
        best->algo = ranked[i].algo;
        best->params = ranked[i].params;
        best->time = ranked[i].time;
    }
    if (best->algo < 0) {
        fprintf(stderr, "xchg-project: no xchg %s algorithm can serve p=%d\n",
                xchg_coll_name(row->coll), row->p);
        return -1;
    }
    name_pick(best);
    return 0;
}

/* ---- output ---- */

/* A time with a unit that keeps 3 to 4 significant digits readable. */
static void format_time(double seconds, char *out, size_t len)
{
    if (seconds < 1e-3)
        snprintf(out, len, "%.1f us", seconds * 1e6);
    else if (seconds < 1.0)
        snprintf(out, len, "%.2f ms", seconds * 1e3);
    else
        snprintf(out, len, "%.3f s", seconds);
}

static void format_block(size_t b, char *out, size_t len)
{
    if (b >= 1024 && b % 1024 == 0)
        snprintf(out, len, "%zu KiB", b / 1024);
    else
        snprintf(out, len, "%zu B", b);
}

/* rows[] in the order main fills it: machine, collective, ranks, block. */
static const row_t *row_at(const row_t *rows, int f, int c, int r, int b)
{
    return &rows[((f * NCOLLS + c) * NRANKS + r) * NBLOCKS + b];
}

static void print_main_table(FILE *out, const row_t *rows, int f, int c)
{
    fprintf(out,
            "\n**MPI_%s**\n\n"
            "| p | block | MPICH 4 default | time | xchg auto | time | MPICH/auto | best xchg | "
            "time | MPICH/best |\n"
            "|---:|---:|---|---:|---|---:|---:|---|---:|---:|\n",
            colls[c] == XCHG_ALLTOALL ? "Alltoall" : "Allgather");
    for (int r = 0; r < NRANKS; r++)
        for (int b = 0; b < NBLOCKS; b++) {
            const row_t *row = row_at(rows, f, c, r, b);
            char blk[32], tm[32], ta[32], tb[32];
            format_block(row->block, blk, sizeof blk);
            format_time(row->mpich.time, tm, sizeof tm);
            format_time(row->automatic.time, ta, sizeof ta);
            format_time(row->best.time, tb, sizeof tb);
            fprintf(out, "| %d | %s | %s | %s | %s | %s | %.2f | %s | %s | %.2f |\n", row->p, blk,
                    row->mpich.label, tm, row->automatic.label, ta,
                    row->mpich.time / row->automatic.time, row->best.label, tb,
                    row->mpich.time / row->best.time);
        }
}

/* One table per machine: both collectives with every message paying its own start-up. */
static void print_one_port_table(FILE *out, const row_t *rows, int f)
{
    fprintf(out,
            "\n**%s, one-port**\n\n"
            "| p | block | alltoall: MPICH 4 default | best xchg | MPICH/best | "
            "allgather: MPICH 4 default | best xchg | MPICH/best |\n"
            "|---:|---:|---|---|---:|---|---|---:|\n",
            fabrics[f].name);
    for (int r = 0; r < NRANKS; r++)
        for (int b = 0; b < NBLOCKS; b++) {
            char blk[32];
            format_block(blocks[b], blk, sizeof blk);
            fprintf(out, "| %d | %s", ranks[r], blk);
            for (int c = 0; c < NCOLLS; c++) {
                const row_t *row = row_at(rows, f, c, r, b);
                char tm[32], tb[32];
                format_time(row->mpich_one.time, tm, sizeof tm);
                format_time(row->best_one.time, tb, sizeof tb);
                fprintf(out, " | %s %s | %s %s | %.2f", row->mpich_one.label, tm,
                        row->best_one.label, tb, row->mpich_one.time / row->best_one.time);
            }
            fprintf(out, " |\n");
        }
}

static void print_markdown(FILE *out, const row_t *rows)
{
    for (int f = 0; f < NFABRICS; f++) {
        const xchg_machine_t *m = &fabrics[f].machine;
        fprintf(out, "### %s\n\nbeta = %g us, tau = %g ns/B, rho = %g ns/B, port_share = %g\n",
                fabrics[f].name, m->beta * 1e6, m->tau * 1e9, m->rho * 1e9, m->port_share);
        for (int c = 0; c < NCOLLS; c++)
            print_main_table(out, rows, f, c);
        fprintf(out, "\n");
    }
    fprintf(out, "### One-port variant\n\nThe same constants, but every message pays its own "
                 "start-up: every algorithm priced with k = 1 (MPICH's scattered becomes a "
                 "pairwise exchange, one message at a time).\n");
    for (int f = 0; f < NFABRICS; f++)
        print_one_port_table(out, rows, f);
    fprintf(out, "\n");
}

/* Tab-separated, one line per row, a header first (labels hold commas: "radix:r=2,k=1"). */
static void print_tsv(FILE *out, const row_t *rows)
{
    int i = 0;
    fprintf(out, "machine\tcollective\tp\tblock\tmpich\tmpich_s\tauto\tauto_s\tbest\tbest_s\t"
                 "mpich_over_auto\tmpich_over_best\tmpich_one\tmpich_one_s\tbest_one\t"
                 "best_one_s\tone_port_mpich_over_best\n");
    for (int f = 0; f < NFABRICS; f++)
        for (int c = 0; c < NCOLLS; c++)
            for (int r = 0; r < NRANKS * NBLOCKS; r++, i++) {
                const row_t *row = &rows[i];
                fprintf(out,
                        "%s\t%s\t%d\t%zu\t%s\t%.9g\t%s\t%.9g\t%s\t%.9g\t%.6g\t%.6g\t%s\t%.9g\t"
                        "%s\t%.9g\t%.6g\n",
                        fabrics[f].name, xchg_coll_name(row->coll), row->p, row->block,
                        row->mpich.label, row->mpich.time, row->automatic.label,
                        row->automatic.time, row->best.label, row->best.time,
                        row->mpich.time / row->automatic.time, row->mpich.time / row->best.time,
                        row->mpich_one.label, row->mpich_one.time, row->best_one.label,
                        row->best_one.time, row->mpich_one.time / row->best_one.time);
            }
}

/* Read all of path (at most DOC_MAX_BYTES); NULL with a message on failure. */
static char *read_doc(const char *path)
{
    FILE *in = fopen(path, "rb");
    char *text;
    size_t n;

    if (!in) {
        fprintf(stderr, "xchg-project: --update %s: %s\n", path, strerror(errno));
        return NULL;
    }
    text = malloc(DOC_MAX_BYTES + 1);
    n = text ? fread(text, 1, DOC_MAX_BYTES + 1, in) : 0;
    fclose(in);
    if (!text || n > DOC_MAX_BYTES) {
        fprintf(stderr, "xchg-project: --update %s: %s\n", path,
                text ? "larger than 1 MiB" : "out of memory");
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

/* ---- simulated figures (build/xchg-sim, --sim) ---- */

typedef struct simulated {
    int ran; /* 1: simulated; 0: the simulator refused the size (its memory limit) */
    double sim, model, wall;
    long maxrss_kb;
} simulated_t;

static void spec_of(const pick_t *pick, char *out, size_t len)
{
    char params[64];
    xchg_params_format(&xchg_algos[pick->algo], &pick->params, params, sizeof params);
    snprintf(out, len, "%s%s%s", xchg_algos[pick->algo].name, params[0] ? ":" : "", params);
}

/* One run of the simulator (its --csv line); -1 with a message when it failed otherwise than by
 * refusing the size. The params field may hold commas, so the fields are counted from the end:
 * ...,sim_s,model_s,model_over_sim,rounds_max,rounds_min,sent_max_bytes,messages,agree_s,
 * wall_s,maxrss_kb. */
static int simulate(const char *sim, const xchg_machine_t *m, const row_t *row, const pick_t *pick,
                    simulated_t *out)
{
    char spec[96], cmd[1024], line[1024], last[1024] = "", *field[40];
    int n = 0, status;
    FILE *pipe;

    spec_of(pick, spec, sizeof spec);
    snprintf(cmd, sizeof cmd,
             "'%s' %s '%s' p=%d bytes=%zu --net flat --beta %.17g --tau %.17g --rho %.17g "
             "--port-share %.17g --csv 2>&1",
             sim, xchg_coll_name(row->coll), spec, row->p, row->block, m->beta, m->tau, m->rho,
             m->port_share);
    memset(out, 0, sizeof *out);
    pipe = popen(cmd, "r");
    if (!pipe) {
        fprintf(stderr, "xchg-project: cannot run %s: %s\n", sim, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof line, pipe))
        if (line[0] != '\n')
            snprintf(last, sizeof last, "%s", line);
    status = pclose(pipe);
    last[strcspn(last, "\n")] = '\0';
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 2 && strstr(last, "mem-limit"))
        return 0; /* refused: the buffers of p ranks do not fit */
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "xchg-project: %s failed: %s\n", cmd, last);
        return -1;
    }
    for (char *at = last; n < 40; at++) {
        field[n++] = at;
        if (!(at = strchr(at, ',')))
            break;
        *at = '\0';
    }
    if (n < 15) {
        fprintf(stderr, "xchg-project: %s: not a result line: %s\n", cmd, last);
        return -1;
    }
    out->ran = 1;
    out->sim = atof(field[n - 10]);
    out->model = atof(field[n - 9]);
    out->wall = atof(field[n - 2]);
    out->maxrss_kb = atol(field[n - 1]);
    return 0;
}

static void print_sim_cell(FILE *out, const simulated_t *s)
{
    char t[32];
    if (!s->ran) {
        fprintf(out, " | not simulated (buffers above 8 GiB) | -");
        return;
    }
    format_time(s->sim, t, sizeof t);
    fprintf(out, " | %s | %.2f", t, s->model / s->sim);
}

/* The simulated rows (p <= SIM_MAX_P): MPICH's schedule and the best xchg algorithm, each
 * simulated, with the model's time over the simulated one. 0, or -1 when a run failed. */
static int print_simulated(FILE *out, const row_t *rows, const char *sim)
{
    double total = 0.0, largest = 0.0;
    long largest_kb = 0;

    for (int f = 0; f < NFABRICS; f++) {
        fprintf(out,
                "%s**%s, simulated**\n\n"
                "| collective | p | block | MPICH 4 default | simulated | model/simulated | "
                "best xchg | simulated | model/simulated | MPICH/best, simulated |\n"
                "|---|---:|---:|---|---:|---:|---|---:|---:|---:|\n",
                f > 0 ? "\n" : "", fabrics[f].name);
        for (int c = 0; c < NCOLLS; c++)
            for (int r = 0; r < NRANKS && ranks[r] <= SIM_MAX_P; r++)
                for (int b = 0; b < NBLOCKS; b++) {
                    const row_t *row = row_at(rows, f, c, r, b);
                    simulated_t s[2];
                    char blk[32];
                    if (simulate(sim, &fabrics[f].machine, row, &row->mpich, &s[0]) != 0 ||
                        simulate(sim, &fabrics[f].machine, row, &row->best, &s[1]) != 0)
                        return -1;
                    for (int i = 0; i < 2; i++) {
                        total += s[i].wall;
                        if (s[i].ran && s[i].wall >= largest) {
                            largest = s[i].wall;
                            largest_kb = s[i].maxrss_kb;
                        }
                    }
                    format_block(row->block, blk, sizeof blk);
                    fprintf(out, "| %s | %d | %s | %s", xchg_coll_name(row->coll), row->p, blk,
                            row->mpich.label);
                    print_sim_cell(out, &s[0]);
                    fprintf(out, " | %s", row->best.label);
                    print_sim_cell(out, &s[1]);
                    if (s[0].ran && s[1].ran)
                        fprintf(out, " | %.2f |\n", s[0].sim / s[1].sim);
                    else
                        fprintf(out, " | - |\n");
                }
    }
    fprintf(out,
            "\nSimulator runs: %.0f s of wall time in all; the longest %.1f s with a peak of "
            "%ld MiB (resident set of the simulator process).\n\n",
            total, largest, largest_kb / 1024);
    return 0;
}

/* text with what lies between the line `begin` and the line `end` replaced by the output of
 * body(out, rows, sim) (a blank line first); NULL with a message when the lines are missing or
 * body fails. */
typedef int body_fn(FILE *out, const row_t *rows, const char *sim);

static char *replace_region(const char *path, const char *text, const char *begin_mark,
                            const char *end_mark, body_fn *body, const row_t *rows, const char *sim)
{
    char begin_line[64], end_line[64], *result = NULL;
    const char *begin, *end;
    size_t size = 0;
    FILE *out;

    snprintf(begin_line, sizeof begin_line, "%s\n", begin_mark);
    snprintf(end_line, sizeof end_line, "\n%s", end_mark);
    begin = strstr(text, begin_line);
    end = begin ? strstr(begin, end_line) : NULL;
    if (!begin || !end) {
        fprintf(stderr, "xchg-project: --update %s: no line '%s' followed by a line '%s'\n", path,
                begin_mark, end_mark);
        return NULL;
    }
    out = open_memstream(&result, &size);
    if (!out)
        return NULL;
    fwrite(text, 1, (size_t)(begin - text) + strlen(begin_line), out);
    fprintf(out, "\n");
    if (body(out, rows, sim) != 0) {
        fclose(out);
        free(result);
        return NULL;
    }
    fputs(end + 1, out);
    fclose(out);
    return result;
}

static int model_body(FILE *out, const row_t *rows, const char *sim)
{
    (void)sim;
    print_markdown(out, rows);
    return 0;
}

/* Rewrite the tables of path: the models' always, the simulated ones when sim is given. */
static int update_doc(const char *path, const row_t *rows, const char *sim)
{
    char *text = read_doc(path), *next, tmp[4096];
    FILE *out;
    int rc = 0;

    if (!text)
        return -1;
    next = replace_region(path, text, MARK_BEGIN, MARK_END, model_body, rows, NULL);
    free(text);
    text = next;
    if (text && sim) {
        next = replace_region(path, text, SIM_BEGIN, SIM_END, print_simulated, rows, sim);
        free(text);
        text = next;
    }
    if (!text)
        return -1;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    out = fopen(tmp, "wb");
    if (!out || fputs(text, out) == EOF || fclose(out) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "xchg-project: --update %s: %s\n", path, strerror(errno));
        rc = -1;
    }
    free(text);
    return rc;
}

int main(int argc, char **argv)
{
    static row_t rows[NFABRICS * NCOLLS * NRANKS * NBLOCKS];
    const char *update = NULL, *sim = NULL;
    int tsv = 0, i = 0, bad;

    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--tsv") == 0)
            tsv = 1;
        else if (strcmp(argv[a], "--update") == 0 && a + 1 < argc)
            update = argv[++a];
        else if (strcmp(argv[a], "--sim") == 0 && a + 1 < argc && !strchr(argv[a + 1], '\''))
            sim = argv[++a];
        else if (strcmp(argv[a], "--version") == 0) {
            printf("xchg-project %s\n", xchg_version());
            return 0;
        } else {
            fprintf(stderr, "usage: %s [--tsv] [--update FILE [--sim XCHG_SIM]] | --version\n",
                    argv[0]);
            return 2;
        }
    }
    bad = check_native();
    if (bad) {
        fprintf(stderr, "xchg-project: %d prices of native differ from MPICH's defaults\n", bad);
        return 1;
    }
    for (int f = 0; f < NFABRICS; f++) {
        if (configure(&fabrics[f].machine) != 0) {
            fprintf(stderr, "xchg-project: the configuration forces an algorithm or has a "
                            "tuning table after XCHG_* were unset\n");
            return 1;
        }
        for (int c = 0; c < NCOLLS; c++)
            for (int r = 0; r < NRANKS; r++)
                for (int b = 0; b < NBLOCKS; b++, i++) {
                    rows[i] = (row_t){.coll = colls[c], .p = ranks[r], .block = blocks[b]};
                    if (project_row(&rows[i], &fabrics[f]) != 0)
                        return 1;
                }
    }
    if (sim && !update) {
        fprintf(stderr, "xchg-project: --sim goes with --update FILE\n");
        return 2;
    }
    if (update)
        return update_doc(update, rows, sim) == 0 ? 0 : 1;
    if (tsv)
        print_tsv(stdout, rows);
    else
        print_markdown(stdout, rows);
    return 0;
}

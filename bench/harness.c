/*
 * harness.c: times MPI_Alltoall, MPI_Allgather and MPI_Alltoallv as an ordinary MPI program
 * calls them, one call at a time, counting from the first call. It knows nothing of xchg and
 * does not link it: scripts/compare.sh runs this one binary natively (no preload) and with the
 * library preloaded, in separate processes, and compares the two.
 *
 * Cells: alltoall, allgather, alltoallv with uniform counts and alltoallv with skewed counts,
 * each at every block size of --sizes (default 1 B, 16 B, 256 B, 4 KiB, 64 KiB; for alltoallv
 * the mean block: every rank sends p blocks' worth of bytes in all). The skewed counts are the
 * h-relation of Bader, Helman and JaJa ("Practical parallel algorithms for personalized
 * communication and integer sorting", 1996, Section 3.1, Eq. 7) with h = max(2, p/2) times a
 * rank's data: from 4 ranks up ranks 0, 1 and 2 receive a half, a third and a sixth of all the
 * data and the others nothing; at 2 ranks rank 0 receives everything (hrel_counts below).
 *
 * Two modes, one after the other in one run:
 *   short   per cell --short-warmup untimed calls (default 2), then --short-calls timed calls
 *           (default 15): what a program that calls a shape a few times sees, learning included;
 *   steady  per cell --steady-calls timed calls (default 300): what a program that calls one
 *           shape for a long time sees.
 * Every cell runs on a communicator of its own (MPI_Comm_dup of MPI_COMM_WORLD, freed after the
 * cell), and all short cells run before the steady ones. The dup is what makes each cell's shape
 * new to the process when its first call starts, as a real program's first calls are: a
 * library that keeps state per communicator and shape (xchg learns per communicator; the MPI
 * library sets up per communicator too) cannot carry what it learned in one cell into the next,
 * even where two cells share a size key (uniform and skewed alltoallv at one mean block, or
 * neighbouring sizes of --sizes 1..64K). Running the short cells first keeps this so even for a
 * library that kept state per process rather than per communicator.
 *
 * One timed call: PMPI_Barrier on the cell's communicator (the profiling entry point, so that a
 * preloaded library cannot stand in for it), MPI_Wtime, the collective, MPI_Wtime. Each rank keeps
 * its own elapsed time per call; after the cell's last call the per-call maxima over the ranks
 * (the slowest rank's time, as the application waits for it) are gathered with MPI_Reduce, outside
 * the timed region. Rank 0 prints the median and the minimum over the timed calls.
 *
 * Checks: every send block is filled from a formula of (source, destination, byte index); before
 * the first and the last call of each cell the receive buffer is poisoned with the complement of
 * what must arrive (so any byte not written is wrong) and a guard after it with a sentinel; after
 * those two calls every received byte and the guard are checked. A wrong byte is reported (rank,
 * cell, call, offset, expected and received values) and the program exits 1 once every cell has
 * run; a collective that returns an error stops the job (MPI_Abort: the ranks may be out of step).
 *
 * Output (stdout, or -o FILE), one line per cell after a header:
 *     mode,collective,workload,bytes,ranks,median_us,min_us,calls
 * workload is uniform or hrel:h=H; bytes the block (the mean block for alltoallv); calls the
 * number of timed calls.
 *
 * Usage: harness [--sizes LIST] [--colls LIST] [--modes short,steady] [--short-warmup N]
 *                [--short-calls N] [--steady-calls N] [--trace 0|1] [-o FILE]
 *   --sizes  block sizes in bytes, with K and M suffixes (1,16,256,4K,64K)
 *   --colls  alltoall,allgather,alltoallv,alltoallv-skewed (default all four, in this order)
 *   --trace  1: rank 0 also prints each cell's timed calls in order, the slowest rank's time of
 *            each in us, on stderr ("trace,MODE,COLL,BYTES: t1 t2 ..."), to see learning call by call
 * Bad options: a message naming the option and exit status 2.
 */
#include <mpi.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum coll { COLL_ALLTOALL, COLL_ALLGATHER, COLL_ALLTOALLV, COLL_SKEWED, NCOLLS };
static const char *const coll_names[NCOLLS] = {"alltoall", "allgather", "alltoallv",
                                               "alltoallv-skewed"};
enum { MAX_SIZES = 32, MAX_REPORTED = 5, GUARD_BYTES = 64, SENTINEL = 0x5a };

typedef struct options {
    size_t sizes[MAX_SIZES];
    int nsizes;
    int colls[NCOLLS]; /* 1: run this collective */
    int modes[2];      /* short, steady */
    int short_warmup, short_calls, steady_calls;
    int trace; /* --trace 1: every timed call's slowest-rank time on stderr */
    const char *output;
} options_t;

/* One cell's buffers and counts on this rank. Counts and displacements are in bytes. */
typedef struct exchange {
    enum coll coll;
    size_t block;
    int rank, size, heavy; /* heavy: the h-relation's H (skewed alltoallv) */
    unsigned char *send, *recv;
    size_t send_bytes, recv_bytes;
    int *sendcounts, *sdispls, *recvcounts, *rdispls; /* alltoallv */
} exchange_t;

/* The byte at INDEX of the message from SRC to DST (allgather: DST = -1, one block for all). */
static unsigned char expected_byte(int src, int dst, size_t index)
{
    uint32_t x = (uint32_t)index * 2654435761u ^ (uint32_t)(src + 1) * 40503u ^
                 (uint32_t)(dst + 2) * 2246822519u;
    return (unsigned char)((x >> 24) ^ (x >> 8));
}

/* ---- the skewed counts: the h-relation (Eq. 7) ---- */

/* Bytes that rank I receives in all when every one of P ranks sends N bytes and H = heavy,
 * given what the ranks before it receive: floor(H n (2p - H (i+1)) / (2p - H)), capped by what
 * is left, and the last rank the rest (H <= 1: the transpose, n each). */
static size_t hrel_receive(int p, size_t n, int heavy, int i, size_t before)
{
    size_t total = n * (size_t)p, v;
    long long a;

    if (heavy <= 1)
        return n;
    if (i == p - 1)
        return total - before;
    a = (long long)heavy * (2LL * p - (long long)heavy * (i + 1));
    if (a <= 0)
        return 0;
    v = (n / (size_t)(2 * p - heavy)) * (size_t)a +
        (n % (size_t)(2 * p - heavy)) * (size_t)a / (size_t)(2 * p - heavy);
    return v < total - before ? v : total - before;
}

/* Of the keys 0 .. M-1 dealt cyclically over P ranks, how many rank SRC holds. */
static size_t keys_below(size_t m, int p, int src)
{
    return m > (size_t)src ? (m - (size_t)src - 1) / (size_t)p + 1 : 0;
}

/* Bytes SRC sends to DST: the N p keys are dealt cyclically (key x on rank x mod p) and the
 * receivers take consecutive runs of them, START[dst] .. START[dst + 1]. */
static size_t hrel_count(const size_t *start, int p, int src, int dst)
{
    return keys_below(start[dst + 1], p, src) - keys_below(start[dst], p, src);
}

/* ---- buffers ---- */

/* Counts and displacements of an alltoallv cell; 0, or -1 when a total passes INT_MAX. */
static int alltoallv_counts(exchange_t *x)
{
    int p = x->size;
    size_t n = x->block * (size_t)p, *start = malloc((size_t)(p + 1) * sizeof *start);
    size_t send_at = 0, recv_at = 0;

    start[0] = 0;
    for (int i = 0; i < p; i++) {
        size_t share = x->coll == COLL_SKEWED ? hrel_receive(p, n, x->heavy, i, start[i]) : n;
        start[i + 1] = start[i] + share;
    }
    for (int peer = 0; peer < p; peer++) {
        size_t out = x->coll == COLL_SKEWED ? hrel_count(start, p, x->rank, peer) : x->block;
        size_t in = x->coll == COLL_SKEWED ? hrel_count(start, p, peer, x->rank) : x->block;
        x->sendcounts[peer] = (int)out;
        x->sdispls[peer] = (int)send_at;
        x->recvcounts[peer] = (int)in;
        x->rdispls[peer] = (int)recv_at;
        send_at += out;
        recv_at += in;
        if (send_at > INT_MAX || recv_at > INT_MAX)
            break;
    }
    free(start);
    x->send_bytes = send_at;
    x->recv_bytes = recv_at;
    return send_at > INT_MAX || recv_at > INT_MAX ? -1 : 0;
}

/* Where the message to DST starts in the send buffer, and its length (allgather: one block). */
static void send_span(const exchange_t *x, int dst, size_t *at, size_t *len)
{
    if (x->coll == COLL_ALLTOALLV || x->coll == COLL_SKEWED) {
        *at = (size_t)x->sdispls[dst];
        *len = (size_t)x->sendcounts[dst];
    } else {
        *at = x->coll == COLL_ALLTOALL ? (size_t)dst * x->block : 0;
        *len = x->block;
    }
}

/* Where the message from SRC starts in the receive buffer, and its length. */
static void recv_span(const exchange_t *x, int src, size_t *at, size_t *len)
{
    if (x->coll == COLL_ALLTOALLV || x->coll == COLL_SKEWED) {
        *at = (size_t)x->rdispls[src];
        *len = (size_t)x->recvcounts[src];
    } else {
        *at = (size_t)src * x->block;
        *len = x->block;
    }
}

/* Allocate and fill one cell's buffers; 0, or -1 when a buffer would pass INT_MAX bytes. */
static int exchange_setup(exchange_t *x, enum coll coll, size_t block, MPI_Comm comm)
{
    int p;

    memset(x, 0, sizeof *x);
    MPI_Comm_rank(comm, &x->rank);
    MPI_Comm_size(comm, &x->size);
    p = x->size;
    x->coll = coll;
    x->block = block;
    x->heavy = p / 2 > 2 ? p / 2 : 2;
    if (x->heavy > p)
        x->heavy = p;
    x->sendcounts = calloc(4 * (size_t)p, sizeof(int));
    x->sdispls = x->sendcounts + p;
    x->recvcounts = x->sdispls + p;
    x->rdispls = x->recvcounts + p;
    if (coll == COLL_ALLTOALLV || coll == COLL_SKEWED) {
        if (alltoallv_counts(x) != 0)
            return -1;
    } else {
        x->send_bytes = coll == COLL_ALLTOALL ? block * (size_t)p : block;
        x->recv_bytes = block * (size_t)p;
        if (x->recv_bytes > INT_MAX)
            return -1;
    }
    x->send = malloc(x->send_bytes + 1);
    x->recv = malloc(x->recv_bytes + GUARD_BYTES);
    for (int dst = 0; dst < (coll == COLL_ALLGATHER ? 1 : p); dst++) {
        size_t at, len;
        send_span(x, dst, &at, &len);
        for (size_t i = 0; i < len; i++)
            x->send[at + i] = expected_byte(x->rank, coll == COLL_ALLGATHER ? -1 : dst, i);
    }
    return 0;
}

static void exchange_free(exchange_t *x)
{
    free(x->send);
    free(x->recv);
    free(x->sendcounts);
}

/* The receive buffer: the complement of every expected byte, then the guard's sentinels. */
static void poison(exchange_t *x)
{
    int dst = x->coll == COLL_ALLGATHER ? -1 : x->rank;
    for (int src = 0; src < x->size; src++) {
        size_t at, len;
        recv_span(x, src, &at, &len);
        for (size_t i = 0; i < len; i++)
            x->recv[at + i] = (unsigned char)~expected_byte(src, dst, i);
    }
    memset(x->recv + x->recv_bytes, SENTINEL, GUARD_BYTES);
}

/* Check every received byte and the guard after the call numbered CALL of a cell; returns the
 * number of wrong bytes and reports the first few. */
static long check(const exchange_t *x, const char *mode, int call)
{
    int dst = x->coll == COLL_ALLGATHER ? -1 : x->rank;
    long wrong = 0;
    for (int src = 0; src < x->size; src++) {
        size_t at, len;
        recv_span(x, src, &at, &len);
        for (size_t i = 0; i < len; i++) {
            unsigned char want = expected_byte(src, dst, i);
            if (x->recv[at + i] == want)
                continue;
            if (wrong++ < MAX_REPORTED)
                fprintf(stderr,
                        "harness: %s %s %zu B call %d: rank %d received 0x%02x at byte %zu "
                        "(index %zu of the message from rank %d), expected 0x%02x\n",
                        mode, coll_names[x->coll], x->block, call, x->rank, x->recv[at + i], at + i,
                        i, src, want);
        }
    }
    for (size_t i = 0; i < GUARD_BYTES; i++)
        if (x->recv[x->recv_bytes + i] != SENTINEL && wrong++ < MAX_REPORTED)
            fprintf(stderr,
                    "harness: %s %s %zu B call %d: rank %d overwrote byte %zu after the "
                    "receive buffer\n",
                    mode, coll_names[x->coll], x->block, call, x->rank, i);
    return wrong;
}

/* ---- one cell ---- */

static int collective(exchange_t *x, MPI_Comm comm)
{
    int count = (int)x->block;
    switch (x->coll) {
    case COLL_ALLTOALL:
        return MPI_Alltoall(x->send, count, MPI_BYTE, x->recv, count, MPI_BYTE, comm);
    case COLL_ALLGATHER:
        return MPI_Allgather(x->send, count, MPI_BYTE, x->recv, count, MPI_BYTE, comm);
    default:
        return MPI_Alltoallv(x->send, x->sendcounts, x->sdispls, MPI_BYTE, x->recv, x->recvcounts,
                             x->rdispls, MPI_BYTE, comm);
    }
}

/* UNTIMED calls, then TIMED calls whose elapsed times go to ELAPSED; the first and the last call
 * are checked. Returns the wrong bytes seen on this rank. */
static long run_cell(exchange_t *x, MPI_Comm comm, const char *mode, int untimed, int timed,
                     double *elapsed)
{
    int calls = untimed + timed, rc;
    long wrong = 0;

    for (int call = 0; call < calls; call++) {
        double start;
        int checked = call == 0 || call == calls - 1;
        if (checked)
            poison(x);
        PMPI_Barrier(comm);
        start = MPI_Wtime();
        rc = collective(x, comm);
        if (call >= untimed)
            elapsed[call - untimed] = MPI_Wtime() - start;
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "harness: %s %s %zu B call %d: error %d on rank %d\n", mode,
                    coll_names[x->coll], x->block, call, rc, x->rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (checked)
            wrong += check(x, mode, call);
    }
    return wrong;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Rank 0: the CSV line of a cell from the per-call maxima over the ranks (sorted here). */
static void print_cell(FILE *out, const exchange_t *x, const char *mode, double *slowest, int n,
                       int trace)
{
    char workload[32] = "uniform";
    double median;

    if (trace) {
        fprintf(stderr, "trace,%s,%s,%zu:", mode, coll_names[x->coll], x->block);
        for (int k = 0; k < n; k++)
            fprintf(stderr, " %.2f", slowest[k] * 1e6);
        fprintf(stderr, "\n");
    }

    qsort(slowest, (size_t)n, sizeof *slowest, compare_double);
    median = n % 2 ? slowest[n / 2] : (slowest[n / 2 - 1] + slowest[n / 2]) / 2;
    if (x->coll == COLL_SKEWED)
        snprintf(workload, sizeof workload, "hrel:h=%d", x->heavy);
    fprintf(out, "%s,%s,%s,%zu,%d,%.3f,%.3f,%d\n", mode,
            x->coll == COLL_SKEWED ? "alltoallv" : coll_names[x->coll], workload, x->block, x->size,
            median * 1e6, slowest[0] * 1e6, n);
    fflush(out);
}

/* One cell on a communicator of its own; adds the wrong bytes seen on this rank to *WRONG. */
static void measure(const options_t *opt, FILE *out, int steady, enum coll coll, size_t block,
                    long *wrong)
{
    const char *mode = steady ? "steady" : "short";
    int untimed = steady ? 0 : opt->short_warmup;
    int timed = steady ? opt->steady_calls : opt->short_calls;
    double *elapsed = malloc((size_t)timed * sizeof *elapsed);
    double *slowest = malloc((size_t)timed * sizeof *slowest);
    exchange_t x;
    MPI_Comm comm;
    int failed, any_failed;

    /* a cell that one rank cannot run, no rank runs (the skewed receiver holds the most) */
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    failed = exchange_setup(&x, coll, block, comm) != 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm);
    if (any_failed && x.rank == 0)
        fprintf(stderr,
                "harness: %s at %zu B per block on %d ranks needs more than %d bytes in "
                "one buffer: cell left out\n",
                coll_names[coll], block, x.size, INT_MAX);
    if (!any_failed) {
        *wrong += run_cell(&x, comm, mode, untimed, timed, elapsed);
        MPI_Reduce(elapsed, slowest, timed, MPI_DOUBLE, MPI_MAX, 0, comm);
        if (x.rank == 0)
            print_cell(out, &x, mode, slowest, timed, opt->trace);
    }
    exchange_free(&x);
    MPI_Comm_free(&comm);
    free(elapsed);
    free(slowest);
}

/* ---- options ---- */

/* A byte size with an optional K or M suffix, 1 .. 2^30; -1 when malformed. */
static long long parse_bytes(const char *text)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text || v < 1)
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    return *end || v > (1LL << 30) ? -1 : v;
}

/* --sizes: a comma-separated list of byte sizes; -1 on a bad one. */
static int parse_sizes(options_t *opt, const char *list)
{
    char *copy = strdup(list), *item, *save = NULL;
    int rc = 0;
    opt->nsizes = 0;
    for (item = strtok_r(copy, ",", &save); item && rc == 0; item = strtok_r(NULL, ",", &save)) {
        long long v = parse_bytes(item);
        if (v < 0 || opt->nsizes == MAX_SIZES)
            rc = -1;
        else
            opt->sizes[opt->nsizes++] = (size_t)v;
    }
    free(copy);
    return rc == 0 && opt->nsizes > 0 ? 0 : -1;
}

/* A comma-separated list of NAMES: CHOSEN[k] = 1 for each one given; -1 on an unknown one. */
static int parse_names(int *chosen, const char *const *names, int count, const char *list)
{
    char *copy = strdup(list), *item, *save = NULL;
    int rc = 0, any = 0;
    memset(chosen, 0, (size_t)count * sizeof *chosen);
    for (item = strtok_r(copy, ",", &save); item && rc == 0; item = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < count && strcmp(item, names[k]) != 0)
            k++;
        if (k == count)
            rc = -1;
        else
            chosen[k] = any = 1;
    }
    free(copy);
    return rc == 0 && any ? 0 : -1;
}

static int parse_count(const char *text, int least, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < least || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

/* Parse the command line; the name of the bad option (NULL when all are good). */
static const char *parse_options(options_t *opt, int argc, char **argv)
{
    static const char *const mode_names[2] = {"short", "steady"};
    memset(opt, 0, sizeof *opt);
    parse_sizes(opt, "1,16,256,4K,64K");
    for (int k = 0; k < NCOLLS; k++)
        opt->colls[k] = 1;
    opt->modes[0] = opt->modes[1] = 1;
    opt->short_warmup = 2;
    opt->short_calls = 15;
    opt->steady_calls = 300;
    for (int a = 1; a < argc; a += 2) {
        const char *v = argv[a + 1];
        int bad;
        if (a + 1 >= argc)
            return argv[a];
        if (strcmp(argv[a], "--sizes") == 0)
            bad = parse_sizes(opt, v);
        else if (strcmp(argv[a], "--colls") == 0)
            bad = parse_names(opt->colls, coll_names, NCOLLS, v);
        else if (strcmp(argv[a], "--modes") == 0)
            bad = parse_names(opt->modes, mode_names, 2, v);
        else if (strcmp(argv[a], "--short-warmup") == 0)
            bad = parse_count(v, 0, &opt->short_warmup);
        else if (strcmp(argv[a], "--short-calls") == 0)
            bad = parse_count(v, 1, &opt->short_calls);
        else if (strcmp(argv[a], "--steady-calls") == 0)
            bad = parse_count(v, 1, &opt->steady_calls);
        else if (strcmp(argv[a], "--trace") == 0)
            bad = parse_count(v, 0, &opt->trace);
        else if (strcmp(argv[a], "-o") == 0)
            bad = (opt->output = v) == NULL;
        else
            bad = 1;
        if (bad)
            return argv[a];
    }
    return NULL;
}

int main(int argc, char **argv)
{
    options_t opt;
    const char *bad;
    FILE *out = stdout;
    long wrong = 0, wrong_total = 0;
    int rank;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bad = parse_options(&opt, argc, argv);
    if (!bad && rank == 0 && opt.output && !(out = fopen(opt.output, "w")))
        bad = "-o (cannot write the file)";
    {
        int unwritable = bad != NULL;
        MPI_Bcast(&unwritable, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (unwritable && !bad)
            bad = "-o";
    }
    if (bad) {
        if (rank == 0)
            fprintf(stderr,
                    "harness: bad option or value at '%s'\nusage: harness [--sizes LIST] "
                    "[--colls LIST] [--modes short,steady] [--short-warmup N] "
                    "[--short-calls N] [--steady-calls N] [--trace 0|1] [-o FILE]\n",
                    bad);
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        fprintf(out, "mode,collective,workload,bytes,ranks,median_us,min_us,calls\n");
    for (int steady = 0; steady < 2; steady++)
        for (int coll = 0; coll < NCOLLS && opt.modes[steady]; coll++)
            for (int s = 0; s < opt.nsizes && opt.colls[coll]; s++)
                measure(&opt, out, steady, (enum coll)coll, opt.sizes[s], &wrong);
    MPI_Allreduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && wrong_total)
        fprintf(stderr, "harness: FAILED: %ld wrong bytes in all\n", wrong_total);
    if (rank == 0 && out != stdout)
        fclose(out);
    MPI_Finalize();
    return wrong_total ? 1 : 0;
}

/*
 * calibrate.c: the machine constants measured at MPI_Init, in a few milliseconds, when neither
 * a tuning table (XCHG_TUNING) nor the cache (shim/cache.c) gives them.
 *
 * The cost models price every algorithm, native included, from beta (start-up) and tau (per
 * byte) in the linear model T = beta + m tau (Bruck et al. 1997, Section 1.2); their built-in
 * constants describe a generic shared-memory node, and a cluster's links differ from them by a
 * hundred times. So world rank 0 runs two short ping-pongs with a rank of its own node, and two
 * with a rank of another node when the job spans nodes: PINGS round trips of SMALL bytes and
 * LARGE_PINGS of LARGE bytes each (one of each first, untimed), on MPI_COMM_WORLD, before the
 * program has posted anything (inside MPI_Init); beta is the small message's one-way time (half the
 * least round trip: on a loaded machine a round trip waits for a descheduled peer now and then,
 * milliseconds that are not the link's), tau the large one's excess per byte. Inside a node rank 0
 * then times LARGE_PINGS exchanges (both ranks send at once, one step of pairwise) of LARGE and
 * of HUGE bytes each, after an untimed one, and tau_large is the least times' difference per
 * byte: past LARGE a shared-memory transport copies once instead of twice (a rendezvous), and
 * one line through 8 B and 16 KiB misprices large messages several times over. At 2 ranks on 2
 * cores (MPICH 4.0.2, ch4:ucx), tau from the ping-pong was 3.1e-10 s/B, and it priced MPICH's
 * own 64 KiB alltoall at 22 us where it ran in 7.3; the models chose shm (9.5 us) for it. There
 * a test program's exchanges took 3.1 us at 16 KiB and 5.2 at 64 KiB (4.3e-11 s/B), and the
 * calibration measured tau_large = 2.7e-11 to 7.5e-11 in four runs. Each pair stops early when
 * it has used BUDGET seconds, but not before MIN_PINGS round trips of each size unless it has
 * used HARD_BUDGET: at 2 ranks on 2 cores (MPICH), 5 of 14 runs had their first timed round
 * trip wait 4 to 8 ms for a peer that had lost its core just after start-up; that used the whole
 * budget on one sample, the start-up read 2 to 4 ms and was not used; with MIN_PINGS, 1 of 16
 * (its peer away for all of HARD_BUDGET), and the calibration took 1.2 to 1.4 ms in most runs,
 * 4 to 25 ms in 3 of 6 at 2 ranks on 2 cores (MPICH). A pair whose start-up still reads
 * beyond a plausible bound (below), or whose large round trip was not the slower, is measured
 * again, up to ATTEMPTS times: on a 2-core Xeon VM (MPICH, 2 ranks) the first attempt read 2
 * to 6 ms in 6 of 80 runs (both ranks polling on one core, a round trip per time slice), which
 * left those runs with the built-in constants; each second attempt, right after, read 0.33 to
 * 0.39 us. rho, the copy rate, is one memcpy of COPY_BYTES, which needs no peer and is kept
 * whatever the ping-pongs gave. Rank 0 then broadcasts the constants, so every rank prices with
 * the same numbers. A start-up beyond a plausible bound after the last attempt (a peer
 * descheduled on an oversubscribed node) is not used. The constants are measured anew in every
 * run and never cached: a measurement taken under a burst of load would
 * otherwise stay with every later run (the cache keeps xchg-tune's, which measure long).
 *
 * The gap at a node (xchg_measure_gap). A ping-pong prices one message; when every rank sends
 * across at once, a node's messages leave it one after another (LogGP's g: the interface, and
 * the cores that drive the network's protocol). On the emulated cluster (4 namespaces of 3, 2,
 * 2 and 1 ranks at 100 Mbit/s on 2 cores, Open MPI) the ping-pong gave beta_inter = 24 to 34 us
 * while a 1 B alltoall of 8 ranks took 281 us, and the models, pricing a rank's messages in
 * flight as one start-up, ranked the algorithms that send many messages first. So once the
 * world spans nodes every rank takes part in BURSTS bursts (the first untimed): rank r sends
 * one SMALL message to r + j and receives one from r - j (mod p) for j = 1 .. BURST_SHIFTS
 * where the two ranks lie on different nodes, all at once, between barriers; the burst's time is
 * the slowest rank's, and gap_inter = (least burst - beta_inter) / M, M the most messages one
 * node sends or receives in a burst.
 *
 * A node's link (inject, xchg_machine_t). The ping-pong between nodes measures one message at
 * the link's rate; where several ranks of a node send across at once they share the node's
 * link, as they share its one network interface on most clusters. xchg-tune measures how many
 * go at full speed at once (measure_inject); without its table, where a start-up between nodes
 * costs SHARED_LINK times one inside or more (a network: one machine's emulated nodes measure
 * about 1), the calibration takes one (inject = 1), and the models charge a round's messages
 * out of the busiest node to its link. Without it they priced every rank's messages as if each
 * had a link of its own: on the emulated 3,2,2,1 cluster at 100 Mbit/s (Open MPI) native's
 * MPI_Allgather of 4 KiB blocks (recursive doubling, whose last round sends all of node 0's
 * blocks across) at 2.1 ms where it took 6.1, as fast as `node` and the ring, which took 2.6
 * and 2.5; with the limit it is priced 3 times the ring (docs/results.md, stop 84).
 *
 * Native's small calls (xchg_calibrate_native). The models price a call by its messages'
 * start-ups and bytes; the MPI library's own work per collective call (its argument checks,
 * selection, requests, the copy to self) is not in them, and for blocks of a few bytes it is
 * most of native's time: MPICH's MPI_Alltoall of 1 B at 2 ranks on 2 cores measured 2.1 to 11.5
 * times its price in learning's rounds, so the models priced native and `shm` alike there and
 * every small shape began with a round of probes. When the world is one node, every rank
 * therefore makes each of the three collectives with 1 B blocks on MPI_COMM_WORLD, still inside
 * MPI_Init: NATIVE_WARMUP untimed calls (the MPI library sets the collective up in its first
 * calls), then NATIVE_BATCHES batches of NATIVE_CALLS calls back to back; a rank's time is its
 * least batch's mean (a batch that lost its core reads high), and an allreduce gives every
 * rank the slowest rank's. Up to NATIVE_MID_RANKS ranks the same follows with 4 KiB blocks
 * (NATIVE_MID_CALLS calls a batch), where the MPI library has changed protocol: MPICH's
 * MPI_Alltoall of 4 KiB at 2 ranks took 9 to 13 us a call, which the models priced at 3.8 to 4.3,
 * so learning timed native in every such shape's first calls (5 calls and an agreement, 60 to
 * 80 us, on a shape whose 40 calls took 40 to 120 us under `shm`). xchg_cost_native never
 * prices native below these on a communicator of the world's size (linear between the two
 * sizes). A time above NATIVE_MAX per rank is a descheduled rank's: the ranks stop
 * there and none of the three is used (with `make test` running beside it on the 2 cores, MPICH's
 * MPI_Alltoall of 1 B at 2 ranks read 4 ms, where it takes 0.6 to 1.0 us, and would have priced
 * native 4000 times too dear); one of 4 KiB blocks above NATIVE_MAX + NATIVE_MID_MAX per rank
 * is not used alone. On a node that runs more ranks than it has processing units, under an MPI
 * library whose waits poll (MPICH), no call is made: each waits for time slices and reads above
 * that bound (MPICH 4.0.2, 8 ranks on 2 cores: 12 ms an alltoall of 1 B), and making them took a
 * third of a second of MPI_Init. Across nodes a call of 1 B costs a network round trip or more,
 * and 42 of them would stall MPI_Init; there the calibration's inter-node constants price
 * native.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define PINGS 7            /* small round trips per pair (the median of them) */
#define LARGE_PINGS 3      /* large round trips per pair, and exchanges of each size */
#define SMALL 8            /* bytes of the small message */
#define LARGE (16 << 10)   /* bytes of the large message: past MPICH's and Open MPI's eager
                              thresholds on shared memory, a few packets on a network */
#define HUGE (64 << 10)    /* bytes of the larger exchange inside a node */
#define BUDGET 6e-3        /* seconds one pair may take after its first round trips */
#define MIN_PINGS 3        /* round trips of each size taken within HARD_BUDGET whatever BUDGET */
#define HARD_BUDGET 24e-3  /* seconds one pair may take at most: a few descheduled round trips */
#define COPY_BYTES (1 << 20)
#define SAME_NODE_MAX 50e-6 /* a start-up above this on one node is a descheduled peer (more
                               processes than cores), not the memory's: not used */
#define CROSS_NODE_MAX 20e-3 /* nor one above this across nodes */
#define SHARED_LINK 2.0    /* a start-up between nodes this many times one inside: a network */
#define TAG 32001          /* on MPI_COMM_WORLD, before the program's first message */
#define BURSTS 4           /* bursts measuring the gap at a node, the first untimed */
#define ATTEMPTS 3         /* measurements of a pair at most (measure_pair) */
#define BURST_SHIFTS 16    /* at most this many messages out of each rank in a burst */
#define NATIVE_WARMUP 2    /* untimed calls of each collective (xchg_calibrate_native) */
#define NATIVE_BATCHES 3   /* timed batches of each collective, the least kept */
#define NATIVE_CALLS 4     /* calls per batch */
#define NATIVE_MAX 50e-6   /* per rank: a call of 1 B blocks slower than this many seconds times
                              the ranks on one node waited for a descheduled rank (more
                              processes than cores), not the MPI library: not used */
#define NATIVE_MID_RANKS 64  /* the 4 KiB blocks are timed up to this many ranks: 256 KiB a rank */
#define NATIVE_MID_CALLS 2   /* calls per batch with 4 KiB blocks */
#define NATIVE_MID_MAX 20e-6 /* per rank, beyond NATIVE_MAX, for 4 KiB blocks: 4 KiB at 0.2 GB/s   \
                              */

/* Whether rank 0 takes another round trip: done of n taken, the soft and hard deadlines. */
static int ping_more(int done, int n, double now, double deadline, double hard)
{
    return done < n && (now < deadline || (done < MIN_PINGS && now < hard));
}

/* The two kinds of measurement: a round trip of one message (timed: half of it, one way), or
 * two exchanges of a message both ways (send from buf, receive into buf + bytes), the first
 * lining the two ranks up (each leaves it once the other's message has come), the second timed.
 * Both ranks run the same kind; the seconds timed come back (rank 0's are used). */
enum { ROUND_TRIP, EXCHANGE };

static void swap(int other, char *buf, int bytes)
{
    PMPI_Sendrecv(buf, bytes, MPI_BYTE, other, TAG, buf + bytes, bytes, MPI_BYTE, other, TAG,
                  MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static double one_pass(int kind, int other, char *buf, int bytes)
{
    double start;
    if (kind == ROUND_TRIP) {
        start = PMPI_Wtime();
        if (other == 0) {
            PMPI_Recv(buf, bytes, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            PMPI_Send(buf, bytes, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
        } else {
            PMPI_Send(buf, bytes, MPI_BYTE, other, TAG, MPI_COMM_WORLD);
            PMPI_Recv(buf, bytes, MPI_BYTE, other, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        return (PMPI_Wtime() - start) / 2;
    }
    swap(other, buf, bytes);
    start = PMPI_Wtime();
    swap(other, buf, bytes);
    return PMPI_Wtime() - start;
}

/* Rank 0's side: the least time of n passes of `kind` with bytes with peer (0 if none ran),
 * after one untimed pass, which also waits for the peer to reach its side (it may still be in
 * MPI_Init): the budgets count from there. Rank 0 sends go before each pass, stop at the end. */
static double measure(int kind, int peer, char *buf, int bytes, int n, double budget,
                      double hard_budget)
{
    double least = 0.0, deadline = 0.0, hard = 0.0;
    int done = 0, stop = 0;
    for (int i = 0; i == 0 || ping_more(done, n, PMPI_Wtime(), deadline, hard); i++) {
        int go = 1;
        double t;
        PMPI_Send(&go, 1, MPI_INT, peer, TAG, MPI_COMM_WORLD);
        t = one_pass(kind, peer, buf, bytes);
        if (i > 0) { /* the first pass warms up */
            least = done++ == 0 || t < least ? t : least;
        } else {
            double now = PMPI_Wtime();
            deadline = now + budget;
            hard = now + hard_budget;
        }
    }
    PMPI_Send(&stop, 1, MPI_INT, peer, TAG, MPI_COMM_WORLD);
    return least;
}

/* The partner's side: passes of `kind` with rank 0 until it says stop (one call per size). */
static void echo(int kind, char *buf, int bytes)
{
    for (;;) {
        int go = 0;
        PMPI_Recv(&go, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (!go)
            return;
        one_pass(kind, 0, buf, bytes);
    }
}

/* beta and tau with peer (rank 0), or both 0 when the budget ran out first. A pair whose
 * start-up reads above most, or whose large message was not the slower, is measured again, up
 * to ATTEMPTS times in all; the peer hears after each attempt whether another follows
 * (echo_pair). Returns the attempts taken. XCHG_TEST_DESCHEDULED=1 discards the first attempt
 * as if its peer had been away. */
static int measure_pair(int peer, char *buf, double most, double *beta, double *tau)
{
    for (int attempt = 1;; attempt++) {
        double small = measure(ROUND_TRIP, peer, buf, SMALL, PINGS - 1, BUDGET / 2,
                               HARD_BUDGET / 2);
        double large = measure(ROUND_TRIP, peer, buf, LARGE, LARGE_PINGS, BUDGET / 2,
                               HARD_BUDGET / 2);
        int again;
        if (attempt == 1 && xchg_config.test_descheduled)
            small = large = 2 * most;
        *beta = small;
        *tau = large > small && small > 0 ? (large - small) / (LARGE - SMALL) : 0.0;
        again = attempt < ATTEMPTS && !(*beta > 0 && *beta <= most && *tau > 0);
        PMPI_Send(&again, 1, MPI_INT, peer, TAG, MPI_COMM_WORLD);
        if (!again)
            return attempt;
        sched_yield();
    }
}

/* XCHG_VERBOSE=1: a pair that took more than one attempt (rank 0). */
static void report(int attempts, const char *where, double beta, double most)
{
    if (attempts > 1 && xchg_config.verbose)
        fprintf(stderr,
                "xchg: calibration: the start-up %s took %d attempts of %d (one above %g s is "
                "a peer's descheduling, not the link's)%s\n",
                where, attempts, ATTEMPTS, most,
                beta > 0 && beta <= most ? "" : ": not measured, the built-in constants stay");
}

/* The partner's side of measure_pair. */
static void echo_pair(char *buf)
{
    int again;
    do {
        echo(ROUND_TRIP, buf, SMALL);
        echo(ROUND_TRIP, buf, LARGE);
        PMPI_Recv(&again, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (again)
            sched_yield();
    } while (again);
}

/* tau_large with peer, a rank of rank 0's node (rank 0), or 0 when the budget ran out first or
 * the larger exchange was not the slower. */
static double measure_large(int peer, char *buf)
{
    double large = measure(EXCHANGE, peer, buf, LARGE, LARGE_PINGS, BUDGET / 4, HARD_BUDGET / 4);
    double huge = measure(EXCHANGE, peer, buf, HUGE, LARGE_PINGS, BUDGET / 4, HARD_BUDGET / 4);
    return large > 0 && huge > large ? (huge - large) / (HUGE - LARGE) : 0.0;
}

static double copy_rate(void)
{
    char *a = xchg_mem_alloc(COPY_BYTES), *b = xchg_mem_alloc(COPY_BYTES);
    double start, rho = 0.0;
    if (a && b) {
        memset(a, 1, COPY_BYTES);
        memcpy(b, a, COPY_BYTES); /* touch both */
        start = PMPI_Wtime();
        memcpy(b, a, COPY_BYTES);
        rho = (PMPI_Wtime() - start) / COPY_BYTES;
        __asm__ volatile("" : : "r"(b) : "memory");
    }
    xchg_mem_free(a, COPY_BYTES);
    xchg_mem_free(b, COPY_BYTES);
    return rho;
}

/* The most messages one node sends or receives in a burst: rank r sends to r + j for the
 * shifts j of the burst whose target lies on another node (the receives mirror the sends). */
static int burst_node_messages(const int *world_node, int p, int shifts)
{
    int most = 0, nnodes = 0, *out;
    for (int r = 0; r < p; r++)
        nnodes = world_node[r] + 1 > nnodes ? world_node[r] + 1 : nnodes;
    out = calloc((size_t)nnodes * 2, sizeof *out);
    if (!out)
        return 0;
    for (int r = 0; r < p; r++)
        for (int j = 1; j <= shifts; j++) {
            int to = (r + j) % p;
            if (world_node[to] != world_node[r]) {
                out[world_node[r]]++;
                out[nnodes + world_node[to]]++;
            }
        }
    for (int x = 0; x < 2 * nnodes; x++)
        most = out[x] > most ? out[x] : most;
    free(out);
    return most;
}

double xchg_measure_gap(const int *world_node, int world_size, double beta_inter)
{
    int rank, shifts = world_size - 1 < BURST_SHIFTS ? world_size - 1 : BURST_SHIFTS, n = 0;
    int most = world_node ? burst_node_messages(world_node, world_size, shifts) : 0;
    char send[SMALL] = {0}, recv[BURST_SHIFTS][SMALL];
    MPI_Request req[2 * BURST_SHIFTS];
    MPI_Status stats[2 * BURST_SHIFTS];
    double t[BURSTS], least;

    if (most <= 0)
        return 0.0; /* one node (every rank decides alike: world_node is the same everywhere) */
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int b = 0; b < BURSTS; b++) {
        double start;
        PMPI_Barrier(MPI_COMM_WORLD);
        start = PMPI_Wtime();
        n = 0;
        for (int j = 1; j <= shifts; j++) {
            int from = (rank - j + world_size) % world_size, to = (rank + j) % world_size;
            if (world_node[from] != world_node[rank])
                PMPI_Irecv(recv[j - 1], SMALL, MPI_BYTE, from, TAG, MPI_COMM_WORLD, &req[n++]);
            if (world_node[to] != world_node[rank])
                PMPI_Isend(send, SMALL, MPI_BYTE, to, TAG, MPI_COMM_WORLD, &req[n++]);
        }
        PMPI_Waitall(n, req, stats);
        t[b] = PMPI_Wtime() - start;
    }
    PMPI_Allreduce(MPI_IN_PLACE, t, BURSTS, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    least = t[1];
    for (int b = 2; b < BURSTS; b++)
        least = t[b] < least ? t[b] : least;
    if (!(least < CROSS_NODE_MAX) || !(least > beta_inter))
        return 0.0;
    return (least - beta_inter) / most;
}

double xchg_api_measure_gap(double beta_inter)
{
    const int *node_of;
    int size;
    if (xchg_world_layout(&node_of, &size) != 0)
        return 0.0;
    return xchg_measure_gap(node_of, size, beta_inter);
}

int xchg_calibrate(const int *world_node, int world_size, xchg_machine_t *machine)
{
    int rank, same = -1, cross = -1;
    double values[6] = {0, 0, 0, 0, 0, 0}; /* beta, tau, beta_inter, tau_inter, rho, tau_large */
    double gap;
    char *buf = xchg_mem_alloc(2 * HUGE); /* an exchange's send and receive halves */

    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 1; i < world_size && world_node; i++) {
        if (same < 0 && world_node[i] == world_node[0])
            same = i;
        if (cross < 0 && world_node[i] != world_node[0])
            cross = i;
    }
    if (buf && world_size > 1) {
        memset(buf, 0, 2 * HUGE);
        if (rank == 0) {
            if (same > 0) {
                int attempts = measure_pair(same, buf, SAME_NODE_MAX, &values[0], &values[1]);
                report(attempts, "inside a node", values[0], SAME_NODE_MAX);
                values[5] = measure_large(same, buf);
            }
            if (cross > 0) {
                int attempts = measure_pair(cross, buf, CROSS_NODE_MAX, &values[2], &values[3]);
                report(attempts, "between nodes", values[2], CROSS_NODE_MAX);
            }
            values[4] = copy_rate();
        } else if (rank == same || rank == cross) {
            echo_pair(buf);
            if (rank == same) {
                echo(EXCHANGE, buf, LARGE);
                echo(EXCHANGE, buf, HUGE);
            }
        }
    }
    xchg_mem_free(buf, 2 * HUGE);
    if (values[0] > SAME_NODE_MAX)
        values[0] = values[1] = values[5] = 0.0;
    if (values[2] > CROSS_NODE_MAX)
        values[2] = values[3] = 0.0;
    xchg_own_bcast(values, 6, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (values[4] > 0)
        machine->rho = values[4];
    if (!(values[0] > 0 || values[2] > 0))
        /* one rank, or no start-up measured: beta and tau stay built in */
        return values[4] > 0 ? XCHG_MEASURED_COPY : XCHG_MEASURED_NONE;
    gap = values[2] > 0 ? xchg_measure_gap(world_node, world_size, values[2]) : 0.0;
    if (!(values[0] > 0)) { /* no partner on rank 0's node: one level, the inter-node one */
        values[0] = values[2];
        values[1] = values[3];
        values[2] = values[3] = 0.0;
    }
    machine->beta = values[0];
    if (values[1] > 0) {
        machine->tau = values[1];
        machine->tau_large = values[5];
        machine->large_from = LARGE;
    }
    machine->beta_inter = values[2];
    machine->tau_inter = values[3];
    machine->gap_inter = gap;
    if (values[2] > 0 && values[2] >= SHARED_LINK * values[0])
        machine->inject = 1;
    return XCHG_MEASURED_STARTUP;
}

/* One call of coll with blocks of counts[0] bytes on MPI_COMM_WORLD (counts[] holds that count
 * per rank, displs[] its multiples). Its handler is still MPI_ERRORS_ARE_FATAL (the program has
 * not run), and the arguments are valid: no rank returns from a failed call, so none leaves the
 * others. */
static void native_call(int coll, const char *send, char *recv, const int *counts,
                        const int *displs)
{
    if (coll == XCHG_ALLTOALL)
        PMPI_Alltoall(send, counts[0], MPI_BYTE, recv, counts[0], MPI_BYTE, MPI_COMM_WORLD);
    else if (coll == XCHG_ALLGATHER)
        PMPI_Allgather(send, counts[0], MPI_BYTE, recv, counts[0], MPI_BYTE, MPI_COMM_WORLD);
    else
        PMPI_Alltoallv(send, counts, displs, MPI_BYTE, recv, counts, displs, MPI_BYTE,
                       MPI_COMM_WORLD);
}

/* This rank's time of a call of coll with blocks of `bytes` (counts[] and displs[] set for
 * them): the least mean of NATIVE_BATCHES batches of `calls`, after NATIVE_WARMUP untimed. */
static double native_time(int coll, const char *send, char *recv, int *counts, int *displs,
                          int world_size, int bytes, int calls)
{
    double least = 0.0;
    for (int i = 0; i < world_size; i++) {
        counts[i] = bytes;
        displs[i] = i * bytes;
    }
    for (int call = 0; call < NATIVE_WARMUP; call++)
        native_call(coll, send, recv, counts, displs);
    for (int batch = 0; batch < NATIVE_BATCHES; batch++) {
        double began = PMPI_Wtime(), mean;
        for (int call = 0; call < calls; call++)
            native_call(coll, send, recv, counts, displs);
        mean = (PMPI_Wtime() - began) / calls;
        if (batch == 0 || mean < least)
            least = mean;
    }
    return least;
}

double xchg_calibrate_native(int world_size, xchg_machine_t *machine)
{
    double slowest[XCHG_NCOLLS][2], began_all = PMPI_Wtime(), most = NATIVE_MAX * world_size;
    int mid = world_size <= NATIVE_MID_RANKS; /* the 4 KiB blocks too */
    size_t block = mid ? XCHG_NATIVE_MID_BYTES : 1;
    size_t send_bytes = (size_t)world_size * 2 * block;
    char *send = xchg_mem_alloc(send_bytes);
    int *counts = malloc(2 * (size_t)world_size * sizeof *counts);
    /* what keeps a rank from measuring: no memory for its buffers, or an MPI library whose
     * waits poll on an oversubscribed node (every call would wait for time slices and read
     * above the bound) */
    int stop[2] = {!(send && counts), xchg_own_mpi_waits_starve()}, any[2] = {1, 1};
    int measured = 0, rank;

    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* every rank makes the calls or none does */
    if (xchg_own_allreduce(stop, any, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        any[0] = any[1] = 1;
    else if (any[1] && xchg_config.verbose && rank == 0)
        fprintf(stderr, "xchg: native calls not timed: the node runs more ranks than it has "
                        "processing units, and the MPI library's waits poll\n");
    if (!any[0] && !any[1]) {
        char *recv = send + (size_t)world_size * block;
        int *displs = counts + world_size;
        memset(send, 0, send_bytes);
        /* one collective after the other; the ranks agree on each one's times before the next,
         * and all stop at one beyond the bound */
        for (int coll = 0; coll < XCHG_NCOLLS && measured == coll; coll++) {
            double least[2] = {0.0, 0.0};
            least[0] = native_time(coll, send, recv, counts, displs, world_size, 1, NATIVE_CALLS);
            if (mid)
                least[1] = native_time(coll, send, recv, counts, displs, world_size,
                                       XCHG_NATIVE_MID_BYTES, NATIVE_MID_CALLS);
            if (xchg_config.test_descheduled) /* testing knob: as if a rank had been away */
                least[0] += most;
            if (PMPI_Allreduce(least, slowest[coll], 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) !=
                MPI_SUCCESS)
                break;
            if (slowest[coll][0] > most) {
                if (xchg_config.verbose && rank == 0)
                    fprintf(stderr,
                            "xchg: native calls of 1 B blocks on %d ranks: %s took %.3g s, above "
                            "%.3g s (a rank was descheduled): not used\n",
                            world_size, xchg_coll_name(coll), slowest[coll][0], most);
                break;
            }
            if (slowest[coll][1] > most + NATIVE_MID_MAX * world_size) /* descheduled: not used */
                slowest[coll][1] = 0.0;
            measured++;
        }
        if (measured == XCHG_NCOLLS) {
            for (int coll = 0; coll < XCHG_NCOLLS; coll++) {
                machine->native_small[coll] = slowest[coll][0];
                machine->native_mid[coll] = slowest[coll][1];
            }
            machine->native_small_ranks = world_size;
        }
    }
    xchg_mem_free(send, send_bytes);
    free(counts);
    return PMPI_Wtime() - began_all;
}

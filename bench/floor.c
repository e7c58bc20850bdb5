/*
 * floor.c: the least time, as bench/harness.c times a call, of any MPI_Alltoall, MPI_Alltoallv
 * or MPI_Allgather whose data must cross between nodes: one exchange among the nodes' leaders,
 * of the bytes the collective moves between each two nodes, and nothing else. A plain MPI
 * program: run it natively (the figures do not depend on xchg) on the emulated cluster or any
 * job that spans nodes.
 *
 *     floor [-n CALLS] [-b BYTES]
 *
 * Each timed call starts as the harness's do, after PMPI_Barrier on the world, and its time is
 * the slowest rank's (every rank's own time, gathered with MPI_Reduce outside the timing). Rows,
 * CALLS timed calls each (default 300) after 20 untimed, blocks of BYTES (default 1):
 *   leaders a2a  the lowest world rank of each node x (MPI_Comm_split_type,
 *                MPI_COMM_TYPE_SHARED; n_x ranks) sends n_x n_y BYTES to every other node y's
 *                leader and receives n_y n_x BYTES from it (MPI_Isend, MPI_Irecv, one
 *                MPI_Waitall); the other ranks make no call. That is what MPI_Alltoall of
 *                BYTES-byte blocks moves between the two nodes. Every node must receive it
 *                from every other node, so an all-to-all that crosses nodes does at least this
 *                much (a relay through fewer messages takes more rounds);
 *   alltoall     MPI_Alltoall of BYTES-byte blocks (MPI_BYTE): what the harness times;
 *   alltoallv    MPI_Alltoallv, BYTES to and from every rank;
 *   leaders ag   as leaders a2a with n_x BYTES from x to each other node: what MPI_Allgather
 *                moves between two nodes;
 *   allgather    MPI_Allgather of BYTES-byte blocks.
 * Prints per row the median and least time in us, then each collective's floor (its leaders'
 * median) over its median ("floor / native"). The rows run in turns, a call of each in each
 * turn, so that a slow spell of the machine falls on all of them.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP 20
#define ROWS 5

enum { LEAD_A2A, ALLTOALL, ALLTOALLV, LEAD_AG, ALLGATHER };

static const char *const names[ROWS] = {"leaders a2a", "alltoall", "alltoallv", "leaders ag",
                                        "allgather"};

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The nodes: the world rank of each node's leader (its lowest rank) and its rank count, in
 * rank order; returns the node count. */
static int find_nodes(int rank, int size, int *leaders, int *ranks)
{
    MPI_Comm node;
    int mine, n = 0, *leader_of = malloc((size_t)size * sizeof *leader_of);

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Allreduce(&rank, &mine, 1, MPI_INT, MPI_MIN, node);
    MPI_Allgather(&mine, 1, MPI_INT, leader_of, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        if (leader_of[r] == r) {
            leaders[n] = r;
            ranks[n] = 0;
            for (int q = 0; q < size; q++)
                ranks[n] += leader_of[q] == r;
            n++;
        }
    MPI_Comm_free(&node);
    free(leader_of);
    return n;
}

/* One exchange among the leaders: node x's leader sends bytes_of(x, y) to y's and receives
 * bytes_of(y, x) (per: BYTES times n_x n_y, or n_x where pairs is 0). */
static void leaders_exchange(int me, int nnodes, const int *leaders, const int *ranks, int pairs,
                             size_t bytes, char *send, char *recv, MPI_Request *reqs,
                             MPI_Status *stats)
{
    int n = 0;
    size_t at = 0;
    for (int y = 0; y < nnodes; y++) {
        size_t in = bytes * (size_t)ranks[y] * (size_t)(pairs ? ranks[me] : 1);
        size_t out = bytes * (size_t)ranks[me] * (size_t)(pairs ? ranks[y] : 1);
        if (y == me)
            continue;
        MPI_Irecv(recv + at, (int)in, MPI_BYTE, leaders[y], 7, MPI_COMM_WORLD, &reqs[n++]);
        MPI_Isend(send + at, (int)out, MPI_BYTE, leaders[y], 7, MPI_COMM_WORLD, &reqs[n++]);
        at += in > out ? in : out;
    }
    MPI_Waitall(n, reqs, stats);
}

int main(int argc, char **argv)
{
    int rank, size, calls = 300, nnodes, me = -1;
    size_t bytes = 1;
    int *leaders, *ranks, *counts, *displs;
    char *send, *recv;
    MPI_Request *reqs;
    MPI_Status *stats;
    double *mine[ROWS], *slowest, med[ROWS];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) {
            calls = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-b") == 0 && i + 1 < argc && atol(argv[i + 1]) > 0) {
            bytes = (size_t)atol(argv[++i]);
        } else {
            if (rank == 0)
                fprintf(stderr, "floor: bad option '%s'\nusage: floor [-n CALLS] [-b BYTES]\n",
                        argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    leaders = malloc((size_t)size * sizeof *leaders);
    ranks = malloc((size_t)size * sizeof *ranks);
    counts = malloc((size_t)size * sizeof *counts);
    displs = malloc((size_t)size * sizeof *displs);
    /* a leader's exchange moves at most what the rank's own alltoall would times its node's
     * ranks: size * size blocks cover it */
    send = calloc((size_t)size * (size_t)size, bytes);
    recv = calloc((size_t)size * (size_t)size, bytes);
    reqs = malloc(2 * (size_t)size * sizeof *reqs);
    stats = malloc(2 * (size_t)size * sizeof *stats);
    slowest = malloc((size_t)calls * sizeof *slowest);
    for (int row = 0; row < ROWS; row++)
        mine[row] = malloc((size_t)calls * sizeof *mine[row]);
    if (!leaders || !ranks || !counts || !displs || !send || !recv || !reqs || !stats || !slowest ||
        !mine[ROWS - 1]) {
        fprintf(stderr, "floor: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    nnodes = find_nodes(rank, size, leaders, ranks);
    for (int x = 0; x < nnodes; x++)
        if (leaders[x] == rank)
            me = x;
    for (int r = 0; r < size; r++) {
        counts[r] = (int)bytes;
        displs[r] = r * (int)bytes;
    }

    for (int call = -WARMUP; call < calls; call++)
        for (int row = 0; row < ROWS; row++) {
            double start;
            PMPI_Barrier(MPI_COMM_WORLD);
            start = MPI_Wtime();
            if ((row == LEAD_A2A || row == LEAD_AG) && me >= 0)
                leaders_exchange(me, nnodes, leaders, ranks, row == LEAD_A2A, bytes, send, recv,
                                 reqs, stats);
            else if (row == ALLTOALL)
                MPI_Alltoall(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE,
                             MPI_COMM_WORLD);
            else if (row == ALLTOALLV)
                MPI_Alltoallv(send, counts, displs, MPI_BYTE, recv, counts, displs, MPI_BYTE,
                              MPI_COMM_WORLD);
            else if (row == ALLGATHER)
                MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE,
                              MPI_COMM_WORLD);
            if (call >= 0)
                mine[row][call] = MPI_Wtime() - start;
        }

    if (rank == 0)
        printf("floor: %d ranks, %d node%s, %zu B, %d calls a row after %d\n", size, nnodes,
               nnodes == 1 ? "" : "s", bytes, calls, WARMUP);
    for (int row = 0; row < ROWS; row++) {
        MPI_Reduce(mine[row], slowest, calls, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            med[row] = median_of(slowest, calls);
            printf("%-12s median %9.2f us  least %9.2f us\n", names[row], med[row] * 1e6,
                   slowest[0] * 1e6);
        }
    }
    if (rank == 0 && nnodes == 1)
        printf("floor: one node, nothing crosses between nodes\n");
    else if (rank == 0)
        printf("floor / native: alltoall %.3f, alltoallv %.3f, allgather %.3f\n",
               med[LEAD_A2A] / med[ALLTOALL], med[LEAD_A2A] / med[ALLTOALLV],
               med[LEAD_AG] / med[ALLGATHER]);
    for (int row = 0; row < ROWS; row++)
        free(mine[row]);
    free(slowest);
    free(stats);
    free(reqs);
    free(recv);
    free(send);
    free(displs);
    free(counts);
    free(ranks);
    free(leaders);
    MPI_Finalize();
    return 0;
}

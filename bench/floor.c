/*
 * floor.c: the least time, as bench/harness.c times a call, of any all-to-all or allgather whose
 * data must cross between nodes: one exchange among the nodes' leaders, and nothing else. A
 * plain MPI program: run it natively (the figures do not depend on xchg) on the emulated
 * cluster or any job that spans nodes.
 *
 *     floor [-n CALLS] [-b BYTES]
 *
 * Each timed call starts as the harness's do, after PMPI_Barrier on the world, and its time is
 * the slowest rank's (every rank's own time, gathered with MPI_Reduce outside the timing). Rows,
 * CALLS timed calls each (default 300) after 20 untimed, blocks of BYTES (default 1):
 *   leaders    the lowest world rank of each node (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED)
 *              sends BYTES to every other leader and receives BYTES from each (MPI_Isend,
 *              MPI_Irecv, one MPI_Waitall); the other ranks make no call. Every node must
 *              receive something from every other node, so a collective that crosses nodes
 *              does at least this much; a relay through fewer messages takes more rounds.
 *   alltoall   MPI_Alltoall of BYTES-byte blocks (MPI_BYTE): what the harness times;
 *   allgather  MPI_Allgather of BYTES-byte blocks;
 *   alltoallv  MPI_Alltoallv, BYTES to and from every rank.
 * Prints per row the median and least time in us, then the leaders' median over each
 * collective's ("floor / native"). The rows run in turns, a call of each in each turn,
 * so that a slow spell of the machine falls on all of them.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP 20
#define ROWS 4

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

/* The world ranks of the nodes' leaders (the lowest rank of each node), in rank order. */
static int find_leaders(int rank, int size, int *leaders)
{
    MPI_Comm node;
    int local, lead, n = 0, *flags = malloc((size_t)size * sizeof *flags);

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    lead = local == 0;
    MPI_Allgather(&lead, 1, MPI_INT, flags, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        if (flags[r])
            leaders[n++] = r;
    MPI_Comm_free(&node);
    free(flags);
    return n;
}

int main(int argc, char **argv)
{
    int rank, size, calls = 300, nleaders, me = -1;
    size_t bytes = 1;
    int *leaders;
    char *send, *recv;
    MPI_Request *reqs;
    MPI_Status *stats;
    double *mine[ROWS], *slowest;
    const char *names[ROWS] = {"leaders", "alltoall", "allgather", "alltoallv"};
    int *counts, *displs;

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
    nleaders = find_leaders(rank, size, leaders);
    for (int i = 0; i < nleaders; i++)
        if (leaders[i] == rank)
            me = i;
    send = calloc((size_t)size, bytes);
    recv = calloc((size_t)size, bytes);
    reqs = malloc(2 * (size_t)size * sizeof *reqs);
    stats = malloc(2 * (size_t)size * sizeof *stats);
    counts = malloc((size_t)size * sizeof *counts);
    displs = malloc((size_t)size * sizeof *displs);
    slowest = malloc((size_t)calls * sizeof *slowest);
    for (int row = 0; row < ROWS; row++)
        mine[row] = malloc((size_t)calls * sizeof *mine[row]);
    if (!leaders || !send || !recv || !reqs || !stats || !counts || !displs || !slowest ||
        !mine[ROWS - 1]) {
        fprintf(stderr, "floor: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    for (int r = 0; r < size; r++) {
        counts[r] = (int)bytes;
        displs[r] = r * (int)bytes;
    }
    for (int call = -WARMUP; call < calls; call++)
        for (int row = 0; row < ROWS; row++) {
            double start;
            int n = 0;
            PMPI_Barrier(MPI_COMM_WORLD);
            start = MPI_Wtime();
            if (row == 0 && me >= 0) {
                for (int i = 0; i < nleaders; i++)
                    if (i != me) {
                        MPI_Irecv(recv + (size_t)i * bytes, (int)bytes, MPI_BYTE, leaders[i], 7,
                                  MPI_COMM_WORLD, &reqs[n++]);
                        MPI_Isend(send + (size_t)i * bytes, (int)bytes, MPI_BYTE, leaders[i], 7,
                                  MPI_COMM_WORLD, &reqs[n++]);
                    }
                MPI_Waitall(n, reqs, stats);
            } else if (row == 1) {
                MPI_Alltoall(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE,
                             MPI_COMM_WORLD);
            } else if (row == 2) {
                MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE,
                              MPI_COMM_WORLD);
            } else if (row == 3) {
                MPI_Alltoallv(send, counts, displs, MPI_BYTE, recv, counts, displs, MPI_BYTE,
                              MPI_COMM_WORLD);
            }
            if (call >= 0)
                mine[row][call] = MPI_Wtime() - start;
        }

    if (rank == 0)
        printf("floor: %d ranks, %d node%s, %zu B, %d calls a row after %d\n", size, nleaders,
               nleaders == 1 ? "" : "s", bytes, calls, WARMUP);
    {
        double med[ROWS];
        for (int row = 0; row < ROWS; row++) {
            MPI_Reduce(mine[row], slowest, calls, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                med[row] = median_of(slowest, calls);
                printf("%-10s median %9.2f us  least %9.2f us\n", names[row], med[row] * 1e6,
                       slowest[0] * 1e6);
            }
        }
        if (rank == 0 && nleaders == 1)
            printf("floor: one node, nothing crosses between nodes\n");
        else if (rank == 0)
            printf("floor / native: alltoall %.3f, allgather %.3f, alltoallv %.3f\n",
                   med[0] / med[1], med[0] / med[2], med[0] / med[3]);
    }
    for (int row = 0; row < ROWS; row++)
        free(mine[row]);
    free(slowest);
    free(displs);
    free(counts);
    free(stats);
    free(reqs);
    free(recv);
    free(send);
    free(leaders);
    MPI_Finalize();
    return 0;
}

/*
 * init_time.c: what MPI_Init costs a program, natively and with the library preloaded (xchg
 * measures the machine and sets up its first call there: shim/interpose.c, setup). A plain MPI
 * program: run it both ways.
 *
 *     init_time
 *
 * Each rank reads CLOCK_MONOTONIC before and after MPI_Init; prints the slowest rank's time in
 * milliseconds, "init_time: N ranks, MPI_Init took T ms (slowest rank)". The time before
 * MPI_Init (the loader, the preloaded library's constructors) is not in it.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int rank, size;
    double start = now(), mine, slowest = 0.0;

    MPI_Init(&argc, &argv);
    mine = now() - start;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("init_time: %d ranks, MPI_Init took %.3f ms (slowest rank)\n", size, slowest * 1e3);
    MPI_Finalize();
    return 0;
}

/*
 * colltime.c: a small preloaded timer (libcolltime.so) that tells how long an unmodified MPI
 * program spends inside MPI_Alltoall, MPI_Alltoallv and MPI_Allgather: the communication time
 * that scripts/bench_apps.sh prints beside a program's own total time.
 *
 * It is preloaded on both sides of a comparison, first in LD_PRELOAD: natively
 * (LD_PRELOAD=libcolltime.so) and before xchg (LD_PRELOAD=libcolltime.so:libxchg.so). Each
 * wrapper reads the clock, calls the next definition of the same function in the search order
 * (dlsym(RTLD_NEXT): xchg's when it is preloaded, else the MPI library's) and adds the elapsed
 * time to its collective's sum; so it times what the program sees, xchg's work included, and
 * costs two clock reads per call. It knows nothing of xchg.
 *
 * At MPI_Finalize, world rank 0 prints one line with the calls summed over the ranks and the
 * slowest rank's time inside them:
 *     colltime: alltoall=N alltoallv=N allgather=N calls, time=S s (slowest rank)
 * then MPI_Finalize goes on down the chain. Calls before MPI_Init or after MPI_Finalize are not
 * counted (there are none in a correct program).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

enum { ALLTOALL, ALLTOALLV, ALLGATHER, NCOLLS };

typedef int (*alltoall_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
typedef int (*alltoallv_fn)(const void *, const int *, const int *, MPI_Datatype, void *,
                            const int *, const int *, MPI_Datatype, MPI_Comm);
typedef int (*finalize_fn)(void);

static double seconds[NCOLLS];
static long calls[NCOLLS];

/* The next definition of NAME after this library (xchg's or the MPI library's). */
static void *next_symbol(const char *name)
{
    void *symbol = dlsym(RTLD_NEXT, name);
    if (!symbol)
        fprintf(stderr, "colltime: no %s after libcolltime.so in the search order\n", name);
    return symbol;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static alltoall_fn next;
    double start = PMPI_Wtime();
    int rc;
    if (!next)
        next = (alltoall_fn)next_symbol("MPI_Alltoall");
    rc = next(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    seconds[ALLTOALL] += PMPI_Wtime() - start;
    calls[ALLTOALL]++;
    return rc;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static alltoall_fn next;
    double start = PMPI_Wtime();
    int rc;
    if (!next)
        next = (alltoall_fn)next_symbol("MPI_Allgather");
    rc = next(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    seconds[ALLGATHER] += PMPI_Wtime() - start;
    calls[ALLGATHER]++;
    return rc;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    static alltoallv_fn next;
    double start = PMPI_Wtime();
    int rc;
    if (!next)
        next = (alltoallv_fn)next_symbol("MPI_Alltoallv");
    rc = next(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    seconds[ALLTOALLV] += PMPI_Wtime() - start;
    calls[ALLTOALLV]++;
    return rc;
}

/* The report (world rank 0), then the next MPI_Finalize. */
int MPI_Finalize(void)
{
    finalize_fn next = (finalize_fn)next_symbol("MPI_Finalize");
    double mine = seconds[ALLTOALL] + seconds[ALLTOALLV] + seconds[ALLGATHER], slowest = 0;
    long total[NCOLLS] = {0, 0, 0};
    int rank;

    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    PMPI_Reduce(calls, total, NCOLLS, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("colltime: alltoall=%ld alltoallv=%ld allgather=%ld calls, time=%.6f s (slowest "
               "rank)\n",
               total[ALLTOALL], total[ALLTOALLV], total[ALLGATHER], slowest);
        fflush(stdout);
    }
    return next ? next() : PMPI_Finalize();
}

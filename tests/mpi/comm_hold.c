/*
 * comm_hold: many communicators alive at once, each used for the three collectives.
 *
 *   comm_hold [K] [--pause SECONDS]
 *
 * Makes K (default 1000) duplicates of MPI_COMM_WORLD and keeps them all; on each it runs
 * MPI_Alltoall (2 ints a block), MPI_Allgather (3 ints) and MPI_Alltoallv ((i + j) mod 3 ints
 * from i to j), every element checked against check_value. With --pause, rank 0 then prints
 * "comm_hold: holding K communicators" and every rank sleeps SECONDS (the caller looks at what
 * the processes hold meanwhile, e.g. /dev/shm); then every communicator runs the collectives
 * once more (with other values) and all are freed.
 *
 * What it catches under a library that keeps something per communicator: a resource of which
 * MPI has few (MPICH: 2048 context ids per process, which an MPI window per communicator would
 * take on top of the communicators themselves) exhausted by 1000 communicators, or a bound of
 * the library's own that fails a call instead of falling back. An error stops the job
 * (MPI_Abort): the ranks may be out of step.
 * Prints "comm_hold: N checks, M failed"; exit status non-zero on failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define MAX_RANKS 64

static int value(int source, int destination, uint64_t index, uint32_t salt)
{
    return (int)(check_value(source, destination, index, salt) & 0x7fffffff);
}

static void check_rc(int rc, const char *what, int which)
{
    check_count(1);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        check_fail("communicator %d: %s returned %s", which, what,
                   check_error_string(rc, text, (int)sizeof text));
        fprintf(stderr, "comm_hold: stopping: an MPI call returned an error\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void check_ints(const int *got, int n, int source, int destination, uint32_t salt,
                       const char *what, int which)
{
    for (int e = 0; e < n; e++) {
        check_count(1);
        if (got[e] != value(source, destination, (uint64_t)e, salt))
            check_fail("communicator %d: %s element %d from rank %d: wrong value", which, what, e,
                       source);
    }
}

/* The three collectives on comm, values salted by salt. */
static void exercise(MPI_Comm comm, int which, uint32_t salt)
{
    int sendbuf[3 * MAX_RANKS], recvbuf[3 * MAX_RANKS];
    int scounts[MAX_RANKS], sdispls[MAX_RANKS], rcounts[MAX_RANKS], rdispls[MAX_RANKS];
    int p, me, at = 0;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    for (int j = 0; j < p; j++)
        for (int e = 0; e < 2; e++)
            sendbuf[2 * j + e] = value(me, j, (uint64_t)e, salt);
    check_rc(MPI_Alltoall(sendbuf, 2, MPI_INT, recvbuf, 2, MPI_INT, comm), "MPI_Alltoall", which);
    for (int i = 0; i < p; i++)
        check_ints(&recvbuf[2 * i], 2, i, me, salt, "MPI_Alltoall", which);

    for (int e = 0; e < 3; e++)
        sendbuf[e] = value(me, -1, (uint64_t)e, salt + 1);
    check_rc(MPI_Allgather(sendbuf, 3, MPI_INT, recvbuf, 3, MPI_INT, comm), "MPI_Allgather", which);
    for (int i = 0; i < p; i++)
        check_ints(&recvbuf[3 * i], 3, i, -1, salt + 1, "MPI_Allgather", which);

    for (int j = 0; j < p; j++) {
        scounts[j] = (me + j) % 3;
        sdispls[j] = at;
        for (int e = 0; e < scounts[j]; e++)
            sendbuf[at + e] = value(me, j, (uint64_t)e, salt + 2);
        at += scounts[j];
    }
    at = 0;
    for (int i = 0; i < p; i++) {
        rcounts[i] = (i + me) % 3;
        rdispls[i] = at;
        at += rcounts[i];
    }
    check_rc(
        MPI_Alltoallv(sendbuf, scounts, sdispls, MPI_INT, recvbuf, rcounts, rdispls, MPI_INT, comm),
        "MPI_Alltoallv", which);
    for (int i = 0; i < p; i++)
        check_ints(&recvbuf[rdispls[i]], rcounts[i], i, me, salt + 2, "MPI_Alltoallv", which);
}

int main(int argc, char **argv)
{
    int k = 1000, pause = 0, me, p, status;
    MPI_Comm *comms;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pause") == 0 && i + 1 < argc)
            pause = atoi(argv[++i]);
        else
            k = atoi(argv[i]);
    }
    if (k < 1 || p > MAX_RANKS) {
        if (me == 0)
            fprintf(stderr,
                    "comm_hold: usage: comm_hold [K >= 1] [--pause SECONDS], at most %d "
                    "ranks\n",
                    MAX_RANKS);
        MPI_Finalize();
        return 2;
    }
    comms = malloc((size_t)k * sizeof *comms);
    for (int c = 0; c < k; c++) {
        check_rc(MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]), "MPI_Comm_dup", c);
        exercise(comms[c], c, (uint32_t)c * 8);
    }
    if (pause > 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            printf("comm_hold: holding %d communicators\n", k);
            fflush(stdout);
        }
        sleep((unsigned)pause);
    }
    for (int c = 0; c < k; c++)
        exercise(comms[c], c, (uint32_t)c * 8 + 4);
    for (int c = 0; c < k; c++)
        MPI_Comm_free(&comms[c]);
    free(comms);
    status = check_finish("comm_hold");
    MPI_Finalize();
    return status;
}

/*
 * many_comms: a program that keeps thousands of communicators alive at once, as solver
 * libraries, task runtimes and mpi4py programs do, and makes collectives on every one.
 *
 *     many_comms [N]      (default 2000)
 *
 * It creates N communicators and keeps them all: mostly duplicates of MPI_COMM_WORLD, every
 * 10th a split of the world into two halves (even and odd world ranks, in reversed order),
 * every 25th a duplicate of MPI_COMM_SELF. Right after creating each one it makes an
 * MPI_Alltoall, an MPI_Allgather and an MPI_Alltoallv on it, so that the library builds its
 * context while all the others are alive; then, with all N alive, it makes one more round of
 * the three on each of them in reverse order of creation, then frees them all. Every element is
 * checked (formula data, check.h) and the bytes after each receive buffer must keep their
 * sentinel.
 *
 * MPICH 4.0.2 has 2048 context ids per process; natively 2000 live communicators fit. A
 * library that spends a context id per user communicator (a private duplicate of each, or an
 * MPI window) makes the program's own MPI_Comm_dup fail long before that: the program's calls
 * run with MPI_ERRORS_RETURN, so that such a failure is reported with the count reached rather
 * than aborting without a word.
 * Prints "many_comms: N checks, M failed"; exit status non-zero on failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define BLOCK 3 /* ints per block */
#define TAIL 4  /* sentinel ints after each receive buffer */

static void stop(int rc, const char *what, int index)
{
    char text[MPI_MAX_ERROR_STRING];
    check_fail("communicator %d: %s returned %s", index, what,
               check_error_string(rc, text, (int)sizeof text));
    fprintf(stderr, "many_comms: stopping: an MPI call returned an error\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* The three collectives once on comm (index: which communicator, round: which pass), checked. */
static void exercise(MPI_Comm comm, int index, int round)
{
    int p, rank, rc, wrank;
    uint32_t salt = (uint32_t)(index * 4 + round);
    int *send, *recv, *counts, *displs;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    send = malloc(sizeof(int) * (size_t)p * BLOCK);
    recv = malloc(sizeof(int) * ((size_t)p * BLOCK + TAIL));
    counts = malloc(sizeof(int) * 2 * (size_t)p);
    displs = counts + p;

    /* MPI_Alltoall */
    for (int j = 0; j < p; j++)
        for (int i = 0; i < BLOCK; i++)
            send[j * BLOCK + i] = (int)check_value(rank, j, (uint64_t)i, salt);
    memset(recv, CHECK_SENTINEL, sizeof(int) * ((size_t)p * BLOCK + TAIL));
    rc = MPI_Alltoall(send, BLOCK, MPI_INT, recv, BLOCK, MPI_INT, comm);
    if (rc != MPI_SUCCESS)
        stop(rc, "MPI_Alltoall", index);
    for (int j = 0; j < p; j++)
        for (int i = 0; i < BLOCK; i++) {
            check_count(1);
            if (recv[j * BLOCK + i] != (int)check_value(j, rank, (uint64_t)i, salt))
                check_fail("comm %d alltoall: element %d from %d wrong", index, i, j);
        }
    for (int i = 0; i < TAIL * (int)sizeof(int); i++) {
        check_count(1);
        if (((unsigned char *)(recv + p * BLOCK))[i] != CHECK_SENTINEL)
            check_fail("comm %d alltoall: byte %d after the buffer overwritten", index, i);
    }

    /* MPI_Allgather */
    for (int i = 0; i < BLOCK; i++)
        send[i] = (int)check_value(rank, -1, (uint64_t)i, salt + 1);
    memset(recv, CHECK_SENTINEL, sizeof(int) * ((size_t)p * BLOCK + TAIL));
    rc = MPI_Allgather(send, BLOCK, MPI_INT, recv, BLOCK, MPI_INT, comm);
    if (rc != MPI_SUCCESS)
        stop(rc, "MPI_Allgather", index);
    for (int j = 0; j < p; j++)
        for (int i = 0; i < BLOCK; i++) {
            check_count(1);
            if (recv[j * BLOCK + i] != (int)check_value(j, -1, (uint64_t)i, salt + 1))
                check_fail("comm %d allgather: element %d of %d wrong", index, i, j);
        }

    /* MPI_Alltoallv: rank r sends (r + j) % 3 ints to rank j (zero counts included) */
    {
        int at = 0, rat = 0, rcounts[1024], rdispls[1024];
        for (int j = 0; j < p && j < 1024; j++) {
            counts[j] = (rank + j) % 3;
            displs[j] = at;
            for (int i = 0; i < counts[j]; i++)
                send[at + i] = (int)check_value(rank, j, (uint64_t)i, salt + 2);
            at += counts[j];
            rcounts[j] = (j + rank) % 3;
            rdispls[j] = rat;
            rat += rcounts[j];
        }
        memset(recv, CHECK_SENTINEL, sizeof(int) * ((size_t)p * BLOCK + TAIL));
        rc = MPI_Alltoallv(send, counts, displs, MPI_INT, recv, rcounts, rdispls, MPI_INT, comm);
        if (rc != MPI_SUCCESS)
            stop(rc, "MPI_Alltoallv", index);
        for (int j = 0; j < p; j++)
            for (int i = 0; i < rcounts[j]; i++) {
                check_count(1);
                if (recv[rdispls[j] + i] != (int)check_value(j, rank, (uint64_t)i, salt + 2))
                    check_fail("comm %d alltoallv: element %d from %d wrong", index, i, j);
            }
        for (int i = rat; i < p * BLOCK + TAIL; i++) {
            check_count(1);
            if (recv[i] != (int)(0x01010101u * CHECK_SENTINEL))
                check_fail("comm %d alltoallv: int %d past the data overwritten", index, i);
        }
    }
    free(send);
    free(recv);
    free(counts);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000, wrank, wsize, rc;
    MPI_Comm *comms;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (n < 1 || wsize > 1024) {
        if (wrank == 0)
            fprintf(stderr, "many_comms: N must be at least 1 and the job at most 1024 ranks\n");
        MPI_Finalize();
        return 2;
    }
    comms = malloc(sizeof *comms * (size_t)n);
    for (int i = 0; i < n; i++) {
        if (i % 25 == 24)
            rc = MPI_Comm_dup(MPI_COMM_SELF, &comms[i]);
        else if (i % 10 == 9)
            rc = MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &comms[i]);
        else
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
        if (rc != MPI_SUCCESS) {
            if (wrank == 0)
                fprintf(stderr, "many_comms: creating communicator %d failed\n", i);
            stop(rc, "MPI_Comm_dup/split", i);
        }
        MPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN);
        exercise(comms[i], i, 0);
    }
    for (int i = n - 1; i >= 0; i--)
        exercise(comms[i], i, 1);
    for (int i = 0; i < n; i++)
        MPI_Comm_free(&comms[i]);
    free(comms);
    rc = check_finish("many_comms");
    MPI_Finalize();
    return rc;
}

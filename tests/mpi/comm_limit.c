/*
 * comm_limit: how many communicators a program can hold at once, natively and under xchg.
 *
 *     comm_limit [MAX] [orders]
 *
 * Duplicates MPI_COMM_WORLD until MPI_Comm_dup fails (with MPI_ERRORS_RETURN) or MAX (default
 * 5000) are alive, making an MPI_Alltoall on each new one (checked) so that a library that
 * interposes builds its state for every one of them. With "orders" each new communicator is a
 * split of the world whose rank order is the next permutation of the world's ranks (so many
 * distinct groups, each asking a library for private state of its own, as far as p! allows).
 * Prints "comm_limit: held N communicators" and the usual check line. The suite compares N
 * natively and under xchg: xchg may hold at most a handful of the MPI library's context ids
 * (MPICH has 2048 per process), whatever the program does.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* The i-th permutation of 0 .. p-1 in lexicographic order (i taken mod p!), at rank r. */
static int permuted(int i, int p, int r)
{
    int items[64], n = p, out = 0;
    long fact = 1;
    for (int k = 0; k < p; k++)
        items[k] = k;
    for (int k = 2; k < p && fact < 1000000; k++)
        fact *= k;
    if (p > 1 && fact < 1000000)
        i %= (int)(fact * p);
    for (int pos = 0; pos < p; pos++) {
        int pick;
        fact = 1;
        for (int k = 2; k < n && fact < 1000000; k++)
            fact *= k;
        pick = fact < 1000000 ? (int)(i / fact) % n : 0;
        if (fact < 1000000)
            i %= (int)fact;
        if (items[pick] == r)
            out = pos;
        memmove(&items[pick], &items[pick + 1], (size_t)(n - pick - 1) * sizeof items[0]);
        n--;
    }
    return out;
}

int main(int argc, char **argv)
{
    int max = argc > 1 ? atoi(argv[1]) : 5000, orders = argc > 2 && !strcmp(argv[2], "orders");
    int rank, p, held = 0, rc = MPI_SUCCESS;
    MPI_Comm *comms;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    comms = malloc(sizeof *comms * (size_t)(max > 0 ? max : 1));
    if (p > 64 || !comms)
        MPI_Abort(MPI_COMM_WORLD, 2);
    while (held < max) {
        int send[64], recv[64], me;
        if (orders)
            rc = MPI_Comm_split(MPI_COMM_WORLD, 0, permuted(held, p, rank), &comms[held]);
        else
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &comms[held]);
        if (rc != MPI_SUCCESS)
            break;
        MPI_Comm_set_errhandler(comms[held], MPI_ERRORS_RETURN);
        MPI_Comm_rank(comms[held], &me);
        for (int j = 0; j < p; j++)
            send[j] = (int)check_value(me, j, 0, (uint32_t)held);
        rc = MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, comms[held]);
        check_count(1);
        if (rc != MPI_SUCCESS) {
            check_fail("communicator %d: MPI_Alltoall failed", held);
            held++;
            break;
        }
        for (int j = 0; j < p; j++) {
            check_count(1);
            if (recv[j] != (int)check_value(j, me, 0, (uint32_t)held))
                check_fail("communicator %d: element from %d wrong", held, j);
        }
        held++;
    }
    if (rank == 0)
        printf("comm_limit: held %d communicators%s\n", held, rc == MPI_SUCCESS ? " (the maximum asked)" : "");
    for (int i = 0; i < held; i++)
        MPI_Comm_free(&comms[i]);
    free(comms);
    rc = check_finish("comm_limit");
    MPI_Finalize();
    return rc;
}

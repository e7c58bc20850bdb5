/*
 * comm_cycle.c: the first calls on a new communicator, as a program that makes and frees
 * communicators of one group again and again meets them (a library's duplicate per plan or
 * per call). A plain MPI program: run it natively and with the library preloaded.
 *
 *     comm_cycle [CYCLES] [CALLS] [BYTES]
 *
 * CYCLES times (default 200): MPI_Comm_dup of MPI_COMM_WORLD, CALLS (default 17) calls of
 * MPI_Alltoall with BYTES per block (default 1), each after an MPI_Barrier and timed alone,
 * MPI_Comm_free. Prints, for each call's position on its communicator, the mean over the cycles
 * of the slowest rank's time in microseconds: "comm_cycle: call K: T us". The received bytes
 * of every call are checked; exit status 1 on a wrong byte.
 *
 * Then CYCLES more communicators as a task per communicator runs them: MPI_Comm_dup, CALLS
 * calls back to back (no barrier between them; the bytes of the last one checked), MPI_Comm_free,
 * timed as a whole from a barrier on MPI_COMM_WORLD before the first to one after the last:
 * "comm_cycle: per communicator (dup, CALLS calls, free): T us", the mean over the cycles.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, cycles, calls, wrong = 0, any_wrong = 0;
    double task_start, task_seconds;
    size_t bytes;
    char *send, *recv;
    double *sum;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cycles = argc > 1 ? atoi(argv[1]) : 200;
    calls = argc > 2 ? atoi(argv[2]) : 17;
    bytes = argc > 3 ? (size_t)atol(argv[3]) : 1;
    if (cycles < 1 || calls < 1 || bytes < 1 || bytes > (1u << 24)) {
        if (rank == 0)
            fprintf(stderr, "usage: comm_cycle [CYCLES >= 1] [CALLS >= 1] [BYTES 1..16M]\n");
        MPI_Finalize();
        return 2;
    }
    send = malloc(bytes * (size_t)size);
    recv = malloc(bytes * (size_t)size);
    sum = calloc((size_t)calls, sizeof *sum);
    if (!send || !recv || !sum)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int c = 0; c < cycles; c++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        for (int k = 0; k < calls; k++) {
            double start, mine, slowest;
            for (int to = 0; to < size; to++) /* block to `to`: (rank, to, cycle, call) */
                memset(send + (size_t)to * bytes, (rank * 31 + to * 7 + c + k) & 0xff, bytes);
            memset(recv, 0xee, bytes * (size_t)size);
            MPI_Barrier(comm);
            start = MPI_Wtime();
            MPI_Alltoall(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, comm);
            mine = MPI_Wtime() - start;
            MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
            sum[k] += slowest;
            for (int from = 0; from < size; from++)
                for (size_t i = 0; i < bytes; i++)
                    wrong += (unsigned char)recv[(size_t)from * bytes + i] !=
                             (unsigned char)((from * 31 + rank * 7 + c + k) & 0xff);
        }
        MPI_Comm_free(&comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    task_start = MPI_Wtime();
    for (int c = 0; c < cycles; c++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        for (int to = 0; to < size; to++)
            memset(send + (size_t)to * bytes, (rank * 31 + to * 7 + c) & 0xff, bytes);
        memset(recv, 0xee, bytes * (size_t)size);
        for (int k = 0; k < calls; k++)
            MPI_Alltoall(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, comm);
        for (int from = 0; from < size; from++)
            for (size_t i = 0; i < bytes; i++)
                wrong += (unsigned char)recv[(size_t)from * bytes + i] !=
                         (unsigned char)((from * 31 + rank * 7 + c) & 0xff);
        MPI_Comm_free(&comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    task_seconds = MPI_Wtime() - task_start;
    MPI_Allreduce(&wrong, &any_wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int k = 0; k < calls; k++)
            printf("comm_cycle: call %d: %.2f us\n", k + 1, sum[k] / cycles * 1e6);
        printf("comm_cycle: per communicator (dup, %d calls, free): %.2f us\n", calls,
               task_seconds / cycles * 1e6);
        printf("comm_cycle: %d ranks, %d communicators, %d calls each, %zu B blocks, %d wrong bytes\n",
               size, cycles, calls, bytes, any_wrong);
    }
    free(send);
    free(recv);
    free(sum);
    MPI_Finalize();
    return any_wrong != 0;
}

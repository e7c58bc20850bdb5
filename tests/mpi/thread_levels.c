/*
 * thread_levels.c: processes that ask MPI_Init_thread for different thread levels, which the
 * MPI standard allows: world rank 0 asks for MPI_THREAD_MULTIPLE, the others for
 * MPI_THREAD_SINGLE. Every rank then makes MPI_Alltoall, MPI_Allgather and MPI_Alltoallv calls
 * of 16 B blocks on two duplicates of MPI_COMM_WORLD in turn (one call in three on the second),
 * ITERATIONS times (default 600), from the main thread only, and checks every received byte
 * and a guard past the receive buffer.
 *
 * Under xchg this failed before the thread level was agreed at MPI_Init: rank 0 kept a learning
 * state per communicator, the others one for both duplicates, so the ranks reached different
 * steps of learning for the same call and ran different algorithms (the job hung); and the
 * warm-up at MPI_Init made a duplicate of the world on some ranks only.
 *
 * A rank learns its world rank before MPI_Init_thread from the launcher's environment (PMI_RANK
 * under MPICH's Hydra, OMPI_COMM_WORLD_RANK under Open MPI); without either it says so and every
 * rank asks for MPI_THREAD_SINGLE.
 *
 * Output (rank 0): "thread_levels: N checks, M failed" (and the levels provided); exit status
 * 1 when a check failed.
 *
 * Usage: thread_levels [ITERATIONS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 16
#define GUARD 8
#define SENTINEL 0x5a

/* The byte that rank `from` sends to rank `to` at offset k of its block in iteration it. */
static unsigned char byte_of(int from, int to, int k, int it)
{
    return (unsigned char)(from * 31 + to * 7 + k * 3 + it);
}

/* Checks p received blocks (block j from rank j, for this rank `me`, or every block from rank j
 * to rank j for the allgather's own block order) and the guard past them. */
static long check(const unsigned char *recv, int p, int me, int it, int gather, long *checks)
{
    long bad = 0;
    for (int j = 0; j < p; j++)
        for (int k = 0; k < BLOCK; k++)
            bad += recv[j * BLOCK + k] != byte_of(j, gather ? 0 : me, k, it);
    for (int g = 0; g < GUARD; g++)
        bad += recv[p * BLOCK + g] != SENTINEL;
    *checks += (long)p * BLOCK + GUARD;
    return bad;
}

int main(int argc, char **argv)
{
    const char *env = getenv("PMI_RANK");
    int iterations = argc > 1 ? atoi(argv[1]) : 600, want, got, rank, p, known;
    long checks = 0, bad = 0, all_checks = 0, all_bad = 0;
    int *counts, *displs, levels[2];
    unsigned char *send, *recv;
    MPI_Comm comm[2];

    if (!env)
        env = getenv("OMPI_COMM_WORLD_RANK");
    known = env != NULL;
    want = known && atoi(env) == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, want, &got);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (rank == 0 && !known)
        printf("thread_levels: no PMI_RANK or OMPI_COMM_WORLD_RANK: every rank asked for "
               "MPI_THREAD_SINGLE\n");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm[1]);
    send = malloc((size_t)p * BLOCK);
    recv = malloc((size_t)p * BLOCK + GUARD);
    counts = malloc((size_t)p * sizeof *counts);
    displs = malloc((size_t)p * sizeof *displs);
    if (!send || !recv || !counts || !displs || iterations < 1) {
        fprintf(stderr, "thread_levels: no memory, or iterations < 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int j = 0; j < p; j++) {
        counts[j] = BLOCK;
        displs[j] = j * BLOCK;
    }
    for (int it = 0; it < iterations; it++) {
        MPI_Comm c = comm[it % 3 == 2];
        /* alltoall */
        for (int j = 0; j < p; j++)
            for (int k = 0; k < BLOCK; k++)
                send[j * BLOCK + k] = byte_of(rank, j, k, it);
        memset(recv, SENTINEL, (size_t)p * BLOCK + GUARD);
        MPI_Alltoall(send, BLOCK, MPI_BYTE, recv, BLOCK, MPI_BYTE, c);
        bad += check(recv, p, rank, it, 0, &checks);
        /* alltoallv, the same blocks */
        memset(recv, SENTINEL, (size_t)p * BLOCK + GUARD);
        MPI_Alltoallv(send, counts, displs, MPI_BYTE, recv, counts, displs, MPI_BYTE, c);
        bad += check(recv, p, rank, it, 0, &checks);
        /* allgather: every rank's block for rank 0 */
        memset(recv, SENTINEL, (size_t)p * BLOCK + GUARD);
        MPI_Allgather(send, BLOCK, MPI_BYTE, recv, BLOCK, MPI_BYTE, c);
        bad += check(recv, p, rank, it, 1, &checks);
    }
    MPI_Reduce(&checks, &all_checks, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    levels[0] = got;
    levels[1] = got;
    MPI_Allreduce(MPI_IN_PLACE, &levels[0], 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &levels[1], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("thread_levels: %d ranks, levels provided %d to %d, %d iterations\n", p,
               levels[0], levels[1], iterations);
        printf("thread_levels: %ld checks, %ld failed\n", all_checks, all_bad);
    }
    MPI_Comm_free(&comm[0]);
    MPI_Comm_free(&comm[1]);
    free(send);
    free(recv);
    free(counts);
    free(displs);
    MPI_Finalize();
    return all_bad > 0 && rank == 0 ? 1 : 0;
}

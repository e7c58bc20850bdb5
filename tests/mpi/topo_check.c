/*
 * topo_check: collectives on communicators with a Cartesian topology, the shapes the torus
 * algorithm and the topology summary (xchg_topo_t) are about.
 *
 * A plain MPI program (run natively and with the library preloaded). It builds, from
 * MPI_COMM_WORLD (p ranks):
 *   - a periodic ring of p (MPI_Cart_create, 1 dimension, periodic, reorder 0);
 *   - a periodic 2D torus with MPI_Dims_create(p, 2) (reorder 1: the MPI library may renumber);
 *   - the same 2D shape with the second dimension not periodic (not a torus);
 * and on each runs MPI_Alltoall, MPI_Allgather and MPI_Alltoallv with 5 ints per block,
 * checking every element against check_value and the guard bytes after the data. With
 * XCHG_VERBOSE=1 the library prints one "xchg: communicator p=P: ..." line per new communicator,
 * which scripts/cases/topology.sh checks: "ring of P" for the first, "torus RxC" for the second,
 * neither for the third. Output: "topo_check: N checks, M failed".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 5       /* ints per block */
#define GUARD 32  /* sentinel bytes after every receive buffer */

static uint32_t salt = 1;

static void stop_on_error(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "topo_check: %s returned %d\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void check_recv(const unsigned char *recv, int p, int rank, int allgather, uint32_t s)
{
    const int *got = (const int *)recv;
    for (int j = 0; j < p; j++)
        for (int i = 0; i < N; i++)
            if ((uint32_t)got[j * N + i] != check_value(j, allgather ? -1 : rank, (uint64_t)i, s))
                check_fail("%s: element %d from %d wrong", allgather ? "allgather" : "alltoall",
                           i, j);
    check_count((long long)p * N);
    for (int i = 0; i < GUARD; i++)
        if (recv[(size_t)p * N * sizeof(int) + i] != CHECK_SENTINEL)
            check_fail("guard byte %d overwritten", i);
    check_count(GUARD);
}

/* The three collectives on comm, every byte checked. */
static void exercise(MPI_Comm comm)
{
    int p, rank;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    int *send = malloc((size_t)p * N * sizeof(int)), *counts = malloc(2 * (size_t)p * sizeof(int));
    int *displs = counts + p;
    unsigned char *recv = malloc((size_t)p * N * sizeof(int) + GUARD);
    for (int coll = 0; coll < 3; coll++) {
        uint32_t s = salt++;
        for (int j = 0; j < p; j++) {
            counts[j] = N;
            displs[j] = j * N;
            for (int i = 0; i < N; i++)
                send[j * N + i] = (int)check_value(rank, coll == 1 ? -1 : j, (uint64_t)i, s);
        }
        memset(recv, CHECK_SENTINEL, (size_t)p * N * sizeof(int) + GUARD);
        if (coll == 0)
            stop_on_error(MPI_Alltoall(send, N, MPI_INT, recv, N, MPI_INT, comm), "MPI_Alltoall");
        else if (coll == 1)
            stop_on_error(MPI_Allgather(send, N, MPI_INT, recv, N, MPI_INT, comm),
                          "MPI_Allgather");
        else
            stop_on_error(MPI_Alltoallv(send, counts, displs, MPI_INT, recv, counts, displs,
                                        MPI_INT, comm),
                          "MPI_Alltoallv");
        check_recv(recv, p, rank, coll == 1, s);
    }
    free(send);
    free(counts);
    free(recv);
}

int main(int argc, char **argv)
{
    int p, dims[2] = {0, 0}, periodic[2] = {1, 1}, open_ends[2] = {1, 0};
    MPI_Comm ring, torus, mesh;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Cart_create(MPI_COMM_WORLD, 1, &p, periodic, 0, &ring);
    exercise(ring);
    MPI_Dims_create(p, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periodic, 1, &torus);
    exercise(torus);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, open_ends, 0, &mesh);
    exercise(mesh);
    MPI_Comm_free(&ring);
    MPI_Comm_free(&torus);
    MPI_Comm_free(&mesh);
    int status = check_finish("topo_check");
    MPI_Finalize();
    return status;
}

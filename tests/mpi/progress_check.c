/*
 * progress_check: a collective must keep the MPI library progressing while it waits.
 *
 * Rank 0 starts a large nonblocking send to rank 1 and then calls the collective; rank 1 first
 * receives that message (a blocking MPI_Recv) and only then joins the collective. The program
 * is correct MPI (the progress rule): while rank 0 waits inside the collective, the library must
 * still move its pending send, or rank 1 never arrives. A collective that waits by looking at
 * memory alone (xchg's shm algorithms, algos/shm.c) must drive MPI's progress engine itself;
 * the message is large (PROGRESS_BYTES) so that it goes by a rendezvous that needs the
 * sender's progress. The other ranks join the collective at once.
 *
 * Each round does this for MPI_Alltoall, MPI_Allgather and MPI_Alltoallv (ROUNDS rounds, a
 * different salt each), with MPI_INT blocks of BLOCK elements, and checks every received
 * element, the large message's every element, and the 64-byte guards after each receive buffer.
 * A missing progress shows as a hang, which the runner's timeout turns into a failure.
 * Needs 2 ranks or more (with one it says SKIP).
 */
#include "check.h"

#define PROGRESS_BYTES (8 << 20)
#define BLOCK 16
#define ROUNDS 3
#define GUARD 64

static int rank, size;

static void fill_blocks(int *buf, uint32_t salt, int per_dest)
{
    for (int j = 0; j < size; j++)
        for (int e = 0; e < BLOCK; e++)
            buf[j * BLOCK + e] = (int)check_value(rank, per_dest ? j : -1, (uint64_t)e, salt);
}

static void check_blocks(const int *buf, uint32_t salt, int per_dest, const char *what)
{
    const unsigned char *guard = (const unsigned char *)(buf + size * BLOCK);
    for (int i = 0; i < size; i++)
        for (int e = 0; e < BLOCK; e++) {
            int want = (int)check_value(i, per_dest ? rank : -1, (uint64_t)e, salt);
            check_count(1);
            if (buf[i * BLOCK + e] != want)
                check_fail("%s: rank %d: element %d from %d is %d, expected %d", what, rank, e, i,
                           buf[i * BLOCK + e], want);
        }
    for (int g = 0; g < GUARD; g++) {
        check_count(1);
        if (guard[g] != CHECK_SENTINEL)
            check_fail("%s: rank %d: guard byte %d after the buffer was overwritten", what, rank,
                       g);
    }
}

/* The large message of rank 0 to rank 1 around one collective. */
static void with_pending_send(int coll, uint32_t salt, int *big, int *send, int *recv)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int n = PROGRESS_BYTES / (int)sizeof(int), rc = MPI_SUCCESS;
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    static const char *const names[] = {"alltoall", "allgather", "alltoallv"};

    for (int j = 0; j < size; j++) {
        counts[j] = BLOCK;
        displs[j] = j * BLOCK;
    }
    fill_blocks(send, salt, coll != 1);
    memset(recv, CHECK_SENTINEL, (size_t)size * BLOCK * sizeof(int) + GUARD);
    if (rank == 0) {
        for (int e = 0; e < n; e++)
            big[e] = (int)check_value(0, 1, (uint64_t)e, salt);
        MPI_Isend(big, n, MPI_INT, 1, 7, MPI_COMM_WORLD, &req);
    } else if (rank == 1) {
        MPI_Recv(big, n, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (coll == 0)
        rc = MPI_Alltoall(send, BLOCK, MPI_INT, recv, BLOCK, MPI_INT, MPI_COMM_WORLD);
    else if (coll == 1)
        rc = MPI_Allgather(send, BLOCK, MPI_INT, recv, BLOCK, MPI_INT, MPI_COMM_WORLD);
    else
        rc = MPI_Alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT,
                           MPI_COMM_WORLD);
    check_count(1);
    if (rc != MPI_SUCCESS)
        check_fail("%s: rank %d: return code %d", names[coll], rank, rc);
    if (rank == 0)
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    check_blocks(recv, salt, coll != 1, names[coll]);
    if (rank == 1)
        for (int e = 0; e < n; e++) {
            check_count(1);
            if (big[e] != (int)check_value(0, 1, (uint64_t)e, salt)) {
                check_fail("%s: rank 1: element %d of the large message is wrong", names[coll], e);
                break;
            }
        }
    free(counts);
    free(displs);
}

int main(int argc, char **argv)
{
    int *big, *send, *recv, status;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            printf("progress_check: SKIP: needs 2 ranks or more\n");
        check_skip(1);
        status = check_finish("progress_check");
        MPI_Finalize();
        return status;
    }
    big = malloc(PROGRESS_BYTES);
    send = malloc((size_t)size * BLOCK * sizeof(int));
    recv = malloc((size_t)size * BLOCK * sizeof(int) + GUARD);
    for (int round = 0; round < ROUNDS; round++)
        for (int coll = 0; coll < 3; coll++)
            with_pending_send(coll, (uint32_t)(round * 3 + coll + 1), big, send, recv);
    free(big);
    free(send);
    free(recv);
    status = check_finish("progress_check");
    MPI_Finalize();
    return status;
}

/*
 * learn_check: repeated call shapes, the case that selection that learns (XCHG_LEARN) changes.
 *
 * A plain MPI program (run natively and with the library preloaded). Every call shape is
 * repeated REPEATS times, which is more than a learning trial takes (native and up to three
 * candidates, six calls each), so that the calls of a trial, the agreement that settles it and
 * the calls after it all run. Under XCHG_TEST_SKEW_TIMES=1 every rank distorts its own timings
 * differently, so the ranks would disagree if they settled on their own clocks: a rank that ran
 * another algorithm than its peers would deadlock or deliver wrong bytes, which this program
 * detects.
 *
 * Shapes: MPI_Alltoall, MPI_Allgather and MPI_Alltoallv (even counts, skewed counts where rank
 * 0 sends SKEW times more to rank 1, and counts that change on every call as in a sort), on
 * MPI_COMM_WORLD, on a split of it into two groups of different sizes, and on a reversed copy;
 * block sizes 8 B, 512 B and 8 KiB (ints). The shapes are interleaved (A, B, A, B, ...) as a
 * program with two call sites would make them. Odd ranks describe every other MPI_Alltoall and
 * MPI_Allgather send buffer as pairs of ints instead of ints: those ranks then miss xchg's
 * memorised call and select anew where the even ranks take the memorised path, and both
 * paths must count the calls of a settled shape alike (learning again and the watch of
 * shim/learn.c at the same call on every rank).
 *
 * Argument: calls per shape (default REPEATS); more calls reach the watch's checks.
 *
 * Every received element is checked against check_value(source, destination, index, salt) with
 * a new salt per call, and the receive buffer's guard bytes after the data (and, for
 * alltoallv, the gaps between blocks) must keep the sentinel. Output: "learn_check: N checks,
 * M failed".
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define REPEATS 40
#define SKEW 16
#define GAP 3 /* ints of sentinel between alltoallv blocks */

static uint32_t salt_next = 1;
static int repeats = REPEATS;
static MPI_Datatype pair; /* two ints */

/* Counts of alltoallv pattern `pattern` from src to dst at call `call`. */
static int v_count(int pattern, int src, int dst, int base, int call)
{
    switch (pattern) {
    case 0:
        return base;
    case 1:
        return src == 0 && dst == 1 ? base * SKEW : base;
    default:
        return (base * ((src * 7 + dst * 3 + call) % 5)) / 2;
    }
}

static void check_block(const int *got, int n, int src, int dst, uint32_t salt, const char *what)
{
    for (int i = 0; i < n; i++)
        if ((uint32_t)got[i] != check_value(src, dst, (uint64_t)i, salt))
            check_fail("%s: element %d from %d: got %d", what, i, src, got[i]);
    check_count(n);
}

static void check_sentinel(const unsigned char *bytes, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (bytes[i] != CHECK_SENTINEL)
            check_fail("%s: sentinel byte %zu overwritten", what, i);
    check_count((long long)n);
}

static void stop_on_error(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "learn_check: %s returned %d\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* One MPI_Alltoall (allgather = 0) or MPI_Allgather (allgather = 1) of n ints per block. */
static void equal_blocks(MPI_Comm comm, int allgather, int n)
{
    int p, rank, guard = 64;
    uint32_t salt = salt_next++;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    int *send = malloc((size_t)p * n * sizeof(int) + 1);
    unsigned char *recv = malloc((size_t)p * n * sizeof(int) + guard);
    for (int j = 0; j < (allgather ? 1 : p); j++)
        for (int i = 0; i < n; i++)
            send[(size_t)j * n + i] = (int)check_value(rank, allgather ? -1 : j, (uint64_t)i, salt);
    memset(recv, CHECK_SENTINEL, (size_t)p * n * sizeof(int) + guard);
    /* odd ranks: every other call sends n / 2 pairs (n is even) */
    static int made[2]; /* calls of each collective so far */
    int alt = rank % 2 && made[allgather]++ % 2;
    MPI_Datatype stype = alt ? pair : MPI_INT;
    int scount = alt ? n / 2 : n;
    if (allgather)
        stop_on_error(MPI_Allgather(send, scount, stype, recv, n, MPI_INT, comm), "MPI_Allgather");
    else
        stop_on_error(MPI_Alltoall(send, scount, stype, recv, n, MPI_INT, comm), "MPI_Alltoall");
    for (int j = 0; j < p; j++)
        check_block((const int *)recv + (size_t)j * n, n, j, allgather ? -1 : rank, salt,
                    allgather ? "allgather" : "alltoall");
    check_sentinel(recv + (size_t)p * n * sizeof(int), (size_t)guard, "guard");
    free(send);
    free(recv);
}

/* One MPI_Alltoallv of pattern `pattern`, blocks separated by GAP sentinel ints. */
static void varying_blocks(MPI_Comm comm, int pattern, int base, int call)
{
    int p, rank;
    uint32_t salt = salt_next++;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    int *sc = malloc(4 * (size_t)p * sizeof(int)), *sd = sc + p, *rc = sd + p, *rd = rc + p;
    int stotal = 0, rtotal = 0;
    for (int j = 0; j < p; j++) {
        sc[j] = v_count(pattern, rank, j, base, call);
        rc[j] = v_count(pattern, j, rank, base, call);
        sd[j] = stotal;
        rd[j] = rtotal;
        stotal += sc[j];
        rtotal += rc[j] + GAP;
    }
    int *send = malloc((size_t)stotal * sizeof(int) + 1);
    int *recv = malloc((size_t)rtotal * sizeof(int) + 1);
    for (int j = 0; j < p; j++)
        for (int i = 0; i < sc[j]; i++)
            send[sd[j] + i] = (int)check_value(rank, j, (uint64_t)i, salt);
    memset(recv, CHECK_SENTINEL, (size_t)rtotal * sizeof(int));
    stop_on_error(MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, comm),
                  "MPI_Alltoallv");
    for (int j = 0; j < p; j++) {
        check_block(recv + rd[j], rc[j], j, rank, salt, "alltoallv");
        check_sentinel((const unsigned char *)(recv + rd[j] + rc[j]), GAP * sizeof(int), "gap");
    }
    free(send);
    free(recv);
    free(sc);
}

/* Every shape of one communicator, each `repeats` times, two shapes interleaved. */
static void shapes(MPI_Comm comm)
{
    static const int sizes[] = {2, 128, 2048}; /* ints: 8 B, 512 B, 8 KiB */
    for (int s = 0; s < 3; s++) {
        for (int call = 0; call < repeats; call++) {
            equal_blocks(comm, 0, sizes[s]);
            equal_blocks(comm, 1, sizes[s]);
        }
        for (int pattern = 0; pattern < 3; pattern++)
            for (int call = 0; call < repeats; call++)
                varying_blocks(comm, pattern, sizes[s], call);
    }
}

int main(int argc, char **argv)
{
    int p, rank;
    MPI_Comm split, reversed;

    MPI_Init(&argc, &argv);
    if (argc > 1 && (repeats = atoi(argv[1])) < 1) {
        fprintf(stderr, "learn_check: calls per shape must be a positive number, not '%s'\n",
                argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    shapes(MPI_COMM_WORLD);
    MPI_Comm_split(MPI_COMM_WORLD, rank < (p + 1) / 3, rank, &split);
    shapes(split);
    MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &reversed);
    shapes(reversed);
    MPI_Comm_free(&split);
    MPI_Comm_free(&reversed);
    MPI_Type_free(&pair);
    int status = check_finish("learn_check");
    MPI_Finalize();
    return status;
}

/*
 * comm_churn: thousands of communicators created, used and freed; memory must not grow.
 *
 * The library caches a context on every communicator it serves (a private duplicate, node
 * layout, scratch) and must free it when the user frees the communicator. Each of ITERATIONS
 * iterations creates a dup and a split of MPI_COMM_SELF (local, so cheap) and, every
 * WORLD_EVERY iterations, a dup of MPI_COMM_WORLD and a split of it into even and odd ranks
 * (reversed order); on each one it runs MPI_Alltoall, MPI_Allgather and MPI_Alltoallv with
 * formula data (check.h), checks every element, and frees the communicator.
 *
 * Two ways to fail if contexts leak:
 *   - MPICH has 2048 context ids per process; the iterations create 6374 user communicators,
 *     so leaking the private duplicates (or the users') fails with "Too many communicators";
 *   - the private part of the resident set (VmRSS less RssShmem, /proc/self/status) may grow
 *     by at most RSS_BOUND_KIB between iteration RSS_FIRST and the last. Measured with MPICH
 *     4.0.2: a communicator that is never freed keeps at least 1.5 KB (a dup of
 *     MPI_COMM_SELF) to 4.5 KB (a dup of a 2-rank world); 2500 iterations create 5000+
 *     communicators, so a leak of only 128 bytes per communicator (less than one xchg context
 *     with its node arrays) grows it by 625 KiB, above the bound, while a correct run grows
 *     by 0 to 28 KiB (allocator noise). Under AddressSanitizer, whose allocator and metadata
 *     grow on their own, a correct library grew by 352 to 528 KiB in 23 runs, so
 *     scripts/sanitize.sh gives --private-bound-kib 1024 there: it still fails a leak of about
 *     200 bytes a communicator, and LeakSanitizer reports smaller ones that nothing points to;
 *   - the shared part (RssShmem) may grow by at most RSS_BOUND_KIB too: a library may keep a
 *     few shared segments of freed communicators for the next ones, whose pages in use grow
 *     with the calls (xchg keeps at most 4; 24 to 120 KiB seen), but a segment leaked per
 *     communicator keeps a page of control and one of each half in use at least: 12 KiB for
 *     each of some 150 world communicators, 1.8 MiB.
 * Prints "comm_churn: N checks, M failed" (and the RSS figures from rank 0); exit status
 * non-zero on failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define ITERATIONS 3000
#define WORLD_EVERY 16 /* world-sized communicators every this many iterations */
#define RSS_FIRST 500  /* iteration of the first VmRSS sample */
#define RSS_BOUND_KIB 512 /* --private-bound-kib N replaces it for the private part */
#define MAX_RANKS 256

/* An error (a collective's, or "Too many communicators" when contexts leak) may leave the
 * ranks out of step, so the program reports it and stops the job. */
static void check_rc(int rc, const char *what, int iteration)
{
    check_count(1);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        check_fail("iteration %d: %s returned %s", iteration, what,
                   check_error_string(rc, text, (int)sizeof text));
        fprintf(stderr, "comm_churn: stopping: an MPI call returned an error\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void check_int(int got, int source, int destination, uint64_t index, uint32_t salt,
                      const char *what, int iteration)
{
    int expected = (int)(check_value(source, destination, index, salt) & 0x7fffffff);
    check_count(1);
    if (got != expected)
        check_fail("iteration %d: %s element %llu from rank %d: expected %d got %d", iteration,
                   what, (unsigned long long)index, source, expected, got);
}

static int value(int source, int destination, uint64_t index, uint32_t salt)
{
    return (int)(check_value(source, destination, index, salt) & 0x7fffffff);
}

/* The three collectives on comm: alltoall of 2 ints per block, allgather of 3, alltoallv with
 * (i + j) % 3 ints from i to j. */
static void exercise(MPI_Comm comm, const char *name, int iteration)
{
    static int sendbuf[3 * MAX_RANKS], recvbuf[3 * MAX_RANKS];
    int sendcounts[MAX_RANKS], sdispls[MAX_RANKS], recvcounts[MAX_RANKS], rdispls[MAX_RANKS];
    int p, me, rc, offset;
    uint32_t salt = (uint32_t)iteration * 8;
    char what[64];

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    if (p > MAX_RANKS)
        return;

    snprintf(what, sizeof what, "MPI_Alltoall on %s", name);
    for (int j = 0; j < p; j++)
        for (int e = 0; e < 2; e++)
            sendbuf[2 * j + e] = value(me, j, (uint64_t)e, salt);
    rc = MPI_Alltoall(sendbuf, 2, MPI_INT, recvbuf, 2, MPI_INT, comm);
    check_rc(rc, what, iteration);
    for (int i = 0; i < p; i++)
        for (int e = 0; e < 2; e++)
            check_int(recvbuf[2 * i + e], i, me, (uint64_t)e, salt, what, iteration);

    snprintf(what, sizeof what, "MPI_Allgather on %s", name);
    for (int e = 0; e < 3; e++)
        sendbuf[e] = value(me, -1, (uint64_t)e, salt + 1);
    rc = MPI_Allgather(sendbuf, 3, MPI_INT, recvbuf, 3, MPI_INT, comm);
    check_rc(rc, what, iteration);
    for (int i = 0; i < p; i++)
        for (int e = 0; e < 3; e++)
            check_int(recvbuf[3 * i + e], i, -1, (uint64_t)e, salt + 1, what, iteration);

    snprintf(what, sizeof what, "MPI_Alltoallv on %s", name);
    offset = 0;
    for (int j = 0; j < p; j++) {
        sendcounts[j] = (me + j) % 3;
        sdispls[j] = offset;
        for (int e = 0; e < sendcounts[j]; e++)
            sendbuf[offset + e] = value(me, j, (uint64_t)e, salt + 2);
        offset += sendcounts[j];
    }
    offset = 0;
    for (int i = 0; i < p; i++) {
        recvcounts[i] = (i + me) % 3;
        rdispls[i] = offset;
        offset += recvcounts[i];
    }
    rc = MPI_Alltoallv(sendbuf, sendcounts, sdispls, MPI_INT, recvbuf, recvcounts, rdispls, MPI_INT,
                       comm);
    check_rc(rc, what, iteration);
    for (int i = 0; i < p; i++)
        for (int e = 0; e < recvcounts[i]; e++)
            check_int(recvbuf[rdispls[i] + e], i, me, (uint64_t)e, salt + 2, what, iteration);
}

/* The private part of this process's resident set (VmRSS less RssShmem) and the shared part
 * (RssShmem), KiB; -1 each when unknown. */
static void private_kib(long *private, long *shared)
{
    long rss = check_rss_kib();
    *shared = check_status_kib("RssShmem:");
    *private = rss >= 0 && *shared >= 0 ? rss - *shared : -1;
}

int main(int argc, char **argv)
{
    int me, status, rc;
    long rss_first = -1, rss_last = -1, shm_first = -1, shm_last = -1, growth, max_growth;
    long shm_growth, max_shm_growth, bound = RSS_BOUND_KIB;
    double start;

    MPI_Init(&argc, &argv);
    if (argc == 3 && strcmp(argv[1], "--private-bound-kib") == 0)
        bound = strtol(argv[2], NULL, 10);
    else if (argc != 1)
        bound = 0;
    if (bound <= 0) {
        fprintf(stderr, "usage: comm_churn [--private-bound-kib N] (N > 0)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    start = MPI_Wtime();

    for (int it = 1; it <= ITERATIONS; it++) {
        MPI_Comm comm;
        /* local communicators: a dup and a split of MPI_COMM_SELF */
        rc = MPI_Comm_dup(MPI_COMM_SELF, &comm);
        check_rc(rc, "MPI_Comm_dup(MPI_COMM_SELF)", it);
        exercise(comm, "a dup of MPI_COMM_SELF", it);
        MPI_Comm_free(&comm);
        rc = MPI_Comm_split(MPI_COMM_SELF, 0, 0, &comm);
        check_rc(rc, "MPI_Comm_split(MPI_COMM_SELF)", it);
        exercise(comm, "a split of MPI_COMM_SELF", it);
        MPI_Comm_free(&comm);

        /* world-sized ones: a dup, and even/odd ranks in reversed order */
        if (it % WORLD_EVERY == 0) {
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            check_rc(rc, "MPI_Comm_dup(MPI_COMM_WORLD)", it);
            exercise(comm, "a dup of MPI_COMM_WORLD", it);
            MPI_Comm_free(&comm);
            rc = MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &comm);
            check_rc(rc, "MPI_Comm_split(MPI_COMM_WORLD)", it);
            exercise(comm, "a split of MPI_COMM_WORLD", it);
            MPI_Comm_free(&comm);
        }
        if (it == RSS_FIRST)
            private_kib(&rss_first, &shm_first);
        if (it == ITERATIONS)
            private_kib(&rss_last, &shm_last);
    }

    /* memory: growth from iteration RSS_FIRST to the end, largest over the ranks (either may
     * be negative: memory was given back) */
    growth = rss_last - rss_first;
    shm_growth = shm_last - shm_first;
    check_count(1);
    if (rss_first < 0 || rss_last < 0 || shm_first < 0 || shm_last < 0) {
        check_fail("VmRSS or RssShmem could not be read (private %ld and %ld KiB, shared %ld "
                   "and %ld KiB)", rss_first, rss_last, shm_first, shm_last);
    } else {
        if (growth > bound)
            check_fail("private memory (VmRSS less RssShmem) grew by %ld KiB from iteration %d "
                       "(%ld KiB) to %d (%ld KiB), more than %ld KiB: communicators or their "
                       "contexts leak",
                       growth, RSS_FIRST, rss_first, ITERATIONS, rss_last, bound);
        if (shm_growth > RSS_BOUND_KIB)
            check_fail("shared memory in use (RssShmem) grew by %ld KiB from iteration %d (%ld "
                       "KiB) to %d (%ld KiB), more than %d KiB: shared segments leak",
                       shm_growth, RSS_FIRST, shm_first, ITERATIONS, shm_last, RSS_BOUND_KIB);
    }
    MPI_Reduce(&growth, &max_growth, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&shm_growth, &max_shm_growth, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("comm_churn: %d iterations, %d communicators per rank, %.1f s; private memory of "
               "rank 0 %ld KiB at iteration %d, %ld KiB at %d; largest growth over ranks %ld "
               "KiB (bound %ld), of shared memory in use %ld KiB (bound %d)\n",
               ITERATIONS, 2 * ITERATIONS + 2 * (ITERATIONS / WORLD_EVERY), MPI_Wtime() - start,
               rss_first, RSS_FIRST, rss_last, ITERATIONS, max_growth, bound, max_shm_growth,
               RSS_BOUND_KIB);
    status = check_finish("comm_churn");
    MPI_Finalize();
    return status;
}

/*
 * alltoallv_workloads.c: MPI_Alltoallv on the benchmark inputs of Bader, Helman and JaJa
 * (tuning/workloads.c: uniform, the h-relations of Eq. 7 with h = n/p .. 8n/p, and g-group
 * inputs of Eq. 8), checked byte for byte. A plain MPI program that knows nothing of xchg: run
 * it natively or with the library preloaded and an algorithm forced, e.g.
 *     XCHG_ALLTOALLV=twophase mpiexec -n 5 env LD_PRELOAD=build/libxchg.so \
 *         build/tests/alltoallv_workloads </dev/null
 *
 * For every workload, several n (units per rank: 0, tiny ones where most pairs exchange
 * nothing, and one of 1 MiB per rank), two element types (int, and char so that messages have
 * odd byte counts) and two communicators (world, and world with the ranks reversed):
 *   - every rank computes all counts itself from the generator (the receive counts are the
 *     senders' counts), lays its messages out in reverse destination order with gaps, and its
 *     receive regions in source order with gaps preset to a sentinel;
 *   - every element comes from check_value(source, destination, index, salt), a new salt per
 *     call, and is checked on arrival; the gaps must keep the sentinel; the send buffer must
 *     be unchanged.
 * Prints "alltoallv_workloads: N checks, M failed" and exits non-zero on failure.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "../../tuning/workloads.h"

static const char *const workloads[] = {
    "uniform",        "hrel:h=1",       "hrel:h=2",       "hrel:h=4",           "hrel:h=8",
    "ggroup:g=2,t=2", "ggroup:g=4,t=2", "ggroup:g=4,t=1", "ggroup:g=2,t=4,h=2",
};
static const size_t small_n[] = {0, 1, 3, 17, 1000};
#define LARGE_N ((size_t)1 << 18) /* ints: 1 MiB per rank */

typedef struct elem {
    MPI_Datatype type;
    size_t size;
    const char *name;
} elem_t;

static void put_value(const elem_t *e, unsigned char *at, int src, int dst, size_t idx,
                      uint32_t salt)
{
    uint32_t v = check_value(src, dst, idx, salt);
    if (e->size == 1) {
        *at = (unsigned char)(v % 120 + 1);
    } else {
        int32_t w = (int32_t)v;
        memcpy(at, &w, sizeof w);
    }
}

/* One MPI_Alltoallv of workload wl with n units per rank on comm; returns nothing, counts
 * checks and failures. */
static void run_one(MPI_Comm comm, const char *comm_name, const char *spec,
                    const xchg_workload_t *wl, size_t n, const elem_t *e, uint32_t salt)
{
    int p, me, rc;
    int *sendcounts, *sdispls, *recvcounts, *rdispls;
    size_t *row, send_total = 0, recv_total = 0;
    unsigned char *sendbuf, *recvbuf, *expected_send, *expected;
    long long bad_send = 0;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    sendcounts = malloc(4 * (size_t)p * sizeof(int));
    sdispls = sendcounts + p;
    recvcounts = sdispls + p;
    rdispls = recvcounts + p;
    row = malloc((size_t)p * sizeof *row);

    /* sends: messages in reverse destination order, a gap after every other one */
    xchg_workload_counts(wl, p, n, me, row);
    for (int dst = p - 1; dst >= 0; dst--) {
        sendcounts[dst] = (int)row[dst];
        sdispls[dst] = (int)send_total;
        send_total += row[dst] + (size_t)(dst % 2);
    }
    /* receives: in source order, gaps of 1..3 elements */
    recv_total = 1;
    for (int src = 0; src < p; src++) {
        recvcounts[src] = (int)xchg_workload_count(wl, p, n, src, me);
        rdispls[src] = (int)recv_total;
        recv_total += (size_t)recvcounts[src] + 1 + (size_t)(src % 3);
    }
    sendbuf = malloc(send_total * e->size + 1);
    expected_send = malloc(send_total * e->size + 1);
    recvbuf = malloc(recv_total * e->size);
    expected = malloc(recv_total * e->size);
    memset(sendbuf, 0x3C, send_total * e->size);
    for (int dst = 0; dst < p; dst++)
        for (int k = 0; k < sendcounts[dst]; k++)
            put_value(e, sendbuf + ((size_t)sdispls[dst] + (size_t)k) * e->size, me, dst, (size_t)k,
                      salt);
    memcpy(expected_send, sendbuf, send_total * e->size);
    memset(recvbuf, CHECK_SENTINEL, recv_total * e->size);
    memset(expected, CHECK_SENTINEL, recv_total * e->size);
    for (int src = 0; src < p; src++)
        for (int k = 0; k < recvcounts[src]; k++)
            put_value(e, expected + ((size_t)rdispls[src] + (size_t)k) * e->size, src, me,
                      (size_t)k, salt);

    rc = MPI_Alltoallv(sendbuf, sendcounts, sdispls, e->type, recvbuf, recvcounts, rdispls, e->type,
                       comm);
    check_count(1);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        check_fail("%s %s n=%zu %s: MPI_Alltoallv returned %s", comm_name, spec, n, e->name,
                   check_error_string(rc, text, (int)sizeof text));
    }

    /* every message, element by element */
    for (int src = 0; src < p; src++) {
        size_t first = (size_t)rdispls[src] * e->size, len = (size_t)recvcounts[src] * e->size;
        check_count(1);
        if (memcmp(recvbuf + first, expected + first, len) != 0) {
            size_t at = 0;
            while (recvbuf[first + at] == expected[first + at])
                at++;
            check_fail("%s %s n=%zu %s: rank %d, message from %d (%d elements): byte %zu is "
                       "0x%02x, expected 0x%02x",
                       comm_name, spec, n, e->name, me, src, recvcounts[src], at,
                       recvbuf[first + at], expected[first + at]);
        }
    }
    /* the gaps: every byte outside the messages keeps the sentinel */
    check_count(1);
    for (size_t at = 0, src = 0; at < recv_total * e->size; at++) {
        while (src < (size_t)p && at >= ((size_t)rdispls[src] + (size_t)recvcounts[src]) * e->size)
            src++;
        if (src < (size_t)p && at >= (size_t)rdispls[src] * e->size)
            continue; /* inside message src */
        if (recvbuf[at] != CHECK_SENTINEL) {
            check_fail("%s %s n=%zu %s: rank %d: gap byte %zu was written (0x%02x)", comm_name,
                       spec, n, e->name, me, at, recvbuf[at]);
            break;
        }
    }
    /* the send buffer is the caller's */
    check_count(1);
    bad_send = memcmp(sendbuf, expected_send, send_total * e->size) != 0;
    if (bad_send)
        check_fail("%s %s n=%zu %s: rank %d: the send buffer was modified", comm_name, spec, n,
                   e->name, me);

    free(sendcounts);
    free(row);
    free(sendbuf);
    free(expected_send);
    free(recvbuf);
    free(expected);
}

int main(int argc, char **argv)
{
    const elem_t elems[] = {{MPI_INT, 4, "int"}, {MPI_CHAR, 1, "char"}};
    MPI_Comm reversed;
    int world_rank, world_size;
    uint32_t salt = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &reversed);
    MPI_Comm_set_errhandler(reversed, MPI_ERRORS_RETURN);

    for (size_t w = 0; w < sizeof workloads / sizeof workloads[0]; w++) {
        xchg_workload_t wl;
        char err[256];
        if (xchg_workload_parse(workloads[w], &wl, err, sizeof err) != 0) {
            check_count(1);
            check_fail("workload %s: %s", workloads[w], err);
            continue;
        }
        for (size_t k = 0; k < sizeof small_n / sizeof small_n[0]; k++)
            for (size_t t = 0; t < sizeof elems / sizeof elems[0]; t++) {
                run_one(MPI_COMM_WORLD, "world", workloads[w], &wl, small_n[k], &elems[t], salt++);
                run_one(reversed, "reversed", workloads[w], &wl, small_n[k], &elems[t], salt++);
            }
        run_one(MPI_COMM_WORLD, "world", workloads[w], &wl, LARGE_N, &elems[0], salt++);
    }

    MPI_Comm_free(&reversed);
    {
        int status = check_finish("alltoallv_workloads");
        MPI_Finalize();
        return status;
    }
}

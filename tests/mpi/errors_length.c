/*
 * errors_length: collective calls whose send and receive sizes do not match between ranks (an
 * erroneous program), made as natively with MPI_ERRORS_RETURN on MPI_COMM_WORLD, and what each
 * rank gets back, and when (errors_run.h: per-rank lines, a deadline for ranks that never
 * return, a valid follow-up call that must still work).
 *
 *   errors_length [--deadline S] [--from CASE] [CASE...]     (no CASE: all, in this order)
 *   errors_length --list                                    the cases' names, one a line (no MPI)
 *
 * Cases (rank 0 is the erroneous one; COUNT ints per block unless said otherwise):
 *   alltoall_long         rank 0 sends 2 COUNT ints per block, receives COUNT
 *   alltoall_short        rank 0 sends COUNT/2 elements of an int followed by a 4-byte hole
 *                         (a derived type, packed): half the ints it should
 *   allgather_long        rank 0 sends 2 COUNT ints
 *   allgather_short       rank 0 sends COUNT/2 ints
 *   alltoallv_long        rank 0 sends 2 COUNT ints to every rank, itself included: its own
 *                         entry does not match, and every other rank receives more than it asks
 *   alltoallv_peer        rank 0 sends 2 COUNT ints to rank 1 only (rank 1 receives too much)
 *   alltoallv_peer_large  the same with LARGE ints (beyond the eager limit of both MPIs)
 *   alltoallv_peer_short  rank 0 sends COUNT/2 ints to rank 1 (a short receive, no error
 *                         natively)
 * The roles (errors_run.h): rank 0 is "signature" where its own sizes differ, the ranks that
 * receive a longer alltoallv message than they ask for are "receiver", the others "bystander".
 * On a rank whose call returned MPI_SUCCESS, every block from a rank whose arguments are right
 * is checked (formula data, check.h), and on every rank that returned, the guard bytes after the
 * receive buffer. Then a valid call of the same collective on MPI_COMM_WORLD, every byte checked.
 * Prints the per-rank lines, failures, and "errors_length: N checks, M failed" when every case
 * ran to the end on every rank.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors_run.h"

#define COUNT 10
#define LARGE 16384
#define SALT_BAD 11u

typedef struct lcase {
    const char *name;
    int coll;
    int send_num, send_den; /* rank 0's send count: COUNT * num / den (per destination) */
    int only_rank1;         /* alltoallv: only the message for rank 1 is off */
    int count;              /* ints a right block has */
    int holed;              /* rank 0 sends an int + hole type (alltoall) */
} lcase_t;

static const lcase_t cases[] = {
    {"alltoall_long", COLL_ALLTOALL, 2, 1, 0, COUNT, 0},
    {"alltoall_short", COLL_ALLTOALL, 1, 2, 0, COUNT, 1},
    {"allgather_long", COLL_ALLGATHER, 2, 1, 0, COUNT, 0},
    {"allgather_short", COLL_ALLGATHER, 1, 2, 0, COUNT, 0},
    {"alltoallv_long", COLL_ALLTOALLV, 2, 1, 0, COUNT, 0},
    {"alltoallv_peer", COLL_ALLTOALLV, 2, 1, 1, COUNT, 0},
    {"alltoallv_peer_large", COLL_ALLTOALLV, 2, 1, 1, LARGE, 0},
    {"alltoallv_peer_short", COLL_ALLTOALLV, 1, 2, 1, COUNT, 0},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* Elements rank `from` sends to rank `to` in case c (COUNT-scaled for rank 0). */
static int sent_count(const lcase_t *c, int from, int to)
{
    if (from != 0 || (c->only_rank1 && to != 1))
        return c->count;
    return c->count * c->send_num / c->send_den;
}

/* The role of this rank in case c. */
static int role_of(const lcase_t *c)
{
    if (c->coll == COLL_ALLTOALLV) {
        if (rank == 0 && !c->only_rank1)
            return ROLE_SIGNATURE;
        if (rank != 0 && sent_count(c, 0, rank) > c->count)
            return ROLE_RECEIVER;
        return ROLE_BYSTANDER;
    }
    return rank == 0 ? ROLE_SIGNATURE : ROLE_BYSTANDER;
}

/* Blocks from right senders (rank > 0, or rank 0 where its message is right), and the guard. */
static void check_received(const lcase_t *c, const int *recv, int ok, size_t guard_at)
{
    for (int from = 0; from < nranks && ok; from++) {
        if (sent_count(c, from, rank) != c->count || (from == 0 && c->coll != COLL_ALLTOALLV))
            continue;
        for (int i = 0; i < c->count; i++) {
            int expected = errors_value(from, c->coll == COLL_ALLGATHER ? -1 : rank, i, SALT_BAD);
            check_count(1);
            if (recv[(size_t)from * (size_t)c->count + (size_t)i] != expected)
                check_fail("%s: element %d from rank %d: expected %d got %d", c->name, i, from,
                           expected, recv[(size_t)from * (size_t)c->count + (size_t)i]);
        }
    }
    for (int g = 0; g < GUARD; g++) {
        check_count(1);
        if (recv[guard_at + (size_t)g] != -1)
            check_fail("%s: the guard int %d after the receive buffer was overwritten", c->name, g);
    }
}

/* The erroneous call of case c; returns its rc, *seconds its time. */
static int bad_call(const lcase_t *c, double *seconds)
{
    int n = c->count, mine = rank == 0 ? n * c->send_num / c->send_den : n, rc;
    size_t recv_ints = (size_t)nranks * (size_t)n;
    /* rank 0's blocks are laid out for up to 2 n ints (holed: 2 ints an element) */
    size_t stride = 2 * (size_t)n;
    int *send = malloc((size_t)nranks * stride * 2 * sizeof(int));
    int *recv = malloc((recv_ints + GUARD) * sizeof(int));
    int *sendcounts = malloc(4 * (size_t)nranks * sizeof(int)), *sdispls = sendcounts + nranks;
    int *recvcounts = sdispls + nranks, *rdispls = recvcounts + nranks;
    MPI_Datatype holed = MPI_DATATYPE_NULL, sendtype = MPI_INT;
    double t0;

    /* block j at element j mine (alltoall, allgather: the rank's own count) or j stride
     * (alltoallv: sdispls); rank 0's holed elements are an int and a hole */
    for (int j = 0; j < nranks; j++) {
        size_t at = c->coll == COLL_ALLTOALLV ? (size_t)j * stride : (size_t)j * (size_t)mine;
        for (int i = 0; i < sent_count(c, rank, j); i++) {
            int v = errors_value(rank, c->coll == COLL_ALLGATHER ? -1 : j, i, SALT_BAD);
            if (c->holed && rank == 0) {
                send[(at + (size_t)i) * 2] = v;
                send[(at + (size_t)i) * 2 + 1] = -7;
            } else {
                send[at + (size_t)i] = v;
            }
        }
    }
    for (size_t i = 0; i < recv_ints + GUARD; i++)
        recv[i] = -1;
    if (c->holed && rank == 0) {
        MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &holed);
        MPI_Type_commit(&holed);
        sendtype = holed;
    }
    for (int j = 0; j < nranks; j++) {
        sendcounts[j] = sent_count(c, rank, j);
        sdispls[j] = (int)((size_t)j * stride);
        recvcounts[j] = n;
        rdispls[j] = j * n;
    }
    errors_begin(c->name);
    t0 = errors_now();
    if (c->coll == COLL_ALLTOALL)
        rc = MPI_Alltoall(send, mine, sendtype, recv, n, MPI_INT, MPI_COMM_WORLD);
    else if (c->coll == COLL_ALLGATHER)
        rc = MPI_Allgather(send, mine, MPI_INT, recv, n, MPI_INT, MPI_COMM_WORLD);
    else
        rc = MPI_Alltoallv(send, sendcounts, sdispls, MPI_INT, recv, recvcounts, rdispls, MPI_INT,
                           MPI_COMM_WORLD);
    *seconds = errors_now() - t0;
    check_received(c, recv, rc == MPI_SUCCESS, recv_ints);
    if (holed != MPI_DATATYPE_NULL)
        MPI_Type_free(&holed);
    free(send);
    free(recv);
    free(sendcounts);
    return rc;
}

int main(int argc, char **argv)
{
    const char *names[NCASES];
    errors_options_t opt;
    int status;

    for (int k = 0; k < NCASES; k++)
        names[k] = cases[k].name;
    if (!errors_options(argc, argv, names, NCASES, &opt))
        return 0;
    MPI_Init(&argc, &argv);
    errors_setup("errors_length", opt.deadline);
    if (nranks < 2) {
        if (rank == 0)
            printf("errors_length: SKIP: needs 2 ranks or more\n");
        check_skip(1);
    }
    for (int k = opt.first; k < NCASES && nranks >= 2; k++) {
        int rc;
        double seconds;
        if (!errors_chosen(&opt, cases[k].name))
            continue;
        rc = bad_call(&cases[k], &seconds);
        errors_end(rc, seconds, role_of(&cases[k]));
        errors_follow_up(cases[k].coll, cases[k].name);
    }
    status = check_finish("errors_length");
    MPI_Comm_free(&errors_done_comm);
    MPI_Finalize();
    return status;
}

/*
 * errors_alias: collective calls whose send buffer is their receive buffer (not MPI_IN_PLACE:
 * an erroneous program), made as natively with MPI_ERRORS_RETURN on MPI_COMM_WORLD, and what
 * each rank gets back, and when (errors_run.h: per-rank lines, a deadline for ranks that never
 * return, a valid follow-up call that must still work).
 *
 *   errors_alias [--deadline S] [--from CASE] [CASE...]     (no CASE: all, in this order)
 *   errors_alias --list                                    the cases' names, one a line (no MPI)
 *
 * Cases (every rank passes the same kind of arguments; COUNT ints a block):
 *   alltoall_same         MPI_Alltoall(buf, COUNT, MPI_INT, buf, COUNT, MPI_INT)
 *   allgather_own         MPI_Allgather(buf + rank COUNT, ..., buf, ...): the send buffer is
 *                         the rank's own block of the receive buffer
 *   allgather_base        MPI_Allgather(buf, ..., buf, ...) on every rank (only rank 0's own
 *                         block is there)
 *   alltoallv_same        MPI_Alltoallv(buf, counts, displs, MPI_INT, buf, counts, displs,
 *                         MPI_INT): the same arrays on both sides
 *   alltoallv_copies      the same buffer, the counts in two arrays of equal values
 *   alltoall_retyped      the same buffer, received as a contiguous type of one int
 *   alltoall_zero         the same buffer, count 0
 *   alltoall_c_same, allgather_c_own, alltoallv_c_same   the MPI-4 large-count forms (only
 *                         with an MPI-4 library)
 * MPICH rejects some of these with MPI_ERR_BUFFER before communicating (where its alias
 * checks apply: same count and type, ...), Open MPI none; scripts/cases/errors.sh compares every
 * rank's class with the native library's. Roles (errors_run.h): the ranks whose send buffer is
 * their receive buffer, or their own block of it, are "signature" (allgather_base: rank 0),
 * the others "bystander". Where a rank's result is defined (allgather_own that succeeds: the
 * own block is in place), every element is checked; on every rank that returned, the guard
 * bytes after the receive buffer. Prints the per-rank lines, failures, and "errors_alias: N
 * checks, M failed" when every case ran to the end on every rank.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors_run.h"

#define COUNT 10
#define SALT_ALIAS 21u

enum { SHAPE_SAME, SHAPE_OWN, SHAPE_BASE, SHAPE_COPIES, SHAPE_RETYPED, SHAPE_ZERO };

typedef struct acase {
    const char *name;
    int coll;
    int shape;
    int large; /* the _c form */
} acase_t;

static const acase_t cases[] = {
    {"alltoall_same", COLL_ALLTOALL, SHAPE_SAME, 0},
    {"allgather_own", COLL_ALLGATHER, SHAPE_OWN, 0},
    {"allgather_base", COLL_ALLGATHER, SHAPE_BASE, 0},
    {"alltoallv_same", COLL_ALLTOALLV, SHAPE_SAME, 0},
    {"alltoallv_copies", COLL_ALLTOALLV, SHAPE_COPIES, 0},
    {"alltoall_retyped", COLL_ALLTOALL, SHAPE_RETYPED, 0},
    {"alltoall_zero", COLL_ALLTOALL, SHAPE_ZERO, 0},
#if MPI_VERSION >= 4
    {"alltoall_c_same", COLL_ALLTOALL, SHAPE_SAME, 1},
    {"allgather_c_own", COLL_ALLGATHER, SHAPE_OWN, 1},
    {"alltoallv_c_same", COLL_ALLTOALLV, SHAPE_SAME, 1},
#endif
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static int role_of(const acase_t *c)
{
    return c->shape != SHAPE_BASE || rank == 0 ? ROLE_SIGNATURE : ROLE_BYSTANDER;
}

/* allgather_own that succeeded: every block in place; and the guard, wherever it returned. */
static void check_result(const acase_t *c, const int *buf, int rc)
{
    if (rc == MPI_SUCCESS && c->shape == SHAPE_OWN)
        for (int j = 0; j < nranks; j++)
            for (int i = 0; i < COUNT; i++) {
                int expected = errors_value(j, -1, i, SALT_ALIAS);
                check_count(1);
                if (buf[j * COUNT + i] != expected)
                    check_fail("%s: element %d from rank %d: expected %d got %d", c->name, i, j,
                               expected, buf[j * COUNT + i]);
            }
    for (int g = 0; g < GUARD; g++) {
        check_count(1);
        if (buf[nranks * COUNT + g] != -1)
            check_fail("%s: the guard int %d after the buffer was overwritten", c->name, g);
    }
}

static int call_c(const acase_t *c, int *buf, const int *counts, const int *displs,
                  MPI_Datatype recvtype)
{
#if MPI_VERSION >= 4
    MPI_Count *ccounts = malloc((size_t)nranks * sizeof *ccounts);
    MPI_Aint *cdispls = malloc((size_t)nranks * sizeof *cdispls);
    int rc;
    for (int j = 0; j < nranks; j++) {
        ccounts[j] = counts[j];
        cdispls[j] = displs[j];
    }
    if (c->coll == COLL_ALLTOALL)
        rc = MPI_Alltoall_c(buf, COUNT, MPI_INT, buf, COUNT, recvtype, MPI_COMM_WORLD);
    else if (c->coll == COLL_ALLGATHER)
        rc = MPI_Allgather_c(buf + rank * COUNT, COUNT, MPI_INT, buf, COUNT, recvtype,
                             MPI_COMM_WORLD);
    else
        rc = MPI_Alltoallv_c(buf, ccounts, cdispls, MPI_INT, buf, ccounts, cdispls, recvtype,
                             MPI_COMM_WORLD);
    free(ccounts);
    free(cdispls);
    return rc;
#else
    (void)c, (void)buf, (void)counts, (void)displs, (void)recvtype;
    return MPI_ERR_OTHER;
#endif
}

/* The aliased call of case c; returns its rc, *seconds its time. */
static int aliased_call(const acase_t *c, double *seconds)
{
    int count = c->shape == SHAPE_ZERO ? 0 : COUNT, rc;
    int *buf = malloc(((size_t)nranks * COUNT + GUARD) * sizeof(int));
    int *counts = malloc(3 * (size_t)nranks * sizeof(int)), *copies = counts + nranks;
    int *displs = copies + nranks;
    MPI_Datatype recvtype = MPI_INT, one_int = MPI_DATATYPE_NULL;
    double t0;

    /* alltoall: block j for rank j; allgather: the own block at rank COUNT (also at 0 for
     * allgather_base, which sends from there) */
    for (int j = 0; j < nranks; j++)
        for (int i = 0; i < COUNT; i++)
            buf[j * COUNT + i] =
                errors_value(rank, c->coll == COLL_ALLGATHER ? -1 : j, i, SALT_ALIAS);
    for (int g = 0; g < GUARD; g++)
        buf[nranks * COUNT + g] = -1;
    for (int j = 0; j < nranks; j++) {
        counts[j] = copies[j] = count;
        displs[j] = j * COUNT;
    }
    if (c->shape == SHAPE_RETYPED) {
        MPI_Type_contiguous(1, MPI_INT, &one_int);
        MPI_Type_commit(&one_int);
        recvtype = one_int;
    }
    errors_begin(c->name);
    t0 = errors_now();
    if (c->large)
        rc = call_c(c, buf, counts, displs, recvtype);
    else if (c->coll == COLL_ALLTOALL)
        rc = MPI_Alltoall(buf, count, MPI_INT, buf, count, recvtype, MPI_COMM_WORLD);
    else if (c->coll == COLL_ALLGATHER)
        rc = MPI_Allgather(c->shape == SHAPE_OWN ? buf + rank * COUNT : buf, count, MPI_INT, buf,
                           count, recvtype, MPI_COMM_WORLD);
    else
        rc = MPI_Alltoallv(buf, counts, displs, MPI_INT, buf,
                           c->shape == SHAPE_COPIES ? copies : counts, displs, recvtype,
                           MPI_COMM_WORLD);
    *seconds = errors_now() - t0;
    check_result(c, buf, rc);
    if (one_int != MPI_DATATYPE_NULL)
        MPI_Type_free(&one_int);
    free(buf);
    free(counts);
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
    errors_setup("errors_alias", opt.deadline);
    for (int k = opt.first; k < NCASES; k++) {
        int rc;
        double seconds;
        if (!errors_chosen(&opt, cases[k].name))
            continue;
        rc = aliased_call(&cases[k], &seconds);
        errors_end(rc, seconds, role_of(&cases[k]));
        errors_follow_up(cases[k].coll, cases[k].name);
    }
    status = check_finish("errors_alias");
    MPI_Comm_free(&errors_done_comm);
    MPI_Finalize();
    return status;
}

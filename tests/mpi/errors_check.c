/*
 * errors_check: invalid arguments to MPI_Alltoall, MPI_Allgather and MPI_Alltoallv (and the
 * MPI-4 _c forms) behave as the native MPI makes them behave.
 *
 * A plain MPI program: with the library preloaded the MPI_ calls are intercepted, while the
 * PMPI_ calls never are, so every bad call is made both ways and the two must agree:
 *   - with MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF (MPI_COMM_NULL errors go to
 *     one of them): both return an error, and MPI_Error_class gives the same class;
 *   - on a dup of MPI_COMM_WORLD with a user error handler (MPI_Comm_create_errhandler) that
 *     records its calls: the PMPI call and the intercepted call each invoke it exactly once,
 *     with the same class, and return an error.
 * The bad arguments: a negative send count, a negative receive count, MPI_DATATYPE_NULL as the
 * send type and as the receive type, an uncommitted derived datatype as either, and
 * MPI_COMM_NULL. (A NULL counts array is undefined behaviour: not tested.) Every rank passes
 * the same bad arguments, so the native MPI fails on every rank before communicating.
 * Where the native MPI does not detect a bad argument (Open MPI 4.1 with some uncommitted
 * types), a note is printed and the library must agree with it (succeed too); where the native
 * MPI crashes (Open MPI 4.1's MPI_Allgather on MPI_COMM_NULL) the call is left out.
 * Prints "errors_check: N checks, M failed"; exit status non-zero on failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { COLL_ALLTOALL, COLL_ALLGATHER, COLL_ALLTOALLV, NCOLLS };
static const char *const coll_names[NCOLLS] = {"alltoall", "allgather", "alltoallv"};

enum {
    BAD_SENDCOUNT,
    BAD_RECVCOUNT,
    BAD_SENDTYPE_NULL,
    BAD_RECVTYPE_NULL,
    BAD_SENDTYPE_UNCOMMITTED,
    BAD_RECVTYPE_UNCOMMITTED,
    BAD_COMM_NULL,
    NBADS
};
static const char *const bad_names[NBADS] = {"negative sendcount",
                                             "negative recvcount",
                                             "sendtype MPI_DATATYPE_NULL",
                                             "recvtype MPI_DATATYPE_NULL",
                                             "uncommitted sendtype",
                                             "uncommitted recvtype",
                                             "MPI_COMM_NULL"};

static MPI_Datatype uncommitted;
static int handler_calls, handler_class;

/* The user error handler: records how often it ran and the last error class. */
static void record_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

/* One call of coll with one bad argument, through MPI_ (pmpi = 0) or PMPI_ (pmpi = 1), with the
 * int (api_c = 0) or the large-count API. Buffers hold count 1 of MPI_INT per rank. */
static int bad_call(int coll, int bad, int pmpi, int api_c, MPI_Comm comm)
{
    int p, rc;
    int sendbuf[64] = {0}, recvbuf[64] = {0};
    int sendcount = 1, recvcount = 1, counts[64], sendcounts[64], displs[64];
    MPI_Datatype sendtype = MPI_INT, recvtype = MPI_INT;

    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (p > 64)
        p = 64; /* the bad argument fails before any count is read */
    for (int j = 0; j < p; j++) {
        counts[j] = sendcounts[j] = 1;
        displs[j] = j;
    }
    switch (bad) {
    case BAD_SENDCOUNT:
        sendcount = -1;
        sendcounts[0] = -1;
        break;
    case BAD_RECVCOUNT:
        recvcount = -1;
        counts[0] = -1;
        break;
    case BAD_SENDTYPE_NULL:
        sendtype = MPI_DATATYPE_NULL;
        break;
    case BAD_RECVTYPE_NULL:
        recvtype = MPI_DATATYPE_NULL;
        break;
    case BAD_SENDTYPE_UNCOMMITTED:
        sendtype = uncommitted;
        break;
    case BAD_RECVTYPE_UNCOMMITTED:
        recvtype = uncommitted;
        break;
    case BAD_COMM_NULL:
        comm = MPI_COMM_NULL;
        break;
    }
#if MPI_VERSION >= 4
    if (api_c) {
        MPI_Count ccounts[64], csendcounts[64];
        MPI_Aint cdispls[64];
        for (int j = 0; j < p; j++) {
            ccounts[j] = counts[j];
            csendcounts[j] = sendcounts[j];
            cdispls[j] = displs[j];
        }
        if (coll == COLL_ALLTOALL)
            rc = pmpi ? PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                        comm)
                      : MPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                       comm);
        else if (coll == COLL_ALLGATHER)
            rc = pmpi ? PMPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                         comm)
                      : MPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                        comm);
        else
            rc = pmpi ? PMPI_Alltoallv_c(sendbuf, csendcounts, cdispls, sendtype, recvbuf, ccounts,
                                         cdispls, recvtype, comm)
                      : MPI_Alltoallv_c(sendbuf, csendcounts, cdispls, sendtype, recvbuf, ccounts,
                                        cdispls, recvtype, comm);
        return rc;
    }
#else
    (void)api_c;
#endif
    if (coll == COLL_ALLTOALL)
        rc = pmpi ? PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)
                  : MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    else if (coll == COLL_ALLGATHER)
        rc = pmpi ? PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)
                  : MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    else
        rc = pmpi ? PMPI_Alltoallv(sendbuf, sendcounts, displs, sendtype, recvbuf, counts, displs,
                                   recvtype, comm)
                  : MPI_Alltoallv(sendbuf, sendcounts, displs, sendtype, recvbuf, counts, displs,
                                  recvtype, comm);
    return rc;
}

static int error_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

static const char *class_name(int cls, char *out, int outlen)
{
    return check_error_string(cls, out, outlen);
}

/* Can the native MPI take this bad call at all? Open MPI 4.1's MPI_Allgather dereferences
 * MPI_COMM_NULL (a segmentation fault, where its MPI_Alltoall and MPI_Alltoallv return
 * MPI_ERR_COMM), so that one call is left out there. */
static int native_survives(int coll, int bad)
{
#ifdef OPEN_MPI
    if (coll == COLL_ALLGATHER && bad == BAD_COMM_NULL)
        return 0;
#else
    (void)coll;
    (void)bad;
#endif
    return 1;
}

/* Where the native MPI does not detect a bad argument (Open MPI 4.1 takes some uncommitted
 * datatypes), the library must do as it does: only agreement is checked, and a note says so
 * (rank 0, once per call). */
static void note_undetected(const char *what)
{
    int world_rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if (world_rank == 0)
        printf("note: the native MPI does not detect %s (returns MPI_SUCCESS); only agreement "
               "is checked\n",
               what);
}

/* MPI_ERRORS_RETURN: both calls fail, with the same class. */
static void compare_returns(int coll, int bad, int api_c)
{
    char what[128], a[MPI_MAX_ERROR_STRING], b[MPI_MAX_ERROR_STRING];
    int native, intercepted;
    if (!native_survives(coll, bad))
        return;
    native = error_class(bad_call(coll, bad, 1, api_c, MPI_COMM_WORLD));
    intercepted = error_class(bad_call(coll, bad, 0, api_c, MPI_COMM_WORLD));
    snprintf(what, sizeof what, "%s%s with %s", coll_names[coll], api_c ? "_c" : "",
             bad_names[bad]);
    check_count(1);
    if (native == MPI_SUCCESS)
        note_undetected(what);
    if (intercepted != native)
        check_fail("%s: MPI_ returned class %d (%s), PMPI_ class %d (%s)", what, intercepted,
                   intercepted == MPI_SUCCESS ? "MPI_SUCCESS"
                                              : class_name(intercepted, a, sizeof a),
                   native, class_name(native, b, sizeof b));
}

/* A user error handler on comm: each call invokes it exactly once, with the same class. */
static void compare_handler(int coll, int bad, int api_c, MPI_Comm comm)
{
    char what[128], a[MPI_MAX_ERROR_STRING], b[MPI_MAX_ERROR_STRING];
    int rc_native, rc_intercepted, calls_native, calls_intercepted, class_native;
    snprintf(what, sizeof what, "%s%s with %s on a dup with a user error handler", coll_names[coll],
             api_c ? "_c" : "", bad_names[bad]);
    handler_calls = 0;
    handler_class = -1;
    rc_native = bad_call(coll, bad, 1, api_c, comm);
    calls_native = handler_calls;
    class_native = handler_class;
    handler_calls = 0;
    handler_class = -1;
    rc_intercepted = bad_call(coll, bad, 0, api_c, comm);
    calls_intercepted = handler_calls;
    check_count(3);
    if (rc_native == MPI_SUCCESS && calls_native == 0) {
        note_undetected(what);
        if (calls_intercepted != 0 || rc_intercepted != MPI_SUCCESS)
            check_fail("%s: the native MPI took the call, MPI_ invoked the handler %d times "
                       "and returned class %d",
                       what, calls_intercepted, error_class(rc_intercepted));
        return;
    }
    if (calls_native != 1 || rc_native == MPI_SUCCESS)
        check_fail("%s: PMPI invoked the handler %d times and returned %d (expected once, an "
                   "error)",
                   what, calls_native, rc_native);
    if (calls_intercepted != 1)
        check_fail("%s: MPI_ invoked the handler %d times, expected once", what, calls_intercepted);
    if (calls_intercepted >= 1 && handler_class != class_native)
        check_fail("%s: MPI_ gave the handler class %d (%s), PMPI_ class %d (%s)", what,
                   handler_class, class_name(handler_class, a, sizeof a), class_native,
                   class_name(class_native, b, sizeof b));
    if (error_class(rc_intercepted) != error_class(rc_native))
        check_fail("%s: MPI_ returned class %d, PMPI_ class %d", what, error_class(rc_intercepted),
                   error_class(rc_native));
}

int main(int argc, char **argv)
{
    MPI_Comm dup;
    MPI_Errhandler handler;
    int status, napis = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
#if MPI_VERSION >= 4
    napis = 2;
#endif

    for (int api_c = 0; api_c < napis; api_c++)
        for (int coll = 0; coll < NCOLLS; coll++)
            for (int bad = 0; bad < NBADS; bad++)
                compare_returns(coll, bad, api_c);

    /* the user handler: every bad argument but MPI_COMM_NULL (which has no handler of its own) */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_create_errhandler(record_error, &handler);
    MPI_Comm_set_errhandler(dup, handler);
    for (int api_c = 0; api_c < napis; api_c++)
        for (int coll = 0; coll < NCOLLS; coll++)
            for (int bad = 0; bad < NBADS; bad++)
                if (bad != BAD_COMM_NULL)
                    compare_handler(coll, bad, api_c, dup);

    /* the communicator still works after all those errors */
    {
        int p, me, sendbuf[64], recvbuf[64];
        MPI_Comm_size(dup, &p);
        MPI_Comm_rank(dup, &me);
        if (p <= 64) {
            for (int j = 0; j < p; j++)
                sendbuf[j] = me * 100 + j;
            check_count(1);
            if (MPI_Alltoall(sendbuf, 1, MPI_INT, recvbuf, 1, MPI_INT, dup) != MPI_SUCCESS)
                check_fail("a valid MPI_Alltoall on the dup failed after the error calls");
            for (int i = 0; i < p; i++) {
                check_count(1);
                if (recvbuf[i] != i * 100 + me)
                    check_fail("a valid MPI_Alltoall after the error calls: element %d "
                               "expected %d got %d",
                               i, i * 100 + me, recvbuf[i]);
            }
        }
    }

    MPI_Errhandler_free(&handler);
    MPI_Comm_free(&dup);
    MPI_Type_free(&uncommitted);
    status = check_finish("errors_check");
    MPI_Finalize();
    return status;
}

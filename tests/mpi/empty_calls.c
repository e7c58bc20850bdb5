/*
 * empty_calls: MPI_Alltoall, MPI_Allgather and MPI_Alltoallv that move no bytes (counts 0),
 * CALLS times each, interleaved, on MPI_COMM_WORLD, as a program whose last step has nothing to
 * exchange makes them. A plain MPI program, run natively and with the library preloaded.
 *
 * Checks: every call returns MPI_SUCCESS, and no byte of the send or receive buffers (all
 * outside any type map: the counts are 0) changes: both are preset (the receive buffer to
 * CHECK_SENTINEL) and compared after every call. Output: "empty_calls: N checks, M failed".
 * What the library decides for these calls is checked by scripts/cases/learn.sh from
 * XCHG_VERBOSE's lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define CALLS 60
#define BYTES 64 /* per buffer: what no call may touch */
#define MAX_RANKS 64

static void check_untouched(const unsigned char *buf, int value, const char *what, int call)
{
    for (int i = 0; i < BYTES; i++) {
        check_count(1);
        if (buf[i] != value) {
            check_fail("%s call %d: byte %d of a buffer of 0 counts became %d (was %d)", what, call,
                       i, buf[i], value);
            return;
        }
    }
}

static void check_rc(int rc, const char *what, int call)
{
    check_count(1);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        check_fail("%s call %d: returned %s", what, call,
                   check_error_string(rc, text, sizeof text));
    }
}

int main(int argc, char **argv)
{
    unsigned char send[BYTES], recv[BYTES];
    int p, counts[MAX_RANKS] = {0}, displs[MAX_RANKS] = {0};

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (p > MAX_RANKS) {
        fprintf(stderr, "empty_calls: at most %d ranks\n", MAX_RANKS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(send, 7, sizeof send);
    for (int call = 0; call < CALLS; call++) {
        memset(recv, CHECK_SENTINEL, sizeof recv);
        check_rc(MPI_Alltoall(send, 0, MPI_BYTE, recv, 0, MPI_BYTE, MPI_COMM_WORLD), "alltoall",
                 call);
        check_untouched(recv, CHECK_SENTINEL, "alltoall receive", call);
        check_rc(MPI_Allgather(send, 0, MPI_BYTE, recv, 0, MPI_BYTE, MPI_COMM_WORLD), "allgather",
                 call);
        check_untouched(recv, CHECK_SENTINEL, "allgather receive", call);
        check_rc(MPI_Alltoallv(send, counts, displs, MPI_BYTE, recv, counts, displs, MPI_BYTE,
                               MPI_COMM_WORLD),
                 "alltoallv", call);
        check_untouched(recv, CHECK_SENTINEL, "alltoallv receive", call);
        check_untouched(send, 7, "send", call);
    }
    int rc = check_finish("empty_calls");
    MPI_Finalize();
    return rc;
}

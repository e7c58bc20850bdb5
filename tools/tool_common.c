/*
 * tool_common.c: what xchg-tune and xchg-bench share (tool_common.h describes it).
 */
#include <ctype.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tool_common.h"
#include "../tuning/size.h"

/* Complete req; idle ranks sleep between tests, active ones yield. */
int tool_wait(MPI_Request *req, int idle)
{
    int flag = 0, rc;
    struct timespec nap = {0, 500000};
    for (;;) {
        rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (idle)
            nanosleep(&nap, NULL);
        else
            sched_yield();
    }
}

int tool_barrier(MPI_Comm comm, int idle)
{
    MPI_Request req;
    int rc = MPI_Ibarrier(comm, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    return tool_wait(&req, idle);
}

/* In-place reductions of n values over comm. */
int tool_allreduce(void *values, int n, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    MPI_Request req;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, values, n, type, op, comm, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    return tool_wait(&req, 0);
}

int tool_bcast(void *values, int n, MPI_Datatype type, int root, MPI_Comm comm)
{
    MPI_Request req;
    int rc = MPI_Ibcast(values, n, type, root, comm, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    return tool_wait(&req, 0);
}

/* "1024", "64K", "4M", "1G" into bytes; 0 on success, -1 when not a size. */
int tool_parse_bytes(const char *text, size_t *out)
{
    return xchg_parse_size(text, out);
}

/* "mpich-4.0.2", "openmpi-4.1.4", else the first word of the library version, lower case. */
void tool_mpi_name(char *out, size_t outlen)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    const char *v;
    MPI_Get_library_version(version, &len);
    if (strncmp(version, "MPICH Version:", 14) == 0) {
        v = version + 14;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(out, outlen, "mpich-%.*s", (int)strcspn(v, " \t\n"), v);
    } else if (strncmp(version, "Open MPI v", 10) == 0) {
        v = version + 10;
        snprintf(out, outlen, "openmpi-%.*s", (int)strcspn(v, " ,\t\n"), v);
    } else {
        snprintf(out, outlen, "%.*s", (int)strcspn(version, " \t\n,"), version);
        for (char *c = out; *c; c++)
            *c = (char)tolower((unsigned char)*c);
    }
}

int tool_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Buffers for calls up to max_block bytes per block (alltoallv: up to max_send / max_recv
 * bytes per rank); touched once so that page faults stay out of the timings. */
int tool_call_alloc(tool_call_t *call, int coll, int p, int rank, size_t max_send,
                                  size_t max_recv)
{
    memset(call, 0, sizeof *call);
    call->coll = coll;
    call->p = p;
    call->rank = rank;
    call->send = malloc(max_send ? max_send : 1);
    call->recv = malloc(max_recv ? max_recv : 1);
    call->sendcounts = calloc((size_t)p * 4, sizeof(int));
    if (!call->send || !call->recv || !call->sendcounts)
        return -1;
    call->sdispls = call->sendcounts + p;
    call->recvcounts = call->sendcounts + 2 * p;
    call->rdispls = call->sendcounts + 3 * p;
    memset(call->send, 1, max_send ? max_send : 1);
    memset(call->recv, 2, max_recv ? max_recv : 1);
    return 0;
}

void tool_call_free(tool_call_t *call)
{
    free(call->send);
    free(call->recv);
    free(call->sendcounts);
    memset(call, 0, sizeof *call);
}

/* Shape the call for blocks of `bytes`: alltoall p blocks each way, allgather one block out
 * and p in, alltoallv the uniform exchange (every count `bytes`, dense displacements). */
void tool_call_uniform(tool_call_t *call, size_t bytes)
{
    int p = call->p;
    call->bytes = bytes;
    call->send_bytes = call->coll == XCHG_ALLGATHER ? bytes : (size_t)p * bytes;
    call->recv_bytes = (size_t)p * bytes;
    for (int j = 0; j < p; j++) {
        call->sendcounts[j] = call->recvcounts[j] = (int)bytes;
        call->sdispls[j] = call->rdispls[j] = (int)((size_t)j * bytes);
    }
}

int tool_call_run(const tool_call_t *call, MPI_Comm comm)
{
    int count = (int)call->bytes;
    switch (call->coll) {
    case XCHG_ALLTOALL:
        return MPI_Alltoall(call->send, count, MPI_BYTE, call->recv, count, MPI_BYTE, comm);
    case XCHG_ALLGATHER:
        return MPI_Allgather(call->send, count, MPI_BYTE, call->recv, count, MPI_BYTE, comm);
    default:
        return MPI_Alltoallv(call->send, call->sendcounts, call->sdispls, MPI_BYTE, call->recv,
                             call->recvcounts, call->rdispls, MPI_BYTE, comm);
    }
}

/* The shape the shim computes for a uniform call (shim/normalize.c): block bytes for
 * alltoall and allgather; for alltoallv every rank sends and receives p blocks, self
 * included, so h1 = h2 = p * bytes and the size key is bytes. */
xchg_call_t tool_model_call(int coll, int p, size_t bytes)
{
    xchg_call_t call;
    memset(&call, 0, sizeof call);
    call.coll = coll;
    call.comm_size = p;
    call.block_bytes = bytes;
    if (coll == XCHG_ALLTOALLV) {
        call.max_send_bytes = (size_t)p * bytes;
        call.max_recv_bytes = (size_t)p * bytes;
        call.max_block_bytes = bytes;
        call.max_total_bytes = 2 * (size_t)p * bytes;
    }
    return call;
}

/* After the call of iteration `index`: whether check found a wrong result on any rank. An MPI
 * error code, or MPI_ERR_OTHER with *failed_iteration = report when it did. */
static int check_everywhere(tool_call_t *call, MPI_Comm comm, tool_check_fn *check, void *arg,
                            int index, int report, int *failed_iteration)
{
    int bad = check(call, index, arg) != 0;
    int rc = tool_allreduce(&bad, 1, MPI_INT, MPI_MAX, comm);
    if (rc == MPI_SUCCESS && bad) {
        if (failed_iteration)
            *failed_iteration = report;
        rc = MPI_ERR_OTHER;
    }
    return rc;
}

/* Time call on comm (collective over comm) after `warmup` untimed calls (at least one), each
 * also prepared and checked, as iterations -warmup .. -1. Returns an MPI error code, or
 * MPI_ERR_OTHER with *failed_iteration set (0 for a warm-up call) when check reported a wrong
 * result on any rank. */
int tool_time_collective_warm(tool_call_t *call, MPI_Comm comm, int warmup,
                                            double budget, int min_iters, int max_iters,
                                            tool_prepare_fn *prepare, tool_check_fn *check,
                                            void *arg, tool_timing_t *timing, int *failed_iteration)
{
    double start = MPI_Wtime(), loop_start, *times;
    int rc = MPI_SUCCESS, iters = 0, rank;

    memset(timing, 0, sizeof *timing);
    if (failed_iteration)
        *failed_iteration = -1;
    MPI_Comm_rank(comm, &rank);
    times = malloc((size_t)max_iters * sizeof *times);
    if (!times)
        return MPI_ERR_NO_MEM;

    /* warm-up: untimed, each call after a barrier like the timed ones */
    for (int w = warmup > 1 ? warmup : 1; w > 0; w--) {
        if (prepare)
            prepare(call, -w, arg);
        rc = tool_barrier(comm, 0);
        if (rc != MPI_SUCCESS)
            goto out;
        rc = tool_call_run(call, comm);
        if (rc != MPI_SUCCESS)
            goto out;
        if (check) {
            rc = check_everywhere(call, comm, check, arg, -w, 0, failed_iteration);
            if (rc != MPI_SUCCESS)
                goto out;
        }
    }

    /* timed iterations while rank 0's clock is within the budget; the agreement on going
     * on is also the barrier that starts each iteration */
    loop_start = MPI_Wtime();
    for (;;) {
        int go = 0;
        double t0;
        if (prepare)
            prepare(call, iters, arg);
        if (rank == 0)
            go = iters < min_iters || (iters < max_iters && MPI_Wtime() - loop_start < budget);
        rc = tool_allreduce(&go, 1, MPI_INT, MPI_MAX, comm);
        if (rc != MPI_SUCCESS || !go)
            break;
        t0 = MPI_Wtime();
        rc = tool_call_run(call, comm);
        times[iters] = MPI_Wtime() - t0;
        if (rc != MPI_SUCCESS)
            goto out;
        iters++;
        if (check) {
            rc = check_everywhere(call, comm, check, arg, iters - 1, iters, failed_iteration);
            if (rc != MPI_SUCCESS)
                goto out;
        }
    }
    if (rc != MPI_SUCCESS)
        goto out;

    /* the slowest rank's time of each iteration */
    rc = tool_allreduce(times, iters, MPI_DOUBLE, MPI_MAX, comm);
    if (rc != MPI_SUCCESS)
        goto out;
    qsort(times, (size_t)iters, sizeof *times, tool_cmp_double);
    timing->iters = iters;
    timing->min = times[0];
    timing->max = times[iters - 1];
    timing->median = iters % 2 ? times[iters / 2] : 0.5 * (times[iters / 2 - 1] + times[iters / 2]);
    timing->wall = MPI_Wtime() - start;
out:
    free(times);
    return rc;
}

/* The same after one warm-up call. */
int tool_time_collective(tool_call_t *call, MPI_Comm comm, double budget,
                                       int min_iters, int max_iters, tool_prepare_fn *prepare,
                                       tool_check_fn *check, void *arg, tool_timing_t *timing,
                                       int *failed_iteration)
{
    return tool_time_collective_warm(call, comm, 1, budget, min_iters, max_iters, prepare, check,
                                     arg, timing, failed_iteration);
}

/*
 * tool_common.h: what xchg-tune and xchg-bench share: waiting without starving other ranks,
 * buffers for one collective call, and the timing loop.
 *
 * The tools link the library's objects, so their own MPI_Alltoall / MPI_Allgather /
 * MPI_Alltoallv calls go through the shim, and xchg_force() picks the algorithm in-process.
 *
 * Waiting. With more ranks than cores MPICH's blocking calls busy-poll and starve the rank
 * they wait for, so the tools never block in MPI themselves: their barriers and reductions
 * are nonblocking and completed with MPI_Test plus sched_yield (ranks taking part in a
 * measurement) or plus a short sleep (ranks idle while others measure, so that they take
 * almost no processor time from them).
 *
 * Timing (tool_time_collective_warm). Untimed warm-up calls (tool_time_collective: one; more
 * let a library that learns from the first calls of a shape settle), then timed iterations while
 * rank 0's clock is within the budget (at least min_iters, at most max_iters). Before each
 * iteration all ranks agree, in one reduction, on whether to go on: every rank runs the same
 * count, and the reduction is also the barrier that starts the iteration. An iteration's
 * time is the slowest rank's elapsed time for the call (one MAX reduction over the
 * per-iteration times after the loop); min, median and max are over the iterations.
 *
 * The functions are in tool_common.c, which every tool links.
 */
#ifndef XCHG_TOOL_COMMON_H
#define XCHG_TOOL_COMMON_H

#include <ctype.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../algos/xchg.h"

/* Complete req; idle ranks sleep between tests, active ones yield. */
int tool_wait(MPI_Request *req, int idle);

int tool_barrier(MPI_Comm comm, int idle);

/* In-place reductions of n values over comm. */
int tool_allreduce(void *values, int n, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

int tool_bcast(void *values, int n, MPI_Datatype type, int root, MPI_Comm comm);

/* "1024", "64K", "4M", "1G" into bytes; 0 on success, -1 when not a size. */
int tool_parse_bytes(const char *text, size_t *out);

/* "mpich-4.0.2", "openmpi-4.1.4", else the first word of the library version, lower case. */
void tool_mpi_name(char *out, size_t outlen);

int tool_cmp_double(const void *a, const void *b);

/* Buffers and counts of one collective call with MPI_BYTE on a communicator of size p. */
typedef struct tool_call {
    int coll;
    int p, rank;
    size_t bytes; /* block bytes (alltoall, allgather) or the workload's n (alltoallv) */
    char *send, *recv;
    size_t send_bytes, recv_bytes;
    int *sendcounts, *sdispls, *recvcounts, *rdispls; /* alltoallv */
} tool_call_t;

/* Buffers for calls up to max_block bytes per block (alltoallv: up to max_send / max_recv
 * bytes per rank); touched once so that page faults stay out of the timings. */
int tool_call_alloc(tool_call_t *call, int coll, int p, int rank, size_t max_send,
                                  size_t max_recv);

void tool_call_free(tool_call_t *call);

/* Shape the call for blocks of `bytes`: alltoall p blocks each way, allgather one block out
 * and p in, alltoallv the uniform exchange (every count `bytes`, dense displacements). */
void tool_call_uniform(tool_call_t *call, size_t bytes);

int tool_call_run(const tool_call_t *call, MPI_Comm comm);

/* The shape the shim computes for a uniform call (shim/normalize.c): block bytes for
 * alltoall and allgather; for alltoallv every rank sends and receives p blocks, self
 * included, so h1 = h2 = p * bytes and the size key is bytes. */
xchg_call_t tool_model_call(int coll, int p, size_t bytes);

typedef struct tool_timing {
    int iters;
    double min, median, max; /* seconds per call: slowest rank of each iteration */
    double wall;             /* seconds the whole measurement took, warm-up included */
} tool_timing_t;

/* Optional per-iteration hooks around the timed call (outside the timed region): prepare
 * before the barrier, check after the call; check returns 0 when the result is right. */
typedef void tool_prepare_fn(tool_call_t *call, int iteration, void *arg);

typedef int tool_check_fn(tool_call_t *call, int iteration, void *arg);

/* Time call on comm (collective over comm) after `warmup` untimed calls (at least one), each
 * also prepared and checked, as iterations -warmup .. -1. Returns an MPI error code, or
 * MPI_ERR_OTHER with *failed_iteration set (0 for a warm-up call) when check reported a wrong
 * result on any rank. */
int tool_time_collective_warm(tool_call_t *call, MPI_Comm comm, int warmup,
                                            double budget, int min_iters, int max_iters,
                                            tool_prepare_fn *prepare, tool_check_fn *check,
                                            void *arg, tool_timing_t *timing, int *failed_iteration);

/* The same after one warm-up call. */
int tool_time_collective(tool_call_t *call, MPI_Comm comm, double budget,
                                       int min_iters, int max_iters, tool_prepare_fn *prepare,
                                       tool_check_fn *check, void *arg, tool_timing_t *timing,
                                       int *failed_iteration);

#endif

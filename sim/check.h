/*
 * check.h: the simulated ranks' buffers, filled from a formula and checked (check.c).
 */
#ifndef XCHG_SIM_CHECK_H
#define XCHG_SIM_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "../algos/xchg.h"
#include "../tuning/workloads.h"

typedef struct sim_job {
    /* set by the caller */
    int coll, p;
    size_t bytes;      /* block bytes; alltoallv: the mean block (n = p bytes units per rank) */
    int inplace;       /* allgather: the send block is the rank's block of the receive buffer */
    xchg_workload_t wl; /* alltoallv */
    /* set by sim_job_init */
    unsigned char **send, **recv;
    size_t *send_len, *recv_len;
    size_t *counts;                         /* alltoallv: [s * p + d] bytes from s to d */
    size_t *sendoffs, *recvoffs, *recvbytes; /* alltoallv: [r * p + j] of rank r */
    size_t h1, h2, max_block;               /* alltoallv: the true maxima over all ranks */
} sim_job_t;

int sim_job_init(sim_job_t *job); /* 0, or -1 when memory is short */
unsigned char *sim_job_recvbuf(const sim_job_t *job, int rank);
/* 0 when every byte is right, else -1 with the first wrong byte described in err */
int sim_job_check(const sim_job_t *job, char *err, size_t errlen);
void sim_job_free(sim_job_t *job);

#endif

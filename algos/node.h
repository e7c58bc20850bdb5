/*
 * node.h: what MPI_Alltoall's and MPI_Alltoallv's node algorithms share (algos/node.c): the
 * passes of a call through the node's shared segment, with the leaders' messages between nodes
 * in the middle of each (the plan: algos/sched/node.h).
 */
#ifndef XCHG_NODE_RUN_H
#define XCHG_NODE_RUN_H

#include "xchg.h"
#include "sched/node.h"

/* One call of a rank, its places computed (alltoall_node.c or alltoallv_node.c). */
typedef struct xchg_node_call {
    xchg_node_layout_t lay;
    xchg_node_windows_t win;
    xchg_node_cfg_t cfg;
    int node, me;                /* this rank's node and index in it */
    int send_as, recv_as;        /* the leader it sends for and receives for (-1: none) */
    size_t *stream_len, *in_len; /* [nnodes]: the node's streams to and from every node */
    size_t *send_at, *recv_at;   /* [p]: this rank's blocks in their streams */
    const char *send;
    const size_t *sendbytes, *sendoffs;
    char *recv;
    const size_t *recvbytes, *recvoffs;
    uint64_t stats[3];       /* carrying: the node's maxima, then (after the call) everyone's */
    xchg_node_step_t *steps; /* room for one pair's steps */
    xchg_msg_t *sends, *recvs; /* a leader's steps in flight at once: batch of each */
    int batch;
} xchg_node_call_t;

/* The layout of ctx's communicator on its scratch stack; MPI_SUCCESS or an error. */
int xchg_node_layout_push(xchg_ctx_t *ctx, xchg_node_layout_t *lay);
/* The arrays of a call (stream_len, in_len, send_at, recv_at, steps) on the scratch stack, and
 * this rank's roles (send_as, recv_as), after c->lay and c->cfg are set. */
int xchg_node_call_push(xchg_ctx_t *ctx, xchg_node_call_t *c);
/* Every pass of the call: writes, the leaders' steps, reads. The node's ranks synchronise
 * twice a pass whatever happens, so an error of a leader's message is returned after the
 * passes (every rank of the node returns it). */
int xchg_node_run(xchg_ctx_t *ctx, xchg_node_call_t *c);

#endif

/*
 * xchg.h: what the shim, the algorithms and the tuning code share.
 *
 * Algorithms see contiguous byte blocks, never datatypes: the shim normalises every call
 * (shim/normalize.c) and hands an algorithm
 *   - a per-communicator context (xchg_ctx_t): the private duplicate of the user's
 *     communicator, rank/size, node layout, scratch buffers and the waiting policy;
 *   - the call's shape (xchg_call_t), equal on every rank of the communicator;
 *   - its parameters (xchg_params_t), already completed by the cost model.
 * Every round goes through xchg_exchange() (algos/round.c), which posts nonblocking PMPI
 * point-to-point on ctx->comm and owns the waiting policy (XCHG_WAIT).
 */
#ifndef XCHG_H
#define XCHG_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* The three collectives xchg serves; used as array indices. */
enum { XCHG_ALLTOALL = 0, XCHG_ALLGATHER = 1, XCHG_ALLTOALLV = 2, XCHG_NCOLLS = 3 };

/* Scratch memory of a context: a stack of chunks (algos/scratch.c). Take a mark, push what you
 * need, release to the mark before returning; a nested call's buffers lie above its caller's. */
#define XCHG_CHUNKS 24
typedef struct xchg_chunk {
    char *ptr;
    size_t size, used;
} xchg_chunk_t;
typedef struct xchg_mark {
    int chunk;
    size_t used;
} xchg_mark_t;

struct xchg_params;

/* What the algorithms' predicates and cost models may know of where a communicator's ranks
 * run: computed once per communicator (shim/context.c) from values equal on all ranks. */
typedef struct xchg_topo {
    int nnodes;            /* nodes the ranks are on */
    int min_node_ranks;    /* fewest ranks of the communicator on one node */
    int max_node_ranks;    /* most ranks on one node */
    int consecutive;       /* 1: every node's ranks are consecutive in the communicator */
    uint64_t layout_hash;  /* a hash of the node of every rank */
    int torus_ndims;       /* 1 or 2: the communicator has a Cartesian topology (MPI_Cart_create)
                              with that many dimensions, all periodic; 0 otherwise */
    int torus_dims[2];     /* its dimensions; rank order is MPI_Cart_coords' */
    int torus_from_env;    /* 1: the shape is XCHG_TORUS's (a communicator without a Cartesian
                              topology; rank = x * c + y), not the communicator's own */
} xchg_topo_t;

/* Per-communicator context, created on the first intercepted collective and cached on the
 * user's communicator with an attribute (shim/context.c). */
typedef struct xchg_ctx {
    MPI_Comm comm; /* private duplicate: every message of the library goes here */
    int rank;
    int size;
    /* node layout: nodes numbered 0.. in order of their lowest rank in this communicator */
    int nnodes;
    int node;       /* this rank's node */
    int local_rank; /* rank among this communicator's ranks on the node */
    int local_size;
    int *node_of;   /* [size]: node of every rank */
    int *node_size; /* [nnodes]: ranks of this communicator on each node */
    int node_pus;   /* processing units hwloc reports for all ranks on this node (whole job) */
    xchg_topo_t topo; /* the summary that selection sees (xchg_call_t.topo) */
    int yield;      /* waiting policy: 1 = MPI_Testall + sched_yield, 0 = MPI_Waitall */
    xchg_chunk_t chunks[XCHG_CHUNKS]; /* scratch memory, chunks[top] the one in use */
    int top;
    MPI_Request *reqs; /* request array reused by xchg_exchange */
    int reqs_cap;
    int passthrough;              /* an intercommunicator: the MPI library serves every call */
    struct xchg_shim_state *shim; /* the shim's decisions and learning (shim/select.c), opaque
                                     to algorithms */
    /* An alltoall of equal blocks on this communicator for nested algorithms (twophase's
     * transposes), handed in by the shim: its selection without learning; inner = registry
     * index + 1 forces an algorithm (params carries its r/k), 0 lets selection choose. */
    int (*inner_alltoall)(struct xchg_ctx *ctx, const void *sendbuf, void *recvbuf,
                          size_t block_bytes, int inner, const struct xchg_params *params);
} xchg_ctx_t;

/* Algorithm parameters. Zero means "not given": the cost model fills it in
 * (xchg_algo_t.cost). The one lowercase key of each field is given in brackets. */
typedef struct xchg_params {
    int radix;  /* [r] radix of the index algorithm, 2..p (larger values act as p) */
    int nports; /* [k] ports: messages in flight at once */
    int inner;  /* [inner] twophase: registry index + 1 of the inner alltoall, 0 = auto */
    int dims_r; /* [dims] torus: the shape's rows (1 for a ring: dims=P), 0 = not given */
    int dims_c; /* [dims] torus: its columns (dims=RxC; rank = x * dims_c + y) */
} xchg_params_t;

/* The shape of one call. Every field is equal on all ranks of the communicator, so anything
 * computed from it alone (selection, default parameters) is globally consistent. */
typedef struct xchg_call {
    int coll;
    int comm_size;
    const xchg_topo_t *topo; /* the communicator's; NULL: unknown (a flat single node) */
    size_t block_bytes; /* the size key, computed only by xchg_size_key() (shim/select.c) */
    /* alltoallv only, agreed over all ranks with one xchg_agree_max() */
    size_t max_send_bytes;  /* h1: most bytes any rank sends */
    size_t max_recv_bytes;  /* h2: most bytes any rank receives */
    size_t max_block_bytes; /* largest single (source, destination) message */
    size_t max_total_bytes; /* largest sum over a rank's sends and receives */
} xchg_call_t;

/* Measured (or default) machine constants of the linear model T = beta + m tau, on two levels:
 * messages inside a node and messages between nodes. A cost model prices a call with the
 * constants of the links its messages cross, xchg_machine_for(call, machine) (tuning/cost.h). */
typedef struct xchg_machine {
    double beta;       /* seconds per message start-up inside a node (one level: everywhere) */
    double tau;        /* seconds per byte on the wire inside a node (one level: everywhere) */
    double rho;        /* seconds per byte copied locally */
    double port_share; /* k messages of m bytes in flight cost beta + m tau (1 + port_share (k-1));
                          0 = perfect k-port, 1 = ports share one link */
    double beta_inter; /* seconds per message start-up between nodes; 0 = beta */
    double tau_inter;  /* seconds per byte between nodes; 0 = tau */
    int inject;        /* inter-node messages one node's network interface carries at full speed
                          at once; 0 = unlimited */
    /* set by xchg_machine_for for a call that spans nodes with inject > 0 (never by a table):
       a round of k messages per rank costs at least beta + m tau k node_share, the busiest
       node's max_node_ranks k messages through its interface, inject at a time
       (node_share = max_node_ranks / inject); 0 = no limit */
    double node_share;
    /* the MPI library's own collectives as xchg-tune measured them (the tuning table's native
       curves, tuning/table.h), or NULL: xchg_cost_native prices native from a curve for the
       call's collective and communicator size when there is one, else by its model */
    const struct xchg_native_curves *native;
} xchg_machine_t;

/* Algorithm entry points. Buffers:
 *  alltoall:  sendbuf holds p blocks of block_bytes (block j for rank j), recvbuf receives p
 *             blocks (block j from rank j); the two never overlap and recvbuf may be used as
 *             scratch (the shim guarantees it is exactly p * block_bytes long).
 *  allgather: sendblock is this rank's block; it may alias recvbuf + rank * block_bytes
 *             (MPI_IN_PLACE); recvbuf receives p blocks.
 *  alltoallv: sendbytes[j]/sendoffs[j] give the message for rank j inside sendbuf,
 *             recvbytes[j]/recvoffs[j] where the message from rank j lands in recvbuf; bytes of
 *             recvbuf outside these ranges must not be written. sendbuf and recvbuf never
 *             overlap. call carries the agreed h1/h2.
 * They return MPI error codes unchanged and never print or abort. */
typedef int xchg_alltoall_fn(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf,
                             size_t block_bytes, const xchg_params_t *params);
typedef int xchg_allgather_fn(xchg_ctx_t *ctx, const void *sendblock, void *recvbuf,
                              size_t block_bytes, const xchg_params_t *params);
/* Statistics an alltoallv carries along with its own messages, so that the next call on the
 * communicator is decided from values every rank knows without a separate agreement round
 * (shim/normalize.c). An algorithm that can carry them (pairwise: every rank hears from every
 * other) sets agreed[i] to the maximum of mine[i] over all ranks and done to 1; one that
 * cannot leaves done at 0. */
typedef struct xchg_carry {
    uint64_t mine[3];   /* this rank: bytes sent, bytes received, largest single message */
    uint64_t agreed[3]; /* the maxima over all ranks, when done */
    int done;
} xchg_carry_t;

typedef int xchg_alltoallv_fn(xchg_ctx_t *ctx, const void *sendbuf, const size_t *sendbytes,
                              const size_t *sendoffs, void *recvbuf, const size_t *recvbytes,
                              const size_t *recvoffs, const xchg_call_t *call,
                              const xchg_params_t *params, xchg_carry_t *carry);

/* One registry entry (algos/registry.c). */
typedef struct xchg_algo {
    const char *name; /* the one lowercase name used everywhere */
    int coll;
    xchg_alltoall_fn *alltoall; /* exactly one of the three is set; none for "native" */
    xchg_allgather_fn *allgather;
    xchg_alltoallv_fn *alltoallv;
    /* 1 when the algorithm can serve the call; else 0 and *why says why */
    int (*applies)(const xchg_call_t *call, const xchg_params_t *params, const char **why);
    /* parse one KEY=VALUE; 0 on success, else -1 with a message in err */
    int (*parse)(const char *key, const char *value, xchg_params_t *params, char *err,
                 size_t errlen);
    /* complete zero fields of params with the model's best values and return the predicted
     * time in seconds (INFINITY when it cannot serve the call) */
    double (*cost)(const xchg_call_t *call, const xchg_machine_t *machine, xchg_params_t *params);
    const char *keys; /* accepted keys, e.g. "r,k"; "" for none */
    const char *description;
    /* alltoallv: 1 when the algorithm uses none of the agreed values of xchg_call_t, so a
     * call forced to it skips the agreement round (0 by default: agree) */
    int no_agreement;
    /* 1 for "native": the MPI library's own collective serves the call (no function set) */
    int native;
} xchg_algo_t;

/* registry.c */
extern const xchg_algo_t xchg_algos[];
extern const int xchg_nalgos;
const char *xchg_coll_name(int coll); /* "alltoall", "allgather", "alltoallv" */
int xchg_algo_find(int coll, const char *name); /* registry index, or -1 */
/* 1 when key ("r", "k", "inner") is one of the algorithm's keys */
int xchg_algo_has_key(const xchg_algo_t *algo, const char *key);
/* "NAME[:KEY=VALUE,...]" into an index and params; 0 on success, else -1 with err filled */
int xchg_spec_parse(int coll, const char *spec, int *algo, xchg_params_t *params, char *err,
                    size_t errlen);
/* "r=4,k=2" (only the algorithm's keys, only the fields that are set) */
void xchg_params_format(const xchg_algo_t *algo, const xchg_params_t *params, char *out,
                        size_t outlen);
/* the generic KEY=VALUE parser every registry entry uses for r, k and inner */
int xchg_params_parse_key(const char *key, const char *value, xchg_params_t *params, char *err,
                          size_t errlen);

/* round.c: one communication round. All receives are posted, then all sends, then the round
 * waits for all of them under the context's waiting policy. A message to or from this rank is
 * a local copy. Messages above INT_MAX bytes are split. */
typedef struct xchg_msg {
    int peer;
    void *buf;
    size_t bytes;
} xchg_msg_t;
int xchg_exchange(xchg_ctx_t *ctx, const xchg_msg_t *sends, int nsends, const xchg_msg_t *recvs,
                  int nrecvs);
/* Element-wise maximum of n values over all ranks (dissemination, ceil(log2 p) rounds of
 * n * 8 bytes through xchg_exchange). */
int xchg_agree_max(xchg_ctx_t *ctx, uint64_t *vals, int n);
/* scratch.c: the context's scratch stack (see xchg_mark_t). A push returns at least bytes,
 * aligned to 64 bytes, or NULL when memory is exhausted; it never moves earlier pushes. */
xchg_mark_t xchg_scratch_mark(const xchg_ctx_t *ctx);
void *xchg_scratch_push(xchg_ctx_t *ctx, size_t bytes);
void xchg_scratch_release(xchg_ctx_t *ctx, xchg_mark_t mark);
void xchg_scratch_free(xchg_ctx_t *ctx); /* everything, when the context goes */

/* The algorithms (one file each in algos/) */
xchg_alltoall_fn xchg_alltoall_pairwise;
xchg_alltoall_fn xchg_alltoall_radix;
xchg_alltoall_fn xchg_alltoall_hier;
xchg_alltoall_fn xchg_alltoall_torus;
xchg_allgather_fn xchg_allgather_ring;
xchg_allgather_fn xchg_allgather_circulant;
xchg_alltoallv_fn xchg_alltoallv_pairwise;
xchg_alltoallv_fn xchg_alltoallv_twophase;
xchg_alltoallv_fn xchg_alltoallv_hier;

#endif

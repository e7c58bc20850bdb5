/*
 * xchg.h: what the shim and the algorithms share (the MPI side; the pure types are in
 * sched/types.h, which tuning/ and algos/sched/ use without MPI).
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
#include <string.h>

#include "sched/copy.h"  /* xchg_copy: every copy of users' bytes */
#include "sched/types.h" /* collectives, call shape, topology, machine, params, registry entry */

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

/* The segment of shared memory of this rank's node (shim/shm.c): the ranks of the communicator
 * on one node share it (a one-node communicator: all of them). POSIX shared memory made by the
 * node's lowest rank, mapped by every rank of the node, its name unlinked as soon as all have it.
 * A control block of XCHG_SHM_CONTROL bytes (the node's synchronisation counter, then the lines
 * of the one-line passes), then two halves
 * of half_bytes each, equal on every rank of the communicator (every node's segment grows at
 * the same calls to the same size). Pass n of the communicator's shm and node calls uses half
 * n mod 2 (algos/shm.c). */
#define XCHG_SHM_CONTROL 4096
typedef struct xchg_shm {
    char *base;
    size_t half_bytes;
    size_t map_bytes; /* the mapping: XCHG_SHM_CONTROL + 2 half_bytes */
    uint64_t passes;  /* passes through this segment so far: equal on all ranks */
    uint64_t syncs;   /* synchronisations of the node so far: equal on the node's ranks */
    int capped;       /* growing failed once (agreed): the halves stay as they are */
    unsigned v_line_skip; /* alltoallv: its calls left before it tries a one-line pass again
                             (alltoallv_shm.c; equal on the node's ranks: set from what all read) */
    uint64_t id;          /* agreed as it was made: the same on every rank (every node), never 0 */
} xchg_shm_t;

/* Per-communicator context, created on the first intercepted collective and cached on the
 * user's communicator with an attribute (shim/context.c). */
typedef struct xchg_ctx {
    MPI_Comm comm; /* the private channel (shim/channel.c): every message of the library goes
                      here, with the context's own tag; it may be shared with other contexts of
                      the same group, so never call a collective on it */
    int tag;       /* the tag of this context's messages on comm */
    int slot;      /* its slot on the channel (tag = 2 slot) */
    struct xchg_channel *channel; /* opaque to algorithms */
    MPI_Comm user;  /* the user's communicator: only for the MPI library's own collectives
                       (native nested calls), never for point-to-point messages */
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
    uint64_t members; /* its processes (a hash of their world ranks, sorted), 0 when unknown:
                         a freed communicator's segment serves the next of the same processes */
    xchg_topo_t topo; /* the summary that selection sees (xchg_call_t.topo) */
    int yield;      /* waiting policy: 1 = MPI_Testall + sched_yield, 0 = MPI_Waitall */
    int one_clock;  /* every rank runs on one machine (measured, whatever XCHG_NODES says): their
                       monotonic clocks are one clock */
    int shm_yield;  /* the shm algorithms' waits yield the core (XCHG_WAIT=yield, or auto on an
                       oversubscribed node, whatever the MPI library's own wait does) */
    xchg_shm_t *shm; /* the shared segment, NULL until an shm call needs one */
    int shm_failed;  /* no segment could be had: the shm algorithms send messages instead */
    xchg_chunk_t chunks[XCHG_CHUNKS]; /* scratch memory, chunks[top] the one in use */
    int top;
    size_t cut_inter;  /* messages to and from other nodes go in pieces of at most this many
                          bytes (round.c); 0: whole. Alike on every rank (the shim sets it from
                          the machine constants, xchg_cut_inter) */
    MPI_Request *reqs; /* request array reused by xchg_exchange */
    MPI_Status *stats; /* and their statuses (reqs_cap of each) */
    int reqs_cap;
    int passthrough;              /* an intercommunicator: the MPI library serves every call */
    struct xchg_shim_state *shim; /* the shim's decisions and learning (shim/select.c), opaque
                                     to algorithms */
    /* An alltoall of equal blocks on this communicator for nested algorithms (twophase's
     * transposes), handed in by the shim: its selection without learning; inner (a registry
     * entry) forces an algorithm (params carries its r/k), NULL lets selection choose. */
    int (*inner_alltoall)(struct xchg_ctx *ctx, const void *sendbuf, void *recvbuf,
                          size_t block_bytes, const xchg_algo_t *inner,
                          const xchg_params_t *params);
    /* Make ctx->shm's halves at least bytes long (at most the topology's limit), handed in by
     * the shim (shim/shm.c). Collective over the communicator: every rank calls it at the same
     * call with the same bytes. MPI_SUCCESS (the halves may stay smaller when growing failed on
     * some rank: then they do everywhere), or an error on every rank when no segment can be had
     * (ctx->shm_failed is then set everywhere and ctx->shm is NULL). Growing agrees, and on one
     * node an agreement is a pass through the segment (agree.c): a caller between a pass and
     * its reads reads first. */
    int (*shm_reserve)(struct xchg_ctx *ctx, size_t bytes);
} xchg_ctx_t;

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

/* The function that runs a registry entry, bound by the entry's collective and name
 * (algos/impls.c): exactly one of the three is set. The registry (tuning/registry.c) holds
 * everything else and needs no MPI; the shim joins the two (xchg_algo_impl, shim/shim.h). */
typedef struct xchg_impl {
    int coll;
    const char *name;
    xchg_alltoall_fn *alltoall;
    xchg_allgather_fn *allgather;
    xchg_alltoallv_fn *alltoallv;
} xchg_impl_t;

/* impls.c: the binding of coll's algorithm name, or NULL (native has none) */
const xchg_impl_t *xchg_impl_find(int coll, const char *name);
extern const xchg_impl_t xchg_impls[];
extern const int xchg_nimpls;

/* round.c: one communication round. All receives are posted, then all sends, then the round
 * waits for all of them under the context's waiting policy. A message to or from this rank is
 * a local copy. Messages above INT_MAX bytes are split. The simulator (sim/engine.c) links its
 * own xchg_exchange in place of round.c's; nothing else here knows which one runs. */
typedef struct xchg_msg {
    int peer;
    void *buf;
    size_t bytes;
} xchg_msg_t;
int xchg_exchange(xchg_ctx_t *ctx, const xchg_msg_t *sends, int nsends, const xchg_msg_t *recvs,
                  int nrecvs);
/* agree.c: element-wise maximum of n values (n <= XCHG_AGREE_MAX) over all ranks (dissemination,
 * ceil(log2 p) rounds of n * 8 bytes through xchg_exchange); MPI_ERR_ARG for more. */
#define XCHG_AGREE_MAX 16
int xchg_agree_max(xchg_ctx_t *ctx, uint64_t *vals, int n);
/* shm.c: passes through the node's shared segment (ctx->shm, reserved first). A pass writes what
 * this rank sends into xchg_shm_half(ctx), synchronises the node (xchg_shm_sync: announces this
 * rank's writes and waits until every rank of the node has announced its own, spinning, or
 * yielding the core under shm_yield, and driving MPI's progress engine meanwhile), reads, and
 * ends with xchg_shm_next(ctx); the next pass uses the other half, so a half is written again only
 * after every rank of the node has synchronised once more, which it does after reading it. A pass
 * may synchronise more than once (the node algorithms: after the writes and after the leaders'
 * messages). xchg_shm_arrive is one synchronisation and the end of the pass (the shm
 * algorithms). */
char *xchg_shm_half(const xchg_ctx_t *ctx);
/* alltoallv_shm.c: the bytes of each sender's region of a half (sender r's at r times it),
 * ctx->shm reserved. */
size_t xchg_alltoallv_shm_region(const xchg_ctx_t *ctx);
void xchg_shm_sync(xchg_ctx_t *ctx);
void xchg_shm_next(xchg_ctx_t *ctx);
void xchg_shm_arrive(xchg_ctx_t *ctx);
/* One-line passes (algos/shm.c) for small calls: when xchg_shm_line_fits(ctx, bytes) (a
 * segment, at most XCHG_SHM_LINE_RANKS ranks on the node, bytes <= XCHG_SHM_LINE_DATA: equal
 * on the node's ranks when bytes is), a rank writes up to bytes at xchg_shm_line(ctx,
 * ctx->local_rank), arrives (xchg_shm_line_arrive: announces its line and waits for every other
 * rank's of the node), reads any xchg_shm_line(ctx, r), then ends the pass with
 * xchg_shm_next(ctx). */
#define XCHG_SHM_LINE 64
#define XCHG_SHM_LINE_DATA (XCHG_SHM_LINE - 8)
#define XCHG_SHM_LINE_RANKS ((XCHG_SHM_CONTROL / XCHG_SHM_LINE - 1) / 2)
int xchg_shm_line_fits(const xchg_ctx_t *ctx, size_t bytes);
char *xchg_shm_line(const xchg_ctx_t *ctx, int local);
void xchg_shm_line_arrive(xchg_ctx_t *ctx);
/* scratch.c: the context's scratch stack (see xchg_mark_t). A push returns at least bytes,
 * aligned to 64 bytes, or NULL when memory is exhausted; it never moves earlier pushes. */
xchg_mark_t xchg_scratch_mark(const xchg_ctx_t *ctx);
void *xchg_scratch_push(xchg_ctx_t *ctx, size_t bytes);
void xchg_scratch_release(xchg_ctx_t *ctx, xchg_mark_t mark);
void xchg_scratch_free(xchg_ctx_t *ctx); /* everything, when the context goes */
/* Memory the library holds for itself. From XCHG_MEM_MAPPED bytes up it is mapped and unmapped
 * directly, never through malloc: glibc raises the process's mmap threshold whenever it frees a
 * chunk it had mapped, and from then on the program's own large buffers come from the heap, at
 * offsets where copies can run many times slower (docs/design.md, "Copies"). xchg_mem_alloc's
 * bytes are not set (NULL when memory is exhausted); xchg_mem_free takes the size it was given. */
#define XCHG_MEM_MAPPED ((size_t)64 << 10) /* half of glibc's initial threshold */
void *xchg_mem_alloc(size_t bytes);
void xchg_mem_free(void *ptr, size_t bytes);

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
xchg_alltoall_fn xchg_alltoall_shm; /* through one segment: alltoall_shm.c and its two siblings */
xchg_allgather_fn xchg_allgather_shm;
xchg_alltoallv_fn xchg_alltoallv_shm;
xchg_alltoall_fn xchg_alltoall_node; /* node-aware: alltoall_node.c and its two siblings */
xchg_allgather_fn xchg_allgather_node;
xchg_alltoallv_fn xchg_alltoallv_node;

#endif

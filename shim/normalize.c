/*
 * normalize.c: user arguments -> contiguous byte blocks -> an algorithm -> user buffers.
 *
 * For each collective:
 *   1. cases the library does not handle go to the MPI library unchanged (XCHG_PASS):
 *      XCHG_DISABLE, MPI_COMM_NULL, intercommunicators, and invalid arguments (negative
 *      counts, MPI_DATATYPE_NULL, uncommitted types, a NULL buffer with data described by a
 *      dense type (an address-0 buffer)), so that the MPI library reports them exactly as it
 *      would without xchg. Every other case, MPI_BOTTOM with absolute-address types included,
 *      is served by xchg on every rank: which protocol runs never depends on how one rank
 *      describes its buffers, only on values that MPI requires to be equal on all ranks
 *      (communicator, receive block size, MPI_IN_PLACE for the equal-block collectives) or
 *      that the ranks agree on. A rank whose own sizes do not match or whose buffers alias
 *      (erroneous, but reported by the MPI library on that rank only) takes part like the
 *      others and reports the library's error afterwards (the section before block_args_t);
 *   2. the context of the communicator (shim/context.c) and the algorithm (shim/select.c);
 *   3. send data: used in place when the send type is dense, else packed into scratch; with
 *      MPI_IN_PLACE it is taken from the receive buffer (sendcount and sendtype ignored);
 *   4. receive data: written straight into the user's buffer when the receive type is dense,
 *      else into scratch and unpacked, which writes only the bytes of the receive type map.
 *
 * Scratch (pushed on the context's scratch stack above the mark context_for takes; the caller
 * releases it when the call is over, xchg_outcome_t.mark):
 *   packed send  blocks, block j at j * block_bytes (alltoallv: at sendoffs[j])
 *   receive      received blocks before unpacking, same layout
 *   layout       alltoallv: sendbytes[p] sendoffs[p] recvbytes[p] recvoffs[p] (size_t each)
 *
 * MPI_Alltoallv's shape (h1, h2, largest message) must be agreed before selection. The statistics
 * of the previous call on the communicator stand in for them (every rank holds the same, see
 * xchg_shim_state_t): when the choice they give needs no agreed values (pairwise or native), the
 * call runs at once, and every CARRY_EVERY-th such call of pairwise or hier carries its statistics
 * in its own messages for the calls after it (xchg_carry_t; carrying costs 24 bytes and a copy per
 * message, and keeps every message, empty ones included, in the exchange, so the calls between run
 * plain and skip their empty messages as MPICH's alltoallv does). So a choice follows changing
 * counts within CARRY_EVERY calls. Only the first call, a choice that needs the exact values
 * (twophase), or statistics older than CARRY_MAX_AGE calls (native carries nothing) pay the
 * agreement round (xchg_agree_max: ceil(log2 p) rounds of 24 bytes, or one pass through the
 * segment on one node); where the first call is the communicator's first of any collective,
 * the allreduce that attaches its context agrees them instead (v_early). An agreement that finds
 * the statistics unchanged doubles that age, up to CARRY_AGE_LIMIT, so a program whose counts
 * stay put pays it ever more rarely. The choice the carried statistics gave is memorised (vmemo) until
 * they change (a carry that brings the same values changes nothing), the configuration changes
 * or learning's epoch moves: the calls between skip selection, as the equal-block collectives'
 * memorised calls do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "normalize.h"
#include "../tuning/env.h"

#define CARRY_MAX_AGE 16  /* alltoallv calls decided from the same carried statistics, */
#define CARRY_AGE_LIMIT 256 /* doubled after every agreement that found them unchanged, up to
                               this (and back to CARRY_MAX_AGE when they changed) */
#define CARRY_EVERY 8     /* pairwise and hier carry the statistics in one call of this many (shm in
                             every call: it reads every sender's header anyway) */

/* The context for a call, or XCHG_PASS when the MPI library serves it (disabled, no valid
 * communicator, an intercommunicator); early (may be NULL): xchg_ctx_get's. */
static int context_for(MPI_Comm comm, xchg_ctx_t **ctx, xchg_outcome_t *out, xchg_early_t *early)
{
    int rc;
    if (!xchg_config.loaded)
        xchg_config_load();
    if (xchg_config.disable || comm == MPI_COMM_NULL)
        return XCHG_PASS;
    *ctx = xchg_ctx_get(comm, &rc, early);
    if (!*ctx)
        return rc;
    if ((*ctx)->passthrough)
        return XCHG_PASS;
    /* the shim's scratch of this call lies above this mark (released by the caller) */
    out->ctx = *ctx;
    out->mark = xchg_scratch_mark(*ctx);
    return MPI_SUCCESS;
}

/* What a program's first intercepted call would otherwise set up, done at MPI_Init instead,
 * where the library already measures the machine (collective over MPI_COMM_WORLD): a context
 * on a duplicate of the world, which makes the channel of the world's group (kept idle until
 * MPI_Finalize: shim/channel.c) and, on one node, the node's shared segment with halves of
 * XCHG_SHM_BYTES's default (or XCHG_SHM_BYTES, when less), so that no call grows it at the
 * default (growing it inside a call cost 0.5 to 0.8 ms: a new object, an agreement and the
 * pages again; docs/results.md, stops 57 and 65), and the pages of its first WARM_FAULTED
 * bytes a half, which each rank reads once; freeing the duplicate leaves that segment to the
 * next communicator of the same processes (shim/shm.c, the pool), the world itself or any
 * duplicate of it. The models and the type lookup run once on a call of 1 B, so that their
 * code and the MPI library's type queries are no longer cold at the program's first call, and
 * the channel's learning domain is made (shim/learn.c: 40 KiB of shapes and decisions zeroed,
 * about 40,000 instructions that the first call paid before).
 * Without it, that first call took 180 to 360 us (MPICH, 2 ranks on 2 cores; natively 12 to
 * 31), 43 to 54 of them for the channel and about 150 for the segment. Not when any process
 * has MPI_THREAD_MULTIPLE (the world's channel is not kept there), nor for a world of one rank.
 * XCHG_VERBOSE stays quiet here: the duplicate is no program's. */

/* Bytes of each half whose pages MPI_Init faults in: what an alltoall of 64 KiB blocks at 2
 * ranks touches (larger calls fault in theirs). */
#define WARM_FAULTED ((size_t)256 << 10)
/* And of the senders' alltoallv regions beyond the first, shared out between them, at least
 * WARM_REGION_LEAST each (a header and its first messages). */
#define WARM_REGIONS ((size_t)256 << 10)
#define WARM_REGION_LEAST ((size_t)16 << 10)

/* Heap pages for a first call's allocations (the MPI library's and xchg's), written once and
 * freed, so that the allocator hands them out again: without it each rank's first call faulted
 * in 10 fresh pages, 20 us at 2 ranks on the 2-core VM, where hwloc's topology load at MPI_Init
 * had left used pages behind before (it no longer runs there: shim/context.c). */
#define WARM_HEAP ((size_t)64 << 10)

static void touch_heap(void)
{
    volatile char *pages = malloc(WARM_HEAP);
    if (!pages)
        return;
    for (size_t at = 0; at < WARM_HEAP; at += 4096)
        pages[at] = 0;
    free((void *)pages);
}

void xchg_warm_first_call(void)
{
    MPI_Comm dup;
    xchg_ctx_t *ctx;
    xchg_type_t type;
    xchg_call_t call;
    xchg_params_t params;
    const int *node_of;
    int rc, size, verbose = xchg_config.verbose;

    /* thread_multiple is agreed by every process at MPI_Init (shim/interpose.c) */
    if (xchg_world_layout(&node_of, &size) != 0 || size < 2 || xchg_config.thread_multiple ||
        xchg_own_comm_dup(MPI_COMM_WORLD, &dup) != MPI_SUCCESS)
        return;
    xchg_config.verbose = 0;
    touch_heap();
    ctx = xchg_ctx_get(dup, &rc, NULL);
    if (ctx && !ctx->passthrough) {
        uint64_t one = 1;
        double began;
        /* a segment of the smallest halves for the board (shim/channel.c), then the pool's */
        if (ctx->nnodes == 1 && ctx->shm_reserve && ctx->shm_reserve(ctx, 1) == MPI_SUCCESS)
            xchg_channel_board(ctx);
        if (ctx->nnodes == 1 && ctx->shm_reserve &&
            ctx->shm_reserve(ctx, XCHG_SHM_DEFAULT) == MPI_SUCCESS) {
            /* agreed: every rank has it, or none */
            size_t region = WARM_REGIONS / (size_t)(ctx->size - 1);
            xchg_shm_prefault(ctx, WARM_FAULTED,
                              region > WARM_REGION_LEAST ? region : WARM_REGION_LEAST);
        }
        /* the channel's first allreduce may have waited for connections: its cost is not an
         * agreement's, which learning charges to its first probe; one timed agreement is */
        began = xchg_learn_clock();
        if (xchg_agree_max(ctx, &one, 1) == MPI_SUCCESS)
            xchg_channel_agreement_cost(ctx, xchg_learn_clock() - began);
        xchg_type_info(MPI_BYTE, &type);
        memset(&call, 0, sizeof call);
        call.comm_size = ctx->size;
        call.topo = &ctx->topo;
        call.block_bytes = call.max_block_bytes = 1;
        call.max_send_bytes = call.max_recv_bytes = (size_t)ctx->size;
        for (call.coll = 0; call.coll < XCHG_NCOLLS; call.coll++)
            xchg_decide(&call, &params, NULL, 0);
        xchg_shim_state(ctx); /* makes the channel's learning domain (the header above) */
    }
    xchg_config.verbose = verbose;
    PMPI_Comm_free(&dup);
}

/* A buffer the library cannot address: NULL with data and a dense type (an invalid argument;
 * MPI_BOTTOM with data always comes with a non-dense, absolute-address type). */
static int bad_buffer(const void *buf, size_t bytes, const xchg_type_t *type)
{
    return XCHG_NULL_BUFFER(buf, bytes) && type->dense;
}

/* A choice into out, whether selected now or memorised: the algorithm, and for a call that
 * learning reports (trial >= 0: a probe's call or a settled shape's watched one) its timing,
 * which starts here. */
static void take(xchg_ctx_t *ctx, const xchg_choice_t *choice, int trial, xchg_outcome_t *out)
{
    out->ctx = ctx;
    out->algo = choice->algo;
    out->params = choice->params;
    out->trial = trial;
    out->watched = trial >= 0 && xchg_learn_shape(ctx, trial)->lp.phase == XCHG_LP_SETTLED;
    if (trial >= 0)
        out->start = xchg_learn_start(ctx, trial);
}

/* The choice for a call into out; XCHG_PASS when native serves it. */
static int choose(xchg_ctx_t *ctx, const xchg_call_t *call, xchg_outcome_t *out)
{
    xchg_choice_t choice;
    int trial = -1, rc = xchg_select(ctx, call, &choice, &trial, &out->learned);
    if (rc != MPI_SUCCESS) {
        out->trial = -1; /* nothing to report */
        return rc;
    }
    take(ctx, &choice, trial, out);
    return xchg_algos[choice.algo].native ? XCHG_PASS : MPI_SUCCESS;
}

/* The send and receive types' information; with MPI_IN_PLACE the send side is the receive side.
 * MPI_ERR_TYPE for a type the MPI library must report (uncommitted). */
static int lookup_types(int in_place, MPI_Datatype sendtype, MPI_Datatype recvtype,
                        xchg_type_t *st, xchg_type_t *rt)
{
    if (xchg_type_info(recvtype, rt) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    if (in_place)
        *st = *rt;
    else if (xchg_type_info(sendtype, st) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

/* The types part of a memorised call. */
static void memo_types(xchg_memo_t *m, int in_place, MPI_Datatype sendtype,
                       MPI_Datatype recvtype, const xchg_type_t *st, const xchg_type_t *rt)
{
    m->type_gen = __atomic_load_n(&xchg_type_generation, __ATOMIC_ACQUIRE);
    m->in_place = in_place;
    m->sendtype = sendtype;
    m->recvtype = recvtype;
    m->st = *st;
    m->rt = *rt;
}

/* Memorise a call: its choice is what selection answers until a generation changes, or, for a
 * call of a learning shape, what the shape runs until xchg_learn_tick says otherwise. */
static void memo_store(xchg_ctx_t *ctx, int coll, int in_place, MPI_Count sendcount,
                       MPI_Datatype sendtype, MPI_Count recvcount, MPI_Datatype recvtype,
                       const xchg_type_t *st, const xchg_type_t *rt, const xchg_outcome_t *out)
{
    xchg_memo_t *m = &ctx->shim->memo[coll];
    memo_types(m, in_place, sendtype, recvtype, st, rt);
    m->config_gen = xchg_select_generation();
    m->epoch = ctx->shim->learning->epoch;
    m->sendcount = sendcount;
    m->recvcount = recvcount;
    m->choice.algo = out->algo;
    m->choice.params = out->params;
    m->learned = out->trial >= 0 ? out->trial : out->learned;
}

/* The memorised call of coll when its arguments and every generation are unchanged. */
static const xchg_memo_t *memo_hit(const xchg_ctx_t *ctx, int coll, int in_place,
                                   MPI_Count sendcount, MPI_Datatype sendtype,
                                   MPI_Count recvcount, MPI_Datatype recvtype)
{
    const xchg_memo_t *m;
    if (!ctx->shim)
        return NULL;
    m = &ctx->shim->memo[coll];
    if (m->config_gen != xchg_select_generation() || m->epoch != ctx->shim->learning->epoch ||
        m->type_gen != __atomic_load_n(&xchg_type_generation, __ATOMIC_ACQUIRE))
        return NULL;
    if (m->in_place != in_place || m->recvcount != recvcount || m->recvtype != recvtype)
        return NULL;
    return in_place || (m->sendcount == sendcount && m->sendtype == sendtype) ? m : NULL;
}

/* A memorised call (choice) of the shape in slot `learned` (-1: none) on a fast path: 1 to run
 * the choice (*watch: the slot to report its time to, or -1), 0 when this call selects anew.
 * Every path of a call counts it once (xchg_learn_tick), so that all ranks probe, watch and
 * learn again together. */
static int fast_tick(xchg_ctx_t *ctx, int learned, const xchg_choice_t *choice, int *watch)
{
    int tick = learned < 0 ? XCHG_TICK_ON
                           : xchg_learn_tick(ctx, learned, choice->algo, &choice->params);
    *watch = tick == XCHG_TICK_WATCH ? learned : -1;
    return tick != XCHG_TICK_RELEARN;
}

int xchg_fast_block(int coll, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, xchg_hit_t *hit)
{
    xchg_ctx_t *ctx = xchg_ctx_cached(comm);
    const xchg_memo_t *memo;

    hit->ctx = NULL;
    hit->memo = NULL;
    hit->watch = -1;
    if (!ctx || ctx->passthrough)
        return 0;
    memo = memo_hit(ctx, coll, sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcount, recvtype);
    if (!memo || !fast_tick(ctx, memo->learned, &memo->choice, &hit->watch))
        return 0; /* none, or selected anew (learning's epoch moved: no memo hits again) */
    hit->ctx = ctx;
    hit->memo = memo;
    return xchg_algos[memo->choice.algo].native && !xchg_config.stats;
}

/* ---- erroneous arguments the MPI library reports on the rank that passes them ----
 *
 * Some erroneous calls are reported by the MPI library on the rank whose own arguments are
 * wrong, while the other ranks' arguments are right (MPICH 4.0.2 and Open MPI 4.1.4 as
 * measured; tests/mpi/errors_length.c and errors_alias.c compare every case with the library):
 *   - a send size that differs from the receive size (MPI_Alltoall, MPI_Allgather, and
 *     MPI_Alltoallv's message to self): a longer one is MPI_ERR_TRUNCATE in both libraries (the
 *     copy to self, or Open MPI's argument check); a shorter one is MPI_ERR_TRUNCATE in Open
 *     MPI's MPI_Alltoall and MPI_Alltoallv, whose argument checks compare the sizes, and no
 *     error otherwise;
 *   - aliased buffers, in MPICH only (Open MPI does not check): MPI_ERR_BUFFER before any
 *     communication when, with the same count and type on both sides (count not 0), the send
 *     buffer is the receive buffer (MPI_Alltoall) or this rank's own block of it, at rank *
 *     count * size bytes (MPI_Allgather); for MPI_Alltoallv when the buffers are the same, the
 *     two count arrays are the same array and the types the same, whatever the counts.
 * Handing such a call to the MPI library on that rank alone would leave the other ranks in
 * xchg's rounds waiting for it. So the rank takes part in the call at the size the others use
 * (the receive block; its send blocks cut there or padded with zeros; with aliased buffers it
 * receives into scratch and leaves its buffer alone, as MPICH does), and the error goes through
 * the communicator's error handler after the rounds (xchg_outcome_t.deferred). Other
 * overlapping buffers, which the MPI library accepts, are served with the send side packed
 * first, so that the rounds never read what they have already written.
 */

static int size_mismatch_error(int coll, size_t send_bytes, size_t recv_bytes)
{
    if (send_bytes > recv_bytes)
        return MPI_ERR_TRUNCATE;
#ifdef OPEN_MPI
    if (send_bytes < recv_bytes && coll != XCHG_ALLGATHER)
        return MPI_ERR_TRUNCATE;
#else
    (void)coll;
#endif
    return MPI_SUCCESS;
}

/* Does the MPI library reject this call's buffers as aliased (MPICH's checks, above)? */
static int library_rejects_alias(int coll, const void *sendbuf, MPI_Count sendcount,
                                 MPI_Datatype sendtype, const void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype recvtype, int rank, size_t recv_size)
{
#ifdef MPICH
    uintptr_t own = (uintptr_t)recvbuf;
    if (sendbuf == MPI_IN_PLACE || sendcount != recvcount || sendtype != recvtype || sendcount == 0)
        return 0;
    if (coll == XCHG_ALLGATHER)
        own += (uintptr_t)rank * (uintptr_t)recvcount * (uintptr_t)recv_size;
    return (uintptr_t)sendbuf == own;
#else
    (void)coll, (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvbuf, (void)recvcount;
    (void)recvtype, (void)rank, (void)recv_size;
    return 0;
#endif
}

static int overlaps(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

/* One MPI_Alltoall or MPI_Allgather as the shim sees it: the arguments, then what block_call
 * finds out. With MPI_IN_PLACE the send side is the receive side (all of recvbuf for
 * alltoall, this rank's block of it for allgather). */
typedef struct block_args {
    int coll, in_place;
    const void *sendbuf;
    MPI_Count sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    MPI_Count recvcount;
    MPI_Datatype recvtype;
    MPI_Comm comm;
    xchg_ctx_t *ctx;
    xchg_type_t st, rt;
    size_t block;      /* bytes of every block: the receive block, the same on every rank */
    size_t send_block; /* this rank's send block as it describes it: block, unless erroneous */
    int discard;       /* receive into scratch, leave recvbuf alone (an aliased call) */
    int pack_send;     /* the send side goes through scratch (not dense, in place, another
                          size than block, or overlapping the receive buffer) */
} block_args_t;

/* This rank's own erroneous arguments (file section above) and how its send side is taken. */
static void block_checks(block_args_t *a, xchg_outcome_t *out)
{
    int p = a->ctx->size, in_own_block;
    a->send_block = (size_t)a->sendcount * a->st.size;
    if (a->send_block != a->block)
        out->deferred = size_mismatch_error(a->coll, a->send_block, a->block);
    if (library_rejects_alias(a->coll, a->in_place ? MPI_IN_PLACE : a->sendbuf, a->sendcount,
                              a->sendtype, a->recvbuf, a->recvcount, a->recvtype, a->ctx->rank,
                              a->rt.size)) {
        a->discard = 1;
        out->deferred = MPI_ERR_BUFFER;
    }
    /* the algorithms read dense user buffers in place; allgather's own block may alias its
     * place in recvbuf (MPI_IN_PLACE), nothing else may overlap what they write */
    in_own_block = a->coll == XCHG_ALLGATHER &&
                   a->sendbuf == (const char *)a->recvbuf + (size_t)a->ctx->rank * a->block;
    a->pack_send = (a->in_place && a->coll == XCHG_ALLTOALL) || !a->st.dense ||
                   a->send_block != a->block;
    if (!a->pack_send && !a->discard && a->rt.dense && !in_own_block)
        a->pack_send = overlaps(a->sendbuf, (a->coll == XCHG_ALLTOALL ? (size_t)p : 1) * a->block,
                                a->recvbuf, (size_t)p * a->block);
}

/* Steps 1 and 2 for the collectives of equal blocks: pass-through checks, types, the block
 * size, this rank's own argument errors, the context and the choice. A call with the same
 * arguments as the communicator's last one of this collective takes the memorised types and
 * choice (xchg_memo_t): only the buffers are checked anew. */
static int block_call(block_args_t *a, xchg_outcome_t *out)
{
    int rc, watch = -1;
    const xchg_memo_t *memo = out->hit.memo;
    xchg_call_t call;

    if (memo) { /* the fast path's (xchg_fast_block): a valid call's arguments, counted */
        watch = out->hit.watch;
        a->ctx = out->ctx = out->hit.ctx;
        out->mark = xchg_scratch_mark(a->ctx);
    } else {
        if (a->recvcount < 0 || a->recvtype == MPI_DATATYPE_NULL ||
            (!a->in_place && (a->sendcount < 0 || a->sendtype == MPI_DATATYPE_NULL)))
            return XCHG_PASS;
        rc = context_for(a->comm, &a->ctx, out, NULL);
        if (rc != MPI_SUCCESS)
            return rc;
        memo = memo_hit(a->ctx, a->coll, a->in_place, a->sendcount, a->sendtype, a->recvcount,
                        a->recvtype);
        if (memo && !fast_tick(a->ctx, memo->learned, &memo->choice, &watch))
            memo = NULL; /* learned again from this call on: select anew */
    }
    if (memo) {
        a->st = memo->st;
        a->rt = memo->rt;
    } else if (lookup_types(a->in_place, a->sendtype, a->recvtype, &a->st, &a->rt) !=
               MPI_SUCCESS) {
        return XCHG_PASS;
    }
    a->block = (size_t)a->recvcount * a->rt.size;
    if (a->in_place) {
        a->sendcount = a->recvcount;
        a->sendbuf = a->coll == XCHG_ALLGATHER ? (const char *)a->recvbuf +
                                                     (MPI_Aint)a->ctx->rank * a->recvcount *
                                                         a->rt.extent
                                               : a->recvbuf;
    }
    if (bad_buffer(a->recvbuf, a->block, &a->rt) ||
        bad_buffer(a->sendbuf, (size_t)a->sendcount * a->st.size, &a->st))
        return XCHG_PASS;
    block_checks(a, out);
    out->key = a->block;
    out->ctx = a->ctx;
    if (memo) {
        out->algo = memo->choice.algo;
        out->params = memo->choice.params;
        if (watch >= 0) { /* a reported call (a probe round's, or a settled shape's watched
                           * one): timed from here */
            out->trial = watch;
            out->start = xchg_learn_start(a->ctx, watch);
        }
        return xchg_algos[out->algo].native ? XCHG_PASS : MPI_SUCCESS;
    }
    memset(&call, 0, sizeof call);
    call.coll = a->coll;
    call.comm_size = a->ctx->size;
    call.topo = &a->ctx->topo;
    call.block_bytes = a->block;
    rc = choose(a->ctx, &call, out);
    if (rc == MPI_SUCCESS || rc == XCHG_PASS)
        memo_store(a->ctx, a->coll, a->in_place, a->sendcount, a->sendtype, a->recvcount,
                   a->recvtype, &a->st, &a->rt, out);
    return rc;
}

/* Step 3 for equal blocks: nblocks send blocks (block j of the user's at j * sendcount
 * elements) packed to `packed`, block j at j * block; a longer block is cut, a shorter one
 * padded with zeros (an erroneous call, block_checks). */
static int pack_blocks(block_args_t *a, int nblocks, char *packed)
{
    char *staging = packed;
    int rc = MPI_SUCCESS;

    if (a->send_block > a->block) {
        staging = xchg_scratch_push(a->ctx, a->send_block);
        if (!staging)
            return MPI_ERR_NO_MEM;
    }
    for (int j = 0; j < nblocks && rc == MPI_SUCCESS; j++) {
        char *to = packed + (size_t)j * a->block;
        rc = xchg_pack((const char *)a->sendbuf + (MPI_Aint)j * a->sendcount * a->st.extent,
                       (size_t)a->sendcount, &a->st, staging == packed ? to : staging,
                       a->ctx->comm);
        if (staging != packed)
            xchg_copy(to, staging, a->block);
        else if (a->send_block < a->block)
            memset(to + a->send_block, 0, a->block - a->send_block);
    }
    return rc;
}

/* Step 4 for equal blocks: p received blocks of block bytes -> the user's receive type. */
static int unpack_blocks(const char *recv, int p, size_t block, void *recvbuf,
                         MPI_Count recvcount, const xchg_type_t *rt, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    for (int j = 0; j < p && rc == MPI_SUCCESS; j++)
        rc = xchg_unpack(recv + (size_t)j * block, (size_t)recvcount, rt,
                         (char *)recvbuf + (MPI_Aint)j * recvcount * rt->extent, comm);
    return rc;
}

/* Where the algorithm receives: the user's buffer when dense, else (or when the buffer is to
 * be left alone) scratch. */
static char *receive_side(block_args_t *a)
{
    if (a->rt.dense && !a->discard)
        return a->recvbuf;
    return xchg_scratch_push(a->ctx, (size_t)a->ctx->size * a->block);
}

int xchg_do_alltoall(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     xchg_outcome_t *out)
{
    block_args_t a = {.coll = XCHG_ALLTOALL, .in_place = sendbuf == MPI_IN_PLACE,
                      .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                      .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype,
                      .comm = comm};
    int rc = block_call(&a, out), p;
    const char *send = a.sendbuf;
    char *recv;

    if (rc != MPI_SUCCESS || a.block == 0)
        return rc;
    p = a.ctx->size;

    /* send blocks: in place, or packed (always a copy when MPI_IN_PLACE) */
    if (a.pack_send) {
        char *packed = xchg_scratch_push(a.ctx, (size_t)p * a.block);
        if (!packed)
            return MPI_ERR_NO_MEM;
        rc = pack_blocks(&a, p, packed);
        if (rc != MPI_SUCCESS)
            return rc;
        send = packed;
    }
    recv = receive_side(&a);
    if (!recv)
        return MPI_ERR_NO_MEM;
    rc = xchg_algo_impl(out->algo)->alltoall(a.ctx, send, recv, a.block, &out->params);
    if (rc != MPI_SUCCESS || recv == recvbuf || a.discard)
        return rc;
    return unpack_blocks(recv, p, a.block, recvbuf, recvcount, &a.rt, a.ctx->comm);
}

int xchg_do_allgather(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      xchg_outcome_t *out)
{
    block_args_t a = {.coll = XCHG_ALLGATHER, .in_place = sendbuf == MPI_IN_PLACE,
                      .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                      .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype,
                      .comm = comm};
    int rc = block_call(&a, out), p;
    const char *send = a.sendbuf;
    char *recv;

    if (rc != MPI_SUCCESS || a.block == 0)
        return rc;
    p = a.ctx->size;

    recv = receive_side(&a);
    if (!recv)
        return MPI_ERR_NO_MEM;
    /* own block: straight from the user (dense, possibly in place), else packed (into its
     * place when receiving into scratch) */
    if (a.pack_send) {
        char *packed = recv != recvbuf ? recv + (size_t)a.ctx->rank * a.block
                                       : xchg_scratch_push(a.ctx, a.block);
        if (!packed)
            return MPI_ERR_NO_MEM;
        rc = pack_blocks(&a, 1, packed);
        if (rc != MPI_SUCCESS)
            return rc;
        send = packed;
    }
    rc = xchg_algo_impl(out->algo)->allgather(a.ctx, send, recv, a.block, &out->params);
    if (rc != MPI_SUCCESS || recv == recvbuf || a.discard)
        return rc;
    return unpack_blocks(recv, p, a.block, recvbuf, recvcount, &a.rt, a.ctx->comm);
}

static MPI_Count count_at(xchg_counts_t counts, int j)
{
    return counts.i ? counts.i[j] : counts.c[j];
}

static MPI_Aint displ_at(xchg_counts_t displs, int j)
{
    return displs.i ? displs.i[j] : displs.a[j];
}

/* Byte sizes and offsets of one side of an alltoallv. Dense types are addressed in the user's
 * buffer, relative to *base, which moves down to the lowest displacement so that offsets are
 * never negative; other types are packed one after another. */
static void side_layout(int p, xchg_counts_t counts, xchg_counts_t displs, const xchg_type_t *t,
                        size_t *bytes, size_t *offs, MPI_Aint *base_shift, size_t *total)
{
    MPI_Aint lowest = 0;
    *total = 0;
    for (int j = 0; j < p; j++) {
        bytes[j] = (size_t)count_at(counts, j) * t->size;
        if (t->dense && bytes[j] > 0 && displ_at(displs, j) * t->extent < lowest)
            lowest = displ_at(displs, j) * t->extent;
    }
    for (int j = 0; j < p; j++) {
        offs[j] = t->dense ? (size_t)(displ_at(displs, j) * t->extent - lowest) : *total;
        if (bytes[j] == 0 && t->dense)
            offs[j] = 0;
        *total += bytes[j];
    }
    *base_shift = t->dense ? lowest : 0;
}

/* Invalid alltoallv arguments that go to the MPI library (before any communication). */
static int v_invalid(int in_place, MPI_Datatype sendtype, MPI_Datatype recvtype,
                     xchg_counts_t sendcounts, xchg_counts_t sdispls, xchg_counts_t recvcounts,
                     xchg_counts_t rdispls)
{
    if (recvtype == MPI_DATATYPE_NULL || (!in_place && sendtype == MPI_DATATYPE_NULL))
        return 1;
    if ((!recvcounts.i && !recvcounts.c) || (!rdispls.i && !rdispls.a))
        return 1;
    return !in_place && ((!sendcounts.i && !sendcounts.c) || (!sdispls.i && !sdispls.a));
}

static void v_shape(xchg_call_t *call, const xchg_ctx_t *ctx, const uint64_t stats[3])
{
    memset(call, 0, sizeof *call);
    call->coll = XCHG_ALLTOALLV;
    call->comm_size = ctx->size;
    call->topo = &ctx->topo;
    call->max_send_bytes = stats[0];
    call->max_recv_bytes = stats[1];
    call->max_block_bytes = stats[2];
    call->block_bytes = xchg_size_key(call);
}

/* How many calls the carried statistics decide before they must be agreed again. */
static int max_age(const xchg_shim_state_t *state)
{
    return state->carried_max_age > 0 ? state->carried_max_age : CARRY_MAX_AGE;
}

/* Whether the memorised choice of the carried statistics (xchg_shim_state_t.vmemo) stands:
 * neither the configuration, nor learning's epoch, nor the statistics changed since it was made. */
static int v_memo_valid(const xchg_shim_state_t *state)
{
    return state->vmemo.config_gen == xchg_select_generation() &&
           state->vmemo.epoch == state->learning->epoch &&
           state->vmemo.version == state->carried_version;
}

/* The memorised choice into out when it stands and learning's step of this call runs it (the
 * call counted by its shape as a selection would count it, fast_tick): 1; else 0, and the call
 * selects anew. */
static int v_memo_hit(xchg_ctx_t *ctx, xchg_shim_state_t *state, xchg_outcome_t *out)
{
    int watch = -1;
    if (!v_memo_valid(state) ||
        !fast_tick(ctx, state->vmemo.learned, &state->vmemo.choice, &watch))
        return 0;
    out->learned = state->vmemo.learned;
    take(ctx, &state->vmemo.choice, watch, out);
    return 1;
}

/* The choice of an alltoallv before its own statistics are known (file header): a forced
 * algorithm that needs no agreed values, or what the carried statistics choose when that needs
 * none. A forced spec that leaves keys to the models (XCHG_ALLTOALLV=node: its leaders and k)
 * needs them: the models complete the keys from the call's shape, which must be agreed, as
 * auto's choices are. Without them every call ran what the models give an empty call: node
 * with one step at a time, 224 us a call of 1 B where k = 5 took 159 (emulated cluster of
 * 4,1,1,1,1 ranks at 1 Gbit/s, Open MPI, xchg-bench). *decided is 1 when *out holds the final choice (*carry: it carries this call's
 * statistics), 0 when this call's statistics must be agreed first (v_agree). */
static int v_predict(xchg_ctx_t *ctx, xchg_call_t *call, xchg_outcome_t *out, int *carry,
                     int *decided)
{
    xchg_shim_state_t *state = xchg_shim_state(ctx);
    int forced = xchg_config.forced[XCHG_ALLTOALLV], rc, memorised;
    static const uint64_t none[3] = {0, 0, 0};

    *carry = 0;
    *decided = 0;
    if (!state)
        return MPI_ERR_NO_MEM;
    if (forced != XCHG_AUTO && xchg_algos[forced].no_agreement &&
        !xchg_params_open(&xchg_algos[forced], &xchg_config.forced_params[XCHG_ALLTOALLV])) {
        v_shape(call, ctx, none); /* the shape is read by nothing but the statistics */
        rc = choose(ctx, call, out);
        if ((rc != MPI_SUCCESS && rc != XCHG_PASS) || out->algo == forced) {
            *decided = 1;
            return rc;
        }
        /* the forced algorithm cannot serve the call (its predicate reads no statistics, so
         * that is so on every rank): what replaces it is chosen from agreed values */
        return MPI_SUCCESS;
    }
    if (!state->carried_valid)
        return MPI_SUCCESS;
    v_shape(call, ctx, state->carried);
    memorised = v_memo_hit(ctx, state, out);
    rc = memorised ? (xchg_algos[out->algo].native ? XCHG_PASS : MPI_SUCCESS)
                   : choose(ctx, call, out);
    if (rc != MPI_SUCCESS && rc != XCHG_PASS)
        return rc;
    if (!xchg_algos[out->algo].no_agreement) {
        /* twophase: it needs this call's values, and selection runs again after the agreement;
         * a learning step taken here is that selection's */
        if (out->trial >= 0)
            xchg_learn_unpick(ctx, out->trial);
        out->trial = -1;
        return MPI_SUCCESS;
    }
    *decided = 1;
    /* a watched call carries: its own statistics tell whether it was the shape it was
     * decided as (xchg_do_alltoallv) */
    *carry = !xchg_algos[out->algo].native &&
             (xchg_algos[out->algo].shared_memory || state->carried_age + 1 >= CARRY_EVERY ||
              out->watched);
    if (!memorised) {
        /* final: the fast paths may take it again (a probe's next calls too) */
        state->vmemo.config_gen = xchg_select_generation();
        state->vmemo.epoch = state->learning->epoch;
        state->vmemo.version = state->carried_version;
        state->vmemo.learned = out->trial >= 0 ? out->trial : out->learned;
        state->vmemo.choice.algo = out->algo;
        state->vmemo.choice.params = out->params;
    }
    if (!*carry && ++state->carried_age >= max_age(state))
        state->carried_valid = 0;
    return rc;
}

int xchg_fast_native_v(MPI_Comm comm, int *watch)
{
    xchg_ctx_t *ctx = xchg_ctx_cached(comm);
    xchg_shim_state_t *state;
    int forced = xchg_config.forced[XCHG_ALLTOALLV];

    if (!ctx || xchg_config.stats || ctx->passthrough || !ctx->shim)
        return 0;
    if (forced != XCHG_AUTO)
        return xchg_algos[forced].native;
    state = ctx->shim;
    if (!state->carried_valid || !v_memo_valid(state) ||
        !xchg_algos[state->vmemo.choice.algo].native)
        return 0;
    /* what v_predict would do: count the learned shape's call, age the statistics */
    if (!fast_tick(ctx, state->vmemo.learned, &state->vmemo.choice, watch))
        return 0;
    if (++state->carried_age >= max_age(state))
        state->carried_valid = 0;
    return 1;
}

/* An alltoallv's arguments, for its statistics before its context exists (v_early). */
typedef struct v_args {
    int in_place;
    MPI_Datatype sendtype, recvtype;
    xchg_counts_t sendcounts, recvcounts;
} v_args_t;

/* xchg_early_t.fill at a communicator's first alltoallv: this call's statistics as v_layout
 * gives them, agreed as the context attaches (shim/context.c); 0 where the call will not reach
 * v_layout (a type it cannot look up, a negative count): then it agrees them as any call does. */
static int v_early(void *arg, int p, uint64_t stats[3])
{
    const v_args_t *a = arg;
    xchg_type_t st, rt;

    if (lookup_types(a->in_place, a->sendtype, a->recvtype, &st, &rt) != MPI_SUCCESS)
        return 0;
    memset(stats, 0, 3 * sizeof *stats);
    for (int j = 0; j < p; j++) {
        MPI_Count sent = count_at(a->sendcounts, j), received = count_at(a->recvcounts, j);
        uint64_t out, in;
        if (sent < 0 || received < 0)
            return 0;
        out = (uint64_t)sent * st.size;
        in = (uint64_t)received * rt.size;
        stats[0] += out;
        stats[1] += in;
        stats[2] = out > stats[2] ? out : stats[2];
        stats[2] = in > stats[2] ? in : stats[2];
    }
    return 1;
}

/* The agreement round: this call's statistics agreed (or the early ones, agreed as its context
 * attached: NULL when none), carried for the next call, chosen on. XCHG_STRICT=1 (the tests)
 * agrees them anyway and fails a call (MPI_ERR_INTERN) whose early values differ. */
static int v_agree(xchg_ctx_t *ctx, const uint64_t local[3], const uint64_t *early,
                   xchg_call_t *call, xchg_outcome_t *out)
{
    xchg_shim_state_t *state = ctx->shim;
    uint64_t agreed[3];
    int rc = MPI_SUCCESS;

    memcpy(agreed, local, sizeof agreed);
    if (!early || xchg_config.strict)
        rc = xchg_agree_max(ctx, agreed, 3);
    if (rc != MPI_SUCCESS)
        return rc;
    if (early && memcmp(agreed, early, sizeof agreed) != 0 && xchg_config.strict) {
        fprintf(stderr,
                "xchg: strict: alltoallv statistics agreed at the attach %llu %llu %llu where an "
                "agreement gives %llu %llu %llu (rank %d of %d)\n",
                (unsigned long long)early[0], (unsigned long long)early[1],
                (unsigned long long)early[2], (unsigned long long)agreed[0],
                (unsigned long long)agreed[1], (unsigned long long)agreed[2], ctx->rank, ctx->size);
        return MPI_ERR_INTERN;
    }
    if (early)
        memcpy(agreed, early, sizeof agreed);
    /* unchanged since the last statistics: refresh them half as often (agreed values, so
     * every rank's interval is the same) */
    if (state->carried_valid_once && memcmp(state->carried, agreed, sizeof agreed) == 0)
        state->carried_max_age = max_age(state) * 2 > CARRY_AGE_LIMIT ? CARRY_AGE_LIMIT
                                                                       : max_age(state) * 2;
    else
        state->carried_max_age = CARRY_MAX_AGE;
    state->carried_valid_once = 1;
    memcpy(state->carried, agreed, sizeof agreed);
    state->carried_valid = 1;
    state->carried_age = 0;
    state->carried_version++;
    v_shape(call, ctx, agreed);
    return choose(ctx, call, out);
}

/* The types of an alltoallv, from the last call's when they are the same handles and no type
 * was freed since; else looked up and remembered. */
static int v_types(xchg_ctx_t *ctx, int in_place, MPI_Datatype sendtype, MPI_Datatype recvtype,
                   xchg_type_t *st, xchg_type_t *rt)
{
    xchg_memo_t *m = &ctx->shim->vtypes;
    unsigned type_gen = __atomic_load_n(&xchg_type_generation, __ATOMIC_ACQUIRE);
    if (m->type_gen == type_gen && m->in_place == in_place && m->recvtype == recvtype &&
        (in_place || m->sendtype == sendtype)) {
        *st = m->st;
        *rt = m->rt;
        return MPI_SUCCESS;
    }
    if (lookup_types(in_place, sendtype, recvtype, st, rt) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    memo_types(m, in_place, sendtype, recvtype, st, rt);
    return MPI_SUCCESS;
}

/* Send side: the user's buffer when dense, else (and always with MPI_IN_PLACE) packed. */
static int v_pack(xchg_ctx_t *ctx, const void *from, xchg_counts_t counts, xchg_counts_t displs,
                  const xchg_type_t *st, size_t total, size_t *sendoffs, const char **send)
{
    char *packed = xchg_scratch_push(ctx, total);
    size_t at = 0;
    if (!packed)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < ctx->size; j++) {
        size_t n = (size_t)count_at(counts, j);
        int rc = xchg_pack((const char *)from + displ_at(displs, j) * st->extent, n, st,
                           packed + at, ctx->comm);
        if (rc != MPI_SUCCESS)
            return rc;
        sendoffs[j] = at;
        at += n * st->size;
    }
    *send = packed;
    return MPI_SUCCESS;
}

/* The byte layout of both sides of one alltoallv (side_layout) and this rank's statistics. */
typedef struct v_layout {
    size_t *sendbytes, *sendoffs, *recvbytes, *recvoffs; /* [p] each, on the scratch stack */
    size_t send_total, recv_total;
    MPI_Aint send_shift, recv_shift;
    uint64_t stats[3]; /* bytes sent, bytes received, largest single message */
    int pack_send;     /* the send side overlaps the receive buffer: packed first */
    int discard;       /* receive into scratch and leave recvbuf alone (an aliased call) */
    int carried;       /* v_run: the call carried its statistics (agreed) */
} v_layout_t;

static int v_layout(xchg_ctx_t *ctx, xchg_counts_t sendcounts, xchg_counts_t sdispls,
                    const xchg_type_t *st, xchg_counts_t recvcounts, xchg_counts_t rdispls,
                    const xchg_type_t *rt, v_layout_t *l)
{
    int p = ctx->size;
    size_t largest = 0;

    memset(l, 0, sizeof *l);
    l->sendbytes = xchg_scratch_push(ctx, 4 * (size_t)p * sizeof(size_t));
    if (!l->sendbytes)
        return MPI_ERR_NO_MEM;
    l->sendoffs = l->sendbytes + p;
    l->recvbytes = l->sendoffs + p;
    l->recvoffs = l->recvbytes + p;
    side_layout(p, sendcounts, sdispls, st, l->sendbytes, l->sendoffs, &l->send_shift,
                &l->send_total);
    side_layout(p, recvcounts, rdispls, rt, l->recvbytes, l->recvoffs, &l->recv_shift,
                &l->recv_total);
    for (int j = 0; j < p; j++) {
        largest = l->sendbytes[j] > largest ? l->sendbytes[j] : largest;
        largest = l->recvbytes[j] > largest ? l->recvbytes[j] : largest;
    }
    l->stats[0] = l->send_total;
    l->stats[1] = l->recv_total;
    l->stats[2] = largest;
    return MPI_SUCCESS;
}

/* The bytes [0, span) past buf + shift that one side's dense blocks occupy. */
static size_t side_span(int p, const size_t *bytes, const size_t *offs)
{
    size_t span = 0;
    for (int j = 0; j < p; j++)
        if (bytes[j] > 0 && offs[j] + bytes[j] > span)
            span = offs[j] + bytes[j];
    return span;
}

/* This rank's own erroneous arguments (the section before block_args_t): the message to self
 * of another size than it receives (cut to the shorter; the library's error deferred), aliased
 * buffers that MPICH rejects (received into scratch, MPI_ERR_BUFFER deferred: then the receive
 * side is laid out packed), or other dense buffers that overlap (the send side packed first). */
static void v_checks(xchg_ctx_t *ctx, const void *sendbuf, xchg_counts_t sendcounts,
                     MPI_Datatype sendtype, const void *recvbuf, xchg_counts_t recvcounts,
                     MPI_Datatype recvtype, const xchg_type_t *rt, v_layout_t *l,
                     xchg_outcome_t *out)
{
    int p = ctx->size, rank = ctx->rank;
    size_t *mine_s = &l->sendbytes[rank], *mine_r = &l->recvbytes[rank];

    if (*mine_s != *mine_r) {
        out->deferred = size_mismatch_error(XCHG_ALLTOALLV, *mine_s, *mine_r);
        *mine_s = *mine_r = *mine_s < *mine_r ? *mine_s : *mine_r;
    }
#ifdef MPICH
    if (sendbuf != MPI_IN_PLACE && sendbuf == recvbuf && sendtype == recvtype &&
        sendcounts.i == recvcounts.i && sendcounts.c == recvcounts.c) {
        l->recv_total = 0; /* packed in scratch, one block after another */
        for (int j = 0; j < p; j++) {
            l->recvoffs[j] = l->recv_total;
            l->recv_total += l->recvbytes[j];
        }
        l->discard = 1;
        out->deferred = MPI_ERR_BUFFER;
        return;
    }
#else
    (void)sendcounts, (void)sendtype, (void)recvcounts, (void)recvtype;
#endif
    if (sendbuf != MPI_IN_PLACE && rt->dense)
        l->pack_send = overlaps((const char *)sendbuf + l->send_shift,
                                side_span(p, l->sendbytes, l->sendoffs),
                                (const char *)recvbuf + l->recv_shift,
                                side_span(p, l->recvbytes, l->recvoffs));
}

/* XCHG_STRICT=1 (the tests): what an algorithm carried must be what an agreement on this
 * call's own statistics gives; a difference is reported and fails the call (MPI_ERR_INTERN).
 * The ranks that carried check: carry->done is alike on every rank, except after an error
 * other than MPI_ERR_TRUNCATE, which a test under XCHG_STRICT does not make. */
static int v_check_carried(xchg_ctx_t *ctx, const v_layout_t *l, const xchg_carry_t *carry)
{
    uint64_t agreed[3];
    int rc;

    memcpy(agreed, l->stats, sizeof agreed);
    rc = xchg_agree_max(ctx, agreed, 3);
    if (rc == MPI_SUCCESS && memcmp(agreed, carry->agreed, sizeof agreed) != 0) {
        fprintf(stderr,
                "xchg: strict: alltoallv carried statistics %llu %llu %llu where an agreement "
                "gives %llu %llu %llu (rank %d of %d)\n",
                (unsigned long long)carry->agreed[0], (unsigned long long)carry->agreed[1],
                (unsigned long long)carry->agreed[2], (unsigned long long)agreed[0],
                (unsigned long long)agreed[1], (unsigned long long)agreed[2], ctx->rank,
                ctx->size);
        rc = MPI_ERR_INTERN;
    }
    return rc;
}

/* Pack what needs packing, run the chosen algorithm, keep what it carried, unpack. */
static int v_run(xchg_ctx_t *ctx, const void *sendbuf, xchg_counts_t sendcounts,
                 xchg_counts_t sdispls, const xchg_type_t *st, void *recvbuf,
                 xchg_counts_t recvcounts, xchg_counts_t rdispls, const xchg_type_t *rt,
                 v_layout_t *l, const xchg_call_t *call, xchg_outcome_t *out, int carrying)
{
    int in_place = sendbuf == MPI_IN_PLACE, rc;
    xchg_carry_t carry = {{0}, {0}, 0};
    const char *send = (const char *)sendbuf + l->send_shift;
    char *recv = (char *)recvbuf + l->recv_shift;

    memcpy(carry.mine, l->stats, sizeof carry.mine);
    if (in_place || !st->dense || l->pack_send) {
        rc = v_pack(ctx, in_place ? recvbuf : sendbuf, sendcounts, sdispls, st, l->send_total,
                    l->sendoffs, &send);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (!rt->dense || l->discard) {
        recv = xchg_scratch_push(ctx, l->recv_total);
        if (!recv)
            return MPI_ERR_NO_MEM;
    }
    rc = xchg_algo_impl(out->algo)->alltoallv(ctx, send, l->sendbytes, l->sendoffs, recv,
                                              l->recvbytes, l->recvoffs, call, &out->params,
                                              carrying ? &carry : NULL);
    /* carried statistics are kept even from a call that failed on this rank (a truncated
     * message of an erroneous program): the other ranks keep theirs, and the next call must be
     * decided alike everywhere */
    if (carry.done && xchg_config.strict) {
        int checked = v_check_carried(ctx, l, &carry);
        if (rc == MPI_SUCCESS)
            rc = checked;
    }
    if (carry.done) {
        /* a version only for new values: shm carries in every call, and the memorised choice
         * (vmemo) stands while they stay */
        if (memcmp(ctx->shim->carried, carry.agreed, sizeof carry.agreed) != 0) {
            memcpy(ctx->shim->carried, carry.agreed, sizeof carry.agreed);
            ctx->shim->carried_version++;
        }
        ctx->shim->carried_age = 0;
        l->carried = 1;
    } else if (carrying && ++ctx->shim->carried_age >= max_age(ctx->shim)) {
        ctx->shim->carried_valid = 0; /* asked to carry, it could not: the statistics age */
    }
    if (rc != MPI_SUCCESS)
        return rc;
    for (int j = 0; j < ctx->size && rc == MPI_SUCCESS && !rt->dense && !l->discard; j++)
        rc = xchg_unpack(recv + l->recvoffs[j], (size_t)count_at(recvcounts, j), rt,
                         (char *)recvbuf + displ_at(rdispls, j) * rt->extent, ctx->comm);
    return rc;
}

/* A watched call decided from carried statistics (learning's watch, shim/learn.c): was it the
 * call shape it was decided as? Only its own carried statistics (agreed: the same verdict on
 * every rank) can tell; without them, no. A call decided after an agreement is its shape. */
static int v_was_shape(xchg_ctx_t *ctx, const xchg_outcome_t *out, int carried)
{
    const xchg_shape_t *t = xchg_learn_shape(ctx, out->trial);
    xchg_call_t own;
    if (!carried)
        return 0; /* it carried nothing */
    v_shape(&own, ctx, ctx->shim->carried);
    return xchg_bucket(own.block_bytes) == t->bucket && xchg_skew_class(&own) == t->skew;
}

int xchg_do_alltoallv(const void *sendbuf, xchg_counts_t sendcounts, xchg_counts_t sdispls,
                      MPI_Datatype sendtype, void *recvbuf, xchg_counts_t recvcounts,
                      xchg_counts_t rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                      xchg_outcome_t *out)
{
    xchg_type_t st, rt;
    xchg_ctx_t *ctx;
    xchg_call_t call;
    v_layout_t l;
    int in_place = sendbuf == MPI_IN_PLACE, rc, carrying, decided;
    v_args_t args = {in_place, sendtype, recvtype, in_place ? recvcounts : sendcounts, recvcounts};
    xchg_early_t early = {v_early, &args, {0}, 0};

    /* step 1: what goes to the MPI library; the choice when it needs no statistics of this
     * call (then native needs nothing more from xchg) */
    if (v_invalid(in_place, sendtype, recvtype, sendcounts, sdispls, recvcounts, rdispls))
        return XCHG_PASS;
    rc = context_for(comm, &ctx, out, &early);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = v_predict(ctx, &call, out, &carrying, &decided);
    if (rc != MPI_SUCCESS && rc != XCHG_PASS)
        return rc;
    out->key = call.block_bytes;
    if (decided && rc == XCHG_PASS && !xchg_config.stats)
        return XCHG_PASS;
    if (v_types(ctx, in_place, sendtype, recvtype, &st, &rt) != MPI_SUCCESS)
        return XCHG_PASS;
    if (in_place) {
        sendcounts = recvcounts;
        sdispls = rdispls;
    }
    for (int j = 0; j < ctx->size; j++)
        if (count_at(sendcounts, j) < 0 || count_at(recvcounts, j) < 0)
            return XCHG_PASS;

    /* step 2: byte layout, this call's statistics, the choice when it needs them */
    if (v_layout(ctx, sendcounts, sdispls, &st, recvcounts, rdispls, &rt, &l) != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    /* rc is still the choice: XCHG_PASS when native serves the call */
    if (!decided) {
        rc = v_agree(ctx, l.stats, early.agreed ? early.vals : NULL, &call, out);
        out->key = call.block_bytes;
    } else if (xchg_config.forced[XCHG_ALLTOALLV] != XCHG_AUTO) {
        v_shape(&call, ctx, l.stats); /* forced: the statistics show this rank's own values */
        out->key = call.block_bytes;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    if ((!in_place && bad_buffer(sendbuf, l.send_total, &st)) ||
        bad_buffer(recvbuf, l.recv_total, &rt))
        return XCHG_PASS;

    v_checks(ctx, sendbuf, sendcounts, sendtype, recvbuf, recvcounts, recvtype, &rt, &l, out);

    /* steps 3 and 4: pack, run, unpack */
    rc = v_run(ctx, sendbuf, sendcounts, sdispls, &st, recvbuf, recvcounts, rdispls, &rt, &l,
               &call, out, carrying);
    /* not on this rank's rc: a call that failed here (MPI_ERR_TRUNCATE) still reports its time
     * to the agreement that the other ranks' calls of the shape reach (finish) */
    if (out->watched && decided && !v_was_shape(ctx, out, l.carried))
        out->trial = -1; /* decided from older statistics than its own: not the shape's time */
    return rc;
}

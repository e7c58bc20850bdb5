/*
 * normalize.c: user arguments -> contiguous byte blocks -> an algorithm -> user buffers.
 *
 * For each collective:
 *   1. cases the library does not handle go to the MPI library unchanged (XCHG_PASS):
 *      XCHG_DISABLE, MPI_COMM_NULL, intercommunicators, and invalid arguments (negative
 *      counts, MPI_DATATYPE_NULL, uncommitted types, NULL buffers with data (MPI_BOTTOM
 *      included), mismatched send/receive sizes), so
 *      that the MPI library reports them exactly as it would without xchg;
 *   2. the context of the communicator (shim/context.c) and the algorithm (shim/select.c);
 *   3. send data: used in place when the send type is dense, else packed into scratch; with
 *      MPI_IN_PLACE it is taken from the receive buffer (sendcount and sendtype ignored);
 *   4. receive data: written straight into the user's buffer when the receive type is dense,
 *      else into scratch and unpacked, which writes only the bytes of the receive type map.
 *
 * Scratch layout (slots of the context, reused across calls):
 *   SHIM_SEND  packed send blocks, block j at j * block_bytes (alltoallv: at sendoffs[j])
 *   SHIM_RECV  received blocks before unpacking, same layout
 *   SHIM_META  alltoallv: sendbytes[p] sendoffs[p] recvbytes[p] recvoffs[p] (size_t each)
 */
#include <string.h>

#include "normalize.h"

static int pass_through(MPI_Comm comm)
{
    int inter = 0;
    if (!xchg_config.loaded)
        xchg_config_load();
    if (xchg_config.disable || comm == MPI_COMM_NULL)
        return 1;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return 1;
    return 0;
}

static int type_ok(MPI_Datatype type)
{
    return type != MPI_DATATYPE_NULL;
}

/* Context and choice for a call; XCHG_PASS when native serves it. */
static int choose(MPI_Comm comm, const xchg_call_t *call, xchg_ctx_t **ctx, int *algo,
                  xchg_params_t *params)
{
    int rc;
    *ctx = xchg_ctx_get(comm, &rc);
    if (!*ctx)
        return rc;
    rc = xchg_select(*ctx, call, algo, params);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!xchg_algos[*algo].alltoall && !xchg_algos[*algo].allgather &&
        !xchg_algos[*algo].alltoallv)
        return XCHG_PASS;
    return MPI_SUCCESS;
}

/* Steps 1 and 2 for the collectives of equal blocks: pass-through checks, types, the block
 * size, the context and the choice. With MPI_IN_PLACE the send side becomes the receive side:
 * all of recvbuf for alltoall, this rank's block of it for allgather. */
static int block_call(int coll, const void **sendbuf, MPI_Count *sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      xchg_type_t *st, xchg_type_t *rt, size_t *block, xchg_ctx_t **ctx,
                      xchg_outcome_t *out)
{
    int in_place = *sendbuf == MPI_IN_PLACE, p, rank;
    xchg_call_t call;

    out->algo = -1;
    if (pass_through(comm))
        return XCHG_PASS;
    if (recvcount < 0 || !type_ok(recvtype) ||
        (!in_place && (*sendcount < 0 || !type_ok(sendtype))))
        return XCHG_PASS;
    if (xchg_type_info(recvtype, rt) != MPI_SUCCESS)
        return XCHG_PASS;
    PMPI_Comm_size(comm, &p);
    PMPI_Comm_rank(comm, &rank);
    if (in_place) {
        *st = *rt;
        *sendcount = recvcount;
        *sendbuf = coll == XCHG_ALLGATHER
                       ? (const char *)recvbuf + (MPI_Aint)rank * recvcount * rt->extent
                       : recvbuf;
    } else if (xchg_type_info(sendtype, st) != MPI_SUCCESS) {
        return XCHG_PASS;
    }
    *block = (size_t)recvcount * rt->size;
    if ((size_t)*sendcount * st->size != *block)
        return XCHG_PASS;
    if (XCHG_NULL_BUFFER(recvbuf, *block) || XCHG_NULL_BUFFER(*sendbuf, *block))
        return XCHG_PASS;
    memset(&call, 0, sizeof call);
    call.coll = coll;
    call.comm_size = p;
    call.block_bytes = *block;
    out->key = *block;
    return choose(comm, &call, ctx, &out->algo, &out->params);
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

int xchg_do_alltoall(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     xchg_outcome_t *out)
{
    xchg_type_t st, rt;
    xchg_ctx_t *ctx;
    int in_place = sendbuf == MPI_IN_PLACE, rc, p;
    const char *send;
    char *recv, *packed;
    size_t block;

    rc = block_call(XCHG_ALLTOALL, &sendbuf, &sendcount, sendtype, recvbuf, recvcount, recvtype,
                    comm, &st, &rt, &block, &ctx, out);
    if (rc != MPI_SUCCESS || block == 0)
        return rc;
    p = ctx->size;

    /* send blocks: in place, or packed (always a copy when MPI_IN_PLACE) */
    send = sendbuf;
    if (in_place || !st.dense) {
        packed = xchg_scratch(ctx, XCHG_SCRATCH_SHIM_SEND, (size_t)p * block);
        if (!packed)
            return MPI_ERR_NO_MEM;
        for (int j = 0; j < p; j++) {
            rc = xchg_pack((const char *)sendbuf + (MPI_Aint)j * sendcount * st.extent,
                           (size_t)sendcount, &st, packed + (size_t)j * block, ctx->comm);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        send = packed;
    }
    recv = recvbuf;
    if (!rt.dense) {
        recv = xchg_scratch(ctx, XCHG_SCRATCH_SHIM_RECV, (size_t)p * block);
        if (!recv)
            return MPI_ERR_NO_MEM;
    }
    rc = xchg_algos[out->algo].alltoall(ctx, send, recv, block, &out->params);
    if (rc != MPI_SUCCESS || rt.dense)
        return rc;
    return unpack_blocks(recv, p, block, recvbuf, recvcount, &rt, ctx->comm);
}

int xchg_do_allgather(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      xchg_outcome_t *out)
{
    xchg_type_t st, rt;
    xchg_ctx_t *ctx;
    int rc, p, rank;
    const char *send;
    char *recv;
    size_t block;

    rc = block_call(XCHG_ALLGATHER, &sendbuf, &sendcount, sendtype, recvbuf, recvcount, recvtype,
                    comm, &st, &rt, &block, &ctx, out);
    if (rc != MPI_SUCCESS || block == 0)
        return rc;
    p = ctx->size;
    rank = ctx->rank;

    recv = rt.dense ? recvbuf : xchg_scratch(ctx, XCHG_SCRATCH_SHIM_RECV, (size_t)p * block);
    if (!recv)
        return MPI_ERR_NO_MEM;
    /* own block: straight from the user (dense, possibly in place), else packed */
    send = sendbuf;
    if (!st.dense) {
        char *packed = rt.dense ? xchg_scratch(ctx, XCHG_SCRATCH_SHIM_SEND, block)
                                : recv + (size_t)rank * block;
        if (!packed)
            return MPI_ERR_NO_MEM;
        rc = xchg_pack(sendbuf, (size_t)sendcount, &st, packed, ctx->comm);
        if (rc != MPI_SUCCESS)
            return rc;
        send = packed;
    }
    rc = xchg_algos[out->algo].allgather(ctx, send, recv, block, &out->params);
    if (rc != MPI_SUCCESS || rt.dense)
        return rc;
    return unpack_blocks(recv, p, block, recvbuf, recvcount, &rt, ctx->comm);
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

int xchg_do_alltoallv(const void *sendbuf, xchg_counts_t sendcounts, xchg_counts_t sdispls,
                      MPI_Datatype sendtype, void *recvbuf, xchg_counts_t recvcounts,
                      xchg_counts_t rdispls, MPI_Datatype recvtype, MPI_Comm comm, xchg_outcome_t *out)
{
    int *algo = &out->algo;
    size_t *key = &out->key;
    xchg_params_t *params = &out->params;
    xchg_type_t st, rt;
    xchg_ctx_t *ctx;
    xchg_call_t call;
    int in_place = sendbuf == MPI_IN_PLACE, rc, p;
    size_t *sendbytes, *sendoffs, *recvbytes, *recvoffs, send_total, recv_total, largest = 0;
    MPI_Aint send_shift, recv_shift;
    const char *send;
    char *recv;

    *algo = -1;
    if (pass_through(comm))
        return XCHG_PASS;
    if (!type_ok(recvtype) || (!in_place && !type_ok(sendtype)))
        return XCHG_PASS;
    if ((!recvcounts.i && !recvcounts.c) || (!rdispls.i && !rdispls.a) ||
        (!in_place && ((!sendcounts.i && !sendcounts.c) || (!sdispls.i && !sdispls.a))))
        return XCHG_PASS;
    if (xchg_type_info(recvtype, &rt) != MPI_SUCCESS)
        return XCHG_PASS;
    if (in_place) {
        st = rt;
        sendcounts = recvcounts;
        sdispls = rdispls;
    } else if (xchg_type_info(sendtype, &st) != MPI_SUCCESS) {
        return XCHG_PASS;
    }
    PMPI_Comm_size(comm, &p);
    for (int j = 0; j < p; j++)
        if (count_at(sendcounts, j) < 0 || count_at(recvcounts, j) < 0)
            return XCHG_PASS;
    rc = MPI_SUCCESS;
    ctx = xchg_ctx_get(comm, &rc);
    if (!ctx)
        return rc;
    sendbytes = xchg_scratch(ctx, XCHG_SCRATCH_SHIM_META, 4 * (size_t)p * sizeof(size_t));
    if (!sendbytes)
        return MPI_ERR_NO_MEM;
    sendoffs = sendbytes + p;
    recvbytes = sendoffs + p;
    recvoffs = recvbytes + p;
    side_layout(p, sendcounts, sdispls, &st, sendbytes, sendoffs, &send_shift, &send_total);
    side_layout(p, recvcounts, rdispls, &rt, recvbytes, recvoffs, &recv_shift, &recv_total);
    if ((!in_place && XCHG_NULL_BUFFER(sendbuf, send_total)) ||
        XCHG_NULL_BUFFER(recvbuf, recv_total))
        return XCHG_PASS;
    for (int j = 0; j < p; j++) {
        largest = sendbytes[j] > largest ? sendbytes[j] : largest;
        largest = recvbytes[j] > largest ? recvbytes[j] : largest;
    }

    memset(&call, 0, sizeof call);
    call.coll = XCHG_ALLTOALLV;
    call.comm_size = p;
    /* the agreed values, unless the forced algorithm needs none of them: then the local
     * values stand in, and only the forced choice (which does not read them) depends on them */
    if (xchg_config.forced[XCHG_ALLTOALLV] != XCHG_AUTO &&
        xchg_algos[xchg_config.forced[XCHG_ALLTOALLV]].no_agreement) {
        call.max_send_bytes = send_total;
        call.max_recv_bytes = recv_total;
        call.max_block_bytes = largest;
        call.max_total_bytes = send_total + recv_total;
    } else {
        uint64_t agreed[4] = {send_total, recv_total, largest, send_total + recv_total};
        rc = xchg_agree_max(ctx, agreed, 4);
        if (rc != MPI_SUCCESS)
            return rc;
        call.max_send_bytes = agreed[0];
        call.max_recv_bytes = agreed[1];
        call.max_block_bytes = agreed[2];
        call.max_total_bytes = agreed[3];
    }
    call.block_bytes = xchg_size_key(&call);
    rc = xchg_select(ctx, &call, algo, params);
    if (rc != MPI_SUCCESS)
        return rc;
    *key = xchg_size_key(&call);
    if (!xchg_algos[*algo].alltoallv)
        return XCHG_PASS;

    /* send side: the user's buffer when dense, else (and always with MPI_IN_PLACE) packed */
    send = (const char *)sendbuf + send_shift;
    if (in_place || !st.dense) {
        char *packed = xchg_scratch(ctx, XCHG_SCRATCH_SHIM_SEND, send_total);
        size_t at = 0;
        if (!packed)
            return MPI_ERR_NO_MEM;
        for (int j = 0; j < p; j++) {
            const char *from = in_place ? (const char *)recvbuf : (const char *)sendbuf;
            rc = xchg_pack(from + displ_at(sdispls, j) * st.extent, (size_t)count_at(sendcounts, j),
                           &st, packed + at, ctx->comm);
            if (rc != MPI_SUCCESS)
                return rc;
            sendoffs[j] = at;
            at += sendbytes[j];
        }
        send = packed;
    }
    recv = (char *)recvbuf + recv_shift;
    if (!rt.dense) {
        recv = xchg_scratch(ctx, XCHG_SCRATCH_SHIM_RECV, recv_total);
        if (!recv)
            return MPI_ERR_NO_MEM;
    }
    rc = xchg_algos[*algo].alltoallv(ctx, send, sendbytes, sendoffs, recv, recvbytes, recvoffs,
                                     &call, params, NULL);
    if (rc != MPI_SUCCESS || rt.dense)
        return rc;
    for (int j = 0; j < p && rc == MPI_SUCCESS; j++)
        rc = xchg_unpack(recv + recvoffs[j], (size_t)count_at(recvcounts, j), &rt,
                         (char *)recvbuf + displ_at(rdispls, j) * rt.extent, ctx->comm);
    return rc;
}

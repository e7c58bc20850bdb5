/*
 * coll_check: correctness of MPI_Alltoall, MPI_Allgather and MPI_Alltoallv (and their MPI-4
 * large-count forms MPI_Alltoall_c, MPI_Allgather_c, MPI_Alltoallv_c when MPI_VERSION >= 4).
 *
 * A plain MPI program that knows nothing of xchg: scripts/run_tests.sh runs it natively and
 * with the library preloaded, once per forced algorithm, and checks every byte it receives:
 * each block is filled from a formula of (source, destination, index), and the gaps of the
 * receive buffer hold sentinels that must survive.
 *
 * What it loops over:
 *   communicators  world, reversed (split with key = -rank), split into two groups of different
 *                  sizes (the lower (p+1)/3 ranks and the rest), a dup of world, MPI_COMM_SELF;
 *   counts         0, 1, 7 and LARGE_COUNT elements per block;
 *   datatypes      int, double, char, a vector with holes, a resized double (extent 24), an
 *                  int shifted by a true lower bound of 8 inside an extent of 16, a padded
 *                  struct {int, double}, and send/receive pairs with different type maps but
 *                  the same signature: 6 contiguous ints -> 1 vector, 1 vector -> 6 ints, padded
 *                  struct -> packed struct; and "blocks1..3", 6 ints in blocks of 1, 2 or 3 with
 *                  a one-int hole after each block (one signature, three type maps);
 *   MPI_IN_PLACE   for all three collectives, with sendcount -1 and sendtype MPI_DATATYPE_NULL
 *                  (and garbage send counts/displacements for alltoallv), which MPI ignores;
 *   MPI_BOTTOM     as the buffers, with every datatype wrapped in an hindexed type that holds
 *                  the buffer's absolute address (lower bound = the address);
 *   alltoallv      uniform counts, skewed counts ((7i + 3j) mod 5, some zero), skewed counts
 *                  scaled to a few thousand, sparse counts (most zero), all zero, "zeros" (ranks
 *                  1, 4, 7 send nothing, ranks 2 and 6 receive nothing, some pairs nothing; a side
 *                  without data passes a NULL buffer); blocks placed in a rotated or reversed
 *                  order with gaps between them and space after them;
 *   asymmetric     calls where the ranks describe their buffers differently (matching
 *                  signatures; MPI_IN_PLACE on some ranks only is not legal MPI): dense types on
 *                  some ranks and the vector with holes on others (by rank mod 4: 6 ints or a
 *                  vector on each side); a different type map on every rank (rank r sends
 *                  blocks(r mod 3 + 1) and receives blocks((r + 1) mod 3 + 1)); MPI_BOTTOM on
 *                  odd ranks only (also in place); each as the three collectives and alltoallv
 *                  with the skewed and the zeros patterns.
 * Not the full product (main() has the plan): world and self get every datatype pair with every
 * count, in place with counts 1 and LARGE_COUNT (0 for int), and every alltoallv pattern;
 * reversed, split and dup get the pairs that differ most (int, vector, 6int>vector,
 * struct>packed; the dup only int) with counts 1 and 7 and skewed alltoallv, int also large
 * and in place; MPI_BOTTOM and the _c forms on world (every pair, count 7) and on the split;
 * the asymmetric calls on world (count 7, also large or 1; MPI_BOTTOM with the shape types) and
 * on the split (count 7).
 * About 465 calls on communicators of more than one rank: MPICH's own collectives take 10 to 100 ms
 * each at 8 ranks on 2 cores (in place the most), and the program must pass natively too.
 *
 * What it checks, per call and rank: the return code (an error stops the job with MPI_Abort:
 * the ranks may be out of step, and the next call would hang); every received element against the
 * formula f(source, destination, index, salt) (check.h), the salt changing per call so stale
 * data cannot pass; every byte of the receive buffer outside the receive type map (holes of
 * vectors, struct padding, gaps between and after alltoallv blocks, and 64-byte guards before
 * and after the buffer) still holds the sentinel; the send buffer is unchanged. Plus one
 * wildcard receive (MPI_ANY_SOURCE, MPI_ANY_TAG) on MPI_COMM_WORLD that stays posted through
 * all collectives and must receive exactly the one message sent for it at the end: collective
 * traffic must never match user point-to-point receives (not at one rank, see wildcard_post).
 *
 * Output: one line per failure (capped per rank), and "coll_check: N checks, M failed" from
 * rank 0, with totals over all ranks. A check is one received element, one sentinel byte, one
 * return code or one send-buffer comparison. Exit status non-zero on failure.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define LARGE_COUNT 3000 /* elements per block for the "large" count */
#define SKEW_SCALE 613   /* skew-large: (7i + 3j) mod 5 times this many elements */
#define GUARD_BYTES 64   /* sentinel bytes before and after every receive buffer */
/* MPICH 4.0.2's own in-place MPI_Alltoall and MPI_Alltoallv (MPI_Sendrecv_replace inside)
 * fail with "Message truncated" for a struct {int, double} type above 8 KiB of packed data
 * (measured with MPI_Sendrecv_replace: 700 elements fail, 600 pass), and then crash. The
 * program must pass natively, so in-place calls with struct receive types stay below that. */
#define STRUCT_INPLACE_MAX 600

enum { KIND_INT, KIND_DOUBLE, KIND_CHAR };

/* One primitive of a type map: where it sits inside an element, and its basic type. */
typedef struct prim {
    size_t offset;
    int kind;
} prim_t;

/* A datatype and the type map the test expects of it (lower bound 0). */
typedef struct layout {
    const char *name;
    MPI_Datatype type;
    size_t extent;
    int nprims;
    prim_t prims[8];
} layout_t;

/* A send/receive datatype pair: a block of base count n is n * send_mult send elements and
 * n * recv_mult receive elements, with equal signatures. */
typedef struct typecase {
    const char *name;
    const layout_t *send;
    const layout_t *recv;
    size_t send_mult, recv_mult;
} typecase_t;

typedef struct commcase {
    const char *name;
    MPI_Comm comm;
} commcase_t;

/* What a failure line says about the call. */
typedef struct label {
    char coll[40];
    const char *comm;
    const char *type;
    char count[24];
    int comm_rank;
} label_t;

/* How a call is made: in place, through the large-count API, with MPI_BOTTOM buffers. */
enum { MODE_INPLACE = 1, MODE_C = 2, MODE_BOTTOM = 4 };

enum { PAT_UNIFORM, PAT_SKEW, PAT_SKEW_LARGE, PAT_SPARSE, PAT_ZEROS };
static const char *const pattern_names[] = {"uniform", "skew", "skew-large", "sparse", "zeros"};

static layout_t layout_int, layout_double, layout_char, layout_vector, layout_resized,
    layout_shifted, layout_struct, layout_packed;
/* 6 ints in blocks of b = 1, 2, 3 with a one-int hole after each block: one signature, three
 * type maps (for calls where every rank uses its own) */
static layout_t layout_blocks[3];
static uint32_t next_salt = 1;

/* ---- element values ---- */

static void put_prim(unsigned char *at, int kind, uint32_t value)
{
    if (kind == KIND_INT) {
        int32_t x = (int32_t)(value & 0x7fffffff);
        memcpy(at, &x, sizeof x);
    } else if (kind == KIND_DOUBLE) {
        double x = (double)value;
        memcpy(at, &x, sizeof x);
    } else {
        *at = (unsigned char)(1 + value % 120);
    }
}

static size_t kind_bytes(int kind)
{
    return kind == KIND_INT ? 4 : kind == KIND_DOUBLE ? 8 : 1;
}

static void format_prim(const unsigned char *at, int kind, char *out, size_t outlen)
{
    if (kind == KIND_INT) {
        int32_t x;
        memcpy(&x, at, sizeof x);
        snprintf(out, outlen, "%d", (int)x);
    } else if (kind == KIND_DOUBLE) {
        double x;
        memcpy(&x, at, sizeof x);
        snprintf(out, outlen, "%.17g", x);
    } else {
        snprintf(out, outlen, "%d", (int)*at);
    }
}

/* Write nelems elements of layout L at buf: the message from source to destination. */
static void fill(unsigned char *buf, const layout_t *L, size_t nelems, int source, int destination,
                 uint32_t salt)
{
    for (size_t e = 0; e < nelems; e++)
        for (int i = 0; i < L->nprims; i++) {
            uint64_t index = (uint64_t)e * (uint64_t)L->nprims + (uint64_t)i;
            put_prim(buf + e * L->extent + L->prims[i].offset, L->prims[i].kind,
                     check_value(source, destination, index, salt));
        }
}

/* Check nelems received elements of layout L at buf (the message from source), then overwrite
 * them with the sentinel so that the sentinel scan can check the rest of the buffer. Returns
 * the bytes of data checked. offset0 is buf's offset in the receive buffer (for messages). */
static size_t verify(unsigned char *buf, const layout_t *L, size_t nelems, int source,
                     int destination, uint32_t salt, const label_t *label, size_t offset0)
{
    size_t data_bytes = 0;
    for (size_t e = 0; e < nelems; e++)
        for (int i = 0; i < L->nprims; i++) {
            uint64_t index = (uint64_t)e * (uint64_t)L->nprims + (uint64_t)i;
            unsigned char expected[8], *at = buf + e * L->extent + L->prims[i].offset;
            int kind = L->prims[i].kind;
            size_t nbytes = kind_bytes(kind);
            put_prim(expected, kind, check_value(source, destination, index, salt));
            if (memcmp(expected, at, nbytes) != 0) {
                char want[32], got[32];
                format_prim(expected, kind, want, sizeof want);
                format_prim(at, kind, got, sizeof got);
                check_fail("%s comm=%s type=%s count=%s rank=%d: element %llu from rank %d "
                           "(byte %zu of recvbuf): expected %s got %s",
                           label->coll, label->comm, label->type, label->count, label->comm_rank,
                           (unsigned long long)index, source,
                           offset0 + e * L->extent + L->prims[i].offset, want, got);
            }
            memset(at, CHECK_SENTINEL, nbytes);
            data_bytes += nbytes;
        }
    check_count((long long)nelems * L->nprims);
    return data_bytes;
}

/* ---- receive buffers with guards ---- */

/* bytes of receive buffer plus a guard on each side, all set to the sentinel; returns the
 * receive buffer (the allocation starts GUARD_BYTES before it). */
static unsigned char *guarded_alloc(size_t bytes)
{
    unsigned char *base = malloc(bytes + 2 * GUARD_BYTES);
    if (!base) {
        fprintf(stderr, "coll_check: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(base, CHECK_SENTINEL, bytes + 2 * GUARD_BYTES);
    return base + GUARD_BYTES;
}

/* After verify() erased the data: every byte, guards included, must be the sentinel. */
static void sentinel_scan_and_free(unsigned char *recvbuf, size_t bytes, size_t data_bytes,
                                   const label_t *label)
{
    unsigned char *base = recvbuf - GUARD_BYTES;
    size_t total = bytes + 2 * GUARD_BYTES;
    for (size_t b = 0; b < total; b++)
        if (base[b] != CHECK_SENTINEL)
            check_fail("%s comm=%s type=%s count=%s rank=%d: byte %lld of recvbuf is outside "
                       "the receive type map%s: expected 0x%02x got 0x%02x",
                       label->coll, label->comm, label->type, label->count, label->comm_rank,
                       (long long)b - GUARD_BYTES,
                       b < GUARD_BYTES || b >= GUARD_BYTES + bytes ? " (guard)" : "",
                       CHECK_SENTINEL, base[b]);
    check_count((long long)(total - data_bytes));
    free(base);
}

/* A collective that returned an error on some ranks leaves the ranks out of step (the next
 * call would hang), so the program reports it and stops the job. */
static void check_rc(int rc, const label_t *label)
{
    check_count(1);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        check_fail("%s comm=%s type=%s count=%s rank=%d: returned %s", label->coll, label->comm,
                   label->type, label->count, label->comm_rank,
                   check_error_string(rc, text, (int)sizeof text));
        fprintf(stderr, "coll_check: stopping: a collective returned an error, the ranks may be "
                        "out of step\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void check_sendbuf(const void *sendbuf, const void *copy, size_t bytes, const label_t *label)
{
    check_count(1);
    if (bytes && memcmp(sendbuf, copy, bytes) != 0)
        check_fail("%s comm=%s type=%s count=%s rank=%d: the send buffer was modified", label->coll,
                   label->comm, label->type, label->count, label->comm_rank);
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "coll_check: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static void *duplicate(const void *buf, size_t bytes)
{
    void *copy = xmalloc(bytes);
    memcpy(copy, buf, bytes);
    return copy;
}

/* ---- the three collectives, int or large-count API ---- */

static int call_alltoall(int api_c, const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                         void *recvbuf, long long recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
#if MPI_VERSION >= 4
    if (api_c)
        return MPI_Alltoall_c(sendbuf, (MPI_Count)sendcount, sendtype, recvbuf,
                              (MPI_Count)recvcount, recvtype, comm);
#else
    (void)api_c;
#endif
    return MPI_Alltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype, comm);
}

static int call_allgather(int api_c, const void *sendbuf, long long sendcount,
                          MPI_Datatype sendtype, void *recvbuf, long long recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm)
{
#if MPI_VERSION >= 4
    if (api_c)
        return MPI_Allgather_c(sendbuf, (MPI_Count)sendcount, sendtype, recvbuf,
                               (MPI_Count)recvcount, recvtype, comm);
#else
    (void)api_c;
#endif
    return MPI_Allgather(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype,
                         comm);
}

/* counts and displacements as size_t, converted to the API's types */
static int call_alltoallv(int api_c, const void *sendbuf, const long long *sendcounts,
                          const long long *sdispls, MPI_Datatype sendtype, void *recvbuf,
                          const long long *recvcounts, const long long *rdispls,
                          MPI_Datatype recvtype, MPI_Comm comm, int p)
{
    int rc;
#if MPI_VERSION >= 4
    if (api_c) {
        MPI_Count *sc = xmalloc((size_t)p * sizeof *sc), *rc_ = xmalloc((size_t)p * sizeof *rc_);
        MPI_Aint *sd = xmalloc((size_t)p * sizeof *sd), *rd = xmalloc((size_t)p * sizeof *rd);
        for (int j = 0; j < p; j++) {
            sc[j] = (MPI_Count)sendcounts[j];
            sd[j] = (MPI_Aint)sdispls[j];
            rc_[j] = (MPI_Count)recvcounts[j];
            rd[j] = (MPI_Aint)rdispls[j];
        }
        rc = MPI_Alltoallv_c(sendbuf, sc, sd, sendtype, recvbuf, rc_, rd, recvtype, comm);
        free(sc);
        free(sd);
        free(rc_);
        free(rd);
        return rc;
    }
#else
    (void)api_c;
#endif
    {
        int *sc = xmalloc((size_t)p * sizeof *sc), *rc_ = xmalloc((size_t)p * sizeof *rc_);
        int *sd = xmalloc((size_t)p * sizeof *sd), *rd = xmalloc((size_t)p * sizeof *rd);
        for (int j = 0; j < p; j++) {
            sc[j] = (int)sendcounts[j];
            sd[j] = (int)sdispls[j];
            rc_[j] = (int)recvcounts[j];
            rd[j] = (int)rdispls[j];
        }
        rc = MPI_Alltoallv(sendbuf, sc, sd, sendtype, recvbuf, rc_, rd, recvtype, comm);
        free(sc);
        free(sd);
        free(rc_);
        free(rd);
    }
    return rc;
}

static void make_label(label_t *label, const char *coll, int flags, const commcase_t *cc,
                       const typecase_t *tc, const char *count, int rank)
{
    snprintf(label->coll, sizeof label->coll, "%s%s%s%s", coll, flags & MODE_C ? "_c" : "",
             flags & MODE_INPLACE ? "(IN_PLACE)" : "", flags & MODE_BOTTOM ? "(MPI_BOTTOM)" : "");
    label->comm = cc->name;
    label->type = tc->name;
    snprintf(label->count, sizeof label->count, "%s", count);
    label->comm_rank = rank;
}

/* The buffer and datatype a call passes for buf holding elements of layout L: buf and L's
 * type, or with MODE_BOTTOM, MPI_BOTTOM and a type that puts L's type at buf's absolute
 * address (same extent, lower bound = the address), as Fortran programs often do. */
typedef struct bufarg {
    void *buf;
    MPI_Datatype type;
} bufarg_t;

static bufarg_t buffer_arg(void *buf, const layout_t *L, int flags)
{
    bufarg_t arg = {buf, L->type};
    MPI_Aint address, lb, extent;
    if (!(flags & MODE_BOTTOM))
        return arg;
    MPI_Get_address(buf, &address);
    MPI_Type_create_hindexed_block(1, 1, &address, L->type, &arg.type);
    MPI_Type_commit(&arg.type);
    MPI_Type_get_extent(arg.type, &lb, &extent);
    check_count(1);
    if (lb != address || (size_t)extent != L->extent)
        check_fail("MPI_BOTTOM type for %s: lb %ld extent %ld, the test expects %ld and %zu",
                   L->name, (long)lb, (long)extent, (long)address, L->extent);
    arg.buf = MPI_BOTTOM;
    return arg;
}

static void buffer_arg_free(bufarg_t *arg, int flags)
{
    if (flags & MODE_BOTTOM && arg->type != MPI_DATATYPE_NULL)
        MPI_Type_free(&arg->type);
}

/* ---- MPI_Alltoall ---- */

static void test_alltoall(const commcase_t *cc, const typecase_t *tc, size_t n, int flags)
{
    int p, me, rc, inplace = flags & MODE_INPLACE, api_c = (flags & MODE_C) != 0;
    bufarg_t sarg = {NULL, MPI_DATATYPE_NULL}, rarg;
    const layout_t *S = tc->send, *R = tc->recv;
    size_t scount = n * tc->send_mult, rcount = n * tc->recv_mult;
    size_t sblock = scount * S->extent, rblock = rcount * R->extent;
    size_t rbytes, data_bytes = 0;
    uint32_t salt = next_salt++;
    unsigned char *sendbuf = NULL, *sendcopy = NULL, *recvbuf;
    char countstr[24];
    label_t label;

    MPI_Comm_size(cc->comm, &p);
    MPI_Comm_rank(cc->comm, &me);
    snprintf(countstr, sizeof countstr, "%zu", n);
    make_label(&label, "alltoall", flags, cc, tc, countstr, me);
    rbytes = (size_t)p * rblock;
    recvbuf = guarded_alloc(rbytes);
    rarg = buffer_arg(recvbuf, R, flags);
    if (inplace) {
        /* block j of the receive buffer holds the message for rank j, in the receive type */
        for (int j = 0; j < p; j++)
            fill(recvbuf + (size_t)j * rblock, R, rcount, me, j, salt);
        rc = call_alltoall(api_c, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, rarg.buf, (long long)rcount,
                           rarg.type, cc->comm);
    } else {
        sendbuf = xmalloc((size_t)p * sblock);
        memset(sendbuf, CHECK_SENTINEL, (size_t)p * sblock);
        for (int j = 0; j < p; j++)
            fill(sendbuf + (size_t)j * sblock, S, scount, me, j, salt);
        sendcopy = duplicate(sendbuf, (size_t)p * sblock);
        sarg = buffer_arg(sendbuf, S, flags);
        rc = call_alltoall(api_c, sarg.buf, (long long)scount, sarg.type, rarg.buf,
                           (long long)rcount, rarg.type, cc->comm);
    }
    check_rc(rc, &label);
    buffer_arg_free(&sarg, flags);
    buffer_arg_free(&rarg, flags);
    /* block i: the message from rank i to me */
    for (int i = 0; i < p; i++)
        data_bytes += verify(recvbuf + (size_t)i * rblock, R, rcount, i, me, salt, &label,
                             (size_t)i * rblock);
    sentinel_scan_and_free(recvbuf, rbytes, data_bytes, &label);
    if (!inplace)
        check_sendbuf(sendbuf, sendcopy, (size_t)p * sblock, &label);
    free(sendbuf);
    free(sendcopy);
}

/* ---- MPI_Allgather ---- */

static void test_allgather(const commcase_t *cc, const typecase_t *tc, size_t n, int flags)
{
    int p, me, rc, inplace = flags & MODE_INPLACE, api_c = (flags & MODE_C) != 0;
    bufarg_t sarg = {NULL, MPI_DATATYPE_NULL}, rarg;
    const layout_t *S = tc->send, *R = tc->recv;
    size_t scount = n * tc->send_mult, rcount = n * tc->recv_mult;
    size_t sblock = scount * S->extent, rblock = rcount * R->extent;
    size_t rbytes, data_bytes = 0;
    uint32_t salt = next_salt++;
    unsigned char *sendbuf = NULL, *sendcopy = NULL, *recvbuf;
    char countstr[24];
    label_t label;

    MPI_Comm_size(cc->comm, &p);
    MPI_Comm_rank(cc->comm, &me);
    snprintf(countstr, sizeof countstr, "%zu", n);
    make_label(&label, "allgather", flags, cc, tc, countstr, me);
    rbytes = (size_t)p * rblock;
    recvbuf = guarded_alloc(rbytes);
    rarg = buffer_arg(recvbuf, R, flags);
    /* the message of rank i is f(i, -1, index): the same for every receiver */
    if (inplace) {
        fill(recvbuf + (size_t)me * rblock, R, rcount, me, -1, salt);
        rc = call_allgather(api_c, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, rarg.buf, (long long)rcount,
                            rarg.type, cc->comm);
    } else {
        sendbuf = xmalloc(sblock + 16);
        memset(sendbuf, CHECK_SENTINEL, sblock + 16);
        fill(sendbuf, S, scount, me, -1, salt);
        sendcopy = duplicate(sendbuf, sblock + 16);
        sarg = buffer_arg(sendbuf, S, flags);
        rc = call_allgather(api_c, sarg.buf, (long long)scount, sarg.type, rarg.buf,
                            (long long)rcount, rarg.type, cc->comm);
    }
    check_rc(rc, &label);
    buffer_arg_free(&sarg, flags);
    buffer_arg_free(&rarg, flags);
    for (int i = 0; i < p; i++)
        data_bytes += verify(recvbuf + (size_t)i * rblock, R, rcount, i, -1, salt, &label,
                             (size_t)i * rblock);
    sentinel_scan_and_free(recvbuf, rbytes, data_bytes, &label);
    if (!inplace)
        check_sendbuf(sendbuf, sendcopy, sblock + 16, &label);
    free(sendbuf);
    free(sendcopy);
}

/* ---- MPI_Alltoallv ---- */

/* Base count of the message from rank i to rank j. In-place needs symmetric counts (what i
 * sends j is what j receives from i, both described by the receive arguments). */
static size_t pattern_count(int pattern, size_t n, int i, int j, int symmetric)
{
    if (symmetric && i > j) {
        int t = i;
        i = j;
        j = t;
    }
    switch (pattern) {
    case PAT_SKEW:
        return (size_t)((i * 7 + j * 3) % 5);
    case PAT_SKEW_LARGE:
        return (size_t)((i * 7 + j * 3) % 5) * n;
    case PAT_SPARSE:
        return (i + 2 * j) % 3 == 0 ? 5 : 0;
    case PAT_ZEROS: /* ranks 1, 4, 7 send nothing, ranks 2, 6 receive nothing, some pairs 0 */
        return i % 3 == 1 || j % 4 == 2 || (i + j) % 4 == 0 ? 0 : (size_t)(1 + (i + 2 * j) % 5);
    default:
        return n;
    }
}

/* Place p blocks of counts[j] elements: the k-th block placed is order[k], followed by a gap
 * of gap_base + k % gap_mod elements; tail elements after the last. Returns the buffer length
 * in elements. */
static size_t place_blocks(int p, const long long *counts, const int *order, int gap_base,
                           int gap_mod, int tail, long long *displs)
{
    size_t cursor = 0;
    for (int k = 0; k < p; k++) {
        int j = order[k];
        displs[j] = (long long)cursor;
        cursor += (size_t)counts[j] + (size_t)(gap_base + k % gap_mod);
    }
    return cursor + (size_t)tail;
}

/* Whether p counts are all zero: with the zeros pattern such a side passes a NULL buffer, which
 * MPI allows when there is no data. */
static int all_zero(const long long *counts, int p)
{
    for (int j = 0; j < p; j++)
        if (counts[j] != 0)
            return 0;
    return 1;
}

static void test_alltoallv(const commcase_t *cc, const typecase_t *tc, int pattern, size_t n,
                           int flags)
{
    int p, me, rc, inplace = flags & MODE_INPLACE, api_c = (flags & MODE_C) != 0;
    bufarg_t sarg = {NULL, MPI_DATATYPE_NULL}, rarg;
    const layout_t *S = tc->send, *R = tc->recv;
    uint32_t salt = next_salt++;
    size_t selems, relems, sbytes, rbytes, data_bytes = 0;
    long long *sendcounts, *sdispls, *recvcounts, *rdispls;
    int *order;
    unsigned char *sendbuf = NULL, *sendcopy = NULL, *recvbuf;
    char countstr[24];
    label_t label;

    MPI_Comm_size(cc->comm, &p);
    MPI_Comm_rank(cc->comm, &me);
    if (pattern == PAT_UNIFORM)
        snprintf(countstr, sizeof countstr, "%zu", n);
    else if (pattern == PAT_SKEW_LARGE)
        snprintf(countstr, sizeof countstr, "%s(x%zu)", pattern_names[pattern], n);
    else
        snprintf(countstr, sizeof countstr, "%s", pattern_names[pattern]);
    make_label(&label, "alltoallv", flags, cc, tc, countstr, me);
    sendcounts = xmalloc((size_t)p * sizeof *sendcounts);
    sdispls = xmalloc((size_t)p * sizeof *sdispls);
    recvcounts = xmalloc((size_t)p * sizeof *recvcounts);
    rdispls = xmalloc((size_t)p * sizeof *rdispls);
    order = xmalloc((size_t)p * sizeof *order);

    /* receive side: blocks in rotated order (me+1, me+2, ...), gaps of 1 or 2 elements, 3
     * elements of space after the last block */
    for (int i = 0; i < p; i++)
        recvcounts[i] = (long long)(pattern_count(pattern, n, i, me, inplace) * tc->recv_mult);
    for (int k = 0; k < p; k++)
        order[k] = (me + 1 + k) % p;
    relems = place_blocks(p, recvcounts, order, 1, 2, 3, rdispls);
    rbytes = relems * R->extent;
    recvbuf = guarded_alloc(rbytes);
    rarg = buffer_arg(recvbuf, R, flags);
    if (pattern == PAT_ZEROS && !inplace && all_zero(recvcounts, p))
        rarg.buf = NULL;

    if (inplace) {
        /* the send counts and displacements are ignored: garbage */
        for (int j = 0; j < p; j++)
            sendcounts[j] = sdispls[j] = -7;
        for (int j = 0; j < p; j++)
            fill(recvbuf + (size_t)rdispls[j] * R->extent, R, (size_t)recvcounts[j], me, j, salt);
        rc = call_alltoallv(api_c, MPI_IN_PLACE, sendcounts, sdispls, MPI_DATATYPE_NULL, rarg.buf,
                            recvcounts, rdispls, rarg.type, cc->comm, p);
    } else {
        /* send side: blocks in reversed rotated order (me, me-1, ...), gaps of 0 to 2 */
        for (int j = 0; j < p; j++)
            sendcounts[j] = (long long)(pattern_count(pattern, n, me, j, 0) * tc->send_mult);
        for (int k = 0; k < p; k++)
            order[k] = (me - k + p) % p;
        selems = place_blocks(p, sendcounts, order, 0, 3, 0, sdispls);
        sbytes = selems * S->extent;
        sendbuf = xmalloc(sbytes);
        memset(sendbuf, CHECK_SENTINEL, sbytes);
        for (int j = 0; j < p; j++)
            fill(sendbuf + (size_t)sdispls[j] * S->extent, S, (size_t)sendcounts[j], me, j, salt);
        sendcopy = duplicate(sendbuf, sbytes);
        sarg = buffer_arg(sendbuf, S, flags);
        if (pattern == PAT_ZEROS && all_zero(sendcounts, p))
            sarg.buf = NULL;
        rc = call_alltoallv(api_c, sarg.buf, sendcounts, sdispls, sarg.type, rarg.buf, recvcounts,
                            rdispls, rarg.type, cc->comm, p);
        check_sendbuf(sendbuf, sendcopy, sbytes, &label);
    }
    check_rc(rc, &label);
    buffer_arg_free(&sarg, flags);
    buffer_arg_free(&rarg, flags);
    for (int i = 0; i < p; i++)
        data_bytes += verify(recvbuf + (size_t)rdispls[i] * R->extent, R, (size_t)recvcounts[i], i,
                             me, salt, &label, (size_t)rdispls[i] * R->extent);
    sentinel_scan_and_free(recvbuf, rbytes, data_bytes, &label);
    free(sendbuf);
    free(sendcopy);
    free(sendcounts);
    free(sdispls);
    free(recvcounts);
    free(rdispls);
    free(order);
}

/* ---- datatypes ---- */

/* Commit a layout's type and check that MPI agrees with its expected extent. */
static void layout_commit(layout_t *L)
{
    MPI_Aint lb, extent;
    MPI_Type_commit(&L->type);
    MPI_Type_get_extent(L->type, &lb, &extent);
    check_count(1);
    if (lb != 0 || (size_t)extent != L->extent)
        check_fail("datatype %s: lb %ld extent %ld, the test expects 0 and %zu", L->name, (long)lb,
                   (long)extent, L->extent);
}

static void build_layouts(void)
{
    struct padded {
        int i;
        double d;
    };
    MPI_Datatype tmp;

    layout_int = (layout_t){"int", MPI_INT, sizeof(int), 1, {{0, KIND_INT}}};
    layout_double = (layout_t){"double", MPI_DOUBLE, sizeof(double), 1, {{0, KIND_DOUBLE}}};
    layout_char = (layout_t){"char", MPI_CHAR, 1, 1, {{0, KIND_CHAR}}};

    /* 3 blocks of 2 ints, stride 3 ints: holes at bytes 8..11 and 20..23 */
    layout_vector = (layout_t){"vector",
                               MPI_DATATYPE_NULL,
                               32,
                               6,
                               {{0, KIND_INT},
                                {4, KIND_INT},
                                {12, KIND_INT},
                                {16, KIND_INT},
                                {24, KIND_INT},
                                {28, KIND_INT}}};
    MPI_Type_vector(3, 2, 3, MPI_INT, &layout_vector.type);
    layout_commit(&layout_vector);

    /* a double in an extent of 24 bytes */
    layout_resized = (layout_t){"resized", MPI_DATATYPE_NULL, 24, 1, {{0, KIND_DOUBLE}}};
    MPI_Type_create_resized(MPI_DOUBLE, 0, 24, &layout_resized.type);
    layout_commit(&layout_resized);

    /* an int at byte 8 (true lower bound 8), resized to lb 0 and extent 16 */
    {
        MPI_Aint displ = 8;
        layout_shifted = (layout_t){"shifted", MPI_DATATYPE_NULL, 16, 1, {{8, KIND_INT}}};
        MPI_Type_create_hindexed_block(1, 1, &displ, MPI_INT, &tmp);
        MPI_Type_create_resized(tmp, 0, 16, &layout_shifted.type);
        MPI_Type_free(&tmp);
        layout_commit(&layout_shifted);
    }

    /* struct {int; double;} with its padding */
    {
        int blocklens[2] = {1, 1};
        MPI_Aint displs[2] = {offsetof(struct padded, i), offsetof(struct padded, d)};
        MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
        layout_struct = (layout_t){
            "struct",
            MPI_DATATYPE_NULL,
            sizeof(struct padded),
            2,
            {{offsetof(struct padded, i), KIND_INT}, {offsetof(struct padded, d), KIND_DOUBLE}}};
        MPI_Type_create_struct(2, blocklens, displs, types, &tmp);
        MPI_Type_create_resized(tmp, 0, sizeof(struct padded), &layout_struct.type);
        MPI_Type_free(&tmp);
        layout_commit(&layout_struct);
    }

    /* the same signature packed: int at 0, double at 4, extent 12 */
    {
        int blocklens[2] = {1, 1};
        MPI_Aint displs[2] = {0, 4};
        MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
        layout_packed =
            (layout_t){"packed", MPI_DATATYPE_NULL, 12, 2, {{0, KIND_INT}, {4, KIND_DOUBLE}}};
        MPI_Type_create_struct(2, blocklens, displs, types, &tmp);
        MPI_Type_create_resized(tmp, 0, 12, &layout_packed.type);
        MPI_Type_free(&tmp);
        layout_commit(&layout_packed);
    }

    /* blocks b: 6 / b blocks of b ints, stride b + 1 ints, extent (6 / b) * (b + 1) ints */
    for (int b = 1; b <= 3; b++) {
        static const char *const names[] = {"blocks1", "blocks2", "blocks3"};
        layout_t *L = &layout_blocks[b - 1];
        int nblocks = 6 / b, k = 0;
        *L = (layout_t){names[b - 1], MPI_DATATYPE_NULL, (size_t)(nblocks * (b + 1)) * 4, 6, {{0}}};
        for (int block = 0; block < nblocks; block++)
            for (int i = 0; i < b; i++)
                L->prims[k++] = (prim_t){(size_t)(block * (b + 1) + i) * 4, KIND_INT};
        MPI_Type_vector(nblocks, b, b + 1, MPI_INT, &tmp);
        MPI_Type_create_resized(tmp, 0, (MPI_Aint)L->extent, &L->type);
        MPI_Type_free(&tmp);
        layout_commit(L);
    }
}

static void free_layouts(void)
{
    layout_t *derived[] = {&layout_vector, &layout_resized,   &layout_shifted,   &layout_struct,
                           &layout_packed, &layout_blocks[0], &layout_blocks[1], &layout_blocks[2]};
    for (size_t i = 0; i < sizeof derived / sizeof derived[0]; i++)
        MPI_Type_free(&derived[i]->type);
}

/* ---- the wildcard receive that collectives must never match ---- */

static MPI_Request wildcard_req;
static int wildcard_buf = -1;

/* Not at one rank: there MPICH 4.0.2's own in-place MPI_Alltoallv sends to itself in a way
 * that a pending wildcard receive on the communicator matches, and the native run hangs. */
static void wildcard_post(void)
{
    MPI_Irecv(&wildcard_buf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
              &wildcard_req);
}

static void wildcard_complete(void)
{
    int p, me, flag = 0, token, left;
    MPI_Status status;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    left = (me + p - 1) % p;
    /* nothing may have matched before any rank sends the user's own message */
    MPI_Test(&wildcard_req, &flag, &status);
    check_count(1);
    if (flag)
        check_fail("a wildcard receive on MPI_COMM_WORLD matched a message of a collective "
                   "(source %d, tag %d, value %d)",
                   status.MPI_SOURCE, status.MPI_TAG, wildcard_buf);
    MPI_Barrier(MPI_COMM_WORLD);
    token = 1000 + me;
    MPI_Send(&token, 1, MPI_INT, (me + 1) % p, 77, MPI_COMM_WORLD);
    if (flag) { /* consume the token anyway */
        MPI_Recv(&wildcard_buf, 1, MPI_INT, left, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Wait(&wildcard_req, &status);
    check_count(1);
    if (status.MPI_SOURCE != left || status.MPI_TAG != 77 || wildcard_buf != 1000 + left)
        check_fail("the wildcard receive got source %d tag %d value %d, expected source %d tag "
                   "77 value %d",
                   status.MPI_SOURCE, status.MPI_TAG, wildcard_buf, left, 1000 + left);
}

/* ---- the plan ---- */

static int is_struct(const layout_t *L)
{
    return L == &layout_struct || L == &layout_packed;
}

/* The three collectives with base count n (alltoallv with uniform counts). */
static void run_three(const commcase_t *cc, const typecase_t *tc, size_t n, int flags)
{
    if (flags & MODE_INPLACE && is_struct(tc->recv) && n > STRUCT_INPLACE_MAX)
        n = STRUCT_INPLACE_MAX;
    test_alltoall(cc, tc, n, flags);
    test_allgather(cc, tc, n, flags);
    test_alltoallv(cc, tc, PAT_UNIFORM, n, flags);
}

static void run_pattern(const commcase_t *cc, const typecase_t *tc, int pattern, int flags)
{
    size_t scale = SKEW_SCALE;
    if (flags & MODE_INPLACE && is_struct(tc->recv))
        scale = STRUCT_INPLACE_MAX / 4;
    test_alltoallv(cc, tc, pattern, scale, flags);
}

/* ---- asymmetric calls: the ranks describe their buffers differently ---- */

/* ASYM_HOLES: by rank mod 4, 6 ints > 6 ints, vector > vector, 6 ints > vector, vector > 6 ints
 * (dense on some ranks, holes on others); ASYM_BLOCKS: rank r sends blocks(r mod 3 + 1) and
 * receives blocks((r + 1) mod 3 + 1); ASYM_BOTTOM: the base pair, MPI_BOTTOM on odd ranks. A
 * base count is 6 ints of signature in the first two, one base element in the third. */
enum { ASYM_HOLES, ASYM_BLOCKS, ASYM_BOTTOM };
static const char *const asym_names[] = {"asym-holes", "asym-blocks", "asym-bottom"};

/* The pair and flags this rank (me) uses; the name (for failure lines) goes to name. */
static typecase_t asym_typecase(int kind, int me, const typecase_t *base, int *flags, char *name,
                                size_t namelen)
{
    typecase_t tc;
    if (kind == ASYM_HOLES) {
        const layout_t *send = me % 4 == 0 || me % 4 == 2 ? &layout_int : &layout_vector;
        const layout_t *recv = me % 4 == 0 || me % 4 == 3 ? &layout_int : &layout_vector;
        tc = (typecase_t){NULL, send, recv, send == &layout_int ? 6 : 1,
                          recv == &layout_int ? 6 : 1};
    } else if (kind == ASYM_BLOCKS) {
        tc = (typecase_t){NULL, &layout_blocks[me % 3], &layout_blocks[(me + 1) % 3], 1, 1};
    } else {
        tc = *base;
        if (me % 2 == 1)
            *flags |= MODE_BOTTOM;
    }
    snprintf(name, namelen, "%s:%s%s%s%s", asym_names[kind], tc.send_mult > 1 ? "6" : "",
             tc.send->name, tc.recv_mult > 1 ? ">6" : ">", tc.recv->name);
    tc.name = name;
    return tc;
}

/* The three collectives with base count n, then with patterns set alltoallv with the skewed and
 * the zeros patterns, every rank with its own description of the buffers. */
static void run_asym(const commcase_t *cc, int kind, const typecase_t *base, size_t n, int flags,
                     int patterns)
{
    char name[64];
    int me;
    typecase_t tc;
    MPI_Comm_rank(cc->comm, &me);
    tc = asym_typecase(kind, me, base, &flags, name, sizeof name);
    run_three(cc, &tc, n, flags);
    if (patterns) {
        run_pattern(cc, &tc, PAT_SKEW, flags);
        run_pattern(cc, &tc, PAT_ZEROS, flags);
    }
}

int main(int argc, char **argv)
{
    int p, me, status;
    MPI_Comm reversed, split, dup;
    char split_name[32];

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    build_layouts();

    const typecase_t typecases[] = {
        {"int", &layout_int, &layout_int, 1, 1},
        {"double", &layout_double, &layout_double, 1, 1},
        {"char", &layout_char, &layout_char, 1, 1},
        {"vector", &layout_vector, &layout_vector, 1, 1},
        {"resized", &layout_resized, &layout_resized, 1, 1},
        {"shifted", &layout_shifted, &layout_shifted, 1, 1},
        {"struct", &layout_struct, &layout_struct, 1, 1},
        {"6int>vector", &layout_int, &layout_vector, 6, 1},
        {"vector>6int", &layout_vector, &layout_int, 1, 6},
        {"struct>packed", &layout_struct, &layout_packed, 1, 1},
    };
    const int ntypecases = (int)(sizeof typecases / sizeof typecases[0]);
    const typecase_t *tc_int = &typecases[0];
    /* the pairs that differ most: basic, holes, different maps, mixed kinds */
    const typecase_t *shape_types[] = {&typecases[0], &typecases[3], &typecases[7], &typecases[9]};
    const size_t counts[] = {0, 1, 7, LARGE_COUNT};

    /* communicators: split in two groups of different sizes, the lower (p+1)/3 ranks first */
    MPI_Comm_split(MPI_COMM_WORLD, 0, -me, &reversed);
    MPI_Comm_split(MPI_COMM_WORLD, me < (p + 1) / 3 ? 0 : 1, me, &split);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    {
        int split_size;
        MPI_Comm_size(split, &split_size);
        snprintf(split_name, sizeof split_name, "split(%d of %d)", split_size, p);
    }
    const commcase_t world = {"world", MPI_COMM_WORLD}, self = {"self", MPI_COMM_SELF};
    const commcase_t shapes[] = {{"reversed", reversed}, {split_name, split}, {"dup", dup}};

    if (p > 1)
        wildcard_post();

    /* World and self: every type pair with every count; in place with counts 1 and large
     * (and 0 for int); every alltoallv pattern, in place the skewed ones for the shape types.
     * In-place calls are few because MPICH's own run them slowly when oversubscribed. */
    for (int c = 0; c < 2; c++) {
        const commcase_t *cc = c == 0 ? &world : &self;
        for (int t = 0; t < ntypecases; t++) {
            const typecase_t *tc = &typecases[t];
            for (int k = 0; k < 4; k++)
                run_three(cc, tc, counts[k], 0);
            run_three(cc, tc, 1, MODE_INPLACE);
            run_three(cc, tc, LARGE_COUNT, MODE_INPLACE);
            for (int pattern = PAT_SKEW; pattern <= PAT_SPARSE; pattern++)
                run_pattern(cc, tc, pattern, 0);
        }
        run_three(cc, tc_int, 0, MODE_INPLACE);
        for (int t = 0; t < 4; t++) {
            run_pattern(cc, shape_types[t], PAT_SKEW, MODE_INPLACE);
            run_pattern(cc, shape_types[t], PAT_SKEW_LARGE, MODE_INPLACE);
        }
    }

    /* Reversed, split, dup: the shape types with counts 1 and 7 and skewed alltoallv; int
     * also large and in place. A dup only needs int: it is about contexts, not datatypes. */
    for (int c = 0; c < 3; c++) {
        const commcase_t *cc = &shapes[c];
        int ntypes = c == 2 ? 1 : 4;
        for (int t = 0; t < ntypes; t++) {
            run_three(cc, shape_types[t], 1, 0);
            run_three(cc, shape_types[t], 7, 0);
            run_pattern(cc, shape_types[t], PAT_SKEW, 0);
        }
        run_three(cc, tc_int, LARGE_COUNT, 0);
        run_three(cc, tc_int, 7, MODE_INPLACE);
        run_pattern(cc, tc_int, PAT_SKEW, MODE_INPLACE);
    }

    /* MPI_BOTTOM with types that hold absolute addresses (their lower bound is the address):
     * on world every type pair with count 7 and skewed alltoallv, the shape types in place; on
     * the split int. */
    for (int t = 0; t < ntypecases; t++) {
        run_three(&world, &typecases[t], 7, MODE_BOTTOM);
        run_pattern(&world, &typecases[t], PAT_SKEW, MODE_BOTTOM);
    }
    for (int t = 0; t < 4; t++)
        run_three(&world, shape_types[t], 7, MODE_INPLACE | MODE_BOTTOM);
    run_three(&shapes[1], tc_int, 7, MODE_BOTTOM);
    run_three(&self, tc_int, 7, MODE_BOTTOM);

    /* Asymmetric calls (each rank describes its buffers its own way, the signatures match):
     * dense and holed types by rank, a different type map on every rank, MPI_BOTTOM on odd
     * ranks only (also in place), each with the zeros pattern of alltoallv; on world and on the
     * split. MPI_BOTTOM last: a library that sends such a call to the MPI library on some
     * ranks only hangs there. */
    run_asym(&world, ASYM_HOLES, NULL, 7, 0, 1);
    run_asym(&world, ASYM_HOLES, NULL, LARGE_COUNT, 0, 0);
    run_asym(&world, ASYM_BLOCKS, NULL, 7, 0, 1);
    run_asym(&world, ASYM_BLOCKS, NULL, 1, 0, 0);
    run_asym(&shapes[1], ASYM_HOLES, NULL, 7, 0, 1);
    run_asym(&shapes[1], ASYM_BLOCKS, NULL, 7, 0, 1);
    for (int t = 0; t < 4; t++) /* int, vector, 6int>vector, struct>packed */
        run_asym(&world, ASYM_BOTTOM, shape_types[t], 7, 0, 1);
    run_asym(&world, ASYM_BOTTOM, tc_int, 7, MODE_INPLACE, 0);
    run_asym(&shapes[1], ASYM_BOTTOM, tc_int, 7, 0, 1);

#if MPI_VERSION >= 4
    /* The large-count forms: on world every type pair with count 7 and skewed alltoallv, int
     * and vector in place; on the split int with counts 0 and 7. */
    for (int t = 0; t < ntypecases; t++) {
        run_three(&world, &typecases[t], 7, MODE_C);
        run_pattern(&world, &typecases[t], PAT_SKEW, MODE_C);
    }
    run_three(&world, tc_int, 7, MODE_INPLACE | MODE_C);
    run_three(&world, &typecases[3], 7, MODE_BOTTOM | MODE_C);
    run_three(&world, &typecases[3], 7, MODE_INPLACE | MODE_C);
    run_three(&shapes[1], tc_int, 0, MODE_C);
    run_three(&shapes[1], tc_int, 7, MODE_C);
#endif

    if (p > 1)
        wildcard_complete();
    MPI_Comm_free(&reversed);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    free_layouts();
    status = check_finish("coll_check");
    MPI_Finalize();
    return status;
}

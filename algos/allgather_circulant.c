/*
 * allgather_circulant.c: Bruck's circulant-graph concatenation algorithm for MPI_Allgather,
 * k ports.
 *
 * Paper: Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient Algorithms for All-to-All
 * Communications in Multiport Message-Passing Systems", IEEE TPDS 1997
 * (Section 4, pseudocode for k = 1 in Appendix B).
 * The schedule, including the last-round table partition of Proposition 4.2, is
 * algos/sched/circulant.c, shared with the cost model, the unit tests and build/xchg-sched.
 *
 * Phases (d = ceil(log_{k+1} p), n1 = (k+1)^(d-1), n2 = p - n1; negative offsets as in
 * Appendix B):
 *   1. rounds t = 0 .. d-2: rank i holds the (k+1)^t blocks i, i+1, ...; it sends them to
 *      ranks i - z (k+1)^t and receives as many from ranks i + z (k+1)^t, z = 1 .. k;
 *   2. round d-1: the n2 missing blocks, cut byte-wise into k areas of at most
 *      ceil(b n2 / k) bytes (outside the paper's excluded range), each area one message.
 *   Appendix B's final local rotation is folded into the addressing: every run of bytes is
 *   sent from, and received at, its final address in recvbuf (block q at q * b), taken modulo
 *   p * b. Only a run that wraps around the end of recvbuf is packed into scratch (send) or
 *   received into scratch and copied to its two pieces (at most one receive per round). The
 *   k = 1 case is the log-round concatenation of Appendix B for any p.
 *
 * Cost (linear model, b = block bytes): C1 = d; C2 = b (n1 - 1) / k + the largest area
 * = ceil(b (p-1) / k) (Theorem 4.3), except in the range b >= 3, k >= 3,
 * (k+1)^d - k < p < (k+1)^d, where we keep C1 = d and C2 may exceed it by at most b - 1 (the
 * second option of the paper's Remark). Local copies: the own block (none for MPI_IN_PLACE)
 * and the wrapped runs; rank 0 never wraps, the rank that wraps most copies fewer than p
 * blocks, far fewer on average (the paper's code copies p + 1 blocks on every rank).
 * Restrictions: none. Every p >= 1; k of 0 acts as 1, k >= p - 1 as p - 1 (one round, every
 * block sent to every rank).
 *
 * The plan. A plan is a pure function of (p, k, b), so plans are kept in one small
 * process-wide cache (PLAN_CACHE entries, mutex-protected, shared by every communicator and
 * thread): a repeated call shape plans once. An entry is never changed or freed once filled,
 * so a plan found in the cache is used without the lock; when the cache is full, a new shape
 * is planned per call into scratch (O(k + log b), algos/sched/circulant.c). The cache holds at
 * most PLAN_CACHE * k area records (40 bytes each), 2.5 MiB per entry at k = 65535.
 *
 * Scratch (per call, sized once):
 *   first push:  [ areas[k] (uncached plan) | schedule messages[k] | sends[k] | recvs[k] ]
 *   second push: [ packed runs of this rank's largest round | the receive that wraps ]
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "xchg.h"
#include "sched/circulant.h"

#define CIRC_ALIGN 64
#define PLAN_CACHE 8

static xchg_circ_t plan_cache[PLAN_CACHE];
static int plan_cache_used;
static pthread_mutex_t plan_cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* The plan of (p, k, b) (k as xchg_circ_ports returns it): from the cache, planned into the
 * cache while it has room, else planned into *own with the caller's areas (room for k). */
static const xchg_circ_t *circ_plan(int p, int k, size_t b, xchg_circ_t *own,
                                    xchg_circ_area_t *areas)
{
    const xchg_circ_t *found = NULL;
    xchg_circ_area_t *kept;

    pthread_mutex_lock(&plan_cache_lock);
    for (int i = 0; i < plan_cache_used && !found; i++)
        if (plan_cache[i].nranks == p && plan_cache[i].nports == k &&
            plan_cache[i].block_bytes == b)
            found = &plan_cache[i];
    if (!found && plan_cache_used < PLAN_CACHE &&
        (kept = malloc((size_t)k * sizeof *kept)) != NULL) {
        xchg_circ_plan(&plan_cache[plan_cache_used], p, k, b, kept);
        found = &plan_cache[plan_cache_used++];
    }
    pthread_mutex_unlock(&plan_cache_lock);
    if (found)
        return found;
    xchg_circ_plan(own, p, k, b, areas);
    return own;
}

/* Bytes of the round's sends and receives that wrap around the end of recvbuf at this rank
 * (identical consecutive sends are packed once). */
static void wrapped_bytes(const xchg_circ_msg_t *msgs, int n, size_t total, size_t block_bytes,
                          size_t *send_bytes, size_t *recv_bytes)
{
    *send_bytes = *recv_bytes = 0;
    for (int i = 0; i < n; i++) {
        size_t recv_start = (msgs[i].start + (size_t)msgs[i].offset * block_bytes) % total;
        int repeat =
            i > 0 && msgs[i].start == msgs[i - 1].start && msgs[i].bytes == msgs[i - 1].bytes;
        if (!repeat && msgs[i].start + msgs[i].bytes > total)
            *send_bytes += msgs[i].bytes;
        if (recv_start + msgs[i].bytes > total)
            *recv_bytes += msgs[i].bytes;
    }
}

int xchg_allgather_circulant(xchg_ctx_t *ctx, const void *sendblock, void *recvbuf,
                             size_t block_bytes, const xchg_params_t *params)
{
    char *recv = recvbuf, *scratch, *packed, *incoming;
    const size_t b = block_bytes, total = block_bytes * (size_t)ctx->size;
    int p = ctx->size, me = ctx->rank, rc = MPI_SUCCESS, k;
    size_t header, most_packed = 0, most_incoming = 0;
    const xchg_circ_t *plan;
    xchg_circ_t own;
    xchg_circ_area_t *areas;
    xchg_circ_msg_t *msgs;
    xchg_msg_t *sends, *recvs;
    xchg_mark_t mark = xchg_scratch_mark(ctx);

    /* the own block at its place (nothing to do for MPI_IN_PLACE) */
    if ((const char *)sendblock != recv + (size_t)me * b)
        xchg_copy(recv + (size_t)me * b, sendblock, b);
    if (p == 1 || b == 0)
        goto out;

    /* the plan (cached, or planned into scratch) and the message lists */
    k = xchg_circ_ports(p, params->nports);
    header = (size_t)k * (sizeof *areas + sizeof *msgs + 2 * sizeof *sends);
    scratch = xchg_scratch_push(ctx, header);
    if (!scratch) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    areas = (xchg_circ_area_t *)scratch;
    msgs = (xchg_circ_msg_t *)(areas + k);
    sends = (xchg_msg_t *)(msgs + k);
    recvs = sends + k;
    plan = circ_plan(p, k, b, &own, areas);

    /* room for this rank's wrapping runs: the packed sends and the receive of a round */
    for (int t = 0; t < plan->nrounds; t++) {
        size_t send_bytes, recv_bytes;
        int n = xchg_circ_round_messages(plan, t, me, msgs);
        wrapped_bytes(msgs, n, total, b, &send_bytes, &recv_bytes);
        most_packed = send_bytes > most_packed ? send_bytes : most_packed;
        most_incoming = recv_bytes > most_incoming ? recv_bytes : most_incoming;
    }
    most_packed = (most_packed + CIRC_ALIGN - 1) / CIRC_ALIGN * CIRC_ALIGN;
    packed = xchg_scratch_push(ctx, most_packed + most_incoming);
    if (!packed) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    incoming = packed + most_packed;

    for (int t = 0; t < plan->nrounds; t++) {
        int n = xchg_circ_round_messages(plan, t, me, msgs);
        size_t packed_at = 0, incoming_at = 0;

        /* sends from their final addresses; a run that wraps is packed (once if repeated) */
        for (int i = 0; i < n; i++) {
            const xchg_circ_msg_t *m = &msgs[i];
            char *from = recv + m->start;
            size_t own_at = (size_t)me * b;
            if (m->start >= own_at && m->start + m->bytes <= own_at + b) {
                /* a run of the own block: from sendblock, which the copy above read (the copy
                 * in recvbuf was just written, and a peer that copies a message out of this
                 * rank's memory takes it dirty from this core's cache: allgather_ring.c) */
                from = (char *)sendblock + (m->start - own_at);
            } else if (i > 0 && m->start == msgs[i - 1].start && m->bytes == msgs[i - 1].bytes) {
                from = sends[i - 1].buf;
            } else if (m->start + m->bytes > total) {
                size_t head = total - m->start;
                from = packed + packed_at;
                xchg_copy(from, recv + m->start, head);
                xchg_copy(from + head, recv, m->bytes - head);
                packed_at += m->bytes;
            }
            sends[i] = (xchg_msg_t){m->dst, from, m->bytes};
        }

        /* receives at the same addresses, shifted by the offset; a wrapping one in scratch */
        for (int i = 0; i < n; i++) {
            size_t start = (msgs[i].start + (size_t)msgs[i].offset * b) % total;
            char *to = recv + start;
            if (start + msgs[i].bytes > total) {
                to = incoming + incoming_at;
                incoming_at += msgs[i].bytes;
            }
            recvs[i] = (xchg_msg_t){(me + msgs[i].offset) % p, to, msgs[i].bytes};
        }

        rc = xchg_exchange(ctx, sends, n, recvs, n);
        if (rc != MPI_SUCCESS)
            goto out;

        /* the wrapping receive goes to its two pieces */
        for (int i = 0; i < n; i++) {
            size_t start = (msgs[i].start + (size_t)msgs[i].offset * b) % total;
            if (start + msgs[i].bytes > total) {
                const char *from = recvs[i].buf;
                size_t head = total - start;
                xchg_copy(recv + start, from, head);
                xchg_copy(recv, from + head, msgs[i].bytes - head);
            }
        }
    }
out:
    xchg_scratch_release(ctx, mark);
    return rc;
}

/*
 * alltoallv_shm.c: MPI_Alltoallv through shared memory, for a communicator whose ranks all share
 * one machine's memory (the pass and its synchronisation: algos/shm.c).
 *
 * The half is cut into p regions of R bytes, one per sender. Sender i writes, in its region, a
 * header (the offsets of its messages, their total, and its statistics for xchg_carry_t) and
 * then its messages for the other ranks one after the other:
 *
 *   region i:  | offs[0..p-1] total mine[3] (padded to 64) | i->0 | i->1 | ... | i->p-1 |
 *
 * (when the messages are small they share the header's first cache line: one_line() and
 * compact() below).
 *
 * First pass: every rank writes its header, and its messages when they fit (header + total
 * <= R), arrives and waits. Every rank then reads every header, the same values everywhere, so
 * all take the same branch:
 *   - all fit: each copies the messages addressed to it out (the sizes its senders wrote; a
 *     message longer than the receive count is cut there and the call returns
 *     MPI_ERR_TRUNCATE); the statistics come from the headers (carrying costs nothing more);
 *   - some sender's do not: the segment grows to p times the largest region needed (up to
 *     XCHG_SHM_BYTES; shim/shm.c, collective) and the first pass runs again; past the limit the
 *     messages go in pieces: every (i, j) gets a slot of S = (R - header) / p bytes, and
 *     ceil(largest message / S) passes move the pieces.
 * Small messages at up to 10 ranks go first in one pass of lines (line_pass below, algos/shm.c),
 * which carries the call when every sender's line held its messages.
 * Cost: one synchronisation and every byte copied twice when the messages fit (h1 + h2 bytes
 * copied by the busiest rank); else one more per piece. The first call of a communicator with
 * large messages pays for the growth (two collective window calls).
 * Restrictions: the registry's predicate (all ranks on one machine); without a segment (none
 * could be had, on every rank alike) or with regions too small for the headers it runs pairwise.
 * Bytes of recvbuf outside the given blocks are never touched.
 */
#include <string.h>

#include "xchg.h"
#include "sched/shm.h"

#define STAT_WORDS 3 /* the statistics in a header, after offs[p] and the total */

static size_t header_bytes(int p)
{
    return xchg_shm_header_bytes(p);
}

size_t xchg_alltoallv_shm_region(const xchg_ctx_t *ctx)
{
    return xchg_shm_region(ctx->size, ctx->shm->half_bytes);
}

/* Small messages share the header's cache line. A receiver of small messages then reads one
 * line of each sender's instead of two (MPICH, 2 ranks on the 2-core VM: 1 B through shm took
 * 0.28 to 0.31 us a call with the messages on a line of their own, where an alltoall of 1 B,
 * which reads one line, took 0.21). Three layouts, chosen from p and the total, which sender and
 * receivers read alike from the header:
 *   one line   offs[0..p], the statistics, the messages, all within the first 64 bytes (every
 *              call carries the statistics, so a receiver reads this one line of each sender);
 *   compact    offs[0..p] and the messages within the first line, the statistics on the next;
 *   padded     offs[0..p] and the statistics, the messages from the padded header on, aligned
 *              for large copies. */
static size_t offs_bytes(int p)
{
    return ((size_t)p + 1) * sizeof(uint64_t); /* offs[0..p] */
}

static int one_line(int p, uint64_t total)
{
    return offs_bytes(p) + STAT_WORDS * sizeof(uint64_t) + total <= 64;
}

static int compact(int p, uint64_t total)
{
    return offs_bytes(p) + total <= 64;
}

static size_t data_at(int p, uint64_t total)
{
    if (one_line(p, total))
        return offs_bytes(p) + STAT_WORDS * sizeof(uint64_t);
    return compact(p, total) ? offs_bytes(p) : header_bytes(p);
}

static size_t stats_at(int p, uint64_t total)
{
    return compact(p, total) && !one_line(p, total) ? 64 : offs_bytes(p);
}

/* This rank's header, and its messages when they fit (whether every sender's did, every rank
 * reads from the headers after the pass). */
static void write_region(xchg_ctx_t *ctx, const char *send, const size_t *sendbytes,
                         const size_t *sendoffs, const xchg_carry_t *carry)
{
    int p = ctx->size, rank = ctx->rank;
    size_t header = header_bytes(p), region = xchg_alltoallv_shm_region(ctx);
    char *mine = xchg_shm_half(ctx) + (size_t)rank * region;
    uint64_t *offs = (uint64_t *)mine, at = 0;

    for (int j = 0; j < p; j++) {
        offs[j] = at;
        if (j != rank)
            at += sendbytes[j];
    }
    offs[p] = at;
    for (int w = 0; w < STAT_WORDS; w++)
        ((uint64_t *)(mine + stats_at(p, at)))[w] = carry ? carry->mine[w] : 0;
    if (header + at > region)
        return;
    mine += data_at(p, at);
    for (int j = 0; j < p; j++)
        if (j != rank)
            xchg_copy(mine + offs[j], send + sendoffs[j], sendbytes[j]);
}

/* The one-line pass (algos/shm.c), for small messages at up to LINE_P ranks. A sender's line:
 *
 *   | fits | mine[3] | its message sizes to the others, in rank order (own left out) | messages |
 *
 * in 32-bit words, then the messages one after another. fits is 0 when its messages, its sizes
 * or its statistics do not fit (then nothing follows). Every rank reads every line, so all see
 * the same flags: when every sender's fit, the pass carried the call (1); else nothing was
 * copied, every rank returns 0 alike and the call goes through the half. As the counts are
 * known only inside the call, the line is tried first; after a call it could not carry, the next
 * LINE_SKIP calls go through the half at once, so a communicator of larger messages pays a
 * line pass every LINE_SKIP + 1 calls (a two-process test of the protocol alone on the 2-core
 * VM: 0.13 us a pass). */
#define LINE_P 10
#define LINE_SKIP 64
#define LINE_FIXED 4 /* fits and the three statistics */

static size_t line_header(int p)
{
    return (LINE_FIXED + (size_t)p - 1) * sizeof(uint32_t);
}

static int line_pass(xchg_ctx_t *ctx, const char *send, const size_t *sendbytes,
                     const size_t *sendoffs, char *recv, const size_t *recvbytes,
                     const size_t *recvoffs, xchg_carry_t *carry, size_t *incoming)
{
    int p = ctx->size, rank = ctx->rank, all;
    size_t header = line_header(p), at = header;
    uint32_t words[LINE_FIXED + LINE_P - 1] = {1};
    char *mine = xchg_shm_line(ctx, rank);

    for (int w = 0; w < STAT_WORDS; w++) {
        uint64_t v = carry ? carry->mine[w] : 0;
        words[0] = v > UINT32_MAX ? 0 : words[0];
        words[1 + w] = (uint32_t)v;
    }
    for (int j = 0, k = LINE_FIXED; j < p; j++)
        if (j != rank) {
            if (sendbytes[j] > XCHG_SHM_LINE_DATA - at)
                words[0] = 0;
            else
                at += sendbytes[j];
            words[k++] = (uint32_t)sendbytes[j];
        }
    memcpy(mine, words, header);
    for (int j = 0, to = (int)header; j < p && words[0]; j++)
        if (j != rank) {
            xchg_copy(mine + to, send + sendoffs[j], sendbytes[j]);
            to += (int)sendbytes[j];
        }
    xchg_shm_line_arrive(ctx);
    all = words[0] != 0; /* every sender's flag, this rank's too: the same on every rank */
    for (int i = 0; i < p; i++) {
        uint32_t fits;
        if (i == rank)
            continue;
        memcpy(&fits, xchg_shm_line(ctx, i), sizeof fits);
        all = all && fits;
    }
    for (int i = 0; i < p && all; i++) {
        const char *line = xchg_shm_line(ctx, i);
        size_t from = header;
        if (i == rank) {
            incoming[i] = 0;
            continue;
        }
        memcpy(words, line, header);
        for (int j = 0, k = LINE_FIXED; j < p; j++) {
            if (j == i)
                continue;
            if (j == rank) {
                incoming[i] = words[k];
                break;
            }
            from += words[k++];
        }
        xchg_copy(recv + recvoffs[i], line + from,
                  incoming[i] < recvbytes[i] ? incoming[i] : recvbytes[i]);
        for (int w = 0; carry && w < STAT_WORDS; w++)
            if (words[1 + w] > carry->agreed[w])
                carry->agreed[w] = words[1 + w];
    }
    xchg_shm_next(ctx);
    return all;
}

int xchg_alltoallv_shm(xchg_ctx_t *ctx, const void *sendbuf, const size_t *sendbytes,
                       const size_t *sendoffs, void *recvbuf, const size_t *recvbytes,
                       const size_t *recvoffs, const xchg_call_t *call, const xchg_params_t *params,
                       xchg_carry_t *carry)
{
    const char *send = sendbuf;
    char *recv = recvbuf;
    int p = ctx->size, rank = ctx->rank, rc = MPI_SUCCESS, fits;
    size_t header = header_bytes(p), region = 0, most, largest, slot, *incoming;
    char *half = NULL;
    xchg_mark_t mark = xchg_scratch_mark(ctx);

    xchg_copy(recv + recvoffs[rank], send + sendoffs[rank], recvbytes[rank]);
    if (carry) {
        memcpy(carry->agreed, carry->mine, sizeof carry->agreed);
        carry->done = 1;
    }
    if (p == 1)
        return MPI_SUCCESS;
    incoming = xchg_scratch_push(ctx, (size_t)p * sizeof *incoming);
    if (!incoming)
        return MPI_ERR_NO_MEM;
    rc = ctx->shm_reserve ? ctx->shm_reserve(ctx, xchg_shm_need(XCHG_ALLTOALLV, p, 0, 0))
                          : MPI_ERR_OTHER;
    if (rc == MPI_SUCCESS && p <= LINE_P && xchg_shm_line_fits(ctx, line_header(p))) {
        if (ctx->shm->v_line_skip > 0)
            ctx->shm->v_line_skip--;
        else if (line_pass(ctx, send, sendbytes, sendoffs, recv, recvbytes, recvoffs, carry,
                           incoming))
            goto out;
        else
            ctx->shm->v_line_skip = LINE_SKIP;
    }
    for (;;) {
        size_t before;
        if (rc != MPI_SUCCESS || xchg_alltoallv_shm_region(ctx) < header + 64) {
            /* no segment, or too small for the headers: messages (on every rank alike) */
            if (carry)
                carry->done = 0;
            xchg_scratch_release(ctx, mark);
            return xchg_alltoallv_pairwise(ctx, sendbuf, sendbytes, sendoffs, recvbuf, recvbytes,
                                           recvoffs, call, params, carry);
        }
        region = xchg_alltoallv_shm_region(ctx);
        half = xchg_shm_half(ctx);
        write_region(ctx, send, sendbytes, sendoffs, carry);
        xchg_shm_arrive(ctx);
        /* every header: the same values on every rank */
        fits = 1;
        most = 0;
        for (int i = 0; i < p; i++) {
            const uint64_t *offs = (const uint64_t *)(half + (size_t)i * region);
            if (header + offs[p] > region)
                fits = 0;
            if (offs[p] > most)
                most = offs[p];
            incoming[i] = i == rank ? 0 : offs[rank + 1] - offs[rank];
            for (int w = 0; carry && w < STAT_WORDS; w++) {
                uint64_t v = ((const uint64_t *)((const char *)offs + stats_at(p, offs[p])))[w];
                if (v > carry->agreed[w])
                    carry->agreed[w] = v;
            }
        }
        if (fits) {
            for (int i = 0; i < p; i++) {
                const uint64_t *offs = (const uint64_t *)(half + (size_t)i * region);
                size_t n = incoming[i] < recvbytes[i] ? incoming[i] : recvbytes[i];
                if (i != rank)
                    xchg_copy(recv + recvoffs[i],
                              half + (size_t)i * region + data_at(p, offs[p]) + offs[rank], n);
            }
            goto out;
        }
        /* the largest message of all, from every sender's offsets in this first pass's half,
         * read before growing: the growth's agreement may pass through the segment, and then
         * the pieces' first pass writes this half again */
        largest = 0;
        for (int i = 0; i < p; i++) {
            const uint64_t *offs = (const uint64_t *)(half + (size_t)i * region);
            for (int j = 0; j < p; j++)
                if (j != i && offs[j + 1] - offs[j] > largest)
                    largest = offs[j + 1] - offs[j];
        }
        /* grow (up to XCHG_SHM_BYTES) and run the first pass again, or go in pieces */
        before = ctx->shm->half_bytes;
        if (before >= ctx->topo.shm_bytes || xchg_shm_need(XCHG_ALLTOALLV, p, 0, most) == SIZE_MAX)
            break;
        rc = ctx->shm_reserve(ctx, xchg_shm_need(XCHG_ALLTOALLV, p, 0, most));
        if (rc == MPI_SUCCESS && ctx->shm->half_bytes == before)
            break;
    }
    slot = ((region - header) / (size_t)p) & ~(size_t)7;
    if (slot == 0) {
        xchg_scratch_release(ctx, mark);
        return xchg_alltoallv_pairwise(ctx, sendbuf, sendbytes, sendoffs, recvbuf, recvbytes,
                                       recvoffs, call, params, carry);
    }
    for (size_t at = 0; at < largest; at += slot) {
        char *mine;
        half = xchg_shm_half(ctx);
        mine = half + (size_t)rank * region + header;
        for (int j = 0; j < p; j++)
            if (j != rank && at < sendbytes[j])
                xchg_copy(mine + (size_t)j * slot, send + sendoffs[j] + at,
                          sendbytes[j] - at < slot ? sendbytes[j] - at : slot);
        xchg_shm_arrive(ctx);
        for (int i = 0; i < p; i++) {
            size_t n = incoming[i] < recvbytes[i] ? incoming[i] : recvbytes[i];
            if (i != rank && at < n)
                xchg_copy(recv + recvoffs[i] + at,
                          half + (size_t)i * region + header + (size_t)rank * slot,
                          n - at < slot ? n - at : slot);
        }
    }
out:
    for (int i = 0; i < p; i++)
        if (incoming[i] > recvbytes[i])
            rc = MPI_ERR_TRUNCATE;
    xchg_scratch_release(ctx, mark);
    return rc;
}

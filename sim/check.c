/*
 * check.c: the simulated ranks' buffers, filled from a formula and checked byte by byte, as
 * the MPI tests do (tests/mpi).
 *
 * Byte i of the message from rank s to rank d is data_byte(s, d, i) (an allgather block:
 * d = p). Every receive buffer has GUARD bytes of a sentinel before and after it, and an
 * alltoallv's receive ranges have GUARD sentinel bytes between them too; the receive ranges
 * start filled with sentinel bytes as well, so a block that is never written is found. After a
 * run every byte of every receive buffer is checked (data where a message lands, the sentinel
 * everywhere else) and every send buffer is checked unchanged.
 *
 * Alltoallv counts come from tuning/workloads.c (uniform, hrel, ggroup): every rank holds
 * n = p * bytes units of one byte, so "bytes" is the mean block. Send ranges lie in reverse
 * order of destination with a 3-byte gap after each, so offsets are exercised.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define GUARD 16
#define SEND_GAP 3

static inline unsigned char data_byte(int src, int dst, size_t i)
{
    uint32_t h = (uint32_t)src * 0x9E3779B1u + (uint32_t)dst * 0x85EBCA77u +
                 (uint32_t)i * 0xC2B2AE3Du + (uint32_t)(i >> 32);
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 13;
    return (unsigned char)h;
}

static inline unsigned char guard_byte(int rank, size_t pos)
{
    return (unsigned char)(0xA5u ^ (unsigned)(pos * 29u) ^ (unsigned)(rank * 7u));
}

static void fill_guard(unsigned char *buf, size_t len, int rank)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = guard_byte(rank, i);
}

static void fill_data(unsigned char *buf, size_t len, int src, int dst)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = data_byte(src, dst, i);
}

/* Alltoallv: the counts of every pair and each rank's layout. */
static int layout_v(sim_job_t *job)
{
    int p = job->p;
    size_t n = (size_t)p * job->bytes;

    job->counts = malloc((size_t)p * (size_t)p * sizeof *job->counts);
    job->sendoffs = malloc((size_t)p * (size_t)p * sizeof *job->sendoffs);
    job->recvoffs = malloc((size_t)p * (size_t)p * sizeof *job->recvoffs);
    job->recvbytes = malloc((size_t)p * (size_t)p * sizeof *job->recvbytes);
    if (!job->counts || !job->sendoffs || !job->recvoffs || !job->recvbytes)
        return -1;
    for (int s = 0; s < p; s++)
        xchg_workload_counts(&job->wl, p, n, s, job->counts + (size_t)s * p);
    for (int r = 0; r < p; r++) {
        size_t *so = job->sendoffs + (size_t)r * p, *ro = job->recvoffs + (size_t)r * p;
        size_t *rb = job->recvbytes + (size_t)r * p, at = 0, sent = 0, recvd = 0;
        for (int d = p - 1; d >= 0; d--) {
            so[d] = at;
            at += job->counts[(size_t)r * p + d] + SEND_GAP;
            sent += job->counts[(size_t)r * p + d];
        }
        job->send_len[r] = at;
        at = GUARD;
        for (int s = 0; s < p; s++) {
            size_t c = job->counts[(size_t)s * p + r];
            rb[s] = c;
            ro[s] = at;
            at += c + GUARD;
            recvd += c;
            job->max_block = c > job->max_block ? c : job->max_block;
        }
        job->recv_len[r] = at;
        job->h1 = sent > job->h1 ? sent : job->h1;
        job->h2 = recvd > job->h2 ? recvd : job->h2;
    }
    return 0;
}

int sim_job_init(sim_job_t *job)
{
    int p = job->p;
    size_t b = job->bytes, total = (size_t)p * b;

    job->send = calloc((size_t)p, sizeof *job->send);
    job->recv = calloc((size_t)p, sizeof *job->recv);
    job->send_len = calloc((size_t)p, sizeof *job->send_len);
    job->recv_len = calloc((size_t)p, sizeof *job->recv_len);
    if (!job->send || !job->recv || !job->send_len || !job->recv_len)
        return -1;
    if (job->coll == XCHG_ALLTOALLV && layout_v(job) != 0)
        return -1;
    for (int r = 0; r < p; r++) {
        if (job->coll != XCHG_ALLTOALLV) {
            job->send_len[r] = job->coll == XCHG_ALLTOALL ? total : job->inplace ? 0 : b;
            job->recv_len[r] = total + 2 * GUARD;
        }
        job->send[r] = malloc(job->send_len[r] ? job->send_len[r] : 1);
        job->recv[r] = malloc(job->recv_len[r]);
        if (!job->send[r] || !job->recv[r])
            return -1;
        fill_guard(job->recv[r], job->recv_len[r], r);
        if (job->coll == XCHG_ALLTOALL)
            for (int d = 0; d < p; d++)
                fill_data(job->send[r] + (size_t)d * b, b, r, d);
        else if (job->coll == XCHG_ALLGATHER)
            fill_data(job->inplace ? job->recv[r] + GUARD + (size_t)r * b : job->send[r], b, r, p);
        else {
            const size_t *so = job->sendoffs + (size_t)r * p;
            fill_guard(job->send[r], job->send_len[r], r);
            for (int d = 0; d < p; d++)
                fill_data(job->send[r] + so[d], job->counts[(size_t)r * p + d], r, d);
        }
    }
    return 0;
}

/* Where the algorithm gets its buffers. */
unsigned char *sim_job_recvbuf(const sim_job_t *job, int rank)
{
    return job->coll == XCHG_ALLTOALLV ? job->recv[rank] : job->recv[rank] + GUARD;
}

/* Compare len bytes with a formula; report the first difference. */
static int expect(const unsigned char *at, size_t len, int src, int dst, int guard_rank,
                  size_t guard_pos, const char *what, int rank, char *err, size_t errlen)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char want = guard_rank >= 0 ? guard_byte(guard_rank, guard_pos + i)
                                             : data_byte(src, dst, i);
        if (at[i] != want) {
            snprintf(err, errlen, "rank %d: byte %zu of %s is 0x%02x, expected 0x%02x", rank, i,
                     what, at[i], want);
            return -1;
        }
    }
    return 0;
}

static int check_rank(const sim_job_t *job, int r, char *err, size_t errlen)
{
    int p = job->p;
    size_t b = job->bytes;
    const unsigned char *rv = job->recv[r], *sd = job->send[r];
    char what[96];

    if (job->coll != XCHG_ALLTOALLV) {
        if (expect(rv, GUARD, 0, 0, r, 0, "the guard before the receive buffer", r, err, errlen) ||
            expect(rv + GUARD + (size_t)p * b, GUARD, 0, 0, r, GUARD + (size_t)p * b,
                   "the guard after the receive buffer", r, err, errlen))
            return -1;
        for (int s = 0; s < p; s++) {
            snprintf(what, sizeof what, "the block from rank %d", s);
            if (expect(rv + GUARD + (size_t)s * b, b, s, job->coll == XCHG_ALLTOALL ? r : p, -1,
                       0, what, r, err, errlen))
                return -1;
            snprintf(what, sizeof what, "the send block for rank %d (changed)", s);
            if (job->coll == XCHG_ALLTOALL && expect(sd + (size_t)s * b, b, r, s, -1, 0, what, r,
                                                     err, errlen))
                return -1;
        }
        if (job->coll == XCHG_ALLGATHER && !job->inplace &&
            expect(sd, b, r, p, -1, 0, "the send block (changed)", r, err, errlen))
            return -1;
        return 0;
    }
    /* alltoallv: ranges and the guards between them; the send buffer with its gaps */
    {
        const size_t *ro = job->recvoffs + (size_t)r * p, *so = job->sendoffs + (size_t)r * p;
        size_t at = 0;
        for (int s = 0; s < p; s++) {
            size_t c = job->counts[(size_t)s * p + r];
            snprintf(what, sizeof what, "the guard before the message from rank %d", s);
            if (expect(rv + at, ro[s] - at, 0, 0, r, at, what, r, err, errlen))
                return -1;
            snprintf(what, sizeof what, "the message from rank %d", s);
            if (expect(rv + ro[s], c, s, r, -1, 0, what, r, err, errlen))
                return -1;
            at = ro[s] + c;
        }
        if (expect(rv + at, job->recv_len[r] - at, 0, 0, r, at, "the guard after the last message",
                   r, err, errlen))
            return -1;
        for (int d = 0; d < p; d++) {
            snprintf(what, sizeof what, "the send range for rank %d (changed)", d);
            if (expect(sd + so[d], job->counts[(size_t)r * p + d], r, d, -1, 0, what, r, err,
                       errlen))
                return -1;
        }
    }
    return 0;
}

int sim_job_check(const sim_job_t *job, char *err, size_t errlen)
{
    for (int r = 0; r < job->p; r++)
        if (check_rank(job, r, err, errlen) != 0)
            return -1;
    return 0;
}

void sim_job_free(sim_job_t *job)
{
    for (int r = 0; r < job->p && job->send; r++) {
        free(job->send[r]);
        if (job->recv)
            free(job->recv[r]);
    }
    free(job->send);
    free(job->recv);
    free(job->send_len);
    free(job->recv_len);
    free(job->counts);
    free(job->sendoffs);
    free(job->recvoffs);
    free(job->recvbytes);
}

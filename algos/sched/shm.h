/*
 * shm.h: the arithmetic of the shm algorithms' segment that their predicate, their cost model
 * (tuning/) and the algorithms (algos/alltoall_shm.c and its two siblings) share. Pure C: no MPI.
 *
 * A half of H bytes (at most topo.shm_bytes) holds one pass:
 *   alltoall   p^2 slots of floor(H / p^2) bytes (rounded down to 64 above 64);
 *   allgather  p slots of floor(H / p) bytes (likewise);
 *   alltoallv  p regions of floor(H / p) bytes rounded down to 64, each a header
 *              (xchg_shm_header_bytes) and the sender's messages; in pieces, p slots of
 *              floor((region - header) / p) bytes rounded down to 8.
 */
#ifndef XCHG_SCHED_SHM_H
#define XCHG_SCHED_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* alltoallv: a region's header, offs[p], the total and three statistics, padded to 64 */
static inline size_t xchg_shm_header_bytes(int p)
{
    size_t bytes = ((size_t)p + 4) * sizeof(uint64_t);
    return (bytes + 63) & ~(size_t)63;
}

/* alltoall and allgather: the bytes of a block that one pass carries through a half of half
 * bytes (0 when the slots do not fit) */
static inline size_t xchg_shm_piece(int coll, int p, size_t half)
{
    size_t slots = coll == XCHG_ALLTOALL ? (size_t)p * (size_t)p : (size_t)p;
    size_t piece = half / slots;
    return piece > 64 ? piece - piece % 64 : piece;
}

/* alltoallv: a sender's region in a half of half bytes */
static inline size_t xchg_shm_region(int p, size_t half)
{
    return (half / (size_t)p) & ~(size_t)63;
}

/* The bytes that one pass of coll at p ranks asks of a half (the shm algorithms' shm_reserve;
 * learning prices a candidate's set-up by it, shim/learn.c), SIZE_MAX where that overflows:
 * alltoall every block of the p ranks, allgather every block once, alltoallv a region per
 * sender for its header and most_sent bytes (the most that a sender writes past its header)
 * and 64 more, as a region is rounded down to 64 (block unused). */
static inline size_t xchg_shm_need(int coll, int p, size_t block, size_t most_sent)
{
    size_t n = (size_t)p, region;
    if (coll == XCHG_ALLTOALL)
        return block <= SIZE_MAX / (n * n) ? n * n * block : SIZE_MAX;
    if (coll == XCHG_ALLGATHER)
        return block <= SIZE_MAX / n ? n * block : SIZE_MAX;
    region = xchg_shm_header_bytes(p) + 64;
    return most_sent <= SIZE_MAX / n - region ? n * (region + most_sent) : SIZE_MAX;
}

/* 1 when a half of limit bytes can serve coll at p ranks at all (in pieces if need be) */
static inline int xchg_shm_fits(int coll, int p, size_t limit)
{
    if (p <= 1)
        return 1;
    if (coll == XCHG_ALLTOALLV)
        return xchg_shm_region(p, limit) >= xchg_shm_header_bytes(p) + 64;
    return xchg_shm_piece(coll, p, limit) > 0;
}

#endif

/*
 * shape.h: what a call's shape is made of, pure: the size key every decision reads, the size
 * buckets of learning and of the alltoallv decision cache, and alltoallv's skew class. All of
 * them are computed from values that every rank of the communicator has alike.
 */
#ifndef XCHG_SHAPE_H
#define XCHG_SHAPE_H

#include <stddef.h>

#include "../algos/sched/types.h"

/* The size key (shape.c says what it is for each collective). */
size_t xchg_size_key(const xchg_call_t *call);
/* Size buckets: 0, 1, then two per power of two, [2^m, 1.5 2^m) and [1.5 2^m, 2^(m+1)). */
unsigned xchg_bucket(size_t key);
void xchg_bucket_range(unsigned bucket, size_t *lo, size_t *hi);
/* alltoallv: how many times two the largest message exceeds the size key (0 for even counts,
 * at most 15); 0 for the other collectives. */
unsigned xchg_skew_class(const xchg_call_t *call);

#endif

/*
 * shape.c: a call's shape (shape.h): the size key, the size buckets and alltoallv's skew class.
 */
#include "shape.h"

/* The size key. Whoever builds an xchg_call_t stores it in block_bytes (for alltoall and
 * allgather it is that already); everything after reads block_bytes.
 * alltoall and allgather: the bytes of one block. alltoallv: the mean block of
 * the busiest rank, ceil(max(h1, h2) / p), from the agreed h1 (most bytes any rank sends) and
 * h2 (most bytes any rank receives). The tuning table's block ranges and the model's inputs
 * use this key and nothing else. */
size_t xchg_size_key(const xchg_call_t *call)
{
    size_t h;
    if (call->coll != XCHG_ALLTOALLV)
        return call->block_bytes;
    h = call->max_send_bytes > call->max_recv_bytes ? call->max_send_bytes : call->max_recv_bytes;
    return call->comm_size > 0 ? (h + (size_t)call->comm_size - 1) / (size_t)call->comm_size : h;
}

unsigned xchg_bucket(size_t key)
{
    int msb;
    if (key < 2)
        return (unsigned)key;
    msb = 63 - __builtin_clzll((unsigned long long)key);
    return 2 * (unsigned)msb + (unsigned)((key >> (msb - 1)) & 1);
}

void xchg_bucket_range(unsigned bucket, size_t *lo, size_t *hi)
{
    int msb = (int)bucket / 2;
    if (bucket < 2) {
        *lo = *hi = bucket;
        return;
    }
    *lo = ((size_t)1 << msb) + (bucket & 1 ? (size_t)1 << (msb - 1) : 0);
    *hi = ((size_t)1 << msb) + ((size_t)1 << (msb - 1)) * (bucket & 1 ? 2 : 1) - 1;
}

/* alltoallv: how much larger the largest message is than the size key, in powers of two
 * (0 for even counts, capped at 15). Equal on all ranks: it comes from agreed values. */
unsigned xchg_skew_class(const xchg_call_t *call)
{
    size_t key = call->block_bytes, ratio;
    unsigned c = 0;
    if (call->coll != XCHG_ALLTOALLV || key == 0)
        return 0;
    ratio = call->max_block_bytes / key;
    while (ratio > 1 && c < 15) {
        ratio /= 2;
        c++;
    }
    return c;
}

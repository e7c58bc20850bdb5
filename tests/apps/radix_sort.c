/*
 * radix_sort.c: the stable parallel integer radix sort of Bader, Helman and JaJa
 * ("Practical parallel algorithms for personalized communication and integer sorting", 1996,
 * Section 4 and Appendix C) as an ordinary MPI
 * program. It knows nothing of xchg; run it natively or with the library preloaded, e.g.
 *     scripts/xchgrun -n 8 build/apps/radix_sort -d N -n 65536
 *
 * 32-bit keys, m per rank, sorted on all 32 bits by ceil(32/b) passes of a counting sort on
 * b-bit digits (R = 2^b buckets), least significant digit first. One pass (Section 4.1):
 *   1. local histogram I[k] of the digit;
 *   2. transpose (MPI_Alltoall, R/p counts per block): rank q gets the counts of digits
 *      [qR/p, (q+1)R/p) from every rank;
 *   3. prefix sums over ranks for each of those digits, and each digit's total;
 *   4. inverse transpose (MPI_Alltoall, 2R/p per block) of (prefix, total) pairs;
 *   5. ranks: the global position of every local key = keys of smaller digits + keys of the
 *      same digit on lower ranks + keys of the same digit before it on this rank;
 *   6. routing: each key goes to position pos, i.e. rank pos / m, slot pos mod m, with one
 *      MPI_Alltoall of the counts and one MPI_Alltoallv of (key, slot, origin) records.
 * When p does not divide R, the buckets are padded to p ceil(R/p) (the extra ones stay empty).
 *
 * Inputs (Section 5.1), position pos = rank m + i of the initial order:
 *   R  31-bit random keys (a counter-based generator, so any rank can recompute any key);
 *   S  the AND of five such keys (entropy 6.2 bits);
 *   C  keys 0 .. N-1 dealt cyclically: rank r holds r, r + p, r + 2p, ...;
 *   N  NAS IS: x_{k+1} = a x_k mod 2^46, a = 5^13, x_0 = 314159265, key = the average of
 *      four consecutive x / 2^46 scaled to [0, 2^19) (exact integers: (x1+x2+x3+x4) >> 29);
 *      the first m keys on rank 0, the next m on rank 1, ... (jump-ahead by a^(4 pos)).
 *
 * Checks: sorted within and across ranks; stable (each record carries its original position,
 * and equal keys must keep increasing positions); every key is the one generated for its
 * position; the positions form a permutation (sum of a hash of them, over all ranks).
 * Prints the time of the sort (the slowest rank; best and median of -i runs) and
 * "radix_sort: OK", or failure lines and "radix_sort: FAILED" with exit status 1.
 *
 * Usage: radix_sort [-d R|S|C|N] [-n keys_per_rank] [-b bits_per_digit] [-i runs]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct record {
    uint32_t key;
    uint32_t slot; /* position on the receiving rank (routing only) */
    uint64_t origin;
} record_t;

#define NAS_A 1220703125ull /* 5^13 */
#define NAS_SEED 314159265ull
#define MASK46 ((1ull << 46) - 1)

static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* a^e mod 2^46 (uint64 products wrap mod 2^64, whose low 46 bits are the answer) */
static uint64_t pow46(uint64_t a, uint64_t e)
{
    uint64_t r = 1;
    for (; e; e >>= 1, a = (a * a) & MASK46)
        if (e & 1)
            r = (r * a) & MASK46;
    return r;
}

/* NAS IS key at position pos: uses x_{4pos+1} .. x_{4pos+4}; *state (x_{4pos}) advances */
static uint32_t nas_next(uint64_t *state)
{
    uint64_t sum = 0;
    for (int j = 0; j < 4; j++) {
        *state = (*state * NAS_A) & MASK46;
        sum += *state;
    }
    return (uint32_t)(sum >> 29);
}

static uint32_t key_at(char dist, uint64_t pos, int p, uint64_t m)
{
    switch (dist) {
    case 'S': {
        uint64_t k = 0x7fffffff;
        for (int j = 0; j < 5; j++)
            k &= mix64(5 * pos + (uint64_t)j) & 0x7fffffff;
        return (uint32_t)k;
    }
    case 'C':
        return (uint32_t)((pos % m) * (uint64_t)p + pos / m);
    case 'N': {
        uint64_t state = (pow46(NAS_A, 4 * pos) * NAS_SEED) & MASK46;
        return nas_next(&state);
    }
    default:
        return (uint32_t)(mix64(pos) & 0x7fffffff);
    }
}

static void generate(record_t *keys, char dist, int rank, int p, uint64_t m)
{
    uint64_t first = (uint64_t)rank * m;
    uint64_t state = (pow46(NAS_A, 4 * first) * NAS_SEED) & MASK46;
    for (uint64_t i = 0; i < m; i++) {
        keys[i].key = dist == 'N' ? nas_next(&state) : key_at(dist, first + i, p, m);
        keys[i].slot = 0;
        keys[i].origin = first + i;
    }
}

typedef struct sorter {
    int p, rank, bits;
    uint64_t m;
    size_t buckets, per_rank; /* R padded to p * per_rank */
    uint64_t *hist, *trans, *pairs, *back, *base, *seen;
    int *sendcounts, *recvcounts, *sdispls, *rdispls;
    record_t *packed, *landed;
    MPI_Datatype rec_type;
} sorter_t;

/* One counting-sort pass on digit bits [shift, shift + bits): keys -> out. */
static void counting_pass(sorter_t *s, const record_t *keys, record_t *out, int shift)
{
    uint32_t mask = (uint32_t)((1ull << s->bits) - 1);
    size_t S = s->per_rank, padded = S * (size_t)s->p, offset = 0;
    int p = s->p;

    /* 1. local histogram */
    memset(s->hist, 0, padded * sizeof *s->hist);
    for (uint64_t i = 0; i < s->m; i++)
        s->hist[(keys[i].key >> shift) & mask]++;
    /* 2. transpose: trans[k S + v] = count of digit (rank S + v) on rank k */
    MPI_Alltoall(s->hist, (int)S, MPI_UINT64_T, s->trans, (int)S, MPI_UINT64_T, MPI_COMM_WORLD);
    /* 3. prefix sums over ranks, totals; laid out for the inverse transpose as
     *    pairs[k 2S + 2v] = keys of digit v on ranks < k, pairs[k 2S + 2v + 1] = total */
    for (size_t v = 0; v < S; v++) {
        uint64_t run = 0;
        for (int k = 0; k < p; k++) {
            s->pairs[(size_t)k * 2 * S + 2 * v] = run;
            run += s->trans[(size_t)k * S + v];
        }
        for (int k = 0; k < p; k++)
            s->pairs[(size_t)k * 2 * S + 2 * v + 1] = run;
    }
    /* 4. inverse transpose: back[q 2S + 2v (+1)] for digit q S + v */
    MPI_Alltoall(s->pairs, (int)(2 * S), MPI_UINT64_T, s->back, (int)(2 * S), MPI_UINT64_T,
                 MPI_COMM_WORLD);
    /* 5. ranks: base[w] = first global position of this rank's keys with digit w */
    for (size_t w = 0; w < padded; w++) {
        size_t q = w / S, v = w % S;
        s->base[w] = offset + s->back[q * 2 * S + 2 * v];
        offset += s->back[q * 2 * S + 2 * v + 1];
        s->seen[w] = 0;
    }
    /* 6. route every key to its position: counts, one alltoall of counts, the alltoallv */
    for (int k = 0; k < p; k++)
        s->sendcounts[k] = 0;
    for (uint64_t i = 0; i < s->m; i++) {
        uint32_t w = (keys[i].key >> shift) & mask;
        s->sendcounts[(s->base[w] + s->seen[w]++) / s->m]++;
    }
    s->sdispls[0] = 0;
    for (int k = 1; k < p; k++)
        s->sdispls[k] = s->sdispls[k - 1] + s->sendcounts[k - 1];
    for (size_t w = 0; w < padded; w++)
        s->seen[w] = 0;
    {
        int *cursor = s->rdispls; /* reused as a cursor before the receive side needs it */
        memcpy(cursor, s->sdispls, (size_t)p * sizeof *cursor);
        for (uint64_t i = 0; i < s->m; i++) {
            uint32_t w = (keys[i].key >> shift) & mask;
            uint64_t pos = s->base[w] + s->seen[w]++;
            record_t *r = &s->packed[cursor[pos / s->m]++];
            *r = keys[i];
            r->slot = (uint32_t)(pos % s->m);
        }
    }
    MPI_Alltoall(s->sendcounts, 1, MPI_INT, s->recvcounts, 1, MPI_INT, MPI_COMM_WORLD);
    s->rdispls[0] = 0;
    for (int k = 1; k < p; k++)
        s->rdispls[k] = s->rdispls[k - 1] + s->recvcounts[k - 1];
    MPI_Alltoallv(s->packed, s->sendcounts, s->sdispls, s->rec_type, s->landed, s->recvcounts,
                  s->rdispls, s->rec_type, MPI_COMM_WORLD);
    for (uint64_t i = 0; i < s->m; i++)
        out[s->landed[i].slot] = s->landed[i];
}

static long long verify(const record_t *keys, char dist, int rank, int p, uint64_t m)
{
    long long bad = 0;
    uint64_t hash_out = 0, hash_in = 0, sums[2], totals[2];
    record_t edge[2], prev;
    MPI_Status status;

    for (uint64_t i = 0; i < m; i++) {
        const record_t *r = &keys[i];
        if (i > 0 && (r[-1].key > r->key || (r[-1].key == r->key && r[-1].origin >= r->origin))) {
            if (bad++ < 5)
                fprintf(stderr,
                        "radix_sort: rank %d: out of order at %llu: key %u (from %llu) "
                        "after key %u (from %llu)\n",
                        rank, (unsigned long long)i, r->key, (unsigned long long)r->origin,
                        r[-1].key, (unsigned long long)r[-1].origin);
        }
        if (r->origin >= m * (uint64_t)p || key_at(dist, r->origin, p, m) != r->key) {
            if (bad++ < 5)
                fprintf(stderr,
                        "radix_sort: rank %d: slot %llu holds key %u from position "
                        "%llu, which was generated as %u\n",
                        rank, (unsigned long long)i, r->key, (unsigned long long)r->origin,
                        r->origin < m * (uint64_t)p ? key_at(dist, r->origin, p, m) : 0);
        }
        hash_out += mix64(r->origin ^ 0xABCDEFull);
        hash_in += mix64(((uint64_t)rank * m + i) ^ 0xABCDEFull);
    }
    /* across ranks: my first record follows the last record of rank - 1 */
    if (m > 0) {
        edge[0] = keys[m - 1];
        MPI_Sendrecv(&edge[0], (int)sizeof(record_t), MPI_BYTE,
                     rank + 1 < p ? rank + 1 : MPI_PROC_NULL, 5, &prev, (int)sizeof(record_t),
                     MPI_BYTE, rank > 0 ? rank - 1 : MPI_PROC_NULL, 5, MPI_COMM_WORLD, &status);
        edge[1] = keys[0];
        if (rank > 0 && (prev.key > edge[1].key ||
                         (prev.key == edge[1].key && prev.origin >= edge[1].origin))) {
            bad++;
            fprintf(stderr,
                    "radix_sort: rank %d starts with key %u (from %llu) after rank %d "
                    "ended with key %u (from %llu)\n",
                    rank, edge[1].key, (unsigned long long)edge[1].origin, rank - 1, prev.key,
                    (unsigned long long)prev.origin);
        }
    }
    /* the output positions are a permutation of the input positions */
    sums[0] = hash_out;
    sums[1] = hash_in;
    MPI_Allreduce(sums, totals, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (totals[0] != totals[1] && rank == 0) {
        bad++;
        fprintf(stderr, "radix_sort: the sorted records are not a permutation of the input\n");
    }
    return bad;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    sorter_t s;
    record_t *keys, *out;
    char dist = 'R';
    long long bad = 0, total_bad = 0;
    int runs = 1, usage = 0;
    double *times;

    MPI_Init(&argc, &argv);
    memset(&s, 0, sizeof s);
    MPI_Comm_size(MPI_COMM_WORLD, &s.p);
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    s.m = 1 << 14;
    s.bits = 8;
    for (int a = 1; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!v)
            usage = 1;
        else if (strcmp(argv[a], "-d") == 0 && strchr("RSCN", v[0]) && v[0] && !v[1])
            dist = v[0];
        else if (strcmp(argv[a], "-n") == 0 && atoll(v) > 0 && atoll(v) < (1ll << 31))
            s.m = (uint64_t)atoll(v);
        else if (strcmp(argv[a], "-b") == 0 && atoi(v) >= 1 && atoi(v) <= 16)
            s.bits = atoi(v);
        else if (strcmp(argv[a], "-i") == 0 && atoi(v) >= 1)
            runs = atoi(v);
        else
            usage = 1;
        a++;
    }
    if (usage) {
        if (s.rank == 0)
            fprintf(stderr, "usage: radix_sort [-d R|S|C|N] [-n keys_per_rank] "
                            "[-b bits_per_digit 1..16] [-i runs]\n");
        MPI_Finalize();
        return 2;
    }

    s.buckets = (size_t)1 << s.bits;
    s.per_rank = (s.buckets + (size_t)s.p - 1) / (size_t)s.p;
    {
        size_t padded = s.per_rank * (size_t)s.p;
        s.hist = malloc(padded * sizeof *s.hist);
        s.trans = malloc(padded * sizeof *s.trans);
        s.pairs = malloc(2 * padded * sizeof *s.pairs);
        s.back = malloc(2 * padded * sizeof *s.back);
        s.base = malloc(padded * sizeof *s.base);
        s.seen = malloc(padded * sizeof *s.seen);
    }
    s.sendcounts = malloc(4 * (size_t)s.p * sizeof(int));
    s.recvcounts = s.sendcounts + s.p;
    s.sdispls = s.recvcounts + s.p;
    s.rdispls = s.sdispls + s.p;
    s.packed = malloc(s.m * sizeof(record_t));
    s.landed = malloc(s.m * sizeof(record_t));
    keys = malloc(s.m * sizeof(record_t));
    out = malloc(s.m * sizeof(record_t));
    times = malloc((size_t)runs * sizeof *times);
    MPI_Type_contiguous((int)sizeof(record_t), MPI_BYTE, &s.rec_type);
    MPI_Type_commit(&s.rec_type);

    for (int run = 0; run < runs; run++) {
        double start, mine;
        generate(keys, dist, s.rank, s.p, s.m);
        MPI_Barrier(MPI_COMM_WORLD);
        start = MPI_Wtime();
        for (int shift = 0; shift < 32; shift += s.bits) {
            record_t *swap;
            counting_pass(&s, keys, out, shift);
            swap = keys;
            keys = out;
            out = swap;
        }
        mine = MPI_Wtime() - start;
        MPI_Allreduce(&mine, &times[run], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        bad += verify(keys, dist, s.rank, s.p, s.m);
    }
    MPI_Allreduce(&bad, &total_bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (s.rank == 0) {
        qsort(times, (size_t)runs, sizeof *times, compare_double);
        printf("radix_sort: dist=%c p=%d keys/rank=%llu bits/digit=%d passes=%d time=%.6f s "
               "(best of %d, median %.6f s)\n",
               dist, s.p, (unsigned long long)s.m, s.bits, (32 + s.bits - 1) / s.bits, times[0],
               runs, times[runs / 2]);
        if (total_bad)
            printf("radix_sort: FAILED (%lld errors)\n", total_bad);
        else
            printf("radix_sort: OK\n");
        fflush(stdout);
    }

    MPI_Type_free(&s.rec_type);
    free(s.hist);
    free(s.trans);
    free(s.pairs);
    free(s.back);
    free(s.base);
    free(s.seen);
    free(s.sendcounts);
    free(s.packed);
    free(s.landed);
    free(keys);
    free(out);
    free(times);
    MPI_Finalize();
    return total_bad ? 1 : 0;
}

/*
 * large_count: MPI_Alltoall and MPI_Allgather whose per-rank buffers exceed 2^31 bytes, and
 * (MPI_VERSION >= 4) MPI_Alltoall_c and MPI_Allgather_c with MPI_CHAR counts, at one rank
 * above INT_MAX per block. Run at 1 and 2 ranks (any rank count works: the memory per rank does
 * not grow with the rank count).
 *
 * The calls (B = 2^31 + 64 KiB, the bytes of every per-rank buffer):
 *   alltoall    a contiguous derived type of 4 KiB, p blocks of B/p bytes each way;
 *   allgather   the same type, B/p bytes sent, B received;
 *   alltoall_c  MPI_CHAR, B/p per block (B itself, above INT_MAX, at one rank);
 *   allgather_c MPI_CHAR, in place, B/p per block (B at one rank).
 * Every 8-byte word of every received block is checked against a cheap formula,
 * seed(source, destination, call) + index * odd constant, so that a word from the wrong rank,
 * the wrong offset (a 32-bit wrap-around) or an earlier call cannot pass; 64 guard bytes after
 * the receive buffer must keep their sentinel. A check is one word (or one guard).
 *
 * Memory: one buffer of about 2B (4 GiB) per rank, reused by every call. Before allocating,
 * every rank reads MemAvailable from /proc/meminfo and needs room for the buffer plus 2 GiB
 * (the library's or MPI's own scratch) for each rank of its node; otherwise the program prints
 * "large_count: SKIP: ..." and counts every call as skipped.
 * Prints "large_count: N checks, M failed[, K skipped]"; exit status non-zero on failure.
 */
#include <mpi.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define PAGE_BYTES 4096
#define BUFFER_BYTES (((size_t)1 << 31) + 65536) /* B: every per-rank buffer exceeds 2^31 */
#define GUARD_BYTES 64
#define HEADROOM_BYTES ((size_t)2 << 30)
#define WORD_STEP 0x9E3779B97F4A7C15ull

static uint64_t word_seed(int source, int destination, uint32_t call)
{
    return (uint64_t)check_value(source, destination, call, 0x1a2c) << 32 |
           check_value(destination, source, call, 0x3b4d);
}

/* Write bytes (a multiple of 8) of the message from source to destination. */
static void fill_words(unsigned char *buf, size_t bytes, int source, int destination, uint32_t call)
{
    uint64_t *words = (uint64_t *)buf, seed = word_seed(source, destination, call);
    size_t nwords = bytes / 8;
    for (size_t i = 0; i < nwords; i++)
        words[i] = seed + i * WORD_STEP;
}

static void check_words(const unsigned char *buf, size_t bytes, int source, int destination,
                        uint32_t call, const char *what)
{
    const uint64_t *words = (const uint64_t *)buf;
    uint64_t seed = word_seed(source, destination, call);
    size_t nwords = bytes / 8, bad = 0;
    for (size_t i = 0; i < nwords; i++)
        bad += words[i] != seed + i * WORD_STEP;
    check_count((long long)nwords);
    if (bad == 0)
        return;
    /* rare: find the words again to report them */
    for (size_t i = 0; i < nwords; i++)
        if (words[i] != seed + i * WORD_STEP)
            check_fail("%s: block from rank %d, word %zu (byte %zu of the block): expected "
                       "0x%016llx got 0x%016llx",
                       what, source, i, i * 8, (unsigned long long)(seed + i * WORD_STEP),
                       (unsigned long long)words[i]);
}

static void check_guard(const unsigned char *guard, const char *what)
{
    check_count(1);
    for (int b = 0; b < GUARD_BYTES; b++)
        if (guard[b] != CHECK_SENTINEL) {
            check_fail("%s: guard byte %d after the receive buffer: expected 0x%02x got 0x%02x",
                       what, b, CHECK_SENTINEL, guard[b]);
            return;
        }
}

static void check_rc(int rc, const char *what)
{
    check_count(1);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        check_fail("%s: returned %s", what, check_error_string(rc, text, (int)sizeof text));
    }
}

/* MemAvailable in bytes, 0 when unknown */
static size_t mem_available(void)
{
    char line[256];
    unsigned long long kib = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return (size_t)kib * 1024;
}

int main(int argc, char **argv)
{
    int p, me, local_size, enough, all_enough, ncalls = 2;
    size_t block_pages, block_bytes, total_bytes, need, avail;
    unsigned char *mem = NULL, *sendbuf, *recvbuf;
    MPI_Datatype page;
    MPI_Comm node;
    char what[96];
    int status;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
#if MPI_VERSION >= 4
    ncalls = 4;
#endif

    /* blocks of whole pages, p of them at least BUFFER_BYTES */
    block_pages = (BUFFER_BYTES + (size_t)p * PAGE_BYTES - 1) / ((size_t)p * PAGE_BYTES);
    block_bytes = block_pages * PAGE_BYTES;
    total_bytes = (size_t)p * block_bytes;

    /* room for the send and the receive buffer of every rank on this node, plus headroom */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local_size);
    MPI_Comm_free(&node);
    need = (size_t)local_size * (2 * total_bytes + GUARD_BYTES + HEADROOM_BYTES);
    avail = mem_available();
    enough = avail >= need;
    if (enough) {
        mem = malloc(2 * total_bytes + GUARD_BYTES);
        enough = mem != NULL;
    }
    MPI_Allreduce(&enough, &all_enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_enough) {
        if (me == 0)
            printf("large_count: SKIP: %d ranks per node need %.1f GiB of memory, "
                   "MemAvailable is %.1f GiB\n",
                   local_size, (double)need / (1 << 30), (double)avail / (1 << 30));
        if (me == 0)
            check_skip(ncalls);
        free(mem);
        status = check_finish("large_count");
        MPI_Finalize();
        return status;
    }
    sendbuf = mem;
    recvbuf = mem + total_bytes;
    MPI_Type_contiguous(PAGE_BYTES, MPI_CHAR, &page);
    MPI_Type_commit(&page);

    /* MPI_Alltoall: p blocks of block_pages pages each way */
    snprintf(what, sizeof what, "alltoall p=%d count=%zu x 4 KiB (%zu bytes per buffer)", p,
             block_pages, total_bytes);
    for (int j = 0; j < p; j++)
        fill_words(sendbuf + (size_t)j * block_bytes, block_bytes, me, j, 1);
    memset(recvbuf + total_bytes, CHECK_SENTINEL, GUARD_BYTES);
    check_rc(MPI_Alltoall(sendbuf, (int)block_pages, page, recvbuf, (int)block_pages, page,
                          MPI_COMM_WORLD),
             what);
    for (int i = 0; i < p; i++)
        check_words(recvbuf + (size_t)i * block_bytes, block_bytes, i, me, 1, what);
    check_guard(recvbuf + total_bytes, what);

    /* MPI_Allgather: one block sent, p received */
    snprintf(what, sizeof what, "allgather p=%d count=%zu x 4 KiB (%zu bytes received)", p,
             block_pages, total_bytes);
    fill_words(sendbuf, block_bytes, me, -1, 2);
    check_rc(MPI_Allgather(sendbuf, (int)block_pages, page, recvbuf, (int)block_pages, page,
                           MPI_COMM_WORLD),
             what);
    for (int i = 0; i < p; i++)
        check_words(recvbuf + (size_t)i * block_bytes, block_bytes, i, -1, 2, what);
    check_guard(recvbuf + total_bytes, what);

#if MPI_VERSION >= 4
    /* MPI_Alltoall_c: MPI_CHAR counts, above INT_MAX per block at one rank */
    snprintf(what, sizeof what, "alltoall_c p=%d count=%zu MPI_CHAR%s", p, block_bytes,
             block_bytes > INT_MAX ? " (above INT_MAX)" : "");
    for (int j = 0; j < p; j++)
        fill_words(sendbuf + (size_t)j * block_bytes, block_bytes, me, j, 3);
    check_rc(MPI_Alltoall_c(sendbuf, (MPI_Count)block_bytes, MPI_CHAR, recvbuf,
                            (MPI_Count)block_bytes, MPI_CHAR, MPI_COMM_WORLD),
             what);
    for (int i = 0; i < p; i++)
        check_words(recvbuf + (size_t)i * block_bytes, block_bytes, i, me, 3, what);
    check_guard(recvbuf + total_bytes, what);

    /* MPI_Allgather_c in place: this rank's block already sits in the receive buffer */
    snprintf(what, sizeof what, "allgather_c(IN_PLACE) p=%d count=%zu MPI_CHAR%s", p, block_bytes,
             block_bytes > INT_MAX ? " (above INT_MAX)" : "");
    fill_words(recvbuf + (size_t)me * block_bytes, block_bytes, me, -1, 4);
    check_rc(MPI_Allgather_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, (MPI_Count)block_bytes,
                             MPI_CHAR, MPI_COMM_WORLD),
             what);
    for (int i = 0; i < p; i++)
        check_words(recvbuf + (size_t)i * block_bytes, block_bytes, i, -1, 4, what);
    check_guard(recvbuf + total_bytes, what);
#endif

    MPI_Type_free(&page);
    free(mem);
    status = check_finish("large_count");
    MPI_Finalize();
    return status;
}

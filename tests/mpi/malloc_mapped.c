/*
 * malloc_mapped: the library leaves the program's malloc as it found it.
 *
 * glibc's malloc maps each allocation from its mmap threshold up (128 KiB at first) and raises
 * the threshold to the size of any mapped chunk that is freed. A library that mallocs and frees
 * a large buffer of its own (a calibration's buffers, scratch memory) thereby moves the
 * program's later large buffers onto the heap, at other offsets than natively, and copies
 * between such buffers can run many times slower (docs/design.md, "Copies").
 *
 * The program makes its own buffers with mmap, so that it moves nothing itself, and makes
 * calls that have the library use large buffers: MPI_Alltoall of 256 KiB and 1 MiB blocks sent
 * with a vector type with holes (which the library packs into scratch memory) and received
 * contiguously, on MPI_COMM_WORLD and on a duplicate that is then freed, every received element
 * and the sentinels after the buffer checked. Then each rank allocates BIG bytes with malloc
 * and requires glibc to have mapped them (mallinfo2's count of mapped chunks grew by one).
 * Natively this holds whatever the MPI library does inside (run it so first).
 * Prints "malloc_mapped: N checks, M failed"; exit status non-zero on failure.
 */
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "check.h"

#define BIG ((size_t)160 << 10) /* above glibc's first threshold, far below what a free raises */
#define TAIL 16                 /* sentinel ints after the receive buffer */

static void *mapped(size_t bytes)
{
    void *at = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) {
        fprintf(stderr, "malloc_mapped: mmap of %zu bytes failed\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return at;
}

/* One MPI_Alltoall of elems ints a block, sent every other int (a vector type resized to two
 * ints a element), received contiguously, checked. */
static void strided_alltoall(MPI_Comm comm, size_t elems, uint32_t salt)
{
    int p, rank;
    MPI_Datatype vec, sendtype;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    size_t send_bytes = 2 * elems * sizeof(int) * (size_t)p;
    size_t recv_bytes = (elems * (size_t)p + TAIL) * sizeof(int);
    int *send = mapped(send_bytes), *recv = mapped(recv_bytes);

    MPI_Type_vector((int)elems, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * elems * sizeof(int)), &sendtype);
    MPI_Type_commit(&sendtype);
    for (int j = 0; j < p; j++)
        for (size_t i = 0; i < elems; i++) {
            send[(size_t)j * 2 * elems + 2 * i] = (int)check_value(rank, j, i, salt);
            send[(size_t)j * 2 * elems + 2 * i + 1] = -1;
        }
    memset(recv, CHECK_SENTINEL, recv_bytes);
    MPI_Alltoall(send, 1, sendtype, recv, (int)elems, MPI_INT, comm);
    for (int j = 0; j < p; j++)
        for (size_t i = 0; i < elems; i++) {
            int want = (int)check_value(j, rank, i, salt), got = recv[(size_t)j * elems + i];
            check_count(1);
            if (got != want)
                check_fail("rank %d: block from %d, element %zu: %d, expected %d", rank, j, i, got,
                           want);
        }
    for (size_t at = elems * (size_t)p * sizeof(int); at < recv_bytes; at++) {
        check_count(1);
        if (((unsigned char *)recv)[at] != CHECK_SENTINEL)
            check_fail("rank %d: byte %zu after the receive buffer changed", rank, at);
    }
    MPI_Type_free(&sendtype);
    MPI_Type_free(&vec);
    munmap(send, send_bytes);
    munmap(recv, recv_bytes);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Comm dup;
    struct mallinfo2 before, after;
    void *big;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    strided_alltoall(MPI_COMM_WORLD, (size_t)64 << 10, 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    strided_alltoall(dup, (size_t)256 << 10, 2);
    strided_alltoall(dup, (size_t)64 << 10, 3);
    MPI_Comm_free(&dup);
    strided_alltoall(MPI_COMM_WORLD, (size_t)256 << 10, 4);

    before = mallinfo2();
    big = malloc(BIG);
    after = mallinfo2();
    check_count(1);
    if (!big || after.hblks != before.hblks + 1)
        check_fail("rank %d: a malloc of %zu bytes came from the heap (mapped chunks %zu, then "
                   "%zu): something freed a large mapped chunk and raised glibc's threshold",
                   rank, BIG, before.hblks, after.hblks);
    free(big);
    int rc = check_finish("malloc_mapped");
    MPI_Finalize();
    return rc;
}

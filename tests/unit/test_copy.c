/*
 * test_copy: xchg_copy and xchg_copy_near (algos/sched/copy.h) copy every byte and no other, at
 * every size around their thresholds and the loop's 64 bytes, and at every distance between
 * destination and source modulo a page that matters (0 to 80, and a page less 0 to 16) with
 * both at every alignment of 16. The bytes around the destination are sentinels.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algos/sched/copy.h"
#include "unit.h"

#define GUARD 64
#define SENTINEL 0xA5

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 131 + (i >> 8) * 7 + 1);
}

/* Copies bytes from src_at to dst_at of the two buffers (with near or xchg_copy) and checks the
 * destination and GUARD bytes each side. */
static void one(unsigned char *src, unsigned char *dst, size_t src_at, size_t dst_at, size_t bytes,
                int near)
{
    size_t i, wrong = 0, first = 0;
    for (i = 0; i < bytes; i++)
        src[src_at + i] = pattern(i);
    memset(dst + dst_at - GUARD, SENTINEL, bytes + 2 * GUARD);
    if (near)
        xchg_copy_near(dst + dst_at, src + src_at, bytes);
    else
        xchg_copy(dst + dst_at, src + src_at, bytes);
    for (i = 0; i < bytes + 2 * GUARD; i++) {
        unsigned char want = i < GUARD || i >= GUARD + bytes ? SENTINEL : pattern(i - GUARD);
        if (dst[dst_at - GUARD + i] != want && wrong++ == 0)
            first = i;
    }
    CHECK(wrong == 0, "%s: %zu bytes, source at %zu, destination at %zu: %zu wrong, first at %zd",
          near ? "xchg_copy_near" : "xchg_copy", bytes, src_at, dst_at, wrong,
          (ssize_t)first - GUARD);
}

int main(void)
{
    static const size_t sizes[] = {0,
                                   1,
                                   15,
                                   16,
                                   17,
                                   63,
                                   64,
                                   65,
                                   127,
                                   128,
                                   200,
                                   2047,
                                   2048,
                                   2049,
                                   4096,
                                   4113,
                                   65536,
                                   65541,
                                   (1u << 20) - 1,
                                   1u << 20,
                                   (1u << 20) + 3};
    size_t nsizes = sizeof sizes / sizeof *sizes, room = (1u << 20) + 4 * XCHG_COPY_PAGE;
    unsigned char *src = aligned_alloc(XCHG_COPY_PAGE, room);
    unsigned char *dst = aligned_alloc(XCHG_COPY_PAGE, room);
    if (!src || !dst)
        return 1;
    for (size_t s = 0; s < nsizes; s++)
        for (size_t src_at = XCHG_COPY_PAGE; src_at < XCHG_COPY_PAGE + 64; src_at += 16)
            for (int d = -16; d <= 80; d++) {
                size_t distance = (size_t)(d + XCHG_COPY_PAGE) % XCHG_COPY_PAGE;
                size_t dst_at = XCHG_COPY_PAGE + (src_at + distance) % XCHG_COPY_PAGE;
                if (sizes[s] > 70000 && (d % 13 != 0 || src_at != XCHG_COPY_PAGE))
                    continue; /* the largest at a few distances: the loop is the same */
                one(src, dst, src_at, dst_at, sizes[s], 1);
                one(src, dst, src_at, dst_at, sizes[s], 0);
            }
    xchg_copy(NULL, NULL, 0); /* MPI_Alltoallv's empty blocks may have no buffer: no access */
    free(src);
    free(dst);
    return unit_finish("test_copy");
}

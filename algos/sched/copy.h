/*
 * copy.h: the copy that moves users' bytes, for the algorithms (algos/) and the shim's packing.
 * Pure C: no MPI.
 *
 * memcpy, except where the destination lies a little after the source within a page: from
 * XCHG_COPY_NEAR_FROM to XCHG_COPY_NEAR_UNTIL bytes with a distance (destination - source)
 * modulo XCHG_COPY_PAGE of 1 to XCHG_COPY_NEAR - 1, xchg_copy_near copies with 16-byte loads and
 * stores. glibc's memcpy copies such sizes with `rep movsb`, which on some processors runs 15 to
 * 20 times slower at those distances (docs/design.md, "Copies"); the shm algorithms meet them
 * whenever a block's slot in the segment starts on a page and the user's buffer 16 bytes into
 * one, as malloc hands large buffers out. Which bytes are copied never depends on the path.
 */
#ifndef XCHG_SCHED_COPY_H
#define XCHG_SCHED_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define XCHG_COPY_PAGE 4096             /* the distance that matters is modulo a page, */
#define XCHG_COPY_NEAR 64               /* and only below a cache line; */
#define XCHG_COPY_NEAR_FROM 2048        /* below this memcpy never takes rep movsb, */
#define XCHG_COPY_NEAR_UNTIL (1u << 20) /* above it glibc streams and is fast at any distance */

/* Copies bytes from from to to (no overlap) with 16-byte loads and aligned stores. */
void xchg_copy_near(void *to, const void *from, size_t bytes);

/* memcpy for blocks of users' data; from and to may be NULL where bytes is 0 (memcpy's
 * pointers must be valid even for 0 bytes). */
static inline void xchg_copy(void *to, const void *from, size_t bytes)
{
    size_t ahead = ((uintptr_t)to - (uintptr_t)from) % XCHG_COPY_PAGE;
    if (bytes >= XCHG_COPY_NEAR_FROM && bytes < XCHG_COPY_NEAR_UNTIL && ahead > 0 &&
        ahead < XCHG_COPY_NEAR)
        xchg_copy_near(to, from, bytes);
    else if (bytes > 0)
        memcpy(to, from, bytes);
}

#endif

/*
 * scratch.c: the scratch memory of a context, a stack of chunks (xchg_mark_t, xchg.h).
 *
 * Whoever needs scratch memory (the shim for packing, an algorithm for its messages, a nested
 * algorithm such as twophase's transposes) takes a mark first, pushes what it needs, and
 * releases back to its mark before it returns: what a nested call pushes lies above its
 * caller's buffers and is gone when it returns, so no call can reuse a buffer that is still
 * live further down. A push never moves earlier memory: when the top chunk is full the next
 * chunk (at least twice as large) takes over. Chunks are kept when released, so a context that
 * has seen its largest call allocates nothing more.
 *
 *   chunk 0 [ shim's packed send | shim's receive | ... ]   chunk 1 [ algorithm's lists | ... ]
 *                                                   ^ top: (chunk, used)
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "xchg.h"

#define SCRATCH_ALIGN 64     /* every push starts on a cache line */
#define SCRATCH_FIRST 4096   /* the first chunk's size at least */

xchg_mark_t xchg_scratch_mark(const xchg_ctx_t *ctx)
{
    return (xchg_mark_t){ctx->top, ctx->chunks[ctx->top].used};
}

void xchg_scratch_release(xchg_ctx_t *ctx, xchg_mark_t mark)
{
    for (int i = mark.chunk + 1; i <= ctx->top; i++)
        ctx->chunks[i].used = 0;
    ctx->top = mark.chunk;
    ctx->chunks[mark.chunk].used = mark.used;
}

/* Make chunk i hold at least bytes (it is free: above the top). */
static int chunk_reserve(xchg_ctx_t *ctx, int i, size_t bytes)
{
    xchg_chunk_t *c = &ctx->chunks[i];
    size_t want = bytes;
    if (c->size >= bytes)
        return 0;
    if (i > 0 && ctx->chunks[i - 1].size > want / 2)
        want = 2 * ctx->chunks[i - 1].size;
    want = want < SCRATCH_FIRST ? SCRATCH_FIRST : want;
    xchg_mem_free(c->ptr, c->size);
    c->ptr = xchg_mem_alloc(want);
    c->size = c->ptr ? want : 0;
    return c->ptr ? 0 : -1;
}

void *xchg_scratch_push(xchg_ctx_t *ctx, size_t bytes)
{
    xchg_chunk_t *c = &ctx->chunks[ctx->top];
    size_t need = (bytes + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN;
    void *at;

    if (need == 0)
        need = SCRATCH_ALIGN;
    if (c->size - c->used < need) {
        /* the next chunk: the rest of this one stays unused until the release */
        if (ctx->top + 1 >= XCHG_CHUNKS || chunk_reserve(ctx, ctx->top + 1, need) != 0)
            return NULL;
        ctx->top++;
        c = &ctx->chunks[ctx->top];
        c->used = 0;
    }
    at = c->ptr + c->used;
    c->used += need;
    return at;
}

void xchg_scratch_free(xchg_ctx_t *ctx)
{
    for (int i = 0; i < XCHG_CHUNKS; i++) {
        xchg_mem_free(ctx->chunks[i].ptr, ctx->chunks[i].size);
        ctx->chunks[i] = (xchg_chunk_t){NULL, 0, 0};
    }
    ctx->top = 0;
}

/* Under AddressSanitizer (GCC says so by __SANITIZE_ADDRESS__), its malloc (its own, without
 * glibc's threshold) serves every size, so that it checks the bounds of every chunk. */
#if defined(__SANITIZE_ADDRESS__)
#define MAPPED_FROM SIZE_MAX
#else
#define MAPPED_FROM XCHG_MEM_MAPPED
#endif

void *xchg_mem_alloc(size_t bytes)
{
    void *at;
    if (bytes < MAPPED_FROM)
        return malloc(bytes);
    at = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return at == MAP_FAILED ? NULL : at;
}

void xchg_mem_free(void *ptr, size_t bytes)
{
    if (!ptr)
        return;
    if (bytes < MAPPED_FROM)
        free(ptr);
    else
        munmap(ptr, bytes);
}

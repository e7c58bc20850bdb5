/*
 * copy.c: xchg_copy_near (copy.h), the copy for a destination a little after its source within
 * a page. A head brings the destination to 16 bytes, then 64 bytes a turn in four unaligned
 * loads and four aligned stores, then memcpy for the tail. Without SSE2 it is memcpy.
 */
#include "copy.h"

#if defined(__SSE2__)
#include <emmintrin.h>

void xchg_copy_near(void *to, const void *from, size_t bytes)
{
    unsigned char *dst = to;
    const unsigned char *src = from;
    size_t head = (16 - ((uintptr_t)dst & 15)) & 15, at = 0;

    if (head > bytes)
        head = bytes;
    if (head > 0)
        memcpy(dst, src, head);
    dst += head;
    src += head;
    bytes -= head;
    for (; at + 64 <= bytes; at += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(src + at));
        __m128i b = _mm_loadu_si128((const __m128i *)(src + at + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + at + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(src + at + 48));
        _mm_store_si128((__m128i *)(dst + at), a);
        _mm_store_si128((__m128i *)(dst + at + 16), b);
        _mm_store_si128((__m128i *)(dst + at + 32), c);
        _mm_store_si128((__m128i *)(dst + at + 48), d);
    }
    if (bytes > at)
        memcpy(dst + at, src + at, bytes - at);
}

#else

void xchg_copy_near(void *to, const void *from, size_t bytes)
{
    if (bytes > 0)
        memcpy(to, from, bytes);
}

#endif

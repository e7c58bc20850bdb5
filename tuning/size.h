/*
 * size.h: the one parser of byte sizes, for the tuning table, the tools and the registry, and
 * how their messages quote bad input.
 * Pure C: no MPI calls.
 */
#ifndef XCHG_SIZE_H
#define XCHG_SIZE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Bad input goes into a message as its first XCHG_QUOTE_MAX characters, then "..." when it is
 * longer, so that a huge value never hides the reason after it:
 *     snprintf(err, len, "bad value '%.*s%s': why", XCHG_QUOTE(value));  */
#define XCHG_QUOTE_MAX 40
#define XCHG_QUOTE(text)                                                                           \
    XCHG_QUOTE_MAX, (text), (strnlen((text), XCHG_QUOTE_MAX + 1) > XCHG_QUOTE_MAX ? "..." : "")

/* "1024", "64K", "4M", "1G" (suffixes 2^10, 2^20, 2^30, either case, an optional trailing B)
 * into bytes. 0 on success; -1 when text is not a size or the value does not fit a size_t. */
int xchg_parse_size(const char *text, size_t *out);

/* The whole of [text, end) as an unsigned decimal number, with one K/M/G suffix when suffixes
 * is set (no trailing B). 0 on success; -1 when it is not one or overflows 64 bits. */
int xchg_parse_number(const char *text, const char *end, int suffixes, uint64_t *out);

#endif

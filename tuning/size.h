/*
 * size.h: the one parser of byte sizes, for the tuning table, the tools and the registry.
 * Pure C: no MPI calls.
 */
#ifndef XCHG_SIZE_H
#define XCHG_SIZE_H

#include <stddef.h>

/* "1024", "64K", "4M", "1G" (suffixes 2^10, 2^20, 2^30, either case, an optional trailing B)
 * into bytes. 0 on success; -1 when text is not a size or the value does not fit a size_t. */
int xchg_parse_size(const char *text, size_t *out);

#endif

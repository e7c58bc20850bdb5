/*
 * size.c: the one parser of numbers and byte sizes (size.h), for the tuning table, the tools
 * and the registry. Digits, then at most one of K, M, G (powers of 1024, either case), for a
 * size then at most one B; nothing else. Overflow of the digits or of the multiplication is an
 * error, never a wrapped value.
 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "size.h"

static int suffix_shift(char c)
{
    switch (c) {
    case 'K':
    case 'k':
        return 10;
    case 'M':
    case 'm':
        return 20;
    case 'G':
    case 'g':
        return 30;
    default:
        return 0;
    }
}

int xchg_parse_number(const char *text, const char *end, int suffixes, uint64_t *out)
{
    uint64_t value = 0;
    const char *p = text;
    int shift = 0;

    if (p == end || !isdigit((unsigned char)*p))
        return -1;
    for (; p < end && isdigit((unsigned char)*p); p++) {
        unsigned digit = (unsigned)(*p - '0');
        if (value > (UINT64_MAX - digit) / 10)
            return -1;
        value = value * 10 + digit;
    }
    if (p < end && suffixes) {
        shift = suffix_shift(*p);
        if (!shift)
            return -1;
        p++;
    }
    if (p != end || value > (UINT64_MAX >> shift))
        return -1;
    *out = value << shift;
    return 0;
}

int xchg_parse_size(const char *text, size_t *out)
{
    const char *end;
    uint64_t value;

    if (!text)
        return -1;
    end = text + strlen(text);
    if (end > text && (end[-1] == 'B' || end[-1] == 'b'))
        end--; /* an optional B after the number (and its suffix) */
    if (xchg_parse_number(text, end, 1, &value) != 0 || value > SIZE_MAX)
        return -1;
    *out = (size_t)value;
    return 0;
}

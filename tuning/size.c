/*
 * size.c: the one parser of byte sizes (size.h). Digits, then at most one of K, M, G (powers
 * of 1024, either case), then at most one B; nothing else. Overflow of the digits or of the
 * multiplication is an error, never a wrapped value.
 */
#include <ctype.h>
#include <stdint.h>

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

int xchg_parse_size(const char *text, size_t *out)
{
    size_t value = 0;
    int shift;

    if (!text || !isdigit((unsigned char)*text))
        return -1;
    for (; isdigit((unsigned char)*text); text++) {
        size_t digit = (size_t)(*text - '0');
        if (value > (SIZE_MAX - digit) / 10)
            return -1;
        value = value * 10 + digit;
    }
    shift = suffix_shift(*text);
    if (shift) {
        if (value > (SIZE_MAX >> shift))
            return -1;
        value <<= shift;
        text++;
    }
    if (*text == 'B' || *text == 'b')
        text++;
    if (*text != '\0')
        return -1;
    *out = value;
    return 0;
}

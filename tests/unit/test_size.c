/*
 * test_size: the one size parser (tuning/size.c): every accepted form with its exact value,
 * and every rejected one, overflow included.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../tuning/size.h"
#include "unit.h"

static void accepts(const char *text, size_t expected)
{
    size_t got = 12345;
    int rc = xchg_parse_size(text, &got);
    CHECK(rc == 0 && got == expected, "'%s': rc %d, %zu (expected %zu)", text, rc, got, expected);
}

static void rejects(const char *text)
{
    size_t got = 12345;
    int rc = xchg_parse_size(text, &got);
    CHECK(rc == -1 && got == 12345, "'%s' was accepted (%zu)", text, got);
}

int main(void)
{
    char big[64];

    accepts("0", 0);
    accepts("1", 1);
    accepts("1024", 1024);
    accepts("64K", 65536);
    accepts("64k", 65536);
    accepts("4M", 4u << 20);
    accepts("1G", (size_t)1 << 30);
    accepts("1g", (size_t)1 << 30);
    accepts("3KB", 3072);
    accepts("7b", 7);
    accepts("007", 7);
    snprintf(big, sizeof big, "%zu", (size_t)SIZE_MAX);
    accepts(big, SIZE_MAX);
    snprintf(big, sizeof big, "%zuK", (size_t)(SIZE_MAX >> 10));
    accepts(big, (SIZE_MAX >> 10) << 10);

    rejects("");
    rejects("K");
    rejects("-1");
    rejects("+1");
    rejects(" 1");
    rejects("1 ");
    rejects("1KK");
    rejects("1T");
    rejects("1.5K");
    rejects("1BB");
    rejects("0x10");
    rejects("99999999999999999999999"); /* above SIZE_MAX */
    snprintf(big, sizeof big, "%zuK", (size_t)(SIZE_MAX >> 10) + 1);
    rejects(big); /* the multiplication would overflow */
    snprintf(big, sizeof big, "%zuG", (size_t)(SIZE_MAX >> 30) + 1);
    rejects(big);
    /* the range form the tuning table uses: [text, end), suffixes only when asked for */
    {
        const char *text = "64K-128K";
        uint64_t v = 0;
        CHECK(xchg_parse_number(text, text + 3, 1, &v) == 0 && v == 65536, "64K of 64K-128K");
        CHECK(xchg_parse_number(text, text + 3, 0, &v) == -1, "64K without suffixes");
        CHECK(xchg_parse_number(text, text + 2, 0, &v) == 0 && v == 64, "64 of 64K-128K");
        CHECK(xchg_parse_number(text, text, 1, &v) == -1, "an empty range");
        text = "18446744073709551616"; /* 2^64 */
        CHECK(xchg_parse_number(text, text + strlen(text), 0, &v) == -1, "2^64 accepted");
        text = "17179869184G"; /* 2^34 G = 2^64 overflows */
        CHECK(xchg_parse_number(text, text + strlen(text), 1, &v) == -1, "2^34 G accepted");
    }
    return unit_finish("test_size");
}

/*
 * fuzz_size.c: the one parser of numbers and byte sizes (tuning/size.c: xchg_parse_size,
 * xchg_parse_number) and XCHG_SHM_BYTES (tuning/env.c: xchg_env_shm_bytes), on the input as a
 * C string.
 *
 * Checks, besides "no crash, no sanitizer finding":
 *  - both parsers agree with a reference written here from the grammar of size.h (digits,
 *    at most one K/M/G, for a size at most one trailing B; no overflow: 128-bit arithmetic),
 *    on the whole text and on the part before and after its first '-' (as the tuning table's
 *    ranges use xchg_parse_number), with and without suffixes;
 *  - a parsed size formats back (plain digits, and with its largest exact suffix and a B)
 *    into text that parses to the same value;
 *  - a failed parse leaves the output untouched;
 *  - XCHG_SHM_BYTES takes exactly the sizes up to 1T (empty: the default), and otherwise
 *    leaves the default with a message naming the variable and quoting the value.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../tuning/env.h"
#include "../../tuning/size.h"
#include "fuzz.h"

#define UNTOUCHED 0x5a5a5a5a5a5a5a5aULL

/* The grammar of xchg_parse_number, written again: 0 and *value, or -1. */
static int reference_number(const char *text, const char *end, int suffixes, uint64_t *value)
{
    unsigned __int128 v = 0, limit = (unsigned __int128)UINT64_MAX;
    const char *p = text;
    int shift = 0;

    if (p == end || *p < '0' || *p > '9')
        return -1;
    for (; p < end && *p >= '0' && *p <= '9'; p++)
        if ((v = v * 10 + (unsigned)(*p - '0')) > limit)
            return -1; /* the digits alone overflow */
    if (p < end && suffixes && strchr("KkMmGg", *p) && *p) {
        shift = *p == 'K' || *p == 'k' ? 10 : *p == 'M' || *p == 'm' ? 20 : 30;
        p++;
    }
    if (p != end || (v << shift) > limit)
        return -1;
    *value = (uint64_t)(v << shift);
    return 0;
}

/* xchg_parse_size's grammar: a number with suffixes, then at most one B. */
static int reference_size(const char *text, size_t *value)
{
    const char *end = text + strlen(text);
    uint64_t v;
    if (end > text && (end[-1] == 'B' || end[-1] == 'b'))
        end--;
    if (reference_number(text, end, 1, &v) != 0 || v > SIZE_MAX)
        return -1;
    *value = (size_t)v;
    return 0;
}

/* xchg_parse_number on [text, end) against the reference, both suffix modes. */
static void check_number(const char *text, const char *end)
{
    for (int suffixes = 0; suffixes <= 1; suffixes++) {
        uint64_t got = UNTOUCHED, want = 0;
        int rc = xchg_parse_number(text, end, suffixes, &got);
        int want_rc = reference_number(text, end, suffixes, &want);
        FUZZ_CHECK(rc == want_rc && (rc != 0 || got == want) && (rc == 0 || got == UNTOUCHED),
                   "xchg_parse_number('%.*s', suffixes %d): rc %d value %llu, reference rc %d "
                   "value %llu",
                   (int)(end - text), text, suffixes, rc, (unsigned long long)got, want_rc,
                   (unsigned long long)want);
    }
}

/* A parsed size, formatted in every form the tools and the table write, parses back. */
static void check_size_formats(size_t value)
{
    static const char suffixes[] = "GMK";
    char text[48];
    size_t back = 0;

    snprintf(text, sizeof text, "%zu", value);
    FUZZ_CHECK(xchg_parse_size(text, &back) == 0 && back == value, "'%s' read back as %zu", text,
               back);
    for (int i = 0; i < 3; i++) {
        size_t unit = (size_t)1 << (10 * (3 - i));
        if (value >= unit && value % unit == 0) {
            snprintf(text, sizeof text, "%zu%cB", value / unit, suffixes[i]);
            FUZZ_CHECK(xchg_parse_size(text, &back) == 0 && back == value,
                       "'%s' read back as %zu, not %zu", text, back, value);
            break;
        }
    }
}

static void check_shm(const char *text)
{
    char err[512] = "";
    size_t bytes = 0, want = 0;
    int rc = xchg_env_shm_bytes(text, &bytes, err, sizeof err);
    int good = !*text || (reference_size(text, &want) == 0 && want <= XCHG_SHM_MAX);

    if (!*text)
        want = XCHG_SHM_DEFAULT;
    FUZZ_CHECK(rc == (good ? 0 : -1) && bytes == (good ? want : XCHG_SHM_DEFAULT),
               "XCHG_SHM_BYTES='%s': rc %d bytes %zu (expected %s)", text, rc, bytes,
               good ? "accepted" : "the default");
    FUZZ_CHECK(good || (fuzz_names_value(err, "XCHG_SHM_BYTES", text) &&
                        fuzz_ends_with(err, "; using 1M")),
               "XCHG_SHM_BYTES='%s': message '%s'", text, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    const char *end = text + strlen(text), *dash = strchr(text, '-');
    size_t got = (size_t)UNTOUCHED, want = 0;
    int rc = xchg_parse_size(text, &got), want_rc = reference_size(text, &want);

    /* the size, and what it formats to */
    FUZZ_CHECK(rc == want_rc && (rc != 0 || got == want) && (rc == 0 || got == (size_t)UNTOUCHED),
               "xchg_parse_size('%s'): rc %d value %zu, reference rc %d value %zu", text, rc, got,
               want_rc, want);
    if (rc == 0)
        check_size_formats(got);

    /* numbers: the whole text, and the two ends of a range */
    check_number(text, end);
    if (dash) {
        check_number(text, dash);
        check_number(dash + 1, end);
    }
    check_shm(text);
    free(text);
    return 0;
}

/*
 * fuzz_nodes.c: XCHG_NODES (tuning/env.c: xchg_env_nodes). The input's first line is the job's
 * size (decimal, 1 to 2^31 - 1; anything else means 6), the rest the variable's value.
 *
 * Checks, besides "no crash, no sanitizer finding", against a reference written here from the
 * variable's grammar (positive decimal rank counts, digits only, separated by single commas,
 * no more of them than ranks, adding up to the job's size; sums in 64 bits):
 *  - the value is accepted exactly when the reference accepts it, with the same sizes;
 *  - accepted sizes are each from 1 to the job's size and add up to it, and written back as
 *    "a,b,c" they parse to the same sizes;
 *  - a rejected value leaves no sizes and gives the reference's message: the form, or the sum
 *    it adds up to (which overflows no int) and the job's size.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tuning/env.h"
#include "fuzz.h"

#define FORM_REASON "expected positive rank counts separated by commas (e.g. 3,1,2); ignored"

/* The reference: 0 and the sizes (at most max), or -1 with why filled. */
static int reference(const char *text, int world, int *sizes, int max, int *n, char *why,
                     size_t whylen)
{
    long long total = 0;
    const char *at = text;
    *n = 0;
    for (;;) {
        long long v = 0;
        const char *start = at;
        while (*at >= '0' && *at <= '9' && v <= world)
            v = v * 10 + (*at++ - '0');
        while (*at >= '0' && *at <= '9')
            at++; /* far too large already */
        if (at == start || v < 1 || v > world || *n == max || *n == world || (*at && *at != ',') ||
            (*at == ',' && !at[1])) {
            snprintf(why, whylen, "XCHG_NODES=%.*s%s: %s", XCHG_QUOTE(text), FORM_REASON);
            return -1;
        }
        sizes[(*n)++] = (int)v;
        total += v;
        if (!*at)
            break;
        at++;
    }
    if (total != world) {
        snprintf(why, whylen,
                 "XCHG_NODES=%.*s%s: the node sizes add up to %lld, not to the job's %d ranks; "
                 "ignored",
                 XCHG_QUOTE(text), total, world);
        return -1;
    }
    return 0;
}

/* The job's size from the first line; the value after it. */
static int split_input(char *text, char **value)
{
    char *newline = strchr(text, '\n'), *end;
    long long world;
    if (!newline) {
        *value = text;
        return 6;
    }
    *newline = '\0';
    *value = newline + 1;
    world = strtoll(text, &end, 10);
    return end != text && !*end && world >= 1 && world <= INT_MAX ? (int)world : 6;
}

/* Accepted sizes written back as "a,b,c" parse to the same. */
static void check_written_back(const int *sizes, int n, int world)
{
    char *text = malloc((size_t)n * 12 + 1), err[512];
    size_t used = 0;
    int *back = NULL, nback = 0;
    if (!text)
        abort();
    for (int i = 0; i < n; i++)
        used += (size_t)sprintf(text + used, "%s%d", i ? "," : "", sizes[i]);
    FUZZ_CHECK(xchg_env_nodes(text, world, &back, &nback, err, sizeof err) == 0 && nback == n &&
                   memcmp(back, sizes, (size_t)n * sizeof *sizes) == 0,
               "written back as '%.60s', the sizes do not parse again", text);
    free(back);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *input = fuzz_text(data, size), *value;
    int world = split_input(input, &value);
    int max = (int)(strlen(value) / 2 + 1), nwant = 0, nnodes = -1, *sizes = (int *)1, rc;
    int *want = malloc((size_t)max * sizeof *want);
    char err[512] = "", why[512] = "";
    int want_rc = *value ? reference(value, world, want, max, &nwant, why, sizeof why) : 0;

    if (!want)
        abort();
    rc = xchg_env_nodes(value, world, &sizes, &nnodes, err, sizeof err);
    FUZZ_CHECK(rc == want_rc, "XCHG_NODES='%.60s' at %d ranks: rc %d, the reference %d (%s)", value,
               world, rc, want_rc, why);
    if (rc == 0 && *value) {
        FUZZ_CHECK(
            sizes && nnodes == nwant && memcmp(sizes, want, (size_t)nwant * sizeof *want) == 0,
            "XCHG_NODES='%.60s' at %d ranks: other sizes than the reference's", value, world);
        check_written_back(sizes, nnodes, world);
    } else {
        FUZZ_CHECK(sizes == NULL && nnodes == 0, "XCHG_NODES='%.60s': sizes left after rc %d",
                   value, rc);
        FUZZ_CHECK(rc == 0 || strcmp(err, why) == 0,
                   "XCHG_NODES='%.60s' at %d ranks: message\n  '%s', the reference's\n  '%s'",
                   value, world, err, why);
    }
    free(sizes);
    free(want);
    free(input);
    return 0;
}

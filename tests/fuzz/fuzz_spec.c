/*
 * fuzz_spec.c: the algorithm specs of XCHG_ALLTOALL, XCHG_ALLGATHER, XCHG_ALLTOALLV and the
 * tuning table's rules (tuning/registry.c: xchg_spec_parse, xchg_param_parse;
 * tuning/env.c: xchg_env_collective). The input's first byte picks the collective (its value
 * mod 3) and the size of a small message buffer; the rest is the spec.
 *
 * Checks, besides "no crash, no sanitizer finding":
 *  - a spec that parses names an algorithm of its collective, sets only that algorithm's
 *    keys, each within its descriptor's range (a shape as rows x columns, a ring as 1 x P;
 *    inner= an algorithm xchg implements), and formats (xchg_params_format) into a spec that
 *    parses again to the same algorithm and the same parameters;
 *  - a spec that does not parse gives a message that fits the buffer untruncated, under 300
 *    characters; with a buffer of 1 to 64 bytes the message is cut there, NUL-terminated, and
 *    nothing is written past it;
 *  - every key's value parser (xchg_param_parse, each descriptor of the registry) on the same
 *    text: a value in range, or a message;
 *  - XCHG_<COLL> (xchg_env_collective): auto for "auto" and empty, the spec's algorithm when
 *    it parses, else auto with no parameters and the message "XCHG_<COLL>=<quoted value>:
 *    <reason>; using auto".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../tuning/env.h"
#include "../../tuning/registry.h"
#include "fuzz.h"

/* The value of one key in params is in its descriptor's range (unset: 0 or NULL). */
static void check_value(const xchg_param_t *desc, const xchg_params_t *params, const char *text)
{
    const char *at = (const char *)params;
    if (desc->type == XCHG_PARAM_INT) {
        int v = *(const int *)(at + desc->field);
        FUZZ_CHECK(v == 0 || (v >= desc->min && v <= desc->max), "'%s': %s=%d out of range", text,
                   desc->key, v);
    } else if (desc->type == XCHG_PARAM_SHAPE) {
        int r = *(const int *)(at + desc->field), c = *(const int *)(at + desc->field2);
        FUZZ_CHECK((r == 0 && c == 0) || (r >= desc->min && r <= desc->max && c >= desc->min &&
                                          c <= (r == 1 ? INT32_MAX : desc->max) &&
                                          (long long)r * c <= INT32_MAX && (r == 1 || c != 1)),
                   "'%s': %s=%dx%d out of range or a ring not as 1 x P", text, desc->key, r, c);
    } else {
        const xchg_algo_t *a = *(const xchg_algo_t *const *)(at + desc->field);
        FUZZ_CHECK(!a || (a >= xchg_algos && a < xchg_algos + xchg_nalgos &&
                          a->coll == desc->coll && !a->native),
                   "'%s': %s= is not an xchg %s algorithm", text, desc->key,
                   xchg_coll_name(desc->coll));
    }
}

/* params sets only the keys of algo, each in range. */
static void check_params(const xchg_algo_t *algo, const xchg_params_t *params, const char *text)
{
    xchg_params_t rest = *params, zero;
    memset(&zero, 0, sizeof zero);
    for (int i = 0; i < XCHG_MAX_KEYS && algo->keys[i]; i++) {
        const xchg_param_t *desc = algo->keys[i];
        check_value(desc, params, text);
        if (desc->type == XCHG_PARAM_ALGO)
            *(const xchg_algo_t **)((char *)&rest + desc->field) = NULL;
        else
            *(int *)((char *)&rest + desc->field) = 0;
        if (desc->type == XCHG_PARAM_SHAPE)
            *(int *)((char *)&rest + desc->field2) = 0;
    }
    FUZZ_CHECK(memcmp(&rest, &zero, sizeof zero) == 0, "'%s': a key %s does not take is set", text,
               algo->name);
}

/* A parsed spec formats into a spec that parses to the same. */
static void check_format(int coll, int algo, const xchg_params_t *params, const char *text)
{
    char formatted[160], spec[200], err[512] = "";
    xchg_params_t back;
    int again = -1;

    xchg_params_format(&xchg_algos[algo], params, formatted, sizeof formatted);
    snprintf(spec, sizeof spec, "%s%s%s", xchg_algos[algo].name, formatted[0] ? ":" : "",
             formatted);
    FUZZ_CHECK(xchg_spec_parse(coll, spec, &again, &back, err, sizeof err) == 0 && again == algo,
               "'%s' formats as '%s', which does not parse: %s", text, spec, err);
    FUZZ_CHECK(memcmp(&back, params, sizeof back) == 0,
               "'%s' formats as '%s', which parses to other parameters", text, spec);
}

/* A message in a buffer of errlen bytes (1 .. 64, on the heap): cut, terminated, in bounds. */
static void check_small_buffer(int coll, const char *text, size_t errlen)
{
    char *err = malloc(errlen);
    xchg_params_t params;
    int algo;
    if (!err)
        abort();
    memset(err, 'x', errlen);
    if (xchg_spec_parse(coll, text, &algo, &params, err, errlen) != 0)
        FUZZ_CHECK(memchr(err, '\0', errlen) != NULL, "'%s': message not terminated in %zu bytes",
                   text, errlen);
    free(err);
}

static void check_keys(const char *text)
{
    for (int i = 0; i < xchg_nalgos; i++)
        for (int k = 0; k < XCHG_MAX_KEYS && xchg_algos[i].keys[k]; k++) {
            const xchg_param_t *desc = xchg_algos[i].keys[k];
            xchg_params_t params;
            char err[512] = "";
            memset(&params, 0, sizeof params);
            if (xchg_param_parse(desc, text, &params, err, sizeof err) == 0)
                check_value(desc, &params, text);
            else
                FUZZ_CHECK(err[0] && strlen(err) < 300, "%s='%s': message '%s'", desc->key, text,
                           err);
        }
}

static void check_env(int coll, const char *text, int spec_rc, int spec_algo,
                      const xchg_params_t *spec_params)
{
    char err[512] = "";
    xchg_params_t params, zero;
    int algo = 7, rc = xchg_env_collective(coll, text, &algo, &params, err, sizeof err);
    int is_auto = !*text || strcmp(text, "auto") == 0;

    memset(&zero, 0, sizeof zero);
    if (is_auto || spec_rc != 0) {
        FUZZ_CHECK(rc == (is_auto ? 0 : -1) && algo == XCHG_ENV_AUTO &&
                       memcmp(&params, &zero, sizeof zero) == 0,
                   "%s='%s': rc %d algorithm %d", xchg_env_coll_var(coll), text, rc, algo);
    } else {
        FUZZ_CHECK(rc == 0 && algo == spec_algo && memcmp(&params, spec_params, sizeof params) == 0,
                   "%s='%s': not the spec's algorithm", xchg_env_coll_var(coll), text);
    }
    FUZZ_CHECK(rc == 0 || (fuzz_names_value(err, xchg_env_coll_var(coll), text) &&
                           fuzz_ends_with(err, "; using auto") && strlen(err) < 300),
               "%s='%s': message '%s'", xchg_env_coll_var(coll), text, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int coll = size ? data[0] % 3 : 0, algo = -1, rc;
    size_t small_errlen = size ? (size_t)(data[0] / 3) % 64 + 1 : 1;
    char *text = fuzz_text(size ? data + 1 : data, size ? size - 1 : 0);
    char err[512] = "";
    xchg_params_t params;

    rc = xchg_spec_parse(coll, text, &algo, &params, err, sizeof err);
    if (rc == 0) {
        FUZZ_CHECK(algo >= 0 && algo < xchg_nalgos && xchg_algos[algo].coll == coll,
                   "'%s': algorithm %d for %s", text, algo, xchg_coll_name(coll));
        check_params(&xchg_algos[algo], &params, text);
        check_format(coll, algo, &params, text);
    } else {
        FUZZ_CHECK(rc == -1 && err[0] && strlen(err) < 300, "'%s': rc %d, message '%s'", text, rc,
                   err);
    }
    check_small_buffer(coll, text, small_errlen);
    check_keys(text);
    check_env(coll, text, rc, algo, &params);
    free(text);
    return 0;
}

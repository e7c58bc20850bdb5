/*
 * test_registry.c: the algorithm spec parser (algos/registry.c, xchg_spec_parse and
 * xchg_params_parse_key), without MPI. Valid specs and their parameters; every kind of bad
 * spec, each rejected with a message that gives the reason; a key given twice; the inner=
 * message listing only the algorithms xchg implements; long values quoted as a short prefix.
 * The algorithms with the keys r and inner are found in the registry by their keys, so the
 * test does not depend on their names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algos/xchg.h"
#include "../../tuning/table.h"

#include "unit.h"

/* A message about a bad spec must stay short, whatever the length of the spec. */
#define SHORT_MESSAGE 200

/* The name of the first algorithm of coll that takes key, or exit: the test needs one. */
static const char *with_key(int coll, const char *key)
{
    for (int i = 0; i < xchg_nalgos; i++)
        if (xchg_algos[i].coll == coll && xchg_algo_has_key(&xchg_algos[i], key))
            return xchg_algos[i].name;
    printf("test_registry: no %s algorithm takes the key %s\n", xchg_coll_name(coll), key);
    exit(2);
}

/* spec parses as coll's algorithm name with radix, nports and inner (a registry index + 1). */
static void check_good(int coll, const char *spec, const char *name, int radix, int nports,
                       int inner)
{
    char err[512] = "";
    xchg_params_t params;
    int algo = -1;
    int rc = xchg_spec_parse(coll, spec, &algo, &params, err, sizeof err);

    CHECK(rc == 0, "'%s': expected success, got %d (%s)", spec, rc, err);
    if (rc != 0)
        return;
    CHECK(algo == xchg_algo_find(coll, name), "'%s': expected algorithm %s, got %d", spec, name,
          algo);
    CHECK(params.radix == radix && params.nports == nports && params.inner == inner,
          "'%s': expected r=%d k=%d inner=%d, got r=%d k=%d inner=%d", spec, radix, nports, inner,
          params.radix, params.nports, params.inner);
}

/* spec is rejected with a short message containing want (and not avoid, when given). */
static void check_bad(int coll, const char *spec, const char *want, const char *avoid)
{
    char err[512] = "";
    xchg_params_t params;
    int algo = -1;
    int rc = xchg_spec_parse(coll, spec, &algo, &params, err, sizeof err);
    size_t spec_len = strlen(spec);

    CHECK(rc == -1, "'%.60s' (%zu characters): expected -1, got %d", spec, spec_len, rc);
    CHECK(strstr(err, want) != NULL, "'%.60s': expected a message with '%s', got '%s'", spec, want,
          err);
    CHECK(avoid == NULL || strstr(err, avoid) == NULL,
          "'%.60s': the message must not contain '%s', got '%s'", spec, avoid, err);
    CHECK(strlen(err) < SHORT_MESSAGE,
          "'%.60s' (%zu characters): the message has %zu characters, expected < %d: '%.80s...'",
          spec, spec_len, strlen(err), SHORT_MESSAGE, err);
}

static void test_good(void)
{
    const char *radix = with_key(XCHG_ALLTOALL, "r");
    const char *inner = with_key(XCHG_ALLTOALLV, "inner");
    int pairwise_inner = xchg_algo_find(XCHG_ALLTOALL, "pairwise") + 1;
    int radix_inner = xchg_algo_find(XCHG_ALLTOALL, radix) + 1;
    char spec[128];

    check_good(XCHG_ALLTOALL, "native", "native", 0, 0, 0);
    check_good(XCHG_ALLTOALL, "pairwise", "pairwise", 0, 0, 0);
    check_good(XCHG_ALLTOALL, "pairwise:", "pairwise", 0, 0, 0);
    check_good(XCHG_ALLTOALL, "pairwise:k=3", "pairwise", 0, 3, 0);
    check_good(XCHG_ALLGATHER, "ring", "ring", 0, 0, 0);
    snprintf(spec, sizeof spec, "%s:r=4,k=2", radix);
    check_good(XCHG_ALLTOALL, spec, radix, 4, 2, 0);
    snprintf(spec, sizeof spec, "%s:k=2:r=1000000000", radix);
    check_good(XCHG_ALLTOALL, spec, radix, 1000000000, 2, 0);
    snprintf(spec, sizeof spec, "%s:inner=pairwise:k=2", inner);
    check_good(XCHG_ALLTOALLV, spec, inner, 0, 2, pairwise_inner);
    snprintf(spec, sizeof spec, "%s:inner=%s,r=3", inner, radix);
    check_good(XCHG_ALLTOALLV, spec, inner, 3, 0, radix_inner);
}

/* A key given twice is an error naming the key, whatever the values and separators. */
static void test_repeated_key(void)
{
    const char *radix = with_key(XCHG_ALLTOALL, "r");
    const char *inner = with_key(XCHG_ALLTOALLV, "inner");
    char spec[128];

    snprintf(spec, sizeof spec, "%s:r=2,r=3", radix);
    check_bad(XCHG_ALLTOALL, spec, "key 'r' given twice", NULL);
    snprintf(spec, sizeof spec, "%s:r=2:r=2", radix);
    check_bad(XCHG_ALLTOALL, spec, "key 'r' given twice", NULL);
    snprintf(spec, sizeof spec, "%s:k=1,r=2,k=1", radix);
    check_bad(XCHG_ALLTOALL, spec, "key 'k' given twice", NULL);
    check_bad(XCHG_ALLTOALL, "pairwise:k=2,k=2", "key 'k' given twice", NULL);
    snprintf(spec, sizeof spec, "%s:inner=pairwise,inner=%s", inner, radix);
    check_bad(XCHG_ALLTOALLV, spec, "key 'inner' given twice", NULL);
}

/* inner= names an algorithm xchg implements: the message lists exactly those, not native. */
static void test_inner(void)
{
    const char *inner = with_key(XCHG_ALLTOALLV, "inner");
    char valid[256] = "(valid: ", spec[128];
    size_t used = strlen(valid);
    int first = 1;

    for (int i = 0; i < xchg_nalgos; i++)
        if (xchg_algos[i].coll == XCHG_ALLTOALL && xchg_algos[i].alltoall &&
            !xchg_algos[i].native) {
            used += (size_t)snprintf(valid + used, sizeof valid - used, "%s%s", first ? "" : ", ",
                                     xchg_algos[i].name);
            first = 0;
        }
    snprintf(valid + used, sizeof valid - used, ")");

    snprintf(spec, sizeof spec, "%s:inner=native", inner);
    check_bad(XCHG_ALLTOALLV, spec, valid, "not native");
    check_bad(XCHG_ALLTOALLV, spec, "inner=native: not an xchg alltoall algorithm", NULL);
    snprintf(spec, sizeof spec, "%s:inner=bogus", inner);
    check_bad(XCHG_ALLTOALLV, spec, valid, "native");
    snprintf(spec, sizeof spec, "%s:inner=", inner);
    check_bad(XCHG_ALLTOALLV, spec, "is not KEY=VALUE", NULL);
}

static void test_bad(void)
{
    const char *radix = with_key(XCHG_ALLTOALL, "r");
    char spec[128];

    check_bad(XCHG_ALLTOALL, "bogus", "unknown algorithm 'bogus' (valid: auto, native,", NULL);
    check_bad(XCHG_ALLTOALL, "", "unknown algorithm ''", NULL);
    check_bad(XCHG_ALLGATHER, "pairwise", "unknown algorithm 'pairwise'", NULL);
    check_bad(XCHG_ALLTOALL, "native:k=2", "unknown key 'k' for native (keys: none)", NULL);
    check_bad(XCHG_ALLTOALL, "pairwise:r=2", "unknown key 'r' for pairwise (keys: k)", NULL);
    check_bad(XCHG_ALLTOALL, "pairwise:k", "'k' is not KEY=VALUE", NULL);
    check_bad(XCHG_ALLTOALL, "pairwise:=2", "'=2' is not KEY=VALUE", NULL);
    check_bad(XCHG_ALLTOALL, "pairwise:k=0", "k=0: the number of ports must be", NULL);
    check_bad(XCHG_ALLTOALL, "pairwise:k=-1", "k=-1: the number of ports must be", NULL);
    check_bad(XCHG_ALLTOALL, "pairwise:k=2x", "k=2x: the number of ports must be", NULL);
    check_bad(XCHG_ALLTOALL, "pairwise:k=99999999999", "k=99999999999:", NULL);
    snprintf(spec, sizeof spec, "%s:r=1", radix);
    check_bad(XCHG_ALLTOALL, spec, "r=1: the radix must be an integer >= 2", NULL);
}

/* Long values: the message quotes 40 characters and "...", and still gives the reason. */
static void test_long(void)
{
    const char *radix = with_key(XCHG_ALLTOALL, "r");
    char *spec = malloc(102400 + 64);
    char x40[41];

    if (!spec) {
        CHECK(0, "malloc");
        return;
    }
    memset(x40, 'x', 40);
    x40[40] = '\0';

    /* too long for the parser at all: the reason, and no part of the value */
    memset(spec, 'x', 102400);
    spec[102400] = '\0';
    check_bad(XCHG_ALLTOALL, spec, "value is too long (102400 characters", "xxxxxxxxxx");
    snprintf(spec, 102400, "%s:r=2,", radix);
    memset(spec + strlen(spec), '9', 102400 - strlen(spec));
    spec[102400] = '\0';
    check_bad(XCHG_ALLTOALL, spec, "value is too long (102400 characters", NULL);

    /* long but parsed: each piece that is echoed is cut after 40 characters */
    memset(spec, 'x', 200);
    spec[200] = '\0';
    check_bad(XCHG_ALLTOALL, spec,
              "unknown algorithm 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' "
              "(valid: auto, native",
              NULL);
    strcpy(spec, "pairwise:");
    memset(spec + 9, 'x', 200);
    spec[209] = '\0';
    check_bad(XCHG_ALLTOALL, spec, "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is not KEY=VALUE",
              NULL);
    spec[150] = '=';
    check_bad(XCHG_ALLTOALL, spec,
              "unknown key 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' for pairwise", NULL);
    snprintf(spec, 300, "pairwise:k=%s%s%s%s", x40, x40, x40, x40);
    check_bad(XCHG_ALLTOALL, spec,
              "k=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...: the number of ports must be", NULL);
    snprintf(spec, 300, "%s:r=%s%s%s%s", radix, x40, x40, x40, x40);
    check_bad(XCHG_ALLTOALL, spec, "r=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...: the radix",
              NULL);

    /* exactly 40 characters: quoted whole, no "..." */
    snprintf(spec, 300, "pairwise:k=%s", x40);
    check_bad(XCHG_ALLTOALL, spec, "k=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx: the number", "...");
    free(spec);
}

int main(void)
{
    test_good();
    test_repeated_key();
    test_inner();
    test_bad();
    test_long();
    return unit_finish("test_registry");
}

/*
 * test_registry.c: the registry and its key descriptors (tuning/registry.c), without MPI.
 * Valid specs and their parameters; every kind of bad spec, each rejected with a message that
 * gives the reason; a key given twice; the inner= message listing only the algorithms xchg
 * implements; long values quoted as a short prefix; every entry well formed (designated
 * fields set, keys whose descriptors are complete and whose fields lie inside xchg_params_t);
 * formatting the inverse of parsing for every key; xchg-tune's variants of each key.
 * The algorithms with the keys r and inner are found in the registry by their keys, so the
 * test does not depend on their names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algos/sched/torus.h"
#include "../../tuning/registry.h"
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

/* spec parses as coll's algorithm name with radix, nports and inner (a registry entry). */
static void check_good(int coll, const char *spec, const char *name, int radix, int nports,
                       const xchg_algo_t *inner)
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
          "'%s': expected r=%d k=%d inner=%s, got r=%d k=%d inner=%s", spec, radix, nports,
          inner ? inner->name : "-", params.radix, params.nports,
          params.inner ? params.inner->name : "-");
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
    const xchg_algo_t *pairwise_inner = &xchg_algos[xchg_algo_find(XCHG_ALLTOALL, "pairwise")];
    const xchg_algo_t *radix_inner = &xchg_algos[xchg_algo_find(XCHG_ALLTOALL, radix)];
    char spec[128];

    check_good(XCHG_ALLTOALL, "native", "native", 0, 0, NULL);
    check_good(XCHG_ALLTOALL, "pairwise", "pairwise", 0, 0, NULL);
    check_good(XCHG_ALLTOALL, "pairwise:", "pairwise", 0, 0, NULL);
    check_good(XCHG_ALLTOALL, "pairwise:k=3", "pairwise", 0, 3, NULL);
    check_good(XCHG_ALLGATHER, "ring", "ring", 0, 0, NULL);
    snprintf(spec, sizeof spec, "%s:r=4,k=2", radix);
    check_good(XCHG_ALLTOALL, spec, radix, 4, 2, NULL);
    snprintf(spec, sizeof spec, "%s:k=2:r=1000000000", radix);
    check_good(XCHG_ALLTOALL, spec, radix, 1000000000, 2, NULL);
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
    /* a shape key too, and the second value bad: the repetition is what is reported */
    snprintf(spec, sizeof spec, "%s:dims=4x4,dims=bad", with_key(XCHG_ALLTOALL, "dims"));
    check_bad(XCHG_ALLTOALL, spec, "key 'dims' given twice", NULL);
}

/* Every entry is well formed: the fields the shim and the tools rely on are set, names are
 * unique per collective, every key's descriptor is complete and stores inside xchg_params_t,
 * and native entries are exactly those flagged native. */
static void test_entries(void)
{
    int natives[XCHG_NCOLLS] = {0};
    for (int i = 0; i < xchg_nalgos; i++) {
        const xchg_algo_t *a = &xchg_algos[i];
        CHECK(a->name && a->name[0] && a->coll >= 0 && a->coll < XCHG_NCOLLS && a->applies &&
                  a->cost && a->description && a->description[0] && a->source,
              "entry %d (%s): name, collective, predicate, model, description and source", i,
              a->name ? a->name : "?");
        CHECK(xchg_algo_find(a->coll, a->name) == i,
              "entry %d (%s %s) is not the first of its name", i, xchg_coll_name(a->coll), a->name);
        natives[a->coll] += a->native && strcmp(a->name, "native") == 0;
        CHECK(!a->native || strcmp(a->name, "native") == 0, "entry %d (%s) is flagged native", i,
              a->name);
        for (int k = 0; k < XCHG_MAX_KEYS && a->keys[k]; k++) {
            const xchg_param_t *d = a->keys[k];
            CHECK(d->key && d->key[0] && d->noun && d->meaning &&
                      (d->type == XCHG_PARAM_INT || d->type == XCHG_PARAM_SHAPE ||
                       d->type == XCHG_PARAM_ALGO) &&
                      d->field + sizeof(int) <= sizeof(xchg_params_t) &&
                      d->field2 + sizeof(int) <= sizeof(xchg_params_t) &&
                      (d->type == XCHG_PARAM_ALGO || (d->min >= 0 && d->min <= d->max)),
                  "%s %s: key %d's descriptor is incomplete", xchg_coll_name(a->coll), a->name, k);
            for (int j = 0; j < k; j++)
                CHECK(strcmp(a->keys[j]->key, d->key) != 0, "%s %s: key %s twice",
                      xchg_coll_name(a->coll), a->name, d->key);
        }
    }
    for (int c = 0; c < XCHG_NCOLLS; c++)
        CHECK(natives[c] == 1, "%s: %d native entries, expected 1", xchg_coll_name(c), natives[c]);
}

/* The flags the shim and the tools find entries by, instead of names: one native and one
 * baseline per collective (xchg_native_index, xchg_baseline_index find them; the baseline is
 * xchg's own and serves every call), and each xchg-sched printer named by one entry. */
static void test_flags(void)
{
    int baselines[XCHG_NCOLLS] = {0}, printers[8] = {0};
    xchg_topo_t topo = {.nnodes = 3, .min_node_ranks = 1, .max_node_ranks = 5};
    xchg_call_t call = {.comm_size = 7, .topo = &topo, .block_bytes = 100};
    for (int i = 0; i < xchg_nalgos; i++) {
        const xchg_algo_t *a = &xchg_algos[i];
        xchg_params_t none = {0};
        const char *why = "";
        baselines[a->coll] += a->baseline;
        CHECK(!a->native || xchg_native_index(a->coll) == i, "%s native: index %d, expected %d",
              xchg_coll_name(a->coll), xchg_native_index(a->coll), i);
        CHECK(!a->baseline || xchg_baseline_index(a->coll) == i,
              "%s %s: baseline index %d, expected %d", xchg_coll_name(a->coll), a->name,
              xchg_baseline_index(a->coll), i);
        call.coll = a->coll;
        CHECK(!a->baseline || (!a->native && !a->shared_memory && a->applies(&call, &none, &why)),
              "%s %s: a baseline must be xchg's, through xchg_exchange, and serve every call",
              xchg_coll_name(a->coll), a->name);
        CHECK(a->schedule >= XCHG_SCHEDULE_NONE && a->schedule <= XCHG_SCHEDULE_TORUS,
              "%s %s: schedule %d is no printer", xchg_coll_name(a->coll), a->name, a->schedule);
        if (a->schedule > XCHG_SCHEDULE_NONE && a->schedule <= XCHG_SCHEDULE_TORUS)
            printers[a->schedule]++;
    }
    for (int c = 0; c < XCHG_NCOLLS; c++)
        CHECK(baselines[c] == 1, "%s: %d baseline entries, expected 1", xchg_coll_name(c),
              baselines[c]);
    for (int s = XCHG_SCHEDULE_NONE + 1; s <= XCHG_SCHEDULE_TORUS; s++)
        CHECK(printers[s] == 1, "printer %d is named by %d entries, expected 1", s, printers[s]);
    CHECK(xchg_native_index(-1) == -1 && xchg_native_index(XCHG_NCOLLS) == -1 &&
              xchg_baseline_index(XCHG_NCOLLS) == -1,
          "a collective that does not exist has a native or baseline entry");
}

/* Formatting is the inverse of parsing, for every key of every algorithm: NAME:KEY=VALUE
 * parses, formats back to KEY=VALUE, and that parses to the same parameters. */
static void test_roundtrip(void)
{
    static const char *const ints[] = {"2", "3", "64", "1000000000"};
    static const char *const shapes[] = {"4x4", "2x6", "8", "1x5", "5x1"};
    static const char *const shapes_as[] = {"4x4", "2x6", "8", "5", "5"};
    for (int i = 0; i < xchg_nalgos; i++) {
        const xchg_algo_t *a = &xchg_algos[i];
        for (int k = 0; k < XCHG_MAX_KEYS && a->keys[k]; k++) {
            const xchg_param_t *d = a->keys[k];
            int n = d->type == XCHG_PARAM_INT ? 4 : d->type == XCHG_PARAM_SHAPE ? 5 : xchg_nalgos;
            for (int v = 0; v < n; v++) {
                char spec[256], text[128], want[128], err[256] = "";
                xchg_params_t params, again;
                int algo = -1;
                const char *value = d->type == XCHG_PARAM_INT     ? ints[v]
                                    : d->type == XCHG_PARAM_SHAPE ? shapes[v]
                                                                  : xchg_algos[v].name;
                if (d->type == XCHG_PARAM_ALGO &&
                    (xchg_algos[v].coll != d->coll || xchg_algos[v].native))
                    continue;
                snprintf(spec, sizeof spec, "%s:%s=%s", a->name, d->key, value);
                snprintf(want, sizeof want, "%s=%s", d->key,
                         d->type == XCHG_PARAM_SHAPE ? shapes_as[v] : value);
                if (xchg_spec_parse(a->coll, spec, &algo, &params, err, sizeof err) != 0) {
                    CHECK(d->type == XCHG_PARAM_INT && atol(value) < d->min,
                          "'%s' does not parse: %s", spec, err);
                    continue;
                }
                xchg_params_format(a, &params, text, sizeof text);
                CHECK(algo == i && strcmp(text, want) == 0, "'%s' formats as '%s', expected '%s'",
                      spec, text, want);
                snprintf(spec, sizeof spec, "%s:%s", a->name, text);
                CHECK(xchg_spec_parse(a->coll, spec, &algo, &again, err, sizeof err) == 0 &&
                          memcmp(&params, &again, sizeof params) == 0,
                      "'%s' parses back differently: %s", spec, err);
            }
        }
    }
}

/* The registry's shape values (dims=) and XCHG_TORUS's parser (xchg_torus_parse_dims,
 * shim/config.c) accept the same texts with the same shapes. */
static void test_shape_agrees(void)
{
    static const char *const texts[] = {
        "8",   "4x6",  "8x1", "1x5",  "1",           "1x1",         "1000000000",  "46340x46340",
        "",    "x",    "4x",  "x4",   "0",           "4x0",         "-4",          "4x4x4",
        "4X4", "4 x4", "+4",  "4x6 ", "65536x65536", "10000000000", "46341x46341", "007x2"};
    const xchg_algo_t *torus =
        &xchg_algos[xchg_algo_find(XCHG_ALLTOALL, with_key(XCHG_ALLTOALL, "dims"))];
    const xchg_param_t *dims = xchg_algo_key(torus, "dims");
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        xchg_params_t params = {0};
        char err[256];
        int r = 0, c = 0;
        int theirs = xchg_torus_parse_dims(texts[i], &r, &c);
        int ours = xchg_param_parse(dims, texts[i], &params, err, sizeof err);
        CHECK(ours == theirs && (ours != 0 || (params.dims_r == r && params.dims_c == c)),
              "dims='%s': registry %d (%dx%d), XCHG_TORUS's parser %d (%dx%d)", texts[i], ours,
              params.dims_r, params.dims_c, theirs, r, c);
    }
}

/* xchg-tune's variants: one key set per variant, the values of its descriptor for p ranks. */
static void test_variants(void)
{
    const xchg_algo_t *radix =
        &xchg_algos[xchg_algo_find(XCHG_ALLTOALL, with_key(XCHG_ALLTOALL, "r"))];
    const xchg_algo_t *inner =
        &xchg_algos[xchg_algo_find(XCHG_ALLTOALLV, with_key(XCHG_ALLTOALLV, "inner"))];
    xchg_params_t out[32];
    int n, r[3] = {0}, k[3] = {0}, nr = 0, nk = 0, ninner = 0, nalltoall = 0;

    /* p = 10: r = 2, 4 (ceil(sqrt 10)), 10; k = 1, 2, 4 */
    n = xchg_params_variants(radix, 10, out, 32);
    for (int i = 0; i < n; i++) {
        CHECK((out[i].radix > 0) + (out[i].nports > 0) == 1, "variant %d sets one key", i);
        if (out[i].radix > 0 && nr < 3)
            r[nr++] = out[i].radix;
        if (out[i].nports > 0 && nk < 3)
            k[nk++] = out[i].nports;
    }
    CHECK(n == 6 && r[0] == 2 && r[1] == 4 && r[2] == 10 && k[0] == 1 && k[1] == 2 && k[2] == 4,
          "radix at p=10: %d variants, r %d %d %d, k %d %d %d", n, r[0], r[1], r[2], k[0], k[1],
          k[2]);
    /* p = 3: k = 4 is skipped (not below p), k = 2 kept; r = 2, 2, 3 */
    n = xchg_params_variants(radix, 3, out, 32);
    nk = 0;
    for (int i = 0; i < n; i++)
        nk += out[i].nports > 0;
    CHECK(n == 5 && nk == 2, "radix at p=3: %d variants (%d of k), expected 5 (2)", n, nk);
    /* inner: every alltoall algorithm xchg implements */
    n = xchg_params_variants(inner, 16, out, 32);
    for (int i = 0; i < n; i++)
        ninner += out[i].inner != NULL;
    for (int i = 0; i < xchg_nalgos; i++)
        nalltoall += xchg_algos[i].coll == XCHG_ALLTOALL && !xchg_algos[i].native;
    CHECK(ninner == nalltoall, "twophase variants: %d inner, expected %d", ninner, nalltoall);
    CHECK(xchg_param_token("SQRTP", 5, 10) == 4 && xchg_param_token("P", 1, 1) == 2 &&
              xchg_param_token("12", 2, 5) == 12 && xchg_param_token("x", 1, 5) == -1,
          "candidate tokens");
}

/* inner= names an algorithm xchg implements: the message lists exactly those, not native. */
static void test_inner(void)
{
    const char *inner = with_key(XCHG_ALLTOALLV, "inner");
    char valid[256] = "(valid: ", spec[128];
    size_t used = strlen(valid);
    int first = 1;

    for (int i = 0; i < xchg_nalgos; i++)
        if (xchg_algos[i].coll == XCHG_ALLTOALL && !xchg_algos[i].native) {
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
    test_entries();
    test_flags();
    test_roundtrip();
    test_variants();
    test_shape_agrees();
    test_inner();
    test_bad();
    test_long();
    return unit_finish("test_registry");
}

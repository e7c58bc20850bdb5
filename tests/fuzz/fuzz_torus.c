/*
 * fuzz_torus.c: torus shapes: XCHG_TORUS (tuning/env.c: xchg_env_torus), the shape parser
 * behind it (algos/sched/torus.c: xchg_torus_parse_dims) and the registry's dims= values
 * (tuning/registry.c: xchg_param_parse of the torus algorithm's key), on the input as a C
 * string.
 *
 * Checks, besides "no crash, no sanitizer finding":
 *  - the three agree with a reference written here from the grammar (R, or RxC with a lower
 *    case x; digits only; each dimension from 1 to 10^9; at most 2^31 - 1 nodes; a dimension
 *    of 1 makes a ring, 1 x P) on every text, XCHG_TORUS also taking the empty text as unset;
 *  - a parsed shape written back ("P" for a ring, else "RxC") parses to the same shape;
 *  - a rejected XCHG_TORUS leaves {0, 0} and a message naming the variable and quoting the
 *    value, ending "; ignored";
 *  - a parsed shape of at most 32 nodes builds its schedule (xchg_torus_init) with that many
 *    nodes, and node 0's plan.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../../algos/sched/torus.h"
#include "../../tuning/env.h"
#include "../../tuning/registry.h"
#include "fuzz.h"

#define DIM_MAX 1000000000LL

/* One dimension: digits only, 1 .. DIM_MAX; 0 and *end, or -1. */
static int reference_dim(const char *text, const char **end, long long *value)
{
    long long v = 0;
    const char *at = text;
    while (*at >= '0' && *at <= '9' && v <= DIM_MAX)
        v = v * 10 + (*at++ - '0');
    if (at == text || v < 1 || v > DIM_MAX)
        return -1;
    *end = at;
    *value = v;
    return 0;
}

static int reference(const char *text, int *rows, int *cols)
{
    const char *at = text;
    long long r, c = 1;
    if (reference_dim(at, &at, &r) != 0 || (*at == 'x' && reference_dim(at + 1, &at, &c) != 0) ||
        *at != '\0' || r * c > INT_MAX)
        return -1;
    *rows = r == 1 || c == 1 ? 1 : (int)r;
    *cols = r == 1 || c == 1 ? (int)(r * c) : (int)c;
    return 0;
}

/* The dims= key's descriptor: the key of the first algorithm that takes one. */
static const xchg_param_t *dims_key(void)
{
    for (int i = 0; i < xchg_nalgos; i++)
        if (xchg_algo_key(&xchg_algos[i], "dims"))
            return xchg_algo_key(&xchg_algos[i], "dims");
    abort();
}

static void check_schedule(int rows, int cols)
{
    xchg_torus_t torus;
    xchg_torus_plan_t plan;
    FUZZ_CHECK(xchg_torus_init(&torus, rows, cols) == 0 && torus.nodes == rows * cols &&
                   torus.rows == rows && torus.cols == cols,
               "%dx%d: no schedule of %d nodes", rows, cols, rows * cols);
    FUZZ_CHECK(xchg_torus_plan_init(&torus, 0, &plan) == 0, "%dx%d: no plan for node 0", rows,
               cols);
    xchg_torus_plan_free(&plan);
    xchg_torus_free(&torus);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), err[512] = "", back[32];
    int rows = -1, cols = -1, want_rows = 0, want_cols = 0, dims[2] = {-1, -1};
    int want = reference(text, &want_rows, &want_cols);
    int rc = xchg_torus_parse_dims(text, &rows, &cols);
    int env_rc = xchg_env_torus(text, dims, err, sizeof err);
    xchg_params_t params;

    /* the shape parser, XCHG_TORUS and dims= against the reference */
    FUZZ_CHECK(rc == want && (rc != 0 || (rows == want_rows && cols == want_cols)),
               "'%s': xchg_torus_parse_dims %d (%dx%d), the reference %d (%dx%d)", text, rc, rows,
               cols, want, want_rows, want_cols);
    if (*text)
        FUZZ_CHECK(env_rc == want && dims[0] == (want ? 0 : want_rows) &&
                       dims[1] == (want ? 0 : want_cols),
                   "XCHG_TORUS='%s': %d (%dx%d)", text, env_rc, dims[0], dims[1]);
    else
        FUZZ_CHECK(env_rc == 0 && dims[0] == 0 && dims[1] == 0, "XCHG_TORUS='' is not unset");
    FUZZ_CHECK(env_rc == 0 ||
                   (fuzz_names_value(err, "XCHG_TORUS", text) && fuzz_ends_with(err, "; ignored")),
               "XCHG_TORUS='%s': message '%s'", text, err);
    memset(&params, 0, sizeof params);
    rc = xchg_param_parse(dims_key(), text, &params, err, sizeof err);
    FUZZ_CHECK(
        rc == want && (rc != 0 || (params.dims_r == want_rows && params.dims_c == want_cols)),
        "dims=%s: %d (%dx%d), the reference %d", text, rc, params.dims_r, params.dims_c, want);

    /* written back, and small shapes' schedules */
    if (want == 0) {
        if (want_rows == 1)
            snprintf(back, sizeof back, "%d", want_cols);
        else
            snprintf(back, sizeof back, "%dx%d", want_rows, want_cols);
        FUZZ_CHECK(xchg_torus_parse_dims(back, &rows, &cols) == 0 && rows == want_rows &&
                       cols == want_cols,
                   "'%s' written back as '%s' parses to %dx%d", text, back, rows, cols);
        if ((long long)want_rows * want_cols <= 32)
            check_schedule(want_rows, want_cols);
    }
    free(text);
    return 0;
}

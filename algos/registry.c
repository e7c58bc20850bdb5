/*
 * registry.c: the algorithms of each collective, by name.
 * Adding an algorithm = one file in algos/ + one line here (+ its cost model in tuning/).
 * "native" is the MPI library's own collective: the shim calls the PMPI function for it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xchg.h"
#include "../tuning/cost.h"
#include "../tuning/table.h"
#include "sched/twophase.h"
#include "sched/factor.h"
#include "sched/torus.h"

static int applies_always(const xchg_call_t *call, const xchg_params_t *params, const char **why)
{
    (void)call;
    (void)params;
    (void)why;
    return 1;
}

const xchg_algo_t xchg_algos[] = {
    /* MPI_Alltoall */
    {"native", XCHG_ALLTOALL, NULL, NULL, NULL, applies_always, xchg_params_parse_key,
     xchg_cost_native, "", "the MPI library's own MPI_Alltoall", 0, 1},
    {"pairwise", XCHG_ALLTOALL, xchg_alltoall_pairwise, NULL, NULL, applies_always,
     xchg_params_parse_key, xchg_cost_alltoall_pairwise, "k",
     "p-1 exchanges with rank+s and rank-s (radix index with r = p), k steps in flight", 0, 0},
    {"radix", XCHG_ALLTOALL, xchg_alltoall_radix, NULL, NULL, applies_always,
     xchg_params_parse_key, xchg_cost_alltoall_radix, "r,k",
     "Bruck radix-r index: ceil(log_r p) subphases of r-1 packed steps, k steps in flight", 0, 0},
    {"hier", XCHG_ALLTOALL, xchg_alltoall_hier, NULL, NULL, xchg_alltoall_hier_applies,
     xchg_params_parse_key, xchg_cost_alltoall_hier, "k",
     "Sanders-Traff hierarchical factor: phases over node sizes, rounds over the 1-factors of "
     "the nodes, k inter-node steps of a node in flight", 0, 0},
    {"torus", XCHG_ALLTOALL, xchg_alltoall_torus, NULL, NULL, xchg_alltoall_torus_applies,
     xchg_params_parse_key, xchg_cost_alltoall_torus, "dims",
     "Liu et al. all-port ring (AR) and 2D torus (AT2) complete exchange on a periodic "
     "Cartesian communicator or XCHG_TORUS: shortest paths, every port every step", 0, 0},
    /* registry:alltoall */

    /* MPI_Allgather */
    {"native", XCHG_ALLGATHER, NULL, NULL, NULL, applies_always, xchg_params_parse_key,
     xchg_cost_native, "", "the MPI library's own MPI_Allgather", 0, 1},
    {"ring", XCHG_ALLGATHER, NULL, xchg_allgather_ring, NULL, applies_always,
     xchg_params_parse_key, xchg_cost_allgather_ring, "",
     "p-1 rounds, each passing the newest block to rank+1", 0, 0},
    {"circulant", XCHG_ALLGATHER, NULL, xchg_allgather_circulant, NULL, applies_always,
     xchg_params_parse_key, xchg_cost_allgather_circulant, "k",
     "Bruck circulant concatenation: ceil(log_{k+1} p) rounds, optimal bytes, k ports", 0, 0},
    /* registry:allgather */

    /* MPI_Alltoallv */
    {"native", XCHG_ALLTOALLV, NULL, NULL, NULL, applies_always, xchg_params_parse_key,
     xchg_cost_native, "", "the MPI library's own MPI_Alltoallv", 1, 1},
    {"pairwise", XCHG_ALLTOALLV, NULL, NULL, xchg_alltoallv_pairwise, applies_always,
     xchg_params_parse_key, xchg_cost_alltoallv_pairwise, "k",
     "p-1 exchanges with rank+s and rank-s, k steps in flight", 1, 0},
    {"twophase", XCHG_ALLTOALLV, NULL, NULL, xchg_alltoallv_twophase, xchg_alltoallv_twophase_applies,
     xchg_params_parse_key, xchg_cost_alltoallv_twophase, "inner,r,k",
     "Bader-Helman-JaJa two-phase h-relation: deal units over p bins, two fixed-block "
     "alltoall transposes (inner, r, k)", 0, 0},
    {"hier", XCHG_ALLTOALLV, NULL, NULL, xchg_alltoallv_hier, xchg_alltoall_hier_applies,
     xchg_params_parse_key, xchg_cost_alltoallv_hier, "k",
     "Sanders-Traff hierarchical factor, each message with its own size: phases over node "
     "sizes, rounds over the 1-factors of the nodes, k inter-node steps of a node in flight",
     1, 0},
    /* registry:alltoallv */
};
const int xchg_nalgos = (int)(sizeof xchg_algos / sizeof xchg_algos[0]);

static const char *const coll_names[XCHG_NCOLLS] = {"alltoall", "allgather", "alltoallv"};

const char *xchg_coll_name(int coll)
{
    return coll >= 0 && coll < XCHG_NCOLLS ? coll_names[coll] : "?";
}

int xchg_algo_find(int coll, const char *name)
{
    for (int i = 0; i < xchg_nalgos; i++)
        if (xchg_algos[i].coll == coll && strcmp(xchg_algos[i].name, name) == 0)
            return i;
    return -1;
}

int xchg_algo_has_key(const xchg_algo_t *algo, const char *key)
{
    size_t len = strlen(key);
    const char *k = algo->keys;
    while (*k) {
        size_t n = strcspn(k, ",");
        if (n == len && strncmp(k, key, n) == 0)
            return 1;
        k += n;
        if (*k == ',')
            k++;
    }
    return 0;
}

/* 1 when xchg runs the algorithm itself (it is not the MPI library's native collective). */
static int implemented(const xchg_algo_t *a)
{
    return !a->native && (a->alltoall || a->allgather || a->alltoallv);
}

/* The names of coll's algorithms, comma separated, for error messages; with xchg_only, only
 * those xchg implements itself (not native). */
static void list_names(int coll, int xchg_only, char *out, size_t outlen)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < xchg_nalgos && used < outlen; i++) {
        const xchg_algo_t *a = &xchg_algos[i];
        if (a->coll == coll && (implemented(a) || !xchg_only))
            used += (size_t)snprintf(out + used, outlen - used, "%s%s", used ? ", " : "", a->name);
    }
}

static int parse_int(const char *value, int lo, long *out)
{
    char *end;
    long v;
    if (!isdigit((unsigned char)value[0]))
        return -1;
    v = strtol(value, &end, 10);
    if (*end != '\0' || v < lo || v > 1000000000L)
        return -1;
    *out = v;
    return 0;
}

int xchg_params_parse_key(const char *key, const char *value, xchg_params_t *params, char *err,
                          size_t errlen)
{
    long v;
    if (strcmp(key, "r") == 0) {
        if (parse_int(value, 2, &v) != 0) {
            snprintf(err, errlen, "r=%.*s%s: the radix must be an integer >= 2", XCHG_QUOTE(value));
            return -1;
        }
        params->radix = (int)v;
        return 0;
    }
    if (strcmp(key, "k") == 0) {
        if (parse_int(value, 1, &v) != 0) {
            snprintf(err, errlen, "k=%.*s%s: the number of ports must be an integer >= 1",
                     XCHG_QUOTE(value));
            return -1;
        }
        params->nports = (int)v;
        return 0;
    }
    if (strcmp(key, "inner") == 0) {
        int idx = xchg_algo_find(XCHG_ALLTOALL, value);
        if (idx < 0 || !implemented(&xchg_algos[idx])) {
            char names[256];
            list_names(XCHG_ALLTOALL, 1, names, sizeof names);
            snprintf(err, errlen, "inner=%.*s%s: not an xchg alltoall algorithm (valid: %s)",
                     XCHG_QUOTE(value), names);
            return -1;
        }
        params->inner = idx + 1;
        return 0;
    }
    if (strcmp(key, "dims") == 0) {
        if (xchg_torus_parse_dims(value, &params->dims_r, &params->dims_c) != 0) {
            snprintf(err, errlen,
                     "dims=%.*s%s: expected RxC (a torus, e.g. 4x4) or P (a ring), dimensions "
                     "from 1 to 1000000000",
                     XCHG_QUOTE(value));
            return -1;
        }
        return 0;
    }
    snprintf(err, errlen, "unknown key '%.*s%s'", XCHG_QUOTE(key));
    return -1;
}

/* The most keys one algorithm has (a->keys); more than any registry entry needs. */
#define SPEC_MAX_KEYS 16

/* One KEY=VALUE item of a spec (modified in place) into params. seen[0..*nseen) are the keys
 * given before it: a key given twice is an error, not "the last one wins". */
static int parse_item(const xchg_algo_t *a, char *item, const char **seen, int *nseen,
                      xchg_params_t *params, char *err, size_t errlen)
{
    char *eq = strchr(item, '=');

    /* the form, then the key, then the value (the algorithm's own parser) */
    if (!eq || eq == item || eq[1] == '\0') {
        snprintf(err, errlen, "'%.*s%s' is not KEY=VALUE (keys of %s: %s)", XCHG_QUOTE(item),
                 a->name, a->keys[0] ? a->keys : "none");
        return -1;
    }
    *eq = '\0';
    if (!xchg_algo_has_key(a, item)) {
        snprintf(err, errlen, "unknown key '%.*s%s' for %s (keys: %s)", XCHG_QUOTE(item), a->name,
                 a->keys[0] ? a->keys : "none");
        return -1;
    }
    for (int i = 0; i < *nseen; i++)
        if (strcmp(seen[i], item) == 0) {
            snprintf(err, errlen, "key '%s' given twice", item);
            return -1;
        }
    if (*nseen < SPEC_MAX_KEYS)
        seen[(*nseen)++] = item;
    return a->parse(item, eq + 1, params, err, errlen);
}

int xchg_spec_parse(int coll, const char *spec, int *algo, xchg_params_t *params, char *err,
                    size_t errlen)
{
    char buf[256], names[256];
    const char *seen[SPEC_MAX_KEYS];
    int nseen = 0;
    char *name, *rest, *item, *save = NULL;
    size_t len = strlen(spec);

    memset(params, 0, sizeof *params);
    if (len >= sizeof buf) {
        snprintf(err, errlen, "value is too long (%zu characters; at most %zu)", len,
                 sizeof buf - 1);
        return -1;
    }

    /* the name, up to the first ':' */
    memcpy(buf, spec, len + 1);
    name = buf;
    rest = strchr(buf, ':');
    if (rest)
        *rest++ = '\0';
    *algo = xchg_algo_find(coll, name);
    if (*algo < 0) {
        list_names(coll, 0, names, sizeof names);
        snprintf(err, errlen, "unknown algorithm '%.*s%s' (valid: auto, %s)", XCHG_QUOTE(name),
                 names);
        return -1;
    }

    /* KEY=VALUE items, separated by ',' or ':' */
    for (item = rest ? strtok_r(rest, ",:", &save) : NULL; item; item = strtok_r(NULL, ",:", &save))
        if (parse_item(&xchg_algos[*algo], item, seen, &nseen, params, err, errlen) != 0)
            return -1;
    return 0;
}

void xchg_params_format(const xchg_algo_t *algo, const xchg_params_t *params, char *out,
                        size_t outlen)
{
    size_t used = 0;
    out[0] = '\0';
    if (xchg_algo_has_key(algo, "inner") && params->inner > 0)
        used += (size_t)snprintf(out + used, outlen - used, "inner=%s",
                                 xchg_algos[params->inner - 1].name);
    if (xchg_algo_has_key(algo, "r") && params->radix > 0 && used < outlen)
        used += (size_t)snprintf(out + used, outlen - used, "%sr=%d", used ? "," : "",
                                 params->radix);
    if (xchg_algo_has_key(algo, "k") && params->nports > 0 && used < outlen)
        used += (size_t)snprintf(out + used, outlen - used, "%sk=%d", used ? "," : "",
                                 params->nports);
    /* a ring (1 x P) as P */
    if (xchg_algo_has_key(algo, "dims") && params->dims_r == 1 && params->dims_c > 0 &&
        used < outlen)
        snprintf(out + used, outlen - used, "%sdims=%d", used ? "," : "", params->dims_c);
    else if (xchg_algo_has_key(algo, "dims") && params->dims_r > 0 && params->dims_c > 0 &&
             used < outlen)
        snprintf(out + used, outlen - used, "%sdims=%dx%d", used ? "," : "", params->dims_r,
                 params->dims_c);
}

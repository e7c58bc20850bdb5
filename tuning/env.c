/*
 * env.c: the parsers of the XCHG_* environment variables (env.h), moved out of shim/config.c
 * so that they need no MPI: each takes the variable's text and returns the value, or the safe
 * default and the message that shim/config.c prints. The tuning table's path is only copied
 * here; the file is read by tuning/table_load.c and parsed by tuning/table_parse.c, the
 * algorithm specs by tuning/registry.c, sizes by tuning/size.c, torus shapes by
 * algos/sched/torus.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "registry.h"
#include "size.h"
#include "../algos/sched/torus.h"

static const char *const coll_vars[XCHG_NCOLLS] = {"XCHG_ALLTOALL", "XCHG_ALLGATHER",
                                                   "XCHG_ALLTOALLV"};

/* unset or empty */
static int is_unset(const char *text)
{
    return !text || !*text;
}

int xchg_env_flag(const char *name, const char *text, int *on, char *err, size_t errlen)
{
    *on = 0;
    if (is_unset(text) || strcmp(text, "0") == 0)
        return 0;
    if (strcmp(text, "1") == 0) {
        *on = 1;
        return 0;
    }
    snprintf(err, errlen, "%s=%.*s%s: expected 0 or 1; using 0", name, XCHG_QUOTE(text));
    return -1;
}

int xchg_env_wait(const char *text, int *wait, char *err, size_t errlen)
{
    *wait = XCHG_WAIT_AUTO;
    if (is_unset(text) || strcmp(text, "auto") == 0)
        return 0;
    if (strcmp(text, "spin") == 0) {
        *wait = XCHG_WAIT_SPIN;
        return 0;
    }
    if (strcmp(text, "yield") == 0) {
        *wait = XCHG_WAIT_YIELD;
        return 0;
    }
    snprintf(err, errlen, "XCHG_WAIT=%.*s%s: expected auto, spin or yield; using auto",
             XCHG_QUOTE(text));
    return -1;
}

int xchg_env_shm_bytes(const char *text, size_t *bytes, char *err, size_t errlen)
{
    size_t value;
    *bytes = XCHG_SHM_DEFAULT;
    if (is_unset(text))
        return 0;
    if (xchg_parse_size(text, &value) != 0 || value > XCHG_SHM_MAX) {
        snprintf(err, errlen,
                 "XCHG_SHM_BYTES=%.*s%s: expected a byte size up to 1T (such as 1M, or 0 for "
                 "no shared memory); using 1M",
                 XCHG_QUOTE(text));
        return -1;
    }
    *bytes = value;
    return 0;
}

/* XCHG_NODES's items, one per comma and one more */
static size_t count_items(const char *text)
{
    size_t items = 1;
    for (const char *at = text; *at; at++)
        items += *at == ',';
    return items;
}

/* The decimal count at text (digits only: no sign, no blank), up to *end; -1 when there are
 * no digits or it is above max. */
static long long parse_count(const char *text, const char **end, int max)
{
    long long value = 0;
    const char *at = text;
    for (; *at >= '0' && *at <= '9'; at++)
        if (value <= max)
            value = value * 10 + (*at - '0');
    *end = at;
    return at == text || value > max ? -1 : value;
}

int xchg_env_nodes(const char *text, int world, int **sizes, int *nnodes, char *err, size_t errlen)
{
    long long total = 0; /* n counts of up to world each: beyond an int */
    int n = 0, *parsed;
    size_t items;
    const char *at;

    *sizes = NULL;
    *nnodes = 0;
    if (is_unset(text))
        return 0;

    /* one slot per item (each item ends at a comma or at the end) */
    items = count_items(text);
    parsed = malloc(items * sizeof *parsed);
    if (!parsed) {
        snprintf(err, errlen, "XCHG_NODES=%.*s%s: out of memory for %zu node sizes; ignored",
                 XCHG_QUOTE(text), items);
        return -1;
    }

    /* positive counts, each up to the job's size, separated by single commas */
    for (at = text; *at;) {
        const char *end;
        long long v = parse_count(at, &end, world);
        if (v < 1 || n == world || (*end && *end != ',') || (*end == ',' && !end[1])) {
            snprintf(err, errlen,
                     "XCHG_NODES=%.*s%s: expected positive rank counts separated by commas "
                     "(e.g. 3,1,2); ignored",
                     XCHG_QUOTE(text));
            free(parsed);
            return -1;
        }
        parsed[n++] = (int)v;
        total += v;
        at = *end ? end + 1 : end;
    }

    /* adding up to the job's size */
    if (total != world) {
        snprintf(err, errlen,
                 "XCHG_NODES=%.*s%s: the node sizes add up to %lld, not to the job's %d ranks; "
                 "ignored",
                 XCHG_QUOTE(text), total, world);
        free(parsed);
        return -1;
    }
    *sizes = parsed;
    *nnodes = n;
    return 0;
}

int xchg_env_torus(const char *text, int dims[2], char *err, size_t errlen)
{
    int rows, cols;
    dims[0] = dims[1] = 0;
    if (is_unset(text))
        return 0;
    if (xchg_torus_parse_dims(text, &rows, &cols) != 0) {
        snprintf(err, errlen,
                 "XCHG_TORUS=%.*s%s: expected RxC (a torus, e.g. 4x4) or P (a ring) with "
                 "dimensions from 1 to 1000000000; ignored",
                 XCHG_QUOTE(text));
        return -1;
    }
    dims[0] = rows;
    dims[1] = cols;
    return 0;
}

/* A path for variable `name`, copied into path when it fits pathlen, else -1 with the message
 * "NAME=TEXT: the path is longer than N characters; FALLBACK". */
static int copy_path(const char *name, const char *text, char *path, size_t pathlen,
                     const char *fallback, char *err, size_t errlen)
{
    if (strlen(text) >= pathlen) {
        snprintf(err, errlen, "%s=%.*s%s: the path is longer than %zu characters; %s", name,
                 XCHG_QUOTE(text), pathlen - 1, fallback);
        return -1;
    }
    memcpy(path, text, strlen(text) + 1);
    return 0;
}

int xchg_env_learn(const char *text, int *learn, char *path, size_t pathlen, char *err,
                   size_t errlen)
{
    *learn = 1;
    path[0] = '\0';
    if (is_unset(text) || strcmp(text, "1") == 0)
        return 0;
    if (strcmp(text, "0") == 0) {
        *learn = 0;
        return 0;
    }
    return copy_path("XCHG_LEARN", text, path, pathlen, "learning without writing a file", err,
                     errlen);
}

int xchg_env_tuning(const char *text, char *path, size_t pathlen, char *err, size_t errlen)
{
    path[0] = '\0';
    if (is_unset(text))
        return 0;
    return copy_path("XCHG_TUNING", text, path, pathlen, "using the built-in cost models", err,
                     errlen);
}

int xchg_env_cache(const char *text, int *where, char *dir, size_t dirlen, char *err, size_t errlen)
{
    *where = XCHG_CACHE_DEFAULT;
    dir[0] = '\0';
    if (is_unset(text) || strcmp(text, "1") == 0)
        return 0;
    if (strcmp(text, "0") == 0) {
        *where = XCHG_CACHE_OFF;
        return 0;
    }
    if (text[0] != '/') {
        snprintf(err, errlen,
                 "XCHG_CACHE=%.*s%s: not an absolute directory (or 0 or 1); using the default "
                 "cache directory",
                 XCHG_QUOTE(text));
        return -1;
    }
    if (copy_path("XCHG_CACHE", text, dir, dirlen, "using the default cache directory", err,
                  errlen) != 0)
        return -1;
    *where = XCHG_CACHE_DIR;
    return 0;
}

const char *xchg_env_coll_var(int coll)
{
    return coll >= 0 && coll < XCHG_NCOLLS ? coll_vars[coll] : "?";
}

int xchg_env_spec(int coll, const char *text, int *algo, xchg_params_t *params, char *why,
                  size_t whylen)
{
    *algo = XCHG_ENV_AUTO;
    memset(params, 0, sizeof *params);
    if (is_unset(text) || strcmp(text, "auto") == 0)
        return 0;
    if (xchg_spec_parse(coll, text, algo, params, why, whylen) != 0) {
        *algo = XCHG_ENV_AUTO;
        memset(params, 0, sizeof *params);
        return -1;
    }
    return 0;
}

int xchg_env_collective(int coll, const char *text, int *algo, xchg_params_t *params, char *err,
                        size_t errlen)
{
    char why[512];
    if (xchg_env_spec(coll, text, algo, params, why, sizeof why) == 0)
        return 0;
    snprintf(err, errlen, "%s=%.*s%s: %s; using auto", xchg_env_coll_var(coll), XCHG_QUOTE(text),
             why);
    return -1;
}

int xchg_env_mpi_yields(const char *text)
{
    return text &&
           (strcmp(text, "1") == 0 || strcmp(text, "true") == 0 || strcmp(text, "yes") == 0);
}

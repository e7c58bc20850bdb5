/*
 * registry.c: the algorithms of each collective, by name, and the descriptors of their keys.
 * An entry holds everything about an algorithm that needs no MPI: name, predicate, cost model,
 * keys, description, source, flags. The function that runs it is bound by the same name in
 * algos/impls.c; "native" (native = 1) is the MPI library's own collective and has none.
 * Every tool and table works from these entries: spec parsing and formatting (here), the
 * tuning table (table_parse.c), xchg-tune's candidates (xchg_params_variants), xchg-bench's specs,
 * xchg-sched's arguments and subcommands and the README's tables (xchg_registry_markdown,
 * xchg-decide --markdown, checked against README.md by the suite). Code outside this file
 * names no algorithm: it finds entries by their flags (xchg_native_index, xchg_baseline_index,
 * the schedule field) or by a name it was given (sim/project.c's account of MPICH's choices).
 * Adding an algorithm: an entry below (new keys: a descriptor and a field of xchg_params_t),
 * its binding in algos/impls.c (docs/adding-an-algorithm.md).
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "cost.h"
#include "size.h"
#include "../algos/sched/twophase.h"
#include "../algos/sched/factor.h"
#include "../algos/sched/torus.h"
#include "../algos/sched/shm.h"
#include "../algos/sched/node.h"

#define VALUE_MAX 1000000000L /* the largest integer a key takes */

/* ------------------------------------------------------------------------------------------ */
/* The keys                                                                                   */

static const xchg_param_t key_r = {
    .key = "r",
    .type = XCHG_PARAM_INT,
    .field = offsetof(xchg_params_t, radix),
    .min = 2,
    .max = VALUE_MAX,
    .noun = "the radix",
    .meaning = "radix of the index algorithm (above p acts as p)",
    .tune = "2,SQRTP,P",
    .bench = "2,SQRTP,P",
};

static const xchg_param_t key_k = {
    .key = "k",
    .type = XCHG_PARAM_INT,
    .field = offsetof(xchg_params_t, nports),
    .min = 1,
    .max = VALUE_MAX,
    .noun = "the number of ports",
    .meaning = "ports: messages (steps) in flight at once",
    .tune = "1,2,4",
};

static const xchg_param_t key_inner = {
    .key = "inner",
    .type = XCHG_PARAM_ALGO,
    .field = offsetof(xchg_params_t, inner),
    .coll = XCHG_ALLTOALL,
    .noun = "the inner algorithm",
    .meaning = "the alltoall algorithm of the transposes (its r and k are the algorithm's)",
    .tune = "*",
};

static const xchg_param_t key_dims = {
    .key = "dims",
    .type = XCHG_PARAM_SHAPE,
    .field = offsetof(xchg_params_t, dims_r),
    .field2 = offsetof(xchg_params_t, dims_c),
    .min = 1,
    .max = VALUE_MAX,
    .noun = "the shape",
    .meaning = "torus shape RxC (rank = x c + y), or P for a ring",
};

static const xchg_param_t key_leaders = {
    .key = "leaders",
    .type = XCHG_PARAM_INT,
    .field = offsetof(xchg_params_t, leaders),
    .min = 1,
    .max = VALUE_MAX,
    .noun = "the number of leaders per node",
    .meaning = "ranks of each node that exchange with other nodes (above a node's ranks acts as "
               "them; 1 with k=1: one message at a time, the factor schedule)",
    .tune = "1,2,4",
};

/* ------------------------------------------------------------------------------------------ */
/* The algorithms                                                                             */

static int applies_always(const xchg_call_t *call, const xchg_params_t *params, const char **why)
{
    (void)call;
    (void)params;
    (void)why;
    return 1;
}

/* shm: every rank in one machine's shared memory, and a half large enough for the slots */
static int shm_applies(const xchg_call_t *call, const xchg_params_t *params, const char **why)
{
    size_t limit = call->topo ? call->topo->shm_bytes : 0;
    (void)params;
    if (call->comm_size <= 1)
        return 1;
    if (limit == 0) {
        *why = "the ranks do not all share one machine's memory (several nodes, real or "
               "XCHG_NODES's, or XCHG_SHM_BYTES=0)";
        return 0;
    }
    if (!xchg_shm_fits(call->coll, call->comm_size, limit)) {
        *why = "XCHG_SHM_BYTES is too small for a slot per pair of ranks";
        return 0;
    }
    return 1;
}

#define SHM_SOURCE "shared memory (POSIX, a segment per node)"
#define NODE_SOURCE                                                                                \
    "Sanders, Träff, Section 2 (Lemma 1), Section 3 (node order, single-ported nodes), over "     \
    "nodes; shared memory (POSIX, a segment per node)"

const xchg_algo_t xchg_algos[] = {
    /* MPI_Alltoall */
    {
        .name = "native",
        .coll = XCHG_ALLTOALL,
        .applies = applies_always,
        .cost = xchg_cost_native,
        .description = "the MPI library's own MPI_Alltoall",
        .source = "",
        .native = 1,
    },
    {
        .name = "pairwise",
        .coll = XCHG_ALLTOALL,
        .applies = applies_always,
        .cost = xchg_cost_alltoall_pairwise,
        .keys = {&key_k},
        .description = "p-1 steps, step s sends to rank+s and receives from rank-s, k steps in "
                       "flight (the r = p case of the radix index algorithm)",
        .source = "baseline",
        .baseline = 1,
    },
    {
        .name = "radix",
        .coll = XCHG_ALLTOALL,
        .applies = applies_always,
        .cost = xchg_cost_alltoall_radix,
        .keys = {&key_r, &key_k},
        .description = "radix-r index algorithm: ceil(log_r p) subphases of at most r-1 packed "
                       "steps, k steps per round; C1 = ceil((r-1)/k) ceil(log_r p); r = 2 "
                       "minimises rounds, r = p moves each block once",
        .source = "Bruck et al. 1997, Section 3, Appendix A",
        .schedule = XCHG_SCHEDULE_RADIX,
    },
    {
        .name = "hier",
        .coll = XCHG_ALLTOALL,
        .applies = xchg_alltoall_hier_applies,
        .cost = xchg_cost_alltoall_hier,
        .keys = {&key_k},
        .description =
            "hierarchical factor algorithm for nodes with different numbers of ranks: phases "
            "over the distinct node sizes, each with a round per 1-factor of the nodes still "
            "active (ordered by size), paired nodes exchanging one step at a time per pair (k "
            "steps of a node in flight); the intra-node exchange runs in the first phase "
            "(Section 4); one node: pairwise inside it. Priced on the two-level machine "
            "(inter-node steps at the inter-node constants and the node's injection limit, "
            "intra-node work at the intra-node ones); with one level of constants auto does not "
            "pick it",
        .source = "Sanders, Träff, Fig. 2, Lemma 1, Section 4",
        .schedule = XCHG_SCHEDULE_HIER,
    },
    {
        .name = "torus",
        .coll = XCHG_ALLTOALL,
        .applies = xchg_alltoall_torus_applies,
        .cost = xchg_cost_alltoall_torus,
        .keys = {&key_dims},
        .description =
            "all-port ring and 2D torus complete exchange: every step sends out of all ports at "
            "once (2 on a ring, 4 on a torus, one message each, 1, 2 or 4 hops away), every "
            "node relaying what is not for it, every block on a shortest path and no link used "
            "twice in a step. Ring (AR): p/2 steps, ceil(p^2/8) blocks; r x c torus of "
            "multiples of 4 (AT2): phase 1 to the node's parity group in 2 steps, then AR on "
            "the logical rows and columns of the four groups, c/2 + 2 steps, r c^2/8 blocks "
            "(both the optimum of Lemma 1); every other shape served too: odd rings optimally, "
            "even tori within 25 % of the bound on bytes (but 2x2: 2 blocks against 1), tori "
            "with an odd dimension (each block in two halves, row-first and column-first) "
            "within 17 % (`algos/sched/torus.h`). The shape: `dims=RxC` or `dims=P`, else the "
            "communicator's periodic Cartesian topology (MPI_Cart_coords order), else "
            "`XCHG_TORUS`; without one the model says INFINITY, so auto never takes it on a "
            "flat communicator. `build/xchg-sched alltoall torus dims=4x4` prints every step",
        .source = "Liu, Gu, Bi, Tu, Dong, Sections III-IV, Fig. 2, Fig. 5, Lemmas 2 and 4",
        .schedule = XCHG_SCHEDULE_TORUS,
    },
    {
        .name = "shm",
        .coll = XCHG_ALLTOALL,
        .applies = shm_applies,
        .cost = xchg_cost_shm,
        .description = "through a segment of shared memory, when every rank runs on one machine: "
                       "each rank copies its blocks in, one synchronisation, each copies its "
                       "blocks out (blocks beyond `XCHG_SHM_BYTES` / p^2 go in pieces, one "
                       "synchronisation each); where a rank's p - 1 blocks fit 56 bytes, and for "
                       "allgather blocks, small alltoallv messages and agreements alike, each "
                       "rank writes one cache line of its own with a sequence word, and no "
                       "shared counter is touched",
        .source = SHM_SOURCE,
        .shared_memory = 1,
    },
    {
        .name = "node",
        .coll = XCHG_ALLTOALL,
        .applies = xchg_node_applies,
        .cost = xchg_cost_node,
        .as_run = xchg_node_as_run,
        .keys = {&key_leaders, &key_k},
        .description =
            "node-aware, for any layout (uneven nodes, interleaved ranks, one-rank nodes, one "
            "node): each node's ranks copy their blocks into the node's shared segment, one "
            "message per pair of nodes (n_x n_y blocks) goes between the nodes' leaders, the "
            "ranks copy their blocks out. `leaders=1`: one message of a node at a time, in the "
            "1-factor rounds of the nodes (N - 1 for N even, else N), the hierarchical factor "
            "schedule with each node's messages gathered; `leaders=L`: min(L, n_x) leaders per "
            "node share its rounds (leader j sends as the node's rank j, receives as rank n_x - "
            "1 - j), a message of 128 KiB or more cut into parts by bytes over "
            "both nodes' leaders; `k=K`: a leader's messages of K rounds in flight at once (1: "
            "one after another; the model takes all at once where that saves start-ups). Priced "
            "on the two-level machine: start-ups of the busiest leader, bytes of the busiest "
            "node's link, copies, two synchronisations a pass. "
            "Streams beyond a window of the segment (`XCHG_SHM_BYTES` / (2N - 1)) go in passes",
        .source = NODE_SOURCE,
        .shared_memory = 1,
    },

    /* MPI_Allgather */
    {
        .name = "native",
        .coll = XCHG_ALLGATHER,
        .applies = applies_always,
        .cost = xchg_cost_native,
        .description = "the MPI library's own MPI_Allgather",
        .source = "",
        .native = 1,
    },
    {
        .name = "ring",
        .coll = XCHG_ALLGATHER,
        .applies = applies_always,
        .cost = xchg_cost_allgather_ring,
        .description = "p-1 rounds around a ring",
        .source = "baseline",
        .baseline = 1,
    },
    {
        .name = "circulant",
        .coll = XCHG_ALLGATHER,
        .applies = applies_always,
        .cost = xchg_cost_allgather_circulant,
        .keys = {&key_k},
        .description = "concatenation over a circulant graph: ceil(log_{k+1} p) rounds, last "
                       "round partitioned so that C2 = ceil(b(p-1)/k) bytes",
        .source = "Bruck et al. 1997, Section 4, Appendix B",
        .schedule = XCHG_SCHEDULE_CIRCULANT,
    },
    {
        .name = "shm",
        .coll = XCHG_ALLGATHER,
        .applies = shm_applies,
        .cost = xchg_cost_shm,
        .description = "through a segment of shared memory, as alltoall `shm`: each rank copies "
                       "its block in, one synchronisation, each copies the others out",
        .source = SHM_SOURCE,
        .shared_memory = 1,
    },
    {
        .name = "node",
        .coll = XCHG_ALLGATHER,
        .applies = xchg_node_applies,
        .cost = xchg_cost_node,
        .as_run = xchg_node_as_run,
        .keys = {&key_k},
        .description =
            "node-aware concatenation for any layout: each node's ranks copy their blocks into "
            "the node's shared segment, the nodes' leaders run the circulant concatenation over "
            "the nodes with k ports (ceil(log_{k+1} N) rounds, k messages each, each node's "
            "blocks one chunk; the model takes k = N - 1, one round, where the start-ups it "
            "saves outweigh the blocks a larger node then sends to every other), every rank "
            "copies all blocks out of its node's segment (in passes "
            "beyond `XCHG_SHM_BYTES` / p per block)",
        .source = "Bruck et al. 1997, Section 4, over nodes; shared memory (POSIX, a segment per "
                  "node)",
        .shared_memory = 1,
    },

    /* MPI_Alltoallv */
    {
        .name = "native",
        .coll = XCHG_ALLTOALLV,
        .applies = applies_always,
        .cost = xchg_cost_native,
        .description = "the MPI library's own MPI_Alltoallv",
        .source = "",
        .no_agreement = 1,
        .native = 1,
    },
    {
        .name = "pairwise",
        .coll = XCHG_ALLTOALLV,
        .applies = applies_always,
        .cost = xchg_cost_alltoallv_pairwise,
        .keys = {&key_k},
        .description = "as for alltoall, each message with its own size",
        .source = "baseline",
        .no_agreement = 1,
        .baseline = 1,
    },
    {
        .name = "twophase",
        .coll = XCHG_ALLTOALLV,
        .applies = xchg_alltoallv_twophase_applies,
        .cost = xchg_cost_alltoallv_twophase,
        .keys = {&key_inner, &key_r, &key_k},
        .description = "deterministic two-phase h-relation routing: units dealt over p bins, "
                       "two alltoall transposes of fixed block size (sized from the largest "
                       "amount any rank sends, h1, and receives, h2), so skewed counts cost "
                       "like even ones; `inner=NAME` forces the transposes' algorithm, `r`/`k` "
                       "its parameters; auto never takes it at 2 ranks (no third rank to route "
                       "through)",
        .source = "Bader, Helman, JaJa 1996, Section 3, Appendix B",
    },
    {
        .name = "hier",
        .coll = XCHG_ALLTOALLV,
        .applies = xchg_alltoall_hier_applies,
        .cost = xchg_cost_alltoallv_hier,
        .keys = {&key_k},
        .description = "the hierarchical factor schedule of alltoall `hier`, each message with "
                       "its own size (a step lasts as long as its message, so skewed counts "
                       "make rounds uneven as for pairwise)",
        .source = "Sanders, Träff, Fig. 2, Section 4",
        .no_agreement = 1,
    },
    {
        .name = "shm",
        .coll = XCHG_ALLTOALLV,
        .applies = shm_applies,
        .cost = xchg_cost_shm,
        .description = "through a segment of shared memory, as alltoall `shm`: each sender writes "
                       "its message offsets and messages into its region, one synchronisation, "
                       "each receiver copies its messages out; the segment grows to the largest "
                       "sender's need (up to `XCHG_SHM_BYTES`), past it pieces",
        .source = SHM_SOURCE,
        .no_agreement = 1,
        .shared_memory = 1,
    },
    {
        .name = "node",
        .coll = XCHG_ALLTOALLV,
        .applies = xchg_node_applies,
        .cost = xchg_cost_node,
        .as_run = xchg_node_as_run,
        .keys = {&key_leaders, &key_k},
        .description =
            "alltoall `node` (with its `leaders` and `k`) with each block its own size: the "
            "counts go once through the node's segment (a header per rank), from which every "
            "rank places its blocks; with "
            "several leaders a message of 128 KiB or more is cut by bytes, not by destination, "
            "so a skewed node's largest message is shared by all its leaders; carries the "
            "statistics behind each pair's first message",
        .source = NODE_SOURCE,
        .no_agreement = 1,
        .shared_memory = 1,
    },
};
const int xchg_nalgos = (int)(sizeof xchg_algos / sizeof xchg_algos[0]);

/* ------------------------------------------------------------------------------------------ */
/* Lookups                                                                                    */

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

int xchg_native_index(int coll)
{
    for (int i = 0; i < xchg_nalgos; i++)
        if (xchg_algos[i].coll == coll && xchg_algos[i].native)
            return i;
    return -1;
}

int xchg_baseline_index(int coll)
{
    for (int i = 0; i < xchg_nalgos; i++)
        if (xchg_algos[i].coll == coll && xchg_algos[i].baseline)
            return i;
    return -1;
}

const xchg_param_t *xchg_algo_key(const xchg_algo_t *algo, const char *key)
{
    for (int i = 0; i < XCHG_MAX_KEYS && algo->keys[i]; i++)
        if (strcmp(algo->keys[i]->key, key) == 0)
            return algo->keys[i];
    return NULL;
}

int xchg_algo_has_key(const xchg_algo_t *algo, const char *key)
{
    return xchg_algo_key(algo, key) != NULL;
}

void xchg_algo_keys_text(const xchg_algo_t *algo, char *out, size_t outlen)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < XCHG_MAX_KEYS && algo->keys[i] && used < outlen; i++)
        used +=
            (size_t)snprintf(out + used, outlen - used, "%s%s", i ? "," : "", algo->keys[i]->key);
    if (used == 0)
        snprintf(out, outlen, "none");
}

/* The names of coll's algorithms, comma separated, for error messages; with xchg_only, only
 * those xchg implements itself (not native). */
static void list_names(int coll, int xchg_only, char *out, size_t outlen)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < xchg_nalgos && used < outlen; i++) {
        const xchg_algo_t *a = &xchg_algos[i];
        if (a->coll == coll && (!a->native || !xchg_only))
            used += (size_t)snprintf(out + used, outlen - used, "%s%s", used ? ", " : "", a->name);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Parsing and formatting, from the descriptors                                               */

static int *int_field(const xchg_param_t *desc, xchg_params_t *params, int second)
{
    return (int *)((char *)params + (second ? desc->field2 : desc->field));
}

static int int_value(const xchg_param_t *desc, const xchg_params_t *params, int second)
{
    return *(const int *)((const char *)params + (second ? desc->field2 : desc->field));
}

static const xchg_algo_t **algo_field(const xchg_param_t *desc, xchg_params_t *params)
{
    return (const xchg_algo_t **)((char *)params + desc->field);
}

static const xchg_algo_t *algo_value(const xchg_param_t *desc, const xchg_params_t *params)
{
    return *(const xchg_algo_t *const *)((const char *)params + desc->field);
}

/* A decimal integer from text up to *end (digits only, no sign) in [lo, hi]; 0 or -1. */
static int parse_long(const char *text, const char **end, long lo, long hi, long *out)
{
    long v = 0;
    const char *at = text;
    if (!isdigit((unsigned char)*at))
        return -1;
    for (; isdigit((unsigned char)*at); at++) {
        if (v > VALUE_MAX)
            return -1; /* far above every range: stop before overflowing */
        v = v * 10 + (*at - '0');
    }
    if (v < lo || v > hi)
        return -1;
    *end = at;
    *out = v;
    return 0;
}

/* What an INT or SHAPE value must be, for messages: "an integer >= 2", "from 1 to 64". */
static void range_text(const xchg_param_t *desc, char *out, size_t outlen)
{
    if (desc->max >= VALUE_MAX)
        snprintf(out, outlen, ">= %ld", desc->min);
    else
        snprintf(out, outlen, "from %ld to %ld", desc->min, desc->max);
}

int xchg_param_parse(const xchg_param_t *desc, const char *value, xchg_params_t *params, char *err,
                     size_t errlen)
{
    const char *end = value;
    char range[64], names[256];
    long r, c = 1;
    int idx;

    switch (desc->type) {
    case XCHG_PARAM_INT:
        if (parse_long(value, &end, desc->min, desc->max, &r) != 0 || *end != '\0') {
            range_text(desc, range, sizeof range);
            snprintf(err, errlen, "%s=%.*s%s: %s must be an integer %s", desc->key,
                     XCHG_QUOTE(value), desc->noun, range);
            return -1;
        }
        *int_field(desc, params, 0) = (int)r;
        return 0;
    case XCHG_PARAM_SHAPE:
        if (parse_long(value, &end, desc->min, desc->max, &r) != 0 ||
            (*end == 'x' && parse_long(end + 1, &end, desc->min, desc->max, &c) != 0) ||
            *end != '\0' || r * c > INT_MAX) {
            snprintf(err, errlen,
                     "%s=%.*s%s: expected RxC (a torus, e.g. 4x4) or P (a ring), dimensions "
                     "from %ld to %ld",
                     desc->key, XCHG_QUOTE(value), desc->min, desc->max);
            return -1;
        }
        if (r == 1 || c == 1) { /* a ring, whichever way it was given */
            c = r * c;
            r = 1;
        }
        *int_field(desc, params, 0) = (int)r;
        *int_field(desc, params, 1) = (int)c;
        return 0;
    case XCHG_PARAM_ALGO:
        idx = xchg_algo_find(desc->coll, value);
        if (idx < 0 || xchg_algos[idx].native) {
            list_names(desc->coll, 1, names, sizeof names);
            snprintf(err, errlen, "%s=%.*s%s: not an xchg %s algorithm (valid: %s)", desc->key,
                     XCHG_QUOTE(value), xchg_coll_name(desc->coll), names);
            return -1;
        }
        *algo_field(desc, params) = &xchg_algos[idx];
        return 0;
    }
    snprintf(err, errlen, "key '%s' has no known type", desc->key);
    return -1;
}

/* One key's value as text ("4", "4x4", "radix"); 0 when the key is not set. */
static int format_value(const xchg_param_t *desc, const xchg_params_t *params, char *out,
                        size_t outlen)
{
    int r, c;
    const xchg_algo_t *a;
    switch (desc->type) {
    case XCHG_PARAM_INT:
        if ((r = int_value(desc, params, 0)) <= 0)
            return 0;
        snprintf(out, outlen, "%d", r);
        return 1;
    case XCHG_PARAM_SHAPE:
        r = int_value(desc, params, 0);
        c = int_value(desc, params, 1);
        if (r <= 0 || c <= 0)
            return 0;
        if (r == 1) /* a ring (1 x P) as P */
            snprintf(out, outlen, "%d", c);
        else
            snprintf(out, outlen, "%dx%d", r, c);
        return 1;
    case XCHG_PARAM_ALGO:
        if (!(a = algo_value(desc, params)))
            return 0;
        snprintf(out, outlen, "%s", a->name);
        return 1;
    }
    return 0;
}

void xchg_params_format(const xchg_algo_t *algo, const xchg_params_t *params, char *out,
                        size_t outlen)
{
    size_t used = 0;
    char value[64];
    out[0] = '\0';
    for (int i = 0; i < XCHG_MAX_KEYS && algo->keys[i] && used < outlen; i++)
        if (format_value(algo->keys[i], params, value, sizeof value))
            used += (size_t)snprintf(out + used, outlen - used, "%s%s=%s", used ? "," : "",
                                     algo->keys[i]->key, value);
}

int xchg_params_open(const xchg_algo_t *algo, const xchg_params_t *params)
{
    char value[64];
    for (int i = 0; i < XCHG_MAX_KEYS && algo->keys[i]; i++)
        if (!format_value(algo->keys[i], params, value, sizeof value))
            return 1;
    return 0;
}

/* One KEY=VALUE item of a spec (modified in place) into params. seen[] marks the algorithm's
 * keys given before it: a key given twice is an error, not "the last one wins". */
static int parse_item(const xchg_algo_t *a, char *item, int *seen, xchg_params_t *params, char *err,
                      size_t errlen)
{
    char *eq = strchr(item, '=');
    char keys[64];
    int i;

    /* the form, then the key, then the value (the key's descriptor) */
    xchg_algo_keys_text(a, keys, sizeof keys);
    if (!eq || eq == item || eq[1] == '\0') {
        snprintf(err, errlen, "'%.*s%s' is not KEY=VALUE (keys of %s: %s)", XCHG_QUOTE(item),
                 a->name, keys);
        return -1;
    }
    *eq = '\0';
    for (i = 0; i < XCHG_MAX_KEYS && a->keys[i]; i++)
        if (strcmp(a->keys[i]->key, item) == 0)
            break;
    if (i == XCHG_MAX_KEYS || !a->keys[i]) {
        snprintf(err, errlen, "unknown key '%.*s%s' for %s (keys: %s)", XCHG_QUOTE(item), a->name,
                 keys);
        return -1;
    }
    if (seen[i]) {
        snprintf(err, errlen, "key '%s' given twice", item);
        return -1;
    }
    seen[i] = 1;
    return xchg_param_parse(a->keys[i], eq + 1, params, err, errlen);
}

int xchg_spec_parse(int coll, const char *spec, int *algo, xchg_params_t *params, char *err,
                    size_t errlen)
{
    char buf[256], names[256];
    int seen[XCHG_MAX_KEYS] = {0};
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
        if (parse_item(&xchg_algos[*algo], item, seen, params, err, errlen) != 0)
            return -1;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Candidates                                                                                 */

long xchg_param_token(const char *token, size_t len, int p)
{
    long v = 0;
    if (len == 5 && strncmp(token, "SQRTP", 5) == 0) {
        v = (long)ceil(sqrt((double)p));
        return v < 2 ? 2 : v;
    }
    if (len == 1 && token[0] == 'P')
        return p < 2 ? 2 : p;
    if (len == 0 || len > 9)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)token[i]))
            return -1;
        v = v * 10 + (token[i] - '0');
    }
    return v;
}

int xchg_params_variants(const xchg_algo_t *algo, int p, xchg_params_t *out, int max)
{
    int n = 0;
    for (int i = 0; i < XCHG_MAX_KEYS && algo->keys[i]; i++) {
        const xchg_param_t *desc = algo->keys[i];
        const char *at = desc->tune;
        if (!at)
            continue;
        if (desc->type == XCHG_PARAM_ALGO) { /* "*": every algorithm it may name */
            for (int j = 0; j < xchg_nalgos && n < max; j++)
                if (xchg_algos[j].coll == desc->coll && !xchg_algos[j].native) {
                    memset(&out[n], 0, sizeof out[n]);
                    *algo_field(desc, &out[n++]) = &xchg_algos[j];
                }
            continue;
        }
        while (*at && n < max) {
            size_t len = strcspn(at, ",");
            long v = xchg_param_token(at, len, p);
            int literal = isdigit((unsigned char)at[0]);
            /* an integer above the minimum that is not below p acts as a smaller one */
            if (v >= desc->min && v <= desc->max && (!literal || v == desc->min || v < p) &&
                desc->type == XCHG_PARAM_INT) {
                memset(&out[n], 0, sizeof out[n]);
                *int_field(desc, &out[n++], 0) = (int)v;
            }
            at += len;
            if (*at == ',')
                at++;
        }
    }
    return n;
}

/* ------------------------------------------------------------------------------------------ */
/* The README's tables                                                                        */

static const char *type_text(const xchg_param_t *desc, char *out, size_t outlen)
{
    char range[48];
    switch (desc->type) {
    case XCHG_PARAM_INT:
        range_text(desc, range, sizeof range);
        snprintf(out, outlen, "integer %s", range);
        break;
    case XCHG_PARAM_SHAPE:
        snprintf(out, outlen, "RxC or P");
        break;
    case XCHG_PARAM_ALGO:
        snprintf(out, outlen, "an xchg %s algorithm", xchg_coll_name(desc->coll));
        break;
    default:
        snprintf(out, outlen, "?");
    }
    return out;
}

void xchg_registry_markdown(FILE *out)
{
    const xchg_param_t *seen[32];
    int nseen = 0;
    char text[96];

    fprintf(out, "| collective | name | parameters | what it does | source |\n");
    fprintf(out, "|---|---|---|---|---|\n");
    for (int i = 0; i < xchg_nalgos; i++) {
        const xchg_algo_t *a = &xchg_algos[i];
        fprintf(out, "| %s | `%s` | ", xchg_coll_name(a->coll), a->name);
        for (int k = 0; k < XCHG_MAX_KEYS && a->keys[k]; k++) {
            int known = 0;
            fprintf(out, "%s`%s`", k ? ", " : "", a->keys[k]->key);
            for (int s = 0; s < nseen; s++)
                known |= seen[s] == a->keys[k];
            if (!known && nseen < 32)
                seen[nseen++] = a->keys[k];
        }
        fprintf(out, "%s| %s | %s%s|\n", a->keys[0] ? " " : "", a->description, a->source,
                a->source[0] ? " " : "");
    }
    fprintf(out, "\n| key | value | meaning | xchg-tune also tries |\n");
    fprintf(out, "|---|---|---|---|\n");
    for (int s = 0; s < nseen; s++) {
        fprintf(out, "| `%s` | %s | %s | ", seen[s]->key, type_text(seen[s], text, sizeof text),
                seen[s]->meaning);
        if (!seen[s]->tune)
            fprintf(out, "none");
        else if (strcmp(seen[s]->tune, "*") == 0)
            fprintf(out, "each one");
        for (const char *at = seen[s]->tune; at && *at && strcmp(at, "*") != 0;) {
            int len = (int)strcspn(at, ",");
            fprintf(out, "%s%s", at == seen[s]->tune ? "" : ", ",
                    len == 5 && strncmp(at, "SQRTP", 5) == 0 ? "ceil(sqrt p)"
                    : len == 1 && at[0] == 'P'               ? "p"
                                                             : "");
            if (!(len == 5 && strncmp(at, "SQRTP", 5) == 0) && !(len == 1 && at[0] == 'P'))
                fprintf(out, "%.*s", len, at);
            at += len + (at[len] == ',');
        }
        fprintf(out, " |\n");
    }
}

/* ------------------------------------------------------------------------------------------ */
/* twophase with the registry's models for its transposes                                     */

const xchg_algo_t *xchg_model_best(const xchg_call_t *call, const xchg_machine_t *machine,
                                   int (*keep)(const xchg_algo_t *algo), xchg_params_t *params,
                                   double *time)
{
    const xchg_algo_t *best = NULL;
    double best_time = INFINITY;
    for (int i = 0; i < xchg_nalgos; i++) {
        const xchg_algo_t *algo = &xchg_algos[i];
        xchg_params_t candidate = {0};
        const char *why = "";
        double t;
        if (algo->coll != call->coll || !algo->cost || (keep && !keep(algo)) ||
            !algo->applies(call, &candidate, &why))
            continue;
        t = algo->cost(call, machine, &candidate);
        if (t < best_time) {
            best_time = t;
            best = algo;
            if (params)
                *params = candidate;
        }
    }
    if (time)
        *time = best_time;
    return best;
}

/* The best model among the registry's alltoall algorithms that can serve the transpose. */
static double best_alltoall(const xchg_call_t *transpose, const xchg_machine_t *machine)
{
    double best;
    xchg_model_best(transpose, machine, NULL, NULL, &best);
    return best;
}

double xchg_cost_alltoallv_twophase(const xchg_call_t *call, const xchg_machine_t *machine,
                                    xchg_params_t *params)
{
    return xchg_cost_twophase(call, machine, params, best_alltoall);
}

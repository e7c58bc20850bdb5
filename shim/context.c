/*
 * context.c: the per-communicator context (algos/xchg.h, xchg_ctx_t).
 *
 * Created on a communicator's first intercepted collective and cached on it with an attribute
 * keyval; the keyval's delete callback frees it when the user frees the communicator (the copy
 * callback copies nothing: a duplicate gets a context of its own on its first collective).
 * A context holds:
 *   - a private duplicate of the communicator, with MPI_ERRORS_RETURN, for the library's own
 *     messages: they can never match the user's point-to-point traffic;
 *   - size, rank, and the node layout: node of every rank, ranks per node, local rank;
 *   - the waiting policy (yield when more ranks run on this node than their affinity masks
 *     give processing units, unless XCHG_WAIT says otherwise);
 *   - scratch buffers and a request array, reused across calls.
 *
 * The node layout is measured once for MPI_COMM_WORLD at MPI_Init: one nonblocking allgather
 * of every rank's node key (boot id, host name and /dev/shm: node_key) and
 * affinity mask; where a rank cannot read its key, MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED instead. A later communicator translates its group to world ranks and
 * needs no communication beyond its duplicate; only a communicator with ranks outside
 * MPI_COMM_WORLD (dynamic processes) measures its own layout the same way.
 */
#define _GNU_SOURCE /* sched_getaffinity, qsort_r */
#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"
#include "../tuning/cost.h"

#define XCHG_CPUSET_WORDS 16 /* 1024 processing units per node */

static int ctx_keyval = MPI_KEYVAL_INVALID;
static int world_size;
static int *world_node;    /* [world_size]: node (numbered by lowest world rank) */
static int *world_machine; /* [world_size]: the node measured, before XCHG_NODES */
static int world_oversubscribed; /* ranks on this node exceed its processing units */
static int world_node_pus;       /* processing units of all ranks on this node */
static int world_ready;
static MPI_Group world_group = MPI_GROUP_NULL; /* MPI_COMM_WORLD's, taken once at MPI_Init */

static void ctx_free(xchg_ctx_t *ctx)
{
    if (!ctx)
        return;
    xchg_shm_free(ctx);
    xchg_channel_detach(ctx);
    xchg_scratch_free(ctx);
    free(ctx->reqs);
    free(ctx->stats);
    free(ctx->node_of);
    free(ctx->node_size);
    xchg_shim_state_free(ctx->shim);
    free(ctx);
}

/* The last context each thread looked up, valid while no context was freed since (a freed
 * communicator's handle may be reused by a new one): saves the attribute lookup per call. */
unsigned xchg_ctx_generation = 1;
__thread __attribute__((tls_model("initial-exec"))) xchg_last_ctx_t xchg_last_ctx;

static int ctx_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    __atomic_add_fetch(&xchg_ctx_generation, 1, __ATOMIC_ACQ_REL);
    (void)comm;
    (void)keyval;
    (void)extra;
    ctx_free(value);
    return MPI_SUCCESS;
}

/* Processing units this process may run on, as words of a bitmap: the kernel's affinity mask
 * where there is one (microseconds), else hwloc's binding (a topology's set-up and load took 5
 * to 12 ms on the 2-core VM, at every MPI_Init). */
static void my_cpuset(unsigned long words[XCHG_CPUSET_WORDS])
{
    hwloc_topology_t topo;
    hwloc_bitmap_t set;

    memset(words, 0, XCHG_CPUSET_WORDS * sizeof words[0]);
#ifdef __linux__
    {
        const size_t bits = 8 * sizeof words[0];
        cpu_set_t mask;
        if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
            for (size_t cpu = 0; cpu < CPU_SETSIZE && cpu < XCHG_CPUSET_WORDS * bits; cpu++)
                if (CPU_ISSET(cpu, &mask))
                    words[cpu / bits] |= 1ul << (cpu % bits);
            return;
        }
    }
#endif
    if (hwloc_topology_init(&topo) != 0)
        return;
    set = hwloc_bitmap_alloc();
    if (set && hwloc_topology_load(topo) == 0) {
        if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0)
            hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topo));
        hwloc_bitmap_to_ulongs(set, XCHG_CPUSET_WORDS, words);
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
}

/* Processing units in the union of the affinity masks of n ranks (each XCHG_CPUSET_WORDS words,
 * stride words apart in sets) that node_of puts on node (node_of NULL: all n), and how many
 * ranks that is (*ranks, if not NULL). */
static int union_pus(const unsigned long *sets, size_t stride, int n, const int *node_of, int node,
                     int *ranks)
{
    unsigned long u[XCHG_CPUSET_WORDS] = {0};
    int pus = 0, count = 0;

    for (int i = 0; i < n; i++) {
        if (node_of && node_of[i] != node)
            continue;
        count++;
        for (int w = 0; w < XCHG_CPUSET_WORDS; w++)
            u[w] |= sets[(size_t)i * stride + w];
    }
    for (int w = 0; w < XCHG_CPUSET_WORDS; w++)
        pus += __builtin_popcountl(u[w]);
    if (ranks)
        *ranks = count;
    return pus;
}

/* Processing units in the union of the cpusets of node_comm's ranks (0 if unknown). */
static int node_pus(MPI_Comm node_comm)
{
    unsigned long mine[XCHG_CPUSET_WORDS], *all;
    int nlocal, pus = 0;

    PMPI_Comm_size(node_comm, &nlocal);
    my_cpuset(mine);
    all = malloc((size_t)nlocal * sizeof mine);
    if (!all)
        return 0;
    if (xchg_own_allgather(mine, XCHG_CPUSET_WORDS, MPI_UNSIGNED_LONG, all, node_comm) ==
        MPI_SUCCESS)
        pus = union_pus(all, XCHG_CPUSET_WORDS, nlocal, NULL, 0, NULL);
    free(all);
    return pus;
}

/* Renumber node_of (the lowest rank of each rank's node) as nodes 0, 1, ... in order of first
 * appearance. */
static void number_nodes(int *node_of, int size)
{
    for (int i = 0, next = 0; i < size; i++)
        node_of[i] = node_of[i] == i ? next++ : node_of[node_of[i]];
}

/* The layout by MPI_Comm_split_type (MPI_COMM_TYPE_SHARED): where a process's own key cannot
 * be read (node_key). MPICH's split polls in its blocking collectives, about 250 ms at MPI_Init
 * at 8 ranks on 2 cores. */
static int layout_by_split(MPI_Comm comm, int size, int *node_of, int *pus, int *over)
{
    MPI_Comm node_comm;
    int rc, lowest, nlocal;

    rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    if (rc != MPI_SUCCESS)
        return rc;
    /* rank 0 of node_comm is the lowest rank of comm on this node (key 0 keeps order) */
    {
        MPI_Group g, cg;
        int zero = 0;
        PMPI_Comm_group(node_comm, &g);
        PMPI_Comm_group(comm, &cg);
        PMPI_Group_translate_ranks(g, 1, &zero, cg, &lowest);
        PMPI_Group_free(&g);
        PMPI_Group_free(&cg);
    }
    PMPI_Comm_size(node_comm, &nlocal);
    *pus = node_pus(node_comm);
    *over = *pus > 0 && nlocal > *pus;
    PMPI_Comm_free(&node_comm);
    rc = xchg_own_allgather(&lowest, 1, MPI_INT, node_of, comm);
    if (rc == MPI_SUCCESS)
        number_nodes(node_of, size);
    return rc;
}

/* A node's key: processes with equal keys run on one kernel (its boot id) and see one /dev/shm
 * (the device and directory under that name), so they can share xchg's segments (shm_open),
 * and have one host name, which is what MPI libraries call a node. Its last word is 1 where the
 * boot id or the host name cannot be read. */
#define XCHG_KEY_WORDS 5
static void node_key(unsigned long key[XCHG_KEY_WORDS])
{
    char text[256];
    struct stat st;
    FILE *f;
    int known = 1;

    memset(key, 0, XCHG_KEY_WORDS * sizeof key[0]);
    f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f && fgets(text, sizeof text, f))
        key[0] = (unsigned long)xchg_fnv(XCHG_FNV_START, text, strlen(text));
    else
        known = 0;
    if (f)
        fclose(f);
    memset(text, 0, sizeof text);
    if (gethostname(text, sizeof text - 1) == 0 && text[0])
        key[1] = (unsigned long)xchg_fnv(XCHG_FNV_START, text, strlen(text));
    else
        known = 0;
    if (stat("/dev/shm", &st) == 0) {
        key[2] = (unsigned long)st.st_dev;
        key[3] = (unsigned long)st.st_ino;
    }
    key[4] = !known;
}

#define XCHG_RECORD_WORDS (XCHG_KEY_WORDS + XCHG_CPUSET_WORDS)

/* Ranks i and j's node keys compared (all: every rank's record, XCHG_RECORD_WORDS each), and the
 * qsort_r order of ranks: by node key, then by rank. */
static int key_order(const unsigned long *all, int i, int j)
{
    return memcmp(all + (size_t)i * XCHG_RECORD_WORDS, all + (size_t)j * XCHG_RECORD_WORDS,
                  XCHG_KEY_WORDS * sizeof *all);
}

static int by_key(const void *a, const void *b, void *records)
{
    int i = *(const int *)a, j = *(const int *)b, c = key_order(records, i, j);
    return c ? c : (i > j) - (i < j);
}

/* Node of every rank of comm, nodes numbered by their lowest rank in comm, and this node's
 * processing units (the union of its ranks' affinity masks) and whether its ranks exceed them
 * (collective). One nonblocking allgather of every rank's node key and affinity mask: the
 * MPI library's MPI_Comm_split_type, used where a key is unknown, has no nonblocking form. */
static int measure_layout(MPI_Comm comm, int size, int *node_of, int *pus, int *over)
{
    unsigned long mine[XCHG_RECORD_WORDS], *all;
    int *order, rc, me, nlocal;
    int unknown = 0; /* 1 + the lowest rank without its node key; 0: none */

    node_key(mine);
    my_cpuset(mine + XCHG_KEY_WORDS);
    all = malloc((size_t)size * sizeof mine);
    order = malloc((size_t)size * sizeof *order);
    rc = MPI_ERR_NO_MEM; /* a rank without these bytes cannot take part in the allgather */
    if (!all || !order)
        goto out;
    PMPI_Comm_rank(comm, &me);
    if (xchg_config.test_no_node_key && me == 1) /* testing knob: as if rank 1 lacked its key */
        mine[XCHG_KEY_WORDS - 1] = 1;
    rc = xchg_own_allgather(mine, XCHG_RECORD_WORDS, MPI_UNSIGNED_LONG, all, comm);
    if (rc != MPI_SUCCESS)
        goto out;
    for (int i = 0; i < size && !unknown; i++)
        if (all[(size_t)i * XCHG_RECORD_WORDS + XCHG_KEY_WORDS - 1] != 0)
            unknown = i + 1;
    if (unknown) {
        if (xchg_config.verbose && me == 0)
            fprintf(stderr,
                    "xchg: nodes found by MPI_Comm_split_type: rank %d of %d could not read its "
                    "boot id or host name\n",
                    unknown - 1, size);
        rc = layout_by_split(comm, size, node_of, pus, over);
        goto out;
    }
    for (int i = 0; i < size; i++)
        order[i] = i;
    qsort_r(order, (size_t)size, sizeof *order, by_key, all);
    for (int s = 0, lead = order[0]; s < size; s++) {
        /* the first of a key in the order is its lowest rank */
        if (s > 0 && key_order(all, order[s - 1], order[s]) != 0)
            lead = order[s];
        node_of[order[s]] = lead;
    }
    *pus = union_pus(all + XCHG_KEY_WORDS, XCHG_RECORD_WORDS, size, node_of, node_of[me], &nlocal);
    *over = *pus > 0 && nlocal > *pus;
    number_nodes(node_of, size);
out:
    free(all);
    free(order);
    return rc;
}

void xchg_ctx_world_init(void)
{
    if (world_ready)
        return;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, ctx_delete, &ctx_keyval, NULL);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (PMPI_Comm_group(MPI_COMM_WORLD, &world_group) != MPI_SUCCESS)
        world_group = MPI_GROUP_NULL;
    world_node = malloc((size_t)world_size * sizeof *world_node);
    if (world_node &&
        measure_layout(MPI_COMM_WORLD, world_size, world_node, &world_node_pus,
                       &world_oversubscribed) ==
            MPI_SUCCESS)
        world_ready = 1;
    if (world_ready)
        xchg_own_node_oversubscribed(world_oversubscribed);
    world_machine = malloc((size_t)world_size * sizeof *world_machine);
    if (world_ready && world_machine)
        memcpy(world_machine, world_node, (size_t)world_size * sizeof *world_machine);
    if (world_ready && xchg_config.nodes) {
        /* XCHG_NODES: emulated nodes replace the measured ones (the processing units and the
         * waiting policy stay as measured: the ranks still share this machine's cores) */
        for (int node = 0, rank = 0; node < xchg_config.nnodes; node++)
            for (int i = 0; i < xchg_config.nodes[node]; i++)
                world_node[rank++] = node;
    }
}

/* The summary of a context's layout (xchg_topo_t), and its Cartesian shape when comm has a
 * Cartesian topology whose dimensions are all periodic (a torus or a ring). */
static void ctx_topo(xchg_ctx_t *ctx, MPI_Comm comm, int shared, int node_shared)
{
    xchg_topo_t *t = &ctx->topo;
    int status = MPI_UNDEFINED, ndims = 0;
    uint64_t hash = 1469598103934665603ull;

    memset(t, 0, sizeof *t);
    t->nnodes = ctx->nnodes;
    t->min_node_ranks = ctx->size;
    t->consecutive = 1;
    for (int node = 0; node < ctx->nnodes; node++) {
        if (ctx->node_size[node] < t->min_node_ranks)
            t->min_node_ranks = ctx->node_size[node];
        if (ctx->node_size[node] > t->max_node_ranks)
            t->max_node_ranks = ctx->node_size[node];
    }
    for (int i = 0; i < ctx->size; i++) {
        /* nodes are numbered in order of their lowest rank: consecutive ranks per node means
         * the node numbers never decrease */
        if (i > 0 && ctx->node_of[i] < ctx->node_of[i - 1])
            t->consecutive = 0;
        hash = (hash ^ (uint64_t)ctx->node_of[i]) * 1099511628211ull;
    }
    t->layout_hash = hash;
    t->shm_bytes = shared && ctx->nnodes == 1 ? xchg_config.shm_bytes : 0;
    t->node_shm_bytes = node_shared ? xchg_config.shm_bytes : 0;
    if (PMPI_Topo_test(comm, &status) == MPI_SUCCESS && status != MPI_CART &&
        xchg_config.torus_dims[0] > 0) {
        /* XCHG_TORUS gives a communicator without a Cartesian topology its shape (whether the
         * size fits is the torus algorithm's predicate's to say) */
        t->torus_ndims = 2;
        t->torus_dims[0] = xchg_config.torus_dims[0];
        t->torus_dims[1] = xchg_config.torus_dims[1];
        t->torus_from_env = 1;
        return;
    }
    if (status != MPI_CART || PMPI_Cartdim_get(comm, &ndims) != MPI_SUCCESS || ndims < 1 ||
        ndims > 2)
        return;
    {
        int dims[2], periods[2], coords[2];
        if (PMPI_Cart_get(comm, ndims, dims, periods, coords) != MPI_SUCCESS)
            return;
        for (int d = 0; d < ndims; d++)
            if (!periods[d])
                return;
        t->torus_ndims = ndims;
        t->torus_dims[0] = dims[0];
        t->torus_dims[1] = ndims > 1 ? dims[1] : 1;
    }
}

/* XCHG_VERBOSE: what the context knows of its communicator's layout. */
static void ctx_announce(const xchg_ctx_t *ctx)
{
    const xchg_topo_t *t = &ctx->topo;
    char torus[48] = "";
    if (t->torus_ndims == 1)
        snprintf(torus, sizeof torus, ", ring of %d", t->torus_dims[0]);
    else if (t->torus_ndims == 2)
        snprintf(torus, sizeof torus, ", torus %dx%d%s", t->torus_dims[0], t->torus_dims[1],
                 t->torus_from_env ? " (XCHG_TORUS)" : "");
    char cut[80] = "";
    if (ctx->cut_inter > 0)
        snprintf(cut, sizeof cut, ", messages between nodes in pieces of %zu B", ctx->cut_inter);
    fprintf(stderr, "xchg: communicator p=%d: nodes=%d ranks per node %d..%d, %s%s%s\n", ctx->size,
            t->nnodes, t->min_node_ranks, t->max_node_ranks,
            t->consecutive ? "consecutive" : "interleaved", torus, cut);
    fflush(stderr);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* A communicator's processes as one value (xchg_ctx_t.members): FNV-1a over their world ranks,
 * sorted, so that any communicator of the same processes has the same value; never 0. */
static uint64_t members_of(const int *world_ranks, int size)
{
    int *sorted = malloc((size_t)size * sizeof *sorted);
    uint64_t hash;
    if (!sorted)
        return 0;
    memcpy(sorted, world_ranks, (size_t)size * sizeof *sorted);
    qsort(sorted, (size_t)size, sizeof *sorted, cmp_int);
    hash = xchg_fnv(XCHG_FNV_START, sorted, (size_t)size * sizeof *sorted);
    free(sorted);
    return hash ? hash : 1;
}

/* Node layout of a new context: from the world's layout when every rank is a world rank. */
static int ctx_layout(xchg_ctx_t *ctx, MPI_Comm comm, MPI_Group group, int *over, int *shared,
                      int *node_shared)
{
    int rc = MPI_SUCCESS, translated = 0;
    int *world_ranks = NULL, *ranks = NULL;

    ctx->node_of = malloc((size_t)ctx->size * sizeof(int));
    if (!ctx->node_of)
        return MPI_ERR_NO_MEM;
    if (world_ready && world_group != MPI_GROUP_NULL) {
        world_ranks = malloc((size_t)ctx->size * sizeof(int));
        ranks = malloc((size_t)ctx->size * sizeof(int));
        if (!world_ranks || !ranks) {
            rc = MPI_ERR_NO_MEM;
            goto out;
        }
        for (int i = 0; i < ctx->size; i++)
            ranks[i] = i;
        PMPI_Group_translate_ranks(group, ctx->size, ranks, world_group, world_ranks);
        translated = 1;
        for (int i = 0; i < ctx->size; i++)
            if (world_ranks[i] == MPI_UNDEFINED)
                translated = 0;
    }
    if (translated) {
        /* renumber world nodes by their lowest rank in this communicator */
        for (int i = 0; i < ctx->size; i++) {
            int j = 0;
            while (world_node[world_ranks[j]] != world_node[world_ranks[i]])
                j++;
            ranks[i] = j; /* lowest rank of comm on the same node */
        }
        for (int i = 0, next = 0; i < ctx->size; i++)
            ctx->node_of[i] = ranks[i] == i ? next++ : ctx->node_of[ranks[i]];
        /* one machine's memory: every rank on the node measured, whatever XCHG_NODES says */
        *shared = world_machine != NULL;
        for (int i = 1; i < ctx->size && *shared; i++)
            *shared = world_machine[world_ranks[i]] == world_machine[world_ranks[0]];
        /* every node within one machine: each rank on the machine of its node's lowest rank
         * (ranks[i], from above) */
        *node_shared = world_machine != NULL;
        for (int i = 0; i < ctx->size && *node_shared; i++)
            *node_shared = world_machine[world_ranks[i]] == world_machine[world_ranks[ranks[i]]];
        *over = world_oversubscribed;
        ctx->node_pus = world_node_pus;
        ctx->members = members_of(world_ranks, ctx->size);
    } else {
        rc = measure_layout(comm, ctx->size, ctx->node_of, &ctx->node_pus, over);
        if (rc != MPI_SUCCESS)
            goto out;
        *shared = 1;
        for (int i = 0; i < ctx->size; i++)
            *shared &= ctx->node_of[i] == 0;
        *node_shared = 1; /* measured nodes share memory by definition */
    }
    ctx->nnodes = 0;
    for (int i = 0; i < ctx->size; i++)
        if (ctx->node_of[i] + 1 > ctx->nnodes)
            ctx->nnodes = ctx->node_of[i] + 1;
    ctx->node_size = calloc((size_t)ctx->nnodes, sizeof(int));
    if (!ctx->node_size) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    ctx->node = ctx->node_of[ctx->rank];
    for (int i = 0; i < ctx->size; i++) {
        if (i == ctx->rank)
            ctx->local_rank = ctx->node_size[ctx->node];
        ctx->node_size[ctx->node_of[i]]++;
    }
    ctx->local_size = ctx->node_size[ctx->node];
out:
    free(world_ranks);
    free(ranks);
    return rc;
}

/* The node layout, private duplicate, size, rank and waiting policy of a new context. The
 * agreement that attaches it to its channel (shim/channel.c: an allreduce, or a pass through the
 * world's board) agrees what would cost the first call agreements of
 * its own (carried[]): the segment that the pool keeps for its processes (shim/shm.c, the pool;
 * else at its first shm call) and the caller's early values (an alltoallv's statistics, else
 * agreed in a round of their own: about a call of 1 B on one node, start-ups between nodes
 * across them). */
static int ctx_open(xchg_ctx_t *ctx, MPI_Comm comm, xchg_early_t *early)
{
    int rc, over = 0, shared = 0, node_shared = 0, given;
    /* [0, 1] the kept segment, [2, 2 + XCHG_EARLY_VALS) the early values, then whether a rank
     * has none */
    uint64_t carried[3 + XCHG_EARLY_VALS] = {0};
    xchg_shm_t *offer;
    MPI_Group group;

    _Static_assert(3 + XCHG_EARLY_VALS <= XCHG_ATTACH_CARRIED, "the attach's carried values");
    ctx->user = comm;
    PMPI_Comm_size(comm, &ctx->size);
    PMPI_Comm_rank(comm, &ctx->rank);
    rc = PMPI_Comm_group(comm, &group); /* for the layout and the channel */
    if (rc != MPI_SUCCESS)
        return rc;
    rc = ctx_layout(ctx, comm, group, &over, &shared, &node_shared);
    if (rc != MPI_SUCCESS) {
        PMPI_Group_free(&group);
        return rc;
    }
    offer = xchg_shm_offer(ctx, carried);
    given = early && early->fill && early->fill(early->arg, ctx->size, carried + 2);
    if (!given)
        memset(carried + 2, 0, XCHG_EARLY_VALS * sizeof *carried);
    carried[2 + XCHG_EARLY_VALS] = !given;
    rc = xchg_channel_attach(ctx, comm, group, carried, 3 + XCHG_EARLY_VALS);
    PMPI_Group_free(&group);
    if (early && rc == MPI_SUCCESS && !carried[2 + XCHG_EARLY_VALS]) {
        memcpy(early->vals, carried + 2, sizeof early->vals);
        early->agreed = 1;
    }
    xchg_shm_take_offer(ctx, offer, carried); /* on every rank, whatever rc is */
    if (ctx->passthrough)
        xchg_shm_free(ctx); /* no call of it runs shm: back to the pool (on every rank) */
    if (rc != MPI_SUCCESS || ctx->passthrough)
        return rc;
    ctx->inner_alltoall = xchg_alltoall_select_run;
    ctx->shm_reserve = xchg_shm_reserve;
    ctx_topo(ctx, comm, shared, node_shared);
    ctx->one_clock = shared;
    /* the machine constants are alike on every rank (measured once, or one table's) */
    ctx->cut_inter = ctx->nnodes > 1 ? xchg_cut_inter(&xchg_config.machine) : 0;
    if (xchg_config.verbose && ctx->rank == 0 && ctx->size > 1) /* one rank: nothing to say */
        ctx_announce(ctx);
    /* auto: yield when the node is oversubscribed, unless the MPI library's own wait yields
     * already (then its blocking wait is the better one: it sleeps inside its progress engine
     * instead of polling every request from outside) */
    ctx->yield = xchg_config.wait == 2 || (xchg_config.wait == 0 && over && !xchg_config.mpi_yields);
    /* the shm algorithms wait outside the MPI library: they yield on an oversubscribed node
     * whatever the library's own wait does */
    ctx->shm_yield = xchg_config.wait == 2 || (xchg_config.wait == 0 && over);
    return rc;
}

xchg_ctx_t *xchg_ctx_get(MPI_Comm comm, int *rc, xchg_early_t *early)
{
    xchg_ctx_t *ctx = NULL;
    void *value;
    int found = 0;
    unsigned generation;

    if (ctx_keyval == MPI_KEYVAL_INVALID) {
        /* a collective before our MPI_Init wrapper ran (e.g. an MPI_Init we did not see):
         * no world layout, each communicator measures its own */
        *rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, ctx_delete, &ctx_keyval, NULL);
        if (*rc != MPI_SUCCESS)
            return NULL;
    }
    generation = __atomic_load_n(&xchg_ctx_generation, __ATOMIC_ACQUIRE);
    if (xchg_last_ctx.generation == generation && xchg_last_ctx.comm == comm &&
        comm != MPI_COMM_NULL)
        return xchg_last_ctx.ctx;
    if (PMPI_Comm_get_attr(comm, ctx_keyval, &value, &found) != MPI_SUCCESS) {
        *rc = XCHG_PASS; /* not a valid communicator: the MPI library reports it */
        return NULL;
    }
    if (found) {
        xchg_last_ctx.comm = comm;
        xchg_last_ctx.ctx = value;
        xchg_last_ctx.generation = generation;
        return value;
    }

    ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    ctx->comm = MPI_COMM_NULL;
    /* an intercommunicator gets a context too, marked passthrough, so that the test is made
     * once per communicator rather than once per call */
    *rc = PMPI_Comm_test_inter(comm, &ctx->passthrough);
    if (*rc == MPI_SUCCESS && !ctx->passthrough)
        *rc = ctx_open(ctx, comm, early);
    if (*rc == MPI_SUCCESS)
        *rc = PMPI_Comm_set_attr(comm, ctx_keyval, ctx);
    if (*rc != MPI_SUCCESS) {
        ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

int xchg_world_layout(const int **node_of, int *size)
{
    if (!world_ready)
        return -1;
    *node_of = world_node;
    *size = world_size;
    return 0;
}

void xchg_ctx_finalize(void)
{
    if (ctx_keyval == MPI_KEYVAL_INVALID)
        return;
    MPI_Comm comms[2] = {MPI_COMM_SELF, MPI_COMM_WORLD};
    for (int i = 0; i < 2; i++) {
        void *value;
        int found = 0;
        PMPI_Comm_get_attr(comms[i], ctx_keyval, &value, &found);
        if (found)
            PMPI_Comm_delete_attr(comms[i], ctx_keyval);
    }
    PMPI_Comm_free_keyval(&ctx_keyval);
    if (world_group != MPI_GROUP_NULL)
        PMPI_Group_free(&world_group);
    xchg_shm_pool_drain();
    free(world_node);
    world_node = NULL;
    free(world_machine);
    world_machine = NULL;
    world_ready = 0;
}

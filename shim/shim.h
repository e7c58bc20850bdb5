/*
 * shim.h: the shim's internal interface (configuration, contexts, selection, statistics).
 * The MPI entry points themselves are in shim/interpose.c.
 */
#ifndef XCHG_SHIM_H
#define XCHG_SHIM_H

#include "../algos/xchg.h"
#include "../tuning/registry.h"
#include "../tuning/table.h"
#include "../tuning/learn_policy.h"
#include "../tuning/shape.h"
/* What the tools may use is declared there only, not again here: xchg_config_load, xchg_force
 * (config.c), xchg_ctx_get (context.c), xchg_decide (select.c), xchg_model_rank (models.c),
 * xchg_size_key (tuning/shape.c), xchg_last_choice (interpose.c) and the tools' access to the
 * configuration. */
#include "api.h"

#define XCHG_AUTO (-1) /* no algorithm forced: table, then model */

/* Returned by the normalised calls (shim/normalize.c) when the MPI library's own collective
 * must serve the call: pass-through, a case the library does not handle, or "native" chosen
 * (xchg_outcome_t.algo is then the native registry index to account the call to, or -1). */
#define XCHG_PASS (-1000)

typedef struct xchg_config {
    int loaded;
    int disable;              /* XCHG_DISABLE=1: pure pass-through */
    int wait;                 /* XCHG_WAIT: 0 auto, 1 spin, 2 yield */
    int *nodes;               /* XCHG_NODES=3,1,2 (testing knob): ranks of MPI_COMM_WORLD per
                                 emulated node, in rank order; NULL when unset or invalid */
    int nnodes;
    int torus_dims[2];        /* XCHG_TORUS=RxC (P: a ring, 1 x P): the torus shape of a
                                 communicator without a periodic Cartesian topology (rank =
                                 x c + y), for the torus algorithm; {0, 0} when unset or bad */
    int mpi_yields;           /* the MPI library's own blocking wait yields the core (Open MPI
                                 with mpi_yield_when_idle, which mpirun sets when oversubscribed) */
    int stats;                /* XCHG_STATS=1 */
    int verbose;              /* XCHG_VERBOSE=1 */
    int strict;               /* XCHG_STRICT=1: a forced algorithm that cannot serve a call is an
                                 error (the call fails with MPI_ERR_OTHER), not a fallback; an
                                 alltoallv's carried statistics are checked (normalize.c) */
    int learn;                /* XCHG_LEARN: 1 (default) time the best candidates of a repeating
                                 call shape and settle on the fastest (shim/learn.c); 0 off */
    char learn_path[4096];    /* XCHG_LEARN=FILE: also write what was learned there at finalize */
    size_t shm_bytes;         /* XCHG_SHM_BYTES: most bytes a pass of the shm algorithms puts
                                 through a communicator's shared segment (the segment holds two
                                 such halves); 0 turns shared memory off */
    int test_skew;            /* XCHG_TEST_SKEW_TIMES=1 (testing knob): each rank distorts its
                                 own timings, so that ranks disagree locally */
    int test_drift;           /* XCHG_TEST_DRIFT=1 (testing knob): the watched calls of a settled
                                 shape read 100 times slower than they ran (shim/learn.c) */
    int test_no_node_key;     /* XCHG_TEST_NO_NODE_KEY=1 (testing knob): rank 1 of a measured
                                 layout reads as if it lacked its node key (shim/context.c) */
    int test_descheduled;     /* XCHG_TEST_DESCHEDULED=1 (testing knob): the calibration's first
                                 measurement of each pair reads as if its peer had been
                                 descheduled, so that the suite sees it measured again, and
                                 native's calls of 1 B read as a descheduled rank's (not used) */
    int test_probe_all;       /* XCHG_TEST_PROBE_ALL=1 (testing knob): learning probes every
                                 candidate of a round, so that the suite can make a probe of one
                                 that the policy would skip as hopeless or too dear; no shape
                                 starts sure (xchg_lp_sure) */
    int forced[XCHG_NCOLLS];  /* registry index, or XCHG_AUTO */
    xchg_params_t forced_params[XCHG_NCOLLS];
    xchg_table_t table;       /* XCHG_TUNING (empty without it) */
    xchg_table_t cache;       /* the per-user cache's table for this machine and layout
                                 (shim/cache.c; empty without one) */
    char cache_path[4096];    /* its file ("" when the cache is off or unusable) */
    int cache_on;             /* XCHG_CACHE: read and write the cache */
    int thread_multiple;      /* the MPI library provides MPI_THREAD_MULTIPLE */
    int machine_measured;     /* what of machine the calibration at MPI_Init measured
                                 (xchg_calibrate: XCHG_MEASURED_*) */
    int machine_cached;       /* machine holds the cache's constants (kept when it is stored) */
    xchg_machine_t machine;   /* the table's measured constants, else the defaults */
} xchg_config_t;

extern xchg_config_t xchg_config;

/* FNV-1a over n bytes, continuing from h (XCHG_FNV_START for a fresh hash): the cache's keys,
 * a communicator's processes and a segment's id. */
#define XCHG_FNV_START 14695981039346656037ull
static inline uint64_t xchg_fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* context.c */
void xchg_ctx_world_init(void); /* node layout of MPI_COMM_WORLD, once, from MPI_Init */
/* The world's layout (node of every world rank, nodes numbered by their lowest rank; emulated
 * by XCHG_NODES when set): 0, or -1 before xchg_ctx_world_init measured it. */
int xchg_world_layout(const int **node_of, int *size);
/* owncoll.c: xchg's own collectives outside a program's calls (MPI_Init, a new channel), each
 * the MPI library's nonblocking one waited for by test and yield where its blocking wait would
 * poll on an oversubscribed node; each returns what the MPI library returned. */
int xchg_own_allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm);
int xchg_own_allgather(const void *send, int count, MPI_Datatype type, void *recv, MPI_Comm comm);
int xchg_own_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int xchg_own_comm_dup(MPI_Comm comm, MPI_Comm *dup);
/* The world's layout is measured: over says whether this rank's node is oversubscribed (until
 * then the setup wait takes it to be). */
void xchg_own_node_oversubscribed(int over);
/* 1 when the MPI library's blocking waits poll (not Open MPI with mpi_yield_when_idle) and this
 * rank's node is known to run more ranks than processing units: each waiting rank keeps a core. */
int xchg_own_mpi_waits_starve(void);
/* cache.c (the per-user cache of tables): read the table of this machine and layout into
 * xchg_config.cache (collective over MPI_COMM_WORLD, from MPI_Init; node_sizes: ranks of each
 * node in node order); 1 when it has a machine line. Store what this run measured and learned
 * (world rank 0, from MPI_Finalize). Write a table there (atomic, owner-only): 0 or -1. */
int xchg_cache_load(const int *node_sizes, int nnodes);
void xchg_cache_store(void);
int xchg_cache_write(const xchg_table_t *table, const char *comment);
/* tablefile.c. A table file's last line: "# end: N bytes above", N the bytes before it (a
 * comment to the parser; a file cut anywhere loses it or no longer matches it). */
#define XCHG_TABLE_END "# end: %ld bytes above\n"
/* Write table to path atomically: a new file beside it (mode), ended by XCHG_TABLE_END, renamed
 * over path when complete, so that a reader finds the old table or the new one, never a part.
 * 0, or -1 (errno set, nothing replaced). */
int xchg_table_file_write(const char *path, const xchg_table_t *table, const char *comment,
                          unsigned mode);
/* World rank 0's text (NULL on the others, and where it has none) passed to every rank of the
 * world, in pieces, so that a rank without room for it still takes part in every broadcast:
 * the text (malloc'd) when every rank has it, else NULL on every rank, the ranks agreeing on
 * that (*failed 1 then, on every rank). Collective over MPI_COMM_WORLD; from MPI_Init. */
char *xchg_share_text(char *text, int *failed);
/* calibrate.c: measure beta, tau (and across nodes) and rho into machine in a few milliseconds
 * (collective over MPI_COMM_WORLD, from MPI_Init); what it measured: */
enum {
    XCHG_MEASURED_NONE,   /* every constant stays built in */
    XCHG_MEASURED_COPY,   /* only rho (measured whatever the ping-pongs give) */
    XCHG_MEASURED_STARTUP /* a start-up too, with the constants that come with it */
};
int xchg_calibrate(const int *world_node, int world_size, xchg_machine_t *machine);
/* The MPI library's own collectives of 1 B and 4 KiB blocks timed on MPI_COMM_WORLD into
 * machine->native_small and native_mid (collective, from MPI_Init; the world on one node, at
 * least 2 ranks); the seconds this rank spent on it. */
double xchg_calibrate_native(int world_size, xchg_machine_t *machine);
/* The seconds a node spends on each message out of it when every rank sends across at once
 * (gap_inter), from bursts over MPI_COMM_WORLD (collective); 0 on one node or when nothing
 * plausible was measured. beta_inter: a message's start-up between nodes. */
double xchg_measure_gap(const int *world_node, int world_size, double beta_inter);
/* The last context each thread looked up, valid while no context was freed since (a freed
 * communicator's handle may be reused by a new one). */
typedef struct xchg_last_ctx {
    MPI_Comm comm;
    xchg_ctx_t *ctx;
    unsigned generation;
} xchg_last_ctx_t;
extern __thread __attribute__((tls_model("initial-exec"))) xchg_last_ctx_t xchg_last_ctx;
extern unsigned xchg_ctx_generation; /* bumped whenever a context is freed */
/* The context of comm when it is the one this thread looked up last, else NULL; no MPI call */
static inline xchg_ctx_t *xchg_ctx_cached(MPI_Comm comm)
{
    return xchg_last_ctx.comm == comm && comm != MPI_COMM_NULL &&
                   xchg_last_ctx.generation ==
                       __atomic_load_n(&xchg_ctx_generation, __ATOMIC_ACQUIRE)
               ? xchg_last_ctx.ctx
               : NULL;
}
void xchg_ctx_finalize(void);   /* free the contexts of COMM_WORLD and COMM_SELF */
/* channel.c: attach a new context to a private channel for comm's group with a tag of its own
 * (collective over comm; every rank ends on the same channel and slot, or with ctx->passthrough
 * set when none can be had); detach it when the context goes. group is comm's (the caller's,
 * who frees it). The agreement that attaches it (an allreduce, or a pass through the world's
 * board) also takes the element-wise maximum of carried[0 .. ncarried - 1] over the ranks (in:
 * this rank's; out: the maximum; 0 each where the agreement failed), for what the context's
 * first call would agree otherwise (shim/context.c: the kept segment, an alltoallv's
 * statistics). */
#define XCHG_ATTACH_CARRIED 8 /* ncarried, at most */
int xchg_channel_attach(xchg_ctx_t *ctx, MPI_Comm comm, MPI_Group group, uint64_t *carried,
                        int ncarried);
void xchg_channel_detach(xchg_ctx_t *ctx);
/* Channels this process holds; *made: made in all; *boarded: attachments through the board. */
int xchg_channel_count(int *made, int *boarded);
/* MPI_Finalize: drop the learning kept from channels that went, and keep none from here on. */
void xchg_channel_finalize(void);
/* MPI_Init's warm-up context (a duplicate of MPI_COMM_WORLD on one node, with a segment of its
 * own; not under MPI_THREAD_MULTIPLE): its segment becomes the board through which every later
 * context of the world's processes attaches (shim/channel.c), and its channel stays until
 * MPI_Finalize. Collective over MPI_COMM_WORLD; the board exists on every rank or on none. */
void xchg_channel_board(xchg_ctx_t *warm);
/* The learning domain of ctx's channel (made on first use, or adopted from an earlier channel of
 * the same group, and kept when the channel goes: shim/channel.c), or NULL. */
struct xchg_learning *xchg_channel_learning(xchg_ctx_t *ctx);
/* This rank's cost of an agreement on ctx's channel, for its learning domain's first agreement
 * to carry, in place of the allreduce that made the channel (one made at MPI_Init, when the MPI
 * library's connections may still be cold, is no measure of an agreement's cost). */
void xchg_channel_agreement_cost(xchg_ctx_t *ctx, double seconds);
/* The largest halves that learning lets a shape's first calls make or grow (shim/learn.c): a
 * call that needs more waits for a shape the program repeats. The segment that MPI_Init makes
 * for the world's processes on one node (xchg_warm_first_call) has halves of XCHG_SHM_DEFAULT
 * (XCHG_SHM_BYTES, when less), so that the world's calls do not grow it at the default. */
#define XCHG_SHM_SETUP_HALF ((size_t)256 << 10)
/* shm.c: a context's shared segment (xchg_ctx_t.shm_reserve; collective), and its release */
int xchg_shm_reserve(xchg_ctx_t *ctx, size_t bytes);
/* This rank's page tables for its mapping of ctx's segment: each page of the control block, of
 * the first `bytes` of each half and of the first `region_bytes` of each of its ranks' alltoallv
 * regions (algos/alltoallv_shm.c) read once (a first touch maps the page, 1 to 4 us a page on
 * the 2-core VM), as a call would in its copies; for a segment made ahead of the calls (the
 * warm-up at MPI_Init). */
void xchg_shm_prefault(const xchg_ctx_t *ctx, size_t bytes, size_t region_bytes);
/* The halves that xchg_shm_reserve(ctx, bytes) would make the node's segment: 0 when it makes
 * none (the segment serves as it is, or cannot grow), else their size. Agreed on all ranks. */
size_t xchg_shm_new_half(const xchg_ctx_t *ctx, size_t bytes);
/* A new context's kept segment (file header of shm.c): the one the pool keeps for its
 * processes, taken from the pool (NULL when none, or when the context is not on one node), and
 * its {id, ~id} ({0, ~0} without one) in ids, for the ranks to agree on in the allreduce that
 * attaches the context; xchg_shm_take_offer with the agreed maximum makes it the context's
 * where every rank took the same one, else each rank's goes. Both on every rank. */
xchg_shm_t *xchg_shm_offer(const xchg_ctx_t *ctx, uint64_t ids[2]);
void xchg_shm_take_offer(xchg_ctx_t *ctx, xchg_shm_t *offer, const uint64_t agreed[2]);
/* The context's segment goes: kept for the next communicator of the same processes (shim/shm.c,
 * the pool), or unmapped. */
void xchg_shm_free(xchg_ctx_t *ctx);
/* MPI_Finalize: the pool's segments are unmapped. */
void xchg_shm_pool_drain(void);
/* The context's segment taken out of it (ctx->shm NULL after; still counted against the
 * process's bounds) for another owner, who unmaps it with xchg_shm_drop (NULL: nothing). */
xchg_shm_t *xchg_shm_detach(xchg_ctx_t *ctx);
void xchg_shm_drop(xchg_shm_t *shm);
/* Segments this process made (growths included) and took from the pool, so far. */
void xchg_shm_counts(int *made, int *adopted);

/* select.c and learn.c */
#define XCHG_DECISIONS 64 /* decisions cached per learning domain, of each of its two tables */
#define XCHG_SHAPES 48    /* call shapes a learning domain keeps (632 bytes each) */

/* Which level of the precedence decided. */
enum { XCHG_FROM_FORCED, XCHG_FROM_TABLE, XCHG_FROM_CACHE, XCHG_FROM_MODEL, XCHG_FROM_FALLBACK };

typedef struct xchg_decision {
    unsigned gen; /* 0: empty; else the configuration generation it was made under */
    int coll;
    size_t key;    /* size key (alltoallv: its bucket) */
    unsigned skew; /* alltoallv skew class */
    int torus[3];  /* the communicator's torus shape: ndims, dims (xchg_topo_t) */
    int algo;
    xchg_params_t params;
    int source; /* XCHG_FROM_* */
    int shape;  /* the learning slot this shape last used (a hint, checked), or -1 */
} xchg_decision_t;

/* One call shape being learned or learned (shim/learn.c): its policy state (pure,
 * tuning/learn_policy.h) and this rank's times of the current probe or watch. */
typedef struct xchg_shape {
    int coll;
    unsigned bucket, skew;
    xchg_lp_t lp;
    xchg_lp_step_t step;                /* what the shape's last call did */
    int pending;                        /* step was taken by xchg_learn_tick for the selection
                                           that follows in the same call */
    double starts[XCHG_LP_AGREED_MAX];  /* this rank's timed calls of the probe (or chained */
    double ends[XCHG_LP_AGREED_MAX];    /* probes) or watch: when each began and ended */
    double entered;                     /* when this rank's latest call of it began */
    double round_local;                 /* this rank's time in the probe round's calls after
                                           its first, each from entry to exit */
} xchg_shape_t;

/* A learning domain: the shapes of every context on one channel (they have the same group, so
 * the same size and layout, and a program that is not multithreaded calls them in the same
 * order on every rank), or of one context under MPI_THREAD_MULTIPLE. */
typedef struct xchg_learning {
    unsigned epoch; /* bumped whenever learning changes what a call shape runs */
    int next;       /* slot the next new shape takes when all are used */
    double agree_local; /* this rank's time in the domain's latest agreement (shim/learn.c) */
    double sync_local;  /* across machines: this rank's least time in the barriers that began
                           the timed calls since that agreement (0: none) */
    /* each slot's shape as one key (shim/learn.c, shape_key; 0: free): a new shape's search
     * reads these 384 bytes, not a line of every slot of the 30 KiB below, which a program's
     * own data has mostly evicted from the cache by the time it makes a new shape */
    uint64_t shape_keys[XCHG_SHAPES];
    xchg_shape_t shapes[XCHG_SHAPES];
    /* its contexts' cached decisions (select.c): [0] MPI_Alltoall's and MPI_Allgather's, [1]
     * MPI_Alltoallv's, which only alltoallv's selections insert and evict */
    xchg_decision_t decisions[2][XCHG_DECISIONS];
} xchg_learning_t;

/* What the shim knows of a datatype (shim/datatype.c). */
typedef struct xchg_type {
    MPI_Datatype type;
    size_t size;             /* bytes of one element's signature */
    MPI_Aint lb, extent;
    int dense;               /* count elements are exactly count * size bytes, in order */
} xchg_type_t;

/* The last MPI_Alltoall or MPI_Allgather call of a context, described by its arguments, and
 * how it was served: a call with the same arguments skips the type lookups and the decision
 * (shim/normalize.c). Valid while the configuration, the type handles and the learning state
 * (epoch) are what they were when it was stored. */
typedef struct xchg_memo {
    unsigned config_gen, type_gen, epoch; /* config_gen 0: empty; epoch: the learning domain's */
    int in_place;
    MPI_Count sendcount, recvcount;
    MPI_Datatype sendtype, recvtype;
    xchg_type_t st, rt;
    xchg_choice_t choice;
    int learned; /* the learning slot of a settled shape (its calls are counted), or -1 */
} xchg_memo_t;

/* The shim's per-context state, created on first use and freed with the context. */
typedef struct xchg_shim_state {
    xchg_memo_t memo[2]; /* XCHG_ALLTOALL, XCHG_ALLGATHER */
    xchg_memo_t vtypes;  /* MPI_Alltoallv: the last call's types only (counts vary) */
    xchg_learning_t *learning; /* the context's learning domain (its channel's, or its own) */
    int own_learning;          /* 1: learning is the context's own, freed with it */
    /* alltoallv: statistics carried by the previous call (shim/normalize.c) */
    uint64_t carried[3];
    int carried_valid;
    int carried_age;          /* calls since they were last refreshed */
    int carried_max_age;      /* calls they may decide before an agreement (0: the first) */
    int carried_valid_once;   /* an agreement has set them at least once */
    unsigned carried_version; /* bumped whenever they change */
    /* what the carried statistics chose last (the alltoallv fast paths: a native choice is
     * taken before the arguments are read, shim/interpose.c; another skips selection) */
    struct {
        unsigned config_gen, epoch, version; /* config_gen 0: nothing memorised */
        int learned;          /* learning slot of the shape (settled, or a probe's), or -1 */
        xchg_choice_t choice; /* as the shape's candidate names it */
    } vmemo;
} xchg_shim_state_t;

xchg_shim_state_t *xchg_shim_state(xchg_ctx_t *ctx); /* NULL without memory */
void xchg_shim_state_free(xchg_shim_state_t *state);

/* The decision for a call on ctx's communicator: *choice (algo and params). *trial is -1, or
 * the learning slot to report the call's time to (xchg_learn_record) after it ran; *learned
 * is the slot of a settled shape (for xchg_learn_tick), or -1.
 * MPI_SUCCESS, or MPI_ERR_OTHER under XCHG_STRICT when the forced algorithm cannot serve the
 * call (reported by name). Every rank must make the same sequence of calls on the
 * communicators of a learning domain (as MPI requires of collectives): decisions and learning
 * are per domain. */
int xchg_select(xchg_ctx_t *ctx, const xchg_call_t *call, xchg_choice_t *choice, int *trial,
                int *learned);
/* The alltoall a context hands nested algorithms (xchg_ctx_t.inner_alltoall). */
int xchg_alltoall_select_run(xchg_ctx_t *ctx, const void *sendbuf, void *recvbuf,
                             size_t block_bytes, const xchg_algo_t *inner,
                             const xchg_params_t *params);
/* The binding and the configuration's generation.
 * The function that runs registry entry index (algos/impls.c, bound by collective and name),
 * or NULL for native; the binding is made once, and an xchg entry without one is reported
 * (xchg_algo_bind, at MPI_Init) and runs as native. */
const xchg_impl_t *xchg_algo_impl(int index);
/* Bind every registry entry to its implementation; the number of xchg entries without one
 * (each reported on world rank 0). Idempotent. */
int xchg_algo_bind(void);
/* xchg_config_load at MPI_Init, collective over MPI_COMM_WORLD (config.c): the table that
 * XCHG_TUNING names is read by world rank 0 and passed to every rank (xchg_share_text). */
void xchg_config_load_at_init(void);
/* Drop every cached decision (after the configuration changed: xchg_force; config.c): bumps the
 * configuration generation (never 0) that cached and memorised decisions carry. */
void xchg_select_forget(void);
unsigned xchg_select_generation(void);

/* learn.c: selection that learns (XCHG_LEARN, on by default); the policy is
 * tuning/learn_policy.c, this is its driver. A model-decided call shape (or one a cached table
 * decided) runs the candidate the policy names; its probes' and watched calls' times are
 * agreed over the ranks at the calls the policy says, so every rank runs the same algorithm. */
/* The choice of a model- or cache-decided call; returns the shape's slot when this call is to
 * be reported (xchg_learn_start, xchg_learn_record), else -1. *hint holds the shape's slot;
 * *ranking the models' ranking of the call when selection made it (a new shape's candidates
 * start from it), else n < 0. */
int xchg_learn_pick(xchg_ctx_t *ctx, const xchg_call_t *call, int source, xchg_choice_t *choice,
                    int *hint, xchg_ranking_t *ranking);
/* A call of the shape in slot `slot` that skipped selection (a memorised call, whose choice
 * was algo with params: a settled shape's winner, or the candidate of a probe under way).
 * XCHG_TICK_ON: run the memorised choice; XCHG_TICK_RELEARN: this call runs something else (the
 * shape is probed again from this call on, a probe of another candidate begins, or a settled
 * choice changed: a stored verdict that waited for its set-up): the caller selects anew, and
 * xchg_learn_pick takes this call's step; XCHG_TICK_WATCH: run the memorised choice and report
 * its time (xchg_learn_record, slot): a call of a probe round, or a settled shape's watched one.
 * Every call of a shape counts exactly once, on whichever path it takes, so every rank watches
 * and learns again at the same call. */
enum { XCHG_TICK_ON, XCHG_TICK_RELEARN, XCHG_TICK_WATCH };
int xchg_learn_tick(xchg_ctx_t *ctx, int slot, int algo, const xchg_params_t *params);
/* The call whose step xchg_learn_pick gave for slot `slot` selects again (an alltoallv whose
 * predicted choice needs its own agreed statistics): the shape's next pick takes the same step,
 * so that the call counts once. */
void xchg_learn_unpick(xchg_ctx_t *ctx, int slot);
/* A call reported to slot `slot` starts here (every call of a probe round, and a settled
 * shape's watched calls): a timed one on one machine with no synchronisation, across machines
 * after a barrier of the channel (shim/learn.c, timing). Returns the start time on
 * xchg_learn_clock. */
double xchg_learn_start(xchg_ctx_t *ctx, int slot);
double xchg_learn_clock(void); /* seconds on the machine's monotonic clock */
/* The reported call of slot `slot` ran from start to end (xchg_learn_clock) on this rank; may
 * agree (collective at the same call on every rank). */
int xchg_learn_record(xchg_ctx_t *ctx, int slot, double start, double end);
/* The shape in slot `slot` of ctx's learning domain (for the alltoallv watch's check). */
const xchg_shape_t *xchg_learn_shape(const xchg_ctx_t *ctx, int slot);
/* A context's learning domain: its channel's when the program is not multithreaded, else its
 * own (shim/learn.c); NULL without memory. Freed with the channel or the context. */
xchg_learning_t *xchg_learning_new(void);
/* The verdicts settled in this run, as tuning-table rules (world rank 0's communicators), for
 * the cache and XCHG_LEARN=FILE: copies at most max of them into rules; returns how many. */
int xchg_learned_rules(xchg_rule_t *rules, int max);
void xchg_learn_write(void); /* XCHG_LEARN=FILE: world rank 0 writes the learned table */

/* stats.c */
void xchg_stats_add(int coll, int algo, const xchg_params_t *params, size_t block_bytes,
                    double seconds);
void xchg_stats_report(void); /* collective over MPI_COMM_WORLD, from MPI_Finalize */

/* world rank, for messages that only rank 0 prints */
extern int xchg_world_rank;
void xchg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xchg_version_say(void); /* XCHG_VERBOSE=1: "xchg VERSION: MPI, ranks, file" (version.c) */

#endif

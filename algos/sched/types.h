/*
 * types.h: the pure types every layer shares: the collectives, a call's shape and topology
 * summary, the machine constants, the algorithm parameters with their descriptors, and a
 * registry entry (the registry itself is tuning/registry.c). No MPI, no hwloc: the schedules
 * (algos/sched), the cost models, the tuning table and the registry build from this header
 * alone with a plain C compiler (libxchgcore.a, Makefile). algos/xchg.h adds what needs MPI.
 */
#ifndef XCHG_SCHED_TYPES_H
#define XCHG_SCHED_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* The three collectives xchg serves; used as array indices. */
enum { XCHG_ALLTOALL = 0, XCHG_ALLGATHER = 1, XCHG_ALLTOALLV = 2, XCHG_NCOLLS = 3 };

/* The larger block (bytes) of native's calls measured at MPI_Init (xchg_machine_t.native_mid). */
#define XCHG_NATIVE_MID_BYTES 4096

struct xchg_algo;

/* What the algorithms' predicates and cost models may know of where a communicator's ranks
 * run: computed once per communicator (shim/context.c) from values equal on all ranks. */
typedef struct xchg_topo {
    int nnodes;           /* nodes the ranks are on */
    int min_node_ranks;   /* fewest ranks of the communicator on one node */
    int max_node_ranks;   /* most ranks on one node */
    int consecutive;      /* 1: every node's ranks are consecutive in the communicator */
    uint64_t layout_hash; /* a hash of the node of every rank */
    int torus_ndims;      /* 1 or 2: the communicator has a Cartesian topology (MPI_Cart_create)
                             with that many dimensions, all periodic; 0 otherwise */
    int torus_dims[2];    /* its dimensions; rank order is MPI_Cart_coords' */
    int torus_from_env;   /* 1: the shape is XCHG_TORUS's (a communicator without a Cartesian
                             topology; rank = x * c + y), not the communicator's own */
    size_t shm_bytes;     /* bytes one pass of the shm algorithms may put through a segment of
                             shared memory (XCHG_SHM_BYTES) when every rank of the communicator
                             shares this machine's memory and nnodes is 1; 0: no shared memory
                             (several nodes, real or emulated by XCHG_NODES, or turned off) */
    size_t node_shm_bytes; /* the same limit for a segment per node, shared by the ranks of
                              the communicator on that node, when every node's ranks share one
                              machine's memory (measured nodes always; XCHG_NODES's emulated
                              nodes when each lies within one machine); 0: no per-node segments
                              (turned off, or a node that spans machines) */
} xchg_topo_t;

/* Algorithm parameters: the storage of every key of every algorithm. Zero (NULL) means "not
 * given": the cost model fills it in (xchg_algo_t.cost). Which keys an algorithm takes, and
 * which field each key is stored in, its descriptors say (xchg_algo_t.keys). */
typedef struct xchg_params {
    int radix;  /* [r] radix of the index algorithm, 2..p (larger values act as p) */
    int nports; /* [k] ports: messages in flight at once */
    const struct xchg_algo *inner; /* [inner] twophase: the inner alltoall, NULL = auto */
    int dims_r; /* [dims] torus: the shape's rows (1 for a ring: dims=P), 0 = not given */
    int dims_c; /* [dims] torus: its columns (dims=RxC; rank = x * dims_c + y) */
    int leaders; /* [leaders] node: ranks of each node that exchange with other nodes */
} xchg_params_t;

/* The shape of one call. Every field is equal on all ranks of the communicator, so anything
 * computed from it alone (selection, default parameters) is globally consistent. */
typedef struct xchg_call {
    int coll;
    int comm_size;
    const xchg_topo_t *topo; /* the communicator's; NULL: unknown (a flat single node) */
    size_t block_bytes;      /* the size key, computed only by xchg_size_key() (shim/select.c) */
    /* alltoallv only, agreed over all ranks with one xchg_agree_max() */
    size_t max_send_bytes;  /* h1: most bytes any rank sends */
    size_t max_recv_bytes;  /* h2: most bytes any rank receives */
    size_t max_block_bytes; /* largest single (source, destination) message */
    size_t max_total_bytes; /* largest sum over a rank's sends and receives */
} xchg_call_t;

/* Measured (or default) machine constants of the linear model T = beta + m tau, on two levels:
 * messages inside a node and messages between nodes. A cost model prices a call with the
 * constants of the links its messages cross, xchg_machine_for(call, machine) (tuning/cost.h). */
typedef struct xchg_machine {
    double beta;       /* seconds per message start-up inside a node (one level: everywhere) */
    double tau;        /* seconds per byte on the wire inside a node (one level: everywhere) */
    double rho;        /* seconds per byte copied locally */
    double rho_cached; /* seconds per byte of a call's local copies of at most cached_bytes in
                          all: source and destination stay in the core's cache (xchg-tune
                          measures both: a table's rho_cached= and cached_bytes=); 0 = rho */
    double cached_bytes;
    double port_share; /* k messages of m bytes in flight cost beta + m tau (1 + port_share (k-1));
                          0 = perfect k-port, 1 = ports share one link */
    double beta_inter; /* seconds per message start-up between nodes; 0 = beta */
    double tau_inter;  /* seconds per byte between nodes; 0 = tau */
    int inject;        /* inter-node messages one node's network interface carries at full speed
                          at once; 0 = unlimited */
    double sync;       /* seconds per pass through a node's shared segment (every rank's arrival
                          seen by the others); 0 = beta (xchg_cost_sync) */
    double gap_inter;  /* seconds a node spends on each message that leaves it, one after
                          another (LogGP's g at the node): N messages out of one node in a round
                          cost at least N gap_inter; 0 = none */
    /* measured by the calibration at MPI_Init (shim/calibrate.c) or by xchg-tune (a table's
       tau_large= and large_from=): seconds per byte of a message inside a node beyond its
       first large_from bytes (a shared-memory transport's single copy past its eager limit),
       so m bytes cost m tau up to large_from and large_from tau + (m - large_from) tau_large
       above (xchg_cost_wire); 0 = tau throughout */
    double tau_large;
    double large_from;
    /* set by xchg_machine_for for a call that spans nodes with inject > 0 (never by a table):
       a round of k messages per rank costs at least beta + m tau k node_share, the busiest
       node's max_node_ranks k messages through its interface, inject at a time
       (node_share = max_node_ranks / inject); 0 = no limit */
    double node_share;
    /* set by xchg_machine_for for a call that spans nodes (never by a table): gap_inter times
       the busiest node's ranks, so a round of k messages per rank keeps that node busy for at
       least k node_gap; 0 = none */
    double node_gap;
    /* the MPI library's own collectives as xchg-tune measured them (the tuning table's native
       curves, tuning/table.h), or NULL: xchg_cost_native prices native from a curve for the
       call's collective and communicator size when there is one, else by its model */
    const struct xchg_native_curves *native;
    /* measured at MPI_Init when the world is one node (shim/calibrate.c,
       xchg_calibrate_native): seconds a call of the MPI library's own collective with blocks of
       1 B takes on native_small_ranks ranks, per collective (XCHG_ALLTOALL ...); no call of
       that many ranks that moves bytes costs native less (xchg_cost_native); 0 = not measured */
    double native_small[XCHG_NCOLLS];
    /* the same with blocks of XCHG_NATIVE_MID_BYTES; between the two sizes native's floor rises
       linearly, and past the larger it stays (xchg_cost_native_floor); 0 = not measured */
    double native_mid[XCHG_NCOLLS];
    int native_small_ranks;
    /* whose default algorithms price native where no curve is measured (xchg_cost_native):
       XCHG_NATIVE_MPICH (MPICH's documented ones, also for any other library) or
       XCHG_NATIVE_OPENMPI; set by the shim from the MPI library it runs under, never by a
       table */
    int native_rules;
} xchg_machine_t;

enum { XCHG_NATIVE_MPICH = 0, XCHG_NATIVE_OPENMPI = 1 };

/* Kinds of parameter values. */
enum {
    XCHG_PARAM_INT = 1,   /* a decimal integer in [min, max], stored in an int */
    XCHG_PARAM_SHAPE = 2, /* "RxC" or "P" (a ring, 1 x P; a dimension of 1 makes a ring), each
                             dimension in [min, max], stored in two ints (rows, columns) */
    XCHG_PARAM_ALGO = 3   /* the name of an algorithm of collective coll that xchg implements
                             (not native), stored as a const xchg_algo_t * */
};

/* One key an algorithm takes. Parsing (xchg_spec_parse), formatting (xchg_params_format),
 * xchg-tune's and xchg-bench's candidates, xchg-sched's arguments and the README's table of
 * algorithms (xchg-decide --markdown) all read these descriptors (tuning/registry.c). */
typedef struct xchg_param {
    const char *key;     /* the one lowercase key, e.g. "r" */
    int type;            /* XCHG_PARAM_* */
    size_t field;        /* offsetof(xchg_params_t, ...): the int, the rows, or the algorithm */
    size_t field2;       /* SHAPE: offsetof the columns */
    long min, max;       /* INT: the value's range; SHAPE: each dimension's */
    int coll;            /* ALGO: the collective of the algorithms it names */
    const char *noun;    /* for messages: "the radix" ("r=1: the radix must be ...") */
    const char *meaning; /* one line for the README's table and the tools' help */
    /* The values xchg-tune tries besides the model's own choice, comma separated: integers,
     * SQRTP (ceil(sqrt p), at least 2) and P (p, at least 2); an integer above min that is not
     * below p is skipped. For ALGO: "*", every algorithm it may name. NULL: none. */
    const char *tune;
    /* the values xchg-bench's default specs add (NAME:KEY=VALUE each), in the same form */
    const char *bench;
} xchg_param_t;

#define XCHG_MAX_KEYS 4 /* keys of one algorithm, at most */

/* The printers of schedules in xchg-sched (tools/xchg-sched.c), xchg_algo_t.schedule: the
 * subcommand "xchg-sched COLL NAME" prints the schedule of the entry that names one. */
enum {
    XCHG_SCHEDULE_NONE = 0,
    XCHG_SCHEDULE_RADIX,     /* radix digits, k steps a round (algos/sched/radix.h) */
    XCHG_SCHEDULE_CIRCULANT, /* circulant rounds, the last one partitioned (circulant.h) */
    XCHG_SCHEDULE_HIER,      /* the hierarchical factor algorithm's phases (factor.h) */
    XCHG_SCHEDULE_TORUS      /* all-port ring and torus steps (torus.h) */
};

/* One registry entry: everything about an algorithm that needs no MPI (tuning/registry.c).
 * The function that runs it is bound by name in algos/impls.c (xchg_impl_t). */
typedef struct xchg_algo {
    const char *name; /* the one lowercase name used everywhere */
    int coll;
    /* 1 when the algorithm can serve the call; else 0 and *why says why */
    int (*applies)(const xchg_call_t *call, const xchg_params_t *params, const char **why);
    /* complete zero fields of params with the model's best values and return the predicted
     * time in seconds (INFINITY when it cannot serve the call) */
    double (*cost)(const xchg_call_t *call, const xchg_machine_t *machine, xchg_params_t *params);
    /* params completed by cost rewritten to the values that name what runs for the call, so
     * that two params that send the same messages read the same (xchg-tune times one of them);
     * NULL: every two params differ in what runs */
    void (*as_run)(const xchg_call_t *call, xchg_params_t *params);
    const xchg_param_t *keys[XCHG_MAX_KEYS]; /* its keys, in the order they are formatted;
                                               NULL after the last */
    const char *description;                 /* what it does (the README's table) */
    const char *source;                      /* the paper and sections it follows; "" for none */
    /* alltoallv: 1 when the algorithm uses none of the agreed values of xchg_call_t, so a
     * call forced to it skips the agreement round (0 by default: agree) */
    int no_agreement;
    /* 1 for "native": the MPI library's own collective serves the call (no implementation) */
    int native;
    /* 1: it moves data through a segment of shared memory that the shim provides (algos/shm.c),
     * not through xchg_exchange, so the simulator cannot run it */
    int shared_memory;
    /* 1 for its collective's baseline (one per collective): every rank pair's message goes
     * once, directly, and it serves every call; what runs where an xchg algorithm is needed
     * and no choice is made (xchg_baseline_index: pairwise, ring) */
    int baseline;
    /* the printer of its schedule in xchg-sched, XCHG_SCHEDULE_*; 0: none */
    int schedule;
} xchg_algo_t;

#endif

/*
 * shim.h: the shim's internal interface (configuration, contexts, selection, statistics).
 * The MPI entry points themselves are in shim/interpose.c.
 */
#ifndef XCHG_SHIM_H
#define XCHG_SHIM_H

#include "../algos/xchg.h"
#include "../tuning/table.h"

#define XCHG_AUTO (-1) /* no algorithm forced: table, then model */

typedef struct xchg_config {
    int loaded;
    int disable;              /* XCHG_DISABLE=1: pure pass-through */
    int wait;                 /* XCHG_WAIT: 0 auto, 1 spin, 2 yield */
    int stats;                /* XCHG_STATS=1 */
    int verbose;              /* XCHG_VERBOSE=1 */
    int strict;               /* XCHG_STRICT=1: a forced algorithm that cannot serve a call is an
                                 error (the call fails with MPI_ERR_OTHER), not a fallback */
    int learn;                /* XCHG_LEARN: 1 (default) time the best candidates of a repeating
                                 call shape and settle on the fastest (shim/learn.c); 0 off */
    char learn_path[4096];    /* XCHG_LEARN=FILE: also write what was learned there at finalize */
    int test_skew;            /* XCHG_TEST_SKEW_TIMES=1 (testing knob): each rank distorts its
                                 own timings, so that ranks disagree locally */
    int forced[XCHG_NCOLLS];  /* registry index, or XCHG_AUTO */
    xchg_params_t forced_params[XCHG_NCOLLS];
    xchg_table_t table;       /* XCHG_TUNING (empty without it) */
    xchg_machine_t machine;   /* the table's measured constants, else the defaults */
} xchg_config_t;

extern xchg_config_t xchg_config;

/* config.c: read the environment once (idempotent). Reports bad values on world rank 0. */
void xchg_config_load(void);
/* Force coll's algorithm from now on ("auto", "native" or NAME[:KEY=VALUE,...]), as the
 * environment variable would; for xchg's own tools. 0 on success, -1 for a bad spec. */
int xchg_force(int coll, const char *spec);

/* context.c: the context of an intracommunicator (created and cached on first use), or NULL
 * with *rc set when it cannot be created. */
xchg_ctx_t *xchg_ctx_get(MPI_Comm comm, int *rc);
void xchg_ctx_world_init(void); /* node layout of MPI_COMM_WORLD, once, from MPI_Init */
void xchg_ctx_finalize(void);   /* free the contexts of COMM_WORLD and COMM_SELF */

/* select.c */
size_t xchg_size_key(const xchg_call_t *call);
/* The decision for a call shape, uncached: forced > table > model. Completes params; reason
 * (may be NULL) receives why. A pure function of the call and the configuration. */
int xchg_decide(const xchg_call_t *call, xchg_params_t *params, char *reason, size_t len);
/* The decision for a call on ctx's communicator (cached per context, learning where enabled):
 * *algo and *params. MPI_SUCCESS, or MPI_ERR_OTHER under XCHG_STRICT when the forced algorithm
 * cannot serve the call (reported by name). Collective in effect: every rank of the
 * communicator must make the same sequence of calls (learning agrees on timings). */
int xchg_select(xchg_ctx_t *ctx, const xchg_call_t *call, int *algo, xchg_params_t *params);
/* Drop every cached decision (after the configuration changed: xchg_force). */
void xchg_select_forget(void);

/* stats.c */
void xchg_stats_add(int coll, int algo, const xchg_params_t *params, size_t block_bytes,
                    double seconds);
void xchg_stats_report(void); /* collective over MPI_COMM_WORLD, from MPI_Finalize */

/* world rank, for messages that only rank 0 prints */
extern int xchg_world_rank;
void xchg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

/*
 * api.h: what xchg's own tools (xchg-tune, xchg-bench, xchg-decide, xchg-project) may use of the
 * library: the configuration through these calls only (never xchg_config itself), the decision, and
 * a context to run rounds on. The registry and the tuning table are the tools' own (tuning/).
 */
#ifndef XCHG_API_H
#define XCHG_API_H

#include "../algos/xchg.h"
#include "../tuning/registry.h"
#include "../tuning/table.h"
#include "../tuning/shape.h"

/* The version of this build: VERSION plus the git commit, e.g. "0.9.0+f691226" (shim/version.c). */
const char *xchg_version(void);
/* Read the environment once (idempotent; MPI_Init does it). Reports bad values on world rank 0. */
void xchg_config_load(void);
/* XCHG_DISABLE=1: every call is the MPI library's own */
int xchg_api_disabled(void);
/* XCHG_WAIT: 0 auto, 1 spin, 2 yield */
int xchg_api_wait(void);
/* Force coll's algorithm from now on ("auto", "native" or NAME[:KEY=VALUE,...]), as the
 * environment variable would. 0 on success, -1 for a bad spec (reported on world rank 0). */
int xchg_force(int coll, const char *spec);
/* The machine constants the models price with (the tuning table's, else the defaults). */
const xchg_machine_t *xchg_api_machine(void);
/* Price with these constants from now on (their native curves included; NULL: none). */
void xchg_api_set_machine(const xchg_machine_t *machine);
/* The gap at a node between nodes (xchg_machine_t.gap_inter) on the world's layout, as the
 * calibration at MPI_Init measures it (collective over MPI_COMM_WORLD); 0 on one node. */
double xchg_api_measure_gap(double beta_inter);
/* Rules of the loaded tuning table (XCHG_TUNING); 0 without one. */
int xchg_api_table_rules(void);
/* Load the tuning table at path in place of the current one (XCHG_TUNING's), as XCHG_TUNING
 * would: problems reported on world rank 0 with file and line, its machine constants (else
 * the defaults) and native curves used from now on. xchg_table_load's value (-1: unusable). */
int xchg_api_load_table(const char *path);
/* Write table (with comment) as this machine's and layout's table in the per-user cache
 * (shim/cache.c), world rank 0 only; *path names the file (NULL when the cache is off:
 * XCHG_CACHE=0, XCHG_TUNING set, or no home directory). 0, or -1 when it was not written. */
int xchg_api_cache_write(const xchg_table_t *table, const char *comment, const char **path);
/* Forget the tuning table's rules and curves (the cache's too): decisions by the models alone from now on (the
 * machine constants stay as they are). */
void xchg_api_drop_table(void);
/* The decision for a call shape, uncached: forced > table > model. Completes params; reason
 * (may be NULL) receives why. A pure function of the call and the configuration. */
int xchg_decide(const xchg_call_t *call, xchg_params_t *params, char *reason, size_t len);
/* The size key of a call: tuning/shape.h. */
/* The algorithm that served this thread's last call of coll, "name:k=v,...", for the tools;
 * 0 on success, -1 when no call was served yet. */
int xchg_last_choice(int coll, char *out, size_t outlen);
/* Values that a communicator's first call agrees, as their maximum over the ranks, in the
 * allreduce that attaches its new context (shim/channel.c) instead of in an agreement of its own:
 * MPI_Alltoallv's statistics (shim/normalize.c). */
#define XCHG_EARLY_VALS 3
typedef struct xchg_early {
    /* this rank's values into vals for a communicator of size ranks: 1, or 0 when it has none
     * (then no rank's are agreed); called only when the context is made */
    int (*fill)(void *arg, int size, uint64_t vals[XCHG_EARLY_VALS]);
    void *arg;
    uint64_t vals[XCHG_EARLY_VALS]; /* out: the maximum over the ranks, when agreed */
    int agreed; /* out: 1 when the context was made in this call and every rank gave its values */
} xchg_early_t;

/* The context of a communicator (created and cached on first use; for an intercommunicator a
 * context whose passthrough is set), or NULL with *rc set when it cannot be created or comm is
 * not a valid communicator (shim/context.c). early (may be NULL): values its making agrees. */
xchg_ctx_t *xchg_ctx_get(MPI_Comm comm, int *rc, xchg_early_t *early);

#define XCHG_MAX_ALGOS 16 /* registry entries of one collective, at most */

/* An algorithm with its completed parameters, and (from the models) its predicted time. */
typedef struct xchg_choice {
    int algo;
    xchg_params_t params;
    double time;
} xchg_choice_t;
/* The models' error on shared memory: the linear fit of xchg-tune leaves residuals of tens of
 * percent there (eager/rendezvous switch, caches), so two prices within this factor of each
 * other cannot be told apart: selection takes an xchg algorithm only when it is predicted this
 * many times faster than native (shim/select.c), and learning starts from the best xchg
 * candidate unless native is predicted this many times faster (shim/learn.c). */
#define XCHG_MODEL_MARGIN 1.5
/* The models' rule for running an xchg algorithm instead of native: priced XCHG_MODEL_MARGIN
 * times faster (or native unpriced), and never for a call that moves no bytes, which native
 * ends at once (MPICH and Open MPI: 0.0 to 0.2 us at 0 B, where the xchg models price a call at
 * 0 and every xchg algorithm still synchronises or agrees). */
int xchg_model_clear_win(const xchg_call_t *call, double xchg_time, double native_time);
/* The call moves no bytes (alltoallv: the agreed or carried h1 and h2 are 0). */
int xchg_call_empty(const xchg_call_t *call);
/* Every algorithm of the call's collective that the models can price (native included),
 * fastest first, at most max; returns how many. */
int xchg_model_rank(const xchg_call_t *call, xchg_choice_t *ranked, int max);
/* One call's ranking (xchg_model_rank), made once where selection and learning both read it:
 * n < 0 until it is made. */
typedef struct xchg_ranking {
    int n;
    xchg_choice_t ranked[XCHG_MAX_ALGOS];
} xchg_ranking_t;
/* The ranking of call into *r, unless *r already holds it (r->n >= 0); returns r->n. */
int xchg_model_ranking(const xchg_call_t *call, xchg_ranking_t *r);

#endif

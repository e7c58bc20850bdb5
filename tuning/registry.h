/*
 * registry.h: the algorithms of each collective, by name, with their keys' descriptors
 * (xchg_algo_t, xchg_param_t in algos/sched/types.h), and everything that works from the
 * descriptors: spec parsing and formatting, the tools' candidates, the README's tables.
 * Pure C: no MPI. The functions that run the algorithms are bound by name in algos/impls.c.
 */
#ifndef XCHG_REGISTRY_H
#define XCHG_REGISTRY_H

#include <stdio.h>

#include "../algos/sched/types.h"

extern const xchg_algo_t xchg_algos[];
extern const int xchg_nalgos;

const char *xchg_coll_name(int coll);           /* "alltoall", "allgather", "alltoallv" */
int xchg_algo_find(int coll, const char *name); /* registry index, or -1 */
/* The registry index of coll's entry flagged native (the MPI library's own collective), or -1 */
int xchg_native_index(int coll);
/* The registry index of coll's entry flagged baseline (xchg_algo_t.baseline), or -1 */
int xchg_baseline_index(int coll);
/* The entry of call's collective that its cost model prices lowest on machine, among those
 * keep accepts (NULL: every one that applies, native included); its completed parameters in
 * *params and its time in *time (either may be NULL; INFINITY when none applies). NULL when
 * none applies. */
const xchg_algo_t *xchg_model_best(const xchg_call_t *call, const xchg_machine_t *machine,
                                   int (*keep)(const xchg_algo_t *algo), xchg_params_t *params,
                                   double *time);
/* The descriptor of key ("r", "k", "inner", "dims") among the algorithm's keys, or NULL */
const xchg_param_t *xchg_algo_key(const xchg_algo_t *algo, const char *key);
/* 1 when key is one of the algorithm's keys */
int xchg_algo_has_key(const xchg_algo_t *algo, const char *key);
/* The algorithm's keys as text, "r,k"; "none" when it has none */
void xchg_algo_keys_text(const xchg_algo_t *algo, char *out, size_t outlen);

/* "NAME[:KEY=VALUE,...]" ("," or ":" between items) into an index and params; 0 on success,
 * else -1 with err filled (unknown name or key, a key given twice, a bad value). */
int xchg_spec_parse(int coll, const char *spec, int *algo, xchg_params_t *params, char *err,
                    size_t errlen);
/* One value for one key into params; 0, or -1 with a message naming key and value in err. */
int xchg_param_parse(const xchg_param_t *desc, const char *value, xchg_params_t *params, char *err,
                     size_t errlen);
/* "r=4,k=2" (only the algorithm's keys, only the fields that are set) */
void xchg_params_format(const xchg_algo_t *algo, const xchg_params_t *params, char *out,
                        size_t outlen);
/* 1 when one of the algorithm's keys is not set in params (the models complete it for each call
 * from the call's shape, xchg_algo_t.cost), else 0 (no keys, or every one given). */
int xchg_params_open(const xchg_algo_t *algo, const xchg_params_t *params);
/* One value of a candidate list (xchg_param_t.tune, .bench) as a number for p ranks: an
 * integer, SQRTP or P; -1 when token is none of these. */
long xchg_param_token(const char *token, size_t len, int p);
/* The parameter sets xchg-tune tries for the algorithm on p ranks besides the model's own:
 * for each key, one set per value of its tune list, that key set and every other left 0.
 * Returns how many were written to out (at most max). */
int xchg_params_variants(const xchg_algo_t *algo, int p, xchg_params_t *out, int max);

/* The README's tables as Markdown (xchg-decide --markdown): the algorithms (collective, name,
 * keys, description, source) and the keys (key, value, meaning, algorithms). */
void xchg_registry_markdown(FILE *out);

/* The registry's model of twophase (its cost): xchg_cost_twophase (tuning/cost.h) with the
 * transposes priced by the forced inner algorithm's model, or else by the best model among the
 * registry's alltoall algorithms that can serve them (what selection does without a table). */
double xchg_cost_alltoallv_twophase(const xchg_call_t *call, const xchg_machine_t *machine,
                                    xchg_params_t *params);

#endif

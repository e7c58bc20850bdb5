/*
 * env.h: the values of the XCHG_* environment variables, parsed. Pure C: no MPI, no getenv.
 * shim/config.c reads each variable once and hands its text here, so that every parser of
 * the environment is unit-tested (tests/unit/test_env.c) and fuzzed (tests/fuzz/) without
 * MPI.
 *
 * Every function takes the variable's text, NULL when it is unset, and returns 0 with the
 * value, or -1 with the safe default in place of the value and err filled with the whole
 * message: the variable, its value quoted (XCHG_QUOTE: at most XCHG_QUOTE_MAX characters,
 * then "..."), the reason and what is used instead, e.g.
 *     XCHG_WAIT=fast: expected auto, spin or yield; using auto
 * The caller prints it once (world rank 0, after "xchg: ") and goes on.
 */
#ifndef XCHG_ENV_H
#define XCHG_ENV_H

#include <stddef.h>

#include "../algos/sched/types.h"

/* XCHG_WAIT's policies (xchg_config.wait) */
enum { XCHG_WAIT_AUTO = 0, XCHG_WAIT_SPIN = 1, XCHG_WAIT_YIELD = 2 };

/* XCHG_SHM_BYTES: its default and the largest value taken */
#define XCHG_SHM_DEFAULT ((size_t)1 << 20)
#define XCHG_SHM_MAX ((size_t)1 << 40)

/* No algorithm forced (XCHG_AUTO of shim/shim.h) */
#define XCHG_ENV_AUTO (-1)

/* A boolean knob such as XCHG_STATS, named name: unset, empty or "0" is 0, "1" is 1; anything
 * else is reported and taken as 0. */
int xchg_env_flag(const char *name, const char *text, int *on, char *err, size_t errlen);

/* XCHG_WAIT: unset, empty or auto, spin, yield (XCHG_WAIT_*); anything else: auto. */
int xchg_env_wait(const char *text, int *wait, char *err, size_t errlen);

/* XCHG_SHM_BYTES: a byte size (xchg_parse_size) up to XCHG_SHM_MAX, 0 turning shared memory
 * off; unset or empty: XCHG_SHM_DEFAULT, and so for a bad value. */
int xchg_env_shm_bytes(const char *text, size_t *bytes, char *err, size_t errlen);

/* XCHG_NODES: positive rank counts separated by commas ("3,1,2"), adding up to world, the
 * job's size. *sizes (malloc'd, the caller frees it) and *nnodes; both NULL and 0 when the
 * variable is unset, empty or bad. */
int xchg_env_nodes(const char *text, int world, int **sizes, int *nnodes, char *err, size_t errlen);

/* XCHG_TORUS: RxC (a torus) or P (a ring, 1 x P) as xchg_torus_parse_dims reads it; dims
 * {0, 0} when unset, empty or bad. */
int xchg_env_torus(const char *text, int dims[2], char *err, size_t errlen);

/* XCHG_LEARN: unset, empty or "1" learns (*learn = 1), "0" does not; anything else learns and
 * names the file to write what was learned to (copied into path; empty when there is none).
 * A path that does not fit pathlen is reported: learning without a file. */
int xchg_env_learn(const char *text, int *learn, char *path, size_t pathlen, char *err,
                   size_t errlen);

/* XCHG_TUNING: the tuning table's path copied into path, empty when unset or empty; a path
 * that does not fit pathlen is reported (the built-in cost models are used). */
int xchg_env_tuning(const char *text, char *path, size_t pathlen, char *err, size_t errlen);

/* The variable that forces coll's algorithm: "XCHG_ALLTOALL", "XCHG_ALLGATHER",
 * "XCHG_ALLTOALLV" ("?" for another coll). */
const char *xchg_env_coll_var(int coll);

/* A forced algorithm: "auto" or empty is XCHG_ENV_AUTO, else NAME[:KEY=VALUE,...] as
 * xchg_spec_parse reads it. 0, or -1 with *algo XCHG_ENV_AUTO, params zeroed and the bare
 * reason in why (xchg_force's message names the call, not a variable). */
int xchg_env_spec(int coll, const char *text, int *algo, xchg_params_t *params, char *why,
                  size_t whylen);

/* XCHG_CACHE: where the per-user cache of tuning tables is (shim/cache.c). "0": no cache
 * (XCHG_CACHE_OFF); unset, empty or "1": the default directory (XCHG_CACHE_DEFAULT); an
 * absolute path that fits dirlen: that directory (XCHG_CACHE_DIR, copied into dir). Anything
 * else is reported: the default directory. */
enum { XCHG_CACHE_DEFAULT = 0, XCHG_CACHE_OFF = 1, XCHG_CACHE_DIR = 2 };
int xchg_env_cache(const char *text, int *where, char *dir, size_t dirlen, char *err,
                   size_t errlen);

/* XCHG_ALLTOALL, XCHG_ALLGATHER or XCHG_ALLTOALLV (by coll): xchg_env_spec; unset is auto. */
int xchg_env_collective(int coll, const char *text, int *algo, xchg_params_t *params, char *err,
                        size_t errlen);

/* Open MPI's OMPI_MCA_mpi_yield_when_idle: 1 when its wait yields ("1", "true" or "yes"). */
int xchg_env_mpi_yields(const char *text);

#endif

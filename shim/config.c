/*
 * config.c: the environment, read once (from the MPI_Init wrapper, before any thread of the
 * program can call a collective; getenv is not safe later).
 *
 *   XCHG_DISABLE=1                 pure pass-through to the MPI library
 *   XCHG_ALLTOALL / XCHG_ALLGATHER / XCHG_ALLTOALLV = auto | native | NAME[:KEY=VALUE,...]
 *   XCHG_WAIT=auto|spin|yield      waiting policy of every round (algos/round.c)
 *   XCHG_STATS=1                   per-algorithm statistics at MPI_Finalize
 *   XCHG_VERBOSE=1                 every new decision, with its reason
 *   XCHG_TUNING=FILE               tuning table (tuning/table_load.c), else the built-in models
 *   XCHG_STRICT=1                  a forced algorithm that cannot serve a call is an error
 *   XCHG_LEARN=1|0|FILE            learn the fastest candidate of repeating call shapes (default
 *                                  1); FILE: also write the learned choices as a tuning table
 *   XCHG_TEST_SKEW_TIMES=1         testing knob: every rank distorts its own timings
 *   XCHG_TEST_DRIFT=1              testing knob: a settled shape's watched calls read 100 times
 *                                  slower than they ran (the watch must learn it again)
 *   XCHG_TEST_PROBE_ALL=1          testing knob: learning probes every candidate of a round
 *   XCHG_TEST_DESCHEDULED=1        testing knob: the calibration at MPI_Init discards its first
 *                                  measurement of each pair and reads native's calls of 1 B as
 *                                  a descheduled rank's (shim/calibrate.c)
 *   XCHG_TEST_NO_NODE_KEY=1        testing knob: rank 1 reads as if it could not read its node
 *                                  key, so the layout comes from MPI_Comm_split_type
 *                                  (shim/context.c)
 *   XCHG_NODES=3,1,2               testing knob: the first 3 ranks of MPI_COMM_WORLD are one
 *                                  node, the next 1 another, ...; must add up to the job's size
 *   XCHG_TORUS=RxC | P             the torus (P: ring) that flat communicators of R C ranks form,
 *                                  rank = x C + y (the torus algorithm, algos/alltoall_torus.c)
 *   XCHG_SHM_BYTES=SIZE            the most bytes one pass of the shm algorithms puts through a
 *                                  communicator's shared segment (0: no shared memory)
 * and shim/cache.c reads XCHG_CACHE (the per-user cache of tables). README.md documents them all.
 *
 * The values are parsed in the pure core (tuning/env.c, no MPI: unit-tested and fuzzed). A bad
 * value is reported once, by world rank 0, naming the variable and the valid choices and
 * quoting at most the value's first XCHG_QUOTE_MAX characters (tuning/size.h); the safe
 * default is used and the program goes on.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "../tuning/cost.h"
#include "../tuning/env.h"

_Static_assert(XCHG_AUTO == XCHG_ENV_AUTO, "tuning/env.h's auto is shim.h's");

xchg_config_t xchg_config;
int xchg_world_rank;

void xchg_warn(const char *fmt, ...)
{
    va_list ap;
    if (xchg_world_rank != 0)
        return;
    va_start(ap, fmt);
    fputs("xchg: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
}

/* The variables' values, parsed in the pure core (tuning/env.c); a bad one is reported. */
static int read_flag(const char *name)
{
    char err[512];
    int on;
    if (xchg_env_flag(name, getenv(name), &on, err, sizeof err) != 0)
        xchg_warn("%s", err);
    return on;
}

static int read_wait(void)
{
    char err[512];
    int wait;
    if (xchg_env_wait(getenv("XCHG_WAIT"), &wait, err, sizeof err) != 0)
        xchg_warn("%s", err);
    return wait;
}

/* XCHG_SHM_BYTES: a byte size ("1M", "65536"); 0 turns the shm algorithms off. */
static size_t read_shm_bytes(void)
{
    char err[512];
    size_t bytes;
    if (xchg_env_shm_bytes(getenv("XCHG_SHM_BYTES"), &bytes, err, sizeof err) != 0)
        xchg_warn("%s", err);
    return bytes;
}

/* Does the MPI library's blocking wait yield the core? Open MPI's does with its MCA parameter
 * mpi_yield_when_idle, which reaches the ranks as OMPI_MCA_mpi_yield_when_idle (mpirun sets it
 * itself on an oversubscribed node). MPICH's does not. */
static int mpi_yields(void)
{
#ifdef OPEN_MPI
    return xchg_env_mpi_yields(getenv("OMPI_MCA_mpi_yield_when_idle"));
#else
    return 0;
#endif
}

/* XCHG_NODES: positive rank counts separated by commas, adding up to the job's size. */
static void read_nodes(void)
{
    char err[512];
    int world = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &world);
    if (xchg_env_nodes(getenv("XCHG_NODES"), world, &xchg_config.nodes, &xchg_config.nnodes, err,
                       sizeof err) != 0)
        xchg_warn("%s", err);
}

/* XCHG_TORUS: RxC or P (a ring), positive dimensions. */
static void read_torus(void)
{
    char err[512];
    if (xchg_env_torus(getenv("XCHG_TORUS"), xchg_config.torus_dims, err, sizeof err) != 0)
        xchg_warn("%s", err);
}

/* XCHG_LEARN: unset, empty or 1 = on; 0 = off; anything else names the file to write. */
static void read_learn(void)
{
    char err[512];
    if (xchg_env_learn(getenv("XCHG_LEARN"), &xchg_config.learn, xchg_config.learn_path,
                       sizeof xchg_config.learn_path, err, sizeof err) != 0)
        xchg_warn("%s", err);
}

static int set_forced(int coll, const char *spec, char *err, size_t errlen)
{
    int algo;
    xchg_params_t params;
    if (xchg_env_spec(coll, spec, &algo, &params, err, errlen) != 0)
        return -1;
    xchg_config.forced[coll] = algo;
    xchg_config.forced_params[coll] = params;
    return 0;
}

int xchg_force(int coll, const char *spec)
{
    char err[512];
    if (coll < 0 || coll >= XCHG_NCOLLS)
        return -1;
    if (set_forced(coll, spec, err, sizeof err) != 0) {
        xchg_warn("xchg_force(%s, %.*s%s): %s", xchg_coll_name(coll), XCHG_QUOTE(spec), err);
        return -1;
    }
    xchg_select_forget();
    return 0;
}

/* A problem of the tuning table: "FILE:LINE: why" for a line, "XCHG_TUNING=FILE: why" for the
 * file as a whole (line 0: unreadable, not a regular file, too large, no version line). */
static void report_table_line(void *arg, int line, const char *message)
{
    if (line == 0)
        xchg_warn("XCHG_TUNING=%s: %s", (const char *)arg, message);
    else
        xchg_warn("%s:%d: %s", (const char *)arg, line, message);
}

/* XCHG_TUNING: the table, or none (every problem reported by xchg_table_read or the parser).
 * shared (the world is initialized and every rank loads its configuration now, at MPI_Init):
 * world rank 0 reads the file it names and every rank parses its text, so that every rank
 * decides from the same table whatever its own file system or environment shows, or a file
 * that changes meanwhile (one broadcast of the length when there is none); else every rank
 * reads the file itself. */
static void load_table(int shared)
{
    static char path[4096];
    char err[512], *text = NULL;
    int status = -1;

    xchg_config.machine = xchg_machine_default;
    if (xchg_env_tuning(getenv("XCHG_TUNING"), path, sizeof path, err, sizeof err) != 0)
        xchg_warn("%s", err);
    if (path[0] && (!shared || xchg_world_rank == 0))
        text = xchg_table_read(path, &status, report_table_line, path);
    if (shared) { /* on every rank, XCHG_TUNING set or not: rank 0's decides */
        int failed;
        text = xchg_share_text(text, &failed);
        if (failed)
            xchg_warn("XCHG_TUNING=%s: the table could not be passed to every rank; not used",
                      path);
    }
    if (!text && !path[0])
        return;
    if (text)
        xchg_table_parse(text, &xchg_config.table, report_table_line, path);
    free(text);
    if (xchg_config.table.has_machine)
        xchg_config.machine = xchg_config.table.machine;
    xchg_config.machine.native = &xchg_config.table.native; /* native's measured curves */
}

/* The configuration's generation, bumped by xchg_select_forget whenever the configuration
 * changes (xchg_force, a table loaded or dropped): cached decisions of an older generation are
 * void. */
static unsigned config_generation = 1;

unsigned xchg_select_generation(void)
{
    return __atomic_load_n(&config_generation, __ATOMIC_RELAXED);
}

void xchg_select_forget(void)
{
    __atomic_add_fetch(&config_generation, 1, __ATOMIC_RELAXED);
}

/* The configuration from the environment; shared: load_table's. */
static void config_load(int shared)
{
    char err[512];
    int initialized = 0;

    if (xchg_config.loaded)
        return;
    xchg_config.loaded = 1;
    PMPI_Initialized(&initialized);
    if (initialized)
        PMPI_Comm_rank(MPI_COMM_WORLD, &xchg_world_rank);
    xchg_config.disable = read_flag("XCHG_DISABLE");
    if (xchg_config.disable)
        return;
    xchg_config.wait = read_wait();
    xchg_config.mpi_yields = mpi_yields();
    xchg_config.stats = read_flag("XCHG_STATS");
    xchg_config.verbose = read_flag("XCHG_VERBOSE");
    xchg_config.strict = read_flag("XCHG_STRICT");
    xchg_config.test_skew = read_flag("XCHG_TEST_SKEW_TIMES");
    xchg_config.test_drift = read_flag("XCHG_TEST_DRIFT");
    xchg_config.test_probe_all = read_flag("XCHG_TEST_PROBE_ALL");
    xchg_config.test_descheduled = read_flag("XCHG_TEST_DESCHEDULED");
    xchg_config.test_no_node_key = read_flag("XCHG_TEST_NO_NODE_KEY");
    xchg_config.shm_bytes = read_shm_bytes();
    if (initialized)
        read_nodes();
    read_torus();
    read_learn();
    for (int coll = 0; coll < XCHG_NCOLLS; coll++)
        if (xchg_env_collective(coll, getenv(xchg_env_coll_var(coll)), &xchg_config.forced[coll],
                                &xchg_config.forced_params[coll], err, sizeof err) != 0)
            xchg_warn("%s", err);
    load_table(shared && initialized);
}

void xchg_config_load(void)
{
    config_load(0);
}

void xchg_config_load_at_init(void)
{
    config_load(1);
}

/* The tools' API (shim/api.h). */
int xchg_api_disabled(void)
{
    return xchg_config.disable;
}

int xchg_api_wait(void)
{
    return xchg_config.wait;
}

const xchg_machine_t *xchg_api_machine(void)
{
    return &xchg_config.machine;
}

void xchg_api_set_machine(const xchg_machine_t *machine)
{
    xchg_config.machine = *machine;
    xchg_select_forget();
}

int xchg_api_table_rules(void)
{
    return xchg_config.table.nrules;
}

/* A problem of a table a tool loads: "FILE: why" or "FILE:LINE: why". */
static void report_loaded_line(void *arg, int line, const char *message)
{
    if (line == 0)
        xchg_warn("%s: %s", (const char *)arg, message);
    else
        xchg_warn("%s:%d: %s", (const char *)arg, line, message);
}

int xchg_api_load_table(const char *path)
{
    static char loaded[4096];
    int rc;
    if (strlen(path) >= sizeof loaded) {
        xchg_warn("%.*s%s: the path is longer than %zu characters; table not loaded",
                  XCHG_QUOTE(path), sizeof loaded - 1);
        return -1;
    }
    snprintf(loaded, sizeof loaded, "%s", path);
    xchg_table_free(&xchg_config.table);
    rc = xchg_table_load(loaded, &xchg_config.table, report_loaded_line, loaded);
    xchg_config.machine =
        xchg_config.table.has_machine ? xchg_config.table.machine : xchg_machine_default;
    xchg_config.machine.native = &xchg_config.table.native;
    xchg_select_forget();
    return rc;
}

void xchg_api_drop_table(void)
{
    xchg_table_free(&xchg_config.table);
    xchg_table_free(&xchg_config.cache);
    xchg_config.machine.native = NULL;
    xchg_select_forget();
}

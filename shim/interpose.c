/*
 * interpose.c: the MPI entry points xchg replaces, and nothing else of substance.
 *
 * MPI_Alltoall, MPI_Allgather, MPI_Alltoallv and (MPI-4) their large-count forms
 * MPI_Alltoall_c, MPI_Allgather_c, MPI_Alltoallv_c are normalised (shim/normalize.c) and served
 * by an algorithm, or handed to the PMPI function unchanged. MPICH's Fortran bindings call
 * these C symbols, so Fortran programs are intercepted too (Open MPI: shim/fortran.c).
 * MPI_Init, MPI_Init_thread and MPI_Finalize read the configuration once and report statistics.
 *
 * A call that repeats the communicator's last one takes a fast path (xchg_fast_block,
 * xchg_fast_native_v): a few comparisons; served natively, then the PMPI function (timed, on the
 * calls that learning watches), else MPI_Alltoall's and MPI_Allgather's go on from what the fast
 * path found (xchg_hit_t).
 *
 * Errors from the library's own work go through the user's communicator's error handler, once,
 * like a native error; invalid arguments never reach the library (the PMPI call reports them),
 * except those the MPI library reports on one rank only (sizes that differ, aliased buffers:
 * shim/normalize.c), which that rank reports after taking part in the call.
 */
#include <stdio.h>
#include <stdlib.h>

#include "normalize.h"

/* What served this thread's last call of each collective, for the tools (xchg_last_choice): per
 * thread, so that threads calling collectives at once (MPI_THREAD_MULTIPLE) never share it. */
static __thread xchg_choice_t last_choice[XCHG_NCOLLS] = {
    {-1, {0}, 0.0}, {-1, {0}, 0.0}, {-1, {0}, 0.0}};
static xchg_choice_t native_choice[XCHG_NCOLLS]; /* native of each collective */

/* The machine the models price with, when XCHG_TUNING gives none: the cache's, else measured
 * now (collective over MPI_COMM_WORLD). */
static void machine_setup(void)
{
    const int *node_of = NULL;
    int size = 0, nnodes = 0, *sizes;
    double native_s = 0.0;

    if (xchg_world_layout(&node_of, &size) != 0)
        return;
    sizes = calloc((size_t)size, sizeof *sizes);
    if (!sizes)
        return;
    for (int i = 0; i < size; i++) {
        sizes[node_of[i]]++;
        nnodes = node_of[i] + 1 > nnodes ? node_of[i] + 1 : nnodes;
    }
    if (xchg_cache_load(sizes, nnodes) && !xchg_config.table.has_machine) {
        xchg_config.machine = xchg_config.cache.machine;
        xchg_config.machine_cached = 1;
    } else if (!xchg_config.table.has_machine) { /* learning on or off: the models price */
        xchg_config.machine_measured = xchg_calibrate(node_of, size, &xchg_config.machine);
    }
    if (!xchg_config.table.has_machine && xchg_config.table.native.ncurves == 0)
        xchg_config.machine.native = &xchg_config.cache.native;
#ifdef OPEN_MPI /* the library is built against one MPI's mpi.h (config.c's mpi_yields too) */
    xchg_config.machine.native_rules = XCHG_NATIVE_OPENMPI;
#endif
    if (nnodes == 1 && size > 1)
        native_s = xchg_calibrate_native(size, &xchg_config.machine);
    free(sizes);
    if (xchg_config.verbose && xchg_world_rank == 0) {
        const xchg_machine_t *m = &xchg_config.machine;
        fprintf(stderr,
                "xchg: cache %s: %d rules%s; machine beta=%.3gs tau=%.3gs/B "
                "tau_large=%.3gs/B past %.0f B beta_inter=%.3gs tau_inter=%.3gs/B gap_inter=%.3gs "
                "inject=%d rho=%.3gs/B rho_cached=%.3gs/B up to %.0f B (%s)\n",
                xchg_config.cache_path[0] ? xchg_config.cache_path : "off",
                xchg_config.cache.nrules,
                xchg_config.cache.has_machine ? " and a machine line" : "",
                m->beta, m->tau, m->tau_large, m->large_from, m->beta_inter, m->tau_inter,
                m->gap_inter, m->inject, m->rho, m->rho_cached, m->cached_bytes,
                xchg_config.table.has_machine ? "XCHG_TUNING"
                : xchg_config.cache.has_machine ? "cached"
                : xchg_config.machine_measured == XCHG_MEASURED_STARTUP ? "measured now"
                : xchg_config.machine_measured == XCHG_MEASURED_COPY
                    ? "copy rate measured now, start-ups built in"
                                                    : "built in");
        if (m->native_small_ranks > 0)
            fprintf(stderr,
                    "xchg: native calls of 1 B blocks on %d ranks measured now: alltoall %.3gs "
                    "allgather %.3gs alltoallv %.3gs; of 4 KiB: %.3gs %.3gs %.3gs (%.2g ms at "
                    "MPI_Init)\n",
                    m->native_small_ranks, m->native_small[XCHG_ALLTOALL],
                    m->native_small[XCHG_ALLGATHER], m->native_small[XCHG_ALLTOALLV],
                    m->native_mid[XCHG_ALLTOALL], m->native_mid[XCHG_ALLGATHER],
                    m->native_mid[XCHG_ALLTOALLV], native_s * 1e3);
        fflush(stderr);
    }
}

/* Processes may ask for different thread levels (MPI_Init_thread): one given
 * MPI_THREAD_MULTIPLE makes every process keep a learning domain per communicator, as the ranks
 * of a communicator must take the same steps (collective over MPI_COMM_WORLD). */
static void agree_thread_level(void)
{
    int multiple = xchg_config.thread_multiple, any = multiple;
    if (xchg_own_allreduce(&multiple, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS)
        xchg_config.thread_multiple = any;
}

static void setup(void)
{
    for (int coll = 0; coll < XCHG_NCOLLS; coll++)
        native_choice[coll].algo = xchg_native_index(coll);
    xchg_config_load_at_init();
    if (xchg_config.disable)
        return;
    agree_thread_level();
    xchg_algo_bind(); /* reports a registry entry without an implementation */
    if (xchg_config.verbose)
        xchg_version_say();
    xchg_ctx_world_init();
    machine_setup();
    xchg_warm_first_call();
    if (xchg_config.learn)
        xchg_lp_warm();
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        setup();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) {
        /* contexts share learning only when no two threads can call collectives at once */
        xchg_config.thread_multiple = *provided == MPI_THREAD_MULTIPLE;
        setup();
    }
    return rc;
}

int MPI_Finalize(void)
{
    if (xchg_config.loaded && !xchg_config.disable) {
        if ((xchg_config.verbose || xchg_config.stats) && xchg_world_rank == 0) {
            int made, adopted, held, channels_made, boarded;
            xchg_shm_counts(&made, &adopted);
            held = xchg_channel_count(&channels_made, &boarded);
            fprintf(stderr,
                    "xchg: at MPI_Finalize this process holds %d private channels (one "
                    "context id of the MPI library each) of %d it made; it made %d "
                    "shared segments and took %d kept from freed communicators; %d "
                    "communicators attached through the world's board\n",
                    held, channels_made, made, adopted, boarded);
            fflush(stderr);
        }
        xchg_stats_report();
        xchg_learn_write();
        xchg_cache_store();
        xchg_channel_finalize();
        xchg_ctx_finalize();
        xchg_type_finalize();
    }
    return PMPI_Finalize();
}

int xchg_last_choice(int coll, char *out, size_t outlen)
{
    char text[128];
    int algo = coll >= 0 && coll < XCHG_NCOLLS ? last_choice[coll].algo : -1;
    if (algo < 0)
        return -1;
    xchg_params_format(&xchg_algos[algo], &last_choice[coll].params, text, sizeof text);
    snprintf(out, outlen, "%s%s%s", xchg_algos[algo].name, text[0] ? ":" : "", text);
    return 0;
}

/* Calls are timed here only for XCHG_STATS; a learning trial's call is timed from its choice
 * on (xchg_outcome_t.start). */
static double start_time(void)
{
    return xchg_config.stats ? PMPI_Wtime() : -1.0;
}

/* Account a call, report its time to learning, and report an error through the
 * communicator's error handler. Every rank reports a learning call, a failed one too, so that
 * all ranks' trials stay in step (learning agrees on the times collectively); an error the call
 * deferred (its own erroneous arguments, xchg_outcome_t.deferred) comes after a call that ran. */
static int finish(int rc, int coll, const xchg_outcome_t *out, double start, MPI_Comm comm)
{
    if (out->algo >= 0) {
        double now = xchg_config.stats || out->trial >= 0 ? PMPI_Wtime() : 0.0;
        last_choice[coll].algo = out->algo;
        last_choice[coll].params = out->params;
        if (xchg_config.stats)
            xchg_stats_add(coll, out->algo, &out->params, out->key, now - start);
        if (out->trial >= 0) { /* every rank, whatever the call returned: agreed in step */
            int learned = xchg_learn_record(out->ctx, out->trial, out->start, xchg_learn_clock());
            rc = rc == MPI_SUCCESS ? learned : rc;
        }
    }
    if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL)
        rc = out->deferred;
    if (rc != MPI_SUCCESS && comm != MPI_COMM_NULL) /* NULL: the MPI library reported it */
        PMPI_Comm_call_errhandler(comm, rc);
    return rc;
}

/* One intercepted call as its entry point received it: counts as MPI_Count (an int entry
 * point's values fit), alltoallv's arrays as given (xchg_counts_t), large: the _c form. */
typedef struct call_args {
    int coll, large;
    const void *sendbuf;
    void *recvbuf;
    MPI_Count sendcount, recvcount;
    xchg_counts_t sendcounts, sdispls, recvcounts, rdispls;
    MPI_Datatype sendtype, recvtype;
    MPI_Comm comm;
    xchg_hit_t hit; /* MPI_Alltoall's and MPI_Allgather's fast path's find (xchg_fast_block) */
} call_args_t;

/* The MPI library's own collective for the call, with the entry point's own argument types. */
static int pass_to_mpi(const call_args_t *a)
{
#if MPI_VERSION >= 4
    if (a->large && a->coll == XCHG_ALLTOALL)
        return PMPI_Alltoall_c(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                               a->recvtype, a->comm);
    if (a->large && a->coll == XCHG_ALLGATHER)
        return PMPI_Allgather_c(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                                a->recvtype, a->comm);
    if (a->large)
        return PMPI_Alltoallv_c(a->sendbuf, a->sendcounts.c, a->sdispls.a, a->sendtype,
                                a->recvbuf, a->recvcounts.c, a->rdispls.a, a->recvtype, a->comm);
#endif
    if (a->coll == XCHG_ALLTOALL)
        return PMPI_Alltoall(a->sendbuf, (int)a->sendcount, a->sendtype, a->recvbuf,
                             (int)a->recvcount, a->recvtype, a->comm);
    if (a->coll == XCHG_ALLGATHER)
        return PMPI_Allgather(a->sendbuf, (int)a->sendcount, a->sendtype, a->recvbuf,
                              (int)a->recvcount, a->recvtype, a->comm);
    return PMPI_Alltoallv(a->sendbuf, a->sendcounts.i, a->sdispls.i, a->sendtype, a->recvbuf,
                          a->recvcounts.i, a->rdispls.i, a->recvtype, a->comm);
}

/* A fast-path call (native, memorised) that learning watches: the MPI library's collective,
 * timed and reported to learning slot `watch` (shim/learn.c; may agree, collectively). */
static int watched_native(const call_args_t *a, int watch)
{
    xchg_outcome_t out = {.algo = native_choice[a->coll].algo, .trial = watch, .learned = -1};
    out.ctx = xchg_ctx_cached(a->comm);
    out.start = xchg_learn_start(out.ctx, watch);
    return finish(pass_to_mpi(a), a->coll, &out, out.start, MPI_COMM_NULL);
}

/* Every entry point: normalise and run an algorithm, or hand the call to the MPI library. */
static int serve(const call_args_t *a)
{
    xchg_outcome_t out = {.algo = -1, .trial = -1, .learned = -1, .hit = a->hit};
    double start = start_time();
    int rc;

    if (a->coll == XCHG_ALLTOALLV)
        rc = xchg_do_alltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
                               a->recvcounts, a->rdispls, a->recvtype, a->comm, &out);
    else if (a->coll == XCHG_ALLTOALL)
        rc = xchg_do_alltoall(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                              a->recvtype, a->comm, &out);
    else
        rc = xchg_do_allgather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                               a->recvtype, a->comm, &out);
    if (rc == XCHG_PASS) {
        /* the MPI library reports its own errors through the handler */
        rc = pass_to_mpi(a);
        rc = out.algo >= 0 ? finish(rc, a->coll, &out, start, MPI_COMM_NULL) : rc;
    } else {
        rc = finish(rc, a->coll, &out, start, a->comm);
    }
    if (out.ctx)
        xchg_scratch_release(out.ctx, out.mark);
    return rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    xchg_hit_t hit;
    int native = xchg_fast_block(XCHG_ALLTOALL, sendbuf, sendcount, sendtype, recvcount, recvtype,
                                 comm, &hit);
    if (native && hit.watch < 0) {
        last_choice[XCHG_ALLTOALL] = native_choice[XCHG_ALLTOALL];
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    call_args_t a = {.coll = XCHG_ALLTOALL, .sendbuf = sendbuf, .recvbuf = recvbuf,
                     .sendcount = sendcount, .recvcount = recvcount, .sendtype = sendtype,
                     .recvtype = recvtype, .comm = comm};
    a.hit = hit;
    return native ? watched_native(&a, hit.watch) : serve(&a);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    xchg_hit_t hit;
    int native = xchg_fast_block(XCHG_ALLGATHER, sendbuf, sendcount, sendtype, recvcount, recvtype,
                                 comm, &hit);
    if (native && hit.watch < 0) {
        last_choice[XCHG_ALLGATHER] = native_choice[XCHG_ALLGATHER];
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    call_args_t a = {.coll = XCHG_ALLGATHER, .sendbuf = sendbuf, .recvbuf = recvbuf,
                     .sendcount = sendcount, .recvcount = recvcount, .sendtype = sendtype,
                     .recvtype = recvtype, .comm = comm};
    a.hit = hit;
    return native ? watched_native(&a, hit.watch) : serve(&a);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    int watch = -1;
    if (xchg_fast_native_v(comm, &watch) && watch < 0) {
        last_choice[XCHG_ALLTOALLV] = native_choice[XCHG_ALLTOALLV];
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    }
    call_args_t a = {.coll = XCHG_ALLTOALLV, .sendbuf = sendbuf, .recvbuf = recvbuf,
                     .sendcounts = {.i = sendcounts}, .sdispls = {.i = sdispls},
                     .recvcounts = {.i = recvcounts}, .rdispls = {.i = rdispls},
                     .sendtype = sendtype, .recvtype = recvtype, .comm = comm};
    return watch >= 0 ? watched_native(&a, watch) : serve(&a);
}

#if MPI_VERSION >= 4
int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                   void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    call_args_t a = {.coll = XCHG_ALLTOALL, .large = 1, .sendbuf = sendbuf, .recvbuf = recvbuf,
                     .sendcount = sendcount, .recvcount = recvcount, .sendtype = sendtype,
                     .recvtype = recvtype, .comm = comm};
    return serve(&a);
}

int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    call_args_t a = {.coll = XCHG_ALLGATHER, .large = 1, .sendbuf = sendbuf, .recvbuf = recvbuf,
                     .sendcount = sendcount, .recvcount = recvcount, .sendtype = sendtype,
                     .recvtype = recvtype, .comm = comm};
    return serve(&a);
}

int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    call_args_t a = {.coll = XCHG_ALLTOALLV, .large = 1, .sendbuf = sendbuf, .recvbuf = recvbuf,
                     .sendcounts = {.c = sendcounts}, .sdispls = {.a = sdispls},
                     .recvcounts = {.c = recvcounts}, .rdispls = {.a = rdispls},
                     .sendtype = sendtype, .recvtype = recvtype, .comm = comm};
    return serve(&a);
}
#endif

/*
 * threads_check: MPI_Alltoall, MPI_Allgather and MPI_Alltoallv from several threads, every
 * byte checked, under each thread level a program may ask for.
 *
 *   threads_check [--level multiple|serialized|funneled] [--iterations N] [--threads T]
 *                 (defaults: multiple, 1000, 4)
 *
 * multiple    MPI_THREAD_MULTIPLE: T threads at once, each on a communicator of its own (even
 *             threads a dup of MPI_COMM_WORLD, odd ones a split of it into even and odd ranks,
 *             reversed), each making the three collectives N times; every 100 iterations a
 *             thread also dups its communicator, makes one round of the three on the dup and
 *             frees it (communicators, and the library's contexts for them, made in several
 *             threads at once);
 * serialized  MPI_THREAD_SERIALIZED: T threads take turns (a turn counter under a mutex, the
 *             same order on every rank), all on one shared dup of MPI_COMM_WORLD; each fills
 *             its buffers before its turn and checks them after;
 * funneled    MPI_THREAD_FUNNELED: only the main thread calls MPI, on T communicators (dups and
 *             splits as above); T helper threads fill the buffers before each round of calls
 *             and check them after (pthread barriers between the phases).
 * Every call's shape follows from the iteration, the thread and the collective (the same on
 * every rank): counts 1 to 50 elements a block, 3000 in one iteration of ten; MPI_INT or an int
 * followed by a 4-byte hole (a resized type: packed by the library) in one of three; MPI_IN_PLACE
 * in one of five; alltoallv counts (i + 2j + iteration) mod 4 times count/2 (symmetric in place).
 * Checked after every call: every byte of the receive buffer (elements against the formula of
 * check.h, salted per call; holes, gaps and a 64-byte guard still the sentinel), the send
 * buffer unchanged, the return code. A watchdog ends the job after WATCHDOG_S seconds (a
 * deadlock). Where the MPI library does not provide the level asked for, prints
 * "threads_check: SKIP: ..." and counts a skipped check.
 * Prints failures and "threads_check: N checks, M failed[, K skipped]".
 */
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define MAX_THREADS 16
#define LARGE 3000
#define GUARD_BYTES 64
#define WATCHDOG_S 150

enum { COLL_ALLTOALL, COLL_ALLGATHER, COLL_ALLTOALLV, NCOLLS };
static const char *const coll_names[NCOLLS] = {"alltoall", "allgather", "alltoallv"};

/* One thread's slot: its communicator, buffers and counters. */
typedef struct slot {
    int index;
    MPI_Comm comm;
    int p, me;
    char *send, *recv, *expect, *send_copy;
    size_t send_bytes, recv_bytes; /* of the current call */
    int *counts;                   /* sendcounts, sdispls, recvcounts, rdispls: 4 p */
    int count, holed, in_place, coll, iteration;
    long long nchecks;
} slot_t;

static int world_rank, world_size, nthreads = 4, iterations = 1000;
static MPI_Datatype holed_int; /* an int and a 4-byte hole: extent 8 */
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t phase;
static slot_t slots[MAX_THREADS];

static void slot_fail(const slot_t *s, const char *what)
{
    pthread_mutex_lock(&fail_lock);
    check_fail("thread %d iteration %d %s count %d%s%s (comm of %d): %s", s->index, s->iteration,
               coll_names[s->coll], s->count, s->holed ? " holed" : "",
               s->in_place ? " in place" : "", s->p, what);
    pthread_mutex_unlock(&fail_lock);
}

static void watchdog(int sig)
{
    static const char line[] = "threads_check: no progress for a long time: deadlock\n";
    (void)sig;
    if (write(STDERR_FILENO, line, sizeof line - 1) < 0)
        _exit(4);
    _exit(4);
}

/* ---- one call: shape, buffers, the call, the check ---- */

static uint32_t salt_of(const slot_t *s)
{
    return (uint32_t)(s->iteration * 64 + s->index * 4 + s->coll);
}

static int v_count(const slot_t *s, int i, int j)
{
    int a = s->in_place ? i + j : i + 2 * j;
    return ((a + s->iteration) % 4) * s->count / 2;
}

/* Element counts and displacements (elements; alltoallv blocks with a one-element gap). */
static void shape(slot_t *s, int coll, int iteration)
{
    int *sc = s->counts, *sd = sc + s->p, *rc = sd + s->p, *rd = rc + s->p, at_s = 0, at_r = 0;
    s->coll = coll;
    s->iteration = iteration;
    s->count = iteration % 10 == 3 ? LARGE : 1 + (iteration * 7 + s->index * 3 + coll) % 50;
    s->holed = iteration % 3 == 1;
    s->in_place = iteration % 5 == 2;
    for (int j = 0; j < s->p; j++) {
        if (coll == COLL_ALLTOALLV) {
            sc[j] = v_count(s, s->me, j);
            rc[j] = v_count(s, j, s->me);
        } else {
            sc[j] = coll == COLL_ALLGATHER && j > 0 ? 0 : s->count;
            rc[j] = s->count;
        }
        sd[j] = at_s;
        rd[j] = at_r;
        at_s += sc[j] + (coll == COLL_ALLTOALLV);
        at_r += rc[j] + (coll == COLL_ALLTOALLV);
    }
    s->send_bytes = (size_t)at_s * 8 + GUARD_BYTES;
    s->recv_bytes = (size_t)at_r * 8 + GUARD_BYTES;
}

static size_t extent(const slot_t *s)
{
    return s->holed ? 8 : sizeof(int);
}

static void put(char *at, int value)
{
    memcpy(at, &value, sizeof value);
}

/* Sentinels, the send data (in place: in the receive buffer), the receive buffer's image. */
static void fill(slot_t *s)
{
    int *sc = s->counts, *sd = sc + s->p, *rc = sd + s->p, *rd = rc + s->p;
    int allgather = s->coll == COLL_ALLGATHER;
    uint32_t salt = salt_of(s);
    memset(s->send, CHECK_SENTINEL, s->send_bytes);
    memset(s->recv, CHECK_SENTINEL, s->recv_bytes);
    memset(s->expect, CHECK_SENTINEL, s->recv_bytes);
    for (int j = 0; j < s->p; j++) {
        for (int i = 0; i < rc[j]; i++)
            put(s->expect + ((size_t)rd[j] + (size_t)i) * extent(s),
                (int)check_value(j, allgather ? -1 : s->me, (uint64_t)i, salt));
        if (s->in_place && (!allgather || j == s->me))
            for (int i = 0; i < rc[j]; i++)
                put(s->recv + ((size_t)rd[j] + (size_t)i) * extent(s),
                    (int)check_value(s->me, allgather ? -1 : j, (uint64_t)i, salt));
        if (!s->in_place)
            for (int i = 0; i < sc[j]; i++)
                put(s->send + ((size_t)sd[j] + (size_t)i) * extent(s),
                    (int)check_value(s->me, allgather ? -1 : j, (uint64_t)i, salt));
    }
    memcpy(s->send_copy, s->send, s->send_bytes);
}

static int call(slot_t *s)
{
    int *sc = s->counts, *sd = sc + s->p, *rc = sd + s->p, *rd = rc + s->p;
    MPI_Datatype t = s->holed ? holed_int : MPI_INT;
    const void *sb = s->in_place ? MPI_IN_PLACE : s->send;
    if (s->coll == COLL_ALLTOALL)
        return MPI_Alltoall(sb, s->count, t, s->recv, s->count, t, s->comm);
    if (s->coll == COLL_ALLGATHER)
        return MPI_Allgather(sb, s->count, t, s->recv, s->count, t, s->comm);
    return MPI_Alltoallv(sb, sc, sd, t, s->recv, rc, rd, t, s->comm);
}

static void verify(slot_t *s, int rc)
{
    s->nchecks += 3;
    if (rc != MPI_SUCCESS) {
        slot_fail(s, "the call returned an error");
        return;
    }
    if (memcmp(s->recv, s->expect, s->recv_bytes) != 0) {
        size_t b = 0;
        char what[96];
        while (s->recv[b] == s->expect[b])
            b++;
        snprintf(what, sizeof what, "receive buffer byte %zu of %zu differs", b, s->recv_bytes);
        slot_fail(s, what);
    }
    if (!s->in_place && memcmp(s->send, s->send_copy, s->send_bytes) != 0)
        slot_fail(s, "the send buffer changed");
    s->nchecks += (long long)s->recv_bytes;
}

/* ---- slots ---- */

static void slot_open(slot_t *s, int index, MPI_Comm comm)
{
    size_t bytes = ((size_t)world_size * (LARGE * 2 + 2)) * 8 + GUARD_BYTES;
    s->index = index;
    s->comm = comm;
    MPI_Comm_size(comm, &s->p);
    MPI_Comm_rank(comm, &s->me);
    s->send = malloc(bytes);
    s->recv = malloc(bytes);
    s->expect = malloc(bytes);
    s->send_copy = malloc(bytes);
    s->counts = malloc(4 * (size_t)world_size * sizeof(int));
}

static void slot_close(slot_t *s, int free_comm)
{
    if (free_comm)
        MPI_Comm_free(&s->comm);
    free(s->send);
    free(s->recv);
    free(s->expect);
    free(s->send_copy);
    free(s->counts);
}

/* Thread t's own communicator: a dup of MPI_COMM_WORLD, or a split of it (odd t). */
static MPI_Comm own_comm(int t)
{
    MPI_Comm comm;
    if (t % 2 == 0)
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    else
        MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank, &comm);
    return comm;
}

/* ---- the three levels ---- */

static void *multiple_thread(void *arg)
{
    slot_t *s = arg;
    for (int it = 0; it < iterations; it++) {
        for (int coll = 0; coll < NCOLLS; coll++) {
            shape(s, coll, it);
            fill(s);
            verify(s, call(s));
        }
        if (it % 100 == 50) { /* a dup of this thread's communicator, used once, freed */
            slot_t dup = *s;
            MPI_Comm_dup(s->comm, &dup.comm);
            for (int coll = 0; coll < NCOLLS; coll++) {
                shape(&dup, coll, it);
                fill(&dup);
                verify(&dup, call(&dup));
            }
            s->nchecks = dup.nchecks;
            MPI_Comm_free(&dup.comm);
        }
    }
    return NULL;
}

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;

static void *serialized_thread(void *arg)
{
    slot_t *s = arg;
    for (int it = 0; it < iterations; it++)
        for (int coll = 0; coll < NCOLLS; coll++) {
            int rc;
            shape(s, coll, it);
            fill(s);
            pthread_mutex_lock(&turn_lock);
            while (turn != s->index)
                pthread_cond_wait(&turn_changed, &turn_lock);
            rc = call(s);
            turn = (turn + 1) % nthreads;
            pthread_cond_broadcast(&turn_changed);
            pthread_mutex_unlock(&turn_lock);
            verify(s, rc);
        }
    return NULL;
}

/* funneled: helpers fill slot t, the main thread calls, helpers check. */
static int funneled_rc[MAX_THREADS];

static void *funneled_helper(void *arg)
{
    slot_t *s = arg;
    for (int it = 0; it < iterations; it++)
        for (int coll = 0; coll < NCOLLS; coll++) {
            shape(s, coll, it);
            fill(s);
            pthread_barrier_wait(&phase); /* filled */
            pthread_barrier_wait(&phase); /* called */
            verify(s, funneled_rc[s->index]);
        }
    return NULL;
}

static void funneled_main(void)
{
    for (int it = 0; it < iterations; it++)
        for (int coll = 0; coll < NCOLLS; coll++) {
            pthread_barrier_wait(&phase);
            for (int t = 0; t < nthreads; t++)
                funneled_rc[t] = call(&slots[t]);
            pthread_barrier_wait(&phase);
        }
}

static int level_of(const char *name)
{
    if (strcmp(name, "serialized") == 0)
        return MPI_THREAD_SERIALIZED;
    if (strcmp(name, "funneled") == 0)
        return MPI_THREAD_FUNNELED;
    return MPI_THREAD_MULTIPLE;
}

static const char *level_name(int level)
{
    return level == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
           : level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
           : level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                            : "MPI_THREAD_SINGLE";
}

/* The threads of a level on slots already open; the main thread's part for funneled. */
static void run_level(int level)
{
    pthread_t threads[MAX_THREADS];
    void *(*body)(void *) = level == MPI_THREAD_MULTIPLE     ? multiple_thread
                            : level == MPI_THREAD_SERIALIZED ? serialized_thread
                                                             : funneled_helper;
    if (level == MPI_THREAD_FUNNELED)
        pthread_barrier_init(&phase, NULL, (unsigned)nthreads + 1);
    for (int t = 0; t < nthreads; t++)
        pthread_create(&threads[t], NULL, body, &slots[t]);
    if (level == MPI_THREAD_FUNNELED)
        funneled_main();
    for (int t = 0; t < nthreads; t++) {
        pthread_join(threads[t], NULL);
        check_count(slots[t].nchecks);
    }
    if (level == MPI_THREAD_FUNNELED)
        pthread_barrier_destroy(&phase);
}

int main(int argc, char **argv)
{
    int required = MPI_THREAD_MULTIPLE, provided, status;
    MPI_Comm shared = MPI_COMM_NULL;

    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--level") == 0)
            required = level_of(argv[a + 1]);
        else if (strcmp(argv[a], "--iterations") == 0)
            iterations = atoi(argv[a + 1]);
        else if (strcmp(argv[a], "--threads") == 0)
            nthreads = atoi(argv[a + 1]);
    }
    if (nthreads < 1 || nthreads > MAX_THREADS || iterations < 1) {
        fprintf(stderr, "threads_check: --threads 1..%d, --iterations >= 1\n", MAX_THREADS);
        return 2;
    }
    MPI_Init_thread(&argc, &argv, required, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (provided < required) {
        if (world_rank == 0)
            printf("threads_check: SKIP: the MPI library provides %s, not %s\n",
                   level_name(provided), level_name(required));
        check_skip(1);
        status = check_finish("threads_check");
        MPI_Finalize();
        return status;
    }
    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_S);
    MPI_Type_create_resized(MPI_INT, 0, 8, &holed_int);
    MPI_Type_commit(&holed_int);
    if (required == MPI_THREAD_SERIALIZED)
        MPI_Comm_dup(MPI_COMM_WORLD, &shared);
    for (int t = 0; t < nthreads; t++)
        slot_open(&slots[t], t, shared != MPI_COMM_NULL ? shared : own_comm(t));
    if (world_rank == 0)
        printf("threads_check: %s, %d threads, %d iterations of the three collectives\n",
               level_name(required), nthreads, iterations);
    run_level(required);
    for (int t = 0; t < nthreads; t++)
        slot_close(&slots[t], shared == MPI_COMM_NULL);
    if (shared != MPI_COMM_NULL)
        MPI_Comm_free(&shared);
    MPI_Type_free(&holed_int);
    alarm(0);
    status = check_finish("threads_check");
    MPI_Finalize();
    return status;
}

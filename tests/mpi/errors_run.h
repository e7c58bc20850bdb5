/*
 * errors_run.h: running erroneous collective calls one after another and telling, per rank,
 * what each returned and when (header only, plain MPI: errors_length.c and errors_alias.c).
 *
 * An erroneous call may leave some ranks inside the MPI library for good (MPICH's
 * MPI_Allgather returns MPI_ERR_TRUNCATE on the rank whose send block is too long at once, and
 * the others wait for that block forever; Open MPI's argument checks do the same). So each
 * call is followed by a check that every rank came back:
 *   - before the call, an alarm in D seconds (--deadline, default 2): a rank still inside when
 *     it rings writes "PROG: case NAME rank R: no return within D s" and ends its process
 *     (_exit(0));
 *   - after the call, each rank writes "PROG: case NAME rank R role ROLE: class C (TEXT) after
 *     T s", then takes part in an MPI_Ibarrier on a communicator of its own and tests it until
 *     0.3 s after the deadline; when some rank did not come back, it writes "PROG: case NAME
 *     rank R: not every rank returned" and ends its process too;
 *   - when every rank came back, the program goes on: a valid call of the same collective on
 *     the same communicator, every byte checked (the communicator must still work), under the
 *     same deadline ("case NAME/follow-up rank R: no return ..."), then the next case.
 * A run of cases stops at the first case where some rank did not return; scripts/cases/
 * errors.sh starts the next launch with the case after it (--from NAME).
 *
 * ROLE says what the native result of the rank must be compared with (scripts/cases/errors.sh):
 *   signature  the rank's own arguments are erroneous (their send and receive sizes differ,
 *              or its buffers alias): the same class as natively;
 *   receiver   it receives a message longer than it asked for (MPI_Alltoallv): the same class;
 *   bystander  nothing wrong on this rank: MPI_SUCCESS, or the class the rank got natively.
 */
#ifndef XCHG_TESTS_ERRORS_RUN_H
#define XCHG_TESTS_ERRORS_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { ROLE_BYSTANDER, ROLE_SIGNATURE, ROLE_RECEIVER };
enum { COLL_ALLTOALL, COLL_ALLGATHER, COLL_ALLTOALLV };

#define GUARD 64 /* ints of sentinel (-1) after every receive buffer */
#define SALT_FOLLOW 12u
static const char *const errors_role_names[] = {"bystander", "signature", "receiver"};

static const char *errors_prog = "errors";
static const char *errors_case_name = "";
static double errors_deadline = 2.0; /* seconds a call may take before its rank gives up */
static MPI_Comm errors_done_comm = MPI_COMM_NULL;
static double errors_started;      /* when the current case's call began */
static int errors_world_rank = -1; /* for the alarm handler, which cannot ask MPI */
static int rank, nranks;           /* in MPI_COMM_WORLD */

/* One line in one write (async-signal-safe when called from the alarm handler). */
static void errors_write(const char *line)
{
    if (write(STDOUT_FILENO, line, strlen(line)) < 0)
        _exit(3);
}

static void errors_alarm(int sig)
{
    char line[256];
    (void)sig;
    snprintf(line, sizeof line, "%s: case %s rank %d: no return within %g s\n", errors_prog,
             errors_case_name, errors_world_rank, errors_deadline);
    errors_write(line);
    _exit(0);
}

/* MPI_ERRORS_RETURN on MPI_COMM_WORLD (the calls report their errors by return code), the
 * communicator of the barriers, the alarm. */
static void errors_setup(const char *prog, double deadline)
{
    struct sigaction action;
    errors_prog = prog;
    if (deadline > 0)
        errors_deadline = deadline;
    MPI_Comm_rank(MPI_COMM_WORLD, &errors_world_rank);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &errors_done_comm);
    memset(&action, 0, sizeof action);
    action.sa_handler = errors_alarm;
    sigaction(SIGALRM, &action, NULL);
}

/* The test data: formula values (check.h), non-negative. */
static int errors_value(int source, int destination, int index, unsigned salt)
{
    return (int)(check_value(source, destination, (uint64_t)index, salt) & 0x7fffffff);
}

static double errors_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* SIGALRM in `seconds` (0: none). */
static void errors_alarm_in(double seconds)
{
    struct itimerval timer;
    memset(&timer, 0, sizeof timer);
    timer.it_value.tv_sec = (time_t)seconds;
    timer.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    setitimer(ITIMER_REAL, &timer, NULL);
}

/* Before the erroneous call of case `name`. */
static void errors_begin(const char *name)
{
    errors_case_name = name;
    MPI_Barrier(errors_done_comm);
    errors_started = errors_now();
    errors_alarm_in(errors_deadline);
}

/* After it: this rank's line, then whether every rank came back (0: this process ends). */
static int errors_end(int rc, double seconds, int role)
{
    char line[512], text[MPI_MAX_ERROR_STRING];
    int cls = MPI_SUCCESS, len = 0, done = 0;
    MPI_Request request;
    double until;

    errors_alarm_in(0);
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    text[0] = '\0';
    if (cls != MPI_SUCCESS && MPI_Error_string(cls, text, &len) != MPI_SUCCESS)
        text[0] = '\0';
    snprintf(line, sizeof line, "%s: case %s rank %d role %s: class %d (%s) after %.3f s\n",
             errors_prog, errors_case_name, errors_world_rank, errors_role_names[role], cls,
             cls == MPI_SUCCESS ? "MPI_SUCCESS" : text, seconds);
    errors_write(line);
    /* after the alarms of the ranks still inside, so that their lines come first */
    until = errors_started + errors_deadline + 0.3;
    MPI_Ibarrier(errors_done_comm, &request);
    while (!done && errors_now() < until) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (!done)
            usleep(1000);
    }
    if (!done) {
        snprintf(line, sizeof line, "%s: case %s rank %d: not every rank returned\n", errors_prog,
                 errors_case_name, errors_world_rank);
        errors_write(line);
        _exit(0);
    }
    return 1;
}

/* A valid call of the collective: the communicator still works, every byte checked. */
static void errors_follow_up(int coll, const char *name)
{
    static char label[160];
    int n = 3, rc;
    int *send = malloc((size_t)nranks * (size_t)n * sizeof(int));
    int *recv = malloc(((size_t)nranks * (size_t)n + GUARD) * sizeof(int));
    int *counts = malloc(2 * (size_t)nranks * sizeof(int)), *displs = counts + nranks;
    for (int j = 0; j < nranks; j++) {
        counts[j] = n;
        displs[j] = j * n;
        for (int i = 0; i < n; i++)
            send[j * n + i] = errors_value(rank, coll == COLL_ALLGATHER ? -1 : j, i, SALT_FOLLOW);
    }
    for (int i = 0; i < nranks * n + GUARD; i++)
        recv[i] = -1;
    /* under the deadline too: "case NAME/follow-up rank R: no return within D s" */
    snprintf(label, sizeof label, "%s/follow-up", name);
    errors_case_name = label;
    errors_alarm_in(errors_deadline);
    if (coll == COLL_ALLTOALL)
        rc = MPI_Alltoall(send, n, MPI_INT, recv, n, MPI_INT, MPI_COMM_WORLD);
    else if (coll == COLL_ALLGATHER)
        rc = MPI_Allgather(send, n, MPI_INT, recv, n, MPI_INT, MPI_COMM_WORLD);
    else
        rc = MPI_Alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT,
                           MPI_COMM_WORLD);
    errors_alarm_in(0);
    check_count(1);
    if (rc != MPI_SUCCESS)
        check_fail("%s: the valid call after it returned error %d", name, rc);
    for (int j = 0; j < nranks && rc == MPI_SUCCESS; j++)
        for (int i = 0; i < n; i++) {
            int expected = errors_value(j, coll == COLL_ALLGATHER ? -1 : rank, i, SALT_FOLLOW);
            check_count(1);
            if (recv[j * n + i] != expected)
                check_fail("%s: the valid call after it: element %d from rank %d: expected %d "
                           "got %d",
                           name, i, j, expected, recv[j * n + i]);
        }
    for (int g = 0; g < GUARD; g++) {
        check_count(1);
        if (recv[nranks * n + g] != -1)
            check_fail("%s: the valid call after it wrote past its receive buffer", name);
    }
    free(send);
    free(recv);
    free(counts);
}

/* The command line of an errors program, over its `ncases` case names (names[k]):
 *   --list          print the names, one a line, and end (0 is returned; nothing else is set)
 *   --deadline S    the deadline of every call (errors_setup)
 *   --from NAME     start at that case
 *   NAME ...        run only these
 * Returns 1 when the program is to run its cases (after MPI_Init), 0 after --list. */
#define ERRORS_MAX_NAMED 64
typedef struct errors_options {
    double deadline;
    int first, nnamed;
    const char *named[ERRORS_MAX_NAMED];
} errors_options_t;

static int errors_options(int argc, char **argv, const char *const *names, int ncases,
                          errors_options_t *o)
{
    o->deadline = 0;
    o->first = 0;
    o->nnamed = 0;
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (int k = 0; k < ncases; k++)
            printf("%s\n", names[k]);
        return 0;
    }
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--deadline") == 0 && a + 1 < argc) {
            o->deadline = atof(argv[++a]);
        } else if (strcmp(argv[a], "--from") == 0 && a + 1 < argc) {
            const char *from = argv[++a];
            for (o->first = 0; o->first < ncases && strcmp(names[o->first], from) != 0; o->first++)
                ;
        } else if (o->nnamed < ERRORS_MAX_NAMED) {
            o->named[o->nnamed++] = argv[a];
        }
    }
    return 1;
}

/* Is case `name` to run (no names given: every case)? */
static int errors_chosen(const errors_options_t *o, const char *name)
{
    int chosen = o->nnamed == 0;
    for (int m = 0; m < o->nnamed; m++)
        chosen |= strcmp(o->named[m], name) == 0;
    return chosen;
}

#endif

/*
 * owncoll.c: the collectives xchg makes for itself outside a program's calls: at MPI_Init (the
 * world's layout, the calibration, the cache's table, the agreed thread level) and when a
 * communicator gets its private channel (its duplicate and the agreements on it).
 *
 * Each is the MPI library's nonblocking collective, waited for by the rank's setup wait:
 *  - spin (PMPI_Wait) under XCHG_WAIT=spin; by default also where the MPI library's own blocking
 *    wait yields the core (Open MPI with mpi_yield_when_idle) or where the world's node is known
 *    to have a processing unit for each of its ranks;
 *  - yield under XCHG_WAIT=yield, and by default elsewhere (on an oversubscribed node, and at
 *    MPI_Init before the layout is measured): PMPI_Test and sched_yield for YIELD_S, then
 *    PMPI_Test every NAP_NS.
 * A library whose blocking wait polls (MPICH) keeps every waiting rank on a core, so on an
 * oversubscribed node each collective waits for time slices: MPICH 4.0.2 at 8 ranks on 2
 * cores took 25 to 48 ms for a barrier, an allreduce or a duplicate, and 0.1 to 0.6 ms for the
 * same waited for with yields (docs/results.md, stop 74). Which wait a rank uses is its own
 * affair: the operations and their order are the same on every rank.
 */
#include <sched.h>
#include <time.h>

#include "shim.h"

/* yield for this long: the collective itself takes 0.1 to 0.6 ms */
#define YIELD_S 1e-3
/* then sleep this long between tests: a longer wait is a peer's work (the calibration's
 * ping-pong), which the waiting ranks' yields would slow */
#define NAP_NS 100000

/* Whether this rank's node runs more ranks than they have processing units: -1 until the world's
 * layout is measured (shim/context.c says it then). */
static int node_oversubscribed = -1;

void xchg_own_node_oversubscribed(int over)
{
    node_oversubscribed = over;
}

int xchg_own_mpi_waits_starve(void)
{
    return node_oversubscribed == 1 && !xchg_config.mpi_yields;
}

/* The rank's setup wait (the header): 1 to yield. */
static int setup_yields(void)
{
    if (xchg_config.wait != 0) /* XCHG_WAIT: 1 spin, 2 yield */
        return xchg_config.wait == 2;
    return !xchg_config.mpi_yields && node_oversubscribed != 0;
}

static int finish(int rc, MPI_Request *req)
{
    const struct timespec nap = {0, NAP_NS};
    double began = PMPI_Wtime();
    int done = 0;

    if (rc != MPI_SUCCESS)
        return rc;
    if (!setup_yields())
        return PMPI_Wait(req, MPI_STATUS_IGNORE);
    for (;;) {
        rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done)
            return rc;
        if (PMPI_Wtime() - began < YIELD_S)
            sched_yield();
        else
            nanosleep(&nap, NULL);
    }
}

int xchg_own_allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm)
{
    MPI_Request req;
    return finish(PMPI_Iallreduce(send, recv, count, type, op, comm, &req), &req);
}

int xchg_own_allgather(const void *send, int count, MPI_Datatype type, void *recv, MPI_Comm comm)
{
    MPI_Request req;
    return finish(PMPI_Iallgather(send, count, type, recv, count, type, comm, &req), &req);
}

int xchg_own_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    MPI_Request req;
    return finish(PMPI_Ibcast(buf, count, type, root, comm, &req), &req);
}

int xchg_own_comm_dup(MPI_Comm comm, MPI_Comm *dup)
{
    MPI_Request req;
    return finish(PMPI_Comm_idup(comm, dup, &req), &req);
}

/*
 * cost_shm.c: cost model of the shm algorithms (algos/alltoall_shm.c, allgather_shm.c,
 * alltoallv_shm.c), which move data through a communicator's shared segment.
 *
 * A pass is one synchronisation, priced at sync (xchg_cost_sync: measured by xchg-tune, else one
 * start-up inside the node, beta: every rank's arrival must be seen by every other, as a
 * message's would), and every byte goes through memory twice (rho per byte copied, more once
 * the node's ranks copy more at once than its memory serves: xchg_cost_node_copies; a byte read
 * out that another core has just written costs no more, as measured with xchg_copy: design.md,
 * "Copies"):
 *   alltoall   passes sync + (2 (p - 1) + 1) b rho;
 *   allgather  passes sync + p b rho;
 *   alltoallv  passes sync + (h1 + h2 - s) rho (the busiest sender's and receiver's bytes, the
 *              block to self s copied once: self_estimate).
 * Passes: ceil(b / piece) for the equal-block collectives (algos/sched/shm.h, with the half at
 * its limit topo.shm_bytes, which is where the segment grows); for alltoallv one when the
 * busiest sender's messages fit its region, else one more per piece of the largest message.
 * The model does not see ranks that must be scheduled before they arrive (more ranks than
 * cores): that is in beta as xchg-tune measured it, and learning times it.
 * p = 1: the local copy. Without shared memory (the predicate refuses): INFINITY.
 */
#include <math.h>

#include "cost.h"
#include "../algos/sched/shm.h"

static size_t passes_of(size_t bytes, size_t piece)
{
    return bytes == 0 ? 0 : (bytes + piece - 1) / piece;
}

/* An alltoallv's block to self, which the busiest rank copies once, not out and in: the
 * smallest of the largest message and the two busiest ranks' mean blocks, which is the block
 * of uniform counts (the agreed values do not tell the self block itself). */
static double self_estimate(const xchg_call_t *call)
{
    double p = call->comm_size, least = (double)call->max_block_bytes;
    least = fmin(least, (double)call->max_send_bytes / p);
    return fmin(least, (double)call->max_recv_bytes / p);
}

double xchg_cost_shm(const xchg_call_t *call, const xchg_machine_t *machine, xchg_params_t *params)
{
    int p = call->comm_size;
    size_t limit = call->topo ? call->topo->shm_bytes : 0, b = call->block_bytes, passes;
    double in, out;

    (void)params;
    if (p <= 1)
        return xchg_cost_copy(machine, (double)b);
    if (limit == 0 || !xchg_shm_fits(call->coll, p, limit))
        return INFINITY;
    if (call->coll == XCHG_ALLTOALLV) {
        size_t region = xchg_shm_region(p, limit), header = xchg_shm_header_bytes(p);
        size_t slot = ((region - header) / (size_t)p) & ~(size_t)7;
        passes = 1;
        if (header + call->max_send_bytes > region)
            passes += passes_of(call->max_block_bytes, slot);
        in = (double)call->max_send_bytes;
        out = (double)call->max_recv_bytes - self_estimate(call);
    } else {
        passes = passes_of(b, xchg_shm_piece(call->coll, p, limit));
        in = call->coll == XCHG_ALLTOALL ? (double)p * (double)b : (double)b;
        out = (double)(p - 1) * (double)b;
    }
    return (double)passes * xchg_cost_sync(machine) +
           xchg_cost_node_copies(call, machine, in + out);
}

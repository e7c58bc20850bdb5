/*
 * cost_torus.c: cost model of the all-port ring and torus complete exchange for MPI_Alltoall
 * (algos/alltoall_torus.c; Liu et al., "Optimal all-to-all personalized communication in all-port
 * tori", 2006, algorithms AR and AT2 of Sections III and IV).
#  Predicted time = sum over the steps of xchg_cost_round(messages a node sends in the step, largest
# message of the step) + rho * (bytes copied locally). The steps and their largest messages are the
# schedule's (algos/sched/torus.c: xchg_torus_t.step_units and step_msgs, which
# tests/unit/test_sched_torus.c checks against a simulation of every block), so their sum is the
# paper's transmission: r c^2/8 blocks on r x c multiples of 4, ceil(p^2/8) on an even ring. Copies:
# the block to self, and the blocks a node's plan copies (algos/sched/torus.h counts them; building
# a plan costs too much for a price): on a ring 2 (p - 1), its own blocks into messages and the
# delivered ones out (the plans receive relayed blocks where they leave from); on a torus 3 r c, the
# paper's count (one rearrangement per phase, Section V), which the plans meet within 0.6 (4x4: 1.88
# r c) to 1.6 times (16x16: 4.75 r c). The constants are xchg_machine_for's: a torus of nodes with
# one rank each is priced with the inter-node constants; port_share says how the four ports of a
# step share the node's link (0 on a real all-port torus, where the algorithm shines).
 *
 * The shape is the algorithm's (xchg_alltoall_torus_shape): dims when given, else the
 * communicator's periodic Cartesian topology, else XCHG_TORUS; the model completes dims with it.
 * A call without a shape (a flat communicator without XCHG_TORUS) is priced INFINITY, so auto
 * never takes the torus algorithm there; forced or named in a table it runs all the same (their
 * dims are then used). A shape is priced in O(r c + (r + c)^2) (the schedule's init).
 *
 * Against the simulator (build/xchg-sim --net torus, docs/sim.md, port_share 0): exact on
 * square tori and rings; 1.4 to 1.5 times the simulated time on a torus run in two halves
 * (4x16), since a step is priced as if every node were busy in it, while a node with nothing
 * to send in a step goes on to its next one.
 */
#include <math.h>

#include "cost.h"
#include "../algos/sched/torus.h"

double xchg_cost_alltoall_torus(const xchg_call_t *call, const xchg_machine_t *machine,
                                xchg_params_t *params)
{
    int rows, cols;
    const char *why;
    size_t unit;
    double time = 0, copies;
    xchg_torus_t t;
    xchg_machine_t m;

    if (xchg_alltoall_torus_shape(call, params, &rows, &cols, &why) != 0)
        return INFINITY;
    params->dims_r = rows;
    params->dims_c = cols;
    if (call->comm_size <= 1)
        return (double)call->block_bytes * machine->rho;
    if (xchg_torus_init(&t, rows, cols) != 0)
        return INFINITY;
    m = xchg_machine_for(call, machine);
    unit = xchg_torus_part_bytes(&t, call->block_bytes, 0);
    for (int k = 0; k < t.nsteps; k++)
        time += xchg_cost_round(&m, t.step_msgs[k], (size_t)t.step_units[k] * unit);
    copies = rows == 1 ? 2.0 * (cols - 1) : 3.0 * rows * cols;
    time += machine->rho * (double)call->block_bytes * (1.0 + copies);
    xchg_torus_free(&t);
    return time;
}

/*
 * cost_native.c: the cost model of "native", the MPI library's own collective.
 *
 * Measured first: when the machine constants carry native curves (a tuning table's `native`
 * lines, written by xchg-tune from timings of the MPI library's own collectives; tuning/table.h)
 * and one of them is for the call's collective and exactly its communicator size, native
 * costs that curve's value at the call's size key (xchg_native_curve_at: linear between the
 * measured points, the first point's value below them, the last segment's line, never falling,
 * above them). Otherwise it is modelled as follows, and never priced below the floor that the
 * calibration measured at MPI_Init on a communicator of the same size: the time of a call of
 * 1 B blocks (xchg_machine_t.native_small) and of one of 4 KiB blocks (native_mid), linear
 * between them, the larger's beyond. The models price only the messages' start-ups and bytes,
 * and the MPI library's own work per call, which they leave out, is most of a small call's time
 * (MPICH, 2 ranks on 2 cores: its MPI_Alltoall of 1 B took 2.1 to 11.5 times the price); and
 * an MPI library changes protocol with the message's size (MPICH's MPI_Alltoall of 4 KiB blocks
 * at 2 ranks took 9 to 13 us a call, priced 3.8 to 4.3 us by the model,
 * above the 1 B floor of 0.6 to 1.1).
 *
 * The MPI library's default selection is documented, and each of its algorithms is one that
 * xchg's models already price, so native is priced as the algorithm the MPI library would
 * run for the call, with the same machine constants (on both levels: those models price a
 * call that spans nodes with the inter-node constants, xchg_machine_for). MPICH 4's defaults (its
 * CVARs MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE = 256, MPIR_CVAR_ALLTOALL_MEDIUM_MSG_SIZE = 32768,
 * MPIR_CVAR_ALLTOALL_THROTTLE = 32, MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE = 81920,
 * MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE = 524288):
 *   MPI_Alltoall   blocks <= 256 B on >= 8 ranks: Bruck            -> radix r = 2, k = 1
 *                  blocks <= 32 KiB: every send and receive posted,
 *                  32 at a time ("scattered")                      -> pairwise k = min(p-1, 32)
 *                  larger: pairwise exchange                       -> pairwise k = 1
 *   MPI_Allgather  p b < 512 KiB and p a power of two: recursive
 *                  doubling (log2 p rounds, doubling messages),
 *                  or p b < 80 KiB: Bruck's concatenation           -> circulant k = 1
 *                  larger: ring                                    -> ring
 *   MPI_Alltoallv  every send and receive posted, 32 at a time     -> pairwise k = min(p-1, 32)
 * Open MPI's tuned component chooses among the same families by its own fixed rules, which its
 * documentation does not give; MPICH's stand in for them (what it does is learned, or measured
 * by xchg-tune --verify), but for one measured here (machine->native_rules XCHG_NATIVE_OPENMPI,
 * set when the library is built against Open MPI):
 *   MPI_Allgather  on a power-of-two communicator above 2 ranks: recursive doubling at every
 *                  size (-> circulant k = 1). Open MPI 4.1.4 at 8 ranks on the emulated
 *                  3,2,2,1 cluster: its default took 6128 and 152406 us at 4 and 64 KiB
 *                  blocks, its forced recursive_doubling 6106 and 149004, the ring 2486 and
 *                  53571 (docs/results.md, stop 84), where MPICH's rule says the ring from
 *                  p b = 512 KiB. Other power-of-two sizes are an extrapolation; a wrong price
 *                  costs a learning round.
 *
 * Since native and xchg's algorithms are priced alike, the model alone never finds a large
 * gain where the MPI library already runs the same schedule: selection then keeps native
 * (shim/select.c, XCHG_MODEL_MARGIN), and learning or a measured table decide the rest.
 * Pure code: no MPI calls.
 */
#include <math.h>

#include "cost.h"
#include "table.h"

#define MPICH_ALLTOALL_SHORT 256
#define MPICH_ALLTOALL_MEDIUM 32768
#define MPICH_THROTTLE 32
#define MPICH_ALLGATHER_SHORT 81920
#define MPICH_ALLGATHER_LONG 524288

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* The algorithm the MPI library runs by default, priced by xchg's own models. */
static double modelled(const xchg_call_t *call, const xchg_machine_t *machine)
{
    xchg_params_t as = {0};
    int p = call->comm_size;
    size_t b = call->block_bytes, total = (size_t)p * b;

    switch (call->coll) {
    case XCHG_ALLTOALL:
        if (b <= MPICH_ALLTOALL_SHORT && p >= 8) {
            as.radix = 2;
            as.nports = 1;
            return xchg_cost_alltoall_radix(call, machine, &as);
        }
        as.nports = b <= MPICH_ALLTOALL_MEDIUM ? min_int(p > 1 ? p - 1 : 1, MPICH_THROTTLE) : 1;
        return xchg_cost_alltoall_pairwise(call, machine, &as);
    case XCHG_ALLGATHER:
        if (machine->native_rules == XCHG_NATIVE_OPENMPI && p > 2 && (p & (p - 1)) == 0) {
            as.nports = 1;
            return xchg_cost_allgather_circulant(call, machine, &as);
        }
        if ((total < MPICH_ALLGATHER_LONG && (p & (p - 1)) == 0) || total < MPICH_ALLGATHER_SHORT) {
            as.nports = 1;
            return xchg_cost_allgather_circulant(call, machine, &as);
        }
        return xchg_cost_allgather_ring(call, machine, &as);
    case XCHG_ALLTOALLV:
        as.nports = min_int(p > 1 ? p - 1 : 1, MPICH_THROTTLE);
        return xchg_cost_alltoallv_pairwise(call, machine, &as);
    default:
        return 0.0;
    }
}

double xchg_cost_native_floor(const xchg_call_t *call, const xchg_machine_t *machine)
{
    double small, mid;
    size_t b = call->block_bytes;
    if (call->comm_size != machine->native_small_ranks || b == 0 || call->coll < 0 ||
        call->coll >= XCHG_NCOLLS)
        return 0.0;
    small = machine->native_small[call->coll];
    mid = machine->native_mid[call->coll];
    if (!(mid > small)) /* not measured, or no dearer than 1 B */
        return small;
    if (b >= XCHG_NATIVE_MID_BYTES)
        return mid;
    return small + (mid - small) * (double)(b - 1) / (XCHG_NATIVE_MID_BYTES - 1);
}

double xchg_cost_native(const xchg_call_t *call, const xchg_machine_t *machine,
                        xchg_params_t *params)
{
    const xchg_native_curve_t *curve =
        xchg_native_curve_find(machine->native, call->coll, call->comm_size);
    double price;

    (void)params; /* native has no parameters */
    if (curve)
        return xchg_native_curve_at(curve, call->block_bytes);
    price = modelled(call, machine);
    return fmax(price, xchg_cost_native_floor(call, machine));
}

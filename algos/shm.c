/*
 * shm.c: a pass through a communicator's segment of shared memory, the synchronisation of the
 * shm algorithms (alltoall_shm.c, allgather_shm.c, alltoallv_shm.c).
 *
 * The segment (xchg_shm_t, allocated by the shim with MPI_Win_allocate_shared on the context's
 * communicator, shim/shm.c):
 *
 *   | control: counter 0 | counter 1 | ... (XCHG_SHM_CONTROL) | half 0 | half 1 |
 *
 * Pass n (counted per communicator, equal on all ranks: every rank makes the same shm calls in
 * the same order) uses half n mod 2. A rank writes what it sends into the half, adds one to
 * counter n mod 2 (release) and waits until the counter reaches p (n div 2 + 1) (acquire): then
 * every rank's writes of pass n are visible and it reads what it receives.
 * Why two halves suffice: a rank that writes half n mod 2 again, in pass n + 2, has finished
 * waiting in pass n + 1, so every rank has arrived in pass n + 1, which each does only after
 * reading everything of pass n; and counter n mod 2 then holds exactly every arrival of pass n.
 *
 * Waiting: under ctx->shm_yield (more ranks than cores on the node, or XCHG_WAIT=yield) every
 * turn of the loop yields the core to the rank that has yet to arrive; otherwise the loop spins
 * and yields only now and then. It also drives the MPI library's progress engine (an MPI_Iprobe
 * on the private communicator, which matches nothing) every few turns, as a native collective
 * would while it waits: a rank's pending nonblocking operations, which another rank may be
 * waiting on before it can join the collective, must still complete.
 */
#include <sched.h>

#include "xchg.h"

#define SPIN_PROGRESS 256 /* spinning: drive progress every this many turns, */
#define SPIN_YIELD 4096   /* and yield the core every this many */
#define YIELD_PROGRESS 8  /* yielding: drive progress every this many turns */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void drive_progress(xchg_ctx_t *ctx)
{
    int flag;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ctx->comm, &flag, MPI_STATUS_IGNORE);
}

static uint64_t *counter(const xchg_ctx_t *ctx)
{
    return (uint64_t *)(ctx->shm->base + 64 * (ctx->shm->passes & 1));
}

char *xchg_shm_half(const xchg_ctx_t *ctx)
{
    const xchg_shm_t *shm = ctx->shm;
    return shm->base + XCHG_SHM_CONTROL + (shm->passes & 1) * shm->half_bytes;
}

void xchg_shm_arrive(xchg_ctx_t *ctx)
{
    uint64_t *count = counter(ctx);
    uint64_t all = (uint64_t)ctx->size * (ctx->shm->passes / 2 + 1);

    __atomic_fetch_add(count, 1, __ATOMIC_ACQ_REL);
    for (unsigned turn = 1; __atomic_load_n(count, __ATOMIC_ACQUIRE) < all; turn++) {
        if (ctx->shm_yield) {
            sched_yield();
            if (turn % YIELD_PROGRESS == 0)
                drive_progress(ctx);
            continue;
        }
        cpu_relax();
        if (turn % SPIN_PROGRESS == 0)
            drive_progress(ctx);
        if (turn % SPIN_YIELD == 0)
            sched_yield();
    }
    ctx->shm->passes++;
}

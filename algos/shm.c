/*
 * shm.c: passes through the shared segment of a rank's node, the synchronisation of the shm
 * algorithms (alltoall_shm.c, allgather_shm.c, alltoallv_shm.c) and of the node algorithms
 * (alltoall_node.c, allgather_node.c, alltoallv_node.c).
 *
 * The segment (xchg_shm_t, one per node of the communicator: POSIX shared memory that the shim
 * makes, shim/shm.c):
 *
 *   | control: counter (its own cache line) ... (XCHG_SHM_CONTROL) | half 0 | half 1 |
 *
 * Synchronisation s of a node (counted per segment, equal on the node's ranks: they make the
 * same calls in the same order) adds one to the counter (release) and waits until it reaches
 * n (s + 1), n the node's ranks (acquire): then every rank's writes before it are visible. The
 * counter only grows, so no rank can mistake one synchronisation for another.
 * Pass t (counted per segment too) uses half t mod 2. Why two halves suffice: a rank writes a
 * half again in pass t + 2, after its first synchronisation of pass t + 1, which every rank of
 * the node reached only after reading everything of pass t.
 *
 * One-line passes (xchg_shm_line*): where each rank's part of a pass fits one cache line beside
 * a sequence word (XCHG_SHM_LINE_DATA bytes, at most XCHG_SHM_LINE_RANKS ranks on the node), a
 * pass goes through lines of the control block instead of the half and the counter: every rank
 * has a line for each parity of the pass count, writes its bytes there, and arrives
 * (xchg_shm_line_arrive): it stores the pass count plus one in its line's first word (release)
 * and waits until every other rank's line of this parity shows the same (acquire); then it reads
 * them. A rank writes one line that only it writes
 * and reads each other rank's once, where a counter pass makes every rank write the counter's
 * line and the half's (shared by small blocks), then read both again. The lines of parity t
 * mod 2 are written again in pass t + 2, after every rank has shown pass t + 1, which it does
 * after reading pass t: the halves' argument, and it holds across passes of either kind (a
 * counter pass also waits for every rank of the node), so the two kinds may alternate on one
 * segment.
 *
 * Waiting: under ctx->shm_yield (more ranks than cores on the node, or XCHG_WAIT=yield) every
 * turn of the loop yields the core to the rank that has yet to arrive; otherwise the loop spins
 * and yields only now and then. It also drives the MPI library's progress engine every few
 * turns, as a native collective would while it waits: a rank's pending nonblocking operations,
 * which another rank may be waiting on before it can join the collective, must still complete
 * (and a node algorithm's leaders wait on messages from other nodes meanwhile). The engine is
 * driven with an MPI_Iprobe on the context's communicator for a tag that no message carries: a
 * probe that finds a message returns without progressing (MPICH's does), and the other nodes'
 * leaders' messages may well be waiting there (a probe of any tag hung progress_check); a probe
 * of a communicator of one rank reaches only MPICH's local queue, not its network.
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

/* A tag that no message of the library carries (the round helper's are far below it): the
 * largest one MPI guarantees. */
#define PROBE_TAG 32767

static void drive_progress(xchg_ctx_t *ctx)
{
    int flag;
    PMPI_Iprobe(MPI_ANY_SOURCE, PROBE_TAG, ctx->comm, &flag, MPI_STATUS_IGNORE);
}

char *xchg_shm_half(const xchg_ctx_t *ctx)
{
    const xchg_shm_t *shm = ctx->shm;
    return shm->base + XCHG_SHM_CONTROL + (shm->passes & 1) * shm->half_bytes;
}

/* One turn of a wait: yield, or spin, and drive progress now and then. */
static void wait_turn(xchg_ctx_t *ctx, unsigned turn)
{
    if (ctx->shm_yield) {
        sched_yield();
        if (turn % YIELD_PROGRESS == 0)
            drive_progress(ctx);
        return;
    }
    cpu_relax();
    if (turn % SPIN_PROGRESS == 0)
        drive_progress(ctx);
    if (turn % SPIN_YIELD == 0)
        sched_yield();
}

void xchg_shm_sync(xchg_ctx_t *ctx)
{
    uint64_t *count = (uint64_t *)ctx->shm->base;
    uint64_t all = (uint64_t)ctx->local_size * (ctx->shm->syncs + 1);

    __atomic_fetch_add(count, 1, __ATOMIC_ACQ_REL);
    for (unsigned turn = 1; __atomic_load_n(count, __ATOMIC_ACQUIRE) < all; turn++)
        wait_turn(ctx, turn);
    ctx->shm->syncs++;
}

int xchg_shm_line_fits(const xchg_ctx_t *ctx, size_t bytes)
{
    return ctx->shm && ctx->local_size <= XCHG_SHM_LINE_RANKS && bytes <= XCHG_SHM_LINE_DATA;
}

/* Local rank r's line of pass parity t mod 2: lines 1 + (t mod 2) XCHG_SHM_LINE_RANKS + r of
 * the control block (line 0 is the counter). */
static uint64_t *line_of(const xchg_ctx_t *ctx, int local)
{
    size_t line = 1 + (size_t)(ctx->shm->passes & 1) * XCHG_SHM_LINE_RANKS + (size_t)local;
    return (uint64_t *)(ctx->shm->base + line * XCHG_SHM_LINE);
}

char *xchg_shm_line(const xchg_ctx_t *ctx, int local)
{
    return (char *)(line_of(ctx, local) + 1);
}

void xchg_shm_line_arrive(xchg_ctx_t *ctx)
{
    const xchg_shm_t *shm = ctx->shm;
    __atomic_store_n(line_of(ctx, ctx->local_rank), shm->passes + 1, __ATOMIC_RELEASE);
    for (int r = 0; r < ctx->local_size; r++) {
        const uint64_t *seq = line_of(ctx, r);
        for (unsigned turn = 1;
             r != ctx->local_rank && __atomic_load_n(seq, __ATOMIC_ACQUIRE) != shm->passes + 1;
             turn++)
            wait_turn(ctx, turn);
    }
}

void xchg_shm_next(xchg_ctx_t *ctx)
{
    ctx->shm->passes++;
}

void xchg_shm_arrive(xchg_ctx_t *ctx)
{
    xchg_shm_sync(ctx);
    xchg_shm_next(ctx);
}

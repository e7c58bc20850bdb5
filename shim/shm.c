/*
 * shm.c: the shared segment of a context (xchg_shm_t, algos/xchg.h), one per node of the
 * communicator, for the shm and node algorithms (algos/shm.c).
 *
 * Made on the first call that needs one, with POSIX shared memory and no MPI collective:
 *   1. the node's lowest rank creates an object of an unpredictable name (the process id and
 *      64 random bits) with O_CREAT | O_EXCL and mode 0600, gives it its pages
 *      (posix_fallocate: a full /dev/shm fails here, not with SIGBUS on a later write), maps it
 *      and closes the descriptor; a node of one rank maps private anonymous memory instead;
 *   2. it sends the name to the node's other ranks (xchg_exchange), which open, map and close;
 *   3. every rank of the communicator agrees whether all succeeded, and on the segment's id
 *      (xchg_agree_max);
 *   4. the creator unlinks the name at once: nothing is left in /dev/shm, even if the job is
 *      killed later, and no descriptor stays open. The memory goes when the last rank unmaps it.
 * So a segment costs the program no MPI window and no context id, and a communicator that spans
 * nodes gets a segment per node without a node communicator. Messages go through the round
 * helper on the context's communicator (and its tag), never a collective of the MPI library.
 *
 * Sizes. The halves start at the call's need rounded up to a power of two, at least SHM_FIRST
 * bytes, and grow when a call needs more, up to the topology's limit (XCHG_SHM_BYTES: topo's
 * shm_bytes on one node, node_shm_bytes per node); a call larger than that goes in pieces.
 * Every step depends only on values equal on all ranks (the call's need, the current size),
 * so every rank makes and grows its node's segment at the same call, and the halves are the
 * same size on every node. Growing needs no barrier: a rank unmaps the old segment when it has
 * the new one, and another rank still reading the old one keeps its own mapping.
 *
 * Kept for the next communicator. A freed communicator's segment is kept (the pool: one for each
 * set of processes, SHM_POOL in all, the oldest unmapped first, so what a process keeps stops
 * growing once its sets have been seen) for the next communicator of the same processes
 * (xchg_ctx_t.members), which would otherwise make its own at its first shm call, a cost that a
 * program or a library making a duplicate per task and a few calls on each pays per communicator
 * (measured: docs/results.md, stop 44). A new communicator takes the pool's segment of its
 * processes, if any, when it is made (removed from the pool: no two contexts of one rank ever
 * hold it; xchg_shm_offer), and its ranks agree that each took the same one (its id, below) in
 * the allreduce that attaches it to its channel (shim/context.c), not in a message round of their
 * own at its first shm call; else each rank's goes. A segment's id is agreed by every rank of the
 * communicator as it is made, so the segments of all its nodes have the same one, and a
 * communicator that spans nodes takes each node's kept segment alike (what that saves a new
 * communicator's first call on the emulated cluster: docs/results.md, stop 66). On one node, one
 * made while the pool kept none for its processes tries again at its first reservation, with an
 * agreement of its own (shm_adopt), and where none is kept then either, a new one is made as
 * above. Its state
 * carries over: its ranks made the same passes through it, so passes and syncs are equal on all
 * of them, and a rank that still reads the old communicator's last pass reads the other half, as
 * between two calls of one communicator.
 *
 * Bounds. A process holds at most SHM_MAX_SEGMENTS segments and SHM_MAX_TOTAL bytes of them.
 * When a rank cannot have one (a bound, /dev/shm full, no memory), the agreement says so on
 * every rank: a first segment is given up on the communicator (shm_failed: the shm algorithms
 * send messages, the node algorithms fall back to theirs), a larger one is not tried again
 * (capped: the halves stay as they are, calls go in more pieces). The segment goes with the
 * context (xchg_shm_free from shim/context.c: the user's MPI_Comm_free, or MPI_Finalize).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

#define SHM_FIRST ((size_t)64 << 10) /* the smallest half made */
/* segments one process holds: each is a mapping kept while its communicator lives, and a
 * program with a thousand communicators must not hold a thousand of them (MPI windows would
 * also cost it a context id each); past this its communicators send messages */
#define SHM_MAX_SEGMENTS 64
/* bytes of segments one process holds: twice what SHM_MAX_SEGMENTS take at the default
 * XCHG_SHM_BYTES (1M halves), so that the default never meets it and a large XCHG_SHM_BYTES
 * cannot fill the node's memory with segments */
#define SHM_MAX_TOTAL ((size_t)256 << 20)
#define SHM_NAME_BYTES 64 /* a name as sent to the node's ranks, "" when there is none */
#define SHM_NAME_TRIES 8  /* names tried when one exists already */
#define SHM_POOL 4        /* freed communicators' segments kept for the next (file header) */

/* A kept segment and the processes it serves. */
typedef struct shm_pooled {
    xchg_shm_t *shm; /* NULL: a free entry */
    uint64_t members;
    uint64_t age; /* when it was kept: the oldest goes first */
} shm_pooled_t;

static shm_pooled_t pool[SHM_POOL];
static uint64_t pool_clock;
static int made_count, adopted_count; /* segments this process made, and took from the pool */

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static int live_segments; /* this process's mapped segments */
static size_t live_bytes; /* and their bytes */

/* Take room for a mapping of bytes (0 when a bound forbids it); shm_release gives it back. */
static int shm_charge(size_t bytes)
{
    int room;
    pthread_mutex_lock(&live_lock);
    room = live_segments < SHM_MAX_SEGMENTS && bytes <= SHM_MAX_TOTAL - live_bytes;
    if (room) {
        live_segments++;
        live_bytes += bytes;
    }
    pthread_mutex_unlock(&live_lock);
    return room;
}

static void shm_release(size_t bytes)
{
    pthread_mutex_lock(&live_lock);
    live_segments--;
    live_bytes -= bytes;
    pthread_mutex_unlock(&live_lock);
}

static void shm_unmap(xchg_shm_t *shm)
{
    munmap(shm->base, shm->map_bytes);
    shm_release(shm->map_bytes);
    free(shm);
}

/* Only a segment whose processes are known is kept (size is equal on every rank, members too:
 * from the same group); on every node of the communicator alike. */
static int poolable(const xchg_ctx_t *ctx)
{
    return ctx->members != 0 && ctx->size > 1;
}

/* Read each page of base[from, from + len) once. */
static void touch_pages(volatile const char *base, size_t from, size_t len, size_t page)
{
    for (size_t at = 0; at < len; at += page)
        (void)base[from + at];
}

void xchg_shm_prefault(const xchg_ctx_t *ctx, size_t bytes, size_t region_bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    volatile const char *base = ctx->shm ? ctx->shm->base : NULL;
    size_t half = ctx->shm ? ctx->shm->half_bytes : 0, region;
    if (!base || page <= 0)
        return;
    region = xchg_alltoallv_shm_region(ctx);
    bytes = bytes < half ? bytes : half;
    region_bytes = region_bytes < region ? region_bytes : region;
    touch_pages(base, 0, XCHG_SHM_CONTROL, (size_t)page);
    for (int h = 0; h < 2; h++) {
        size_t at = XCHG_SHM_CONTROL + (size_t)h * half;
        touch_pages(base, at, bytes, (size_t)page);
        /* each sender's alltoallv region: its header and first messages (a page read again
         * costs nothing) */
        for (int r = 1; r < ctx->size; r++)
            touch_pages(base, at + (size_t)r * region, region_bytes, (size_t)page);
    }
}

void xchg_shm_free(xchg_ctx_t *ctx)
{
    xchg_shm_t *evicted;
    int at = -1;

    if (!ctx->shm)
        return;
    if (!poolable(ctx) || ctx->shm->id == 0) {
        shm_unmap(ctx->shm);
        ctx->shm = NULL;
        return;
    }
    pthread_mutex_lock(&live_lock);
    for (int i = 0; i < SHM_POOL && at < 0; i++)
        if (pool[i].shm && pool[i].members == ctx->members)
            at = i; /* the one kept for these processes (one each), */
    for (int i = 0; i < SHM_POOL && at < 0; i++)
        if (!pool[i].shm)
            at = i; /* else a free entry, */
    if (at < 0) {
        at = 0; /* else the oldest */
        for (int i = 1; i < SHM_POOL; i++)
            if (pool[i].age < pool[at].age)
                at = i;
    }
    evicted = pool[at].shm;
    pool[at] = (shm_pooled_t){ctx->shm, ctx->members, ++pool_clock};
    pthread_mutex_unlock(&live_lock);
    if (evicted)
        shm_unmap(evicted);
    ctx->shm = NULL;
}

xchg_shm_t *xchg_shm_detach(xchg_ctx_t *ctx)
{
    xchg_shm_t *shm = ctx->shm;
    ctx->shm = NULL;
    return shm;
}

void xchg_shm_drop(xchg_shm_t *shm)
{
    if (shm)
        shm_unmap(shm);
}

void xchg_shm_counts(int *made, int *adopted)
{
    *made = __atomic_load_n(&made_count, __ATOMIC_RELAXED);
    *adopted = __atomic_load_n(&adopted_count, __ATOMIC_RELAXED);
}

void xchg_shm_pool_drain(void)
{
    for (int i = 0; i < SHM_POOL; i++) {
        pthread_mutex_lock(&live_lock);
        xchg_shm_t *shm = pool[i].shm;
        pool[i].shm = NULL;
        pthread_mutex_unlock(&live_lock);
        if (shm)
            shm_unmap(shm);
    }
}

/* The pool's segment of these processes (one at most), removed from the pool, or NULL. */
static xchg_shm_t *pool_take(uint64_t members)
{
    xchg_shm_t *shm = NULL;
    pthread_mutex_lock(&live_lock);
    for (int i = 0; i < SHM_POOL && !shm; i++)
        if (pool[i].shm && pool[i].members == members) {
            shm = pool[i].shm;
            pool[i].shm = NULL;
        }
    pthread_mutex_unlock(&live_lock);
    return shm;
}

/* A new context's first reservation: the kept segment of its processes when every rank took
 * the same one (collective; file header). */
static int shm_adopt(xchg_ctx_t *ctx)
{
    uint64_t ids[2];
    xchg_shm_t *kept = xchg_shm_offer(ctx, ids);
    int rc = xchg_agree_max(ctx, ids, 2);

    xchg_shm_take_offer(ctx, kept, rc == MPI_SUCCESS ? ids : (uint64_t[2]){0, 0});
    return rc;
}

xchg_shm_t *xchg_shm_offer(const xchg_ctx_t *ctx, uint64_t ids[2])
{
    xchg_shm_t *kept = poolable(ctx) && !ctx->shm_failed ? pool_take(ctx->members) : NULL;
    ids[0] = kept ? kept->id : 0;
    ids[1] = kept ? ~kept->id : ~(uint64_t)0;
    return kept;
}

void xchg_shm_take_offer(xchg_ctx_t *ctx, xchg_shm_t *offer, const uint64_t agreed[2])
{
    /* the largest of the ranks' {id, ~id} is {id, ~id} only where every rank took this one */
    if (offer && agreed[0] == offer->id && agreed[1] == ~offer->id) {
        ctx->shm = offer;
        __atomic_add_fetch(&adopted_count, 1, __ATOMIC_RELAXED);
    } else if (offer) {
        shm_unmap(offer);
    }
}

/* 64 random bits (the clock's if getrandom fails). */
static unsigned long long random_bits(void)
{
    unsigned long long bits;
    if (getrandom(&bits, sizeof bits, GRND_NONBLOCK) != (ssize_t)sizeof bits) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        bits = ((unsigned long long)now.tv_sec * 1000000007ull) ^ (unsigned long long)now.tv_nsec;
    }
    return bits;
}

/* A fresh name: "/xchg-PID-" and 64 random bits. */
static void shm_name(char name[SHM_NAME_BYTES])
{
    snprintf(name, SHM_NAME_BYTES, "/xchg-%ld-%016llx", (long)getpid(), random_bits());
}

/* The creator's object of bytes, mapped (its name in name), or NULL (name ""). */
static char *shm_create(size_t bytes, char name[SHM_NAME_BYTES])
{
    char *base = NULL;
    int fd = -1;

    for (int i = 0; i < SHM_NAME_TRIES && fd < 0; i++) {
        shm_name(name);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        goto fail;
    if (posix_fallocate(fd, 0, (off_t)bytes) == 0) {
        base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        base = base == MAP_FAILED ? NULL : base;
    }
    close(fd);
    if (base)
        return base;
    shm_unlink(name);
fail:
    name[0] = '\0';
    return NULL;
}

/* Another rank's mapping of the creator's object, or NULL. */
static char *shm_attach(const char *name, size_t bytes)
{
    struct stat st;
    char *base = NULL;
    int fd = shm_open(name, O_RDWR, 0);

    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= bytes) {
        base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        base = base == MAP_FAILED ? NULL : base;
    }
    close(fd);
    return base;
}

/* The creator sends name to the node's other ranks; they receive it into name. */
static int shm_share_name(xchg_ctx_t *ctx, char name[SHM_NAME_BYTES])
{
    xchg_msg_t *sends = NULL, recv;
    int creator = -1, nsends = 0, rc;

    for (int r = 0; r < ctx->size && creator < 0; r++)
        if (ctx->node_of[r] == ctx->node)
            creator = r;
    if (ctx->local_size == 1)
        return MPI_SUCCESS;
    if (ctx->rank != creator) {
        recv = (xchg_msg_t){creator, name, SHM_NAME_BYTES};
        return xchg_exchange(ctx, NULL, 0, &recv, 1);
    }
    /* without memory for the list: one message at a time, so that every rank of the node still
     * gets the one message it waits for (a rank left waiting would take the agreement's next
     * message on this channel for its name) */
    sends = malloc((size_t)ctx->local_size * sizeof *sends);
    rc = MPI_SUCCESS;
    for (int r = 0; r < ctx->size; r++)
        if (r != ctx->rank && ctx->node_of[r] == ctx->node) {
            xchg_msg_t one = {r, name, SHM_NAME_BYTES};
            int sent = sends ? MPI_SUCCESS : xchg_exchange(ctx, &one, 1, NULL, 0);
            if (sends)
                sends[nsends++] = one;
            rc = rc == MPI_SUCCESS ? sent : rc;
        }
    if (sends)
        rc = xchg_exchange(ctx, sends, nsends, NULL, 0);
    free(sends);
    return rc;
}

/* This rank's mapping of its node's new segment of bytes, or NULL; name: its name (the same on
 * every rank of the node), "" when there is none; created: the name to unlink after the
 * agreement (the creator's), else "". Every rank of the node takes part. */
static char *shm_map(xchg_ctx_t *ctx, size_t bytes, int room, char created[SHM_NAME_BYTES],
                     char name[SHM_NAME_BYTES], int *rc)
{
    char *base = NULL;

    created[0] = '\0';
    name[0] = '\0';
    *rc = MPI_SUCCESS;
    if (ctx->local_size == 1) {
        base = room ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                    : MAP_FAILED;
        return base == MAP_FAILED ? NULL : base;
    }
    if (ctx->local_rank == 0 && room && (base = shm_create(bytes, name)))
        memcpy(created, name, SHM_NAME_BYTES);
    *rc = shm_share_name(ctx, name);
    if (*rc != MPI_SUCCESS && ctx->local_rank != 0)
        name[0] = '\0';
    name[SHM_NAME_BYTES - 1] = '\0';
    if (ctx->local_rank != 0 && room && name[0])
        base = shm_attach(name, bytes);
    return base;
}

static void shm_say_none(const xchg_ctx_t *ctx, size_t bytes)
{
    if (!xchg_config.verbose || ctx->rank != 0)
        return;
    fprintf(stderr,
            "xchg: no shared segment of %zu bytes for a communicator of %d ranks on %d nodes: "
            "%s\n",
            bytes, ctx->size, ctx->nnodes,
            ctx->shm ? "its calls go through the smaller one in more pieces"
                     : "the shm algorithms send messages on it, the node algorithms fall back");
    fflush(stderr);
}

static size_t shm_limit(const xchg_ctx_t *ctx)
{
    return ctx->topo.shm_bytes > ctx->topo.node_shm_bytes ? ctx->topo.shm_bytes
                                                          : ctx->topo.node_shm_bytes;
}

size_t xchg_shm_new_half(const xchg_ctx_t *ctx, size_t bytes)
{
    size_t limit = shm_limit(ctx), half = SHM_FIRST;

    if (ctx->shm_failed || limit == 0)
        return 0;
    bytes = bytes > limit ? limit : bytes;
    if (ctx->shm && (ctx->shm->half_bytes >= bytes || ctx->shm->capped))
        return 0;
    while (half < bytes)
        half *= 2;
    return half > limit ? limit : half;
}

int xchg_shm_reserve(xchg_ctx_t *ctx, size_t bytes)
{
    size_t half, total;
    char created[SHM_NAME_BYTES], name[SHM_NAME_BYTES], *base;
    xchg_shm_t *shm;
    uint64_t failed, agreed[2];
    int room, rc;

    if (ctx->shm_failed || shm_limit(ctx) == 0)
        return MPI_ERR_OTHER;
    /* on one node, where an agreement costs about a call of 1 B (across nodes it costs several
     * start-ups between nodes, and only the attach's offer is tried) */
    if (!ctx->shm && poolable(ctx) && ctx->nnodes == 1 && xchg_shm_new_half(ctx, bytes) > 0) {
        rc = shm_adopt(ctx);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    half = xchg_shm_new_half(ctx, bytes);
    if (half == 0)
        return MPI_SUCCESS;
    total = XCHG_SHM_CONTROL + 2 * half;

    /* map the node's new segment, agree that every rank has one and on its id (the largest of
     * the ranks' random ones: the same for every node's segment), unlink its name */
    shm = calloc(1, sizeof *shm);
    room = shm && shm_charge(total);
    base = shm_map(ctx, total, room, created, name, &rc);
    agreed[0] = !base || rc != MPI_SUCCESS;
    agreed[1] = random_bits() | 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (xchg_agree_max(ctx, agreed, 2) != MPI_SUCCESS)
        agreed[0] = 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    failed = agreed[0];
    if (created[0])
        shm_unlink(created);
    if (!failed) {
        if (ctx->shm) /* grown: the smaller one goes */
            shm_unmap(ctx->shm);
        *shm = (xchg_shm_t){.base = base, .half_bytes = half, .map_bytes = total, .id = agreed[1]};
        ctx->shm = shm;
        __atomic_add_fetch(&made_count, 1, __ATOMIC_RELAXED);
        return MPI_SUCCESS;
    }
    free(shm);
    if (base)
        munmap(base, total);
    if (room)
        shm_release(total);
    shm_say_none(ctx, total);
    if (ctx->shm) {
        ctx->shm->capped = 1;
        return MPI_SUCCESS;
    }
    ctx->shm_failed = 1;
    return MPI_ERR_NO_MEM;
}

/*
 * channel.c: the private communicators that carry xchg's own messages.
 *
 * xchg never sends point-to-point messages on a user's communicator, where a wildcard receive of
 * the program could match them. It sends on a channel: a duplicate of a user's communicator,
 * shared by every context whose communicator has the same group (MPI_Group_compare answers
 * MPI_IDENT), each context with a tag slot of its own on it (xchg_ctx_t.tag). So a program that
 * keeps 2000 duplicates of MPI_COMM_WORLD costs the MPI library one context id for xchg, not
 * 2000 (MPICH has 2048 of them in all, and they belong to the program).
 *
 * Attaching a context (collective over the user's communicator, at its first intercepted call):
 *   1. every rank proposes the channel it holds for the group (the lowest id among those with a
 *      free slot, 0 when none) and the lowest slot free on it there, which it takes for now,
 *      and says whether it may make another (CHANNELS_MAX); one allreduce of the user's
 *      communicator gives the least and the largest of both. All ranks proposed the same
 *      channel and the same slot: the context has them (ranks that made the same attachments
 *      in the same order hold the same slots, so this is the rule in a program with one thread);
 *   2. all ranks proposed the same channel but not the same slot: each frees the one it took,
 *      and they agree on a slot free on every rank (an allreduce of the bitmaps of slots in use,
 *      from an agreed random start so that concurrent attachments from several threads seldom
 *      pick the same one), each takes it, and a second allreduce tells whether every rank could
 *      (another thread may have taken it in between); a few tries, then
 *   3. otherwise a new channel: PMPI_Comm_dup of the user's communicator (with MPI_ERRORS_RETURN
 *      for the time of the call, so that an exhausted MPI library reports rather than aborts),
 *      its id the largest of random proposals, slot 0;
 *   4. no channel (a rank at CHANNELS_MAX, or the duplicate failed anywhere: agreed): the
 *      context passes every call to the MPI library, which serves it as without xchg.
 * Step 1's maximum goes through the world's board where there is one and the communicator has
 * the world's processes (in any order): MPI_Init's warm-up on one node keeps a segment of its
 * own (halves of 64 KiB, its first pages mapped) for it, and every rank writes its proposals
 * there and reads all (algos/agree.c), one pass instead of an allreduce of a communicator the
 * MPI library has not used yet. On the 2-core VM with MPICH at 2 ranks that allreduce took 3.3
 * to 5.6 us (2.5 to 3.9 on a communicator it had used); through the board a new communicator's
 * first call took 1.1 to 5.5 us less (docs/results.md, stop 71). The board's waits probe its
 * channel, MPI_Init's, which stays until MPI_Finalize. No board under MPI_THREAD_MULTIPLE (two
 * threads may attach two communicators at once) nor across nodes.
 * Every outcome is agreed, so every rank of the communicator ends on the same channel and slot,
 * or on pass-through. A channel goes when its last context goes (the user's MPI_Comm_free, which
 * every rank of the communicator makes, or MPI_Finalize), except one: the channel of the world's
 * group stays, idle, until MPI_Finalize (not under MPI_THREAD_MULTIPLE), so that a program that
 * duplicates MPI_COMM_WORLD for each task and frees it after a few calls pays one allreduce for
 * the channel of each duplicate, not a PMPI_Comm_dup, three allreduces and a PMPI_Comm_free
 * (2 ranks on 2 cores: 7.3 to 8.1 us of the 10.2 to 10.6 that such a first call of 256 B took
 * under MPICH, against 1.5 natively); where there is a board (below), that is the board's
 * channel, and another of the world's group goes like any. Every rank of the world's group
 * releases that channel at the same communicator's MPI_Comm_free, so all keep it alike. It holds
 * its context id while no communicator uses it; it does not count against CHANNELS_MAX.
 *
 * What its contexts learned outlives it: a program that makes and frees communicators of one
 * group again and again (a library's duplicate per plan, a harness's per test) learns once. The
 * learning domain of a channel that goes is kept, with the channel's agreed id as its origin
 * (at most ORPHANS of them, the oldest dropped first), and a new channel for the same group
 * adopts it when every rank proposes the same origin (one more pair of values in the allreduce
 * that agrees on the new channel's id). The domain's state advanced with the same calls on every
 * rank, so ranks that kept the same origin hold the same state; where any rank dropped it, none
 * adopts it. Only memory is kept: no communicator, so no context id of the MPI library.
 *
 * Tags: slot s uses tags 2 s (the rounds' messages) and 2 s + 1; with CHANNEL_SLOTS 16000 they
 * stay below 32000, under 32767, the least MPI_TAG_UB that the MPI standard allows, which the
 * shared segments' waits probe for progress (algos/shm.c: no message carries it). Messages of two
 * contexts on one channel never match each other's receives, whatever order the ranks call them
 * in.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

#define CHANNEL_SLOTS 16000 /* tags below 32000 (above) */
#define CHANNELS_MAX 16     /* channels a process holds: each costs the program a context id */
#define SLOT_TRIES 6        /* agreements on a slot before a new channel is made instead */
#define SLOT_WORDS (CHANNEL_SLOTS / 64)
#define ORPHANS 8 /* learning domains kept from channels that went (40 KiB each) */

typedef struct xchg_channel {
    MPI_Comm comm;
    MPI_Group group;
    uint64_t id;  /* agreed by its ranks; never 0 */
    int refs;     /* contexts on it, and attachments in progress that proposed it */
    int nused;    /* slots taken on this rank */
    uint64_t used[SLOT_WORDS];
    xchg_learning_t *learning; /* its contexts' learning domain (shim/learn.c), or NULL */
    double agreed_s;            /* this rank's time in the allreduce that made the channel */
    int world;                  /* its group is MPI_COMM_WORLD's: kept idle (file header) */
    struct xchg_channel *next;
} xchg_channel_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static xchg_channel_t *channels;
static int nchannels; /* in the list, the idle one too (each holds a context id) */
static int nidle;     /* of them without contexts: 0 or 1, the world's group's */
static int nmade;     /* channels made since MPI_Init */

/* A learning domain kept from a channel that went (file header). */
typedef struct xchg_orphan {
    MPI_Group group; /* its channel's group, now the orphan's */
    uint64_t origin; /* the agreed id of the channel it came from */
    xchg_learning_t *learning;
} xchg_orphan_t;

static xchg_orphan_t orphans[ORPHANS]; /* under lock; the oldest at the lowest index */
static int norphans;
static int closing; /* MPI_Finalize began: nothing more is kept */

/* The world's board (file header): a context of all the world's processes on one node whose
 * segment carries step 1's agreement for every communicator of those processes. Its channel is
 * MPI_Init's, kept until MPI_Finalize (release), and its communicator is what the board's waits
 * probe for progress. Not under MPI_THREAD_MULTIPLE, so no lock. */
static struct {
    xchg_ctx_t ctx;          /* ctx.shm NULL: no board */
    xchg_channel_t *channel; /* the warm-up's channel, the world's */
    int attached;            /* attachments through it, for XCHG_STATS */
} board;

/* Drop orphan i (lock held); its group and domain go to *group and *learning for freeing. */
static void orphan_take(int i, MPI_Group *group, xchg_learning_t **learning)
{
    *group = orphans[i].group;
    *learning = orphans[i].learning;
    memmove(&orphans[i], &orphans[i + 1], (size_t)(norphans - i - 1) * sizeof orphans[0]);
    norphans--;
}

/* Keep a going channel's domain (its group and learning are the orphan's from here on). */
static void orphan_keep(MPI_Group group, uint64_t origin, xchg_learning_t *learning)
{
    MPI_Group old_group = MPI_GROUP_NULL;
    xchg_learning_t *old_learning = NULL;
    pthread_mutex_lock(&lock);
    if (norphans == ORPHANS)
        orphan_take(0, &old_group, &old_learning);
    orphans[norphans].group = group;
    orphans[norphans].origin = origin;
    orphans[norphans].learning = learning;
    norphans++;
    pthread_mutex_unlock(&lock);
    if (old_group != MPI_GROUP_NULL)
        PMPI_Group_free(&old_group);
    free(old_learning);
}

/* The origin of the kept domain for group, or 0 when none is kept. */
static uint64_t orphan_origin(MPI_Group group)
{
    uint64_t origin = 0;
    pthread_mutex_lock(&lock);
    for (int i = norphans - 1; i >= 0 && !origin; i--) {
        int same = MPI_UNEQUAL;
        if (PMPI_Group_compare(group, orphans[i].group, &same) == MPI_SUCCESS && same == MPI_IDENT)
            origin = orphans[i].origin;
    }
    pthread_mutex_unlock(&lock);
    return origin;
}

/* The kept domain of that origin, taken out of the kept ones (NULL when none is kept). With
 * adopt 0 it is freed instead: the ranks did not all keep it. */
static xchg_learning_t *orphan_claim(uint64_t origin, int adopt)
{
    MPI_Group group = MPI_GROUP_NULL;
    xchg_learning_t *learning = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < norphans; i++)
        if (orphans[i].origin == origin) {
            orphan_take(i, &group, &learning);
            break;
        }
    pthread_mutex_unlock(&lock);
    if (group != MPI_GROUP_NULL)
        PMPI_Group_free(&group);
    if (!adopt) {
        free(learning);
        learning = NULL;
    }
    return learning;
}

/* A random 64-bit number that differs between processes and calls. */
static uint64_t random64(void)
{
    static uint64_t state;
    struct timespec now;
    uint64_t x;

    clock_gettime(CLOCK_MONOTONIC, &now);
    x = __atomic_add_fetch(&state, 0x9E3779B97F4A7C15ull, __ATOMIC_RELAXED) ^
        ((uint64_t)now.tv_nsec << 20) ^ (uint64_t)now.tv_sec ^ ((uint64_t)getpid() << 40) ^
        (uint64_t)(uintptr_t)&now;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x;
}

/* Mark slot s of c taken (lock held). */
static void mark_slot(xchg_channel_t *c, int s)
{
    c->used[s / 64] |= 1ull << (s % 64);
    c->nused++;
}

/* The lowest slot free on c, taken (lock held); c has one. */
static int take_lowest(xchg_channel_t *c)
{
    int w = 0, s;
    while (c->used[w] == UINT64_MAX)
        w++;
    s = 64 * w + __builtin_ctzll(~c->used[w]);
    mark_slot(c, s);
    return s;
}

/* The channel for group that this rank proposes (a reference taken, and its lowest free slot,
 * *slot), or NULL. */
static xchg_channel_t *propose(MPI_Group group, int *slot)
{
    xchg_channel_t *best = NULL;
    pthread_mutex_lock(&lock);
    for (xchg_channel_t *c = channels; c; c = c->next) {
        int same = MPI_UNEQUAL;
        if (c->nused >= CHANNEL_SLOTS || (best && best->id < c->id))
            continue;
        if (PMPI_Group_compare(group, c->group, &same) == MPI_SUCCESS && same == MPI_IDENT)
            best = c;
    }
    if (best) {
        nidle -= best->refs++ == 0;
        *slot = take_lowest(best);
    }
    pthread_mutex_unlock(&lock);
    return best;
}

/* Unlink c from the list (lock held). */
static void unlink_channel(xchg_channel_t *c)
{
    xchg_channel_t **at = &channels;
    while (*at != c)
        at = &(*at)->next;
    *at = c->next;
    nchannels--;
}

/* Free what a channel out of the list holds; its domain is kept when keep (file header). */
static void channel_free(xchg_channel_t *c, int keep)
{
    PMPI_Comm_free(&c->comm);
    if (keep) {
        orphan_keep(c->group, c->id, c->learning);
    } else {
        PMPI_Group_free(&c->group);
        free(c->learning);
    }
    free(c);
}

/* Drop a reference; the channel goes with the last one, and its learning domain is kept (file
 * header) unless MPI_Finalize began; the world's group's stays idle instead, with its domain. */
static void release(xchg_channel_t *c)
{
    int last, keep = 0;
    pthread_mutex_lock(&lock);
    last = --c->refs == 0;
    /* the board's channel is the one kept idle where there is a board (not under
     * MPI_THREAD_MULTIPLE: no board there) */
    if (last && !closing && !xchg_config.thread_multiple &&
        (board.channel ? c == board.channel : c->world && nidle == 0)) {
        nidle++;
        last = 0;
    } else if (last) {
        unlink_channel(c);
        keep = c->learning && !closing;
    }
    pthread_mutex_unlock(&lock);
    if (last)
        channel_free(c, keep);
}

/* Take slot s on this rank when it is free; 1 on success. */
static int take_slot(xchg_channel_t *c, int s)
{
    int ok;
    pthread_mutex_lock(&lock);
    ok = !(c->used[s / 64] >> (s % 64) & 1);
    if (ok)
        mark_slot(c, s);
    pthread_mutex_unlock(&lock);
    return ok;
}

static void free_slot(xchg_channel_t *c, int s)
{
    pthread_mutex_lock(&lock);
    c->used[s / 64] &= ~(1ull << (s % 64));
    c->nused--;
    pthread_mutex_unlock(&lock);
}

/* Step 2 of the header: a slot free on every rank, taken everywhere; -1 when none could be. */
static int agree_slot(xchg_channel_t *c, MPI_Comm comm)
{
    uint64_t bits[SLOT_WORDS + 1], all[SLOT_WORDS + 1];

    for (int try = 0; try < SLOT_TRIES; try++) {
        int slot = -1, mine, every;
        pthread_mutex_lock(&lock);
        memcpy(bits, c->used, sizeof c->used);
        pthread_mutex_unlock(&lock);
        bits[SLOT_WORDS] = random64() % CHANNEL_SLOTS; /* the start, agreed by BOR: any bits */
        if (xchg_own_allreduce(bits, all, SLOT_WORDS + 1, MPI_UINT64_T, MPI_BOR, comm) !=
            MPI_SUCCESS)
            return -1;
        for (int i = 0; i < CHANNEL_SLOTS && slot < 0; i++) {
            int s = (int)((all[SLOT_WORDS] + (uint64_t)i) % CHANNEL_SLOTS);
            if (!(all[s / 64] >> (s % 64) & 1))
                slot = s;
        }
        if (slot < 0)
            return -1; /* full on some rank: the same answer everywhere */
        mine = take_slot(c, slot);
        if (xchg_own_allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
            every = 0;
        if (every)
            return slot;
        if (mine)
            free_slot(c, slot);
    }
    return -1;
}

/* Whether group is MPI_COMM_WORLD's. */
static int is_world(MPI_Group group)
{
    MPI_Group world;
    int same = MPI_UNEQUAL;
    if (PMPI_Comm_group(MPI_COMM_WORLD, &world) != MPI_SUCCESS)
        return 0;
    if (PMPI_Group_compare(group, world, &same) != MPI_SUCCESS)
        same = MPI_UNEQUAL;
    PMPI_Group_free(&world);
    return same == MPI_IDENT;
}

/* Step 3 of the header: a new channel, duplicated from comm, holding slot 0; NULL (on every
 * rank) when it cannot be made. */
static xchg_channel_t *create(MPI_Comm comm, MPI_Group group)
{
    xchg_channel_t *c = calloc(1, sizeof *c);
    MPI_Errhandler user;
    MPI_Comm dup = MPI_COMM_NULL;
    /* the new channel's id proposals, and the origin of the domain this rank kept for the group
     * (as its largest and, complemented, its least: equal when every rank kept the same one) */
    uint64_t origin = orphan_origin(group), mine[3] = {random64() | 1, origin, ~origin}, agreed[3];
    int made, all = 0;
    double began;

    PMPI_Comm_get_errhandler(comm, &user);
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    made = xchg_own_comm_dup(comm, &dup) == MPI_SUCCESS;
    PMPI_Comm_set_errhandler(comm, user);
    PMPI_Errhandler_free(&user);
    made = made && c != NULL;
    if (xchg_own_allreduce(&made, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        all = 0;
    began = xchg_learn_clock();
    if (all && xchg_own_allreduce(mine, agreed, 3, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
        all = 0;
    if (!all) {
        if (dup != MPI_COMM_NULL)
            PMPI_Comm_free(&dup);
        free(c);
        return NULL;
    }
    c->agreed_s = xchg_learn_clock() - began;
    if (origin) /* adopted where every rank kept the same domain, else dropped */
        c->learning = orphan_claim(origin, agreed[1] == origin && agreed[2] == ~origin);
    PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    c->comm = dup;
    PMPI_Group_union(group, group, &c->group); /* a group of our own */
    c->world = is_world(group);
    c->id = agreed[0];
    c->refs = 1;
    c->nused = 1;
    c->used[0] = 1;
    pthread_mutex_lock(&lock);
    c->next = channels;
    channels = c;
    nchannels++;
    nmade++;
    pthread_mutex_unlock(&lock);
    return c;
}

/* XCHG_VERBOSE: a new channel, or none (the communicator is then the MPI library's alone). */
static void announce(int size, int made, const uint64_t *agreed)
{
    fprintf(stderr, "xchg: a private channel for a communicator of %d ranks%s (%s)\n", size,
            made ? "" : " could not be made: the MPI library serves it",
            agreed[2]                 ? "a rank holds the most channels a process may"
            : agreed[0] == 0          ? "none yet for its group"
            : agreed[0] != ~agreed[1] ? "its ranks hold different ones"
                                      : "no tag slot free on every rank");
    fflush(stderr);
}

/* Step 1's maximum of n values over comm's ranks: through the board where comm has the world's
 * processes (in any order: every one of them takes part, at its world rank's place) and the
 * board's half holds them all, else an allreduce of comm. Which of the two is the same on every
 * rank: the board exists on all or none, and the group is comm's. XCHG_STRICT=1 (the tests)
 * makes the allreduce too and fails the attachment where the two differ. */
static int agree_proposals(MPI_Group group, const uint64_t *prop, uint64_t *agreed, int n,
                           MPI_Comm comm)
{
    int same = MPI_UNEQUAL, rc;
    uint64_t check[5 + XCHG_ATTACH_CARRIED];

    if (!board.ctx.shm ||
        (size_t)board.ctx.size * (size_t)n * sizeof *prop > board.ctx.shm->half_bytes ||
        PMPI_Group_compare(group, board.channel->group, &same) != MPI_SUCCESS ||
        same == MPI_UNEQUAL)
        return xchg_own_allreduce(prop, agreed, n, MPI_UINT64_T, MPI_MAX, comm);
    memcpy(agreed, prop, (size_t)n * sizeof *prop);
    rc = xchg_agree_max(&board.ctx, agreed, n);
    board.attached++;
    if (rc != MPI_SUCCESS || !xchg_config.strict)
        return rc;
    rc = PMPI_Allreduce(prop, check, n, MPI_UINT64_T, MPI_MAX, comm);
    if (rc == MPI_SUCCESS && memcmp(check, agreed, (size_t)n * sizeof *prop) != 0) {
        fprintf(stderr,
                "xchg: strict: the board's agreement differs from an allreduce's (world rank "
                "%d of %d)\n",
                board.ctx.rank, board.ctx.size);
        rc = MPI_ERR_INTERN;
    }
    return rc;
}

void xchg_channel_board(xchg_ctx_t *warm)
{
    xchg_channel_t *c = warm->channel;
    /* agreed on every rank: the warm-up's segment, its channel, whether that is the world's */
    if (!warm->shm || !c || !c->world || warm->nnodes != 1 || xchg_config.thread_multiple ||
        board.ctx.shm)
        return;
    board.channel = c;
    board.ctx.comm = c->comm;
    board.ctx.rank = board.ctx.local_rank = warm->rank;
    board.ctx.size = board.ctx.local_size = warm->size;
    board.ctx.nnodes = 1;
    board.ctx.shm_yield = warm->shm_yield;
    /* what an agreement through it touches, mapped now: else the first two attachments (one a
     * half) each wait for the node's ranks' page faults, 6 to 12 us more in all on the 2-core
     * VM than without a board */
    xchg_shm_prefault(warm, (size_t)warm->size * (5 + XCHG_ATTACH_CARRIED) * sizeof(uint64_t), 0);
    board.ctx.shm = xchg_shm_detach(warm);
}

int xchg_channel_attach(xchg_ctx_t *ctx, MPI_Comm comm, MPI_Group group, uint64_t *carried,
                        int ncarried)
{
    xchg_channel_t *mine = NULL, *got = NULL;
    uint64_t prop[5 + XCHG_ATTACH_CARRIED], agreed[5 + XCHG_ATTACH_CARRIED];
    int rc, slot = -1, taken = -1;

    /* step 1: the proposals' least (as ~max of ~id) and largest, whether any rank is full, the
     * proposed slots' least and largest (slot + 1: 0 with no channel), and the carried values */
    mine = propose(group, &taken);
    pthread_mutex_lock(&lock);
    prop[2] = nchannels - nidle >= CHANNELS_MAX;
    pthread_mutex_unlock(&lock);
    prop[0] = mine ? mine->id : 0;
    prop[1] = ~prop[0];
    prop[3] = (uint64_t)(taken + 1);
    prop[4] = ~prop[3];
    memcpy(prop + 5, carried, (size_t)ncarried * sizeof *carried);
    rc = agree_proposals(group, prop, agreed, 5 + ncarried, comm);
    for (int i = 0; i < ncarried; i++)
        carried[i] = rc == MPI_SUCCESS ? agreed[5 + i] : 0;
    if (rc == MPI_SUCCESS && agreed[0] != 0 && agreed[0] == ~agreed[1] &&
        agreed[3] == ~agreed[4]) {
        slot = taken; /* every rank proposed this channel and this slot */
        got = mine;
    } else if (mine) {
        free_slot(mine, taken);
    }
    if (rc == MPI_SUCCESS && !got && agreed[0] != 0 && agreed[0] == ~agreed[1]) {
        slot = agree_slot(mine, comm);
        if (slot >= 0)
            got = mine;
    }
    if (mine && !got)
        release(mine);
    if (rc == MPI_SUCCESS && !got) {
        if (!agreed[2]) {
            got = create(comm, group);
            slot = 0;
        }
        /* a program may make thousands of communicators of one rank: only a refusal of one */
        if (xchg_config.verbose && ctx->rank == 0 && (ctx->size > 1 || !got))
            announce(ctx->size, got != NULL, agreed);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    if (!got) {
        ctx->passthrough = 1; /* agreed: every rank passes this communicator's calls on */
        return MPI_SUCCESS;
    }
    ctx->channel = got;
    ctx->comm = got->comm;
    ctx->slot = slot;
    ctx->tag = 2 * slot;
    return MPI_SUCCESS;
}

void xchg_channel_detach(xchg_ctx_t *ctx)
{
    xchg_channel_t *c = ctx->channel;
    if (!c)
        return;
    free_slot(c, ctx->slot);
    ctx->channel = NULL;
    ctx->comm = MPI_COMM_NULL;
    release(c);
}

int xchg_channel_count(int *made, int *boarded)
{
    int n;
    pthread_mutex_lock(&lock);
    n = nchannels;
    *made = nmade;
    *boarded = board.attached;
    pthread_mutex_unlock(&lock);
    return n;
}

void xchg_channel_finalize(void)
{
    xchg_channel_t *idle = NULL;
    xchg_shm_drop(board.ctx.shm);
    board.ctx.shm = NULL;
    board.channel = NULL;
    pthread_mutex_lock(&lock);
    closing = 1;
    for (xchg_channel_t *c = channels; c && !idle; c = c->next)
        if (c->refs == 0)
            idle = c;
    if (idle) {
        unlink_channel(idle);
        nidle--;
    }
    pthread_mutex_unlock(&lock);
    if (idle)
        channel_free(idle, 0);
    for (;;) {
        MPI_Group group = MPI_GROUP_NULL;
        xchg_learning_t *learning = NULL;
        pthread_mutex_lock(&lock);
        if (norphans > 0)
            orphan_take(norphans - 1, &group, &learning);
        pthread_mutex_unlock(&lock);
        if (group == MPI_GROUP_NULL)
            return;
        PMPI_Group_free(&group);
        free(learning);
    }
}

void xchg_channel_agreement_cost(xchg_ctx_t *ctx, double seconds)
{
    xchg_channel_t *c = ctx->channel;
    if (!c)
        return;
    pthread_mutex_lock(&lock);
    c->agreed_s = seconds;
    if (c->learning)
        c->learning->agree_local = seconds;
    pthread_mutex_unlock(&lock);
}

xchg_learning_t *xchg_channel_learning(xchg_ctx_t *ctx)
{
    xchg_channel_t *c = ctx->channel;
    xchg_learning_t *dom;
    if (!c)
        return NULL;
    pthread_mutex_lock(&lock);
    if (!c->learning && (c->learning = xchg_learning_new()) != NULL)
        c->learning->agree_local = c->agreed_s; /* an agreement's cost before its first own */
    dom = c->learning;
    pthread_mutex_unlock(&lock);
    return dom;
}

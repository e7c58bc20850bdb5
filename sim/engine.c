/*
 * engine.c: p simulated ranks in one process, and the in-memory round layer they share.
 *
 * Every rank is a coroutine (ucontext: its own stack of stack_bytes, with a guard page below
 * it) that runs the unmodified algorithm function of algos/ on its own xchg_ctx_t. The only
 * place a rank gives up the processor is xchg_exchange(), defined here instead of in
 * algos/round.c: the simulator is linked with every algos file except round.c, so the
 * algorithm files cannot tell the two apart. One scheduler runs the ready ranks in FIFO order,
 * one at a time, so a run is deterministic and needs no locks.
 *
 * Matching. A message's data moves when both its send and its receive are posted (rendezvous,
 * stricter than MPI's eager protocol: a program that relies on buffering deadlocks here, and
 * the deadlock is reported). The k-th message from rank s to rank d goes to the k-th receive
 * of rank d from rank s: MPI's non-overtaking order. A rank's round ends only when all its
 * messages are matched, so the unmatched sends of s to d all lie in s's current round, and the
 * first unmatched one there is the one the first unmatched receive of d from s takes. A
 * receive must name exactly the bytes its sender sends (as in round.c, where both sides cut
 * the message into the same pieces); a mismatch is a simulator error naming both ranks and
 * rounds. Messages to self are copied at posting (the i-th self send to the i-th self receive,
 * as round.c does).
 *
 * The log. Every round is recorded with its sends (peer, bytes) and receives (which send each
 * matched), and the order in which rounds completed: every round's senders started their
 * rounds before it completed, so net.c can replay the log in that order on a virtual clock.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim.h"

static sim_world_t *world; /* the world being run (one at a time, one thread) */

sim_rank_t *sim_rank_of(xchg_ctx_t *ctx)
{
    return (sim_rank_t *)ctx;
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Record the first error and return to the scheduler, which stops the run. */
static void fail(const char *fmt, ...)
{
    va_list ap;
    if (!world->failed) {
        va_start(ap, fmt);
        vsnprintf(world->error, sizeof world->error, fmt, ap);
        va_end(ap);
        world->failed = 1;
    }
    swapcontext(&world->ranks[world->current].uc, &world->sched);
    abort(); /* a failed world is never resumed */
}

static int grow(void **ptr, size_t *cap, size_t need, size_t size)
{
    size_t n = *cap ? *cap : 16;
    void *p;
    if (need <= *cap)
        return 0;
    while (n < need)
        n *= 2;
    p = realloc(*ptr, n * size);
    if (!p)
        return -1;
    *ptr = p;
    *cap = n;
    return 0;
}

sim_world_t *sim_world_new(int p, const int *node_of, const xchg_topo_t *topo, size_t stack_bytes)
{
    sim_world_t *w = calloc(1, sizeof *w);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    if (!w)
        return NULL;
    w->p = p;
    w->topo = *topo;
    w->ranks = calloc((size_t)p, sizeof *w->ranks);
    w->node_of = calloc((size_t)p, sizeof *w->node_of);
    w->queue = calloc((size_t)p, sizeof *w->queue);
    if (!w->ranks || !w->node_of || !w->queue)
        goto fail;
    for (int i = 0; i < p; i++)
        w->node_of[i] = node_of ? node_of[i] : 0;
    for (int i = 0; i < p; i++)
        w->nnodes = w->node_of[i] + 1 > w->nnodes ? w->node_of[i] + 1 : w->nnodes;
    w->node_size = calloc((size_t)w->nnodes, sizeof *w->node_size);
    if (!w->node_size)
        goto fail;
    for (int i = 0; i < p; i++)
        w->node_size[w->node_of[i]]++;
    stack_bytes = (stack_bytes + page - 1) / page * page;
    for (int i = 0; i < p; i++) {
        sim_rank_t *r = &w->ranks[i];
        xchg_ctx_t *c = &r->ctx;
        int local = 0;
        c->comm = MPI_COMM_NULL;
        c->rank = i;
        c->size = p;
        c->nnodes = w->nnodes;
        c->node = w->node_of[i];
        for (int j = 0; j < i; j++)
            local += w->node_of[j] == c->node;
        c->local_rank = local;
        c->local_size = w->node_size[c->node];
        c->node_of = w->node_of;
        c->node_size = w->node_size;
        c->node_pus = 1;
        c->topo = *topo;
        r->stack_len = stack_bytes + page;
        r->stack = mmap(NULL, r->stack_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
        if (r->stack == MAP_FAILED) {
            r->stack = NULL;
            goto fail;
        }
        mprotect(r->stack, page, PROT_NONE); /* an overflow faults instead of corrupting */
    }
    return w;
fail:
    sim_world_free(w);
    return NULL;
}

void sim_world_free(sim_world_t *w)
{
    if (!w)
        return;
    for (int i = 0; w->ranks && i < w->p; i++) {
        sim_rank_t *r = &w->ranks[i];
        if (r->stack)
            munmap(r->stack, r->stack_len);
        free(r->smatched);
        free(r->rmatched);
        free(r->sorder);
        free(r->rorder);
        free(r->rounds);
        free(r->slog);
        free(r->rlog);
        xchg_scratch_free(&r->ctx);
    }
    free(w->ranks);
    free(w->node_of);
    free(w->node_size);
    free(w->queue);
    free(w->order);
    free(w);
}

void sim_mark_collective(xchg_ctx_t *ctx)
{
    sim_rank_t *r = sim_rank_of(ctx);
    r->coll_first = r->nrounds;
}

/* The ranks' entry point: the body, then back to the scheduler for good. */
static sim_body_fn *run_body;
static void *run_arg;

static void trampoline(void)
{
    sim_rank_t *r = &world->ranks[world->current];
    run_body(&r->ctx, run_arg);
    r->done = 1;
    world->ndone++;
}

static void make_ready(sim_rank_t *r)
{
    int id = (int)(r - world->ranks);
    world->queue[(world->qhead + world->qlen) % world->p] = id;
    world->qlen++;
}

static void round_complete(sim_rank_t *r)
{
    size_t n = world->norder;
    if (grow((void **)&world->order, &world->order_cap, 2 * (n / 2 + 1), sizeof *world->order))
        fail("out of memory for the log of completed rounds");
    world->order[n] = (int32_t)(r - world->ranks);
    world->order[n + 1] = r->nrounds - 1;
    world->norder = n + 2;
    if (r->blocked) {
        r->blocked = 0;
        make_ready(r);
    }
}

/* Indices of msgs sorted by (peer, index): for lists too long to scan. */
static const xchg_msg_t *sort_msgs;
static int by_peer(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (sort_msgs[x].peer != sort_msgs[y].peer)
        return sort_msgs[x].peer < sort_msgs[y].peer ? -1 : 1;
    return x < y ? -1 : x > y;
}

#define SCAN_MAX 16 /* lists up to this long are scanned, longer ones searched */

static void index_msgs(const xchg_msg_t *msgs, int n, int *order)
{
    if (n <= SCAN_MAX)
        return;
    for (int i = 0; i < n; i++)
        order[i] = i;
    sort_msgs = msgs;
    qsort(order, (size_t)n, sizeof *order, by_peer);
}

/* The first unmatched message of the list with this peer, or -1. */
static int first_unmatched(const xchg_msg_t *msgs, int n, const int *order,
                           const uint8_t *matched, int peer)
{
    int lo = 0, hi = n;
    if (n <= SCAN_MAX) {
        for (int i = 0; i < n; i++)
            if (msgs[i].peer == peer && !matched[i])
                return i;
        return -1;
    }
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (msgs[order[mid]].peer < peer)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n && msgs[order[lo]].peer == peer; lo++)
        if (!matched[order[lo]])
            return order[lo];
    return -1;
}

/* Move the data of send si of rank src into receive ri of rank dst, and log it. */
static void deliver(sim_rank_t *src, int si, sim_rank_t *dst, int ri)
{
    const xchg_msg_t *s = &src->sends[si], *r = &dst->recvs[ri];
    sim_round_t *sr = &src->rounds[src->nrounds - 1], *dr = &dst->rounds[dst->nrounds - 1];
    int from = (int)(src - world->ranks), to = (int)(dst - world->ranks);

    size_t want = r->bytes;
    if (world->corrupt == 2 && to == world->p - 1 && from != to) {
        want++; /* the self-test of this check: a receive one byte longer than its send */
        world->corrupt = 0;
    }
    if (s->bytes != want)
        fail("message size mismatch: rank %d sends %zu bytes to rank %d in its round %d, "
             "rank %d receives %zu bytes from rank %d in its round %d",
             from, s->bytes, to, src->nrounds - 1, to, want, from, dst->nrounds - 1);
    if (s->bytes > 0 && r->buf != s->buf)
        memmove(r->buf, s->buf, s->bytes);
    if (world->corrupt == 1 && to == world->p - 1 && from != to && s->bytes > 0) {
        ((unsigned char *)r->buf)[s->bytes - 1] ^= 0x5a;
        world->corrupt = 0;
    }
    if (from != to) {
        world->messages++;
        world->bytes += s->bytes;
    }
    src->smatched[si] = 1;
    dst->rmatched[ri] = 1;
    dst->rlog[dr->first_recv + (uint32_t)ri] = (sim_recv_t){from, sr->first_send + (uint32_t)si};
    if (from == to)
        return;
    if (--src->pending == 0)
        round_complete(src);
    if (--dst->pending == 0)
        round_complete(dst);
}

static void check_peers(const xchg_msg_t *msgs, int n, const char *what, int rank, int round)
{
    for (int i = 0; i < n; i++)
        if (msgs[i].peer < 0 || msgs[i].peer >= world->p)
            fail("rank %d, round %d: %s %d names peer %d (p = %d)", rank, round, what, i,
                 msgs[i].peer, world->p);
}

/* Open a round: log entries, matched flags, the indices by peer. */
static int open_round(sim_rank_t *me, const xchg_msg_t *sends, int nsends, const xchg_msg_t *recvs,
                      int nrecvs)
{
    int most = nsends > nrecvs ? nsends : nrecvs;
    sim_round_t *rd;
    size_t cap = (size_t)me->cap, rcap = (size_t)me->rounds_cap;

    if (grow((void **)&me->rounds, &rcap, (size_t)me->nrounds + 1, sizeof *me->rounds) ||
        grow((void **)&me->slog, &me->slog_cap, me->nslog + (size_t)nsends, sizeof *me->slog) ||
        grow((void **)&me->rlog, &me->rlog_cap, me->nrlog + (size_t)nrecvs, sizeof *me->rlog))
        return -1;
    me->rounds_cap = (int)rcap;
    if ((size_t)most > cap) {
        /* the four arrays grow together, to the same capacity */
        size_t c1 = cap, c2 = cap, c3 = cap;
        if (grow((void **)&me->smatched, &c1, (size_t)most, 1) ||
            grow((void **)&me->rmatched, &c2, (size_t)most, 1) ||
            grow((void **)&me->sorder, &c3, (size_t)most, sizeof(int)) ||
            grow((void **)&me->rorder, &cap, (size_t)most, sizeof(int)))
            return -1;
        me->cap = (int)cap;
    }
    rd = &me->rounds[me->nrounds++];
    *rd = (sim_round_t){0, 0, (uint32_t)me->nslog, (uint32_t)nsends, (uint32_t)me->nrlog,
                        (uint32_t)nrecvs};
    for (int i = 0; i < nsends; i++)
        me->slog[me->nslog + (size_t)i] =
            (sim_send_t){sends[i].peer, me->nrounds - 1, sends[i].bytes, 0.0};
    me->nslog += (size_t)nsends;
    me->nrlog += (size_t)nrecvs;
    memset(me->smatched, 0, (size_t)nsends);
    memset(me->rmatched, 0, (size_t)nrecvs);
    me->sends = sends;
    me->recvs = recvs;
    me->nsends = nsends;
    me->nrecvs = nrecvs;
    index_msgs(sends, nsends, me->sorder);
    index_msgs(recvs, nrecvs, me->rorder);
    return 0;
}

/* Pair the i-th send to self with the i-th receive from self. */
static void copy_to_self(sim_rank_t *me, int rank)
{
    int s = 0, r = 0;
    for (;;) {
        while (s < me->nsends && me->sends[s].peer != rank)
            s++;
        while (r < me->nrecvs && me->recvs[r].peer != rank)
            r++;
        if (s == me->nsends || r == me->nrecvs)
            break;
        deliver(me, s++, me, r++);
    }
    if (s < me->nsends || r < me->nrecvs)
        fail("rank %d, round %d: %s to self without a matching %s", rank, me->nrounds - 1,
             s < me->nsends ? "a send" : "a receive", s < me->nsends ? "receive" : "send");
}

int xchg_exchange(xchg_ctx_t *ctx, const xchg_msg_t *sends, int nsends, const xchg_msg_t *recvs,
                  int nrecvs)
{
    sim_rank_t *me = sim_rank_of(ctx);
    int rank = ctx->rank;

    if (nsends < 0 || nrecvs < 0)
        return MPI_ERR_COUNT;
    check_peers(sends, nsends, "send", rank, me->nrounds);
    check_peers(recvs, nrecvs, "receive", rank, me->nrounds);
    if (open_round(me, sends, nsends, recvs, nrecvs) != 0)
        return MPI_ERR_NO_MEM;
    me->pending = 0;
    for (int i = 0; i < nsends; i++)
        me->pending += sends[i].peer != rank;
    for (int i = 0; i < nrecvs; i++)
        me->pending += recvs[i].peer != rank;
    copy_to_self(me, rank);
    me->pending++; /* held until every message is posted, so the round completes once */

    /* match against the peers that are waiting in their rounds */
    for (int i = 0; i < nrecvs; i++) {
        sim_rank_t *src = &world->ranks[recvs[i].peer];
        int si;
        if (recvs[i].peer == rank || !src->blocked)
            continue;
        si = first_unmatched(src->sends, src->nsends, src->sorder, src->smatched, rank);
        if (si >= 0 && first_unmatched(recvs, nrecvs, me->rorder, me->rmatched, recvs[i].peer) == i)
            deliver(src, si, me, i);
    }
    for (int i = 0; i < nsends; i++) {
        sim_rank_t *dst = &world->ranks[sends[i].peer];
        int ri;
        if (sends[i].peer == rank || !dst->blocked || me->smatched[i])
            continue;
        ri = first_unmatched(dst->recvs, dst->nrecvs, dst->rorder, dst->rmatched, rank);
        if (ri >= 0 && first_unmatched(sends, nsends, me->sorder, me->smatched, sends[i].peer) == i)
            deliver(me, i, dst, ri);
    }
    if (--me->pending == 0) {
        round_complete(me);
        return MPI_SUCCESS;
    }
    me->blocked = 1;
    swapcontext(&me->uc, &world->sched);
    return MPI_SUCCESS;
}

/* A deadlock: every unfinished rank waits. Name the first few and what they wait for. */
static void report_deadlock(sim_world_t *w)
{
    size_t used = (size_t)snprintf(w->error, sizeof w->error,
                                   "deadlock: %d of %d ranks wait for messages that are never sent",
                                   w->p - w->ndone, w->p);
    int shown = 0;
    for (int i = 0; i < w->p && shown < 4 && used < sizeof w->error; i++) {
        sim_rank_t *r = &w->ranks[i];
        int peer = -1, is_send = 0;
        if (r->done)
            continue;
        for (int j = 0; j < r->nrecvs && peer < 0; j++)
            if (!r->rmatched[j])
                peer = r->recvs[j].peer;
        for (int j = 0; j < r->nsends && peer < 0; j++)
            if (!r->smatched[j]) {
                peer = r->sends[j].peer;
                is_send = 1;
            }
        used += (size_t)snprintf(w->error + used, sizeof w->error - used,
                                 "; rank %d in round %d (%s rank %d)", i, r->nrounds - 1,
                                 is_send ? "sending to" : "receiving from", peer);
        shown++;
    }
    w->failed = 1;
}

int sim_world_run(sim_world_t *w, sim_body_fn *body, void *arg)
{
    world = w;
    run_body = body;
    run_arg = arg;
    for (volatile int i = 0; i < w->p; i++) {
        sim_rank_t *r = &w->ranks[i];
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        if (getcontext(&r->uc) != 0) {
            snprintf(w->error, sizeof w->error, "getcontext failed");
            return -1;
        }
        r->uc.uc_stack.ss_sp = r->stack + page;
        r->uc.uc_stack.ss_size = r->stack_len - page;
        r->uc.uc_link = &w->sched;
        makecontext(&r->uc, trampoline, 0);
        make_ready(r);
    }
    while (w->qlen > 0 && !w->failed) {
        w->current = w->queue[w->qhead];
        w->qhead = (w->qhead + 1) % w->p;
        w->qlen--;
        swapcontext(&w->sched, &w->ranks[w->current].uc);
    }
    if (!w->failed && w->ndone < w->p)
        report_deadlock(w);
    world = NULL;
    return w->failed ? -1 : 0;
}

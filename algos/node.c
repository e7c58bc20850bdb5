/*
 * node.c: the passes of a node algorithm's call (MPI_Alltoall's and MPI_Alltoallv's node,
 * alltoall_node.c and alltoallv_node.c) through the node's shared segment, following the plan
 * of algos/sched/node.h.
 *
 * A pass t (half = this pass's half of the segment, windows as the plan lays them out):
 *   1. every rank copies its bytes of the pass (stream bytes [t W, (t + 1) W)) from its send
 *      buffer into its node's windows: the local stream, the message to each other node;
 *   2. the node synchronises (all its ranks' bytes are in);
 *   3. the node's leaders run their steps of the pass, round by round, each leader's sending
 *      side as its member j and its receiving side as member n_x - 1 - j (one rank may be
 *      both): one xchg_exchange for each k of a rank's steps (k = cfg.ports: 1, the factor
 *      schedule's one message each way of a leader at a time; more, the messages of k steps in
 *      flight at once, where start-ups between nodes cost more than the link's bytes),
 *      straight from the window of the message to y into the window of y's receiving rank for
 *      the message from this node (the statistics behind the first pass's last part, when
 *      carrying); the other ranks copy their local blocks out meanwhile. No batch waits on a
 *      message that its other end has not posted for good: the earliest message left anywhere
 *      (in the order pass, round, part) is in the current batches of both its ranks, so it
 *      completes, and then the next;
 *   4. the node synchronises again (every message of the pass has arrived; skipped on a
 *      one-node communicator, which has no messages);
 *   5. every rank copies its bytes of the pass from the windows of the other nodes' messages.
 * A node runs as many passes as its longest stream needs (equal on its ranks); the pieces of a
 * pair's message are in the same passes at both ends.
 */
#include <string.h>

#include "node.h"

int xchg_node_layout_push(xchg_ctx_t *ctx, xchg_node_layout_t *lay)
{
    void *ws = xchg_scratch_push(ctx, xchg_node_workspace_bytes(ctx->size, ctx->nnodes));
    if (!ws)
        return MPI_ERR_NO_MEM;
    return xchg_node_init(lay, ctx->size, ctx->nnodes, ctx->node_of, ws) == 0 ? MPI_SUCCESS
                                                                              : MPI_ERR_INTERN;
}

int xchg_node_call_push(xchg_ctx_t *ctx, xchg_node_call_t *c)
{
    size_t nn = (size_t)c->lay.nnodes, p = (size_t)c->lay.nranks;
    size_t *all = xchg_scratch_push(ctx, (2 * nn + 2 * p) * sizeof *all);
    int most = c->cfg.leaders < c->lay.max_size ? c->cfg.leaders : c->lay.max_size;

    c->batch = xchg_node_batch(&c->lay, &c->cfg);
    c->steps = xchg_scratch_push(ctx, (size_t)(most > 1 ? most : 1) * sizeof *c->steps);
    c->sends = xchg_scratch_push(ctx, 2 * (size_t)c->batch * sizeof *c->sends);
    if (!all || !c->steps || !c->sends)
        return MPI_ERR_NO_MEM;
    c->recvs = c->sends + c->batch;
    memset(all, 0, (2 * nn + 2 * p) * sizeof *all);
    c->stream_len = all;
    c->in_len = all + nn;
    c->send_at = all + 2 * nn;
    c->recv_at = c->send_at + p;
    c->node = ctx->node;
    c->me = ctx->local_rank;
    c->send_as = c->me < xchg_node_leaders(&c->lay, c->node, c->cfg.leaders) ? c->me : -1;
    c->recv_as = xchg_node_receives_for(&c->lay, c->node, c->cfg.leaders, c->me);
    return MPI_SUCCESS;
}

/* The bytes [lo, hi) of a block at `at` in its stream that fall in pass t; 0 when none. */
static int in_pass(const xchg_node_call_t *c, size_t at, size_t len, size_t t, size_t *lo,
                   size_t *hi)
{
    size_t start = t * c->win.window, end = start + c->win.window;
    *lo = at > start ? at : start;
    *hi = at + len < end ? at + len : end;
    return *lo < *hi;
}

/* Step 1: this rank's bytes of pass t into the windows. */
static void write_pass(const xchg_node_call_t *c, char *half, size_t t)
{
    int x = c->node;
    for (int j = 0; j < c->lay.nranks; j++) {
        int y = c->lay.node_of[j],
            w = y == x ? xchg_node_local_window() : xchg_node_out_window(x, y);
        size_t at = c->send_at[j], lo, hi;
        if (j == c->lay.members[c->lay.first[x] + c->me] ||
            !in_pass(c, at, c->sendbytes[j], t, &lo, &hi))
            continue;
        xchg_copy(half + xchg_node_window_at(&c->win, w) + (lo - t * c->win.window),
                  c->send + c->sendoffs[j] + (lo - at), hi - lo);
    }
}

/* Steps 3 and 5: this rank's bytes of pass t out of the local window (local) or the windows of
 * the other nodes' messages. */
static void read_pass(const xchg_node_call_t *c, const char *half, size_t t, int local)
{
    int x = c->node;
    for (int j = 0; j < c->lay.nranks; j++) {
        int y = c->lay.node_of[j];
        size_t at = c->recv_at[j], lo, hi;
        if ((y == x) != local || j == c->lay.members[c->lay.first[x] + c->me] ||
            !in_pass(c, at, c->recvbytes[j], t, &lo, &hi))
            continue;
        xchg_copy(c->recv + c->recvoffs[j] + (lo - at),
                  half +
                      xchg_node_window_at(&c->win, local
                                                       ? xchg_node_local_window()
                                                       : xchg_node_in_window(c->lay.nnodes, x, y)) +
                      (lo - t * c->win.window),
                  hi - lo);
    }
}

/* This rank's part of a step into the batch: as the sender of its leader, the message to y's
 * receiver; as the receiver, the message from y's sender. */
static void leader_step(const xchg_node_call_t *c, char *half, int y, const xchg_node_step_t *st,
                        int sends, int recvs, int *nsends, int *nrecvs)
{
    int nn = c->lay.nnodes, at = c->lay.first[y];
    char *out = half + xchg_node_window_at(&c->win, xchg_node_out_window(c->node, y));
    char *in = half + xchg_node_window_at(&c->win, xchg_node_in_window(nn, c->node, y));

    if (sends && st->send_stats)
        memcpy(out + st->send_off + st->send_bytes - XCHG_NODE_STATS, c->stats, XCHG_NODE_STATS);
    if (sends && st->send)
        c->sends[(*nsends)++] =
            (xchg_msg_t){c->lay.members[at + xchg_node_receiver(&c->lay, y, st->peer_leader)],
                         out + st->send_off, st->send_bytes};
    if (recvs && st->recv)
        c->recvs[(*nrecvs)++] =
            (xchg_msg_t){c->lay.members[at + st->peer_leader], in + st->recv_off, st->recv_bytes};
}

/* Step 3 for a leader's sender or receiver (or both): its steps of pass t, round by round,
 * batch of them at once. */
static int leader_pass(xchg_ctx_t *ctx, const xchg_node_call_t *c, char *half, size_t t)
{
    xchg_node_step_t *steps = c->steps;
    int x = c->node, rounds = xchg_node_rounds(c->lay.nnodes), rc = MPI_SUCCESS;
    int held = 0, nsends = 0, nrecvs = 0;
    for (int f = 0; f < rounds && rc == MPI_SUCCESS; f++) {
        int y = xchg_node_partner(&c->lay, x, f), n;
        if (y == x)
            continue;
        n = xchg_node_steps(&c->lay, &c->cfg, x, y, f, t, c->stream_len[y], c->in_len[y], steps);
        for (int k = 0; k < n && rc == MPI_SUCCESS; k++) {
            int sends = steps[k].leader == c->send_as, recvs = steps[k].leader == c->recv_as;
            if (!sends && !recvs)
                continue;
            leader_step(c, half, y, &steps[k], sends, recvs, &nsends, &nrecvs);
            if (++held == c->batch) {
                rc = xchg_exchange(ctx, c->sends, nsends, c->recvs, nrecvs);
                held = nsends = nrecvs = 0;
            }
        }
    }
    if (held > 0 && rc == MPI_SUCCESS)
        rc = xchg_exchange(ctx, c->sends, nsends, c->recvs, nrecvs);
    return rc;
}

/* The passes this node runs: its longest stream's (one at least when the statistics ride). */
static size_t node_passes(const xchg_node_call_t *c)
{
    size_t most = 0;
    for (int y = 0; y < c->lay.nnodes; y++) {
        size_t out = xchg_node_passes(c->stream_len[y], c->win.window);
        size_t in = y == c->node ? 0 : xchg_node_passes(c->in_len[y], c->win.window);
        most = out > most ? out : most;
        most = in > most ? in : most;
    }
    return most == 0 && c->cfg.carry && c->lay.nnodes > 1 ? 1 : most;
}

/* The statistics the other nodes sent in the first pass, into c->stats. */
static void read_stats(xchg_node_call_t *c, const char *half)
{
    for (int y = 0; y < c->lay.nnodes; y++) {
        const char *in;
        uint64_t theirs[3];
        if (y == c->node)
            continue;
        in = half + xchg_node_window_at(&c->win, xchg_node_in_window(c->lay.nnodes, c->node, y));
        memcpy(theirs, in + xchg_node_piece(c->in_len[y], c->win.window, 0), sizeof theirs);
        for (int i = 0; i < 3; i++)
            c->stats[i] = theirs[i] > c->stats[i] ? theirs[i] : c->stats[i];
    }
}

int xchg_node_run(xchg_ctx_t *ctx, xchg_node_call_t *c)
{
    int rc = MPI_SUCCESS, leader = c->send_as >= 0 || c->recv_as >= 0;
    size_t passes = node_passes(c);

    for (size_t t = 0; t < passes; t++) {
        char *half = xchg_shm_half(ctx);
        write_pass(c, half, t);
        xchg_shm_sync(ctx);
        if (leader && rc == MPI_SUCCESS)
            rc = leader_pass(ctx, c, half, t);
        read_pass(c, half, t, 1);
        if (c->lay.nnodes > 1)
            xchg_shm_sync(ctx);
        read_pass(c, half, t, 0);
        if (t == 0 && c->cfg.carry)
            read_stats(c, half);
        xchg_shm_next(ctx);
    }
    return rc;
}

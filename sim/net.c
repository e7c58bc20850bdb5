/*
 * net.c: the network models and the virtual clock.
 *
 * The clock. A round of a rank starts when its previous round ended (its first round at 0; the
 * collective's first round, after an alltoallv's agreement, when the last rank has ended its
 * agreement: the agreement and the collective are timed apart). A message arrives at its
 * sender's round start plus its cost; a round ends when all its messages have arrived and all
 * its sends are out (the latest of those times, or its start for an empty round). The log is
 * replayed in the order the rounds completed in the run (engine.c), in which every sender's
 * round comes before the rounds that receive from it, so one pass suffices and the result is
 * the same on every run.
 *
 * Costs (m the message's bytes, S the bytes of all the sender's messages of the round to other
 * ranks, so that S = k m for k equal messages; "step" = the sender's round index, the rounds
 * that run at about the same time on every rank):
 *   self:  rho m (a local copy);
 *   flat:  beta + tau (m + port_share (S - m)): k messages in flight share the rank's link as
 *          xchg_machine_t says, beta + m tau (1 + port_share (k - 1)) for equal messages;
 *   nodes: inside a node as flat; between nodes beta_inter + tau_inter max(m + port_share (S - m),
 *          B / inject), B the bytes all ranks of the sender's node send off the node in that
 *          step (the node's interface carries inject messages at full speed: hier's
 *          single-port model with inject = 1); inject = 0: no limit;
 *   torus: beta_inter + tau_inter L (every torus node a node of one rank; as beta and tau when
 *          not given), L the most bytes any directed link of the message's path carries in
 *          that step (all messages of the step that cross it, this one included): dimension-
 *          order routing (rows first, then columns, the shorter way round; a node half way
 *          round in a dimension gets half the message each way: torus_ways), every link its
 *          own bandwidth 1/tau, a node drives all four of its links at once (all-port); no
 *          per-hop latency (cut-through).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static double flat_cost(const xchg_machine_t *m, double beta, double tau, uint64_t bytes,
                        uint64_t round_bytes)
{
    return beta + tau * ((double)bytes + m->port_share * (double)(round_bytes - bytes));
}

/* Bytes each rank's round sends to other ranks (S above), for every send's cost. */
static uint64_t round_bytes(const sim_rank_t *r, const sim_round_t *rd, int rank)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < rd->nsends; i++)
        if (r->slog[rd->first_send + i].peer != rank)
            sum += r->slog[rd->first_send + i].bytes;
    return sum;
}

/* Torus: the directed links from src to dst, id = node * 4 + direction (+x, -x, +y, -y).
 * variant bit 0 (1): a row (column) distance of exactly half the ring goes the negative way. */
static int torus_path(const sim_net_t *net, int src, int dst, int variant, int *links)
{
    int R = net->rows, C = net->cols, n = 0;
    int x = src / C, y = src % C, tx = dst / C, ty = dst % C;
    int dx = ((tx - x) % R + R) % R, dy = ((ty - y) % C + C) % C;
    int up = dx < R - dx || (dx == R - dx && !(variant & 1));
    int right = dy < C - dy || (dy == C - dy && !(variant & 2));
    for (int i = 0, steps = up ? dx : R - dx; i < steps; i++) {
        links[n++] = (x * C + y) * 4 + (up ? 0 : 1);
        x = ((x + (up ? 1 : -1)) % R + R) % R;
    }
    for (int i = 0, steps = right ? dy : C - dy; i < steps; i++) {
        links[n++] = (x * C + y) * 4 + (right ? 2 : 3);
        y = ((y + (right ? 1 : -1)) % C + C) % C;
    }
    return n;
}

/* The ways a message is routed: a distance of half a ring is a tie, and the message is split
 * evenly over both directions (the two halves of a block that an all-port algorithm sends out
 * of opposite ports); returns the number of ways (1, 2 or 4) and which (bits of variant). */
static int torus_ways(const sim_net_t *net, int src, int dst, int *variants)
{
    int R = net->rows, C = net->cols, n = 0;
    int dx = ((dst / C - src / C) % R + R) % R, dy = ((dst % C - src % C) % C + C) % C;
    int tie_x = dx > 0 && dx == R - dx, tie_y = dy > 0 && dy == C - dy;
    for (int v = 0; v < 4; v++)
        if ((!(v & 1) || tie_x) && (!(v & 2) || tie_y))
            variants[n++] = v;
    return n;
}

/* The sends of rank i's round `step`, or an empty range. */
static const sim_round_t *step_round(const sim_world_t *w, int i, int step)
{
    return step < w->ranks[i].nrounds ? &w->ranks[i].rounds[step] : NULL;
}

/* Every send's cost, step by step (the nodes and torus models need a step's whole load). */
static int cost_sends(sim_world_t *w, const sim_net_t *net)
{
    const xchg_machine_t *m = &net->machine;
    double beta_i = m->beta_inter > 0 ? m->beta_inter : m->beta;
    double tau_i = m->tau_inter > 0 ? m->tau_inter : m->tau;
    int steps = 0, maxpath = net->rows / 2 + net->cols / 2 + 2;
    size_t nload = net->kind == SIM_NET_TORUS ? (size_t)w->p * 4 : (size_t)w->nnodes;
    double *load = calloc(nload, sizeof *load);
    int *links = malloc((size_t)maxpath * sizeof *links);

    if (!load || !links) {
        free(load);
        free(links);
        snprintf(w->error, sizeof w->error, "out of memory for the network model");
        return -1;
    }
    for (int i = 0; i < w->p; i++)
        steps = w->ranks[i].nrounds > steps ? w->ranks[i].nrounds : steps;
    for (int s = 0; s < steps; s++) {
        /* the step's load: a node's bytes off the node, or every link's bytes */
        for (int i = 0; i < w->p && net->kind != SIM_NET_FLAT; i++) {
            const sim_round_t *rd = step_round(w, i, s);
            for (uint32_t j = 0; rd && j < rd->nsends; j++) {
                const sim_send_t *sd = &w->ranks[i].slog[rd->first_send + j];
                if (net->kind == SIM_NET_NODES && w->node_of[sd->peer] != w->node_of[i])
                    load[w->node_of[i]] += (double)sd->bytes;
                else if (net->kind == SIM_NET_TORUS && sd->peer != i) {
                    int ways[4], nways = torus_ways(net, i, sd->peer, ways);
                    for (int v = 0; v < nways; v++)
                        for (int n = torus_path(net, i, sd->peer, ways[v], links), l = 0; l < n; l++)
                            load[links[l]] += (double)sd->bytes / nways;
                }
            }
        }
        /* the costs */
        for (int i = 0; i < w->p; i++) {
            sim_rank_t *r = &w->ranks[i];
            const sim_round_t *rd = step_round(w, i, s);
            uint64_t total = rd ? round_bytes(r, rd, i) : 0;
            for (uint32_t j = 0; rd && j < rd->nsends; j++) {
                sim_send_t *sd = &r->slog[rd->first_send + j];
                double worst = 0;
                if (sd->peer == i)
                    sd->cost = m->rho * (double)sd->bytes;
                else if (net->kind == SIM_NET_FLAT ||
                         (net->kind == SIM_NET_NODES && w->node_of[sd->peer] == w->node_of[i]))
                    sd->cost = flat_cost(m, m->beta, m->tau, sd->bytes, total);
                else if (net->kind == SIM_NET_NODES) {
                    double ports = (double)sd->bytes + m->port_share * (double)(total - sd->bytes);
                    double nic = m->inject > 0 ? load[w->node_of[i]] / m->inject : 0;
                    sd->cost = beta_i + tau_i * (ports > nic ? ports : nic);
                } else {
                    int ways[4], nways = torus_ways(net, i, sd->peer, ways);
                    for (int v = 0; v < nways; v++)
                        for (int n = torus_path(net, i, sd->peer, ways[v], links), l = 0; l < n; l++)
                            worst = load[links[l]] > worst ? load[links[l]] : worst;
                    sd->cost = beta_i + tau_i * worst;
                }
            }
        }
        memset(load, 0, nload * sizeof *load);
    }
    free(load);
    free(links);
    return 0;
}

/* One round on the clock: start given, end from its sends and receives. */
static void clock_round(sim_world_t *w, int i, int round, double start)
{
    sim_rank_t *r = &w->ranks[i];
    sim_round_t *rd = &r->rounds[round];
    double end = start;
    rd->start = start;
    for (uint32_t j = 0; j < rd->nsends; j++) {
        double t = start + r->slog[rd->first_send + j].cost;
        end = t > end ? t : end;
    }
    for (uint32_t j = 0; j < rd->nrecvs; j++) {
        const sim_recv_t *rv = &r->rlog[rd->first_recv + j];
        const sim_rank_t *src = &w->ranks[rv->peer];
        const sim_send_t *sd = &src->slog[rv->send_idx];
        double t = src->rounds[sd->round].start + sd->cost;
        end = t > end ? t : end;
    }
    rd->end = end;
}

int sim_net_replay(sim_world_t *w, const sim_net_t *net, sim_times_t *times)
{
    double agree_end = 0, coll_end = 0;

    if (cost_sends(w, net) != 0)
        return -1;
    /* pass 1: the agreement rounds; pass 2: the collective's, from the agreement's end */
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < w->norder; k += 2) {
            int i = w->order[k], round = w->order[k + 1];
            sim_rank_t *r = &w->ranks[i];
            int in_coll = round >= r->coll_first;
            double start;
            if (in_coll != pass)
                continue;
            if (round == r->coll_first && pass == 1)
                start = agree_end;
            else
                start = round == 0 ? 0.0 : r->rounds[round - 1].end;
            clock_round(w, i, round, start);
            if (pass == 0)
                agree_end = r->rounds[round].end > agree_end ? r->rounds[round].end : agree_end;
            else
                coll_end = r->rounds[round].end > coll_end ? r->rounds[round].end : coll_end;
        }
    times->agree = agree_end;
    times->coll = coll_end > agree_end ? coll_end - agree_end : 0.0;
    times->rounds_max = 0;
    times->rounds_min = w->p > 0 ? INT32_MAX : 0;
    times->sent_max = 0;
    for (int i = 0; i < w->p; i++) {
        sim_rank_t *r = &w->ranks[i];
        int n = r->nrounds - r->coll_first;
        uint64_t sent = 0;
        for (int k = r->coll_first; k < r->nrounds; k++)
            sent += round_bytes(r, &r->rounds[k], i);
        times->rounds_max = n > times->rounds_max ? n : times->rounds_max;
        times->rounds_min = n < times->rounds_min ? n : times->rounds_min;
        times->sent_max = sent > times->sent_max ? sent : times->sent_max;
    }
    return 0;
}

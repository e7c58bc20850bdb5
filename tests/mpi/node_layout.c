/*
 * node_layout: what MPI reports about the nodes of a job, for the emulated cluster
 * (scripts/cluster, scripts/cases/cluster.sh), and how fast messages cross between them.
 *
 *   node_layout [--expect 3,2,1] [--pingpong BYTES] [--peer RANK] [--reps N]
 *
 * Layout: every rank finds its node as MPI reports it (MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED, nodes numbered by their lowest world rank) and its host name
 * (MPI_Get_processor_name); rank 0 gathers both (point-to-point only: nothing here goes through
 * the collectives xchg intercepts) and prints one line per rank,
 *     node_layout: rank R host NAME node N local L/S
 * then the layout, "node_layout: nodes=K sizes=S0,S1,...". Checks: ranks share a node exactly
 * when they share a host name (one check per rank); with --expect, the sizes are the expected
 * ones and rank r lies on the node that blocks of the expected sizes put it on (ranks filled
 * node after node, as the launchers place them), one check per rank and one for the sizes.
 *
 * Then one MPI_Allgather and one MPI_Alltoall on MPI_COMM_WORLD, the calls xchg intercepts, of
 * every rank's node (its lowest world rank): each rank checks what arrives against the gathered
 * layout (one check per call). Preloaded with XCHG_VERBOSE=1 and a tuning table whose rules
 * name the node count (nodes=K), the library's decisions show the node count of its context.
 *
 * Ping-pong (--pingpong BYTES): rank 0 and a rank on another node (--peer, default the first
 * rank of the last node) send BYTES back and forth, one warm-up and N timed round trips
 * (--reps, default 3); then rank 0 and rank 1 likewise when they share a node. Each prints
 *     node_layout: pingpong inter-node 0 <-> R (HOST0 <-> HOSTR): B bytes, N round trips,
 *         X MB/s each way, T ms per round trip
 * (MB = 10^6 bytes; "intra-node" for the pair on one node). The data is checked on arrival.
 * Output ends with "node_layout: N checks, M failed".
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAX_NODES 1024

typedef struct {
    int node;  /* lowest world rank on this rank's node */
    int local; /* rank within the node */
    int local_size;
    char host[MPI_MAX_PROCESSOR_NAME];
} rank_info_t;

static int parse_sizes(const char *text, int *sizes, int max)
{
    int n = 0;
    char *end;
    while (*text && n < max) {
        long v = strtol(text, &end, 10);
        if (end == text || v < 1)
            return -1;
        sizes[n++] = (int)v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        text = end;
    }
    return n;
}

/* This rank's node, local rank and host name. */
static void measure(rank_info_t *me)
{
    MPI_Comm node_comm;
    MPI_Group node_group, world_group;
    int zero = 0, len = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    MPI_Comm_rank(node_comm, &me->local);
    MPI_Comm_size(node_comm, &me->local_size);
    /* local rank 0 is the lowest world rank of the node (key 0 keeps world order) */
    MPI_Comm_group(node_comm, &node_group);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_translate_ranks(node_group, 1, &zero, world_group, &me->node);
    MPI_Group_free(&node_group);
    MPI_Group_free(&world_group);
    MPI_Comm_free(&node_comm);
    memset(me->host, 0, sizeof me->host);
    MPI_Get_processor_name(me->host, &len);
}

/* Rank 0: print the layout and check it (against EXPECT of NEXPECT sizes when given). */
static void report(const rank_info_t *all, int size, const int *expect, int nexpect)
{
    int node_of[size], sizes[MAX_NODES], nnodes = 0;
    for (int r = 0; r < size; r++) {
        node_of[r] = r == all[r].node ? nnodes++ : node_of[all[r].node];
        if (r == all[r].node && nnodes <= MAX_NODES)
            sizes[nnodes - 1] = 0;
        if (node_of[r] < MAX_NODES)
            sizes[node_of[r]]++;
        printf("node_layout: rank %d host %s node %d local %d/%d\n", r, all[r].host, node_of[r],
               all[r].local, all[r].local_size);
    }
    printf("node_layout: nodes=%d sizes=", nnodes);
    for (int n = 0; n < nnodes && n < MAX_NODES; n++)
        printf("%s%d", n ? "," : "", sizes[n]);
    printf("\n");

    /* same node exactly when same host name */
    for (int r = 0; r < size; r++) {
        check_count(1);
        for (int q = 0; q < size; q++) {
            int same_node = node_of[q] == node_of[r];
            int same_host = strcmp(all[q].host, all[r].host) == 0;
            if (same_node != same_host) {
                check_fail("ranks %d (%s, node %d) and %d (%s, node %d): MPI's shared-memory "
                           "node and the host name disagree",
                           r, all[r].host, node_of[r], q, all[q].host, node_of[q]);
                break;
            }
        }
    }
    if (nexpect <= 0)
        return;
    check_count(1);
    int same = nnodes == nexpect;
    for (int n = 0; same && n < nnodes; n++)
        same = sizes[n] == expect[n];
    if (!same)
        check_fail("expected %d nodes (sizes as in --expect), MPI reports %d", nexpect, nnodes);
    for (int r = 0, n = 0, first = 0; r < size; r++) {
        while (n < nexpect && r >= first + expect[n])
            first += expect[n++];
        check_count(1);
        if (n >= nexpect)
            check_fail("rank %d is beyond the expected layout's ranks", r);
        else if (node_of[r] != n)
            check_fail("rank %d should be on node %d, MPI puts it on node %d (%s)", r, n,
                       node_of[r], all[r].host);
    }
}

/* One pair's ping-pong: REPS timed round trips of BYTES after one warm-up; data checked. */
static void pingpong(int rank, int a, int b, size_t bytes, int reps, const char *what,
                     const rank_info_t *all)
{
    if (rank != a && rank != b)
        return;
    uint32_t *buf = malloc(bytes + 4);
    size_t n = bytes / 4;
    int other = rank == a ? b : a;
    double t0 = 0;
    for (int trip = 0; trip <= reps; trip++) {
        if (trip == 1)
            t0 = MPI_Wtime();
        if (rank == a) {
            for (size_t i = 0; i < n; i++)
                buf[i] = check_value(a, b, i, (uint32_t)trip);
            MPI_Send(buf, (int)bytes, MPI_BYTE, other, trip, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, other, trip, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, other, trip, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, other, trip, MPI_COMM_WORLD);
        }
        if (trip == 0 || rank != a)
            continue;
        /* a's own data came back */
        check_count(1);
        for (size_t i = 0; i < n; i++) {
            if (buf[i] != check_value(a, b, i, (uint32_t)trip)) {
                check_fail("ping-pong %d <-> %d, round trip %d: word %zu is wrong", a, b, trip, i);
                break;
            }
        }
    }
    double seconds = MPI_Wtime() - t0;
    if (rank == a && reps > 0)
        printf("node_layout: pingpong %s %d <-> %d (%s <-> %s): %zu bytes, %d round trips, "
               "%.2f MB/s each way, %.2f ms per round trip\n",
               what, a, b, all[a].host, all[b].host, bytes, reps,
               2.0 * (double)bytes * reps / seconds / 1e6, seconds / reps * 1e3);
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, size, expect[MAX_NODES], nexpect = 0, peer = -1, reps = 3;
    long long bytes = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        int more = i + 1 < argc;
        if (!strcmp(argv[i], "--expect") && more)
            nexpect = parse_sizes(argv[++i], expect, MAX_NODES);
        else if (!strcmp(argv[i], "--pingpong") && more)
            bytes = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--peer") && more)
            peer = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && more)
            reps = atoi(argv[++i]);
        else
            nexpect = -1, i = argc;
    }
    if (nexpect < 0 || bytes < 0 || bytes > (1 << 30) || reps < 0 || peer >= size) {
        if (rank == 0)
            fprintf(stderr, "usage: node_layout [--expect 3,2,1] [--pingpong BYTES (at most "
                            "2^30)] [--peer RANK] [--reps N]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* the layout, gathered point-to-point on rank 0 */
    rank_info_t me, *all = malloc((size_t)size * sizeof *all);
    measure(&me);
    if (rank == 0) {
        all[0] = me;
        for (int r = 1; r < size; r++)
            MPI_Recv(&all[r], (int)sizeof me, MPI_BYTE, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        report(all, size, expect, nexpect);
    } else {
        MPI_Send(&me, (int)sizeof me, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
    /* every rank needs the host names and nodes for the ping-pong partners */
    MPI_Bcast(all, (int)(size * sizeof *all), MPI_BYTE, 0, MPI_COMM_WORLD);
    fflush(stdout);

    /* the layout once more through the intercepted collectives */
    int *got = malloc((size_t)size * sizeof *got), *out = malloc((size_t)size * sizeof *out);
    MPI_Allgather(&me.node, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD);
    check_count(1);
    for (int r = 0; r < size; r++) {
        if (got[r] != all[r].node) {
            check_fail("MPI_Allgather: rank %d's node arrived as %d, not %d", r, got[r],
                       all[r].node);
            break;
        }
    }
    for (int r = 0; r < size; r++)
        out[r] = me.node * size + r;
    MPI_Alltoall(out, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD);
    check_count(1);
    for (int r = 0; r < size; r++) {
        if (got[r] != all[r].node * size + rank) {
            check_fail("MPI_Alltoall: the block from rank %d is %d, not %d", r, got[r],
                       all[r].node * size + rank);
            break;
        }
    }
    free(got);
    free(out);

    if (bytes > 0) {
        /* default: the first rank of the last rank's node, else of any other node */
        for (int r = size - 1; peer < 0 && r >= 0; r--)
            if (all[r].node != all[0].node)
                peer = all[r].node;
        if (peer > 0 && all[peer].node != all[0].node)
            pingpong(rank, 0, peer, (size_t)bytes, reps, "inter-node", all);
        else if (rank == 0)
            printf("node_layout: pingpong inter-node: no rank on another node\n");
        if (size > 1 && all[1].node == all[0].node)
            pingpong(rank, 0, 1, (size_t)bytes, reps, "intra-node", all);
        fflush(stdout);
    }
    free(all);
    int status = check_finish("node_layout");
    MPI_Finalize();
    return status;
}

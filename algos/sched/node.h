/*
 * node.h: the plans of the node algorithms (algos/alltoall_node.c, alltoallv_node.c,
 * allgather_node.c): who writes which byte where in its node's shared segment, which leader
 * carries which piece to which node in which round, and where every byte is read. No MPI:
 * the algorithms follow these plans with memcpy and xchg_exchange, tuning/cost_node.c prices
 * them, tests/unit/test_sched_node.c checks every byte's path.
 *
 * Terms. The communicator's ranks lie on N nodes (ids 0 .. N-1, each with ranks), node x with
 * n_x ranks, its members in rank order, l(r) a rank's index among them. The node order is
 * Sanders and Traff's (Section 3): by size, then id.
 *
 * Alltoall and alltoallv. Every node has one stream of bytes per destination: the message to
 * every other node y (the blocks of x's ranks for y's ranks, receiver-major: for each d of y in
 * local order, the blocks of x's members for d in local order) and its local stream (the
 * blocks between its own ranks, receiver-major, the block to self left out: a local copy).
 * The segment's half holds a window per stream of x:
 *
 *   half: | headers (alltoallv) | local | out to y_1 .. y_{N-1} | in from y_1 .. y_{N-1} |
 *                                 window: stride bytes = window data bytes + XCHG_NODE_EXTRA
 *
 * Pass t carries bytes [t W, (t + 1) W) of every stream (W = the window's data bytes, equal on
 * every node); a node runs as many passes as its longest stream needs, a pair's message is in
 * ceil(len / W) pieces on both sides. In a pass: every rank writes its bytes of the pass, the
 * node synchronises, its leaders exchange the pieces with the other nodes' leaders straight
 * between the windows, the node synchronises again, every rank reads its bytes.
 *
 * Between nodes. The rounds are a 1-factorization of the nodes in the node order (Lemma 1:
 * factor f pairs positions a and (f - a) mod N): for N odd N rounds, each leaving one node out;
 * for N even, factor f of the first N - 1 positions, the one left out paired with the last, N - 1
 * rounds (the paper's Section 2 remark: the self-loops in one factor). Every pair of nodes meets
 * in exactly one round. With one leader a node exchanges with one node at a time, the paper's
 * single-ported node, with one message each way sized by both nodes' ranks (n_x n_y blocks):
 * the hierarchical factor algorithm with each node's ranks' messages gathered into one. With
 * L leaders (leaders=L; a node has min(L, n_x); see below for which ranks) a pair's piece of at
 * least split_min bytes per part is cut into P = min(L_x, L_y, piece / split_min) parts by bytes,
 * part q run by leader (t + f + q) mod L_x of x and (t + f + q) mod L_y of y: small pieces are
 * shared out by destination (rounds rotate over the leaders), large ones by bytes, so no leader
 * carries a skewed node's largest message alone. Leader j of x sends as member j and receives
 * as member n_x - 1 - j (xchg_node_receiver), so the two messages of a step travel between two
 * different pairs of ranks unless both leaders are the middle members of nodes of odd size
 * (two one-rank nodes, for one): Open MPI's TCP transport, with its defaults, carries a large
 * message's two directions between one pair of ranks one after the other (docs/cluster.md). A
 * rank runs its steps (as a sender, a receiver, or both) one at a time in the order (pass,
 * round, part); that order is the same at both ends of every message, so the steps cannot
 * deadlock, and a node never has more than its leaders' messages in flight each way across its
 * link. Both ends compute the parts from the pair's message length (MPI requires the sender's
 * and receiver's counts to match; unmatched counts are an erroneous program).
 *
 * Statistics (alltoallv, xchg_carry_t): when carrying, every pair's first pass exchanges, and
 * the node's maxima (XCHG_NODE_STATS bytes) ride behind its last part, at the piece's end in
 * the window (inside the window's extra bytes).
 *
 * Allgather. The half holds the whole result, every node's ranks' blocks (pieces of c bytes of
 * each) in node x's relative order: node (x + d) mod N at chunk d. The leader (one per node)
 * runs the circulant concatenation of Bruck et al. (Section 4, k ports) over the nodes: in
 * round s, with dist = (k + 1)^s, for z = 1 .. k while z dist < N it sends its chunks
 * 0 .. count-1 (count = min(dist, N - z dist)) to node x - z dist and receives chunks
 * z dist .. z dist + count - 1 from node x + z dist, all k messages at once;
 * ceil(log_{k+1} N) rounds (k = 1: ceil(log2 N); k >= N - 1: one round, every node's chunk
 * straight from it), (p - n_x) c bytes in all, chunk sizes n_y c.
 */
#ifndef XCHG_SCHED_NODE_H
#define XCHG_SCHED_NODE_H

#include <stddef.h>
#include <stdint.h>

#define XCHG_NODE_EXTRA 64 /* a window's bytes beyond its data: the statistics, to a cache line */
#define XCHG_NODE_STATS 24 /* the carried statistics: three 8-byte maxima */
#define XCHG_NODE_MIN_WINDOW 64 /* the fewest data bytes of a window the algorithms take */

/* The layout of one communicator. */
typedef struct xchg_node_layout {
    int nranks, nnodes, max_size;
    const int *node_of; /* [nranks]: the caller's */
    int *first;         /* [nnodes + 1]: node x's ranks are members[first[x] .. first[x + 1]) */
    int *members;       /* [nranks]: ranks grouped by node, in rank order */
    int *local;         /* [nranks]: l(r) */
    int *order;         /* [nnodes]: node at each position of the node order */
    int *pos;           /* [nnodes]: position of each node */
} xchg_node_layout_t;

/* Bytes of workspace xchg_node_init needs. */
size_t xchg_node_workspace_bytes(int nranks, int nnodes);
/* The layout of nranks ranks, rank r on node node_of[r]; node_of must outlive it. 0, or -1 when
 * a node id is out of 0 .. nnodes-1 or has no rank, or nranks < 1. */
int xchg_node_init(xchg_node_layout_t *lay, int nranks, int nnodes, const int *node_of,
                   void *workspace);

static inline int xchg_node_size(const xchg_node_layout_t *lay, int x)
{
    return lay->first[x + 1] - lay->first[x];
}

/* Rounds of the 1-factorization of N nodes: 0 for one node, N - 1 for N even, N for N odd. */
int xchg_node_rounds(int nnodes);
/* Node x's partner in round f: a node, or x itself when x sits the round out. */
int xchg_node_partner(const xchg_node_layout_t *lay, int x, int round);
/* The round in which x and y (x != y) meet. */
int xchg_node_round_of(const xchg_node_layout_t *lay, int x, int y);

/* Leaders of node x under leaders=L: min(L, n_x) (at least 1); leader j sends as its member j
 * and receives as its member xchg_node_receiver(j). */
static inline int xchg_node_leaders(const xchg_node_layout_t *lay, int x, int leaders)
{
    int n = xchg_node_size(lay, x);
    return leaders < 1 ? 1 : leaders < n ? leaders : n;
}
/* The member of node x that receives for its leader j: n_x - 1 - j. */
static inline int xchg_node_receiver(const xchg_node_layout_t *lay, int x, int j)
{
    return xchg_node_size(lay, x) - 1 - j;
}
/* The leader whose messages member m of node x receives (m = xchg_node_receiver(j)), or -1 when
 * it receives for none. */
static inline int xchg_node_receives_for(const xchg_node_layout_t *lay, int x, int leaders, int m)
{
    int j = xchg_node_size(lay, x) - 1 - m;
    return j < xchg_node_leaders(lay, x, leaders) ? j : -1;
}

/* The windows of a half (see the top). header: bytes before the first window. */
typedef struct xchg_node_windows {
    size_t header, stride, window; /* window: data bytes (stride - XCHG_NODE_EXTRA) */
} xchg_node_windows_t;
/* 2 nnodes - 1 windows in a half of half bytes after header bytes, each a multiple of 64 bytes
 * with at least XCHG_NODE_MIN_WINDOW data bytes and at most want data bytes; 0, or -1 when they
 * do not fit. */
int xchg_node_windows(size_t half, int nnodes, size_t header, size_t want, xchg_node_windows_t *w);
/* The half that holds windows of want data bytes after header bytes (SIZE_MAX on overflow). */
size_t xchg_node_half_for(int nnodes, size_t header, size_t want);
/* Window indices of node x: its local stream, its message to y, its message from y. */
static inline int xchg_node_local_window(void)
{
    return 0;
}
static inline int xchg_node_out_window(int x, int y)
{
    return 1 + (y < x ? y : y - 1);
}
static inline int xchg_node_in_window(int nnodes, int x, int y)
{
    return nnodes + (y < x ? y : y - 1);
}
static inline size_t xchg_node_window_at(const xchg_node_windows_t *w, int index)
{
    return w->header + (size_t)index * w->stride;
}

/* Passes a stream of len bytes takes through windows of window bytes, and the bytes of its
 * piece in pass `pass`. */
static inline size_t xchg_node_passes(size_t len, size_t window)
{
    return len / window + (len % window != 0);
}
static inline size_t xchg_node_piece(size_t len, size_t window, size_t pass)
{
    size_t at = pass * window;
    return at >= len ? 0 : len - at < window ? len - at : window;
}

/* How the pieces between two nodes are cut and run. */
typedef struct xchg_node_cfg {
    int leaders;      /* leaders=L */
    size_t window;    /* W */
    size_t split_min; /* the least bytes of a part of a split piece (XCHG_NODE_SPLIT_MIN) */
    int carry;        /* alltoallv: the statistics ride in the first pass */
    int ports;        /* k: a leader's steps of a pass in flight at once (1 or 0: one after
                         another, round by round) */
} xchg_node_cfg_t;
/* A piece of bytes below 2 split_min is one part. */
#define XCHG_NODE_SPLIT_MIN ((size_t)64 << 10)

/* The steps a leader runs at once (k = cfg->ports, at most all of a pass's steps); 1: one
 * after another. */
int xchg_node_batch(const xchg_node_layout_t *lay, const xchg_node_cfg_t *cfg);

/* One step of a pair in a pass, seen from node x: one message each way at most. */
typedef struct xchg_node_step {
    int leader;                  /* x's leader that runs it (0 .. leaders of x - 1): its sender
                                    sends, its receiver receives */
    int peer_leader;             /* y's leader at the other end */
    int send, recv;              /* a message to y, one from y */
    size_t send_off, send_bytes; /* in x's window to y (send_bytes with the statistics) */
    size_t recv_off, recv_bytes; /* in x's window from y */
    int send_stats, recv_stats;  /* the statistics ride at the end (at the piece's end) */
} xchg_node_step_t;
/* The steps of pass `pass` between x and y (x != y), which meet in round `round`, out_len and
 * in_len the lengths of x's messages to and from y; at most max(L_x, 1) steps, in part order.
 * Returns how many were written. */
int xchg_node_steps(const xchg_node_layout_t *lay, const xchg_node_cfg_t *cfg, int x, int y,
                    int round, size_t pass, size_t out_len, size_t in_len, xchg_node_step_t *steps);

/* MPI_Alltoall, blocks of b bytes: where the block from s to d (s != d) lies in its stream (x's
 * message to y, or the local stream when both are on one node), and a stream's length. */
size_t xchg_node_block_at(const xchg_node_layout_t *lay, int s, int d, size_t b);
size_t xchg_node_stream_len(const xchg_node_layout_t *lay, int x, int y, size_t b);
/* The window data bytes one pass of alltoall would need (its longest stream). */
size_t xchg_node_alltoall_longest(const xchg_node_layout_t *lay, size_t b);

/* MPI_Alltoallv. A rank's header in its node's half: its three statistics, the bytes it
 * receives from each node (its receive counts summed per node), and its send row (bytes to
 * every rank), 8 bytes each, padded to 64. */
size_t xchg_node_v_header_bytes(int nranks, int nnodes);
typedef struct xchg_node_headers {
    const char *base; /* the node's first header (member 0), then one per member */
    size_t stride;    /* xchg_node_v_header_bytes */
    int nnodes;
} xchg_node_headers_t;
static inline const uint64_t *xchg_node_hdr_stats(const xchg_node_headers_t *h, int l)
{
    return (const uint64_t *)(h->base + (size_t)l * h->stride);
}
static inline const uint64_t *xchg_node_hdr_totals(const xchg_node_headers_t *h, int l)
{
    return xchg_node_hdr_stats(h, l) + 3;
}
static inline const uint64_t *xchg_node_hdr_row(const xchg_node_headers_t *h, int l)
{
    return xchg_node_hdr_totals(h, l) + h->nnodes;
}
/* Node x's member me as a sender: send_at[j] where its block for j (j != itself) lies in its
 * stream, and stream_len[y] for every node y (y = x: the local stream). O(n_x p). */
void xchg_node_v_send_layout(const xchg_node_layout_t *lay, const xchg_node_headers_t *h, int x,
                             int me, size_t *send_at, size_t *stream_len);
/* Node x's member me as a receiver (recvbytes: its own receive counts in bytes): recv_at[j]
 * where the block from j (j != itself) lies in its stream, and in_len[y] the length of the
 * message from every node y != x. O(n_x^2 + n_x N + p). */
void xchg_node_v_recv_layout(const xchg_node_layout_t *lay, const xchg_node_headers_t *h, int x,
                             int me, const size_t *recvbytes, size_t *recv_at, size_t *in_len);

/* MPI_Allgather: rounds of the k-port circulant concatenation over N nodes (ports <= 1: one
 * port), round s of node x (see the top): its messages, at most k, each with to, from, and the
 * chunks received (first = count's first chunk); and chunk_at[d] the offset of chunk d in x's
 * relative order in blocks (N + 1 entries: the last is p). */
typedef struct xchg_node_gather_msg {
    int to, from, first, count;
} xchg_node_gather_msg_t;
int xchg_node_gather_rounds(int nnodes, int ports);
int xchg_node_gather_round(int nnodes, int ports, int x, int round, xchg_node_gather_msg_t *msgs);
/* The messages a node sends over all rounds (every node sends as many), and in *forwarded
 * (unless NULL) the other nodes' chunks they carry besides its own (each message carries the
 * sender's first count chunks: its own and count - 1 more), as many for every node. */
int xchg_node_gather_messages(int nnodes, int ports, long *forwarded);
void xchg_node_gather_chunks(const xchg_node_layout_t *lay, int x, size_t *chunk_at);

/* Predicates (tuning/registry.c), from the topology summary: the node's segments exist, and a
 * half of the limit holds the windows of a pass. One for each collective. */
struct xchg_call;
struct xchg_params;
int xchg_node_applies(const struct xchg_call *call, const struct xchg_params *params,
                      const char **why);
/* The longest stream of bytes between two nodes' ranks, as the models see call from its agreed
 * summary (the most ranks of a node, its blocks or alltoallv's largest sends and receives), and
 * *header, alltoallv's headers in a node's segment (0 for the others): the windows are those of
 * the limit less *header, the passes ceil(longest / window). tuning/cost_node.c prices the call
 * by them and xchg_node_as_run names what runs by them. */
double xchg_node_call_longest(const struct xchg_call *call, size_t *header);
/* params (their keys completed: the cost model's) rewritten to the values that name what runs
 * for call, as the model sees it (windows of the topology's limit): leaders beyond a node's
 * ranks as its ranks, where no piece is cut into parts leaders beyond the turns of the passes
 * and rounds as those, and ports beyond a rank's steps of a pass as those (N - 1 with one
 * leader; with more a rank may send for one and receive for another: 2 (N - 1)). Two params of one
 * call with the same result send the same messages in the same batches
 * (tests/unit/test_sched_node.c checks it on the plans); xchg-tune keeps one of them. */
void xchg_node_as_run(const struct xchg_call *call, struct xchg_params *params);

#endif

/*
 * decision_cache.c: legal calls that make the ranks' lookups of xchg's decision cache differ,
 * and MPI_Alltoallv calls whose decision must still be the same on every rank.
 *
 * MPI lets ranks describe the same bytes by different type handles: here the even ranks always
 * pass MPI_Alltoall 4n MPI_BYTE, the odd ranks alternate between that and n elements of a
 * contiguous type of 4 bytes. xchg memorises a communicator's last call of a collective by its
 * handles, so the even ranks take the memorised call where the odd ranks select again, and
 * only the odd ranks look the decision cache up. The cache is shared by the communicators of one
 * group, each of which memorises its own last call, so COMMS duplicates of the world make as many
 * such lookups a round. Each round:
 *   1. on each duplicate, MPI_Alltoall of its own S bytes a block (new sizes each round), the
 *      same handles everywhere;
 *   2. FILLS MPI_Allgather of new block sizes, which fill the cache and push S's decisions out;
 *   3. VCALLS MPI_Alltoallv of V1 bytes a block, enough that xchg's agreed statistics of the
 *      calls move to V1 (it carries them in some calls' messages);
 *   4. on each duplicate, MPI_Alltoall of its S again: the even ranks' handles are those of step
 *      1 (memorised), the odd ranks' the other pair (selected again: S decided anew, in a slot
 *      that may be V1's);
 *   5. VCALLS MPI_Alltoallv of V2 bytes a block, whose statistics move to V2 in turn.
 * So each round gives the cache's COMMS slots of 64 a chance to lose V1's decision on the odd
 * ranks alone, wherever the cache's hash puts it.
 * V1 and V2 lie in one size bucket of the cache. The suite runs this with a tuning table that
 * names one algorithm for V1 and another for V2: a cache whose alltoallv decisions a rank could
 * lose alone would then run different algorithms on different ranks (a hang or wrong bytes).
 *
 * Every byte is checked, the receive buffer's bytes outside the blocks (alltoallv's gaps, and
 * GAP bytes after the last block) included.
 * Usage: decision_cache [ROUNDS] [V1 V2] (defaults 100, 1600 and 1900).
 */
#include "check.h"

#define FILLS 100
#define COMMS 8
#define VCALLS 18
#define GAP 8 /* bytes between alltoallv's receive blocks, which must keep the sentinel */

static int rank, size;

static unsigned char byte_of(int src, int dst, size_t i, uint32_t salt)
{
    return (unsigned char)(1 + check_value(src, dst, i, salt) % 120);
}

static void fill_send(unsigned char *buf, size_t block, uint32_t salt)
{
    for (int d = 0; d < size; d++)
        for (size_t i = 0; i < block; i++)
            buf[(size_t)d * block + i] = byte_of(rank, d, i, salt);
}

/* Received blocks at stride apart, each followed by bytes that keep the sentinel, and GAP more
 * after the last stride that must keep it too. */
static void check_recv(const unsigned char *buf, size_t block, size_t stride, int all_sources,
                       uint32_t salt, const char *what)
{
    long long bad = 0;
    for (int s = 0; s < size; s++) {
        const unsigned char *b = buf + (size_t)s * stride;
        for (size_t i = 0; i < block; i++)
            bad += b[i] != byte_of(s, all_sources ? 0 : rank, i, salt);
        for (size_t i = block; i < stride; i++)
            bad += b[i] != CHECK_SENTINEL;
    }
    for (size_t i = 0; i < GAP; i++)
        bad += buf[(size_t)size * stride + i] != CHECK_SENTINEL;
    check_count((long long)size * (long long)stride + GAP);
    if (bad)
        check_fail("%s: %lld wrong bytes (block %zu)", what, bad, block);
}

static void alltoall(MPI_Comm comm, unsigned char *send, unsigned char *recv, size_t s, int other,
                     MPI_Datatype four, uint32_t salt)
{
    fill_send(send, s, salt);
    memset(recv, CHECK_SENTINEL, s * (size_t)size + GAP);
    if (other)
        MPI_Alltoall(send, (int)(s / 4), four, recv, (int)(s / 4), four, comm);
    else
        MPI_Alltoall(send, (int)s, MPI_BYTE, recv, (int)s, MPI_BYTE, comm);
    check_recv(recv, s, s, 0, salt, "MPI_Alltoall");
}

static void alltoallv(unsigned char *send, unsigned char *recv, size_t v, uint32_t salt)
{
    int counts[size], sdispls[size], rcounts[size], rdispls[size];
    for (int j = 0; j < size; j++) {
        counts[j] = rcounts[j] = (int)v;
        sdispls[j] = j * (int)v;
        rdispls[j] = j * (int)(v + GAP);
    }
    fill_send(send, v, salt);
    memset(recv, CHECK_SENTINEL, (v + GAP) * (size_t)size + GAP);
    MPI_Alltoallv(send, counts, sdispls, MPI_BYTE, recv, rcounts, rdispls, MPI_BYTE,
                  MPI_COMM_WORLD);
    check_recv(recv, v, v + GAP, 0, salt, "MPI_Alltoallv");
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 100;
    size_t v1 = argc > 3 ? (size_t)atol(argv[2]) : 1600,
           v2 = argc > 3 ? (size_t)atol(argv[3]) : 1900;
    size_t most = 4 * (v1 > v2 ? v1 : v2) + 65536; /* S up to 17 KiB, fills up to 64 KiB */
    unsigned char *send, *recv;
    MPI_Datatype four;
    MPI_Comm comms[COMMS];
    uint32_t salt = 1;
    int rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Type_contiguous(4, MPI_BYTE, &four);
    MPI_Type_commit(&four);
    for (int k = 0; k < COMMS; k++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[k]);
    send = malloc(most * (size_t)size);
    recv = malloc((most + GAP) * (size_t)size + GAP);
    if (!send || !recv || rounds < 1) {
        fprintf(stderr, "decision_cache: %s\n", rounds < 1 ? "ROUNDS must be >= 1" : "no memory");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int r = 0; r < rounds; r++) {
        size_t s[COMMS];
        for (int k = 0; k < COMMS; k++) {
            s[k] = 1024 + 8 * (size_t)((r * COMMS + k) % 2000);
            alltoall(comms[k], send, recv, s[k], 0, four, salt++);
        }
        for (int i = 0; i < FILLS; i++) {
            size_t b = 20000 + (size_t)FILLS * (size_t)(r % 400) + (size_t)i;
            fill_send(send, b, salt);
            memset(recv, CHECK_SENTINEL, b * (size_t)size + GAP);
            MPI_Allgather(send, (int)b, MPI_BYTE, recv, (int)b, MPI_BYTE, MPI_COMM_WORLD);
            check_recv(recv, b, b, 1, salt++, "MPI_Allgather");
        }
        for (int c = 0; c < VCALLS; c++)
            alltoallv(send, recv, v1, salt++);
        for (int k = 0; k < COMMS; k++)
            alltoall(comms[k], send, recv, s[k], rank % 2, four, salt++);
        for (int c = 0; c < VCALLS; c++)
            alltoallv(send, recv, v2, salt++);
    }
    for (int k = 0; k < COMMS; k++)
        MPI_Comm_free(&comms[k]);
    MPI_Type_free(&four);
    free(send);
    free(recv);
    rc = check_finish("decision_cache");
    MPI_Finalize();
    return rc;
}

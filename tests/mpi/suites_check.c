/*
 * suites_check: what MPICH's coll tests, OSU's benchmarks with -c (validation) and IMB with
 * -check cover for MPI_Alltoall, MPI_Allgather and MPI_Alltoallv and coll_check does not.
 * None of the three is a Debian package; these are equivalents, written here, in a short form.
 *
 * coll_check already covers: MPI_IN_PLACE on all three collectives, zero-size blocks on some
 * ranks for alltoallv (its "zeros" pattern), MPI_BOTTOM with absolute-address types, holed and
 * resized types with a positive lower bound, different type maps of one signature, split, dup,
 * reversed and self communicators, the _c forms. What it lacks, and this program adds:
 *   inter      intercommunicators (MPICH's icalltoall, icallgather, icalltoallv): the lower
 *              third of MPI_COMM_WORLD and the rest, each rank exchanging with the remote
 *              group; then MPI_Intercomm_merge with the upper group first, an intracommunicator
 *              whose rank order is neither world's nor reversed;
 *   negative   datatypes whose lower bound is negative (MPICH's tests of such types): a vector
 *              of 3 ints with stride -2 (signature order runs down the addresses), an int 12
 *              bytes below an element of lower bound -16, each against itself and against
 *              plain ints of the same signature, also in place;
 *   huge       a datatype of extent 2^32 + 64 bytes holding one int (blocks 4 GiB apart, in
 *              buffers reserved, not committed: MAP_NORESERVE), against itself and plain ints;
 *   sweep      OSU's -c: every power of two from 1 byte to 1 MiB per block, the same buffers
 *              called again and again (with learning on, a repeating shape is tried, settled and
 *              served from memory: the data must be right through all of it), each call
 *              validated with new data;
 *   subsets    IMB: the collectives on the first k ranks of MPI_COMM_WORLD for every k from 2
 *              to p, the other ranks outside (MPI_COMM_NULL from the split) and idle.
 * Every byte of every receive buffer is checked (elements against the formula of check.h,
 * salted per call; every other byte of the buffer, holes and guards included, still the
 * sentinel), and the send buffers unchanged; the huge-extent buffers around each element.
 *   suites_check [PART...]     (parts: inter negative huge sweep subsets; default all)
 * Prints failures and "suites_check: N checks, M failed".
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"

#define MAX_PRIMS 3
#define MARGIN 64 /* sentinel bytes before and after every buffer (negative offsets land here) */
#define SWEEP_MAX (1 << 20)
#define HUGE_EXTENT (((MPI_Aint)1 << 31) - 64)

enum { COLL_ALLTOALL, COLL_ALLGATHER, COLL_ALLTOALLV, NCOLLS };
static const char *const coll_names[NCOLLS] = {"alltoall", "allgather", "alltoallv"};

static int world_rank, world_size;

/* ---- typed buffers: a datatype and where its ints lie inside one element ---- */

typedef struct layout {
    const char *name;
    MPI_Datatype type;
    MPI_Aint extent;
    int nprims;
    MPI_Aint offset[MAX_PRIMS]; /* in signature order, from the element's start (may be < 0) */
} layout_t;

/* One side of a call: n_of[j] elements of a layout for block j, block j's first element at
 * element index first[j]; the buffer spans [base, base + bytes), the pointer given to MPI is
 * base + MARGIN. */
typedef struct side {
    const layout_t *l;
    int *n_of, *first;
    size_t elements; /* elements spanned by all blocks */
    char *base;
    size_t bytes;
} side_t;

static char *at_element(const side_t *s, size_t element)
{
    return s->base + MARGIN + (MPI_Aint)element * s->l->extent;
}

static void side_alloc(side_t *s, const layout_t *l, int nblocks)
{
    s->l = l;
    s->n_of = calloc(2 * (size_t)nblocks, sizeof(int));
    s->first = s->n_of + nblocks;
    s->base = NULL;
}

/* Lay out nblocks blocks one after another, `gap` elements between them (alltoall and
 * allgather: none, their blocks are contiguous), and (re)allocate. */
static void side_layout(side_t *s, int nblocks, int gap)
{
    size_t at = 0;
    for (int j = 0; j < nblocks; j++) {
        s->first[j] = (int)at;
        at += (size_t)s->n_of[j] + (size_t)gap;
    }
    s->elements = at;
    free(s->base);
    s->bytes = at * (size_t)s->l->extent + 2 * MARGIN;
    s->base = malloc(s->bytes);
}

static void side_free(side_t *s)
{
    free(s->base);
    free(s->n_of);
}

/* Sentinels everywhere; then, for every block j, n_of[j] elements of values f(src, dst_of(j)). */
static void side_fill(side_t *s, int nblocks, int src_fixed, const int *world_of, int dst_fixed,
                      uint32_t salt, int by_source)
{
    memset(s->base, CHECK_SENTINEL, s->bytes);
    for (int j = 0; j < nblocks; j++)
        for (int e = 0; e < s->n_of[j]; e++) {
            char *el = at_element(s, (size_t)s->first[j] + (size_t)e);
            for (int k = 0; k < s->l->nprims; k++) {
                int src = by_source ? world_of[j] : src_fixed;
                int dst = by_source ? dst_fixed : world_of[j];
                int v = (int)check_value(src, dst,
                                         (uint64_t)e * (uint64_t)s->l->nprims + (uint64_t)k, salt);
                memcpy(el + s->l->offset[k], &v, sizeof v);
            }
        }
}

/* Compare every byte with the image; one failure line. */
static void side_compare(const side_t *got, const side_t *image, const char *what)
{
    check_count((long long)got->bytes);
    if (memcmp(got->base, image->base, got->bytes) != 0) {
        size_t b = 0;
        while (got->base[b] == image->base[b])
            b++;
        check_fail("%s: byte %zd of the buffer (from its first element) differs", what,
                   (ssize_t)b - MARGIN);
    }
}

/* ---- one checked call on an intra- or intercommunicator ---- */

/* A call of coll on comm: this rank sends to / receives from `peers` ranks (the remote group
 * for an intercommunicator), world_of[j] the world rank of peer j, me_world this rank's. The
 * send side is `sendl` with smult elements per unit, the receive side recvl with rmult; block
 * (me -> j) has units(me, j) units. */
typedef struct callspec {
    int coll, in_place, peers, me_world;
    const int *world_of;
    MPI_Comm comm;
    const layout_t *sendl, *recvl;
    int smult, rmult;
    int (*units)(int from_world, int to_world, int base);
    int base;
    uint32_t salt;
    const char *label;
} callspec_t;

static int units_uniform(int from, int to, int base)
{
    (void)from, (void)to;
    return base;
}

static int units_skewed(int from, int to, int base)
{
    return ((7 * from + 3 * to) % 4) * base; /* some zero */
}

static int units_symmetric(int from, int to, int base) /* for alltoallv in place */
{
    return ((from + to) % 4) * base;
}

/* The call itself; counts: sendcounts, sdispls, recvcounts, rdispls (q each). */
static int call_by_spec(const callspec_t *c, const void *sendbuf, void *recvbuf, int *counts)
{
    const layout_t *sl = c->in_place ? c->recvl : c->sendl;
    int n = c->base, q = c->peers;
    if (c->coll == COLL_ALLTOALL)
        return MPI_Alltoall(sendbuf, n * c->smult, sl->type, recvbuf, n * c->rmult, c->recvl->type,
                            c->comm);
    if (c->coll == COLL_ALLGATHER)
        return MPI_Allgather(sendbuf, n * c->smult, sl->type, recvbuf, n * c->rmult, c->recvl->type,
                             c->comm);
    return MPI_Alltoallv(sendbuf, counts, counts + q, sl->type, recvbuf, counts + 2 * q,
                         counts + 3 * q, c->recvl->type, c->comm);
}

static void checked_call(const callspec_t *c)
{
    side_t send, recv, image, copy;
    int q = c->peers, rc, allgather = c->coll == COLL_ALLGATHER;
    int *scounts = malloc(5 * (size_t)q * sizeof(int)), *sdispls = scounts + q;
    int *rcounts = sdispls + q, *rdispls = rcounts + q, *targets = rdispls + q;
    const layout_t *sl = c->in_place ? c->recvl : c->sendl;
    char what[200];

    side_alloc(&send, sl, q);
    side_alloc(&recv, c->recvl, q);
    side_alloc(&image, c->recvl, q);
    side_alloc(&copy, sl, q);
    for (int j = 0; j < q; j++) {
        int out = c->units(c->me_world, c->world_of[j], c->base);
        int in = c->units(c->world_of[j], c->me_world, c->base);
        if (c->coll != COLL_ALLTOALLV)
            out = in = c->base;
        send.n_of[j] = copy.n_of[j] =
            allgather && j > 0 ? 0 : out * (c->in_place ? c->rmult : c->smult);
        recv.n_of[j] = image.n_of[j] = in * c->rmult;
    }
    side_layout(&send, q, c->coll == COLL_ALLTOALLV);
    side_layout(&copy, q, c->coll == COLL_ALLTOALLV);
    side_layout(&recv, q, c->coll == COLL_ALLTOALLV);
    side_layout(&image, q, c->coll == COLL_ALLTOALLV);
    /* block j goes to world rank targets[j] (-1: allgather's one block is everybody's) */
    for (int j = 0; j < q; j++)
        targets[j] = allgather ? -1 : c->world_of[j];
    side_fill(&send, q, c->me_world, targets, -1, c->salt, 0);
    side_fill(&image, q, -1, c->world_of, allgather ? -1 : c->me_world, c->salt, 1);
    if (c->in_place) /* the send data in the receive buffer: block j is what goes to j */
        side_fill(&recv, q, c->me_world, targets, -1, c->salt, 0);
    else
        memset(recv.base, CHECK_SENTINEL, recv.bytes);
    memcpy(copy.base, send.base, send.bytes);
    for (int j = 0; j < q; j++) {
        scounts[j] = send.n_of[j];
        sdispls[j] = send.first[j];
        rcounts[j] = recv.n_of[j];
        rdispls[j] = recv.first[j];
    }
    rc = call_by_spec(c, c->in_place ? MPI_IN_PLACE : send.base + MARGIN, recv.base + MARGIN,
                      scounts);
    snprintf(what, sizeof what, "%s %s %s>%s count %d%s", c->label, coll_names[c->coll], sl->name,
             c->recvl->name, c->base, c->in_place ? " in place" : "");
    check_count(1);
    if (rc != MPI_SUCCESS) {
        check_fail("%s: returned error %d", what, rc);
        fprintf(stderr, "suites_check: stopping: a call returned an error\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    side_compare(&recv, &image, what);
    if (!c->in_place)
        side_compare(&send, &copy, what);
    side_free(&send);
    side_free(&recv);
    side_free(&image);
    side_free(&copy);
    free(scounts);
}

/* The world ranks of comm's ranks (of its remote group when remote). */
static int *world_ranks(MPI_Comm comm, int remote, int *n)
{
    MPI_Group group, world;
    int *ranks, *out;
    if (remote)
        MPI_Comm_remote_group(comm, &group);
    else
        MPI_Comm_group(comm, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_size(group, n);
    ranks = malloc((size_t)*n * sizeof(int));
    out = malloc((size_t)*n * sizeof(int));
    for (int i = 0; i < *n; i++)
        ranks[i] = i;
    MPI_Group_translate_ranks(group, *n, ranks, world, out);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    free(ranks);
    return out;
}

/* ---- the parts ---- */

static layout_t l_int, l_char, l_negvec, l_neglb, l_huge;

static void make_layouts(void)
{
    MPI_Datatype t;
    int one = 1;
    MPI_Aint below = -12;
    l_int = (layout_t){"int", MPI_INT, sizeof(int), 1, {0}};
    l_char = (layout_t){"char", MPI_CHAR, 1, 0, {0}}; /* the sweep fills chars itself */
    /* ints at 0, -8, -16 in signature order: lower bound -16, extent 20 */
    MPI_Type_vector(3, 1, -2, MPI_INT, &l_negvec.type);
    MPI_Type_commit(&l_negvec.type);
    l_negvec = (layout_t){"negvec", l_negvec.type, 20, 3, {0, -8, -16}};
    /* one int 12 bytes below the element's start, lower bound -16, extent 16 */
    MPI_Type_create_hindexed(1, &one, &below, MPI_INT, &t);
    MPI_Type_create_resized(t, -16, 16, &l_neglb.type);
    MPI_Type_free(&t);
    MPI_Type_commit(&l_neglb.type);
    l_neglb = (layout_t){"neglb", l_neglb.type, 16, 1, {-12}};
    MPI_Type_create_resized(MPI_INT, 0, HUGE_EXTENT, &l_huge.type);
    MPI_Type_commit(&l_huge.type);
    l_huge = (layout_t){"huge", l_huge.type, HUGE_EXTENT, 1, {0}};
}

/* Element offsets start at the element: the first element of a buffer with a negative
 * offset must lie MARGIN bytes in, which side_* does (MARGIN >= 16). */
static void part_negative(void)
{
    struct {
        const layout_t *s, *r;
        int smult, rmult;
    } pairs[] = {{&l_negvec, &l_negvec, 1, 1}, {&l_int, &l_negvec, 3, 1}, {&l_negvec, &l_int, 1, 3},
                 {&l_neglb, &l_neglb, 1, 1},   {&l_neglb, &l_int, 1, 1},  {&l_int, &l_neglb, 1, 1}};
    int *world_of = malloc((size_t)world_size * sizeof(int));
    for (int j = 0; j < world_size; j++)
        world_of[j] = j;
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++)
        for (int coll = 0; coll < NCOLLS; coll++)
            for (int in_place = 0; in_place < 2; in_place++) {
                callspec_t c = {coll,
                                in_place,
                                world_size,
                                world_rank,
                                world_of,
                                MPI_COMM_WORLD,
                                pairs[k].s,
                                pairs[k].r,
                                pairs[k].smult,
                                pairs[k].rmult,
                                coll != COLL_ALLTOALLV ? units_uniform
                                : in_place             ? units_symmetric
                                                       : units_skewed,
                                5,
                                (uint32_t)(100 + k * 8 + (size_t)coll * 2 + (size_t)in_place),
                                "negative lower bound:"};
                if (in_place && pairs[k].s != pairs[k].r)
                    continue; /* in place takes the receive side's type for both */
                checked_call(&c);
            }
    free(world_of);
}

/* Intercommunicator: the lower third and the rest; then the merge, upper group first. */
static void part_inter(void)
{
    int low = (world_size + 2) / 3, mine = world_rank < low, nremote, nmerged;
    MPI_Comm local, inter, merged;
    int *remote_world, *merged_world;

    if (world_size < 2)
        return;
    MPI_Comm_split(MPI_COMM_WORLD, mine, world_rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, mine ? low : 0, 77, &inter);
    remote_world = world_ranks(inter, 1, &nremote);
    for (int coll = 0; coll < NCOLLS; coll++)
        for (int base = 0; base < 3; base++) {
            callspec_t c = {coll,
                            0,
                            nremote,
                            world_rank,
                            remote_world,
                            inter,
                            &l_int,
                            &l_int,
                            1,
                            1,
                            coll == COLL_ALLTOALLV ? units_skewed : units_uniform,
                            base == 2 ? 1000 : base * 3 + 1,
                            (uint32_t)(200 + coll * 4 + base),
                            "intercommunicator:"};
            checked_call(&c);
            c.sendl = c.recvl = &l_negvec; /* a packed type across groups too */
            c.salt += 50;
            checked_call(&c);
        }
    MPI_Intercomm_merge(inter, mine, &merged);
    merged_world = world_ranks(merged, 0, &nmerged);
    for (int coll = 0; coll < NCOLLS; coll++) {
        callspec_t c = {coll,
                        coll == COLL_ALLGATHER,
                        nmerged,
                        world_rank,
                        merged_world,
                        merged,
                        &l_int,
                        &l_int,
                        1,
                        1,
                        coll == COLL_ALLTOALLV ? units_skewed : units_uniform,
                        7,
                        (uint32_t)(300 + coll),
                        "merged intercommunicator:"};
        checked_call(&c);
    }
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    free(remote_world);
    free(merged_world);
}

/* Reserve `bytes` of address space, filled with the sentinel where touched only. */
static char *reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Huge extent: one int per block, 4 GiB apart; checked around each element. */
static void part_huge(void)
{
    size_t span = (size_t)world_size * (size_t)HUGE_EXTENT + 4096;
    char *send = reserve(span), *recv = reserve(span);
    int ok = send && recv, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (world_rank == 0)
            printf("suites_check: SKIP huge: no %zu bytes of address space\n", span);
        check_skip(1);
        goto out;
    }
    for (int coll = 0; coll < NCOLLS; coll++)
        for (int plain_recv = 0; plain_recv < 2; plain_recv++) {
            int counts[64], displs[64], rc, allgather = coll == COLL_ALLGATHER;
            uint32_t salt = (uint32_t)(400 + coll * 2 + plain_recv);
            MPI_Datatype rt = plain_recv ? MPI_INT : l_huge.type;
            MPI_Aint rstride = plain_recv ? (MPI_Aint)sizeof(int) : HUGE_EXTENT;
            if (world_size > 64)
                break;
            for (int j = 0; j < world_size; j++) {
                int v = (int)check_value(world_rank, allgather ? -1 : j, 0, salt);
                counts[j] = 1;
                displs[j] = j;
                memset(send + j * HUGE_EXTENT, CHECK_SENTINEL, 64);
                memcpy(send + j * HUGE_EXTENT, &v, sizeof v);
                memset(recv + j * rstride, CHECK_SENTINEL, 64);
            }
            if (coll == COLL_ALLTOALL)
                rc = MPI_Alltoall(send, 1, l_huge.type, recv, 1, rt, MPI_COMM_WORLD);
            else if (allgather)
                rc = MPI_Allgather(send, 1, l_huge.type, recv, 1, rt, MPI_COMM_WORLD);
            else
                rc = MPI_Alltoallv(send, counts, displs, l_huge.type, recv, counts, displs, rt,
                                   MPI_COMM_WORLD);
            check_count(1);
            if (rc != MPI_SUCCESS) {
                check_fail("huge extent: %s returned error %d", coll_names[coll], rc);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            for (int j = 0; j < world_size; j++) {
                int expected = (int)check_value(j, allgather ? -1 : world_rank, 0, salt), got;
                const unsigned char *after = (const unsigned char *)recv + j * rstride + 4;
                memcpy(&got, recv + j * rstride, sizeof got);
                check_count(1);
                if (got != expected)
                    check_fail("huge extent: %s into %s: block %d: expected %d got %d",
                               coll_names[coll], plain_recv ? "ints" : "huge", j, expected, got);
                for (int b = 0; !plain_recv && b < 60; b++) {
                    check_count(1);
                    if (after[b] != CHECK_SENTINEL) {
                        check_fail("huge extent: %s: a byte after block %d changed",
                                   coll_names[coll], j);
                        break;
                    }
                }
            }
        }
out:
    if (send)
        munmap(send, span);
    if (recv)
        munmap(recv, span);
}

/* OSU -c: powers of two per block, the same buffers again and again, each call validated. */
static void part_sweep(void)
{
    size_t most = (size_t)world_size * SWEEP_MAX;
    char *send = malloc(most), *recv = malloc(most + MARGIN), *expect = malloc(most + MARGIN);
    int counts[64], displs[64];
    long long call = 0;

    if (world_size > 64)
        goto out;
    for (size_t size = 1; size <= SWEEP_MAX; size *= 2) {
        int iterations = size <= 16384 ? 40 : 4;
        for (int j = 0; j < world_size; j++) {
            counts[j] = (int)size;
            displs[j] = (int)(j * size);
        }
        for (int it = 0; it < iterations; it++)
            for (int coll = 0; coll < NCOLLS; coll++, call++) {
                uint32_t salt = (uint32_t)(1000 + call);
                int allgather = coll == COLL_ALLGATHER, rc;
                memset(recv, CHECK_SENTINEL, (size_t)world_size * size + MARGIN);
                memset(expect, CHECK_SENTINEL, (size_t)world_size * size + MARGIN);
                for (int j = 0; j < world_size; j++)
                    for (size_t i = 0; i < size; i++) {
                        /* one value per 4 bytes, its bytes kept in 1..120 (never the sentinel) */
                        uint32_t out = check_value(world_rank, allgather ? -1 : j, i / 4, salt);
                        uint32_t in = check_value(j, allgather ? -1 : world_rank, i / 4, salt);
                        send[j * size + i] = (char)(1 + (out >> (8 * (i % 4))) % 120);
                        expect[j * size + i] = (char)(1 + (in >> (8 * (i % 4))) % 120);
                    }
                if (coll == COLL_ALLTOALL)
                    rc = MPI_Alltoall(send, (int)size, MPI_CHAR, recv, (int)size, MPI_CHAR,
                                      MPI_COMM_WORLD);
                else if (allgather)
                    rc = MPI_Allgather(send, (int)size, MPI_CHAR, recv, (int)size, MPI_CHAR,
                                       MPI_COMM_WORLD);
                else
                    rc = MPI_Alltoallv(send, counts, displs, MPI_CHAR, recv, counts, displs,
                                       MPI_CHAR, MPI_COMM_WORLD);
                check_count((long long)((size_t)world_size * size + MARGIN) + 1);
                if (rc != MPI_SUCCESS) {
                    check_fail("sweep: %s of %zu bytes returned error %d", coll_names[coll], size,
                               rc);
                    MPI_Abort(MPI_COMM_WORLD, 3);
                }
                if (memcmp(recv, expect, (size_t)world_size * size + MARGIN) != 0)
                    check_fail("sweep: %s of %zu bytes a block, call %d of that size: the "
                               "receive buffer differs",
                               coll_names[coll], size, it);
            }
    }
out:
    free(send);
    free(recv);
    free(expect);
}

/* IMB: the first k ranks only, the others outside and idle. */
static void part_subsets(void)
{
    for (int k = 2; k <= world_size; k++) {
        MPI_Comm sub;
        MPI_Comm_split(MPI_COMM_WORLD, world_rank < k ? 0 : MPI_UNDEFINED, world_rank, &sub);
        if (sub != MPI_COMM_NULL) {
            int n, *world_of = world_ranks(sub, 0, &n);
            static const int bases[] = {0, 1, 256, 16384};
            for (int coll = 0; coll < NCOLLS; coll++)
                for (int b = 0; b < 4; b++)
                    for (int it = 0; it < 3; it++) {
                        callspec_t c = {coll,
                                        0,
                                        n,
                                        world_rank,
                                        world_of,
                                        sub,
                                        &l_int,
                                        &l_int,
                                        1,
                                        1,
                                        units_uniform,
                                        bases[b],
                                        (uint32_t)(5000 + k * 64 + coll * 16 + b * 4 + it),
                                        "subset:"};
                        checked_call(&c);
                    }
            free(world_of);
            MPI_Comm_free(&sub);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    static const char *const parts[] = {"inter", "negative", "huge", "sweep", "subsets"};
    void (*const run[])(void) = {part_inter, part_negative, part_huge, part_sweep, part_subsets};
    int status;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    make_layouts();
    for (int k = 0; k < 5; k++) {
        int chosen = argc == 1;
        for (int a = 1; a < argc; a++)
            chosen |= strcmp(argv[a], parts[k]) == 0;
        if (chosen)
            run[k]();
    }
    MPI_Type_free(&l_negvec.type);
    MPI_Type_free(&l_neglb.type);
    MPI_Type_free(&l_huge.type);
    status = check_finish("suites_check");
    MPI_Finalize();
    return status;
}

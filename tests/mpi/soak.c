/*
 * soak: a long run of MPI_Alltoall, MPI_Allgather and MPI_Alltoallv over many call shapes and
 * communicators that come and go, every byte checked; memory, file descriptors and shared
 * segments must not grow once the run is warm (but for one segment a set of processes, below).
 *
 *   soak [--calls N] [--check-every K] [--comms C]     (defaults: 20000 calls, 1, 100)
 *
 * Shapes (200): collective x datatype x count x MPI_IN_PLACE (x pattern for MPI_Alltoallv):
 *   datatypes  int, double, char, a vector of 2 ints with a hole after each, a struct {int,
 *              double} with padding, a contiguous type of 3 ints;
 *   counts     1, 4, 33, 250 and 2000 elements a block; in place with 1, 33 and 2000 (the
 *              struct 250: MPICH 4.0.2's own in-place calls fail for it above 8 KiB a block,
 *              see coll_check.c); and 0;
 *   alltoallv  skewed counts ((7i + 3j + s) mod 5 times count/2 + 1, some zero) or sparse ones
 *              (one pair in three), symmetric when in place (which MPI requires), blocks in
 *              order with a one-element gap between them.
 * Calls come in bursts of 1 to 16 calls of one shape on one communicator (so that learning,
 * on by default, sees repeating shapes and settles some), the shape and the burst length
 * from the call number alone (the same on every rank). A pool of 4 communicators is renewed
 * as the run goes: every N / C calls one is freed and replaced, in turn a dup of
 * MPI_COMM_WORLD, a split into even and odd ranks (reversed), a split into the first third
 * and the rest; C are created in all.
 *
 * Checked on every K-th call (every call by default; the long form may check fewer when
 * checking costs more than the calls, and says so): every element against the formula of
 * check.h (salted with the call number), every byte of holes, gaps and the 64-byte guards
 * after the buffers still the sentinel, the send buffer unchanged, the return code. Measured on
 * every rank at the start, after the warm-up (a fifth of the calls) and at the end, each time
 * with no communicator of the pool alive (freed there, and after the warm-up made anew), so
 * that the three see the same communicators: VmRSS (/proc/self/status), open file
 * descriptors (/proc/self/fd), shared-memory files in use (distinct /dev/shm paths this process
 * maps or holds open: /proc/self/maps and /proc/self/fd) and System V segments created by a
 * process of the job (/proc/sysvipc/shm, cpid among the ranks' pids). A rank fails when its
 * RSS grew by more than 5 MB after the warm-up, or its descriptors or System V segments grew at
 * all, or its shared-memory files grew after the warm-up to more than those at the start and
 * one for each set of processes its communicators span (process_sets: xchg keeps one segment a
 * set, and a set's first may come after the warm-up; a leak grows with the communicators made).
 * Prints one line per rank with the figures, and "soak: N checks, M failed".
 */
#include <dirent.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define POOL 4
#define GUARD_BYTES 64
#define RSS_LIMIT_KIB (5 * 1024)
#define MAX_PRIMS 4
#define MAX_PATHS 256

enum { COLL_ALLTOALL, COLL_ALLGATHER, COLL_ALLTOALLV };
enum { KIND_INT, KIND_DOUBLE, KIND_CHAR };
enum { PAT_SKEW, PAT_SPARSE };

/* A datatype and its type map (primitives inside one element). */
typedef struct layout {
    const char *name;
    MPI_Datatype type;
    size_t extent;
    int nprims;
    size_t offset[MAX_PRIMS];
    int kind[MAX_PRIMS];
} layout_t;

typedef struct shape {
    int coll, type, count, in_place, pattern;
} shape_t;

static layout_t layouts[6];
static shape_t shapes[256];
static int nshapes;
static int world_rank, world_size;

static void make_layouts(void)
{
    MPI_Datatype vec, st;
    int blocklens[2] = {1, 1};
    MPI_Aint displs[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};

    layouts[0] = (layout_t){"int", MPI_INT, sizeof(int), 1, {0}, {KIND_INT}};
    layouts[1] = (layout_t){"double", MPI_DOUBLE, sizeof(double), 1, {0}, {KIND_DOUBLE}};
    layouts[2] = (layout_t){"char", MPI_CHAR, 1, 1, {0}, {KIND_CHAR}};
    /* int, hole, int, hole: extent 16 */
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 16, &layouts[3].type);
    MPI_Type_free(&vec);
    MPI_Type_commit(&layouts[3].type);
    layouts[3] = (layout_t){"vector-holes", layouts[3].type, 16, 2, {0, 8}, {KIND_INT, KIND_INT}};
    /* struct {int; double} with 4 bytes of padding after the int */
    MPI_Type_create_struct(2, blocklens, displs, types, &st);
    MPI_Type_commit(&st);
    layouts[4] = (layout_t){"struct", st, 16, 2, {0, 8}, {KIND_INT, KIND_DOUBLE}};
    MPI_Type_contiguous(3, MPI_INT, &layouts[5].type);
    MPI_Type_commit(&layouts[5].type);
    layouts[5] =
        (layout_t){"3ints", layouts[5].type, 12, 3, {0, 4, 8}, {KIND_INT, KIND_INT, KIND_INT}};
}

/* The 200 shapes (file header). */
static void make_shapes(void)
{
    static const int counts[5] = {1, 4, 33, 250, 2000}, in_place_counts[3] = {1, 33, 2000};
    for (int coll = 0; coll < 3; coll++)
        for (int pattern = 0; pattern < (coll == COLL_ALLTOALLV ? 2 : 1); pattern++)
            for (int t = 0; t < 6; t++) {
                for (int c = 0; c < 5; c++)
                    shapes[nshapes++] = (shape_t){coll, t, counts[c], 0, pattern};
                for (int c = 0; c < 3; c++) /* MPICH's own in place fails for the struct
                                               above 8 KiB a block (coll_check.c) */
                    shapes[nshapes++] =
                        (shape_t){coll, t, t == 4 && c == 2 ? 250 : in_place_counts[c], 1, pattern};
            }
    for (int coll = 0; coll < 3; coll++)
        for (int t = 0; t < 6; t += 3)
            shapes[nshapes++] = (shape_t){coll, t, 0, 0, PAT_SKEW};
    for (int t = 0; t < 6; t += 3)
        shapes[nshapes++] = (shape_t){COLL_ALLTOALLV, t, 0, 1, PAT_SPARSE};
}

/* Elements from rank i to rank j in an alltoallv of shape s (symmetric in place). */
static int v_count(const shape_t *s, int i, int j, int salt)
{
    int a = s->in_place ? i + j : 7 * i + 3 * j;
    if (s->count == 0)
        return 0;
    if (s->pattern == PAT_SPARSE)
        return (a + salt) % 3 == 0 ? s->count : 0;
    return ((a + salt) % 5) * (s->count / 2 + 1) / 2;
}

/* ---- filling and checking one element ---- */

static void put_element(char *at, const layout_t *l, int src, int dst, uint64_t index,
                        uint32_t salt)
{
    for (int k = 0; k < l->nprims; k++) {
        uint32_t v = check_value(src, dst, index * MAX_PRIMS + (uint64_t)k, salt);
        char *p = at + l->offset[k];
        if (l->kind[k] == KIND_INT) {
            int x = (int)v;
            memcpy(p, &x, sizeof x);
        } else if (l->kind[k] == KIND_DOUBLE) {
            double x = (double)(v >> 8);
            memcpy(p, &x, sizeof x);
        } else {
            *p = (char)(1 + v % 120);
        }
    }
}

/* ---- one call ---- */

typedef struct call {
    const shape_t *s;
    const layout_t *l;
    MPI_Comm comm;
    int p, me;
    uint32_t salt;
    /* element offsets of each block (alltoall, allgather: block j at j count; alltoallv: in
     * order with a gap of one element) and counts */
    int *scounts, *sdispls, *rcounts, *rdispls;
    size_t send_elems, recv_elems;          /* elements of each buffer, gaps included */
    char *send, *recv, *send_copy, *expect; /* expect: the receive buffer as it must end */
} call_t;

static void layout_v(call_t *c)
{
    size_t at = 0;
    for (int j = 0; j < c->p; j++) {
        c->scounts[j] = v_count(c->s, c->me, j, (int)(c->salt % 7));
        c->sdispls[j] = (int)at;
        at += (size_t)c->scounts[j] + 1;
    }
    c->send_elems = at;
    at = 0;
    for (int j = 0; j < c->p; j++) {
        c->rcounts[j] = v_count(c->s, j, c->me, (int)(c->salt % 7));
        c->rdispls[j] = (int)at;
        at += (size_t)c->rcounts[j] + 1;
    }
    c->recv_elems = at;
}

static void layout_blocks(call_t *c)
{
    int n = c->s->count;
    for (int j = 0; j < c->p; j++) {
        c->scounts[j] = c->s->coll == COLL_ALLGATHER ? (j == 0 ? n : 0) : n;
        c->sdispls[j] = j * n;
        c->rcounts[j] = n;
        c->rdispls[j] = j * n;
    }
    c->send_elems = c->s->coll == COLL_ALLGATHER ? (size_t)n : (size_t)c->p * (size_t)n;
    c->recv_elems = (size_t)c->p * (size_t)n;
}

/* Sentinels everywhere, then the data: the send blocks (for in place, in the receive buffer;
 * allgather in place: the own block), and the image of the receive buffer after the call. */
static void fill(call_t *c)
{
    const layout_t *l = c->l;
    int allgather = c->s->coll == COLL_ALLGATHER;
    memset(c->send, CHECK_SENTINEL, c->send_elems * l->extent + GUARD_BYTES);
    memset(c->recv, CHECK_SENTINEL, c->recv_elems * l->extent + GUARD_BYTES);
    memset(c->expect, CHECK_SENTINEL, c->recv_elems * l->extent + GUARD_BYTES);
    for (int j = 0; j < c->p; j++) {
        char *base = c->s->in_place ? c->recv + (size_t)c->rdispls[j] * l->extent
                                    : c->send + (size_t)c->sdispls[j] * l->extent;
        char *image = c->expect + (size_t)c->rdispls[j] * l->extent;
        int n = c->s->in_place ? c->rcounts[j] : c->scounts[j];
        for (int i = 0; i < c->rcounts[j]; i++) /* what rank j sends this rank */
            put_element(image + (size_t)i * l->extent, l, j, allgather ? -1 : c->me, (uint64_t)i,
                        c->salt);
        if (allgather && (c->s->in_place ? j != c->me : j != 0))
            continue;
        for (int i = 0; i < n; i++)
            put_element(base + (size_t)i * l->extent, l, c->me, allgather ? -1 : j, (uint64_t)i,
                        c->salt);
    }
    memcpy(c->send_copy, c->send, c->send_elems * l->extent + GUARD_BYTES);
}

static void fail_once(const call_t *c, const char *what, long long call_no)
{
    check_fail("call %lld (%s %s count %d%s, comm of %d): %s", call_no,
               c->s->coll == COLL_ALLTOALL    ? "alltoall"
               : c->s->coll == COLL_ALLGATHER ? "allgather"
                                              : "alltoallv",
               c->l->name, c->s->count, c->s->in_place ? " in place" : "", c->p, what);
}

/* Every byte of the receive buffer (elements, holes, gaps, guard) against its image; the send
 * buffer unchanged. A difference is located for the failure line. */
static void verify(const call_t *c, long long call_no)
{
    size_t total = c->recv_elems * c->l->extent + GUARD_BYTES, b = 0;
    char what[128];

    check_count((long long)total + 1);
    if (memcmp(c->recv, c->expect, total) != 0) {
        while (b < total && c->recv[b] == c->expect[b])
            b++;
        snprintf(what, sizeof what, "receive buffer byte %zu of %zu (element %zu) differs", b,
                 total, b / c->l->extent);
        fail_once(c, what, call_no);
    }
    if (!c->s->in_place &&
        memcmp(c->send, c->send_copy, c->send_elems * c->l->extent + GUARD_BYTES) != 0)
        fail_once(c, "the send buffer changed", call_no);
}

static int run_call(call_t *c)
{
    const void *sb = c->s->in_place ? MPI_IN_PLACE : c->send;
    MPI_Datatype t = c->l->type;
    int n = c->s->count;
    if (c->s->coll == COLL_ALLTOALL)
        return MPI_Alltoall(sb, n, t, c->recv, n, t, c->comm);
    if (c->s->coll == COLL_ALLGATHER)
        return MPI_Allgather(sb, n, t, c->recv, n, t, c->comm);
    return MPI_Alltoallv(sb, c->scounts, c->sdispls, t, c->recv, c->rcounts, c->rdispls, t,
                         c->comm);
}

/* ---- what the run holds ---- */

typedef struct usage {
    long rss_kib;
    int fds, shm_files, sysv;
} usage_t;

static pid_t *job_pids;

/* Add path to the set (distinct paths under /dev/shm). */
static void add_path(char paths[][128], int *n, const char *path)
{
    if (strncmp(path, "/dev/shm/", 9) != 0)
        return;
    for (int i = 0; i < *n; i++)
        if (strncmp(paths[i], path, 127) == 0)
            return;
    if (*n < MAX_PATHS)
        snprintf(paths[(*n)++], 128, "%s", path);
}

static void count_fds_and_files(usage_t *u)
{
    static char paths[MAX_PATHS][128];
    char line[512], link[300], target[256];
    struct dirent *e;
    DIR *d = opendir("/proc/self/fd");
    FILE *maps = fopen("/proc/self/maps", "r");
    int n = 0;

    u->fds = 0;
    while (d && (e = readdir(d))) {
        ssize_t len;
        if (e->d_name[0] == '.')
            continue;
        u->fds++;
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        len = readlink(link, target, sizeof target - 1);
        if (len > 0) {
            target[len] = '\0';
            add_path(paths, &n, target);
        }
    }
    if (d) {
        closedir(d);
        u->fds--; /* the directory's own descriptor */
    }
    while (maps && fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (path) {
            path[strcspn(path, "\n")] = '\0';
            add_path(paths, &n, path);
        }
    }
    if (maps)
        fclose(maps);
    u->shm_files = n;
}

/* System V segments created by a process of the job. */
static int count_sysv(void)
{
    char line[512];
    int n = 0;
    FILE *f = fopen("/proc/sysvipc/shm", "r");
    if (!f)
        return 0;
    if (!fgets(line, sizeof line, f)) { /* the header */
        fclose(f);
        return 0;
    }
    while (fgets(line, sizeof line, f)) {
        long key, id, perms, size, cpid;
        if (sscanf(line, "%ld %ld %lo %ld %ld", &key, &id, &perms, &size, &cpid) != 5)
            continue;
        for (int r = 0; r < world_size; r++)
            if (job_pids[r] == (pid_t)cpid)
                n++;
    }
    fclose(f);
    return n;
}

static usage_t measure(void)
{
    usage_t u;
    u.rss_kib = check_rss_kib();
    count_fds_and_files(&u);
    u.sysv = count_sysv();
    return u;
}

/* ---- the run ---- */

static MPI_Comm make_comm(int serial)
{
    MPI_Comm comm;
    if (serial % 3 == 0)
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    else if (serial % 3 == 1)
        MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank, &comm);
    else
        MPI_Comm_split(MPI_COMM_WORLD, world_rank < (world_size + 2) / 3, world_rank, &comm);
    return comm;
}

/* How many sets of two or more processes this rank's pool communicators span (make_comm's three
 * kinds; two kinds of the same members count once): xchg keeps one shared segment for each set
 * (shim/shm.c, the pool), made at the first call of a set's communicators that runs a
 * shared-memory algorithm, which may come after the warm-up where learning runs other
 * algorithms until then (under load: 1 of 40 runs of scripts/load_check.sh, Open MPI, 5 ranks). */
static int process_sets(void)
{
    unsigned long long sets[3] = {0, 0, 0};
    int n = 0;
    if (world_size > 64)
        return 3;
    for (int kind = 0; kind < 3; kind++) {
        unsigned long long members = 0;
        int size = 0;
        for (int r = 0; r < world_size; r++) {
            int same = kind == 0 ? 1
                       : kind == 1
                           ? r % 2 == world_rank % 2
                           : (r < (world_size + 2) / 3) == (world_rank < (world_size + 2) / 3);
            if (same) {
                members |= 1ull << r;
                size++;
            }
        }
        if (size < 2)
            continue;
        for (int k = 0; k < n && members; k++)
            if (sets[k] == members)
                members = 0;
        if (members)
            sets[n++] = members;
    }
    return n;
}

/* The figures with the pool's communicators freed (no xchg context of them left); then a new
 * pool when `created` is given (it counts the communicators made). */
static usage_t measure_bare(MPI_Comm pool[POOL], long long *created)
{
    usage_t u;
    for (int k = 0; k < POOL; k++)
        MPI_Comm_free(&pool[k]);
    u = measure();
    for (int k = 0; created && k < POOL; k++)
        pool[k] = make_comm((int)(*created)++);
    return u;
}

/* What a run asks for and holds. */
typedef struct run {
    long long ncalls, check_every, ncomms, created;
    MPI_Comm pool[POOL];
    usage_t start, warm, end;
} run_t;

/* One call of the run: layout, fill (when checked), the call, the check. */
static void one_call(call_t *c, long long call_no, int check)
{
    int rc;
    c->salt = (uint32_t)call_no;
    if (c->s->coll == COLL_ALLTOALLV)
        layout_v(c);
    else
        layout_blocks(c);
    if (check)
        fill(c);
    rc = run_call(c);
    if (rc != MPI_SUCCESS) {
        fail_once(c, "the call returned an error", call_no);
        fprintf(stderr, "soak: stopping: a call returned an error\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (check)
        verify(c, call_no);
}

/* The calls, in bursts (file header); the warm-up's figures; the pool renewed as it goes. */
static void run_calls(run_t *r, call_t *c)
{
    long long call_no = 0, warm_at = r->ncalls / 5, renew_every;
    int warmed = 0;

    renew_every = r->ncalls / (r->ncomms - POOL + 1) > 0 ? r->ncalls / (r->ncomms - POOL + 1) : 1;
    while (call_no < r->ncalls) {
        /* a burst: one shape, one communicator, 1 to 16 calls */
        long long burst = call_no / 8;
        int len = 1 + (int)(check_value(0, 0, (uint64_t)burst, 77) % 16);
        c->s = &shapes[check_value(1, 1, (uint64_t)burst, 78) % (uint32_t)nshapes];
        c->l = &layouts[c->s->type];
        if (!warmed && call_no >= warm_at) { /* no communicator of the pool, as at the start */
            r->warm = measure_bare(r->pool, &r->created);
            warmed = 1;
        }
        c->comm = r->pool[burst % POOL];
        MPI_Comm_size(c->comm, &c->p);
        MPI_Comm_rank(c->comm, &c->me);
        for (int k = 0; k < len && call_no < r->ncalls; k++, call_no++) {
            one_call(c, call_no, call_no % r->check_every == 0);
            /* renew a communicator of the pool (not the one of this burst) */
            if (call_no > 0 && call_no % renew_every == 0 && r->created < r->ncomms) {
                int slot = (int)((burst + 1) % POOL);
                MPI_Comm_free(&r->pool[slot]);
                r->pool[slot] = make_comm((int)r->created++);
            }
        }
    }
    r->end = measure_bare(r->pool, NULL);
}

/* The figures, one line per rank in rank order; the verdicts. */
static void report(const run_t *r)
{
    const usage_t *s = &r->start, *w = &r->warm, *e = &r->end;
    for (int k = 0; k < world_size; k++) {
        if (k == world_rank) {
            printf("soak: rank %d rss_kib %ld %ld %ld fds %d %d %d shm_files %d %d %d sysv %d %d "
                   "%d (start, warm, end) calls %lld checked every %lld comms %lld\n",
                   world_rank, s->rss_kib, w->rss_kib, e->rss_kib, s->fds, w->fds, e->fds,
                   s->shm_files, w->shm_files, e->shm_files, s->sysv, w->sysv, e->sysv, r->ncalls,
                   r->check_every, r->created);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    check_count(4);
    if (e->rss_kib - w->rss_kib > RSS_LIMIT_KIB)
        check_fail("VmRSS grew by %ld KiB after the warm-up (limit %d)", e->rss_kib - w->rss_kib,
                   RSS_LIMIT_KIB);
    if (e->fds > w->fds)
        check_fail("open file descriptors grew after the warm-up: %d -> %d", w->fds, e->fds);
    if (e->shm_files > w->shm_files && e->shm_files > s->shm_files + process_sets())
        check_fail("shared-memory files in use grew after the warm-up: %d -> %d, beyond the %d "
                   "at the start and one for each of the %d sets of processes",
                   w->shm_files, e->shm_files, s->shm_files, process_sets());
    if (e->sysv > w->sysv)
        check_fail("System V segments of the job grew after the warm-up: %d -> %d", w->sysv,
                   e->sysv);
}

int main(int argc, char **argv)
{
    run_t r = {.ncalls = 20000, .check_every = 1, .ncomms = 100};
    size_t most;
    call_t c;
    pid_t me;
    int status;

    MPI_Init(&argc, &argv);
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--calls") == 0)
            r.ncalls = atoll(argv[a + 1]);
        else if (strcmp(argv[a], "--check-every") == 0)
            r.check_every = atoll(argv[a + 1]);
        else if (strcmp(argv[a], "--comms") == 0)
            r.ncomms = atoll(argv[a + 1]);
    }
    if (r.ncalls < 100 || r.check_every < 1 || r.ncomms < POOL) {
        fprintf(stderr, "soak: --calls >= 100, --check-every >= 1, --comms >= %d\n", POOL);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    job_pids = malloc((size_t)world_size * sizeof *job_pids);
    me = getpid();
    MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, job_pids, (int)sizeof me, MPI_BYTE,
                  MPI_COMM_WORLD);
    make_layouts();
    make_shapes();
    r.start = measure();

    /* buffers for the largest shape: up to 2002 elements of 16 bytes (alltoallv) and a gap
     * for each of p ranks */
    most = ((size_t)world_size * 2100 + 8) * 16 + GUARD_BYTES;
    c.send = malloc(most);
    c.recv = malloc(most);
    c.send_copy = malloc(most);
    c.expect = malloc(most);
    c.scounts = malloc(4 * (size_t)world_size * sizeof(int));
    c.sdispls = c.scounts + world_size;
    c.rcounts = c.sdispls + world_size;
    c.rdispls = c.rcounts + world_size;
    for (int k = 0; k < POOL; k++)
        r.pool[k] = make_comm((int)r.created++);
    run_calls(&r, &c);
    report(&r);

    for (int t = 3; t < 6; t++)
        MPI_Type_free(&layouts[t].type);
    free(c.send);
    free(c.recv);
    free(c.send_copy);
    free(c.expect);
    free(c.scounts);
    free(job_pids);
    status = check_finish("soak");
    MPI_Finalize();
    return status;
}

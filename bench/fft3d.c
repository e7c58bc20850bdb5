/*
 * fft3d.c: a 3D FFT application on FFTW's MPI interface, for scripts/bench_apps.sh. A plain MPI
 * program that knows nothing of xchg: run natively and with the library preloaded, it shows what
 * a user of FFTW's distributed transforms gains or loses.
 *
 * An N x N x N array of complex numbers, distributed in slabs of the first dimension (FFTW's
 * default block, ceil(N/p) planes per rank), filled from a hash of the global index. Two parts:
 *   1. the library's 3D FFT: fftw_mpi_plan_dft_3d, forward and backward, in place, output in the
 *      input's order (FFTW_MPI_TRANSPOSED_OUT off, so each transform holds a transpose there and
 *      one back), run -i times; "fft" is the time of these fftw_execute calls;
 *   2. the same transform built from its parts, so that the communication can be timed apart: a
 *      2D FFT of each local plane (fftw_plan_many_dft), the distributed transpose of the N x N
 *      matrix of N-number rows (fftw_mpi_plan_many_transpose, the planes then split along the
 *      second dimension), the 1D FFTs along the first dimension (fftw_plan_guru_dft), and the
 *      transpose back; "transposes" is the time of the two transposes (what waiting for a slower
 *      rank's local FFT takes included), "fft" the whole.
 * Each transform is timed after a barrier; a rank keeps its own times and the slowest rank's time
 * per transform (MPI_MAX, after the loop) is summed.
 *
 * Checks (exit status 1 when one fails): the round trip (forward, backward, divided by N^3) must
 * give the input back within 1e-10 in each part, and part 2's first forward transform must equal
 * part 1's within 1e-10 of its largest magnitude (part 2 is a 3D FFT, not merely invertible).
 *
 * Output (rank 0):
 *   fft3d: n=N ranks=P iterations=I planner=NAME
 *   fft3d: dft_3d: fft=S s (T transforms) error=E transposes=KIND[+KIND]
 *   fft3d: split: fft=S s transposes=S s (T transforms) error=E vs_dft_3d=D transposes=KIND
 *   fft3d: OK  (or fft3d: FAILED ...)
 * KIND is the transpose algorithm in the plans (fftw_sprint_plan): alltoall (MPI_Alltoall, or
 * MPI_Alltoallv for unequal blocks: the only one that goes through xchg), pairwise
 * (MPI_Sendrecv) or recurse. FFTW considers alltoall only for an out-of-place transpose that may
 * destroy its input: part 2's transposes are planned so (FFTW_DESTROY_INPUT; their buffers are
 * scratch), and with the default planner, FFTW_ESTIMATE, FFTW picks alltoall for them; it picks
 * pairwise for the transposes inside fftw_mpi_plan_dft_3d. FFTW_ESTIMATE also makes the plans,
 * and so the rounding errors, the same in every run; -p measure lets FFTW time its candidates
 * (under xchg it may then choose other transposes, and other local FFTs, than natively).
 *
 * Usage: fft3d [-n N] [-i ITERATIONS] [-p estimate|measure|patient]   (defaults 64, 3, estimate)
 */
#include <fftw3-mpi.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE 1e-10

typedef struct options {
    ptrdiff_t n;
    int iterations;
    unsigned planner;
    const char *planner_name;
} options_t;

/* The slab of this rank and the times of one part. */
typedef struct part {
    ptrdiff_t local_n0, start0;
    double *fft, *transposes; /* per transform: this rank's seconds */
    int transforms;
    char kinds[64]; /* transpose algorithms in the plans */
    double error;   /* round trip, max over ranks */
} part_t;

static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The input at the global index: real and imaginary parts in [-1, 1). */
static void input_value(uint64_t index, double *re, double *im)
{
    *re = (double)(mix64(2 * index) >> 11) * 0x1p-52 - 1.0;
    *im = (double)(mix64(2 * index + 1) >> 11) * 0x1p-52 - 1.0;
}

static void fill_input(fftw_complex *a, const options_t *o, const part_t *part)
{
    ptrdiff_t plane = o->n * o->n;
    for (ptrdiff_t i = 0; i < part->local_n0 * plane; i++)
        input_value((uint64_t)(part->start0 * plane + i), &a[i][0], &a[i][1]);
}

/* Divide by N^3 (the backward transform is not normalised). */
static void scale(fftw_complex *a, const options_t *o, const part_t *part)
{
    double factor = 1.0 / ((double)o->n * (double)o->n * (double)o->n);
    for (ptrdiff_t i = 0; i < part->local_n0 * o->n * o->n; i++) {
        a[i][0] *= factor;
        a[i][1] *= factor;
    }
}

/* The largest distance of A from the input, over all ranks. */
static double roundtrip_error(const fftw_complex *a, const options_t *o, const part_t *part)
{
    ptrdiff_t plane = o->n * o->n;
    double mine = 0, all;
    for (ptrdiff_t i = 0; i < part->local_n0 * plane; i++) {
        double re, im;
        input_value((uint64_t)(part->start0 * plane + i), &re, &im);
        mine = fmax(mine, fmax(fabs(a[i][0] - re), fabs(a[i][1] - im)));
    }
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

/* Append to KINDS the transpose algorithms named in PLAN's description. */
static void transpose_kinds(fftw_plan plan, char *kinds, size_t size)
{
    static const char *const names[] = {"alltoall", "pairwise", "recurse"};
    char *text = fftw_sprint_plan(plan), needle[40];
    for (int k = 0; k < 3; k++) {
        snprintf(needle, sizeof needle, "mpi-transpose-%s", names[k]);
        if (text && strstr(text, needle) && !strstr(kinds, names[k]))
            snprintf(kinds + strlen(kinds), size - strlen(kinds), "%s%s", *kinds ? "+" : "",
                     names[k]);
    }
    free(text);
}

/* A barrier, then PLAN; its seconds on this rank. */
static double timed_execute(fftw_plan plan)
{
    double start;
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    fftw_execute(plan);
    return MPI_Wtime() - start;
}

/* The slowest rank's time per transform, summed. */
static double slowest_sum(const double *mine, int count)
{
    double *slowest = malloc((size_t)count * sizeof *slowest), sum = 0;
    MPI_Allreduce(mine, slowest, count, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < count; i++)
        sum += slowest[i];
    free(slowest);
    return sum;
}

/* Part 1: fftw_mpi_plan_dft_3d; REFERENCE gets the first forward transform. */
static void run_dft3d(const options_t *o, part_t *part, fftw_complex **reference)
{
    ptrdiff_t n = o->n, alloc;
    fftw_complex *a;
    fftw_plan forward, backward;

    alloc = fftw_mpi_local_size_3d(n, n, n, MPI_COMM_WORLD, &part->local_n0, &part->start0);
    a = fftw_alloc_complex((size_t)alloc);
    *reference = fftw_alloc_complex((size_t)alloc);
    forward = fftw_mpi_plan_dft_3d(n, n, n, a, a, MPI_COMM_WORLD, FFTW_FORWARD, o->planner);
    backward = fftw_mpi_plan_dft_3d(n, n, n, a, a, MPI_COMM_WORLD, FFTW_BACKWARD, o->planner);
    transpose_kinds(forward, part->kinds, sizeof part->kinds);
    transpose_kinds(backward, part->kinds, sizeof part->kinds);
    fill_input(a, o, part);
    for (int it = 0; it < o->iterations; it++) {
        part->fft[2 * it] = timed_execute(forward);
        if (it == 0)
            memcpy(*reference, a, (size_t)alloc * sizeof *a);
        part->fft[2 * it + 1] = timed_execute(backward);
        scale(a, o, part);
    }
    part->error = roundtrip_error(a, o, part);
    fftw_destroy_plan(forward);
    fftw_destroy_plan(backward);
    fftw_free(a);
}

/* The plans of part 2 for one direction: planes, transpose, lines, transpose back. */
typedef struct split_plans {
    fftw_plan planes[2], lines[2], there, back; /* [0] forward, [1] backward */
} split_plans_t;

static void make_split_plans(split_plans_t *s, const options_t *o, ptrdiff_t local_n0,
                             ptrdiff_t local_n1, fftw_complex *a, fftw_complex *b)
{
    int n = (int)o->n, plane_dims[2] = {n, n};
    fftw_iodim line = {n, n, n};
    fftw_iodim line_loops[2] = {{(int)local_n1, n * n, n * n}, {n, 1, 1}};

    for (int d = 0; d < 2; d++) {
        int sign = d == 0 ? FFTW_FORWARD : FFTW_BACKWARD;
        s->planes[d] = fftw_plan_many_dft(2, plane_dims, (int)local_n0, a, NULL, 1, n * n, a, NULL,
                                          1, n * n, sign, o->planner);
        s->lines[d] = fftw_plan_guru_dft(1, &line, 2, line_loops, b, b, sign, o->planner);
    }
    /* out of place, input destroyed: the transposes FFTW may then do with MPI_Alltoall */
    s->there = fftw_mpi_plan_many_transpose(n, n, 2 * n, FFTW_MPI_DEFAULT_BLOCK,
                                            FFTW_MPI_DEFAULT_BLOCK, (double *)a, (double *)b,
                                            MPI_COMM_WORLD, o->planner | FFTW_DESTROY_INPUT);
    s->back = fftw_mpi_plan_many_transpose(n, n, 2 * n, FFTW_MPI_DEFAULT_BLOCK,
                                           FFTW_MPI_DEFAULT_BLOCK, (double *)b, (double *)a,
                                           MPI_COMM_WORLD, o->planner | FFTW_DESTROY_INPUT);
}

/* One transform of part 2 (D: 0 forward, 1 backward); its total and transposes' seconds. */
static void split_transform(const split_plans_t *s, int d, double *total, double *transposes)
{
    double start, t1, t2, t3, t4;
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    fftw_execute(s->planes[d]);
    t1 = MPI_Wtime();
    fftw_execute(s->there);
    t2 = MPI_Wtime();
    fftw_execute(s->lines[d]);
    t3 = MPI_Wtime();
    fftw_execute(s->back);
    t4 = MPI_Wtime();
    *total = t4 - start;
    *transposes = (t2 - t1) + (t4 - t3);
}

/* The largest |A - REFERENCE| over all ranks, relative to the largest |REFERENCE|. */
static double relative_difference(const fftw_complex *a, const fftw_complex *reference,
                                  ptrdiff_t count)
{
    double mine[2] = {0, 0}, all[2];
    for (ptrdiff_t i = 0; i < count; i++) {
        mine[0] =
            fmax(mine[0], fmax(fabs(a[i][0] - reference[i][0]), fabs(a[i][1] - reference[i][1])));
        mine[1] = fmax(mine[1], fmax(fabs(reference[i][0]), fabs(reference[i][1])));
    }
    MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all[1] > 0 ? all[0] / all[1] : all[0];
}

/* Part 2: the transform from its parts; its forward result against REFERENCE in *VS_DFT3D. */
static void run_split(const options_t *o, part_t *part, const fftw_complex *reference,
                      double *vs_dft3d)
{
    ptrdiff_t n = o->n, local_n1, start1, alloc, dims[2] = {n, n};
    fftw_complex *a, *b;
    split_plans_t s;

    alloc = fftw_mpi_local_size_many_transposed(2, dims, 2 * n, FFTW_MPI_DEFAULT_BLOCK,
                                                FFTW_MPI_DEFAULT_BLOCK, MPI_COMM_WORLD,
                                                &part->local_n0, &part->start0, &local_n1, &start1);
    a = (fftw_complex *)fftw_alloc_real((size_t)alloc);
    b = (fftw_complex *)fftw_alloc_real((size_t)alloc);
    make_split_plans(&s, o, part->local_n0, local_n1, a, b);
    transpose_kinds(s.there, part->kinds, sizeof part->kinds);
    transpose_kinds(s.back, part->kinds, sizeof part->kinds);
    fill_input(a, o, part);
    for (int t = 0; t < part->transforms; t++) {
        split_transform(&s, t % 2, &part->fft[t], &part->transposes[t]);
        if (t == 0)
            *vs_dft3d = relative_difference(a, reference, part->local_n0 * n * n);
        if (t % 2)
            scale(a, o, part);
    }
    part->error = roundtrip_error(a, o, part);
    for (int d = 0; d < 2; d++) {
        fftw_destroy_plan(s.planes[d]);
        fftw_destroy_plan(s.lines[d]);
    }
    fftw_destroy_plan(s.there);
    fftw_destroy_plan(s.back);
    fftw_free(a);
    fftw_free(b);
}

/* Parse the options; 0, or -1 on a bad one (message printed by rank 0). */
static int parse_options(options_t *o, int argc, char **argv, int rank, int ranks)
{
    static const char *const names[3] = {"estimate", "measure", "patient"};
    static const unsigned flags[3] = {FFTW_ESTIMATE, FFTW_MEASURE, FFTW_PATIENT};
    o->n = 64;
    o->iterations = 3;
    o->planner = FFTW_ESTIMATE;
    o->planner_name = "estimate";
    for (int a = 1; a < argc; a += 2) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        int good = 0;
        if (v && strcmp(argv[a], "-n") == 0)
            good = (o->n = atol(v)) >= 2 && o->n <= 4096 &&
                   (o->n + ranks - 1) / ranks * (ranks - 1) < o->n;
        else if (v && strcmp(argv[a], "-i") == 0)
            good = (o->iterations = atoi(v)) >= 1;
        else if (v && strcmp(argv[a], "-p") == 0)
            for (int k = 0; k < 3; k++)
                if (strcmp(v, names[k]) == 0)
                    good = 1, o->planner = flags[k], o->planner_name = names[k];
        if (!good) {
            if (rank == 0)
                fprintf(stderr,
                        "fft3d: bad option or value at '%s' (N from 2 to 4096, at least "
                        "one plane per rank)\nusage: fft3d [-n N] [-i ITERATIONS] "
                        "[-p estimate|measure|patient]\n",
                        argv[a]);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    options_t o;
    part_t dft3d = {0}, split = {0};
    fftw_complex *reference;
    double vs_dft3d = 0;
    int rank, ranks, ok;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (parse_options(&o, argc, argv, rank, ranks) != 0) {
        MPI_Finalize();
        return 2;
    }
    fftw_mpi_init();
    dft3d.transforms = split.transforms = 2 * o.iterations;
    dft3d.fft = calloc((size_t)dft3d.transforms, sizeof(double));
    split.fft = calloc((size_t)split.transforms, sizeof(double));
    split.transposes = calloc((size_t)split.transforms, sizeof(double));
    run_dft3d(&o, &dft3d, &reference);
    run_split(&o, &split, reference, &vs_dft3d);
    ok = dft3d.error <= TOLERANCE && split.error <= TOLERANCE && vs_dft3d <= TOLERANCE;
    {
        double fft1 = slowest_sum(dft3d.fft, dft3d.transforms);
        double fft2 = slowest_sum(split.fft, split.transforms);
        double comm = slowest_sum(split.transposes, split.transforms);
        if (rank == 0) {
            printf("fft3d: n=%td ranks=%d iterations=%d planner=%s\n", o.n, ranks, o.iterations,
                   o.planner_name);
            printf("fft3d: dft_3d: fft=%.6f s (%d transforms) error=%.3e transposes=%s\n", fft1,
                   dft3d.transforms, dft3d.error, dft3d.kinds[0] ? dft3d.kinds : "none");
            printf("fft3d: split: fft=%.6f s transposes=%.6f s (%d transforms) error=%.3e "
                   "vs_dft_3d=%.3e transposes=%s\n",
                   fft2, comm, split.transforms, split.error, vs_dft3d,
                   split.kinds[0] ? split.kinds : "none");
            printf(ok ? "fft3d: OK\n" : "fft3d: FAILED (an error above %g)\n", TOLERANCE);
        }
    }
    fftw_free(reference);
    free(dft3d.fft);
    free(split.fft);
    free(split.transposes);
    fftw_mpi_cleanup();
    MPI_Finalize();
    return ok ? 0 : 1;
}

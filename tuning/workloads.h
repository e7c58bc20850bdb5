/*
 * workloads.h: the benchmark inputs of Bader, Helman and JaJa ("Practical parallel algorithms for
 * personalized communication and integer sorting", 1996, Section 3.1 Eq. 7 and Section 3.2.1 Eq.
 * 8-9) as pure count generators for MPI_Alltoallv: how many units (elements) rank src sends to rank
 * dst when every rank holds n units in all. Every rank computes every count itself, without
 * communication. No MPI and no xchg symbols: used by the library's tools and by plain MPI test
 * programs alike.
 *
 * Specs ("," and ":" both separate items):
 *   uniform                     n/p to every rank (the remainder n mod p spread so that every
 *                               rank also receives n units in all)
 *   hrel:h=H                    Eq. 7 with h = H n (the paper's h = H n/p, n/p per rank):
 *                               rank 0 receives the most, h; H = 1 is the transpose
 *   ggroup:g=G,t=T[,h=H]        Eq. 8: groups of g consecutive ranks, each group sending
 *                               evenly to t ranks, every receiver getting h = H n; H defaults
 *                               to max(1, G/T), the pairs of the paper's Tables I and II
 * See workloads.c for what each does outside the paper's assumptions (p not a power of two,
 * n not divisible, parameters out of range).
 */
#ifndef XCHG_WORKLOADS_H
#define XCHG_WORKLOADS_H

#include <stddef.h>

enum { XCHG_WORKLOAD_UNIFORM = 0, XCHG_WORKLOAD_HREL = 1, XCHG_WORKLOAD_GGROUP = 2 };

typedef struct xchg_workload {
    int kind; /* XCHG_WORKLOAD_* */
    int h;    /* hrel, ggroup: h as a multiple of n (the paper's multiple of n/p) */
    int g;    /* ggroup: ranks per group */
    int t;    /* ggroup: receivers per group */
} xchg_workload_t;

/* Parse a spec; 0 on success, else -1 with a message in err. */
int xchg_workload_parse(const char *spec, xchg_workload_t *wl, char *err, size_t errlen);

/* The spec back as text ("hrel:h=4", "ggroup:g=4,t=4,h=2"); returns snprintf's value. */
int xchg_workload_format(const xchg_workload_t *wl, char *out, size_t outlen);

/* Units that rank src sends to rank dst, 0 <= src, dst < p, when every rank holds n units
 * in all; for each src the p counts sum to n. O(p) at worst. */
size_t xchg_workload_count(const xchg_workload_t *wl, int p, size_t n, int src, int dst);

/* The p counts of rank src at once (counts[dst]), in O(p). */
void xchg_workload_counts(const xchg_workload_t *wl, int p, size_t n, int src, size_t *counts);

/* ggroup: Eq. 8, the rank that block b (0 <= b < t) of rank src goes to, and Eq. 9, the
 * offset of that block's first unit in the receiver's h units (the paper's placement;
 * meaningful where t divides n). */
int xchg_workload_ggroup_dest(const xchg_workload_t *wl, int p, int src, int block);
size_t xchg_workload_ggroup_offset(const xchg_workload_t *wl, int p, size_t n, int src, int block);

#endif

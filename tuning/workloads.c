/*
 * workloads.c: the h-relation benchmark (Eq. 7) and the g-group benchmark (Eq. 8-9) of Bader,
 * Helman and JaJa ("Practical parallel algorithms for personalized communication and integer
 * sorting", 1996, Sections 3.1 and 3.2.1) as count
 * generators. The paper counts n elements over all p processors; here n is per rank, so the
 * paper's n/p is our n, its n is our N = n p, and its h = H n/p is our h = H n.
 *
 * hrel (Eq. 7). The N keys are dealt cyclically (key x lives on rank x mod p) and labelled by
 * destination in runs: the first v_0 keys for rank 0, the next v_1 for rank 1, and so on, so
 * rank src sends to dst the keys x = src (mod p) of [V_dst, V_dst + v_dst), V the prefix sums
 * of v. For H = 1, v_i = n (a transpose). For H >= 2, with h = H n, exactly Eq. 7 in integers:
 *     v_i = floor(h (1 - h i / (2N - h))) = floor(H n (2p - H (i+1)) / (2p - H))   (i < p-1),
 *     0 where that is negative, and v_{p-1} = N - (the others),
 * so rank 0 receives h, the next ranks a linear ramp down to 0 at i = 2p/H - 1, and rank p-1
 * the rounding remainder. Where the paper's assumptions fail we do this:
 *   - H > p (a rank cannot receive more than N): H acts as p, everything goes to rank 0;
 *   - 2p/H not an integer (p not a multiple of H/2): the ramp is cut where the running sum
 *     would pass N, so no count is negative and every rank still sends exactly n.
 *
 * ggroup (Eq. 8). Ranks form groups of g consecutive ranks; a rank's n units form t blocks
 * (block b has n/t units, the first n mod t blocks one more); block b of rank i in group
 * j = floor(i/g) goes to
 *     ((p/2 + b g) mod p) XOR (j g) + floor(b g n / (p t h)) = ... + floor(b g / (t H)).
 * With p, g, t, H powers of two, H <= g <= sqrt(H p) and g/H <= t <= p/g (the paper's
 * ranges) every receiver gets exactly h = H n from H t / g groups and p/H ranks receive.
 * Outside them: g is clamped to [1, p], t and H to >= 1, p/2 is floor(p/2), and a destination
 * at or beyond p (XOR or the shift can leave the range when p is not a power of two) is taken
 * mod p; counts still sum to n per rank, but the receive loads are no longer all h.
 * Eq. 9 gives where each unit lands in its receiver: block b of rank i starts at
 *     b g n/t - floor(b g/(t H)) h + (i mod g) n/t
 * (xchg_workload_ggroup_offset). In an MPI_Alltoallv the receiver's displacements and the order
 * kept within each message say where units land, so the generators give counts; Eq. 9's
 * interleaving of even and odd k inside a block has no counterpart there (and as printed its
 * odd case, ((i mod g) + 1) n/(pt) - (k-3)/2, leaves the block at k = 1; -(k+1)/2 keeps it in).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads.h"

static const char *const kind_names[] = {"uniform", "hrel", "ggroup"};

static int parse_positive(const char *value, int *out)
{
    char *end;
    long v = strtol(value, &end, 10);
    if (value[0] < '0' || value[0] > '9' || *end != '\0' || v < 1 || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

int xchg_workload_parse(const char *spec, xchg_workload_t *wl, char *err, size_t errlen)
{
    char buf[128], *item, *rest;
    size_t len = strlen(spec);
    int kind = -1;

    memset(wl, 0, sizeof *wl);
    if (len >= sizeof buf) {
        snprintf(err, errlen, "workload '%.20s...' is too long", spec);
        return -1;
    }
    memcpy(buf, spec, len + 1);
    rest = strchr(buf, ':');
    if (rest)
        *rest++ = '\0';
    for (int k = 0; k < 3; k++)
        if (strcmp(buf, kind_names[k]) == 0)
            kind = k;
    if (kind < 0) {
        snprintf(err, errlen, "unknown workload '%s' (uniform, hrel:h=H, ggroup:g=G,t=T[,h=H])",
                 buf);
        return -1;
    }
    wl->kind = kind;
    for (item = rest ? strtok(rest, ",:") : NULL; item; item = strtok(NULL, ",:")) {
        char *eq = strchr(item, '=');
        int *field = NULL, value;
        if (eq) {
            *eq = '\0';
            if (strcmp(item, "h") == 0 && kind != XCHG_WORKLOAD_UNIFORM)
                field = &wl->h;
            else if (strcmp(item, "g") == 0 && kind == XCHG_WORKLOAD_GGROUP)
                field = &wl->g;
            else if (strcmp(item, "t") == 0 && kind == XCHG_WORKLOAD_GGROUP)
                field = &wl->t;
        }
        if (!field) {
            snprintf(err, errlen, "%s: '%s' is not one of its KEY=VALUE items (%s)",
                     kind_names[kind], item,
                     kind == XCHG_WORKLOAD_UNIFORM ? "none"
                     : kind == XCHG_WORKLOAD_HREL  ? "h"
                                                   : "g, t, h");
            return -1;
        }
        if (parse_positive(eq + 1, &value) != 0) {
            snprintf(err, errlen, "%s: %s=%s must be a positive integer", kind_names[kind], item,
                     eq + 1);
            return -1;
        }
        *field = value;
    }
    if (kind == XCHG_WORKLOAD_HREL && wl->h == 0) {
        snprintf(err, errlen, "hrel needs h=H (h = H n/p in the paper: 1, 2, 4 or 8)");
        return -1;
    }
    if (kind == XCHG_WORKLOAD_GGROUP && (wl->g == 0 || wl->t == 0)) {
        snprintf(err, errlen, "ggroup needs g=G and t=T");
        return -1;
    }
    if (kind == XCHG_WORKLOAD_GGROUP && wl->h == 0)
        wl->h = wl->g > wl->t ? wl->g / wl->t : 1;
    return 0;
}

int xchg_workload_format(const xchg_workload_t *wl, char *out, size_t outlen)
{
    switch (wl->kind) {
    case XCHG_WORKLOAD_HREL:
        return snprintf(out, outlen, "hrel:h=%d", wl->h);
    case XCHG_WORKLOAD_GGROUP:
        return snprintf(out, outlen, "ggroup:g=%d,t=%d,h=%d", wl->g, wl->t, wl->h);
    default:
        return snprintf(out, outlen, "uniform");
    }
}

/* Keys x < m with x = src (mod p). */
static size_t keys_below(size_t m, int p, int src)
{
    return m > (size_t)src ? (m - (size_t)src - 1) / (size_t)p + 1 : 0;
}

/* Eq. 7: v_i for i < p-1 before the cap, floor(H n (2p - H (i+1)) / (2p - H)), H <= p. */
static size_t hrel_ramp(int p, size_t n, int heavy, int i)
{
    long long a = (long long)heavy * (2LL * p - (long long)heavy * (i + 1));
    size_t d = (size_t)(2 * p - heavy);
    if (a <= 0)
        return 0;
    /* floor(n a / d) without overflow */
    return (n / d) * (size_t)a + (n % d) * (size_t)a / d;
}

/* v_i (hrel) given the sum of v_0 .. v_{i-1}. */
static size_t hrel_receive(const xchg_workload_t *wl, int p, size_t n, int i, size_t before)
{
    size_t total = n * (size_t)p, v;
    if (wl->h <= 1)
        return n;
    if (i == p - 1)
        return total - before;
    v = hrel_ramp(p, n, wl->h < p ? wl->h : p, i);
    return v < total - before ? v : total - before;
}

/* Where the keys for dst start in the global order, and how many there are (hrel). */
static void hrel_range(const xchg_workload_t *wl, int p, size_t n, int dst, size_t *start,
                       size_t *len)
{
    size_t before = 0;
    for (int i = 0; i < dst; i++)
        before += hrel_receive(wl, p, n, i, before);
    *start = before;
    *len = hrel_receive(wl, p, n, dst, before);
}

int xchg_workload_ggroup_dest(const xchg_workload_t *wl, int p, int src, int block)
{
    long long g = wl->g < 1 ? 1 : wl->g > p ? p : wl->g;
    long long t = wl->t < 1 ? 1 : wl->t, heavy = wl->h < 1 ? 1 : wl->h;
    long long leader = ((long long)(p / 2) + block * g) % p;
    long long dest = (leader ^ ((long long)src / g * g)) + block * g / (t * heavy);
    return (int)(dest % p);
}

size_t xchg_workload_ggroup_offset(const xchg_workload_t *wl, int p, size_t n, int src, int block)
{
    size_t g = (size_t)(wl->g < 1 ? 1 : wl->g > p ? p : wl->g);
    size_t t = (size_t)(wl->t < 1 ? 1 : wl->t), heavy = (size_t)(wl->h < 1 ? 1 : wl->h);
    size_t per_block = n / t, b = (size_t)block;
    return b * g * per_block - (b * g / (t * heavy)) * heavy * n + ((size_t)src % g) * per_block;
}

/* Units in block b of a rank's n units cut into t blocks. */
static size_t ggroup_block(size_t n, int t, int b)
{
    size_t blocks = (size_t)(t < 1 ? 1 : t);
    return n / blocks + ((size_t)b < n % blocks);
}

void xchg_workload_counts(const xchg_workload_t *wl, int p, size_t n, int src, size_t *counts)
{
    size_t start = 0, len = 0;

    for (int dst = 0; dst < p; dst++)
        counts[dst] = 0;
    switch (wl->kind) {
    case XCHG_WORKLOAD_HREL:
        for (int dst = 0; dst < p; dst++, start += len) {
            len = hrel_receive(wl, p, n, dst, start);
            counts[dst] = keys_below(start + len, p, src) - keys_below(start, p, src);
        }
        break;
    case XCHG_WORKLOAD_GGROUP:
        for (int b = 0; b < (wl->t < 1 ? 1 : wl->t); b++)
            counts[xchg_workload_ggroup_dest(wl, p, src, b)] += ggroup_block(n, wl->t, b);
        break;
    default:
        /* n = q p + r: q to everyone, one more to the r ranks after src (cyclically) */
        for (int dst = 0; dst < p; dst++)
            counts[dst] = n / (size_t)p + ((size_t)((dst - src + p) % p) < n % (size_t)p);
        break;
    }
}

size_t xchg_workload_count(const xchg_workload_t *wl, int p, size_t n, int src, int dst)
{
    size_t start, len, count = 0;

    switch (wl->kind) {
    case XCHG_WORKLOAD_HREL:
        hrel_range(wl, p, n, dst, &start, &len);
        return keys_below(start + len, p, src) - keys_below(start, p, src);
    case XCHG_WORKLOAD_GGROUP:
        for (int b = 0; b < (wl->t < 1 ? 1 : wl->t); b++)
            if (xchg_workload_ggroup_dest(wl, p, src, b) == dst)
                count += ggroup_block(n, wl->t, b);
        return count;
    default:
        return n / (size_t)p + ((size_t)((dst - src + p) % p) < n % (size_t)p);
    }
}

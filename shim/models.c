/*
 * models.c: the registry joined with the functions that run its entries, and the cost models'
 * ranking of a call's candidates: what selection (select.c) and learning (learn.c) both start
 * from.
 *
 * The registry (tuning/registry.c) holds everything about an algorithm that needs no MPI; the
 * functions are bound by collective and name in algos/impls.c. xchg_algo_bind joins the two
 * once and reports an entry without a function; xchg_algo_impl is the join.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shim.h"

/* The implementations of the registry's entries, by index (xchg_algo_bind). */
#define XCHG_REGISTRY_MAX 64
static const xchg_impl_t *bound[XCHG_REGISTRY_MAX];
static int bound_done;

int xchg_algo_bind(void)
{
    int missing = 0;
    if (__atomic_load_n(&bound_done, __ATOMIC_ACQUIRE))
        return 0;
    for (int i = 0; i < xchg_nalgos && i < XCHG_REGISTRY_MAX; i++) {
        bound[i] =
            xchg_algos[i].native ? NULL : xchg_impl_find(xchg_algos[i].coll, xchg_algos[i].name);
        if (!xchg_algos[i].native && !bound[i]) {
            missing++;
            xchg_warn("internal: %s algorithm '%s' of the registry (tuning/registry.c) has no "
                      "implementation in algos/impls.c; it is never run",
                      xchg_coll_name(xchg_algos[i].coll), xchg_algos[i].name);
        }
    }
    if (xchg_nalgos > XCHG_REGISTRY_MAX)
        xchg_warn("internal: the registry has %d entries, only %d are bound", xchg_nalgos,
                  XCHG_REGISTRY_MAX);
    __atomic_store_n(&bound_done, 1, __ATOMIC_RELEASE);
    return missing;
}

const xchg_impl_t *xchg_algo_impl(int index)
{
    if (!__atomic_load_n(&bound_done, __ATOMIC_ACQUIRE))
        xchg_algo_bind();
    return index >= 0 && index < xchg_nalgos && index < XCHG_REGISTRY_MAX ? bound[index] : NULL;
}

int xchg_call_empty(const xchg_call_t *call)
{
    return call->coll == XCHG_ALLTOALLV ? call->max_send_bytes == 0 && call->max_recv_bytes == 0
                                        : call->block_bytes == 0;
}

int xchg_model_clear_win(const xchg_call_t *call, double xchg_time, double native_time)
{
    if (xchg_call_empty(call))
        return 0;
    return xchg_time * XCHG_MODEL_MARGIN < native_time || !(native_time < INFINITY);
}

int xchg_model_rank(const xchg_call_t *call, xchg_choice_t *ranked, int max)
{
    xchg_choice_t all[XCHG_MAX_ALGOS];
    int n = 0;
    const char *why;

    for (int i = 0; i < xchg_nalgos && n < XCHG_MAX_ALGOS; i++) {
        xchg_choice_t c = {i, {0}, 0.0};
        if (xchg_algos[i].coll != call->coll || (!xchg_algos[i].native && !xchg_algo_impl(i)) ||
            !xchg_algos[i].applies(call, &c.params, &why))
            continue;
        c.time = xchg_algos[i].cost(call, &xchg_config.machine, &c.params);
        if (!(c.time < INFINITY))
            continue;
        /* insertion sort, stable in registry order */
        int at = n++;
        for (; at > 0 && all[at - 1].time > c.time; at--)
            all[at] = all[at - 1];
        all[at] = c;
    }
    n = n < max ? n : max;
    memcpy(ranked, all, (size_t)n * sizeof *ranked);
    return n;
}

int xchg_model_ranking(const xchg_call_t *call, xchg_ranking_t *r)
{
    if (r->n < 0)
        r->n = xchg_model_rank(call, r->ranked, XCHG_MAX_ALGOS);
    return r->n;
}

/*
 * impls.c: the function that runs each algorithm, bound by collective and name to its registry
 * entry (tuning/registry.c, which holds everything of an algorithm that needs no MPI). The shim
 * joins the two (xchg_algo_impl, shim/select.c) and reports an entry without a binding.
 * Adding an algorithm: one line here, next to its entry in tuning/registry.c.
 */
#include <string.h>

#include "xchg.h"

const xchg_impl_t xchg_impls[] = {
    {.coll = XCHG_ALLTOALL, .name = "pairwise", .alltoall = xchg_alltoall_pairwise},
    {.coll = XCHG_ALLTOALL, .name = "radix", .alltoall = xchg_alltoall_radix},
    {.coll = XCHG_ALLTOALL, .name = "hier", .alltoall = xchg_alltoall_hier},
    {.coll = XCHG_ALLTOALL, .name = "torus", .alltoall = xchg_alltoall_torus},
    {.coll = XCHG_ALLGATHER, .name = "ring", .allgather = xchg_allgather_ring},
    {.coll = XCHG_ALLGATHER, .name = "circulant", .allgather = xchg_allgather_circulant},
    {.coll = XCHG_ALLTOALLV, .name = "pairwise", .alltoallv = xchg_alltoallv_pairwise},
    {.coll = XCHG_ALLTOALLV, .name = "twophase", .alltoallv = xchg_alltoallv_twophase},
    {.coll = XCHG_ALLTOALLV, .name = "hier", .alltoallv = xchg_alltoallv_hier},
    {.coll = XCHG_ALLTOALL, .name = "shm", .alltoall = xchg_alltoall_shm},
    {.coll = XCHG_ALLGATHER, .name = "shm", .allgather = xchg_allgather_shm},
    {.coll = XCHG_ALLTOALLV, .name = "shm", .alltoallv = xchg_alltoallv_shm},
    {.coll = XCHG_ALLTOALL, .name = "node", .alltoall = xchg_alltoall_node},
    {.coll = XCHG_ALLGATHER, .name = "node", .allgather = xchg_allgather_node},
    {.coll = XCHG_ALLTOALLV, .name = "node", .alltoallv = xchg_alltoallv_node},
};
const int xchg_nimpls = (int)(sizeof xchg_impls / sizeof xchg_impls[0]);

const xchg_impl_t *xchg_impl_find(int coll, const char *name)
{
    for (int i = 0; i < xchg_nimpls; i++)
        if (xchg_impls[i].coll == coll && strcmp(xchg_impls[i].name, name) == 0)
            return &xchg_impls[i];
    return NULL;
}

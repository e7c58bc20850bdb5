/*
 * normalize.h: datatypes seen from the shim (shim/datatype.c) and the normalised calls
 * (shim/normalize.c) that turn user arguments into contiguous byte blocks.
 */
#ifndef XCHG_NORMALIZE_H
#define XCHG_NORMALIZE_H

#include "shim.h"


/* A NULL buffer with data: MPI_BOTTOM with absolute addresses (packed through a message to
 * self, shim/datatype.c), or with a dense type an invalid argument. */
#define XCHG_NULL_BUFFER(buf, bytes) ((bytes) > 0 && !(buf))

/* MPI_ERR_TYPE for an uncommitted type (the caller then hands the call to the MPI library).
 * Cached per process: a repeated call for a committed type makes no MPI call; MPI_Type_free
 * evicts a derived type. */
int xchg_type_info(MPI_Datatype type, xchg_type_t *info);
void xchg_type_finalize(void);
/* Bumped whenever a cached derived type is freed: information a caller kept about a type
 * handle is valid while this is unchanged (a freed handle may name another type later). */
extern unsigned xchg_type_generation;
/* count elements at buf -> count * size packed bytes at out (and back), the bytes MPI_Pack
 * produces. buf may be MPI_BOTTOM (NULL) when the type is not dense (absolute addresses);
 * MPI_ERR_BUFFER for NULL with a dense type and data. */
int xchg_pack(const void *buf, size_t count, const xchg_type_t *type, void *out, MPI_Comm comm);
int xchg_unpack(const void *packed, size_t count, const xchg_type_t *type, void *buf,
                MPI_Comm comm);


/* At MPI_Init: what a program's first intercepted call would otherwise set up (normalize.c). */
void xchg_warm_first_call(void);

/* A call that repeats the communicator's last one of its collective (xchg_memo_t), as the fast
 * path found it (xchg_fast_block): learning has counted it there already, so the call goes on
 * from the memorised types and choice without looking them up or counting it again. */
typedef struct xchg_hit {
    xchg_ctx_t *ctx;         /* its context */
    const xchg_memo_t *memo; /* NULL: no memorised call (or learning learns again from it) */
    int watch;               /* learning slot to report its time to (a watched call), or -1 */
} xchg_hit_t;

/* What served a call, for the statistics. */
typedef struct xchg_outcome {
    int algo;             /* registry index, -1 when nothing is to be accounted */
    size_t key;           /* the size key */
    xchg_params_t params; /* the parameters the algorithm ran with */
    xchg_ctx_t *ctx;      /* the context (NULL: none), when algo >= 0 or scratch was marked */
    xchg_mark_t mark;     /* the context's scratch stack when the call began: the caller
                             releases to it when the call is over */
    int trial;            /* learning slot to report the time to, or -1 */
    double start;         /* when a trial call started running (after the choice) */
    int learned;          /* learning slot of a settled shape, or -1 (shim/learn.c) */
    int watched;          /* the call is a watched call of the settled shape in slot trial */
    int deferred;         /* an error class this rank reports after taking part in the call
                             (its own arguments are erroneous in a way the MPI library reports
                             on this rank; shim/normalize.c), or MPI_SUCCESS */
    xchg_hit_t hit;       /* in: the fast path's memorised call (xchg_fast_block), or none */
} xchg_outcome_t;

/* Counts and displacements arrive as int (MPI_Alltoallv) or MPI_Count/MPI_Aint (_c). */
typedef struct xchg_counts {
    const int *i;
    const MPI_Count *c;
    const MPI_Aint *a;
} xchg_counts_t;

/* The fast path of MPI_Alltoall and MPI_Allgather: a call with the same arguments as the
 * communicator's last one of its collective (xchg_memo_t) is counted by learning here and left
 * in *hit (hit->memo NULL when there is none, or when learning learns again from this call on).
 * Returns 1 when native serves it with nothing to account (no XCHG_STATS): the caller then calls
 * the MPI library at once, and when hit->watch >= 0 (a watched call of a settled shape,
 * shim/learn.c) times it and reports the time to learning slot hit->watch; 0: take
 * xchg_do_alltoall/allgather with *hit in xchg_outcome_t.hit. Makes no MPI call. */
int xchg_fast_block(int coll, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, xchg_hit_t *hit);

/* The same for MPI_Alltoallv: forced to native, or the communicator's carried statistics
 * chose native last and are unchanged (then the call counts as shim/normalize.c's v_predict
 * would count it). */
int xchg_fast_native_v(MPI_Comm comm, int *watch);

int xchg_do_alltoall(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     xchg_outcome_t *out);
int xchg_do_allgather(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      xchg_outcome_t *out);
int xchg_do_alltoallv(const void *sendbuf, xchg_counts_t sendcounts, xchg_counts_t sdispls,
                      MPI_Datatype sendtype, void *recvbuf, xchg_counts_t recvcounts,
                      xchg_counts_t rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                      xchg_outcome_t *out);

#endif

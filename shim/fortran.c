/*
 * fortran.c: Fortran entry points, for the calls that the MPI library's Fortran bindings do not
 * route through the C MPI_ symbols (found with nm -D and objdump -d on the bindings).
 *
 * Open MPI 4.1: none of its bindings reach the C symbols. In libmpi_mpifh.so, mpi_alltoall_
 * and its other names are one function (ompi_alltoall_f) that imports PMPI_Alltoall,
 * PMPI_Comm_f2c and PMPI_Type_f2c; `use mpi` (libmpi_usempi_ignore_tkr.so) has no collectives
 * of its own, the program calls mpi_alltoall_; `use mpi_f08` makes the program call
 * mpi_alltoall_f08_ (libmpi_usempif08.so), a thin layer over ompi_alltoall_f that stores
 * ierror only when the optional argument is present. MPI_Allgather, MPI_Alltoallv, MPI_Init,
 * MPI_Init_thread and MPI_Finalize go the same way to their PMPI_ functions.
 *
 * MPICH 4.0: its Fortran collectives (mpif.h, `use mpi`, and `use mpi_f08` through
 * mpi_alltoall_f08ts_) call the C MPI_Alltoall, ... , so interpose.c sees them; so do
 * mpif.h's and `use mpi`'s MPI_Init and MPI_Finalize. But mpi_init_f08_,
 * mpi_init_thread_f08_ and mpi_finalize_f08_ call PMPI_Init, PMPI_Init_thread and
 * PMPI_Finalize directly.
 *
 * Without these wrappers such a program would bypass the library's collectives (Open MPI) and
 * its configuration read at MPI_Init and statistics at MPI_Finalize (both MPIs).
 *
 * Each routine has one implementation that converts the Fortran arguments (MPI-3.1 Section
 * 17.2.4: handles are MPI_Fint converted with MPI_*_f2c; counts, displacements and thread
 * levels are Fortran INTEGERs, MPI_Fint = int) and calls the C entry point (MPI_Alltoall, ...:
 * the library's own, so the call goes through its selection and statistics), then stores the
 * C return code in ierror when ierror is present (the mpi_f08 bindings pass NULL for an absent
 * optional ierror). On Open MPI that implementation is exported under every name Open MPI 4.1
 * exports for the routine (nm -D libmpi_mpifh.so, libmpi_usempif08.so):
 *
 *   mpi_alltoall  mpi_alltoall_  mpi_alltoall__  MPI_ALLTOALL   compiler name manglings
 *   MPI_Alltoall_f  MPI_Alltoall_f08                            MPI-3 names for tools
 *   mpi_alltoall_f08_                                           the mpi_f08 module's procedure
 *
 * on MPICH only under the mpi_f08 name of the three routines above. The profiling names
 * (pmpi_alltoall_, PMPI_ALLTOALL, pmpi_alltoall_f08_, ...) and Open MPI's internal
 * ompi_alltoall_f are left alone: they must keep reaching the MPI library itself.
 *
 * Buffers (Open MPI): Fortran has no null or sentinel pointers, so MPI_IN_PLACE and MPI_BOTTOM
 * are variables whose address is the marker. Open MPI makes them the common blocks
 * mpi_fortran_in_place_ and mpi_fortran_bottom_ (defined in libmpi.so and in each Fortran
 * program that uses them; the dynamic linker binds every reference to one copy); mpif.h,
 * `use mpi` and `use mpi_f08` all pass those addresses. They become the C MPI_IN_PLACE and
 * MPI_BOTTOM before the C call. (MPICH's bindings do this mapping before calling C.)
 */
#include <mpi.h>

#if defined(OPEN_MPI) || defined(MPICH)

#include <stddef.h>

/* Counts and displacements arrays are handed to C as they are. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint must be a C int");

static void set_ierror(MPI_Fint *ierror, int rc)
{
    if (ierror)
        *ierror = (MPI_Fint)rc;
}

/* ---- initialisation and finalisation (configuration and statistics), both MPIs ---- */

typedef void fortran_init_t(MPI_Fint *ierror);
typedef void fortran_init_thread_t(const MPI_Fint *required, MPI_Fint *provided,
                                   MPI_Fint *ierror);
typedef fortran_init_t fortran_finalize_t; /* the same argument list */

/* Fortran passes no command line; MPI_Init(NULL, NULL) is valid since MPI-2. */
static void fortran_init(MPI_Fint *ierror)
{
    set_ierror(ierror, MPI_Init(NULL, NULL));
}

/* Both MPIs give MPI_THREAD_SINGLE .. MPI_THREAD_MULTIPLE the same values in C and Fortran. */
static void fortran_init_thread(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    int provided_level = MPI_THREAD_SINGLE;
    int rc = MPI_Init_thread(NULL, NULL, (int)*required, &provided_level);
    *provided = (MPI_Fint)provided_level;
    set_ierror(ierror, rc);
}

static void fortran_finalize(MPI_Fint *ierror)
{
    set_ierror(ierror, MPI_Finalize());
}

#endif /* OPEN_MPI || MPICH */

#if defined(OPEN_MPI)

/* Open MPI's Fortran MPI_IN_PLACE and MPI_BOTTOM (only their addresses are used). */
extern MPI_Fint mpi_fortran_in_place_;
extern MPI_Fint mpi_fortran_bottom_;

static void *c_buffer(void *fortran_buffer)
{
    if (fortran_buffer == (void *)&mpi_fortran_in_place_)
        return MPI_IN_PLACE;
    if (fortran_buffer == (void *)&mpi_fortran_bottom_)
        return MPI_BOTTOM;
    return fortran_buffer;
}

/* ---- collectives ---- */

typedef void fortran_alltoall_t(void *sendbuf, const MPI_Fint *sendcount,
                                const MPI_Fint *sendtype, void *recvbuf,
                                const MPI_Fint *recvcount, const MPI_Fint *recvtype,
                                const MPI_Fint *comm, MPI_Fint *ierror);
typedef fortran_alltoall_t fortran_allgather_t; /* the same argument list */
typedef void fortran_alltoallv_t(void *sendbuf, const MPI_Fint *sendcounts,
                                 const MPI_Fint *sdispls, const MPI_Fint *sendtype,
                                 void *recvbuf, const MPI_Fint *recvcounts,
                                 const MPI_Fint *rdispls, const MPI_Fint *recvtype,
                                 const MPI_Fint *comm, MPI_Fint *ierror);

static void fortran_alltoall(void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype,
                             void *recvbuf, const MPI_Fint *recvcount, const MPI_Fint *recvtype,
                             const MPI_Fint *comm, MPI_Fint *ierror)
{
    int rc = MPI_Alltoall(c_buffer(sendbuf), (int)*sendcount, PMPI_Type_f2c(*sendtype),
                          c_buffer(recvbuf), (int)*recvcount, PMPI_Type_f2c(*recvtype),
                          PMPI_Comm_f2c(*comm));
    set_ierror(ierror, rc);
}

static void fortran_allgather(void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype,
                              void *recvbuf, const MPI_Fint *recvcount,
                              const MPI_Fint *recvtype, const MPI_Fint *comm, MPI_Fint *ierror)
{
    int rc = MPI_Allgather(c_buffer(sendbuf), (int)*sendcount, PMPI_Type_f2c(*sendtype),
                           c_buffer(recvbuf), (int)*recvcount, PMPI_Type_f2c(*recvtype),
                           PMPI_Comm_f2c(*comm));
    set_ierror(ierror, rc);
}

static void fortran_alltoallv(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                              const MPI_Fint *sendtype, void *recvbuf,
                              const MPI_Fint *recvcounts, const MPI_Fint *rdispls,
                              const MPI_Fint *recvtype, const MPI_Fint *comm, MPI_Fint *ierror)
{
    int rc = MPI_Alltoallv(c_buffer(sendbuf), (const int *)sendcounts, (const int *)sdispls,
                           PMPI_Type_f2c(*sendtype), c_buffer(recvbuf),
                           (const int *)recvcounts, (const int *)rdispls,
                           PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm));
    set_ierror(ierror, rc);
}

/* ---- the exported names: each one an alias of the implementation above ---- */

#define FORTRAN_NAMES(type, impl, lower, upper, mixed)                                         \
    type lower __attribute__((alias(#impl)));                                                  \
    type lower##_ __attribute__((alias(#impl)));                                               \
    type lower##__ __attribute__((alias(#impl)));                                              \
    type upper __attribute__((alias(#impl)));                                                  \
    type mixed##_f __attribute__((alias(#impl)));                                              \
    type mixed##_f08 __attribute__((alias(#impl)));                                            \
    type lower##_f08_ __attribute__((alias(#impl)))

FORTRAN_NAMES(fortran_alltoall_t, fortran_alltoall, mpi_alltoall, MPI_ALLTOALL, MPI_Alltoall);
FORTRAN_NAMES(fortran_allgather_t, fortran_allgather, mpi_allgather, MPI_ALLGATHER,
              MPI_Allgather);
FORTRAN_NAMES(fortran_alltoallv_t, fortran_alltoallv, mpi_alltoallv, MPI_ALLTOALLV,
              MPI_Alltoallv);
FORTRAN_NAMES(fortran_init_t, fortran_init, mpi_init, MPI_INIT, MPI_Init);
FORTRAN_NAMES(fortran_init_thread_t, fortran_init_thread, mpi_init_thread, MPI_INIT_THREAD,
              MPI_Init_thread);
FORTRAN_NAMES(fortran_finalize_t, fortran_finalize, mpi_finalize, MPI_FINALIZE, MPI_Finalize);

#elif defined(MPICH)

/* MPICH: only the mpi_f08 module's MPI_Init, MPI_Init_thread and MPI_Finalize. */
fortran_init_t mpi_init_f08_ __attribute__((alias("fortran_init")));
fortran_init_thread_t mpi_init_thread_f08_ __attribute__((alias("fortran_init_thread")));
fortran_finalize_t mpi_finalize_f08_ __attribute__((alias("fortran_finalize")));

#endif

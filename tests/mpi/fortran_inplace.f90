! fortran_inplace.f90: MPI_ALLTOALL, MPI_ALLGATHER and MPI_ALLTOALLV from Fortran through the
! `use mpi` module, with MPI_IN_PLACE and with separate buffers.
!
! Plain MPI, run natively and with the library preloaded (MPICH's Fortran layer calls the C
! MPI_ symbols, so the library intercepts these calls; scripts/run_tests.sh proves it with
! XCHG_STATS=1). tests/mpi/fortran_mpifh.f90 is the same program through mpif.h.
! On MPI_COMM_WORLD and on a communicator with the ranks reversed, for 0, 1, 5 and 300 integers
! per block:
!   - each collective in place (sendcount 0 and sendtype MPI_DATATYPE_NULL, which MPI ignores)
!     and with separate buffers;
!   - MPI_ALLTOALLV with skewed counts, some zero (symmetric in place, as MPI requires), blocks
!     in reversed order with one-integer gaps between them.
! Every element of every receive buffer is compared: data from a formula of (source,
! destination, index, call); gaps and a guard after the data hold a sentinel that must survive.
! Send buffers are passed as their first element (sequence association): MPI_IN_PLACE is a
! scalar, and gfortran warns when calls of one external routine pass a scalar and an array.
! The last line is "fortran_inplace: N checks, M failed" (totals over all ranks, from rank 0);
! the program stops with code 1 when a check failed or none ran.
program fortran_inplace
    use mpi
    implicit none
    character(len=*), parameter :: progname = 'fortran_inplace'
    include 'fortran_collectives.inc'
end program fortran_inplace

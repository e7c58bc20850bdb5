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
    integer, parameter :: sentinel = -1, guard = 3, max_printed = 10
    integer, parameter :: block_counts(4) = [0, 1, 5, 300]
    integer(8) :: nchecks = 0, nfailed = 0, nprinted = 0, local(2), totals(2)
    integer :: comms(2), world_rank, world_size, icomm, icount, n, salt, ierr
    character(len=8) :: comm_names(2) = ['world   ', 'reversed']

    call MPI_INIT(ierr)
    call MPI_COMM_RANK(MPI_COMM_WORLD, world_rank, ierr)
    call MPI_COMM_SIZE(MPI_COMM_WORLD, world_size, ierr)
    comms(1) = MPI_COMM_WORLD
    call MPI_COMM_SPLIT(MPI_COMM_WORLD, 0, world_size - 1 - world_rank, comms(2), ierr)

    salt = 0
    do icomm = 1, 2
        do icount = 1, size(block_counts)
            n = block_counts(icount)
            salt = salt + 1
            call test_alltoall(comms(icomm), trim(comm_names(icomm)), n, salt, .true.)
            salt = salt + 1
            call test_alltoall(comms(icomm), trim(comm_names(icomm)), n, salt, .false.)
            salt = salt + 1
            call test_allgather(comms(icomm), trim(comm_names(icomm)), n, salt, .true.)
            salt = salt + 1
            call test_allgather(comms(icomm), trim(comm_names(icomm)), n, salt, .false.)
            salt = salt + 1
            call test_alltoallv(comms(icomm), trim(comm_names(icomm)), n, salt, .true.)
            salt = salt + 1
            call test_alltoallv(comms(icomm), trim(comm_names(icomm)), n, salt, .false.)
        end do
    end do

    call MPI_COMM_FREE(comms(2), ierr)
    local = [nchecks, nfailed]
    call MPI_ALLREDUCE(local, totals, 2, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (world_rank == 0) then
        write (*, '(a, i0, a, i0, a)') 'fortran_inplace: ', totals(1), ' checks, ', totals(2), &
            ' failed'
        flush (6)
    end if
    call MPI_FINALIZE(ierr)
    if (totals(2) > 0 .or. totals(1) == 0) stop 1

contains

    ! The element formula in mixed radix: distinct for every (source, destination, index, call)
    ! while ranks < 64, index < 1024 and calls < 256 (this program makes 48), never negative.
    pure integer function element(source, destination, index, call_salt)
        integer, intent(in) :: source, destination, index, call_salt
        element = ((call_salt * 64 + mod(source, 64)) * 64 + mod(destination, 64)) * 1024 &
                  + mod(index, 1024)
    end function element

    ! Integers from rank i to rank j in the alltoallv tests: 0 to 2 times n, some zero;
    ! symmetric (what i sends j equals what j sends i), as MPI_IN_PLACE needs.
    pure integer function vcount(i, j, n)
        integer, intent(in) :: i, j, n
        vcount = mod(i + j, 3) * n
    end function vcount

    subroutine fail(what, comm_name, n, item, position, expected, got)
        character(*), intent(in) :: what, comm_name, item
        integer, intent(in) :: n, position, expected, got
        nfailed = nfailed + 1
        if (nprinted >= max_printed) return
        nprinted = nprinted + 1
        write (0, '(a, i0, 5a, i0, 3a, i0, a, i0, a, i0)') 'FAIL [world rank ', world_rank, &
            '] ', what, ' comm=', comm_name, ' n=', n, ': ', item, ' ', position, &
            ' expected ', expected, ' got ', got
        if (nprinted == max_printed) &
            write (0, '(a)') '(further failures on this rank are counted, not printed)'
    end subroutine fail

    subroutine check_call(what, comm_name, n, ierror, got, expected)
        character(*), intent(in) :: what, comm_name
        integer, intent(in) :: n, ierror, got(:), expected(:)
        integer :: k
        nchecks = nchecks + 1
        if (ierror /= MPI_SUCCESS) call fail(what, comm_name, n, 'ierror', 0, MPI_SUCCESS, ierror)
        do k = 1, size(expected)
            nchecks = nchecks + 1
            if (got(k) /= expected(k)) &
                call fail(what, comm_name, n, 'element', k, expected(k), got(k))
        end do
    end subroutine check_call

    ! MPI_ALLTOALL of n integers per block; in place the blocks start in recvbuf.
    subroutine test_alltoall(comm, comm_name, n, call_salt, in_place)
        integer, intent(in) :: comm, n, call_salt
        character(*), intent(in) :: comm_name
        logical, intent(in) :: in_place
        integer, allocatable :: sendbuf(:), recvbuf(:), expected(:)
        integer :: p, r, peer, i, ierror

        call MPI_COMM_SIZE(comm, p, ierror)
        call MPI_COMM_RANK(comm, r, ierror)
        allocate (sendbuf(max(1, n * p)), recvbuf(n * p + guard), expected(n * p + guard))
        recvbuf = sentinel
        expected = sentinel
        do peer = 0, p - 1
            do i = 0, n - 1
                sendbuf(peer * n + i + 1) = element(r, peer, i, call_salt)
                expected(peer * n + i + 1) = element(peer, r, i, call_salt)
            end do
        end do
        if (in_place) then
            recvbuf(1:n * p) = sendbuf(1:n * p)
            call MPI_ALLTOALL(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, n, MPI_INTEGER, &
                              comm, ierror)
            call check_call('alltoall in_place', comm_name, n, ierror, recvbuf, expected)
        else
            call MPI_ALLTOALL(sendbuf(1), n, MPI_INTEGER, recvbuf, n, MPI_INTEGER, comm, ierror)
            call check_call('alltoall', comm_name, n, ierror, recvbuf, expected)
        end if
    end subroutine test_alltoall

    ! MPI_ALLGATHER of n integers per rank; in place this rank's block starts in recvbuf.
    subroutine test_allgather(comm, comm_name, n, call_salt, in_place)
        integer, intent(in) :: comm, n, call_salt
        character(*), intent(in) :: comm_name
        logical, intent(in) :: in_place
        integer, allocatable :: sendbuf(:), recvbuf(:), expected(:)
        integer :: p, r, peer, i, ierror

        call MPI_COMM_SIZE(comm, p, ierror)
        call MPI_COMM_RANK(comm, r, ierror)
        allocate (sendbuf(max(1, n)), recvbuf(n * p + guard), expected(n * p + guard))
        recvbuf = sentinel
        expected = sentinel
        do i = 0, n - 1
            sendbuf(i + 1) = element(r, 99, i, call_salt)
        end do
        do peer = 0, p - 1
            do i = 0, n - 1
                expected(peer * n + i + 1) = element(peer, 99, i, call_salt)
            end do
        end do
        if (in_place) then
            recvbuf(r * n + 1:r * n + n) = sendbuf(1:n)
            call MPI_ALLGATHER(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, n, MPI_INTEGER, &
                               comm, ierror)
            call check_call('allgather in_place', comm_name, n, ierror, recvbuf, expected)
        else
            call MPI_ALLGATHER(sendbuf(1), n, MPI_INTEGER, recvbuf, n, MPI_INTEGER, comm, ierror)
            call check_call('allgather', comm_name, n, ierror, recvbuf, expected)
        end if
    end subroutine test_allgather

    ! MPI_ALLTOALLV with vcount integers per pair: send blocks in reversed order, receive
    ! blocks in reversed order with a one-integer gap after each; in place the receive layout
    ! holds the outgoing blocks.
    subroutine test_alltoallv(comm, comm_name, n, call_salt, in_place)
        integer, intent(in) :: comm, n, call_salt
        character(*), intent(in) :: comm_name
        logical, intent(in) :: in_place
        integer, allocatable :: sendbuf(:), recvbuf(:), expected(:)
        integer, allocatable :: scounts(:), sdispls(:), rcounts(:), rdispls(:)
        integer :: p, r, peer, i, offset, ierror

        call MPI_COMM_SIZE(comm, p, ierror)
        call MPI_COMM_RANK(comm, r, ierror)
        allocate (scounts(p), sdispls(p), rcounts(p), rdispls(p))
        offset = 0
        do peer = p - 1, 0, -1
            scounts(peer + 1) = vcount(r, peer, n)
            sdispls(peer + 1) = offset
            offset = offset + scounts(peer + 1)
        end do
        allocate (sendbuf(max(1, offset)))
        offset = 0
        do peer = p - 1, 0, -1
            rcounts(peer + 1) = vcount(peer, r, n)
            rdispls(peer + 1) = offset
            offset = offset + rcounts(peer + 1) + 1
        end do
        allocate (recvbuf(offset + guard), expected(offset + guard))
        recvbuf = sentinel
        expected = sentinel
        do peer = 0, p - 1
            do i = 0, scounts(peer + 1) - 1
                sendbuf(sdispls(peer + 1) + i + 1) = element(r, peer, i, call_salt)
            end do
            do i = 0, rcounts(peer + 1) - 1
                expected(rdispls(peer + 1) + i + 1) = element(peer, r, i, call_salt)
            end do
        end do
        if (in_place) then
            do peer = 0, p - 1
                do i = 0, rcounts(peer + 1) - 1
                    recvbuf(rdispls(peer + 1) + i + 1) = element(r, peer, i, call_salt)
                end do
            end do
            call MPI_ALLTOALLV(MPI_IN_PLACE, scounts, sdispls, MPI_DATATYPE_NULL, recvbuf, &
                               rcounts, rdispls, MPI_INTEGER, comm, ierror)
            call check_call('alltoallv in_place', comm_name, n, ierror, recvbuf, expected)
        else
            call MPI_ALLTOALLV(sendbuf(1), scounts, sdispls, MPI_INTEGER, recvbuf, rcounts, &
                               rdispls, MPI_INTEGER, comm, ierror)
            call check_call('alltoallv', comm_name, n, ierror, recvbuf, expected)
        end if
    end subroutine test_alltoallv

end program fortran_inplace

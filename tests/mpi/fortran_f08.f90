! fortran_f08.f90: MPI_Alltoall, MPI_Allgather and MPI_Alltoallv through the mpi_f08 module.
!
! Plain MPI, run with the library preloaded (and natively). On Open MPI the mpi_f08 bindings
! call mpi_alltoall_f08_ and friends, which xchg provides in shim/fortran.c; on MPICH they reach
! the C entry points. Checked, on MPI_COMM_WORLD and on a communicator with the ranks reversed
! (a handle other than the world's), for 0, 1, 3 and 50 elements per block:
!   - each collective with separate buffers and with MPI_IN_PLACE (sendcount and sendtype
!     ignored: 0 and MPI_DATATYPE_NULL are passed);
!   - MPI_Alltoall with a non-contiguous vector type (holes between elements), on both sides
!     and on the receive side only (different type maps, same signature);
!   - MPI_Alltoall with MPI_BOTTOM for both buffers and a type holding the absolute address;
!   - MPI_Alltoallv with skewed and zero counts, send blocks in reverse order and gaps between
!     receive blocks;
!   - ierror present (it must be MPI_SUCCESS) and absent (the optional argument left out).
! Every element of every receive buffer is compared with its expected value: data from a
! formula of (source, destination, index, call), everything else a sentinel that must survive.
! The last line is "fortran_f08: N checks, M failed" (totals over all ranks, from rank 0); the
! exit status is non-zero when a check failed or none ran.
program fortran_f08
    use mpi_f08
    implicit none
    integer, parameter :: sentinel = -1, hole = -2, guard = 3, max_printed = 10
    integer, parameter :: block_counts(4) = [0, 1, 3, 50]
    integer(8) :: nchecks = 0, nfailed = 0, nprinted = 0, totals(2)
    type(MPI_Comm) :: comms(2)
    character(len=8) :: comm_names(2) = ['world   ', 'reversed']
    type(MPI_Datatype) :: vector_type
    integer :: world_rank, world_size, icomm, icount, n, salt

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, world_rank)
    call MPI_Comm_size(MPI_COMM_WORLD, world_size)
    comms(1) = MPI_COMM_WORLD
    call MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - 1 - world_rank, comms(2))
    ! two integers with a one-integer hole between them: extent 3 integers
    call MPI_Type_vector(2, 1, 2, MPI_INTEGER, vector_type)
    call MPI_Type_commit(vector_type)

    salt = 0
    do icomm = 1, 2
        do icount = 1, size(block_counts)
            n = block_counts(icount)
            salt = salt + 1
            call test_alltoall(comms(icomm), trim(comm_names(icomm)), n, salt, .false., icomm == 2)
            salt = salt + 1
            call test_alltoall(comms(icomm), trim(comm_names(icomm)), n, salt, .true., .true.)
            salt = salt + 1
            call test_alltoall_vector(comms(icomm), trim(comm_names(icomm)), n, salt, .true.)
            salt = salt + 1
            call test_alltoall_vector(comms(icomm), trim(comm_names(icomm)), n, salt, .false.)
            salt = salt + 1
            call test_alltoall_bottom(comms(icomm), trim(comm_names(icomm)), n, salt)
            salt = salt + 1
            call test_allgather(comms(icomm), trim(comm_names(icomm)), n, salt, .false., icomm == 2)
            salt = salt + 1
            call test_allgather(comms(icomm), trim(comm_names(icomm)), n, salt, .true., .true.)
            salt = salt + 1
            call test_alltoallv(comms(icomm), trim(comm_names(icomm)), n, salt, .false., icomm == 2)
            salt = salt + 1
            call test_alltoallv(comms(icomm), trim(comm_names(icomm)), n, salt, .true., .true.)
        end do
    end do

    call MPI_Type_free(vector_type)
    call MPI_Comm_free(comms(2))
    call MPI_Allreduce([nchecks, nfailed], totals, 2, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
    if (world_rank == 0) then
        write (*, '(a, i0, a, i0, a)') 'fortran_f08: ', totals(1), ' checks, ', totals(2), ' failed'
        flush (6)
    end if
    call MPI_Finalize()
    if (totals(2) > 0 .or. totals(1) == 0) error stop 1

contains

    ! The element formula, in mixed radix: distinct for every (source, destination, index, call)
    ! while ranks < 64, index < 256 and calls < 128 (this program makes 72 calls), never negative.
    pure integer function element(source, destination, index, call_salt)
        integer, intent(in) :: source, destination, index, call_salt
        element = ((call_salt * 64 + mod(source, 64)) * 64 + mod(destination, 64)) * 256 &
                  + mod(index, 256)
    end function element

    ! Compare a whole receive buffer with what it must hold, element by element.
    subroutine check_buffer(what, comm_name, n, got, expected)
        character(*), intent(in) :: what, comm_name
        integer, intent(in) :: n, got(:), expected(:)
        integer :: k
        do k = 1, size(expected)
            nchecks = nchecks + 1
            if (got(k) /= expected(k)) &
                call fail(what, comm_name, n, 'element', k, expected(k), got(k))
        end do
    end subroutine check_buffer

    subroutine check_ierror(what, comm_name, n, ierror)
        character(*), intent(in) :: what, comm_name
        integer, intent(in) :: n, ierror
        nchecks = nchecks + 1
        if (ierror /= MPI_SUCCESS) call fail(what, comm_name, n, 'ierror', 0, MPI_SUCCESS, ierror)
    end subroutine check_ierror

    subroutine fail(what, comm_name, n, item, position, expected, got)
        character(*), intent(in) :: what, comm_name, item
        integer, intent(in) :: n, position, expected, got
        nfailed = nfailed + 1
        if (nprinted >= max_printed) return
        nprinted = nprinted + 1
        write (0, '(a, i0, 5a, i0, 3a, i0, a, i0, a, i0)') 'FAIL [world rank ', world_rank, '] ', &
            what, ' comm=', comm_name, ' n=', n, ': ', item, ' ', position, ' expected ', &
            expected, ' got ', got
        if (nprinted == max_printed) &
            write (0, '(a)') '(further failures on this rank are counted, not printed)'
    end subroutine fail

    ! MPI_Alltoall of n integers per block; with MPI_IN_PLACE the blocks start in recvbuf.
    subroutine test_alltoall(comm, comm_name, n, call_salt, in_place, with_ierror)
        type(MPI_Comm), intent(in) :: comm
        character(*), intent(in) :: comm_name
        integer, intent(in) :: n, call_salt
        logical, intent(in) :: in_place, with_ierror
        integer, allocatable :: sendbuf(:), recvbuf(:), expected(:)
        integer :: p, r, peer, i, ierror
        character(len=32) :: what

        call MPI_Comm_size(comm, p)
        call MPI_Comm_rank(comm, r)
        allocate (sendbuf(max(1, n * p)), recvbuf(n * p + guard), expected(n * p + guard))
        sendbuf = hole
        recvbuf = sentinel
        expected = sentinel
        do peer = 0, p - 1
            do i = 0, n - 1
                sendbuf(peer * n + i + 1) = element(r, peer, i, call_salt)
                expected(peer * n + i + 1) = element(peer, r, i, call_salt)
            end do
        end do
        ierror = MPI_SUCCESS
        if (in_place) then
            what = 'alltoall in_place'
            recvbuf(1:n * p) = sendbuf(1:n * p)
            call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, n, MPI_INTEGER, comm, &
                              ierror)
        else if (with_ierror) then
            what = 'alltoall'
            call MPI_Alltoall(sendbuf, n, MPI_INTEGER, recvbuf, n, MPI_INTEGER, comm, ierror)
        else
            what = 'alltoall (no ierror)'
            call MPI_Alltoall(sendbuf, n, MPI_INTEGER, recvbuf, n, MPI_INTEGER, comm)
        end if
        if (with_ierror) call check_ierror(trim(what), comm_name, n, ierror)
        call check_buffer(trim(what), comm_name, n, recvbuf, expected)
    end subroutine test_alltoall

    ! MPI_Alltoall of n vector items per block on the receive side (2 integers and a hole each),
    ! and on the send side either the same vector type or 2n contiguous integers.
    subroutine test_alltoall_vector(comm, comm_name, n, call_salt, send_vector)
        type(MPI_Comm), intent(in) :: comm
        character(*), intent(in) :: comm_name
        integer, intent(in) :: n, call_salt
        logical, intent(in) :: send_vector
        integer, allocatable :: sendbuf(:), recvbuf(:), expected(:)
        integer :: p, r, peer, item, half, k, ierror
        character(len=32) :: what

        call MPI_Comm_size(comm, p)
        call MPI_Comm_rank(comm, r)
        allocate (sendbuf(max(1, 3 * n * p)), recvbuf(3 * n * p + guard))
        allocate (expected(3 * n * p + guard))
        sendbuf = hole
        recvbuf = sentinel
        expected = sentinel
        do peer = 0, p - 1
            do item = 0, n - 1
                do half = 0, 1
                    ! a vector item keeps its two integers at offsets 0 and 2 of 3
                    k = 3 * (peer * n + item) + 2 * half + 1
                    if (send_vector) then
                        sendbuf(k) = element(r, peer, 2 * item + half, call_salt)
                    else
                        sendbuf(2 * (peer * n + item) + half + 1) = &
                            element(r, peer, 2 * item + half, call_salt)
                    end if
                    expected(k) = element(peer, r, 2 * item + half, call_salt)
                end do
            end do
        end do
        if (send_vector) then
            what = 'alltoall vector/vector'
            call MPI_Alltoall(sendbuf, n, vector_type, recvbuf, n, vector_type, comm, ierror)
        else
            what = 'alltoall integer/vector'
            call MPI_Alltoall(sendbuf, 2 * n, MPI_INTEGER, recvbuf, n, vector_type, comm, ierror)
        end if
        call check_ierror(trim(what), comm_name, n, ierror)
        call check_buffer(trim(what), comm_name, n, recvbuf, expected)
    end subroutine test_alltoall_vector

    ! MPI_Alltoall with MPI_BOTTOM as both buffers: each side's type is one block of n integers
    ! whose displacement is the absolute address of its array, so block k is at that address
    ! plus k blocks. The arrays are reached only through addresses, hence MPI_F_sync_reg.
    subroutine test_alltoall_bottom(comm, comm_name, n, call_salt)
        type(MPI_Comm), intent(in) :: comm
        character(*), intent(in) :: comm_name
        integer, intent(in) :: n, call_salt
        integer, allocatable, target :: sendbuf(:), recvbuf(:)
        integer, allocatable :: expected(:)
        integer(MPI_ADDRESS_KIND) :: address(1)
        type(MPI_Datatype) :: send_type, recv_type
        integer :: p, r, peer, i, ierror

        if (n == 0) return
        call MPI_Comm_size(comm, p)
        call MPI_Comm_rank(comm, r)
        allocate (sendbuf(n * p), recvbuf(n * p + guard), expected(n * p + guard))
        recvbuf = sentinel
        expected = sentinel
        do peer = 0, p - 1
            do i = 0, n - 1
                sendbuf(peer * n + i + 1) = element(r, peer, i, call_salt)
                expected(peer * n + i + 1) = element(peer, r, i, call_salt)
            end do
        end do
        call MPI_Get_address(sendbuf(1), address(1))
        call MPI_Type_create_hindexed(1, [n], address, MPI_INTEGER, send_type)
        call MPI_Type_commit(send_type)
        call MPI_Get_address(recvbuf(1), address(1))
        call MPI_Type_create_hindexed(1, [n], address, MPI_INTEGER, recv_type)
        call MPI_Type_commit(recv_type)
        call MPI_F_sync_reg(sendbuf)
        call MPI_F_sync_reg(recvbuf)
        call MPI_Alltoall(MPI_BOTTOM, 1, send_type, MPI_BOTTOM, 1, recv_type, comm, ierror)
        call MPI_F_sync_reg(recvbuf)
        call MPI_Type_free(send_type)
        call MPI_Type_free(recv_type)
        call check_ierror('alltoall bottom', comm_name, n, ierror)
        call check_buffer('alltoall bottom', comm_name, n, recvbuf, expected)
    end subroutine test_alltoall_bottom

    ! MPI_Allgather of n integers per rank; with MPI_IN_PLACE the own block starts in recvbuf.
    subroutine test_allgather(comm, comm_name, n, call_salt, in_place, with_ierror)
        type(MPI_Comm), intent(in) :: comm
        character(*), intent(in) :: comm_name
        integer, intent(in) :: n, call_salt
        logical, intent(in) :: in_place, with_ierror
        integer, allocatable :: sendbuf(:), recvbuf(:), expected(:)
        integer :: p, r, peer, i, ierror
        character(len=32) :: what

        call MPI_Comm_size(comm, p)
        call MPI_Comm_rank(comm, r)
        allocate (sendbuf(max(1, n)), recvbuf(n * p + guard), expected(n * p + guard))
        sendbuf = hole
        recvbuf = sentinel
        expected = sentinel
        do i = 0, n - 1
            sendbuf(i + 1) = element(r, 0, i, call_salt)
        end do
        do peer = 0, p - 1
            do i = 0, n - 1
                expected(peer * n + i + 1) = element(peer, 0, i, call_salt)
            end do
        end do
        ierror = MPI_SUCCESS
        if (in_place) then
            what = 'allgather in_place'
            recvbuf(r * n + 1:r * n + n) = sendbuf(1:n)
            call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, n, MPI_INTEGER, comm, &
                               ierror)
        else if (with_ierror) then
            what = 'allgather'
            call MPI_Allgather(sendbuf, n, MPI_INTEGER, recvbuf, n, MPI_INTEGER, comm, ierror)
        else
            what = 'allgather (no ierror)'
            call MPI_Allgather(sendbuf, n, MPI_INTEGER, recvbuf, n, MPI_INTEGER, comm)
        end if
        if (with_ierror) call check_ierror(trim(what), comm_name, n, ierror)
        call check_buffer(trim(what), comm_name, n, recvbuf, expected)
    end subroutine test_allgather

    ! Elements rank `source` sends to rank `destination`: skewed, zero for some pairs; symmetric
    ! (the same both ways, as MPI_IN_PLACE needs) when `symmetric`.
    pure integer function pair_count(source, destination, n, symmetric)
        integer, intent(in) :: source, destination, n
        logical, intent(in) :: symmetric
        if (symmetric) then
            pair_count = mod(source + destination, 3) * n
        else
            pair_count = mod(source + 2 * destination, 4) * n
        end if
    end function pair_count

    ! MPI_Alltoallv: send blocks in reverse destination order with one-element holes, receive
    ! blocks in source order with two-element gaps that must keep the sentinel.
    subroutine test_alltoallv(comm, comm_name, n, call_salt, in_place, with_ierror)
        type(MPI_Comm), intent(in) :: comm
        character(*), intent(in) :: comm_name
        integer, intent(in) :: n, call_salt
        logical, intent(in) :: in_place, with_ierror
        integer, allocatable :: sendbuf(:), recvbuf(:), expected(:)
        integer, allocatable :: sendcounts(:), sdispls(:), recvcounts(:), rdispls(:)
        integer :: p, r, peer, i, ierror, send_total, recv_total
        character(len=32) :: what

        call MPI_Comm_size(comm, p)
        call MPI_Comm_rank(comm, r)
        allocate (sendcounts(0:p - 1), sdispls(0:p - 1), recvcounts(0:p - 1), rdispls(0:p - 1))
        send_total = 0
        do peer = p - 1, 0, -1
            sendcounts(peer) = pair_count(r, peer, n, in_place)
            sdispls(peer) = send_total
            send_total = send_total + sendcounts(peer) + 1
        end do
        recv_total = 0
        do peer = 0, p - 1
            recvcounts(peer) = pair_count(peer, r, n, in_place)
            rdispls(peer) = recv_total
            recv_total = recv_total + recvcounts(peer) + 2
        end do
        allocate (sendbuf(max(1, send_total)), recvbuf(recv_total + guard))
        allocate (expected(recv_total + guard))
        sendbuf = hole
        recvbuf = sentinel
        expected = sentinel
        do peer = 0, p - 1
            do i = 0, sendcounts(peer) - 1
                sendbuf(sdispls(peer) + i + 1) = element(r, peer, i, call_salt)
            end do
            do i = 0, recvcounts(peer) - 1
                expected(rdispls(peer) + i + 1) = element(peer, r, i, call_salt)
            end do
        end do
        ierror = MPI_SUCCESS
        if (in_place) then
            what = 'alltoallv in_place'
            ! the block for peer sits where peer's block will arrive (counts are symmetric)
            do peer = 0, p - 1
                do i = 0, recvcounts(peer) - 1
                    recvbuf(rdispls(peer) + i + 1) = element(r, peer, i, call_salt)
                end do
            end do
            call MPI_Alltoallv(MPI_IN_PLACE, recvcounts, rdispls, MPI_DATATYPE_NULL, recvbuf, &
                               recvcounts, rdispls, MPI_INTEGER, comm, ierror)
        else if (with_ierror) then
            what = 'alltoallv'
            call MPI_Alltoallv(sendbuf, sendcounts, sdispls, MPI_INTEGER, recvbuf, recvcounts, &
                               rdispls, MPI_INTEGER, comm, ierror)
        else
            what = 'alltoallv (no ierror)'
            call MPI_Alltoallv(sendbuf, sendcounts, sdispls, MPI_INTEGER, recvbuf, recvcounts, &
                               rdispls, MPI_INTEGER, comm)
        end if
        if (with_ierror) call check_ierror(trim(what), comm_name, n, ierror)
        call check_buffer(trim(what), comm_name, n, recvbuf, expected)
    end subroutine test_alltoallv

end program fortran_f08

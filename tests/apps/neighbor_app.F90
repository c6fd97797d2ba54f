! neighbor_app_f: a Fortran MPI program (`use mpi`) written as a third-party benchmark would be,
! with no nbr module or library: the Fortran counterpart of neighbor_app.c. It creates a
! distributed graph with MPI_Dist_graph_create_adjacent (rank r sends to r+1, r+2, r+1 and
! receives from r-1, r-2, r-1: a duplicate edge), times MPI_Ineighbor_allgather + MPI_Wait from
! 1 B to 16 KiB, runs MPI_Neighbor_alltoallv with per-edge sizes and displacements out of
! order and MPI_Neighbor_alltoallw with the same blocks (a datatype per block), then runs rounds that complete an MPI_Ineighbor_allgather together with the program's
! own MPI_Irecv/MPI_Isend by each MPI completion call (Waitall, Waitany, Waitsome, Testall,
! Testany/Testsome), and a persistent neighbor allgather started by MPI_Startall and completed
! by MPI_Wait; last, an MPI_Neighbor_alltoall on a non-periodic 2-D MPI_Cart_create grid, whose
! boundary slots (MPI_PROC_NULL) must stay untouched. Every received byte is checked.
!
!   mpirun -np N neighbor_app_f [ITERATIONS]    (N >= 2, with 2 the r+2 edge is a self-loop;
!                                               ITERATIONS per size, default 100; under Open
!                                               MPI the alltoallw part needs N >= 3)
!
! Prints "neighbor_app_f: data OK" on rank 0 when every check passed (exit code 1 otherwise)
! and one timing line per size. NEIGHBOR_ALLGATHER_INIT names the MPI library's persistent
! neighbor allgather (MPI-4's MPI_Neighbor_allgather_init, Open MPI 4.1's MPIX_ one). Buffers
! that MPI fills while a request is active are VOLATILE, so the compiler re-reads them after
! completion calls they are not passed to (MPI-4.1 §19.1.17; MPICH 4.0.2's MPI_F_SYNC_REG
! crashes).
#ifndef NEIGHBOR_ALLGATHER_INIT
#define NEIGHBOR_ALLGATHER_INIT MPI_Neighbor_allgather_init
#endif
program neighbor_app_f
    use mpi
    use iso_fortran_env, only: int8
    implicit none
    integer, parameter :: rounds = 5
    integer :: ierr, rank, nranks, graph, iterations, errors, total, round
    integer :: sources(3), destinations(3)
    character(len=32) :: arg

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
    if (nranks < 2) then
        if (rank == 0) print '(a)', 'neighbor_app_f: needs at least 2 ranks'
        call MPI_Finalize(ierr)
        stop 2
    end if
    iterations = 100
    if (command_argument_count() >= 1) then
        call get_command_argument(1, arg)
        read (arg, *) iterations
    end if
    destinations = [mod(rank + 1, nranks), mod(rank + 2, nranks), mod(rank + 1, nranks)]
    sources = [mod(rank - 1 + nranks, nranks), mod(rank - 2 + nranks, nranks), mod(rank - 1 + nranks, nranks)]
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, sources, MPI_UNWEIGHTED, 3, destinations, &
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, .false., graph, ierr)
    errors = timed_allgather(iterations)
    errors = errors + alltoallv()
#ifdef NEIGHBOR_ALLTOALLW_TYPES_PER_RANK
    ! This MPI's binding converts as many datatypes as the communicator has ranks, not as the
    ! rank has neighbors (Open MPI 4.1, open-mpi/ompi#10740): with fewer ranks than the 3
    ! neighbors, the last type would be garbage.
    if (nranks >= 3) errors = errors + alltoallw()
#else
    errors = errors + alltoallw()
#endif
    do round = 0, rounds - 1
        errors = errors + mixed_round(round)
    end do
    errors = errors + persistent_allgather()
    call MPI_Comm_free(graph, ierr)
    errors = errors + open_grid_alltoall()
    call MPI_Reduce(errors, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    call MPI_Bcast(total, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        if (total == 0) then
            print '(a)', 'neighbor_app_f: data OK'
        else
            print '(a,i0,a)', 'neighbor_app_f: ', total, ' wrong values'
        end if
    end if
    call MPI_Finalize(ierr)
    if (total /= 0) stop 1

contains

    ! Byte i (from 0) of the block that `origin` sends through out-slot `slot`.
    elemental integer(int8) function byte_of(origin, slot, i)
        integer, intent(in) :: origin, slot, i
        integer :: m
        m = modulo(origin * 31 + slot * 7 + i, 256)
        if (m > 127) m = m - 256
        byte_of = int(m, int8)
    end function byte_of

    integer function timed_allgather(iterations) result(errors)
        integer, intent(in) :: iterations
        integer(int8), allocatable :: send(:)
        integer(int8), allocatable, volatile :: recv(:)
        integer :: bytes, it, k, i, request
        double precision :: start
        allocate (send(16384), recv(3 * 16384))
        errors = 0
        bytes = 1
        do while (bytes <= 16384)
            send(1:bytes) = byte_of(rank, 0, [(i, i = 0, bytes - 1)])
            call MPI_Barrier(graph, ierr)
            start = MPI_Wtime()
            do it = 1, iterations
                recv(1:3 * bytes) = 0
                call MPI_Ineighbor_allgather(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, graph, request, ierr)
                call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
                do k = 1, 3
                    errors = errors + count(recv((k - 1) * bytes + 1:k * bytes) /= &
                                            byte_of(sources(k), 0, [(i, i = 0, bytes - 1)]))
                end do
            end do
            if (rank == 0) print '(a,i6,a,f9.2,a)', 'neighbor_app_f: ineighbor_allgather ', bytes, ' B ', &
                (MPI_Wtime() - start) / iterations * 1d6, ' us'
            bytes = bytes * 4
        end do
    end function timed_allgather

    ! Out-slot j (from 0) carries 1 + rank mod 5 + j bytes at displacement 20 (2 - j); in-edge k
    ! (from 0) left its source through out-slot k (k-th <-> k-th matching of duplicate edges).
    integer function alltoallv() result(errors)
        integer(int8) :: send(64), recv(64)
        integer :: scounts(3), sdispls(3), rcounts(3), rdispls(3), j, k, i
        errors = 0
        do j = 1, 3
            scounts(j) = 1 + mod(rank, 5) + (j - 1)
            sdispls(j) = 20 * (3 - j)
            send(sdispls(j) + 1:sdispls(j) + scounts(j)) = byte_of(rank, j - 1, [(i, i = 0, scounts(j) - 1)])
        end do
        do k = 1, 3
            rcounts(k) = 1 + mod(sources(k), 5) + (k - 1)
            rdispls(k) = 20 * (k - 1) + 1
        end do
        recv = 0
        call MPI_Neighbor_alltoallv(send, scounts, sdispls, MPI_BYTE, recv, rcounts, rdispls, MPI_BYTE, graph, ierr)
        do k = 1, 3
            errors = errors + count(recv(rdispls(k) + 1:rdispls(k) + rcounts(k)) /= &
                                    byte_of(sources(k), k - 1, [(i, i = 0, rcounts(k) - 1)]))
        end do
    end function alltoallv

    ! The same blocks by MPI_Neighbor_alltoallw: byte displacements, out-slot 2 (from 1) and
    ! in-slot 1 as bytes two apart (MPI_BYTE resized to extent 2), the others plain bytes.
    ! Bytes between received ones must stay 0.
    integer function alltoallw() result(errors)
        integer(int8) :: send(128), recv(128), want(128)
        integer :: scounts(3), rcounts(3), stypes(3), rtypes(3), spaced, j, k, i, step
        integer(kind=MPI_ADDRESS_KIND) :: sdispls(3), rdispls(3)
        errors = 0
        call MPI_Type_create_resized(MPI_BYTE, 0_MPI_ADDRESS_KIND, 2_MPI_ADDRESS_KIND, spaced, ierr)
        call MPI_Type_commit(spaced, ierr)
        send = 0
        do j = 1, 3
            scounts(j) = 1 + mod(rank, 5) + (j - 1)
            sdispls(j) = 40 * (3 - j)
            stypes(j) = MPI_BYTE
            step = 1
            if (j == 2) then
                stypes(j) = spaced
                step = 2
            end if
            do i = 0, scounts(j) - 1
                send(sdispls(j) + 1 + i * step) = byte_of(rank, j - 1, i)
            end do
        end do
        want = 0
        do k = 1, 3
            rcounts(k) = 1 + mod(sources(k), 5) + (k - 1)
            rdispls(k) = 40 * (k - 1) + 3
            rtypes(k) = MPI_BYTE
            step = 1
            if (k == 1) then
                rtypes(k) = spaced
                step = 2
            end if
            do i = 0, rcounts(k) - 1
                want(rdispls(k) + 1 + i * step) = byte_of(sources(k), k - 1, i)
            end do
        end do
        recv = 0
        call MPI_Neighbor_alltoallw(send, scounts, sdispls, stypes, recv, rcounts, rdispls, rtypes, graph, ierr)
        errors = count(recv /= want)
        call MPI_Type_free(spaced, ierr)
    end function alltoallw

    ! An MPI_Ineighbor_allgather and the program's own ring messages, completed together by the
    ! completion call `round` chooses.
    integer function mixed_round(round) result(errors)
        integer, intent(in) :: round
        integer :: send(2), mine, requests(3), k
        integer, volatile :: recv(6), token
        send = [1000 * rank + round, -rank]
        mine = 77 * rank + round
        token = -1
        recv = -1
        call MPI_Irecv(token, 1, MPI_INTEGER, mod(rank - 1 + nranks, nranks), 5, graph, requests(1), ierr)
        call MPI_Ineighbor_allgather(send, 2, MPI_INTEGER, recv, 2, MPI_INTEGER, graph, requests(2), ierr)
        call MPI_Isend(mine, 1, MPI_INTEGER, mod(rank + 1, nranks), 5, graph, requests(3), ierr)
        call complete(round, requests)
        errors = count(requests /= MPI_REQUEST_NULL)
        do k = 1, 3
            errors = errors + merge(0, 1, recv(2 * k - 1) == 1000 * sources(k) + round .and. &
                                          recv(2 * k) == -sources(k))
        end do
        if (token /= 77 * mod(rank - 1 + nranks, nranks) + round) errors = errors + 1
    end function mixed_round

    subroutine complete(how, requests)
        integer, intent(in) :: how
        integer, intent(inout) :: requests(:)
        integer :: statuses(MPI_STATUS_SIZE, 3), status(MPI_STATUS_SIZE), index, outcount, indices(3)
        logical :: flag
        select case (mod(how, 5))
        case (0)
            call MPI_Waitall(3, requests, statuses, ierr)
        case (1)
            do while (any(requests /= MPI_REQUEST_NULL))  ! MPICH 4.0.2 answers MPI_UNDEFINED + 1 when done
                call MPI_Waitany(3, requests, index, status, ierr)
            end do
        case (2)
            do while (any(requests /= MPI_REQUEST_NULL))
                call MPI_Waitsome(3, requests, outcount, indices, statuses, ierr)
            end do
        case (3)
            flag = .false.
            do while (.not. flag)
                call MPI_Testall(3, requests, flag, MPI_STATUSES_IGNORE, ierr)
            end do
        case default
            do while (any(requests /= MPI_REQUEST_NULL))
                call MPI_Testany(3, requests, index, flag, MPI_STATUS_IGNORE, ierr)
                call MPI_Testsome(3, requests, outcount, indices, statuses, ierr)
            end do
        end select
    end subroutine complete

    ! A persistent neighbor allgather started three times, then freed.
    integer function persistent_allgather() result(errors)
        integer :: request(1), start
        integer, volatile :: send(1), recv(3)
        errors = 0
        call NEIGHBOR_ALLGATHER_INIT(send, 1, MPI_INTEGER, recv, 1, MPI_INTEGER, graph, MPI_INFO_NULL, request(1), ierr)
        do start = 1, 3
            send(1) = 100 * rank + start
            recv = -1
            call MPI_Startall(1, request, ierr)
            call MPI_Wait(request(1), MPI_STATUS_IGNORE, ierr)
            errors = errors + count(recv /= 100 * sources + start)
        end do
        call MPI_Request_free(request(1), ierr)
        if (request(1) /= MPI_REQUEST_NULL) errors = errors + 1
    end function persistent_allgather

    ! A non-periodic 2-D grid: per dimension, block 2d goes to the negative neighbor, which
    ! receives it in slot 2d + 1 (and the other way round); slots without a neighbor keep -1.
    integer function open_grid_alltoall() result(errors)
        integer :: grid, dims(2), d, source, dest, send(4), recv(4)
        logical :: periods(2)
        dims = 0
        periods = .false.
        call MPI_Dims_create(nranks, 2, dims, ierr)
        call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., grid, ierr)
        send = [(1000 * rank + d, d = 0, 3)]
        recv = -1
        call MPI_Neighbor_alltoall(send, 1, MPI_INTEGER, recv, 1, MPI_INTEGER, grid, ierr)
        errors = 0
        do d = 0, 1
            call MPI_Cart_shift(grid, d, 1, source, dest, ierr)
            errors = errors + merge(0, 1, recv(2 * d + 1) == expected(source, 2 * d + 1))
            errors = errors + merge(0, 1, recv(2 * d + 2) == expected(dest, 2 * d))
        end do
        call MPI_Comm_free(grid, ierr)
    end function open_grid_alltoall

    ! What slot receives from `peer`'s block `block` (from 0), or -1 at MPI_PROC_NULL.
    integer function expected(peer, block)
        integer, intent(in) :: peer, block
        expected = -1
        if (peer /= MPI_PROC_NULL) expected = 1000 * peer + block
    end function expected

end program neighbor_app_f

! neighbor_app_f08: the `use mpi_f08` counterpart of neighbor_app_f, written without nbr and
! without the optional ierror arguments: a distributed graph from
! MPI_Dist_graph_create_adjacent (rank r sends to r+1, r+2, r+1 and receives from r-1, r-2,
! r-1), MPI_Ineighbor_allgather + MPI_Wait from 4 B to 16 KiB, MPI_Neighbor_alltoallv, and an
! MPI_Ineighbor_allgather completed by MPI_Waitall together with the program's own messages
! (not an alltoall: MPICH 4.0's nonblocking one mismatches duplicate edges natively).
! Every received value is checked. Buffers that MPI fills while a request is active are
! VOLATILE (MPI-4.1 §19.1.17).
!
!   mpirun -np N neighbor_app_f08 [ITERATIONS]      (N >= 2; with 2 the r+2 edge is a self-loop)
!
! Prints "neighbor_app_f08: data OK" on rank 0 when every check passed (exit code 1 otherwise).
program neighbor_app_f08
    use mpi_f08
    implicit none
    type(MPI_Comm) :: graph
    integer :: rank, nranks, iterations, errors, total
    integer :: sources(3), destinations(3)
    character(len=32) :: arg

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks)
    iterations = 10
    if (command_argument_count() >= 1) then
        call get_command_argument(1, arg)
        read (arg, *) iterations
    end if
    destinations = [mod(rank + 1, nranks), mod(rank + 2, nranks), mod(rank + 1, nranks)]
    sources = [mod(rank - 1 + nranks, nranks), mod(rank - 2 + nranks, nranks), mod(rank - 1 + nranks, nranks)]
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, sources, MPI_UNWEIGHTED, 3, destinations, &
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, .false., graph)
    errors = allgathers(iterations) + alltoallv() + allgather_with_own_messages()
    call MPI_Comm_free(graph)
    call MPI_Reduce(errors, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
    call MPI_Bcast(total, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
    if (rank == 0) then
        if (total == 0) then
            print '(a)', 'neighbor_app_f08: data OK'
        else
            print '(a,i0,a)', 'neighbor_app_f08: ', total, ' wrong values'
        end if
    end if
    call MPI_Finalize()
    if (total /= 0) stop 1

contains

    integer function allgathers(iterations) result(errors)
        integer, intent(in) :: iterations
        integer, allocatable :: send(:)
        integer, allocatable, volatile :: recv(:)
        integer :: words, it, k, i
        type(MPI_Request) :: request
        allocate (send(4096), recv(3 * 4096))
        errors = 0
        words = 1
        do while (words <= 4096)  ! 4 B to 16 KiB
            send(1:words) = [(rank * 100000 + i, i = 1, words)]
            do it = 1, iterations
                recv(1:3 * words) = -1
                call MPI_Ineighbor_allgather(send, words, MPI_INTEGER, recv, words, MPI_INTEGER, graph, request)
                call MPI_Wait(request, MPI_STATUS_IGNORE)
                do k = 1, 3
                    errors = errors + count(recv((k - 1) * words + 1:k * words) /= &
                                            [(sources(k) * 100000 + i, i = 1, words)])
                end do
            end do
            words = words * 4
        end do
    end function allgathers

    integer function alltoallv() result(errors)
        integer :: send(30), recv(30), scounts(3), sdispls(3), rcounts(3), rdispls(3), j, k, i
        do j = 1, 3
            scounts(j) = 1 + mod(rank, 4) + j
            sdispls(j) = 10 * (3 - j)
            send(sdispls(j) + 1:sdispls(j) + scounts(j)) = [(rank * 1000 + j * 10 + i, i = 1, scounts(j))]
        end do
        do k = 1, 3
            rcounts(k) = 1 + mod(sources(k), 4) + k
            rdispls(k) = 10 * (k - 1)
        end do
        recv = -1
        call MPI_Neighbor_alltoallv(send, scounts, sdispls, MPI_INTEGER, recv, rcounts, rdispls, MPI_INTEGER, graph)
        errors = 0
        do k = 1, 3
            errors = errors + count(recv(rdispls(k) + 1:rdispls(k) + rcounts(k)) /= &
                                    [(sources(k) * 1000 + k * 10 + i, i = 1, rcounts(k))])
        end do
    end function alltoallv

    integer function allgather_with_own_messages() result(errors)
        integer :: send, mine, k
        integer, volatile :: recv(3), token
        type(MPI_Request) :: requests(3)
        send = rank * 10 + 7
        recv = -1
        mine = 500 + rank
        call MPI_Irecv(token, 1, MPI_INTEGER, mod(rank - 1 + nranks, nranks), 3, graph, requests(1))
        call MPI_Ineighbor_allgather(send, 1, MPI_INTEGER, recv, 1, MPI_INTEGER, graph, requests(2))
        call MPI_Isend(mine, 1, MPI_INTEGER, mod(rank + 1, nranks), 3, graph, requests(3))
        call MPI_Waitall(3, requests, MPI_STATUSES_IGNORE)
        errors = count(recv /= sources * 10 + 7)
        if (token /= 500 + mod(rank - 1 + nranks, nranks)) errors = errors + 1
        do k = 1, 3
            if (requests(k) /= MPI_REQUEST_NULL) errors = errors + 1
        end do
    end function allgather_with_own_messages

end program neighbor_app_f08

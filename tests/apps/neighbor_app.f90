! neighbor_app.f90: a Fortran MPI program, written without nbr, that creates a distributed
! graph with MPI_Dist_graph_create_adjacent (rank r receives from r-1, r-2, r-1 and sends to
! r+1, r+2, r+1), checks MPI_Neighbor_allgather's data, and frees the communicator.
! Prints "neighbor_app_f: data OK" on rank 0. Needs at least 3 ranks.
program neighbor_app_f
    use mpi
    implicit none
    integer :: ierr, rank, nranks, graph, k, errors, total
    integer :: sources(3), destinations(3), recv(3), sendval

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
    destinations = [mod(rank + 1, nranks), mod(rank + 2, nranks), mod(rank + 1, nranks)]
    sources = [mod(rank - 1 + nranks, nranks), mod(rank - 2 + nranks, nranks), mod(rank - 1 + nranks, nranks)]
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, sources, MPI_UNWEIGHTED, 3, destinations, &
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, .false., graph, ierr)
    sendval = 1000 + rank
    recv = -1
    call MPI_Neighbor_allgather(sendval, 1, MPI_INTEGER, recv, 1, MPI_INTEGER, graph, ierr)
    errors = 0
    do k = 1, 3
        if (recv(k) /= 1000 + sources(k)) errors = errors + 1
    end do
    call MPI_Comm_free(graph, ierr)
    call MPI_Reduce(errors, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        if (total == 0) then
            print '(a)', 'neighbor_app_f: data OK'
        else
            print '(a,i0,a)', 'neighbor_app_f: ', total, ' wrong blocks'
        end if
    end if
    call MPI_Finalize(ierr)
end program neighbor_app_f

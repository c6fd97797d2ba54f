/*
 * dup_app: an MPI program written without nbr that creates one dist-graph communicator,
 * duplicates it three ways (MPI_Comm_dup, MPI_Comm_idup, MPI_Comm_dup_with_info), runs
 * MPI_Neighbor_alltoall and MPI_Ineighbor_allgather on the original and on every duplicate,
 * frees the original first and calls once more on a duplicate. Every received value is checked.
 *
 *   mpirun -np N dup_app      (N >= 2)    prints "dup_app: data OK, C calls" on rank 0
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { DEGREE = 3 };

static int value(int origin, int slot, int call) {
    return origin * 10000 + slot * 100 + call;
}

/* r sends to r+1, r+2, r+3 (mod n) and receives from r-1, r-2, r-3: in-edge k left its
 * source through the source's out-slot k. */
static MPI_Comm create(int rank, int n) {
    int in[DEGREE], out[DEGREE];
    for (int k = 0; k < DEGREE; ++k) {
        out[k] = (rank + k + 1) % n;
        in[k] = (rank - k - 1 + DEGREE * n) % n;
    }
    MPI_Comm comm;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, DEGREE, in, MPI_UNWEIGHTED, DEGREE, out, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &comm);
    return comm;
}

/* One alltoall and one nonblocking allgather on comm; the number of wrong values. */
static int exchange(MPI_Comm comm, int rank, int n, int call) {
    int send[DEGREE], recv[DEGREE], errors = 0;
    for (int k = 0; k < DEGREE; ++k) send[k] = value(rank, k, call);
    MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, comm);
    for (int k = 0; k < DEGREE; ++k) errors += recv[k] != value((rank - k - 1 + DEGREE * n) % n, k, call);
    int mine = value(rank, 9, call), gathered[DEGREE];
    MPI_Request request;
    MPI_Ineighbor_allgather(&mine, 1, MPI_INT, gathered, 1, MPI_INT, comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    for (int k = 0; k < DEGREE; ++k) errors += gathered[k] != value((rank - k - 1 + DEGREE * n) % n, 9, call);
    return errors;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, n = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm original = create(rank, n), dup, idup, with_info;
    MPI_Comm_dup(original, &dup);
    MPI_Request request;
    MPI_Comm_idup(original, &idup, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm_dup_with_info(original, info, &with_info);
    MPI_Info_free(&info);
    int errors = 0, calls = 0;
    MPI_Comm comms[4] = {original, dup, idup, with_info};
    for (int c = 0; c < 4; ++c, calls += 2) errors += exchange(comms[c], rank, n, c);
    MPI_Comm_free(&original); /* the duplicates keep working */
    errors += exchange(dup, rank, n, 7);
    calls += 2;
    MPI_Comm_free(&dup);
    MPI_Comm_free(&idup);
    MPI_Comm_free(&with_info);
    int total = 0;
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf("dup_app: data OK, %d calls\n", calls);
        else
            printf("dup_app: %d wrong values\n", total);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

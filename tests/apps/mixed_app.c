/*
 * mixed_app: an MPI program written without nbr that mixes, on two topology communicators,
 * neighborhood collectives (blocking, nonblocking, persistent), a native collective and its
 * own point-to-point messages, completes them together with every MPI completion call, and
 * frees and re-creates the communicators; then frees one right after a collective and calls
 * collectives on new ones that may get its handle. Every received value is checked.
 *
 *   mpirun -np N mixed_app      (N >= 2)    prints "mixed_app: data OK" on rank 0
 */
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NEIGHBOR_ALLTOALL_INIT MPIX_Neighbor_alltoall_init
#else
#define NEIGHBOR_ALLTOALL_INIT MPI_Neighbor_alltoall_init
#endif

enum { COUNT = 3, DEGREE = 3 };

static int value(int origin, int slot, int round, int i) {
    return origin * 100000 + slot * 1000 + round * 10 + i;
}

/* A: r sends to r+1, r+2, r+1 and receives from r-1, r-2, r-1 (a duplicate edge).
 * B: r sends to r-1, r+2 and receives from r+1, r-2 (no duplicates from 4 ranks on: MPICH
 * 4.0's own neighbor alltoall mismatches duplicate edges, and its persistent one hangs on
 * them, so the alltoall calls run on B). In both, in-edge k left its source through the
 * source's out-slot k. */
static MPI_Comm create(int which, int rank, int n, int* in, int* degree) {
    int out[DEGREE];
    MPI_Comm comm;
    if (which == 0) {
        *degree = 3;
        out[0] = (rank + 1) % n, out[1] = (rank + 2) % n, out[2] = (rank + 1) % n;
        in[0] = (rank + n - 1) % n, in[1] = (rank + n - 2) % n, in[2] = (rank + n - 1) % n;
    } else {
        *degree = 2;
        out[0] = (rank + n - 1) % n, out[1] = (rank + 2) % n;
        in[0] = (rank + 1) % n, in[1] = (rank + n - 2) % n;
    }
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, *degree, in, MPI_UNWEIGHTED, *degree, out, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &comm);
    return comm;
}

static int count_errors(const int* got, const int* in, int degree, int same_slot, int round) {
    int errors = 0;
    for (int k = 0; k < degree; ++k)
        for (int i = 0; i < COUNT; ++i) errors += got[k * COUNT + i] != value(in[k], same_slot ? 0 : k, round, i);
    return errors;
}

/* Completes the requests with one of MPI's completion calls, chosen by `how`. */
static void complete(int how, int n, MPI_Request* requests) {
    int index, flag = 0, outcount, indices[8];
    MPI_Status statuses[8];
    switch (how % 5) {
        case 0: MPI_Waitall(n, requests, statuses); break;
        case 1:
            do MPI_Waitany(n, requests, &index, &statuses[0]);
            while (index != MPI_UNDEFINED);
            break;
        case 2:
            do MPI_Waitsome(n, requests, &outcount, indices, statuses);
            while (outcount != MPI_UNDEFINED);
            break;
        case 3:
            while (!flag) MPI_Testall(n, requests, &flag, statuses);
            break;
        default:
            for (;;) {
                MPI_Testany(n, requests, &index, &flag, &statuses[0]);
                if (flag && index == MPI_UNDEFINED) break;
                MPI_Testsome(n, requests, &outcount, indices, statuses);
                if (outcount == MPI_UNDEFINED) break;
            }
    }
}

static int one_round(MPI_Comm a, const int* in_a, int da, MPI_Comm b, const int* in_b, int db, MPI_Request* persistent,
                     int* all_send, int* all_recv, int rank, int n, int round) {
    int send[COUNT], gather_a[DEGREE * COUNT], gather_b[DEGREE * COUNT], all_b[DEGREE * COUNT], token = -1, sum = 0;
    int errors = 0;
    MPI_Request requests[6];
    for (int i = 0; i < COUNT; ++i) send[i] = value(rank, 0, round, i);
    for (int j = 0; j < db; ++j)
        for (int i = 0; i < COUNT; ++i) all_send[j * COUNT + i] = value(rank, j, round, i);
    int mine = value(rank, 9, round, 0);
    MPI_Ineighbor_allgather(send, COUNT, MPI_INT, gather_a, COUNT, MPI_INT, a, &requests[0]);
    MPI_Irecv(&token, 1, MPI_INT, (rank + n - 1) % n, 7, a, &requests[1]);
    MPI_Isend(&mine, 1, MPI_INT, (rank + 1) % n, 7, a, &requests[2]);
    MPI_Startall(1, persistent);
    requests[3] = *persistent;
    MPI_Ineighbor_alltoall(all_send, COUNT, MPI_INT, all_b, COUNT, MPI_INT, b, &requests[4]);
    requests[5] = MPI_REQUEST_NULL;
    MPI_Neighbor_allgather(send, COUNT, MPI_INT, gather_b, COUNT, MPI_INT, b); /* blocking, meanwhile */
#if defined(OPEN_MPI) && OPEN_MPI
    complete(round, 6, requests);
#else
    /* MPICH 4.0 hangs when its persistent neighborhood collective is completed by
     * MPI_Waitany, MPI_Waitsome, MPI_Testall or MPI_Testany: that one gets MPI_Wait. */
    requests[3] = MPI_REQUEST_NULL;
    complete(round, 6, requests);
    requests[3] = *persistent;
    MPI_Wait(&requests[3], MPI_STATUS_IGNORE);
#endif
    *persistent = requests[3];
    /* Completed nonblocking requests are released (the neighborhood collectives' too, whatever
     * nbr hands out for them); the persistent one stays. */
    for (int k = 0; k < 6; ++k) errors += k != 3 && requests[k] != MPI_REQUEST_NULL;
    errors += *persistent == MPI_REQUEST_NULL;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, a); /* a native collective on the same communicator */
    errors += count_errors(gather_a, in_a, da, 1, round);
    errors += count_errors(gather_b, in_b, db, 1, round);
    errors += count_errors(all_b, in_b, db, 0, round);
    errors += count_errors(all_recv, in_b, db, 0, round);
    errors += token != value((rank + n - 1) % n, 9, round, 0);
    errors += sum != n * (n - 1) / 2;
    return errors;
}

/* A communicator freed right after a blocking neighborhood collective, then rings
 * (r -> r+1) created at once, among which MPI may hand out the freed one's handle again: the
 * collectives on the rings must deliver their own data. Every rank creates and calls all of
 * them, so the calls stay collective wherever the handle is reused. */
static int reused_handles(int rank, int n) {
    enum { RINGS = 4 };
    int in_a[DEGREE], da, send[COUNT], got[DEGREE * COUNT], errors = 0;
    MPI_Comm a = create(0, rank, n, in_a, &da), rings[RINGS];
    for (int i = 0; i < COUNT; ++i) send[i] = value(rank, 0, 11, i);
    MPI_Neighbor_allgather(send, COUNT, MPI_INT, got, COUNT, MPI_INT, a);
    errors += count_errors(got, in_a, da, 1, 11);
    MPI_Comm_free(&a);
    int from = (rank + n - 1) % n, to = (rank + 1) % n;
    for (int k = 0; k < RINGS; ++k)
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &from, MPI_UNWEIGHTED, 1, &to, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                       0, &rings[k]);
    for (int k = 0; k < RINGS; ++k) {
        int mine = value(rank, k, 12, 0), theirs = -1;
        MPI_Neighbor_allgather(&mine, 1, MPI_INT, &theirs, 1, MPI_INT, rings[k]);
        errors += theirs != value(from, k, 12, 0);
        MPI_Comm_free(&rings[k]);
    }
    return errors;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, n, errors = 0, total = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 2) {
        if (rank == 0) fprintf(stderr, "mixed_app: needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    for (int life = 0; life < 2; ++life) { /* free and re-create the communicators */
        int in_a[DEGREE], in_b[DEGREE], da, db, all_send[DEGREE * COUNT], all_recv[DEGREE * COUNT];
        MPI_Comm a = create(0, rank, n, in_a, &da);
        MPI_Comm b = create(1, rank, n, in_b, &db);
        MPI_Request persistent;
        NEIGHBOR_ALLTOALL_INIT(all_send, COUNT, MPI_INT, all_recv, COUNT, MPI_INT, b, MPI_INFO_NULL, &persistent);
        for (int round = 0; round < 10; ++round)
            errors += one_round(a, in_a, da, b, in_b, db, &persistent, all_send, all_recv, rank, n, round);
        MPI_Request_free(&persistent);
        MPI_Comm_free(&a);
        MPI_Comm_free(&b);
    }
    errors += reused_handles(rank, n);
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf(total == 0 ? "mixed_app: data OK\n" : "mixed_app: %d wrong values\n", total);
    MPI_Bcast(&total, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

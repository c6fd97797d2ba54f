/*
 * neighbor_app: an MPI program written as a third-party benchmark would be, with no nbr
 * header or library. It creates a distributed graph with MPI_Dist_graph_create_adjacent
 * (in-lists not in source order, a duplicate edge), times MPI_Ineighbor_allgather +
 * MPI_Wait from 1 B to 16 KiB, runs MPI_Neighbor_alltoallv (MPI-4 libraries: its large-count
 * form MPI_Neighbor_alltoallv_c) and MPI_Neighbor_alltoallw (the same blocks, each with its own
 * datatype), and checks every received byte.
 * It then creates the other topology kinds (MPI_Dist_graph_create, MPI_Graph_create, a
 * periodic and a non-periodic MPI_Cart_create), runs MPI_Neighbor_alltoall on the
 * MPI_Dist_graph_create one and on the periodic Cartesian one and MPI_Neighbor_alltoallv and
 * MPI_Neighbor_alltoallw on the non-periodic one (whose end slots, MPI_PROC_NULL, must stay
 * untouched; checked), and
 * frees them all. Needs at least 2 ranks (with 2, the r+2 edge is a self-loop).
 *
 *   mpirun -np N neighbor_app [ITERATIONS [DELAY_US]]
 *
 * With DELAY_US, rank 0 sleeps that long before each MPI_Ineighbor_allgather, so that the ranks
 * that wait for its block spend it inside the call (a report over ranks must name one of them).
 *
 * Prints "neighbor_app: data OK" on rank 0 when every check passed (exit code 1 otherwise)
 * and one timing line per size.
 */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned char value(int origin, int slot, int i) {
    return (unsigned char)(origin * 31 + slot * 7 + i);
}

/* Rank r sends to r+1 twice and to r+2; receives from r-1, r-2, r-1 (in that order). */
static MPI_Comm make_graph(int rank, int size, int* in, int* out) {
    MPI_Comm graph;
    out[0] = (rank + 1) % size;
    out[1] = (rank + 2) % size;
    out[2] = (rank + 1) % size;
    in[0] = (rank - 1 + size) % size;
    in[1] = (rank - 2 + size) % size;
    in[2] = (rank - 1 + size) % size;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, in, MPI_UNWEIGHTED, 3, out, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                   &graph);
    return graph;
}

/* The out-slot at which in-edge k leaves its source: k (k-th <-> k-th matching of the two
 * r-1 -> r edges, slots 0 and 2; the r-2 -> r edge is slot 1). */
static int source_slot(int k) {
    return k;
}

static int check_allgather(int size_bytes, const unsigned char* recv, const int* in) {
    for (int k = 0; k < 3; ++k)
        for (int i = 0; i < size_bytes; ++i)
            if (recv[k * size_bytes + i] != value(in[k], 0, i)) return 1;
    return 0;
}

static void sleep_us(int microseconds) {
    struct timespec pause = {microseconds / 1000000, (long)(microseconds % 1000000) * 1000L};
    while (nanosleep(&pause, &pause) != 0) {
    }
}

static int timed_allgather(MPI_Comm graph, int rank, const int* in, int iterations, int delay_us) {
    int errors = 0;
    unsigned char* send = malloc(16384);
    unsigned char* recv = malloc(3 * 16384);
    for (int bytes = 1; bytes <= 16384; bytes *= 4) {
        for (int i = 0; i < bytes; ++i) send[i] = value(rank, 0, i);
        MPI_Barrier(graph);
        const double start = MPI_Wtime();
        for (int it = 0; it < iterations; ++it) {
            MPI_Request request;
            memset(recv, 0, (size_t)(3 * bytes));
            if (rank == 0 && delay_us > 0) sleep_us(delay_us);
            MPI_Ineighbor_allgather(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, graph, &request);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            errors += check_allgather(bytes, recv, in);
        }
        const double us = (MPI_Wtime() - start) / iterations * 1e6;
        if (rank == 0) printf("neighbor_app: ineighbor_allgather %6d B %9.2f us\n", bytes, us);
    }
    free(send);
    free(recv);
    return errors;
}

/* Block sizes vary per edge: slot j to carry 1 + origin + j bytes, laid out with gaps. */
static int alltoallv(MPI_Comm graph, int rank, const int* in) {
    int scounts[3], sdispls[3], rcounts[3], rdispls[3], errors = 0;
    unsigned char send[64], recv[64];
    for (int j = 0; j < 3; ++j) {
        scounts[j] = 1 + rank % 5 + j;
        sdispls[j] = 20 * (2 - j); /* out of order */
        for (int i = 0; i < scounts[j]; ++i) send[sdispls[j] + i] = value(rank, j, i);
    }
    for (int k = 0; k < 3; ++k) {
        rcounts[k] = 1 + in[k] % 5 + source_slot(k);
        rdispls[k] = 20 * k + 1;
    }
    memset(recv, 0, sizeof recv);
#if MPI_VERSION >= 4
    /* MPI-4 libraries: the large-count form, with the same blocks. */
    MPI_Count scounts_c[3], rcounts_c[3];
    MPI_Aint sdispls_c[3], rdispls_c[3];
    for (int j = 0; j < 3; ++j) {
        scounts_c[j] = scounts[j];
        sdispls_c[j] = sdispls[j];
        rcounts_c[j] = rcounts[j];
        rdispls_c[j] = rdispls[j];
    }
    MPI_Neighbor_alltoallv_c(send, scounts_c, sdispls_c, MPI_BYTE, recv, rcounts_c, rdispls_c, MPI_BYTE, graph);
#else
    MPI_Neighbor_alltoallv(send, scounts, sdispls, MPI_BYTE, recv, rcounts, rdispls, MPI_BYTE, graph);
#endif
    for (int k = 0; k < 3; ++k)
        for (int i = 0; i < rcounts[k]; ++i)
            if (recv[rdispls[k] + i] != value(in[k], source_slot(k), i)) ++errors;
    return errors;
}

/* The alltoallv's blocks again, each block with its own datatype: plain bytes, bytes two apart
 * (MPI_BYTE resized to extent 2) and a contiguous type of one byte, sender and receiver using
 * different ones; displacements in bytes. Gaps between received bytes must stay 0. */
static int alltoallw(MPI_Comm graph, int rank, const int* in) {
    MPI_Datatype spaced, single;
    MPI_Type_create_resized(MPI_BYTE, 0, 2, &spaced);
    MPI_Type_contiguous(1, MPI_BYTE, &single);
    MPI_Type_commit(&spaced);
    MPI_Type_commit(&single);
    const MPI_Datatype kinds[3] = {MPI_BYTE, spaced, single};
    const int step[3] = {1, 2, 1};
    int scounts[3], rcounts[3], errors = 0;
    MPI_Aint sdispls[3], rdispls[3];
    MPI_Datatype stypes[3], rtypes[3];
    unsigned char send[128], recv[128], want[128];
    for (int j = 0; j < 3; ++j) {
        scounts[j] = 1 + rank % 5 + j;
        sdispls[j] = 40 * (2 - j);
        stypes[j] = kinds[j];
        for (int i = 0; i < scounts[j]; ++i) send[sdispls[j] + i * step[j]] = value(rank, j, i);
    }
    memset(want, 0, sizeof want);
    for (int k = 0; k < 3; ++k) {
        const int kind = (k + 1) % 3;
        rcounts[k] = 1 + in[k] % 5 + source_slot(k);
        rdispls[k] = 40 * k + 3;
        rtypes[k] = kinds[kind];
        for (int i = 0; i < rcounts[k]; ++i) want[rdispls[k] + i * step[kind]] = value(in[k], source_slot(k), i);
    }
    memset(recv, 0, sizeof recv);
    MPI_Neighbor_alltoallw(send, scounts, sdispls, stypes, recv, rcounts, rdispls, rtypes, graph);
    for (int i = 0; i < 128; ++i) errors += recv[i] != want[i];
    MPI_Type_free(&spaced);
    MPI_Type_free(&single);
    return errors;
}

/* On a periodic ring: block 0 goes to the negative neighbor, block 1 to the positive one, and
 * block 0 arrives from the negative neighbor, which sent it in the positive direction. */
static int cartesian_alltoall(MPI_Comm ring, int rank, int size) {
    const int send[2] = {10 * rank, 10 * rank + 1};
    int recv[2] = {-1, -1};
    MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, ring);
    return (recv[0] != 10 * ((rank + size - 1) % size) + 1) + (recv[1] != 10 * ((rank + 1) % size));
}

/* A non-periodic line: block 0 (r + 1 ints) to rank r - 1, block 1 (r + 2 ints) to r + 1;
 * the ends' outer slots keep their -1. Returns the wrong values seen. */
static int line_alltoallv(MPI_Comm line, int rank, int size) {
    int send[64], recv[64], sendcounts[2], sdispls[2], recvcounts[2], rdispls[2];
    for (int i = 0; i < 64; ++i) {
        send[i] = 100 * rank + i;
        recv[i] = -1;
    }
    sendcounts[0] = rank % 8 + 1;
    sendcounts[1] = rank % 8 + 2;
    sdispls[0] = 20; /* out of order, with gaps */
    sdispls[1] = 0;
    recvcounts[0] = rank > 0 ? (rank - 1) % 8 + 2 : 30; /* from r - 1's block 1; an end: ignored */
    recvcounts[1] = rank + 1 < size ? (rank + 1) % 8 + 1 : 30;
    rdispls[0] = 32;
    rdispls[1] = 10;
    MPI_Neighbor_alltoallv(send, sendcounts, sdispls, MPI_INT, recv, recvcounts, rdispls, MPI_INT, line);
    int errors = 0;
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 64; ++i) {
            int want = -1;
            if (rank > 0 && i >= 32 && i < 32 + recvcounts[0]) want = 100 * (rank - 1) + (i - 32);
            if (rank + 1 < size && i >= 10 && i < 10 + recvcounts[1]) want = 100 * (rank + 1) + 20 + (i - 10);
            errors += recv[i] != want;
            recv[i] = -1;
        }
        if (round == 1) break;
        /* The same as MPI_Neighbor_alltoallw: byte displacements, a datatype per slot. */
        const MPI_Aint sbytes[2] = {20 * sizeof(int), 0}, rbytes[2] = {32 * sizeof(int), 10 * sizeof(int)};
        const MPI_Datatype types[2] = {MPI_INT, MPI_INT};
        MPI_Neighbor_alltoallw(send, sendcounts, sbytes, types, recv, recvcounts, rbytes, types, line);
    }
    return errors;
}

/* The other topology constructors, each created and freed; returns the wrong values seen. */
static int other_topologies(int rank, int size) {
    MPI_Comm comm;
    int source = rank, degree = 1, destination = (rank + 1) % size;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &source, &degree, &destination, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm);
    int sent = 7 * rank + 1, got = -1; /* a ring: each rank receives from rank - 1 */
    MPI_Neighbor_alltoall(&sent, 1, MPI_INT, &got, 1, MPI_INT, comm);
    int errors = got != 7 * ((rank + size - 1) % size) + 1;
    MPI_Comm_free(&comm);
    int* index = malloc(sizeof(int) * (size_t)size);
    int* edges = malloc(sizeof(int) * (size_t)size * 2);
    for (int r = 0; r < size; ++r) {
        index[r] = 2 * (r + 1);
        edges[2 * r] = (r + 1) % size;
        edges[2 * r + 1] = (r + size - 1) % size;
    }
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &comm);
    MPI_Comm_free(&comm);
    free(index);
    free(edges);
    int dims[1] = {size}, periodic[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periodic, 0, &comm);
    errors += cartesian_alltoall(comm, rank, size);
    MPI_Comm_free(&comm);
    periodic[0] = 0;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periodic, 0, &comm);
    errors += line_alltoallv(comm, rank, size);
    MPI_Comm_free(&comm);
    return errors;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "neighbor_app: needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    const int iterations = argc > 1 ? atoi(argv[1]) : 100;
    int in[3], out[3];
    MPI_Comm graph = make_graph(rank, size, in, out);
    const int delay_us = argc > 2 ? atoi(argv[2]) : 0;
    int errors = timed_allgather(graph, rank, in, iterations, delay_us);
    errors += alltoallv(graph, rank, in);
    errors += alltoallw(graph, rank, in);
    MPI_Comm_free(&graph);
    errors += other_topologies(rank, size);
    int total = 0;
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf(total == 0 ? "neighbor_app: data OK\n" : "neighbor_app: %d wrong blocks\n", total);
    MPI_Bcast(&total, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

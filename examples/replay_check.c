/*
 * replay_check: load a pattern directory, replay allgather and alltoall with libnbr, and
 * check every received block against MPI's own allgather and the standard's alltoall on the
 * same dist-graph communicator.
 *
 *   mpirun -np N replay_check PATTERN_DIR [COUNT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "nbr.h"

static int value(int rank, int block, int i) {
    return rank * 1000003 + block * 101 + i;
}

/* MPI_Neighbor_alltoall as MPI-4.1 section 8.6 defines it on a dist-graph communicator:
 * receives posted in source order, sends in destination order, one tag, so the k-th edge to a
 * process matches the k-th edge from it. The reference for alltoall: MPICH 4.0's own
 * collective mismatches duplicate edges (pmodels/mpich#7945). */
static void reference_alltoall(const int* send, int* recv, int count, const int* sources, int indegree,
                               const int* destinations, int outdegree, MPI_Comm comm) {
    MPI_Request* requests = malloc(sizeof(MPI_Request) * (size_t)(indegree + outdegree + 1));
    for (int b = 0; b < indegree; ++b)
        MPI_Irecv(recv + (size_t)b * count, count, MPI_INT, sources[b], 0, comm, &requests[b]);
    for (int j = 0; j < outdegree; ++j)
        MPI_Isend(send + (size_t)j * count, count, MPI_INT, destinations[j], 0, comm, &requests[indegree + j]);
    /* Real statuses: GCC 12 mistakes MPICH's MPI_STATUSES_IGNORE for an empty array. */
    MPI_Status* statuses = malloc(sizeof(MPI_Status) * (size_t)(indegree + outdegree + 1));
    MPI_Waitall(indegree + outdegree, requests, statuses);
    free(statuses);
    free(requests);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0, status = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: %s PATTERN_DIR [COUNT]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    const int count = argc > 2 ? atoi(argv[2]) : 4;

    /* Load on the plain communicator first to learn the neighborhood... */
    nbr_pattern_t pattern = NULL;
    int err = nbr_load_pattern(argv[1], MPI_COMM_WORLD, &pattern);
    if (err != NBR_SUCCESS) {
        if (rank == 0) fprintf(stderr, "replay_check: %s: %s\n", nbr_strerror(err), nbr_last_error());
        MPI_Finalize();
        return 1;
    }
    int indegree = 0, outdegree = 0;
    nbr_pattern_neighbors_count(pattern, &indegree, &outdegree);
    int* sources = malloc(sizeof(int) * (size_t)(indegree + 1));
    int* destinations = malloc(sizeof(int) * (size_t)(outdegree + 1));
    nbr_pattern_neighbors(pattern, indegree, sources, outdegree, destinations);

    /* ...then build the application's dist-graph communicator and load it there too
       (this checks that the communicator's neighbors are the pattern's). */
    MPI_Comm graph;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, indegree, sources, MPI_UNWEIGHTED, outdegree, destinations,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
    nbr_pattern_t on_graph = NULL;
    err = nbr_load_pattern(argv[1], graph, &on_graph);
    if (err != NBR_SUCCESS) {
        if (rank == 0) fprintf(stderr, "replay_check: %s: %s\n", nbr_strerror(err), nbr_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    const size_t in_ints = (size_t)indegree * (size_t)count + 1;
    int* send = malloc(sizeof(int) * ((size_t)(outdegree + 1) * (size_t)count));
    int* got = malloc(sizeof(int) * in_ints);
    int* want = malloc(sizeof(int) * in_ints);
    long bad_blocks = 0;

    /* Allgather: block i must be in-neighbor i's buffer, and equal MPI's result. */
    for (int i = 0; i < count; ++i) send[i] = value(rank, 0, i);
    memset(got, 0xff, sizeof(int) * in_ints);
    memset(want, 0xff, sizeof(int) * in_ints);
    nbr_neighbor_allgather(send, count, MPI_INT, got, count, MPI_INT, on_graph);
    MPI_Neighbor_allgather(send, count, MPI_INT, want, count, MPI_INT, graph);
    for (int b = 0; b < indegree; ++b) {
        int ok = memcmp(got + (size_t)b * count, want + (size_t)b * count, sizeof(int) * (size_t)count) == 0;
        for (int i = 0; i < count; ++i) ok = ok && got[(size_t)b * count + i] == value(sources[b], 0, i);
        bad_blocks += !ok;
    }

    /* Alltoall: block j of the sender goes to its out-neighbor j. */
    for (int j = 0; j < outdegree; ++j)
        for (int i = 0; i < count; ++i) send[(size_t)j * count + i] = value(rank, j + 1, i);
    memset(got, 0xff, sizeof(int) * in_ints);
    memset(want, 0xff, sizeof(int) * in_ints);
    nbr_neighbor_alltoall(send, count, MPI_INT, got, count, MPI_INT, pattern);
    reference_alltoall(send, want, count, sources, indegree, destinations, outdegree, graph);
    for (int b = 0; b < indegree; ++b) {
        bad_blocks += memcmp(got + (size_t)b * count, want + (size_t)b * count, sizeof(int) * (size_t)count) != 0;
    }

    long total_bad = 0, total_blocks = 0, blocks = 2L * indegree;
    MPI_Reduce(&bad_blocks, &total_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&blocks, &total_blocks, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        const char* algorithm = "";
        nbr_pattern_algorithm(pattern, &algorithm);
        if (total_bad == 0) {
            printf("replay_check: OK %s (%s): %d ranks, %ld blocks of %d ints checked (allgather + alltoall)\n",
                   argv[1], algorithm, size, total_blocks, count);
        } else {
            printf("replay_check: FAILED %s: %ld of %ld blocks differ\n", argv[1], total_bad, total_blocks);
        }
    }
    status = total_bad == 0 ? 0 : 1;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);

    free(send);
    free(got);
    free(want);
    free(sources);
    free(destinations);
    nbr_pattern_free(&on_graph);
    nbr_pattern_free(&pattern);
    MPI_Comm_free(&graph);
    MPI_Finalize();
    return status;
}

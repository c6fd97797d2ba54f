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

/* A rank's neighborhood as the pattern gives it, and buffers for COUNT ints per block. */
struct Check {
    int rank, count, indegree, outdegree;
    int *sources, *destinations;
    int *send, *got, *want;
    size_t in_ints;
};

static void check_init(struct Check* c, nbr_pattern_t pattern, int rank, int count) {
    c->rank = rank;
    c->count = count;
    nbr_pattern_neighbors_count(pattern, &c->indegree, &c->outdegree);
    c->sources = malloc(sizeof(int) * (size_t)(c->indegree + 1));
    c->destinations = malloc(sizeof(int) * (size_t)(c->outdegree + 1));
    nbr_pattern_neighbors(pattern, c->indegree, c->sources, c->outdegree, c->destinations);
    c->in_ints = (size_t)c->indegree * (size_t)count + 1;
    c->send = malloc(sizeof(int) * ((size_t)(c->outdegree + 1) * (size_t)count));
    c->got = malloc(sizeof(int) * c->in_ints);
    c->want = malloc(sizeof(int) * c->in_ints);
}

static void check_free(struct Check* c) {
    free(c->send);
    free(c->got);
    free(c->want);
    free(c->sources);
    free(c->destinations);
}

static void clear_received(struct Check* c) {
    memset(c->got, 0xff, sizeof(int) * c->in_ints);
    memset(c->want, 0xff, sizeof(int) * c->in_ints);
}

static int same_block(const struct Check* c, int b) {
    const size_t at = (size_t)b * (size_t)c->count;
    return memcmp(c->got + at, c->want + at, sizeof(int) * (size_t)c->count) == 0;
}

/* Allgather: block i must be in-neighbor i's buffer, and equal MPI's result. Returns the bad blocks. */
static long check_allgather(struct Check* c, nbr_pattern_t pattern, MPI_Comm graph) {
    const int count = c->count;
    for (int i = 0; i < count; ++i) c->send[i] = value(c->rank, 0, i);
    clear_received(c);
    nbr_neighbor_allgather(c->send, count, MPI_INT, c->got, count, MPI_INT, pattern);
    MPI_Neighbor_allgather(c->send, count, MPI_INT, c->want, count, MPI_INT, graph);
    long bad = 0;
    for (int b = 0; b < c->indegree; ++b) {
        int ok = same_block(c, b);
        for (int i = 0; i < count; ++i) ok = ok && c->got[(size_t)b * count + i] == value(c->sources[b], 0, i);
        bad += !ok;
    }
    return bad;
}

/* Alltoall: block j of the sender goes to its out-neighbor j. Returns the bad blocks. */
static long check_alltoall(struct Check* c, nbr_pattern_t pattern, MPI_Comm graph) {
    const int count = c->count;
    for (int j = 0; j < c->outdegree; ++j)
        for (int i = 0; i < count; ++i) c->send[(size_t)j * count + i] = value(c->rank, j + 1, i);
    clear_received(c);
    nbr_neighbor_alltoall(c->send, count, MPI_INT, c->got, count, MPI_INT, pattern);
    reference_alltoall(c->send, c->want, count, c->sources, c->indegree, c->destinations, c->outdegree, graph);
    long bad = 0;
    for (int b = 0; b < c->indegree; ++b) bad += !same_block(c, b);
    return bad;
}

/* Rank 0 prints the outcome over all ranks; every rank returns the exit status. */
static int report(const struct Check* c, long bad_blocks, nbr_pattern_t pattern, const char* dir, int size) {
    long total_bad = 0, total_blocks = 0, blocks = 2L * c->indegree;
    MPI_Reduce(&bad_blocks, &total_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&blocks, &total_blocks, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (c->rank == 0) {
        const char* algorithm = "";
        nbr_pattern_algorithm(pattern, &algorithm);
        if (total_bad == 0) {
            printf("replay_check: OK %s (%s): %d ranks, %ld blocks of %d ints checked (allgather + alltoall)\n", dir,
                   algorithm, size, total_blocks, c->count);
        } else {
            printf("replay_check: FAILED %s: %ld of %ld blocks differ\n", dir, total_bad, total_blocks);
        }
    }
    int status = total_bad == 0 ? 0 : 1;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
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
    struct Check c;
    check_init(&c, pattern, rank, count);

    /* ...then build the application's dist-graph communicator and load it there too
       (this checks that the communicator's neighbors are the pattern's). */
    MPI_Comm graph;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, c.indegree, c.sources, MPI_UNWEIGHTED, c.outdegree, c.destinations,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
    nbr_pattern_t on_graph = NULL;
    err = nbr_load_pattern(argv[1], graph, &on_graph);
    if (err != NBR_SUCCESS) {
        if (rank == 0) fprintf(stderr, "replay_check: %s: %s\n", nbr_strerror(err), nbr_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    const long bad_blocks = check_allgather(&c, on_graph, graph) + check_alltoall(&c, pattern, graph);
    const int status = report(&c, bad_blocks, pattern, argv[1], size);

    check_free(&c);
    nbr_pattern_free(&on_graph);
    nbr_pattern_free(&pattern);
    MPI_Comm_free(&graph);
    MPI_Finalize();
    return status;
}

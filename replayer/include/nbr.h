/*
 * nbr.h - replay precompiled neighborhood-collective patterns (libnbr).
 *
 * A pattern directory written by `nbrc compile` holds one file per rank. At job start
 * every rank calls nbr_load_pattern (collective), then replays the pattern with
 * nbr_neighbor_allgather / nbr_neighbor_alltoall (same arguments as the MPI calls, plus
 * the pattern) or their persistent forms.
 *
 * Conventions (as hwloc): functions return 0 (NBR_SUCCESS) or a negative NBR_ERR_* code;
 * nbr_strerror() names a code and nbr_last_error() describes the calling thread's last
 * failure in detail (file, rank, position). Whoever allocates frees: patterns with
 * nbr_pattern_free, requests with nbr_request_free, both before MPI_Finalize.
 * `flags` arguments are reserved for future use and must be 0.
 */
#ifndef NBR_H
#define NBR_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NBR_VERSION_MAJOR 0
#define NBR_VERSION_MINOR 1
#define NBR_VERSION_PATCH 0
/** Version of this header: (major << 16) | (minor << 8) | patch. */
#define NBR_API_VERSION ((NBR_VERSION_MAJOR << 16) | (NBR_VERSION_MINOR << 8) | NBR_VERSION_PATCH)

/** Error codes. */
#define NBR_SUCCESS 0
#define NBR_ERR_ARG (-1)           /**< invalid argument (NULL pointer, bad count, flags != 0) */
#define NBR_ERR_IO (-2)            /**< pattern file missing or unreadable */
#define NBR_ERR_CORRUPT (-3)       /**< pattern file malformed or truncated */
#define NBR_ERR_VERSION (-4)       /**< pattern format missing or newer than this library */
#define NBR_ERR_CHECKSUM (-5)      /**< rank file does not match the manifest's checksum */
#define NBR_ERR_COMM_SIZE (-6)     /**< communicator size differs from the pattern's ranks */
#define NBR_ERR_RANK (-7)          /**< rank file holds another rank's pattern */
#define NBR_ERR_TOPOLOGY_HASH (-8) /**< rank file and manifest describe different topologies */
#define NBR_ERR_NEIGHBORS (-9)     /**< communicator's neighbors differ from the pattern's */
#define NBR_ERR_PATTERN (-10)      /**< schedule inconsistent (item never received, edge missed) */
#define NBR_ERR_DATATYPE (-11)     /**< send and receive type signatures differ in size */
#define NBR_ERR_MPI (-12)          /**< an MPI call failed */
#define NBR_ERR_NOMEM (-13)        /**< out of memory */
#define NBR_ERR_REMOTE (-14)       /**< another rank of the communicator failed (see nbr_last_error) */
#define NBR_ERR_UNSUPPORTED (-15)  /**< communicator kind not supported (cartesian topology) */
#define NBR_ERR_STATE (-16)        /**< request already active / not active */
#define NBR_ERR_INTERNAL (-17)     /**< bug in libnbr */

/** Opaque handle of a loaded pattern. */
typedef struct nbr_pattern_s* nbr_pattern_t;
/** Opaque handle of a persistent collective request. */
typedef struct nbr_request_s* nbr_request_t;

/** Version of the library actually linked (compare with NBR_API_VERSION). */
unsigned nbr_get_api_version(void);

/** Short description of an error code. Never NULL. */
const char* nbr_strerror(int error);

/** Detailed message of the calling thread's last failure ("" if none). Never NULL. */
const char* nbr_last_error(void);

/**
 * Loads a pattern directory for `comm`. Collective over comm.
 *
 * Each rank reads the manifest and only its own rank file, checks format version,
 * checksum, topology hash, communicator size and rank and, when comm has a dist-graph
 * (or graph) topology, that MPI_Dist_graph_neighbors lists exactly the pattern's
 * neighbors in the same order; that order decides the buffer layout. On a plain
 * communicator the pattern's lists define the neighborhood (see nbr_pattern_neighbors).
 * If any rank fails, every rank returns an error (NBR_ERR_REMOTE on the others) and
 * *pattern is left NULL. The pattern keeps a private duplicate of comm.
 */
int nbr_load_pattern(const char* dir, MPI_Comm comm, nbr_pattern_t* pattern);

/** Frees a pattern (local; call before MPI_Finalize) and sets *pattern to NULL. */
int nbr_pattern_free(nbr_pattern_t* pattern);

/** Number of in- and out-neighbors of the calling rank (as MPI_Dist_graph_neighbors_count). */
int nbr_pattern_neighbors_count(nbr_pattern_t pattern, int* indegree, int* outdegree);

/** The calling rank's neighbors in buffer order (as MPI_Dist_graph_neighbors). */
int nbr_pattern_neighbors(nbr_pattern_t pattern, int maxindegree, int sources[], int maxoutdegree, int destinations[]);

/** Name of the algorithm that built the pattern ("naive", ...); owned by the pattern. */
int nbr_pattern_algorithm(nbr_pattern_t pattern, const char** name);

/** Replays MPI_Neighbor_allgather on the pattern: block i of recvbuf comes from in-neighbor i. */
int nbr_neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, nbr_pattern_t pattern);

/** Replays MPI_Neighbor_alltoall: block j of sendbuf goes to out-neighbor j. */
int nbr_neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, nbr_pattern_t pattern);

/**
 * Persistent forms: collective over the pattern's communicator; the request owns a
 * private communicator, so several requests and blocking calls may be in flight together.
 * Buffers are bound at init; start with nbr_start, complete with nbr_wait or nbr_test.
 */
int nbr_neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype, nbr_pattern_t pattern, unsigned long flags,
                                nbr_request_t* request);
int nbr_neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype, nbr_pattern_t pattern, unsigned long flags,
                               nbr_request_t* request);

/** Starts a persistent request (it must not be active). */
int nbr_start(nbr_request_t request);
/** Drives a started request to completion. */
int nbr_wait(nbr_request_t request);
/** Makes progress; *flag becomes 1 when the request completed. */
int nbr_test(nbr_request_t request, int* flag);
/** Frees an inactive request and sets *request to NULL. */
int nbr_request_free(nbr_request_t* request);

#ifdef __cplusplus
}
#endif

#endif /* NBR_H */

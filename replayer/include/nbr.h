/*
 * nbr.h - replay precompiled neighborhood-collective patterns (libnbr).
 *
 * A pattern directory written by `nbrc compile` holds one file per rank. At job start
 * every rank calls nbr_load_pattern (collective), then replays the pattern with the
 * neighborhood collectives of MPI-4.1 section 8.6 - allgather, alltoall, allgatherv,
 * alltoallv and alltoallw, each blocking (nbr_neighbor_*), nonblocking (nbr_ineighbor_*) and persistent
 * (nbr_neighbor_*_init) - with the MPI call's arguments plus the pattern. Every rank of the
 * communicator calls the collectives of a pattern in the same order, as MPI requires.
 *
 * Requests: nonblocking calls and nbr_start start a request; nbr_wait, nbr_test,
 * nbr_waitall and nbr_testall complete it. Any number of requests may be outstanding, on
 * one pattern or several, and complete in any order: every nbr call that waits or tests
 * progresses all started requests of the process, so peers waiting in another order are
 * never starved. As in MPI, the completion calls take the request by pointer, and completing
 * a NONBLOCKING request releases it and sets the caller's handle to NBR_REQUEST_NULL. A
 * PERSISTENT request stays allocated and inactive until nbr_request_free. Waiting on
 * NBR_REQUEST_NULL or on an inactive persistent request returns at once. Handles are not
 * addresses: a copy of a released handle stays invalid (NBR_ERR_ARG) even after new requests
 * or patterns have been created, and is never mistaken for one of them.
 *
 * Arguments are checked before any communication: negative counts, MPI_DATATYPE_NULL and
 * derived datatypes not committed (probed by packing zero elements), MPI_IN_PLACE (not
 * allowed in neighborhood collectives), NULL counts or displacements arrays where the rank
 * has neighbors, a NULL buffer that would carry data with a
 * predefined datatype (derived ones may address absolutely from MPI_BOTTOM), nonzero flags,
 * and pattern or request handles that are NULL, freed, released or stale all return NBR_ERR_ARG
 * with nbr_last_error() naming the argument. Since the check is local, a call that is
 * erroneous on some ranks only leaves the others waiting, as in MPI.
 *
 * Fixed-size calls (allgather, alltoall) move blocks of one size: where the rank has
 * neighbors both ways its send and receive blocks must have the same byte size
 * (NBR_ERR_DATATYPE); as in MPI, the count of a side without neighbors is free and the other
 * side's is used. A rank with no neighbors at all may pass any counts (0 on both sides, as
 * mpi4py does for empty buffers): on a communicator with such a rank, no fixed-size call runs a
 * variant that routes blocks through it, none is handed to MPI's own collective unless every
 * size would be (naive's schedule in every band, no trials choosing), and it takes no part in
 * measuring fixed-size calls (docs/architecture.md, "Block sizes of the fixed-size
 * collectives").
 *
 * Threads. libnbr needs what MPI needs for the same calls: with MPI_THREAD_MULTIPLE, calls on
 * DIFFERENT patterns (and their requests) may run concurrently from different threads; calls
 * on ONE pattern and its requests must be serialized by the application, as must the
 * collective calls of MPI itself on one communicator. Completion calls may name requests of
 * several patterns: such a call counts as a call on each of them. Below MPI_THREAD_MULTIPLE,
 * one thread at a time calls libnbr (FUNNELED: the main thread). The process-wide state that
 * calls on different patterns share (the handle tables and the progress of started requests)
 * is safe for that: locked where it changes, read without a lock where every call reads it
 * (handle lookups); nbr_last_error() is per thread.
 *
 * Conventions (as hwloc): functions return 0 (NBR_SUCCESS) or a negative NBR_ERR_* code;
 * nbr_strerror() names a code and nbr_last_error() describes the calling thread's last
 * failure in detail (file, rank, position). Whoever allocates frees: patterns with
 * nbr_pattern_free, requests with nbr_request_free, both before MPI_Finalize.
 * `flags` arguments take the NBR_* flags documented with each function; bits not defined
 * there are an error (NBR_ERR_ARG), so that later versions can give them a meaning.
 *
 * Environment: libnbr itself reads no environment variable; the drop-in library
 * (libnbr-preload) and the capture library do (docs/environment.md lists every one).
 */
#ifndef NBR_H
#define NBR_H

#include <mpi.h>
#include <stddef.h> /* size_t */

#ifdef __cplusplus
extern "C" {
#endif

/* NBR_VERSION_MAJOR, _MINOR, _PATCH and NBR_VERSION_STRING: generated from the project's
 * version by the build (CMake's project(VERSION)). */
#include "nbr_version.h"
/** Version of this header: (major << 16) | (minor << 8) | patch. */
#define NBR_API_VERSION ((NBR_VERSION_MAJOR << 16) | (NBR_VERSION_MINOR << 8) | NBR_VERSION_PATCH)

/** Error codes. */
#define NBR_SUCCESS 0
#define NBR_ERR_ARG (-1)           /**< invalid argument (NULL pointer, bad count, flags != 0) */
#define NBR_ERR_IO (-2)            /**< a file (pattern, wisdom, cache) missing, unreadable or not writable */
#define NBR_ERR_CORRUPT (-3)       /**< a pattern or wisdom file malformed or truncated */
#define NBR_ERR_VERSION (-4)       /**< a file's format version missing or newer than this library */
#define NBR_ERR_CHECKSUM (-5)      /**< rank file does not match the manifest's checksum */
#define NBR_ERR_COMM_SIZE (-6)     /**< communicator size differs from the pattern's ranks */
#define NBR_ERR_RANK (-7)          /**< rank file holds another rank's pattern */
#define NBR_ERR_TOPOLOGY_HASH (-8) /**< rank file and manifest describe different topologies */
#define NBR_ERR_NEIGHBORS (-9)     /**< communicator's neighbors differ from the pattern's */
#define NBR_ERR_PATTERN (-10)      /**< schedule inconsistent (item never received, edge missed) */
#define NBR_ERR_DATATYPE (-11)     /**< send and receive blocks of an edge differ in size */
#define NBR_ERR_MPI (-12)          /**< an MPI call failed */
#define NBR_ERR_NOMEM (-13)        /**< out of memory */
#define NBR_ERR_REMOTE (-14)       /**< another rank of the communicator failed (see nbr_last_error) */
#define NBR_ERR_UNSUPPORTED (-15)  /**< communicator a pattern cannot describe (see nbr_load_pattern) */
#define NBR_ERR_STATE (-16)        /**< request already active / not active */
#define NBR_ERR_INTERNAL (-17)     /**< bug in libnbr */
#define NBR_ERR_MIXED (-18)        /**< directory mixes files of different compiles */
#define NBR_ERR_BUILD (-19)        /**< nbr_pattern_build: the in-job build failed (see nbr_last_error) */
#define NBR_ERR_DECLINED (-20)     /**< nbr_pattern_build: not built, not worth it for this topology */

/** Opaque handle of a loaded pattern (a value that names it, not an address). */
typedef struct nbr_pattern_s* nbr_pattern_t;
/** Opaque handle of a started collective: persistent or nonblocking. */
typedef struct nbr_request_s* nbr_request_t;
/** The handles that name nothing (what release and failed creation leave behind). */
#ifdef __cplusplus
#define NBR_PATTERN_NULL nullptr
#define NBR_REQUEST_NULL nullptr
#else
#define NBR_PATTERN_NULL ((nbr_pattern_t)0)
#define NBR_REQUEST_NULL ((nbr_request_t)0)
#endif

/** Flags of nbr_load_pattern_flags. */
#define NBR_LOAD_NO_NATIVE 0x1UL /**< every call on nbr's engine: never hand off to the native collective */
#define NBR_LOAD_MEASURE 0x2UL   /**< measured selection: time the candidates kept, run the fastest (see below) */
/** For benchmarks: a send of the pattern's step t also waits for every receive of the rank's
 * earlier steps (the step-synchronized rule of round-based libraries), instead of leaving as
 * soon as the receives that feed it are in. Slower or equal; exists to measure the difference. */
#define NBR_LOAD_STEP_SYNC 0x4UL
/** Statistics without measurement: every call shape is counted and one call in 16 timed, for
 * nbr_pattern_shape_stats (what the drop-in's report prints), while each call runs the
 * variant the pattern chose for it (state NBR_SHAPE_MODEL; a single-variant pattern's shapes
 * NBR_SHAPE_SINGLE). No trials, no agreements, no wisdom, no communication of its own; a few
 * nanoseconds per call. Implied by NBR_LOAD_MEASURE. */
#define NBR_LOAD_STATS 0x8UL

/** Version of the library actually linked (compare with NBR_API_VERSION). */
unsigned nbr_get_api_version(void);

/** Short description of an error code. Never NULL. */
const char* nbr_strerror(int error);

/** Detailed message of the calling thread's last failure ("" if none). Never NULL. */
const char* nbr_last_error(void);

/**
 * Loads a pattern directory for `comm`. Collective over comm. A variant of an auto directory
 * is a pattern of its own at DIR/NAME (a segmented copy too, though it has no directory).
 *
 * Each rank reads the manifest and only its own rank file, checks format version,
 * checksum, topology hash, communicator size and rank and, when comm has a topology, that
 * MPI lists exactly the pattern's neighbors in the same order (dist-graph: as
 * MPI_Dist_graph_neighbors; graph: the neighbor list both ways; Cartesian: per dimension the
 * negative then the positive neighbor, MPI_PROC_NULL left out); that order decides the buffer
 * layout. On a Cartesian communicator the collectives take MPI's buffers, MPI_PROC_NULL slots
 * included (never read or written), and in a periodic dimension of extent 1 or 2 deliver the
 * block sent towards the negative neighbor into that neighbor's positive slot, as MPI-4.1
 * defines (docs/format.md, Cartesian communicators); nbr_pattern_neighbors_count counts real
 * neighbors only. On a plain
 * communicator the pattern's lists define the neighborhood (see nbr_pattern_neighbors).
 * If any rank fails, a NULL pattern pointer or directory included, every rank returns an error
 * (NBR_ERR_REMOTE on the others) and *pattern is left NULL; MPI_COMM_NULL on some ranks only
 * cannot be told to the others. The pattern keeps a private duplicate of comm.
 *
 * When comm has the pattern's topology and a collective's pattern is MPI's naive schedule on
 * every rank (one direct message per edge), blocking calls of that collective run the native
 * MPI_Neighbor_* on the private duplicate: the same messages without the cost of posting them
 * through MPI's public API; so do persistent fixed-size requests of it with blocks of 512
 * bytes or more (the native persistent collective). The choice depends on the pattern only,
 * so every rank makes the same one; since the native collective progresses none of nbr's
 * requests, a blocking call that hands off first completes the requests the process has
 * started. nbr_load_pattern_flags with NBR_LOAD_NO_NATIVE keeps every call on nbr's engine.
 */
int nbr_load_pattern(const char* dir, MPI_Comm comm, nbr_pattern_t* pattern);

/**
 * nbr_load_pattern with flags (collective; every rank must pass the same flags):
 * any of NBR_LOAD_NO_NATIVE, NBR_LOAD_MEASURE, NBR_LOAD_STEP_SYNC, NBR_LOAD_STATS. Other bits are
 * NBR_ERR_ARG. NBR_LOAD_NO_NATIVE or NBR_LOAD_MEASURE on some ranks only is NBR_ERR_ARG on every
 * rank (their calls would wait for each other); NBR_LOAD_STATS and NBR_LOAD_STEP_SYNC may differ.
 *
 * NBR_LOAD_MEASURE: measured selection. For every call shape the application uses - a
 * collective (v or not) in one mode (blocking, nonblocking, persistent) and, for fixed-size
 * calls, a size band of the pattern and a power-of-two class of block sizes inside it - the
 * candidates the directory keeps (`nbrc compile --algo auto --keep K`: the model's winner, its
 * next fastest, naive) are timed in the shape's first calls, in rounds of an untimed call then
 * two timed ones of each candidate (their mean one sample; a blocking shape's turn starts after
 * a barrier on the pattern's communicator). After the second round the ranks
 * agree (one MPI_Iallreduce on the pattern's communicator: per candidate the slowest rank's
 * median and interquartile range and the least sample count) and drop candidates over 1.5x the
 * fastest. After the fifth round, and every fifth after it, they agree again: the candidates
 * told apart from the fastest (even at the ends of the medians' 95 % intervals, median +- 1.58
 * IQR / sqrt(samples), the fastest is at most 3 % slower) leave; the fastest is chosen when it
 * is the last, or after the twentieth round (then, among the candidates whose medians are at
 * most 3 % above it, naive if it is one of them, else the first in the model's order: a
 * difference that small decides nothing; where some node runs more of the communicator's
 * ranks than the logical CPUs their affinity masks allow, naive whenever it is still a
 * candidate: single calls timed on shared cores rank the candidates by the scheduler); every
 * later call of the shape runs the choice.
 * The schedule depends only on the shape's call count and the agreed results, so all ranks run
 * the same candidate in every call, whatever each measured. Blocking calls agree inside the
 * call; nonblocking and persistent shapes start the agreement with a call and use it four calls
 * later (meanwhile running the model's winner), so a start waits for the other ranks only when
 * the application keeps more than four calls of one shape in flight. Nonblocking and
 * persistent calls are timed from the start to the progress that finds them complete (work the
 * application overlaps with them counts alike for every candidate). A shape called fewer times
 * than its trials need keeps trying; the model's winner is then the usual choice. Trials
 * unfinished when the pattern is freed go on in the next pattern the process loads with
 * NBR_LOAD_MEASURE from the same compile for the same communicator size and rank on the same
 * machine (an application that creates its topology communicator anew for every solve), when
 * every rank carries the same trials (nbr_pattern_wisdom says so); else they start anew. Patterns of
 * one variant, and shapes with one candidate, have nothing to try: their calls are only counted
 * and timed. Wisdom (nbr_wisdom_import) for the pattern, its communicator size and this machine
 * decides shapes without trials; the ranks check that they found the same. Statistics:
 * nbr_pattern_shape_count, nbr_pattern_shape_stats. Measured patterns never hand blocking
 * calls off before the tuner has seen them (a few tens of nanoseconds per call).
 */
int nbr_load_pattern_flags(const char* dir, MPI_Comm comm, unsigned long flags, nbr_pattern_t* pattern);

/**
 * Finds or builds the pattern of a topology communicator in the job (collective over comm; every
 * rank passes the same cache directory, info and flags). The cache directory (created if
 * missing; it must be shared by the ranks, e.g. on a parallel file system) holds one pattern
 * directory per topology, placement and build options. On a hit the entry is loaded as by
 * nbr_load_pattern_flags. On a miss the compiler's engine runs on the communicator's processes,
 * one virtual rank each, with the real placement (nodes from MPI_Comm_split_type(
 * MPI_COMM_TYPE_SHARED), sockets from where the processes are bound), and writes what
 * `nbrc compile` writes for that topology, placement and options, but for the manifest's source
 * ("built in the job by libnbr"); the files appear under the entry's name only when complete,
 * and when two jobs build one entry at once the first to finish is kept. An entry that does not
 * load is removed and built again. After storing, the least recently used entries go until the
 * cache fits its limit.
 *
 * info (MPI_INFO_NULL for the defaults): "nbr_algo" = "default" (auto over common-neighbor,
 * distance-halving and hierarchical, never slower than naive in the model), "auto" (every
 * candidate) or an `nbrc compile --algo` name; "nbr_machine" = auto's model (preset or file,
 * default "niagara"); "nbr_ranks_per_node", "nbr_ranks_per_socket" = a block placement instead
 * of the detected one; "nbr_budget" = seconds the candidates' builds may take (default 30;
 * candidates not started by then are left out, naive always built); "nbr_keep" = candidates kept
 * per band (default 1, 3 with NBR_LOAD_MEASURE); "nbr_cache_limit" = bytes the cache may hold
 * (suffix K, M or G; default 1G; 0: no limit).
 *
 * Errors: NBR_ERR_UNSUPPORTED (a plain communicator: see nbr_pattern_build_adjacent),
 * NBR_ERR_DECLINED (every rank has at most two neighbors each way: MPI's naive schedule is best;
 * nothing is stored), NBR_ERR_ARG (a bad info value, or a rank that passed a NULL pattern
 * pointer or another cache directory, info value or NBR_LOAD_MEASURE/NBR_LOAD_NO_NATIVE than
 * rank 0: on every rank, naming it), NBR_ERR_BUILD (the build failed), and nbr_load_pattern's.
 * How the pattern came to be: nbr_pattern_origin.
 */
int nbr_pattern_build(MPI_Comm comm, const char* cache_dir, MPI_Info info, unsigned long flags, nbr_pattern_t* pattern);

/**
 * nbr_pattern_build with the neighborhood given, as MPI_Dist_graph_create_adjacent takes it
 * (every rank its in- and out-neighbors, ranks of comm, in buffer order): for a plain
 * communicator, whose pattern then defines the neighborhood (nbr_pattern_neighbors), or a
 * topology communicator whose lists these must equal. Lists of the ranks that disagree (an
 * edge one rank lists and its other end does not) are NBR_ERR_NEIGHBORS on every rank.
 */
int nbr_pattern_build_adjacent(MPI_Comm comm, int indegree, const int sources[], int outdegree,
                               const int destinations[], const char* cache_dir, MPI_Info info, unsigned long flags,
                               nbr_pattern_t* pattern);

/**
 * Where the pattern came from (local; strings owned by the pattern): its directory, and a note:
 * "loaded", "loaded from the cache", or "built in S s (variants) and cached" with what the
 * budget left out and whether a corrupt entry was replaced.
 */
int nbr_pattern_origin(nbr_pattern_t pattern, const char** dir, const char** note);

/**
 * Frees a pattern (call before MPI_Finalize) and sets *pattern to NBR_PATTERN_NULL. Fails with
 * NBR_ERR_STATE while persistent requests or incomplete nonblocking requests use it. Local,
 * except that a pattern loaded with NBR_LOAD_MEASURE completes the agreements its trials have in
 * flight (every rank started them, and each waits for the others' progress) before it keeps the
 * unfinished trials for the pattern's next communicator (nbr_load_pattern_flags).
 */
int nbr_pattern_free(nbr_pattern_t* pattern);

/**
 * Completes the agreements a pattern loaded with NBR_LOAD_MEASURE has in flight, as
 * nbr_pattern_free does, so that nbr_pattern_shape_stats and nbr_pattern_shape_decision show
 * what they decided before the pattern is freed (a report taken at the end of a communicator).
 * Collective over the pattern's communicator when an agreement is in flight (every rank has the
 * same ones); else, and for other patterns, nothing.
 */
int nbr_pattern_settle(nbr_pattern_t pattern);

/** Number of in- and out-neighbors of the calling rank (as MPI_Dist_graph_neighbors_count). */
int nbr_pattern_neighbors_count(nbr_pattern_t pattern, int* indegree, int* outdegree);

/** The calling rank's neighbors in buffer order (as MPI_Dist_graph_neighbors). */
int nbr_pattern_neighbors(nbr_pattern_t pattern, int maxindegree, int sources[], int maxoutdegree, int destinations[]);

/** Name of the algorithm that built the pattern ("naive", ..., or "auto" for a directory that
 *  `nbrc compile --algo auto` wrote); owned by the pattern. */
int nbr_pattern_algorithm(nbr_pattern_t pattern, const char** name);

/** The collectives, for nbr_pattern_variant. */
typedef enum { NBR_ALLGATHER = 0, NBR_ALLTOALL = 1, NBR_ALLGATHERV = 2, NBR_ALLTOALLV = 3 } nbr_collective_t;

/**
 * Name of the variant a call runs (owned by the pattern): an auto pattern's variant as its
 * manifest names it (`nbrc inspect` lists them, e.g. "hierarchical-cube-k0-seg16K"; the names
 * nbr_pattern_shape_candidate and the drop-in's report use), a single-algorithm pattern's algorithm.
 * A pattern of one algorithm has one variant; an auto pattern chooses per call:
 *  - fixed-size calls (blocking, nonblocking, persistent) by their block size in bytes
 *    (count times the type's size; `bytes`), from the size bands in the pattern;
 *  - blocking and nonblocking v-variants always run the variant the compiler chose for them
 *    (`bytes` is ignored): ranks could not agree on a size without communicating;
 *  - persistent v-variants choose once, at init, by the bands, from the mean bytes per edge
 *    over all ranks (pass that mean as `bytes` to ask with NBR_ALLGATHER or NBR_ALLTOALL).
 * Every rank of a call must pass the same block size (MPI's matching rule), ranks without
 * neighbors included, so that all run the same variant.
 */
int nbr_pattern_variant(nbr_pattern_t pattern, nbr_collective_t collective, size_t bytes, const char** name);

/** How a call was made (measured selection keeps a shape per mode). */
typedef enum { NBR_MODE_BLOCKING = 0, NBR_MODE_NONBLOCKING = 1, NBR_MODE_PERSISTENT = 2 } nbr_mode_t;

/** Where a call shape's choice stands. */
typedef enum {
    NBR_SHAPE_SINGLE = 0,   /**< one candidate: nothing to choose */
    NBR_SHAPE_TRIAL = 1,    /**< the candidates are being timed */
    NBR_SHAPE_MEASURED = 2, /**< chosen by this job's trials */
    NBR_SHAPE_WISDOM = 3,   /**< chosen by imported wisdom, no trials */
    NBR_SHAPE_MODEL = 4     /**< NBR_LOAD_STATS: the pattern's choice (the model's), not measured */
} nbr_shape_state_t;

/** What decided a measured shape's choice (nbr_pattern_shape_decision): the trials' rules, in
 *  docs/algorithms.md. */
typedef enum {
    NBR_DECISION_NONE = 0,          /**< not decided by this job's trials (state other than NBR_SHAPE_MEASURED) */
    NBR_DECISION_TOLD_APART = 1,    /**< every other candidate told apart from it as slower before the last round */
    NBR_DECISION_LOWEST_MEDIAN = 2, /**< the last round's lowest median, no candidate earlier in the model's order
                                         within the 3 % tolerance of it */
    NBR_DECISION_NAIVE_TIE = 3,     /**< naive, in a near tie (medians within the 3 % tolerance of the lowest),
                                         which goes to naive before the model's order */
    NBR_DECISION_MODEL_TIE = 4,     /**< the first in the model's order within the 3 % tolerance of the lowest */
    NBR_DECISION_SHARED_CORES = 5   /**< naive, still in contention after the last round where ranks share cores */
} nbr_decision_t;

/** What measured selection knows of one call shape (nbr_pattern_shape_stats). Times are this
 *  rank's, in microseconds. */
typedef struct {
    nbr_collective_t collective;
    nbr_mode_t mode;
    size_t min_bytes, max_bytes; /**< block sizes of the shape (fixed-size, and persistent v by their
                                      mean bytes per edge); 0 and SIZE_MAX for blocking and nonblocking v-calls
                                      (and persistent ones of a single-variant pattern under
                                      NBR_LOAD_STATS, which does not compute their mean) */
    nbr_shape_state_t state;
    const char* variant;            /**< what the shape runs (the model's winner during trials); owned by the pattern */
    int candidates;                 /**< candidates of the shape (nbr_pattern_shape_candidate) */
    unsigned long long calls;       /**< calls of the shape so far */
    unsigned long long trial_calls; /**< of them, calls of the trial phase */
    double trial_us;                /**< time in the trial phase's timed calls */
    unsigned long long after_calls; /**< calls after the choice */
    unsigned long long run_calls;   /**< of them, the timed ones (one in 16, from the first after
                                         trials, else the second; also after a blocking shape that runs
                                         MPI's collective passes its calls straight to it) */
    double run_us;                  /**< time in the timed ones */
    double naive_us;                /**< naive's agreed median per call in the trials; NaN when not measured */
    double saved_us;                /**< what the choice saved against running naive in every call, trials
                                         included, from the agreed medians: after_calls x (naive_us - the
                                         chosen's median) - sum over candidates of their trial calls x (their
                                         median - naive_us) (a shape that runs naive: minus its trials' cost);
                                         NaN in trials, for a single candidate, or when naive was not measured */
} nbr_shape_stats_t;

/** Number of call shapes the pattern has seen (0 unless loaded with NBR_LOAD_MEASURE or
 *  NBR_LOAD_STATS). Local. */
int nbr_pattern_shape_count(nbr_pattern_t pattern, int* count);
/** Statistics of shape `shape` (0 <= shape < count). Local. */
int nbr_pattern_shape_stats(nbr_pattern_t pattern, int shape, nbr_shape_stats_t* stats);
/** Which rule decided shape `shape` (NBR_DECISION_NONE unless its state is NBR_SHAPE_MEASURED;
 *  the same on every rank). Local. */
int nbr_pattern_shape_decision(nbr_pattern_t pattern, int shape, nbr_decision_t* decision);
/** Candidate `candidate` of a shape: its variant's name (owned by the pattern), the agreed median
 *  and mean time per call (slowest rank; NaN before an agreement) and the timed calls every rank
 *  had in by then. Any output pointer may be NULL. Local. */
int nbr_pattern_shape_candidate(nbr_pattern_t pattern, int shape, int candidate, const char** name, double* median_us,
                                double* mean_us, unsigned long long* samples);

/**
 * Wisdom: what measured selection found, per pattern (its compile id), communicator size,
 * machine (MPI library, processor, ranks per node; nbr version) and tag. Each process keeps the
 * wisdom it imported and what its measured patterns decided; later loads with NBR_LOAD_MEASURE
 * that find a matching entry skip the trials. Wisdom for another machine, tag or pattern is
 * passed over; an entry naming bands or variants the pattern lacks is ignored.
 */
/** What wisdom did when the pattern was loaded with NBR_LOAD_MEASURE, in one line (owned by the
 *  pattern; whether wisdom was applied is the same on every rank, a reason for passing it over
 *  is the rank's own): "wisdom applied: N shapes chosen without trials", or why
 *  wisdom was passed over (another machine, another tag, bands or variants the pattern lacks,
 *  ranks that found different entries), "no wisdom for this pattern", or "" when the process
 *  had no wisdom at all; then, after "; " where both say something, what became of trials
 *  carried from the pattern's earlier communicator: "trials of N shapes resumed from an earlier
 *  communicator of this pattern", or "ranks carry different trials from an earlier communicator
 *  of this pattern; started anew". Local. */
int nbr_pattern_wisdom(nbr_pattern_t pattern, const char** note);
/** Merges a wisdom file into the process's wisdom. Local. NBR_ERR_IO (missing, unreadable),
 *  NBR_ERR_CORRUPT, NBR_ERR_VERSION (newer than this library); on error nothing is merged. */
int nbr_wisdom_import(const char* path);
/** Writes the process's wisdom to `path` atomically (a temporary file renamed). Local. */
int nbr_wisdom_export(const char* path);
/** Collective over comm: rank 0 writes every rank's wisdom, merged, to `path`. */
int nbr_wisdom_export_all(const char* path, MPI_Comm comm);
/** Tags the wisdom this process writes and the wisdom it applies (default ""). Local. */
int nbr_wisdom_set_tag(const char* tag);
/** Forgets the process's wisdom, and the trials it carries for the next communicator of a
 *  pattern (nbr_load_pattern_flags). Local. */
int nbr_wisdom_forget(void);

/** Replays MPI_Neighbor_allgather on the pattern: block i of recvbuf comes from in-neighbor i. */
int nbr_neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, nbr_pattern_t pattern);

/** Replays MPI_Neighbor_alltoall: block j of sendbuf goes to out-neighbor j. */
int nbr_neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, nbr_pattern_t pattern);

/**
 * Replays MPI_Neighbor_allgatherv: in-neighbor i's sendcount elements land at
 * recvbuf + displs[i] * extent(recvtype) as recvcounts[i] elements of recvtype. Counts and
 * displacements are per in-neighbor in buffer order; zero counts, gaps and any order of
 * displacements are allowed. The sizes of the blocks an intermediate rank forwards travel
 * with the data: a combined message is preceded by a header of 8 bytes per block (one extra
 * small message per combined message); messages the pattern sends directly carry none.
 */
int nbr_neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, nbr_pattern_t pattern);

/**
 * Replays MPI_Neighbor_alltoallv: sendcounts[j] elements at sendbuf + sdispls[j] * extent(sendtype)
 * go to out-neighbor j; in-neighbor i's block lands at recvbuf + rdispls[i] * extent(recvtype).
 * Block sizes travel as for nbr_neighbor_allgatherv.
 */
int nbr_neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                           nbr_pattern_t pattern);

/**
 * Replays MPI_Neighbor_alltoallw: sendcounts[j] elements of sendtypes[j] at sendbuf + sdispls[j]
 * (bytes) go to out-neighbor j; in-neighbor i's block lands at recvbuf + rdispls[i] (bytes) as
 * recvcounts[i] elements of recvtypes[i]. Every block has its own datatype, derived ones
 * included; buffers may be MPI_BOTTOM with absolute displacements. Blocks a rank forwards
 * travel packed, their sizes as for nbr_neighbor_allgatherv. Entries at a Cartesian
 * communicator's MPI_PROC_NULL slots are not read.
 */
int nbr_neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], nbr_pattern_t pattern);

/**
 * Nonblocking forms: start the collective and return a request in *request, to be completed
 * by nbr_wait, nbr_test, nbr_waitall or nbr_testall (which release it). The buffers must not
 * be touched until then; counts, displacements and datatypes are copied, so the caller may
 * reuse or free them at once. Many may be outstanding on one pattern, beside blocking calls
 * and the application's own messages (nbr uses a private communicator).
 */
int nbr_ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, nbr_pattern_t pattern, nbr_request_t* request);
int nbr_ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, nbr_pattern_t pattern, nbr_request_t* request);
int nbr_ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, nbr_pattern_t pattern,
                             nbr_request_t* request);
int nbr_ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            nbr_pattern_t pattern, nbr_request_t* request);
int nbr_ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], nbr_pattern_t pattern,
                            nbr_request_t* request);

/**
 * Persistent forms: collective over the pattern's communicator; the request owns a
 * private communicator, so several requests and blocking calls may be in flight together.
 * Buffers, counts and displacements are bound at init (arrays and datatypes are copied);
 * start with nbr_start, complete with nbr_wait, nbr_test, nbr_waitall or nbr_testall.
 * The v-variants' init replays the block sizes through the pattern once, so their starts
 * send no size headers; init fails on every rank (NBR_ERR_DATATYPE where a receive block's
 * size differs from what its origin sends, NBR_ERR_REMOTE elsewhere) if any block mismatches.
 */
int nbr_neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype, nbr_pattern_t pattern, unsigned long flags,
                                nbr_request_t* request);
int nbr_neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype, nbr_pattern_t pattern, unsigned long flags,
                               nbr_request_t* request);
int nbr_neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                 nbr_pattern_t pattern, unsigned long flags, nbr_request_t* request);
int nbr_neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                                void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                                nbr_pattern_t pattern, unsigned long flags, nbr_request_t* request);
int nbr_neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], nbr_pattern_t pattern,
                                unsigned long flags, nbr_request_t* request);

/*
 * Large-count forms (MPI-4.1 section 8.6's _c bindings): the same collectives with counts as
 * MPI_Count and displacements as MPI_Aint, so that one block may exceed INT_MAX elements or
 * bytes. Declared where the MPI library has MPI-4's large-count functions (NBR_HAVE_LARGE_COUNT
 * is then 1; MPICH 4, not Open MPI 4.1). Every block's byte size must be addressable (checked
 * before anything is allocated). Blocks and combined messages above INT_MAX move with MPI's
 * large-count point-to-point and packing functions.
 */
#if defined(MPI_VERSION) && MPI_VERSION >= 4
#define NBR_HAVE_LARGE_COUNT 1
#else
#define NBR_HAVE_LARGE_COUNT 0
#endif
#if NBR_HAVE_LARGE_COUNT
int nbr_neighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern);
int nbr_neighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern);
int nbr_neighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                              nbr_pattern_t pattern);
int nbr_neighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[], MPI_Datatype recvtype, nbr_pattern_t pattern);
int nbr_neighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], nbr_pattern_t pattern);
int nbr_ineighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern,
                              nbr_request_t* request);
int nbr_ineighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern, nbr_request_t* request);
int nbr_ineighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                               nbr_pattern_t pattern, nbr_request_t* request);
int nbr_ineighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], MPI_Datatype recvtype, nbr_pattern_t pattern,
                              nbr_request_t* request);
int nbr_ineighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], nbr_pattern_t pattern,
                              nbr_request_t* request);
int nbr_neighbor_allgather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  MPI_Count recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern,
                                  unsigned long flags, nbr_request_t* request);
int nbr_neighbor_alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 MPI_Count recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern, unsigned long flags,
                                 nbr_request_t* request);
int nbr_neighbor_allgatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                   nbr_pattern_t pattern, unsigned long flags, nbr_request_t* request);
int nbr_neighbor_alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                  MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint rdispls[], MPI_Datatype recvtype, nbr_pattern_t pattern,
                                  unsigned long flags, nbr_request_t* request);
int nbr_neighbor_alltoallw_init_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                  const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], nbr_pattern_t pattern,
                                  unsigned long flags, nbr_request_t* request);
#endif

/** Starts an inactive persistent request (NBR_ERR_STATE if active or not persistent). */
int nbr_start(nbr_request_t* request);
/**
 * Completes *request, progressing every started request meanwhile. A nonblocking request is
 * released and *request set to NBR_REQUEST_NULL; an inactive persistent request, or
 * NBR_REQUEST_NULL, returns at once.
 */
int nbr_wait(nbr_request_t* request);
/**
 * Progresses every started request once; *flag becomes 1 when *request is complete (a
 * nonblocking request is then released and *request set to NBR_REQUEST_NULL, as by
 * nbr_wait), else 0. NBR_REQUEST_NULL is complete.
 */
int nbr_test(nbr_request_t* request, int* flag);
/**
 * Completes every request of requests[0..count-1]: NBR_REQUEST_NULL entries are skipped,
 * completed nonblocking requests released and their entries set to NBR_REQUEST_NULL. If some failed, all are
 * still completed and the first failure is returned (nbr_last_error names its index).
 */
int nbr_waitall(int count, nbr_request_t requests[]);
/**
 * Progresses every started request once; if all of requests[0..count-1] are complete,
 * *flag becomes 1 and they are completed as by nbr_waitall, else *flag is 0 and none is.
 */
int nbr_testall(int count, nbr_request_t requests[], int* flag);
/**
 * Frees an inactive persistent request (or a nonblocking one that completed but was never
 * waited on) and sets *request to NBR_REQUEST_NULL; NBR_ERR_STATE while the request is active.
 */
int nbr_request_free(nbr_request_t* request);

#ifdef __cplusplus
}
#endif

#endif /* NBR_H */

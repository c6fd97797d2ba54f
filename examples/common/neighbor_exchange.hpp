// The neighborhood collectives of the example applications, on a topology communicator.
//
// The ordinary build calls MPI's collectives: that is the program an application developer
// writes, which runs natively or, unmodified, under nbr's drop-in library (LD_PRELOAD). The
// `-nbr` build of the same source (NBR_EXAMPLE_API defined, linked with libnbr) adds the option
// `--nbr DIR`: the program loads the compiled pattern DIR on its communicator and calls the
// nbr_* collectives instead, which is how a developer who would rather change the code uses nbr.
#pragma once

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#ifdef NBR_EXAMPLE_API
#include "nbr.h"
#endif

namespace example {

/// Adds `--nbr DIR` (NeighborExchange's `pattern_dir`) in the -nbr build; the native build
/// has no such option.
inline void add_nbr_option(CLI::App& app, std::string& pattern_dir) {
#ifdef NBR_EXAMPLE_API
    app.add_option("--nbr", pattern_dir, "Replay with libnbr: the pattern directory nbrc compiled for this run");
#else
    (void)app;
    (void)pattern_dir;
#endif
}

class NeighborExchange {
public:
    /// `pattern_dir` empty: MPI's collectives on `comm`. Otherwise (the -nbr build only) the
    /// pattern loaded on `comm`; a failure aborts with libnbr's message.
    NeighborExchange(MPI_Comm comm, const std::string& pattern_dir) : comm_(comm) {
#ifdef NBR_EXAMPLE_API
        if (!pattern_dir.empty()) check(nbr_load_pattern(pattern_dir.c_str(), comm, &pattern_), "nbr_load_pattern");
#else
        if (!pattern_dir.empty()) fail("--nbr needs the -nbr build of this program");
#endif
    }
    NeighborExchange(const NeighborExchange&) = delete;
    NeighborExchange& operator=(const NeighborExchange&) = delete;
    ~NeighborExchange() {
#ifdef NBR_EXAMPLE_API
        if (pattern_ != NBR_PATTERN_NULL) nbr_pattern_free(&pattern_);
#endif
    }

    /// "MPI" or "nbr (ALGORITHM)".
    std::string backend() const {
#ifdef NBR_EXAMPLE_API
        if (pattern_ != NBR_PATTERN_NULL) {
            const char* name = "";
            nbr_pattern_algorithm(pattern_, &name);
            return std::string("nbr (") + name + ")";
        }
#endif
        return "MPI";
    }

    void allgather(const void* send, int count, MPI_Datatype type, void* recv) {
#ifdef NBR_EXAMPLE_API
        if (pattern_ != NBR_PATTERN_NULL) {
            return check(nbr_neighbor_allgather(send, count, type, recv, count, type, pattern_), "allgather");
        }
#endif
        MPI_Neighbor_allgather(send, count, type, recv, count, type, comm_);
    }

    void alltoall(const void* send, int count, MPI_Datatype type, void* recv) {
#ifdef NBR_EXAMPLE_API
        if (pattern_ != NBR_PATTERN_NULL) {
            return check(nbr_neighbor_alltoall(send, count, type, recv, count, type, pattern_), "alltoall");
        }
#endif
        MPI_Neighbor_alltoall(send, count, type, recv, count, type, comm_);
    }

    void alltoallv(const void* send, const int* sendcounts, const int* sdispls, void* recv, const int* recvcounts,
                   const int* rdispls, MPI_Datatype type) {
#ifdef NBR_EXAMPLE_API
        if (pattern_ != NBR_PATTERN_NULL) {
            return check(
                nbr_neighbor_alltoallv(send, sendcounts, sdispls, type, recv, recvcounts, rdispls, type, pattern_),
                "alltoallv");
        }
#endif
        MPI_Neighbor_alltoallv(send, sendcounts, sdispls, type, recv, recvcounts, rdispls, type, comm_);
    }

    /// Starts MPI_Ineighbor_alltoallv; complete it with wait() before touching the buffers.
    void ialltoallv(const void* send, const int* sendcounts, const int* sdispls, void* recv, const int* recvcounts,
                    const int* rdispls, MPI_Datatype type) {
#ifdef NBR_EXAMPLE_API
        if (pattern_ != NBR_PATTERN_NULL) {
            return check(nbr_ineighbor_alltoallv(send, sendcounts, sdispls, type, recv, recvcounts, rdispls, type,
                                                 pattern_, &nbr_request_),
                         "ialltoallv");
        }
#endif
        MPI_Ineighbor_alltoallv(send, sendcounts, sdispls, type, recv, recvcounts, rdispls, type, comm_, &request_);
    }

    void wait() {
#ifdef NBR_EXAMPLE_API
        if (pattern_ != NBR_PATTERN_NULL) return check(nbr_wait(&nbr_request_), "wait");
#endif
        MPI_Wait(&request_, MPI_STATUS_IGNORE);
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        std::fprintf(stderr, "%s\n", what.c_str());
        MPI_Abort(comm_, 2);
        std::abort();  // not reached
    }
#ifdef NBR_EXAMPLE_API
    void check(int code, const char* what) const {
        if (code != NBR_SUCCESS) fail(std::string("nbr ") + what + ": " + nbr_strerror(code) + ": " + nbr_last_error());
    }
    nbr_pattern_t pattern_ = NBR_PATTERN_NULL;
    nbr_request_t nbr_request_ = NBR_REQUEST_NULL;
#endif
    MPI_Comm comm_;
    MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace example
